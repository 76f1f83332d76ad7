// reduce_atomics.cuh -- atomic_combine(address, value): *address = op_combine(*address, value), atomically,
// for every element type and operator of operators.cuh.  Used by the reduction kernels that finish with one
// atomic per block (PMPP §10.7 segmented, §10.8 coarsened).
//
// Which atomics are native and which are emulated:
//   add  int        atomicAdd(int*)                      native; wraps like the rest of the int add path
//   add  long long  atomicAdd(unsigned long long*)       native on the unsigned type: two's-complement addition
//                                                        is the same bit operation, and it wraps (signed
//                                                        overflow would be undefined in C++)
//   add  float      atomicAdd(float*)                    native
//   add  double     atomicAdd(double*)                   native since sm_60
//   max/min int, long long   atomicMax / atomicMin       native (the 64-bit signed ones since sm_50)
//   max/min float, double    atomicCAS loop below        CUDA has no floating-point atomicMax/atomicMin
//
// Floating-point atomicAdd makes the order of the per-block partial sums nondeterministic: the result can differ
// in the last bits from run to run (the Python side states the error bound).  max/min are exact in any order.
#pragma once

#include "operators.cuh"

// The CAS loop for float/double max and min.  It reads the current value, combines it with `value` using the
// same NaN-propagating op_combine as the rest of the kernels, and tries to swap the new bits in; if another
// thread changed the word in between, atomicCAS returns that newer value and the loop retries with it.
// The loop compares BITS, not values: a NaN compares unequal to itself, so a value comparison would spin forever
// once a NaN is stored.  When op_combine leaves the stored value as it is (the usual case once the maximum is
// in place, and always once a NaN is there) no write is attempted at all.
// (Templates, so that only the overload a build uses is instantiated: the float one calls op_combine on T.)
template <typename V>
__device__ __forceinline__ void atomic_combine_cas(V* address, V value);

template <>
__device__ __forceinline__ void atomic_combine_cas<float>(float* address, float value) {
    unsigned int* word = reinterpret_cast<unsigned int*>(address);
    unsigned int old = *reinterpret_cast<volatile unsigned int*>(word);
    while (true) {
        const unsigned int next = __float_as_uint(op_combine(__uint_as_float(old), value));
        if (next == old) return;
        const unsigned int seen = atomicCAS(word, old, next);
        if (seen == old) return;
        old = seen;
    }
}

template <>
__device__ __forceinline__ void atomic_combine_cas<double>(double* address, double value) {
    unsigned long long* word = reinterpret_cast<unsigned long long*>(address);
    unsigned long long old = *reinterpret_cast<volatile unsigned long long*>(word);
    while (true) {
        const unsigned long long next =
            static_cast<unsigned long long>(__double_as_longlong(op_combine(__longlong_as_double(old), value)));
        if (next == old) return;
        const unsigned long long seen = atomicCAS(word, old, next);
        if (seen == old) return;
        old = seen;
    }
}

template <typename V>
__device__ __forceinline__ void atomic_combine(V* address, V value) {
    static_assert(cuda::std::is_same<V, T>::value, "atomic_combine combines elements of the build's type T");
#if OP == OP_ADD
    if constexpr (cuda::std::is_same<V, long long>::value) {
        atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
    } else {
        atomicAdd(address, value);  // int, float, double
    }
#else
    if constexpr (cuda::std::is_integral<V>::value) {
#if OP == OP_MAX
        atomicMax(address, value);
#else
        atomicMin(address, value);
#endif
    } else {
        atomic_combine_cas(address, value);
    }
#endif
}

// Sets *out to the operator's identity, so that the blocks' atomics can all combine into it.  (A kernel rather
// than a host-to-device copy: it is queued like the reduction itself and does not stall the host.)
extern "C" __global__ void fill_identity(T* out) { *out = op_identity(); }
