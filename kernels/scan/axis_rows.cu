// axis_rows.cu -- a scan along the LAST axis of a C-contiguous array (its rows), in one pass over the whole array:
// a segmented scan (PMPP ch. 11's "segmented scan" exercise) with single-pass decoupled look-back (PMPP §11.7
// taken further by Merrill & Garland 2016, as in decoupled_lookback.cu).
//
// Why one flattened, segmented scan.  A (rows, n) table scanned along its rows is the 1-D scan of the flattened
// array with the running value reset at every row start (a "head", at the indices that are multiples of n).  The
// flattened array is cut into tiles of TILE elements whatever n is, so any n from 1 to 2^31 and beyond runs with
// every block busy and every element read and written once (a copy's traffic): short rows many to a tile, long
// rows over many tiles.
//
// The segmented operator on (flag, value) pairs, a before b: (fa | fb, fb ? vb : op(va, vb)) -- associative, so
// the usual warp-shuffle and block scans work on pairs.  The look-back changes in one place: a tile that holds a
// row start knows its inclusive prefix at its end without its predecessors (the op over its elements since its last
// head), so it publishes status P at once, never A; a tile's look-back stops at the first P, so no look-back goes
// past a row start.  A tile whose first element is a head needs no look-back at all; any other tile looks back for
// the prefix of the elements before its first head (decoupled_lookback.cu's window of 32 predecessors per step).
//
// Per tile (one block per tile, the tile index from an atomic counter so a tile waits only on tiles that took
// their index earlier -- no deadlock whatever order blocks start in):
//   1. coalesced loads (element k*BLOCK_THREADS + t of the tile by thread t) into shared memory, converted by
//      op_load (to the result dtype, then widened to T: NumPy's conversion, in the load); each thread then reads
//      its ITEMS consecutive elements (padded: no bank conflicts);
//   2. each thread's (flag, value) total; a warp-shuffle scan of the pairs; the warp totals through shared memory;
//   3. warp 0: publish, look back (if needed), publish P;
//   4. each thread rescans its items from its prefix, resetting at its heads; results back through shared memory
//      and stored coalesced by op_store (rounded / cut to the result dtype).
//
// Lengths: every element index is 64-bit; tile indices are 32-bit ints (num_tiles < 2^31: 2^43 elements).
// Status words and the epoch protocol: ../common/tile_status.cuh (the same buffers' rules as decoupled_lookback.cu).
#include "../common/operators.cuh"
#include "../common/tile_status.cuh"

#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif
#ifndef ITEMS
#define ITEMS 16  // consecutive elements per thread: TILE = 4096
#endif
#if BLOCK_THREADS % 32 != 0 || BLOCK_THREADS > 1024
#error "BLOCK_THREADS must be a multiple of 32, at most 1024"
#endif
static_assert(sizeof(T) == 4 || sizeof(T) == 8, "the accumulator type must be 4 or 8 bytes");
using InT = IN_TYPE;  // aliases: a functional cast needs one word ("long long" is two)
using OutT = OUT_TYPE;

constexpr int TILE = BLOCK_THREADS * ITEMS;
constexpr int WARPS = BLOCK_THREADS / 32;
constexpr unsigned FULL = 0xffffffffu;

// one padding element after every 32: the blocked reads (thread t: t*ITEMS + i) spread over the banks
__device__ __forceinline__ int pad(int e) { return e + (e >> 5); }

struct Seg {  // a segmented scan's element: did a row start in it, and the op over its elements since the last one
    bool flag;
    T value;
};

// a before b
__device__ __forceinline__ Seg seg_combine(Seg a, Seg b) {
    return Seg{a.flag || b.flag, b.flag ? b.value : op_combine(a.value, b.value)};
}

__device__ __forceinline__ Seg warp_inclusive_scan(Seg s, int lane) {
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T v = __shfl_up_sync(FULL, s.value, offset);
        const bool f = __shfl_up_sync(FULL, (int)s.flag, offset) != 0;
        if (lane >= offset) s = seg_combine(Seg{f, v}, s);
    }
    return s;
}

// The op over a look-back window, in lane 0: lane i holds tile (window - i), so lane 31 holds the earliest tile and
// the result is v31 (+) ... (+) v1 (+) v0.  Each step combines two adjacent runs of lanes, the earlier run on the
// left, so only associativity is used, not commutativity (PMPP §11.1): a custom operator such as the composition of
// affine maps (a linear recurrence) scans correctly.  (A shfl_xor butterfly would combine the nearer tile first.)
// Only lane 0's value is the window's total.
__device__ __forceinline__ T window_reduce(T v) {
    for (int offset = 1; offset < 32; offset <<= 1) v = op_combine(__shfl_down_sync(FULL, v, offset), v);
    return v;
}

// out[r*n + j] = op over in[r*n .. r*n + j] (exclusive: .. r*n + j - 1, the identity at j = 0), for total = rows*n
// elements.  num_tiles = ceil(total / TILE); with num_tiles > 1, tile_counter[0..1] are 0 at entry (and again at
// exit) and status holds the tile status words of this stream (tile_status.cuh), tagged with `epoch`.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS)
    axis_rows_scan(OutT* __restrict__ out, const InT* __restrict__ in, long long total, long long n,
                   int exclusive, unsigned int* tile_counter, unsigned long long* status, long long num_tiles,
                   unsigned int epoch) {
    __shared__ T smem[TILE + TILE / 32];
    __shared__ T warp_value[WARPS];
    __shared__ bool warp_flag[WARPS];
    __shared__ T shared_prefix;
    __shared__ int shared_tile;

    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    if (t == 0) shared_tile = num_tiles > 1 ? (int)atomicAdd(tile_counter, 1u) : (int)blockIdx.x;
    __syncthreads();
    const int tile = shared_tile;
    const long long base = (long long)tile * TILE;

    // 1. coalesced loads, converted to T; the identity past the end
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int e = k * BLOCK_THREADS + t;
        smem[pad(e)] = base + e < total ? op_load(in[base + e]) : op_identity();
    }
    __syncthreads();
    T items[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) items[i] = smem[pad(t * ITEMS + i)];

    // 2. this thread's (flag, value): the heads are where the position in the row, r, is 0 (one 64-bit % per thread)
    const long long first = base + (long long)t * ITEMS;
    const long long r0 = first % n;
    Seg mine{false, op_identity()};
    {
        long long r = r0;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            if (r == 0) mine = Seg{true, op_identity()};
            mine.value = op_combine(mine.value, items[i]);
            if (++r == n) r = 0;
        }
    }
    const Seg inclusive = warp_inclusive_scan(mine, lane);
    Seg thread_prefix{__shfl_up_sync(FULL, (int)inclusive.flag, 1) != 0, __shfl_up_sync(FULL, inclusive.value, 1)};
    if (lane == 0) thread_prefix = Seg{false, op_identity()};
    if (lane == 31) {
        warp_value[warp] = inclusive.value;
        warp_flag[warp] = inclusive.flag;
    }
    __syncthreads();
    Seg warp_prefix{false, op_identity()}, aggregate{false, op_identity()};
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        if (w == warp) warp_prefix = aggregate;
        aggregate = seg_combine(aggregate, Seg{warp_flag[w], warp_value[w]});
    }
    thread_prefix = seg_combine(warp_prefix, thread_prefix);

    // 3. the look-back (warp 0).  A tile that starts a row needs no prefix; a tile holding a head publishes P at once.
    const bool starts_row = base % n == 0;
    if (warp == 0) {
        T exclusive_prefix = op_identity();
        if (num_tiles > 1) {
            TileStatus<T> st(status, epoch);
            if (lane == 0 && (tile == 0 || aggregate.flag)) st.publish(tile, STATUS_P, aggregate.value);
            if (tile > 0 && !starts_row) {
                if (lane == 0 && !aggregate.flag) st.publish(tile, STATUS_A, aggregate.value);
                for (int window = tile - 1;; window -= 32) {
                    unsigned flag;
                    T value;
                    st.read_window(window - lane, op_identity(), flag, value);
                    const unsigned p_lanes = __ballot_sync(FULL, flag == STATUS_P);
                    const int nearest_p = p_lanes ? __ffs(p_lanes) - 1 : 32;
                    const T window_total = window_reduce(lane <= nearest_p ? value : op_identity());
                    exclusive_prefix = op_combine(window_total, exclusive_prefix);
                    if (p_lanes) break;
                }
                if (lane == 0 && !aggregate.flag)
                    st.publish(tile, STATUS_P, op_combine(exclusive_prefix, aggregate.value));
            }
        }
        if (lane == 0) shared_prefix = exclusive_prefix;
    }
    __syncthreads();

    // 4. rescan from the prefix (the tile's prefix counts only up to this thread's first head), then store
    T running = thread_prefix.flag ? thread_prefix.value : op_combine(shared_prefix, thread_prefix.value);
    {
        long long r = r0;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            if (r == 0) running = op_identity();
            const T next = op_combine(running, items[i]);
            items[i] = exclusive ? running : next;
            running = next;
            if (++r == n) r = 0;
        }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) smem[pad(t * ITEMS + i)] = items[i];  // own slots: read by this thread above
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int e = k * BLOCK_THREADS + t;
        if (base + e < total) out[base + e] = op_store(smem[pad(e)]);
    }

    // the counter back to 0 for the next launch, by the last block to finish
    if (num_tiles > 1 && t == 0) {
        __threadfence();
        if (atomicAdd(&tile_counter[1], 1u) == gridDim.x - 1) {
            __threadfence();
            atomicExch(&tile_counter[0], 0u);
            atomicExch(&tile_counter[1], 0u);
        }
    }
}
