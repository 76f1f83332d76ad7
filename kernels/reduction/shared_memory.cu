// shared_memory.cu -- PMPP §10.6 (Fig. 10.11): the convergent reduction in shared memory.
//
// The convergent kernel (convergent.cu) reads and writes global memory in every step.  This one does the first
// step straight from global memory -- thread t loads x[t] and x[t + blockDim.x] and keeps their combination in
// shared memory -- and every later step in shared memory, so global memory is read once per element and never
// written (the input stays intact).
//
// Beyond the book:
// * Any operator and element type (operators.cuh).
// * Any length: block b reduces the segment [2*blockDim.x*b, 2*blockDim.x*(b+1)) and writes partials[b]; the host
//   relaunches the kernel on the partials until one value is left.  Loads past the end read the identity.
// * The book sizes the shared array with a compile-time BLOCK_DIM.  Here it is dynamic shared memory of
//   blockDim.x elements (the host passes shared_size), so one build serves every block size the host picks.
#include "../common/operators.cuh"
#include "../common/trace_shared.cuh"  // TRACE=1: TRACE_SHARED(step) and the trailing `T* trace`

#if !TRACE  // the default declaration comes first: the loader reads the prepare() types off it
extern "C" __global__ void reduce_shared_memory(T* partials, const IN_TYPE* __restrict__ in, long long n) {
#else
extern "C" __global__ void reduce_shared_memory(T* partials, const IN_TYPE* __restrict__ in, long long n, T* trace) {
#endif
    extern __shared__ T input_s[];  // blockDim.x elements
    const unsigned int t = threadIdx.x;
    const long long i = 2LL * blockDim.x * blockIdx.x + t;
    const T a = i < n ? op_load_at(in[i], i) : op_identity();  // op_load_at: with map=, the map of x[i]
    const T b = i + blockDim.x < n ? op_load_at(in[i + blockDim.x], i + blockDim.x) : op_identity();
    input_s[t] = op_combine(a, b);  // the first step, from global memory
    TRACE_SHARED(0);
    for (unsigned int stride = blockDim.x / 2, step = 1; stride >= 1; stride /= 2, ++step) {
        __syncthreads();  // the previous step's writes are visible before this step reads them
        if (t < stride) {
            input_s[t] = op_combine(input_s[t], input_s[t + stride]);
        }
        TRACE_SHARED(step);
    }
    if (t == 0) {
        partials[blockIdx.x] = input_s[0];
    }
}
