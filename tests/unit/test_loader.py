"""The kernel loader without a GPU: define injection, include expansion, signatures, errors.  The cache and the
compiles on the GPU: tests/gpu/test_loader_gpu.py."""

import re

import numpy as np
import pytest

import pyscan
from pyscan.runtime import loader


def test_kernel_files_relative_and_sorted():
    files = loader.kernel_files()
    assert files == sorted(files)
    assert all(f.endswith(".cu") and not f.startswith("/") for f in files)


def test_defines_injected_first():
    src = loader.build_source("basics/scalar_multiply.cu", ELEM_TYPE="double", BLOCK=128)
    lines = src.splitlines()
    assert lines[0] == "#define BLOCK 128"
    assert lines[1] == "#define ELEM_TYPE double"
    assert lines[2].startswith("#line 1 ") and lines[2].endswith('scalar_multiply.cu"')


@pytest.mark.parametrize("name", ["1ABC", "A-B", "A B", "", "X;"])
def test_invalid_macro_name_rejected(name):
    with pytest.raises(ValueError, match="invalid macro name"):
        loader.build_source("basics/scalar_multiply.cu", **{name: 1})


@pytest.mark.parametrize("value", ["float; int x", "a\nb", "1+1", "", "x)"])
def test_invalid_macro_value_rejected(value):
    with pytest.raises(ValueError, match="not a C type name"):
        loader.build_source("basics/scalar_multiply.cu", ELEM_TYPE=value)


@pytest.mark.parametrize("value", [1.5, None, True, [1]])
def test_macro_value_type_rejected(value):
    with pytest.raises(TypeError, match="expected an int or a C type name"):
        loader.build_source("basics/scalar_multiply.cu", ELEM_TYPE=value)


def test_unknown_file_lists_kernel_files():
    with pytest.raises(FileNotFoundError) as err:
        loader.build_source("scan/no_such_kernel.cu")
    assert "basics/scalar_multiply.cu" in str(err.value)


def _kernel_tree(tmp_path, monkeypatch, header: str, kernel: str) -> str:
    """A kernel tree of common/h.cuh and x/k.cu under tmp_path as the loader's root; x/k.cu's built source."""
    (tmp_path / "common").mkdir()
    (tmp_path / "x").mkdir()
    (tmp_path / "common" / "h.cuh").write_text(header)
    (tmp_path / "x" / "k.cu").write_text(kernel)
    monkeypatch.setattr(loader, "KERNEL_ROOT", tmp_path)
    return loader.build_source("x/k.cu")


def test_includes_inlined_with_line_markers(tmp_path, monkeypatch):
    src = _kernel_tree(tmp_path, monkeypatch, "#pragma once\nint helper;\n",
                       '#include "../common/h.cuh"\n#include "../common/h.cuh"\nint body;\n')
    assert src.count("int helper;") == 1  # included once, as #pragma once would
    k = tmp_path / "x" / "k.cu"
    assert f'#line 3 "{k}"\nint body;' in src  # nvcc's line numbers point back into k.cu


def test_include_with_a_trailing_comment_is_inlined(tmp_path, monkeypatch):
    src = _kernel_tree(tmp_path, monkeypatch, "int helper;\n", '#include "../common/h.cuh"  // helper\nint body;\n')
    assert "int helper;" in src and "#include" not in src


@pytest.mark.parametrize("elem, expected", [("float", "PPfq"), ("double", "PPdq"), ("int", "PPiq"),
                                            ("long long", "PPqq")])
def test_signature_follows_element_type(elem, expected):
    src = loader.build_source("basics/scalar_multiply.cu", ELEM_TYPE=elem)
    assert loader.signature(src, "scalar_multiply") == expected


def test_signature_default_type():
    src = loader.build_source("basics/scalar_multiply.cu")
    assert loader.signature(src, "scalar_multiply") == "PPfq"


def test_global_functions_listed():
    src = "extern \"C\" __global__ void __launch_bounds__(256) a(int* x) {}\n__global__ void b(float y) {}"
    assert loader.global_functions(src) == ["a", "b"]


def test_import_without_gpu_and_clear_error():
    reason = pyscan.gpu_unavailable_reason()
    if reason is not None:
        with pytest.raises(pyscan.GPUUnavailableError, match=re.escape(reason[:40])):
            pyscan.scalar_multiply(np.ones(3, np.float32), 2.0)


def test_T_is_an_alias_of_ELEM_TYPE():
    assert loader.build_source("basics/scalar_multiply.cu", T="double") == \
        loader.build_source("basics/scalar_multiply.cu", ELEM_TYPE="double")
    assert "#define T " not in loader.build_source("basics/scalar_multiply.cu", T="double")
    with pytest.raises(ValueError, match="same macro"):
        loader.build_source("basics/scalar_multiply.cu", T="double", ELEM_TYPE="float")


def test_a_missing_launcher_is_named_as_the_reason_no_gpu_is_usable(monkeypatch):
    """Without the built launcher (pyscan/runtime/_launch.c) the GPU functions say so, and how to build it."""
    import sys

    from pyscan.runtime import driver

    monkeypatch.setitem(sys.modules, "pyscan.runtime._launch", None)  # the import fails as if it were not built
    monkeypatch.setattr(driver, "_cu", None)
    monkeypatch.setattr(driver, "_reason", None)
    reason = driver.gpu_unavailable_reason()
    assert reason is not None and "launcher is not built" in reason and "pip install -e ." in reason


@pytest.mark.parametrize("relpath", loader.kernel_files())
def test_pycuda_keys_the_source_as_written(relpath):
    """pycuda's compile() runs nvcc's preprocessor over a source that says "#include", to key its disk cache on what
    it includes: the source the loader hands it says it nowhere (every local header inlined, the toolkit's spelled
    "# include"), and differs from build_source's only in that spelling, line for line."""
    built = loader.build_source(relpath)
    handed = loader.keyed_as_written(built)
    assert "#include" not in handed
    built_lines, handed_lines = built.splitlines(), handed.splitlines()
    assert len(built_lines) == len(handed_lines)
    for was, now in zip(built_lines, handed_lines):
        if was != now:
            assert re.fullmatch(r"\s*#include\s*<[\w./]+>.*", was), was
            assert now == was.replace("#include", "# include", 1)


def test_cubin_hands_pycuda_the_source_keyed_as_written(monkeypatch):
    import sys
    import types

    seen = {}

    def fake_compile(source, **options):
        seen.update(options, source=source)
        return b"a cubin"

    package, compiler, cuda_driver = (types.ModuleType(n) for n in ("pycuda", "pycuda.compiler", "pycuda.driver"))
    compiler.compile, cuda_driver.CompileError = fake_compile, RuntimeError
    package.compiler, package.driver = compiler, cuda_driver
    for name, module in (("pycuda", package), ("pycuda.compiler", compiler), ("pycuda.driver", cuda_driver)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(loader.driver, "ready", lambda: None)
    source = loader.build_source("reduction/fast.cu", ELEM_TYPE="float")
    assert "#include <cuda_fp16.h>" in source
    assert loader._cubin("reduction/fast.cu", source, ("-std=c++17",), "sm_90", {}) == b"a cubin"
    assert seen == {"source": loader.keyed_as_written(source), "options": ["-std=c++17"], "no_extern_c": True,
                    "arch": "sm_90"}
