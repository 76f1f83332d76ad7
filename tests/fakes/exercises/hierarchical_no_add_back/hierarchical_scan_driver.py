"""pyscan exercise: hierarchical_scan -- the host code of PMPP §11.6 (Fig. 11.9's three steps).

The checker imports this file (it must sit beside hierarchical_scan.cu) and calls scan(...) on device arrays.
    kernel(name)   -> your __global__ function `name` of hierarchical_scan.cu, compiled for x's element type;
                      launch it with fn.prepared_async_call(grid, block, stream, *args)
    empty(count)   -> a new device array of `count` elements of x's type (its .gpudata is its address)
Arguments are passed as NumPy scalars of the kernel's C types: np.int64(n) for long long, np.int32(...) for int,
0 for a null pointer.
"""

import numpy as np

SECTION_SIZE = 1024  # elements (and threads) per block of kogge_stone_scan
ADD_THREADS = 256  # threads per block of add_block_sums


def scan(x, out, n, *, kernel, empty, stream, exclusive=False):
    """Scan the n elements of device array x into out (inclusive, or exclusive if asked), any n >= 1."""
    section_scan = kernel("kogge_stone_scan")
    add_block_sums = kernel("add_block_sums")  # noqa: F841 (TODO 2 launches it)
    sections = -(-n // SECTION_SIZE)
    sums = empty(sections) if sections > 1 else None
    # Step 1: every block scans its section and writes its total to sums.
    section_scan.prepared_async_call((sections, 1, 1), (SECTION_SIZE, 1, 1), stream, out.gpudata, x.gpudata,
                                     sums.gpudata if sums is not None else 0, np.int64(n), np.int32(exclusive))
    if sections > 1:
        # TODO 1 (step 2): scan the `sections` block sums inclusively into a new array `scanned`, by calling scan()
        # itself (it works for any length).
        # TODO 2 (step 3): launch add_block_sums with sections - 1 blocks of ADD_THREADS threads, adding back into out
        #   itself from section 1 on: (out, out, scanned, n, SECTION_SIZE, 1).
        pass
