// reduce_atomics.cuh -- atomic_combine(address, value): *address = op_combine(*address, value), atomically,
// for every element type and operator of operators.cuh.  Used by the reduction kernels that finish with one
// atomic per block (PMPP §10.7 segmented, §10.8 coarsened).
//
// Which atomics are native and which are emulated (T is int, unsigned int, long long, unsigned long long, float
// or double: operators.cuh widens narrower types):
//   add          native atomicAdd (long long on the unsigned type: two's-complement addition is the same bit
//                operation, and it wraps; signed overflow would be undefined in C++); double since sm_60
//   max/min      integers: native atomicMax / atomicMin; float, double: the atomicCAS loop below (CUDA has no
//                floating-point atomicMax/atomicMin)
//   bitwise and/or/xor, logical and/or (0/1 values: and/or of the bits)   native atomicAnd / atomicOr / atomicXor
//                (long long on the unsigned type)
//   mul          the atomicCAS loop below (CUDA has no atomic multiply)
//
// Floating-point atomicAdd makes the order of the per-block partial sums nondeterministic: the result can differ
// in the last bits from run to run (the Python side states the error bound).  max/min are exact in any order.
#pragma once

#include "operators.cuh"

// The CAS loop: it reads the current value, combines it with `value` using op_combine (NaN-propagating max/min,
// wrapping mul) and tries to swap the new bits in; if another thread changed the word in between, atomicCAS
// returns that newer value and the loop retries with it.  The loop compares BITS, not values: a NaN compares
// unequal to itself, so a value comparison would spin forever once a NaN is stored.  When op_combine leaves the
// stored value as it is (the usual case once the maximum is in place, and always once a NaN is there) no write is
// attempted at all.
template <typename V>
__device__ __forceinline__ void atomic_combine_cas(V* address, V value) {
    static_assert(sizeof(V) == 4 || sizeof(V) == 8, "the CAS loop swaps 4- or 8-byte words");
    using W = typename cuda::std::conditional<sizeof(V) == 4, unsigned int, unsigned long long>::type;
    W* word = reinterpret_cast<W*>(address);
    W old = *reinterpret_cast<volatile W*>(word);
    while (true) {
        V current;
        memcpy(&current, &old, sizeof(V));
        const V combined = op_combine(current, value);
        W next;
        memcpy(&next, &combined, sizeof(V));
        if (next == old) return;
        const W seen = atomicCAS(word, old, next);
        if (seen == old) return;
        old = seen;
    }
}

template <typename V>
__device__ __forceinline__ void atomic_combine(V* address, V value) {
    static_assert(cuda::std::is_same<V, T>::value, "atomic_combine combines elements of the build's type T");
    // long long has no atomicAdd / atomicAnd / ... of its own: the unsigned type's is the same bit operation.
    using A = typename cuda::std::conditional<cuda::std::is_same<V, long long>::value, unsigned long long, V>::type;
    A* a = reinterpret_cast<A*>(address);
    const A v = static_cast<A>(value);
#if OP == OP_ADD
    atomicAdd(a, v);
#elif OP == OP_MAX || OP == OP_MIN
    if constexpr (cuda::std::is_integral<V>::value) {
#if OP == OP_MAX
        atomicMax(address, value);
#else
        atomicMin(address, value);
#endif
    } else {
        atomic_combine_cas(address, value);
    }
#elif OP == OP_BITWISE_AND || OP == OP_LOGICAL_AND
    atomicAnd(a, v);
#elif OP == OP_BITWISE_OR || OP == OP_LOGICAL_OR
    atomicOr(a, v);
#elif OP == OP_BITWISE_XOR
    atomicXor(a, v);
#else
    atomic_combine_cas(address, value);
#endif
}

// Sets *out to the operator's identity, so that the blocks' atomics can all combine into it.  (A kernel rather
// than a host-to-device copy: it is queued like the reduction itself and does not stall the host.)
extern "C" __global__ void fill_identity(T* out) { *out = op_identity(); }
