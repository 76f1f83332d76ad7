"""dtype x operator test data and checks that tests/unit/test_dtypes.py and tests/gpu/test_dtypes_gpu.py share.

check(): integers, bool, max/min and the bitwise and logical operators exactly NumPy's (pyscan.scans.reference);
float add within depth * eps(compute) * sum|x_j|, float mul within n * eps(compute) * |exact| (every rounding of
the product tree scales the result), plus one rounding to the value dtype where it is narrower than the compute
type (float16: eps16 / 2 * |exact|)."""

import numpy as np

from pyscan.scans.reference import reference as scan_reference
from pyscan.types import OPERATOR_NAMES, Types

DTYPES = (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
          np.float32, np.float64)
SIZES = (0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 4099, 8209)
BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")


def valid(dtype, op):
    return not (op in BITWISE and np.dtype(dtype).kind == "f")


CASES = [(d, op) for d in DTYPES for op in OPERATOR_NAMES if valid(d, op)]


def make(rng, n, dtype, op):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < (0.9 if op in ("mul", "logical_and", "bitwise_and", "min") else 0.3)
    if dtype.kind in "iu":
        if op == "mul":  # mostly 1, a few -1 / 2 / 3: products stay exact or wrap the same way in NumPy
            return rng.choice(np.array([1, 1, 1, 1, 1, 2, 3] + ([-1] if dtype.kind == "i" else []), dtype), n)
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if op == "mul":
        return rng.uniform(0.97, 1.03, n).astype(dtype)
    x = (rng.standard_normal(n) * 10).astype(dtype)
    if op in ("max", "min") and n >= 8:
        x[rng.integers(0, n, 2)] = [np.inf, -np.inf]
        x[rng.integers(3 * n // 4, n)] = np.nan
    return x


def check(out, x, op, exclusive, depth, dtype=None, what=""):
    types = Types.of(x.dtype, op, dtype)
    expected = scan_reference(x, op, exclusive, dtype)
    assert out.dtype == types.value == expected.dtype, (what, out.dtype, expected.dtype)
    if types.value.kind != "f" or op not in ("add", "mul"):
        np.testing.assert_array_equal(out, expected, err_msg=what)
        return
    exact = scan_reference(x.astype(types.value).astype(np.float64), op, exclusive)
    eps_c = np.finfo(types.compute).eps
    if op == "add":
        mag = np.cumsum(np.abs(x.astype(types.value).astype(np.float64)))
        if exclusive:
            mag = np.concatenate([[0.0], mag[:-1]]) if mag.size else mag
        tol = (depth + 3 + x.size * 2.0**-52 / eps_c) * eps_c * mag
    else:  # mul: every rounding of the product tree (not only those on one path) is a factor (1 + d) of the result
        tol = (x.size + 3) * eps_c * np.abs(exact)
    if types.value != types.compute:  # the one rounding to float16 on the store
        tol = tol + np.finfo(types.value).eps / 2 * np.abs(exact) + np.finfo(types.value).smallest_subnormal
    err = np.abs(out.astype(np.float64) - exact)
    assert np.all(err <= tol), (what, np.flatnonzero(err > tol)[:5])
