"""The fast scan: single pass with decoupled look-back (Merrill & Garland 2016), kernels/scan/decoupled_lookback.cu.

One launch (the tile-status words are kept between calls and tagged with each call's epoch, so no memset); one read
and one write of every element, like a copy.  A tile is BLOCK_THREADS threads x ITEMS elements (CONFIG, per element
size; by default 256 x 32 = 8192 elements for 32-bit types, which run persistent blocks with a prefetched tile
(PIPELINE), and 256 x 16 = 4096 for 64-bit types, which run the same kernel: 32 KB either way);
an array of one tile needs no status at all (one launch, no memset, no scratch): small calls are cheap.
The kernel file's header explains the algorithm, the status-word protocols and why it cannot deadlock.

Model (NumPy, `decoupled_lookback_model`): the kernel's arithmetic, vectorised over tiles and threads, for the
schedule in which every tile finds its predecessor's inclusive prefix (P) at its first look: then the look-back
gives tile t the prefix P[t-1] (the warp reduction of P[t-1] with 31 identities is P[t-1] exactly), so
P = op.accumulate(tile aggregates).  Another schedule combines the same aggregates in another grouping: equal for
integers (and max/min), within error_depth for floats.  Steps (one array of tiles * TILE values each, identity
padding included): load; thread totals (each thread's last item holds the op over its ITEMS items); block scan
(each thread's last item holds the inclusive scan of the thread totals within the tile, by warp shuffles and the
warp totals); look-back (each thread's last item: the same, plus the tile's exclusive prefix); rescan (the
result: each thread rescans its items from its prefix).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from .. import arrays
from ..loader import get_kernel
from ..types import check_model_input, identity, ufunc
from ..types import defines as type_defines
from . import SCANS
from .steps import Step

KERNEL = "scan/decoupled_lookback.cu"
FUNCTION = "decoupled_lookback_scan"
STEP_LIMIT = 1 << 16


@dataclass(frozen=True)
class Config:
    """The kernel's geometry for one element size (the #defines of decoupled_lookback.cu)."""

    threads: int = 256  # BLOCK_THREADS
    vecs: int = 4  # VECS_PER_THREAD: 16-byte vectors per thread (2, 4 or 8)
    backoff: int = 0  # BACKOFF: ns a look-back sleeps before polling a predecessor again
    min_blocks: int = 1  # MIN_BLOCKS: __launch_bounds__' minimum blocks per SM (caps the registers)
    pipeline: int = 0  # PIPELINE: 1 = persistent blocks, the next tile's cp.async loads in flight (threads*vecs <= 1024)
    reload: int = 0  # RELOAD: 1 = the rescan reads the items from shared memory again (fewer registers)
    l2_hint: int = 0  # L2_HINT: 1 = an L2 evict-first policy on the cp.async loads
    grid_per_sm: int = 0  # PIPELINE: blocks launched per SM (0: min_blocks)
    early_a: int = 1  # EARLY_A: PIPELINE publishes the next tile's aggregate before this tile's look-back
    dynamic_smem: int = 0  # DYNAMIC_SMEM: 1 = tile buffers in dynamic shared memory (more than 48 KB allowed)
    direct_store: int = 0  # DIRECT_STORE: 1 = whole warp parts stored from registers, not through shared memory
    store_cs: int = 1  # STORE_CS: 1 = streaming stores (evict first), 0 = plain stores
    l2_prefetch: int = 0  # L2_PREFETCH: 0, 64, 128 or 256 bytes the L2 fetches around each cp.async load
    lookback: int = 1  # LOOKBACK: 0 = timing diagnostic only (no look-back: WRONG results past the first tile)
    epoch: int = 0  # EPOCH: 1 = a status buffer kept between calls, flags tagged with the call's epoch (no memset)
    diag_stats: int = 0  # DIAG_STATS: 1 = timing diagnostic, per-phase cycle counts in lookback_stats[]

    def defines(self) -> dict:
        return {"BLOCK_THREADS": self.threads, "VECS_PER_THREAD": self.vecs, "BACKOFF": self.backoff,
                "MIN_BLOCKS": self.min_blocks, "PIPELINE": self.pipeline, "RELOAD": self.reload,
                "L2_HINT": self.l2_hint, "EARLY_A": self.early_a, "DYNAMIC_SMEM": self.dynamic_smem,
                "DIRECT_STORE": self.direct_store, "STORE_CS": self.store_cs, "L2_PREFETCH": self.l2_prefetch,
                "LOOKBACK": self.lookback, "EPOCH": self.epoch,
                "DIAG_STATS": self.diag_stats}

    def shared_bytes(self, vector: bool = True) -> int:
        """Dynamic shared memory per block (0 unless dynamic_smem): the kernel's STAGES tile buffers, each
        threads / 32 warp regions of 32 * vecs 16-byte vectors plus one padding vector every 8.  The kernel for
        unaligned arrays has no pipeline (one buffer)."""
        if not self.dynamic_smem:
            return 0
        stages = (self.pipeline if vector else 0) + 1
        warp_vecs = 32 * self.vecs
        return stages * (self.threads // 32) * (warp_vecs + warp_vecs // 8) * 16

    def grid(self, tiles: int, vector: bool = True) -> int:
        """Blocks to launch for `tiles` tiles: one per tile, or with PIPELINE (aligned arrays only: the kernel for
        unaligned ones has no pipeline) a few per SM, at most one per tile."""
        if not self.pipeline or not vector or tiles <= 1:
            return tiles
        return min(tiles, _multiprocessors() * (self.grid_per_sm or self.min_blocks))


_sm_count: list = []


def _multiprocessors() -> int:
    if not _sm_count:
        from ..gpu import multiprocessor_count

        _sm_count.append(multiprocessor_count())
    return _sm_count[0]


# Per element size (bytes).  Tuned on an H100 (2026-11-22; the kernel file's tuning notes have the numbers):
# 32-bit types (four rounds, int32 at 2^28): persistent blocks with one tile prefetched and its A published early
#   (PIPELINE 1, EARLY_A), 256 threads x 8 vectors (8192-element, 32 KB tiles: half the look-backs of 4096), 80
#   registers, 3 blocks per SM (dynamic shared memory: two 36 KB buffers), status kept between calls with epoch
#   tags (EPOCH: no memset launch per call), cp.async loads asking the L2 for 128-byte lines (L2_PREFETCH):
#   0.90-0.91 x copy in four of five lab runs (scripts/scan_lab.py), against 0.86-0.87 x for round 3's default;
# 64-bit types: the same kernel, 256 threads x 8 vectors (4096-element, 32 KB tiles), 3 blocks per SM, and status
#   words split in (half, flag) pairs (no fences): int64 and float64 0.94 x copy (before: one tile per block, 4/SM,
#   flags apart from values with fences, 0.64-0.66 x).
# PYSCAN_DECOUPLED_CONFIG='{"4": [256, 8, 0, 3, 1, 1, 0, 0, 1, 1, 0, 1, 128, 1, 1], "8": [...]}' overrides them
# (`scripts/time_scan.py --tune` prints that line; the fields are Config's, in order, trailing ones optional).
CONFIG = {
    4: Config(threads=256, vecs=8, min_blocks=3, pipeline=1, reload=1, early_a=1, dynamic_smem=1, l2_prefetch=128,
              epoch=1),
    8: Config(threads=256, vecs=8, min_blocks=3, pipeline=1, reload=1, early_a=1, dynamic_smem=1, l2_prefetch=128,
              epoch=1),
}
if os.environ.get("PYSCAN_DECOUPLED_CONFIG"):
    for _size, _values in json.loads(os.environ["PYSCAN_DECOUPLED_CONFIG"]).items():
        CONFIG[int(_size)] = Config(*_values)


def config(dtype) -> Config:
    return CONFIG[np.dtype(dtype).itemsize]


def block_threads(dtype) -> int:
    return config(dtype).threads


def items_per_thread(dtype) -> int:
    return config(dtype).vecs * (16 // np.dtype(dtype).itemsize)


def tile_size(dtype) -> int:
    """Elements per tile (8192 for 32-bit types, 4096 for 64-bit types with the default CONFIG)."""
    return block_threads(dtype) * items_per_thread(dtype)


def decoupled_lookback_model(x, *, op="add", exclusive=False, return_steps=False):
    """NumPy step-model of `decoupled_lookback` (module docstring): any length."""
    x = check_model_input(x, op)
    n = x.size
    if n == 0:
        return (x.copy(), []) if return_steps else x.copy()
    if return_steps and n > STEP_LIMIT:
        raise ValueError(f"decoupled_lookback: steps are recorded for at most {STEP_LIMIT} elements, got {n}")
    f, e, dt = ufunc(op), identity(op, x.dtype), x.dtype
    items, threads = items_per_thread(dt), block_threads(dt)
    tile = threads * items
    tiles = -(-n // tile)
    flat = np.full(tiles * tile, e, dtype=dt)
    flat[:n] = x
    X = flat.reshape(tiles, threads, items)  # [tile, thread, item]: thread t owns items t*ITEMS ..

    # 3. thread totals: a left-to-right loop over the items (accumulate, not reduce: NumPy's add.reduce sums
    # floats pairwise, the kernel does not).
    thread_total = f.accumulate(X, axis=2, dtype=dt)[:, :, -1]
    # warp-shuffle inclusive scan (Kogge-Stone over 32 lanes: lane >= offset takes op(lane - offset, lane))
    W = thread_total.reshape(tiles, threads // 32, 32).copy()
    offset = 1
    while offset < 32:
        shifted = W[:, :, :-offset].copy()
        W[:, :, offset:] = f(shifted, W[:, :, offset:])
        offset *= 2
    warp_totals = W[:, :, -1]
    in_warp_exclusive = np.empty_like(W)  # shfl_up by 1, identity in lane 0
    in_warp_exclusive[:, :, 0] = e
    in_warp_exclusive[:, :, 1:] = W[:, :, :-1]
    # each thread: warp_prefix = op over the totals of the warps before it, left to right from the identity
    running = np.full(tiles, e, dtype=dt)
    warp_prefix = np.empty_like(warp_totals)
    for w in range(warp_totals.shape[1]):
        warp_prefix[:, w] = running
        running = f(running, warp_totals[:, w])
    aggregate = running  # the tile aggregate
    thread_prefix = f(warp_prefix[:, :, None], in_warp_exclusive).reshape(tiles, threads)
    # 4. look-back, in the serial schedule: tile t gets P[t-1] (identity for tile 0)
    tile_prefix = np.empty(tiles, dtype=dt)
    tile_prefix[0] = e
    if tiles > 1:
        tile_prefix[1:] = f.accumulate(aggregate[:-1], dtype=dt)
    # 5. rescan each thread's items from op(tile prefix, thread prefix)
    start = f(tile_prefix[:, None], thread_prefix)
    scanned = f.accumulate(np.concatenate([start[:, :, None], X], axis=2), axis=2, dtype=dt)
    out = scanned[:, :, :-1] if exclusive else scanned[:, :, 1:]
    result = out.reshape(-1)[:n].copy()
    if not return_steps:
        return result

    def at_last_item(values):
        A = X.copy()
        A[:, :, -1] = values
        return A.reshape(-1)

    block_inclusive = f(thread_prefix, thread_total)
    steps = [
        Step("load (16-byte vectors through shared memory)", flat.copy(), []),
        Step(f"thread totals ({items} items each)", at_last_item(thread_total), []),
        Step("block scan of the thread totals (warp shuffles + warp totals)", at_last_item(block_inclusive), []),
        Step("look-back: + the tile's exclusive prefix", at_last_item(f(tile_prefix[:, None], block_inclusive)), []),
        Step("rescan each thread's items from its prefix" + (" (exclusive)" if exclusive else ""),
             out.reshape(-1).copy(), []),
    ]
    return result, steps


def decoupled_lookback_error_depth(n: int) -> int:
    """Roundings on any path from an input to an output (an upper bound for every element size's Config):
    a tile aggregate: <= ITEMS - 1 (thread loop) + 5 (warp scan) + WARPS (warp totals);
    the look-back: P[t] = op(exclusive prefix, aggregate) with the exclusive prefix = a 5-level warp reduction of
    the window holding the nearest P, combined last (1) with the windows after it: a path through P[j] reaches
    P[t] with <= 7 more roundings per hop, <= 7 t over a chain of hops, t < tiles;
    the output: op(tile prefix, thread prefix) (1) and the rescan (<= ITEMS), with the thread prefix
    (<= ITEMS - 1 + 5 + WARPS + 1).  In all <= 7 tiles + 2 ITEMS + WARPS + 16."""
    tile = min(tile_size(np.dtype(f"i{size}")) for size in CONFIG)
    items = max(items_per_thread(np.dtype(f"i{size}")) for size in CONFIG)
    warps = max(c.threads for c in CONFIG.values()) // 32
    return 7 * -(-int(n) // tile) + 2 * items + warps + 16


# ---------------------------------------------------------------------------------------------------------------
# GPU.

_kernels: dict = {}


def kernel_defines(dtype, op, vector: bool = True) -> dict:
    """The #defines of the kernel for dtype, op and 16-byte aligned (vector) or unaligned arrays."""
    return {**config(dtype).defines(), "VECTOR_LOADS": int(vector), **type_defines(dtype, op)}


def _kernel(dtype, op, vector: bool):
    """(prepared function, its dynamic shared memory in bytes) for dtype, op, aligned or not."""
    key = (dtype.str, op, vector)
    entry = _kernels.get(key)
    if entry is None:
        fn = get_kernel(KERNEL, FUNCTION, **kernel_defines(dtype, op, vector))
        shared = config(dtype).shared_bytes(vector)
        if shared > 48 * 1024:  # a launch may ask for more than 48 KB only after the function's limit is raised
            from ..gpu import driver

            fn.set_attribute(driver().function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared)
        entry = _kernels[key] = (fn, shared)
    return entry


def status_words(tiles: int, itemsize: int) -> int:
    """64-bit words of tile status (all zeroed before first use): 32-bit types one packed (value, flag) word per
    tile; 64-bit types four, an A pair and a P pair of (half, flag) words."""
    return tiles if itemsize == 4 else 4 * tiles


class StatusBuffer:
    """EPOCH: the tile counter and status words of one element size, kept between calls.

    Zeroed once when allocated; every call then takes the next epoch (1, 2, ... < 2^30), which the kernel writes into
    its flags, so the words of earlier calls read as X and need no memset; the kernel's last block puts the counter
    back to 0.  Layout (64-bit words): [0] the tile counter and the count of finished blocks (32 bits each), [1]
    unused (16-byte alignment), [2:] the status words of `capacity` tiles (status_words).  Calls run one after the
    other on the null stream, so one buffer per element size serves them all."""

    EPOCHS = 1 << 30

    def __init__(self, itemsize: int):
        self.itemsize = itemsize
        self.allocation = None
        self.capacity = 0
        self.epoch = 0

    def next_call(self, tiles: int) -> tuple:
        """(base address, epoch) for a call of `tiles` tiles."""
        from ..gpu import driver

        drv = driver()
        if tiles > self.capacity:
            capacity = max(tiles, 2 * self.capacity, 1024)
            words = 2 + status_words(capacity, self.itemsize)
            self.allocation = None  # the old buffer goes first
            self.allocation = drv.mem_alloc(8 * words)
            drv.memset_d32(self.allocation, 0, 2 * words)
            self.capacity, self.epoch = capacity, 0
        self.epoch += 1
        if self.epoch == self.EPOCHS:  # after 2^30 - 1 calls: zero the flags again and start over
            drv.memset_d32(self.allocation, 0, 2 * (2 + status_words(self.capacity, self.itemsize)))
            self.epoch = 1
        return int(self.allocation), self.epoch


_status_buffers: dict = {}


def release_status_buffers():
    """Frees the kept status buffers (gpu's release hook: before the context goes)."""
    _status_buffers.clear()


def decoupled_lookback_driver(x, out, *, op, exclusive):
    from ..gpu import at_release, driver

    n = int(x.size)
    dtype = x.dtype
    vector = int(x.gpudata) % 16 == 0 and int(out.gpudata) % 16 == 0  # else scalar loads for every tile
    fn, shared = _kernel(dtype, op, vector)
    tiles = -(-n // tile_size(dtype))
    threads = block_threads(dtype)
    if tiles == 1:
        fn.prepared_call((1, 1, 1), (threads, 1, 1), out.gpudata, x.gpudata, np.int64(n),
                         np.int32(bool(exclusive)), np.uintp(0), np.uintp(0), np.int64(1), np.uint32(0),
                         shared_size=shared)
        return 1
    if config(dtype).epoch:
        if not _status_buffers:
            at_release(release_status_buffers)
        buffer = _status_buffers.setdefault(dtype.itemsize, StatusBuffer(dtype.itemsize))
        base, epoch = buffer.next_call(tiles)
    else:
        words = status_words(tiles, dtype.itemsize)
        scratch = arrays.empty((2 + words,), np.uint64)  # [0]: the tile counter (32 bits), [2:]: 16-byte aligned
        base, epoch = int(scratch.gpudata), 0
        driver().memset_d32_async(base, 0, 2 * (2 + words))
    fn.prepared_call((config(dtype).grid(tiles, vector), 1, 1), (threads, 1, 1), out.gpudata, x.gpudata, np.int64(n),
                     np.int32(bool(exclusive)), np.uintp(base), np.uintp(base + 16), np.int64(tiles),
                     np.uint32(epoch), shared_size=shared)
    return 1


SCANS.register(
    "decoupled_lookback", decoupled_lookback_driver, kernels=(KERNEL,),
    source="Merrill & Garland 2016, single-pass parallel prefix scan with decoupled look-back",
    summary="one pass: tiles of 128-512 threads x 8-32 items, vector loads, warp-shuffle block scan, status words "
            "(flag + value), a warp looking back over 32 predecessors at once",
    model=decoupled_lookback_model, trace=None, count_work=None, error_depth=decoupled_lookback_error_depth,
    fast=True,
)
