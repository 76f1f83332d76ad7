"""A right host driver for the hierarchical_scan exercise (PMPP §11.6)."""

import numpy as np

SECTION_SIZE = 1024
ADD_THREADS = 256


def scan(x, out, n, *, kernel, empty, stream, exclusive=False):
    sections = -(-n // SECTION_SIZE)
    sums = empty(sections) if sections > 1 else None
    kernel("kogge_stone_scan").prepared_async_call((sections, 1, 1), (SECTION_SIZE, 1, 1), stream, out.gpudata,
                                                   x.gpudata, sums.gpudata if sums is not None else 0, np.int64(n),
                                                   np.int32(exclusive))
    if sections > 1:
        scanned = empty(sections)
        scan(sums, scanned, sections, kernel=kernel, empty=empty, stream=stream)
        kernel("add_block_sums").prepared_async_call((sections - 1, 1, 1), (ADD_THREADS, 1, 1), stream, out.gpudata,
                                                     out.gpudata, scanned.gpudata, np.int64(n), np.int64(SECTION_SIZE),
                                                     np.int64(1))
