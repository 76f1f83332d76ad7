// min_max_on_cpu.cpp -- one launch of kernels/histogram/min_max.cu's min_max_partials (the data's least and greatest
// value and whether it holds a NaN, one partial per block: histogram's range=None, bincount's length) on the CPU
// (cuda_on_cpu.h), for tests/unit/test_histogram_emulated.py:
//     min_max_on_cpu N GRID SKIP LOWEST HIGHEST values.bin out.bin
// values.bin: the data (VALUE_T; float16 as its bits), of which the kernel reads N from SKIP elements into an exactly
// sized heap array, so AddressSanitizer reports any read past its end; LOWEST and HIGHEST: the identities the blocks
// start from (integers in decimal, floats as C hex literals).  out.bin: the GRID block minima and maxima (KEY_T) and
// the GRID NaN flags (int), as numpy_models.min_max_partials_model gives them.  Built with
// pyscan/histograms/numpy_histogram.py's min_max_defines.
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include "numpy_bins_on_cpu.h"

#include "../../kernels/histogram/min_max.cu"

int main(int argc, char** argv) {
    if (argc != 8) return 2;
    const long long n = std::atoll(argv[1]), skip = std::atoll(argv[3]);
    const int grid = std::atoi(argv[2]);
    const KEY_T lowest = number<KEY_T>(argv[4]), highest = number<KEY_T>(argv[5]);
    long long count = 0;
    const std::unique_ptr<VALUE_T[]> values = emu_read_file<VALUE_T>(argv[6], 0, &count);
    if (!values || count != skip + n) return 2;
    std::unique_ptr<KEY_T[]> mins(new KEY_T[grid]), maxs(new KEY_T[grid]);
    std::unique_ptr<int[]> nans(new int[grid]);
    emu_launch(grid, MIN_MAX_BLOCK, [&] {
        min_max_partials(values.get() + skip, n, lowest, highest, mins.get(), maxs.get(), nans.get());
    });
    FILE* f = std::fopen(argv[7], "wb");
    if (!f || std::fwrite(mins.get(), sizeof(KEY_T), grid, f) != (size_t)grid ||
        std::fwrite(maxs.get(), sizeof(KEY_T), grid, f) != (size_t)grid ||
        std::fwrite(nans.get(), sizeof(int), grid, f) != (size_t)grid)
        return 2;
    std::fclose(f);
    return 0;
}
