"""Hands-On GPU Programming with Python and CUDA, ch. 4: the first SourceModule kernel."""

from __future__ import annotations

import numpy as np

from .runtime import arrays, driver
from .runtime.loader import get_kernel
from .types import ELEMENT_TYPES, c_type

BLOCK = 256


def scalar_multiply(x, a, *, out=None, stream=None):
    """a * x elementwise on the GPU (kernels/basics/scalar_multiply.cu).

    x: a 1-D NumPy array (non-contiguous ones are copied) or device array (pycuda GPUArray, CuPy, torch CUDA
    tensor, Numba, any __cuda_array_interface__ object; C-contiguous) of int32, int64, float32 or float64.
    a: a number, cast to x's dtype (an integer array takes only an integral a).  Returns an array of x's kind
    (pyscan.runtime.arrays); out: one of x's kind, shape and dtype to write into (may be x).  stream: as for pyscan.scan.
    """
    call = arrays.begin(x, what="scalar_multiply: x", dtypes=ELEMENT_TYPES, stream=stream)
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
