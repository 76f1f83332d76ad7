"""PMPP §11.7: the single-pass ("stream-based", "domino") scan, kernels/scan/single_pass.cu.

One kernel launch.  Block b (b = the order in which blocks started, from an atomic counter) scans its section of
SECTION_SIZE elements with the Brent-Kung tree (PMPP Fig. 11.7), then waits for scan_value[b] (the op over all
earlier sections) from block b - 1, publishes scan_value[b + 1] = scan_value[b] (+) its section total for block
b + 1, and combines scan_value[b] into its section.

Scratch per call, from pyscan's memory pool (no cudaMalloc once the pool holds a large enough buffer):
one buffer of 32-bit words [block counter, flags[0 .. blocks]] zeroed by one memset, and scan_value[0 .. blocks].

Model steps (return_steps; one array of blocks * S values per step, identity padding included):
load; Brent-Kung up-sweep strides 1 .. S/2 and down-sweep strides S/4 .. 1 (all sections at once); one step
"domino b" per section b >= 1 (values[i] = values[b*S - 1] (+) values[i] for i in section b: the previous
section's last value is then the running total scan_value[b]); for an exclusive scan a last step that shifts each
value right by one (the kernel reads the local scan at i - 1).  With return_steps the section is
S = next power of two >= max(n, 2) for n <= SECTION_SIZE (one section, no domino), SECTION_SIZE beyond; pass
`section_size=4` (say) to see the domino on a small input.
"""

from __future__ import annotations

import numpy as np

from ..runtime.loader import get_kernel
from ..types import COMPUTE_TYPES, check_model_input, identity, ufunc
from ..types import defines as type_defines
from .registry import SCANS
from .steps import Step, pow2_at_least

KERNEL = "scan/single_pass.cu"
FUNCTION = "single_pass_scan"
SECTION_SIZE = 2048  # elements per block: 1024 threads x 2
STEP_LIMIT = 1 << 16




def _edges(src, dst):
    return list(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()))


def brent_kung_rows(A, f, record=None):
    """PMPP Fig. 11.7 on every row of A (k, S) in place (the kernel's index arithmetic).  With `record` (a list)
    appends a Step per tree step: the flattened array after it and its edges (src, dst) in flattened indices."""
    k, S = A.shape
    offsets = (np.arange(k) * S)[:, None]

    def note(label, src, dst):
        if record is not None:
            record.append(Step(label, A.reshape(-1).copy(), _edges((offsets + src).ravel(), (offsets + dst).ravel())))

    stride = 1
    while stride <= S // 2:  # index = (t + 1) * 2 * stride - 1 < S
        index = np.arange(2 * stride - 1, S, 2 * stride)
        A[:, index] = f(A[:, index - stride], A[:, index])
        note(f"up-sweep stride {stride}", index - stride, index)
        stride *= 2
    stride = S // 4
    while stride > 0:  # index = (t + 1) * 2 * stride - 1, index + stride < S
        index = np.arange(2 * stride - 1, S - stride, 2 * stride)
        A[:, index + stride] = f(A[:, index], A[:, index + stride])
        note(f"down-sweep stride {stride}", index, index + stride)
        stride //= 2
    return A


def single_pass_model(x, *, op="add", exclusive=False, return_steps=False, section_size=None):
    """NumPy step-model of `single_pass` for any length (see the module docstring for the steps)."""
    x = check_model_input(x, op)
    n = x.size
    f, e = ufunc(op), identity(op, x.dtype)
    if n == 0:
        return (x.copy(), []) if return_steps else x.copy()
    if section_size is None:
        S = SECTION_SIZE if (n > SECTION_SIZE or not return_steps) else pow2_at_least(n, 2)
    else:
        S = int(section_size)
        if S < 2 or S & (S - 1):
            raise ValueError(f"section_size must be a power of two >= 2, got {section_size!r}")
    if return_steps and n > STEP_LIMIT:
        raise ValueError(f"single_pass: steps are recorded for at most {STEP_LIMIT} elements, got {n}")
    blocks = -(-n // S)
    flat = np.full(blocks * S, e, dtype=x.dtype)
    flat[:n] = x
    A = flat.reshape(blocks, S).copy()
    steps = [Step("load", flat.copy(), [])] if return_steps else None
    brent_kung_rows(A, f, steps)
    # The domino, in block order: prev[b] = prev[b-1] (+) total[b-1] (a left-to-right accumulate), and
    # section b becomes prev[b] (+) local.
    prev = np.empty(blocks, dtype=x.dtype)
    prev[0] = e
    if blocks > 1:
        prev[1:] = f.accumulate(A[:-1, -1], dtype=x.dtype)
    inclusive = f(prev[:, None], A)
    if return_steps:
        B = A.copy()
        for b in range(1, blocks):
            B[b] = inclusive[b]  # = B[b-1, -1] (+) local: the previous section's last value is prev[b]
            steps.append(Step(f"domino {b}: section {b} + total of sections < {b}", B.reshape(-1).copy(),
                              _edges(np.full(S, b * S - 1), np.arange(b * S, (b + 1) * S))))
    if exclusive:
        out = np.empty_like(A)
        out[:, 0] = prev
        out[:, 1:] = f(prev[:, None], A[:, :-1])
        if return_steps:
            steps.append(Step("exclusive: total of earlier sections (+) local scan at i - 1", out.reshape(-1).copy(), []))
    else:
        out = inclusive
    result = out.reshape(-1)[:n].copy()
    return (result, steps) if return_steps else result


def single_pass_error_depth(n: int) -> int:
    """Brent-Kung within a section: <= log2 S roundings up the tree and log2 S - 1 down it; the running total
    of section b is ((t_0 (+) t_1) (+) ...) (+) t_{b-1}: <= blocks - 1 more; the final combine: 1."""
    S = SECTION_SIZE
    log = S.bit_length() - 1
    return -(-int(n) // S) + 2 * log + 1


def single_pass_driver(x, out, *, op, exclusive, call):
    n = int(x.size)
    macros = type_defines(x.dtype, op, out.dtype)
    dtype = COMPUTE_TYPES[out.dtype]  # the handed-on totals' type
    fn = get_kernel(KERNEL, FUNCTION, SECTION_SIZE=SECTION_SIZE, device=call.device, **macros)
    blocks = -(-n // SECTION_SIZE)
    words = 1 + blocks + 1  # counter, flags[0 .. blocks]
    words += words % 2  # scan_value 8-byte aligned
    scratch = call.scratch(words * 4 + (blocks + 1) * dtype.itemsize)
    base = int(scratch.gpudata)
    call.memset32(scratch, 0, words)
    fn.prepared_async_call((blocks, 1, 1), (SECTION_SIZE // 2, 1, 1), call.stream, out.gpudata, x.gpudata, np.int64(n),
                           np.int32(bool(exclusive)), base, base + 4, base + 4 * words)
    return 1


SCANS.register(
    "single_pass", single_pass_driver, kernels=(KERNEL,), source="PMPP §11.7 (single-pass scan, domino hand-off)",
    summary="one kernel: Brent-Kung per block, block sums handed on through flags and __threadfence, dynamic "
            "block index from an atomic counter",
    model=single_pass_model, trace=None, count_work=None, error_depth=single_pass_error_depth,
    section_size=SECTION_SIZE,
)
