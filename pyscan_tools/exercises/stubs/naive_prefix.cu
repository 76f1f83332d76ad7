// pyscan exercise: naive_prefix
// Hands-On GPU Programming with Python and CUDA, ch. 4 (naive parallel prefix), from the chapter's questions: make the naive prefix
// sum work for any length up to 1024.
//
// One block of THREADS = SECTION_SIZE threads scans n <= SECTION_SIZE elements in shared memory, Hillis-Steele:
// at step `iter` (1, 2, 4, ...) every element k >= iter becomes op(sum_buf[k - iter], sum_buf[k]).
// * Positions k >= n must hold the identity, op_identity() (0 for a sum), and nothing is stored past out[n - 1].
// * The book's loop body `sum_buf[tid] = sum_buf[tid] + sum_buf[tid - iter];` reads a neighbour that another warp
//   may already have overwritten in the same step (a write-after-read race, PMPP §11.2): read into a register,
//   __syncthreads(), then write.
// * op_combine(a, b) is `+` for the sum (the checker also builds it for max); load_element(in, base, k, n,
//   exclusive) reads in[base + k] or the identity past n (and does the exclusive shift; here exclusive is 0).
//
// The section-kernel contract of pyscan (pyscan/scans/hierarchical.py): keep the signature, write out[0..n) and,
// if block_sums is not null, the section's total (the last line does that).  TRACE_STEP(...) copies the shared
// array after each step for the checker's step-by-step comparison: leave them where they are.
//
// Check it:  python -m pyscan exercise check naive_prefix.cu
#include "pyscan_headers/common/scan_section.cuh"

#ifndef THREADS
#define THREADS SECTION_SIZE
#endif
static_assert(THREADS == SECTION_SIZE && THREADS <= 1024, "naive_prefix: one thread per element, at most 1024");

extern "C" __global__ void __launch_bounds__(THREADS)
naive_scan(T* out, const T* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T sum_buf[SECTION_SIZE];
    const int tid = threadIdx.x;
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    // TODO 1: load this thread's element into sum_buf[tid] (the identity past n).

    TRACE_STEP(0, [&](int i) { return sum_buf[i]; });
    int step = 0;
    for (int iter = 1; iter < SECTION_SIZE; iter *= 2, ++step) {
        // TODO 2: one step of the naive prefix, without the write-after-read race.

        TRACE_STEP(step + 1, [&](int i) { return sum_buf[i]; });
    }
    __syncthreads();
    // TODO 3: store sum_buf[tid] to out[base + tid] for positions below n only.

    if (tid == THREADS - 1) store_block_sum(block_sums, sum_buf[SECTION_SIZE - 1], last_in, exclusive);
}
