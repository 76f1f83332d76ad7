// atomic_block.cu -- PMPP Fig. 9.6, parallel histogram strategy I: block (contiguous) partitioning.
//
// The input is cut into one contiguous section per thread, section_size = ceil(n / threads), and every
// element is counted with an atomicAdd on the global histogram.  Two costs the book uses this kernel to show:
//  * uncoalesced reads: in each iteration the 32 threads of a warp read 32 bytes section_size apart, so
//    every load instruction touches 32 different cache lines (strategy II, atomic_interleaved.cu, fixes it);
//  * contention: every update is a global atomic, and updates of one bin serialise in the L2 cache (on
//    all-equal data, all of them).  Privatisation (privatized.cu) fixes that.
//
// Changes from the book's listing: `long long` lengths and indices (inputs can pass 2^31 bytes), a
// run-time number of bins and the bin mapping of histogram_bins.cuh (the book's letter mapping with
// LETTERS=1), and 64-bit counters (unsigned long long atomicAdd), so counts cannot overflow.
#include "histogram_bins.cuh"

extern "C" __global__ void histogram_atomic_block(const unsigned char* __restrict__ data, long long n, int bins,
                                                  unsigned long long* __restrict__ histo) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long threads = (long long)blockDim.x * gridDim.x;
    const long long section_size = (n - 1) / threads + 1;  // ceil(n / threads); n >= 1
    const long long start = i * section_size;
    for (long long k = 0; k < section_size; ++k) {
        const long long index = start + k;
        if (index < n) {
            const int bin = bin_of(data[index], bins);
            if (bin >= 0) atomicAdd(&histo[bin], 1ULL);
        }
    }
}
