"""Element types and operators shared by the scan and reduction patterns (PMPP §11.1: any associative
operator with an identity element)."""

from __future__ import annotations

import numpy as np

# NumPy dtype -> the C type injected as ELEM_TYPE (kernels/common/operators.cuh).
ELEMENT_TYPES = {
    np.dtype(np.int32): "int",
    np.dtype(np.int64): "long long",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}
SUPPORTED_DTYPES = tuple(str(d) for d in ELEMENT_TYPES)

# Operator name -> (the OP macro value, the NumPy ufunc that does the same).
OPERATORS = {
    "add": ("OP_ADD", np.add),
    "max": ("OP_MAX", np.maximum),
    "min": ("OP_MIN", np.minimum),
}
OPERATOR_NAMES = tuple(OPERATORS)


def check_op(op) -> str:
    if not isinstance(op, str) or op not in OPERATORS:
        raise ValueError(f"unknown op {op!r}: expected one of {', '.join(map(repr, OPERATORS))}")
    return op


def check_dtype(dtype, supported=None) -> np.dtype:
    dtype = np.dtype(dtype)
    supported = ELEMENT_TYPES if supported is None else supported
    if dtype not in supported:
        names = ", ".join(str(np.dtype(d)) for d in supported)
        raise TypeError(f"unsupported dtype {dtype}: expected one of {names}")
    return dtype


def c_type(dtype) -> str:
    return ELEMENT_TYPES[check_dtype(dtype)]


def op_macro(op) -> str:
    return OPERATORS[check_op(op)][0]


def ufunc(op):
    """The NumPy ufunc of an operator: np.add, np.maximum or np.minimum."""
    return OPERATORS[check_op(op)][1]


def identity(op, dtype):
    """The identity of `op` for `dtype`, as a NumPy scalar: 0; the lowest value (-inf); the highest (+inf)."""
    dtype = check_dtype(dtype)
    check_op(op)
    if op == "add":
        return dtype.type(0)
    if dtype.kind == "f":
        return dtype.type(-np.inf if op == "max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if op == "max" else info.max)


def defines(dtype, op) -> dict:
    """The #defines that specialise a kernel for an element type and operator."""
    return {"ELEM_TYPE": c_type(dtype), "OP": op_macro(op)}


def check_model_input(x, op):
    """Validate the input of a NumPy step-model: a 1-D array of a supported dtype, and a known operator."""
    check_op(op)
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"expected a 1-D array, got shape {x.shape}")
    check_dtype(x.dtype)
    return x
