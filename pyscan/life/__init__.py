"""Conway's Game of Life (Hands-On GPU Programming with Python and CUDA, ch. 4) on a torus.

    pyscan.life.step(lattice, generations=1, *, kernel="auto")   -> a NumPy array, same shape and dtype
    game = pyscan.life.Life(lattice, kernel="auto")               -> the lattice kept on the GPU
    game.advance(100); game.population; game.generation; game.get()
    pyscan.life.reference_step(lattice, generations=1)            -> the NumPy reference (no GPU needed)

A lattice is a 2-D NumPy array of bool, uint8 or int32 holding 0 (dead) and 1 (alive); it wraps around in both
directions (a torus), so a glider leaving on the right comes back on the left.

Kernels (LIFE_KERNELS, in the order of issue 5's table, then the fast one):
  global           the book's conway_ker: one generation a launch, a 2-D grid of 32x32 blocks, any H x W
  iterative_block  the book's iterative conway_ker: many generations in one launch, ONE block (<= 1024 cells)
  shared           the book's conway_ker_shared: the iterative kernel in shared memory, ONE block (<= 1024 cells)
  tiled            beyond the book: many blocks, a shared-memory tile with a one-cell halo, any H x W
  fast             beyond the book: 32 cells per word, bit-parallel adders (kernels/life/fast.cu), any H x W
`auto` picks the fastest registered kernel (fast=True), else `tiled`.

Each kernel is registered in LIFE (pyscan.registry) with a *driver*: a class owning the device state of one lattice,

    driver = Driver(cells: GPUArray)   # (H, W) int32 or uint8 cells (bool travels as uint8); the driver takes
                                       # ownership of `cells` (it may overwrite it) and may raise ValueError for
                                       # sizes it cannot run
    driver.advance(generations: int) -> int    # runs the generations on the device; returns the kernel launches
    driver.cells() -> GPUArray         # the current (H, W) cells, owned by the driver, valid until the next advance
    driver.population() -> int        # the number of live cells, counted on the device

and the options `max_cells` (the single-block kernels' 1024, else None) checked before anything is launched.
"""

from __future__ import annotations

import numpy as np

from .. import arrays, gpu
from ..registry import Registry
from .drivers import FastDriver, GlobalDriver, IterativeBlockDriver, SharedDriver, TiledDriver
from .reference import (
    LATTICE_DTYPES,
    bitpacked_model,
    check_generations,
    check_lattice,
    pack_bits,
    reference_step,
    unpack_bits,
)

LIFE = Registry(
    "life", order=("global", "iterative_block", "shared", "tiled", "fast"),
    # the bit-packed kernel wins at every size (fewest bytes per cell) and takes any H x W; then the tiled one
    auto=("fast", "tiled"),
)

LIFE.register("global", GlobalDriver, kernels=("life/global.cu", "life/population.cu"),
              source="Hands-On GPU Programming with Python and CUDA, ch. 4: conway_ker",
              summary="one generation a launch, 2-D grid of 2-D blocks, neighbours read from global memory",
              model=reference_step, max_length=None)
LIFE.register("iterative_block", IterativeBlockDriver, kernels=("life/iterative_block.cu", "life/population.cu"),
              source="Hands-On GPU Programming with Python and CUDA, ch. 4: conway_ker with iters (__syncthreads)",
              summary="many generations in one launch of ONE block, in place, __syncthreads between read and write",
              model=reference_step, max_length=1024)
LIFE.register("shared", SharedDriver, kernels=("life/shared.cu", "life/population.cu"),
              source="Hands-On GPU Programming with Python and CUDA, ch. 4: conway_ker_shared",
              summary="the iterative single-block kernel on a shared-memory copy of the lattice",
              model=reference_step, max_length=1024)
LIFE.register("tiled", TiledDriver, kernels=("life/tiled.cu", "life/population.cu"),
              source="beyond the book (PMPP ch. 7 tiling applied to the Life stencil)",
              summary="many blocks, a 32x16 shared-memory tile with a one-cell halo, one generation a launch",
              model=reference_step, max_length=None)
LIFE.register("fast", FastDriver, kernels=("life/fast.cu", "life/pack.cu", "life/population.cu"),
              source="beyond the book: bit-sliced Life (32 cells per word, bitwise full adders)",
              summary="bit-packed lattice, one thread per 32 cells x a strip of rows, bit-parallel neighbour counts",
              model=reference_step, fast=True, max_length=None)

LIFE_KERNELS = LIFE.names()


def choose_auto(shape) -> str:
    """The kernel `auto` runs: the fast one where registered (it wins at every size: fewest bytes per cell, and
    it takes any H x W), else the tiled kernel."""
    return LIFE.choose(int(np.prod(shape)))


def _resolve(kernel, cells: np.ndarray, what: str) -> str:
    name = choose_auto(cells.shape) if kernel == "auto" else kernel
    limit = LIFE.get(name).max_length
    if limit is not None and cells.size > limit:
        unlimited = ", ".join(a.name for a in LIFE if a.max_length is None)
        height, width = cells.shape
        raise ValueError(
            f"{what}: kernel {name!r} runs the whole lattice in ONE block, one thread per cell, so it takes at most "
            f"{limit} cells (e.g. 32x32); got {height}x{width} = {cells.size} cells. "
            f"Kernels without this limit: {unlimited}.")
    return name


def _check_kernel_name(kernel):
    if kernel != "auto":
        LIFE.get(kernel)  # unknown names fail first, listing the valid ones


def _upload(cells: np.ndarray):
    """A device copy of the lattice from pyscan's pool (bool as uint8: the same bytes)."""
    host = cells.view(np.uint8) if cells.dtype == np.bool_ else cells
    device = arrays.empty(host.shape, host.dtype)
    device.set(host)
    return device


def step(lattice, generations=1, *, kernel="auto"):
    """`generations` generations of the Game of Life on the GPU; returns a new NumPy array (same shape, dtype).

    lattice: 2-D bool/uint8/int32 NumPy array of 0s and 1s (TypeError/ValueError otherwise, before any launch).
    kernel: one of LIFE_KERNELS or "auto".  iterative_block and shared take at most 1024 cells (one block).
    generations=0 returns a copy without touching the GPU.
    """
    _check_kernel_name(kernel)
    cells = check_lattice(lattice, "step: lattice")
    n = check_generations(generations, "step: generations")
    name = _resolve(kernel, cells, "step")
    if n == 0:
        return cells.copy()
    gpu.driver()
    driver = LIFE.get(name).driver(_upload(cells))
    driver.advance(n)
    out = driver.cells().get()
    return out.view(np.bool_) if cells.dtype == np.bool_ else out


class Life:
    """A lattice kept on the GPU and advanced there: no host copies between generations.

        game = Life(lattice, kernel="auto")
        game.advance(10)       # returns game, so game.advance(10).get() works
        game.generation        # 10
        game.population        # live cells, counted on the GPU (one 8-byte copy back)
        game.get()             # the lattice as a NumPy array of the input's dtype
    """

    def __init__(self, lattice, *, kernel="auto"):
        _check_kernel_name(kernel)
        cells = check_lattice(lattice, "Life: lattice")
        self.kernel = _resolve(kernel, cells, "Life")
        self.shape = cells.shape
        self.dtype = cells.dtype
        gpu.driver()
        self._driver = LIFE.get(self.kernel).driver(_upload(cells))
        self._generation = 0

    def advance(self, generations=1):
        n = check_generations(generations, "Life.advance: generations")
        self._driver.advance(n)
        self._generation += n
        return self

    def get(self) -> np.ndarray:
        out = self._driver.cells().get()
        return out.view(np.bool_) if self.dtype == np.bool_ else out

    @property
    def population(self) -> int:
        return self._driver.population()

    @property
    def generation(self) -> int:
        return self._generation

    def __repr__(self):
        return f"Life({self.shape[0]}x{self.shape[1]} {self.dtype}, kernel={self.kernel!r}, generation={self._generation})"


__all__ = [
    "LATTICE_DTYPES", "LIFE", "LIFE_KERNELS", "Life", "bitpacked_model", "check_generations", "check_lattice",
    "choose_auto", "pack_bits", "reference_step", "step", "unpack_bits",
]
