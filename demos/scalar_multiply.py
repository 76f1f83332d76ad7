"""Hands-On GPU Programming with Python and CUDA, ch. 4: the first SourceModule kernel.

Multiplies a random vector by a scalar on the GPU (kernels/basics/scalar_multiply.cu), checks the result
against NumPy, and says so.   python demos/scalar_multiply.py [--size N]
"""

import argparse
import sys

import numpy as np

import pyscan


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--factor", type=float, default=2.0)
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal(args.size).astype(np.float32)
    try:
        out = pyscan.scalar_multiply(x, args.factor)
    except pyscan.GPUUnavailableError as exc:
        sys.exit(f"no GPU: {exc}")
    expected = x * np.float32(args.factor)
    ok = np.array_equal(out, expected)
    print(f"scalar_multiply: {args.size} float32 elements times {args.factor} on the GPU")
    print(f"first values: {out[:4]}  (NumPy: {expected[:4]})")
    print("matches NumPy exactly" if ok else "DOES NOT MATCH NumPy")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
