// blelloch_sweeps.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4, "work-efficient parallel prefix"
// (Blelloch 1990): an up-sweep (reduction tree) and a down-sweep (distribution tree), one kernel launch per
// level of the tree.  The host loop in pyscan/scans/blelloch.py is the grid-wide barrier between levels: a
// kernel launch on one stream starts only after the previous one has finished, so level d+1 sees every write
// of level d, whatever the number of blocks.
//
// The working array `work` has N = 2^k elements (N >= 1): the input padded with the operator's identity.
//
//   load         work[i] = x[i] for i < n, op_identity() for n <= i < N
//   up-sweep     for s = 1, 2, 4, ..., N/2:   work[k*2s + 2s-1] = work[k*2s + s-1] (+) work[k*2s + 2s-1]
//   clear last   work[N-1] = op_identity()
//   down-sweep   for s = N/2, ..., 2, 1:      t = work[l]; work[l] = work[r]; work[r] = t (+) work[r]
//                                             (l = k*2s + s-1, r = k*2s + 2s-1)
//   store        out[i] = work[i] (exclusive) or work[i] (+) x[i] (inclusive), i < n
//
// Fixes of the book's version (Hands-On ch. 4, work-efficient parallel prefix):
// * The book's down_ker uses `tid`, which it never declares; here every kernel computes its own pair index k.
// * The book copies the whole array to an `x_old` buffer before each level and reads from it.  Not needed:
//   within one level, thread k reads and writes only its own pair (l, r) = (k*2s + s-1, k*2s + 2s-1), and the
//   pairs of two threads are disjoint (they lie in the disjoint intervals [k*2s, (k+1)*2s)).  No element is
//   read by one thread and written by another in the same launch, so working in place is race-free.
// * The book needs a power-of-two length of at least 32; here any length works: the host pads to the next
//   power of two with op_identity() (not with 0: 0 is not the identity of max or min), and the block size
//   does not have to divide N (threads past the last pair do nothing).
// * The scan is exclusive by nature (the down-sweep starts from the identity at the root); the inclusive
//   scan is derived in the store kernel: inclusive[i] = exclusive[i] (+) x[i].
//
// COUNT_WORK=1 (counted work, tests/gpu/test_scan_trace_gpu.py) adds two trailing parameters to the kernels that combine
// (up-sweep, down-sweep, store), `unsigned long long* counters, int step`: counters[0] += the operator applications the
// launch really performed; counters[step] += the warps with at least one thread that combined.  `step` is the
// number of the step in the model's and the trace's list (0 = load, 1..L up-sweep levels, L+1 clear,
// L+2..2L+1 down-sweep levels, 2L+2 store), so counters[1 + s] counts combine step s = step - 1.
// The trace of this algorithm (TRACE) needs no kernel support: the host copies `work` after each
// launch into a trace buffer (see blelloch.py).
#include "../common/operators.cuh"

#ifndef COUNT_WORK
#define COUNT_WORK 0
#endif

#if COUNT_WORK
#define COUNT_PARAMS , unsigned long long* counters, int step
// Called by every thread of the block (blockDim.x is a multiple of 32, no thread has returned).  `combined`:
// this thread performed `ops_per_thread` operator applications in this launch.
__device__ __forceinline__ void count_step(unsigned long long* counters, int step, bool combined, int ops_per_thread) {
    const unsigned mask = __ballot_sync(0xffffffffu, combined);
    if (mask != 0 && (threadIdx.x & 31) == (unsigned)(__ffs(mask) - 1)) {  // one leader per warp that combined
        atomicAdd(&counters[0], (unsigned long long)(__popc(mask) * ops_per_thread));
        atomicAdd(&counters[step], 1ULL);
    }
}
#define COUNT(active, ops) count_step(counters, step, (active), (ops))
#else
#define COUNT_PARAMS
#define COUNT(active, ops)
#endif

// work[i] = x[i] (i < n), identity (n <= i < N).
// x is read with op_load: the work array holds the compute type T whatever x's dtype.
extern "C" __global__ void blelloch_load(T* __restrict__ work, const IN_TYPE* __restrict__ x, long long n,
                                         long long N) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) work[i] = i < n ? op_load(x[i]) : op_identity();
}

// One level of the up-sweep at stride s: N / (2s) threads, thread k owns the pair (k*2s + s-1, k*2s + 2s-1).
extern "C" __global__ void blelloch_up_sweep(T* work, long long N, long long s COUNT_PARAMS) {
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = k < N / (2 * s);
    if (active) {
        const long long r = k * 2 * s + 2 * s - 1;
        work[r] = op_combine(work[r - s], work[r]);
    }
    COUNT(active, 1);
}

// The root gets the identity: it becomes the exclusive prefix of the whole array (nothing comes before it).
extern "C" __global__ void blelloch_clear_last(T* work, long long N) {
    if (threadIdx.x == 0 && blockIdx.x == 0) work[N - 1] = op_identity();
}

// One level of the down-sweep at stride s: the right child r holds the prefix of everything before the pair's
// subtree; the left child gets that prefix, the right child gets the prefix combined with the left subtree's
// total (which the up-sweep left in l).  The prefix comes first in op_combine, so the order of operands is the
// sequential one (it matters for no operator here, but it would for a non-commutative one).
extern "C" __global__ void blelloch_down_sweep(T* work, long long N, long long s COUNT_PARAMS) {
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const bool active = k < N / (2 * s);
    if (active) {
        const long long r = k * 2 * s + 2 * s - 1;
        const long long l = r - s;
        const T left = work[l];
        const T prefix = work[r];
        work[l] = prefix;
        work[r] = op_combine(prefix, left);
    }
    COUNT(active, 1);
}

// out[i] = exclusive[i], or exclusive[i] (+) x[i] for the inclusive scan.
// (out is stored with op_store, x read again with op_load.)
extern "C" __global__ void blelloch_store(OUT_TYPE* __restrict__ out, const T* __restrict__ work,
                                          const IN_TYPE* __restrict__ x, long long n, int exclusive COUNT_PARAMS) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = op_store(exclusive ? work[i] : op_combine(work[i], op_load(x[i])));
    COUNT(i < n && !exclusive, 1);
}
