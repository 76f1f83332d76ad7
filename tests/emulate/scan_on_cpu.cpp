// scan_on_cpu.cpp -- the 1-D build of kernels/scan/decoupled_lookback.cu (decoupled_lookback_scan: pyscan.scan's
// fast scan) on the CPU (cuda_on_cpu.h), for tests/unit/test_scan_emulated.py:
//     scan_on_cpu MODE EXCLUSIVE N GRID SKIP first.bin second.bin out.bin
// Launches on the same tile counter and status words, as calls on one stream: the first scans first.bin, the last
// second.bin into out.bin (N values of OUT_TYPE), which the test holds equal to the model of second.bin.  (Blocks in
// index order take the tiles in order, so a look-back never meets a flag of an earlier launch: what the epochs guard
// against is the GPU's to test; here, that the counter's word is left as the next launch needs it.)  The inputs (N
// values of IN_TYPE
// each) and the output start SKIP elements into exactly sized heap arrays (SKIP > 0: the build with VECTOR_LOADS 0),
// so AddressSanitizer reports any access past their ends.  MODE:
//   host  the host's epochs: 1, then 2 (pyscan.scans.decoupled_lookback.next_status)
//   wrap  a CUDA graph's epochs, kept on the device (EPOCH_ON_DEVICE): a launch at epoch 1 (its flags stale from
//         then on), the counter then set to the last epoch (2^30 - 1) as after that many launches, whose launch
//         (of first.bin) must zero the flags and start the count over (exit 3 if not), and the last launch, at
//         epoch 1 again
// After the last launch the tile counter must hold the next epoch (0 for the host's) and the count of finished blocks
// 0: exit 3 if not.  GRID blocks (one block per tile without VECTOR_LOADS; persistent blocks with), run in index
// order, so every look-back finds its predecessor's prefix: the model's serial schedule.  Built with the #defines of
// one build (pyscan.scans.decoupled_lookback.kernel_defines), and tile_status_on_cpu.h (-DEMU_STATUS and
// EMU_HIDE_P: look-backs through several windows).
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tile_status_on_cpu.h"

#include "../../kernels/scan/decoupled_lookback.cu"

int main(int argc, char** argv) {
    if (argc != 9) return 2;
    const std::string mode = argv[1];
    const int exclusive = std::atoi(argv[2]);
    const long long n = std::atoll(argv[3]), skip = std::atoll(argv[5]);
    const int grid = std::atoi(argv[4]);
    long long count = 0;
    const std::unique_ptr<IN_TYPE[]> first = emu_read_file<IN_TYPE>(argv[6], skip, &count);
    if (!first || count != n) return 2;
    const std::unique_ptr<IN_TYPE[]> second = emu_read_file<IN_TYPE>(argv[7], skip, &count);
    if (!second || count != n) return 2;
    std::unique_ptr<OUT_TYPE[]> out(new OUT_TYPE[skip + n]);
    const long long tiles = (n + TILE - 1) / TILE;
    // [0] the tile counter (low 32 bits) and a graph launch's epoch (high 32 bits), [1] the finished blocks, [2:] the
    // status words (the 4-byte layout needs only `tiles` of the 4 * tiles)
    std::vector<unsigned long long> words(2 + 4 * tiles, 0ull);
    unsigned long long* const counter = words.data();
    unsigned long long* const status = words.data() + 2;
    const auto launch = [&](const IN_TYPE* in, unsigned epoch) {
        emu_launch(grid, BLOCK_THREADS, [&] {
            decoupled_lookback_scan(out.get() + skip, in + skip, n, exclusive, counter, status, tiles, epoch);
        });
    };
    unsigned long long next = 0ull;  // the counter's word after the last launch
    if (mode == "host") {
        launch(first.get(), 1);
        emu_windows = 0;  // the windows the second launch's look-backs read
        launch(second.get(), 2);
    } else if (mode == "wrap") {
        counter[0] = 1ull << 32;
        launch(first.get(), EPOCH_ON_DEVICE);
        counter[0] = (unsigned long long)(EPOCHS - 1) << 32;
        launch(first.get(), EPOCH_ON_DEVICE);
        if (tiles > 1) {  // the count started over, on zeroed flags
            if (counter[0] != 1ull << 32) return 3;
            for (long long w = 0; w < tiles * TileStatus<T>::WORDS; ++w)
                if (status[w] != 0ull) return 3;
        }
        emu_windows = 0;
        launch(second.get(), EPOCH_ON_DEVICE);
        next = tiles > 1 ? 2ull << 32 : (unsigned long long)(EPOCHS - 1) << 32;  // (one tile: no counter)
    } else {
        return 2;
    }
    if (counter[0] != next || counter[1] != 0ull) return 3;
    std::fprintf(stderr, "windows %lld\n", (long long)emu_windows);  // (of the last launch)
    if (!emu_write_file(argv[8], out.get() + skip, n)) return 2;
    return 0;
}
