"""The ready pyscan.histogram call on CuPy arrays beside cuda.compute's histogram_even (a reused object) and
torch.histc, one line per case: the probe behind docs/histogram.md, "One launch a call"
(benchmarks/histogram_calls_ab.txt).  Needs a GPU.

    python pyscan_tools/lab/histogram_calls.py LABEL

Per call, µs: host time of N back-to-back calls (no wait) / CUDA-event time of the same calls (the device
included), the best of 3 rounds, after 3 warm-up calls; N = 1,000 at 2^20, 300 at 2^24, 30 at 2^28.  Values
spread over (0, R) (R = 256 for bytes, the bins otherwise; past 2^22 a random block repeated), range (0, R), each
result checked against np.histogram first.  Run it from two checkouts one after the other (PYTHONPATH) for a
before/after pair; LABEL starts each line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402

CASES = (("float32", 100), ("float32", 4096), ("uint8", 100), ("uint8", 4096), ("int32", 100))
CALLS = {2**20: 1000, 2**24: 300, 2**28: 30}


def histogram_even(cc, cp, x, bins: int, top: int):
    """cuda.compute's histogram_even over (0, top), its output and temporary storage made once (int32 counts)."""
    level_type = np.float32 if x.dtype == cp.float32 else np.int32
    levels, lower, upper = np.array([bins + 1], np.int32), np.array([0], level_type), np.array([top], level_type)
    out = cp.zeros(bins, cp.int32)
    args = dict(d_samples=x, d_histogram=out, h_num_output_levels=levels, h_lower_level=lower, h_upper_level=upper,
                num_samples=x.size)
    fn = cc.make_histogram_even(**args)
    temp = cp.empty(max(1, fn(temp_storage=None, **args)), np.uint8)
    return lambda: fn(temp_storage=temp, **args)


def timed(cp, timer, fn, calls: int) -> str:
    """'host / device' µs a call: the best of 3 rounds of `calls` back-to-back calls, after 3 warm-up calls."""
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    hosts, devices = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        timer.start.record()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        timer.end.record()
        timer.end.synchronize()
        hosts.append(1e6 * (t1 - t0) / calls)
        devices.append(1e3 * timer.elapsed(timer.start, timer.end) / calls)
    return f"{min(hosts):6.1f} / {min(devices):6.1f}"


def case_line(label, cp, torch, cc, timer, rng, size: int, dtype: str, bins: int) -> str:
    top = 256 if dtype == "uint8" else bins
    host = np.resize(rng.integers(0, top, min(size, 2**22)).astype(dtype), size)
    if dtype == "float32":
        host += np.float32(0.5)
    x = cp.asarray(host)
    got = pyscan.histogram(x, bins, range=(0, top))[0]
    if not np.array_equal(cp.asnumpy(got), np.histogram(host, bins, (0, top))[0]):
        raise SystemExit(f"{dtype} {bins} bins 2^{size.bit_length() - 1}: a wrong result")
    calls = CALLS[size]
    row = [f"{label} 2^{size.bit_length() - 1} {dtype:8s} {bins:5d} bins  pyscan "
           + timed(cp, timer, lambda: pyscan.histogram(x, bins, range=(0, top)), calls)]
    if cc is not None:
        row.append("histogram_even " + timed(cp, timer, histogram_even(cc, cp, x, bins, top), calls))
    if dtype == "float32":
        t = torch.from_dlpack(x)
        row.append("torch.histc " + timed(cp, timer, lambda: torch.histc(t, bins, 0, top), calls))
    return "   ".join(row)


def main(label: str) -> None:
    import cupy as cp
    import torch

    try:
        import cuda.compute as cc
    except ImportError:
        cc = None
    timer, rng = event_timer("cupy"), np.random.default_rng(1)
    print(f"# pyscan from {pyscan.__file__}; µs a call, host / with the device (CUDA events)")
    for size in CALLS:
        for dtype, bins in CASES:
            if size < 2**28 or bins == 100:
                print(case_line(label, cp, torch, cc, timer, rng, size, dtype, bins), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
