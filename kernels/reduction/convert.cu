// convert.cu -- out[i] = op_store(op_load_at(in[i], i)): elements converted from one type to another on the GPU, as the
// kernels' loads and stores convert them (kernels/common/operators.cuh).  Two uses by the book's reductions
// (pyscan/reductions/book.py):
//   * simple.cu and convergent.cu reduce in place in global memory, so the host gives them a scratch copy of x
//     (PMPP §10.3 overwrites its input): when x's dtype is not the compute type T, or a map is given
//     (MAP_EXPRESSION, pyscan.reduce's map=: op_load_at applies it, element and index), this kernel makes that
//     copy (IN_TYPE = x's type, OUT_TYPE = T) instead of a byte copy, so the map costs no pass of its own;
//   * a reduction whose result dtype is not T (float16, int8, bool, ...) combines into a one-element T array,
//     since atomics and the partials are T; this kernel then stores it as the result (IN_TYPE = T, OUT_TYPE =
//     VALUE_TYPE), rounding once.
// A grid-stride loop: any n with any grid.
#include "../common/operators.cuh"

extern "C" __global__ void convert_elements(OUT_TYPE* __restrict__ out, const IN_TYPE* __restrict__ in, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = op_store(op_load_at(in[i], i));
}
