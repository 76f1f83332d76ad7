// segmented_lookback.cu -- the segmented scan over CSR offsets in one pass: pyscan.scan(x, offsets=o) scans every
// segment x[o[s] .. o[s+1]) on its own (Blelloch 1990, "Prefix sums and their applications", §1.5; PMPP ch. 11),
// with the single-pass decoupled look-back of Merrill & Garland (NVR-2016-002) on (value, head flag) pairs.  The
// tile's work -- loads, head bits from the offsets, the block's segmented scan, the look-back that stops at the
// tile where the open segment started -- is kernels/common/segmented_tile.cuh; this file stores the results.
//
// exclusive: each segment's first element gets the identity, every other element the op over the segment's
// elements before it.
//
// Launch: one block of BLOCK_THREADS per tile of SEG_TILE elements (4096 for 32-bit compute types, 2048 for 64-bit),
// num_tiles blocks; counter: two 32-bit words, zero before the first launch (the last block puts them back);
// status: the tile-status words (tile_status.cuh layout, epoch-tagged).  num_tiles == 1: counter and status unused.
#include "../common/segmented_tile.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SEG_BLOCKS_PER_SM)
    segmented_lookback_scan(OUT_TYPE* __restrict__ out, const IN_TYPE* __restrict__ in, long long n,
                            const Offset* __restrict__ offsets, long long num_segments, int exclusive,
                            unsigned* counter, unsigned long long* status, long long num_tiles, unsigned epoch) {
    __shared__ SegTileShared sh;
    seg_take_tile(sh, counter, num_tiles);
    T items[SEG_ITEMS];
    unsigned bits;
    T start;
    seg_scan_tile(sh, in, n, offsets, num_segments, status, num_tiles, epoch, items, bits, start);
    const int t = threadIdx.x;
    const long long lo = (long long)sh.tile * SEG_TILE;
    if (exclusive) {  // this thread's own positions again: the value before each item, the identity at a head
        T running = start;
#pragma unroll
        for (int j = 0; j < SEG_ITEMS; ++j) {
            const bool head = (bits >> j) & 1u;
            const T before = head ? op_identity() : running;
            running = head ? items[j] : op_combine(running, items[j]);
            items[j] = before;
        }
        __syncthreads();  // every thread has read the inclusive values it needs (none: it recomputed them)
#pragma unroll
        for (int j = 0; j < SEG_ITEMS; ++j) sh.values[seg_pad(t * SEG_ITEMS + j)] = items[j];
        __syncthreads();
    }
    // Coalesced stores: element k * BLOCK_THREADS + t.
#pragma unroll
    for (int k = 0; k < SEG_ITEMS; ++k) {
        const long long i = lo + k * BLOCK_THREADS + t;
        if (i < n) out[i] = op_store(sh.values[seg_pad(k * BLOCK_THREADS + t)]);
    }
    seg_release(counter, num_tiles);
}
