// add_block_sums.cu -- PMPP §11.6, Fig. 11.10: the third kernel of the hierarchical scan.
//
// After kernel 1 scanned every section locally and the section totals were scanned (scanned[b] = op over
// sections 0..b), section b > 0 still misses the op over everything before it: scanned[b - 1].  Block j of this
// kernel handles section j + 1 (section 0 is already right, so no block is launched for it) and combines
// scanned[j] into each of its elements.  Right for inclusive and exclusive section scans alike.
//
// The book launches one thread per element with SECTION_SIZE threads per block; here a block of any size strides
// over its section, so the section size (up to 4096 for coarsened.cu) need not match the thread count.
//
// The local scans are in `partial`, of the compute type T; the result goes to `out` with op_store.  When the
// result's type is T the host passes partial == out (in place, the book's kernel) and first_section = 1.  When it
// is narrower (float16, int8, bool, ...) kernel 1 wrote its local scans to a T scratch array, so that every result
// is rounded once, here: then first_section = 0 and section 0 is stored too (combined with the identity).
#include "../common/operators.cuh"

extern "C" __global__ void add_block_sums(OUT_TYPE* out, const T* partial, const T* scanned, long long n,
                                          long long section_size, long long first_section) {
    const long long section = (long long)blockIdx.x + first_section;
    // every thread reads the same word: one broadcast transaction
    const T before = section > 0 ? scanned[section - 1] : op_identity();
    const long long begin = section * section_size;
    const long long end = min(begin + section_size, n);
    for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) out[i] = op_store(op_combine(before, partial[i]));
}
