// single_pass.cu -- PMPP §11.7 "Single-pass scan for memory access efficiency" (stream-based / domino scan):
// one kernel.  Every block scans its section in shared memory (the Brent-Kung tree of PMPP Fig. 11.7), then
// waits for the running total of all earlier sections from its predecessor, adds its own section's total,
// passes the new running total on to its successor (the "domino"), and adds the received total to its
// section.  Global memory is read once and written once; the price is the serial chain of hand-offs.
//
// Hand-off, as in the book: scan_value[b] = total of sections 0..b-1, flags[b] != 0 once it is there.
//   writer (block b-1, thread 0): scan_value[b] = v;  __threadfence();  flags[b] = 1
//   reader (block b,   thread 0): spin until flags[b] != 0;  __threadfence();  read scan_value[b]
// The writer's fence orders the value before the flag; the reader's fence orders its read of the value after
// its read of the flag (the book omits this one; without it the value may be read before the flag on a
// weakly ordered memory).  Both are volatile accesses, so they go to the L2 cache that all SMs share
// instead of a stale L1 line.
//
// Deadlock freedom (PMPP §11.7, "dynamic block index assignment"): blocks are NOT guaranteed to be scheduled
// in blockIdx order, and a block spinning on a predecessor that is not resident could wait forever once the
// spinning blocks fill the GPU.  So the section a block scans is not blockIdx.x but the order in which blocks
// started: thread 0 takes bid = atomicAdd(block_counter, 1).  Block bid only waits for block bid-1, which
// took its index earlier, so it is running or done and will publish.
//
// The host zeroes block_counter and flags before every launch (one memset of one scratch buffer).
//
// SECTION_SIZE = 2 * blockDim.x elements per block; each thread loads two (t and t + blockDim: coalesced).
#include "../common/operators.cuh"

#ifndef SECTION_SIZE
#define SECTION_SIZE 2048
#endif

#if SECTION_SIZE < 2 || SECTION_SIZE > 2048 || (SECTION_SIZE & (SECTION_SIZE - 1)) != 0
#error "SECTION_SIZE must be a power of two between 2 and 2048 (blockDim.x = SECTION_SIZE / 2)"
#endif

#define HALF (SECTION_SIZE / 2)

// scratch: block_counter[0] (the dynamic block index), flags[0 .. blocks] (zeroed by the host), and
// scan_value[0 .. blocks] (scan_value[b] is only read after flags[b] is set, so it needs no zeroing).
extern "C" __global__ void single_pass_scan(OUT_TYPE* __restrict__ out, const IN_TYPE* __restrict__ in, long long n, int exclusive,
                                            unsigned int* block_counter, unsigned int* flags, T* scan_value) {
    __shared__ T s[SECTION_SIZE];
    __shared__ unsigned int shared_bid;
    __shared__ T shared_prev;
    const int t = threadIdx.x;
    if (t == 0) shared_bid = atomicAdd(block_counter, 1u);
    __syncthreads();
    const unsigned int bid = shared_bid;

    const long long i0 = (long long)bid * SECTION_SIZE + t;
    const long long i1 = i0 + HALF;
    s[t] = i0 < n ? op_load(in[i0]) : op_identity();
    s[t + HALF] = i1 < n ? op_load(in[i1]) : op_identity();

    // Brent-Kung (PMPP Fig. 11.7): reduction tree ...
    for (unsigned int stride = 1; stride <= HALF; stride *= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * 2 * stride - 1;
        if (index < SECTION_SIZE) s[index] = op_combine(s[index - stride], s[index]);
    }
    // ... then the reverse tree distributes the partial sums.
    for (unsigned int stride = SECTION_SIZE / 4; stride > 0; stride /= 2) {
        __syncthreads();
        const unsigned int index = (t + 1) * stride * 2 - 1;
        if (index + stride < SECTION_SIZE) s[index + stride] = op_combine(s[index], s[index + stride]);
    }
    __syncthreads();

    // The domino: wait for the total of the sections before this one, pass on the total including this one.
    if (t == 0) {
        T prev = op_identity();
        if (bid > 0) {
            while (*(volatile unsigned int*)&flags[bid] == 0) {
            }
            __threadfence();
            prev = *(volatile T*)&scan_value[bid];
        }
        *(volatile T*)&scan_value[bid + 1] = op_combine(prev, s[SECTION_SIZE - 1]);
        __threadfence();
        *(volatile unsigned int*)&flags[bid + 1] = 1u;
        shared_prev = prev;
    }
    __syncthreads();

    const T prev = shared_prev;
    if (i0 < n) out[i0] = op_store(op_combine(prev, exclusive ? (t > 0 ? s[t - 1] : op_identity()) : s[t]));
    if (i1 < n) out[i1] = op_store(op_combine(prev, exclusive ? s[t + HALF - 1] : s[t + HALF]));
}
