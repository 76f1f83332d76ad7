"""Host-side drivers of the Game of Life kernels (see the package docstring for the driver interface).

Every driver owns the device state of one lattice: two cell buffers swapped between launches for the multi-block
kernels (double buffering), one buffer updated in place for the single-block kernels, two bit-packed buffers for
`fast` and `temporal`.  Nothing goes through the host between generations.
"""

from __future__ import annotations

import numpy as np

from ..runtime import driver
from ..runtime.loader import get_kernel
from . import reference

# dtype of the device cells -> the C type injected as ELEM_TYPE.  bool lattices travel as uint8 (same bytes).
CELL_TYPES = {np.dtype(np.int32): "int", np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "unsigned char"}
MAX_GRID_Y = 65535  # CUDA's limit on gridDim.y
MAX_LAUNCH_GENERATIONS = 2**31 - 1  # `int iters` of the single-block kernels
COUNT_BLOCK = 256


def _cell_type(cells) -> str:
    try:
        return CELL_TYPES[np.dtype(cells.dtype)]
    except KeyError:
        raise TypeError(f"life drivers take int32 or uint8 device cells, got {cells.dtype}") from None


def _count_grid(n: int, call) -> tuple:
    return (max(1, min(-(-n // COUNT_BLOCK), 8 * driver.multiprocessor_count(call.device))), 1, 1)


class _Counter:
    """A 64-bit device counter for the population kernels (kernels/life/population.cu)."""

    def __init__(self, call):
        self.call = call
        self.total = call.scratch(1, np.uint64)

    def count(self, function: str, data, n: int, **defines) -> int:
        self.call.memset32(self.total, 0, 2)
        fn = get_kernel("life/population.cu", function, device=self.call.device, **defines)
        fn.prepared_async_call(_count_grid(n, self.call), (COUNT_BLOCK, 1, 1), self.call.stream, self.total.gpudata,
                               data.gpudata, np.int64(n))
        return int(self.call.to_host(self.total)[0])


class CellDriver:
    """Base of the drivers on one-cell-per-element lattices (int32 or uint8), double-buffered."""

    kernel_file = ""
    function = ""
    block = (32, 32, 1)

    def __init__(self, cells, call):
        self.call = call  # the device and stream every launch goes to
        self.height, self.width = (int(s) for s in cells.shape)
        self.cell_type = _cell_type(cells)
        self._grid = (-(-self.width // self.block[0]), -(-self.height // self.block[1]), 1)  # ceil: any H x W
        if self._grid[1] > MAX_GRID_Y:
            raise ValueError(f"{type(self).__name__}: a lattice of {self.height} rows needs {self._grid[1]} rows of "
                             f"blocks, more than CUDA's {MAX_GRID_Y}; use kernel='fast'")
        self._current = cells  # the driver owns it
        self._other = None
        self._counter = None
        self._fn = get_kernel(self.kernel_file, self.function, ELEM_TYPE=self.cell_type, device=call.device)

    def advance(self, generations: int) -> int:
        if generations == 0:
            return 0
        if self._other is None:
            self._other = self.call.empty(self._current.shape, self._current.dtype)
        fn = self._fn
        h, w = np.int32(self.height), np.int32(self.width)
        for _ in range(generations):
            fn.prepared_async_call(self._grid, self.block, self.call.stream, self._other.gpudata, self._current.gpudata, h, w)
            self._current, self._other = self._other, self._current
        return generations

    def cells(self):
        return self._current

    def population(self) -> int:
        if self._counter is None:
            self._counter = _Counter(self.call)
        return self._counter.count("count_cells", self._current, self.height * self.width, ELEM_TYPE=self.cell_type)


class GlobalDriver(CellDriver):
    kernel_file, function, block = "life/global.cu", "conway_global", (32, 32, 1)  # the book's 32x32 blocks


class TiledDriver(CellDriver):
    kernel_file, function, block = "life/tiled.cu", "conway_tiled", (32, 16, 1)  # = (TILE_W, TILE_H) of tiled.cu


class SingleBlockDriver(CellDriver):
    """The book's single-block iterative kernels: the lattice is updated in place, one launch for many generations."""

    max_cells = 1024

    def __init__(self, cells, call):
        super().__init__(cells, call)
        if self.height * self.width > self.max_cells:
            raise ValueError(f"{self.function} runs in one block, one thread per cell: at most {self.max_cells} cells")
        self.block, self._grid = (self.width, self.height, 1), (1, 1, 1)

    def advance(self, generations: int) -> int:
        fn = self._fn
        launches = 0
        while generations > 0:
            chunk = min(generations, MAX_LAUNCH_GENERATIONS)
            fn.prepared_async_call(self._grid, self.block, self.call.stream, self._current.gpudata,
                                   np.int32(self.height), np.int32(self.width), np.int32(chunk))
            generations -= chunk
            launches += 1
        return launches


class IterativeBlockDriver(SingleBlockDriver):
    kernel_file, function = "life/iterative_block.cu", "conway_iterative"


class SharedDriver(SingleBlockDriver):
    kernel_file, function = "life/shared.cu", "conway_shared"


class FastDriver:
    """Bit-packed lattice (32 cells a word, kernels/life/fast.cu), double-buffered; packed once at the start,
    unpacked only when cells() is asked for."""

    block = 128  # = BLOCK of fast.cu
    pack_block = 256

    def __init__(self, cells, call, *, rows: int | None = None):
        self.call = call  # the device and stream every launch goes to
        self.height, self.width = (int(s) for s in cells.shape)
        self.cell_type = _cell_type(cells)
        self.words_per_row = -(-self.width // 32)
        sms = driver.multiprocessor_count(call.device)
        self.rows = int(rows) if rows else self.default_rows(self.height, self.words_per_row, sms)
        strips = -(-self.height // self.rows)
        self._grid = (-(-strips * self.words_per_row // self.block), 1, 1)
        self._pack_grid = (max(1, min(-(-self.height * self.words_per_row * 32 // self.pack_block),
                                      16 * sms)), 1, 1)
        self._cells = cells  # reused as the unpack target
        self._current = call.scratch((self.height, self.words_per_row), np.uint32)
        self._other = call.scratch((self.height, self.words_per_row), np.uint32)
        self._cells_valid = True  # _cells holds the current generation
        self._counter = None
        self._step_fn = self._step_kernel()
        self._unpack_fn = get_kernel("life/pack.cu", "unpack_cells", ELEM_TYPE=self.cell_type, device=call.device)
        fn = get_kernel("life/pack.cu", "pack_cells", ELEM_TYPE=self.cell_type, device=call.device)
        fn.prepared_async_call(self._pack_grid, (self.pack_block, 1, 1), self.call.stream, self._current.gpudata, cells.gpudata,
                         *self._dims())

    def _step_kernel(self):
        return get_kernel("life/fast.cu", "life_bitpacked", device=self.call.device)

    @staticmethod
    def default_rows(height: int, words_per_row: int, sms: int) -> int:
        """Rows per thread: up to 16 (each row's horizontal sums serve three output rows; a longer strip spends
        fewer loads on its two extra rows), but few enough to keep ~2 threads per resident-thread slot of the GPU."""
        slots = 2 * 2048 * sms
        return int(max(1, min(16, height * words_per_row // slots)))

    def _dims(self):
        return np.int32(self.height), np.int32(self.width), np.int32(self.words_per_row)

    def advance(self, generations: int) -> int:
        if generations == 0:
            return 0
        fn = self._step_fn
        dims, rows = self._dims(), np.int32(self.rows)
        for _ in range(generations):
            fn.prepared_async_call(self._grid, (self.block, 1, 1), self.call.stream, self._other.gpudata,
                                   self._current.gpudata, *dims, rows)
            self._current, self._other = self._other, self._current
        self._cells_valid = False
        return generations

    def cells(self):
        if not self._cells_valid:
            self._unpack_fn.prepared_async_call(self._pack_grid, (self.pack_block, 1, 1), self.call.stream,
                                                self._cells.gpudata, self._current.gpudata, *self._dims())
            self._cells_valid = True
        return self._cells

    def population(self) -> int:
        if self._counter is None:
            self._counter = _Counter(self.call)
        return self._counter.count("count_bits", self._current, self.height * self.words_per_row)


class TemporalDriver(FastDriver):
    """The bit-packed lattice of `fast` advanced k generations a launch (temporal blocking, kernels/life/temporal.cu):
    advance(n) runs pass_plan(n): floor(n / k) launches of k generations and one of n mod k, with k = choose_k(n,
    cells) unless `generations_per_pass` fixes it (1..max_k).  The tiling (reference.TEMPORAL_*) is passed to the
    kernel as its #defines, so the driver, the kernel and the NumPy model agree; `tile_rows`, `block` and `max_k`
    override it for the lab's sweeps (pyscan_tools/lab/time_life.py --sweep-k)."""

    block = reference.TEMPORAL_BLOCK
    tile_words = reference.TEMPORAL_TILE_WORDS
    tile_rows = reference.TEMPORAL_TILE_ROWS
    max_k = reference.TEMPORAL_MAX_K
    static_shared = 48 * 1024  # the most static __shared__ memory a block may declare

    def __init__(self, cells, call, *, generations_per_pass: int | None = None, tile_rows: int | None = None,
                 block: int | None = None, max_k: int | None = None):
        if max_k is not None:
            if not 1 <= int(max_k) <= 32:
                raise ValueError(f"TemporalDriver: max_k must be in 1..32 (a one-word halo), got {max_k}")
            self.max_k = int(max_k)
        if generations_per_pass is not None and not 1 <= int(generations_per_pass) <= self.max_k:
            raise ValueError(f"TemporalDriver: generations_per_pass must be in 1..{self.max_k}, got "
                             f"{generations_per_pass}")
        self.generations_per_pass = None if generations_per_pass is None else int(generations_per_pass)
        if tile_rows is not None:
            self.tile_rows = int(tile_rows)
        if block is not None:
            self.block = int(block)
        shared = 2 * (self.tile_rows + 2 * self.max_k) * 4 * (self.tile_words + 2)
        if self.tile_rows < 1 or shared > self.static_shared:
            raise ValueError(f"TemporalDriver: tile_rows={self.tile_rows} needs {shared} bytes of shared memory with "
                             f"max_k={self.max_k}; at most {self.static_shared}")
        if self.block % 32 or not 32 <= self.block <= 1024:
            raise ValueError(f"TemporalDriver: block must be a multiple of 32 in 32..1024, got {self.block}")
        super().__init__(cells, call)  # the packed buffers, and fast.cu's strips for the short passes
        self._fast_fn, self._fast_grid = get_kernel("life/fast.cu", "life_bitpacked", device=call.device), self._grid
        tiles = -(-self.words_per_row // self.tile_words) * -(-self.height // self.tile_rows)
        self._grid = (tiles, 1, 1)

    def _step_kernel(self):
        return get_kernel("life/temporal.cu", "life_temporal", device=self.call.device, TILE_WORDS=self.tile_words,
                          TILE_ROWS=self.tile_rows, MAX_K=self.max_k, BLOCK=self.block)

    def plan(self, generations: int) -> list:
        return reference.pass_plan(generations, self.generations_per_pass, self.max_k, self.height * self.width)

    def advance(self, generations: int) -> int:
        """Run the pass plan; returns the launches.  A pass of fewer than TEMPORAL_MIN_K generations on a lattice
        above TEMPORAL_SMALL_CELLS runs as fast.cu's one-generation launches, unless generations_per_pass fixes k."""
        if generations == 0:
            return 0
        dims, launches = self._dims(), 0
        short = (0 if self.generations_per_pass is not None or self.height * self.width <= reference.TEMPORAL_SMALL_CELLS
                 else reference.TEMPORAL_MIN_K)
        for k in self.plan(generations):
            if k < short:
                for _ in range(k):
                    self._fast_fn.prepared_async_call(self._fast_grid, (FastDriver.block, 1, 1), self.call.stream,
                                                      self._other.gpudata, self._current.gpudata, *dims,
                                                      np.int32(self.rows))
                    self._current, self._other = self._other, self._current
                launches += k
                continue
            self._step_fn.prepared_async_call(self._grid, (self.block, 1, 1), self.call.stream, self._other.gpudata,
                                              self._current.gpudata, *dims, np.int32(k))
            self._current, self._other = self._other, self._current
            launches += 1
        self._cells_valid = False
        return launches
