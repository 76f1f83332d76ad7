"""Host time of the parts of a public call, each timed alone over many back-to-back repetitions (microseconds each):
the launch through cuda.core, pyscan's Kernel wrapper, the context check, reading an array, allocating the result,
and the whole public calls beside torch's.  Run on a GPU host: python pyscan_tools/lab/call_parts.py"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pyscan  # noqa: E402
from pyscan.runtime import arrays, driver  # noqa: E402
from pyscan.runtime.loader import get_kernel  # noqa: E402


def us(fn, reps=20000):
    for _ in range(200):
        fn()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps * 1e6)
    return best


def main():
    import cupy
    import torch

    core, cu = driver.ready()
    t = torch.arange(1024, dtype=torch.int32, device="cuda")
    c = cupy.arange(1024, dtype=cupy.int32)
    out = torch.empty_like(t)
    fn = get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE="int")
    config = core.LaunchConfig(grid=(4, 1, 1), block=(256, 1, 1), shmem_size=0)
    stream = driver.stream(0)
    context, geometry = driver.primary(0), fn.config(4, 256)
    import pycuda.gpuarray as ga
    from numba import cuda as numba_cuda

    pyscan.pycuda_context()
    i32, g, nb = np.dtype(np.int32), ga.to_gpu(np.arange(1024, dtype=np.int32)), numba_cuda.to_device(np.arange(1024))
    pyscan.reduce(g), pyscan.reduce(nb)  # their kinds seen: the calls below take ready()
    args = (out.data_ptr(), t.data_ptr(), np.int32(2), np.int64(1024))
    rows = [
        ("cuda.core launch, config and args ready", lambda: core.launch(stream, config, fn.kernel, *args)),
        ("pyscan Kernel.launch", lambda: fn.launch(0, (4, 1, 1), (256, 1, 1), args)),
        ("pyscan Kernel.launch_typed, geometry ready", lambda: fn.launch_typed(context, 0, geometry, *args)),
        ("arrays.TORCH.ready / CUPY.ready", lambda: (arrays.TORCH.ready(t), arrays.CUPY.ready(c))),
        ("arrays.TORCH.new(0-d)", lambda: arrays.TORCH.new(t, (), np.dtype(np.int32), 0, 0)),
        ("arrays.CUPY.new(0-d)", lambda: arrays.CUPY.new(c, (), np.dtype(np.int32), 0, 0)),
        ("arrays.GPUARRAY.ready / .new(0-d)", lambda: (arrays.GPUARRAY.ready(g), arrays.GPUARRAY.new(g, (), i32, 0, 0))),
        ("arrays.NUMBA.ready / .new(0-d)", lambda: (arrays.NUMBA.ready(nb), arrays.NUMBA.new(nb, (), i32, 0, 0))),
        ("driver.allocate(4 bytes)", lambda: driver.allocate(4, 0, 0)),
        ("pyscan.reduce(GPUArray) / (Numba)", lambda: (pyscan.reduce(g), pyscan.reduce(nb))),
        ("cuCtxGetCurrent (cuda.bindings)", lambda: cu.cuCtxGetCurrent()),
        ("driver.enter + leave", lambda: driver.leave(driver.enter(0))),
        ("begin(torch)", lambda: arrays.begin(t, what="x", dtypes=(np.int32,))),
        ("begin(cupy)", lambda: arrays.begin(c, what="x", dtypes=(np.int32,))),
        ("torch.empty_like", lambda: torch.empty_like(t)),
        ("cupy.empty", lambda: cupy.empty((1024,), np.int32)),
        ("torch raw stream", lambda: torch._C._cuda_getCurrentRawStream(0)),
        ("cupy current stream ptr", lambda: cupy.cuda.get_current_stream(0).ptr),
        ("pyscan.scan(torch)", lambda: pyscan.scan(t)),
        ("pyscan.scan(cupy)", lambda: pyscan.scan(c)),
        ("pyscan.reduce(torch)", lambda: pyscan.reduce(t)),
        ("pyscan.reduce(cupy)", lambda: pyscan.reduce(c)),
        ("torch.cumsum", lambda: torch.cumsum(t, 0)),
        ("torch.sum", lambda: torch.sum(t)),
    ]
    from pyscan.reductions import fast
    from pyscan.scans import decoupled_lookback as dl
    from pyscan.types import ELEMENT_TYPES

    for name, x in (("torch", t), ("cupy", c)):
        call = arrays.begin(x, what="x", dtypes=ELEMENT_TYPES)
        call.__enter__()
        result = call.result(call.shape, call.dtype)
        scalar = call.empty((), call.dtype)
        rows += [
            (f"{name}: begin(ELEMENT_TYPES)", lambda x=x: arrays.begin(x, what="x", dtypes=ELEMENT_TYPES)),
            (f"{name}: call enter + exit", lambda call=call: call.__exit__(call.__enter__())),
            (f"{name}: call.result", lambda call=call: call.result(call.shape, call.dtype)),
            (f"{name}: call.empty(())", lambda call=call: call.empty((), call.dtype)),
            (f"{name}: dl.launch", lambda call=call, r=result: dl.launch(r.gpudata, call.x.gpudata, call.size,
                                                                           call.dtype, "add", False, call.device,
                                                                           call.stream)),
            (f"{name}: fast.launch_into", lambda call=call, r=scalar: fast.launch_into(
                r.gpudata, call.x.gpudata, call.size, call.dtype, "add", call.device, call.stream)),
            (f"{name}: call.finish", lambda call=call, r=result: call.finish(r)),
            (f"{name}: call.finish_scalar", lambda call=call, r=scalar: call.finish_scalar(r)),
        ]
    for name, f in rows:
        value = us(f)
        torch.cuda.synchronize()
        print(f"{name:<42}{value:8.2f} us")


if __name__ == "__main__":
    main()
