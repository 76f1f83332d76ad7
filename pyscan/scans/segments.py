"""pyscan.scan(x, offsets=o): every segment x[o[s] : o[s+1]] scanned on its own (docs/scan.md, "Segments").

One launch of kernels/scan/segmented_lookback.cu: the single-pass decoupled look-back scan (Merrill & Garland 2016)
of (value, head flag) pairs under Blelloch's segmented operator (1990, §1.5), the head flags made per tile from the
offsets (kernels/common/segmented_tile.cuh).  One read and one write of every element and one read of the offsets
(each tile reads those that fall in it, after a 32-ary search), like a copy; the tile-status words and the tile
counter are decoupled_lookback's (pyscan/scans/decoupled_lookback.py next_status: kept per stream, epoch-tagged,
no memset).  Device offsets are checked first by a small kernel and one flag read back (pyscan.segments), unless
the caller passes check_offsets=False.

Model: pyscan.segments.tile_scan_model (the kernel's index arithmetic, the serial look-back schedule), through
`segmented_scan_model` here for any dtype.
"""

from __future__ import annotations

import numpy as np

from .. import segments
from ..runtime import arrays, capture, driver, loader
from ..runtime.loader import get_kernel
from ..types import COMPUTE_TYPES, CustomOperator, Types, load, requested_result, result_dtype, store
from ..types import _results as RESULTS
from ..types import defines as type_defines
from .decoupled_lookback import next_status, status_words
from .initial import combine_initial

KERNEL = "scan/segmented_lookback.cu"
FUNCTION = "segmented_lookback_scan"
MAX_TILES = 2**31 - 1  # the tile index is a 32-bit int (and a grid's x extent)


def kernel_defines(dtype, op, value, offset_dtype) -> dict:
    """The #defines of segmented_lookback.cu (and segmented_fast.cu) for x of dtype, op, the result dtype and
    the offsets' dtype (int32 or int64)."""
    return {**type_defines(dtype, op, value), "OFFSET_TYPE": segments.C_OFFSET[np.dtype(offset_dtype)]}


def kept_status(tiles: int, itemsize: int, device: int, stream: int) -> tuple:
    """(counter address, status address, epoch) of an eager launch of `tiles` tiles on the stream:
    decoupled_lookback's kept words (one tile: none)."""
    if tiles == 1:
        return 0, 0, 0
    base, epoch = next_status(tiles, itemsize, device, stream)
    return base, base + 16, epoch


def status_for(call, tiles: int, value) -> tuple:
    """(counter address, status address, epoch, owner) of the call's stream: kept_status; a call captured into a
    CUDA graph takes its own zeroed words and epoch 0 instead (pyscan.runtime.capture), kept alive by `owner` until
    the launch is queued."""
    itemsize = COMPUTE_TYPES[np.dtype(value)].itemsize
    if tiles > 1 and driver._capturing(call.stream) and driver.capturing(call.stream, call.device):
        own = capture.status(8 * (2 + status_words(tiles, itemsize)), call.device, call.stream)
        return own.address, own.address + 16, 0, own
    return (*kept_status(tiles, itemsize, call.device, call.stream), None)


# ---------------------------------------------------------------------------------------------------------------
# The commonest segmented call, made whole: pyscan.scan(x, offsets=o, check_offsets=False) or pyscan.reduce(...) of
# a 1-D C-contiguous device x and int32/int64 device offsets on its device, a named operator, nothing else but
# dtype= and exclusive=.  A first call takes the general path (launch_scan here,
# pyscan.reductions.segments.launch_reduce), which keeps its kernel here; later calls look it up, allocate the result
# with x's library and launch on x's library's stream in the device's primary context, with no Call.

class ReadyPlan:
    """A segmented kernel and what its launch needs that its key fixes: the elements per tile and the status words'
    value size."""

    __slots__ = ("kernel", "tile", "status_size")

    def __init__(self, kernel, tile: int, status_size: int):
        self.kernel, self.tile, self.status_size = kernel, tile, status_size


READY: dict = {}  # (x dtype, offsets dtype, op, result dtype, scan: bool, device) -> ReadyPlan


def keep_ready(call, x_dtype, offsets_dtype, op, value, scan: bool, kernel) -> None:
    """Keep a general call's kernel for the ready path (named operators only: a C expression's kernel is keyed by
    its text, which the ready path does not parse)."""
    if isinstance(op, str) and len(READY) < 1024:
        key = (np.dtype(x_dtype), np.dtype(offsets_dtype), op, np.dtype(value), scan, call.device)
        if key not in READY:
            READY[key] = ReadyPlan(kernel, segments.tile_size(value), COMPUTE_TYPES[np.dtype(value)].itemsize)


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
    plan = READY.get((dtype, oread[2], op, value, exclusive is not None, device))
    if plan is None or driver._capturing(stream):  # under capture: the general path's own status words
        return None
    count = oread[1] - 1  # S
    if exclusive is None:  # the reduction: S values (torch's new() makes x's shape or (), new_shaped any)
        native, out = kind.new_shaped(x, (count,), value, device, stream)
    else:
        native, out = kind.new(x, (n,), value, device, stream)
    tiles = -(-n // plan.tile)
    counter, status, epoch = kept_status(tiles, plan.status_size, device, stream)
    kernel = plan.kernel
    args = (out, address, n, oread[0], count, *(() if exclusive is None else (int(exclusive),)), counter, status,
            tiles, epoch)
    context = driver._primary.get(device) or driver.primary(device)
    geometry = kernel.config(tiles, segments.BLOCK)
    if loader.launch_raw(context, kernel.function, stream, geometry, kernel.arg_types, *args):
        kernel.launch_typed(context, stream, geometry, *args)  # to raise
    return native


def tiles_for(n: int, value) -> int:
    tiles = -(-n // segments.tile_size(value))
    if tiles > MAX_TILES:
        raise ValueError(f"offsets=: {n} elements is more than {MAX_TILES} tiles of {segments.tile_size(value)}")
    return tiles


def launch_scan(call, x, out, offsets, *, op, exclusive: bool, value) -> int:
    """One launch: the segmented scan of the n = x.size > 0 elements of device array x into out (the result dtype
    `value`), offsets an pyscan.segments.Offsets already on the device.  Returns the number of launches."""
    n = x.size
    tiles = tiles_for(n, value)
    fn = get_kernel(KERNEL, FUNCTION, device=call.device, **kernel_defines(x.dtype, op, value, offsets.dtype))
    counter, status, epoch, own = status_for(call, tiles, value)  # noqa: F841 (own: kept until the launch)
    fn.launch_typed(call.context, call.stream, fn.config(tiles, segments.BLOCK), int(out.gpudata), int(x.gpudata), n,
                    int(offsets.view.gpudata), offsets.segments, int(bool(exclusive)), counter, status, tiles, epoch)
    keep_ready(call, x.dtype, offsets.dtype, op, value, True, fn)
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
    return store(segments.tile_scan_model(load(x, types), o, op=op, exclusive=exclusive, value=types.value), types)


__all__ = ["KERNEL", "READY", "keep_ready", "launch_scan", "scan_segments", "segmented_scan_model", "take_ready"]
