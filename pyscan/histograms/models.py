"""NumPy models of the histogram kernels: which thread counts which byte, into which private copy, and (for
the aggregating kernels) how many atomic updates the runs cost.  Needs only NumPy.

Every model has the signature

    model(data: np.ndarray of uint8, bins: int, *, letters=False, sms=132, return_stats=False)
        -> counts (np.ndarray of uint64), or (counts, stats: dict) with return_stats

and uses the same launch configuration (the `*_config` functions, also used by the drivers) and the same
index arithmetic as its kernel, enumerating every (thread, step) pair of the launch: an element the kernel's
indexing skipped or counted twice would show as a wrong count.  `sms` is the number of multiprocessors the
grid is sized for (132 on an H100).  The stats count the atomic updates the kernel does: "global_atomics"
(to the global histogram) and "shared_atomics" (to private copies in shared memory).
"""

from __future__ import annotations

import numpy as np

from .reference import COUNT_DTYPE, bin_of, counts_from_bins, nbins

BLOCK = 256  # threads per block of the book kernels
BLOCKS_PER_SM = 8  # 2048 resident threads per SM / 256: the grid that fills the device
COARSE_FACTOR = 32  # bytes per thread of the coarsened kernel
MAX_BLOCK_COUNT = 2**30  # no block counts more bytes than this, so its 32-bit shared counters cannot overflow

FAST_BLOCK = 1024  # threads per block of the fast kernel
FAST_COPIES = 16  # private histogram copies per block of the fast kernel
FAST_AGGREGATE = False  # run aggregation in the fast kernel (measured slower there; see fast.cu)
FAST_VECTOR = 16  # bytes per load of the fast kernel (uint4)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def device_grid(n: int, block: int, sms: int, blocks_per_sm: int, *, per_thread: int = 1) -> int:
    """A grid that fills the device (blocks_per_sm * sms blocks) but has no more blocks than the data needs
    (per_thread elements per thread), and enough that no block counts more than MAX_BLOCK_COUNT bytes."""
    grid = min(_ceil_div(n, block * per_thread), blocks_per_sm * sms)
    return max(1, grid, _ceil_div(n, MAX_BLOCK_COUNT))


# ---- launch configurations: (grid, block), shared by the drivers and the models ------------------------

def atomic_block_config(n: int, sms: int) -> tuple:
    return device_grid(n, BLOCK, sms, BLOCKS_PER_SM), BLOCK


def atomic_interleaved_config(n: int, sms: int) -> tuple:
    return device_grid(n, BLOCK, sms, BLOCKS_PER_SM), BLOCK


def privatized_config(n: int, sms: int) -> tuple:
    return max(1, _ceil_div(n, BLOCK)), BLOCK  # one byte per thread: the grid covers the input


def coarsened_config(n: int, sms: int) -> tuple:
    return max(1, _ceil_div(n, BLOCK * COARSE_FACTOR)), BLOCK


def aggregated_config(n: int, sms: int) -> tuple:
    return device_grid(n, BLOCK, sms, BLOCKS_PER_SM), BLOCK


def fast_config(n: int, sms: int, *, block: int = FAST_BLOCK, blocks_per_sm: int | None = None) -> tuple:
    per_sm = 2048 // block if blocks_per_sm is None else blocks_per_sm
    return device_grid(n, block, sms, per_sm, per_thread=FAST_VECTOR), block


# ---- helpers -------------------------------------------------------------------------------------------

def _grid_stride(n: int, threads: int):
    """(thread, step, index) of every pair of a grid-stride loop `for (i = tid; i < n; i += threads)`."""
    steps = _ceil_div(n, threads)
    tid = np.arange(threads, dtype=np.int64)[:, None]
    step = np.arange(steps, dtype=np.int64)[None, :]
    index = tid + step * threads
    mask = index < n
    return np.broadcast_to(tid, index.shape)[mask], np.broadcast_to(step, index.shape)[mask], index[mask]


def _check_cover(index: np.ndarray, n: int) -> None:
    """Every element is visited exactly once (the models would also show it in the counts)."""
    visits = np.bincount(index, minlength=n)
    if visits.shape[0] != n or not np.all(visits == 1):
        raise AssertionError("the kernel's indexing does not visit every element exactly once")


def _private(element_bins: np.ndarray, owner: np.ndarray, owners: int, nb: int) -> np.ndarray:
    """(owners, nb) private histograms: owner[j] counts element j."""
    keep = element_bins >= 0
    flat = owner[keep] * nb + element_bins[keep]
    return np.bincount(flat, minlength=owners * nb).reshape(owners, nb).astype(COUNT_DTYPE)


def runs(element_bins: np.ndarray, thread: np.ndarray, position: np.ndarray):
    """The runs of the aggregating kernels (PMPP Fig. 9.11, done right): each thread walks its elements in
    `position` order, skips uncounted ones (bin -1) and adds a run of equal bins with one atomic when the
    bin changes and once after its loop.  Returns (run_bins, run_lengths, run_threads)."""
    order = np.lexsort((position, thread))
    b = element_bins[order]
    t = thread[order]
    keep = b >= 0
    b, t = b[keep], t[keep]
    if b.size == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    start = np.ones(b.size, dtype=bool)
    start[1:] = (b[1:] != b[:-1]) | (t[1:] != t[:-1])
    starts = np.flatnonzero(start)
    lengths = np.diff(np.append(starts, b.size))
    return b[starts], lengths, t[starts]


def _finish(counts, stats, return_stats):
    return (counts, stats) if return_stats else counts


# ---- the models ----------------------------------------------------------------------------------------

def atomic_block_model(data, bins, *, letters=False, sms=132, return_stats=False):
    """PMPP Fig. 9.6: thread i counts the section [i * s, (i + 1) * s), s = ceil(n / threads), with global
    atomics."""
    data = np.asarray(data, dtype=np.uint8)
    n, nb = data.size, nbins(bins, letters)
    grid, block = atomic_block_config(n, sms)
    threads = grid * block
    section = (n - 1) // threads + 1
    index = (np.arange(threads, dtype=np.int64)[:, None] * section + np.arange(section, dtype=np.int64)[None, :]).ravel()
    index = index[index < n]
    _check_cover(index, n)
    element_bins = bin_of(data[index], bins, letters=letters)
    counts = counts_from_bins(element_bins, nb)
    return _finish(counts, {"global_atomics": int(np.count_nonzero(element_bins >= 0)), "shared_atomics": 0},
                   return_stats)


def atomic_interleaved_model(data, bins, *, letters=False, sms=132, return_stats=False):
    """PMPP Fig. 9.8: a grid-stride loop, thread i counts i, i + T, ... with global atomics."""
    data = np.asarray(data, dtype=np.uint8)
    n, nb = data.size, nbins(bins, letters)
    grid, block = atomic_interleaved_config(n, sms)
    _, _, index = _grid_stride(n, grid * block)
    _check_cover(index, n)
    element_bins = bin_of(data[index], bins, letters=letters)
    counts = counts_from_bins(element_bins, nb)
    return _finish(counts, {"global_atomics": int(np.count_nonzero(element_bins >= 0)), "shared_atomics": 0},
                   return_stats)


def _privatized_result(element_bins, block_of, grid, nb, return_stats):
    private = _private(element_bins, block_of, grid, nb)  # the blocks' shared-memory histograms
    if private.size and private.max() >= 2**32:
        raise AssertionError("a block's 32-bit shared counter would overflow")
    counts = private.sum(axis=0, dtype=COUNT_DTYPE)
    stats = {"global_atomics": int(np.count_nonzero(private)),  # nonzero bins are committed
             "shared_atomics": int(np.count_nonzero(element_bins >= 0))}
    return _finish(counts, stats, return_stats)


def privatized_model(data, bins, *, letters=False, sms=132, return_stats=False):
    """PMPP Fig. 9.10: the grid-stride loop into the block's shared histogram, then one commit per nonzero bin."""
    data = np.asarray(data, dtype=np.uint8)
    n, nb = data.size, nbins(bins, letters)
    grid, block = privatized_config(n, sms)
    tid, _, index = _grid_stride(n, grid * block)
    _check_cover(index, n)
    return _privatized_result(bin_of(data[index], bins, letters=letters), tid // block, grid, nb, return_stats)


def coarsened_model(data, bins, *, letters=False, sms=132, return_stats=False):
    """Coarsened privatisation: block b, step k < COARSE_FACTOR, thread t counts b*B*C + k*B + t."""
    data = np.asarray(data, dtype=np.uint8)
    n, nb = data.size, nbins(bins, letters)
    grid, block = coarsened_config(n, sms)
    b = np.arange(grid, dtype=np.int64)[:, None, None]
    k = np.arange(COARSE_FACTOR, dtype=np.int64)[None, :, None]
    t = np.arange(block, dtype=np.int64)[None, None, :]
    index = b * block * COARSE_FACTOR + k * block + t
    mask = index < n
    index, block_of = index[mask], np.broadcast_to(b, index.shape)[mask]
    _check_cover(index, n)
    return _privatized_result(bin_of(data[index], bins, letters=letters), block_of, grid, nb, return_stats)


def aggregated_model(data, bins, *, letters=False, sms=132, return_stats=False):
    """PMPP Fig. 9.11 done right: the grid-stride loop, runs of one bin in each thread's subsequence added with
    one shared atomic each (the last run too), then the commit of the nonzero bins."""
    data = np.asarray(data, dtype=np.uint8)
    n, nb = data.size, nbins(bins, letters)
    grid, block = aggregated_config(n, sms)
    tid, step, index = _grid_stride(n, grid * block)
    _check_cover(index, n)
    run_bins, lengths, run_threads = runs(bin_of(data[index], bins, letters=letters), tid, step)
    private = np.zeros((grid, nb), dtype=np.int64)
    np.add.at(private, (run_threads // block, run_bins), lengths)
    counts = private.sum(axis=0).astype(COUNT_DTYPE)
    stats = {"global_atomics": int(np.count_nonzero(private)), "shared_atomics": int(run_bins.size)}
    return _finish(counts, stats, return_stats)


def fast_model(data, bins, *, letters=False, sms=132, return_stats=False, address=0, block=FAST_BLOCK,
               copies=FAST_COPIES, aggregate=FAST_AGGREGATE, blocks_per_sm=None):
    """kernels/histogram/fast.cu: head bytes (before the first 16-byte aligned address; `address` is the
    array's device address, only its value mod 16 matters) one per thread, tail bytes (after the last whole
    vector) one per thread, then a grid-stride loop over 16-byte vectors; thread t counts into copy t % copies
    of its block, runs aggregated per thread (with `aggregate`)."""
    data = np.asarray(data, dtype=np.uint8)
    n, nb = data.size, nbins(bins, letters)
    grid, block = fast_config(n, sms, block=block, blocks_per_sm=blocks_per_sm)
    threads = grid * block
    head = min((16 - address % 16) % 16, n)
    vectors = (n - head) // FAST_VECTOR
    tail_start = head + vectors * FAST_VECTOR
    # thread and position in the thread's order of every element
    head_index = np.arange(head, dtype=np.int64)
    tail_index = np.arange(tail_start, n, dtype=np.int64)
    vthread, vstep, vindex = _grid_stride(vectors, threads)
    lane = np.arange(FAST_VECTOR, dtype=np.int64)
    body_index = (head + vindex[:, None] * FAST_VECTOR + lane[None, :]).ravel()
    body_thread = np.repeat(vthread, FAST_VECTOR)
    body_position = 2 + (np.repeat(vstep, FAST_VECTOR) * FAST_VECTOR + np.tile(lane, vindex.size))
    index = np.concatenate([head_index, tail_index, body_index])
    thread = np.concatenate([head_index, tail_index - tail_start, body_thread])
    position = np.concatenate([np.zeros(head, np.int64), np.ones(n - tail_start, np.int64), body_position])
    if np.any(thread >= threads):
        raise AssertionError("an element was given to a thread the grid does not have")
    _check_cover(index, n)
    element_bins = bin_of(data[index], bins, letters=letters)
    if aggregate:
        run_bins, lengths, run_threads = runs(element_bins, thread, position)
    else:
        keep = element_bins >= 0
        run_bins, run_threads = element_bins[keep], thread[keep]
        lengths = np.ones(run_bins.size, dtype=np.int64)
    copy_of = (run_threads // block) * copies + run_threads % block % copies
    private = np.zeros((grid * copies, nb), dtype=np.int64)
    np.add.at(private, (copy_of, run_bins), lengths)
    if private.size and private.max() >= 2**32:
        raise AssertionError("a 32-bit private counter would overflow")
    per_block = private.reshape(grid, copies, nb).sum(axis=1)
    counts = per_block.sum(axis=0).astype(COUNT_DTYPE)
    stats = {"global_atomics": int(np.count_nonzero(per_block)), "shared_atomics": int(run_bins.size)}
    return _finish(counts, stats, return_stats)


# ---- a literal, line-by-line model of the aggregated kernel, with and without the book's bugs -----------

BOOK_BUGS = ("current_bin", "no_last_flush", "self_commit")


def aggregated_listing(data, bins, *, letters=False, grid=2, block=4, book_bugs=()) -> np.ndarray:
    """The aggregated kernel (PMPP Fig. 9.11) executed thread by thread in Python, for small inputs.  book_bugs
    puts back bugs of the book's listing (BOOK_BUGS; all three is the listing as printed): "current_bin" adds a
    finished run to the bin that ends it instead of its own, "no_last_flush" never adds a thread's last run,
    "self_commit" commits histo_s into itself, so the global histogram stays zero."""
    unknown = set(book_bugs) - set(BOOK_BUGS)
    if unknown:
        raise ValueError(f"unknown book bugs {sorted(unknown)}: expected some of {BOOK_BUGS}")
    data = np.asarray(data, dtype=np.uint8)
    n, nb = data.size, nbins(bins, letters)
    histo = np.zeros(nb, dtype=np.int64)
    element_bins = bin_of(data, bins, letters=letters)
    for b in range(grid):
        histo_s = np.zeros(nb, dtype=np.int64)
        for t in range(block):
            prev_bin, accumulator = -1, 0
            for i in range(b * block + t, n, grid * block):
                bin_ = int(element_bins[i])
                if bin_ < 0:
                    continue
                if bin_ != prev_bin:
                    if accumulator > 0:
                        histo_s[bin_ if "current_bin" in book_bugs else prev_bin] += accumulator
                    prev_bin, accumulator = bin_, 1
                else:
                    accumulator += 1
            if accumulator > 0 and "no_last_flush" not in book_bugs:
                histo_s[prev_bin] += accumulator
        if "self_commit" in book_bugs:
            histo_s += histo_s  # atomicAdd(&(histo_s[binIdx]), histo_s[binIdx]): histo is never written
        else:
            histo += histo_s
    return histo.astype(COUNT_DTYPE)
