// add_block_sums.cu -- PMPP §11.6, Fig. 11.10: the third kernel of the hierarchical scan.
//
// After kernel 1 scanned every section locally and the section totals were scanned (scanned[b] = op over
// sections 0..b), section b > 0 still misses the op over everything before it: scanned[b - 1].  Block j of this
// kernel handles section j + 1 (section 0 is already right, so no block is launched for it) and combines
// scanned[j] into each of its elements.  Right for inclusive and exclusive section scans alike.
//
// The book launches one thread per element with SECTION_SIZE threads per block; here a block of any size strides
// over its section, so the section size (up to 4096 for coarsened.cu) need not match the thread count.
#include "../common/operators.cuh"

extern "C" __global__ void add_block_sums(T* out, const T* scanned, long long n, long long section_size) {
    const long long section = (long long)blockIdx.x + 1;
    const T before = scanned[section - 1];  // every thread reads the same word: one broadcast transaction
    const long long begin = section * section_size;
    const long long end = min(begin + section_size, n);
    for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) out[i] = op_combine(before, out[i]);
}
