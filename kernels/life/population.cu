// population.cu -- the number of live cells of a lattice, on the GPU (so Life.population needs no copy of the
// lattice to the host): a grid-stride count per thread, a warp-shuffle sum (PMPP ch. 10's reduction tree within a
// warp), and one atomicAdd per warp into a 64-bit total that the host zeroes before the launch.
//   count_cells -- one cell per element (int32 or uint8 lattices): counts non-zero elements.
//   count_bits  -- bit-packed lattices (pack.cu): counts set bits with __popc (the padding bits are 0).
#ifndef ELEM_TYPE
#define ELEM_TYPE int
#endif
using cell_t = ELEM_TYPE;

__device__ __forceinline__ void add_warp_total(unsigned long long* total, unsigned long long count) {
    for (int offset = 16; offset > 0; offset >>= 1) count += __shfl_down_sync(0xffffffffu, count, offset);
    if ((threadIdx.x & 31) == 0 && count) atomicAdd(total, count);
}

extern "C" __global__ void count_cells(unsigned long long* total, const cell_t* __restrict__ cells, long long n) {
    unsigned long long count = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) count += (cells[i] != 0);
    add_warp_total(total, count);  // every thread gets here: the shuffles need the full warp
}

extern "C" __global__ void count_bits(unsigned long long* total, const unsigned* __restrict__ words, long long n) {
    unsigned long long count = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) count += __popc(words[i]);
    add_warp_total(total, count);
}
