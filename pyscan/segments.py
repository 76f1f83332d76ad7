"""Segments: pyscan.scan(x, offsets=o) and pyscan.reduce(x, offsets=o) over CSR offsets (docs/scan.md, "Segments").

o holds S + 1 non-decreasing integers, o[0] == 0 and o[S] == len(x) (the convention of torch.segment_reduce(offsets=)
and cuda.compute's segmented reduce); segment s is x[o[s] : o[s+1]], possibly empty.  A scan restarts at every
segment; a reduction gives one value per segment, the operator's identity for an empty one.

This module holds what the scan and the reduction share: the offsets' checks (NumPy on the host; on the device a
kernel, kernels/scan/segment_offsets.cu, and one flag read back), the kernels' tile geometry, the NumPy model of
kernels/common/segmented_tile.cuh (the same index arithmetic: the tile's head bits, each thread's fold, the warps'
Kogge-Stone scan of (value, flag) pairs, the warp totals, the look-back in the serial schedule, the rescan) and the
model of the kernels' offset searches and walks (to show that they stay in bounds whatever the offsets hold).

Why not the registries (pyscan.registry): their drivers take (x, out, op, exclusive, call) and every registered
algorithm is a way to compute the same whole-array result; the segmented kernels take offsets and give another
result, so they are reached through offsets= of the same public functions instead of through algorithm=.
"""

from __future__ import annotations

import numpy as np

from .runtime import arrays, driver
from .runtime.loader import get_kernel
from .types import COMPUTE_TYPES, identity, ufunc

BLOCK = 256  # BLOCK_THREADS of segmented_tile.cuh
CHECK_KERNEL = "scan/segment_offsets.cu"
CHECK_BLOCKS = 1024  # the check's grid-stride loop: enough blocks for any GPU
OFFSET_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))  # what the kernels read (OFFSET_TYPE)
INTEGER_DTYPES = tuple(dict.fromkeys(np.dtype(d) for d in np.typecodes["AllInteger"]))  # taken, then checked
C_OFFSET = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}


def items_per_thread(compute) -> int:
    """SEG_ITEMS: 16 for a 32-bit compute type, 8 for a 64-bit one (16 KB of values per tile either way)."""
    return 64 // np.dtype(compute).itemsize


def tile_size(value) -> int:
    """Elements per tile (SEG_TILE) for a result dtype `value`: 4096 (32-bit compute types) or 2048 (64-bit)."""
    return BLOCK * items_per_thread(COMPUTE_TYPES[np.dtype(value)])


# ---------------------------------------------------------------------------------------------------------------
# The offsets.

def _error(what: str, message: str) -> ValueError:
    return ValueError(f"{what}: {message} (CSR offsets: S + 1 non-decreasing integers, offsets[0] == 0 and "
                      f"offsets[-1] == len(x); segment s is x[offsets[s]:offsets[s+1]])")


def check_host_offsets(offsets, n: int, what: str = "offsets") -> np.ndarray:
    """The offsets as a NumPy int64 array, checked: 1-D, integers (not bool), at least one entry, o[0] == 0,
    o[-1] == n, non-decreasing.  TypeError for a non-integer dtype, ValueError naming the first break otherwise."""
    o = np.asarray(offsets)
    if o.dtype.kind not in "iu":
        raise TypeError(f"{what}: expected an integer array, got dtype {o.dtype}")
    if o.ndim != 1:
        raise _error(what, f"expected a 1-D array, got shape {o.shape}")
    if o.size == 0:
        raise _error(what, "expected at least one entry, got none")
    if o.dtype == np.uint64 and o.size and int(o.max()) > np.iinfo(np.int64).max:
        raise _error(what, f"an entry is beyond len(x) = {n}")
    o = o.astype(np.int64, copy=False)
    if o[0] != 0:
        raise _error(what, f"offsets[0] must be 0, got {int(o[0])}")
    if o[-1] != n:
        raise _error(what, f"offsets[-1] must be len(x) = {n}, got {int(o[-1])}")
    step = np.diff(o)
    if step.size and step.min() < 0:
        s = int(np.argmax(step < 0))
        raise _error(what, f"must be non-decreasing: offsets[{s}] = {int(o[s])} > offsets[{s + 1}] = {int(o[s + 1])}")
    return o


def kernel_offsets(o: np.ndarray, n: int) -> np.ndarray:
    """Checked host offsets as the kernels read them: int32 where len(x) fits (half the bytes), else int64."""
    return o.astype(np.int32 if n < 2**31 else np.int64)


class Offsets:
    """The offsets of one call, on the call's device: `view` (a DeviceView or the caller's array), its dtype (int32 or
    int64), S = `segments`.  From begin_offsets()."""

    __slots__ = ("view", "dtype", "segments", "host", "keep")

    def __init__(self, view, dtype, segments: int, host=None, keep=None):
        self.view, self.dtype, self.segments, self.host, self.keep = view, np.dtype(dtype), segments, host, keep


def begin_offsets(offsets, call, what: str) -> Offsets:
    """Check the offsets for the call's x (call.size elements) before any GPU work where they are on the host;
    returns an Offsets whose `host` is set (to upload inside the call) or whose `view` is the caller's device array.
    Device offsets must be int32 or int64, 1-D, C-contiguous, on x's device; with a NumPy x they are copied back and
    checked on the host.  (The device check itself is check_device_offsets, run inside the call.)"""
    kind = arrays.kind_of(offsets)
    if kind is None or kind is arrays.NUMPY:  # lists, tuples, NumPy arrays
        o = check_host_offsets(offsets, call.size, what)
        return Offsets(None, np.int32 if call.size < 2**31 else np.int64, o.size - 1, host=kernel_offsets(o, call.size))
    ocall = arrays.begin(offsets, what=what, dtypes=INTEGER_DTYPES, ndim=1)
    if ocall.dtype not in OFFSET_DTYPES:
        raise TypeError(f"{what}: device offsets must be int32 or int64, got {ocall.dtype} (convert them on the "
                        f"device, e.g. offsets.astype(int64))")
    if ocall.size == 0:
        raise _error(what, "expected at least one entry, got none")
    if call.kind is arrays.NUMPY:  # a host x: the offsets come to the host and are checked there
        with ocall:
            host = ocall.to_host(ocall.x)
            driver.synchronize(ocall.stream)
        o = check_host_offsets(host, call.size, what)
        return Offsets(None, np.int32 if call.size < 2**31 else np.int64, o.size - 1, host=kernel_offsets(o, call.size))
    if ocall.device != call.device:
        raise ValueError(f"{what}: on device {ocall.device}, but x is on device {call.device}")
    return Offsets(ocall.x, ocall.dtype, ocall.size - 1, keep=offsets)


def ready_offsets(o: Offsets, call, what: str, check: bool) -> None:
    """The offsets on the device for the call's kernels (device_offsets), checked there first unless `check` is
    off or they came from the host (checked by begin_offsets already)."""
    device_offsets(o, call)
    if check and o.host is None:
        check_device_offsets(o, call, what)


def device_offsets(o: Offsets, call):
    """The offsets on the device (uploading host ones on the call's stream): the address the kernels take."""
    if o.view is None:
        driver.refuse_capture(call.stream, "offsets= on the host (uploaded by every call, which waits for the "
                              "copy): pass the offsets as a device array")
        o.view = call.to_device(o.host)
    return o.view


def check_device_offsets(o: Offsets, call, what: str) -> None:
    """The device check (kernels/scan/segment_offsets.cu): one read of the S + 1 offsets by a grid-stride kernel,
    then a 4-byte flag copied back, which waits for the call's stream (the work queued before on it included).
    ValueError if the offsets break the rules."""
    driver.refuse_capture(call.stream, "the device check of offsets= (a flag read back) with check_offsets=True: "
                          "pass check_offsets=False for offsets known to be valid")
    flag = call.scratch(4)
    call.memset32(flag, 0, 1)
    fn = get_kernel(CHECK_KERNEL, "segment_offsets_check", device=call.device, OFFSET_TYPE=C_OFFSET[o.dtype])
    blocks = max(1, min(-(-(o.segments + 1) // BLOCK), CHECK_BLOCKS))
    fn.launch_typed(call.context, call.stream, fn.config(blocks, BLOCK), int(o.view.gpudata), o.segments, call.size,
                    int(flag.gpudata))
    bad = np.zeros(1, np.int32)
    driver.copy_dtoh(bad.ctypes.data, int(flag.gpudata), 4, call.stream)
    driver.synchronize(call.stream)
    if bad[0]:
        raise _error(what, f"the device check found offsets that break the rules for len(x) = {call.size} "
                     f"(pass check_offsets=False only for offsets known to be valid)")


def offsets_model_check(o: np.ndarray, n: int) -> bool:
    """What segment_offsets.cu decides, on the host: True where the offsets break a rule."""
    o = np.asarray(o).astype(np.int64)
    return bool(o[0] != 0 or o[-1] != n or (o.size > 1 and np.diff(o).min() < 0) or o.min() < 0 or o.max() > n)


# ---------------------------------------------------------------------------------------------------------------
# Models of the kernels' index arithmetic.

def warp_search(o, count: int, v: int, strict: bool) -> tuple:
    """segmented_tile.cuh's warp_search: (the first i in [0, count) with o[i] > v (strict) or >= v, else count;
    the indices it read).  For non-decreasing o it is np.searchsorted; for any o every read is in [0, count)."""
    o = np.asarray(o)
    read = []
    a, b = 0, count

    def past(p):
        read.append(p)
        q = int(o[p])
        return q > v if strict else q >= v

    while b - a > 32:
        step = (b - a + 31) // 32
        ballot = [lane for lane in range(32) if a + lane * step < b and past(a + lane * step)]
        if not ballot:
            last = min((b - 1 - a) // step, 31)
            a = a + last * step + 1
        else:
            k = ballot[0]
            hi = a + k * step
            a = a if k == 0 else a + (k - 1) * step + 1
            b = hi
    ballot = [lane for lane in range(32) if a + lane < b and past(a + lane)]
    return (a + ballot[0] if ballot else b), read


def tile_search(o, segments: int, lo: int) -> tuple:
    """A tile's one search (segmented_tile.cuh step 1): (the last s with o[s] <= lo, i.e. one before the first
    o[s] > lo, at least 0; the offsets it read).  The walk for the head bits starts there, and so do the writes of
    segmented_fast.cu: for valid offsets it is also the first s with o[s+1] > lo."""
    upper, read = warp_search(o, segments + 1, lo, True)
    return max(upper - 1, 0), read


def tile_heads(o, segments: int, lo: int, hi: int) -> tuple:
    """The head bits a tile [lo, hi) sets (positions - lo) and the offsets it reads: the search (tile_search), then
    each thread t's walk s = first + t, first + t + BLOCK, ... that stops at s >= S or o[s] >= hi
    (segmented_tile.cuh step 2)."""
    first, read = tile_search(o, segments, lo)
    heads = set()
    for t in range(BLOCK):
        s = first + t
        while s < segments:
            read.append(s)
            q = int(o[s])
            if q >= hi:
                break
            if q >= lo:
                heads.add(q - lo)
            s += BLOCK
    return heads, read


def tile_writes(o, segments: int, tile: int, lo: int, hi: int) -> tuple:
    """The segments tile [lo, hi) writes (segmented_fast.cu): [(s, position - lo or None for the identity)], and
    the offsets it reads (the tile's search, shared with its head bits, included)."""
    first, read = tile_search(o, segments, lo)
    if tile == 0:
        first = 0
    writes = []
    for t in range(BLOCK):
        s = first + t
        while s < segments:
            read.append(s + 1)
            end = int(o[s + 1])
            if end > hi:
                break
            read.append(s)
            begin = int(o[s])
            inside = begin < end and lo <= end - 1 < hi
            writes.append((s, end - 1 - lo if inside else None))
            s += BLOCK
    return writes, read


def compute_identity(op, compute, value=None):
    """op_identity(): the identity of the value dtype (default: the compute dtype itself) held in the compute
    dtype."""
    compute = np.dtype(compute)
    if value is None:
        return identity(op, compute)
    return np.asarray(identity(op, value)).astype(compute)[()]


def _pair_combine(f, a, fa, b, fb):
    """The segmented operator on (value, flag) arrays, the earlier pair on the left."""
    return np.where(fb, b, f(a, b)), fa | fb


def tile_scan_model(x, offsets, *, op="add", exclusive=False, value=None):
    """The inclusive (or exclusive) segmented scan as segmented_tile.cuh + segmented_lookback.cu compute it, on the
    compute values x (a 1-D array of a compute dtype) and valid offsets: tiles of BLOCK x SEG_ITEMS, each thread's
    fold restarting at heads, the warps' shuffle scan of (value, flag) pairs, the warp totals, the look-back in the
    serial schedule (tile t's carry: tile t-1's inclusive value; none where the tile starts with a head), the
    rescan.  Returns the per-element results (x's dtype).  value: the result dtype, whose identity op_identity() is
    (an int8 max starts from -128, a bool max from False; default: x's dtype)."""
    x = np.asarray(x)
    n = x.size
    if n == 0:
        return x.copy()
    f, e, dt = ufunc(op), compute_identity(op, x.dtype, value), x.dtype
    o = np.asarray(offsets).astype(np.int64)
    items = items_per_thread(dt)
    tile = BLOCK * items
    tiles = -(-n // tile)
    flat = np.full(tiles * tile, e, dtype=dt)
    flat[:n] = x
    heads = np.zeros(tiles * tile, bool)
    starts = o[:-1]
    heads[starts[starts < n]] = True
    X = flat.reshape(tiles, BLOCK, items)
    H = heads.reshape(tiles, BLOCK, items)
    # 3. each thread's fold (restarting at heads; item 0's bit does not matter to the fold's value)
    fold = X[:, :, 0].copy()
    for j in range(1, items):
        fold = np.where(H[:, :, j], X[:, :, j], f(fold, X[:, :, j]))
    flag = H.any(axis=2)
    warps = BLOCK // 32
    v, fl = fold.reshape(tiles, warps, 32).copy(), flag.reshape(tiles, warps, 32).copy()
    offset = 1
    while offset < 32:
        yv, yf = v[:, :, :-offset].copy(), fl[:, :, :-offset].copy()
        nv, nf = _pair_combine(f, yv, yf, v[:, :, offset:], fl[:, :, offset:])
        v[:, :, offset:], fl[:, :, offset:] = nv, nf
        offset *= 2
    prefix = np.empty_like(v)
    prefix_flag = np.zeros_like(fl)
    prefix[:, :, 0] = e
    prefix[:, :, 1:] = v[:, :, :-1]
    prefix_flag[:, :, 1:] = fl[:, :, :-1]
    aggregate = np.full(tiles, e, dt)
    aggregate_flag = np.zeros(tiles, bool)
    warp_prefix = np.empty((tiles, warps), dt)
    warp_prefix_flag = np.empty((tiles, warps), bool)
    for w in range(warps):
        warp_prefix[:, w], warp_prefix_flag[:, w] = aggregate, aggregate_flag
        aggregate, aggregate_flag = _pair_combine(f, aggregate, aggregate_flag, v[:, w, 31], fl[:, w, 31])
    prefix, prefix_flag = _pair_combine(f, warp_prefix[:, :, None], warp_prefix_flag[:, :, None], prefix, prefix_flag)
    # 4. look-back, serial schedule: the window holds tile t-1's P (reduced with 31 identities, then with the
    # identity the carry starts from: op(op(e, P), e))
    carry = np.full(tiles, e, dt)
    inclusive_p = np.empty(tiles, dt)
    head_at_lo = H[:, 0, 0]
    for t in range(tiles):
        if t > 0 and not head_at_lo[t]:
            carry[t] = f(f(np.asarray(e, dt), inclusive_p[t - 1]), np.asarray(e, dt))
        known = t == 0 or aggregate_flag[t]
        inclusive_p[t] = aggregate[t] if known else f(carry[t], aggregate[t])
    prefix = prefix.reshape(tiles, BLOCK)
    prefix_flag = prefix_flag.reshape(tiles, BLOCK)
    start = np.where(prefix_flag, prefix, f(carry[:, None], prefix))
    out = np.empty_like(X)
    running = start
    for j in range(items):
        before = np.where(H[:, :, j], e, running)
        running = np.where(H[:, :, j], X[:, :, j], f(running, X[:, :, j]))
        out[:, :, j] = before if exclusive else running
    return out.reshape(-1)[:n].copy()


def segment_reduce_model(x, offsets, *, op="add", value=None):
    """One value per segment as segmented_fast.cu gives it: the tile scan's inclusive value at the segment's last
    element, the identity for an empty segment (compute values in, compute values out)."""
    x = np.asarray(x)
    o = np.asarray(offsets).astype(np.int64)
    out = np.full(o.size - 1, compute_identity(op, x.dtype, value), x.dtype)
    if x.size == 0:
        return out
    scanned = tile_scan_model(x, o, op=op, value=value)
    nonempty = o[1:] > o[:-1]
    out[nonempty] = scanned[o[1:][nonempty] - 1]
    return out


def reference_reduce(x, offsets, op, dtype=None):
    """NumPy's answer, for the tests: np.<ufunc>.reduceat over the non-empty segments, the identity for the empty
    ones (reduceat itself gives x[o[s]] for an empty segment s, and takes no end offset)."""
    from .types import numpy_ufunc

    x = np.asarray(x)
    o = np.asarray(offsets).astype(np.int64)
    dt = np.dtype(dtype) if dtype is not None else x.dtype
    u = numpy_ufunc(op)
    out = np.full(o.size - 1, identity(op, dt), dt)
    nonempty = np.flatnonzero(o[1:] > o[:-1])
    if nonempty.size:
        out[nonempty] = u.reduceat(x.astype(dt), o[:-1][nonempty], dtype=dt)
    return out


__all__ = ["BLOCK", "Offsets", "begin_offsets", "check_device_offsets", "check_host_offsets", "device_offsets",
           "reference_reduce", "segment_reduce_model", "tile_scan_model", "tile_search", "tile_size", "warp_search"]
