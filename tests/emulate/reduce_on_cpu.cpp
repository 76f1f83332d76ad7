// reduce_on_cpu.cpp -- one launch of kernels/reduction/fast.cu's reduce_fast (the fast reduction: grid-stride 16-byte
// loads, warp shuffles, the last block reducing the per-block results) on the CPU (cuda_on_cpu.h), for
// tests/unit/test_reduction_emulated.py:
//     reduce_on_cpu N GRID BLOCK SKIP x.bin out.bin
// x.bin: the values (IN_TYPE); the kernel reads N of them from SKIP elements into an exactly sized heap array (SKIP
// not a multiple of the vector: a head read one by one), so AddressSanitizer reports any read past its end.
// out.bin: the one result (OUT_TYPE).  The partials are GRID values of T, 16-byte aligned as the host's are, filled
// with 0x5A bytes first (the kernel must write each before the last block reads it); the ticket counter starts at 0
// and the emulator exits 3 if the launch did not put it back.  Exit 4: a heap array is not 16-byte aligned (the
// test's head would then not be SKIP's, and the partials' not 0).  Built with the #defines of one build
// (pyscan.reductions.fast.kernel_builds).
#include "cuda_on_cpu.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "../../kernels/reduction/fast.cu"

int main(int argc, char** argv) {
    if (argc != 7) return 2;
    const long long n = std::atoll(argv[1]), skip = std::atoll(argv[4]);
    const int grid = std::atoi(argv[2]), block = std::atoi(argv[3]);
    long long count = 0;
    const std::unique_ptr<IN_TYPE[]> x = emu_read_file<IN_TYPE>(argv[5], 0, &count);
    if (!x || count != skip + n) return 2;
    if (reinterpret_cast<std::uintptr_t>(x.get()) % 16 != 0) return 4;
    std::unique_ptr<T[]> partials(new T[grid]);
    if (reinterpret_cast<std::uintptr_t>(partials.get()) % 16 != 0) return 4;
    std::memset(static_cast<void*>(partials.get()), 0x5A, sizeof(T) * grid);
    unsigned int ticket = 0u;
    std::unique_ptr<OUT_TYPE[]> out(new OUT_TYPE[1]);
    emu_launch(grid, block, [&] { reduce_fast(out.get(), partials.get(), &ticket, x.get() + skip, n); });
    if (!emu_write_file(argv[6], out.get(), 1)) return 2;
    return ticket != 0u ? 3 : 0;
}
