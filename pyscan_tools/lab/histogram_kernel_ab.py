"""The counting kernels of pyscan.histogram from one checkout, timed through the public call on CuPy arrays, one line
per case: run it from two or more checkouts in turn (each its own process, the checkouts interleaved) for the
before/after pairs of docs/histogram.md, "The guess split by adds" and "Copies and grid"
(benchmarks/histogram_fast_path_ab_h200.txt, histogram_copies_grid_ab_h200.txt).
Needs a GPU.

    python pyscan_tools/lab/histogram_kernel_ab.py LABEL [peers] [global]

µs a call: CUDA events around back-to-back calls (200 at 2^24, 20 at 2^28), the best of 3 rounds after 3 warm-up
calls; each result checked against np.histogram first ("ok").  Data: uniform random values over (0, bins) -- float
values fall anywhere in their bin, so the few near an edge take the correction -- int32 values on the edges, and
90 % of the values moved into one bin where asked; past 2^22 a random block repeated.  The default cases are the
private copies' (100 to 12,288 bins, float32, int32 and float64, float32 with weights -- "float32w" -- at 2^24 and
2^28); `global` takes the global histogram's (2^20 bins at 2^24, 30 calls); `peers` adds cuda.compute's
histogram_even (reused) and a device copy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path.cwd()))  # the checkout run from (PYTHONPATH=$PWD) comes first

import pyscan  # noqa: E402
from pyscan.timing import event_timer  # noqa: E402
from pyscan_tools.lab.histogram_calls import histogram_even  # noqa: E402

# (dtype, bins, % of the values in one bin, weighted: float32 weights of 1)
PRIVATE_CASES = (("float32", 100, 0, False), ("float32", 100, 90, False), ("float32", 1024, 0, False),
                 ("float32", 4096, 0, False), ("float32", 12288, 0, False), ("int32", 100, 0, False),
                 ("int32", 4096, 0, False), ("float64", 100, 0, False), ("float32", 1024, 0, True),
                 ("float32", 4096, 0, True))
GLOBAL_CASES = (("float32", 2**20, 0, False), ("float32", 2**20, 10, False), ("float32", 2**20, 90, False),
                ("int32", 2**20, 0, False), ("int32", 2**20, 90, False))


def best_time(cp, timer, fn, calls: int) -> float:
    """µs a call: the best of 3 rounds of `calls` back-to-back calls (pyscan.timing), after 3 warm-up calls."""
    for _ in range(3):
        fn()
    cp.cuda.Device().synchronize()
    return 1e3 * min(timer.per_call_ms(fn, calls) for _ in range(3))


def data(rng, dtype: str, bins: int, skew: int, size: int) -> np.ndarray:
    block = min(size, 2**22)
    values = rng.integers(0, bins, block) if dtype == "int32" else rng.random(block) * bins
    if skew:
        values[rng.random(block) < skew / 100] = 0.5
    return np.resize(values.astype(dtype), size)


def main(label: str, options) -> None:
    import cupy as cp

    cc = None
    if "peers" in options:
        import cuda.compute as cc
    timer, rng = event_timer("cupy"), np.random.default_rng(7)
    sizes = {2**24: 30} if "global" in options else {2**24: 200, 2**28: 20}
    cases = GLOBAL_CASES if "global" in options else PRIVATE_CASES
    print(f"# pyscan from {pyscan.__file__}; µs a call (CUDA events)")
    for size, calls in sizes.items():
        for dtype, bins, skew, weighted in cases:
            if dtype == "float64" and size > 2**24:
                continue
            host = data(rng, dtype, bins, skew, size)
            x = cp.asarray(host)
            weights = cp.ones(size, cp.float32) if weighted else None
            block = min(size, 2**22)
            expected = np.histogram(host[:block], bins, (0, bins))[0] * (size // block)

            def call(x=x, bins=bins, weights=weights):
                return pyscan.histogram(x, bins, range=(0, bins), weights=weights)

            check = "ok" if np.array_equal(cp.asnumpy(call()[0]), expected) else "WRONG"
            name = dtype + ("w" if weighted else "")  # w: weighted
            row = (f"{label:8s} 2^{size.bit_length() - 1} {name:8s} {bins:7d} bins {skew:3d}%  pyscan "
                   f"{best_time(cp, timer, call, calls):8.1f} {check}")
            if cc is not None and dtype != "float64" and not weighted:
                row += (f"   even {best_time(cp, timer, histogram_even(cc, cp, x, bins, bins), calls):8.1f}"
                        f"   copy {best_time(cp, timer, x.copy, calls):8.1f}")
            print(row, flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:])
