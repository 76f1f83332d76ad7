// numpy_histogram.cu -- np.histogram and np.bincount of any integer or float array, counts or float weights:
// PMPP ch. 9 carried to float bins and to many bins.  The bin of a value is numpy_bins.cuh's (NumPy's own
// arithmetic); the elements are read once, 16 bytes per load, by element_loads.cuh.
//
// Three kernels, and two that count and finish in one launch (numpy_histogram_once and bincount's
// numpy_bincount_global, at the end); the host (pyscan/histograms/numpy_plan.py, choose_strategy) picks by the
// data's size in bytes and by whether the bins fit in shared memory:
//
// * numpy_histogram_shared -- privatization (PMPP §9.4, Fig. 9.10) with coarsening (§9.5): the grid is sized
//   to the device, each block counts its share of the input into COPIES private copies of the histogram in
//   shared memory (thread t into copy t % COPIES, laid out bin-major as in fast.cu, so that no more than
//   32 / COPIES lanes of a warp meet on one counter), then adds each bin's sum over its copies to the global
//   histogram with one atomic, if it is not zero (the merge).  The host gives small histograms up to 16 copies
//   and large ones fewer, down to one copy of up to 12,288 counters (48 KB).
// * numpy_histogram_global -- beyond shared memory (up to 2^31 - 1 bins): the values are atomics on the global
//   histogram (PMPP §9.3, Fig. 9.8).
// * numpy_histogram_fold -- 1-byte data (int8, uint8) without weights: a byte has only 256 values, so the host
//   counts the bytes first with fast.cu's byte histogram (256 bins: a value per bin, in shared memory whatever
//   the number of NumPy bins) and this one block puts each byte value's count into its NumPy bin.
//
// SHARED_AGGREGATE, GLOBAL_AGGREGATE -- fewer atomics where values repeat (the contention of PMPP §9.3, skewed
// data), for each kernel:
//   0  one atomic per value;
//   1  runs (PMPP §9.6, Fig. 9.11): each thread keeps the bin of its pending run of equal bins and its count or
//      sum, and adds it with one atomic when the bin changes and at the end (a value outside the bins does not
//      end a run);
//   2  the lanes of a warp on the same bin in the same step added as one atomic (__match_any_sync: §9.6's
//      aggregation across a warp instead of along a thread; counts only);
//   3  both: the lowest lane of each group of 2 adds the group's count to its own pending run, so
//      a bin that most lanes hold step after step (skewed data) costs one atomic per run of steps in which the
//      same lane leads it, not one per step -- what keeps a hot counter of the global histogram (one L2
//      address) from serialising the grid.  Weighted sums use 1 (a group's weights would need a reduction).
//
// WEIGHTED: weights (WEIGHT_T, read one per element beside the data, at the same index) are summed in double
// (shared double copies, global double atomics); otherwise counts, 32-bit in shared memory (the host sizes
// the grid so that no block counts more than 2^30 elements) and 64-bit in the global histogram.
#include "numpy_bins.cuh"
#include "one_launch.cuh"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 512  // threads per block; the host launches exactly this many (a multiple of 32)
#endif
#ifndef COPIES
#define COPIES 1  // private copies per block (numpy_histogram_shared; a power of two, <= 32)
#endif
#ifndef WEIGHTED
#define WEIGHTED 0
#endif
#ifndef WEIGHT_T
#define WEIGHT_T float
#endif
#ifndef WEIGHT_IS_HALF
#define WEIGHT_IS_HALF 0
#endif
#ifndef BYTE_VALUES
#define BYTE_VALUES 0  // numpy_histogram_once: 1 counts the byte values of 1-byte data and folds them (see there)
#endif
#ifndef EXTREMES
#define EXTREMES 0  // 1: the count also finds the data's least and greatest value (bincount's one pass, below)
#endif
// the aggregation of each kernel (0: none, 1: runs of a thread, 2: lanes of a warp, 3: both; see above), measured on
// an H100 (docs/histogram.md): the private copies spread a hot bin enough that aggregating costs more than it
// saves (float32, 2^26 values, 100 and 4,096 bins, 0-100 % in one bin: none fastest in every case); on the global
// histogram a hot bin is one L2 address, and aggregation is what keeps skewed data near the uniform time
#ifndef SHARED_AGGREGATE
#define SHARED_AGGREGATE 0
#endif
#ifndef GLOBAL_AGGREGATE
#define GLOBAL_AGGREGATE 3
#endif
#if SHARED_AGGREGATE < 0 || SHARED_AGGREGATE > 3 || GLOBAL_AGGREGATE < 0 || GLOBAL_AGGREGATE > 3
#error "SHARED_AGGREGATE and GLOBAL_AGGREGATE are 0, 1, 2 or 3"
#endif

#if COPIES < 1 || COPIES > 32 || (COPIES & (COPIES - 1)) != 0
#error "COPIES must be a power of two between 1 and 32"
#endif
#if BLOCK_SIZE % 32 != 0
#error "BLOCK_SIZE must be a multiple of 32"
#endif

#if WEIGHTED
typedef double SharedSum;
typedef double GlobalSum;
#else
typedef unsigned int SharedSum;
typedef unsigned long long GlobalSum;
#endif

#if WEIGHT_IS_HALF
__device__ __forceinline__ double weight_of(__half w) { return (double)__half2float(w); }
#else
__device__ __forceinline__ double weight_of(WEIGHT_T w) { return (double)w; }
#endif

// Adds (bin, amount) pairs to `histogram` (a private copy with its stride, or the global histogram), with the
// aggregation `Aggregate` (weighted sums: 2 is 0 and 3 is 1, a group's weights would need a warp reduction).
// add() is called by every lane of a warp together (valid false past the end;
// bin -1 for a value NumPy does not count); flush() once at the end by every thread.
template <typename Sum, int Aggregate>
struct BinAdder {
    Sum* __restrict__ histogram;
    long long stride;
    int run_bin;  // Aggregate 1 and 3: the pending run's bin (-1: none) and its count or sum
    Sum run;

    __device__ __forceinline__ BinAdder(Sum* h, long long s) : histogram(h), stride(s), run_bin(-1), run((Sum)0) {}

    // the run: one atomic when the bin changes
    __device__ __forceinline__ void extend_run(int bin, Sum amount) {
        if (bin != run_bin) {
            if (run_bin >= 0) atomicAdd(&histogram[run_bin * stride], run);
            run_bin = bin;
            run = (Sum)0;
        }
        run += amount;
    }

    __device__ __forceinline__ void add(bool valid, int bin, Sum amount) {
        constexpr bool lanes = (Aggregate == 2 || Aggregate == 3) && !WEIGHTED;
        constexpr bool runs = Aggregate == 1 || Aggregate == 3;
        if constexpr (lanes) {
            (void)amount;
            const int lane_bin = valid ? bin : -1;
            const unsigned int peers = __match_any_sync(0xffffffffu, lane_bin);  // the lanes with the same bin
            if (lane_bin >= 0 && (int)(threadIdx.x & 31) == __ffs(peers) - 1) {
                if constexpr (runs) {
                    extend_run(lane_bin, (Sum)__popc(peers));
                } else {
                    atomicAdd(&histogram[lane_bin * stride], (Sum)__popc(peers));
                }
            }
        } else if constexpr (runs) {
            if (valid && bin >= 0) extend_run(bin, amount);
        } else {
            if (valid && bin >= 0) atomicAdd(&histogram[bin * stride], amount);
        }
    }

    __device__ __forceinline__ void flush() {
        if (run_bin >= 0) atomicAdd(&histogram[run_bin * stride], run);  // runs only (else none is pending)
    }
};

// Adds counts to a private copy in shared memory, one atomic per value (numpy_histogram_shared's default, no
// aggregation): a predicated reduction at the copy's 32-bit shared-memory address, so that a value costs an
// address, a compare and the atomic -- atomicAdd through the copy's generic pointer cost a branch around it and
// the shared window's base made again at every value (docs/histogram.md, "The guess split by adds").
struct SharedCounts {
#ifndef PTX_ON_CPU
    unsigned int copy;     // the copy's shared-memory address
    unsigned int stride;   // bytes between a copy's counters (COPIES counters)

    __device__ __forceinline__ SharedCounts(unsigned int* c, long long counters_apart)
        : copy((unsigned int)__cvta_generic_to_shared(c)),
          stride((unsigned int)counters_apart * (unsigned int)sizeof(unsigned int)) {}

    __device__ __forceinline__ void add(bool valid, int bin, unsigned int amount) {
        const int counted = valid ? bin : -1;
        asm volatile(
            "{\n\t.reg .pred p;\n\tsetp.ge.s32 p, %0, 0;\n\t@p red.shared.add.u32 [%1], %2;\n\t}"
            :: "r"(counted), "r"(copy + (unsigned int)bin * stride), "r"(amount)
            : "memory");
    }
#else
    // The tests' CPU emulator (tests/emulate/cuda_on_cpu.h) has no PTX: the same predicated add, through the copy's
    // pointer.
    unsigned int* copy;
    long long stride;  // counters between a copy's counters

    SharedCounts(unsigned int* c, long long counters_apart) : copy(c), stride(counters_apart) {}

    void add(bool valid, int bin, unsigned int amount) {
        if (valid && bin >= 0) atomicAdd(&copy[bin * stride], amount);
    }
#endif

    __device__ __forceinline__ void flush() {}
};

// The adder of a kernel's counts: SharedCounts for private copies without aggregation, else BinAdder.
template <typename Sum, int Aggregate, bool Private>
struct AdderOf {
    typedef BinAdder<Sum, Aggregate> type;
};
template <>
struct AdderOf<unsigned int, 0, true> {
    typedef SharedCounts type;
};

// What count_elements shows every element it counts besides: nothing (every kernel but bincount's one pass).
struct SeeNothing {
    template <typename T>
    __device__ __forceinline__ void see(bool, T) const {}
};

// EXTREMES (numpy_histogram_once with BYTE_VALUES 0, counts of integer data): bincount's one pass.  np.bincount's
// length is max(x) + 1, and a negative value is an error, so its count would need a pass for min and max first
// (min_max.cu) and then one to count.  Here the count of the values 0 .. bins - 1 (bins a guess the host makes) also
// finds the least and the greatest value: two kept counters past the bins gather them, and the last block writes
// them after the histogram (bins + 2 values).  Where the greatest is below bins, the count is bincount's, from one
// read of the data; otherwise the host counts again with the right bins (pyscan/histograms/numpy_histogram.py;
// docs/histogram.md, "bincount in one pass").  numpy_bincount_global (at the end) is the same pass on the global
// histogram, where the caller's minlength puts the result past the private copies.
#if EXTREMES
// A thread's least and greatest value, then the block's, then the grid's.  Between threads they travel as 64-bit
// unsigned numbers of the same order (signed values with their sign bit flipped), the least as its complement: so
// that both are combined by atomicMax, whose identity 0 is what the kept counters hold between launches.
struct Extremes {
    static constexpr bool is_signed = (VALUE_T)(-1) < (VALUE_T)0;
    static constexpr VALUE_T greatest_value =
        is_signed ? (VALUE_T)((1ull << (8 * sizeof(VALUE_T) - 1)) - 1ull) : (VALUE_T)~0ull;
    static constexpr VALUE_T least_value = is_signed ? (VALUE_T)(-greatest_value - 1) : (VALUE_T)0;
    VALUE_T least = greatest_value, greatest = least_value;

    __device__ __forceinline__ void see(bool valid, VALUE_T value) {
        if (valid) {
            least = value < least ? value : least;
            greatest = value > greatest ? value : greatest;
        }
    }

    static __device__ __forceinline__ unsigned long long ordered(VALUE_T value) {
        return is_signed ? (unsigned long long)(long long)value ^ (1ull << 63) : (unsigned long long)value;
    }

    // every thread of the block: the warp's extremes combined by shuffles, then into the block's two (in shared
    // memory, zero before)
    __device__ __forceinline__ void into(unsigned long long* block) const {
        unsigned long long high = ordered(greatest), low = ~ordered(least);
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            high = max(high, __shfl_xor_sync(0xffffffffu, high, offset));
            low = max(low, __shfl_xor_sync(0xffffffffu, low, offset));
        }
        if ((threadIdx.x & 31) == 0) {
            atomicMax(&block[0], high);
            atomicMax(&block[1], low);
        }
    }
};
#endif

// Count the block's share of the input into `histogram` (a private copy, or the global histogram); `watch.see(valid,
// value)` is shown each element too (Extremes, for bincount's one pass).
template <typename Sum, int Aggregate, bool Private = false, typename Watch = SeeNothing>
__device__ __forceinline__ void count_elements(const VALUE_T* __restrict__ data, const WEIGHT_T* __restrict__ weights,
                                               long long n, const BinRule& rule, Sum* __restrict__ histogram,
                                               long long stride, Watch&& watch = Watch()) {
    typename AdderOf<Sum, Aggregate, Private>::type adder(histogram, stride);
#if WEIGHTED
    (void)watch;  // (counts only)
    // one element per thread per step: the weights need not share the data's alignment
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long warp_first = (long long)blockIdx.x * blockDim.x + (threadIdx.x & ~31);
    for (long long i0 = warp_first; i0 < n; i0 += threads) {
        const long long i = i0 + (threadIdx.x & 31);
        const bool valid = i < n;
        const int bin = valid ? rule.bin_of(key_of(data[i])) : -1;
        adder.add(valid, bin, valid ? (Sum)weight_of(weights[i]) : (Sum)0);
    }
#else
    (void)weights;
    auto count = [&](bool valid, KEY_T key) {
        watch.see(valid, key);
        adder.add(valid, valid ? rule.bin_of(key) : -1, (Sum)1);
    };
    // private copies: a vector's values binned first without a branch (quick_bin), then corrected against the
    // edges if one of them is near an edge (rare), then counted -- one branch a vector instead of several a value.
    // (The global histogram, bound by its atomics in L2, takes one value at a time.)
    auto count_vector = [&](bool valid, const VALUE_T (&elements)[16 / sizeof(VALUE_T)]) {
        constexpr int VEC = 16 / sizeof(VALUE_T);
        int bin[VEC];
        int least = -1;  // CORRECT (-2) is the only value below -1
#pragma unroll
        for (int j = 0; j < VEC; ++j) {  // (a vector past the end holds zeros, binned and then not counted)
            bin[j] = rule.quick_bin(key_of(elements[j]));
            least = min(least, bin[j]);
            watch.see(valid, elements[j]);
        }
        if (least == BinRule::CORRECT) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
                if (bin[j] == BinRule::CORRECT) bin[j] = rule.bin_of(key_of(elements[j]));
            }
        }
#pragma unroll
        for (int j = 0; j < VEC; ++j) adder.add(valid, bin[j], (Sum)1);
    };
    if constexpr (Private) {
        visit_keys(data, n, count, count_vector);
    } else {
        visit_keys(data, n, count);
    }
#endif
    adder.flush();
}

// 2048 / BLOCK_SIZE blocks resident per SM (32 registers a thread at 512): the grid the host sizes
// (numpy_plan.BLOCKS_PER_SM) is one wave
// The block's share of the input counted into its `COPIES` private copies of `bins` counters in shared memory (zeroed
// here), then each bin's sum over the copies (read in a rotated order, so the lanes of a warp read different banks)
// added to `histogram` with one atomic if it is not zero (the merge).  `count(adder)` does the counting.
template <typename Count>
__device__ __forceinline__ void count_privately(SharedSum* __restrict__ private_copies, int bins,
                                                GlobalSum* __restrict__ histogram, Count count) {
    for (int i = threadIdx.x; i < bins * COPIES; i += BLOCK_SIZE) private_copies[i] = (SharedSum)0;
    __syncthreads();  // every private counter is zero before anyone adds to it
    count(private_copies + threadIdx.x % COPIES);
    __syncthreads();  // every update of the block is in its copies
    for (int bin = threadIdx.x; bin < bins; bin += BLOCK_SIZE) {
        SharedSum sum = (SharedSum)0;
#pragma unroll
        for (int c = 0; c < COPIES; ++c) sum += private_copies[bin * COPIES + ((c + bin) & (COPIES - 1))];
        if (sum != (SharedSum)0) atomicAdd(&histogram[bin], (GlobalSum)sum);
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, 2048 / BLOCK_SIZE)
numpy_histogram_shared(const VALUE_T* __restrict__ data, const WEIGHT_T* __restrict__ weights, long long n, int bins,
                       KEY_T lo, KEY_T hi, EDGE_T first_edge, DIV_T norm_denom, DIV_T bins_as_div, double guess_scale,
                       GUESS_T guess_low, GUESS_T guess_high, double edge_start, double edge_step,
                       const EDGE_T* __restrict__ edges, GlobalSum* __restrict__ histogram) {
#ifdef DYNAMIC_SHARED_ON_CPU
    DYNAMIC_SHARED_ON_CPU(shared_bytes, 48 * 1024);  // the tests' CPU emulator: a static buffer
#else
    extern __shared__ __align__(16) unsigned char shared_bytes[];  // bins * COPIES counters, bin-major
#endif
    const BinRule rule{bins,        lo,           hi,         first_edge, norm_denom, bins_as_div,
                       guess_scale, guess_low, guess_high, edge_start, edge_step,  edges};
    count_privately(reinterpret_cast<SharedSum*>(shared_bytes), bins, histogram, [&](SharedSum* copy) {
        count_elements<SharedSum, SHARED_AGGREGATE, true>(data, weights, n, rule, copy, COPIES);
    });
}

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, 2048 / BLOCK_SIZE)
numpy_histogram_global(const VALUE_T* __restrict__ data, const WEIGHT_T* __restrict__ weights, long long n, int bins,
                       KEY_T lo, KEY_T hi, EDGE_T first_edge, DIV_T norm_denom, DIV_T bins_as_div, double guess_scale,
                       GUESS_T guess_low, GUESS_T guess_high, double edge_start, double edge_step,
                       const EDGE_T* __restrict__ edges, GlobalSum* __restrict__ histogram) {
    const BinRule rule{bins,        lo,           hi,         first_edge, norm_denom, bins_as_div,
                       guess_scale, guess_low, guess_high, edge_start, edge_step,  edges};
    count_elements<GlobalSum, GLOBAL_AGGREGATE>(data, weights, n, rule, histogram, 1);
}

extern "C" __global__ void numpy_histogram_fold(const unsigned long long* __restrict__ byte_counts, int bins, KEY_T lo,
                                                KEY_T hi, EDGE_T first_edge, DIV_T norm_denom, DIV_T bins_as_div,
                                                double guess_scale, GUESS_T guess_low, GUESS_T guess_high,
                                                double edge_start, double edge_step,
                                                const EDGE_T* __restrict__ edges,
                                                unsigned long long* __restrict__ histogram) {
    // one block of 256 threads: thread b holds the count of the byte b, the bit pattern of one VALUE_T value
    const unsigned char byte = (unsigned char)threadIdx.x;
    VALUE_T value = (VALUE_T)0;
    memcpy(&value, &byte, 1);  // 1-byte VALUE_T only (the host launches it for no other)
    const BinRule rule{bins,        lo,           hi,         first_edge, norm_denom, bins_as_div,
                       guess_scale, guess_low, guess_high, edge_start, edge_step,  edges};
    const int bin = rule.bin_of(key_of(value));
    const unsigned long long count = byte_counts[threadIdx.x];
    if (bin >= 0 && count != 0ull) atomicAdd(&histogram[bin], count);
}

#if !WEIGHTED
// ---- one launch: the ready call (an int bins and a range, no weights; pyscan/histograms/numpy_histogram.py) and
// count_into's counts --------------------------------------------------------------------------------------------
// numpy_histogram_once: the count and its bookkeeping in one launch (one_launch.cuh): the edges the call returns
// copied on the way in (edge_bytes 0: none), the blocks' merges into `counters` (zero between launches, kept by the
// host per stream; `ticket` beside them), and the block that finishes last writes the histogram from the counters
// and puts them back to zero.  What is counted (BYTE_VALUES):
//   0  numpy_histogram_shared's count: the counters are the bins, and the histogram is the counters;
//   1  1-byte data: the byte values (256 counters in COPIES private copies, as fast.cu counts them), which the last
//      block folds into NumPy's bins (numpy_histogram_fold's arithmetic) after zeroing the histogram.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, 2048 / BLOCK_SIZE)
numpy_histogram_once(const VALUE_T* __restrict__ data, long long n, int bins, KEY_T lo, KEY_T hi, EDGE_T first_edge,
                     DIV_T norm_denom, DIV_T bins_as_div, double guess_scale, GUESS_T guess_low, GUESS_T guess_high,
                     double edge_start, double edge_step, const EDGE_T* __restrict__ edges,
                     unsigned long long* __restrict__ counters,
                     unsigned int* __restrict__ ticket, unsigned long long* __restrict__ histogram,
                     const unsigned char* __restrict__ edges_from, unsigned char* __restrict__ edges_to,
                     long long edge_bytes) {
#ifdef DYNAMIC_SHARED_ON_CPU
    DYNAMIC_SHARED_ON_CPU(shared_bytes, 48 * 1024);  // the tests' CPU emulator: a static buffer
#else
    extern __shared__ __align__(16) unsigned char shared_bytes[];
#endif
    SharedSum* private_copies = reinterpret_cast<SharedSum*>(shared_bytes);
    copy_bytes(edges_from, edges_to, edge_bytes);
    const BinRule rule{bins,        lo,           hi,         first_edge, norm_denom, bins_as_div,
                       guess_scale, guess_low, guess_high, edge_start, edge_step,  edges};
#if BYTE_VALUES
    count_privately(private_copies, 256, counters, [&](SharedSum* copy) {
        SharedCounts adder(copy, COPIES);
        auto count = [&](bool valid, KEY_T key) { adder.add(valid, (int)(unsigned char)key, 1u); };  // the byte
        visit_keys(data, n, count);
    });
    if (!took_last_ticket(ticket)) return;
    for (int bin = threadIdx.x; bin < bins; bin += BLOCK_SIZE) histogram[bin] = 0ull;
    __syncthreads();  // zero before any byte value's count is added
    auto fold = [&](long long byte_value, unsigned long long count) {
        const unsigned char byte = (unsigned char)byte_value;
        VALUE_T value = (VALUE_T)0;
        memcpy(&value, &byte, 1);  // 1-byte VALUE_T only (the host builds BYTE_VALUES for no other)
        const int bin = rule.bin_of(key_of(value));
        if (bin >= 0 && count != 0ull) atomicAdd(&histogram[bin], count);
    };
    take_counters(counters, 256, ticket, fold);
#elif EXTREMES
    Extremes seen;
    count_privately(private_copies, bins, counters, [&](SharedSum* copy) {
        count_elements<SharedSum, SHARED_AGGREGATE, true>(data, (const WEIGHT_T*)nullptr, n, rule, copy, COPIES, seen);
    });
    // the block's greatest value and its least's complement, in the first 16 bytes of the private copies once every
    // thread has merged them (no static shared memory: the copies may take all 48 KB)
    unsigned long long* block_extremes = reinterpret_cast<unsigned long long*>(shared_bytes);
    __syncthreads();
    if (threadIdx.x == 0) block_extremes[0] = block_extremes[1] = 0ull;
    __syncthreads();
    seen.into(block_extremes);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMax(&counters[bins], block_extremes[0]);
        atomicMax(&counters[bins + 1], block_extremes[1]);
    }
    if (!took_last_ticket(ticket)) return;
    auto write = [&](long long i, unsigned long long value) { histogram[i] = value; };
    take_counters(counters, (long long)bins + 2, ticket, write);  // the counts, then the two extremes
#else
    count_privately(private_copies, bins, counters, [&](SharedSum* copy) {
        count_elements<SharedSum, SHARED_AGGREGATE, true>(data, (const WEIGHT_T*)nullptr, n, rule, copy, COPIES);
    });
    if (!took_last_ticket(ticket)) return;
    auto write = [&](long long bin, unsigned long long count) { histogram[bin] = count; };
    take_counters(counters, bins, ticket, write);
#endif
}

#if EXTREMES
// numpy_bincount_global: bincount's one pass on the global histogram, where the caller's minlength alone puts the
// result past the private copies.  That length is not a guess: the result has at least minlength bins whatever the
// data, and a count with the right bins would take the global histogram too -- so, unlike a guess from an earlier
// call, it cannot put values that one copy in shared memory would have held on a few global counters
// (docs/histogram.md, "bincount in one pass").  The values 0 .. bins - 1 go straight into `histogram` (the result,
// zeroed by the host: numpy_histogram_global's count), each block's extremes into two kept counters (zero between
// launches) by one atomicMax each, and the block that takes the last ticket writes them to `extremes` and puts the
// counters back to zero.
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, 2048 / BLOCK_SIZE)
numpy_bincount_global(const VALUE_T* __restrict__ data, long long n, int bins, KEY_T lo, KEY_T hi, EDGE_T first_edge,
                      DIV_T norm_denom, DIV_T bins_as_div, double guess_scale, GUESS_T guess_low, GUESS_T guess_high,
                      double edge_start, double edge_step, const EDGE_T* __restrict__ edges,
                      unsigned long long* __restrict__ counters, unsigned int* __restrict__ ticket,
                      unsigned long long* __restrict__ histogram, unsigned long long* __restrict__ extremes) {
    __shared__ unsigned long long block_extremes[2];  // the block's greatest value and its least's complement
    if (threadIdx.x == 0) block_extremes[0] = block_extremes[1] = 0ull;
    __syncthreads();
    const BinRule rule{bins,        lo,           hi,         first_edge, norm_denom, bins_as_div,
                       guess_scale, guess_low, guess_high, edge_start, edge_step,  edges};
    Extremes seen;
    count_elements<GlobalSum, GLOBAL_AGGREGATE>(data, (const WEIGHT_T*)nullptr, n, rule, histogram, 1, seen);
    seen.into(block_extremes);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMax(&counters[0], block_extremes[0]);
        atomicMax(&counters[1], block_extremes[1]);
    }
    if (!took_last_ticket(ticket)) return;
    auto write = [&](long long i, unsigned long long value) { extremes[i] = value; };
    take_counters(counters, 2, ticket, write);
}
#endif
#endif
