// pyscan exercise: kogge_stone_exclusive
// PMPP §11.3: the exclusive scan kernel.  out[i] = op over in[0..i) -- the identity at i = 0.
//
// The book's way: the Kogge-Stone kernel (Fig. 11.3) with a shifted load.  Thread k loads in[base + k - 1] into
// XY[k], and the identity (op_identity(), 0 for a sum -- not in[0]!) at k = 0 of the section; past n the identity
// too.  Then the inclusive Kogge-Stone steps, unchanged.  The checker runs your kernel with exclusive = 1 (the
// section total for the block sums is op(last value, last input): the last line does it).  Write the shifted
// load yourself: load_element() of the helpers would do it for you.
//
// Helpers (pyscan_headers/common/scan_section.cuh): section_base(), op_combine(a, b), op_identity(),
// store_block_sum(...).  TRACE_STEP(...) copies the shared array after each step for the checker: leave them.
//
// Check it:  python -m pyscan exercise check kogge_stone_exclusive.cu
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

    // TODO 1: the shifted load (exclusive != 0): XY[k] = in[base + k - 1], the identity at k == 0 and past n.

    TRACE_STEP(0, [&](int i) { return XY[i]; });
    int step = 0;
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2, ++step) {
        // TODO 2: one Kogge-Stone step, as in Fig. 11.3.

        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
    }
    __syncthreads();
    // TODO 3: the store, positions base + k < n only.

    if (k == THREADS - 1) store_block_sum(block_sums, XY[SECTION_SIZE - 1], last_in, exclusive);
}
