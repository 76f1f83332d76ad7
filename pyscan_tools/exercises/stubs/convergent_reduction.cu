// pyscan exercise: convergent_reduction
// PMPP §10.4, Fig. 10.9: the convergent reduction, in place in global memory.
//
// Block b reduces the segment [2 * blockDim.x * b, 2 * blockDim.x * (b + 1)) of `work` (overwriting it) and writes
// the result to partials[b]; the host relaunches the kernel on the partials until one value is left, so every
// length works.  Thread t owns element t of the segment.  The stride starts at blockDim.x and halves every step;
// the threads t < stride combine element t + stride into element t -- when t + stride lies inside the segment
// (the last segment may be shorter: len below).  A __syncthreads() after every step.  Use op_combine(a, b) (`+`
// for the sum) so that the same kernel also does max and min.
//
// TRACE (the checker's step-by-step build) adds `T* trace`: the block's segment after every step, copied by the
// code between #if TRACE and #endif below -- leave it where it is, at the end of each step.
//
// Check it:  python -m pyscan exercise check convergent_reduction.cu
#include "pyscan_headers/common/operators.cuh"

#ifndef TRACE
#define TRACE 0
#endif

extern "C" __global__ void reduce_convergent(T* partials, T* work, long long n
#if TRACE
                                             , T* trace
#endif
) {
    const long long segment = 2LL * blockDim.x * blockIdx.x;
    const long long remaining = n - segment;
    const unsigned int len = remaining < 2LL * blockDim.x ? (unsigned int)remaining : 2u * blockDim.x;
    T* input = work + segment;
    const unsigned int i = threadIdx.x;
    int step = 0;
    for (unsigned int stride = blockDim.x; stride >= 1; stride /= 2, ++step) {
        // TODO 1: if i < stride and i + stride < len: input[i] = op_combine(input[i], input[i + stride]).

#if TRACE
        if (threadIdx.x < len) trace[step * n + segment + threadIdx.x] = input[threadIdx.x];
        if (threadIdx.x + blockDim.x < len) trace[step * n + segment + threadIdx.x + blockDim.x] = input[threadIdx.x + blockDim.x];
#endif
        // TODO 2: the barrier of the step.
    }
    // TODO 3: thread 0 writes the block's result to partials[blockIdx.x].
}
