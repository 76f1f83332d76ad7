// pyscan exercise: privatized_histogram
// PMPP §9.4, Fig. 9.10: privatization.  Each block counts into its own copy of the histogram in shared memory,
// then adds that copy to the global histogram once.
//
// `bins` (1 .. MAX_BINS) is a run-time argument; bin_of(data[i], bins) (pyscan_headers/histogram/histogram_bins.cuh)
// is the bin of a byte (-1: not counted, for the letter histogram).  The checker launches one thread per byte
// (grid = ceil(n / 256), block 256) and other grids too: use the book's grid-stride loop.
//   1. zero histo_s (every bin: there may be more bins than threads), barrier;
//   2. count: atomicAdd(&histo_s[bin], 1u) for each of this thread's bytes, barrier;
//   3. commit: atomicAdd(&histo[bin], (unsigned long long)histo_s[bin]) for every bin (skip zeros if you like).
//
// Check it:  python -m pyscan exercise check privatized_histogram.cu
#include "pyscan_headers/histogram/histogram_bins.cuh"

#ifndef MAX_BINS
#define MAX_BINS 256
#endif

extern "C" __global__ void histogram_privatized(const unsigned char* __restrict__ data, long long n, int bins,
                                                unsigned long long* __restrict__ histo) {
    __shared__ unsigned int histo_s[MAX_BINS];
    // TODO 1: zero the private histogram.

    // TODO 2: count this thread's bytes into histo_s.

    // TODO 3: commit histo_s to histo.
}
