// pyscan exercise: coarsened_scan
// PMPP §11.5, Fig. 11.8: the thread-coarsened three-phase scan of one section of SECTION_SIZE elements with
// THREADS = SECTION_SIZE / COARSEN threads.  Thread tid owns the sub-section [tid * COARSEN, (tid + 1) * COARSEN).
//
//   load     coalesced: thread tid loads k = tid, tid + THREADS, ... (load_element gives the identity past n)
//   phase 1  each thread scans its own sub-section sequentially (no barrier inside)
//   phase 2  Kogge-Stone (register + second barrier) over the sub-sections' last elements
//   phase 3  thread tid > 0 combines the last element of sub-section tid - 1 into its first COARSEN - 1 elements
//   store    coalesced, like the load, positions below n only
//
// Helpers (pyscan_headers/common/scan_section.cuh): section_base(), load_element(...), op_combine(a, b),
// store_block_sum(...).  TRACE_STEP(...) after the load, phase 1, each phase-2 step and phase 3: leave them.
//
// Check it:  python -m pyscan exercise check coarsened_scan.cu
#include "pyscan_headers/common/scan_section.cuh"

#ifndef COARSEN
#define COARSEN 8
#endif
#define THREADS (SECTION_SIZE / COARSEN)
static_assert(SECTION_SIZE % COARSEN == 0 && THREADS >= 1 && THREADS <= 1024,
              "coarsened: SECTION_SIZE must be COARSEN times a thread count <= 1024");

extern "C" __global__ void __launch_bounds__(THREADS)
coarsened_scan(T* out, const T* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T XY[SECTION_SIZE];
    const int tid = threadIdx.x;
    const int first = tid * COARSEN;  // this thread's sub-section: [first, first + COARSEN)
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    // TODO 1: the coalesced load.

    TRACE_STEP(0, [&](int i) { return XY[i]; });
    __syncthreads();
    // TODO 2: phase 1, the sequential scan of XY[first .. first + COARSEN).

    TRACE_STEP(1, [&](int i) { return XY[i]; });
    int step = 1;
    for (int stride = 1; stride < THREADS; stride *= 2, ++step) {
        // TODO 3: phase 2, one Kogge-Stone step over the last elements XY[first + COARSEN - 1].

        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
    }
    __syncthreads();
    // TODO 4: phase 3, add back the previous sub-section's last element.

    TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
    __syncthreads();
    // TODO 5: the coalesced store, positions below n only.

    if (tid == THREADS - 1) store_block_sum(block_sums, XY[SECTION_SIZE - 1], last_in, exclusive);
}
