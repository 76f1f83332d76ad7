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
