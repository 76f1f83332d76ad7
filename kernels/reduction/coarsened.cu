// coarsened.cu -- PMPP §10.8 (Fig. 10.15): segmented reduction with thread coarsening.
//
// In segmented.cu half the threads already sit idle after the first tree step, and the tree's
// log2(blockDim.x) barrier-separated steps are paid for every 2*blockDim.x elements.  Here each thread first
// combines COARSE_FACTOR*2 elements on its own, serially and without any synchronisation (the elements
// t, t + blockDim.x, t + 2*blockDim.x, ... of the block's segment, so a warp's loads stay coalesced), and only
// then do the threads run the shared-memory tree.  A block covers COARSE_FACTOR*2*blockDim.x elements, so there
// are COARSE_FACTOR times fewer blocks, trees and atomics.
//
// Beyond the book: any operator and element type (atomics as in segmented.cu, from reduce_atomics.cuh); loads
// past the end read the identity; the shared array is dynamic shared memory of blockDim.x elements.  The seed's
// slips fixed in segmented.cu (the load ignoring the block's offset, atomicAdd(&output, ...)) are fixed here too.
#include "../common/operators.cuh"
#include "../common/reduce_atomics.cuh"

#ifndef COARSE_FACTOR
#define COARSE_FACTOR 4
#endif

#ifndef TRACE
#define TRACE 0
#endif

// TRACE=1 (default 0) adds a trailing `T* trace` of (1 + log2(blockDim.x)) * gridDim.x * blockDim.x elements: the
// shared arrays of all blocks side by side (block b's thread t at b * blockDim.x + t) after every step, for
// pyscan.reductions.steps' pictures; the host passes its prepare() argument types ("PPqP").  Each thread
// copies only its own element, which only it writes, so no extra barrier is needed.
#if TRACE
#define TRACE_SHARED(step) trace[(long long)(step) * gridDim.x * blockDim.x + (long long)blockIdx.x * blockDim.x + t] = input_s[t]
#else
#define TRACE_SHARED(step)
#endif

#if !TRACE  // the default declaration comes first: the loader reads the prepare() types off it
extern "C" __global__ void reduce_coarsened(T* out, const T* __restrict__ in, long long n) {
#else
extern "C" __global__ void reduce_coarsened(T* out, const T* __restrict__ in, long long n, T* trace) {
#endif
    extern __shared__ T input_s[];  // blockDim.x elements
    const long long segment = (long long)COARSE_FACTOR * 2 * blockDim.x * blockIdx.x;
    const unsigned int t = threadIdx.x;
    const long long i = segment + t;
    T sum = i < n ? in[i] : op_identity();
    for (unsigned int tile = 1; tile < COARSE_FACTOR * 2; ++tile) {  // serial: no barriers, no idle threads
        const long long j = i + (long long)tile * blockDim.x;
        if (j < n) {
            sum = op_combine(sum, in[j]);
        }
    }
    input_s[t] = sum;
    TRACE_SHARED(0);
    for (unsigned int stride = blockDim.x / 2, step = 1; stride >= 1; stride /= 2, ++step) {
        __syncthreads();
        if (t < stride) {
            input_s[t] = op_combine(input_s[t], input_s[t + stride]);
        }
        TRACE_SHARED(step);
    }
    if (t == 0) {
        atomic_combine(out, input_s[0]);
    }
}
