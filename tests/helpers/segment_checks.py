"""Data for the segment tests (pyscan.scan / pyscan.reduce with offsets=), shared by tests/unit/test_segments.py
(the models, the fake device) and tests/gpu/test_segments_gpu.py."""

import numpy as np

from pyscan.types import BFLOAT16, as_dtype, float32_to_bfloat16


def values(dtype, n, rng):
    """n values of dtype: small integers (float sums exact in every order), bool mostly True, bfloat16 as its bits."""
    dtype = as_dtype(dtype)
    if dtype == BFLOAT16:
        return float32_to_bfloat16(rng.integers(-3, 4, n).astype(np.float32))
    if dtype.kind == "b":
        return rng.random(n) < 0.7
    if dtype.kind == "u":
        return rng.integers(0, 4, n).astype(dtype)
    return rng.integers(-3, 4, n).astype(dtype)


def offsets_of(lengths):
    """CSR offsets (int64, S + 1 entries) of segments of these lengths."""
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
