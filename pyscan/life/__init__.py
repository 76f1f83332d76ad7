"""Conway's Game of Life (Hands-On GPU Programming with Python and CUDA, ch. 4) on a torus.

    pyscan.life.step(lattice, generations=1, *, kernel="auto")   -> a NumPy array, same shape and dtype
    game = pyscan.life.Life(lattice, kernel="auto")               -> the lattice kept on the GPU
    game.advance(100); game.population; game.generation; game.get()
    pyscan.life.reference_step(lattice, generations=1)            -> the NumPy reference (no GPU needed)

A lattice is a 2-D NumPy array of bool, uint8 or int32 holding 0 (dead) and 1 (alive); it wraps around in both
directions (a torus), so a glider leaving on the right comes back on the left.

Kernels (LIFE_KERNELS, in the registry's order: the book's (Hands-On ch. 4), then beyond it):
  global           the book's conway_ker: one generation a launch, a 2-D grid of 32x32 blocks, any H x W
  iterative_block  the book's iterative conway_ker: many generations in one launch, ONE block (<= 1024 cells)
  shared           the book's conway_ker_shared: the iterative kernel in shared memory, ONE block (<= 1024 cells)
  tiled            beyond the book: many blocks, a shared-memory tile with a one-cell halo, any H x W
  fast             beyond the book: 32 cells per word, bit-parallel adders (kernels/life/fast.cu), any H x W
  temporal         beyond the book: fast's packed lattice, k generations a launch in a shared tile (temporal
                   blocking, kernels/life/temporal.cu), any H x W; passes of 1-2 generations on fast.cu
`auto` picks temporal, else fast, else `tiled`.

Each kernel is registered in LIFE (pyscan.registry) with a *driver*: a class owning the device state of one lattice,

    driver = Driver(cells, call)       # (H, W) int32 or uint8 device cells (bool travels as uint8), and the Call
                                       # whose device and stream it launches on; the driver takes
                                       # ownership of `cells` (it may overwrite it) and may raise ValueError for
                                       # sizes it cannot run
    driver.advance(generations: int) -> int    # runs the generations on the device; returns the kernel launches
    driver.cells() -> GPUArray         # the current (H, W) cells, owned by the driver, valid until the next advance
    driver.population() -> int        # the number of live cells, counted on the device

and the options `max_cells` (the single-block kernels' 1024, else None) checked before anything is launched.
"""

from __future__ import annotations

import numpy as np

from ..registry import Registry
from ..runtime import arrays
from .drivers import FastDriver, GlobalDriver, IterativeBlockDriver, SharedDriver, TemporalDriver, TiledDriver
from .reference import (
    LATTICE_DTYPES,
    bitpacked_model,
    check_generations,
    check_lattice,
    pack_bits,
    pass_plan,
    reference_step,
    temporal_model,
    unpack_bits,
)

LIFE = Registry(
    "life", order=("global", "iterative_block", "shared", "tiled", "fast", "temporal"),
    # temporal blocking over the bit-packed lattice (fewest bytes per cell and generation) takes any H x W and wins
    # from k = 3 generations a pass (its short passes run on fast.cu); then fast alone, then the tiled kernel
    auto=("temporal", "fast", "tiled"),
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
# auto's choice: k generations a launch, 1.75x fast's Tcell/s at 16384^2 and 1.80x at 65536^2 (k = 16, H100,
# docs/life.md).
LIFE.register("temporal", TemporalDriver, kernels=("life/temporal.cu", "life/pack.cu", "life/population.cu"),
              source="beyond the book: fast's bit-sliced Life, PMPP ch. 8's stencil tiling (§8.3-8.5) carried along time",
              summary=(f"bit-packed lattice, k <= {TemporalDriver.max_k} generations a launch in a "
                       f"{TemporalDriver.tile_rows}-row x {32 * TemporalDriver.tile_words}-column shared tile with a "
                       "k-row / one-word halo"),
              model=reference_step, fast=True, max_length=None)

LIFE_KERNELS = LIFE.names()


def choose_auto(shape) -> str:
    """The kernel `auto` runs: temporal where registered (k generations a launch over fast's packed lattice; it
    takes any H x W), else fast, else the tiled kernel."""
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


def _upload(cells: np.ndarray, call):
    """A device copy (pyscan's memory, on the call's stream) of a checked NumPy lattice, bool as uint8 (the same
    bytes): what a driver takes, for tools that drive the kernels directly."""
    return call.to_device(cells.view(np.uint8) if cells.dtype == np.bool_ else cells)


def _begin(lattice, what: str, stream):
    """(Call, dtype) for a lattice: a NumPy array checked by check_lattice (bool travels as uint8, the same bytes), or
    a 2-D C-contiguous device array of bool, uint8 or int32 (pyscan.runtime.arrays), all checked before any launch (the
    0/1 values of a device lattice inside the call, see _check_device_values)."""
    if arrays.kind_of(lattice) in (arrays.NUMPY, None):
        cells = check_lattice(lattice, what)  # its messages for what is not an array, too
        host = cells.view(np.uint8) if cells.dtype == np.bool_ else cells
        return arrays.begin(host, what=what, dtypes=LATTICE_DTYPES, ndim=2, stream=stream), cells.dtype
    call = arrays.begin(lattice, what=what, dtypes=LATTICE_DTYPES, ndim=2, stream=stream)
    if call.size == 0:
        raise ValueError(f"{what}: expected at least one row and one column, got shape {call.shape}")
    return call, call.dtype


def _check_device_values(call, what: str) -> None:
    """A device lattice of uint8 or int32 must hold only 0s and 1s: checked on a host copy (one copy when a lattice
    comes in, none per generation), so a bad lattice is refused rather than run."""
    if call.host is not None or call.dtype == np.bool_:
        return
    check_lattice(call.to_host(call.x), what)


def _device_cells(call):
    """The driver's own copy of the lattice (drivers overwrite it; the caller's array is never modified)."""
    if call.host is not None:
        return call.x  # the upload is already a copy
    cells = call.empty(call.shape, call.dtype)
    call.copy(cells, call.x, call.size * call.dtype.itemsize)
    return cells


class _Shape:
    """Stands for a lattice in _resolve, which reads only .shape and .size."""

    def __init__(self, shape):
        self.shape, self.size = tuple(shape), int(np.prod(shape))


def step(lattice, generations=1, *, kernel="auto", stream=None):
    """`generations` generations of the Game of Life on the GPU; returns a new lattice of the input's kind, shape
    and dtype (NumPy in, NumPy out; a CuPy, torch, Numba or pycuda device lattice in, one of the same kind on the
    same device out, left on the device).

    lattice: 2-D bool/uint8/int32 array of 0s and 1s (TypeError/ValueError otherwise, before any launch); a device
    lattice must be C-contiguous.  kernel: one of LIFE_KERNELS or "auto".  iterative_block and shared take at most
    1024 cells (one block).  generations=0 returns a copy.  stream: as for pyscan.scan.
    """
    _check_kernel_name(kernel)
    call, dtype = _begin(lattice, "step: lattice", stream)
    n = check_generations(generations, "step: generations")
    name = _resolve(kernel, _Shape(call.shape), "step")
    if n == 0 and call.host is not None:
        return np.array(lattice, copy=True)  # nothing to run: no GPU needed
    with call:
        _check_device_values(call, "step: lattice")
        cells = _device_cells(call)
        if n:
            driver = LIFE.get(name).driver(cells, call)
            driver.advance(n)
            cells = driver.cells()
        out = call.finish(cells)
    return out.view(np.bool_) if call.host is not None and dtype == np.bool_ else out


class Life:
    """A lattice kept on the GPU and advanced there: no host copies between generations.

        game = Life(lattice, kernel="auto")   # NumPy, or a device lattice (CuPy, torch, Numba, GPUArray)
        game.advance(10)       # returns game, so game.advance(10).get() works
        game.generation        # 10
        game.population        # live cells, counted on the GPU (one 8-byte copy back)
        game.get()             # the lattice as a NumPy array of the input's dtype
        game.lattice           # the lattice on the device, no copy: an array of the input's kind (a GPUArray for
                               # NumPy input), valid until the next advance()

    Every call runs on the device and stream the Life was made with (stream=, default as in pyscan.scan).
    """

    def __init__(self, lattice, *, kernel="auto", stream=None):
        _check_kernel_name(kernel)
        self._call, self.dtype = _begin(lattice, "Life: lattice", stream)
        self.kernel = _resolve(kernel, _Shape(self._call.shape), "Life")
        self.shape = self._call.shape
        with self._call:
            _check_device_values(self._call, "Life: lattice")
            self._driver = LIFE.get(self.kernel).driver(_device_cells(self._call), self._call)
        self._generation = 0

    def advance(self, generations=1):
        n = check_generations(generations, "Life.advance: generations")
        with self._call:
            self._driver.advance(n)
        self._generation += n
        return self

    def get(self) -> np.ndarray:
        with self._call:
            out = self._call.to_host(self._driver.cells())
        return out.view(np.bool_) if self.dtype == np.bool_ else out

    @property
    def lattice(self):
        with self._call:
            cells = self._driver.cells()
        return self._call.on_device(cells)

    @property
    def population(self) -> int:
        with self._call:
            return self._driver.population()

    @property
    def generation(self) -> int:
        return self._generation

    def __repr__(self):
        return f"Life({self.shape[0]}x{self.shape[1]} {self.dtype}, kernel={self.kernel!r}, generation={self._generation})"


__all__ = [
    "LATTICE_DTYPES", "LIFE", "LIFE_KERNELS", "Life", "bitpacked_model", "check_generations", "check_lattice",
    "choose_auto", "pack_bits", "pass_plan", "reference_step", "step", "temporal_model", "unpack_bits",
]
