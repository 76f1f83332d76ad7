"""The reduction kernels of PMPP ch. 10 (§10.3 - §10.8): drivers, NumPy step-models, work counts, error depths.

The models do the kernels' index arithmetic with NumPy, step by step (one NumPy operation per barrier-separated
step, over every block at once), so a float model result equals the GPU's bit for bit where the GPU's order is
fixed (simple, convergent, shared_memory); segmented and coarsened add the blocks' results in block order where
the GPU adds them in arrival order.

Steps (return_steps=True): `values` is the array the step wrote (the in-place work array for simple/convergent,
the blocks' shared arrays side by side -- block b's thread t at b*blockDim + t -- for the others, then the
per-block results and the final value); `edges` are (source, destination) pairs: values[dst] = op(old[dst],
old[src]) within one array, or, in a step that moves data to a new array (the first load, the per-block
results, the atomics), source indices into the previous step's values.
"""

from __future__ import annotations

import functools

import numpy as np

from ..runtime.arrays import Call
from ..runtime.loader import get_kernel
from ..scans.steps import Step, WorkCount
from ..types import COMPUTE_TYPES, defines, identity, mapped_types, result_dtype, ufunc
from ._common import block_for, ceil_div, check_count_n, check_model_input, fold_in_order, log2, scalar_result, warps_of
from .registry import REDUCTIONS

COARSE_FACTOR = 4  # elements per thread of coarsened.cu = 2 * COARSE_FACTOR (the book's COARSE_FACTOR)

KERNELS = {  # name: (file under kernels/, __global__ function, elements per thread before the tree)
    "simple": ("reduction/simple.cu", "reduce_simple", 2),
    "convergent": ("reduction/convergent.cu", "reduce_convergent", 2),
    "shared_memory": ("reduction/shared_memory.cu", "reduce_shared_memory", 2),
    "segmented": ("reduction/segmented.cu", "reduce_segmented", 2),
    "coarsened": ("reduction/coarsened.cu", "reduce_coarsened", 2 * COARSE_FACTOR),
}
IN_PLACE = ("simple", "convergent")  # kernels that reduce in global memory, overwriting their input
ATOMIC = ("segmented", "coarsened")  # kernels that finish with one atomic per block


# ---------------------------------------------------------------------------------------------------------------
# Models.

def _strides(name, block):
    """The strides of the steps of one block: 1, 2, ..., blockDim (simple); blockDim, ..., 1 (convergent)."""
    up = [1 << k for k in range(log2(block) + 1)]
    return up if name == "simple" else up[::-1]


def _in_place_level(work, op, block, name, record):
    """One launch of simple.cu / convergent.cu over `work` (modified in place): every block at once, step by step.

    Returns the per-block results, the Steps (if record) and, per step, the active threads (global ids)."""
    n, seg = work.size, 2 * block
    p = np.arange(n)
    local = p % seg
    seg_len = np.minimum(seg, n - (p - local))
    combine = ufunc(op)
    steps, threads = [], []
    for stride in _strides(name, block):
        if name == "simple":  # thread t owns local element 2t; active if t % stride == 0
            t = local // 2
            active = (local % 2 == 0) & (t % stride == 0) & (local + stride < seg_len)
        else:  # thread t owns local element t (< blockDim); active if t < stride
            t = local
            active = (t < stride) & (local + stride < seg_len)
        dst = p[active]
        src = dst + stride
        work[dst] = combine(work[dst], work[src])
        threads.append((dst // seg) * block + t[active])
        if record:
            steps.append(Step(f"stride {stride}", work.copy(), list(zip(src.tolist(), dst.tolist()))))
    starts = np.arange(0, n, seg)
    partials = work[starts].copy()
    if record:
        steps.append(Step("block results", partials.copy(), [(int(s), b) for b, s in enumerate(starts)]))
    return partials, steps, threads


def _shared_level(x, op, block, per_thread, record, atomic_label=None):
    """One launch of shared_memory.cu / segmented.cu / coarsened.cu: each thread first combines its
    `per_thread` elements t, t + blockDim, t + 2*blockDim, ... (in that order), then the shared-memory tree."""
    n, dtype, combine = x.size, x.dtype, ufunc(op)
    seg = per_thread * block
    blocks = ceil_div(n, seg)
    padded = np.full(blocks * seg, identity(op, dtype), dtype)
    padded[:n] = x
    tiles = padded.reshape(blocks, per_thread, block)  # tiles[b, k, t] = x[b*seg + k*blockDim + t]
    smem = tiles[:, 0, :].copy()
    for k in range(1, per_thread):
        smem = combine(smem, tiles[:, k, :])
    steps = []
    if record:
        b, k, t = np.meshgrid(np.arange(blocks), np.arange(per_thread), np.arange(block), indexing="ij")
        src = (b * seg + k * block + t).ravel()
        dst = (b * block + t).ravel()
        keep = src < n
        label = "first combine from global memory" if per_thread == 2 else f"{per_thread} elements per thread"
        steps.append(Step(label, smem.ravel().copy(), list(zip(src[keep].tolist(), dst[keep].tolist()))))
    stride = block // 2
    while stride >= 1:
        smem[:, :stride] = combine(smem[:, :stride], smem[:, stride:2 * stride])
        if record:
            dst = (np.arange(blocks)[:, None] * block + np.arange(stride)[None, :]).ravel()
            steps.append(Step(f"stride {stride}", smem.ravel().copy(), list(zip((dst + stride).tolist(), dst.tolist()))))
        stride //= 2
    partials = smem[:, 0].copy()
    if record:
        steps.append(Step("block results", partials.copy(), [(b * block, b) for b in range(blocks)]))
    return partials, steps


def _tree_model(name):
    _, _, per_thread = KERNELS[name]

    def model(x, *, op="add", return_steps=False):
        work = check_model_input(x, op, f"{name} model: x")
        steps = []
        level = 0
        while True:  # one launch per level, as the driver does, until one value is left
            block = block_for(work.size, per_thread)
            if name in IN_PLACE:
                partials, level_steps, _ = _in_place_level(work, op, block, name, return_steps)
            else:
                partials, level_steps = _shared_level(work, op, block, per_thread, return_steps)
            for s in level_steps:
                s.label = f"level {level}: {s.label}"
            steps += level_steps
            if partials.size == 1:
                result = partials[0]
                return (result, steps) if return_steps else result
            work, level = partials, level + 1

    model.__name__ = f"{name}_model"
    model.__doc__ = (f"NumPy step-model of the {name} reduction: the kernel's index arithmetic, every block at once, "
                     "relaunched on the per-block results until one is left (as the driver does); any length >= 1.")
    return model


def _atomic_model(name):
    _, _, per_thread = KERNELS[name]

    def model(x, *, op="add", return_steps=False):
        x = check_model_input(x, op, f"{name} model: x")
        block = block_for(x.size, per_thread)
        partials, steps = _shared_level(x, op, block, per_thread, return_steps)
        result = fold_in_order(partials, op)  # the atomics, in block order
        if return_steps:
            steps.append(Step("atomics into the result", np.array([result]), [(b, 0) for b in range(partials.size)]))
            return result, steps
        return result

    model.__name__ = f"{name}_model"
    model.__doc__ = (f"NumPy step-model of the {name} reduction: one launch, the blocks' shared-memory trees, then "
                     "the blocks' atomics in block order (the GPU's order varies); any length >= 1.")
    return model


def _make_model_count(name):
    def model_count_work(n) -> WorkCount:
        n = check_count_n(name, n)
        block = n // 2
        _, _, threads = _in_place_level(np.ones(n, np.int32), "add", block, name, False)
        return WorkCount(int(sum(t.size for t in threads)), [warps_of(t, block) for t in threads])

    model_count_work.__doc__ = f"Operator applications and active warps per step of {name}.cu on one block of n/2 threads."
    return model_count_work


# ---------------------------------------------------------------------------------------------------------------
# Error depths (see the package docstring): an upper bound on the additions any input passes through.

def _tree_error_depth(name):
    per_thread = KERNELS[name][2]

    def error_depth(n: int) -> int:
        depth = 0
        while True:
            block = block_for(n, per_thread)
            depth += log2(2 * block)  # the first combine (or stride-1 step) and log2(blockDim) tree steps
            n = ceil_div(n, 2 * block)
            if n == 1:
                return depth

    return error_depth


def _atomic_error_depth(name):
    per_thread = KERNELS[name][2]

    def error_depth(n: int) -> int:
        block = block_for(n, per_thread)
        blocks = ceil_div(n, per_thread * block)
        # a thread's serial run (per_thread - 1 additions), the tree (log2 blockDim), then the atomics: the block
        # results are added to the output one after the other, so the first one passes through up to `blocks`.
        return (per_thread - 1) + log2(block) + blocks

    return error_depth


# ---------------------------------------------------------------------------------------------------------------
# GPU drivers.

CONVERT = "reduction/convert.cu"  # out[i] = op_store(op_load(in[i])): the typed copies (kernels/reduction/convert.cu)


def kernel_builds(name, dtype, op, result=None, map=None) -> list:
    """(kernel file, #defines) of every build the driver of `name` uses for x of dtype, op and a result dtype
    (default: dtype), with a map (pyscan.reduce's map=) applied in the loads where given."""
    macros = defines(dtype, op, result, map=map)
    if name == "coarsened":
        macros["COARSE_FACTOR"] = COARSE_FACTOR
    return [(KERNELS[name][0], macros)]


def driver_builds(name, dtype, op) -> list:
    """(kernel file, #defines) of every build the driver of `name` compiles for x of dtype and op into NumPy's result
    dtype (prewarm): the launches' kernels (from x, and on the compute type's partials) and convert.cu's copies."""
    dtype = np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
    value = result_dtype(dtype, op)
    compute = COMPUTE_TYPES[value]
    found = kernel_builds(name, compute, op)  # the levels on partials (simple, convergent: every level)
    if name not in IN_PLACE:
        found = kernel_builds(name, dtype, op, value) + (found if name not in ATOMIC else [])
    elif dtype != compute or value != compute:
        found.append((CONVERT, defines(dtype, op, value, out=compute)))  # the scratch copy of x, as T
    if value != compute:
        found.append((CONVERT, defines(compute, op, value, out=value)))  # the result, rounded once
    unique = {tuple(sorted(macros.items())) + (path,): (path, macros) for path, macros in found}
    return list(unique.values())


def _kernel(name, dtype, op, function=None, file=None, result=None, map=None, **extra):
    """The prepared kernel of `name` (its function read from `file` if given: a student's exercise with the same
    contract, pyscan_tools.exercises)."""
    path, macros = kernel_builds(name, dtype, op, result, map)[0]
    if name in IN_PLACE:  # the COUNT_WORK parameter hides the signature from the loader: give the types
        extra["arg_types"] = "PPqP" if extra.get("COUNT_WORK") else "PPq"
    return get_kernel(file or path, function or KERNELS[name][1], **macros, **extra)


def _tree_launch(name):
    per_thread = KERNELS[name][2]

    def launch(x, *, op, call, out=None, file=None, dtype=None, map=None):
        """The levels in the compute type T (the first one reading x through op_load_at, which applies a map; simple
        and convergent a scratch copy of x, converted to T -- and mapped -- where x's dtype is not T or a map is
        given); a result dtype other than T is stored from a one-element T array by convert.cu."""
        n = x.size
        value = _value_dtype(x.dtype, op, dtype, map)
        compute = COMPUTE_TYPES[value]
        # every level past the first (and the first of simple/convergent, which reads its T scratch copy) is T -> T
        later = _kernel(name, compute, op, device=call.device, file=file)
        if name in IN_PLACE:  # the kernel overwrites what it reduces: give it a scratch copy of x
            src = call.empty((n,), compute)
            if x.dtype == compute and value == compute and map is None:
                call.copy(src, x, n * compute.itemsize)
            else:
                _convert(call, src, x, n, x.dtype, op, value, compute, map)
            fn = later
        else:
            src = x
            fn = _kernel(name, x.dtype, op, device=call.device, file=file, result=value, map=map)
        while True:
            block = block_for(n, per_thread)
            blocks = ceil_div(n, per_thread * block)
            final = blocks == 1 and out is not None and value == compute
            dst = out if final else call.empty((blocks,), compute)
            shared = 0 if name in IN_PLACE else block * compute.itemsize
            fn.prepared_async_call((blocks, 1, 1), (block, 1, 1), call.stream, dst.gpudata, src.gpudata, np.int64(n),
                                   shared_size=shared)
            if blocks == 1:
                return dst if value == compute else _store_result(call, dst, op, value, out)
            src, n, fn = dst, blocks, later

    return launch


def atomic_geometry(name, n) -> tuple:
    """(blocks, threads a block) of the one launch of segmented / coarsened over n elements: blocks of
    block_for(n, per_thread) threads, each thread starting with per_thread elements."""
    per_thread = KERNELS[name][2]
    block = block_for(n, per_thread)
    return ceil_div(n, per_thread * block), block


def _atomic_launch(name):
    def launch(x, *, op, call, out=None, file=None, dtype=None, map=None):
        """The atomics combine into a one-element T array (the result itself where the result dtype is T, else a
        scratch element stored as the result by convert.cu).  A custom operator's atomics are the atomicCAS loop
        (reduce_atomics.cuh)."""
        n = x.size
        value = _value_dtype(x.dtype, op, dtype, map)
        compute = COMPUTE_TYPES[value]
        fn = _kernel(name, x.dtype, op, device=call.device, file=file, result=value, map=map)
        init = _kernel(name, x.dtype, op, function="fill_identity", device=call.device, file=file, result=value,
                       map=map)
        target = (out if out is not None else call.empty((1,), value)) if value == compute else call.empty((1,), compute)
        init.prepared_async_call((1, 1, 1), (1, 1, 1), call.stream, target.gpudata)
        blocks, block = atomic_geometry(name, n)
        fn.prepared_async_call((blocks, 1, 1), (block, 1, 1), call.stream, target.gpudata, x.gpudata, np.int64(n),
                               shared_size=block * compute.itemsize)
        return target if value == compute else _store_result(call, target, op, value, out)

    return launch


def _value_dtype(dtype, op, requested, map):
    """The result dtype: NumPy's rule (result_dtype), or with a map the mapped values' (mapped_types)."""
    return result_dtype(dtype, op, requested) if map is None else mapped_types(dtype, op, map, requested).value


def _convert(call, dst, src, n, dtype, op, value, stored, map=None):
    """dst[i] = src[i] converted as the kernels load and store: src of dtype, through the value dtype, to `stored`;
    with a map, the map of src[i] (op_load_at)."""
    fn = get_kernel(CONVERT, "convert_elements", device=call.device, **defines(dtype, op, value, out=stored, map=map))
    block = 256
    fn.prepared_async_call((max(1, min(ceil_div(n, block), 4096)), 1, 1), (block, 1, 1), call.stream, dst.gpudata,
                           src.gpudata, np.int64(n))


def _store_result(call, value_t, op, value, out=None):
    """A one-element compute-type result stored as the value dtype (into out if given): rounded once."""
    if out is None:
        out = call.empty((1,), value)
    _convert(call, out, value_t, 1, value_t.dtype, op, value, value)
    return out


def _driver(launch, name):
    def driver(x, *, op, call):
        return scalar_result(launch(x, op=op, call=call), call)

    driver.__name__ = f"{name}_driver"
    return driver


def _make_count(name):
    def count_work(n) -> WorkCount:

        n = check_count_n(name, n)
        block, steps = n // 2, log2(n)
        fn = _kernel(name, np.dtype(np.int32), "add", COUNT_WORK=1)
        call = Call.tool()
        work = call.to_device(np.ones(n, np.int32))
        partial = call.empty((1,), np.int32)
        counters = call.empty((1 + steps,), np.uint64)
        call.memset32(counters, 0, 2 * (1 + steps))
        fn.prepared_call((1, 1, 1), (block, 1, 1), partial.gpudata, work.gpudata, np.int64(n), counters.gpudata)
        c = counters.get()
        if int(partial.get()[0]) != n:
            raise RuntimeError(f"{name} COUNT_WORK build summed {n} ones to {int(partial.get()[0])}")
        return WorkCount(int(c[0]), [int(v) for v in c[1:]])

    count_work.__doc__ = (f"Operator applications and active warps per step counted by the COUNT_WORK=1 build of "
                          f"{name}.cu on the GPU (one block of n/2 threads, n a power of two 2 .. 2048).")
    return count_work


_SOURCES = {
    "simple": ("PMPP §10.3", "one block per 2*blockDim elements, stride doubling in global memory (divergent)"),
    "convergent": ("PMPP §10.4", "stride halving in global memory: active threads stay contiguous"),
    "shared_memory": ("PMPP §10.6", "first combine from global memory, the tree in shared memory"),
    "segmented": ("PMPP §10.7", "many blocks, a shared-memory tree each, one atomic per block"),
    "coarsened": ("PMPP §10.8", f"{2 * COARSE_FACTOR} elements per thread, then the tree, one atomic per block"),
}

for _name, (_file, _function, _per_thread) in KERNELS.items():
    _launch = _atomic_launch(_name) if _name in ATOMIC else _tree_launch(_name)
    _options = {"launch": _launch, "per_thread": _per_thread, "builds": functools.partial(driver_builds, _name),
                "error_depth": (_atomic_error_depth if _name in ATOMIC else _tree_error_depth)(_name)}
    if _name in IN_PLACE:
        _options.update(count_work=_make_count(_name), model_count_work=_make_model_count(_name))
    REDUCTIONS.register(
        _name, _driver(_launch, _name), kernels=(_file,), source=_SOURCES[_name][0], summary=_SOURCES[_name][1],
        model=(_atomic_model if _name in ATOMIC else _tree_model)(_name), fast=False, **_options)
