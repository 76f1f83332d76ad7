"""Game of Life on the CPU: the NumPy reference on its own, the NumPy model of the bit-packed kernel, input
validation (all of which must fail before any GPU is touched), and the registry."""

import numpy as np
import pytest
from life_patterns import GOSPER_GUN, pattern, pulsar  # tests/helpers

import pyscan
from pyscan import life
from pyscan.life import reference as R
from pyscan.runtime.loader import kernel_files

GLIDER = np.array([[0, 1, 0],
                   [0, 0, 1],
                   [1, 1, 1]], dtype=np.uint8)


def place(pattern, shape, at=(0, 0), dtype=np.uint8):
    lattice = np.zeros(shape, dtype=dtype)
    y, x = at
    lattice[y:y + pattern.shape[0], x:x + pattern.shape[1]] = pattern
    return lattice


def loop_step(lattice):
    """A plain-loop Game of Life on a torus, written independently of the np.roll reference."""
    height, width = lattice.shape
    out = np.zeros_like(lattice)
    for y in range(height):
        for x in range(width):
            n = 0
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    if dy or dx:
                        n += int(lattice[(y + dy) % height, (x + dx) % width])
            alive = lattice[y, x] == 1
            out[y, x] = 1 if (n == 3 or (alive and n == 2)) else 0
    return out


@pytest.mark.parametrize("shape", [(10, 14), (8, 8), (7, 23)])
def test_glider_moves_one_cell_diagonally_every_four_generations(shape):
    start = place(GLIDER, shape, at=(2, 3))
    state = start
    for k in range(1, 2 * max(shape) + 1):  # long enough to cross both edges of the torus
        state = life.reference_step(state, 4)
        np.testing.assert_array_equal(state, np.roll(start, (k, k), axis=(0, 1)))
        assert state.sum() == 5
    # and the intermediate phases are not the glider shifted (it really moves through its phases)
    one = life.reference_step(start, 1)
    assert not any(np.array_equal(one, np.roll(start, (a, b), axis=(0, 1))) for a in range(shape[0]) for b in range(shape[1]))


def test_blinker_has_period_two():
    start = place(np.ones((1, 3), np.uint8), (9, 9), at=(4, 3))  # horizontal, centred at (4, 4)
    one = life.reference_step(start, 1)
    np.testing.assert_array_equal(one, start.T)  # vertical through the same centre
    assert not np.array_equal(one, start)
    np.testing.assert_array_equal(life.reference_step(start, 2), start)
    np.testing.assert_array_equal(life.reference_step(start, 101), start.T)


@pytest.mark.parametrize("at", [(3, 3), (0, 0), (5, 7)])  # (5, 7): the block wraps around both edges of 6x8
def test_block_is_still(at):
    shape = (6, 8)
    block = np.roll(place(np.ones((2, 2), np.uint8), shape), at, axis=(0, 1))
    for generations in (1, 2, 17):
        np.testing.assert_array_equal(life.reference_step(block, generations), block)


@pytest.mark.parametrize("shape", [(13, 17), (1, 1), (2, 5), (1, 9), (6, 1)])
def test_reference_agrees_with_plain_loops(shape, rng):
    lattice = (rng.random(shape) < 0.3).astype(np.int32)
    expected = lattice
    for generations in range(1, 6):
        expected = loop_step(expected)
        np.testing.assert_array_equal(life.reference_step(lattice, generations), expected)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32])
def test_reference_keeps_shape_and_dtype_and_input(dtype, rng):
    lattice = (rng.random((20, 30)) < 0.25).astype(dtype)
    before = lattice.copy()
    out = life.reference_step(lattice, 3)
    assert out.dtype == lattice.dtype and out.shape == lattice.shape
    np.testing.assert_array_equal(lattice, before)
    np.testing.assert_array_equal(out.astype(np.int32), life.reference_step(lattice.astype(np.int32), 3))
    zero = life.reference_step(lattice, 0)
    np.testing.assert_array_equal(zero, lattice)
    assert zero is not lattice


def test_reference_accepts_non_contiguous(rng):
    big = (rng.random((40, 60)) < 0.25).astype(np.uint8)
    view = big[::2, 1::3]
    np.testing.assert_array_equal(life.reference_step(view, 5), life.reference_step(view.copy(), 5))


# ---- The NumPy model of kernels/life/fast.cu: its word logic, wrap-around and padding, for any width ----

@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (3, 3), (37, 37), (100, 37), (5, 64), (3, 33), (7, 32),
                                   (9, 31), (40, 65), (16, 96), (1, 100), (100, 1), (33, 127)])
def test_bitpacked_model_equals_reference(shape, rng):
    lattice = (rng.random(shape) < 0.25).astype(np.uint8)
    np.testing.assert_array_equal(life.bitpacked_model(lattice, 12), life.reference_step(lattice, 12))


@pytest.mark.parametrize("width", [1, 5, 31, 32, 33, 64, 70])
def test_pack_unpack_round_trip_and_zero_padding(width, rng):
    lattice = (rng.random((4, width)) < 0.5).astype(np.uint8)
    words = life.pack_bits(lattice)
    assert words.dtype == np.uint32 and words.shape == (4, -(-width // 32))
    np.testing.assert_array_equal(life.unpack_bits(words, width), lattice)
    assert sum(bin(int(w)).count("1") for w in words.ravel()) == lattice.sum()  # padding bits are 0
    assert (words[:, 0] & 1 == lattice[:, 0]).all()  # bit 0 of word 0 is column 0


def test_bitpacked_glider_crosses_word_and_torus_edges():
    shape = (9, 37)  # two words per row, the second holding 5 columns
    start = place(GLIDER, shape, at=(1, 28))
    state = start
    for k in range(1, 40):
        state = life.bitpacked_model(state, 4)
        np.testing.assert_array_equal(state, np.roll(start, (k, k), axis=(0, 1)))


# ---- Validation: errors name what was expected, and come before any GPU work (this machine has no GPU) ----

BAD_LATTICES = [
    ([[0, 1], [1, 0]], TypeError, "numpy.ndarray"),
    (None, TypeError, "numpy.ndarray"),
    (np.zeros(5, np.uint8), ValueError, "2-D"),
    (np.zeros((2, 2, 2), np.uint8), ValueError, "2-D"),
    (np.zeros((4, 4), np.float32), TypeError, "bool, uint8 or int32"),
    (np.zeros((4, 4), np.int64), TypeError, "bool, uint8 or int32"),
    (np.full((4, 4), 2, np.int32), ValueError, "0s and 1s"),
    (np.array([[0, 1], [-1, 0]], np.int32), ValueError, "0s and 1s"),
    (np.array([[0, 1], [255, 0]], np.uint8), ValueError, "0s and 1s"),
    (np.zeros((0, 4), np.uint8), ValueError, "at least one row"),
]


@pytest.mark.parametrize("bad, exc, message", BAD_LATTICES)
@pytest.mark.parametrize("entry", ["reference", "step", "Life", "model"])
def test_bad_lattice(entry, bad, exc, message):
    call = {"reference": life.reference_step, "step": life.step, "Life": life.Life, "model": life.bitpacked_model}[entry]
    with pytest.raises(exc, match=message):
        call(bad)


@pytest.mark.parametrize("generations, exc", [(-1, ValueError), (1.5, TypeError), (2.0, TypeError), (True, TypeError),
                                              ("3", TypeError), (None, TypeError)])
def test_bad_generations(generations, exc):
    lattice = np.zeros((4, 4), np.uint8)
    for call in (life.reference_step, life.step):
        with pytest.raises(exc, match="non-negative int"):
            call(lattice, generations)


def test_numpy_integer_generations_accepted():
    lattice = place(np.ones((1, 3), np.uint8), (5, 5), at=(2, 1))
    np.testing.assert_array_equal(life.reference_step(lattice, np.int64(2)), lattice)


def test_unknown_kernel():
    with pytest.raises(ValueError, match="'auto', 'global', 'iterative_block', 'shared', 'tiled', 'fast'"):
        life.step(np.zeros((4, 4), np.uint8), kernel="nope")
    with pytest.raises(ValueError, match="unknown life algorithm"):
        life.Life(np.zeros((4, 4), np.uint8), kernel="conway")


@pytest.mark.parametrize("kernel", ["iterative_block", "shared"])
@pytest.mark.parametrize("shape", [(33, 32), (100, 37), (1, 1025), (1025, 1)])
def test_one_block_limit_error(kernel, shape):
    with pytest.raises(ValueError, match=r"at most 1024 cells.*Kernels without this limit: global, tiled, fast"):
        life.step(np.zeros(shape, np.uint8), kernel=kernel)
    with pytest.raises(ValueError, match=f"{shape[0]}x{shape[1]}"):
        life.Life(np.zeros(shape, np.uint8), kernel=kernel)


def test_zero_generations_needs_no_gpu():
    lattice = np.eye(5, dtype=np.bool_)
    out = life.step(lattice, 0, kernel="shared")
    assert out.dtype == np.bool_ and out is not lattice
    np.testing.assert_array_equal(out, lattice)


# ---- Registry ----

def test_registry_and_names():
    assert life.LIFE_KERNELS == ("global", "iterative_block", "shared", "tiled", "fast", "temporal")
    assert pyscan.LIFE_KERNELS == life.LIFE_KERNELS
    assert pyscan.REGISTRIES["life"] is life.LIFE
    files = set(kernel_files())
    for algorithm in life.LIFE:
        assert set(algorithm.kernels) <= files, algorithm.name
        assert algorithm.model is life.reference_step
        assert algorithm.source and algorithm.summary
        assert algorithm.max_length == (1024 if algorithm.name in ("iterative_block", "shared") else None)
    assert [a.name for a in life.LIFE if a.fast] == ["fast", "temporal"]
    assert life.choose_auto((16384, 16384)) == "temporal" and life.choose_auto((1, 7)) == "temporal"
    assert life.choose_auto((65536, 65536)) == "temporal"


# ---- The NumPy model of kernels/life/temporal.cu: k generations a pass, tile by tile, with the kernel's indices ----


def test_tiling_constants_are_the_kernels_defaults():
    """The driver passes reference.TEMPORAL_* as #defines; the .cu's own defaults (what nvcc and the sanitizer
    checks compile) are the same numbers."""
    import re

    from pyscan.life.drivers import TemporalDriver
    from pyscan.runtime.loader import KERNEL_ROOT

    source = (KERNEL_ROOT / "life" / "temporal.cu").read_text()
    defaults = {m[0]: int(m[1]) for m in re.findall(r"#define (\w+) (\d+)", source)}
    assert defaults == {"TILE_WORDS": R.TEMPORAL_TILE_WORDS, "TILE_ROWS": R.TEMPORAL_TILE_ROWS,
                        "MAX_K": R.TEMPORAL_MAX_K, "BLOCK": R.TEMPORAL_BLOCK}
    assert (TemporalDriver.tile_words, TemporalDriver.tile_rows, TemporalDriver.max_k, TemporalDriver.block) == (
        R.TEMPORAL_TILE_WORDS, R.TEMPORAL_TILE_ROWS, R.TEMPORAL_MAX_K, R.TEMPORAL_BLOCK)
    assert 1 <= R.TEMPORAL_DEFAULT_K <= R.TEMPORAL_MAX_K <= 32


@pytest.mark.parametrize("n, k, plan", [(0, None, []), (1, None, [1]), (5, None, [5]), (16, None, [16]),
                                        (37, None, [16, 16, 5]), (32, None, [16, 16]), (21, 8, [8, 8, 5]),
                                        (3, 16, [3]), (7, 1, [1] * 7), (33, 16, [16, 16, 1])])
def test_pass_plan(n, k, plan):
    assert R.TEMPORAL_DEFAULT_K == 16  # the plans below are written for it
    assert life.pass_plan(n, k) == plan
    assert life.pass_plan(n, k, cells=16384 ** 2) == plan
    assert sum(plan) == n


def test_choose_k_by_generations_and_lattice():
    large, small = 16384 ** 2, 1000 * 1000
    assert [R.choose_k(n, large) for n in (1, 5, 8, 100)] == [1, 5, 8, 16]
    assert [R.choose_k(n, small) for n in (1, 5, 8, 100)] == [1, 5, 8, 16]  # launch-bound: fewest launches
    assert [R.choose_k(100, large, default_k=k) for k in (4, 8)] == [4, 8]  # the sweep's other defaults
    assert R.choose_k(100, R.TEMPORAL_SMALL_CELLS, default_k=8) == 16  # small lattices: max_k whatever the default
    assert life.pass_plan(40, cells=small) == [16, 16, 8] and life.pass_plan(40, cells=large) == [16, 16, 8]


@pytest.mark.parametrize("k", [0, 17, -1])
def test_pass_plan_refuses_k_out_of_range(k):
    with pytest.raises(ValueError, match="1..16"):
        life.pass_plan(10, k)


# odd shapes: 1 x n, n x 1, primes, narrower / lower than a tile, wider than a tile (30 words = 960 columns), and
# several tiles each way with small tiles
@pytest.mark.parametrize("shape", [(1, 1), (1, 97), (97, 1), (2, 3), (31, 37), (67, 61), (13, 1009), (5, 961),
                                   (3, 993), (70, 33)])
def test_temporal_model_equals_reference(shape, rng):
    lattice = (rng.random(shape) < 0.3).astype(np.uint8)
    generations = 37  # small lattices: passes of 16, 16, 5
    np.testing.assert_array_equal(life.temporal_model(lattice, generations), life.reference_step(lattice, generations))


@pytest.mark.parametrize("k", [1, 2, 7, 16])
@pytest.mark.parametrize("shape", [(29, 67), (64, 64), (65, 1000)])
def test_temporal_model_every_k(shape, k, rng):
    lattice = (rng.random(shape) < 0.35).astype(np.uint8)
    np.testing.assert_array_equal(life.temporal_model(lattice, 2 * k + 1, k),
                                  life.reference_step(lattice, 2 * k + 1))


@pytest.mark.parametrize("tile_rows, k", [(4, 16), (1, 3), (7, 5)])
def test_temporal_model_small_tiles(tile_rows, k, rng):
    """Tiles lower than the halo (k > TILE_ROWS): each tile reads rows of several tiles above and below."""
    lattice = (rng.random((23, 70)) < 0.3).astype(np.uint8)
    np.testing.assert_array_equal(life.temporal_model(lattice, 3 * k + 2, k, tile_rows=tile_rows),
                                  life.reference_step(lattice, 3 * k + 2))


def test_temporal_model_32_generations_a_pass_is_the_halo_words_limit(rng):
    """k = 32 (the one-word halo's bound, MAX_K's limit) is still exact."""
    lattice = (rng.random((20, 1500)) < 0.35).astype(np.uint8)
    np.testing.assert_array_equal(life.temporal_model(lattice, 32, 32, max_k=32, tile_rows=8),
                                  life.reference_step(lattice, 32))


def test_temporal_hundreds_of_generations_odd_shapes(rng):
    for shape in [(1, 45), (45, 1), (17, 19), (11, 41)]:
        lattice = (rng.random(shape) < 0.3).astype(np.uint8)
        np.testing.assert_array_equal(life.temporal_model(lattice, 300), life.reference_step(lattice, 300))


@pytest.mark.parametrize("shape", [(9, 37), (41, 43)])
def test_temporal_glider_crosses_the_seam(shape):
    """A glider placed across the right and bottom edges (the periodic extension's seam), 4 generations at a time
    in passes of 8, 8, ..., 4: it moves one cell diagonally every 4 generations all the way round."""
    start = np.roll(place(GLIDER, shape), (shape[0] - 1, shape[1] - 2), axis=(0, 1))
    state = start
    for k in range(1, max(shape) + 2, 5):
        state = life.temporal_model(start, 4 * k)
        np.testing.assert_array_equal(state, np.roll(start, (k, k), axis=(0, 1)))


def test_temporal_pulsar_has_period_three_over_a_long_run():
    lattice = place(pulsar(), (31, 67), at=(9, 40))
    np.testing.assert_array_equal(life.reference_step(lattice, 3), lattice)
    assert not np.array_equal(life.reference_step(lattice, 1), lattice)
    np.testing.assert_array_equal(life.temporal_model(lattice, 300), lattice)   # 18 passes of 16 and one of 12
    np.testing.assert_array_equal(life.temporal_model(lattice, 300, 8), lattice)   # 37 passes of 8 and one of 4
    np.testing.assert_array_equal(life.temporal_model(lattice, 301), life.reference_step(lattice, 1))


def test_temporal_gosper_gun():
    """The Gosper glider gun on a lattice wider than a tile row of the model's small tiles: 120 generations, the
    gliders it fires cross tile edges; equal to the reference, and the gun has fired (population grew)."""
    lattice = place(pattern(GOSPER_GUN), (50, 80), at=(2, 2))
    out = life.temporal_model(lattice, 120, tile_rows=8)
    np.testing.assert_array_equal(out, life.reference_step(lattice, 120))
    assert out.sum() > lattice.sum() + 10


def test_temporal_model_keeps_padding_zero(rng):
    lattice = (rng.random((12, 45)) < 0.5).astype(np.uint8)
    words = R.pack_bits(lattice)
    for k in (1, 5, 16):
        out = R.temporal_pass(words, 45, k)
        assert (out[:, -1] >> np.uint32(13) == 0).all()  # 45 = 32 + 13: bits 13..31 of the last word are padding
        np.testing.assert_array_equal(R.unpack_bits(out, 45), life.reference_step(lattice, k))


class _Buffer:
    """A host array standing for a device buffer: the fake kernels below read and write .gpudata."""

    def __init__(self, array):
        self.gpudata = array
        self.shape, self.dtype = array.shape, array.dtype


class _FakeCall:
    device = None
    stream = None

    def scratch(self, shape, dtype):
        return _Buffer(np.full(shape, 0xA5A5A5A5, dtype))  # not zeroed, as on the GPU


def _fake_kernels(launches):
    """get_kernel for the temporal driver on the CPU: temporal.cu as the model's pass, pack.cu as pack_bits."""
    class Kernel:
        def __init__(self, function, defines):
            self.function, self.defines = function, defines

        def prepared_async_call(self, grid, block, stream, out, src, height, width, words_per_row, *rest):
            if self.function == "life_temporal":
                (k,) = rest
                d = self.defines
                assert d["TILE_WORDS"] == 30 and 1 <= k <= d["MAX_K"]
                tiles = -(-int(words_per_row) // 30) * -(-int(height) // d["TILE_ROWS"])
                assert grid == (tiles, 1, 1) and block == (d["BLOCK"], 1, 1)
                assert all(isinstance(v, np.int32) for v in (height, width, words_per_row, k))
                out[...] = R.temporal_pass(src, int(width), int(k), tile_rows=d["TILE_ROWS"], block=d["BLOCK"],
                                           max_k=d["MAX_K"])
                launches.append(int(k))
            elif self.function == "life_bitpacked":  # fast.cu: one generation
                (rows,) = rest
                assert isinstance(rows, np.int32) and rows >= 1 and block == (128, 1, 1)
                out[...] = R.pack_bits(life.reference_step(R.unpack_bits(src, int(width)), 1))
                launches.append("fast")
            elif self.function == "pack_cells":
                out[...] = R.pack_bits(src)
            elif self.function == "unpack_cells":
                out[...] = R.unpack_bits(src, int(width), out.dtype)
            else:
                raise AssertionError(self.function)

    def get_kernel(relpath, function, *, device=None, **defines):
        defines.pop("ELEM_TYPE", None)
        return Kernel(function, defines)
    return get_kernel


@pytest.mark.parametrize("k, generations, tiling", [(None, 21, {}), (None, 3, {}), (16, 40, {}), (1, 4, {}),
                                                    (5, 0, {}), (None, 19, {"tile_rows": 32, "block": 128}),
                                                    (7, 15, {"tile_rows": 160, "block": 1024}),
                                                    (32, 70, {"tile_rows": 32, "max_k": 32})])
def test_temporal_driver_with_the_model_as_its_kernel(monkeypatch, rng, k, generations, tiling):
    """TemporalDriver on the CPU, its launches going to the model: the grid, the arguments' order and types, the
    pass plan, the ping-pong of the two packed buffers."""
    from pyscan.life import drivers

    launches = []
    monkeypatch.setattr(drivers, "get_kernel", _fake_kernels(launches))
    monkeypatch.setattr(drivers.driver, "multiprocessor_count", lambda device: 132)
    lattice = (rng.random((70, 1001)) < 0.3).astype(np.uint8)
    d = drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall(), generations_per_pass=k, **tiling)
    total = 0
    for n in (generations, 1):
        assert d.advance(n) == len(life.pass_plan(n, k, d.max_k, cells=lattice.size))
        total += n
        np.testing.assert_array_equal(d.cells().gpudata, life.reference_step(lattice, total))
    assert launches == life.pass_plan(generations, k, d.max_k, cells=lattice.size) + [1]
    with pytest.raises(ValueError, match="1..16"):
        drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall(), generations_per_pass=17)
    with pytest.raises(ValueError, match="shared memory"):  # 2 x (161 + 32) rows x 128 B > 48 KiB, as ptxas says
        drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall(), tile_rows=161)
    with pytest.raises(ValueError, match="multiple of 32"):
        drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall(), block=100)
    with pytest.raises(ValueError, match="1..32"):
        drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall(), max_k=33)
    with pytest.raises(ValueError, match="shared memory"):  # 2 x (64 + 64) rows x 128 B = 32 KiB fits; 160 rows not
        drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall(), max_k=32, tile_rows=160)


def test_temporal_short_passes_on_large_lattices_run_on_fast(monkeypatch, rng):
    """Above TEMPORAL_SMALL_CELLS a pass of fewer than TEMPORAL_MIN_K generations is that many launches of fast.cu on
    the same packed words (the halo's recomputation costs more than it saves there); a fixed k is kept as asked."""
    from pyscan.life import drivers

    launches = []
    monkeypatch.setattr(drivers, "get_kernel", _fake_kernels(launches))
    monkeypatch.setattr(drivers.driver, "multiprocessor_count", lambda device: 132)
    lattice = (rng.random((70, 1001)) < 0.3).astype(np.uint8)
    monkeypatch.setattr(R, "TEMPORAL_SMALL_CELLS", lattice.size - 1)  # this lattice counts as a large one
    d = drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall())
    total = 0
    for n, expected in ((37, [16, 16, 5]), (2, ["fast", "fast"]), (17, [16, "fast"]), (3, [3])):
        launches.clear()
        assert d.advance(n) == len(expected)
        total += n
        assert launches == expected
        np.testing.assert_array_equal(d.cells().gpudata, life.reference_step(lattice, total))
    forced = drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall(), generations_per_pass=1)
    launches.clear()
    forced.advance(2)
    assert launches == [1, 1]  # the lab's k = 1 row times temporal.cu itself
    monkeypatch.setattr(R, "TEMPORAL_SMALL_CELLS", lattice.size)  # small: launch-bound, every pass on temporal.cu
    small = drivers.TemporalDriver(_Buffer(lattice.copy()), _FakeCall())
    launches.clear()
    small.advance(2)
    assert launches == [2]
