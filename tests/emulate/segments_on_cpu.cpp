// segments_on_cpu.cpp -- runs the segments build of kernels/scan/decoupled_lookback.cu (SEGMENTS 1, its scan and its
// reduction) on the CPU (cuda_on_cpu.h) for tests/unit/test_segments_emulated.py:
//     segments_on_cpu MODE N S x.bin offsets.bin out.bin     MODE: scan, scan_exclusive, reduce, check
// (check: kernels/scan/segment_offsets.cu; out: its one int flag)
// x: N values of IN_TYPE, offsets: S + 1 of OFFSET_TYPE, out: N (scan) or S (reduce) values of OUT_TYPE.
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tile_status_on_cpu.h"

#include "../../kernels/scan/decoupled_lookback.cu"
#include "../../kernels/scan/segment_offsets.cu"

template <typename E>
static std::vector<E> read_file(const char* path, long long count) {
    std::vector<E> v(count);
    FILE* f = std::fopen(path, "rb");
    if (!f || std::fread(v.data(), sizeof(E), count, f) != (size_t)count) std::exit(2);
    std::fclose(f);
    v.shrink_to_fit();
    return v;
}

int main(int argc, char** argv) {
    if (argc != 7) return 2;
    const std::string mode = argv[1];
    const long long n = std::atoll(argv[2]), S = std::atoll(argv[3]);
    // exactly sized heap arrays: AddressSanitizer reports any access past them
    std::vector<InType> x = read_file<InType>(argv[4], n);
    std::vector<Offset> o = read_file<Offset>(argv[5], S + 1);
    const long long outputs = mode == "reduce" ? S : n;
    std::vector<OutType> out(outputs);
    const long long tiles = (n + TILE - 1) / TILE;
    // persistent blocks (aligned builds): three, of which the first takes every tile in order; else one per tile
    const int grid = PERSISTENT ? 3 : (int)tiles;
    std::vector<unsigned long long> counter(2, 0ull);  // the counter's word, the count of finished blocks
    std::vector<unsigned long long> status(4 * tiles, 0ull);  // (the 4-byte layout needs only `tiles` words)
    const unsigned epoch = 1;
    emu_after_block = [] {  // the most windows one block read
        static long long before = 0;
        const long long now = emu_windows;
        if (now - before > emu_most_windows) emu_most_windows = now - before;
        before = now;
    };
    if (mode == "check") {  // the device check: 3 blocks, so that the grid-stride loop wraps for large S
        std::vector<int> bad(1, 0);
        emu_launch(3, 256, [&] { segment_offsets_check(o.data(), S, n, bad.data()); });
        FILE* f = std::fopen(argv[6], "wb");
        if (!f || std::fwrite(bad.data(), sizeof(int), 1, f) != 1) return 2;
        std::fclose(f);
        return 0;
    }
    if (mode == "reduce") {
        emu_launch(grid, BLOCK_THREADS, [&] {
            decoupled_lookback_segmented_reduce(out.data(), x.data(), n, o.data(), S, counter.data(), status.data(),
                                                tiles, epoch);
        });
    } else {
        const int exclusive = mode == "scan_exclusive";
        emu_launch(grid, BLOCK_THREADS, [&] {
            decoupled_lookback_segmented_scan(out.data(), x.data(), n, o.data(), S, exclusive, counter.data(),
                                              status.data(), tiles, epoch);
        });
    }
    if (counter[0] != 0ull || counter[1] != 0ull) return 3;  // the counter is put back
    std::fprintf(stderr, "windows %lld most %lld\n", (long long)emu_windows, (long long)emu_most_windows);
    FILE* f = std::fopen(argv[6], "wb");
    if (!f || std::fwrite(out.data(), sizeof(OutType), outputs, f) != (size_t)outputs) return 2;
    std::fclose(f);
    return 0;
}
