// pyscan exercise: brent_kung
// PMPP §11.4, Fig. 11.7: the Brent-Kung scan of one section of SECTION_SIZE = 2 * THREADS elements.
//
// Each thread loads two elements, tid and tid + THREADS (coalesced).  Then
// * the reduction tree: for stride = 1, 2, ..., THREADS: index = (tid + 1) * 2 * stride - 1; if index <
//   SECTION_SIZE, XY[index] = op_combine(XY[index - stride], XY[index]);
// * the reverse tree: for stride = SECTION_SIZE / 4, ..., 1: index = (tid + 1) * 2 * stride - 1; if index + stride
//   < SECTION_SIZE, XY[index + stride] = op_combine(XY[index], XY[index + stride]);
// with a __syncthreads() before every step.  Positions past n hold the identity (load_element does it -- Fig. 11.7
// forgets); store both elements, positions below n only.
//
// Helpers (pyscan_headers/common/scan_section.cuh): section_base(), load_element(in, base, k, n, exclusive),
// op_combine(a, b), store_block_sum(...).  TRACE_STEP(...): leave them where they are (one per tree step).
//
// Check it:  python -m pyscan exercise check brent_kung.cu
#include "pyscan_headers/common/scan_section.cuh"

#define THREADS (SECTION_SIZE / 2)
static_assert(SECTION_SIZE >= 2 && (SECTION_SIZE & (SECTION_SIZE - 1)) == 0 && THREADS <= 1024,
              "brent_kung: SECTION_SIZE must be a power of two, 2 .. 2048");

extern "C" __global__ void __launch_bounds__(THREADS)
brent_kung_scan(T* out, const T* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T XY[SECTION_SIZE];
    const int tid = threadIdx.x;
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    // TODO 1: load XY[tid] and XY[tid + THREADS].

    TRACE_STEP(0, [&](int i) { return XY[i]; });
    int step = 0;
    for (int stride = 1; stride <= THREADS; stride *= 2, ++step) {
        // TODO 2: one step of the reduction tree.

        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
    }
    for (int stride = SECTION_SIZE / 4; stride > 0; stride /= 2, ++step) {
        // TODO 3: one step of the reverse tree.

        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
    }
    __syncthreads();
    // TODO 4: store XY[tid] and XY[tid + THREADS], positions below n only.

    if (tid == THREADS - 1) store_block_sum(block_sums, XY[SECTION_SIZE - 1], last_in, exclusive);
}
