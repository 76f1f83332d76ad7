// block_reduce.cuh -- the op over a contiguous range, read by a block (or a whole grid) with 16-byte loads: the
// reduction body of kernels/reduction/fast.cu (the whole array, a grid-stride loop) and of axis_rows.cu (a row
// segment, one block).  PMPP §10.8's coarsening taken to the memory system:
//
// * 16-byte vector loads (one uint4 = 4 ints/floats, 2 long longs/doubles, 16 int8/bool, 8 float16 per load) through
//   the read-only path (__ldg; FAST_LOAD=1: __ldcs, streaming, which gives up the L2 between calls);
// * UNROLL independent vector loads per loop iteration, each into its own set of accumulators: all the loads are
//   issued before any of their values is used, so each thread keeps UNROLL*16 bytes in flight, and the combines form
//   UNROLL*VEC independent chains instead of one;
// * warp shuffles (__shfl_down_sync) within a warp, one shared-memory slot per warp, and one warp to reduce those: two
//   barrier-free trees and a single __syncthreads.
//
// The range is a head (elements read one by one, before the body), a body of whole vectors and a tail (fewer than
// VEC elements, read one by one).  fast.cu's head runs up to the first 16-byte boundary, so any address takes vector
// loads.  axis_rows.cu's head is 0 and its body is read as vectors where the segment starts on a 16-byte boundary and
// as the same elements one by one where it does not (VECTORS = false): the same accumulators, the same tree, so a
// row's result does not depend on where the row starts (pyscan/reductions/fast.py `_pass` models both).
#pragma once

#include "operators.cuh"

// How the body is loaded: 0 = __ldg (read-only data cache), 1 = __ldcs (cache-streaming: the data is read once,
// so it is marked evict-first and does not push other lines out of L2).
#ifndef FAST_LOAD
#define FAST_LOAD 0
#endif

// Elements per 16-byte vector of an element type E: x's (IN_TYPE) for the input, T for the partials.  x may be
// narrower than T (int8 summed in int64, float16 in float32): a vector then holds more elements, each converted
// with op_load_at as it is combined, and every thread keeps UNROLL * 16 / sizeof(IN_TYPE) accumulators of T.
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

// Loads of the input (read-only for the whole kernel: the read-only path may serve them) and of partials that other
// blocks wrote (COHERENT: through L2, never a stale L1 or read-only-cache line).
enum class Load { INPUT, COHERENT };

template <Load L>
__device__ __forceinline__ uint4 load16(const uint4* p) {
    if constexpr (L == Load::COHERENT) return __ldcg(p);
#if FAST_LOAD == 1
    return __ldcs(p);
#else
    return __ldg(p);
#endif
}

// One element as T: the input element `index` through op_load_at (converted to the value dtype, then widened; with
// map=, the map of the element and its index), the partials as they are.  Without a map the index is unused and
// its arithmetic compiles away.
template <Load L, typename E>
__device__ __forceinline__ T as_value(E e, long long index) {
    if constexpr (L == Load::INPUT) return op_load_at(e, index);
    else return e;
}

template <Load L, typename E>
__device__ __forceinline__ T load1(const E* p, long long index) {
    if constexpr (L == Load::COHERENT) return __ldcg(p);
    else return as_value<L, E>(*p, index);  // (a plain load: __ldg has no overloads for bool, __half, ...)
}

// The VEC elements of one vector combined into a thread's VEC accumulators; `index`: the first one's index in the
// range (a map's i).
template <Load L, typename E, int VEC>
__device__ __forceinline__ void combine_lanes(T (&acc)[VEC], const E (&lanes)[VEC], long long index) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) acc[k] = op_combine(acc[k], as_value<L, E>(lanes[k], index + k));
}

// Vector v of the body read as its elements one by one (VECTORS = false: a body that does not start on a 16-byte
// boundary).
template <Load L, typename E, int VEC>
__device__ __forceinline__ void load_lanes(E (&lanes)[VEC], const E* body, long long v) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        const E* p = body + v * VEC + k;
        if constexpr (L == Load::COHERENT) lanes[k] = __ldcg(p);
        else lanes[k] = *p;
    }
}

__device__ __forceinline__ T warp_reduce(T value) {
    // Full-warp shuffles: the host launches blocks of a multiple of 32 threads.
    for (int offset = 16; offset >= 1; offset /= 2) {
        value = op_combine(value, __shfl_down_sync(0xffffffffu, value, offset));
    }
    return value;  // lane 0 holds the warp's result
}

// The op over in[0, n) (elements of E: IN_TYPE for the input, T for the partials), read by `threads` threads of which
// this is number `gid`, the first `head` elements one by one (VECTORS: then in + head is on a 16-byte boundary); the
// block's result is returned in thread 0.  Every thread of the block must call it (it has a barrier).
template <Load L, typename E, int UNROLL, bool VECTORS = true>
__device__ T block_reduce_range(const E* __restrict__ in, long long n, long long threads, long long gid,
                                long long head) {
    constexpr int VEC = VecOf<E>::value;
    // [0, n) = head (scalar) + body (whole vectors) + tail (scalar).
    if (head > n) head = n;
    const long long vectors = (n - head) / VEC;
    const long long tail_start = head + vectors * VEC;
    const uint4* body = reinterpret_cast<const uint4*>(in + head);

    T acc[UNROLL][VEC];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc[u][k] = op_identity();
    }

    long long v = gid;
    // Main loop: UNROLL vectors per thread per iteration, `threads` vectors apart (so a warp's loads are
    // 32 consecutive vectors: 512 contiguous bytes).  All loads first, then all combines.
    for (; v + (long long)(UNROLL - 1) * threads < vectors; v += (long long)UNROLL * threads) {
        if constexpr (VECTORS) {
            Vector16<E> x[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) x[u].raw = load16<L>(body + v + u * threads);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) combine_lanes<L, E, VEC>(acc[u], x[u].lane, head + (v + u * threads) * VEC);
        } else {
            E x[UNROLL][VEC];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) load_lanes<L, E, VEC>(x[u], in + head, v + u * threads);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) combine_lanes<L, E, VEC>(acc[u], x[u], head + (v + u * threads) * VEC);
        }
    }
    // The last fewer than UNROLL vectors of this thread, one at a time.
    for (; v < vectors; v += threads) {
        if constexpr (VECTORS) {
            Vector16<E> x;
            x.raw = load16<L>(body + v);
            combine_lanes<L, E, VEC>(acc[0], x.lane, head + v * VEC);
        } else {
            E x[VEC];
            load_lanes<L, E, VEC>(x, in + head, v);
            combine_lanes<L, E, VEC>(acc[0], x, head + v * VEC);
        }
    }

    // Fold the accumulators: a pairwise tree over the UNROLL*VEC of them.
    T* flat = &acc[0][0];
#pragma unroll
    for (int width = UNROLL * VEC / 2; width >= 1; width /= 2) {
#pragma unroll
        for (int k = 0; k < width; ++k) flat[k] = op_combine(flat[k], flat[k + width]);
    }
    T value = flat[0];
    if (gid < head) value = op_combine(value, load1<L, E>(in + gid, gid));
    if (gid < n - tail_start) value = op_combine(value, load1<L, E>(in + tail_start + gid, tail_start + gid));

    // Block: shuffle within each warp, one slot per warp in shared memory, then the first warp reduces the slots.
    __shared__ T warp_results[32];
    const unsigned int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    value = warp_reduce(value);
    if (lane == 0) warp_results[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < (blockDim.x >> 5) ? warp_results[lane] : op_identity();
        value = warp_reduce(value);
    }
    return value;
}

// The op over in[0, n) at any address: the head runs to the first 16-byte boundary (fewer than VEC elements), the
// body from there is read as vectors.
template <Load L, typename E, int UNROLL>
__device__ T block_reduce(const E* __restrict__ in, long long n, long long threads, long long gid) {
    const unsigned long long address = reinterpret_cast<unsigned long long>(in);
    const long long head = (long long)(((16 - (address & 15)) & 15) / sizeof(E));
    return block_reduce_range<L, E, UNROLL>(in, n, threads, gid, head);
}
