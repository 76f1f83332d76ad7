// pack.cu -- beyond the book: conversion between one-cell-per-element lattices (the book's int32, or uint8)
// and the bit-packed lattice of fast.cu (32 cells per 32-bit word, bit j of word k of a row = column 32k + j).
//
// Each row is packed into words_per_row = ceil(width / 32) words; the bits past the width in a row's last word
// ("padding") are always 0, which fast.cu and the population count rely on.
//
// One warp per word: lane j looks at column 32k + j, so a warp reads 32 consecutive cells (coalesced) and
// __ballot_sync gathers the 32 alive-flags into one word in one instruction.  The loop is grid-stride over
// words and uniform within a warp (all lanes of a warp share the word), as __ballot_sync needs.
// Launch with blockDim.x a multiple of 32.
#ifndef ELEM_TYPE
#define ELEM_TYPE int
#endif
using cell_t = ELEM_TYPE;

extern "C" __global__ void pack_cells(unsigned* __restrict__ words, const cell_t* __restrict__ cells,
                                      int height, int width, int words_per_row) {
    const int lane = threadIdx.x & 31;
    const long long n_words = (long long)height * words_per_row;
    const long long n_warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < n_words; w += n_warps) {
        const long long y = w / words_per_row;
        const int x = (int)(w - y * words_per_row) * 32 + lane;
        const bool alive = x < width && cells[y * width + x] != 0;  // padding columns are dead
        const unsigned bits = __ballot_sync(0xffffffffu, alive);
        if (lane == 0) words[w] = bits;
    }
}

extern "C" __global__ void unpack_cells(cell_t* __restrict__ cells, const unsigned* __restrict__ words,
                                        int height, int width, int words_per_row) {
    const int lane = threadIdx.x & 31;
    const long long n_words = (long long)height * words_per_row;
    const long long n_warps = ((long long)gridDim.x * blockDim.x) >> 5;
    for (long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < n_words; w += n_warps) {
        const long long y = w / words_per_row;
        const int x = (int)(w - y * words_per_row) * 32 + lane;
        const unsigned bits = words[w];  // the same address for the whole warp: one broadcast load
        if (x < width) cells[y * width + x] = (cell_t)((bits >> lane) & 1u);
    }
}
