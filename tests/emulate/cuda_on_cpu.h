// cuda_on_cpu.h -- just enough of CUDA to run pyscan's kernels on the CPU, one block at a time, each block's threads
// as std::threads (tests/unit/test_*_emulated.py: the look-back scans, the fast, axis and arg reductions, the
// histograms, Life and the book's single-section scans).  __shared__ variables become function statics (shared by the block's threads; blocks
// run one after the other), warp shuffles, ballots and matches exchange through a per-warp slot array between two
// warp barriers (__syncwarp is that barrier), cp.async copies are made at once, __syncthreads is a block barrier
// (__syncthreads_and three of them), atomics are the compiler's.  A block of other than a multiple of 32 threads
// ends with a partial warp, whose collectives take its threads only (a single-section scan of 2 elements has 1).
// Blocks in index order means every look-back finds its predecessor's inclusive prefix (the serial schedule the
// NumPy models assume), and every array the kernels touch is a host allocation that AddressSanitizer watches.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_types.h>

#include <atomic>
#include <barrier>
#include <cstring>
#include <thread>
#include <cstdio>
#include <memory>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__  // (empty: GCC's own __attribute__((__noinline__)) still parses)
#define __shared__ static
#define __launch_bounds__(...)

struct EmuDim {
    unsigned x = 0, y = 0, z = 0;
};
struct EmuWarp {  // a warp of `lanes` threads (the last warp of a block of other than a multiple of 32 has fewer)
    std::unique_ptr<std::barrier<>> bar;
    int lanes = 0;
    unsigned long long slot[32];
};
struct EmuBlock {
    std::barrier<> bar;
    std::atomic<bool> any_false{false};  // __syncthreads_and's vote
    EmuWarp warps[32];
    explicit EmuBlock(int threads) : bar(threads) {
        for (int w = 0; w < 32; ++w) {
            const int lanes = threads - 32 * w < 0 ? 0 : threads - 32 * w > 32 ? 32 : threads - 32 * w;
            warps[w].lanes = lanes;
            if (lanes) warps[w].bar = std::make_unique<std::barrier<>>(lanes);
        }
    }
};
inline thread_local EmuDim emu_thread_index, emu_block_index;
inline EmuDim emu_grid_dim, emu_block_dim;
inline thread_local EmuBlock* emu_block = nullptr;
#define threadIdx emu_thread_index
#define blockIdx emu_block_index
#define gridDim emu_grid_dim
#define blockDim emu_block_dim

inline void __syncthreads() { emu_block->bar.arrive_and_wait(); }
inline int __syncthreads_and(int p) {  // a barrier whose result is whether p held in every thread
    EmuBlock& b = *emu_block;
    b.bar.arrive_and_wait();  // every thread has read the last vote
    if (threadIdx.x == 0) b.any_false = false;
    b.bar.arrive_and_wait();
    if (!p) b.any_false = true;
    b.bar.arrive_and_wait();
    return !b.any_false;
}
inline int __syncthreads_or(int p) {  // a barrier whose result is whether p held in any thread
    return !__syncthreads_and(!p);
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

template <typename V>
V emu_exchange(V v, int source) {
    EmuWarp& w = emu_block->warps[threadIdx.x >> 5];
    const int lane = threadIdx.x & 31;
    static_assert(sizeof(V) <= 8, "one slot per lane");
    std::memcpy(&w.slot[lane], &v, sizeof(V));
    w.bar->arrive_and_wait();
    V r;  // (a lane past a partial warp's end: what a masked-out lane gives is undefined; here, the lane's own)
    std::memcpy(&r, &w.slot[source < w.lanes ? source : lane], sizeof(V));
    w.bar->arrive_and_wait();
    return r;
}
template <typename V>
V __shfl_up_sync(unsigned, V v, int delta) {
    const int lane = threadIdx.x & 31;
    return emu_exchange(v, lane >= delta ? lane - delta : lane);
}
template <typename V>
V __shfl_down_sync(unsigned, V v, int delta) {
    const int lane = threadIdx.x & 31;
    return emu_exchange(v, lane + delta < 32 ? lane + delta : lane);
}
inline unsigned __ballot_sync(unsigned, bool p) {
    EmuWarp& w = emu_block->warps[threadIdx.x >> 5];
    const int lane = threadIdx.x & 31;
    w.slot[lane] = p;
    w.bar->arrive_and_wait();
    unsigned bits = 0;
    for (int i = 0; i < w.lanes; ++i) bits |= (w.slot[i] ? 1u : 0u) << i;
    w.bar->arrive_and_wait();
    return bits;
}
inline bool __any_sync(unsigned mask, bool p) { return __ballot_sync(mask, p) != 0u; }
inline bool __all_sync(unsigned mask, bool p) { return __ballot_sync(mask, p) == 0xffffffffu; }
template <typename V>
V __shfl_sync(unsigned, V v, int source) {
    return emu_exchange(v, source);
}
template <typename V>
V __shfl_xor_sync(unsigned, V v, int mask) {
    return emu_exchange(v, (int)(threadIdx.x & 31) ^ mask);
}
template <typename V>
unsigned __match_any_sync(unsigned, V v) {  // the lanes whose value equals this lane's
    EmuWarp& w = emu_block->warps[threadIdx.x >> 5];
    const int lane = threadIdx.x & 31;
    static_assert(sizeof(V) <= 8, "one slot per lane");
    w.slot[lane] = 0;
    std::memcpy(&w.slot[lane], &v, sizeof(V));
    w.bar->arrive_and_wait();
    unsigned bits = 0;
    for (int i = 0; i < w.lanes; ++i) bits |= (w.slot[i] == w.slot[lane] ? 1u : 0u) << i;
    w.bar->arrive_and_wait();
    return bits;
}
inline void __syncwarp(unsigned = 0xffffffffu) { emu_block->warps[threadIdx.x >> 5].bar->arrive_and_wait(); }
inline void __stcs(int4* p, int4 v) { *p = v; }
template <typename V>
inline V __ldg(const V* p) { return *p; }  // the read-only path: on the CPU, a load
template <typename V>
inline V __ldcg(const V* p) { return *p; }  // through L2 only: on the CPU, a load

// kernels/common/cp_async.cuh on the CPU: the copy made at once (a schedule the waits allow); the kernels' dynamic
// shared memory a static buffer of the size the kernel states.
#define CP_ASYNC_ON_CPU 1
template <int L2_PREFETCH_BYTES = 0>
inline void cp_async16(void* shared_dst, const void* global_src) {
    std::memcpy(shared_dst, global_src, 16);
}
inline void cp_async_commit() {}
template <int N>
inline void cp_async_wait() {}
#define DYNAMIC_SHARED_ON_CPU(name, bytes) alignas(16) static unsigned char name[bytes]
// No inline PTX on the CPU: a kernel that has some gives its C++ form under PTX_ON_CPU (numpy_histogram.cu's
// SharedCounts).
#define PTX_ON_CPU 1
inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int min(int a, int b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline size_t __cvta_generic_to_shared(const void* p) { return (size_t)p; }  // (a shared window's address: unused)
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicOr(unsigned* p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicExch(unsigned* p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
// The other read-modify-write atomics the kernels use (bincount's extremes, the book reductions' last atomic:
// reduce_atomics.cuh), each a compare-exchange loop, as CUDA builds the ones it lacks from atomicCAS; each returns the
// old value, as CUDA's do.
template <typename V, typename F>
inline V emu_atomic_update(V* p, F f) {
    V seen;
    __atomic_load(p, &seen, __ATOMIC_SEQ_CST);
    V next = f(seen);
    while (!__atomic_compare_exchange(p, &seen, &next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) next = f(seen);
    return seen;
}
#define EMU_ATOMIC(name, V, expression) \
    inline V name(V* p, V v) { return emu_atomic_update(p, [v](V a) -> V { return expression; }); }
EMU_ATOMIC(atomicAdd, int, (int)((unsigned)a + (unsigned)v))  // wraps, as the GPU's
EMU_ATOMIC(atomicAdd, float, a + v)
EMU_ATOMIC(atomicAdd, double, a + v)
EMU_ATOMIC(atomicMax, int, a < v ? v : a)
EMU_ATOMIC(atomicMax, unsigned, a < v ? v : a)
EMU_ATOMIC(atomicMax, long long, a < v ? v : a)
EMU_ATOMIC(atomicMax, unsigned long long, a < v ? v : a)
EMU_ATOMIC(atomicMin, int, v < a ? v : a)
EMU_ATOMIC(atomicMin, unsigned, v < a ? v : a)
EMU_ATOMIC(atomicMin, long long, v < a ? v : a)
EMU_ATOMIC(atomicMin, unsigned long long, v < a ? v : a)
EMU_ATOMIC(atomicAnd, int, a & v)
EMU_ATOMIC(atomicAnd, unsigned, a & v)
EMU_ATOMIC(atomicAnd, unsigned long long, a & v)
EMU_ATOMIC(atomicOr, int, a | v)
EMU_ATOMIC(atomicOr, unsigned long long, a | v)
EMU_ATOMIC(atomicXor, int, a ^ v)
EMU_ATOMIC(atomicXor, unsigned, a ^ v)
EMU_ATOMIC(atomicXor, unsigned long long, a ^ v)
#undef EMU_ATOMIC
inline unsigned atomicCAS(unsigned* p, unsigned compare, unsigned v) {
    __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;  // the value seen: `compare` itself where the swap happened
}
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long compare, unsigned long long v) {
    __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;
}

// grid blocks of `threads` threads, one block after the other; after each, emu_after_block() (if defined: a hook)
inline void (*emu_after_block)() = nullptr;
template <typename F>
void emu_launch(int grid, int threads, F kernel) {
    emu_grid_dim = EmuDim{(unsigned)grid, 1, 1};
    emu_block_dim = EmuDim{(unsigned)threads, 1, 1};
    for (int b = 0; b < grid; ++b) {
        EmuBlock block(threads);
        std::vector<std::thread> pool;
        pool.reserve(threads);
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&, t, b] {
                emu_block = &block;
                emu_thread_index = EmuDim{(unsigned)t, 0, 0};
                emu_block_index = EmuDim{(unsigned)b, 0, 0};
                kernel();
            });
        }
        for (auto& th : pool) th.join();
        if (emu_after_block) emu_after_block();
    }
}

// The file's elements after `skip` default ones, in a heap array of exactly that many (not std::vector: bool), so
// AddressSanitizer reports a read past its end; `count` (if given) gets the file's element count.  nullptr if the
// file cannot be read.
template <typename E>
std::unique_ptr<E[]> emu_read_file(const char* path, long long skip = 0, long long* count = nullptr) {
    FILE* f = std::fopen(path, "rb");
    if (!f) return nullptr;
    std::fseek(f, 0, SEEK_END);
    const long long elements = std::ftell(f) / (long long)sizeof(E);
    std::fseek(f, 0, SEEK_SET);
    std::unique_ptr<E[]> v(new E[skip + elements]());
    const bool ok = std::fread(v.get() + skip, sizeof(E), elements, f) == (size_t)elements;
    std::fclose(f);
    if (count) *count = elements;
    return ok ? std::move(v) : nullptr;
}
// `count` elements into a new file; false where it cannot be written.
template <typename E>
bool emu_write_file(const char* path, const E* values, long long count) {
    FILE* f = std::fopen(path, "wb");
    if (!f) return false;
    const bool ok = std::fwrite(values, sizeof(E), count, f) == (size_t)count;
    std::fclose(f);
    return ok;
}
