"""Per-call time of the public functions on torch tensors, beside torch's and CuPy's own calls and a device copy.

    python pyscan_tools/lab/time_public_calls.py [--log2n 10 16 20 22 24 26 28] [--dtype int32] [--calls 200]

Each figure is the time of a batch of back-to-back calls between two CUDA events on torch's current stream, divided
by the number of calls (so host and launch overhead show at small sizes), the median of 5 batches.  A lab script:
`python -m pyscan bench` is the full benchmark.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np


def per_call_us(fn, calls: int, torch) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / calls)
    return statistics.median(times)


def time_row(n: int, dtype, calls: int, torch, cupy, pyscan) -> dict:
    x = (torch.randint(-9, 9, (n,), device="cuda").to(dtype) if not dtype.is_floating_point
         else torch.randn(n, device="cuda", dtype=dtype))
    c = cupy.asarray(x)
    dst = torch.empty_like(x)
    if not dtype.is_floating_point:
        assert np.array_equal(pyscan.scan(x).cpu().numpy(), torch.cumsum(x, 0, dtype=dtype).cpu().numpy())
    return {
        "copy": per_call_us(lambda: dst.copy_(x), calls, torch),
        "scan": per_call_us(lambda: pyscan.scan(x), calls, torch),
        "tscan": per_call_us(lambda: torch.cumsum(x, 0, dtype=dtype), calls, torch),
        "cscan": per_call_us(lambda: cupy.cumsum(c, dtype=c.dtype), calls, torch),
        "reduce": per_call_us(lambda: pyscan.reduce(x), calls, torch),
        "tsum": per_call_us(lambda: torch.sum(x, dtype=dtype), calls, torch),
        "csum": per_call_us(lambda: cupy.sum(c, dtype=c.dtype), calls, torch),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, nargs="+", default=[10, 12, 14, 16, 18, 20, 22, 24, 26, 28])
    parser.add_argument("--dtype", default="int32")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    import cupy
    import torch

    import pyscan

    dtype = getattr(torch, args.dtype)
    print(f"{'n':>6} {'copy':>8} {'pyscan.scan':>12} {'torch.cumsum':>12} {'cupy.cumsum':>12} {'pyscan.reduce':>14} "
          f"{'torch.sum':>10} {'cupy.sum':>9} {'scan/best':>10} {'reduce/best':>11}")
    for log2n in args.log2n:
        n = 1 << log2n
        row = time_row(n, dtype, max(3, min(args.calls, (1 << 28) // n * 2)), torch, cupy, pyscan)
        print(f"2^{log2n:<4} {row['copy']:8.1f} {row['scan']:12.1f} {row['tscan']:12.1f} {row['cscan']:12.1f} "
              f"{row['reduce']:14.1f} {row['tsum']:10.1f} {row['csum']:9.1f} "
              f"{row['scan'] / min(row['tscan'], row['cscan']):10.2f} {row['reduce'] / min(row['tsum'], row['csum']):11.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
