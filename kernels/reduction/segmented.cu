// segmented.cu -- PMPP §10.7 (Fig. 10.13): segmented multiblock reduction with atomic operations.
//
// Many blocks, each reducing its own segment of 2*blockDim.x elements as in shared_memory.cu, then thread 0 of
// each block combines the block's result into the single output with one atomic operation.  One launch covers
// any length; the output must hold the operator's identity first (fill_identity, below, queued before it).
//
// Book fixes:
// * The seed's listing loads `input_s[t] = input[t] + input[t + BLOCK_DIM]`, ignoring the block's offset, so
//   every block reduces the first segment.  The load uses i = segment + t: input[i] and input[i + BLOCK_DIM].
// * It ends with `atomicAdd(&output, input_s[0])`, the address of the pointer variable itself; the output is
//   `*output`, so the call is atomicAdd(output, ...) (atomic_combine(out, ...) here).
//
// Beyond the book: any operator and element type.  add/max/min on int and long long and add on float/double use
// CUDA's native atomics; float/double max/min use an atomicCAS loop (kernels/common/reduce_atomics.cuh).  With
// floating-point add the order in which blocks' results arrive varies, so the last bits can vary from run to
// run.  The shared array is dynamic shared memory of blockDim.x elements (the book: a compile-time BLOCK_DIM).
// Loads past the end read the identity.
#include "../common/operators.cuh"
#include "../common/reduce_atomics.cuh"

extern "C" __global__ void reduce_segmented(T* out, const IN_TYPE* __restrict__ in, long long n) {
    extern __shared__ T input_s[];  // blockDim.x elements
    const long long segment = 2LL * blockDim.x * blockIdx.x;
    const unsigned int t = threadIdx.x;
    const long long i = segment + t;  // book fix: the load is offset by the block's segment
    const T a = i < n ? op_load_at(in[i], i) : op_identity();  // op_load_at: with map=, the map of x[i]
    const T b = i + blockDim.x < n ? op_load_at(in[i + blockDim.x], i + blockDim.x) : op_identity();
    input_s[t] = op_combine(a, b);
    for (unsigned int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (t < stride) {
            input_s[t] = op_combine(input_s[t], input_s[t + stride]);
        }
    }
    if (t == 0) {
        atomic_combine(out, input_s[0]);  // book fix: the pointer `out`, not `&out`
    }
}
