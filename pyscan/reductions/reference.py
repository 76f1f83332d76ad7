"""NumPy references for reductions, and the float error bound of the package docstring (for tests and demos).

    reference(x, op, dtype=None)   what pyscan.reduce must return, by NumPy's rules (pyscan.types.result_dtype):
                            np.sum, np.prod, np.max, np.min, the bitwise and logical ufuncs' reduce -- exact for
                            integers and for max/min
    exact_sum(x)            the float sum correctly rounded to a Python float (math.fsum)
    float_sum_error(x, r)   |r - exact sum| and the allowance depth * eps * sum|x_i| for a depth
"""

from __future__ import annotations

import math

import numpy as np

from ..scans.reference import reference as scan_reference
from ..types import check_op


def reference(x: np.ndarray, op: str, dtype=None):
    """The reduction NumPy gives, in the result dtype (pyscan.types.result_dtype): the last element of the
    sequential scan for integers, max/min and the bitwise and logical operators (exact in any order); np.sum /
    np.prod in the result dtype for floats.  Empty x: the identity (max/min: ValueError, as NumPy)."""
    check_op(op)
    x = np.asarray(x)
    if x.size == 0 and op in ("max", "min"):
        return np.max(x) if op == "max" else np.min(x)  # raises, as pyscan.reduce
    scanned = scan_reference(x, op, False, dtype)
    if x.size == 0:
        from ..types import Types, identity

        return identity(op, Types.of(x.dtype, op, dtype).value)
    if scanned.dtype.kind == "f" and op in ("add", "mul"):
        with np.errstate(over="ignore", invalid="ignore"):
            return (np.sum if op == "add" else np.prod)(x, dtype=scanned.dtype)
    return scanned[-1]


def exact_sum(x: np.ndarray) -> float:
    """The exact sum of the float array x, rounded once to a double (math.fsum; float32 converts exactly)."""
    return math.fsum(np.asarray(x, np.float64).tolist())


def sum_bound(x: np.ndarray, depth: int) -> float:
    """depth * eps * sum|x_i| (eps of x's dtype), plus the double rounding of the reference itself (2^-52 sum|x|)."""
    magnitude = math.fsum(np.abs(np.asarray(x, np.float64)).tolist())
    return (depth * float(np.finfo(x.dtype).eps) + 2.0**-52) * magnitude


def check_result(x: np.ndarray, op: str, result, depth: int | None = None) -> tuple[bool, float, float]:
    """(ok, error, allowance): ints and max/min must equal the reference exactly (NaN: both NaN); a float sum
    must lie within sum_bound(x, depth) of the exact sum (NaN or inf in x: the result must be NaN/inf likewise)."""
    expected = reference(x, op)
    if x.dtype.kind == "f" and np.isnan(expected):
        return bool(np.isnan(result)), 0.0, 0.0
    if x.dtype.kind != "f" or op != "add" or not np.isfinite(expected):
        return bool(result == expected), 0.0 if result == expected else math.inf, 0.0
    if depth is None:
        raise ValueError("a float sum needs the algorithm's error depth")
    error = abs(float(result) - exact_sum(x))
    allowance = sum_bound(x, depth)
    return error <= allowance, error, allowance
