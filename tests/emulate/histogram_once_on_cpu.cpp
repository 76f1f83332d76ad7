// histogram_once_on_cpu.cpp -- one launch of kernels/histogram/numpy_histogram.cu's numpy_histogram_once (the
// private copies' count and its bookkeeping in one launch: pyscan.histogram's commonest call, and bincount's one
// pass with EXTREMES, the byte values' count with BYTE_VALUES) on the CPU (cuda_on_cpu.h), for
// tests/unit/test_histogram_emulated.py:
//     histogram_once_on_cpu N GRID SKIP OUT values.bin edges.bin out.bin BINS LO HI FIRST_EDGE NORM_DENOM BINS_AS_DIV
//                           GUESS_SCALE GUESS_LOW GUESS_HIGH EDGE_START EDGE_STEP
// values.bin: the data (VALUE_T; float16 as its bits), of which the kernel reads N from SKIP elements into an exactly
// sized heap array (SKIP 1: not aligned to a 16-byte vector), so AddressSanitizer reports any read past its end;
// edges.bin: the rule's edges (EDGE_T), which the launch also copies into an array of their size (the bin edges a
// call returns); the numbers: the rule's kernel arguments, integers in decimal and floats as C hex literals (exact).
// out.bin: the OUT uint64 values the launch writes (BINS counts; with EXTREMES, BINS + 2: the counts, then the two
// extreme words), which start at 99 (the last block writes each).  The kept counters (256 with BYTE_VALUES, BINS +
// 2 with EXTREMES, else BINS) and the ticket start at 0; exit 3 if the launch did not put them back, 5 if the copied
// edges differ.  Built with counting_build's #defines (pyscan/histograms/numpy_histogram.py, one_launch=True).
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>

#include "numpy_bins_on_cpu.h"

#include "../../kernels/histogram/numpy_histogram.cu"

int main(int argc, char** argv) {
    if (argc != 19) {
        std::fprintf(stderr, "usage: histogram_once_on_cpu N GRID SKIP OUT values.bin edges.bin out.bin and the 11 "
                             "rule numbers\n");
        return 2;
    }
    const long long n = std::atoll(argv[1]), skip = std::atoll(argv[3]), outputs = std::atoll(argv[4]);
    const int grid = std::atoi(argv[2]), bins = number<int>(argv[8]);
    long long count = 0, edge_count = 0;
    const std::unique_ptr<VALUE_T[]> values = emu_read_file<VALUE_T>(argv[5], 0, &count);
    const std::unique_ptr<EDGE_T[]> edges = emu_read_file<EDGE_T>(argv[6], 0, &edge_count);
    if (!values || !edges || count != skip + n) return 2;
    const long long edge_bytes = edge_count * (long long)sizeof(EDGE_T);
    std::unique_ptr<unsigned char[]> edges_to(new unsigned char[edge_bytes]());
    const long long counters_count = BYTE_VALUES ? 256 : EXTREMES ? (long long)bins + 2 : bins;
    std::unique_ptr<unsigned long long[]> counters(new unsigned long long[counters_count]());
    std::unique_ptr<unsigned long long[]> out(new unsigned long long[outputs]);
    for (long long i = 0; i < outputs; ++i) out[i] = 99ull;
    unsigned int ticket = 0u;
    const KEY_T lo = number<KEY_T>(argv[9]), hi = number<KEY_T>(argv[10]);
    const EDGE_T first_edge = number<EDGE_T>(argv[11]);
    const DIV_T norm_denom = number<DIV_T>(argv[12]), bins_as_div = number<DIV_T>(argv[13]);
    const double guess_scale = number<double>(argv[14]), edge_start = number<double>(argv[17]);
    const GUESS_T guess_low = number<GUESS_T>(argv[15]), guess_high = number<GUESS_T>(argv[16]);
    const double edge_step = number<double>(argv[18]);
    emu_launch(grid, BLOCK_SIZE, [&] {
        numpy_histogram_once(values.get() + skip, n, bins, lo, hi, first_edge, norm_denom, bins_as_div, guess_scale,
                             guess_low, guess_high, edge_start, edge_step, edges.get(), counters.get(), &ticket,
                             out.get(), reinterpret_cast<const unsigned char*>(edges.get()), edges_to.get(),
                             edge_bytes);
    });
    if (!emu_write_file(argv[7], out.get(), outputs)) return 2;
    for (long long i = 0; i < counters_count; ++i)
        if (counters[i] != 0ull) return 3;
    if (ticket != 0u) return 3;
    return std::memcmp(edges_to.get(), edges.get(), edge_bytes) != 0 ? 5 : 0;
}
