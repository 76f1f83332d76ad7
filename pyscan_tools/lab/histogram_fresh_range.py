"""pyscan.histogram(x, bins) with range=None on data whose range is new at every call -- NumPy's default call on
fresh data -- on CuPy and torch float32 and CuPy int32 arrays with 100 and 4,096 bins, beside torch.histc's own
range (min=max=0) and cupy.histogram; with --pieces, the host time of the call's pieces.  The probe behind
docs/histogram.md, "A new range at every call" (benchmarks/histogram_fresh_range_ab_h200.txt).  Needs a GPU with
CuPy and torch.

    python pyscan_tools/lab/histogram_fresh_range.py [--pieces] [LOG2_SIZE ...]     (default 20 24)

64 arrays of standard normal values, each scaled and shifted differently, taken in turn (more than the 16 rules
pyscan keeps, so every pyscan call makes its rule anew).  Each call is timed on its own, up to the end of its GPU
work (a synchronize after it: range=None waits for the data's min and max anyway), 256 calls after 32 warm-up
ones; the median and the 10th percentile in µs (the GPU host's CPU time varies by up to 2 x from minute to minute,
and a call that is host work moves with it, where torch.histc's barely does).  --pieces wraps the parts of the
call made whole (numpy_histogram.FreshRange) in timers, which add their own cost to the whole, and prints each
one's time a call.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan.histograms import numpy_histogram as nh  # noqa: E402
from pyscan.histograms import numpy_plan as plan  # noqa: E402
from pyscan.runtime import arrays, driver  # noqa: E402

ARRAYS = 64


def data(n: int) -> list:
    base = cp.random.standard_normal(n, dtype=cp.float32)
    return [base * cp.float32(1 + k / 7) + cp.float32(k / 3) for k in range(ARRAYS)]


def in_turn(arrays_: list, call):
    """A function that calls `call` on the next array each time."""
    turn = iter(range(1 << 62))
    return lambda: call(arrays_[next(turn) % len(arrays_)])


def latency(fn, calls: int = 256, warm: int = 32) -> tuple:
    """(median, 10th percentile) of one call and its GPU work, µs."""
    for _ in range(warm):
        fn()
    cp.cuda.Device().synchronize()
    times = np.empty(calls)
    for k in range(calls):
        start = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        times[k] = time.perf_counter() - start
    return float(np.median(times)) * 1e6, float(np.percentile(times, 10)) * 1e6


def compare(n_log: int) -> None:
    xs = data(1 << n_log)
    tensors = [torch.as_tensor(x, device="cuda") for x in xs]
    ints = [(x * (100 + 7 * k)).astype(cp.int32) for k, x in enumerate(xs)]
    for k in (0, 5, ARRAYS - 1):  # NumPy's result first
        want = np.histogram(cp.asnumpy(xs[k]), 100)
        got = pyscan.histogram(xs[k], 100)
        assert np.array_equal(cp.asnumpy(got[0]), want[0]) and np.array_equal(cp.asnumpy(got[1]), want[1])
    rows = {
        "pyscan cupy f32 100": in_turn(xs, lambda x: pyscan.histogram(x, 100)),
        "pyscan torch f32 100": in_turn(tensors, lambda t: pyscan.histogram(t, 100)),
        "pyscan cupy i32 100": in_turn(ints, lambda x: pyscan.histogram(x, 100)),
        "pyscan cupy f32 4096": in_turn(xs, lambda x: pyscan.histogram(x, 4096)),
        "torch.histc f32 100": in_turn(tensors, lambda t: torch.histc(t, 100)),
        "torch.histc f32 4096": in_turn(tensors, lambda t: torch.histc(t, 4096)),
        "cupy.histogram f32 100": in_turn(xs, lambda x: cp.histogram(x, 100)),
    }
    for name, fn in rows.items():
        median, tenth = latency(fn)
        print(f"2^{n_log} {name:24} median {median:7.1f}  p10 {tenth:7.1f}", flush=True)


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

    order = ["the min and max pass's launch (MinMax.launch)", "the arrays returned (new_shaped)",
             "the min and max read back (MinMax.read)", "  of which the copy back (waits for the pass)",
             "the rule (uniform_rule)", "  of which NumPy's edges", "  of which the guess's margin",
             "the edges' upload", "the kept counters", "the count's launch"]
    timed(nh.MinMax, "launch", order[0])
    timed(type(arrays.CUPY), "new_shaped", order[1])
    timed(nh.MinMax, "read", order[2])
    timed(driver, "copy_dtoh", order[3])
    timed(plan, "uniform_rule", order[4])
    timed(plan, "_equal_edges", order[5])
    timed(plan, "guess_margin", order[6])
    timed(driver, "copy_htod", order[7])
    timed(nh, "kept_counters", order[8])
    timed(nh, "launch_one_count", order[9])
    call = in_turn(data(1 << n_log), lambda x: pyscan.histogram(x, 100))
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
    for label in order:  # in the call's order
        print(f"  {label:48} {spent.get(label, 0.0) / calls * 1e6:8.1f}")


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
