// naive.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4, "naive parallel prefix" (Hillis-Steele):
// one thread per element in one block of shared memory; at step `iter` (1, 2, 4, ...) every element k >= iter
// becomes op(sum_buf[k - iter], sum_buf[k]).  log2(N) steps, N*log2(N) - (N - 1) combines: not work-efficient.
//
// BOOK BUG, FIXED HERE.  The book's loop body is
//     __syncthreads();
//     if (tid >= iter) sum_buf[tid] = sum_buf[tid] + sum_buf[tid - iter];
// with no barrier between the read of sum_buf[tid - iter] and the write of sum_buf[tid].  Thread tid - iter of
// the same step may already have written its new value when thread tid reads it (threads of different warps run
// in any order): a write-after-read race (PMPP §11.2), which gives wrong sums for blocks of more than one warp.
// The fix: read the left neighbour into a register, __syncthreads(), then write.  (That makes it PMPP's
// Kogge-Stone kernel, Fig. 11.3: Hillis-Steele and Kogge-Stone are the same scan; see kogge_stone.cu.)
//
// The book also hard-codes 1024 elements (10 iterations) and one block.  Here the section size is a #define
// (SECTION_SIZE <= 2048; THREADS <= 1024 threads, each handles SECTION_SIZE / THREADS elements k = tid,
// tid + THREADS, ...), padding past n with the identity, and pyscan's hierarchical scheme (PMPP §11.6) runs one
// block per section for any length.  Exclusive scans use the shifted load (scan_section.cuh).
#include "../common/scan_section.cuh"

#ifndef THREADS
#define THREADS (SECTION_SIZE < 1024 ? SECTION_SIZE : 1024)
#endif
#define ELEMS (SECTION_SIZE / THREADS)
static_assert(SECTION_SIZE % THREADS == 0 && THREADS <= 1024, "naive: SECTION_SIZE must be a multiple of THREADS <= 1024");

extern "C" __global__ void __launch_bounds__(THREADS)
naive_scan(OUT_TYPE* out, const IN_TYPE* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T sum_buf[SECTION_SIZE];
    const int tid = threadIdx.x;
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    for (int e = 0; e < ELEMS; ++e) sum_buf[tid + e * THREADS] = load_element(in, base, tid + e * THREADS, n, exclusive);
    TRACE_STEP(0, [&](int i) { return sum_buf[i]; });

    int step = 0;
    for (int iter = 1; iter < SECTION_SIZE; iter *= 2, ++step) {
        __syncthreads();  // the previous step's writes are visible
        T left[ELEMS];
        for (int e = 0; e < ELEMS; ++e) {
            const int k = tid + e * THREADS;
            if (k >= iter) left[e] = sum_buf[k - iter];
        }
        __syncthreads();  // THE FIX: every read of this step happens before any write of it
        int combines = 0;
        for (int e = 0; e < ELEMS; ++e) {
            const int k = tid + e * THREADS;
            if (k >= iter) {
                sum_buf[k] = op_combine(left[e], sum_buf[k]);
                ++combines;
            }
        }
        TRACE_STEP(step + 1, [&](int i) { return sum_buf[i]; });
        COUNT_STEP(step, combines);
    }
    __syncthreads();
    for (int e = 0; e < ELEMS; ++e) {
        const int k = tid + e * THREADS;
        if (base + k < n) out[base + k] = op_store(sum_buf[k]);
    }
    if (tid == THREADS - 1) store_block_sum(block_sums, sum_buf[SECTION_SIZE - 1], last_in, exclusive);
}
