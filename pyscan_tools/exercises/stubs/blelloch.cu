// pyscan exercise: blelloch
// Hands-On GPU Programming with Python and CUDA, ch. 4 (work-efficient parallel prefix, Blelloch 1990): the up-sweep
// and the down-sweep over a working array of N = 2^k elements, ONE KERNEL LAUNCH PER TREE LEVEL -- the host loop in
// blelloch_driver.py is the barrier between levels (launches on one stream run one after the other).
//
//   load        work[i] = x[i] for i < n, op_identity() for n <= i < N
//   up-sweep    for s = 1, 2, ..., N/2: thread k (< N / 2s) owns r = k*2s + 2s - 1: work[r] = op(work[r - s], work[r])
//   clear last  work[N - 1] = op_identity()
//   down-sweep  for s = N/2, ..., 1: thread k owns l = r - s and r: t = work[l]; work[l] = work[r];
//               work[r] = op_combine(work[r], t)
//   store       out[i] = work[i] (exclusive) or op_combine(work[i], x[i]) (inclusive), i < n
//
// The book's down_ker uses a `tid` it never declares, copies the array to x_old every level (not needed: the pairs
// of two threads are disjoint) and needs N >= 32; you need none of that.  Threads past the last pair do nothing.
//
// Check it:  python -m pyscan exercise check blelloch.cu   (it runs blelloch_driver.py beside it)
#include "pyscan_headers/common/operators.cuh"

extern "C" __global__ void blelloch_load(T* __restrict__ work, const T* __restrict__ x, long long n, long long N) {
    // TODO 1
}

extern "C" __global__ void blelloch_up_sweep(T* work, long long N, long long s) {
    // TODO 2: one level; thread k = blockIdx.x * blockDim.x + threadIdx.x, active if k < N / (2 * s).
}

extern "C" __global__ void blelloch_clear_last(T* work, long long N) {
    // TODO 3
}

extern "C" __global__ void blelloch_down_sweep(T* work, long long N, long long s) {
    // TODO 4: one level.
}

extern "C" __global__ void blelloch_store(T* __restrict__ out, const T* __restrict__ work, const T* __restrict__ x,
                                          long long n, int exclusive) {
    // TODO 5
}
