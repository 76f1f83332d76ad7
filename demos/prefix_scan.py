"""Every prefix-scan algorithm of the books (PMPP ch. 11, Hands-On ch. 4) on one random array: checked against NumPy and timed.

    python demos/prefix_scan.py [--size N] [--dtype float32] [--op add] [--exclusive] [--repeat 20]

For each registered algorithm (pyscan.SCAN_ALGORITHMS), run by its registered driver (pyscan.scans.SCANS), the
table shows the kernel launches of one scan, the median GPU time over --repeat runs after a warm-up
(CUDA events around the driver: kernels only, input and output already on the device), the throughput in
elements per second, the speedup over numpy.cumsum (or np.maximum/minimum.accumulate) on the host, and whether
the result matches NumPy (integers and max/min exactly; float add within the algorithm's rounding bound).
"""

import argparse
import statistics
import sys
import time

import numpy as np

import pyscan
from pyscan.scans import SCANS
from pyscan.scans.reference import reference as numpy_scan
from pyscan.timing import median_ms


def matches(out, x, op, exclusive, depth):
    """Integers / max / min: exact.  Float add: |out - ref| <= ((depth + 3) eps + n eps_ld) sum_{j<=i} |x_j| with a
    long-double reference (tests/test_scan_models.py explains the bound)."""
    if x.dtype.kind == "i" or op != "add":
        return bool(np.array_equal(out, numpy_scan(x, op, exclusive), equal_nan=x.dtype.kind == "f"))
    wide = x.astype(np.longdouble)
    ref, mag = np.cumsum(wide), np.cumsum(np.abs(wide))
    if exclusive:
        ref = np.concatenate([[0], ref[:-1]])
    tol = ((depth + 3) * np.finfo(x.dtype).eps + x.size * np.finfo(np.longdouble).eps) * mag.astype(np.float64)
    return bool(np.all(np.abs(out.astype(np.float64) - ref.astype(np.float64)) <= tol))


def make_input(rng, n, dtype):
    if dtype.kind == "i":
        return rng.integers(-1000, 1000, n, dtype=dtype)
    return rng.standard_normal(n).astype(dtype)


def time_gpu(run, repeat):
    """Median milliseconds of run() between two CUDA events, after two warm-up runs (compile, pool, clocks)."""
    return median_ms(run, repeat)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=2**24)
    parser.add_argument("--dtype", default="float32", choices=["int32", "int64", "float32", "float64"])
    parser.add_argument("--op", default="add", choices=["add", "max", "min"])
    parser.add_argument("--exclusive", action="store_true")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    if args.size < 1:
        parser.error("--size must be at least 1")

    dtype, op, exclusive, n = np.dtype(args.dtype), args.op, args.exclusive, args.size
    x = make_input(np.random.default_rng(0), n, dtype)
    reason = pyscan.gpu_unavailable_reason()
    if reason is not None:
        sys.exit(f"no GPU: {reason}")
    device = pyscan.device_name()
    import pycuda.gpuarray as ga  # pyscan has made its context current (gpu_unavailable_reason set it up)

    host_times = []
    for _ in range(5):
        t0 = time.perf_counter()
        numpy_scan(x, op, exclusive)
        host_times.append((time.perf_counter() - t0) * 1e3)
    host_ms = statistics.median(host_times)

    x_dev = ga.to_gpu(x)
    out = ga.empty_like(x_dev)
    runs = [(a.name, a.driver, a.error_depth) for a in SCANS]

    print(f"prefix scan ({'exclusive' if exclusive else 'inclusive'}, op={op}) of {n:,} {dtype} elements on {device}")
    host_call = {"add": "cumsum", "max": "maximum.accumulate", "min": "minimum.accumulate"}[op]
    print(f"numpy ({host_call}) on the host: {host_ms:.2f} ms\n")
    header = f"{'algorithm':34} {'launches':>8} {'time ms':>9} {'Gelem/s':>8} {'vs numpy':>9}  check"
    print(header)
    print("-" * len(header))
    failures = 0
    for name, driver, depth in runs:
        try:
            out.fill(dtype.type(0))
            launches = driver(x_dev, out, op=op, exclusive=exclusive)
            ok = matches(out.get(), x, op, exclusive, depth(n) if depth else 0)
            ms = time_gpu(lambda d=driver: d(x_dev, out, op=op, exclusive=exclusive), args.repeat)
        except Exception as exc:  # report and go on: one broken algorithm should not hide the others
            failures += 1
            print(f"{name:34} FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
            continue
        failures += not ok
        print(f"{name:34} {launches:8d} {ms:9.3f} {n / ms / 1e6:8.2f} {host_ms / ms:8.1f}x  "
              f"{'matches NumPy' if ok else 'DIFFERS FROM NumPy'}")
    blocks = ", ".join(SCANS.get("hierarchical").block_scans)
    print(f"\n(time: median of {args.repeat} runs, CUDA events around the kernels; Gelem/s = elements / time)")
    print(f"({blocks}: on more than one section, PMPP §11.6's hierarchical scheme with that block scan)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
