// min_max.cu -- the smallest and largest value of an array of any element type, and whether it holds a NaN:
// what np.histogram needs for range=None (its edges come from a.min() and a.max()) and np.bincount for its
// length (max + 1) and its check that no value is negative.
//
// One pass, one partial per block (a reduction tree in shared memory, PMPP §10.3's convergent kernel), and
// the host finishes the block partials: it needs the values on the host anyway to make NumPy's edges, and a
// grid sized to the device has only a few hundred blocks, so the copy is a few KB.  NaN is skipped by the
// comparisons (NaN < m is false) and reported in block_nan, as NumPy's a.min() would return nan.
#include "element_loads.cuh"

#ifndef MIN_MAX_BLOCK
#define MIN_MAX_BLOCK 256  // threads per block; the host launches exactly this many (a power of two)
#endif

extern "C" __global__ void __launch_bounds__(MIN_MAX_BLOCK)
min_max_partials(const VALUE_T* __restrict__ data, long long n, KEY_T lowest, KEY_T highest,
                 KEY_T* __restrict__ block_min, KEY_T* __restrict__ block_max, int* __restrict__ block_nan) {
    __shared__ KEY_T smallest[MIN_MAX_BLOCK];
    __shared__ KEY_T largest[MIN_MAX_BLOCK];
    __shared__ int any_nan;
    if (threadIdx.x == 0) any_nan = 0;

    KEY_T low = highest, high = lowest;
    bool nan = false;
    auto see = [&](bool valid, KEY_T key) {
        if (!valid) return;
        if (key != key) nan = true;  // only a float can differ from itself
        low = key < low ? key : low;
        high = key > high ? key : high;
    };
    visit_keys(data, n, see);
    smallest[threadIdx.x] = low;
    largest[threadIdx.x] = high;
    __syncthreads();
    if (nan) any_nan = 1;
    for (int stride = MIN_MAX_BLOCK / 2; stride > 0; stride >>= 1) {
        if ((int)threadIdx.x < stride) {
            const KEY_T a = smallest[threadIdx.x + stride], b = largest[threadIdx.x + stride];
            if (a < smallest[threadIdx.x]) smallest[threadIdx.x] = a;
            if (b > largest[threadIdx.x]) largest[threadIdx.x] = b;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        block_min[blockIdx.x] = smallest[0];
        block_max[blockIdx.x] = largest[0];
        block_nan[blockIdx.x] = any_nan;
    }
}
