"""pyscan.scan's fast scan (kernels/scan/decoupled_lookback.cu, the 1-D build decoupled_lookback_scan) run on the CPU
(tests/emulate/cuda_on_cpu.h and tile_status_on_cpu.h: a block's threads as std::threads, warp shuffles and ballots
through barriers, blocks one after the other), compiled by the host C++ compiler with AddressSanitizer, against its
NumPy step-model (pyscan.scans.decoupled_lookback.decoupled_lookback_model) bit for bit -- the models assume the
serial look-back schedule, which tiles in index order give: the small tile and the large one, aligned arrays
(persistent blocks, the next tile's copies in flight) and unaligned ones (one block a tile, scalar loads), inclusive
and exclusive, 4- and 8-byte compute types, narrow inputs and results (int8 into int64, float16 in float32), a custom
operator that is associative but not commutative.  Every run is launches on the same tile counter and status words,
as calls on one stream: with the host's epochs, and with a CUDA graph's epochs on the device through the wrap after
2^30 - 1 of them (the flags zeroed, the count started over); and once with the P's hidden, so that look-backs read
several windows of 32 tiles.  Tiles are taken in order here, so a look-back never meets an earlier launch's flag:
the epochs' guard against that is left to the GPU tests.  No GPU; skipped where there is no g++ or no CUDA
headers."""

import os
import subprocess

import numpy as np
import pytest
from cuda_headers import build_emulator, needs_emulator

from pyscan.scans import decoupled_lookback as dl
from pyscan.types import COMPUTE_TYPES, load, operator, result_dtype, store
from pyscan.types import Types as CallTypes

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

# (x dtype, op); the result dtype is NumPy's
VARIANTS = [("int32", "add"), ("float32", "add"), ("float64", "add"), ("int64", "max"), ("int8", "add"),
            ("float16", "add"), ("int32", "b != 0 ? b : a")]
_built: dict = {}  # (variant, policy's #defines, vector, hidden) -> the emulator


def _types(variant):
    dtype, op_text = np.dtype(variant[0]), variant[1]
    op = operator(op_text, 0) if " " in op_text else op_text
    result = result_dtype(dtype, op if isinstance(op, str) else "add")
    return dtype, op, result


def _emulator(variant, n, vector, tmp_path_factory, hidden=False):
    """The build pyscan launches for n elements of the variant (its tile policy for n, aligned or not)."""
    dtype, op, result = _types(variant)
    policy = dl.config(dtype, n, result)
    key = (variant, tuple(policy.defines().items()), vector, hidden)
    if key not in _built:
        macros = dl.kernel_defines(dtype, op, vector, policy, None if result == dtype else result)
        extra = ("-ffp-contract=off",) + (("-DEMU_STATUS",) if hidden else ())
        _built[key] = build_emulator("scan_on_cpu", tmp_path_factory.mktemp("scan"), macros, extra)
    return _built[key]


def _values(dtype, n, rng):
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 100).astype(dtype)  # sums that round: the grouping shows in the last bits
    if dtype == np.int8:
        return rng.integers(-128, 128, n).astype(dtype)
    return (rng.integers(-2**20, 2**20, n) * (rng.random(n) < 0.7)).astype(dtype)


def _run(binary, mode, exclusive, first, second, grid, skip, result, hide=None):
    where = binary.parent
    for name, values in (("first.bin", first), ("second.bin", second)):
        (where / name).write_bytes(np.ascontiguousarray(values).tobytes())
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
    env.pop("EMU_HIDE_P", None)
    if hide is not None:
        env["EMU_HIDE_P"] = hide
    p = subprocess.run([str(binary), mode, str(int(exclusive)), str(second.size), str(grid), str(skip),
                        str(where / "first.bin"), str(where / "second.bin"), str(where / "out.bin")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, f"exit {p.returncode} (3: the counter's word not as the next launch needs it)\n" \
                              f"{p.stderr[-4000:]}"
    return np.frombuffer((where / "out.bin").read_bytes(), result), p.stderr


def _want(variant, x, exclusive):
    dtype, op, result = _types(variant)
    types = CallTypes(dtype, result, COMPUTE_TYPES[result])
    bound = op.bound(result) if not isinstance(op, str) else op
    return store(dl.decoupled_lookback_model(load(x, types), op=bound, exclusive=exclusive, types=types), types)


def _grid(n, dtype, result, vector):
    """The driver's grid for n elements, on a device of one SM: persistent blocks (MIN_BLOCKS of them) for aligned
    arrays, one block a tile for unaligned ones (Config.grid)."""
    policy = dl.config(dtype, n, result)
    tiles = -(-n // dl.tile_size(dtype, n, result))
    return tiles if not vector or tiles <= 1 else min(tiles, policy.min_blocks)


# lengths: one element; one small tile and around it (of 4-byte types); several small tiles; more tiles of the large
# one than the small one covers.  Unaligned arrays (one block a tile: the emulator's slowest runs) go to 20,011 only,
# but for one 4- and one 8-byte variant, to 70,000 (small tiles of 4-byte types, large ones of 8-byte types).
SIZES = [1, 31, 4095, 4097, 20_011, 70_000, 140_001]
CASES = [(v, n, True) for v in VARIANTS for n in SIZES] + [
    (v, n, False) for v in VARIANTS for n in SIZES if n <= 20_011 or v in VARIANTS[1:3] and n <= 70_000]


@pytest.mark.parametrize("variant, n, vector", CASES,
                         ids=lambda p: "-".join(p).replace(" ", "") if isinstance(p, tuple) else
                         ("aligned" if p is True else "unaligned" if p is False else str(p)))
def test_the_kernel_on_the_cpu_is_the_model(variant, n, vector, tmp_path_factory):
    dtype, _, result = _types(variant)
    rng = np.random.default_rng(n)
    first, second = _values(dtype, n, rng), _values(dtype, n, rng)
    binary = _emulator(variant, n, vector, tmp_path_factory)
    grid = _grid(n, dtype, result, vector)
    for mode, exclusive in (("host", False), ("wrap", True)):
        got, _ = _run(binary, mode, exclusive, first, second, grid, 0 if vector else 1, result)
        np.testing.assert_array_equal(got, _want(variant, second, exclusive), err_msg=f"{mode} exclusive={exclusive}")


EXACT = [v for v in VARIANTS if v[1] != "add" or v[0].startswith("int")]


@pytest.mark.parametrize("variant", EXACT, ids=lambda v: "-".join(v).replace(" ", ""))
def test_look_backs_through_many_windows(variant, tmp_path_factory):
    """Every P hidden as if not yet published (EMU_HIDE_P): the look-backs combine A's across several windows of 32
    tiles before they reach the start; the values are the serial schedule's (operators whose result does not depend
    on the grouping)."""
    dtype, _, result = _types(variant)
    tiles = 40  # large tiles: the last 8 look back past one window of 32
    n = (tiles - 1) * dl.tile_size(dtype, None, result) + 7
    rng = np.random.default_rng(3)
    first, second = _values(dtype, n, rng), _values(dtype, n, rng)
    binary = _emulator(variant, n, True, tmp_path_factory, hidden=True)
    got, log = _run(binary, "host", False, first, second, _grid(n, dtype, result, True), 0, result, hide="0:100")
    np.testing.assert_array_equal(got, _want(variant, second, False))
    # tile t reads its t predecessors' A's, 32 a window (tile 0 reads none): 2 windows for each of the last 7
    assert int(log.split("windows")[1].split()[0]) == sum(-(-t // 32) for t in range(1, tiles))
