// scalar_multiply.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4 ("SourceModule"):
// the first hand-written kernel, out[i] = a * x[i].
//
// The book launches one thread per element with a single block, so it only works up to 1024 elements.
// This version uses a grid-stride loop: any grid covers any length, and the host can size the grid for
// the device instead of for the data.
#ifndef ELEM_TYPE
#define ELEM_TYPE float
#endif
using T = ELEM_TYPE;  // the macro is not called T: that would rewrite `template <typename T>` in CUDA's headers

extern "C" __global__ void scalar_multiply(T* __restrict__ out, const T* __restrict__ x, T a, long long n) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = a * x[i];
    }
}
