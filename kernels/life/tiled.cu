// tiled.cu -- beyond the book: the shared-memory idea of conway_ker_shared (Hands-On ch. 4) for lattices of
// any size, with many blocks (the tiling of PMPP ch. 7 "convolution", applied to the 3x3 Life stencil).
//
// Each block computes one TILE_W x TILE_H tile of the next generation.  It first loads the tile plus a one-cell
// halo -- (TILE_H + 2) x (TILE_W + 2) cells, wrapped around the torus -- into shared memory, so every cell is read
// from global memory about once per block instead of nine times per cell (once by itself and by each of its eight
// neighbours' threads).  Then each thread counts its neighbours in shared memory.  One generation per launch: the
// blocks cannot synchronise with each other, and a tile's halo belongs to neighbouring tiles, so the host swaps two
// buffers between launches.
//
// Any height x width: tiles past the edge are partial (threads without a cell still help load the tile and wait
// at the barrier, then write nothing), halo coordinates wrap by the real height and width.
#include "rule.cuh"
#ifndef TILE_W
#define TILE_W 32  // = blockDim.x: a warp reads 32 consecutive cells of a row (coalesced)
#endif
#ifndef TILE_H
#define TILE_H 16  // = blockDim.y
#endif

// v modulo n for v >= -1 (a halo coordinate); a true modulo because a partial tile's halo can lie more than one
// lattice width past the edge when the lattice is narrower than the tile.
__device__ __forceinline__ int wrap(int v, int n) {
    return v < 0 ? v + n : (v < n ? v : v % n);
}

// Launch: block (TILE_W, TILE_H, 1), grid (ceil(width / TILE_W), ceil(height / TILE_H), 1).
extern "C" __global__ void __launch_bounds__(TILE_W * TILE_H)
conway_tiled(cell_t* __restrict__ lattice_out, const cell_t* __restrict__ lattice, int height, int width) {
    constexpr int SW = TILE_W + 2, SH = TILE_H + 2;  // the tile with its halo
    __shared__ cell_t tile[SH][SW];
    const int x0 = blockIdx.x * TILE_W - 1, y0 = blockIdx.y * TILE_H - 1;  // lattice position of tile[0][0]

    // Cooperative load: the block's threads walk the (SH x SW) tile in row-major order, so consecutive threads
    // read consecutive cells of a row.
    for (int t = threadIdx.y * TILE_W + threadIdx.x; t < SH * SW; t += TILE_W * TILE_H) {
        const int ty = t / SW, tx = t % SW;
        const int gy = wrap(y0 + ty, height), gx = wrap(x0 + tx, width);
        tile[ty][tx] = lattice[(long long)gy * width + gx];
    }
    __syncthreads();

    const int x = blockIdx.x * TILE_W + threadIdx.x, y = blockIdx.y * TILE_H + threadIdx.y;
    if (x >= width || y >= height) return;  // after the barrier: these threads helped load the halo
    const int sx = threadIdx.x + 1, sy = threadIdx.y + 1;
    const int n = tile[sy - 1][sx - 1] + tile[sy - 1][sx] + tile[sy - 1][sx + 1]
                + tile[sy][sx - 1]                        + tile[sy][sx + 1]
                + tile[sy + 1][sx - 1] + tile[sy + 1][sx] + tile[sy + 1][sx + 1];
    lattice_out[(long long)y * width + x] = life_rule(tile[sy][sx], n);
}
