"""The book's reduction trees (PMPP §10.3 simple, §10.4 convergent, §10.6 shared_memory, §10.8 coarsened) run on the
CPU in their TRACE build (tests/emulate/reduce_steps_on_cpu.cpp: one block, its threads as std::threads,
__syncthreads a barrier, the dynamic shared array one array the block's threads share), compiled by the host C++
compiler with AddressSanitizer from the kernels' own source: every step equals the NumPy step-model's
(pyscan.reductions.steps.model_steps, what the GPU's trace is held to in tests/gpu/test_reduction_steps_gpu.py), read
back in the layout the GPU's trace reads (steps.trace_geometry, steps.trace_rows); the COUNT_WORK build of the two
that reduce in place counts the combines and the warps active at each stride that model_count_work gives; and the
two that end in one atomic a block (§10.7 segmented, §10.8 coarsened), in the build the driver launches, over many
blocks, give the model's result for every kind of atomic (add, max and min of integers, the bitwise ones, and the
atomicCAS loop of float max and of a C expression).  No GPU; skipped where there is no g++ or no CUDA headers."""

import subprocess

import numpy as np
import pytest
from cuda_headers import ROOT, build_emulator, needs_emulator

from pyscan.reductions import REDUCTIONS, book, model_count_work
from pyscan.reductions import steps as rsteps
from pyscan.types import COMPUTE_TYPES, operator, result_dtype

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

KIND = {"simple": 1, "convergent": 1, "shared_memory": 2, "segmented": 3, "coarsened": 3}  # reduce_steps_on_cpu.cpp's REDUCE_KIND
_built: dict = {}


def _emulator(name, dtype, op, tmp_path_factory, result=None):
    """The TRACE build (and COUNT_WORK, for the trees in place) of `name` that steps.trace launches for x of dtype; or,
    given the result dtype, the shipped build the driver launches."""
    path, macros = book.kernel_builds(name, dtype, op, result)[0]
    if result is None:
        macros = {**macros, "TRACE": 1, **({"COUNT_WORK": 1} if name in book.IN_PLACE else {})}
    key = (name, tuple((k, str(v)) for k, v in sorted(macros.items())))
    if key not in _built:
        _built[key] = build_emulator("reduce_steps_on_cpu", tmp_path_factory.mktemp("reduce_steps"), macros, (
            f'-DREDUCE_FILE="{ROOT / "kernels" / path}"', f"-DREDUCE_FUNCTION={book.KERNELS[name][1]}",
            f"-DREDUCE_KIND={KIND[name]}"))
    return _built[key]


def _launch(binary, x, threads, grid, steps, row, tmp_path) -> list:
    (tmp_path / "x.bin").write_bytes(x.tobytes())
    files = [tmp_path / f for f in ("result.bin", "trace.bin", "counts.bin")]
    p = subprocess.run([str(binary), str(x.size), str(threads), str(grid), str(steps), str(row),
                        str(tmp_path / "x.bin"), *map(str, files)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (binary, x.size, p.returncode, p.stderr[-4000:])
    return files


def _run(name, x, op, tmp_path, tmp_path_factory):
    """(the steps as steps.trace gives them, the COUNT_WORK counters) of one block on x."""
    binary = _emulator(name, x.dtype, op, tmp_path_factory)
    threads, steps, row = rsteps.trace_geometry(name, x.size)
    files = _launch(binary, x, threads, 1, steps, row, tmp_path)
    rows = np.fromfile(files[1], x.dtype).reshape(steps, row)
    return rsteps.trace_rows(name, rows, np.fromfile(files[0], x.dtype)), np.fromfile(files[2], np.uint64)


@pytest.mark.parametrize("dtype, op", [(np.int32, "add"), (np.int64, "add"), (np.float32, "add"), (np.int32, "max"),
                                       (np.float32, "min")])
@pytest.mark.parametrize("name", rsteps.TRACED)
def test_traced_steps_are_the_model(name, dtype, op, tmp_path, tmp_path_factory):
    """Every step of the picture's size, a partial block and a block of 128 threads equals the model's, bit for bit
    (floats too: the same combines in the same order); the full block of 1024 threads once a tree."""
    rng = np.random.default_rng(len(name))
    per_thread = book.KERNELS[name][2]
    sizes = [16 if per_thread == 2 else 32, 3 * per_thread + 1, per_thread * 128]
    if dtype == np.int32 and op == "add":
        sizes.append(per_thread * 1024)
    for n in sizes:
        x = rng.integers(-50, 50, n).astype(dtype)
        if dtype == np.float32:
            x += rng.random(n).astype(np.float32)  # fractions: float adds that round
        values, _ = _run(name, x, op, tmp_path, tmp_path_factory)
        model = rsteps.model_steps(name, x, op=op)
        assert len(values) == len(model), (name, n)
        for i, (got, step) in enumerate(zip(values, model)):
            np.testing.assert_array_equal(got, step.values, err_msg=f"{name} n={n} step {i} ({step.label})")
        whole = {"add": np.add, "max": np.maximum, "min": np.minimum}[op].reduce(x, dtype=x.dtype)
        if np.dtype(dtype).kind == "i" or op != "add":
            assert values[-1][0] == whole, (name, n)


@pytest.mark.parametrize("name", book.IN_PLACE)
def test_work_counted_is_the_model(name, tmp_path, tmp_path_factory):
    """The COUNT_WORK build's combines and active warps per stride, on one block of n/2 threads, are
    model_count_work's (the counts the GPU's count_work reads, tests/gpu/test_reduction_gpu.py)."""
    for n in (2, 64, 256, 2048):
        x = np.ones(n, np.int32)
        values, counters = _run(name, x, "add", tmp_path, tmp_path_factory)
        want = model_count_work(name, n)
        assert int(values[-1][0]) == n
        assert int(counters[0]) == want.additions, (name, n)
        assert [int(c) for c in counters[1:]] == want.active_warps, (name, n)


# (x dtype, op): each kind of atomic reduce_atomics.cuh ends a block with (int64 add and the bitwise ones through the
# unsigned 64-bit type's atomics; float max and a C expression through the atomicCAS loop)
ATOMIC_VARIANTS = [("int32", "add"), ("int64", "add"), ("float32", "add"), ("float64", "add"), ("int32", "min"),
                   ("int64", "max"), ("uint32", "max"), ("float32", "max"), ("int64", "bitwise_and"),
                   ("uint32", "bitwise_or"), ("int32", "bitwise_xor"), ("int32", "a + 2 * b")]


@pytest.mark.parametrize("dtype, op_text", ATOMIC_VARIANTS, ids=lambda v: v.replace(" ", ""))
@pytest.mark.parametrize("name", book.ATOMIC)
def test_atomic_trees_over_blocks_give_the_model(name, dtype, op_text, tmp_path, tmp_path_factory):
    """segmented and coarsened as the driver launches them (book.atomic_geometry), over one block and several:
    the output the blocks' atomics leave is the model's (its blocks' results folded in block order, the order in
    which the emulator runs the blocks), bit for bit."""
    rng = np.random.default_rng(len(name) + len(op_text))
    dtype = np.dtype(dtype)
    op = operator(op_text, 0) if " " in op_text else op_text
    value = result_dtype(dtype, op if isinstance(op, str) else "add")
    binary = _emulator(name, dtype, op, tmp_path_factory, result=value)
    per_thread = book.KERNELS[name][2]
    for n in (1, 31, 3 * per_thread * 1024 + 5):
        x = rng.integers(0 if dtype.kind == "u" else -1000, 1000, n).astype(dtype)
        if dtype.kind == "f":
            x += rng.random(n).astype(dtype)
        grid, threads = book.atomic_geometry(name, n)
        files = _launch(binary, x, threads, grid, 0, 0, tmp_path)
        got = np.fromfile(files[0], COMPUTE_TYPES[value])
        want = REDUCTIONS.get(name).model(x, op=op)
        assert got.shape == (1,) and got[0] == want, (name, n, grid, got, want)
