// pyscan exercise: coarsened_reduction
// PMPP §10.8, Fig. 10.15: segmented reduction with thread coarsening.
//
// Block b covers the segment of COARSE_FACTOR * 2 * blockDim.x elements starting at
// COARSE_FACTOR * 2 * blockDim.x * b.  Thread t first combines on its own, with no barrier, the elements
// segment + t, segment + t + blockDim.x, ... (COARSE_FACTOR * 2 of them, those below n), then the shared-memory
// tree as in §10.6, then thread 0 combines the block's result into *out with one atomic: atomic_combine(out, v)
// (pyscan_headers/common/reduce_atomics.cuh; atomicAdd for a sum).  The host sets *out to the identity first
// (fill_identity, from the same header) and launches enough blocks to cover n in one launch.
//
// TRACE_SHARED(step) copies input_s after each step for the checker: leave them where they are.
//
// Check it:  python -m pyscan exercise check coarsened_reduction.cu
#include "pyscan_headers/common/operators.cuh"
#include "pyscan_headers/common/trace_shared.cuh"
#include "pyscan_headers/common/reduce_atomics.cuh"

#ifndef COARSE_FACTOR
#define COARSE_FACTOR 4
#endif

#if !TRACE
extern "C" __global__ void reduce_coarsened(T* out, const T* __restrict__ in, long long n) {
#else
extern "C" __global__ void reduce_coarsened(T* out, const T* __restrict__ in, long long n, T* trace) {
#endif
    extern __shared__ T input_s[];  // blockDim.x elements
    const long long segment = (long long)COARSE_FACTOR * 2 * blockDim.x * blockIdx.x;
    const unsigned int t = threadIdx.x;
    // TODO 1: the serial combine of this thread's COARSE_FACTOR * 2 elements into input_s[t].

    TRACE_SHARED(0);
    for (unsigned int stride = blockDim.x / 2, step = 1; stride >= 1; stride /= 2, ++step) {
        // TODO 2: one step of the tree.

        TRACE_SHARED(step);
    }
    // TODO 3: thread 0 combines input_s[0] into *out atomically.
}
