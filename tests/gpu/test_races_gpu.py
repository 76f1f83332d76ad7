"""The books' races (pyscan_tools.pictures.races, kernels/races/) on the GPU: what is certain on every run (the fixed
kernels are right; the racy kernels write only their output and keep their invariants).  Nothing asserts that a race
strikes: it need not on every run.  The race models and the counting logic (no GPU needed): tests/unit/test_races.py."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from pyscan_tools.pictures import races  # noqa: E402


@pytest.mark.parametrize("name", list(races.RACES))
def test_gpu_racy_kernel_is_safe_and_fixed_kernel_is_right(name):
    """20 runs each: the fixed kernel is right every time; the racy kernel's results have the right shape, keep
    their invariants and never overwrite a guard word (run_racy raises if one changed).  How many racy runs
    are wrong is reported, not asserted."""
    count = races.count_wrong(name, 20, seed=1)
    assert count.runs == count.fixed_runs == 20
    assert count.fixed_wrong == 0
    print(count.line())


def test_gpu_races_demo(run_demo, tmp_path):
    out = run_demo("demos/races.py", "--runs", "10", "--save", tmp_path / "races.png", pngs=[tmp_path / "races.png"])
    assert "run on the GPU (" in out and "fixed kernel wrong in 0 of 10" in out
