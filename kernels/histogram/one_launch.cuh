// one_launch.cuh -- a histogram call's bookkeeping inside its counting launch: the bin edges it returns copied, and
// counters that need no zeroing launch before the count.  Not a pattern of the book: what lets pyscan.histogram's
// commonest call (pyscan/histograms/numpy_histogram.py, ReadyHistogram) be one launch where it was three, on a host
// where each launch costs several µs (docs/histogram.md, "The commonest call, made whole").
//
// * copy_bytes: a grid-stride copy of `bytes` bytes, 4-byte words then the last 0-3 bytes one by one (both arrays
//   start at an allocation's start, so aligned).
// * The last block (the pattern of CUDA's threadFenceReduction sample, as kernels/reduction/fast.cu): the blocks
//   add into counters that are zero between launches (a buffer the host keeps per stream); each block, once its
//   adds are done, takes a ticket, and the block that takes the last one reads every counter, writes the result
//   from them and puts them and the ticket back to zero for the next launch on the stream.
#pragma once

__device__ __forceinline__ void copy_bytes(const unsigned char* __restrict__ from, unsigned char* __restrict__ to,
                                           long long bytes) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long words = bytes / 4;
    const unsigned int* __restrict__ from_words = reinterpret_cast<const unsigned int*>(from);
    unsigned int* __restrict__ to_words = reinterpret_cast<unsigned int*>(to);
    for (long long i = first; i < words; i += stride) to_words[i] = from_words[i];
    if (first < bytes - 4 * words) to[4 * words + first] = from[4 * words + first];
}

// Whether this block took the last ticket: every block's adds to the counters are then visible to it.  Called by
// every thread of the block after its last add.  (The flag is broadcast by __syncthreads_or, not a __shared__
// variable: a kernel may use all 48 KB of dynamic shared memory.)
__device__ __forceinline__ bool took_last_ticket(unsigned int* __restrict__ ticket) {
    __syncthreads();  // the block's adds are done
    bool last = false;
    if (threadIdx.x == 0) {
        __threadfence();  // and visible device-wide before the ticket says so
        last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (last) __threadfence();  // the other blocks' adds are read after their tickets
    }
    return __syncthreads_or(last);
}

// The last block: counter i read into the result (`take(i, value)`, the value read from L2, where the adds are) and
// put back to zero, for i < count; the ticket put back to zero.  Unrolled, so that a thread's reads are in flight
// together.
template <typename Take>
__device__ __forceinline__ void take_counters(unsigned long long* __restrict__ counters, long long count,
                                              unsigned int* __restrict__ ticket, Take& take) {
#pragma unroll 4
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
        take(i, __ldcg(&counters[i]));
        counters[i] = 0ull;
    }
    if (threadIdx.x == 0) *ticket = 0u;
}
