"""Checking what users pass in, and handing results back in the kind they came in.

NumPy in -> NumPy out (copied to the device and back); pycuda GPUArray in -> GPUArray out, no host round
trip.  Everything is validated before anything is launched, with a message that says what was expected and
what came.
"""

from __future__ import annotations

import numpy as np

from . import gpu

INT32_MAX = 2**31 - 1


def describe(x) -> str:
    if isinstance(x, np.ndarray) or gpu.is_gpuarray(x):
        return f"{type(x).__module__}.{type(x).__name__} of dtype {x.dtype} and shape {tuple(x.shape)}"
    return f"{type(x).__name__} {x!r}"[:200]


def check_array(x, *, dtypes, ndim=1, what="x", max_length=None):
    """Validate x; return (array, on_gpu).  NumPy input that is not C-contiguous is copied (never refused),
    GPUArray input must be contiguous (copying it would hide a slow path), and nothing is modified."""
    on_gpu = gpu.is_gpuarray(x)
    if not on_gpu and not isinstance(x, np.ndarray):
        raise TypeError(f"{what}: expected a numpy.ndarray or a pycuda GPUArray, got {describe(x)}")
    if len(x.shape) != ndim:
        raise ValueError(f"{what}: expected a {ndim}-D array, got shape {tuple(x.shape)}")
    dtype = np.dtype(x.dtype)
    if dtype not in [np.dtype(d) for d in dtypes]:
        names = ", ".join(str(np.dtype(d)) for d in dtypes)
        raise TypeError(f"{what}: unsupported dtype {dtype}: expected one of {names}")
    if max_length is not None and x.size > max_length:
        raise ValueError(f"{what}: {x.size} elements is more than the kernels' limit of {max_length}")
    if on_gpu:
        if not x.flags.c_contiguous:
            raise ValueError(f"{what}: the GPUArray is not contiguous; pass a contiguous one (e.g. x.copy())")
        return x, True
    return np.ascontiguousarray(x), False


def to_device(x):
    """A GPUArray holding x (x itself if it is one already)."""
    if gpu.is_gpuarray(x):
        return x
    return gpu.gpuarray().to_gpu(x)


_pool = None


def device_pool():
    """pyscan's device memory pool (pycuda.tools.DeviceMemoryPool): results and scratch buffers come from it, so
    repeated calls reuse memory instead of paying cudaMalloc/cudaFree each time (PyCUDA's scan and reduction
    kernels leave that to the caller)."""
    global _pool
    if _pool is None:
        gpu.driver()
        from pycuda.tools import DeviceMemoryPool

        _pool = DeviceMemoryPool()
    return _pool


def free_pool():
    """Give the memory the pool holds (but no live array uses) back to the driver."""
    if _pool is not None:
        _pool.free_held()


def empty(shape, dtype):
    """An uninitialised GPUArray from pyscan's memory pool."""
    return gpu.gpuarray().empty(shape, dtype, allocator=device_pool().allocate)


def like_input(result, on_gpu: bool):
    """Hand a device result back as the input came: GPUArray for GPUArray input, NumPy otherwise."""
    return result if on_gpu else result.get()
