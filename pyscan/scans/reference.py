"""The NumPy reference of a scan: what pyscan.scan must return (exact for integers, which wrap like
np.cumsum(x, dtype=x.dtype), and for max/min; float sums in NumPy's order, which the GPU's tree order matches only
within the bound of the algorithm's error_depth)."""

from __future__ import annotations

import numpy as np

from ..types import check_op, identity, ufunc


def reference(x: np.ndarray, op: str = "add", exclusive: bool = False) -> np.ndarray:
    """Inclusive (or exclusive: shifted right by one, the operator's identity first) scan of x with op."""
    check_op(op)
    x = np.asarray(x)
    inclusive = ufunc(op).accumulate(x, dtype=x.dtype) if x.size else x.copy()
    if not exclusive or x.size == 0:
        return inclusive
    out = np.empty_like(inclusive)
    out[0] = identity(op, x.dtype)
    out[1:] = inclusive[:-1]
    return out
