// sections_on_cpu.cpp -- one section of a single-section scan kernel (PMPP §11.2-§11.5 and Hands-On ch. 4:
// naive.cu, kogge_stone.cu, kogge_stone_double_buffer.cu, brent_kung.cu, coarsened.cu, blelloch_block.cu) in its
// TRACE and COUNT_WORK build, on the CPU (cuda_on_cpu.h), for tests/unit/test_scan_sections_emulated.py:
//     sections_on_cpu N THREADS STEPS EXCLUSIVE x.bin out.bin trace.bin counts.bin
// One block of THREADS threads scans the N values of x.bin (IN_TYPE, an exactly sized heap array, so
// AddressSanitizer reports any read past its end) into out.bin (N values of OUT_TYPE); trace.bin: the shared array
// after each of the STEPS steps (STEPS x SECTION_SIZE values of T, what pyscan.scans.tracing.trace reads from the
// GPU); counts.bin: the combines done and, per combine step, the warps that did one (STEPS uint64: WorkCount).
// Built with the loader's #defines (pyscan.scans.hierarchical.section_build, TRACE=1 and COUNT_WORK=1) and
// -DSECTION_FILE="kernels/scan/<file>" -DSECTION_FUNCTION=<its function>.
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include SECTION_FILE

int main(int argc, char** argv) {
    if (argc != 9) return 2;
    const long long n = std::atoll(argv[1]), steps = std::atoll(argv[3]);
    const int threads = std::atoi(argv[2]), exclusive = std::atoi(argv[4]);
    long long count = 0;
    const std::unique_ptr<IN_TYPE[]> x = emu_read_file<IN_TYPE>(argv[5], 0, &count);
    if (!x || count != n) return 2;
    std::unique_ptr<OUT_TYPE[]> out(new OUT_TYPE[n]);
    std::unique_ptr<T[]> trace(new T[steps * SECTION_SIZE]());
    std::unique_ptr<unsigned long long[]> counters(new unsigned long long[steps]());
    emu_launch(1, threads, [&] {
        SECTION_FUNCTION(out.get(), x.get(), nullptr, n, exclusive, trace.get(), counters.get());
    });
    if (!emu_write_file(argv[6], out.get(), n) || !emu_write_file(argv[7], trace.get(), steps * SECTION_SIZE) ||
        !emu_write_file(argv[8], counters.get(), steps))
        return 2;
    return 0;
}
