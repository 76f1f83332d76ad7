// decoupled_lookback.cu -- single-pass prefix scan with decoupled look-back (Merrill & Garland, "Single-pass
// Parallel Prefix Scan with Decoupled Look-back", NVIDIA technical report NVR-2016-002).  Beyond the books:
// PMPP §11.7's domino (single_pass.cu) makes every block wait for its predecessor's *inclusive* prefix, so the
// hand-offs form a serial chain of L2 round trips.  Here every tile publishes its own *aggregate* as soon as it
// has it (status A), and its inclusive prefix once it knows it (status P); a tile computes its exclusive prefix
// by looking back over its predecessors, combining A aggregates until it meets a P.  No tile waits for a chain.
//
// Pieces, one concern per file (as CUB's agent_scan.cuh and single_pass_scan_operators.cuh):
//   ../common/tile_status.cuh  the status words (epoch-tagged flags; packed words for 4-byte types, (half, flag)
//                              pairs for 8-byte types) and the warp's poll of 32 predecessors;
//   ../common/cp_async.cuh     the asynchronous global -> shared copies that keep the next tile's loads in flight;
//   this file                  the policy, the block-wide scan of one tile and the loop over tiles.
// What was tried, what won and by how much: docs/decoupled_lookback_tuning.md.
//
// Policy (the #defines; their defaults are the shipped configuration, pyscan/scans/decoupled_lookback.py CONFIG,
// tuned on an H100): a tile is BLOCK_THREADS threads x VECS_PER_THREAD 16-byte vectors (256 x 8: 8192 elements of
// a 4-byte type, 4096 of an 8-byte type, 32 KB either way); MIN_BLOCKS blocks per SM (3: caps the registers at 80).
// VECTOR_LOADS is the host's: 1 when `in` and `out` are 16-byte aligned.  Then the blocks are persistent (the host
// launches MIN_BLOCKS per SM), each taking tile after tile from a counter with the next tile's loads (cp.async)
// in flight while it works on one, in two tile buffers of dynamic shared memory (72 KB; less where x and the result
// are narrower than T, REGION_VECS below, where the 1-D build runs 4 blocks per SM).  Unaligned arrays
// (VECTOR_LOADS 0): one block per tile, scalar loads, one buffer.
//
// Per tile:
//   1. tile index from an atomic counter (not blockIdx.x: a tile only waits on tiles that took their index
//      earlier, so they are running or finished: no deadlock, whatever order the hardware starts blocks in);
//   2. each warp loads its own contiguous 32 x ITEMS elements with coalesced 16-byte vector copies into its own
//      region of shared memory, then each lane reads ITEMS consecutive elements back ("blocked" arrangement).
//      Warp-private regions need only __syncwarp, not a block barrier (a padding vector every 8 vectors avoids
//      bank conflicts).  Partial last tile and unaligned arrays: scalar loads, the identity past the end;
//   3. each thread reduces its items; a warp-shuffle scan of the thread totals; the warp totals through shared
//      memory: the tile aggregate and each thread's exclusive prefix within the tile.  The next tile's loads have
//      landed too: its aggregate is computed now by the same arithmetic and published (A) before this tile's
//      look-back (a block holds the index of the tile it prefetched; if that tile's A waited for this look-back,
//      look-backs would wait on look-backs, a chain through the blocks);
//   4. warp 0 publishes A(aggregate) (tile 0: P(aggregate)), looks back 32 predecessors at a time (one lane each:
//      ballot to wait until none is X, ballot to find the nearest P, shuffle-reduce of the values up to it, in
//      tile order: window_reduce), then publishes P(exclusive prefix (+) aggregate).  Every combine of the scan
//      keeps the earlier value on the left, so the operator need not be commutative;
//   5. each thread rescans its items (read again from shared memory: no registers held over the look-back) from
//      its prefix, writes them to its warp's region, and the warp stores its part with coalesced 16-byte
//      streaming stores.
//
// Status buffer: zeroed once by the host and kept between launches; each launch's flags carry its epoch
// (tile_status.cuh), and the tile counter is put back to 0 for the next launch.  Captured into a CUDA graph, where
// an epoch argument would be frozen at its captured value, a launch gets a buffer the graph keeps for good (zeroed
// once, outside the capture) and the epoch argument EPOCH_ON_DEVICE: the epoch then lives in the counter's word
// (below), each block reads it with its first tile index, and the counter is put back with the next epoch, so every
// replay has a new epoch and the graph needs no memset node.  Where pyscan has no such buffer left, the launch gets
// one of its own, zeroed by a memset node before it, and epoch 0 (the host's choice, pyscan/runtime/capture.py).
// Counter words (tile_counter, 64-bit): [0] the tile counter (low 32 bits) and a graph launch's epoch (high 32
// bits): one atomic gives a block its first tile index and its launch's epoch; [1] the count of finished blocks
// (low 32 bits).  Where every block takes one tile (grid == num_tiles: one block per tile, or a persistent grid of
// few tiles), the block that takes the last index puts the counter back at once, for no block takes another; else
// the last block to finish does, after counting itself done (the latency of one atomic more at the end of a
// launch, measured in graph replays of small scans: docs/decoupled_lookback_tuning.md).  Layout of `status`
// (64-bit words): 4-byte types status[t]; 8-byte types status[4t .. 4t+3].  num_tiles == 1: no status and no
// counter are touched (the host may pass null pointers): one launch scans a small array.
//
// Types (kernels/common/operators.cuh): x is read as IN_TYPE and the result written as OUT_TYPE, both possibly
// narrower than the compute type T (int8 or bool summed in int64, float16 in float32) or, for IN_TYPE, wider
// (float64 scanned with dtype=float32).  The tile is sized by the widest of them (WIDEST: 16-byte vectors of
// 16 / WIDEST elements), so a thread's ITEMS values of T fit its registers; the warp's region of shared memory
// holds its part of the tile as IN_TYPE after the loads (the cp.async copies are raw bytes) and as OUT_TYPE before
// the stores, each in its own layout of padded 16-byte vectors; op_load converts as a lane reads its items,
// op_store as it writes its results.  Where all three are T (CONVERTS false) this is the shipped kernel as tuned.
//
// Rows (ROWS 1, the entry point decoupled_lookback_rows_scan; pyscan/scans/axis.py): the scan along the last axis
// of a C-contiguous (rows, row_length) table, every row on its own, in this same one pass over the flattened array
// (PMPP ch. 11's segmented scan exercise; Blelloch 1990, "Prefix sums and their applications", §1.5).  A row start
// (a "head": an index that is a multiple of row_length) restarts the running value.  The tile's scan runs on
// (value, head flag) pairs under (a, fa) (+) (b, fb) = (fb ? b : a op b, fa | fb), associative whenever op is; the
// flags come from the index (a lane's first head and the distance between heads), never from memory.  The look-back
// changes in one place: a tile holding a head knows its inclusive prefix at its end without its predecessors (the
// op over its elements since its last head), so it publishes P at once, never A, and no look-back goes past a row
// start; a tile whose first element is a head does not look back at all.  So rows of 2 and rows of 2^31 run with
// every block busy, each element read and written once, with the persistent blocks, copies in flight and early
// aggregates of the 1-D scan.  With ROWS 0 every flag is a constant false and the code below is the 1-D scan's.
//
// Segments (SEGMENTS 1, the entry points decoupled_lookback_segmented_scan and _reduce; pyscan/scans/segments.py,
// pyscan/reductions/segments.py): the same pairs, the heads read from CSR offsets o[0 .. S] (OFFSET_TYPE, int or
// long long; segment s is x[o[s] .. o[s+1]), element i a head when i == o[s] for some s < S).  Each warp finds the
// heads of its part [lo, hi) of a tile itself (segment_heads: a search for the first o[s] >= lo that starts where
// equal segments would put it, then a walk over the offsets while they are < hi, into a bit per element), for the
// next tile while that tile's copies are in flight, so the persistent blocks, the early aggregates and the
// look-back that stops at a head are the rows build's.  The reduction (VALUES) writes no element: after the rescan
// each warp walks the segments that end in its part (lo < o[s+1] <= hi; the part at 0 also the empty ones at 0)
// and writes out[s], the inclusive value at o[s+1] - 1 read from its region of shared memory, or the identity for
// an empty segment; a tile whose aggregate was published early reuses its lanes' pairs from then, and its warp
// parts in which no segment ends do no more than lend their totals to the look-back.  Bounds: every read of x is
// in [0, n), every read of o in [0, S], a head bit is set only for lo <= o[s] < hi and a value read only for
// lo <= o[s+1] - 1 < hi: offsets that break the rules (the host's check switched off) give wrong values, never an
// access out of bounds.
//
// Lengths: n is 64-bit and every element offset is computed in 64 bits ((long long)tile * TILE + ...); tile
// indices are 32-bit ints, so num_tiles (plus the persistent grid) must stay below 2^31: n < 2^44 elements of a
// 4-byte type, 2^43 of an 8-byte type, more than any device holds.
#include "../common/cp_async.cuh"
#include "../common/operators.cuh"
#include "../common/tile_status.cuh"

#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif
#ifndef VECS_PER_THREAD
#define VECS_PER_THREAD 8  // 16-byte vectors per thread (2, 4 or 8: the padding below is conflict-free for these)
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 3  // __launch_bounds__' minimum resident blocks per SM: caps the registers per thread
#endif
// The epoch argument that says "read it from the status buffer, and advance it" (see the header).
constexpr unsigned int EPOCH_ON_DEVICE = 0xffffffffu;

#ifndef ROWS
#define ROWS 0  // 1: scan every row of row_length elements on its own (the entry point decoupled_lookback_rows_scan)
#endif

#ifndef SEGMENTS
#define SEGMENTS 0  // 1: every segment of CSR offsets on its own (decoupled_lookback_segmented_scan / _reduce)
#endif
#ifndef OFFSET_TYPE
#define OFFSET_TYPE long long  // (SEGMENTS) the offsets' type: int or long long
#endif
#if ROWS && SEGMENTS
#error "ROWS and SEGMENTS are two builds"
#endif

#ifndef VECTOR_LOADS
#define VECTOR_LOADS 1  // the host passes 0 when `in` or `out` is not 16-byte aligned
#endif

#if BLOCK_THREADS % 32 != 0 || BLOCK_THREADS > 1024
#error "BLOCK_THREADS must be a multiple of 32, at most 1024"
#endif
static_assert(sizeof(T) == 4 || sizeof(T) == 8, "the compute type must be 4 or 8 bytes");
static_assert(sizeof(OUT_TYPE) <= sizeof(T) && 16 % sizeof(IN_TYPE) == 0, "the result is at most T wide");

// ---- the policy ---------------------------------------------------------------------------------------------

constexpr bool PERSISTENT = VECTOR_LOADS != 0;  // persistent blocks, the next tile's copies in flight
constexpr int STAGES = PERSISTENT ? 2 : 1;      // tile buffers in shared memory
constexpr int L2_PREFETCH_BYTES = 128;          // the L2 fetches 128-byte lines around each copy
constexpr bool CONVERTS = !cuda::std::is_same<IN_TYPE, T>::value || !cuda::std::is_same<OUT_TYPE, T>::value;
constexpr int WIDEST = sizeof(IN_TYPE) > sizeof(T) ? (int)sizeof(IN_TYPE) : (int)sizeof(T);
constexpr int VEC = 16 / WIDEST;                 // elements per 16-byte vector of the widest type: 4 or 2
constexpr int ITEMS = VEC * VECS_PER_THREAD;     // items per thread
constexpr int TILE = BLOCK_THREADS * ITEMS;      // elements per tile
constexpr int WARP_ITEMS = 32 * ITEMS;           // elements of one warp's part of the tile
constexpr int WARP_VECS = 32 * VECS_PER_THREAD;
// x's and the result's elements in 16-byte vectors: per vector, per warp part, per thread's items (0: the items
// of a thread are less than a vector, and are read or written one by one).
template <typename E>
struct Layout {
    static constexpr int per_vec = 16 / (int)sizeof(E);
    static constexpr int warp_vecs = WARP_ITEMS / per_vec;
    static constexpr int thread_vecs = (ITEMS % per_vec == 0) ? ITEMS / per_vec : 0;
};
// A warp's region of a tile buffer holds its part of the tile as T, or in converting builds as x's type after the
// loads and as the result's before the stores: it is sized by the widest of what it holds, so a build whose x and
// result are both narrower than T (float16 scanned in float32) needs half the shared memory, and the host runs
// more blocks per SM for the 1-D build (pyscan/scans/decoupled_lookback.py NARROW; the rows build keeps its 3).
constexpr int REGION_VECS = !CONVERTS ? WARP_VECS
                            : Layout<IN_TYPE>::warp_vecs > Layout<OUT_TYPE>::warp_vecs ? Layout<IN_TYPE>::warp_vecs
                                                                                       : Layout<OUT_TYPE>::warp_vecs;
constexpr int WARP_SMEM_VECS = REGION_VECS + REGION_VECS / 8;  // one padding vector after every 8
constexpr int WARPS = BLOCK_THREADS / 32;
constexpr int STAGE_VECS = WARPS * WARP_SMEM_VECS;  // one tile buffer (padded), in 16-byte vectors
constexpr unsigned FULL = 0xffffffffu;
constexpr bool PAIRS = ROWS || SEGMENTS;  // the scan runs on (value, head flag) pairs
using Offset = OFFSET_TYPE;

// Padded position of vector v in a warp's region of shared memory.  A lane reading its blocked vectors
// VECS_PER_THREAD * lane + j, eight lanes at once (one 128-byte phase of a 16-byte access), hits 8 different
// 16-byte bank groups for VECS_PER_THREAD = 2, 4, 8; the striped accesses (8 consecutive v) do too.
__device__ __forceinline__ int pad_vec(int v) { return v + (v >> 3); }
__device__ __forceinline__ int pad_elem(int e) { return pad_vec(e / VEC) * VEC + e % VEC; }
// The same for elements of type E (x's or the result's) in their own layout of padded vectors.
template <typename E>
__device__ __forceinline__ int pad_elem_of(int e) {
    constexpr int V = Layout<E>::per_vec;
    return pad_vec(e / V) * V + e % V;
}

union Vec {
    int4 raw;
    T e[VEC];
};

// ---- warp and thread pieces ---------------------------------------------------------------------------------

// The op over a look-back window, in lane 0: lane i holds tile (window - i), so lane 31 holds the earliest tile and
// the result is v31 (+) ... (+) v1 (+) v0.  Each step combines two adjacent runs of lanes, the earlier run on the
// left, so only associativity is used, not commutativity (PMPP §11.1): a custom operator such as the composition of
// affine maps (a linear recurrence) scans correctly.  (A shfl_xor butterfly would combine the nearer tile first.)
// Only lane 0's value is the window's total.
__device__ __forceinline__ T window_reduce(T v) {
    for (int offset = 1; offset < 32; offset <<= 1) v = op_combine(__shfl_down_sync(FULL, v, offset), v);
    return v;
}

// This lane's ITEMS consecutive elements ("blocked") from its warp's region of shared memory.
__device__ __forceinline__ void read_items(const int4* wvec, int lane, T (&items)[ITEMS]) {
#pragma unroll
    for (int j = 0; j < VECS_PER_THREAD; ++j) {
        Vec v;
        v.raw = wvec[pad_vec(lane * VECS_PER_THREAD + j)];
#pragma unroll
        for (int i = 0; i < VEC; ++i) items[j * VEC + i] = v.e[i];
    }
}

// The same from x's elements (IN_TYPE, in their layout), converted with op_load; items at or past `valid` (a
// partial tile's end) are the identity.  Whole vectors where a thread's items fill them.
__device__ __forceinline__ void read_items_converted(const int4* wvec, int lane, int valid, T (&items)[ITEMS]) {
    using L = Layout<IN_TYPE>;
    if constexpr (L::thread_vecs > 0) {
#pragma unroll
        for (int j = 0; j < L::thread_vecs; ++j) {
            const int4 raw = wvec[pad_vec(lane * L::thread_vecs + j)];
            IN_TYPE e[L::per_vec];
            memcpy(e, &raw, 16);
#pragma unroll
            for (int i = 0; i < L::per_vec; ++i) {
                const int k = j * L::per_vec + i;
                items[k] = lane * ITEMS + k < valid ? op_load(e[i]) : op_identity();
            }
        }
    } else {
        const IN_TYPE* p = reinterpret_cast<const IN_TYPE*>(wvec);
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const int e = lane * ITEMS + i;
            items[i] = e < valid ? op_load(p[pad_elem_of<IN_TYPE>(e)]) : op_identity();
        }
    }
}

// This lane's results as OUT_TYPE (op_store) into its warp's region, in the result's layout.  The caller has made
// every lane of the warp finish reading the region first (__syncwarp): the layouts differ.
__device__ __forceinline__ void write_results_converted(int4* wvec, int lane, const T (&items)[ITEMS]) {
    using L = Layout<OUT_TYPE>;
    if constexpr (L::thread_vecs > 0) {
#pragma unroll
        for (int j = 0; j < L::thread_vecs; ++j) {
            OUT_TYPE e[L::per_vec];
#pragma unroll
            for (int i = 0; i < L::per_vec; ++i) e[i] = op_store(items[j * L::per_vec + i]);
            int4 raw;
            memcpy(&raw, e, 16);
            wvec[pad_vec(lane * L::thread_vecs + j)] = raw;
        }
    } else {
        OUT_TYPE* p = reinterpret_cast<OUT_TYPE*>(wvec);
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) p[pad_elem_of<OUT_TYPE>(lane * ITEMS + i)] = op_store(items[i]);
    }
}

// op over the items, left to right.
__device__ __forceinline__ T thread_total_of(const T (&items)[ITEMS]) {
    T total = items[0];
#pragma unroll
    for (int i = 1; i < ITEMS; ++i) total = op_combine(total, items[i]);
    return total;
}

// Inclusive warp-shuffle scan of the lanes' values (Kogge-Stone over 32 lanes).
__device__ __forceinline__ T warp_inclusive_scan(T v, int lane) {
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T y = __shfl_up_sync(FULL, v, offset);
        if (lane >= offset) v = op_combine(y, v);
    }
    return v;
}

// ---- rows: (value, head flag) pairs (ROWS 1) -----------------------------------------------------------------

struct Pair {  // the op over a run of elements since its last row start, and whether it holds one
    T value;
    bool flag;
};

// a before b
__device__ __forceinline__ Pair pair_combine(Pair a, Pair b) {
    return Pair{b.flag ? b.value : op_combine(a.value, b.value), a.flag || b.flag};
}

__device__ __forceinline__ Pair warp_inclusive_scan(Pair s, int lane) {
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T v = __shfl_up_sync(FULL, s.value, offset);
        const bool f = __shfl_up_sync(FULL, (int)s.flag, offset) != 0;
        if (lane >= offset) s = pair_combine(Pair{v, f}, s);
    }
    return s;
}

// The heads among a lane's ITEMS items.  Rows: the first one (ITEMS: none) and the distance to the next (at least
// ITEMS: none after it).  Segments: bit i for item i.
struct Heads {
    int first, step;
    unsigned bits;
};
// The rows' heads of a lane whose first item is element g.  One 64-bit % per lane and tile.
__device__ __forceinline__ Heads heads_at(long long g, long long row_length) {
    const long long r = g % row_length;
    const long long d = r == 0 ? 0 : row_length - r;
    return Heads{d < ITEMS ? (int)d : ITEMS, row_length < ITEMS ? (int)row_length : ITEMS, 0u};
}
// Is item i (in an unrolled loop from 0) a head?  Rows: `next` runs over first, first + step, ...
__device__ __forceinline__ bool is_head(const Heads& h, int i, int& next) {
    if constexpr (SEGMENTS) return (h.bits >> i) & 1u;
    const bool head = i == next;
    if (head) next += h.step;
    return head;
}

// The lane's (value, flag): the op over its items since its last head (from the identity at a head).
__device__ __forceinline__ Pair thread_pair_of(const T (&items)[ITEMS], Heads h) {
    Pair p{op_identity(), false};
    // No head among the items of any lane of the warp (most warps, in long segments): the same combines, without
    // the flags.  Warp-uniform: where only some lanes had none, the two loops would run one after the other.
    if (SEGMENTS && __all_sync(FULL, h.bits == 0u)) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) p.value = op_combine(p.value, items[i]);
        return p;
    }
    int head = h.first;
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        if (is_head(h, i, head)) p = Pair{op_identity(), true};
        p.value = op_combine(p.value, items[i]);
    }
    return p;
}

// ---- segments: heads from CSR offsets (SEGMENTS 1) -----------------------------------------------------------

// The first index i in [0, count) with o[i] >= v, count if none; every lane of the warp calls it and gets the answer.
// First 32 consecutive probes around `guess` (where equal segments would put it: one step for uniform lengths), then
// a 32-ary search of the side it lies on (32 probes a step: ~5 steps for 10^7 segments).  For non-decreasing o it is
// lower_bound; for any o some index in [0, count], every probe in bounds.
__device__ __forceinline__ long long warp_lower_bound(const Offset* o, long long count, long long v, long long guess,
                                                     int lane) {
    long long a = 0, b = count;  // the answer lies in [a, b]
    {
        const long long top = count > 32 ? count - 32 : 0;
        const long long base = guess - 16 < 0 ? 0 : guess - 16 > top ? top : guess - 16;
        const long long p = base + lane;
        const unsigned ballot = __ballot_sync(FULL, p < count && (long long)o[p] >= v);
        if (ballot == 0) {
            a = base + 32 < count ? base + 32 : count;
        } else {
            const int k = __ffs(ballot) - 1;
            if (k > 0) return base + k;  // o[base + k - 1] < v <= o[base + k]
            b = base;
        }
    }
    while (b - a > 32) {
        const long long step = (b - a + 31) / 32;  // lane probes a + lane * step (the lanes past b probe nothing)
        const long long p = a + (long long)lane * step;
        const unsigned ballot = __ballot_sync(FULL, p < b && (long long)o[p] >= v);
        if (ballot == 0) {  // every probe is before it: the answer is after the last probe
            const long long last = (b - 1 - a) / step < 31 ? (b - 1 - a) / step : 31;
            a = a + last * step + 1;
        } else {
            const int k = __ffs(ballot) - 1;  // the first probe at or past v
            b = a + (long long)k * step;
            a = k == 0 ? a : a + (long long)(k - 1) * step + 1;
        }
    }
    const long long p = a + lane;
    const unsigned ballot = __ballot_sync(FULL, p < b && (long long)o[p] >= v);
    return ballot ? a + __ffs(ballot) - 1 : b;
}

constexpr unsigned ITEM_BITS = ITEMS == 32 ? FULL : (1u << ITEMS) - 1u;

// A walk over offsets from index `start` on: visit(j, o[j]) for j = start + lane, start + lane + 32, ... (a j past
// `last` reads as `past`), 32 at the first step and then 128 a step (4 loads in flight per lane: dense offsets, such
// as 1-element segments, take a quarter of the round trips), while every lane's last value satisfies more(value).
template <class Visit, class More>
__device__ __forceinline__ void walk_offsets(const Offset* offsets, long long start, long long last, long long past,
                                             int lane, Visit visit, More more) {
    long long j = start + lane;
    const long long q = j <= last ? (long long)offsets[j] : past;
    visit(j, q);
    if (!__all_sync(FULL, more(q))) return;
    for (j += 32;; j += 128) {
        long long q4[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) q4[k] = j + 32 * k <= last ? (long long)offsets[j + 32 * k] : past;
#pragma unroll
        for (int k = 0; k < 4; ++k) visit(j + 32 * k, q4[k]);
        if (!__all_sync(FULL, more(q4[3]))) return;
    }
}

// The head bits of a warp's part [lo, hi) of a tile (lo >= hi: a part past the end, no heads), lane by lane into
// `bits` through the warp's ITEMS words of shared memory; returns the first s with o[s] >= lo, where the heads'
// walk started and where the reduction's walk starts.  Warp-uniform lo and hi; all lanes call it.
// ENDS (the reduction): `ends` says, the same in every lane, whether a segment may end in the part: some o[s],
// 1 <= s <= S, in (lo, hi].  The walk visits every o[s] < hi from the first >= lo and the first >= hi (or, where
// every o[s] with s < S is < hi, an index past S - 1, which reads as hi and stands for o[S] = n), so no such o[s]
// is missed; empty segments may make it true where no element ends (a reduction that is not needed, never one
// that is skipped).
template <bool ENDS>
__device__ __forceinline__ long long segment_heads(const Offset* offsets, long long num_segments, long long n,
                                                   long long lo, long long hi, unsigned* words, int lane,
                                                   unsigned& bits, bool& ends) {
    bits = 0u;
    ends = false;
    if (lo >= hi) return num_segments;
    const long long guess = (long long)((double)lo * (double)num_segments / (double)n);
    const long long first = warp_lower_bound(offsets, num_segments + 1, lo, guess, lane);
    __syncwarp();  // every lane has read the words of the warp's previous part
    if (lane < ITEMS) words[lane] = 0u;
    __syncwarp();
    bool end = false;
    walk_offsets(
        offsets, first, num_segments - 1, hi, lane,
        [&](long long j, long long q) {
            if (q >= lo && q < hi) atomicOr(&words[(q - lo) >> 5], 1u << ((q - lo) & 31));
            if (ENDS && q > lo && (q < hi || (q == hi && (j < num_segments || hi == n)))) end = true;
        },
        [&](long long q) { return q < hi; });
    __syncwarp();
    bits = (words[(lane * ITEMS) >> 5] >> ((lane * ITEMS) & 31)) & ITEM_BITS;
    if constexpr (ENDS) ends = __any_sync(FULL, end);
    return first;
}

// Is this warp's part of `tile` whole, and the arrays 16-byte aligned (the vector path)?
__device__ __forceinline__ bool warp_part_full(long long n, int tile, int warp) {
    return VECTOR_LOADS && n - ((long long)tile * TILE + (long long)warp * WARP_ITEMS) >= WARP_ITEMS;
}

// Starts this thread's cp.async copies of its warp's part of `tile` into `buffer` (the vector path only: a partial
// or unaligned part is loaded by scalar loads when its turn comes).
// x's elements keep their type in shared memory (the copies are raw bytes): Layout<IN_TYPE>::warp_vecs vectors
// per warp part (VECS_PER_THREAD per lane when x's type is the widest; fewer, and some lanes idle, when narrower).
__device__ __forceinline__ void prefetch(int4* buffer, const IN_TYPE* in, long long n, int tile, long long num_tiles,
                                         int warp, int lane) {
    if (tile < num_tiles && warp_part_full(n, tile, warp)) {
        constexpr int WARP_IN_VECS = Layout<IN_TYPE>::warp_vecs;
        const int4* src = reinterpret_cast<const int4*>(in + (long long)tile * TILE + (long long)warp * WARP_ITEMS);
        int4* dst = buffer + warp * WARP_SMEM_VECS;
#pragma unroll
        for (int k = 0; k < (WARP_IN_VECS + 31) / 32; ++k) {
            const int v = lane + 32 * k;
            if (WARP_IN_VECS % 32 == 0 || v < WARP_IN_VECS) cp_async16<L2_PREFETCH_BYTES>(&dst[pad_vec(v)], src + v);
        }
    }
}

// The counter's word after taking the next tile index for this block (thread 0 only; the caller shares it through
// shared memory): the index in its low 32 bits, a graph launch's epoch in its high 32 (see the header).
__device__ __forceinline__ unsigned long long take_tile(unsigned long long* tile_counter) {
    return atomicAdd(tile_counter, 1ull);
}

// ---- the loop over tiles ------------------------------------------------------------------------------------

// What scan_tiles reports as it goes: nothing here.  pyscan_tools/lab/scan_lab.py instantiates scan_tiles with a probe
// of its own (per-phase clock64() cycles of thread 0, look-back windows and polls; a build without the look-back
// to time the rest): the shipped kernel compiles these empty calls away.
struct NoProbe {
    static constexpr bool look_back = true;  // false: no status, no look-back: wrong results, for timing only
    __device__ void phase(int) {}            // phase k of an iteration is over (k = 0 .. 4)
    __device__ void window(int) {}           // a window of 32 predecessors was read, after this many extra polls
    __device__ void iteration() {}           // a tile is done
};

// Grid: persistent (aligned arrays): any number of blocks (the host launches a few per SM), each looping over
// tiles taken from the counter; every index it takes, it processes in increasing order.  Unaligned arrays: one
// block per tile.
// VALUES (segments only): write out[s], one value per segment, instead of every element's.
template <class Probe, bool VALUES = false>
__device__ __forceinline__ void scan_tiles(OUT_TYPE* out, const IN_TYPE* in, long long n, int exclusive,
                                           unsigned long long* tile_counter, unsigned long long* status,
                                           long long num_tiles, unsigned int epoch, Probe& probe,
                                           long long row_length = 0, const Offset* offsets = nullptr,
                                           long long num_segments = 0) {
    // STAGES * STAGE_VECS 16-byte vectors, sized by the host (shared_size), which also raises the function's limit
    // (MAX_DYNAMIC_SHARED_SIZE_BYTES) past 48 KB.
#ifdef DYNAMIC_SHARED_ON_CPU
    DYNAMIC_SHARED_ON_CPU(dynamic_smem, STAGES * STAGE_VECS * 16);  // the tests' CPU emulator: a static buffer
#else
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
#endif
    int4(*smem)[STAGE_VECS] = reinterpret_cast<int4(*)[STAGE_VECS]>(dynamic_smem);
    __shared__ T warp_totals[WARPS];
    __shared__ T next_warp_totals[WARPS];
    __shared__ bool warp_flags[WARPS];  // (ROWS) does the warp's part hold a row start
    __shared__ bool next_warp_flags[WARPS];
    __shared__ T shared_prefix;
    __shared__ int shared_tile[STAGES];
    __shared__ unsigned int shared_epoch;  // the high 32 bits of the counter's word (a graph launch's epoch)
    __shared__ unsigned head_words[SEGMENTS ? WARPS : 1][SEGMENTS ? ITEMS : 1];  // (SEGMENTS) a warp's head bits

    const int t = threadIdx.x;
    const int lane = t & 31;
    const int warp = t >> 5;
    const bool epoch_on_device = num_tiles > 1 && epoch == EPOCH_ON_DEVICE;
    // Every block takes one tile index and no more (no persistent block has a second tile to take ahead).
    const bool one_take = gridDim.x >= num_tiles;
    // A graph launch of the last epoch, whose wrap waits until every block is done with the flags.
    const auto last_epoch = [&](unsigned int e) { return epoch_on_device && e + 1 == EPOCHS; };
    // The counter's word back to 0 with `next` as the epoch.
    const auto put_back = [&](unsigned int next) { atomicExch(tile_counter, (unsigned long long)next << 32); };

    // 1. The first tile index and the epoch in the counter's word (and with PERSISTENT this thread's copies of its
    // warp's part of the tile).  One take each: the block that takes the last index puts the counter back (with the
    // next epoch, for a graph's launch), unless this launch's epoch is the last one, whose wrap must wait until
    // every block is done with the flags (the last block to finish does it then).
    if (t == 0) {
        unsigned long long word = (unsigned long long)blockIdx.x;  // one tile in all: no counter
        if (num_tiles > 1) {
            word = take_tile(tile_counter);
            const unsigned int word_epoch = (unsigned int)(word >> 32);
            if (one_take && !last_epoch(word_epoch) && (unsigned int)word == gridDim.x - 1)
                put_back(epoch_on_device ? word_epoch + 1 : word_epoch);
        }
        shared_tile[0] = (int)(unsigned int)word;
        shared_epoch = (unsigned int)(word >> 32);
    }
    __syncthreads();
    const unsigned int high = shared_epoch;
    if (epoch_on_device) epoch = high;
    if constexpr (PERSISTENT) {
        prefetch(smem[0], in, n, shared_tile[0], num_tiles, warp, lane);
        cp_async_commit();
    }
    int tile = shared_tile[0];
    int stage = 0;
    bool a_published = false;  // this tile's A was published in the previous iteration
    // (SEGMENTS) this warp's head bits, first offset index and whether a segment may end in its part
    // (segment_heads) of the tile it works on and of the next one
    unsigned head_bits = 0u, next_head_bits = 0u;
    long long first_offset = 0, next_first_offset = 0;
    bool part_ends = true, next_part_ends = true;
    const auto heads_of = [&](int of_tile, unsigned& bits, bool& ends) {
        const long long lo = (long long)of_tile * TILE + (long long)warp * WARP_ITEMS;
        const long long hi = lo + WARP_ITEMS < n ? lo + WARP_ITEMS : n;
        return segment_heads<VALUES>(offsets, num_segments, n, lo, of_tile < num_tiles ? hi : lo, head_words[warp],
                                     lane, bits, ends);
    };
    if constexpr (SEGMENTS && PERSISTENT) next_first_offset = heads_of(tile, next_head_bits, next_part_ends);
    // (VALUES) this lane's inclusive pair of the next tile, from its early aggregate: the tile's own, one iteration
    // later (the same items, heads and arithmetic)
    Pair next_inclusive{op_identity(), false};

    while (tile < num_tiles) {
        int4* wvec = smem[stage] + warp * WARP_SMEM_VECS;  // this warp's region of this stage
        T* wsmem = reinterpret_cast<T*>(wvec);
        const long long base = (long long)tile * TILE + (long long)warp * WARP_ITEMS;  // this warp's part
        const long long remaining = n - base;  // may be <= 0 for warps past the end of a partial tile
        const bool full = warp_part_full(n, tile, warp);

        int next = (int)num_tiles;
        if constexpr (PERSISTENT) {
            // Take one more index now and start its copies into the other stage (the barrier tells every thread
            // that the previous iteration, which used it, is over): its loads stay in flight while this tile is
            // scanned, looked back and stored.
            const int ahead = stage ^ 1;
            if (t == 0)
                shared_tile[ahead] = one_take ? (int)num_tiles : (int)(unsigned int)take_tile(tile_counter);
            __syncthreads();
            probe.phase(0);
            prefetch(smem[ahead], in, n, shared_tile[ahead], num_tiles, warp, lane);
            cp_async_commit();
            if constexpr (SEGMENTS) {  // the next tile's heads while its copies are in flight
                head_bits = next_head_bits, first_offset = next_first_offset, part_ends = next_part_ends;
                next_first_offset = heads_of(shared_tile[ahead], next_head_bits, next_part_ends);
            }
            cp_async_wait<0>();  // this thread's copies of this tile and of the next one have landed
            next = shared_tile[ahead];
        } else if constexpr (SEGMENTS) {
            first_offset = heads_of(tile, head_bits, part_ends);
        }
        // 2. This warp's part: striped coalesced copies into its region (above), then each lane reads its ITEMS
        //    (blocked).  Partial tile / unaligned arrays: scalar loads, the identity past the end.
        // (Converting builds: x's elements as they are, in their layout; the identity is put in as they are read.)
        const int valid =
            full ? WARP_ITEMS : (int)(remaining < 0 ? 0 : remaining < WARP_ITEMS ? remaining : WARP_ITEMS);
        if (!full) {
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int e = lane + 32 * k;
                if constexpr (CONVERTS) {
                    if (e < remaining) reinterpret_cast<IN_TYPE*>(wvec)[pad_elem_of<IN_TYPE>(e)] = in[base + e];
                } else {
                    wsmem[pad_elem(e)] = e < remaining ? op_load(in[base + e]) : op_identity();
                }
            }
        }
        __syncwarp();  // only this warp wrote its region
        // (VALUES) A reduction writes only the values where segments end.  A tile whose aggregate was published
        // early has its lanes' pairs already (next_inclusive); a warp part of it in which no segment ends (all but
        // one in eight for segments of 8192 elements) then only lends its total to the tile's: no items read, no
        // rescan, no walk: long segments read x within 5-15 % of the 1-D reduction's time (docs/reduction.md,
        // "Segments").
        const bool kept = VALUES && a_published;
        const bool idle = kept && !part_ends && base != 0;  // (the part at 0 writes the empty segments there)
        T items[ITEMS];
        if (!kept) {
            if constexpr (CONVERTS) read_items_converted(wvec, lane, valid, items);
            else read_items(wvec, lane, items);
        }

        // 3. Thread totals, warp-shuffle inclusive scan of them, warp totals through shared memory.  (ROWS: of the
        //    (value, flag) pairs; prefix_flag: a row starts in this warp before this lane's items.)
        Heads heads{ITEMS, ITEMS, head_bits};
        T thread_prefix;
        bool prefix_flag = false;
        if constexpr (PAIRS) {
            if constexpr (ROWS) heads = heads_at(base + (long long)lane * ITEMS, row_length);
            const Pair inclusive = kept ? next_inclusive : warp_inclusive_scan(thread_pair_of(items, heads), lane);
            thread_prefix = __shfl_up_sync(FULL, inclusive.value, 1);
            prefix_flag = __shfl_up_sync(FULL, (int)inclusive.flag, 1) != 0;
            if (lane == 0) thread_prefix = op_identity(), prefix_flag = false;
            if (lane == 31) warp_totals[warp] = inclusive.value, warp_flags[warp] = inclusive.flag;
        } else {
            const T inclusive = warp_inclusive_scan(thread_total_of(items), lane);
            thread_prefix = __shfl_up_sync(FULL, inclusive, 1);  // exclusive within the warp
            if (lane == 0) thread_prefix = op_identity();
            if (lane == 31) warp_totals[warp] = inclusive;
        }
        // The next tile, when it is whole and already here: its warp totals by the same arithmetic (so the A
        // published before this tile's look-back is bit for bit the aggregate it will compute).
        const bool early = PERSISTENT && num_tiles > 1 && next > 0 && next < num_tiles &&
                           (long long)(next + 1) * TILE <= n;
        if (early) {
            const int4* nvec = smem[stage ^ 1] + warp * WARP_SMEM_VECS;
            T next_items[ITEMS];
            if constexpr (CONVERTS) read_items_converted(nvec, lane, WARP_ITEMS, next_items);
            else read_items(nvec, lane, next_items);
            if constexpr (PAIRS) {
                const long long next_base = (long long)next * TILE + (long long)warp * WARP_ITEMS;
                const Heads next_heads = SEGMENTS ? Heads{ITEMS, ITEMS, next_head_bits}
                                                  : heads_at(next_base + (long long)lane * ITEMS, row_length);
                const Pair total = warp_inclusive_scan(thread_pair_of(next_items, next_heads), lane);
                if (lane == 31) next_warp_totals[warp] = total.value, next_warp_flags[warp] = total.flag;
                if constexpr (VALUES) next_inclusive = total;
            } else {
                const T total = warp_inclusive_scan(thread_total_of(next_items), lane);
                if (lane == 31) next_warp_totals[warp] = total;
            }
        }
        __syncthreads();
        probe.phase(1);
        T aggregate = op_identity();
        bool aggregate_flag = false;  // (PAIRS) the tile holds a head: its P is its aggregate
        if constexpr (PAIRS) {
            Pair warp_prefix{op_identity(), false}, all{op_identity(), false};
#pragma unroll
            for (int w = 0; w < WARPS; ++w) {
                if (w == warp) warp_prefix = all;
                all = pair_combine(all, Pair{warp_totals[w], warp_flags[w]});
            }
            const Pair p = pair_combine(warp_prefix, Pair{thread_prefix, prefix_flag});
            thread_prefix = p.value, prefix_flag = p.flag;
            aggregate = all.value, aggregate_flag = all.flag;
        } else {
            T warp_prefix = op_identity();
#pragma unroll
            for (int w = 0; w < WARPS; ++w) {
                if (w == warp) warp_prefix = aggregate;
                aggregate = op_combine(aggregate, warp_totals[w]);
            }
            thread_prefix = op_combine(warp_prefix, thread_prefix);
        }

        // 4. Decoupled look-back (warp 0).
        if (Probe::look_back && num_tiles > 1 && warp == 0) {
            TileStatus<T> st(status, epoch);
            T exclusive_prefix = op_identity();
            if (early && lane == 0) {
                Pair next_all{op_identity(), false};
#pragma unroll
                for (int w = 0; w < WARPS; ++w)
                    next_all = PAIRS ? pair_combine(next_all, Pair{next_warp_totals[w], next_warp_flags[w]})
                                    : Pair{op_combine(next_all.value, next_warp_totals[w]), false};
                st.publish(next, next_all.flag ? STATUS_P : STATUS_A, next_all.value);
            }
            // (PAIRS) a tile whose first element is a head needs no prefix: warp 0's lane 0 holds that element
            const bool starts_row = PAIRS && (SEGMENTS ? __shfl_sync(FULL, heads.bits & 1u, 0) != 0u
                                                       : __shfl_sync(FULL, heads.first, 0) == 0);
            if (tile == 0) {
                if (lane == 0) st.publish(0, STATUS_P, aggregate);
            } else if (starts_row) {
                if (lane == 0 && !a_published) st.publish(tile, STATUS_P, aggregate);
            } else {
                if (lane == 0 && !a_published) st.publish(tile, aggregate_flag ? STATUS_P : STATUS_A, aggregate);
                // Lane i looks at tile (window - i): lane 0 the nearest predecessor.
                for (int window = tile - 1;; window -= 32) {
                    unsigned flag;
                    T value;
                    probe.window(st.read_window(window - lane, op_identity(), flag, value));
                    const unsigned p_lanes = __ballot_sync(FULL, flag == STATUS_P);
                    const int nearest_p = p_lanes ? __ffs(p_lanes) - 1 : 32;
                    // The lanes before the nearest P hold aggregates (A) of tiles between it and us; the P lane
                    // holds the inclusive prefix of everything up to its tile; the lanes past it are not needed.
                    const T window_total = window_reduce(lane <= nearest_p ? value : op_identity());
                    exclusive_prefix = op_combine(window_total, exclusive_prefix);
                    if (p_lanes) break;
                }
                if (lane == 0 && !aggregate_flag) st.publish(tile, STATUS_P, op_combine(exclusive_prefix, aggregate));
            }
            if (lane == 0) shared_prefix = exclusive_prefix;
        } else if ((!Probe::look_back || num_tiles <= 1) && t == 0) {
            shared_prefix = op_identity();
        }
        probe.phase(2);
        __syncthreads();
        probe.phase(3);

        // 5. Rescan the items, read again from shared memory (still there), from the thread's prefix; store the
        //    warp's part through its region.
        //    (ROWS: a lane after a row start in its tile has its prefix in thread_prefix alone, and every head
        //    restarts the running value from the identity.)
        if (!idle) {  // (VALUES) see step 2
            T running = prefix_flag ? thread_prefix : op_combine(shared_prefix, thread_prefix);
            if constexpr (CONVERTS) read_items_converted(wvec, lane, valid, items);
            else read_items(wvec, lane, items);
            int head = heads.first;
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                if (PAIRS && is_head(heads, i, head)) running = op_identity();
                const T x = items[i];
                const T nxt = op_combine(running, x);
                items[i] = exclusive ? running : nxt;
                running = nxt;
            }
            if constexpr (CONVERTS) {
                __syncwarp();  // every lane has read x's layout before any lane writes the result's
                write_results_converted(wvec, lane, items);
                __syncwarp();
                using L = Layout<OUT_TYPE>;
                if (full && !VALUES) {
                    int4* dst = reinterpret_cast<int4*>(out + base);
#pragma unroll
                    for (int k = 0; k < (L::warp_vecs + 31) / 32; ++k) {
                        const int v = lane + 32 * k;
                        if (L::warp_vecs % 32 == 0 || v < L::warp_vecs) __stcs(dst + v, wvec[pad_vec(v)]);
                    }
                } else if (!VALUES) {
                    const OUT_TYPE* results = reinterpret_cast<const OUT_TYPE*>(wvec);
#pragma unroll
                    for (int k = 0; k < ITEMS; ++k) {
                        const int e = lane + 32 * k;
                        if (e < remaining) out[base + e] = results[pad_elem_of<OUT_TYPE>(e)];
                    }
                }
            } else {
                // Every lane read its blocked vectors before the __syncthreads above: the region can be overwritten.
#pragma unroll
                for (int j = 0; j < VECS_PER_THREAD; ++j) {
                    Vec v;
#pragma unroll
                    for (int i = 0; i < VEC; ++i) v.e[i] = items[j * VEC + i];
                    wvec[pad_vec(lane * VECS_PER_THREAD + j)] = v.raw;
                }
                __syncwarp();
                if (full && !VALUES) {
                    int4* dst = reinterpret_cast<int4*>(out + base);
#pragma unroll
                    for (int k = 0; k < VECS_PER_THREAD; ++k) {
                        const int v = lane + 32 * k;
                        __stcs(dst + v, wvec[pad_vec(v)]);  // streaming: written once
                    }
                } else if (!VALUES) {
#pragma unroll
                    for (int k = 0; k < ITEMS; ++k) {
                        const int e = lane + 32 * k;
                        if (e < remaining) out[base + e] = op_store(wsmem[pad_elem(e)]);
                    }
                }
            }
            if constexpr (VALUES) {
                // One value per segment that ends in this warp's part [lo, hi): s + 1 = j with lo < o[j] <= hi (the
                // part at 0 also o[j] == 0, the empty segments there), walked from the first j with o[j] >= lo on.
                const long long lo = base, hi = remaining < WARP_ITEMS ? n : base + WARP_ITEMS;
                if (lo < hi) {
                    walk_offsets(
                        offsets, first_offset > 0 ? first_offset : 1, num_segments, hi + 1, lane,
                        [&](long long j, long long end) {
                            if (end > hi || (end <= lo && lo != 0)) return;
                            const long long last = end - 1;  // the segment's last element, if it has one
                            OUT_TYPE value = op_store(op_identity());
                            if ((long long)offsets[j - 1] < end && last >= lo && last < hi) {
                                const int e = (int)(last - lo);
                                if constexpr (CONVERTS)
                                    value = reinterpret_cast<const OUT_TYPE*>(wvec)[pad_elem_of<OUT_TYPE>(e)];
                                else
                                    value = op_store(wsmem[pad_elem(e)]);
                            }
                            out[j - 1] = value;
                        },
                        [&](long long end) { return end <= hi; });
                }
            }
        }
        probe.phase(4);
        probe.iteration();
        tile = next;
        stage ^= STAGES - 1;
        a_published = early;
    }
    if constexpr (PERSISTENT) cp_async_wait<0>();  // (nothing is pending: the last indices taken were past the end)
    // Else the counter back to 0 for the next launch (and a graph launch's next epoch), by the last block to finish:
    // every block took its last index, whose value ended its loop, before it counts itself done (tile_counter[1]).
    // No fence is needed for that, nor for the next launch, which the launch boundary orders after this one.
    if (num_tiles > 1 && t == 0 && (!one_take || last_epoch(high))) {
        unsigned int* const done = reinterpret_cast<unsigned int*>(&tile_counter[1]);
        if (atomicAdd(done, 1u) == gridDim.x - 1) {
            unsigned int next = epoch_on_device ? epoch + 1 : high;
            if (next == EPOCHS) {
                // After 2^30 - 1 epochs the flags are zeroed and the count starts over, as the host does with its
                // epochs (a stale flag of a wrapped epoch would read as this launch's).
                for (long long w = 0; w < num_tiles * TileStatus<T>::WORDS; ++w) status[w] = 0ull;
                __threadfence();
                next = 1;
            }
            atomicExch(done, 0u);
            put_back(next);
        }
    }
}

#if ROWS
// Every row of row_length > 0 elements (n a multiple of it) scanned on its own.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    decoupled_lookback_rows_scan(OUT_TYPE* out, const IN_TYPE* in, long long n, long long row_length, int exclusive,
                                 unsigned long long* tile_counter, unsigned long long* status, long long num_tiles,
                                 unsigned int epoch) {
    NoProbe probe;
    scan_tiles(out, in, n, exclusive, tile_counter, status, num_tiles, epoch, probe, row_length);
}
#elif SEGMENTS
// Every segment x[o[s] .. o[s+1]) scanned on its own (exclusive: the identity at each segment's first element).
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    decoupled_lookback_segmented_scan(OUT_TYPE* out, const IN_TYPE* in, long long n, const Offset* offsets,
                                      long long num_segments, int exclusive, unsigned long long* tile_counter,
                                      unsigned long long* status, long long num_tiles, unsigned int epoch) {
    NoProbe probe;
    scan_tiles<NoProbe, false>(out, in, n, exclusive, tile_counter, status, num_tiles, epoch, probe, 0, offsets,
                               num_segments);
}
// out[s] = the op over x[o[s] .. o[s+1]), the identity for an empty segment.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    decoupled_lookback_segmented_reduce(OUT_TYPE* out, const IN_TYPE* in, long long n, const Offset* offsets,
                                        long long num_segments, unsigned long long* tile_counter,
                                        unsigned long long* status, long long num_tiles, unsigned int epoch) {
    NoProbe probe;
    scan_tiles<NoProbe, true>(out, in, n, 0, tile_counter, status, num_tiles, epoch, probe, 0, offsets,
                              num_segments);
}
#else
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    decoupled_lookback_scan(OUT_TYPE* out, const IN_TYPE* in, long long n, int exclusive,
                            unsigned long long* tile_counter, unsigned long long* status, long long num_tiles,
                            unsigned int epoch) {
    NoProbe probe;
    scan_tiles(out, in, n, exclusive, tile_counter, status, num_tiles, epoch, probe);
}
#endif
