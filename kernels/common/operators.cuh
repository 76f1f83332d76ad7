// operators.cuh -- the element type T and the associative operator OP that the scan and reduction
// kernels are specialised for.  The Python loader injects them as #defines (ELEM_TYPE=float, OP=OP_MAX);
// the defaults below let every kernel compile on its own with `nvcc -arch=sm_90 -cubin file.cu`.
//
// The macro is ELEM_TYPE, not T: a macro named T would rewrite every `template <typename T>` in the CUDA
// headers.  The kernels use the type alias T declared below.
//
// PMPP ch. 10-11 write the kernels for `+` on float; a scan or reduction works for any associative
// operator with an identity element (PMPP §11.1), so the kernels call op_combine() and op_identity()
// instead of `+` and `0`.
#pragma once

#include <cuda/std/limits>
#include <cuda/std/type_traits>

#define OP_ADD 0
#define OP_MAX 1
#define OP_MIN 2

#ifndef ELEM_TYPE
#define ELEM_TYPE int
#endif
#ifndef OP
#define OP OP_ADD
#endif

using T = ELEM_TYPE;

#if OP != OP_ADD && OP != OP_MAX && OP != OP_MIN
#error "OP must be OP_ADD, OP_MAX or OP_MIN"
#endif

// a + b for integers wraps modulo 2^bits, as np.cumsum(x, dtype=x.dtype) does.  Signed overflow is
// undefined behaviour in C++, so integer addition is done on the unsigned type of the same width.
template <typename V>
__device__ __forceinline__ V add_wrapping(V a, V b) {
    if constexpr (cuda::std::is_integral<V>::value) {
        using U = typename cuda::std::make_unsigned<V>::type;
        return static_cast<V>(static_cast<U>(a) + static_cast<U>(b));
    } else {
        return a + b;
    }
}

// max/min that propagate NaN like NumPy's np.maximum.accumulate / np.max: once a NaN is seen it stays.
// (fmax/fmin would drop it.)  `a != a` is true only for NaN; for integers the compiler removes it.
template <typename V>
__device__ __forceinline__ V max_nan(V a, V b) { return (a != a || a > b) ? a : b; }
template <typename V>
__device__ __forceinline__ V min_nan(V a, V b) { return (a != a || a < b) ? a : b; }

__device__ __forceinline__ T op_combine(T a, T b) {
#if OP == OP_ADD
    return add_wrapping<T>(a, b);
#elif OP == OP_MAX
    return max_nan<T>(a, b);
#else
    return min_nan<T>(a, b);
#endif
}

// The identity e with op_combine(e, x) == x: 0 for add, the lowest value for max (-inf for floats),
// the highest for min (+inf for floats).  It pads partial sections and starts exclusive scans.
__device__ __forceinline__ T op_identity() {
#if OP == OP_ADD
    return T(0);
#elif OP == OP_MAX
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) return -cuda::std::numeric_limits<T>::infinity();
    else return cuda::std::numeric_limits<T>::lowest();
#else
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) return cuda::std::numeric_limits<T>::infinity();
    else return cuda::std::numeric_limits<T>::max();
#endif
}
