"""A right host loop for the blelloch exercise (Hands-On ch. 4)."""

import numpy as np

THREADS = 256


def grid_for(threads):
    return (max(1, -(-threads // THREADS)), 1, 1), (THREADS, 1, 1)


def scan(x, out, n, *, kernel, empty, stream, exclusive=False, snapshot=lambda array: None):
    N = 1 << (n - 1).bit_length()
    work = empty(N)
    kernel("blelloch_load").prepared_async_call(*grid_for(N), stream, work.gpudata, x.gpudata, np.int64(n), np.int64(N))
    snapshot(work)
    s = 1
    while s < N:
        kernel("blelloch_up_sweep").prepared_async_call(*grid_for(N // (2 * s)), stream, work.gpudata, np.int64(N), np.int64(s))
        snapshot(work)
        s *= 2
    snapshot(work)  # WRONG: the root is not cleared
    s = N // 2
    while s >= 1:
        kernel("blelloch_down_sweep").prepared_async_call(*grid_for(N // (2 * s)), stream, work.gpudata, np.int64(N), np.int64(s))
        snapshot(work)
        s //= 2
    kernel("blelloch_store").prepared_async_call(*grid_for(n), stream, out.gpudata, work.gpudata, x.gpudata, np.int64(n),
                                                 np.int32(exclusive))
    snapshot(out)
