// pyscan exercise: life_shared
// Hands-On GPU Programming with Python and CUDA, ch. 4 (Using shared memory): conway_ker_shared.
//
// One block of (width, height) threads, one per cell, width * height <= 1024, runs `iters` generations of Conway's
// Game of Life on a torus entirely in shared memory, then copies the lattice back.  Per generation: every thread
// computes its cell's next value from the current lattice, then -- after a barrier, so that nobody overwrites a cell
// a neighbour still has to read -- writes it; another barrier before the next generation reads.
// life_rule(cell, neighbours) and nbrs(x, y, lattice, height, width) (pyscan_headers/life/rule.cuh) are the book's.
//
// Check it:  python -m pyscan exercise check life_shared.cu
#include "pyscan_headers/life/rule.cuh"

#ifndef MAX_CELLS
#define MAX_CELLS 1024
#endif

// Launch: grid (1, 1, 1), block (width, height, 1).
extern "C" __global__ void conway_shared(cell_t* p_lattice, int height, int width, int iters) {
    __shared__ cell_t lattice[MAX_CELLS];
    const int x = threadIdx.x, y = threadIdx.y;
    const int i = y * width + x;
    // TODO 1: copy the cell in, barrier.

    for (int it = 0; it < iters; it++) {
        // TODO 2: one generation (two barriers).
    }
    // TODO 3: copy the cell back to p_lattice.
}
