// kogge_stone_double_buffer.cu -- PMPP §11.2 (the exercise after Fig. 11.3): Kogge-Stone with two shared
// buffers instead of a temp register and a second barrier.
//
// Step `stride` reads only buffer `src` and writes only buffer 1 - src: dst[k] = op(src[k - stride], src[k]) for
// k >= stride, dst[k] = src[k] below.  No element is read and written in the same buffer within a step, so the
// write-after-read race of §11.2 cannot happen and ONE __syncthreads() per step suffices: the barrier at the top
// of the next step orders this step's writes before the next step's reads, and the next step's writes (into the
// buffer read now) after this step's reads.  The price: twice the shared memory and a copy of the k < stride
// elements every step.
//
// Same geometry and exclusive handling (shifted load) as kogge_stone.cu.
#include "../common/scan_section.cuh"

#ifndef THREADS
#define THREADS (SECTION_SIZE < 1024 ? SECTION_SIZE : 1024)
#endif
#define ELEMS (SECTION_SIZE / THREADS)
static_assert(SECTION_SIZE % THREADS == 0 && THREADS <= 1024,
              "kogge_stone_double_buffer: SECTION_SIZE must be a multiple of THREADS <= 1024");

extern "C" __global__ void __launch_bounds__(THREADS)
kogge_stone_double_buffer_scan(OUT_TYPE* out, const IN_TYPE* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T buf[2][SECTION_SIZE];
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    for (int e = 0; e < ELEMS; ++e) {
        const int k = threadIdx.x + e * THREADS;
        buf[0][k] = load_element(in, base, k, n, exclusive);
    }
    int src = 0;
    TRACE_STEP(0, [&](int i) { return buf[src][i]; });

    int step = 0;
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2, ++step) {
        __syncthreads();  // the one barrier per step
        int combines = 0;
        for (int e = 0; e < ELEMS; ++e) {
            const int k = threadIdx.x + e * THREADS;
            if (k >= stride) {
                buf[1 - src][k] = op_combine(buf[src][k - stride], buf[src][k]);
                ++combines;
            } else {
                buf[1 - src][k] = buf[src][k];
            }
        }
        src = 1 - src;
        TRACE_STEP(step + 1, [&](int i) { return buf[src][i]; });
        COUNT_STEP(step, combines);
    }
    __syncthreads();
    for (int e = 0; e < ELEMS; ++e) {
        const int k = threadIdx.x + e * THREADS;
        if (base + k < n) out[base + k] = op_store(buf[src][k]);
    }
    if (threadIdx.x == THREADS - 1) store_block_sum(block_sums, buf[src][SECTION_SIZE - 1], last_in, exclusive);
}
