"""Host time of the pieces under a small call, each as A/B candidates, timed in turns (a round times a batch of every
row, so a slow spell of a shared host falls on all rows alike): a launch of the fast reduction's kernel by its
CUkernel (the library handle cuda.core loads) or by the CUfunction of the primary context; 4-byte allocations from
the device's pool through cuda.core or through cuda.bindings; the array kinds' readers and result makers; the
public calls.  Host µs per call, median of the rounds.
Run on a GPU host: python pyscan_tools/lab/alloc_launch_ab.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    import cupy
    import torch
    from numba import cuda as numba_cuda

    import pyscan
    from pyscan.reductions import fast
    from pyscan.runtime import arrays, driver, loader

    pyscan.pycuda_context()
    import pycuda.gpuarray as ga

    _, cu = driver.ready()
    host = np.arange(1024, dtype=np.int32)
    i32 = np.dtype(np.int32)
    t, c, g, nb = torch.as_tensor(host, device="cuda"), cupy.asarray(host), ga.to_gpu(host), numba_cuda.to_device(host)
    for x in (t, c, g, nb):
        pyscan.reduce(x)
    plan = fast.plan(i32, "add", 0)
    kernel = plan.small
    context = plan.context
    function = int(driver._check(cu.cuKernelGetFunction(kernel.kernel.handle), "cuKernelGetFunction"))
    out = torch.empty((), dtype=torch.int32, device="cuda")
    geometry, types = kernel.config(1, fast.FAST_BLOCK), kernel.arg_types
    launch = loader.launch_raw
    largs = (out.data_ptr(), 0, 0, t.data_ptr(), 1024)
    pool = driver.pool(0)
    pool_handle = pool.handle
    zero_d = torch.empty((), dtype=torch.int32, device="cuda")

    def bindings_alloc():
        err, address = cu.cuMemAllocFromPoolAsync(4, pool_handle, 0)
        cu.cuMemFreeAsync(address, 0)

    rows = {
        "launch by CUkernel, context given": lambda: launch(context, kernel.function, 0, geometry, types, *largs),
        "launch by CUfunction, context given": lambda: launch(context, function, 0, geometry, types, *largs),
        "launch by CUfunction, context 0": lambda: launch(0, function, 0, geometry, types, *largs),
        "allocate 4 B: cuda.core (driver.allocate)": lambda: driver.allocate(4, 0, 0),
        "allocate 4 B: cuda.bindings pool alloc+free": bindings_alloc,
        "torch.empty_like(0-d)": lambda: torch.empty_like(zero_d),
        "cupy.empty(())": lambda: cupy.empty((), i32),
        "TORCH.ready": lambda: arrays.TORCH.ready(t),
        "TORCH.new(0-d)": lambda: arrays.TORCH.new(t, (), i32, 0, 0),
        "CUPY.ready": lambda: arrays.CUPY.ready(c),
        "CUPY.new(0-d)": lambda: arrays.CUPY.new(c, (), i32, 0, 0),
        "NUMBA.ready": lambda: arrays.NUMBA.ready(nb),
        "NUMBA.new(0-d)": lambda: arrays.NUMBA.new(nb, (), i32, 0, 0),
        "GPUARRAY.ready": lambda: arrays.GPUARRAY.ready(g),
        "GPUARRAY.new(0-d)": lambda: arrays.GPUARRAY.new(g, (), i32, 0, 0),
        "pyscan.reduce(torch)": lambda: pyscan.reduce(t),
        "pyscan.reduce(cupy)": lambda: pyscan.reduce(c),
        "pyscan.reduce(numba)": lambda: pyscan.reduce(nb),
        "pyscan.reduce(pycuda)": lambda: pyscan.reduce(g),
        "pyscan.scan(torch)": lambda: pyscan.scan(t),
        "pyscan.scan(numba)": lambda: pyscan.scan(nb),
        "torch.amax": lambda: torch.amax(t),
        "torch.sum": lambda: torch.sum(t),
    }
    times = {name: [] for name in rows}
    for fn in rows.values():
        for _ in range(20):
            fn()
    for _ in range(args.rounds):
        for name, fn in rows.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.calls):
                fn()
            times[name].append((time.perf_counter() - t0) / args.calls * 1e6)
    torch.cuda.synchronize()
    print(f"{torch.cuda.get_device_name()}: host us per call, median of {args.rounds} rounds of {args.calls}, in turns")
    for name, values in times.items():
        print(f"{name:<46}{statistics.median(values):8.2f}{min(values):8.2f}")


if __name__ == "__main__":
    main()
