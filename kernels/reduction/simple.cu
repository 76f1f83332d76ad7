// simple.cu -- PMPP §10.3 (Fig. 10.6): the simple sum-reduction kernel, one block, in place in global memory.
//
// Thread t owns element i = 2t of its block's segment.  In the step with stride s (1, 2, 4, ..., blockDim.x)
// the threads whose index is a multiple of s add the element s to their right into their own:
//
//     stride 1:  x0+=x1   x2+=x3   x4+=x5   x6+=x7      every thread works
//     stride 2:  x0+=x2            x4+=x6               every 2nd thread works
//     stride 4:  x0+=x4                                 every 4th thread works
//
// so after log2(2*blockDim.x) steps x0 holds the block's result.  This is the *divergent* version (PMPP §10.4):
// the active threads are spread out (t % stride == 0), so every warp stays partly busy for many steps.  See
// convergent.cu for the fix, and COUNT_WORK below for measuring it.
//
// Book fix: the seed's listing wrote the loop condition as `stride = blockDim.x`, an assignment (always true for
// a non-empty block, so the loop never ends).  The condition is `stride <= blockDim.x`: the last step has stride
// blockDim.x and combines x0 with x(blockDim.x), the other half of the 2*blockDim.x-element segment.
//
// Beyond the book:
// * Any operator (add/max/min) and element type, via operators.cuh; integer add wraps.
// * Any length.  The book reduces exactly 2*blockDim.x elements in one block.  Here block b reduces the
//   segment [2*blockDim.x*b, 2*blockDim.x*(b+1)) of `work` and writes its result to partials[b]; the host
//   launches the kernel again on the partials until one value is left.  A partial last segment is handled by
//   skipping every combine whose right operand lies past the end (the same as combining with the identity).
// * The kernel works in place, as the book's does: `work` is overwritten (the host passes a scratch copy).
//
// COUNT_WORK=1 builds a version with a trailing `unsigned long long* counters` argument that records the work
// done (PMPP §10.4's "execution resources"): counters[0] += operator applications, and counters[1 + step] +=
// the number of warps with at least one active thread in that step.  The host zeroes the counters and passes
// 1 + log2(2*blockDim.x) of them.
// TRACE=1 (default 0) adds a trailing `T* trace` (after the counters of a COUNT_WORK build) of
// log2(2*blockDim.x) * n elements: the array after every step, for pyscan.reductions.steps' pictures.
#include "../common/operators.cuh"

#ifndef COUNT_WORK
#define COUNT_WORK 0
#endif

#if COUNT_WORK
#include "../common/count_work.cuh"
#endif

#ifndef TRACE
#define TRACE 0
#endif

// The counting build's extra parameter is not in the declaration the Python loader reads; the host passes the
// prepare() argument types ("PPq" / "PPqP") itself.
extern "C" __global__ void reduce_simple(T* partials, T* work, long long n
#if COUNT_WORK
                                         , unsigned long long* counters
#endif
#if TRACE
                                         , T* trace
#endif
) {
    const long long segment = 2LL * blockDim.x * blockIdx.x;
    const long long remaining = n - segment;
    const unsigned int len = remaining < 2LL * blockDim.x ? (unsigned int)remaining : 2u * blockDim.x;
    T* input = work + segment;
    const unsigned int i = 2 * threadIdx.x;
    int step = 0;
    for (unsigned int stride = 1; stride <= blockDim.x; stride *= 2, ++step) {  // book fix: `<=`, not `=`
        // The book's test is threadIdx.x % stride == 0; `i + stride < len` only matters in a partial last segment.
        const bool active = threadIdx.x % stride == 0 && i + stride < len;
        if (active) {
            input[i] = op_combine(input[i], input[i + stride]);
        }
#if COUNT_WORK
        count_step(active, step, counters);
#endif
#if TRACE
        // The segment after this step -> trace[step * n + its global index] (pictures checked against the NumPy
        // model).  Each thread copies the elements 2 * threadIdx.x and 2 * threadIdx.x + 1 (only this thread writes the first; nobody writes the second), so no extra barrier is needed.
        if (2 * threadIdx.x < len) trace[step * n + segment + 2 * threadIdx.x] = input[2 * threadIdx.x];
        if (2 * threadIdx.x + 1 < len) trace[step * n + segment + 2 * threadIdx.x + 1] = input[2 * threadIdx.x + 1];
#endif
        // Every thread reaches this barrier (it is outside the if): the next step reads what this one wrote.
        // __syncthreads also makes this block's global-memory writes visible to the block.
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = input[0];
    }
}
