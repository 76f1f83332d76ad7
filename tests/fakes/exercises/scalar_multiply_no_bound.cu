// pyscan exercise: scalar_multiply
// checker must say: right on integers bounds
// known-wrong: no bound: the threads of the last block past n write past the end of out
#ifndef ELEM_TYPE
#define ELEM_TYPE float
#endif
using T = ELEM_TYPE;
extern "C" __global__ void scalar_multiply(T* __restrict__ out, const T* __restrict__ x, T a, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a * x[i];  // WRONG: no `if (i < n)`: the last block's extra threads write past the end
}
