"""The fast reduction (kernels/reduction/fast.cu, reduce_fast) run on the CPU (tests/emulate/cuda_on_cpu.h: a block's
threads as std::threads, warp shuffles through barriers, blocks one after the other), compiled by the host C++
compiler with AddressSanitizer, against its NumPy step-model (pyscan.reductions.fast.model) bit for bit: both builds
(the small one, FAST_UNROLL=1, and the large one), one block and several (the last block reducing the per-block
results), data that starts on a 16-byte boundary and data that does not (a head read one by one), lengths around
the vector and the block, for integer and float adds (whose order the model states), max/min, narrow inputs widened
in the loads (int8, bool, float16) and a custom operator that is associative but not commutative.  The emulator also
checks that the kernel puts the ticket counter back to 0.  No GPU; skipped where there is no g++ or no CUDA
headers."""

import subprocess

import numpy as np
import pytest
from cuda_headers import build_emulator, needs_emulator

from pyscan.reductions import fast
from pyscan.types import COMPUTE_TYPES, load, operator, result_dtype, store
from pyscan.types import Types as CallTypes

pytestmark = needs_emulator()  # tests/helpers/cuda_headers.py

# (x dtype, op): the result dtype is NumPy's (int8 and bool add in int64, float16 kept, summed in float32)
VARIANTS = [("int32", "add"), ("float32", "add"), ("float64", "min"), ("int8", "add"), ("bool", "add"),
            ("float16", "add"), ("int32", "b != 0 ? b : a")]
BLOCK = 64  # threads a block: two warps, so the block's second tree (one slot per warp) has two slots to fold


def _op(text):
    return operator(text, 0) if " " in text else text


@pytest.fixture(scope="module", params=[(v, u) for v in VARIANTS for u in (fast.SMALL_UNROLL, fast.FAST_UNROLL)],
                ids=lambda p: f"{p[0][0]}-{p[0][1].replace(' ', '')}-unroll{p[1]}")
def build(request, tmp_path_factory):
    (dtype, op_text), unroll = request.param
    dtype = np.dtype(dtype)
    op = _op(op_text)
    result = result_dtype(dtype, op if isinstance(op, str) else "add")
    ((_, macros),) = fast.kernel_builds(dtype, op, unroll, result)
    where = tmp_path_factory.mktemp("reduce")
    binary = build_emulator("reduce_on_cpu", where, macros, ("-ffp-contract=off",))
    return binary, dtype, op, result, unroll, where


def _values(dtype, n, rng):
    if dtype == np.bool_:
        return rng.random(n) < 0.5
    if dtype.kind == "f":
        return (rng.standard_normal(n) * 100).astype(dtype)  # sums that round: the order shows in the last bits
    if dtype == np.int8:
        return rng.integers(-128, 128, n).astype(dtype)
    return (rng.integers(-2**20, 2**20, n) * (rng.random(n) < 0.7)).astype(dtype)


def _run(build, x, n, grid, skip):
    binary, dtype, op, result, unroll, where = build
    (where / "x.bin").write_bytes(np.ascontiguousarray(x, dtype).tobytes())
    p = subprocess.run([str(binary), str(n), str(grid), str(BLOCK), str(skip), str(where / "x.bin"),
                        str(where / "out.bin")], capture_output=True, text=True, timeout=600,
                       env={"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0"})
    assert p.returncode == 0, f"exit {p.returncode} (3: the ticket was not put back)\n{p.stderr[-4000:]}"
    return np.frombuffer((where / "out.bin").read_bytes(), result)[0]


# (n, grid): one element; within a vector and a warp; one block's threads around their vectors; several blocks
# whose threads loop (the unrolled loop and the one-vector remainder), whose partials the last block folds
SHAPES = [(1, 1), (31, 1), (33, 1), (1023, 1), (4099, 1), (1023, 3), (4099, 3), (65539, 5), (100_003, 2)]


@pytest.mark.parametrize("start", ["aligned", "one past", "last of a vector"])
@pytest.mark.parametrize("n, grid", SHAPES)
def test_the_kernel_on_the_cpu_is_the_model(build, n, grid, start):
    _, dtype, op, result, unroll, _ = build
    skip = {"aligned": 0, "one past": 1, "last of a vector": fast.vector_width(dtype) - 1}[start]
    rng = np.random.default_rng(n * 7 + grid + skip)
    x = _values(dtype, skip + n, rng)
    types = CallTypes(dtype, result, COMPUTE_TYPES[result])
    bound = op.bound(result) if not isinstance(op, str) else op
    head = fast.head_of(skip * dtype.itemsize, n, dtype)  # the heap array starts on a 16-byte boundary (exit 4)
    want = store(np.asarray([fast.model(load(x[skip:], types), op=bound, blocks=grid, head=head, block=BLOCK,
                                        unroll=unroll, types=types)]), types)[0]
    got = _run(build, x, n, grid, skip)
    np.testing.assert_array_equal(got, want, err_msg=f"n={n} grid={grid} skip={skip}")
