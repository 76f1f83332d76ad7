// arg_extreme.cu -- argmax / argmin (np.argmax, np.argmin): PMPP ch. 10's reduction trees over (value, index)
// pairs.  The whole array (axis=None: the flattened C-order index) is one row; along an axis the array is the
// (outer, n, inner) table of axis_rows.cu / axis_columns.cu, with their geometry (pyscan/reductions/arg_extreme.py).
//
// The combine.  NumPy's rules: the first index of the largest (smallest) value; a NaN is larger (smaller) than
// everything, so the first NaN wins.  Ranking every pair by (NaN first, then value, then the lower index) is a
// total order, so "the better of a and b" is associative and commutative: any tree of combines -- grid-stride
// loops, warp shuffles, a shared-memory tree, partials reduced by a later pass -- gives the same pair, whatever the
// order (the results are exact and reproducible; PMPP §10.4's reordering is free here).  Values are compared in
// operators.cuh's T: x's dtype widened to at least 32 bits (bool and int8 as int, __half and __nv_bfloat16 as
// float), which is exact, so comparisons are those of x's own dtype; -0.0 == 0.0 (the first of them wins).
// The identity, which pads threads without elements, is (the lowest value, or -inf; index LLONG_MAX) for argmax:
// any element beats it, equal values through the lower index.
//
//   ARG_LARGEST  1: argmax, 0: argmin (default 1).  Not ARG_MAX: glibc's <limits.h> sets that to 131072 where a
//                build defined it before the header (a host compile of this file did: the tests' CPU emulator).
//   IN_TYPE      x's element type; ELEM_TYPE (T) its compare type (pyscan.reductions.arg_extreme.macros)
//
// Kernels (256 threads a block), each reading either x (in_value == nullptr: the index is the position along the
// reduced extent) or the (value, index) partials of an earlier pass, and writing either the final int64 indices
// (out_value == nullptr) or (value, index) partials for a later pass:
// * arg_extreme_rows_thread: rows of up to SHORT_ROW elements, a thread per row;
// * arg_extreme_rows_warp: rows of up to WARP_ROW elements, a warp per row (lanes strided, a __shfl_down tree);
// * arg_extreme_rows_block: a block per row segment (a grid-stride loop over the segment, warp trees, one
//   shared-memory step); one row cut into many segments is the 1-D argmax: the partials of the first pass, one
//   block of a second pass over them (the host's plan, as axis_rows.cu's);
// * arg_extreme_columns: any other axis, lanes coalesced over row chunks, a tree over the block's row groups
//   (axis_columns.cu's shape).
#include <cuda/std/limits>

#include "../common/operators.cuh"

#ifndef ARG_LARGEST
#define ARG_LARGEST 1
#endif
using InT = IN_TYPE;
constexpr int BLOCK = 256;
constexpr unsigned FULL = 0xffffffffu;
constexpr long long NO_INDEX = cuda::std::numeric_limits<long long>::max();

struct Pair {
    T value;
    long long index;
};

__device__ __forceinline__ bool is_nan(T v) { return v != v; }  // false for integers (compiled away)

// The better of a and b (in either order): a NaN beats a number, the larger (ARG_LARGEST) or smaller value beats the
// other, and between equal values -- or two NaNs -- the lower index wins.
__device__ __forceinline__ Pair better(Pair a, Pair b) {
    const bool an = is_nan(a.value), bn = is_nan(b.value);
    bool a_wins;
    if (an || bn) {
        a_wins = an && (!bn || a.index < b.index);
    } else {
#if ARG_LARGEST
        a_wins = a.value > b.value || (a.value == b.value && a.index < b.index);
#else
        a_wins = a.value < b.value || (a.value == b.value && a.index < b.index);
#endif
    }
    return a_wins ? a : b;
}

__device__ __forceinline__ Pair no_pair() {
    using L = typename cuda::std::conditional<cuda::std::is_integral<VALUE_TYPE>::value, VALUE_TYPE, T>::type;
#if ARG_LARGEST
    if constexpr (cuda::std::numeric_limits<T>::has_infinity)
        return Pair{-cuda::std::numeric_limits<T>::infinity(), NO_INDEX};
    else
        return Pair{T(cuda::std::numeric_limits<L>::lowest()), NO_INDEX};
#else
    if constexpr (cuda::std::numeric_limits<T>::has_infinity)
        return Pair{cuda::std::numeric_limits<T>::infinity(), NO_INDEX};
    else
        return Pair{T(cuda::std::numeric_limits<L>::max()), NO_INDEX};
#endif
}

__device__ __forceinline__ Pair warp_best(Pair p) {  // lane 0 ends with the warp's best pair
    for (int offset = 16; offset >= 1; offset >>= 1) {
        const Pair other{__shfl_down_sync(FULL, p.value, offset), __shfl_down_sync(FULL, p.index, offset)};
        p = better(p, other);
    }
    return p;
}

// What a pass reads: x (Source<false>: element k of a row or column is the pair (x[p] as T, k)) or the (value,
// index) partials of an earlier pass (Source<true>: the pair at p).  Each kernel picks one at its start from
// in_value == nullptr, so the loops carry no branch.
template <bool PARTIALS>
struct Source {
    const InT* x;
    const T* value;
    const long long* index;
    // element k of a row (or column) whose elements start at `at` and lie `stride` apart
    __device__ __forceinline__ Pair at(long long start, long long k, long long stride) const {
        const long long p = start + k * stride;
        if constexpr (PARTIALS) return Pair{value[p], index[p]};
        else return Pair{op_load(x[p]), k};
    }
};

__device__ __forceinline__ void write(long long* out_index, T* out_value, long long p, Pair best) {
    out_index[p] = best.index;
    if (out_value != nullptr) out_value[p] = best.value;
}

template <bool PARTIALS>
__device__ __forceinline__ void rows_thread(long long* out_index, T* out_value, Source<PARTIALS> in, long long rows,
                                            long long n) {
    const long long row = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (row >= rows) return;
    Pair best = no_pair();
    for (long long j = 0; j < n; ++j) best = better(best, in.at(row * n, j, 1));
    write(out_index, out_value, row, best);
}

template <bool PARTIALS>
__device__ __forceinline__ void rows_warp(long long* out_index, T* out_value, Source<PARTIALS> in, long long rows,
                                          long long n) {
    const int lane = threadIdx.x & 31;
    const long long row = (long long)blockIdx.x * (BLOCK / 32) + (threadIdx.x >> 5);
    if (row >= rows) return;  // whole warps leave: the shuffles below see full warps
    Pair a0 = no_pair(), a1 = a0;
    long long j = lane;
    for (; j + 32 < n; j += 64) {
        const Pair p0 = in.at(row * n, j, 1), p1 = in.at(row * n, j + 32, 1);
        a0 = better(a0, p0);
        a1 = better(a1, p1);
    }
    if (j < n) a0 = better(a0, in.at(row * n, j, 1));
    const Pair best = warp_best(better(a0, a1));
    if (lane == 0) write(out_index, out_value, row, best);
}

template <bool PARTIALS>
__device__ __forceinline__ void rows_block(long long* out_index, T* out_value, Source<PARTIALS> in, long long n,
                                           long long splits, long long seg, T* warp_value, long long* warp_index) {
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const long long b = blockIdx.x;
    const long long row = b / splits, s = b % splits;
    const long long lo = s * seg;
    const long long hi = lo + seg < n ? lo + seg : n;
    Pair a0 = no_pair(), a1 = a0, a2 = a0, a3 = a0;  // four chains: four loads in flight per thread
    long long j = lo + t;
    for (; j + 3 * BLOCK < hi; j += 4 * BLOCK) {
        const Pair p0 = in.at(row * n, j, 1), p1 = in.at(row * n, j + BLOCK, 1);
        const Pair p2 = in.at(row * n, j + 2 * BLOCK, 1), p3 = in.at(row * n, j + 3 * BLOCK, 1);
        a0 = better(a0, p0);
        a1 = better(a1, p1);
        a2 = better(a2, p2);
        a3 = better(a3, p3);
    }
    for (; j < hi; j += BLOCK) a0 = better(a0, in.at(row * n, j, 1));
    Pair best = warp_best(better(better(a0, a1), better(a2, a3)));
    if (lane == 0) {
        warp_value[warp] = best.value;
        warp_index[warp] = best.index;
    }
    __syncthreads();
    if (warp == 0) {
        best = lane < BLOCK / 32 ? Pair{warp_value[lane], warp_index[lane]} : no_pair();
        best = warp_best(best);
        if (lane == 0) write(out_index, out_value, b, best);
    }
}

template <bool PARTIALS>
__device__ __forceinline__ void columns(long long* out_index, T* out_value, Source<PARTIALS> in, long long n,
                                        long long inner, int lanes, int rows, long long chunk_rows,
                                        long long lane_chunks, long long chunks, T* tree_value, long long* tree_index) {
    const int t = threadIdx.x;
    const int tx = t % lanes, ty = t / lanes;
    const bool used = ty < rows;
    const long long b = blockIdx.x;
    const long long group = b / chunks, c = b % chunks;
    const long long o = group / lane_chunks;
    const long long l = (group % lane_chunks) * lanes + tx;
    const long long lo = c * chunk_rows;
    const long long hi = lo + chunk_rows < n ? lo + chunk_rows : n;
    Pair a0 = no_pair(), a1 = a0;
    if (used && l < inner) {
        const long long start = o * n * inner + l;  // row r of this lane at start + r * inner
        long long r = lo + ty;
        for (; r + rows < hi; r += 2LL * rows) {
            const Pair p0 = in.at(start, r, inner), p1 = in.at(start, r + rows, inner);
            a0 = better(a0, p0);
            a1 = better(a1, p1);
        }
        if (r < hi) a0 = better(a0, in.at(start, r, inner));
    }
    if (used) {
        const Pair mine = better(a0, a1);
        tree_value[t] = mine.value;
        tree_index[t] = mine.index;
    }
    __syncthreads();
    int half = 1;
    while (half < rows) half <<= 1;
    for (half >>= 1; half >= 1; half >>= 1) {  // the tree over ty: row group ty takes ty + half
        if (used && ty < half && ty + half < rows) {
            const Pair p = better(Pair{tree_value[t], tree_index[t]},
                                  Pair{tree_value[t + half * lanes], tree_index[t + half * lanes]});
            tree_value[t] = p.value;
            tree_index[t] = p.index;
        }
        __syncthreads();
    }
    if (ty == 0 && l < inner)
        write(out_index, out_value, (o * chunks + c) * inner + l, Pair{tree_value[t], tree_index[t]});
}

// Every kernel: out_index (int64) and out_value (T, or nullptr in the last pass) are the pass's output; x, or
// in_value and in_index (nullptr in the first pass), its input.

// Short rows (n <= SHORT_ROW, the host's): thread t of block b takes row 256 b + t, left to right.  A warp per
// row would leave most lanes idle (2^23 rows of 2); neighbouring threads' rows share cache lines.
extern "C" __global__ void __launch_bounds__(BLOCK)
    arg_extreme_rows_thread(long long* __restrict__ out_index, T* __restrict__ out_value, const InT* __restrict__ x,
                            const T* __restrict__ in_value, const long long* __restrict__ in_index, long long rows,
                            long long n) {
    if (in_value == nullptr) rows_thread(out_index, out_value, Source<false>{x, in_value, in_index}, rows, n);
    else rows_thread(out_index, out_value, Source<true>{x, in_value, in_index}, rows, n);
}

// Rows of n <= WARP_ROW: warp w of block b takes row 8 b + w, lanes j, j + 32, ... with two independent chains.
extern "C" __global__ void __launch_bounds__(BLOCK)
    arg_extreme_rows_warp(long long* __restrict__ out_index, T* __restrict__ out_value, const InT* __restrict__ x,
                          const T* __restrict__ in_value, const long long* __restrict__ in_index, long long rows,
                          long long n) {
    if (in_value == nullptr) rows_warp(out_index, out_value, Source<false>{x, in_value, in_index}, rows, n);
    else rows_warp(out_index, out_value, Source<true>{x, in_value, in_index}, rows, n);
}

// Long rows: block b takes elements [s * seg, min(n, (s + 1) * seg)) of row b / splits, s = b % splits, into
// out[b] (a (rows, splits) table: partials when splits > 1, the result when splits == 1).  Four chains per thread,
// the warps' shuffle trees, one shared-memory step over the warp results.
extern "C" __global__ void __launch_bounds__(BLOCK)
    arg_extreme_rows_block(long long* __restrict__ out_index, T* __restrict__ out_value, const InT* __restrict__ x,
                           const T* __restrict__ in_value, const long long* __restrict__ in_index, long long n,
                           long long splits, long long seg) {
    __shared__ T warp_value[BLOCK / 32];
    __shared__ long long warp_index[BLOCK / 32];
    if (in_value == nullptr)
        rows_block(out_index, out_value, Source<false>{x, in_value, in_index}, n, splits, seg, warp_value, warp_index);
    else
        rows_block(out_index, out_value, Source<true>{x, in_value, in_index}, n, splits, seg, warp_value, warp_index);
}

// Any axis but the last, (outer, n, inner): out[(o * chunks + c) * inner + l] = the best pair over rows
// [c * chunk_rows, min(n, (c + 1) * chunk_rows)) of lane l of outer index o.  The grid is outer * lane_chunks *
// chunks blocks; a block is `lanes` lanes x `rows` row groups (axis_columns.cu's geometry), a tree over the row
// groups in shared memory.
extern "C" __global__ void __launch_bounds__(BLOCK)
    arg_extreme_columns(long long* __restrict__ out_index, T* __restrict__ out_value, const InT* __restrict__ x,
                        const T* __restrict__ in_value, const long long* __restrict__ in_index, long long n,
                        long long inner, int lanes, int rows, long long chunk_rows, long long lane_chunks,
                        long long chunks) {
    __shared__ T tree_value[BLOCK];
    __shared__ long long tree_index[BLOCK];
    if (in_value == nullptr)
        columns(out_index, out_value, Source<false>{x, in_value, in_index}, n, inner, lanes, rows, chunk_rows,
                lane_chunks, chunks, tree_value, tree_index);
    else
        columns(out_index, out_value, Source<true>{x, in_value, in_index}, n, inner, lanes, rows, chunk_rows,
                lane_chunks, chunks, tree_value, tree_index);
}
