// element_loads.cuh -- reading an array of any element type once, coalesced, in a loop the whole warp runs
// together (PMPP §9.3's interleaved partitioning, with 16-byte loads).
//
// visit_keys(data, n, f) calls f(valid, key) for every element of data[0, n), where key is the element as it is
// compared (KEY_T: the element type itself, float for __half).  Every lane of a warp makes the same calls in the
// same order -- lanes past the end call f(false, ...) -- so f may use warp-wide intrinsics (__match_any_sync).
// visit_keys(data, n, f, f_vector) hands the body's vectors whole to f_vector(valid, elements) instead (the
// elements as loaded, VALUE_T[16 / sizeof(VALUE_T)]).
//
// * head: the elements before the first 16-byte aligned address (all of them when the array is not aligned to
//   its own element size), one per thread;
// * body: whole 16-byte vectors (16 / sizeof(VALUE_T) elements) in a grid-stride loop over the vectors, each read
//   with one __ldg of a uint4;
// * tail: the elements after the last whole vector, one per thread.
// Every index is 64-bit, so any length that fits in memory.
#pragma once

#include <cuda_fp16.h>

#ifndef VALUE_T
#define VALUE_T float  // the element type of the data (signed char ... unsigned long long, __half, float, double)
#endif
#ifndef KEY_T
#define KEY_T float  // the type elements are compared in: VALUE_T, or float for __half
#endif
#ifndef VALUE_IS_HALF
#define VALUE_IS_HALF 0
#endif

#if VALUE_IS_HALF
__device__ __forceinline__ KEY_T key_of(__half v) { return __half2float(v); }
#else
__device__ __forceinline__ KEY_T key_of(VALUE_T v) { return (KEY_T)v; }
#endif

template <typename F, typename FVector>
__device__ __forceinline__ void visit_keys(const VALUE_T* __restrict__ data, long long n, F& f, FVector& f_vector) {
    constexpr int VEC = 16 / sizeof(VALUE_T);
    const int lane = threadIdx.x & 31;
    const long long threads = (long long)gridDim.x * blockDim.x;
    // the warp's lane 0: loop bounds the whole warp shares (blockDim.x is a multiple of 32)
    const long long warp_first = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31);

    const size_t address = (size_t)data;
    long long head = (address % sizeof(VALUE_T)) != 0 ? n : (long long)(((16u - (address & 15u)) & 15u) / sizeof(VALUE_T));
    if (head > n) head = n;
    const long long vectors = (n - head) / VEC;
    const long long tail_start = head + vectors * VEC;
    const long long tail = n - tail_start;

    for (long long i0 = warp_first; i0 < head; i0 += threads) {
        const long long i = i0 + lane;
        const bool valid = i < head;
        f(valid, valid ? key_of(data[i]) : (KEY_T)0);
    }
    for (long long i0 = warp_first; i0 < tail; i0 += threads) {
        const long long i = i0 + lane;
        const bool valid = i < tail;
        f(valid, valid ? key_of(data[tail_start + i]) : (KEY_T)0);
    }
    const uint4* __restrict__ body = reinterpret_cast<const uint4*>(data + head);
    for (long long v0 = warp_first; v0 < vectors; v0 += threads) {
        const long long v = v0 + lane;
        const bool valid = v < vectors;
        union {
            uint4 vector;
            VALUE_T elements[VEC];
        } loaded;
        loaded.vector = valid ? __ldg(&body[v]) : make_uint4(0u, 0u, 0u, 0u);
        f_vector(valid, loaded.elements);
    }
}

template <typename F>
__device__ __forceinline__ void visit_keys(const VALUE_T* __restrict__ data, long long n, F& f) {
    auto each = [&](bool valid, const VALUE_T (&elements)[16 / sizeof(VALUE_T)]) {
#pragma unroll
        for (int j = 0; j < (int)(16 / sizeof(VALUE_T)); ++j) f(valid, key_of(elements[j]));
    };
    visit_keys(data, n, f, each);
}
