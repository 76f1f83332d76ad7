"""The wrapping and dispatch of foreign arrays, tested without a GPU.

A fake library's arrays live in host memory and expose `__cuda_array_interface__`; a fake Kind makes its results,
the device calls are replaced by host copies, and the scan and reduce drivers by NumPy on the same addresses.  So
what is tested is pyscan's own logic: which kind an array is, what is refused and with what message, which stream
and device a call runs on (per thread), where results are allocated, out= and in-place, and what comes back.
"""

import ctypes
import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import pyscan
from pyscan.reductions.reference import reference as reduce_reference
from pyscan.reductions.registry import REDUCTIONS
from pyscan.runtime import arrays, driver
from pyscan.scans.reference import reference as scan_reference
from pyscan.scans.registry import SCANS
from pyscan.types import result_dtype


class FakeDeviceArray:
    """A 'device' array of a fake library: host memory behind the CUDA array interface."""

    def __init__(self, host: np.ndarray, *, stream=None, device=0):
        self.host = host
        self.device = device
        self.stream = stream

    @property
    def shape(self):
        return self.host.shape

    @property
    def dtype(self):
        return self.host.dtype

    @property
    def __cuda_array_interface__(self):
        strides = None if self.host.flags.c_contiguous else self.host.strides
        return {"shape": self.host.shape, "typestr": self.host.dtype.str, "strides": strides, "version": 3,
                "data": (self.host.ctypes.data, False), "stream": self.stream}


class FakeKind(arrays.Kind):
    """The fake library as pyscan sees it: a current stream of its own, results made by it."""

    name, fix_contiguous = "fake", "fake.ascontiguous(x)"
    current_stream = 7
    made: list = []

    def view(self, x):
        cai = x.__cuda_array_interface__
        return (cai["data"][0], tuple(cai["shape"]), np.dtype(cai["typestr"]),
                arrays._c_contiguous(cai["shape"], cai["strides"], x.host.itemsize), x.device, None)

    def default_stream(self, x, device):
        return self.current_stream

    def ready(self, x):  # every call takes begin(): the fake launches are the Call's drivers
        return None

    def empty(self, shape, dtype, device, stream, on_default=True):
        array = FakeDeviceArray(np.full(shape, 99, dtype), device=device)
        self.made.append((shape, np.dtype(dtype), device, stream))
        return array

    def pointer(self, native):
        return native.host.ctypes.data

    def zero_d(self, native):
        return FakeDeviceArray(native.host.reshape(()), device=native.device)


def _host(address, shape, dtype):
    dtype = np.dtype(dtype)
    count = int(np.prod(shape)) if shape else 1
    buffer = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(buffer, dtype=dtype, count=count).reshape(shape)


@pytest.fixture
def fake_gpu(monkeypatch):
    """pyscan's device calls on host memory, and the fake library registered as a kind."""
    seen = []  # (what, device, stream) of every launch
    device_now = threading.local()
    kind = FakeKind()
    kind.made = []
    monkeypatch.setitem(arrays._kinds_by_type, FakeDeviceArray, kind)
    monkeypatch.setitem(arrays.READY, FakeDeviceArray, kind)

    def enter(ordinal, keep_any_on_device=False):
        previous = getattr(device_now, "ordinal", None)
        device_now.ordinal = ordinal
        return previous  # what leave() restores

    def leave(previous):
        device_now.ordinal = previous

    monkeypatch.setattr(driver, "enter", enter)
    monkeypatch.setattr(driver, "leave", leave)
    monkeypatch.setattr(driver, "copy_dtod", lambda dst, src, n, stream: ctypes.memmove(dst, src, n))
    monkeypatch.setattr(driver, "memset32", lambda ptr, value, n, stream: ctypes.memset(ptr, value, 4 * n))
    monkeypatch.setattr(driver, "copy_htod", lambda dst, src, n, stream: ctypes.memmove(dst, src, n))
    monkeypatch.setattr(driver, "synchronize", lambda stream: None)
    # fake streams are never capturing (and must not reach the real cuStreamIsCapturing where a GPU ran before)
    monkeypatch.setattr(driver, "capturing", lambda handle: False)

    def scan_driver(x, out, *, op, exclusive, call):  # NumPy's scan into out's dtype, the result dtype
        seen.append(("scan", getattr(device_now, "ordinal", None), call.stream))
        values = _host(x.gpudata, x.shape, x.dtype).copy()
        _host(out.gpudata, out.shape, out.dtype)[...] = scan_reference(values, op, exclusive, out.dtype)
        return 1

    def reduce_launch(x, *, op, call, out=None, dtype=None):  # NumPy's reduction in the result dtype
        seen.append(("reduce", getattr(device_now, "ordinal", None), call.stream))
        value = result_dtype(x.dtype, op, dtype)
        out = call.empty((1,), value) if out is None else out
        values = _host(x.gpudata, x.shape, x.dtype)
        _host(out.gpudata, (1,), value)[0] = reduce_reference(values, op, dtype)
        return out

    for registry, name, field, fake in ((SCANS, "decoupled_lookback", "driver", scan_driver),
                                        (REDUCTIONS, "fast", "launch", reduce_launch)):
        entry = registry._algorithms[name]
        monkeypatch.setitem(registry._algorithms, name, dataclasses.replace(entry, **{field: fake}))
    return seen, kind


def test_kinds_are_recognised_without_importing_their_libraries():
    assert arrays.kind_of(np.zeros(3)) is arrays.NUMPY
    assert arrays.kind_of(FakeDeviceArray(np.zeros(3))) is arrays.INTERFACE  # an unknown interface object
    assert arrays.kind_of([1, 2]) is None and arrays.kind_of(None) is None


@pytest.mark.parametrize("shape, strides, contiguous", [((4,), None, True), ((4,), (8,), True), ((4,), (16,), False),
                                                        ((2, 3), (12, 4), True), ((2, 3), (4, 8), False),
                                                        ((1, 3), (999, 4), True)])
def test_c_contiguity_from_the_interface(shape, strides, contiguous):
    assert arrays._c_contiguous(shape, strides, 4 if len(shape) == 2 else 8) is contiguous


def test_scan_of_a_foreign_array_runs_on_its_stream_and_device_and_returns_its_kind(fake_gpu):
    seen, kind = fake_gpu
    x = FakeDeviceArray(np.arange(1, 11, dtype=np.int32), device=1)
    before = x.host.copy()
    result = pyscan.scan(x)
    assert isinstance(result, FakeDeviceArray) and result.device == 1
    np.testing.assert_array_equal(result.host, np.cumsum(before))
    assert result.host.dtype == np.cumsum(before).dtype == np.int64  # NumPy's accumulator for int32 add
    np.testing.assert_array_equal(x.host, before)  # the input is never modified
    assert seen == [("scan", 1, FakeKind.current_stream)]
    assert kind.made == [((10,), np.dtype(np.int64), 1, FakeKind.current_stream)]  # allocated by the library


class _TorchLikeStream:
    cuda_stream = 1234


class _CuPyLikeStream:
    ptr = 4321


class _NumbaLikeStream:
    handle = ctypes.c_void_p(5555)


class _ProtocolStream:
    def __cuda_stream__(self):
        return (0, 6666)


@pytest.mark.parametrize("stream, handle", [(None, FakeKind.current_stream), (0, 0), (99, 99),
                                            (_TorchLikeStream(), 1234), (_CuPyLikeStream(), 4321),
                                            (_NumbaLikeStream(), 5555), (_ProtocolStream(), 6666)])
def test_stream_argument(fake_gpu, stream, handle):
    seen, kind = fake_gpu
    pyscan.scan(FakeDeviceArray(np.ones(5, np.float32)), stream=stream)
    assert seen[-1][2] == handle
    assert kind.made[-1][3] == handle  # the result is allocated for that stream too


@pytest.mark.parametrize("bad, error, words", [(True, TypeError, "bool"), (-1, ValueError, "non-negative"),
                                               ("s", TypeError, "stream"), (1.5, TypeError, "stream")])
def test_bad_stream_is_refused(fake_gpu, bad, error, words):
    with pytest.raises(error, match=words):
        pyscan.scan(FakeDeviceArray(np.ones(5, np.float32)), stream=bad)
    assert fake_gpu[0] == []


def test_non_contiguous_device_array_is_refused_with_the_fix(fake_gpu):
    x = FakeDeviceArray(np.arange(20, dtype=np.float64)[::2])
    with pytest.raises(ValueError, match=r"not contiguous.*fake\.ascontiguous\(x\)"):
        pyscan.scan(x)
    with pytest.raises(ValueError, match="not contiguous"):
        pyscan.reduce(x)
    assert fake_gpu[0] == []


@pytest.mark.parametrize("host, error, words", [(np.zeros(3, np.complex64), TypeError, "unsupported dtype complex64"),
                                                (np.zeros(3, "i4,i4"), TypeError, "unsupported dtype")])
def test_bad_device_arrays_are_refused_before_any_launch(fake_gpu, host, error, words):
    with pytest.raises(error, match=words):
        pyscan.scan(FakeDeviceArray(host))
    assert fake_gpu[0] == []


def test_reduce_of_a_foreign_array_is_a_0d_array_of_its_kind(fake_gpu):
    x = FakeDeviceArray(np.array([3, -7, 5], np.int64))
    for op, expected in (("add", 1), ("max", 5), ("min", -7)):
        result = pyscan.reduce(x, op=op)
        assert isinstance(result, FakeDeviceArray) and result.host.shape == () and result.host == expected


def test_out_and_in_place(fake_gpu):
    seen, kind = fake_gpu
    x = FakeDeviceArray(np.arange(8, dtype=np.float64))
    out = FakeDeviceArray(np.zeros(8, np.float64))
    assert pyscan.scan(x, out=out) is out
    np.testing.assert_array_equal(out.host, np.cumsum(np.arange(8.0)))
    assert kind.made == []  # nothing allocated: the result went to out
    assert pyscan.scan(x, out=x) is x  # in place
    np.testing.assert_array_equal(x.host, np.cumsum(np.arange(8.0)))
    for bad, error, words in ((FakeDeviceArray(np.zeros(7)), ValueError, "shape"),
                              (FakeDeviceArray(np.zeros(8, np.float32)), ValueError, "dtype"),
                              (np.zeros(8), TypeError, "device array"),
                              (FakeDeviceArray(np.zeros(8), device=3), ValueError, "device 3")):
        with pytest.raises(error, match=words):
            pyscan.scan(x, out=bad)


def test_numpy_out_needs_numpy_input(fake_gpu):
    with pytest.raises(TypeError, match="NumPy array"):
        pyscan.scan(np.ones(4, np.float32), out=FakeDeviceArray(np.zeros(4, np.float32)))


def test_threads_see_their_own_stream_and_device(fake_gpu):
    seen, kind = fake_gpu
    arrays_by_thread = [FakeDeviceArray(np.arange(100, dtype=np.int64) * i, device=i % 3) for i in range(16)]

    def work(i):
        result = pyscan.scan(arrays_by_thread[i], stream=1000 + i)
        return i, result

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(16)))
    for i, result in results:
        np.testing.assert_array_equal(result.host, np.cumsum(np.arange(100) * i))
        assert result.device == i % 3
    assert sorted((device, stream) for _, device, stream in seen) == sorted((i % 3, 1000 + i) for i in range(16))


def test_dtype_takes_the_commonest_calls_path_with_the_checked_result(monkeypatch):
    # scan(x, dtype=...) and reduce(x, dtype=...) of a ready 1-D device array go to the auto algorithm's ready() with
    # the checked result dtype (the like-for-like call beside torch.sum(x, dtype=x.dtype)); a bad dtype= does not,
    # and is refused by the general path
    import pyscan.reductions as reductions_module
    import pyscan.scans as scans_module

    class Ready:  # a device array of 8 int32 elements that the commonest call takes as it is
        pass

    class Kind:
        def ready(self, x):
            return 0x1000, 8, np.dtype(np.int32), 0, 0

    monkeypatch.setitem(arrays.READY, Ready, Kind())
    seen = []
    monkeypatch.setattr(scans_module, "AUTO_READY", lambda *args: seen.append(("scan", args[-1])) or "scanned")
    monkeypatch.setattr(reductions_module, "AUTO_READY", lambda *args: seen.append(("reduce", args[-1])) or "reduced")
    result_dtype(np.dtype(np.int32), "add")  # a (dtype, op) seen before, as after a first call
    x = Ready()
    assert pyscan.scan(x) == "scanned" and seen.pop() == ("scan", False)  # no dtype=: NumPy's rule, in ready()
    assert pyscan.scan(x, dtype=np.int32) == "scanned" and seen.pop() == ("scan", np.dtype(np.int32))
    assert pyscan.scan(x, dtype="int8", exclusive=True) == "scanned" and seen.pop() == ("scan", np.dtype(np.int8))
    assert pyscan.reduce(x, dtype=np.int32) == "reduced" and seen.pop() == ("reduce", np.dtype(np.int32))
    assert pyscan.reduce(x, dtype=np.float64) == "reduced" and seen.pop() == ("reduce", np.dtype(np.float64))
    with pytest.raises(TypeError):
        pyscan.scan(x, dtype="not a dtype")
    with pytest.raises(TypeError):
        pyscan.reduce(x, op="logical_or", dtype=np.int32)  # logical operators give bool
    assert seen == []


def test_the_base_kinds_ready_reads_1d_arrays_and_ready_nd_any_shape():
    """Kind.ready() (GPUArray, Numba, the interface) is ready_nd() for 1-D C-contiguous arrays; new_shaped() makes a
    result of any shape on the stream they gave."""
    kind = FakeKind()
    kind.made = []
    line = FakeDeviceArray(np.arange(5, dtype=np.int32), device=0)
    table = FakeDeviceArray(np.zeros((3, 4), np.float32), device=0)
    strided = FakeDeviceArray(np.zeros((4, 6), np.float32)[:, ::2], device=0)
    address = line.host.ctypes.data
    assert arrays.Kind.ready(kind, line) == (address, 5, np.dtype(np.int32), 0, FakeKind.current_stream)
    assert arrays.Kind.ready(kind, table) is None and arrays.Kind.ready(kind, strided) is None
    assert kind.ready_nd(table) == (table.host.ctypes.data, (3, 4), np.dtype(np.float32), 0, FakeKind.current_stream)
    assert kind.ready_nd(strided) is None
    native, pointer = kind.new_shaped(table, (3, 1), np.dtype(np.float64), 0, FakeKind.current_stream)
    assert native.shape == (3, 1) and pointer == native.host.ctypes.data
    assert kind.made == [((3, 1), np.dtype(np.float64), 0, FakeKind.current_stream)]
