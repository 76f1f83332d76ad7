"""Lab check: where a small pyscan call spends its host time, beside the peers' calls (run on a GPU host with torch
and CuPy).  Each row: microseconds per call over a long loop of calls, then one synchronize ("loop": the slower of
host and device shows), and the host's own time per call over batches of 200 calls, fewer than the launch queue
holds, timed before the synchronize ("host")."""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cupy  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import pyscan  # noqa: E402
from pyscan import arrays, cuda, gpu, loader, native, streams  # noqa: E402
from pyscan.reductions import fast  # noqa: E402
from pyscan.scans import decoupled_lookback as dl  # noqa: E402
from pyscan.types import ELEMENT_TYPES  # noqa: E402

t = torch.arange(1024, device="cuda", dtype=torch.int32)
c = cupy.arange(1024, dtype=cupy.int32)
for x in (t, c):
    pyscan.scan(x)
    pyscan.reduce(x)
torch.cuda.synchronize()
N = 20000
print("launch:", "C (pyscan.native)" if native.why_not() is None else f"ctypes ({native.why_not()})")


def per_call(label, fn):
    fn()
    best = host = float("inf")
    for _ in range(3):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(N // 3):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / (N // 3) * 1e6)
    for _ in range(20):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(200):
            fn()
        host = min(host, (time.perf_counter() - start) / 200 * 1e6)
    torch.cuda.synchronize()
    print(f"{label:52s} loop {best:7.2f} us   host {host:7.2f} us", flush=True)


per_call("torch.cumsum(t, 0, dtype=t.dtype) (the bench's)", lambda: torch.cumsum(t, 0, dtype=t.dtype))
per_call("torch.cumsum(t, 0) (int32 -> int64)", lambda: torch.cumsum(t, 0))
per_call("torch.sum(t, dtype=t.dtype) (the bench's)", lambda: torch.sum(t, dtype=t.dtype))
per_call("torch.sum(t) (int32 -> int64)", lambda: torch.sum(t))
per_call("torch.amax", lambda: torch.amax(t))
per_call("cupy.cumsum(c, dtype=c.dtype)", lambda: cupy.cumsum(c, dtype=c.dtype))
per_call("cupy.sum(c, dtype=c.dtype)", lambda: cupy.sum(c, dtype=c.dtype))
per_call("cupy.max", lambda: cupy.max(c))
per_call("y.copy_(t) (torch)", lambda: out.copy_(t)) if (out := torch.empty_like(t)) is not None else None
per_call("pyscan.scan(torch)", lambda: pyscan.scan(t))
per_call("pyscan.scan(cupy)", lambda: pyscan.scan(c))
per_call("pyscan.reduce(torch)", lambda: pyscan.reduce(t))
per_call("pyscan.reduce(cupy)", lambda: pyscan.reduce(c))
per_call("pyscan.reduce(torch, max)", lambda: pyscan.reduce(t, op="max"))
per_call("pyscan.scan(torch, out=)", lambda: pyscan.scan(t, out=out))
print("-- pieces")
per_call("TORCH.direct(t)", lambda: arrays.TORCH.direct(t))
per_call("CUPY.direct(c)", lambda: arrays.CUPY.direct(c))
per_call("gpu.primary_if_current(0)", lambda: gpu.primary_if_current(0))
per_call("TORCH.new_like / new_scalar", lambda: (arrays.TORCH.new_like(t, 1024, None),
                                                   arrays.TORCH.new_scalar(t, None, gpu.primary_if_current(0))))
per_call("CUPY.new_like / new_scalar", lambda: (arrays.CUPY.new_like(c, 1024, c.dtype),
                                                  arrays.CUPY.new_scalar(c, c.dtype, 0)))
kept0 = torch.empty((), dtype=torch.int32, device=t.device)
per_call("torch.empty_like(a kept 0-d tensor)", lambda: torch.empty_like(kept0))
per_call("c.flags.c_contiguous / c._c_contiguous", lambda: (c.flags.c_contiguous, c._c_contiguous))
address, n, dtype, handle, context = arrays.TORCH.direct(t)
per_call("decoupled_lookback.launch (one tile, no alloc)",
         lambda: dl.launch(out.data_ptr(), address, n, dtype, "add", False, handle, context))
per_call("fast.launch_into (no alloc)", lambda: fast.launch_into(kept0.data_ptr(), address, n, dtype, "add", handle,
                                                                 context))
per_call("torch.empty(n, dtype=, device=torch.device)", lambda: torch.empty(1024, dtype=torch.int32, device=t.device))
per_call("torch.empty((n,), dtype=, device=torch.device)",
         lambda: torch.empty((1024,), dtype=torch.int32, device=t.device))
per_call("torch.empty_like(t)", lambda: torch.empty_like(t))
per_call("t.new_empty((n,))", lambda: t.new_empty((1024,)))
per_call("torch.empty((), ...)", lambda: torch.empty((), dtype=torch.int32, device=t.device))
per_call("torch.empty([], ...)", lambda: torch.empty([], dtype=torch.int32, device=t.device))
per_call("t.new_empty(())", lambda: t.new_empty(()))
per_call("torch.empty(1, ...)", lambda: torch.empty(1, dtype=torch.int32, device=t.device))
per_call("cupy.empty((), dtype)", lambda: cupy.empty((), cupy.int32))
per_call("cupy.empty((n,), dtype)", lambda: cupy.empty((1024,), cupy.int32))
per_call("cupy.empty_like(c)", lambda: cupy.empty_like(c))
per_call("torch current raw stream", lambda: torch._C._cuda_getCurrentRawStream(0))
per_call("cupy current stream ptr", lambda: cupy.cuda.get_current_stream().ptr)
per_call("t.data_ptr/shape/is_contiguous/get_device/dtype",
         lambda: (t.data_ptr(), tuple(t.shape), t.is_contiguous(), t.get_device(), t.dtype))
per_call("cuda.current_context", cuda.current_context)
per_call("arrays.begin(torch)", lambda: arrays.begin(t, what="x", dtypes=ELEMENT_TYPES))
per_call("arrays.begin(cupy)", lambda: arrays.begin(c, what="x", dtypes=ELEMENT_TYPES))
call = arrays.begin(t, what="x", dtypes=ELEMENT_TYPES)


def enter_exit():
    with call:
        pass


def enter_alloc():
    with call:
        call.allocate((1024,), call.dtype)


per_call("Call enter+exit", enter_exit)
per_call("Call enter+allocate+exit", enter_alloc)
fn, shared = dl._kernel(np.dtype(np.int32), "add", True)
args = (out.data_ptr(), t.data_ptr(), 1024, 0, 0, 0, 1, 0)
per_call("Kernel.prepared_call (scan tile)", lambda: fn.prepared_call((1, 1, 1), (256, 1, 1), *args, shared_size=shared))
saved = loader._native_launch
loader._native_launch = False
per_call("Kernel.prepared_call through ctypes", lambda: fn.prepared_call((1, 1, 1), (256, 1, 1), *args,
                                                                         shared_size=shared))
per_call("pyscan.scan(torch) through ctypes", lambda: pyscan.scan(t))
loader._native_launch = saved
per_call("streams.launching_on", lambda: streams.launching_on(0).__enter__().__exit__())
x = np.arange(1024, dtype=np.int32)
per_call("pyscan.scan(numpy)", lambda: pyscan.scan(x))
print("-- the direct path of pyscan.reduce(t) and pyscan.scan(t), stage by stage (each row includes the ones above)")
direct_reduce = pyscan.reductions.REDUCTIONS.auto_direct()
direct_scan = pyscan.scans.SCANS.auto_direct()


def stage_view():
    kind = arrays.DIRECT_KINDS.get(type(t))
    return kind, kind.direct(t)


def stage_scalar():
    kind, (address, n, dtype, handle, context) = stage_view()
    return kind.new_scalar(t, dtype, context)


def stage_reduce():
    kind, (address, n, dtype, handle, context) = stage_view()
    native, result = kind.new_scalar(t, dtype, context)
    direct_reduce(result, address, n, dtype, "add", handle, context)
    return native


def stage_scan():
    kind, (address, n, dtype, handle, context) = stage_view()
    native, result = kind.new_like(t, n, dtype)
    direct_scan(result, address, n, dtype, "add", False, handle, context)
    return native


per_call("loop overhead (a lambda returning None)", lambda: None)
per_call("view (DIRECT_KINDS + kind.direct)", stage_view)
per_call("view + new_scalar", stage_scalar)
per_call("view + new_scalar + fast.launch_into", stage_reduce)
per_call("pyscan.reduce(t)", lambda: pyscan.reduce(t))
per_call("view + new_like + decoupled_lookback.launch", stage_scan)
per_call("pyscan.scan(t)", lambda: pyscan.scan(t))
per_call("REDUCTIONS.auto_direct()", pyscan.reductions.REDUCTIONS.auto_direct)


def whole_and_python(pattern, calls):
    """Time each (label, call) of `pattern` (pyscan.scans or pyscan.reductions) whole in C, then on the Python direct
    path (the module's C call switched off for the second pass)."""
    whole = pattern._whole_call
    for label, call in calls:
        per_call(f"{label}, whole call in C" if whole else f"{label} (no C call loaded)", call)
    pattern._whole_call = False
    for label, call in calls:
        per_call(f"{label}, Python direct path", call)
    pattern._whole_call = whole


print("-- pyscan.reduce(t): the whole call in C, and the Python direct path (the C call switched off)")
whole_and_python(pyscan.reductions, [("pyscan.reduce(t)", lambda: pyscan.reduce(t)),
                                     ("pyscan.reduce(c)", lambda: pyscan.reduce(c))])
per_call("torch.amax(t) (again, for this section)", lambda: torch.amax(t))
per_call("torch.sum(t, dtype=t.dtype) (again)", lambda: torch.sum(t, dtype=t.dtype))
print("-- pyscan.scan(t) of one tile (1024 elements): the whole call in C, and the Python direct path")
whole_and_python(pyscan.scans, [("pyscan.scan(t)", lambda: pyscan.scan(t)), ("pyscan.scan(c)", lambda: pyscan.scan(c))])
per_call("torch.cumsum(t, 0, dtype=t.dtype) (again, for this section)", lambda: torch.cumsum(t, 0, dtype=t.dtype))
per_call("y.copy_(t) (again)", lambda: out.copy_(t))
print("-- pyscan.scan of 2^16 elements (16 tiles): the whole call in C, and the Python direct path")
t16 = torch.arange(1 << 16, device="cuda", dtype=torch.int32)
c16 = cupy.arange(1 << 16, dtype=cupy.int32)
for x in (t16, c16):
    pyscan.scan(x)
    pyscan.scan(x)
whole_and_python(pyscan.scans, [("pyscan.scan(t16)", lambda: pyscan.scan(t16)),
                                ("pyscan.scan(c16)", lambda: pyscan.scan(c16))])
per_call("torch.cumsum(t16, 0, dtype=t16.dtype)", lambda: torch.cumsum(t16, 0, dtype=t16.dtype))
per_call("cupy.cumsum(c16, dtype=c16.dtype)", lambda: cupy.cumsum(c16, dtype=c16.dtype))
