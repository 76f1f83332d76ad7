"""Prefix scans of the books (PMPP ch. 11, Hands-On ch. 4) on one random array: checked against NumPy and timed.

    python demos/prefix_scan.py [--size N] [--dtype float32] [--op add] [--exclusive] [--repeat 20]

First Hands-On ch. 4's naive parallel prefix the book's way: pyscan.source_module compiles kernels/scan/naive.cu
into pycuda's SourceModule, get_function("naive_scan") gives the kernel, and one launch of one block of 1024
threads scans the first 1024 elements (the book's size; the kernel file fixes the book's race).

Then every registered algorithm (pyscan.SCAN_ALGORITHMS) through pyscan.scan on the whole array, already on the
device: the median GPU time over --repeat calls after warm-up calls (pycuda events around each call), the throughput
in elements per second, the speed-up over numpy.cumsum (or np.maximum/minimum.accumulate) on the host, and whether
the result matches NumPy (integers and max/min exactly; float add within the algorithm's rounding bound).  Without
a usable GPU the demo says why on stderr and exits with status 3.
"""

import argparse
import statistics
import sys
import time

import numpy as np

import pyscan
from pyscan.timing import median_ms

SCANS = pyscan.REGISTRIES["scan"]
C_TYPES = {"int32": "int", "int64": "long long", "float32": "float", "float64": "double"}
UFUNCS = {"add": np.add, "max": np.maximum, "min": np.minimum}
BOOK_SECTION = 1024  # Hands-On's naive_prefix: one block of 1024 threads, one element each


def numpy_scan(x, op, exclusive):
    """NumPy's scan: np.add/maximum/minimum.accumulate in x's dtype (integers wrap, as np.cumsum(x, dtype=x.dtype));
    exclusive: shifted right by one, the operator's identity first."""
    out = UFUNCS[op].accumulate(x, dtype=x.dtype)
    if not exclusive:
        return out
    if op == "add":
        first = 0
    elif x.dtype.kind == "f":
        first = -np.inf if op == "max" else np.inf
    else:
        first = np.iinfo(x.dtype).min if op == "max" else np.iinfo(x.dtype).max
    return np.concatenate([np.array([first], x.dtype), out[:-1]])


def matches(out, x, op, exclusive, depth):
    """Integers / max / min: exact.  Float add: |out - ref| <= ((depth + 3) eps + n eps_ld) sum_{j<=i} |x_j| with a
    long-double reference (tests/helpers/scan_checks.py explains the bound)."""
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


def book_naive_scan(x, op, exclusive):
    """Hands-On ch. 4's SourceModule -> get_function -> launch on kernels/scan/naive.cu: one block scans the first
    BOOK_SECTION elements.  Returns (elements scanned, whether they match NumPy)."""
    mod = pyscan.source_module("scan/naive.cu", ELEM_TYPE=C_TYPES[x.dtype.name], OP=f"OP_{op.upper()}",
                               SECTION_SIZE=BOOK_SECTION)
    naive_scan = mod.get_function("naive_scan")
    import pycuda.gpuarray as gpuarray  # pycuda's context is current: source_module made it so

    part = x[:BOOK_SECTION]
    m = part.size
    part_gpu = gpuarray.to_gpu(part)
    out_gpu = gpuarray.empty_like(part_gpu)
    # void naive_scan(T* out, const T* in, T* block_sums, long long n, int exclusive); block_sums NULL: one section
    naive_scan(out_gpu, part_gpu, np.uintp(0), np.int64(m), np.int32(exclusive), block=(BOOK_SECTION, 1, 1),
               grid=(1, 1, 1))
    depth = SCANS.get("naive").error_depth
    return m, matches(out_gpu.get(), part, op, exclusive, depth(m) if depth else 0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=2**24)
    parser.add_argument("--dtype", default="float32", choices=["int32", "int64", "float32", "float64"])
    parser.add_argument("--op", default="add", choices=["add", "max", "min"])
    parser.add_argument("--exclusive", action="store_true")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error("--size must be at least 1")
    reason = pyscan.gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}", file=sys.stderr)
        return 3

    dtype, op, exclusive, n = np.dtype(args.dtype), args.op, args.exclusive, args.size
    x = make_input(np.random.default_rng(0), n, dtype)
    kind = "exclusive" if exclusive else "inclusive"
    print(f"prefix scan ({kind}, op={op}) of {n:,} {dtype} elements on {pyscan.device_name()}\n")

    m, ok = book_naive_scan(x, op, exclusive)
    failures = int(not ok)
    print(f"Hands-On ch. 4, naive prefix: SourceModule(scan/naive.cu) -> get_function('naive_scan') -> one block of "
          f"{BOOK_SECTION} threads on the first {m} elements: {'matches NumPy' if ok else 'DIFFERS FROM NumPy'}\n")

    import pycuda.gpuarray as gpuarray

    host_times = []
    for _ in range(5):
        t0 = time.perf_counter()
        numpy_scan(x, op, exclusive)
        host_times.append((time.perf_counter() - t0) * 1e3)
    host_ms = statistics.median(host_times)
    x_dev = gpuarray.to_gpu(x)
    out = gpuarray.empty_like(x_dev)

    host_call = {"add": "cumsum", "max": "maximum.accumulate", "min": "minimum.accumulate"}[op]
    print(f"pyscan.scan(x, algorithm=...) on the device array; numpy ({host_call}) on the host: {host_ms:.2f} ms\n")
    header = f"{'algorithm':34} {'time ms':>9} {'Gelem/s':>8} {'vs numpy':>9}  check"
    print(header)
    print("-" * len(header))
    for name in pyscan.SCAN_ALGORITHMS:
        def run(name=name):
            # in x's dtype, as numpy_scan (int32 add would give NumPy's int64 without dtype=)
            return pyscan.scan(x_dev, algorithm=name, op=op, exclusive=exclusive, out=out, dtype=dtype)

        try:
            out.fill(dtype.type(0))
            run()
            depth = SCANS.get(name).error_depth
            ok = matches(out.get(), x, op, exclusive, depth(n) if depth else 0)
            ms = median_ms(run, args.repeat)  # pycuda events on the legacy default stream, where GPUArray calls run
        except Exception as exc:  # report and go on: one broken algorithm should not hide the others
            failures += 1
            print(f"{name:34} FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
            continue
        failures += not ok
        print(f"{name:34} {ms:9.3f} {n / ms / 1e6:8.2f} {host_ms / ms:8.1f}x  "
              f"{'matches NumPy' if ok else 'DIFFERS FROM NumPy'}")
    blocks = ", ".join(SCANS.get("hierarchical").block_scans)
    print(f"\n(time: median of {args.repeat} calls, pycuda events around each call; Gelem/s = elements / time)")
    print(f"({blocks}: on more than one section, PMPP §11.6's hierarchical scheme with that block scan)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
