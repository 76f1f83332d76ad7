"""The kernel loader on the GPU: the cache, compile errors, a kernel file edited between calls.  Define injection,
include expansion, signatures and the errors that need no GPU: tests/unit/test_loader.py."""

import numpy as np
import pytest

import pyscan
from pyscan.runtime import loader


def test_cache_hit_compiles_nothing(monkeypatch):
    fn1 = pyscan.get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE="float")
    import pycuda.compiler

    def no_compile(*a, **k):
        raise AssertionError("compiled again")

    monkeypatch.setattr(pycuda.compiler, "SourceModule", no_compile)
    fn2 = pyscan.get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE="float")
    assert fn1 is fn2


def test_different_defines_different_function():
    f = pyscan.get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE="float")
    d = pyscan.get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE="double")
    assert f is not d


def test_unknown_function_lists_globals():
    with pytest.raises(AttributeError, match="it has: scalar_multiply"):
        pyscan.get_kernel("basics/scalar_multiply.cu", "no_such_function")


def test_compile_error_points_into_kernel_file(tmp_path, monkeypatch):
    (tmp_path / "bad").mkdir()
    bad = tmp_path / "bad" / "broken.cu"
    bad.write_text('extern "C" __global__ void broken(int* x) {\n    x[0] = undeclared_name;\n}\n')
    monkeypatch.setattr(loader, "KERNEL_ROOT", tmp_path)
    with pytest.raises(pyscan.KernelCompileError) as err:
        pyscan.get_kernel("bad/broken.cu", "broken")
    assert f"{bad}(2)" in str(err.value) and "undeclared_name" in str(err.value)


def test_edited_kernel_file_is_compiled_again(tmp_path, monkeypatch):
    (tmp_path / "x").mkdir()
    src = tmp_path / "x" / "k.cu"
    src.write_text('extern "C" __global__ void k(int* x) { x[0] = 1; }\n')
    monkeypatch.setattr(loader, "KERNEL_ROOT", tmp_path)
    monkeypatch.setattr(loader, "SOURCE_CHECK_INTERVAL", 0.0)  # look at the file on every call
    first = pyscan.get_kernel("x/k.cu", "k")
    assert pyscan.get_kernel("x/k.cu", "k") is first  # unchanged: the cached function
    import os

    src.write_text('extern "C" __global__ void k(int* x) { x[0] = 2; }\n')
    os.utime(src, ns=(src.stat().st_atime_ns, src.stat().st_mtime_ns + 10**9))
    second = pyscan.get_kernel("x/k.cu", "k")
    assert second is not first
    import pycuda.gpuarray as ga

    out = ga.zeros(1, np.int32)
    second.prepared_call((1, 1, 1), (1, 1, 1), out.gpudata)
    assert out.get()[0] == 2
