"""The segments build of kernels/scan/decoupled_lookback.cu run on the CPU (tests/emulate/cuda_on_cpu.h: a block's
threads as std::threads, warp shuffles and ballots through barriers, blocks one after the other, the first of the
persistent blocks taking every tile in order), compiled by the host C++ compiler with AddressSanitizer, against the
NumPy models bit for bit (the models assume the serial look-back schedule, which tiles in index order give) -- for
4- and 8-byte compute types, named and custom operators, int32 and int64 offsets, the small and the large tile --
and on garbage offsets, where AddressSanitizer would stop the run at the first access out of bounds of x, the
offsets or the output.  No GPU; skipped where there is no g++ or no CUDA headers."""

import os
import subprocess

import numpy as np
import pytest
from cuda_headers import build_emulator, needs_emulator

from pyscan import segments
from pyscan.scans import decoupled_lookback as dl
from pyscan.types import COMPUTE_TYPES, load, operator, store
from pyscan.types import Types as CallTypes

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

# (x dtype, op, result dtype, offsets dtype): 4- and 8-byte compute types, conversions, a custom operator that is
# associative but not commutative ("the last non-zero value")
VARIANTS = [("int32", "add", "int32", "int64"), ("float32", "max", "float32", "int32"),
            ("int32", "add", "int64", "int32"), ("float64", "min", "float64", "int64"),
            ("int8", "bitwise_xor", "int8", "int32"), ("int32", "b != 0 ? b : a", "int32", "int64")]
MIXES = {
    "lengths": [0, 1, 31, 32, 33, 0, 4095, 4096, 4097, 2047, 2049, 1, 20000, 0, 3],
    "one long": [0, 30001],
    "tiny": list(np.random.default_rng(1).integers(0, 3, 9000)),
    # whole tiles (8 small tiles of 4-byte, 16 of 8-byte types): the last tile's aggregate is published early, so
    # its parts without a segment's end skip the reduction's rescan; the array's end (o[S] = n) and an empty
    # segment there end the last part
    "whole tiles": [3, 5000, 0, 27765],
    "whole tiles, empty last": [3, 5000, 0, 27765, 0],
}


def _op(text, value):
    return operator(text, 0) if " " in text else text


def _compile(variant, where, small: bool, *extra):
    """The emulator of the build pyscan launches for the variant with the SMALL tile or the large one (the model
    picks by n: _sized checks that they agree)."""
    dtype, op_text, result, offsets = variant
    dtype, result, offsets = np.dtype(dtype), np.dtype(result), np.dtype(offsets)
    op = _op(op_text, result)
    size = dl.element_size(dtype, result)
    policy = dl.SMALL[size] if small else dl.config(dtype, None, result, rows=True)
    macros = dl.kernel_defines(dtype, op, True, policy, None if result == dtype else result,
                               offset_type=segments.C_OFFSET[offsets])
    binary = build_emulator("segments_on_cpu", where, macros, extra)
    return binary, dtype, op, result, offsets, where, small


def _sized(build, n):
    """n elements run with the build's tile, as the driver and the model choose it for n."""
    dtype, result, small = build[1], build[3], build[6]
    assert dl._policy(dl.element_size(dtype, result), n)[2] == small, (n, small)
    return n


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: "-".join(v).replace(" ", ""))
def build(request, tmp_path_factory):
    return _compile(request.param, tmp_path_factory.mktemp("emu"), True)


# the operators whose results do not depend on how the look-back groups the combines (integer add, max/min, and
# the custom operator: associative, so any grouping in order gives the same value)
EXACT = [v for v in VARIANTS if v[1] != "add" or v[0].startswith("int")]


@pytest.fixture(scope="module", params=EXACT, ids=lambda v: "-".join(v).replace(" ", ""))
def build_hidden(request, tmp_path_factory):
    """The emulator with tile_status kept as separate A and P pairs for every value size (-DEMU_STATUS), so that
    EMU_HIDE_P can hide P's from the look-backs."""
    return _compile(request.param, tmp_path_factory.mktemp("emu_hidden"), False, "-DEMU_STATUS")


def _run(build, mode, x, o, hide=None):
    binary, dtype, op, result, offsets, where, _ = build
    result = np.dtype(np.int32) if mode == "check" else result
    (where / "x.bin").write_bytes(np.ascontiguousarray(x, dtype).tobytes())
    (where / "o.bin").write_bytes(np.ascontiguousarray(o).astype(offsets).tobytes())
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
    env.pop("EMU_HIDE_P", None)
    if hide is not None:
        env["EMU_HIDE_P"] = hide
    p = subprocess.run([str(binary), mode, str(x.size), str(o.size - 1), str(where / "x.bin"), str(where / "o.bin"),
                        str(where / "out.bin")], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, f"{mode}: exit {p.returncode}\n{p.stderr[-4000:]}"
    _run.windows = p.stderr
    return np.frombuffer((where / "out.bin").read_bytes(), result)


def _values(dtype, n, rng):
    if dtype.kind == "f":
        return rng.standard_normal(n).astype(dtype)  # bit for bit: the model groups the sums as the kernel does
    if dtype == np.int8:
        return rng.integers(-128, 128, n).astype(dtype)
    return (rng.integers(-5, 5, n) * (rng.random(n) < 0.3)).astype(dtype)


@pytest.mark.parametrize("mix", list(MIXES))
def test_the_kernels_on_the_cpu_are_the_models(build, mix):
    _, dtype, op, result = build[:4]
    rng = np.random.default_rng(len(mix))
    o = np.concatenate([[0], np.cumsum(MIXES[mix])]).astype(np.int64)
    x = _values(dtype, _sized(build, int(o[-1])), rng)
    types = CallTypes(dtype, result, COMPUTE_TYPES[result])
    bound = op.bound(result) if not isinstance(op, str) else op
    compute = load(x, types)
    size = dl.element_size(dtype, result)
    for mode in ("scan", "scan_exclusive"):
        want = store(segments.tile_scan_model(compute, o, op=bound, exclusive=mode == "scan_exclusive",
                                              value=result, itemsize=size), types)
        np.testing.assert_array_equal(_run(build, mode, x, o), want, err_msg=mode)
    want = store(segments.segment_reduce_model(compute, o, op=bound, value=result, itemsize=size), types)
    np.testing.assert_array_equal(_run(build, "reduce", x, o), want, err_msg="reduce")


def test_garbage_offsets_stay_in_bounds(build):
    """Any offsets, check_offsets=False: wrong values, but AddressSanitizer sees no access out of bounds."""
    dtype = build[1]
    rng = np.random.default_rng(2)
    for trial in range(4):
        n = int(rng.integers(1, 20000))
        S = int(rng.integers(1, 3000))
        o = rng.integers(-2**40, 2**40, S + 1) if trial % 2 else rng.integers(-50, n + 50, S + 1)
        if build[4] == np.int32:
            o = np.clip(o, -2**31, 2**31 - 1)
        if trial == 3:
            o = np.sort(o)[::-1].copy()
        x = _values(dtype, n, rng)
        for mode in ("scan", "reduce"):
            _run(build, mode, x, o)


def test_the_device_check_is_the_hosts_rule(build):
    rng = np.random.default_rng(4)
    x = _values(build[1], 1000, rng)
    good = np.concatenate([[0], np.sort(rng.integers(0, 1001, 2000)), [1000]])
    cases = [good, good[::-1].copy(), np.array([0, 1000]), np.array([1, 1000]), np.array([0, 999]),
             np.array([0, 1001, 1000]), np.array([0, -1, 1000]), np.array([0, 5, 4, 1000])]
    bent = good.copy()
    bent[1500] = bent[1499] - 1
    cases.append(bent)
    for o in cases:
        flag = _run(build, "check", x, o)[0]
        assert bool(flag) == segments.offsets_model_check(o, x.size), o[:8]


def test_look_backs_through_many_windows(build_hidden):
    """P's hidden as if not yet published (EMU_HIDE_P: all of them): the look-backs combine A's across
    several windows of 32 tiles before they meet a P; the values are the serial schedule's."""
    hide = "0:100"
    _, dtype, op, result = build_hidden[:4]
    rng = np.random.default_rng(5)
    o = np.concatenate([[0], np.cumsum([1, 300000, 2, 0, 9000, 0, 3001])]).astype(np.int64)
    x = _values(dtype, _sized(build_hidden, int(o[-1])), rng)
    types = CallTypes(dtype, result, COMPUTE_TYPES[result])
    bound = op.bound(result) if not isinstance(op, str) else op
    compute = load(x, types)
    size = dl.element_size(dtype, result)
    want = store(segments.tile_scan_model(compute, o, op=bound, value=result, itemsize=size), types)
    np.testing.assert_array_equal(_run(build_hidden, "scan", x, o, hide), want)
    most = int(_run.windows.split("most")[1].split()[0])
    assert most >= 2  # some tile read two windows or more
    want = store(segments.segment_reduce_model(compute, o, op=bound, value=result, itemsize=size), types)
    np.testing.assert_array_equal(_run(build_hidden, "reduce", x, o, hide), want)
