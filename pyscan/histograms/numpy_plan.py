"""np.histogram's and np.bincount's contract worked out on the host, for the kernels of
kernels/histogram/numpy_histogram.cu: the bin rule (NumPy's edges and the constants of its bin arithmetic),
the strategy (private copies in shared memory or global atomics) and the grid.  Needs only NumPy.

NumPy computes a value's bin (numpy/lib/_histograms_impl.py, histogram) as

* bins=int, the fast path for equal bins: keep first_edge <= x <= last_edge (compared as NumPy compares x's dtype
  with the edge's type), t = x as the bin type BT (the edges' dtype), f = ((t - first_edge) / norm_denom) * bins
  (subtraction in BT, the rest in DT = the type of BT / norm_denom), index = int(f), bins -> bins - 1, then one
  step down if t < edges[index], or up if t >= edges[index + 1] and index is not the last bin;
* bins=edges: searchsorted of the edges in the data (compared in the common type of both): bin i holds
  edges[i] <= x < edges[i + 1], the last bin also x == edges[-1].

BinRule holds what the kernel needs for that, every constant made by NumPy itself from a 0-element array of the
data's dtype (np.histogram(np.empty(0, dtype), bins, range) gives the very edges, and NumPy's errors for a bad
range or too many bins).  The comparison with the range is done on the device in the data's own type: the host
finds the smallest and largest values of the dtype NumPy keeps (lo, hi), by bisection over the dtype's values
with NumPy's own comparison.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

VALUE_C_TYPES = {
    np.dtype(np.int8): "signed char", np.dtype(np.int16): "short", np.dtype(np.int32): "int",
    np.dtype(np.int64): "long long", np.dtype(np.uint8): "unsigned char", np.dtype(np.uint16): "unsigned short",
    np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long", np.dtype(np.float16): "__half",
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
}
VALUE_DTYPES = tuple(VALUE_C_TYPES)  # the dtypes histogram() takes (data and weights)
BINCOUNT_DTYPES = tuple(d for d in VALUE_DTYPES if d.kind in "iu")  # np.bincount: integers only
EDGE_DTYPES = VALUE_DTYPES  # the dtypes of explicit edges

UNIFORM, EDGES, BINCOUNT = "uniform", "edges", "bincount"
MODE_MACROS = {UNIFORM: 0, EDGES: 1, BINCOUNT: 2}
MAX_BINS = 2**31 - 1  # bins are int on the device
COUNT_DTYPE = np.dtype(np.int64)  # NumPy's counts (intp)
SUM_DTYPE = np.dtype(np.float64)  # what weights are summed in on the device

# ---- launch configuration, shared by the drivers and the models ----------------------------------------------
BLOCK = 512  # threads per block
BLOCKS_PER_SM = 4  # 2048 resident threads per SM / 512
SHARED_BYTES = 48 * 1024  # the private copies of one block (the default dynamic shared-memory limit)
MAX_COPIES = 16  # private copies per block of small histograms (as the fast byte kernel)
# Counts make more copies than one only within COPIES_BYTES (as the byte values' 16 copies of 256 counters): past
# it, zeroing, merging and holding the copies cost more than their fewer collisions save (1,024 bins 4 % faster at
# 2^28 with 4 copies than with 8).  Weighted sums, whose float64 adds in shared memory cost far more a collision,
# keep as many copies as fit in SHARED_BYTES (with 2 copies of 1,024 bins instead of 4 they were 2-4 % slower at
# 2^28).  docs/histogram.md, "Copies and grid"
COPIES_BYTES = 16 * 1024
# A block's private copies of counts cost it a few operations a bin (zeroed, merged, committed to the global
# counters): their grid keeps at least PRIVATE_COUNTS_PER_BIN values a bin for each block, down to MIN_BLOCKS_PER_SM
# blocks an SM (4,096 bins of 2^24 values 11 % faster, 12,288 bins 25 %).  Weighted sums, slow a value, keep the
# full grid (4,096 bins of 2^24 values were 4-18 % slower on 2 blocks an SM).
PRIVATE_COUNTS_PER_BIN = 16
MIN_BLOCKS_PER_SM = 2
MAX_BLOCK_COUNT = 2**30  # no block counts more than this many elements: its 32-bit shared counters cannot overflow
SHARED, GLOBAL, BYTES = "shared_copies", "global_atomics", "byte_values"
# numpy_histogram.cu's aggregations: an atomic per value, runs of a thread (PMPP §9.6), lanes of a warp, or runs of
# the lanes' groups; and the one each strategy uses (the kernel's SHARED_AGGREGATE and GLOBAL_AGGREGATE defaults,
# measured on an H100: docs/histogram.md)
AGGREGATIONS = {"none": 0, "runs": 1, "warp": 2, "warp_runs": 3}
AGGREGATE = {"shared_copies": "none", "global_atomics": "warp_runs"}
SMALL_KEY_LIMIT = 2**22  # numpy_bins.cuh's key_as_float is exact within +-2^22 (1.5 * 2^23 + key: 23 bits' room)
MIN_MAX_BLOCK = 256
MIN_MAX_BLOCKS_PER_SM = 8


def key_dtype(dtype) -> np.dtype:
    """The dtype the device compares values in: the data's own, float32 for float16 (exact)."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _c_type(dtype) -> str:
    """The C type of a key or edge dtype."""
    return VALUE_C_TYPES[key_dtype(dtype)]


def _bits(dtype) -> int:
    return np.dtype(dtype).itemsize * 8


def _float_c_type(bits: int) -> str:
    return "double" if bits == 64 else "float"  # float16 is emulated in float, rounded to half after each step


def _kernel_number(value):
    """A Python number the launcher packs as its C type (numpy scalars as int or float)."""
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (np.integer, np.bool_)):
        return int(value)
    value = np.asarray(value)[()]  # Python ints (NumPy's type for the value) and bools
    return int(value) if np.dtype(type(value)).kind in "iub" else float(value)


@dataclass(frozen=True, eq=False)
class BinRule:
    """One histogram's bins as the kernels compute them (numpy_bins.cuh's BinRule)."""

    mode: str  # UNIFORM, EDGES or BINCOUNT
    dtype: np.dtype  # the data's
    bins: int
    edges: np.ndarray  # what the kernel compares with: BT's edges (UNIFORM) or the common type's (EDGES)
    bin_edges: np.ndarray | None = None  # the edges np.histogram returns (None for bincount)
    lo: object = 0  # UNIFORM: the values kept are lo <= x <= hi (key dtype)
    hi: object = 0
    first_edge: object = 0.0  # UNIFORM: in the bin type
    norm_denom: object = 0.0  # UNIFORM: in DT
    bins_as_div: object = 0.0  # UNIFORM: bins in DT
    bt_bits: int = 64
    dt_bits: int = 64
    guess_bits: int = 0  # UNIFORM: 32 or 64, the first guess of the bin by a multiplication (choose_guess); 0: NumPy's f
    guess_scale: float = 0.0  # UNIFORM with a guess: bins / (last_edge - first_edge) (a float32's value for 32)
    guess_margin: float = 1.0  # UNIFORM with a guess: one this far inside its bin needs no correction (guess_margin)
    edge_formula: int = 0  # UNIFORM: 32 or 64, the edges computed as np.linspace did (choose_edge_formula); 0: read
    edge_start: float = 0.0  # UNIFORM with a formula: its start and step (float32 values for 32)
    edge_step: float = 0.0
    from_data: bool = False  # UNIFORM: the range is the data's min and max (range=None), not the caller's

    def defines(self) -> Mapping:
        """The #defines of numpy_bins.cuh for this rule (made once, read-only: every general call asks)."""
        made = self.__dict__.get("_defines")  # the instance's dict: frozen fields, a memo beside them
        if made is None:
            made = self.__dict__["_defines"] = self._make_defines()
        return made

    def _make_defines(self) -> Mapping:
        return _defines(self.dtype, self.mode, self.edges.dtype, self.bt_bits, self.dt_bits, self.guess_bits,
                        self.guess_margin == EXACT_GUESS, self.edge_formula, self.small_keys)

    @property
    def small_keys(self) -> bool:
        """Whether the float guess of integer data may make its keys' floats by adds (numpy_bins.cuh, key_as_float):
        every key the rule keeps (lo..hi) within +-SMALL_KEY_LIMIT."""
        return (self.mode == UNIFORM and self.guess_bits == 32 and self.dtype.kind in "iu"
                and -SMALL_KEY_LIMIT <= int(self.lo) and int(self.hi) < SMALL_KEY_LIMIT)

    def arguments(self) -> tuple:
        """(lo, hi, first_edge, norm_denom, bins_as_div, guess_scale, guess_low, guess_high, edge_start, edge_step)
        as the kernel takes them, guess_low and guess_high the margin's ends (guess_margin and 1 - guess_margin, in
        double: the launcher rounds them to the guess's type as a conversion on the device would) (made once: a
        cached rule serves every call, and the conversions cost more than the launch's own host work)."""
        made = self.__dict__.get("_arguments")  # the instance's dict: frozen fields, a memo beside them
        if made is None:
            first_edge = int(self.first_edge) if self.edges.dtype.kind in "iu" else self.first_edge  # EDGE_T's kind
            made = self.__dict__["_arguments"] = tuple(
                _kernel_number(v) for v in (self.lo, self.hi, first_edge, self.norm_denom, self.bins_as_div,
                                            float(self.guess_scale), float(self.guess_margin),
                                            1.0 - float(self.guess_margin), float(self.edge_start),
                                            float(self.edge_step)))
        return made


@functools.lru_cache(maxsize=256)
def _defines(dtype, mode, edge_dtype, bt_bits, dt_bits, guess_bits, guess_exact, edge_formula, small_keys) -> Mapping:
    """BinRule.defines() of rules alike (a new range at every call makes a new rule of the same #defines)."""
    return MappingProxyType({
        "VALUE_T": VALUE_C_TYPES[dtype], "VALUE_IS_HALF": int(dtype == np.float16),
        "KEY_T": _c_type(dtype), "BIN_MODE": MODE_MACROS[mode], "EDGE_T": _c_type(edge_dtype),
        "BT_BITS": bt_bits, "DIV_T": _float_c_type(dt_bits), "DT_BITS": dt_bits,
        "BIN_GUESS": guess_bits, "GUESS_T": _float_c_type(64 if guess_bits == 64 else 32),
        "GUESS_EXACT": int(guess_exact), "EDGE_FORMULA": edge_formula, "SMALL_KEYS": int(small_keys),
    })


# ---- NumPy's own helpers, as numpy/lib/_histograms_impl.py has them ------------------------------------------

def _unsigned_subtract(a, b):
    """a - b as NumPy's histogram computes norm_denom: integers subtracted as unsigned, so the width of a range
    that spans more than the signed type holds is right."""
    signed_to_unsigned = {np.byte: np.ubyte, np.short: np.ushort, np.intc: np.uintc, np.int_: np.uint,
                          np.longlong: np.ulonglong}
    dt = np.result_type(a, b)
    unsigned = signed_to_unsigned.get(dt.type)
    if unsigned is None:
        return np.subtract(a, b, dtype=dt)
    return np.subtract(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt), casting="unsafe", dtype=unsigned)


def _expanded(first_edge, last_edge):
    """NumPy's _get_outer_edges after its checks: an empty range widened by 0.5 on each side."""
    if first_edge == last_edge:
        first_edge = first_edge - 0.5
        last_edge = last_edge + 0.5
    return first_edge, last_edge


def _bin_type(first, last, dtype) -> np.dtype:
    """NumPy's bin type (_get_bin_edges): the range's and the data's common type, floating."""
    bin_type = np.result_type(first, last, np.empty(0, dtype))
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    return bin_type


RAMP_MOST = 2**16 + 1  # np.arange(count) kept for count up to this (512 KB of float64): np.linspace's first step


@functools.lru_cache(maxsize=16)
def _ramp(dtype: np.dtype, count: int) -> np.ndarray:
    """np.arange(0, count, dtype=dtype), read-only (kept: np.linspace's first step, and guess_margin's)."""
    ramp = np.arange(0, count, dtype=dtype)
    ramp.flags.writeable = False
    return ramp


def _arange(dtype: np.dtype, count: int) -> np.ndarray:
    """np.arange(0, count, dtype=dtype), a new array (from the kept ramp where count is small)."""
    return _ramp(dtype, count).copy() if count <= RAMP_MOST else np.arange(0, count, dtype=dtype)


@functools.lru_cache(maxsize=32)
def own_range_types(dtype: np.dtype) -> tuple | None:
    """(bin type, DT) of a range whose ends are scalars of the data's own type (range=None: its min and max; a type
    decides NumPy's promotions there, never a value), worked out once from such scalars by NumPy's own operations;
    None where np.linspace's own type (its arithmetic) is not the bin type, which then takes NumPy's own way."""
    zero, one = dtype.type(0), dtype.type(1)
    bin_type = _bin_type(zero, one, dtype)
    if np.linspace(zero, one, 2).dtype != bin_type:
        return None
    norm_denom = _unsigned_subtract(one, zero)
    div_type = (np.zeros(1, bin_type) / norm_denom).dtype
    if _unsigned_subtract(np.zeros(1, bin_type), zero).dtype != bin_type or div_type.kind != "f":
        return None  # uniform_rule's own way, which refuses it
    return bin_type, div_type


def _own_types(dtype: np.dtype, first, last) -> tuple | None:
    """own_range_types where both ends (after _expanded) are scalars of the data's own type, else None."""
    return own_range_types(dtype) if type(first) is dtype.type and type(last) is dtype.type else None


def _own_type_linspace(first, last, count: int, bin_type: np.dtype) -> np.ndarray:
    """np.linspace(first, last, count, dtype=bin_type) for ends of the data's own type (own_range_types): the
    arithmetic of numpy/_core/function_base.py's linspace step by step (a ramp times the step, plus the start, the
    last edge the stop), without its conversions and checks (a new range at every call makes the edges anew)."""
    start, stop = bin_type.type(first), bin_type.type(last)  # linspace casts the 0-d ends so in its ufuncs
    step = (stop - start) / (count - 1)
    if not step:  # a step that underflows: linspace divides the ramp and multiplies by the width instead
        return np.linspace(first, last, count, endpoint=True, dtype=bin_type)
    edges = _arange(bin_type, count)
    edges *= step
    edges += start
    edges[-1] = stop
    return edges


def numpy_bin_edges(dtype, bins: int, first_edge, last_edge) -> np.ndarray:
    """np.histogram_bin_edges(a, bins, range=(first_edge, last_edge)) of data `a` of `dtype`, as NumPy's
    _get_bin_edges makes equal bins (the bin type from the range's and a's types; np.linspace), for a range already
    checked (check_range, or the data's finite min and max): a third of the time of the public function, which
    first checks and ravels `a` (a new range at every call makes them anew); a range of the data's own scalars
    (the data's min and max) takes the types worked out once (own_range_types) and linspace's arithmetic."""
    bin_edges = _equal_edges(np.dtype(dtype), bins, first_edge, last_edge)
    _increasing(bin_edges, bins)
    return bin_edges


def _equal_edges(dtype: np.dtype, bins: int, first_edge, last_edge) -> np.ndarray:
    """numpy_bin_edges before NumPy's check of them."""
    first, last = _expanded(first_edge, last_edge)
    own = _own_types(dtype, first, last)
    if own is not None:
        return _own_type_linspace(first, last, bins + 1, own[0])
    return np.linspace(first, last, bins + 1, endpoint=True, dtype=_bin_type(first, last, dtype))


def _increasing(bin_edges: np.ndarray, bins: int) -> bool:
    """Whether the edges are strictly increasing (choose_guess asks); NumPy's error where two repeat or fall (a NaN
    edge passes NumPy's check, not this one: then False)."""
    if bool((bin_edges[1:] > bin_edges[:-1]).all()):
        return True
    if (bin_edges[:-1] >= bin_edges[1:]).any():
        raise ValueError(f"Too many bins for data range. Cannot create {bins} finite-sized bins.")
    return False


# ---- the values of a dtype in order, for the kept range ------------------------------------------------------

def _ordered_values(dtype):
    """(first key, last key, value(key)): the dtype's values (NaN left out) as consecutive integers, in order."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max), dtype.type
    unsigned = np.dtype(f"u{dtype.itemsize}")
    top = int(np.array(np.inf, dtype).view(unsigned))
    sign = 1 << (8 * dtype.itemsize - 1)

    def value(key):
        return np.array(key if key >= 0 else sign | -key, unsigned).view(dtype)[()]

    return -top, top, value


def _first_true(predicate, low: int, high: int):
    """The first key in [low, high] where a monotone (False ... True) predicate is true, or None."""
    if not predicate(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if predicate(middle):
            high = middle
        else:
            low = middle + 1
    return low


def scalar_key(value) -> tuple:
    """A range end as a cache key: 1, 1.0, np.float32(1) and -0.0 give NumPy different edges or comparisons, and
    are equal (or hash alike) as plain values, so the type and the repr go with the value."""
    return type(value).__qualname__, repr(value), value


@functools.lru_cache(maxsize=512)
def _kept_range(dtype_str: str, first: tuple, last: tuple) -> tuple:
    """(lo, hi): the smallest and largest values x of the dtype with first_edge <= x <= last_edge as NumPy compares
    an array of the dtype with those scalars (np.array([x], dtype) >= first_edge); (highest, lowest) if none."""
    dtype = np.dtype(dtype_str)
    first_edge, last_edge = first[2], last[2]
    low, high, value = _ordered_values(dtype)

    def at_least_first(key):
        return bool((np.array([value(key)], dtype) >= first_edge)[0])

    def above_last(key):
        return not bool((np.array([value(key)], dtype) <= last_edge)[0])

    lo = _first_true(at_least_first, low, high)
    past = _first_true(above_last, low, high)
    hi = high if past is None else past - 1
    if lo is None or hi < low or hi < lo:
        return value(high), value(low)  # nothing is kept
    return value(lo), value(hi)


@functools.lru_cache(maxsize=32)
def _lowest_highest(dtype) -> tuple:
    """The key dtype's lowest and highest values (-inf and inf for floats)."""
    dtype = key_dtype(dtype)
    if dtype.kind == "f":
        return dtype.type(-np.inf), dtype.type(np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min), dtype.type(info.max)


# ---- the rules ------------------------------------------------------------------------------------------------

def check_bins_count(bins) -> int:
    """An integer bins argument as NumPy checks it (operator.index; at least 1), and at most MAX_BINS."""
    try:
        count = operator.index(bins)
    except TypeError:
        raise TypeError(f"`bins` must be an integer or an array of edges, got {type(bins).__name__} {bins!r}"[:200]
                        ) from None
    if count < 1:
        raise ValueError(f"`bins` must be positive, when an integer (got {count})")
    if count > MAX_BINS:
        raise ValueError(f"`bins`: at most {MAX_BINS} bins, got {count}")
    return count


def check_range(range_) -> tuple:
    """A range as NumPy takes it (two real numbers, first <= last, both finite), checked before any GPU work."""
    try:
        first_edge, last_edge = range_
    except (TypeError, ValueError):
        raise TypeError(f"range must be a pair (min, max) of numbers or None, got {range_!r}"[:200]) from None
    for edge in (first_edge, last_edge):
        if isinstance(edge, (bool, np.bool_)) or not isinstance(edge, (int, float, np.integer, np.floating)):
            raise TypeError(f"range must be a pair of real numbers (int, float or NumPy scalars), got {range_!r}"[:200])
    if first_edge > last_edge:
        raise ValueError("max must be larger than min in range parameter.")
    if not (np.isfinite(first_edge) and np.isfinite(last_edge)):
        raise ValueError(f"supplied range of [{first_edge}, {last_edge}] is not finite")
    return first_edge, last_edge


GUESS32_MAX_BINS = 2**20  # a float guess: f's rounding errors stay under bins * 2^-22 = 1/4 bin
GUESS32_MAX_SPREAD = 2**19  # and, when t is rounded to float, max(|first|, |last|) * bins / width: under 1/8 bin


def choose_guess(bt_bits: int, dt_bits: int, bins: int, first, last, edges: np.ndarray, *,
                 increasing: bool | None = None) -> tuple:
    """(guess_bits, guess_scale): how the kernel guesses a value's bin before NumPy's correction against the edges
    (numpy_bins.cuh, BIN_GUESS).  The correction gives the bin the edges say whenever the guess is within one bin
    of it, and both NumPy's f and the guess are whenever each errs by less than half a bin; so a guess is taken only
    where that is bounded:

    * 32: f = (t - first) * scale in float.  For float32 data the subtraction is NumPy's own (the bin type is
      float32), leaving the rounding of the product and of the scale: under 2^-23 * bins, a quarter bin for up to
      GUESS32_MAX_BINS bins.  For other data t and first are rounded to float first, adding about
      2^-22 * max(|first|, |last|) * bins / width bins: taken where that is under an eighth (GUESS32_MAX_SPREAD).
      NumPy's own f errs no more (its subtraction is the same or exact, the rest in float64 or float32).
    * 64: (t - first) in the bin type as NumPy computes it, times the scale in double: errs by ~2^-51 * bins.
    * 0 (NumPy's arithmetic): float16 (whose bin type has 11 bits: NumPy's own f may err by more than a bin), and
      edges that are not strictly increasing (repeated edges: the correction then depends on the first guess;
      `increasing`: whether they are, where the caller knows)."""
    if increasing is None:
        increasing = bool((edges[1:] > edges[:-1]).all())
    if bt_bits == 16 or edges.size < 2 or not increasing:
        return 0, 0.0
    first, last = float(first), float(last)
    width = last - first
    if not (width > 0 and math.isfinite(width)):
        return 0, 0.0
    scale = bins / width
    spread = max(abs(first), abs(last)) * scale
    if bins <= GUESS32_MAX_BINS and (bt_bits == 32 or spread <= GUESS32_MAX_SPREAD):
        return 32, float(np.float32(scale))
    return 64, scale


EXACT_GUESS = -1.0  # the margin of an exact guess: every guess (below the last bin's end) is taken (GUESS_EXACT)


def exact_guess(dtype, bt_bits: int, guess_bits: int, bins: int, first, last, edges: np.ndarray) -> bool:
    """Whether the guess is exactly (t - first) * bins / width for every value kept, with the edges exactly
    first + i * width / bins: then the bin is the guess's floor, values on an edge included (integer data with bins
    one or a power of two wide sit there), and the kernel needs no correction at all.  It is where

    * the step width / bins is a power of two (the scale then is, and multiplying by it is exact), first a whole
      number of steps and every edge no more than 2^52 steps from 0 (so first + i * step is exact in double), and
      NumPy's edges are those;
    * the subtraction is exact: a float guess of data whose bin type is not float32 subtracts the values rounded
      to float, exact for integer data with first a whole number and every value under 2^23 in magnitude (their
      difference too); every other guess subtracts t - first in the bin type, exact where first == 0, or for
      integer data in a double bin type with first a whole number and every value under 2^52."""
    if guess_bits == 0:
        return False
    first_f, last_f = float(first), float(last)
    if first_f != first or last_f != last or not math.isfinite(last_f - first_f) or last_f <= first_f:
        return False
    step = (last_f - first_f) / bins
    mantissa, _ = math.frexp(step)
    largest = max(abs(first_f), abs(last_f))
    if mantissa != 0.5 or not (first_f / step).is_integer() or largest / step > 2.0**52:
        return False
    if guess_bits == 32 and float(np.float32(bins / (last_f - first_f))) != bins / (last_f - first_f):
        return False
    if not np.array_equal(edges.astype(np.float64), first_f + np.arange(edges.size, dtype=np.float64) * step):
        return False
    integers = np.dtype(dtype).kind in "iu" and first_f.is_integer()
    if guess_bits == 32 and bt_bits != 32:  # the guess subtracts the values rounded to float, not t
        return integers and largest <= 2.0**23
    return first_f == 0 or (integers and guess_bits == 64 and bt_bits == 64 and largest <= 2.0**52)


def guess_margin(bt_bits: int, guess_bits: int, bins: int, first, last, edges: np.ndarray) -> float:
    """How far inside its bin (in bins) a guess must fall for the kernel to take it without the correction against
    the edges (numpy_bins.cuh): twice the sum of two bounds, G on the guess's error and E on the edges' distance from
    exact equal bins, each in bins.  A guess f with G < min(frac(f), 1 - frac(f)) - E puts the value more than E
    inside bin floor(f) of exact equal bins, so inside the edges' bin floor(f) too.

    * G: every rounding of the guess is relative, at most u (2^-24 in float, 2^-53 in double): the scale's (of the
      range's width too), the product's, and the subtraction's in the bin type: G = bins * (u_bt + 3 u_g); a float
      guess of non-float32 data also rounds t and first to float: + 2 u_g * max(|first|, |last|) * bins / width.
    * E: the largest distance of an edge from first + i * width / bins, measured in float64, plus a bound on that
      measurement's own rounding.
    1.0 (never) without a guess or where the margin would reach half a bin."""
    if guess_bits == 0 or bins < 1:
        return 1.0
    first, last = float(first), float(last)
    width = last - first
    if not (width > 0 and math.isfinite(width)):
        return 1.0
    u_bt = 2.0**-24 if bt_bits == 32 else 2.0**-53
    u_g = 2.0**-24 if guess_bits == 32 else 2.0**-53
    largest = max(abs(first), abs(last))
    guess_error = bins * (u_bt + 3.01 * u_g)
    if guess_bits == 32 and bt_bits != 32:
        guess_error += 2.01 * u_g * largest * bins / width
    with np.errstate(all="ignore"):  # in place: this runs for every new range (range=None: every call's data)
        exact = _arange(np.dtype(np.float64), bins + 1)
        exact *= width / bins
        exact += first  # first + i * width / bins, each step rounded once
        exact -= edges
        distance = float(np.abs(exact, out=exact).max())
    edge_error = (distance + 2.0**-50 * (width + largest)) * bins / width
    margin = 2.0 * (guess_error + edge_error)
    return margin if math.isfinite(margin) and margin < 0.5 else 1.0


def formula_edges(bits: int, start: float, step: float, count: int, edge_dtype) -> np.ndarray:
    """The first `count` edges as numpy_bins.cuh's EDGE_FORMULA computes them: start + i * step in float (bits 32)
    or double (64), each operation rounded once, then rounded to the edges' dtype."""
    arithmetic = np.dtype(np.float32) if bits == 32 else np.dtype(np.float64)
    i = np.arange(count, dtype=np.int64).astype(arithmetic)
    with np.errstate(all="ignore"):
        return (i * arithmetic.type(step) + arithmetic.type(start)).astype(edge_dtype)


# the edges are computed rather than read from this many bins on (choose_edge_formula), measured on an H100 with
# 2^24 and 2^28 float32 and int32 values, every value corrected against the edges (docs/histogram.md): reading was
# 3-8 % faster at 100 bins (the edges stay in L1), computing 0-15 % faster at 4,096 and twice as fast at 2^20 (each
# read an L2 access)
EDGE_FORMULA_MIN_BINS = 4096


def choose_edge_formula(bt_bits: int, bins: int, first, last, edges: np.ndarray) -> tuple:
    """(edge_formula, edge_start, edge_step): np.linspace(first, last, bins + 1) made edges[i] = start + i * step
    (step = (last - first) / bins) in float64 or float32 (the result type of first and last), rounded to the bin
    type, and the last edge exactly last.  The kernel computes edges[i], i < bins, the same way instead of reading
    them (the last edge is never compared: numpy_bins.cuh) wherever that gives every one of NumPy's edges bit for
    bit, tried in double and then in float; else (0, 0, 0): the kernel reads them.  Not for float16 bins (their
    rounding from double to half is not the kernel's float arithmetic)."""
    if bt_bits == 16 or bins < 1:
        return 0, 0.0, 0.0
    for bits, arithmetic in ((64, np.float64), (32, np.float32)):
        with np.errstate(all="ignore"):
            start, stop = arithmetic(first), arithmetic(last)
            step = (stop - start) / arithmetic(bins)
        if not (np.isfinite(start) and np.isfinite(step)):
            continue
        made = formula_edges(bits, float(start), float(step), bins, edges.dtype)
        if np.array_equal(made, edges[:bins]):
            return bits, float(start), float(step)
    return 0, 0.0, 0.0


@functools.lru_cache(maxsize=256)
def _bins_as(div_type: np.dtype, bins: int):
    """bins in DT, as NumPy's histogram multiplies by it."""
    return (np.ones(1, div_type) * bins)[0]


def uniform_rule(dtype, bins: int, first_edge, last_edge, *, explicit_range: bool) -> BinRule:
    """bins equal bins over [first_edge, last_edge]: the range given (explicit_range; checked by check_range) or the
    data's min and max (NumPy scalars of the data's dtype, already checked finite; every non-NaN value is then
    kept)."""
    dtype = np.dtype(dtype)
    with np.errstate(all="ignore"):  # NumPy warns of none of this (a float32 scale of a tiny range overflows)
        bin_edges = _equal_edges(dtype, bins, first_edge, last_edge)
        increasing = _increasing(bin_edges, bins)
        first, last = _expanded(first_edge, last_edge)
        bin_type = bin_edges.dtype
        own = _own_types(dtype, first, last)
        if own is not None:  # the data's own scalars: NumPy's types worked out once, the same values
            div_type = own[1]
            norm_dt = div_type.type(last - first if dtype.kind == "f" else int(last) - int(first))
            first_bt = bin_type.type(first)
        else:
            norm_denom = _unsigned_subtract(last, first)
            div_type = (np.zeros(1, bin_type) / norm_denom).dtype
            if _unsigned_subtract(np.zeros(1, bin_type), first).dtype != bin_type or div_type.kind != "f":
                raise TypeError(f"histogram: a range of {type(first_edge).__name__} and {type(last_edge).__name__} "
                                f"with {dtype} data is not supported")
            norm_dt = np.asarray(norm_denom).astype(div_type)[()]
            first_bt = np.asarray(first).astype(bin_type)[()]
        bins_dt = _bins_as(div_type, bins)
        if explicit_range:
            lo, hi = _kept_range(dtype.str, scalar_key(first), scalar_key(last))
        else:
            lo, hi = _lowest_highest(dtype)
        kdtype = key_dtype(dtype)
        edge_dtype = np.dtype(np.float64) if bin_type == np.float64 else np.dtype(np.float32)
        edges = bin_edges.astype(edge_dtype, copy=False)  # the same array where the bin type is the edges' own
        guess_bits, guess_scale = choose_guess(_bits(bin_type), _bits(div_type), bins, first, last, edges,
                                               increasing=increasing if edges is bin_edges else None)
        margin = (EXACT_GUESS if exact_guess(dtype, _bits(bin_type), guess_bits, bins, first, last, edges)
                  else guess_margin(_bits(bin_type), guess_bits, bins, first, last, edges))
        edge_formula, edge_start, edge_step = (choose_edge_formula(_bits(bin_type), bins, first, last, edges)
                                               if bins >= EDGE_FORMULA_MIN_BINS else (0, 0.0, 0.0))
    return BinRule(UNIFORM, dtype, bins, edges, bin_edges, lo=kdtype.type(lo), hi=kdtype.type(hi),
                   first_edge=first_bt, norm_denom=norm_dt, bins_as_div=bins_dt, bt_bits=_bits(bin_type),
                   dt_bits=_bits(div_type), guess_bits=guess_bits, guess_scale=guess_scale, guess_margin=margin,
                   edge_formula=edge_formula, edge_start=edge_start, edge_step=edge_step,
                   from_data=not explicit_range)


def check_edges(edges) -> np.ndarray:
    """Explicit edges (a host array or sequence) as NumPy checks them: 1-D, monotonically increasing; and numeric
    without NaN (pyscan's limit: NumPy would sort NaN edges after every value)."""
    edges = np.asarray(edges)
    if edges.ndim != 1:
        raise ValueError(f"`bins` must be 1d, when an array (got shape {edges.shape})")
    if edges.dtype not in EDGE_DTYPES:
        raise TypeError(f"`bins`: edges of dtype {edges.dtype} are not supported: expected one of "
                        f"{', '.join(str(d) for d in EDGE_DTYPES)}")
    if edges.size == 0:
        raise ValueError("`bins`: expected at least one edge, got none")
    if edges.dtype.kind == "f" and np.isnan(edges).any():
        raise ValueError("`bins`: the edges hold NaN, which pyscan does not take (NumPy would sort it last)")
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    if edges.size - 1 > MAX_BINS:
        raise ValueError(f"`bins`: at most {MAX_BINS} bins, got {edges.size - 1}")
    return edges


def edges_rule(dtype, edges) -> BinRule:
    """Bins between explicit edges (checked by check_edges), compared in NumPy's common type of data and edges."""
    dtype = np.dtype(dtype)
    edges = check_edges(edges)
    common = np.promote_types(dtype, edges.dtype)
    search = edges.astype(common).astype(key_dtype(common))
    return BinRule(EDGES, dtype, edges.size - 1, search, edges)


def bincount_rule(dtype, length: int) -> BinRule:
    """np.bincount's bins: value v in bin v, for length bins (made once per dtype and length of the last 64)."""
    if length > MAX_BINS:
        raise ValueError(f"bincount: max(x) + 1 = {length} bins is more than the {MAX_BINS} the kernels take")
    return _bincount_rule(np.dtype(dtype), int(length))


@functools.lru_cache(maxsize=64)
def _bincount_rule(dtype, length: int) -> BinRule:
    edges = np.zeros(1, np.float32)
    edges.flags.writeable = False  # shared by every call of the dtype and length
    return BinRule(BINCOUNT, dtype, length, edges)


# bincount's one pass (numpy_histogram.cu, EXTREMES): the count of the values below a guess of max(x) + 1 and, in
# the same read, the least and greatest value, in private copies: a power of two of bins from ONE_PASS_FEWEST_BINS
# (the byte values' 256 in 16 copies), or ONE_PASS_MOST_BINS (one copy of 12,288 counts in 48 KB) where that is
# more.  Not on the global histogram for a guess: one larger than the data need (the last call's) puts their few hot
# values on a few L2 addresses (2^28 int32 values below 9,000 took 5.3 ms on 16,384 global counters against 0.29 on
# 12,288 private ones, one H200).  A minlength past the private copies is no guess, and takes it (global_pass).
# docs/histogram.md, "bincount in one pass"
ONE_PASS_FEWEST_BINS = 256
ONE_PASS_MOST_BINS = SHARED_BYTES // 4


def one_pass_bins(length: int) -> int | None:
    """The bins of bincount's one pass where the result is expected to have `length` bins (the last call's on this
    dtype and device, or minlength): the power of two at or above it, at least ONE_PASS_FEWEST_BINS and at most
    ONE_PASS_MOST_BINS; None past ONE_PASS_MOST_BINS (then min_max.cu's pass, and the count with the right bins)."""
    if length > ONE_PASS_MOST_BINS:
        return None
    bins = ONE_PASS_FEWEST_BINS
    while bins < length:
        bins *= 2
    return min(bins, ONE_PASS_MOST_BINS)


# The most values bincount's global pass takes: its extremes cost the global count about a fifth of its time on
# uniform values (2^28 int32 values below 2^20 into 2^20 bins: 4,918-4,975 us a call against 4,000-4,069 for
# min_max.cu's pass and the plain count, one H100), more than min_max.cu's pass and its wait save past 2^24
# values; at 2^20 it made the call 2-3.6 x faster (docs/histogram.md, "bincount in one pass")
GLOBAL_PASS_MOST_VALUES = 2**24


def global_pass(minlength: int, n: int) -> bool:
    """Whether bincount's one pass over n values runs on the global histogram (numpy_bincount_global): where the
    caller's minlength alone puts the result past ONE_PASS_MOST_BINS, and n is at most GLOBAL_PASS_MOST_VALUES.  A
    length the result has whatever the data, not a guess: a count with the right bins would take the global
    histogram too.  (A guess from an earlier call never takes it: see ONE_PASS_MOST_BINS.)"""
    return ONE_PASS_MOST_BINS < minlength <= MAX_BINS and n <= GLOBAL_PASS_MOST_VALUES


def extremes_of(words, dtype) -> tuple:
    """(least, greatest) of integer data of `dtype` as Python ints, from the one pass's two words after its counts:
    the greatest value and the complement of the least, each as a 64-bit unsigned number of the same order (a signed
    value with its sign bit flipped)."""
    high, low_complement = (int(w) for w in words)
    low = ~low_complement & (2**64 - 1)
    if np.dtype(dtype).kind == "i":
        low, high = low - 2**63, high - 2**63
    return low, high


LETTER_EDGES = np.array([97, 101, 105, 109, 113, 117, 121, 122.5])  # a-d ... u-x, y-z (the last bin closed)


def byte_rule(bins: int, letters: bool = False) -> BinRule:
    """The byte histogram's bins as a NumPy rule: np.histogram(range=(0, 256)), or PMPP Fig. 9.1's letter bins as
    edges (the letter a has code 97; y-z is [121, 122.5], closed, so '{' (123) is left out)."""
    if letters:
        return edges_rule(np.uint8, LETTER_EDGES)
    return uniform_rule(np.uint8, bins, 0, 256, explicit_range=True)


# ---- strategy and grid ----------------------------------------------------------------------------------------

def choose_strategy(bins: int, weighted: bool, strategy: str | None = None, itemsize: int = 0) -> tuple:
    """(strategy, copies): for 1-byte data without weights, the byte values counted first (BYTES: fast.cu's 256
    bins, then numpy_histogram_fold); else private copies in shared memory while one copy fits in SHARED_BYTES (as
    many copies, a power of two up to MAX_COPIES, as fit in COPIES_BYTES; weighted: in SHARED_BYTES), else
    atomics on the global histogram.  strategy= forces one (a forced SHARED must fit; a forced BYTES needs 1-byte
    data without weights)."""
    if strategy == BYTES or (strategy is None and itemsize == 1 and not weighted):
        if itemsize != 1 or weighted:
            raise ValueError(f"the byte-value strategy counts 1-byte data without weights (itemsize {itemsize}, "
                             f"weights: {weighted})")
        return BYTES, 0
    counter = 8 if weighted else 4
    copies = 0
    if bins * counter <= SHARED_BYTES:
        copies = 1
        budget = SHARED_BYTES if weighted else COPIES_BYTES
        while copies < MAX_COPIES and bins * counter * copies * 2 <= budget:
            copies *= 2
    if strategy == GLOBAL or (strategy is None and copies == 0):
        return GLOBAL, 0
    if copies == 0:
        raise ValueError(f"{bins} bins of {counter}-byte counters do not fit in {SHARED_BYTES} bytes of shared memory")
    return SHARED, copies


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def private_counters(chosen: str, bins: int) -> int:
    """The counters in each private copy of a block of strategy `chosen`: the bins (SHARED), the 256 byte values
    (BYTES, counted before they are folded into the bins), none (GLOBAL)."""
    return 256 if chosen == BYTES else bins if chosen == SHARED else 0


def grid_size(n: int, itemsize: int, weighted: bool, sms: int, private_bins: int = 0) -> int:
    """Blocks of BLOCK threads: enough to fill the device (BLOCKS_PER_SM per SM) but no more than the data needs
    (one 16-byte vector per thread, or one weighted element), nor, for counts in private copies of `private_bins`
    counters (0: none), more than leave each block PRIVATE_COUNTS_PER_BIN values a bin (down to MIN_BLOCKS_PER_SM
    per SM); and enough that no block counts more than MAX_BLOCK_COUNT elements."""
    per_thread = 1 if weighted else max(1, 16 // itemsize)
    most = BLOCKS_PER_SM * sms
    if private_bins and not weighted:
        most = min(most, max(MIN_BLOCKS_PER_SM * sms, _ceil_div(n, PRIVATE_COUNTS_PER_BIN * private_bins)))
    grid = min(_ceil_div(n, BLOCK * per_thread), most)
    return max(1, grid, _ceil_div(n, MAX_BLOCK_COUNT))


def min_max_grid(n: int, itemsize: int, sms: int) -> int:
    """Blocks of min_max.cu for n elements: a multiple of 8, so that the three partial arrays (keys of 1 to 8 bytes,
    int32 flags) lie back to back with no padding and every byte the host copies back was written by a block (a
    block with no elements writes the identities)."""
    grid = max(1, min(_ceil_div(n, MIN_MAX_BLOCK * max(1, 16 // itemsize)), MIN_MAX_BLOCKS_PER_SM * sms))
    return _ceil_div(grid, 8) * 8


def density(counts: np.ndarray, bin_edges: np.ndarray) -> np.ndarray:
    """density=True as NumPy computes it: n / db / n.sum(), db the widths in float64."""
    widths = np.array(np.diff(bin_edges), float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / widths / counts.sum()
