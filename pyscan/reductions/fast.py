"""The fast reduction (kernels/reduction/fast.cu): one launch, grid-stride over a device-sized grid, 16-byte loads,
FAST_UNROLL x VEC independent accumulators per thread, warp shuffles, and the last block to finish reducing the
per-block results (as a second one-block pass would).  The order of the additions depends only on n, the grid and
the array's alignment (only the ticket that elects the last block is an atomic), so float sums are reproducible,
and the NumPy model below (same index arithmetic, same order) gives the GPU's float result bit for bit when it is
given the same grid and alignment.  The per-block results and the ticket counter live in a buffer kept per stream
(pyscan.runtime.workspace): a call allocates nothing but its one-element result.

Tuning knobs (module globals, read when a plan is made; set them with retune()): FAST_BLOCK threads per block,
FAST_UNROLL vector loads in flight per thread, FAST_LOAD (0: __ldg, 1: __ldcs), BLOCKS_PER_SM (None: as many as
fit at once, from the kernel's registers).  pyscan_tools/lab/tune_fast.py reduction times the combinations.
"""

from __future__ import annotations

import numpy as np

from ..runtime import capture, driver, loader
from ..runtime.loader import get_kernel
from ..runtime.workspace import StreamWorkspace
from ..scans.steps import Step
from ..types import COMPUTE_TYPES, defines, identity, mapped_types, result_dtype, ufunc
from ..types import _results as RESULTS
from ._common import ceil_div, check_model_input, log2, scalar_result
from .registry import REDUCTIONS

KERNEL = "reduction/fast.cu"
# FAST_BLOCK: 512 won 4 of 4 tuning runs (pyscan_tools/lab/tune_fast.py reduction) on an H100 at 2^28 (float32 0.389-0.399
# ms, int32 0.413, against 0.408-0.425 for 256 at the same occupancy, 1024 threads per SM; unroll and load kind
# mattered less; a block-contiguous load layout was no faster).  The one-launch form (the last block reduces the
# partials) measured within 3 % of two launches at 2^28 and saves a launch per call; `bench all` gives it
# 1.00 x copy bandwidth for int32 and float32 at 2^28 (benchmarks/bench.txt).
FAST_BLOCK = 512
# FAST_UNROLL 2: timed as the public call on torch tensors beside torch's own call in the same rounds
# (pyscan_tools/lab/reduce_knobs_vs_peers.py, docs/reduction.md), it beat 4 in 13 of 14 cases from 2^22 to 2^28 and tied
# in the other: 3-9 % faster at 2^24-2^26, where 4 was 1-2 % behind torch for 64-bit max/min, and 1.5 % for
# float64 max at 2^28.  Every resident thread with two 16-byte loads in flight already covers the memory latency;
# more accumulators only lengthen the loop.  FAST_LOAD stays __ldg: __ldcs (evict-first) gained 0-2 % from 2^24
# but lost the L2 to back-to-back calls on 32 MB arrays (64-bit 2^22: 16.3 us against torch's 13.7, where __ldg
# takes 12-13).
FAST_UNROLL = 2
# Arrays of at most one 16-byte vector per thread of the resident grid run a build without the unrolled loop
# (FAST_UNROLL=1): its shorter code costs ~3 us less of device time on an H100 at 2^12-2^20 elements, where a call
# is latency, not bandwidth (pyscan_tools/lab/kernel_times.py --sweep-reduce: 6.2-8.8 us against 9.0-11.9).
SMALL_UNROLL = 1
# Up to ONE_BLOCK_VECTORS vectors per thread of one block (16,384 four-byte elements, 8,192 eight-byte ones), one
# block takes the whole array (the large build's loop): no ticket and no second pass over the partials, whose
# latency is the time of a small call replayed in a CUDA graph, where a launch costs no host time.  Replays on an H200
# (sum and max of float32, int32 and float64, 2^11-2^16 elements, docs/reduction.md): 8 took 2.0-2.8 us where 2 took
# 3.1-3.6 at the sizes between them (torch 2.7-6.3), and no size was slower; eagerly every one is launch-bound.
ONE_BLOCK_VECTORS = 8
FAST_LOAD = 0  # 0: __ldg, 1: __ldcs
BLOCKS_PER_SM = None
NOMINAL_MAX_BLOCKS = 132 * 2  # the model's default grid: an H100 SXM (132 SMs) at the kernel's occupancy

_max_blocks_cache: dict = {}


def vector_width(dtype) -> int:
    return 16 // np.dtype(dtype).itemsize


def grid_for(n: int, dtype, max_blocks: int, block: int | None = None, unroll: int | None = None) -> int:
    """Blocks for n elements: one 16-byte vector per thread, at most the device's resident blocks (then each thread
    loops, FAST_UNROLL vectors at a time).  Spreading a mid-size array over every SM beats giving fewer threads
    FAST_UNROLL vectors each (pyscan_tools/lab/kernel_times.py --sweep-reduce on an H100: 2^14-2^20 elements in 6.2-8.8 us
    of device time against 9.7-10.4 us).  `unroll` is accepted for the tuning scripts and does not change the grid."""
    block = block or FAST_BLOCK
    vectors = ceil_div(n, block * vector_width(dtype))  # per thread of one block
    return 1 if vectors <= ONE_BLOCK_VECTORS else min(max_blocks, vectors)


def head_of(address: int, n: int, dtype) -> int:
    """Elements before the first 16-byte boundary (read one by one, like the tail)."""
    itemsize = np.dtype(dtype).itemsize
    return min(n, ((16 - address % 16) % 16) // itemsize)


def kernel_builds(dtype, op, unroll: int | None = None, result=None, map=None) -> list:
    """(kernel file, #defines) of every build the driver uses for x of dtype, op and a result dtype (default: NumPy's,
    pyscan.types.result_dtype) (small arrays', large arrays'), or of the one with that FAST_UNROLL; with a map
    (pyscan.reduce's map=) applied in the loads where given."""
    unrolls = (unroll,) if unroll is not None else tuple(dict.fromkeys((SMALL_UNROLL, FAST_UNROLL)))
    result = result_dtype(dtype, op) if result is None else result
    return [(KERNEL, {"FAST_UNROLL": u, "FAST_LOAD": FAST_LOAD, **defines(dtype, op, result, map=map)})
            for u in unrolls]


def unroll_for(n: int, dtype, blocks: int, block: int | None = None) -> int:
    """The FAST_UNROLL of the build the driver runs for n elements on `blocks` blocks: SMALL_UNROLL when the grid
    gives every thread at most one vector, else FAST_UNROLL."""
    return SMALL_UNROLL if n <= blocks * (block or FAST_BLOCK) * vector_width(dtype) else FAST_UNROLL


def retune(**knobs) -> None:
    """Set tuning knobs by name (FAST_BLOCK=..., FAST_UNROLL=..., FAST_LOAD=..., BLOCKS_PER_SM=...; the lab's
    tuning scripts) and drop the plans made with the old ones."""
    unknown = sorted(set(knobs) - set(KNOBS))
    if unknown:
        raise ValueError(f"unknown knobs {unknown}: the knobs are {list(KNOBS)}")
    globals().update(knobs)
    _plans.clear()
    _ready_plans.clear()


KNOBS = ("FAST_BLOCK", "FAST_UNROLL", "SMALL_UNROLL", "FAST_LOAD", "BLOCKS_PER_SM", "ONE_BLOCK_VECTORS")


class Plan:
    """What a launch needs for (dtype, op) on one device: the small and large builds, the blocks of each the device
    runs at once, the elements a block covers at one vector per thread, and the primary context it launches in."""

    __slots__ = ("small", "most_small", "large", "most_large", "per_block", "context", "partial_size", "result")

    def __init__(self, dtype, op, device: int, result=None, map=None):
        result = result_dtype(dtype, op) if result is None else result
        self.result = result  # the result dtype (`out` holds one element of it)
        self.partial_size = COMPUTE_TYPES[result].itemsize  # the per-block results are the compute type
        self.small, self.large = (get_kernel(KERNEL, "reduce_fast", device=device, **macros)
                                  for _, macros in (kernel_builds(dtype, op, unroll, result, map)[0]
                                                    for unroll in (SMALL_UNROLL, FAST_UNROLL)))
        self.most_small, self.most_large = max_blocks(self.small, device), max_blocks(self.large, device)
        self.per_block = FAST_BLOCK * vector_width(dtype)
        self.context = driver.primary(device)
        capture.prepare_kept(device)  # made outside any capture: a captured call's counter without a memset

    def choose(self, n: int) -> tuple:
        """(build, blocks) for n elements: one block up to ONE_BLOCK_VECTORS vectors a thread (the large build past
        one), then one vector per thread on the small build while the resident blocks hold them (grid_for()), else
        every resident block of the large build (unroll_for() states the same rule)."""
        blocks = -(-n // self.per_block) or 1
        if blocks <= ONE_BLOCK_VECTORS:
            return (self.small if blocks == 1 else self.large), 1
        return (self.small, blocks) if blocks <= self.most_small else (self.large, self.most_large)


_plans: dict = {}  # (dtype, op, device, result dtype or None: NumPy's[, map where one is given]) -> Plan
_ready_plans: dict = {}  # (dtype, op, device) -> the Plan of NumPy's result dtype: ready()'s one look-up


def _plan_key(dtype, op, device, result, map) -> tuple:
    return (dtype, op, device, result) if map is None else (dtype, op, device, result, map)


def plan(dtype, op, device: int, result=None, map=None) -> Plan:
    key = _plan_key(dtype, op, device, result, map)
    found = _plans.get(key)
    if found is None:
        previous = driver.enter(device)  # a ready() call has not entered it: compiling and occupancy need it
        try:
            found = _plans[key] = Plan(dtype, op, device, result, map)
            if result is None and map is None:
                _ready_plans[(dtype, op, device)] = found
        finally:
            driver.leave(previous)
    return found


def max_blocks(fn, device: int) -> int:
    """Blocks of FAST_BLOCK threads the device runs at once (SMs x blocks per SM, from the occupancy calculator), or
    SMs x BLOCKS_PER_SM."""
    per_sm = BLOCKS_PER_SM if BLOCKS_PER_SM is not None else max(1, fn.max_active_blocks(FAST_BLOCK))
    return driver.multiprocessor_count(device) * per_sm


def launch_grid(x, op="add", device: int = 0) -> int:
    """The number of blocks the driver launches for x (an array of that length and dtype) on `device`."""
    return plan(np.dtype(x.dtype), op, device).choose(x.size)[1]


# [0, 16): the ticket counter (32 bits, 0 between launches); [16, ...): the per-block results.
_workspace = StreamWorkspace("fast reduction")
PARTIALS_OFFSET = 16


def launch_into(out: int, x: int, n: int, dtype, op: str, device: int, stream: int, context: int = 0,
                blocks=None, result=None, map=None) -> None:
    """One launch: the op over n > 0 elements of dtype (a np.dtype) at device address x (each through `map` where
    given) into the one element at out (of the result dtype: None, NumPy's), on `stream` of `device` in `context`
    (0: the current one)."""
    p = _plans.get(_plan_key(dtype, op, device, result, map)) or plan(dtype, op, device, result, map)
    if blocks is None:
        fn, blocks = p.choose(n)
    else:
        fn = p.small if unroll_for(n, dtype, blocks) == SMALL_UNROLL else p.large
    _launch(fn, blocks, out, x, n, p.partial_size, device, stream, context)


def _launch(fn, blocks, out, x, n, partial_size, device, stream, context):
    """One launch of build fn on `blocks` blocks, a prepared call (loader.launch_raw)."""
    if blocks == 1:
        partials = counter = 0
    elif driver._capturing(stream) and driver.capturing(stream, device):
        # a CUDA graph: a counter word of the graph's own that the kernel puts back to zero, and partials from the
        # capturing allocator; or, with no such word left, the call's own buffer with its counter zeroed by a memset
        # node (runtime.capture)
        counter = capture.kept(8, device)
        if counter is not None:
            kept = capture.scratch(blocks * partial_size, device, stream)
            partials = kept.address
        else:
            kept = capture.status(PARTIALS_OFFSET + blocks * partial_size, device, stream,
                                  zero_bytes=PARTIALS_OFFSET)
            partials, counter = kept.address + PARTIALS_OFFSET, kept.address
    else:
        kept = _workspace.get(PARTIALS_OFFSET + blocks * partial_size, device, stream)
        partials, counter = kept.address + PARTIALS_OFFSET, kept.address
    geometry = fn.config(blocks, FAST_BLOCK)
    if loader.launch_raw(context, fn.function, stream, geometry, fn.arg_types, out, partials, counter, x, n):
        fn.launch_typed(context, stream, geometry, out, partials, counter, x, n)  # again, to raise (or retry)


def launch(x, *, op, call, blocks=None, out=None, dtype=None, map=None):
    """One launch: the op over x (mapped by `map` in the loads where given) into `out` (a new one-element array of the
    result dtype if None: NumPy's rule, or dtype=), which it returns."""
    value = result_dtype(x.dtype, op, dtype) if map is None else mapped_types(x.dtype, op, map, dtype).value
    if out is None:
        out = call.empty((1,), value)
    launch_into(int(out.gpudata), int(x.gpudata), x.size, x.dtype, op, call.device, call.stream, call.context, blocks,
                None if dtype is None else value, map)
    return out


def ready(kind, x, address: int, n: int, dtype, device: int, stream: int, op: str, result=None):
    """The commonest call, pyscan.reduce(x) of a non-empty 1-D C-contiguous device array on its library's stream,
    made whole: the 0-d result allocated by x's library (kind), one launch in the device's primary context.
    result: dtype= checked (pyscan.types.requested_result); None: NumPy's accumulator rule."""
    p = _ready_plans.get((dtype, op, device)) if result is None else None
    if p is None:
        default = RESULTS.get((dtype, op)) or result_dtype(dtype, op)
        p = plan(dtype, op, device, None if result is None or result == default else result)
    native, out = kind.new(x, (), p.result, device, stream)
    _launch(*p.choose(n), out, address, n, p.partial_size, device, stream, p.context)
    return native


def driver_(x, *, op, call):
    return scalar_result(launch(x, op=op, call=call), call)


# ---------------------------------------------------------------------------------------------------------------
# Model: the kernel's index arithmetic, every thread at once.

def _pass(x, op, blocks, block, unroll, head, record, label, vec=None):
    """One launch of reduce_fast over x with `blocks` blocks: returns the per-block results (and Steps).  vec: the
    elements per 16-byte vector of the array as stored (default: of x's dtype; x holds the compute values)."""
    dtype, n, combine = x.dtype, x.size, ufunc(op)
    e = identity(op, dtype)
    vec = vec or vector_width(dtype)
    threads = blocks * block
    gid = np.arange(threads)
    vectors = (n - head) // vec
    tail_start = head + vectors * vec
    body = x[head:tail_start].reshape(vectors, vec)
    acc = np.full((threads, unroll, vec), e, dtype)
    owner = np.full(n, -1) if record else None  # which thread read each element (for the picture's edges)
    v = gid.copy()
    while True:  # the unrolled loop: each thread runs it while all `unroll` of its vectors exist
        more = v + (unroll - 1) * threads < vectors
        if not more.any():
            break
        for u in range(unroll):
            rows = v[more] + u * threads
            acc[more, u, :] = combine(acc[more, u, :], body[rows])
            if record:
                owner[head + (rows[:, None] * vec + np.arange(vec)).ravel()] = np.repeat(gid[more], vec)
        v[more] += unroll * threads
    while True:  # the remaining vectors, one at a time, into the first accumulator set
        more = v < vectors
        if not more.any():
            break
        acc[more, 0, :] = combine(acc[more, 0, :], body[v[more]])
        if record:
            owner[head + (v[more][:, None] * vec + np.arange(vec)).ravel()] = np.repeat(gid[more], vec)
        v[more] += threads
    flat = acc.reshape(threads, unroll * vec)
    width = unroll * vec // 2
    while width >= 1:  # pairwise fold of the accumulators
        flat[:, :width] = combine(flat[:, :width], flat[:, width:2 * width])
        width //= 2
    value = flat[:, 0].copy()
    lo = min(head, threads)
    value[:lo] = combine(value[:lo], x[:lo])
    tail = min(n - tail_start, threads)
    value[:tail] = combine(value[:tail], x[tail_start:tail_start + tail])
    steps = []
    if record:
        owner[:lo] = np.arange(lo)
        owner[tail_start:tail_start + tail] = np.arange(tail)
        steps.append(Step(f"{label}thread accumulators", value.copy(), [(i, int(t)) for i, t in enumerate(owner)]))

    def warp_reduce(lanes):  # lanes: (warps, 32); __shfl_down_sync tree, lane 0 ends with the warp's result
        offset = 16
        while offset >= 1:
            lanes[:, :32 - offset] = combine(lanes[:, :32 - offset], lanes[:, offset:])
            offset //= 2
        return lanes[:, 0].copy()

    warp_results = warp_reduce(value.reshape(threads // 32, 32).copy())
    if record:
        steps.append(Step(f"{label}warp shuffles", warp_results.copy(), [(w * 32 + i, w) for w in range(threads // 32)
                                                                           for i in range(32)]))
    per_block = block // 32
    slots = np.full((blocks, 32), e, dtype)
    slots[:, :per_block] = warp_results.reshape(blocks, per_block)
    block_results = warp_reduce(slots)
    if record:
        steps.append(Step(f"{label}block results", block_results.copy(),
                          [(b * per_block + w, b) for b in range(blocks) for w in range(per_block)]))
    return block_results, steps


def model(x, *, op="add", return_steps=False, blocks=None, head=0, block=None, unroll=None, types=None):
    """NumPy step-model of the fast reduction: any length >= 1.

    x: the compute values (the registered model converts any dtype, pyscan.types.typed_model); types: the call's
    dtypes (pyscan.types.Types), whose input dtype sets the vector width and the grid, as in the kernel (default:
    x's dtype).  blocks: the grid (default: what the driver would choose on a device running NOMINAL_MAX_BLOCKS
    blocks at once); head: elements before the array's first 16-byte boundary (0 for an aligned array;
    head_of(address)).  With blocks > 1 a second pass reduces the per-block results (compute values) in one block,
    as the driver does."""
    x = check_model_input(x, op, "fast model: x")
    stored = x.dtype if types is None else types.input
    block = block or FAST_BLOCK
    if blocks is None:
        blocks = grid_for(x.size, stored, NOMINAL_MAX_BLOCKS, block)
    unroll = unroll or unroll_for(x.size, stored, blocks, block)
    if not 0 <= head < vector_width(stored):
        raise ValueError(f"fast model: head must be 0 .. {vector_width(stored) - 1}, got {head}")
    head = min(head, x.size)
    partials, steps = _pass(x, op, blocks, block, unroll, head, return_steps, "pass 1: " if blocks > 1 else "",
                            vector_width(stored))
    if blocks > 1:
        partials, more = _pass(partials, op, 1, block, unroll, 0, return_steps, "pass 2: ")
        steps += more
    result = partials[0]
    return (result, steps) if return_steps else result


def error_depth(n: int, blocks: int | None = None, dtype=None) -> int:
    """An upper bound on the additions an input passes through (see the package docstring), for the grid the
    driver would launch (blocks=None: NOMINAL_MAX_BLOCKS resident blocks; pass launch_grid(x) for the device's).
    dtype=None: the larger of the float32 and float64 bounds."""
    if dtype is None:
        return max(error_depth(n, blocks, t) for t in (np.float32, np.float64))
    vec = vector_width(dtype)
    if blocks is None:
        blocks = grid_for(n, dtype, NOMINAL_MAX_BLOCKS)

    def one_pass(n, threads):
        # each vector a thread reads lands in one accumulator: at most ceil(vectors / threads) per accumulator;
        # then the accumulators' pairwise fold, the head and tail element, 5 shuffle steps, the block's warps.
        return ceil_div(ceil_div(n, vec), threads) + log2(FAST_UNROLL * vec) + 2 + 5 + 5

    depth = one_pass(n, blocks * FAST_BLOCK)
    return depth + one_pass(blocks, FAST_BLOCK) if blocks > 1 else depth


model.takes_types = True

REDUCTIONS.register(
    "fast", driver_, kernels=(KERNEL,), source="beyond the book (PMPP §10.8 taken further)",
    summary="one launch: grid-stride over a device-sized grid, 16-byte loads, independent accumulators, warp "
            "shuffles, the last block reduces the per-block results",
    model=model, fast=True, launch=launch, ready=ready, error_depth=error_depth,
    builds=kernel_builds)
