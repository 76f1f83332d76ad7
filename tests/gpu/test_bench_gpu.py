"""python -m pyscan bench (pyscan_tools/bench) on the GPU: a tiny run of every pattern, its JSON, plot and table.
Everything else about the bench (arguments, batching, the targets, whole runs on NumPy stand-ins timed by a modelled
clock) runs without a GPU: tests/unit/test_bench.py."""

import json

import pytest

from pyscan_tools.bench import cli, report


@pytest.mark.parametrize("pattern", ["scan", "reduce", "axis_scan", "axis_reduce", "histogram", "life"])
def test_gpu_smoke(pattern, tmp_path, capsys):
    out_json, out_png = tmp_path / "b.json", tmp_path / "b.png"
    rc = cli.main([pattern, "--sizes", "small", "--json", str(out_json), "--plot", str(out_png)])
    captured = capsys.readouterr()
    result = json.loads(out_json.read_text())
    report.validate_result(result)
    assert out_png.read_bytes()[:4] == b"\x89PNG"
    ours = [r for r in result["rows"] if r["kind"] == "pyscan"]
    bad = [(r["name"], r["dtype"], r["op"], r["size_label"], r["error"], r["check"]) for r in ours
           if r["error"] or r["check"] == "MISMATCH"]
    assert ours and not bad and rc == 0, (bad, captured.err[-3000:])
    assert result["device"]["name"] and result["device"]["multiprocessors"] > 0
    assert all(r["ms"] > 0 and r["x_copy"] > 0 for r in ours)
    assert "targets:" in captured.out and "issue" not in captured.out.lower()
