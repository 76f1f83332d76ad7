"""Measuring rows: warm-up calls, then the per-call time of batches of back-to-back calls (pyscan.timing), the rows
of one size in interleaved rounds, and the statistics the report derives from them."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from . import settings


@dataclass(frozen=True)
class Measurement:
    ms: float  # the median of the batches' per-call times
    ms_min: float  # the fastest batch's
    calls: int  # calls per batch
    batches: int


def plan_batches(probe_ms: float) -> tuple:
    """(calls per batch, batches) for a call that took probe_ms: batches of about BATCH_MS, within the budget."""
    calls = int(min(settings.MAX_CALLS, max(1, round(settings.BATCH_MS / max(probe_ms, 1e-6)))))
    batch_ms = calls * probe_ms
    batches = settings.BATCHES
    if batch_ms * batches > settings.MEASURE_BUDGET_MS:
        batches = max(settings.MIN_BATCHES, int(settings.MEASURE_BUDGET_MS // max(batch_ms, 1e-9)))
    return calls, batches


class Timed:
    """One row being measured: warmed up (the first call compiles and fills caches), one call timed to plan its
    batches; batch() times the next batch.  A call that took more than CALL_CAP_MS is timed no more: that one call
    is the row's measurement (timed_once), since batches of it would take seconds."""

    def __init__(self, call, timer, synchronize=None):
        for _ in range(settings.WARMUP_CALLS):
            call()
        if synchronize is not None:
            synchronize()
        self.call, self.timer = call, timer
        self.times: list = []
        probe_ms = timer.per_call_ms(call, 1)
        self.timed_once = probe_ms > settings.CALL_CAP_MS
        if self.timed_once:
            self.calls, self.batches = 1, 0
            self.times.append(probe_ms)
        else:
            self.calls, self.batches = plan_batches(probe_ms)

    def batch(self) -> None:
        self.times.append(self.timer.per_call_ms(self.call, self.calls))

    def result(self) -> Measurement:
        return Measurement(statistics.median(self.times), min(self.times), self.calls, len(self.times))


def measure(call, timer, synchronize=None) -> Measurement:
    """One row alone: warm up, time one call, then the batches."""
    timed = Timed(call, timer, synchronize)
    for _ in range(timed.batches):
        timed.batch()
    return timed.result()


def measure_together(rows: list, failed=None) -> None:
    """Time the batches of several Timed rows in rounds: round r times batch r of every row, one row after the
    other, so a slow spell of a shared machine falls on all the rows of a size alike rather than on whichever row
    was being timed, and their ratios hold.  A row whose batch raises is dropped: failed(row, exception)."""
    live = list(rows)
    for r in range(max((row.batches for row in rows), default=0)):
        for row in list(live):
            if r >= row.batches:
                continue
            try:
                row.batch()
            except Exception as exc:  # noqa: BLE001  one row failing must not end the others
                live.remove(row)
                if failed is None:
                    raise
                failed(row, exc)


def gper_s(count: int, ms: float) -> float:
    """count per second, in billions, for count items done in ms milliseconds."""
    return count / (ms * 1e-3) / 1e9


def predicted_ms(last, size: int):
    """Time per call at `size` predicted linearly from the last measurement (size, ms) of the same row, or None."""
    if last is None:
        return None
    last_size, last_ms = last
    return last_ms * size / last_size
