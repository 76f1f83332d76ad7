"""The C launcher (pyscan/runtime/_launch.c) against a fake libcuda, without a GPU.

tests/fakes/fake_launch_driver.c is built as libcuda.so.1 and found through LD_LIBRARY_PATH by a child Python, which
launches through pyscan.runtime._launch and reads back what the fake cuLaunchKernel was given: the function, the
geometry, the stream, the context current at the launch, and every argument packed to its letter's C type.
"""

import os
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FAKE = Path(__file__).parent.parent / "fakes" / "fake_launch_driver.c"

try:
    from pyscan.runtime import _launch  # noqa: F401
except ImportError:
    _launch = None

pytestmark = pytest.mark.skipif(_launch is None or shutil.which("cc") is None,
                                reason="the C launcher is not built (pip install -e .) or no C compiler")


@pytest.fixture(scope="module")
def fake_libcuda(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fake_libcuda")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(folder / "libcuda.so.1"), str(FAKE)], check=True)
    return folder


def run(fake_libcuda, body: str) -> str:
    """Run `body` in a child Python whose libcuda is the fake (`fake`: it, through ctypes; `launch`: the launcher)."""
    program = textwrap.dedent("""
        import ctypes, struct
        from pyscan.runtime._launch import allocate, launch
        fake = ctypes.CDLL("libcuda.so.1")
        fake.fake_freed.restype = ctypes.c_ulonglong
        for name in ("fake_function", "fake_stream", "fake_context", "fake_freed_on", "fake_pool"):
            getattr(fake, name).restype = ctypes.c_void_p
        fake.fake_dim.restype = ctypes.c_uint
        def arguments(n):
            out = ctypes.create_string_buffer(32 * 8)
            fake.fake_arguments(out)
            return [out.raw[8 * i: 8 * i + 8] for i in range(n)]
    """) + textwrap.dedent(body)
    env = dict(os.environ, LD_LIBRARY_PATH=str(fake_libcuda))
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_letter_is_packed_to_its_c_type(fake_libcuda):
    out = run(fake_libcuda, """
        import numpy as np
        fake.fake_expect_args(9)
        code = launch(0, 0x1234, 0x99, (3, 2, 1, 256, 1, 1, 4096), "PiIqQfdhB",
                      2**63 + 5, -7, 2**32 - 1, -2**40, np.uint64(2**64 - 1), 1.5, np.float64(-2.25), -3, True)
        print(code, fake.fake_launches(), hex(fake.fake_function()), hex(fake.fake_stream()))
        print([fake.fake_dim(i) for i in range(7)])
        print([a.hex() for a in arguments(9)])
    """).splitlines()
    assert out[0] == "0 1 0x1234 0x99"
    assert out[1] == "[3, 2, 1, 256, 1, 1, 4096]"
    expected = [struct.pack("<Q", 2**63 + 5), struct.pack("<i", -7) + bytes(4), struct.pack("<I", 2**32 - 1) + bytes(4),
                struct.pack("<q", -2**40), struct.pack("<Q", 2**64 - 1), struct.pack("<f", 1.5) + bytes(4),
                struct.pack("<d", -2.25), struct.pack("<h", -3) + bytes(6), b"\x01" + bytes(7)]
    assert eval(out[2]) == [e.hex() for e in expected]


def test_a_context_is_made_current_for_the_launch_and_put_back(fake_libcuda):
    out = run(fake_libcuda, """
        fake.fake_expect_args(0)
        fake.cuCtxSetCurrent(ctypes.c_void_p(0x50))
        launch(0x70, 1, 0, (1, 1, 1, 32, 1, 1, 0), "")          # another context: current for the launch only
        now = ctypes.c_void_p()
        fake.cuCtxGetCurrent(ctypes.byref(now))
        print(hex(fake.fake_context()), hex(now.value))
        launch(0, 1, 0, (1, 1, 1, 32, 1, 1, 0), "")             # 0: the current one
        print(hex(fake.fake_context()))
    """).split()
    assert out == ["0x70", "0x50", "0x50"]


def test_memory_is_allocated_on_the_stream_and_freed_on_it_when_it_goes(fake_libcuda):
    out = run(fake_libcuda, """
        memory = allocate(0x77, 16, 0x99)
        print(hex(memory.address), hex(fake.fake_pool()), hex(fake.fake_stream()), hex(fake.fake_freed()))
        del memory
        print(hex(fake.fake_freed()), hex(fake.fake_freed_on()))
        print(allocate(0x77, 999, 0x99))                       # the fake's out of memory: the code comes back
    """).splitlines()
    assert out == ["0x1000 0x77 0x99 0x0", "0x1000 0x99", "2"]


def test_a_failed_launch_returns_its_code(fake_libcuda):
    out = run(fake_libcuda, """
        fake.fake_expect_args(1)
        print(launch(0, 1, 0, (999, 1, 1, 32, 1, 1, 0), "i", 1), fake.fake_launches())
    """).split()
    assert out == ["1", "1"]  # the fake's CUDA_ERROR_INVALID_VALUE, and it was called once


@pytest.mark.parametrize("types, value, says", [("i", 2**31, "argument 0 (2147483648) does not fit its type 'i'"),
                                                ("I", -1, "argument 0 (-1) does not fit its type 'I'"),
                                                ("P", -1, "argument 0 (-1) does not fit its type 'P'"),
                                                ("q", "'7'", "argument 0 ('7') does not fit its type 'q'"),
                                                ("f", "None", "argument 0 (None) does not fit its type 'f'")])
def test_a_value_that_does_not_fit_is_refused_before_the_launch(fake_libcuda, types, value, says):
    out = run(fake_libcuda, f"""
        fake.fake_expect_args(0)
        try:
            launch(0, 1, 0, (1, 1, 1, 32, 1, 1, 0), {types!r}, {value})
        except TypeError as exc:
            print(exc)
        print(fake.fake_launches())
    """).splitlines()
    assert out == [says, "0"]


def test_wrong_counts_and_geometry_are_refused(fake_libcuda):
    out = run(fake_libcuda, """
        for args in (((1, 1, 1, 32, 1, 1, 0), "ii", 1), ((1, 1, 32), "")):
            try:
                launch(0, 1, 0, *args)
            except TypeError as exc:
                print(exc)
        print(fake.fake_launches())
    """).splitlines()
    assert out == ["expected 2 arguments (ii), got 1", "geometry: expected (grid x, y, z, block x, y, z, shared bytes)",
                   "0"]


def test_without_libcuda_the_first_launch_says_so(tmp_path):
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path))
    program = ("from pyscan.runtime._launch import launch\n"
               "try:\n    launch(0, 1, 0, (1, 1, 1, 1, 1, 1, 0), '')\nexcept OSError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
    if "could not be loaded" not in done.stdout:
        pytest.skip("this machine has a libcuda.so.1 of its own")
    assert done.stdout.startswith("pyscan launch: libcuda.so.1 could not be loaded")


def test_capturing_reports_the_streams_capture_status(fake_libcuda):
    out = run(fake_libcuda, """
        from pyscan.runtime._launch import capturing
        print(capturing(0x99))                            # not capturing
        fake.fake_set_capturing(ctypes.c_void_p(0x99), 1)
        print(capturing(0x99), capturing(0x98))           # capturing, and another stream is not
        fake.fake_set_capturing(ctypes.c_void_p(0x99), 2)
        print(capturing(0x99))                            # invalidated
        fake.fake_set_capturing(ctypes.c_void_p(0), -906)
        print(capturing(0))                               # the legacy stream: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
    """).split()
    assert out == ["0", "1", "0", "2", "-906"]
