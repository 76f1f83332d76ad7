"""How the checker drives each kind of exercise on the GPU, through the project's own drivers where the exercise has
the project's contract (the section scans through pyscan.scans.hierarchical with `file=`, the reductions through
pyscan.reductions.book's launches, the histograms through pyscan.histograms.launch), and through the student's own
host code where the exercise is the host code (hierarchical_scan, blelloch).

    run(exercise, file, case) -> Result(got, guard_written)       file: the student's .cu, or None for the solution
    expected(exercise, case)  -> (expected, tolerance per element or None for exact)
    steps(exercise, file, x)  -> (model Steps, traced values per step) or None where there is no step-model
    timed(exercise, file, n)  -> a function running the kernel once on n elements (for the speed stage)

A Case is (label, inputs): the input arrays and parameters of one run.  Outputs are allocated with GUARD elements
after the end, filled with a bit pattern; a kernel that writes one of them wrote past its output.
"""

from __future__ import annotations

import importlib.util
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pyscan.histograms.reference import COUNT_DTYPE, LETTER_BINS, reference_histogram
from pyscan.reductions.reference import reference as reduce_reference
from pyscan.scans.reference import reference as scan_reference
from pyscan.types import defines as type_defines
from pyscan.types import identity, ufunc

GUARD = 64  # elements after every output the kernel writes
GUARD_BYTE = 0x5A  # their bytes
REPEATS = 8  # runs of one case compared bit for bit (races in global memory the tools do not see)


@dataclass
class Case:
    label: str
    n: int
    dtype: np.dtype
    inputs: dict = field(default_factory=dict)  # "x", "flags", "data", "bins", "letters", "lattice", "iters", ...


@dataclass
class Result:
    got: np.ndarray
    guard_written: np.ndarray  # indices (past the end) of guard elements the kernel changed


def solution_path(exercise) -> str:
    from pyscan.runtime.loader import KERNEL_ROOT

    return str(KERNEL_ROOT / exercise.solution)


def target(exercise, path) -> str | None:
    """The file to run: None for the worked solution itself (then the project's own drivers run it, host code
    included), else the path as a string."""
    return None if Path(path).resolve() == Path(solution_path(exercise)).resolve() else str(path)


# ---------------------------------------------------------------------------------------------------------------
# Sizes and inputs.

PRIMES = (97, 1009, 7919, 65537)


def sizes(exercise, *, quick: bool = False) -> list:
    """The lengths that break hierarchies: 1, 31, 32, 33, block - 1, block, block + 1, three blocks, block^2 +- 1
    (the second level of block sums), primes and the largest the exercise takes; quick: the small ones only."""
    s = exercise.section or 1024
    top = exercise.max_length
    if exercise.kind == "life":
        return []
    candidates = {1, 2, 31, 32, 33, s - 1, s, s + 1, 3 * s, *PRIMES}
    if not quick:
        candidates |= {s * s - 1, s * s, s * s + 1}
        candidates.add(top if top else max(s * s + 1, 1 << 22) + 3)
    elif top:
        candidates.add(top)
    return sorted(n for n in candidates if n >= 1 and (top is None or n <= top) and (not quick or n <= 3 * s + 1))


def hidden_sizes(exercise, seed: int) -> list:
    """Two lengths drawn per check (not in any list a kernel could special-case), within the exercise's range."""
    top = exercise.max_length or 3 * (exercise.section or 1024) * 7
    rng = np.random.default_rng(seed)
    return sorted({int(v) for v in rng.integers(2, top + 1, size=2)})


def _rng(label: str):
    return np.random.default_rng(zlib.crc32(label.encode()))


def make_case(exercise, n: int, dtype, label_extra: str = "") -> Case:
    dtype = np.dtype(dtype)
    label = f"{exercise.name} n={n} {dtype}{label_extra}"
    rng = _rng(label)
    kind = exercise.kind
    if kind == "histogram":
        raise ValueError("histogram cases come from histogram_cases()")
    if dtype.kind == "f":
        x = rng.uniform(-1.0, 1.0, n).astype(dtype)
    elif exercise.op == "max":
        x = rng.integers(-10**6, -1, n).astype(dtype)  # all negative: an identity of 0 shows
    else:
        x = rng.integers(-100, 101, n).astype(dtype)
    inputs = {"x": x}
    if kind == "segmented_scan":
        flags = (rng.random(n) < 0.05).astype(np.int32)
        if n > 40:
            flags[32] = flags[33] = 1  # heads at and after a warp boundary
        inputs["flags"] = flags
    if kind == "map":
        inputs["a"] = dtype.type(3)
    return Case(label, n, dtype, inputs)


def histogram_cases(exercise, *, quick: bool = False) -> list:
    """Byte and letter data: random, one long run, runs of random length; 256, 100 and 7 (letter) bins."""
    cases = []
    lengths = [1, 31, 33, 255, 256, 257, 3 * 256 + 1, 7919] + ([] if quick else [65537, (1 << 22) + 3])
    for n in lengths:
        rng = _rng(f"{exercise.name} {n}")
        data = rng.integers(0, 256, n).astype(np.uint8)
        cases.append(Case(f"{exercise.name} n={n} random bytes, 256 bins", n, np.dtype(np.uint8),
                          {"data": data, "bins": 256, "letters": False}))
        cases.append(Case(f"{exercise.name} n={n} random bytes, 100 bins", n, np.dtype(np.uint8),
                          {"data": data, "bins": 100, "letters": False}))
        runs = np.repeat(rng.integers(0, 256, max(1, n // 50)).astype(np.uint8), 50)[:n]
        runs = np.pad(runs, (0, n - runs.size), constant_values=7)
        cases.append(Case(f"{exercise.name} n={n} runs of 50, 256 bins", n, np.dtype(np.uint8),
                          {"data": runs, "bins": 256, "letters": False}))
        text = rng.choice(np.frombuffer(b"abcdefghijklmnopqrstuvwxyz  .,ABC", np.uint8), n)
        cases.append(Case(f"{exercise.name} n={n} text, 7 letter bins", n, np.dtype(np.uint8),
                          {"data": text, "bins": LETTER_BINS, "letters": True}))
    n = 1 << 16
    cases.append(Case(f"{exercise.name} n={n} one value only", n, np.dtype(np.uint8),
                      {"data": np.full(n, 200, np.uint8), "bins": 256, "letters": False}))
    return cases


LIFE_SHAPES = ((1, 1), (3, 3), (4, 4), (5, 7), (8, 8), (16, 16), (13, 29), (31, 33), (32, 32), (8, 128))


def life_cases(exercise, *, quick: bool = False) -> list:
    cases = []
    for h, w in LIFE_SHAPES[:6] if quick else LIFE_SHAPES:
        for iters in (1, 2, 13):
            rng = _rng(f"{exercise.name} {h}x{w} {iters}")
            lattice = (rng.random((h, w)) < 0.35).astype(np.int32)
            cases.append(Case(f"{exercise.name} {h}x{w}, {iters} generation(s)", h * w, np.dtype(np.int32),
                              {"lattice": lattice, "iters": iters}))
    return cases


def integer_cases(exercise, *, quick=False, seed=0) -> list:
    if exercise.kind == "histogram":
        return histogram_cases(exercise, quick=quick)
    if exercise.kind == "life":
        return life_cases(exercise, quick=quick)
    ns = sizes(exercise, quick=quick)
    cases = [make_case(exercise, n, np.int32) for n in ns]
    if exercise.kind == "map":
        cases.insert(0, make_case(exercise, 10_000, np.int32, " (block=(100,1,1), grid=(100,1,1))"))
    if not quick:
        cases += [make_case(exercise, n, np.int32, " (hidden size)") for n in hidden_sizes(exercise, seed)]
    return cases


def float_cases(exercise, *, quick=False) -> list:
    if not exercise.floats:
        return []
    return [make_case(exercise, n, np.float32) for n in sizes(exercise, quick=quick)]


# ---------------------------------------------------------------------------------------------------------------
# Expected results and tolerances.

def _scan_reference(x, op, exclusive):
    """pyscan's scan reference, in float64 for float input (the bound then covers the kernel's roundings only)."""
    return scan_reference(x.astype(np.float64) if x.dtype.kind == "f" else x, op, exclusive)


def _segmented_reference(x, flags, op):
    f = ufunc(op)
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x
    heads = np.flatnonzero(flags != 0)
    starts = np.unique(np.concatenate([[0], heads]))
    return np.concatenate([f.accumulate(part, dtype=wide.dtype) for part in np.split(wide, starts[1:])])


def _error_depth(exercise, n):
    from pyscan.reductions import REDUCTIONS
    from pyscan.scans import SCANS

    if exercise.kind in ("reduce_tree", "reduce_atomic"):
        return REDUCTIONS.get(exercise.algorithm).error_depth(n)
    if exercise.kind == "segmented_scan":
        return int(exercise.section).bit_length()  # log2(S) Kogge-Stone steps, + 1 to spare
    return SCANS.get(exercise.algorithm).error_depth(n)


def expected(exercise, case):
    """(expected values, tolerance): tolerance None means exact; for floats an array (or scalar) bound h * eps *
    sum of |x| over the inputs an output depends on, h the algorithm's error depth (pyscan's error_depth: the most
    roundings on any input's way to an output; see pyscan/scans/single_section.py)."""
    kind, x = exercise.kind, case.inputs.get("x")
    if kind == "histogram":
        return reference_histogram(case.inputs["data"], case.inputs["bins"], letters=case.inputs["letters"]), None
    if kind == "life":
        from pyscan.life.reference import reference_step

        return reference_step(case.inputs["lattice"], case.inputs["iters"]).astype(np.int32), None
    if kind == "map":
        return (x * case.inputs["a"]).astype(x.dtype), None  # one rounding, NumPy's float32 multiply: exact
    if kind in ("reduce_tree", "reduce_atomic"):
        wide = x.astype(np.float64) if x.dtype.kind == "f" else x
        value = reduce_reference(wide, exercise.op)
        if x.dtype.kind != "f" or exercise.op != "add":
            return np.array([value], x.dtype), None
        bound = _error_depth(exercise, x.size) * np.finfo(x.dtype).eps * np.sum(np.abs(wide))
        return np.array([value]), bound
    if kind == "segmented_scan":
        want = _segmented_reference(x, case.inputs["flags"], exercise.op)
    else:
        want = _scan_reference(x, exercise.op, exercise.exclusive)
    if x.dtype.kind != "f" or exercise.op != "add":
        return want.astype(x.dtype), None
    # the bound of output i covers the inputs it depends on: a running sum of |x| (a generous one for segments)
    bound = _error_depth(exercise, x.size) * np.finfo(x.dtype).eps * np.cumsum(np.abs(x.astype(np.float64)))
    return want, bound


def compare(want, got, tolerance):
    """Boolean array: element right (exact, bit for bit NaN-aware; or within the tolerance)."""
    want, got = np.asarray(want), np.asarray(got)
    if tolerance is None:
        if want.dtype.kind == "f":
            return (want == got) | (np.isnan(want) & np.isnan(got))
        return want == got
    return np.abs(got.astype(np.float64) - want.astype(np.float64)) <= np.asarray(tolerance) + 1e-300


# ---------------------------------------------------------------------------------------------------------------
# Running.

def _guarded(call, shape_or_n, dtype, fill=None):
    """A device buffer of n + GUARD elements: the first n `fill` (or the guard pattern), the rest the guard."""
    n = int(np.prod(shape_or_n))
    host = np.frombuffer(bytes([GUARD_BYTE]) * ((n + GUARD) * np.dtype(dtype).itemsize), dtype=dtype).copy()
    if fill is not None:
        host[:n] = np.asarray(fill, dtype).reshape(-1)
    return call.to_device(host), host[n:].copy()


def _read_guarded(call, buf, n, guard_before, shape=None):
    host = buf.get() if hasattr(buf, "get") else call.to_host(buf)
    got, guard = host[:n], host[n:]
    changed = guard.view(np.uint8).reshape(GUARD, -1) != guard_before.view(np.uint8).reshape(GUARD, -1)
    written = np.flatnonzero(changed.any(axis=1))
    return Result(got.reshape(shape) if shape is not None else got, written)


def load_driver(exercise, file):
    """The student's driver module beside their kernel file (driver_stub's name), imported afresh."""
    path = Path(file).with_name(exercise.driver_stub)
    if not path.is_file():
        raise FileNotFoundError(f"the host code of this exercise, {path.name}, is not beside {Path(file).name} "
                                f"(`python -m pyscan exercise start {exercise.name} DIR` writes a stub of it)")
    spec = importlib.util.spec_from_file_location(f"pyscan_exercise_{exercise.name}_driver", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _student_tools(exercise, file, dtype, call):
    from pyscan.runtime.loader import get_kernel

    macros = type_defines(dtype, exercise.op)
    if exercise.section and exercise.kind == "hierarchical":
        macros["SECTION_SIZE"] = exercise.section

    def kernel(name):
        # the section kernel's optional trailing parameters are a macro the signature reader cannot see (as in
        # pyscan.scans.hierarchical): its prepare() types are given
        arg_types = "PPPqi" if exercise.kind == "hierarchical" and name == exercise.function else None
        return get_kernel(str(file), name, device=call.device, arg_types=arg_types, **macros)

    def empty(count):
        return call.empty((int(count),), dtype)

    return kernel, empty


def run(exercise, file, case, *, snapshot=None) -> Result:
    """Run the student's kernel (file) or the worked solution (file None) on one case."""
    launch, read = prepare(exercise, file, case, snapshot=snapshot)
    launch()
    return read()


def prepare(exercise, file, case, *, snapshot=None) -> tuple:
    """(launch, read): the case's inputs on the device and its guarded output; launch() runs the kernel(s) once on
    them (what the speed stage times), read() copies the output back as a Result."""
    from pyscan.runtime.arrays import Call

    call = Call.tool()
    kind = exercise.kind
    if kind == "histogram":
        return _prepare_histogram(exercise, file, case, call)
    if kind == "life":
        return _prepare_life(exercise, file, case, call)
    x = case.inputs["x"]
    n, dtype = x.size, x.dtype
    x_dev = call.to_device(x)
    if kind in ("reduce_tree", "reduce_atomic"):
        from pyscan.reductions import REDUCTIONS

        out, before = _guarded(call, 1, dtype)
        algorithm = REDUCTIONS.get(exercise.algorithm)

        def launch():  # in x's dtype, the book's one type T (NumPy's int32 sum would be int64: dtype= keeps T)
            algorithm.launch(x_dev, op=exercise.op, call=call, out=out, file=file, dtype=dtype)

        return launch, lambda: _read_guarded(call, out, 1, before)
    out, before = _guarded(call, n, dtype)
    if kind == "section_scan" or (kind == "hierarchical" and file is None):
        from pyscan.scans.hierarchical import hierarchical_scan

        def launch():
            hierarchical_scan(x_dev, out, op=exercise.op, exclusive=exercise.exclusive, call=call,
                              block_scan=exercise.algorithm, file=file or solution_path(exercise))
    elif kind == "blelloch" and file is None:
        from pyscan.scans import SCANS

        driver = SCANS.get("blelloch").driver

        def launch():
            driver(x_dev, out, op=exercise.op, exclusive=exercise.exclusive, call=call)
    elif kind in ("hierarchical", "blelloch"):
        module = load_driver(exercise, file)
        kernel, empty = _student_tools(exercise, file, dtype, call)
        extra = {"snapshot": snapshot} if snapshot is not None else {}

        def launch():
            module.scan(x_dev, out, n, kernel=kernel, empty=empty, stream=call.stream, exclusive=exercise.exclusive,
                        **extra)
    elif kind == "segmented_scan":
        from pyscan.runtime.loader import get_kernel

        fn = get_kernel(file or solution_path(exercise), exercise.function, device=call.device,
                        SECTION_SIZE=exercise.section, **type_defines(dtype, exercise.op))
        flags = call.to_device(case.inputs["flags"])

        def launch():
            fn.prepared_async_call((1, 1, 1), (exercise.section, 1, 1), call.stream, out.gpudata, x_dev.gpudata,
                                   flags.gpudata, np.int64(n))
    elif kind == "map":
        from pyscan.runtime.loader import get_kernel

        fn = get_kernel(file or solution_path(exercise), exercise.function, device=call.device,
                        ELEM_TYPE=type_defines(dtype, "add")["ELEM_TYPE"])
        block = exercise.threads

        def launch():
            fn.prepared_async_call((-(-n // block), 1, 1), (block, 1, 1), call.stream, out.gpudata, x_dev.gpudata,
                                   case.inputs["a"], np.int64(n))
    else:
        raise ValueError(f"{exercise.name}: no runner for kind {kind!r}")
    return launch, lambda: _read_guarded(call, out, n, before)


def _prepare_histogram(exercise, file, case, call):
    from pyscan.histograms import launch, models

    data, bins, letters = case.inputs["data"], case.inputs["bins"], case.inputs["letters"]
    config = getattr(models, f"{exercise.algorithm}_config")
    grid, block = config(data.size, launch.sms(call))
    data_dev = call.to_device(data)
    out, before = _guarded(call, bins, COUNT_DTYPE)

    def run_once():
        launch.run_kernel(file or solution_path(exercise), exercise.function, data_dev, bins, letters, grid, block,
                          call=call, out=out)

    return run_once, lambda: _read_guarded(call, out, bins, before)


def _prepare_life(exercise, file, case, call):
    from pyscan.runtime.loader import get_kernel

    lattice, iters = case.inputs["lattice"], case.inputs["iters"]
    h, w = lattice.shape
    fn = get_kernel(file or solution_path(exercise), exercise.function, device=call.device, ELEM_TYPE="int")
    buf, before = _guarded(call, h * w, np.int32, lattice)

    def launch():
        fn.prepared_async_call((1, 1, 1), (w, h, 1), call.stream, buf.gpudata, np.int32(h), np.int32(w),
                               np.int32(iters))

    return launch, lambda: _read_guarded(call, buf, h * w, before, shape=(h, w))


# ---------------------------------------------------------------------------------------------------------------
# Step by step: the model's steps beside the traced ones.

STEP_SIZES = (16, 1000)  # one section: a small one to draw, a large one to compare


def steps(exercise, file, n: int):
    """(label, model Steps, traced value arrays, elements used) of one section of about n elements (ints), or None
    where the exercise has no step-model (map, histograms, segmented scan)."""
    kind = exercise.kind
    rng = _rng(f"{exercise.name} steps {n}")
    if kind == "life":
        return _life_steps(exercise, file, n, rng)
    if kind in ("map", "histogram", "segmented_scan"):
        return None
    values = -rng.integers(1, 10, n) if exercise.op == "max" else rng.integers(0, 10, n)
    x = values.astype(np.int32)
    if kind in ("reduce_tree", "reduce_atomic"):
        from pyscan.reductions import steps as reduction_steps

        model = reduction_steps.model_steps(exercise.algorithm, x, op=exercise.op)
        traced = reduction_steps.trace(exercise.algorithm, x, op=exercise.op, file=file or solution_path(exercise))
        return "one block", model, traced, x.size
    from pyscan.scans import SCANS

    algorithm = SCANS.get(exercise.algorithm)
    limit = min(algorithm.trace_limit or n, 1024 if exercise.algorithm.startswith(("naive", "kogge")) else 1 << 16)
    x = x[:limit]
    _, model = algorithm.model(x, op=exercise.op, exclusive=exercise.exclusive, return_steps=True)
    if kind == "blelloch" and file is not None:
        traced = _snapshots(exercise, file, x)
    elif kind == "blelloch":
        traced = algorithm.trace(x, op=exercise.op, exclusive=exercise.exclusive)
    else:
        traced = algorithm.trace(x, op=exercise.op, exclusive=exercise.exclusive, file=file or solution_path(exercise))
    return "one section", model, traced, x.size


def _snapshots(exercise, file, x):
    rows = []

    def snapshot(array):
        array_host = array.get() if hasattr(array, "get") else None
        rows.append(np.asarray(array_host))

    run(exercise, file, Case("steps", x.size, x.dtype, {"x": x}), snapshot=snapshot)
    N = 1 << max(0, (x.size - 1).bit_length())
    padded = []
    for i, r in enumerate(rows):  # the last row is the store's `out` (n elements, then its guard): padded as the
        row = np.full(N, identity(exercise.op, x.dtype), x.dtype)  # model's last step is, with the identity
        used = x.size if i == len(rows) - 1 else min(N, r.size)
        row[:used] = r[:used]
        padded.append(row)
    return padded


def _life_steps(exercise, file, n, rng):
    from pyscan.life.reference import reference_step
    from pyscan.scans.steps import Step

    side = 8 if n <= 64 else 32
    lattice = (rng.random((side, side)) < 0.35).astype(np.int32)
    generations = 12
    model = [Step("generation 0", lattice.reshape(-1).copy())]
    traced = [lattice.reshape(-1).copy()]
    for g in range(1, generations + 1):
        model.append(Step(f"generation {g}", reference_step(lattice, g).astype(np.int32).reshape(-1)))
        case = Case("steps", side * side, np.dtype(np.int32), {"lattice": lattice, "iters": g})
        traced.append(run(exercise, file, case).got.reshape(-1))
    return "generation by generation", model, traced, side * side


# ---------------------------------------------------------------------------------------------------------------
# Speed.

SPEED_N = 1 << 24


def speed_n(exercise) -> int:
    return min(SPEED_N, exercise.max_length) if exercise.max_length else SPEED_N
