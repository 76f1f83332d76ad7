"""blelloch, blelloch_block, single_pass and decoupled_lookback without a GPU: their step-models in detail and
their kernels' builds (nvcc).  On the GPU: tests/gpu/test_scan_sweeps_gpu.py.

Float bound (add): |out_i - ref_i| <= error_depth(n) * eps * sum_{j<=i} |x_j| with ref in float64 (each
algorithm's error_depth documents the roundings on a path from an input to an output).
"""

import shutil
import subprocess

import numpy as np
import pytest
from dtype_checks import CASES
from sweep_checks import DTYPES, MINE, check, make_input, reference

from pyscan.runtime.loader import KERNEL_ROOT, build_source, signature
from pyscan.scans import SCANS
from pyscan.scans import blelloch as bl
from pyscan.scans import decoupled_lookback as dl
from pyscan.scans import single_pass as sp
from pyscan.types import identity, result_dtype, ufunc

OPERATOR_NAMES = ("add", "max", "min")  # the operators of these tests; every operator x dtype: test_dtypes*.py

# ------------------------------------------------------------------------------------------------- models (CPU)

MODEL_LENGTHS = (0, 1, 2, 3, 31, 32, 33, 1023, 1024, 1025, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192, 8193, 65537)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("op", OPERATOR_NAMES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", MINE)
def test_model_matches_numpy(name, dtype, op, exclusive, rng):
    model, depth = SCANS.get(name).model, SCANS.get(name).error_depth
    for n in MODEL_LENGTHS:
        x = make_input(rng, n, dtype, op)
        before = x.copy()
        check(model(x, op=op, exclusive=exclusive), x, op, exclusive, depth(max(n, 1)), f"{name} n={n}")
        np.testing.assert_array_equal(x, before)  # the input is untouched


@pytest.mark.parametrize("name", MINE)
def test_model_float_bound_at_scale(name, rng):
    """2^20 + 7 float32 elements of one sign (the worst case for cancellation-free growth of the error)."""
    x = rng.random(2**20 + 7).astype(np.float32)
    depth = SCANS.get(name).error_depth
    for exclusive in (False, True):
        check(SCANS.get(name).model(x, exclusive=exclusive), x, "add", exclusive, depth(x.size), name)


def test_decoupled_model_is_serial_schedule_exactly():
    """For integers the model equals np.cumsum across many tiles; for floats the serial schedule's tile prefixes
    are the left-to-right accumulation of the tile aggregates (P[t] = P[t-1] + A[t])."""
    x = np.ones(3 * dl.tile_size(np.float32) + 5, np.float32)  # exact: every partial sum < 2^24
    np.testing.assert_array_equal(dl.decoupled_lookback_model(x), np.arange(1, x.size + 1, dtype=np.float32))


@pytest.mark.parametrize("name", ["blelloch", "blelloch_block"])
@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_blelloch_steps(name, op, rng):
    """2 log2 N + 3 steps of N padded values; the up-sweep leaves the total at the root; the clear step puts the
    identity there; every edge is a combine op(old[src], old[dst]) and the down-sweep also moves old[r] to l;
    the last step is the padded result."""
    f, model = ufunc(op), SCANS.get(name).model
    for n in (1, 2, 3, 13, 16, 100, 1000, 2048):
        for exclusive in (False, True):
            x = make_input(rng, n, np.int64, op)
            result, steps = model(x, op=op, exclusive=exclusive, return_steps=True)
            N = 1 << max(int(n - 1).bit_length(), 1 if name == "blelloch_block" else 0)
            L = N.bit_length() - 1
            e = identity(op, x.dtype)
            assert len(steps) == bl.step_count(N) == 2 * L + 3
            assert all(s.values.shape == (N,) and s.values.dtype == x.dtype for s in steps)
            padded = np.full(N, e, x.dtype)
            padded[:n] = x
            np.testing.assert_array_equal(steps[0].values, padded)
            assert steps[L].values[-1] == f.reduce(padded)
            assert steps[L + 1].values[-1] == e and steps[L + 1].edges == []
            for k, (prev, step) in enumerate(zip(steps, steps[1:]), start=1):
                src = np.array([s for s, _ in step.edges], dtype=int)
                dst = np.array([d for _, d in step.edges], dtype=int)
                np.testing.assert_array_equal(step.values[dst], f(prev.values[src], prev.values[dst]))
                if L + 2 <= k <= 2 * L + 1:  # down-sweep: l = r - s gets old[r]; nothing else changes
                    np.testing.assert_array_equal(step.values[src], prev.values[dst])
                    changed = np.zeros(N, bool)
                    changed[src] = changed[dst] = True
                    np.testing.assert_array_equal(step.values[~changed], prev.values[~changed])
                elif 1 <= k <= L:
                    assert len(step.edges) == N >> k
            expected = reference(padded, op, exclusive)  # blelloch_block's store computes every position
            if name == "blelloch":  # its store writes out[:n]; the trace row holds the identity past n
                expected[n:] = e
            np.testing.assert_array_equal(steps[-1].values, expected)
            np.testing.assert_array_equal(result, expected[:n])


def test_blelloch_block_steps_equal_blelloch_steps(rng):
    """The shared-memory kernel and the level-by-level one do the same arithmetic on the same padded array."""
    for n in (2, 5, 16, 77, 512):
        x = rng.integers(-9, 9, n).astype(np.int32)
        _, a = SCANS.get("blelloch").model(x, exclusive=True, return_steps=True)
        _, b = SCANS.get("blelloch_block").model(x, exclusive=True, return_steps=True)
        assert [s.label for s in a[1:]] == [s.label for s in b[1:]]
        for s, t in zip(a[:-1], b[:-1]):
            np.testing.assert_array_equal(s.values, t.values)
            assert s.edges == t.edges
        np.testing.assert_array_equal(a[-1].values[:n], b[-1].values[:n])  # the stores differ past n only


@pytest.mark.parametrize("name", ["blelloch", "blelloch_block"])
def test_blelloch_model_counts(name):
    """2(N - 1) combines; active warps of a sweep level at stride s = ceil(N / 2s / 32); clear and exclusive store 0."""
    count = SCANS.get(name).model_count_work
    for k in range(4, 12):
        n = 1 << k
        work = count(n)
        assert work.additions == 2 * (n - 1)
        up = [-(-(n >> (j + 1)) // 32) for j in range(k)]
        assert work.active_warps == up + [0] + up[::-1] + [0]
    with pytest.raises(ValueError, match="power of two"):
        count(100)


def test_blelloch_block_multi_section_model(rng):
    """Beyond one section: the hierarchical scheme; the steps are for one section only."""
    x = rng.integers(-1000, 1000, 3 * bl.BLOCK_SECTION + 17).astype(np.int32)
    np.testing.assert_array_equal(bl.blelloch_block_model(x), np.cumsum(x, dtype=np.int32))
    with pytest.raises(ValueError, match="one section"):
        bl.blelloch_block_model(x, return_steps=True)


@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_single_pass_steps_domino(op, rng):
    """With small sections the domino shows: one step per section >= 1, each combining the previous section's last
    (final) value into every element of the section; exclusive ends with the shift."""
    f = ufunc(op)
    for n, S in ((13, 4), (64, 8), (5, 2), (100, 128)):
        for exclusive in (False, True):
            x = make_input(rng, n, np.int64, op)
            result, steps = sp.single_pass_model(x, op=op, exclusive=exclusive, return_steps=True, section_size=S)
            blocks = -(-n // S)
            log = S.bit_length() - 1
            assert len(steps) == 1 + log + (log - 1) + (blocks - 1) + (1 if exclusive else 0)
            assert sum(s.label.startswith("domino") for s in steps) == blocks - 1
            for prev, step in zip(steps, steps[1:]):
                if step.edges:
                    src = np.array([s for s, _ in step.edges])
                    dst = np.array([d for _, d in step.edges])
                    np.testing.assert_array_equal(step.values[dst], f(prev.values[src], prev.values[dst]))
            np.testing.assert_array_equal(result, reference(x, op, exclusive))
            np.testing.assert_array_equal(steps[-1].values[:n], result)
    with pytest.raises(ValueError, match="power of two"):
        sp.single_pass_model(np.ones(4, np.int32), section_size=3)


def test_decoupled_steps(rng):
    n = 3 * dl.tile_size(np.int32) + 9
    tile, items = dl.tile_size(np.int32, n), dl.items_per_thread(np.int32, n)  # the Config run for n (SMALL here)
    assert dl.config(np.int32, n) is dl.SMALL[4]
    x = rng.integers(-50, 50, n).astype(np.int32)
    for exclusive in (False, True):
        result, steps = dl.decoupled_lookback_model(x, exclusive=exclusive, return_steps=True)
        assert len(steps) == 5 and "load" in steps[0].label
        assert all(s.values.size == -(-n // tile) * tile for s in steps)
        np.testing.assert_array_equal(steps[-1].values[: x.size], result)
        np.testing.assert_array_equal(result, reference(x, "add", exclusive))
        # after the look-back, each thread's last item holds the inclusive scan up to it
        lookback = steps[3].values.reshape(-1, items)[:, -1]
        padded = np.zeros(-(-n // tile) * tile, np.int32)
        padded[: x.size] = x
        np.testing.assert_array_equal(lookback, np.cumsum(padded, dtype=np.int32)[items - 1::items])


@pytest.mark.parametrize("values", [(128, 2, 1), (512, 8, 2)])
def test_decoupled_model_other_geometry(values, monkeypatch, rng):
    """The model follows CONFIG (what PYSCAN_DECOUPLED_CONFIG sets): other tiles, same integer results."""
    threads, vecs, min_blocks = values
    config = dl.Config(threads=threads, vecs=vecs, min_blocks=min_blocks)
    monkeypatch.setitem(dl.CONFIG, 4, config)
    monkeypatch.setitem(dl.CONFIG, 8, config)
    assert dl.tile_size(np.int32) == threads * vecs * 4 and dl.tile_size(np.int64) == threads * vecs * 2
    assert dl.kernel_defines(np.int64, "max", False)["VECS_PER_THREAD"] == vecs
    for dtype in (np.int32, np.int64):
        x = make_input(rng, 5 * dl.tile_size(dtype) + 3, dtype, "add")
        for exclusive in (False, True):
            # the compute model adds in x's dtype: NumPy's int64 scan cut to x's width is the same wrapped bits
            np.testing.assert_array_equal(dl.decoupled_lookback_model(x, exclusive=exclusive),
                                          reference(x, "add", exclusive).astype(dtype))


def test_decoupled_kernel_defaults_are_the_shipped_config():
    """Compiling decoupled_lookback.cu on its own builds the kernel that ships: its #define defaults are CONFIG's."""
    import re

    text = (KERNEL_ROOT / "scan" / "decoupled_lookback.cu").read_text()
    defaults = {name: int(value) for name, value in re.findall(r"#ifndef (\w+)\n#define \1 (\d+)", text)}
    assert set(defaults) == {"BLOCK_THREADS", "VECS_PER_THREAD", "MIN_BLOCKS", "VECTOR_LOADS", "ROWS", "SEGMENTS"}
    # the 1-D scan; ROWS 1 is the axis scan's build of the same loop, SEGMENTS 1 the segmented calls'
    assert defaults["ROWS"] == 0 and defaults["SEGMENTS"] == 0
    for size in (4, 8):
        assert dl.SHIPPED[size].defines() == {k: v for k, v in defaults.items()
                                              if k not in ("VECTOR_LOADS", "ROWS", "SEGMENTS")}
    assert defaults["VECTOR_LOADS"] == 1
    assert dl.CONFIG == dl.SHIPPED or "PYSCAN_DECOUPLED_CONFIG" in __import__("os").environ


def test_decoupled_config_is_keyword_only_and_checked():
    with pytest.raises(TypeError):
        dl.Config(256, 8, 3)
    with pytest.raises(ValueError, match="vecs must be 2, 4 or 8"):
        dl.Config(vecs=3)
    with pytest.raises(ValueError, match="multiple of 32"):
        dl.Config(threads=100)
    parsed = dl.Config.from_json('{"4": {"vecs": 4, "min_blocks": 5}}')
    assert parsed == {4: dl.Config(threads=256, vecs=4, min_blocks=5)}
    with pytest.raises(ValueError, match="unknown Config fields \\['pipeline'\\]"):
        dl.Config.from_json('{"4": {"pipeline": 1}}')
    with pytest.raises(ValueError, match="expected"):
        dl.Config.from_json('[256, 8, 0, 3]')
    with pytest.raises(ValueError, match="element sizes"):
        dl.Config.from_json('{"2": {}}')


def test_decoupled_geometry():
    for dtype in DTYPES:
        c = dl.config(dtype)
        assert dl.items_per_thread(dtype) == c.vecs * 16 // np.dtype(dtype).itemsize
        assert dl.tile_size(dtype) == c.threads * dl.items_per_thread(dtype)
        assert c.threads % 32 == 0 and c.vecs in (2, 4, 8)
    assert dl.status_words(10, 4) == 10
    assert dl.status_words(11, 8) == 44  # an A pair and a P pair of (half, flag) words per tile
    assert SCANS.get("decoupled_lookback").fast
    from pyscan.scans import choose_auto

    assert choose_auto(1 << 20, np.int32, "add") == "decoupled_lookback"


def test_decoupled_small_config_choice():
    """SMALL below SMALL_MAX_TILES of its tiles, except where the large tile covers the array in one tile and the
    small one would need two (no look-back beats a shorter tile); the large Config above."""
    for itemsize, dtype in ((4, np.int32), (8, np.int64)):
        large, small = dl._tile(dl.CONFIG[itemsize], itemsize), dl._tile(dl.SMALL[itemsize], itemsize)
        assert small < large
        assert dl.config(dtype, 1) is dl.SMALL[itemsize] and dl.config(dtype, small) is dl.SMALL[itemsize]
        for n in (small + 1, large):
            assert dl.config(dtype, n) is dl.CONFIG[itemsize], n  # one large tile, two or more small ones
        assert dl.config(dtype, large + 1) is dl.SMALL[itemsize]
        assert dl.config(dtype, dl.SMALL_MAX_TILES * small) is dl.SMALL[itemsize]
        assert dl.config(dtype, dl.SMALL_MAX_TILES * small + 1) is dl.CONFIG[itemsize]
        assert dl.config(dtype) is dl.CONFIG[itemsize]


def test_decoupled_narrow_builds_hold_their_own_width_and_run_four_blocks():
    """A converting build whose x and result are both narrower than the tile's element keeps them at their own
    width in shared memory (the kernel's REGION_VECS), so its 1-D large tile is NARROW's (four blocks per SM); the
    rows build, SMALL tiles and every other build keep CONFIG's policy and the full regions."""
    from pyscan.types import BFLOAT16

    narrowing = {("float16", None): 2, ("int8", None): 4, ("int16", "int16"): 2, (BFLOAT16, None): 2,
                 ("float32", None): 1, ("int32", "int64"): 1, ("bool", "int64"): 1, ("float64", "float32"): 1,
                 ("float16", "float32"): 1, ("uint8", "int64"): 1, ("int64", None): 1}
    for (dtype, result), k in narrowing.items():
        assert dl.region_narrowing(dtype, result) == k, (dtype, result)
        size = dl.element_size(dtype, result)
        large = dl.config(dtype, None, result)
        assert large is (dl.NARROW[size] if k > 1 else dl.CONFIG[size])
        assert dl.config(dtype, None, result, rows=True) is dl.CONFIG[size]
        assert dl.config(dtype, 1 << 24, result) is large and dl.config(dtype, 1, result) is dl.SMALL[size]
        assert dl._tile(large, size) == dl._tile(dl.CONFIG[size], size)  # the small-or-large choice is CONFIG's
    c = dl.CONFIG[4]
    assert c.shared_bytes(True, 2) * 2 == c.shared_bytes(True) == 2 * 8 * (256 + 32) * 16
    assert c.shared_bytes(False, 4) * 4 == c.shared_bytes(False)
    assert dl.NARROW[4].min_blocks == 4 and dl.kernel_defines(np.dtype("float16"), "add")["MIN_BLOCKS"] == 4
    assert dl.kernel_defines(np.dtype("float16"), "add", rows=True)["MIN_BLOCKS"] == dl.CONFIG[4].min_blocks


def test_error_depths_grow():
    for name in MINE:
        depth = SCANS.get(name).error_depth
        assert depth(1) >= 1 and depth(2**31 - 1) >= depth(2**20) >= depth(2**10)
    # the bound stays meaningful for float64 at the largest length
    assert SCANS.get("decoupled_lookback").error_depth(2**31 - 1) * np.finfo(np.float64).eps < 1e-8


def test_section_scan_registered():
    from pyscan.scans.hierarchical import SECTION_SCANS

    s = SECTION_SCANS["blelloch_block"]
    assert (s.file, s.function, s.section_size, s.threads) == (bl.BLOCK_FILE, bl.BLOCK_FUNCTION, 2048, 1024)


# ------------------------------------------------------------------------------------------- kernel builds (nvcc)

def test_plain_signatures_read_by_the_loader():
    """The loader reads prepare() codes off the first declaration: the plain builds need no arg_types."""
    assert signature(build_source("scan/blelloch_block.cu"), "blelloch_block_scan") == "PPPqi"
    assert signature(build_source("scan/single_pass.cu"), "single_pass_scan") == "PPqiPPP"
    assert signature(build_source("scan/decoupled_lookback.cu"), "decoupled_lookback_scan") == "PPqiPPqI"
    assert signature(build_source("scan/blelloch_sweeps.cu"), "blelloch_load") == "PPqq"


NVCC = shutil.which("nvcc")
VARIANTS = [
    ("decoupled_lookback.cu", ["-DELEM_TYPE=double", "-DOP=OP_MIN"]),
    ("decoupled_lookback.cu", ["-DELEM_TYPE=long long", "-DOP=OP_MAX", "-DVECTOR_LOADS=0"]),
    ("decoupled_lookback.cu", ["-DELEM_TYPE=float", "-DBLOCK_THREADS=128", "-DVECS_PER_THREAD=8", "-DMIN_BLOCKS=8"]),
    ("decoupled_lookback.cu", ["-DELEM_TYPE=int", "-DBLOCK_THREADS=512", "-DVECS_PER_THREAD=2", "-DMIN_BLOCKS=1"]),
    ("single_pass.cu", ["-DELEM_TYPE=double", "-DOP=OP_MAX", "-DSECTION_SIZE=64"]),
    ("blelloch_block.cu", ["-DTRACE=1", "-DCOUNT_WORK=1", "-DSECTION_SIZE=16", "-DELEM_TYPE=long long"]),
    ("blelloch_block.cu", ["-DTRACE=1", "-DSECTION_SIZE=2", "-DELEM_TYPE=float", "-DOP=OP_MIN"]),
    ("blelloch_block.cu", ["-DCOUNT_WORK=1"]),
    ("blelloch_sweeps.cu", ["-DCOUNT_WORK=1", "-DELEM_TYPE=double", "-DOP=OP_MAX"]),
]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_kernel_variants_compile(tmp_path):
    procs = []
    for k, (name, flags) in enumerate(VARIANTS):
        cmd = [NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / f"{k}.cubin"), *flags,
               str(KERNEL_ROOT / "scan" / name)]
        procs.append((name, flags, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    failures = [(name, flags, p.communicate()[0]) for name, flags, p in procs if p.wait() != 0]
    assert not failures, failures


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_scan_lab_builds_compile(tmp_path):
    """pyscan_tools/lab/scan_lab.py's diagnostic builds (the kernel's loop, scan_tiles, with the lab's probe) still compile."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("scan_lab", KERNEL_ROOT.parent / "pyscan_tools" / "lab" / "scan_lab.py")
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    procs = []
    for k, (lab_defines, dtype) in enumerate([({"LAB_STATS": 1}, "int32"),
                                              ({"LAB_LOOK_BACK": 0, "LAB_STATS": 0}, "float64")]):
        source = tmp_path / f"lab{k}.cu"
        source.write_text(lab.lab_source({}, lab_defines, dtype))
        cmd = [NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / f"lab{k}.cubin"), str(source)]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    failures = [p.communicate()[0] for p in procs if p.wait() != 0]
    assert not failures, failures


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_bad_section_size_is_a_compile_error(tmp_path):
    cmd = [NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / "x.cubin"), "-DSECTION_SIZE=48",
           str(KERNEL_ROOT / "scan" / "blelloch_block.cu")]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode != 0 and "power of two" in out.stdout + out.stderr


@pytest.mark.parametrize("dtype,op", CASES, ids=str)
def test_decoupled_launch_sizes_its_tile_for_every_dtype(dtype, op, monkeypatch):
    """launch() sizes the tile by element_size() for every dtype and result dtype (1- and 2-byte values compute
    in 32 bits, so their tiles are the 4-byte policy's), on the path that skips the look-up for x's own dtype too."""
    class Planned(Exception):
        pass

    def stop(*key):
        raise Planned

    seen, policy = [], dl._policy
    monkeypatch.setattr(dl, "_policy", lambda itemsize, n: seen.append(itemsize) or policy(itemsize, n))
    monkeypatch.setattr(dl, "_plans", {})
    monkeypatch.setattr(dl, "plan", stop)
    dtype, result = np.dtype(dtype), result_dtype(dtype, op)
    with pytest.raises(Planned):
        dl.launch(0, 0, 100, dtype, op, False, 0, 0, 0, None if result == dtype else result)
    assert seen == [dl.element_size(dtype, result)]
