"""argmax / argmin's kernels (kernels/reduction/arg_extreme.cu) run on the CPU (tests/emulate/cuda_on_cpu.h: a
block's threads as std::threads, warp shuffles through barriers, blocks one after the other), compiled by the host
C++ compiler with AddressSanitizer, one launch at a time, chained as the driver chains them
(pyscan.reductions.arg_extreme.passes): the indices are the model's (model_along) and NumPy's (np.argmax /
np.argmin) -- every kernel (a thread a row, a warp a row, blocks per row segment and their partials' second pass,
coalesced columns and their chunks' passes), on data full of ties, with NaNs (the first NaN wins), -0.0 beside 0.0
(the first wins), the dtype's ends, narrow types compared widened (int8, float16, bool).  No GPU; skipped where
there is no g++ or no CUDA headers."""

import subprocess

import numpy as np
import pytest
from cuda_headers import build_emulator, needs_emulator

from pyscan.reductions import arg_extreme as ax
from pyscan.types import COMPUTE_TYPES, Types, load

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

SMS = 1  # a small device: few blocks to run one after the other, and a warp a row from 57 rows on
_built: dict = {}


def _emulator(dtype, largest, tmp_path_factory):
    macros = ax.macros(dtype, largest)
    key = tuple(sorted(macros.items()))
    if key not in _built:
        _built[key] = build_emulator("arg_extreme_on_cpu", tmp_path_factory.mktemp("arg"), macros)
    return _built[key]


def _run(binary, x, outer, n, inner, tmp_path):
    """The driver's passes over the (outer, n, inner) view of x, each launched on the emulator: (the indices, the
    kernels launched)."""
    (tmp_path / "x.bin").write_bytes(np.ascontiguousarray(x).tobytes())
    source, index, kernels = tmp_path / "x.bin", "-", set()
    for step, (kind, grid, chunks, geometry) in enumerate(ax.passes(outer, n, inner, SMS)):
        out_index, out_value = tmp_path / f"index{step}.bin", tmp_path / f"value{step}.bin"
        outputs = outer * chunks * inner
        p = subprocess.run([str(binary), kind, str(grid), str(outputs), str(int(chunks == 1)), str(source), str(index),
                            str(out_index), str(out_value), *(str(int(g)) for g in geometry)],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, (kind, geometry, p.returncode, p.stderr[-4000:])
        source, index = out_value, out_index
        kernels.add(kind)
    return np.fromfile(out_index, np.int64).reshape(outer, inner), kernels


def _values(dtype, shape, rng):
    size = int(np.prod(shape))
    if dtype == np.bool_:
        return rng.random(size).reshape(shape) < 0.1
    if dtype.kind == "f":
        x = rng.integers(-3, 4, size).astype(dtype)  # few values: ties everywhere
        x[rng.random(size) < 0.01] = -0.0
        return x.reshape(shape)
    info = np.iinfo(dtype)
    x = rng.integers(-3, 4, size) if info.min < 0 else rng.integers(0, 7, size)
    x = x.astype(dtype)
    x[rng.integers(size)], x[rng.integers(size)] = info.max, info.min  # the ends, once each
    return x.reshape(shape)


# (shape, axis): short rows (a thread a row), warp rows, one long row (blocks per segment, then their partials),
# columns in one chunk and in several (their partials' passes), a narrow inner extent
SHAPES = [((300, 7), 1), ((64, 100), 1), ((1, 40_003), 1), ((3, 30_001), 1), ((64, 40), 0), ((3000, 40), 0),
          ((2, 5000, 3), 1), ((2, 3000, 70), 1)]


@pytest.mark.parametrize("dtype", [np.dtype(d) for d in ("int32", "float32", "float64", "int8", "uint64", "float16",
                                                          "bool")], ids=str)
@pytest.mark.parametrize("largest", [True, False], ids=["argmax", "argmin"])
def test_the_kernels_on_the_cpu_are_the_model(dtype, largest, tmp_path, tmp_path_factory):
    binary = _emulator(dtype, largest, tmp_path_factory)
    rng = np.random.default_rng(7)
    launched = set()
    for shape, axis in SHAPES:
        x = _values(dtype, shape, rng)
        if dtype.kind == "f":  # a NaN in some rows or columns (NumPy: the first NaN wins)
            flat = x.reshape(-1)
            flat[rng.integers(flat.size, size=3)] = np.nan
        outer = int(np.prod(shape[:axis]))
        n, inner = shape[axis], int(np.prod(shape[axis + 1:]))
        got, kernels = _run(binary, x, outer, n, inner, tmp_path)
        launched |= kernels
        values = load(np.ascontiguousarray(x), Types(dtype, dtype, COMPUTE_TYPES[dtype])).reshape(outer, n, inner)
        np.testing.assert_array_equal(got, ax.model_along(values, largest, SMS), err_msg=f"{shape} axis {axis}")
        want = (np.argmax if largest else np.argmin)(x, axis=axis).reshape(outer, inner)
        np.testing.assert_array_equal(got, want, err_msg=f"{shape} axis {axis}: NumPy")
    assert launched == {"rows_short", "rows_warp", "rows_block", "columns"}
