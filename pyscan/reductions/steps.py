"""Reduction trees step by step (PMPP ch. 10): the NumPy step-models as pictures, and the kernels' own steps read
back from their TRACE builds and checked against the models.

    TRACED                                  the kernels with a TRACE build: simple, convergent, shared_memory,
                                            coarsened (PMPP §10.3, §10.4, §10.6, §10.8)
    picture_steps(name, x, op)              the model's steps of one block, with x in global memory as a first row,
                                            and the thread that did each combine (for draw_steps' notes)
    trace(name, x, op)                      the same steps' values from the GPU (the TRACE=1 build, one block;
                                            trace_geometry and trace_rows: its launch and buffer's layout)
    checked_gpu_steps(name, x, op)          trace() held to the model step for step (AssertionError otherwise)
    active_threads(name, n)                 per tree step, the threads that combine (the kernel's index arithmetic)

Thread layout (who adds which pair at each stride):

    simple         thread t owns element 2t; at stride s (1, 2, ..., blockDim) the threads with t % s == 0 add
                   element 2t + s into 2t: the active threads spread out, so warps stay partly busy (§10.4)
    convergent     thread t owns element t; at stride s (blockDim, ..., 1) the threads t < s add t + s into t
    shared_memory  as convergent, after a first combine x[t] + x[t + blockDim] from global memory, in shared memory
    coarsened      each thread first combines 2 * COARSE_FACTOR elements t, t + blockDim, ... on its own, then the
                   shared-memory tree

The models' index arithmetic lives in pyscan.reductions.book; this module only arranges and checks it.
"""

from __future__ import annotations

import numpy as np

from ..scans.steps import Step
from . import book
from ._common import MAX_BLOCK, block_for, log2

TRACED = ("simple", "convergent", "shared_memory", "coarsened")
TITLES = {
    "simple": "simple (PMPP §10.3, Fig. 10.6): thread t owns 2t, stride doubling",
    "convergent": "convergent (PMPP §10.4, Fig. 10.9): thread t owns t, stride halving",
    "shared_memory": "shared_memory (PMPP §10.6, Fig. 10.11): first combine from global memory, tree in shared memory",
    "coarsened": f"coarsened (PMPP §10.8, Fig. 10.15): {2 * book.COARSE_FACTOR} elements per thread, then the tree",
}


def _check(name, n):
    if name not in TRACED:
        raise ValueError(f"unknown traced reduction {name!r}: expected one of {', '.join(map(repr, TRACED))}")
    per_thread = book.KERNELS[name][2]
    if not 1 <= n <= per_thread * MAX_BLOCK:
        raise ValueError(f"{name}: steps are drawn and traced for one block, 1 .. {per_thread * MAX_BLOCK} elements; "
                         f"got {n}")
    return per_thread, block_for(n, per_thread)


def _model(name):
    from . import REDUCTIONS

    return REDUCTIONS.get(name).model


def model_steps(name, x, *, op="add"):
    """The model's steps of one block (the one launch level; 'level 0: ' dropped from the labels)."""
    x = np.asarray(x)
    _check(name, x.size)
    _, steps = _model(name)(x, op=op, return_steps=True)
    for step in steps:
        step.label = step.label.replace("level 0: ", "")
    return steps


def thread_of(name, n, label, dst) -> int | None:
    """The thread (of the one block) that performed the combine into `dst` of the step `label`."""
    _, block = _check(name, n)
    if label.startswith("stride"):
        return int(dst) // 2 if name == "simple" else int(dst) % block
    if label.startswith(("first combine", f"{book.KERNELS[name][2]} elements")):
        return int(dst)
    return None


def picture_steps(name, x, *, op="add", values=None):
    """(steps, notes) to draw: x in global memory, then the model's steps (or `values`, one array per model step,
    e.g. a GPU trace) with the model's labels and edges; notes: per step {index: "t<thread>"} for the combines."""
    x = np.asarray(x)
    steps = model_steps(name, x, op=op)
    if values is not None:
        steps = [Step(s.label, np.asarray(v), s.edges) for s, v in zip(steps, values)]
    first = "x in global memory" + (" (overwritten in place)" if name in book.IN_PLACE else "")
    steps = [Step(first, x.copy(), [])] + steps
    notes = [None]
    for step in steps[1:]:
        marks = {}
        for _, dst in step.edges:
            t = thread_of(name, x.size, step.label, dst)
            if t is not None:
                marks[int(dst)] = f"t{t}"
        notes.append(marks or None)
    return steps, notes


def active_threads(name, n) -> tuple[list, list, int]:
    """(labels, active thread ids per step, threads in the block) of one block on n elements: who combines at
    each step, from the kernel's index arithmetic (the first step of shared_memory / coarsened: every thread,
    combining per_thread - 1 times: see combines_per_thread)."""
    per_thread, block = _check(name, n)
    if name in book.IN_PLACE:
        _, _, threads = book._in_place_level(np.ones(n, np.int32), "add", block, name, False)
        strides = book._strides(name, block)
        return [f"stride {s}" for s in strides], [np.asarray(t) for t in threads], block
    first = "first combine" if per_thread == 2 else f"{per_thread} elements per thread"
    labels, active = [first], [np.arange(block)]
    stride = block // 2
    while stride >= 1:
        labels.append(f"stride {stride}")
        active.append(np.arange(stride))
        stride //= 2
    return labels, active, block


def combines_per_thread(name, labels) -> list:
    """Operator applications an active thread performs in each step of active_threads(): 2 * COARSE_FACTOR - 1 in
    coarsened's serial first step, 1 elsewhere."""
    per_thread = book.KERNELS[name][2]
    return [per_thread - 1 if label.endswith("elements per thread") else 1 for label in labels]


def trace_geometry(name, n) -> tuple:
    """(threads, steps, row) of the one block trace() launches for n elements: its TRACE buffer holds `steps` rows of
    `row` values -- the n elements after each stride (simple, convergent: in place), or the block's shared array
    after the first combine and after each stride (shared_memory, coarsened)."""
    _, block = _check(name, n)
    return block, log2(block) + 1, n if name in book.IN_PLACE else block


def trace_rows(name, rows, result) -> list:
    """trace()'s steps, laid out as model_steps lays them out, from what its launch wrote: the TRACE buffer's rows
    (trace_geometry) and the result (partials[0], or the output of coarsened's atomic, as a 1-element array)."""
    rows = list(rows)
    if name in book.ATOMIC:  # "block results" (shared element 0 after the tree), then the atomic into the output
        return rows + [rows[-1][:1].copy(), result]
    return rows + [result]


# ---------------------------------------------------------------------------------------------------------------
# On the GPU.

def trace(name, x, *, op="add", file=None) -> list:
    """The kernel's own steps for one block on x (n <= 2 * COARSE_FACTOR ... * 1024), read back from its TRACE=1
    build: one array per model step (model_steps), laid out as the model lays them out.  `file`: another .cu
    file with the same function and contract (a student's exercise)."""
    from ..runtime.arrays import Call
    from ..runtime.loader import get_kernel

    x = np.ascontiguousarray(x)
    n = x.size
    block, steps, row = trace_geometry(name, n)
    path, macros = book.kernel_builds(name, x.dtype, op)[0]
    path = file or path
    function = book.KERNELS[name][1]
    call = Call.tool()
    dev = call.to_device(x)
    fn = get_kernel(path, function, arg_types="PPqP", TRACE=1, **macros)
    out = call.empty((1,), x.dtype)  # partials[0] (in place, shared_memory), or the atomic's output (coarsened)
    if name in book.ATOMIC:
        get_kernel(path, "fill_identity", TRACE=1, **macros).prepared_call((1, 1, 1), (1, 1, 1), out.gpudata)
    buf = call.empty((steps * row,), x.dtype)
    if name in book.IN_PLACE:  # strides 1 .. blockDim (or blockDim .. 1), x overwritten in place
        fn.prepared_call((1, 1, 1), (block, 1, 1), out.gpudata, dev.gpudata, np.int64(n), buf.gpudata)
    else:  # the first combine, then strides blockDim/2 .. 1
        fn.prepared_call((1, 1, 1), (block, 1, 1), out.gpudata, dev.gpudata, np.int64(n), buf.gpudata,
                         shared_size=block * x.dtype.itemsize)
    return trace_rows(name, buf.get().reshape(steps, row), out.get())


def checked_gpu_steps(name, x, *, op="add") -> list:
    """The model's steps with the GPU trace's values; AssertionError at the first step that differs (integers
    exactly; floats to 4 ulps relative to the step's largest magnitude)."""
    model = model_steps(name, x, op=op)
    values = trace(name, x, op=op)
    if len(values) != len(model):
        raise AssertionError(f"{name}: the GPU trace has {len(values)} steps, the model {len(model)}")
    for k, (got, step) in enumerate(zip(values, model)):
        want = np.asarray(step.values)
        got = np.asarray(got)
        if got.shape != want.shape:
            raise AssertionError(f"{name}: step {k} ({step.label!r}) has shape {got.shape}, the model {want.shape}")
        if np.asarray(x).dtype.kind in "iu":
            same = got == want
        else:
            scale = max(float(np.max(np.abs(want))), 1.0)
            same = np.abs(got - want) <= 4 * np.finfo(want.dtype).eps * scale
        if not np.all(same):
            bad = np.flatnonzero(~same)[:8]
            raise AssertionError(f"{name}: step {k} ({step.label!r}) differs from the model at {bad.tolist()}: "
                                 f"GPU {got[bad].tolist()}, model {want[bad].tolist()}")
    return values
