"""Multi-block scans as pictures (PMPP §11.6-11.7): what each launch or block hands to the next, from GPU values.

    hierarchical_values(x, section_size, op, on_gpu)   PMPP Figs. 11.9-11.10: the three kernels' arrays
    single_pass_values(x, section_size, op, on_gpu)    PMPP §11.7: the local scans and the domino hand-off
    hierarchical_steps(values) / single_pass_steps(values)   the same as rows of boxes for visual.draw_steps

Both run the library's real kernels, built with a small section (SECTION_SIZE=4: 16 elements make four blocks)
so the whole scheme fits one picture, and read back every array the launches leave:

    hierarchical  kernel 1 (scan/kogge_stone.cu, one block per section): the local scans and the block sums S;
                  the same kernel on S (one section): S scanned; kernel 3 (scan/add_block_sums.cu): S[b-1]
                  added to every element of section b
    single_pass   scan/single_pass.cu, one launch: out and scan_value[1..blocks], the running totals the blocks
                  handed on (block b waits for flags[b], reads scan_value[b], publishes scan_value[b+1]); the
                  local scans are out - scan_value[b] (op add only: that is why the pictures are sums)

Without a GPU (on_gpu=False) the values come from NumPy (the same arithmetic) and the caller says so.  With a GPU
every array is checked against NumPy (AssertionError with the first difference).
"""

from __future__ import annotations

import numpy as np

from .steps import Step

PICTURE_SECTION = 4  # elements per block in the pictures


def _check(x, section_size, op):
    x = np.ascontiguousarray(x)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"multi-block pictures need a 1-D array of at least 2 elements, got shape {x.shape}")
    if x.dtype.kind not in "iu":
        raise TypeError(f"multi-block pictures take integers (exact checks), got {x.dtype}")
    if section_size < 2 or section_size & (section_size - 1) or section_size > 1024:
        raise ValueError(f"section_size must be a power of two 2 .. 1024, got {section_size}")
    if op != "add":
        raise ValueError(f"multi-block pictures are drawn for op='add' (the single-pass local scans are read as "
                         f"out - scan_value), got {op!r}")
    return x, -(-x.size // section_size)


def _sections(x, s):
    k = -(-x.size // s)
    rows = np.zeros(k * s, x.dtype)
    rows[:x.size] = x
    return rows.reshape(k, s)


def _numpy_hierarchical(x, s):
    rows = _sections(x, s)
    local = np.cumsum(rows, axis=1, dtype=x.dtype)
    sums = local[:, -1].copy()
    scanned = np.cumsum(sums, dtype=x.dtype)
    out = local.copy()
    out[1:] += scanned[:-1, None]
    return {"x": x.copy(), "local": local.reshape(-1)[:x.size], "sums": sums, "scanned_sums": scanned,
            "out": out.reshape(-1)[:x.size]}


def _compare(what, got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or not np.array_equal(got, want):
        raise AssertionError(f"{what}: the GPU gave {got.tolist()}, NumPy {want.tolist()}")


def hierarchical_values(x, *, section_size=PICTURE_SECTION, op="add", on_gpu=True) -> dict:
    """{"x", "local", "sums", "scanned_sums", "out"}: the arrays of PMPP §11.6's three kernels."""
    x, k = _check(x, section_size, op)
    want = _numpy_hierarchical(x, section_size)
    if not on_gpu:
        return want
    if k > section_size:
        raise ValueError(f"the picture scans the {k} block sums in one section of {section_size}: at most "
                         f"{section_size * section_size} elements")
    from ..runtime.arrays import Call
    from ..runtime.loader import get_kernel
    from ..types import defines

    macros = defines(x.dtype, op)
    scan = get_kernel("scan/kogge_stone.cu", "kogge_stone_scan", arg_types="PPPqi", SECTION_SIZE=section_size,
                      THREADS=section_size, **macros)
    add = get_kernel("scan/add_block_sums.cu", "add_block_sums", **macros)
    call = Call.tool()
    dev = call.to_device(x)
    out = call.empty((x.size,), x.dtype)
    sums = call.empty((k,), x.dtype)
    scan.prepared_call((k, 1, 1), (section_size, 1, 1), out.gpudata, dev.gpudata, sums.gpudata, np.int64(x.size),
                       np.int32(0))
    got = {"x": x.copy(), "local": out.get(), "sums": sums.get()}
    scanned = call.empty((k,), x.dtype)
    scan.prepared_call((1, 1, 1), (section_size, 1, 1), scanned.gpudata, sums.gpudata, np.uintp(0), np.int64(k),
                       np.int32(0))
    got["scanned_sums"] = scanned.get()
    if k > 1:
        add.prepared_call((k - 1, 1, 1), (32, 1, 1), out.gpudata, out.gpudata, scanned.gpudata, np.int64(x.size),
                          np.int64(section_size), np.int64(1))
    got["out"] = out.get()
    for key in ("local", "sums", "scanned_sums", "out"):
        _compare(f"hierarchical {key}", got[key], want[key])
    return got


def single_pass_values(x, *, section_size=PICTURE_SECTION, op="add", on_gpu=True) -> dict:
    """{"x", "local", "handoff", "out"}: handoff[b] = scan_value[b], the total of sections 0 .. b-1 that block
    b - 1 handed to block b (handoff[0] = 0: block 0 waits for nobody)."""
    x, k = _check(x, section_size, op)
    rows = _sections(x, section_size)
    local = np.cumsum(rows, axis=1, dtype=x.dtype)
    handoff = np.concatenate([[0], np.cumsum(local[:, -1], dtype=x.dtype)]).astype(x.dtype)
    want = {"x": x.copy(), "local": local.reshape(-1)[:x.size], "handoff": handoff[:k],
            "out": np.cumsum(x, dtype=x.dtype)}
    if not on_gpu:
        return want
    from ..runtime.arrays import Call
    from ..runtime.loader import get_kernel
    from ..types import defines

    fn = get_kernel("scan/single_pass.cu", "single_pass_scan", SECTION_SIZE=section_size, **defines(x.dtype, op))
    call = Call.tool()
    dev = call.to_device(x)
    out = call.empty((x.size,), x.dtype)
    counter = call.to_device(np.zeros(1, np.uint32))
    flags = call.to_device(np.zeros(k + 1, np.uint32))
    scan_value = call.to_device(np.zeros(k + 1, x.dtype))
    fn.prepared_call((k, 1, 1), (section_size // 2, 1, 1), out.gpudata, dev.gpudata, np.int64(x.size), np.int32(0),
                     counter.gpudata, flags.gpudata, scan_value.gpudata)
    total = out.get()
    values = scan_value.get()
    handed = np.concatenate([[0], values[1:k]]).astype(x.dtype)
    if int(counter.get()[0]) != k or not np.all(flags.get()[1:] == 1):
        raise AssertionError(f"single_pass: {int(counter.get()[0])} of {k} blocks took an index, flags "
                             f"{flags.get().tolist()}")
    got_local = (total.reshape(-1) - np.repeat(handed, section_size)[:x.size]).astype(x.dtype)
    got = {"x": x.copy(), "local": got_local, "handoff": handed, "out": total}
    _compare("single_pass scan_value (the hand-off)", handed, want["handoff"])
    _compare("single_pass out - scan_value (the local scans)", got_local, want["local"])
    _compare("single_pass out", total, want["out"])
    _compare("single_pass last hand-off", values[k], np.asarray(want["out"][-1]))
    return got


def hierarchical_steps(values, section_size=PICTURE_SECTION) -> list:
    """Rows for draw_steps: x, the local scans, S (copied from each section's last element), S scanned, and the
    add-back (an arrow from S[b-1] to every element of section b)."""
    x, s = values["x"], section_size
    n, k = x.size, len(values["sums"])
    last = [min((b + 1) * s, n) - 1 for b in range(k)]
    add_edges = [(b - 1, i) for b in range(1, k) for i in range(b * s, min((b + 1) * s, n))]
    return [
        Step("x", x.copy(), []),
        Step(f"kernel 1: each block scans its {s} elements", np.asarray(values["local"]).copy(), []),
        Step("kernel 1 also writes S[b], its section's total", np.asarray(values["sums"]).copy(),
             [(last[b], b) for b in range(k)]),
        Step("kernel 2: scan S", np.asarray(values["scanned_sums"]).copy(), []),
        Step("kernel 3: block b adds S[b-1] to its section", np.asarray(values["out"]).copy(), add_edges),
    ]


def single_pass_steps(values, section_size=PICTURE_SECTION) -> list:
    """Rows for draw_steps: x, every block's local scan, then one row per hand-off: block b receives
    scan_value[b] (the arrow from the last element of section b - 1, final by then) and adds it to its section."""
    x, s = values["x"], section_size
    n = x.size
    local, out, handoff = np.asarray(values["local"]), np.asarray(values["out"]), np.asarray(values["handoff"])
    k = len(handoff)
    steps = [Step("x", x.copy(), []), Step(f"every block scans its {s} elements (Brent-Kung)", local.copy(), [])]
    current = local.copy()
    for b in range(1, k):
        span = range(b * s, min((b + 1) * s, n))
        current = current.copy()
        current[list(span)] = out[list(span)]
        steps.append(Step(f"block {b} waits for flag[{b}], reads scan_value[{b}] = {int(handoff[b])}, adds it, "
                          f"publishes scan_value[{b + 1}]", current.copy(), [(b * s - 1, i) for i in span]))
    return steps
