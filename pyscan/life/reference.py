"""The NumPy side of the Game of Life: input checks, the reference (`np.roll` neighbour sums), and a NumPy model
of the bit-packed fast kernel (kernels/life/fast.cu).  Nothing here imports pycuda."""

from __future__ import annotations

import numpy as np

LATTICE_DTYPES = (np.dtype(np.bool_), np.dtype(np.uint8), np.dtype(np.int32))
_EXPECTED = "a 2-D numpy.ndarray of bool, uint8 or int32 holding only 0s and 1s"


def _describe(x) -> str:
    if isinstance(x, np.ndarray):
        return f"numpy.ndarray of dtype {x.dtype} and shape {x.shape}"
    return f"{type(x).__module__}.{type(x).__name__}" if hasattr(x, "shape") else f"{type(x).__name__} {x!r}"[:200]


def check_lattice(lattice, what="lattice") -> np.ndarray:
    """Validate a lattice; return it C-contiguous (copied only if it was not).  Raises TypeError / ValueError
    naming what was expected and what came."""
    if not isinstance(lattice, np.ndarray):
        raise TypeError(f"{what}: expected {_EXPECTED}, got {_describe(lattice)}")
    if lattice.ndim != 2:
        raise ValueError(f"{what}: expected {_EXPECTED}, got a {lattice.ndim}-D array of shape {lattice.shape}")
    if lattice.dtype not in LATTICE_DTYPES:
        raise TypeError(f"{what}: expected {_EXPECTED}, got dtype {lattice.dtype}")
    if lattice.size == 0:
        raise ValueError(f"{what}: expected at least one row and one column, got shape {lattice.shape}")
    if lattice.dtype != np.bool_:
        bad = (lattice != 0) & (lattice != 1)
        if bad.any():
            y, x = np.argwhere(bad)[0]
            raise ValueError(f"{what}: expected only 0s and 1s (dead/alive), got {lattice[y, x]} at row {y}, column {x}")
    return np.ascontiguousarray(lattice)


def check_generations(generations, what="generations") -> int:
    if isinstance(generations, (bool, np.bool_)) or not isinstance(generations, (int, np.integer)):
        raise TypeError(f"{what}: expected a non-negative int, got {_describe(generations)}")
    if generations < 0:
        raise ValueError(f"{what}: expected a non-negative int, got {generations}")
    return int(generations)


def _next_generation(cells: np.ndarray) -> np.ndarray:
    """One generation of 0/1 uint8 cells on the torus: neighbour sums with np.roll (wrap-around for free)."""
    column = cells + np.roll(cells, 1, axis=0) + np.roll(cells, -1, axis=0)  # the cell and the cells above/below
    box = column + np.roll(column, 1, axis=1) + np.roll(column, -1, axis=1)  # the 3x3 box, the cell included
    neighbours = box - cells
    return ((neighbours == 3) | ((cells == 1) & (neighbours == 2))).astype(np.uint8)


def reference_step(lattice, generations=1) -> np.ndarray:
    """The NumPy reference: `generations` generations of Conway's Game of Life on a torus.

    lattice: 2-D bool/uint8/int32 NumPy array of 0s and 1s.  Returns a new array of the same shape and dtype.
    Wrap-around follows np.roll, so even 1- and 2-wide lattices count each neighbour position once (a 1x1
    lattice's cell is its own eight neighbours), as the GPU kernels do.
    """
    cells = check_lattice(lattice, "reference_step: lattice")
    n = check_generations(generations, "reference_step: generations")
    state = cells.astype(np.uint8)
    for _ in range(n):
        state = _next_generation(state)
    return state.astype(cells.dtype)


# ---- A NumPy model of kernels/life/fast.cu (bit-packed, 32 cells a uint32 word), for CPU tests of its bit logic ----

def pack_bits(lattice) -> np.ndarray:
    """(H, W) 0/1 cells -> (H, ceil(W/32)) uint32 words, bit j of word k = column 32k + j, padding bits 0 (pack.cu)."""
    cells = np.asarray(lattice).astype(bool)
    height, width = cells.shape
    words = -(-width // 32)
    padded = np.zeros((height, words * 32), dtype=np.uint32)
    padded[:, :width] = cells
    weights = (np.uint32(1) << np.arange(32, dtype=np.uint32))
    return (padded.reshape(height, words, 32) * weights).sum(axis=2, dtype=np.uint64).astype(np.uint32)


def unpack_bits(words: np.ndarray, width: int, dtype=np.uint8) -> np.ndarray:
    bits = (words[:, :, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)
    return bits.reshape(words.shape[0], -1)[:, :width].astype(dtype)


def bitpacked_generation(words: np.ndarray, width: int) -> np.ndarray:
    """One generation on packed words, with exactly the word logic of fast.cu (vectorised over all words)."""
    w = words.astype(np.uint32)
    n_words = w.shape[1]
    last = n_words - 1
    r = width - 32 * last
    k = np.arange(n_words)
    k_west = np.where(k == 0, last, k - 1)
    bit_west = np.where(k == 0, r - 1, 31).astype(np.uint32)
    k_east = np.where(k == last, 0, k + 1)
    pos_east = np.where(k == last, r - 1, 31).astype(np.uint32)
    mask = np.full(n_words, 0xFFFFFFFF, dtype=np.uint32)
    if r < 32:
        mask[last] = (1 << r) - 1

    def full_add(a, b, c):
        t = a ^ b
        return t ^ c, (a & b) | (t & c)

    west = (w << np.uint32(1)) | ((w[:, k_west] >> bit_west) & np.uint32(1))
    east = (w >> np.uint32(1)) | ((w[:, k_east] & np.uint32(1)) << pos_east)
    h0, h1 = full_add(west, w, east)
    up0, up1 = np.roll(h0, 1, axis=0), np.roll(h1, 1, axis=0)  # row y-1 (wrapped)
    down0, down1 = np.roll(h0, -1, axis=0), np.roll(h1, -1, axis=0)
    x0, x1 = full_add(up0, h0, down0)
    z0, z1 = full_add(up1, h1, down1)
    q_is_1 = ~z1 & (x1 ^ z0)
    q_is_2 = (z1 & ~(x1 | z0)) | (~z1 & x1 & z0)
    nxt = (x0 & q_is_1) | (~x0 & w & q_is_2)
    return nxt & mask


def bitpacked_model(lattice, generations=1) -> np.ndarray:
    """reference_step computed the way fast.cu does it (packed words, bit-parallel adders); same result."""
    cells = check_lattice(lattice, "bitpacked_model: lattice")
    n = check_generations(generations, "bitpacked_model: generations")
    words = pack_bits(cells)
    for _ in range(n):
        words = bitpacked_generation(words, cells.shape[1])
    return unpack_bits(words, cells.shape[1], cells.dtype)


# ---- A NumPy model of kernels/life/temporal.cu: k generations a pass, tile by tile, with the kernel's indices ----

# The tiling of temporal.cu, stated once: the driver passes these as the kernel's #defines (their defaults in the
# .cu are the same numbers; a unit test reads them back), the model and the picture in docs/life.md use them.
TEMPORAL_TILE_WORDS = 30  # output words of a tile row (+ 2 halo words = 32, one warp lane per shared word)
TEMPORAL_TILE_ROWS = 64   # output rows of a tile
TEMPORAL_MAX_K = 16       # the most generations a pass (shared tile of TILE_ROWS + 2 * MAX_K rows); <= 32
TEMPORAL_BLOCK = 256      # threads a block: BLOCK / 32 warps, each a strip of shared rows
# Generations a pass that advance() aims for on large lattices: measured on an H100 (time_life.py --sweep-k, docs/life.md),
# Tcell/s at k = 1, 2, 4, 8, 12, 16: 16384^2 3.40 5.69 8.28 10.70 11.63 11.97, 65536^2 6.03 9.40 12.56 14.41 14.78
# 14.75 (fast: 6.84 and 8.20).
TEMPORAL_DEFAULT_K = 16
TEMPORAL_SMALL_CELLS = 1 << 22  # up to 2048^2 cells a launch costs about its launch overhead: as few launches as can be
# A pass of fewer generations than this on a lattice above TEMPORAL_SMALL_CELLS runs as that many launches of fast.cu
# (the same packed words): at k = 1 and 2 the halo's recomputation costs more than the traffic saved at 16384^2 (above).
TEMPORAL_MIN_K = 3


def choose_k(generations: int, cells: int | None = None, max_k: int = TEMPORAL_MAX_K,
             default_k: int = TEMPORAL_DEFAULT_K) -> int:
    """Generations per pass for advance(generations) on a lattice of `cells` cells: on small lattices (at most
    TEMPORAL_SMALL_CELLS, where a launch costs its overhead whatever it does) max_k, else default_k -- a guess
    between less traffic (larger k) and less recomputation of the halo (smaller k) until the k sweep is
    measured; never more than asked for."""
    k = max_k if cells is not None and cells <= TEMPORAL_SMALL_CELLS else min(default_k, max_k)
    return max(1, min(int(generations), k))


def pass_plan(generations: int, k: int | None = None, max_k: int = TEMPORAL_MAX_K, cells: int | None = None) -> list:
    """The k of each launch for advance(generations): floor(n / k) passes of k, then one of n mod k if any; k as
    given, else choose_k(n, cells)."""
    n = check_generations(generations, "pass_plan: generations")
    k = choose_k(n, cells, max_k) if k is None else int(k)
    if not 1 <= k <= max_k:
        raise ValueError(f"pass_plan: generations per pass must be in 1..{max_k}, got {k}")
    return [k] * (n // k) + ([n % k] if n % k else [])


def _load_columns(row: np.ndarray, c: int, width: int) -> np.uint32:
    """temporal.cu's load_columns: the 32 columns [c, c + 32) of a packed row, each modulo the width."""
    if c >= 0 and c + 32 <= width:
        return row[c >> 5]
    x = (c + np.arange(32)) % width
    bits = (row[x >> 5] >> (x & 31).astype(np.uint32)) & np.uint32(1)
    return np.uint32((bits.astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum())


def temporal_tile(words: np.ndarray, width: int, k: int, tx: int, ty: int, *, tile_words=TEMPORAL_TILE_WORDS,
                  tile_rows=TEMPORAL_TILE_ROWS, block=TEMPORAL_BLOCK, history=None) -> dict:
    """One block of life_temporal: {(y, w): word} it stores, with the kernel's indices (shared rows, lanes, warp
    strips, zero edge bits past the shared tile, the last generation straight to the output).  `history`, a list,
    receives (g, the shared tile's words after generation g, (first, end): the rows computed in it) for the load
    (g = 0) and each generation (g = k: the words the kernel computes in registers and stores), for the picture in
    docs/life.md."""
    height, words_per_row = words.shape
    sw = tile_words + 2
    warps = block // 32
    w0, y0 = tx * tile_words, ty * tile_rows
    sh = tile_rows + 2 * k
    garbage = np.uint32(0xDEADBEEF)  # the second shared buffer is never initialised on the GPU
    tile = [np.zeros((sh, sw), np.uint32), np.full((sh, sw), garbage, np.uint32)]
    for i in range(sh):
        row = words[(y0 - k + i) % height]
        for lane in range(sw):
            tile[0][i, lane] = _load_columns(row, 32 * (w0 - 1 + lane), width)
    if history is not None:
        history.append((0, tile[0].copy(), (0, sh)))
    r = width - 32 * (words_per_row - 1)
    lanes = np.arange(sw)
    w = w0 - 1 + lanes
    stores = (lanes >= 1) & (lanes <= tile_words) & (w < words_per_row)
    mask = np.where((w == words_per_row - 1) & (r < 32), np.uint32((1 << r) - 1) if r < 32 else 0,
                    np.uint32(0xFFFFFFFF)).astype(np.uint32)
    out = {}
    last = np.zeros((sh, sw), np.uint32)  # the last generation, for `history` only (the kernel stores it directly)

    def row_sum(src, i):
        centre = src[i]
        left = np.concatenate([[np.uint32(0)], centre[:-1] >> np.uint32(31)]).astype(np.uint32)
        right = np.concatenate([(centre[1:] << np.uint32(31)), [np.uint32(0)]]).astype(np.uint32)
        west, east = (centre << np.uint32(1)) | left, (centre >> np.uint32(1)) | right
        t = west ^ centre
        return centre, t ^ east, (west & centre) | (t & east)

    for g in range(1, k + 1):
        src, dst = tile[(g - 1) & 1], tile[g & 1]
        first, count = g, sh - 2 * g
        strip = -(-count // warps)
        covered = []
        for warp in range(warps):
            begin = first + warp * strip
            end = min(begin + strip, first + count)
            for i in range(begin, end):
                covered.append(i)
                _, up0, up1 = row_sum(src, i - 1)
                c_mid, mid0, mid1 = row_sum(src, i)
                _, down0, down1 = row_sum(src, i + 1)
                nxt = _rule_bitsliced(up0, up1, mid0, mid1, down0, down1, c_mid)
                if g < k:
                    dst[i] = nxt
                else:
                    if history is not None:
                        last[i] = nxt
                    y = y0 + i - k
                    if y < height:
                        for lane in np.flatnonzero(stores):
                            out[(y, int(w[lane]))] = np.uint32(nxt[lane] & mask[lane])
        assert covered == list(range(first, first + count)), "the warps' strips partition the rows of generation g"
        if history is not None:
            history.append((g, dst.copy() if g < k else last, (first, first + count)))
    return out


def _rule_bitsliced(up0, up1, mid0, mid1, down0, down1, centre):
    """rule.cuh's life_rule_bitsliced."""
    def full_add(a, b, c):
        t = a ^ b
        return t ^ c, (a & b) | (t & c)
    x0, x1 = full_add(up0, mid0, down0)
    z0, z1 = full_add(up1, mid1, down1)
    q_is_1 = ~z1 & (x1 ^ z0)
    q_is_2 = (z1 & ~(x1 | z0)) | (~z1 & x1 & z0)
    return (x0 & q_is_1) | (~x0 & centre & q_is_2)


def temporal_pass(words: np.ndarray, width: int, k: int, **tiling) -> np.ndarray:
    """One launch of life_temporal on packed words: every tile of the 1-D grid; checks each output word is
    stored exactly once."""
    height, words_per_row = words.shape
    tile_words = tiling.get("tile_words", TEMPORAL_TILE_WORDS)
    tile_rows = tiling.get("tile_rows", TEMPORAL_TILE_ROWS)
    if not 1 <= k <= tiling.pop("max_k", TEMPORAL_MAX_K):
        raise ValueError(f"k = {k} out of range")
    tiles_x, tiles_y = -(-words_per_row // tile_words), -(-height // tile_rows)
    out = np.full(words.shape, 0xFFFFFFFF, np.uint32)
    seen = np.zeros(words.shape, np.int32)
    for b in range(tiles_x * tiles_y):
        for (y, w), value in temporal_tile(words, width, k, b % tiles_x, b // tiles_x, **tiling).items():
            out[y, w] = value
            seen[y, w] += 1
    assert (seen == 1).all(), "every output word is stored by exactly one block"
    return out


def temporal_model(lattice, generations=1, k=None, **tiling) -> np.ndarray:
    """reference_step computed the way the temporal driver and kernel do it: pass_plan's launches of temporal.cu,
    each k generations tile by tile; same result."""
    cells = check_lattice(lattice, "temporal_model: lattice")
    n = check_generations(generations, "temporal_model: generations")
    words = pack_bits(cells)
    for kk in pass_plan(n, k, tiling.get("max_k", TEMPORAL_MAX_K), cells.size):
        words = temporal_pass(words, cells.shape[1], kk, **tiling)
    return unpack_bits(words, cells.shape[1], cells.dtype)
