// histogram_start.cu -- what a histogram call does on the device before it counts, as one launch: the counters it
// adds into zeroed (the histogram, and for 1-byte data the 256 byte counts of fast.cu) and the bin edges it returns
// copied from the rule's device copy.  The ready call of pyscan.histogram (pyscan/histograms/numpy_histogram.py)
// launches it in place of a memset per counter array and a device-to-device copy: on an H100 host those driver
// calls took 2.9 us and 7.4 us of host time each (pyscan_tools/lab/histogram_call_profile.py), a launch less than
// either.  Not a pattern of the book: the bookkeeping around one.
//
// A grid-stride loop over the larger of the jobs; the edges move as 4-byte words, their last 0-3 bytes one by one
// (both arrays start at an allocation's start, so aligned).

extern "C" __global__ void histogram_start(unsigned long long* __restrict__ counts, long long count_words,
                                           unsigned long long* __restrict__ byte_counts, long long byte_count_words,
                                           const unsigned char* __restrict__ edges, unsigned char* __restrict__ out_edges,
                                           long long edge_bytes) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (long long i = first; i < count_words; i += stride) counts[i] = 0ull;
    for (long long i = first; i < byte_count_words; i += stride) byte_counts[i] = 0ull;
    const long long words = edge_bytes / 4;
    const unsigned int* __restrict__ edge_words = reinterpret_cast<const unsigned int*>(edges);
    unsigned int* __restrict__ out_words = reinterpret_cast<unsigned int*>(out_edges);
    for (long long i = first; i < words; i += stride) out_words[i] = edge_words[i];
    if (first < edge_bytes - 4 * words) out_edges[4 * words + first] = edges[4 * words + first];
}
