// pyscan exercise: life_shared
// checker must say: right on integers|right on floats|step by step|races and memory
// known-wrong: writes the new cell while neighbours still read the old one
// shared.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4 ("Using shared memory"): conway_ker_shared.
//
// The iterative single-block kernel (iterative_block.cu), but the block first copies the lattice into shared
// memory, runs all the generations there (on-chip, ~100x lower latency than global memory), and copies the result
// back once at the end.  The same two barriers per generation keep reads and writes apart.
//
// Limited to one block like the iterative kernel: at most 1024 threads, so at most MAX_CELLS = 1024 cells
// (e.g. 32 x 32); the host refuses bigger lattices and names the kernels without the limit.
//
// Fixes of the book:
//   * The book hard-codes `__shared__ int lattice[32*32]` and takes width/height from blockDim; here the shared
//     array holds MAX_CELLS cells and the real height and width are arguments (block launched as (width, height)).
//   * `cell_value` is always assigned (the book leaves it unset for cells other than 0 or 1).
//   * The book ends with a __syncthreads() after the final copy-out, which is not needed: the kernel ends there.
#include "../../../kernels/life/rule.cuh"
#ifndef MAX_CELLS
#define MAX_CELLS 1024  // one thread per cell, and a block has at most 1024 threads
#endif

// Launch: grid (1, 1, 1), block (width, height, 1), width * height <= MAX_CELLS.
extern "C" __global__ void conway_shared(cell_t* p_lattice, int height, int width, int iters) {
    __shared__ cell_t lattice[MAX_CELLS];
    const int x = threadIdx.x, y = threadIdx.y;
    const int i = y * width + x;
    lattice[i] = p_lattice[i];
    __syncthreads();  // the whole lattice is in shared memory before anyone reads a neighbour
    for (int it = 0; it < iters; it++) {
        const cell_t cell_value = life_rule(lattice[i], nbrs(x, y, lattice, height, width));
        lattice[i] = cell_value;  // WRONG: written while neighbours still read
        __syncthreads();
    }
    p_lattice[i] = lattice[i];  // each thread copies back its own cell, which only it wrote last: no barrier needed
}
