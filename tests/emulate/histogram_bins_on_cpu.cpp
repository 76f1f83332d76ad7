// histogram_bins_on_cpu.cpp -- kernels/histogram/numpy_bins.cuh's bin of a value (BinRule::bin_of, and quick_bin,
// the branch-free bin the private copies' count takes first) run on the CPU, for tests/unit/test_histogram_emulated.py:
//     histogram_bins_on_cpu values.bin edges.bin out.bin BINS LO HI FIRST_EDGE NORM_DENOM BINS_AS_DIV GUESS_SCALE
//                           GUESS_LOW GUESS_HIGH EDGE_START EDGE_STEP
// values.bin: the data (VALUE_T; float16 as its bits); edges.bin: the rule's edges (EDGE_T); the numbers: the rule's
// kernel arguments, integers in decimal and floats as C hex literals (exact).  out.bin: int32 pairs (bin_of,
// quick_bin) per value.  Built with the rule's #defines (pyscan.histograms.numpy_plan.BinRule.defines).
// The device's rounded intrinsics are the host's IEEE operations in the same precision (no contraction:
// -ffp-contract=off), and the round-toward-zero adds run under fesetround(FE_TOWARDZERO).
#include "cuda_on_cpu.h"

#include <cfenv>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "numpy_bins_on_cpu.h"

#include "../../kernels/histogram/numpy_bins.cuh"

int main(int argc, char** argv) {
    if (argc != 15) {
        std::fprintf(stderr, "usage: histogram_bins_on_cpu values.bin edges.bin out.bin and the 11 rule numbers\n");
        return 2;
    }
    long long count = 0;
    const std::unique_ptr<VALUE_T[]> values = emu_read_file<VALUE_T>(argv[1], 0, &count);
    const std::unique_ptr<EDGE_T[]> edges = emu_read_file<EDGE_T>(argv[2]);
    if (!values || !edges) return 2;
    const BinRule rule{number<int>(argv[4]),         number<KEY_T>(argv[5]),       number<KEY_T>(argv[6]),
                       number<EDGE_T>(argv[7]),      number<DIV_T>(argv[8]),       number<DIV_T>(argv[9]),
                       number<double>(argv[10]),     number<GUESS_T>(argv[11]),    number<GUESS_T>(argv[12]),
                       number<double>(argv[13]),     number<double>(argv[14]),     edges.get()};
    std::vector<int> out;
    out.reserve(2 * count);
    for (long long i = 0; i < count; ++i) {
        const KEY_T key = key_of(values[i]);
        out.push_back(rule.bin_of(key));
        out.push_back(rule.quick_bin(key));
    }
    FILE* f = std::fopen(argv[3], "wb");
    if (!f || std::fwrite(out.data(), sizeof(int), out.size(), f) != out.size()) return 1;
    std::fclose(f);
    return 0;
}
