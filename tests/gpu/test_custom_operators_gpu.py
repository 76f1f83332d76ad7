"""Custom operators (op= a C expression, identity=), map= and initial= on the GPU, against the left-to-right
references of tests/helpers/custom_checks.py (the models' side: tests/unit/test_custom_operators.py).

* every scan and reduction algorithm x dtypes x "a + b", "max(a, b)", "a * b" (the fast kernels every dtype of
  custom_checks.DTYPES, the book's a subset), a few lengths, inclusive and exclusive alternating;
* an expression equal to a named operator gives that operator's results bit for bit (int32, every algorithm);
* a non-commutative associative operator (affine maps: a linear recurrence) through every scan, long enough for
  the look-back windows of decoupled_lookback and the axis kernels;
* map=: sums of squares, counts of negatives, L1 norms, the index, a map with a custom operator, on every reduction
  algorithm but axis (which refuses it), and the fast kernel's misaligned views (scalar head and tail indices);
* initial= for every scan algorithm (inclusive, exclusive, along axes) and every reduction (empty arrays too);
* the kernels' results against the models bit for bit where the model is exact (integers).

Which to run first on a new GPU: test_scan_expressions[decoupled_lookback-*] and test_reduce_expressions[fast-*]
(auto's algorithms), then test_maps_on_every_algorithm, test_initial_scans, test_non_commutative_scans.
"""

import numpy as np
import pytest
from custom_checks import (
    AFFINE,
    AFFINE_IDENTITY,
    AFFINE_SIGNED,
    DTYPES,
    OPS,
    affine_maps,
    affine_reference,
    check_reduce,
    check_scan,
    expression,
    identity_for,
    make,
)

import pyscan
from pyscan.axes import AXIS_DTYPES
from pyscan.errors import ExpressionCompileError
from pyscan.reductions import REDUCTIONS
from pyscan.scans import SCANS

LENGTHS = (1, 33, 1025, 8209, 70001)
BOOK_DTYPES = (np.bool_, np.int8, np.int32, np.uint64, np.float16, np.float64)
FAST = ("decoupled_lookback", "fast")


def _id(v):
    return v if isinstance(v, str) else np.dtype(v).name


def _takes(algorithm, dtype):
    """Every algorithm takes every dtype with a custom operator (the axis kernels' AXIS_DTYPES are all of them)."""
    return algorithm != "axis" or np.dtype(dtype) in AXIS_DTYPES


SCAN_CASES = [(a, d, name) for a in SCANS.names() for d in DTYPES for name in OPS
              if (a in FAST or d in BOOK_DTYPES) and _takes(a, d)]
REDUCE_CASES = [(a, d, name) for a in REDUCTIONS.names() for d in DTYPES for name in OPS
                if (a in FAST or d in BOOK_DTYPES) and _takes(a, d)]


def as_numpy(result):
    return result.get() if hasattr(result, "get") else np.asarray(result)


@pytest.mark.parametrize("algorithm,dtype,name", SCAN_CASES, ids=_id)
def test_scan_expressions(algorithm, dtype, name):
    rng = np.random.default_rng([DTYPES.index(dtype), list(OPS).index(name), 31])
    depth = SCANS.get(algorithm).error_depth
    value = np.dtype(dtype)
    for i, n in enumerate(LENGTHS):
        x = make(rng, n, dtype, name)
        exclusive = bool(i % 2)
        out = pyscan.scan(x, op=expression(name), identity=identity_for(name, value), exclusive=exclusive,
                          algorithm=algorithm)
        check_scan(out, x, name, exclusive, depth(n), what=f"{algorithm} {value} {name} n={n}")


@pytest.mark.parametrize("algorithm,dtype,name", REDUCE_CASES, ids=_id)
def test_reduce_expressions(algorithm, dtype, name):
    rng = np.random.default_rng([DTYPES.index(dtype), list(OPS).index(name), 37])
    a = REDUCTIONS.get(algorithm)
    value = np.dtype(dtype)
    for n in LENGTHS:
        x = make(rng, n, dtype, name)
        got = pyscan.reduce(x, op=expression(name), identity=identity_for(name, value), algorithm=algorithm)
        check_reduce(got, x, name, a.error_depth(n) + 16, what=f"{algorithm} {value} {name} n={n}")


@pytest.mark.parametrize("name", list(OPS))
def test_an_expression_equal_to_a_named_operator_gives_its_results(name):
    """Same kernels, OP_EXPR in place of OP_ADD / OP_MAX / OP_MUL: int32 results bit for bit (and the models')."""
    rng = np.random.default_rng(list(OPS).index(name))
    for n in (5, 4099, 1_000_003):
        x = make(rng, n, np.int32, name)
        for algorithm in SCANS.names():
            custom = pyscan.scan(x, op=expression(name), identity=identity_for(name, x.dtype), algorithm=algorithm)
            named = pyscan.scan(x, op=name, dtype=np.int32, algorithm=algorithm)
            np.testing.assert_array_equal(custom, named, err_msg=f"{algorithm} n={n}")
        for algorithm in REDUCTIONS.names():
            custom = pyscan.reduce(x, op=expression(name), identity=identity_for(name, x.dtype), algorithm=algorithm)
            assert custom == pyscan.reduce(x, op=name, dtype=np.int32, algorithm=algorithm), (algorithm, n)
            assert custom == REDUCTIONS.get(algorithm).model(x, op=name, dtype=np.int32), (algorithm, n)


@pytest.mark.parametrize("algorithm", SCANS.names())
def test_non_commutative_scans(algorithm):
    """Affine maps composed in order: every scan keeps the combines in order (decoupled_lookback's and axis's
    look-back windows included: over 2^20 elements of 64 bits, hundreds of tiles)."""
    rng = np.random.default_rng(SCANS.names().index(algorithm))
    for n in (3, 4097, 2**20 + 3):
        x = affine_maps(rng, n)
        want = affine_reference(x)
        for exclusive in (False, True):
            if algorithm == "axis":  # its dtypes: the same maps as int64, through unsigned casts
                got = pyscan.scan(x.view(np.int64), op=AFFINE_SIGNED, identity=AFFINE_IDENTITY, exclusive=exclusive,
                                  algorithm=algorithm).view(np.uint64)
            else:
                got = pyscan.scan(x, op=AFFINE, identity=AFFINE_IDENTITY, exclusive=exclusive, algorithm=algorithm)
            expected = np.concatenate([np.array([AFFINE_IDENTITY], np.uint64), want[:-1]]) if exclusive else want
            np.testing.assert_array_equal(got, expected, err_msg=f"{algorithm} n={n} exclusive={exclusive}")
    x = affine_maps(rng, 100_003)
    assert pyscan.reduce(x, op=AFFINE, identity=AFFINE_IDENTITY, algorithm="simple") == affine_reference(x)[-1]


def test_non_commutative_scans_along_axes():
    """The axis kernels' look-backs in order too: long rows (decoupled_lookback.cu's rows build: many tiles per row)
    and columns (axis_columns.cu: row chunks per lane)."""
    rng = np.random.default_rng(77)
    x = affine_maps(rng, 2 * (2**19 + 5)).reshape(2, -1)
    got = pyscan.scan(x.view(np.int64), axis=1, op=AFFINE_SIGNED, identity=AFFINE_IDENTITY).view(np.uint64)
    for r in range(2):
        np.testing.assert_array_equal(got[r], affine_reference(x[r]), err_msg=f"row {r}")
    y = affine_maps(rng, 70001 * 3).reshape(70001, 3)
    got = pyscan.scan(y.view(np.int64), axis=0, op=AFFINE_SIGNED, identity=AFFINE_IDENTITY).view(np.uint64)
    for c in range(3):
        np.testing.assert_array_equal(got[:, c], affine_reference(y[:, c].copy()), err_msg=f"column {c}")


def test_custom_operators_on_device_arrays_and_along_axes():
    import pycuda.gpuarray as ga

    rng = np.random.default_rng(4)
    x = rng.integers(-9, 9, (33, 4099)).astype(np.int32)
    for axis in (0, 1):
        got = pyscan.scan(x, axis=axis, op="a * b", identity=1)
        np.testing.assert_array_equal(got, np.multiply.accumulate(x, axis=axis, dtype=np.int32))
        got = pyscan.reduce(x, axis=axis, op="max(a, b)", identity=-2**31)
        np.testing.assert_array_equal(got, np.max(x, axis=axis))
    d = ga.to_gpu(x.reshape(-1))
    out = pyscan.scan(d, op="a + b + 1", identity=-1)
    assert isinstance(out, ga.GPUArray) and out.dtype == np.int32
    np.testing.assert_array_equal(out.get(), np.cumsum(x.reshape(-1), dtype=np.int32) + np.arange(x.size, dtype=np.int32))


def test_custom_float16_sums_round_every_combine():
    half = np.float16([1, 2048, 1])
    for algorithm in SCANS.names():
        if algorithm == "axis":
            continue
        assert pyscan.scan(half, op="a + b", identity=0, algorithm=algorithm)[-1] == 2048, algorithm
        assert pyscan.scan(half, algorithm=algorithm)[-1] == 2050, algorithm


def test_kernels_cache_one_build_per_expression():
    from pyscan.runtime import loader

    x = np.arange(1000, dtype=np.float32)
    pyscan.scan(x, op="a + b", identity=0)
    before = loader.cache_size()
    for spelling in ("a+b", " a + b ", "(a) + (b)"):
        pyscan.scan(x, op=spelling, identity=0.0)
    assert loader.cache_size() == before  # the same tree, the same kernel


# Expressions over the whole grammar (casts, ?:, the functions, integer and float arithmetic), associative or not:
# on an algorithm with a fixed grouping the kernels and the models compute the same combines, so they agree bit for
# bit whatever the operator (floats: no a * b + c, which nvcc may fuse into one rounding).
GRAMMAR_INT = ["a - b", "(a ^ b) + ((a & b) << 1)", "a / (abs(b) % 5 + 1) + a % 7", "a > b ? a - b : b - a",
               "(int)((unsigned)a >> 3) + ~b", "(int)((long long)a * 3000000 >> 20)",
               "min(max(a, b), 900) + !a + (a && b) + (a || b)", "(int)fmax(sqrt(fabs(a)), floor(b * 0.5f))",
               "(short)(a * 40000) + (char)b", "trunc(a / 3.0) + ceil(b / 7.0)"]
GRAMMAR_FLOAT = ["fmax(a, b) - fmin(a, b)", "a > b ? a : b / 2", "fabs(a) + b", "(float)((double)a + b)",
                 "max(a, b) + min(a, 1)", "sqrt(fabs(a)) + trunc(b)"]


@pytest.mark.parametrize("algorithm", ["kogge_stone", "brent_kung", "blelloch", "simple"])
def test_the_grammar_compiles_and_runs_as_the_models_say(algorithm):
    rng = np.random.default_rng(5)
    ints = rng.integers(-1000, 1000, 3001).astype(np.int32)
    floats = (rng.standard_normal(3001) * 10).astype(np.float32)
    for x, sources in ((ints, GRAMMAR_INT), (floats, GRAMMAR_FLOAT)):
        for source in sources:
            try:
                if algorithm == "simple":
                    got = pyscan.reduce(x, op=source, identity=0, algorithm=algorithm)
                    want = REDUCTIONS.get(algorithm).model(x, op=source, identity=0)
                else:
                    got = pyscan.scan(x, op=source, identity=0, algorithm=algorithm)
                    want = SCANS.get(algorithm).model(x, op=source, identity=0)
            except ExpressionCompileError as e:  # what nvcc refused, named with the expression
                assert repr(source) in str(e)
                raise
            np.testing.assert_array_equal(got, want, err_msg=f"{algorithm} {source}")


# ------------------------------------------------------------------------------------------------------ map=

def _sum_tol(values, depth):
    return (depth + 3) * np.finfo(values.dtype).eps * float(np.sum(np.abs(values.astype(np.float64)))) + 1e-30


@pytest.mark.parametrize("algorithm", [a for a in REDUCTIONS.names() if a != "axis"])
def test_maps_on_every_algorithm(algorithm):
    rng = np.random.default_rng(REDUCTIONS.names().index(algorithm))
    a = REDUCTIONS.get(algorithm)
    for n in (1, 31, 4099, 1_000_003):
        f = (rng.standard_normal(n) * 3).astype(np.float32)
        ints = rng.integers(-1000, 1000, n).astype(np.int32)
        depth = a.error_depth(n)
        got = pyscan.reduce(f, map="x * x", algorithm=algorithm)  # sum of squares
        assert got.dtype == np.float32 and abs(float(got) - float(np.sum(f.astype(np.float64) ** 2))) <= _sum_tol(
            f * f, depth)
        got = pyscan.reduce(ints, map="x * x", algorithm=algorithm)  # int32 squares, summed in int64
        assert got.dtype == np.int64 and got == np.sum(ints.astype(np.int64) ** 2)
        got = pyscan.reduce(f, map="x < 0", dtype=np.int64, algorithm=algorithm)  # a count
        assert got.dtype == np.int64 and got == np.count_nonzero(f < 0)
        d = f.astype(np.float64)
        got = pyscan.reduce(d, map="abs(x)", algorithm=algorithm)  # L1 norm
        assert abs(float(got) - float(np.sum(np.abs(d)))) <= _sum_tol(d, depth)
        assert pyscan.reduce(ints, map="i", algorithm=algorithm) == n * (n - 1) // 2
        assert pyscan.reduce(ints, map="(long long)x * i", algorithm=algorithm) == np.sum(ints.astype(np.int64)
                                                                                          * np.arange(n))
        assert pyscan.reduce(ints, op="max(a, b)", identity=0, map="abs(x)", algorithm=algorithm) == np.max(
            np.abs(ints))
        for dtype in (np.bool_, np.int8, np.float16):  # narrow x: x in its own type widened, through the map
            narrow = make(rng, min(n, 4099), dtype, "add")  # float16 sums stay far from its 65504
            got = pyscan.reduce(narrow, map="x * 2", algorithm=algorithm)
            want = REDUCTIONS.get(algorithm).model(narrow, map="x * 2")
            assert got.dtype == want.dtype, (dtype, got.dtype, want.dtype)
            if np.dtype(dtype).kind == "f":  # the GPU's grouping may differ (atomics, grid): the bound, one ulp more
                tol = 2 * _sum_tol(narrow.astype(np.float32) * 2, depth) + 2 * float(np.spacing(abs(want)))
                assert abs(float(got) - float(want)) <= tol, (n, float(got), float(want), tol)
            else:
                assert got == want, (dtype, n)


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.int32, np.float64])
def test_maps_on_misaligned_views(dtype, rng):
    """The fast kernel's scalar head and tail pass their own indices to the map (map="i" sums them)."""
    import pycuda.gpuarray as ga

    x = make(rng, 300_011, dtype, "add")
    d = ga.to_gpu(x)
    for start in range(5):
        for stop in (x.size, x.size - 1, start + 1, start + 7):
            view, host = d[start:stop], x[start:stop]
            m = host.size
            got = as_numpy(pyscan.reduce(view, map="i", dtype=np.int64, algorithm="fast"))
            assert got == m * (m - 1) // 2, (start, stop)
            got = as_numpy(pyscan.reduce(view, map="(long long)(x > 0) * (i + 1)", dtype=np.int64, algorithm="fast"))
            assert got == np.sum((host > 0) * (np.arange(m) + 1)), (start, stop)


def test_map_is_refused_along_axes_before_the_gpu():
    x = np.ones((3, 4), np.float32)
    with pytest.raises(TypeError, match="take no map"):
        pyscan.reduce(x, axis=0, map="x * x")
    with pytest.raises(TypeError, match="take no map"):
        pyscan.reduce(x.reshape(-1), map="x * x", algorithm="axis")


# -------------------------------------------------------------------------------------------------- initial=

@pytest.mark.parametrize("algorithm", SCANS.names())
def test_initial_scans(algorithm):
    rng = np.random.default_rng(SCANS.names().index(algorithm) + 100)
    depth = SCANS.get(algorithm).error_depth
    for n in (1, 1025, 70001):
        x = rng.integers(-1000, 1000, n).astype(np.int32)
        for exclusive in (False, True):
            want = np.cumsum(np.concatenate([[7], x]))
            got = pyscan.scan(x, initial=7, exclusive=exclusive, algorithm=algorithm)
            np.testing.assert_array_equal(got, want[:-1] if exclusive else want[1:], err_msg=f"{algorithm} n={n}")
            want = np.maximum.accumulate(np.concatenate([[500], x]))
            got = pyscan.scan(x, op="max(a, b)", identity=-2**31, initial=500, exclusive=exclusive,
                              algorithm=algorithm)
            np.testing.assert_array_equal(got, want[:-1] if exclusive else want[1:], err_msg=f"{algorithm} n={n}")
            f = make(rng, n, np.float32, "add")
            check_scan(pyscan.scan(f, initial=2.5, exclusive=exclusive, algorithm=algorithm), f, "add", exclusive,
                       depth(n), initial=2.5, what=f"{algorithm} n={n}")


def test_initial_along_axes_and_in_place():
    import pycuda.gpuarray as ga

    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    for axis in (0, 1, 2):
        for exclusive in (False, True):
            got = pyscan.scan(x, axis=axis, initial=100, exclusive=exclusive)
            shape = list(x.shape)
            shape[axis] = 1
            want = np.cumsum(np.concatenate([np.full(shape, 100), x], axis=axis), axis=axis)
            want = np.take(want, range(x.shape[axis]) if exclusive else range(1, x.shape[axis] + 1), axis=axis)
            np.testing.assert_array_equal(got, want)
    d = ga.to_gpu(np.arange(1, 101, dtype=np.int64))
    assert pyscan.scan(d, out=d, initial=-1) is d
    np.testing.assert_array_equal(d.get(), np.cumsum(np.arange(1, 101)) - 1)


@pytest.mark.parametrize("algorithm", REDUCTIONS.names())
def test_initial_reductions(algorithm):
    x = np.arange(-50, 70, dtype=np.int32)  # the axis kernels' dtype too
    assert pyscan.reduce(x, initial=1000, algorithm=algorithm) == np.add.reduce(x, initial=1000)
    assert pyscan.reduce(x, op="max", initial=100, algorithm=algorithm) == 100
    assert pyscan.reduce(x, op="max", initial=-100, algorithm=algorithm) == 69
    assert pyscan.reduce(x.astype(np.int32), op="a * b", identity=1, initial=0, algorithm=algorithm) == 0
    if algorithm != "axis":
        assert pyscan.reduce(x, map="x < 0", initial=1, algorithm=algorithm) == 51


def test_initial_reductions_of_empty_and_device_arrays():
    import pycuda.gpuarray as ga

    assert pyscan.reduce(np.zeros(0, np.float32), op="max", initial=3) == 3
    empty = ga.to_gpu(np.zeros(0, np.int32))
    got = pyscan.reduce(empty, op="min", initial=-4)
    assert got.get() == -4 and got.dtype == np.int32
    got = pyscan.reduce(np.zeros((0, 5), np.float64), axis=0, op="max", initial=1.5)
    np.testing.assert_array_equal(got, np.full(5, 1.5))
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(pyscan.reduce(x, axis=1, initial=0.5), np.add.reduce(x, axis=1, initial=0.5))
    d = ga.to_gpu(np.arange(10, dtype=np.int64))
    assert pyscan.reduce(d, initial=5).get() == 50
