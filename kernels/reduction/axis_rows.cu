// axis_rows.cu -- reduce every row of a C-contiguous (rows, n) table (a reduction along the LAST axis): PMPP ch. 10's
// reduction trees, one per row, with the work shaped by the row length so every shape reads at copy bandwidth.
//
// Why three shapes of kernel (the host picks by n, pyscan/reductions/axis.py):
// * short rows (n <= SHORT_ROW): a thread per row.  A warp per row would leave most lanes idle (2^23 rows of 2), so
//   the block loads its 256 rows (256 * n consecutive elements) coalesced into shared memory and each thread folds
//   its own row from there, left to right (a pad every 32 elements keeps the banks apart);
//   rows of 2, 4, 8 or 16 bytes read whole, one load a thread (axis_rows_reduce_word2 .. 16);
// * medium rows (n <= WARP_ROW): a warp per row, the lanes striding through it with four independent accumulators
//   (loads in flight), folded, then a __shfl_down tree (PMPP §10.4's convergent tree in registers);
// * long rows: a block per row segment of `seg` elements (the host splits a row into `splits` segments when there
//   are too few rows to fill the GPU: 16 rows of 2^20), each block a grid-stride loop, its warps' shuffle trees and
//   one shared-memory tree of the warp results (fast.cu's block), one result per segment.  With splits > 1 the
//   results are per-segment partials, a (rows, splits) table the host reduces again with these same kernels.
// No atomics: each output is a fixed tree of the inputs, so float sums are reproducible run to run.
#include "../common/partials.cuh"  // load_element: x or an earlier pass's partials; op_store keeps partials as T

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

// Rows of n <= SHORT_ROW elements: block b owns rows 256 b .. 256 b + 255.
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_short(OutT* __restrict__ out, const InT* __restrict__ in, long long rows, int n) {
    __shared__ T smem[BLOCK * SHORT_ROW + BLOCK * SHORT_ROW / 32];
    const int t = threadIdx.x;
    const long long row0 = (long long)blockIdx.x * BLOCK;
    const long long base = row0 * n, total = rows * n;
    for (int k = 0; k < n; ++k) {
        const int e = k * BLOCK + t;
        if (base + e < total) smem[pad(e)] = load_element(in[base + e]);
    }
    __syncthreads();
    if (row0 + t < rows) {
        T acc = op_identity();
        for (int j = 0; j < n; ++j) acc = op_combine(acc, smem[pad(t * n + j)]);
        out[row0 + t] = op_store(acc);
    }
}

// Rows of n elements that make one load of 2, 4, 8 or 16 bytes (B; x aligned to B: the host's choice over
// axis_rows_reduce_short, which takes the same arguments): thread t of block b reduces row 256 b + t from one load
// of it, left to right as axis_rows_reduce_short does.  A warp's loads are one coalesced run of 32 whole rows, with
// nothing staged in shared memory and no barrier (rows of 2 int32: 8-byte loads).
template <int B>
__device__ __forceinline__ void reduce_word_rows(OutT* __restrict__ out, const InT* __restrict__ in, long long rows) {
    constexpr int N = B / (int)sizeof(InT);  // the row's elements (0: no such build for x's type)
    const long long row = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if constexpr (N >= 1) {
        if (row < rows) {
            using W = typename Word<B>::type;
            const W w = reinterpret_cast<const W*>(in)[row];
            InT e[N];
            memcpy(e, &w, B);
            T acc = op_identity();
#pragma unroll
            for (int k = 0; k < N; ++k) acc = op_combine(acc, load_element(e[k]));
            out[row] = op_store(acc);
        }
    }
}
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_word2(OutT* __restrict__ out, const InT* __restrict__ in, long long rows, int n) {
    reduce_word_rows<2>(out, in, rows);
}
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_word4(OutT* __restrict__ out, const InT* __restrict__ in, long long rows, int n) {
    reduce_word_rows<4>(out, in, rows);
}
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_word8(OutT* __restrict__ out, const InT* __restrict__ in, long long rows, int n) {
    reduce_word_rows<8>(out, in, rows);
}
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_word16(OutT* __restrict__ out, const InT* __restrict__ in, long long rows, int n) {
    reduce_word_rows<16>(out, in, rows);
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

// Long rows: block b reduces elements [s * seg, min(n, (s + 1) * seg)) of row b / splits, s = b % splits, into
// out[b] (out is (rows, splits): the partials when splits > 1, the result when splits == 1).
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_block(OutT* __restrict__ out, const InT* __restrict__ in, long long n, long long splits,
                           long long seg) {
    __shared__ T warp_results[BLOCK / 32];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const long long b = blockIdx.x;
    const long long row = b / splits, s = b % splits;
    const long long lo = s * seg;
    const long long hi = lo + seg < n ? lo + seg : n;
    const InT* x = in + row * n;
    T a0 = op_identity(), a1 = a0, a2 = a0, a3 = a0;
    long long j = lo + t;
    for (; j + 3 * BLOCK < hi; j += 4 * BLOCK) {
        const T v0 = load_element(x[j]), v1 = load_element(x[j + BLOCK]), v2 = load_element(x[j + 2 * BLOCK]),
                v3 = load_element(x[j + 3 * BLOCK]);
        a0 = op_combine(a0, v0);
        a1 = op_combine(a1, v1);
        a2 = op_combine(a2, v2);
        a3 = op_combine(a3, v3);
    }
    for (; j < hi; j += BLOCK) a0 = op_combine(a0, load_element(x[j]));
    T v = warp_reduce(op_combine(op_combine(a0, a1), op_combine(a2, a3)));
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_reduce(lane < BLOCK / 32 ? warp_results[lane] : op_identity());
        if (lane == 0) out[b] = op_store(v);
    }
}
