// pyscan exercise: kogge_stone
// PMPP §11.2, Fig. 11.3: the Kogge-Stone scan of one section in shared memory.
//
// Block b scans the section [b * SECTION_SIZE, (b + 1) * SECTION_SIZE) of `in` with THREADS = SECTION_SIZE
// threads, one element each.  At the step with stride s (1, 2, 4, ... < SECTION_SIZE), element k >= s becomes
// op_combine(XY[k - s], XY[k]).  The write-after-read race of §11.2: read into a register `temp`,
// __syncthreads(), then write.  Positions past n hold the identity (load_element does it); store only k < n.
// pyscan's hierarchical scheme (§11.6) runs one block per section and adds the block sums, so your kernel is
// checked at every length: the last line writes the section's total for it.
//
// Helpers (pyscan_headers/common/scan_section.cuh): section_base(), load_element(in, base, k, n, exclusive),
// op_combine(a, b), op_identity(), store_block_sum(...).  TRACE_STEP(...) copies the shared array after each step
// for the checker's step-by-step comparison: leave them where they are.
//
// Check it:  python -m pyscan exercise check kogge_stone.cu
#include "pyscan_headers/common/scan_section.cuh"

#ifndef THREADS
#define THREADS SECTION_SIZE
#endif
static_assert(THREADS == SECTION_SIZE && THREADS <= 1024, "kogge_stone: one thread per element, at most 1024");

extern "C" __global__ void __launch_bounds__(THREADS)
kogge_stone_scan(T* out, const T* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T XY[SECTION_SIZE];
    const int k = threadIdx.x;
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    // TODO 1: the load: XY[k] = load_element(in, base, k, n, exclusive);

    TRACE_STEP(0, [&](int i) { return XY[i]; });
    int step = 0;
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2, ++step) {
        // TODO 2: one Kogge-Stone step (two barriers: one before the reads, one between the reads and the writes).

        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
    }
    __syncthreads();
    // TODO 3: the store, positions base + k < n only.

    if (k == THREADS - 1) store_block_sum(block_sums, XY[SECTION_SIZE - 1], last_in, exclusive);
}
