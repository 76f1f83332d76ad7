"""The histogram's bin of a value (kernels/histogram/numpy_bins.cuh: BinRule::bin_of, and quick_bin, the branch-free
bin the private copies' count takes before it corrects the rare value near an edge) compiled by the host C++
compiler (tests/emulate/histogram_bins_on_cpu.cpp) and run on the rules and values of test_histogram_numpy.py's guess
cases -- every edge, its neighbours, random values in and around the range, values just inside and outside the
margin -- against the step-model (pyscan.histograms.numpy_models.bins_of, itself held equal to np.histogram there).
quick_bin must equal bin_of wherever it does not ask for the correction, ask for it on random data no more often
than the margin allows (2 x guess_margin of a bin), and never inside the range where the guess is exact.
No GPU; skipped where there is no g++ or no CUDA headers."""

import subprocess

import numpy as np
import pytest
from cuda_headers import build_emulator, needs_emulator
from test_histogram_numpy import GUESS_CASES, _data, _neighbours, guess_case_values

from pyscan.histograms import numpy_histogram as nh
from pyscan.histograms import numpy_models as nm
from pyscan.histograms import numpy_plan as plan

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

CORRECT = -2  # quick_bin's "take bin_of"
_built: dict = {}  # the rule's #defines -> the emulator built with them


def emulator(rule, tmp_path_factory):
    key = tuple(sorted(rule.defines().items()))
    if key not in _built:
        where = tmp_path_factory.mktemp("histogram_bins")
        _built[key] = build_emulator("histogram_bins_on_cpu", where, rule.defines(), extra=("-ffp-contract=off",
                                                                                             "-frounding-math"))
    return _built[key]


def kernel_number(value) -> str:
    """A rule argument as the emulator parses it: integers in decimal, floats as exact hex literals."""
    return str(value) if isinstance(value, int) else float(value).hex()


def run_bins(rule, values: np.ndarray, tmp_path, binary) -> tuple:
    """(bin_of, quick_bin) of every value, as the kernel's source computes them on the CPU."""
    values_file, edges_file, out_file = tmp_path / "values.bin", tmp_path / "edges.bin", tmp_path / "out.bin"
    values_file.write_bytes(np.ascontiguousarray(values).tobytes())
    edges_file.write_bytes(np.ascontiguousarray(rule.edges).tobytes())
    numbers = [kernel_number(rule.bins), *(kernel_number(v) for v in rule.arguments())]
    p = subprocess.run([str(binary), str(values_file), str(edges_file), str(out_file), *numbers], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr[-4000:]
    out = np.fromfile(out_file, np.int32).reshape(-1, 2)
    return out[:, 0].astype(np.int64), out[:, 1].astype(np.int64)


CASES = GUESS_CASES + [(np.float16, 10, (0, 1)), (np.float16, 100, (-3, 3))]  # no guess: NumPy's own f


@pytest.mark.parametrize("dtype, bins, range_", CASES, ids=lambda v: str(v))
def test_kernel_bins_are_the_models(dtype, bins, range_, rng, tmp_path, tmp_path_factory):
    dtype = np.dtype(dtype)
    rule = plan.uniform_rule(dtype, bins, *range_, explicit_range=True)
    x = guess_case_values(rule, dtype, bins, range_, rng)
    if dtype.kind == "f":  # and the values the range test alone keeps out
        x = np.concatenate([x, np.array([np.nan, np.inf, -np.inf], dtype)])
    binned, quick = run_bins(rule, x, tmp_path, emulator(rule, tmp_path_factory))
    np.testing.assert_array_equal(binned, nm.bins_of(x.astype(plan.key_dtype(dtype)), rule))
    taken = quick != CORRECT
    np.testing.assert_array_equal(quick[taken], binned[taken])  # quick_bin: bin_of's value, or "correct"
    if 0 < rule.guess_margin < 0.5 and dtype.kind == "f":  # random values need the correction only within the
        random_values = rng.uniform(range_[0], range_[1], 20000).astype(dtype)  # margin of a bin's ends
        _, quick_random = run_bins(rule, random_values, tmp_path, emulator(rule, tmp_path_factory))
        assert np.mean(quick_random == CORRECT) <= 2 * rule.guess_margin + 0.005, rule
    if rule.guess_margin == plan.EXACT_GUESS:  # an exact guess corrects nothing inside the range but its top
        inside = (x >= rule.bin_edges[0]) & (x < rule.bin_edges[-1])
        assert not np.any(quick[inside] == CORRECT)


@pytest.mark.parametrize("rule", [
    plan.edges_rule(np.dtype(np.float32), np.array([-1.0, 0.0, 0.5, 2.0], np.float64)),
    plan.edges_rule(np.dtype(np.int64), np.array([-5, 0, 3, 3, 9], np.int64)),
    plan.bincount_rule(np.dtype(np.int32), 17),
], ids=["edges float32", "edges int64 repeated", "bincount"])
def test_edges_and_bincount_bins_are_the_models(rule, rng, tmp_path, tmp_path_factory):
    x = np.concatenate([_data(rule.dtype, 3000, rng), _neighbours(rule.edges.astype(rule.dtype), rule.dtype)
                        if rule.edges.size else np.zeros(0, rule.dtype)]).astype(rule.dtype)
    binned, quick = run_bins(rule, x, tmp_path, emulator(rule, tmp_path_factory))
    np.testing.assert_array_equal(binned, nm.bins_of(x.astype(plan.key_dtype(rule.dtype)), rule))
    np.testing.assert_array_equal(quick, binned)  # no guess: quick_bin is bin_of


# ---- bincount's one pass on the global histogram, whole: tests/emulate/bincount_on_cpu.cpp ------------------------

def bincount_emulator(dtype, tmp_path_factory):
    """numpy_bincount_global of `dtype` (the build bincount's global pass launches) built for the CPU."""
    rule = plan.bincount_rule(dtype, plan.ONE_PASS_MOST_BINS + 1)
    function, defines, _ = nh.counting_build(rule, plan.GLOBAL, 0, extremes=True)
    assert function == nh.GLOBAL_PASS
    key = tuple(sorted(defines.items()))
    if key not in _built:
        _built[key] = build_emulator("bincount_on_cpu", tmp_path_factory.mktemp("bincount"), defines,
                                     extra=("-ffp-contract=off",))
    return _built[key]


@pytest.mark.parametrize("dtype", [np.dtype(d) for d in (np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                                          np.uint64)], ids=str)
def test_bincount_global_pass_is_the_model(dtype, rng, tmp_path, tmp_path_factory):
    """numpy_bincount_global (bincount's one pass on the global histogram, where minlength is past the private
    copies) run on the CPU, its blocks one after the other and each block's threads as threads, with the host's grid
    (2 SMs): the counts of the values below `bins` and the two extreme words are the step-model's
    (numpy_models.one_pass_model) -- uniform values some past `bins`, half of them one hot value (the warp runs'
    aggregation), the dtype's ends, negative values -- at lengths around a warp, a vector and a block, the data
    aligned to 16 bytes and not; and the kept counters and the ticket are back at zero (exit 3 if not)."""
    binary = bincount_emulator(dtype, tmp_path_factory)
    info = np.iinfo(dtype)
    for i, (n, bins) in enumerate(((1, 12289), (2, 20000), (33, 12289), (513, 20000), (5001, 12289), (20001, 20000))):
        x = rng.integers(0, 24000, n).astype(dtype)
        x[rng.random(n) < 0.5] = 7  # a hot value
        x[rng.integers(n)] = info.max
        if dtype.kind == "i" and n > 2:
            x[rng.integers(n)] = info.min
            x[rng.integers(n)] = -5
        skip = i % 2  # 1: one element before the data, so not 16-byte aligned
        (tmp_path / "x.bin").write_bytes(x.tobytes())
        grid = plan.grid_size(n, dtype.itemsize, False, 2, 0)
        p = subprocess.run([str(binary), str(n), str(bins), str(grid), str(skip), str(tmp_path / "x.bin"),
                            str(tmp_path / "out.bin")], capture_output=True, text=True)
        assert p.returncode == 0, (n, bins, p.returncode, p.stderr[-4000:])  # 3: counters left nonzero
        got = np.fromfile(tmp_path / "out.bin", np.uint64)
        np.testing.assert_array_equal(got, nm.one_pass_model(x, bins, sms=2), err_msg=f"n={n} bins={bins}")
        assert plan.extremes_of(got[bins:], dtype) == (int(x.min()), int(x.max()))


# ---- the private copies' count in one launch, whole: tests/emulate/histogram_once_on_cpu.cpp ----------------------

def once_emulator(rule, chosen, copies, tmp_path_factory, *, extremes=False, aggregate=None):
    """numpy_histogram_once of the rule (counting_build's #defines with one_launch=True; aggregate: one of
    numpy_plan.AGGREGATIONS for the private copies, None: the shipped one) built for the CPU."""
    aggregations = plan.AGGREGATE if aggregate is None else {**plan.AGGREGATE, plan.SHARED: aggregate}
    function, defines, shared = nh.counting_build(rule, chosen, copies, aggregations=aggregations, one_launch=True,
                                                  extremes=extremes)
    assert function == nh.ONE_LAUNCH and shared <= 48 * 1024  # the emulator's static shared buffer
    key = tuple(sorted(defines.items()))
    if key not in _built:
        _built[key] = build_emulator("histogram_once_on_cpu", tmp_path_factory.mktemp("once"), defines,
                                     extra=("-ffp-contract=off", "-frounding-math"))
    return _built[key]


def run_once(binary, rule, x, n, skip, outputs, grid, tmp_path) -> np.ndarray:
    """The `outputs` uint64 values numpy_histogram_once writes for x[skip:skip + n] on `grid` blocks."""
    values_file, edges_file, out_file = tmp_path / "values.bin", tmp_path / "edges.bin", tmp_path / "out.bin"
    values_file.write_bytes(np.ascontiguousarray(x).tobytes())
    edges_file.write_bytes(np.ascontiguousarray(rule.edges).tobytes())
    numbers = [kernel_number(rule.bins), *(kernel_number(v) for v in rule.arguments())]
    p = subprocess.run([str(binary), str(n), str(grid), str(skip), str(outputs), str(values_file), str(edges_file),
                        str(out_file), *numbers], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (p.returncode, p.stderr[-4000:])  # 3: counters or ticket left nonzero; 5: edges
    return np.fromfile(out_file, np.uint64)


# (dtype, bins, range): the private copies' strategy at many copies and at one, a float guess and an exact one,
# integer bins, 8-byte data, float16 (no guess), and 1-byte data (the 256 byte values, folded into the bins)
ONCE_CASES = [(np.float32, 100, (-3.3, 2.9)), (np.float32, 4096, (0, 1)), (np.float64, 999, (-1, 1)),
              (np.int32, 100, (0, 100)), (np.int32, 37, (-500, 1200)), (np.int64, 64, (0, 2**40)),
              (np.int16, 256, (-128, 128)), (np.float16, 10, (0, 1)), (np.uint8, 100, (0, 256)),
              (np.int8, 7, (-100, 90))]


@pytest.mark.parametrize("dtype, bins, range_", ONCE_CASES, ids=lambda v: str(v))
def test_one_launch_histogram_is_the_model(dtype, bins, range_, rng, tmp_path, tmp_path_factory):
    """numpy_histogram_once (pyscan.histogram's commonest call) run on the CPU with the host's grid (2 SMs): the
    counts are the step-model's (numpy_models.numpy_histogram_model) on values at and around every edge, in and out
    of the range; at lengths around a warp, a block and several blocks, the data aligned to 16 bytes and not; the
    returned edges copied whole; the kept counters and the ticket back at zero."""
    dtype = np.dtype(dtype)
    rule = plan.uniform_rule(dtype, bins, *range_, explicit_range=True)
    chosen, copies = plan.choose_strategy(bins, False, None, dtype.itemsize)
    assert nh.fits_one_launch(chosen, bins)
    binary = once_emulator(rule, chosen, copies, tmp_path_factory)
    values = rng.permutation(guess_case_values(rule, dtype, bins, range_, rng))
    for i, n in enumerate((1, 33, 513, 5001, values.size - 1)):
        skip = i % 2  # 1: one element before the data, so not 16-byte aligned
        x = values[:skip + n]
        grid = plan.grid_size(n, dtype.itemsize, False, 2, plan.private_counters(chosen, bins))
        got = run_once(binary, rule, x, n, skip, bins, grid, tmp_path)
        want = nm.numpy_histogram_model(x[skip:], rule, strategy=chosen, sms=2)
        np.testing.assert_array_equal(got, want.astype(np.uint64), err_msg=f"n={n} grid={grid}")


@pytest.mark.parametrize("aggregate", [a for a in plan.AGGREGATIONS if a != plan.AGGREGATE[plan.SHARED]])
def test_one_launch_aggregations_are_the_model(aggregate, rng, tmp_path, tmp_path_factory):
    """The private copies' other aggregations (runs, the lanes of a warp on one bin, both: docs/histogram.md) in the
    one launch: the counts are the model's on data half of which is one hot value."""
    dtype, bins = np.dtype(np.float32), 100
    rule = plan.uniform_rule(dtype, bins, -3, 3, explicit_range=True)
    chosen, copies = plan.choose_strategy(bins, False, None, dtype.itemsize)
    binary = once_emulator(rule, chosen, copies, tmp_path_factory, aggregate=aggregate)
    n = 20_001
    x = (rng.standard_normal(n) * 2).astype(dtype)
    x[rng.random(n) < 0.5] = 0.25
    grid = plan.grid_size(n, dtype.itemsize, False, 2, plan.private_counters(chosen, bins))
    got = run_once(binary, rule, x, n, 0, bins, grid, tmp_path)
    want = nm.numpy_histogram_model(x, rule, strategy=chosen, sms=2, aggregate=aggregate)
    np.testing.assert_array_equal(got, want.astype(np.uint64))


@pytest.mark.parametrize("dtype", [np.dtype(d) for d in (np.int16, np.uint16, np.int32, np.int64)], ids=str)
def test_bincount_one_pass_is_the_model(dtype, rng, tmp_path, tmp_path_factory):
    """numpy_histogram_once's EXTREMES build (bincount's one pass over the private copies) run on the CPU: the counts
    of the values below `bins` and the two extreme words are the step-model's (numpy_models.one_pass_model) on
    values some past `bins`, the dtype's ends and negative values; the kept counters back at zero."""
    bins = 1000
    rule = plan.bincount_rule(dtype, bins)
    chosen, copies = plan.choose_strategy(bins, False, None, dtype.itemsize)
    binary = once_emulator(rule, chosen, copies, tmp_path_factory, extremes=True)
    info = np.iinfo(dtype)
    for i, n in enumerate((1, 33, 5001, 20_001)):
        x = rng.integers(0, 1200, n).astype(dtype)
        x[rng.integers(n)] = info.max
        if dtype.kind == "i" and n > 2:
            x[rng.integers(n)] = info.min
        skip = i % 2
        x = np.concatenate([np.zeros(skip, dtype), x])
        grid = plan.grid_size(n, dtype.itemsize, False, 2, plan.private_counters(chosen, bins))
        got = run_once(binary, rule, x, n, skip, bins + 2, grid, tmp_path)
        np.testing.assert_array_equal(got, nm.one_pass_model(x[skip:], bins, sms=2), err_msg=f"n={n}")
        assert plan.extremes_of(got[bins:], dtype) == (int(x[skip:].min()), int(x[skip:].max()))


# ---- min_max.cu's pass, whole: tests/emulate/min_max_on_cpu.cpp ---------------------------------------------------

@pytest.mark.parametrize("dtype", [np.dtype(d) for d in (np.int8, np.uint8, np.int32, np.uint64, np.int64, np.float16,
                                                          np.float32, np.float64)], ids=str)
def test_min_max_pass_is_the_model(dtype, rng, tmp_path, tmp_path_factory):
    """min_max_partials (histogram's range=None, bincount's length past its one pass) run on the CPU with the host's
    grid (2 SMs): every block's least and greatest value and NaN flag are the step-model's
    (numpy_models.min_max_partials_model), at lengths around a warp, a block and several blocks, the data aligned to
    16 bytes and not, with the dtype's ends, -0.0, infinities and a NaN in some runs; and the host's finish is
    NumPy's min and max."""
    defines = nh.min_max_defines(dtype)
    key = tuple(sorted(defines.items()))
    if key not in _built:
        _built[key] = build_emulator("min_max_on_cpu", tmp_path_factory.mktemp("min_max"), defines,
                                     extra=("-ffp-contract=off",))
    binary, kdtype = _built[key], plan.key_dtype(dtype)
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    lowest, highest = (kernel_number(int(v) if kdtype.kind in "iu" else float(v)) for v in plan._lowest_highest(dtype))
    for i, n in enumerate((1, 33, 513, 5001, 100_003)):
        x = _data(dtype, n, rng)
        x[rng.integers(n)], x[rng.integers(n)] = info.max, info.min
        if dtype.kind == "f" and n > 2:
            x[rng.integers(n)], x[rng.integers(n)] = -0.0, (np.inf if i % 2 else -np.inf)
            if i == 3:
                x[rng.integers(n)] = np.nan
        skip = i % 2  # 1: one element before the data, so not 16-byte aligned
        x = np.concatenate([np.zeros(skip, dtype), x])
        grid = plan.min_max_grid(n, dtype.itemsize, 2)
        (tmp_path / "values.bin").write_bytes(x.tobytes())
        p = subprocess.run([str(binary), str(n), str(grid), str(skip), lowest, highest, str(tmp_path / "values.bin"),
                            str(tmp_path / "out.bin")], capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, (n, p.returncode, p.stderr[-4000:])
        raw = (tmp_path / "out.bin").read_bytes()
        slot = grid * kdtype.itemsize
        got = (np.frombuffer(raw[:slot], kdtype), np.frombuffer(raw[slot:2 * slot], kdtype),
               np.frombuffer(raw[2 * slot:], np.int32))
        want = nm.min_max_partials_model(x[skip:], sms=2)
        for g, w, what in zip(got, want, ("minima", "maxima", "NaN flags")):
            np.testing.assert_array_equal(g, w, err_msg=f"n={n} {what}")
        low, high = nm.finish_min_max(*got, dtype)
        data = x[skip:]
        np.testing.assert_array_equal([low, high], [data.min(), data.max()], err_msg=f"n={n}")
