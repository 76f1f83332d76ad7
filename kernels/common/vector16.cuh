// vector16.cuh -- 16 bytes of elements seen as one vector load and as its elements (kernels/reduction/fast.cu's
// loads, axis_rows.cu's short-row runs): one uint4 = 4 ints/floats, 2 long longs/doubles, 16 int8/bool, 8 float16.
#pragma once

#include <vector_types.h>

#include "operators.cuh"  // IN_TYPE, T

// Elements per 16-byte vector of an element type E: x's (IN_TYPE) for the input, T for partials.  x may be narrower
// than T (int8 summed in int64, float16 in float32): a vector then holds more elements, each converted as it is used.
template <typename E>
struct VecOf {
    static constexpr int value = 16 / (int)sizeof(E);
};
static_assert(16 % sizeof(IN_TYPE) == 0 && 16 % sizeof(T) == 0, "the element sizes must divide 16");

template <typename E>
union Vector16 {  // the same 16 bytes seen as one vector load and as 16 / sizeof(E) elements
    uint4 raw;
    E lane[VecOf<E>::value];
};
