"""pyscan.argmax / pyscan.argmin without a GPU (kernels/reduction/arg_extreme.cu, pyscan/reductions/arg_extreme.py):
the model against np.argmax / np.argmin for every dtype (NaN, ties, infinities, -0.0, extents 0, 1, 31, 32, 33 and
primes, 3-D and 4-D, every axis, keepdims, plans of several passes), the pair combine's total order, empty inputs,
and the public functions end to end on the fake device of test_interop -- with the kernels emulated on host memory
from the arguments the driver launches them with, so the glue (argument order, partial tables, pass chaining) is
tested -- and the kernel compiled for every dtype."""

import ctypes
import math

import numpy as np
import pytest
from argextreme_checks import make
from nvcc_builds import NVCC, compile_failures
from test_interop import FakeDeviceArray, fake_gpu  # noqa: F401  (the fake device's fixture)

import pyscan
from pyscan.reductions import arg_extreme as ae
from pyscan.runtime import arrays, driver
from pyscan.types import BFLOAT16, COMPUTE_TYPES, ELEMENT_TYPES, NUMPY_DTYPES, Types, float32_to_bfloat16, load

SHAPES = [(1,), (2,), (31,), (32,), (33,), (97,), (5000,), (1, 1), (3, 4), (31, 33), (33, 32), (7, 1, 13),
          (2, 33, 31), (3, 2, 5, 7), (1, 1, 1, 2), (257, 3), (3, 257)]
FUNCTIONS = ((True, np.argmax), (False, np.argmin))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_model_matches_numpy_every_axis(dtype, rng):
    for shape in SHAPES:
        for special in (False, True):
            x = make(rng, shape, dtype, special)
            for largest, f in FUNCTIONS:
                got = ae.model(x, largest=largest)
                assert isinstance(got, np.int64) and got == f(x), (shape, largest)
                assert ae.model(x, largest=largest, keepdims=True).shape == f(x, keepdims=True).shape
                for axis in range(-len(shape), len(shape)):
                    for keepdims in (False, True):
                        got = ae.model(x, largest=largest, axis=axis, keepdims=keepdims)
                        want = f(x, axis=axis, keepdims=keepdims)
                        assert got.dtype == np.int64 and got.shape == want.shape
                        np.testing.assert_array_equal(got, want, err_msg=str((shape, axis, largest)))


@pytest.mark.parametrize("shape, axis", [((300000,), None), ((2, 150000), 1), ((150000, 2), 0), ((40, 9000, 3), 1),
                                         ((3, 70000), None), ((2 ** 15, 2), 1), ((5, 20000), 0)])
def test_model_plans_of_several_passes(shape, axis, rng):
    """Lengths that cut rows into segments and columns into chunks (partials, then a second pass), with a NaN and
    ties placed across the segment boundaries; a small SM count makes more passes."""
    x = rng.integers(-2, 3, math.prod(shape)).astype(np.float32).reshape(shape)
    for sms in (2, 132):
        for largest, f in FUNCTIONS:
            np.testing.assert_array_equal(ae.model(x, largest=largest, axis=axis, sms=sms), f(x, axis=axis))
        y = x.copy()
        y.reshape(-1)[[y.size // 3, 2 * y.size // 3]] = np.nan
        for largest, f in FUNCTIONS:
            np.testing.assert_array_equal(ae.model(y, largest=largest, axis=axis, sms=sms), f(y, axis=axis))


def test_numpys_rules_one_by_one():
    x = np.array([1.0, 5.0, 5.0, np.nan, 5.0, np.nan], np.float32)
    assert ae.model(x) == np.argmax(x) == 3 and ae.model(x, largest=False) == np.argmin(x) == 3  # first NaN
    x = np.array([2, 7, 7, 1, 1], np.int8)
    assert ae.model(x) == 1 and ae.model(x, largest=False) == 3  # first of the ties
    x = np.array([-np.inf, -np.inf], np.float64)
    assert ae.model(x) == 0 and ae.model(x, largest=False) == 0  # identity-valued elements still win
    x = np.array([0.0, -0.0, 0.0], np.float16)
    assert ae.model(x) == np.argmax(x) == 0 and ae.model(x, largest=False) == np.argmin(x) == 0
    x = np.array([np.iinfo(np.uint64).max, 0, np.iinfo(np.uint64).max], np.uint64)
    assert ae.model(x) == 0 and ae.model(x, largest=False) == 1
    x = np.array([False, True, True])
    assert ae.model(x) == 1 and ae.model(x, largest=False) == 0
    assert ae.model(np.array(3.5)) == 0 and ae.model(np.array(3.5), axis=0) == 0  # 0-d, as NumPy


def test_bfloat16_model():
    values = np.array([1.0, 3.0, -2.0, 3.0, np.nan, -7.0], np.float32)
    bits = float32_to_bfloat16(values)
    assert bits.dtype == BFLOAT16
    assert ae.model(bits) == 4 and ae.model(bits[:4]) == 1 and ae.model(bits[:4], largest=False) == 2


def _better(a, b, largest):
    """arg_extreme.cu's better(), one pair at a time."""
    an, bn = math.isnan(a[0]), math.isnan(b[0])
    if an or bn:
        return a if an and (not bn or a[1] < b[1]) else b
    if largest:
        return a if a[0] > b[0] or (a[0] == b[0] and a[1] < b[1]) else b
    return a if a[0] < b[0] or (a[0] == b[0] and a[1] < b[1]) else b


def test_the_combine_is_a_total_order(rng):
    """Associative and commutative: any tree, any order of combines gives the same pair (the kernels' trees)."""
    values = [1.0, 2.0, 2.0, float("nan"), -float("inf"), float("inf"), 0.0, -0.0, float("nan")]
    pairs = [(v, i) for i, v in enumerate(values)]
    for largest in (True, False):
        reference = ae._best(np.array(values), np.arange(len(values)), largest)[1]
        for _ in range(200):
            order = rng.permutation(len(pairs))
            pool = [pairs[k] for k in order]
            while len(pool) > 1:  # a random tree
                k = int(rng.integers(0, len(pool) - 1))
                first, second = (pool[k], pool[k + 1]) if rng.random() < 0.5 else (pool[k + 1], pool[k])
                pool[k:k + 2] = [_better(first, second, largest)]
            assert pool[0][1] == reference == 3


def test_empty_raises_as_numpy():
    for largest, f in FUNCTIONS:
        for shape, axis in [((0,), None), ((3, 0), 1), ((0, 3), 0), ((2, 0, 4), None)]:
            x = np.zeros(shape, np.float32)
            with pytest.raises(ValueError, match="attempt to get arg(max|min) of an empty sequence"):
                f(x, axis=axis)
            with pytest.raises(ValueError, match="attempt to get arg(max|min) of an empty sequence"):
                ae.model(x, largest=largest, axis=axis)
        x = np.zeros((3, 0), np.int32)  # an empty result, not an empty sequence: NumPy gives shape (0,)
        assert ae.model(x, largest=largest, axis=0).shape == f(x, axis=0).shape == (0,)


def test_bad_axes():
    with pytest.raises(TypeError, match="int or None"):
        ae.model(np.zeros((2, 3)), axis=(0, 1))
    with pytest.raises(ValueError, match="out of bounds"):
        ae.model(np.zeros((2, 3)), axis=2)


def test_builds_every_dtype():
    for dtype in ELEMENT_TYPES:
        found = ae.builds(dtype)
        assert [m["ARG_LARGEST"] for _, m in found] == [1, 0]
        assert all(m["IN_TYPE"] == ELEMENT_TYPES[dtype] and m["ELEM_TYPE"] == ELEMENT_TYPES[COMPUTE_TYPES[dtype]]
                   for _, m in found)


def test_exported():
    assert pyscan.argmax is pyscan.reductions.argmax and "argmin" in pyscan.__all__


# ------------------------------------------------------------------------- end to end on the fake device

_C_TO_DTYPE = {c: d for d, c in ELEMENT_TYPES.items()}


def _host(address, count, dtype):
    dtype = np.dtype(dtype)
    buffer = (ctypes.c_char * max(count * dtype.itemsize, 1)).from_address(address)
    return np.frombuffer(buffer, dtype=dtype, count=count)


class FakeKernel:
    """One arg_extreme.cu kernel run on host memory from its launch arguments: the pairs it reads (x loaded as the
    kernel's op_load, or the (value, index) partials), the best pair of each row / segment / chunk, written as the
    kernel writes them."""

    def __init__(self, function, macros, launches):
        self.function, self.macros, self.launches = function, macros, launches
        self.dtype = _C_TO_DTYPE[macros["IN_TYPE"]]
        self.compute = COMPUTE_TYPES[self.dtype]
        self.largest = bool(macros["ARG_LARGEST"])

    def config(self, grid, block):
        assert block == 256
        return grid

    def _pairs(self, x, in_value, in_index, count, positions):
        if in_value:
            return _host(in_value, count, self.compute), _host(in_index, count, np.int64)
        values = load(_host(x, count, self.dtype), Types(self.dtype, self.dtype, self.compute))
        return values, positions

    def _write(self, out_index, out_value, values, indices):
        _host(out_index, indices.size, np.int64)[...] = indices.reshape(-1)
        if out_value:
            _host(out_value, values.size, self.compute)[...] = values.reshape(-1)

    def launch_typed(self, context, stream, grid, *args):
        self.launches.append((self.function, grid, args))
        out_index, out_value, x, in_value, in_index = args[:5]
        if self.function in ("arg_extreme_rows_thread", "arg_extreme_rows_warp"):
            rows, n = args[5:]
            assert grid * (256 if self.function.endswith("thread") else 8) >= rows
            values, indices = self._pairs(x, in_value, in_index, rows * n, np.tile(np.arange(n), rows))
            best = ae._best(values.reshape(rows, n), np.asarray(indices).reshape(rows, n), self.largest)
        elif self.function == "arg_extreme_rows_block":
            n, splits, seg = args[5:]
            rows = grid // splits
            assert grid == rows * splits and splits * seg >= n > (splits - 1) * seg
            values, indices = self._pairs(x, in_value, in_index, rows * n, np.tile(np.arange(n), rows))
            values, indices = values.reshape(rows, n), np.asarray(indices).reshape(rows, n)
            parts = [ae._best(values[:, s * seg:(s + 1) * seg], indices[:, s * seg:(s + 1) * seg], self.largest)
                     for s in range(splits)]
            best = np.stack([p[0] for p in parts], 1), np.stack([p[1] for p in parts], 1)
        else:
            n, inner, lanes, rows, chunk_rows, lane_chunks, chunks = args[5:]
            outer = grid // (lane_chunks * chunks)
            assert grid == outer * lane_chunks * chunks and lanes * rows <= 256 and lane_chunks * lanes >= inner
            positions = np.broadcast_to(np.arange(n)[None, :, None], (outer, n, inner)).reshape(-1)
            values, indices = self._pairs(x, in_value, in_index, outer * n * inner, positions)
            values, indices = values.reshape(outer, n, inner), np.asarray(indices).reshape(outer, n, inner)
            parts = [ae._best(np.moveaxis(values[:, c * chunk_rows:(c + 1) * chunk_rows], 1, 2),
                              np.moveaxis(indices[:, c * chunk_rows:(c + 1) * chunk_rows], 1, 2), self.largest)
                     for c in range(chunks)]
            best = np.stack([p[0] for p in parts], 1), np.stack([p[1] for p in parts], 1)
        self._write(out_index, out_value, *best)


@pytest.fixture
def fake_arg_gpu(fake_gpu, monkeypatch):  # noqa: F811  (the fixture imported above)
    launches, keep = [], []

    def get_kernel(relpath, function, *, device=None, **macros):
        assert relpath == ae.KERNEL
        return FakeKernel(function, macros, launches)

    def scratch(self, shape, dtype=np.uint8):
        host = np.zeros(shape, dtype)
        keep.append(host)
        return arrays.DeviceView(host.ctypes.data, host.shape, host.dtype, host)

    class HostBuffer:  # pyscan's own device memory, on the host (NumPy input's upload and result)
        def __init__(self, nbytes):
            self.host = np.zeros(max(nbytes, 1), np.uint8)
            self.address = self.host.ctypes.data

    monkeypatch.setattr(ae, "get_kernel", get_kernel)
    monkeypatch.setattr(driver, "multiprocessor_count", lambda device: 2)  # small grids: more passes
    monkeypatch.setattr(arrays.Call, "scratch", scratch)
    monkeypatch.setattr(driver, "allocate", lambda nbytes, device, stream: HostBuffer(nbytes))
    monkeypatch.setattr(driver, "copy_dtoh", lambda host, device, n, stream: ctypes.memmove(host, device, n))
    monkeypatch.setattr(driver, "default_device", lambda: 0)
    return launches


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float32,
                                   np.float64], ids=lambda d: np.dtype(d).name)
def test_public_functions_on_the_fake_device(dtype, fake_arg_gpu, rng):
    for shape in [(33,), (5000,), (3, 4), (2, 33, 31), (3, 2, 5, 7), (40, 9000), (9000, 5), (2 ** 13, 3)]:
        host = make(rng, shape, dtype)
        for largest, f in FUNCTIONS:
            public = pyscan.argmax if largest else pyscan.argmin
            got = public(FakeDeviceArray(host))
            assert isinstance(got, FakeDeviceArray) and got.host.shape == () and got.host.dtype == np.int64
            assert got.host == f(host), (shape, largest)
            for axis in range(-len(shape), len(shape)):
                got = public(FakeDeviceArray(host), axis=axis).host
                np.testing.assert_array_equal(got, f(host, axis=axis), err_msg=str((shape, axis, largest)))
                assert got.dtype == np.int64
            got = public(FakeDeviceArray(host), axis=0, keepdims=True).host
            assert got.shape == f(host, axis=0, keepdims=True).shape


def test_numpy_input_gives_numpy_results(fake_arg_gpu, rng):
    """NumPy in: uploaded, an np.int64 for axis=None (as np.argmax), NumPy int64 arrays along an axis, out= a NumPy
    array; non-contiguous views made contiguous first."""
    host = make(rng, (34, 66, 5), np.float32)
    for view in (host, host[:, ::2], host.transpose(2, 0, 1)):
        for public, f in ((pyscan.argmax, np.argmax), (pyscan.argmin, np.argmin)):
            got = public(view)
            assert type(got) is np.int64 and got == f(view)
            assert public(view, keepdims=True).shape == (1, 1, 1)
            for axis in range(3):
                got = public(view, axis=axis)
                assert type(got) is np.ndarray and got.dtype == np.int64
                np.testing.assert_array_equal(got, f(view, axis=axis))
    out = np.zeros((34, 5), np.int64)
    assert pyscan.argmax(host, axis=1, out=out) is out
    np.testing.assert_array_equal(out, np.argmax(host, axis=1))
    assert pyscan.argmin(np.array(2.5)) == 0
    with pytest.raises(ValueError, match="empty sequence"):
        pyscan.argmax(np.zeros(0))


def test_passes_and_kernels_chosen(fake_arg_gpu):
    launches = fake_arg_gpu
    x = FakeDeviceArray(np.arange(100000, dtype=np.float32))
    assert pyscan.argmax(x).host == 99999
    assert [name for name, _, _ in launches] == ["arg_extreme_rows_block", "arg_extreme_rows_thread"]
    first, second = launches[0][2], launches[1][2]
    assert first[1] and first[3] == 0 and second[3] == first[1] and second[4] == first[0]  # partials chained
    assert second[1] == 0  # the last pass writes indices only
    launches.clear()
    pyscan.argmin(FakeDeviceArray(np.zeros((40000, 3), np.int16)), axis=0)
    assert {name for name, _, _ in launches} == {"arg_extreme_columns"} and len(launches) == 2
    launches.clear()
    pyscan.argmin(FakeDeviceArray(np.zeros((4000, 300), np.int16)), axis=1)
    assert [name for name, _, _ in launches] == ["arg_extreme_rows_warp"]


def test_public_errors_and_out(fake_arg_gpu):
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        pyscan.argmax(FakeDeviceArray(np.zeros((0,), np.float32)))
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        pyscan.argmin(FakeDeviceArray(np.zeros((4, 0), np.float32)), axis=1)
    assert pyscan.argmin(FakeDeviceArray(np.zeros((0, 4), np.float32)), axis=1).host.shape == (0,)
    with pytest.raises(TypeError, match="int or None"):
        pyscan.argmax(FakeDeviceArray(np.zeros((2, 3))), axis=(0, 1))
    with pytest.raises(ValueError, match="out of bounds"):
        pyscan.argmax(FakeDeviceArray(np.zeros((2, 3))), axis=-3)
    with pytest.raises(TypeError, match="keepdims"):
        pyscan.argmax(FakeDeviceArray(np.zeros((2, 3))), keepdims=3)
    with pytest.raises(TypeError, match="unsupported dtype complex64"):
        pyscan.argmax(FakeDeviceArray(np.zeros(3, np.complex64)))
    host = np.array([[1, 9, 9], [7, 0, 7]], np.int32)
    out = FakeDeviceArray(np.zeros(2, np.int64))
    assert pyscan.argmax(FakeDeviceArray(host), axis=1, out=out) is out
    np.testing.assert_array_equal(out.host, [1, 0])
    with pytest.raises(ValueError, match="dtype int64"):
        pyscan.argmax(FakeDeviceArray(host), axis=1, out=FakeDeviceArray(np.zeros(2, np.int32)))


# ------------------------------------------------------------------------------------------------- compile

@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_kernel_compiles_for_every_dtype(tmp_path):
    from pyscan.runtime.loader import build_source

    sources = [(f"{dtype}-{m['ARG_LARGEST']}", build_source(path, **m)) for dtype in ELEMENT_TYPES
               for path, m in ae.builds(dtype)]

    failures = compile_failures(tmp_path, sources)
    assert not failures, "\n".join(f"{case}:\n{log[:2000]}" for case, log in failures.items())
