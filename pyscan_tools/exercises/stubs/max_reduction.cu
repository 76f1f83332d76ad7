// pyscan exercise: max_reduction
// PMPP ch. 10's exercises: a max reduction of any length.
//
// The shared-memory reduction (PMPP §10.6, Fig. 10.11) with max instead of +.  Block b reduces the segment
// [2 * blockDim.x * b, 2 * blockDim.x * (b + 1)) of `in` and writes its maximum to partials[b]; the host relaunches
// the kernel on the partials until one value is left, so any length works -- if every load past n reads the right
// identity: the smallest value of the type (op_identity(), -inf for floats), NOT 0 (the checker's inputs are
// negative too).  The checker builds it with OP=OP_MAX, so op_combine(a, b) is the max (keeping a NaN like NumPy).
//
// TRACE_SHARED(step) copies input_s after each step for the checker: leave them where they are.
//
// Check it:  python -m pyscan exercise check max_reduction.cu
#include "pyscan_headers/common/operators.cuh"
#include "pyscan_headers/common/trace_shared.cuh"

#if !TRACE
extern "C" __global__ void reduce_shared_memory(T* partials, const T* __restrict__ in, long long n) {
#else
extern "C" __global__ void reduce_shared_memory(T* partials, const T* __restrict__ in, long long n, T* trace) {
#endif
    extern __shared__ T input_s[];  // blockDim.x elements
    const unsigned int t = threadIdx.x;
    const long long i = 2LL * blockDim.x * blockIdx.x + t;
    // TODO 1: input_s[t] = the max of in[i] and in[i + blockDim.x] (the identity past n).

    TRACE_SHARED(0);
    for (unsigned int stride = blockDim.x / 2, step = 1; stride >= 1; stride /= 2, ++step) {
        // TODO 2: one step of the tree.

        TRACE_SHARED(step);
    }
    // TODO 3: thread 0 writes input_s[0] to partials[blockIdx.x].
}
