"""pyscan exercise: blelloch -- the host loop of Hands-On ch. 4's work-efficient prefix sum.

The checker imports this file (it must sit beside blelloch.cu) and calls scan(...) on device arrays.
    kernel(name)    -> your __global__ function `name` of blelloch.cu, compiled for x's element type;
                       launch it with fn.prepared_async_call(grid, block, stream, *args)
    empty(count)    -> a new device array of `count` elements of x's type (its .gpudata is its address)
    snapshot(array) -> lets the checker copy the working array after a launch, for its step-by-step comparison
                       (after the load, every up-sweep level, the clear, every down-sweep level, and `out` after the
                       store): keep the calls where they are.
Arguments are passed as NumPy scalars of the kernel's C types: np.int64(...) for long long, np.int32(...) for int.
"""

import numpy as np

THREADS = 256  # threads per block


def grid_for(threads):
    """(grid, block) for `threads` threads in blocks of THREADS."""
    return (max(1, -(-threads // THREADS)), 1, 1), (THREADS, 1, 1)


def scan(x, out, n, *, kernel, empty, stream, exclusive=False, snapshot=lambda array: None):
    """Scan the n elements of device array x into out (inclusive, or exclusive if asked), any n >= 1."""
    N = 1 << (n - 1).bit_length()  # the next power of two >= n
    work = empty(N)
    kernel("blelloch_load").prepared_async_call(*grid_for(N), stream, work.gpudata, x.gpudata, np.int64(n), np.int64(N))
    snapshot(work)
    # TODO 1: the up-sweep, s = 1, 2, ..., N // 2: launch blelloch_up_sweep with N // (2 * s) threads, then
    # snapshot(work).
    # TODO 2: blelloch_clear_last (one thread), snapshot(work).
    # TODO 3: the down-sweep, s = N // 2, ..., 1, snapshot(work) after each level.
    # TODO 4: blelloch_store with n threads: (out, work, x, n, exclusive), then snapshot(out).
