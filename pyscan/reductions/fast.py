"""The fast reduction (kernels/reduction/fast.cu): one launch, grid-stride over a device-sized grid, 16-byte loads,
FAST_UNROLL x VEC independent accumulators per thread, warp shuffles, and the last block to finish reducing the
per-block results (as a second one-block pass would).  The order of the additions depends only on n, the grid and
the array's alignment (only the ticket that elects the last block is an atomic), so float sums are reproducible,
and the NumPy model below (same index arithmetic, same order) gives the GPU's float result bit for bit when it is
given the same grid and alignment.  The per-block results and the ticket counter live in a buffer kept per stream
(pyscan.workspace): a call allocates nothing but its one-element result.

Tuning knobs (module globals, read at every call): FAST_BLOCK threads per block, FAST_UNROLL vector loads in
flight per thread, FAST_LOAD (0: __ldg, 1: __ldcs), BLOCKS_PER_SM (None: as many as fit at once, from the
kernel's registers).  scripts/tune_fast.py reduction times the combinations.
"""

from __future__ import annotations

import numpy as np

from .. import arrays, cuda, gpu, streams
from ..loader import get_kernel
from ..scans.steps import Step
from ..types import defines, identity, ufunc
from ..workspace import StreamWorkspace
from ._common import ceil_div, check_model_input, log2, scalar_result
from .registry import REDUCTIONS

KERNEL = "reduction/fast.cu"
# FAST_BLOCK: 512 won 4 of 4 tuning runs (scripts/tune_fast.py reduction) on an H100 at 2^28 (float32 0.389-0.399
# ms, int32 0.413, against 0.408-0.425 for 256 at the same occupancy, 1024 threads per SM; unroll and load kind
# mattered less; a block-contiguous load layout was no faster).  The one-launch form (the last block reduces the
# partials) measured within 3 % of two launches at 2^28 and saves a launch per call; `bench all` gives it
# 1.00 x copy bandwidth for int32 and float32 at 2^28 (benchmarks/bench.txt).
FAST_BLOCK = 512
# FAST_UNROLL 2: timed as the public call on torch tensors beside torch's own call in the same rounds
# (scripts/reduce_knobs_vs_peers.py, docs/reduction.md), it beat 4 in 13 of 14 cases from 2^22 to 2^28 and tied
# in the other: 3-9 % faster at 2^24-2^26, where 4 was 1-2 % behind torch for 64-bit max/min, and 1.5 % for
# float64 max at 2^28.  Every resident thread with two 16-byte loads in flight already covers the memory latency;
# more accumulators only lengthen the loop.  FAST_LOAD stays __ldg: __ldcs (evict-first) gained 0-2 % from 2^24
# but lost the L2 to back-to-back calls on 32 MB arrays (64-bit 2^22: 16.3 us against torch's 13.7, where __ldg
# takes 12-13).
FAST_UNROLL = 2
# Arrays of at most one 16-byte vector per thread of the resident grid run a build without the unrolled loop
# (FAST_UNROLL=1): its shorter code costs ~3 us less of device time on an H100 at 2^12-2^20 elements, where a call
# is latency, not bandwidth (scripts/kernel_times.py --sweep-reduce: 6.2-8.8 us against 9.0-11.9).
SMALL_UNROLL = 1
FAST_LOAD = 0  # 0: __ldg, 1: __ldcs
BLOCKS_PER_SM = None
NOMINAL_MAX_BLOCKS = 132 * 2  # the model's default grid: an H100 SXM (132 SMs) at the kernel's occupancy

_max_blocks_cache: dict = {}


def vector_width(dtype) -> int:
    return 16 // np.dtype(dtype).itemsize


def grid_for(n: int, dtype, max_blocks: int, block: int | None = None, unroll: int | None = None) -> int:
    """Blocks for n elements: one 16-byte vector per thread, at most the device's resident blocks (then each thread
    loops, FAST_UNROLL vectors at a time).  Spreading a mid-size array over every SM beats giving fewer threads
    FAST_UNROLL vectors each (scripts/kernel_times.py --sweep-reduce on an H100: 2^14-2^20 elements in 6.2-8.8 us
    of device time against 9.7-10.4 us).  `unroll` is accepted for the tuning scripts and does not change the grid."""
    block = block or FAST_BLOCK
    return max(1, min(max_blocks, ceil_div(n, block * vector_width(dtype))))


def head_of(address: int, n: int, dtype) -> int:
    """Elements before the first 16-byte boundary (read one by one, like the tail)."""
    itemsize = np.dtype(dtype).itemsize
    return min(n, ((16 - address % 16) % 16) // itemsize)


def kernel_builds(dtype, op) -> list:
    """(kernel file, #defines) of every build the driver uses for dtype and op (small arrays', large arrays')."""
    return [(KERNEL, {"FAST_UNROLL": unroll, "FAST_LOAD": FAST_LOAD, **defines(dtype, op)})
            for unroll in dict.fromkeys((SMALL_UNROLL, FAST_UNROLL))]


_kernels: dict = {}


def _kernel(dtype, op, unroll: int | None = None):
    unroll = unroll or FAST_UNROLL
    key = (np.dtype(dtype), op, unroll, FAST_LOAD, streams.current_context())  # a function is one context's
    fn = _kernels.get(key)
    if fn is None:
        macros = {"FAST_UNROLL": unroll, "FAST_LOAD": FAST_LOAD, **defines(dtype, op)}
        fn = _kernels[key] = get_kernel(KERNEL, "reduce_fast", **macros)
    return fn


def unroll_for(n: int, dtype, blocks: int, block: int | None = None) -> int:
    """The FAST_UNROLL of the build the driver runs for n elements on `blocks` blocks: SMALL_UNROLL when the grid
    gives every thread at most one vector, else FAST_UNROLL."""
    return SMALL_UNROLL if n <= blocks * (block or FAST_BLOCK) * vector_width(dtype) else FAST_UNROLL


def max_blocks(fn) -> int:
    """Blocks of FAST_BLOCK threads the device runs at once (SMs x blocks per SM), or SMs x BLOCKS_PER_SM."""
    key = (id(fn), FAST_BLOCK, BLOCKS_PER_SM)  # the loader keeps fn alive (cached), so its id stays its own
    cached = _max_blocks_cache.get(key)
    if cached is None:
        ordinal = gpu.current_device()
        sms = gpu.multiprocessor_count(ordinal)
        if BLOCKS_PER_SM is not None:
            per_sm = BLOCKS_PER_SM
        else:
            regs = fn.num_regs
            regs_per_warp = ceil_div(max(regs, 1) * 32, 256) * 256  # registers are allocated per warp, 256 at a time
            by_regs = cuda.device_attribute(ordinal, cuda.DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR) // (
                regs_per_warp * (FAST_BLOCK // 32))
            by_threads = cuda.device_attribute(ordinal, cuda.DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) // FAST_BLOCK
            by_blocks = cuda.device_attribute(ordinal, cuda.DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)
            per_sm = max(1, min(by_regs, by_threads, by_blocks))
        cached = _max_blocks_cache[key] = sms * per_sm
    return cached


def launch_grid(x, op="add") -> int:
    """The number of blocks the driver launches for x (an array of that length and dtype) on this device."""
    return _choose(_plan_of(np.dtype(x.dtype), op), x.size)[1]


# [0, 16): the ticket counter (32 bits, 0 between launches); [16, ...): the per-block results.
_workspace = StreamWorkspace("fast reduction")
PARTIALS_OFFSET = 16


# The tuning knobs, in the order of a plan's first item (what pyscan/launch.c compares a plan's knobs with).
KNOB_NAMES = ("FAST_BLOCK", "FAST_UNROLL", "SMALL_UNROLL", "FAST_LOAD", "BLOCKS_PER_SM")

_plans: dict = {}  # (dtype, op, context) -> (the knobs it was made for, small build, its resident blocks,
#                                             large build, its resident blocks, elements per block at one vector)


def _knobs() -> tuple:
    """The knobs as they are now, in KNOB_NAMES' order."""
    return (FAST_BLOCK, FAST_UNROLL, SMALL_UNROLL, FAST_LOAD, BLOCKS_PER_SM)


def _plan(dtype, op, context: int):
    knobs = _knobs()
    small, large = _kernel(dtype, op, SMALL_UNROLL), _kernel(dtype, op)
    plan = (knobs, small, max_blocks(small), large, max_blocks(large), FAST_BLOCK * vector_width(dtype))
    _plans[(np.dtype(dtype), op, context)] = plan
    return plan


def _plan_of(dtype, op, context: int = 0):
    """The plan of dtype and op in `context` (current in this thread; default: the running call's)."""
    context = context or streams._local.context or streams.current_context()
    plan = _plans.get((dtype, op, context))
    if plan is None or plan[0] != _knobs():
        plan = _plan(dtype, op, context)  # new, or the knobs changed
    return plan


def _choose(plan, n: int) -> tuple:
    """(build, blocks) for n elements: one vector per thread on the small build while the resident blocks hold
    them (grid_for()), else every resident block of the large build (unroll_for() states the same rule)."""
    _, small, most_small, large, most_large, per_block = plan
    blocks = -(-n // per_block) or 1
    return (small, blocks) if blocks <= most_small else (large, most_large)


def launch_into(out: int, x: int, n: int, dtype, op: str, stream: int, context: int, blocks=None) -> None:
    """One launch: the op over n > 0 elements of dtype (a np.dtype) at device address x into the one element at
    out, on `stream`, in `context` (current in this thread).  launch() and the public call's direct path
    (pyscan.arrays.DIRECT_KINDS) both end here."""
    plan = _plan_of(dtype, op, context)
    if blocks is None:
        fn, blocks = _choose(plan, n)
    else:
        fn = plan[1] if unroll_for(n, dtype, blocks) == SMALL_UNROLL else plan[3]
    if blocks == 1:
        fn.launch_on(stream, (1, 1, 1), (FAST_BLOCK, 1, 1), (out, 0, 0, x, n))
        return
    kept = _workspace.get(PARTIALS_OFFSET + blocks * dtype.itemsize, stream, context)
    fn.launch_on(stream, (blocks, 1, 1), (FAST_BLOCK, 1, 1), (out, kept.address + PARTIALS_OFFSET, kept.address, x, n))


def native_direct():
    """The whole default call in C (pyscan/launch.c's reduce_direct(x, op) -> the 0-d result, or None when the call
    is not ready for it), bound to the live tables it reads: the direct kinds, the primary contexts, torch's dtypes,
    this module's plans, workspaces and knobs, and the libraries' own calls for the stream and the result
    (arrays.direct_hooks).  None where the C launch is not loaded.  It launches what
    launch_into() would (tests/test_native_launch.py checks the two against each other)."""
    from .. import native

    module = native.loaded()
    if module is None or not hasattr(module, "configure_reduce"):
        return None
    arrays.configure_native(module)
    module.configure_reduce(_plans, _workspace._buffers, globals(), KNOB_NAMES, PARTIALS_OFFSET)
    return module.reduce_direct


def launch(x, *, op, blocks=None, out=None):
    """One launch: the op over x into `out` (a new one-element array if None), which it returns; on the running
    call's stream and context."""
    if out is None:
        out = arrays.empty((1,), x.dtype)
    local = streams._local
    launch_into(int(out.gpudata), int(x.gpudata), x.size, x.dtype, op, local.stream,
                local.context or streams.current_context(), blocks)
    return out


def driver(x, *, op):
    return scalar_result(launch(x, op=op))


# ---------------------------------------------------------------------------------------------------------------
# Model: the kernel's index arithmetic, every thread at once.

def _pass(x, op, blocks, block, unroll, head, record, label):
    """One launch of reduce_fast over x with `blocks` blocks: returns the per-block results (and Steps)."""
    dtype, n, combine = x.dtype, x.size, ufunc(op)
    e = identity(op, dtype)
    vec = vector_width(dtype)
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


def model(x, *, op="add", return_steps=False, blocks=None, head=0, block=None, unroll=None):
    """NumPy step-model of the fast reduction: any length >= 1.

    blocks: the grid (default: what the driver would choose on a device running NOMINAL_MAX_BLOCKS blocks at
    once); head: elements before the array's first 16-byte boundary (0 for an aligned array; head_of(address)).
    With blocks > 1 a second pass reduces the per-block results in one block, as the driver does."""
    x = check_model_input(x, op, "fast model: x")
    block = block or FAST_BLOCK
    if blocks is None:
        blocks = grid_for(x.size, x.dtype, NOMINAL_MAX_BLOCKS, block)
    unroll = unroll or unroll_for(x.size, x.dtype, blocks, block)
    if not 0 <= head < vector_width(x.dtype):
        raise ValueError(f"fast model: head must be 0 .. {vector_width(x.dtype) - 1}, got {head}")
    head = min(head, x.size)
    partials, steps = _pass(x, op, blocks, block, unroll, head, return_steps, "pass 1: " if blocks > 1 else "")
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


REDUCTIONS.register(
    "fast", driver, kernels=(KERNEL,), source="beyond the book (PMPP §10.8 taken further)",
    summary="one launch: grid-stride over a device-sized grid, 16-byte loads, independent accumulators, warp "
            "shuffles, the last block reduces the per-block results",
    model=model, fast=True, launch=launch, direct=launch_into, native_direct=native_direct, error_depth=error_depth,
    builds=kernel_builds)
