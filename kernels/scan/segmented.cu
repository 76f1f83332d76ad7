// segmented.cu -- a segmented scan (PMPP ch. 11's exercises; Blelloch 1990, "segmented scans"): an inclusive scan
// that starts afresh at every element whose flag is set, of one section of n <= SECTION_SIZE elements in one block.
//
// It is Kogge-Stone (Fig. 11.3) on (flag, value) pairs with the operator
//     (f1, v1) . (f2, v2) = (f1 | f2, f2 ? v2 : v1 (+) v2)
// which is associative, so any scan algorithm works; a set flag stops what comes from its left.  After the step
// with stride s, v[k] is the op over the inputs of k's segment among the 2s ending at k, and f[k] says whether a
// segment head lies among them.  As in kogge_stone.cu a register and a second barrier keep each step's reads
// before its writes (PMPP §11.2).  Element 0 starts a segment whatever its flag.
//
// Launch: grid (1, 1, 1), block (SECTION_SIZE, 1, 1); flags holds n ints (non-zero: a segment starts here).
#include "../common/operators.cuh"

#ifndef SECTION_SIZE
#define SECTION_SIZE 1024
#endif
static_assert(SECTION_SIZE >= 1 && SECTION_SIZE <= 1024, "segmented: one thread per element, at most 1024");

extern "C" __global__ void __launch_bounds__(SECTION_SIZE)
segmented_scan(OUT_TYPE* out, const IN_TYPE* in, const int* flags, long long n) {
    __shared__ T value[SECTION_SIZE];
    __shared__ int head[SECTION_SIZE];
    const int k = threadIdx.x;
    value[k] = k < n ? op_load(in[k]) : op_identity();
    head[k] = k < n ? (flags[k] != 0) : 1;  // padding starts segments of its own: it never reaches a real element
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2) {
        __syncthreads();  // the previous step's writes are visible
        T left_value = op_identity();
        int left_head = 0;
        if (k >= stride) {
            left_value = value[k - stride];
            left_head = head[k - stride];
        }
        __syncthreads();  // every read of this step before any write (no write-after-read race)
        if (k >= stride) {
            if (!head[k]) value[k] = op_combine(left_value, value[k]);
            head[k] |= left_head;
        }
    }
    if (k < n) out[k] = op_store(value[k]);
}
