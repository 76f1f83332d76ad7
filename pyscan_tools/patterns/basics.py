"""The Hands-On ch. 3 warm-up, scalar_multiply: checked (every dtype, NumPy and device input), not benchmarked."""

from __future__ import annotations

import numpy as np

from . import Pattern, case, first_difference
from ._arrays import kind_problem, to_numpy, upload
from .scan import DTYPES, exact_data


def check_cases(name: str, quick: bool) -> list:
    return [case("basics", "scalar_multiply", dtype=dtype, n=n, gpu=on_device)
            for dtype in (("float32", "int64") if quick else DTYPES) for n in (1, 1025) for on_device in (False, True)]


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    x = exact_data(rng, p["n"], p["dtype"], "add")
    keep = x.copy()
    arg = upload(x) if p["gpu"] else x
    a = 3 if x.dtype.kind == "i" else -2.5
    out = pyscan.scalar_multiply(arg, a)
    problem = kind_problem(out, p["gpu"])
    if problem:
        return "mismatch", problem
    if not np.array_equal(to_numpy(arg), keep):
        return "mismatch", "the input was modified"
    diff = first_difference(to_numpy(out), (x * x.dtype.type(a)).astype(x.dtype))
    return ("mismatch", diff) if diff else ("ok", "")


PATTERN = Pattern(name="basics", registry=None, check_cases=check_cases, auto_cases=lambda: [], run_case=run_case)
