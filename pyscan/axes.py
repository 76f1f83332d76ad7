"""Axes of N-d arrays for pyscan.scan and pyscan.reduce (docs/axis.md): NumPy's rules for `axis=`, the (outer, n, inner)
view of a C-contiguous array along an axis, and the #defines of the axis kernels.

A C-contiguous array of shape (d0, ..., dk) scanned or reduced along axis a is, in memory, a table
(outer, n, inner) = (d0 * ... * d(a-1), da, d(a+1) * ... * dk): element (o, r, l) at o * n * inner + r * inner + l.
inner == 1 (the last axis, or only extents of 1 after it) is a table of rows; inner > 1 a sequence of n rows of
`inner` lanes per outer index.  Consecutive reduced axes merge into one n; extents of 1 can be dropped anywhere.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .types import ELEMENT_TYPES, CustomOperator, check_op, dtype_name, op_macro

try:
    from numpy.exceptions import AxisError
except ImportError:  # NumPy < 1.25
    AxisError = np.AxisError


def normalize_axis(axis, ndim: int, what: str) -> int:
    """An int axis in [-ndim, ndim) as 0 .. ndim - 1; AxisError (a ValueError and IndexError) as NumPy raises."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"{what}: axis must be an int, a tuple of ints or None, got {axis!r}")
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what}: axis must be an int{', a tuple of ints' if 'reduce' in what else ''} or None, got "
                        f"{type(axis).__name__} {axis!r}") from None
    if not -ndim <= a < ndim:
        raise AxisError(a, ndim, what)
    return a % ndim


def normalize_axes(axis, ndim: int, what: str) -> tuple:
    """None -> every axis; an int or a tuple of ints -> the sorted axes, duplicates refused (as np.sum)."""
    if axis is None:
        return tuple(range(ndim))
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(normalize_axis(a, ndim, what) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{what}: duplicate value in 'axis': {axis!r}")
    return tuple(sorted(axes))


def split(shape: tuple, axis: int) -> tuple:
    """(outer, n, inner) of a C-contiguous array of `shape` along `axis`."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def reduce_plan(shape: tuple, axes: tuple) -> list:
    """The passes of a reduction of `shape` over `axes` (sorted), last axes first: [(outer, n, inner), ...], each
    pass's output the next pass's input.  Extents of 1 are dropped and consecutive reduced axes merge, so a
    reduction over axes that are adjacent in memory is one pass; (A, B, C) over (0, 2) is two: C, then A."""
    kept = [(extent, i in axes) for i, extent in enumerate(shape) if extent != 1]
    groups = []  # runs of [extent, reduced?] after merging neighbours of the same kind
    for extent, reduced in kept:
        if groups and groups[-1][1] == reduced:
            groups[-1][0] *= extent
        else:
            groups.append([extent, reduced])
    passes = []
    for g in range(len(groups) - 1, -1, -1):
        if groups[g][1]:
            outer = math.prod(e for e, _ in groups[:g])
            inner = math.prod(e for e, r in groups[g + 1:] if not r)  # later reduced groups are gone already
            passes.append((outer, groups[g][0], inner))
    return passes


def result_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else e for i, e in enumerate(shape))
    return tuple(e for i, e in enumerate(shape) if i not in axes)


# The dtypes and operators the axis kernels are built for (kernels/scan/axis_*.cu, kernels/reduction/axis_*.cu):
# they read x and write results with plain casts, T(x[i]) and OutT(v), not operators.cuh's op_load / op_store, so
# they take the 4- and 8-byte types, whose casts are NumPy's conversions, and the operators their models and GPU
# tests were written for (PMPP §11.1: any associative operator would do; the others are 1-D or axis=None only),
# and custom operators (C expressions, pyscan.types.CustomOperator), which their op_combine evaluates as any kernel's.
# The result dtype is still NumPy's (pyscan.types.result_dtype): int32 add accumulates in int64, as
# np.cumsum(x, axis=1) does, through the kernels' separate IN_TYPE / ELEM_TYPE / OUT_TYPE.
AXIS_DTYPES = tuple(np.dtype(d) for d in (np.int32, np.int64, np.float32, np.float64))
AXIS_OPERATORS = ("add", "max", "min")


def check_axis_types(x_dtype, value, op, what: str) -> None:
    """TypeError unless the axis kernels take x of x_dtype combined with op into the result dtype `value`."""
    x_dtype, value = np.dtype(x_dtype), np.dtype(value)
    names = ", ".join(map(str, AXIS_DTYPES))
    if op not in AXIS_OPERATORS and not isinstance(op, CustomOperator):
        raise TypeError(f"{what}: op {op!r} is not supported along an axis: the axis kernels take op "
                        f"{', '.join(map(repr, AXIS_OPERATORS))} and C expressions (a 1-D array or axis=None takes "
                        "every op with the other algorithms)")
    for role, dtype in (("x of dtype", x_dtype), ("result dtype", value)):
        if dtype not in AXIS_DTYPES:
            raise TypeError(f"{what}: {role} {dtype_name(dtype)} is not supported along an axis: the axis kernels "
                            f"take {names} (a 1-D array or axis=None takes every dtype with the other algorithms)")


def kernel_macros(in_dtype, acc_dtype, out_dtype, op) -> dict:
    """The #defines of an axis kernel: IN_TYPE (what it reads), ELEM_TYPE (alias T, what it combines in), OUT_TYPE
    (what it writes) and OP -- the one place that maps dtypes and the operator to C (the kernels convert with plain
    casts, T(x[i]) and OutT(v)).  A custom operator adds its OP_EXPRESSION and OP_IDENTITY, and VALUE_TYPE = T (the
    type its op_combine converts every combine to: the accumulator, at least 32 bits here)."""
    check_op(op)

    def c(dtype):
        dtype = np.dtype(dtype)
        if dtype not in AXIS_DTYPES:
            raise TypeError(f"unsupported dtype {dtype_name(dtype)} for the axis kernels: expected one of "
                            f"{', '.join(map(str, AXIS_DTYPES))}")
        return ELEMENT_TYPES[dtype]

    macros = {"IN_TYPE": c(in_dtype), "ELEM_TYPE": c(acc_dtype), "OUT_TYPE": c(out_dtype), "OP": op_macro(op)}
    if isinstance(op, CustomOperator):
        macros["VALUE_TYPE"] = c(acc_dtype)
        macros.update(op.macros(acc_dtype))
    return macros


__all__ = ["AXIS_DTYPES", "AXIS_OPERATORS", "AxisError", "check_axis_types", "kernel_macros", "normalize_axes",
           "normalize_axis", "reduce_plan", "result_shape", "split"]
