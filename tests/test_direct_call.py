"""The public call's direct path (pyscan.arrays.DIRECT_KINDS), tested without a GPU.

A call with nothing but x and op given, on a 1-D contiguous CuPy or torch array whose device's context is current,
launches straight from a view of x (no Call, no thread-local state).  These tests check which calls take it and
which go through begin() (everything else, every refusal included), that both paths give the same result on the
same stream and context, that the scan and reduce drivers and the direct path launch the very same kernels with
the very same arguments, and that torch's and CuPy's views read what begin() reads.
"""

import ctypes
import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import pyscan
from pyscan import arrays, gpu, streams
from pyscan.reductions import fast
from pyscan.reductions.registry import REDUCTIONS
from pyscan.scans import decoupled_lookback as dl
from pyscan.scans.registry import SCANS
from pyscan.types import identity, ufunc


def _host(address, shape, dtype):
    dtype = np.dtype(dtype)
    count = int(np.prod(shape)) if shape else 1
    buffer = (ctypes.c_char * max(count * dtype.itemsize, 1)).from_address(address)
    return np.frombuffer(buffer, dtype=dtype, count=count).reshape(shape)


class Array:
    """A 'device' array of a fake library with a current stream (as CuPy and torch have): host memory."""

    def __init__(self, host, device=0):
        self.host, self.device = host, device

    @property
    def address(self):
        return self.host.ctypes.data


class Library(arrays.Kind):
    """The fake library as pyscan sees it, direct path included; its current stream is per thread."""

    name, library_streams, direct_path, fix_contiguous = "fake", True, True, "fake.ascontiguous(x)"

    def __init__(self):
        self.local = threading.local()
        self.made = []

    @property
    def current_stream(self):
        return getattr(self.local, "stream", 7)

    def view(self, x):
        host = x.host
        return x.address, host.shape, host.dtype, host.flags.c_contiguous, x.device

    def default_stream(self, x, device):
        return self.current_stream

    def direct(self, x):  # what _CuPy.direct / _Torch.direct return, read off the fake
        host = x.host
        if host.ndim != 1 or not host.flags.c_contiguous:
            return None
        context = gpu.primary_if_current(x.device)
        if not context:
            return None
        return x.address, host.size, host.dtype, self.current_stream, context

    def _make(self, shape, dtype, device, stream):
        self.made.append((tuple(shape), np.dtype(dtype), device, stream))
        return Array(np.full(shape, 99, dtype), device)

    def empty(self, shape, dtype, device, stream, on_library_stream=True):
        return self._make(shape, dtype, device, stream)

    def new_like(self, x, n, dtype):
        native = self._make((n,), dtype, x.device, self.current_stream)
        return native, native.address

    def new_scalar(self, x, dtype, context):
        assert context == 1000 + x.device
        native = self._make((), dtype, x.device, self.current_stream)
        return native, native.address

    def pointer(self, native):
        return native.address

    def zero_d(self, native):
        return Array(native.host.reshape(()), native.device)


@pytest.fixture
def fake(monkeypatch):
    """The fake library registered as a direct kind; devices 0 and 1 current (contexts 1000 + device), device 2
    not; the registered drivers and direct launches replaced by NumPy on the same addresses, each recording which
    path ran on which stream and context."""
    library = Library()
    seen = []
    current = {0, 1}
    monkeypatch.setitem(arrays._kinds_by_type, Array, library)
    monkeypatch.setitem(arrays.DIRECT_KINDS, Array, library)
    monkeypatch.setattr(gpu, "primary_if_current", lambda device: 1000 + device if device in current else 0)
    monkeypatch.setattr(gpu, "enter_device", lambda ordinal, keep_current=False: (-1, 1000 + ordinal))
    monkeypatch.setattr(gpu, "leave_device", lambda previous: None)

    def scan_values(x_address, n, dtype, op, exclusive):
        values = _host(x_address, (n,), dtype).copy()
        result = ufunc(op).accumulate(values, dtype=dtype)
        return np.concatenate([[identity(op, dtype)], result[:-1]]).astype(dtype) if exclusive else result

    def scan_direct(out, x, n, dtype, op, exclusive, stream, context):
        seen.append(("direct", stream, context))
        _host(out, (n,), dtype)[...] = scan_values(x, n, dtype, op, exclusive)

    def scan_driver(x, out, *, op, exclusive):
        seen.append(("driver", streams.current(), streams._local.context))
        _host(out.gpudata, (x.size,), x.dtype)[...] = scan_values(x.gpudata, x.size, x.dtype, op, exclusive)
        return 1

    def reduce_direct(out, x, n, dtype, op, stream, context):
        seen.append(("direct", stream, context))
        _host(out, (), dtype)[...] = ufunc(op).reduce(_host(x, (n,), dtype), dtype=dtype)

    def reduce_launch(x, *, op, out=None):
        seen.append(("driver", streams.current(), streams._local.context))
        out = arrays.empty((1,), x.dtype) if out is None else out
        _host(out.gpudata, (), x.dtype)[...] = ufunc(op).reduce(_host(x.gpudata, (x.size,), x.dtype), dtype=x.dtype)
        return out

    for registry, name, fields in ((SCANS, "decoupled_lookback", {"driver": scan_driver, "direct": scan_direct}),
                                   (REDUCTIONS, "fast", {"launch": reduce_launch, "direct": reduce_direct})):
        entry = registry._algorithms[name]
        monkeypatch.setitem(registry._algorithms, name, dataclasses.replace(entry, **fields))
    return library, seen


def _int_array(n, device=0, dtype=np.int32):
    return Array(np.arange(1, n + 1, dtype=dtype) % 7 - 3, device)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 33, 1025])
def test_the_default_call_goes_straight_to_the_launch(fake, monkeypatch, dtype, n):
    library, seen = fake
    monkeypatch.setattr(arrays, "begin", lambda *a, **k: pytest.fail("the direct path must not call begin()"))
    x = _int_array(n, device=1, dtype=dtype)
    before = x.host.copy()
    for op in ("add", "max", "min"):
        for exclusive in (False, True):
            result = pyscan.scan(x, op=op, exclusive=exclusive)
            expected = ufunc(op).accumulate(before, dtype=before.dtype)
            if exclusive:
                expected = np.concatenate([[identity(op, before.dtype)], expected[:-1]])
            np.testing.assert_array_equal(result.host, expected)
            assert result.device == 1
        total = pyscan.reduce(x, op=op)
        assert total.host.shape == () and total.host == ufunc(op).reduce(before, dtype=before.dtype)
    np.testing.assert_array_equal(x.host, before)  # the input is never modified
    assert seen == [("direct", 7, 1001)] * 9
    assert library.made == ([((n,), np.dtype(dtype), 1, 7)] * 2 + [((), np.dtype(dtype), 1, 7)]) * 3


def test_threads_run_on_their_own_current_stream(fake):
    library, seen = fake

    def work(i):
        library.local.stream = 100 + i
        x = _int_array(50 + i, device=i % 2)
        return i, pyscan.scan(x), pyscan.reduce(x)

    with ThreadPoolExecutor(max_workers=8) as pool:
        done = list(pool.map(work, range(16)))
    for i, scanned, total in done:
        expected = np.arange(1, 51 + i, dtype=np.int32) % 7 - 3
        np.testing.assert_array_equal(scanned.host, np.cumsum(expected, dtype=np.int32))
        assert total.host == expected.sum()
    assert sorted(seen) == sorted(("direct", 100 + i, 1000 + i % 2) for i in range(16) for _ in range(2))


# Calls the direct path leaves to begin(): same results, or the general path's refusal.
GENERAL = [
    pytest.param(lambda f, x: f(x, stream=9), id="stream="),
    pytest.param(lambda f, x: f(x, algorithm="fast" if f is pyscan.reduce else "decoupled_lookback"),
                 id="algorithm named"),
]


@pytest.mark.parametrize("call", GENERAL)
@pytest.mark.parametrize("function", [pyscan.scan, pyscan.reduce])
def test_calls_with_more_arguments_go_through_begin(fake, function, call):
    library, seen = fake
    x = _int_array(40)
    result = call(function, x)
    expected = np.cumsum(x.host, dtype=np.int32) if function is pyscan.scan else x.host.sum(dtype=np.int32)
    np.testing.assert_array_equal(result.host, expected)
    assert [path for path, _, _ in seen] == ["driver"]


def test_scan_with_out_or_a_numpy_bool_goes_through_begin(fake):
    library, seen = fake
    x = _int_array(40)
    out = Array(np.zeros(40, np.int32))
    assert pyscan.scan(x, out=out) is out
    np.testing.assert_array_equal(out.host, np.cumsum(x.host, dtype=np.int32))
    result = pyscan.scan(x, exclusive=np.bool_(True))
    np.testing.assert_array_equal(result.host[1:], np.cumsum(x.host, dtype=np.int32)[:-1])
    assert [path for path, _, _ in seen] == ["driver", "driver"]


def test_a_device_whose_context_is_not_current_goes_through_begin(fake):
    library, seen = fake
    x = _int_array(40, device=2)
    np.testing.assert_array_equal(pyscan.scan(x).host, np.cumsum(x.host, dtype=np.int32))
    assert pyscan.reduce(x).host == x.host.sum()
    assert seen == [("driver", 7, 1002)] * 2


@pytest.mark.parametrize("host, error, words", [
    (np.zeros((2, 2), np.float32), ValueError, "1-D"),
    (np.arange(20, dtype=np.float64)[::2], ValueError, r"not contiguous.*fake\.ascontiguous"),
    (np.zeros(3, np.int16), TypeError, "unsupported dtype int16"),
])
@pytest.mark.parametrize("function", [pyscan.scan, pyscan.reduce])
def test_bad_arrays_get_begins_refusal(fake, function, host, error, words):
    with pytest.raises(error, match=words):
        function(Array(host))
    assert fake[1] == []


@pytest.mark.parametrize("function", [pyscan.scan, pyscan.reduce])
@pytest.mark.parametrize("op", ["mul", ["add"], None])
def test_bad_operators_are_refused_as_before(fake, function, op):
    with pytest.raises(ValueError, match="unknown op"):
        function(_int_array(8), op=op)
    assert fake[1] == []


def test_bad_exclusive_is_refused(fake):
    with pytest.raises(TypeError, match="exclusive must be True or False"):
        pyscan.scan(_int_array(8), exclusive="yes")


def test_empty_arrays_go_through_begin(fake):
    library, seen = fake
    x = Array(np.zeros(0, np.float32))
    assert pyscan.scan(x).host.shape == (0,)
    with pytest.raises(ValueError, match="zero-size"):
        pyscan.reduce(x, op="max")
    assert seen == []


def test_an_auto_algorithm_with_a_length_limit_has_no_direct_path(fake, monkeypatch):
    entry = SCANS._algorithms["decoupled_lookback"]
    monkeypatch.setitem(SCANS._algorithms, "decoupled_lookback", dataclasses.replace(entry, max_length=100))
    assert SCANS.auto_direct() is None
    monkeypatch.setitem(SCANS._algorithms, "decoupled_lookback", dataclasses.replace(entry, max_length=None))
    assert SCANS.auto_direct() is entry.direct
    assert REDUCTIONS.auto_direct() is REDUCTIONS.get("fast").direct


# --- the views of the real kinds -------------------------------------------------------------------------------

class _TorchLike:
    """What _Torch.direct reads of a tensor."""

    def __init__(self, dtype="int32", shape=(5,), contiguous=True, device=0):
        self.dtype, self.shape, self.contiguous, self.device = dtype, shape, contiguous, device

    def dim(self):
        return len(self.shape)

    def is_contiguous(self):
        return self.contiguous

    def get_device(self):
        return self.device

    def data_ptr(self):
        return 0x7000

    def numel(self):
        return int(np.prod(self.shape))


@pytest.fixture
def torch_view(monkeypatch):
    monkeypatch.setattr(arrays._Torch, "_to_numpy", {"int32": np.dtype(np.int32)})
    monkeypatch.setattr(arrays._Torch, "_current_stream", staticmethod(lambda device: 500 + device))
    monkeypatch.setattr(gpu, "primary_if_current", lambda device: 1000 + device if device in (0, 1) else 0)
    return arrays.TORCH.direct


def test_torch_view_reads_what_begin_reads(torch_view):
    assert torch_view(_TorchLike(device=1)) == (0x7000, 5, np.dtype(np.int32), 501, 1001)


@pytest.mark.parametrize("tensor", [_TorchLike(dtype="bfloat16"), _TorchLike(shape=(2, 3)), _TorchLike(shape=()),
                                    _TorchLike(contiguous=False), _TorchLike(device=-1), _TorchLike(device=2)],
                         ids=["dtype", "2-D", "0-D", "strided", "cpu", "not current"])
def test_torch_view_leaves_the_rest_to_begin(torch_view, tensor):
    assert torch_view(tensor) is None


def test_torch_view_before_the_first_call_leaves_it_to_begin(torch_view, monkeypatch):
    monkeypatch.setattr(arrays._Torch, "_current_stream", None)
    assert torch_view(_TorchLike()) is None


def test_primary_if_current(monkeypatch):
    monkeypatch.setattr(gpu, "_primary", {0: 111, 1: 222})
    monkeypatch.setattr(gpu.cuda, "current_context", lambda: 222)
    assert [gpu.primary_if_current(d) for d in (0, 1, 2, -1)] == [0, 222, 0, 0]


# --- the drivers and the direct path launch the same kernels ------------------------------------------------------

class Recorder:
    """A kernel that records its launches."""

    def __init__(self, name, launches):
        self.name, self.launches = name, launches

    def launch_on(self, stream, grid, block, args, shared_size=0):
        self.launches.append((self.name, stream, grid, block, tuple(args), shared_size))


@pytest.fixture
def recorded_scan(monkeypatch):
    launches = []
    monkeypatch.setattr(dl, "_kernels", {})
    monkeypatch.setattr(dl, "_kernel", lambda dtype, op, vector, small=False, context=0: (
        Recorder((str(dtype), op, vector, small, context), launches), 4096))
    monkeypatch.setattr(dl, "next_status", lambda tiles, itemsize, stream=None, context=0: (
        0x9000 + stream, tiles + context))
    monkeypatch.setattr(dl, "_sm_counts", {55: 132})
    return launches


class _View:
    def __init__(self, address, n, dtype):
        self.gpudata, self.size, self.dtype, self.shape = address, n, np.dtype(dtype), (n,)


@pytest.mark.parametrize("dtype", ["int32", "float64"])
@pytest.mark.parametrize("n", [1, 1000, 4096, 5000, 8192, 2 * 8192 + 1, 50 * 8192])
@pytest.mark.parametrize("offset", [0, 4])
def test_scan_driver_and_direct_launch_alike(recorded_scan, dtype, n, offset):
    x, out = 0x10000 + offset, 0x80000000
    with streams.launching_on(31, 55):
        assert dl.decoupled_lookback_driver(_View(x, n, dtype), _View(out, n, dtype), op="max", exclusive=True) == 1
    dl.launch(out, x, n, np.dtype(dtype), "max", True, 31, 55)
    driver, direct = recorded_scan
    assert driver == direct
    name, stream, grid, block, args, shared = direct
    assert stream == 31 and name[2] == (offset == 0) and args[:4] == (out, x, n, 1)
    config, tile, small = dl._policy(np.dtype(dtype).itemsize, n)
    assert block == (config.threads, 1, 1) and name[3] == small == (config is dl.SMALL[np.dtype(dtype).itemsize])
    tiles = -(-n // tile)
    assert args[6] == tiles and grid[0] == (1 if tiles == 1 else config.grid(tiles, offset == 0, 55))
    assert (args[4], args[7]) == ((0, 0) if tiles == 1 else (0x9000 + 31, tiles + 55))


@pytest.fixture
def recorded_reduce(monkeypatch):
    launches = []

    class Kept:
        address = 0x5000

    def plan(dtype, op, context):
        small, large = Recorder(("small", context), launches), Recorder(("large", context), launches)
        made = (fast.FAST_BLOCK, fast.FAST_UNROLL, fast.SMALL_UNROLL, fast.FAST_LOAD, fast.BLOCKS_PER_SM)
        return made, small, 264, large, 528, fast.FAST_BLOCK * fast.vector_width(dtype)

    monkeypatch.setattr(fast, "_plans", {})
    monkeypatch.setattr(fast, "_plan", plan)
    monkeypatch.setattr(fast._workspace, "get", lambda nbytes, stream=None, context=0: Kept)
    return launches


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("n", [1, 2048, 2049, 264 * 2048, 264 * 2048 + 1, 10**7])
def test_reduce_launch_and_direct_launch_alike(recorded_reduce, dtype, n):
    x, out = 0x10000, 0x20000
    with streams.launching_on(31, 55):
        fast.launch(_View(x, n, dtype), op="min", out=_View(out, 1, dtype))
    fast.launch_into(out, x, n, np.dtype(dtype), "min", 31, 55)
    by_launch, direct = recorded_reduce
    assert by_launch == direct
    name, stream, grid, block, args, _ = direct
    per_block = fast.FAST_BLOCK * fast.vector_width(dtype)
    blocks = -(-n // per_block)
    assert stream == 31 and block == (fast.FAST_BLOCK, 1, 1) and args[0] == out and args[3:] == (x, n)
    assert (name[0], grid[0]) == (("small", blocks) if blocks <= 264 else ("large", 528))
    assert args[1:3] == ((0, 0) if grid[0] == 1 else (0x5000 + fast.PARTIALS_OFFSET, 0x5000))


def test_torch_results_are_new_tensors_like_x(monkeypatch):
    torch = pytest.importorskip("torch")  # CPU tensors stand in for CUDA ones: the calls are the same
    monkeypatch.setattr(arrays._Torch, "_scalars", {})
    x = torch.arange(10, dtype=torch.int64)
    like, address = arrays.TORCH.new_like(x, 10, np.dtype(np.int64))
    assert like.shape == x.shape and like.dtype == x.dtype and address == like.data_ptr() != x.data_ptr()
    first, a = arrays.TORCH.new_scalar(x, np.dtype(np.int64), 1000)
    second, b = arrays.TORCH.new_scalar(x, np.dtype(np.int64), 1000)
    assert first.shape == () and first.dtype == torch.int64 and first.device == x.device
    assert a == first.data_ptr() and b == second.data_ptr() and a != b  # two results, two tensors
    assert list(arrays._Torch._scalars) == [(torch.int64, 1000)]  # one kept template per dtype and device


def test_the_libraries_own_calls_for_the_c_module(monkeypatch):
    import sys
    import types

    raw, empty_like = (lambda device: 5), (lambda like: like)
    fake_torch = types.SimpleNamespace(_C=types.SimpleNamespace(_cuda_getCurrentRawStream=raw), empty_like=empty_like)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    assert arrays.TORCH.direct_hooks() == (raw, empty_like, arrays._Torch._scalars)
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(_C=types.SimpleNamespace()))
    assert arrays.TORCH.direct_hooks() is None  # no raw stream: the kind's methods then

    def get_current_stream(device_id=-1):
        return device_id

    fake_cupy = types.SimpleNamespace(cuda=types.SimpleNamespace(get_current_stream=get_current_stream), empty=len)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    assert arrays.CUPY.direct_hooks() == (get_current_stream, len)
    fake_cupy.cuda.get_current_stream = lambda: 0  # an older CuPy: one current stream, no device argument
    assert arrays.CUPY.direct_hooks() is None
    monkeypatch.setattr(arrays, "DIRECT_READERS", {int: (1, arrays.TORCH), float: (2, arrays.CUPY)})
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    assert arrays.direct_hooks() == {1: (raw, empty_like, arrays._Torch._scalars)}


def test_a_kind_first_seen_later_hands_its_library_calls_to_the_c_module(monkeypatch):
    """The C module's whole calls use each library's own calls; a library whose first array comes after the module
    was configured (CuPy after torch, say) hands them over then, not after a restart."""
    import sys
    import types

    def get_current_stream(device_id=-1):
        return device_id

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        cuda=types.SimpleNamespace(get_current_stream=get_current_stream), empty=len))
    for table in ("DIRECT_READERS", "DIRECT_KINDS", "_kinds_by_type"):
        monkeypatch.setattr(arrays, table, {})
    handed = []
    module = types.SimpleNamespace(configure_direct=lambda readers, primaries, dtypes, hooks: handed.append(
        (dict(readers), dict(hooks))))
    monkeypatch.setattr(arrays, "_native", None)
    arrays.configure_native(module)
    assert handed == [({}, {})]
    Array = type("ndarray", (), {"__module__": "cupy._core.core", "data": None, "device": None})
    assert arrays.kind_of(Array()) is arrays.CUPY
    assert handed[-1] == ({Array: (2, arrays.CUPY)}, {2: (get_current_stream, len)})
    arrays.kind_of(Array())  # a type already seen: nothing handed again
    assert len(handed) == 2
