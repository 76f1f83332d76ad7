"""Races that fail on screen: the books' buggy kernels as printed, run many times and checked against NumPy.

    RACES                          the three races, by name: "scan", "histogram", "life"
    count_wrong(name, runs=100)    run the racy kernel `runs` times on fresh inputs: a RaceCount (wrong runs, and
                                   the first wrong result beside the right one)
    run_racy(name, x)              one run of the racy kernel (kernels/races/*.cu) on the GPU
    run_fixed(name, x)             the same input through the library's fixed kernel
    race_model(name, x)            one possible interleaving of the race, in NumPy (no GPU): a wrong result the
                                   GPU may or may not produce, for tests and for pictures without a GPU

The races (each kernel's comment says where it is in the book and why it goes wrong):

    scan       Hands-On ch. 4's naive_prefix: no barrier between the read of sum_buf[tid - iter] and the write of
               sum_buf[tid] (write after read, PMPP §11.2).  Fixed: kernels/scan/naive.cu.
    histogram  PMPP §9.2 (Figs. 9.4-9.5): histo[bin]++ from many threads, a read-modify-write, loses updates.
               Fixed: kernels/histogram/atomic_block.cu (Fig. 9.6, atomicAdd).
    life       Hands-On ch. 4's one-block iterative Game of Life without __syncthreads(): warps read neighbours
               of a mixture of generations.  Fixed: kernels/life/iterative_block.cu.

A race need not strike on every run (it depends on the order the warps happen to run in), so nothing here
asserts that a racy run is wrong: count_wrong reports how many were.  What is certain is checked on every run:
the racy kernels write nothing outside their output (guard words around every buffer they write are verified;
an overwrite raises RuntimeError), and their results keep the invariants their comments derive (racy scan >=
right scan for non-negative input, 0 < racy count <= right count, cells stay 0 or 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

SCAN_SIZE = 1024  # the book's naive_prefix: one block of 1024 threads, 10 steps
HISTOGRAM_BYTES = 1 << 20  # a MiB of random lowercase letters
LIFE_SHAPE = (32, 32)  # the one-block kernels' largest square lattice (1024 cells)
LIFE_GENERATIONS = 32
GUARD = 64  # guard elements before and after every buffer a racy kernel writes
WARP = 32


@dataclass(frozen=True)
class Race:
    name: str
    title: str  # what the racy kernel is
    kernel: str  # under kernels/
    function: str
    fixed: str  # the library's fixed kernel, under kernels/
    source: str  # where the book prints the buggy code
    what_goes_wrong: str


RACES = {
    "scan": Race("scan", "naive prefix sum without the barrier between read and write",
                 "races/naive_prefix_no_barrier.cu", "naive_prefix", "scan/naive.cu",
                 "Hands-On ch. 4, naive_prefix as printed (PMPP §11.2's write-after-read race)",
                 "a thread reads its left neighbour after another warp already wrote this step's value"),
    "histogram": Race("histogram", "letter histogram without atomics (histo[bin]++)",
                      "races/histogram_no_atomics.cu", "histogram_no_atomics", "histogram/atomic_block.cu",
                      "PMPP §9.2, Figs. 9.4-9.5 (fixed by Fig. 9.6's atomicAdd)",
                      "two threads read the same count, both store count + 1: one update is lost"),
    "life": Race("life", "one-block Game of Life without __syncthreads()",
                 "races/life_block_no_sync.cu", "conway_no_sync", "life/iterative_block.cu",
                 "Hands-On ch. 4, the iterative one-block conway_ker without its barriers",
                 "a warp that runs ahead writes generation g + 1 where a slower warp still reads generation g"),
}


def _race(name) -> Race:
    if name not in RACES:
        raise ValueError(f"unknown race {name!r}: expected one of {', '.join(map(repr, RACES))}")
    return RACES[name]


# ---------------------------------------------------------------------------------------------------------------
# Inputs and right answers (NumPy).

def make_input(name, rng) -> np.ndarray:
    """A fresh input for one run: 1024 doubles 0..9 (scan), a MiB of random letters (histogram), a 32 x 32
    lattice about 35 % alive (life)."""
    _race(name)
    if name == "scan":
        return rng.integers(0, 10, SCAN_SIZE).astype(np.float64)  # small integers: every sum is exact
    if name == "histogram":
        return rng.integers(ord("a"), ord("z") + 1, HISTOGRAM_BYTES).astype(np.uint8)
    return (rng.random(LIFE_SHAPE) < 0.35).astype(np.int32)


def reference(name, x) -> np.ndarray:
    """The right answer, from NumPy (no GPU)."""
    _race(name)
    if name == "scan":
        return np.cumsum(x)
    if name == "histogram":
        from pyscan.histograms.reference import LETTER_BINS, reference_histogram

        return reference_histogram(x, LETTER_BINS, letters=True)
    from pyscan.life.reference import reference_step

    return reference_step(x, LIFE_GENERATIONS)


def check_invariants(name, x, result) -> None:
    """What every run of the racy kernel must keep, race or not (raises AssertionError otherwise): the right shape
    and dtype, and the bounds its kernel comment derives."""
    right = reference(name, x)
    result = np.asarray(result)
    if result.shape != right.shape:
        raise AssertionError(f"{name}: the racy kernel returned shape {result.shape}, expected {right.shape}")
    if name == "scan":
        if result[0] != x[0] or np.any(result < right):
            raise AssertionError(f"{name}: a racy scan of non-negative input is >= the right scan and starts at x[0]")
    elif name == "histogram":
        hit = right > 0
        if np.any(result > right) or np.any(result[hit] == 0) or np.any(result[~hit] != 0):
            raise AssertionError(f"{name}: lost updates give 0 < racy <= right counts, got {result} for {right}")
    elif not np.isin(result, (0, 1)).all():
        raise AssertionError(f"{name}: every cell must hold 0 or 1")


# ---------------------------------------------------------------------------------------------------------------
# One interleaving of each race, in NumPy: what the GPU produces when the warps run in a particular order.

def race_model(name, x) -> np.ndarray:
    """One possible outcome of the race, deterministic: the warps of a step run one after another in warp order,
    each warp's 32 threads reading together before they write (as a warp's load instruction does).

    scan:      warp w reads sum_buf[tid - iter] after warps 0 .. w-1 wrote this step's values
    histogram: in each of a thread's iterations the 32 lanes of a warp read the same counter together and all store
               read + 1: one increment per bin per warp-iteration survives (warps do not overlap)
    life:      warp w computes its cells from the lattice as warps 0 .. w-1 left it (generation g + 1 above,
               generation g below)
    """
    _race(name)
    if name == "scan":
        buf = np.array(x, dtype=np.float64)
        iter_ = 1
        while iter_ < buf.size:
            for w in range(0, buf.size, WARP):
                tid = np.arange(w, min(w + WARP, buf.size))
                tid = tid[tid >= iter_]
                buf[tid] = buf[tid] + buf[tid - iter_]  # the warp's reads happen before its writes (fancy indexing)
            iter_ *= 2
        return buf
    if name == "histogram":
        from pyscan.histograms.models import atomic_block_config
        from pyscan.histograms.reference import LETTER_BINS, bin_of

        data = np.asarray(x, np.uint8)
        n = data.size
        grid, block = atomic_block_config(n, 132)  # the grid the driver picks on an H100 (132 SMs)
        threads = grid * block
        section = -(-n // threads)
        index = np.arange(n)
        thread, k = index // section, index % section
        bins = bin_of(data, LETTER_BINS, letters=True)
        keep = bins >= 0
        warp_iteration = (thread[keep] // WARP) * section + k[keep]
        survivors = np.unique(warp_iteration * LETTER_BINS + bins[keep])
        return np.bincount(survivors % LETTER_BINS, minlength=LETTER_BINS).astype(np.uint64)
    from pyscan.life.reference import reference_step

    cells = np.array(x, dtype=np.int32)
    flat = cells.reshape(-1)
    for _ in range(LIFE_GENERATIONS):
        for w in range(0, flat.size, WARP):
            nxt = reference_step(cells, 1).reshape(-1)  # from the lattice as the earlier warps left it
            flat[w:w + WARP] = nxt[w:w + WARP]
    return cells


# ---------------------------------------------------------------------------------------------------------------
# On the GPU.

def _guarded(host: np.ndarray, call):
    """A device buffer holding `host` with GUARD sentinel elements on each side; returns (buffer, pointer to the
    first real element, sentinel)."""
    padded = np.empty(host.size + 2 * GUARD, host.dtype)
    padded.view(np.uint8)[:] = 0xA5  # the sentinel byte pattern
    padded[GUARD:GUARD + host.size] = host.reshape(-1)
    buf = call.to_device(padded)
    return buf, np.uintp(int(buf.gpudata) + GUARD * host.dtype.itemsize), padded


def _read_guarded(name, buf, padded, shape) -> np.ndarray:
    got = buf.get()
    size = padded.size - 2 * GUARD
    guards = np.concatenate([got[:GUARD], got[GUARD + size:]]).view(np.uint8)
    expected = np.concatenate([padded[:GUARD], padded[GUARD + size:]]).view(np.uint8)
    if not np.array_equal(guards, expected):
        raise RuntimeError(f"{name}: the racy kernel wrote outside its buffer (a guard word changed)")
    return got[GUARD:GUARD + size].reshape(shape)


def run_racy(name, x) -> np.ndarray:
    """One launch of the racy kernel on `x` (an input of make_input's kind); the result as NumPy.  Raises
    RuntimeError if the kernel wrote outside its output."""
    from pyscan.runtime.arrays import Call
    from pyscan.runtime.loader import get_kernel

    race = _race(name)
    call = Call.tool()
    if name == "scan":
        x = np.ascontiguousarray(x, np.float64)
        if x.size != SCAN_SIZE:
            raise ValueError(f"scan race: naive_prefix scans exactly {SCAN_SIZE} elements, got {x.size}")
        fn = get_kernel(race.kernel, race.function, ELEM_TYPE="double", SECTION_SIZE=SCAN_SIZE)
        vec = call.to_device(x)
        buf, out, padded = _guarded(np.zeros(SCAN_SIZE, np.float64), call)
        fn.prepared_call((1, 1, 1), (SCAN_SIZE, 1, 1), vec.gpudata, out)
        return _read_guarded(name, buf, padded, (SCAN_SIZE,))
    if name == "histogram":
        from pyscan.histograms.launch import sms
        from pyscan.histograms.models import atomic_block_config
        from pyscan.histograms.reference import LETTER_BINS

        data = np.ascontiguousarray(x, np.uint8).reshape(-1)
        if data.size == 0:
            raise ValueError("histogram race: needs at least one byte")
        fn = get_kernel(race.kernel, race.function, LETTERS=1)
        grid, block = atomic_block_config(data.size, sms(call))  # the grid of the fixed kernel, atomic_block
        dev = call.to_device(data)
        buf, histo, padded = _guarded(np.zeros(LETTER_BINS, np.uint64), call)
        fn.prepared_call((int(grid), 1, 1), (int(block), 1, 1), dev.gpudata, np.int64(data.size),
                         np.int32(LETTER_BINS), histo)
        return _read_guarded(name, buf, padded, (LETTER_BINS,))
    cells = np.ascontiguousarray(x, np.int32)
    height, width = cells.shape
    if height * width > 1024:
        raise ValueError(f"life race: one block holds at most 1024 cells, got {height} x {width}")
    fn = get_kernel(race.kernel, race.function, ELEM_TYPE="int")
    buf, lattice, padded = _guarded(cells, call)
    fn.prepared_call((1, 1, 1), (width, height, 1), lattice, np.int32(height), np.int32(width),
                     np.int32(LIFE_GENERATIONS))
    return _read_guarded(name, buf, padded, cells.shape)


def run_fixed(name, x) -> np.ndarray:
    """The same input through the library's fixed kernel (RACES[name].fixed), as NumPy."""
    import pyscan

    _race(name)
    if name == "scan":
        return np.asarray(pyscan.scan(np.ascontiguousarray(x, np.float64), algorithm="naive"))
    if name == "histogram":
        return np.asarray(pyscan.text_histogram(np.ascontiguousarray(x, np.uint8), algorithm="atomic_block"))
    return np.asarray(pyscan.life.step(np.ascontiguousarray(x, np.int32), LIFE_GENERATIONS, kernel="iterative_block"))


@dataclass
class RaceCount:
    name: str
    runs: int = 0
    wrong: int = 0
    fixed_runs: int = 0
    fixed_wrong: int = 0
    example: tuple | None = None  # (input, racy result, right result, fixed result) of the first wrong run
    wrong_elements: list = field(default_factory=list)  # per wrong run: how many outputs differ

    def line(self) -> str:
        fixed = f"; fixed kernel wrong in {self.fixed_wrong} of {self.fixed_runs}" if self.fixed_runs else ""
        worst = f" (up to {max(self.wrong_elements)} wrong outputs in a run)" if self.wrong_elements else ""
        return f"{self.name:<10} racy kernel wrong in {self.wrong:>4} of {self.runs} runs{worst}{fixed}"


def count_wrong(name, runs=100, *, seed=0, fixed_runs=None, racy=None, fixed=None, check=True) -> RaceCount:
    """Run the racy kernel `runs` times, each on a fresh input (make_input), and count the results that differ
    from NumPy; run the fixed kernel on the first `fixed_runs` (default: all) of the same inputs.  racy / fixed
    replace the GPU runners (race_model, say, to test this logic without a GPU).  With `check`, every racy result
    is held to check_invariants."""
    _race(name)
    racy = run_racy if racy is None else racy
    fixed = run_fixed if fixed is None else fixed
    fixed_runs = runs if fixed_runs is None else fixed_runs
    rng = np.random.default_rng(seed)
    count = RaceCount(name)
    for k in range(runs):
        x = make_input(name, rng)
        right = reference(name, x)
        got = np.asarray(racy(name, x))
        if check:
            check_invariants(name, x, got)
        count.runs += 1
        bad = int(np.count_nonzero(got != right))
        fixed_result = None
        if k < fixed_runs:
            fixed_result = np.asarray(fixed(name, x))
            count.fixed_runs += 1
            count.fixed_wrong += not np.array_equal(fixed_result, right)
        if bad:
            count.wrong += 1
            count.wrong_elements.append(bad)
            if count.example is None:
                if fixed_result is None:
                    fixed_result = np.asarray(fixed(name, x))
                count.example = (x, got, right, fixed_result)
    return count
