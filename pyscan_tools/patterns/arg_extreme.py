"""pyscan.argmax / pyscan.argmin (kernels/reduction/arg_extreme.cu): checked against np.argmax / np.argmin (every
kind of dtype, NaN and ties, the last axis, another axis and the whole array, NumPy and device input), so the check
and its compute-sanitizer run load the kernel; not benchmarked."""

from __future__ import annotations

import numpy as np

from . import Pattern, case, first_difference
from ._arrays import kind_problem, to_numpy, upload

DTYPES = ("bool", "int8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64")
SHAPES = ((1,), (70001,), (33, 257), (4099, 5), (2, 3, 1025))


def check_cases(name: str, quick: bool) -> list:
    return [case("argmax", "auto", dtype=dtype, shape=shape, largest=largest, gpu=on_device)
            for dtype in (("int8", "float32") if quick else DTYPES) for shape in SHAPES
            for largest in (True, False) for on_device in (False, True)]


def make(rng, shape, dtype) -> np.ndarray:
    """Few distinct values (ties across blocks and passes); floats with a NaN in the second half."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    x = rng.integers(0, 5, n).astype(dtype)
    if dtype.kind == "f" and n > 64:
        x[rng.integers(n // 2, n)] = np.nan
    return x.reshape(shape)


def run_case(c, rng) -> tuple:
    import pyscan

    p = c.p
    x = make(rng, p["shape"], p["dtype"])
    arg = upload(x) if p["gpu"] else x
    public, reference = (pyscan.argmax, np.argmax) if p["largest"] else (pyscan.argmin, np.argmin)
    for axis in (None,) + tuple(range(x.ndim)):
        out = public(arg, axis=axis)
        problem = kind_problem(out, p["gpu"])
        if problem:
            return "mismatch", problem
        got, want = to_numpy(out), np.asarray(reference(x, axis=axis))
        diff = first_difference(got, want) or ("" if got.dtype == np.int64 else f"dtype {got.dtype}, not int64")
        if diff:
            return "mismatch", f"axis={axis}: {diff}"
    return "ok", ""


PATTERN = Pattern(name="argmax", registry=None, check_cases=check_cases, auto_cases=lambda: [], run_case=run_case)
