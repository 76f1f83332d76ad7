// reduce_steps_on_cpu.cpp -- a book reduction tree (PMPP §10.3 simple.cu, §10.4 convergent.cu, §10.6
// shared_memory.cu, §10.7 segmented.cu, §10.8 coarsened.cu) on the CPU (cuda_on_cpu.h): one block in its TRACE build
// (and COUNT_WORK too for the two in place), or the atomic trees' shipped build over GRID blocks, run in turn, for
// tests/unit/test_reduction_steps_emulated.py:
//     reduce_steps_on_cpu N THREADS GRID STEPS ROW x.bin result.bin trace.bin counts.bin
// x.bin: the N values (IN_TYPE; T for the kernels in place, which reduce in the array itself: an exactly sized heap
// array, so AddressSanitizer reports any access past its end); result.bin: partials[0] (GRID 1), or the output of
// segmented's and coarsened's atomics, set to the identity first by fill_identity as the host does; trace.bin (TRACE
// builds): STEPS rows of ROW values of T, what pyscan.reductions.steps.trace reads from the GPU
// (steps.trace_geometry); counts.bin: the COUNT_WORK counters, 1 + STEPS uint64 (combines, then the warps active at
// each stride; zero for the shared-memory trees, which have no such build).  Built with the loader's #defines
// (pyscan.reductions.book.kernel_builds, with TRACE=1 and, in place, COUNT_WORK=1 for the traces) and
// -DREDUCE_FILE="kernels/reduction/<file>" -DREDUCE_FUNCTION=<its function> -DREDUCE_KIND=1 (in place), 2 (shared
// memory into partials[0]) or 3 (shared memory, then an atomic).
#include "cuda_on_cpu.h"

#include <cstdlib>
#include <memory>

// The shared-memory trees' dynamic shared array, `extern __shared__ T input_s[]`: with __shared__ empty it declares
// the array defined below, which the block's threads share as they would the block's shared memory (blocks run in
// turn).  No kernel of these files has a __shared__ variable of its own.
#undef __shared__
#define __shared__

#include REDUCE_FILE

#if REDUCE_KIND != 1
extern "C" {
T input_s[1024];  // blockDim.x elements: one block of at most 1024 threads
}
#endif

#ifndef TRACE
#define TRACE 0
#endif

int main(int argc, char** argv) {
    if (argc != 10) return 2;
    const long long n = std::atoll(argv[1]), steps = std::atoll(argv[4]), row = std::atoll(argv[5]);
    const int threads = std::atoi(argv[2]), grid = std::atoi(argv[3]);
    if (threads < 1 || threads > 1024 || grid < 1 || ((TRACE || REDUCE_KIND != 3) && grid != 1)) return 2;
    long long count = 0;
#if REDUCE_KIND == 1
    const std::unique_ptr<T[]> x = emu_read_file<T>(argv[6], 0, &count);
#else
    const std::unique_ptr<IN_TYPE[]> x = emu_read_file<IN_TYPE>(argv[6], 0, &count);
#endif
    if (!x || count != n) return 2;
    std::unique_ptr<T[]> result(new T[1]()), trace(new T[steps * row + 1]());
    std::unique_ptr<unsigned long long[]> counters(new unsigned long long[1 + steps]());
#if REDUCE_KIND == 3
    emu_launch(1, 1, [&] { fill_identity(result.get()); });
#endif
#if REDUCE_KIND == 1
    emu_launch(1, threads, [&] { REDUCE_FUNCTION(result.get(), x.get(), n, counters.get(), trace.get()); });
#elif TRACE
    emu_launch(1, threads, [&] { REDUCE_FUNCTION(result.get(), x.get(), n, trace.get()); });
#else
    emu_launch(grid, threads, [&] { REDUCE_FUNCTION(result.get(), x.get(), n); });
#endif
    if (!emu_write_file(argv[7], result.get(), 1) || !emu_write_file(argv[8], trace.get(), steps * row) ||
        !emu_write_file(argv[9], counters.get(), 1 + steps))
        return 2;
    return 0;
}
