"""N-d arrays and axis= on the GPU (docs/axis.md), against NumPy: every axis of 2-D, 3-D and 4-D shapes (the
issue's table shapes scaled down, extents 0, 1, 2, 31, 32, 33 and primes), NumPy, CuPy and torch input (each skips
where its library is absent), non-contiguous views, out=, keepdims, tuple axes.  Integers and max/min exactly; float
add within error_depth * eps * sum|x| along the axis (the axis kernels' bounds, pyscan/scans/axis.py and
pyscan/reductions/axis.py; reductions with the device's SM count).  Results in NumPy's dtype: int32 add along an
axis is int64 (np.cumsum / np.sum), accumulated in int64 by the kernels.  Then every dtype x operator
(tests/helpers/axis_checks.py) along every axis of small and multi-pass shapes, non-contiguous NumPy views of every
width, dtype=, float16 against the models bit for bit, torch bfloat16, custom operators of every width."""

import math

import numpy as np
import pytest
from axis_checks import SHAPES as SMALL_SHAPES
from axis_checks import check_reduce, check_scan
from axis_checks import data as typed_data
from dtype_checks import CASES
from dtype_checks import DTYPES as ALL_DTYPES

import pyscan
from pyscan import axes
from pyscan.reductions import axis as raxis
from pyscan.runtime import driver
from pyscan.scans import axis as saxis
from pyscan.types import OPERATOR_NAMES, identity, operator, result_dtype, ufunc

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


# ------------------------------------------------------------------ every dtype x operator along every axis

# the small shapes (extents 0, 1, 31, 32, 33, primes; 3-D, 4-D) and a few that cut rows into segments and columns
# into chunks (partials in the compute type, a second pass)
TYPED_SHAPES = SMALL_SHAPES + [(4, 70001), (70001, 3), (2 ** 14, 5), (33, 2 ** 12 + 1), (3, 3000, 7)]


def _scan_depth(n, inner):
    """The scan's float bound: the axis kernels' for either compute width, or the 1-D kernel's (a 1-D x, auto)."""
    return max(saxis.error_depth(n, inner, 4), saxis.error_depth(n, inner, 8),
               pyscan.scans.SCANS.get("decoupled_lookback").error_depth(max(n, 1)))


@pytest.mark.parametrize("dtype, op", CASES, ids=lambda v: getattr(v, "__name__", v))
def test_every_dtype_and_operator_every_axis(dtype, op):
    """Every dtype x operator (x converted in the kernels' loads, float16 combined in float32 and rounded once,
    NumPy's result dtype) along every axis, scans and reductions, keepdims and tuple axes, against NumPy
    (tests/helpers/axis_checks.py: exact, or a float bound from error_depth with this device's SM count)."""
    rng = np.random.default_rng([ALL_DTYPES.index(dtype), OPERATOR_NAMES.index(op), 17])
    sms = driver.multiprocessor_count(0)
    for shape in TYPED_SHAPES:
        x = typed_data(rng, shape, dtype, op)
        nd = len(shape)
        for axis in range(-nd, nd):
            a = axis % nd
            outer, n, inner = axes.split(shape, a)
            depth = _scan_depth(n, inner)
            check_scan(pyscan.scan(x, axis=axis, op=op), x, op, a, depth, what=(shape, axis))
            if nd > 1:
                check_scan(pyscan.scan(x, axis=axis, op=op, exclusive=False, algorithm="axis"), x, op, a, depth,
                           what=(shape, axis, "axis"))
        for axis in [None] + list(range(nd)) + ([(0, nd - 1)] if nd >= 3 else []):
            for keepdims in (False, True):
                chosen = axes.normalize_axes(axis, nd, "t")
                if op in ("max", "min") and any(shape[c] == 0 for c in chosen):
                    with pytest.raises(ValueError):
                        pyscan.reduce(x, axis=axis, keepdims=keepdims, op=op)
                    continue
                got = pyscan.reduce(x, axis=axis, keepdims=keepdims, op=op)
                depth = sum(raxis.error_depth(n, inner, outer, sms)
                            for outer, n, inner in axes.reduce_plan(shape, chosen))
                depth = max(depth, pyscan.reductions.REDUCTIONS.get("fast").error_depth(x.size))  # whole arrays
                check_reduce(got, x, op, chosen, keepdims, depth or 1, what=(shape, axis, keepdims))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float16, np.float32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_non_contiguous_numpy_views_every_dtype(dtype, rng):
    base = typed_data(rng, (34, 66, 5), dtype, "max")
    for view in (base[:, ::2], base.transpose(2, 0, 1), base[::-1, 3:40, ::3]):
        for axis in range(view.ndim):
            check_scan(pyscan.scan(view, axis=axis, op="max"), view, "max", axis, 1)
            check_reduce(pyscan.reduce(view, axis=axis, op="min"), view, "min", (axis,), False, 1)
            check_reduce(pyscan.reduce(view, axis=axis, op="add"), view, "add", (axis,), False, 64)


@pytest.mark.parametrize("dtype, op, requested", [(np.float32, "add", np.float16), (np.int32, "add", np.int8),
                                                  (np.float64, "max", np.float32), (np.int8, "mul", np.int16),
                                                  (np.uint8, "bitwise_or", np.uint64),
                                                  (np.float16, "add", np.float64)], ids=str)
def test_dtype_converts_in_the_loads_along_axes(dtype, op, requested, rng):
    x = typed_data(rng, (7, 333, 5), dtype, op)
    for axis in (0, 1, 2):
        check_scan(pyscan.scan(x, axis=axis, op=op, dtype=requested), x, op, axis, _scan_depth(333, 5),
                   dtype=requested)
        check_reduce(pyscan.reduce(x, axis=axis, op=op, dtype=requested), x, op, (axis,), False, 64, dtype=requested)


def test_float16_models_match_bit_for_bit(rng):
    """The reduction models repeat the kernels' trees, partials in float32 included (several passes); float16 scans
    within their bound."""
    sms = driver.multiprocessor_count(0)
    for shape, axis in [((2 ** 14, 16), 0), ((16, 2 ** 16), 1), ((300, 40, 7), (0, 2)), ((5, 2 ** 18), 1)]:
        x = (rng.standard_normal(math.prod(shape)) * 10).astype(np.float16).reshape(shape)
        np.testing.assert_array_equal(pyscan.reduce(x, axis=axis), raxis.model(x, axis=axis, sms=sms))
    x = (rng.standard_normal((64, 5000)) * 10).astype(np.float16)
    for axis in (0, 1):  # the scans' look-back regroups with the schedule: within the bound, rounded once
        check_scan(pyscan.scan(x, axis=axis), x, "add", axis, _scan_depth(x.shape[axis], 5000 if axis == 0 else 1))


def test_bfloat16_along_axes():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    host = np.random.default_rng(5).standard_normal((33, 257, 3)).astype(np.float32)
    t = torch.from_numpy(host).cuda().to(torch.bfloat16)
    exact = t.float().cpu().numpy().astype(np.float64)
    for axis in range(3):
        got = pyscan.reduce(t, axis=axis)
        assert got.dtype == torch.bfloat16
        want = exact.sum(axis=axis)
        bound = 2.0 ** -8 * np.abs(want) + 64 * 2.0 ** -23 * np.abs(exact).sum(axis=axis) + 1e-30
        assert np.all(np.abs(got.float().cpu().numpy() - want) <= bound)
        got = pyscan.reduce(t, axis=axis, op="max").float().cpu().numpy()
        np.testing.assert_array_equal(got, exact.max(axis=axis).astype(np.float32))
        got = pyscan.scan(t, axis=axis, op="min").float().cpu().numpy()
        np.testing.assert_array_equal(got, np.minimum.accumulate(exact, axis=axis).astype(np.float32))


def test_custom_operators_along_axes_every_width(rng):
    for dtype, source, e in [(np.int8, "a + b", 0), (np.float16, "max(a, b)", -np.inf), (np.uint16, "a ^ b", 0),
                             (np.bool_, "a | b", 0)]:
        x = typed_data(rng, (9, 35, 4), dtype, "max")
        for axis in (0, 1, 2):
            got = pyscan.reduce(x, axis=axis, op=source, identity=e)
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got, raxis.model(x, axis=axis, op=operator(source, e),
                                                           sms=driver.multiprocessor_count(0)))
            got = pyscan.scan(x, axis=axis, op=source, identity=e)
            np.testing.assert_array_equal(got, saxis.model(x, axis=axis, op=operator(source, e)))


@pytest.mark.parametrize("kind", ["cupy", "torch"])
@pytest.mark.parametrize("shape", [(2 ** 16, 2), (4096, 16), (16, 4099), (96, 33), (3, 1000, 5), (2 ** 13, 40)],
                         ids=str)
def test_repeated_calls_take_the_plan_and_stay_right(kind, shape, rng):
    """The second and later calls with the same shape, dtype, axis and options take the plan the first made
    (scans/axis.py and reductions/axis.py READY: no Call): new data in the same array and in new arrays, every
    axis, inclusive and exclusive, keepdims, dtype=."""
    for axis in range(len(shape)):
        for _ in range(3):
            x = _input(rng, shape, np.int32, "add")
            d = _to(kind, x)
            np.testing.assert_array_equal(_back(pyscan.scan(d, axis=axis)), np.cumsum(x, axis=axis))
            np.testing.assert_array_equal(_back(pyscan.scan(d, axis=axis, exclusive=True, dtype=np.int32)),
                                          _scan_ref(x, axis, "add", True).astype(np.int32))
            np.testing.assert_array_equal(_back(pyscan.scan(d, axis=axis, op="max")),
                                          np.maximum.accumulate(x, axis=axis))
            np.testing.assert_array_equal(_back(pyscan.reduce(d, axis=axis)), np.sum(x, axis=axis))
            np.testing.assert_array_equal(_back(pyscan.reduce(d, axis=axis, op="min", keepdims=True)),
                                          np.min(x, axis=axis, keepdims=True))
        if len(shape) == 3:
            for axes_ in ((0, 2), (1, 2)):
                for _ in range(3):
                    x = _input(rng, shape, np.int32, "add")
                    np.testing.assert_array_equal(_back(pyscan.reduce(_to(kind, x), axis=axes_)),
                                                  np.sum(x, axis=axes_))
    assert saxis.READY and raxis.READY


def test_planned_axis_calls_under_torch_graph_capture():
    """A planned scan (kept status: the capture's own, zeroed) and a planned multi-pass reduction (partials from
    the graph's pool) captured after warm-up calls, then replayed with new data."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    x = torch.zeros((4096, 16), dtype=torch.int32, device="cuda")
    y = torch.zeros((16, 2 ** 18), dtype=torch.float32, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            pyscan.scan(x, axis=0), pyscan.reduce(y, axis=1)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        scanned, reduced = pyscan.scan(x, axis=0), pyscan.reduce(y, axis=1)
    generator = torch.Generator(device="cuda").manual_seed(7)
    for _ in range(20):
        x.copy_(torch.randint(-9, 10, x.shape, generator=generator, device="cuda", dtype=torch.int32))
        y.copy_(torch.randint(-9, 10, y.shape, generator=generator, device="cuda").to(torch.float32))
        graph.replay()
        assert torch.equal(scanned, torch.cumsum(x, 0))
        assert torch.equal(reduced, y.sum(1))  # small integers: every float32 sum exact in any order


@pytest.mark.parametrize("dtype,requested", [(np.int32, None), (np.int64, None), (np.float64, None),
                                             (np.int8, None), (np.float16, np.float32), (np.uint8, np.int64)],
                         ids=lambda v: "-" if v is None else np.dtype(v).name)
def test_rows_of_arrays_that_are_not_16_byte_aligned(dtype, requested, rng):
    """The scan along the last axis (decoupled_lookback.cu's rows build) of CuPy views that start one element into
    their memory: no 16-byte vectors, one block per tile (VECTOR_LOADS 0), the row starts found the same way.  Row
    lengths around the tiles, inclusive and exclusive, against NumPy exactly (integers; floats within the bound)."""
    cupy = pytest.importorskip("cupy")
    for rows, n in [(3, 1), (4099, 2), (257, 31), (33, 4097), (5, 9000), (2, 40_000)]:
        host = (rng.integers(-100, 100, rows * n + 1) if np.dtype(dtype).kind in "iu" else
                rng.standard_normal(rows * n + 1) * 10).astype(dtype)
        base = cupy.asarray(host)
        x = base[1:].reshape(rows, n)
        assert x.data.ptr % 16 != 0
        for exclusive in (False, True):
            got = cupy.asnumpy(pyscan.scan(x, axis=1, exclusive=exclusive, dtype=requested))
            values = host[1:].reshape(rows, n)
            result = np.cumsum(values[:, :1], axis=1, dtype=requested).dtype  # NumPy's result dtype
            assert got.dtype == result
            want = np.cumsum(values.astype(np.float64 if result.kind == "f" else result), axis=1)  # floats exact
            if exclusive:
                want = np.concatenate([np.zeros((rows, 1), want.dtype), want[:, :-1]], axis=1)
            if result.kind in "iu":
                np.testing.assert_array_equal(got, want)
            else:
                bound = saxis.error_depth(n) * np.finfo(result).eps * np.cumsum(np.abs(values.astype(np.float64)),
                                                                                 axis=1)
                assert np.all(np.abs(got.astype(np.float64) - want) <= bound + 1e-30), (rows, n, exclusive)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.bool_, np.int8], ids=lambda d: np.dtype(d).name)
def test_reductions_of_aligned_and_unaligned_views_are_the_model(dtype, rng):
    """Reductions along axes of CuPy arrays and of views one element into their memory: the column threads' 4-byte
    runs of narrow x read as one load where x is aligned to them, else the strided build (the same arithmetic); short
    rows, several row chunks: the model bit for bit either way."""
    cupy = pytest.importorskip("cupy")
    sms = driver.multiprocessor_count(0)
    cases = [((4099, 2), 1), ((1000, 4), 1), ((513, 8), 1), ((300, 16), 1), ((300, 66), 0), ((300, 67), 0),
             ((64, 4096), 0), ((2, 700, 64), 1), ((3, 5000, 40), 1)]
    for shape, axis in cases:
        size = math.prod(shape)
        host = (rng.random(size + 1) < 0.5) if dtype == np.bool_ else (
            rng.integers(-100, 100, size + 1) if np.dtype(dtype).kind == "i" else rng.standard_normal(size + 1) * 10)
        host = host.astype(dtype)
        base = cupy.asarray(host)
        for skip in (0, 1):
            x = base[skip:skip + size].reshape(shape)
            want = raxis.model(host[skip:skip + size].reshape(shape), axis=axis, sms=sms)
            got = cupy.asnumpy(pyscan.reduce(x, axis=axis))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{shape} axis {axis} skip {skip}")
