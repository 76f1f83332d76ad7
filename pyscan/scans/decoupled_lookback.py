"""The fast scan: single pass with decoupled look-back (Merrill & Garland 2016), kernels/scan/decoupled_lookback.cu.

One launch (the tile-status words are kept between calls and tagged with each call's epoch, so no memset); one read
and one write of every element, like a copy.  A tile is BLOCK_THREADS threads x ITEMS elements (CONFIG, per element
size: 256 x 32 = 8192 elements for 32-bit types, 256 x 16 = 4096 for 64-bit types, 32 KB either way); aligned
arrays run persistent blocks with the next tile's loads in flight, unaligned ones one block per tile.  An array of
one tile needs no status at all (one launch, no memset, no scratch): small calls are cheap.  The kernel file's
header explains the algorithm and why it cannot deadlock, kernels/common/tile_status.cuh the status-word protocols,
docs/decoupled_lookback_tuning.md what was measured.  Any length that fits in memory (64-bit element offsets).

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

import dataclasses
import json
import os
from dataclasses import dataclass

import numpy as np

from ..runtime import capture, driver, loader
from ..runtime.loader import get_kernel
from ..runtime.workspace import StreamWorkspace
from ..types import COMPUTE_TYPES, check_model_input, identity, result_dtype, ufunc
from ..types import _results as RESULTS
from ..types import defines as type_defines
from .registry import SCANS
from .steps import Step

KERNEL = "scan/decoupled_lookback.cu"
FUNCTION = "decoupled_lookback_scan"
ROWS_FUNCTION = "decoupled_lookback_rows_scan"  # the build with ROWS 1: every row scanned on its own (scans/axis.py)
# the build with SEGMENTS 1: every segment of CSR offsets on its own (scans/segments.py, reductions/segments.py)
SEGMENTED_SCAN_FUNCTION = "decoupled_lookback_segmented_scan"
SEGMENTED_REDUCE_FUNCTION = "decoupled_lookback_segmented_reduce"
STEP_LIMIT = 1 << 16


@dataclass(frozen=True, kw_only=True)
class Config:
    """The kernel's policy for one element size: the #defines of decoupled_lookback.cu (whose defaults are CONFIG's
    entries) and the persistent grid.  What else was tried, and what it was worth: docs/decoupled_lookback_tuning.md."""

    threads: int = 256  # BLOCK_THREADS: threads per block (a multiple of 32)
    vecs: int = 8  # VECS_PER_THREAD: 16-byte vectors per thread (2, 4 or 8)
    min_blocks: int = 3  # MIN_BLOCKS: __launch_bounds__' minimum blocks per SM, and the persistent blocks per SM

    def __post_init__(self):
        if self.threads % 32 or not 32 <= self.threads <= 1024:
            raise ValueError(f"Config.threads must be a multiple of 32 between 32 and 1024, got {self.threads}")
        if self.vecs not in (2, 4, 8):
            raise ValueError(f"Config.vecs must be 2, 4 or 8, got {self.vecs}")
        if self.min_blocks < 1:
            raise ValueError(f"Config.min_blocks must be at least 1, got {self.min_blocks}")

    def defines(self) -> dict:
        return {"BLOCK_THREADS": self.threads, "VECS_PER_THREAD": self.vecs, "MIN_BLOCKS": self.min_blocks}

    def shared_bytes(self, vector: bool = True, narrowing: int = 1) -> int:
        """Dynamic shared memory per block: the kernel's tile buffers (two for aligned arrays, whose blocks have the
        next tile's copies in flight; one for unaligned ones), each threads / 32 warp regions of 32 * vecs 16-byte
        vectors plus one padding vector every 8; narrowing (region_narrowing()): the regions hold elements that
        many times narrower than the tile's."""
        stages = 2 if vector else 1
        warp_vecs = 32 * self.vecs // narrowing
        return stages * (self.threads // 32) * (warp_vecs + warp_vecs // 8) * 16

    def grid(self, tiles: int, vector: bool, device: int) -> int:
        """Blocks to launch for `tiles` tiles on `device`: aligned arrays, persistent blocks (min_blocks per SM, at
        most one per tile); unaligned arrays, one block per tile."""
        if not vector or tiles <= 1:
            return tiles
        return min(tiles, driver.multiprocessor_count(device) * self.min_blocks)

    @classmethod
    def from_json(cls, text: str) -> dict:
        """{element size: Config} from a JSON object {"4": {"threads": 256, "vecs": 8, "min_blocks": 3}, "8": ...}
        (fields left out keep the shipped values)."""
        try:
            table = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"PYSCAN_DECOUPLED_CONFIG: expected a JSON object, got {text!r} ({e})") from None
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            raise ValueError('PYSCAN_DECOUPLED_CONFIG: expected {"4": {field: value, ...}, "8": {...}}, got '
                             f"{text!r}")
        fields = {f.name for f in dataclasses.fields(cls)}
        configs = {}
        for size, values in table.items():
            if size not in ("4", "8"):
                raise ValueError(f"PYSCAN_DECOUPLED_CONFIG: element sizes are \"4\" and \"8\", got {size!r}")
            unknown = sorted(set(values) - fields)
            if unknown:
                raise ValueError(f"PYSCAN_DECOUPLED_CONFIG: unknown Config fields {unknown}; the fields are "
                                 f"{sorted(fields)}")
            configs[int(size)] = dataclasses.replace(SHIPPED[int(size)], **values)
        return configs

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


# Per element size (bytes), tuned on an H100 (docs/decoupled_lookback_tuning.md has the numbers): 256 threads x 8
# vectors (8192-element tiles for 32-bit types, 4096 for 64-bit types: 32 KB either way), 3 persistent blocks per
# SM (80 registers, two 36 KB tile buffers): 0.90-0.92 x copy for int32/float32, 0.94 x for int64/float64.
# The kernel file's #define defaults are these values (tests/unit/test_scan_sweeps.py checks it).
SHIPPED = {4: Config(threads=256, vecs=8, min_blocks=3), 8: Config(threads=256, vecs=8, min_blocks=3)}
CONFIG = dict(SHIPPED)
# PYSCAN_DECOUPLED_CONFIG='{"4": {"vecs": 4, "min_blocks": 5}}' overrides fields by name, for tuning
# (`pyscan_tools/lab/time_scan.py --tune` prints such a line for its fastest candidate).
if os.environ.get("PYSCAN_DECOUPLED_CONFIG"):
    CONFIG.update(Config.from_json(os.environ["PYSCAN_DECOUPLED_CONFIG"]))


# Below SMALL_MAX_TILES tiles of its own, an array runs with half the tile (4 vectors per thread: 4096 elements
# for 32-bit types, 2048 for 64-bit): a tile's latency is its threads' serial loads and scans, and at these sizes
# latency, not bandwidth, is the time.  Device time on an H100 (pyscan_tools/lab/kernel_times.py --sweep-scan), shipped
# tile against this one: int32 2^12 5.31 -> 4.10 us, 2^14 8.83 -> 7.74, 2^16 9.09 -> 8.51; int64 2^14 9.60 ->
# 8.26, 2^16 10.37 -> 9.41; from 2^18 (int32) the shipped tile is as fast or faster.  An array the shipped tile
# covers in one tile while this one needs two keeps the shipped tile (one tile needs no look-back at all).
SMALL = {4: Config(threads=256, vecs=4, min_blocks=3), 8: Config(threads=256, vecs=4, min_blocks=3)}
SMALL_MAX_TILES = 32

# Where x and the result are both narrower than the tile's element (float16 or bfloat16 scanned in float32; int8 or
# int16 max/min in int32), the kernel's shared memory holds them at their own width (REGION_VECS), half or less of
# the large tile's 72 KB, and four blocks per SM fit: 5 % faster than three for float16 at 2^26 and 2^28, 3 % at
# 2^24, on an H100 (docs/decoupled_lookback_tuning.md).  Four blocks cap a thread at 64 registers, which the 1-D
# builds stay within (54-59 with nvcc 13.0, custom operators included) and the rows build does not (it spills), so
# the rows build keeps CONFIG's three.  The same tile as CONFIG's, so the choice between it and SMALL is CONFIG's.
NARROW = {4: Config(threads=256, vecs=8, min_blocks=4)}


def _tile(policy: Config, itemsize: int) -> int:
    return policy.threads * policy.vecs * (16 // itemsize)


def _policy(itemsize: int, n: int) -> tuple:
    """(Config, elements per tile, whether it is SMALL's) the driver runs for n elements of itemsize bytes (the
    rule config() states)."""
    large = CONFIG[itemsize]
    tile = large.threads * large.vecs * (16 // itemsize)
    small = SMALL.get(itemsize)
    if small is not None:
        small_tile = small.threads * small.vecs * (16 // itemsize)
        if n <= SMALL_MAX_TILES * small_tile and (n <= small_tile or n > tile):
            return small, small_tile, True
    return large, tile, False


def element_size(dtype, result=None) -> int:
    """The element size (4 or 8) that sizes the kernel's tile for x of dtype and a result dtype (default: dtype):
    the wider of x's type and the compute type (the kernel's WIDEST; the compute type is at least 32 bits and at
    least as wide as the result)."""
    dtype = np.dtype(dtype)
    compute = COMPUTE_TYPES[dtype if result is None else np.dtype(result)]
    return max(dtype.itemsize, compute.itemsize)


def region_narrowing(dtype, result=None) -> int:
    """How many times narrower than the tile's element (element_size) the elements a warp's region of shared memory
    holds are: 1, or for a converting build (x or the result not of the compute type) whose x and result are both
    narrower, element_size / the wider of them (the kernel's REGION_VECS)."""
    dtype = np.dtype(dtype)
    result = dtype if result is None else np.dtype(result)
    compute = COMPUTE_TYPES[result]
    if dtype == compute and result == compute:
        return 1
    return element_size(dtype, result) // max(dtype.itemsize, result.itemsize)


def config(dtype, n: int | None = None, result=None, rows: bool = False) -> Config:
    """The Config the driver runs for x of dtype and a result dtype (default: dtype) (and n elements: SMALL below
    SMALL_MAX_TILES of its tiles, except where the large tile covers the array in one tile and the small one would
    need two); the large tile of a 1-D build (not rows) with narrow x and result is NARROW's."""
    itemsize = element_size(dtype, result)
    large = NARROW.get(itemsize) if not rows and region_narrowing(dtype, result) > 1 else None
    if n is None:
        return large or CONFIG[itemsize]
    policy, _, small = _policy(itemsize, int(n))
    return policy if small or large is None else large


def block_threads(dtype, n: int | None = None, result=None) -> int:
    return config(dtype, n, result).threads


def items_per_thread(dtype, n: int | None = None, result=None) -> int:
    return config(dtype, n, result).vecs * (16 // element_size(dtype, result))


def tile_size(dtype, n: int | None = None, result=None) -> int:
    """Elements per tile for n elements (n=None: the large-array tile, 8192 for 32-bit types and 4096 for 64-bit
    types with the default CONFIG); x of dtype, a result of `result` (default: dtype): element_size() picks."""
    return block_threads(dtype, n, result) * items_per_thread(dtype, n, result)


def _at_last_item(X, values):
    """A step's array: the tiles' items X ([tile, thread, item]) with each thread's last item replaced by its value."""
    A = X.copy()
    A[:, :, -1] = values
    return A.reshape(-1)


def decoupled_lookback_model(x, *, op="add", exclusive=False, return_steps=False, types=None):
    """NumPy step-model of `decoupled_lookback` (module docstring): any length.  x: the compute values (the
    registered model converts any dtype, pyscan.types.typed_model); `types` (pyscan.types.Types): the call's input
    and result dtypes, which size the tile as in the kernel (default: x's dtype for both)."""
    x = check_model_input(x, op)
    n = x.size
    if n == 0:
        return (x.copy(), []) if return_steps else x.copy()
    if return_steps and n > STEP_LIMIT:
        raise ValueError(f"decoupled_lookback: steps are recorded for at most {STEP_LIMIT} elements, got {n}")
    f, e, dt = ufunc(op), identity(op, x.dtype), x.dtype
    tile_in, tile_result = (dt, dt) if types is None else (types.input, types.value)
    items, threads = items_per_thread(tile_in, n, tile_result), block_threads(tile_in, n, tile_result)
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
    block_inclusive = f(thread_prefix, thread_total)
    steps = [
        Step("load (16-byte vectors through shared memory)", flat.copy(), []),
        Step(f"thread totals ({items} items each)", _at_last_item(X, thread_total), []),
        Step("block scan of the thread totals (warp shuffles + warp totals)", _at_last_item(X, block_inclusive), []),
        Step("look-back: + the tile's exclusive prefix", _at_last_item(X, f(tile_prefix[:, None], block_inclusive)), []),
        Step("rescan each thread's items from its prefix" + (" (exclusive)" if exclusive else ""),
             out.reshape(-1).copy(), []),
    ]
    return result, steps


decoupled_lookback_model.takes_types = True


def _pair_combine(fa, va, fb, vb, f):
    """The rows build's operator on (flag, value) pairs, a before b: (fa | fb, fb ? vb : op(va, vb))."""
    return fa | fb, np.where(fb, vb, f(va, vb))


def rows_model(x, row_length: int, *, op="add", exclusive=False, return_steps=False, e=None, itemsize=None):
    """NumPy step-model of the kernel's rows build (ROWS 1, the kernel file's header): the flattened C-order array x
    of compute values (its size a multiple of row_length), every row scanned, with the 1-D scan's tiles and the
    (value, head flag) pairs, in the schedule where every look-back finds its predecessor's P at its first look.
    e: the kernel's op_identity() (the result dtype's identity held in the compute type; default: the compute type's
    own, which differs only in what an exclusive scan starts with, e.g. int8 max's -128).  itemsize: the element
    size that sizes the tile (element_size() of x's dtype and the result dtype; default: the compute type's)."""
    return pairs_model(x, lambda index: index % row_length == 0, op=op, exclusive=exclusive,
                       return_steps=return_steps, e=e, itemsize=itemsize, what="rows")


def pairs_model(x, heads_at, *, op="add", exclusive=False, return_steps=False, e=None, itemsize=None, what="rows"):
    """The model of the builds on (value, head flag) pairs (rows_model; pyscan.segments.tile_scan_model for the
    segments build): heads_at(index array) says which flat indices are heads.  e, itemsize: as rows_model's."""
    flat_in = np.ascontiguousarray(x).reshape(-1)
    total, dt = flat_in.size, flat_in.dtype
    if total == 0:
        return (flat_in.copy(), []) if return_steps else flat_in.copy()
    if return_steps and total > STEP_LIMIT:
        raise ValueError(f"decoupled_lookback {what}: steps are recorded for at most {STEP_LIMIT} elements, got {total}")
    f = ufunc(op)
    e = identity(op, dt) if e is None else dt.type(e)
    policy, tile, _ = _policy(itemsize or dt.itemsize, total)
    threads, items = policy.threads, tile // policy.threads
    tiles = -(-total // tile)
    flat = np.full(tiles * tile, e, dt)
    flat[:total] = flat_in
    X = flat.reshape(tiles, threads, items)
    heads = heads_at(np.arange(tiles * tile, dtype=np.int64)).reshape(tiles, threads, items)
    # 3. thread pairs: a left-to-right loop over the items, from the identity at heads (thread_pair_of)
    flag = np.zeros((tiles, threads), bool)
    value = np.full((tiles, threads), e, dt)
    for i in range(items):
        flag |= heads[:, :, i]
        value = f(np.where(heads[:, :, i], e, value), X[:, :, i])
    # warp Kogge-Stone over the pairs (lane >= offset takes (lane - offset) before it)
    Wf = flag.reshape(tiles, threads // 32, 32).copy()
    Wv = value.reshape(tiles, threads // 32, 32).copy()
    offset = 1
    while offset < 32:
        sf, sv = Wf[:, :, :-offset].copy(), Wv[:, :, :-offset].copy()
        Wf[:, :, offset:], Wv[:, :, offset:] = _pair_combine(sf, sv, Wf[:, :, offset:], Wv[:, :, offset:], f)
        offset *= 2
    pf = np.zeros_like(Wf)
    pv = np.full_like(Wv, e)
    pf[:, :, 1:], pv[:, :, 1:] = Wf[:, :, :-1], Wv[:, :, :-1]  # shfl_up by 1, lane 0 the identity
    # warp prefixes, warp by warp from the identity
    agg_f, agg_v = np.zeros(tiles, bool), np.full(tiles, e, dt)
    wpf, wpv = np.zeros((tiles, threads // 32), bool), np.full((tiles, threads // 32), e, dt)
    for w in range(threads // 32):
        wpf[:, w], wpv[:, w] = agg_f, agg_v
        agg_f, agg_v = _pair_combine(agg_f, agg_v, Wf[:, w, -1], Wv[:, w, -1], f)
    tpf, tpv = _pair_combine(wpf[:, :, None], wpv[:, :, None], pf, pv, f)
    tpf, tpv = tpf.reshape(tiles, threads), tpv.reshape(tiles, threads)
    # 4. look-back in the serial schedule: P[t] = aggregate if the tile holds a head (or is tile 0), else
    #    op(P[t-1], aggregate); the exclusive prefix of tile t is P[t-1] unless it is tile 0 or starts a row
    starts_row = heads[:, 0, 0]
    prefix = np.full(tiles, e, dt)
    P = np.empty(tiles, dt)
    for t in range(tiles):
        if t > 0 and not starts_row[t]:
            prefix[t] = P[t - 1]
        P[t] = agg_v[t] if (t == 0 or agg_f[t]) else f(prefix[t], agg_v[t])
    # 5. rescan, the running value from the identity at every head
    running = np.where(tpf, tpv, f(prefix[:, None], tpv))
    out = np.empty_like(X)
    for i in range(items):
        running = np.where(heads[:, :, i], e, running)
        nxt = f(running, X[:, :, i])
        out[:, :, i] = running if exclusive else nxt
        running = nxt
    result = out.reshape(-1)[:total].copy()
    if not return_steps:
        return result
    block = np.where(flag, value, f(tpv, value))  # each thread's inclusive pair within the tile (its value)
    looked = np.where(flag | tpf, block, f(prefix[:, None], block))
    steps = [Step("load (16-byte vectors through shared memory)", flat.copy(), []),
             Step(f"thread (flag, value) totals ({items} items each), restarting at row starts", _at_last_item(X, value),
                  []),
             Step("segmented block scan of the thread totals (warp shuffles + warp totals)", _at_last_item(X, block), []),
             Step("look-back: + the tile's prefix, up to the first row start", _at_last_item(X, looked), []),
             Step("rescan each thread's items from its prefix" + (" (exclusive)" if exclusive else ""),
                  out.reshape(-1).copy(), [])]
    return result, steps


def decoupled_lookback_error_depth(n: int) -> int:
    """Roundings on any path from an input to an output (an upper bound for every element size's Config):
    a tile aggregate: <= ITEMS - 1 (thread loop) + 5 (warp scan) + WARPS (warp totals);
    the look-back: P[t] = op(exclusive prefix, aggregate) with the exclusive prefix = a 5-level warp reduction of
    the window holding the nearest P, combined last (1) with the windows after it: a path through P[j] reaches
    P[t] with <= 7 more roundings per hop, <= 7 t over a chain of hops, t < tiles;
    the output: op(tile prefix, thread prefix) (1) and the rescan (<= ITEMS), with the thread prefix
    (<= ITEMS - 1 + 5 + WARPS + 1).  In all <= 7 tiles + 2 ITEMS + WARPS + 16."""
    policies = [(size, c) for table in (CONFIG, SMALL) for size, c in table.items()]
    tile = min(_tile(c, size) for size, c in policies)
    items = max(c.vecs * (16 // size) for size, c in policies)
    warps = max(c.threads for _, c in policies) // 32
    return 7 * -(-int(n) // tile) + 2 * items + warps + 16


# ---------------------------------------------------------------------------------------------------------------
# GPU.

class Plan:
    """What one launch needs for a (dtype, result dtype, op, aligned or not, large or SMALL tile) on one device
    architecture: the kernel, its Config and tile, and its dynamic shared memory.  Built once and cached (plan())."""

    __slots__ = ("kernel", "policy", "tile", "shared", "vector", "block", "most_blocks", "one_tile", "context",
                 "status_size")

    def __init__(self, dtype, op, vector: bool, small: bool, device: int, result=None, rows: bool = False,
                 segments: tuple | None = None):
        result = dtype if result is None else result
        size = element_size(dtype, result)
        self.status_size = COMPUTE_TYPES[result].itemsize  # the status words hold compute values
        self.policy = SMALL[size] if small else config(dtype, None, result, rows or segments is not None)
        self.tile, self.vector = _tile(self.policy, size), vector
        self.block, self.context = self.policy.threads, driver.primary(device)
        self.most_blocks = self.policy.grid(1 << 62, vector, device)  # the persistent grid's cap (Config.grid)
        function = (ROWS_FUNCTION if rows else FUNCTION if segments is None else
                    SEGMENTED_REDUCE_FUNCTION if segments[1] else SEGMENTED_SCAN_FUNCTION)
        self.kernel = get_kernel(KERNEL, function, device=device,
                                 **kernel_defines(dtype, op, vector, self.policy, result, rows,
                                                  segments and segments[0]))
        self.shared = self.policy.shared_bytes(vector, region_narrowing(dtype, result))
        if self.shared > 48 * 1024:  # a launch may ask for more than 48 KB only after the kernel's limit is raised
            self.kernel.set_max_dynamic_shared(self.shared)
        self.one_tile = self.kernel.config(1, self.block, self.shared)
        capture.prepare_kept(device)  # made outside any capture: a captured call's status without a memset node


# (dtype, op, vector, small, device, result) -> Plan; the rows build's keys end with True, the segments build's with
# (False, (offsets' C type, values))
_plans: dict = {}


def kernel_defines(dtype, op, vector: bool = True, policy: Config | None = None, result=None,
                   rows: bool = False, offset_type: str | None = None) -> dict:
    """The #defines of the kernel for x of dtype, op, a result dtype (default: dtype), 16-byte aligned (vector) or
    unaligned arrays, and a Config (default: the large-array one); rows: the build that scans every row on its own
    (ROWS 1); offset_type (the offsets' C type, "int" or "long long"): the build that scans or reduces every segment
    of CSR offsets on its own (SEGMENTS 1)."""
    segments = offset_type is not None
    return {**(policy or config(dtype, None, result, rows or segments)).defines(), "VECTOR_LOADS": int(vector),
            **({"ROWS": 1} if rows else {}), **({"SEGMENTS": 1, "OFFSET_TYPE": offset_type} if segments else {}),
            **type_defines(dtype, op, result)}


def plan(dtype, op, vector: bool, small: bool, device: int, result=None, rows: bool = False,
         segments: tuple | None = None) -> Plan:
    key = (dtype, op, vector, small, device, result) + ((True,) if rows else (False, segments) if segments else ())
    found = _plans.get(key)
    if found is None:
        previous = driver.enter(device)  # a ready() call has not entered it: compiling and attributes need it
        try:
            found = _plans[key] = Plan(dtype, op, vector, small, device, result, rows, segments)
        finally:
            driver.leave(previous)
    return found


def status_words(tiles: int, itemsize: int) -> int:
    """64-bit words of tile status (all zeroed before first use): 32-bit types one packed (value, flag) word per
    tile; 64-bit types four, an A pair and a P pair of (half, flag) words."""
    return tiles if itemsize == 4 else 4 * tiles


EPOCHS = 1 << 30  # the flags hold the epoch in 30 bits
EPOCH_ON_DEVICE = 0xFFFFFFFF  # the epoch argument of a captured launch: the kernel reads and advances the buffer's own
# EPOCH: the tile counter and the status words, kept between calls per (context, stream) and element size.
# Zeroed when allocated; every call then takes the next epoch (1, 2, ... < 2^30), which the kernel writes into its
# flags, so the words of earlier calls read as X and need no memset; the kernel puts the counter back to 0.
# Layout (64-bit words): [0] the tile counter (low 32 bits) and the epoch of a launch captured into a graph (high 32
# bits; EPOCH_ON_DEVICE), [1] the count of finished blocks (low 32 bits), [2:] the status words of the tiles
# (status_words).  Calls on one stream run one after the other, so one buffer serves them; each stream has its own
# (pyscan.runtime.workspace), so streams may run at once.
_status = {4: StreamWorkspace("decoupled look-back status, 32-bit types"),
           8: StreamWorkspace("decoupled look-back status, 64-bit types")}


def next_status(tiles: int, itemsize: int, device: int, stream: int) -> tuple:
    """(base address, epoch) of the device's stream for a scan of `tiles` tiles."""
    workspace = _status[itemsize]
    kept = workspace.get(8 * (2 + status_words(tiles, itemsize)), device, stream)
    with kept.lock:
        kept.state += 1
        if kept.state == EPOCHS:  # after 2^30 - 1 calls: zero the flags again and start over
            workspace.zero(kept, stream)
            kept.state = 1
        return kept.address, kept.state


def launch(out: int, x: int, n: int, dtype, op: str, exclusive: bool, device: int, stream: int,
           context: int = 0, result=None, row_length: int = 0, segments: tuple | None = None) -> None:
    """Scan n > 0 elements of dtype (a np.dtype) at device address x into address out, as `result` (a np.dtype;
    None: dtype), on `stream` of `device` in `context` (0: the current one): the policy's choice, the plan's look-up
    and one launch.  row_length > 0: every row of that many elements on its own (the rows build; n a multiple of
    it).  segments: (offsets address, S, the offsets' C type, values): every segment of the CSR offsets on its own
    (the segments build); values: out[s], one value per segment (S of them), instead of every element's scan."""
    values = segments is not None and segments[3]
    vector = not (x | (0 if values else out)) & 15  # both 16-byte aligned, else scalar loads for every tile
    same = (result is None or result == dtype) and dtype.itemsize >= 4  # then the tile's element size is x's
    small = _policy(dtype.itemsize if same else element_size(dtype, result), n)[2]
    key = (dtype, op, vector, small, device, result)
    if row_length:
        key += (True,)
    elif segments is not None:
        key += (False, (segments[2], values))
    p = _plans.get(key) or plan(*key)
    tiles = -(-n // p.tile)
    kernel = p.kernel
    if tiles == 1:  # no look-back: no status words, no epoch
        geometry, base, status, epoch = p.one_tile, 0, 0, 0
    elif driver._capturing(stream) and driver.capturing(stream, device):
        # a CUDA graph: status the graph keeps, whose epoch the kernel reads and advances; or, with none left, the
        # call's own, zeroed by a memset node, and epoch 0 (pyscan.runtime.capture)
        own, base = capture.zeroed(8 * (2 + status_words(tiles, p.status_size)), device, stream)
        epoch = EPOCH_ON_DEVICE if own is None else 0
    else:
        base, epoch = next_status(tiles, p.status_size, device, stream)
    if tiles > 1:
        geometry, status = kernel.config(min(tiles, p.most_blocks), p.block, p.shared), base + 16
    if row_length:
        args = (out, x, n, row_length, exclusive, base, status, tiles, epoch)
    elif values:
        args = (out, x, n, segments[0], segments[1], base, status, tiles, epoch)
    elif segments is not None:
        args = (out, x, n, segments[0], segments[1], exclusive, base, status, tiles, epoch)
    else:
        args = (out, x, n, exclusive, base, status, tiles, epoch)
    if loader.launch_raw(context, kernel.function, stream, geometry, kernel.arg_types, *args):
        kernel.launch_typed(context, stream, geometry, *args)  # to raise


def ready(kind, x, address: int, n: int, dtype, device: int, stream: int, op: str, exclusive: bool, result=None):
    """The commonest call, pyscan.scan(x) of a 1-D C-contiguous device array on its library's stream, made whole:
    the result allocated by x's library (kind), one launch in the device's primary context.  Nothing is entered.
    result: dtype= checked (pyscan.types.requested_result); None: NumPy's accumulator rule."""
    if result is None:
        result = RESULTS.get((dtype, op)) or result_dtype(dtype, op)  # NumPy's accumulator rule (pyscan.types)
    native, out = kind.new(x, (n,), result, device, stream)
    if n:
        launch(out, address, n, dtype, op, exclusive, device, stream, driver._primary.get(device) or
               driver.primary(device), None if result == dtype else result)
    return native


def decoupled_lookback_driver(x, out, *, op, exclusive, call):
    result = None if out.dtype == x.dtype else out.dtype
    launch(int(out.gpudata), int(x.gpudata), x.size, x.dtype, op, exclusive, call.device, call.stream, call.context,
           result)
    return 1


SCANS.register(
    "decoupled_lookback", decoupled_lookback_driver, kernels=(KERNEL,),
    source="Merrill & Garland 2016, single-pass parallel prefix scan with decoupled look-back",
    summary="one pass: 256-thread tiles of 8192 (32-bit) or 4096 (64-bit) elements, persistent blocks with the next "
            "tile's copies in flight, warp-shuffle block scan, epoch-tagged status words, a warp looking back over 32 "
            "predecessors at once; any length",
    model=decoupled_lookback_model, ready=ready, trace=None, count_work=None, error_depth=decoupled_lookback_error_depth,
    fast=True,
)
