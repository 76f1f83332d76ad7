// pyscan exercise: segmented_scan
// PMPP ch. 11's exercises (and Blelloch 1990): a segmented scan.  out[i] is the op over in[j..i], where j <= i is the
// last position with flags[j] != 0 (position 0 always starts a segment).  One section of n <= SECTION_SIZE
// elements, one block of SECTION_SIZE threads.
//
// Hint: run Kogge-Stone (Fig. 11.3) on pairs (head, value) with the operator
//     (h1, v1) . (h2, v2) = (h1 | h2, h2 ? v2 : op_combine(v1, v2))
// which is associative, so the steps and barriers of Kogge-Stone carry over unchanged: keep both arrays in shared
// memory, read the left neighbour's pair into registers, __syncthreads(), then write.  Past n: value
// op_identity(), head 1.
//
// Check it:  python -m pyscan exercise check segmented_scan.cu
#include "pyscan_headers/common/operators.cuh"

#ifndef SECTION_SIZE
#define SECTION_SIZE 1024
#endif
static_assert(SECTION_SIZE >= 1 && SECTION_SIZE <= 1024, "segmented: one thread per element, at most 1024");

extern "C" __global__ void __launch_bounds__(SECTION_SIZE)
segmented_scan(T* out, const T* in, const int* flags, long long n) {
    __shared__ T value[SECTION_SIZE];
    __shared__ int head[SECTION_SIZE];
    const int k = threadIdx.x;
    // TODO 1: load value[k] and head[k] (flags[k] != 0), the identity and 1 past n.

    for (int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        // TODO 2: one step on (head, value) pairs.
    }
    // TODO 3: store out[k] for k < n.
}
