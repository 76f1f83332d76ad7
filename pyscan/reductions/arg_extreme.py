"""argmax / argmin (np.argmax, np.argmin): kernels/reduction/arg_extreme.cu, reductions of (value, index) pairs.

    pyscan.argmax(x, axis=None, out=None, *, keepdims=False, stream=None)
    pyscan.argmin(x, axis=None, out=None, *, keepdims=False, stream=None)
        ->  int64 indices: a NumPy int64 scalar (NumPy x, axis=None), a 0-d device array of x's kind (device x,
            axis=None), else an array of x's kind of x's shape without the axis (keepdims: with it as 1)

NumPy's rules: the first index of the largest (smallest) value; a NaN counts as larger (smaller) than everything,
so the first NaN wins; axis=None indexes the array flattened in C order; an empty array or an empty axis raises
ValueError ("attempt to get argmax of an empty sequence").  Every dtype: bool, int8 .. uint64, float16, bfloat16
(torch), float32, float64, compared in x's own dtype (widened exactly, operators.cuh's T).

The kernels' combine ranks pairs by (NaN first, value, lower index): a total order, so the tree does not matter and
the results are exact.  The passes follow pyscan/reductions/axis.py's geometry.  The last axis (and axis=None: one
row of x.size elements) as rows: a thread per row up to SHORT_ROW elements, a warp per row up to WARP_ROW when
there are enough rows, else blocks per row segment, the segments' (value, index) partials reduced by a second
pass.  Any other axis as coalesced lanes over row chunks, the chunks' partials reduced again by the same kernel.
The model repeats the plan (the segments, chunks and partial tables, and where each index comes from) with NumPy.
"""

from __future__ import annotations

import math

import numpy as np

from .. import axes
from ..runtime import arrays, driver
from ..runtime.loader import get_kernel
from ..types import COMPUTE_TYPES, ELEMENT_TYPES, Types, as_dtype, check_dtype, defines, load
from .axis import BLOCK, MAX_GRID, NOMINAL_SMS, column_plan, pass_plan, row_plan

KERNEL = "reduction/arg_extreme.cu"
NO_INDEX = np.iinfo(np.int64).max  # the identity pair's index: every element's index is lower


def macros(dtype, largest: bool) -> dict:
    """The #defines of arg_extreme.cu for x of dtype: IN_TYPE and VALUE_TYPE x's C type, ELEM_TYPE (T, the compare
    type) x's compute type, ARG_LARGEST."""
    dtype = check_dtype(dtype)
    found = defines(dtype, "max", dtype)
    found["ARG_LARGEST"] = int(bool(largest))
    return found


def builds(dtype) -> list:
    """(kernel file, #defines) of argmax's and argmin's builds for x of dtype (prewarm)."""
    return [(KERNEL, macros(as_dtype(dtype), largest)) for largest in (True, False)]


def _empty_message(largest: bool) -> str:
    name = "argmax" if largest else "argmin"
    return f"attempt to get {name} of an empty sequence"


# ---------------------------------------------------------------------------------------------------------------
# Model.

def _best(values, indices, largest: bool):
    """The best (value, index) pair along the last axis by the kernels' rule (NaN first, then the value, then the
    lower index): (values, indices) of the leading shape.  A total order: any tree of combines gives this."""
    values, indices = np.asarray(values), np.asarray(indices, np.int64)
    nan = np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)
    if values.dtype.kind == "f":
        fill = -np.inf if largest else np.inf
    else:
        info = np.iinfo(values.dtype)
        fill = info.min if largest else info.max
    clean = np.where(nan, values.dtype.type(fill), values)
    top = clean.max(axis=-1) if largest else clean.min(axis=-1)
    any_nan = nan.any(axis=-1)
    candidates = np.where(any_nan[..., None], nan, (clean == top[..., None]) & ~nan)
    index = np.where(candidates, indices, NO_INDEX).min(axis=-1)
    value = np.where(any_nan, values.dtype.type(np.nan) if values.dtype.kind == "f" else top, top)
    return value, index


def _rows_pass(values, indices, largest, sms):
    """One launch of the row kernels on (rows, n) pairs: the (rows, splits) pairs (arg_extreme_rows_warp: one per
    row; arg_extreme_rows_block: one per row segment [s * seg, min(n, (s + 1) * seg)))."""
    rows, n = values.shape
    mode, _, splits, seg = row_plan(rows, n, sms)
    if mode != "block":  # "short": a thread per row, "warp": a warp per row
        v, i = _best(values, indices, largest)
        return v[:, None], i[:, None]
    out_v = np.empty((rows, splits), values.dtype)
    out_i = np.empty((rows, splits), np.int64)
    for s in range(splits):
        lo, hi = s * seg, min(n, (s + 1) * seg)
        out_v[:, s], out_i[:, s] = _best(values[:, lo:hi], indices[:, lo:hi], largest)
    return out_v, out_i


def _columns_pass(values, indices, largest, sms):
    """One launch of arg_extreme_columns on (outer, n, inner) pairs: the (outer, chunks, inner) pairs."""
    outer, n, inner = values.shape
    _, _, chunk_rows, _, chunks = column_plan(outer, n, inner, sms)
    out_v = np.empty((outer, chunks, inner), values.dtype)
    out_i = np.empty((outer, chunks, inner), np.int64)
    for c in range(chunks):
        lo, hi = c * chunk_rows, min(n, (c + 1) * chunk_rows)
        v, i = _best(np.moveaxis(values[:, lo:hi], 1, 2), np.moveaxis(indices[:, lo:hi], 1, 2), largest)
        out_v[:, c], out_i[:, c] = v, i
    return out_v, out_i


def model_along(values, largest: bool, sms: int = NOMINAL_SMS):
    """The driver's passes on compute values of a C-contiguous (outer, n, inner) table, n > 0: the (outer, inner)
    indices along n (a first pass indexes the elements by their row r; later passes carry the partials' indices)."""
    outer, n, inner = values.shape
    if inner == 1:
        v = values.reshape(outer, n)
        i = np.broadcast_to(np.arange(n, dtype=np.int64), (outer, n))
        while True:
            v, i = _rows_pass(v, i, largest, sms)
            if v.shape[1] == 1:
                return i.reshape(outer, inner)
    v = values
    i = np.broadcast_to(np.arange(n, dtype=np.int64)[None, :, None], values.shape)
    while True:
        v, i = _columns_pass(v, i, largest, sms)
        if v.shape[1] == 1:
            return i.reshape(outer, inner)


def model(x, *, largest: bool = True, axis=None, keepdims=False, sms: int = NOMINAL_SMS):
    """NumPy model of pyscan.argmax (largest=True) / pyscan.argmin on x of any dtype (BFLOAT16 as its bits): the
    int64 indices, np.int64 for axis=None without keepdims."""
    x = np.asarray(x)
    dtype = check_dtype(x.dtype)
    shape = x.shape
    a, outer, n, inner, result_shape = _plan(shape, axis, keepdims, "argmax model" if largest else "argmin model")
    if n == 0:
        raise ValueError(_empty_message(largest))
    if outer * inner == 0:
        return np.empty(result_shape, np.int64)
    values = load(np.ascontiguousarray(x), Types(dtype, dtype, COMPUTE_TYPES[dtype])).reshape(outer, n, inner)
    result = model_along(values, largest, sms).reshape(result_shape)
    return result.reshape(())[()] if axis is None and not keepdims else result


def _plan(shape, axis, keepdims, what):
    """(axis or None, outer, n, inner, result shape) of an argmax over `axis` of `shape`: axis=None is the whole
    array as one row (NumPy's flattened index); keepdims keeps every axis (None) or the axis as 1."""
    if axis is None:
        size = math.prod(shape)
        return None, 1, size, 1, ((1,) * len(shape) if keepdims else ())
    if isinstance(axis, (tuple, list)):
        raise TypeError(f"{what}: axis must be an int or None (as np.argmax's), got {axis!r}")
    a = axes.normalize_axis(axis, len(shape), what) if len(shape) else axes.normalize_axis(axis, 1, what)
    if not shape:  # a 0-d array: NumPy takes axis 0 and -1 on it as on one element
        return a, 1, 1, 1, ()
    outer, n, inner = axes.split(shape, a)
    result = tuple(1 if k == a else e for k, e in enumerate(shape)) if keepdims else shape[:a] + shape[a + 1:]
    return a, outer, n, inner, result


# ---------------------------------------------------------------------------------------------------------------
# GPU.

FUNCTIONS = {"rows_short": "arg_extreme_rows_thread", "rows_warp": "arg_extreme_rows_warp",
             "rows_block": "arg_extreme_rows_block", "columns": "arg_extreme_columns"}  # axis.pass_plan's kernels


def _launch(function, dtype, largest, call, grid, *args):
    fn = get_kernel(KERNEL, function, device=call.device, **macros(dtype, largest))
    if grid > MAX_GRID:
        raise ValueError(f"{'argmax' if largest else 'argmin'}: {grid} blocks is more than one launch takes "
                         f"({MAX_GRID})")
    fn.launch_typed(call.context, call.stream, fn.config(grid, BLOCK), *args)


def passes(outer: int, n: int, inner: int, sms: int):
    """arg_along's launches over an (outer, n, inner) view (n > 0): axis.pass_plan's (kernel, grid, chunks,
    geometry) of each, every later one over the (outer, chunks, inner) partials of the one before, the last one's
    chunks 1 (the tests' CPU emulator chains them the same way)."""
    while True:
        step = pass_plan(outer, n, inner, sms)
        yield step
        if step[2] == 1:
            return
        n = step[2]


def arg_along(x, out, outer: int, n: int, inner: int, *, largest: bool, call) -> int:
    """The int64 indices along n of the C-contiguous (outer, n, inner) view of device array x (n > 0,
    outer * inner > 0) into out's outer * inner elements, on call.stream; returns the number of launches.  The
    partials of a pass ((value, index) tables in x's compute type and int64) live in scratch arrays of the call."""
    dtype = np.dtype(x.dtype)
    compute = COMPUTE_TYPES[dtype]
    source, in_value, in_index, launches = int(x.gpudata), 0, 0, 0
    keep = []  # the partials' buffers, alive until the launches that read them are queued
    for kind, grid, chunks, geometry in passes(outer, n, inner, driver.multiprocessor_count(call.device)):
        if chunks == 1:  # the last pass
            out_index, out_value = int(out.gpudata), 0
        else:
            value_table = call.scratch(outer * chunks * inner * compute.itemsize)
            index_table = call.scratch(outer * chunks * inner * 8)
            keep += [value_table, index_table]
            out_index, out_value = int(index_table.gpudata), int(value_table.gpudata)
        _launch(FUNCTIONS[kind], dtype, largest, call, grid, out_index, out_value, source, in_value, in_index,
                *geometry)
        launches += 1
        in_value, in_index = out_value, out_index
    return launches


def arg_extreme(x, axis, out, keepdims, stream, largest: bool):
    """pyscan.argmax / pyscan.argmin (their docstrings)."""
    name = "argmax" if largest else "argmin"
    if keepdims is not False and keepdims is not True and not isinstance(keepdims, np.bool_):
        raise TypeError(f"{name}: keepdims must be True or False, got {arrays.describe(keepdims)}")
    call = arrays.begin(x, what=f"{name}: x", dtypes=ELEMENT_TYPES, ndim=None, stream=stream,
                        strided="copy_nd" if axis is None else "copy")
    a, outer, n, inner, result_shape = _plan(call.shape, axis, bool(keepdims), f"{name}: axis")
    if n == 0:
        raise ValueError(_empty_message(largest))
    scalar = axis is None and not keepdims
    if out is not None:
        call.expect_out(out, result_shape, np.dtype(np.int64), f"{name}: out")
    with call:
        result = call.result(result_shape, np.dtype(np.int64))
        if outer * inner:
            source = arrays.DeviceView(int(call.x.gpudata), (call.size,), call.dtype, call.x)
            target = arrays.DeviceView(int(result.gpudata), (outer * inner,), np.dtype(np.int64), result)
            arg_along(source, target, outer, n, inner, largest=largest, call=call)
        if scalar and out is None:
            return call.finish_scalar(result)
        return call.finish(result)


__all__ = ["arg_along", "arg_extreme", "builds", "macros", "model", "model_along", "passes"]
