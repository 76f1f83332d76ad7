"""pyscan.histogram / pyscan.bincount without a GPU: the host's rules (numpy_plan) and the kernels' NumPy
step-models (numpy_models) against np.histogram and np.bincount for every dtype, values on and next to the edges,
out of range, NaN and inf, weights, density, 0 and 1 elements; the strategy and the grid; the kernels' argument
types; and the checks made before anything reaches the GPU.

Counts are compared exactly.  Float weights are summed in float64 on the device where NumPy sums each block of
65536 elements in float64 and adds the blocks in the weights' dtype, so the sums differ by at most
(n / 65536 + 2) rounding errors of the weights' dtype times the sum of |w| of the bin (the bound checked here)."""

import ctypes
import dataclasses
import re
import shutil
import subprocess
import warnings

import numpy as np
import pytest
from test_interop import fake_gpu  # noqa: F401  (the fake device's fixture)

import pyscan
from pyscan.histograms import numpy_histogram as nh
from pyscan.histograms import numpy_models as nm
from pyscan.histograms import numpy_plan as plan
from pyscan.runtime.loader import build_source, signature

DTYPES = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                np.float16, np.float32, np.float64)]
INT_DTYPES = [d for d in DTYPES if d.kind in "iu"]


def _data(dtype, n, rng):
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 3).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), n, endpoint=True).astype(dtype)


def _neighbours(edges, dtype):
    """The edges as the data's dtype, and the next value up and down: where the bin arithmetic must be exact."""
    e = edges.astype(dtype)
    if dtype.kind == "f":
        return np.concatenate([e, np.nextafter(e, dtype.type(np.inf)), np.nextafter(e, dtype.type(-np.inf))])
    info = np.iinfo(dtype)
    up = np.array([min(int(v) + 1, info.max) for v in e], dtype)
    down = np.array([max(int(v) - 1, info.min) for v in e], dtype)
    return np.concatenate([e, up, down])


def _same(got, want):
    assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


def _outcome(function):
    try:
        return function()
    except (ValueError, TypeError, OverflowError) as exc:
        return exc


def _same_outcome(data, bins, range_=None):
    got = _outcome(lambda: nm.histogram_model(data, bins, range_, sms=2))
    want = _outcome(lambda: np.histogram(data, bins, range_))
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(want) in str(got), (got, want)
    else:
        assert not isinstance(got, Exception), got
        _same(got, want)


# ---- equal bins: every dtype, every kind of range ----------------------------------------------------------

RANGES = [None, (-3.0, 3.0), (0.1, 0.7), (np.float32(0.1), np.float32(2.7)), (-1, 2), (0, 256),
          (np.float64(-2.2), np.float64(1.1)), (-100.5, 300.25)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("bins", [1, 7, 10, 100, 4096])
def test_equal_bins_equal_numpy(dtype, bins, rng):
    x = _data(dtype, 2001, rng)
    for range_ in RANGES:
        try:
            edges = np.histogram(np.empty(0, dtype), bins, range_ if range_ is not None else (x.min(), x.max()))[1]
        except ValueError:
            edges = np.zeros(0)
        data = np.concatenate([x, _neighbours(edges, dtype)]) if edges.size else x
        _same_outcome(data, bins, range_)


@pytest.mark.parametrize("dtype", [np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.int8)], ids=str)
def test_integer_extremes(dtype, rng):
    info = np.iinfo(dtype)
    x = np.concatenate([rng.integers(info.min, info.max, 500, endpoint=True, dtype=dtype),
                        np.array([info.min, info.max, 0, 1], dtype=dtype)])
    for bins in (1, 2, 3, 255, 256, 1000):
        for range_ in (None, (int(info.min), int(info.max)), (0, 100), (np.float16(0), np.float16(100)),
                       (2**62, 2**63) if info.bits == 64 else (-0.5, 0.5)):
            _same_outcome(x, bins, range_)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind == "f"], ids=str)
def test_nan_and_inf(dtype):
    x = np.array([0.5, np.nan, np.inf, -np.inf, 1.0, 0.0, 2.0, -0.0], dtype=dtype)
    for bins in (1, 4, 100):
        for range_ in ((0, 1), (-1.0, 2.0), (0.25, 0.75)):
            _same(nm.histogram_model(x, bins, range_, sms=1), np.histogram(x, bins, range_))
        _same(nm.histogram_model(x, np.array([-np.inf, 0, 1, np.inf]), sms=1),
              np.histogram(x, np.array([-np.inf, 0, 1, np.inf])))
    for bad in (x, x[2:4], np.array([1.0, np.inf], dtype)):  # range=None with NaN or inf: NumPy's message
        with pytest.raises(ValueError) as ours:
            nm.histogram_model(bad, 10, sms=1)
        with pytest.raises(ValueError) as numpys:
            np.histogram(bad, 10)
        assert str(ours.value) == str(numpys.value)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_zero_and_one_element(dtype):
    for x in (np.zeros(0, dtype), np.ones(1, dtype), np.full(1, 7, dtype)):
        for bins in (1, 3, 10):
            for range_ in (None, (0, 10)):
                _same(nm.histogram_model(x, bins, range_, sms=1), np.histogram(x, bins, range_))


def test_all_values_equal_widens_the_range(rng):
    for dtype in DTYPES:
        x = np.full(300, 5, dtype)
        _same(nm.histogram_model(x, 10, sms=1), np.histogram(x, 10))


def test_n_dimensional_input_is_flattened(rng):
    x = rng.standard_normal((7, 11, 3)).astype(np.float32)
    _same(nm.histogram_model(x, 20, sms=1), np.histogram(x, 20))


# ---- explicit edges -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_explicit_edges(dtype, rng):
    x = _data(dtype, 1500, rng)
    for edges in (np.array([-5.0, -1.5, 0.0, 0.25, 3.0, 100.0]), np.array([-3, 0, 0, 1, 5, 5]),
                  np.array([0, 1, 2, 3], np.uint8), np.array([-2.5, 2.5], np.float32),
                  np.array([-np.inf, 0.0, np.inf]), np.sort(rng.standard_normal(50)).astype(np.float16),
                  np.array([7.0])):
        data = np.concatenate([x, _neighbours(edges[np.isfinite(edges.astype(np.float64))], dtype)])
        _same_outcome(data, edges)


def test_edges_compared_in_the_common_type():
    """int64 data against float64 edges is compared in float64, as NumPy's searchsorted does: 2^53 + 3 rounds to
    2^53 + 4, on the edge."""
    x = np.array([2**53 + 3, 2**53 + 1, 2**53 + 4, 2**62 + 1], np.int64)
    for edges in (np.array([2.0**53 + 4, 2.0**54]), np.array([2**53 + 4, 2**54])):
        _same(nm.histogram_model(x, edges, sms=1), np.histogram(x, edges))
    x = np.array([2**64 - 1, 2**63, 5], np.uint64)
    _same(nm.histogram_model(x, np.array([-1, 2**62], np.int64), sms=1),
          np.histogram(x, np.array([-1, 2**62], np.int64)))


# ---- weights and density ------------------------------------------------------------------------------------

def _weight_bound(weights, data, bins, range_):
    eps = np.finfo(weights.dtype).eps if weights.dtype.kind == "f" else 0.0
    abs_sums = np.histogram(data, bins, range_, weights=np.abs(weights.astype(np.float64)))[0]
    return (data.size / 65536 + 2) * eps * abs_sums + 1e-300


@pytest.mark.parametrize("weight_dtype", [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.uint64)], ids=str)
def test_weights(dtype, weight_dtype, rng):
    x = _data(dtype, 3000, rng)
    weights = (rng.standard_normal(x.size) * 10).astype(weight_dtype) if np.dtype(weight_dtype).kind == "f" else \
        rng.integers(0, 100, x.size).astype(weight_dtype)
    for bins, range_ in ((10, None), (100, (-2, 2)), (3, (0, 1000))):
        got = nm.histogram_model(x, bins, range_, weights, sms=2)
        want = np.histogram(x, bins, range_, weights=weights)
        assert got[0].dtype == want[0].dtype
        np.testing.assert_array_equal(got[1], want[1])
        if np.dtype(weight_dtype).kind == "f":
            difference = np.abs(got[0].astype(np.float64) - want[0].astype(np.float64))
            assert np.all(difference <= _weight_bound(weights, x, bins, range_)), difference.max()
        else:
            np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.float16)], ids=str)
def test_density(dtype, rng):
    x = _data(dtype, 2000, rng)
    for bins in (10, np.array([-50.0, -1.0, 0.0, 0.5, 3.0, 900.0])):
        got = nm.histogram_model(x, bins, density=True, sms=2)
        want = np.histogram(x, bins, density=True)
        np.testing.assert_array_equal(got[0], want[0])  # integer counts: NumPy's formula to the bit
        weights = rng.random(x.size).astype(np.float32)
        got = nm.histogram_model(x, bins, weights=weights, density=True, sms=2)
        # Against NumPy with the weights in float64, not float32: for explicit edges NumPy differences float32
        # running sums (cw[bin_index]), whose error grows with the running total, not with the bin's own sum.
        # pyscan sums in float64 and rounds each bin to float32 once (half an ulp); n.sum() over the float32 bins
        # adds at most one rounding per bin; the divisions one more.  Hence (bins + 2) float32 ulps.
        want = np.histogram(x, bins, weights=weights.astype(np.float64), density=True)
        assert got[0].dtype == np.histogram(x, bins, weights=weights, density=True)[0].dtype
        np.testing.assert_allclose(got[0], want[0], rtol=(got[0].size + 2) * np.finfo(np.float32).eps)


# ---- bincount -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_bincount(dtype, rng):
    high = min(np.iinfo(dtype).max, 999)
    x = rng.integers(0, high, 3000, endpoint=True).astype(dtype)
    np.testing.assert_array_equal(nm.bincount_model(x, sms=2), np.bincount(x))
    np.testing.assert_array_equal(nm.bincount_model(x, minlength=2000, sms=2), np.bincount(x, minlength=2000))
    weights = rng.standard_normal(x.size)
    np.testing.assert_allclose(nm.bincount_model(x, weights, sms=2), np.bincount(x, weights), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_array_equal(nm.bincount_model(np.zeros(0, dtype), minlength=3), np.bincount(np.zeros(0, dtype),
                                                                                                  minlength=3))
    if dtype.kind == "i":
        with pytest.raises(ValueError, match="negative"):
            nm.bincount_model(np.array([3, -1, 2], dtype))


@pytest.mark.parametrize("dtype", [d for d in INT_DTYPES if d.itemsize > 1], ids=str)
def test_bincount_one_pass(dtype, rng):
    """The one pass: its bins (a power of two from 256 at or above the expected length, at most 12,288, none past
    them), its extreme words at the dtype's ends, and bincount whether its guess holds or the data need a second
    count."""
    assert [plan.one_pass_bins(n) for n in (0, 1, 256, 257, 1000, 4097, 8193, 12288, 12289)] == [
        256, 256, 256, 512, 1024, 8192, 12288, 12288, None]
    assert plan.choose_strategy(plan.ONE_PASS_MOST_BINS, False, None, 4) == (plan.SHARED, 1)
    # the global pass: from the first minlength whose count takes the global histogram, up to its most bins
    assert [plan.global_pass(m, 1000) for m in (0, 300, 12288, 12289, 2**20, plan.MAX_BINS, plan.MAX_BINS + 1)] == [
        False, False, False, True, True, True, False]
    most = plan.GLOBAL_PASS_MOST_VALUES  # and up to its most values (past them: min_max.cu's pass, then the count)
    assert [plan.global_pass(2**20, n) for n in (1, most, most + 1)] == [True, True, False]
    assert plan.choose_strategy(plan.ONE_PASS_MOST_BINS + 1, False, None, dtype.itemsize) == (plan.GLOBAL, 0)
    info = np.iinfo(dtype)
    for x in (np.array([info.min, info.max], dtype), np.array([info.max], dtype), np.array([info.min], dtype),
              rng.integers(info.min, info.max, 999, dtype=dtype, endpoint=True)):
        assert plan.extremes_of(nm.extremes_words_model(x), dtype) == (int(x.min()), int(x.max()))
    top = min(info.max, 6000)
    x = rng.integers(0, top, 4001, dtype=dtype, endpoint=True)
    counted = nm.one_pass_model(x, 256, sms=2)
    assert counted.dtype == np.uint64 and counted.size == 258
    np.testing.assert_array_equal(counted[:256], np.bincount(x[x < 256], minlength=256))
    for expected in (0, 300, 4096, top + 1, 12289):  # the guess too small, big enough, or none
        np.testing.assert_array_equal(nm.bincount_model(x, expected_length=expected, sms=2), np.bincount(x))
        np.testing.assert_array_equal(nm.bincount_model(x % 200, minlength=300, expected_length=expected, sms=2),
                                      np.bincount(x % 200, minlength=300))
        for data in (x, x * 4):  # the global pass: its count is the result, or (values up to 24,000) counted again
            for minlength in (12289, 20000):
                np.testing.assert_array_equal(
                    nm.bincount_model(data, minlength=minlength, expected_length=expected, sms=2),
                    np.bincount(data, minlength=minlength))
    if dtype.kind == "i":
        with pytest.raises(ValueError, match="negative"):
            nm.bincount_model(np.array([3, info.min, 2], dtype), expected_length=100)


def test_bincount_skewed_and_global(rng):
    x = np.full(5000, 2**20 - 1, np.int32)
    x[::7] = rng.integers(0, 2**20, x[::7].size)
    counts, stats = nm.numpy_histogram_model(x, plan.bincount_rule(x.dtype, 2**20), sms=2, return_stats=True)
    np.testing.assert_array_equal(counts, np.bincount(x, minlength=2**20))
    assert stats["strategy"] == plan.GLOBAL


# ---- the kernels' organisation: strategy, copies, grid, reading order ------------------------------------

def test_strategy():
    assert plan.choose_strategy(1, False) == (plan.SHARED, 16)
    assert plan.choose_strategy(256, False) == (plan.SHARED, 16)
    # counts: copies beyond one only within COPIES_BYTES (16 KB): 1,024 bins 4 copies, 4,096 bins 1; weighted sums
    # (8 bytes a counter) as many as fit in SHARED_BYTES (48 KB)
    assert plan.choose_strategy(1024, False) == (plan.SHARED, 4)
    assert plan.choose_strategy(1025, False) == (plan.SHARED, 2)
    assert plan.choose_strategy(2048, False) == (plan.SHARED, 2)
    assert plan.choose_strategy(4096, False) == (plan.SHARED, 1)
    assert plan.choose_strategy(1024, True) == (plan.SHARED, 4)
    assert plan.choose_strategy(2048, True) == (plan.SHARED, 2)
    assert plan.choose_strategy(128, True) == (plan.SHARED, 16)
    assert plan.choose_strategy(12288, False) == (plan.SHARED, 1)
    assert plan.choose_strategy(12289, False) == (plan.GLOBAL, 0)
    assert plan.choose_strategy(6144, True) == (plan.SHARED, 1)
    assert plan.choose_strategy(6145, True) == (plan.GLOBAL, 0)
    assert plan.choose_strategy(2**20, False) == (plan.GLOBAL, 0)
    assert plan.choose_strategy(100, False, plan.GLOBAL) == (plan.GLOBAL, 0)
    with pytest.raises(ValueError, match="shared memory"):
        plan.choose_strategy(2**20, False, plan.SHARED)


def test_small_keys_are_integer_data_kept_within_2_22():
    """key_as_float's adds (SMALL_KEYS) only where every kept key is within +-2^22 of integer data with a float
    guess: the edges of the limit on both sides, and never for floats, explicit edges or bincount."""
    def small(dtype, first, last, bins=100):
        return plan.uniform_rule(np.dtype(dtype), bins, first, last, explicit_range=True).small_keys

    assert small(np.int32, 0, 100) and small(np.int64, 0, 100) and small(np.uint8, 0, 256)
    assert small(np.int32, -2**22, 2**22 - 1) and small(np.int16, -2**15, 2**15 - 1, 2**15)
    assert not small(np.int32, -2**22 - 1, 0) and not small(np.int32, 0, 2**22)
    assert not small(np.float32, 0, 100) and not small(np.int32, -2**31, 2**31 - 1)
    assert not plan.edges_rule(np.dtype(np.int32), np.array([0, 1, 5])).small_keys
    assert not plan.bincount_rule(np.dtype(np.int32), 17).small_keys
    assert plan.uniform_rule(np.dtype(np.int32), 100, 0, 100, explicit_range=True).defines()["SMALL_KEYS"] == 1


def test_grid_bounds_every_block_count():
    for n in (1, 1000, 2**24, 2**40):
        for itemsize in (1, 4, 8):
            grid = plan.grid_size(n, itemsize, False, 132)
            assert 1 <= grid and grid * plan.MAX_BLOCK_COUNT >= n
    assert plan.grid_size(2**28, 4, False, 132) == plan.BLOCKS_PER_SM * 132


def test_the_private_copies_grid_leaves_each_block_values_for_its_bins():
    """Counts in private copies of many bins: no more blocks than leave each PRIVATE_COUNTS_PER_BIN values a bin,
    never fewer than MIN_BLOCKS_PER_SM an SM (nor more than the data fills); none (0 bins: GLOBAL), few bins or
    weighted sums: the full grid."""
    full = plan.BLOCKS_PER_SM * 132
    assert plan.grid_size(2**24, 4, False, 132, 100) == full
    assert plan.grid_size(2**28, 4, False, 132, 4096) == full
    assert plan.grid_size(2**24, 4, False, 132, 0) == full
    assert plan.grid_size(2**24, 4, False, 132, 4096) == plan.MIN_BLOCKS_PER_SM * 132  # 256 wanted, 264 the least
    assert plan.grid_size(2**24, 4, False, 132, 1024) == full  # 1,024 blocks wanted
    n = plan.PRIVATE_COUNTS_PER_BIN * 2048 * 300  # 300 blocks of 16 values for each of 2,048 bins
    assert plan.grid_size(n, 4, False, 132, 2048) == 300
    assert plan.grid_size(n + 1, 4, False, 132, 2048) == 301
    assert plan.grid_size(4096, 4, False, 132, 4096) == 2  # what the data fills: 4096 / (512 x 4)
    assert plan.grid_size(2**24, 4, True, 132, 4096) == full  # weighted sums: the full grid
    assert plan.private_counters(plan.SHARED, 77) == 77 and plan.private_counters(plan.BYTES, 77) == 256
    assert plan.private_counters(plan.GLOBAL, 77) == 0


@pytest.mark.parametrize("address", [0, 2, 4, 12, 1, 3])
@pytest.mark.parametrize("dtype", [np.dtype(np.uint8), np.dtype(np.float16), np.dtype(np.float32),
                                   np.dtype(np.float64)], ids=str)
def test_reading_order_covers_every_element(address, dtype, rng):
    """Head (before the first 16-byte boundary; every element when the address is not a multiple of the element
    size), tail and vectors: every element exactly once, for any alignment (the model checks the cover)."""
    x = _data(dtype, 5003, rng)
    rule = plan.uniform_rule(dtype, 37, -2, 2, explicit_range=True)
    for strategy in (plan.SHARED, plan.GLOBAL):
        counts = nm.numpy_histogram_model(x, rule, strategy=strategy, sms=1, address=address)
        np.testing.assert_array_equal(counts, np.histogram(x, 37, (-2, 2))[0])


def test_copies_and_aggregation_cut_the_atomics(rng):
    """All values in one bin: the shared strategy commits one bin per block; with the global strategy the lanes'
    runs cost one atomic per warp, the runs one per thread, the warp aggregation one per warp and step, no
    aggregation one per value."""
    x = np.full(2**16, 1.0, np.float32)
    rule = plan.uniform_rule(x.dtype, 2**20, 0, 2, explicit_range=True)
    counts, stats = nm.numpy_histogram_model(x, rule, sms=2, return_stats=True)
    assert counts[2**19] == x.size and stats["strategy"] == plan.GLOBAL and plan.AGGREGATE[plan.GLOBAL] == "warp_runs"
    assert stats["global_atomics"] == stats["grid"] * plan.BLOCK // 32  # lane 0 leads every step: one run a warp
    _, runs = nm.numpy_histogram_model(x, rule, sms=2, aggregate="runs", return_stats=True)
    assert runs["global_atomics"] == stats["grid"] * plan.BLOCK  # every thread has values: one run each
    _, warp = nm.numpy_histogram_model(x, rule, sms=2, aggregate="warp", return_stats=True)
    assert warp["global_atomics"] == x.size // 32  # one per warp and element of the lanes' vectors
    _, plain = nm.numpy_histogram_model(x, rule, sms=2, aggregate="none", return_stats=True)
    assert plain["global_atomics"] == x.size
    rule = plan.uniform_rule(x.dtype, 100, 0, 2, explicit_range=True)
    _, stats = nm.numpy_histogram_model(x, rule, sms=2, return_stats=True)
    assert stats["strategy"] == plan.SHARED and stats["global_atomics"] == stats["grid"]
    assert plan.AGGREGATE[plan.SHARED] == "none" and stats["shared_atomics"] == x.size
    with pytest.raises(ValueError, match="aggregate"):
        nm.numpy_histogram_model(x, rule, sms=2, aggregate="lanes")


def test_kernel_defaults_are_the_plans_aggregations():
    """The kernel file's SHARED_AGGREGATE / GLOBAL_AGGREGATE defaults are what the host ships (numpy_plan.AGGREGATE):
    the file compiled on its own is the configuration pyscan runs."""
    from pathlib import Path

    text = (Path(pyscan.__file__).parents[1] / "kernels/histogram/numpy_histogram.cu").read_text()
    for strategy, macro in ((plan.SHARED, "SHARED_AGGREGATE"), (plan.GLOBAL, "GLOBAL_AGGREGATE")):
        default = int(re.search(rf"#define {macro} (\d)", text).group(1))
        assert default == plan.AGGREGATIONS[plan.AGGREGATE[strategy]], macro


@pytest.mark.parametrize("weighted", [False, True])
def test_runs_are_counted_thread_by_thread(weighted, rng):
    """The model's run count against a plain loop over each thread's values in the kernel's order (element_order);
    values outside the bins do not end a run."""
    x = rng.choice(np.array([0.5, 1.5, 1.5, 1.5, 9.0], np.float32), 20011)
    rule = plan.uniform_rule(x.dtype, 4, 0, 4, explicit_range=True)  # 9.0 is outside
    weights = rng.random(x.size) if weighted else None
    grid = plan.grid_size(x.size, 4, weighted, 1)
    index, thread, _ = nm.element_order(x.size, 4, grid, plan.BLOCK, weighted=weighted, address=4)
    bins = nm.bins_of(x[index], rule)
    expected = 0
    for t in np.unique(thread):
        previous = None
        for b in bins[thread == t]:
            if b >= 0 and b != previous:
                expected += 1
            previous = b if b >= 0 else previous
    for strategy, field in ((plan.GLOBAL, "global_atomics"), (plan.SHARED, "shared_atomics")):
        counts, stats = nm.numpy_histogram_model(x, rule, weights, strategy=strategy, sms=1, address=4,
                                                 aggregate="runs", return_stats=True)
        assert stats[field] == expected
        want = np.histogram(x, 4, (0, 4), weights=weights)[0]
        np.testing.assert_allclose(counts, want, rtol=1e-12) if weighted else np.testing.assert_array_equal(counts, want)


def test_lanes_runs_are_counted_step_by_step(rng):
    """warp_runs against a plain loop: in each warp step the lowest lane of each bin's group of lanes extends its
    own run; a lane's run ends when it leads another bin (steps in which it leads nothing do not end it)."""
    x = rng.choice(np.array([0.5, 1.5, 1.5, 1.5, 1.5, 1.5, 2.5, 9.0], np.float32), 50021)
    rule = plan.uniform_rule(x.dtype, 4, 0, 4, explicit_range=True)
    grid = plan.grid_size(x.size, 4, False, 1)
    index, thread, group = nm.element_order(x.size, 4, grid, plan.BLOCK, address=8)
    bins = nm.bins_of(x[index], rule)
    pending, expected = {}, 0
    for warp_step in sorted(set(zip(thread // 32, group))):
        at = (thread // 32 == warp_step[0]) & (group == warp_step[1]) & (bins >= 0)
        for b in np.unique(bins[at]):
            leader = (warp_step[0], int(thread[at][bins[at] == b].min() % 32))
            if pending.get(leader) != b:
                expected += 1
                pending[leader] = b
    for strategy, field in ((plan.GLOBAL, "global_atomics"), (plan.SHARED, "shared_atomics")):
        counts, stats = nm.numpy_histogram_model(x, rule, strategy=strategy, sms=1, address=8, aggregate="warp_runs",
                                                 return_stats=True)
        assert stats[field] == expected
        np.testing.assert_array_equal(counts, np.histogram(x, 4, (0, 4))[0])
    _, weighted = nm.numpy_histogram_model(x, rule, np.ones(x.size), strategy=plan.GLOBAL, sms=1, address=8,
                                           aggregate="warp_runs", return_stats=True)
    _, runs = nm.numpy_histogram_model(x, rule, np.ones(x.size), strategy=plan.GLOBAL, sms=1, address=8,
                                       aggregate="runs", return_stats=True)
    assert weighted["global_atomics"] == runs["global_atomics"]  # weights: runs of a thread


@pytest.mark.parametrize("dtype", [np.dtype(np.uint8), np.dtype(np.int8)], ids=str)
def test_bytes_are_counted_by_value_then_folded(dtype, rng):
    """1-byte data without weights: fast.cu's 256 byte counts, then each byte value's count in its NumPy bin."""
    x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, 70001, endpoint=True).astype(dtype)
    for bins, range_ in ((7, (-3, 200)), (2**20, (0, 256)), (100, None)):
        counts, stats = nm.numpy_histogram_model(x, plan.uniform_rule(dtype, bins, *(range_ or (x.min(), x.max())),
                                                                      explicit_range=range_ is not None),
                                                 sms=2, return_stats=True)
        assert stats["strategy"] == plan.BYTES
        np.testing.assert_array_equal(counts, np.histogram(x, bins, range_)[0])
    assert plan.choose_strategy(100, True, None, 1)[0] == plan.SHARED  # weights: the general kernels
    with pytest.raises(ValueError, match="1-byte data without weights"):
        plan.choose_strategy(100, False, plan.BYTES, 4)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_min_max_partials(dtype, rng):
    x = _data(dtype, 4099, rng)
    low, high = nm.finish_min_max(*nm.min_max_partials_model(x, sms=2, address=4), dtype)
    assert low == x.min() and high == x.max() and type(low) is dtype.type
    if dtype.kind == "f":
        x[100] = np.nan
        low, high = nm.finish_min_max(*nm.min_max_partials_model(x, sms=2), dtype)
        assert np.isnan(low) and np.isnan(high)


def test_byte_rule_is_the_byte_mapping():
    values = np.arange(256, dtype=np.uint8)
    for bins in (1, 7, 100, 255, 256):
        rule = plan.byte_rule(bins)
        np.testing.assert_array_equal(nm.bins_of(values, rule), (values.astype(np.int64) * bins) >> 8)
    letters = nm.bins_of(values, plan.byte_rule(7, letters=True))
    position = values.astype(np.int64) - ord("a")
    np.testing.assert_array_equal(letters, np.where((position >= 0) & (position < 26), position // 4, -1))


# ---- the kernels' argument types ------------------------------------------------------------------------

@pytest.mark.parametrize("function", ["numpy_histogram_shared", "numpy_histogram_global"])
def test_kernel_signatures(function):
    cases = {
        "PPqibbddddffddPP": plan.uniform_rule(np.int8, 10, -3, 3, explicit_range=True),
        "PPqifffdddffddPP": plan.uniform_rule(np.float32, 10, -3.0, 3.0, explicit_range=True),
        "PPqiddddddddddPP": plan.uniform_rule(np.float64, 10, 1e6, 1e6 + 1.0, explicit_range=True),  # a double guess
        "PPqifffffdffddPP": plan.uniform_rule(np.float16, 10, np.float16(0), np.float16(1),
                                          explicit_range=False),
        "PPqiQQddddffddPP": plan.edges_rule(np.uint64, np.array([0, 5, 9], np.int64)),
        "PPqiqqfdddffddPP": plan.bincount_rule(np.int64, 10),
        "PPqiIIIdddffddPP": plan.edges_rule(np.uint32, np.array([0, 5, 9], np.uint8)),
    }
    for expected, rule in cases.items():
        source = build_source("histogram/numpy_histogram.cu", **rule.defines())
        assert signature(source, function) == expected, rule.defines()
        assert len(rule.arguments()) == 10


@pytest.mark.parametrize("rule", [plan.uniform_rule(np.float32, 100, 0.0, 70.0, explicit_range=True),
                                  plan.uniform_rule(np.float64, 10, 1e6, 1e6 + 1.0, explicit_range=True)],
                         ids=["float guess", "double guess"])
def test_rule_arguments_are_the_kernels_parameters_by_name(rule):
    # rule.arguments() lands in the kernel's parameters lo ... edge_step in order: each one the value of its name
    source = build_source("histogram/numpy_histogram.cu", **rule.defines())
    declaration = re.search(r"numpy_histogram_shared\((.*?)\)\s*\{", source, re.S).group(1)
    names = [re.findall(r"\w+", parameter)[-1] for parameter in declaration.split(",")]
    given = dict(zip(names[names.index("lo"):names.index("edges")], rule.arguments(), strict=True))
    assert rule.guess_bits and 0 < rule.guess_margin < 0.5
    assert given["guess_low"] == rule.guess_margin and given["guess_high"] == 1.0 - rule.guess_margin
    assert given["guess_scale"] == rule.guess_scale and given["bins_as_div"] == rule.bins_as_div
    assert (given["lo"], given["hi"]) == (rule.lo, rule.hi) and given["first_edge"] == rule.first_edge
    assert (given["edge_start"], given["edge_step"]) == (rule.edge_start, rule.edge_step)


def test_other_kernel_signatures():
    defines = plan.uniform_rule(np.float16, 3, 0, 1, explicit_range=True).defines()
    source = build_source("histogram/min_max.cu", VALUE_T=defines["VALUE_T"], VALUE_IS_HALF=1, KEY_T="float")
    assert signature(source, "min_max_partials") == "PqffPPP"
    for expected, rule in (("PibbddddffddPP", plan.uniform_rule(np.int8, 10, -3, 3, explicit_range=True)),
                           ("PiBBddddffddPP", plan.byte_rule(100)), ("PiBBddddffddPP", plan.byte_rule(7, letters=True))):
        # the fold: the launch in count_into passes (byte counts, bins, the rule's 10 arguments, edges, histogram)
        source = build_source("histogram/numpy_histogram.cu", **rule.defines())
        assert signature(source, "numpy_histogram_fold") == expected, rule.defines()
    source = build_source("histogram/histogram_finish.cu", SUM_T="double", OUT_T="__half", OUT_IS_HALF=1)
    assert signature(source, "histogram_density") == "PPiP" and signature(source, "histogram_convert") == "PPq"


# ---- checks before the GPU -------------------------------------------------------------------------------

@pytest.fixture
def no_gpu(monkeypatch):
    """Any attempt to launch or allocate fails the test: these errors come before the GPU."""
    from pyscan.runtime import arrays

    def refuse(*args, **kwargs):
        raise AssertionError("reached the GPU")

    monkeypatch.setattr(arrays.Call, "__enter__", refuse)


@pytest.mark.parametrize("call, error, words", [
    (lambda: pyscan.histogram(np.ones(4), bins=0), ValueError, "positive"),
    (lambda: pyscan.histogram(np.ones(4), bins=2.5), TypeError, "integer"),
    (lambda: pyscan.histogram(np.ones(4), bins="auto"), TypeError, "estimators"),
    (lambda: pyscan.histogram(np.ones(4), bins=[[1, 2]]), ValueError, "1d"),
    (lambda: pyscan.histogram(np.ones(4), bins=[3, 1]), ValueError, "monotonically"),
    (lambda: pyscan.histogram(np.ones(4), bins=[0, np.nan]), ValueError, "NaN"),
    (lambda: pyscan.histogram(np.ones(4), bins=2**31), ValueError, "at most"),
    (lambda: pyscan.histogram(np.ones(4), range=(2, 1)), ValueError, "max must be larger"),
    (lambda: pyscan.histogram(np.ones(4), range=(0, np.nan)), ValueError, "not finite"),
    (lambda: pyscan.histogram(np.ones(4), range=(0,)), TypeError, "pair"),
    (lambda: pyscan.histogram(np.ones(4), range=("a", "b")), TypeError, "real numbers"),
    (lambda: pyscan.histogram(np.ones(4), weights=np.ones(3)), ValueError, "same shape"),
    (lambda: pyscan.histogram(np.ones(4), weights=np.ones(4, complex)), TypeError, "dtype"),
    (lambda: pyscan.histogram(np.ones(4, bool)), TypeError, "bool"),
    (lambda: pyscan.histogram(np.ones(4, complex)), TypeError, "complex"),
    (lambda: pyscan.histogram("abc"), TypeError, "expected"),
    (lambda: pyscan.histogram(np.ones(4), density="yes"), TypeError, "density"),
    (lambda: pyscan.bincount(np.ones(4)), TypeError, "float64"),
    (lambda: pyscan.bincount(np.ones((2, 2), np.int32)), ValueError, "1-D"),
    (lambda: pyscan.bincount(np.ones(4, np.int32), minlength=-1), ValueError, "minlength"),
    (lambda: pyscan.bincount(np.ones(4, np.int32), minlength=1.5), TypeError, "minlength"),
    (lambda: pyscan.bincount(np.ones(4, np.int32), weights=np.ones(3)), ValueError, "same length"),
])
def test_bad_input_is_refused_before_the_gpu(no_gpu, call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.skipif(pyscan.gpu_unavailable_reason() is None, reason="a GPU is usable here")
def test_valid_input_without_gpu_says_so():
    for call in (lambda: pyscan.histogram(np.arange(10.0)), lambda: pyscan.bincount(np.arange(10)),
                 lambda: pyscan.histogram([1, 2, 3], bins=[0, 1, 5], weights=[1.0, 2.0, 3.0])):
        with pytest.raises(pyscan.GPUUnavailableError):
            call()


# ---- the check's cases (python -m pyscan check numpy_histogram bincount), run on NumPy stand-ins ----------------

def test_check_cases_run_on_numpy_stand_ins(monkeypatch, rng):
    """Every case of the check's plan runs and passes when pyscan.histogram / bincount are NumPy's (the uploads
    left on the host): the cases' own arithmetic (data, edges, weights, the tolerance) is right, so a mismatch on
    the GPU is the GPU's."""
    from pyscan_tools.check.cases import make_cases
    from pyscan_tools.patterns import numpy_histogram as cases

    monkeypatch.setattr(pyscan, "histogram", np.histogram, raising=False)
    monkeypatch.setattr(pyscan, "bincount", lambda x, minlength=0: np.bincount(x, minlength=minlength),
                        raising=False)
    monkeypatch.setattr(cases, "upload", lambda host: host.copy())
    found = make_cases(quick=False, patterns=["numpy_histogram", "bincount"])
    assert {c.pattern for c in found} == {"numpy_histogram", "bincount"}
    for c in found:
        runner = cases.HISTOGRAM.run_case if c.pattern == "numpy_histogram" else cases.BINCOUNT.run_case
        assert runner(c, rng) == ("ok", ""), c.label


# ---- the first guess of a bin by a multiplication (numpy_plan.choose_guess, numpy_bins.cuh BIN_GUESS) ----------

def test_guess_margin():
    """The margin that skips the correction: small for few bins over a range near zero, growing with the bins and
    with a range far from zero (float guesses of rounded values), never without a guess or past half a bin."""
    def margin(dtype, bins, first, last):
        return plan.uniform_rule(dtype, bins, first, last, explicit_range=True).guess_margin

    assert 0 < margin(np.float32, 100, 0, 70) < 1e-4
    assert margin(np.float32, 100, 0, 70) < margin(np.float32, 4096, 0, 70) < 0.01
    assert margin(np.float32, 2**20, 0, 3) == 1.0  # a float guess's error reaches a quarter bin: never skipped
    assert 0 < margin(np.int32, 37, 2**30, 2**30 + 1000) < 1e-6  # a double guess
    # exact guesses (power-of-two steps, exact subtraction): every guess taken, values on the edges too
    assert margin(np.float32, 100, 0, 100) == margin(np.float32, 2**20, 0, 1) == plan.EXACT_GUESS
    assert margin(np.int32, 100, -50, 50) == margin(np.uint8, 256, 0, 256) == plan.EXACT_GUESS
    assert margin(np.float32, 64, 1, 17) != plan.EXACT_GUESS  # t - 1 rounds
    assert margin(np.float64, 64, 0, 16) != plan.EXACT_GUESS  # a float guess of float64 values rounds them
    assert margin(np.int64, 64, 0, 2**40) != plan.EXACT_GUESS  # and of int64 values past 2^23
    assert margin(np.int32, 2**14, -2**24, 2**24) != plan.EXACT_GUESS  # a float guess: t - first rounds past 2^24
    assert margin(np.int32, 100, 2**24, 2**24 + 100) == plan.EXACT_GUESS  # a double guess: exact
    assert margin(np.float16, 10, 0, 1) == 1.0  # no guess
    edges = np.linspace(0.0, 1.0, 11)
    edges[3] += 0.01  # edges far from equal bins (not NumPy's): the margin covers them, or there is none
    assert plan.guess_margin(64, 64, 10, 0.0, 1.0, edges) > 2 * 0.1
    assert plan.guess_margin(64, 64, 10, 0.0, 1.0, np.linspace(0.0, 2.0, 11)) == 1.0


def test_choose_guess():
    edges = np.linspace(0, 1, 101)
    assert plan.choose_guess(32, 64, 100, 0.0, 1.0, edges.astype(np.float32))[0] == 32
    assert plan.choose_guess(64, 64, 100, 0, 100, edges)[0] == 32  # small spread: float is enough
    assert plan.choose_guess(64, 64, 100, 1e9, 1e9 + 100, edges)[0] == 64  # t rounded to float would miss bins
    assert plan.choose_guess(32, 32, 2**21, 0.0, 1.0, np.arange(2**21 + 1, dtype=np.float32))[0] == 64
    assert plan.choose_guess(16, 16, 10, 0.0, 1.0, edges[:11])[0] == 0  # float16: NumPy's own f may miss
    assert plan.choose_guess(32, 64, 2, 0.0, 1.0, np.array([0, 0, 1], np.float32))[0] == 0  # a repeated edge
    bits, scale = plan.choose_guess(32, 64, 3, 0.0, 0.7, np.array([0, 0.2, 0.5, 0.7], np.float32))
    assert bits == 32 and scale == float(np.float32(3 / 0.7))


GUESS_CASES = [  # (dtype, bins, range): spreads from 1 to far past the float guess, bins up to 2^20, odd widths
    (np.float32, 100, (0, 100)), (np.float32, 7, (-3.3, 2.9)), (np.float32, 2**20, (0, 1)),
    (np.float32, 100, (1e4, 1e4 + 50)), (np.float64, 100, (0, 1)), (np.float64, 999, (1e12, 1e12 + 7)),
    (np.float64, 2**20, (-5, 5)), (np.int32, 100, (0, 100)), (np.int32, 4096, (-2**31, 2**31 - 1)),
    (np.int32, 37, (2**30, 2**30 + 1000)), (np.int64, 100, (-2**62, 2**62)), (np.int64, 10, (2**52, 2**52 + 999)),
    (np.uint64, 3, (0, 2**62)), (np.uint8, 100, (0, 256)), (np.int16, 2**15, (-2**15, 2**15 - 1)),
    # power-of-two steps (exact_guess where the subtraction is exact too, and where it is not)
    (np.int32, 4096, (-2048, 2048)), (np.int16, 256, (-128, 128)), (np.int32, 20, (0, 10)), (np.uint8, 256, (0, 256)),
    (np.float32, 64, (0, 16)), (np.float32, 64, (1, 17)), (np.float32, 2**21, (0, 2**21)), (np.float64, 64, (0, 16)),
    (np.int64, 64, (0, 2**40)), (np.int64, 2**20, (-2**40, 2**40)), (np.int32, 100, (2**24, 2**24 + 100)),
    (np.int32, 2**14, (-2**24, 2**24)),
]


def guess_case_values(rule, dtype, bins, range_, rng) -> np.ndarray:
    """Values where a guess case's bins must be exact: every edge (every few past 4,096 bins) and the last three with
    their neighbours, random values in and around the range, and values just inside and just outside the margin
    that skips the correction (test_histogram_emulated.py runs the kernel's own arithmetic on them too)."""
    x = np.concatenate([_neighbours(rule.bin_edges[:: max(1, bins // 4096)], dtype),
                        _neighbours(rule.bin_edges[-3:], dtype), _data(dtype, 5000, rng)])
    if dtype.kind == "f":
        x = np.concatenate([x, rng.uniform(range_[0], range_[1], 5000).astype(dtype)])
    else:
        info = np.iinfo(dtype)
        low, high = max(int(range_[0]), int(info.min)), min(int(range_[1]), int(info.max))
        x = np.concatenate([x, rng.integers(low, high, 5000, endpoint=True, dtype=dtype)])
    if rule.guess_margin < 0.5:  # values just inside and just outside the margin that skips the correction
        first, width = float(rule.bin_edges[0]), float(rule.bin_edges[-1]) - float(rule.bin_edges[0])
        at = np.arange(0, bins, max(1, bins // 512), dtype=np.float64)
        inside = [q * rule.guess_margin for q in (0.999, 1.001, 1.5)]
        spots = np.concatenate([at + q for q in inside + [1 - q for q in inside]])
        with np.errstate(all="ignore"):
            near = first + spots * (width / bins)
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                near = np.clip(np.round(near), info.min, info.max)
            x = np.concatenate([x, near.astype(dtype)])
    return x


@pytest.mark.parametrize("dtype, bins, range_", GUESS_CASES, ids=lambda v: str(v))
def test_guess_gives_numpys_bins(dtype, bins, range_, rng):
    """The guessed first bin, corrected against the edges, is NumPy's bin for every value on an edge, one ulp (or
    one) beside it, and random values in and around the range; and equals the model of NumPy's own arithmetic."""
    import dataclasses

    dtype = np.dtype(dtype)
    rule = plan.uniform_rule(dtype, bins, *range_, explicit_range=True)
    x = guess_case_values(rule, dtype, bins, range_, rng)
    exact = dataclasses.replace(rule, guess_bits=0, guess_scale=0.0, guess_margin=1.0, edge_formula=0, edge_start=0.0,
                                edge_step=0.0)
    got = nm.bins_of(x.astype(plan.key_dtype(dtype)), rule)
    np.testing.assert_array_equal(got, nm.bins_of(x.astype(plan.key_dtype(dtype)), exact))
    np.testing.assert_array_equal(np.bincount(got[got >= 0], minlength=bins), np.histogram(x, bins, range_)[0])


def test_random_rules_give_numpys_bins():
    """A seeded search over equal-bin rules (every integer and float dtype but float16, power-of-two steps and
    others, ranges on and off whole steps, near zero and far from it): the model -- the guess, its margin or
    exactness, the edges read or computed -- equals np.histogram with every edge, its neighbours and random values in
    the data."""
    rng = np.random.default_rng(5)
    dtypes = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32,
              np.float64]
    checked = exact = 0
    while checked < 300:
        dtype = np.dtype(dtypes[rng.integers(len(dtypes))])
        bins = int(rng.choice([1, 2, 3, 4, 7, 8, 16, 64, 100, 256, 1024, 4096, 8192]))
        step = 2.0 ** int(rng.integers(-4, 12)) if rng.random() < 0.7 else float(rng.uniform(0.1, 10))
        first = float(rng.integers(-300, 300)) * (step if rng.random() < 0.5 else 1.0) if rng.random() < 0.6 else 0.0
        if rng.random() < 0.2:
            first = float(rng.uniform(-1000, 1000))
        last = first + bins * step
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            if first < info.min or last > info.max:
                continue
            if rng.random() < 0.5 and first.is_integer() and last.is_integer():
                first, last = int(first), int(last)
        try:
            rule = plan.uniform_rule(dtype, bins, first, last, explicit_range=True)
        except ValueError:  # NumPy's own refusal (too many bins for the range)
            continue
        x = np.concatenate([_neighbours(rule.bin_edges, dtype), _data(dtype, 500, rng)])
        if dtype.kind == "f":
            x = np.concatenate([x, rng.uniform(first, last, 1000).astype(dtype)])
        else:
            info = np.iinfo(dtype)
            low, high = max(int(np.floor(first)), int(info.min)), min(int(np.ceil(last)), int(info.max))
            x = np.concatenate([x, rng.integers(low, high, 1000, endpoint=True).astype(dtype)])
        got = nm.bins_of(x.astype(plan.key_dtype(dtype)), rule)
        np.testing.assert_array_equal(np.bincount(got[got >= 0], minlength=bins), np.histogram(x, bins, (first, last))[0],
                                      err_msg=f"{dtype} {bins} bins over ({first}, {last})")
        checked += 1
        exact += rule.guess_margin == plan.EXACT_GUESS
    assert exact > 50  # the search reaches the exact guess as well as the margin


FORMULA_RANGES = [(0, 100), (-3, 3), (0.1, 0.7), (1e7, 1e7 + 100), (-1e6, 1e6 + 7), (5, 5),
                  (np.float32(0.3), np.float32(2.9)), (np.float16(-1), np.float16(2))]


def _data_ranges(dtype, rng) -> list:
    """(min, max) pairs a range=None call's data gives: scalars of the data's own type, equal ends, the dtype's
    extremes, the smallest subnormals, neighbours, and ranges of every magnitude."""
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    lows = [dtype.type(v) for v in rng.uniform(max(float(info.min), -1e4), 0, 8).astype(dtype)]
    ranges = [(low, low + dtype.type(k)) for k, low in enumerate(lows)]  # k = 0: equal ends
    ranges.append((dtype.type(info.min), dtype.type(info.max)))
    if dtype.kind == "f":
        tiny = dtype.type(info.smallest_subnormal)
        ranges += [(tiny, tiny * dtype.type(3)), (dtype.type(1), np.nextafter(dtype.type(1), dtype.type(2))),
                   (dtype.type(-info.max / 4), dtype.type(info.max / 2))]
        ranges += [tuple(sorted(dtype.type(v) for v in rng.standard_normal(2) * 10.0**e)) for e in (-6, 0, 3, 4)]
    else:
        ranges += [tuple(sorted(rng.integers(info.min, info.max, 2, endpoint=True, dtype=dtype))) for _ in range(4)]
    return ranges


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_numpy_bin_edges_are_numpys(dtype, rng):
    """numpy_plan.numpy_bin_edges makes NumPy's equal-bin edges as NumPy's _get_bin_edges does, without
    np.histogram_bin_edges' work on an array: the same dtype and bits as the public function, and its error where
    the edges would repeat, for ranges of every type a caller or the data gives (this NumPy's own rules: a NumPy
    that made them otherwise fails here, in CI, before any GPU)."""
    data_ranges = _data_ranges(dtype, rng)
    given = [(0, 1), (-3, 3), (0.1, 0.7), (-1e6, 1e6 + 7), (5, 5), (2**40, 2**40 + 3), (np.float32(0.3),
             np.float32(2.9)), (np.float16(-1), np.float16(2)), (np.int64(0), np.int64(255)), (np.uint8(3), 200.5)]
    for first, last in data_ranges + given:
        for bins in (1, 2, 7, 10, 100, 1000, 4096, 65536):
            with np.errstate(all="ignore"):  # float16 edges of 2^40 overflow, in both (uniform_rule ignores it too)
                try:
                    want = np.histogram_bin_edges(np.empty(0, dtype), bins, (first, last))
                except ValueError as exc:
                    with pytest.raises(ValueError, match=re.escape(str(exc))):
                        plan.numpy_bin_edges(dtype, bins, first, last)
                    continue
                got = plan.numpy_bin_edges(dtype, bins, first, last)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (dtype, bins, first, last)


def _rule_record(rule: plan.BinRule) -> dict:
    """Every field of a rule (arrays as dtype and bytes, numbers with their type), its #defines and arguments."""
    record = {}
    for field in dataclasses.fields(rule):
        value = getattr(rule, field.name)
        record[field.name] = ((value.dtype.str, value.tobytes()) if isinstance(value, np.ndarray)
                              else (type(value).__name__, repr(value)))
    record["defines"] = dict(rule.defines())
    record["arguments"] = [(type(v).__name__, repr(v)) for v in rule.arguments()]
    return record


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_range_of_the_datas_own_scalars_gives_the_rule_numpys_types_give(dtype, rng, monkeypatch):
    """A range of the data's own scalars (range=None's min and max) takes the types worked out once
    (numpy_plan.own_range_types) and np.linspace's arithmetic step by step: every field of the rule, its #defines
    and its arguments are those NumPy's own promotions and np.linspace give (the general way, where the ends'
    types are worked out at every call), and so are its errors."""
    ranges = _data_ranges(dtype, rng)
    made = {}
    for own in (True, False):
        if not own:
            monkeypatch.setattr(plan, "own_range_types", lambda dtype: None)
        for first, last in ranges:
            for bins in (1, 7, 100, 4096, 5000):
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # a warning is a difference too
                    try:
                        got = _rule_record(plan.uniform_rule(dtype, bins, first, last, explicit_range=False))
                    except (ValueError, TypeError) as exc:
                        got = (type(exc).__name__, str(exc))
                made.setdefault((first.tobytes(), last.tobytes(), bins), []).append(got)
    different = [key for key, (own_rule, numpys) in made.items() if own_rule != numpys]
    assert not different, (dtype, len(different), different[:3])
    assert sum(isinstance(own_rule, dict) for own_rule, _ in made.values()) > len(made) // 4  # not errors alone


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32, np.uint64])
def test_edge_formula_gives_every_edge_numpy_made(dtype):
    """Where the host takes the kernel's edge formula, it gives NumPy's edges bit for bit (the last edge, never
    compared, aside); float16 bins read theirs; the formula is computed in double for Python ranges and in float for
    float32 ones (np.linspace's result type); edges no formula makes are read."""
    seen = set()
    for bins in (1, 2, 3, 7, 100, 255, 4096, 10000):
        for first, last in FORMULA_RANGES:
            try:
                rule = plan.uniform_rule(dtype, bins, first, last, explicit_range=True)
            except ValueError:  # NumPy's own refusal (too many bins for the range in this dtype)
                continue
            seen.add(rule.edge_formula)
            if rule.bt_bits == 16:
                assert rule.edge_formula == 0
            if rule.edge_formula:
                made = plan.formula_edges(rule.edge_formula, rule.edge_start, rule.edge_step, bins, rule.edges.dtype)
                assert made.tobytes() == rule.edges[:bins].tobytes(), (bins, first, last)
    assert seen >= ({32, 64} if dtype != np.float16 else {0})
    edges = np.linspace(0.0, 1.0, 11)
    edges[3] = np.nextafter(edges[3], 2.0)  # not what the formula makes
    assert plan.choose_edge_formula(64, 10, 0.0, 1.0, edges) == (0, 0.0, 0.0)


# ---- the host's work per call, on the fake device of test_interop ----------------------------------------------

def _fake_histogram_device(monkeypatch):
    """The fake device of test_interop with a recording driver: (ops, the kernels' fake) for the host-work tests."""
    from pyscan.histograms import launch
    from pyscan.runtime import driver

    ops = []

    class Allocation:
        def __init__(self, nbytes):
            self.buffer = np.zeros(max(1, nbytes), np.uint8)
            self.address = self.buffer.ctypes.data

    class Kernel:
        def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
            ops.append(("launch", stream))
            if len(args) == 7:  # min_max.cu's min_max_partials(x, n, lowest, highest, mins, maxs, nans): float32 x
                from test_interop import _host

                values = _host(args[0], (int(args[1]),), np.float32)
                for at, value in ((args[4], values.min()), (args[5], values.max())):
                    _host(at, (grid[0],), np.float32)[...] = value
                _host(args[6], (grid[0],), np.int32)[...] = np.isnan(values).any()

        def config(self, grid, block, shared_size=0):
            return grid, block, shared_size

        def launch_typed(self, context, stream, geometry, *args):
            ops.append(("launch", stream, args[-7]))  # args[-7]: the edges the kernel reads

    monkeypatch.setattr(driver, "primary", lambda ordinal: 0xC0)
    monkeypatch.setattr(driver, "synchronize", lambda stream: ops.append(("synchronize", stream)))
    monkeypatch.setattr(driver, "memset32", lambda at, value, n, stream: ops.append(("memset32", stream))
                        or ctypes.memset(at, value, 4 * n))
    for name in ("copy_dtod", "copy_htod", "copy_dtoh"):
        monkeypatch.setattr(driver, name, lambda to, source, n, stream, name=name: ops.append((name, stream))
                            or ctypes.memmove(to, source, n))
    monkeypatch.setattr(driver, "allocate", lambda nbytes, ordinal, stream: ops.append(("allocate", stream))
                        or Allocation(nbytes))
    monkeypatch.setattr(driver, "multiprocessor_count", lambda ordinal: 132)
    monkeypatch.setattr(nh, "get_kernel", lambda *args, **kwargs: Kernel())
    monkeypatch.setattr(launch, "get_kernel", lambda *args, **kwargs: Kernel())
    monkeypatch.setattr(nh, "kept_counters", lambda nbytes, device, stream: ops.append(("counters", stream))
                        or (None, 0x7000))
    monkeypatch.setattr(nh, "_min_maxes", {})  # made with these fake kernels
    monkeypatch.setattr(nh, "_fresh", {})
    return ops


@pytest.mark.usefixtures("fake_gpu")
def test_a_repeated_call_waits_for_nothing_and_uploads_nothing(monkeypatch):
    """A cached rule's arrays are uploaded (and waited for) once; later calls with the same bins and range only
    allocate, launch (once: the counts need no zeroing, 1-byte data included) and copy the edges, on the caller's
    stream: no synchronize, no host-to-device copy."""
    from test_interop import FakeDeviceArray

    ops = _fake_histogram_device(monkeypatch)
    for host, top in ((np.zeros(4099, np.float32), 37.5), (np.zeros(4099, np.uint8), 255)):
        x = FakeDeviceArray(host)
        ops.clear()
        pyscan.histogram(x, 77, range=(0, top))  # the first call makes the rule and uploads its arrays
        assert ("copy_htod", 0) in ops and ("synchronize", 0) in ops, ops  # the kept copies, on the legacy stream
        ops.clear()
        hist, edges = pyscan.histogram(x, 77, range=(0, top))
        assert isinstance(hist, FakeDeviceArray) and isinstance(edges, FakeDeviceArray)
        names = [op[0] for op in ops]
        assert "synchronize" not in names and "copy_htod" not in names, ops
        assert {op[1] for op in ops} == {7}, ops  # FakeKind.current_stream: the caller's stream
        assert names.count("launch") == 1 and "memset32" not in names, ops  # bytes too: one launch


@pytest.mark.usefixtures("fake_gpu")
def test_a_new_range_at_every_call_waits_only_for_its_min_and_max(monkeypatch, rng):
    """histogram(x, bins) with the range from the data, new at every call: the min and max read back (the one wait
    NumPy's contract needs: the edges are made from them on the host), then on the caller's stream one upload of the
    edges into the array returned, which the count reads; nothing on the legacy stream, nothing kept."""
    from test_interop import FakeDeviceArray

    ops = _fake_histogram_device(monkeypatch)
    for k in range(3):
        host = (rng.standard_normal(5000) * (k + 1) + k).astype(np.float32)
        ops.clear()
        hist, edges = pyscan.histogram(FakeDeviceArray(host), 100)
        np.testing.assert_array_equal(edges.host, np.histogram_bin_edges(host, 100))
        names = [op[0] for op in ops]
        assert {op[1] for op in ops} == {7}, ops  # the caller's stream only: no kept copy
        assert names.count("copy_dtoh") == 1 and names.count("copy_htod") == 1, ops
        # the waits: the min and max's read back, and the upload's from pageable memory on a stream not the default
        assert names.count("synchronize") <= 1, ops
        assert ops[-1] == ("launch", 7, edges.host.ctypes.data), ops  # the count reads the edges returned
    ops.clear()
    hist, edges = pyscan.histogram(FakeDeviceArray(host), 100)  # the same data again: the rule kept from now on
    assert ("copy_htod", 0) in ops and ("synchronize", 0) in ops, ops
    ops.clear()
    pyscan.histogram(FakeDeviceArray(host), 100)
    assert [op[0] for op in ops].count("copy_htod") == 0 and ("copy_dtod", 7) in ops, ops


@pytest.mark.usefixtures("fake_gpu")
def test_a_new_range_at_every_call_made_whole(monkeypatch, rng):
    """range=None on a kind that takes the ready path: after a first general call, FreshRange -- min_max.cu's pass
    and its read back, then on the caller's stream the edges uploaded into the array returned and the one launch,
    which reads them; no Call, nothing kept.  NaN data raises NumPy's error on that path too; float16 data and bins
    past one launch keep none (the general path)."""
    from test_interop import FakeDeviceArray

    from pyscan.runtime import arrays

    ops = _fake_histogram_device(monkeypatch)

    class ReadyKind(type(arrays.kind_of(FakeDeviceArray(np.zeros(1))))):
        def ready(self, x):
            return x.host.ctypes.data, x.host.size, x.host.dtype, 0, 7

        def new_shaped(self, x, shape, dtype, device, stream):
            ops.append(("new", stream, np.dtype(dtype)))
            return super().new_shaped(x, shape, dtype, device, stream)

    monkeypatch.setitem(arrays.READY, FakeDeviceArray, ReadyKind())
    begin = arrays.begin
    monkeypatch.setattr(arrays, "begin", lambda *args, **kwargs: ops.append(("begin",)) or begin(*args, **kwargs))
    hosts = [(rng.standard_normal(5000) * (k + 1) + k).astype(np.float32) for k in range(4)]
    pyscan.histogram(FakeDeviceArray(hosts[0]), 100)  # the general path, which keeps the FreshRange
    assert list(nh._fresh) == [(np.dtype(np.float32), 100, 0)]
    for host in hosts[1:]:
        ops.clear()
        hist, edges = pyscan.histogram(FakeDeviceArray(host), 100)
        np.testing.assert_array_equal(edges.host, np.histogram_bin_edges(host, 100))
        assert ("begin",) not in ops, ops  # no Call
        # the arrays returned made while the min and max pass runs, before its read back waits for it
        assert [op[0] for op in ops] == ["allocate", "launch", "new", "new", "copy_dtoh", "copy_htod", "synchronize",
                                         "counters", "launch"], ops
        assert [op[2] for op in ops if op[0] == "new"] == [np.dtype(np.int64), edges.host.dtype], ops
        assert {op[1] for op in ops} == {7}, ops  # the caller's stream only
        assert ops[-1][2] == edges.host.ctypes.data, ops  # the count reads the edges returned
    bad = hosts[1].copy()
    bad[77] = np.nan
    with pytest.raises(ValueError, match=r"autodetected range of \[nan, nan\] is not finite"):
        pyscan.histogram(FakeDeviceArray(bad), 100)
    monkeypatch.setattr(nh, "device_min_max", lambda data, call: (data.dtype.type(-1), data.dtype.type(1)))
    for dtype, bins in ((np.float16, 100), (np.float32, 2**20)):
        pyscan.histogram(FakeDeviceArray(hosts[1].astype(dtype)), bins)
        assert (np.dtype(dtype), bins, 0) not in nh._fresh


@pytest.mark.usefixtures("fake_gpu")
def test_bincount_counts_in_one_pass_where_its_guess_holds(monkeypatch, rng):
    """bincount without weights, on the fake device: one launch counts and finds the extremes (numpy_histogram_once's
    EXTREMES build), read back once; a second count (with the result's bins) only where the greatest value is not
    below the pass's bins; the next call's pass sized from this call's length; past the one pass's most bins, and for
    1-byte data, min_max.cu's pass first; a minlength past them, the global pass (numpy_bincount_global) into the
    result, zeroed first.  The fake kernels write the step-models' results (the global pass adds its counts)."""
    from test_interop import FakeDeviceArray, _host

    from pyscan.runtime import arrays, driver

    ops = []
    dtypes = {c_type: dtype for dtype, c_type in plan.VALUE_C_TYPES.items()}

    class Allocation:
        def __init__(self, nbytes):
            self.buffer = np.zeros(max(1, nbytes), np.uint8)
            self.address = self.buffer.ctypes.data

    class Kernel:
        def __init__(self, function, defines):
            self.function, self.extremes = function, defines.get("EXTREMES", 0)
            self.dtype = dtypes.get(defines.get("VALUE_T"))

        def config(self, grid, block, shared_size=0):
            return grid, block, shared_size

        def launch_typed(self, context, stream, geometry, address, n, bins, *rest):
            if self.function == nh.GLOBAL_PASS:  # rest[-2]: the result (zeroed before), rest[-1]: the extremes
                made = nm.one_pass_model(_host(address, (n,), self.dtype), bins, sms=2)
                _host(rest[-2], (bins,), np.uint64)[...] += made[:bins]
                _host(rest[-1], (2,), np.uint64)[...] = made[bins:]
                ops.append(("global pass", bins))
                return
            self.run(address, n, bins, rest[-4])  # numpy_histogram_once; rest[-4]: the result's address
            ops.append(("one pass" if self.extremes else "count", bins))

        def prepared_async_call(self, grid, block, stream, address, weights, n, bins, *rest, shared_size=0):
            self.run(address, int(n), int(bins), rest[-1])  # numpy_histogram_global: rest[-1], the histogram's
            ops.append(("count", int(bins)))

        def run(self, address, n, bins, out):
            data = _host(address, (n,), self.dtype)
            if self.extremes:
                made = nm.one_pass_model(data, bins, sms=2)
            else:
                made = nm.numpy_histogram_model(data, plan.bincount_rule(self.dtype, bins), sms=2)
            _host(out, made.shape, made.dtype)[...] = made

    def min_max(data, call):
        ops.append(("min_max",))
        host = _host(data.gpudata, (data.size,), data.dtype)
        return host.min(), host.max()

    def byte_count(data, weights, rule, out, *, call):
        ops.append(("count", rule.bins))
        _host(out.gpudata, (rule.bins,), np.int64)[...] = np.bincount(_host(data.gpudata, (data.size,), data.dtype),
                                                                      minlength=rule.bins)

    monkeypatch.setattr(driver, "copy_dtoh", lambda host, device, n, stream: ctypes.memmove(host, device, n))
    monkeypatch.setattr(driver, "allocate", lambda nbytes, ordinal, stream: Allocation(nbytes))
    monkeypatch.setattr(driver, "multiprocessor_count", lambda ordinal: 132)
    monkeypatch.setattr(nh, "get_kernel", lambda path, function, **defines: Kernel(function, defines))
    monkeypatch.setattr(nh, "kept_counters", lambda nbytes, device, stream: (None, 0x7000))
    monkeypatch.setattr(nh, "device_min_max", min_max)
    monkeypatch.setattr(driver, "primary", lambda ordinal: 0xC0)
    monkeypatch.setattr(nh, "_expected_lengths", {})
    monkeypatch.setattr(nh, "_one_passes", {})
    monkeypatch.setattr(nh, "_global_passes", {})
    steps = [  # (values below, minlength, what runs): the one pass's bins follow the last length
        (100, 0, [("one pass", 256)]),
        (256, 0, [("one pass", 256)]),  # the greatest value the pass's last bin
        (257, 0, [("one pass", 256), ("count", 257)]),
        (1000, 0, [("one pass", 512), ("count", 1000)]),  # the guess too small: counted again
        (1000, 0, [("one pass", 1024)]),
        (100, 3000, [("one pass", 4096)]),  # minlength sizes the pass
        (100, 4096, [("one pass", 4096)]),
        (5000, 0, [("one pass", 4096), ("count", 5000)]),
        (5000, 0, [("one pass", 8192)]),
        (9000, 0, [("one pass", 8192), ("count", 9000)]),
        (9000, 0, [("one pass", 12288)]),  # the private copies' most bins
        (20000, 0, [("one pass", 12288), ("count", 20000)]),  # the global histogram's count
        (20000, 0, [("min_max",), ("count", 20000)]),  # past the one pass's most bins
        (10, 0, [("min_max",), ("count", 10)]),
        (10, 0, [("one pass", 256)]),
        (100, 20000, [("global pass", 20000)]),  # a minlength past the one pass's bins: counted into the result
        (30000, 20000, [("global pass", 20000), ("count", 30000)]),  # the greatest value past it: counted again
        (5, 12289, [("global pass", 12289)]),  # the least such minlength, whatever the last call's length
        (5, 12288, [("min_max",), ("count", 12288)]),  # (the last length, 12,289, is past the one pass)
        (12287, 12288, [("one pass", 12288)]),
        (100, 20000, [("global pass", 20000)]),
        (100, 20000, [("min_max",), ("count", 20000)]),  # more values than the global pass takes (set below)
    ]
    for step, (top, minlength, want) in enumerate(steps):
        if step == len(steps) - 1:
            monkeypatch.setattr(plan, "GLOBAL_PASS_MOST_VALUES", 3000)
        host = rng.integers(0, top, 3001, dtype=np.int32)
        host[0] = top - 1
        ops.clear()
        got = pyscan.bincount(FakeDeviceArray(host), minlength=minlength)
        assert ops == want, (top, minlength)
        np.testing.assert_array_equal(got.host, np.bincount(host, minlength=minlength))
    bad = np.array([5, -3, 2], np.int64)
    ops.clear()
    with pytest.raises(ValueError, match=r"negative elements \(found -3\)"):
        pyscan.bincount(FakeDeviceArray(bad))
    assert ops == [("one pass", 256)]
    monkeypatch.setattr(plan, "GLOBAL_PASS_MOST_VALUES", 2**24)
    ops.clear()
    with pytest.raises(ValueError, match=r"negative elements \(found -3\)"):
        pyscan.bincount(FakeDeviceArray(bad), minlength=20000)
    assert ops == [("global pass", 20000)]
    # a kind that takes the ready path (1-D, contiguous, on the device): after the first call made the pass, one
    # look-up, the pass, the result made like x; a miss goes the general path with the pass's extremes (the data's
    # second read is the count), and the next call's pass is sized from its length
    class ReadyKind(type(arrays.kind_of(FakeDeviceArray(host)))):
        def ready(self, x):
            return x.host.ctypes.data, x.host.size, x.host.dtype, 0, 7

    monkeypatch.setitem(arrays.READY, FakeDeviceArray, ReadyKind())
    monkeypatch.setattr(nh, "_expected_lengths", {})  # (the steps above left 12,288)
    monkeypatch.setattr(driver, "allocate", lambda nbytes, ordinal, stream: ops.append(("allocate", stream))
                        or Allocation(nbytes))
    ready_steps = [(100, 0, [("allocate", 7), ("one pass", 256)]),
                   (300, 0, [("allocate", 7), ("one pass", 256), ("count", 300)]),  # a miss
                   (300, 0, [("allocate", 7), ("one pass", 512)]),
                   (20000, 0, [("allocate", 7), ("one pass", 512), ("count", 20000)]),  # a miss past the pass's bins
                   (20000, 0, [("min_max",), ("count", 20000)]),  # no pass made for that length
                   (100, 15000, [("allocate", 7), ("global pass", 15000)]),  # the global pass (made for int32 above)
                   (17000, 15000, [("allocate", 7), ("global pass", 15000), ("count", 17000)])]  # a miss
    for top, minlength, want in ready_steps:
        host = rng.integers(0, top, 5001, dtype=np.int32)
        host[7] = top - 1
        ops.clear()
        got = pyscan.bincount(FakeDeviceArray(host), minlength=minlength)
        assert ops == want, top
        np.testing.assert_array_equal(got.host, np.bincount(host, minlength=minlength))
    ops.clear()
    with pytest.raises(ValueError, match=r"negative elements \(found -3\)"):
        pyscan.bincount(FakeDeviceArray(np.array([5, -3, 299], np.int32)), minlength=15000)
    assert ops == [("allocate", 7), ("global pass", 15000)]
    monkeypatch.setattr(nh, "_global_passes", {})
    ops.clear()
    pyscan.bincount(FakeDeviceArray(host), minlength=15000)
    assert ops == [("allocate", 7), ("global pass", 15000), ("count", 17000)]  # none made yet: the general path
    with pytest.raises(ValueError, match=r"negative elements \(found -3\)"):
        pyscan.bincount(FakeDeviceArray(np.array([5, -3, 299], np.int32)))
    monkeypatch.setattr(nh, "count_into", byte_count)
    ops.clear()
    host = rng.integers(0, 200, 999, dtype=np.uint8)
    np.testing.assert_array_equal(pyscan.bincount(FakeDeviceArray(host)).host, np.bincount(host))
    assert ops == [("min_max",), ("count", int(host.max()) + 1)]  # 1-byte data: after min_max.cu


@pytest.mark.usefixtures("fake_gpu")
def test_bincount_passes_op_by_op(monkeypatch, rng):
    """bincount's two passes op by op, argument by argument (numpy_histogram.cu's signatures), on the general path
    (the call's context, 0) and the ready path (the device's primary context): the private copies' pass
    (numpy_histogram_once, EXTREMES) on kept counters of its bins and the two extremes, into bins + 2 words whose
    last two are read back; the global pass (numpy_bincount_global) on kept counters of the two extremes alone, into
    the result zeroed first, its extremes into 16 bytes of their own, read back."""
    from test_interop import FakeDeviceArray, _host

    from pyscan.runtime import arrays, driver

    ops, allocated = [], []
    dtypes = {c_type: dtype for dtype, c_type in plan.VALUE_C_TYPES.items()}

    class Allocation:
        def __init__(self, nbytes):
            self.buffer = np.zeros(max(1, nbytes), np.uint8)
            self.address = self.buffer.ctypes.data

    def allocate(nbytes, ordinal, stream):
        ops.append(("allocate", nbytes, stream))
        allocated.append(Allocation(nbytes))
        return allocated[-1]

    class Kernel:
        def __init__(self, function, defines):
            self.function, self.dtype = function, dtypes[defines["VALUE_T"]]
            ops.append(("build", function, defines["COPIES"], defines["BYTE_VALUES"], defines["EXTREMES"]))

        def config(self, grid, block, shared_size=0):
            return grid, block, shared_size

        def launch_typed(self, context, stream, geometry, *args):
            ops.append(("launch", self.function, context, stream, geometry, args))
            address, n, bins = args[:3]
            made = nm.one_pass_model(_host(address, (n,), self.dtype), bins, sms=2)
            if self.function == nh.GLOBAL_PASS:  # the result (zeroed before), then the extremes' 16 bytes
                _host(args[-2], (bins,), np.uint64)[...] += made[:bins]
                _host(args[-1], (2,), np.uint64)[...] = made[bins:]
            else:  # numpy_histogram_once: the counts and the extremes, then the edges to copy (none)
                _host(args[-4], made.shape, made.dtype)[...] = made

    def record(name):
        def recorded(to, source, n, stream):
            ops.append((name, to if name == "copy_dtod" else source, n, stream))
            ctypes.memmove(to, source, n)
        return recorded

    monkeypatch.setattr(driver, "refuse_capture", lambda stream, what: ops.append(("refuse", stream)))
    monkeypatch.setattr(driver, "memset32", lambda at, value, n, stream: ops.append(("memset32", at, value, n, stream))
                        or ctypes.memset(at, value, 4 * n))
    monkeypatch.setattr(driver, "copy_dtoh", record("copy_dtoh"))
    monkeypatch.setattr(driver, "copy_dtod", record("copy_dtod"))
    monkeypatch.setattr(driver, "allocate", allocate)
    monkeypatch.setattr(driver, "multiprocessor_count", lambda ordinal: 132)
    monkeypatch.setattr(driver, "primary", lambda ordinal: 0xC0)
    monkeypatch.setattr(nh, "get_kernel", lambda path, function, **defines: Kernel(function, defines))
    monkeypatch.setattr(nh, "kept_counters", lambda nbytes, device, stream: ops.append(("counters", nbytes, device,
                                                                                         stream)) or (None, 0x7000))
    monkeypatch.setattr(nh, "_expected_lengths", {})
    monkeypatch.setattr(nh, "_one_passes", {})
    monkeypatch.setattr(nh, "_global_passes", {})
    n, bins, minlength = 3001, 256, 20000
    _, copies = plan.choose_strategy(bins, False, None, 4)
    private = plan.bincount_rule(np.int32, bins)
    private_geometry = ((plan.grid_size(n, 4, False, 132, bins), 1, 1), (plan.BLOCK, 1, 1), bins * copies * 4)
    global_arguments = plan.bincount_rule(np.int32, plan.ONE_PASS_MOST_BINS + 1).arguments()
    global_geometry = ((plan.grid_size(n, 4, False, 132, 0), 1, 1), (plan.BLOCK, 1, 1), 0)

    class ReadyKind(type(arrays.kind_of(FakeDeviceArray(np.zeros(1, np.int32))))):
        def ready(self, x):
            return x.host.ctypes.data, x.host.size, x.host.dtype, 0, 7

        def new_shaped(self, x, shape, dtype, device, stream):
            native, pointer = super().new_shaped(x, shape, dtype, device, stream)
            ops.append(("new", shape, np.dtype(dtype), stream, pointer))
            return native, pointer

    for ready in (False, True):
        if ready:  # the passes made above: a kind that takes the ready path
            monkeypatch.setitem(arrays.READY, FakeDeviceArray, ReadyKind())
        context = 0xC0 if ready else 0
        nh._expected_lengths.clear()  # (the global pass's call left 20,000: past the private copies)
        host = rng.integers(0, 100, n, dtype=np.int32)
        host[0] = 99
        ops.clear()
        got = pyscan.bincount(FakeDeviceArray(host))
        np.testing.assert_array_equal(got.host, np.bincount(host))
        counted = allocated[-1].address  # bins + 2 words: the general path's scratch, the ready path's own
        build = [] if ready else [("build", nh.ONE_LAUNCH, copies, 0, 1)]
        copy = [("new", (100,), np.dtype(np.int64), 7, got.host.ctypes.data)] if ready else []
        assert ops == [("allocate", 8 * (bins + 2), 7), *build, ("refuse", 7),
                       ("counters", nh.TICKET_BYTES + 8 * (bins + 2), 0, 7),
                       ("launch", nh.ONE_LAUNCH, context, 7, private_geometry,
                        (host.ctypes.data, n, bins, *private.arguments(), 0, 0x7000 + nh.TICKET_BYTES, 0x7000, counted,
                         0, 0, 0)),
                       ("copy_dtoh", counted + 8 * bins, 16, 7), *copy,
                       ("copy_dtod", got.host.ctypes.data, 8 * 100, 7)], ops
        ops.clear()
        got = pyscan.bincount(FakeDeviceArray(host), minlength=minlength)
        np.testing.assert_array_equal(got.host, np.bincount(host, minlength=minlength))
        result, extremes = got.host.ctypes.data, allocated[-1].address  # the result counted into, then 16 bytes
        made = ([("new", (minlength,), np.dtype(np.int64), 7, result), ("allocate", 16, 7)] if ready
                else [("allocate", 16, 7), ("build", nh.GLOBAL_PASS, 1, 0, 1)])
        assert ops == [*made, ("refuse", 7), ("memset32", result, 0, 2 * minlength, 7),
                       ("counters", nh.TICKET_BYTES + 16, 0, 7),
                       ("launch", nh.GLOBAL_PASS, context, 7, global_geometry,
                        (host.ctypes.data, n, minlength, *global_arguments, 0, 0x7000 + nh.TICKET_BYTES, 0x7000, result,
                         extremes)),
                       ("copy_dtoh", extremes, 16, 7)], ops


# ---- the commonest call (int bins, a range, 1-D device data, no weights): one look-up, then its launches -----------

def test_the_commonest_call_looks_up_what_a_first_call_worked_out(monkeypatch):
    from pyscan.runtime import arrays

    class Ready:  # a 1-D contiguous float32 device array of 4099 elements that ready() takes as it is
        pass

    class Kind:
        def ready(self, x):
            return 0x1000, 4099, np.dtype(np.float32), 0, 7

    calls = []
    monkeypatch.setitem(arrays.READY, Ready, Kind())
    key = nh._ready_key(np.dtype(np.float32), 77, (0, 37.5), 0)
    monkeypatch.setattr(nh, "_ready", {key: lambda *args: calls.append(args) or ("hist", "edges")})
    x = Ready()
    assert pyscan.histogram(x, 77, range=(0, 37.5)) == ("hist", "edges")
    assert calls == [(arrays.READY[Ready], x, 0x1000, 4099, 0, 7)]
    # the range's types are in the key: np.float64(0) gives NumPy float64 edges for float32 data, 0 float32 ones
    assert nh._ready_key(np.dtype(np.float32), 77, (np.float64(0), 37.5), 0) != key
    assert nh._ready_key(np.dtype(np.float32), 77, (0.0, 37.5), 0) != key
    assert nh._ready_key(np.dtype(np.float32), 77, (0, 1, 2), 0) is None
    for other in ({"weights": x}, {"density": True}, {"stream": 7}, {"bins": 78}, {"bins": np.int64(77)},
                  {"range": ([0], 37.5)}):  # not the commonest call (or not this one): the general path
        kwargs = {"bins": 77, "range": (0, 37.5), **other}
        with pytest.raises(TypeError):  # the fake array is no array the general path takes
            pyscan.histogram(x, **kwargs)
    assert len(calls) == 1


class _Kernel:
    def __init__(self, name, ops):
        self.name, self.ops = name, ops

    def prepared_async_call(self, grid, block, stream, *args, shared_size=0):
        self.ops.append(("launch " + self.name, grid, block, stream, args, shared_size))

    def config(self, grid, block, shared_size=0):
        return ("geometry", grid, block, shared_size)

    def launch_typed(self, context, stream, geometry, *args):  # a launch with a geometry of config() in a context
        _, grid, block, shared = geometry
        self.ops.append(("launch " + self.name, grid, block, stream, args, shared, context))


class _Kind:
    def __init__(self, ops):
        self.ops = ops

    def empty(self, shape, dtype, device, stream, on_default=True):
        self.ops.append(("empty", shape, np.dtype(dtype), stream))
        return 0x9000 + 0x1000 * len(self.ops)

    def new_shaped(self, x, shape, dtype, device, stream):  # the ready call's: (array, address), like x
        self.ops.append(("new", shape, np.dtype(dtype), device, stream, x))
        native = 0x9000 + 0x1000 * len(self.ops)
        return native, native

    def pointer(self, native):
        return native


class _Buffer:
    def __init__(self, address):
        self.gpudata = address


def _ready_ops(monkeypatch):
    from pyscan.runtime import driver

    ops = []
    monkeypatch.setattr(driver, "enter", lambda device: ops.append(("enter", device)) or -1)
    monkeypatch.setattr(driver, "leave", lambda previous: ops.append(("leave",)))
    for name in ("memset32", "copy_dtod"):  # the ready call makes neither driver call: histogram_start does both
        monkeypatch.setattr(driver, name, lambda *args, name=name: ops.append((name,)))
    return ops


def test_a_ready_histogram_allocates_starts_and_launches(monkeypatch):
    """The ready call: the counts and the edges allocated by x's kind, histogram_start (the counts zeroed, the
    edges copied from the rule's device copy), the counting kernel with its geometry."""
    ops = _ready_ops(monkeypatch)
    rule = nh._uniform_rule(np.float32, 77, 0, 37.5, explicit_range=True)
    ready = nh.ReadyHistogram(rule, _Kernel("count", ops), 4 * 77 * 8, _Buffer(0x100), _Buffer(0x200), 132,
                              _Kernel("start", ops))
    hist, edges = ready(_Kind(ops), object(), 0x1000, 4099, 0, 7)
    assert [op[0] for op in ops] == ["enter", "empty", "empty", "launch start", "launch count", "leave"]
    assert ops[1][1:] == ((77,), np.dtype(np.int64), 7) and ops[2][1:] == ((78,), rule.bin_edges.dtype, 7)
    assert ops[3][1:] == ((1, 1, 1), (nh.START_BLOCK, 1, 1), 7,
                          (hist, np.int64(77), 0, np.int64(0), 0x200, edges, np.int64(rule.bin_edges.nbytes)), 0)
    _, grid, block, stream, args, shared = ops[4]
    assert grid == (nh.plan.grid_size(4099, 4, False, 132), 1, 1) and block == (nh.plan.BLOCK, 1, 1) and stream == 7
    assert args == (0x1000, 0, np.int64(4099), np.int32(77), *rule.arguments(), 0x100, hist) and shared == 4 * 77 * 8
    ops.clear()
    ready(_Kind(ops), object(), 0x1000, 0, 0, 7)  # empty data: zeroed counts and the edges, no counting
    assert [op[0] for op in ops] == ["enter", "empty", "empty", "launch start", "leave"]
    big = nh.ReadyHistogram(nh._uniform_rule(np.float32, 2**20, 0, 1, explicit_range=True), None, 0, None, None,
                            132, None)
    assert big.start_grid == 4 * 132  # a grid-stride loop over 2^20 counters and 2^20 + 1 edges


def test_a_ready_byte_histogram_counts_the_bytes_then_folds(monkeypatch):
    """1-byte data (BYTES): counts of the 256 byte values of its own, zeroed with the histogram by histogram_start,
    fast.cu into them, the fold into the bins: count_into's launches, with their geometry."""
    from pyscan.histograms import models

    ops = _ready_ops(monkeypatch)
    rule = nh._uniform_rule(np.uint8, 7, -3, 200, explicit_range=True)
    assert plan.choose_strategy(rule.bins, False, None, 1)[0] == plan.BYTES
    ready = nh.ReadyHistogram(rule, _Kernel("fold", ops), 0, _Buffer(0x100), _Buffer(0x200), 132,
                              _Kernel("start", ops), (_Kernel("fast", ops), nh.fast_shared(256)))
    hist, edges = ready(_Kind(ops), object(), 0x1003, 1_000_003, 0, 7)
    assert [op[0] for op in ops] == ["enter", "empty", "empty", "empty", "launch start", "launch fast", "launch fold",
                                     "leave"]
    assert ops[3][1:] == ((256,), np.dtype(np.int64), 7)
    counts = 0x9000 + 0x1000 * 4  # what _Kind.empty returned for it
    assert ops[4][4] == (hist, np.int64(7), counts, np.int64(256), 0x200, edges, np.int64(rule.bin_edges.nbytes))
    _, grid, block, stream, args, shared = ops[5]
    fast_grid, fast_block = models.fast_config(1_000_003, 132)
    assert (grid, block, stream) == ((fast_grid, 1, 1), (fast_block, 1, 1), 7)
    assert args == (0x1003, np.int64(1_000_003), np.int32(256), counts) and shared == 256 * models.FAST_COPIES * 4
    assert ops[6][1:] == ((1, 1, 1), (256, 1, 1), 7, (counts, np.int32(7), *rule.arguments(), 0x100, hist), 0)
    ops.clear()
    ready(_Kind(ops), object(), 0x1000, 0, 0, 7)  # empty data: no byte counts, no counting
    assert [op[0] for op in ops] == ["enter", "empty", "empty", "launch start", "leave"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_the_kernels_that_may_take_48_kb_of_dynamic_shared_memory_have_no_static_shared_memory(tmp_path):
    """The private copies take up to SHARED_BYTES (48 KB, the limit without opting in) of dynamic shared memory, so
    their kernels -- the one-launch ones included, whose last block's flag is broadcast by __syncthreads_or -- must
    have none of their own: ptxas reports no smem for them (a launch would fail with CUDA_ERROR_INVALID_VALUE)."""
    rule = nh._uniform_rule(np.dtype(np.float32), 12288, 0, 100, explicit_range=True)
    assert plan.choose_strategy(rule.bins, False, None, 4) == (plan.SHARED, 1) and 12288 * 4 == plan.SHARED_BYTES
    byte_rule = nh._uniform_rule(np.dtype(np.uint8), 12288, 0, 256, explicit_range=True)
    for defines, functions in ((dict(COPIES=1, BYTE_VALUES=0, **rule.defines()), ("numpy_histogram_shared", nh.ONE_LAUNCH)),
                               (dict(COPIES=plan.MAX_COPIES, BYTE_VALUES=1, **byte_rule.defines()), (nh.ONE_LAUNCH,))):
        source = tmp_path / "k.cu"
        source.write_text(build_source(nh.KERNEL, BLOCK_SIZE=plan.BLOCK, **defines))
        p = subprocess.run([shutil.which("nvcc"), "-std=c++17", "-arch=sm_90", "-cubin", "-Xptxas=-v", "-o",
                            str(tmp_path / "k.cubin"), str(source)], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        usage = {}  # function -> ptxas's "Used ..." line
        for chunk in p.stderr.split("Compiling entry function ")[1:]:
            usage[chunk.split("'")[1]] = next(line for line in chunk.splitlines() if "Used" in line)
        for function in functions:
            assert "registers" in usage[function] and "smem" not in usage[function], (function, usage[function])


def _kept_counters(monkeypatch, ops):
    """kept_counters on the fake: the stream's buffer at 0x7000 (none is capturing)."""
    def kept(nbytes, device, stream):
        ops.append(("counters", nbytes, device, stream))
        return None, 0x7000

    monkeypatch.setattr(nh, "kept_counters", kept)


@pytest.mark.parametrize("dtype, bins, strategy", [(np.float32, 77, plan.SHARED), (np.int16, 12288, plan.SHARED),
                                                   (np.uint8, 7, plan.BYTES), (np.int8, 12288, plan.BYTES)])
def test_a_ready_histogram_of_few_bins_is_one_launch(monkeypatch, dtype, bins, strategy):
    """Private copies (SHARED), and 1-byte data up to ONE_LAUNCH_MOST_BINS: the counts and the edges allocated by
    x's kind, then one launch with the kept counters (the ticket first, then 8 bytes a counter: the bins', or the
    256 byte values'), the histogram and the edges to copy; an empty array is the same launch on one block."""
    ops = _ready_ops(monkeypatch)
    _kept_counters(monkeypatch, ops)
    rule = nh._uniform_rule(np.dtype(dtype), bins, -3, 20000, explicit_range=True)
    assert plan.choose_strategy(rule.bins, False, None, rule.dtype.itemsize)[0] == strategy
    ready = nh.ReadyHistogram(rule, _Kernel("once", ops), 4096, _Buffer(0x100), _Buffer(0x200), 132,
                              _Kernel("start", ops), one_launch=strategy, context=0xC0)
    counted = 256 if strategy == plan.BYTES else bins
    x = object()
    full_grid = plan.grid_size(1_000_003, rule.dtype.itemsize, False, 132, plan.private_counters(strategy, bins))
    for _ in range(2):  # the second time with the geometries worked out the first
        for n, grid in ((1_000_003, full_grid), (0, 1)):
            ops.clear()
            hist, edges = ready(_Kind(ops), x, 0x1003, n, 0, 7)
            # nothing entered: the launch names the device's primary context, as the scan's ready call's
            assert [op[0] for op in ops] == ["new", "new", "counters", "launch once"]
            assert ops[0][1:] == ((bins,), np.dtype(np.int64), 0, 7, x)
            assert ops[1][1:] == (rule.bin_edges.shape, rule.bin_edges.dtype, 0, 7, x)
            assert ops[2][1:] == (nh.TICKET_BYTES + 8 * counted, 0, 7)
            assert ops[3][1:] == ((grid, 1, 1), (plan.BLOCK, 1, 1), 7,
                                  (0x1003, n, bins, *rule.arguments(), 0x100, 0x7000 + nh.TICKET_BYTES, 0x7000, hist,
                                   0x200, edges, rule.bin_edges.nbytes), 4096, 0xC0)
            # the rule's arguments go as Python numbers of the same values (the launcher packs those fastest)
            assert not any(isinstance(a, np.generic) for a in ops[3][4])
    assert sorted(ready.geometries) == [0, 1_000_003]


def test_the_ready_call_keeps_one_launch_where_it_fits(monkeypatch):
    """_keep_ready: the one-launch kernel for SHARED and for BYTES up to ONE_LAUNCH_MOST_BINS (its shared memory:
    the copies of the bins' counters, or MAX_COPIES copies of the 256 byte values'), and no histogram_start; else
    histogram_start and count_into's launches (GLOBAL's atomics; BYTES' byte counts and fold)."""
    from pyscan.histograms import models
    from pyscan.runtime import capture, driver

    built = []
    monkeypatch.setattr(nh, "get_kernel", lambda relpath, function, **defines: built.append((function, defines))
                        or function)
    monkeypatch.setattr(nh, "fast_kernel", lambda device: "histogram_fast")
    monkeypatch.setattr(nh, "_constant", lambda rule, what, host, call: _Buffer(0x100))
    monkeypatch.setattr(nh, "sms", lambda call: 132)
    monkeypatch.setattr(capture, "prepare_kept", lambda device: built.append(("prepare_kept", device)))
    monkeypatch.setattr(nh, "_ready", {})
    monkeypatch.setattr(driver, "primary", lambda device: 0xC0 + device)  # the context the ready call launches in

    class Call:
        device = 0

    for dtype, bins, one_launch, function, shared in (
            (np.float32, 100, plan.SHARED, nh.ONE_LAUNCH, 100 * 16 * 4),
            (np.float32, 12288, plan.SHARED, nh.ONE_LAUNCH, 12288 * 4),
            (np.uint8, 12288, plan.BYTES, nh.ONE_LAUNCH, 256 * plan.MAX_COPIES * 4),
            (np.uint8, 12289, None, "numpy_histogram_fold", 0),
            (np.float32, 12289, None, "numpy_histogram_global", 0)):
        built.clear()
        rule = nh._uniform_rule(np.dtype(dtype), bins, 0, 50000, explicit_range=True)
        nh._keep_ready(dtype, rule, Call())
        ready = nh._ready[dtype]
        assert (ready.one_launch, ready.fn, ready.shared, ready.context) == (one_launch, function, shared, 0xC0)
        assert ready.byte_counter == (("histogram_fast", models.FAST_COPIES * 256 * 4) if function == nh.FOLD
                                      else None)
        assert (("prepare_kept", 0) in built) == (one_launch is not None)
        assert ready.start == (None if one_launch is not None else nh.START[1])  # histogram_start: not one launch
        if one_launch is not None:  # the byte values: their own build, 256 counters in MAX_COPIES copies
            assert built[0][1]["BYTE_VALUES"] == (one_launch == plan.BYTES)
            assert built[0][1]["COPIES"] == (plan.MAX_COPIES if one_launch == plan.BYTES else shared // (bins * 4))


@pytest.mark.parametrize("dtype, bins, weighted, launches", [
    (np.float32, 77, False, ["counters", "launch numpy_histogram_once"]),
    (np.uint8, 4096, False, ["counters", "launch numpy_histogram_once"]),
    (np.float32, 77, True, ["memset32", "launch numpy_histogram_shared"]),
    (np.float32, 12289, False, ["memset32", "launch numpy_histogram_global"]),
    (np.uint8, 12289, False, ["memset32", "scratch", "memset32", "launch histogram_fast", "launch numpy_histogram_fold"])])
def test_count_into_counts_in_one_launch_where_it_fits(monkeypatch, dtype, bins, weighted, launches):
    """count_into (every call but the ready one): the one-launch kernel where fits_one_launch says so, on the kept
    counters, writing `out` whole (no edges to copy); else `out` zeroed first, then the strategy's launches."""
    from pyscan.histograms import launch

    ops = []
    kernel = lambda relpath, function, **defines: _Kernel(function, ops)  # noqa: E731
    monkeypatch.setattr(nh, "get_kernel", kernel)
    monkeypatch.setattr(launch, "get_kernel", kernel)
    monkeypatch.setattr(nh, "sms", lambda call: 132)
    monkeypatch.setattr(launch, "sms", lambda call: 132)
    monkeypatch.setattr(nh, "_edges_on_device", lambda rule, call: _Buffer(0x100))
    _kept_counters(monkeypatch, ops)

    class Call:
        device, stream = 0, 7

        def memset32(self, array, value, words):
            ops.append(("memset32",))

        def scratch(self, shape, dtype=np.uint8):
            ops.append(("scratch",))
            return _Buffer(0x3000)

    data = np.zeros(1_000_003, dtype).view(type("Device", (np.ndarray,), {"gpudata": 0x1000}))
    weights = np.zeros(data.size, np.float32).view(type(data)) if weighted else None
    rule = nh._uniform_rule(np.dtype(dtype), bins, 0, 50000, explicit_range=True)
    out = _Buffer(0x2000)
    assert nh.count_into(data, weights, rule, out, call=Call()) is out
    assert [op[0] for op in ops] == launches
    if launches[0] == "counters":
        assert ops[0][1] == nh.counter_bytes(plan.choose_strategy(bins, False, None, data.itemsize)[0], bins)
        chosen = plan.choose_strategy(bins, False, None, data.itemsize)[0]
        grid = plan.grid_size(data.size, data.itemsize, False, 132, plan.private_counters(chosen, bins))
        assert ops[1][1:3] == ((grid, 1, 1), (plan.BLOCK, 1, 1))
        assert ops[1][4] == (0x1000, np.int64(data.size), np.int32(bins), *rule.arguments(), 0x100,
                             0x7000 + nh.TICKET_BYTES, 0x7000, 0x2000, 0, 0, np.int64(0))
    ops.clear()
    assert nh.count_into(data[:0], None, rule, out, call=Call()) is out  # no data: zeroed, nothing counted
    assert [op[0] for op in ops] == ["memset32"]


def test_kept_counters_are_the_streams_or_a_captured_calls_own(monkeypatch):
    """Eager calls: the stream's kept buffer (the kernel leaves it zero).  A call on a capturing stream: memory the
    graph keeps for good (zeroed once), or, when none is left, its own zeroed by a memset node."""
    from pyscan.runtime import capture, driver

    class Kept:
        address = 0x5000

    asked = []
    monkeypatch.setattr(nh._kept_counters, "get", lambda nbytes, device, stream: asked.append(("kept", nbytes, stream))
                        or Kept())
    monkeypatch.setattr(driver, "_capturing", lambda stream: 0)
    owner, address = nh.kept_counters(2064, 0, 7)
    assert isinstance(owner, Kept) and address == 0x5000 and asked == [("kept", 2064, 7)]
    monkeypatch.setattr(driver, "_capturing", lambda stream: 1)
    monkeypatch.setattr(driver, "capturing", lambda stream, device: True)
    monkeypatch.setattr(capture, "kept", lambda nbytes, device: 0x6000)
    assert nh.kept_counters(2064, 0, 7) == (None, 0x6000)
    own = capture.Scratch(0x8000, None)
    monkeypatch.setattr(capture, "kept", lambda nbytes, device: None)
    monkeypatch.setattr(capture, "status", lambda nbytes, device, stream: asked.append(("status", nbytes, stream))
                        or own)
    assert nh.kept_counters(2064, 0, 7) == (own, 0x8000)
    assert asked[-1] == ("status", 2064, 7)
