"""Small helpers the pattern modules share: results as NumPy, device uploads, the kind of a result."""

from __future__ import annotations

import numpy as np


def to_numpy(result) -> np.ndarray:
    """A result of any kind as NumPy: NumPy and scalars as they are, CuPy and pycuda by .get(), torch by .cpu()."""
    if isinstance(result, (np.ndarray, np.generic)):
        return np.asarray(result)
    module = type(result).__module__.split(".")[0]
    if module == "torch":
        return result.detach().cpu().numpy()
    if hasattr(result, "get"):
        return np.asarray(result.get())
    if hasattr(result, "copy_to_host"):  # Numba
        return result.copy_to_host()
    return np.asarray(result)


def upload(host: np.ndarray):
    """A pycuda GPUArray holding host (the check's device inputs)."""
    from pyscan.basics import pycuda_context

    pycuda_context()
    import pycuda.gpuarray as ga

    return ga.to_gpu(host)


def kind_problem(out, on_device: bool) -> str:
    """'' if the result has the input's kind (a device array for a device input, NumPy for NumPy)."""
    if on_device and isinstance(out, (np.ndarray, np.generic)):
        return f"device array in, but {type(out).__name__} out"
    if not on_device and not isinstance(out, (np.ndarray, np.generic)):
        return f"NumPy in, but {type(out).__module__}.{type(out).__name__} out"
    return ""


def calling(function: str):
    """The public call of pyscan.<function>(x, algorithm=..., op=...) as (call, result) (see returning).  The
    result stays in x's dtype, as the peers' rows keep theirs (bench/peers.py): where NumPy's rule would widen it
    (int32 add gives int64) the call passes dtype=x.dtype, so every row moves the same bytes."""
    from pyscan.types import as_dtype, result_dtype

    def public_call(pyscan, x, op, algorithm):
        fn = getattr(pyscan, function)
        same = result_dtype(as_dtype(x.dtype), op) == as_dtype(x.dtype)
        if same:
            return returning(lambda: fn(x, algorithm=algorithm, op=op))
        return returning(lambda: fn(x, algorithm=algorithm, op=op, dtype=x.dtype))
    return public_call


def returning(fn):
    """(call, result): call() runs fn and keeps what it returned; result() gives the last one."""
    box = {}

    def call():
        box["r"] = fn()
    return call, lambda: box["r"]
