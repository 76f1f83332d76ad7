// pyscan exercise: convergent_reduction
// checker must say: right on integers|races and memory
// known-wrong: `<=` for `<`: reads one element past the segment
// convergent.cu -- PMPP §10.4 (Fig. 10.9): the convergent sum-reduction kernel, one block, in place in global
// memory.
//
// Thread t owns element t.  The stride starts at blockDim.x and halves every step; the threads t < stride add
// the element `stride` to their right into their own:
//
//     stride 4:  x0+=x4  x1+=x5  x2+=x6  x3+=x7     threads 0..3 work
//     stride 2:  x0+=x2  x1+=x3                     threads 0..1 work
//     stride 1:  x0+=x1                             thread 0 works
//
// The same number of operations as simple.cu, but the active threads are always the lowest-numbered ones, so
// whole warps go idle (and stop costing execution resources) as soon as the stride drops below their first
// thread, and the accesses x[t], x[t+stride] of a warp are consecutive (coalesced).
//
// The loop condition is `stride >= 1` (the seed's listings slip into assignments, `stride = ...`, in the loop
// conditions; see simple.cu): with an unsigned stride, halving 1 gives 0 and the loop stops after the stride-1
// step.
//
// Beyond the book (as in simple.cu): any operator and element type; any length, by one block per
// 2*blockDim.x-element segment writing partials[blockIdx.x], relaunched by the host on the partials; combines
// whose right operand lies past the end of a partial segment are skipped.  `work` is overwritten.
//
// COUNT_WORK=1: a trailing `unsigned long long* counters` (see simple.cu): counters[0] += operator
// applications, counters[1 + step] += warps with an active thread in that step.
// TRACE=1 (default 0) adds a trailing `T* trace` (after the counters of a COUNT_WORK build) of
// log2(2*blockDim.x) * n elements: the array after every step, for pyscan.reductions.steps' pictures.
#include "../../../kernels/common/operators.cuh"

#ifndef COUNT_WORK
#define COUNT_WORK 0
#endif

#if COUNT_WORK
#include "../../../kernels/common/count_work.cuh"
#endif

#ifndef TRACE
#define TRACE 0
#endif

// The counting build's extra parameter is not in the declaration the Python loader reads; the host passes the
// prepare() argument types ("PPq" / "PPqP") itself.
extern "C" __global__ void reduce_convergent(T* partials, T* work, long long n
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
    const unsigned int i = threadIdx.x;
    int step = 0;
    for (unsigned int stride = blockDim.x; stride >= 1; stride /= 2, ++step) {  // a comparison, not an assignment
        const bool active = threadIdx.x < stride && i + stride <= len;  // WRONG
        if (active) {
            input[i] = op_combine(input[i], input[i + stride]);
        }
#if COUNT_WORK
        count_step(active, step, counters);
#endif
#if TRACE
        // The segment after this step -> trace[step * n + its global index] (pictures checked against the NumPy
        // model).  Each thread copies the elements threadIdx.x and threadIdx.x + blockDim.x (only this thread writes the first; nobody writes the second), so no extra barrier is needed.
        if (threadIdx.x < len) trace[step * n + segment + threadIdx.x] = input[threadIdx.x];
        if (threadIdx.x + blockDim.x < len) trace[step * n + segment + threadIdx.x + blockDim.x] = input[threadIdx.x + blockDim.x];
#endif
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = input[0];
    }
}
