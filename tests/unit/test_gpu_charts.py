"""scripts/gpu_charts.py: without a GPU the contention chart draws the models' atomics and the timed charts refuse
with the reason.  On the GPU each chart runs (checked against NumPy inside) on small sizes:
tests/gpu/test_gpu_charts_gpu.py."""

from __future__ import annotations

import pytest

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def charts(load_script):
    return load_script("scripts/gpu_charts.py")


def test_model_atomics(charts):
    atomics = charts.model_atomics(1 << 16)
    for name in ("atomic_block", "atomic_interleaved"):  # one global atomic per letter, no shared ones
        for label in atomics[name]:
            assert atomics[name][label] == (1.0, 0.0)
    assert atomics["privatized"]["one letter ('e')"][1] == 1.0  # every byte a shared atomic
    assert atomics["privatized"]["one letter ('e')"][0] < 0.01  # one global commit per block


def test_crossover(charts):
    sizes = [4, 8, 16, 32]
    assert charts.crossover(sizes, [1, 2, 4, 8], [2, 1.5, 3, 5]) == 8
    assert charts.crossover(sizes, [1, 2, 4, 8], [2, 3, 5, 9]) is None
    assert charts.crossover(sizes, [1, 2, 4, 8], [2, 1, 5, 7]) == 32


@pytest.mark.skipif(__import__("pyscan").gpu_unavailable_reason() is None, reason="checks the no-GPU paths")
def test_without_gpu(charts, tmp_path, capsys):
    assert charts.main(["contention", "--save", str(tmp_path / "c.png")]) == 0
    assert (tmp_path / "c.png").read_bytes()[:8] == PNG_MAGIC
    assert charts.main(["life", "--save", str(tmp_path / "l.png")]) == 1
    assert charts.main(["end_to_end", "--save", str(tmp_path / "e.png")]) == 1
    out = capsys.readouterr().out
    assert "atomics from the NumPy models only" in out
    assert "life needs a GPU to time" in out and "end_to_end needs a GPU to time" in out
    assert not (tmp_path / "l.png").exists()
