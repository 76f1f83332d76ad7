"""Lab script: sweep the fast kernels' tuning knobs on the GPU, the library's defaults first and last (their spread
is the run's noise).  It sets the kernels' module settings directly, which the public API does not offer.

    python pyscan_tools/lab/tune_fast.py reduction [--size N] [--dtype int32] [--op add] [--repeat 20]
    python pyscan_tools/lab/tune_fast.py histogram [--size N] [--repeat 10]

reduction  the fast reduction's threads per block, unroll, load width and blocks per SM (pyscan.reductions.fast)
histogram  the fast histogram's sub-histogram copies, threads per block, run aggregation and blocks per SM
           (pyscan.histograms.fast.run_fast), on uniform bytes and on all-equal bytes (one bin: the most contention)

Times are CUDA-event medians (pyscan.timing.median_ms) of whole calls on data already on the device, after warm-up
calls; every result is checked against NumPy.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import pyscan
from pyscan.timing import median_ms

# (block, unroll, load, blocks per SM) of the fast reduction
REDUCTION_CANDIDATES = [(block, unroll, load, per_sm) for block in (256, 512) for unroll in (2, 4, 8) for load in (0, 1)
                        for per_sm in (None, 2, 8)]


def tune_reduction(args, ga) -> int:
    from pyscan.reductions import fast
    from pyscan.reductions.reference import reference

    rng = np.random.default_rng(0)
    dtype = np.dtype(args.dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, args.size, dtype=dtype, endpoint=True)
    else:
        x = rng.uniform(-1000, 1000, args.size).astype(dtype)
    x_gpu = ga.to_gpu(x)
    expected = reference(x, args.op)
    saved = fast.FAST_BLOCK, fast.FAST_UNROLL, fast.FAST_LOAD, fast.BLOCKS_PER_SM
    print(f"fast reduction knobs, {x.size} {x.dtype}, op={args.op}, median of {args.repeat}\n")
    print(f"{'block':>6}{'unroll':>7}{'load':>6}{'per SM':>7}{'grid':>7}{'ms':>10}{'Gelem/s':>10}{'GB/s':>10}  right")
    best = None
    try:
        for block, unroll, load, per_sm in [saved] + REDUCTION_CANDIDATES + [saved]:
            fast.retune(FAST_BLOCK=block, FAST_UNROLL=unroll, FAST_LOAD=load, BLOCKS_PER_SM=per_sm)
            result = pyscan.reduce(x_gpu, algorithm="fast", op=args.op).get()[()]
            ms = median_ms(lambda: pyscan.reduce(x_gpu, algorithm="fast", op=args.op), args.repeat, 3)
            right = result == expected if x.dtype.kind == "i" or args.op != "add" else "-"
            print(f"{block:>6}{unroll:>7}{load:>6}{str(per_sm):>7}{fast.launch_grid(x_gpu, args.op):>7}{ms:>10.3f}"
                  f"{x.size / ms / 1e6:>10.1f}{x.nbytes / ms / 1e6:>10.1f}  {right}")
            if best is None or ms < best[0]:
                best = (ms, block, unroll, load, per_sm)
    finally:
        fast.retune(**dict(zip(("FAST_BLOCK", "FAST_UNROLL", "FAST_LOAD", "BLOCKS_PER_SM"), saved)))
    print(f"\nbest: block {best[1]}, unroll {best[2]}, load {best[3]}, blocks per SM {best[4]}: {best[0]:.3f} ms")
    return 0


def histogram_candidates(call):
    """(name, run(data, bins)) of each setting, run_fast launching on `call` (its device, its stream)."""
    from pyscan.histograms import fast

    candidates = [("fast (defaults)", lambda d, b: fast.run_fast(d, b, call=call))]
    for copies in (8, 16, 32):
        for block in (256, 512, 1024):
            for aggregate in (True, False):
                name = f"fast c{copies} b{block}{'' if aggregate else ' noagg'}"
                candidates.append((name, lambda d, b, c=copies, k=block, g=aggregate:
                                   fast.run_fast(d, b, call=call, copies=c, block=k, aggregate=g)))
    for per_sm in (1, 4):
        candidates.append((f"fast {per_sm} blocks/SM",
                           lambda d, b, p=per_sm: fast.run_fast(d, b, call=call, blocks_per_sm=p)))
    return candidates + candidates[:1]


def tune_histogram(args) -> int:
    from pyscan.runtime.arrays import Call

    call = Call.tool()  # pyscan's memory on the legacy default stream, where median_ms's events go
    rng = np.random.default_rng(10)
    inputs = {"uniform": rng.integers(0, 256, args.size, dtype=np.uint8),
              "all-equal": np.full(args.size, 97, np.uint8)}
    on_device = {kind: call.to_device(data) for kind, data in inputs.items()}
    expected = {kind: np.bincount(data, minlength=256) for kind, data in inputs.items()}
    print(f"fast histogram knobs, 256 bins, {args.size} uint8, median of {args.repeat}\n")
    print(f"{'variant':<24}" + "".join(f"{kind + ' ms':>14}{'Gelem/s':>10}" for kind in inputs) + "  right")
    wrong = 0
    for name, run in histogram_candidates(call):
        line, right = f"{name:<24}", True
        for kind, data_gpu in on_device.items():
            right &= bool(np.array_equal(run(data_gpu, 256).get(), expected[kind]))
            ms = median_ms(lambda r=run, d=data_gpu: r(d, 256), args.repeat)
            line += f"{ms:14.3f}{args.size / ms / 1e6:10.1f}"
        wrong += not right
        print(f"{line}  {right}")
    return 1 if wrong else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernel", choices=("reduction", "histogram"))
    parser.add_argument("--size", type=int, help="elements (default: 2^28)")
    parser.add_argument("--dtype", default="int32", choices=["int32", "int64", "float32", "float64"],
                        help="reduction only (default %(default)s)")
    parser.add_argument("--op", default="add", choices=["add", "max", "min"], help="reduction only")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    args.size = args.size or 2**28
    reason = pyscan.gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}")
        return 1
    print(f"device: {pyscan.device_name()}")
    if args.kernel == "histogram":
        return tune_histogram(args)
    from pyscan.basics import pycuda_context

    pycuda_context()  # the reduction's input is a GPUArray: pycuda needs a context (the primary one, pyscan's)
    import pycuda.gpuarray as ga

    return tune_reduction(args, ga)


if __name__ == "__main__":
    sys.exit(main())
