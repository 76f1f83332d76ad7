"""The launch in C (pyscan/launch.c through pyscan.native), tested without a GPU against a fake driver
(tests/fakes/fake_launch_driver.c): it must pack every argument type exactly as the ctypes launch does (struct with
C alignment), pass the grid, block, shared bytes and stream through, hand back the driver's result, and refuse
bad arguments with a message.  Skipped where no C compiler or Python headers are at hand (pyscan then launches
through ctypes)."""

import ctypes
import shutil
import struct
import subprocess
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
