"""Blelloch's work-efficient scan (Blelloch 1990), twice:

* `blelloch`: Hands-On GPU Programming with Python and CUDA, ch. 4, "work-efficient parallel prefix": an up-sweep
  and a down-sweep over the whole array, one kernel launch per tree level (kernels/scan/blelloch_sweeps.cu).
  The host is the grid-wide barrier: launches on one stream run one after the other.  The array is padded to
  N = the next power of two >= n with the operator's identity, so every length works.
* `blelloch_block`: the Blelloch lab report's kernel: the same sweeps on one section in shared memory
  (kernels/scan/blelloch_block.cu), extended to any length by PMPP §11.6's hierarchical scheme (hierarchical.py).

Both are exclusive by nature (the down-sweep starts from the identity at the root); the inclusive scan is
inclusive[i] = exclusive[i] (+) x[i], done in the store (one more combine per element).

Steps (models and GPU traces; one array of N = S values per step, identity padding included):

    0          load            the input padded with the identity
    1 .. L     up-sweep s      s = 1, 2, ..., N/2: work[r] = work[r - s] (+) work[r] for r = 2s-1, 4s-1, ...
    L + 1      clear last      work[N-1] = identity
    L+2..2L+1  down-sweep s    s = N/2, ..., 1: work[l], work[r] = work[r], work[r] (+) work[l]  (l = r - s)
    2L + 2     store           the result (exclusive: unchanged; inclusive: exclusive[i] (+) x[i]); past n:
                               blelloch (whose store writes out[:n]) the identity, blelloch_block what its
                               store computes there (the scan of the identity padding)

with L = log2 N.  Edges are the combines (src, dst) with values[dst] = old[src] (+) old[dst]: (r - s, r) in
both sweeps.  The down-sweep's move of work[r] into work[l] is not a combine and has no edge; neither has the
inclusive store (its second operand x[i] is not in the array): the edges of an exclusive scan add up to Blelloch's
2(N - 1) additions (N - 1 in each sweep).

Counted work (COUNT_WORK builds): every op_combine the kernels perform, combines with identity padding
included: up-sweep N - 1, down-sweep N - 1, and n more for an inclusive store.  count_work(n) runs the exclusive
scan of one array of n = N elements (a power of two), so it returns 2(N - 1) additions, and active_warps[s] =
the warps with at least one thread that combined at step s + 1 of the list above (thread k of a sweep level
owns the pair ending at r = (k + 1) * 2s - 1; the clear step and the exclusive store count 0 warps).
"""

from __future__ import annotations

import numpy as np

from ..runtime import arrays, driver
from ..runtime.arrays import Call
from ..runtime.loader import get_kernel
from ..types import COMPUTE_TYPES, ELEMENT_TYPES, check_model_input, check_op, identity, ufunc
from ..types import defines as type_defines
from . import hierarchical  # PMPP §11.6's scheme, which blelloch_block's sections extend to any length
from .registry import SCANS
from .steps import Step, WorkCount, check_count_n, pow2_at_least

SWEEPS = "scan/blelloch_sweeps.cu"
BLOCK_FILE = "scan/blelloch_block.cu"
BLOCK_FUNCTION = "blelloch_block_scan"
BLOCK_SECTION = 2048  # production section of blelloch_block: 1024 threads x 2 elements
THREADS = 256  # threads per block of the level-by-level kernels
LEVEL_STEP_LIMIT = 1 << 16  # return_steps / trace of `blelloch`: at most this many elements (2 log2 N + 3 arrays)

hierarchical.register_section_scan(
    "blelloch_block", hierarchical.SectionScan(BLOCK_FILE, BLOCK_FUNCTION, BLOCK_SECTION, BLOCK_SECTION // 2))


def _log2(n: int) -> int:
    return n.bit_length() - 1


def step_count(N: int) -> int:
    """Steps of one scan of N = 2^L padded elements, load and store included: 2L + 3."""
    return 2 * _log2(N) + 3


# ---------------------------------------------------------------------------------------------------------------
# NumPy: the sweeps on a (k, N) array, every row at once.




def sweeps(A, op, exclusive, record=None):
    """Blelloch's sweeps on the rows of A (k, N), N a power of two: returns the scanned rows (a new array) and the
    row totals (the roots after the up-sweep, as the section kernel saves them).  With `record` (a list) appends,
    per step after the load, (label, row 0 after the step, edges, the thread of each edge)."""
    f, e = ufunc(op), identity(op, A.dtype)
    X = A
    A = A.copy()
    N = A.shape[1]

    def note(label, src, dst, threads):
        if record is not None:
            record.append((label, A[0].copy(), list(zip(np.asarray(src).tolist(), np.asarray(dst).tolist())),
                           np.asarray(threads)))

    s = 1
    while s < N:  # up-sweep: r = (k+1)*2s - 1, k < N/(2s); reads r-s and r, writes r (pairs are disjoint)
        r = np.arange(2 * s - 1, N, 2 * s)
        A[:, r] = f(A[:, r - s], A[:, r])
        note(f"up-sweep s={s}", r - s, r, (r + 1) // (2 * s) - 1)
        s *= 2
    totals = A[:, N - 1].copy()
    A[:, N - 1] = e
    note("clear last", [], [], [])
    s = N // 2
    while s >= 1:  # down-sweep: left <- prefix (a move), right <- prefix (+) left (a combine, edge (l, r))
        r = np.arange(2 * s - 1, N, 2 * s)
        left, prefix = A[:, r - s].copy(), A[:, r].copy()
        A[:, r - s] = prefix
        A[:, r] = f(prefix, left)
        note(f"down-sweep s={s}", r - s, r, (r + 1) // (2 * s) - 1)
        s //= 2
    if not exclusive:
        A = f(A, X)
    note("store (exclusive)" if exclusive else "store: inclusive = exclusive + x", [], [], [])
    return A, totals


def _padded(x, N, op):
    row = np.full((1, N), identity(op, x.dtype), dtype=x.dtype)
    row[0, : x.size] = x
    return row


def _steps_of(x, N, op, exclusive, levels=False):
    """(result, [Step], [threads per step after the load]) of one padded array of N elements.  levels: the store
    step of `blelloch` writes only out[:n] (its values: the result padded with the identity, as its trace copies
    them); blelloch_block's store computes every position of the section (the trace build records them all)."""
    row = _padded(x, N, op)
    record = []
    result, _ = sweeps(row, op, exclusive, record)
    steps = [Step("load (padded with the identity)", row[0].copy(), [])]
    steps += [Step(label, values, edges) for label, values, edges, _ in record]
    if levels:
        steps[-1].values[x.size:] = identity(op, x.dtype)
    return result[0, : x.size].copy(), steps, [t for _, _, _, t in record]


def blelloch_model(x, *, op="add", exclusive=False, return_steps=False):
    """NumPy step-model of `blelloch` (one launch per level): any length, padded to N = the next power of two.
    With return_steps=True (n <= LEVEL_STEP_LIMIT) also the 2 log2 N + 3 Steps (module docstring)."""
    x = check_model_input(x, op)
    n = x.size
    if n == 0:
        return (x.copy(), []) if return_steps else x.copy()
    if return_steps and n > LEVEL_STEP_LIMIT:
        raise ValueError(f"blelloch: steps are recorded for at most {LEVEL_STEP_LIMIT} elements, got {n}")
    N = pow2_at_least(n)
    if return_steps:
        result, steps, _ = _steps_of(x, N, op, exclusive, levels=True)
        return result, steps
    result, _ = sweeps(_padded(x, N, op), op, exclusive)
    return result[0, :n].copy()


def blelloch_section_model(rows, *, op="add", exclusive=False):
    """The section model of blelloch_block for hierarchical_model: (k, S) padded sections -> their scans."""
    return sweeps(np.asarray(rows), op, exclusive)[0]


def blelloch_block_model(x, *, op="add", exclusive=False, return_steps=False):
    """NumPy step-model of `blelloch_block`: any length (the hierarchical scheme over sections of BLOCK_SECTION).
    With return_steps=True (n <= BLOCK_SECTION) also the Steps of one section of S = the next power of two >=
    max(n, 2) elements (module docstring), which is what the trace build runs."""
    x = check_model_input(x, op)
    n = x.size
    if return_steps:
        if n == 0:
            return x.copy(), []
        if n > BLOCK_SECTION:
            raise ValueError(f"blelloch_block: steps are recorded for one section of at most {BLOCK_SECTION} "
                             f"elements, got {n}")
        result, steps, _ = _steps_of(x, pow2_at_least(n, 2), op, exclusive)
        return result, steps
    return hierarchical.hierarchical_model(x, blelloch_section_model, BLOCK_SECTION, op=op, exclusive=exclusive)


def _model_count(name, n, limit, minimum):
    n = check_count_n(name, n, limit)
    _, steps, threads = _steps_of(np.ones(n, np.int32), pow2_at_least(n, minimum), "add", True)
    additions = sum(len(s.edges) for s in steps)
    return WorkCount(additions, [int(np.unique(np.asarray(t, dtype=np.int64) // 32).size) for t in threads])


def blelloch_model_count_work(n) -> WorkCount:
    """The counts of count_work(n) read off the model (exclusive scan of n = 2^k elements)."""
    return _model_count("blelloch", n, LEVEL_STEP_LIMIT, 1)


def blelloch_block_model_count_work(n) -> WorkCount:
    return _model_count("blelloch_block", n, BLOCK_SECTION, 2)


# ---------------------------------------------------------------------------------------------------------------
# Float error bounds (see single_section.py for the argument: an input passing h roundings on its way to an output
# contributes at most h*eps*|x_j|).  In the sweeps an input reaches an output through at most log2 N combines up
# the tree and log2 N down it (each level's combine is one rounding on the path), plus 1 for the inclusive store.


def blelloch_error_depth(n: int) -> int:
    return 2 * _log2(pow2_at_least(n)) + 1


BLOCK_SECTION_DEPTH = 2 * _log2(BLOCK_SECTION) + 1  # also bounds the section total (log2 S up-sweep roundings)


def blelloch_block_error_depth(n: int) -> int:
    return hierarchical.hierarchical_error_depth(int(n), BLOCK_SECTION, BLOCK_SECTION_DEPTH)


# ---------------------------------------------------------------------------------------------------------------
# GPU.

_SWEEP_ARGS = {"blelloch_up_sweep": "Pqq", "blelloch_down_sweep": "Pqq", "blelloch_store": "PPPqi"}


def sweep_defines(dtype, op, count=False, result=None) -> dict:
    """The #defines of blelloch_sweeps.cu for x of dtype and a result of `result` (default: dtype): one module holds
    all five kernels (the work array is the compute type)."""
    return {**type_defines(dtype, op, result), "COUNT_WORK": int(count)}


def _sweep_kernel(function, dtype, op, count=False, device=None, result=None):
    macros = sweep_defines(dtype, op, count, result)
    if function in _SWEEP_ARGS:  # the COUNT_WORK parameters are a macro: give prepare() the types by hand
        macros["arg_types"] = _SWEEP_ARGS[function] + ("Pi" if count else "")
    return get_kernel(SWEEPS, function, device=device, **macros)


def _grid(threads: int):
    block = min(THREADS, 32 * -(-threads // 32))
    return (-(-threads // block), 1, 1), (block, 1, 1)


def _run_levels(x, out, *, op, exclusive, call, trace=None, counters=None) -> int:
    """The level-by-level scan of device array x into out, on the call's stream.  trace: a device array of
    step_count(N) * N elements that gets the working array after every launch (and the padded result last);
    counters: COUNT_WORK builds."""
    n = int(x.size)
    N = pow2_at_least(n)
    dtype, result = x.dtype, out.dtype
    count = counters is not None
    extra = (counters.gpudata,) if count else ()
    work = call.empty((N,), COMPUTE_TYPES[result])  # the compute type, whatever x's and the result's
    stream, device = call.stream, call.device
    itemsize = work.dtype.itemsize
    step = 0

    def snapshot(src=None, length=N):
        if trace is not None:
            dst = int(trace.gpudata) + step * N * itemsize
            driver.copy_dtod(dst, int((work if src is None else src).gpudata), length * itemsize, stream)

    def combine_args(trace_step):
        return extra + ((np.int32(trace_step),) if count else ())

    launches = 1
    _sweep_kernel("blelloch_load", dtype, op, device=device, result=result).prepared_async_call(
        *_grid(N), stream, work.gpudata, x.gpudata, np.int64(n), np.int64(N))
    snapshot()
    up = _sweep_kernel("blelloch_up_sweep", dtype, op, count, device, result)
    s = 1
    while s < N:
        step += 1
        up.prepared_async_call(*_grid(N // (2 * s)), stream, work.gpudata, np.int64(N), np.int64(s), *combine_args(step))
        snapshot()
        launches += 1
        s *= 2
    step += 1
    _sweep_kernel("blelloch_clear_last", dtype, op, device=device, result=result).prepared_async_call(
        (1, 1, 1), (32, 1, 1), stream, work.gpudata, np.int64(N))
    snapshot()
    launches += 1
    down = _sweep_kernel("blelloch_down_sweep", dtype, op, count, device, result)
    s = N // 2
    while s >= 1:
        step += 1
        down.prepared_async_call(*_grid(N // (2 * s)), stream, work.gpudata, np.int64(N), np.int64(s),
                                 *combine_args(step))
        snapshot()
        launches += 1
        s //= 2
    step += 1
    _sweep_kernel("blelloch_store", dtype, op, count, device, result).prepared_async_call(
        *_grid(n), stream, out.gpudata, work.gpudata, x.gpudata, np.int64(n), np.int32(bool(exclusive)), *combine_args(step))
    snapshot(out, n)  # the row was filled with the identity beforehand: the padded result
    return launches + 1


def blelloch_driver(x, out, *, op, exclusive, call):
    return _run_levels(x, out, op=op, exclusive=exclusive, call=call)


def blelloch_trace(x, *, op="add", exclusive=False):
    """The GPU's working array after every launch of `blelloch` on x (one array per model step)."""
    x, _ = arrays.check_array(x, dtypes=ELEMENT_TYPES, what="blelloch trace: x", max_length=LEVEL_STEP_LIMIT)
    check_op(op)
    n = x.size
    if n == 0:
        return []
    N = pow2_at_least(n)
    steps = step_count(N)
    call = Call.tool()
    x_dev = call.to_device(x)
    out = call.empty((n,), x.dtype)
    buf = call.to_device(np.full(steps * N, identity(op, x.dtype), x.dtype))
    _run_levels(x_dev, out, op=op, exclusive=bool(exclusive), call=call, trace=buf)
    rows = buf.get().reshape(steps, N)
    return [rows[i].copy() for i in range(steps)]


def blelloch_count_work(n) -> WorkCount:
    """Combines and active warps really performed by the COUNT_WORK build of `blelloch` (exclusive, n = 2^k)."""
    n = check_count_n("blelloch", n, LEVEL_STEP_LIMIT)
    call = Call.tool()
    x = call.to_device(np.ones(n, np.int32))
    out = call.empty((n,), np.int32)
    counters = call.to_device(np.zeros(step_count(n), np.uint64))  # [0] additions, [step] warps of steps 1 .. 2L+2
    _run_levels(x, out, op="add", exclusive=True, call=call, counters=counters)
    c = counters.get()
    return WorkCount(int(c[0]), [int(v) for v in c[1:]])


def blelloch_block_driver(x, out, *, op, exclusive, call):
    return hierarchical.hierarchical_scan(x, out, op=op, exclusive=exclusive, call=call, block_scan="blelloch_block")


def _one_section(n, dtype, op, **debug):
    S = pow2_at_least(n, 2)
    return S, hierarchical.section_kernel("blelloch_block", dtype, op, SECTION_SIZE=S, **debug)


def blelloch_block_trace(x, *, op="add", exclusive=False):
    """The shared array of blelloch_block (TRACE build, one section of S = 2^k >= n) after every step."""
    x, _ = arrays.check_array(x, dtypes=ELEMENT_TYPES, what="blelloch_block trace: x", max_length=BLOCK_SECTION)
    check_op(op)
    n = x.size
    if n == 0:
        return []
    S, fn = _one_section(n, x.dtype, op, TRACE=1)
    steps = step_count(S)
    call = Call.tool()
    x_dev = call.to_device(x)
    out = call.empty((n,), x.dtype)
    buf = call.empty((steps * S,), x.dtype)
    fn.prepared_call((1, 1, 1), (S // 2, 1, 1), out.gpudata, x_dev.gpudata, np.uintp(0), np.int64(n),
                     np.int32(bool(exclusive)), buf.gpudata)
    rows = buf.get().reshape(steps, S)
    return [rows[i].copy() for i in range(steps)]


def blelloch_block_count_work(n) -> WorkCount:
    """Combines and active warps of the COUNT_WORK build of blelloch_block (one section, exclusive, n = 2^k)."""
    n = check_count_n("blelloch_block", n, BLOCK_SECTION)
    S, fn = _one_section(n, np.int32, "add", COUNT_WORK=1)
    call = Call.tool()
    x = call.to_device(np.ones(n, np.int32))
    out = call.empty((n,), np.int32)
    counters = call.to_device(np.zeros(step_count(S), np.uint64))
    fn.prepared_call((1, 1, 1), (S // 2, 1, 1), out.gpudata, x.gpudata, np.uintp(0), np.int64(n), np.int32(1),
                     counters.gpudata)
    c = counters.get()
    return WorkCount(int(c[0]), [int(v) for v in c[1:]])


SCANS.register(
    "blelloch", blelloch_driver, kernels=(SWEEPS,),
    source="Hands-On GPU Programming with Python and CUDA, ch. 4 (work-efficient parallel prefix)",
    summary="up-sweep and down-sweep kernels launched once per tree level; the host is the grid-wide barrier",
    model=blelloch_model, trace=blelloch_trace, count_work=blelloch_count_work,
    model_count_work=blelloch_model_count_work, error_depth=blelloch_error_depth, trace_limit=LEVEL_STEP_LIMIT,
)

SCANS.register(
    "blelloch_block", blelloch_block_driver, kernels=(BLOCK_FILE, "scan/add_block_sums.cu"),
    source="the Blelloch lab report's kernel (Blelloch 1990), in PMPP §11.6's hierarchical scheme",
    summary="up-sweep, save the block sum, clear the last, down-sweep in shared memory; block sums combined",
    model=blelloch_block_model, trace=blelloch_block_trace, count_work=blelloch_block_count_work,
    model_count_work=blelloch_block_model_count_work, error_depth=blelloch_block_error_depth,
    trace_limit=BLOCK_SECTION, section_size=BLOCK_SECTION,
)
