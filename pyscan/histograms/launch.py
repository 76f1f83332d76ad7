"""Launching a histogram kernel: the result buffer, the kernel and its arguments, on a call's device and stream.
Importing this module needs only NumPy."""

from __future__ import annotations

import numpy as np

from ..runtime import driver
from ..runtime.loader import get_kernel
from .reference import COUNT_DTYPE, LETTER_BINS, MAX_BINS


def sms(call) -> int:
    """The multiprocessor count of the call's device."""
    return driver.multiprocessor_count(call.device)


def zeroed_counts(nbins: int, call):
    """A device array of nbins uint64 zeros of the call's kind, on its stream."""
    out = call.empty((nbins,), COUNT_DTYPE)
    call.memset32(out, 0, 2 * nbins)  # 2 words per uint64
    return out


def run_kernel(relpath, function, data, bins, letters, grid, block, *, call, shared=0, out=None, **defines):
    """Launch `function(data, n, bins, histo)` of kernels/`relpath` on a uint8 device array and return the uint64
    counts: `out` (bins elements, zeroed here) or a new array.  With `letters`, bins must be LETTER_BINS (the kernel
    ignores it)."""
    if letters and bins != LETTER_BINS:
        raise ValueError(f"the letter histogram has {LETTER_BINS} bins, got bins={bins}")
    if not 1 <= bins <= MAX_BINS:
        raise ValueError(f"bins must be between 1 and {MAX_BINS}, got {bins}")
    fn = get_kernel(relpath, function, LETTERS=int(bool(letters)), device=call.device, **defines)
    if out is None:
        out = zeroed_counts(bins, call)
    else:
        call.memset32(out, 0, 2 * bins)
    fn.prepared_async_call((int(grid), 1, 1), (int(block), 1, 1), call.stream, data.gpudata, np.int64(data.size),
                           np.int32(bins), out.gpudata, shared_size=int(shared))
    return out
