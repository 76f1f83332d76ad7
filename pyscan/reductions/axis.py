"""Reductions along axes of N-d arrays (docs/axis.md): kernels/reduction/axis_rows.cu (the last axis: a thread, a
warp or blocks per row by row length) and kernels/reduction/axis_columns.cu (any other axis: lanes coalesced, row
chunks, a tree over the block's row groups).  Several row chunks (or row segments) give partials that the last
block of each output's group folds in the same launch, with the same code, so every output is a fixed tree of its
inputs: float sums are reproducible run to run (the one atomic is the ticket that elects that block), and bounded
by error_depth.  `reduce_along(x, out, outer, n, inner, ...)` runs one (outer, n, inner) pass, one launch;
pyscan.reduce chains passes for tuple axes (pyscan.axes.reduce_plan).  The models repeat the kernels' arithmetic
exactly (same trees), so they give the GPU's float results bit for bit for the same SM count.
"""

from __future__ import annotations

import numpy as np

from .. import axes
from ..axes import keep, kernel_macros, planned
from ..runtime import capture, driver
from ..runtime.loader import get_kernel
from ..runtime.workspace import StreamWorkspace
from ..scans.steps import Step
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
from .registry import REDUCTIONS

ROWS_KERNEL, COLUMNS_KERNEL = "reduction/axis_rows.cu", "reduction/axis_columns.cu"
MAP_REFUSED = ("reduce: map= is applied in the loads of the whole-array kernels (op_load_at); the axis kernels load "
               "with op_load and take no map: reduce the whole array (axis=None) with an algorithm other than "
               "'axis', or map x first")
BLOCK = 256
SHORT_ROW = 16  # axis_rows.cu SHORT_ROW: rows up to this long get a thread each
WARP_ROW = 4096  # rows up to this long get a warp each, when there are enough rows to fill the GPU
BLOCKS_PER_SM = 8  # the grid the geometry aims for: 8 blocks of 256 threads per SM (2048 threads, an H100's most)
MIN_PER_THREAD = 8  # a row segment or row chunk gives each thread at least this many elements
COLUMN_MIN_ROWS = 64  # the reduction's column chunks: at least this many rows a thread (fewer partials to fold)
NOMINAL_SMS = 132  # the models' default: an H100 SXM
MAX_GRID = 2**31 - 1


def row_plan(rows: int, n: int, sms: int) -> tuple:
    """("short" | "warp" | "block", grid, splits, seg) of axis_rows.cu for `rows` rows of n > 0 elements (the short
    grid a row a thread, argmax/argmin's; the reduction's short rows are short_rows_per_thread a thread)."""
    target = BLOCKS_PER_SM * sms
    if n <= SHORT_ROW:
        return "short", -(-rows // BLOCK), 1, n
    if n <= WARP_ROW and -(-rows // (BLOCK // 32)) >= target:
        return "warp", -(-rows // (BLOCK // 32)), 1, n
    splits = max(1, min(-(-target // rows), -(-n // (BLOCK * MIN_PER_THREAD))))
    seg = -(-n // splits)
    splits = -(-n // seg)
    return "block", rows * splits, splits, seg


def short_rows_per_thread(rows: int, n: int, sms: int) -> int:
    """Rows each thread of axis_rows_reduce_short folds: as many as keep a block's run within 256 * SHORT_ROW
    elements (16 KB of int32 in flight a block), fewer where that would leave an SM short of BLOCKS_PER_SM blocks."""
    return max(1, min(SHORT_ROW // n, -(-rows // (BLOCK * BLOCKS_PER_SM * sms))))


def pass_plan(outer: int, n: int, inner: int, sms: int, itemsize: int | None = None) -> tuple:
    """One pass of the axis kernels over an (outer, n, inner) view (n > 0): (kernel, grid, chunks, geometry), kernel
    one of "rows_short", "rows_warp", "rows_block" (inner == 1, row_plan; the reduction's short rows
    short_rows_per_thread a thread) or "columns" (column_plan); chunks the partials per output (1: the pass gives
    the result; more: the (outer, chunks, inner) partials, which the reduction's kernels fold in their last block
    and argmax/argmin's next pass reduces); geometry the kernel's arguments after its pointers.  itemsize: the size
    of the elements the pass reads, for the reduction's column kernel (column_vec lanes a thread, COLUMN_MIN_ROWS
    rows); None: argmax/argmin's (a lane a thread, MIN_PER_THREAD rows)."""
    if inner == 1:
        mode, grid, splits, seg = row_plan(outer, n, sms)
        if mode == "short" and itemsize is not None:
            per_thread = short_rows_per_thread(outer, n, sms)
            return "rows_short", -(-outer // (BLOCK * per_thread)), 1, (outer, n, per_thread)
        return "rows_" + mode, grid, splits, ((n, splits, seg) if mode == "block" else (outer, n))
    if itemsize is None:
        plan = column_plan(outer, n, inner, sms)
    else:
        plan = column_plan(outer, n, inner, sms, column_vec(inner, itemsize), COLUMN_MIN_ROWS)
    lanes, rows, chunk_rows, lane_chunks, chunks = plan
    return "columns", outer * lane_chunks * chunks, chunks, (n, inner, lanes, rows, chunk_rows, lane_chunks, chunks)


def column_vec(inner: int, itemsize: int) -> int:
    """Lanes a thread of axis_columns.cu holds (LANES_PER_THREAD) where it reads elements of `itemsize` bytes: as many
    as make 4 bytes of x (2 of float16, 4 of bool), read as one load; 1 for 4-byte and wider elements (the partials
    of a later pass too) and where inner < 32."""
    return 4 // itemsize if inner >= 32 and itemsize < 4 else 1


def column_plan(outer: int, n: int, inner: int, sms: int, vec: int = 1, min_rows: int = MIN_PER_THREAD) -> tuple:
    """(lanes, rows, chunk_rows, lane_chunks, chunks) of axis_columns.cu for an (outer, n, inner) view, inner > 1:
    `vec` lanes a thread (lanes / vec threads across, rows = 256 / that down), a row chunk at least `min_rows` rows
    a thread where n allows (more chunks fill the GPU, but each chunk's partials cost another pass)."""
    if inner < 32:
        threads_x, vec = inner, 1
    else:
        rows = 1
        while rows < 8 and rows * 16 < n:
            rows *= 2
        across = -(-inner // vec)
        threads_x = min(BLOCK // rows, max(32 if vec == 1 else 1, 1 << (across - 1).bit_length()))
    lanes, rows = threads_x * vec, BLOCK // threads_x
    lane_chunks = -(-inner // lanes)
    groups = outer * lane_chunks
    wanted = max(1, min(-(-BLOCKS_PER_SM * sms // groups), -(-n // (rows * min_rows))))
    chunk_rows = -(-n // wanted)
    chunk_rows = -(-chunk_rows // rows) * rows
    return lanes, rows, chunk_rows, lane_chunks, -(-n // chunk_rows)


# ---------------------------------------------------------------------------------------------------------------
# Models: the kernels' trees, every thread at once.

def _warp_tree(v, f):
    """__shfl_down tree over the last axis (32 lanes): lane 0's result."""
    v = v.copy()
    offset = 16
    while offset >= 1:
        v[..., :offset] = f(v[..., :offset], v[..., offset:2 * offset])
        offset //= 2
    return v[..., 0]


def _strided_fold(seq, step, f, e):
    """Four accumulators over seq[..., k] (k = 0 .. len-1, one thread's elements `step` apart already gathered in
    order j, j + step, ...): the kernels' main loop takes 4 at a time while all 4 exist, the rest go to a0."""
    m = seq.shape[-1]
    acc = [np.full(seq.shape[:-1], e, seq.dtype) for _ in range(4)]
    k = 0
    while k + 3 < m:
        for u in range(4):
            acc[u] = f(acc[u], seq[..., k + u])
        k += 4
    while k < m:
        acc[0] = f(acc[0], seq[..., k])
        k += 1
    return f(f(acc[0], acc[1]), f(acc[2], acc[3]))


def _gather(x, lo, hi, threads, e):
    """(..., threads, per-thread count) of x[..., j] for j = lo + t, lo + t + threads, ... < hi (identity padding
    where a thread has fewer: the padded slots are after its last element, and identity does not change its folds'
    values... except the 4-accumulator grouping, so counts are returned too)."""
    m = -(-(hi - lo) // threads) if hi > lo else 0
    idx = lo + np.arange(threads)[:, None] + threads * np.arange(m)[None, :]
    valid = idx < hi
    g = np.where(valid, x[..., np.minimum(idx, max(hi - 1, 0))], e)
    return g, valid.sum(axis=1)


def _fold_threads(g, counts, f, e):
    """_strided_fold per thread, each with its own count (threads with fewer elements stop earlier)."""
    out = np.full(g.shape[:-1], e, g.dtype)
    for c in np.unique(counts):
        sel = counts == c
        out[..., sel] = _strided_fold(g[..., sel, :c], 1, f, e)
    return out


def _block_fold(x, lo, hi, f, e):
    """axis_rows.cu's block_fold of x[:, lo:hi] (x (rows, n)): each thread's four accumulators, the warps' shuffle
    trees and the tree of the warp results: the (rows,) values."""
    rows = x.shape[0]
    g, counts = _gather(x, lo, hi, BLOCK, e)  # (rows, 256, m)
    per_thread = _fold_threads(g, counts, f, e)
    warps = _warp_tree(per_thread.reshape(rows, BLOCK // 32, 32), f)  # (rows, 8)
    slots = np.full((rows, 32), e, x.dtype)
    slots[:, :BLOCK // 32] = warps
    return _warp_tree(slots, f)


def rows_pass(x, op, sms):
    """One launch of axis_rows.cu on (rows, n) x: the (rows, 1) results (long rows: each segment's value, then the
    row's last block's fold of them)."""
    rows, n = x.shape
    f, e = ufunc(op), identity(op, x.dtype)
    mode, grid, splits, seg = row_plan(rows, n, sms)
    if mode == "short":
        acc = np.full(rows, e, x.dtype)
        for j in range(n):
            acc = f(acc, x[:, j])
        return acc[:, None]
    if mode == "warp":
        g, counts = _gather(x, 0, n, 32, e)  # (rows, 32, m)
        return _warp_tree(_fold_threads(g, counts, f, e), f)[:, None]
    out = np.empty((rows, splits), x.dtype)
    for s in range(splits):
        out[:, s] = _block_fold(x, s * seg, min(n, (s + 1) * seg), f, e)
    if splits == 1:
        return out
    return _block_fold(out, 0, splits, f, e)[:, None]  # each row's last block: the same fold over its partials


def _column_fold(x, lo, hi, rows, f, e):
    """axis_columns.cu's fold_rows and row_group_tree over rows [lo, hi) of (outer, n, inner) x: row group ty folds
    rows lo + ty, lo + ty + rows, ... of each lane into four accumulators, then the tree over ty: (outer, inner)."""
    part = np.moveaxis(x[:, lo:hi, :], 1, 2)  # (outer, inner, rows of the chunk)
    g, counts = _gather(part, 0, hi - lo, rows, e)  # (outer, inner, rows, m): row group ty's rows
    totals = _fold_threads(g, counts, f, e)  # (outer, inner, rows)
    half = 1
    while half < rows:
        half <<= 1
    half >>= 1
    while half >= 1:  # the tree over ty: ty < half takes ty + half when it exists
        top = min(half, rows - half)
        totals[..., :top] = f(totals[..., :top], totals[..., half:half + top])
        half >>= 1
    return totals[..., 0]


def columns_pass(x, op, sms, itemsize=None):
    """One launch of axis_columns.cu on (outer, n, inner) x: the (outer, 1, inner) results (each row chunk's values,
    then the group's last block's fold of them).  itemsize: the size of the elements the kernel reads (x's stored
    dtype on a first pass; default x's own, the compute type's)."""
    outer, n, inner = x.shape
    f, e = ufunc(op), identity(op, x.dtype)
    _, _, chunks, geometry = pass_plan(outer, n, inner, sms, itemsize or x.itemsize)
    rows, chunk_rows = geometry[3], geometry[4]
    out = np.empty((outer, chunks, inner), x.dtype)
    for c in range(chunks):
        out[:, c, :] = _column_fold(x, c * chunk_rows, min(n, (c + 1) * chunk_rows), rows, f, e)
    if chunks == 1:
        return out
    return _column_fold(out, 0, chunks, rows, f, e)[:, None, :]  # each group's last block, the same block shape


def reduce_model_along(x, op, sms=NOMINAL_SMS, itemsize=None):
    """The driver's launch on a C-contiguous (outer, n, inner) x, n > 0: the (outer, inner) result.  itemsize: the
    size of x's elements as stored (the geometry depends on it)."""
    outer, n, inner = x.shape
    if inner == 1:
        return rows_pass(x.reshape(outer, n), op, sms).reshape(outer, 1)
    return columns_pass(x, op, sms, itemsize).reshape(outer, inner)


def compute_model(x, *, op="add", return_steps=False, axis=None, keepdims=False, sms=NOMINAL_SMS, itemsize=None):
    """NumPy model of the axis reduction on the kernels' compute values (x already loaded: pyscan.types.load), x of
    any shape over `axis` (None: every axis, as one row), the passes of pyscan.axes.reduce_plan, each the kernels'
    trees, the partials between passes kept in the compute type as the kernels keep them.  A 1-D x (the
    registry's use, through typed_model) is one row.  An empty reduction gives the identity; max/min raise.
    itemsize: the size of x's elements as stored before the load (the first column pass's geometry depends on it;
    default: x's own)."""
    from ..axes import normalize_axes, reduce_plan, result_shape

    check_op(op)
    x = np.asarray(x)
    check_dtype(x.dtype)
    axes = normalize_axes(axis, x.ndim, "axis reduce model")
    shape = result_shape(x.shape, axes, keepdims)
    reduced = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if reduced == 0:
        if op in ("max", "min"):
            raise ValueError(f"zero-size array to reduction operation {op} which has no identity")
        result = np.full(shape, identity(op, x.dtype), x.dtype)
    elif x.size == 0:
        result = np.empty(shape, x.dtype)
    else:
        part = np.ascontiguousarray(x).reshape(-1)
        steps = []
        for outer, n, inner in reduce_plan(x.shape, axes):
            part = reduce_model_along(part.reshape(outer, n, inner), op, sms, itemsize if not steps else None)
            part = part.reshape(-1)
            steps.append(Step(f"reduce (outer, n, inner) = ({outer}, {n}, {inner})", part.copy()))
        if not steps:
            steps.append(Step("nothing to combine (only extents of 1 reduced)", part.copy()))
        result = part.reshape(shape)
    if axis is None and not keepdims:
        result = result.reshape(())[()]
    if not return_steps:
        return result
    return result, (steps if x.size and reduced else [])


def model(x, *, op="add", return_steps=False, axis=None, keepdims=False, sms=NOMINAL_SMS, dtype=None):
    """NumPy model of the axis reduction of x of any dtype (BFLOAT16 as its bits) over `axis`, as the GPU computes
    it: x converted as the kernels' op_load does (to the result dtype, NumPy's or dtype=, then widened to the
    compute type), compute_model's passes, the result stored as op_store does (rounded once for float16 and
    bfloat16).  op: a name or a CustomOperator (each combine converted to the result dtype, as op_combine does)."""
    x = np.asarray(x)
    op = check_op(op)
    types = Types.of(x.dtype, op, dtype)
    if isinstance(op, CustomOperator):
        op = op.bound(types.value)
    out = compute_model(load(x, types), op=op, return_steps=return_steps, axis=axis, keepdims=keepdims, sms=sms,
                        itemsize=x.itemsize)
    result, steps = out if return_steps else (out, None)
    stored = store(np.asarray(result), types)
    if np.ndim(result) == 0 and not isinstance(result, np.ndarray):
        stored = stored.reshape(())[()]
    return (stored, steps) if return_steps else stored


def error_depth(n: int, inner: int = 1, outer: int = 1, sms: int = NOMINAL_SMS, itemsize: int | None = None) -> int:
    """An upper bound on the additions an input passes through in the launch over n elements along the axis: a
    thread's fold (its elements, 4 accumulators folded in 2 more), the warp trees (5 + 5) or the row-group tree
    (log2 rows + 1), and with several chunks (segments) of a row the last block's fold of their partials, the same
    again over `chunks` elements.  itemsize: the size of x's elements (the column geometry depends on it); None: the
    largest bound of any."""
    if itemsize is None:
        return max(error_depth(n, inner, outer, sms, size) for size in (1, 2, 4))
    n, outer, inner = max(int(n), 1), max(int(outer), 1), max(int(inner), 1)
    if inner == 1:
        mode, _, splits, seg = row_plan(outer, n, sms)
        if mode != "block":
            return seg if mode == "short" else -(-seg // 32) + 7
        return -(-seg // BLOCK) + 12 + (-(-splits // BLOCK) + 12 if splits > 1 else 0)
    _, _, chunks, geometry = pass_plan(outer, n, inner, sms, itemsize)
    rows, chunk_rows = geometry[3], geometry[4]
    tree = 2 + rows.bit_length()
    return -(-chunk_rows // rows) + tree + (-(-chunks // rows) + tree if chunks > 1 else 0)


# ---------------------------------------------------------------------------------------------------------------
# GPU.

REDUCE_FUNCTIONS = {"rows_short": (ROWS_KERNEL, "axis_rows_reduce_short"),
                    "rows_warp": (ROWS_KERNEL, "axis_rows_reduce_warp"),
                    "rows_block": (ROWS_KERNEL, "axis_rows_reduce_block"),
                    "columns": (COLUMNS_KERNEL, "axis_columns_reduce")}  # pass_plan's kernels


def reduce_along(x, out, outer: int, n: int, inner: int, *, op: str, call, acc_dtype=None) -> int:
    """Reduce the C-contiguous (outer, n, inner) view of device array x (n > 0, outer * inner > 0) into out's
    outer * inner elements of the result dtype (acc_dtype, default out's: the elements are converted to it on load)
    on call.stream: one launch (Plan); returns the number of launches."""
    value = np.dtype(acc_dtype) if acc_dtype is not None else np.dtype(out.dtype)
    the_plan = plan(((outer, n, inner),), np.dtype(x.dtype), value, op, call.device)
    the_plan.launch(int(out.gpudata), int(x.gpudata), call.device, call.stream, call.context)
    return len(the_plan.steps)


def ticket_bytes(sms: int) -> int:
    """The bytes of the ticket counters at the start of a stream's scratch buffer: one 32-bit counter for each output
    group of a launch with several chunks (column groups, or rows), at most BLOCKS_PER_SM * sms of them (more groups
    than that fill the GPU with one chunk each).  Every plan of a device keeps its other scratch past them, so the
    counters, zero when the buffer is made and put back to zero by the kernels' last blocks, are zero at every
    launch."""
    return -(-4 * BLOCKS_PER_SM * sms // 256) * 256


class Plan:
    """A reduction's passes, each an (outer, n, inner) view reduced along n in one launch (pyscan.axes.reduce_plan;
    the first reads x, each later one the previous pass's output), into the result dtype `value` on one device:
    every launch made once -- kernel, geometry, where it reads and writes.  Scratch: the ticket counters
    (ticket_bytes), then at fixed offsets the results between passes and the launches' chunk partials, in the
    compute type; one buffer kept per stream (its counters at its start), or under a CUDA graph's capture the call's
    own (pyscan.runtime.capture).  pyscan.reduce's general path, its ready path (pyscan.axes.take_ready) and
    reduce_along launch it."""

    __slots__ = ("steps", "tickets", "room", "scratch_bytes")

    X, OUT = -1, -2  # a step's source or target that is not a scratch offset

    def __init__(self, passes, in_dtype, value, op, device: int):
        sms = driver.multiprocessor_count(device)
        compute = COMPUTE_TYPES[value]
        steps, offset, source, partials_in, source_dtype, tickets = [], 0, self.X, False, in_dtype, 0

        def take(nbytes):  # the scratch offset of nbytes more, 256-byte aligned
            nonlocal offset
            start, offset = offset, offset + -(-nbytes // 256) * 256
            return start

        for k, (outer, n, inner) in enumerate(passes):
            last = k == len(passes) - 1
            reads = np.dtype(source_dtype).itemsize
            kind, grid, chunks, geometry = pass_plan(outer, n, inner, sms, reads)
            if grid > MAX_GRID:
                raise ValueError(f"reduce: {grid} blocks is more than one launch takes ({MAX_GRID})")
            target = self.OUT if last else take(outer * inner * compute.itemsize)
            folds = kind in ("rows_block", "columns")  # kernels that take (partials, tickets): their last blocks fold
            partials = None  # the scratch offset of the launch's chunk partials (several chunks)
            if folds and chunks > 1:
                groups = outer if kind == "rows_block" else outer * geometry[5]
                tickets = ticket_bytes(sms)
                if 4 * groups > tickets:  # ticket_bytes' bound (a check that stays under python -O)
                    raise RuntimeError(f"reduce: {groups} ticket counters of a pass do not fit in {tickets} bytes")
                partials = take(outer * chunks * inner * compute.itemsize)
            macros = kernel_macros(source_dtype, value, value if last else compute, op, partials_in=partials_in)
            kernel, function = REDUCE_FUNCTIONS[kind]
            # for x not aligned to a thread's run: [alignment, the strided build's get_kernel arguments, that
            # build once a call has needed it (None before: most plans never see such an x)]
            unaligned = None
            if kind == "columns":
                vec = column_vec(inner, reads)
                vector = inner % vec == 0  # then every row start of x is aligned if x is
                macros.update(LANES_PER_THREAD=vec, VECTOR_LOADS=int(vector))
                if vector and vec > 1:
                    unaligned = [vec * reads, (kernel, function, device, {**macros, "VECTOR_LOADS": 0}), None]
            fn = get_kernel(kernel, function, device=device, **macros)
            steps.append((fn, fn.config(grid, BLOCK), source, target, folds, partials, geometry, unaligned))
            source, source_dtype, partials_in = target, compute, True
        if tickets:
            capture.prepare_kept(device)  # made outside any capture: a captured call's counters without a memset
        self.steps, self.tickets, self.scratch_bytes = tuple(steps), tickets, offset
        self.room = ticket_bytes(sms)  # where every plan's scratch starts in a stream's kept buffer, counters or not

    def launch(self, out: int, x: int, device: int, stream: int, context: int) -> None:
        tickets = base = 0
        owners = None
        if self.scratch_bytes:  # (a launch that takes tickets has partials there)
            capturing = driver._capturing  # the launcher's cuStreamIsCapturing (None before any GPU call)
            if capturing is not None and capturing(stream) and driver.capturing(stream, device):
                # a graph's own memory: counters zero at every replay (runtime.capture.zeroed), scratch of its own
                owners = [None, capture.scratch(self.scratch_bytes, device, stream)]
                base = owners[1].address
                if self.tickets:
                    owners[0], tickets = capture.zeroed(self.tickets, device, stream)
            else:
                kept = _partials.get(self.room + self.scratch_bytes, device, stream)
                tickets, base = kept.address, kept.address + self.room
        for fn, geometry, source, target, folds, partials, args, unaligned in self.steps:
            source = x if source == self.X else base + source
            if unaligned is not None and source % unaligned[0]:
                if unaligned[2] is None:
                    kernel, function, on, macros = unaligned[1]
                    unaligned[2] = get_kernel(kernel, function, device=on, **macros)
                fn = unaligned[2]
            target = out if target == self.OUT else base + target
            if folds:
                fn.launch_typed(context, stream, geometry, target, 0 if partials is None else base + partials, tickets,
                                source, *args)
            else:
                fn.launch_typed(context, stream, geometry, target, source, *args)
        del owners  # kept until the launches that use them are enqueued


_partials = StreamWorkspace("axis reduction partials")
_plans: dict = {}  # (passes, in dtype, value dtype, op, device) -> Plan


def plan(passes: tuple, in_dtype, value, op, device: int) -> Plan:
    return planned(_plans, (passes, in_dtype, value, op, device), lambda: Plan(passes, in_dtype, value, op, device),
                   device)


# pyscan.reduce(x, axis=a) again with the same key: pyscan.axes.take_ready (the key: shape, x's dtype, axis, op,
# keepdims, dtype=, device)
READY: dict = {}


def remember_ready(key: tuple, shape: tuple, chosen: tuple, result_shape: tuple, in_dtype, value, op,
                   device: int) -> None:
    """Keep the plan of a call that took the general path for the next call with the same key."""
    keep(READY, key, (plan(tuple(axes.reduce_plan(shape, chosen)), in_dtype, value, op, device), result_shape, value))


def launch(x, *, op, call, out=None, dtype=None, map=None):
    """The registry's launch: the op over a 1-D x (one row) into `out` (a new one-element array of the result dtype,
    NumPy's or dtype=, if None).  The axis kernels load through op_load, not op_load_at: no map (TypeError)."""
    if map is not None:
        raise TypeError(MAP_REFUSED)
    value = result_dtype(x.dtype, op, dtype)
    if out is None:
        out = call.empty((1,), value)
    reduce_along(x, out, 1, x.size, 1, op=op, call=call, acc_dtype=value)
    return out


def axis_driver(x, *, op, call):
    return call.to_host(launch(x, op=op, call=call)).reshape(-1)[0]


def builds(dtype, op) -> list:
    """(kernel file, #defines) of the kernels for x of dtype and op (prewarm): a pass from x to the result or to a
    result in the compute type that a later pass of a tuple axis reads, and such a later pass, to either.
    The column kernel one lane a thread, and for x narrower than 4 bytes also its runs of lanes (column_vec) as one
    load and strided (x not aligned to a run)."""
    dtype = as_dtype(dtype)
    value = result_dtype(dtype, op)
    compute = COMPUTE_TYPES[value]
    found = {}
    for source, partials_in in ((dtype, False), (compute, True)):
        vec = column_vec(32, source.itemsize)
        for to in (value, compute):
            macros = kernel_macros(source, value, to, op, partials_in=partials_in)
            variants = [(ROWS_KERNEL, macros)] + [
                (COLUMNS_KERNEL, {**macros, "LANES_PER_THREAD": lanes, "VECTOR_LOADS": vector})
                for lanes, vector in {(vec, 1), (vec, 0) if vec > 1 else (1, 1), (1, 1)}]
            for kernel, m in variants:
                found[(kernel, tuple(sorted((k, str(v)) for k, v in m.items())))] = (kernel, m)
    return list(found.values())


def _entry_error_depth(n: int, blocks=None, dtype=None) -> int:
    return error_depth(n)


REDUCTIONS.register(
    "axis", axis_driver, kernels=(ROWS_KERNEL, COLUMNS_KERNEL),
    source="PMPP ch. 10's reduction trees, one per row or per lane",
    summary="N-d arrays along any axes (auto's choice for axis=): the last axis a thread, warp or blocks per row "
            "by row length, other axes coalesced lanes over row chunks; the chunks' partials folded by each "
            "output's last block in the same launch, no atomics but its ticket",
    model=compute_model, fast=True, launch=launch, error_depth=_entry_error_depth, builds=builds)

__all__ = ["builds", "column_plan", "compute_model", "error_depth", "model", "reduce_along", "reduce_model_along", "row_plan"]
