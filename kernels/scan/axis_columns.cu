// axis_columns.cu -- a scan along any axis but the last of a C-contiguous array, seen as (outer, n, inner): for
// each outer index, a scan of the sequence of n rows of `inner` lanes, every lane on its own (a batch of inner
// independent column scans whose elements sit `inner` apart).  PMPP §11.7's single pass with decoupled look-back
// (Merrill & Garland 2016), one look-back chain per lane.
//
// Why this shape.  Threads on consecutive lanes read consecutive addresses (coalesced), so a block covers LANES
// lanes x ROWS rows: LANES = inner when inner < 32 (then a chunk's rows are one contiguous run of memory, moved
// 16 bytes a thread through shared memory), else 32, 64, 128 or 256 lanes (the host widens the block over lanes when n
// is short, so a block is always ~BLOCK_THREADS * items elements).  Blocks are numbered (group, chunk) with
// group = (outer index, lane chunk) and chunk the row chunk, chunk fastest: 2^20 x 16 scanned along axis 0 (16
// lanes) runs thousands of row chunks of one group, 16 x 2^20 along axis 0 one chunk of each of thousands of groups
// -- enough blocks to fill the GPU for every table shape, and each element read and written once.
//
//              inner lanes ->
//            +--------+--------+--------+       one block: (outer o, lane chunk lc, row chunk c),
//    n rows  | (o,0,0)| (o,1,0)| (o,2,0)|       threads (ty, tx): tx the lane in the chunk, ty a row group;
//      |     +--------+--------+--------+       each thread scans `items` consecutive rows of its lane,
//      v     | (o,0,1)| (o,1,1)| (o,2,1)|       a Kogge-Stone over ty joins the thread totals, and the
//            +--------+--------+--------+       lane's prefix comes from the chunks above (look-back)
//
// The look-back: every (group, chunk, lane) has a status slot (../common/tile_status.cuh: packed words for 4-byte
// T, (half, flag) pairs for 8-byte T, epoch-tagged so the buffer is zeroed once).  Chunk 0 publishes P (its
// aggregate); chunk c > 0 publishes A, then looks back over windows of `rows` chunks read by the whole block,
// each lane combining A aggregates until it meets a P, and publishes P.  Blocks take their
// (group, chunk) from an atomic ticket in that order, so a chunk only waits on chunks that took tickets earlier
// (running or finished): no deadlock.  With one chunk per group there is no status, no counter, no look-back.
//
// Lengths: element offsets are 64-bit ((o * n + row) * inner + lane); tickets and block counts are 32-bit
// (groups * chunks < 2^31), status slots 64-bit.
#include "../common/operators.cuh"
#include "../common/tile_status.cuh"

#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif
#ifndef ITEMS
#define ITEMS 32  // the most rows a thread scans (the host passes `items` <= ITEMS); 16 for 8-byte T (shared
                  // memory), half that where a thread scans no more than half (pyscan/scans/axis.py)
#endif
#ifndef DIRECT_LOADS
#define DIRECT_LOADS 0  // 1: the build for lanes >= 32, where a warp is 32 consecutive lanes of one row group: each
                        // thread loads its own rows straight into registers and stores them from there (each
                        // warp-wide load or store is one contiguous run of a row), with no shared-memory staging
                        // and no transposing barrier.  The host picks it (pyscan/scans/axis.py, column_build);
                        // the arithmetic is the staged build's, combine for combine.
#endif
#ifndef LANES_PER_THREAD
#define LANES_PER_THREAD 1  // direct loads: the consecutive lanes a thread holds (V).  The host passes 2 for 2-byte
                            // inputs combined in 4 bytes (float16, bfloat16: column_lanes_per_thread), so a warp's
                            // load of a row is 64 lanes, 128 bytes, and one load or store moves a thread's two lanes
#endif
#ifndef MIN_BLOCKS
// Blocks per SM the compiler must fit (its register budget; 0: no bound, the compiler's choice), measured on the
// bench's shapes (docs/axis.md, "Direct loads" and "Staged runs").  Direct loads: 4 (64 registers; with no bound
// ptxas took 71-84, 3 blocks, and 4096 x 4096 along axis 0 ran slower).  Staged: no bound (32-48 registers); a
// bound of 1 for 4-byte T ran level or up to 1.04 x slower.
#define MIN_BLOCKS (DIRECT_LOADS ? 4 : 0)
#endif
#if BLOCK_THREADS != 256
#error "the host's geometry (pyscan/scans/axis.py) assumes 256 threads"
#endif
#if LANES_PER_THREAD != 1 && !DIRECT_LOADS
#error "LANES_PER_THREAD > 1 is a build of the direct loads"
#endif
constexpr int V = LANES_PER_THREAD;
static_assert(sizeof(T) == 4 || sizeof(T) == 8, "the accumulator type must be 4 or 8 bytes");
using InT = IN_TYPE;
using OutT = OUT_TYPE;

// The staged build runs lanes == inner < 32, so a chunk's rows * items rows are one contiguous run of the array.
// Shared memory holds that run, element f at staged_at(f) = f + f / 32: a pad word after every 32, so the threads
// of a warp reading their own rows (element (ty * items + i) * lanes + tx, one ty every `lanes` threads) fall in
// different banks, and so do the 16-byte loads and stores of VEC consecutive elements a thread.  SMEM holds
// staged_at(256 * ITEMS - 1) + 1 elements (rows * lanes <= 256).
template <typename E, int N>
struct alignas(sizeof(E) * N) Vector {  // N consecutive elements, moved by one load or store
    E e[N];
};
#if !DIRECT_LOADS
constexpr int SMEM = (ITEMS + 1) * BLOCK_THREADS;
__device__ __forceinline__ int staged_at(int f) { return f + (f >> 5); }
template <typename E>
using Vector16 = Vector<E, 16 / sizeof(E)>;  // one 16-byte load or store
#else
template <typename E>  // p may be read or written as a Vector<E, V>
__device__ __forceinline__ bool vector_aligned(const E* p) {
    return reinterpret_cast<unsigned long long>(p) % (sizeof(E) * V) == 0;
}
#endif
constexpr int WORDS = TileStatus<T>::WORDS;                  // 64-bit status words per slot

// out[(o*n + r)*inner + l] = op over in[(o*n + r')*inner + l], r' <= r (exclusive: r' < r, the identity at r = 0).
// lanes / V * rows <= BLOCK_THREADS threads are used ((ty, tx) = (t / (lanes / V), t % (lanes / V)), lanes <=
// BLOCK_THREADS); a block covers rows * items rows of `lanes` lanes; lane_chunks = ceil(inner / lanes), chunks =
// ceil(n / (rows * items)); the grid is outer * lane_chunks * chunks blocks.  With chunks > 1, counter[0..1] are 0
// at entry (and at exit) and status holds this stream's slots (outer * lane_chunks * chunks * lanes of them),
// tagged with `epoch`.
extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
    axis_columns_scan(OutT* __restrict__ out, const InT* __restrict__ in, long long n, long long inner, int lanes,
                      int rows, int items, long long lane_chunks, long long chunks, int exclusive,
                      unsigned int* counter, unsigned long long* status, unsigned int epoch) {
#if !DIRECT_LOADS
    __shared__ T smem[SMEM];
#endif
    __shared__ T totals[BLOCK_THREADS * V];  // slot (ty, lane of the block) = ty * lanes + lane
    __shared__ T lane_prefix[BLOCK_THREADS];
    __shared__ T window_value[BLOCK_THREADS];  // the look-back's window: slot (wy, wx) = lane wx of chunk back - wy
    __shared__ unsigned char window_flag[BLOCK_THREADS];
    __shared__ long long shared_ticket;

    const int t = threadIdx.x;
    const int tx = t % (lanes / V), ty = t / (lanes / V);  // this thread's lanes tx * V .. + V - 1 of row group ty
    const bool used = ty < rows;  // threads past lanes * rows only join the barriers (staged: and the run's moves)
    // The look-back's view of the block: a window of `window` chunks of `lanes` lanes, thread (wy, wx) on lane wx
    // of the wy-th chunk back (V == 1: the thread's own (ty, tx); lanes <= BLOCK_THREADS, so one thread a lane)
    const int wx = t % lanes, wy = t / lanes, window = rows / V;

    if (t == 0) shared_ticket = chunks > 1 ? (long long)atomicAdd(counter, 1u) : (long long)blockIdx.x;
    __syncthreads();
    const long long ticket = shared_ticket;
    const long long group = ticket / chunks, chunk = ticket % chunks;
    const long long o = group / lane_chunks;
    const long long row0 = chunk * rows * items;  // the chunk's first row
    const long long left = n - row0;              // rows from row0 to the end
#if DIRECT_LOADS
    const long long l = (group % lane_chunks) * lanes + tx * V;  // this thread's (first) lane
    const bool lane_ok = used && l < inner;
    // 1-2. this thread's rows ty * items .. + items - 1 of lanes l .. l + V - 1 straight into registers (a warp's
    //      load: 32 * V consecutive lanes of one row), their serial scans' totals, then as below.  The V lanes of a
    //      row move as one vector where every row's are in the array and aligned (inner a multiple of V, x and out
    //      aligned), else one element at a time
    const long long at = (o * n + row0 + (long long)ty * items) * inner + l;  // element (o, row0 + ty * items, l)
    T v[ITEMS][V];
    T total[V];
    const long long here = lane_ok ? left - (long long)ty * items : 0;  // this thread's rows to the end (0: none)
    const bool vectors = V > 1 && inner % V == 0 && vector_aligned(in + at) && vector_aligned(out + at);
    if (vectors) {  // (one branch around whole loops, so that every row's load is in flight at once)
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            Vector<InT, V> x;
            if (i < items && i < here) x = *reinterpret_cast<const Vector<InT, V>*>(in + at + i * inner);
#pragma unroll
            for (int p = 0; p < V; ++p) v[i][p] = i < items && i < here ? op_load(x.e[p]) : op_identity();
        }
    } else {
        const InT* source = in + at;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i, source += inner)
#pragma unroll
            for (int p = 0; p < V; ++p)
                v[i][p] = i < items && i < here && (V == 1 || l + p < inner) ? op_load(source[p]) : op_identity();
    }
#pragma unroll
    for (int p = 0; p < V; ++p) {
        total[p] = op_identity();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
            if (i < items) total[p] = op_combine(total[p], v[i][p]);
    }
    if (used)
#pragma unroll
        for (int p = 0; p < V; ++p) totals[V * t + p] = total[p];
#else
    const long long run = (o * n + row0) * inner;  // the chunk's first element (lanes == inner: thread tx's lane tx)
    const int span = rows * items * lanes;         // the chunk's elements in shared memory
    const long long rows_here = left < (long long)rows * items ? left : (long long)rows * items;
    const int count = (int)rows_here * lanes;      // the elements in the array, the rest the identity

    // 1. the run into shared memory, op_load converting each element to the result dtype and widening it to T
    //    (operators.cuh; the results go out through op_store): VEC consecutive elements a thread, one 16-byte load
    //    where the run is 16-byte aligned, else one element at a time (f is a multiple of VEC, so f .. f + VEC - 1
    //    share a pad: staged_at(f) + j)
    {
        constexpr int VEC = 16 / sizeof(InT);
        const InT* source = in + run;
        const bool vectors = (reinterpret_cast<unsigned long long>(source) & 15) == 0;
        for (int f = t * VEC; f < span; f += BLOCK_THREADS * VEC) {
            T* slot = smem + staged_at(f);
            if (vectors && f + VEC <= count) {
                const Vector16<InT> x = *reinterpret_cast<const Vector16<InT>*>(source + f);
#pragma unroll
                for (int j = 0; j < VEC; ++j) slot[j] = op_load(x.e[j]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j) slot[j] = f + j < count ? op_load(source[f + j]) : op_identity();
            }
        }
    }
    __syncthreads();

    // 2. this thread's rows ty * items .. + items - 1 (consecutive: a serial scan), its total, and the Kogge-Stone
    //    scan of the totals over ty for each lane
    const int mine = ty * items * lanes + tx;  // the run's element (ty * items, tx); row + i: + i * lanes
    T total = op_identity();
    if (used) {
        for (int i = 0; i < items; ++i) total = op_combine(total, smem[staged_at(mine + i * lanes)]);
        totals[t] = total;
    }
#endif
    __syncthreads();
    for (int offset = 1; offset < rows; offset <<= 1) {  // slot V * t + p: (ty, tx * V + p)
        T w[V];
#pragma unroll
        for (int p = 0; p < V; ++p) {
            w[p] = used ? totals[V * t + p] : op_identity();
            if (used && ty >= offset) w[p] = op_combine(totals[V * t + p - offset * lanes], w[p]);
        }
        __syncthreads();
        if (used)
#pragma unroll
            for (int p = 0; p < V; ++p) totals[V * t + p] = w[p];
        __syncthreads();
    }
    // totals[ty * lanes + lane] is now the inclusive scan over ty; the lane's aggregate is at ty = rows - 1

    // 3. the look-back over row chunks.  A window of `window` chunks is read at once by the whole block: thread
    //    (wy, wx) reads lane wx's status in chunk back - wy (lanes = 2: 128 chunks at once, 32 lanes: 8), waiting
    //    until it is not X; then thread t < lanes combines its lane's window nearest first, up to the nearest P.
    //    Waiting on every slot of the window waits for nothing needless: a P is made only from statuses that are
    //    not X, so every chunk before a P has published, and an X lies nearer than any P.  (Lanes stepping back one
    //    chunk a poll made each chunk wait one L2 round trip per earlier chunk still without a P: 2^23 x 2 int32
    //    along axis 0 ran at 20 % of the DRAM bandwidth.)
    T exclusive_prefix = op_identity();  // thread t < lanes: lane t's
    if (chunks > 1) {
        const long long first = group * chunks;  // status slot of (group, chunk c, lane): (first + c) * lanes + lane
        TileStatus<T> own(status + WORDS * ((first + chunk) * lanes), epoch);
        const T aggregate = t < lanes ? totals[(rows - 1) * lanes + t] : op_identity();
        if (t < lanes) own.publish(t, chunk == 0 ? STATUS_P : STATUS_A, aggregate);
        bool done = chunk == 0 || t >= lanes;
        for (long long back = chunk - 1; !__syncthreads_and(done); back -= window) {
            if (wy < window) {
                unsigned flag = STATUS_P;  // before the first chunk: a P of the identity
                T value = op_identity();
                if (back - wy >= 0) {
                    const TileStatus<T> prev(status + WORDS * ((first + back - wy) * lanes), epoch);
                    while ((flag = prev.peek(wx, value)) == STATUS_X) {
                    }
                }
                window_flag[t] = (unsigned char)flag;
                window_value[t] = value;
            }
            __syncthreads();
            for (int k = 0; !done && k < window; ++k) {
                exclusive_prefix = op_combine(window_value[k * lanes + t], exclusive_prefix);
                done = window_flag[k * lanes + t] == STATUS_P;
            }
        }
        if (t < lanes && chunk > 0) own.publish(t, STATUS_P, op_combine(exclusive_prefix, aggregate));
    }
    if (t < lanes) lane_prefix[t] = exclusive_prefix;
    __syncthreads();

    // 4. rescan this thread's rows from (the chunk's prefix) op (the rows of ty' < ty); results back to shared memory
    //    (direct loads: to registers) and out
#if DIRECT_LOADS
    if (used) {
#pragma unroll
        for (int p = 0; p < V; ++p) {
            T running = lane_prefix[tx * V + p];
            if (ty > 0) running = op_combine(running, totals[V * t + p - lanes]);
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                if (i < items) {
                    const T next = op_combine(running, v[i][p]);
                    v[i][p] = exclusive ? running : next;
                    running = next;
                }
            }
        }
    }
    OutT* target = out + at;
    if (vectors) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i, target += inner) {
            Vector<OutT, V> y;
#pragma unroll
            for (int p = 0; p < V; ++p) y.e[p] = op_store(v[i][p]);
            if (i < items && i < here) *reinterpret_cast<Vector<OutT, V>*>(target) = y;
        }
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i, target += inner)
#pragma unroll
            for (int p = 0; p < V; ++p)
                if (i < items && i < here && (V == 1 || l + p < inner)) target[p] = op_store(v[i][p]);
    }
#else
    if (used) {
        T running = lane_prefix[tx];
        if (ty > 0) running = op_combine(running, totals[t - lanes]);
        for (int i = 0; i < items; ++i) {
            T& slot = smem[staged_at(mine + i * lanes)];
            const T next = op_combine(running, slot);
            slot = exclusive ? running : next;
            running = next;
        }
    }
    __syncthreads();
    {  // the run out as it came in: VEC consecutive results a thread, one 16-byte store where aligned
        constexpr int VEC = 16 / sizeof(OutT);
        OutT* target = out + run;
        const bool vectors = (reinterpret_cast<unsigned long long>(target) & 15) == 0;
        for (int f = t * VEC; f < count; f += BLOCK_THREADS * VEC) {
            const T* slot = smem + staged_at(f);
            if (vectors && f + VEC <= count) {
                Vector16<OutT> y;
#pragma unroll
                for (int j = 0; j < VEC; ++j) y.e[j] = op_store(slot[j]);
                *reinterpret_cast<Vector16<OutT>*>(target + f) = y;
            } else {
#pragma unroll
                for (int j = 0; j < VEC; ++j)
                    if (f + j < count) target[f + j] = op_store(slot[j]);
            }
        }
    }
#endif

    if (chunks > 1 && t == 0) {
        __threadfence();
        if (atomicAdd(&counter[1], 1u) == gridDim.x - 1) {
            __threadfence();
            atomicExch(&counter[0], 0u);
            atomicExch(&counter[1], 0u);
        }
    }
}
