// coarsened.cu -- privatisation with thread coarsening (PMPP 4th ed. §9.5, beyond the seed's listings).
//
// privatized.cu pays `bins` global atomics per block, and with one element per thread there are n / blockDim.x
// blocks.  Here each block takes a tile of blockDim.x * COARSE_FACTOR bytes and each thread COARSE_FACTOR of
// them, interleaved within the tile (element tile_start + k * blockDim.x + threadIdx.x in step k), so the
// reads of a warp stay coalesced (the 4th edition's interleaved coarsening, Fig. 9.14, rather than the
// contiguous one of Fig. 9.12, whose warps read scattered bytes).  The commit is paid once per tile, a
// COARSE_FACTOR-th as often; the loop has a compile-time trip count, so it is unrolled and its loads can be
// in flight together.
//
// Per-block counts are 32-bit: a block counts at most blockDim.x * COARSE_FACTOR elements.  The global
// counters are 64-bit (unsigned long long atomicAdd).
#include "histogram_bins.cuh"

#ifndef MAX_BINS
#define MAX_BINS 256
#endif
#ifndef COARSE_FACTOR
#define COARSE_FACTOR 32
#endif

extern "C" __global__ void histogram_coarsened(const unsigned char* __restrict__ data, long long n, int bins,
                                               unsigned long long* __restrict__ histo) {
    __shared__ unsigned int histo_s[MAX_BINS];
    for (int bin = threadIdx.x; bin < bins; bin += blockDim.x) histo_s[bin] = 0u;
    __syncthreads();

    const long long tile_start = (long long)blockIdx.x * blockDim.x * COARSE_FACTOR;
#pragma unroll
    for (int k = 0; k < COARSE_FACTOR; ++k) {
        const long long i = tile_start + (long long)k * blockDim.x + threadIdx.x;
        if (i < n) {
            const int bin = bin_of(data[i], bins);
            if (bin >= 0) atomicAdd(&histo_s[bin], 1u);
        }
    }
    __syncthreads();

    for (int bin = threadIdx.x; bin < bins; bin += blockDim.x) {
        const unsigned int count = histo_s[bin];
        if (count > 0) atomicAdd(&histo[bin], (unsigned long long)count);
    }
}
