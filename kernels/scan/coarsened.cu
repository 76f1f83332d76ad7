// coarsened.cu -- PMPP §11.5 (Fig. 11.8): a thread-coarsened scan of one section of SECTION_SIZE elements with
// THREADS = SECTION_SIZE / COARSEN threads.  Each thread owns the sub-section [tid*COARSEN, (tid+1)*COARSEN).
//
//   load     the block loads the section into shared memory with coalesced accesses (thread tid reads elements
//            tid, tid + THREADS, ...), not sub-section by sub-section, which would stride global memory
//   phase 1  every thread scans its own sub-section sequentially (COARSEN - 1 combines, no barrier)
//   phase 2  Kogge-Stone (temp register + second barrier, as in Fig. 11.3) over the sub-sections' last elements,
//            in place: afterwards the last element of sub-section t is the op over sub-sections 0..t
//   phase 3  every thread t > 0 combines the last element of sub-section t - 1 into its first COARSEN - 1 elements
//   store    coalesced, like the load
// Work: N - 1 + (B log2 B - (B - 1)) + (B - 1)(COARSEN - 1) combines for B = THREADS; only log2(B) + 2 barrier
// steps.  Few, long sequential runs per thread is what makes this the fastest of the book's block scans.
//
// Shared-memory bank conflicts: in phase 1 thread tid walks tid*COARSEN + j, a stride of COARSEN words -- a
// COARSEN-way bank conflict.  Padding one element every 32 (index i lives at i + i/32) spreads a warp's accesses
// over all 32 banks for COARSEN = 8 and 4-byte elements; the logical layout (and the trace) is unchanged.
//
// Exclusive scans: the shifted load of §11.2 (scan_section.cuh).  Positions past n hold the identity.
#include "../common/scan_section.cuh"

#ifndef COARSEN
#define COARSEN 8
#endif
#define THREADS (SECTION_SIZE / COARSEN)
static_assert(SECTION_SIZE % COARSEN == 0 && THREADS >= 1 && THREADS <= 1024,
              "coarsened: SECTION_SIZE must be COARSEN times a thread count <= 1024");

#define PADDED(i) ((i) + (i) / 32)

extern "C" __global__ void __launch_bounds__(THREADS)
coarsened_scan(OUT_TYPE* out, const IN_TYPE* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T XY[PADDED(SECTION_SIZE)];
    const int tid = threadIdx.x;
    const int first = tid * COARSEN;  // this thread's sub-section: [first, first + COARSEN)
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);
#if TRACE
    auto at = [&](int i) { return XY[PADDED(i)]; };  // the trace shows the logical (unpadded) layout
#endif

    for (int k = tid; k < SECTION_SIZE; k += THREADS) XY[PADDED(k)] = load_element(in, base, k, n, exclusive);
    TRACE_STEP(0, at);
    __syncthreads();

    // Phase 1: sequential scan of the sub-section, the running value in a register.
    T acc = XY[PADDED(first)];
    for (int j = 1; j < COARSEN; ++j) {
        acc = op_combine(acc, XY[PADDED(first + j)]);
        XY[PADDED(first + j)] = acc;
    }
    TRACE_STEP(1, at);
    COUNT_STEP(0, COARSEN - 1);

    // Phase 2: Kogge-Stone over the last elements of the sub-sections.
    const int last = first + COARSEN - 1;
    int step = 1;
    for (int stride = 1; stride < THREADS; stride *= 2, ++step) {
        __syncthreads();
        T temp;
        if (tid >= stride) temp = op_combine(XY[PADDED(last - stride * COARSEN)], XY[PADDED(last)]);
        __syncthreads();  // no write-after-read race (PMPP §11.2)
        if (tid >= stride) XY[PADDED(last)] = temp;
        TRACE_STEP(step + 1, at);
        COUNT_STEP(step, tid >= stride ? 1 : 0);
    }
    __syncthreads();

    // Phase 3: add the op over all earlier sub-sections (the previous sub-section's last element, now complete).
    if (tid > 0) {
        const T before = XY[PADDED(first - 1)];
        for (int j = 0; j < COARSEN - 1; ++j) XY[PADDED(first + j)] = op_combine(before, XY[PADDED(first + j)]);
    }
    TRACE_STEP(step + 1, at);
    COUNT_STEP(step, tid > 0 ? COARSEN - 1 : 0);
    __syncthreads();

    for (int k = tid; k < SECTION_SIZE; k += THREADS) {
        if (base + k < n) out[base + k] = op_store(XY[PADDED(k)]);
    }
    if (tid == THREADS - 1) store_block_sum(block_sums, XY[PADDED(SECTION_SIZE - 1)], last_in, exclusive);
}
