// histogram_finish.cu -- the last steps of np.histogram on the device, for results that stay there.
//
// * histogram_density: density=True, NumPy's n / db / n.sum() with db = the bin widths in float64 (the host's
//   np.diff of the edges).  One block: it sums the histogram (a tree in shared memory, PMPP §10.3), then
//   divides.  Integer counts are summed exactly, so the result is NumPy's to the bit.
// * histogram_convert: the double sums of weights to the weights' dtype (OUT_T), as NumPy's astype.
#include <cuda_fp16.h>

#ifndef SUM_T
#define SUM_T unsigned long long  // the histogram's type: unsigned long long counts or double sums
#endif
#ifndef OUT_T
#define OUT_T float
#endif
#ifndef OUT_IS_HALF
#define OUT_IS_HALF 0
#endif
#define FINISH_BLOCK 1024

extern "C" __global__ void __launch_bounds__(FINISH_BLOCK)
histogram_density(const SUM_T* __restrict__ histogram, const double* __restrict__ widths, int bins,
                  double* __restrict__ density) {
    __shared__ SUM_T partial[FINISH_BLOCK];
    SUM_T sum = (SUM_T)0;
    for (int i = threadIdx.x; i < bins; i += FINISH_BLOCK) sum += histogram[i];
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = FINISH_BLOCK / 2; stride > 0; stride >>= 1) {
        if ((int)threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
        __syncthreads();
    }
    const double total = (double)partial[0];
    for (int i = threadIdx.x; i < bins; i += FINISH_BLOCK) {
        density[i] = __ddiv_rn(__ddiv_rn((double)histogram[i], widths[i]), total);
    }
}

extern "C" __global__ void histogram_convert(const double* __restrict__ sums, OUT_T* __restrict__ out, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
#if OUT_IS_HALF
        out[i] = __double2half(sums[i]);
#else
        out[i] = (OUT_T)sums[i];
#endif
    }
}
