// pyscan exercise: hierarchical_scan
// checker must say: right on integers block_sums
// known-wrong: right kernels; the stub's driver, which never adds the block sums back
// kogge_stone.cu -- PMPP Fig. 11.3: the Kogge-Stone scan of one section in shared memory.
//
// At step `stride` (1, 2, 4, ... < SECTION_SIZE) element k >= stride becomes op(XY[k - stride], XY[k]), so after
// the step XY[k] holds the op over the 2*stride inputs ending at k.  log2(N) steps; N*log2(N) - (N - 1) combines
// (PMPP §11.3: not work-efficient, but few steps).
//
// The write-after-read race (PMPP §11.2): thread k reads XY[k - stride] while thread k - stride may be writing
// it in the same step.  Fig. 11.3 fixes it with a register `temp` and a second __syncthreads() between the reads
// and the writes -- done here.  (kogge_stone_double_buffer.cu removes the second barrier instead.)
//
// Exclusive scan: PMPP §11.2's shifted load -- thread k loads x[k - 1] (the identity at k = 0) and the same
// inclusive loop runs (scan_section.cuh: load_element).  Positions past n hold the identity (the book's 0.0f).
//
// SECTION_SIZE <= 2048 elements, THREADS <= 1024 threads; each thread handles the ELEMS = SECTION_SIZE / THREADS
// elements k = tid, tid + THREADS, ... (ELEMS = 1 is the book's kernel; 2 lets the work count reach N = 2048).
#include "../../../../kernels/common/scan_section.cuh"

#ifndef THREADS
#define THREADS (SECTION_SIZE < 1024 ? SECTION_SIZE : 1024)
#endif
#define ELEMS (SECTION_SIZE / THREADS)
static_assert(SECTION_SIZE % THREADS == 0 && THREADS <= 1024, "kogge_stone: SECTION_SIZE must be a multiple of THREADS <= 1024");

extern "C" __global__ void __launch_bounds__(THREADS)
kogge_stone_scan(T* out, const T* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T XY[SECTION_SIZE];
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    for (int e = 0; e < ELEMS; ++e) {
        const int k = threadIdx.x + e * THREADS;
        XY[k] = load_element(in, base, k, n, exclusive);
    }
    TRACE_STEP(0, [&](int i) { return XY[i]; });

    int step = 0;
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2, ++step) {
        __syncthreads();  // the previous step's writes (or the load) are visible
        T temp[ELEMS];
        for (int e = 0; e < ELEMS; ++e) {
            const int k = threadIdx.x + e * THREADS;
            if (k >= stride) temp[e] = op_combine(XY[k - stride], XY[k]);
        }
        __syncthreads();  // Fig. 11.3's second barrier: all reads of this step before any write (no WAR race)
        int combines = 0;
        for (int e = 0; e < ELEMS; ++e) {
            const int k = threadIdx.x + e * THREADS;
            if (k >= stride) {
                XY[k] = temp[e];
                ++combines;
            }
        }
        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
        COUNT_STEP(step, combines);
    }
    __syncthreads();
    for (int e = 0; e < ELEMS; ++e) {
        const int k = threadIdx.x + e * THREADS;
        if (base + k < n) out[base + k] = XY[k];
    }
    if (threadIdx.x == THREADS - 1) store_block_sum(block_sums, XY[SECTION_SIZE - 1], last_in, exclusive);
}


extern "C" __global__ void add_block_sums(OUT_TYPE* out, const T* partial, const T* scanned, long long n,
                                          long long section_size, long long first_section) {
    const long long section = (long long)blockIdx.x + first_section;
    // every thread reads the same word: one broadcast transaction
    const T before = section > 0 ? scanned[section - 1] : op_identity();
    const long long begin = section * section_size;
    const long long end = min(begin + section_size, n);
    for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) out[i] = op_store(op_combine(before, partial[i]));
}
