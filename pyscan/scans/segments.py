"""pyscan.scan(x, offsets=o): every segment x[o[s] : o[s+1]] scanned on its own (docs/scan.md, "Segments").

One launch of the segments build of kernels/scan/decoupled_lookback.cu (SEGMENTS 1): the 1-D fast scan -- the
single-pass decoupled look-back of Merrill & Garland 2016, persistent blocks with the next tile's copies in flight --
on (value, head flag) pairs under Blelloch's segmented operator (1990, §1.5), each warp finding its heads in the
offsets.  One read and one write of every element and one read of the offsets, like a copy; the plans, the
tile-status words and their capture are the 1-D scan's (decoupled_lookback.launch).  Device offsets are checked first
by a small kernel and one flag read back (pyscan.segments), unless the caller passes check_offsets=False.

Model: pyscan.segments.tile_scan_model (the kernel's index arithmetic, the serial look-back schedule), through
`segmented_scan_model` here for any dtype.
"""

from __future__ import annotations

import numpy as np

from .. import segments
from ..runtime import arrays, driver
from ..types import CustomOperator, Types, load, requested_result, result_dtype, store
from ..types import _results as RESULTS
from . import decoupled_lookback as dl
from .initial import combine_initial

KERNEL = dl.KERNEL
FUNCTION = dl.SEGMENTED_SCAN_FUNCTION


def launch(out: int, x: int, n: int, dtype, offsets, op, value, device: int, stream: int, context: int = 0,
           exclusive=None) -> None:
    """One launch on n > 0 elements of dtype at device address x, with offsets (address, S, dtype) on the device:
    the segmented scan into out (exclusive: its flag), or with exclusive=None the reduction's S values."""
    dl.launch(out, x, n, dtype, op, bool(exclusive), device, stream, context, None if value == dtype else value,
              segments=(offsets[0], offsets[1], segments.C_OFFSET[offsets[2]], exclusive is None))


# ---------------------------------------------------------------------------------------------------------------
# The commonest segmented call, made whole: pyscan.scan(x, offsets=o, check_offsets=False) or pyscan.reduce(...) of
# a 1-D C-contiguous device x and int32/int64 device offsets on its device, a named operator, nothing else but
# dtype= and exclusive=.  A first call takes the general path (launch_scan here,
# pyscan.reductions.segments.launch_reduce), which marks its key here; later calls allocate the result with x's
# library and launch on x's library's stream in the device's primary context, with no Call.

READY: set = set()  # (x dtype, offsets dtype, op, result dtype, scan: bool, device) of general calls made


def keep_ready(call, x_dtype, offsets_dtype, op, value, scan: bool) -> None:
    """Mark a general call's key for the ready path (named operators only: a C expression's kernel is keyed by its
    text, which the ready path does not parse)."""
    if isinstance(op, str) and len(READY) < 1024:
        READY.add((np.dtype(x_dtype), np.dtype(offsets_dtype), op, np.dtype(value), scan, call.device))


def take_ready(kind, x, offsets, op, requested, exclusive):
    """The result of the commonest segmented call, or None (the general path then takes it, and says what is wrong
    if anything is).  requested: dtype=; exclusive: the scan's flag, None for the reduction."""
    read = kind.ready(x)  # (address, n, dtype, device, stream) of a 1-D C-contiguous device array, or None
    okind = arrays.READY.get(type(offsets))
    if read is None or okind is None or not read[1]:
        return None
    oread = okind.ready(offsets)
    if oread is None or oread[1] < 2 or oread[3] != read[3]:  # S >= 1 segments, on x's device
        return None
    address, n, dtype, device, stream = read
    try:
        value = (RESULTS.get((dtype, op)) or result_dtype(dtype, op) if requested is None else
                 requested_result(dtype, op, requested))
    except (TypeError, ValueError):  # refused by the general path, in the call's words
        return None
    if (dtype, oread[2], op, value, exclusive is not None, device) not in READY:
        return None
    count = oread[1] - 1  # S
    if exclusive is None:  # the reduction: S values (torch's new() makes x's shape or (), new_shaped any)
        native, out = kind.new_shaped(x, (count,), value, device, stream)
    else:
        native, out = kind.new(x, (n,), value, device, stream)
    launch(out, address, n, dtype, (oread[0], count, oread[2]), op, value, device, stream,
           driver._primary.get(device) or driver.primary(device), exclusive)
    return native


def launch_scan(call, x, out, offsets, *, op, exclusive: bool, value) -> int:
    """One launch: the segmented scan of the n = x.size > 0 elements of device array x into out (the result dtype
    `value`), offsets an pyscan.segments.Offsets already on the device.  Returns the number of launches."""
    launch(int(out.gpudata), int(x.gpudata), x.size, x.dtype, (int(offsets.view.gpudata), offsets.segments,
           offsets.dtype), op, value, call.device, call.stream, call.context, bool(exclusive))
    keep_ready(call, x.dtype, offsets.dtype, op, value, True)
    return 1


def scan_segments(call, offsets, out, *, op, exclusive: bool, value, start=None, check: bool = True):
    """pyscan.scan's path for offsets=: x (the call's, flattened) scanned per segment into a 1-D result of x.size
    elements of the result dtype `value`, in the caller's kind.  start: initial= as the kernels take it (every
    segment starts from it: one elementwise pass after the scan, kernels/scan/combine_initial.cu)."""
    what = "scan: offsets"
    o = segments.begin_offsets(offsets, call, what)
    shape = (call.size,)
    if out is not None:
        call.expect_out(out, shape, value, "scan: out")
    with call:
        result = call.result(shape, value)
        if call.size:
            segments.ready_offsets(o, call, what, check)
            source = arrays.DeviceView(int(call.x.gpudata), shape, call.dtype, call.x)
            target = arrays.DeviceView(int(result.gpudata), shape, value, result)
            # a tile is read whole before it is written; where the result's element size differs, out may not be x
            scratch = None
            if out is not None and value != call.dtype and arrays.overlaps(source, target):
                scratch = call.empty(shape, value)
            launch_scan(call, source, scratch if scratch is not None else target, o, op=op, exclusive=exclusive,
                        value=value)
            if scratch is not None:
                call.copy(target, scratch, target.size * np.dtype(value).itemsize)
            if start is not None:  # y = v op y: every segment from v (an exclusive scan's heads, e, become v)
                combine_initial(call, target, call.size, start, op, value)
        return call.finish(result)


def segmented_scan_model(x, offsets, *, op="add", exclusive=False, dtype=None):
    """The kernel's result on the host for x of any dtype (converted as the kernel loads it, stored as the result
    dtype): pyscan.segments.tile_scan_model on the compute values.  offsets: valid CSR offsets.  op: a name, or a
    CustomOperator bound to the value dtype (pyscan.types.operator(...).bound(value))."""
    x = np.asarray(x).reshape(-1)
    types = Types.of(x.dtype, op, dtype)
    if isinstance(op, CustomOperator):
        op = op.bound(types.value)
    o = segments.check_host_offsets(offsets, x.size)
    return store(segments.tile_scan_model(load(x, types), o, op=op, exclusive=exclusive, value=types.value,
                                          itemsize=dl.element_size(types.input, types.value)), types)


__all__ = ["KERNEL", "READY", "keep_ready", "launch", "launch_scan", "scan_segments", "segmented_scan_model",
           "take_ready"]
