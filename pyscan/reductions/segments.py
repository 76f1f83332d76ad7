"""pyscan.reduce(x, offsets=o): one value per segment x[o[s] : o[s+1]] (docs/reduction.md, "Segments").

One launch of kernels/reduction/segmented_fast.cu, load-balanced by elements: every block takes a tile of 4096
(32-bit compute types) or 2048 (64-bit) consecutive elements whatever the segments' lengths, runs the tile's
segmented scan (kernels/common/segmented_tile.cuh, with the decoupled look-back carrying a segment across tiles)
and writes each segment that ends in it (the empty ones get the identity).  So 10^6 segments of one element, one
segment of 2^24 and a power-law mix all read x once and the offsets once, with no second pass.  The status words and
the tile counter are decoupled_lookback's (next_status).  Device offsets are checked first (pyscan.segments) unless
check_offsets=False.

Model: pyscan.segments.segment_reduce_model (the scan model's value at each segment's last element).
"""

from __future__ import annotations

import numpy as np

from .. import segments
from ..runtime import arrays
from ..runtime.loader import get_kernel
from ..scans.initial import combine_initial
from ..scans.segments import keep_ready, kernel_defines, status_for, tiles_for
from ..types import CustomOperator, Types, identity, load, store

KERNEL = "reduction/segmented_fast.cu"
FUNCTION = "segmented_fast_reduce"


def launch_reduce(call, x, out, offsets, *, op, value) -> int:
    """One launch: out[s] for the S = offsets.segments segments of the n = x.size > 0 elements of device array x
    (out: S elements of the result dtype `value`; offsets already on the device)."""
    n = x.size
    tiles = tiles_for(n, value)
    fn = get_kernel(KERNEL, FUNCTION, device=call.device, **kernel_defines(x.dtype, op, value, offsets.dtype))
    counter, status, epoch, own = status_for(call, tiles, value)  # noqa: F841 (own: kept until the launch)
    fn.launch_typed(call.context, call.stream, fn.config(tiles, segments.BLOCK), int(out.gpudata), int(x.gpudata), n,
                    int(offsets.view.gpudata), offsets.segments, counter, status, tiles, epoch)
    keep_ready(call, x.dtype, offsets.dtype, op, value, False, fn)
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
    return store(segments.segment_reduce_model(load(x, types), o, op=op, value=types.value), types)


__all__ = ["KERNEL", "launch_reduce", "reduce_segments", "segmented_reduce_model"]
