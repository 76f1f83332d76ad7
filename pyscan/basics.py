"""Hands-On GPU Programming with Python and CUDA, ch. 4: the first SourceModule kernel."""

from __future__ import annotations

import numpy as np

from . import arrays, gpu
from .loader import get_kernel
from .types import ELEMENT_TYPES, c_type

BLOCK = 256


def scalar_multiply(x, a):
    """a * x elementwise on the GPU (kernels/basics/scalar_multiply.cu).

    x: a 1-D NumPy array or GPUArray of int32, int64, float32 or float64 (non-contiguous NumPy input is
    copied).  a: a number, cast to x's dtype (an integer array takes only an integral a).  Returns the same
    kind as x.
    """
    x, on_gpu = arrays.check_array(x, dtypes=ELEMENT_TYPES, what="scalar_multiply: x")
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, float, np.integer, np.floating)):
        raise TypeError(f"scalar_multiply: a must be a real number, got {arrays.describe(a)}")
    if x.dtype.kind == "i" and float(a) != int(a):
        raise ValueError(f"scalar_multiply: a = {a!r} is not integral, but x has dtype {x.dtype}")
    gpu.driver()
    x_dev = arrays.to_device(x)
    out = arrays.empty(x.shape, x.dtype)
    n = x.size
    if n:
        fn = get_kernel("basics/scalar_multiply.cu", "scalar_multiply", ELEM_TYPE=c_type(x.dtype))
        blocks = min((n + BLOCK - 1) // BLOCK, 32 * gpu.multiprocessor_count())
        fn.prepared_call((blocks, 1, 1), (BLOCK, 1, 1), out.gpudata, x_dev.gpudata, x.dtype.type(a), np.int64(n))
    return arrays.like_input(out, on_gpu)
