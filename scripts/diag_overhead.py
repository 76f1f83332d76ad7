"""Lab check: where a small pyscan call spends its host time (run on a GPU host with torch)."""
import time

import numpy as np
import torch

import pyscan
from pyscan import arrays, cuda, gpu, streams
from pyscan.scans import decoupled_lookback as dl

t = torch.arange(1024, device="cuda", dtype=torch.int32)
pyscan.scan(t)
pyscan.reduce(t)
torch.cuda.synchronize()
N = 5000


def per_call(label, fn):
    fn()
    start = time.perf_counter()
    for _ in range(N):
        fn()
    torch.cuda.synchronize()
    print(f"{label:40s} {(time.perf_counter() - start) / N * 1e6:7.2f} us", flush=True)


per_call("torch.cumsum", lambda: torch.cumsum(t, 0))
per_call("torch.empty", lambda: torch.empty(1024, dtype=torch.int32, device="cuda"))
per_call("torch.empty(device obj)", lambda: torch.empty(1024, dtype=torch.int32, device=t.device))
per_call("torch current raw stream", lambda: torch._C._cuda_getCurrentRawStream(0))
per_call("t.data_ptr/shape/is_contiguous/get_device",
         lambda: (t.data_ptr(), tuple(t.shape), t.is_contiguous(), t.get_device(), t.dtype))
per_call("cuda.current_context", cuda.current_context)
per_call("arrays.kind_of", lambda: arrays.kind_of(t))
per_call("arrays.begin", lambda: arrays.begin(t, what="x", dtypes=pyscan.types.ELEMENT_TYPES))
call = arrays.begin(t, what="x", dtypes=pyscan.types.ELEMENT_TYPES)


def enter_exit():
    with call:
        pass


per_call("Call enter+exit", enter_exit)


def enter_alloc():
    with call:
        call.allocate((1024,), np.int32)


per_call("Call enter+allocate+exit", enter_alloc)
fn, shared = dl._kernel(np.dtype(np.int32), "add", True)
out = torch.empty_like(t)
per_call("Kernel.prepared_call (scan tile)", lambda: fn.prepared_call(
    (1, 1, 1), (256, 1, 1), out.data_ptr(), t.data_ptr(), np.int64(1024), np.int32(0), 0, 0, np.int64(1),
    np.uint32(0), shared_size=shared))
per_call("_pack only", lambda: fn._pack((out.data_ptr(), t.data_ptr(), 1024, 0, 0, 0, 1, 0)))
per_call("launching_on", lambda: streams.launching_on(0).__enter__().__exit__())
per_call("gpu.enter/leave_device", lambda: gpu.leave_device(gpu.enter_device(0)[0]))
per_call("pyscan.scan", lambda: pyscan.scan(t))
per_call("pyscan.reduce", lambda: pyscan.reduce(t))
per_call("pyscan.scan(out=)", lambda: pyscan.scan(t, out=out))
x = np.arange(1024, dtype=np.int32)
per_call("pyscan.scan numpy", lambda: pyscan.scan(x))
