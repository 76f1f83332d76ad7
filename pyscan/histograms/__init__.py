"""Histogram (PMPP ch. 9): NumPy's histogram and bincount for any integer or float array, and the chapter's byte
histogram with every kernel of the chapter behind one function, plus a fast one.

    pyscan.histogram(x, bins=10, range=None, weights=None, density=False)  -> (hist, bin_edges), as np.histogram
    pyscan.bincount(x, weights=None, minlength=0)                          -> counts, as np.bincount
    pyscan.byte_histogram(data, bins=256, *, algorithm="auto")  -> np.ndarray of uint64, shape (bins,)
    pyscan.text_histogram(text, *, algorithm="auto")            -> np.ndarray of uint64, shape (7,)

histogram and bincount are pyscan.histograms.numpy_histogram (its docstring says how); what follows is the byte
histogram's.

Counts are uint64.  They cannot overflow for any input that fits in memory (2^64 bytes); in particular not for
inputs of up to 2^32 elements.  On the device, blocks count into 32-bit shared-memory counters (the drivers
size the grids so that no block counts more than 2^30 bytes) and add them to 64-bit global counters with the
unsigned long long atomicAdd.

Each algorithm is registered in HISTOGRAMS (pyscan.registry) with its driver, kernel files and NumPy model
(pyscan.histograms.models).  A driver has the signature

    driver(data, bins: int, *, call, letters: bool = False, out=None) -> the `bins` uint64 counts (into `out`,
                                                            zeroed there, or a new device array of the call's kind)

and is only called with a validated, contiguous, non-empty 1-D uint8 device array, the Call whose device and
stream it launches on (pyscan.runtime.arrays.Call), and 1 <= bins <= 256; with
letters=True, bins is 7 and the kernels use the letter mapping (compiled with LETTERS=1).  A model has the
signature

    model(data: np.ndarray of uint8, bins: int, *, letters=False, sms=132, return_stats=False)
        -> counts, or (counts, stats) with return_stats (stats: the global and shared atomics it costs)

The bin of byte v is v * bins // 256 (integer division), exactly np.histogram(data, bins, range=(0, 256));
the letter histogram puts 'a'..'z' in bins of four letters (a-d, e-h, i-l, m-p, q-t, u-x, y-z) and ignores
every other byte (pyscan.histograms.reference).
"""

from __future__ import annotations

import numpy as np

from ..runtime import arrays

# Each module registers its algorithms; the registry's order (histograms/registry.py) is HISTOGRAM_ALGORITHMS'.
from . import book, fast, numpy_histogram  # noqa: F401
from .numpy_histogram import bincount, histogram
from .reference import COUNT_DTYPE, LETTER_BINS, LETTER_LABELS, MAX_BINS, reference_histogram
from .registry import HISTOGRAMS

HISTOGRAM_ALGORITHMS = HISTOGRAMS.names()


def choose_auto() -> str:
    """The algorithm `auto` runs: the first of the registry's auto priority (histograms/registry.py).  Every
    registered histogram takes every length and bin count."""
    return HISTOGRAMS.choose()


def _algorithm(algorithm):
    if not isinstance(algorithm, str):
        raise TypeError(f"algorithm must be a str, got {arrays.describe(algorithm)}")
    return HISTOGRAMS.get(choose_auto() if algorithm == "auto" else algorithm)


def _check_bins(bins) -> int:
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"bins must be an int between 1 and {MAX_BINS}, got {arrays.describe(bins)}")
    if not 1 <= bins <= MAX_BINS:
        raise ValueError(f"bins must be between 1 and {MAX_BINS}, got {bins}")
    return int(bins)


def _begin(data, what: str, stream):
    """The Call for NumPy uint8, a uint8 device array of any kind (pyscan.runtime.arrays), or bytes / bytearray / a
    memoryview of bytes.  Raises before anything is launched."""
    if isinstance(data, str):
        raise TypeError(f"{what}: expected bytes or a uint8 array, got a str; encode it (or use text_histogram)")
    if isinstance(data, (bytes, bytearray)):
        data = np.frombuffer(data, dtype=np.uint8)
    elif isinstance(data, memoryview):
        if data.ndim != 1 or data.itemsize != 1 or not data.c_contiguous:
            raise TypeError(f"{what}: expected a contiguous 1-D memoryview of bytes, got one of format "
                            f"{data.format!r}, itemsize {data.itemsize}, shape {data.shape}")
        data = np.frombuffer(data, dtype=np.uint8)
    return arrays.begin(data, what=what, dtypes=(np.uint8,), stream=stream)


def as_bytes(data, what: str):
    """(uint8 array, on_gpu), checked as the histogram functions check it (for the tools and models)."""
    call = _begin(data, what, None)
    return (call.host, False) if call.host is not None else (data, True)


def _count(call, bins: int, letters: bool, algorithm, out):
    call.expect_out(out, (bins,), COUNT_DTYPE)
    with call:
        counts = call.result((bins,), COUNT_DTYPE)
        if call.size == 0:
            call.memset32(counts, 0, 2 * bins)
        else:
            algorithm.driver(call.x, bins, call=call, letters=letters, out=counts)
        return call.finish(counts)


def byte_histogram(data, bins=256, *, algorithm="auto", out=None, stream=None):
    """The histogram of a 1-D array of bytes on the GPU (PMPP ch. 9's kernels; pyscan.histogram is np.histogram's
    contract for any dtype): `bins` equal bins over 0..255, byte v in bin
    v * bins // 256, so the result equals np.histogram(data, bins=bins, range=(0, 256))[0].

    data: a 1-D NumPy uint8 array (non-contiguous ones are copied), bytes, bytearray or a memoryview of bytes
    (the counts come back as a NumPy array), or a C-contiguous uint8 device array -- pycuda GPUArray, CuPy,
    torch CUDA tensor, Numba, any __cuda_array_interface__ object -- (the counts stay on its device, an array of
    its kind; the call does not wait for the GPU).  bins: an int, 1 <= bins <= 256.  algorithm: "auto" (the fast
    kernel) or one of HISTOGRAM_ALGORITHMS.  Counts are uint64 (torch.uint64 for torch), which cannot overflow
    for any input that fits in memory.  Empty data gives zeros.  out: an array of the input's kind, `bins` uint64
    elements, to write the counts into (returned).  stream: as for pyscan.scan.
    """
    algorithm = _algorithm(algorithm)
    bins = _check_bins(bins)
    call = _begin(data, "byte_histogram: data", stream)
    return _count(call, bins, False, algorithm, out)


def text_histogram(text, *, algorithm="auto", out=None, stream=None):
    """The letter histogram of PMPP ch. 9 (Fig. 9.1): lowercase ASCII letters 'a'..'z' counted in 7 bins of four
    letters, a-d, e-h, i-l, m-p, q-t, u-x, y-z (LETTER_LABELS); every other byte (capitals, digits, spaces,
    bytes of non-ASCII characters) is ignored.

    text: a str (encoded as UTF-8), bytes, bytearray, a memoryview of bytes, or a 1-D uint8 array as histogram()
    takes.  Returns 7 uint64 counts, as byte_histogram() returns them.
    """
    algorithm = _algorithm(algorithm)
    if isinstance(text, str):
        text = text.encode("utf-8")
    call = _begin(text, "text_histogram: text", stream)
    return _count(call, LETTER_BINS, True, algorithm, out)


__all__ = ["HISTOGRAMS", "HISTOGRAM_ALGORITHMS", "LETTER_BINS", "LETTER_LABELS", "bincount", "byte_histogram",
           "choose_auto", "histogram", "reference_histogram", "text_histogram"]
