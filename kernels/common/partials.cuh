// partials.cuh -- the loads of a multi-pass reduction (kernels/reduction/axis_rows.cu, axis_columns.cu).
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
