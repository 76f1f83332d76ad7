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
#include "rule.cuh"

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
