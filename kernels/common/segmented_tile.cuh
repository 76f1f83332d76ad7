// segmented_tile.cuh -- one tile of a segmented scan over CSR offsets, with decoupled look-back between tiles: the
// shared part of kernels/scan/segmented_lookback.cu (which writes every element's scan) and
// kernels/reduction/segmented_fast.cu (which writes one value per segment).
//
// Segments.  offsets o[0 .. S] (OFFSET_TYPE: int or long long), non-decreasing, o[0] == 0, o[S] == n: segment s is
// x[o[s] .. o[s+1]) (the CSR convention of torch.segment_reduce(offsets=) and cuda.compute).  Element i is a segment
// head when i == o[s] for some s < S (the first element of the next non-empty segment: empty segments add no head).
//
// The operator.  A segmented scan is a plain scan of (value, head flag) pairs under
//     (a, fa) (+) (b, fb) = (fb ? b : a op b, fa | fb)
// which is associative whenever op is (Blelloch 1990, "Prefix sums and their applications", §1.5: segmented scans;
// PMPP ch. 11's exercises), so every piece of the single-pass scan carries over (Merrill & Garland 2016,
// NVR-2016-002; kernels/scan/decoupled_lookback.cu):
//   * a thread folds its ITEMS consecutive items (a set flag restarts the fold), a warp-shuffle Kogge-Stone scan of
//     the (value, flag) pairs, the warp totals through shared memory: the tile's aggregate pair (A, F);
//   * look-back.  The pair's flag never needs to be published: a tile with a head (F) knows its inclusive prefix
//     at once -- it is A, the fold since its last head -- and publishes P(A) immediately; a tile without one
//     publishes A(A), looks back and publishes P(carry op A).  So the look-back of tile_status.cuh, unchanged
//     (combine A's until the nearest P), stops at the latest tile holding a head: the tile where the open segment
//     started.  A tile whose first element is a head needs no carry and does not look back at all.
//   * every item's inclusive value: (the thread's prefix pair, with the carry combined on the left where no head
//     precedes it in the tile) folded with the thread's items, restarting at heads.
//
// The flags of a tile [lo, hi) come from the offsets: warp 0 finds the last s with o[s] <= lo (one before the first
// o[s] > lo: a 32-ary search, 32 probes per step, ~5 steps for 10^7 segments; it is also the first segment that
// segmented_fast.cu's tile writes, so the reduction needs no second search), then the threads walk s, s + 1, ...
// while o[s] < hi and set bit o[s] - lo of a shared bitmask.  A tile does work for each offset that falls in it:
// many empty segments at one place make that tile slower (never wrong).
//
// Bounds.  Every read of x is within [0, n), every read of o within [0, S]; a head bit is set only for lo <= o[s] <
// hi.  So offsets that break the rules (the host's check switched off) give wrong values, never a read out of
// bounds.  Element indices are 64-bit; tile indices 32-bit (n < 2^31 tiles of TILE elements).
#pragma once

#include "operators.cuh"
#include "tile_status.cuh"

#ifndef OFFSET_TYPE
#define OFFSET_TYPE long long
#endif
#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif

using Offset = OFFSET_TYPE;
static_assert(sizeof(T) == 4 || sizeof(T) == 8, "the compute type must be 4 or 8 bytes");

constexpr int SEG_ITEMS = 64 / (int)sizeof(T);  // items per thread: 16 (32-bit T) or 8 (64-bit T)
// __launch_bounds__' minimum resident blocks per SM: 6 for 32-bit T (40 registers, no spills; 6 x 17 KB of shared
// memory), 4 for 64-bit T (56 registers: 6 would spill).  More blocks per SM keep more tiles' loads in flight
// while others search, wait on a barrier or look back.  SEG_MIN_BLOCKS overrides it (tuning).
#ifdef SEG_MIN_BLOCKS
constexpr int SEG_BLOCKS_PER_SM = SEG_MIN_BLOCKS;
#else
constexpr int SEG_BLOCKS_PER_SM = sizeof(T) == 4 ? 6 : 4;
#endif
constexpr int SEG_TILE = BLOCK_THREADS * SEG_ITEMS;  // 4096 or 2048 elements, 16 KB of T
constexpr int SEG_WARPS = BLOCK_THREADS / 32;
constexpr int SEG_MASK_WORDS = SEG_TILE / 32;
constexpr unsigned SEG_FULL = 0xffffffffu;
static_assert(32 % SEG_ITEMS == 0, "a thread's head bits lie in one mask word");

// Shared-memory position of tile element e: a pad word every 32 (the blocked reads t * ITEMS + j, 32 threads at
// once, fall in distinct banks for ITEMS = 16 and 8).
__device__ __forceinline__ int seg_pad(int e) { return e + (e >> 5); }

struct SegTileShared {
    T values[SEG_TILE + SEG_TILE / 32];  // the tile's items, then their inclusive segmented scan
    unsigned heads[SEG_MASK_WORDS];      // bit e: element lo + e is a segment head
    T warp_value[SEG_WARPS];
    int warp_flag[SEG_WARPS];
    T carry;                            // the value of the segment open at lo, from the look-back
    long long search;                   // warp_search's result, shared
    int tile;
};

// The segmented operator on pairs: the earlier pair on the left.
__device__ __forceinline__ void seg_combine(T a, int fa, T b, int fb, T& v, int& f) {
    v = fb ? b : op_combine(a, b);
    f = fa | fb;
}

// First index i in [0, count) with o[i] > v (strict) or o[i] >= v, count if none; all 32 lanes of the calling warp
// call it and get the answer.  For non-decreasing o this is upper_bound / lower_bound; for any o it is some index
// in [0, count] and every probe is in bounds.
__device__ __forceinline__ long long warp_search(const Offset* o, long long count, long long v, bool strict) {
    const int lane = threadIdx.x & 31;
    long long a = 0, b = count;  // the answer lies in [a, b]
    while (b - a > 32) {
        const long long step = (b - a + 31) / 32;  // lane probes a + lane * step (the lanes past b probe nothing)
        const long long p = a + (long long)lane * step;
        const long long q = p < b ? (long long)o[p] : 0;
        const bool past = p < b && (strict ? q > v : q >= v);
        const unsigned ballot = __ballot_sync(SEG_FULL, past);
        if (ballot == 0) {  // every probe is before it: the answer is after the last probe
            const long long last = (b - 1 - a) / step < 31 ? (b - 1 - a) / step : 31;
            a = a + last * step + 1;
        } else {
            const int k = __ffs(ballot) - 1;  // the first probe past v
            const long long hi = a + (long long)k * step;
            a = k == 0 ? a : a + (long long)(k - 1) * step + 1;
            b = hi;
        }
    }
    const long long p = a + lane;
    const bool past = p < b && (strict ? (long long)o[p] > v : (long long)o[p] >= v);
    const unsigned ballot = __ballot_sync(SEG_FULL, past);
    return ballot ? a + __ffs(ballot) - 1 : b;
}

// The look-back of a tile without a head at lo: the op over the aggregates back to the nearest P, earliest on the
// left (kernels/scan/decoupled_lookback.cu's window_reduce).  Warp 0 only.
__device__ __forceinline__ T seg_window_reduce(T v) {
    for (int offset = 1; offset < 32; offset <<= 1) v = op_combine(__shfl_down_sync(SEG_FULL, v, offset), v);
    return v;
}

// Scans tile sh.tile of x: on return (after a block barrier) sh.values[seg_pad(e)] holds the inclusive segmented
// scan at element lo + e (the carry from earlier tiles included) for e < hi - lo, and `items` / `bits` this thread's
// loaded items and head bits, `start` the value before its first item (for the exclusive scan).
__device__ __forceinline__ void seg_scan_tile(SegTileShared& sh, const IN_TYPE* __restrict__ in, long long n,
                                              const Offset* __restrict__ offsets, long long num_segments,
                                              unsigned long long* status, long long num_tiles, unsigned epoch,
                                              T (&items)[SEG_ITEMS], unsigned& bits, T& start) {
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int tile = sh.tile;
    const long long lo = (long long)tile * SEG_TILE;
    const long long hi = lo + SEG_TILE < n ? lo + SEG_TILE : n;
    // 1. Loads (coalesced, element k * BLOCK_THREADS + t), the identity past the end; the mask cleared.
#pragma unroll
    for (int k = 0; k < SEG_ITEMS; ++k) {
        const int e = k * BLOCK_THREADS + t;
        sh.values[seg_pad(e)] = lo + e < hi ? op_load(in[lo + e]) : op_identity();
    }
    for (int w = t; w < SEG_MASK_WORDS; w += BLOCK_THREADS) sh.heads[w] = 0u;
    if (warp == 0) {
        const long long upper = warp_search(offsets, num_segments + 1, lo, true);  // first s with o[s] > lo
        if (lane == 0) sh.search = upper > 0 ? upper - 1 : 0;  // the last s with o[s] <= lo (valid offsets)
    }
    __syncthreads();
    // 2. Head bits: offsets o[s] in [lo, hi), s < S.
    for (long long s = sh.search + t; s < num_segments; s += BLOCK_THREADS) {
        const long long o = (long long)offsets[s];
        if (o >= hi) break;
        if (o >= lo) atomicOr(&sh.heads[(o - lo) >> 5], 1u << ((o - lo) & 31));
    }
    __syncthreads();
    // 3. This thread's items (blocked: t * ITEMS ..) and bits; its fold; the warp's segmented scan of the folds.
    bits = (sh.heads[(t * SEG_ITEMS) >> 5] >> ((t * SEG_ITEMS) & 31)) & (SEG_ITEMS == 32 ? SEG_FULL : ((1u << SEG_ITEMS) - 1u));
#pragma unroll
    for (int j = 0; j < SEG_ITEMS; ++j) items[j] = sh.values[seg_pad(t * SEG_ITEMS + j)];
    T fold = items[0];
#pragma unroll
    for (int j = 1; j < SEG_ITEMS; ++j) fold = ((bits >> j) & 1u) ? items[j] : op_combine(fold, items[j]);
    int flag = bits != 0u;
    T v = fold;
    int f = flag;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T yv = __shfl_up_sync(SEG_FULL, v, offset);
        const int yf = __shfl_up_sync(SEG_FULL, f, offset);
        if (lane >= offset) seg_combine(yv, yf, v, f, v, f);
    }
    T prefix = __shfl_up_sync(SEG_FULL, v, 1);  // exclusive within the warp
    int prefix_flag = __shfl_up_sync(SEG_FULL, f, 1);
    if (lane == 0) {
        prefix = op_identity();
        prefix_flag = 0;
    }
    if (lane == 31) {
        sh.warp_value[warp] = v;
        sh.warp_flag[warp] = f;
    }
    __syncthreads();
    T warp_prefix = op_identity(), aggregate = op_identity();
    int warp_prefix_flag = 0, aggregate_flag = 0;
#pragma unroll
    for (int w = 0; w < SEG_WARPS; ++w) {
        if (w == warp) {
            warp_prefix = aggregate;
            warp_prefix_flag = aggregate_flag;
        }
        seg_combine(aggregate, aggregate_flag, sh.warp_value[w], sh.warp_flag[w], aggregate, aggregate_flag);
    }
    seg_combine(warp_prefix, warp_prefix_flag, prefix, prefix_flag, prefix, prefix_flag);
    // 4. Look-back (warp 0).  Tile 0 and tiles with a head publish P(aggregate) at once; a tile without a head at lo
    //    combines its predecessors' values back to the nearest P.
    const bool head_at_lo = sh.heads[0] & 1u;
    if (warp == 0) {
        T carry = op_identity();
        if (num_tiles > 1) {
            TileStatus<T> st(status, epoch);
            const bool known = tile == 0 || aggregate_flag;
            if (lane == 0) st.publish(tile, known ? STATUS_P : STATUS_A, aggregate);
            if (tile > 0 && !head_at_lo) {
                for (int window = tile - 1;; window -= 32) {
                    unsigned status_flag;
                    T value;
                    st.read_window(window - lane, op_identity(), status_flag, value);
                    const unsigned p_lanes = __ballot_sync(SEG_FULL, status_flag == STATUS_P);
                    const int nearest_p = p_lanes ? __ffs(p_lanes) - 1 : 32;
                    const T window_total = seg_window_reduce(lane <= nearest_p ? value : op_identity());
                    carry = op_combine(window_total, carry);
                    if (p_lanes) break;
                }
                if (lane == 0 && !known) st.publish(tile, STATUS_P, op_combine(carry, aggregate));
            }
        }
        if (lane == 0) sh.carry = carry;
    }
    __syncthreads();
    // 5. Every item's inclusive value, into shared memory (this thread's own positions: no barrier before).
    start = prefix_flag ? prefix : op_combine(sh.carry, prefix);
    T running = start;
#pragma unroll
    for (int j = 0; j < SEG_ITEMS; ++j) {
        running = ((bits >> j) & 1u) ? items[j] : op_combine(running, items[j]);
        sh.values[seg_pad(t * SEG_ITEMS + j)] = running;
    }
    __syncthreads();
}

// The tile index (from a counter: a tile only waits on tiles that took their index earlier, so they are running or
// done, whatever order the hardware starts blocks in) and, at the end, the counter put back to 0 by the last block
// (kernels/scan/decoupled_lookback.cu's protocol; one tile: the block's own index and no counter).
__device__ __forceinline__ void seg_take_tile(SegTileShared& sh, unsigned* counter, long long num_tiles) {
    if (threadIdx.x == 0) sh.tile = num_tiles > 1 ? (int)atomicAdd(counter, 1u) : (int)blockIdx.x;
    __syncthreads();
}

__device__ __forceinline__ void seg_release(unsigned* counter, long long num_tiles) {
    if (num_tiles > 1 && threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&counter[1], 1u) == gridDim.x - 1) {
            __threadfence();
            atomicExch(&counter[0], 0u);
            atomicExch(&counter[1], 0u);
        }
    }
}
