// pyscan exercise: scalar_multiply
// Hands-On GPU Programming with Python and CUDA, ch. 4 (SourceModule), from the chapter's questions.
//
// out[i] = a * x[i] for every i < n.  The book's kernel uses threadIdx.x alone, so it runs in one block of at most
// 1024 threads.  Make it run over a grid of blocks: the checker launches 10,000 elements with block=(100,1,1),
// grid=(100,1,1), as the question asks, and other lengths with block=(100,1,1) and enough blocks to cover n.
//
// Check it:  python -m pyscan exercise check scalar_multiply.cu
#ifndef ELEM_TYPE
#define ELEM_TYPE float
#endif
using T = ELEM_TYPE;  // the element type the checker builds for (int, float, ...)

extern "C" __global__ void scalar_multiply(T* __restrict__ out, const T* __restrict__ x, T a, long long n) {
    // TODO: this thread's index i in the whole grid (blockIdx.x, blockDim.x, threadIdx.x), and a bound so that
    // no thread writes past out[n - 1].
}
