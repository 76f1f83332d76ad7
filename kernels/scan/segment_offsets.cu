// segment_offsets.cu -- the device-side check of CSR offsets for pyscan.scan / pyscan.reduce(x, offsets=o) with o
// on the device: o[0] == 0, o[S] == n and o[s] <= o[s+1] for every s.  One grid-stride read of the S + 1 offsets;
// any thread that finds a break sets *bad = 1 (a plain store: every writer writes the same value).  The host zeroes
// the flag, launches this, and reads the flag back once (one 4-byte copy and a wait for the stream), before the
// segmented kernels run.  Callers who vouch for their offsets skip it (check_offsets=False).
#ifndef OFFSET_TYPE
#define OFFSET_TYPE long long
#endif

extern "C" __global__ void __launch_bounds__(256)
    segment_offsets_check(const OFFSET_TYPE* __restrict__ offsets, long long num_segments, long long n,
                          int* __restrict__ bad) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    bool broken = false;
    for (long long s = (long long)blockIdx.x * blockDim.x + threadIdx.x; s <= num_segments; s += stride) {
        const long long o = (long long)offsets[s];
        if (s == 0 && o != 0) broken = true;
        if (s == num_segments && o != n) broken = true;
        if (s < num_segments && o > (long long)offsets[s + 1]) broken = true;
        if (o < 0 || o > n) broken = true;
    }
    if (broken) *bad = 1;
}
