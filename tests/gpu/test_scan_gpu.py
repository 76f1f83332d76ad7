"""pyscan.scan on the GPU: every algorithm x dtype x op x inclusive/exclusive against NumPy for the
edge lengths, GPUArray in -> GPUArray out, NumPy in -> NumPy out, inputs untouched.  The input checks, which
run without a GPU (they fail before anything is launched): tests/unit/test_scan.py.

Bounds: integers and max/min exact (NaN positions too); float add within the algorithm's error_depth bound
(tests/helpers/scan_checks.py: check_scan).
"""

import numpy as np
import pytest
from scan_checks import check_scan, expected_scan, make_input, reference

import pyscan
from pyscan.scans import SCAN_ALGORITHMS, SCANS
from pyscan.types import result_dtype

OPERATOR_NAMES = ("add", "max", "min")  # the operators of these tests; every operator x dtype: test_dtypes*.py

DTYPES = ("int32", "int64", "float32", "float64")
GPU_LENGTHS = (0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 65537, 2**20 + 7, 2**24)

# One test per (dtype, op, inclusive/exclusive, algorithm), the lengths looped inside; ordered so that the tests
# sharing data run one after the other and the data (2^24 elements, its reference) is built once per group.
CASES = [(d, op, exc, alg) for d in DTYPES for op in OPERATOR_NAMES for exc in (False, True) for alg in SCAN_ALGORITHMS]
IDS = [f"{d}-{op}-{'exclusive' if exc else 'inclusive'}-{alg}" for d, op, exc, alg in CASES]

_data_cache: dict = {}
_expected_cache: dict = {}


def _data(dtype, op):
    """{n: (host x, device x)} for every length.  Seeded from (dtype, op), not the per-test `rng` fixture: the same
    arrays serve the 2 x len(SCAN_ALGORITHMS) tests of the group."""
    key = (dtype, op)
    if key not in _data_cache:
        import pycuda.gpuarray as ga

        _data_cache.clear()
        _expected_cache.clear()
        rng = np.random.default_rng([DTYPES.index(dtype), OPERATOR_NAMES.index(op)])
        data = {}
        for n in GPU_LENGTHS:
            x = make_input(rng, n, dtype, op)
            data[n] = (x, ga.to_gpu(x))
        _data_cache[key] = data
    return _data_cache[key]


def _expected(dtype, op, exclusive):
    key = (dtype, op, exclusive)
    if key not in _expected_cache:
        _expected_cache[key] = {n: expected_scan(x, op, exclusive) for n, (x, _) in _data(dtype, op).items()}
    return _expected_cache[key]


@pytest.mark.parametrize("dtype, op, exclusive, algorithm", CASES, ids=IDS)
def test_scan_matches_numpy(dtype, op, exclusive, algorithm):
    import pycuda.gpuarray as ga

    depth = SCANS.get(algorithm).error_depth
    assert depth is not None, f"{algorithm} registers no error_depth"
    data, expected = _data(dtype, op), _expected(dtype, op, exclusive)
    for n, (x, x_dev) in data.items():
        out = pyscan.scan(x_dev, algorithm=algorithm, op=op, exclusive=exclusive)
        assert isinstance(out, ga.GPUArray) and out.dtype == result_dtype(x.dtype, op) and out.shape == x.shape
        assert n == 0 or out.gpudata != x_dev.gpudata  # a new array (an empty GPUArray has no allocation)
        check_scan(out.get(), expected[n], depth(n), f"{algorithm} {dtype} {op} exclusive={exclusive} n={n}")
    for n in (2049, 2**24):
        np.testing.assert_array_equal(data[n][1].get(), data[n][0], err_msg=f"{algorithm} changed its input (n={n})")


@pytest.mark.parametrize("algorithm", SCAN_ALGORITHMS)
def test_numpy_in_numpy_out(algorithm, rng):
    for dtype in ("int32", "float64"):
        x = make_input(rng, 5000, dtype, "add")
        before = x.copy()
        out = pyscan.scan(x, algorithm=algorithm)
        assert type(out) is np.ndarray and out.dtype == np.cumsum(x).dtype  # int64 for int32, as NumPy
        check_scan(out, expected_scan(x, "add", False), SCANS.get(algorithm).error_depth(x.size), algorithm)
        np.testing.assert_array_equal(x, before)
    empty = pyscan.scan(np.zeros(0, np.float32), algorithm=algorithm, exclusive=True)
    assert type(empty) is np.ndarray and empty.shape == (0,) and empty.dtype == np.float32


@pytest.mark.parametrize("algorithm", SCAN_ALGORITHMS)
def test_integer_add_is_numpys(algorithm, rng):
    """Large int32 values: the sums leave int32's range, exact in NumPy's int64 (no wrap); int64 add wraps modulo
    2^64, as np.cumsum's; dtype=np.int32 wraps in 32 bits, as np.cumsum(x, dtype=np.int32)."""
    for dtype in (np.int32, np.int64):
        info = np.iinfo(dtype)
        x = rng.integers(info.max // 4, info.max, 100_003, dtype=dtype)
        for exclusive in (False, True):
            out = pyscan.scan(x, algorithm=algorithm, exclusive=exclusive)
            assert out.dtype == np.int64
            np.testing.assert_array_equal(out, reference(x, "add", exclusive), err_msg=f"{algorithm} {dtype.__name__}")
        wrapped = pyscan.scan(x, algorithm=algorithm, dtype=dtype)
        assert wrapped.dtype == dtype
        np.testing.assert_array_equal(wrapped, np.cumsum(x, dtype=dtype), err_msg=f"{algorithm} dtype={dtype.__name__}")


def test_non_contiguous_numpy_is_copied(rng):
    x = rng.integers(-100, 100, 20001, dtype=np.int64)
    view = x[::3]
    for algorithm in ("kogge_stone", "auto"):
        np.testing.assert_array_equal(pyscan.scan(view, algorithm=algorithm), np.cumsum(view))
        np.testing.assert_array_equal(pyscan.scan(x[::-1], algorithm=algorithm, op="max"),
                                      np.maximum.accumulate(x[::-1]))


def test_non_contiguous_gpuarray_refused(rng):
    import pycuda.gpuarray as ga

    x = ga.to_gpu(rng.integers(0, 9, 100, dtype=np.int32))
    with pytest.raises(ValueError, match="contiguous"):
        pyscan.scan(x[::2])


def test_hierarchical_block_scans_selectable(rng):
    """hierarchical_scan with each block scan hierarchical offers (and the other section scans) on three levels."""
    import pycuda.gpuarray as ga

    from pyscan.runtime.arrays import Call
    from pyscan.scans.hierarchical import BLOCK_SCANS, SECTION_SCANS, hierarchical_scan

    assert set(BLOCK_SCANS) == {"kogge_stone", "brent_kung", "coarsened"}
    x = rng.integers(-9, 9, 3 * 4096 * 4096 + 5, dtype=np.int32)  # > S^2 elements: three levels for every S
    x_dev = ga.to_gpu(x)
    expected = np.cumsum(x, dtype=np.int32)
    for name in SECTION_SCANS:
        call = Call.tool()
        out = call.empty(x.shape, x.dtype)
        launches = hierarchical_scan(x_dev, out, op="add", exclusive=False, call=call, block_scan=name)
        assert launches >= 5, f"{name}: {launches} launches for three levels"
        np.testing.assert_array_equal(out.get(), expected, err_msg=name)
    with pytest.raises(ValueError, match="kogge_stone"):
        hierarchical_scan(x_dev, out, op="add", exclusive=False, call=call, block_scan="nope")
