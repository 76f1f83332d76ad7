// axis_columns.cu -- reduce a C-contiguous array along any axis but the last, seen as (outer, n, inner): for each
// outer index, the op over n rows of `inner` lanes, lane by lane (PMPP ch. 10's reduction tree, over the rows of a
// block, once per lane).  The output is (outer, inner).
//
// Why this shape.  Threads on consecutive lanes read consecutive addresses (coalesced): a block is `lanes` lanes x
// `rows` row groups (lanes = inner when inner < 32, a warp then holds 32 / inner whole rows; else 32 .. 256 lanes,
// wider when n is short).  Blocks are (group, chunk): group = (outer index, lane chunk), chunk = a run of
// `chunk_rows` rows; the host cuts n into as many chunks as it takes to fill the GPU (2^20 x 16 along axis 0 has a
// single group of 16 lanes: it needs many row chunks).  A thread folds its lane's rows of the chunk
// (ty, ty + rows, ...) into four independent accumulators, then a shared-memory tree over ty (PMPP §10.4's
// convergent tree) gives the chunk's value of each lane.  One chunk per group: that is the result.  Several: they
// are partials, an (outer, chunks, inner) array that the host reduces again with this same kernel (a second pass,
// as in PMPP §10.7 without its atomics).  No atomics: every output is a fixed tree of the inputs, so float sums are
// reproducible run to run and bounded (pyscan/reductions/axis.py, error_depth).
#include "../common/partials.cuh"  // load_element: x or an earlier pass's partials; op_store keeps partials as T

using InT = IN_TYPE;
using OutT = OUT_TYPE;
constexpr int BLOCK = 256;

// out[(o * chunks + c) * inner + l] = op over rows [c * chunk_rows, min(n, (c + 1) * chunk_rows)) of lane l of outer
// index o.  The grid is outer * lane_chunks * chunks blocks (lane_chunks = ceil(inner / lanes)).
extern "C" __global__ void __launch_bounds__(BLOCK)
    axis_columns_reduce(OutT* __restrict__ out, const InT* __restrict__ in, long long n, long long inner, int lanes,
                        int rows, long long chunk_rows, long long lane_chunks, long long chunks) {
    __shared__ T totals[BLOCK];
    const int t = threadIdx.x;
    const int tx = t % lanes, ty = t / lanes;
    const bool used = ty < rows;
    const long long b = blockIdx.x;
    const long long group = b / chunks, c = b % chunks;
    const long long o = group / lane_chunks;
    const long long l = (group % lane_chunks) * lanes + tx;
    const long long lo = c * chunk_rows;
    const long long hi = lo + chunk_rows < n ? lo + chunk_rows : n;
    T a0 = op_identity(), a1 = a0, a2 = a0, a3 = a0;
    if (used && l < inner) {
        const InT* x = in + o * n * inner + l;
        long long r = lo + ty;
        for (; r + 3LL * rows < hi; r += 4LL * rows) {
            const T v0 = load_element(x[r * inner]), v1 = load_element(x[(r + rows) * inner]),
                    v2 = load_element(x[(r + 2 * rows) * inner]), v3 = load_element(x[(r + 3 * rows) * inner]);
            a0 = op_combine(a0, v0);
            a1 = op_combine(a1, v1);
            a2 = op_combine(a2, v2);
            a3 = op_combine(a3, v3);
        }
        for (; r < hi; r += rows) a0 = op_combine(a0, load_element(x[r * inner]));
    }
    if (used) totals[t] = op_combine(op_combine(a0, a1), op_combine(a2, a3));
    __syncthreads();
    int half = 1;
    while (half < rows) half <<= 1;
    for (half >>= 1; half >= 1; half >>= 1) {  // the tree over ty: row group ty takes ty + half
        if (used && ty < half && ty + half < rows) totals[t] = op_combine(totals[t], totals[t + half * lanes]);
        __syncthreads();
    }
    if (ty == 0 && l < inner) out[(o * chunks + c) * inner + l] = op_store(totals[t]);
}
