"""1-D scans whose x or result is not the compute type, against device copies of the bytes they move
(docs/decoupled_lookback_tuning.md, "Narrow x and result").

    python -m pyscan_tools.lab.narrow_scan_vs_copy [--three-blocks]

--three-blocks: the narrow 1-D builds with CONFIG's three blocks per SM instead of NARROW's four (the policy's
alternative, timed in the same way).

µs per public call on a CuPy array (CUDA events around back-to-back calls, the median of 5 rounds), at 2^24, 2^26
and 2^28 elements; "x base" is the call's time over the mean time of a device copy of x's bytes and one of the
result's (a scan reads x and writes its result once), as the axis bench's.  Cases: float32 (the reference),
float16 (scanned in float32), int32 into int64 (NumPy's accumulator), bool into int64 (a mask's running count) and
int32 kept in int32 (dtype=).  Every result is checked against NumPy first at a length that is not a whole number of
tiles."""

import numpy as np

from pyscan.timing import event_timer

CASES = (("float32", None), ("float16", None), ("int32", None), ("bool", None), ("int32", "int32"))


def timeit(timer, f, reps):
    """µs per call: the median of 5 batches of `reps` back-to-back calls (pyscan.timing's CuPy events)."""
    f()
    return float(np.median([1e3 * timer.per_call_ms(f, reps) for _ in range(5)]))


def data(cp, n, dtype):
    """Values whose partial sums stay small (exact in float16)."""
    index = cp.arange(n)
    return index % 3 == 0 if dtype == "bool" else (index % 5 - 2).astype(dtype)


def main():
    import sys

    import cupy as cp

    import pyscan
    from pyscan.scans import decoupled_lookback as dl

    if "--three-blocks" in sys.argv[1:]:
        dl.NARROW = {}

    for dtype, result in CASES:
        x = data(cp, (1 << 20) + 12345, dtype)
        want = np.cumsum(cp.asnumpy(x), dtype=result)  # NumPy's accumulator where result is None
        got = cp.asnumpy(pyscan.scan(x, dtype=result))
        if got.dtype != want.dtype or not np.array_equal(got, want):
            raise SystemExit(f"{dtype} -> {result}: the scan differs from NumPy's")
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    print(f"{'case':24s} {'size':>5s} {'scan us':>9s} {'copy x':>8s} {'copy out':>8s} {'x base':>7s}")
    for log in (24, 26, 28):
        for dtype, result in CASES:
            print(row(cp, pyscan, log, dtype, result), flush=True)


def row(cp, pyscan, log, dtype, result) -> str:
    """One case at 2^log elements: its times and x base, as a line of the table."""
    n, reps = 1 << log, 10 if log == 28 else 50
    timer = event_timer("cupy")
    x = data(cp, n, dtype)
    out = pyscan.scan(x, dtype=result)
    x_copy, out_copy = cp.empty_like(x), cp.empty_like(out)
    scan_us = timeit(timer, lambda: pyscan.scan(x, dtype=result), reps)
    copy_x = timeit(timer, lambda: x_copy.__setitem__(Ellipsis, x), reps)
    copy_out = timeit(timer, lambda: out_copy.__setitem__(Ellipsis, out), reps)
    name = f"{dtype} -> {out.dtype}"
    return (f"{name:24s} {'2^%d' % log:>5s} {scan_us:9.1f} {copy_x:8.1f} {copy_out:8.1f} "
            f"{scan_us / ((copy_x + copy_out) / 2):7.2f}")

if __name__ == "__main__":
    main()
