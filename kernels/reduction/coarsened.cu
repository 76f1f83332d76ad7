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
#include "../common/trace_shared.cuh"  // TRACE=1: TRACE_SHARED(step) and the trailing `T* trace`
#include "../common/reduce_atomics.cuh"

#ifndef COARSE_FACTOR
#define COARSE_FACTOR 4
#endif

#if !TRACE  // the default declaration comes first: the loader reads the prepare() types off it
extern "C" __global__ void reduce_coarsened(T* out, const IN_TYPE* __restrict__ in, long long n) {
#else
extern "C" __global__ void reduce_coarsened(T* out, const IN_TYPE* __restrict__ in, long long n, T* trace) {
#endif
    extern __shared__ T input_s[];  // blockDim.x elements
    const long long segment = (long long)COARSE_FACTOR * 2 * blockDim.x * blockIdx.x;
    const unsigned int t = threadIdx.x;
    const long long i = segment + t;
    T sum = i < n ? op_load_at(in[i], i) : op_identity();  // op_load_at: with map=, the map of x[i]
    for (unsigned int tile = 1; tile < COARSE_FACTOR * 2; ++tile) {  // serial: no barriers, no idle threads
        const long long j = i + (long long)tile * blockDim.x;
        if (j < n) {
            sum = op_combine(sum, op_load_at(in[j], j));
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
