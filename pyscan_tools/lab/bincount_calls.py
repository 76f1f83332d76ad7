"""pyscan.bincount in one process, per call: the ready call (CuPy and torch arrays), the general path (stream=
given), and the two passes bincount made before its one pass (min_max.cu, then the count), beside torch.bincount
and a device copy: the probe behind docs/histogram.md, "bincount in one pass" (benchmarks/bincount_calls_h200.txt).
Needs a GPU with CuPy and torch.

    python pyscan_tools/lab/bincount_calls.py [LOG2_SIZE ...]     (default 20 24 28)

int32 and int64 values below 100 and 4,096; µs a call, host wall time over back-to-back calls (bincount waits for
the device every call), the best of 5 rounds, of two alternating passes over the six rows.  "two passes" sets the
expected length past the one pass's bins before each call, so the call takes min_max.cu's pass and then the count.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import cupy as cp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan.histograms import numpy_histogram as nh  # noqa: E402


def best_us(fn, reps: int) -> float:
    """The best of 5 rounds of `reps` back-to-back calls (after 2 warm-up calls), µs a call."""
    fn()
    fn()
    cp.cuda.Device().synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        cp.cuda.Device().synchronize()
        best = min(best, (time.perf_counter() - start) / reps * 1e6)
    return best


def two_passes(x):
    nh._expected_lengths[(x.dtype, x.device.id)] = 2**30  # past the one pass: min_max.cu, then the count
    return pyscan.bincount(x, stream=cp.cuda.get_current_stream())


def calls(c, t, out) -> dict:
    """The rows of one case: name -> a call on the CuPy array c (or its torch copy t; out: the copy's target)."""
    return {"copy": lambda: out.__setitem__(slice(None), c), "ready (cupy)": lambda: pyscan.bincount(c),
            "ready (torch)": lambda: pyscan.bincount(t),
            "general (cupy)": lambda: pyscan.bincount(c, stream=cp.cuda.get_current_stream()),
            "two passes (cupy)": lambda: two_passes(c), "torch.bincount": lambda: torch.bincount(t)}


def main(log2_sizes) -> None:
    rng = np.random.default_rng(1)
    for log2 in log2_sizes:
        n = 1 << log2
        for dtype in (np.int32, np.int64):
            for below in (100, 4096):
                host = np.resize(rng.integers(0, below, min(n, 1 << 22), dtype=dtype), n)
                c, t = cp.asarray(host), torch.as_tensor(host, device="cuda")
                out = cp.empty_like(c)
                want = np.bincount(host)
                for got in (pyscan.bincount(c), pyscan.bincount(t), two_passes(c)):
                    assert np.array_equal(got.cpu().numpy() if hasattr(got, "cpu") else cp.asnumpy(got), want)
                rows = calls(c, t, out)
                best = dict.fromkeys(rows, float("inf"))
                for _ in range(2):
                    for name, fn in rows.items():
                        best[name] = min(best[name], best_us(fn, 100 if log2 < 28 else 10))
                nh._expected_lengths.pop((c.dtype, c.device.id), None)
                print(f"{np.dtype(dtype).name} below {below} 2^{log2}: "
                      + "  ".join(f"{name} {us:.1f}" for name, us in best.items()), flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [20, 24, 28])
