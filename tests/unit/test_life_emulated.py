"""kernels/life/temporal.cu's own CUDA source run on the CPU (tests/emulate/life_on_cpu.cpp on
tests/emulate/cuda_on_cpu.h: a block's threads as std::threads, warp shuffles through barriers, blocks one after the
other), compiled by the host C++ compiler with AddressSanitizer, against the NumPy model of the kernel word for word
(padding bits included) and the np.roll reference -- with the shipped tiling (the .cu's defaults) and with small
tiles, so that small lattices span many tiles and k exceeds the tile's height.  fast.cu, which shares rule.cuh's
bit-sliced rule, runs the same way against its own model.  No GPU; skipped where there is no g++ or no CUDA
headers."""

import os
import subprocess

import numpy as np
import pytest
from cuda_headers import build_emulator, needs_emulator

from pyscan import life
from pyscan.life import reference as R

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

# name -> the #defines (None: the .cu's defaults, i.e. reference.TEMPORAL_*) and the same tiling for the model
TILINGS = {
    "shipped": ({}, {}),
    "small": ({"TILE_ROWS": 8, "MAX_K": 16, "BLOCK": 64}, {"tile_rows": 8, "block": 64}),
    "k32": ({"TILE_ROWS": 16, "MAX_K": 32, "BLOCK": 128}, {"tile_rows": 16, "block": 128, "max_k": 32}),
}


@pytest.fixture(scope="module", params=list(TILINGS))
def build(request, tmp_path_factory):
    defines, tiling = TILINGS[request.param]
    where = tmp_path_factory.mktemp("life_emu")
    binary = build_emulator("life_on_cpu", where, extra=[f"-D{k}={v}" for k, v in defines.items()])
    return binary, tiling, where


def _run(build, words, width, plan):
    binary, _, where = build
    (where / "in.bin").write_bytes(np.ascontiguousarray(words, np.uint32).tobytes())
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
    p = subprocess.run([str(binary), str(words.shape[0]), str(width), str(where / "in.bin"), str(where / "out.bin"),
                        *map(str, plan)], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stderr[-4000:]}"
    return np.frombuffer((where / "out.bin").read_bytes(), np.uint32).reshape(words.shape)


# 1 x n, n x 1, primes, narrower and lower than a tile, more than one tile of words across (960 columns a tile)
@pytest.mark.parametrize("shape", [(1, 1), (1, 61), (23, 1), (3, 5), (19, 37), (31, 33), (7, 1009), (41, 64)])
def test_the_kernel_on_the_cpu_is_the_model(build, shape):
    _, tiling, _ = build
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    lattice = (rng.random(shape) < 0.3).astype(np.uint8)
    words = R.pack_bits(lattice)
    plan = R.pass_plan(29)  # 8, 8, 8, 5
    got = _run(build, words, shape[1], plan)
    want = words
    for k in plan:
        want = R.temporal_pass(want, shape[1], k, **tiling)
    np.testing.assert_array_equal(got, want)  # word for word, padding bits included
    np.testing.assert_array_equal(R.unpack_bits(got, shape[1]), life.reference_step(lattice, 29))


@pytest.mark.parametrize("k", [1, 3, 16, 32])
def test_every_k_on_the_cpu(build, k):
    if k > build[1].get("max_k", 16):
        pytest.skip("k past this build's MAX_K")
    rng = np.random.default_rng(k)
    lattice = (rng.random((37, 101)) < 0.35).astype(np.uint8)
    plan = R.pass_plan(2 * k + 3, k, build[1].get("max_k", 16))
    got = _run(build, R.pack_bits(lattice), 101, plan)
    np.testing.assert_array_equal(R.unpack_bits(got, 101), life.reference_step(lattice, 2 * k + 3))


def test_glider_across_the_seam_on_the_cpu(build):
    shape = (11, 45)
    glider = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]], np.uint8)
    start = np.zeros(shape, np.uint8)
    start[:3, :3] = glider
    start = np.roll(start, (shape[0] - 1, shape[1] - 2), axis=(0, 1))
    got = _run(build, R.pack_bits(start), shape[1], R.pass_plan(4 * 45))  # 45 cells diagonally: once round in x
    np.testing.assert_array_equal(R.unpack_bits(got, shape[1]), np.roll(start, (45, 45), axis=(0, 1)))


@pytest.mark.parametrize("rows", [1, 3, 16])
@pytest.mark.parametrize("shape", [(1, 1), (23, 1), (19, 37), (40, 64), (9, 100)])
def test_fast_on_the_cpu_is_the_bitpacked_model(build, shape, rows):
    """fast.cu with the rule now in rule.cuh: word for word the NumPy model of fast.cu (and the reference)."""
    rng = np.random.default_rng(shape[0] + shape[1] + rows)
    lattice = (rng.random(shape) < 0.35).astype(np.uint8)
    words = R.pack_bits(lattice)
    got = _run(build, words, shape[1], ["fast", rows, 9])
    want = words
    for _ in range(9):
        want = R.bitpacked_generation(want, shape[1])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(R.unpack_bits(got, shape[1]), life.reference_step(lattice, 9))


def test_pulsar_and_gun_long_runs_on_the_cpu(build):
    """The period-3 pulsar across a tile edge for 150 generations, and the Gosper gun for 300 (its gliders
    wrapping round the torus), in the driver's passes for these lattices; the shipped tiling only (the small one
    takes a minute of threads)."""
    from life_patterns import GOSPER_GUN, pattern, pulsar

    if build[1]:
        pytest.skip("the shipped tiling only")  # the others take a minute of threads
    lattice = np.zeros((70, 1000), np.uint8)
    lattice[57:70, 950:963] = pulsar()  # across the rows 64 and the columns 960 where the shipped tiles meet
    got = _run(build, R.pack_bits(lattice), 1000, R.pass_plan(150, cells=lattice.size))
    np.testing.assert_array_equal(R.unpack_bits(got, 1000), lattice)
    gun = np.zeros((60, 90), np.uint8)
    gun[2:11, 2:38] = pattern(GOSPER_GUN)
    got = _run(build, R.pack_bits(gun), 90, R.pass_plan(300, cells=gun.size))
    want = life.reference_step(gun, 300)
    np.testing.assert_array_equal(R.unpack_bits(got, 90), want)
    assert want.sum() > gun.sum() + 20  # the gun has fired
