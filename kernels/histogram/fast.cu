// fast.cu -- a fast byte histogram (beyond the book).  PMPP ch. 9's ideas pushed further:
// privatisation and coarsening, plus several histogram copies per block and wide loads.
//
// * COPIES private copies per block, laid out bin-major: copy c of bin b is histo_s[b * COPIES + c], and
//   thread t uses copy t % COPIES.  Lane l of a warp then touches bank (b * COPIES + l % COPIES) % 32: with
//   COPIES == 32 always bank l, whatever the data; with 16, lanes l and l + 16 may meet (same bin parity),
//   so at most 2-way conflicts.  No more than 32 / COPIES lanes of a warp can hit one counter, so all-equal
//   data no longer serialises a warp's 32 updates on one address, the problem aggregation (PMPP Fig. 9.11)
//   works around.  The lanes l of the different warps of a block share a copy (their atomics are separate
//   instructions anyway).  Shared memory: bins * COPIES * 4 bytes (16 KiB for 256 bins and 16 copies).
// * Aggregation of runs (PMPP Fig. 9.11, written right) is compiled in with AGGREGATE=1: each thread keeps
//   the bin of its pending run and its length and adds the run with one (predicated) atomic when the bin
//   changes.  Measured on an H100 (2^28 bytes, 256 bins) it does not pay once the copies have removed the
//   contention: it costs a compare, a select and more registers per byte, and was slower on uniform AND on
//   all-equal data (16 copies, 1024 threads: 0.112 ms vs 0.154 ms uniform, 0.137 vs 0.169 ms all-equal), so
//   the default is AGGREGATE=0.
// * 16-byte loads: the body of the input is read as uint4 (16 bytes per thread per step, through the
//   read-only path), the grid-stride loop runs over those vectors.  The head (bytes before the first 16-byte
//   aligned address, when the array does not start aligned, e.g. a slice) and the tail (bytes after the last
//   whole vector) are fewer than 16 bytes each, counted one byte per thread.
// * The grid is sized to the device by the host (the blocks that fit on every SM at once), so each block
//   sees many vectors and the merge below is rare: each block sums its copies of each bin (reading the copies
//   in a rotated order, (c + b) % COPIES, so the threads of a warp read different banks) and adds the sum to
//   the 64-bit global counter with one atomicAdd if it is not zero.
//
// Defaults (COPIES=16, BLOCK_SIZE=1024, AGGREGATE=0) are the fastest of a sweep on an H100 over COPIES 8/16/32,
// BLOCK_SIZE 256/512/1024 and AGGREGATE 0/1 (demos/histogram.py --bench --variants): 32 copies need more
// registers (47-64 against 32), so fewer threads fit on an SM.
//
// Lengths: every byte offset is 64-bit (tid, the grid-stride index, head and tail), so any length that fits in
// memory.  Per-copy counts and a block's per-bin sums are 32-bit: the host sizes the grid (device_grid in
// pyscan/histograms/models.py) so that no block counts more than 2^30 bytes plus one grid-stride step, far below
// 2^32; the global counts are 64-bit, exact past 2^32.
#include "histogram_bins.cuh"

#ifndef COPIES
#define COPIES 16  // private copies per block (power of two, <= 32)
#endif
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 1024  // threads per block; the host launches exactly this many
#endif
#ifndef AGGREGATE
#define AGGREGATE 0
#endif

#if COPIES < 1 || COPIES > 32 || (COPIES & (COPIES - 1)) != 0
#error "COPIES must be a power of two between 1 and 32"
#endif

// One thread's counting state: the pending run (AGGREGATE) and where its copy lives.
struct Counter {
    unsigned int* copy;  // histo_s + this thread's copy index; bin b is copy[b * COPIES]
    int prev_bin;
    unsigned int run;

    __device__ __forceinline__ void count(unsigned int value, int bins) {
        const int bin = bin_of(value, bins);
#if LETTERS
        if (bin < 0) return;  // not a letter: not counted, does not end a run
#endif
#if AGGREGATE
        const bool flush = bin != prev_bin;
        if (flush) atomicAdd(&copy[prev_bin * COPIES], run);  // prev_bin starts at 0 with run 0: adds nothing
        run = flush ? 1u : run + 1u;
        prev_bin = bin;
#else
        atomicAdd(&copy[bin * COPIES], 1u);
#endif
    }

    __device__ __forceinline__ void count_word(unsigned int word, int bins) {
        count(word & 0xffu, bins);
        count((word >> 8) & 0xffu, bins);
        count((word >> 16) & 0xffu, bins);
        count(word >> 24, bins);
    }

    __device__ __forceinline__ void finish() {
#if AGGREGATE
        atomicAdd(&copy[prev_bin * COPIES], run);  // the last run (book bug 2 of Fig. 9.11)
#endif
    }
};

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
histogram_fast(const unsigned char* __restrict__ data, long long n, int bins, unsigned long long* __restrict__ histo) {
    extern __shared__ unsigned int histo_s[];  // bins * COPIES counters
    for (int i = threadIdx.x; i < bins * COPIES; i += BLOCK_SIZE) histo_s[i] = 0u;
    __syncthreads();

    Counter counter{histo_s + threadIdx.x % COPIES, 0, 0u};
    const long long tid = (long long)blockIdx.x * BLOCK_SIZE + threadIdx.x;
    const long long threads = (long long)gridDim.x * BLOCK_SIZE;

    // head: bytes before the first 16-byte aligned address; body: whole 16-byte vectors; tail: the rest.
    long long head = (long long)((16u - ((unsigned int)(size_t)data & 15u)) & 15u);
    if (head > n) head = n;
    const long long vectors = (n - head) / 16;
    const long long tail_start = head + vectors * 16;
    if (tid < head) counter.count(data[tid], bins);
    if (tid < n - tail_start) counter.count(data[tail_start + tid], bins);

    const uint4* __restrict__ body = reinterpret_cast<const uint4*>(data + head);
    for (long long v = tid; v < vectors; v += threads) {
        const uint4 q = __ldg(&body[v]);
        counter.count_word(q.x, bins);
        counter.count_word(q.y, bins);
        counter.count_word(q.z, bins);
        counter.count_word(q.w, bins);
    }
    counter.finish();
    __syncthreads();  // every count of the block is in histo_s

    for (int bin = threadIdx.x; bin < bins; bin += BLOCK_SIZE) {
        unsigned int sum = 0;
#pragma unroll
        for (int c = 0; c < COPIES; ++c) sum += histo_s[bin * COPIES + ((c + bin) & (COPIES - 1))];
        if (sum > 0) atomicAdd(&histo[bin], (unsigned long long)sum);
    }
}
