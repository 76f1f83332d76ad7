"""compute-sanitizer for the check: run the cases under each tool (memcheck, racecheck, synccheck, initcheck) in
worker processes, read each log's summary, and say which kernels the reports name.

The tool runs as

    compute-sanitizer --tool T --error-exitcode 1 [--racecheck-report analysis] --show-backtrace device

(a compute-sanitizer that rejects an extra option is run again without it).  No tool option hides anything:
initcheck runs with its defaults.  The cases are split over --jobs processes in all (jobs / tools per tool, all
at once: the sanitizers' cost is mostly host-side, per module load and per launch).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

from ..cli import EXIT_FAILED, EXIT_OK, EXIT_UNAVAILABLE, EXIT_USAGE
from .report import print_failures
from .workers import child_args, child_env, read_results, run_plain

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")

# Tool options beyond --tool/--error-exitcode.  If a compute-sanitizer version rejects one of these, the tool is
# run again without them (see _run_tool).
TOOL_OPTIONS = {
    "memcheck": ["--show-backtrace", "device"],
    "racecheck": ["--racecheck-report", "analysis", "--show-backtrace", "device"],
    "synccheck": ["--show-backtrace", "device"],
    "initcheck": ["--show-backtrace", "device"],
}


@dataclass
class ToolReport:
    tool: str
    errors: int | None = None  # ERROR SUMMARY; None: no summary (the tool did not run to the end)
    hazards: int | None = None  # racecheck: hazards displayed
    hazard_errors: int | None = None
    hazard_warnings: int | None = None
    kernels: dict = field(default_factory=dict)  # kernel function -> how many report lines name it
    first_reports: list = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.errors == 0 and not self.hazard_errors and not self.hazard_warnings


_ERROR_SUMMARY_RE = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
_RACECHECK_RE = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s+hazards?\s+displayed\s*\((\d+)\s+errors?,\s*(\d+)\s+warnings?\)")
_AT_KERNEL_RE = re.compile(r"\bat\s+(?:0x[0-9a-fA-F]+\s+in\s+)?([A-Za-z_]\w*)(?:\+0x[0-9a-fA-F]+|\()")
_REPORT_HEAD_RE = re.compile(r"^=+\s+(Invalid|Uninitialized|Error|Warning|Barrier|Race|Program hit|Host API|"
                             r"Out-of-range|Misaligned|Address|Malloc|Leaked|Divergent|Illegal)", re.IGNORECASE)


def parse_sanitizer_output(tool: str, text: str) -> ToolReport:
    """Read a compute-sanitizer log: the summary counts, which kernels the reports name, the first reports."""
    report = ToolReport(tool)
    summaries = _ERROR_SUMMARY_RE.findall(text)
    if summaries:
        report.errors = int(summaries[-1])
    race = _RACECHECK_RE.findall(text)
    if race:
        report.hazards, report.hazard_errors, report.hazard_warnings = (int(v) for v in race[-1])
        if report.errors is None:  # racecheck's analysis report ends with RACECHECK SUMMARY, no ERROR SUMMARY
            report.errors = report.hazard_errors
    for line in text.splitlines():
        if not line.startswith("="):
            continue
        if _REPORT_HEAD_RE.match(line) and "SUMMARY" not in line and len(report.first_reports) < 12:
            report.first_reports.append(line.strip("= ").strip())
        for name in _AT_KERNEL_RE.findall(line):
            if name not in ("in", "0x"):
                report.kernels[name] = report.kernels.get(name, 0) + 1
    return report


def find_cuda_tool(name: str) -> str | None:
    """A program of the CUDA toolkit (nvcc, compute-sanitizer): on PATH, else under $CUDA_HOME, $CUDA_PATH,
    /usr/local/cuda or nvcc's own toolkit, in bin/ or in a folder of its name."""
    found = shutil.which(name)
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    for root in roots:
        for sub in ("bin", name):
            if root and os.access(os.path.join(root, sub, name), os.X_OK):
                return os.path.join(root, sub, name)
    return None


def find_compute_sanitizer() -> str | None:
    return find_cuda_tool("compute-sanitizer")


def _run_tool(tool, shard, shards, sanitizer, args, log_dir):
    """Start one sanitized process (one shard of the cases under one tool); returns a function that waits for it
    and gives (ToolReport, records, done, rc, seconds)."""
    stem = os.path.join(log_dir, f"{tool}-{shard}")
    extra = ["--exact-alloc", "--shard", f"{shard}/{shards}"] + (["--lineinfo"] if args.lineinfo else [])
    child = child_args(args, stem + ".jsonl", extra)

    def start(options):
        cmd = [sanitizer, "--tool", tool, "--error-exitcode", "1", *options, *child]
        log = open(stem + ".log", "w")  # noqa: SIM115
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        return log, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=child_env()), time.monotonic()

    state = {"run": start(TOOL_OPTIONS.get(tool, [])), "options": TOOL_OPTIONS.get(tool, [])}

    def wait(deadline):
        log, proc, t0 = state["run"]
        try:
            rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            with open(stem + ".log", "a") as f:
                f.write(f"\n[pyscan check] stopped at the {args.timeout:.0f} s limit\n")
        log.close()
        with open(stem + ".log", errors="replace") as f:
            text = f.read()
        if (state["options"] and not _ERROR_SUMMARY_RE.search(text)
                and re.search(r"(?i)(unknown|unrecogni[sz]ed|invalid) (option|argument)", text)):
            # a compute-sanitizer without one of our extra options: run again with --tool/--error-exitcode only
            state["options"] = []
            state["run"] = start([])
            return wait(deadline)
        records, _, done = read_results(stem + ".jsonl")
        return parse_sanitizer_output(tool, text), records, done, rc, time.monotonic() - t0

    return wait


def _merge_reports(tool, parts) -> tuple:
    """One tool's shards -> (ToolReport, records, done, rc, seconds)."""
    report = ToolReport(tool)
    records, done, rc, seconds = [], True, 0, 0.0
    errors = [part.errors for part, *_ in parts]
    report.errors = None if any(e is None for e in errors) else sum(errors)
    for part, recs, part_done, part_rc, part_s in parts:
        if part.hazards is not None:
            report.hazards = (report.hazards or 0) + part.hazards
            report.hazard_errors = (report.hazard_errors or 0) + part.hazard_errors
            report.hazard_warnings = (report.hazard_warnings or 0) + part.hazard_warnings
        for name, count in part.kernels.items():
            report.kernels[name] = report.kernels.get(name, 0) + count
        report.first_reports += part.first_reports[:max(0, 12 - len(report.first_reports))]
        records += recs
        done = done and part_done
        rc = rc or part_rc
        seconds = max(seconds, part_s)
    return report, records, done, rc, seconds


def sanitize(args, cases, log_dir) -> int:
    sanitizer = find_compute_sanitizer()
    if sanitizer is None:
        print("compute-sanitizer not found: it is not on PATH, nor under $CUDA_HOME/bin or /usr/local/cuda/bin. "
              "It ships with the CUDA toolkit; put its bin/ folder on PATH.", file=sys.stderr)
        return EXIT_UNAVAILABLE
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown or not tools:
        print(f"unknown sanitizer tool(s) {', '.join(unknown)}: expected some of {', '.join(TOOLS)}", file=sys.stderr)
        return EXIT_USAGE
    status = EXIT_OK
    plain_failed = set()
    print(f"compute-sanitizer: {sanitizer}")
    version = subprocess.run([sanitizer, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    if version:
        print(version[-1])
    if not args.no_warm:
        t0 = time.monotonic()
        records, kernels, problems = run_plain(args, cases, log_dir)
        plain_failed = {r["label"] for r in records if r["status"] in ("mismatch", "error")}
        bad = len(plain_failed)
        print(f"plain pass (warms the compile cache): {len(records)} cases, {bad} failed, "
              f"{time.monotonic() - t0:.1f} s")
        if bad:
            print_failures(records)
            status = EXIT_FAILED
        for problem in problems:
            print(problem)
            status = EXIT_FAILED
    shards = max(1, args.jobs // len(tools))
    print(f"sanitized pass: {len(cases)} cases under each of {', '.join(tools)}; {shards} process(es) per tool, "
          f"all at once")
    t0 = time.monotonic()
    deadline = t0 + args.timeout
    waits = {tool: [_run_tool(tool, k, shards, sanitizer, args, log_dir) for k in range(shards)] for tool in tools}
    results = {tool: _merge_reports(tool, [w(deadline) for w in ws]) for tool, ws in waits.items()}
    print(f"sanitized pass: {time.monotonic() - t0:.1f} s\n")
    print(f"{'tool':10s} {'errors':>7s} {'hazards':>8s} {'cases ok':>10s} {'exit':>5s} {'seconds':>8s}")
    for tool in tools:
        report, records, done, rc, seconds = results[tool]
        ok = sum(r["status"] in ("ok", "skip") for r in records)
        errors = "?" if report.errors is None else str(report.errors)
        hazards = "-" if report.hazards is None else f"{report.hazard_errors}e/{report.hazard_warnings}w"
        print(f"{tool:10s} {errors:>7s} {hazards:>8s} {ok:5d}/{len(cases):<4d} {rc:5d} {seconds:8.1f}")
        if not report.clean or not done or ok != len(cases):
            status = EXIT_FAILED
    print(f"(logs: {log_dir}/TOOL-SHARD.log)")
    for tool in tools:
        report, records, done, rc, seconds = results[tool]
        if report.errors is None:
            print(f"\n{tool}: a process has no ERROR SUMMARY in its log: it did not run to the end; see the logs")
        if not done:
            print(f"{tool}: the exercise did not finish ({len(records)} of {len(cases)} cases ran)")
        if not report.clean and report.errors is not None:
            print(f"\n{tool}: {report.errors} error(s)"
                  + (f", racecheck {report.hazard_errors} error / {report.hazard_warnings} warning hazard(s)"
                     if report.hazards is not None else ""))
            if report.kernels:
                print("  named in the reports: " + ", ".join(f"{k} ({v})" for k, v in
                                                          sorted(report.kernels.items(), key=lambda kv: -kv[1])))
            for line in report.first_reports:
                print(f"  {line}")
        bad = [r for r in records if r["status"] in ("mismatch", "error")]
        new = [r for r in bad if r["label"] not in plain_failed]
        if bad:
            print(f"{tool}: {len(bad)} case(s) failed under the tool, {len(bad) - len(new)} of them also in the plain "
                  f"pass" + (":" if new else ""))
            print_failures(new, limit=10)
    print("\nsanitizer: " + ("every tool reported 0 errors" if status == 0 else "NOT clean (see above)"))
    return status
