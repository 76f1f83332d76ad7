// fast.cu -- beyond the book: Game of Life on a bit-packed lattice, 32 cells per 32-bit word, with bit-parallel
// ("SIMD within a register") adder logic: one thread computes 32 cells with a few dozen integer instructions.
//
// Layout (pack.cu): row y is words_per_row = ceil(width / 32) words; bit j of word k is column x = 32k + j; the
// padding bits past the width in the last word of a row are 0 on input and kept 0 on output.
//
// Why it is fast: the book's kernel moves 4 bytes per cell (int32) nine times (each neighbour is re-read); here
// a cell is one bit, a word of 32 cells is read about three times per generation (by its own thread and as the
// edge bit of its two horizontal neighbours' words, mostly hits in L1), and the neighbour count of 32 cells is
// computed at once with bitwise full adders instead of 8 additions per cell.
//
// The neighbour count, per bit position (i.e. per cell, all 32 at once):
//   1. For each row, the horizontal sum of three cells (west + centre + east), a 2-bit number (h1 h0): the west
//      and east vectors are the row word shifted by one bit, with the missing edge bit taken from the neighbouring
//      word -- or, at the ends of the row, from the other end (torus wrap-around).
//   2. s = hsum(row above) + hsum(row) + hsum(row below), the 3x3 sum INCLUDING the cell itself (0..9).
//      Conway's rule "n == 3, or alive and n == 2" with n = s - alive becomes: s == 3, or alive and s == 4.
//   Each thread walks down a strip of `rows` rows, so each row's horizontal sum is computed once and reused for
//   the three output rows that need it (a sliding window of three rows in registers).
//
// Wrap-around for ANY width (not only multiples of 32): with r = width - 32 * (words_per_row - 1) valid bits in
// the last word (1..32),
//   - the west neighbour of column 0 is column width-1, i.e. bit r-1 of the row's last word;
//   - the east neighbour of column width-1 (bit r-1 of the last word) is column 0, i.e. bit 0 of word 0; it is put
//     at position r-1 of the last word's east vector (the shifted word has a 0 there: padding).
//   - the west vector of the last word carries bit r-1 into padding position r: the garbage only reaches padding
//     outputs, which are masked to 0 before the store.
//   This also covers widths 1..32 (one word: its own last and first word).  Rows wrap by the real height.
#include "rule.cuh"  // full_add, life_rule_bitsliced: the rule shared with the other Life kernels
#ifndef BLOCK
#define BLOCK 128
#endif
typedef unsigned int word_t;

// Launch: 1-D grid of BLOCK threads covering ceil(height / rows) * words_per_row threads.
extern "C" __global__ void __launch_bounds__(BLOCK)
life_bitpacked(word_t* __restrict__ out, const word_t* __restrict__ in, int height, int width, int words_per_row,
               int rows) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int strips = (height + rows - 1) / rows;
    if (t >= (long long)strips * words_per_row) return;
    // Consecutive threads take consecutive words of a row: their loads are coalesced.
    const int strip = (int)(t / words_per_row);
    const int k = (int)(t - (long long)strip * words_per_row);
    const int y_begin = strip * rows;
    const int y_end = min(y_begin + rows, height);

    const int last = words_per_row - 1;
    const int r = width - 32 * last;                      // valid bits in the last word, 1..32
    const int k_west = (k == 0) ? last : k - 1;           // the word holding the west neighbour of bit 0
    const int bit_west = (k == 0) ? r - 1 : 31;           // ... and its bit
    const int k_east = (k == last) ? 0 : k + 1;           // the word whose bit 0 is the east neighbour of our top bit
    const int pos_east = (k == last) ? r - 1 : 31;        // ... and where it goes in our east vector
    const word_t mask = (k == last && r < 32) ? ((1u << r) - 1u) : ~0u;  // keeps the padding bits 0

    // Horizontal 3-sums of row y (wrapped into [0, height)): h1 h0 = west + centre + east; c = the row's word.
    auto row_sum = [&](int y, word_t& c, word_t& h0, word_t& h1) {
        y = (y < 0) ? y + height : (y >= height ? y - height : y);  // y is in [-1, height]
        const word_t* p = in + (long long)y * words_per_row;
        c = p[k];
        const word_t west = (c << 1) | ((p[k_west] >> bit_west) & 1u);
        const word_t east = (c >> 1) | ((p[k_east] & 1u) << pos_east);
        life_row_sum(west, c, east, h0, h1);
    };

    word_t c_up, up0, up1, c_mid, mid0, mid1, c_down, down0, down1;
    row_sum(y_begin - 1, c_up, up0, up1);
    row_sum(y_begin, c_mid, mid0, mid1);
    for (int y = y_begin; y < y_end; y++) {
        row_sum(y + 1, c_down, down0, down1);
        const word_t next = life_rule_bitsliced(up0, up1, mid0, mid1, down0, down1, c_mid);
        out[(long long)y * words_per_row + k] = next & mask;
        up0 = mid0; up1 = mid1;
        mid0 = down0; mid1 = down1; c_mid = c_down;
    }
}
