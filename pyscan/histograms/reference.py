"""The bin mappings of the histogram kernels (kernels/histogram/histogram_bins.cuh) in NumPy, and NumPy
references.  Needs only NumPy.

* Byte histogram: byte v goes to bin v * bins // 256, which is np.histogram(data, bins, range=(0, 256)).
* Letter histogram (PMPP Fig. 9.1): lowercase ASCII letters in 7 bins of four letters, a-d ... y-z; every
  other byte is not counted.
"""

from __future__ import annotations

import numpy as np

MAX_BINS = 256
LETTER_BINS = 7
LETTER_LABELS = ("a-d", "e-h", "i-l", "m-p", "q-t", "u-x", "y-z")
COUNT_DTYPE = np.dtype(np.uint64)


def bin_of(data: np.ndarray, bins: int, *, letters: bool = False) -> np.ndarray:
    """The bin of every byte of `data` as int64, -1 for bytes that are not counted (only with `letters`).
    Exactly the device function bin_of() of histogram_bins.cuh."""
    values = np.asarray(data, dtype=np.uint8).astype(np.int64)
    if letters:
        position = values - ord("a")
        return np.where((position >= 0) & (position < 26), position // 4, -1)
    return (values * bins) >> 8


def nbins(bins: int, letters: bool) -> int:
    return LETTER_BINS if letters else bins


def reference_histogram(data, bins: int = 256, *, letters: bool = False) -> np.ndarray:
    """The histogram the kernels compute, from NumPy alone: np.histogram for bytes, the 7 letter bins for
    text.  Counts as uint64."""
    data = np.asarray(data, dtype=np.uint8).ravel()
    if letters:
        codes = data[(data >= ord("a")) & (data <= ord("z"))].astype(np.int64) - ord("a")
        return np.bincount(codes // 4, minlength=LETTER_BINS).astype(COUNT_DTYPE)
    return np.histogram(data, bins=bins, range=(0, 256))[0].astype(COUNT_DTYPE)


def counts_from_bins(element_bins: np.ndarray, nbins_: int, weights=None) -> np.ndarray:
    """Histogram of precomputed bin indices (the -1s dropped), optionally weighted (run lengths), as uint64."""
    element_bins = np.asarray(element_bins)
    keep = element_bins >= 0
    w = None if weights is None else np.asarray(weights)[keep]
    counts = np.bincount(element_bins[keep], weights=w, minlength=nbins_)
    return np.rint(counts).astype(COUNT_DTYPE) if w is not None else counts.astype(COUNT_DTYPE)
