// cp_async.cuh -- asynchronous global -> shared copies (sm_80+, PTX cp.async): a 16-byte copy that needs no
// register and does not block the thread; the thread groups its copies (commit) and waits until at most N of its
// groups are still in flight (wait<N>).  A block can so keep the next tile's loads in flight while it works on
// this one (the double buffer of CUB's agent_scan.cuh / PMPP §6's latency hiding by overlap).
//
// .cg: cached in L2 only (the data are read once).  L2_PREFETCH_BYTES (0, 64, 128 or 256): the L2 fetches that
// many bytes around each copy (128 won +0.3 to +1 % on the scan; docs/decoupled_lookback_tuning.md).
#pragma once
// (The CPU emulator of the tests, tests/emulate/cuda_on_cpu.h, defines CP_ASYNC_ON_CPU and these three itself.)
#ifndef CP_ASYNC_ON_CPU

template <int L2_PREFETCH_BYTES = 0>
__device__ __forceinline__ void cp_async16(void* shared_dst, const void* global_src) {
    static_assert(L2_PREFETCH_BYTES == 0 || L2_PREFETCH_BYTES == 64 || L2_PREFETCH_BYTES == 128 ||
                      L2_PREFETCH_BYTES == 256,
                  "L2_PREFETCH_BYTES must be 0, 64, 128 or 256");
    const unsigned s = (unsigned)__cvta_generic_to_shared(shared_dst);
    if constexpr (L2_PREFETCH_BYTES == 64) {
        asm volatile("cp.async.cg.shared.global.L2::64B [%0], [%1], 16;" ::"r"(s), "l"(global_src) : "memory");
    } else if constexpr (L2_PREFETCH_BYTES == 128) {
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(s), "l"(global_src) : "memory");
    } else if constexpr (L2_PREFETCH_BYTES == 256) {
        asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16;" ::"r"(s), "l"(global_src) : "memory");
    } else {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(global_src) : "memory");
    }
}

// Closes this thread's group of copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most N of this thread's committed groups are still in flight (N = 0: all landed).  Other threads'
// copies are not covered: a warp that reads what its lanes copied needs a __syncwarp after the wait.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

#endif  // CP_ASYNC_ON_CPU
