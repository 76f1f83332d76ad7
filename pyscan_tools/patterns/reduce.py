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
    return [case("reduce", "auto", dtype="float32", op="add", n=4099)]


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    x = exact_data(rng, p["n"], p["dtype"], p["op"])
    keep = x.copy()
    on_device = bool(p.get("gpu"))
    arg = upload(x) if on_device else x
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
