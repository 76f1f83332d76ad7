"""Reductions on the GPU: every algorithm x dtype x op against NumPy (lengths 1 .. 2^24, random and all-equal
data), the float error bound, bit-equality with the NumPy models where the order is fixed, NaN, alignment, the
counted work of PMPP §10.4, and bad input refused before anything is launched."""

import dataclasses

import numpy as np
import pytest

import pyscan
from pyscan.reductions import REDUCE_ALGORITHMS, REDUCTIONS, count_work, fast, model_count_work, reduce_device
from pyscan.reductions.reference import exact_sum, reference, sum_bound
from pyscan.types import result_dtype

DTYPES = [np.int32, np.int64, np.float32, np.float64]
OPS = ["add", "max", "min"]
LENGTHS = [1, 2, 1023, 1024, 1025, 2**20 + 7, 2**24]
FIXED_ORDER = ("simple", "convergent", "shared_memory", "fast")  # no atomics: the model's float order is the GPU's


def as_numpy(result):
    """A result as NumPy: device input gives device results (a 0-d GPUArray for a reduction, a GPUArray of counts
    for a histogram); NumPy results pass through."""
    if isinstance(result, (np.ndarray, np.generic)):
        return result
    return result.get()[()]


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Compile the builds these tests use once, in parallel (a cold GPU host would otherwise compile ~75 builds one
    by one); every dtype x operator would be many more than these tests run."""
    pyscan.reductions.prewarm(dtypes=DTYPES, ops=("add", "max", "min"))


class Data:
    """One test array on host and device, with its references computed once (the 2^24-element ones are shared by
    all algorithms; a module-level generator with a fixed seed, since the per-test `rng` fixture cannot be)."""

    _cache: dict = {}
    _rng = np.random.default_rng(20261122)

    def __init__(self, dtype, n, kind):
        import pycuda.gpuarray as ga

        dtype = np.dtype(dtype)
        if dtype.kind == "i":
            info = np.iinfo(dtype)
            draw = lambda k: self._rng.integers(info.min, info.max, k, dtype=dtype, endpoint=True)  # noqa: E731
        else:
            draw = lambda k: self._rng.uniform(-1000, 1000, k).astype(dtype)  # noqa: E731
        self.x = draw(n) if kind == "random" else np.full(n, draw(1)[0], dtype)
        self.x_gpu = ga.to_gpu(self.x)
        self.expected = {op: reference(self.x, op) for op in OPS}
        if dtype.kind == "f":
            self.exact = exact_sum(self.x)
            self.unit_bound = sum_bound(self.x, 1) - sum_bound(self.x, 0)  # eps * sum|x|
            self.base_bound = sum_bound(self.x, 0)

    @classmethod
    def get(cls, dtype, n, kind):
        key = (np.dtype(dtype), n, kind)
        if key not in cls._cache:
            cls._cache[key] = cls(dtype, n, kind)
        return cls._cache[key]

    def check(self, name, op, result, depth):
        x = self.x
        want = result_dtype(x.dtype, op)  # NumPy's: np.sum of int32 is int64 (no wrap at 2^31)
        assert isinstance(result, np.generic) and result.dtype == want, (name, type(result), x.dtype, op)
        if x.dtype.kind == "i" or op != "add":
            assert result == self.expected[op], f"{name} {op} n={x.size} {x.dtype}: {result!r} != {self.expected[op]!r}"
        else:
            error, allowance = abs(float(result) - self.exact), depth * self.unit_bound + self.base_bound
            assert error <= allowance, f"{name} add n={x.size} {x.dtype}: error {error} > {allowance} (depth {depth})"


def depth_of(name, x, op):
    if name == "fast":
        return fast.error_depth(x.size, blocks=fast.launch_grid(x, op), dtype=x.dtype)
    return REDUCTIONS.get(name).error_depth(x.size)


@pytest.mark.parametrize("kind", ["random", "equal"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
def test_equals_numpy(name, dtype, kind):
    for n in LENGTHS:
        data = Data.get(dtype, n, kind)
        for op in OPS:
            result = as_numpy(pyscan.reduce(data.x_gpu, algorithm=name, op=op))
            data.check(name, op, result, depth_of(name, data.x_gpu, op))
            if name in FIXED_ORDER and n <= 2**20 + 7 and np.dtype(dtype).kind == "f" and op == "add":
                extra = {"blocks": fast.launch_grid(data.x_gpu, op)} if name == "fast" else {}
                model = REDUCTIONS.get(name).model(data.x, op=op, **extra)
                assert result.tobytes() == model.tobytes(), f"{name} n={n} {dtype}: GPU {result!r} != model {model!r}"


@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
def test_numpy_input_and_auto(name, rng):
    x = rng.uniform(-5, 5, 100_003).astype(np.float64)
    strided = x[::3]  # not contiguous: copied
    for op in OPS:
        result = as_numpy(pyscan.reduce(strided, algorithm=name, op=op))
        depth = depth_of(name, strided, op)
        if op == "add":
            assert abs(float(result) - exact_sum(strided)) <= sum_bound(strided, depth)
        else:
            assert result == reference(strided, op)
    ints = rng.integers(-100, 100, 5000).astype(np.int32)
    assert as_numpy(pyscan.reduce(ints)) == np.sum(ints) == as_numpy(pyscan.reduce(ints, algorithm="fast"))
    assert as_numpy(pyscan.reduce(ints, algorithm=name)).dtype == np.sum(ints).dtype == np.int64


@pytest.mark.parametrize("name", ["simple", "convergent"])
def test_in_place_kernels_leave_the_input_alone(name, rng):
    import pycuda.gpuarray as ga

    x = rng.integers(-1000, 1000, 10_000).astype(np.int64)
    x_gpu = ga.to_gpu(x)
    assert as_numpy(pyscan.reduce(x_gpu, algorithm=name)) == x.sum()
    np.testing.assert_array_equal(x_gpu.get(), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fast_misaligned_views(dtype, rng):
    """GPUArray views that start off a 16-byte boundary: scalar head, vector body, scalar tail."""
    import pycuda.gpuarray as ga

    x = (rng.uniform(-100, 100, 300_011)).astype(dtype)
    x_gpu = ga.to_gpu(x)
    for start in range(5):
        for stop in (x.size, x.size - 1, start + 1, start + 7):
            view, host = x_gpu[start:stop], x[start:stop]
            head = fast.head_of(int(view.gpudata), host.size, dtype)
            assert head == (-start) % fast.vector_width(dtype) or head == host.size
            for op in OPS:
                result = as_numpy(pyscan.reduce(view, algorithm="fast", op=op))
                # the registered model: x's vector width and grid, NumPy's result dtype (int32 add in int64)
                model = REDUCTIONS.get("fast").model(host, op=op, blocks=fast.launch_grid(view, op), head=head)
                assert result.tobytes() == model.tobytes(), (dtype, start, stop, op, result, model)
                if op != "add" or np.dtype(dtype).kind == "i":
                    assert result == reference(host, op)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
def test_nan_propagates(name, dtype, rng):
    """A NaN anywhere gives NaN, as np.max / np.min / np.sum (the atomic algorithms' CAS loop included)."""
    for n, where in [(1, 0), (3000, 0), (3000, 2999), (2**20 + 7, 777_777)]:
        x = rng.uniform(-1, 1, n).astype(dtype)
        x[where] = np.nan
        for op in OPS:
            assert np.isnan(as_numpy(pyscan.reduce(x, algorithm=name, op=op))), (n, where, op)


@pytest.mark.parametrize("name", REDUCE_ALGORITHMS)
def test_extremes(name):
    """Identities must not leak: all elements equal to the dtype's extreme values, and infinities."""
    for dtype in (np.int32, np.int64):
        info = np.iinfo(dtype)
        for value in (info.min, info.max):
            x = np.full(5000, value, dtype)
            for op in OPS:
                assert as_numpy(pyscan.reduce(x, algorithm=name, op=op)) == reference(x, op)
    for dtype in (np.float32, np.float64):
        for value in (-np.inf, np.inf):
            x = np.full(5000, value, dtype)
            for op in OPS:
                assert as_numpy(pyscan.reduce(x, algorithm=name, op=op)) == value


def test_fast_is_reproducible(rng):
    x = rng.uniform(-1, 1, 2**22 + 5).astype(np.float32)
    results = {as_numpy(pyscan.reduce(x, algorithm="fast")).tobytes() for _ in range(5)}
    assert len(results) == 1


def test_reduce_device(rng):
    import pycuda.gpuarray as ga

    x = rng.integers(-10, 10, 100_000).astype(np.int32)
    for name in ("auto",) + REDUCE_ALGORITHMS:
        out = reduce_device(x, algorithm=name)
        assert isinstance(out, ga.GPUArray) and out.shape == (1,) and out.get()[0] == x.sum()
    assert reduce_device(np.zeros(0, np.float32)).get()[0] == 0


# --- counted work (PMPP §10.4) -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 4, 32, 64, 256, 1024, 2048])
@pytest.mark.parametrize("name", ["simple", "convergent"])
def test_counted_work_equals_model(name, n):
    measured = count_work(name, n)
    assert measured == model_count_work(name, n)
    assert measured.additions == n - 1


def test_counted_work_at_256():
    """PMPP §10.4: convergent 255 / 384 as printed; simple 255 / 864, not the book's 736 (see test_reduction.py:
    at stride 32 threads 0, 32, 64, 96 -- one in each of the 4 warps -- are active, so 6 full-width steps)."""
    simple, convergent = count_work("simple", 256), count_work("convergent", 256)
    assert (simple.additions, simple.active_warps, simple.warp_slots) == (255, [4, 4, 4, 4, 4, 4, 2, 1], 864)
    assert (convergent.additions, convergent.active_warps, convergent.warp_slots) == (255, [4, 2, 1, 1, 1, 1, 1, 1], 384)


# --- bad input: refused before anything is launched ---------------------------------------------------------------

@pytest.fixture
def no_launch(monkeypatch):
    """Make any attempt to compile or launch fail loudly, so a validation error must come first."""
    def launched(*args, **kwargs):
        raise AssertionError("something was compiled or launched before the input was checked")

    import pyscan.reductions.book as book

    for module in (book, fast):
        monkeypatch.setattr(module, "get_kernel", launched)
    for algorithm in REDUCTIONS:  # entries are frozen: the registry holds a copy with the failing launch
        monkeypatch.setitem(REDUCTIONS._algorithms, algorithm.name, dataclasses.replace(algorithm, launch=launched))
    yield


def test_bad_gpu_input_before_launch(no_launch):
    import pycuda.gpuarray as ga

    with pytest.raises(TypeError, match="unsupported dtype complex64"):
        as_numpy(pyscan.reduce(ga.empty(10, np.complex64)))
    with pytest.raises(TypeError, match="bitwise_or.*integers and bool.*float32"):
        as_numpy(pyscan.reduce(ga.empty(10, np.float32), algorithm="simple", op="bitwise_or"))
    with pytest.raises(TypeError, match="logical_and.*bool.*int32"):
        as_numpy(pyscan.reduce(ga.empty(10, np.int32), op="logical_and", dtype=np.int32))
    with pytest.raises(ValueError, match="not contiguous"):
        as_numpy(pyscan.reduce(ga.empty(10, np.float32)[::2]))
    for op in ("max", "min"):
        with pytest.raises(ValueError, match="zero-size array"):
            as_numpy(pyscan.reduce(ga.empty(0, np.float32), op=op))
    assert as_numpy(pyscan.reduce(ga.empty(0, np.int64))) == 0
    with pytest.raises(ValueError, match="'auto', 'simple', 'convergent', 'shared_memory', 'segmented', 'coarsened'"):
        as_numpy(pyscan.reduce(ga.empty(10, np.float32), algorithm="tree"))
    with pytest.raises(ValueError, match="'add', 'mul', 'max', 'min'"):
        as_numpy(pyscan.reduce(ga.empty(10, np.float32), op="prod"))
