"""Multi-block scan pictures (pyscan.scans.multiblock, demos/multiblock_scan.py) on the GPU: the library's kernels'
arrays, checked against NumPy, and the demo.  The NumPy arrays and rows and scan_steps' refusals (no GPU needed):
tests/unit/test_multiblock_scan.py."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")


from pyscan.scans import multiblock  # noqa: E402


@pytest.mark.parametrize("n", [2, 7, 16])
def test_gpu_arrays_equal_numpy(n, rng):
    """hierarchical_values / single_pass_values raise AssertionError if any array read back differs."""
    for _ in range(5):
        x = rng.integers(1, 10, n).astype(np.int32)
        hier = multiblock.hierarchical_values(x)
        single = multiblock.single_pass_values(x)
        np.testing.assert_array_equal(hier["out"], np.cumsum(x))
        np.testing.assert_array_equal(single["out"], np.cumsum(x))


def test_gpu_multiblock_demo(run_demo, tmp_path):
    out = run_demo("demos/multiblock_scan.py", "--save", tmp_path / "m.png", pngs=[tmp_path / "m.png"])
    assert "every array checked against NumPy" in out
