"""The books' races (pyscan_tools.pictures.races, kernels/races/) without a GPU: the race models and the counting
logic.  On the GPU, what is certain on every run: tests/gpu/test_races_gpu.py."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from pyscan.runtime.loader import build_source, global_functions, kernel_files, signature  # noqa: E402
from pyscan_tools.pictures import races  # noqa: E402


def test_race_kernels_are_files_with_their_functions():
    signatures = {"scan": "PP", "histogram": "PqiP", "life": "Piii"}
    for name, race in races.RACES.items():
        assert race.kernel in kernel_files() and race.fixed in kernel_files()
        source = build_source(race.kernel)
        assert global_functions(source) == [race.function]
        assert signature(source, race.function) == signatures[name]


@pytest.mark.parametrize("name", list(races.RACES))
def test_race_model_is_wrong_and_keeps_the_invariants(name, rng):
    """The model's interleaving (warps one after another) gives a wrong result that still keeps the bounds every
    racy run must keep; the right answer keeps them too."""
    for _ in range(3):
        x = races.make_input(name, rng)
        right = races.reference(name, x)
        model = races.race_model(name, x)
        assert model.shape == right.shape and model.dtype == right.dtype
        assert not np.array_equal(model, right)
        races.check_invariants(name, x, model)
        races.check_invariants(name, x, right)


def test_scan_race_model_by_hand():
    """64 ones, two warps: in step 1 warp 1's thread 32 reads element 31 after warp 0 wrote 2 there."""
    x = np.ones(64)
    buf = races.race_model("scan", np.concatenate([x, np.zeros(races.SCAN_SIZE - 64)]))
    np.testing.assert_array_equal(buf[:32], np.arange(1, 33))  # warp 0 alone is right
    assert buf[32] > 33  # element 32 took in warp 0's new values


def test_histogram_race_model_one_survivor_per_warp_iteration():
    """All bytes equal: every warp-iteration keeps exactly one of its 32 increments."""
    x = np.full(races.HISTOGRAM_BYTES, ord("a"), np.uint8)
    model = races.race_model("histogram", x)
    right = races.reference("histogram", x)
    assert right[0] == races.HISTOGRAM_BYTES
    assert 0 < model[0] < right[0] and model[1:].sum() == 0
    assert model[0] * races.WARP >= right[0]


@pytest.mark.parametrize("name", list(races.RACES))
def test_invariants_catch_bad_results(name, rng):
    x = races.make_input(name, rng)
    right = races.reference(name, x)
    bad = right.copy()
    if name == "scan":
        bad[5] -= 1  # smaller than right: impossible for the race
    elif name == "histogram":
        bad[0] += 1  # a lost update never adds
    else:
        bad[0, 0] = 2
    with pytest.raises(AssertionError):
        races.check_invariants(name, x, bad)
    with pytest.raises(AssertionError, match="shape"):
        races.check_invariants(name, x, right.reshape(-1)[:-1])


def test_count_wrong_logic():
    """count_wrong with stand-in runners: the model (always wrong here) and NumPy (always right)."""
    model = races.count_wrong("scan", 4, racy=lambda n, x: races.race_model(n, x),
                              fixed=lambda n, x: races.reference(n, x), fixed_runs=2)
    assert (model.runs, model.wrong, model.fixed_runs, model.fixed_wrong) == (4, 4, 2, 0)
    x, bad, right, fixed = model.example
    np.testing.assert_array_equal(right, np.cumsum(x))
    np.testing.assert_array_equal(fixed, right)
    assert "wrong in    4 of 4 runs" in model.line()
    right_only = races.count_wrong("life", 3, racy=lambda n, x: races.reference(n, x),
                                   fixed=lambda n, x: races.race_model(n, x))
    assert (right_only.wrong, right_only.fixed_wrong, right_only.example) == (0, 3, None)


def test_unknown_race():
    with pytest.raises(ValueError, match="unknown race 'nope'"):
        races.make_input("nope", np.random.default_rng(0))


def test_races_demo_model(run_demo, tmp_path):
    out = run_demo("demos/races.py", "--model", "--save", tmp_path / "races.png", pngs=[tmp_path / "races.png"])
    assert "NumPy race models (no GPU" in out and "outputs wrong" in out
    with pytest.raises(SystemExit):
        run_demo("demos/races.py", "--races", "nope")
