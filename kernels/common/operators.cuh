// operators.cuh -- the types and the associative operator OP that the scan and reduction kernels are specialised
// for.  The Python loader injects them as #defines (pyscan/types.py `defines`); the defaults below let every kernel
// compile on its own with `nvcc -arch=sm_90 -cubin file.cu`.
//
//   IN_TYPE     the element type as stored in x                 (default: ELEM_TYPE)
//   VALUE_TYPE  the result's dtype, NumPy's accumulator dtype    (default: OUT_TYPE)
//   ELEM_TYPE   the type the kernels combine in, alias T: VALUE_TYPE widened to at least 32 bits (int8 -> int,
//               uint16 -> unsigned int, __half / __nv_bfloat16 -> float, bool -> int)
//   OUT_TYPE    the element type as stored in the result        (default: ELEM_TYPE; a driver's intermediate
//               arrays are T, its final result VALUE_TYPE)
//   OP          OP_ADD, OP_MUL, OP_MAX, OP_MIN, OP_BITWISE_AND, OP_BITWISE_OR, OP_BITWISE_XOR, OP_LOGICAL_AND,
//               OP_LOGICAL_OR, or OP_EXPR: a custom operator, the C expression OP_EXPRESSION(a, b) with the identity
//               OP_IDENTITY (pyscan.scan(x, op="a*b", identity=1): PyCUDA's InclusiveScanKernel(dtype, "a*b"))
//   MAP_EXPRESSION(x, i), MAP_X_TYPE   optional, reductions only: the map op_load_at applies to every element
//               (pyscan.reduce(x, map="x*x"): PyCUDA's ReductionKernel map_expr)
//
// A kernel reads x[i] with op_load (T(VALUE_TYPE(x[i])): converted to the result dtype, as NumPy converts its
// input to the accumulator dtype, then widened, which is exact) and writes results with op_store
// (VALUE_TYPE(t), rounded to nearest for __half / __nv_bfloat16, cut to the width for integers, nonzero for bool).
// Combining narrow integers in 32 bits and cutting on the store gives the bits of combining them in their own
// width: two's-complement add and mul and the bitwise operators commute with keeping the low bits, and max/min
// never leave the narrow range (every operand came through it).  __half and __nv_bfloat16 are combined in float
// and rounded once, on the store.
//
// The macro is ELEM_TYPE, not T: a macro named T would rewrite every `template <typename T>` in the CUDA
// headers.  The kernels use the type alias T declared below.
//
// PMPP ch. 10-11 write the kernels for `+` on float; a scan or reduction works for any associative operator with
// an identity element (PMPP §11.1), so the kernels call op_combine() and op_identity() instead of `+` and `0`.
#pragma once

#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define OP_ADD 0
#define OP_MAX 1
#define OP_MIN 2
#define OP_MUL 3
#define OP_BITWISE_AND 4
#define OP_BITWISE_OR 5
#define OP_BITWISE_XOR 6
#define OP_LOGICAL_AND 7
#define OP_LOGICAL_OR 8
#define OP_EXPR 9

#ifndef ELEM_TYPE
#define ELEM_TYPE int
#endif
#ifndef IN_TYPE
#define IN_TYPE ELEM_TYPE
#endif
#ifndef OUT_TYPE
#define OUT_TYPE ELEM_TYPE
#endif
#ifndef VALUE_TYPE
#define VALUE_TYPE OUT_TYPE
#endif
#ifndef OP
#define OP OP_ADD
#endif

using T = ELEM_TYPE;
using InType = IN_TYPE;
using OutType = OUT_TYPE;
using ValueType = VALUE_TYPE;

#if OP < OP_ADD || OP > OP_EXPR
#error "OP must be one of OP_ADD, OP_MUL, OP_MAX, OP_MIN, OP_BITWISE_AND, OP_BITWISE_OR, OP_BITWISE_XOR, OP_LOGICAL_AND, OP_LOGICAL_OR, OP_EXPR"
#endif
#if OP == OP_EXPR && !(defined(OP_EXPRESSION) && defined(OP_IDENTITY))
#error "OP_EXPR needs OP_EXPRESSION(a, b) and OP_IDENTITY (pyscan.types.CustomOperator writes them)"
#endif
#if OP == OP_BITWISE_AND || OP == OP_BITWISE_OR || OP == OP_BITWISE_XOR || OP == OP_LOGICAL_AND || OP == OP_LOGICAL_OR
static_assert(cuda::std::is_integral<T>::value, "the bitwise and logical operators combine integers (and bool)");
#endif

// ---- conversions ----------------------------------------------------------------------------------------------

template <typename V>
constexpr bool is_half_v = cuda::std::is_same<V, __half>::value;
template <typename V>
constexpr bool is_bfloat16_v = cuda::std::is_same<V, __nv_bfloat16>::value;

// `v` as a To: C++'s conversion, with __half / __nv_bfloat16 through float (double directly), bool as nonzero.
template <typename To, typename From>
__device__ __forceinline__ To convert(From v) {
    if constexpr (cuda::std::is_same<To, From>::value) {
        return v;
    } else if constexpr (is_half_v<From>) {
        return convert<To>(__half2float(v));
    } else if constexpr (is_bfloat16_v<From>) {
        return convert<To>(__bfloat162float(v));
    } else if constexpr (is_half_v<To>) {
        if constexpr (cuda::std::is_same<From, double>::value) return __double2half(v);
        else if constexpr (cuda::std::is_same<From, float>::value) return __float2half_rn(v);
        else return __double2half((double)v);
    } else if constexpr (is_bfloat16_v<To>) {
        if constexpr (cuda::std::is_same<From, double>::value) return __double2bfloat16(v);
        else if constexpr (cuda::std::is_same<From, float>::value) return __float2bfloat16_rn(v);
        else return __double2bfloat16((double)v);
    } else if constexpr (cuda::std::is_same<To, bool>::value) {
        return v != From(0);  // NaN is nonzero: true, as NumPy's bool(nan)
    } else {
        return static_cast<To>(v);
    }
}

// An element of x as the kernels combine it: converted to the value dtype, then widened (exact).
__device__ __forceinline__ T op_load(IN_TYPE v) { return convert<T>(convert<VALUE_TYPE>(v)); }
// A combined value as the result stores it.  A driver's intermediate array (OUT_TYPE is T: local scans, section
// totals, partial reductions) keeps the compute value as it is, so a __half or __nv_bfloat16 result is rounded
// once, on the final store; narrow integers lose nothing either (their bits are cut on the final store, and
// add, mul and the bitwise operators commute with cutting).
__device__ __forceinline__ OUT_TYPE op_store(T v) {
    if constexpr (cuda::std::is_same<OUT_TYPE, T>::value) return v;
    else return convert<OUT_TYPE>(convert<VALUE_TYPE>(v));
}

// ---- the functions a custom operator or map may call ------------------------------------------------------------
//
// pyscan/expressions.py checks an expression, writes it back as C calling these (max -> pyscan_max, ...) and
// evaluates the same tree with NumPy for the step-models: defining them here, for every pair of argument types,
// keeps the two sides in agreement (CUDA's own max/min/abs overloads differ by type, and some mixed calls such as
// max(float, int) are ambiguous).  Arguments take C's usual arithmetic conversions (decltype(a + b)).  __host__ too:
// tests/unit/test_custom_operators.py compiles expressions for the CPU and holds the NumPy evaluator to them.
#if OP == OP_EXPR || defined(MAP_EXPRESSION)
#include <cuda/std/bit>  // cuda::std::bit_cast: OP_IDENTITY's exact literals

template <typename V>  // the <cmath> argument type: floats as they are, integers as double (C++'s overloads)
using floating_t = typename cuda::std::conditional<cuda::std::is_floating_point<V>::value, V, double>::type;

// max / min of floating types ignore a NaN operand, as CUDA's max/min of floats (fmaxf) do; op="max" propagates it.
template <typename A, typename B>
__host__ __device__ __forceinline__ auto pyscan_max(A a, B b) {
    using C = decltype(a + b);
    if constexpr (cuda::std::is_floating_point<C>::value) return (C)fmax((C)a, (C)b);
    else return (C)a < (C)b ? (C)b : (C)a;
}
template <typename A, typename B>
__host__ __device__ __forceinline__ auto pyscan_min(A a, B b) {
    using C = decltype(a + b);
    if constexpr (cuda::std::is_floating_point<C>::value) return (C)fmin((C)a, (C)b);
    else return (C)b < (C)a ? (C)b : (C)a;
}
template <typename A, typename B>
__host__ __device__ __forceinline__ auto pyscan_fmax(A a, B b) {
    using F = floating_t<decltype(a + b)>;
    return (F)fmax((F)a, (F)b);
}
template <typename A, typename B>
__host__ __device__ __forceinline__ auto pyscan_fmin(A a, B b) {
    using F = floating_t<decltype(a + b)>;
    return (F)fmin((F)a, (F)b);
}
// abs of a signed integer negates on the unsigned type (abs of the lowest value stays it, as NumPy's np.abs).
template <typename A>
__host__ __device__ __forceinline__ auto pyscan_abs(A a) {
    using P = decltype(+a);
    if constexpr (cuda::std::is_floating_point<P>::value) return (P)fabs((P)a);
    else if constexpr (cuda::std::is_signed<P>::value) {
        using U = typename cuda::std::make_unsigned<P>::type;
        return a < 0 ? (P)(U(0) - (U)a) : (P)a;
    } else return (P)a;
}
template <typename A>
__host__ __device__ __forceinline__ auto pyscan_fabs(A a) { using F = floating_t<decltype(+a)>; return (F)fabs((F)a); }
template <typename A>
__host__ __device__ __forceinline__ auto pyscan_sqrt(A a) { using F = floating_t<decltype(+a)>; return (F)sqrt((F)a); }
template <typename A>
__host__ __device__ __forceinline__ auto pyscan_floor(A a) { using F = floating_t<decltype(+a)>; return (F)floor((F)a); }
template <typename A>
__host__ __device__ __forceinline__ auto pyscan_ceil(A a) { using F = floating_t<decltype(+a)>; return (F)ceil((F)a); }
template <typename A>
__host__ __device__ __forceinline__ auto pyscan_trunc(A a) { using F = floating_t<decltype(+a)>; return (F)trunc((F)a); }
#endif

// An element of x at index i as a reduction combines it: op_load, or with a map (MAP_EXPRESSION(x, i), pyscan.reduce's
// map=) the map's value for the element -- x in its own type widened to at least 32 bits (MAP_X_TYPE: int8 and bool
// as int, __half as float), i its 64-bit index -- converted to the value dtype like a loaded element.  Applied in
// the loads, so a map costs no pass of its own (PyCUDA's map_expr).
__device__ __forceinline__ T op_load_at(IN_TYPE v, long long i) {
#ifdef MAP_EXPRESSION
    const MAP_X_TYPE x = convert<MAP_X_TYPE>(v);
    return convert<T>(convert<VALUE_TYPE>(MAP_EXPRESSION(x, i)));
#else
    (void)i;
    return op_load(v);
#endif
}

// ---- the operator -----------------------------------------------------------------------------------------------

// a + b and a * b for integers wrap modulo 2^bits, as np.cumsum(x, dtype=x.dtype) does.  Signed overflow is
// undefined behaviour in C++, so integer arithmetic is done on the unsigned type of the same width.
template <typename V>
__device__ __forceinline__ V add_wrapping(V a, V b) {
    if constexpr (cuda::std::is_integral<V>::value) {
        using U = typename cuda::std::make_unsigned<V>::type;
        return static_cast<V>(static_cast<U>(a) + static_cast<U>(b));
    } else {
        return a + b;
    }
}
template <typename V>
__device__ __forceinline__ V mul_wrapping(V a, V b) {
    if constexpr (cuda::std::is_integral<V>::value) {
        using U = typename cuda::std::make_unsigned<V>::type;
        return static_cast<V>(static_cast<U>(a) * static_cast<U>(b));
    } else {
        return a * b;
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
#elif OP == OP_MUL
    return mul_wrapping<T>(a, b);
#elif OP == OP_MAX
    return max_nan<T>(a, b);
#elif OP == OP_MIN
    return min_nan<T>(a, b);
#elif OP == OP_BITWISE_AND
    return a & b;
#elif OP == OP_BITWISE_OR
    return a | b;
#elif OP == OP_BITWISE_XOR
    return a ^ b;
#elif OP == OP_LOGICAL_AND
    return (a != 0 && b != 0) ? T(1) : T(0);  // the values are 0/1 (loaded through bool)
#elif OP == OP_LOGICAL_OR
    return (a != 0 || b != 0) ? T(1) : T(0);
#else
    // A custom operator, evaluated in C's types (a and b are T) and converted to the value dtype after every
    // combine: it combines values of the result dtype (a bool "a + b" stays 0/1; a custom float16 sum rounds at
    // every step).  Where the value dtype is T the conversions are no code at all.  The operator must be
    // associative (PMPP §11.1): every algorithm groups the combines its own way.
    return convert<T>(convert<VALUE_TYPE>(OP_EXPRESSION(a, b)));
#endif
}

// The identity e with op_combine(e, x) == x for every x the kernels see (every one came through VALUE_TYPE):
// 0 for add, or, xor; 1 for mul and logical and; all ones for bitwise and; the value dtype's lowest value for max
// (-inf for floats), its highest for min (+inf).  It pads partial sections and starts exclusive scans, so it is
// the value dtype's (an exclusive int8 max scan starts at -128), held in T.
__device__ __forceinline__ T op_identity() {
#if OP == OP_EXPR
    return T(OP_IDENTITY);  // the caller's identity=, as an exact literal of T (pyscan.expressions.c_literal)
#elif OP == OP_ADD || OP == OP_BITWISE_OR || OP == OP_BITWISE_XOR || OP == OP_LOGICAL_OR
    return T(0);
#elif OP == OP_MUL || OP == OP_LOGICAL_AND
    return T(1);
#elif OP == OP_BITWISE_AND
    return T(~T(0));
#else
    using L = typename cuda::std::conditional<cuda::std::is_integral<VALUE_TYPE>::value, VALUE_TYPE, T>::type;
#if OP == OP_MAX
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) return -cuda::std::numeric_limits<T>::infinity();
    else return T(cuda::std::numeric_limits<L>::lowest());
#else
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) return cuda::std::numeric_limits<T>::infinity();
    else return T(cuda::std::numeric_limits<L>::max());
#endif
#endif
}
