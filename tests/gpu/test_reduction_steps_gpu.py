"""Reduction trees step by step (pyscan.reductions.steps, demos/reduction_steps.py) on the GPU: the TRACE builds equal
to the models step for step, and the demo.  The models' steps and their pictures (no GPU needed):
tests/unit/test_reduction_steps.py."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")


from pyscan.reductions import book  # noqa: E402
from pyscan.reductions import steps as rsteps  # noqa: E402

SIZES = {"simple": 16, "convergent": 16, "shared_memory": 16, "coarsened": 32}


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("name", rsteps.TRACED)
def test_gpu_trace_equals_model(name, dtype, rng):
    """Each TRACE build's steps equal the model's, for the picture's size, a partial block and a full block."""
    per_thread = book.KERNELS[name][2]
    for n in (SIZES[name], 3 * per_thread + 1, per_thread * 128, per_thread * 1024):
        x = rng.integers(-50, 50, n).astype(dtype)
        values = rsteps.checked_gpu_steps(name, x)  # raises at the first step that differs
        assert len(values) == len(rsteps.model_steps(name, x))
        if np.dtype(dtype).kind == "i":
            assert np.asarray(values[-1])[0] == x.sum(dtype=dtype)


def test_gpu_reduction_steps_demo(run_demo, tmp_path):
    out = run_demo("demos/reduction_steps.py", "--save", tmp_path, pngs=[tmp_path / "reduction_trees.png"])
    assert "GPU trace (" in out and "every step equals the model's" in out
    assert "equal the COUNT_WORK build's count" in out
