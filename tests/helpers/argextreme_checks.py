"""Data for the argmax / argmin tests, shared by tests/unit/test_argextreme.py (the model, the fake device) and
tests/gpu/test_argextreme_gpu.py."""

import math

import numpy as np


def make(rng, shape, dtype, special=True):
    """Few distinct values (ties everywhere, across segments and chunks); integers at their extremes; floats with
    infinities, -0.0 / 0.0, and with `special` a NaN or two where there is room."""
    dtype = np.dtype(dtype)
    n = math.prod(shape)
    if dtype.kind == "b":
        return (rng.random(n) < 0.5).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.choice(np.array([info.min, info.max, 0, 1, 3], dtype), n).reshape(shape)
    x = rng.integers(-3, 4, n).astype(dtype)
    if special and n >= 8:
        x[rng.integers(0, n, 4)] = [np.inf, -np.inf, -0.0, 0.0]
        if n >= 32:
            x[rng.integers(n // 2, n, 2)] = np.nan
    return x.reshape(shape)
