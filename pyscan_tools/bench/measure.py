"""Measuring one row: warm-up calls, then the per-call time of batches of back-to-back calls (pyscan.timing), and
the statistics the report derives from it."""

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


def measure(call, timer, synchronize=None) -> Measurement:
    """Warm up (the first call compiles and fills caches), time one call, then the batches."""
    for _ in range(settings.WARMUP_CALLS):
        call()
    if synchronize is not None:
        synchronize()
    calls, batches = plan_batches(timer.per_call_ms(call, 1))
    times = [timer.per_call_ms(call, calls) for _ in range(batches)]
    return Measurement(statistics.median(times), min(times), calls, batches)


def gper_s(count: int, ms: float) -> float:
    """count per second, in billions, for count items done in ms milliseconds."""
    return count / (ms * 1e-3) / 1e9


def predicted_ms(last, size: int):
    """Time per call at `size` predicted linearly from the last measurement (size, ms) of the same row, or None."""
    if last is None:
        return None
    last_size, last_ms = last
    return last_ms * size / last_size
