"""The check's worker processes: each runs `python -m pyscan check --exercise` on a shard of the cases (its own
CUDA context), so that the cold nvcc compiles spread over the CPU cores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from .cases import units


def child_args(args, json_path, extra=()) -> list:
    """The command line of a worker: the same selection as the parent's, the worker's JSON file, extra options."""
    cmd = [sys.executable, "-m", "pyscan", "check", "--exercise", "--json", json_path]
    if args.quick:
        cmd.append("--quick")
    for pattern in args.selected_patterns:
        cmd += ["--pattern", pattern]
    for name in args.selected_algorithms:
        cmd += ["--algorithm", name]
    return cmd + list(extra)


def read_results(json_path) -> tuple:
    """(records, kernel files loaded, done) from a worker's JSON lines; what a crashed worker left is kept."""
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


def child_env() -> dict:
    """The environment of a worker: unbuffered output, and this checkout first on the path."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_plain(args, cases, log_dir) -> tuple:
    """The cases in --jobs worker processes; returns (records, kernel files loaded, problems)."""
    jobs = max(1, min(args.jobs, len(units(cases))))
    lineinfo = ["--lineinfo"] if args.lineinfo else []
    procs = []
    for shard in range(jobs):
        json_path = os.path.join(log_dir, f"plain-{shard}.jsonl")
        cmd = child_args(args, json_path, ["--shard", f"{shard}/{jobs}"] + lineinfo)
        log = open(os.path.join(log_dir, f"plain-{shard}.log"), "w")  # noqa: SIM115
        procs.append((shard, json_path, log, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                              env=child_env())))
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
        recs, kern, done = read_results(json_path)
        records += recs
        kernels.update(kern)
        if not done:
            with open(log.name) as f:
                tail = f.read()[-3000:]
            problems.append(f"worker {shard} ended (exit {rc}) after {len(recs)} cases without finishing; "
                            f"log {log.name}:\n{tail}")
    return records, sorted(kernels), problems
