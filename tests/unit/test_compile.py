"""Every kernel file compiles on its own with nvcc, with the defaults of its #defines (no GPU needed)."""

import re
import shutil
import subprocess

import pytest
from nvcc_builds import compile_failures

from pyscan.runtime.loader import KERNEL_ROOT, kernel_files

NVCC = shutil.which("nvcc")
ARCHS = ("sm_80", "sm_90")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("relpath", kernel_files())
def test_kernel_compiles_standalone(relpath, tmp_path):
    procs = {
        arch: subprocess.Popen(
            [NVCC, "-std=c++17", f"-arch={arch}", "-cubin", "-o", str(tmp_path / f"{arch}.cubin"),
             str(KERNEL_ROOT / relpath)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for arch in ARCHS
    }
    failures = {arch: p.communicate()[0] for arch, p in procs.items() if p.wait() != 0}
    assert not failures, f"{relpath} failed to compile:\n" + "\n".join(f"[{a}]\n{log}" for a, log in failures.items())


def test_there_are_kernels():
    assert "basics/scalar_multiply.cu" in kernel_files()


# The type specialisations the drivers build (pyscan.types.defines): narrow inputs summed in 64 bits, float16 and
# bfloat16 in float32, bool to int64 counts and through the logical operators, a wide input to a narrow dtype=.
SPECIALISATIONS = [("int8", "add", None), ("bool", "add", None), ("float16", "max", None), ("bfloat16", "mul", None),
                   ("uint16", "bitwise_and", None), ("float32", "logical_or", None), ("int32", "max", "int8"),
                   ("float64", "add", "float16"), ("int32", "add", None)]
SPECIALISED = [("scan/decoupled_lookback.cu", {"VECTOR_LOADS": 1}), ("scan/decoupled_lookback.cu", {"VECTOR_LOADS": 0}),
               ("scan/decoupled_lookback.cu", {"VECS_PER_THREAD": 2}),
               ("scan/decoupled_lookback.cu", {"ROWS": 1, "VECTOR_LOADS": 0}), ("reduction/fast.cu", {}),
               ("scan/coarsened.cu", {}), ("scan/single_pass.cu", {}), ("scan/blelloch_sweeps.cu", {}),
               ("reduction/segmented.cu", {}), ("reduction/convert.cu", {}), ("scan/add_block_sums.cu", {}),
               ("scan/combine_initial.cu", {}), ("scan/decoupled_lookback.cu", {"SEGMENTS": 1, "OFFSET_TYPE": "int"}),
               ("scan/decoupled_lookback.cu", {"SEGMENTS": 1, "OFFSET_TYPE": "long long", "VECTOR_LOADS": 0})]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("relpath,extra", SPECIALISED, ids=lambda v: v if isinstance(v, str) else str(v))
def test_kernel_compiles_for_every_kind_of_type(relpath, extra, tmp_path):
    from pyscan.runtime.loader import build_source
    from pyscan.types import as_dtype, defines, result_dtype

    failures = []
    for dtype, op, requested in SPECIALISATIONS:
        result = result_dtype(as_dtype(dtype), op, None if requested is None else as_dtype(requested))
        source = tmp_path / "k.cu"
        source.write_text(build_source(relpath, **defines(as_dtype(dtype), op, result), **extra))
        p = subprocess.run([NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / "k.cubin"), str(source)],
                           capture_output=True, text=True)
        if p.returncode:
            failures.append(f"{dtype} {op} -> {result}:\n{p.stdout}{p.stderr}"[:2000])
    assert not failures, f"{relpath} {extra}:\n" + "\n".join(failures)


# The axis kernels load through op_load and store through op_store (pyscan.axes.kernel_macros), as the 1-D kernels:
# every kind of type of SPECIALISATIONS, int32 add into int64 (NumPy's accumulator), dtype= to a wider float and to
# a narrower int; the reductions also in the builds of their later passes (partials in the compute type).
AXIS_SPECIALISATIONS = SPECIALISATIONS + [("int32", "max", None), ("float32", "add", "float64"),
                                          ("int64", "add", "int32"), ("float64", "min", None),
                                          ("uint64", "bitwise_xor", None), ("bool", "logical_and", None)]
AXIS_FILES = ["scan/decoupled_lookback.cu", "scan/axis_columns.cu", "reduction/axis_rows.cu",
              "reduction/axis_columns.cu"]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("relpath", AXIS_FILES)
def test_axis_kernels_compile_for_every_kind_of_type(relpath, tmp_path):
    from pyscan.axes import kernel_macros
    from pyscan.runtime.loader import build_source
    from pyscan.scans.axis import column_items, column_lanes_per_thread
    from pyscan.types import COMPUTE_TYPES, as_dtype, result_dtype

    builds = {}
    for dtype, op, requested in AXIS_SPECIALISATIONS:
        value = result_dtype(as_dtype(dtype), op, None if requested is None else as_dtype(requested))
        compute = COMPUTE_TYPES[value]
        variants = [(as_dtype(dtype), value, False)]
        if relpath.startswith("reduction/"):
            variants += [(as_dtype(dtype), compute, False), (compute, compute, True), (compute, value, True)]
        for k, (source, to, partials_in) in enumerate(variants):
            macros = kernel_macros(source, value, to, op, partials_in=partials_in)
            if relpath == "scan/axis_columns.cu":
                macros["ITEMS"] = column_items(compute.itemsize)
                # the direct-loads build (lanes >= 32) beside the staged one
                builds[(dtype, op, str(value), k, "direct")] = build_source(relpath, **macros, DIRECT_LOADS=1)
                vector = column_lanes_per_thread(source.itemsize, compute.itemsize)
                if vector > 1:  # two lanes a thread (2-byte inputs combined in 4 bytes)
                    builds[(dtype, op, str(value), k, "lanes")] = build_source(
                        relpath, **{**macros, "ITEMS": column_items(compute.itemsize, vector)}, DIRECT_LOADS=1,
                        LANES_PER_THREAD=vector)
            if relpath == "scan/decoupled_lookback.cu":  # the rows build, the scan along the last axis
                macros["ROWS"] = 1
            builds[(dtype, op, str(value), k)] = build_source(relpath, **macros)

    failures = compile_failures(tmp_path, builds.items())
    assert not failures, f"{relpath}:\n" + "\n".join(f"{case}:\n{log[:2000]}" for case, log in failures.items())


# The host and CUDA headers a kernel's build may see before or after its #defines: the kernels' own includes, and
# the CPU emulator's (tests/emulate/cuda_on_cpu.h).
HEADERS = ("climits", "cstdio", "cstdlib", "cstring", "cmath", "cfenv", "thread", "atomic", "barrier", "cuda_fp16.h",
           "cuda_bf16.h", "vector_types.h", "cuda/std/limits", "cuda/std/type_traits")


def test_kernel_macros_keep_their_values_past_the_system_headers():
    """Every name a kernel file #defines (the loader's specialisations among them) keeps the value a build gives it
    before the system headers: glibc's <limits.h> sets ARG_MAX to 131072 where a build defined it first (argmin's
    switch had that name, and a host compile of it ran argmax)."""
    from cuda_headers import CUDA_INCLUDE, GXX

    if GXX is None or CUDA_INCLUDE is None:
        pytest.skip("needs g++ and the CUDA headers ($CUDA_HOME/include or /usr/local/cuda)")
    names = set()
    for relpath in kernel_files() + [str(p.relative_to(KERNEL_ROOT)) for p in KERNEL_ROOT.rglob("*.cuh")]:
        names |= set(re.findall(r"^\s*#\s*(?:ifndef|define)\s+([A-Za-z_]\w*)", (KERNEL_ROOT / relpath).read_text(),
                                re.MULTILINE))
    source = "".join(f"#define {name} 0x5eed5eed\n" for name in sorted(names))
    source += "".join(f"#include <{header}>\n" for header in HEADERS)
    p = subprocess.run([GXX, "-std=c++20", "-dM", "-E", f"-I{CUDA_INCLUDE}", f"-I{CUDA_INCLUDE / 'cccl'}", "-x", "c++",
                        "-"], input=source, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]
    kept = set(re.findall(r"^#define ([A-Za-z_]\w*) 0x5eed5eed$", p.stdout, re.MULTILINE))
    assert names - kept == set(), f"kernel macros a system header redefines or removes: {sorted(names - kept)}"


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("relpath", ["reduction/fast.cu", "histogram/histogram_finish.cu"])
def test_the_source_pycuda_keys_makes_the_same_cubin(relpath, tmp_path):
    """The toolkit's #include lines spelled "# include" (loader.keyed_as_written, what pycuda's compile() gets) are the
    same directive: nvcc makes the same cubin, byte for byte, as from build_source's text."""
    from pyscan.runtime.loader import build_source, keyed_as_written

    built = build_source(relpath)
    images = []
    for name, text in (("built", built), ("keyed", keyed_as_written(built))):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "kernel.cu").write_text(text)
        subprocess.run([NVCC, "--cubin", "-std=c++17", "-arch", "sm_90", "kernel.cu"], cwd=folder, check=True,
                       capture_output=True)
        images.append((folder / "kernel.cubin").read_bytes())
    assert text != built and images[0] == images[1]
