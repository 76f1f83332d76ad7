"""python -m pyscan bench: arguments, the statistics and ratio helpers, the JSON layout, the table, the plot, and
the whole run on a NumPy stand-in backend (CPU); a tiny run of every pattern on the GPU."""

import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest

from pyscan import bench
from pyscan.gpu import gpu_unavailable_reason
from pyscan.registry import Algorithm

# ------------------------------------------------------------------------------------------------- arguments


def test_defaults():
    args = bench.parse_args([])
    assert args.patterns == bench.PATTERNS and args.reps == bench.DEFAULT_REPS >= 10
    assert args.size_plan["scan"] == [2**k for k in range(10, 29, 2)]
    assert args.size_plan["reduce"][0] == 2**10 and args.size_plan["reduce"][-1] == 2**28
    assert args.size_plan["histogram"] == [2**20, 2**22, 2**24, 2**26, 2**28]
    assert args.size_plan["life"] == [(s, s) for s in (1024, 2048, 4096, 8192, 16384)]
    assert args.json is None and args.plot is None and not args.quick


def test_quick_and_reps():
    args = bench.parse_args(["scan", "--quick"])
    assert args.patterns == ("scan",) and args.reps == bench.QUICK_REPS >= 10
    assert args.size_plan == {"scan": bench.SIZE_PRESETS["quick"]["scan"]}
    assert bench.parse_args(["life", "--quick", "--reps", "3"]).reps == 3


@pytest.mark.parametrize("tokens, pattern, expected", [
    (["2^10,4096"], "scan", [1024, 4096]),
    (["16M", "2**12", "1k"], "reduce", [1024, 4096, 2**24]),
    (["2^20", "100x37"], "life", [(100, 37), (1024, 1024)]),
    (["64x64"], "histogram", [4096]),
    (["small"], "histogram", bench.SIZE_PRESETS["small"]["histogram"]),
    (["4096", "2^12"], "scan", [4096]),  # duplicates once
])
def test_sizes(tokens, pattern, expected):
    assert bench.parse_args([pattern, "--sizes", *tokens]).size_plan[pattern] == expected


@pytest.mark.parametrize("argv", [["--sizes", "abc"], ["life", "--sizes", "1000"], ["--sizes", "0"], ["--reps", "0"],
                                  ["nosuchpattern"], ["--sizes", "1x2x3"]])
def test_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as info:
        bench.parse_args(argv)
    assert info.value.code == 2
    assert "error" in capsys.readouterr().err


def test_size_label():
    assert bench.size_label(2**28) == "2^28" and bench.size_label(1000) == "1000"
    assert bench.size_label((16384, 16384)) == "16384x16384" and bench.cells((3, 5)) == 15


# ------------------------------------------------------------------------------------------------- statistics


def test_median_and_throughput():
    assert bench.median([3.0, 1.0, 2.0]) == 2.0 and bench.median([4, 1, 2, 3]) == 2.5
    with pytest.raises(ValueError):
        bench.median([])
    # The figure: a copy of 2^28 int32 (1 GiB) at ~366 Gelem/s takes 0.7334 ms and moves 2.93 TB/s.
    copy_ms = 0.7334
    assert bench.gper_s(2**28, copy_ms) == pytest.approx(366.0, rel=1e-3)
    assert bench.copy_gbytes_per_s(2**30, copy_ms) == pytest.approx(2 * 2**30 / copy_ms / 1e6)
    # copy Gelem/s = copy bytes/s / (2 x itemsize)
    assert bench.gper_s(2**28, copy_ms) == pytest.approx(bench.copy_gbytes_per_s(2**30, copy_ms) / 8)


@pytest.mark.parametrize("pattern, itemsize", [("scan", 4), ("scan", 8), ("life", 4), ("reduce", 4), ("reduce", 8),
                                               ("histogram", 1)])
def test_x_copy_definitions(pattern, itemsize):
    n, ms, copy_ms = 3 * 2**20, 2.5, 0.8
    ratio = bench.x_copy(pattern, ms, copy_ms)
    if pattern in ("scan", "life"):  # elements/s against the copy's elements/s of the same dtype
        assert ratio == pytest.approx(bench.gper_s(n, ms) / bench.gper_s(n, copy_ms))
    else:  # bytes read per second against the copy's bytes (read + written) per second
        read = n * itemsize / (ms * 1e-3) / 1e9
        assert ratio == pytest.approx(read / bench.copy_gbytes_per_s(n * itemsize, copy_ms))
    # the dashed line is where the ratio would be 1
    assert bench.gper_s(n, ms) / ratio == pytest.approx(bench.bound_gelem_per_s(pattern, n, copy_ms))


def test_reps_and_prediction():
    assert bench.choose_reps(20, 1.0, "gpu") == 20
    assert bench.choose_reps(20, 1000.0, "gpu") == bench.MIN_REPS["gpu"]  # never below the minimum
    assert bench.choose_reps(20, 300.0, "gpu") == 10
    assert bench.choose_reps(3, 1e6, "gpu") == 3  # never more than asked
    assert bench.choose_reps(20, 400.0, "cpu") == 10
    assert bench.predicted_ms(None, 10) is None
    assert bench.predicted_ms((2**20, 2.0), 2**22) == 8.0


def test_annotate_references_prefers_the_primary():
    def row(name, ms, reference=0, size=4):
        return {"pattern": "life", "name": name, "kind": "pyscan", "dtype": "int32", "op": "-", "size": size,
                "ms": ms, "reference": reference}
    rows = [row("book", 4.0, 2), row("global", 2.0, 1), row("fast", 0.5), row("fast", 0.5, size=9),
            row("global", 1.0, 1, size=9)]
    bench.annotate_references(rows)
    assert [r["x_ref"] for r in rows] == [1.0, 2.0, 8.0, 2.0, 1.0]


# ------------------------------------------------------------------------------------------------- inputs, references


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_inputs_scan_reduce(dtype, rng):
    x = bench.make_input("scan", 10**5, dtype, "add", rng)
    assert x.dtype == dtype and x.shape == (10**5,)
    assert np.all(x != 0) and x.min() == -4 and x.max() == 4
    assert len(np.unique(x)) == 8  # random, not a constant


def test_inputs_histogram_life(rng):
    u = bench.make_input("histogram", 2**16, "uint8", "uniform", rng)
    assert u.dtype == np.uint8 and len(np.unique(u)) == 256
    e = bench.make_input("histogram", 1000, "uint8", "all-equal", rng)
    assert np.all(e == ord("a"))
    lattice = bench.make_input("life", (256, 100), "int32", "-", rng)
    assert lattice.dtype == np.int32 and lattice.shape == (256, 100)
    assert set(np.unique(lattice)) == {0, 1} and 0.22 < lattice.mean() < 0.28


def _life_loops(a):
    h, w = a.shape
    out = np.zeros_like(a)
    for y in range(h):
        for x in range(w):
            n = sum(a[(y + dy) % h, (x + dx) % w] for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
            out[y, x] = 1 if n == 3 or (a[y, x] and n == 2) else 0
    return out


def test_life_step_numpy(rng):
    a = (rng.random((13, 21)) < 0.3).astype(np.int32)
    b = a
    for _ in range(3):
        b, a = bench.life_step_numpy(b), _life_loops(a)
        np.testing.assert_array_equal(b, a)
    glider = np.zeros((8, 8), np.int32)
    glider[0, 1] = glider[1, 2] = glider[2, 0] = glider[2, 1] = glider[2, 2] = 1
    np.testing.assert_array_equal(bench.reference("life", glider, "-", 4), np.roll(glider, (1, 1), (0, 1)))


def test_references(rng):
    x = bench.make_input("scan", 1000, "int32", "add", rng)
    np.testing.assert_array_equal(bench.reference("scan", x, "add"), np.cumsum(x, dtype=np.int32))
    np.testing.assert_array_equal(bench.reference("scan", x, "max"), np.maximum.accumulate(x))
    assert bench.reference("reduce", x, "min") == x.min() and bench.reference("reduce", x, "add") == x.sum()
    h = bench.make_input("histogram", 5000, "uint8", "uniform", rng)
    np.testing.assert_array_equal(bench.reference("histogram", h, "uniform"), np.histogram(h, 256, (0, 256))[0])
    assert bench.same_result("reduce", np.array([x.sum()]), x.sum())
    assert not bench.same_result("scan", x, bench.reference("scan", x, "add"))
    assert not bench.same_result("histogram", np.zeros(255), bench.reference("histogram", h, "uniform"))


# ------------------------------------------------------------------------------------------------- a whole run on NumPy


class NumpyBackend:
    """The backend interface of pyscan.bench with NumPy arrays and perf_counter timing."""

    l2_bytes = 8192
    device = {"name": "NumPy stand-in"}

    def upload(self, host):
        return host.copy()

    def empty_like(self, x):
        return np.empty_like(x)

    def download(self, x):
        return np.array(x)

    def copy_call(self, src, dst, nbytes):
        assert nbytes == src.nbytes or nbytes == 4 * src.size
        return lambda: np.copyto(dst, src)

    def timer(self, kind="gpu"):
        return bench.CpuTimer()

    def synchronize(self):
        pass

    def alive(self):
        return True

    def free(self):
        pass


def _scan_good(x, out, *, op, exclusive):
    bench._UFUNCS[op].accumulate(x, out=out)
    return 1


def _scan_wrong(x, out, *, op, exclusive):
    out[:] = x
    return 1


def _scan_small_only(x, out, *, op, exclusive):
    if x.size > 5000:
        raise ValueError("this scan takes at most 5000 elements")
    return _scan_good(x, out, op=op, exclusive=exclusive)


def _scan_broken(x, out, *, op, exclusive):
    raise RuntimeError("launch failed\nsecond line")


def _scan_slow(x, out, *, op, exclusive):
    time.sleep(x.size * 2e-6)  # 8 ms at 4096: the prediction at 16384 passes the 20 ms cap set below
    return _scan_good(x, out, op=op, exclusive=exclusive)


def _alg(name, driver, pattern="scan", fast=False, **options):
    return Algorithm(name, pattern, driver, (), "test", "test", None, fast, options)


def _generic_entry(b, alg, case):
    def make(case):
        box = {}

        def call():
            box["r"] = alg.driver(case.device, case.op)
        return call, lambda: box["r"]
    return make


def _life_entry(b, alg, case):
    def make(case):
        box = {"a": case.device}

        def call():  # a life driver's advance(LIFE_GENERATIONS)
            for _ in range(bench.LIFE_GENERATIONS):
                box["a"] = alg.driver(box["a"], case.op)
        return call, lambda: box["a"]
    return make


@pytest.fixture
def fake_run(monkeypatch, tmp_path):
    monkeypatch.setitem(bench.CALL_CAP_MS, "gpu", 20.0)
    registries = {
        "scan": [_alg("good", _scan_good), _alg("fast", _scan_good, fast=True), _alg("wrong", _scan_wrong),
                 _alg("small_only", _scan_small_only), _alg("broken", _scan_broken), _alg("slow", _scan_slow),
                 _alg("capped", _scan_good, max_length=2000)],
        "reduce": [_alg("sum", lambda x, op: bench._UFUNCS[op].reduce(x), "reduce", fast=True)],
        "histogram": [_alg("bincount", lambda x, op: np.bincount(x, minlength=256), "histogram")],
        "life": [_alg("step", lambda x, op: bench.life_step_numpy(x), "life")],
    }
    makers = dict(bench.ENTRY_MAKERS, reduce=_generic_entry, histogram=_generic_entry, life=_life_entry)
    args = bench.parse_args(["all", "--sizes", "1024", "4096", "16384", "--reps", "3"])
    args.size_plan["life"] = [(16, 16), (32, 48)]
    log = []

    class Log:
        def write(self, text):
            log.append(text)

        def flush(self):
            pass

    b = bench.Bench(NumpyBackend(), args, registries=registries, entry_makers=makers, log=Log())
    result = b.run()
    return result, "".join(log), tmp_path


def _rows(result, **match):
    return [r for r in result["rows"] if all(r[k] == v for k, v in match.items())]


def test_fake_run_rows(fake_run):
    result, log, _ = fake_run
    bench.validate_result(result)
    good = _rows(result, pattern="scan", name="good", op="add", dtype="int32")
    assert [r["size"] for r in good] == [1024, 4096, 16384]
    for r in good:
        assert r["check"] == "ok" and r["error"] is None and r["reps"] == 3 and r["ms"] > 0
        assert r["gelem_per_s"] == pytest.approx(r["size"] / r["ms"] / 1e6)
        assert r["x_copy"] == pytest.approx(r["copy_ms"] / r["ms"])
    copies = _rows(result, pattern="scan", kind="copy", dtype="int32", op="add")
    assert [c["size"] for c in copies] == [1024, 4096, 16384] and all(c["ms"] > 0 for c in copies)
    assert [r["in_l2"] for r in good] == [True, False, False]  # 4 KiB fits the stand-in's 8 KiB "L2"
    # a wrong result is reported, and not tried again
    wrong = _rows(result, pattern="scan", name="wrong")
    assert len(wrong) == 1 and wrong[0]["check"] == "MISMATCH"
    # an exception other than a refusal is an error row; the run carries on
    broken = _rows(result, pattern="scan", name="broken")
    assert len(broken) == 1 and broken[0]["error"] == "RuntimeError: launch failed" and broken[0]["ms"] is None
    # numpy peers ran and were checked
    assert all(r["check"] == "ok" for r in _rows(result, name="numpy.cumsum"))
    assert len(_rows(result, pattern="life", name="numpy (np.roll step)")) == 2
    # life: per generation, checked against the reference over the generations of one call
    life = _rows(result, pattern="life", name="step")
    assert [r["shape"] for r in life] == [[16, 16], [32, 48]] and all(r["check"] == "ok" for r in life)
    # variants at the largest size, only by the fast algorithm (and the CPU peers are not repeated)
    variants = [r for r in result["rows"] if r["pattern"] == "scan" and (r["dtype"], r["op"]) != ("int32", "add")]
    assert {(r["name"], r["dtype"], r["op"]) for r in variants if r["kind"] != "copy"} == {
        ("fast", d, o) for d, o in bench.VARIANTS["scan"]}
    assert all(r["check"] == "ok" for r in variants if r["kind"] != "copy") and {r["size"] for r in variants} == {16384}
    assert "[scan] good int32 add 2^10:" in log and "ERROR RuntimeError" in log


def test_fake_run_skips(fake_run):
    result, _, _ = fake_run
    skipped = {(s["name"], s["size"]): s["reason"] for s in result["skipped"]}
    assert "ValueError: this scan takes at most 5000 elements" in skipped["small_only", 16384]
    assert [r["size"] for r in _rows(result, name="small_only")] == [1024, 4096]
    assert "over the 20 ms cap" in skipped["slow", 16384]
    assert skipped["capped", 4096] == "registry limit of 2000 elements"
    assert "failed at a smaller size" in skipped["broken", 4096]
    assert "wrong result" in skipped["wrong", 16384]


def test_fake_run_outputs(fake_run):
    result, _, tmp_path = fake_run
    table = bench.format_table(result)
    lines = table.splitlines()
    assert lines[0].split() == ["pattern", "algorithm", "/", "peer", "dtype", "op", "size", "ms", "Gelem/s", "x", "copy",
                                "x", "ref", "note"]
    assert any("WRONG RESULT" in line and "wrong" in line for line in lines)
    assert any("ERROR RuntimeError: launch failed" in line for line in lines)
    assert "skipped:" in table and "scan slow int32 add at 2^14:" in table
    assert "targets (issue 6)" in table and "scan int32 add, x copy" in table
    target = next(t for t in result["targets"] if t["target"].startswith("scan int32"))
    best = max(_rows(result, pattern="scan", dtype="int32", op="add", size=16384, kind="pyscan", check="ok"),
               key=lambda r: r["gelem_per_s"])
    assert target["measured"] == best["x_copy"] and target["met"] == (best["x_copy"] >= 0.9)
    path = tmp_path / "bench.json"
    bench.write_json(result, path)
    loaded = json.loads(path.read_text())
    bench.validate_result(loaded)
    assert loaded["rows"] == json.loads(json.dumps(result["rows"]))
    assert loaded["definitions"]["x_copy"]["reduce"].endswith("copy_ms / (2 x ms)")
    assert loaded["device"]["name"] == "NumPy stand-in" and loaded["versions"]["numpy"] == np.__version__


def test_interrupt_keeps_the_rows():
    def interrupted(x, out, *, op, exclusive):
        if x.size > 1024:
            raise KeyboardInterrupt
        return _scan_good(x, out, op=op, exclusive=exclusive)

    args = bench.parse_args(["scan", "--sizes", "1024", "4096", "--reps", "3", "--no-peers"])
    b = bench.Bench(NumpyBackend(), args, registries={"scan": [_alg("good", _scan_good), _alg("stop", interrupted)]},
                    log=None)
    result = b.run()
    bench.validate_result(result)
    assert result["aborted"].startswith("interrupted")
    assert [(r["name"], r["size"]) for r in result["rows"]] == [
        ("copy (memcpy_dtod)", 1024), ("good", 1024), ("stop", 1024), ("copy (memcpy_dtod)", 4096), ("good", 4096)]
    assert "ABORTED: interrupted" in bench.format_table(result)


def test_validate_result_rejects():
    good = {"schema": bench.SCHEMA, "date": "2026-11-22T10:00:00+00:00", "device": {}, "versions": {}, "settings": {},
            "definitions": {}, "references": {}, "rows": [], "skipped": [], "small_calls": None, "aborted": None,
            "targets": []}
    bench.validate_result(good)
    with pytest.raises(ValueError, match="missing keys"):
        bench.validate_result({k: v for k, v in good.items() if k != "device"})
    with pytest.raises(ValueError, match="schema"):
        bench.validate_result(dict(good, schema="other/9"))
    with pytest.raises(ValueError, match="misses"):
        bench.validate_result(dict(good, rows=[{"pattern": "scan"}]))


# ------------------------------------------------------------------------------------------------- the plot


def _fake_result():
    rows = []
    for pattern, dtype, op, sizes in [("scan", "int32", "add", [2**10, 2**20, 2**28]),
                                      ("histogram", "uint8", "uniform", [2**20, 2**28]),
                                      ("life", "int32", "-", [2**20, 2**28])]:
        for size in sizes:
            copy_ms = size * 4 / 3e9 + 0.005
            base = {k: None for k in bench.ROW_KEYS}
            base.update(pattern=pattern, dtype=dtype, op=op, size=size, size_label=bench.size_label(size), fast=False,
                        device="gpu", reference=0, in_l2=False, reps=20, check="-", note="", error=None,
                        copy_ms=copy_ms, bound_gelem_per_s=bench.bound_gelem_per_s(pattern, size, copy_ms))
            base["in_l2"] = size * 4 <= 50 * 2**20
            rows.append(dict(base, name="copy (memcpy_dtod)", kind="copy", ms=copy_ms))
            for name, kind, slow, fast in [("fast", "pyscan", 1.1, True), ("book", "pyscan", 5.0, False),
                                           ("cupy.x", "peer", 2.0, False)]:
                ms = copy_ms * slow
                rows.append(dict(base, name=name, kind=kind, fast=fast, ms=ms, gelem_per_s=bench.gper_s(size, ms),
                                 x_copy=bench.x_copy(pattern, ms, copy_ms)))
    result = {"schema": bench.SCHEMA, "date": "2026-11-22T10:00:00+00:00", "device": {"name": "Fake H100"},
              "versions": {}, "settings": {"reps": 20}, "definitions": bench.DEFINITIONS, "references": {},
              "rows": rows, "skipped": [], "small_calls": None, "aborted": None}
    result["targets"] = bench.targets(result)
    return result


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    result = _fake_result()
    bench.validate_result(result)
    path = tmp_path / "bench.png"
    fig = bench.plot(result, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["scan: int32, add", "histogram: uint8, uniform", "life: int32"]
    for ax, (pattern, sizes) in zip(axes, [("scan", [2**10, 2**20, 2**28]), ("histogram", [2**20, 2**28]),
                                           ("life", [2**20, 2**28])]):
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        lines = {line.get_label(): line for line in ax.get_lines()}
        copy = next(line for label, line in lines.items() if label.startswith("copy"))
        assert copy.get_linestyle() == "--"
        assert list(copy.get_xdata()) == sizes
        fast = lines["fast"]
        expected = [r["gelem_per_s"] for r in result["rows"] if r["pattern"] == pattern and r["name"] == "fast"]
        np.testing.assert_allclose(fast.get_ydata(), expected)
        # the dashed line is where x_copy would be 1: the curve lies under it by the row's x_copy
        ratios = [r["x_copy"] for r in result["rows"] if r["pattern"] == pattern and r["name"] == "fast"]
        np.testing.assert_allclose(np.array(fast.get_ydata()) / ratios, copy.get_ydata())
        assert ratios[0] == pytest.approx(1 / 1.1 if pattern != "histogram" else 1 / 2.2)
        assert set(lines) >= {"fast", "book", "cupy.x"}
    assert "Fake H100" in fig._suptitle.get_text()
    # the sizes whose input fits in L2 are shaded: 2^10 and 2^20 int32 (4 MiB) in the scan panel, not 2^28
    shades = [p for p in axes[0].patches if p.get_label() == "input fits in L2"]
    assert len(shades) == 1 and shades[0].get_x() == 2**10 and shades[0].get_width() == 2**20 - 2**10


def test_targets_from_fake_result():
    result = _fake_result()
    by_name = {t["target"]: t for t in result["targets"]}
    scan = by_name["scan int32 add, x copy"]
    assert scan["measured"] == pytest.approx(1 / 1.1) and scan["met"] is True and scan["algorithm"] == "fast"
    assert scan["size_label"] == "2^28"
    assert not any(name.startswith("reduce") for name in by_name)  # not run: no target line
    histogram = by_name["histogram uniform, x cupy.histogram"]  # run, but without its reference
    assert histogram["measured"] is None and histogram["met"] is None
    assert "histogram uniform, x cupy.histogram: - (fast at 2^28), goal >= 2.0: no data" in bench.format_table(result)


# ------------------------------------------------------------------------------------------------- without a GPU


def test_import_needs_no_gpu_stack():
    code = ("import sys, pyscan.bench; bad = [m for m in ('pycuda', 'cupy', 'matplotlib') if m in sys.modules]; "
            "sys.exit(f'imported {bad}' if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is usable here")
def test_main_without_gpu(capsys):
    assert bench.main(["scan", "--quick"]) == 1
    err = capsys.readouterr().err
    assert gpu_unavailable_reason() in err and err.startswith("python -m pyscan bench:")


# ------------------------------------------------------------------------------------------------- GPU


@pytest.mark.gpu
@pytest.mark.parametrize("pattern", bench.PATTERNS)
def test_gpu_smoke(pattern, tmp_path, capsys):
    import pyscan

    out_json, out_png = tmp_path / "b.json", tmp_path / "b.png"
    rc = bench.main([pattern, "--sizes", "small", "--reps", "3", "--json", str(out_json), "--plot", str(out_png)])
    captured = capsys.readouterr()
    result = json.loads(out_json.read_text())
    bench.validate_result(result)
    assert out_png.read_bytes()[:4] == b"\x89PNG"
    rows = result["rows"]
    errors = [(r["name"], r["dtype"], r["op"], r["size_label"], r["error"]) for r in rows if r["error"]]
    wrong = [(r["name"], r["dtype"], r["op"], r["size_label"]) for r in rows if r["check"] == "MISMATCH"]
    assert not errors and not wrong and rc == 0, (errors, wrong, captured.err[-3000:])
    assert result["device"]["name"] and result["device"]["multiprocessors"] > 0
    sizes = {bench.cells(s) for s in bench.SIZE_PRESETS["small"][pattern]}
    assert {r["size"] for r in rows if r["kind"] == "copy"} >= sizes
    # every registered algorithm ran, unless its registry limit is below every size
    ran = {r["name"] for r in rows if r["ms"]}
    for alg in pyscan.REGISTRIES[pattern]:
        label = bench.algorithm_label(pattern, alg.name)
        reasons = [s["reason"] for s in result["skipped"] if s["name"] == label]
        assert label in ran or (reasons and all(r.startswith("registry limit") for r in reasons)), (label, reasons)
    for r in rows:
        if r["kind"] != "copy":
            assert r["ms"] > 0 and r["x_copy"] > 0 and r["reps"] == 3 and math.isfinite(r["gelem_per_s"])
    if pattern == "scan":
        small = result["small_calls"]
        assert small["pyscan_us"] > 0 and small["pycuda_us"] > 0
    assert "targets (issue 6)" in captured.out
