// tile_status_on_cpu.h -- kernels/common/tile_status.cuh's status words on the CPU emulator (cuda_on_cpu.h), for
// the emulated look-back kernels (segments_on_cpu.cpp, axis_on_cpu.cpp).  Include after the defines and before the
// kernel files.
#pragma once

#include <atomic>
#include <cstdlib>

#include "../../kernels/common/operators.cuh"
#include "../../kernels/common/tile_status.cuh"
#include "cuda_on_cpu.h"

// 8-byte values: tile_status.cuh's TileStatus<V, 8> stores and loads its (half, flag) pairs with PTX; here a tile's
// pair is its value word and then its flag word, written in that order (blocks run one after the other, so a
// reader sees a whole pair).  Same layout: words[4t, 4t+1] the A pair, words[4t+2, 4t+3] the P pair.
// EMU_HIDE_P: every tile that published an A (one without a head) has its P hidden from the look-backs with
// probability 1/2 (drawn per tile), as if it had not published it yet: the look-backs then combine A's through
// several windows of 32 before they meet a P, the schedules that blocks in index order never make.  Built with
// -DEMU_STATUS, the 4-byte types use this status too (so that a tile's A and P are kept apart).
inline bool emu_hidden(long long tile) {
    static const char* setting = std::getenv("EMU_HIDE_P");  // "SEED" or "SEED:PERCENT" (default 50)
    if (!setting) return false;
    char* rest = nullptr;
    const unsigned long long seed = std::strtoull(setting, &rest, 10);
    const unsigned long long percent = rest && *rest == ':' ? std::strtoull(rest + 1, nullptr, 10) : 50;
    unsigned long long h = (unsigned long long)tile * 0x9E3779B97F4A7C15ull + seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return h % 100 < percent;
}
inline std::atomic<long long> emu_windows{0}, emu_most_windows{0};  // windows read by warp 0s, the most by one tile

template <typename V>
struct EmuTileStatus8 {
    static constexpr int WORDS = 4;  // 64-bit words per tile: a value word and a flag word for A, the same for P
    unsigned long long* words;
    unsigned epoch;
    EmuTileStatus8(unsigned long long* status, unsigned epoch_) : words(status), epoch(epoch_) {}
    void publish(int tile, unsigned flag, V value) {
        unsigned long long bits;
        std::memcpy(&bits, &value, 8);
        unsigned long long* p = &words[4LL * tile + (flag == STATUS_P ? 2 : 0)];
        p[0] = bits;
        __atomic_store_n(&p[1], (unsigned long long)tag_flag(flag, epoch), __ATOMIC_RELEASE);
    }
    unsigned state(long long tile) const {
        const bool a = read_flag((unsigned)__atomic_load_n(&words[4 * tile + 1], __ATOMIC_ACQUIRE), epoch) == STATUS_A;
        if (read_flag((unsigned)__atomic_load_n(&words[4 * tile + 3], __ATOMIC_ACQUIRE), epoch) == STATUS_P &&
            !(a && emu_hidden(tile)))
            return STATUS_P;
        return a ? STATUS_A : STATUS_X;
    }
    int read_window(int tile, V identity, unsigned& flag, V& value) {
        if ((threadIdx.x & 31) == 0) ++emu_windows;
        unsigned st = tile < 0 ? (unsigned)STATUS_P : state(tile);
        while (__any_sync(0xffffffffu, st == STATUS_X)) st = tile < 0 ? (unsigned)STATUS_P : state(tile);
        flag = st;
        if (tile < 0) {
            value = identity;
        } else {
            std::memcpy(&value, &words[4LL * tile + (st == STATUS_P ? 2 : 0)], 8);
        }
        return 0;
    }
    unsigned peek(long long tile, V& value) const {  // one read, no waiting (axis_columns.cu's windows)
        if (threadIdx.x == 0) ++emu_windows;  // thread 0 reads one slot of every window its block reads
        const unsigned st = state(tile);
        if (st != STATUS_X) std::memcpy(&value, &words[4LL * tile + (st == STATUS_P ? 2 : 0)], 8);
        return st;
    }
};
template <>
struct TileStatus<long long, 8> : EmuTileStatus8<long long> {
    using EmuTileStatus8<long long>::EmuTileStatus8;
};
template <>
struct TileStatus<unsigned long long, 8> : EmuTileStatus8<unsigned long long> {
    using EmuTileStatus8<unsigned long long>::EmuTileStatus8;
};
template <>
struct TileStatus<double, 8> : EmuTileStatus8<double> {
    using EmuTileStatus8<double>::EmuTileStatus8;
};
#ifdef EMU_STATUS
template <typename V>
struct EmuTileStatus4 : EmuTileStatus8<V> {  // a 4-byte value in the low half of the value word
    using EmuTileStatus8<V>::EmuTileStatus8;
    void publish(int tile, unsigned flag, V value) {
        unsigned long long wide = 0;
        std::memcpy(&wide, &value, 4);
        double as;
        std::memcpy(&as, &wide, 8);
        EmuTileStatus8<double>(this->words, this->epoch).publish(tile, flag, as);
    }
    int read_window(int tile, V identity, unsigned& flag, V& value) {
        double as;
        const int polls = EmuTileStatus8<double>(this->words, this->epoch).read_window(tile, 0.0, flag, as);
        std::memcpy(&value, &as, 4);
        if (tile < 0) value = identity;
        return polls;
    }
    unsigned peek(long long tile, V& value) const {
        double as = 0;
        const unsigned st = EmuTileStatus8<double>(this->words, this->epoch).peek(tile, as);
        std::memcpy(&value, &as, 4);
        return st;
    }
};
template <>
struct TileStatus<int, 4> : EmuTileStatus4<int> {
    using EmuTileStatus4<int>::EmuTileStatus4;
};
template <>
struct TileStatus<unsigned, 4> : EmuTileStatus4<unsigned> {
    using EmuTileStatus4<unsigned>::EmuTileStatus4;
};
template <>
struct TileStatus<float, 4> : EmuTileStatus4<float> {
    using EmuTileStatus4<float>::EmuTileStatus4;
};
#endif
