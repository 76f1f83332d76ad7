"""Pictures of scan steps and counted work (PMPP §11.2-§11.4).

CPU: the step-models' combines (edges) are real (each edge's destination holds op(old[src], old[dst])), their
count equals the books' formulas for N = 16 ... 2048, pictures drawn from the models with Agg hold one box per
value and one arrow per combine and are written as PNG files, and both demos run without a GPU.
On the GPU (the COUNT_WORK builds count the formulas' additions and the reductions' warps, the TRACE builds equal the
models step for step, and the demos draw from the GPU): tests/gpu/test_visual_gpu.py.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

from pyscan.reductions import REDUCTIONS  # noqa: E402
from pyscan.scans import SCANS  # noqa: E402
from pyscan_tools.pictures import visual  # noqa: E402

NS = [1 << k for k in range(4, 12)]  # 16 ... 2048
# The scans with a book formula (visual.FORMULA_OF), and the mode their formula counts.
PICTURED = ("kogge_stone", "brent_kung", "blelloch_block")
FORMULA_SCANS = ("naive", "kogge_stone", "kogge_stone_double_buffer", "brent_kung", "blelloch", "blelloch_block")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _exclusive(name):
    return visual.FORMULA_OF[name] == "blelloch"  # Blelloch's formula counts its natural, exclusive scan


def _steps(name, x, exclusive=None):
    exclusive = _exclusive(name) if exclusive is None else exclusive
    return SCANS.get(name).model(x, op="add", exclusive=exclusive, return_steps=True)


# --- the formulas and the models' counted combines --------------------------------------------------------------

@pytest.mark.parametrize("n", NS)
def test_book_formulas_match_their_derivations(n):
    k = n.bit_length() - 1
    strides = [1 << j for j in range(k)]
    assert visual.book_additions("sequential", n) == n - 1
    assert visual.book_additions("kogge_stone", n) == sum(n - s for s in strides)  # stride s: elements i >= s
    # reduction tree: n/2s nodes at stride s; reverse tree: n/2s - 1 at stride s for s = n/4 ... 1
    assert visual.book_additions("brent_kung", n) == sum(n // (2 * s) for s in strides) + sum(
        n // (2 * s) - 1 for s in strides[:-1])
    assert visual.book_additions("blelloch", n) == 2 * sum(n // (2 * s) for s in strides)


def test_book_formula_bad_input():
    with pytest.raises(ValueError, match="power of two"):
        visual.book_additions("kogge_stone", 12)
    with pytest.raises(ValueError, match="no book formula"):
        visual.book_additions("single_pass", 16)


@pytest.mark.parametrize("n", NS)
def test_sequential_model(n, rng):
    x = rng.integers(-50, 50, n).astype(np.int64)
    result, steps = visual.sequential_model(x)
    np.testing.assert_array_equal(result, np.cumsum(x))
    assert visual.count_additions(steps) == n - 1


@pytest.mark.parametrize("name", FORMULA_SCANS)
def test_model_additions_equal_book(name):
    """Counted from the edges of each model, N = 16 ... 2048 (the lengths one section of the kernels holds)."""
    for n in NS:
        x = np.ones(n, np.int64)
        result, steps = _steps(name, x)
        expected = np.arange(n) if _exclusive(name) else np.arange(1, n + 1)
        np.testing.assert_array_equal(result, expected)
        assert visual.count_additions(steps) == visual.book_additions(name, n), (name, n)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("name", FORMULA_SCANS)
def test_model_edges_are_the_combines(name, exclusive, rng):
    """Every edge (src, dst) of a step: the step left op(old[src], old[dst]) in dst, and no step combines into one
    element twice; so the arrows of a picture are exactly the additions that step did."""
    for n in (16, 64):
        x = rng.integers(-100, 100, n).astype(np.int64)
        _, steps = _steps(name, x, exclusive)
        for before, step in zip(steps, steps[1:]):
            old, new = np.asarray(before.values), np.asarray(step.values)
            dsts = [int(d) for _, d in step.edges]
            assert len(dsts) == len(set(dsts)), (name, step.label)
            for src, dst in step.edges:
                assert 0 <= src < n and 0 <= dst < n and src != dst, (name, step.label, src, dst)
                assert new[dst] == old[src] + old[dst], (name, step.label, src, dst)


# --- pictures from the models -----------------------------------------------------------------------------------

def _artists(ax):
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch) and p.get_gid() == "combine"]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    return arrows, boxes


@pytest.mark.parametrize("name", PICTURED)
def test_draw_steps_one_box_per_value_one_arrow_per_combine(name, rng):
    x = rng.integers(0, 10, 16).astype(np.int32)
    _, steps = _steps(name, x)
    ax = visual.draw_steps(steps, title=name)
    arrows, boxes = _artists(ax)
    assert len(boxes) == 16 * len(steps)
    assert len(arrows) == visual.count_additions(steps)
    texts = [t.get_text() for t in ax.texts]
    labels = [" ".join(t.split()) for t in texts]  # long labels are wrapped onto lines
    for step in steps:
        assert step.label in labels
    assert str(int(steps[-1].values[-1])) in texts
    plt.close(ax.figure)


def test_blelloch_picture_shows_the_swap_as_moves():
    """The down-sweep's "left = old right" is drawn as dashed arrows (inferred from the values).  With all ones,
    a left child's old value (its subtree's size s) never equals the prefix moved into it (a multiple of 2s), so
    every one of the down-sweep's N - 1 swaps shows."""
    _, steps = _steps("blelloch_block", np.ones(16, np.int32))
    ax = visual.draw_steps(steps)
    dashed = [p for p in ax.patches if isinstance(p, FancyArrowPatch) and p.get_gid() == "move"]
    assert len(dashed) == 15
    plt.close(ax.figure)


def test_draw_steps_marks_the_padding(rng):
    x = rng.integers(0, 10, 12).astype(np.int32)  # one section of 16: 4 identity-padded positions
    _, steps = _steps("brent_kung", x)
    assert len(steps[0].values) == 16
    ax = visual.draw_steps(steps, valid=12)
    dashed_boxes = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_linestyle() == "--"]
    assert len(dashed_boxes) == 4 * len(steps)
    assert "identity padding" in [t.get_text() for t in ax.texts]
    plt.close(ax.figure)


def test_draw_step_panels_writes_png(tmp_path, rng):
    x = rng.integers(0, 10, 16).astype(np.int32)
    panels = [(name, _steps(name, x)[1]) for name in PICTURED]
    fig = visual.draw_step_panels(panels, suptitle="NumPy step-model (no GPU)")
    path = tmp_path / "steps.png"
    fig.savefig(path, dpi=60)
    plt.close(fig)
    assert path.read_bytes()[:8] == PNG_MAGIC and path.stat().st_size > 10_000


def test_draw_steps_bad_input():
    with pytest.raises(ValueError, match="no steps"):
        visual.draw_steps([])
    from pyscan.scans.steps import Step

    with pytest.raises(ValueError, match="values"):
        visual.draw_steps([Step("a", np.zeros(4)), Step("b", np.zeros(3))])


def test_draw_work_writes_png(tmp_path):
    measured = {name: [visual.book_additions(name, n) for n in NS] for name in ("sequential", "kogge_stone")}
    fig = visual.draw_work(NS, measured, title="t", source="model")
    lines = [line for ax in fig.axes for line in ax.get_lines()]
    assert len(lines) == 2 * 4  # two panels x (two formulas + two measured series)
    path = tmp_path / "work.png"
    fig.savefig(path, dpi=60)
    plt.close(fig)
    assert path.read_bytes()[:8] == PNG_MAGIC


# --- PMPP ch. 10's execution resources, from the index arithmetic ------------------------------------------------

def _warps_brute_force(kernel, n):
    threads, total, ops = n // 2, 0, 0
    strides = [1 << k for k in range(n.bit_length() - 1)]
    for s in (strides[::-1] if kernel == "convergent" else strides):
        active = [t for t in range(threads) if (t < s if kernel == "convergent" else t % s == 0)]
        ops += len(active)
        total += len({t // 32 for t in active})
    return ops, 32 * total


@pytest.mark.parametrize("n", [64, 256, 1024, 2048])
@pytest.mark.parametrize("kernel", ["simple", "convergent"])
def test_reduction_warp_slots(kernel, n):
    additions, warps = visual.reduction_warp_slots(kernel, n)
    assert (additions, 32 * sum(warps)) == _warps_brute_force(kernel, n)
    assert additions == n - 1


@pytest.mark.parametrize("kernel", ["simple", "convergent"])
def test_reduction_model_count_work(kernel):
    """The reduction owners' model counts (read off their model) agree with the brute-force index arithmetic."""
    count = REDUCTIONS.get(kernel).model_count_work
    for n in (64, 256, 1024, 2048):
        work = count(n)
        assert (work.additions, work.warp_slots) == _warps_brute_force(kernel, n)


def test_reduction_warp_slots_against_the_book():
    assert visual.reduction_warp_slots("convergent", 256) == (255, [4, 2, 1, 1, 1, 1, 1, 1])  # PMPP: 255 / 384
    additions, warps = visual.reduction_warp_slots("simple", 256)
    assert additions == 255 and 32 * sum(warps) == 864  # PMPP prints 736: see demos/work_efficiency.py


# --- the demos without a GPU ------------------------------------------------------------------------------------

def test_scan_steps_demo_model(load_script, tmp_path, capsys):
    demo = load_script("demos/scan_steps.py")
    assert demo.main(["--model", "--save", str(tmp_path / "one.png")]) == 0
    assert (tmp_path / "one.png").read_bytes()[:8] == PNG_MAGIC
    assert "NumPy step-model (no GPU)" in capsys.readouterr().out
    assert demo.main(["--model", "--size", "8", "--exclusive", "--algorithms", "kogge_stone,blelloch,nope",
                      "--save", str(tmp_path / "dir")]) == 0
    out = capsys.readouterr().out
    assert "skipping 'nope'" in out
    names = sorted(p.name for p in (tmp_path / "dir").iterdir())
    assert names == ["scan_steps.png", "scan_steps_blelloch_block.png", "scan_steps_kogge_stone.png"]
    plt.close("all")


def test_work_efficiency_demo_model(run_demo, tmp_path):
    out = run_demo("demos/work_efficiency.py", "--model", "--algorithms", "all", "--save", tmp_path / "work.png",
                   pngs=[tmp_path / "work.png"])  # code 0: every count equals its formula
    assert "counted from the NumPy step-models" in out and " ! " not in out
