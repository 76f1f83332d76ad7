"""The one-launch count of pyscan.histogram (numpy_histogram_once) over many bins at several grids and numbers of
private copies, on CuPy arrays: the sweep behind numpy_plan's COPIES_BYTES and PRIVATE_COUNTS_PER_BIN
(docs/histogram.md, "Copies and grid"; benchmarks/histogram_copies_grid_sweep_h200.txt).  Needs a GPU.

    python pyscan_tools/lab/histogram_grid_sweep.py

For float32 and int32 values uniform over (0, bins), at 2^24 and 2^28: the kernel built with the plan's copies, half
as many and (where they fit in SHARED_BYTES) twice as many, each launched on 4, 3, 2 and 1 blocks an SM; µs a call
by CUDA events (the median of 7 batches of 20 back-to-back launches).  Every variant's counts are checked against
the public call's first.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.histograms import numpy_histogram as nh  # noqa: E402
from pyscan.histograms import numpy_plan as plan  # noqa: E402
from pyscan.runtime import arrays, driver  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402

CASES = ((np.float32, 100), (np.float32, 1024), (np.float32, 4096), (np.int32, 4096), (np.float32, 12288))


def launcher(ready, read, fn, geometry, counters: int, hist, edges):
    """One launch of build fn with `geometry` over the array ready() read, as the ready call makes it."""
    address, n, _, device, stream = read
    copy = (int(ready.bin_edges.gpudata), edges.data.ptr, ready.rule.bin_edges.nbytes)

    def launch():
        nh.launch_one_count(fn, driver.primary(device), stream, geometry, address, n, ready.arguments,
                            int(ready.edges.gpudata), counters, hist.data.ptr, copy)
    return launch


def main() -> None:
    import cupy

    timer, rng = event_timer("cupy"), np.random.default_rng(2)
    for size in (2**24, 2**28):
        for dtype, bins in CASES:
            x = cupy.asarray((rng.random(size, dtype=np.float64) * bins).astype(dtype))
            expected = cupy.asnumpy(pyscan.histogram(x, bins, range=(0, bins))[0])
            pyscan.histogram(x, bins, range=(0, bins))  # the ready call's entry made
            read = arrays.READY[type(x)].ready(x)
            ready = nh._ready[nh._ready_key(read[2], bins, (0, bins), read[3])]
            rule, stream, device = ready.rule, read[4], read[3]
            chosen, planned = plan.choose_strategy(bins, False, None, rule.dtype.itemsize)
            hist, edges = cupy.zeros(bins, cupy.int64), cupy.empty(bins + 1, rule.bin_edges.dtype)
            doubled = planned * 2 if bins * 4 * planned * 2 <= plan.SHARED_BYTES and planned < 32 else planned
            for copies in sorted({max(1, planned // 2), planned, doubled}):
                fn, shared = nh.counting_kernel(rule, chosen, copies, device, one_launch=True)
                owner, counters = nh.kept_counters(nh.counter_bytes(chosen, bins), device, stream)
                for per_sm in (4, 3, 2, 1):
                    grid = max(1, min(-(-size // (plan.BLOCK * (16 // rule.dtype.itemsize))), per_sm * ready.sms))
                    geometry = fn.config((grid, 1, 1), (plan.BLOCK, 1, 1), shared)

                    launch = launcher(ready, read, fn, geometry, counters, hist, edges)
                    launch()
                    check = "ok" if np.array_equal(cupy.asnumpy(hist), expected) else "WRONG"
                    for _ in range(3):
                        launch()
                    us = 1e3 * statistics.median(timer.per_call_ms(launch, 20) for _ in range(7))
                    print(f"{np.dtype(dtype).name} {bins} bins 2^{size.bit_length() - 1} copies {copies} grid {grid} "
                          f"({per_sm}/SM): {us:.1f} us {check}", flush=True)
            del x
            cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
