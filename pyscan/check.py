"""python -m pyscan check: every algorithm of every registry against NumPy, optionally under compute-sanitizer.

    python -m pyscan check [--quick] [--pattern scan ...] [--algorithm NAME ...] [--jobs N]
    python -m pyscan check --sanitize [--tools memcheck,racecheck,synccheck,initcheck] [--quick] [--lineinfo]
                                      [--log-dir DIR] [--timeout SECONDS] [--jobs N]
    python -m pyscan check --list [--quick]          # the cases, without running them (needs no GPU)

**Without --sanitize** the cases run in --jobs worker processes (each its own CUDA context), split by
compile unit (pattern, algorithm, dtype, op) so that the cold nvcc compiles are spread over the CPU cores.
Every case compares the result with NumPy, exactly: integer add wraps like `np.cumsum(x, dtype=x.dtype)`,
float add runs on small integer values (every partial sum is exact in float32 and float64 whatever the order
of the additions, so any difference is an indexing bug, not rounding), max/min are exact anyway.  It also checks
that the result has the input's kind (NumPy or GPUArray), dtype and shape, and that the input is untouched.
The cases are made from `pyscan.REGISTRIES`, so an algorithm registered later is covered without an edit here.

**With --sanitize** it first runs the same cases plainly (this warms pycuda's compile cache, so the slow
sanitized processes compile nothing, and separates wrong answers from sanitizer reports), then re-runs itself
(`python -m pyscan check --exercise ...`) under

    compute-sanitizer --tool T --error-exitcode 1 [--racecheck-report analysis] --show-backtrace device

for each tool T, the cases split over --jobs processes in all (jobs / tools per tool, all at once: the
sanitizers' cost is mostly host-side, per module load and per launch, so processes in parallel cut the wall
time), reads each log's `ERROR SUMMARY: N errors` (and racecheck's `RACECHECK SUMMARY: N hazards displayed
(E errors, W warnings)`), prints a table tool -> errors, and exits non-zero unless every tool ran to the end
and reported 0 errors and 0 racecheck hazards.  Under the sanitizer pyscan's DeviceMemoryPool is replaced by
plain `mem_alloc` of exactly the requested size: the pool rounds sizes up to its bins, so an overrun of a few
elements would land inside the rounded-up block where memcheck cannot see it.  No tool option hides
anything: initcheck runs with its defaults (it reports kernels' reads of uninitialised global memory and
device-to-host copies of it; unused allocations are not reported by default).  --lineinfo compiles the
kernels with line information so that reports name `file.cu:line` (without it they name kernel+offset).

Exit status: 0 all good; 1 a mismatch, an error or a sanitizer report; 2 cannot run (no GPU, no
compute-sanitizer).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field

import numpy as np

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")
SCAN_DTYPES = ("int32", "int64", "float32", "float64")
OPS = ("add", "max", "min")

# Tool options beyond --tool/--error-exitcode.  If a compute-sanitizer version rejects one of these, the tool is
# run again without them (see _run_tool).
TOOL_OPTIONS = {
    "memcheck": ["--show-backtrace", "device"],
    "racecheck": ["--racecheck-report", "analysis", "--show-backtrace", "device"],
    "synccheck": ["--show-backtrace", "device"],
    "initcheck": ["--show-backtrace", "device"],
}


# ----------------------------------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    pattern: str  # "scan", "reduce", "histogram", "text", "life", "life_class", "basics"
    algorithm: str
    params: tuple = ()  # sorted (key, value) pairs

    @property
    def p(self) -> dict:
        return dict(self.params)

    @property
    def label(self) -> str:
        return f"{self.pattern}/{self.algorithm}[" + ",".join(f"{k}={v}" for k, v in self.params) + "]"

    @property
    def unit(self) -> tuple:
        """What one compile specialises: the cases of one unit share their kernels."""
        p = self.p
        return (self.pattern, self.algorithm, p.get("dtype"), p.get("op"))


def _case(pattern, algorithm, **params) -> Case:
    return Case(pattern, algorithm, tuple(sorted(params.items())))


def _scan_like_cases(pattern: str, name: str, quick: bool, *, exclusive_axis: bool) -> list:
    """scan (with inclusive/exclusive) or reduce cases for one algorithm."""
    cases = []
    excl = (False, True) if exclusive_axis else (False,)
    if quick:
        # every (dtype, op) once -- so every specialisation is compiled and run, inclusive and exclusive alike --
        # and the odd sizes on the core combination (int32 add, which wraps).
        plan = [("int32", "add", False, (1, 31, 1025, 4099, 65537)), ("int32", "add", True, (2, 33, 4099)),
                ("int32", "max", True, (1025,)), ("int32", "min", False, (33,)),
                ("int64", "add", True, (1025,)), ("int64", "max", False, (4099,)), ("int64", "min", True, (31,)),
                ("float32", "add", False, (4099,)), ("float32", "max", True, (33,)), ("float32", "min", False, (1025,)),
                ("float64", "add", True, (33,)), ("float64", "max", False, (1025,)), ("float64", "min", True, (4099,))]
        for dtype, op, exclusive, sizes in plan:
            for n in sizes:
                kw = {"exclusive": exclusive} if exclusive_axis else {}
                cases.append(_case(pattern, name, dtype=dtype, op=op, n=n, **kw))
        cases.append(_case(pattern, name, dtype="int32", op="add", n=4099, gpu=True,
                           **({"exclusive": False} if exclusive_axis else {})))
        if exclusive_axis:
            cases.append(_case(pattern, name, dtype="float32", op="add", n=0, exclusive=False))
        return cases
    sizes = (0, 1, 2, 31, 33, 1025, 4099, 65537) if exclusive_axis else (1, 2, 31, 33, 1025, 4099, 65537)
    for dtype in SCAN_DTYPES:
        for op in OPS:
            for exclusive in excl:
                for n in sizes:
                    kw = {"exclusive": exclusive} if exclusive_axis else {}
                    cases.append(_case(pattern, name, dtype=dtype, op=op, n=n, **kw))
            kw = {"exclusive": True} if exclusive_axis else {}
            cases.append(_case(pattern, name, dtype=dtype, op=op, n=4099, gpu=True, **kw))
    return cases


def _histogram_cases(name: str, quick: bool) -> list:
    cases = []
    lengths = (1, 1025, 70001) if quick else (1, 7, 1025, 70001)
    binss = (7, 256) if quick else (1, 7, 256)
    for n in lengths:
        for bins in binss:
            cases.append(_case("histogram", name, n=n, bins=bins, data="uniform", kind="numpy"))
    cases.append(_case("histogram", name, n=1025, bins=1, data="uniform", kind="bytes"))
    cases.append(_case("histogram", name, n=70001, bins=256, data="equal", kind="gpu"))
    if not quick:
        cases.append(_case("histogram", name, n=70001, bins=7, data="equal", kind="numpy"))
        cases.append(_case("histogram", name, n=4099, bins=100, data="runs", kind="bytes"))
    cases.append(_case("text", name, text="phrase"))
    cases.append(_case("text", name, text="bytes", n=5000 if quick else 70001))
    if not quick:
        cases.append(_case("text", name, text="unicode"))
    return cases


LIFE_SHAPES = ((32, 32), (7, 13), (100, 37))


def _life_cases(name: str, quick: bool) -> list:
    cases = []
    dtypes = ("bool", "uint8", "int32")
    for i, shape in enumerate(LIFE_SHAPES):
        if quick:
            cases.append(_case("life", name, shape=shape, dtype=dtypes[i % 3], generations=(3, 2, 1)[i]))
        else:
            for dtype in dtypes:
                for generations in (1, 4):
                    cases.append(_case("life", name, shape=shape, dtype=dtype, generations=generations))
    cases.append(_case("life_class", name, shape=(32, 32), dtype="uint8", generations=5))
    if not quick:
        cases.append(_case("life_class", name, shape=(7, 13), dtype="bool", generations=3))
    return cases


def make_cases(quick: bool = False, patterns=None, algorithms=None) -> list:
    """Every case, from the registries: every algorithm of every registry, plus scalar_multiply."""
    import pyscan

    cases = []
    for pattern, registry in pyscan.REGISTRIES.items():
        if patterns and pattern not in patterns:
            continue
        names = ("auto",) + registry.names() if len(registry) else ()
        for name in names:
            if algorithms and name not in algorithms:
                continue
            if name == "auto" and algorithms is None:
                # auto picks a registered algorithm; a few cases prove the dispatch, the rest cover the names
                if pattern in ("scan", "reduce"):
                    cases.append(_case(pattern, "auto", dtype="float32", op="add", n=4099,
                                       **({"exclusive": True} if pattern == "scan" else {})))
                elif pattern == "histogram":
                    cases.append(_case("histogram", "auto", n=1025, bins=256, data="uniform", kind="numpy"))
                elif pattern == "life":
                    cases.append(_case("life", "auto", shape=(100, 37), dtype="uint8", generations=2))
                continue
            if pattern == "scan":
                cases += _scan_like_cases("scan", name, quick, exclusive_axis=True)
            elif pattern == "reduce":
                cases += _scan_like_cases("reduce", name, quick, exclusive_axis=False)
            elif pattern == "histogram":
                cases += _histogram_cases(name, quick)
            elif pattern == "life":
                cases += _life_cases(name, quick)
    if (not patterns or "basics" in patterns) and not algorithms:
        for dtype in ("float32", "int64") if quick else SCAN_DTYPES:
            for n in (1, 1025):
                cases.append(_case("basics", "scalar_multiply", dtype=dtype, n=n))
    return cases


# ------------------------------------------------------------------------------------------------ references


def _rng(case: Case):
    return np.random.default_rng(zlib.crc32(case.label.encode()))


def scan_data(rng, n: int, dtype, op: str) -> np.ndarray:
    """Test data that makes every comparison exact (see the module docstring)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if op == "add":
        return rng.integers(-8, 9, n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


def scan_reference(x: np.ndarray, op: str, exclusive: bool) -> np.ndarray:
    from .types import identity, ufunc

    if op == "add":
        inclusive = np.cumsum(x, dtype=x.dtype)
    else:
        inclusive = ufunc(op).accumulate(x, dtype=x.dtype)
    if not exclusive or x.size == 0:
        return inclusive
    out = np.empty_like(inclusive)
    out[0] = identity(op, x.dtype)
    out[1:] = inclusive[:-1]
    return out


def reduce_reference(x: np.ndarray, op: str):
    from .types import ufunc

    return ufunc(op).reduce(x, dtype=x.dtype)


def histogram_reference(data: np.ndarray, bins: int) -> np.ndarray:
    return np.histogram(data, bins=bins, range=(0, 256))[0]


def text_histogram_reference(text) -> np.ndarray:
    raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    b = np.frombuffer(raw, dtype=np.uint8)
    letters = b[(b >= ord("a")) & (b <= ord("z"))].astype(np.int64)
    return np.bincount((letters - ord("a")) // 4, minlength=7)


def life_reference(lattice: np.ndarray, generations: int) -> np.ndarray:
    """Conway's rules on a torus, by np.roll neighbour sums (the plain definition, independent of pyscan's own)."""
    a = (np.asarray(lattice) != 0).astype(np.int32)
    for _ in range(generations):
        n = sum(np.roll(np.roll(a, dy, 0), dx, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
        a = ((n == 3) | ((a == 1) & (n == 2))).astype(np.int32)
    return a.astype(np.asarray(lattice).dtype)


def _first_difference(got: np.ndarray, want: np.ndarray) -> str:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    bad = np.flatnonzero(~((got == want) | ((got != got) & (want != want))).ravel())
    if bad.size == 0:
        return ""
    i = bad[0]
    return (f"{bad.size} of {want.size} elements differ; first at flat index {i}: got {got.ravel()[i]!r}, "
            f"expected {want.ravel()[i]!r}")


def _kind_problem(out, x, on_gpu: bool) -> str:
    from . import gpu

    if on_gpu and not gpu.is_gpuarray(out):
        return f"GPUArray in, but {type(out).__name__} out"
    if not on_gpu and not isinstance(out, np.ndarray):
        return f"NumPy in, but {type(out).__name__} out"
    if np.dtype(out.dtype) != np.dtype(x.dtype) or tuple(out.shape) != tuple(x.shape):
        return f"result has dtype {out.dtype} shape {tuple(out.shape)}, input dtype {x.dtype} shape {tuple(x.shape)}"
    return ""


# ----------------------------------------------------------------------------------------------- run one case


def run_case(case: Case) -> tuple:
    """(status, detail): status "ok", "mismatch", "skip" (with the reason) or "error" (an exception)."""
    import pyscan

    from . import gpu

    p, rng = case.p, _rng(case)
    if case.pattern in ("scan", "reduce", "basics"):
        x = scan_data(rng, p["n"], p["dtype"], p.get("op", "add"))
        keep = x.copy()
        arg = gpu.gpuarray().to_gpu(x) if p.get("gpu") else x
        if case.pattern == "scan":
            out = pyscan.scan(arg, algorithm=case.algorithm, exclusive=p["exclusive"], op=p["op"])
            want = scan_reference(x, p["op"], p["exclusive"])
        elif case.pattern == "reduce":
            out = pyscan.reduce(arg, algorithm=case.algorithm, op=p["op"])
            want = reduce_reference(x, p["op"])
            if not isinstance(out, np.generic) or out.dtype != x.dtype:
                return "mismatch", f"expected a NumPy scalar of dtype {x.dtype}, got {type(out).__name__} {out!r}"
        else:
            a = 3 if x.dtype.kind == "i" else -2.5
            out = pyscan.scalar_multiply(arg, a)
            want = (x * x.dtype.type(a)).astype(x.dtype)
        if case.pattern != "reduce":
            problem = _kind_problem(out, x, bool(p.get("gpu")))
            if problem:
                return "mismatch", problem
            out = out.get() if gpu.is_gpuarray(out) else out
        after = arg.get() if p.get("gpu") else arg
        if not np.array_equal(after, keep):
            return "mismatch", "the input was modified"
        diff = _first_difference(out, want)
        return ("mismatch", diff) if diff else ("ok", "")

    if case.pattern == "histogram":
        n, bins = p["n"], p["bins"]
        if p["data"] == "equal":
            data = np.full(n, 200, dtype=np.uint8)
        elif p["data"] == "runs":  # long runs of equal bytes: what aggregation merges
            data = np.repeat(rng.integers(0, 256, n // 50 + 1, dtype=np.uint8), 50)[:n]
        else:
            data = rng.integers(0, 256, n, dtype=np.uint8)
        keep = data.copy()
        arg = {"numpy": data, "bytes": data.tobytes(), "gpu": None}[p["kind"]]
        if p["kind"] == "gpu":
            arg = gpu.gpuarray().to_gpu(data)
        out = pyscan.histogram(arg, bins, algorithm=case.algorithm)
        if not isinstance(out, np.ndarray) or out.dtype.kind not in "iu" or out.shape != (bins,):
            return "mismatch", f"expected a NumPy integer array of shape ({bins},), got {type(out).__name__} " \
                               f"{getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}"
        after = arg.get() if p["kind"] == "gpu" else np.frombuffer(arg, np.uint8) if p["kind"] == "bytes" else arg
        if not np.array_equal(after, keep):
            return "mismatch", "the input was modified"
        diff = _first_difference(out, histogram_reference(data, bins))
        return ("mismatch", diff) if diff else ("ok", "")

    if case.pattern == "text":
        if p["text"] == "phrase":
            text = "programming massively parallel processors"
        elif p["text"] == "unicode":
            text = "Ünïcödé façade, naïve café; ABC xyz! " * 37
        else:
            text = rng.integers(0, 256, p["n"], dtype=np.uint8).tobytes()
        out = pyscan.text_histogram(text, algorithm=case.algorithm)
        diff = _first_difference(np.asarray(out), text_histogram_reference(text))
        return ("mismatch", diff) if diff else ("ok", "")

    if case.pattern in ("life", "life_class"):
        h, w = p["shape"]
        lattice = (rng.random((h, w)) < 0.35).astype(p["dtype"])
        keep = lattice.copy()
        want = life_reference(lattice, p["generations"])
        try:
            if case.pattern == "life":
                out = pyscan.life.step(lattice, p["generations"], kernel=case.algorithm)
            else:
                sim = pyscan.life.Life(lattice, kernel=case.algorithm)
                sim.advance(p["generations"])
                out = sim.get()
                if int(sim.population) != int(want.astype(np.int64).sum()) or int(sim.generation) != p["generations"]:
                    return "mismatch", (f"population {sim.population} / generation {sim.generation}, expected "
                                        f"{int(want.astype(np.int64).sum())} / {p['generations']}")
        except ValueError as exc:
            if h * w > 1024 and re.search(r"1024|limit|block", str(exc)):
                return "skip", f"{h}x{w} past the kernel's limit: {exc}"
            raise
        if not isinstance(out, np.ndarray) or out.dtype != lattice.dtype or out.shape != lattice.shape:
            return "mismatch", f"expected {lattice.dtype} {lattice.shape}, got {type(out).__name__} " \
                               f"{getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}"
        if not np.array_equal(lattice, keep):
            return "mismatch", "the input was modified"
        diff = _first_difference(out, want)
        return ("mismatch", diff) if diff else ("ok", "")

    raise ValueError(f"unknown case pattern {case.pattern!r}")


class _ExactAllocator:
    """Stands in for pyscan's DeviceMemoryPool under the sanitizer: every block exactly the requested size."""

    def __init__(self, drv):
        self.drv = drv

    def allocate(self, nbytes):
        return self.drv.mem_alloc(max(int(nbytes), 1))

    def free_held(self):
        pass

    def stop_holding(self):
        pass


def loaded_kernel_files() -> list:
    """The kernel files this process has compiled and prepared a function of (read off the loader's cache)."""
    from . import loader

    return sorted({key[1] for key in loader._cache if isinstance(key, tuple) and key and key[0] == "function"})


def exercise(cases, json_path=None, *, exact_alloc=False, lineinfo=False, verbose=False) -> dict:
    """Run the cases in this process; write one JSON line per case (flushed, so a crash leaves what ran)."""
    from . import arrays, gpu, loader

    drv = gpu.driver()
    if lineinfo:
        loader.COMPILE_OPTIONS = tuple(loader.COMPILE_OPTIONS) + ("-lineinfo",)
    if exact_alloc:
        arrays._pool = _ExactAllocator(drv)
    sink = open(json_path, "w") if json_path else None  # noqa: SIM115
    counts = {"ok": 0, "mismatch": 0, "skip": 0, "error": 0}
    try:
        for case in cases:
            start = time.perf_counter()
            try:
                status, detail = run_case(case)
            except Exception as exc:  # noqa: BLE001  any failure of a case is reported, then the next case runs
                status, detail = "error", f"{type(exc).__name__}: {exc}"[:2000]
            try:
                drv.Context.synchronize()
            except Exception as exc:  # noqa: BLE001  a sticky error (illegal address...) belongs to this case
                status, detail = "error", f"after the case: {type(exc).__name__}: {exc}"[:2000]
            seconds = time.perf_counter() - start
            counts[status] += 1
            record = {"label": case.label, "pattern": case.pattern, "algorithm": case.algorithm,
                      "status": status, "detail": detail, "seconds": round(seconds, 4)}
            if verbose or status in ("mismatch", "error"):
                print(f"{status:8s} {case.label} {detail}", flush=True)
            if sink:
                sink.write(json.dumps(record) + "\n")
                sink.flush()
        if sink:
            sink.write(json.dumps({"kernels": loaded_kernel_files(), "done": True}) + "\n")
    finally:
        if sink:
            sink.close()
    return counts


# ------------------------------------------------------------------------------------------ sanitizer output


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


def find_compute_sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    for root in roots:
        for sub in ("bin", os.path.join("compute-sanitizer")):
            if root and os.access(os.path.join(root, sub, "compute-sanitizer"), os.X_OK):
                return os.path.join(root, sub, "compute-sanitizer")
    return None


# ------------------------------------------------------------------------------------------------ the parent


def _child_args(args, json_path, extra=()) -> list:
    cmd = [sys.executable, "-m", "pyscan", "check", "--exercise", "--json", json_path]
    if args.quick:
        cmd.append("--quick")
    for pattern in args.pattern or ():
        cmd += ["--pattern", pattern]
    for name in args.algorithm or ():
        cmd += ["--algorithm", name]
    return cmd + list(extra)


def _read_results(json_path) -> tuple:
    records, kernels, done = [], [], False
    try:
        with open(json_path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                item = json.loads(line)
                if item.get("done"):
                    kernels, done = item["kernels"], True
                else:
                    records.append(item)
    except (OSError, json.JSONDecodeError):
        pass
    return records, kernels, done


def _env() -> dict:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_plain(args, cases, log_dir) -> tuple:
    """The cases in --jobs worker processes; returns (records, kernel files loaded, problems)."""
    units = []
    for case in cases:
        if case.unit not in units:
            units.append(case.unit)
    jobs = max(1, min(args.jobs, len(units)))
    procs = []
    for shard in range(jobs):
        json_path = os.path.join(log_dir, f"plain-{shard}.jsonl")
        cmd = _child_args(args, json_path, ["--shard", f"{shard}/{jobs}"] + (["--lineinfo"] if args.lineinfo else []))
        log = open(os.path.join(log_dir, f"plain-{shard}.log"), "w")  # noqa: SIM115
        procs.append((shard, json_path, log, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env())))
    records, kernels, problems = [], set(), []
    deadline = time.monotonic() + args.timeout
    for shard, json_path, log, proc in procs:
        try:
            rc = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
            problems.append(f"worker {shard} passed the {args.timeout:.0f} s limit and was stopped")
        log.close()
        recs, kern, done = _read_results(json_path)
        records += recs
        kernels.update(kern)
        if not done:
            with open(log.name) as f:
                tail = f.read()[-3000:]
            problems.append(f"worker {shard} ended (exit {rc}) after {len(recs)} cases without finishing; "
                            f"log {log.name}:\n{tail}")
    return records, sorted(kernels), problems


def _summary_table(records, cases) -> list:
    rows = {}
    for case in cases:  # the cases' order: registry by registry, algorithm by algorithm
        rows.setdefault((case.pattern, case.algorithm), {"ok": 0, "mismatch": 0, "error": 0, "skip": 0, "s": 0.0})
    for r in records:
        row = rows.setdefault((r["pattern"], r["algorithm"]), {"ok": 0, "mismatch": 0, "error": 0, "skip": 0, "s": 0.0})
        row[r["status"]] += 1
        row["s"] += r["seconds"]
    lines = [f"{'pattern':10s} {'algorithm':28s} {'cases':>5s} {'ok':>5s} {'mismatch':>8s} {'error':>5s} "
             f"{'skip':>4s} {'seconds':>8s}"]
    for (pattern, name), row in rows.items():
        total = row["ok"] + row["mismatch"] + row["error"] + row["skip"]
        if total == 0:
            lines.append(f"{pattern:10s} {name:28s} (no case ran)")
            continue
        lines.append(f"{pattern:10s} {name:28s} {total:5d} {row['ok']:5d} {row['mismatch']:8d} {row['error']:5d} "
                     f"{row['skip']:4d} {row['s']:8.2f}")
    return lines


_REGISTRY_OF = {"text": "histogram", "life_class": "life"}


def _coverage(cases, records, kernels, *, filtered: bool) -> list:
    """Warnings: registered algorithms with no case that ran, kernel files that no case loaded."""
    import pyscan

    from .loader import kernel_files

    warnings = []
    ran = {(_REGISTRY_OF.get(r["pattern"], r["pattern"]), r["algorithm"]) for r in records if r["status"] != "error"}
    wanted = {(_REGISTRY_OF.get(c.pattern, c.pattern), c.algorithm) for c in cases}
    for pattern, registry in pyscan.REGISTRIES.items():
        for algorithm in registry:
            key = (pattern, algorithm.name)
            if key not in wanted:
                continue
            if key not in ran:
                warnings.append(f"{pattern} algorithm {algorithm.name!r}: no case ran without an error")
            missing = [k for k in algorithm.kernels if k not in kernels]
            if kernels and missing:
                warnings.append(f"{pattern} algorithm {algorithm.name!r} declares kernel files that no case loaded: "
                                f"{', '.join(missing)}")
    if kernels and not filtered:
        # kernels/races/ holds the books' racy kernels as printed: pyscan.races runs them, the sanitizer must not.
        unused = [k for k in kernel_files() if k not in kernels and not k.startswith("races/")]
        if unused:
            warnings.append("kernel files that no case loaded (not reachable through the registries' drivers): "
                            + ", ".join(unused))
    return warnings


def _print_failures(records, limit=40):
    bad = [r for r in records if r["status"] in ("mismatch", "error")]
    for r in bad[:limit]:
        print(f"  {r['status'].upper():8s} {r['label']}: {r['detail']}")
    if len(bad) > limit:
        print(f"  ... and {len(bad) - limit} more")
    return len(bad)


def _run_tool(tool, shard, shards, sanitizer, args, log_dir):
    """Start one sanitized process (one shard of the cases under one tool); returns a function that waits for it
    and gives (ToolReport, records, done, rc, seconds)."""
    stem = os.path.join(log_dir, f"{tool}-{shard}")
    extra = ["--exact-alloc", "--shard", f"{shard}/{shards}"] + (["--lineinfo"] if args.lineinfo else [])
    child = _child_args(args, stem + ".jsonl", extra)

    def start(options):
        cmd = [sanitizer, "--tool", tool, "--error-exitcode", "1", *options, *child]
        log = open(stem + ".log", "w")  # noqa: SIM115
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        return log, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env()), time.monotonic()

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
        records, _, done = _read_results(stem + ".jsonl")
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
        return 2
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in tools if t not in TOOLS]
    if unknown or not tools:
        print(f"unknown sanitizer tool(s) {', '.join(unknown)}: expected some of {', '.join(TOOLS)}", file=sys.stderr)
        return 2
    status = 0
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
            _print_failures(records)
            status = 1
        for problem in problems:
            print(problem)
            status = 1
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
            status = 1
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
            _print_failures(new, limit=10)
    print("\nsanitizer: " + ("every tool reported 0 errors" if status == 0 else "NOT clean (see above)"))
    return status


def _parse(argv):
    parser = argparse.ArgumentParser(prog="python -m pyscan check", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sanitize", action="store_true", help="run the cases under compute-sanitizer tools")
    parser.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated, of {', '.join(TOOLS)}")
    parser.add_argument("--quick", action="store_true", help="fewer sizes/dtypes (still every algorithm)")
    parser.add_argument("--pattern", action="append", help="only this registry (scan, reduce, histogram, life, "
                        "basics); repeatable")
    parser.add_argument("--algorithm", action="append", help="only this algorithm name; repeatable")
    parser.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1),
                        help="worker processes: of the plain pass; with --sanitize, shared among the tools")
    parser.add_argument("--lineinfo", action="store_true", help="compile with -lineinfo (reports name file:line; "
                        "a different compile-cache entry, so the first run compiles everything again)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for each pass (default 900)")
    parser.add_argument("--log-dir", help="where the logs go (default: a new temporary folder)")
    parser.add_argument("--list", action="store_true", help="print the cases and exit (needs no GPU)")
    parser.add_argument("--no-warm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case")
    # internal: the worker side
    parser.add_argument("--exercise", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)
    parser.add_argument("--shard", help=argparse.SUPPRESS)
    parser.add_argument("--exact-alloc", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _shard(cases, spec):
    index, count = (int(v) for v in spec.split("/"))
    units = []
    for case in cases:
        if case.unit not in units:
            units.append(case.unit)
    mine = set(units[index::count])
    return [c for c in cases if c.unit in mine]


def main(argv=None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    import pyscan

    known = set(pyscan.REGISTRIES) | {"basics"}
    for pattern in args.pattern or ():
        if pattern not in known:
            print(f"unknown pattern {pattern!r}: expected one of {', '.join(sorted(known))}", file=sys.stderr)
            return 2
    cases = make_cases(args.quick, args.pattern, args.algorithm)
    if args.algorithm:
        everything = {n for r in pyscan.REGISTRIES.values() for n in r.names()} | {"auto"}
        unknown = [a for a in args.algorithm if a not in everything]
        if unknown:
            print(f"unknown algorithm(s) {', '.join(unknown)}: expected some of {', '.join(sorted(everything))}",
                  file=sys.stderr)
            return 2
    if args.shard:
        cases = _shard(cases, args.shard)
    if args.list:
        for case in cases:
            print(case.label)
        per = {}
        for case in cases:
            per[(case.pattern, case.algorithm)] = per.get((case.pattern, case.algorithm), 0) + 1
        print(f"{len(cases)} cases: " + ", ".join(f"{p}/{a} {n}" for (p, a), n in per.items()))
        return 0

    from . import gpu

    reason = gpu.gpu_unavailable_reason()
    if reason is not None:
        print(f"python -m pyscan check needs a GPU: {reason}", file=sys.stderr)
        return 2
    if args.exercise:
        t0 = time.perf_counter()
        counts = exercise(cases, args.json, exact_alloc=args.exact_alloc, lineinfo=args.lineinfo, verbose=args.verbose)
        print(f"exercise: {len(cases)} cases, " + ", ".join(f"{k} {v}" for k, v in counts.items())
              + f", {time.perf_counter() - t0:.1f} s", flush=True)
        return 0 if counts["mismatch"] == counts["error"] == 0 else 1

    log_dir = args.log_dir or tempfile.mkdtemp(prefix="pyscan-check-")
    os.makedirs(log_dir, exist_ok=True)
    if args.sanitize:
        return sanitize(args, cases, log_dir)
    t0 = time.monotonic()
    records, kernels, problems = run_plain(args, cases, log_dir)
    print("\n".join(_summary_table(records, cases)))
    print(f"\n{len(records)} of {len(cases)} cases ran in {time.monotonic() - t0:.1f} s ({args.jobs} workers); "
          f"kernel files loaded: {len(kernels)}")
    for warning in _coverage(cases, records, kernels, filtered=bool(args.pattern or args.algorithm)):
        print(f"warning: {warning}")
    failed = _print_failures(records)
    for problem in problems:
        print(problem)
    ok = failed == 0 and not problems and len(records) == len(cases)
    print("check: " + ("every case equals NumPy" if ok else f"FAILED ({failed} case(s) failed; logs in {log_dir})"))
    return 0 if ok else 1
