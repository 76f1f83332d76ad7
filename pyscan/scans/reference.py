"""The NumPy reference of a scan: what pyscan.scan must return, by NumPy's rules (pyscan.types.result_dtype): exact
for integers (add and mul in int64/uint64, or wrapping in an explicit narrow dtype=) and for max/min and the bitwise
and logical operators; float sums in NumPy's order, which the GPU's tree order matches only within the bound of the
algorithm's error_depth.  (float16 input: NumPy rounds to float16 after every addition; the GPU rounds once.)"""

from __future__ import annotations

import numpy as np

from ..types import BFLOAT16, Types, check_op, identity, load, numpy_ufunc, store


def reference(x: np.ndarray, op: str = "add", exclusive: bool = False, dtype=None) -> np.ndarray:
    """Inclusive (or exclusive: shifted right by one, the operator's identity first) scan of x with op, in the
    result dtype NumPy gives (np.cumsum / np.cumprod / ufunc.accumulate; dtype= as theirs).  bfloat16 (torch's
    dtype; BFLOAT16 bits here): combined in float32 and rounded once, as pyscan does."""
    check_op(op)
    x = np.asarray(x)
    types = Types.of(x.dtype, op, dtype)
    if types.value == BFLOAT16 or x.dtype == BFLOAT16:
        values = load(x, types)
        inclusive = numpy_ufunc(op).accumulate(values, dtype=values.dtype) if x.size else values
        out = store(inclusive, types)
        if exclusive and x.size:
            out[1:] = out[:-1].copy()
            out[0] = store(np.asarray([identity(op, np.float32)], np.float32), types)[0]
        return out
    value = types.value
    converted = x.astype(value) if op in ("max", "min") or x.dtype.kind == "b" and value.kind == "b" else x
    with np.errstate(over="ignore", invalid="ignore"):
        if x.size == 0:
            inclusive = np.empty(0, value)
        elif op == "add":
            inclusive = np.cumsum(x, dtype=value)
        elif op == "mul":
            inclusive = np.cumprod(x, dtype=value)
        elif op in ("logical_and", "logical_or"):
            inclusive = numpy_ufunc(op).accumulate(x.astype(bool))
        else:
            inclusive = numpy_ufunc(op).accumulate(converted.astype(value), dtype=value)
    if not exclusive or x.size == 0:
        return inclusive
    out = np.empty_like(inclusive)
    out[0] = identity(op, value)
    out[1:] = inclusive[:-1]
    return out
