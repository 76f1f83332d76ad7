// count_work.cuh -- COUNT_WORK builds of the reduction kernels (PMPP §10.3-10.4: how many threads and warps each
// step of a reduction tree keeps busy).  Shared by reduction/simple.cu and reduction/convergent.cu.
#pragma once

// One warp-wide vote per step: lane 0 of each warp adds the number of active threads and, if there was one,
// counts the warp.  The vote names every lane the warp has (all 32, or fewer in a block smaller than a warp),
// so it waits for all of them (__activemask() would not: lanes need not have reconverged after the if).
// counters[0]: active threads summed over the steps; counters[1 + step]: warps with an active thread in that step.
__device__ __forceinline__ void count_step(bool active, int step, unsigned long long* counters) {
    const unsigned int lanes = min(32u, blockDim.x - (threadIdx.x & ~31u));
    const unsigned int votes = __ballot_sync(lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u, active);
    if ((threadIdx.x & 31) == 0 && votes != 0) {
        atomicAdd(&counters[0], (unsigned long long)__popc(votes));
        atomicAdd(&counters[1 + step], 1ULL);
    }
}
