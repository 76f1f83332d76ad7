// numpy_histogram.cu -- np.histogram and np.bincount of any integer or float array, counts or float weights:
// PMPP ch. 9 carried to float bins and to many bins.  The bin of a value is numpy_bins.cuh's (NumPy's own
// arithmetic); the elements are read once, 16 bytes per load, by element_loads.cuh.
//
// Two kernels, chosen by the host (pyscan/histograms/numpy_plan.py, choose_strategy) by whether the bins fit in
// shared memory:
//
// * numpy_histogram_shared -- privatization (PMPP §9.4, Fig. 9.10) with coarsening (§9.5): the grid is sized
//   to the device, each block counts its share of the input into COPIES private copies of the histogram in
//   shared memory (thread t into copy t % COPIES, laid out bin-major as in fast.cu, so that no more than
//   32 / COPIES lanes of a warp meet on one counter), then adds each bin's sum over its copies to the global
//   histogram with one atomic, if it is not zero (the merge).  The host gives small histograms up to 16 copies
//   and large ones fewer, down to one copy of up to 12,288 counters (48 KB).
// * numpy_histogram_global -- beyond shared memory (up to 2^31 - 1 bins): every value is an atomic on the global
//   histogram (PMPP §9.3, Fig. 9.8), and the lanes of a warp that hit the same bin in the same step are added
//   as one atomic (__match_any_sync: the aggregation of §9.6, across a warp instead of along a thread), so that
//   data all in one bin costs one atomic per warp step, not 32.
//
// WEIGHTED: weights (WEIGHT_T, read one per element beside the data, at the same index) are summed in double
// (shared double copies, global double atomics); otherwise counts, 32-bit in shared memory (the host sizes
// the grid so that no block counts more than 2^30 elements) and 64-bit in the global histogram.
// WARP_AGGREGATE (counts only) turns the __match_any_sync aggregation on.
#include "numpy_bins.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 512  // threads per block; the host launches exactly this many (a multiple of 32)
#endif
#ifndef COPIES
#define COPIES 1  // private copies per block (numpy_histogram_shared; a power of two, <= 32)
#endif
#ifndef WEIGHTED
#define WEIGHTED 0
#endif
#ifndef WEIGHT_T
#define WEIGHT_T float
#endif
#ifndef WEIGHT_IS_HALF
#define WEIGHT_IS_HALF 0
#endif
#ifndef WARP_AGGREGATE
#define WARP_AGGREGATE 0
#endif

#if COPIES < 1 || COPIES > 32 || (COPIES & (COPIES - 1)) != 0
#error "COPIES must be a power of two between 1 and 32"
#endif
#if BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32"
#endif

#if WEIGHTED
typedef double SharedSum;
typedef double GlobalSum;
#else
typedef unsigned int SharedSum;
typedef unsigned long long GlobalSum;
#endif

#if WEIGHT_IS_HALF
__device__ __forceinline__ double weight_of(__half w) { return (double)__half2float(w); }
#else
__device__ __forceinline__ double weight_of(WEIGHT_T w) { return (double)w; }
#endif

// Add one (bin, amount) per lane; every lane of the warp calls it together (bin -1: nothing to add).
template <typename Sum>
__device__ __forceinline__ void add_to(Sum* __restrict__ histogram, long long stride, int bin, Sum amount) {
#if WARP_AGGREGATE && !WEIGHTED
    const unsigned int peers = __match_any_sync(0xffffffffu, bin);  // the lanes with the same bin
    if (bin >= 0 && (int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&histogram[bin * stride], (Sum)__popc(peers));
#else
    if (bin >= 0) atomicAdd(&histogram[bin * stride], amount);
#endif
}

// Count the block's share of the input into `histogram` (a private copy, or the global histogram).
template <typename Sum>
__device__ __forceinline__ void count_elements(const VALUE_T* __restrict__ data, const WEIGHT_T* __restrict__ weights,
                                               long long n, const BinRule& rule, Sum* __restrict__ histogram,
                                               long long stride) {
#if WEIGHTED
    // one element per thread per step: the weights need not share the data's alignment
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long warp_first = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31);
    for (long long i0 = warp_first; i0 < n; i0 += threads) {
        const long long i = i0 + (threadIdx.x & 31);
        const bool valid = i < n;
        const int bin = valid ? rule.bin_of(key_of(data[i])) : -1;
        add_to<Sum>(histogram, stride, bin, valid ? (Sum)weight_of(weights[i]) : (Sum)0);
    }
#else
    (void)weights;
    auto count = [&](bool valid, KEY_T key) { add_to<Sum>(histogram, stride, valid ? rule.bin_of(key) : -1, (Sum)1); };
    visit_keys(data, n, count);
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
numpy_histogram_shared(const VALUE_T* __restrict__ data, const WEIGHT_T* __restrict__ weights, long long n, int bins,
                       KEY_T lo, KEY_T hi, EDGE_T first_edge, DIV_T norm_denom, DIV_T bins_as_div,
                       const EDGE_T* __restrict__ edges, GlobalSum* __restrict__ histogram) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    SharedSum* private_copies = reinterpret_cast<SharedSum*>(shared_bytes);  // bins * COPIES counters, bin-major
    for (int i = threadIdx.x; i < bins * COPIES; i += BLOCK_SIZE) private_copies[i] = (SharedSum)0;
    __syncthreads();  // every private counter is zero before anyone adds to it

    const BinRule rule{bins, lo, hi, first_edge, norm_denom, bins_as_div, edges};
    count_elements<SharedSum>(data, weights, n, rule, private_copies + threadIdx.x % COPIES, COPIES);
    __syncthreads();  // every update of the block is in its copies

    // the merge: a bin's copies summed (read in a rotated order, so the lanes of a warp read different banks),
    // then one global atomic per nonzero bin
    for (int bin = threadIdx.x; bin < bins; bin += BLOCK_SIZE) {
        SharedSum sum = (SharedSum)0;
#pragma unroll
        for (int c = 0; c < COPIES; ++c) sum += private_copies[bin * COPIES + ((c + bin) & (COPIES - 1))];
        if (sum != (SharedSum)0) atomicAdd(&histogram[bin], (GlobalSum)sum);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
numpy_histogram_global(const VALUE_T* __restrict__ data, const WEIGHT_T* __restrict__ weights, long long n, int bins,
                       KEY_T lo, KEY_T hi, EDGE_T first_edge, DIV_T norm_denom, DIV_T bins_as_div,
                       const EDGE_T* __restrict__ edges, GlobalSum* __restrict__ histogram) {
    const BinRule rule{bins, lo, hi, first_edge, norm_denom, bins_as_div, edges};
    count_elements<GlobalSum>(data, weights, n, rule, histogram, 1);
}
