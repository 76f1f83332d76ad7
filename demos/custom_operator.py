"""Custom operators as C expressions, and why a scan's operator must be associative (PMPP §11.1).

    python demos/custom_operator.py [--size N] [--model]

pyscan.scan(x, op="a*b", identity=1) is PyCUDA's InclusiveScanKernel(dtype, "a*b"): the expression goes into
every algorithm's kernels as OP_EXPRESSION(a, b) (kernels/common/operators.cuh).  A parallel scan regroups the
combines -- Kogge-Stone combines x0..x3 as (x0 (+) x1) (+) (x2 (+) x3), the hierarchical scan adds block sums,
decoupled look-back adds tile prefixes -- and regrouping gives the same answer only for an associative operator.

First an associative expression, "max(a, b) + 0" style: every algorithm agrees with the sequential scan.  Then
"a - b", which is not associative ((8 - 4) - 2 = 2, 8 - (4 - 2) = 6) and has no two-sided identity (0 - x != x):
every algorithm gives its own answer, and none of them np.subtract.accumulate's except where its grouping happens
to be the sequential one.  Reductions the same way.

On a GPU the kernels run (pyscan.scan / pyscan.reduce); without one -- or with --model -- the NumPy step-models of
the kernels run instead (the same groupings, index for index), and the demo says so.
"""

import argparse
import sys

import numpy as np

import pyscan

SCANS = pyscan.REGISTRIES["scan"]
REDUCTIONS = pyscan.REGISTRIES["reduce"]
ASSOCIATIVE = [("a + b", 0, np.add), ("max(a, b)", np.iinfo(np.int32).min, np.maximum)]
NOT_ASSOCIATIVE = ("a - b", 0, np.subtract)


def run_scan(name, x, op, identity, on_gpu):
    if on_gpu:
        return pyscan.scan(x, op=op, identity=identity, algorithm=name)
    return SCANS.get(name).model(x, op=op, identity=identity)


def run_reduce(name, x, op, identity, on_gpu):
    if on_gpu:
        return pyscan.reduce(x, op=op, identity=identity, algorithm=name)
    return REDUCTIONS.get(name).model(x, op=op, identity=identity)


def compare(title, x, op, identity, ufunc, on_gpu) -> int:
    """Every scan and reduction algorithm with `op`, against the sequential scan (ufunc.accumulate in x's dtype);
    returns how many disagree."""
    sequential = ufunc.accumulate(x, dtype=x.dtype)
    print(f"\n{title}: op={op!r}, identity={identity}")
    print(f"  sequential (NumPy {ufunc.__name__}.accumulate): last = {sequential[-1]}")
    differ = 0
    for name in SCANS.names():
        got = run_scan(name, x, op, identity, on_gpu)
        same = bool(np.array_equal(got, sequential))
        differ += not same
        print(f"  scan   {name:27s} last = {got[-1]:>14}   {'same' if same else 'DIFFERENT'}  "
              f"({int(np.count_nonzero(got != sequential))} of {x.size} outputs differ)")
    for name in REDUCTIONS.names():
        got = run_reduce(name, x, op, identity, on_gpu)
        same = bool(got == sequential[-1])
        differ += not same
        print(f"  reduce {name:27s} result = {got:>12}   {'same' if same else 'DIFFERENT'}")
    return differ


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=5000, help="elements (default 5000: several sections and blocks)")
    parser.add_argument("--model", action="store_true", help="run the NumPy step-models even on a GPU")
    args = parser.parse_args(argv)
    if args.size < 1:
        parser.error("--size must be at least 1")
    reason = pyscan.gpu_unavailable_reason()
    on_gpu = reason is None and not args.model
    if on_gpu:
        print(f"on the GPU: {pyscan.device_name()}")
    else:
        why = "--model" if reason is None else f"no usable GPU ({reason.split(';')[0]})"
        print(f"the NumPy step-models of the kernels, not the GPU: {why}.  They group the combines as the kernels do, "
              "so they show what the GPU would give.")
    x = (np.arange(args.size) % 7 + 1).astype(np.int32)
    print(f"x = {x.size} int32 values, 1 .. 7; a custom operator's result dtype is x's (int32)")
    for op, identity, ufunc in ASSOCIATIVE:
        if compare("associative", x, op, identity, ufunc, on_gpu):
            print("  an associative operator disagreed: that is a bug", file=sys.stderr)
            return 1
    op, identity, ufunc = NOT_ASSOCIATIVE
    differ = compare("NOT associative", x, op, identity, ufunc, on_gpu)
    print(f"\n{differ} of {len(SCANS.names()) + len(REDUCTIONS.names())} algorithms differ from the sequential a - b: "
          "a parallel scan or reduction needs an associative operator with an identity (PMPP §11.1).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
