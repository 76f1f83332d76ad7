// life_block_no_sync.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4: the one-block iterative Game of
// Life (conway_ker with `iters`) WITHOUT its __syncthreads().  Kept to watch the race fail (pyscan.races,
// demos/races.py); the fixed kernel is kernels/life/iterative_block.cu.
//
// One block, one thread per cell, the lattice updated in place for `iters` generations in one launch.  The book's
// kernel puts a barrier after every thread has read its neighbours (before anyone writes) and one after the
// writes (before the next generation's reads).  Without them a warp that runs ahead writes generation g + 1 into
// cells that a slower warp has not read for generation g yet (or reads generation g + 2's inputs from cells still
// holding generation g): the neighbours a thread counts belong to a mixture of generations.  Which cells go wrong
// depends on the order the warps run in; some runs may come out right.  Every cell still holds 0 or 1.
//
// Safe to run: one block of (width, height) threads, width * height <= 1024; every neighbour index wraps inside
// the lattice (rule.cuh's nbrs).
#include "../life/rule.cuh"

// Launch: grid (1, 1, 1), block (width, height, 1), width * height <= 1024.
extern "C" __global__ void conway_no_sync(cell_t* lattice, int height, int width, int iters) {
    const int x = threadIdx.x, y = threadIdx.y;
    const int i = y * width + x;
    for (int it = 0; it < iters; it++) {
        const cell_t cell_value = life_rule(lattice[i], nbrs(x, y, lattice, height, width));
        // RACE: iterative_block.cu has __syncthreads() here (every thread has read the old lattice) ...
        lattice[i] = cell_value;
        // ... and here (every thread has written the new one before anyone reads again).
    }
}
