"""Pictures of scan steps and counted work (PMPP §11.2-§11.4) on the GPU: the COUNT_WORK builds count the formulas'
additions (and the reductions' warps), the TRACE builds equal the models step for step, and the demos draw from the
GPU.  The models, their pictures and the demos without a GPU: tests/unit/test_visual.py.
"""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from pyscan.reductions import REDUCTIONS  # noqa: E402
from pyscan.scans import SCANS  # noqa: E402
from pyscan_tools.pictures import visual  # noqa: E402

NS = [1 << k for k in range(4, 12)]  # 16 ... 2048
# The scans with a book formula (visual.FORMULA_OF), and the mode their formula counts.
FORMULA_SCANS = ("naive", "kogge_stone", "kogge_stone_double_buffer", "brent_kung", "blelloch", "blelloch_block")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _exclusive(name):
    return visual.FORMULA_OF[name] == "blelloch"  # Blelloch's formula counts its natural, exclusive scan


def _steps(name, x, exclusive=None):
    exclusive = _exclusive(name) if exclusive is None else exclusive
    return SCANS.get(name).model(x, op="add", exclusive=exclusive, return_steps=True)


SECTION_LIMIT = 1024  # a one-block kernel with one thread per element holds at most 1024 elements


def _with_option(names, option, registry=SCANS):
    return [name for name in names if name in registry.names() and getattr(registry.get(name), option, None) is not None]


@pytest.mark.parametrize("name", FORMULA_SCANS)
def test_gpu_count_work_equals_formula(name):
    algorithm = SCANS.get(name)
    if algorithm.count_work is None:
        pytest.fail(f"{name} has no count_work option (every scan kernel has a COUNT_WORK build)")
    counted = 0
    for n in NS:
        try:
            work = algorithm.count_work(n)
        except ValueError:
            assert n > SECTION_LIMIT, f"{name}: count_work refused N = {n}"
            continue
        counted += 1
        assert work.additions == visual.book_additions(name, n), (name, n, work)
        assert work.additions == visual.count_additions(_steps(name, np.ones(n, np.int64))[1]), (name, n)
        assert work == algorithm.model_count_work(n), (name, n)  # the warps too, step by step
        assert len(work.active_warps) >= 1 and all(w >= 0 for w in work.active_warps)
        assert 0 < max(work.active_warps) <= SECTION_LIMIT // 32
    assert counted >= len(NS) - 1


def test_gpu_kogge_stone_active_warps():
    """Kogge-Stone: thread i owns element i, so a step's active warps are the warps of its edges' destinations."""
    work = SCANS.get("kogge_stone").count_work(256)
    _, steps = _steps("kogge_stone", np.ones(256, np.int64))
    model = [len({int(d) // 32 for _, d in step.edges}) for step in steps if step.edges]
    assert [w for w in work.active_warps if w] == model


@pytest.mark.parametrize("kernel", ["simple", "convergent"])
def test_gpu_reduction_resources(kernel):
    count = REDUCTIONS.get(kernel).count_work
    for n in (64, 256, 1024, 2048):
        work = count(n)
        additions, warps = visual.reduction_warp_slots(kernel, n)
        assert work.additions == additions == n - 1
        assert work.warp_slots == 32 * sum(warps), (kernel, n, work)
    if kernel == "convergent":
        assert count(256).warp_slots == 384  # PMPP ch. 10's figure


@pytest.mark.parametrize("exclusive", [False, True])
def test_gpu_trace_pictures(exclusive, tmp_path, rng):
    names = _with_option(FORMULA_SCANS, "trace")
    assert {"kogge_stone", "brent_kung"} <= set(names) and ({"blelloch", "blelloch_block"} & set(names))
    panels = []
    for name in names:
        x = rng.integers(-20, 20, 16).astype(np.int32)
        _, steps = _steps(name, x, exclusive)
        trace = SCANS.get(name).trace(x, op="add", exclusive=exclusive)
        assert len(trace) == len(steps), name
        for k, (values, step) in enumerate(zip(trace, steps)):
            np.testing.assert_array_equal(values, step.values, err_msg=f"{name} step {k} ({step.label})")
        panels.append((name, [type(s)(s.label, np.asarray(v), s.edges) for s, v in zip(steps, trace)]))
    fig = visual.draw_step_panels(panels, suptitle="GPU trace")
    fig.savefig(tmp_path / "trace.png", dpi=60)
    plt.close(fig)
    assert (tmp_path / "trace.png").read_bytes()[:8] == PNG_MAGIC


def test_gpu_demos(run_demo, tmp_path):
    out = run_demo("demos/scan_steps.py", "--save", tmp_path / "steps", pngs=[tmp_path / "steps" / "scan_steps.png"])
    assert "GPU trace (" in out and "every step equals the model's" in out
    out = run_demo("demos/work_efficiency.py", "--save", tmp_path / "work.png", pngs=[tmp_path / "work.png"])
    assert "GPU count" in out and " ! " not in out
