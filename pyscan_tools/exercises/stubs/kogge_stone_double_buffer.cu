// pyscan exercise: kogge_stone_double_buffer
// PMPP §11.2, the exercise after Fig. 11.3: Kogge-Stone with two shared buffers.
//
// Instead of a register and a second __syncthreads() per step, every step reads one buffer and writes the other:
// buf[1 - src][k] = op_combine(buf[src][k - stride], buf[src][k]) for k >= stride, buf[1 - src][k] = buf[src][k]
// below; then the buffers swap roles.  ONE __syncthreads() per step is then enough -- say to yourself why.
// Positions past n hold the identity (load_element does it); store only positions below n.
//
// Helpers (pyscan_headers/common/scan_section.cuh): section_base(), load_element(in, base, k, n, exclusive),
// op_combine(a, b), op_identity(), store_block_sum(...).  TRACE_STEP(...) copies the array after each step for the
// checker: keep `src` naming the buffer that holds the step's result.
//
// Check it:  python -m pyscan exercise check kogge_stone_double_buffer.cu
#include "pyscan_headers/common/scan_section.cuh"

#ifndef THREADS
#define THREADS SECTION_SIZE
#endif
static_assert(THREADS == SECTION_SIZE && THREADS <= 1024, "double buffer: one thread per element, at most 1024");

extern "C" __global__ void __launch_bounds__(THREADS)
kogge_stone_double_buffer_scan(T* out, const T* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T buf[2][SECTION_SIZE];
    const int k = threadIdx.x;
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    // TODO 1: load into buf[0].
    int src = 0;
    TRACE_STEP(0, [&](int i) { return buf[src][i]; });
    int step = 0;
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2, ++step) {
        // TODO 2: one barrier, then read buf[src] and write buf[1 - src]; then src = 1 - src.

        TRACE_STEP(step + 1, [&](int i) { return buf[src][i]; });
    }
    __syncthreads();
    // TODO 3: the store from buf[src], positions base + k < n only.

    if (k == THREADS - 1) store_block_sum(block_sums, buf[src][SECTION_SIZE - 1], last_in, exclusive);
}
