// naive_prefix_no_barrier.cu -- Hands-On GPU Programming with Python and CUDA, ch. 4: naive_prefix AS PRINTED,
// with its race.  Kept to watch the race fail (pyscan.races, demos/races.py); the library's scan/naive.cu is the
// fixed kernel.
//
// One block of SECTION_SIZE threads (the book: 1024 threads, 10 iterations, doubles) scans SECTION_SIZE elements
// in shared memory, Hillis-Steele style: at step `iter` every element tid >= iter becomes
// sum_buf[tid] + sum_buf[tid - iter].
//
// THE RACE (write after read, PMPP §11.2).  The loop body is
//     __syncthreads();
//     if (tid >= iter) sum_buf[tid] = sum_buf[tid] + sum_buf[tid - iter];
// There is a barrier before each step, but none between the step's read of sum_buf[tid - iter] and its write of
// sum_buf[tid].  Thread tid - iter, in another warp, may already have written its NEW value of this step when
// thread tid reads it; thread tid then adds a value that already contains this step's addition.  The threads of
// one warp read before any of them writes (one load instruction for the warp), so the race needs two warps: it
// can only strike at the first element(s) of a warp, and then the error travels right through later steps.
// Whether it strikes depends on the order the scheduler runs the warps in: some runs are right, some are not.
// With non-negative inputs a racy value is never smaller than the right one (a newer neighbour is never smaller).
//
// The fix (kernels/scan/naive.cu, PMPP Fig. 11.3's Kogge-Stone): read sum_buf[tid - iter] into a register,
// __syncthreads(), then write.
//
// Safe to run: one block, exactly SECTION_SIZE threads and elements; every index stays in [0, SECTION_SIZE).
#ifndef ELEM_TYPE
#define ELEM_TYPE double  // the book's type
#endif
#ifndef SECTION_SIZE
#define SECTION_SIZE 1024  // the book's section: one block of 1024 threads
#endif
static_assert(SECTION_SIZE >= 2 && SECTION_SIZE <= 1024 && (SECTION_SIZE & (SECTION_SIZE - 1)) == 0,
              "naive_prefix: SECTION_SIZE must be a power of two 2 .. 1024 (one thread per element)");
using elem_t = ELEM_TYPE;

// The book writes `for (int i = 0; i < 10; i++)` for 1024 elements: log2(SECTION_SIZE) steps.
__host__ __device__ constexpr int log2_of(int n) { return n <= 1 ? 0 : 1 + log2_of(n / 2); }

// Launch: grid (1, 1, 1), block (SECTION_SIZE, 1, 1); vec and out hold SECTION_SIZE elements.
extern "C" __global__ void naive_prefix(const elem_t* vec, elem_t* out) {
    __shared__ elem_t sum_buf[SECTION_SIZE];
    int tid = threadIdx.x;
    sum_buf[tid] = vec[tid];

    // begin parallel prefix sum algorithm (as printed)
    int iter = 1;
    for (int i = 0; i < log2_of(SECTION_SIZE); i++) {
        __syncthreads();
        if (tid >= iter) {
            sum_buf[tid] = sum_buf[tid] + sum_buf[tid - iter];  // RACE: no barrier between this read and write
        }
        iter *= 2;
    }
    __syncthreads();
    out[tid] = sum_buf[tid];
    __syncthreads();
}
