"""GPU timing for the demos and tuning scripts (the benchmark command has its own, fuller harness)."""

from __future__ import annotations

import statistics

from . import gpu


def median_ms(fn, repeat: int = 20, warmup: int = 2) -> float:
    """Median milliseconds of fn() between two CUDA events on the default stream, after `warmup` untimed calls
    (first-call compilation, memory-pool growth, clocks ramping up)."""
    drv = gpu.driver()
    for _ in range(warmup):
        fn()
    drv.Context.synchronize()
    start, end = drv.Event(), drv.Event()
    times = []
    for _ in range(repeat):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.time_till(end))
    return statistics.median(times)
