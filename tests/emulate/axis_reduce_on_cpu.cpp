// axis_reduce_on_cpu.cpp -- runs one launch of kernels/reduction/axis_columns.cu or axis_rows.cu's short-rows or
// long-rows kernel on the CPU (cuda_on_cpu.h) for tests/unit/test_axis_emulated.py:
//     axis_reduce_on_cpu OUTER N INNER LANES ROWS CHUNK_ROWS LANE_CHUNKS CHUNKS SKIP x.bin out.bin
//     axis_reduce_on_cpu short ROWS N PER_THREAD GRID SKIP x.bin out.bin      (built with -DEMU_ROWS)
//     axis_reduce_on_cpu block ROWS N SPLITS SEG SKIP x.bin out.bin           (built with -DEMU_ROWS)
// x.bin: the elements (IN_TYPE, C order); the kernel reads them from SKIP elements into an exactly sized heap array
// (SKIP 1: x not aligned to a thread's run or a 16-byte vector), so AddressSanitizer reports any read past its end.
// out.bin: the launch's outputs (OUT_TYPE): columns OUTER * INNER, short and block ROWS; where the launch has
// several chunks (segments) a row, its last blocks fold their partials, and it exits 3 if a ticket counter is not
// back to 0.  The geometry is the host's (pyscan.reductions.axis.pass_plan).
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#ifdef EMU_ROWS
#include "../../kernels/reduction/axis_rows.cu"
#else
#include "../../kernels/reduction/axis_columns.cu"
#endif

int main(int argc, char** argv) {
    std::unique_ptr<InT[]> x;
    std::vector<OutT> out;
    std::vector<T> partials;
    std::vector<unsigned> tickets;
#ifdef EMU_ROWS
    if (argc != 9) return 2;
    const bool short_rows = std::strcmp(argv[1], "short") == 0;
    const long long rows = std::atoll(argv[2]), n = std::atoll(argv[3]), a = std::atoll(argv[4]),
                    b = std::atoll(argv[5]), skip = std::atoll(argv[6]);
    if (!(x = emu_read_file<InT>(argv[7], skip))) return 2;
    if (short_rows) {  // a = per_thread, b = grid
        out.assign(rows, OutT{});
        emu_launch((int)b, BLOCK, [&] { axis_rows_reduce_short(out.data(), x.get() + skip, rows, (int)n, (int)a); });
    } else {  // a = splits, b = seg
        out.assign(rows, OutT{});
        partials.assign(rows * a, T{});
        tickets.assign(rows, 0u);
        emu_launch((int)(rows * a), BLOCK, [&] {
            axis_rows_reduce_block(out.data(), partials.data(), tickets.data(), x.get() + skip, n, a, b);
        });
    }
    const char* out_path = argv[8];
#else
    if (argc != 12) return 2;
    const long long outer = std::atoll(argv[1]), n = std::atoll(argv[2]), inner = std::atoll(argv[3]);
    const int lanes = std::atoi(argv[4]), rows = std::atoi(argv[5]);
    const long long chunk_rows = std::atoll(argv[6]), lane_chunks = std::atoll(argv[7]), chunks = std::atoll(argv[8]);
    const long long skip = std::atoll(argv[9]);
    if (!(x = emu_read_file<InT>(argv[10], skip))) return 2;
    out.assign(outer * inner, OutT{});
    partials.assign(outer * chunks * inner, T{});
    tickets.assign(outer * lane_chunks, 0u);
    emu_launch((int)(outer * lane_chunks * chunks), BLOCK, [&] {
        axis_columns_reduce(out.data(), partials.data(), tickets.data(), x.get() + skip, n, inner, lanes, rows,
                            chunk_rows, lane_chunks, chunks);
    });
    const char* out_path = argv[11];
#endif
    FILE* f = std::fopen(out_path, "wb");
    if (!f || std::fwrite(out.data(), sizeof(OutT), out.size(), f) != out.size()) return 2;
    std::fclose(f);
    for (unsigned ticket : tickets) {
        if (ticket != 0) return 3;
    }
    return 0;
}
