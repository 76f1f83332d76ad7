// axis_on_cpu.cpp -- runs kernels/scan/axis_columns.cu on the CPU (cuda_on_cpu.h) for tests/unit/test_axis_emulated.py:
//     axis_on_cpu OUTER N INNER LANES ROWS ITEMS LANE_CHUNKS CHUNKS EXCLUSIVE x.bin out.bin
// x: OUTER * N * INNER values of IN_TYPE (C order), out: as many of OUT_TYPE; the geometry is the host's
// (pyscan.scans.axis.column_geometry).  Blocks run in ticket order, so with EMU_HIDE_P unset every look-back meets
// its predecessor's P in its first window (the model's schedule); EMU_HIDE_P hides P's, and the look-backs combine
// A's through several windows.  stderr: "windows W most M", the windows read in all and the most by one block.
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tile_status_on_cpu.h"

#include "../../kernels/scan/axis_columns.cu"

int main(int argc, char** argv) {
    if (argc != 12) return 2;
    const long long outer = std::atoll(argv[1]), n = std::atoll(argv[2]), inner = std::atoll(argv[3]);
    const int lanes = std::atoi(argv[4]), rows = std::atoi(argv[5]), items = std::atoi(argv[6]);
    const long long lane_chunks = std::atoll(argv[7]), chunks = std::atoll(argv[8]);
    const int exclusive = std::atoi(argv[9]);
    const long long total = outer * n * inner, blocks = outer * lane_chunks * chunks;
    // exactly sized heap arrays: AddressSanitizer reports any access past them
    std::vector<InT> x(total);
    FILE* f = std::fopen(argv[10], "rb");
    if (!f || std::fread(x.data(), sizeof(InT), total, f) != (size_t)total) return 2;
    std::fclose(f);
    std::vector<OutT> out(total);
    std::vector<unsigned> counter(2, 0u);
    std::vector<unsigned long long> status(4 * blocks * lanes, 0ull);  // a slot per (block, lane), 4 words at most
    emu_after_block = [] {  // the most windows one block read
        static long long before = 0;
        const long long now = emu_windows;
        if (now - before > emu_most_windows) emu_most_windows = now - before;
        before = now;
    };
    emu_launch((int)blocks, BLOCK_THREADS, [&] {
        axis_columns_scan(out.data(), x.data(), n, inner, lanes, rows, items, lane_chunks, chunks, exclusive,
                          counter.data(), status.data(), 1u);
    });
    if (counter[0] != 0u || counter[1] != 0u) return 3;  // the last block puts the counter back
    std::fprintf(stderr, "windows %lld most %lld\n", (long long)emu_windows, (long long)emu_most_windows);
    f = std::fopen(argv[11], "wb");
    if (!f || std::fwrite(out.data(), sizeof(OutT), total, f) != (size_t)total) return 2;
    std::fclose(f);
    return 0;
}
