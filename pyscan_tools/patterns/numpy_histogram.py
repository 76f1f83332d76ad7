"""np.histogram's and np.bincount's contract on the GPU (pyscan.histogram, pyscan.bincount): the bench times them
on float32, int32 and uint8 data with 100, 4,096 and 2^20 equal bins, the values spread over every bin or with
10 %, 90 % or 100 % of them in one bin (the contention of PMPP §9.3), against torch.histc, cupy.histogram and
cuda.compute's histogram_even; and bincount of int32 and int64 values against torch.bincount and cupy.bincount.
(torch.histogram runs on the CPU only, so it is not a row.)

The data are chosen so that every library's bin arithmetic agrees with NumPy's: range (0, R) with R = bins for
float32 and int32 (width 1; float values k + 0.5) and R = 256 for uint8 (widths that are powers of two, or 2.56
for 100 bins, where no byte lies on an edge but 0, 64, 128 and 192, which every method puts in the same bin).
The ratio to the copy is against reading the input once (copy time / 2), as for reductions.
"""

from __future__ import annotations

import numpy as np

from . import Pattern
from ._arrays import returning

BINS = (100, 4096, 2**20)
SKEWS = (0, 10, 90, 100)  # percent of the values in one bin
SIZES = {"default": [2**20, 2**24, 2**28], "full": [2**k for k in range(20, 29, 2)], "quick": [2**20, 2**24, 2**28],
         "small": [2**12, 2**16 + 3]}


def case_name(bins: int, skew: int) -> str:
    return f"{bins} bins, {skew}% in one"


def parse_case(op: str) -> tuple:
    """(bins, skew percent) of a case name."""
    bins, rest = op.split(" bins, ")
    return int(bins), int(rest.split("%")[0])


def value_range(dtype, bins: int) -> int:
    """R: the histogram's range is (0, R)."""
    return 256 if np.dtype(dtype) == np.uint8 else bins


def make_input(size, dtype, op, rng) -> np.ndarray:
    """Values spread evenly over (0, R) with skew % of them (chosen at random) set to one value, R // 2."""
    dtype = np.dtype(dtype)
    bins, skew = parse_case(op)
    top = value_range(dtype, bins)
    n = int(size)
    index_type = np.uint8 if top <= 256 else np.int32
    values = rng.integers(0, top, n, dtype=index_type) if skew < 100 else np.full(n, top // 2, index_type)
    if 0 < skew < 100:
        values[rng.integers(0, 1000, n, dtype=np.uint16) < skew * 10] = top // 2
    out = values.astype(dtype)
    if dtype.kind == "f":
        out += dtype.type(0.5)
    return out


def reference(host, op, units):
    bins, _ = parse_case(op)
    return np.histogram(host, bins, (0, value_range(host.dtype, bins)))[0]


def _same(got, expected) -> bool:
    return got.shape == expected.shape and np.array_equal(got.astype(np.int64), expected.astype(np.int64))


def public_call(pyscan, x, op, algorithm):
    if algorithm != "auto":
        raise NotImplementedError(f"pyscan.histogram has no algorithm= (asked for {algorithm!r})")
    bins, _ = parse_case(op)
    top = value_range(_dtype_name(x), bins)
    return returning(lambda: pyscan.histogram(x, bins, range=(0, top))[0])


def _dtype_name(x) -> str:
    return str(x.dtype).replace("torch.", "")


HISTOGRAM = Pattern(
    name="numpy_histogram", registry=None,
    bench_cases=tuple((dtype, case_name(b, s)) for dtype in ("float32", "int32", "uint8") for b in BINS
                      for s in SKEWS),
    sizes=SIZES, make_input=make_input, reference=reference, same=_same, reads_only=True, inputs_depend_on_op=True,
    public_name="pyscan.histogram", public_call=public_call,
)


# ---- bincount -------------------------------------------------------------------------------------------------

def bincount_case(length: int, skew: int) -> str:
    return f"values below {length}, {skew}% one value"


def parse_bincount_case(op: str) -> tuple:
    head, rest = op.split(", ")
    return int(head.split()[-1]), int(rest.split("%")[0])


def make_bincount_input(size, dtype, op, rng) -> np.ndarray:
    length, skew = parse_bincount_case(op)
    n = int(size)
    values = rng.integers(0, length, n, dtype=np.int32) if skew < 100 else np.full(n, length // 2, np.int32)
    if 0 < skew < 100:
        values[rng.integers(0, 1000, n, dtype=np.uint16) < skew * 10] = length // 2
    return values.astype(dtype)


def bincount_public_call(pyscan, x, op, algorithm):
    if algorithm != "auto":
        raise NotImplementedError(f"pyscan.bincount has no algorithm= (asked for {algorithm!r})")
    length, _ = parse_bincount_case(op)
    return returning(lambda: pyscan.bincount(x, minlength=length))


BINCOUNT = Pattern(
    name="bincount", registry=None,
    bench_cases=tuple((dtype, bincount_case(length, s)) for dtype in ("int32", "int64") for length in BINS
                      for s in (0, 100)),
    sizes=SIZES, make_input=make_bincount_input,
    reference=lambda host, op, units: np.bincount(host, minlength=parse_bincount_case(op)[0]),
    same=_same, reads_only=True, inputs_depend_on_op=True,
    public_name="pyscan.bincount", public_call=bincount_public_call,
)
