"""Prefix scan (PMPP ch. 11, Hands-On ch. 4): every algorithm of the books behind one function.

    pyscan.scan(x, *, algorithm="auto", exclusive=False, op="add")

Each algorithm lives in a module of this package that registers itself in SCANS with its driver, its kernel
files and its NumPy step-model (see pyscan.registry).  A driver has the signature

    driver(x: GPUArray, out: GPUArray, *, op: str, exclusive: bool) -> int   # the number of kernel launches

and is only called with validated, contiguous, non-empty 1-D arrays of a supported dtype.  A model has

    model(x: np.ndarray, *, op="add", exclusive=False, return_steps=False)
        -> result, or (result, steps: list[Step]) with return_steps
"""

from __future__ import annotations

import numpy as np

from .. import arrays, gpu
from ..types import ELEMENT_TYPES, SUPPORTED_DTYPES, check_op

# Each module registers its algorithms; the registry's order (scans/registry.py) is the order of SCAN_ALGORITHMS.
from . import blelloch, decoupled_lookback, hierarchical, single_pass, single_section  # noqa: F401
from .registry import SCANS

SCAN_ALGORITHMS = SCANS.names()

# The kernels index elements with 32-bit ints in places (block and section indices, thread offsets); every
# driver supports lengths up to this.
MAX_LENGTH = 2**31 - 1


def choose_auto(n: int, dtype=None, op=None) -> str:
    """The algorithm `auto` runs on n elements: the first of the registry's auto priority that takes n
    (scans/registry.py).  Every registered scan takes every dtype and operator, so dtype and op do not change
    the choice."""
    return SCANS.choose(n)


def scan(x, *, algorithm="auto", exclusive=False, op="add"):
    """Inclusive (or exclusive) prefix scan of a 1-D array with `op` ("add", "max" or "min").

    x: a NumPy array (the result is a NumPy array) or a pycuda GPUArray (the result is a new GPUArray; nothing
    goes through the host).  dtypes: int32, int64, float32, float64.  A NumPy array that is not contiguous is
    copied first; a GPUArray must be contiguous.  Integer add wraps like np.cumsum(x, dtype=x.dtype).  An
    exclusive scan starts from the operator's identity (0; the dtype's lowest value or -inf for max; its
    highest or +inf for min).  Every algorithm accepts every length, 0 included.
    """
    if algorithm != "auto":
        SCANS.get(algorithm)  # unknown names fail before anything else
    check_op(op)
    if not isinstance(exclusive, (bool, np.bool_)):
        raise TypeError(f"exclusive must be True or False, got {arrays.describe(exclusive)}")
    x, on_gpu = arrays.check_array(x, dtypes=ELEMENT_TYPES, what="scan: x", max_length=MAX_LENGTH)
    name = choose_auto(x.size, x.dtype, op) if algorithm == "auto" else algorithm
    gpu.driver()
    x_dev = arrays.to_device(x)
    out = arrays.empty(x.shape, x.dtype)
    if x.size:
        SCANS.get(name).driver(x_dev, out, op=op, exclusive=bool(exclusive))
    return arrays.like_input(out, on_gpu)


__all__ = ["SCANS", "SCAN_ALGORITHMS", "SUPPORTED_DTYPES", "scan"]
