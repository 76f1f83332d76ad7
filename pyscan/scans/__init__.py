"""Prefix scan (PMPP ch. 11, Hands-On ch. 4): every algorithm of the books behind one function.

    pyscan.scan(x, axis=None, dtype=None, out=None, *, op="add", exclusive=False, algorithm="auto", stream=None,
                identity=None, initial=None, offsets=None, check_offsets=True)

Each algorithm lives in a module of this package that registers itself in SCANS with its driver, its kernel
files and its NumPy step-model (see pyscan.registry).  A driver has the signature

    driver(x, out, *, op, exclusive: bool, call: Call) -> int   # the number of kernel launches

and is only called with validated, contiguous, non-empty 1-D device arrays of a supported dtype (GPUArrays or
pyscan.runtime.arrays.DeviceView: .gpudata, .shape, .dtype, .size), out of the result dtype
(pyscan.types.result_dtype: it may differ from x's; the drivers build their kernels for x's dtype, out's and the
compute type between), inside the call's device; it launches on call.stream and allocates with call.empty
(pyscan.runtime.arrays.Call); out never overlaps x unless the algorithm is in IN_PLACE.  op is an operator name
or a pyscan.types.CustomOperator (a C expression; the drivers pass it on to pyscan.types.defines, which writes its
OP_EXPR macros).  A model has

    model(x: np.ndarray, *, op="add", exclusive=False, return_steps=False, dtype=None, identity=None, initial=None)
        -> result, or (result, steps: list[Step]) with return_steps
"""

from __future__ import annotations

import numpy as np

# Each module registers its algorithms; the registry's order (scans/registry.py) is the order of SCAN_ALGORITHMS.
from .. import axes
from ..runtime import arrays
from ..types import (
    COMPUTE_TYPES,
    ELEMENT_TYPES,
    OPERATOR_NAMES,
    SUPPORTED_DTYPES,
    Types,
    check_identity,
    initial_compute,
    operator,
    requested_result,
    result_dtype,
)
from ..types import _results as _RESULTS
from . import axis, blelloch, decoupled_lookback, hierarchical, segments, single_pass, single_section  # noqa: F401
from . import axis as axis_module  # `axis` is also scan()'s argument
from .initial import combine_initial
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
    takes n.  Every scan of the auto priority takes every dtype and operator."""
    for limit, name in _auto_choices():
        if limit is None or n <= limit:
            return name
    return SCANS.choose(n)


def max_length(name: str):
    """The longest input algorithm `name` takes: MAX_LENGTH for the book's kernels, the registered max_length for
    the fast ones (None: any length that fits in device memory)."""
    entry = SCANS.get(name)
    return entry.max_length if entry.fast else MAX_LENGTH


def scan(x, axis=None, dtype=None, out=None, *, op="add", exclusive=False, algorithm="auto", stream=None,
         identity=None, initial=None, offsets=None, check_offsets=True):
    """Inclusive (or exclusive) prefix scan with `op`, like np.cumsum / np.cumprod / ufunc.accumulate: "add", "mul",
    "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor" (integers and bool), "logical_and", "logical_or" (bool
    results) -- or a C expression in a and b with its identity, as PyCUDA's InclusiveScanKernel(dtype, "a*b"):
    scan(x, op="a*b", identity=1), scan(x, op="max(a, b)", identity=-np.inf).

    Custom operators (pyscan.expressions has the grammar: numbers, a and b, C's operators, casts, ?:, and the
    functions max, min, fmax, fmin, abs, fabs, sqrt, floor, ceil, trunc; nothing else).  The operator must be
    associative (PMPP §11.1): every algorithm groups the combines its own way, so a - b gives different answers
    from different algorithms (demos/custom_operator.py).  It need not be commutative: every scan keeps the order,
    the earlier value on the left (the composition of affine maps -- a linear recurrence -- scans correctly).
    identity= is required: e with e op v == v == v op e for
    every v, held exactly by the result dtype; it pads partial sections and starts exclusive scans.  The result
    dtype is x's unless dtype= chooses one (NumPy has no accumulator rule for an expression); a and b are values of
    it (widened to at least 32 bits: int8 as int, float16 as float) and every combine's value is converted back to
    it, so a custom float16 sum rounds at every step.  Every algorithm takes custom operators (the axis kernels
    too, for every dtype); their kernels are built once per (expression, identity, dtypes).  With a named operator,
    identity= may be given only as that operator's own identity (ValueError otherwise).

    initial=v: every output combined with v first, y[k] = v op x[0] op ... op x[k] (CUB's init); an exclusive scan
    starts with y[0] = v.  v is converted to the result dtype (integers must fit; floats round to nearest).  One
    elementwise pass after the scan does it (kernels/scan/combine_initial.cu: a read and a write of the result);
    for the named operators on float16 / bfloat16 that is a second rounding of each result.  Along an axis every
    row starts from v.

    offsets=o: segments.  o holds S + 1 non-decreasing integers (host, or int32/int64 on x's device), o[0] == 0 and
    o[-1] == x.size (CSR, as torch.segment_reduce(offsets=)); each segment x[o[s]:o[s+1]] of the flattened x is
    scanned on its own (exclusive: the identity at each segment's first element; initial=: every segment from v),
    in one launch of the segmented look-back scan (pyscan/scans/segments.py).  Bad offsets raise ValueError before
    any kernel: host ones checked by NumPy, device ones by a small kernel and one flag read back (a wait for the
    stream), which check_offsets=False skips -- unchecked bad offsets give wrong values, never an access out of
    bounds.  Not with axis= or a named algorithm.  docs/scan.md, "Segments".

    x: a NumPy array (the result is a NumPy array) or a device array -- pycuda GPUArray, CuPy ndarray, torch CUDA
    tensor, Numba device array, or any object with __cuda_array_interface__ -- used where it is, with the result a
    new array of the same kind on the same device (pyscan.runtime.arrays).  dtypes: bool, int8/16/32/64,
    uint8/16/32/64, float16, float32, float64, and torch.bfloat16 (complex is refused).  An exclusive scan starts
    from the operator's identity (0; 1 for mul; the dtype's lowest value or -inf for max; its highest or +inf for
    min; all ones for bitwise_and).  Every algorithm accepts every length, 0 included.

    The result dtype is NumPy's (pyscan.types.result_dtype): add and mul of bool and of integers narrower than 64
    bits give int64 (unsigned: uint64), as np.cumsum and np.cumprod do; floats, max, min and the bitwise operators
    keep x's dtype; logical_and / logical_or give bool.  dtype= chooses the accumulator and result dtype, as
    np.cumsum's dtype= does (x is converted to it as the kernels load it; an explicit narrow integer dtype wraps,
    np.cumsum(x, dtype=np.int8)).  float16 and bfloat16 are combined in float32 and rounded once to their dtype:
    |result - exact| <= error_depth * eps32 * sum|x_j| + 2^-11 |exact| (float16; 2^-8 for bfloat16), where np.cumsum
    of float16 rounds to float16 after every addition.

    axis: None scans the array flattened in C order, as np.cumsum does (the result is 1-D, x.size long); an int
    (negative counts from the end) scans along that axis of an N-d array (the result has x's shape), with the axis
    kernels (algorithm "axis", auto's choice whenever the axis is not the whole array; docs/axis.md).  The axis
    kernels take every dtype and operator, C expressions too, converting in their loads (int8 add gives int64 there
    too, as np.cumsum(x, axis=1)).  A named book algorithm scans 1-D arrays and flattened ones (axis=None); with an
    axis of an N-d array it is refused with a ValueError naming "auto" and "axis" (it does not run row by row) --
    except where the axis is the whole array (every other extent 1).
    A NumPy array that is not contiguous is copied first.  A device array that is not C-contiguous (x.T, x[:, ::2])
    is copied by its own library on the call's stream when it is N-d or an axis is given (CuPy, torch; other kinds
    must be C-contiguous); a 1-D device array must be C-contiguous.

    out: an array of x's kind, of the result's shape and dtype, C-contiguous, to write the result into (returned).
    out may be x itself (in place) with every algorithm where the result dtype is x's: those in IN_PLACE scan in
    place, the others through a scratch buffer.  stream: where the kernels run (a pycuda, CuPy, torch, Numba or
    cuda.core stream, or a cudaStream_t int).  Default: CuPy's or torch's current stream for their arrays, the
    stream a Numba or __cuda_array_interface__ array names, the legacy default stream for NumPy and GPUArray.  The
    call returns without waiting for the GPU unless the result goes to NumPy.
    """
    kind = arrays.READY.get(type(x))
    if kind is not None and axis is not None and algorithm == "auto" and out is None and (
            stream is None and op in OPERATOR_NAMES and (exclusive is False or exclusive is True)) and (
            identity is None and initial is None and offsets is None):
        done = axes.take_ready(kind, x, axis_module.READY, axis, op, exclusive, dtype)  # the plan a first call made
        if done is not None:
            return done
    elif kind is not None and algorithm == "auto" and out is None and (
            stream is None and op in OPERATOR_NAMES and (exclusive is False or exclusive is True)) and (
            identity is None and initial is None and offsets is None):
        read = kind.ready(x)  # the commonest call: the auto algorithm's ready(), no Call
        if read is not None and (read[2], op) in _RESULTS:  # (dtype, op) seen and valid: result_dtype's cache
            if dtype is None:
                return AUTO_READY(kind, x, *read, op, exclusive)
            try:
                result = requested_result(read[2], op, dtype)
            except (TypeError, ValueError):  # a bad dtype=: refused below, in the call's words
                result = None
            if result is not None:
                return AUTO_READY(kind, x, *read, op, exclusive, result)
    elif kind is not None and offsets is not None and check_offsets is False and axis is None and out is None and (
            algorithm == "auto" and stream is None and op in OPERATOR_NAMES and (exclusive is False or exclusive is True)
            and identity is None and initial is None):
        done = segments.take_ready(kind, x, offsets, op, dtype, exclusive)  # the launch a first call marked
        if done is not None:
            return done
    if kind is None or kind is arrays.TORCH or kind is arrays.TORCH_TRACED:
        torch_ops = arrays.torch_route(x, kind)  # requires grad, CPU, traced: the custom operator
        if torch_ops is not None:
            return torch_ops.scan(x, axis, dtype, out, op=op, exclusive=exclusive, algorithm=algorithm, stream=stream,
                                  identity=identity, initial=initial, offsets=offsets, check_offsets=check_offsets)
    given = identity
    if op not in OPERATOR_NAMES or given is not None:
        op = operator(op, given)  # a CustomOperator for a C expression (ExpressionError quoting it)
    if exclusive is not False and exclusive is not True and not isinstance(exclusive, np.bool_):
        raise TypeError(f"exclusive must be True or False, got {arrays.describe(exclusive)}")
    if algorithm != "auto":
        SCANS.get(algorithm)  # unknown names fail before anything else
    call = arrays.begin(x, what="scan: x", dtypes=ELEMENT_TYPES, ndim=None, stream=stream,
                        strided="copy_nd" if axis is None else "copy")
    value = result_dtype(call.dtype, op, dtype)  # TypeError for bitwise ops of floats, logical ops to non-bool
    check_identity(op, value, given)  # ValueError: not exact in the result dtype, or not a named operator's own
    start = None if initial is None else initial_compute(initial, Types(call.dtype, value, COMPUTE_TYPES[value]))
    if offsets is not None:  # segments (pyscan/scans/segments.py)
        _check_segment_args(axis, algorithm, check_offsets)
        return segments.scan_segments(call, offsets, out, op=op, exclusive=bool(exclusive), value=value, start=start,
                                      check=bool(check_offsets))
    shape = call.shape
    if axis is not None:
        a = axes.normalize_axis(axis, len(shape), "scan: axis")
        outer, n, inner = axes.split(shape, a)
        if outer * inner != 1 or (algorithm == "auto" and len(shape) != 1):
            result = _scan_axis(call, outer, n, inner, out, op, bool(exclusive), algorithm, a, value, start)
            if (call.size and type(x) in arrays.READY and out is None and algorithm == "auto" and (
                    initial is None and op in OPERATOR_NAMES) and (
                    exclusive is False or exclusive is True)):  # the next such call: axes.take_ready
                key = axes.call_key(shape, call.dtype, axis, op, exclusive, dtype, call.device)
                if key is not None:
                    axis_module.remember_ready(key, shape, a, call.dtype, value, op, exclusive, call.device)
            return result
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
        if name == "axis":  # the axis kernels on one row
            axes.check_axis_types(call.dtype, value, op, "scan")
    driver = SCANS.get(name).driver
    result_shape = shape if axis is not None else flat
    if out is not None:
        call.expect_out(out, result_shape, value, "scan: out")
    with call:
        result = call.result(result_shape, value)
        if call.size:
            source = call.x if len(shape) == 1 else arrays.DeviceView(int(call.x.gpudata), flat, call.dtype, call.x)
            target = result if len(result_shape) == 1 else arrays.DeviceView(int(result.gpudata), flat, value, result)
            scratch = None
            # in place only where the kernels read a tile before writing it in the same dtype
            if out is not None and (name not in IN_PLACE or value != call.dtype) and arrays.overlaps(source, target):
                scratch = call.empty(flat, value)
            driver(source, scratch if scratch is not None else target, op=op, exclusive=bool(exclusive), call=call)
            if scratch is not None:
                call.copy(target, scratch, target.size * target.dtype.itemsize)
            if start is not None:
                combine_initial(call, target, call.size, start, op, value, exclusive=bool(exclusive))
        return call.finish(result)


def _check_segment_args(axis, algorithm, check_offsets, what="scan"):
    """The arguments offsets= does not combine with: axis= (the segments index the flattened array), a named
    algorithm (the segmented kernels are their own); check_offsets must be a bool."""
    if axis is not None:
        raise ValueError(f"{what}: offsets= segments the flattened array; it takes no axis= (got axis={axis!r})")
    if algorithm != "auto":
        raise ValueError(f"{what}: offsets= runs the segmented kernels; it takes algorithm='auto' only (got "
                         f"{algorithm!r})")
    if check_offsets is not False and check_offsets is not True and not isinstance(check_offsets, np.bool_):
        raise TypeError(f"{what}: check_offsets must be True or False, got {arrays.describe(check_offsets)}")


def _scan_axis(call, outer, n, inner, out, op, exclusive, algorithm, a, value, start=None):
    """pyscan.scan along axis a of an N-d array into the result dtype `value`: the axis kernels
    (pyscan/scans/axis.py), accumulating in `value` (int32 add in int64, as np.cumsum)."""
    if algorithm not in ("auto", "axis"):
        raise ValueError(f"scan: algorithm {algorithm!r} scans 1-D arrays (or the flattened array, axis=None); "
                         f"along axis {a} of shape {call.shape} use algorithm='auto' or 'axis'")
    axes.check_axis_types(call.dtype, value, op, "scan")
    if out is not None:
        call.expect_out(out, call.shape, value, "scan: out")
    with call:
        result = call.result(call.shape, value)
        if call.size:
            axis.scan_along(call.x, result, outer, n, inner, op=op, exclusive=exclusive, call=call, acc_dtype=value)
            if start is not None:  # every row from v
                combine_initial(call, result, call.size, start, op, value, n=n, inner=inner, exclusive=exclusive)
        return call.finish(result)


AUTO_READY = SCANS.auto_ready()  # the commonest call's whole path


__all__ = ["SCANS", "SCAN_ALGORITHMS", "SUPPORTED_DTYPES", "scan"]
