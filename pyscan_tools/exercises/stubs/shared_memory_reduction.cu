// pyscan exercise: shared_memory_reduction
// PMPP §10.6, Fig. 10.11: the convergent reduction in shared memory.
//
// Block b reduces the segment [2 * blockDim.x * b, 2 * blockDim.x * (b + 1)) of `in` and writes the result to
// partials[b]; the host relaunches the kernel on the partials until one value is left.  Thread t first combines
// in[i] and in[i + blockDim.x] (i = segment + t; the identity op_identity() past n) into input_s[t]; then the tree
// in shared memory: stride = blockDim.x / 2, ..., 1, the threads t < stride combine input_s[t + stride] into
// input_s[t], a __syncthreads() before every step.  input_s is dynamic shared memory of blockDim.x elements.
//
// TRACE_SHARED(step) (pyscan_headers/common/trace_shared.cuh) copies input_s after each step for the checker:
// leave them where they are.
//
// Check it:  python -m pyscan exercise check shared_memory_reduction.cu
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
    // TODO 1: the first combine from global memory into input_s[t] (the identity past n).

    TRACE_SHARED(0);
    for (unsigned int stride = blockDim.x / 2, step = 1; stride >= 1; stride /= 2, ++step) {
        // TODO 2: one step of the tree.

        TRACE_SHARED(step);
    }
    // TODO 3: thread 0 writes input_s[0] to partials[blockIdx.x].
}
