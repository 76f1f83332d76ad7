"""Hands-On GPU Programming with Python and CUDA, ch. 4: the first SourceModule kernel, step by step.

    python demos/scalar_multiply.py [--size N] [--factor A]

1. SourceModule: pyscan.source_module compiles kernels/basics/scalar_multiply.cu (ELEM_TYPE=float) into pycuda's
   own SourceModule object.
2. get_function("scalar_multiply") gives the kernel, out[i] = a * x[i] with a grid-stride loop.
3. The launch, in pycuda's call style: GPUArrays, NumPy scalars for the scalar arguments, block= and grid=.
The result comes back with .get() and is checked against NumPy.  Without a usable GPU the demo says why on stderr
and exits with status 3.
"""

import argparse
import sys

import numpy as np

import pyscan

BLOCK = 256  # threads per block


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--factor", type=float, default=2.0)
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error("--size must be at least 1")
    reason = pyscan.gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}", file=sys.stderr)
        return 3

    # 1. SourceModule (pycuda's, compiled from the kernel file; pycuda's context is made current for it)
    mod = pyscan.source_module("basics/scalar_multiply.cu", ELEM_TYPE="float")
    # 2. get_function: the kernel's extern "C" name
    scalar_multiply = mod.get_function("scalar_multiply")
    # 3. launch: void scalar_multiply(float* out, const float* x, float a, long long n)
    import pycuda.gpuarray as gpuarray

    n, a = args.size, np.float32(args.factor)
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x_gpu = gpuarray.to_gpu(x)
    out_gpu = gpuarray.empty_like(x_gpu)
    grid = ((n + BLOCK - 1) // BLOCK, 1, 1)  # one thread per element; the grid-stride loop would take fewer
    scalar_multiply(out_gpu, x_gpu, a, np.int64(n), block=(BLOCK, 1, 1), grid=grid)
    out = out_gpu.get()  # waits for the kernel

    expected = x * a
    ok = np.array_equal(out, expected)
    print(f"scalar_multiply: {n} float32 elements times {a} on {pyscan.device_name()}, {grid[0]} blocks of {BLOCK}")
    print(f"first values: {out[:4]}  (NumPy: {expected[:4]})")
    print("matches NumPy exactly" if ok else "DOES NOT MATCH NumPy")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
