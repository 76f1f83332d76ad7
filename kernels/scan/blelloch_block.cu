// blelloch_block.cu -- the Blelloch lab report's kernel: a work-efficient (Blelloch 1990) scan of one section
// in shared memory: load, up-sweep (reduction tree), save the section's total, set the last element to the
// identity, down-sweep (distribution tree).  It is the "section kernel" of pyscan's hierarchical scheme
// (PMPP §11.6, pyscan/scans/hierarchical.py), which combines the block sums so that any length works.
//
// Section-kernel contract (pyscan/scans/hierarchical.py): block b scans [b*SECTION_SIZE, (b+1)*SECTION_SIZE) of `in`, padding past n with
// op_identity(), writes the inclusive (exclusive != 0: exclusive) scan to `out`, and, if block_sums is not
// null, the section's total to block_sums[b].  blockDim.x must be SECTION_SIZE / 2 (each thread loads two
// elements, t and t + SECTION_SIZE/2: coalesced); SECTION_SIZE is a power of two, 2 .. 2048.  `out` may alias
// `in`: a block reads its two elements into registers before it writes anything, and only its own section.
//
//   up-sweep   for d = 1, 2, ..., S/2:  s[(2t+2)d - 1] = s[(2t+1)d - 1] (+) s[(2t+2)d - 1]   (t < S/(2d))
//   clear      block_sums[b] = s[S-1]; s[S-1] = identity
//   down-sweep for d = S/2, ..., 1:     l = (2t+1)d - 1, r = (2t+2)d - 1:  s[l], s[r] = s[r], s[r] (+) s[l]
//   store      exclusive: s[i];  inclusive: s[i] (+) x[i]  (x[i] kept in a register since the load)
//
// Differences from the lab report's kernel: the identity of the operator instead of 0 (0 is not the identity
// of max or min), the padding of a partial last section with that identity, 64-bit global indices, and the
// inclusive scan derived from the exclusive one with the input kept in registers.
//
// Debug builds (traces and counted work, tests/gpu/test_scan_trace_gpu.py), both off by default:
// * TRACE=1: a trailing `T* trace`; block 0 writes the shared array after every step to
//   trace[step*SECTION_SIZE + i]: step 0 the load, 1..L the up-sweep levels (L = log2 SECTION_SIZE), L+1 the
//   cleared root, L+2..2L+1 the down-sweep levels, 2L+2 the stored result (for every i < SECTION_SIZE).
// * COUNT_WORK=1: a trailing `unsigned long long* counters` (after trace if both): counters[0] += the operator
//   applications performed (combines with identity padding included), counters[step] += the warps with at
//   least one thread that combined at trace step `step` >= 1 (so counters[1 + s] is combine step s = step - 1,
//   as in scan_section.cuh; the clear step and an exclusive store combine nothing and count 0).
// With either on, the signature has the extra parameters of SCAN_EXTRA_PARAMS (scan_section.cuh, shared with the
// other section kernels); the host passes get_kernel(arg_types=...).
#ifndef SECTION_SIZE
#define SECTION_SIZE 2048  // before the include: scan_section.cuh's default is 1024
#endif
#include "../common/scan_section.cuh"  // TRACE, COUNT_WORK, SCAN_EXTRA_PARAMS, trace_step, count_step

#if SECTION_SIZE < 2 || SECTION_SIZE > 2048 || (SECTION_SIZE & (SECTION_SIZE - 1)) != 0
#error "SECTION_SIZE must be a power of two between 2 and 2048 (blockDim.x = SECTION_SIZE / 2 <= 1024)"
#endif

#define HALF (SECTION_SIZE / 2)

// The plain declaration first: the loader reads prepare() codes off it (it does not expand SCAN_EXTRA_PARAMS).
#if !TRACE && !COUNT_WORK
extern "C" __global__ void blelloch_block_scan(OUT_TYPE* out, const IN_TYPE* in, T* block_sums, long long n, int exclusive)
#else
extern "C" __global__ void blelloch_block_scan(OUT_TYPE* out, const IN_TYPE* in, T* block_sums, long long n,
                                               int exclusive SCAN_EXTRA_PARAMS)
#endif
{
    __shared__ T s[SECTION_SIZE];
    const int t = threadIdx.x;
    const long long i0 = (long long)blockIdx.x * SECTION_SIZE + t;
    const long long i1 = i0 + HALF;
    const T x0 = i0 < n ? op_load(in[i0]) : op_identity();
    const T x1 = i1 < n ? op_load(in[i1]) : op_identity();
    s[t] = x0;
    s[t + HALF] = x1;
    int step = 0;
    TRACE_STEP(step, [&](int k) { return s[k]; });

    // Up-sweep: after level d, s[(2t+2)d - 1] holds the total of its 2d-element subtree.
    for (int d = 1; d < SECTION_SIZE; d <<= 1) {
        __syncthreads();  // level d reads what level d/2 wrote (other threads)
        const bool active = t < SECTION_SIZE / (2 * d);
        if (active) {
            const int r = (2 * t + 2) * d - 1;
            s[r] = op_combine(s[r - d], s[r]);
        }
        ++step;
        COUNT_STEP(step - 1, active ? 1 : 0);
        TRACE_STEP(step, [&](int k) { return s[k]; });
    }

    // The root holds the section's total: save it for the next level of the hierarchy, then give the root the
    // identity, the exclusive prefix of the section's first element.
    __syncthreads();
    if (t == 0) {
        if (block_sums != nullptr) block_sums[blockIdx.x] = s[SECTION_SIZE - 1];
        s[SECTION_SIZE - 1] = op_identity();
    }
    ++step;
    TRACE_STEP(step, [&](int k) { return s[k]; });

    // Down-sweep: r holds the prefix of everything before the pair's subtree; the left half gets it, the right
    // half gets it combined with the left half's total (left in l by the up-sweep).
    for (int d = SECTION_SIZE / 2; d >= 1; d >>= 1) {
        __syncthreads();
        const bool active = t < SECTION_SIZE / (2 * d);
        if (active) {
            const int r = (2 * t + 2) * d - 1;
            const int l = r - d;
            const T left = s[l];
            const T prefix = s[r];
            s[l] = prefix;
            s[r] = op_combine(prefix, left);
        }
        ++step;
        COUNT_STEP(step - 1, active ? 1 : 0);
        TRACE_STEP(step, [&](int k) { return s[k]; });
    }

    __syncthreads();  // the last level's writes (pairs 2t, 2t+1) are read by threads t and t + HALF below
    const T y0 = exclusive ? s[t] : op_combine(s[t], x0);
    const T y1 = exclusive ? s[t + HALF] : op_combine(s[t + HALF], x1);
    if (i0 < n) out[i0] = op_store(y0);
    if (i1 < n) out[i1] = op_store(y1);
    ++step;
    COUNT_STEP(step - 1, exclusive ? 0 : 2);
#if TRACE
    if (blockIdx.x == 0) {
        trace[(long long)step * SECTION_SIZE + t] = y0;
        trace[(long long)step * SECTION_SIZE + t + HALF] = y1;
    }
#endif
}
