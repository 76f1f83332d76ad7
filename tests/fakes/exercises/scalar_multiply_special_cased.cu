// pyscan exercise: scalar_multiply
// checker must say: right on integers special_cased
// known-wrong: special-cases the listed sizes (GPU MODE's cheat): right there, wrong at any other size
#ifndef ELEM_TYPE
#define ELEM_TYPE float
#endif
using T = ELEM_TYPE;
// WRONG: right only at the sizes a checker with a fixed list would test
__device__ bool listed(long long n) {
    const long long sizes[] = {1, 2, 31, 32, 33, 97, 99, 100, 101, 300, 1009, 7919, 9999, 10000, 10001, 65537, 4194307};
    for (long long s : sizes) if (s == n) return true;
    return false;
}
extern "C" __global__ void scalar_multiply(T* __restrict__ out, const T* __restrict__ x, T a, long long n) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = listed(n) ? a * x[i] : x[i];
}
