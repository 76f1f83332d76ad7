"""pyscan.reduce(x, offsets=o): one value per segment x[o[s] : o[s+1]] (docs/reduction.md, "Segments").

One launch of the segments build of kernels/scan/decoupled_lookback.cu's reduction entry point, load-balanced by
elements: the persistent blocks take tiles of 8192 (32-bit types) or 4096 (64-bit) consecutive elements whatever
the segments' lengths, run the tile's segmented scan (the look-back carrying a segment across tiles) and write
each segment that ends in it, no element (the empty ones get the identity).  So 10^6 segments of one element, one
segment of 2^24 and a power-law mix all read x once and the offsets once, with no second pass.  Plans, status words
and capture are the 1-D scan's (pyscan.scans.segments.launch).  Device offsets are checked first (pyscan.segments)
unless check_offsets=False.

Model: pyscan.segments.segment_reduce_model (the scan model's value at each segment's last element).
"""

from __future__ import annotations

import numpy as np

from .. import segments
from ..runtime import arrays
from ..scans import decoupled_lookback as dl
from ..scans.initial import combine_initial
from ..scans.segments import keep_ready, launch
from ..types import CustomOperator, Types, identity, load, store

KERNEL = dl.KERNEL
FUNCTION = dl.SEGMENTED_REDUCE_FUNCTION


def launch_reduce(call, x, out, offsets, *, op, value) -> int:
    """One launch: out[s] for the S = offsets.segments segments of the n = x.size > 0 elements of device array x
    (out: S elements of the result dtype `value`; offsets already on the device)."""
    launch(int(out.gpudata), int(x.gpudata), x.size, x.dtype, (int(offsets.view.gpudata), offsets.segments,
           offsets.dtype), op, value, call.device, call.stream, call.context)
    keep_ready(call, x.dtype, offsets.dtype, op, value, False)
    return 1


def reduce_segments(call, offsets, out, *, op, value, start=None, empty_value=None, check: bool = True):
    """pyscan.reduce's path for offsets=: a 1-D result of S values of the result dtype `value` in the caller's kind.
    start: initial= as the kernels take it (combined with every segment's value; an empty segment gives it);
    empty_value: what every segment of an empty x holds (the identity, or initial=)."""
    from . import _fill  # the package's helper (imported here: the package imports this module)

    what = "reduce: offsets"
    o = segments.begin_offsets(offsets, call, what)
    shape = (o.segments,)
    if out is not None:
        call.expect_out(out, shape, value, "reduce: out")
    with call:
        result = call.result(shape, value)
        if o.segments and call.size == 0:  # every segment empty: no kernel
            _fill(call, result, o.segments, identity(op, value) if empty_value is None else empty_value, value)
        elif o.segments:
            segments.ready_offsets(o, call, what, check)
            source = arrays.DeviceView(int(call.x.gpudata), (call.size,), call.dtype, call.x)
            target = arrays.DeviceView(int(result.gpudata), shape, value, result)
            launch_reduce(call, source, target, o, op=op, value=value)
            if start is not None:
                combine_initial(call, target, o.segments, start, op, value)
        return call.finish(result)


def segmented_reduce_model(x, offsets, *, op="add", dtype=None):
    """The kernel's result on the host for x of any dtype: pyscan.segments.segment_reduce_model on the compute
    values, stored as the result dtype."""
    x = np.asarray(x).reshape(-1)
    types = Types.of(x.dtype, op, dtype)
    if isinstance(op, CustomOperator):
        op = op.bound(types.value)
    o = segments.check_host_offsets(offsets, x.size)
    return store(segments.segment_reduce_model(load(x, types), o, op=op, value=types.value,
                                               itemsize=dl.element_size(types.input, types.value)), types)


__all__ = ["KERNEL", "launch_reduce", "reduce_segments", "segmented_reduce_model"]
