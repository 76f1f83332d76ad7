"""What the bench writes: the targets (read off the rows), the table, the JSON, the plot."""

from __future__ import annotations

import datetime
import json
import math

from ..patterns import BENCH_PATTERNS
from . import settings

ROW_KEYS = ("pattern", "name", "kind", "library", "arrays", "algorithm", "reference", "dtype", "op", "size",
            "size_label", "shape", "in_l2", "ms", "ms_min", "calls", "batches", "gelem_per_s", "copy_ms", "x_copy",
            "driver_ms", "check", "note", "error")
RESULT_KEYS = ("schema", "date", "device", "versions", "settings", "definitions", "rows", "skipped", "left_out",
               "aborted", "targets")


# ---- targets ------------------------------------------------------------------------------------------------------

def _good(row) -> bool:
    return bool(row.get("ms")) and not row.get("error") and row.get("check") != "MISMATCH"


def _cases(rows, pattern, ops=None, dtypes=None):
    """{(dtype, op, (size, size label)): [rows]} of a pattern's timed rows: shapes of as many elements are cases of
    their own (the axis patterns), and sizes order by their counts."""
    out = {}
    for r in rows:
        if r["pattern"] == pattern and _good(r) and (ops is None or r["op"] in ops) \
                and (dtypes is None or r["dtype"] in dtypes):
            out.setdefault((r["dtype"], r["op"], (r["size"], r["size_label"])), []).append(r)
    return out


def _where(dtype, op, row) -> str:
    return f"{dtype} {op} {row['size_label']} on {row['arrays']}"


def _ratios_against(rows, pattern, ops, libraries, *, dtypes=None, largest_only=False) -> list:
    """(fastest-peer time / pyscan time, where) of every pyscan public-call row against the fastest of the peers of
    `libraries` at its dtype, op and size: >= 1 means pyscan's call is at least as fast there."""
    cases = _cases(rows, pattern, ops, dtypes)
    if largest_only and cases:
        top = max(size for _, _, size in cases)
        cases = {k: v for k, v in cases.items() if k[2] == top}
    found = []
    for (dtype, op, _), at in cases.items():
        peers = [r for r in at if r["kind"] == "peer" and r["library"] in libraries]
        ours = [r for r in at if r["kind"] == "pyscan" and r.get("algorithm") == "auto"]
        if not peers or not ours:
            continue
        best_peer = min(peers, key=lambda r: r["ms"])
        found += [(best_peer["ms"] / row["ms"], f"{_where(dtype, op, row)} vs {best_peer['name']}") for row in ours]
    return found


def _worst_against(rows, pattern, ops, libraries, *, dtypes=None, largest_only=False):
    """The worst (smallest) ratio of _ratios_against over every dtype, op, size and array kind, with where."""
    return min(_ratios_against(rows, pattern, ops, libraries, dtypes=dtypes, largest_only=largest_only),
               key=lambda found: found[0], default=None)


def _worst_call_over_copy(rows, patterns):
    """The largest ratio pyscan time / copy time at the smallest size of each pattern (the stretch target)."""
    worst = None
    for pattern in patterns:
        cases = _cases(rows, pattern)
        if not cases:
            continue
        smallest = min(size for _, _, size in cases)
        for (dtype, op, size), found in cases.items():
            if size != smallest:
                continue
            for row in found:
                if row["kind"] == "pyscan" and row.get("algorithm") == "auto" and row["copy_ms"]:
                    ratio = row["ms"] / row["copy_ms"]
                    if worst is None or ratio > worst[0]:
                        worst = (ratio, f"{pattern} {_where(dtype, op, row)}")
    return worst


def _best_at_largest(rows, pattern, dtype, op, field):
    """The best pyscan row's `field` at the largest size of a case (kernel-bound targets)."""
    cases = _cases(rows, pattern, (op,), (dtype,))
    if not cases:
        return None
    top = max(size for _, _, size in cases)
    ours = [r for r in cases.get((dtype, op, top), []) if r["kind"] == "pyscan" and r.get(field) is not None]
    if not ours:
        return None
    best = max(ours, key=lambda r: r[field])
    return best[field], _where(dtype, op, best)


def _reference_ratio(rows, pattern, op):
    """reference time / best pyscan time at the largest size of a case (histogram: cupy.histogram; life: the
    book's kernel)."""
    cases = _cases(rows, pattern, (op,))
    if not cases:
        return None
    top = max(size for _, _, size in cases)
    found = [r for k, v in cases.items() if k[2] == top for r in v]
    refs = [r for r in found if r["reference"]]
    ours = [r for r in found if r["kind"] == "pyscan"]
    if not refs or not ours:
        return None
    best = min(ours, key=lambda r: r["ms"])
    return refs[0]["ms"] / best["ms"], f"{best['dtype']} {op} {best['size_label']} on {best['arrays']}"


def _worst_x_copy(rows, pattern, ops, *, min_size=0):
    """The worst (smallest) x_copy of pyscan's public-call rows of `ops` at sizes >= min_size, with where: every
    case and array kind must reach the goal."""
    found = [(r["x_copy"], _where(r["dtype"], r["op"], r)) for at in _cases(rows, pattern, ops).values() for r in at
             if r["kind"] == "pyscan" and r.get("x_copy") and r["size"] >= min_size]
    return min(found, key=lambda f: f[0], default=None)


def _auto_with_baseline(r) -> bool:
    """A pyscan public-call row (algorithm auto) that has a ratio to its baseline (x_copy)."""
    return r["kind"] == "pyscan" and r.get("algorithm") == "auto" and bool(r.get("x_copy"))


def _over_baseline(rows, pattern, dtypes=None) -> list:
    """(time / baseline, where) of every pyscan public-call row: 1 / x_copy (the baseline is the copy's time for a
    scan, half of it for a reduction: x_copy's definitions)."""
    return [(1 / r["x_copy"], _where(dtype, op, r)) for (dtype, op, _), at in _cases(rows, pattern, None, dtypes).items()
            for r in at if _auto_with_baseline(r)]


def _over_bytes_moved(rows, pattern) -> list:
    """(time / the copy's time for the bytes a reduction along an axis must move, where) of every pyscan public-call
    row: reading x once (x_copy's baseline, half a copy) and writing the result, 1 + result bytes / x bytes of it.
    Reading once leaves the result out: rows of 2 along axis 1 write half as many bytes as they read."""
    import numpy as np

    from ..patterns.axes import parse_case

    found = []
    for (dtype, op, _), at in _cases(rows, pattern).items():
        axis, result = parse_case(op)
        for r in at:
            if _auto_with_baseline(r) and r.get("shape"):
                written = result.itemsize / (np.dtype(dtype).itemsize * r["shape"][axis])
                found.append((1 / r["x_copy"] / (1 + written), _where(dtype, op, r)))
    return found


def _float16_against_float32(rows, pattern) -> list:
    """((float16 time / its baseline) / (float32 time / its baseline), where) of every pyscan public-call row of
    float16 that has a float32 row of the same axis, shape and array kind: <= 1 where float16 reaches at least the
    fraction of its baseline that float32 reaches."""
    from ..patterns.axes import parse_case

    def at(r):
        return parse_case(r["op"])[0], r["size_label"], r["arrays"]
    ours = [r for r in rows if r["pattern"] == pattern and _good(r) and _auto_with_baseline(r)]
    float32 = {at(r): r for r in ours if r["dtype"] == "float32"}
    found = []
    for r in ours:
        if r["dtype"] == "float16" and at(r) in float32:
            other = float32[at(r)]
            found.append((other["x_copy"] / r["x_copy"], f"{_where(r['dtype'], r['op'], r)}: {1 / r['x_copy']:.2f} x "
                                                         f"its baseline, float32 {1 / other['x_copy']:.2f}"))
    return found


def targets(result: dict) -> list:
    """The goals, measured.  Public-call targets take the worst ratio over every size (not only the largest),
    every dtype and every array kind; kernel-bound ones the best row at the largest size."""
    rows = result["rows"]
    ran = {r["pattern"] for r in rows}
    out = []

    def add(what, pattern, goal, found, *, at_most=False, every=None):
        """every: the ratios of every case, for a worst-case target: how many meet the goal is reported too."""
        if pattern not in ran:
            return
        value, where = found if found else (None, None)
        met = None if value is None else (value <= goal if at_most else value >= goal)
        cases = None if every is None else len(every)
        cases_met = None if every is None else sum(1 for ratio, _ in every if (ratio <= goal if at_most else
                                                                                ratio >= goal))
        out.append({"target": what, "goal": goal, "at_most": at_most, "measured": value, "where": where, "met": met,
                    "cases": cases, "cases_met": cases_met})

    def worst_of(what, pattern, goal, every, *, at_most=False):
        worst = (max if at_most else min)(every, key=lambda found: found[0], default=None)
        add(what, pattern, goal, worst, at_most=at_most, every=every)

    def worst_case(what, pattern, op, peers):
        worst_of(what, pattern, 1.0, _ratios_against(rows, pattern, None if op is None else (op,), peers))

    both = ("torch", "cupy")
    worst_case("scan: fastest of torch.cumsum, cupy.cumsum / pyscan.scan, worst size", "scan", "add", both)
    worst_case("reduce add: fastest of torch.sum, cupy.sum / pyscan.reduce, worst size", "reduce", "add", both)
    worst_case("reduce max: fastest of torch.amax, cupy.max / pyscan.reduce, worst size", "reduce", "max", both)
    worst_case("reduce min: fastest of torch.amin, cupy.min / pyscan.reduce, worst size", "reduce", "min", both)
    add("reduce float32 add at the largest size: cupy.sum / pyscan.reduce", "reduce", 1.0,
        _worst_against(rows, "reduce", ("add",), ("cupy",), dtypes=("float32",), largest_only=True))
    like_for_like = ("int32", "float32", "float16")
    worst_of("axis_scan int32, float32, float16: pyscan.scan(axis=) / baseline (copies of the bytes in and out, "
             "averaged), worst case", "axis_scan", 1.3, _over_baseline(rows, "axis_scan", like_for_like), at_most=True)
    worst_of("axis_scan bool, uint8 into int64: pyscan.scan(axis=) / baseline, worst case", "axis_scan", 1.2,
             _over_baseline(rows, "axis_scan", ("bool", "uint8")), at_most=True)
    worst_case("axis_scan: fastest of torch.cumsum, cupy.cumsum / pyscan.scan(axis=), worst case", "axis_scan", None,
               both)
    worst_of("axis_scan float16: its time / baseline over float32's, worst case", "axis_scan", 1.0,
             _float16_against_float32(rows, "axis_scan"), at_most=True)
    worst_of("axis_reduce: pyscan.reduce(axis=) / reading the input once (copy / 2), worst case", "axis_reduce", 1.3,
             _over_baseline(rows, "axis_reduce"), at_most=True)
    worst_of("axis_reduce bytes moved: pyscan.reduce(axis=) / moving x once and the result at copy speed, worst case",
             "axis_reduce", 1.3, _over_bytes_moved(rows, "axis_reduce"), at_most=True)
    worst_case("axis_reduce: fastest of torch.sum, cupy.sum / pyscan.reduce(axis=), worst case", "axis_reduce", None,
               both)
    worst_of("axis_reduce float16: its time / baseline over float32's, worst case", "axis_reduce", 1.0,
             _float16_against_float32(rows, "axis_reduce"), at_most=True)
    add("stretch: pyscan call / device copy per call at the smallest size, worst", "scan", 2.0,
        _worst_call_over_copy(rows, ("scan", "reduce")), at_most=True)
    add("scan int32 at the largest size, x copy", "scan", 0.90, _best_at_largest(rows, "scan", "int32", "add", "x_copy"))
    add("reduce int32 add at the largest size, x copy", "reduce", 0.90,
        _best_at_largest(rows, "reduce", "int32", "add", "x_copy"))
    add("reduce float32 add at the largest size, x copy", "reduce", 0.90,
        _best_at_largest(rows, "reduce", "float32", "add", "x_copy"))
    add("histogram uniform at the largest size, x cupy.histogram", "histogram", 2.0,
        _reference_ratio(rows, "histogram", "uniform"))
    add("histogram all-equal at the largest size, x cupy.histogram", "histogram", 3.0,
        _reference_ratio(rows, "histogram", "all-equal"))
    add("life at the largest size, x the book's conway_ker", "life", 10.0, _reference_ratio(rows, "life", "-"))
    few_bins = sorted({r["op"] for r in rows if r["pattern"] == "numpy_histogram"
                       and int(r["op"].split()[0]) <= 4096})
    add("histogram up to 4096 bins: x reading the input once (copy / 2), worst case, every size", "numpy_histogram",
        1 / 1.3, _worst_x_copy(rows, "numpy_histogram", few_bins))
    add("histogram up to 4096 bins: x reading the input once, worst case, 2^24 and up", "numpy_histogram", 1 / 1.3,
        _worst_x_copy(rows, "numpy_histogram", few_bins, min_size=2**24))
    worst_of("segmented_scan: pyscan.scan(offsets=) / the copy, worst case", "segmented_scan", 1.3,
             _over_baseline(rows, "segmented_scan"), at_most=True)
    worst_of("segmented_reduce: pyscan.reduce(offsets=) / reading the input once (copy / 2), worst case",
             "segmented_reduce", 1.3, _over_baseline(rows, "segmented_reduce"), at_most=True)
    worst_case("segmented_reduce: fastest of torch.segment_reduce, cuda.compute segmented_reduce / "
               "pyscan.reduce(offsets=), worst case", "segmented_reduce", None, ("torch", "cuda.compute"))
    for pattern, what in (("numpy_histogram", "fastest of torch.histc, cupy.histogram, cuda.compute histogram_even "
                                              "/ pyscan.histogram"),
                          ("bincount", "fastest of torch.bincount, cupy.bincount / pyscan.bincount")):
        every = _ratios_against(rows, pattern, None, ("torch", "cupy", "cuda.compute"))
        add(f"{pattern}: {what}, worst case", pattern, 1.0, min(every, key=lambda f: f[0], default=None),
            every=every)
    return out


# ---- the table ----------------------------------------------------------------------------------------------------

def _ratio_text(value, goal, met) -> str:
    """A target's measured value to two decimals, or three where two would round a miss onto the goal."""
    if value is None:
        return "-"
    text = f"{value:.2f}"
    return f"{value:.3f}" if met is False and float(text) == goal else text


def _us(ms) -> str:
    return "-" if ms is None else f"{ms * 1e3:.1f}"


def format_table(result: dict) -> str:
    """Per case (pattern, dtype, op): a row per size, microseconds per call per column; then what went wrong,
    what was skipped, and the targets."""
    from ..patterns import PATTERNS

    rows = result["rows"]
    out = ["microseconds per call (back-to-back calls; life: per generation); x copy = the fastest pyscan row's "
           "ratio to the device copy; axis patterns: x base = the fastest pyscan row's time / baseline, peer/py = "
           "the fastest peer's time / that row's (see benchmarks/README.md)"]
    cases = []
    for r in rows:
        key = (r["pattern"], r["dtype"], r["op"])
        if key not in cases:
            cases.append(key)
    for pattern, dtype, op in cases:
        mine = [r for r in rows if (r["pattern"], r["dtype"], r["op"]) == (pattern, dtype, op)]
        names = list(dict.fromkeys(r["name"] for r in mine))
        drivers = any(r["driver_ms"] is not None for r in mine)
        against_baseline = PATTERNS[pattern].baseline_columns
        header = ["size"] + names + (["pyscan driver alone"] if drivers else [])
        header += ["x base", "peer/py"] if against_baseline else ["x copy"]
        lines = []
        for size_label in dict.fromkeys(r["size_label"] for r in mine):
            at = {r["name"]: r for r in mine if r["size_label"] == size_label}
            cells = [size_label + (" L2" if any(r["in_l2"] for r in at.values()) else "")]
            for name in names:
                r = at.get(name)
                if r is None:
                    cells.append("skip")
                elif r["error"]:
                    cells.append("ERROR")
                else:
                    cells.append(_us(r["ms"]) + ("!" if r["check"] == "MISMATCH" else ""))
            if drivers:
                cells.append(_us(next((r["driver_ms"] for r in at.values() if r["driver_ms"] is not None), None)))
            ours = [r["x_copy"] for r in at.values() if r["kind"] == "pyscan" and r["x_copy"] and _good(r)]
            if against_baseline:
                fastest = min((r["ms"] for r in at.values() if r["kind"] == "pyscan" and _good(r)), default=None)
                peer = min((r["ms"] for r in at.values() if r["kind"] == "peer" and _good(r)), default=None)
                cells.append(f"{1 / max(ours):.2f}" if ours else "-")
                cells.append(f"{peer / fastest:.2f}" if peer and fastest else "-")
            else:
                cells.append(f"{max(ours):.2f}" if ours else "-")
            lines.append(cells)
        widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]
        out += ["", f"{pattern} {dtype}" + ("" if op == "-" else f" {op}")]
        out.append("  ".join(h.rjust(w) for h, w in zip(header, widths)).rstrip())
        out += ["  ".join(str(c).rjust(w) for c, w in zip(line, widths)).rstrip() for line in lines]
    wrong = [r for r in rows if r["error"] or r["check"] == "MISMATCH"]
    if wrong:
        out += ["", "problems (! = a wrong result):"]
        out += [f"  {r['pattern']} {r['name']} {r['dtype']} {r['op']} {r['size_label']}: "
                + (f"ERROR {r['error']}" if r["error"] else "WRONG RESULT") for r in wrong]
    notes = sorted({(r["pattern"], r["name"], r["note"]) for r in rows if r["note"]})
    if notes:
        out += ["", "notes:"] + [f"  {p} {n}: {note}" for p, n, note in notes]
    if result["skipped"]:
        out += ["", "skipped:"]
        groups: dict = {}
        for s in result["skipped"]:
            groups.setdefault((s["pattern"], s["name"], s["dtype"], s["op"], s["reason"]), []).append(s["size_label"])
        for (pattern, name, dtype, op, reason), sizes in groups.items():
            out.append(f"  {pattern} {name} {dtype} {op} at {', '.join(sizes)}: {reason}")
    if result.get("left_out"):
        out += ["", "left out: " + "; ".join(f"{k} ({v})" for k, v in result["left_out"].items())]
    if result["targets"]:
        out += ["", "targets:"]
        for t in result["targets"]:
            measured = _ratio_text(t["measured"], t["goal"], t["met"])
            met = {True: "met", False: "NOT met", None: "no data"}[t["met"]]
            goal = f"<= {t['goal']}" if t["at_most"] else f">= {t['goal']}"
            tally = f" ({t['cases_met']} of {t['cases']} cases)" if t.get("cases") else ""
            out.append(f"  {t['target']}: {measured} ({t['where'] or '-'}), goal {goal}: {met}{tally}")
    if result.get("aborted"):
        out.append(f"\nABORTED: {result['aborted']}")
    return "\n".join(out)


# ---- JSON -----------------------------------------------------------------------------------------------------------

def validate_result(result: dict) -> None:
    """Raise ValueError if result does not have the layout this module writes (settings.SCHEMA)."""
    missing = [k for k in RESULT_KEYS if k not in result]
    if missing:
        raise ValueError(f"bench result: missing keys {missing}")
    if result["schema"] != settings.SCHEMA:
        raise ValueError(f"bench result: schema {result['schema']!r}, expected {settings.SCHEMA!r}")
    datetime.datetime.fromisoformat(result["date"])
    for i, row in enumerate(result["rows"]):
        missing = [k for k in ROW_KEYS if k not in row]
        if missing:
            raise ValueError(f"bench result: row {i} misses {missing}")
        if row["pattern"] not in BENCH_PATTERNS:
            raise ValueError(f"bench result: row {i} has pattern {row['pattern']!r}")
        if row["error"] is None and not (row["ms"] and row["ms"] > 0):
            raise ValueError(f"bench result: row {i} has neither a time nor an error")


def write_json(result: dict, path) -> None:
    validate_result(result)
    with open(path, "w") as f:
        json.dump(result, f, indent=1, allow_nan=False)
        f.write("\n")


# ---- the plot -------------------------------------------------------------------------------------------------------

def plot(result: dict, path=None):
    """Throughput against size (log-log), one panel per case, the copy's equivalent throughput dashed; where each size
    is a shape of its own (the axis patterns), against the shapes in run order.  Draws with the Agg canvas (no
    display needed); writes a PNG to path if given; returns the Figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from ..patterns import PATTERNS

    rows = result["rows"]
    panels = list(dict.fromkeys((r["pattern"], r["dtype"], r["op"]) for r in rows))
    ncols = min(4, max(1, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig = Figure(figsize=(5.2 * ncols, 4.2 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    fig.suptitle(f"pyscan bench on {result.get('device', {}).get('name', '?')}, {result['date'][:10]}: throughput "
                 "against size, per call as users call (dashed: a device copy of the same bytes)")
    styles = {"pyscan": dict(ls="-", marker="o", lw=2.2, ms=3), "peer": dict(ls=":", marker="s", lw=1.3, ms=3)}
    for i, (pattern, dtype, op) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        mine = [r for r in rows if (r["pattern"], r["dtype"], r["op"]) == (pattern, dtype, op)]
        spec = PATTERNS[pattern]
        shapes = list(dict.fromkeys(r["size_label"] for r in mine))

        def x(r, spec=spec, shapes=shapes):
            return r["size"] if spec.sizes_grow else shapes.index(r["size_label"])
        factor = 2 if spec.reads_only else 1
        copies = sorted((x(r), factor * r["gelem_per_s"]) for r in mine if r["kind"] == "copy" and r["gelem_per_s"])
        if copies:
            ax.plot([c[0] for c in copies], [c[1] for c in copies], "k--", lw=1.5, label="copy")
        for name in dict.fromkeys(r["name"] for r in mine if r["kind"] != "copy"):
            pts = sorted((x(r), r["gelem_per_s"]) for r in mine if r["name"] == name and _good(r))
            if pts:
                kind = next(r["kind"] for r in mine if r["name"] == name)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name, **styles[kind])
        if spec.sizes_grow:
            ax.set_xscale("log", base=2)
            ax.set_xlabel("cells" if spec.lattice else "elements")
        else:
            ax.set_xticks(range(len(shapes)), shapes, rotation=30, fontsize=7)
            ax.set_xlabel("shape")
        ax.set_yscale("log")
        ax.set_ylabel("Gcell/s" if spec.lattice and spec.sizes_grow else "Gelem/s")
        ax.set_title(f"{pattern}: {dtype}" + ("" if op == "-" else f", {op}"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig
