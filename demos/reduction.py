"""Reduction (PMPP ch. 10): every algorithm on one random array, checked against NumPy, timed on the GPU.

    python demos/reduction.py [--size N] [--dtype float32] [--op add] [--repeat 20]
    python demos/reduction.py --versus --size 268435456 --dtype int32     # fast vs copy vs cupy.sum

(pyscan_tools/lab/tune_fast.py reduction sweeps the fast kernel's knobs.)

Times are CUDA-event times (pycuda.driver.Event) of whole calls on a GPUArray already on the device, after
warm-up calls, the median of --repeat.  `pyscan.reduce` of a GPUArray returns a 0-d GPUArray, as cupy.sum
returns a 0-d CuPy array: "device result" rows leave the result on the GPU, "copied back" rows include
reading it to the host (.get()).  Every row shows its bandwidth as a fraction of a device-to-device copy of the
same array measured in the same run:

    fraction of copy = (bytes the reduction reads / its time) / (bytes the copy reads + writes / its time)

Float sums are checked against the exact sum (math.fsum) with each algorithm's bound h * eps * sum|x|
(pyscan/reductions/__init__.py); integer sums (wrapping, as np.sum(x, dtype=x.dtype)) and max/min exactly.
Without a usable GPU the demo says why on stderr and exits with status 3.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import pyscan
from pyscan.reductions.reference import check_result, reference
from pyscan.timing import median_ms


def time_gpu(fn, repeat, warmup=3):
    """Median milliseconds of fn() between two CUDA events, after `warmup` untimed calls."""
    return median_ms(fn, repeat, warmup)


def make_data(size, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    return rng.uniform(-1000, 1000, size).astype(dtype)


def host_scalar(result):
    """The NumPy scalar of pyscan.reduce's 0-d device result (read back to the host)."""
    return np.asarray(result.get() if hasattr(result, "get") else result)[()]


def copy_ms(x_gpu, repeat):
    import pycuda.driver as drv
    import pycuda.gpuarray as ga

    dst = ga.empty_like(x_gpu)
    return time_gpu(lambda: drv.memcpy_dtod(dst.gpudata, x_gpu.gpudata, x_gpu.nbytes), repeat)


def row(label, ms, x, copy_ms_):
    n, nbytes = x.size, x.nbytes
    read_rate = nbytes / (ms * 1e-3)
    copy_rate = 2 * nbytes / (copy_ms_ * 1e-3)
    return f"{label:<34}{ms:>10.3f}{n / (ms * 1e-3) / 1e9:>10.1f}{read_rate / 1e9:>10.1f}{read_rate / copy_rate:>10.2f}"


HEADER = f"{'':<34}{'ms':>10}{'Gelem/s':>10}{'GB/s':>10}{'x copy':>10}"


def check(name, x, op, result):
    from pyscan.reductions import REDUCTIONS

    depth = REDUCTIONS.get(name).error_depth(x.size)
    ok, error, allowance = check_result(x, op, result, depth)
    detail = f"err {error:.3g} <= {allowance:.3g}" if allowance else ("exact" if ok else "WRONG")
    return ok, detail


def run_all(args, x, x_gpu):
    from pyscan.reductions import REDUCTIONS

    copy = copy_ms(x_gpu, args.repeat)
    print(f"{x.size} {x.dtype} elements, op={args.op}; device-to-device copy {copy:.3f} ms "
          f"({2 * x.nbytes / (copy * 1e-3) / 1e9:.0f} GB/s read + written)\n")
    print(f"{'algorithm':<16}{'source':<13}{'result':>30}  {'check':<28}" + HEADER[34:])
    failures = 0
    for algorithm in REDUCTIONS:
        result = host_scalar(pyscan.reduce(x_gpu, algorithm=algorithm.name, op=args.op))
        ok, detail = check(algorithm.name, x, args.op, result)
        failures += not ok
        ms = time_gpu(lambda a=algorithm.name: pyscan.reduce(x_gpu, algorithm=a, op=args.op), args.repeat)
        line = row("", ms, x, copy)[34:]
        source = algorithm.source.split(" (")[0][:12]
        print(f"{algorithm.name:<16}{source:<13}{result!r:>30}  {detail:<28}{line}")
    expected = reference(x, args.op)
    print(f"\nNumPy ({'np.sum(x, dtype=x.dtype)' if args.op == 'add' else 'np.' + args.op}): {expected!r}")
    print("all algorithms agree with NumPy" if not failures else f"{failures} algorithm(s) DISAGREE with NumPy")
    return failures


def run_versus(args, x, x_gpu):
    copy = copy_ms(x_gpu, args.repeat)
    print(f"{x.size} {x.dtype} elements ({x.nbytes / 2**30:.2f} GiB), op={args.op}, median of {args.repeat}\n")
    print(HEADER)
    print(row("device-to-device copy", copy, x, copy) + "   (copy: read + written bytes)")
    print(row("pyscan fast, device result", time_gpu(lambda: pyscan.reduce(x_gpu, algorithm="fast", op=args.op),
                                                     args.repeat), x, copy))
    print(row("pyscan fast, copied back", time_gpu(lambda: pyscan.reduce(x_gpu, algorithm="fast", op=args.op).get(),
                                                   args.repeat), x, copy))
    try:
        import cupy
    except ImportError:
        print("cupy: not installed")
        return 0
    x_cp = cupy.asarray(x)
    reducer = {"add": cupy.sum, "max": cupy.max, "min": cupy.min}[args.op]
    result = reducer(x_cp)
    print(row(f"cupy.{reducer.__name__}, device result", time_gpu(lambda: reducer(x_cp), args.repeat), x, copy))
    if args.op == "add" and x.dtype.kind == "i" and x.dtype.itemsize < 8:
        # cupy.sum, like np.sum, adds int32 in int64 (its result does not wrap); with dtype=x.dtype it adds in
        # int32 and wraps, as pyscan does: the like-for-like comparison.
        same = lambda: cupy.sum(x_cp, dtype=x_cp.dtype)  # noqa: E731
        print(row("cupy.sum(dtype=int32), device result", time_gpu(same, args.repeat), x, copy))
        print("  (cupy.sum of int32 accumulates in int64 unless given dtype=int32)")
    ours = host_scalar(pyscan.reduce(x_gpu, algorithm="fast", op=args.op))
    theirs = np.asarray(result.item()).astype(x.dtype)[()]  # int64 -> int32 wraps, as np.sum(x, dtype=int32) does
    agree = bool(theirs == ours) if (x.dtype.kind == "i" or args.op != "add") else None
    print(f"\npyscan fast {ours!r}, cupy {result.item()!r}" + ("" if agree is None else f" (as {x.dtype}: {theirs!r}), "
                                                              f"equal: {agree}"))
    return 0 if agree in (None, True) else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=2**24)
    parser.add_argument("--dtype", default="float32", choices=["int32", "int64", "float32", "float64"])
    parser.add_argument("--op", default="add", choices=["add", "max", "min"])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--versus", action="store_true", help="fast vs a device-to-device copy vs cupy")
    args = parser.parse_args(argv)
    reason = pyscan.gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}", file=sys.stderr)
        return 3
    pyscan.pycuda_context()
    import pycuda.gpuarray as ga

    x = make_data(args.size, args.dtype)
    x_gpu = ga.to_gpu(x)
    print(f"device: {pyscan.device_name()}")
    if args.versus:
        return run_versus(args, x, x_gpu)
    return 1 if run_all(args, x, x_gpu) else 0


if __name__ == "__main__":
    sys.exit(main())
