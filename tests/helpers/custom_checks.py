"""References for custom operators (op= a C expression, identity=), map= and initial=, shared by
tests/unit/test_custom_operators.py (the step-models) and tests/gpu/test_custom_operators_gpu.py (the kernels).

The references do not use pyscan's expression evaluator: each operator is a plain Python function on Python
numbers, folded left to right one element at a time (np.frompyfunc's way, without its object arrays), every
combine's value converted to the result dtype as the kernels' op_combine converts it (integers wrap, bool is
nonzero, floats round to the dtype).  Integers, bool and max are compared exactly; float sums and products within
the algorithm's rounding bound (every grouping of an associative float operator is a tree of roundings).
"""

import math

import numpy as np

from pyscan.types import result_dtype

# name -> (C expression, identity for a result dtype, the combine on Python numbers)
OPS = {
    "add": ("a + b", lambda d: False if d.kind == "b" else 0, lambda a, b: a + b),
    "max": ("max(a, b)", lambda d: (False if d.kind == "b" else -math.inf if d.kind == "f" else int(np.iinfo(d).min)),
            lambda a, b: b if isinstance(a, float) and math.isnan(a) else a if isinstance(b, float) and math.isnan(b)
            else max(a, b)),  # CUDA's max of floats is fmaxf: a NaN operand is ignored
    "mul": ("a * b", lambda d: True if d.kind == "b" else 1, lambda a, b: a * b),
}
# The same operators by name, for checking that an expression equal to a named op gives the named op's results.
NAMED = {"add": "add", "max": "max", "mul": "mul"}

DTYPES = (np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64, np.float16, np.float32, np.float64)


# An associative operator that is not commutative: affine maps v -> m v + c (mod 2^32) packed as (m << 32) | c in
# a uint64, composed left to right -- the operator of a linear recurrence y[k] = m[k] y[k-1] + c[k].  Its identity
# is the map v -> v, (1 << 32) | 0.  The scans keep the combines in order and must reproduce the sequential
# result; the reductions other than `simple` pair elements out of order (commutative operators only).
AFFINE = ("(((a >> 32) * (b >> 32)) << 32) | (((a & 0xffffffffull) * (b >> 32) + (b & 0xffffffffull)) "
          "& 0xffffffffull)")
AFFINE_IDENTITY = 1 << 32
# The same on int64 (the axis kernels' dtypes), through unsigned casts: x.view(np.int64) of the same maps.
AFFINE_SIGNED = ("(long long)(((((unsigned long long)a >> 32) * ((unsigned long long)b >> 32)) << 32) | "
                 "((((unsigned long long)a & 0xffffffffull) * ((unsigned long long)b >> 32) + "
                 "((unsigned long long)b & 0xffffffffull)) & 0xffffffffull))")


def affine_reference(x: np.ndarray) -> np.ndarray:
    """The sequential scan of packed affine maps (np.frompyfunc's left fold on Python ints)."""
    def compose(p, q):
        return (((p >> 32) * (q >> 32) % 2**32) << 32) | (((p & 0xFFFFFFFF) * (q >> 32) + (q & 0xFFFFFFFF)) % 2**32)

    if x.size == 0:
        return x.copy()
    return np.frompyfunc(compose, 2, 1).accumulate(x.astype(object)).astype(np.uint64)


def affine_maps(rng, n) -> np.ndarray:
    m = rng.integers(0, 2**32, n, dtype=np.uint64)
    c = rng.integers(0, 2**32, n, dtype=np.uint64)
    return (m << np.uint64(32)) | c


def expression(name: str) -> str:
    return OPS[name][0]


def identity_for(name: str, value) -> object:
    return OPS[name][1](np.dtype(value))


def _caster(value: np.dtype):
    """A Python number -> the value the result dtype holds, as a Python number (bool as 0/1)."""
    if value.kind == "b":
        return lambda v: 1 if v else 0
    if value.kind in "iu":
        info = np.iinfo(value)
        lo, span = int(info.min), int(info.max) - int(info.min) + 1
        return lambda v: (int(v) - lo) % span + lo
    kind = value.type
    return lambda v: float(kind(v))


def make(rng, n, dtype, name):
    """Test data for operator `name`: the full range of integers for add and max (wrapping sums), mostly ones for
    mul; floats N(0, 10) for add and max (max: with infinities and a NaN, which max(a, b) ignores), 0.97 .. 1.03 for
    mul (products stay in range); bool mostly True for mul."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < (0.95 if name == "mul" else 0.3)
    if dtype.kind in "iu":
        if name == "mul":
            return rng.choice(np.array([1, 1, 1, 1, 1, 2, 3] + ([-1] if dtype.kind == "i" else []), dtype), n)
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    if name == "mul":
        return rng.uniform(0.97, 1.03, n).astype(dtype)
    x = (rng.standard_normal(n) * 10).astype(dtype)
    if name == "max" and n >= 8:
        x[rng.integers(0, n, 2)] = [np.inf, -np.inf]
        x[rng.integers(n // 2, n)] = np.nan
    return x


def reference_scan(x, name, value=None, exclusive=False, initial=None) -> np.ndarray:
    """The scan of x with operator `name` in the result dtype `value` (default: x's, a custom operator's rule), one
    combine at a time from the left, every combine converted to the dtype; exclusive: shifted right, the identity
    (or initial) first; initial: the scan starts from it."""
    x = np.asarray(x)
    value = x.dtype if value is None else np.dtype(value)
    cast, combine = _caster(value), OPS[name][2]
    with np.errstate(over="ignore", invalid="ignore"):
        values = [cast(v) for v in x.astype(value).tolist()]
        acc = cast(identity_for(name, value) if initial is None else initial)
    out = []
    with np.errstate(over="ignore", invalid="ignore"):
        for v in values:
            before = acc
            acc = v if (initial is None and not out and not exclusive) else cast(combine(acc, v))
            out.append(before if exclusive else acc)
    if exclusive and out and initial is None:
        out[0] = cast(identity_for(name, value))
    return np.array(out, dtype=np.float64 if value.kind == "f" else object).astype(value)


def reference_reduce(x, name, value=None, initial=None):
    """The reduction: the last element of reference_scan (initial, or the identity, for an empty x)."""
    value = np.asarray(x).dtype if value is None else np.dtype(value)
    scanned = reference_scan(x, name, value, False, initial)
    if scanned.size:
        return scanned[-1]
    return value.type(identity_for(name, value) if initial is None else initial)


def check_scan(out, x, name, exclusive, depth, value=None, initial=None, what=""):
    """out against reference_scan: exact for integers, bool and max; float add within (depth + 3) * eps(value) *
    sum_{j<=k} |x_j| (plus |initial|), float mul within (n + 3) * eps(value) * |exact| (every combine is rounded to
    the value dtype: a custom float16 sum rounds at every step)."""
    x = np.asarray(x)
    value = x.dtype if value is None else np.dtype(value)
    assert out.dtype == value, (what, out.dtype, value)
    expected = reference_scan(x, name, value, exclusive, initial)
    if value.kind != "f" or name == "max":
        np.testing.assert_array_equal(out, expected, err_msg=what)
        return
    wide = x.astype(value).astype(np.float64)
    start = 0.0 if initial is None else float(value.type(initial))
    if name == "add":
        exact = start + np.cumsum(wide)
        mag = abs(start) + np.cumsum(np.abs(wide))
    else:
        exact = (1.0 if initial is None else start) * np.cumprod(wide)
        mag = np.abs(exact) * (x.size + 3) / (depth + 3)
    if exclusive and x.size:
        first = start if initial is not None else (0.0 if name == "add" else 1.0)
        exact = np.concatenate([[first], exact[:-1]])
        mag = np.concatenate([[abs(first)], mag[:-1]])
    tol = (depth + 3) * np.finfo(value).eps * mag + np.finfo(value).smallest_subnormal
    err = np.abs(out.astype(np.float64) - exact)
    assert np.all(err <= tol), (what, np.flatnonzero(err > tol)[:5], err[err > tol][:5], tol[err > tol][:5])


def check_reduce(got, x, name, depth, value=None, initial=None, what=""):
    """A reduction against reference_reduce, with check_scan's tolerance for float add and mul."""
    x = np.asarray(x)
    value = x.dtype if value is None else np.dtype(value)
    got = np.asarray(got)
    assert got.dtype == value, (what, got.dtype, value)
    if value.kind != "f" or name == "max" or x.size == 0:
        want = reference_reduce(x, name, value, initial)
        assert got == want or (np.isnan(got) and np.isnan(want)), (what, got, want)
        return
    wide = x.astype(value).astype(np.float64)
    start = 0.0 if initial is None else float(value.type(initial))
    if name == "add":
        exact, tol = start + math.fsum(wide.tolist()), (depth + 3) * (abs(start) + float(np.sum(np.abs(wide))))
    else:
        exact = (1.0 if initial is None else start) * float(np.prod(wide))
        tol = (x.size + 3) * abs(exact)
    tol = tol * float(np.finfo(value).eps) + float(np.finfo(value).smallest_subnormal)
    assert abs(float(got) - exact) <= tol, (what, float(got), exact, tol)


def named_result(x_dtype, name):
    """NumPy's result dtype for the named operator (what op="add" gives, where the expression gives x's dtype)."""
    return result_dtype(np.dtype(x_dtype), NAMED[name])
