// atomic_interleaved.cu -- PMPP Fig. 9.8, parallel histogram strategy II: interleaved partitioning.
//
// Thread i counts elements i, i + T, i + 2T, ... (T = all the threads of the grid, a grid-stride loop).  In
// each iteration the threads of a warp read 32 consecutive bytes, so a warp's loads are coalesced into one
// memory transaction, and any grid size covers any length.  Every element is still one global atomicAdd:
// on all-equal data every one of them hits the same counter and they serialise (privatized.cu).
//
// Changes from the book's listing: `long long` indices, a run-time number of bins (histogram_bins.cuh; the
// book's letter mapping with LETTERS=1) and 64-bit counters (unsigned long long atomicAdd).
#include "histogram_bins.cuh"

extern "C" __global__ void histogram_atomic_interleaved(const unsigned char* __restrict__ data, long long n, int bins,
                                                        unsigned long long* __restrict__ histo) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int bin = bin_of(data[i], bins);
        if (bin >= 0) atomicAdd(&histo[bin], 1ULL);
    }
}
