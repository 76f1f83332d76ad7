// pyscan exercise: aggregated_histogram
// PMPP §9.5, Fig. 9.11: privatization plus aggregation.  Each thread remembers the bin of its last update (prev_bin)
// and how many updates of it are pending (accumulator); only when the bin changes does it add the whole run to
// histo_s with one atomic.
//
// The listing of Fig. 9.11 has three bugs; avoid them: (1) a finished run belongs to prev_bin, not to the new bin;
// (2) the last run of every thread must be flushed after the loop; (3) the commit goes into the global `histo`.
// bin_of(data[i], bins) (pyscan_headers/histogram/histogram_bins.cuh) is a byte's bin (-1: not counted -- skip it;
// it does not end a run).  The checker launches a grid sized to the device, so each thread sees many bytes (the
// book's grid-stride loop), on random bytes and on long runs of one value.
//
// Check it:  python -m pyscan exercise check aggregated_histogram.cu
#include "pyscan_headers/histogram/histogram_bins.cuh"

#ifndef MAX_BINS
#define MAX_BINS 256
#endif

extern "C" __global__ void histogram_aggregated(const unsigned char* __restrict__ data, long long n, int bins,
                                                unsigned long long* __restrict__ histo) {
    __shared__ unsigned int histo_s[MAX_BINS];
    // TODO 1: zero the private histogram, barrier.

    int prev_bin = -1;             // no run yet
    unsigned int accumulator = 0;  // length of the pending run of prev_bin
    // TODO 2: the grid-stride loop with aggregation, then flush the last run, barrier.

    // TODO 3: commit histo_s to histo.
}
