"""Timing GPU calls: CUDA events recorded around a batch of back-to-back calls, the elapsed time divided by the
number of calls.  One timer for the benchmark (`python -m pyscan bench`), the demos and the tuning scripts.

A batch of N calls with no synchronisation between them is how a program calls a library in a loop: the host's
work per call (argument checks, allocations, launches) overlaps the device's, and the per-call time is whichever
of the two is longer.  For small inputs that is the host's, so the overhead of a call shows; for large ones it is
the kernels'.  The events come from the library whose calls are timed (their record() goes on that library's
current stream): pycuda's (the legacy default stream), CuPy's or torch's; HostTimer measures host time for CPU
code.

    timer = event_timer("cupy")              # or "pycuda", "torch"
    ms = timer.per_call_ms(lambda: cupy.cumsum(x), calls=100)
    median_ms(fn)                            # the demos' one-liner: median of single calls, pycuda events
"""

from __future__ import annotations

import statistics
import time


class EventTimer:
    """CUDA events of one library: `make()` -> event with record() and synchronize(); `elapsed(start, end)` -> ms."""

    def __init__(self, make, elapsed, name: str):
        self.start, self.end, self.elapsed, self.name = make(), make(), elapsed, name

    def per_call_ms(self, fn, calls: int = 1) -> float:
        """Milliseconds per call of `calls` back-to-back calls of fn()."""
        self.start.record()
        for _ in range(calls):
            fn()
        self.end.record()
        self.end.synchronize()
        return self.elapsed(self.start, self.end) / calls


class HostTimer:
    """time.perf_counter around the batch: for calls that run on the host (NumPy)."""

    name = "host"

    def per_call_ms(self, fn, calls: int = 1) -> float:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) * 1e3 / calls


def event_timer(library: str) -> EventTimer:
    """An EventTimer with the events of `library`: "pycuda", "cupy" or "torch"."""
    if library == "cupy":
        import cupy

        return EventTimer(cupy.cuda.Event, cupy.cuda.get_elapsed_time, "cupy")
    if library == "torch":
        import torch

        return EventTimer(lambda: torch.cuda.Event(enable_timing=True), lambda s, e: s.elapsed_time(e), "torch")
    if library == "pycuda":  # pycuda's events, on the legacy default stream
        from .basics import pycuda_context

        drv = pycuda_context()
        return EventTimer(drv.Event, lambda s, e: s.time_till(e), "pycuda")
    raise ValueError(f"event_timer: unknown library {library!r}: expected pycuda, cupy or torch")


def median_ms(fn, repeat: int = 20, warmup: int = 2) -> float:
    """Median milliseconds of one call of fn() between two CUDA events on the legacy default stream, after
    `warmup` untimed calls (first-call compilation, memory-pool growth, clocks ramping up)."""
    timer = event_timer("pycuda")
    for _ in range(warmup):
        fn()
    timer.end.record()
    timer.end.synchronize()
    return statistics.median(timer.per_call_ms(fn) for _ in range(repeat))
