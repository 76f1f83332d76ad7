// decoupled_lookback.cu -- single-pass prefix scan with decoupled look-back (Merrill & Garland, "Single-pass
// Parallel Prefix Scan with Decoupled Look-back", NVIDIA technical report NVR-2016-002).  Beyond the books:
// PMPP §11.7's domino (single_pass.cu) makes every block wait for its predecessor's *inclusive* prefix, so the
// hand-offs form a serial chain of L2 round trips.  Here every tile publishes its own *aggregate* as soon as it
// has it (status A), and its inclusive prefix once it knows it (status P); a tile computes its exclusive prefix
// by looking back over its predecessors, combining A aggregates until it meets a P.  No tile waits for a chain.
//
// One tile = BLOCK_THREADS threads x ITEMS items, ITEMS = VECS_PER_THREAD 16-byte vectors (defaults, as tuned on
// an H100 by scripts/time_scan.py --tune: 256 x 32 = 8192 elements of a 32-bit type, 256 x 16 = 4096 of a 64-bit
// type: 32 KB; MIN_BLOCKS = 4 caps the registers at 64 per thread).  Per tile:
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
// Tile status (scratch zeroed by the host before each launch, together with the tile counter):
// * 32-bit types: flag and value packed into ONE 64-bit word, (value bits << 32) | flag, written and read
//   with single 64-bit volatile accesses.  An aligned 64-bit access is single-copy atomic, so a reader sees
//   either the old or the new (flag, value) pair: no fence is needed between value and flag.
// * 64-bit types: a 128-bit (flag, value) word cannot be written atomically by plain stores on every GPU, so
//   flags[], aggregates[] and inclusives[] are separate arrays:
//      writer: value -> aggregates[t] (or inclusives[t]);  __threadfence();  flag -> flags[t]
//      reader: read flags[t] until not X;  __threadfence();  read aggregates[t] or inclusives[t] (as the flag says)
//   A and P values live in different slots, so a reader that saw flag A can never read the P value that the
//   tile writes later (with one shared slot it could, and would count the tile's predecessors twice).
// Layout of `status` (in 64-bit words): 32-bit types: status[t]; 64-bit types: flags as 32-bit words in
// status[0 .. (num_tiles+1)/2), then aggregates[num_tiles], then inclusives[num_tiles] (both as T).
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
#define VECS_PER_THREAD 8  // 16-byte vectors per thread (2, 4 or 8: the padding below is conflict-free for these)
#endif
#ifndef VECTOR_LOADS
#define VECTOR_LOADS 1  // the host passes 0 when `in` or `out` is not 16-byte aligned
#endif
#ifndef BACKOFF
#define BACKOFF 0
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4  // __launch_bounds__' minimum resident blocks per SM: > 1 caps the registers per thread
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

static_assert(sizeof(T) == 4 || sizeof(T) == 8, "the element type must be 4 or 8 bytes");

enum : unsigned { STATUS_X = 0, STATUS_A = 1, STATUS_P = 2 };  // X (nothing yet) must be 0: the host zeroes

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
    __device__ Status(unsigned long long* status, long long) : words(status) {}
    __device__ void publish(int tile, unsigned flag, T value) {
        unsigned bits;
        memcpy(&bits, &value, 4);
        *(volatile unsigned long long*)&words[tile] = ((unsigned long long)bits << 32) | flag;
    }
    // Waits until the status of `tile` is not X (tile < 0, before the first tile: a P of the identity).  All 32
    // lanes run the same loop (one __any_sync per iteration for the whole warp).
    __device__ void read_window(int tile, unsigned& flag, T& value) {
        unsigned long long w = STATUS_P;
        if (tile >= 0) w = *(volatile unsigned long long*)&words[tile];
        while (__any_sync(FULL, (unsigned)w == STATUS_X)) {
            if (BACKOFF > 0) __nanosleep(BACKOFF);
            if (tile >= 0) w = *(volatile unsigned long long*)&words[tile];
        }
        flag = (unsigned)w;
        const unsigned bits = (unsigned)(w >> 32);
        memcpy(&value, &bits, 4);
        if (tile < 0) value = op_identity();
    }
};

template <>
struct Status<8> {  // separate flags / aggregates / inclusives with fences
    unsigned* flags;
    T* aggregates;
    T* inclusives;
    __device__ Status(unsigned long long* status, long long num_tiles) {
        flags = reinterpret_cast<unsigned*>(status);
        aggregates = reinterpret_cast<T*>(status + (num_tiles + 1) / 2);
        inclusives = aggregates + num_tiles;
    }
    __device__ void publish(int tile, unsigned flag, T value) {
        *(volatile T*)&(flag == STATUS_P ? inclusives : aggregates)[tile] = value;
        __threadfence();  // the value before the flag
        *(volatile unsigned*)&flags[tile] = flag;
    }
    __device__ void read_window(int tile, unsigned& flag, T& value) {
        unsigned f = STATUS_P;
        if (tile >= 0) f = *(volatile unsigned*)&flags[tile];
        while (__any_sync(FULL, f == STATUS_X)) {
            if (BACKOFF > 0) __nanosleep(BACKOFF);
            if (tile >= 0) f = *(volatile unsigned*)&flags[tile];
        }
        __threadfence();  // the flag before the value
        flag = f;
        value = tile < 0 ? op_identity() : *(volatile T*)&(f == STATUS_P ? inclusives : aggregates)[tile];
    }
};

// ---- the kernel ---------------------------------------------------------------------------------------------

__device__ __forceinline__ T warp_reduce(T v) {
    for (int offset = 16; offset > 0; offset >>= 1) v = op_combine(v, __shfl_xor_sync(FULL, v, offset));
    return v;
}

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    decoupled_lookback_scan(T* out, const T* in, long long n, int exclusive, unsigned int* tile_counter,
                            unsigned long long* status, long long num_tiles) {
    __shared__ __align__(16) T smem[WARPS * WARP_SMEM_VECS * VEC];
    __shared__ T warp_totals[WARPS];
    __shared__ T shared_prefix;
    __shared__ int shared_tile;

    const int t = threadIdx.x;
    const int lane = t & 31;
    const int warp = t >> 5;
    T* wsmem = smem + warp * WARP_SMEM_VECS * VEC;  // this warp's region
    int4* wvec = reinterpret_cast<int4*>(wsmem);

    // 1. Dynamic tile index.
    if (t == 0) shared_tile = num_tiles > 1 ? (int)atomicAdd(tile_counter, 1u) : 0;
    __syncthreads();
    const int tile = shared_tile;
    const long long base = (long long)tile * TILE + (long long)warp * WARP_ITEMS;  // this warp's part
    const long long remaining = n - base;  // may be <= 0 for warps past the end of a partial tile
    const bool full = remaining >= WARP_ITEMS && VECTOR_LOADS;

    // 2. This warp's part: striped coalesced loads into its region, then each lane reads its ITEMS (blocked).
    if (full) {
        const int4* src = reinterpret_cast<const int4*>(in + base);
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; ++k) {
            const int v = lane + 32 * k;
            wvec[pad_vec(v)] = __ldcs(src + v);  // streamed: read once
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int e = lane + 32 * k;
            wsmem[pad_elem(e)] = e < remaining ? in[base + e] : op_identity();
        }
    }
    __syncwarp();
    T items[ITEMS];
#pragma unroll
    for (int j = 0; j < VECS_PER_THREAD; ++j) {
        Vec v;
        v.raw = wvec[pad_vec(lane * VECS_PER_THREAD + j)];
#pragma unroll
        for (int i = 0; i < VEC; ++i) items[j * VEC + i] = v.e[i];
    }

    // 3. Thread totals, warp-shuffle inclusive scan of them, warp totals through shared memory.
    T thread_total = items[0];
#pragma unroll
    for (int i = 1; i < ITEMS; ++i) thread_total = op_combine(thread_total, items[i]);
    T inclusive = thread_total;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T y = __shfl_up_sync(FULL, inclusive, offset);
        if (lane >= offset) inclusive = op_combine(y, inclusive);
    }
    T thread_prefix = __shfl_up_sync(FULL, inclusive, 1);  // exclusive within the warp
    if (lane == 0) thread_prefix = op_identity();
    if (lane == 31) warp_totals[warp] = inclusive;
    __syncthreads();
    T warp_prefix = op_identity();
    T aggregate = op_identity();
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        if (w == warp) warp_prefix = aggregate;
        aggregate = op_combine(aggregate, warp_totals[w]);
    }
    thread_prefix = op_combine(warp_prefix, thread_prefix);

    // 4. Decoupled look-back (warp 0).
    if (num_tiles > 1 && warp == 0) {
        Status<sizeof(T)> st(status, num_tiles);
        T exclusive_prefix = op_identity();
        if (tile == 0) {
            if (lane == 0) st.publish(0, STATUS_P, aggregate);
        } else {
            if (lane == 0) st.publish(tile, STATUS_A, aggregate);
            // Lane i looks at tile (window - i): lane 0 the nearest predecessor.
            for (int window = tile - 1;; window -= 32) {
                unsigned flag;
                T value;
                st.read_window(window - lane, flag, value);
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
    } else if (num_tiles <= 1 && t == 0) {
        shared_prefix = op_identity();
    }
    __syncthreads();

    // 5. Rescan the items from the thread's prefix, store the warp's part through its region.
    T running = op_combine(shared_prefix, thread_prefix);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const T x = items[i];
        const T next = op_combine(running, x);
        items[i] = exclusive ? running : next;
        running = next;
    }
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
            __stcs(dst + v, wvec[pad_vec(v)]);
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int e = lane + 32 * k;
            if (e < remaining) out[base + e] = wsmem[pad_elem(e)];
        }
    }
}
