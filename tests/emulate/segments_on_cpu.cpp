// segments_on_cpu.cpp -- runs kernels/scan/segmented_lookback.cu and kernels/reduction/segmented_fast.cu on the CPU
// (cuda_on_cpu.h) for tests/unit/test_segments_emulated.py:
//     segments_on_cpu MODE N S x.bin offsets.bin out.bin     MODE: scan, scan_exclusive, reduce, check
// (check: kernels/scan/segment_offsets.cu; out: its one int flag)
// x: N values of IN_TYPE, offsets: S + 1 of OFFSET_TYPE, out: N (scan) or S (reduce) values of OUT_TYPE.
#include "cuda_on_cpu.h"

#include <cstdio>
#include <cstdlib>
#include <string>

// 8-byte values: tile_status.cuh's TileStatus<V, 8> stores and loads its (half, flag) pairs with PTX; here a tile's
// pair is its value word and then its flag word, written in that order (blocks run one after the other, so a
// reader sees a whole pair).  Same layout: words[4t, 4t+1] the A pair, words[4t+2, 4t+3] the P pair.
#include "../../kernels/common/operators.cuh"
#include "../../kernels/common/tile_status.cuh"

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

#include "../../kernels/reduction/segmented_fast.cu"
#include "../../kernels/scan/segment_offsets.cu"
#include "../../kernels/scan/segmented_lookback.cu"

template <typename E>
static std::vector<E> read_file(const char* path, long long count) {
    std::vector<E> v(count);
    FILE* f = std::fopen(path, "rb");
    if (!f || std::fread(v.data(), sizeof(E), count, f) != (size_t)count) std::exit(2);
    std::fclose(f);
    v.shrink_to_fit();
    return v;
}

int main(int argc, char** argv) {
    if (argc != 7) return 2;
    const std::string mode = argv[1];
    const long long n = std::atoll(argv[2]), S = std::atoll(argv[3]);
    // exactly sized heap arrays: AddressSanitizer reports any access past them
    std::vector<InType> x = read_file<InType>(argv[4], n);
    std::vector<Offset> o = read_file<Offset>(argv[5], S + 1);
    const long long outputs = mode == "reduce" ? S : n;
    std::vector<OutType> out(outputs);
    const long long tiles = (n + SEG_TILE - 1) / SEG_TILE;
    std::vector<unsigned> counter(2, 0u);
    std::vector<unsigned long long> status(4 * tiles, 0ull);  // (the 4-byte layout needs only `tiles` words)
    const unsigned epoch = 1;
    emu_after_block = [] {  // the most windows one block read
        static long long before = 0;
        const long long now = emu_windows;
        if (now - before > emu_most_windows) emu_most_windows = now - before;
        before = now;
    };
    if (mode == "check") {  // the device check: 3 blocks, so that the grid-stride loop wraps for large S
        std::vector<int> bad(1, 0);
        emu_launch(3, 256, [&] { segment_offsets_check(o.data(), S, n, bad.data()); });
        FILE* f = std::fopen(argv[6], "wb");
        if (!f || std::fwrite(bad.data(), sizeof(int), 1, f) != 1) return 2;
        std::fclose(f);
        return 0;
    }
    if (mode == "reduce") {
        emu_launch((int)tiles, BLOCK_THREADS, [&] {
            segmented_fast_reduce(out.data(), x.data(), n, o.data(), S, counter.data(), status.data(), tiles, epoch);
        });
    } else {
        const int exclusive = mode == "scan_exclusive";
        emu_launch((int)tiles, BLOCK_THREADS, [&] {
            segmented_lookback_scan(out.data(), x.data(), n, o.data(), S, exclusive, counter.data(), status.data(),
                                    tiles, epoch);
        });
    }
    if (counter[0] != 0u || counter[1] != 0u) return 3;  // the last block puts the counter back
    std::fprintf(stderr, "windows %lld most %lld\n", (long long)emu_windows, (long long)emu_most_windows);
    FILE* f = std::fopen(argv[6], "wb");
    if (!f || std::fwrite(out.data(), sizeof(OutType), outputs, f) != (size_t)outputs) return 2;
    std::fclose(f);
    return 0;
}
