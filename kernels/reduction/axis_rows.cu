// axis_rows.cu -- reduce every row of a C-contiguous (rows, n) table (a reduction along the LAST axis): PMPP ch. 10's
// reduction trees, one per row, with the work shaped by the row length so every shape reads at copy bandwidth.
//
// Why three kernels (the host picks by n, pyscan/reductions/axis.py):
// * short rows (n <= SHORT_ROW): a thread per row.  A warp per row would leave most lanes idle (2^23 rows of 2), so
//   the block loads its rows (per_thread * 256 rows, at most 256 * SHORT_ROW consecutive elements) coalesced into
//   shared memory -- 16 bytes a load where x is 16-byte aligned, every load of the thread issued before the first is
//   used -- and each thread folds its own rows from there, left to right (a pad every 32 elements keeps the banks
//   apart).  A block's run is 4096 elements when n divides 16: 64 bytes of int32 a thread in flight, where a row of
//   2 a thread had 8 (PMPP §10.8's coarsening: a memory-bound kernel needs bytes in flight);
// * medium rows (n <= WARP_ROW): a warp per row, the lanes striding through it with four independent accumulators
//   (loads in flight), folded, then a __shfl_down tree (PMPP §10.4's convergent tree in registers);
// * long rows: a block per row segment of `seg` elements (the host splits a row into `splits` segments when there
//   are too few rows to fill the GPU: 16 rows of 2^20), each block a grid-stride loop, its warps' shuffle trees and
//   one shared-memory tree of the warp results (fast.cu's block), one result per segment.  With splits > 1 the
//   results are per-segment partials, a (rows, splits) table, and the row's last block to finish folds them with
//   the same block code in the same launch (fast.cu's "last block": a ticket per row).
// The only atomic is that ticket: each output is a fixed tree of the inputs, so float sums are reproducible run to
// run.
#include "../common/partials.cuh"  // load_element: x or an earlier pass's partials; op_store keeps partials as T
#include "../common/vector16.cuh"  // VecOf, Vector16: a short-row run's 16-byte loads

#ifndef SHORT_ROW
#define SHORT_ROW 16
#endif
using InT = IN_TYPE;
using OutT = OUT_TYPE;

constexpr int BLOCK = 256;  // threads per block, every kernel here
constexpr unsigned FULL = 0xffffffffu;

__device__ __forceinline__ int pad(int e) { return e + (e >> 5); }

__device__ __forceinline__ T warp_reduce(T v) {  // lane 0 ends with the warp's result
    for (int offset = 16; offset >= 1; offset >>= 1) v = op_combine(v, __shfl_down_sync(FULL, v, offset));
    return v;
}

// Rows of n <= SHORT_ROW elements: block b owns the per_thread * 256 rows from row0 = b * per_thread * 256, whose
// elements are one run of x; thread t folds rows row0 + t, row0 + t + 256, ... (the host keeps
// per_thread * n <= SHORT_ROW).
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_short(OutT* __restrict__ out, const InT* __restrict__ in, long long rows, int n, int per_thread) {
    constexpr int VEC = VecOf<InT>::value;
    constexpr int MAX_VECTORS = (SHORT_ROW + VEC - 1) / VEC;  // a thread's share of a run of 256 * SHORT_ROW
    __shared__ T smem[BLOCK * SHORT_ROW + BLOCK * SHORT_ROW / 32];
    const int t = threadIdx.x;
    const long long row0 = (long long)blockIdx.x * BLOCK * per_thread;
    const long long base = row0 * n, left = rows * n - base;
    const int run = left < (long long)BLOCK * per_thread * n ? (int)left : BLOCK * per_thread * n;
    const InT* x = in + base;
    int e = t;  // the first element the scalar loop loads
    if ((reinterpret_cast<unsigned long long>(x) & 15) == 0) {
        const int vectors = run / VEC;
        Vector16<InT> v[MAX_VECTORS];
#pragma unroll
        for (int i = 0; i < MAX_VECTORS; ++i) {
            if (t + i * BLOCK < vectors) v[i].raw = __ldg(reinterpret_cast<const uint4*>(x) + t + i * BLOCK);
        }
#pragma unroll
        for (int i = 0; i < MAX_VECTORS; ++i) {
            if (t + i * BLOCK < vectors) {
#pragma unroll
                for (int k = 0; k < VEC; ++k) smem[pad((t + i * BLOCK) * VEC + k)] = load_element(v[i].lane[k]);
            }
        }
        e = vectors * VEC + t;  // the run's last, partial vector
    }
    for (; e < run; e += BLOCK) smem[pad(e)] = load_element(x[e]);
    __syncthreads();
    for (int r = 0; r < per_thread; ++r) {
        const int local = r * BLOCK + t;
        if (row0 + local < rows) {
            T acc = op_identity();
            for (int j = 0; j < n; ++j) acc = op_combine(acc, smem[pad(local * n + j)]);
            out[row0 + local] = op_store(acc);
        }
    }
}

// Rows of medium length: warp w of block b reduces row 8 b + w.
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_warp(OutT* __restrict__ out, const InT* __restrict__ in, long long rows, long long n) {
    const int lane = threadIdx.x & 31;
    const long long row = (long long)blockIdx.x * (BLOCK / 32) + (threadIdx.x >> 5);
    if (row >= rows) return;  // whole warps leave: the shuffles below see full warps
    const InT* x = in + row * n;
    T a0 = op_identity(), a1 = a0, a2 = a0, a3 = a0;
    long long j = lane;
    for (; j + 96 < n; j += 128) {
        const T v0 = load_element(x[j]), v1 = load_element(x[j + 32]), v2 = load_element(x[j + 64]),
                v3 = load_element(x[j + 96]);
        a0 = op_combine(a0, v0);
        a1 = op_combine(a1, v1);
        a2 = op_combine(a2, v2);
        a3 = op_combine(a3, v3);
    }
    for (; j < n; j += 32) a0 = op_combine(a0, load_element(x[j]));
    const T v = warp_reduce(op_combine(op_combine(a0, a1), op_combine(a2, a3)));
    if (lane == 0) out[row] = op_store(v);
}

// Elements [lo, hi) of a row, a thread's j = lo + t, lo + t + 256, ... into four independent accumulators (loads in
// flight), folded, then the warps' shuffle trees and a tree of the warp results: the block's value in thread 0.
// load(j) gives element j as T.  Every thread calls it (it has a barrier).
template <typename Load>
__device__ __forceinline__ T block_fold(long long lo, long long hi, T (&warp_results)[BLOCK / 32], Load load) {
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    T a0 = op_identity(), a1 = a0, a2 = a0, a3 = a0;
    long long j = lo + t;
    for (; j + 3 * BLOCK < hi; j += 4 * BLOCK) {
        const T v0 = load(j), v1 = load(j + BLOCK), v2 = load(j + 2 * BLOCK), v3 = load(j + 3 * BLOCK);
        a0 = op_combine(a0, v0);
        a1 = op_combine(a1, v1);
        a2 = op_combine(a2, v2);
        a3 = op_combine(a3, v3);
    }
    for (; j < hi; j += BLOCK) a0 = op_combine(a0, load(j));
    T v = warp_reduce(op_combine(op_combine(a0, a1), op_combine(a2, a3)));
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) v = warp_reduce(lane < BLOCK / 32 ? warp_results[lane] : op_identity());
    return v;
}

// The last block's fold of a row's `splits` partials (written in this launch: read through L2), apart from the
// kernel's body (not inlined) so that this rarely taken path adds no registers to it.
__device__ __noinline__ T fold_partials(const T* part, long long splits, T (&warp_results)[BLOCK / 32]) {
    return block_fold(0, splits, warp_results, [&](long long j) { return (T)__ldcg(part + j); });
}

// Long rows: block b reduces elements [s * seg, min(n, (s + 1) * seg)) of row b / splits, s = b % splits.  With
// splits == 1 that is out[row].  Otherwise it is partials[b] (partials: rows * splits elements; tickets: a counter
// a row, 0 at entry and again at exit), and the row's last block folds the row's partials into out[row].
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_block(OutT* __restrict__ out, T* __restrict__ partials, unsigned int* __restrict__ tickets,
                           const InT* __restrict__ in, long long n, long long splits, long long seg) {
    __shared__ T warp_results[BLOCK / 32];
    __shared__ bool last_block;
    const int t = threadIdx.x;
    const long long b = blockIdx.x;
    const long long row = b / splits, s = b % splits;
    const long long lo = s * seg;
    const long long hi = lo + seg < n ? lo + seg : n;
    const InT* x = in + row * n;
    T v = block_fold(lo, hi, warp_results, [&](long long j) { return load_element(x[j]); });
    if (splits == 1) {
        if (t == 0) out[row] = op_store(v);
        return;
    }
    if (t == 0) {
        partials[b] = v;
        __threadfence();  // the partial is visible device-wide before the ticket says so
        const unsigned int ticket = atomicAdd(&tickets[row], 1u);
        last_block = ticket == (unsigned int)(splits - 1);
        if (last_block) __threadfence();  // and the other blocks' partials are read after their tickets
    }
    __syncthreads();
    if (!last_block) return;
    const T* part = partials + row * splits;
    v = fold_partials(part, splits, warp_results);
    if (t == 0) {
        out[row] = op_store(v);
        tickets[row] = 0;  // ready for the next launch on this stream
    }
}
