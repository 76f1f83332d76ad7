// arg_extreme_on_cpu.cpp -- one launch of a kernel of kernels/reduction/arg_extreme.cu (argmax / argmin: the row
// kernels and the column kernel, over x or over an earlier pass's (value, index) partials) on the CPU
// (cuda_on_cpu.h), for tests/unit/test_argextreme_emulated.py, which chains the passes as the driver does
// (pyscan.reductions.arg_extreme.passes):
//     arg_extreme_on_cpu KERNEL GRID OUTPUTS LAST input.bin index.bin out_index.bin out_value.bin GEOMETRY...
// KERNEL: rows_short, rows_warp, rows_block or columns (pyscan.reductions.axis.pass_plan's names), GEOMETRY its
// arguments after the pointers.  input.bin: x (IN_TYPE) where index.bin is "-" (a first pass), else the partials'
// values (T) and index.bin their int64 indices; each read into an exactly sized heap array, so AddressSanitizer
// reports any read past its end.  The launch writes OUTPUTS int64 indices into out_index.bin, and (LAST 0) as many
// values (T) into out_value.bin.  Built with the driver's #defines (pyscan.reductions.arg_extreme.macros).
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "../../kernels/reduction/arg_extreme.cu"

int main(int argc, char** argv) {
    if (argc < 11) return 2;
    const std::string kernel = argv[1];
    const int grid = std::atoi(argv[2]);
    const long long outputs = std::atoll(argv[3]);
    const bool last = std::atoi(argv[4]) != 0, first = std::string(argv[6]) == "-";
    long long g[7] = {0, 0, 0, 0, 0, 0, 0};
    const int given = argc - 9;
    if (given > 7) return 2;
    for (int i = 0; i < given; ++i) g[i] = std::atoll(argv[9 + i]);
    const std::unique_ptr<InT[]> x = first ? emu_read_file<InT>(argv[5]) : nullptr;
    const std::unique_ptr<T[]> in_value = first ? nullptr : emu_read_file<T>(argv[5]);
    const std::unique_ptr<long long[]> in_index = first ? nullptr : emu_read_file<long long>(argv[6]);
    if (first ? !x : (!in_value || !in_index)) return 2;
    std::unique_ptr<long long[]> out_index(new long long[outputs]);
    std::unique_ptr<T[]> out_value(last ? nullptr : new T[outputs]);
    long long* const oi = out_index.get();
    T* const ov = out_value.get();
    const InT* const xs = x.get();
    const T* const iv = in_value.get();
    const long long* const ii = in_index.get();
    if (kernel == "rows_short" && given == 2) {
        emu_launch(grid, BLOCK, [&] { arg_extreme_rows_thread(oi, ov, xs, iv, ii, g[0], g[1]); });
    } else if (kernel == "rows_warp" && given == 2) {
        emu_launch(grid, BLOCK, [&] { arg_extreme_rows_warp(oi, ov, xs, iv, ii, g[0], g[1]); });
    } else if (kernel == "rows_block" && given == 3) {
        emu_launch(grid, BLOCK, [&] { arg_extreme_rows_block(oi, ov, xs, iv, ii, g[0], g[1], g[2]); });
    } else if (kernel == "columns" && given == 7) {
        emu_launch(grid, BLOCK, [&] {
            arg_extreme_columns(oi, ov, xs, iv, ii, g[0], g[1], (int)g[2], (int)g[3], g[4], g[5], g[6]);
        });
    } else {
        return 2;
    }
    if (!emu_write_file(argv[7], oi, outputs)) return 2;
    if (!last && !emu_write_file(argv[8], ov, outputs)) return 2;
    return 0;
}
