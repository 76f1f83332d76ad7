"""Every dtype x operator along axes: NumPy's answers and the bounds that tests/unit/test_axis.py (the models) and
tests/gpu/test_axis_gpu.py (the kernels) share.

Integers, bool, max/min and the bitwise and logical operators must equal NumPy's ufunc in the result dtype
(np.add.accumulate / .reduce of x converted to NumPy's accumulator, which wraps as the kernels do; NaN propagates
through max/min).  Float add within (depth + 3) * eps(compute) * sum|x| along the axis; float mul within
(n + 3) * eps(compute) * |exact| (every rounding of the product tree scales the result); plus one rounding to the
result dtype where it is narrower than the compute type (float16: eps16 / 2 * |exact|), as dtype_checks.check."""

import math

import numpy as np
from dtype_checks import make

from pyscan.types import Types, numpy_ufunc, to_value

# extents 0, 1, 31, 32, 33 and primes; 2-D, 3-D and 4-D
SHAPES = [(0,), (1,), (31,), (32,), (33,), (2, 3), (1, 32), (32, 1), (31, 33), (5, 0), (0, 5), (3, 257), (257, 3),
          (2, 33, 31), (7, 1, 13), (2, 0, 3), (3, 2, 5, 7), (1, 1, 1, 2)]


def data(rng, shape, dtype, op):
    return np.asarray(make(rng, math.prod(shape), dtype, op)).reshape(shape)


def _values(x, types):
    return to_value(x, types.value)


def _exact_float(x, types, op, axis, keepdims, scan):
    """The exact (float64) answer for float add / mul, and its magnitude: sum |x| along the axis."""
    v = _values(x, types).astype(np.float64)
    f = np.add if op == "add" else np.multiply
    if scan:
        return f.accumulate(v, axis=axis), np.add.accumulate(np.abs(v), axis=axis)
    return (f.reduce(v, axis=axis, keepdims=keepdims, initial=0.0 if op == "add" else 1.0),
            np.add.reduce(np.abs(v), axis=axis, keepdims=keepdims))


def reduce_expected(x, op, axis, keepdims=False, dtype=None):
    """NumPy's reduction of x over axis in the result dtype (exact operators), or None where it is a float sum or
    product (checked against a bound); ValueError where NumPy raises (max/min of an empty axis)."""
    types = Types.of(x.dtype, op, dtype)
    if types.value.kind == "f" and op in ("add", "mul"):
        return None
    v = _values(x, types)
    with np.errstate(over="ignore"):
        return numpy_ufunc(op).reduce(v, axis=axis, keepdims=keepdims, dtype=None if op in (
            "logical_and", "logical_or") else types.value)


def scan_expected(x, op, axis, dtype=None):
    types = Types.of(x.dtype, op, dtype)
    if types.value.kind == "f" and op in ("add", "mul"):
        return None
    with np.errstate(over="ignore"):
        return numpy_ufunc(op).accumulate(_values(x, types), axis=axis)


def check_reduce(got, x, op, axis, keepdims, depth, dtype=None, what=""):
    types = Types.of(x.dtype, op, dtype)
    got = np.asarray(got)
    axes = tuple(range(x.ndim)) if axis is None else axis
    expected = reduce_expected(x, op, axes, keepdims, dtype)
    if expected is not None:
        expected = np.asarray(expected)
        assert got.shape == expected.shape and got.dtype == types.value, (what, got.shape, got.dtype)
        np.testing.assert_array_equal(got, expected.astype(types.value), err_msg=what)
        return
    exact, magnitude = _exact_float(x, types, op, axes, keepdims, scan=False)
    assert got.shape == exact.shape and got.dtype == types.value, (what, got.shape, got.dtype)
    n = math.prod(x.shape[a] for a in (axes if isinstance(axes, tuple) else (axes,)))
    _within(got, exact, magnitude, types, op, depth, n, what)


def check_scan(got, x, op, axis, depth, dtype=None, what=""):
    types = Types.of(x.dtype, op, dtype)
    got = np.asarray(got)
    assert got.shape == x.shape and got.dtype == types.value, (what, got.shape, got.dtype)
    expected = scan_expected(x, op, axis, dtype)
    if expected is not None:
        np.testing.assert_array_equal(got, np.asarray(expected).astype(types.value), err_msg=what)
        return
    exact, magnitude = _exact_float(x, types, op, axis, False, scan=True)
    _within(got, exact, magnitude, types, op, depth, x.shape[axis] if x.ndim else 1, what)


def _within(got, exact, magnitude, types, op, depth, n, what):
    eps_c = np.finfo(types.compute).eps
    if op == "add":
        tol = (depth + 3) * eps_c * magnitude
    else:
        tol = (n + 3) * eps_c * np.abs(exact)
    if types.value != types.compute:
        tol = tol + np.finfo(types.value).eps / 2 * np.abs(exact) + float(np.finfo(types.value).smallest_subnormal)
    with np.errstate(invalid="ignore"):
        err = np.abs(got.astype(np.float64) - exact)
    bad = ~(err <= tol + np.finfo(types.compute).tiny) & ~(np.isnan(exact) & np.isnan(got.astype(np.float64)))
    bad &= ~(np.isinf(exact) & (got.astype(np.float64) == exact))
    assert not bad.any(), (what, np.argwhere(bad)[:5], got[bad][:5] if got.ndim else got, exact[bad][:5]
                           if np.ndim(exact) else exact)
