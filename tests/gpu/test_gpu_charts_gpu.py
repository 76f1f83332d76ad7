"""scripts/gpu_charts.py on the GPU: each chart runs (checked against NumPy inside) on small sizes.  Without a GPU
(the models' atomics, the timed charts' refusals): tests/unit/test_gpu_charts.py."""

from __future__ import annotations

import pytest

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def charts(load_script):
    return load_script("scripts/gpu_charts.py")


def test_gpu_charts(charts, tmp_path, capsys):
    assert charts.contention(tmp_path / "c.png", repeat=2, size=1 << 20) == 0
    assert charts.end_to_end(tmp_path / "e.png", max_mb=8, repeat=1) == 0
    assert charts.life(tmp_path / "l.png", generations=16, repeat=2) == 0
    for name in ("c.png", "e.png", "l.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG_MAGIC
    assert "Contiguous (atomic_block" in capsys.readouterr().out
