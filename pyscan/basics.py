"""Hands-On GPU Programming with Python and CUDA, ch. 4: pycuda's SourceModule on the files of kernels/, and the first
SourceModule kernel (scalar multiply)."""

from __future__ import annotations

import threading

import numpy as np

from .runtime import arrays, driver, loader
from .runtime.loader import build_source, compile_error, get_kernel
from .types import ELEMENT_TYPES, c_type

BLOCK = 256
# scalar_multiply's dtypes: the kernel takes `a` as a kernel argument of ELEM_TYPE, which pycuda packs from a NumPy
# scalar of these (no __half or bfloat16 scalars, no bool arithmetic), as Hands-On ch. 4's float kernel generalised
MULTIPLY_DTYPES = {np.dtype(d): ELEMENT_TYPES[np.dtype(d)] for d in (np.int32, np.int64, np.float32, np.float64)}

_pycuda_threads = threading.local()


def pycuda_context(ordinal: int | None = None):
    """pycuda.driver with device `ordinal`'s primary context (default: NumPy input's device) current on pycuda's
    stack in this thread, for code that drives pycuda itself (SourceModule, pycuda's GPUArrays and events).  A thread
    other than the main one pops it before it ends (`pycuda.driver.Context.pop()`)."""
    driver.ready()
    import pycuda.driver as drv

    if getattr(_pycuda_threads, "context", None) is None:
        drv.init()
        if drv.Context.get_current() is None:
            context = drv.Device(driver.default_device() if ordinal is None else ordinal).retain_primary_context()
            context.push()
            _pycuda_threads.context = context
            if threading.current_thread() is threading.main_thread():
                import atexit

                atexit.register(_pop_pycuda_context, context)
        else:
            _pycuda_threads.context = drv.Context.get_current()
    return drv


def _pop_pycuda_context(context):
    import gc

    gc.collect()  # GPUArrays nobody holds are freed while their context is still current
    try:
        context.pop()
    except Exception:  # noqa: BLE001 - at exit; pycuda may have popped it already
        pass


def source_module(relpath: str, *, options: tuple = (), **defines):
    """pycuda's own `SourceModule` of a kernel file, specialised by `defines` (the loader's #defines and inlined
    includes): Hands-On ch. 4's `SourceModule` -> `get_function` -> launch, on the files of kernels/.

        mod = pyscan.source_module("basics/scalar_multiply.cu", ELEM_TYPE="float")
        fn = mod.get_function("scalar_multiply")
        fn(out_gpu, x_gpu, np.float32(2), np.int64(n), block=(256, 1, 1), grid=(40, 1, 1))

    Made in pycuda's current context (pyscan's pycuda_context() pushes the primary one if there is none)."""
    drv = pycuda_context()
    from pycuda.compiler import SourceModule

    source = build_source(relpath, **defines)
    try:
        return SourceModule(source, options=list(loader.COMPILE_OPTIONS) + list(options), no_extern_c=True)
    except drv.CompileError as exc:
        raise compile_error(relpath, defines, exc) from None


def scalar_multiply(x, a, *, out=None, stream=None):
    """a * x elementwise on the GPU (kernels/basics/scalar_multiply.cu).

    x: a 1-D NumPy array (non-contiguous ones are copied) or device array (pycuda GPUArray, CuPy, torch CUDA
    tensor, Numba, any __cuda_array_interface__ object; C-contiguous) of int32, int64, float32 or float64.
    a: a number, cast to x's dtype (an integer array takes only an integral a).  Returns an array of x's kind
    (pyscan.runtime.arrays); out: one of x's kind, shape and dtype to write into (may be x).  stream: as for pyscan.scan.
    """
    call = arrays.begin(x, what="scalar_multiply: x", dtypes=MULTIPLY_DTYPES, stream=stream)
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, float, np.integer, np.floating)):
        raise TypeError(f"scalar_multiply: a must be a real number, got {arrays.describe(a)}")
    if call.dtype.kind == "i" and float(a) != int(a):
        raise ValueError(f"scalar_multiply: a = {a!r} is not integral, but x has dtype {call.dtype}")
    call.expect_out(out, call.shape, call.dtype, "scalar_multiply: out")
    with call:
        result = call.result(call.shape, call.dtype)
        n = call.size
        if n:
            fn = get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE=c_type(call.dtype),
                            device=call.device)
            blocks = min((n + BLOCK - 1) // BLOCK, 32 * driver.multiprocessor_count(call.device))
            fn.prepared_async_call((blocks, 1, 1), (BLOCK, 1, 1), call.stream, result.gpudata, call.x.gpudata,
                                   call.dtype.type(a), np.int64(n))
        return call.finish(result)
