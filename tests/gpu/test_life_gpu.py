"""Game of Life on the GPU: every kernel against the NumPy reference (pyscan.life.reference_step)."""

import functools

import numpy as np
import pytest
from life_patterns import GOSPER_GUN, pattern, pulsar  # tests/helpers

from pyscan import life

SIZES = [(32, 32), (100, 37), (256, 256), (1000, 1000)]
ODD_SIZES = [(1, 1), (1, 40), (40, 1), (3, 5), (2, 2), (31, 33), (5, 64), (7, 65), (16, 64)]


def fits(kernel, shape):
    limit = life.LIFE.get(kernel).max_length
    return limit is None or shape[0] * shape[1] <= limit


def cases(shapes):
    return [pytest.param(k, s, id=f"{k}-{s[0]}x{s[1]}") for k in life.LIFE_KERNELS for s in shapes if fits(k, s)]


@functools.lru_cache(maxsize=None)
def start_and_expected(shape, generations, seed=5):
    lattice = (np.random.default_rng(seed).random(shape) < 0.25).astype(np.int32)  # 25 % alive
    return lattice, life.reference_step(lattice, generations)


@pytest.mark.parametrize("kernel, shape", cases(SIZES))
def test_kernel_equals_reference_100_generations(kernel, shape):
    lattice, expected = start_and_expected(shape, 100)
    out = life.step(lattice, 100, kernel=kernel)
    assert out.dtype == np.int32 and out.shape == shape
    np.testing.assert_array_equal(out, expected)
    assert expected.sum() > 0  # the comparison is not between two empty lattices


@pytest.mark.parametrize("kernel, shape", cases(ODD_SIZES))
def test_kernel_odd_sizes(kernel, shape, rng):
    lattice = (rng.random(shape) < 0.4).astype(np.uint8)
    for generations in (1, 7):
        np.testing.assert_array_equal(life.step(lattice, generations, kernel=kernel), life.reference_step(lattice, generations))


@pytest.mark.parametrize("kernel", life.LIFE_KERNELS)
@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32])
def test_dtypes_come_back(kernel, dtype, rng):
    lattice = (rng.random((32, 32)) < 0.25).astype(dtype)
    out = life.step(lattice, 9, kernel=kernel)
    assert out.dtype == np.dtype(dtype) and out.shape == (32, 32)
    np.testing.assert_array_equal(out, life.reference_step(lattice, 9))


@pytest.mark.parametrize("kernel", life.LIFE_KERNELS)
def test_glider_on_gpu(kernel):
    lattice = np.zeros((16, 16), np.uint8)
    lattice[0:3, 0:3] = [[0, 1, 0], [0, 0, 1], [1, 1, 1]]
    np.testing.assert_array_equal(life.step(lattice, 4 * 20, kernel=kernel), np.roll(lattice, (20, 20), axis=(0, 1)))


@pytest.mark.parametrize("kernel", ["iterative_block", "shared"])
@pytest.mark.parametrize("shape", [(32, 32), (16, 64), (1, 1024), (1024, 1)])
def test_single_block_kernels_up_to_1024_cells_many_generations(kernel, shape, rng):
    lattice = (rng.random(shape) < 0.25).astype(np.int32)
    np.testing.assert_array_equal(life.step(lattice, 1000, kernel=kernel), life.reference_step(lattice, 1000))


@pytest.mark.parametrize("kernel", ["iterative_block", "shared"])
def test_one_block_limit(kernel):
    with pytest.raises(ValueError, match=r"at most 1024 cells.*global, tiled, fast"):
        life.step(np.zeros((64, 64), np.int32), kernel=kernel)
    with pytest.raises(ValueError, match="1024"):
        life.Life(np.zeros((32, 33), np.int32), kernel=kernel)


@pytest.mark.parametrize("kernel", life.LIFE_KERNELS)
def test_life_class(kernel, rng):
    shape = (32, 32) if not fits(kernel, (100, 37)) else (100, 37)
    lattice = (rng.random(shape) < 0.25).astype(np.bool_)
    game = life.Life(lattice, kernel=kernel)
    assert game.kernel == kernel and game.generation == 0
    assert game.population == int(lattice.sum())
    np.testing.assert_array_equal(game.get(), lattice)
    total = 0
    for n in (1, 0, 5, 17, 2):
        assert game.advance(n) is game
        total += n
        expected = life.reference_step(lattice, total)
        assert game.generation == total
        assert game.population == int(expected.sum())
        out = game.get()
        assert out.dtype == np.bool_ and out.shape == shape
        np.testing.assert_array_equal(out, expected)
    lattice[:] = 0  # the game holds its own copy
    assert game.population == int(expected.sum())
    with pytest.raises(ValueError, match="non-negative"):
        game.advance(-1)


def test_life_auto_is_temporal_and_population_large(rng):
    lattice = (rng.random((2000, 3001)) < 0.25).astype(np.uint8)
    game = life.Life(lattice)
    assert game.kernel == "temporal"
    assert game.population == int(lattice.sum())
    game.advance(10)
    expected = life.reference_step(lattice, 10)
    assert game.population == int(expected.sum())
    np.testing.assert_array_equal(game.get(), expected)


@pytest.mark.parametrize("rows", [1, 3, 16, 40])
@pytest.mark.parametrize("shape", [(100, 37), (65, 96), (7, 1)])
def test_fast_rows_per_thread(rows, shape, rng):
    from pyscan.life.drivers import FastDriver

    lattice = (rng.random(shape) < 0.3).astype(np.uint8)
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    driver = FastDriver(life._upload(lattice, call), call, rows=rows)
    np.testing.assert_array_equal(driver._current.get(), life.pack_bits(lattice))  # pack.cu == the model, padding 0
    driver.advance(25)
    np.testing.assert_array_equal(driver.cells().get(), life.reference_step(lattice, 25))
    np.testing.assert_array_equal(driver._current.get(), life.pack_bits(life.reference_step(lattice, 25)))


def test_tuning_script_smoke():
    """pyscan_tools/lab/time_life.py --smoke: every kernel on small odd sizes against the reference."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "pyscan_tools" / "lab" / "time_life.py"
    result = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "MISMATCH" not in result.stdout and "smoke" in result.stdout


# ---- temporal: k generations a launch (kernels/life/temporal.cu) ----

def _temporal(lattice, k=None):
    from pyscan.life.drivers import TemporalDriver
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    return TemporalDriver(life._upload(lattice, call), call, generations_per_pass=k)


@pytest.mark.parametrize("k", [1, 2, 5, 8, 13, 16])
@pytest.mark.parametrize("shape", [(1, 97), (97, 1), (61, 67), (127, 1009), (64, 960), (65, 961), (300, 2000)])
def test_temporal_every_k_odd_shapes(k, shape, rng):
    """Hundreds of generations in passes of k (and a remainder pass), on shapes that are not multiples of the tile
    (64 rows x 960 columns): the packed words equal the model's, padding included."""
    lattice = (rng.random(shape) < 0.3).astype(np.uint8)
    driver = _temporal(lattice, k)
    np.testing.assert_array_equal(driver._current.get(), life.pack_bits(lattice))
    generations = 200 + k // 2
    assert driver.advance(generations) == len(life.pass_plan(generations, k, cells=lattice.size))
    expected = life.reference_step(lattice, generations)
    np.testing.assert_array_equal(driver._current.get(), life.pack_bits(expected))
    np.testing.assert_array_equal(driver.cells().get(), expected)
    assert driver.population() == int(expected.sum())


def test_temporal_glider_across_the_seam():
    shape = (67, 1001)  # a prime-ish height, a width past one tile and not a multiple of 32
    start = np.zeros(shape, np.uint8)
    start[:3, :3] = [[0, 1, 0], [0, 0, 1], [1, 1, 1]]
    start = np.roll(start, (shape[0] - 1, shape[1] - 2), axis=(0, 1))
    game = life.Life(start, kernel="temporal")
    game.advance(4 * 67)  # once round vertically
    np.testing.assert_array_equal(game.get(), np.roll(start, (67, 67), axis=(0, 1)))


def test_temporal_pulsar_and_gun_long_runs():
    lattice = np.zeros((129, 1000), np.uint8)
    lattice[60:73, 950:963] = pulsar()  # across the tile edge at column 960
    game = life.Life(lattice, kernel="temporal")
    game.advance(3 * 333)
    np.testing.assert_array_equal(game.get(), lattice)
    gun = np.zeros((200, 1500), np.uint8)
    gun[5:14, 940:976] = pattern(GOSPER_GUN)
    game = life.Life(gun, kernel="temporal")
    game.advance(600)
    np.testing.assert_array_equal(game.get(), life.reference_step(gun, 600))


@pytest.mark.parametrize("tile_rows, block, max_k", [(32, 128, None), (128, 512, None), (160, 1024, None),
                                                     (1, 32, None), (64, 256, 32)])
def test_temporal_other_tilings(tile_rows, block, max_k, rng):
    """The lab's tiling overrides (the sweep in time_life.py): still exact, on a shape no tile divides."""
    from pyscan.life.drivers import TemporalDriver
    from pyscan.runtime.arrays import Call

    lattice = (rng.random((333, 2111)) < 0.3).astype(np.uint8)
    call = Call.tool()
    driver = TemporalDriver(life._upload(lattice, call), call, tile_rows=tile_rows, block=block, max_k=max_k)
    driver.advance(77)  # the largest k for the lattice: 16 (or 32) a pass and a remainder
    np.testing.assert_array_equal(driver.cells().get(), life.reference_step(lattice, 77))


def test_temporal_equals_fast_large(rng):
    lattice = (rng.random((4099, 8191)) < 0.25).astype(np.uint8)
    fast, temporal = life.Life(lattice, kernel="fast"), life.Life(lattice, kernel="temporal")
    fast.advance(101)
    temporal.advance(101)
    assert temporal.population == fast.population
    np.testing.assert_array_equal(temporal.get(), fast.get())


def test_sweep_k_script_smoke():
    """pyscan_tools/lab/time_life.py --sweep-k on a small lattice: every temporal row equal to fast."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "pyscan_tools" / "lab" / "time_life.py"
    result = subprocess.run([sys.executable, str(script), "--sweep-k", "--sizes", "512", "--ks", "1", "8", "16",
                             "--tile-rows", "32", "64", "--repeats", "10", "--warmup", "1"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count(" yes") == 6 and " NO" not in result.stdout
