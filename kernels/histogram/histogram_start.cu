// histogram_start.cu -- what a histogram call does on the device before it counts, as one launch: the counters it
// adds into zeroed (the histogram, and for 1-byte data the 256 byte counts of fast.cu) and the bin edges it returns
// copied from the rule's device copy.  The ready call of pyscan.histogram (pyscan/histograms/numpy_histogram.py)
// launches it past 12,288 bins (fewer count in one launch: one_launch.cuh) in place of a memset per counter array
// and a device-to-device copy: on an H100 host those driver calls took 2.9 us and 7.4 us of host time each
// (pyscan_tools/lab/histogram_call_profile.py), a launch less than either.  Not a pattern of the book: the
// bookkeeping around one.
//
// A grid-stride loop over the larger of the jobs; the edges move as one_launch.cuh's copy_bytes moves them.
#include "one_launch.cuh"

extern "C" __global__ void histogram_start(unsigned long long* __restrict__ counts, long long count_words,
                                           unsigned long long* __restrict__ byte_counts, long long byte_count_words,
                                           const unsigned char* __restrict__ edges, unsigned char* __restrict__ out_edges,
                                           long long edge_bytes) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = first; i < count_words; i += stride) counts[i] = 0ull;
    for (long long i = first; i < byte_count_words; i += stride) byte_counts[i] = 0ull;
    copy_bytes(edges, out_edges, edge_bytes);
}
