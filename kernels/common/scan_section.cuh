// scan_section.cuh -- what every section-scan kernel of kernels/scan/ shares: loading a section (padded with the
// identity, shifted for exclusive scans), storing it, the section total for the hierarchical scheme (PMPP §11.6),
// and the two debug builds:
//
//   TRACE=1       the kernel takes a trailing `T* trace` and writes its shared array after every step to
//                 trace[step * SECTION_SIZE + i] (step 0 = after the load).  For integer input the trace equals
//                 the NumPy step-model step for step (tests/gpu/test_scan_trace_gpu.py).  Run with one block.
//   COUNT_WORK=1  the kernel takes a trailing `unsigned long long* counters` (after `trace` if both):
//                 counters[0] += every op_combine the scan phases perform, counters[1 + s] += 1 for every warp
//                 with at least one thread that combined at combine step s (s = 0, 1, ...: the trace's steps
//                 1, 2, ...): counted work beside the book's formulas (PMPP §11.2-§11.4; tests/gpu/test_scan_trace_gpu.py).
//
// The contract of a section kernel (pyscan/scans/hierarchical.py):
//   extern "C" __global__ void NAME(OUT_TYPE* out, const IN_TYPE* in, T* block_sums, long long n, int exclusive
//                                   SCAN_EXTRA_PARAMS)
// Block b scans [b*SECTION_SIZE, (b+1)*SECTION_SIZE) of `in`, positions past n count as op_identity().  Elements
// are read with op_load (load_element) and written with op_store; the section totals are T.
#pragma once

#include "operators.cuh"

#ifndef SECTION_SIZE
#define SECTION_SIZE 1024
#endif
#ifndef TRACE
#define TRACE 0
#endif
#ifndef COUNT_WORK
#define COUNT_WORK 0
#endif

#if TRACE && COUNT_WORK
#define SCAN_EXTRA_PARAMS , T* trace, unsigned long long* counters
#elif TRACE
#define SCAN_EXTRA_PARAMS , T* trace
#elif COUNT_WORK
#define SCAN_EXTRA_PARAMS , unsigned long long* counters
#else
#define SCAN_EXTRA_PARAMS
#endif

// First element of this block's section.  long long: lengths can pass 2^31 elements.
__device__ __forceinline__ long long section_base() { return (long long)blockIdx.x * SECTION_SIZE; }

// Element k (0 <= k < SECTION_SIZE) of the section as the scan sees it.  Inclusive: in[base + k].  Exclusive:
// PMPP §11.2's shifted load, in[base + k - 1], and the identity at k = 0 -- an inclusive scan of the shifted
// section is the exclusive scan of the section.  Past n: the identity, so a partial last section needs no
// special case in the scan itself (PMPP's kernels pad with 0.0f; Fig. 11.7 forgets to).
__device__ __forceinline__ T load_element(const IN_TYPE* in, long long base, int k, long long n, int exclusive) {
    const long long g = base + k - (exclusive ? 1 : 0);
    if (exclusive && k == 0) return op_identity();
    return g < n ? op_load(in[g]) : op_identity();
}

// The last input element of the section (identity past n).  An exclusive scan's last value misses it, so the
// section total is op(last value, last input).  Read at the start of the kernel, before anything is stored, so
// that `out` may alias `in`.
__device__ __forceinline__ T section_last_input(const IN_TYPE* in, long long base, long long n, int exclusive) {
    const long long g = base + SECTION_SIZE - 1;
    return (exclusive && g < n) ? op_load(in[g]) : op_identity();
}

// The section's total for block_sums[blockIdx.x] (PMPP Fig. 11.9's S array), from the scanned last value.
__device__ __forceinline__ void store_block_sum(T* block_sums, T last_scanned, T last_input, int exclusive) {
    if (block_sums != nullptr) block_sums[blockIdx.x] = exclusive ? op_combine(last_scanned, last_input) : last_scanned;
}

#if TRACE
// Copy the shared array (read through `at`, which maps logical index -> value) to the trace buffer's row `step`.
// The barriers make the whole step visible before the copy and keep the next step's writes after it; they only
// exist in the trace build.
// Block 0 writes (the other blocks of a multi-section launch would write the same rows).
template <typename At>
__device__ __forceinline__ void trace_step(T* trace, int step, At at) {
    __syncthreads();
    if (blockIdx.x == 0)
        for (int i = threadIdx.x; i < SECTION_SIZE; i += blockDim.x) trace[(long long)step * SECTION_SIZE + i] = at(i);
    __syncthreads();
}
#define TRACE_STEP(step, at) trace_step(trace, (step), (at))
#else
#define TRACE_STEP(step, at) ((void)0)
#endif

#if COUNT_WORK
// Called by every thread of the block at the same point (uniform control flow), with the number of combines the
// thread did in combine step `step`.
__device__ __forceinline__ void count_step(unsigned long long* counters, int step, int combines) {
    const int lane = threadIdx.x % 32;
    const int width = min(32, (int)blockDim.x - ((int)threadIdx.x - lane));  // lanes of this (maybe partial) warp
    const unsigned mask = width == 32 ? 0xffffffffu : ((1u << width) - 1u);
    const unsigned active = __ballot_sync(mask, combines > 0);
    if (combines > 0) atomicAdd(&counters[0], (unsigned long long)combines);
    if (lane == 0 && active != 0u) atomicAdd(&counters[1 + step], 1ull);
}
#define COUNT_STEP(step, combines) count_step(counters, (step), (combines))
#else
#define COUNT_STEP(step, combines) ((void)0)
#endif
