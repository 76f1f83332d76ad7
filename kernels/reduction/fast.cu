// fast.cu -- a reduction tuned for memory bandwidth (beyond the book; the ideas of PMPP §10.8 taken further).
//
// A reduction reads every element once and does almost no arithmetic, so its speed limit is DRAM bandwidth.
// The book's kernels fall short of it because each block reduces a small fixed segment (so the grid is huge
// and every block pays a barrier-heavy tree), loads are 4 bytes wide, and results meet through atomics.  Here:
//
// * A grid-stride loop over a grid sized to the device (the host launches a few blocks per SM, as many as fit at
//   once), so every thread streams through many elements and the tree is paid once per thread block, not once
//   per 2*blockDim.x elements.  A smaller array gets one 16-byte vector per thread, spread over as many SMs as
//   that makes (below a few MB the time is latency, and every SM's load units take part), from the build with
//   FAST_UNROLL=1, whose shorter code starts faster.
// * 16-byte vector loads (one uint4 = 4 ints/floats, 2 long longs/doubles, 16 int8/bool, 8 float16 per load) through the
//   read-only path (__ldg; FAST_LOAD=1: __ldcs, streaming, which gives up the L2 between calls).  The
//   array need not be 16-byte aligned (a GPUArray view can start anywhere): the elements before the first 16-byte
//   boundary (the head) and after the last whole vector (the tail), fewer than 2*16/sizeof(T) in all, are read
//   one by one.
// * FAST_UNROLL independent vector loads per loop iteration, each into its own set of accumulators: all the loads
//   are issued before any of their values is used, so each thread keeps FAST_UNROLL*16 bytes in flight, and the
//   combines form FAST_UNROLL*VEC independent chains instead of one.
// * Warp shuffles (__shfl_down_sync) to reduce within a warp, one shared-memory slot per warp, and one warp to
//   reduce those: two barrier-free trees and a single __syncthreads.
// * One launch (the "last block" pattern of CUDA's threadFenceReduction sample).  With one block, its result is
//   the answer.  Otherwise block b writes its result to partials[b], fences, and takes a ticket from a counter;
//   the block that takes the last ticket knows every partial is written and reduces them with the same code, as
//   one block over gridDim.x elements (what a second launch over the partials would do), then puts the counter
//   back to 0 for the next call on the stream.  The partials meet in a fixed order whatever the timing, so
//   floating-point sums are reproducible run to run on the same grid; only the ticket is an atomic.
//
// The element order differs from a sequential loop, so float sums round differently from np.sum (see the bound
// in pyscan/reductions/fast.py); integer add wraps (exact in any order); max/min are exact and propagate NaN.
#include "../common/block_reduce.cuh"  // block_reduce: the loads, accumulators and trees of a block

#ifndef FAST_UNROLL
#define FAST_UNROLL 2
#endif

// out[0] = the op over in[0, n).  With gridDim.x > 1: partials holds gridDim.x elements (16-byte aligned) and
// *done_blocks is 0 at entry (it is 0 again at exit).
// out[0] is stored with op_store (the result's dtype); the partials are T.
extern "C" __global__ void __launch_bounds__(1024) reduce_fast(OUT_TYPE* __restrict__ out, T* __restrict__ partials,
                                                                unsigned int* __restrict__ done_blocks,
                                                                const IN_TYPE* __restrict__ in, long long n) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    T value = block_reduce<Load::INPUT, IN_TYPE, FAST_UNROLL>(in, n, threads, gid);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) out[0] = op_store(value);
        return;
    }
    __shared__ bool last_block;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = value;
        __threadfence();  // the partial is visible device-wide before the ticket says so
        const unsigned int ticket = atomicAdd(done_blocks, 1u);
        last_block = ticket == gridDim.x - 1;
        if (last_block) __threadfence();  // and the other blocks' partials are read after their tickets
    }
    __syncthreads();
    if (!last_block) return;
    value = block_reduce<Load::COHERENT, T, FAST_UNROLL>(partials, gridDim.x, blockDim.x, threadIdx.x);
    if (threadIdx.x == 0) {
        out[0] = op_store(value);
        *done_blocks = 0;  // ready for the next launch on this stream
    }
}
