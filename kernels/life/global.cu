// global.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4 ("Conway's Game of Life"): conway_ker.
//
// One thread per cell, one generation per launch, a 2-D grid of 2-D blocks (32x32 in the book).  Each thread
// reads its eight neighbours from global memory through a __device__ helper (nbrs), applies the rule and writes
// the next generation into a second lattice: the host swaps the two buffers between launches (double buffering),
// because a thread must not overwrite a cell its neighbours have not read yet.  The lattice is a torus: the
// neighbours of the last column are in the first, and so on.
//
// Two kernels are in this file:
//   conway_global    -- ours: any H x W lattice (not only N x N with N divisible by 32).
//   conway_ker_book  -- the book's kernel as printed, kept only as the baseline of the benchmark (pyscan bench life);
//                       it is correct only when the grid covers the lattice exactly (H and W divisible by 32).
//
// Fixes of the book, called out where they are:
//   * The book takes the lattice width and height from the launch (blockDim * gridDim), so it needs H and W to be
//     multiples of the block size, and its host code sizes the grid as (N/32, N/32): a float under Python 3, which
//     PyCUDA refuses.  Here the real height and width are arguments, the grid is rounded up on the host with integer
//     division (ceil), threads past the edge return, and wrap-around uses the real H and W.
//   * The book's cell update is `if (cell == 1) switch(n) {...} else if (cell == 0) switch(n) {...}`: a cell that
//     holds any other value leaves its output unset (in the iterative kernels, `cell_value` is then read
//     uninitialised).  Here every cell is written: alive means non-zero, and the rule is one expression.
//   * Indices are long long: a lattice may hold more than 2^31 cells.
#include "rule.cuh"

extern "C" __global__ void conway_global(cell_t* __restrict__ lattice_out, const cell_t* __restrict__ lattice,
                                         int height, int width) {
    const int x = threadIdx.x + blockIdx.x * blockDim.x;
    const int y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x >= width || y >= height) return;  // the grid is rounded up: threads past the edge have no cell
    const long long i = (long long)y * width + x;
    lattice_out[i] = life_rule(lattice[i], nbrs(x, y, lattice, height, width));
}

// ---- The book's kernel, verbatim apart from `extern "C"` and the _book suffixes, for the benchmark only ----------
#define _X  ( threadIdx.x + blockIdx.x * blockDim.x )
#define _Y  ( threadIdx.y + blockIdx.y * blockDim.y )
#define _WIDTH  ( blockDim.x * gridDim.x )
#define _HEIGHT ( blockDim.y * gridDim.y  )
#define _XM(x)  ( (x + _WIDTH) % _WIDTH )
#define _YM(y)  ( (y + _HEIGHT) % _HEIGHT )
#define _INDEX(x,y)  ( _XM(x)  + _YM(y) * _WIDTH )

__device__ int nbrs_book(int x, int y, int * in)
{
     return ( in[ _INDEX(x -1, y+1) ] + in[ _INDEX(x-1, y) ] + in[ _INDEX(x-1, y-1) ] \
                   + in[ _INDEX(x, y+1)] + in[_INDEX(x, y - 1)] \
                   + in[ _INDEX(x+1, y+1) ] + in[ _INDEX(x+1, y) ] + in[ _INDEX(x+1, y-1) ] );
}

extern "C" __global__ void conway_ker_book(int * lattice_out, int * lattice  )
{
   // x, y are the appropriate values for the cell covered by this thread
   int x = _X, y = _Y;

   // count the number of neighbors around the current cell
   int n = nbrs_book(x, y, lattice);

    // if the current cell is alive, then determine if it lives or dies for the next generation.
    if ( lattice[_INDEX(x,y)] == 1)
       switch(n)
       {
          // if the cell is alive: it remains alive only if it has 2 or 3 neighbors.
          case 2:
          case 3: lattice_out[_INDEX(x,y)] = 1;
                  break;
          default: lattice_out[_INDEX(x,y)] = 0;
       }
    else if( lattice[_INDEX(x,y)] == 0 )
         switch(n)
         {
            // a dead cell comes to life only if it has 3 neighbors that are alive.
            case 3: lattice_out[_INDEX(x,y)] = 1;
                    break;
            default: lattice_out[_INDEX(x,y)] = 0;
         }
    // BOOK BUG (kept here, fixed in conway_global): a cell holding neither 0 nor 1 is never written.
}
#undef _X
#undef _Y
#undef _WIDTH
#undef _HEIGHT
#undef _XM
#undef _YM
#undef _INDEX
