// axis_columns.cu -- reduce a C-contiguous array along any axis but the last, seen as (outer, n, inner): for each
// outer index, the op over n rows of `inner` lanes, lane by lane (PMPP ch. 10's reduction tree, over the rows of a
// block, once per lane).  The output is (outer, inner).
//
// Why this shape.  Threads on consecutive lanes read consecutive addresses (coalesced).  A thread holds
// LANES_PER_THREAD lanes (V): where x's elements are narrower than 4 bytes (bool, int8, float16), as many as make 4
// bytes, and with VECTOR_LOADS it reads them as one 4-byte load per row (PMPP §6.1's coalescing, widened as CUB's
// vectorized loads: float16 along axis 0 of 4096 x 4096 and 16 x 2^20 read 2 bytes a load took 1.10 and 1.20 x as
// long on one H100, and was level on another: docs/axis.md, "Tuning the column reduction").  Without
// VECTOR_LOADS (x not aligned to the run, or inner not a multiple of V) the thread's lanes are strided (tx,
// tx + threads_x, ...), one load each, and every lane's arithmetic is the same as with runs.  A block is
// `lanes` lanes (threads_x = lanes / V threads across) x `rows` row groups (lanes = inner when inner < 32, with V = 1:
// a warp then holds 32 / inner whole rows).  Blocks are (group, chunk): group = (outer index, lane chunk),
// chunk = a run of `chunk_rows` rows; the host cuts n into as many chunks as it takes to fill the GPU (2^20 x 16
// along axis 0 has a single group of 16 lanes: it needs many row chunks).  A thread folds each of its lanes' rows
// of the chunk (ty, ty + rows, ...) into four independent accumulators, then a shared-memory tree over ty (PMPP
// §10.4's convergent tree) gives the chunk's value of each lane.  One chunk per group: that is the result.
// Several: they are partials, an (outer, chunks, inner) array of T, and the group's last block to finish reduces
// them in the same launch (the "last block" of CUDA's threadFenceReduction sample, as kernels/reduction/fast.cu):
// each block writes its partials, fences, and takes a ticket from its group's counter; the block that takes the last
// ticket folds the group's `chunks` partial rows with the same fold and tree (rows ty, ty + rows, ... of each lane),
// writes the result and puts the counter back to 0 for the next launch.  A second launch over the partials would
// cost a launch's host time (about 5 µs) and the first kernel's tail.  Only the ticket is an atomic: every output
// is a fixed tree of the inputs, the same whatever V, VECTOR_LOADS and the blocks' order, so float sums are
// reproducible run to run and bounded (pyscan/reductions/axis.py, columns_pass and error_depth).
#include "../common/partials.cuh"  // load_element: x or an earlier pass's partials; op_store keeps partials as T

#ifndef LANES_PER_THREAD
#define LANES_PER_THREAD ((int)sizeof(IN_TYPE) < 4 ? 4 / (int)sizeof(IN_TYPE) : 1)  // the host: 1 where inner < 32
#endif
#ifndef VECTOR_LOADS
#define VECTOR_LOADS 1  // the host passes 0 where x + lane is not aligned to a run of V elements
#endif

using InT = IN_TYPE;
using OutT = OUT_TYPE;
constexpr int BLOCK = 256;
constexpr int V = LANES_PER_THREAD;
static_assert(V >= 1 && BLOCK % V == 0, "LANES_PER_THREAD must divide the block");

// A run of V consecutive elements of x, as few loads as its bytes allow (16 bytes at most each).
constexpr int RUN_BYTES = V * (int)sizeof(InT);
constexpr int LOAD_BYTES = RUN_BYTES < 16 ? RUN_BYTES : 16;
template <int B> struct Word;
template <> struct Word<1> { using type = unsigned char; };
template <> struct Word<2> { using type = unsigned short; };
template <> struct Word<4> { using type = unsigned int; };
template <> struct Word<8> { using type = uint2; };
template <> struct Word<16> { using type = int4; };
using LoadWord = typename Word<LOAD_BYTES>::type;
static_assert(!VECTOR_LOADS || RUN_BYTES % LOAD_BYTES == 0, "a run is whole loads");

// Lane i of thread tx: its offset from the block's first lane.
__device__ __forceinline__ long long lane_of(int tx, int threads_x, int i) {
    return (VECTOR_LOADS && V > 1) ? (long long)tx * V + i : (long long)tx + (long long)i * threads_x;
}

// This thread's V elements of one row: x_row points at the row's element of the block's first lane.
__device__ __forceinline__ void load_lanes(const InT* x_row, int tx, int threads_x, long long first,
                                           long long inner, T (&v)[V]) {
    if constexpr (VECTOR_LOADS && V > 1) {
        // inner is a multiple of V: the run is all in or all past the end
        if (first + (long long)tx * V < inner) {
            InT e[V];
            const LoadWord* src = reinterpret_cast<const LoadWord*>(x_row + (long long)tx * V);
#pragma unroll
            for (int k = 0; k < RUN_BYTES / LOAD_BYTES; ++k) {
                const LoadWord w = src[k];
                memcpy(reinterpret_cast<unsigned char*>(e) + k * LOAD_BYTES, &w, LOAD_BYTES);
            }
#pragma unroll
            for (int i = 0; i < V; ++i) v[i] = load_element(e[i]);
        } else {
#pragma unroll
            for (int i = 0; i < V; ++i) v[i] = op_identity();
        }
    } else {
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const long long l = lane_of(tx, threads_x, i);
            v[i] = first + l < inner ? load_element(x_row[l]) : op_identity();
        }
    }
}

// Thread t's fold of rows lo, lo + rows, ... < hi (lo = the chunk's first row + ty) of its V lanes into four
// independent accumulators (loads in flight), then into totals[i][t].  load_row(r, v) gives row r's V values.
template <typename LoadRow>
__device__ __forceinline__ void fold_rows(T (&totals)[V][BLOCK], int t, bool active, long long r, long long hi,
                                          int rows, LoadRow load_row) {
    T a0[V], a1[V], a2[V], a3[V];
#pragma unroll
    for (int i = 0; i < V; ++i) a0[i] = a1[i] = a2[i] = a3[i] = op_identity();
    if (active) {
        for (; r + 3LL * rows < hi; r += 4LL * rows) {
            T v0[V], v1[V], v2[V], v3[V];
            load_row(r, v0);
            load_row(r + rows, v1);
            load_row(r + 2 * rows, v2);
            load_row(r + 3 * rows, v3);
#pragma unroll
            for (int i = 0; i < V; ++i) {
                a0[i] = op_combine(a0[i], v0[i]);
                a1[i] = op_combine(a1[i], v1[i]);
                a2[i] = op_combine(a2[i], v2[i]);
                a3[i] = op_combine(a3[i], v3[i]);
            }
        }
        for (; r < hi; r += rows) {
            T v0[V];
            load_row(r, v0);
#pragma unroll
            for (int i = 0; i < V; ++i) a0[i] = op_combine(a0[i], v0[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < V; ++i) totals[i][t] = op_combine(op_combine(a0[i], a1[i]), op_combine(a2[i], a3[i]));
}

// The tree over ty (row group ty takes ty + half): row group 0 ends with each lane's value.  Every thread calls it.
__device__ __forceinline__ void row_group_tree(T (&totals)[V][BLOCK], int t, int ty, int rows, int threads_x) {
    __syncthreads();
    int half = 1;
    while (half < rows) half <<= 1;
    for (half >>= 1; half >= 1; half >>= 1) {
        if (ty < half && ty + half < rows) {
#pragma unroll
            for (int i = 0; i < V; ++i) totals[i][t] = op_combine(totals[i][t], totals[i][t + half * threads_x]);
        }
        __syncthreads();
    }
}

// out[o * inner + l] = op over the n rows of lane l of outer index o.  The grid is outer * lane_chunks * chunks
// blocks (lane_chunks = ceil(inner / lanes)).  With chunks > 1: partials holds outer * chunks * inner elements and
// tickets outer * lane_chunks counters, 0 at entry (0 again at exit).
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_columns_reduce(OutT* __restrict__ out, T* __restrict__ partials, unsigned int* __restrict__ tickets,
                        const InT* __restrict__ in, long long n, long long inner, int lanes, int rows,
                        long long chunk_rows, long long lane_chunks, long long chunks) {
    __shared__ T totals[V][BLOCK];  // lane i of thread t at [i][t]: the tree's reads are conflict-free
    __shared__ bool last_block;
    const int t = threadIdx.x;
    const int threads_x = lanes / V;
    const int tx = t % threads_x, ty = t / threads_x;
    const bool used = ty < rows;
    const long long b = blockIdx.x;
    const long long group = b / chunks, c = b % chunks;
    const long long o = group / lane_chunks;
    const long long first = (group % lane_chunks) * lanes;  // the block's first lane
    const long long lo = c * chunk_rows;
    const long long hi = lo + chunk_rows < n ? lo + chunk_rows : n;
    const bool active = used && first + lane_of(tx, threads_x, 0) < inner;
    const InT* x = in + o * n * inner + first;
    fold_rows(totals, t, active, lo + ty, hi, rows,
              [&](long long r, T (&v)[V]) { load_lanes(x + r * inner, tx, threads_x, first, inner, v); });
    row_group_tree(totals, t, ty, rows, threads_x);
    if (chunks == 1) {
        if (ty == 0) {
#pragma unroll
            for (int i = 0; i < V; ++i) {
                const long long l = first + lane_of(tx, threads_x, i);
                if (l < inner) out[o * inner + l] = op_store(totals[i][t]);
            }
        }
        return;
    }
    // Several chunks: this block's values are partials, and the group's last block reduces them.
    T* part = partials + o * chunks * inner + first;  // the group's partial rows, from its first lane
    if (ty == 0) {
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const long long l = lane_of(tx, threads_x, i);
            if (first + l < inner) part[c * inner + l] = totals[i][t];
        }
        __threadfence();  // the partials are visible device-wide before the ticket says so
    }
    __syncthreads();
    if (t == 0) {
        const unsigned int ticket = atomicAdd(&tickets[group], 1u);
        last_block = ticket == (unsigned int)(chunks - 1);
        if (last_block) __threadfence();  // and the other blocks' partials are read after their tickets
    }
    __syncthreads();
    if (!last_block) return;
    // The same fold of the partial rows ty, ty + rows, ... < chunks, a lane at a time (four accumulators, not 4 V,
    // so this rarely taken path adds no registers to the kernel), each read through L2 (written in this launch).
#pragma unroll 1
    for (int i = 0; i < V; ++i) {
        const long long l = lane_of(tx, threads_x, i);
        T a0 = op_identity(), a1 = a0, a2 = a0, a3 = a0;
        if (used && first + l < inner) {
            const T* p = part + l;
            long long r = ty;
            for (; r + 3LL * rows < chunks; r += 4LL * rows) {
                const T v0 = __ldcg(p + r * inner), v1 = __ldcg(p + (r + rows) * inner),
                        v2 = __ldcg(p + (r + 2 * rows) * inner), v3 = __ldcg(p + (r + 3 * rows) * inner);
                a0 = op_combine(a0, v0);
                a1 = op_combine(a1, v1);
                a2 = op_combine(a2, v2);
                a3 = op_combine(a3, v3);
            }
            for (; r < chunks; r += rows) a0 = op_combine(a0, __ldcg(p + r * inner));
        }
        totals[i][t] = op_combine(op_combine(a0, a1), op_combine(a2, a3));
    }
    row_group_tree(totals, t, ty, rows, threads_x);
    if (ty == 0) {
#pragma unroll
        for (int i = 0; i < V; ++i) {
            const long long l = first + lane_of(tx, threads_x, i);
            if (l < inner) out[o * inner + l] = op_store(totals[i][t]);
        }
    }
    if (t == 0) tickets[group] = 0;  // ready for the next launch on this stream
}
