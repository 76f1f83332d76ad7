// segmented_fast.cu -- one value per segment: pyscan.reduce(x, offsets=o) gives out[s] = the op over x[o[s] ..
// o[s+1]), the identity for an empty segment.  Load-balanced by elements, not by segments: every block takes one
// tile of SEG_TILE consecutive elements whatever the segment lengths (a million segments of one element, or one
// of 2^24, or a power-law mix), runs the tile's segmented scan (kernels/common/segmented_tile.cuh: Blelloch 1990
// §1.5's segmented operator, Merrill & Garland's decoupled look-back between tiles, the look-back stopping at the
// tile where the open segment started), and picks each segment's value at its last element.  No second pass and
// no atomics on values: the look-back carries a segment across tiles, so a segment is a fixed left-to-right
// grouping of its elements (any associative op, commutative or not; float sums are reproducible for a schedule).
// (Compare CUB's DeviceSegmentedReduce -- a block per segment -- and the merge-path segmented reduce of
// ModernGPU, Baxter: this is the "reduce by key" form of the single-pass scan.)
//
// Who writes out[s]: the tile holding position max(o[s+1] - 1, 0) -- the segment's last element, or for an empty
// segment the element before its place (tile 0 for those at 0).  Tile [lo, hi) writes the segments with
// lo < o[s+1] <= hi (tile 0: o[s+1] <= hi), found by a walk from the tile's one search of the offsets
// (segmented_tile.cuh).  Every out[s], s < S, is written once by exactly one tile when the offsets are valid; with
// bad offsets (the host's check switched off) a value may be wrong or left unwritten, but nothing is read or written
// out of bounds.
//
// Launch: as segmented_lookback.cu (kernels/scan/): one block per tile, the counter and the status words.
#include "../common/segmented_tile.cuh"

extern "C" __global__ void __launch_bounds__(BLOCK_THREADS, SEG_BLOCKS_PER_SM)
    segmented_fast_reduce(OUT_TYPE* __restrict__ out, const IN_TYPE* __restrict__ in, long long n,
                          const Offset* __restrict__ offsets, long long num_segments, unsigned* counter,
                          unsigned long long* status, long long num_tiles, unsigned epoch) {
    __shared__ SegTileShared sh;
    seg_take_tile(sh, counter, num_tiles);
    T items[SEG_ITEMS];
    unsigned bits;
    T start;
    seg_scan_tile(sh, in, n, offsets, num_segments, status, num_tiles, epoch, items, bits, start);
    const int t = threadIdx.x;
    const long long lo = (long long)sh.tile * SEG_TILE;
    const long long hi = lo + SEG_TILE < n ? lo + SEG_TILE : n;
    // The first s with o[s+1] > lo is the tile's search result, the last s with o[s] <= lo (tile 0: every s from 0,
    // the empty segments at 0 too).
    const long long first = sh.tile == 0 ? 0 : sh.search;
    for (long long s = first + t; s < num_segments; s += BLOCK_THREADS) {
        const long long end = (long long)offsets[s + 1];
        if (end > hi) break;
        const long long begin = (long long)offsets[s];
        T value = op_identity();
        if (begin < end && end - 1 >= lo && end - 1 < hi) value = sh.values[seg_pad((int)(end - 1 - lo))];
        out[s] = op_store(value);
    }
    seg_release(counter, num_tiles);
}
