"""Reduction trees step by step (pyscan.reductions.steps, demos/reduction_steps.py) without a GPU: the models' steps
drawn with their changing lengths, the threads at work per step against PMPP ch. 10's counts.  On the GPU, the TRACE
builds equal to the models step for step: tests/gpu/test_reduction_steps_gpu.py."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

from pyscan.reductions import book  # noqa: E402
from pyscan.reductions import steps as rsteps  # noqa: E402
from pyscan.scans.steps import Step  # noqa: E402
from pyscan_tools.pictures import visual  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SIZES = {"simple": 16, "convergent": 16, "shared_memory": 16, "coarsened": 32}


@pytest.mark.parametrize("name", rsteps.TRACED)
def test_picture_steps_edges_are_the_combines(name, rng):
    """Every combine edge of a tree step leaves op(old[src], old[dst]) in dst (in place), and the first step of
    the shared-memory kernels combines exactly the x elements its edges name; the last step is the sum."""
    n = SIZES[name]
    x = rng.integers(-20, 20, n).astype(np.int64)
    steps, notes = rsteps.picture_steps(name, x)
    assert np.array_equal(steps[0].values, x) and len(notes) == len(steps)
    for before, step in zip(steps, steps[1:]):
        old, new = np.asarray(before.values), np.asarray(step.values)
        if step.label.startswith("stride"):
            for src, dst in step.edges:
                assert new[dst] == old[src] + old[dst]
        elif old.size != new.size:
            sources = {}
            for src, dst in step.edges:
                sources.setdefault(dst, []).append(src)
            for dst, srcs in sources.items():
                assert new[dst] == old[srcs].sum(), (name, step.label, dst)
    assert np.asarray(steps[-1].values)[0] == x.sum()
    threads = {t for marks in notes if marks for t in marks.values()}
    assert threads == {f"t{t}" for t in range(n // book.KERNELS[name][2])}


@pytest.mark.parametrize("name", rsteps.TRACED)
def test_tree_picture_one_box_per_value_one_arrow_per_edge(name, rng):
    x = rng.integers(0, 10, SIZES[name]).astype(np.int32)
    steps, notes = rsteps.picture_steps(name, x)
    ax = visual.draw_steps(steps, notes=notes)
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(boxes) == sum(len(s.values) for s in steps)
    assert len(arrows) == sum(len(s.edges) for s in steps)
    moves = [p for p in arrows if p.get_gid() == "move"]
    assert len(moves) == 1  # the block result, copied out of element 0
    plt.close(ax.figure)


def test_draw_steps_refuses_a_length_change_without_edges_and_a_wide_row():
    with pytest.raises(ValueError, match="no edges"):
        visual.draw_steps([Step("a", np.zeros(4)), Step("b", np.zeros(3))])
    with pytest.raises(ValueError, match="too wide"):
        visual.draw_step_panels([("wide", [Step("a", np.zeros(visual.MAX_PICTURE_COLUMNS + 1))])])


def _warps(active):
    return [len(np.unique(np.asarray(a) // 32)) for a in active]


def test_active_threads_against_pmpp():
    """PMPP ch. 10 at N = 256 (128 threads): 255 operations; convergent 384 resources, simple 864 (the book
    prints 736; see the README); the shared-memory kernels as convergent; coarsened 1023 operations at N = 1024."""
    for name, n, resources in (("simple", 256, 864), ("convergent", 256, 384), ("shared_memory", 256, 384),
                               ("coarsened", 1024, 384)):
        labels, active, threads = rsteps.active_threads(name, n)
        assert threads == 128 and len(labels) == len(active) == 8
        ops = sum(np.asarray(a).size * c for a, c in zip(active, rsteps.combines_per_thread(name, labels)))
        assert ops == n - 1
        assert 32 * sum(_warps(active)) == resources
    _, active, _ = rsteps.active_threads("simple", 256)
    assert _warps(active) == visual.reduction_warp_slots("simple", 256)[1]


def test_activity_picture(tmp_path):
    panels = [(name, *rsteps.active_threads(name, 256)) for name in ("simple", "convergent")]
    fig = visual.draw_activity(panels, suptitle="t")
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert "864 execution resources" in titles[0] and "384 execution resources" in titles[1]
    fig.savefig(tmp_path / "a.png", dpi=50)
    plt.close(fig)
    assert (tmp_path / "a.png").read_bytes()[:8] == PNG_MAGIC


def test_bad_input():
    with pytest.raises(ValueError, match="unknown traced reduction"):
        rsteps.picture_steps("segmented", np.ones(16, np.int32))
    with pytest.raises(ValueError, match="one block"):
        rsteps.active_threads("simple", 4096)


def test_reduction_steps_demo_model(run_demo, tmp_path):
    out = run_demo("demos/reduction_steps.py", "--model", "--save", tmp_path,
                   pngs=[tmp_path / "reduction_trees.png", tmp_path / "reduction_activity.png"])
    assert "NumPy step-model (no GPU)" in out and "resources 32 x 27 = 864" in out
