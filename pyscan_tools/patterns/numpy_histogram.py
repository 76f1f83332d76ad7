"""np.histogram's and np.bincount's contract on the GPU (pyscan.histogram, pyscan.bincount): the bench times them
on float32, int32 and uint8 data with 100, 4,096 and 2^20 equal bins, the values spread over every bin or with
10 %, 90 % or 100 % of them in one bin (the contention of PMPP §9.3), against torch.histc, cupy.histogram and
cuda.compute's histogram_even; and bincount of int32 and int64 values against torch.bincount and cupy.bincount.
(torch.histogram runs on the CPU only, so it is not a row.)

The data are chosen so that every library's bin arithmetic agrees with NumPy's: range (0, R) with R = bins for
float32 and int32 (width 1; float values k + 0.5) and R = 256 for uint8 (widths that are powers of two, or 2.56
for 100 bins, where no byte lies on an edge but 0, 64, 128 and 192, which every method puts in the same bin).
The ratio to the copy is against reading the input once (copy time / 2), as for reductions.  Inputs past 2^22
values repeat one random block of 2^22 (RANDOM_BLOCK).
"""

from __future__ import annotations

import numpy as np

from . import Pattern, case, first_difference
from ._arrays import returning, to_numpy, upload

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


RANDOM_BLOCK = 2**22  # larger inputs repeat a random block of this many values (see _random)


def _random(n: int, make) -> np.ndarray:
    """make(k) for k = n, or, past RANDOM_BLOCK values, one block of random values repeated: a histogram's time
    does not depend on where in the array a value sits, and drawing 2^28 random values takes the host seconds per
    case, which a GPU host's short sessions cannot spare."""
    if n <= RANDOM_BLOCK:
        return make(n)
    return np.resize(make(RANDOM_BLOCK), n)


def make_input(size, dtype, op, rng) -> np.ndarray:
    """Values spread evenly over (0, R) with skew % of them (chosen at random) set to one value, R // 2."""
    dtype = np.dtype(dtype)
    bins, skew = parse_case(op)
    top = value_range(dtype, bins)
    n = int(size)
    index_type = np.uint8 if top <= 256 else np.int32

    def make(k):
        values = rng.integers(0, top, k, dtype=index_type) if skew < 100 else np.full(k, top // 2, index_type)
        if 0 < skew < 100:
            values[rng.integers(0, 1000, k, dtype=np.uint16) < skew * 10] = top // 2
        return values
    out = _random(n, make).astype(dtype)
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


# ---- check: every path of pyscan.histogram (the byte values' fold, private copies, global atomics; each
# aggregation's default; weights; explicit edges; range=None; density; the ready call) on small inputs, which `python -m pyscan
# check numpy_histogram --sanitize` runs under compute-sanitizer ----------------------------------------------

def check_cases(name: str, quick: bool) -> list:
    cases = []
    for dtype in ("uint8", "int8", "float32", "int64", "float16") if not quick else ("uint8", "float32", "int64"):
        for bins in (7, 100) if dtype == "float16" else (7, 4096, 2**20):  # float16 has no 4096 distinct bins
            for n in (1, 1025, 70001) if not quick else (1025, 70001):
                cases.append(case(name, "auto", dtype=dtype, bins=bins, n=n, skew=90, weighted=False, gpu=True))
        cases.append(case(name, "auto", dtype=dtype, bins=100, n=70001, skew=0, weighted=True, gpu=True))
        cases.append(case(name, "auto", dtype=dtype, bins="edges", n=70001, skew=10, weighted=False, gpu=True))
        cases.append(case(name, "auto", dtype=dtype, bins="auto range", n=70001, skew=0, weighted=False, gpu=False))
        cases.append(case(name, "auto", dtype=dtype, bins="density", n=1025, skew=0, weighted=False, gpu=True))
    return cases


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    dtype = np.dtype(p["dtype"])
    bins = p["bins"] if isinstance(p["bins"], int) else 100
    top = value_range(dtype, bins)
    data = make_input(p["n"], dtype, case_name(bins, p["skew"]), rng)
    weights = rng.random(data.size) if p["weighted"] else None
    kwargs, expected_kwargs = {"range": (0, top)}, {"range": (0, top)}
    if p["bins"] == "edges":
        bins = np.sort(rng.uniform(-1, top + 1, 9))
    elif p["bins"] == "auto range":
        kwargs = expected_kwargs = {}
    elif p["bins"] == "density":
        kwargs["density"] = expected_kwargs["density"] = True
    arg = upload(data) if p["gpu"] else data
    weights_arg = (upload(weights) if p["gpu"] else weights) if weights is not None else None
    want, want_edges = np.histogram(data, bins, weights=weights, **expected_kwargs)
    # device data, an int bins and a range: twice, the second the ready call (numpy_histogram.ReadyHistogram)
    calls = 2 if p["gpu"] and isinstance(p["bins"], int) and weights is None else 1
    for _ in range(calls):
        got, edges = pyscan.histogram(arg, bins, weights=weights_arg, **kwargs)
        got, edges = to_numpy(got), to_numpy(edges)
        if got.dtype != want.dtype or edges.dtype != want_edges.dtype:
            return "mismatch", f"dtypes {got.dtype}, {edges.dtype}; NumPy's {want.dtype}, {want_edges.dtype}"
        if weights is not None or p["bins"] == "density":  # float64 sums in another order: ulps of the whole
            close = np.allclose(got, want, rtol=data.size * np.finfo(np.float64).eps, atol=0)
            diff = "" if close else first_difference(got, want)
        else:
            diff = first_difference(got, want)
        diff = diff or first_difference(edges, want_edges)
        if diff:
            return "mismatch", diff
    return "ok", ""


HISTOGRAM = Pattern(
    name="numpy_histogram", registry=None,
    bench_cases=tuple((dtype, case_name(b, s)) for dtype in ("float32", "int32", "uint8") for b in BINS
                      for s in SKEWS),
    sizes=SIZES, make_input=make_input, reference=reference, same=_same, reads_only=True, inputs_depend_on_op=True,
    public_name="pyscan.histogram", public_call=public_call,
    check_cases=check_cases, auto_cases=lambda: [], run_case=run_case,
)


# ---- bincount -------------------------------------------------------------------------------------------------

def bincount_case(length: int, skew: int) -> str:
    return f"values below {length}, {skew}% one value"


def parse_bincount_case(op: str) -> tuple:
    head, rest = op.split(", ")
    return int(head.split()[-1]), int(rest.split("%")[0])


def make_bincount_input(size, dtype, op, rng) -> np.ndarray:
    length, skew = parse_bincount_case(op)

    def make(k):
        values = rng.integers(0, length, k, dtype=np.int32) if skew < 100 else np.full(k, length // 2, np.int32)
        if 0 < skew < 100:
            values[rng.integers(0, 1000, k, dtype=np.uint16) < skew * 10] = length // 2
        return values
    return _random(int(size), make).astype(dtype)


def bincount_public_call(pyscan, x, op, algorithm):
    if algorithm != "auto":
        raise NotImplementedError(f"pyscan.bincount has no algorithm= (asked for {algorithm!r})")
    length, _ = parse_bincount_case(op)
    return returning(lambda: pyscan.bincount(x, minlength=length))


def bincount_check_cases(name: str, quick: bool) -> list:
    # values below 2^20 also with that minlength: the count and the extremes in one pass on the global histogram
    return [case(name, "auto", dtype=dtype, length=length, n=n, skew=skew, minlength=minlength, gpu=True)
            for dtype in ("int32", "int64", "uint8") for length in (5, 2**20) for n in ((70001,) if quick else
                                                                                       (1, 70001))
            for skew in (0, 100) for minlength in ((0, length) if length > 5 else (0,))]


def bincount_run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    length = min(p["length"], 256) if p["dtype"] == "uint8" else p["length"]
    data = make_bincount_input(p["n"], np.dtype(p["dtype"]), bincount_case(length, p["skew"]), rng)
    minlength = p.get("minlength", 0)
    got = to_numpy(pyscan.bincount(upload(data) if p["gpu"] else data, minlength=minlength))
    want = np.bincount(data, minlength=minlength)
    diff = first_difference(got, want) or ("" if got.dtype == want.dtype else f"dtype {got.dtype}, NumPy's "
                                                                                  f"{want.dtype}")
    return ("mismatch", diff) if diff else ("ok", "")


BINCOUNT = Pattern(
    name="bincount", registry=None,
    bench_cases=tuple((dtype, bincount_case(length, s)) for dtype in ("int32", "int64") for length in BINS
                      for s in (0, 100)),
    sizes=SIZES, make_input=make_bincount_input,
    reference=lambda host, op, units: np.bincount(host, minlength=parse_bincount_case(op)[0]),
    same=_same, reads_only=True, inputs_depend_on_op=True,
    public_name="pyscan.bincount", public_call=bincount_public_call,
    check_cases=bincount_check_cases, auto_cases=lambda: [], run_case=bincount_run_case,
)
