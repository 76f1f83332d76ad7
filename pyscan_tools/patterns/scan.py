"""Prefix scan (PMPP ch. 11): the bench times pyscan.scan against the libraries' cumsum; the check runs every
algorithm on sizes around the block and section edges, every dtype and operator, inclusive and exclusive."""

from __future__ import annotations

import numpy as np

from pyscan.scans.reference import reference as scan_reference
from pyscan.types import numpy_ufunc, operator, result_dtype

from . import Pattern, case, first_difference
from ._arrays import calling, kind_problem, to_numpy, upload

DTYPES = ("int32", "int64", "float32", "float64")
OPS = ("add", "max", "min")
POWERS_OF_4 = [2**k for k in range(10, 29, 2)]
SIZES = {"default": POWERS_OF_4, "full": [2**k for k in range(10, 29)], "quick": [2**10, 2**16, 2**22, 2**28],
         "small": [2**10, 2**14 + 7]}


def small_nonzero_ints(size, dtype, op, rng) -> np.ndarray:
    """Nonzero integers in [-4, 4] as the dtype: every partial sum is exact, even in float32 (below 2^24 in
    magnitude for any length the bench runs), and nothing overflows; random, never all zeros."""
    v = rng.integers(-4, 4, size=int(size), dtype=np.int8)
    v[v >= 0] += 1
    return v.astype(dtype)


def exact_data(rng, n: int, dtype, op: str) -> np.ndarray:
    """The check's data: integers over the dtype's whole range (int64 add wraps, as np.cumsum does; int32 add is
    exact in NumPy's int64); float
    add on small integers (every partial sum exact in any order, so a difference is an indexing bug, not
    rounding); float max/min on normal values (exact anyway)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if op == "add":
        return rng.integers(-8, 9, n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


# every (dtype, op) once, inclusive and exclusive, and the odd sizes on the combination whose result dtype is not
# its input's (int32 add: int64)
QUICK_PLAN = [("int32", "add", False, (1, 31, 1025, 4099, 65537)), ("int32", "add", True, (2, 33, 4099)),
              ("int32", "max", True, (1025,)), ("int32", "min", False, (33,)),
              ("int64", "add", True, (1025,)), ("int64", "max", False, (4099,)), ("int64", "min", True, (31,)),
              ("float32", "add", False, (4099,)), ("float32", "max", True, (33,)), ("float32", "min", False, (1025,)),
              ("float64", "add", True, (33,)), ("float64", "max", False, (1025,)), ("float64", "min", True, (4099,))]


def check_cases(name: str, quick: bool) -> list:
    if quick:
        cases = [case("scan", name, dtype=d, op=o, n=n, exclusive=e) for d, o, e, sizes in QUICK_PLAN for n in sizes]
        return cases + [case("scan", name, dtype="int32", op="add", n=4099, exclusive=False, gpu=True),
                        case("scan", name, dtype="float32", op="add", n=0, exclusive=False)]
    cases = []
    for dtype in DTYPES:
        for op in OPS:
            for exclusive in (False, True):
                cases += [case("scan", name, dtype=dtype, op=op, n=n, exclusive=exclusive)
                          for n in (0, 1, 2, 31, 33, 1025, 4099, 65537)]
            cases.append(case("scan", name, dtype=dtype, op=op, n=4099, exclusive=True, gpu=True))
    return cases


def auto_cases() -> list:
    # and pyscan.scan's own kernels beyond the algorithms': a custom operator (OP_EXPR) started from initial=
    # (kernels/scan/combine_initial.cu)
    return [case("scan", "auto", dtype="float32", op="add", n=4099, exclusive=True),
            case("scan", "auto", dtype="int32", op="max(a, b)", identity=-2**31, initial=7, n=65537, exclusive=True)]


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    x = exact_data(rng, p["n"], p["dtype"], p["op"])
    keep = x.copy()
    arg = upload(x) if p.get("gpu") else x
    more = {k: p[k] for k in ("identity", "initial") if k in p}
    out = pyscan.scan(arg, algorithm=c.algorithm, exclusive=p["exclusive"], op=p["op"], **more)
    problem = kind_problem(out, bool(p.get("gpu")))
    if problem:
        return "mismatch", problem
    got = to_numpy(out)
    op = operator(p["op"], p.get("identity"))  # a name, or a custom operator (a C expression)
    want = result_dtype(x.dtype, op)  # NumPy's: int64 for int32 add; x's for an expression
    if got.dtype != want or got.shape != x.shape:
        return "mismatch", (f"result has dtype {got.dtype} shape {got.shape}, expected dtype {want} (input "
                            f"{x.dtype}) shape {x.shape}")
    if not np.array_equal(to_numpy(arg), keep):
        return "mismatch", "the input was modified"
    expected = scan_reference(x, op, p["exclusive"])
    if "initial" in p and expected.size:  # every output from v: v op y[k]; an exclusive scan's first is v
        expected = numpy_ufunc(op)(want.type(p["initial"]), expected).astype(want)
        if p["exclusive"]:
            expected[0] = p["initial"]
    diff = first_difference(got, expected)
    return ("mismatch", diff) if diff else ("ok", "")


def _same(got, expected) -> bool:
    return got.shape == expected.shape and np.array_equal(got, expected)


def driver_call(algorithm, x, op):
    """The registered driver alone, into a preallocated output of x's dtype, as the peers' rows (no validation, no
    allocation, no result object)."""
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    out = call.empty(x.shape, x.dtype)
    return lambda: algorithm.driver(x, out, op=op, exclusive=False, call=call)


PATTERN = Pattern(
    "scan", "scan", tuple((dtype, "add") for dtype in DTYPES), SIZES, small_nonzero_ints,
    reference=lambda host, op, units: scan_reference(host, op), same=_same,
    public_name="pyscan.scan", public_call=calling("scan"), driver_call=driver_call,
    check_cases=check_cases, auto_cases=auto_cases, run_case=run_case)
