"""Multi-block scan pictures (pyscan.scans.multiblock, demos/multiblock_scan.py) and scan_steps' refusals, without a
GPU: the NumPy arrays and rows.  On the GPU, the library's kernels' arrays checked against NumPy:
tests/gpu/test_multiblock_scan_gpu.py."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch  # noqa: E402

from pyscan.scans import multiblock  # noqa: E402
from pyscan_tools.pictures import visual  # noqa: E402


@pytest.mark.parametrize("n", [2, 5, 16])
def test_numpy_values_and_rows(n, rng):
    x = rng.integers(1, 10, n).astype(np.int32)
    hier = multiblock.hierarchical_values(x, on_gpu=False)
    single = multiblock.single_pass_values(x, on_gpu=False)
    np.testing.assert_array_equal(hier["out"], np.cumsum(x))
    np.testing.assert_array_equal(single["out"], np.cumsum(x))
    k = -(-n // 4)
    assert hier["sums"].size == k and single["handoff"].size == k
    np.testing.assert_array_equal(single["handoff"][1:], hier["scanned_sums"][:-1])
    rows = multiblock.hierarchical_steps(hier)
    np.testing.assert_array_equal(rows[-1].values, np.cumsum(x))
    for src, dst in rows[-1].edges:  # the add-back: out[i] = S scanned[b-1] + local[i]
        assert rows[-1].values[dst] == rows[3].values[src] + rows[1].values[dst]
    srows = multiblock.single_pass_steps(single)
    assert len(srows) == 2 + k - 1
    np.testing.assert_array_equal(srows[-1].values, np.cumsum(x))
    for before, step in zip(srows[1:], srows[2:]):  # each hand-off: out[i] = (final last of section b-1) + local
        for src, dst in step.edges:
            assert step.values[dst] == before.values[src] + srows[1].values[dst]


def test_pictures_draw(tmp_path, rng):
    x = rng.integers(1, 10, 16).astype(np.int32)
    rows = multiblock.hierarchical_steps(multiblock.hierarchical_values(x, on_gpu=False))
    ax = visual.draw_steps(rows)
    moves = [p for p in ax.patches if isinstance(p, FancyArrowPatch) and p.get_gid() == "move"]
    combines = [p for p in ax.patches if isinstance(p, FancyArrowPatch) and p.get_gid() == "combine"]
    assert len(moves) == 4 and len(combines) == 12  # S copied out of 4 sections; 12 elements get S[b-1] added
    plt.close(ax.figure)


def test_bad_input():
    with pytest.raises(TypeError, match="integers"):
        multiblock.hierarchical_values(np.ones(8, np.float32), on_gpu=False)
    with pytest.raises(ValueError, match="op='add'"):
        multiblock.single_pass_values(np.ones(8, np.int32), op="max", on_gpu=False)
    with pytest.raises(ValueError, match="power of two"):
        multiblock.hierarchical_values(np.ones(8, np.int32), section_size=3, on_gpu=False)


def test_multiblock_demo_model(run_demo, tmp_path):
    out = run_demo("demos/multiblock_scan.py", "--model", "--save", tmp_path / "m.png", pngs=[tmp_path / "m.png"])
    assert "NumPy (no GPU)" in out and "hand-offs" in out
    with pytest.raises(SystemExit):
        run_demo("demos/multiblock_scan.py", "--size", "65")


def test_scan_steps_refuses_multi_block_and_wide(load_script, tmp_path, capsys):
    demo = load_script("demos/scan_steps.py")
    assert demo.main(["--model", "--algorithms", "hierarchical,single_pass,decoupled_lookback",
                      "--save", str(tmp_path / "x.png")]) == 1
    out = capsys.readouterr().out
    for name in ("hierarchical", "single_pass", "decoupled_lookback"):
        assert f"skipping {name}: " in out
    assert "nothing to draw" in out and not (tmp_path / "x.png").exists()
    with pytest.raises(SystemExit):
        demo.main(["--model", "--size", str(visual.MAX_PICTURE_COLUMNS + 1)])
    plt.close("all")
