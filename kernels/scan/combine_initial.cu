// combine_initial.cu -- y[k] = initial (+) y[k], in place: the initial value of pyscan.scan(x, initial=v) (CUB's
// init) and of pyscan.reduce(x, initial=v) (NumPy's ufunc.reduce(initial=)).
//
// A scan started from v is y[k] = v (+) x[0] (+) ... (+) x[k].  The operator is associative (PMPP §11.1), so that
// is v (+) (x[0] (+) ... (+) x[k]): the scan's own result with v combined in front.  One elementwise pass after any
// algorithm gives it, the same for every algorithm (none of their kernels changes), at the cost of one more read
// and write of the result.  An exclusive scan's first output along the scanned axis is v itself (not v (+) identity,
// which for add would turn v = -0.0 into +0.0): the outputs k with (k / inner) % n == 0, n the scanned length and
// inner the elements after the axis (1 for a 1-D scan; `exclusive` 0: none).  A reduction's result (one element, or
// one per output of an axis reduction) is the last element of an inclusive scan: the same pass, not exclusive.
//
// y holds the result dtype (OUT_TYPE = VALUE_TYPE); it is widened to the compute type T (exact), combined with
// `initial` (already T: converted to the value dtype on the host, then widened) and stored with op_store.  For the
// named operators on float16 / bfloat16 that is a second rounding (the scan's result was rounded once already);
// every other result dtype is T, or an integer type the store cuts exactly, or a custom operator's, whose every
// combine is converted to the value dtype anyway.
#include "../common/operators.cuh"

extern "C" __global__ void combine_initial(OUT_TYPE* __restrict__ y, long long total, long long n, long long inner,
                                           T initial, int exclusive) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < total; k += stride) {
        const bool first = exclusive && (k / inner) % n == 0;
        y[k] = op_store(first ? initial : op_combine(initial, convert<T>(y[k])));
    }
}
