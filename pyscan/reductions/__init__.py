"""Reduction (PMPP ch. 10): every kernel of the chapter, and a fast one, behind one function.

    pyscan.reduce(x, axis=None, dtype=None, out=None, keepdims=False, *, op="add", algorithm="auto", stream=None,
                  identity=None, initial=None, map=None, offsets=None, check_offsets=True)
        ->  a NumPy scalar of the result dtype (NumPy x), a 0-d device array of x's kind (device x); with offsets=
            a 1-D array of one value per segment, of x's kind (pyscan/reductions/segments.py)

Each algorithm registers itself in REDUCTIONS (pyscan.registry) with

    driver(x, *, op, call: Call) -> NumPy scalar   # x validated, contiguous, 1-D, non-empty
    model(x: np.ndarray, *, op="add", return_steps=False, dtype=None, identity=None, initial=None, map=None)
        -> result, or (result, steps: list[Step])

(op: an operator name or a pyscan.types.CustomOperator, a C expression) and these fields of its ReduceAlgorithm
entry (pyscan.registry):

    launch(x, *, op, call, out=None, dtype=None, map=None) -> one-element array   # the driver without the copy
                                                        # back, into out (a one-element device array of the result
                                                        # dtype, pyscan.types.result_dtype(x.dtype, op, dtype), or
                                                        # mapped_types' with a map) if given; map: an Expression in
                                                        # x and i applied in the loads (op_load_at; axis: TypeError)
    error_depth(n) -> int                               # h in the float bound below
    count_work(n) -> WorkCount, model_count_work(n)     # simple and convergent: the COUNT_WORK build on the GPU,
                                                        # and the same counts from the model's index arithmetic

Algorithms (PMPP §10.3 - §10.8, then beyond the book):

    simple         §10.3  one block per 2*blockDim.x elements, stride doubling, in global memory (divergent)
    convergent     §10.4  stride halving: the active threads stay contiguous
    shared_memory  §10.6  the first combine from global memory, the rest in shared memory
    segmented      §10.7  many blocks, one atomic per block into the result
    coarsened      §10.8  COARSE_FACTOR*2 elements per thread before the tree, one atomic per block
    fast           -      grid-stride, 16-byte loads, independent accumulators, warp shuffles, a second pass

Floating-point error.  fl(a + b) = (a + b)(1 + d) with |d| <= u = eps/2.  A reduction evaluates a tree of
additions; an input that passes through h additions on its way to the result is multiplied by at most
(1 + u)^h, so |computed - exact| <= ((1 + u)^h - 1) * sum |x_i| <= h * eps * sum |x_i| (for h*u <= 1/2), whatever
the tree's shape and whatever order the atomics happened in.  error_depth(n) is an upper bound on h for the
algorithm's tree: the tree steps of each level, the serial runs of a thread, and -- for the atomic algorithms,
whose block results are added one after the other in an unpredictable order -- the number of blocks.  The tests
check every float sum against this bound and an exact reference (math.fsum).
"""

from __future__ import annotations

import math

import numpy as np

# Each module registers its algorithms; the registry's order (reductions/registry.py) is REDUCE_ALGORITHMS'.
from .. import axes
from ..runtime import arrays, driver
from ..scans import _check_segment_args
from ..scans.initial import combine_initial
from ..scans.segments import take_ready as take_ready_segments
from ..types import (
    COMPUTE_TYPES,
    ELEMENT_TYPES,
    OPERATOR_NAMES,
    SUPPORTED_DTYPES,
    Types,
    as_dtype,
    check_identity,
    check_op,
    identity,
    initial_compute,
    mapped_types,
    operator,
    parse_map,
    requested_result,
    result_dtype,
    scalar_of,
    to_value,
)
from ..types import _results as _RESULTS
from . import arg_extreme as arg_extreme_module
from . import axis, book, fast, segments  # noqa: F401
from . import axis as axis_module  # `axis` is also reduce()'s argument
from .registry import REDUCTIONS

REDUCE_ALGORITHMS = REDUCTIONS.names()


def choose_auto(n: int, dtype=None, op=None) -> str:
    """The algorithm `auto` runs on n elements: the first of the registry's auto priority that takes n
    (reductions/registry.py).  Every registered reduction takes every dtype and operator."""
    return REDUCTIONS.choose(n)


def _begin(x, algorithm, op, stream):
    if algorithm != "auto":
        REDUCTIONS.get(algorithm)  # unknown names fail first, listing the valid ones
    check_op(op)
    return arrays.begin(x, what="reduce: x", dtypes=ELEMENT_TYPES, stream=stream)


def _empty_result(dtype, op):
    """NumPy's answer for an empty array: the operator's identity (np.sum 0, np.prod 1, np.bitwise_and.reduce all
    ones, np.logical_and.reduce True); np.max / np.min raise."""
    if op not in ("max", "min"):
        return identity(op, dtype)
    raise ValueError(f"reduce: zero-size array to reduction operation {op} which has no identity "
                     f"(as np.{op} raises; op='add' of an empty array is 0, as np.sum gives)")


def _fill(call, result, count, fill, value):
    """result[:count] = fill (a scalar) as the value dtype, on the call's stream: a memset where its bytes are zero,
    else a copy from the host (waited for: the host memory is pageable)."""
    host = to_value(np.full(count, fill), value).view(np.uint8)
    if not host.any() and host.nbytes % 4 == 0:
        call.memset32(result, 0, host.nbytes // 4)
        return
    driver.copy_htod(int(result.gpudata), host.ctypes.data, host.nbytes, call.stream)
    driver.synchronize(call.stream)  # read `host` before it goes


def reduce(x, axis=None, dtype=None, out=None, keepdims=False, *, op="add", algorithm="auto", stream=None,
           identity=None, initial=None, map=None, offsets=None, check_offsets=True):
    """Reduce x with `op` on the GPU, over `axis`, like np.sum / np.prod / np.max / np.min / ufunc.reduce: "add",
    "mul", "max", "min", "bitwise_and", "bitwise_or", "bitwise_xor" (integers and bool), "logical_and",
    "logical_or" (a bool result) -- or a C expression in a and b with identity=, as PyCUDA's ReductionKernel's
    reduce_expr: reduce(x, op="max(a, b)", identity=-np.inf).  Custom operators as in pyscan.scan (its docstring):
    the result dtype x's unless dtype= is given, every combine converted to it; every algorithm takes them
    (segmented and coarsened combine their blocks with an atomicCAS loop).  A reduction's
    operator must be associative and commutative: every algorithm but simple pairs elements out of order
    (convergent's thread t takes t + stride, the fast kernel's accumulators stride through x, atomics arrive in
    any order).

    map="x*x": a C expression in x (the element, in x's own type widened to at least 32 bits: int8 and bool as int,
    float16 as float) and i (its 64-bit index), applied to every element as the kernels load it, so it costs no
    pass of its own (PyCUDA's map_expr): map="x*x" (sum of squares), map="x < 0" (a count), map="abs(x)" (L1
    norm).  The mapped value is converted to the result dtype, which is NumPy's for x's dtype and op unless dtype=
    is given (then the mapped values are of dtype=, whatever x's: reduce(f, map="x < 0", dtype=np.int64) counts in
    int64; a sum of squares of int32 computes x*x in int, as C does -- map="(long long)x * x" widens first).  Whole
    arrays only (axis=None or axes that cover every extent > 1), with any algorithm but "axis" (TypeError; its
    kernels load with op_load, which takes no map).

    offsets=o: one value per segment x[o[s]:o[s+1]] of the flattened x, a 1-D array of S values of x's kind (NumPy
    in, NumPy out); o as for pyscan.scan(x, offsets=o) (S + 1 non-decreasing integers, o[0] == 0, o[-1] == x.size;
    device offsets checked by a small kernel and one flag read unless check_offsets=False).  An empty segment gives
    the identity (or initial=), where np.add.reduceat gives the element at its place.  One load-balanced launch
    (pyscan/reductions/segments.py); not with axis=, keepdims=True, map= or a named algorithm.  docs/reduction.md,
    "Segments".

    initial=v: the result combined with v, v op (x[0] op ... op x[n-1]), as np.add.reduce(x, initial=v); an empty x
    (or empty reduced axes) gives v, for max and min too.  v is converted to the result dtype (integers must fit;
    floats round to nearest).  One more tiny launch combines it (kernels/scan/combine_initial.cu); for the named
    operators on float16 / bfloat16 that is a second rounding of the result.

    x: a NumPy array (copied to the device; a non-contiguous one is made contiguous first; the result is a NumPy
    scalar of the result dtype) or a device array -- pycuda GPUArray, CuPy ndarray, torch CUDA tensor, Numba device
    array or any __cuda_array_interface__ object, used where it is (C-contiguous, any offset) -- for which the
    result is a 0-d device array of the same kind, as gpuarray.sum, cupy.sum and torch.sum return, and the call does
    not wait for the GPU.  dtypes: bool, int8/16/32/64, uint8/16/32/64, float16, float32, float64, torch.bfloat16.
    Everything is checked before anything is launched.
    The result dtype is NumPy's (pyscan.types.result_dtype): add and mul of bool and of integers narrower than 64
    bits give int64 (unsigned: uint64), as np.sum and np.prod; floats, max, min and the bitwise operators keep x's
    dtype; the logical operators give bool.  dtype=: the accumulator and result dtype, as np.sum's dtype=.  float16
    and bfloat16 are combined in float32 and rounded once: |result - exact| <= h * eps32 * sum|x_i| + 2^-11 |exact|
    (float16; 2^-8 for bfloat16).

    axis: None (every element: a NumPy scalar for NumPy input, a 0-d device array of x's kind for device input), an
    int or a tuple of ints (negative ones count from the end): an array of the reduced shape (keepdims=True keeps the
    reduced axes as extents of 1), by the axis kernels (algorithm "axis", auto's choice; docs/axis.md), which take
    every dtype and operator, C expressions too, converting in their loads (int8 add gives int64 there too, as
    np.sum(x, axis=1); float16 is combined in float32 and rounded once).  A named book algorithm reduces whole arrays
    (axis=None, or axes that cover every extent > 1); with any other axis it is refused with a ValueError naming
    "auto" and "axis" (it does not run row by row).  Bad axes raise numpy.exceptions.AxisError (a ValueError), duplicates
    ValueError.  An empty reduced axis gives the operator's identity and raises ValueError for max/min, as NumPy.
    out: an array of x's kind (NumPy for NumPy input) of the result's shape and the result dtype, C-contiguous,
    written and returned (axis=None without keepdims: shape ()).  N-d or axis calls copy a device array that is not
    C-contiguous with its own library on the call's stream (CuPy, torch).
    stream: as for pyscan.scan (default: CuPy's / torch's current stream for their arrays).

    algorithm: "auto" (the fast kernel) or one of REDUCE_ALGORITHMS.  Every algorithm takes every length >= 1.
    The book's one-block kernels (simple, convergent, shared_memory) are launched with one block per
    2*blockDim.x-element segment, each writing its segment's result to a partials array, and then again on the
    partials, level after level from the host, until one value is left (a 2^24-element array takes three
    launches of 1024-thread blocks).  segmented and coarsened cover any length in one launch (plus a tiny launch
    that sets the output to the identity); fast in one launch (its last block reduces the per-block results).

    Semantics, as NumPy:
    * length 0: the operator's identity (add 0 as np.sum, mul 1 as np.prod, ...); max and min raise ValueError (as
      np.max and np.min).
    * integer add and mul wrap modulo 2^64 (or the width of an explicit dtype=, as np.sum(x, dtype=np.int8)).
    * max/min are exact; a NaN anywhere makes the result NaN (as np.max / np.min; not np.nanmax).
    * float add: the order of the additions is the algorithm's tree, not NumPy's, so the last bits differ from
      np.sum; |result - exact sum| <= h * eps * sum|x_i| with h = REDUCTIONS.get(name).error_depth(n)
      (see the module docstring).  segmented and coarsened combine the blocks' results with atomics in whatever
      order they arrive, so their float sums can differ between runs (within the bound); the others are
      reproducible.
    """
    kind = arrays.READY.get(type(x))
    if kind is not None and axis is not None and out is None and (keepdims is False or keepdims is True) and (
            algorithm == "auto" and stream is None and op in OPERATOR_NAMES) and (
            identity is None and initial is None and map is None and offsets is None):
        done = axes.take_ready(kind, x, axis_module.READY, axis, op, keepdims, dtype)  # the plan a first call made
        if done is not None:
            return done
    elif kind is not None and axis is None and out is None and keepdims is False and (
            algorithm == "auto" and stream is None and op in OPERATOR_NAMES) and (
            identity is None and initial is None and map is None and offsets is None):
        read = kind.ready(x)  # the commonest call: the auto algorithm's ready(), no Call
        if read is not None and read[1] and (read[2], op) in _RESULTS:  # (dtype, op) seen and valid
            if dtype is None:
                return AUTO_READY(kind, x, *read, op)
            try:
                result = requested_result(read[2], op, dtype)
            except (TypeError, ValueError):  # a bad dtype=: refused below, in the call's words
                result = None
            if result is not None:
                return AUTO_READY(kind, x, *read, op, result)
    elif kind is not None and offsets is not None and check_offsets is False and axis is None and out is None and (
            keepdims is False and algorithm == "auto" and stream is None and op in OPERATOR_NAMES) and (
            identity is None and initial is None and map is None):
        done = take_ready_segments(kind, x, offsets, op, dtype, None)  # the launch a first call marked
        if done is not None:
            return done
    if kind is None or kind is arrays.TORCH or kind is arrays.TORCH_TRACED:
        torch_ops = arrays.torch_route(x, kind)  # requires grad, CPU, traced: the custom operator
        if torch_ops is not None:
            return torch_ops.reduce(x, axis, dtype, out, keepdims, op=op, algorithm=algorithm, stream=stream,
                                    identity=identity, initial=initial, map=map, offsets=offsets,
                                    check_offsets=check_offsets)
    given = identity
    if op not in OPERATOR_NAMES or given is not None:
        op = operator(op, given)  # a CustomOperator for a C expression (ExpressionError quoting it)
    if map is not None:
        map = parse_map(map)  # an Expression in x and i (ExpressionError quoting it)
    if algorithm != "auto":
        REDUCTIONS.get(algorithm)  # unknown names fail first, listing the valid ones
    if keepdims is not False and keepdims is not True and not isinstance(keepdims, np.bool_):
        raise TypeError(f"reduce: keepdims must be True or False, got {arrays.describe(keepdims)}")
    call = arrays.begin(x, what="reduce: x", dtypes=ELEMENT_TYPES, ndim=None, stream=stream,
                        strided="copy_nd" if axis is None else "copy")
    if map is None:
        value = result_dtype(call.dtype, op, dtype)  # TypeError for bitwise ops of floats, logical ops to non-bool
    else:
        value = mapped_types(call.dtype, op, map, dtype).value  # TypeError: an integer operator on x's floats
    check_identity(op, value, given)  # ValueError: not exact in the result dtype, or not a named operator's own
    start = None if initial is None else initial_compute(initial, Types(call.dtype, value, COMPUTE_TYPES[value]))
    if offsets is not None:  # one value per segment (pyscan/reductions/segments.py)
        _check_segment_args(axis, algorithm, check_offsets, "reduce")
        if keepdims is not False:
            raise ValueError("reduce: offsets= gives one value per segment; it takes no keepdims=True")
        if map is not None:
            raise TypeError("reduce: map= is not taken with offsets= (the segmented kernel loads with op_load); map x "
                            "first")
        return segments.reduce_segments(call, offsets, out, op=op, value=value, start=start,
                                        empty_value=None if start is None else _held(initial, value),
                                        check=bool(check_offsets))
    shape = call.shape
    chosen = axes.normalize_axes(axis, len(shape), "reduce: axis")
    result_shape = axes.result_shape(shape, chosen, bool(keepdims))
    scalar = axis is None and not keepdims  # NumPy's scalar / the 0-d device array of today
    whole = all(shape[i] == 1 for i in range(len(shape)) if i not in chosen)  # one output: every element
    if not whole and algorithm not in ("auto", "axis"):
        raise ValueError(f"reduce: algorithm {algorithm!r} reduces whole arrays (axis=None); over axis {axis!r} of "
                         f"shape {shape} use algorithm='auto' or 'axis'")
    if map is not None and (not whole or algorithm == "axis"):
        raise TypeError(axis_module.MAP_REFUSED)
    if not whole or algorithm == "axis":
        axes.check_axis_types(call.dtype, value, op, "reduce")
    reduced = math.prod(shape[i] for i in chosen)
    if reduced == 0:  # NumPy's: initial= where given, else the identity (max/min raise)
        empty = _empty_result(value, op) if start is None else _held(initial, value)
    else:
        empty = None
    if scalar and out is None and call.kind is arrays.NUMPY and call.size == 0:
        return empty
    if out is not None:
        call.expect_out(out, result_shape if not scalar else (), value, "reduce: out")
    with call:
        result = call.result(result_shape if not scalar else (), value)
        outputs = math.prod(result_shape)
        if outputs == 0:
            pass
        elif reduced == 0:
            _fill(call, result, outputs, empty, value)
        elif whole:
            name = choose_auto(call.size) if algorithm == "auto" else algorithm  # the 1-D kernels
            flat = arrays.DeviceView(int(call.x.gpudata), (call.size,), call.dtype, call.x)
            target = arrays.DeviceView(int(result.gpudata), (1,), value, result)
            REDUCTIONS.get(name).launch(flat, op=op, call=call, out=target, dtype=dtype,
                                        **({"map": map} if map is not None else {}))
        else:
            _reduce_axes(call, shape, chosen, result, op, value)
            if (type(x) in arrays.READY and out is None and algorithm == "auto" and op in OPERATOR_NAMES) and (
                    start is None and (keepdims is False or keepdims is True) and axes.reduce_plan(shape, chosen)):
                key = axes.call_key(shape, call.dtype, axis, op, keepdims, dtype, call.device)  # axes.take_ready
                if key is not None:
                    axis_module.remember_ready(key, shape, chosen, result_shape, call.dtype, value, op, call.device)
        if start is not None and outputs and reduced:
            combine_initial(call, arrays.DeviceView(int(result.gpudata), (outputs,), value, result), outputs, start,
                            op, value)
        if scalar and out is None:
            return call.finish_scalar(result)
        return call.finish(result)


def argmax(x, axis=None, out=None, *, keepdims=False, stream=None):
    """The index of the largest element of x on the GPU, as np.argmax: over the array flattened in C order
    (axis=None) or along one axis (an int; negative counts from the end); int64 indices.  The first index of the
    largest value; a NaN counts as the largest, so the first NaN's index comes back (as NumPy's).  An empty x (or
    an empty axis) raises ValueError ("attempt to get argmax of an empty sequence").

    x: any dtype pyscan takes (bool, int8 .. uint64, float16, float32, float64, torch.bfloat16), a NumPy array or a
    device array (pycuda GPUArray, CuPy, torch CUDA, Numba, __cuda_array_interface__), as pyscan.reduce takes it
    (non-contiguous views are copied).  Returns, as pyscan.reduce: axis=None without keepdims, a NumPy int64 for
    NumPy x and a 0-d int64 device array of x's kind for device x (without waiting for the GPU); otherwise an int64
    array of x's kind of x's shape without the axis (keepdims=True: the axis kept as an extent of 1; with
    axis=None every axis).  out: an int64 array of x's kind and the result's shape, written and returned.
    stream: as pyscan.reduce's.  Kernels: kernels/reduction/arg_extreme.cu (docs/reduction.md, "argmax and
    argmin")."""
    return arg_extreme_module.arg_extreme(x, axis, out, keepdims, stream, largest=True)


def argmin(x, axis=None, out=None, *, keepdims=False, stream=None):
    """The index of the smallest element of x on the GPU, as np.argmin: the first index of the smallest value, the
    first NaN's index where x has a NaN (NumPy's rule: a NaN counts as the smallest too); everything else as
    pyscan.argmax."""
    return arg_extreme_module.arg_extreme(x, axis, out, keepdims, stream, largest=False)


def _held(initial, value):
    """initial= as the result of an empty reduction: a NumPy scalar of the value dtype (bfloat16: its float32 value,
    as _empty_result gives it)."""
    return scalar_of(initial, value, "initial", exact=False)


def _reduce_axes(call, shape, chosen, result, op, value):
    """The passes of pyscan.axes.reduce_plan, last axes first, into result of the result dtype `value` (the
    accumulator: int32 add in int64, as np.sum), each pass's partials in value's compute type (float16 sums stay
    float32 until the last store): reductions/axis.py's Plan."""
    passes = tuple(axes.reduce_plan(shape, chosen))
    if not passes:  # only extents of 1 reduced: the values, converted to the result dtype
        if value == call.dtype:
            call.copy(result, call.x, call.size * call.dtype.itemsize)
            return
        passes = ((call.size, 1, 1),)  # one pass over rows of one element: the kernels' conversion
    axis.plan(passes, call.dtype, value, op, call.device).launch(int(result.gpudata), int(call.x.gpudata),
                                                                 call.device, call.stream, call.context)


AUTO_READY = REDUCTIONS.auto_ready()  # the commonest call's whole path


def reduce_device(x, *, algorithm="auto", op="add", stream=None):
    """As reduce(), but the result stays on the device as a one-element array (a GPUArray for NumPy and GPUArray
    input, else the caller's kind), and the host does not wait for the kernels (for timing and for chaining GPU
    work).  The result dtype is NumPy's (pyscan.types.result_dtype).  An empty x gives the operator's identity on
    the device (0 for add, 1 for mul, ...); max/min of an empty x raise ValueError."""
    call = _begin(x, algorithm, op, stream)
    value = result_dtype(call.dtype, op)
    if call.size == 0:
        empty = _empty_result(value, op)
    name = choose_auto(call.size, call.dtype, op) if algorithm == "auto" else algorithm
    with call:
        if call.size == 0:
            result = call.empty((1,), value)
            _fill(call, result, 1, empty, value)
        else:
            result = REDUCTIONS.get(name).launch(call.x, op=op, call=call)
        return call.on_device(result)


def count_work(algorithm: str, n: int):
    """WorkCount of the COUNT_WORK build of `algorithm` ("simple" or "convergent") on one block of n/2 threads
    (n a power of two, 2 .. 2048), measured on the GPU: operator applications and warps active per step."""
    return _work_option(algorithm, "count_work")(n)


def model_count_work(algorithm: str, n: int):
    """The same counts as count_work(), read off the NumPy model's index arithmetic (no GPU)."""
    return _work_option(algorithm, "model_count_work")(n)


def prewarm(names=None, dtypes=None, ops=None, workers=8) -> int:
    """Compile every kernel build the drivers of `names` use for `dtypes` x `ops` (default: every dtype and every
    operator that takes it; bfloat16 as pyscan.types.BFLOAT16 or "bfloat16"; names=None also argmax's and
    argmin's builds, which names=["arg_extreme", ...] asks for by name), nvcc running in
    `workers` parallel processes, into pycuda's disk cache; later first calls then load instead of compiling.
    (A cold process otherwise compiles each build on first use, one after the other, ~1 s each.)  Returns the
    number of builds."""
    from concurrent.futures import ThreadPoolExecutor

    from pycuda.compiler import compile as nvcc_compile

    from ..runtime.loader import COMPILE_OPTIONS, build_source

    arch = driver.architecture(driver.default_device())
    sources = set()
    for name in [n for n in (names or REDUCE_ALGORITHMS) if n != "arg_extreme"]:
        for dtype in dtypes or ELEMENT_TYPES:
            for op in ops or OPERATOR_NAMES:
                try:
                    result_dtype(dtype, op)
                except TypeError:  # not an operator of this dtype (bitwise of floats): nothing to build
                    continue
                for path, macros in REDUCTIONS.get(name).builds(as_dtype(dtype), op):
                    sources.add(build_source(path, **macros))
    if names is None or "arg_extreme" in names:  # argmax / argmin (pyscan.argmax), every dtype
        for dtype in dtypes or ELEMENT_TYPES:
            for path, macros in arg_extreme_module.builds(as_dtype(dtype)):
                sources.add(build_source(path, **macros))
    with ThreadPoolExecutor(max_workers=workers) as pool:  # threads: each waits on its own nvcc process
        list(pool.map(lambda s: nvcc_compile(s, options=list(COMPILE_OPTIONS), no_extern_c=True, arch=arch), sources))
    return len(sources)


def _work_option(algorithm, key):
    count = getattr(REDUCTIONS.get(algorithm), key)
    if count is None:
        having = [a.name for a in REDUCTIONS if getattr(a, key) is not None]
        raise ValueError(f"reduce algorithm {algorithm!r} has no work counting; these do: {', '.join(having)}")
    return count


__all__ = ["REDUCTIONS", "REDUCE_ALGORITHMS", "SUPPORTED_DTYPES", "argmax", "argmin", "count_work", "model_count_work",
           "prewarm", "reduce", "reduce_device"]
