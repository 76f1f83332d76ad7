// histogram_bins.cuh -- which bin a byte goes to, shared by every histogram kernel (PMPP ch. 9).
//
// Two mappings, chosen at compile time by LETTERS (the loader injects LETTERS=0 or 1):
//
// * LETTERS == 0 (byte histogram): value v in 0..255 goes to bin v * bins / 256, integer division, for a
//   run-time number of bins 1 <= bins <= 256.  That is exactly NumPy's
//   np.histogram(data, bins=bins, range=(0, 256)): bin k holds the values in [256k/bins, 256(k+1)/bins),
//   and v lies there iff k <= v*bins/256 < k+1.  (tests/unit/test_histogram.py checks it against NumPy's
//   floating-point edges for every v and every bins.)  v * bins < 2^16, so 32-bit unsigned arithmetic is
//   exact, and the division by 256 is a shift.
//
// * LETTERS == 1 (the book's text histogram, PMPP Fig. 9.1-9.11): lowercase ASCII letters in 7 bins of 4
//   letters, a-d, e-h, i-l, m-p, q-t, u-x, y-z; every other byte is not counted (bin -1).  The book writes
//   `alphabet_position = data[i] - 'a'; if (alphabet_position >= 0 && alphabet_position < 26)`; doing the
//   subtraction in unsigned arithmetic makes both tests one compare (bytes below 'a' wrap to huge values).
#pragma once

#ifndef LETTERS
#define LETTERS 0
#endif

#define LETTER_BINS 7  // (26 + 3) / 4

// The bin of byte value v, or -1 when v is not counted (only possible with LETTERS).
__device__ __forceinline__ int bin_of(unsigned int v, int bins) {
#if LETTERS
    (void)bins;
    const unsigned int position = v - (unsigned int)'a';
    return position < 26u ? (int)(position / 4u) : -1;
#else
    return (int)((v * (unsigned int)bins) >> 8);
#endif
}
