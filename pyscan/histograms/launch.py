"""Launching a histogram kernel: the result buffer, the kernel and its arguments.  pycuda is imported lazily
(through pyscan.gpu), so importing this module needs only NumPy."""

from __future__ import annotations

import numpy as np

from .. import arrays, gpu
from ..loader import get_kernel
from .reference import COUNT_DTYPE, LETTER_BINS, MAX_BINS


def sms() -> int:
    """The multiprocessor count of the current device (cached per device in pyscan.gpu)."""
    return gpu.multiprocessor_count()


def zeroed_counts(nbins: int):
    """A device array of nbins uint64 zeros (pyscan.arrays.empty: the running call's kind and stream)."""
    out = arrays.empty((nbins,), COUNT_DTYPE)
    arrays.memset32(out, 0, 2 * nbins)  # 2 words per uint64
    return out


def run_kernel(relpath, function, data, bins, letters, grid, block, *, shared=0, out=None, **defines):
    """Launch `function(data, n, bins, histo)` of kernels/`relpath` on a uint8 device array and return the uint64
    counts: `out` (bins elements, zeroed here) or a new array.  With `letters`, bins must be LETTER_BINS (the kernel
    ignores it)."""
    if letters and bins != LETTER_BINS:
        raise ValueError(f"the letter histogram has {LETTER_BINS} bins, got bins={bins}")
    if not 1 <= bins <= MAX_BINS:
        raise ValueError(f"bins must be between 1 and {MAX_BINS}, got {bins}")
    fn = get_kernel(relpath, function, LETTERS=int(bool(letters)), **defines)
    if out is None:
        out = zeroed_counts(bins)
    else:
        arrays.memset32(out, 0, 2 * bins)
    fn.prepared_call((int(grid), 1, 1), (int(block), 1, 1), data.gpudata, np.int64(data.size), np.int32(bins),
                     out.gpudata, shared_size=int(shared))
    return out
