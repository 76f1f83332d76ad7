// pyscan exercise: hierarchical_scan
// PMPP §11.6, Figs. 11.9-11.10: the hierarchical scan of any length.  Three parts, two of them here:
//
//   kernel 1  kogge_stone_scan: block b scans its section [b * SECTION_SIZE, (b + 1) * SECTION_SIZE) and writes the
//             section's total to block_sums[b] (Fig. 11.9's S array) when block_sums is not null
//   step 2    the block sums are scanned -- by the host code, hierarchical_scan_driver.py, calling itself
//   kernel 3  add_block_sums: every element of section b > 0 gets op_combine(scanned[b - 1], partial[i]), stored
//             into out[i] with op_store
//
// Helpers (pyscan_headers/common/scan_section.cuh): section_base(), load_element(...), op_combine(a, b),
// op_identity(), op_store(v), store_block_sum(block_sums, last_scanned, last_input, exclusive).  TRACE_STEP(...):
// leave them.
//
// Check it:  python -m pyscan exercise check hierarchical_scan.cu   (it runs hierarchical_scan_driver.py beside it)
#include "pyscan_headers/common/scan_section.cuh"

#ifndef THREADS
#define THREADS SECTION_SIZE
#endif
static_assert(THREADS == SECTION_SIZE && THREADS <= 1024, "one thread per element, at most 1024");

// Kernel 1: a Kogge-Stone section scan (your kogge_stone exercise will do), plus the section total.
extern "C" __global__ void __launch_bounds__(THREADS)
kogge_stone_scan(T* out, const T* in, T* block_sums, long long n, int exclusive SCAN_EXTRA_PARAMS) {
    __shared__ T XY[SECTION_SIZE];
    const int k = threadIdx.x;
    const long long base = section_base();
    const T last_in = section_last_input(in, base, n, exclusive);

    // TODO 1: load, as in the kogge_stone exercise.

    TRACE_STEP(0, [&](int i) { return XY[i]; });
    int step = 0;
    for (int stride = 1; stride < SECTION_SIZE; stride *= 2, ++step) {
        // TODO 2: one Kogge-Stone step.

        TRACE_STEP(step + 1, [&](int i) { return XY[i]; });
    }
    __syncthreads();
    // TODO 3: store positions below n, and the section's total:
    //   if (k == THREADS - 1) store_block_sum(block_sums, XY[SECTION_SIZE - 1], last_in, exclusive);
}

// Kernel 3 (Fig. 11.10): block j handles section j + first_section, with any number of threads.  pyscan's own
// kernel (kernels/scan/add_block_sums.cu) reads the local scans from `partial` and stores the results to `out`, so
// that a result narrower than T (float16, int8) is rounded once, here; this exercise's driver passes partial == out
// and first_section = 1 (section 0 needs nothing), the book's kernel.
extern "C" __global__ void add_block_sums(OUT_TYPE* out, const T* partial, const T* scanned, long long n,
                                          long long section_size, long long first_section) {
    // TODO 4: section = blockIdx.x + first_section; before = scanned[section - 1] (op_identity() for section 0);
    //         for every i of that section (below n): out[i] = op_store(op_combine(before, partial[i])).
}
