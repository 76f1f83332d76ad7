"""The column scan's own CUDA source (kernels/scan/axis_columns.cu) run on the CPU (tests/emulate/cuda_on_cpu.h: a
block's threads as std::threads, blocks one after the other in ticket order), compiled by the host C++ compiler with
AddressSanitizer, against the NumPy model (pyscan.scans.axis.columns_model) bit for bit, on the host's geometry
(column_geometry) and build (column_build: staged under 32 lanes, direct loads from 32): lanes of 2, 3, 5, 16 and 32
(the last lane chunk part empty), several row chunks, short columns whose threads hold fewer rows than ITEMS, 4- and
8-byte compute types, 1- and 2-byte inputs and outputs (the staged build's 16-byte moves), runs that are not 16-byte
aligned (its element-by-element moves), a non-commutative custom operator; then with the chunks' P's hidden
(EMU_HIDE_P), so that every look-back combines A's through several windows of `rows` chunks (the schedules blocks in
ticket order never make). No GPU; skipped where there is no g++ or no CUDA headers."""

import os
import subprocess

import numpy as np
import pytest
from cuda_headers import build_emulator, needs_emulator

from pyscan.axes import kernel_macros
from pyscan.scans import axis as saxis
from pyscan.types import COMPUTE_TYPES, operator

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

# (x dtype, op, result dtype): a 4-byte and an 8-byte compute type for int32 add (NumPy's int64 accumulator), float64
# sums (bit for bit: the model groups them as the kernel does), an associative operator that is not commutative
# ("the last non-zero value": a look-back that combined out of order would show)
VARIANTS = [("int32", "add", "int32"), ("int32", "add", "int64"), ("float64", "add", "float64"),
            ("int32", "b != 0 ? b : a", "int32"),
            # narrow loads and stores: the staged build moves 16 uint8 or 8 halves a thread (and 2 uint64 results)
            ("uint8", "add", "uint64"), ("float16", "add", "float16")]
EXACT = [v for v in VARIANTS if v[0] != "float64"]
# (outer, n, inner): the row chunks and lanes each exercises are in the comments (4-byte compute type)
SHAPES = [(1, 9000, 2),      # lanes 2, rows 128: 3 chunks
          (2, 12000, 16),    # lanes 16, rows 16: 24 chunks, more than a window
          (1, 6000, 40),     # lanes 32 (rows 8), 2 lane chunks, the second 8 lanes wide: 24 chunks
          (3, 6000, 3),      # lanes 3, rows 85 (255 threads used): 3 chunks
          (2, 9001, 3),      # lanes 3: the second outer index's runs are not 16-byte aligned (element by element)
          (2, 33, 5),        # a thread holds one row (items 1 < ITEMS): one chunk
          (1, 9, 300),       # 10 lane chunks of 32 lanes, 9 rows: one chunk
          # float16 (2-byte input, 4-byte compute type) holds 2 lanes a thread in the direct build:
          (1, 2000, 96),     # lanes 64 (32 threads across): 2 lane chunks, the lanes' pairs moved as vectors
          (2, 3000, 45)]     # inner odd: the pairs not aligned (element by element), the last pair half empty


def _op(text):
    return operator(text, 0) if " " in text else text


class Builds:
    """The emulator of one variant in each build the host launches (saxis.column_build: staged through shared memory,
    or DIRECT_LOADS where lanes >= 32), compiled at first use."""

    def __init__(self, variant, where, extra):
        self.dtype, self.result = np.dtype(variant[0]), np.dtype(variant[2])
        self.op = _op(variant[1])
        self.itemsize = COMPUTE_TYPES[self.result].itemsize
        self.vector = saxis.column_lanes_per_thread(self.dtype.itemsize, self.itemsize)  # the direct build's
        self.where, self.extra, self.binaries = where, extra, {}

    def binary(self, lanes, items):
        """The build for the geometry, at its largest ITEMS (the kernel runs any items up to it)."""
        build = saxis.column_build(lanes, saxis.column_items(self.itemsize), self.itemsize, self.vector)
        direct = build.get("DIRECT_LOADS", 0)
        if direct not in self.binaries:
            macros = {**kernel_macros(self.dtype, self.result, self.result, self.op), "DIRECT_LOADS": direct, **build}
            where = self.where / f"direct{direct}"
            where.mkdir(exist_ok=True)
            self.binaries[direct] = build_emulator("axis_on_cpu", where, macros, self.extra)
        return self.binaries[direct]


def _compile(variant, where, *extra):
    return Builds(variant, where, extra)


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: "-".join(v).replace(" ", ""))
def build(request, tmp_path_factory):
    return _compile(request.param, tmp_path_factory.mktemp("emu_axis"))


@pytest.fixture(scope="module", params=[*EXACT[:2], ("int16", "add", "int16")],
                ids=lambda v: "-".join(v).replace(" ", ""))
def build_hidden(request, tmp_path_factory):
    """The emulator with the status kept as separate A and P pairs for every value size (-DEMU_STATUS), so that
    EMU_HIDE_P can hide P's from the look-backs."""
    return _compile(request.param, tmp_path_factory.mktemp("emu_axis_hidden"), "-DEMU_STATUS")


def _values(dtype, count, rng):
    if dtype.kind == "f":
        return rng.standard_normal(count).astype(dtype)
    return (rng.integers(-2**20, 2**20, count) * (rng.random(count) < 0.7)).astype(dtype)


def _run(build, shape, x, exclusive, hide=None):
    dtype, result, where = build.dtype, build.result, build.where
    outer, n, inner = shape
    lanes, rows, items, lane_chunks, chunks = saxis.column_geometry(n, inner, build.itemsize, build.vector)
    binary = build.binary(lanes, items)
    (where / "x.bin").write_bytes(np.ascontiguousarray(x, dtype).tobytes())
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
    env.pop("EMU_HIDE_P", None)
    if hide is not None:
        env["EMU_HIDE_P"] = hide
    args = [outer, n, inner, lanes, rows, items, lane_chunks, chunks, int(exclusive)]
    p = subprocess.run([str(binary), *map(str, args), str(where / "x.bin"), str(where / "out.bin")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, f"{shape}: exit {p.returncode}\n{p.stderr[-4000:]}"
    most = int(p.stderr.split("most")[1].split()[0])
    return np.frombuffer((where / "out.bin").read_bytes(), result).reshape(shape), chunks, rows, most


def _model(build, x, exclusive):
    return saxis.model(x, op=build.op, exclusive=exclusive, axis=1, dtype=build.result)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_column_scan_on_the_cpu_is_the_model(build, shape):
    rng = np.random.default_rng(sum(shape))
    x = _values(build.dtype, int(np.prod(shape)), rng).reshape(shape)
    for exclusive in (False, True):
        got, _, _, _ = _run(build, shape, x, exclusive)
        np.testing.assert_array_equal(got, _model(build, x, exclusive), err_msg=f"exclusive={exclusive}")


@pytest.mark.parametrize("shape", [(2, 6000, 16), (1, 3000, 40), (1, 5000, 2)], ids=str)
def test_look_backs_through_many_windows(build_hidden, shape):
    """Every P of a chunk that published an A hidden (EMU_HIDE_P 0:100): each look-back combines the A's of every
    chunk before it, window after window of 256 / lanes chunks (`rows`, or rows / 2 where a thread holds 2 lanes),
    down to chunk 0's P; the values are the serial schedule's (integers: any grouping in order gives the same)."""
    rng = np.random.default_rng(7)
    x = _values(build_hidden.dtype, int(np.prod(shape)), rng).reshape(shape)
    got, chunks, rows, most = _run(build_hidden, shape, x, False, hide="0:100")
    np.testing.assert_array_equal(got, _model(build_hidden, x, False))
    lanes = saxis.column_geometry(shape[1], shape[2], build_hidden.itemsize, build_hidden.vector)[0]
    assert most == -(-(chunks - 1) // (256 // lanes))  # the last chunk read every earlier one, a window at a time


# ------------------------------------------------- the axis reduction's column and short-rows kernels on the CPU

# (x dtype, op, result dtype): a thread's run of lanes 4 bytes of x (float16: 2 lanes, compute float32; bool: 4
# lanes, compute int64), one lane (int32, float64); a non-commutative operator
REDUCE_VARIANTS = [("int32", "add", "int32"), ("float64", "add", "float64"), ("float16", "add", "float16"),
                   ("bool", "add", "int64"), ("int32", "b != 0 ? b : a", "int32")]
# (outer, n, inner): inner a multiple of the lanes a thread holds (one run), not one (strided), under 32 (a lane a
# thread); several row chunks, a partial last lane chunk
REDUCE_SHAPES = [(1, 700, 64), (2, 300, 40), (1, 500, 1000), (3, 90, 5), (1, 2000, 33), (2, 9, 96)]


def _reduce_build(variant, where, short=False):
    from pyscan.reductions import axis as raxis

    dtype, op_text, result = (np.dtype(variant[0]), variant[1], np.dtype(variant[2]))
    op = _op(op_text)
    compute = COMPUTE_TYPES[result]
    macros = kernel_macros(dtype, result, compute, op)  # the first pass: x into compute-type partials
    extra = ("-DEMU_ROWS",) if short else ()
    builds = {}
    if short:
        builds["rows"] = build_emulator("axis_reduce_on_cpu", where, macros, extra)
    else:
        vec = raxis.column_vec(32, dtype.itemsize)
        for lanes, vector in {(vec, 1), (vec, 0), (1, 1)}:
            sub = where / f"v{lanes}{vector}"
            sub.mkdir()
            builds[(lanes, vector)] = build_emulator("axis_reduce_on_cpu", sub,
                                                     {**macros, "LANES_PER_THREAD": lanes, "VECTOR_LOADS": vector})
    return builds, dtype, op, result, compute, where


@pytest.fixture(scope="module", params=REDUCE_VARIANTS, ids=lambda v: "-".join(v).replace(" ", ""))
def reduce_build(request, tmp_path_factory):
    return _reduce_build(request.param, tmp_path_factory.mktemp("emu_axis_reduce"))


def _run_binary(binary, args, where, x, out_dtype, count):
    (where / "x.bin").write_bytes(np.ascontiguousarray(x).tobytes())
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
    p = subprocess.run([str(binary), *map(str, args), str(where / "x.bin"), str(where / "out.bin")],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, f"{args}: exit {p.returncode}\n{p.stderr[-4000:]}"
    return np.frombuffer((where / "out.bin").read_bytes(), out_dtype, count)


@pytest.mark.parametrize("shape", REDUCE_SHAPES, ids=str)
def test_the_column_reduction_on_the_cpu_is_the_model(reduce_build, shape):
    """One launch of axis_columns.cu, in each build the host may launch for the shape (a thread's lanes as one run,
    x aligned; the strided build, x aligned or not; one lane a thread, x aligned to its element or not), into the
    compute type, its row chunks' partials folded by each group's last block: the model's columns_pass bit for bit,
    on the geometry pass_plan gives, and every ticket counter back at 0 (the emulator's exit code)."""
    from pyscan.reductions import axis as raxis
    from pyscan.types import Types, load

    builds, dtype, op, result, compute, where = reduce_build
    outer, n, inner = shape
    sms = 2  # few blocks wanted: several row chunks at these sizes
    kind, grid, chunks, geometry = raxis.pass_plan(outer, n, inner, sms, dtype.itemsize)
    assert kind == "columns"
    _, _, lanes, rows, chunk_rows, lane_chunks, _ = geometry
    vec = raxis.column_vec(inner, dtype.itemsize)
    rng = np.random.default_rng(sum(shape))
    x = _values(dtype, outer * n * inner, rng).reshape(shape) if dtype != np.bool_ else rng.random(shape) < 0.5
    cop = op.bound(result) if hasattr(op, "bound") else op
    want = raxis.columns_pass(load(x, Types.of(x.dtype, op, result)), cop, sms, dtype.itemsize)
    assert chunks > 1 or n < 1000
    cases = [((vec, 1), 0), ((vec, 0), 0), ((vec, 0), 1)] if vec > 1 and inner % vec == 0 else (
        [((vec, 0), 0), ((vec, 0), 1)] if vec > 1 else [((1, 1), 0), ((1, 1), 1)])
    for build, skip in cases:
        args = [outer, n, inner, lanes, rows, chunk_rows, lane_chunks, chunks, skip]
        got = _run_binary(builds[build], args, where, x, compute, outer * inner)
        np.testing.assert_array_equal(got.reshape(want.shape), want, err_msg=f"build {build}, skip {skip}")


@pytest.mark.parametrize("variant", REDUCE_VARIANTS[:4], ids=lambda v: "-".join(v))
def test_the_short_rows_reduction_on_the_cpu_is_the_model(variant, tmp_path):
    """axis_rows_reduce_short, rows a thread: every row folded left to right (rows_pass), the block's run loaded as
    16-byte vectors (x aligned) or element by element (x one element off), nothing read past x's end."""
    from pyscan.reductions import axis as raxis
    from pyscan.types import Types, load

    builds, dtype, op, result, compute, where = _reduce_build(variant, tmp_path, short=True)
    rng = np.random.default_rng(3)
    cases = [(1, 1, 2), (700, 2, 2), (513, 3, 2), (2049, 5, 2), (300, 16, 2), (4097, 2, 2), (257, 4, 2), (300, 8, 2),
             (40000, 2, 1), (9001, 3, 1), (20000, 7, 1)]  # (rows, n, SMs): the last three several rows a thread
    seen = set()
    for rows, n, sms in cases:
        x = _values(dtype, rows * n, rng).reshape(rows, n) if dtype != np.bool_ else rng.random((rows, n)) < 0.5
        kind, grid, _, (_, _, per_thread) = raxis.pass_plan(rows, n, 1, sms, dtype.itemsize)
        assert kind == "rows_short" and grid == -(-rows // (256 * per_thread)) and per_thread * n <= raxis.SHORT_ROW
        seen.add(per_thread)
        want = raxis.rows_pass(load(x, Types.of(x.dtype, op, result)), op, sms)
        for skip in (0, 1):
            got = _run_binary(builds["rows"], ["short", rows, n, per_thread, grid, skip], where, x, compute, rows)
            np.testing.assert_array_equal(got, want.reshape(-1), err_msg=f"{rows} x {n}, skip {skip}")
    assert len(seen) > 2


@pytest.mark.parametrize("variant", REDUCE_VARIANTS, ids=lambda v: "-".join(v).replace(" ", ""))
def test_the_long_rows_reduction_on_the_cpu_is_the_model(variant, tmp_path):
    """axis_rows_reduce_block, a block a row segment, several segments a row, the row's last block folding their
    partials: rows_pass bit for bit (each thread's four accumulators, the warp and block trees), x aligned or one
    element off, nothing read past x's end, every ticket counter back at 0."""
    from pyscan.reductions import axis as raxis
    from pyscan.types import Types, load

    builds, dtype, op, result, compute, where = _reduce_build(variant, tmp_path, short=True)
    cop = op.bound(result) if hasattr(op, "bound") else op
    rng = np.random.default_rng(5)
    for rows, n in [(1, 17), (2, 5000), (3, 4099), (1, 40000), (2, 2 ** 15 + 9)]:
        x = _values(dtype, rows * n, rng).reshape(rows, n) if dtype != np.bool_ else rng.random((rows, n)) < 0.5
        kind, grid, splits, (_, _, seg) = raxis.pass_plan(rows, n, 1, 2, dtype.itemsize)
        assert kind == "rows_block" and grid == rows * splits
        assert splits > 1 or n < 5000  # the longer rows in several segments
        want = raxis.rows_pass(load(x, Types.of(x.dtype, op, result)), cop, 2)
        for skip in (0, 1):
            got = _run_binary(builds["rows"], ["block", rows, n, splits, seg, skip], where, x, compute, rows)
            np.testing.assert_array_equal(got, want.reshape(-1), err_msg=f"{rows} x {n}, skip {skip}")
