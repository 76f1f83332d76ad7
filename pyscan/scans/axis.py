"""Scans along an axis of an N-d array (docs/axis.md): the rows build of kernels/scan/decoupled_lookback.cu (the
last axis: the 1-D single-pass scan of the flattened array on (value, row start) pairs, rows as segments) and
kernels/scan/axis_columns.cu (any other axis: n rows of `inner` lanes, a look-back over row chunks per lane).  One
read and one write of every element.

`scan_along(x, out, outer, n, inner, ...)` scans a C-contiguous (outer, n, inner) view; the registry entry "axis"
is the same driver on a 1-D array (one row).  The models (`rows_model`, `columns_model`, `model`) follow the
kernels' index arithmetic step by step, vectorised over tiles, blocks and threads, in the schedule where every
look-back finds its predecessor's inclusive prefix (P) at its first look (decoupled_lookback.py says why another
schedule only regroups the same aggregates: equal for integers and max/min, within error_depth for floats).
"""

from __future__ import annotations

import numpy as np

from ..axes import keep, kernel_macros, planned, split
from ..runtime import capture, driver
from ..runtime.loader import get_kernel
from ..runtime.workspace import StreamWorkspace
from ..types import (
    COMPUTE_TYPES,
    CustomOperator,
    Types,
    as_dtype,
    check_dtype,
    check_op,
    identity,
    load,
    result_dtype,
    store,
    ufunc,
)
from . import decoupled_lookback as dl
from .decoupled_lookback import rows_model
from .registry import SCANS

ROWS_KERNEL, ROWS_FUNCTION = dl.KERNEL, dl.ROWS_FUNCTION
COLUMNS_KERNEL, COLUMNS_FUNCTION = "scan/axis_columns.cu", "axis_columns_scan"
BLOCK = 256  # threads per block of the column scan
MAX_GRID = 2**31 - 1


def column_items(itemsize: int, vector: int = 1) -> int:
    """The most rows a thread of axis_columns.cu scans: 32 for 4-byte compute types, 16 for 8-byte ones (the
    kernel's shared memory, (ITEMS + 1) * 256 elements, then 33 and 34 KB of the 48 KB a block may hold statically).
    A chunk's fixed costs (the barriers, the Kogge-Stone over row groups, the look-back) are spread over more
    elements: twice 16 / 8 rows ran 1.05-1.4 x faster (docs/axis.md).  Over `vector`, the lanes a thread of the
    direct build holds (column_lanes_per_thread): the same registers."""
    return (32 if itemsize == 4 else 16) // vector


def column_lanes_per_thread(in_itemsize: int, itemsize: int) -> int:
    """The consecutive lanes a thread of the direct-loads build holds (LANES_PER_THREAD) for inputs of `in_itemsize`
    bytes combined in `itemsize`: 2 for 2-byte inputs combined in 4 bytes (float16, bfloat16; int16 max), so that a
    warp's load of one row is 64 lanes, 128 bytes, and one load or store moves two lanes of a row: float16 along
    axis 0 of 4096 x 4096 and 16 x 2^20 ran 1.17-1.24 x faster.  Else 1: bool and uint8 into int64 ran 1.05-1.35 x
    slower with 2 (docs/axis.md, "Two lanes a thread")."""
    return 2 if in_itemsize == 2 and itemsize == 4 else 1


def column_build_items(items: int, itemsize: int, vector: int = 1) -> int:
    """The ITEMS of the build that runs `items` rows a thread: column_items(), or half that where the thread scans
    no more than half (short columns, e.g. 16 x 2^20 along axis 0: the smaller shared memory keeps more blocks
    resident; the larger staged build ran such shapes 1.08-1.13 x slower; in the direct-loads build, fewer
    registers)."""
    most = column_items(itemsize, vector)
    return most if items > most // 2 else most // 2


def column_build(lanes: int, items: int, itemsize: int, vector: int = 1) -> dict:
    """The #defines of the axis_columns.cu build that runs a (lanes, items) geometry: ITEMS (column_build_items),
    and DIRECT_LOADS where a warp holds 32 consecutive lanes of one row group (lanes >= 32): each thread's rows
    loaded straight into registers and stored from there, with no shared-memory staging (docs/axis.md), `vector`
    (LANES_PER_THREAD, column_lanes_per_thread) lanes a thread."""
    if lanes < 32:
        return {"ITEMS": column_build_items(items, itemsize)}
    build = {"ITEMS": column_build_items(items, itemsize, vector), "DIRECT_LOADS": 1}
    if vector > 1:
        build["LANES_PER_THREAD"] = vector
    return build


def column_geometry(n: int, inner: int, itemsize: int, vector: int = 1) -> tuple:
    """(lanes, rows, items, lane_chunks, chunks) of axis_columns_scan for an (outer, n, inner) view, inner > 1, n > 0.
    lanes: block width over the lanes (inner itself when inner < 32, so a warp reads 32 / inner whole rows of
    contiguous memory; else 32 .. 256 threads of `vector` lanes each (column_lanes_per_thread), at most 256 lanes, wider
    when n is short so a block still holds ~256 * vector * items elements); rows: the row groups, BLOCK threads
    over lanes / vector; items: rows per thread; a chunk is rows * items rows."""
    if inner < 32:
        most, lanes = column_items(itemsize), inner
        rows = BLOCK // lanes
    else:
        most = column_items(itemsize, vector)
        rows = vector  # a block holds at most BLOCK lanes (its look-back: a thread a lane)
        while rows < 8 and rows * most < n:
            rows *= 2
        threads = min(BLOCK // rows, max(32, 1 << (-(-inner // vector) - 1).bit_length()))
        lanes, rows = threads * vector, BLOCK // threads
    items = min(most, -(-n // rows))
    return lanes, rows, items, -(-inner // lanes), -(-n // (rows * items))


def column_plan(n: int, inner: int, in_itemsize: int, itemsize: int) -> tuple:
    """(vector, (lanes, rows, items, lane_chunks, chunks)) of axis_columns_scan for an (outer, n, inner) view of
    inputs of `in_itemsize` bytes combined in `itemsize`: the build's lanes a thread (column_lanes_per_thread), then
    the geometry they give (column_geometry) -- the kernel's Plan, the model and the error bound all take it here."""
    vector = column_lanes_per_thread(in_itemsize, itemsize)
    return vector, column_geometry(n, inner, itemsize, vector)


# ---------------------------------------------------------------------------------------------------------------
# Models.

def columns_model(x, *, op="add", exclusive=False, e=None, in_itemsize=None):
    """axis_columns.cu on a C-contiguous (outer, n, inner) array x of compute values (inner > 1): every column
    scanned along n.  e: as rows_model's; in_itemsize: the element size of the input x was loaded from (the direct
    build's lanes a thread, column_lanes_per_thread; default x's)."""
    x = np.asarray(x)
    outer, n, inner = x.shape
    dt = x.dtype
    if x.size == 0:
        return x.copy()
    f = ufunc(op)
    e = identity(op, dt) if e is None else dt.type(e)
    _, (lanes, rows, items, lane_chunks, chunks) = column_plan(n, inner, in_itemsize or dt.itemsize, dt.itemsize)
    R = rows * items
    pad = np.full((outer, chunks * R, lane_chunks * lanes), e, dt)
    pad[:, :n, :inner] = x
    # [outer, chunk, ty, item, lane chunk, tx]: row chunk*R + ty*items + item of lane lc*lanes + tx
    X = pad.reshape(outer, chunks, rows, items, lane_chunks, lanes)
    total = np.full((outer, chunks, rows, lane_chunks, lanes), e, dt)
    for i in range(items):
        total = f(total, X[:, :, :, i])
    scanned = total.copy()  # Kogge-Stone over ty
    offset = 1
    while offset < rows:
        shifted = scanned[:, :, :-offset].copy()
        scanned[:, :, offset:] = f(shifted, scanned[:, :, offset:])
        offset *= 2
    aggregate = scanned[:, :, -1]  # (outer, chunk, lane chunk, tx)
    prefix = np.full_like(aggregate, e)
    P = np.empty_like(aggregate)
    for c in range(chunks):
        if c > 0:
            prefix[:, c] = f(P[:, c - 1], e)  # the look-back's one combine: op(value, identity)
        P[:, c] = aggregate[:, c] if c == 0 else f(prefix[:, c], aggregate[:, c])
    running = np.repeat(prefix[:, :, None], rows, axis=2)
    running[:, :, 1:] = f(running[:, :, 1:], scanned[:, :, :-1])
    out = np.empty_like(X)
    for i in range(items):
        nxt = f(running, X[:, :, :, i])
        out[:, :, :, i] = running if exclusive else nxt
        running = nxt
    return out.reshape(outer, chunks * R, lane_chunks * lanes)[:, :n, :inner].copy()


def compute_model(x, *, op="add", exclusive=False, return_steps=False, axis=-1, e=None, itemsize=None, types=None):
    """NumPy step-model of the axis scan on the kernels' compute values (x already loaded: pyscan.types.load): x of
    any shape scanned along `axis` (the kernel the driver picks for it: decoupled_lookback.cu's rows build when
    nothing but extents of 1 follow the axis, else axis_columns.cu).  return_steps: the row kernel's steps (a scan
    along the last axis).  e: the kernels' op_identity(); itemsize: the rows build's element size (rows_model);
    types: the call's pyscan.types.Types (its input's element size sets the column build's lanes a thread)."""
    from ..axes import normalize_axis, split

    check_op(op)
    x = np.asarray(x)
    check_dtype(x.dtype)
    if x.ndim == 0:
        x = x.reshape(1)
    a = normalize_axis(axis, x.ndim, "axis scan model")
    outer, n, inner = split(x.shape, a)
    if x.size == 0:
        return (x.copy(), []) if return_steps else x.copy()
    if inner == 1:
        out = rows_model(x, n, op=op, exclusive=exclusive, return_steps=return_steps, e=e, itemsize=itemsize)
        if return_steps:
            return out[0].reshape(x.shape), out[1]
        return out.reshape(x.shape)
    if return_steps:
        raise ValueError("axis scan model: steps are recorded for scans along the last axis (the row kernel)")
    in_itemsize = types.input.itemsize if types is not None else None
    return columns_model(x.reshape(outer, n, inner), op=op, exclusive=exclusive, e=e,
                         in_itemsize=in_itemsize).reshape(x.shape)


compute_model.takes_types = True  # pyscan.types.model passes the call's Types


def model(x, *, op="add", exclusive=False, return_steps=False, axis=-1, dtype=None):
    """NumPy step-model of the axis scan of x of any dtype (BFLOAT16 as its bits), as the GPU computes it: x
    converted as op_load does (to the result dtype, NumPy's or dtype=, then widened to the compute type),
    compute_model, the results stored as op_store does (rounded once for float16 and bfloat16, cut to the width for
    narrow integers).  op: a name or a CustomOperator (each combine converted to the result dtype)."""
    x = np.asarray(x)
    op = check_op(op)
    types = Types.of(x.dtype, op, dtype)
    if isinstance(op, CustomOperator):
        op = op.bound(types.value)
    e = np.asarray(identity(op, types.value)).astype(types.compute)[()]
    out = compute_model(load(x, types), op=op, exclusive=exclusive, return_steps=return_steps, axis=axis, e=e,
                        itemsize=dl.element_size(types.input, types.value), types=types)
    result, steps = out if return_steps else (out, None)
    result = store(result, types)
    return (result, steps) if return_steps else result


def error_depth(n: int, inner: int = 1, itemsize: int = 4) -> int:
    """Roundings on any path from an input to an output of a scan of length n along the axis.
    Rows (inner == 1): decoupled_lookback's bound for n elements, plus one look-back hop (7) for a row that starts
    mid-tile: its chain crosses one tile more.  Columns: the thread loop (items) and the Kogge-Stone over ty (log2
    rows) give a chunk's aggregate; one combine per chunk of the chain; the rescan (2 + items).  The larger over
    the builds' lanes a thread (column_lanes_per_thread), whatever the input."""
    if inner <= 1:
        return dl.decoupled_lookback_error_depth(n) + 7
    depths = []
    for in_itemsize in (1, 2, 4, 8):
        _, (lanes, rows, items, _, chunks) = column_plan(max(int(n), 1), inner, in_itemsize, itemsize)
        depths.append(2 * items + rows.bit_length() + 2 * chunks + 4)
    return max(depths)


# ---------------------------------------------------------------------------------------------------------------
# GPU.

EPOCHS = 1 << 30
# The column kernel's ticket counter and status words, per (device, stream) and element size (the rows build keeps
# the 1-D scan's, decoupled_lookback.py): zeroed when allocated, each launch takes the next epoch (docs/runtime.md,
# "Kept buffers").  Layout (64-bit words): [0] counter and finished blocks, [1] unused, [2:] status words, per
# (group, chunk, lane) slot.
_status = {4: StreamWorkspace("axis column scan status, 32-bit types"),
           8: StreamWorkspace("axis column scan status, 64-bit types")}


def _next_status(slots: int, itemsize: int, device: int, stream: int) -> tuple:
    """(base address, epoch, owner to keep until the launch is enqueued): the stream's kept buffer and its next
    epoch, or while the stream captures a CUDA graph a zeroed buffer of the call's own and epoch 0
    (pyscan.runtime.capture)."""
    nbytes = 8 * (2 + slots * (1 if itemsize == 4 else 4))
    if driver._capturing(stream) and driver.capturing(stream, device):
        own = capture.status(nbytes, device, stream)
        return own.address, 0, own
    workspace = _status[itemsize]
    kept = workspace.get(nbytes, device, stream)
    with kept.lock:
        kept.state += 1
        if kept.state == EPOCHS:
            workspace.zero(kept, stream)
            kept.state = 1
        return kept.address, kept.state, None


def _kernel(relpath, function, in_dtype, value, out_dtype, op, device, **more):
    return get_kernel(relpath, function, device=device, **more, **kernel_macros(in_dtype, value, out_dtype, op))


class Plan:
    """One scan of a C-contiguous (outer, n, inner) view with outer * n * inner > 0 on one device.  The last axis
    (inner == 1): the rows build of the 1-D fast scan, launched as decoupled_lookback.launch does (its plans, status
    words and persistent grid).  Any other: the column kernel, its launch geometry, its arguments after the two
    pointers, and the status slots it keeps (0: none, one chunk).  Made once per view, dtypes, operator and exclusive
    (plan()); scan_along() and ready() launch it."""

    __slots__ = ("kernel", "geometry", "before", "after", "slots", "itemsize", "rows")

    def __init__(self, outer, n, inner, in_dtype, acc, out_dtype, op, exclusive: bool, device: int):
        total = outer * n * inner
        self.itemsize = COMPUTE_TYPES[acc].itemsize  # T's: the status words and the shared memory hold T
        self.rows = None
        if inner == 1:
            if out_dtype != acc:
                raise ValueError(f"scan: the rows build writes the result dtype {acc}, not {out_dtype}")
            # (total, row length, x's dtype, op, exclusive, the result dtype where it is not x's): dl.launch's
            self.rows = (total, n, in_dtype, op, bool(exclusive), None if acc == in_dtype else acc)
            return
        vector, (lanes, rows, items, lane_chunks, chunks) = column_plan(n, inner, np.dtype(in_dtype).itemsize,
                                                                       self.itemsize)
        self.kernel = _kernel(COLUMNS_KERNEL, COLUMNS_FUNCTION, in_dtype, acc, out_dtype, op, device,
                              **column_build(lanes, items, self.itemsize, vector))
        grid = outer * lane_chunks * chunks
        if grid > MAX_GRID:
            raise ValueError(f"scan: an (outer, n, inner) = ({outer}, {n}, {inner}) view needs {grid} blocks, "
                             f"more than one launch takes ({MAX_GRID})")
        self.slots = 0 if chunks == 1 else grid * lanes
        self.before, self.after = (n, inner, lanes, rows, items, lane_chunks, chunks, int(exclusive)), ()
        self.geometry = self.kernel.config(grid, BLOCK)

    def launch(self, out: int, x: int, device: int, stream: int, context: int) -> None:
        """The scan of x into out (device addresses) on `stream`: the stream's kept status and its next epoch, or
        under a CUDA graph's capture a zeroed status of the call's own (_next_status).  Rows: dl.launch."""
        if self.rows is not None:
            total, n, in_dtype, op, exclusive, result = self.rows
            dl.launch(out, x, total, in_dtype, op, exclusive, device, stream, context, result, row_length=n)
            return
        base, epoch, own = (0, 0, None) if not self.slots else _next_status(self.slots, self.itemsize, device, stream)
        self.kernel.launch_typed(context, stream, self.geometry, out, x, *self.before, base, base + 16 if base else 0,
                                 *self.after, epoch)
        del own  # a captured call's own status: kept until the launch is enqueued


_plans: dict = {}  # (outer, n, inner, in dtype, acc dtype, out dtype, op, exclusive, device) -> Plan


def plan(outer, n, inner, in_dtype, acc, out_dtype, op, exclusive: bool, device: int) -> Plan:
    return planned(_plans, (outer, n, inner, in_dtype, acc, out_dtype, op, exclusive, device),
                   lambda: Plan(outer, n, inner, in_dtype, acc, out_dtype, op, exclusive, device), device)


def scan_along(x, out, outer: int, n: int, inner: int, *, op: str, exclusive: bool, call, acc_dtype=None) -> int:
    """Scan the C-contiguous (outer, n, inner) view of device array x into out (same size, may be x) on call.stream;
    returns the number of launches (0 for an empty array).  acc_dtype: the result dtype x is converted to on load
    (default: out's); the kernels combine in its compute type (pyscan.types.COMPUTE_TYPES)."""
    if outer * n * inner == 0:
        return 0
    out_dtype = np.dtype(out.dtype)
    acc = np.dtype(acc_dtype) if acc_dtype is not None else out_dtype
    plan(outer, n, inner, np.dtype(x.dtype), acc, out_dtype, op, bool(exclusive), call.device).launch(
        int(out.gpudata), int(x.gpudata), call.device, call.stream, call.context)
    return 1


# pyscan.scan(x, axis=a) again with the same key: pyscan.axes.take_ready (the key: shape, x's dtype, a, op, exclusive,
# dtype=, device)
READY: dict = {}


def remember_ready(key: tuple, shape: tuple, a: int, in_dtype, value, op, exclusive: bool, device: int) -> None:
    """Keep the plan of a call that took the general path for the next call with the same key."""
    outer, n, inner = split(shape, a)
    keep(READY, key, (plan(outer, n, inner, in_dtype, value, value, op, exclusive, device), tuple(shape), value))


def axis_driver(x, out, *, op, exclusive, call):
    """The registry's driver: a 1-D array is one row, accumulated in out's dtype (the result dtype)."""
    return scan_along(x, out, 1, x.size, 1, op=op, exclusive=exclusive, call=call)


def builds(dtype, op) -> list:
    """(kernel file, #defines) of the builds for x of dtype and op, into NumPy's result dtype (prewarm, the
    sanitizer): the rows build of the fast scan and the column kernel's four (column_build: two ITEMS, staged and
    direct loads)."""
    dtype = as_dtype(dtype)
    value = result_dtype(dtype, op)
    macros = kernel_macros(dtype, value, value, op)
    size = COMPUTE_TYPES[value].itemsize
    vector = column_lanes_per_thread(dtype.itemsize, size)
    most = column_items(size)
    return [(ROWS_KERNEL, dl.kernel_defines(dtype, op, True, None, None if value == dtype else value, rows=True)),
            *[(COLUMNS_KERNEL, {**macros, **column_build(lanes, items, size, vector)})
              for lanes in (2, 32) for items in (most, 1)]]


SCANS.register(
    "axis", axis_driver, kernels=(ROWS_KERNEL, COLUMNS_KERNEL),
    source="PMPP ch. 11: the segmented scan exercise with §11.7's single pass, decoupled look-back (Merrill & "
           "Garland 2016)",
    summary="N-d arrays along any axis (auto's choice for axis=): the last axis as the 1-D fast scan of the "
            "flattened array on (value, row start) pairs (rows as segments), other axes as n rows of `inner` "
            "coalesced lanes with a look-back over row chunks per lane; one read and one write of every element",
    model=compute_model, fast=True, error_depth=error_depth,
)

__all__ = ["builds", "column_build", "column_geometry", "column_lanes_per_thread", "column_plan", "columns_model",
           "compute_model", "error_depth", "model", "rows_model", "scan_along"]
