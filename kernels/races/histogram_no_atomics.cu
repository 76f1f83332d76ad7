// histogram_no_atomics.cu -- PMPP §9.2 (Figs. 9.4 and 9.5): the parallel histogram WITHOUT atomic operations, the
// race the chapter starts from.  Kept to watch the race fail (pyscan.races, demos/races.py); the fixed kernel is
// kernels/histogram/atomic_block.cu (Fig. 9.6), the same partitioning with atomicAdd.
//
// Every thread counts a contiguous section of the input (strategy I, as in Fig. 9.6) with the sequential code's
// `histo[bin]++`.  That is a read-modify-write: load the counter, add one, store it.  When two threads update the
// same bin at the same time (Fig. 9.5: both read 7, both store 8) one update is lost.  Unlike the figure's two
// threads, here thousands of threads update 7 bins, so lost updates are the rule.  Each stored value is a value
// read earlier plus one, so a count can only come out too SMALL, never too large: 0 < racy <= right for every bin
// that has any input.
//
// The bins are PMPP Fig. 9.1's letter groups (histogram_bins.cuh with LETTERS=1, the default here) or the byte
// histogram's v * bins / 256 (LETTERS=0).  The counters are 64-bit, as in the library's kernels.
//
// Safe to run: every read is data[index] with index < n, every write is histo[bin] with 0 <= bin < bins.
#ifndef LETTERS
#define LETTERS 1  // the book's letter histogram
#endif
#include "../histogram/histogram_bins.cuh"

extern "C" __global__ void histogram_no_atomics(const unsigned char* data, long long n, int bins,
                                                unsigned long long* histo) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long threads = (long long)blockDim.x * gridDim.x;
    const long long section_size = (n - 1) / threads + 1;  // ceil(n / threads); n >= 1
    const long long start = i * section_size;
    for (long long k = 0; k < section_size; ++k) {
        const long long index = start + k;
        if (index < n) {
            const int bin = bin_of(data[index], bins);
            if (bin >= 0) histo[bin]++;  // RACE: Fig. 9.6 writes atomicAdd(&histo[bin], 1)
        }
    }
}
