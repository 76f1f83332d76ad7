// pyscan exercise: scalar_multiply
// checker must say: right on integers block_sums
// known-wrong: threadIdx.x alone: only the first block's elements are written
#ifndef ELEM_TYPE
#define ELEM_TYPE float
#endif
using T = ELEM_TYPE;
extern "C" __global__ void scalar_multiply(T* __restrict__ out, const T* __restrict__ x, T a, long long n) {
    const long long i = threadIdx.x;  // WRONG: the book's one-block index; every block does elements 0..99
    if (i < n) out[i] = a * x[i];
}
