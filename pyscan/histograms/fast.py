"""The fast histogram (kernels/histogram/fast.cu): several histogram copies per block, 16-byte
loads, a grid sized to the device; run aggregation optional (measured slower there, so off by default).
`auto` picks it."""

from __future__ import annotations

from ..runtime.loader import get_kernel
from . import launch
from . import models as m
from .registry import HISTOGRAMS

KERNEL, FUNCTION = "histogram/fast.cu", "histogram_fast"


def fast_defines(block=m.FAST_BLOCK, copies=m.FAST_COPIES, aggregate=m.FAST_AGGREGATE) -> dict:
    """The kernel's tuning #defines: threads per block, histogram copies per block (a power of two up to 32), run
    aggregation on or off."""
    return {"BLOCK_SIZE": block, "COPIES": copies, "AGGREGATE": int(aggregate)}


def fast_shared(bins: int, copies=m.FAST_COPIES) -> int:
    """Dynamic shared memory of a block: its copies of the bins' 32-bit counters."""
    return bins * copies * 4


def fast_kernel(device: int):
    """The shipped build (byte values, not letters), for callers that launch it themselves (pyscan.histogram's ready
    path): fast_config's geometry, fast_shared's memory, arguments (data, n, bins, counts zeroed)."""
    return get_kernel(KERNEL, FUNCTION, LETTERS=0, device=device, **fast_defines())


def run_fast(data, bins, *, call, letters=False, block=m.FAST_BLOCK, copies=m.FAST_COPIES, aggregate=m.FAST_AGGREGATE,
             blocks_per_sm=None, out=None):
    """The fast kernel with its tuning knobs (fast_defines), and blocks per SM of the grid (default:
    2048 // block)."""
    grid, block = m.fast_config(data.size, launch.sms(call), block=block, blocks_per_sm=blocks_per_sm)
    return launch.run_kernel(KERNEL, FUNCTION, data, bins, letters, grid, block, call=call,
                             shared=fast_shared(bins, copies), out=out, **fast_defines(block, copies, aggregate))


def fast_driver(data, bins, *, call, letters=False, out=None):
    return run_fast(data, bins, call=call, letters=letters, out=out)


HISTOGRAMS.register(
    "fast", fast_driver, kernels=("histogram/fast.cu",), source="beyond the book (PMPP ch. 9 ideas)",
    summary=f"{m.FAST_COPIES} histogram copies per block (no more than 2 lanes of a warp per counter), "
            "16-byte loads, grid sized to the device",
    model=m.fast_model, fast=True)
