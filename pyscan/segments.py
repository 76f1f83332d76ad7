"""Segments: pyscan.scan(x, offsets=o) and pyscan.reduce(x, offsets=o) over CSR offsets (docs/scan.md, "Segments").

o holds S + 1 non-decreasing integers, o[0] == 0 and o[S] == len(x) (the convention of torch.segment_reduce(offsets=)
and cuda.compute's segmented reduce); segment s is x[o[s] : o[s+1]], possibly empty.  A scan restarts at every
segment; a reduction gives one value per segment, the operator's identity for an empty one.

This module holds what the scan and the reduction share: the offsets' checks (NumPy on the host; on the device a
kernel, kernels/scan/segment_offsets.cu, and one flag read back), the NumPy model of the segments build of
kernels/scan/decoupled_lookback.cu (the 1-D scan's tiles on (value, head flag) pairs with the heads at the offsets:
decoupled_lookback.pairs_model) and the model of its offset searches and walks (to show that they stay in bounds
whatever the offsets hold).

Why not the registries (pyscan.registry): their drivers take (x, out, op, exclusive, call) and every registered
algorithm is a way to compute the same whole-array result; the segmented kernels take offsets and give another
result, so they are reached through offsets= of the same public functions instead of through algorithm=.
"""

from __future__ import annotations

import numpy as np

from .runtime import arrays, driver
from .runtime.loader import get_kernel
from .types import identity

CHECK_BLOCK = 256  # threads per block of the offsets' check
CHECK_KERNEL = "scan/segment_offsets.cu"
CHECK_BLOCKS = 1024  # the check's grid-stride loop: enough blocks for any GPU
OFFSET_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))  # what the kernels read (OFFSET_TYPE)
INTEGER_DTYPES = tuple(dict.fromkeys(np.dtype(d) for d in np.typecodes["AllInteger"]))  # taken, then checked
C_OFFSET = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}


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
    blocks = max(1, min(-(-(o.segments + 1) // CHECK_BLOCK), CHECK_BLOCKS))
    fn.launch_typed(call.context, call.stream, fn.config(blocks, CHECK_BLOCK), int(o.view.gpudata), o.segments, call.size,
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
# Models of the kernels' index arithmetic (the segments build of kernels/scan/decoupled_lookback.cu).

def warp_lower_bound(o, count: int, v: int, guess: int = 0) -> tuple:
    """decoupled_lookback.cu's warp_lower_bound: (the first i in [0, count) with o[i] >= v, else count; the indices
    it read): 32 consecutive probes around guess, then the 32-ary search of the side the answer lies on.  For
    non-decreasing o it is np.searchsorted(o, v); for any o every read is in [0, count)."""
    o = np.asarray(o)
    read = []

    def past(p):
        read.append(p)
        return int(o[p]) >= v

    a, b = 0, count
    base = min(max(guess - 16, 0), max(count - 32, 0))
    ballot = [lane for lane in range(32) if base + lane < count and past(base + lane)]
    if not ballot:
        a = min(base + 32, count)
    elif ballot[0] > 0:
        return base + ballot[0], read
    else:
        b = base
    while b - a > 32:
        step = (b - a + 31) // 32
        ballot = [lane for lane in range(32) if a + lane * step < b and past(a + lane * step)]
        if not ballot:
            last = min((b - 1 - a) // step, 31)
            a = a + last * step + 1
        else:
            k = ballot[0]
            a, b = (a if k == 0 else a + (k - 1) * step + 1), a + k * step
    ballot = [lane for lane in range(32) if a + lane < b and past(a + lane)]
    return (a + ballot[0] if ballot else b), read


def guess_of(lo: int, segments: int, n: int) -> int:
    """Where equal segments would put the first offset >= lo: the kernel's (long long)(lo * S / n) in doubles."""
    return int(float(lo) * float(segments) / float(n))


def walk_offsets(o, start: int, last: int, past: int, more) -> tuple:
    """decoupled_lookback.cu's walk_offsets: ([(j, o[j] or `past` for j > last)] in the order the lanes visit
    them, the indices read): 32 at the first step, then 128 a step, while every lane's last value satisfies more."""
    visits, read = [], []

    def batch(j, loads):
        values = []
        for k in range(loads):
            for lane in range(32):
                i = j + 32 * k + lane
                if i <= last:
                    read.append(i)
                    q = int(o[i])
                else:
                    q = past
                visits.append((i, q))
                if k == loads - 1:
                    values.append(q)
        return all(more(q) for q in values)

    if batch(start, 1):
        j = start + 32
        while batch(j, 4):
            j += 128
    return visits, read


def part_heads(o, segments: int, n: int, lo: int, hi: int) -> tuple:
    """segment_heads for a warp's part [lo, hi) of a tile: (the head positions - lo, the first s with o[s] >= lo,
    the offsets read, whether a segment may end in the part): the search, then the walk over o[first ..] while
    every lane's value is below hi.  The last (the reduction's ENDS): some visited o[j] in (lo, hi), or equal to hi
    where j < S or, for the index past S - 1 that reads as hi, where hi == n (o[S] = n): a part without one writes
    nothing in part_writes, and the reduction skips it."""
    if lo >= hi:
        return set(), segments, [], False
    first, read = warp_lower_bound(o, segments + 1, lo, guess_of(lo, segments, n))
    visits, walked = walk_offsets(o, first, segments - 1, hi, lambda q: q < hi)
    ends = any(q > lo and (q < hi or (q == hi and (j < segments or hi == n))) for j, q in visits)
    return {q - lo for _, q in visits if lo <= q < hi}, first, read + walked, ends


def part_writes(o, segments: int, lo: int, hi: int, first: int) -> tuple:
    """The reduction's walk in a warp's part [lo, hi) (decoupled_lookback.cu, VALUES): ([(s, position - lo, or None
    for the identity)], the offsets read) for j = max(first, 1), ... with lo < o[j] <= hi (or o[j] == 0 in the part
    at 0), out[j - 1] written, while every lane's o[j] is at most hi."""
    writes = []
    if lo >= hi:
        return writes, []
    visits, read = walk_offsets(o, max(first, 1), segments, hi + 1, lambda end: end <= hi)
    for j, end in visits:
        if end <= hi and (end > lo or lo == 0):
            read.append(j - 1)
            inside = int(o[j - 1]) < end and lo <= end - 1 < hi
            writes.append((j - 1, end - 1 - lo if inside else None))
    return writes, read


def compute_identity(op, compute, value=None):
    """op_identity(): the identity of the value dtype (default: the compute dtype itself) held in the compute
    dtype."""
    compute = np.dtype(compute)
    if value is None:
        return identity(op, compute)
    return np.asarray(identity(op, value)).astype(compute)[()]


def tile_scan_model(x, offsets, *, op="add", exclusive=False, value=None, itemsize=None, return_steps=False):
    """The inclusive (or exclusive) segmented scan as the segments build of decoupled_lookback.cu computes it, on
    the compute values x (a 1-D array of a compute dtype) and valid offsets: the 1-D scan's tiles, each thread's
    (value, flag) pair restarting at heads, the warps' shuffle scan of the pairs, the warp totals, the look-back in
    the serial schedule (none where the tile starts with a head), the rescan (decoupled_lookback.pairs_model, with
    the heads at o[s], s < S).  value: the result dtype, whose identity op_identity() is (an int8 max starts from
    -128; default: x's dtype); itemsize: the element size that sizes the tile (element_size() of the call's x and
    result dtypes; default: x's)."""
    from .scans.decoupled_lookback import pairs_model  # (pyscan.scans imports this module)

    x = np.asarray(x)
    n = x.size
    o = np.asarray(offsets).astype(np.int64)
    starts = o[:-1][o[:-1] < n]

    def heads_at(index):
        heads = np.zeros(index.size, bool)
        heads[starts] = True
        return heads

    return pairs_model(x, heads_at, op=op, exclusive=exclusive, return_steps=return_steps,
                       e=compute_identity(op, x.dtype, value), itemsize=itemsize, what="segments")


def segment_reduce_model(x, offsets, *, op="add", value=None, itemsize=None):
    """One value per segment as the segments build's reduction gives it: the tile scan's inclusive value at the
    segment's last element, the identity for an empty segment (compute values in, compute values out)."""
    x = np.asarray(x)
    o = np.asarray(offsets).astype(np.int64)
    out = np.full(o.size - 1, compute_identity(op, x.dtype, value), x.dtype)
    if x.size == 0:
        return out
    scanned = tile_scan_model(x, o, op=op, value=value, itemsize=itemsize)
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


__all__ = ["Offsets", "begin_offsets", "check_device_offsets", "check_host_offsets", "device_offsets", "part_heads",
           "part_writes", "reference_reduce", "segment_reduce_model", "tile_scan_model", "walk_offsets",
           "warp_lower_bound"]
