// rule.cuh -- what the Game of Life kernels share (Hands-On GPU Programming with Python and CUDA, ch. 4): the cell
// type, Conway's rule and the book's nbrs() on a torus for the one-cell-per-thread kernels (global.cu,
// iterative_block.cu, shared.cu, tiled.cu), and the same rule bit-sliced, 32 cells a word, for the bit-packed
// kernels (fast.cu, temporal.cu).
#pragma once

#ifndef ELEM_TYPE
#define ELEM_TYPE int  // the book's lattice is int32; pyscan also specialises the kernels for unsigned char (uint8, bool)
#endif
using cell_t = ELEM_TYPE;

// Conway's rule: a live cell with 2 or 3 live neighbours lives on, a dead cell with exactly 3 becomes alive.  The
// book's update (`if (cell == 1) switch (n) ... else if (cell == 0) switch (n) ...`) leaves a cell holding any
// other value unset; here alive means non-zero and every cell gets a value.
__device__ __forceinline__ cell_t life_rule(cell_t cell, int neighbours) {
    return (cell_t)(neighbours == 3 || (cell != 0 && neighbours == 2));
}

// The book's nbrs(): the sum of the eight neighbours of (x, y), wrapping around the height x width torus.  x in
// [0, width), y in [0, height).  The book wraps with (x + WIDTH) % WIDTH; comparisons do the same without a
// division.  Row offsets are long long: a lattice may hold more than 2^31 cells.  `in` may be global or shared.
__device__ __forceinline__ int nbrs(int x, int y, const cell_t* in, int height, int width) {
    const int xl = (x == 0) ? width - 1 : x - 1;   // left column, wrapped
    const int xr = (x == width - 1) ? 0 : x + 1;   // right column, wrapped
    const long long up = (long long)((y == 0) ? height - 1 : y - 1) * width;
    const long long row = (long long)y * width;
    const long long down = (long long)((y == height - 1) ? 0 : y + 1) * width;
    return in[up + xl] + in[up + x] + in[up + xr]
         + in[row + xl]             + in[row + xr]
         + in[down + xl] + in[down + x] + in[down + xr];
}

// ---- The rule bit-sliced: 32 cells at once, one per bit position of a 32-bit word (fast.cu, temporal.cu) ----
// The neighbour count per bit position: each row's horizontal 3-sum (west + centre + east) is a 2-bit number
// (h1 h0); s = hsum(row above) + hsum(row) + hsum(row below) is the 3x3 sum INCLUDING the cell (0..9), so Conway's
// "n == 3, or alive and n == 2" with n = s - alive becomes: s == 3, or alive and s == 4.

// Full adder, bit-parallel: a + b + c = 2 * carry + sum, for 32 independent bit positions.
__device__ __forceinline__ void full_add(unsigned a, unsigned b, unsigned c, unsigned& sum, unsigned& carry) {
    const unsigned t = a ^ b;
    sum = t ^ c;
    carry = (a & b) | (t & c);
}

// The horizontal 3-sums (h1 h0) of a row word c, given its west and east neighbour vectors (c shifted by one bit,
// the missing edge bit taken from the neighbouring word).
__device__ __forceinline__ void life_row_sum(unsigned west, unsigned c, unsigned east, unsigned& h0, unsigned& h1) {
    full_add(west, c, east, h0, h1);
}

// The next generation of the 32 cells of `centre` from the horizontal 3-sums of the rows above, at and below.
__device__ __forceinline__ unsigned life_rule_bitsliced(unsigned up0, unsigned up1, unsigned mid0, unsigned mid1,
                                                        unsigned down0, unsigned down1, unsigned centre) {
    // s = (up1 up0) + (mid1 mid0) + (down1 down0) = x0 + 2 * (x1 + z0 + 2 * z1)
    unsigned x0, x1, z0, z1;
    full_add(up0, mid0, down0, x0, x1);  // ones:  x0 (weight 1), carry x1 (weight 2)
    full_add(up1, mid1, down1, z0, z1);  // twos:  z0 (weight 2), carry z1 (weight 4)
    // With q = x1 + z0 + 2*z1 (so s = x0 + 2q):  s == 3 <=> x0 and q == 1;  s == 4 <=> !x0 and q == 2.
    const unsigned q_is_1 = ~z1 & (x1 ^ z0);
    const unsigned q_is_2 = (z1 & ~(x1 | z0)) | (~z1 & x1 & z0);
    return (x0 & q_is_1) | (~x0 & centre & q_is_2);
}
