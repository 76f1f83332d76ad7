"""Prefix scan (PMPP ch. 11, Hands-On ch. 4): every algorithm of the books behind one function.

    pyscan.scan(x, axis=None, dtype=None, out=None, *, op="add", exclusive=False, algorithm="auto", stream=None)

Each algorithm lives in a module of this package that registers itself in SCANS with its driver, its kernel
files and its NumPy step-model (see pyscan.registry).  A driver has the signature

    driver(x, out, *, op: str, exclusive: bool, call: Call) -> int   # the number of kernel launches

and is only called with validated, contiguous, non-empty 1-D device arrays of a supported dtype (GPUArrays or
pyscan.runtime.arrays.DeviceView), out of the result dtype (pyscan.types.result_dtype: it may differ from x's; the
drivers build their kernels for x's dtype, out's and the compute type between), (GPUArrays or
pyscan.runtime.arrays.DeviceView: .gpudata, .shape, .dtype, .size), inside the call's device; it launches on
call.stream and allocates with call.empty (pyscan.runtime.arrays.Call); out never overlaps x unless the algorithm
is in IN_PLACE.  A model has

    model(x: np.ndarray, *, op="add", exclusive=False, return_steps=False)
        -> result, or (result, steps: list[Step]) with return_steps
"""

from __future__ import annotations

import numpy as np

from ..runtime import arrays
from ..types import ELEMENT_TYPES, OPERATOR_NAMES, SUPPORTED_DTYPES, check_op, result_dtype
from ..types import _results as _RESULTS

# Each module registers its algorithms; the registry's order (scans/registry.py) is the order of SCAN_ALGORITHMS.
from . import blelloch, decoupled_lookback, hierarchical, single_pass, single_section  # noqa: F401
from .registry import SCANS

SCAN_ALGORITHMS = SCANS.names()

# The book kernels index elements with 32-bit ints in places (block and section indices, thread offsets); they take
# lengths up to this.  The fast ones take what their registered max_length says (None: any length that fits).
MAX_LENGTH = 2**31 - 1

# Algorithms whose kernels read every element of a tile or section before writing any of it, and read nothing
# outside it: out may be x itself (tests/gpu/test_interop_gpu.py checks every algorithm with out=x).  Others get a
# scratch output and a device copy into out.
IN_PLACE = frozenset({"decoupled_lookback", "hierarchical", "kogge_stone", "kogge_stone_double_buffer", "brent_kung",
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


def _check_axis(axis, what):
    """1-D semantics: axis None, 0 or -1."""
    if axis is not None and not (isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and axis in (0, -1)):
        raise ValueError(f"{what}: axis {axis!r} is out of bounds for a 1-D array (axis=None, 0 or -1)")


def scan(x, axis=None, dtype=None, out=None, *, op="add", exclusive=False, algorithm="auto", stream=None):
    """Inclusive (or exclusive) prefix scan of a 1-D array with `op`: "add", "mul", "max", "min", "bitwise_and",
    "bitwise_or", "bitwise_xor" (integers and bool), "logical_and", "logical_or" (bool results).

    x: a NumPy array (the result is a NumPy array) or a device array -- pycuda GPUArray, CuPy ndarray, torch CUDA
    tensor, Numba device array, or any object with __cuda_array_interface__ -- used where it is, with the result a
    new array of the same kind on the same device (pyscan.runtime.arrays).  dtypes: bool, int8/16/32/64,
    uint8/16/32/64, float16, float32, float64, and torch.bfloat16 (complex is refused).  A NumPy array that is not
    contiguous is copied first; a device array must be C-contiguous.  An exclusive scan starts from the operator's
    identity (0; 1 for mul; the dtype's lowest value or -inf for max; its highest or +inf for min; all ones for
    bitwise_and).  Every algorithm accepts every length, 0 included.

    The result dtype is NumPy's (pyscan.types.result_dtype): add and mul of bool and of integers narrower than 64
    bits give int64 (unsigned: uint64), as np.cumsum and np.cumprod do; floats, max, min and the bitwise operators
    keep x's dtype; logical_and / logical_or give bool.  dtype= chooses the accumulator and result dtype, as
    np.cumsum's dtype= does (x is converted to it as the kernels load it; an explicit narrow integer dtype wraps,
    np.cumsum(x, dtype=np.int8)).  float16 and bfloat16 are combined in float32 and rounded once to their dtype:
    |result - exact| <= error_depth * eps32 * sum|x_j| + 2^-11 |exact| (float16; 2^-8 for bfloat16), where np.cumsum
    of float16 rounds to float16 after every addition.
    axis: None, 0 or -1 (1-D arrays).

    out: an array of x's kind and shape and of the result dtype to write the result into (returned).  out may be x
    itself (in place) with every algorithm where the result dtype is x's: those in IN_PLACE scan in place, the
    others through a scratch buffer.
    stream: where the kernels run (a pycuda, CuPy, torch, Numba or cuda.core stream, or a cudaStream_t int).
    Default: CuPy's or torch's current stream for their arrays, the stream a Numba or __cuda_array_interface__
    array names, the legacy default stream for NumPy and GPUArray.  The call returns without waiting for the GPU
    unless the result goes to NumPy.
    """
    kind = arrays.READY.get(type(x))
    if kind is not None and algorithm == "auto" and out is None and stream is None and dtype is None and \
            axis is None and op in OPERATOR_NAMES and (exclusive is False or exclusive is True):
        read = kind.ready(x)  # the commonest call: the auto algorithm's ready(), no Call
        if read is not None and (read[2], op) in _RESULTS:  # (dtype, op) seen and valid: result_dtype's cache
            return AUTO_READY(kind, x, *read, op, exclusive)
    if op not in OPERATOR_NAMES:
        check_op(op)
    _check_axis(axis, "scan")
    if exclusive is not False and exclusive is not True and not isinstance(exclusive, np.bool_):
        raise TypeError(f"exclusive must be True or False, got {arrays.describe(exclusive)}")
    if algorithm == "auto":
        call = arrays.begin(x, what="scan: x", dtypes=ELEMENT_TYPES, stream=stream)
        name = choose_auto(call.size)
        driver = SCANS.get(name).driver
    else:
        driver = SCANS.get(algorithm).driver  # unknown names fail before anything else
        call = arrays.begin(x, what="scan: x", dtypes=ELEMENT_TYPES, stream=stream)
        name = algorithm
        limit = max_length(name)
        if limit is not None and call.size > limit:
            fast = ", ".join(a.name for a in SCANS if max_length(a.name) is None)
            raise ValueError(f"scan: x: {call.size} elements is more than algorithm {name!r} takes ({limit}; its "
                             f"kernels index with 32-bit ints); these take any length: {fast}")
    value = result_dtype(call.dtype, op, dtype)  # TypeError for bitwise ops of floats, logical ops to non-bool
    if out is not None:
        call.expect_out(out, call.shape, value, "scan: out")
    with call:
        result = call.result(call.shape, value)
        if call.size:
            target = result
            if out is not None and (name not in IN_PLACE or value != call.dtype) and _overlaps(call.x, result):
                target = call.empty(call.shape, value)
            driver(call.x, target, op=op, exclusive=bool(exclusive), call=call)
            if target is not result:
                call.copy(result, target, result.size * result.dtype.itemsize)
        return call.finish(result)


AUTO_READY = SCANS.auto_ready()  # the commonest call's whole path


__all__ = ["SCANS", "SCAN_ALGORITHMS", "SUPPORTED_DTYPES", "scan"]
