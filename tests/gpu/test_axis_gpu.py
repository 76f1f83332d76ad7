"""N-d arrays and axis= on the GPU (docs/axis.md), against NumPy: every axis of 2-D, 3-D and 4-D shapes (the
issue's table shapes scaled down, extents 0, 1, 2, 31, 32, 33 and primes), NumPy, CuPy and torch input (each skips
where its library is absent), non-contiguous views, out=, keepdims, tuple axes.  Integers and max/min exactly; float
add within error_depth * eps * sum|x| along the axis (the axis kernels' bounds, pyscan/scans/axis.py and
pyscan/reductions/axis.py; reductions with the device's SM count).  Results in NumPy's dtype: int32 add along an
axis is int64 (np.cumsum / np.sum), accumulated in int64 by the kernels.  About 500 cases."""

import math

import numpy as np
import pytest

import pyscan
from pyscan import axes
from pyscan.reductions import axis as raxis
from pyscan.runtime import driver
from pyscan.scans import axis as saxis
from pyscan.types import identity, result_dtype, ufunc

SHAPES_2D = [(2 ** 12, 16), (16, 2 ** 12), (2 ** 15, 2), (2, 2 ** 15), (64, 4096), (4096, 64), (1, 33), (33, 1),
             (31, 32), (0, 7), (7, 0), (257, 4099), (3, 2 ** 20 + 3)]
SHAPES_ND = [(2, 3, 5), (5, 1, 31), (32, 33, 2), (3, 4, 5, 7), (2, 1, 1, 64), (6, 0, 3), (13, 17, 19)]
DTYPES = (np.int32, np.int64, np.float32, np.float64)


def _input(rng, shape, dtype, op):
    n = math.prod(shape)
    if np.dtype(dtype).kind == "i":
        x = rng.integers(-1000, 1000, n) if op == "add" else rng.integers(-2**31, 2**31 - 1, n)
    else:
        x = rng.standard_normal(n) * 100
    return x.astype(dtype).reshape(shape)


def _scan_ref(x, axis, op, exclusive):
    """NumPy's scan in NumPy's result dtype (np.cumsum of int32 is int64)."""
    inclusive = np.cumsum(x, axis=axis) if op == "add" else ufunc(op).accumulate(x, axis=axis)
    if not exclusive:
        return inclusive
    out = np.empty_like(inclusive)
    first, rest, before = ([slice(None)] * x.ndim for _ in range(3))
    first[axis], rest[axis], before[axis] = slice(0, 1), slice(1, None), slice(None, -1)
    out[tuple(first)] = identity(op, inclusive.dtype)
    out[tuple(rest)] = inclusive[tuple(before)]
    return out


def _check(got, expected, x, axis, op, depth, keepdims=True):
    got = np.asarray(got)
    assert got.shape == np.shape(expected) and got.dtype == result_dtype(x.dtype, op)  # int32 add: int64
    if op != "add" or x.dtype.kind == "i":
        np.testing.assert_array_equal(got, expected)
        return
    exact = np.asarray(expected, np.float64)
    bound = depth * np.finfo(x.dtype).eps * np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= bound + np.finfo(x.dtype).tiny)


def _to(kind, host):
    if kind == "numpy":
        return host
    lib = pytest.importorskip(kind)
    if kind == "torch":
        if not lib.cuda.is_available():
            pytest.skip("torch sees no GPU")
        return lib.from_numpy(np.ascontiguousarray(host)).cuda()
    return lib.asarray(host)


def _back(result):
    if isinstance(result, np.ndarray) or np.isscalar(result):
        return np.asarray(result)
    if hasattr(result, "cpu"):
        return result.cpu().numpy()
    return result.get()


@pytest.mark.parametrize("shape", SHAPES_2D + SHAPES_ND, ids=str)
@pytest.mark.parametrize("dtype, op", [(np.int32, "add"), (np.float32, "add"), (np.int64, "max"), (np.float64, "min"),
                                       (np.float64, "add")], ids=lambda v: getattr(v, "__name__", v))
def test_scan_every_axis(shape, dtype, op, rng):
    x = _input(rng, shape, dtype, op)
    for axis in range(-len(shape), len(shape)):
        a = axis % len(shape)
        outer, n, inner = axes.split(shape, a)
        for exclusive in (False, True):
            exact = _scan_ref(x.astype(np.float64) if op == "add" and x.dtype.kind == "f" else x, a, op, exclusive)
            got = pyscan.scan(x, axis=axis, op=op, exclusive=exclusive)
            _check(got, exact, x, a, op, saxis.error_depth(n, inner, x.dtype.itemsize))


@pytest.mark.parametrize("shape", SHAPES_2D + SHAPES_ND, ids=str)
@pytest.mark.parametrize("dtype, op", [(np.int32, "add"), (np.float32, "add"), (np.int64, "min"), (np.float64, "max")],
                         ids=lambda v: getattr(v, "__name__", v))
def test_reduce_every_axis(shape, dtype, op, rng):
    x = _input(rng, shape, dtype, op)
    nd = len(shape)
    sms = driver.multiprocessor_count(0)
    f = {"add": np.sum, "max": np.max, "min": np.min}[op]
    for axis in [None] + list(range(-nd, nd)) + ([(0, nd - 1), (1, 2)] if nd >= 3 else []):
        for keepdims in (False, True):
            source = x.astype(np.float64) if op == "add" and x.dtype.kind == "f" else x
            try:
                expected = f(source, axis=axis, keepdims=keepdims)  # NumPy's dtype: np.sum of int32 is int64
            except ValueError:
                with pytest.raises(ValueError):
                    pyscan.reduce(x, axis=axis, keepdims=keepdims, op=op)
                continue
            got = pyscan.reduce(x, axis=axis, keepdims=keepdims, op=op)
            chosen = axes.normalize_axes(axis, nd, "t")
            depth = sum(raxis.error_depth(n, inner, outer, sms) for outer, n, inner in axes.reduce_plan(shape, chosen))
            if axis is None:
                depth = max(depth, pyscan.reductions.REDUCTIONS.get("fast").error_depth(x.size))
            _check(got, expected, x, tuple(chosen), op, depth or 1, keepdims)


@pytest.mark.parametrize("kind", ["cupy", "torch"])
@pytest.mark.parametrize("shape", [(4096, 64), (64, 4096), (2 ** 14, 2), (5, 6, 7)], ids=str)
def test_device_input_and_views(kind, shape, rng):
    x = _input(rng, shape, np.int32, "add")
    d = _to(kind, x)
    def same(got, want):  # values and NumPy's dtype (int64 for int32 add)
        got = _back(got)
        assert got.dtype == want.dtype == np.int64
        np.testing.assert_array_equal(got, want)

    for axis in range(len(shape)):
        same(pyscan.scan(d, axis=axis), np.cumsum(x, axis=axis))
        same(pyscan.reduce(d, axis=axis), np.sum(x, axis=axis))
    # non-contiguous views: copied by the library on the call's stream
    t = d.T if kind == "cupy" else d.transpose(0, -1)
    host_t = x.T if kind == "cupy" else np.swapaxes(x, 0, -1)
    same(pyscan.scan(t, axis=0), np.cumsum(host_t, axis=0))
    same(pyscan.reduce(t, axis=-1), np.sum(host_t, axis=-1))
    s = d[..., ::2]
    same(pyscan.scan(s, axis=-1), np.cumsum(x[..., ::2], axis=-1))
    # axis=None: flattened scan, 0-d reduction of the caller's kind
    same(pyscan.scan(d), np.cumsum(x))
    assert _back(pyscan.reduce(d)).shape == () and _back(pyscan.reduce(d)) == np.sum(x)
    # dtype= keeps int32 (wrapping, as np.cumsum(x, dtype=np.int32))
    got = _back(pyscan.scan(d, axis=0, dtype=np.int32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.cumsum(x, axis=0, dtype=np.int32))


@pytest.mark.parametrize("kind", ["numpy", "cupy", "torch"])
def test_out_keepdims_and_in_place(kind, rng):
    x = _input(rng, (33, 65), np.int64, "add")
    d = _to(kind, x.copy())
    out = _to(kind, np.zeros((33, 65), np.int64))
    assert pyscan.scan(d, axis=0, out=out) is out
    np.testing.assert_array_equal(_back(out), np.cumsum(x, axis=0))
    r = _to(kind, np.zeros((1, 65), np.int64))
    assert pyscan.reduce(d, axis=0, keepdims=True, out=r) is r
    np.testing.assert_array_equal(_back(r), np.sum(x, axis=0, keepdims=True))
    if kind != "numpy":
        assert pyscan.scan(d, axis=1, out=d) is d  # in place
        np.testing.assert_array_equal(_back(d), np.cumsum(x, axis=1))


@pytest.mark.parametrize("op", ["add", "max", "min"])
def test_axis_entry_on_1d_and_nan(op, rng):
    for n in (1, 4095, 4096, 4097, 10 ** 6 + 3):
        x = _input(rng, (n,), np.float32, op)
        if op != "add":
            x[n // 2] = np.nan
        got = pyscan.scan(x, algorithm="axis", op=op)
        exact = _scan_ref(x.astype(np.float64) if op == "add" else x, 0, op, False)
        if op != "add":
            np.testing.assert_array_equal(got, exact)
        else:
            _check(got, exact, x, 0, op, saxis.error_depth(n))
        r = pyscan.reduce(x, algorithm="axis", op=op)
        assert np.isnan(r) if op != "add" else abs(float(r) - float(np.sum(x, dtype=np.float64))) <= raxis.error_depth(
            n, sms=driver.multiprocessor_count(0)) * np.finfo(np.float32).eps * float(np.sum(np.abs(x), dtype=np.float64))


def test_float_reductions_are_reproducible(rng):
    x = _input(rng, (3, 2 ** 20 + 7), np.float32, "add")
    first = [pyscan.reduce(x, axis=a) for a in (0, 1)]
    for _ in range(3):
        for a, r in zip((0, 1), first):
            np.testing.assert_array_equal(pyscan.reduce(x, axis=a), r)


def test_model_matches_the_reduction_bit_for_bit(rng):
    sms = driver.multiprocessor_count(0)
    for shape, axis in [((2 ** 14, 16), 0), ((16, 2 ** 14), 1), ((300, 40, 7), 1)]:
        x = _input(rng, shape, np.float32, "add")
        np.testing.assert_array_equal(pyscan.reduce(x, axis=axis), raxis.model(x, axis=axis, sms=sms))


@pytest.mark.parametrize("shape", [(3, 4099), (4099, 3), (5, 2 ** 13 + 5), (2, 33, 31), (7, 1, 9000)], ids=str)
def test_int32_add_accumulates_in_int64_along_every_axis(shape, rng):
    """int32 values near 2^30: the sums along an axis leave int32's range; the kernels read int32 and add in int64
    (IN_TYPE int, ELEM_TYPE long long), as np.cumsum / np.sum of int32 give int64.  dtype=np.int32 wraps as NumPy's
    does; dtype=np.float64 accumulates in float64."""
    x = rng.integers(2**30 - 100, 2**30, math.prod(shape)).astype(np.int32).reshape(shape)
    x.reshape(-1)[::3] *= -1
    for axis in range(len(shape)):
        for exclusive in (False, True):
            got = pyscan.scan(x, axis=axis, exclusive=exclusive)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, _scan_ref(x, axis, "add", exclusive))
        got = pyscan.reduce(x, axis=axis)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.sum(x, axis=axis))
        np.testing.assert_array_equal(pyscan.scan(x, axis=axis, dtype=np.int32), np.cumsum(x, axis=axis, dtype=np.int32))
        np.testing.assert_array_equal(pyscan.reduce(x, axis=axis, dtype=np.float64), np.sum(x, axis=axis, dtype=np.float64))
    if len(shape) == 3:
        np.testing.assert_array_equal(pyscan.reduce(x, axis=(0, 2)), np.sum(x, axis=(0, 2)))
