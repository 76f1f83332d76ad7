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
extern "C" __global__ void reduce_shared_memory(T* partials, const T* __restrict__ in, long long n) {
#else
extern "C" __global__ void reduce_shared_memory(T* partials, const T* __restrict__ in, long long n, T* trace) {
#endif
    extern __shared__ T input_s[];  // blockDim.x elements
    const unsigned int t = threadIdx.x;
    const long long i = 2LL * blockDim.x * blockIdx.x + t;
    const T a = i < n ? in[i] : op_identity();
    const T b = i + blockDim.x < n ? in[i + blockDim.x] : op_identity();
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
