// decoupled_lookback.cu -- single-pass prefix scan with decoupled look-back (Merrill & Garland, "Single-pass
// Parallel Prefix Scan with Decoupled Look-back", NVIDIA technical report NVR-2016-002).  Beyond the books:
// PMPP §11.7's domino (single_pass.cu) makes every block wait for its predecessor's *inclusive* prefix, so the
// hand-offs form a serial chain of L2 round trips.  Here every tile publishes its own *aggregate* as soon as it
// has it (status A), and its inclusive prefix once it knows it (status P); a tile computes its exclusive prefix
// by looking back over its predecessors, combining A aggregates until it meets a P.  No tile waits for a chain.
//
// Tuning notes (H100, 2^28 int32 add unless said; copy of 2^28 int32 = 0.72 ms; "x" = copy time / scan time;
// two runs of scripts/time_scan.py --tune, 2026-11-22; run-to-run noise is a few %).
// * Before (one block per tile, 256 x 8 vectors, 64 registers, 4 blocks/SM): 0.92-0.99 ms, 0.73-0.78 x.
//   Diagnosis: a block's loads are in flight only from its start (after the tile-counter atomic) until they
//   land; during its scan, look-back and stores its part of the SM's reads idles.
// * PIPELINE = 1 (persistent blocks, cp.async double buffer: tile i+1's loads in flight during tile i's scan,
//   look-back and stores).  Predicted 0.85-0.95 x.  Outcome: 1.45-1.59 ms, 0.45-0.50 x; PIPELINE 2, 3: 4.3-5.3 ms.
//   Why (the prediction missed it): a block holds the index of the tile it prefetches, and published that
//   tile's A only when its turn came, after the look-back of its current tile: look-backs waited on look-backs,
//   a chain through the blocks, longer with every prefetched tile.
// * EARLY_A = 1: the block waits for the prefetched tile's loads before its current look-back and publishes
//   that tile's A first (bit for bit the aggregate it computes later).  Predicted: back to >= 0.85 x.
//   Outcome: PIPELINE 1, 256 x 4 vectors, 5 blocks/SM: 0.825-0.850 ms, 0.85-0.87 x (best: the default for
//   32-bit types); 128 x 4 or 256 x 2 with PIPELINE 2: 0.93-0.97 ms; 256 x 2 with PIPELINE 3: 1.10 ms.
// * RELOAD = 1 (items re-read from shared memory for the rescan): 40-48 registers instead of 64, 5-8 blocks/SM.
//   Predicted +0-3 %.  Outcome: one tile per block at 256 x 4 x 6/SM or x 8/SM: 0.98-1.01 ms, no gain; it is
//   what lets the pipelined kernel run 5 blocks/SM (48 registers).
// * L2_HINT = 1 (evict-first policy on the streamed loads).  Predicted +0-2 %.  Outcome: -12 % to +2 %: off.
// * 64-bit types (int64 at 2^27 = 1 GiB): one tile per block, 256 x 8 vectors, 4/SM stays best: 1.10 ms,
//   0.66 x; the pipelined kernels 0.43-0.57 x there (4-byte-type candidates; not tuned further).
// * Round 3 (one run, 2026-11-22: int32 and float32 at 2^28, 3 interleaved rounds, medians; the default timed
//   first and last of each round: 0.824-0.825 ms int32, 0.824-0.826 ms float32, spread of its 6 int32 timings
//   3.9 %; copy 0.7187 ms, so 0.90 x = 0.7986 ms).  DYNAMIC_SMEM = 1 (tile buffers past 48 KB):
//   - PIPELINE 2 at 256 x 4, 4/SM (the previous round's hypothesis: it lost only to the 48 KB cap; predicted
//     >= 0.90 x): 0.881-0.884 ms, 0.81 x, with or without RELOAD.  PIPELINE 3 at 256 x 4, 3/SM: 0.98 ms.
//     Likely why (not measured): 5 blocks/SM with one prefetched tile already keep enough bytes in flight, and
//     fewer blocks per SM mean fewer look-back warps to hide each other's waits.
//   - 8192-element tiles, PIPELINE 1: 256 x 8, 3/SM (80 registers): int32 0.8225 ms (0.874 x), float32 0.8056 ms
//     (0.892 x; best single timing 0.7997 ms): the best, but only 1.2 % (int32 + float32) ahead of the default,
//     inside the noise: not switched.  512 x 4, 2/SM: 0.834 / 0.828 ms; with PIPELINE 2: 0.838 / 0.835 ms;
//     256 x 8, PIPELINE 2, 2/SM: 0.842 / 0.832 ms.
//   - DIRECT_STORE = 1 (the rescanned items stored from registers as blocked 16-byte vectors, no shared-memory
//     transpose on the way out; the cheap half of "scan on the striped layout"; predicted +0-3 %): -20 % to -24 %
//     (1.02-1.07 ms); probably because each store instruction writes 16 bytes every 64 (half sectors), so the
//     L2 gets twice as many write requests (not profiled).
//   All candidates exact (2^24 + 5 and the last 4096 of 2^28); 256 x 8 x 3/SM DYNAMIC_SMEM also passed --check
//   (all dtypes/ops/alignments/lengths), the decoupled GPU tests (71 passed) and racecheck (0 hazards).
// * Round 3 did not reach 0.90 x (<= 0.80 ms).
// * Round 4 (2026-11-22, scripts/scan_lab.py: variants interleaved in 3-5 rounds with copies and CUB in the same
//   process; int32 at 2^28; memcpy_dtod 0.718-0.725 ms; spreads 0.3-1 % except after a machine restart, ~3 %).
//   - References: a grid-stride int4 copy kernel 0.93 x memcpy_dtod (plain or streaming, 1 or 4 vectors in
//     flight per thread); CUB's scan (torch.cumsum int32) 0.70 x; cupy.cumsum 0.25 x (also with the CUB
//     accelerator); a memset of the status words alone 7-8 us (~1 % of the scan).
//   - Diagnostic LOOKBACK = 0 (no look-back, wrong results): 0.92-0.94 x at 4096 and 8192 elements per tile: the
//     loads, block scan and stores alone; the look-back costs the rest.
//   - DIAG_STATS (thread 0's clock64() per phase): per iteration ~40 % in the look-back for only 1.3-1.75 windows
//     and 0.1-0.3 extra polls: one window read takes ~5000 cycles, as long as the wait for a just-issued tile's
//     loads; likely (not proven) because the status loads queue behind the SM's own outstanding tile copies.
//   - EPOCH = 1 (flags tagged with the call's epoch, status kept between calls, no memset; the last block resets
//     the counter): predicted +1 % (the memset); outcome +2-3 % (0.855 -> 0.881 x at 4096, 0.881 -> 0.897 x at 8192
//     in one run), also one pool allocation less per call.  Kept.
//   - 8192-element tiles (256 x 8, 3/SM, dynamic shared memory), which round 3 called noise: with EPOCH 0.897-0.906 x,
//     ahead of 4096 (0.864-0.881 x) in every run: half the look-backs.  Kept.
//   - L2_PREFETCH 128 (the cp.async loads ask the L2 for 128-byte lines): +0.3 to +1 % at 8192 (0.904, 0.909, 0.914,
//     0.904 x, and 0.881 x in the run after a restart where the same kernel without it gave 0.880 x); 64 and 256
//     no better.  Kept.
//   - Lost: 2 or 4 predecessors per look-back lane (fewer windows, 1.09 per look-back, but each slower: -2 to
//     -5 %); the look-back moved beside the block scan or the next tile's loads (the next tile's A then waits for
//     a look-back: 40-90 extra polls per look-back, 0.37-0.80 x); the next index taken one iteration early (the
//     atomic's 1900 cycles moved into the other waits: +-0); plain stores, BACKOFF 200, 512 x 4 at 3/SM: +-1 %.
//   Result: the defaults 256 x 8, PIPELINE 1, 3/SM, EPOCH, L2_PREFETCH 128: 0.90-0.92 x copy, 1.3 x CUB
//   (`python -m pyscan bench all` after round 4: int32 0.92 x, float32 0.92 x, int32 max 0.90 x, float32 min 0.88 x).
//   - 64-bit types (int64 / float64 at 2^28 = 2 GiB; copy 1.43 ms; CUB 0.75-0.76 x): round 3's one tile per
//     block, 0.64-0.66 x; the 32-bit types' persistent kernel with the fenced status (flags apart from values,
//     __threadfence on both sides) 0.70-0.72 x; with LOOKBACK = 0, 0.97 x: the look-back cost a quarter, the fences.
//     Split status words (a value as two (half, flag) words, no fences; see "Tile status" below): 0.941 x for
//     both types (0.85 x with one tile per block; bench all: int64 0.91 x, float64 0.93 x, 2.0 x cupy.cumsum).  The 64-bit default since.  The
//     32-bit status word read and written by ld/st.relaxed.gpu instead of volatile: 0.919 against 0.918 x, kept
//     volatile.
//
// One tile = BLOCK_THREADS threads x ITEMS items, ITEMS = VECS_PER_THREAD 16-byte vectors (as tuned on an H100,
// see pyscan/scans/decoupled_lookback.py CONFIG: 32-bit types 256 x 32 = 8192 elements, 64-bit types 256 x 16 =
// 4096 elements, 32 KB either way, PIPELINE 1, 3 blocks/SM).  PIPELINE > 0: persistent blocks, each taking tile after tile from the counter, with the
// next PIPELINE tiles' cp.async loads in flight while it works on one (and EARLY_A: their A published early).
// DYNAMIC_SMEM: the (PIPELINE + 1) tile buffers in dynamic shared memory, sized by the host (Config.shared_bytes).
// Per tile:
//   1. tile index from an atomic counter (not blockIdx.x: a tile only waits on tiles that took their index
//      earlier, so they are running or finished: no deadlock, whatever order the hardware starts blocks in);
//   2. each warp loads its own contiguous 32 x ITEMS elements with coalesced 16-byte vector loads (int4) into
//      its own region of shared memory, then each lane reads ITEMS consecutive elements back ("blocked"
//      arrangement).  Warp-private regions need only __syncwarp, not a block barrier, so a warp whose loads
//      arrive early goes on (a padding vector every 8 vectors avoids bank conflicts).  Partial last tile and
//      unaligned arrays: scalar loads with the same layout, the identity past the end;
//   3. each thread reduces its items; a warp-shuffle scan of the thread totals; the warp totals through
//      shared memory: the tile aggregate and each thread's exclusive prefix within the tile;
//   4. warp 0 publishes A(aggregate) (tile 0: P(aggregate)), looks back 32 predecessors at a time (one lane
//      each: ballot to wait until none is X, ballot to find the nearest P, shuffle-reduce of the values up to
//      it), then publishes P(exclusive prefix (+) aggregate);
//   5. each thread rescans its items from its prefix, writes them to its warp's region, and the warp stores
//      its part of the tile with coalesced 16-byte vector stores.
//
// Tile status (EPOCH 1: a buffer the host zeroes once and keeps; each launch's flags carry its epoch, and the last
// block puts the tile counter back to 0; EPOCH 0: scratch zeroed by the host before each launch with the counter):
// * 32-bit types: flag and value packed into ONE 64-bit word, (value bits << 32) | flag, written and read
//   with single 64-bit volatile accesses.  An aligned 64-bit access is single-copy atomic, so a reader sees
//   either the old or the new (flag, value) pair: no fence is needed between value and flag.
// * 64-bit types: a (flag, value) pair does not fit one 64-bit word, and 128-bit plain accesses are not promised to
//   be single-copy atomic, so each value is split: two words (low half << 32 | flag, high half << 32 | flag),
//   written together by one 16-byte store and read by one 16-byte load (each 8-byte element single-copy atomic).
//   A tile has an A pair and a P pair, each written at most once per launch: a reader that sees this launch's
//   flag in BOTH words of a pair has both halves of the one value written (EPOCH makes the words of earlier
//   launches read as X).  No fences: before round 4 the 64-bit status was flags[] apart from the values, with a
//   __threadfence between value and flag on both sides; the fences held int64 scans at 0.65-0.72 x copy, the split
//   words run them at 0.94 x (kernel notes, round 4).
// Layout of `status` (in 64-bit words): 32-bit types: status[t]; 64-bit types: status[4t, 4t+1] the A pair,
// status[4t+2, 4t+3] the P pair.
// BACKOFF > 0: a look-back that finds a predecessor still X sleeps that many ns before it reads again (less
// polling traffic in L2 while the predecessor's loads are in flight).
//
// num_tiles == 1: no status and no counter are touched (the host may pass null pointers): one launch scans
// a small array.
#include "../common/operators.cuh"

#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif
#ifndef VECS_PER_THREAD
#define VECS_PER_THREAD 4  // 16-byte vectors per thread (2, 4 or 8: the padding below is conflict-free for these)
#endif
#ifndef VECTOR_LOADS
#define VECTOR_LOADS 1  // the host passes 0 when `in` or `out` is not 16-byte aligned
#endif
#ifndef BACKOFF
#define BACKOFF 0
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 5  // __launch_bounds__' minimum resident blocks per SM: > 1 caps the registers per thread
#endif
#ifndef PIPELINE
#define PIPELINE 1  // > 0: persistent blocks, the next PIPELINE tiles' loads (cp.async) in flight during a tile's scan
#endif
#ifndef RELOAD
#define RELOAD 1  // 1: the rescan reads the items from shared memory again (fewer registers live over the look-back)
#endif
#ifndef EARLY_A
#define EARLY_A 1  // PIPELINE: publish the aggregate (A) of the next tile, already loaded, before this tile's look-back
#endif
#if !VECTOR_LOADS  // unaligned arrays: every tile takes the scalar path, nothing to prefetch
#undef PIPELINE
#define PIPELINE 0
#endif
#ifndef L2_HINT
#define L2_HINT 0  // 1: the cp.async loads carry an L2 evict-first policy (PIPELINE only)
#endif
#ifndef DYNAMIC_SMEM
#define DYNAMIC_SMEM 0  // 1: the tile buffers are dynamic shared memory (the host passes their size; > 48 KB allowed)
#endif
#ifndef DIRECT_STORE
#define DIRECT_STORE 0  // 1: a whole warp part is stored from registers (blocked 16-byte vectors), not through smem
#endif
#ifndef STORE_CS
#define STORE_CS 1  // 1: streaming stores (st.global.cs, evict first); 0: plain write-back stores
#endif
#ifndef L2_PREFETCH
#define L2_PREFETCH 0  // 64, 128 or 256: the cp.async loads ask the L2 to fetch that many bytes around them (PIPELINE)
#endif
#ifndef EPOCH
#define EPOCH 0  // 1: flags carry the launch's epoch (no memset before a launch); the last block resets the counter
#endif
#ifndef DIAG_STATS
#define DIAG_STATS 0  // 1: TIMING DIAGNOSTIC: thread 0 of every block adds its clock64() cycles per phase and its
                      // look-back counts to lookback_stats[] (scripts/scan_lab.py --stats reads them)
#endif
#ifndef LOOKBACK
#define LOOKBACK 1  // 0: TIMING DIAGNOSTIC ONLY, wrong past the first tile: no status, no look-back (the rest's cost)
#endif

#if BLOCK_THREADS % 32 != 0 || BLOCK_THREADS > 1024
#error "BLOCK_THREADS must be a multiple of 32, at most 1024"
#endif

constexpr int VEC = 16 / sizeof(T);              // elements per 16-byte vector: 4 (32-bit types) or 2 (64-bit)
constexpr int ITEMS = VEC * VECS_PER_THREAD;     // items per thread
constexpr int TILE = BLOCK_THREADS * ITEMS;      // elements per tile
constexpr int WARP_ITEMS = 32 * ITEMS;           // elements of one warp's part of the tile
constexpr int WARP_VECS = 32 * VECS_PER_THREAD;
constexpr int WARP_SMEM_VECS = WARP_VECS + WARP_VECS / 8;  // one padding vector after every 8
constexpr int WARPS = BLOCK_THREADS / 32;
constexpr unsigned FULL = 0xffffffffu;
constexpr int STAGES = PIPELINE + 1;  // tile buffers in shared memory

constexpr int STAGE_ELEMS = WARPS * WARP_SMEM_VECS * VEC;  // one tile buffer (padded), in elements

#if !DYNAMIC_SMEM
static_assert(STAGES * WARPS * WARP_SMEM_VECS * 16 <= 48 * 1024,
              "static shared memory is limited to 48 KB: (PIPELINE + 1) * BLOCK_THREADS * VECS_PER_THREAD <= 2048 "
              "(DYNAMIC_SMEM = 1 lifts the limit)");
#endif

static_assert(sizeof(T) == 4 || sizeof(T) == 8, "the element type must be 4 or 8 bytes");

enum : unsigned { STATUS_X = 0, STATUS_A = 1, STATUS_P = 2 };  // X (nothing yet) must be 0: the host zeroes

// EPOCH: a flag word is (epoch << 2) | status, epoch = 1, 2, ... < 2^30 the host's count of launches on this status
// buffer; a word of another epoch (an earlier launch, or the zeroes of a new buffer) reads as X.  So the buffer
// is zeroed once, when it is allocated, and not before every launch.
__device__ __forceinline__ unsigned tag_flag(unsigned status, unsigned epoch) {
    return EPOCH ? (epoch << 2) | status : status;
}
__device__ __forceinline__ unsigned read_flag(unsigned word, unsigned epoch) {
    return !EPOCH ? word : (word >> 2) == epoch ? (word & 3u) : (unsigned)STATUS_X;
}

// Padded position of vector v in a warp's region of shared memory.  A lane reading its blocked vectors
// VECS_PER_THREAD * lane + j, eight lanes at once (one 128-byte phase of a 16-byte access), hits 8 different
// 16-byte bank groups for VECS_PER_THREAD = 2, 4, 8; the striped accesses (8 consecutive v) do too.
__device__ __forceinline__ int pad_vec(int v) { return v + (v >> 3); }
__device__ __forceinline__ int pad_elem(int e) { return pad_vec(e / VEC) * VEC + e % VEC; }

union Vec {
    int4 raw;
    T e[VEC];
};

// ---- tile status --------------------------------------------------------------------------------------------

template <int BYTES>
struct Status;

template <>
struct Status<4> {  // packed (value << 32) | flag
    unsigned long long* words;
    unsigned epoch;
    __device__ Status(unsigned long long* status, unsigned epoch_) : words(status), epoch(epoch_) {}
    __device__ static unsigned long long load(const unsigned long long* p) {
        return *(const volatile unsigned long long*)p;
    }
    __device__ void publish(int tile, unsigned flag, T value) {
        unsigned bits;
        memcpy(&bits, &value, 4);
        *(volatile unsigned long long*)&words[tile] = ((unsigned long long)bits << 32) | tag_flag(flag, epoch);
    }
    // Waits until the status of `tile` is not X (tile < 0, before the first tile: a P of the identity).  All 32
    // lanes run the same loop (one __any_sync per iteration for the whole warp).  Returns the extra polls.
    __device__ int read_window(int tile, unsigned& flag, T& value) {
        unsigned long long w = tag_flag(STATUS_P, epoch);
        int polls = 0;
        if (tile >= 0) w = load(&words[tile]);
        while (__any_sync(FULL, read_flag((unsigned)w, epoch) == STATUS_X)) {
            ++polls;
            if (BACKOFF > 0) __nanosleep(BACKOFF);
            if (tile >= 0) w = load(&words[tile]);
        }
        flag = read_flag((unsigned)w, epoch);
        const unsigned bits = (unsigned)(w >> 32);
        memcpy(&value, &bits, 4);
        if (tile < 0) value = op_identity();
        return polls;
    }
};

template <>
struct Status<8> {  // per tile: the A pair and the P pair of (half << 32) | flag words
    unsigned long long* words;
    unsigned epoch;
    __device__ Status(unsigned long long* status, unsigned epoch_) : words(status), epoch(epoch_) {}
    __device__ static void store_pair(unsigned long long* p, unsigned long long w0, unsigned long long w1) {
        asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};" ::"l"(p), "l"(w0), "l"(w1) : "memory");
    }
    __device__ static void load_pair(const unsigned long long* p, unsigned long long& w0, unsigned long long& w1) {
        asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];" : "=l"(w0), "=l"(w1) : "l"(p) : "memory");
    }
    __device__ void publish(int tile, unsigned flag, T value) {
        unsigned long long bits;
        memcpy(&bits, &value, 8);
        const unsigned long long tag = tag_flag(flag, epoch);
        store_pair(&words[4 * (long long)tile + (flag == STATUS_P ? 2 : 0)], (bits << 32) | tag,
                   (bits & 0xffffffff00000000ull) | tag);
    }
    // A pair is whole when both its words carry this launch's tag: each word is written once per launch, so both
    // halves are of the one value written then.
    __device__ unsigned state(unsigned long long a0, unsigned long long a1, unsigned long long p0,
                              unsigned long long p1) const {
        if (read_flag((unsigned)p0, epoch) == STATUS_P && read_flag((unsigned)p1, epoch) == STATUS_P) return STATUS_P;
        if (read_flag((unsigned)a0, epoch) == STATUS_A && read_flag((unsigned)a1, epoch) == STATUS_A) return STATUS_A;
        return STATUS_X;
    }
    __device__ int read_window(int tile, unsigned& flag, T& value) {
        const unsigned long long p_tag = tag_flag(STATUS_P, epoch);
        unsigned long long a0 = 0, a1 = 0, p0 = p_tag, p1 = p_tag;  // tile < 0: a P of the identity
        int polls = 0;
        if (tile >= 0) {
            load_pair(&words[4 * (long long)tile], a0, a1);
            load_pair(&words[4 * (long long)tile + 2], p0, p1);
        }
        while (__any_sync(FULL, state(a0, a1, p0, p1) == STATUS_X)) {
            ++polls;
            if (BACKOFF > 0) __nanosleep(BACKOFF);
            if (tile >= 0) {
                load_pair(&words[4 * (long long)tile], a0, a1);
                load_pair(&words[4 * (long long)tile + 2], p0, p1);
            }
        }
        flag = state(a0, a1, p0, p1);
        const unsigned long long lo = flag == STATUS_P ? p0 : a0, hi = flag == STATUS_P ? p1 : a1;
        const unsigned long long bits = (hi & 0xffffffff00000000ull) | (lo >> 32);
        memcpy(&value, &bits, 8);
        if (tile < 0) value = op_identity();
        return polls;
    }
};

// ---- asynchronous copies (PIPELINE) -------------------------------------------------------------------------
// cp.async (sm_80+): a 16-byte global -> shared copy that needs no register and does not block the thread; the
// thread waits for its groups of copies with cp.async.wait_group.  .cg: cached in L2 only (read once).
// L2_HINT: with an L2 "evict first" policy, so 1 GiB of streamed input does not push the tile status out of L2.

__device__ __forceinline__ unsigned long long evict_first_policy() {
    unsigned long long policy = 0;
#if L2_HINT
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
    return policy;
}

#if L2_PREFETCH == 64
#define CP_ASYNC_PREFETCH ".L2::64B"
#elif L2_PREFETCH == 128
#define CP_ASYNC_PREFETCH ".L2::128B"
#elif L2_PREFETCH == 256
#define CP_ASYNC_PREFETCH ".L2::256B"
#elif L2_PREFETCH == 0
#define CP_ASYNC_PREFETCH ""
#else
#error "L2_PREFETCH must be 0, 64, 128 or 256"
#endif

__device__ __forceinline__ void cp_async16(void* dst, const void* src, unsigned long long policy) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
#if L2_HINT
    asm volatile("cp.async.cg.shared.global.L2::cache_hint" CP_ASYNC_PREFETCH " [%0], [%1], 16, %2;" ::"r"(s),
                 "l"(src), "l"(policy) : "memory");
#else
    (void)policy;
    asm volatile("cp.async.cg.shared.global" CP_ASYNC_PREFETCH " [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
#endif
}

__device__ __forceinline__ void store16(int4* dst, int4 v) {
#if STORE_CS
    __stcs(dst, v);
#else
    *dst = v;
#endif
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// ---- the kernel ---------------------------------------------------------------------------------------------

#if DIAG_STATS
// [0..4]: cycles of thread 0 in the phases of an iteration (0 next index + barrier, 1 loads landed + block scan,
// 2 look-back, 3 barrier after it, 4 rescan + stores), [5] iterations, [6] look-back windows read, [7] extra polls
// of windows holding an X, [8] blocks.
__device__ unsigned long long lookback_stats[16];
#define STAMP(k)                                \
    do {                                        \
        if (t == 0) {                           \
            const long long now = clock64();    \
            phase[k] += now - last_stamp;       \
            last_stamp = now;                   \
        }                                       \
    } while (0)
#else
#define STAMP(k) \
    do {         \
    } while (0)
#endif

__device__ __forceinline__ T warp_reduce(T v) {
    for (int offset = 16; offset > 0; offset >>= 1) v = op_combine(v, __shfl_xor_sync(FULL, v, offset));
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

// Is this warp's part of `tile` whole, and the arrays 16-byte aligned (the vector path)?
__device__ __forceinline__ bool warp_part_full(long long n, int tile, int warp) {
    return VECTOR_LOADS && n - ((long long)tile * TILE + (long long)warp * WARP_ITEMS) >= WARP_ITEMS;
}

// Starts this thread's cp.async copies of its warp's part of `tile` into `buffer` (the vector path only: a partial
// or unaligned part is loaded by scalar loads when its turn comes).
__device__ __forceinline__ void prefetch(T* buffer, const T* in, long long n, int tile, long long num_tiles, int warp,
                                         int lane, unsigned long long policy) {
    if (tile < num_tiles && warp_part_full(n, tile, warp)) {
        const int4* src = reinterpret_cast<const int4*>(in + (long long)tile * TILE + (long long)warp * WARP_ITEMS);
        int4* dst = reinterpret_cast<int4*>(buffer + warp * WARP_SMEM_VECS * VEC);
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; ++k) cp_async16(&dst[pad_vec(lane + 32 * k)], src + lane + 32 * k, policy);
    }
}


// Grid: PIPELINE 0: one block per tile.  PIPELINE 1: any number of blocks (the host launches a few per SM), each
// looping over tiles taken from the counter; every index it takes, it processes in increasing order.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    decoupled_lookback_scan(T* out, const T* in, long long n, int exclusive, unsigned int* tile_counter,
                            unsigned long long* status, long long num_tiles, unsigned int epoch) {
#if DYNAMIC_SMEM
    // STAGES * STAGE_ELEMS elements, sized by the host (shared_size), which also raises the function's limit
    // (MAX_DYNAMIC_SHARED_SIZE_BYTES) past 48 KB when needed.
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    T(*smem)[STAGE_ELEMS] = reinterpret_cast<T(*)[STAGE_ELEMS]>(dynamic_smem);
#else
    __shared__ __align__(16) T smem[STAGES][STAGE_ELEMS];
#endif
    __shared__ T warp_totals[WARPS];
    __shared__ T shared_prefix;
    __shared__ int shared_tile[STAGES];
#if PIPELINE && EARLY_A
    __shared__ T next_warp_totals[WARPS];
#endif

    const int t = threadIdx.x;
    const int lane = t & 31;
    const int warp = t >> 5;
    const unsigned long long policy = evict_first_policy();
    (void)policy;

    // 1. Dynamic tile index (not blockIdx.x: a tile only waits on tiles whose index was taken earlier, by a block
    //    that is running, and each block works through its indices in order: no deadlock, whatever order the
    //    hardware starts blocks in).
#if PIPELINE
    // Prologue: the first PIPELINE indices, and this thread's copies of its warp's part of each.
    if (t == 0) {
        for (int s = 0; s < PIPELINE; ++s)
            shared_tile[s] = num_tiles > 1 ? (int)atomicAdd(tile_counter, 1u) : s == 0 ? (int)blockIdx.x : (int)num_tiles;
    }
    __syncthreads();
    for (int s = 0; s < PIPELINE; ++s) {
        prefetch(smem[s], in, n, shared_tile[s], num_tiles, warp, lane, policy);
        cp_async_commit();
    }
#else
    if (t == 0) shared_tile[0] = num_tiles > 1 ? (int)atomicAdd(tile_counter, 1u) : (int)blockIdx.x;
    __syncthreads();
#endif
    int tile = shared_tile[0];
    int stage = 0;
#if DIAG_STATS
    long long phase[5] = {0, 0, 0, 0, 0};
    long long last_stamp = clock64();
    unsigned long long iterations = 0, windows = 0, polls = 0;
#endif
    bool a_published = false;  // EARLY_A: this tile's A was published in the previous iteration


    while (tile < num_tiles) {
        T* wsmem = smem[stage] + warp * WARP_SMEM_VECS * VEC;  // this warp's region of this stage
        int4* wvec = reinterpret_cast<int4*>(wsmem);
        const long long base = (long long)tile * TILE + (long long)warp * WARP_ITEMS;  // this warp's part
        const long long remaining = n - base;  // may be <= 0 for warps past the end of a partial tile
        const bool full = warp_part_full(n, tile, warp);

#if PIPELINE
        // Take one more index now and start its copies into the stage the previous iteration used (the barrier
        // tells every thread that that iteration is over): PIPELINE tiles' loads stay in flight while this tile
        // is scanned, looked back and stored.
        const int ahead = (stage + PIPELINE) % STAGES;
        if (t == 0) shared_tile[ahead] = num_tiles > 1 ? (int)atomicAdd(tile_counter, 1u) : (int)num_tiles;
        __syncthreads();
        STAMP(0);
        prefetch(smem[ahead], in, n, shared_tile[ahead], num_tiles, warp, lane, policy);
        cp_async_commit();
        // This thread's copies of the current tile (and with EARLY_A of the next one) have landed.
        cp_async_wait<EARLY_A ? PIPELINE - 1 : PIPELINE>();
        const int next = shared_tile[(stage + 1) % STAGES];
#else
        const int next = (int)num_tiles;
        if (full) {
            const int4* src = reinterpret_cast<const int4*>(in + base);
#pragma unroll
            for (int k = 0; k < VECS_PER_THREAD; ++k) {
                const int v = lane + 32 * k;
                wvec[pad_vec(v)] = __ldcs(src + v);  // streamed: read once
            }
        }
#endif
        // 2. This warp's part: striped coalesced loads into its region (above), then each lane reads its ITEMS
        //    (blocked).  Partial tile / unaligned arrays: scalar loads, the identity past the end.
        if (!full) {
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int e = lane + 32 * k;
                wsmem[pad_elem(e)] = e < remaining ? in[base + e] : op_identity();
            }
        }
        __syncwarp();  // only this warp wrote its region
        T items[ITEMS];
        read_items(wvec, lane, items);

        // 3. Thread totals, warp-shuffle inclusive scan of them, warp totals through shared memory.
        const T inclusive = warp_inclusive_scan(thread_total_of(items), lane);
        T thread_prefix = __shfl_up_sync(FULL, inclusive, 1);  // exclusive within the warp
        if (lane == 0) thread_prefix = op_identity();
        if (lane == 31) warp_totals[warp] = inclusive;
#if PIPELINE && EARLY_A
        // The next tile's data are here too: its warp totals, by the same arithmetic as below (so the A published
        // now is bit for bit the aggregate it will compute), and warp 0 publishes its A before this tile's
        // look-back.  Why: a block holds the indices of the tiles it prefetches; if the next tile's A waited
        // until this tile's look-back is over, look-backs would wait on look-backs, a chain through the blocks.
        const bool early = num_tiles > 1 && next > 0 && next < num_tiles && (long long)(next + 1) * TILE <= n;
        if (early) {
            const int4* nvec = reinterpret_cast<const int4*>(smem[(stage + 1) % STAGES] + warp * WARP_SMEM_VECS * VEC);
            T next_items[ITEMS];
            read_items(nvec, lane, next_items);
            const T total = warp_inclusive_scan(thread_total_of(next_items), lane);
            if (lane == 31) next_warp_totals[warp] = total;
        }
#else
        const bool early = false;
#endif
        __syncthreads();
        STAMP(1);
        T warp_prefix = op_identity();
        T aggregate = op_identity();
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            if (w == warp) warp_prefix = aggregate;
            aggregate = op_combine(aggregate, warp_totals[w]);
        }
        thread_prefix = op_combine(warp_prefix, thread_prefix);

        // 4. Decoupled look-back (warp 0).
        if (LOOKBACK && num_tiles > 1 && warp == 0) {
            Status<sizeof(T)> st(status, epoch);
            T exclusive_prefix = op_identity();
#if PIPELINE && EARLY_A
            if (early && lane == 0) {
                T next_aggregate = op_identity();
#pragma unroll
                for (int w = 0; w < WARPS; ++w) next_aggregate = op_combine(next_aggregate, next_warp_totals[w]);
                st.publish(next, STATUS_A, next_aggregate);
            }
#endif
            if (tile == 0) {
                if (lane == 0) st.publish(0, STATUS_P, aggregate);
            } else {
                if (lane == 0 && !a_published) st.publish(tile, STATUS_A, aggregate);
                // Lane i looks at tile (window - i): lane 0 the nearest predecessor.
                for (int window = tile - 1;; window -= 32) {
                    unsigned flag;
                    T value;
                    const int extra_polls = st.read_window(window - lane, flag, value);
#if DIAG_STATS
                    ++windows;
                    polls += extra_polls;
#else
                    (void)extra_polls;
#endif
                    const unsigned p_lanes = __ballot_sync(FULL, flag == STATUS_P);
                    const int nearest_p = p_lanes ? __ffs(p_lanes) - 1 : 32;
                    // The lanes before the nearest P hold aggregates (A) of tiles between it and us; the P lane
                    // holds the inclusive prefix of everything up to its tile; the lanes past it are not needed.
                    const T window_total = warp_reduce(lane <= nearest_p ? value : op_identity());
                    exclusive_prefix = op_combine(window_total, exclusive_prefix);
                    if (p_lanes) break;
                }
                if (lane == 0) st.publish(tile, STATUS_P, op_combine(exclusive_prefix, aggregate));
            }
            if (lane == 0) shared_prefix = exclusive_prefix;
        } else if ((!LOOKBACK || num_tiles <= 1) && t == 0) {
            shared_prefix = op_identity();
        }
        STAMP(2);
        __syncthreads();
        STAMP(3);

        // 5. Rescan the items from the thread's prefix, store the warp's part through its region.
        T running = op_combine(shared_prefix, thread_prefix);
#if RELOAD
        // The items again from shared memory (still there): they need no registers across the look-back.
        read_items(wvec, lane, items);
#endif
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const T x = items[i];
            const T nxt = op_combine(running, x);
            items[i] = exclusive ? running : nxt;
            running = nxt;
        }
#if DIRECT_STORE
        // Whole part: each lane stores its own VECS_PER_THREAD consecutive vectors (blocked: one instruction
        // writes 16 bytes every 16 * VECS_PER_THREAD bytes; the instructions together fill every sector) and skips
        // the write to shared memory, the __syncwarp and the striped re-read.
        if (full) {
            int4* dst = reinterpret_cast<int4*>(out + base);
#pragma unroll
            for (int j = 0; j < VECS_PER_THREAD; ++j) {
                Vec v;
#pragma unroll
                for (int i = 0; i < VEC; ++i) v.e[i] = items[j * VEC + i];
                store16(dst + lane * VECS_PER_THREAD + j, v.raw);
            }
        } else
#endif
        {
        // Every lane read its blocked vectors before the __syncthreads above: the region can be overwritten.
#pragma unroll
        for (int j = 0; j < VECS_PER_THREAD; ++j) {
            Vec v;
#pragma unroll
            for (int i = 0; i < VEC; ++i) v.e[i] = items[j * VEC + i];
            wvec[pad_vec(lane * VECS_PER_THREAD + j)] = v.raw;
        }
        __syncwarp();
        if (full) {
            int4* dst = reinterpret_cast<int4*>(out + base);
#pragma unroll
            for (int k = 0; k < VECS_PER_THREAD; ++k) {
                const int v = lane + 32 * k;
                store16(dst + v, wvec[pad_vec(v)]);
            }
        } else {
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int e = lane + 32 * k;
                if (e < remaining) out[base + e] = wsmem[pad_elem(e)];
            }
        }
        }
        STAMP(4);
#if DIAG_STATS
        ++iterations;
#endif
        tile = next;
        stage = (stage + 1) % STAGES;
        a_published = early;
    }
#if PIPELINE
    cp_async_wait<0>();  // (nothing is pending: the last indices taken were past the end)
#endif
#if EPOCH
    // The counter back to 0 for the next launch, by the last block to finish: every block took its last index
    // before it counts itself done (tile_counter[1]).  (Without EPOCH the host zeroes both before each launch.)
    if (num_tiles > 1 && t == 0) {
        __threadfence();
        if (atomicAdd(&tile_counter[1], 1u) == gridDim.x - 1) {
            __threadfence();
            atomicExch(&tile_counter[0], 0u);
            atomicExch(&tile_counter[1], 0u);
        }
    }
#endif
#if DIAG_STATS
    if (t == 0) {
        for (int k = 0; k < 5; ++k) atomicAdd(&lookback_stats[k], (unsigned long long)phase[k]);
        atomicAdd(&lookback_stats[5], iterations);
        atomicAdd(&lookback_stats[6], windows);
        atomicAdd(&lookback_stats[7], polls);
        atomicAdd(&lookback_stats[8], 1ull);
    }
#endif
}
