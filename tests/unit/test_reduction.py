"""Reductions (PMPP ch. 10) without a GPU: the NumPy step-models against NumPy, the work counts against the
book, the float error depths, the registry, input validation, and nvcc builds of every specialisation kind."""

import math
import shutil
import subprocess

import numpy as np
import pytest

import pyscan
from pyscan import gpu_unavailable_reason
from pyscan.reductions import REDUCE_ALGORITHMS, REDUCTIONS, book, choose_auto, fast, model_count_work
from pyscan.reductions._common import block_for
from pyscan.reductions.reference import check_result, reference
from pyscan.runtime.loader import KERNEL_ROOT, build_source, signature
from pyscan.types import result_dtype

DTYPES = [np.int32, np.int64, np.float32, np.float64]
OPS = ["add", "max", "min"]
LENGTHS = [1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 2049, 4097, 70_001]


def random_data(rng, n, dtype):
    """Uniform random data over the whole integer range (so integer sums wrap) or [-1000, 1000) for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return rng.uniform(-1000, 1000, n).astype(dtype)


def equal_data(rng, n, dtype):
    value = random_data(rng, 1, dtype)[0]
    return np.full(n, value, dtype)


def assert_reduced(x, op, result, depth):
    """result has NumPy's dtype (np.sum of int32 is int64: pyscan.types.result_dtype) and value."""
    expected_dtype = result_dtype(x.dtype, op)
    assert isinstance(result, np.generic) and result.dtype == expected_dtype, f"{type(result)} for {x.dtype} {op}"
    ok, error, allowance = check_result(x, op, result, depth)
    assert ok, f"{op} of {x.size} {x.dtype}: got {result!r}, expected {reference(x, op)!r} (error {error} > {allowance})"


# --- models against NumPy -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make", [random_data, equal_data], ids=["random", "equal"])
def test_model_equals_numpy(name, dtype, make, rng):
    algorithm = REDUCTIONS.get(name)
    depth = algorithm.error_depth
    for n in LENGTHS:
        x = make(rng, n, dtype)
        for op in OPS:
            assert_reduced(x, op, algorithm.model(x, op=op), depth(n))


@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
def test_model_nan_propagates(name, rng):
    """A NaN anywhere makes max/min (and add) NaN, as np.max / np.min / np.sum do."""
    model = REDUCTIONS.get(name).model
    for n, where in [(1, 0), (5000, 0), (5000, 4999), (5000, 1234)]:
        x = random_data(rng, n, np.float32)
        x[where] = np.nan
        for op in OPS:
            assert np.isnan(model(x, op=op)), (n, where, op)


@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
def test_model_does_not_modify_input(name, rng):
    x = random_data(rng, 3000, np.int32)
    before = x.copy()
    REDUCTIONS.get(name).model(x)
    np.testing.assert_array_equal(x, before)


def test_fast_model_grids_and_alignment(rng):
    """The fast kernel's index arithmetic (head, whole vectors, tail; unrolled loop, remainder loop) reads every
    element exactly once, for any grid, block, unroll and misalignment."""
    for dtype in DTYPES:
        vec = fast.vector_width(dtype)
        for n in [1, 2, 5, 17, 100, 1000, 4099]:
            x = random_data(rng, n, dtype)
            for blocks, block, unroll in [(1, 32, 1), (1, 64, 4), (3, 32, 2), (7, 32, 4), (2, 256, 8)]:
                for head in range(vec):
                    result, steps = fast.model(x, op="add", return_steps=True, blocks=blocks, head=head, block=block,
                                               unroll=unroll)
                    sources = [src for src, _ in steps[0].edges]
                    assert sorted(sources) == list(range(n)), (dtype, n, blocks, block, unroll, head)
                    assert all(0 <= t < blocks * block for _, t in steps[0].edges)
                    if x.dtype.kind == "i":  # the compute model adds in x's dtype, wrapping
                        assert result == reference(x, "add", x.dtype)
                    for op in ("max", "min"):
                        assert fast.model(x, op=op, blocks=blocks, head=head, block=block, unroll=unroll) == reference(x, op)


def test_fast_model_rejects_bad_head():
    with pytest.raises(ValueError, match="head"):
        fast.model(np.ones(10, np.int32), head=4)


# --- steps ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
def test_model_steps(name, rng):
    for n in [1, 7, 16, 100, 3000]:
        x = random_data(rng, n, np.int32)
        result, steps = REDUCTIONS.get(name).model(x, op="add", return_steps=True)
        assert result == REDUCTIONS.get(name).model(x, op="add")
        assert steps and steps[-1].values.size == 1 and steps[-1].values[0] == result
        previous = x.size
        for step in steps:
            assert isinstance(step.label, str) and step.label
            for src, dst in step.edges:
                assert 0 <= dst < step.values.size and 0 <= src < max(previous, step.values.size)
            previous = step.values.size


@pytest.mark.parametrize("name", ["simple", "convergent"])
def test_in_place_steps_are_the_books(name):
    """One block, n = 16: log2(16) = 4 strides in the book's order, n/2, n/4, ... combines each."""
    x = np.arange(16, dtype=np.int64)
    result, steps = REDUCTIONS.get(name).model(x, return_steps=True)
    strides = [1, 2, 4, 8] if name == "simple" else [8, 4, 2, 1]
    assert [s.label for s in steps] == [f"level 0: stride {s}" for s in strides] + ["level 0: block results"]
    assert [len(s.edges) for s in steps[:-1]] == [8, 4, 2, 1]
    for stride, step in zip(strides, steps):
        assert all(src == dst + stride for src, dst in step.edges)
        if name == "simple":
            assert all(dst % (2 * stride) == 0 for _, dst in step.edges)
        else:
            assert sorted(dst for _, dst in step.edges) == list(range(stride))
    assert result == 120


# --- work counts (PMPP §10.4) ----------------------------------------------------------------------------------

def _brute_force_work(name, n):
    """Straight from the book's kernels: n/2 threads; thread t active if t % s == 0 (simple, s = 1 .. n/2) or
    t < s (convergent, s = n/2 .. 1); a warp counts in a step if any of its 32 threads is active."""
    threads = n // 2
    strides = [1 << k for k in range(int(math.log2(n)))]
    if name == "convergent":
        strides.reverse()
    ops, warps = 0, []
    for s in strides:
        active = [t for t in range(threads) if (t % s == 0 if name == "simple" else t < s)]
        ops += len(active)
        warps.append(len({t // 32 for t in active}))
    return ops, warps


@pytest.mark.parametrize("n", [2, 4, 32, 64, 128, 256, 512, 1024, 2048])
@pytest.mark.parametrize("name", ["simple", "convergent"])
def test_model_count_work(name, n):
    work = model_count_work(name, n)
    assert (work.additions, work.active_warps) == _brute_force_work(name, n)
    assert work.additions == n - 1


def test_count_work_at_256_against_the_book():
    """PMPP §10.4 at N = 256: convergent 255 operations / 384 resources, as printed.  The simple kernel: the book
    prints 736 = 23 x 32, but its 128 threads are 4 warps and at strides 1, 2, 4, 8, 16 AND 32 some thread of
    every warp is active (at stride 32: threads 0, 32, 64, 96, one per warp); then 2 warps at stride 64 and 1 at
    stride 128: (6 x 4 + 2 + 1) x 32 = 864.  The book counts only five full-width steps."""
    convergent = model_count_work("convergent", 256)
    assert (convergent.additions, convergent.warp_slots) == (255, 384)
    simple = model_count_work("simple", 256)
    assert simple.active_warps == [4, 4, 4, 4, 4, 4, 2, 1]
    assert (simple.additions, simple.warp_slots) == (255, 864)


@pytest.mark.parametrize("n", [0, 1, 3, 100, 4096, 2.0, True])
def test_count_work_bad_n(n):
    with pytest.raises(ValueError, match="power of two"):
        model_count_work("simple", n)


def test_count_work_only_where_built():
    with pytest.raises(ValueError, match="simple, convergent"):
        model_count_work("shared_memory", 256)
    with pytest.raises(ValueError, match="unknown reduce algorithm"):
        model_count_work("nope", 256)


# --- error depths -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["simple", "convergent", "shared_memory"])
def test_tree_error_depth_is_log2(name):
    """The host-relaunched trees are binary trees over the whole array: depth log2(n) for n a power of two."""
    depth = REDUCTIONS.get(name).error_depth
    for k in range(0, 29):
        assert depth(2**k) == max(k, 1)
    assert depth(2**20 + 7) == 11 + 10  # level 0: 513 blocks of 1024 threads (11 steps); level 1: 512 threads (10)


def test_atomic_error_depth():
    segmented = REDUCTIONS.get("segmented").error_depth
    coarsened = REDUCTIONS.get("coarsened").error_depth
    assert segmented(2**24) == 1 + 10 + 2**24 // 2048  # first combine, log2(1024) tree steps, 8192 atomics
    assert coarsened(2**24) == 7 + 10 + 2**24 // 8192
    assert segmented(1) == 1 + 0 + 1


def test_fast_error_depth():
    n = 2**28
    blocks = fast.grid_for(n, np.float32, fast.NOMINAL_MAX_BLOCKS)
    assert blocks == fast.NOMINAL_MAX_BLOCKS
    per_thread = math.ceil(n / 4 / (blocks * fast.FAST_BLOCK))
    fold = int(math.log2(fast.FAST_UNROLL * 4))  # the tree over a thread's FAST_UNROLL x 4 accumulators
    assert fast.error_depth(n, dtype=np.float32) == per_thread + fold + 12 + (1 + fold + 12)
    assert fast.error_depth(n) >= fast.error_depth(n, dtype=np.float64) >= fast.error_depth(n, dtype=np.float32)
    assert fast.error_depth(10, dtype=np.float32) == 1 + fold + 12  # one block, one vector per thread at most


def test_error_bound_catches_a_wrong_sum(rng):
    """The bound is not vacuous: leaving out the largest element (|x| ~ 1000 of 100,000 in [-1000, 1000)) breaks it."""
    x = random_data(rng, 100_000, np.float32)
    largest = int(np.argmax(np.abs(x)))
    for name in REDUCE_ALGORITHMS:
        depth = REDUCTIONS.get(name).error_depth(x.size)
        assert check_result(x, "add", REDUCTIONS.get(name).model(x), depth)[0]
        assert not check_result(x, "add", REDUCTIONS.get(name).model(np.delete(x, largest)), depth)[0], name


def test_block_for():
    assert [block_for(n, 2) for n in (1, 2, 3, 4, 5, 2048, 2049, 10**9)] == [1, 1, 2, 2, 4, 1024, 1024, 1024]
    assert block_for(8 * 1024, 8) == 1024 and block_for(9, 8) == 2


# --- registry and API validation --------------------------------------------------------------------------------

def test_registry():
    assert REDUCE_ALGORITHMS == ("simple", "convergent", "shared_memory", "segmented", "coarsened", "fast", "axis")
    assert pyscan.REDUCE_ALGORITHMS == REDUCE_ALGORITHMS
    assert [a.name for a in REDUCTIONS if a.fast] == ["fast", "axis"]
    assert choose_auto(10, np.float32, "add") == "fast"
    for algorithm in REDUCTIONS:
        assert algorithm.pattern == "reduce" and algorithm.model is not None and algorithm.summary
        assert algorithm.launch is not None and algorithm.error_depth is not None
        for path in algorithm.kernels:
            assert (KERNEL_ROOT / path).is_file()
        assert (algorithm.count_work is not None) == (algorithm.name in ("simple", "convergent"))
    assert REDUCTIONS.get("simple").source == "PMPP §10.3"
    assert REDUCTIONS.get("coarsened").source == "PMPP §10.8"


@pytest.mark.parametrize("bad, exc, match", [
    (None, TypeError, "numpy.ndarray or a device array"),
    ([1.0, 2.0], TypeError, "numpy.ndarray or a device array"),
    (np.ones(3, np.complex64), TypeError, "unsupported dtype complex64: expected one of bool, int8.*float64.*real"),
    (np.ones(3, np.longdouble), TypeError, f"unsupported dtype {np.dtype(np.longdouble)}"),
    (np.ones(3, "i4,i4"), TypeError, "unsupported dtype"),
    (np.ones(3, np.float32), TypeError, "bitwise_and.*integers and bool"),  # with op="bitwise_and" below
    (np.float32(1.0), TypeError, "numpy.ndarray or a device array"),
])
def test_reduce_bad_input(bad, exc, match):
    with pytest.raises(exc, match=match):
        pyscan.reduce(bad, op="bitwise_and" if "bitwise" in match else "add")


def test_reduce_unknown_algorithm_and_op():
    with pytest.raises(ValueError, match="'auto', 'simple', 'convergent', 'shared_memory', 'segmented', 'coarsened', 'fast'"):
        pyscan.reduce(np.ones(3, np.float32), algorithm="nope")
    with pytest.raises(ValueError, match="'add', 'mul', 'max', 'min', 'bitwise_and'"):
        pyscan.reduce(np.ones(3, np.float32), op="sum")
    with pytest.raises(ValueError, match="unknown reduce algorithm"):  # the algorithm is checked before x
        pyscan.reduce(None, algorithm="nope")


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_empty_follows_numpy(dtype):
    """Length 0 launches nothing: add -> 0 (np.sum, in its dtype: int64 for int32), mul -> 1 (np.prod), max/min ->
    ValueError (np.max, np.min)."""
    x = np.zeros(0, dtype)
    for name in ("auto",) + REDUCE_ALGORITHMS:
        result = pyscan.reduce(x, algorithm=name)
        assert result == np.sum(x) == 0 and result.dtype == np.sum(x).dtype
        if name != "axis":  # the axis kernels take add, max and min
            result = pyscan.reduce(x, algorithm=name, op="mul")
            assert result == np.prod(x) == 1 and result.dtype == np.prod(x).dtype
        for op in ("max", "min"):
            with pytest.raises(ValueError, match="zero-size array"):
                pyscan.reduce(x, algorithm=name, op=op)
            with pytest.raises(ValueError, match="zero-size array"):
                getattr(np, op)(x)


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is present")
def test_reduce_valid_input_needs_a_gpu():
    with pytest.raises(pyscan.GPUUnavailableError):
        pyscan.reduce(np.ones(3, np.float32))


def test_model_bad_input():
    with pytest.raises(ValueError, match="at least one element"):
        REDUCTIONS.get("simple").model(np.zeros(0, np.int32))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        REDUCTIONS.get("fast").model([1, 2, 3])
    with pytest.raises(ValueError, match="unknown op"):
        REDUCTIONS.get("segmented").model(np.ones(3, np.int32), op="prod")


# --- kernels: signatures and builds -----------------------------------------------------------------------------

def test_kernel_signatures():
    """The loader reads "PPq" (out, in, n) off the declarations; simple/convergent pass theirs explicitly."""
    for name in ("shared_memory", "segmented", "coarsened"):
        path, function, _ = book.KERNELS[name]
        assert signature(build_source(path), function) == "PPq"
    assert signature(build_source("reduction/segmented.cu"), "fill_identity") == "P"
    assert signature(build_source("reduction/fast.cu"), "reduce_fast") == "PPPPq"  # out, partials, ticket, in, n


NVCC = shutil.which("nvcc")
BUILDS = [(name, {"ELEM_TYPE": t, "OP": o}) for name in ("simple", "convergent", "shared_memory", "segmented",
                                                         "coarsened", "fast")
          for t, o in (("long long", "OP_MIN"), ("double", "OP_MAX"), ("float", "OP_ADD"))]
BUILDS += [(name, {"ELEM_TYPE": "int", "OP": "OP_ADD", "COUNT_WORK": 1}) for name in ("simple", "convergent")]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_specialisations_compile(tmp_path):
    """What the loader builds (defines + inlined includes) compiles for sm_90: other element types and operators
    than the files' defaults, and the COUNT_WORK builds.  (tests/unit/test_compile.py builds the defaults.)"""
    procs = []
    for k, (name, defines) in enumerate(BUILDS):
        path = "reduction/fast.cu" if name == "fast" else book.KERNELS[name][0]
        source = tmp_path / f"{k}.cu"
        source.write_text(build_source(path, **defines))
        procs.append(((name, defines), subprocess.Popen(
            [NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / f"{k}.cubin"), str(source)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    failures = [(what, p.communicate()[0]) for what, p in procs if p.wait() != 0]
    assert not failures, "\n".join(f"{what}:\n{log}" for what, log in failures)


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is present")
def test_demo_without_gpu(load_script, capsys):
    demo = load_script("demos/reduction.py")
    assert demo.main(["--size", "10"]) == 3  # 3: cannot run here (no usable GPU), as the CLI
    assert "no GPU" in capsys.readouterr().err


def test_fast_small_arrays_run_the_build_without_the_unrolled_loop(rng):
    """One vector per thread or less: SMALL_UNROLL's build (what the driver launches, and what the model follows);
    more: FAST_UNROLL's with every resident block.  Both give NumPy's integer results."""
    vec = fast.vector_width(np.int32)
    most = fast.NOMINAL_MAX_BLOCKS
    edge = most * fast.FAST_BLOCK * vec
    assert fast.grid_for(edge, np.int32, most) == most and fast.unroll_for(edge, np.int32, most) == fast.SMALL_UNROLL
    assert fast.unroll_for(edge + 1, np.int32, most) == fast.FAST_UNROLL
    one_block = fast.ONE_BLOCK_VECTORS * fast.FAST_BLOCK * vec  # one block while each thread has at most that many
    assert fast.grid_for(100, np.int32, most) == 1 and fast.grid_for(one_block, np.int32, most) == 1
    assert fast.grid_for(one_block + 1, np.int32, most) == fast.ONE_BLOCK_VECTORS + 1
    assert fast.unroll_for(one_block, np.int32, 1) == fast.FAST_UNROLL
    assert [b[1]["FAST_UNROLL"] for b in fast.kernel_builds(np.int32, "add")] == [fast.SMALL_UNROLL, fast.FAST_UNROLL]
    for n in (1, 2047, 2048, 2049, 4096, 4097, 6145, 100_003):
        x = rng.integers(-1000, 1000, n).astype(np.int32)
        for unroll in (None, fast.SMALL_UNROLL, fast.FAST_UNROLL):
            assert fast.model(x, unroll=unroll) == x.sum(dtype=np.int32), (n, unroll)
