"""The run: for each pattern asked for, each of its cases (dtype, op), each size from small to large: the device
copy, pyscan's public calls on every array kind, their drivers alone, the peers; each result checked against
NumPy once (up to CHECK_MAX_CELLS); then the batches of the copy, the public calls and the peers in rounds
(measure.measure_together), so that their ratios survive a noisy machine.  One input per case is made at the
largest size and uploaded once per array kind; smaller sizes are prefix views of it (life: a lattice per size).

A row that refuses a size (ValueError, NotImplementedError) or whose predicted time per call passes CALL_CAP_MS is
skipped, and the output says so; a row that fails otherwise gets an error row and is not tried at larger sizes;
the run carries on.  A row whose call took more than CALL_CAP_MS is timed once (measure.Timed).  Where each size
is a shape of its own (Pattern.sizes_grow False: the axis patterns), nothing carries from one size to the next: no
prediction, no skip after a refusal or a failure.  An interrupt (Ctrl-C, SIGTERM) ends the run early with the rows
measured until then.
"""

from __future__ import annotations

import datetime
import platform
import statistics
import sys
import time

import numpy as np

from ..patterns import PATTERNS, cells, size_label
from . import settings
from .entries import Entry, peer_entries, pyscan_entries
from .measure import Timed, gper_s, measure, measure_together, predicted_ms
from .peers import peers_for

REFUSALS = (ValueError, NotImplementedError)  # an algorithm refusing an input: skipped, not an error


def _first_line(exc) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: " + (text[0] if text else "")[:300]


class Bench:
    def __init__(self, args, kinds: dict, *, pyscan=None, patterns=None, peers=peers_for, rng=None, log="stderr",
                 device=None, versions=None):
        import pyscan as pyscan_module

        self.args = args
        self.kinds = kinds
        self.pyscan = pyscan if pyscan is not None else pyscan_module
        self.patterns = patterns if patterns is not None else PATTERNS
        self.peers = peers
        self.rng = rng if rng is not None else np.random.default_rng(20261122)
        self.log = sys.stderr if log == "stderr" else log  # the stderr of the run (pytest's capture changes it)
        self.device = device or {}
        self.versions = versions or {}
        self.l2_bytes = int(self.device.get("l2_cache_bytes") or 0)
        self.user_kinds = [k for k in ("cupy", "torch") if k in kinds] or [k for k in ("pycuda",) if k in kinds]
        self.copy_kind = self.user_kinds[0] if self.user_kinds else next(iter(kinds), None)
        self.rows: list = []
        self.skipped: list = []
        self.left_out: dict = {}
        self.last: dict = {}  # row_key -> (size, ms per call) of its last measurement
        self.blocked: dict = {}  # row_key -> why larger sizes are not tried
        self.dead = None
        self._input_key, self._input = None, None
        self.started = time.time()

    # -- progress and bookkeeping

    def say(self, text):
        if self.log is not None:
            print(f"[{time.time() - self.started:6.1f} s] {text}", file=self.log, flush=True)

    def skip(self, where, name, reason):
        pattern, dtype, op, size = where
        self.skipped.append({"pattern": pattern, "name": name, "dtype": dtype, "op": op, "size": cells(size),
                             "size_label": size_label(size), "reason": reason})
        self.say(f"[{pattern}] {name} {dtype} {op} {size_label(size)}: skipped ({reason})")

    def row(self, where, entry: Entry | None, copy_ms, in_l2, **values) -> dict:
        pattern, dtype, op, size = where
        spec = self.patterns[pattern]
        row = {"pattern": pattern, "name": entry.name if entry else f"device copy ({self.copy_kind})",
               "kind": entry.kind if entry else "copy", "library": entry.library if entry else self.copy_kind,
               "arrays": entry.arrays if entry else self.copy_kind, "algorithm": entry.algorithm if entry else None,
               "reference": bool(entry and entry.reference), "dtype": dtype, "op": op, "size": cells(size),
               "size_label": size_label(size), "shape": list(size) if isinstance(size, tuple) else None,
               "in_l2": in_l2, "ms": None, "ms_min": None, "calls": 0, "batches": 0, "gelem_per_s": None,
               "copy_ms": copy_ms, "x_copy": None, "driver_ms": None, "check": "-", "note": "", "error": None}
        row.update(values)
        if row["ms"]:
            row["gelem_per_s"] = gper_s(cells(size), row["ms"])
            if copy_ms and entry is not None:
                row["x_copy"] = spec.x_copy(row["ms"], copy_ms)
        self.rows.append(row)
        return row

    def progress(self, row):
        head = f"[{row['pattern']}] {row['name']} {row['dtype']} {row['op']} {row['size_label']}"
        if row["error"]:
            self.say(f"{head}: ERROR {row['error']}")
            return
        ratio = f", {row['x_copy']:.2f}x copy" if row["x_copy"] else ""
        check = "" if row["check"] in ("ok", "-") else " CHECK " + row["check"]
        self.say(f"{head}: {row['ms'] * 1e3:.1f} us per call ({row['calls']} x {row['batches']}){ratio}{check}")

    def row_key(self, where, name) -> tuple:
        """What a row's time, refusal or failure is kept under for the next sizes: (pattern, name, dtype, op); with
        the size too where each size is a shape of its own, so that nothing carries over."""
        pattern, dtype, op, size = where
        key = (pattern, name, dtype, op)
        return key if self.patterns[pattern].sizes_grow else (*key, size)

    def synchronize(self):
        for kind in self.kinds.values():
            kind.synchronize()

    def alive(self) -> bool:
        try:
            self.synchronize()
        except Exception:  # noqa: BLE001
            return False
        return True

    # -- measuring

    def prepare_row(self, where, entry: Entry, x, expected, in_l2):
        """The row's call checked against NumPy (once), warmed up and its batches planned: (Timed, check), or None
        where it is skipped or fails (then the skip or the error row is recorded)."""
        pattern, dtype, op, size = where
        key = self.row_key(where, entry.name)
        if self.dead:
            return self.skip(where, entry.name, f"not run ({self.dead})")
        if key in self.blocked:
            return self.skip(where, entry.name, self.blocked[key])
        pred = predicted_ms(self.last.get(key), cells(size))
        if pred is not None and pred > settings.CALL_CAP_MS:
            self.blocked[key] = f"~{pred:.0f} ms per call predicted, over the {settings.CALL_CAP_MS:.0f} ms cap"
            return self.skip(where, entry.name, self.blocked[key])
        kind = self.kinds[entry.arrays]
        check = "-"
        try:
            call, result = entry.make(x)
            call()
            self.synchronize()
            if expected is not None:
                got = kind.download(result())
                check = "ok" if self.patterns[pattern].same(np.asarray(got), expected()) else "MISMATCH"
            return Timed(call, kind.timer(), self.synchronize), check
        except REFUSALS as exc:
            self.blocked[key] = f"refused a smaller size ({_first_line(exc)})"
            return self.skip(where, entry.name, _first_line(exc))
        except Exception as exc:  # noqa: BLE001  a row failing must not end the run
            self.failed(where, entry, in_l2, exc)
            return None

    def failed(self, where, entry: Entry, in_l2, exc):
        pattern, dtype, op, size = where
        self.blocked[self.row_key(where, entry.name)] = "failed at a smaller size"
        self.progress(self.row(where, entry, None, in_l2, error=_first_line(exc)))
        if not self.alive():
            self.dead = f"the GPU context was lost after {entry.name} at {size_label(size)}: {_first_line(exc)}"
            self.say(self.dead)

    def finish_row(self, where, entry: Entry, timed: Timed, check, copy_ms, in_l2, units: int):
        size = where[3]
        key = self.row_key(where, entry.name)
        m = timed.result()
        self.last[key] = (cells(size), m.ms)
        if check == "MISMATCH":
            self.blocked[key] = "wrong result at a smaller size"
        note = f"one call timed (over the {settings.CALL_CAP_MS:.0f} ms cap)" if timed.timed_once else ""
        row = self.row(where, entry, copy_ms, in_l2, ms=m.ms / units, ms_min=m.ms_min / units, calls=m.calls,
                       batches=m.batches, check=check, note=note)
        self.progress(row)
        return row

    def driver_ms(self, pattern, op, n, x_pycuda, algorithm):
        """The registered driver alone (pattern.driver_call), or None (and a note) where it cannot run."""
        registry = self.pyscan.REGISTRIES[pattern.registry]
        try:
            name = registry.choose(n) if algorithm == "auto" else algorithm
            call = pattern.driver_call(registry.get(name), x_pycuda, op)
            return measure(call, self.kinds["pycuda"].timer(), self.synchronize).ms / pattern.units, ""
        except Exception as exc:  # noqa: BLE001  the extra column is not worth failing the row
            return None, f"driver alone: {_first_line(exc)}"

    # -- cases

    def entries(self, pattern, op) -> list:
        out = pyscan_entries(self.pyscan, pattern, op, self.user_kinds, self.args.algorithms)
        if not self.args.no_peers:
            peers, left_out = self.peers(pattern.name, self.kinds)
            self.left_out.update(left_out)
            out += peer_entries(peers, op)
        return out

    def inputs(self, pattern, dtype, op, size, full, uploads, kinds_needed):
        """(host, {kind: device array}) for one size: prefix views of the full-size input, or a new lattice."""
        if pattern.lattice:
            host = pattern.make_input(size, dtype, op, self.rng)
            return host, {k: self.kinds[k].upload(host) for k in kinds_needed}
        n = cells(size)
        return full[:n], {k: self.kinds[k].prefix(uploads[k], n) for k in kinds_needed}

    def full_input(self, pattern, dtype, op, n, kinds_needed):
        """The input at the largest size, on the host and uploaded once per array kind; kept for the next case
        when it would be the same (reduce's operators share one input per dtype), else made anew."""
        key = (pattern.name, dtype, op if pattern.inputs_depend_on_op else None, n, tuple(kinds_needed))
        if self._input_key != key:
            self._input = None  # the previous input's device memory goes back to the pools first
            full = pattern.make_input(n, dtype, op, self.rng)
            self._input = (full, {k: self.kinds[k].upload(full) for k in kinds_needed})
            self._input_key = key
        return self._input

    def copies(self, pattern, host, op, x) -> list:
        """The size's device copies (Pattern.copied_bytes), each a Timed row: from x where it is the input's bytes,
        else from a buffer of that many bytes of the copy's kind."""
        kind = self.kinds[self.copy_kind]
        out = []
        for nbytes in pattern.copied_bytes(host, op):
            source = x if nbytes == host.nbytes else kind.upload(np.zeros(nbytes, np.uint8))
            out.append(Timed(kind.copy_call(source, nbytes), kind.timer(), self.synchronize))
        return out

    def run_case(self, pattern, dtype, op, sizes):
        entries = self.entries(pattern, op)
        with_driver = pattern.driver_call is not None and "pycuda" in self.kinds and not self.args.no_driver
        kinds_needed = sorted({e.arrays for e in entries} | {self.copy_kind} | ({"pycuda"} if with_driver else set()))
        full, uploads = None, {}
        if not pattern.lattice:
            full, uploads = self.full_input(pattern, dtype, op, max(cells(s) for s in sizes), kinds_needed)
        for size in sizes:
            where = (pattern.name, dtype, op, size)
            if self.dead:
                self.skip(where, "(all)", f"not run ({self.dead})")
                continue
            host, xs = self.inputs(pattern, dtype, op, size, full, uploads, kinds_needed)
            in_l2 = host.nbytes <= self.l2_bytes
            check_max = pattern.check_max_cells or settings.CHECK_MAX_CELLS
            check = not self.args.no_check and cells(size) <= check_max
            cache = {}

            def expected(host=host, cache=cache):
                if "r" not in cache:
                    cache["r"] = pattern.reference(host, op, pattern.units)
                return cache["r"]
            try:
                copies = self.copies(pattern, host, op, xs[self.copy_kind])
            except Exception as exc:  # noqa: BLE001
                self.skip(where, "(all)", f"no device copy: {_first_line(exc)}")
                continue
            drivers = {}
            if with_driver:
                for algorithm in self.args.algorithms:
                    drivers[algorithm] = self.driver_ms(pattern, op, cells(size), xs["pycuda"], algorithm)
            prepared = {}  # Timed -> (entry, check)
            for entry in entries:
                ready = self.prepare_row(where, entry, xs[entry.arrays], expected if check else None, in_l2)
                if ready:
                    prepared[ready[0]] = (entry, ready[1])
            lost = set()

            def failed(timed, exc, where=where, prepared=prepared, lost=lost, in_l2=in_l2):
                lost.add(timed)
                if timed in prepared:
                    self.failed(where, prepared[timed][0], in_l2, exc)
                else:
                    self.skip(where, "(all)", f"no device copy: {_first_line(exc)}")
            measure_together([*copies, *prepared], failed)
            if lost.intersection(copies):
                continue
            ms = [copy.result() for copy in copies]
            copy_ms = statistics.mean(m.ms for m in ms)
            note = "the mean of copies of the bytes read and of the bytes written" if len(ms) > 1 else ""
            self.progress(self.row(where, None, copy_ms, in_l2, ms=copy_ms, ms_min=statistics.mean(m.ms_min for m in ms),
                                   calls=ms[0].calls, batches=ms[0].batches, note=note))
            for timed, (entry, checked) in prepared.items():
                if timed in lost:
                    continue
                row = self.finish_row(where, entry, timed, checked, copy_ms, in_l2, pattern.units)
                if entry.kind == "pyscan" and entry.algorithm in drivers:
                    row["driver_ms"], note = drivers[entry.algorithm]
                    row["note"] = "; ".join(n for n in (row["note"], note) if n)
        for kind in self.kinds.values():
            try:
                kind.free()
            except Exception as exc:  # noqa: BLE001  a pool that cannot be emptied is not worth ending the run
                self.say(f"could not free {kind.name}'s memory pool: {_first_line(exc)}")

    def run(self) -> dict:
        try:
            for name in self.args.patterns:
                pattern = self.patterns[name]
                for dtype, op in pattern.bench_cases:
                    if self.args.dtypes and dtype not in self.args.dtypes:
                        continue
                    self.run_case(pattern, dtype, op, self.args.size_plan[name])
        except KeyboardInterrupt:
            self.dead = "interrupted: the rows measured so far are kept"
            self.say(self.dead)
        self._input_key, self._input = None, None
        return self.result(time.time() - self.started)

    def result(self, seconds) -> dict:
        from .report import targets

        versions = {"pyscan": getattr(self.pyscan, "__version__", None), "numpy": np.__version__,
                    "python": platform.python_version(), **self.versions}
        result = {
            "schema": settings.SCHEMA,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": self.device,
            "versions": versions,
            "settings": {"patterns": list(self.args.patterns), "algorithms": list(self.args.algorithms),
                         "arrays": self.user_kinds, "copy": self.copy_kind,
                         "sizes": {p: [list(s) if isinstance(s, tuple) else s for s in v]
                                   for p, v in self.args.size_plan.items()},
                         "warmup_calls": settings.WARMUP_CALLS, "batches": settings.BATCHES,
                         "batch_ms": settings.BATCH_MS, "max_calls": settings.MAX_CALLS,
                         "call_cap_ms": settings.CALL_CAP_MS, "check_max_cells": settings.CHECK_MAX_CELLS,
                         "checked": not self.args.no_check, "seconds": round(seconds, 1)},
            "definitions": settings.DEFINITIONS,
            "rows": self.rows,
            "skipped": self.skipped,
            "left_out": self.left_out,
            "aborted": self.dead,
        }
        result["targets"] = targets(result)
        return result
