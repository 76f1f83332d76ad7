"""What the pattern of wrong indices says (no GPU: pure NumPy, so the hints are tested on synthetic arrays).

    first_wrong(expected, got, ok)        the first wrong index with its expected and got values
    index_hint(expected, got, ok, ...)    a Hint (kind, text) where the pattern of the wrong indices says something

The kinds, most specific first:

    shifted        got[i] == expected[i - 1] (or [i + 1]) nearly everywhere: inclusive vs exclusive, or a shifted
                   load that is off by one
    first_element  only index 0 (or the first element of every block) is wrong: the identity of an exclusive scan
    bounds         only the last element(s) are wrong, or the output was written past its end: the `i < n` bound
    block_sums     right within the first block, wrong after: the block sums (§11.6's kernels 2 and 3, or the
                   section total)
    warp_boundary  within one block, right up to a multiple of 32 and wrong from there on: threads of different
                   warps saw each other's values too early or too late: a missing __syncthreads()
    blocks         whole blocks wrong (named): what one block does differently (its offset, its load)
    scattered      wrong here and there: check the index arithmetic
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WARP = 32


@dataclass(frozen=True)
class Hint:
    kind: str
    text: str

    def __str__(self):
        return self.text


def _fmt(v) -> str:
    v = np.asarray(v).item() if np.ndim(v) == 0 else v
    return repr(v) if not isinstance(v, float) else f"{v:.9g}"


def first_wrong(expected, got, ok) -> tuple | None:
    """(index, expected, got) of the first False in `ok`, or None when everything is right."""
    bad = np.flatnonzero(~np.asarray(ok))
    if bad.size == 0:
        return None
    i = int(bad[0])
    return i, np.asarray(expected)[i], np.asarray(got)[i]


def _ranges(indices, limit=4) -> str:
    """[3, 4, 5, 9] -> '3-5, 9' (at most `limit` runs, then '...')."""
    runs, start, prev = [], None, None
    for i in map(int, indices):
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            runs.append((start, prev))
            start = prev = i
    if start is not None:
        runs.append((start, prev))
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:limit])
    return text + (", ..." if len(runs) > limit else "")


def index_hint(expected, got, ok, *, block: int | None = None, guard_written=None, same=None) -> Hint | None:
    """A Hint from the wrong indices of a 1-D result (None: nothing wrong, or nothing to say).

    block: the elements one block handles (a section), where the exercise has blocks; guard_written: indices past
    the end of the output that the kernel wrote (it must write none); same(a, b) -> bool array: equality as the
    check uses it (default ==)."""
    expected, got, ok = np.asarray(expected), np.asarray(got), np.asarray(ok, dtype=bool)
    n = expected.size
    same = same or (lambda a, b: a == b)
    if guard_written is not None and len(guard_written):
        where = _ranges(guard_written)
        return Hint("bounds", f"wrote past the end of the output (at n + {where}): a thread with index >= n stored "
                              "its value: the bound `if (i < n)` is missing or off by one")
    bad = np.flatnonzero(~ok)
    if bad.size == 0:
        return None
    m = min(n, block) if block else n  # the shift shows within one block (later blocks also get shifted sums)
    if m >= 3:
        right_shift = same(got[1:m], expected[:m - 1])  # got[i] == expected[i - 1]
        left_shift = same(got[:m - 1], expected[1:m])  # got[i] == expected[i + 1]
        for shifted, direction in ((right_shift, "right"), (left_shift, "left")):
            if np.mean(shifted) >= 0.9 and np.count_nonzero(~ok[:m]) >= 0.5 * m:
                return Hint("shifted", f"off by one position: got[i] is expected[i {'-' if direction == 'right' else '+'} "
                                       "1] nearly everywhere: inclusive vs exclusive, or the shifted load "
                                       "(PMPP §11.3: thread i loads in[i - 1], the identity at 0)")
    if bad.size == 1 and bad[0] == 0:
        return Hint("first_element", f"wrong only at index 0 (expected {_fmt(expected[0])}, got {_fmt(got[0])}): "
                                     "the first element -- for an exclusive scan the identity (0 for a sum, "
                                     "the lowest value for max), not x[0]")
    if block and n > block:
        starts = np.arange(0, n, block)
        if np.all(np.isin(bad, starts)) and 0 in bad:
            return Hint("first_element", "wrong only at the first element of each block: the identity the "
                                         "(exclusive) section starts with")
    first_block = bad[bad < (block or n)]
    if first_block.size >= 2 and expected.dtype.kind in "iu":
        diffs = got[first_block].astype(np.int64) - expected[first_block].astype(np.int64)
        if np.all(diffs == diffs[0]) and (first_block.size == min(n, block or n) or first_block[0] == 0):
            return Hint("identity", f"every output of the first block is off by the same {int(diffs[0])}: the value "
                                    "the scan starts from -- the identity (0 for a sum, the lowest value for max) "
                                    "or the first element")
    tail = n - bad[0]
    if bad[0] > 0 and tail <= max(2, n // 64) and np.all(bad >= n - tail):
        return Hint("bounds", f"wrong only at the last {tail} element(s) ({_ranges(bad)} of {n}): bounds -- the "
                              "last partial block, `i < n`, or padding past n with the identity")
    if block and n > block:
        if bad[0] >= block and bad[0] % block == 0:
            return Hint("block_sums", f"right within the first block (the first {block} elements), wrong after "
                                      f"(from index {int(bad[0])}): what differs from block to block -- for a scan "
                                      "the block sums (each section's total, their scan, adding them back: PMPP "
                                      "§11.6); for a map the block's offset blockIdx.x * blockDim.x")
        blocks_bad = np.unique(bad // block)
        whole = all(np.all(~ok[b * block:min(n, (b + 1) * block)]) for b in blocks_bad)
        if whole and blocks_bad.size < -(-n // block):
            return Hint("blocks", f"wrong in whole blocks ({_ranges(blocks_bad)} of {-(-n // block)} blocks of "
                                  f"{block}): what those blocks do differently -- their offset into the array, "
                                  "their load")
    span = block if block else n
    first = int(bad[0]) % span
    if first > 0 and first % WARP == 0 and span > WARP:
        return Hint("warp_boundary", f"right up to index {int(bad[0])}, a multiple of the warp size {WARP}, wrong "
                                     "from there: threads of different warps see each other's writes too early or "
                                     "too late: a missing __syncthreads() (PMPP §11.2's write-after-read race)")
    if bad.size == n:
        return Hint("everywhere", "wrong everywhere: compare your first steps with the model's (the load, the "
                                  "first combine)")
    return Hint("scattered", f"wrong at {bad.size} of {n} indices ({_ranges(bad)}): check the index arithmetic")


def scalar_hint(expected, got, x, op: str) -> Hint:
    """What a wrong reduction result says, from its value: a missing element, the identity, a lost block."""
    x = np.asarray(x)
    e, g = np.asarray(expected).item(), np.asarray(got).item()
    if op == "add" and x.dtype.kind in "iu" and x.size:
        diff = e - g
        if diff == x[-1] and x[-1] != 0:
            return Hint("bounds", "the sum misses exactly the last element: bounds (`<` vs `<=`, or the last partial "
                                  "segment)")
        if diff == x[0] and x[0] != 0:
            return Hint("bounds", "the sum misses exactly the first element: the first combine or the load offset")
    if op != "add" and g == 0 and e != 0:
        return Hint("identity", "got 0: the identity of max is the lowest value (op_identity()), not 0 -- padding "
                                "past n read as 0 wins over negative inputs")
    return Hint("value", f"expected {_fmt(e)}, got {_fmt(g)}: compare your steps with the model's")
