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

from .runtime import driver
from .types import ELEMENT_TYPES, OPERATOR_NAMES, check_dtype, check_op, defines

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
# every dtype and every operator, as the 1-D kernels.  They read x through operators.cuh's op_load (converted to the
# result dtype, then widened to the compute type T: NumPy's conversion to the accumulator, done in the load) and
# write through op_store (rounded to nearest for float16 / bfloat16, cut to the width for narrow integers), so the
# result dtype is NumPy's (pyscan.types.result_dtype): int8 add accumulates in int64, as np.cumsum(x, axis=1) does,
# float16 is combined in float32 and rounded once.  Custom operators (C expressions, pyscan.types.CustomOperator)
# take the same path as in the 1-D kernels (OP_EXPR, op_combine converting each combine to the result dtype).
AXIS_DTYPES = tuple(ELEMENT_TYPES)
AXIS_OPERATORS = OPERATOR_NAMES


def check_axis_types(x_dtype, value, op, what: str) -> None:
    """TypeError unless the axis kernels take x of x_dtype combined with op into the result dtype `value`: every
    dtype of pyscan.types.ELEMENT_TYPES and every operator (result_dtype() has refused the pairs NumPy refuses,
    such as a bitwise operator of floats)."""
    check_op(op)
    check_dtype(x_dtype)
    check_dtype(value)


def kernel_macros(in_dtype, value, out_dtype, op, *, partials_in: bool = False) -> dict:
    """The #defines of an axis kernel -- the one place that maps dtypes and the operator to C: IN_TYPE (what it
    reads), VALUE_TYPE (the result dtype: op_load converts every element to it), ELEM_TYPE (alias T, what it
    combines in: the value dtype widened to at least 32 bits, pyscan.types.COMPUTE_TYPES), OUT_TYPE (what it
    writes: the value dtype for results, the compute type for a reduction's partials) and OP.  partials_in: x holds
    partials a previous pass wrote in the compute type (the reduction kernels' PARTIALS_IN: read as they are, not
    rounded through the value dtype again).  A custom operator adds its OP_EXPRESSION and OP_IDENTITY."""
    macros = defines(in_dtype, op, value, out=out_dtype)
    if partials_in:
        macros["PARTIALS_IN"] = 1
    return macros


__all__ = ["AXIS_DTYPES", "AXIS_OPERATORS", "AxisError", "check_axis_types", "kernel_macros", "normalize_axes",
           "normalize_axis", "reduce_plan", "result_shape", "split"]


# --- plans of calls along axes (scans/axis.py, reductions/axis.py) ---------------------------------------------------
# A plan holds what one call along an axis launches (its kernels, grids and arguments), made once per view, dtypes
# and operator.  A first call through the general path remembers its plan under the call's key (shape, x's dtype,
# axis, op, exclusive or keepdims, dtype=, device) in its pattern's READY; the next call with that key on a
# C-contiguous device array takes it at once (take_ready): the result made by x's library, the plan's launches.
PLANS_KEPT = 256


def keep(cache: dict, key, value) -> None:
    """cache[key] = value, the oldest entry dropped past PLANS_KEPT (many shapes: their plans go, the kernels stay
    loaded)."""
    if key not in cache and len(cache) >= PLANS_KEPT:
        del cache[next(iter(cache))]
    cache[key] = value


def call_key(*parts):
    """parts as a READY key, or None where one of them is not hashable (an axis given as a list, say)."""
    try:
        hash(parts)
    except TypeError:
        return None
    return parts


def planned(cache: dict, key, make, device: int):
    """cache[key], made by make() in the device's context (compiling and occupancy need it) where it is missing."""
    found = cache.get(key)
    if found is None:
        previous = driver.enter(device)
        try:
            found = make()
        finally:
            driver.leave(previous)
        keep(cache, key, found)
    return found


def take_ready(kind, x, ready: dict, *options):
    """The result of a call on x whose key (shape, dtype, *options, device) `ready` holds, or None: the result
    allocated by x's library (Kind.new_shaped) and the plan launched on x's library's stream in the device's primary
    context."""
    read = kind.ready_nd(x)  # (address, shape, dtype, device, stream) of a C-contiguous device array, or None
    if read is None:
        return None
    address, shape, dtype, device, stream = read
    try:
        found = ready.get((shape, dtype, *options, device))
    except TypeError:  # an unhashable axis or dtype=: the general path says what is wrong
        return None
    if found is None:
        return None
    plan, result_shape, value = found
    native, out = kind.new_shaped(x, result_shape, value, device, stream)
    plan.launch(out, address, device, stream, driver._primary.get(device) or driver.primary(device))
    return native
