"""Prefix scan (PMPP ch. 11, Hands-On ch. 4): every algorithm of the books behind one function.

    pyscan.scan(x, *, algorithm="auto", exclusive=False, op="add", out=None, stream=None)

Each algorithm lives in a module of this package that registers itself in SCANS with its driver, its kernel
files and its NumPy step-model (see pyscan.registry).  A driver has the signature

    driver(x, out, *, op: str, exclusive: bool, call: Call) -> int   # the number of kernel launches

and is only called with validated, contiguous, non-empty 1-D device arrays of a supported dtype (GPUArrays or
pyscan.runtime.arrays.DeviceView: .gpudata, .shape, .dtype, .size), inside the call's device; it launches on
call.stream and allocates with call.empty (pyscan.runtime.arrays.Call); out never overlaps x unless the algorithm
is in IN_PLACE.  A model has

    model(x: np.ndarray, *, op="add", exclusive=False, return_steps=False)
        -> result, or (result, steps: list[Step]) with return_steps
"""

from __future__ import annotations

import numpy as np

# Each module registers its algorithms; the registry's order (scans/registry.py) is the order of SCAN_ALGORITHMS.
from .. import axes
from ..runtime import arrays
from ..types import ELEMENT_TYPES, OPERATOR_NAMES, SUPPORTED_DTYPES, check_op
from . import axis, blelloch, decoupled_lookback, hierarchical, single_pass, single_section  # noqa: F401
from .registry import SCANS

SCAN_ALGORITHMS = SCANS.names()

# The book kernels index elements with 32-bit ints in places (block and section indices, thread offsets); they take
# lengths up to this.  The fast ones take what their registered max_length says (None: any length that fits).
MAX_LENGTH = 2**31 - 1

# Algorithms whose kernels read every element of a tile or section before writing any of it, and read nothing
# outside it: out may be x itself (tests/gpu/test_interop_gpu.py checks every algorithm with out=x).  Others get a
# scratch output and a device copy into out.
IN_PLACE = frozenset({"axis", "decoupled_lookback", "hierarchical", "kogge_stone", "kogge_stone_double_buffer", "brent_kung",
                      "coarsened", "blelloch", "blelloch_block", "single_pass"})


_auto: list = []  # (max_length, name) of the auto priority's registered algorithms, best first


def _auto_choices() -> list:
    if not _auto:
        _auto.extend((max_length(name), name) for name in SCANS.auto_priority if name in SCANS.names())
    return _auto


def choose_auto(n: int, dtype=None, op=None) -> str:
    """The algorithm `auto` runs on n elements: the first of the registry's auto priority (scans/registry.py) that
    takes n.  Every registered scan takes every dtype and operator."""
    for limit, name in _auto_choices():
        if limit is None or n <= limit:
            return name
    return SCANS.choose(n)


def max_length(name: str):
    """The longest input algorithm `name` takes: MAX_LENGTH for the book's kernels, the registered max_length for
    the fast ones (None: any length that fits in device memory)."""
    entry = SCANS.get(name)
    return entry.max_length if entry.fast else MAX_LENGTH


def _overlaps(a, b) -> bool:
    a0, b0 = int(a.gpudata), int(b.gpudata)
    return a0 < b0 + b.size * b.dtype.itemsize and b0 < a0 + a.size * a.dtype.itemsize


def scan(x, axis=None, dtype=None, out=None, *, op="add", exclusive=False, algorithm="auto", stream=None):
    """Inclusive (or exclusive) prefix scan with `op` ("add", "max" or "min"), like np.cumsum / ufunc.accumulate.

    x: a NumPy array (the result is a NumPy array) or a device array -- pycuda GPUArray, CuPy ndarray, torch CUDA
    tensor, Numba device array, or any object with __cuda_array_interface__ -- used where it is, with the result a
    new array of the same kind on the same device (pyscan.runtime.arrays).  dtypes: int32, int64, float32, float64.
    Integer add wraps like np.cumsum(x, dtype=x.dtype).  An exclusive scan starts from the operator's identity (0;
    the dtype's lowest value or -inf for max; its highest or +inf for min).  Every algorithm accepts every length,
    0 included.

    axis: None scans the array flattened in C order, as np.cumsum does (the result is 1-D, x.size long); an int
    (negative counts from the end) scans along that axis of an N-d array (the result has x's shape), with the axis
    kernels (algorithm "axis", auto's choice whenever the axis is not the whole array; docs/axis.md).  A named book
    algorithm scans 1-D arrays and flattened ones (axis=None); with an axis of an N-d array it is refused with a
    ValueError naming "auto" and "axis" -- except where the axis is the whole array (every other extent 1).
    dtype: None (the result has x's dtype; passed through for the result-dtype rules to come).
    A NumPy array that is not contiguous is copied first.  A device array that is not C-contiguous (x.T, x[:, ::2])
    is copied by its own library on the call's stream when it is N-d or an axis is given (CuPy, torch; other kinds
    must be C-contiguous); a 1-D device array must be C-contiguous.

    out: an array of x's kind, of the result's shape and dtype, C-contiguous, to write the result into (returned).
    out may be x itself (in place) with every algorithm: those in IN_PLACE scan in place, the others through a
    scratch buffer.  stream: where the kernels run (a pycuda, CuPy, torch, Numba or cuda.core stream, or a
    cudaStream_t int).  Default: CuPy's or torch's current stream for their arrays, the stream a Numba or
    __cuda_array_interface__ array names, the legacy default stream for NumPy and GPUArray.  The call returns
    without waiting for the GPU unless the result goes to NumPy.
    """
    kind = arrays.READY.get(type(x))
    if kind is not None and axis is None and dtype is None and algorithm == "auto" and out is None and (
            stream is None and op in OPERATOR_NAMES and (exclusive is False or exclusive is True)):
        read = kind.ready(x)  # the commonest call: the auto algorithm's ready(), no Call
        if read is not None:
            return AUTO_READY(kind, x, *read, op, exclusive)
    if op not in OPERATOR_NAMES:
        check_op(op)
    if exclusive is not False and exclusive is not True and not isinstance(exclusive, np.bool_):
        raise TypeError(f"exclusive must be True or False, got {arrays.describe(exclusive)}")
    if algorithm != "auto":
        SCANS.get(algorithm)  # unknown names fail before anything else
    call = arrays.begin(x, what="scan: x", dtypes=ELEMENT_TYPES, ndim=None, stream=stream,
                        strided="copy_nd" if axis is None else "copy")
    axes.check_dtype_argument(dtype, call.dtype, "scan")
    shape = call.shape
    if axis is not None:
        a = axes.normalize_axis(axis, len(shape), "scan: axis")
        outer, n, inner = axes.split(shape, a)
        if outer * inner != 1 or (algorithm == "auto" and len(shape) != 1):
            return _scan_axis(call, outer, n, inner, out, op, bool(exclusive), algorithm, a)
    flat = (call.size,)
    if algorithm == "auto":
        name = choose_auto(call.size)
    else:
        name = algorithm
        limit = max_length(name)
        if limit is not None and call.size > limit:
            fast = ", ".join(a.name for a in SCANS if max_length(a.name) is None)
            raise ValueError(f"scan: x: {call.size} elements is more than algorithm {name!r} takes ({limit}; its "
                             f"kernels index with 32-bit ints); these take any length: {fast}")
    driver = SCANS.get(name).driver
    result_shape = shape if axis is not None else flat
    if out is not None:
        call.expect_out(out, result_shape, call.dtype, "scan: out")
    with call:
        result = call.result(result_shape, call.dtype)
        if call.size:
            source = call.x if len(shape) == 1 else arrays.DeviceView(int(call.x.gpudata), flat, call.dtype, call.x)
            target = result if len(result_shape) == 1 else arrays.DeviceView(int(result.gpudata), flat, call.dtype,
                                                                             result)
            scratch = None
            if out is not None and name not in IN_PLACE and _overlaps(source, target):
                scratch = call.empty(flat, call.dtype)
            driver(source, scratch if scratch is not None else target, op=op, exclusive=bool(exclusive), call=call)
            if scratch is not None:
                call.copy(target, scratch, target.size * target.dtype.itemsize)
        return call.finish(result)


def _scan_axis(call, outer, n, inner, out, op, exclusive, algorithm, a):
    """pyscan.scan along axis a of an N-d array: the axis kernels (pyscan/scans/axis.py)."""
    if algorithm not in ("auto", "axis"):
        raise ValueError(f"scan: algorithm {algorithm!r} scans 1-D arrays (or the flattened array, axis=None); "
                         f"along axis {a} of shape {call.shape} use algorithm='auto' or 'axis'")
    if out is not None:
        call.expect_out(out, call.shape, call.dtype, "scan: out")
    with call:
        result = call.result(call.shape, call.dtype)
        if call.size:
            axis.scan_along(call.x, result, outer, n, inner, op=op, exclusive=exclusive, call=call)
        return call.finish(result)


AUTO_READY = SCANS.auto_ready()  # the commonest call's whole path


__all__ = ["SCANS", "SCAN_ALGORITHMS", "SUPPORTED_DTYPES", "scan"]
