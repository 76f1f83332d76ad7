"""Pieces shared by the reduction drivers and models: block sizing, identities, checks, reading a result back."""

from __future__ import annotations

import numpy as np

from ..runtime import arrays
from ..scans.steps import check_count_n as count_n
from ..types import COMPUTE_TYPES, check_op, identity, ufunc

MAX_BLOCK = 1024  # threads per block of the book kernels (PMPP uses 1024-thread blocks)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def log2(k: int) -> int:
    """log2 of a power of two."""
    return k.bit_length() - 1


def block_for(n: int, per_thread: int) -> int:
    """Threads per block for a segment kernel where each thread starts with `per_thread` elements: the smallest
    power of two that covers n elements in one block, at most MAX_BLOCK.  Small arrays get small blocks (an
    8-element reduction runs 4 threads and 3 steps, not 1024 threads and 11 steps); large ones 1024 threads."""
    need = ceil_div(n, per_thread)
    return min(MAX_BLOCK, 1 << max(0, (need - 1).bit_length()))


def check_model_input(x, op, what):
    """A model's input: a non-empty 1-D NumPy array of a supported dtype (copied: models may work in place)."""
    check_op(op)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{what}: the model takes a numpy.ndarray, got {arrays.describe(x)}")
    x, _ = arrays.check_array(x, dtypes=tuple(set(COMPUTE_TYPES.values())), what=what)
    if x.size == 0:
        raise ValueError(f"{what}: the model needs at least one element")
    return x.copy()


def fold_in_order(values: np.ndarray, op: str):
    """op over `values` one after the other, starting from the identity: what the atomics of one output do (in
    block order here; on the GPU in arrival order).  ufunc.accumulate is sequential (np.add.reduce is not)."""
    start = np.array([identity(op, values.dtype)], values.dtype)
    return ufunc(op).accumulate(np.concatenate([start, values]), dtype=values.dtype)[-1]


def scalar_result(out, call) -> np.generic:
    """The one element of a device array as a NumPy scalar (one small device-to-host copy on the call's stream;
    waits for it)."""
    return call.to_host(out).reshape(-1)[0]


def check_count_n(name: str, n) -> int:
    return count_n(name, n, 2 * MAX_BLOCK, "one block of n/2 threads")


def warps_of(threads: np.ndarray, block: int) -> int:
    """Warps that hold at least one of these (block-major global) thread ids; a block smaller than a warp is a
    partial warp of its own."""
    warps_per_block = ceil_div(block, 32)
    return int(np.unique((threads // block) * warps_per_block + (threads % block) // 32).size)
