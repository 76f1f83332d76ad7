"""Variants of the NumPy-contract histogram's bin step (kernels/histogram/numpy_bins.cuh), compiled by overriding
its #defines, timed through the public call beside a device copy, torch.histc and cuda.compute's histogram_even
(docs/histogram.md, "Most values need no correction; the edges can be computed").

    python -m pyscan_tools.lab.histogram_bin_variants [--sizes 2^24 2^28] [--variant NAME=DEFINE=VALUE,... ...]

Each --variant names a set of #defines laid over the ones the host chooses (an empty set: the shipped choice), e.g.
`--variant read=EDGE_FORMULA=0 shipped=` or `--variant margin=GUESS_EXACT=0 exact=`; the default compares those
two.  Cases: float32 and int32, 100, 4,096 and 2^20 bins, 0 and 90 % of the values in one bin (the bench's data:
float values at bin centres, int32 values on the edges).  µs per pyscan.histogram call on a CuPy array (CUDA events
around back-to-back calls, as many as fill about 100 ms, at least 2; the median of 3 rounds, the variants
interleaved); in parentheses the fraction of reading the input once (copy / 2).  Every variant is checked against
np.histogram up to 2^24 values.  Overriding a define the host relies on for correctness (a GUESS_EXACT=1 where the
guess is not exact) gives wrong counts: that is what the check column is for."""

from __future__ import annotations

import argparse
import statistics

import numpy as np

from pyscan.timing import event_timer

BINS = (100, 4096, 2**20)
SKEWS = (0, 90)


def parse_variant(text: str) -> tuple:
    """'name=DEFINE=VALUE,DEFINE=VALUE' -> (name, {DEFINE: int(VALUE)}); 'name=' -> (name, {})."""
    name, _, rest = text.partition("=")
    defines = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        defines[key] = int(value)
    return name, defines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["2^24", "2^28"])
    parser.add_argument("--variant", nargs="+", default=["margin=GUESS_EXACT=0", "exact="])
    args = parser.parse_args()

    import cupy

    import pyscan
    from pyscan.histograms import numpy_histogram as nh
    from pyscan_tools.bench import peers
    from pyscan_tools.patterns import numpy_histogram as cases
    from pyscan_tools.patterns import parse_size

    variants = dict(parse_variant(v) for v in args.variant)
    shipped_get_kernel = nh.get_kernel
    chosen = {"defines": {}}

    def get_kernel(*names, **defines):  # the host's defines, then the variant's over them
        return shipped_get_kernel(*names, **{**defines, **chosen["defines"]})

    nh.get_kernel = get_kernel
    timer = event_timer("cupy")
    rng = np.random.default_rng(7)

    def per_call_us(fn):
        fn()
        calls = max(2, min(100, int(100.0 / max(1e-3, timer.per_call_ms(fn)))))
        return 1e3 * timer.per_call_ms(fn, calls)

    def run_variant(name, x, bins, top):
        chosen["defines"] = variants[name]
        nh._ready.clear()  # the ready call keeps its kernel: made again under this variant's defines
        return pyscan.histogram(x, bins, range=(0, top))

    def measure(n, dtype, bins, skew):
        """({row: median µs}, check) of one case: the copy, every variant, the peers."""
        op = cases.case_name(bins, skew)
        x = cupy.asarray(cases.make_input(n, dtype, op, rng))
        top = cases.value_range(dtype, bins)
        copy = cupy.empty_like(x)
        rows = {"copy": lambda: copy.__setitem__(Ellipsis, x)}
        for name in variants:  # timed after run_variant made its kernel ready (below)
            rows[name] = lambda: pyscan.histogram(x, bins, range=(0, top))
        if dtype == "float32":
            import torch

            t = torch.from_dlpack(x)
            rows["torch.histc"] = lambda: torch.histc(t, bins, 0, top)
        try:
            rows["hist_even"] = peers._cc_histogram(x, op)[0]
        except Exception:  # cuda.compute absent: no column
            pass
        times = {name: [] for name in rows}
        for _ in range(3):
            for name, fn in rows.items():
                if name in variants:
                    run_variant(name, x, bins, top)  # this variant's kernel, ready
                times[name].append(per_call_us(fn))
        if n > 2**24:
            return {name: statistics.median(t) for name, t in times.items()}, "unchecked"
        want = np.histogram(cupy.asnumpy(x), bins, (0, top))[0]
        right = all(np.array_equal(cupy.asnumpy(run_variant(name, x, bins, top)[0]), want) for name in variants)
        return {name: statistics.median(t) for name, t in times.items()}, "ok" if right else "MISMATCH"

    print(f"{'size':5} {'dtype':8} {'case':22} {'copy':>7} " + " ".join(f"{name:>14}" for name in variants)
          + f" {'torch.histc':>11} {'hist_even':>9} check")
    for size in args.sizes:
        n = parse_size(size, False)
        for dtype in ("float32", "int32"):
            for bins in BINS:
                for skew in SKEWS:
                    median, check = measure(n, dtype, bins, skew)
                    cells = " ".join(f"{median[name]:7.1f} ({median['copy'] / 2 / median[name]:.2f})"
                                     for name in variants)
                    peer_cells = (f"{median.get('torch.histc', float('nan')):11.1f} "
                                  f"{median.get('hist_even', float('nan')):9.1f}")
                    print(f"{size:5} {dtype:8} {cases.case_name(bins, skew):22} {median['copy']:7.1f} {cells} "
                          f"{peer_cells} {check}", flush=True)
    nh.get_kernel = shipped_get_kernel


if __name__ == "__main__":
    main()
