"""Scans and reductions along an axis of a 2-D array (docs/axis.md): the bench times pyscan.scan(x, axis=a, dtype=R)
beside torch.cumsum(t, a, dtype=R) and cupy.cumsum(c, axis=a, dtype=R), and pyscan.reduce(x, axis=a, dtype=R) beside
torch.sum(t, a, dtype=R) and cupy.sum(c, axis=a, dtype=R) -- the calls pyscan_tools/lab/axis_probe.py times by hand
-- on shapes where the axis is long or short and the other extent wide or narrow, along axis 0 and axis 1.

A case is (input dtype, op), op naming the call's keywords: "axis=0 dtype=int32".  Every library is asked for the
same result dtype R (like for like): the input's, except bool and uint8 scans, which go into int64 (NumPy's
accumulator rule, the bytes a user of np.cumsum gets).  Each shape is a size of its own (sizes_grow=False): a row's
time at one shape says nothing of the next, so no time is predicted and no refusal or failure carries over.

Baselines: a scan reads its input and writes its result once, so its baseline is the mean time of a device copy of
the input's bytes and one of the result's (`copies`); a reduction reads its input once: half a device copy of the
input's bytes (reads_only).  x_copy is baseline / time in both; the targets and the table give time / baseline.

Data: (r + c) % 7 - 3 at row r, column c (uint8: (r + c) % 7; bool: (r + c) % 3 == 0).  Along either axis the
values cycle through -3 .. 3, which sum to 0, whatever the shape, so every run of consecutive elements along an axis
sums to an integer in [-6, 6], exact in float16: a scan or a reduction whose partial sums are sums of runs (in order,
by blocks of neighbours, by a tree of neighbouring pieces), in float16 or in a wider accumulator, gives NumPy's
result exactly, so results are compared exactly, dtype included (no tolerance).  They are checked at every size: the
shapes hold 2^24 elements, over the 1-D patterns' limit.
"""

from __future__ import annotations

import numpy as np

from . import Pattern, case, first_difference
from ._arrays import kind_problem, returning, to_numpy, upload

SHAPES = ((4096, 4096), (2**20, 16), (16, 2**20), (2**23, 2), (64, 65536))
SIZES = {"default": list(SHAPES), "full": list(SHAPES),
         "quick": [(4096, 4096), (2**23, 2), (16, 2**20)],  # square, the tallest and narrowest, the widest and shortest
         "small": [(64, 48), (1000, 3), (5, 1000)]}
WIDENED = {"bool": "int64", "uint8": "int64"}  # scans: NumPy's accumulator rule (np.cumsum of bool gives int64)


def case_op(axis: int, result: str) -> str:
    return f"axis={axis} dtype={result}"


def parse_case(op: str) -> tuple:
    """(axis, result dtype) of a case's op, "axis=0 dtype=int32" -> (0, dtype('int32'))."""
    words = dict(word.split("=") for word in op.split())
    return int(words["axis"]), np.dtype(words["dtype"])


def cases(dtypes, widened: dict) -> tuple:
    return tuple((dtype, case_op(axis, widened.get(dtype, dtype))) for dtype in dtypes for axis in (0, 1))


def cycles(shape, dtype) -> np.ndarray:
    """(sum of the indices) % 7 - 3 for any number of axes (bool: % 3 == 0; uint8: % 7): along every axis the values
    cycle through -3 .. 3, so every run of consecutive elements along an axis sums to an integer in [-6, 6]."""
    diagonal = sum(np.arange(n, dtype=np.int32).reshape([-1 if a == k else 1 for a in range(len(shape))])
                   for k, n in enumerate(shape))
    if dtype == "bool":
        return diagonal % 3 == 0
    if dtype == "uint8":
        return (diagonal % 7).astype(np.uint8)
    return (diagonal % 7 - 3).astype(dtype)


def make_input(size, dtype, op, rng) -> np.ndarray:
    """The data of the module's docstring (cycles of the (h, w) shape)."""
    return cycles(size, dtype)


def scan_reference(host, op, units):
    axis, result = parse_case(op)
    return np.cumsum(host, axis=axis, dtype=result)


def reduce_reference(host, op, units):
    axis, result = parse_case(op)
    return np.sum(host, axis=axis, dtype=result)


def _same(got, expected) -> bool:
    return got.dtype == expected.dtype and got.shape == expected.shape and np.array_equal(got, expected)


def _calling(function: str):
    """pyscan.<function>(x, axis=a, dtype=R) as a user writes it (algorithm= only where one is named)."""
    def public_call(pyscan, x, op, algorithm):
        fn = getattr(pyscan, function)
        axis, result = parse_case(op)
        if algorithm == "auto":
            return returning(lambda: fn(x, axis=axis, dtype=result))
        return returning(lambda: fn(x, axis=axis, dtype=result, algorithm=algorithm))
    return public_call


def scan_copies(host, op) -> tuple:
    """The bytes a scan reads and writes (once if they are the same): a copy of each, their mean time the baseline."""
    _, result = parse_case(op)
    return tuple(dict.fromkeys((host.nbytes, host.size * result.itemsize)))


# -- check: every axis of 2-D to 4-D shapes, so that `python -m pyscan check --sanitize` runs the column and the
# row kernels (kernels/scan/axis_columns.cu and decoupled_lookback.cu's rows build, kernels/reduction/axis_*.cu),
# on arrays 16-byte aligned and one element off (the unaligned builds).  The data are cycles along every axis, so
# float results are exact and compared exactly.  (5, 9000) along axis 1 and (4000, 40) along axis 0 take several row
# segments or chunks, whose partials the reductions' last blocks fold (their tickets under racecheck too).

CHECK_SHAPES = ((1, 1), (3000, 2), (700, 16), (600, 40), (64, 300), (5, 9000), (33, 257), (2, 3, 1025),
                (4, 1, 31, 5), (4000, 40))
QUICK_SHAPES = ((3000, 2), (700, 16), (5, 9000), (2, 3, 1025), (4000, 40))
CHECK_DTYPES = ("int32", "float16", "bool", "uint8", "int64", "float64")  # add: int32, bool, uint8 into int64
QUICK_DTYPES = ("int32", "float16", "bool")


def device_view(host: np.ndarray, offset: int):
    """host on the device (a GPUArray) starting `offset` elements past an aligned allocation's start."""
    return upload(np.concatenate([np.zeros(offset, host.dtype), host.ravel()]))[offset:].reshape(host.shape)


def _check_cases(pattern: str, ops: tuple):
    def check_cases(name: str, quick: bool) -> list:
        return [case(pattern, "auto", dtype=dtype, op=op, shape=shape, offset=offset)
                for dtype in (QUICK_DTYPES if quick else CHECK_DTYPES) for op in ops
                for shape in (QUICK_SHAPES if quick else CHECK_SHAPES) for offset in (0, 1)]
    return check_cases


def _run_case(function: str):
    def run_case(c, rng) -> tuple:
        import pyscan
        from pyscan.reductions.reference import reference as reduce_ref
        from pyscan.scans.reference import reference as scan_ref

        p = c.p
        host = cycles(p["shape"], p["dtype"])
        x = device_view(host, p["offset"])
        op, exclusive = p["op"].split()[0], p["op"].endswith("exclusive")
        for axis in range(host.ndim):
            if function == "scan":
                out = pyscan.scan(x, axis=axis, op=op, exclusive=exclusive)
                want = np.apply_along_axis(scan_ref, axis, host, op, exclusive)
            else:
                out = pyscan.reduce(x, axis=axis, op=op)
                want = np.apply_along_axis(reduce_ref, axis, host, op)
            problem = kind_problem(out, True)
            if problem:
                return "mismatch", problem
            got = to_numpy(out)
            diff = first_difference(got, want) or ("" if got.dtype == want.dtype else
                                                   f"dtype {got.dtype}, expected {want.dtype}")
            if diff:
                return "mismatch", f"axis={axis}: {diff}"
        if not np.array_equal(to_numpy(x), host):
            return "mismatch", "the input was modified"
        return "ok", ""
    return run_case


AXIS_SCAN = Pattern(
    name="axis_scan", registry=None,
    bench_cases=cases(("int32", "float32", "float16", "bool", "uint8"), WIDENED),
    sizes=SIZES, make_input=make_input, reference=scan_reference, same=_same,
    public_name="pyscan.scan(axis=)", public_call=_calling("scan"),
    lattice=True, sizes_grow=False, copies=scan_copies, check_max_cells=max(h * w for h, w in SHAPES),
    baseline_columns=True,
    check_cases=_check_cases("axis_scan", ("add", "add exclusive", "max")), auto_cases=lambda: [],
    run_case=_run_case("scan"),
)

AXIS_REDUCE = Pattern(
    name="axis_reduce", registry=None,
    bench_cases=cases(("int32", "float32", "float16"), {}),
    sizes=SIZES, make_input=make_input, reference=reduce_reference, same=_same, reads_only=True,
    public_name="pyscan.reduce(axis=)", public_call=_calling("reduce"),
    lattice=True, sizes_grow=False, copies=lambda host, op: (host.nbytes,), check_max_cells=max(h * w for h, w in SHAPES),
    baseline_columns=True,
    check_cases=_check_cases("axis_reduce", ("add", "max")), auto_cases=lambda: [], run_case=_run_case("reduce"),
)
