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
