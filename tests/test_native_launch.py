"""The launch in C (pyscan/launch.c through pyscan.native), tested without a GPU against a fake driver
(tests/fakes/fake_launch_driver.c): it must pack every argument type exactly as the ctypes launch does (struct with
C alignment), pass the grid, block, shared bytes and stream through, hand back the driver's result, and refuse
bad arguments with a message.  Skipped where no C compiler or Python headers are at hand (pyscan then launches
through ctypes)."""

import ctypes
import shutil
import struct
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from pyscan import cuda, loader, native

FAKE_SOURCE = Path(__file__).parent / "fakes" / "fake_launch_driver.c"


def _have_compiler() -> bool:
    return shutil.which(native.compiler()[0]) is not None and (
        Path(sysconfig.get_paths()["include"]) / "Python.h").is_file()


pytestmark = pytest.mark.skipif(not _have_compiler(), reason="no C compiler or no Python headers here")


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    where = tmp_path_factory.mktemp("fake_driver")
    library = where / "libfake_cuda.so"
    subprocess.run(native.compiler() + ["-O2", "-shared", "-fPIC", str(FAKE_SOURCE), "-o", str(library)], check=True)
    fake = ctypes.CDLL(str(library))
    fake.fake_function.restype = ctypes.c_void_p
    fake.fake_stream.restype = ctypes.c_void_p
    fake.fake_dim.restype = ctypes.c_uint
    fake.fake_argument_bytes.restype = ctypes.c_size_t
    return fake


@pytest.fixture(scope="module")
def c_launch(tmp_path_factory, fake_driver):
    module = native.load(native.build(tmp_path_factory.mktemp("cache") / ("launch" + native.library_path().suffix)))
    native.bind(module, fake_driver)
    return module


def last_arguments(fake) -> bytes:
    buffer = (ctypes.c_ubyte * 4096)()
    size = fake.fake_argument_bytes(buffer)
    return bytes(buffer[:size])


CASES = [
    ("PPqiPPiI", (0x7F0000001000, 0x7F0000002010, 2**40 + 3, -1, 0x10, 0x20, 7, 2**32 - 1)),  # the fast scan's
    ("PPPPq", (1, 2, 3, 4, 2**63 - 1)),  # the fast reduction's
    ("ifdB?hHbQ", (-5, 1.5, -2.25, 255, True, -32768, 65535, -128, 2**64 - 1)),
    ("fPf", (0.1, 0xDEADBEEF, 3.0)),  # a 4-byte float before a pointer: 4 bytes of padding
    ("", ()),
]


@pytest.mark.parametrize("types, args", CASES, ids=[c[0] or "none" for c in CASES])
def test_packs_like_struct_with_c_alignment(c_launch, fake_driver, types, args):
    code = c_launch.launch(0x1234, (3, 2, 1), (256, 1, 1), 4096, 0x5678, types.encode(), *args)
    assert code == 0
    expected = struct.pack("@" + types, *args) if types else b""
    assert last_arguments(fake_driver) == expected
    assert [fake_driver.fake_dim(i) for i in range(7)] == [3, 2, 1, 256, 1, 1, 4096]
    assert fake_driver.fake_function() == 0x1234 and fake_driver.fake_stream() == 0x5678


def test_the_ctypes_launch_packs_the_same_bytes(c_launch, fake_driver, monkeypatch):
    """Kernel.launch_on through ctypes (loader.launch) and through C give the driver the same buffer."""
    function = fake_driver.cuLaunchKernel
    function.argtypes = cuda._SIGNATURES["cuLaunchKernel"]
    function.restype = ctypes.c_int

    class FakeLib:
        cuLaunchKernel = function

    monkeypatch.setattr(cuda, "lib", lambda: FakeLib)
    kernel = loader.Kernel("fake_kernel", 0x99, "PPqiPPiI", 0)
    args = CASES[0][1]
    seen = []
    for launch in (False, c_launch.launch):
        monkeypatch.setattr(loader, "_native_launch", launch)
        kernel.launch_on(0x42, (5, 1, 1), (128, 1, 1), args, 64)
        seen.append((last_arguments(fake_driver), [fake_driver.fake_dim(i) for i in range(7)],
                     fake_driver.fake_stream()))
    assert seen[0] == seen[1]
    assert seen[0][0] == struct.pack("@PPqiPPiI", *args)


def test_grid_and_block_as_ints_or_short_tuples(c_launch, fake_driver):
    c_launch.launch(1, 7, (64,), 0, 0, b"")
    assert [fake_driver.fake_dim(i) for i in range(6)] == [7, 1, 1, 64, 1, 1]
    c_launch.launch(1, (np.int64(4), 3), np.int32(32), np.uint64(8), 0, b"i", np.int32(-3))
    assert [fake_driver.fake_dim(i) for i in range(7)] == [4, 3, 1, 32, 1, 1, 8]
    assert last_arguments(fake_driver) == struct.pack("@i", -3)


def test_numpy_and_object_arguments_become_their_ints(c_launch, fake_driver):
    class Allocation:  # a pycuda DeviceAllocation: int() gives the address
        def __int__(self):
            return 0xABC000

    c_launch.launch(1, 1, 1, 0, 0, b"PqP", Allocation(), np.int64(-9), np.uintp(16))
    assert last_arguments(fake_driver) == struct.pack("@PqP", 0xABC000, -9, 16)


def test_the_driver_result_comes_back(c_launch, fake_driver):
    assert c_launch.launch(1, 999, 1, 0, 0, b"") == 1  # the fake refuses a grid of 999


def test_kernel_launch_raises_the_driver_error(c_launch, fake_driver, monkeypatch):
    monkeypatch.setattr(loader, "_native_launch", c_launch.launch)
    monkeypatch.setattr(cuda, "error_name", lambda code: "CUDA_ERROR_INVALID_VALUE")
    with pytest.raises(cuda.CudaError, match=r"cuLaunchKernel\(k, grid=999.*CUDA_ERROR_INVALID_VALUE"):
        loader.Kernel("k", 1, "", 0).launch_on(0, 999, 1, ())


@pytest.mark.parametrize("types, args, error, message", [
    (b"ii", (1,), TypeError, "expected 2 kernel arguments"),
    (b"i", (2**31,), OverflowError, "argument 0 .* out of range"),
    (b"I", (-1,), OverflowError, "out of range"),
    (b"B", (256,), OverflowError, "out of range"),
    (b"q", ("7",), TypeError, None),
    (b"f", ("x",), TypeError, None),
    (b"x", (1,), ValueError, "unknown type letter"),
    (b"P", (None,), TypeError, None),
])
def test_bad_arguments_are_refused_before_the_driver(c_launch, fake_driver, types, args, error, message):
    before = fake_driver.fake_launches()
    with pytest.raises(error, match=message):
        c_launch.launch(1, 1, 1, 0, 0, types, *args)
    assert fake_driver.fake_launches() == before


@pytest.mark.parametrize("grid, block, shared", [(0, 1, 0), ((1, 2, 3, 4), 1, 0), (1, (), 0), (2**32, 1, 0),
                                                 (1, 1, -1), (1, 1, 2**32), ("1", 1, 0)])
def test_bad_dimensions_are_refused(c_launch, fake_driver, grid, block, shared):
    before = fake_driver.fake_launches()
    with pytest.raises((TypeError, ValueError, OverflowError)):
        c_launch.launch(1, grid, block, shared, 0, b"")
    assert fake_driver.fake_launches() == before


def test_kernel_argument_count_error_names_the_kernel(c_launch, monkeypatch):
    monkeypatch.setattr(loader, "_native_launch", c_launch.launch)
    with pytest.raises(TypeError, match="scan_kernel: expected 2 kernel arguments"):
        loader.Kernel("scan_kernel", 1, "PP", 0).launch_on(0, 1, 1, (1,))


def test_contexts_per_thread(c_launch):
    import threading

    assert c_launch.set_context(0xC0FFEE) == 0
    assert c_launch.get_context() == 0xC0FFEE
    other = []
    thread = threading.Thread(target=lambda: other.append(c_launch.get_context()))
    thread.start()
    thread.join()
    assert other == [0]  # a new thread has no current context
    c_launch.set_context(None)
    assert c_launch.get_context() == 0


def test_build_is_cached_and_keyed_by_the_source(tmp_path, monkeypatch):
    monkeypatch.setenv("PYSCAN_CACHE_DIR", str(tmp_path))
    first = native.build()
    stamp = first.stat().st_mtime_ns
    assert native.build() == first and first.stat().st_mtime_ns == stamp  # a second build compiles nothing
    assert native.library_path(b"another source") != first
    assert not list(tmp_path.glob("*.part"))


def test_the_off_switch_and_a_failed_build_leave_ctypes(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "_state", {})
    monkeypatch.setenv("PYSCAN_NATIVE_LAUNCH", "0")
    assert native.launcher() is None and "PYSCAN_NATIVE_LAUNCH=0" in native.why_not()
    monkeypatch.setattr(native, "_state", {})
    monkeypatch.setenv("PYSCAN_NATIVE_LAUNCH", "1")
    monkeypatch.setenv("PYSCAN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native, "compiler", lambda: ["/nonexistent/cc"])
    with pytest.warns(RuntimeWarning, match="launching through ctypes"):
        assert native.launcher(lib=object()) is None
    assert "could not run the C compiler" in native.why_not()


# --- the whole default reduction in C (reduce_direct) -------------------------------------------------------------

CTX = 0xC7C7


class TorchLike:
    """What the C module's torch reader reads (the same as arrays._Torch.direct)."""

    def __init__(self, n, dtype="i32", dims=1, contiguous=True, device=0, address=0x10000, fail=None):
        self.n, self.dtype, self.dims, self.contiguous, self.device, self.address = n, dtype, dims, contiguous, \
            device, address
        self.fail = fail

    def dim(self):
        return self.dims

    def is_contiguous(self):
        return self.contiguous

    def get_device(self):
        return self.device

    def data_ptr(self):
        if self.fail:
            raise self.fail
        return self.address

    def numel(self):
        return self.n


class _Flags:
    def __init__(self, c_contiguous):
        self.c_contiguous = c_contiguous


class _Memory:
    def __init__(self, ptr, device_id):
        self.ptr, self.device_id = ptr, device_id


class CuPyLike:
    """What the C module's CuPy reader reads (the same as arrays._CuPy.direct)."""

    def __init__(self, n, dtype="int32", ndim=1, contiguous=True, device=0, address=0x20000):
        self.size, self.dtype, self.ndim = n, np.dtype(dtype), ndim
        self.flags, self.data = _Flags(contiguous), _Memory(address, device)


class FakeKind:
    """default_stream and new_scalar, as the kinds have them."""

    result = object()  # every call's 0-d "result"

    def default_stream(self, x, device):
        return 0x5000 + device

    def new_scalar(self, x, dtype, context):
        assert context == CTX
        return self.result, 0xABC0

    def new_like(self, x, n, dtype):
        return self.result, 0xABC0


class Fn:
    def __init__(self, handle):
        self.handle = handle


class Kept:
    def __init__(self, address, nbytes):
        self.address, self.nbytes = address, nbytes


def _kind_methods(tables):
    return {}  # no hooks: the stream and the result through the kinds' methods


class _Stream:
    def __init__(self, ptr):
        self.ptr = ptr


def _library_hooks(tables):
    """The libraries' own calls, faked: the same stream and result as FakeKind's methods give."""
    kept = {("i32", CTX): "kept 0-d"}
    tables["kept"] = kept

    def torch_empty_like(like):
        assert like == "kept 0-d" or isinstance(like, TorchLike)
        return _Result()

    def cupy_empty(shape, dtype):
        assert isinstance(shape, tuple) and len(shape) <= 1 and dtype in (np.dtype(np.int32), np.dtype(np.float64))
        result = _Result()
        result.data = _Memory(0xABC0, 0)
        return result
    return {1: (lambda device: 0x5000 + device, torch_empty_like, kept),
            2: (lambda device: _Stream(0x5000 + device), cupy_empty)}


class ScanConfig:
    def __init__(self, threads, vecs, min_blocks=3):
        self.threads, self.vecs, self.min_blocks = threads, vecs, min_blocks


class _Result:
    """A fake result made by a library hook: its address is FakeKind's."""

    def data_ptr(self):
        return 0xABC0


@pytest.fixture(params=[_kind_methods, _library_hooks], ids=["kind methods", "library hooks"])
def whole(c_launch, fake_driver, request):
    """reduce_direct over fake tables: one plan (int32 add on context CTX), a workspace for stream 0x5000; the
    stream and the result through the kinds' methods or through the libraries' own calls."""
    from pyscan.reductions import fast

    kind = FakeKind()
    knobs = {name: value for name, value in zip(fast.KNOB_NAMES, (512, 4, 1, 0, None))}
    i32 = np.dtype(np.int32)
    tables = {
        "readers": {TorchLike: (1, kind), CuPyLike: (2, kind)},
        "primaries": {0: CTX, 1: CTX + 1},
        "torch_dtypes": {"i32": i32, "f64": np.dtype(np.float64)},
        "plans": {(i32, "add", CTX): ((512, 4, 1, 0, None), Fn(0x111), 264, Fn(0x222), 528, 512 * 4)},
        "buffers": {(CTX, 0x5000): Kept(0x7000, 16 + 528 * 4)},
        "knobs": knobs,
    }
    c_launch.configure_direct(tables["readers"], tables["primaries"], tables["torch_dtypes"], request.param(tables))
    c_launch.configure_reduce(tables["plans"], tables["buffers"], tables["knobs"], fast.KNOB_NAMES,
                              fast.PARTIALS_OFFSET)
    tables["scan_kernels"], tables["status"], tables["multiprocessors"] = {}, {4: {}, 8: {}}, {CTX: 132}
    tables["scan_module"] = {"SMALL_MAX_TILES": 32, "EPOCHS": 1 << 30}
    c_launch.configure_scan(tables["scan_kernels"], {4: ScanConfig(256, 8), 8: ScanConfig(256, 8)},
                            {4: ScanConfig(256, 4), 8: ScanConfig(256, 4)}, tables["status"],
                            tables["multiprocessors"], tables["scan_module"])
    c_launch.set_context(CTX)
    yield c_launch, tables
    c_launch.set_context(None)


@pytest.mark.parametrize("make", [TorchLike, CuPyLike])
@pytest.mark.parametrize("n", [1, 2048, 2049, 264 * 2048, 264 * 2048 + 1, 10**7])
def test_whole_reduction_launches_what_the_driver_would(whole, fake_driver, make, n):
    from pyscan.reductions import fast

    module, tables = whole
    x = make(n)
    address = x.address if make is TorchLike else x.data.ptr
    before = fake_driver.fake_launches()
    result = module.reduce_direct(x, "add")
    assert result is FakeKind.result or isinstance(result, _Result)
    assert isinstance(result, _Result) == ("kept" in tables)  # the hooks made it, where there are hooks
    assert fake_driver.fake_launches() == before + 1
    plan = tables["plans"][(np.dtype(np.int32), "add", CTX)]
    fn, blocks = fast._choose(plan, n)  # the Python driver's rule
    assert fake_driver.fake_function() == fn.handle and fake_driver.fake_stream() == 0x5000
    assert [fake_driver.fake_dim(i) for i in range(7)] == [blocks, 1, 1, 512, 1, 1, 0]
    ticket = 0x7000 if blocks > 1 else 0
    partials = ticket + fast.PARTIALS_OFFSET if blocks > 1 else 0
    assert last_arguments(fake_driver) == struct.pack("@PPPPq", 0xABC0, partials, ticket, address, n)


NOT_READY = {
    "2-D": (lambda: TorchLike(100, dims=2), "add"),
    "strided": (lambda: TorchLike(100, contiguous=False), "add"),
    "dtype": (lambda: TorchLike(100, dtype="bf16"), "add"),
    "empty": (lambda: TorchLike(0), "add"),
    "CPU tensor": (lambda: TorchLike(100, device=-1), "add"),
    "context not current": (lambda: TorchLike(100, device=1), "add"),
    "no plan for op": (lambda: TorchLike(100), "max"),
    "unknown op": (lambda: TorchLike(100), "mul"),
    "unhashable op": (lambda: TorchLike(100), ["add"]),
    "not a reader's type": (lambda: np.zeros(100, np.int32), "add"),
    "CuPy 2-D": (lambda: CuPyLike(100, ndim=2), "add"),
    "CuPy strided": (lambda: CuPyLike(100, contiguous=False), "add"),
    "raises": (lambda: TorchLike(100, fail=RuntimeError("boom")), "add"),
    "no workspace for its stream": (lambda: TorchLike(10**7, device=0, address=0x10000), "add"),
}


@pytest.mark.parametrize("case", list(NOT_READY))
def test_whole_reduction_leaves_what_is_not_ready_to_python(whole, fake_driver, case):
    module, tables = whole
    if case == "no workspace for its stream":
        tables["buffers"].clear()
    make, op = NOT_READY[case]
    before = fake_driver.fake_launches()
    assert module.reduce_direct(make(), op) is None
    assert fake_driver.fake_launches() == before


def test_whole_reduction_checks_the_knobs_and_the_workspace_size(whole, fake_driver):
    module, tables = whole
    tables["knobs"]["FAST_UNROLL"] = 8  # a tuning script changed a knob: the plan is stale
    assert module.reduce_direct(TorchLike(100), "add") is None
    tables["knobs"]["FAST_UNROLL"] = 4
    assert module.reduce_direct(TorchLike(100), "add") is not None
    tables["buffers"][(CTX, 0x5000)].nbytes = 16 + 100 * 4  # too small for 528 blocks' partials
    assert module.reduce_direct(TorchLike(10**7), "add") is None
    assert module.reduce_direct(TorchLike(2048 * 50), "add") is not None  # 50 blocks fit


def test_whole_reduction_refused_by_the_driver_is_left_to_python(whole, fake_driver):
    module, tables = whole
    plan = tables["plans"][(np.dtype(np.int32), "add", CTX)]
    tables["plans"][(np.dtype(np.int32), "add", CTX)] = plan[:2] + (1000,) + plan[3:]  # 999 blocks: refused
    tables["buffers"][(CTX, 0x5000)].nbytes = 16 + 1000 * 4
    assert module.reduce_direct(TorchLike(999 * 2048), "add") is None


def test_whole_reduction_lets_interrupts_through_and_keeps_no_references(whole, fake_driver):
    module, _ = whole
    with pytest.raises(KeyboardInterrupt):
        module.reduce_direct(TorchLike(100, fail=KeyboardInterrupt()), "add")
    x, op = TorchLike(10**7), "add"
    watched = (x, op, FakeKind.result, TorchLike, _Result, np.dtype(np.int32))
    counts = [sys.getrefcount(o) for o in watched]
    for _ in range(1000):
        module.reduce_direct(x, op)
        module.reduce_direct(TorchLike(100, dims=2), op)
        module.reduce_direct(CuPyLike(100), op)
    assert [sys.getrefcount(o) for o in watched] == counts


def test_whole_reduction_waits_for_torchs_kept_tensor(whole, fake_driver):
    module, tables = whole
    if "kept" not in tables:
        pytest.skip("the kinds' methods make it themselves")
    tables["kept"].clear()  # the Python path's new_scalar makes it on the next call
    before = fake_driver.fake_launches()
    assert module.reduce_direct(TorchLike(100), "add") is None and fake_driver.fake_launches() == before
    assert isinstance(module.reduce_direct(CuPyLike(100), "add"), _Result)  # CuPy needs none


def test_the_knob_names_are_the_plans_order():
    from pyscan.reductions import fast

    assert tuple(getattr(fast, name) for name in fast.KNOB_NAMES) == (
        fast.FAST_BLOCK, fast.FAST_UNROLL, fast.SMALL_UNROLL, fast.FAST_LOAD, fast.BLOCKS_PER_SM)


# --- the whole scan in C (scan_direct) --------------------------------------------------------------------------

@pytest.mark.parametrize("make", [TorchLike, CuPyLike])
@pytest.mark.parametrize("n, small, threads", [(1, True, 256), (4096, True, 256), (4097, False, 256),
                                               (8192, False, 256)])
@pytest.mark.parametrize("aligned", [True, False])
def test_one_tile_scan_launches_what_the_driver_would(whole, fake_driver, make, n, small, threads, aligned):
    from pyscan.scans import decoupled_lookback as dl

    module, tables = whole
    address = 0x10000 if aligned else 0x10004
    x = make(n, address=address)
    i32 = np.dtype(np.int32)
    tables["scan_kernels"][(i32, "max", aligned, CTX, small)] = (loader.Kernel("scan", 0x333, "PPqiPPiI", CTX), 9000)
    before = fake_driver.fake_launches()
    assert module.scan_direct(x, "max", True) is not None
    assert fake_driver.fake_launches() == before + 1
    assert fake_driver.fake_function() == 0x333 and fake_driver.fake_stream() == 0x5000
    assert [fake_driver.fake_dim(i) for i in range(7)] == [1, 1, 1, threads, 1, 1, 9000]
    assert last_arguments(fake_driver) == struct.pack("@PPqiPPiI", 0xABC0, address, n, 1, 0, 0, 1, 0)
    policy, tile, chosen_small = dl._policy(4, n)  # the driver's rule, with the shipped Configs the fakes copy
    assert tile >= n and chosen_small == small and policy.threads == threads


@pytest.mark.parametrize("case", ["more than one tile, no status buffer", "not built yet", "2-D", "empty",
                                  "context not current", "unhashable op"])
def test_scan_leaves_what_is_not_ready_to_python(whole, fake_driver, case):
    module, tables = whole
    i32 = np.dtype(np.int32)
    for small in (True, False):
        for vector in (True, False):
            tables["scan_kernels"][(i32, "add", vector, CTX, small)] = (loader.Kernel("s", 0x333, "PPqiPPiI", CTX),
                                                                        0)
    x, op = TorchLike(100), "add"
    if case == "more than one tile, no status buffer":
        x = TorchLike(8193)
    elif case == "not built yet":
        tables["scan_kernels"].clear()
    elif case == "2-D":
        x = TorchLike(100, dims=2)
    elif case == "empty":
        x = TorchLike(0)
    elif case == "context not current":
        x = TorchLike(100, device=1)
    else:
        op = ["add"]
    before = fake_driver.fake_launches()
    assert module.scan_direct(x, op, False) is None
    assert fake_driver.fake_launches() == before


def test_scan_keeps_no_references(whole, fake_driver):
    module, tables = whole
    i32 = np.dtype(np.int32)
    kernel = loader.Kernel("s", 0x333, "PPqiPPiI", CTX)
    tables["scan_kernels"][(i32, "add", True, CTX, True)] = (kernel, 0)
    x = TorchLike(100)
    watched = (x, kernel, FakeKind.result, _Result, i32)
    counts = [sys.getrefcount(o) for o in watched]
    for _ in range(1000):
        module.scan_direct(x, "add", False)
        module.scan_direct(TorchLike(100000), "add", False)
        module.scan_direct(CuPyLike(5000), "add", True)
    assert [sys.getrefcount(o) for o in watched] == counts


@pytest.fixture
def python_scan(whole, monkeypatch):
    """The C module and decoupled_lookback share fake tables: its kernel cache (every build for int32 and float64
    add, aligned or not, small or not), its status buffers (stream 0x5000 in CTX, 1 MB each), its SM counts (132 in
    CTX), its live Configs; the Python launch() goes through the same fake driver."""
    from pyscan import workspace
    from pyscan.scans import decoupled_lookback as dl

    module, tables = whole
    kernels = {}
    for dtype in (np.dtype(np.int32), np.dtype(np.float64)):
        for vector in (True, False):
            for small in (True, False):
                handle = 0x400 + 8 * dtype.itemsize + 2 * vector + small
                kernels[(dtype, "add", vector, CTX, small)] = (loader.Kernel("scan", handle, "PPqiPPiI", CTX),
                                                               1000 + handle)
    status = {size: workspace.StreamWorkspace(f"status {size}") for size in (4, 8)}
    for size, buffers in status.items():
        kept = buffers._buffers[(CTX, 0x5000)] = workspace.Kept()
        kept.address, kept.nbytes, kept.state = 0x900000 * size, 1 << 20, 41
    monkeypatch.setattr(dl, "_kernels", kernels)
    monkeypatch.setattr(dl, "_status", status)
    monkeypatch.setattr(dl, "_sm_counts", {CTX: 132})
    monkeypatch.setattr(loader, "_native_launch", module.launch)
    module.configure_scan(kernels, dl.CONFIG, dl.SMALL, {size: w._buffers for size, w in status.items()},
                          dl._sm_counts, vars(dl))
    return module, status


def _launched(fake_driver) -> tuple:
    return (fake_driver.fake_function(), fake_driver.fake_stream(), [fake_driver.fake_dim(i) for i in range(7)],
            last_arguments(fake_driver))


@pytest.mark.parametrize("make", [TorchLike, CuPyLike])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
@pytest.mark.parametrize("size", [(0.5, 0), (1, 0), (0.5, 1), (1, 1), (3, -7), (16, 0), (16, 1), (395, 0), (396, 0), (396, 1),
                                  (5000, -7)], ids=lambda size: f"{size[0]} tiles{size[1]:+d}")
@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("multiprocessors", [132, 4])
def test_scan_launches_what_the_driver_would(python_scan, fake_driver, make, dtype, size, aligned, multiprocessors):
    """scan_direct launches what decoupled_lookback.launch does for the same array (build, grid, block, shared bytes,
    stream, arguments): one tile (SMALL's or the large one), SMALL's tiles up to SMALL_MAX_TILES of them, the large
    ones past that, a persistent grid (SMs x min_blocks) or a block per tile; each call of more than one tile takes
    the next epoch of its stream's status buffer."""
    from pyscan.scans import decoupled_lookback as dl

    module, status = python_scan
    dl._sm_counts[CTX] = multiprocessors  # the table C reads too
    dtype = np.dtype(dtype)
    large_tiles, extra = size
    n = int(large_tiles * dl.tile_size(dtype)) + extra  # in large tiles (8192 32-bit or 4096 64-bit elements)
    address = 0x10000 if aligned else 0x10000 + dtype.itemsize
    x = make(n, dtype="i32" if dtype == np.int32 else "f64", address=address) if make is TorchLike else \
        make(n, dtype=dtype, address=address)
    kept = status[dtype.itemsize]._buffers[(CTX, 0x5000)]
    epoch = kept.state
    before = fake_driver.fake_launches()
    assert module.scan_direct(x, "add", True) is not None
    assert fake_driver.fake_launches() == before + 1
    by_c = _launched(fake_driver)
    several = -(-n // dl.tile_size(dtype, n)) > 1
    assert kept.state == epoch + several
    dl.launch(0xABC0, address, n, dtype, "add", True, 0x5000, CTX)
    assert kept.state == epoch + 2 * several
    by_python = _launched(fake_driver)
    assert by_c[:3] == by_python[:3]
    layout = struct.Struct("@PPqiPPiI")
    c_args, python_args = layout.unpack(by_c[3]), layout.unpack(by_python[3])
    assert c_args[:7] == python_args[:7] and c_args[7] + several == python_args[7]
    assert c_args[4] == (kept.address if several else 0) and c_args[7] == (epoch + 1 if several else 0)


SCAN_NOT_READY = ["no status buffer for its stream", "status buffer too small", "status buffer busy",
                  "epoch must wrap", "no SM count yet", "no SMALL_MAX_TILES"]


@pytest.mark.parametrize("case", SCAN_NOT_READY)
def test_scan_of_many_tiles_leaves_what_is_not_ready_to_python(python_scan, fake_driver, case, monkeypatch):
    from pyscan.scans import decoupled_lookback as dl

    module, status = python_scan
    buffers = status[4]._buffers
    kept = buffers[(CTX, 0x5000)]
    x = TorchLike(40 * 8192)  # 40 large tiles, aligned
    if case == "no status buffer for its stream":
        buffers.clear()
    elif case == "status buffer too small":
        kept.nbytes = 8 * (2 + 39)
    elif case == "status buffer busy":
        assert kept.lock.acquire(blocking=False)
    elif case == "epoch must wrap":
        kept.state = dl.EPOCHS - 1
    elif case == "no SM count yet":
        dl._sm_counts.clear()
    else:
        monkeypatch.delattr(dl, "SMALL_MAX_TILES")
    state = kept.state
    before = fake_driver.fake_launches()
    assert module.scan_direct(x, "add", False) is None
    assert fake_driver.fake_launches() == before and kept.state == state
    assert kept.lock.locked() == (case == "status buffer busy")  # C released what it took
    if case == "status buffer busy":
        kept.lock.release()
    if case == "no SM count yet":  # an unaligned array needs none: a block per tile
        assert module.scan_direct(TorchLike(40 * 8192, address=0x10004), "add", False) is not None
        assert fake_driver.fake_dim(0) == 40 and kept.state == state + 1
    if case == "status buffer too small":
        kept.nbytes = 8 * (2 + 40)
        assert module.scan_direct(x, "add", False) is not None and kept.state == state + 1


@pytest.mark.parametrize("error", [RuntimeError("a broken buffer"), KeyboardInterrupt()])
def test_scan_releases_the_status_lock_when_reading_the_buffer_raises(python_scan, fake_driver, error):
    """An exception while C holds the buffer's lock: the lock is released, an Exception leaves the call to the Python
    path (None), an interrupt propagates."""
    import threading

    module, status = python_scan

    class Broken:
        address, state, lock = 0x900000, 41, threading.Lock()

        @property
        def nbytes(self):
            raise error

    broken = status[4]._buffers[(CTX, 0x5000)] = Broken()
    before = fake_driver.fake_launches()
    if isinstance(error, Exception):
        assert module.scan_direct(TorchLike(40 * 8192), "add", False) is None
    else:
        with pytest.raises(KeyboardInterrupt):
            module.scan_direct(TorchLike(40 * 8192), "add", False)
    assert not broken.lock.locked() and fake_driver.fake_launches() == before and broken.state == 41
