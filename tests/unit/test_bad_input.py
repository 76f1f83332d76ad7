"""Bad input to every public entry point: a clear TypeError/ValueError that names what was
expected, raised before the GPU is touched, with the input left as it was.

"Before the GPU is touched" is proven, not assumed: the `no_gpu` fixture replaces pyscan's doors to the GPU
(pyscan.runtime.driver's ready() and enter(), and the cuda.core and cuda.bindings modules it calls) with ones that
raise GPUTouched.  A validation error raised before those doors is the only way to pass; an API that validates
after them fails here with GPUTouched naming the place.  On this CPU machine (no pycuda) the same
tests also prove the error is not pyscan.GPUUnavailableError.  The control tests show that valid input does
reach the door, so the fixture does block something.

Accepted, not refused (documented in pyscan.runtime.arrays.check_array): non-contiguous and negative-stride NumPy arrays
are copied to a contiguous array first, so they work; the GPU tests check the answers, and that the input is
untouched.  A GPUArray must be contiguous.

These tests run without a GPU (CI runs them); the few that need a GPUArray (or a correct answer) are in
tests/gpu/test_bad_input_gpu.py.
"""

import contextlib
import functools

import numpy as np
import pytest
from bad_input_checks import SUPPORTED, GPUTouched, assert_untouched, raises_clearly, snapshot

import pyscan

# ------------------------------------------------------------------------------------------------ fixtures
# (the no_gpu fixture, GPUTouched, snapshot, assert_untouched, raises_clearly: tests/helpers/bad_input_checks.py)


class NoCopy(Exception):
    pass


@contextlib.contextmanager
def no_copies(monkeypatch):
    """While in force: NumPy's copying helpers raise NoCopy, and (on Linux) the address space may grow by at most
    256 MiB, so that a length check that comes after a copy fails at once instead of allocating gigabytes."""
    def refuse(*args, **kwargs):
        raise NoCopy("a copy of the input was attempted before its length was checked")

    with monkeypatch.context() as m:
        for attr in ("ascontiguousarray", "require", "copy", "array", "asarray", "asanyarray"):
            m.setattr(np, attr, refuse)
        limits = None
        try:
            import resource

            with open("/proc/self/status") as f:
                vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
            limits = resource.getrlimit(resource.RLIMIT_AS)
            cap = vm + 256 * 2**20
            if limits[0] == resource.RLIM_INFINITY or limits[0] > cap:
                resource.setrlimit(resource.RLIMIT_AS, (cap, limits[1]))
            else:
                limits = None
        except (ImportError, OSError, StopIteration, ValueError):
            limits = None
        try:
            yield
        finally:
            if limits is not None:
                resource.setrlimit(resource.RLIMIT_AS, limits)


# ------------------------------------------------------------------------------- the 1-D numeric entry points

NUMERIC = {
    "scan": lambda x: pyscan.scan(x),
    "scan_exclusive_max": lambda x: pyscan.scan(x, exclusive=True, op="max"),
    "reduce": lambda x: pyscan.reduce(x),
    "reduce_min": lambda x: pyscan.reduce(x, op="min"),
    "scalar_multiply": lambda x: pyscan.scalar_multiply(x, 2),
}

NOT_ARRAYS = [None, [1, 2, 3], (1.0, 2.0), 3, 2.5, np.float32(1.0), np.int32(7), "abc", b"abc", {"x": 1}]


@pytest.mark.parametrize("entry", NUMERIC)
@pytest.mark.parametrize("bad", NOT_ARRAYS, ids=lambda b: type(b).__name__)
def test_numeric_not_an_array(entry, bad, no_gpu):
    raises_clearly(NUMERIC[entry], bad, TypeError, r"numpy\.ndarray|GPUArray")


@pytest.mark.parametrize("entry", ["scalar_multiply"])  # scan and reduce take N-d arrays (tests/unit/test_axis.py)
@pytest.mark.parametrize("shape", [(), (2, 3), (1, 1), (0, 4), (2, 2, 2)], ids=str)
def test_numeric_not_1d(entry, shape, no_gpu):
    x = np.ones(shape, np.float32)
    e = raises_clearly(NUMERIC[entry], x, ValueError, r"1-D")
    assert str(tuple(shape)) in str(e), "the message says the shape that came"


# scan and reduce take every NumPy bool, integer and float dtype but longdouble (pyscan.types.ELEMENT_TYPES);
# scalar_multiply takes int32, int64, float32, float64
NARROW_DTYPES = [np.bool_, np.float16, np.uint8, np.int16, np.uint32, np.uint64]
NEVER_DTYPES = [np.complex64, np.complex128, object, np.longdouble, "U3", "datetime64[s]", "i4,i4"]


@pytest.mark.parametrize("entry, dtype", [(e, d) for d in NEVER_DTYPES for e in NUMERIC] +
                         [("scalar_multiply", d) for d in NARROW_DTYPES], ids=str)
def test_numeric_wrong_dtype(entry, dtype, no_gpu):
    x = np.zeros(5, dtype=dtype)
    e = raises_clearly(NUMERIC[entry], x, TypeError, SUPPORTED)
    assert str(np.dtype(dtype)) in str(e), "the message names the dtype that came"
    if entry != "scalar_multiply" and np.dtype(dtype).kind == "c":
        assert "real" in str(e) and "imag" in str(e), "complex input is told what to do instead"


@pytest.mark.parametrize("entry", [e for e in NUMERIC if e != "scalar_multiply"])
@pytest.mark.parametrize("dtype", NARROW_DTYPES, ids=str)
def test_numeric_narrow_dtypes_pass_validation(entry, dtype, no_gpu):
    """Control: scan and reduce take bool, narrow and unsigned integers and float16 (NumPy's accumulator rule,
    tests/unit/test_dtypes.py): they reach the GPU."""
    x = np.zeros(5, dtype=dtype)
    snap = snapshot(x)
    with pytest.raises(GPUTouched):
        NUMERIC[entry](x)
    assert_untouched(x, snap)


@pytest.mark.parametrize("entry", NUMERIC)
def test_numeric_read_only_and_fortran_inputs_pass_validation(entry, no_gpu):
    """Control: valid input reaches the GPU (GPUTouched): the fixture blocks something real, and read-only or
    sliced arrays are accepted, not refused."""
    base = np.arange(40, dtype=np.float32)
    for x in (base, base[::3], base[::-1], base[5:30:2][::-1], np.asfortranarray(base), base.copy()):
        x.flags.writeable = False
        snap = snapshot(x)
        with pytest.raises(GPUTouched):
            NUMERIC[entry](x)
        assert_untouched(x, snap)


@pytest.mark.skipif(pyscan.gpu_unavailable_reason() is None, reason="a GPU is usable here")
def test_valid_input_without_gpu_says_what_is_missing():
    with pytest.raises(pyscan.GPUUnavailableError, match="cuda.core|pycuda|driver|device"):
        pyscan.scan(np.arange(5, dtype=np.int32))


# ---------------------------------------------------------------------------------------- names and options


def test_scan_unknown_algorithm_lists_valid_ones(no_gpu):
    x = np.arange(8, dtype=np.int32)
    e = raises_clearly(lambda v: pyscan.scan(v, algorithm="kogge_stone_typo"), x, ValueError, "kogge_stone_typo")
    for name in ("auto",) + pyscan.SCAN_ALGORITHMS:
        assert repr(name) in str(e) or name in str(e)


@pytest.mark.parametrize("algorithm", [None, 3, "", "Hierarchical", ["naive"]],
    ids=repr)
def test_scan_bad_algorithm_value(algorithm, no_gpu):
    x = np.arange(8, dtype=np.int32)
    raises_clearly(lambda v: pyscan.scan(v, algorithm=algorithm), x, (TypeError, ValueError), r"algorithm")


def test_reduce_unknown_algorithm_lists_valid_ones(no_gpu):
    x = np.arange(8, dtype=np.int32)
    e = raises_clearly(lambda v: pyscan.reduce(v, algorithm="nope"), x, ValueError, "nope")
    for name in pyscan.REDUCE_ALGORITHMS:
        assert name in str(e)


def test_histogram_unknown_algorithm_lists_valid_ones(no_gpu):
    data = np.arange(8, dtype=np.uint8)
    e = raises_clearly(lambda v: pyscan.byte_histogram(v, algorithm="nope"), data, ValueError, "nope")
    for name in pyscan.HISTOGRAM_ALGORITHMS:
        assert name in str(e)
    e = raises_clearly(lambda v: pyscan.text_histogram(v, algorithm="nope"), "abc", ValueError, "nope")
    for name in pyscan.HISTOGRAM_ALGORITHMS:
        assert name in str(e)


def test_life_unknown_kernel_lists_valid_ones(no_gpu):
    lattice = np.zeros((8, 8), np.uint8)
    for call in (lambda v: pyscan.life.step(v, kernel="nope"), lambda v: pyscan.life.Life(v, kernel="nope")):
        e = raises_clearly(call, lattice, ValueError, "nope")
        for name in pyscan.LIFE_KERNELS:
            assert name in str(e)


@pytest.mark.parametrize("op", ["sum", "ADD", "+", None, 0, "multiply", "prod", "and"], ids=repr)
@pytest.mark.parametrize("entry", ["scan", "reduce"])
def test_unknown_op_lists_valid_ones(entry, op, no_gpu):
    x = np.arange(8, dtype=np.float64)
    call = (lambda v: pyscan.scan(v, op=op)) if entry == "scan" else (lambda v: pyscan.reduce(v, op=op))
    raises_clearly(call, x, (TypeError, ValueError), r"'add'.*'max'.*'min'")


@pytest.mark.parametrize("exclusive", ["yes", 1, None, 0.0], ids=repr)
def test_scan_exclusive_must_be_bool(exclusive, no_gpu):
    raises_clearly(lambda v: pyscan.scan(v, exclusive=exclusive), np.arange(4, dtype=np.int32), TypeError,
                   r"True or False|bool")


# -------------------------------------------------------------------------------------------------- histogram

BAD_BINS = [(0, ValueError), (257, ValueError), (-1, ValueError), (1000, ValueError), (2.5, TypeError),
            (7.0, TypeError), (True, TypeError), (False, TypeError), ("7", TypeError), (None, TypeError),
            (np.float64(7), TypeError)]


@pytest.mark.parametrize("bins, exc", BAD_BINS, ids=lambda v: repr(v))
def test_histogram_bins_out_of_range(bins, exc, no_gpu):
    data = np.arange(100, dtype=np.uint8)
    raises_clearly(lambda v: pyscan.byte_histogram(v, bins), data, exc, r"1.*256")


@pytest.mark.parametrize("bins", [1, 7, 255, 256, np.int64(64), np.uint8(3)], ids=repr)
def test_histogram_good_bins_pass_validation(bins, no_gpu):
    with pytest.raises(GPUTouched):
        pyscan.byte_histogram(np.arange(100, dtype=np.uint8), bins)


@pytest.mark.parametrize("bad, exc, pattern", [
    (None, TypeError, r"uint8|bytes|numpy\.ndarray"),
    ([1, 2, 3], TypeError, r"uint8|bytes|numpy\.ndarray"),
    (5, TypeError, r"uint8|bytes|numpy\.ndarray"),
    ("text", TypeError, r"bytes|uint8|text_histogram"),
    (np.zeros(5, np.int8), TypeError, r"uint8"),
    (np.zeros(5, np.int32), TypeError, r"uint8"),
    (np.zeros(5, np.float32), TypeError, r"uint8"),
    (np.zeros(5, np.bool_), TypeError, r"uint8"),
    (np.zeros((2, 3), np.uint8), ValueError, r"1-D"),
    (np.zeros((), np.uint8), ValueError, r"1-D"),
], ids=lambda v: repr(v)[:30])
def test_histogram_bad_data(bad, exc, pattern, no_gpu):
    raises_clearly(lambda v: pyscan.byte_histogram(v), bad, exc, pattern)


@pytest.mark.parametrize("bad", [None, 5, [104, 105], 2.5, np.zeros(3, np.int32), np.zeros((2, 2), np.uint8)],
                         ids=lambda v: repr(v)[:30])
def test_text_histogram_bad_text(bad, no_gpu):
    raises_clearly(lambda v: pyscan.text_histogram(v), bad, (TypeError, ValueError), r"str|bytes|uint8|1-D|numpy\.ndarray")


@pytest.mark.parametrize("data", [b"hello", bytearray(b"hello"), memoryview(b"hello"),
                                  np.frombuffer(b"hello world", np.uint8)[::2]], ids=lambda v: type(v).__name__)
def test_histogram_byte_inputs_pass_validation(data, no_gpu):
    with pytest.raises(GPUTouched):
        pyscan.byte_histogram(data, 16)


# ------------------------------------------------------------------------------------------------------- life

BAD_LATTICES = [
    (None, TypeError, r"2-D"),
    ([[0, 1], [1, 0]], TypeError, r"2-D"),
    (np.zeros(16, np.uint8), ValueError, r"2-D"),
    (np.zeros((2, 2, 2), np.uint8), ValueError, r"2-D"),
    (np.zeros((4, 4), np.float32), TypeError, r"bool.*uint8.*int32"),
    (np.zeros((4, 4), np.int64), TypeError, r"bool.*uint8.*int32"),
    (np.zeros((4, 4), np.int8), TypeError, r"bool.*uint8.*int32"),
    (np.zeros((0, 4), np.uint8), ValueError, r"row|column|empty|cell"),
    (np.full((4, 4), 2, np.uint8), ValueError, r"0s and 1s|0 and 1|0/1"),
    (np.array([[0, 1], [-1, 0]], np.int32), ValueError, r"0s and 1s|0 and 1|0/1"),
    (np.array([[0, 1], [255, 0]], np.uint8), ValueError, r"0s and 1s|0 and 1|0/1"),
    (np.array([[0, 1], [1, 7]], np.int32)[:, ::-1], ValueError, r"0s and 1s|0 and 1|0/1"),
]


@pytest.mark.parametrize("bad, exc, pattern", BAD_LATTICES, ids=lambda v: repr(v)[:40])
@pytest.mark.parametrize("entry", ["step", "Life"])
def test_life_bad_lattice(entry, bad, exc, pattern, no_gpu):
    call = (lambda v: pyscan.life.step(v)) if entry == "step" else (lambda v: pyscan.life.Life(v))
    raises_clearly(call, bad, exc, pattern)


@pytest.mark.parametrize("generations, exc", [(-1, ValueError), (2.5, TypeError), ("1", TypeError),
                                              (None, TypeError), (True, TypeError), (np.float32(2), TypeError)],
                         ids=repr)
def test_life_bad_generations(generations, exc, no_gpu):
    lattice = np.zeros((8, 8), np.uint8)
    lattice[3, 2:5] = 1
    raises_clearly(lambda v: pyscan.life.step(v, generations), lattice, exc, r"non-negative int|generations")


@pytest.mark.parametrize("kernel", [k for k in pyscan.LIFE_KERNELS
                                    if pyscan.life.LIFE.get(k).max_length is not None])
@pytest.mark.parametrize("shape", [(33, 32), (100, 37), (1, 1025)], ids=str)
def test_life_single_block_kernels_name_their_limit(kernel, shape, no_gpu):
    limit = pyscan.life.LIFE.get(kernel).max_length
    lattice = np.zeros(shape, np.uint8)
    for call in (lambda v: pyscan.life.step(v, kernel=kernel), lambda v: pyscan.life.Life(v, kernel=kernel)):
        e = raises_clearly(call, lattice, ValueError, str(limit))
        for other in pyscan.LIFE_KERNELS:  # the message names the kernels without the limit
            if pyscan.life.LIFE.get(other).max_length is None:
                assert other in str(e)


def test_life_lattices_that_pass_validation(no_gpu):
    """Control: 0/1 lattices of every dtype, sliced, transposed, negative strides, reach the GPU."""
    base = (np.random.default_rng(1).random((12, 10)) < 0.4)
    for lattice in (base, base.astype(np.uint8), base.astype(np.int32), base.T, base[::-1, ::2].astype(np.int32),
                    np.asfortranarray(base.astype(np.uint8))):
        snap = snapshot(lattice)
        with pytest.raises(GPUTouched):
            pyscan.life.step(lattice, 3)
        assert_untouched(lattice, snap)


# ---------------------------------------------------------------------------- lengths past the index type


def _limits():
    limits = {"scan": getattr(pyscan.scans, "MAX_LENGTH", None)}
    limits["reduce"] = getattr(pyscan.reductions, "MAX_LENGTH", None)
    return limits


@pytest.mark.parametrize("entry", ["scan", "reduce"])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
@pytest.mark.parametrize("extra", [1, 2**31 + 5])
def test_length_past_the_index_type_is_refused_before_any_copy(entry, dtype, extra, monkeypatch, no_gpu):
    """A fake array of MAX_LENGTH + extra elements (stride 0 over one element: 8 bytes of memory) is refused
    before it is copied.  While the call runs, NumPy's copy helpers raise NoCopy and the address space is capped,
    so this test never allocates the gigabytes even if the check came too late."""
    limit = _limits()[entry]
    if limit is None:
        pytest.skip(f"pyscan.{entry} declares no MAX_LENGTH (its kernels index with 64-bit ints)")
    tiny = np.zeros(1, dtype=dtype)
    huge = np.lib.stride_tricks.as_strided(tiny, shape=(limit + extra,), strides=(0,), writeable=False)
    # the book's scans keep the limit (the fast one takes any length): ask for one of them
    call = functools.partial(pyscan.scan, algorithm="hierarchical") if entry == "scan" else pyscan.reduce
    with no_copies(monkeypatch), pytest.raises(ValueError) as info:
        call(huge)
    assert str(limit) in str(info.value), "the message names the limit"
    assert str(limit + extra) in str(info.value), "the message says the length that came"
    assert tiny[0] == 0 and huge.strides == (0,)


# ------------------------------------------------------------------------------------------------- the check CLI


def test_check_lists_every_registered_algorithm():
    from pyscan_tools.check.cases import make_cases

    covered = {(c.pattern, c.algorithm) for c in make_cases(quick=True)}
    for pattern, registry in pyscan.REGISTRIES.items():
        for name in registry.names():
            assert (pattern, name) in covered, f"python -m pyscan check has no case for {pattern}/{name}"


def test_check_without_gpu_says_so(capsys):
    from pyscan_tools.check.cli import main

    if pyscan.gpu_unavailable_reason() is None:
        pytest.skip("a GPU is usable here")
    assert main(["--quick"]) == 3
    assert "needs a GPU" in capsys.readouterr().err


@pytest.mark.parametrize("argv, word", [(["--pattern", "sort", "--list"], "sort"),
                                        (["--algorithm", "bogosort", "--list"], "bogosort"),
                                        (["sort", "--list"], "sort")])
def test_check_rejects_unknown_pattern_and_algorithm(argv, word, capsys):
    from pyscan_tools.check.cli import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2 and word in capsys.readouterr().err


def test_sanitizer_summary_parser():
    from pyscan_tools.check.sanitizer import parse_sanitizer_output

    clean = "========= COMPUTE-SANITIZER\nexercise: 10 cases\n========= ERROR SUMMARY: 0 errors\n"
    report = parse_sanitizer_output("memcheck", clean)
    assert report.errors == 0 and report.clean
    dirty = ("========= COMPUTE-SANITIZER\n"
             "========= Invalid __global__ read of size 4 bytes\n"
             "=========     at brent_kung_scan+0x2c0 in /x/kernels/scan/brent_kung.cu:57\n"
             "=========     by thread (5,0,0) in block (0,0,0)\n"
             "========= ERROR SUMMARY: 3 errors\n")
    report = parse_sanitizer_output("memcheck", dirty)
    assert report.errors == 3 and not report.clean
    assert report.kernels == {"brent_kung_scan": 1}
    assert report.first_reports and "Invalid __global__ read" in report.first_reports[0]
    race = ("========= Error: Race reported between Write access at kogge_stone_scan+0x100 in k.cu:10\n"
            "=========     and Read access at kogge_stone_scan+0x120 in k.cu:12 [64 hazards]\n"
            "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
            "========= ERROR SUMMARY: 1 error\n")
    report = parse_sanitizer_output("racecheck", race)
    assert (report.errors, report.hazards, report.hazard_errors, report.hazard_warnings) == (1, 1, 1, 0)
    assert report.kernels["kogge_stone_scan"] == 2
    warn = "========= RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2 warnings)\n========= ERROR SUMMARY: 0 errors\n"
    assert not parse_sanitizer_output("racecheck", warn).clean
    assert parse_sanitizer_output("initcheck", "Target application terminated\n").errors is None
    # racecheck's default analysis report (compute-sanitizer 2025.3) ends with RACECHECK SUMMARY alone
    only_race = "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    report = parse_sanitizer_output("racecheck", only_race)
    assert report.errors == 0 and report.clean
