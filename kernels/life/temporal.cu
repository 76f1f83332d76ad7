// temporal.cu -- beyond the book: the bit-packed Life of fast.cu (32 cells a 32-bit word, the bit-sliced rule of
// rule.cuh) with temporal blocking: one launch advances the lattice k generations (1 <= k <= MAX_K), reading and
// writing each word of the lattice about once for the k of them instead of k times.  PMPP's stencil chapter (4th
// ed., ch. 8) tiles a stencil sweep in shared memory with its halo cells (§8.3) and reuses the loaded planes for
// several outputs along z (thread coarsening and register tiling, §8.4-8.5); here the reuse is along time.
//
// Each block owns one output tile of TILE_ROWS rows x TILE_WORDS words (32 * TILE_WORDS columns).  It loads the
// tile with a halo of k rows above and below and of ONE word (32 columns) left and right into shared memory:
// SW = TILE_WORDS + 2 words a row (with the default TILE_WORDS = 30, one warp lane per word of a shared row),
// TILE_ROWS + 2k rows.  Then it runs k generations in shared memory on a shrinking valid region:
//   - generation g (1..k) computes rows [g, TILE_ROWS + 2k - g) of the shared tile: row i needs rows i-1..i+1 of
//     generation g-1, which are valid there, so after k generations exactly the tile's own rows are;
//   - across the row, the words outside the shared tile are taken as 0: the wrong bits this brings in start at
//     the outer edge of the halo words and move inward one column a generation, so after k <= 32 generations
//     they have not left the halo words, and the TILE_WORDS inner words are exact;
//   - the last generation is written straight to global memory (the inner words of the tile's rows only).
// Blocks cannot see each other's shared memory: the halo is recomputed by the neighbouring tiles (the price:
// (TILE_ROWS + 2k) / TILE_ROWS x SW / TILE_WORDS words computed per output word, about (1 + k / TILE_ROWS)
// x 1.07 on average over the k generations), and the host swaps two packed buffers between launches as for fast.cu.
//
// Any height x width on the torus, with the layout of fast.cu and pack.cu (row y is words_per_row =
// ceil(width / 32) words, bit j of word w = column 32w + j, the padding bits past the width 0): the shared tile
// holds the PERIODIC EXTENSION of the lattice -- shared word j of shared row i is the 32 columns starting at
// column x0 - 32 + 32j of row y0 - k + i, each taken modulo the width and the height.  Life on the periodic
// extension is Life on the torus, so nothing else needs to know about the wrap-around.  A word whose 32 columns
// all lie inside [0, width) is one aligned load; the few that straddle the seam (the halo word left of column 0,
// the last word of a row when width is not a multiple of 32, and whatever lies past it) are gathered bit by bit.
// Lattices narrower or lower than a tile work the same way (the extension repeats the lattice several times in a
// tile); words and rows past the lattice are computed from the extension and not stored.
#include "rule.cuh"  // full_add, life_row_sum, life_rule_bitsliced: the rule shared with the other Life kernels
#ifndef TILE_WORDS
#define TILE_WORDS 30  // output words per tile row; + 2 halo words = 32 = one warp lane per word of a shared row
#endif
#ifndef TILE_ROWS
#define TILE_ROWS 64  // output rows per tile
#endif
#ifndef MAX_K
#define MAX_K 16  // the most generations one launch may run (sizes the shared tile); at most 32 (one halo word)
#endif
#ifndef BLOCK
#define BLOCK 256  // threads: BLOCK / 32 warps, each walking a strip of the shared rows
#endif
typedef unsigned int word_t;

constexpr int SW = TILE_WORDS + 2;           // words of a shared row: the tile and one halo word each side
constexpr int SH_MAX = TILE_ROWS + 2 * MAX_K;  // rows of the shared tile for k = MAX_K
constexpr int WARPS = BLOCK / 32;
static_assert(SW == 32, "one warp lane per word of a shared row: TILE_WORDS must be 30");
static_assert(BLOCK % 32 == 0 && BLOCK >= 32, "BLOCK is a number of whole warps");
static_assert(MAX_K >= 1 && MAX_K <= 32, "the halo is one 32-bit word wide: at most 32 generations a launch");

// v modulo n, for any int v (a halo or extension coordinate may lie far outside [0, n) when n is small)
__device__ __forceinline__ int wrap(int v, int n) {
    const int m = v % n;
    return m < 0 ? m + n : m;
}

// The 32 columns [c, c + 32) of a lattice row, each modulo the width, as one word (bit j = column c + j).
__device__ __forceinline__ word_t load_columns(const word_t* __restrict__ row, int c, int width) {
    if (c >= 0 && c + 32 <= width) return row[c >> 5];  // c is a multiple of 32 here: one aligned word
    word_t bits = 0;
    int x = wrap(c, width);
    for (int j = 0; j < 32; j++) {  // the seam: bit by bit
        bits |= ((row[x >> 5] >> (x & 31)) & 1u) << j;
        x = (x + 1 == width) ? 0 : x + 1;
    }
    return bits;
}

// Launch: 1-D grid of tiles_x * tiles_y blocks of BLOCK threads, tiles_x = ceil(words_per_row / TILE_WORDS),
// tiles_y = ceil(height / TILE_ROWS), block b = tile (b % tiles_x, b / tiles_x); 1 <= k <= MAX_K.
extern "C" __global__ void __launch_bounds__(BLOCK)
life_temporal(word_t* __restrict__ out, const word_t* __restrict__ in, int height, int width, int words_per_row,
              int k) {
    __shared__ word_t tile[2][SH_MAX][SW];  // ping-pong: generation g reads tile[(g - 1) & 1], writes tile[g & 1]
    const int tiles_x = (words_per_row + TILE_WORDS - 1) / TILE_WORDS;
    const int tx = (int)(blockIdx.x % tiles_x), ty = (int)(blockIdx.x / tiles_x);
    const int w0 = tx * TILE_WORDS;             // the tile's first output word of a row
    const int y0 = ty * TILE_ROWS;              // the tile's first output row
    const int sh = TILE_ROWS + 2 * k;           // rows of the shared tile for this k
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int c = 32 * (w0 - 1 + lane);         // first column of this lane's shared word (lane 0: the left halo)

    // Load: warp w takes shared rows w, w + WARPS, ...; the 32 lanes read 32 consecutive words of a row.
    for (int i = warp; i < sh; i += WARPS) {
        const word_t* row = in + (long long)wrap(y0 - k + i, height) * words_per_row;
        tile[0][i][lane] = load_columns(row, c, width);
    }
    __syncthreads();

    // Where this lane's output goes in the last generation: inner lanes of words inside the row; the padding
    // bits of a row's last word masked to 0.
    const int w = w0 - 1 + lane;
    const bool stores = lane >= 1 && lane <= TILE_WORDS && w < words_per_row;
    const int r = width - 32 * (words_per_row - 1);  // valid bits in a row's last word, 1..32
    const word_t mask = (w == words_per_row - 1 && r < 32) ? ((1u << r) - 1u) : ~0u;

    for (int g = 1; g <= k; g++) {
        const word_t (*src)[SW] = tile[(g - 1) & 1];
        word_t (*dst)[SW] = tile[g & 1];
        // Rows [g, sh - g), split into WARPS contiguous strips; each warp slides a window of three rows' horizontal
        // sums down its strip (each row's sums serve three output rows), as fast.cu's threads do.
        const int first = g, count = sh - 2 * g;
        const int strip = (count + WARPS - 1) / WARPS;
        const int begin = first + warp * strip;
        const int end = min(begin + strip, first + count);
        if (begin < end) {  // uniform within the warp: the shuffles below see all 32 lanes
            // Horizontal 3-sums of shared row i: the neighbours' edge bits come from the lanes beside (shuffles);
            // past the shared tile they are 0 (the wrong bits stay in the halo words for k <= 32, see above).
            auto row_sum = [&](int i, word_t& centre, word_t& h0, word_t& h1) {
                centre = src[i][lane];
                const word_t left = __shfl_up_sync(0xffffffffu, centre, 1);
                const word_t right = __shfl_down_sync(0xffffffffu, centre, 1);
                const word_t west = (centre << 1) | (lane > 0 ? left >> 31 : 0u);
                const word_t east = (centre >> 1) | (lane < 31 ? right << 31 : 0u);
                life_row_sum(west, centre, east, h0, h1);
            };
            word_t c_up, up0, up1, c_mid, mid0, mid1, c_down, down0, down1;
            row_sum(begin - 1, c_up, up0, up1);
            row_sum(begin, c_mid, mid0, mid1);
            for (int i = begin; i < end; i++) {
                row_sum(i + 1, c_down, down0, down1);
                const word_t next = life_rule_bitsliced(up0, up1, mid0, mid1, down0, down1, c_mid);
                if (g < k) {
                    dst[i][lane] = next;
                } else {  // the last generation: rows [k, k + TILE_ROWS) are the tile's own rows
                    const int y = y0 + i - k;
                    if (stores && y < height) out[(long long)y * words_per_row + w] = next & mask;
                }
                up0 = mid0; up1 = mid1;
                mid0 = down0; mid1 = down1; c_mid = c_down;
            }
        }
        __syncthreads();
    }
}
