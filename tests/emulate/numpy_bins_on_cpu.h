// numpy_bins_on_cpu.h -- the device intrinsics kernels/histogram/numpy_bins.cuh uses, on the CPU: the rounded
// operations are the host's IEEE operations in the same precision (build with -ffp-contract=off), the
// round-toward-zero adds run under fesetround(FE_TOWARDZERO), and the bit casts are memcpy; and the kernel arguments
// read from the command line.  For the histogram emulators (histogram_bins_on_cpu.cpp, bincount_on_cpu.cpp,
// histogram_once_on_cpu.cpp, min_max_on_cpu.cpp).
#pragma once

#include <cfenv>
#include <cstdlib>
#include <cstring>
#include <type_traits>

// A kernel argument from the command line: integers in decimal, floats as C hex literals (exact).
template <typename X>
static X number(const char* text) {
    if constexpr (std::is_integral<X>::value && std::is_signed<X>::value) return (X)std::strtoll(text, nullptr, 10);
    else if constexpr (std::is_integral<X>::value) return (X)std::strtoull(text, nullptr, 10);
    else return (X)std::strtod(text, nullptr);  // a hex literal: the exact value, then its own type (exact)
}

static float __fadd_rn(float a, float b) { return a + b; }
static float __fsub_rn(float a, float b) { return a - b; }
static float __fmul_rn(float a, float b) { return a * b; }
static float __fdiv_rn(float a, float b) { return a / b; }
static double __dadd_rn(double a, double b) { return a + b; }
static double __dsub_rn(double a, double b) { return a - b; }
static double __dmul_rn(double a, double b) { return a * b; }
static double __ddiv_rn(double a, double b) { return a / b; }
template <typename F>
static F add_toward_zero(F a, F b) {
    const int mode = std::fegetround();
    std::fesetround(FE_TOWARDZERO);
    volatile F sum = a + b;
    std::fesetround(mode);
    return sum;
}
static float __fadd_rz(float a, float b) { return add_toward_zero(a, b); }
static double __dadd_rz(double a, double b) { return add_toward_zero(a, b); }
template <typename To, typename From>
static To bits_as(From from) {  // the bits of `from` read as a To of the same size (std::bit_cast, C++20)
    static_assert(sizeof(To) == sizeof(From), "bits_as: sizes differ");
    To to;
    std::memcpy(&to, &from, sizeof to);
    return to;
}
static int __float_as_int(float f) { return bits_as<int>(f); }
static float __int_as_float(int i) { return bits_as<float>(i); }
static int __double2loint(double d) { return (int)(unsigned int)bits_as<unsigned long long>(d); }
