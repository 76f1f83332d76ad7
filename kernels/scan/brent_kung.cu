// brent_kung.cu -- PMPP Fig. 11.7: the Brent-Kung scan of one section of SECTION_SIZE = 2 * blockDim elements.
//
// Reduction tree (PMPP Fig. 11.5, top half): at stride 1, 2, ..., SECTION_SIZE/2 the element at
// index = (tid + 1) * 2 * stride - 1 becomes op(XY[index - stride], XY[index]).  Reverse tree (bottom half): at
// stride SECTION_SIZE/4, ..., 1 the element index + stride (index as above) becomes op(XY[index], XY[index +
// stride]), handing partial sums to the positions the reduction tree skipped.  2*log2(N) - 1 steps and
// 2N - 2 - log2(N) combines: work-efficient (PMPP §11.4).
//
// The index mapping is the book's divergence-free one: the active threads of a step are always tid = 0, 1, 2, ...
// (a prefix), so whole warps are either busy or idle instead of every warp having a few busy threads
// (`if ((tid + 1) % (2*stride) == 0)` would keep every warp busy for a handful of threads).
//
// Fixes / additions to the book: positions past n are padded with the identity (Fig. 11.7 leaves them
// uninitialised, which garbles the section total that the hierarchical scheme needs); any operator; exclusive scans
// by §11.2's shifted load (scan_section.cuh).
#include "../common/scan_section.cuh"

#define THREADS (SECTION_SIZE / 2)
static_assert(SECTION_SIZE >= 2 && (SECTION_SIZE & (SECTION_SIZE - 1)) == 0 && THREADS <= 1024,
              "brent_kung: SECTION_SIZE must be a power of two, 2 .. 2048");

extern "C" __global__ void __launch_bounds__(THREADS)
brent_kung_scan(OUT_TYPE* out, const IN_TYPE* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T XY[SECTION_SIZE];
    const int tid = threadIdx.x;
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    // Each thread loads two elements, tid and tid + blockDim: consecutive threads read consecutive addresses.
    XY[tid] = load_element(in, base, tid, n, exclusive);
    XY[tid + THREADS] = load_element(in, base, tid + THREADS, n, exclusive);
    TRACE_STEP(0, [&](int i) { return XY[i]; });

    int step = 0;
    for (int stride = 1; stride <= THREADS; stride *= 2, ++step) {  // reduction tree
        __syncthreads();
        const int index = (tid + 1) * 2 * stride - 1;
        const bool active = index < SECTION_SIZE;
        if (active) XY[index] = op_combine(XY[index - stride], XY[index]);
        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
        COUNT_STEP(step, active ? 1 : 0);
    }
    for (int stride = SECTION_SIZE / 4; stride > 0; stride /= 2, ++step) {  // reverse tree
        __syncthreads();
        const int index = (tid + 1) * 2 * stride - 1;
        const bool active = index + stride < SECTION_SIZE;
        if (active) XY[index + stride] = op_combine(XY[index], XY[index + stride]);
        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
        COUNT_STEP(step, active ? 1 : 0);
    }
    __syncthreads();
    if (base + tid < n) out[base + tid] = op_store(XY[tid]);
    if (base + tid + THREADS < n) out[base + tid + THREADS] = op_store(XY[tid + THREADS]);
    if (tid == THREADS - 1) store_block_sum(block_sums, XY[SECTION_SIZE - 1], last_in, exclusive);
}
