"""python -m pyscan bench: every algorithm of the registries and the libraries beside them, timed in one run.

    python -m pyscan bench [scan|reduce|histogram|life|all] [--sizes ...] [--reps N] [--json out.json]
                           [--plot out.png] [--quick]

What a row means (benchmarks/README.md says the same, and the JSON carries DEFINITIONS):

* ms: the median of --reps timed calls (default 20) after two warm-up calls (the first compiles).  GPU rows are
  timed with CUDA events recorded on the null stream around the call (pycuda.driver.Event; cupy.cuda.Event for
  CuPy), CPU rows (NumPy) with time.perf_counter.  Inputs are random (never all zeros), made on the host and
  uploaded once per size; outputs are allocated once: nothing timed includes a host transfer or an allocation,
  except where a row's note says it goes through the public API (which returns its result on the host).
  For life, ms is per generation (one timed call advances LIFE_GENERATIONS generations).
* copy: for every size the same run times pycuda.driver.memcpy_dtod of the input's bytes (size x itemsize; for
  life the lattice as int32 cells, the book's layout).  copy GB/s counts bytes read + written: 2 x bytes / time.
* Gelem/s (Gcell/s for life): size / time / 1e9.
* x copy: the row against the copy of the same size, in the unit that fits the pattern:
  - scan, life: Gelem/s / copy Gelem/s (a scan or a generation reads and writes every element once, like the copy),
    i.e. copy time / time.
  - reduce, histogram: bytes read per second (size x itemsize / time) / copy bytes per second (read + written),
    i.e. copy time / (2 x time): 1.0 means reading the input as fast as the copy moves bytes.
* x ref: reference time / time, against one reference of the same pattern, dtype, op and size: cupy.cumsum,
  cupy.sum (amax/amin), cupy.histogram, and for life the book's conway_ker as printed (N x N, N a multiple of
  32; elsewhere pyscan's `global`, the same kernel for any H x W, stands in).
* L2: the input fits in the device's L2 cache (50 MB on an H100); the repeated calls find it there, so such a
  row (and its copy) runs faster than DRAM allows.

Algorithms that refuse a size (a ValueError or NotImplementedError, e.g. a one-block kernel past 1024
cells) or whose predicted time per call passes a cap are skipped, and the output says so.  An algorithm that
fails otherwise gets an error row, is not tried at larger sizes, and the run carries on.  Every result is checked
against NumPy once per size (the inputs are small integers, so float sums are exact too) unless --no-check.

Exit status: 0, or 1 when no GPU is usable, a row failed or a check found a wrong result.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import platform
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import GPUUnavailableError

PATTERNS = ("scan", "reduce", "histogram", "life")
SCHEMA = "pyscan-bench/1"

# The cases every algorithm and every peer runs at every size; the first one of a pattern is its main case.
CASES = {
    "scan": [("int32", "add")],
    "reduce": [("int32", "add")],
    "histogram": [("uint8", "uniform"), ("uint8", "all-equal")],
    "life": [("int32", "-")],
}
# Extra cases run only at the largest size, by the fast algorithms (or the one `auto` picks) and the GPU peers.
VARIANTS = {
    "scan": [("int64", "add"), ("float32", "add"), ("float64", "add"), ("int32", "max"), ("float32", "min")],
    "reduce": [("float32", "add"), ("int64", "add"), ("float64", "add"), ("int32", "max"), ("float32", "min")],
    "histogram": [],
    "life": [],
}

_SCAN_REDUCE_DEFAULT = [2**k for k in range(10, 29, 2)]
SIZE_PRESETS = {
    "default": {"scan": _SCAN_REDUCE_DEFAULT, "reduce": _SCAN_REDUCE_DEFAULT,
                "histogram": [2**k for k in range(20, 29, 2)],
                "life": [(s, s) for s in (1024, 2048, 4096, 8192, 16384)]},
    "quick": {"scan": [2**10, 2**16, 2**22, 2**28], "reduce": [2**10, 2**16, 2**22, 2**28],
              "histogram": [2**20, 2**24, 2**28], "life": [(1024, 1024), (4096, 4096), (16384, 16384)]},
    "small": {"scan": [2**10, 2**14 + 7], "reduce": [2**10, 2**14 + 7], "histogram": [2**12, 2**16 + 3],
              "life": [(32, 32), (100, 37)]},
}

DEFAULT_REPS = 20
QUICK_REPS = 10
WARMUP = 2  # the first call compiles; the second tells how long a call takes (for the caps below)
LIFE_GENERATIONS = 16  # generations per timed life call (kernels that do several generations a launch need > 1)
HISTOGRAM_BINS = 256
# Caps that keep `all` within minutes: a measurement is skipped when the time per call predicted from the
# previous size passes the cap, and the number of timed calls shrinks (never below MIN_REPS) to fit the budget.
CALL_CAP_MS = {"gpu": 250.0, "cpu": 1500.0}
MEASURE_BUDGET_S = {"gpu": 3.0, "cpu": 4.0}
MIN_REPS = {"gpu": 10, "cpu": 3}
CHECK_LIFE_MAX_CELLS = 2**20  # life results are checked against NumPy up to 1024 x 1024
REFUSALS = (ValueError, NotImplementedError)  # an algorithm refusing an input: skipped, not an error

DEFINITIONS = {
    "ms": "median time of one call over `reps` timed calls, after 2 warm-up calls; CUDA events on the null stream "
          "for GPU rows, time.perf_counter for CPU rows; for life, per generation",
    "gelem_per_s": "size / time / 1e9: elements (cells for life) per second, in billions",
    "copy_ms": "median time of pycuda.driver.memcpy_dtod of the input's bytes (size x itemsize; life: the lattice as "
               "int32) in the same run",
    "copy_gbytes_per_s": "2 x input bytes / copy time / 1e9: bytes read + written per second by the copy",
    "copy_gelem_per_s": "size / copy time / 1e9 = copy bytes per second / (2 x itemsize)",
    "x_copy": {
        "scan": "gelem_per_s / copy_gelem_per_s = copy_ms / ms (a scan reads and writes each element once, as the copy)",
        "life": "gcell_per_s / copy's gcell_per_s of the lattice = copy_ms / ms",
        "reduce": "bytes read per second (size x itemsize / time) / copy bytes per second (read + written) "
                  "= copy_ms / (2 x ms)",
        "histogram": "as reduce: bytes read per second / copy bytes per second = copy_ms / (2 x ms)",
    },
    "bound_gelem_per_s": "the gelem_per_s at which x_copy = 1 (the dashed line of the plot)",
    "x_ref": "reference ms / ms at the same pattern, dtype, op and size; references: scan cupy.cumsum, "
             "reduce cupy.sum/amax/amin, histogram cupy.histogram, life the book's conway_ker as printed (pyscan's "
             "global where N is not a multiple of 32)",
    "in_l2": "the input (size x itemsize bytes) fits in the device's L2 cache, so repeated calls find it there",
    "check": "ok: the result equals NumPy's exactly (inputs are small nonzero integers, so float sums are exact); "
             "MISMATCH: it does not; '-': not checked",
    "op": "scan/reduce: the operator; histogram: the data (uniform random bytes, or all bytes equal); life: '-'",
}
REFERENCES = {"scan": "cupy.cumsum", "reduce": "cupy", "histogram": "cupy.histogram", "life": "book conway_ker (as printed)"}


# ----------------------------------------------------------------------------------------------------------------
# Arguments and sizes


def parse_size(token: str, pattern: str):
    """One size: an element count ("4096", "2^12", "2**12", "4k" ...) or, for life, a lattice "HxW" or a count of
    cells of a square lattice (2^20 -> 1024 x 1024).  Returns an int, or (H, W) for life."""
    text = token.strip().lower().replace("×", "x")
    if "x" in text:
        parts = text.split("x")
        if len(parts) != 2:
            raise ValueError(f"size {token!r}: expected HxW")
        h, w = (parse_size(p, "scan") for p in parts)
        return (h, w) if pattern == "life" else h * w
    try:
        if "^" in text or "**" in text:
            base, exp = text.replace("**", "^").split("^")
            value = int(base) ** int(exp)
        elif text[-1:] in ("k", "m", "g"):
            value = int(text[:-1]) * 2 ** {"k": 10, "m": 20, "g": 30}[text[-1]]
        else:
            value = int(text)
    except ValueError:
        raise ValueError(f"size {token!r}: expected a count like 4096, 2^12, 16M, or HxW for life") from None
    if value < 1:
        raise ValueError(f"size {token!r}: must be at least 1")
    if pattern == "life":
        side = math.isqrt(value)
        if side * side != value:
            raise ValueError(f"life size {token!r}: {value} cells is not a square lattice; write HxW")
        return (side, side)
    return value


def sizes_for(tokens, pattern: str, quick: bool) -> list:
    """The sizes of a pattern: the preset (quick or default) when no --sizes came, else the tokens (each a size or
    a preset name: small, quick, default), sorted from small to large."""
    tokens = tokens or ["quick" if quick else "default"]
    out = []
    for token in tokens:
        for part in str(token).replace(",", " ").split():
            if part in SIZE_PRESETS:
                out.extend(SIZE_PRESETS[part][pattern])
            else:
                out.append(parse_size(part, pattern))
    return sorted(set(out), key=cells)


def cells(size) -> int:
    return size[0] * size[1] if isinstance(size, tuple) else int(size)


def size_label(size) -> str:
    if isinstance(size, tuple):
        return f"{size[0]}x{size[1]}"
    n = int(size)
    if n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pyscan bench",
        description="Time every pyscan algorithm and the libraries beside it (numpy, pycuda, cupy) in one run.",
        epilog="Sizes: element counts (4096, 2^12, 16M), HxW or a square count of cells for life, or a preset: "
               "small, quick, default.  See benchmarks/README.md for what the columns mean.")
    parser.add_argument("pattern", nargs="?", default="all", choices=PATTERNS + ("all",))
    parser.add_argument("--sizes", nargs="+", metavar="SIZE", help="sizes, or a preset: small, quick, default")
    parser.add_argument("--reps", type=int, default=None,
                        help=f"timed calls per measurement; the median is reported (default {DEFAULT_REPS}, "
                             f"{QUICK_REPS} with --quick)")
    parser.add_argument("--json", metavar="PATH", help="write every row, the device and the versions as JSON")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG: throughput against size, one panel per case")
    parser.add_argument("--quick", action="store_true", help="fewer sizes and reps (about 3 minutes on an H100)")
    parser.add_argument("--algorithms", metavar="NAME", nargs="+",
                        help="only these registry algorithms (peers still run unless --no-peers)")
    parser.add_argument("--no-peers", action="store_true", help="no numpy/pycuda/cupy rows")
    parser.add_argument("--no-variants", action="store_true",
                        help="no extra dtypes/ops at the largest size (scan, reduce)")
    parser.add_argument("--no-check", action="store_true", help="do not check results against NumPy")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.reps is None:
        args.reps = QUICK_REPS if args.quick else DEFAULT_REPS
    if args.reps < 1:
        parser.error(f"--reps must be at least 1, got {args.reps}")
    args.patterns = PATTERNS if args.pattern == "all" else (args.pattern,)
    try:
        args.size_plan = {p: sizes_for(args.sizes, p, args.quick) for p in args.patterns}
    except ValueError as exc:
        parser.error(str(exc))
    if args.algorithms:
        args.algorithms = [a for token in args.algorithms for a in token.replace(",", " ").split()]
    return args


# ----------------------------------------------------------------------------------------------------------------
# Statistics and ratios (pure functions; benchmarks/README.md documents them)


def median(values) -> float:
    values = list(values)
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def gper_s(count: int, ms: float) -> float:
    """count per second, in billions, for count items done in ms milliseconds."""
    return count / (ms * 1e-3) / 1e9


def copy_gbytes_per_s(nbytes: int, copy_ms: float) -> float:
    """Bytes read + written per second by a device-to-device copy of nbytes, in GB/s."""
    return 2 * nbytes / (copy_ms * 1e-3) / 1e9


def x_copy(pattern: str, ms: float, copy_ms: float) -> float:
    """The row's fraction of the copy's throughput (see DEFINITIONS["x_copy"])."""
    if pattern in ("reduce", "histogram"):
        return copy_ms / (2 * ms)
    return copy_ms / ms


def bound_gelem_per_s(pattern: str, size: int, copy_ms: float) -> float:
    """The Gelem/s at which x_copy would be 1."""
    factor = 2 if pattern in ("reduce", "histogram") else 1
    return factor * gper_s(size, copy_ms)


def predicted_ms(last, size: int):
    """Time per call at `size` predicted linearly from the last measurement (size, ms) of the same row, or None."""
    if last is None:
        return None
    last_size, last_ms = last
    return last_ms * size / last_size


def choose_reps(reps: int, call_ms: float, device: str) -> int:
    """The timed calls to make: `reps`, fewer when they would pass the measurement budget, never below MIN_REPS."""
    budget_ms = MEASURE_BUDGET_S[device] * 1e3
    if call_ms * reps <= budget_ms:
        return reps
    return max(min(reps, MIN_REPS[device]), int(budget_ms // max(call_ms, 1e-9)))


def annotate_references(rows: list) -> None:
    """Fill x_ref in every timed row from the reference row of its pattern, dtype, op and size."""
    refs = {}  # key -> (priority, ms): a row with reference 2 wins over one with 1 (life's global stands in for
    # the book's kernel as printed where that cannot run: H, W not multiples of 32)
    for row in rows:
        if row.get("ms") and row.get("reference"):
            key = (row["pattern"], row["dtype"], row["op"], row["size"])
            if row["reference"] > refs.get(key, (0, None))[0]:
                refs[key] = (row["reference"], row["ms"])
    for row in rows:
        ref = refs.get((row["pattern"], row["dtype"], row["op"], row["size"]), (0, None))[1]
        row["x_ref"] = ref / row["ms"] if ref and row.get("ms") and row["kind"] != "copy" else None


# ----------------------------------------------------------------------------------------------------------------
# Backends: the real one (pycuda), and anything with the same methods (the tests use a NumPy one)


class _EventTimer:
    def __init__(self, event_type, elapsed):
        self.start, self.end, self.elapsed = event_type(), event_type(), elapsed

    def time(self, call) -> float:
        self.start.record()
        call()
        self.end.record()
        self.end.synchronize()
        return self.elapsed(self.start, self.end)


class CpuTimer:
    def time(self, call) -> float:
        t0 = time.perf_counter()
        call()
        return (time.perf_counter() - t0) * 1e3


class GPUBackend:
    """pycuda: arrays are GPUArrays from pyscan's pool, timing is by CUDA events on the null stream."""

    def __init__(self):
        from . import arrays, gpu

        self.drv = gpu.driver()  # raises GPUUnavailableError
        self.ga = gpu.gpuarray()
        self.arrays = arrays
        attrs = gpu.device_attributes()
        dev = self.drv.Context.get_device()
        a = self.drv.device_attribute
        self.l2_bytes = int(dev.get_attribute(a.L2_CACHE_SIZE))
        mem_khz, bus_bits = dev.get_attribute(a.MEMORY_CLOCK_RATE), dev.get_attribute(a.GLOBAL_MEMORY_BUS_WIDTH)
        self.device = {
            "name": attrs["name"],
            "compute_capability": "%d.%d" % attrs["compute_capability"],
            "multiprocessors": attrs["multiprocessors"],
            "total_memory_gib": round(attrs["total_memory"] / 2**30, 1),
            "l2_cache_bytes": self.l2_bytes,
            "nominal_dram_gbytes_per_s": round(2 * mem_khz * 1e3 * bus_bits / 8 / 1e9, 1),
            "pci_bus_id": attrs["pci_bus_id"],
        }
        self._pool = None

    def upload(self, host):
        return self.ga.to_gpu(host)

    def empty_like(self, x):
        return self.arrays.empty(x.shape, x.dtype)

    def download(self, x):
        return x.get()

    def copy_call(self, src, dst, nbytes):
        drv = self.drv
        return lambda: drv.memcpy_dtod(dst.gpudata, src.gpudata, nbytes)

    def timer(self, kind="gpu"):
        if kind == "cpu":
            return CpuTimer()
        if kind == "cupy":
            import cupy

            return _EventTimer(cupy.cuda.Event, cupy.cuda.get_elapsed_time)
        return _EventTimer(self.drv.Event, lambda s, e: s.time_till(e))

    def synchronize(self):
        self.drv.Context.synchronize()
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            cupy.cuda.Device().synchronize()

    def alive(self) -> bool:
        try:
            self.drv.Context.synchronize()
            self.ga.zeros(1, np.int32).get()
        except Exception:
            return False
        return True

    def peer_pool(self):
        """A memory pool for pycuda's own kernels' scratch, so their rows do not time cudaMalloc either."""
        if self._pool is None:
            from pycuda.tools import DeviceMemoryPool

            self._pool = DeviceMemoryPool()
        return self._pool

    def free(self):
        self.arrays.free_pool()
        if self._pool is not None:
            self._pool.free_held()
        cupy = sys.modules.get("cupy")
        if cupy is not None:
            cupy.get_default_memory_pool().free_all_blocks()

    def versions(self) -> dict:
        import pycuda

        drv = self.drv
        version = drv.get_driver_version()
        out = {"cuda_driver": f"{version // 1000}.{version % 1000 // 10}",
               "pycuda": pycuda.VERSION_TEXT, "pycuda_cuda": ".".join(map(str, drv.get_version()))}
        try:
            import cupy

            out["cupy"] = cupy.__version__
            try:
                from cupy._core import _accelerator

                names = {getattr(_accelerator, k): k[len("ACCELERATOR_"):].lower()
                         for k in dir(_accelerator) if k.startswith("ACCELERATOR_")}
                out["cupy_accelerators"] = [names.get(a, str(a)) for a in _accelerator.get_routine_accelerators()]
            except Exception:
                pass
        except Exception:
            out["cupy"] = None
        return out


# ----------------------------------------------------------------------------------------------------------------
# Inputs and references


def make_input(pattern: str, size, dtype: str, op: str, rng) -> np.ndarray:
    """Random input: scan/reduce nonzero integers in [-4, 4] (as the dtype: exact sums, even in float32, and no
    overflow); histogram uniform random bytes or one repeated byte ('a'); life 25 % alive int32 cells."""
    if pattern == "life":
        h, w = size
        return (rng.integers(0, 4, size=(h, w), dtype=np.uint8) == 0).astype(np.int32)
    n = cells(size)
    if pattern == "histogram":
        if op == "all-equal":
            return np.full(n, ord("a"), np.uint8)
        return rng.integers(0, 256, size=n, dtype=np.uint8)
    v = rng.integers(-4, 4, size=n, dtype=np.int8)
    v[v >= 0] += 1
    return v.astype(dtype)


_UFUNCS = {"add": np.add, "max": np.maximum, "min": np.minimum}


def life_step_numpy(lattice: np.ndarray) -> np.ndarray:
    """One generation on a torus with np.roll neighbour sums (the NumPy peer, and the reference of the checks)."""
    a = lattice.astype(np.uint8, copy=False) != 0
    up, down = np.roll(a, 1, 0), np.roll(a, -1, 0)
    n = np.zeros(a.shape, np.uint8)
    for rows in (up, a, down):
        n += np.roll(rows, 1, 1)
        n += np.roll(rows, -1, 1)
    n += up
    n += down
    return ((n == 3) | (a & (n == 2))).astype(lattice.dtype)


def reference(pattern: str, host: np.ndarray, op: str, units: int = 1):
    """NumPy's answer for a case: the scan, the reduction, the 256-bin counts, or `units` generations."""
    if pattern == "scan":
        return _UFUNCS[op].accumulate(host, dtype=host.dtype)
    if pattern == "reduce":
        return _UFUNCS[op].reduce(host, dtype=host.dtype)
    if pattern == "histogram":
        return np.bincount(host, minlength=HISTOGRAM_BINS)
    out = host
    for _ in range(units):
        out = life_step_numpy(out)
    return out


def same_result(pattern: str, got, expected) -> bool:
    got = np.asarray(got)
    if pattern == "reduce":
        return got.size == 1 and got.reshape(-1)[0] == expected
    if pattern == "histogram":
        return got.shape == expected.shape and np.array_equal(got.astype(np.int64), expected)
    if pattern == "life":
        return got.shape == expected.shape and np.array_equal(got != 0, expected != 0)
    return got.shape == expected.shape and np.array_equal(got, expected)


# ----------------------------------------------------------------------------------------------------------------
# What gets timed


@dataclass
class Case:
    """One input: a pattern, dtype, op and size, with its host and device arrays and its copy time."""

    pattern: str
    dtype: str
    op: str
    size: object  # int, or (H, W) for life
    host: np.ndarray
    device: object = None
    copy_ms: float | None = None
    in_l2: bool = False
    _refs: dict = field(default_factory=dict)
    _extra: dict = field(default_factory=dict)  # per-case device arrays of peers (cupy copies, ...)

    @property
    def count(self) -> int:
        return cells(self.size)

    def reference(self, units=1):
        if units not in self._refs:
            self._refs[units] = reference(self.pattern, self.host, self.op, units)
        return self._refs[units]


@dataclass
class Entry:
    """Something to time: make(case) -> (call, result), result() giving what to check (on the host) after the
    first call, or None.  timer: 'gpu' (pycuda events), 'cupy' (cupy events) or 'cpu'."""

    name: str
    kind: str  # "pyscan" or "peer"
    make: Callable
    timer: str = "gpu"
    fast: bool = False
    reference: int = 0  # 2: the reference of its case (x_ref); 1: the stand-in where no 2 ran; 0: not one
    units: int = 1  # generations per call (life)
    note: str = ""

    @property
    def device(self) -> str:
        return "cpu" if self.timer == "cpu" else "gpu"


# pyscan algorithms ------------------------------------------------------------------------------------------------


def scan_entry(bench, alg, case):
    def make(case):
        x = case.device
        out = bench.backend.empty_like(x)
        call = lambda: alg.driver(x, out, op=case.op, exclusive=False)  # noqa: E731
        return call, lambda: bench.backend.download(out)
    return make


def reduce_entry(bench, alg, case):
    """Reductions: the option launch(x, *, op) -> one-element GPUArray (no copy back, no sync) where registered,
    else driver(x, *, op) -> NumPy scalar (which copies the result back: the row's note says so)."""
    launch = (alg.options or {}).get("launch")

    def make(case):
        x = case.device
        box = {}
        if launch is not None:
            def call():
                box["r"] = launch(x, op=case.op)
            return call, lambda: bench.backend.download(box["r"])

        def call():
            box["r"] = alg.driver(x, op=case.op)
        return call, lambda: box["r"]
    return make


def histogram_entry(bench, alg, case):
    """Histogram drivers: driver(data: uint8 GPUArray, bins, *, letters=False) -> GPUArray of counts (the result
    comes from pyscan's pool; nothing goes to the host)."""
    def make(case):
        x = case.device
        box = {}

        def call():
            box["r"] = alg.driver(x, HISTOGRAM_BINS)
        return call, lambda: bench.backend.download(box["r"])
    return make


def life_entry(bench, alg, case):
    """Life drivers: Driver(cells: GPUArray) owns the lattice; advance(generations); cells() -> GPUArray."""
    def make(case):
        limit = (alg.options or {}).get("max_cells")
        if limit is not None and case.count > limit:
            raise ValueError(f"{alg.name} takes at most {limit} cells (one block)")
        state = alg.driver(bench.backend.upload(case.host))
        return (lambda: state.advance(LIFE_GENERATIONS)), lambda: bench.backend.download(state.cells())
    return make


ENTRY_MAKERS = {"scan": scan_entry, "reduce": reduce_entry, "histogram": histogram_entry, "life": life_entry}
def _api_note(pattern, alg) -> str:
    if pattern == "reduce" and "launch" not in (alg.options or {}):
        return "driver returns to host"
    return ""


def algorithm_label(pattern: str, name: str) -> str:
    return "global (book conway_ker, any HxW)" if pattern == "life" and name == "global" else name


# peers --------------------------------------------------------------------------------------------------------------


def _ctype(dtype) -> str:
    """The C name pycuda's argument parser knows for a dtype (it maps int64 to `long`, not `long long`)."""
    return {"int32": "int", "int64": "long", "float32": "float", "float64": "double"}[str(np.dtype(dtype))]


_SCAN_EXPR = {"add": "a+b", "max": "(a>b)?a:b", "min": "(a<b)?a:b"}


def _neutral(dtype, op) -> str:
    """The identity of op for dtype, as a C expression (for pycuda's ReductionKernel)."""
    dtype = np.dtype(dtype)
    if op == "add":
        return "0"
    low = op == "max"
    if dtype.kind == "f":
        if dtype.itemsize == 4:
            return "__int_as_float(0xff800000)" if low else "__int_as_float(0x7f800000)"
        return "__longlong_as_double(0xfff0000000000000ULL)" if low else "__longlong_as_double(0x7ff0000000000000ULL)"
    if dtype.itemsize == 4:
        return "(-2147483647-1)" if low else "2147483647"
    return "(-9223372036854775807LL-1)" if low else "9223372036854775807LL"


_pycuda_kernels: dict = {}


def pycuda_scan_kernel(dtype, op):
    key = ("scan", str(dtype), op)
    if key not in _pycuda_kernels:
        from pycuda.scan import InclusiveScanKernel

        _pycuda_kernels[key] = InclusiveScanKernel(np.dtype(dtype), _SCAN_EXPR[op])
    return _pycuda_kernels[key]


def pycuda_reduction_kernel(dtype, op):
    key = ("reduce", str(dtype), op)
    if key not in _pycuda_kernels:
        from pycuda.reduction import ReductionKernel

        _pycuda_kernels[key] = ReductionKernel(np.dtype(dtype), neutral=_neutral(dtype, op),
                                               reduce_expr=_SCAN_EXPR[op], map_expr="x[i]",
                                               arguments=f"const {_ctype(dtype)} *x")
    return _pycuda_kernels[key]


def _book_life(bench, case):
    """The book's conway_ker exactly as printed (kernels/life/global.cu: conway_ker_book): int32 cells, an N x N
    lattice with N a multiple of 32, a grid of (N/32, N/32) blocks of 32 x 32, two buffers swapped by the host."""
    from .loader import get_kernel

    n = case.size[0]
    fn = get_kernel("life/global.cu", "conway_ker_book")
    buffers = [bench.backend.upload(case.host), bench.backend.empty_like(case.device)]

    def call():
        for _ in range(LIFE_GENERATIONS):
            fn.prepared_call((n // 32, n // 32, 1), (32, 32, 1), buffers[1].gpudata, buffers[0].gpudata)
            buffers.reverse()
    return call, lambda: bench.backend.download(buffers[0])


def _cupy_input(case):
    if "cupy" not in case._extra:
        import cupy

        case._extra["cupy"] = cupy.asarray(case.host)
    return case._extra["cupy"]


def _installed(module: str) -> bool:
    try:
        __import__(module)
    except Exception:
        return False
    return True


def peer_entries(bench, case, *, cpu: bool) -> list:
    """The libraries' rows for a case (those installed; CPU ones only when cpu=True)."""
    pattern, op = case.pattern, case.op
    out = []
    host = case.host
    if cpu:
        if pattern == "scan":
            def make(case):
                res = np.empty_like(host)
                return (lambda: _UFUNCS[op].accumulate(host, out=res)), lambda: res
            name = "numpy.cumsum" if op == "add" else f"numpy.{_UFUNCS[op].__name__}.accumulate"
            out.append(Entry(name, "peer", make, timer="cpu"))
        elif pattern == "reduce":
            def make(case):
                box = {}
                return (lambda: box.__setitem__("r", _UFUNCS[op].reduce(host))), lambda: box["r"]
            out.append(Entry({"add": "numpy.sum", "max": "numpy.max", "min": "numpy.min"}[op], "peer", make, timer="cpu"))
        elif pattern == "histogram":
            def make(case):
                box = {}

                def call():
                    box["r"] = np.histogram(host, bins=HISTOGRAM_BINS, range=(0, HISTOGRAM_BINS))[0]
                return call, lambda: box["r"]
            out.append(Entry("numpy.histogram", "peer", make, timer="cpu"))
        elif pattern == "life":
            def make(case):
                box = {"a": host}

                def call():
                    box["a"] = life_step_numpy(box["a"])
                return call, lambda: box["a"]
            out.append(Entry("numpy (np.roll step)", "peer", make, timer="cpu"))
    if bench.backend_is_gpu and pattern == "life":
        h, w = case.size
        if h == w and h % 32 == 0:
            out.append(Entry("book conway_ker (as printed)", "peer", lambda case: _book_life(bench, case),
                             units=LIFE_GENERATIONS, reference=2))
    if bench.backend_is_gpu and _installed("pycuda"):
        if pattern == "scan":
            def make(case):
                knl, x = pycuda_scan_kernel(case.dtype, op), case.device
                res, allocate = bench.backend.empty_like(x), bench.backend.peer_pool().allocate
                return (lambda: knl(x, res, allocator=allocate)), lambda: res.get()
            out.append(Entry("pycuda InclusiveScanKernel", "peer", make))
        elif pattern == "reduce":
            def make(case):
                knl, x = pycuda_reduction_kernel(case.dtype, op), case.device
                allocate, box = bench.backend.peer_pool().allocate, {}
                return (lambda: box.__setitem__("r", knl(x, allocator=allocate))), lambda: box["r"].get()
            out.append(Entry("pycuda ReductionKernel", "peer", make))
    if bench.backend_is_gpu and _installed("cupy"):
        if pattern == "scan" and op == "add":
            def make(case):
                import cupy

                x = _cupy_input(case)
                res = cupy.empty_like(x)  # dtype=x.dtype: NumPy's rule would widen int32 to int64 (twice the bytes)
                return (lambda: cupy.cumsum(x, dtype=x.dtype, out=res)), lambda: res.get()
            out.append(Entry("cupy.cumsum", "peer", make, timer="cupy", reference=2))
        elif pattern == "reduce":
            def make(case):
                import cupy

                x = _cupy_input(case)
                fn = {"add": cupy.sum, "max": cupy.amax, "min": cupy.amin}[op]
                box = {}  # the 0-d result comes from CuPy's pool; sum keeps NumPy's accumulator type (int64 for int32)

                def call():
                    box["r"] = fn(x)
                return call, lambda: box["r"].get()
            out.append(Entry({"add": "cupy.sum", "max": "cupy.amax", "min": "cupy.amin"}[op], "peer", make,
                             timer="cupy", reference=2))
        elif pattern == "histogram":
            def make(case):
                import cupy

                x = _cupy_input(case)
                box = {}

                def call():
                    box["r"] = cupy.histogram(x, bins=HISTOGRAM_BINS, range=(0, HISTOGRAM_BINS))[0]
                return call, lambda: box["r"].get()
            out.append(Entry("cupy.histogram", "peer", make, timer="cupy", reference=2))
    return out


# ----------------------------------------------------------------------------------------------------------------
# The run


class Bench:
    def __init__(self, backend, args, *, registries=None, entry_makers=None, peers=None, rng=None,
                 log=sys.stderr):
        import pyscan

        self.backend = backend
        self.backend_is_gpu = isinstance(backend, GPUBackend)
        self.args = args
        self.registries = registries if registries is not None else pyscan.REGISTRIES
        self.entry_makers = entry_makers or ENTRY_MAKERS
        self.peers = peer_entries if peers is None else peers
        self.rng = rng if rng is not None else np.random.default_rng(20261122)
        self.log = log
        self.rows: list = []
        self.skipped: list = []
        self.last: dict = {}  # (pattern, name, dtype, op) -> (size, ms per call) of its last measurement
        self.blocked: dict = {}  # (pattern, name, dtype, op) -> why larger sizes are not tried
        self.copies: dict = {}  # nbytes -> copy ms
        self.dead = None  # set when the context is lost: nothing more can run
        self.small_calls = None
        self.started = time.time()

    # -- progress and bookkeeping

    def say(self, text):
        if self.log is not None:
            print(f"[{time.time() - self.started:6.1f} s] {text}", file=self.log, flush=True)

    def skip(self, case, name, reason):
        self.skipped.append({"pattern": case.pattern, "name": name, "dtype": case.dtype, "op": case.op,
                             "size": case.count, "size_label": size_label(case.size), "reason": reason})
        self.say(f"[{case.pattern}] {name} {case.dtype} {case.op} {size_label(case.size)}: skipped ({reason})")

    def row(self, case, entry, **values):
        row = {"pattern": case.pattern, "name": entry.name if entry else "copy (memcpy_dtod)",
               "kind": entry.kind if entry else "copy", "fast": bool(entry and entry.fast),
               "device": entry.device if entry else "gpu", "reference": entry.reference if entry else 0,
               "dtype": case.dtype, "op": case.op, "size": case.count, "size_label": size_label(case.size),
               "shape": list(case.size) if isinstance(case.size, tuple) else None, "in_l2": case.in_l2,
               "ms": None, "ms_min": None, "reps": 0, "gelem_per_s": None, "copy_ms": case.copy_ms,
               "copy_gbytes_per_s": None, "copy_gelem_per_s": None, "x_copy": None, "bound_gelem_per_s": None,
               "x_ref": None, "check": "-", "note": entry.note if entry else "", "error": None}
        if case.copy_ms:
            row["copy_gbytes_per_s"] = copy_gbytes_per_s(case.host.nbytes if case.pattern != "life"
                                                         else case.count * 4, case.copy_ms)
            row["copy_gelem_per_s"] = gper_s(case.count, case.copy_ms)
            row["bound_gelem_per_s"] = bound_gelem_per_s(case.pattern, case.count, case.copy_ms)
        row.update(values)
        if row["ms"]:
            row["gelem_per_s"] = gper_s(case.count, row["ms"])
            if case.copy_ms and row["kind"] != "copy":
                row["x_copy"] = x_copy(case.pattern, row["ms"], case.copy_ms)
        self.rows.append(row)
        return row

    def progress(self, row):
        head = f"[{row['pattern']}] {row['name']} {row['dtype']} {row['op']} {row['size_label']}"
        if row["error"]:
            self.say(f"{head}: ERROR {row['error']}")
        elif row["kind"] == "copy":
            self.say(f"{head}: {row['ms']:.4f} ms, {row['copy_gbytes_per_s']:.0f} GB/s, "
                     f"{row['copy_gelem_per_s']:.1f} Gelem/s")
        else:
            ratio = f", {row['x_copy']:.2f}x copy" if row["x_copy"] else ""
            self.say(f"{head}: {row['ms']:.4f} ms, {row['gelem_per_s']:.2f} G/s{ratio}"
                     f"{'' if row['check'] in ('ok', '-') else ' CHECK ' + row['check']}")

    # -- measuring

    def time_call(self, call, timer, reps, device, warm_ms):
        r = choose_reps(reps, warm_ms, device)
        return [timer.time(call) for _ in range(r)]

    def measure_copy(self, case):
        nbytes = case.count * 4 if case.pattern == "life" else case.host.nbytes
        if nbytes not in self.copies:
            src = case.device
            dst = self.backend.empty_like(src)
            call = self.backend.copy_call(src, dst, nbytes)
            timer = self.backend.timer("gpu")
            call()
            self.backend.synchronize()
            warm = timer.time(call)
            times = self.time_call(call, timer, self.args.reps, "gpu", warm)
            self.copies[nbytes] = (median(times), min(times), len(times))
            del dst
        ms, ms_min, reps = self.copies[nbytes]
        case.copy_ms = ms
        self.progress(self.row(case, None, ms=ms, ms_min=ms_min, reps=reps))

    def measure(self, case, entry):
        key = (case.pattern, entry.name, case.dtype, case.op)
        if self.dead:
            return self.skip(case, entry.name, f"not run ({self.dead})")
        if key in self.blocked:
            return self.skip(case, entry.name, self.blocked[key])
        pred = predicted_ms(self.last.get(key), case.count)
        cap = CALL_CAP_MS[entry.device]
        if pred is not None and pred > cap:
            reason = (f"~{pred:.0f} ms per call predicted from {size_label(self.last[key][0])}, "
                      f"over the {cap:.0f} ms cap")
            self.blocked[key] = reason
            return self.skip(case, entry.name, reason)
        check = "-"
        try:
            call, result = entry.make(case)
            call()  # warm-up 1: compiles, allocates caches
            self.backend.synchronize()
            if not self.args.no_check and result is not None and self.checkable(case, entry):
                check = "ok" if same_result(case.pattern, result(), case.reference(entry.units)) else "MISMATCH"
            timer = self.backend.timer(entry.timer)
            warm = timer.time(call)  # warm-up 2: how long a call takes
            times = self.time_call(call, timer, self.args.reps, entry.device, warm)
        except REFUSALS as exc:
            reason = f"{type(exc).__name__}: {_first_line(exc)}"
            self.blocked[key] = f"refused a smaller size ({reason})"
            return self.skip(case, entry.name, reason)
        except Exception as exc:  # an algorithm failing must not end the run
            message = f"{type(exc).__name__}: {_first_line(exc)}"
            self.blocked[key] = "failed at a smaller size"
            row = self.row(case, entry, error=message)
            self.progress(row)
            if self.backend_is_gpu and not self.backend.alive():
                self.dead = f"the GPU context was lost after {entry.name} at {size_label(case.size)}: {message}"
                self.say(f"the GPU context is lost ({message}); the remaining measurements are skipped")
            return row
        per_call = median(times)
        self.last[key] = (case.count, per_call)
        row = self.row(case, entry, ms=per_call / entry.units, ms_min=min(times) / entry.units, reps=len(times),
                       check=check)
        if check == "MISMATCH":
            self.blocked[key] = "wrong result at a smaller size"
        self.progress(row)
        return row

    def checkable(self, case, entry) -> bool:
        return case.pattern != "life" or case.count <= CHECK_LIFE_MAX_CELLS

    # -- cases

    def entries(self, case, *, variant: bool) -> list:
        registry = self.registries.get(case.pattern, ())
        algorithms = list(registry)
        if self.args.algorithms:
            algorithms = [a for a in algorithms if a.name in self.args.algorithms]
        if variant:
            fast = [a for a in algorithms if a.fast]
            algorithms = fast or self.auto_choice(case, algorithms)
        out = []
        for alg in algorithms:
            limit = _size_limit(alg.options)
            if limit is not None and case.count > limit:
                self.skip(case, alg.name, f"registry limit of {limit} elements")
                continue
            make = self.entry_makers[case.pattern](self, alg, case)
            units = LIFE_GENERATIONS if case.pattern == "life" else 1
            out.append(Entry(algorithm_label(case.pattern, alg.name), "pyscan", make, fast=alg.fast, units=units,
                             reference=1 if case.pattern == "life" and alg.name == "global" else 0,
                             note=_api_note(case.pattern, alg)))
        if not self.args.no_peers:
            out.extend(self.peers(self, case, cpu=not variant))
        return out

    def auto_choice(self, case, algorithms):
        try:
            if case.pattern == "scan":
                from .scans import choose_auto

                name = choose_auto(case.count, np.dtype(case.dtype), case.op)
                return [a for a in algorithms if a.name == name]
        except Exception:
            pass
        return algorithms[-1:]

    def run_case(self, pattern, size, dtype, op, *, variant=False):
        host = make_input(pattern, size, dtype, op, self.rng)
        case = Case(pattern, dtype, op, size, host)
        case.in_l2 = host.nbytes <= getattr(self.backend, "l2_bytes", 0)
        try:
            if self.dead:
                raise RuntimeError(self.dead)
            case.device = self.backend.upload(host)
            self.measure_copy(case)
        except Exception as exc:
            self.skip(case, "(all)", f"no input on the device: {type(exc).__name__}: {_first_line(exc)}")
            return
        for entry in self.entries(case, variant=variant):
            self.measure(case, entry)
        case.device = None
        case._extra.clear()
        self.backend.free()

    def run(self) -> dict:
        """Every case of every pattern asked for; an interrupt (Ctrl-C, SIGTERM) ends the run early and the
        result holds what was measured until then."""
        started = self.started = time.time()
        try:
            for pattern in self.args.patterns:
                sizes = self.args.size_plan[pattern]
                for dtype, op in CASES[pattern]:
                    for size in sizes:
                        self.run_case(pattern, size, dtype, op)
                if not self.args.no_variants and sizes:
                    for dtype, op in VARIANTS[pattern]:
                        self.run_case(pattern, sizes[-1], dtype, op, variant=True)
                if pattern == "scan" and self.backend_is_gpu and not self.dead:
                    self.small_calls = self.measure_small_calls()
        except KeyboardInterrupt:
            self.dead = "interrupted: the rows measured so far are kept"
            self.say(f"\n{self.dead}")
        annotate_references(self.rows)
        return self.result(time.time() - started)

    def measure_small_calls(self, n=1024, batches=5, calls=200):
        """Host wall-clock per call (with a synchronize after each) of pyscan.scan on a 2^10 int32 GPUArray (public
        API: validation, the pool allocation of the result, the launches) and of pycuda's InclusiveScanKernel on
        the same GPUArray (its usual in-place call)."""
        try:
            import pyscan

            drv = self.backend.drv
            host = make_input("scan", n, "int32", "add", self.rng)
            x = self.backend.ga.to_gpu(host)
            x_pycuda = self.backend.ga.to_gpu(host)
            knl = pycuda_scan_kernel("int32", "add")

            def per_call_us(fn):
                for _ in range(20):
                    fn()
                drv.Context.synchronize()
                results = []
                for _ in range(batches):
                    t0 = time.perf_counter()
                    for _ in range(calls):
                        fn()
                        drv.Context.synchronize()
                    results.append((time.perf_counter() - t0) / calls * 1e6)
                return median(results)

            ours = per_call_us(lambda: pyscan.scan(x))
            theirs = per_call_us(lambda: knl(x_pycuda))
            try:
                from .scans import choose_auto

                algorithm = choose_auto(n, np.dtype(np.int32), "add")
            except Exception:
                algorithm = "auto"
            out = {"n": n, "dtype": "int32", "pyscan_us": ours, "pycuda_us": theirs, "ratio": ours / theirs,
                   "algorithm": algorithm, "target_ratio": 2.0,
                   "method": f"host wall clock, median of {batches} batches of {calls} calls, a context synchronize "
                             "after each call; pyscan.scan(gpuarray) (result from pyscan's pool) vs "
                             "InclusiveScanKernel(np.int32, 'a+b')(gpuarray) in place"}
            self.say(f"[scan] small calls 2^10 int32: pyscan.scan {ours:.1f} us, pycuda InclusiveScanKernel "
                     f"{theirs:.1f} us per call: {ours / theirs:.2f}x")
            return out
        except Exception as exc:
            self.say(f"[scan] small calls: ERROR {type(exc).__name__}: {_first_line(exc)}")
            return {"error": f"{type(exc).__name__}: {_first_line(exc)}"}

    def result(self, seconds) -> dict:
        import pyscan

        versions = {"pyscan": pyscan.__version__, "numpy": np.__version__, "python": platform.python_version()}
        if hasattr(self.backend, "versions"):
            versions.update(self.backend.versions())
        result = {
            "schema": SCHEMA,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": getattr(self.backend, "device", {}),
            "versions": versions,
            "settings": {"patterns": list(self.args.patterns), "reps": self.args.reps, "warmup": WARMUP,
                         "sizes": {p: [list(s) if isinstance(s, tuple) else s for s in v]
                                   for p, v in self.args.size_plan.items()},
                         "life_generations_per_call": LIFE_GENERATIONS, "histogram_bins": HISTOGRAM_BINS,
                         "call_cap_ms": CALL_CAP_MS, "measure_budget_s": MEASURE_BUDGET_S, "min_reps": MIN_REPS,
                         "checked": not self.args.no_check, "seconds": round(seconds, 1)},
            "definitions": DEFINITIONS,
            "references": REFERENCES,
            "rows": self.rows,
            "skipped": self.skipped,
            "small_calls": self.small_calls,
            "aborted": self.dead,
        }
        result["targets"] = targets(result)
        return result


def _size_limit(options: dict):
    for key in ("max_length", "max_size", "max_cells", "max_elements"):
        value = options.get(key) if options else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _first_line(exc) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else "")[:300]


# ----------------------------------------------------------------------------------------------------------------
# Targets of issue 6, read off the rows


def _best(rows, **match):
    found = [r for r in rows if r["kind"] == "pyscan" and r.get("ms") and not r.get("error")
             and r.get("check") != "MISMATCH" and all(r.get(k) == v for k, v in match.items())]
    return max(found, key=lambda r: r["gelem_per_s"]) if found else None


def targets(result: dict) -> list:
    """The issue's targets, measured: the best pyscan row at the largest size of each case against its goal."""
    rows = result["rows"]
    out = []

    def largest(pattern, dtype, op):
        sizes = [r["size"] for r in rows if r["pattern"] == pattern and r["dtype"] == dtype and r["op"] == op]
        return max(sizes) if sizes else None

    def add(what, pattern, dtype, op, field_, goal, unit):
        size = largest(pattern, dtype, op)
        best = _best(rows, pattern=pattern, dtype=dtype, op=op, size=size) if size else None
        value = best.get(field_) if best else None
        if not any(r["pattern"] == pattern for r in rows):
            return  # the pattern was not run
        out.append({"target": what, "goal": goal, "unit": unit, "measured": value,
                    "algorithm": best["name"] if best else None, "size_label": best["size_label"] if best else None,
                    "met": None if value is None else value >= goal})

    add("scan int32 add, x copy", "scan", "int32", "add", "x_copy", 0.90, "x copy")
    add("reduce int32 add, x copy bytes/s", "reduce", "int32", "add", "x_copy", 0.90, "x copy")
    add("reduce float32 add, x copy bytes/s", "reduce", "float32", "add", "x_copy", 0.90, "x copy")
    add("histogram uniform, x cupy.histogram", "histogram", "uint8", "uniform", "x_ref", 2.0, "x ref")
    add("histogram all-equal, x cupy.histogram", "histogram", "uint8", "all-equal", "x_ref", 3.0, "x ref")
    add("life, x book conway_ker", "life", "int32", "-", "x_ref", 10.0, "x ref")
    small = result.get("small_calls") or {}
    if "ratio" in small:
        out.append({"target": "small calls: pyscan.scan 2^10 / pycuda InclusiveScanKernel", "goal": 2.0,
                    "unit": "x (at most)", "measured": small["ratio"], "algorithm": small.get("algorithm"),
                    "size_label": "2^10", "met": small["ratio"] <= 2.0})
    return out


# ----------------------------------------------------------------------------------------------------------------
# Output: table, JSON, plot

ROW_KEYS = ("pattern", "name", "kind", "fast", "device", "reference", "dtype", "op", "size", "size_label", "shape",
            "in_l2", "ms", "ms_min", "reps", "gelem_per_s", "copy_ms", "copy_gbytes_per_s", "copy_gelem_per_s",
            "x_copy", "bound_gelem_per_s", "x_ref", "check", "note", "error")
RESULT_KEYS = ("schema", "date", "device", "versions", "settings", "definitions", "references", "rows", "skipped",
               "small_calls", "aborted", "targets")


def validate_result(result: dict) -> None:
    """Raise ValueError if result does not have the JSON layout this module writes (SCHEMA)."""
    missing = [k for k in RESULT_KEYS if k not in result]
    if missing:
        raise ValueError(f"bench result: missing keys {missing}")
    if result["schema"] != SCHEMA:
        raise ValueError(f"bench result: schema {result['schema']!r}, expected {SCHEMA!r}")
    datetime.datetime.fromisoformat(result["date"])
    for i, row in enumerate(result["rows"]):
        missing = [k for k in ROW_KEYS if k not in row]
        if missing:
            raise ValueError(f"bench result: row {i} misses {missing}")
        if row["pattern"] not in PATTERNS:
            raise ValueError(f"bench result: row {i} has pattern {row['pattern']!r}")
        if row["error"] is None and row["kind"] != "copy" and not (row["ms"] and row["ms"] > 0):
            raise ValueError(f"bench result: row {i} has neither a time nor an error")


def _fmt(value, spec) -> str:
    return "-" if value is None else format(value, spec)


def format_table(result: dict) -> str:
    header = ("pattern", "algorithm / peer", "dtype", "op", "size", "ms", "Gelem/s", "x copy", "x ref", "note")
    lines = []
    for r in result["rows"]:
        notes = []
        if r["kind"] == "copy" and r["copy_gbytes_per_s"]:
            notes.append(f"{r['copy_gbytes_per_s']:.0f} GB/s")
        if r["in_l2"]:
            notes.append("L2")
        if r["device"] == "cpu":
            notes.append("CPU")
        if r["fast"]:
            notes.append("fast")
        if r["check"] == "MISMATCH":
            notes.append("WRONG RESULT")
        if r["reps"] and r["reps"] < result["settings"]["reps"]:
            notes.append(f"{r['reps']} reps")
        if r["note"]:
            notes.append(r["note"])
        if r["error"]:
            notes.append("ERROR " + r["error"])
        lines.append((r["pattern"], r["name"], r["dtype"], r["op"], r["size_label"], _fmt(r["ms"], ".4f"),
                      _fmt(r["gelem_per_s"], ".2f"), _fmt(r["x_copy"], ".2f"), _fmt(r["x_ref"], ".2f"),
                      ", ".join(notes)))
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines)]
    right = {5, 6, 7, 8}

    def fmt(cols):
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cols, widths))).rstrip()
    out = [fmt(header), fmt(["-" * w for w in widths])] + [fmt(line) for line in lines]
    if result["skipped"]:
        out.append("")
        out.append("skipped:")
        groups: dict = {}
        for s in result["skipped"]:
            groups.setdefault((s["pattern"], s["name"], s["dtype"], s["op"], s["reason"]), []).append(s["size_label"])
        for (pattern, name, dtype, op, reason), sizes in groups.items():
            out.append(f"  {pattern} {name} {dtype} {op} at {', '.join(sizes)}: {reason}")
    small = result.get("small_calls")
    if small:
        out.append("")
        if "error" in small:
            out.append(f"small calls: ERROR {small['error']}")
        else:
            out.append(f"small calls (2^10 int32, per call with sync): pyscan.scan {small['pyscan_us']:.1f} us "
                       f"({small['algorithm']}), pycuda InclusiveScanKernel {small['pycuda_us']:.1f} us: "
                       f"{small['ratio']:.2f}x (target <= 2x)")
    if result["targets"]:
        out.append("")
        out.append("targets (issue 6), best pyscan row at the largest size:")
        for t in result["targets"]:
            measured = "-" if t["measured"] is None else f"{t['measured']:.2f}"
            met = {True: "met", False: "NOT met", None: "no data"}[t["met"]]
            goal = f"<= {t['goal']}" if "most" in t["unit"] else f">= {t['goal']}"
            out.append(f"  {t['target']}: {measured} ({t['algorithm'] or '-'} at {t['size_label'] or '-'}), "
                       f"goal {goal}: {met}")
    if result.get("aborted"):
        out.append(f"\nABORTED: {result['aborted']}")
    return "\n".join(out)


def write_json(result: dict, path) -> None:
    validate_result(result)
    with open(path, "w") as f:
        json.dump(result, f, indent=1, allow_nan=False)
        f.write("\n")


def _panels(result):
    panels = []
    for pattern in PATTERNS:
        for dtype, op in CASES[pattern]:
            if any(r["pattern"] == pattern and r["dtype"] == dtype and r["op"] == op for r in result["rows"]):
                panels.append((pattern, dtype, op))
    return panels


def plot(result: dict, path=None):
    """Throughput against size (log-log), one panel per case, the copy's equivalent throughput dashed.
    Draws with the Agg canvas (no display needed); writes a PNG to path if given; returns the Figure."""
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tab20 = colormaps["tab20"]
    # dark colours first, then their light partners; brown, pink and grey are kept for the peers
    algorithm_colors = [tab20(k) for k in (0, 2, 4, 6, 8, 16, 18, 1, 3, 5, 7, 9, 17, 19)]
    peer_colors = {"numpy": "tab:gray", "pycuda": "tab:brown", "cupy": "tab:pink", "book": "black"}
    panels = _panels(result)
    ncols = min(3, max(1, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig = Figure(figsize=(6.2 * ncols, 4.8 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    device = result.get("device", {}).get("name", "?")
    fig.suptitle(f"pyscan bench on {device}, {result['date'][:10]}: throughput against size "
                 "(dashed: a device-to-device copy of the same bytes)")
    for i, (pattern, dtype, op) in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        rows = [r for r in result["rows"] if r["pattern"] == pattern and r["dtype"] == dtype and r["op"] == op]
        in_l2 = [r["size"] for r in rows if r["in_l2"]]
        if in_l2:  # the sizes whose input the L2 cache holds: faster than DRAM allows
            ax.axvspan(min(r["size"] for r in rows), max(in_l2), color="0.5", alpha=0.12, lw=0, label="input fits in L2")
        copies = sorted((r["size"], r["bound_gelem_per_s"]) for r in rows if r["kind"] == "copy" and r["bound_gelem_per_s"])
        if copies:
            ax.plot([c[0] for c in copies], [c[1] for c in copies], "k--", lw=1.5,
                    label="copy" + (" (bytes/s as elements)" if pattern in ("reduce", "histogram") else ""))
        names = []
        for r in rows:
            if r["kind"] != "copy" and r["name"] not in names:
                names.append(r["name"])
        n_algorithms = 0
        for name in names:
            pts = sorted((r["size"], r["gelem_per_s"]) for r in rows
                         if r["name"] == name and r["gelem_per_s"] and r["check"] != "MISMATCH")
            if not pts:
                continue
            sample = next(r for r in rows if r["name"] == name)
            if sample["kind"] == "peer":
                color = peer_colors.get(name.split(".")[0].split(" ")[0], "tab:olive")
                style = dict(ls=":", marker="s" if sample["device"] == "gpu" else "x", lw=1.5, color=color)
            else:
                style = dict(ls="-", marker="o", lw=2.5 if sample["fast"] else 1.2, ms=3,
                             color=algorithm_colors[n_algorithms % len(algorithm_colors)])
                n_algorithms += 1
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name, **style)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        unit = "Gcell/s" if pattern == "life" else "Gelem/s"
        ax.set_xlabel("cells" if pattern == "life" else "elements")
        ax.set_ylabel(unit)
        ax.set_title(f"{pattern}: {dtype}" + ("" if op == "-" else f", {op}"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, ncol=2 if len(names) > 8 else 1)
    if path is not None:
        fig.savefig(path, dpi=110)
    return fig


# ----------------------------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        backend = GPUBackend()
    except GPUUnavailableError as exc:
        print(f"python -m pyscan bench: {exc}", file=sys.stderr)
        return 1
    bench = Bench(backend, args)

    def interrupt(signum, frame):
        raise KeyboardInterrupt
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        result = bench.run()
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(format_table(result))
    if args.json:
        write_json(result, args.json)
        print(f"\nwrote {args.json}", file=sys.stderr)
    if args.plot:
        plot(result, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    bad = [r for r in result["rows"] if r["error"] or r["check"] == "MISMATCH"]
    return 1 if bad or result["aborted"] else 0


if __name__ == "__main__":
    sys.exit(main())
