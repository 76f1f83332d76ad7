// life_on_cpu.cpp -- kernels/life/temporal.cu (and fast.cu, which shares its rule) run on the CPU (tests/emulate/cuda_on_cpu.h: a block's threads as
// std::threads, warp shuffles through barriers, blocks one after the other), for tests/unit/test_life_emulated.py.
//
//   life_on_cpu HEIGHT WIDTH in.bin out.bin K1 [K2 ...]
//   life_on_cpu HEIGHT WIDTH in.bin out.bin fast ROWS GENERATIONS
//
// in.bin: HEIGHT x ceil(WIDTH / 32) uint32 words (pack.cu's layout); runs one launch of life_temporal per K (the
// driver's pass plan) -- or GENERATIONS launches of fast.cu's life_bitpacked with ROWS rows a thread --, ping-pong
// between two buffers, and writes the last one to out.bin.  Every buffer is a host
// allocation of exactly its size, so AddressSanitizer stops the run at any access out of bounds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_on_cpu.h"
using std::min;

#include "../../kernels/life/temporal.cu"
#include "../../kernels/life/fast.cu"

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: %s HEIGHT WIDTH in.bin out.bin K1 [K2 ...]\n", argv[0]);
        return 2;
    }
    const int height = std::atoi(argv[1]), width = std::atoi(argv[2]);
    const int words_per_row = (width + 31) / 32;
    const size_t n = (size_t)height * words_per_row;
    word_t* a = new word_t[n];
    word_t* b = new word_t[n];
    FILE* f = std::fopen(argv[3], "rb");
    if (!f || std::fread(a, sizeof(word_t), n, f) != n) return 3;
    std::fclose(f);
    const int tiles = ((words_per_row + TILE_WORDS - 1) / TILE_WORDS) * ((height + TILE_ROWS - 1) / TILE_ROWS);
    if (std::string(argv[5]) == "fast") {  // fast.cu: 1-D grid of 128-thread blocks, one thread a word x ROWS rows
        const int rows = std::atoi(argv[6]), generations = std::atoi(argv[7]);
        const long long threads = (long long)((height + rows - 1) / rows) * words_per_row;
        for (int g = 0; g < generations; ++g) {
            std::fill(b, b + n, 0xFFFFFFFFu);
            emu_launch((int)((threads + 127) / 128), 128,
                       [&] { life_bitpacked(b, a, height, width, words_per_row, rows); });
            std::swap(a, b);
        }
    }
    for (int arg = 5; arg < argc && std::string(argv[5]) != "fast"; ++arg) {
        const int k = std::atoi(argv[arg]);
        std::fill(b, b + n, 0xFFFFFFFFu);  // every word must be stored by the launch
        emu_launch(tiles, BLOCK, [&] { life_temporal(b, a, height, width, words_per_row, k); });
        std::swap(a, b);
    }
    f = std::fopen(argv[4], "wb");
    if (!f || std::fwrite(a, sizeof(word_t), n, f) != n) return 4;
    std::fclose(f);
    delete[] a;
    delete[] b;
    return 0;
}
