"""Per-call time of pyscan.scan and pyscan.reduce on every array kind, beside the same call on a CuPy array of the same
data: the GPUArray, Numba and __cuda_array_interface__ paths against CuPy's (every kind takes one path).

Each call is timed as batches of back-to-back calls between two CUDA events, the kinds taking turns, on the legacy
default stream (which every kind here runs on by default: CuPy's and torch's default streams, pycuda's, Numba's,
and an interface object naming no stream), so the host's per-call work shows at small sizes.  Prints one row per
(function, size) and the worst ratio to CuPy.
Run on a GPU host: python pyscan_tools/lab/per_kind_calls.py [--calls 100] [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402


class Interface:
    """A bare __cuda_array_interface__ object over a CuPy array (what any other library's array looks like)."""

    def __init__(self, base):
        self.base = base
        self.__cuda_array_interface__ = dict(base.__cuda_array_interface__)
        self.__cuda_array_interface__["stream"] = None


def kinds(host):
    import cupy
    import torch
    from numba import cuda as numba_cuda

    from pyscan.basics import pycuda_context

    pycuda_context()
    import pycuda.gpuarray as ga

    c = cupy.asarray(host)
    return {"cupy": c, "torch": torch.as_tensor(host, device="cuda"), "pycuda": ga.to_gpu(host),
            "numba": numba_cuda.to_device(host), "interface": Interface(c)}


def per_call_us(calls_by_kind: dict, calls: int, rounds: int) -> dict:
    """Median µs per call of each kind's call: `rounds` rounds, each timing one batch of `calls` back-to-back calls of
    every kind in turn, so a slow spell of the machine falls on all kinds alike."""
    import cupy

    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for fn in calls_by_kind.values():
        for _ in range(3):
            fn()
    times = {name: [] for name in calls_by_kind}
    for _ in range(rounds):
        for name, fn in calls_by_kind.items():
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            times[name].append(cupy.cuda.get_elapsed_time(start, end) * 1e3 / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--dtype", default="int32")
    args = parser.parse_args(argv)
    reason = pyscan.gpu_unavailable_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 3
    names = ["cupy", "torch", "pycuda", "numba", "interface"]
    print(f"{pyscan.device_name()}: per-call us, {args.dtype}, batches of {args.calls} back-to-back calls, "
          f"the kinds in turn, median of {args.rounds} rounds; ratio = kind / cupy")
    print(f"{'call':<8}{'n':>10}" + "".join(f"{k:>11}" for k in names) + "   worst/cupy")
    worst = {}
    for fname in ("scan", "reduce"):
        fn = getattr(pyscan, fname)
        for k in range(10, 23, 2):
            host = np.random.default_rng(k).integers(-9, 9, 2**k).astype(args.dtype)
            arrays = kinds(host)
            us = per_call_us({name: (lambda a=a, f=fn: f(a)) for name, a in arrays.items()}, args.calls, args.rounds)
            ratio = max(us[name] / us["cupy"] for name in names[1:])
            worst[fname] = max(worst.get(fname, 0), max(us[n] / us["cupy"] for n in ("pycuda", "numba", "interface")))
            print(f"{fname:<8}{2**k:>10}" + "".join(f"{us[n]:>11.2f}" for n in names) + f"   {ratio:.2f}")
    print("worst GPUArray / Numba / interface against CuPy: " + ", ".join(f"{f} {r:.2f}" for f, r in worst.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
