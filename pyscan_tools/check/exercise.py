"""Run the check's cases in this process (a worker, possibly under compute-sanitizer): one JSON line per case,
flushed, so a crash leaves what ran."""

from __future__ import annotations

import json
import time
import zlib

import numpy as np

from ..patterns import PATTERNS


def run_case(case) -> tuple:
    """(status, detail): "ok", "mismatch" or "skip" with the reason; an exception propagates."""
    rng = np.random.default_rng(zlib.crc32(case.label.encode()))
    return PATTERNS[case.pattern].run_case(case, rng)


def _configure(exact_alloc: bool, lineinfo: bool) -> None:
    """The sanitizer's set-up of pyscan's runtime: line information in the kernels, and every buffer pyscan makes
    allocated exactly (a pool rounds sizes up, so an overrun of a few elements would land inside the rounded-up
    block where memcheck cannot see it)."""
    from pyscan.runtime import driver, loader

    if lineinfo:
        loader.add_compile_options("-lineinfo")
    if exact_alloc:
        driver.exact_allocations(True)


def loaded_kernel_files() -> list:
    """The kernel files this process has compiled and prepared a function of (read off the loader's cache)."""
    from pyscan.runtime import loader

    return loader.loaded_kernel_files()


def exercise(cases, json_path=None, *, exact_alloc=False, lineinfo=False, verbose=False) -> dict:
    """Run the cases; count them by status; write one JSON line per case to json_path, and a last line with the
    kernel files loaded and done=True."""
    from pyscan.runtime import driver

    _, cu = driver.ready()
    _configure(exact_alloc, lineinfo)
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
                driver.enter(driver.default_device())
                driver._check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
            except Exception as exc:  # noqa: BLE001  a sticky error (illegal address...) belongs to this case
                status, detail = "error", f"after the case: {type(exc).__name__}: {exc}"[:2000]
            counts[status] += 1
            record = {"label": case.label, "pattern": case.pattern, "algorithm": case.algorithm, "status": status,
                      "detail": detail, "seconds": round(time.perf_counter() - start, 4)}
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
