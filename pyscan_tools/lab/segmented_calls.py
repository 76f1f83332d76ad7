"""The public segmented calls on CuPy arrays beside a device copy, the 1-D reduction and torch.segment_reduce, one
line per mix: the probe behind docs/reduction.md, "Segments" (benchmarks/segmented_calls_ab.txt).  Needs a GPU.

    python pyscan_tools/lab/segmented_calls.py [LOG2_SIZE ...]     (default 26 28)

float32, int64 device offsets (pyscan_tools.patterns.segments.offsets_for), check_offsets=False; µs a call, the
best of 5 rounds of 20 back-to-back calls between CUDA events.  "x read": the reduction's time over half the copy's;
"x copy": the segmented scan's over the copy's.  torch.segment_reduce is skipped on 1- and 32-element segments
(hundreds of ms a call).  Run it from two checkouts one after the other (PYTHONPATH) for a before/after pair.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402
from pyscan_tools.patterns.segments import offsets_for  # noqa: E402

MIXES = ("uniform 1", "uniform 32", "uniform 1024", "uniform 8192", "uniform 2^16", "uniform 2^24", "power law")
NO_TORCH = ("uniform 1", "uniform 32")


def best_us(timer, fn, reps: int = 20) -> float:
    """The best of 5 rounds of `reps` back-to-back calls (after 3 warm-up calls), µs a call."""
    for _ in range(3):
        fn()
    return min(timer.per_call_ms(fn, reps) for _ in range(5)) * 1000


def mix_line(cp, torch, timer, x, tx, copy: float, mix: str) -> str:
    n = int(x.size)
    o = cp.asarray(offsets_for(n, mix))
    to = torch.as_tensor(o, device="cuda")
    reduce = best_us(timer, lambda: pyscan.reduce(x, offsets=o, check_offsets=False))
    scan = best_us(timer, lambda: pyscan.scan(x, offsets=o, check_offsets=False))
    peer = float("nan") if mix in NO_TORCH else best_us(timer, lambda: torch.segment_reduce(tx, "sum", offsets=to), 5)
    return (f"  {mix:14s} seg reduce {reduce:8.1f} ({reduce / (copy / 2):.2f}x read)  seg scan {scan:8.1f} "
            f"({scan / copy:.2f}x copy)  torch.segment_reduce {peer:8.1f}")


def size_lines(cp, torch, timer, log: int) -> None:
    x = cp.random.random(1 << log, dtype=cp.float32)
    y = cp.empty_like(x)
    tx = torch.as_tensor(x, device="cuda")
    copy = best_us(timer, lambda: cp.cuda.runtime.memcpyAsync(y.data.ptr, x.data.ptr, x.nbytes, 3, 0))
    print(f"2^{log} copy {copy:.1f}  read-once {copy / 2:.1f}")
    print(f"  reduce 1-D          {best_us(timer, lambda: pyscan.reduce(x)):.1f}")
    print(f"  scan 1-D            {best_us(timer, lambda: pyscan.scan(x)):.1f}")
    for mix in MIXES:
        print(mix_line(cp, torch, timer, x, tx, copy, mix))


def main(logs) -> None:
    import cupy as cp
    import torch

    for log in logs:
        size_lines(cp, torch, event_timer("cupy"), log)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [26, 28])
