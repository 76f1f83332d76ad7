"""N-d arrays and axis= (docs/axis.md), without a GPU: the NumPy models of the axis kernels against NumPy on every
axis of shapes with extents 0, 1, 2, 31, 32, 33 and primes, 3-D and 4-D, every dtype and op, exclusive scans and
tuple axes; axis normalisation, result shapes and errors; and the public dispatch end to end on the fake device of
test_interop (the axis drivers replaced by the models on the same host addresses)."""

import ctypes
import dataclasses
import math

import numpy as np
import pytest
from axis_checks import SHAPES as AXIS_SHAPES
from axis_checks import check_reduce, check_scan
from axis_checks import data as axis_data
from dtype_checks import CASES
from scan_checks import make_input
from test_interop import FakeDeviceArray, fake_gpu  # noqa: F401  (the fake device's fixture)

import pyscan
from pyscan import axes
from pyscan.reductions import axis as raxis
from pyscan.reductions.registry import REDUCTIONS
from pyscan.runtime import arrays
from pyscan.scans import axis as saxis
from pyscan.scans import decoupled_lookback as dl
from pyscan.scans.registry import SCANS
from pyscan.types import COMPUTE_TYPES, CustomOperator, Types, identity, load, store, ufunc

DTYPES = (np.int32, np.int64, np.float32, np.float64)
SHAPES = [(0,), (1,), (33,), (4099,), (2, 3), (1, 32), (32, 1), (31, 33), (0, 5), (5, 0), (3, 4097), (4097, 3),
          (2, 3, 5), (7, 1, 13), (2, 33, 31), (3, 2, 5, 7), (1, 1, 1, 2), (2, 0, 3)]


def scan_reference(x, axis, op, exclusive):
    x = np.asarray(x)
    inclusive = np.cumsum(x, axis=axis, dtype=x.dtype) if op == "add" else ufunc(op).accumulate(x, axis=axis)
    if not exclusive:
        return inclusive
    out = np.empty_like(inclusive)
    head = [slice(None)] * x.ndim
    head[axis] = slice(0, 1)
    out[tuple(head)] = identity(op, x.dtype)
    rest, before = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    rest[axis], before[axis] = slice(1, None), slice(None, -1)
    out[tuple(rest)] = inclusive[tuple(before)]
    return out


def data(rng, shape, dtype, op):
    return make_input(rng, math.prod(shape), dtype, op).reshape(shape)


def assert_close(got, expected, x, axis, op, depth, exact_float=False, keepdims=True):
    """Integers, max and min exactly; float add within depth * eps * (sum of |x| along the axis)."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if op != "add" or expected.dtype.kind == "i" or exact_float:
        np.testing.assert_array_equal(got, expected)
        return
    magnitude = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=keepdims)
    bound = depth * np.finfo(x.dtype).eps * magnitude + np.finfo(x.dtype).tiny
    assert np.all(np.abs(got.astype(np.float64) - expected.astype(np.float64)) <= bound)


# ------------------------------------------------------------------------------------------------- scan models

@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
@pytest.mark.parametrize("op", ("add", "max", "min"))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scan_model_every_axis(dtype, op, exclusive, rng):
    for shape in SHAPES:
        x = data(rng, shape, dtype, op)
        for axis in range(-len(shape), len(shape)):
            a = axis % len(shape)
            outer, n, inner = axes.split(shape, a)
            got = saxis.model(x, op=op, exclusive=exclusive, axis=axis, dtype=x.dtype)  # in x's dtype
            expected = scan_reference(x.astype(np.float64) if x.dtype.kind == "f" and op == "add" else x, a, op,
                                      exclusive).astype(x.dtype)
            assert_close(got, expected, x, a, op, saxis.error_depth(n, inner, x.dtype.itemsize))


@pytest.mark.parametrize("n", [1, 2, 3, 31, 4095, 4096, 4097, 8191, 8192, 8193, 12289])
def test_scan_model_rows_across_tiles(n, rng):
    """Row lengths around the rows build's tiles (int32: 4096 elements below 32 such tiles, 8192 above): rows that
    start mid-tile, tiles with several heads, rows over several tiles (the look-back stops at a row start)."""
    for rows in (1, 2, 3, -(-140_000 // n)):  # the last: over 32 small tiles, the large tile
        x = rng.integers(-50, 50, (rows, n)).astype(np.int32)
        for exclusive in (False, True):
            np.testing.assert_array_equal(saxis.rows_model(x, n, exclusive=exclusive).reshape(rows, n),
                                          scan_reference(x, 1, "add", exclusive))


@pytest.mark.parametrize("shape", [(2 ** 12, 16), (16, 2 ** 12), (2 ** 13, 2), (64, 256), (300, 40), (5, 3, 700)])
def test_scan_model_table_shapes_scaled(shape, rng):
    x = rng.integers(-9, 9, shape).astype(np.int32)
    for axis in range(len(shape)):
        np.testing.assert_array_equal(saxis.model(x, axis=axis), scan_reference(x, axis, "add", False))


def test_column_geometry_covers_the_table():
    shapes = [(2 ** 20, 16, 4), (16, 2 ** 20, 4), (2 ** 23, 2, 4), (4096, 4096, 8), (7, 33, 8), (1, 2, 4),
              (65536, 64, 4), (3, 31, 4), (5, 97, 4)]
    # vector: the lanes a thread of the direct build holds (column_lanes_per_thread)
    for (n, inner, itemsize), vector in [(shape, vector) for shape in shapes for vector in (1, 2)]:
        lanes, rows, items, lane_chunks, chunks = saxis.column_geometry(n, inner, itemsize, vector)
        per_thread = vector if lanes >= 32 else 1
        assert lanes // per_thread * rows <= 256 and lanes <= 256  # the block; its look-back: a thread a lane
        assert 1 <= items <= saxis.column_items(itemsize) // per_thread
        assert lane_chunks * lanes >= inner and chunks * rows * items >= n > (chunks - 1) * rows * items
        assert rows * items * (lanes + (lanes < 32)) <= saxis.column_items(itemsize) * 384  # the kernel's smem
        assert lanes == inner or lanes % (32 * vector) == 0
        # the direct-loads build only where every warp is 32 consecutive lanes of one row group (its coalescing)
        build = saxis.column_build(lanes, items, itemsize, vector)
        assert ("DIRECT_LOADS" in build) == (lanes % 32 == 0)
        assert build.get("LANES_PER_THREAD", 1) == per_thread and items <= build["ITEMS"]


def test_scan_model_steps_of_rows():
    x = (np.arange(6000, dtype=np.int64) % 5).reshape(3, 2000)
    result, steps = saxis.model(x, return_steps=True)
    np.testing.assert_array_equal(result, np.cumsum(x, axis=1))
    tile = dl.tile_size(np.int64, x.size)  # the small tile: 2048 elements of 8 bytes
    assert tile == 2048 and len(steps) == 5 and all(s.values.size == 3 * tile for s in steps)


# ----------------------------------------------------------------------------------------------- reduce models

def _numpy_reduce(x, axis, op, keepdims):
    f = {"add": np.sum, "max": np.max, "min": np.min}[op]
    if op == "add" and x.dtype.kind == "f":
        return f(x.astype(np.float64), axis=axis, keepdims=keepdims).astype(x.dtype)
    return f(x, axis=axis, keepdims=keepdims, dtype=x.dtype) if op == "add" else f(x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("op", ("add", "max", "min"))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reduce_model_every_axis(dtype, op, rng):
    for shape in SHAPES + [(3, 20000), (20000, 3), (16, 5000)]:
        x = data(rng, shape, dtype, op)
        nd = len(shape)
        choices = [None] + list(range(-nd, nd)) + ([(0, nd - 1), tuple(range(nd)), (-1, 1)] if nd >= 3 else [])
        for axis in choices:
            for keepdims in (False, True):
                try:
                    expected = _numpy_reduce(x, axis, op, keepdims)
                except ValueError:
                    with pytest.raises(ValueError, match="zero-size"):
                        raxis.model(x, op=op, axis=axis, keepdims=keepdims)
                    continue
                got = raxis.model(x, op=op, axis=axis, keepdims=keepdims, dtype=x.dtype)  # in x's dtype
                assert np.shape(got) == np.shape(expected)
                if axis is None and not keepdims:
                    assert np.isscalar(got) or np.ndim(got) == 0
                chosen = axes.normalize_axes(axis, nd, "t")
                depth = sum(raxis.error_depth(o_n_i[1], o_n_i[2], o_n_i[0])
                            for o_n_i in axes.reduce_plan(shape, chosen)) or 1
                assert_close(got, expected, x, tuple(chosen), op, depth, keepdims=keepdims)


@pytest.mark.parametrize("dtype, op", CASES, ids=lambda v: getattr(v, "__name__", v))
def test_models_every_dtype_and_operator_every_axis(dtype, op, rng):
    """The models of both axis kernels, every dtype x operator (x converted in the loads as op_load does, float16
    combined in float32 and rounded once), every axis of shapes with extents 0, 1, 31, 32, 33 and primes, 3-D and
    4-D, tuple axes and keepdims, against NumPy (axis_checks: exact, or a float bound)."""
    for shape in AXIS_SHAPES:
        x = axis_data(rng, shape, dtype, op)
        nd = len(shape)
        for axis in range(-nd, nd):
            a = axis % nd
            outer, n, inner = axes.split(shape, a)
            check_scan(saxis.model(x, op=op, axis=axis), x, op, a, saxis.error_depth(n, inner, 8), what=(shape, axis))
        for axis in [None] + list(range(nd)) + ([(0, nd - 1)] if nd >= 3 else []):
            for keepdims in (False, True):
                chosen = axes.normalize_axes(axis, nd, "t")
                if op in ("max", "min") and any(shape[c] == 0 for c in chosen):
                    with pytest.raises(ValueError, match="zero-size"):
                        raxis.model(x, op=op, axis=axis, keepdims=keepdims)
                    continue
                depth = sum(raxis.error_depth(n, inner, outer) for outer, n, inner in axes.reduce_plan(shape, chosen))
                got = raxis.model(x, op=op, axis=axis, keepdims=keepdims)
                check_reduce(got, x, op, chosen, keepdims, depth or 1, what=(shape, axis, keepdims))


@pytest.mark.parametrize("dtype, op, requested", [(np.float32, "add", np.float16), (np.int32, "add", np.int8),
                                                  (np.float64, "max", np.float32), (np.int8, "mul", np.int16),
                                                  (np.uint8, "bitwise_or", np.uint64), (np.int16, "logical_and", None)])
def test_models_take_dtype_converting_on_load(dtype, op, requested, rng):
    x = axis_data(rng, (7, 33, 5), dtype, op)
    for axis in (0, 1, 2):
        check_scan(saxis.model(x, op=op, axis=axis, dtype=requested), x, op, axis, saxis.error_depth(33, 5, 8),
                   dtype=requested)
        check_reduce(raxis.model(x, op=op, axis=axis, dtype=requested), x, op, (axis,), False, 64, dtype=requested)


def test_model_partials_stay_in_the_compute_type():
    """float16 along a long axis: the passes' partials are float32 (the kernels' PARTIALS_IN), rounded once."""
    x = np.full((2, 40000), 0.1, np.float16)
    got = raxis.model(x, axis=1, sms=2)  # several passes
    exact = 40000 * float(np.float16(0.1))
    assert got.dtype == np.float16 and np.all(np.abs(got.astype(np.float64) - exact) <= exact * 2.0**-11 + 1e-3)


def test_the_short_row_kernel_holds_what_the_plan_gives_it():
    """axis_rows_reduce_short's shared memory holds 256 * SHORT_ROW elements (the .cu's default, the build that
    ships): the plan's rows a thread times the row length never exceed it, and the host's SHORT_ROW is the .cu's."""
    import re
    from pathlib import Path

    source = (Path(raxis.__file__).parents[2] / "kernels" / raxis.ROWS_KERNEL).read_text()
    assert int(re.search(r"#define SHORT_ROW (\d+)", source).group(1)) == raxis.SHORT_ROW
    for rows in (1, 255, 256, 2049, 10**5, 2**23, 3 * 10**7):
        for n in range(1, raxis.SHORT_ROW + 1):
            for sms in (1, 2, 132):
                kind, grid, _, (_, _, per_thread) = raxis.pass_plan(rows, n, 1, sms, 4)
                assert kind == "rows_short" and 1 <= per_thread and per_thread * n <= raxis.SHORT_ROW
                assert (grid - 1) * 256 * per_thread < rows <= grid * 256 * per_thread


def test_launches_with_several_chunks_fit_the_ticket_counters():
    """A launch whose last blocks fold chunk partials takes a ticket counter for each of its groups (rows, or
    column groups) from the ticket_bytes at the start of the stream's scratch: every plan, on any SM count, has
    at most BLOCKS_PER_SM * SMs such groups (more groups fill the GPU with one chunk each)."""
    extents = (1, 2, 3, 7, 16, 31, 33, 100, 1000, 1057, 4096, 65536, 10**6, 2**23)
    for sms in (1, 2, 16, 78, 114, 132, 144):
        most = raxis.ticket_bytes(sms) // 4
        assert most >= raxis.BLOCKS_PER_SM * sms
        seen = 0
        for outer in extents:
            for n in extents:
                for inner in (1, 2, 5, 16, 40, 4096, 65536):
                    if outer * n * inner > 2**34:
                        continue
                    for itemsize in (1, 2, 4, 8):
                        kind, _, chunks, geometry = raxis.pass_plan(outer, n, inner, sms, itemsize)
                        if chunks > 1:
                            groups = outer if kind == "rows_block" else outer * geometry[5]
                            assert kind in ("rows_block", "columns") and groups <= raxis.BLOCKS_PER_SM * sms, (
                                sms, outer, n, inner, itemsize)
                            seen += 1
        assert seen > 100  # the sweep meets many launches with several chunks


def test_row_and_column_plans_fill_the_gpu():
    for rows, n in [(2 ** 23, 2), (2 ** 20, 16), (16, 2 ** 20), (4096, 4096), (64, 65536), (1, 10 ** 6)]:
        mode, grid, splits, seg = raxis.row_plan(rows, n, 132)
        assert splits * seg >= n and grid >= min(rows, 8 * 132) // 8
    for outer, n, inner in [(1, 2 ** 20, 16), (1, 16, 2 ** 20), (1, 2 ** 23, 2), (1, 4096, 4096), (1, 65536, 64)]:
        lanes, rows, chunk_rows, lane_chunks, chunks = raxis.column_plan(outer, n, inner, 132)
        assert outer * lane_chunks * chunks >= min(8 * 132, outer * lane_chunks * -(-n // (rows * 8))) // 2
        assert chunk_rows % rows == 0 and chunks * chunk_rows >= n


# ------------------------------------------------------------------------------------------------------- axes

def test_normalize_axis_follows_numpy():
    assert axes.normalize_axis(-1, 3, "t") == 2 and axes.normalize_axis(np.int64(1), 2, "t") == 1
    for bad in (3, -4):
        with pytest.raises(axes.AxisError):
            axes.normalize_axis(bad, 3, "t")
    with pytest.raises(ValueError):  # AxisError is a ValueError too
        axes.normalize_axis(5, 2, "t")
    with pytest.raises(TypeError):
        axes.normalize_axis(1.0, 2, "t")
    with pytest.raises(TypeError):
        axes.normalize_axis(True, 2, "t")
    assert axes.normalize_axes((-1, 0), 3, "t") == (0, 2) and axes.normalize_axes(None, 2, "t") == (0, 1)
    with pytest.raises(ValueError, match="duplicate"):
        axes.normalize_axes((1, -1), 2, "t")


def test_reduce_plan_merges_and_orders_passes():
    assert axes.reduce_plan((3, 4, 5), (0, 2)) == [(12, 5, 1), (1, 3, 4)]
    assert axes.reduce_plan((3, 1, 4), (0, 2)) == [(1, 12, 1)]
    assert axes.reduce_plan((2, 3, 4, 5), (1, 2)) == [(2, 12, 5)]
    assert axes.reduce_plan((2, 1), (1,)) == []


def test_kernel_macros_are_one_place():
    m = axes.kernel_macros(np.int32, np.int64, np.float64, "max")
    assert m == {"IN_TYPE": "int", "VALUE_TYPE": "long long", "ELEM_TYPE": "long long", "OUT_TYPE": "double",
                 "OP": "OP_MAX"}
    m = axes.kernel_macros(np.float32, np.float16, np.float32, "add", partials_in=True)  # a later pass's partials
    assert m == {"IN_TYPE": "float", "VALUE_TYPE": "__half", "ELEM_TYPE": "float", "OUT_TYPE": "float",
                 "OP": "OP_ADD", "PARTIALS_IN": 1}
    assert axes.kernel_macros(np.int8, np.int8, np.int8, "bitwise_xor")["ELEM_TYPE"] == "int"  # combined in 32 bits
    with pytest.raises(TypeError):
        axes.kernel_macros(np.complex64, np.complex64, np.complex64, "add")


def test_registry_entries():
    assert SCANS.get("axis").kernels == ("scan/decoupled_lookback.cu", "scan/axis_columns.cu")
    assert REDUCTIONS.get("axis").kernels == ("reduction/axis_rows.cu", "reduction/axis_columns.cu")
    assert "axis" not in SCANS.auto_priority and SCANS.choose() == "decoupled_lookback"  # 1-D auto unchanged
    assert "axis" in pyscan.scans.IN_PLACE


# ---------------------------------------------------------------------------------- errors before any GPU work

@pytest.mark.parametrize("call, error, words", [
    (lambda x: pyscan.scan(x, axis=2), np.exceptions.AxisError if hasattr(np, "exceptions") else ValueError,
     "out of bounds"),
    (lambda x: pyscan.scan(x, axis=-3), ValueError, "out of bounds"),
    (lambda x: pyscan.scan(x, axis=(0, 1)), TypeError, "axis must be an int"),
    (lambda x: pyscan.scan(x, axis=1.5), TypeError, "axis must be an int"),
    (lambda x: pyscan.scan(x, axis=1, algorithm="kogge_stone"), ValueError, "'auto' or 'axis'"),
    (lambda x: pyscan.scan(x.astype(np.complex64), axis=0), TypeError, "unsupported dtype complex64"),
    (lambda x: pyscan.scan(x.astype(np.float16), axis=1, op="bitwise_and"), TypeError, "integers and bool"),
    (lambda x: pyscan.reduce(x, axis=-1, op="logical_or", dtype=np.int32), TypeError, "gives bool"),
    (lambda x: pyscan.reduce(x.astype(np.float32), axis=0, op="bitwise_or"), TypeError, "integers and bool"),
    (lambda x: pyscan.reduce(x, axis=(0, 0)), ValueError, "duplicate"),
    (lambda x: pyscan.reduce(x, axis=5), ValueError, "out of bounds"),
    (lambda x: pyscan.reduce(x, axis=0, algorithm="fast"), ValueError, "'auto' or 'axis'"),
    (lambda x: pyscan.reduce(x, keepdims=2), TypeError, "keepdims"),
    (lambda x: pyscan.reduce(x[:0], axis=0, op="max"), ValueError, "zero-size"),
])
def test_bad_axes_are_refused_before_the_gpu(call, error, words):
    x = np.ones((3, 4), np.int32)
    with pytest.raises(error, match=words):
        call(x)


# ------------------------------------------------------------------------- the dispatch on the fake device

@pytest.fixture
def fake_axis_gpu(fake_gpu, monkeypatch):  # noqa: F811  (the fixture imported above)
    """test_interop's fake device, with the axis drivers replaced by the models on the same host memory."""
    launched = []

    def host(view, shape):
        dtype = np.dtype(view.dtype)
        count = math.prod(shape)
        buffer = (ctypes.c_char * max(count * dtype.itemsize, 1)).from_address(int(view.gpudata))
        return np.frombuffer(buffer, dtype=dtype, count=count).reshape(shape)

    # the kernels load op_load(x[i]): x converted to the result dtype (default: out's), widened to the compute type
    def scan_along(x, out, outer, n, inner, *, op, exclusive, call, acc_dtype=None):
        launched.append(("scan", outer, n, inner))
        values = host(x, (outer, n, inner))
        host(out, (outer, n, inner))[...] = saxis.model(values, op=op, exclusive=exclusive, axis=1,
                                                        dtype=acc_dtype or out.dtype)
        return 1

    def reduce_along(x, out, outer, n, inner, *, op, call, acc_dtype=None, partials_in=False):
        launched.append(("reduce", outer, n, inner))
        value = np.dtype(acc_dtype or out.dtype)
        types = Types(np.dtype(x.dtype), value, COMPUTE_TYPES[value])
        values = host(x, (outer, n, inner))
        values = values.astype(types.compute) if partials_in else load(values, types)
        bound = op.bound(value) if isinstance(op, CustomOperator) else op
        result = raxis.reduce_model_along(values, bound)
        partial = np.dtype(out.dtype) == types.compute and value != types.compute  # partials for a later pass
        host(out, (outer, inner))[...] = result if partial else store(result, types)
        return 1

    def at(address, dtype, shape):
        return host(arrays.DeviceView(address, shape, np.dtype(dtype), None), shape)

    class ScanPlan:  # scans/axis.py's Plan: what the general path (scan_along, above) and the ready path launch
        def __init__(self, outer, n, inner, in_dtype, acc, out_dtype, op, exclusive, device):
            self.view, self.dtypes, self.op, self.exclusive = (outer, n, inner), (in_dtype, acc, out_dtype), op, exclusive
            plans.append(("scan", self.view))

        def launch(self, out, x, device, stream, context):
            launched.append(("scan", *self.view, stream))
            in_dtype, acc, out_dtype = self.dtypes
            at(out, out_dtype, self.view)[...] = saxis.model(at(x, in_dtype, self.view), op=self.op,
                                                             exclusive=self.exclusive, axis=1, dtype=acc)

    class ReducePlan:  # reductions/axis.py's Plan: the NumPy model of its passes, one after the other
        def __init__(self, passes, in_dtype, value, op, device):
            self.passes, self.in_dtype, self.value, self.op = passes, in_dtype, value, op
            plans.append(("reduce", passes))

        def launch(self, out, x, device, stream, context):
            launched.append(("reduce", self.passes, stream))
            types = Types(np.dtype(self.in_dtype), self.value, COMPUTE_TYPES[self.value])
            bound = self.op.bound(self.value) if isinstance(self.op, CustomOperator) else self.op
            values = load(at(x, self.in_dtype, (math.prod(self.passes[0]),)), types)
            for outer, n, inner in self.passes:
                values = raxis.reduce_model_along(values.reshape(outer, n, inner), bound)
            at(out, self.value, values.shape)[...] = store(values, types)

    plans = []
    monkeypatch.setattr(saxis, "scan_along", scan_along)
    monkeypatch.setattr(raxis, "reduce_along", reduce_along)
    monkeypatch.setattr(saxis, "plan", ScanPlan)
    monkeypatch.setattr(raxis, "plan", ReducePlan)
    monkeypatch.setattr(saxis, "READY", {})
    monkeypatch.setattr(raxis, "READY", {})
    monkeypatch.setattr(pyscan.runtime.driver, "primary", lambda ordinal: 0)  # the ready path's context
    fake_gpu[1].plans = plans
    entry = SCANS._algorithms["axis"]

    def axis_driver(x, out, *, op, exclusive, call):
        return scan_along(x, out, 1, x.size, 1, op=op, exclusive=exclusive, call=call)

    monkeypatch.setitem(SCANS._algorithms, "axis", dataclasses.replace(entry, driver=axis_driver))
    return launched, fake_gpu


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (4, 1, 6), (2, 3, 4, 5), (1, 7)])
def test_scan_dispatch_every_axis(shape, fake_axis_gpu):
    launched, _ = fake_axis_gpu
    rng = np.random.default_rng(3)
    for axis in [None] + list(range(-len(shape), len(shape))):
        for exclusive in (False, True):
            x = FakeDeviceArray(rng.integers(-9, 9, shape).astype(np.int32))
            launched.clear()
            result = pyscan.scan(x, axis=axis, exclusive=exclusive, op="max")
            expected = scan_reference(x.host.reshape(-1) if axis is None else x.host, 0 if axis is None else axis,
                                      "max", exclusive)
            assert isinstance(result, FakeDeviceArray)
            np.testing.assert_array_equal(result.host, expected)
            if axis is not None and len(shape) > 1:
                assert launched and launched[0][0] == "scan"


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (4, 1, 6), (2, 3, 4, 5)])
def test_reduce_dispatch_axes_and_keepdims(shape, fake_axis_gpu):
    rng = np.random.default_rng(4)
    nd = len(shape)
    for axis in [None, 0, -1, (0, nd - 1), tuple(range(nd))]:
        for keepdims in (False, True):
            x = FakeDeviceArray(rng.integers(-9, 9, shape).astype(np.int64))
            result = pyscan.reduce(x, axis=axis, keepdims=keepdims)
            expected = np.sum(x.host, axis=axis, keepdims=keepdims)
            assert isinstance(result, FakeDeviceArray)
            assert result.host.shape == np.shape(expected)
            np.testing.assert_array_equal(result.host, expected)


@pytest.mark.parametrize("pattern", ["axis_scan", "axis_reduce"])
def test_the_check_cases_run_on_the_fake_device(pattern, fake_axis_gpu, monkeypatch):
    """Every case of `python -m pyscan check axis_scan axis_reduce` passes with the models in place of the kernels
    (so a mismatch on the GPU, or under compute-sanitizer, is the kernels', not the check's), and the cases cover
    every axis of 2-D to 4-D shapes, aligned and one element off."""
    from pyscan_tools.patterns import PATTERNS
    from pyscan_tools.patterns import axes as axes_pattern

    monkeypatch.setattr(axes_pattern, "device_view", lambda host, offset: FakeDeviceArray(host.copy()))
    monkeypatch.setattr(axes_pattern, "to_numpy", lambda r: r.host if isinstance(r, FakeDeviceArray) else np.asarray(r))
    launched, _ = fake_axis_gpu
    rng = np.random.default_rng(3)
    for quick in (True, False):
        cases = PATTERNS[pattern].check_cases(pattern, quick)
        assert {c.p["offset"] for c in cases} == {0, 1} and {len(c.p["shape"]) for c in cases} >= {2, 3}
        for c in cases:
            status, detail = PATTERNS[pattern].run_case(c, rng)
            assert status == "ok", (c.label, detail)
    assert launched  # the kernels' stand-ins ran


def test_the_axis_check_finds_a_wrong_result(fake_axis_gpu, monkeypatch):
    """The check's comparison can fail: a scan one off along the last axis is reported with its axis."""
    from pyscan_tools.patterns import PATTERNS
    from pyscan_tools.patterns import axes as axes_pattern

    monkeypatch.setattr(axes_pattern, "device_view", lambda host, offset: FakeDeviceArray(host.copy()))
    monkeypatch.setattr(axes_pattern, "to_numpy", lambda r: r.host + 1 if isinstance(r, FakeDeviceArray) else r)
    c = PATTERNS["axis_scan"].check_cases("axis_scan", True)[0]
    status, detail = PATTERNS["axis_scan"].run_case(c, np.random.default_rng(0))
    assert status == "mismatch" and detail.startswith("axis=0")



def test_reduce_dispatch_empty_axes_and_out(fake_axis_gpu):
    x = FakeDeviceArray(np.zeros((0, 3), np.int32))
    empty = pyscan.reduce(x, axis=0).host
    assert empty.dtype == np.sum(x.host, axis=0).dtype == np.int64
    np.testing.assert_array_equal(empty, np.zeros(3))
    # an empty reduction is the operator's identity, as np.prod / np.logical_and.reduce (the whole-array path)
    for dtype, op in ((np.int32, "mul"), (np.bool_, "logical_and"), (np.uint8, "bitwise_and"), (np.float32, "add")):
        host = np.zeros((0, 3), dtype)
        got = pyscan.reduce(FakeDeviceArray(host), op=op).host
        want = getattr(np, {"add": "add", "mul": "multiply"}.get(op, op)).reduce(host, axis=None)
        assert got.dtype == want.dtype and got == want, (dtype, op)
    assert pyscan.reduce(FakeDeviceArray(np.zeros((3, 0), np.int32)), axis=0, op="max").host.shape == (0,)
    with pytest.raises(ValueError, match="zero-size"):
        pyscan.reduce(FakeDeviceArray(np.zeros((3, 0), np.int32)), axis=1, op="max")
    y = FakeDeviceArray(np.arange(12, dtype=np.int32).reshape(3, 4))
    out = FakeDeviceArray(np.zeros(4, np.int64))  # np.sum of int32 is int64
    with pytest.raises(ValueError, match="dtype int64"):
        pyscan.reduce(y, axis=0, out=FakeDeviceArray(np.zeros(4, np.int32)))
    assert pyscan.reduce(y, axis=0, out=out) is out
    np.testing.assert_array_equal(out.host, np.arange(12).reshape(3, 4).sum(axis=0))
    with pytest.raises(ValueError, match="shape"):
        pyscan.reduce(y, axis=1, out=out)


def test_axis_results_follow_numpys_accumulator(fake_axis_gpu):
    """int32 add along an axis accumulates in int64 (np.cumsum / np.sum of int32 give int64), past int32's range;
    dtype= chooses the accumulator; max/min keep x's dtype."""
    host = np.full((3, 4), 2**30 + 7, np.int32)
    host[1] = -(2**31)
    x = FakeDeviceArray(host)
    for axis in (0, 1):
        got = pyscan.scan(x, axis=axis).host
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.cumsum(host, axis=axis))
        got = pyscan.reduce(x, axis=axis).host
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.sum(host, axis=axis))
        got = pyscan.scan(x, axis=axis, dtype=np.float64).host
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, np.cumsum(host, axis=axis, dtype=np.float64))
        np.testing.assert_array_equal(pyscan.scan(x, axis=axis, dtype=np.int32).host,
                                      np.cumsum(host, axis=axis, dtype=np.int32))  # wraps, as NumPy's
        got = pyscan.reduce(x, axis=axis, op="max").host
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, np.max(host, axis=axis))
    one_row_1d = FakeDeviceArray(host[0].copy())
    got = pyscan.scan(one_row_1d, algorithm="axis").host  # the registry's axis driver on a 1-D array
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.cumsum(host[0]))
    got = pyscan.scan(FakeDeviceArray(host.astype(np.int8)[0]), algorithm="axis").host  # int8 add: int64
    np.testing.assert_array_equal(got, np.cumsum(host.astype(np.int8)[0]))


def test_scan_dispatch_out_in_place_and_named_algorithms(fake_axis_gpu):
    x = FakeDeviceArray(np.arange(12, dtype=np.int32).reshape(3, 4))
    expected = np.cumsum(x.host, axis=0, dtype=np.int32)
    with pytest.raises(ValueError, match="dtype int64"):  # int32 add gives int64: x cannot hold it
        pyscan.scan(x, axis=0, out=x)
    assert pyscan.scan(x, axis=0, dtype=np.int32, out=x) is x  # in place, as np.cumsum(x, 0, np.int32, out=x)
    np.testing.assert_array_equal(x.host, expected)
    one_row = FakeDeviceArray(np.arange(5, dtype=np.int32).reshape(1, 5))
    # the axis is the whole array: a named 1-D algorithm runs on it (the fake's decoupled_lookback)
    np.testing.assert_array_equal(pyscan.scan(one_row, axis=1, algorithm="decoupled_lookback").host,
                                  np.cumsum(one_row.host, axis=1))


def test_strided_device_arrays_copy_only_on_the_nd_path(fake_axis_gpu):
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    with pytest.raises(ValueError, match="not contiguous.*cannot copy this kind"):
        pyscan.scan(FakeDeviceArray(base[:, ::2]), axis=0)  # a kind without a copy of its own: refused, named
    with pytest.raises(ValueError, match="not contiguous"):
        pyscan.scan(FakeDeviceArray(base[0, ::2]))  # 1-D: as before


@pytest.mark.parametrize("dtype, op", [(np.int8, "add"), (np.float16, "add"), (np.bool_, "logical_or"),
                                       (np.uint16, "bitwise_xor"), (np.int16, "mul"), (np.float16, "max"),
                                       (np.uint64, "min"), (np.bool_, "add")], ids=str)
def test_dispatch_every_dtype_and_operator(dtype, op, fake_axis_gpu, rng):
    """pyscan.scan / pyscan.reduce along axes of the dtypes the axis kernels took only now, end to end on the fake
    device: NumPy's result dtype, tuple axes through compute-type partials."""
    for shape in [(3, 4), (2, 3, 5), (2, 33, 31), (3, 2, 5, 7)]:
        host = axis_data(rng, shape, dtype, op)
        nd = len(shape)
        for axis in range(nd):
            outer, n, inner = axes.split(shape, axis)
            check_scan(pyscan.scan(FakeDeviceArray(host), axis=axis, op=op).host, host, op, axis,
                       saxis.error_depth(n, inner, 8), what=(shape, axis))
        for axis in [0, nd - 1, (0, nd - 1), tuple(range(1, nd))]:
            chosen = axes.normalize_axes(axis, nd, "t")
            got = pyscan.reduce(FakeDeviceArray(host), axis=axis, op=op).host
            depth = sum(raxis.error_depth(n, inner, outer) for outer, n, inner in axes.reduce_plan(shape, chosen))
            check_reduce(got, host, op, chosen, False, depth, what=(shape, axis))


def test_dispatch_custom_operator_along_axes(fake_axis_gpu):
    host = np.arange(60, dtype=np.int16).reshape(3, 4, 5) % 7
    got = pyscan.reduce(FakeDeviceArray(host), axis=(0, 2), op="max(a, b)", identity=-(2**15)).host
    assert got.dtype == np.int16
    np.testing.assert_array_equal(got, host.max(axis=(0, 2)))
    got = pyscan.scan(FakeDeviceArray(host), axis=1, op="a + b", identity=0).host
    np.testing.assert_array_equal(got, np.cumsum(host, axis=1, dtype=np.int16))


def test_bfloat16_models_round_once():
    """bfloat16 (torch's; its bits here) combined in float32 and rounded once on the store, as float16."""
    from pyscan.types import BFLOAT16, bfloat16_to_float32, float32_to_bfloat16

    values = np.random.default_rng(2).standard_normal((5, 300, 3)).astype(np.float32)
    bits = float32_to_bfloat16(values.reshape(-1)).reshape(values.shape)
    exact = bfloat16_to_float32(bits.reshape(-1)).reshape(values.shape).astype(np.float64)
    for axis in (0, 1, 2):
        got = raxis.model(bits, axis=axis)
        assert got.dtype == BFLOAT16
        want = exact.sum(axis=axis)
        got32 = bfloat16_to_float32(got.reshape(-1)).reshape(want.shape)
        assert np.all(np.abs(got32 - want) <= 2.0 ** -8 * np.abs(want) + 1e-4 * np.abs(exact).sum(axis=axis))
        got = saxis.model(bits, axis=axis, op="max")
        np.testing.assert_array_equal(bfloat16_to_float32(got.reshape(-1)).reshape(values.shape),
                                      np.maximum.accumulate(exact, axis=axis).astype(np.float32))


def test_builds_cover_every_pass():
    """prewarm's builds: from x to the result or to compute-type partials, from partials to partials or the result
    (float16: four; int8 add, whose result dtype is its compute type: two), each for the rows kernel and the
    column kernel one lane a thread, and from x narrower than 4 bytes also with runs of lanes, as one load and
    strided; the scans one per kernel, every dtype and operator."""
    assert len(raxis.builds(np.float16, "add")) == 12  # from x: 2 x (rows + 3 column builds); partials: 2 x 2
    assert len(raxis.builds(np.int8, "add")) == 6  # from x: rows + 3 column builds; partials: 2
    columns = [m for k, m in raxis.builds(np.float16, "add") if k == raxis.COLUMNS_KERNEL]
    assert {(m["LANES_PER_THREAD"], m["VECTOR_LOADS"]) for m in columns} == {(2, 1), (2, 0), (1, 1)}
    assert {m["LANES_PER_THREAD"] for k, m in raxis.builds(np.float32, "add") if k == raxis.COLUMNS_KERNEL} == {1}
    assert {m.get("PARTIALS_IN", 0) for _, m in raxis.builds(np.float16, "max")} == {0, 1}
    for dtype, op in CASES:
        assert [k for k, _ in saxis.builds(dtype, op)] == [saxis.ROWS_KERNEL] + [saxis.COLUMNS_KERNEL] * 4
        columns = [m for k, m in saxis.builds(dtype, op) if k == saxis.COLUMNS_KERNEL]
        size = COMPUTE_TYPES[pyscan.types.result_dtype(np.dtype(dtype), op)].itemsize
        most, vector = saxis.column_items(size), saxis.column_lanes_per_thread(np.dtype(dtype).itemsize, size)
        assert sorted((m["ITEMS"], m.get("DIRECT_LOADS", 0), m.get("LANES_PER_THREAD", 1)) for m in columns) == sorted(
            [(most // k, 0, 1) for k in (1, 2)] + [(most // vector // k, 1, vector) for k in (1, 2)])


# ------------------------------------- the axis reduction's own driver, its kernels emulated from their launches

_C_TO_DTYPE = {c: d for d, c in pyscan.types.ELEMENT_TYPES.items()}
_OP_NAMES = {macro: name for name, (macro, _, _) in pyscan.types.OPERATORS.items()}


class FakeAxisKernel:
    """One kernel of axis_rows.cu / axis_columns.cu run on host memory from its #defines and launch arguments: x
    loaded as load_element does (op_load, or the compute-type partials as they are with PARTIALS_IN), each row /
    segment / chunk combined, stored as store_value does (raw where OUT_TYPE is T, else op_store)."""

    folded: list = []

    def __init__(self, function, macros, launches):
        self.function, self.launches = function, launches
        self.in_dtype, self.value = _C_TO_DTYPE[macros["IN_TYPE"]], _C_TO_DTYPE[macros["VALUE_TYPE"]]
        self.compute, self.out_dtype = _C_TO_DTYPE[macros["ELEM_TYPE"]], _C_TO_DTYPE[macros["OUT_TYPE"]]
        self.partials_in = macros.get("PARTIALS_IN", 0) == 1
        self.vec = macros.get("LANES_PER_THREAD", 1)  # the column kernel's lanes a thread
        self.op = _OP_NAMES[macros["OP"]]
        self.folded = FakeAxisKernel.folded  # the chunks (segments) of each launch that took any
        assert self.compute == COMPUTE_TYPES[self.value]
        assert self.out_dtype in (self.value, self.compute) and (not self.partials_in or self.in_dtype == self.compute)

    def config(self, grid, block):
        assert block == 256
        return grid

    def _read(self, address, count):
        raw = np.frombuffer((ctypes.c_char * max(count * self.in_dtype.itemsize, 1)).from_address(address),
                            self.in_dtype, count)
        if self.partials_in:
            return raw.astype(self.compute)
        return load(raw, Types(self.in_dtype, self.value, self.compute))

    def _write(self, address, values):
        values = np.asarray(values).reshape(-1)
        if self.out_dtype != self.compute or self.value == self.compute:
            values = store(values, Types(self.value, self.value, self.compute))
        target = np.frombuffer((ctypes.c_char * max(values.size * self.out_dtype.itemsize, 1)).from_address(address),
                               self.out_dtype, values.size)
        target[...] = values.astype(self.out_dtype, copy=False) if values.dtype != self.out_dtype else values

    def _combine(self, values, axis):
        f, e = ufunc(self.op), identity(self.op, self.compute)
        return f.reduce(values, axis=axis, initial=e) if values.shape[axis] else np.full(
            np.delete(values.shape, axis), e, self.compute)

    def launch_typed(self, context, stream, grid, *args):
        self.launches.append((self.function, grid, args, self.partials_in, self.out_dtype))
        if self.function in ("axis_rows_reduce_short", "axis_rows_reduce_warp"):
            out, x, rows, n, *per_thread = args
            assert grid * (256 * per_thread[0] if self.function.endswith("short") else 8) >= rows
            assert self.function.endswith("short") == bool(per_thread)
            self._write(out, self._combine(self._read(x, rows * n).reshape(rows, n), 1))
        elif self.function == "axis_rows_reduce_block":
            out, partials, tickets, x, n, splits, seg = args
            rows = grid // splits
            assert grid == rows * splits and splits * seg >= n > (splits - 1) * seg
            values = self._read(x, rows * n).reshape(rows, n)
            self._fold(out, partials, tickets, rows, np.stack(
                [self._combine(values[:, s * seg:(s + 1) * seg], 1) for s in range(splits)], 1))
        else:
            out, partials, tickets, x, n, inner, lanes, rows, chunk_rows, lane_chunks, chunks = args
            outer = grid // (lane_chunks * chunks)
            assert grid == outer * lane_chunks * chunks and lanes // self.vec * rows <= 256 and lanes % self.vec == 0
            assert lane_chunks * lanes >= inner and (self.vec == 1 or inner >= 32)
            values = self._read(x, outer * n * inner).reshape(outer, n, inner)
            self._fold(out, partials, tickets, outer * lane_chunks, np.stack(
                [self._combine(values[:, c * chunk_rows:(c + 1) * chunk_rows], 1) for c in range(chunks)], 1))

    def _fold(self, out, partials, tickets, groups, chunk_values):
        """The chunks' (segments') values: with several, kept in the compute type at `partials` (the tickets'
        `groups` counters zero before and after), folded by the last blocks; the results written to out."""
        self.folded.append(chunk_values.shape[1])
        if chunk_values.shape[1] > 1:
            counters = np.frombuffer((ctypes.c_char * (4 * groups)).from_address(tickets), np.uint32, groups)
            assert partials and not counters.any()
            kept = np.frombuffer((ctypes.c_char * (chunk_values.size * self.compute.itemsize)).from_address(partials),
                                 self.compute, chunk_values.size)
            kept[...] = chunk_values.reshape(-1)
            chunk_values = kept.reshape(chunk_values.shape)
        self._write(out, self._combine(chunk_values, 1))


@pytest.fixture
def emulated_axis_gpu(fake_gpu, monkeypatch):  # noqa: F811  (the fixture imported above)
    launches, keep = [], []

    def get_kernel(relpath, function, *, device=None, **macros):
        assert relpath in (raxis.ROWS_KERNEL, raxis.COLUMNS_KERNEL)
        return FakeAxisKernel(function, macros, launches)

    def scratch(self, shape, dtype=np.uint8):
        host = np.zeros(shape, dtype)
        keep.append(host)
        return pyscan.runtime.arrays.DeviceView(host.ctypes.data, host.shape, host.dtype, host)

    class Partials:  # reductions/axis.py's kept partials buffer, in host memory
        def get(self, nbytes, device, stream):
            host = np.zeros(nbytes, np.uint8)
            keep.append(host)
            kept = pyscan.runtime.workspace.Kept()
            kept.address, kept.nbytes, kept.buffer = host.ctypes.data, nbytes, host
            return kept

    monkeypatch.setattr(raxis, "get_kernel", get_kernel)
    monkeypatch.setattr(pyscan.runtime.driver, "multiprocessor_count", lambda device: 2)  # more passes
    monkeypatch.setattr(pyscan.runtime.arrays.Call, "scratch", scratch)
    monkeypatch.setattr(raxis, "_partials", Partials())
    # fake streams never capture (the launcher's cuStreamIsCapturing on a fake handle would crash on a GPU host)
    monkeypatch.setattr(pyscan.runtime.driver, "_capturing", lambda handle: 0)
    monkeypatch.setattr(pyscan.runtime.capture, "prepare_kept", lambda device: None)  # the graphs' kept memory
    monkeypatch.setattr(raxis, "_plans", {})
    monkeypatch.setattr(raxis, "READY", {})
    return launches


@pytest.mark.parametrize("dtype, op", [(np.float16, "add"), (np.int8, "add"), (np.bool_, "logical_and"),
                                       (np.uint16, "bitwise_or"), (np.float32, "max"), (np.int16, "mul"),
                                       (np.uint8, "min"), (np.float64, "add")], ids=str)
def test_reduce_driver_chains_its_passes(dtype, op, emulated_axis_gpu, rng):
    """reduce_along itself (the kernels emulated from their #defines and arguments): one launch an axis pass, its
    chunks' partials in the compute type folded in the launch, the last pass stored in the result dtype; tuple axes
    through compute-type arrays between the plan's passes (OUT_TYPE = T, then PARTIALS_IN)."""
    launches = emulated_axis_gpu
    for shape in [(3, 9000), (9000, 3), (40, 33, 7), (2, 3, 5, 7), (5000, 2)]:
        host = axis_data(rng, shape, dtype, op)
        nd = len(shape)
        for axis in [0, nd - 1, (0, nd - 1)]:
            chosen = axes.normalize_axes(axis, nd, "t")
            launches.clear()
            got = pyscan.reduce(FakeDeviceArray(host), axis=axis, op=op).host
            depth = sum(raxis.error_depth(n, inner, outer, 2) for outer, n, inner in axes.reduce_plan(shape, chosen))
            check_reduce(got, host, op, chosen, False, depth, what=(shape, axis))


def test_reduce_driver_folds_segments_in_one_launch(emulated_axis_gpu, monkeypatch):
    """A long row in several segments and a column in several chunks: one launch each, the partials in the compute
    type, the result stored once in float16; a tuple axis's second pass reads the first's compute-type result."""
    launches = emulated_axis_gpu
    monkeypatch.setattr(FakeAxisKernel, "folded", [])
    for shape, axis, function in [((2, 100000), 1, "axis_rows_reduce_block"), ((100000, 40), 0, "axis_columns_reduce")]:
        launches.clear()
        got = pyscan.reduce(FakeDeviceArray(np.full(shape, 0.1, np.float16)), axis=axis).host
        exact = 100000 * float(np.float16(0.1))
        assert got.dtype == np.float16 and np.allclose(got.astype(np.float64), exact, rtol=2e-3)
        ((name, _, _, partials_in, out_dtype),) = launches
        assert name == function and not partials_in and out_dtype == np.float16 and FakeAxisKernel.folded[-1] > 1
    launches.clear()
    pyscan.reduce(FakeDeviceArray(np.full((3, 5000, 40), 0.1, np.float16)), axis=(0, 2))
    assert [(p_in, out) for _, _, _, p_in, out in launches] == [(False, np.float32), (True, np.float16)]


def _counting_begin(monkeypatch):
    begun = []
    real = arrays.begin

    def begin(x, **kwargs):
        begun.append(kwargs.get("what"))
        return real(x, **kwargs)

    monkeypatch.setattr(arrays, "begin", begin)
    return begun


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5), (4, 1, 6)])
def test_a_repeated_axis_scan_takes_the_plan_its_first_call_made(shape, fake_axis_gpu, monkeypatch):
    """The second call with the same (shape, dtype, axis, op, exclusive, dtype=) skips begin(): the plan the first
    made (scans/axis.py READY), its result made by x's library, right as the first."""
    _, (_, kind) = fake_axis_gpu
    begun = _counting_begin(monkeypatch)
    rng = np.random.default_rng(5)
    for axis in range(-len(shape), len(shape)):
        for op, exclusive, dtype in (("add", False, None), ("max", True, None), ("add", True, np.int32)):
            host = rng.integers(-9, 9, shape).astype(np.int32)
            begun.clear()
            first = pyscan.scan(FakeDeviceArray(host), axis=axis, op=op, exclusive=exclusive, dtype=dtype)
            made = len(kind.made)
            second = pyscan.scan(FakeDeviceArray(host), axis=axis, op=op, exclusive=exclusive, dtype=dtype)
            assert isinstance(second, FakeDeviceArray) and len(kind.made) == made + 1  # made by x's library
            result = np.dtype(dtype or (np.int64 if op == "add" else np.int32))  # NumPy's accumulator rule
            expected = scan_reference(host.astype(result), axis, op, exclusive)
            for got in (first, second):
                assert got.host.dtype == expected.dtype and got.host.shape == shape
                np.testing.assert_array_equal(got.host, expected)
            taken = 2 if len(shape) - 1 == axis % len(shape) and shape[axis] == host.size else 1
            assert len(begun) == taken, (axis, op, begun)  # a whole-array scan (1, 7) along 1 is the 1-D path


def test_the_axis_ready_path_refuses_what_it_did_not_plan(fake_axis_gpu, monkeypatch):
    """A strided view, another dtype=, op or exclusive, or an unhashable axis take the general path (which checks
    and answers them) again."""
    begun = _counting_begin(monkeypatch)
    host = np.arange(24, dtype=np.int32).reshape(4, 6)
    pyscan.scan(FakeDeviceArray(host), axis=0)
    pyscan.reduce(FakeDeviceArray(host), axis=0)
    begun.clear()
    np.testing.assert_array_equal(pyscan.scan(FakeDeviceArray(host), axis=0).host, np.cumsum(host, axis=0))
    np.testing.assert_array_equal(pyscan.reduce(FakeDeviceArray(host), axis=0).host, np.sum(host, axis=0))
    assert begun == []
    for call in (lambda: pyscan.scan(FakeDeviceArray(host), axis=0, dtype=np.int32),
                 lambda: pyscan.scan(FakeDeviceArray(host), axis=0, exclusive=True),
                 lambda: pyscan.scan(FakeDeviceArray(host), axis=0, op="max"),
                 lambda: pyscan.reduce(FakeDeviceArray(host), axis=0, keepdims=True),
                 lambda: pyscan.reduce(FakeDeviceArray(host), axis=[0])):
        begun.clear()
        call()
        assert len(begun) == 1
    begun.clear()
    strided = FakeDeviceArray(host[:, ::2])
    with pytest.raises(ValueError, match="contiguous"):
        pyscan.scan(strided, axis=0)  # the fake library cannot copy: refused by begin(), as before
    assert len(begun) == 1


@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 2), (1, 2), (0, 1)])
def test_a_repeated_axis_reduction_takes_the_plan_its_first_call_made(axis, fake_axis_gpu, monkeypatch):
    _, (_, kind) = fake_axis_gpu
    begun = _counting_begin(monkeypatch)
    host = np.random.default_rng(6).integers(-9, 9, (3, 5, 4)).astype(np.int16)
    for keepdims in (False, True):
        for op, dtype in (("add", None), ("min", None), ("add", np.float32)):
            begun.clear()
            results = [pyscan.reduce(FakeDeviceArray(host), axis=axis, op=op, keepdims=keepdims, dtype=dtype)
                       for _ in range(3)]
            expected = reduce_reference_along(host, axis, op, keepdims, dtype)
            for got in results:
                assert isinstance(got, FakeDeviceArray)
                assert got.host.dtype == expected.dtype and got.host.shape == expected.shape
                np.testing.assert_array_equal(got.host, expected)
            assert len(begun) == 1, (keepdims, op, dtype)


def reduce_reference_along(host, axis, op, keepdims, dtype):
    function = {"add": np.sum, "min": np.min}[op]
    return np.asarray(function(host, axis=axis, keepdims=keepdims, **({"dtype": dtype} if dtype else {})))


def test_the_plan_caches_keep_the_newest_and_renew_without_evicting(monkeypatch):
    monkeypatch.setattr(axes, "PLANS_KEPT", 2)
    cache = {}
    for key in ("a", "b", "b", "a", "c"):
        axes.keep(cache, key, key.upper())
    assert cache == {"b": "B", "c": "C"}  # renewing a key dropped nothing; the third key dropped the oldest
    assert axes.call_key((4, 5), 1, [0]) is None and axes.call_key((4, 5), 1, 0) == ((4, 5), 1, 0)


def test_the_axis_algorithm_and_unit_extents_run_the_plan(emulated_axis_gpu, rng):
    """The registry's 1-D "axis" reduction (reduce_along: one (1, n, 1) launch, its segments' partials folded in it)
    and a reduction over extents of 1 into a wider dtype (one pass over rows of one element: the kernels'
    conversion), on the emulated kernels."""
    launches = emulated_axis_gpu
    host = rng.integers(-100, 100, 70000).astype(np.int32)
    got = pyscan.reduce(FakeDeviceArray(host), algorithm="axis").host
    assert got.dtype == np.int64 and got == host.sum() and len(launches) == 1 and launches[0][1] > 1  # segments
    launches.clear()
    small = rng.integers(-100, 100, (5, 1)).astype(np.int8)
    got = pyscan.reduce(FakeDeviceArray(small), axis=1).host
    np.testing.assert_array_equal(got, small.sum(axis=1))
    assert got.dtype == np.int64 and len(launches) == 1


def test_every_reduce_function_is_declared_in_its_kernel_file():
    """Each kernel the axis reduction's plans name is a __global__ function the loader reads off its file, with the
    arguments the plans pass (the pointers -- out, for the kernels whose last blocks fold partials the partials and
    the tickets, x -- then the pass geometry): no launch can name a function it cannot find."""
    from pyscan.runtime.loader import build_source, global_functions, signature

    views = {"rows_short": (5, 3, 1, 2), "rows_warp": (10**6, 100, 1, 2), "rows_block": (2, 10**6, 1, 2),
             "columns": (2, 100, 64, 2)}
    for kind, (kernel, function) in raxis.REDUCE_FUNCTIONS.items():
        source = build_source(kernel, **axes.kernel_macros(np.float16, np.float16, np.float32, "add"))
        assert function in global_functions(source), (kind, function)
        outer, n, inner, itemsize = views[kind]
        planned = raxis.pass_plan(outer, n, inner, 132, itemsize)
        assert planned[0] == kind
        pointers = 4 if kind in ("rows_block", "columns") else 2
        assert len(signature(source, function)) == pointers + len(planned[3]), (kind, signature(source, function))
