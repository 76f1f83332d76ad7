// rule.cuh -- what the one-cell-per-thread Game of Life kernels share (Hands-On GPU Programming with Python and
// CUDA, ch. 4): the cell type, Conway's rule and the book's nbrs() on a torus.  Included by global.cu,
// iterative_block.cu, shared.cu and tiled.cu.
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
