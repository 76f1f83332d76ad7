"""Reduction (PMPP ch. 10): the bench times pyscan.reduce (a device result for a device input) against the
libraries' sum/max/min for every dtype and operator; the check runs every algorithm as scan's check does."""

from __future__ import annotations

import numpy as np

from pyscan.reductions.reference import reference as reduce_reference
from pyscan.types import result_dtype

from . import Pattern, case, first_difference
from ._arrays import calling, to_numpy, upload
from .scan import DTYPES, OPS, QUICK_PLAN, SIZES, exact_data, small_nonzero_ints


def check_cases(name: str, quick: bool) -> list:
    if quick:
        cases = [case("reduce", name, dtype=d, op=o, n=n) for d, o, _, sizes in QUICK_PLAN for n in sizes]
        return cases + [case("reduce", name, dtype="int32", op="add", n=4099, gpu=True)]
    cases = []
    for dtype in DTYPES:
        for op in OPS:
            cases += [case("reduce", name, dtype=dtype, op=op, n=n) for n in (1, 2, 31, 33, 1025, 4099, 65537)]
            cases.append(case("reduce", name, dtype=dtype, op=op, n=4099, gpu=True))
    return cases


def auto_cases() -> list:
    # and the paths beyond the algorithms' defaults: a map in the loads and initial= (combine_initial.cu), with a
    # custom operator (OP_EXPR) and with a named one
    return [case("reduce", "auto", dtype="float32", op="add", n=4099),
            case("reduce", "auto", dtype="int32", op="max(a, b)", identity=0, map="abs(x)", initial=5, n=65537),
            case("reduce", "auto", dtype="float64", op="add", map="x < 0", dtype_arg="int64", initial=1, n=4099)]


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    x = exact_data(rng, p["n"], p["dtype"], p["op"])
    keep = x.copy()
    on_device = bool(p.get("gpu"))
    arg = upload(x) if on_device else x
    if "map" in p or "initial" in p or "identity" in p:
        return _run_extended(pyscan, p, x, keep, arg, c.algorithm)
    out = pyscan.reduce(arg, algorithm=c.algorithm, op=p["op"])
    want = result_dtype(x.dtype, p["op"])  # NumPy's: int64 for int32 add
    if not on_device and not isinstance(out, np.generic):
        return "mismatch", f"NumPy in: expected a NumPy scalar of dtype {want}, got {type(out).__name__} {out!r}"
    got = to_numpy(out)
    if got.dtype != want or got.size != 1:
        return "mismatch", f"expected one value of dtype {want}, got {got.size} of dtype {got.dtype}"
    if not np.array_equal(to_numpy(arg), keep):
        return "mismatch", "the input was modified"
    diff = first_difference(got.reshape(()), reduce_reference(x, p["op"]))
    return ("mismatch", diff) if diff else ("ok", "")


def _run_extended(pyscan, p, x, keep, arg, algorithm) -> tuple:
    """A case with map=, identity= (a custom operator) or initial=: against NumPy on the mapped values (only the
    maps and operators of auto_cases: abs(x), x < 0; max(a, b), add)."""
    dtype = np.dtype(p["dtype_arg"]) if "dtype_arg" in p else None
    out = pyscan.reduce(arg, algorithm=algorithm, op=p["op"], identity=p.get("identity"), map=p.get("map"),
                        initial=p.get("initial"), dtype=dtype)
    mapped = {"abs(x)": np.abs, "x < 0": lambda v: v < 0, None: lambda v: v}[p.get("map")](x)
    if p["op"] == "max(a, b)":
        value = dtype or x.dtype  # a custom operator's: x's dtype
        expected = max(np.max(mapped.astype(value)), value.type(p.get("initial", np.iinfo(value).min)))
    else:
        value = dtype or result_dtype(x.dtype, p["op"])
        expected = np.sum(mapped.astype(value), dtype=value) + value.type(p.get("initial", 0))
    got = to_numpy(out)
    if got.dtype != value or got.size != 1:
        return "mismatch", f"expected one value of dtype {value}, got {got.size} of dtype {got.dtype}"
    if not np.array_equal(to_numpy(arg), keep):
        return "mismatch", "the input was modified"
    diff = first_difference(got.reshape(()), value.type(expected))
    return ("mismatch", diff) if diff else ("ok", "")


def _same(got, expected) -> bool:
    return got.size == 1 and got.reshape(-1)[0] == expected


def driver_call(algorithm, x, op):
    """The registered launch alone: the kernels into a one-element device result of x's dtype, as the peers' rows,
    nothing copied back."""
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    return lambda: algorithm.launch(x, op=op, call=call, dtype=x.dtype)


# a reduction reads its input once and writes one value: reads_only
PATTERN = Pattern(name="reduce", registry="reduce", reads_only=True, make_input=small_nonzero_ints, sizes=SIZES,
                  bench_cases=tuple((dtype, op) for dtype in DTYPES for op in OPS),
                  reference=lambda host, op, units: reduce_reference(host, op), same=_same,
                  public_name="pyscan.reduce", public_call=calling("reduce"), driver_call=driver_call,
                  check_cases=check_cases, auto_cases=auto_cases, run_case=run_case)
