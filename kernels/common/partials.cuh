// partials.cuh -- the loads of a multi-pass reduction (kernels/reduction/axis_rows.cu, axis_columns.cu).
// Word<B>::type: an unsigned or vector type of B bytes, for reading B bytes of x (several elements) as one load.
//
// A first pass reads x: operators.cuh's op_load converts each element to the result dtype (VALUE_TYPE) and widens it
// to T, NumPy's conversion to the accumulator, done in the load (no extra pass).  A later pass reads the partials an
// earlier pass wrote in T itself (PARTIALS_IN = 1): they are read as they are, with no second rounding through
// VALUE_TYPE, so float16 sums stay float32 until the last store.  Stores are operators.cuh's op_store, which keeps a
// partial (OUT_TYPE == T) as it is and rounds or cuts only a result.
#pragma once

#include "operators.cuh"

#ifndef PARTIALS_IN
#define PARTIALS_IN 0
#endif

__device__ __forceinline__ T load_element(IN_TYPE v) {
    if constexpr (PARTIALS_IN) return convert<T>(v);
    else return op_load(v);
}

template <int B> struct Word;
template <> struct Word<1> { using type = unsigned char; };
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned int; };
template <> struct Word<8> { using type = uint2; };
template <> struct Word<16> { using type = int4; };
