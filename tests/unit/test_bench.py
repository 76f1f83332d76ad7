"""python -m pyscan bench (pyscan_tools/bench): arguments, batching, the targets, the table, the JSON, the plot,
and whole runs on NumPy stand-ins for the array kinds, pyscan and the peers, timed by a modelled clock (no wall
time: the results cannot depend on the machine's load).  A tiny run of every pattern on the GPU:
tests/gpu/test_bench_gpu.py."""

import dataclasses
import io
import json
import re
import subprocess
import sys
import types

import numpy as np
import pytest

from pyscan import gpu_unavailable_reason
from pyscan.reductions.reference import reference as reduce_reference
from pyscan.scans.reference import reference as scan_reference
from pyscan.segments import reference_reduce as segmented_reduce_reference
from pyscan_tools.bench import cli, measure, report, settings
from pyscan_tools.bench.peers import Peer, peer_name
from pyscan_tools.bench.run import Bench
from pyscan_tools.patterns import PATTERNS, size_label
from pyscan_tools.patterns.axes import SHAPES, make_input, parse_case

# ------------------------------------------------------------------------------------------------- arguments


ALL_PATTERNS = ("scan", "reduce", "axis_scan", "axis_reduce", "segmented_scan", "segmented_reduce", "histogram",
                "numpy_histogram", "bincount", "life")


def test_defaults():
    args = cli.parse_args([])
    assert args.patterns == ALL_PATTERNS
    assert args.algorithms == ("auto",)
    assert args.size_plan["scan"] == [4**k for k in range(5, 15)]  # every power of 4 from 2^10 to 2^28
    assert args.size_plan["reduce"] == args.size_plan["scan"]
    assert args.size_plan["histogram"] == [2**20, 2**22, 2**24, 2**26, 2**28]
    assert args.size_plan["life"][-1] == (16384, 16384) and args.json is None and args.plot is None


@pytest.mark.parametrize("argv, expected", [(["scan"], ("scan",)), (["--pattern", "life", "--pattern", "scan"],
                                             ("scan", "life")), (["reduce,histogram"], ("reduce", "histogram")),
                                            (["all"], ALL_PATTERNS)])
def test_patterns_positional_or_option(argv, expected):
    assert cli.parse_args(argv).patterns == expected


@pytest.mark.parametrize("tokens, pattern, expected", [
    (["2^10,4096"], "scan", [1024, 4096]),
    (["16M", "2**12", "1k"], "reduce", [1024, 4096, 2**24]),
    (["2^20", "100x37"], "life", [(100, 37), (1024, 1024)]),
    (["64x64"], "histogram", [4096]),
    (["small"], "histogram", PATTERNS["histogram"].sizes["small"]),
    (["full"], "scan", [2**k for k in range(10, 29)]),
    (["4096", "2^12"], "scan", [4096]),  # duplicates once
    (["2^20x16", "16x2^20", "64x48"], "axis_scan", [(64, 48), (2**20, 16), (16, 2**20)]),  # as many cells: as given
    (["default"], "axis_reduce", [(64, 65536), (4096, 4096), (2**20, 16), (16, 2**20), (2**23, 2)]),
])
def test_sizes(tokens, pattern, expected):
    assert cli.parse_args([pattern, "--sizes", *tokens]).size_plan[pattern] == expected


@pytest.mark.parametrize("argv", [["--sizes", "abc"], ["life", "--sizes", "1000"], ["--sizes", "0"], ["nosuchpattern"],
                                  ["--sizes", "1x2x3"], ["--algorithm", "bogosort"], ["--arrays", "jax"]])
def test_bad_arguments_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as info:
        cli.parse_args(argv)
    assert info.value.code == 2
    assert "error" in capsys.readouterr().err


def test_size_label():
    assert size_label(2**28) == "2^28" and size_label(1000) == "1000" and size_label((16384, 16384)) == "16384x16384"


# ------------------------------------------------------------------------------------------------- batching


def test_batches_fit_the_budget():
    assert measure.plan_batches(0.01) == (settings.MAX_CALLS, settings.BATCHES)  # 20 us: 200 calls, 5 batches
    calls, batches = measure.plan_batches(0.5)
    assert calls == 4 and batches == settings.BATCHES
    calls, batches = measure.plan_batches(100.0)  # a slow call: one per batch, fewer batches, never under the minimum
    assert calls == 1 and batches == settings.MIN_BATCHES
    assert measure.predicted_ms(None, 10) is None and measure.predicted_ms((2**20, 2.0), 2**22) == 8.0
    assert measure.gper_s(2**28, 0.7334) == pytest.approx(366.0, rel=1e-3)


class _LoggingTimer:
    """A timer whose calls per batch take `ms` each, logging which row timed a batch."""

    def __init__(self, name, ms, log, fail_at=None):
        self.name, self.ms, self.log, self.fail_at = name, ms, log, fail_at
        self.probed = False

    def per_call_ms(self, fn, calls=1):
        fn()
        if self.probed:  # a batch (the first timing is the probe that plans them)
            if len(self.log) == self.fail_at:
                raise RuntimeError("lost")
            self.log.append(self.name)
        self.probed = True
        return self.ms


def test_rows_of_a_size_are_timed_in_rounds():
    log = []
    fast = measure.Timed(lambda: None, _LoggingTimer("fast", 0.01, log))
    slow = measure.Timed(lambda: None, _LoggingTimer("slow", 100.0, log))  # MIN_BATCHES batches
    other = measure.Timed(lambda: None, _LoggingTimer("other", 0.02, log))
    measure.measure_together([fast, slow, other])
    rounds = [["fast", "slow", "other"]] * settings.MIN_BATCHES
    rounds += [["fast", "other"]] * (settings.BATCHES - settings.MIN_BATCHES)
    assert log == [name for r in rounds for name in r]
    assert fast.result() == measure.Measurement(0.01, 0.01, settings.MAX_CALLS, settings.BATCHES)
    assert slow.result().batches == settings.MIN_BATCHES


def test_a_row_failing_in_a_round_is_dropped_and_the_others_go_on():
    log, lost = [], []
    good = measure.Timed(lambda: None, _LoggingTimer("good", 0.01, log))
    bad = measure.Timed(lambda: None, _LoggingTimer("bad", 0.01, log, fail_at=3))
    measure.measure_together([good, bad], lambda row, exc: lost.append((row, str(exc))))
    assert lost == [(bad, "lost")] and log == ["good", "bad", "good"] + ["good"] * (settings.BATCHES - 2)
    with pytest.raises(RuntimeError, match="lost"):
        measure.measure_together([measure.Timed(lambda: None, _LoggingTimer("x", 0.01, [], fail_at=0))])


def test_peer_names_per_op():
    peer = Peer("torch.{sum|amax|amin}", "torch", "torch", None)
    assert [peer_name(peer, op) for op in ("add", "max", "min")] == ["torch.sum", "torch.amax", "torch.amin"]


def test_x_copy_definitions():
    # scan reads and writes each element once, as the copy; reduce only reads: bytes read / (copy's read + written)
    assert PATTERNS["scan"].x_copy(2.0, 1.0) == 0.5 and PATTERNS["reduce"].x_copy(2.0, 1.0) == 0.25
    assert PATTERNS["life"].copy_bytes(np.zeros((4, 8), np.int32)) == 128


# ------------------------------------------------------------------------------------------------- fakes


class Clock:
    """A modelled device: each fake call adds its cost (ms); a timer reads the cost of the calls it ran."""

    def __init__(self):
        self.spent = 0.0

    def cost(self, ms):
        self.spent += ms


class FakeTimer:
    def __init__(self, clock):
        self.clock = clock

    def per_call_ms(self, fn, calls=1):
        start = self.clock.spent
        for _ in range(calls):
            fn()
        return (self.clock.spent - start) / calls


class FakeKind:
    """An array kind with NumPy arrays and the modelled clock."""

    def __init__(self, name, clock):
        self.name, self.clock = name, clock

    def upload(self, host):
        return host.copy()

    def prefix(self, x, n):
        return x[:n]

    def download(self, x):
        return np.asarray(x)

    def copy_call(self, src, nbytes):
        dst = np.empty(nbytes, np.uint8)
        return lambda: (np.copyto(dst, src.view(np.uint8).reshape(-1)[:nbytes]), self.clock.cost(nbytes * 1e-9))

    def timer(self):
        return FakeTimer(self.clock)

    def free(self):
        pass

    def synchronize(self):
        pass


def segmented_scan_reference(x, offsets, dtype):
    """The inclusive sum of every segment (the bench's segmented_scan rows are sums)."""
    c = np.cumsum(x, dtype=dtype or x.dtype)
    starts = np.repeat(offsets[:-1], np.diff(offsets))
    return c - np.where(starts > 0, c[np.maximum(starts - 1, 0)], 0)


AXIS_SCAN_PER_ELEM = {0: 1.0e-9, 1: 0.5e-9}  # ms per element of the fake pyscan.scan(x, axis=a)


def fake_pyscan(clock, *, wrong_reduce_max=False, scan_per_elem=0.5e-9, overhead_ms=0.004, axis_result=None):
    """pyscan's public functions on NumPy, costing overhead + per-element time; LIFE and the registries' names.
    axis_result: the dtype the axis calls give instead of the one asked for (a wrong result)."""
    def scan(x, axis=None, dtype=None, *, algorithm="auto", op="add", offsets=None, check_offsets=True):
        if offsets is not None:  # per segment, by NumPy (the kernels' models: tests/unit/test_segments.py)
            clock.cost(overhead_ms + x.size * scan_per_elem)
            return segmented_scan_reference(x, offsets, dtype)
        if algorithm == "one_block" and x.size > 5000:
            raise ValueError("one_block takes at most 5000 elements")
        if algorithm == "broken":
            raise RuntimeError("launch failed\nsecond line")
        if axis is not None:
            clock.cost(overhead_ms + x.size * AXIS_SCAN_PER_ELEM[axis])
            return np.cumsum(x, axis=axis, dtype=axis_result or dtype)
        clock.cost(overhead_ms + x.size * (2e-2 if algorithm == "slow" else scan_per_elem))
        return scan_reference(x, op, False, dtype)

    def reduce(x, axis=None, dtype=None, *, algorithm="auto", op="add", offsets=None, check_offsets=True):
        clock.cost(overhead_ms + x.size * 0.25e-9)
        if axis is not None:
            return np.sum(x, axis=axis, dtype=axis_result or dtype)
        if offsets is not None:
            return segmented_reduce_reference(x, offsets, op, dtype)
        value = reduce_reference(x, op, dtype)
        return value + 1 if (wrong_reduce_max and op == "max") else value

    def byte_histogram(x, bins, *, algorithm="auto"):
        clock.cost(overhead_ms + x.size * 0.2e-9)
        return np.bincount(x, minlength=bins).astype(np.uint64)

    made = {}  # np.histogram of 2^20 bins takes milliseconds: each input's result is made once

    def histogram(x, bins=10, range=None):  # noqa: A002  NumPy's name
        clock.cost(overhead_ms + x.size * 0.2e-9)
        key = ("histogram", id(x), bins, range)
        if key not in made or made[key][0] is not x:
            made[key] = x, np.histogram(x, bins, range)
        return made[key][1]

    def bincount(x, minlength=0):
        clock.cost(overhead_ms + x.size * 0.2e-9)
        key = ("bincount", id(x), minlength)
        if key not in made or made[key][0] is not x:
            made[key] = x, np.bincount(x, minlength=minlength)
        return made[key][1]

    class Life:
        def __init__(self, lattice, *, kernel="auto"):
            self.cells = lattice.copy()

        def advance(self, n):
            from pyscan.life.reference import reference_step

            clock.cost(overhead_ms + self.cells.size * n * 0.1e-9)
            self.cells = reference_step(self.cells, n)
            return self

        def get(self):
            return self.cells

        @property
        def lattice(self):  # the device lattice of the caller's kind (the fake's "device" is NumPy)
            return self.cells

    names = {"scan": ("good", "one_block", "broken", "slow"), "reduce": ("fast",), "histogram": ("fast",),
             "life": ("fast",)}
    registries = {p: types.SimpleNamespace(names=lambda n=n: n) for p, n in names.items()}
    return types.SimpleNamespace(scan=scan, reduce=reduce, byte_histogram=byte_histogram, histogram=histogram,
                                 bincount=bincount, life=types.SimpleNamespace(Life=Life),
                                 REGISTRIES=registries, __version__="test")


def torch_cumsum_ms(x, axis) -> float:
    """The fake torch.cumsum(t, axis): 300 ms down the columns of an array three or fewer wide (torch's worst shapes
    take up to a second a call), else 6 us + 0.4 ns per element."""
    return 300.0 if axis == 0 and x.shape[1] <= 3 else 0.006 + x.size * 0.4e-9


def fake_peers(clock):
    """torch- and CuPy-like peers on NumPy: torch's scan costs 0.006 ms + 0.4 ns per element, CuPy's more."""
    def scan(fixed, per):
        def make(x, op):
            box = {}

            def call():
                clock.cost(fixed + x.size * per)
                box["r"] = scan_reference(x, op)
            return call, lambda: box["r"]
        return make

    def reduce(fixed):
        def make(x, op):
            box = {}

            def call():
                clock.cost(fixed + x.size * 0.25e-9)
                box["r"] = reduce_reference(x, op)
            return call, lambda: box["r"]
        return make

    def along_axis(function, cost):
        def make(x, op):
            axis, result = parse_case(op)
            box = {}

            def call():
                clock.cost(cost(x, axis))
                box["r"] = function(x, axis=axis, dtype=result)
            return call, lambda: box["r"]
        return make

    table = {"scan": (Peer("torch.cumsum", "torch", "torch", scan(0.006, 0.4e-9)),
                      Peer("cupy.cumsum", "cupy", "cupy", scan(0.010, 1e-9))),
             "reduce": (Peer("torch.{sum|amax|amin}", "torch", "torch", reduce(0.005)),
                        Peer("cupy.{sum|max|min}", "cupy", "cupy", reduce(0.008))),
             "axis_scan": (Peer("torch.cumsum", "torch", "torch", along_axis(np.cumsum, torch_cumsum_ms)),
                           Peer("cupy.cumsum", "cupy", "cupy", along_axis(np.cumsum, lambda x, a: 0.010 + x.size * 1e-9))),
             "axis_reduce": (Peer("torch.sum", "torch", "torch", along_axis(np.sum, lambda x, a: 0.005 + x.size * 0.2e-9)),
                             Peer("cupy.sum", "cupy", "cupy", along_axis(np.sum, lambda x, a: 0.008 + x.size * 0.2e-9)))}
    return lambda pattern, kinds: (table.get(pattern, ()), {"cuda.compute inclusive_scan": "not installed here"})


def run(argv, patterns=None, **fake):
    clock = Clock()
    pyscan = fake_pyscan(clock, **fake)
    args = cli.parse_args(argv, registries=pyscan.REGISTRIES)
    kinds = {"cupy": FakeKind("cupy", clock), "torch": FakeKind("torch", clock)}
    bench = Bench(args, kinds, pyscan=pyscan, peers=fake_peers(clock), log=None, patterns=patterns,
                  device={"name": "NumPy stand-in", "l2_cache_bytes": 8192})
    return bench.run()


def test_one_input_per_dtype_for_the_operators():
    made = []

    def counting(size, dtype, op, rng):
        made.append((dtype, op))
        return PATTERNS["reduce"].make_input(size, dtype, op, rng)
    patterns = dict(PATTERNS, reduce=dataclasses.replace(PATTERNS["reduce"], make_input=counting))
    result = run(["reduce", "--sizes", "1024", "4096", "--dtype", "int32", "--dtype", "float64"], patterns=patterns)
    assert made == [("int32", "add"), ("float64", "add")]  # max and min reuse the add case's input
    assert {(r["dtype"], r["op"]) for r in result["rows"]} == {(d, o) for d in ("int32", "float64")
                                                               for o in ("add", "max", "min")}
    assert all(r["check"] == "ok" for r in result["rows"] if r["kind"] != "copy")


def rows(result, **match):
    return [r for r in result["rows"] if all(r[k] == v for k, v in match.items())]


@pytest.fixture(scope="module")
def scan_run():
    return run(["scan", "--sizes", "1024", "4096", "16384", "--dtype", "int32",
                "--algorithm", "auto,good,one_block,broken,slow"])


def test_fake_run_rows(scan_run):
    report.validate_result(scan_run)
    auto = rows(scan_run, name="pyscan.scan (torch)")
    assert [r["size"] for r in auto] == [1024, 4096, 16384]
    for r in auto:
        assert r["check"] == "ok" and r["error"] is None and r["batches"] == settings.BATCHES
        assert r["ms"] == pytest.approx(0.004 + r["size"] * 0.5e-9)  # the modelled clock, exactly
        assert r["x_copy"] == pytest.approx(r["copy_ms"] / r["ms"]) and r["arrays"] == "torch"
    assert [r["in_l2"] for r in auto] == [True, False, False]  # 4 KiB fits the stand-in's 8 KiB "L2"
    copies = rows(scan_run, kind="copy")
    assert [c["size"] for c in copies] == [1024, 4096, 16384] and all(c["name"] == "device copy (cupy)" for c in copies)
    assert {r["name"] for r in scan_run["rows"] if r["kind"] == "pyscan"} >= {
        "pyscan.scan (cupy)", "pyscan.scan (torch)", "pyscan.scan[good] (cupy)"}
    assert all(r["check"] == "ok" for r in rows(scan_run, name="torch.cumsum"))
    broken = rows(scan_run, name="pyscan.scan[broken] (cupy)")
    assert len(broken) == 1 and broken[0]["error"] == "RuntimeError: launch failed" and broken[0]["ms"] is None


def test_fake_run_skips(scan_run):
    skipped = {(s["name"], s["size"]): s["reason"] for s in scan_run["skipped"]}
    assert "ValueError: one_block takes at most 5000 elements" in skipped["pyscan.scan[one_block] (cupy)", 16384]
    assert "over the 250 ms cap" in skipped["pyscan.scan[slow] (torch)", 16384]
    assert "failed at a smaller size" in skipped["pyscan.scan[broken] (torch)", 4096]
    assert scan_run["left_out"] == {"cuda.compute inclusive_scan": "not installed here"}


def test_targets_take_the_worst_size(scan_run):
    target = next(t for t in scan_run["targets"] if t["target"].startswith("scan:"))
    # pyscan: 4 us + 0.5 ns/elem; torch: 6 us + 0.4 ns/elem, the faster peer everywhere: the worst ratio is at
    # the largest size, where the per-element term counts most
    n = 16384
    assert target["measured"] == pytest.approx((0.006 + n * 0.4e-9) / (0.004 + n * 0.5e-9))
    assert target["met"] is True and "2^14" in target["where"] and "torch.cumsum" in target["where"]
    assert target["cases"] == target["cases_met"] == 6  # 3 sizes x 2 array kinds, every one at or above 1
    stretch = next(t for t in scan_run["targets"] if t["target"].startswith("stretch"))
    assert stretch["at_most"] and stretch["measured"] == pytest.approx((0.004 + 1024 * 0.5e-9) / (1024 * 4 * 1e-9))
    assert not any(t["target"].startswith("reduce") for t in scan_run["targets"])  # not run: no target line


def test_targets_fail_where_a_small_size_loses():
    result = run(["scan", "--sizes", "1024", "2^20", "--dtype", "int64", "--no-check"])
    target = next(t for t in result["targets"] if t["target"].startswith("scan:"))
    assert target["met"] is True  # 4 us overhead beats torch's 6 us at every size here
    slow = run(["scan", "--sizes", "1024", "2^20", "--dtype", "int64", "--no-check"], overhead_ms=0.012)
    target = next(t for t in slow["targets"] if t["target"].startswith("scan:"))
    assert target["met"] is False and "2^10" in target["where"]  # worst where the overhead counts most
    assert (target["cases_met"], target["cases"]) == (0, 4)
    for row in slow["rows"]:  # pyscan ten times faster at 2^20: those two cases meet the goal, 2^10's do not
        if row["kind"] == "pyscan" and row["size"] == 2**20:
            row["ms"] /= 10
    slow["targets"] = report.targets(slow)
    target = next(t for t in slow["targets"] if t["target"].startswith("scan:"))
    assert target["met"] is False and (target["cases_met"], target["cases"]) == (2, 4)
    line = next(line for line in report.format_table(slow).splitlines() if line.strip().startswith("scan:"))
    assert line.endswith("NOT met (2 of 4 cases)")


def test_a_miss_is_not_printed_as_the_goal():
    assert report._ratio_text(0.998, 1.0, False) == "0.998" and report._ratio_text(0.998, 1.0, None) == "1.00"
    assert report._ratio_text(1.004, 1.0, True) == "1.00" and report._ratio_text(0.95, 1.0, False) == "0.95"
    assert report._ratio_text(None, 1.0, None) == "-"


def test_wrong_results_are_flagged():
    result = run(["reduce", "--sizes", "1024", "4096", "--dtype", "float32"], wrong_reduce_max=True)
    wrong = [r for r in result["rows"] if r["check"] == "MISMATCH"]
    assert wrong and {r["op"] for r in wrong} == {"max"} and all(r["kind"] == "pyscan" for r in wrong)
    assert {r["size"] for r in wrong} == {1024}  # not tried again at a larger size
    table = report.format_table(result)
    assert "WRONG RESULT" in table and "!" in table
    names = {r["name"] for r in rows(result, op="max")}
    assert {"torch.amax", "cupy.max"} <= names


def test_table_json_and_no_tracker_history(scan_run, tmp_path):
    table = report.format_table(scan_run)
    assert "targets:" in table and "issue" not in table.lower()
    assert "scan int32 add" in table and "skipped:" in table and "ERROR" in table
    path = tmp_path / "bench.json"
    report.write_json(scan_run, path)
    loaded = json.loads(path.read_text())
    report.validate_result(loaded)
    assert loaded["rows"] == json.loads(json.dumps(scan_run["rows"]))
    assert loaded["device"]["name"] == "NumPy stand-in"


def test_every_pattern_runs_on_fakes():
    result = run(["all", "--sizes", "small", "--no-peers"])
    report.validate_result(result)
    for pattern in ALL_PATTERNS:
        found = rows(result, pattern=pattern, kind="pyscan")
        assert found and all(r["check"] == "ok" for r in found), pattern
    life = rows(result, pattern="life", kind="pyscan")
    assert {tuple(r["shape"]) for r in life} == {(32, 32), (100, 37)}


def test_validate_result_rejects():
    good = {k: None for k in report.RESULT_KEYS}
    good.update(schema=settings.SCHEMA, date="2026-11-22T10:00:00+00:00", rows=[], skipped=[], targets=[])
    report.validate_result(good)
    with pytest.raises(ValueError, match="missing keys"):
        report.validate_result({k: v for k, v in good.items() if k != "device"})
    with pytest.raises(ValueError, match="schema"):
        report.validate_result(dict(good, schema="other/9"))
    with pytest.raises(ValueError, match="misses"):
        report.validate_result(dict(good, rows=[{"pattern": "scan"}]))


def test_plot(scan_run, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "bench.png"
    fig = report.plot(scan_run, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (ax,) = fig.get_axes()
    assert ax.get_title() == "scan: int32, add" and ax.get_xscale() == "log"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert lines["copy"].get_linestyle() == "--" and list(lines["copy"].get_xdata()) == [1024, 4096, 16384]
    assert "pyscan.scan (torch)" in lines and "torch.cumsum" in lines


# ------------------------------------------------------------------------------------------------- along an axis


def test_a_call_over_the_cap_is_timed_once():
    log = []
    slow = measure.Timed(lambda: None, _LoggingTimer("slow", settings.CALL_CAP_MS + 50, log))
    fast = measure.Timed(lambda: None, _LoggingTimer("fast", 0.01, log))
    measure.measure_together([slow, fast])
    assert slow.timed_once and not fast.timed_once and log == ["fast"] * settings.BATCHES
    assert slow.result() == measure.Measurement(settings.CALL_CAP_MS + 50, settings.CALL_CAP_MS + 50, 1, 1)


def test_axis_presets():
    assert cli.parse_args(["axis_scan"]).size_plan["axis_scan"] == [(64, 65536), *(s for s in SHAPES if s != (64, 65536))]
    assert cli.parse_args(["axis_scan", "--quick"]).size_plan["axis_scan"] == [(4096, 4096), (2**23, 2), (16, 2**20)]
    assert [op for dtype, op in PATTERNS["axis_scan"].bench_cases if dtype in ("bool", "int32")] == [
        "axis=0 dtype=int32", "axis=1 dtype=int32", "axis=0 dtype=int64", "axis=1 dtype=int64"]
    assert {dtype for dtype, _ in PATTERNS["axis_reduce"].bench_cases} == {"int32", "float32", "float16"}
    assert parse_case("axis=1 dtype=int64") == (1, np.dtype(np.int64))


@pytest.mark.parametrize("shape", [(1000, 3), (70, 14), (14, 700), (4096, 7), (3, 5)])
def test_axis_data_keep_float16_sums_exact(shape):
    """(r + c) % 7 - 3: every run along either axis sums to an integer in [-6, 6], whatever the width (7 and its
    multiples included), so NumPy's float16 results, rounded at every step, are the exact sums."""
    x = make_input(shape, "float16", "", None)
    for axis in (0, 1):
        exact = np.cumsum(x.astype(np.int64), axis=axis)
        assert np.abs(exact).max() <= 6
        assert np.array_equal(np.cumsum(x, axis=axis, dtype=np.float16), exact)
        assert np.array_equal(np.sum(x, axis=axis, dtype=np.float16), exact.take(-1, axis=axis))
    assert make_input(shape, "bool", "", None).dtype == np.bool_ and make_input(shape, "uint8", "", None).min() == 0


AXIS_SIZES = ["--sizes", "1000x3", "64x48"]


@pytest.fixture(scope="module")
def axis_scan_run():
    return run(["axis_scan", *AXIS_SIZES, "--dtype", "int32", "--dtype", "float32", "--dtype", "float16",
                "--dtype", "bool"], overhead_ms=0.0)


def test_axis_scan_rows_and_baselines(axis_scan_run):
    report.validate_result(axis_scan_run)
    ours = rows(axis_scan_run, kind="pyscan")
    assert {r["name"] for r in ours} == {"pyscan.scan(axis=) (cupy)", "pyscan.scan(axis=) (torch)"}
    assert len(ours) == 4 * 2 * 2 * 2  # dtypes x axes x shapes x array kinds
    assert all(r["check"] == "ok" for r in axis_scan_run["rows"] if r["kind"] != "copy")
    assert {r["name"] for r in axis_scan_run["rows"] if r["kind"] == "peer"} == {"torch.cumsum", "cupy.cumsum"}
    for r in ours:
        itemsize, written = {"int32": (4, 4), "float32": (4, 4), "float16": (2, 2), "bool": (1, 8)}[r["dtype"]]
        copy_ms = r["size"] * (itemsize + written) / 2 * 1e-9  # the fake copy: 1e-9 ms a byte
        assert r["copy_ms"] == pytest.approx(copy_ms) and tuple(r["shape"]) in ((1000, 3), (64, 48))
        assert r["ms"] == pytest.approx(r["size"] * AXIS_SCAN_PER_ELEM[parse_case(r["op"])[0]])
        assert r["x_copy"] == pytest.approx(copy_ms / r["ms"])
    copies = rows(axis_scan_run, kind="copy")
    assert all(("bytes written" in c["note"]) == (c["dtype"] == "bool") for c in copies)


def test_axis_scan_slow_peer_is_timed_once_and_nothing_carries_over(axis_scan_run):
    slow = rows(axis_scan_run, name="torch.cumsum", size_label="1000x3")
    slow = [r for r in slow if r["op"].startswith("axis=0")]
    assert slow and all(r["ms"] == 300.0 and (r["calls"], r["batches"]) == (1, 1) for r in slow)
    assert all("one call timed (over the 250 ms cap)" == r["note"] for r in slow)
    # 300 ms at 3000 cells would predict 307 ms at 3072 for a growing size; a shape of its own is measured
    after = [r for r in rows(axis_scan_run, name="torch.cumsum", size_label="64x48") if r["op"].startswith("axis=0")]
    assert after and all(r["batches"] == settings.BATCHES for r in after)
    assert axis_scan_run["skipped"] == []


def test_axis_scan_targets(axis_scan_run):
    found = {t["target"].split(":")[0]: t for t in axis_scan_run["targets"]}
    like = found["axis_scan int32, float32, float16"]
    # pyscan: 1 ns an element along axis 0; float16's baseline is 2 bytes an element at 1 ns a byte
    assert like["at_most"] and like["goal"] == 1.3 and like["measured"] == pytest.approx(0.5)
    assert like["where"].startswith("float16 axis=0 dtype=float16") and (like["cases"], like["cases_met"]) == (24, 24)
    widened = found["axis_scan bool, uint8 into int64"]
    assert widened["goal"] == 1.2 and widened["measured"] == pytest.approx(1 / 4.5)  # (1 + 8) / 2 bytes an element
    assert (widened["cases"], widened["cases_met"]) == (8, 8) and widened["met"] is True
    peers = found["axis_scan"]
    n = 64 * 48  # worst along axis 0 of 64x48, where torch is fast; at 1000x3 it takes 300 ms and CuPy is faster
    assert peers["measured"] == pytest.approx((0.006 + n * 0.4e-9) / (n * 1e-9)) and "64x48" in peers["where"]
    assert "torch.cumsum" in peers["where"] and peers["cases"] == 32 and not peers["at_most"]
    half = found["axis_scan float16"]
    assert half["measured"] == pytest.approx(2.0) and half["met"] is False and (half["cases"], half["cases_met"]) == (8, 0)
    assert not any(t["target"].startswith(("axis_reduce", "scan:", "reduce")) for t in axis_scan_run["targets"])


def test_axis_targets_count_the_cases_at_most_the_goal(axis_scan_run):
    result = json.loads(json.dumps(axis_scan_run))
    for r in result["rows"]:  # float16 as fast for its bytes as float32 at 64x48: those four cases meet the goal
        if r["kind"] == "pyscan" and r["dtype"] == "float16" and r["size_label"] == "64x48":
            r["ms"] /= 2
            r["x_copy"] *= 2
    result["targets"] = report.targets(result)
    half = next(t for t in result["targets"] if t["target"].startswith("axis_scan float16"))
    assert half["measured"] == pytest.approx(2.0) and "1000x3" in half["where"]
    assert (half["cases"], half["cases_met"]) == (8, 4) and half["met"] is False
    line = next(line for line in report.format_table(result).splitlines() if "axis_scan float16:" in line)
    assert line.endswith("goal <= 1.0: NOT met (4 of 8 cases)")


def test_axis_table_gives_time_over_baseline_and_peer_over_pyscan(axis_scan_run, scan_run):
    lines = report.format_table(axis_scan_run).splitlines()
    at = lines.index("axis_scan int32 axis=0 dtype=int32")
    header, first = re.split(r"\s{2,}", lines[at + 1].strip()), lines[at + 2].split()
    assert header == ["size", "device copy (cupy)", "pyscan.scan(axis=) (cupy)", "pyscan.scan(axis=) (torch)",
                      "torch.cumsum", "cupy.cumsum", "x base", "peer/py"]
    n = 1000 * 3
    assert first[0] == "1000x3" and first[-2] == "0.25"  # 1 ns an element / 4 bytes at 1 ns a byte
    assert first[-1] == f"{(0.010 + n * 1e-9) / (n * 1e-9):.2f}"  # CuPy, as torch takes 300 ms here
    scan_header = report.format_table(scan_run).splitlines()
    assert any(line.rstrip().endswith("x copy") for line in scan_header)


def test_axis_reduce_targets():
    result = run(["axis_reduce", *AXIS_SIZES], overhead_ms=0.0)
    report.validate_result(result)
    assert all(r["check"] == "ok" for r in result["rows"] if r["kind"] != "copy")
    found = {t["target"].split(":")[0]: t for t in result["targets"]}
    # pyscan: 0.25 ns an element; reading float16 once: half a copy of 2 bytes at 1 ns a byte
    once = next(t for t in result["targets"] if t["target"].startswith("axis_reduce: pyscan.reduce(axis=)"))
    assert once["measured"] == pytest.approx(0.25) and once["where"].startswith("float16")
    assert (once["cases"], once["cases_met"], once["goal"]) == (24, 24, 1.3)
    # with the result's bytes: float16 read once and float16 results written, 1 + 1 / n times reading once along an
    # axis of n; the worst case is the longest axis (1000 x 3 along axis 0), rows of 3 along axis 1 gain most
    moved = found["axis_reduce bytes moved"]
    assert moved["measured"] == pytest.approx(0.25 / (1 + 1 / 1000)) and moved["cases"] == 24
    assert moved["where"].startswith("float16 axis=0") and "1000x3" in moved["where"]
    each = dict((where, ratio) for ratio, where in report._over_bytes_moved(result["rows"], "axis_reduce"))
    assert each["float16 axis=1 dtype=float16 1000x3 on cupy"] == pytest.approx(0.25 / (1 + 1 / 3))
    peers = next(t for t in result["targets"] if t["target"].startswith("axis_reduce: fastest"))
    n = 64 * 48
    assert peers["measured"] == pytest.approx((0.005 + n * 0.2e-9) / (n * 0.25e-9)) and "torch.sum" in peers["where"]
    assert found["axis_reduce float16"]["measured"] == pytest.approx(2.0)


def test_axis_results_of_another_dtype_are_wrong():
    result = run(["axis_scan", "--sizes", "64x48", "--dtype", "bool"], overhead_ms=0.0, axis_result=np.int32)
    wrong = [r for r in result["rows"] if r["check"] == "MISMATCH"]
    assert wrong and all(r["kind"] == "pyscan" for r in wrong) and len(wrong) == 4  # 2 axes x 2 array kinds


def test_axis_failure_at_one_shape_does_not_skip_the_next():
    result = run(["axis_scan", *AXIS_SIZES, "--dtype", "int32", "--algorithm", "auto,broken", "--no-peers"])
    broken = [r for r in result["rows"] if r["name"] == "pyscan.scan(axis=)[broken] (cupy)"]
    assert len(broken) == 4 and all(r["error"] == "RuntimeError: launch failed" for r in broken)
    assert result["skipped"] == []


def test_axis_plot_is_against_the_shapes(axis_scan_run):
    pytest.importorskip("matplotlib")
    fig = report.plot(axis_scan_run)
    ax = fig.get_axes()[0]
    assert ax.get_title() == "axis_scan: int32, axis=0 dtype=int32" and ax.get_xscale() == "linear"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1000x3", "64x48"]


# ------------------------------------------------------------------------------------------------- without a GPU


def test_import_needs_no_gpu_stack():
    code = ("import sys, pyscan_tools.bench.cli, pyscan_tools.bench.run, pyscan_tools.check.cli; "
            "bad = [m for m in ('pycuda', 'cupy', 'torch', 'matplotlib') if m in sys.modules]; "
            "sys.exit(f'imported {bad}' if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is usable here")
def test_main_without_gpu_exits_3(capsys):
    assert cli.main(["scan", "--quick"]) == 3
    err = capsys.readouterr().err
    assert gpu_unavailable_reason() in err and err.startswith("python -m pyscan bench:")


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is usable here")
def test_python_m_pyscan_dispatches():
    done = subprocess.run([sys.executable, "-m", "pyscan", "bench", "life", "--quick"], capture_output=True, text=True)
    assert done.returncode == 3 and "python -m pyscan bench:" in done.stderr
    done = subprocess.run([sys.executable, "-m", "pyscan", "check", "--list", "--pattern", "life", "--algorithm",
                           "fast"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip().endswith("life/fast 20")


def test_pyscan_rows_keep_the_input_dtype():
    """As the peers' rows (dtype=x.dtype), pyscan's keep the input's dtype: int32 add passes dtype=int32 (NumPy's
    rule would give int64); where the result is x's dtype anyway the call is the default one (the ready() path)."""
    from pyscan_tools.patterns._arrays import calling

    seen = []
    fake = types.SimpleNamespace(scan=lambda x, **kw: seen.append(kw), reduce=lambda x, **kw: seen.append(kw))
    for function, dtype, op, passed in (("scan", np.int32, "add", np.int32), ("reduce", np.int32, "add", np.int32),
                                        ("scan", np.float32, "add", None), ("reduce", np.int32, "max", None),
                                        ("scan", np.int64, "add", None)):
        call, _ = calling(function)(fake, np.ones(4, dtype), op, "auto")
        call()
        assert seen[-1].get("dtype") == passed, (function, dtype, op)


def test_the_progress_log_is_the_stderr_of_the_run(monkeypatch):
    """Bench's default log is sys.stderr as it is when the bench runs (pytest's capture replaces and closes it from
    test to test; a stream bound when run.py was imported raised 'I/O operation on closed file')."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    Bench(None, {}).say("hello")
    assert "hello" in stream.getvalue()
