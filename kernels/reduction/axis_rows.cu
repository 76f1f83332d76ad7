// axis_rows.cu -- reduce every row of a C-contiguous (rows, n) table (a reduction along the LAST axis): PMPP ch. 10's
// reduction trees, one per row, with the work shaped by the row length so every shape reads at copy bandwidth.
//
// Why three kernels (the host picks by n, pyscan/reductions/axis.py):
// * short rows (n <= SHORT_ROW): a thread per row.  A warp per row would leave most lanes idle (2^23 rows of 2), so
//   the block loads its rows (per_thread * 256 rows, at most 256 * SHORT_ROW consecutive elements) coalesced into
//   shared memory -- 16 bytes a load where x is 16-byte aligned, every load of the thread issued before the first is
//   used -- and each thread folds its own rows from there, left to right (a pad every 32 elements keeps the banks
//   apart).  A block's run is 4096 elements when n divides 16: 64 bytes of int32 a thread in flight, where a row of
//   2 a thread had 8 (PMPP §10.8's coarsening; what a memory-bound kernel needs is bytes in flight);
// * medium rows (n <= WARP_ROW): a warp per row, the lanes striding through it with four independent accumulators
//   (loads in flight), folded, then a __shfl_down tree (PMPP §10.4's convergent tree in registers);
// * long rows: a block per row segment of `seg` elements (the host splits a row into `splits` segments when there
//   are too few rows to fill the GPU: 16 rows of 2^20), each block block_reduce.cuh's body over its segment (16-byte
//   loads, ROW_UNROLL of them in flight a thread, where the segment starts on a 16-byte boundary; the same elements
//   one by one where it does not), one result per segment.  With splits > 1 the results are per-segment partials, a
//   (rows, splits) table the host reduces again with these same kernels.
// No atomics: each output is a fixed tree of the inputs, so float sums are reproducible run to run.
#include "../common/block_reduce.cuh"  // block_reduce_range: a segment's loads, accumulators and trees
#include "../common/partials.cuh"  // load_element: x or an earlier pass's partials; op_store keeps partials as T

#ifndef SHORT_ROW
#define SHORT_ROW 16
#endif
// Vectors a thread of the long-row kernel loads before it combines any (pyscan/reductions/axis.py ROW_UNROLL), one
// for 1-byte x: a vector of it is already 16 accumulators (32 int64 ones of bool sums went to local memory).
#ifndef ROW_UNROLL
#define ROW_UNROLL 2
#endif
using InT = IN_TYPE;
using OutT = OUT_TYPE;

constexpr int BLOCK = 256;  // threads per block, every kernel here
constexpr int UNROLL = 16 / VecOf<InT>::value < ROW_UNROLL ? (16 / VecOf<InT>::value > 0 ? 16 / VecOf<InT>::value : 1)
                                                           : ROW_UNROLL;  // row_unroll(vec)
// A later pass reads the partials an earlier launch wrote, in T, as they are (partials.cuh); a first pass reads x
// through op_load.
constexpr Load SOURCE = PARTIALS_IN ? Load::COHERENT : Load::INPUT;

__device__ __forceinline__ int pad(int e) { return e + (e >> 5); }

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

// Long rows: block b reduces elements [s * seg, min(n, (s + 1) * seg)) of row b / splits, s = b % splits, into
// out[b] (out is (rows, splits): the partials when splits > 1, the result when splits == 1).  The host makes seg a
// multiple of 16 elements, so a segment starts on a 16-byte boundary wherever its row does.
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_rows_reduce_block(OutT* __restrict__ out, const InT* __restrict__ in, long long n, long long splits,
                           long long seg) {
    const unsigned b = blockIdx.x, per_row = (unsigned)splits;  // (32-bit: a 64-bit division is a call)
    const long long row = b / per_row, lo = (long long)(b % per_row) * seg;
    const long long hi = lo + seg < n ? lo + seg : n;
    const InT* x = in + row * n + lo;
    const T v = (reinterpret_cast<unsigned long long>(x) & 15) == 0
                    ? block_reduce_range<SOURCE, InT, UNROLL, true>(x, hi - lo, BLOCK, threadIdx.x, 0)
                    : block_reduce_range<SOURCE, InT, UNROLL, false>(x, hi - lo, BLOCK, threadIdx.x, 0);
    if (threadIdx.x == 0) out[b] = op_store(v);
}
