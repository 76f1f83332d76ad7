"""The single-section scans of PMPP ch. 11 and Hands-On ch. 4: naive (Hillis-Steele), Kogge-Stone (Fig. 11.3),
Kogge-Stone with two buffers (§11.2), Brent-Kung (Fig. 11.7) and the thread-coarsened scan (§11.5).

Each kernel scans one section per block (kernels/scan/<name>.cu, the section-kernel contract of hierarchical.py);
the registered drivers run it in PMPP §11.6's hierarchical scheme, so every algorithm takes every length.

Each algorithm also has
* a NumPy step-model doing the kernel's index arithmetic one barrier-separated step at a time, vectorised over
  the elements and over all sections at once (`model(x, op=, exclusive=, return_steps=)`); beyond one section it
  applies the hierarchical scheme (hierarchical_model) with the production section size;
* a trace build (TRACE=1, `trace(x, op=, exclusive=)`) returning the GPU's shared array after every step, and
* a work-counting build (COUNT_WORK=1, `count_work(n)`) returning the combines really performed and the warps
  active at each combine step, beside `model_count_work(n)`, the same counts read off the model.

Traces, steps and counts use one section of S = the smallest power of two >= max(n, 2) elements (the geometry
of `trace_geometry`); the step values are the whole shared array, identity padding included.

Counting (COUNT_WORK): every op_combine of the scan phases is counted, combines with identity padding included
(the count builds run one full section, n = S, so there is none); not counted: the exclusive section total
(op(last value, last input)) and the hierarchical scheme's other kernels.  A warp is active at a step when at
least one of its threads performed a combine in that step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime import arrays
from ..runtime.arrays import Call
from ..types import ELEMENT_TYPES, check_model_input, check_op, identity, ufunc
from .hierarchical import (
    SectionScan,
    hierarchical_error_depth,
    hierarchical_model,
    hierarchical_scan,
    register_section_scan,
    section_kernel,
)
from .registry import SCANS
from .steps import Step, WorkCount, check_count_n, pow2_at_least

# name -> (kernel file, function, production SECTION_SIZE, threads per block, other #defines).  hierarchical.py
# registers these as its SECTION_SCANS.
SECTION_KERNELS = {
    "naive": ("scan/naive.cu", "naive_scan", 1024, 1024, {}),
    "kogge_stone": ("scan/kogge_stone.cu", "kogge_stone_scan", 1024, 1024, {}),
    "kogge_stone_double_buffer": ("scan/kogge_stone_double_buffer.cu", "kogge_stone_double_buffer_scan", 1024, 1024, {}),
    "brent_kung": ("scan/brent_kung.cu", "brent_kung_scan", 2048, 1024, {}),
    "coarsened": ("scan/coarsened.cu", "coarsened_scan", 4096, 512, {"COARSEN": 8}),
}
COARSEN = 8  # the production coarsening factor of coarsened.cu
# The largest single section a trace / count build takes: 1024 threads (2 elements each for the Kogge-Stone
# family); coarsened: its production section (4096 doubles + padding fit the 48 KiB of static shared memory).
TRACE_LIMIT = {"naive": 2048, "kogge_stone": 2048, "kogge_stone_double_buffer": 2048, "brent_kung": 2048, "coarsened": 4096}


@dataclass(frozen=True)
class Geometry:
    section: int  # S, elements of the section
    threads: int  # threads per block
    coarsen: int = 1  # elements per sub-section (coarsened only)

    def defines(self, name) -> dict:
        d = {"SECTION_SIZE": self.section}
        if name == "coarsened":
            d["COARSEN"] = self.coarsen
        elif name != "brent_kung":
            d["THREADS"] = self.threads
        return d


def production_geometry(name) -> Geometry:
    _, _, section, threads, defines = SECTION_KERNELS[name]
    return Geometry(section, threads, defines.get("COARSEN", 1))


def trace_geometry(name, n: int) -> Geometry:
    """The one section traces, step lists and work counts of n elements use: S = next power of two >= max(n, 2)."""
    if n > TRACE_LIMIT[name]:
        raise ValueError(f"{name}: a traced / counted section holds at most {TRACE_LIMIT[name]} elements, got {n}")
    s = pow2_at_least(n, 2)
    if name == "brent_kung":
        return Geometry(s, s // 2)
    if name == "coarsened":
        c = min(COARSEN, max(1, s // 4))  # 16 elements: 4 threads of 4, a readable picture
        return Geometry(s, s // c, c)
    return Geometry(s, min(s, 1024))


# ---------------------------------------------------------------------------------------------------------------
# Step-models.  Each _steps_<name>(A, f, g, record) takes the loaded sections A (k, S) (a private copy), does the
# kernel's combine steps on all rows at once and returns the result.  With `record` (a list) it appends, per step,
# (label, row 0 after the step, edges (src, dst), the thread that performed each edge).  values[dst] =
# f(old[src], old[dst]) -- except coarsened's sequential phase, where src is the running value just computed.


def _edges(src, dst):
    return list(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()))


def _kogge_stone_steps(A, f, g: Geometry, record, label="stride"):
    s = g.section
    stride = 1
    while stride < s:
        new = A.copy()
        new[:, stride:] = f(A[:, :-stride], A[:, stride:])  # all reads of the step before its writes
        A = new
        if record is not None:
            dst = np.arange(stride, s)
            record.append((f"{label} {stride}", A[0].copy(), _edges(dst - stride, dst), dst % g.threads))
        stride *= 2
    return A


def _double_buffer_steps(A, f, g: Geometry, record):
    # Same values as Kogge-Stone: the step writes the other buffer instead of a temp register.
    return _kogge_stone_steps(A, f, g, record, label="stride")


def _brent_kung_steps(A, f, g: Geometry, record):
    s = g.section
    stride = 1
    while stride <= s // 2:  # reduction tree: index = (tid + 1) * 2 * stride - 1 < S
        dst = np.arange(2 * stride - 1, s, 2 * stride)
        A[:, dst] = f(A[:, dst - stride], A[:, dst])  # the sources are never destinations of the same step
        if record is not None:
            record.append((f"up-sweep stride {stride}", A[0].copy(), _edges(dst - stride, dst), (dst + 1) // (2 * stride) - 1))
        stride *= 2
    stride = s // 4
    while stride > 0:  # reverse tree: index + stride < S
        index = np.arange(2 * stride - 1, s - stride, 2 * stride)
        A[:, index + stride] = f(A[:, index], A[:, index + stride])
        if record is not None:
            record.append((f"down-sweep stride {stride}", A[0].copy(), _edges(index, index + stride),
                           (index + 1) // (2 * stride) - 1))
        stride //= 2
    return A


def _coarsened_steps(A, f, g: Geometry, record):
    k, s, c, b = A.shape[0], g.section, g.coarsen, g.threads
    A3 = A.reshape(k, b, c)
    A3 = f.accumulate(A3, axis=2, dtype=A3.dtype)  # phase 1: each thread's sequential scan, left to right like the kernel
    if record is not None:
        t, j = np.divmod(np.arange(s).reshape(b, c)[:, 1:].ravel(), c)
        dst = t * c + j
        record.append(("phase 1: sequential scans", A3[0].reshape(-1).copy(), _edges(dst - 1, dst), t))
    stride = 1
    while stride < b:  # phase 2: Kogge-Stone over the sub-sections' last elements
        last = A3[:, :, c - 1].copy()
        A3[:, stride:, c - 1] = f(last[:, :-stride], last[:, stride:])
        if record is not None:
            t = np.arange(stride, b)
            record.append((f"phase 2: stride {stride}", A3[0].reshape(-1).copy(),
                           _edges((t - stride) * c + c - 1, t * c + c - 1), t))
        stride *= 2
    # phase 3: thread t > 0 combines the last element of sub-section t - 1 into its first c - 1 elements
    A3[:, 1:, : c - 1] = f(A3[:, :-1, c - 1:], A3[:, 1:, : c - 1])
    if record is not None:
        t, j = np.divmod(np.arange(c, s).reshape(b - 1, c)[:, : c - 1].ravel(), c) if b > 1 else (np.zeros(0, int),) * 2
        record.append(("phase 3: add back", A3[0].reshape(-1).copy(), _edges(t * c - 1, t * c + j), t))
    return A3.reshape(k, s)


STEP_FUNCTIONS = {
    "naive": _kogge_stone_steps,
    "kogge_stone": _kogge_stone_steps,
    "kogge_stone_double_buffer": _double_buffer_steps,
    "brent_kung": _brent_kung_steps,
    "coarsened": _coarsened_steps,
}


def load_sections(rows, op, exclusive):
    """What a section kernel's load puts in shared memory: the rows, or for an exclusive scan the rows shifted
    right by one with the identity in front (PMPP §11.2's shifted load).  A new array."""
    if not exclusive:
        return np.array(rows, copy=True)
    shifted = np.empty_like(rows)
    shifted[:, 0] = identity(op, rows.dtype)
    shifted[:, 1:] = rows[:, :-1]
    return shifted


def section_model(name, geometry: Geometry | None = None):
    """The section model of `name` for hierarchical_model: (k, S) raw sections -> their scans."""
    step = STEP_FUNCTIONS[name]

    def model(rows, *, op="add", exclusive=False):
        g = geometry if geometry is not None else production_geometry(name)
        return step(load_sections(rows, op, exclusive), ufunc(op), g, None)

    return model




def _record_section(name, x, op, exclusive):
    """One section of x (n <= TRACE_LIMIT): (result, [Step], [thread arrays per combine step])."""
    n = x.size
    g = trace_geometry(name, n)
    row = np.full((1, g.section), identity(op, x.dtype), dtype=x.dtype)
    row[0, :n] = x
    loaded = load_sections(row, op, exclusive)
    record = []
    result = STEP_FUNCTIONS[name](loaded.copy(), ufunc(op), g, record)
    steps = [Step("load" + (" (shifted: exclusive)" if exclusive else ""), loaded[0].copy(), [])]
    steps += [Step(label, values, edges) for label, values, edges, _ in record]
    return result[0, :n].copy(), steps, [np.asarray(t) for _, _, _, t in record]


def _make_model(name):
    def model(x, *, op="add", exclusive=False, return_steps=False):
        x = check_model_input(x, op)
        if return_steps:
            if x.size == 0:
                return x.copy(), []
            result, steps, _ = _record_section(name, x, op, exclusive)
            return result, steps

        g = production_geometry(name)
        return hierarchical_model(x, section_model(name, g), g.section, op=op, exclusive=exclusive)

    model.__name__ = f"{name}_model"
    model.__doc__ = (f"NumPy step-model of the {name} scan: any length (hierarchical scheme beyond one section of "
                     f"{SECTION_KERNELS[name][2]}); with return_steps=True (n <= {TRACE_LIMIT[name]}) also the list of "
                     "Steps of one section (load, then one per barrier-separated step).")
    return model


def _make_model_count(name):
    def model_count_work(n) -> WorkCount:
        n = check_count_n(name, n, TRACE_LIMIT[name], "one section of n elements")
        _, steps, threads = _record_section(name, np.ones(n, np.int32), "add", False)
        additions = sum(len(s.edges) for s in steps[1:])
        return WorkCount(additions, [int(np.unique(t // 32).size) for t in threads])

    return model_count_work


# ---------------------------------------------------------------------------------------------------------------
# GPU: drivers, traces, counts.


def _make_driver(name):
    def driver(x, out, *, op, exclusive, call):
        return hierarchical_scan(x, out, op=op, exclusive=exclusive, call=call, block_scan=name)

    driver.__name__ = f"{name}_driver"
    return driver


def trace_step_count(name, section: int) -> int:
    """Steps (load included) of one section: what the model's steps and the trace build's rows number."""
    log = section.bit_length() - 1
    if name == "brent_kung":
        return 1 + log + (log - 1)
    if name == "coarsened":
        g = trace_geometry(name, section)
        return 1 + 1 + (g.threads.bit_length() - 1) + 1
    return 1 + log


def _make_trace(name):
    def trace(x, *, op="add", exclusive=False, file=None):

        x, _ = arrays.check_array(x, dtypes=ELEMENT_TYPES, what=f"{name} trace: x", max_length=TRACE_LIMIT[name])
        check_op(op)
        n = x.size
        if n == 0:
            return []
        g = trace_geometry(name, n)
        steps = trace_step_count(name, g.section)
        fn = section_kernel(name, x.dtype, op, file=file, TRACE=1, **g.defines(name))
        call = Call.tool()
        x_dev = call.to_device(x)
        out = call.empty((n,), x.dtype)
        buf = call.to_device(np.full(steps * g.section, identity(op, x.dtype), x.dtype))
        fn.prepared_call((1, 1, 1), (g.threads, 1, 1), out.gpudata, x_dev.gpudata, np.uintp(0), np.int64(n),
                         np.int32(bool(exclusive)), buf.gpudata)
        rows = buf.get().reshape(steps, g.section)
        return [rows[i].copy() for i in range(steps)]

    return trace


def _make_count(name):
    def count_work(n) -> WorkCount:

        n = check_count_n(name, n, TRACE_LIMIT[name], "one section of n elements")
        g = trace_geometry(name, n)
        combine_steps = trace_step_count(name, g.section) - 1
        fn = section_kernel(name, np.int32, "add", COUNT_WORK=1, **g.defines(name))
        call = Call.tool()
        x = call.to_device(np.ones(n, np.int32))
        out = call.empty((n,), np.int32)
        counters = call.to_device(np.zeros(1 + combine_steps, np.uint64))
        fn.prepared_call((1, 1, 1), (g.threads, 1, 1), out.gpudata, x.gpudata, np.uintp(0), np.int64(n), np.int32(0),
                         counters.gpudata)
        c = counters.get()
        return WorkCount(int(c[0]), [int(v) for v in c[1:]])

    return count_work


# ---------------------------------------------------------------------------------------------------------------
# Float error bounds.  fl(a + b) = (a + b)(1 + d), |d| <= u = eps/2.  Every output is a tree of additions of
# inputs; an input passing h additions on its way to the output carries a factor prod (1 + d_k), so the error is
# at most sum_j |x_j| ((1 + u)^h - 1) <= h * eps * sum_j |x_j| (for h*u <= 1/2).  error_depth(n) bounds h:
#   Kogge-Stone family: each of the log2(S) steps adds at most one rounding on any path;
#   Brent-Kung: up the reduction tree (<= log2 S) and down the reverse tree (<= log2 S - 1);
#   coarsened: the sequential run (<= C - 1), Kogge-Stone over B = S/C sub-sections (<= log2 B), the add-back (1);
# each + 1 for an exclusive scan's section total op(last value, last input); then hierarchical_error_depth
# adds the block-sum levels.


def section_error_depth(name) -> int:
    g = production_geometry(name)
    log = g.section.bit_length() - 1
    if name == "brent_kung":
        return 2 * log - 1 + 1
    if name == "coarsened":
        return (g.coarsen - 1) + (g.threads.bit_length() - 1) + 1 + 1
    return log + 1


def _make_error_depth(name):
    def error_depth(n: int) -> int:

        return hierarchical_error_depth(int(n), production_geometry(name).section, section_error_depth(name))

    return error_depth


_SOURCES = {
    "naive": ("Hands-On GPU Programming ch. 4, naive parallel prefix",
              "Hillis-Steele in one block, the book's write-after-read race fixed with a second barrier"),
    "kogge_stone": ("PMPP Fig. 11.3",
                    "Kogge-Stone in shared memory, temp register + second barrier; exclusive by the shifted load"),
    "kogge_stone_double_buffer": ("PMPP §11.2 (exercise)", "Kogge-Stone with two shared buffers, one barrier per step"),
    "brent_kung": ("PMPP Fig. 11.7", "reduction tree then reverse tree, SECTION_SIZE = 2*blockDim, divergence-free"),
    "coarsened": ("PMPP §11.5", "coalesced load, per-thread sequential scan, Kogge-Stone of sub-section sums, add back"),
}

for _name, (_file, _fn, _section, _threads, _defines) in SECTION_KERNELS.items():
    register_section_scan(_name, SectionScan(_file, _fn, _section, _threads, dict(_defines)))
    SCANS.register(
        _name, _make_driver(_name), kernels=(_file, "scan/add_block_sums.cu"), source=_SOURCES[_name][0],
        summary=_SOURCES[_name][1], model=_make_model(_name), trace=_make_trace(_name), count_work=_make_count(_name),
        model_count_work=_make_model_count(_name), error_depth=_make_error_depth(_name), trace_limit=TRACE_LIMIT[_name],
        section_size=_section,
    )
