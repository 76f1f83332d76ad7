// pyscan exercise: aggregated_histogram
// checker must say: right on integers
// known-wrong: Fig. 9.11's second bug: the last run of each thread is never flushed
// aggregated.cu -- PMPP Fig. 9.11: privatisation plus aggregation of runs of identical updates.
//
// Data with long stretches of one value (the dark sky of an image, the same letter over and over) makes
// the threads of a block hammer one shared counter.  Each thread therefore remembers the bin of its last
// update (prev_bin) and how many updates of it are still pending (accumulator); only when the bin changes
// does it add the whole run with one atomic.  On all-equal data a thread does one atomic in all.  The cost is
// a compare per element and more registers; on data without runs it is a little slower than privatized.
//
// The loop is the book's grid-stride loop (interleaved partitioning, coalesced): a thread's consecutive
// elements are T = blockDim.x * gridDim.x bytes apart, and a "run" is a run in that subsequence.  The host
// launches a grid sized to the device, so each thread sees many elements.  Bytes that are not counted (not
// letters, with LETTERS) are skipped and do not end a run, as in the book.
//
// BOOK BUGS, fixed here.  The listing of Fig. 9.11 (3rd ed.) is wrong in three places:
//  1. when the bin changes it adds the accumulator to the *current* bin (histo_s[alphabet_position/4])
//     instead of the bin the run belongs to, the previous one: below it goes to histo_s[prev_bin];
//  2. it never flushes the last run of a thread after the loop, so those counts are lost: below, the
//     `if (accumulator > 0)` after the loop;
//  3. its commit adds histo_s into histo_s itself (atomicAdd(&(histo_s[binIdx]), histo_s[binIdx])) instead
//     of into the global histogram: below it goes to histo[bin].
// (It also tests `accumulator >= 0`, always true for an unsigned int; below, the first "flush" of a thread
// is skipped because prev_bin starts at -1.)
//
// Per-block counts are 32-bit: the host sizes the grid so a block counts fewer than 2^31 elements.  The
// global counters are 64-bit (unsigned long long atomicAdd).
#include "../../../kernels/histogram/histogram_bins.cuh"

#ifndef MAX_BINS
#define MAX_BINS 256
#endif

extern "C" __global__ void histogram_aggregated(const unsigned char* __restrict__ data, long long n, int bins,
                                                unsigned long long* __restrict__ histo) {
    __shared__ unsigned int histo_s[MAX_BINS];
    for (int bin = threadIdx.x; bin < bins; bin += blockDim.x) histo_s[bin] = 0u;
    __syncthreads();

    int prev_bin = -1;             // no run yet
    unsigned int accumulator = 0;  // length of the pending run of prev_bin
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int bin = bin_of(data[i], bins);
        if (bin < 0) continue;  // not counted; does not end the run
        if (bin != prev_bin) {
            if (accumulator > 0) atomicAdd(&histo_s[prev_bin], accumulator);  // book bug 1: the run's bin
            prev_bin = bin;
            accumulator = 1;
        } else {
            ++accumulator;
        }
    }
    __syncthreads();

    for (int bin = threadIdx.x; bin < bins; bin += blockDim.x) {
        const unsigned int count = histo_s[bin];
        if (count > 0) atomicAdd(&histo[bin], (unsigned long long)count);  // book bug 3: into the global histo
    }
}
