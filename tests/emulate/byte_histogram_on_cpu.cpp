// byte_histogram_on_cpu.cpp -- one launch of a byte histogram kernel of PMPP ch. 9 (atomic_block.cu,
// atomic_interleaved.cu, privatized.cu, aggregated.cu, coarsened.cu) or the fast one (fast.cu) on the CPU
// (cuda_on_cpu.h), for tests/unit/test_byte_histogram_emulated.py:
//     byte_histogram_on_cpu N SKIP GRID BLOCK BINS x.bin out.bin
// x.bin: SKIP + N bytes, read into a 16-byte aligned heap array of exactly that size (AddressSanitizer reports any
// read past its end); the kernel counts the N from SKIP on (fast.cu's head: the bytes before the first 16-byte
// aligned address).  out.bin: the BINS uint64 counts, zero before the launch as the host's memset leaves them.  Exit
// 4: the heap array is not 16-byte aligned.  Built with the loader's #defines of the build (LETTERS, and
// pyscan.histograms.fast.fast_defines for fast.cu) and -DHISTOGRAM_FILE="kernels/histogram/<file>"
// -DHISTOGRAM_FUNCTION=<its function>, and -DDYNAMIC_SHARED=1 for fast.cu.
#include "cuda_on_cpu.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

#if DYNAMIC_SHARED
// fast.cu's copies, `extern __shared__ unsigned int histo_s[]`: with __shared__ empty it declares the array below,
// which the block's threads share as they would the block's shared memory (blocks run in turn); the file has no
// __shared__ variable of its own.
#undef __shared__
#define __shared__
#endif

#include HISTOGRAM_FILE

#if DYNAMIC_SHARED
extern "C" {
unsigned int histo_s[256 * 32];  // bins * COPIES counters: at most 256 bins, 32 copies
}
#endif

int main(int argc, char** argv) {
    if (argc != 8) return 2;
    const long long n = std::atoll(argv[1]), skip = std::atoll(argv[2]);
    const int grid = std::atoi(argv[3]), block = std::atoi(argv[4]), bins = std::atoi(argv[5]);
    long long count = 0;
    const std::unique_ptr<unsigned char[]> x = emu_read_file<unsigned char>(argv[6], 0, &count);
    if (!x || count != skip + n || bins < 1 || bins > 256) return 2;
    if (reinterpret_cast<std::uintptr_t>(x.get()) % 16 != 0) return 4;
    std::unique_ptr<unsigned long long[]> histo(new unsigned long long[bins]());
    emu_launch(grid, block, [&] { HISTOGRAM_FUNCTION(x.get() + skip, n, bins, histo.get()); });
    return emu_write_file(argv[7], histo.get(), bins) ? 0 : 2;
}
