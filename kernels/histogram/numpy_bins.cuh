// numpy_bins.cuh -- which bin np.histogram / np.bincount puts a value in, computed with NumPy's own arithmetic
// so that values on and next to the edges land where NumPy puts them.  (The byte kernels' bin_of of
// histogram_bins.cuh is the special case uint8 over range (0, 256).)
//
// BIN_MODE chooses the rule; the host (pyscan/histograms/numpy_plan.py) works out every parameter with NumPy and
// pyscan/histograms/numpy_models.py repeats this arithmetic line by line in NumPy.
//
// * BIN_UNIFORM (bins=int): NumPy's fast path for equal bins (numpy/lib/_histograms_impl.py, histogram):
//     keep   = first_edge <= x <= last_edge               -- here: lo <= key <= hi, thresholds in the data's own
//                                                            type that the host found with NumPy's comparison
//     t      = x as the bin type BT                       (EDGE_T; BT_BITS 16: __half emulated in float)
//     f      = ((t - first_edge) / norm_denom) * bins     (the subtraction in BT, the rest in DT, the type of
//                                                            BT / norm_denom; DT_BITS 16/32/64)
//     index  = (intp)f; index == bins -> bins - 1
//     index -= t < edges[index];  index += t >= edges[index + 1] and index != bins - 1
//   Every operation rounds once, as NumPy's loops do (float16: in float, then rounded to half, as NumPy's half
//   loops do); the _rn intrinsics keep nvcc from contracting or approximating.
//   BIN_GUESS (32 or 64; 0: NumPy's f exactly) replaces the division by a multiplication with the host's
//   guess_scale = bins / (last_edge - first_edge), in float or double.  The correction against the edges makes the
//   index the bin the edges say whenever the first guess is within one bin of it; NumPy's f and the guess both are
//   whenever their error is under half a bin, so the results are NumPy's.  The host (numpy_plan.choose_guess)
//   takes a guess only where it can bound both errors that way, and only for strictly increasing edges; the
//   division and the float64 conversions were most of the kernel's instructions.  A guess well inside its bin
//   (guess_margin, the host's bound on the guess's and the edges' errors in bins) is taken without the
//   correction; with GUESS_EXACT (the host found the guess and the edges exact) every guess below the last edge is.
//   EDGE_FORMULA (32 or 64; 0: read edges[index] from memory) computes the edges of the correction instead of
//   reading them: np.linspace made edges[i] = (start + i * step) in float or double, rounded to the bin type, and
//   the host (numpy_plan.choose_edge_formula) takes the formula only where it gives every edge NumPy made, bit for
//   bit, from 4,096 bins on (numpy_plan.EDGE_FORMULA_MIN_BINS): there the edges no longer stay in L1 and each
//   read is an L2 access (computing them halved the time at 2^20 bins); below, reading is faster
//   (docs/histogram.md).
// * BIN_EDGES (bins=a sequence): NumPy's searchsorted path.  Bin i holds edges[i] <= x < edges[i + 1], the last
//   bin also x == edges[bins]; compared in NumPy's common type of data and edges (EDGE_T), by binary search.  NaN
//   is never counted (NumPy sorts it after every edge).
// * BIN_BINCOUNT: bin = x for 0 <= x < bins (np.bincount; the host has checked that no value is negative).
#pragma once

#include "element_loads.cuh"

#define BIN_UNIFORM 0
#define BIN_EDGES 1
#define BIN_BINCOUNT 2

#ifndef BIN_MODE
#define BIN_MODE BIN_UNIFORM
#endif
#ifndef EDGE_T
#define EDGE_T float  // BIN_UNIFORM: NumPy's bin type (float for float16 and float32); BIN_EDGES: the common type
#endif
#ifndef BT_BITS
#define BT_BITS 32  // precision of the bin type: 16, 32 or 64
#endif
#ifndef DIV_T
#define DIV_T double  // the type of (t - first_edge) / norm_denom: float (DT_BITS 16, 32) or double
#endif
#ifndef DT_BITS
#define DT_BITS 64
#endif
#ifndef EDGE_FORMULA
#define EDGE_FORMULA 0  // BIN_UNIFORM: 0 reads edges[i]; 32 or 64 computes it as np.linspace did, in float or double
#endif
#ifndef BIN_GUESS
#define BIN_GUESS 32  // 0: NumPy's f; 32: (t - first_edge) * scale in float; 64: in double (see above)
#endif
#ifndef GUESS_T
#define GUESS_T float  // the guess's type: double for BIN_GUESS 64, else float
#endif
#ifndef GUESS_EXACT
#define GUESS_EXACT 0  // 1: the guess is the exact position (numpy_plan.exact_guess): its floor is the bin
#endif
#ifndef SMALL_KEYS
#define SMALL_KEYS 0  // 1: integer data whose kept keys (lo..hi) lie within +-2^22 (key_as_float)
#endif

__device__ __forceinline__ float round_to_half(float x) { return __half2float(__float2half_rn(x)); }

// t - first_edge in the bin type
__device__ __forceinline__ EDGE_T bt_subtract(EDGE_T a, EDGE_T b) {
#if BT_BITS == 64
    return __dsub_rn(a, b);
#elif BT_BITS == 32
    return __fsub_rn(a, b);
#else
    return round_to_half(__fsub_rn(a, b));
#endif
}

__device__ __forceinline__ DIV_T dt_divide(DIV_T a, DIV_T b) {
#if DT_BITS == 64
    return __ddiv_rn(a, b);
#elif DT_BITS == 32
    return __fdiv_rn(a, b);
#else
    return round_to_half(__fdiv_rn(a, b));
#endif
}

__device__ __forceinline__ DIV_T dt_multiply(DIV_T a, DIV_T b) {
#if DT_BITS == 64
    return __dmul_rn(a, b);
#elif DT_BITS == 32
    return __fmul_rn(a, b);
#else
    return round_to_half(__fmul_rn(a, b));
#endif
}

// 1.5 * 2^23 as a float and its bits, and 1.5 * 2^52 as a double: a whole number w below 2^22 (2^51) added to them
// lies in the sum's low mantissa bits (split_guess, key_as_float)
#define SPLIT_FLOAT 12582912.0f
#define SPLIT_FLOAT_BITS 0x4B400000
#define SPLIT_DOUBLE 6755399441055744.0

// A guess f >= 0 split into its whole part, returned in `index`, and the rest (returned), for f < 2^22 in float (a
// float guess has at most 2^20 bins: numpy_plan.GUESS32_MAX_BINS) or 2^31 in double.  Adding 1.5 * 2^23 (1.5 * 2^52)
// rounded toward zero leaves the whole part in the sum's low bits, and both subtractions are exact: three adds,
// where a conversion to a 64-bit integer and back took two quarter-rate instructions per value (docs/histogram.md,
// "The guess split by adds").  A negative f (none reaches here: t >= first_edge) gives index -1.
__device__ __forceinline__ float split_guess(float f, int& index) {
    const float shifted = __fadd_rz(f, SPLIT_FLOAT);
    index = __float_as_int(shifted) - SPLIT_FLOAT_BITS;
    return __fsub_rn(f, __fsub_rn(shifted, SPLIT_FLOAT));
}
__device__ __forceinline__ double split_guess(double f, int& index) {
    const double shifted = __dadd_rz(f, SPLIT_DOUBLE);
    index = __double2loint(shifted);
    return __dsub_rn(f, __dsub_rn(shifted, SPLIT_DOUBLE));
}

// (float)key of an integer key, for the float guess.  With SMALL_KEYS (the host: every kept key within +-2^22) by
// an integer add and a float subtraction: the key added to the bits of 1.5 * 2^23 is the float 1.5 * 2^23 + key
// exactly, and subtracting 1.5 * 2^23 leaves the key -- as split_guess, the other way -- where the conversion (I2F)
// issues at an eighth of an add's rate.  A key outside the range gives a wrong float, which no one uses: such a
// value is not counted (quick_bin, bin_of).
template <typename Key>
__device__ __forceinline__ float key_as_float(Key key) {
#if SMALL_KEYS
    return __fsub_rn(__int_as_float((int)((unsigned int)SPLIT_FLOAT_BITS + (unsigned int)key)), SPLIT_FLOAT);
#else
    return (float)key;
#endif
}

// The parameters of one histogram, as the host computed them (unused ones are 0).
struct BinRule {
    int bins;
    KEY_T lo, hi;         // BIN_UNIFORM: the values kept are lo <= key <= hi
    EDGE_T first_edge;    // BIN_UNIFORM: first_edge in the bin type
    DIV_T norm_denom;     // BIN_UNIFORM: last_edge - first_edge as NumPy computes it, in DT
    DIV_T bins_as_div;    // BIN_UNIFORM: bins in DT
    double guess_scale;   // BIN_UNIFORM with BIN_GUESS: bins / (last_edge - first_edge) (a float's value for 32)
    GUESS_T guess_low;    // BIN_UNIFORM with BIN_GUESS: a guess further than guess_margin (in bins) inside its bin
    GUESS_T guess_high;   //   is the bin: guess_low = guess_margin and guess_high = 1 - guess_margin, in the guess's
                          //   type (the host's, so that the kernel converts nothing per value)
    double edge_start;    // BIN_UNIFORM with EDGE_FORMULA: np.linspace's start and step (a float's value for 32)
    double edge_step;
    const EDGE_T* edges;  // BIN_UNIFORM: the bins + 1 edges in the bin type; BIN_EDGES: in the common type

    // edges[i] of BIN_UNIFORM, 0 <= i < bins: read, or computed as np.linspace computed it
    __device__ __forceinline__ EDGE_T uniform_edge(long long i) const {
#if EDGE_FORMULA == 64
        return (EDGE_T)__dadd_rn(__dmul_rn((double)i, edge_step), edge_start);
#elif EDGE_FORMULA == 32
        return (EDGE_T)__fadd_rn(__fmul_rn((float)i, (float)edge_step), (float)edge_start);
#else
        return __ldg(&edges[i]);
#endif
    }

#if BIN_MODE == BIN_UNIFORM
    // t: a kept value in the bin type
    __device__ __forceinline__ EDGE_T in_bin_type(KEY_T key) const {
        EDGE_T t = (EDGE_T)key;
#if BT_BITS == 16
        t = round_to_half(t);  // exact for the data that reach here (float16, int8, uint8)
#endif
        return t;
    }

#if BIN_GUESS
    // the first guess of the bin: (t - first_edge) * guess_scale
    __device__ __forceinline__ GUESS_T guess(KEY_T key, EDGE_T t) const {
#if BIN_GUESS == 32 && BT_BITS == 32
        return __fmul_rn(bt_subtract(t, first_edge), (float)guess_scale);  // NumPy's subtraction, then *
#elif BIN_GUESS == 32
        (void)t;
        return __fmul_rn(__fsub_rn(key_as_float(key), (float)first_edge), (float)guess_scale);
#else
        (void)key;
        return __dmul_rn((double)bt_subtract(t, first_edge), guess_scale);
#endif
    }

    // Whether a guess split into `whole` and `within` (split_guess) is the bin without the correction: a guess
    // further than guess_margin from both ends of its bin is the bin the edges say, since no rounding of the guess
    // or of the edges moves a value that far (the host's bound: numpy_plan.guess_margin); with GUESS_EXACT every
    // guess below the last edge is (its floor is the bin: numpy_plan.exact_guess).
    __device__ __forceinline__ bool guess_taken(int whole, GUESS_T within) const {
#if GUESS_EXACT
        (void)within;
        return (unsigned int)whole < (unsigned int)bins;
#else
        return (unsigned int)whole < (unsigned int)bins && within > guess_low && within < guess_high;
#endif
    }
#endif
#endif

    // The bin of a value, or -1 where NumPy does not count it.
    __device__ __forceinline__ int bin_of(KEY_T key) const {
#if BIN_MODE == BIN_UNIFORM
        if (!(key >= lo && key <= hi)) return -1;  // outside the range, or NaN
        const EDGE_T t = in_bin_type(key);
#if BIN_GUESS
        int whole;
        const GUESS_T within = split_guess(guess(key, t), whole);  // whole: the guess's truncation
        if (guess_taken(whole, within)) return whole;  // most values: no correction, no edges read
        long long index = whole;
#else
        const DIV_T f = dt_multiply(dt_divide((DIV_T)bt_subtract(t, first_edge), norm_denom), bins_as_div);
        long long index = (long long)f;  // truncation, as astype(np.intp)
#endif
        if (index >= bins) index = bins - 1;
        if (index < 0) index = 0;
        if (t < uniform_edge(index)) {
            --index;
        } else if (index != bins - 1 && t >= uniform_edge(index + 1)) {  // index + 1 < bins: never the last edge
            ++index;
        }
        return (int)index;
#elif BIN_MODE == BIN_EDGES
        const EDGE_T s = (EDGE_T)key;
        int low = 0, high = bins + 1;  // the first edge greater than s (edges <= s: an upper bound)
        while (low < high) {
            const int mid = (low + high) >> 1;
            if (__ldg(&edges[mid]) <= s) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        if (low == 0) return -1;                                      // below the first edge, or NaN
        if (low == bins + 1) return s <= __ldg(&edges[bins]) ? bins - 1 : -1;  // the last edge closes the last bin
        return low - 1;
#else
        const long long value = (long long)key;
        return (value >= 0 && value < bins) ? (int)value : -1;
#endif
    }

    // bin_of()'s value where it needs no correction against the edges (a guess well inside its bin, or a value
    // NumPy does not count: -1), else CORRECT: straight-line arithmetic with no edge read and no branch, so that a
    // thread can bin a whole 16-byte vector before it branches once for the rare value near an edge
    // (count_elements; docs/histogram.md, "The guess split by adds").  Without a guess it is bin_of().
    static constexpr int CORRECT = -2;
    __device__ __forceinline__ int quick_bin(KEY_T key) const {
#if BIN_MODE == BIN_UNIFORM && BIN_GUESS
        const bool keep = (key >= lo) & (key <= hi);  // false for NaN
        int whole;
        const GUESS_T within = split_guess(guess(key, in_bin_type(key)), whole);
        const int unkept = keep ? CORRECT : -1;
        return (keep & guess_taken(whole, within)) ? whole : unkept;
#else
        return bin_of(key);
#endif
    }
};
