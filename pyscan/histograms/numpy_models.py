"""NumPy step-models of kernels/histogram/numpy_histogram.cu and min_max.cu: the same bin arithmetic as
numpy_bins.cuh (float16 emulated in float32 and rounded to half after each step, as the kernel does), the same
order of elements (head, tail and 16-byte vectors of element_loads.cuh, thread by thread), the same private
copies and the same merge.  Needs only NumPy.

    numpy_histogram_model(data, rule, weights=None, *, strategy=None, sms=132, address=0, return_stats=False)
        -> int64 counts (float64 sums with weights), or (result, stats) with return_stats

The stats count the atomics the kernel issues: "shared_atomics" (to private copies), "global_atomics" (to the
global histogram: the merge, or the values with the global strategy) -- with the aggregation of runs, one per run
of equal bins in a thread's counted values; with the warp aggregation, one per distinct bin of a warp's step;
with both, one per run of the steps in which one lane leads the same bin.  "hot_bin_atomics": those of the
most-hit bin (in every block's copies together), the ones that wait for each other.
1-byte data (the byte-value strategy) are fast.cu's byte histogram (histograms.models.fast_model) and then the fold
of the 256 byte values into their bins.
"""

from __future__ import annotations

import numpy as np

from . import numpy_plan as plan


def _round(x, bits: int):
    """x (float32) rounded to half and back when the type is float16: what round_to_half does on the device."""
    return x.astype(np.float16).astype(np.float32) if bits == 16 else x


def bins_of(keys, rule: plan.BinRule) -> np.ndarray:
    """The bin of every key (the data as its key dtype) under the rule, -1 where it is not counted: BinRule::bin_of
    of numpy_bins.cuh, operation by operation."""
    keys = np.asarray(keys)
    out = np.full(keys.shape, -1, dtype=np.int64)
    bins = rule.bins
    if rule.mode == plan.UNIFORM:
        keep = (keys >= rule.lo) & (keys <= rule.hi)
        edge_type = rule.edges.dtype
        div_type = np.dtype(np.float64) if rule.dt_bits == 64 else np.dtype(np.float32)
        with np.errstate(all="ignore"):
            t = _round(keys[keep].astype(edge_type), rule.bt_bits)
            if rule.guess_bits == 32 and rule.bt_bits == 32:  # NumPy's subtraction, then * the scale in float
                f = (t - edge_type.type(rule.first_edge)) * np.float32(rule.guess_scale)
            elif rule.guess_bits == 32:  # t and first rounded to float first
                f = ((keys[keep].astype(np.float32) - np.float32(rule.first_edge)) * np.float32(rule.guess_scale))
            elif rule.guess_bits == 64:
                difference = _round(t - edge_type.type(rule.first_edge), rule.bt_bits)
                f = difference.astype(np.float64) * np.float64(rule.guess_scale)
            else:
                difference = _round(t - edge_type.type(rule.first_edge), rule.bt_bits)
                quotient = _round(difference.astype(div_type) / div_type.type(rule.norm_denom), rule.dt_bits)
                f = _round(quotient * div_type.type(rule.bins_as_div), rule.dt_bits)
            index = f.astype(np.int64)  # truncation: split_guess for a guess, (long long)f for NumPy's f
            if not rule.guess_bits:
                taken = np.zeros(f.shape, bool)
            elif rule.guess_margin == plan.EXACT_GUESS:  # GUESS_EXACT: every guess below the last edge
                taken = index < bins
            else:  # a guess further than the margin from both ends of its bin
                within = f - index.astype(f.dtype)
                taken = (index < bins) & (within > f.dtype.type(rule.guess_margin)) & (
                    within < f.dtype.type(1.0 - rule.guess_margin))
        index = np.clip(index, 0, bins - 1)
        edges = rule.edges  # read, or computed (EDGE_FORMULA; the last edge, never compared, read)
        if rule.edge_formula:
            edges = np.append(plan.formula_edges(rule.edge_formula, rule.edge_start, rule.edge_step, bins,
                                                 edges.dtype), edges[bins:])
        down = t < edges[index]
        up = ~down & (index != bins - 1) & (t >= edges[np.minimum(index + 1, bins)])
        out[keep] = np.where(taken, index, index - down + up)  # a guess well inside its bin, or the correction
    elif rule.mode == plan.EDGES:
        s = keys.astype(rule.edges.dtype)
        low = np.zeros(s.shape, np.int64)
        high = np.full(s.shape, bins + 1, np.int64)
        active = low < high
        while active.any():  # the kernel's binary search, every key at once
            middle = (low + high) >> 1
            below = rule.edges[np.minimum(middle, bins)] <= s
            low = np.where(active & below, middle + 1, low)
            high = np.where(active & ~below, middle, high)
            active = low < high
        with np.errstate(invalid="ignore"):
            last = (low == bins + 1) & (s <= rule.edges[bins])
        out = np.where(low == 0, -1, np.where(low == bins + 1, np.where(last, bins - 1, -1), low - 1))
    else:
        values = keys.astype(np.int64)
        out = np.where((values >= 0) & (values < bins), values, -1)
    return out


def element_order(n: int, itemsize: int, grid: int, block: int, *, weighted: bool = False, address: int = 0):
    """(index, thread, group) of every element as the kernel reads it: visit_keys of element_loads.cuh (head and
    tail one element per thread, the body as 16-byte vectors in a grid-stride loop), or with weights one element
    per thread per step.  `group` numbers the warp-wide calls (loop, step, position in the vector): the elements
    of one warp in one group are those __match_any_sync sees together.  address: the data's device address
    (only its value mod 16 matters)."""
    threads = grid * block
    if weighted:
        index = np.arange(n, dtype=np.int64)
        return index, index % threads, index // threads
    vec = max(1, 16 // itemsize)
    head = n if address % itemsize else ((16 - address % 16) % 16) // itemsize
    head = min(head, n)
    vectors = (n - head) // vec
    tail_start = head + vectors * vec
    head_index = np.arange(head, dtype=np.int64)
    tail_local = np.arange(n - tail_start, dtype=np.int64)
    v = np.arange(vectors, dtype=np.int64)
    lane = np.arange(vec, dtype=np.int64)
    body_index = (head + v[:, None] * vec + lane[None, :]).ravel()
    body_thread = np.repeat(v % threads, vec)
    head_steps = -(-head // threads)
    tail_steps = -(-(n - tail_start) // threads)
    body_group = head_steps + tail_steps + (np.repeat(v // threads, vec) * vec + np.tile(lane, vectors))
    index = np.concatenate([head_index, tail_start + tail_local, body_index])
    thread = np.concatenate([head_index % threads, tail_local % threads, body_thread])
    group = np.concatenate([head_index // threads, head_steps + tail_local // threads, body_group])
    return index, thread, group


def _check_cover(index: np.ndarray, n: int) -> None:
    if index.size != n or (n and not np.array_equal(np.sort(index), np.arange(n))):
        raise AssertionError("the kernel's indexing does not read every element exactly once")


# The aggregations: the bin of every atomic the kernel issues (their number is the atomics; the most frequent bin's
# count is the atomics on the hottest counter, the ones that serialise).

def _warp_groups(thread, group, element_bins) -> np.ndarray:
    """The warp aggregation: one per distinct (warp, group, bin) among the counted elements."""
    keep = element_bins >= 0
    triples = np.stack([thread[keep] // 32, group[keep], element_bins[keep]])
    return np.unique(triples, axis=1)[2] if keep.any() else np.zeros(0, np.int64)


def _run_starts(thread, step, bins) -> np.ndarray:
    """Runs of equal bins in each thread's sequence ordered by step: the bin of each run."""
    order = np.lexsort((step, thread))
    thread, bins = thread[order], bins[order]
    new = np.ones(thread.size, bool)
    new[1:] = (thread[1:] != thread[:-1]) | (bins[1:] != bins[:-1])
    return bins[new]


def _runs(thread, element_bins) -> np.ndarray:
    """Runs of a thread: in each thread's counted values, in its order, one per value whose bin differs from the
    previous counted value's (element_order lists each thread's values in the kernel's order)."""
    keep = element_bins >= 0
    return _run_starts(thread[keep], np.flatnonzero(keep), element_bins[keep])


def _warp_runs(thread, group, element_bins) -> np.ndarray:
    """Runs of the lanes' groups: in each step of a warp, the lowest lane of each group of lanes on one bin extends
    its own run by the group's count; a lane's run ends when it leads another bin."""
    keep = element_bins >= 0
    warp, lane, step, bins = thread[keep] // 32, thread[keep] % 32, group[keep], element_bins[keep]
    order = np.lexsort((lane, bins, step, warp))  # per (warp, step, bin): the lowest lane first
    warp, lane, step, bins = warp[order], lane[order], step[order], bins[order]
    first = np.ones(warp.size, bool)
    first[1:] = (warp[1:] != warp[:-1]) | (step[1:] != step[:-1]) | (bins[1:] != bins[:-1])
    return _run_starts(warp[first] * 32 + lane[first], step[first], bins[first])


def _atomic_stats(atomic_bins) -> tuple:
    """(atomics, atomics on the hottest counter)."""
    return int(atomic_bins.size), int(np.bincount(atomic_bins).max()) if atomic_bins.size else 0


def _byte_values_model(data, rule: plan.BinRule, sms: int, address: int):
    """The byte-value strategy: fast.cu's histogram of the bytes (256 bins), then numpy_histogram_fold."""
    from .models import fast_model

    byte_counts, fast_stats = fast_model(data.view(np.uint8), 256, sms=sms, address=address, return_stats=True)
    values = np.arange(256, dtype=np.uint8).view(data.dtype)
    value_bins = bins_of(values.astype(plan.key_dtype(data.dtype)), rule)
    fold = (value_bins >= 0) & (byte_counts != 0)
    result = np.zeros(rule.bins, np.int64)
    np.add.at(result, value_bins[fold], byte_counts[fold].astype(np.int64))
    stats = {"strategy": plan.BYTES, "copies": 0, "grid": None, "shared_atomics": fast_stats["shared_atomics"],
             "global_atomics": fast_stats["global_atomics"] + int(np.count_nonzero(fold))}
    return result, stats


def numpy_histogram_model(data, rule: plan.BinRule, weights=None, *, strategy: str | None = None, sms: int = 132,
                          address: int = 0, aggregate: str | None = None, return_stats: bool = False):
    """The histogram the kernels compute (int64 counts, or float64 sums of weights), element by element.
    aggregate: one of plan.AGGREGATIONS (None: plan.AGGREGATE's for the strategy); the lanes' apply to counts
    only."""
    data = np.asarray(data).ravel()
    if data.dtype != rule.dtype:
        raise TypeError(f"the rule is for {rule.dtype} data, got {data.dtype}")
    weighted = weights is not None
    n, bins = data.size, rule.bins
    chosen, copies = plan.choose_strategy(bins, weighted, strategy, data.dtype.itemsize)
    if chosen == plan.BYTES:
        result, stats = _byte_values_model(data, rule, sms, address)
        return (result, stats) if return_stats else result
    aggregate = plan.AGGREGATE[chosen] if aggregate is None else aggregate
    if aggregate not in plan.AGGREGATIONS:
        raise ValueError(f"aggregate: expected one of {', '.join(plan.AGGREGATIONS)}, got {aggregate!r}")
    if weighted and aggregate in ("warp", "warp_runs"):  # a group's weights would need a reduction
        aggregate = "none" if aggregate == "warp" else "runs"

    def atomics(thread, group, element_bins):
        if aggregate == "runs":
            return _atomic_stats(_runs(thread, element_bins))
        if aggregate == "warp":
            return _atomic_stats(_warp_groups(thread, group, element_bins))
        if aggregate == "warp_runs":
            return _atomic_stats(_warp_runs(thread, group, element_bins))
        return _atomic_stats(element_bins[element_bins >= 0])
    grid = plan.grid_size(n, data.dtype.itemsize, weighted, sms, plan.private_counters(chosen, bins))
    index, thread, group = element_order(n, data.dtype.itemsize, grid, plan.BLOCK, weighted=weighted,
                                         address=address)
    _check_cover(index, n)
    keys = data[index].astype(plan.key_dtype(data.dtype))
    element_bins = bins_of(keys, rule)
    keep = element_bins >= 0
    amount = (np.asarray(weights).ravel()[index].astype(np.float64) if weighted
              else np.ones(n, dtype=np.int64))
    if chosen == plan.SHARED:
        block_of = thread // plan.BLOCK
        copy_of = block_of * copies + (thread % plan.BLOCK) % copies
        private = np.zeros((grid * copies, bins), dtype=amount.dtype)
        np.add.at(private, (copy_of[keep], element_bins[keep]), amount[keep])
        if not weighted and private.size and private.max() >= 2**32:
            raise AssertionError("a 32-bit private counter would overflow")
        per_block = private.reshape(grid, copies, bins).sum(axis=1)  # the merge: copies, then blocks
        result = per_block.sum(axis=0)
        shared_atomics, hot = atomics(thread, group, element_bins)
        stats = {"strategy": chosen, "copies": copies, "grid": grid, "shared_atomics": shared_atomics,
                 "global_atomics": int(np.count_nonzero(per_block)), "hot_bin_atomics": hot}
    else:
        result = np.zeros(bins, dtype=amount.dtype)
        np.add.at(result, element_bins[keep], amount[keep])
        global_atomics, hot = atomics(thread, group, element_bins)
        stats = {"strategy": chosen, "copies": 0, "grid": grid, "shared_atomics": 0, "global_atomics": global_atomics,
                 "hot_bin_atomics": hot}
    result = result.astype(np.float64 if weighted else np.int64)
    return (result, stats) if return_stats else result


def min_max_partials_model(data, *, sms: int = 132, address: int = 0):
    """min_max.cu's block partials: (block_min, block_max, block_nan) in the key dtype, one per block."""
    data = np.asarray(data).ravel()
    n = data.size
    kdtype = plan.key_dtype(data.dtype)
    grid = plan.min_max_grid(n, data.dtype.itemsize, sms)
    index, thread, _ = element_order(n, data.dtype.itemsize, grid, plan.MIN_MAX_BLOCK, address=address)
    _check_cover(index, n)
    keys = data[index].astype(kdtype)
    block = thread // plan.MIN_MAX_BLOCK
    lowest, highest = plan._lowest_highest(data.dtype)
    nan = np.isnan(keys) if kdtype.kind == "f" else np.zeros(n, bool)
    mins = np.full(grid, highest, kdtype)
    maxs = np.full(grid, lowest, kdtype)
    np.minimum.at(mins, block[~nan], keys[~nan])
    np.maximum.at(maxs, block[~nan], keys[~nan])
    nans = np.zeros(grid, np.int32)
    np.maximum.at(nans, block, nan.astype(np.int32))
    return mins, maxs, nans


def finish_min_max(mins, maxs, nans, dtype) -> tuple:
    """(min, max) of the data as NumPy scalars of its dtype from the block partials (nan, nan if any was NaN, as
    NumPy's a.min() and a.max())."""
    dtype = np.dtype(dtype)
    if nans.any():  # (the arrays' own methods: a range=None call waits on this, and np.min's dispatch costs more)
        return dtype.type(np.nan), dtype.type(np.nan)
    return dtype.type(mins.min()), dtype.type(maxs.max())


def histogram_model(data, bins=10, range=None, weights=None, density=False, **model_options):
    """np.histogram(data, bins, range, weights, density) computed the way pyscan.histogram computes it: the host
    rule (numpy_plan), the min/max partials for range=None, the kernel's model, the finish."""
    data = np.asarray(data).ravel()
    if np.ndim(bins) == 0:
        count = plan.check_bins_count(bins)
        if range is not None:
            first, last = plan.check_range(range)
            rule = plan.uniform_rule(data.dtype, count, first, last, explicit_range=True)
        else:
            if data.size == 0:
                first, last = 0, 1
            else:
                first, last = finish_min_max(*min_max_partials_model(data), data.dtype)
                if not (np.isfinite(first) and np.isfinite(last)):
                    raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
            rule = plan.uniform_rule(data.dtype, count, first, last, explicit_range=False)
    else:
        rule = plan.edges_rule(data.dtype, bins)
    sums = numpy_histogram_model(data, rule, weights, **model_options)
    if weights is not None:
        sums = sums.astype(np.asarray(weights).dtype)
    if density:
        return plan.density(sums, rule.bin_edges), rule.bin_edges
    return sums, rule.bin_edges


def extremes_words_model(data) -> np.ndarray:
    """The two words numpy_histogram_once's EXTREMES build writes after its counts, for integer data: the greatest
    of the elements' ordered values (64-bit unsigned numbers of the same order: a signed value's sign bit flipped)
    and the greatest of their complements (the least value's)."""
    data = np.asarray(data).ravel()
    if data.dtype.kind == "i":
        ordered = data.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    else:
        ordered = data.astype(np.uint64)
    return np.array([ordered.max(), (~ordered).max()], np.uint64)


def one_pass_model(data, bins: int, **model_options) -> np.ndarray:
    """bincount's one pass (numpy_histogram_once, EXTREMES; numpy_bincount_global past the private copies' bins) over
    integer data: the counts of the values 0 .. bins - 1 (the counting kernel's model), then the two extreme words:
    bins + 2 uint64 values, the counts as the kernel writes them into its result (global) or its kept counters."""
    data = np.asarray(data).ravel()
    counts = numpy_histogram_model(data, plan.bincount_rule(data.dtype, bins), **model_options)
    return np.concatenate([counts.astype(np.uint64), extremes_words_model(data)])


def bincount_model(x, weights=None, minlength=0, *, expected_length: int = 0, **model_options):
    """np.bincount(x, weights, minlength) computed the way pyscan.bincount computes it.  Counts of data of 2 bytes
    or more: the one pass over plan.one_pass_bins(max(minlength, expected_length)) bins (expected_length: the last
    call's length on that dtype and device), or over minlength bins where plan.global_pass(minlength, x.size),
    counted again with the right bins only where the greatest value is not below them; weights, 1-byte data and
    expected lengths past the one pass: min_max.cu's partials, then the count."""
    x = np.asarray(x)
    length, counted = int(minlength), None
    if x.size:
        bins = length if plan.global_pass(length, x.size) else plan.one_pass_bins(max(length, expected_length))
        if weights is None and bins is not None and x.dtype.itemsize > 1:
            counted = one_pass_model(x, bins, **model_options)
            low, high = plan.extremes_of(counted[bins:], x.dtype)
        else:
            low, high = finish_min_max(*min_max_partials_model(x), x.dtype)
        if low < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(length, int(high) + 1)
    rule = plan.bincount_rule(x.dtype, length)
    if counted is not None and length <= counted.size - 2:
        return counted[:length].astype(plan.COUNT_DTYPE)
    return numpy_histogram_model(x, rule, weights, **model_options)
