"""pyscan.histogram(x, 100) with range=None on data whose range is new at every call -- NumPy's default call on
fresh data -- beside the same call on one array (its rule and edges kept from the first call), an explicit range,
torch.histc's own range (min=max=0) and cupy.histogram; with --pieces, the host time of the call's pieces.  The
probe behind docs/histogram.md, "A new range at every call" (benchmarks/histogram_fresh_range_h200.txt).  Needs a
GPU with CuPy and torch.

    python pyscan_tools/lab/histogram_fresh_range.py [--pieces] [LOG2_SIZE ...]     (default 20 24)

64 float32 arrays of standard normal values, each scaled and shifted differently, taken in turn (more than the 16
rules pyscan keeps, so every pyscan call makes its rule anew); µs a call, host wall time over back-to-back calls
(range=None waits for the data's min and max every call), the best of 5 rounds.  --pieces wraps the call's parts in
timers (which add their own cost to the whole) and prints each one's time a call.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import cupy as cp  # noqa: E402
import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan.histograms import numpy_histogram as nh  # noqa: E402
from pyscan.histograms import numpy_plan as plan  # noqa: E402
from pyscan.runtime import arrays, driver  # noqa: E402
from pyscan_tools.lab.bincount_calls import best_us  # noqa: E402  (the best of 5 rounds, µs a call)

ARRAYS = 64
BINS = 100


def data(n: int) -> list:
    base = cp.random.standard_normal(n, dtype=cp.float32)
    return [base * cp.float32(1 + k / 7) + cp.float32(k / 3) for k in range(ARRAYS)]


def in_turn(arrays_: list, call):
    """A function that calls `call` on the next array each time."""
    turn = iter(range(1 << 62))
    return lambda: call(arrays_[next(turn) % len(arrays_)])


def compare(n_log: int) -> None:
    xs = data(1 << n_log)
    tensors = [torch.as_tensor(x, device="cuda") for x in xs]
    rows = {
        "pyscan.histogram, a new range each call": in_turn(xs, lambda x: pyscan.histogram(x, BINS)),
        "pyscan.histogram, the same array": lambda: pyscan.histogram(xs[0], BINS),
        "pyscan.histogram(range=(-3, 3))": lambda: pyscan.histogram(xs[0], BINS, (-3, 3)),
        "torch.histc(min=max=0), a new range": in_turn(tensors, lambda t: torch.histc(t, BINS)),
        "cupy.histogram, a new range": in_turn(xs, lambda x: cp.histogram(x, BINS)),
    }
    for name, fn in rows.items():
        print(f"2^{n_log} {name:42} {best_us(fn, ARRAYS):9.1f}", flush=True)


def pieces(n_log: int) -> None:
    """The host time of the parts of a new range's call, each wrapped in a timer, µs a call."""
    spent: dict = {}

    def timed(module, name: str, label: str) -> None:
        original = getattr(module, name)

        @functools.wraps(original)
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - start

        setattr(module, name, wrapper)

    for name in ("device_min_max", "count_into", "_edges_out", "_finish", "_constant"):
        timed(nh, name, name)
    timed(plan, "uniform_rule", "uniform_rule")
    timed(arrays, "begin", "begin")
    timed(driver, "synchronize", "driver.synchronize")
    timed(driver, "copy_dtoh", "driver.copy_dtoh (waits)")
    timed(driver, "copy_htod", "driver.copy_htod")
    call = in_turn(data(1 << n_log), lambda x: pyscan.histogram(x, BINS))
    for _ in range(2):
        call()
    cp.cuda.Device().synchronize()
    spent.clear()
    calls = 4 * ARRAYS
    start = time.perf_counter()
    for _ in range(calls):
        call()
    cp.cuda.Device().synchronize()
    print(f"2^{n_log}: {(time.perf_counter() - start) / calls * 1e6:.1f} us a call, wrapped; per call:")
    for label, seconds in sorted(spent.items(), key=lambda item: -item[1]):
        print(f"  {label:28} {seconds / calls * 1e6:8.1f}")


def main() -> None:
    args = sys.argv[1:]
    show_pieces = "--pieces" in args
    sizes = [int(a) for a in args if a != "--pieces"] or [20, 24]
    for n_log in sizes:
        compare(n_log)
    if show_pieces:  # last: the timers stay in place
        for n_log in sizes:
            pieces(n_log)


if __name__ == "__main__":
    main()
