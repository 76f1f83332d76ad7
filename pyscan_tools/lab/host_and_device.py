"""Where a small public call's time goes: for pyscan.scan / pyscan.reduce on each kind of array, and torch's and
CuPy's own calls beside them, the host's time per call (perf_counter around back-to-back calls that do not fill the
launch queue), the time per call of the same batch between CUDA events (what `bench` reports), and one call alone
between events after the GPU went idle (its kernels' device time plus the launch latency).  A call whose batch time
is near its host time is bound by the host; one near its alone time by the device.  Public calls only, so the same
script times an older checkout (PYTHONPATH=that checkout).
Run on a GPU host: python pyscan_tools/lab/host_and_device.py [--calls 200] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def calls(op, c, t, g, nb):
    """(name, call) rows for one input: pyscan's on each kind, torch's and CuPy's."""
    import cupy
    import torch

    import pyscan

    torch_op = {"add": torch.sum, "max": torch.amax}[op]
    cupy_op = {"add": cupy.sum, "max": cupy.max}[op]
    rows = [(f"pyscan.reduce {op} cupy", lambda: pyscan.reduce(c, op=op)),
            (f"pyscan.reduce {op} torch", lambda: pyscan.reduce(t, op=op)),
            (f"pyscan.reduce {op} numba", lambda: pyscan.reduce(nb, op=op)),
            (f"pyscan.reduce {op} pycuda", lambda: pyscan.reduce(g, op=op)),
            (f"{torch_op.__name__} torch", lambda: torch_op(t)),
            (f"cupy.{cupy_op.__name__} cupy", lambda: cupy_op(c))]
    if op == "add":
        rows += [("pyscan.scan cupy", lambda: pyscan.scan(c)), ("pyscan.scan torch", lambda: pyscan.scan(t)),
                 ("pyscan.scan numba", lambda: pyscan.scan(nb)), ("torch.cumsum", lambda: torch.cumsum(t, 0))]
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="*", default=[2**10, 2**16, 2**22])
    args = parser.parse_args()

    import cupy
    import torch
    from numba import cuda as numba_cuda

    import pyscan

    if hasattr(pyscan, "pycuda_context"):
        pyscan.pycuda_context()
    else:  # an older checkout: its pycuda context set-up
        from pyscan import gpu

        gpu.driver()
    import pycuda.gpuarray as ga

    start, end = cupy.cuda.Event(), cupy.cuda.Event()

    def measure(fn):
        for _ in range(3):
            fn()
        cupy.cuda.Device().synchronize()
        host, batch, alone = [], [], []
        for _ in range(args.rounds):
            cupy.cuda.Device().synchronize()
            t0 = time.perf_counter()
            start.record()
            for _ in range(args.calls):
                fn()
            end.record()
            host.append((time.perf_counter() - t0) / args.calls * 1e6)
            end.synchronize()
            batch.append(cupy.cuda.get_elapsed_time(start, end) / args.calls * 1e3)
            singles = []
            for _ in range(20):
                cupy.cuda.Device().synchronize()
                start.record()
                fn()
                end.record()
                end.synchronize()
                singles.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
            alone.append(min(singles))
        return statistics.median(host), statistics.median(batch), statistics.median(alone)

    print(f"{torch.cuda.get_device_name()}: us per call, median of {args.rounds} rounds of {args.calls} calls")
    print(f"{'call':<34}{'n':>9}{'host':>8}{'batch':>8}{'alone':>8}")
    for dtype, op in ((np.int32, "add"), (np.int32, "max"), (np.float64, "max")):
        for n in args.sizes:
            host_x = (np.arange(n) % 7 - 3).astype(dtype)
            rows = calls(op, cupy.asarray(host_x), torch.as_tensor(host_x, device="cuda"), ga.to_gpu(host_x),
                         numba_cuda.to_device(host_x))
            for name, fn in rows:
                h, b, a = measure(fn)
                print(f"{name + ' ' + np.dtype(dtype).name:<34}{n:>9}{h:8.2f}{b:8.2f}{a:8.2f}", flush=True)


if __name__ == "__main__":
    main()
