// iterative_block.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4 ("Thread synchronization and
// intercommunication"): conway_ker with an `iters` argument, many generations in ONE launch.
//
// The lattice is updated in place by a single block, one thread per cell.  Every generation has two phases
// separated by __syncthreads(): all threads read their neighbours and compute the new value, then (after the
// barrier) all threads write it, then a second barrier before the next generation's reads.  Without the first
// barrier a fast thread could overwrite a cell a slower neighbour has not read yet.
//
// __syncthreads() synchronises the threads of ONE block only; there is no barrier across blocks inside a
// kernel launch.  So this kernel is limited to one block: at most 1024 threads, hence at most 1024 cells
// (e.g. 32 x 32).  The host refuses bigger lattices and names the kernels without the limit (global, tiled, fast).
//
// Fixes of the book:
//   * The book takes width and height from blockDim (so 32 x 32); here they are arguments and the block is
//     launched as (width, height), any shape with width * height <= 1024.
//   * The book's `int cell_value;` is only assigned for cells holding exactly 0 or 1, and then written back
//     uninitialised otherwise.  Here cell_value is always computed: alive means non-zero.
#ifndef ELEM_TYPE
#define ELEM_TYPE int
#endif
using cell_t = ELEM_TYPE;

__device__ __forceinline__ cell_t life_rule(cell_t cell, int neighbours) {
    return (cell_t)(neighbours == 3 || (cell != 0 && neighbours == 2));
}

// The eight neighbours of (x, y) on the height x width torus.
__device__ int nbrs(int x, int y, const cell_t* in, int height, int width) {
    const int xl = (x == 0) ? width - 1 : x - 1;
    const int xr = (x == width - 1) ? 0 : x + 1;
    const int up = ((y == 0) ? height - 1 : y - 1) * width;
    const int row = y * width;
    const int down = ((y == height - 1) ? 0 : y + 1) * width;
    return in[up + xl] + in[up + x] + in[up + xr]
         + in[row + xl]             + in[row + xr]
         + in[down + xl] + in[down + x] + in[down + xr];
}

// Launch: grid (1, 1, 1), block (width, height, 1), width * height <= 1024.
extern "C" __global__ void conway_iterative(cell_t* lattice, int height, int width, int iters) {
    const int x = threadIdx.x, y = threadIdx.y;
    const int i = y * width + x;
    for (int it = 0; it < iters; it++) {
        const cell_t cell_value = life_rule(lattice[i], nbrs(x, y, lattice, height, width));
        __syncthreads();  // every thread has read the old lattice ...
        lattice[i] = cell_value;
        __syncthreads();  // ... and every thread has written the new one before anyone reads again
    }
}
