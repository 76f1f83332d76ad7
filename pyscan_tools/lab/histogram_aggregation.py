"""The NumPy-contract histogram kernels' aggregation (numpy_plan.AGGREGATIONS: none, runs of a thread, lanes of a
warp) on float32 and int32 data with 100, 4096 and 2^20 bins and 0, 10, 90 and 100 % of the values in one bin
(the bench's data, pyscan_tools/patterns/numpy_histogram.py), beside a device copy of the same bytes: which
aggregation pays, and what it costs where values do not repeat.  Each variant is forced on the strategy the bins
choose (private copies for 100 and 4,096 bins, global atomics for 2^20).  The kernel alone (count_into on a CuPy array),
µs per call from CUDA events around back-to-back calls, median of the rounds; "x read" = copy / 2 / time.
Run on a GPU host: python pyscan_tools/lab/histogram_aggregation.py [--size 2^26] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2^26")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()

    import cupy

    from pyscan.histograms import numpy_histogram as nh
    from pyscan.histograms import numpy_plan as plan
    from pyscan.runtime import arrays
    from pyscan_tools.patterns import numpy_histogram as cases
    from pyscan_tools.patterns import parse_size

    n = parse_size(args.size, False)
    rng = np.random.default_rng(7)
    stream = cupy.cuda.get_current_stream()

    def per_call_us(fn):
        fn()
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        for _ in range(args.calls):
            fn()
        stop.record(stream)
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) * 1e3 / args.calls

    def measure(dtype, bins, op):
        x = cupy.asarray(cases.make_input(n, dtype, op, rng))
        copy_target = cupy.empty_like(x)
        top = cases.value_range(dtype, bins)
        rule = nh._uniform_rule(np.dtype(dtype), bins, 0, top, explicit_range=True)
        call = arrays.begin(x, what="x", dtypes=plan.VALUE_DTYPES, ndim=None)
        with call:
            out = call.empty((bins,), np.int64)
            rows = {"copy": lambda: copy_target.__setitem__(Ellipsis, x)}
            for aggregate in plan.AGGREGATIONS:
                rows[aggregate] = (lambda a=aggregate: nh.count_into(call.x, None, rule, out, call=call, aggregate=a))
            times = {name: [] for name in rows}
            for _ in range(args.rounds):
                for name, fn in rows.items():
                    times[name].append(per_call_us(fn))
            ok = np.array_equal(out.get(), np.histogram(cupy.asnumpy(x), bins, (0, top))[0])  # a DeviceView
        return {name: statistics.median(t) for name, t in times.items()}, ok

    print(f"{'dtype':8} {'case':28} {'copy':>8} " + " ".join(f"{a:>14}" for a in plan.AGGREGATIONS))
    for dtype in ("float32", "int32"):
        for bins in cases.BINS:
            for skew in cases.SKEWS:
                op = cases.case_name(bins, skew)
                med, ok = measure(dtype, bins, op)
                cells = " ".join(f"{med[a]:8.1f} ({med['copy'] / 2 / med[a]:.2f})" for a in plan.AGGREGATIONS)
                print(f"{dtype:8} {op:28} {med['copy']:8.1f} {cells}{'' if ok else '  MISMATCH'}", flush=True)

if __name__ == "__main__":
    main()
