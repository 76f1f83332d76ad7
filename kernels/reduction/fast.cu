// fast.cu -- a reduction tuned for memory bandwidth (beyond the book; the ideas of PMPP §10.8 taken further).
//
// A reduction reads every element once and does almost no arithmetic, so its speed limit is DRAM bandwidth.
// The book's kernels fall short of it because each block reduces a small fixed segment (so the grid is huge
// and every block pays a barrier-heavy tree), loads are 4 bytes wide, and results meet through atomics.  Here:
//
// * A grid-stride loop over a grid sized to the device (the host launches a few blocks per SM, as many as fit at
//   once), so every thread streams through many elements and the tree is paid once per thread block, not once
//   per 2*blockDim.x elements.  A smaller array gets one 16-byte vector per thread, spread over as many SMs as
//   that makes (below a few MB the time is latency, and every SM's load units take part), from the build with
//   FAST_UNROLL=1, whose shorter code starts faster.
// * 16-byte vector loads (one uint4 = 4 ints/floats, 2 long longs/doubles, 16 int8/bool, 8 float16 per load) through the
//   read-only path (__ldg; FAST_LOAD=1: __ldcs, streaming, which gives up the L2 between calls).  The
//   array need not be 16-byte aligned (a GPUArray view can start anywhere): the elements before the first 16-byte
//   boundary (the head) and after the last whole vector (the tail), fewer than 2*16/sizeof(T) in all, are read
//   one by one.
// * FAST_UNROLL independent vector loads per loop iteration, each into its own set of accumulators: all the loads
//   are issued before any of their values is used, so each thread keeps FAST_UNROLL*16 bytes in flight, and the
//   combines form FAST_UNROLL*VEC independent chains instead of one.
// * Warp shuffles (__shfl_down_sync) to reduce within a warp, one shared-memory slot per warp, and one warp to
//   reduce those: two barrier-free trees and a single __syncthreads.
// * One launch (the "last block" pattern of CUDA's threadFenceReduction sample).  With one block, its result is
//   the answer.  Otherwise block b writes its result to partials[b], fences, and takes a ticket from a counter;
//   the block that takes the last ticket knows every partial is written and reduces them with the same code, as
//   one block over gridDim.x elements (what a second launch over the partials would do), then puts the counter
//   back to 0 for the next call on the stream.  The partials meet in a fixed order whatever the timing, so
//   floating-point sums are reproducible run to run on the same grid; only the ticket is an atomic.
//
// The element order differs from a sequential loop, so float sums round differently from np.sum (see the bound
// in pyscan/reductions/fast.py); integer add wraps (exact in any order); max/min are exact and propagate NaN.
#include "../common/operators.cuh"
#include "../common/vector16.cuh"  // VecOf, Vector16

// A vector of x narrower than T (int8 summed in int64, float16 in float32) holds more elements, each converted with
// op_load_at as it is combined: every thread keeps FAST_UNROLL * 16 / sizeof(IN_TYPE) accumulators of T.
#ifndef FAST_UNROLL
#define FAST_UNROLL 2
#endif
// How the body is loaded: 0 = __ldg (read-only data cache), 1 = __ldcs (cache-streaming: the data is read once,
// so it is marked evict-first and does not push other lines out of L2).
#ifndef FAST_LOAD
#define FAST_LOAD 0
#endif

// Loads of the input (read-only for the whole kernel: the read-only path may serve them) and of the partials that
// other blocks wrote during this launch (COHERENT: through L2, never a stale L1 or read-only-cache line).
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

__device__ __forceinline__ T warp_reduce(T value) {
    // Full-warp shuffles: the host launches blocks of a multiple of 32 threads.
    for (int offset = 16; offset >= 1; offset /= 2) {
        value = op_combine(value, __shfl_down_sync(0xffffffffu, value, offset));
    }
    return value;  // lane 0 holds the warp's result
}

// The op over in[0, n) (elements of E: IN_TYPE for the input, T for the partials), read by `threads` threads of which
// this is number `gid`; the block's result is returned in thread 0.  Every thread of the block must call it (it has
// a barrier).
template <Load L, typename E>
__device__ T block_reduce(const E* __restrict__ in, long long n, long long threads, long long gid) {
    constexpr int VEC = VecOf<E>::value;
    // [0, n) = head (scalar, up to the first 16-byte boundary) + body (whole vectors) + tail (scalar).
    const unsigned long long address = reinterpret_cast<unsigned long long>(in);
    long long head = (long long)(((16 - (address & 15)) & 15) / sizeof(E));
    if (head > n) head = n;
    const long long vectors = (n - head) / VEC;
    const long long tail_start = head + vectors * VEC;
    const uint4* body = reinterpret_cast<const uint4*>(in + head);

    T acc[FAST_UNROLL][VEC];
#pragma unroll
    for (int u = 0; u < FAST_UNROLL; ++u) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc[u][k] = op_identity();
    }

    long long v = gid;
    // Main loop: FAST_UNROLL vectors per thread per iteration, `threads` vectors apart (so a warp's loads are
    // 32 consecutive vectors: 512 contiguous bytes).  All loads first, then all combines.
    for (; v + (long long)(FAST_UNROLL - 1) * threads < vectors; v += (long long)FAST_UNROLL * threads) {
        Vector16<E> x[FAST_UNROLL];
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; ++u) x[u].raw = load16<L>(body + v + u * threads);
#pragma unroll
        for (int u = 0; u < FAST_UNROLL; ++u) {
#pragma unroll
            for (int k = 0; k < VEC; ++k) {
                acc[u][k] = op_combine(acc[u][k], as_value<L, E>(x[u].lane[k], head + (v + u * threads) * VEC + k));
            }
        }
    }
    // The last fewer than FAST_UNROLL vectors of this thread, one at a time.
    for (; v < vectors; v += threads) {
        Vector16<E> x;
        x.raw = load16<L>(body + v);
#pragma unroll
        for (int k = 0; k < VEC; ++k) acc[0][k] = op_combine(acc[0][k], as_value<L, E>(x.lane[k], head + v * VEC + k));
    }

    // Fold the accumulators: a pairwise tree over the FAST_UNROLL*VEC of them.
    T* flat = &acc[0][0];
#pragma unroll
    for (int width = FAST_UNROLL * VEC / 2; width >= 1; width /= 2) {
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

// out[0] = the op over in[0, n).  With gridDim.x > 1: partials holds gridDim.x elements (16-byte aligned) and
// *done_blocks is 0 at entry (it is 0 again at exit).
// out[0] is stored with op_store (the result's dtype); the partials are T.
extern "C" __global__ void __launch_bounds__(1024) reduce_fast(OUT_TYPE* __restrict__ out, T* __restrict__ partials,
                                                                unsigned int* __restrict__ done_blocks,
                                                                const IN_TYPE* __restrict__ in, long long n) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    T value = block_reduce<Load::INPUT, IN_TYPE>(in, n, threads, gid);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) out[0] = op_store(value);
        return;
    }
    __shared__ bool last_block;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = value;
        __threadfence();  // the partial is visible device-wide before the ticket says so
        const unsigned int ticket = atomicAdd(done_blocks, 1u);
        last_block = ticket == gridDim.x - 1;
        if (last_block) __threadfence();  // and the other blocks' partials are read after their tickets
    }
    __syncthreads();
    if (!last_block) return;
    value = block_reduce<Load::COHERENT, T>(partials, gridDim.x, blockDim.x, threadIdx.x);
    if (threadIdx.x == 0) {
        out[0] = op_store(value);
        *done_blocks = 0;  // ready for the next launch on this stream
    }
}
