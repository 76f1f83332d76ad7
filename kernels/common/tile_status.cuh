// tile_status.cuh -- the tile status words of a single-pass scan with decoupled look-back (Merrill & Garland,
// "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVR-2016-002, §4; CUB keeps the same in
// single_pass_scan_operators.cuh as ScanTileState).  Every tile publishes its aggregate (status A) as soon as it
// has it and its inclusive prefix (status P) once it knows it; X (nothing yet) must be 0, what a zeroed buffer holds.
//
// Epochs.  A flag word is (epoch << 2) | status, epoch = 1, 2, ... < 2^30 the host's count of launches on this
// buffer; a word of another epoch (an earlier launch, or the zeroes of a new buffer) reads as X.  So the buffer is
// zeroed once, when it is allocated, and not before every launch.  (Epoch 0 on a freshly zeroed buffer is the
// untagged protocol: also correct.)  A launch captured into a CUDA graph cannot take a host epoch, which would be
// frozen into the graph: decoupled_lookback.cu reads its epoch from the status buffer and advances it on the device
// (EPOCH_ON_DEVICE), the other look-back kernels get a buffer of their own zeroed by a memset node before them on
// every replay, and epoch 0 (pyscan/runtime/capture.py; docs/runtime.md, "CUDA graphs").  Eager launches keep the
// kept buffer and the host's epochs: no memset per call.
//
// Two layouts, chosen by the size of the value type V:
// * 4-byte values, TileStatus<V, 4>: flag and value packed into ONE 64-bit word, (value bits << 32) | flag,
//   written and read with single 64-bit volatile accesses.  An aligned 64-bit access is single-copy atomic, so a
//   reader sees either the old or the new (flag, value) pair: no fence is needed between value and flag.
//   Layout: words[t] for tile t.
// * 8-byte values, TileStatus<V, 8>: a (flag, value) pair does not fit one 64-bit word, and 128-bit plain accesses
//   are not promised to be single-copy atomic, so each value is split: two words (low half << 32 | flag, high half
//   << 32 | flag), written together by one 16-byte store and read by one 16-byte load (each 8-byte element
//   single-copy atomic).  A tile has an A pair and a P pair, each written at most once per launch: a reader that
//   sees this launch's flag in BOTH words of a pair has both halves of the one value written (the epochs make the
//   words of earlier launches read as X).  No fences (flags apart from values with __threadfence on both sides
//   ran int64 scans at 0.70 x copy, these pairs at 0.94 x: docs/decoupled_lookback_tuning.md).
//   Layout: words[4t, 4t+1] the A pair of tile t, words[4t+2, 4t+3] its P pair (16-byte aligned).
//
// read_window(): all 32 lanes of a warp read one predecessor each (lane i: tile `window - i`) and poll until none
// of them is X; a tile < 0 (before the first) reads as a P of the identity.  peek(): one read of one tile's status,
// no waiting (X, A or P), for a thread that keeps several reads in flight itself (axis_columns.cu's per-lane
// window).
#pragma once

enum : unsigned { STATUS_X = 0, STATUS_A = 1, STATUS_P = 2 };
constexpr unsigned EPOCHS = 1u << 30;  // epochs are 0 .. EPOCHS - 1 (30 bits of the flag word)

__device__ __forceinline__ unsigned tag_flag(unsigned status, unsigned epoch) { return (epoch << 2) | status; }
__device__ __forceinline__ unsigned read_flag(unsigned word, unsigned epoch) {
    return (word >> 2) == epoch ? (word & 3u) : (unsigned)STATUS_X;
}

template <typename V, int BYTES = sizeof(V)>
struct TileStatus;

template <typename V>
struct TileStatus<V, 4> {  // packed (value << 32) | flag
    static constexpr int WORDS = 1;  // 64-bit words per tile
    unsigned long long* words;
    unsigned epoch;
    __device__ TileStatus(unsigned long long* status, unsigned epoch_) : words(status), epoch(epoch_) {}
    __device__ static unsigned long long load(const unsigned long long* p) {
        return *(const volatile unsigned long long*)p;
    }
    __device__ void publish(int tile, unsigned flag, V value) {
        unsigned bits;
        memcpy(&bits, &value, 4);
        *(volatile unsigned long long*)&words[tile] = ((unsigned long long)bits << 32) | tag_flag(flag, epoch);
    }
    // Waits until the status of `tile` is not X.  All 32 lanes run the same loop (one __any_sync per iteration
    // for the whole warp).  Returns the extra polls.
    __device__ int read_window(int tile, V identity, unsigned& flag, V& value) {
        unsigned long long w = tag_flag(STATUS_P, epoch);
        int polls = 0;
        if (tile >= 0) w = load(&words[tile]);
        while (__any_sync(0xffffffffu, read_flag((unsigned)w, epoch) == STATUS_X)) {
            ++polls;
            if (tile >= 0) w = load(&words[tile]);
        }
        flag = read_flag((unsigned)w, epoch);
        const unsigned bits = (unsigned)(w >> 32);
        memcpy(&value, &bits, 4);
        if (tile < 0) value = identity;
        return polls;
    }
    __device__ unsigned peek(int tile, V& value) const {
        const unsigned long long w = load(&words[tile]);
        const unsigned bits = (unsigned)(w >> 32);
        memcpy(&value, &bits, 4);
        return read_flag((unsigned)w, epoch);
    }
};

template <typename V>
struct TileStatus<V, 8> {  // per tile: the A pair and the P pair of (half << 32) | flag words
    static constexpr int WORDS = 4;  // 64-bit words per tile
    unsigned long long* words;
    unsigned epoch;
    __device__ TileStatus(unsigned long long* status, unsigned epoch_) : words(status), epoch(epoch_) {}
    __device__ static void store_pair(unsigned long long* p, unsigned long long w0, unsigned long long w1) {
        asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};" ::"l"(p), "l"(w0), "l"(w1) : "memory");
    }
    __device__ static void load_pair(const unsigned long long* p, unsigned long long& w0, unsigned long long& w1) {
        asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];" : "=l"(w0), "=l"(w1) : "l"(p) : "memory");
    }
    __device__ void publish(int tile, unsigned flag, V value) {
        unsigned long long bits;
        memcpy(&bits, &value, 8);
        const unsigned long long tag = tag_flag(flag, epoch);
        store_pair(&words[4 * (long long)tile + (flag == STATUS_P ? 2 : 0)], (bits << 32) | tag,
                   (bits & 0xffffffff00000000ull) | tag);
    }
    // A pair is whole when both its words carry this launch's tag: each word is written once per launch, so both
    // halves are of the one value written then.
    __device__ unsigned state(unsigned long long a0, unsigned long long a1, unsigned long long p0,
                              unsigned long long p1) const {
        if (read_flag((unsigned)p0, epoch) == STATUS_P && read_flag((unsigned)p1, epoch) == STATUS_P) return STATUS_P;
        if (read_flag((unsigned)a0, epoch) == STATUS_A && read_flag((unsigned)a1, epoch) == STATUS_A) return STATUS_A;
        return STATUS_X;
    }
    __device__ int read_window(int tile, V identity, unsigned& flag, V& value) {
        const unsigned long long p_tag = tag_flag(STATUS_P, epoch);
        unsigned long long a0 = 0, a1 = 0, p0 = p_tag, p1 = p_tag;  // tile < 0: a P of the identity
        int polls = 0;
        if (tile >= 0) {
            load_pair(&words[4 * (long long)tile], a0, a1);
            load_pair(&words[4 * (long long)tile + 2], p0, p1);
        }
        while (__any_sync(0xffffffffu, state(a0, a1, p0, p1) == STATUS_X)) {
            ++polls;
            if (tile >= 0) {
                load_pair(&words[4 * (long long)tile], a0, a1);
                load_pair(&words[4 * (long long)tile + 2], p0, p1);
            }
        }
        flag = state(a0, a1, p0, p1);
        const unsigned long long lo = flag == STATUS_P ? p0 : a0, hi = flag == STATUS_P ? p1 : a1;
        const unsigned long long bits = (hi & 0xffffffff00000000ull) | (lo >> 32);
        memcpy(&value, &bits, 8);
        if (tile < 0) value = identity;
        return polls;
    }
    __device__ unsigned peek(int tile, V& value) const {
        unsigned long long a0, a1, p0, p1;
        load_pair(&words[4 * (long long)tile], a0, a1);
        load_pair(&words[4 * (long long)tile + 2], p0, p1);
        const unsigned flag = state(a0, a1, p0, p1);
        const unsigned long long lo = flag == STATUS_P ? p0 : a0, hi = flag == STATUS_P ? p1 : a1;
        const unsigned long long bits = (hi & 0xffffffff00000000ull) | (lo >> 32);
        memcpy(&value, &bits, 8);
        return flag;
    }
};
