"""initial= of pyscan.scan and pyscan.reduce: the result combined with a starting value v on the device.

A scan from v is y[k] = v (+) x[0] (+) ... (+) x[k] (CUB's init); by associativity (PMPP §11.1) that is
v (+) scan(x)[k], so one elementwise pass after any algorithm's scan gives it (kernels/scan/combine_initial.cu), with
no algorithm's kernels changed.  A reduction from v (NumPy's ufunc.reduce(initial=v)) is the same pass over its one
result (or one per output along axes).  The cost is one more launch that reads and writes the result once (for a
reduction, one element per output: negligible); the scans' kernels could fold v into their carry-in instead (the
first tile's prefix, the block sums), saving that pass on long arrays, at the price of a change to every one of them.
"""

from __future__ import annotations

import numpy as np

from ..runtime.loader import get_kernel
from ..types import defines

KERNEL = "scan/combine_initial.cu"
THREADS = 256
MAX_BLOCKS = 4096  # a grid-stride loop: enough blocks to fill any GPU, any length


def combine_initial(call, y, total: int, start, op, value, *, n: int | None = None, inner: int = 1,
                    exclusive: bool = False) -> int:
    """y[k] = start (+) y[k] for the `total` elements of device array y (of the result dtype `value`), in place, on
    the call's stream; `start` is initial= as the kernels take it (pyscan.types.initial_compute).  exclusive: the
    first output of every scanned row of n elements (the axis's extent; `inner` elements after it) becomes start
    itself.  Returns the number of launches (0 for an empty y)."""
    if total == 0:
        return 0
    fn = get_kernel(KERNEL, "combine_initial", device=call.device, **defines(value, op, value))
    blocks = max(1, min(-(-total // THREADS), MAX_BLOCKS))
    fn.prepared_async_call((blocks, 1, 1), (THREADS, 1, 1), call.stream, y.gpudata, np.int64(total),
                           np.int64(total if n is None else n), np.int64(inner), np.asarray(start).item(),
                           np.int32(bool(exclusive)))
    return 1


__all__ = ["KERNEL", "combine_initial"]
