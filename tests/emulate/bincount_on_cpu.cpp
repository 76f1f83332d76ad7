// bincount_on_cpu.cpp -- one launch of kernels/histogram/numpy_histogram.cu's numpy_bincount_global (bincount's one
// pass on the global histogram: the counts of the values below BINS and the data's extremes) on the CPU
// (cuda_on_cpu.h), for tests/unit/test_histogram_emulated.py:
//     bincount_on_cpu N BINS GRID SKIP x.bin out.bin
// x.bin: the values (VALUE_T); the kernel reads N of them from SKIP elements into an exactly sized heap array
// (SKIP 1: not aligned to a 16-byte vector), so AddressSanitizer reports any read past its end.  out.bin: the BINS
// counts and the two extreme words (uint64), the step-model's numpy_models.one_pass_model.  The counts start at 99
// (the host zeroes the result before the launch: the emulator does too, after checking nothing read them), and the
// kept counters and the ticket at 0; it exits 3 if the launch did not leave them at 0.  Built with the #defines of
// a bincount rule (pyscan.histograms.numpy_plan.BinRule.defines) and EXTREMES=1.
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "numpy_bins_on_cpu.h"

#include "../../kernels/histogram/numpy_histogram.cu"

int main(int argc, char** argv) {
    if (argc != 7) return 2;
    const long long n = std::atoll(argv[1]), skip = std::atoll(argv[4]);
    const int bins = std::atoi(argv[2]), grid = std::atoi(argv[3]);
    const std::unique_ptr<VALUE_T[]> x = emu_read_file<VALUE_T>(argv[5], skip);
    if (!x) return 2;
    std::unique_ptr<unsigned long long[]> out(new unsigned long long[bins + 2]);  // the counts, then the extremes
    for (int i = 0; i < bins; ++i) out[i] = 0ull;  // the host's memset
    out[bins] = out[bins + 1] = 99ull;  // written by the last block
    unsigned long long counters[2] = {0ull, 0ull};
    unsigned int ticket = 0u;
    emu_launch(grid, BLOCK_SIZE, [&] {
        numpy_bincount_global(x.get() + skip, n, bins, (KEY_T)0, (KEY_T)0, (EDGE_T)0, (DIV_T)0, (DIV_T)0, 0.0,
                              (GUESS_T)0, (GUESS_T)1, 0.0, 0.0, nullptr, counters, &ticket, out.get(),
                              out.get() + bins);
    });
    FILE* f = std::fopen(argv[6], "wb");
    if (!f || std::fwrite(out.get(), sizeof(unsigned long long), bins + 2, f) != (size_t)bins + 2) return 2;
    std::fclose(f);
    return (counters[0] | counters[1] | ticket) != 0 ? 3 : 0;
}
