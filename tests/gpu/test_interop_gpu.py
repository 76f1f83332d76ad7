"""pyscan inside CuPy, PyTorch and Numba programs, on the GPU: every entry point takes each kind of array and gives
the same kind back, on the caller's stream, from any thread.  Each test skips with its reason where the library is
not installed."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import pyscan
from pyscan.histograms import reference_histogram

KINDS = ["numpy", "pycuda", "cupy", "torch", "numba"]


def _library(kind):
    if kind == "pycuda":
        pyscan.pycuda_context()
        import pycuda.gpuarray as ga

        return ga
    if kind == "numba":
        numba_cuda = pytest.importorskip("numba.cuda")
        if not numba_cuda.is_available():
            pytest.skip("numba.cuda sees no GPU")
        return numba_cuda
    return pytest.importorskip(kind) if kind != "numpy" else np


def to_kind(host: np.ndarray, kind: str):
    """host as an array of `kind` on device 0."""
    lib = _library(kind)
    if kind == "numpy":
        return host.copy()
    if kind == "pycuda":
        return lib.to_gpu(host)
    if kind == "cupy":
        return lib.asarray(host)
    if kind == "torch":
        if host.dtype in (np.uint16, np.uint32, np.uint64) and not hasattr(lib, "uint32"):
            pytest.skip("this torch has no unsigned types beyond uint8")
        return lib.from_numpy(host.copy()).cuda()
    return lib.to_device(host)


def to_numpy(x) -> np.ndarray:
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(x)
    module = type(x).__module__.split(".")[0]
    if module == "cupy":
        return x.get()
    if module == "torch":
        return x.cpu().numpy()
    if module == "numba":
        return x.copy_to_host()
    return x.get()


def assert_kind(result, kind):
    module = type(result).__module__.split(".")[0]
    expected = {"numpy": "numpy", "pycuda": "pycuda", "cupy": "cupy", "torch": "torch", "numba": "numba"}[kind]
    assert module == expected, f"{kind} in, {type(result)} out"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [0, 1, 33, 1025, 100_003])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_scan_each_kind(kind, n, dtype, rng):
    host = rng.integers(-50, 50, n).astype(dtype)
    x = to_kind(host, kind)
    result = pyscan.scan(x)
    assert_kind(result, kind)
    assert to_numpy(result).dtype == np.cumsum(host).dtype  # NumPy's: int64 for int32, on every kind
    np.testing.assert_allclose(to_numpy(result), np.cumsum(host), rtol=1e-12)
    np.testing.assert_array_equal(to_numpy(x), host)  # the input is untouched
    exclusive = pyscan.scan(x, exclusive=True, op="max")
    expected = np.maximum.accumulate(np.concatenate([[pyscan.types.identity("max", dtype)], host[:-1]])) if n else host
    np.testing.assert_array_equal(to_numpy(exclusive), expected.astype(dtype))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("op", ["add", "max", "min"])
def test_reduce_each_kind_gives_a_0d_array_of_it(kind, op, rng):
    host = rng.integers(-1000, 1000, 300_007).astype(np.int64)
    result = pyscan.reduce(to_kind(host, kind), op=op)
    expected = {"add": np.sum, "max": np.max, "min": np.min}[op](host)
    if kind == "numpy":
        assert isinstance(result, np.int64)
    else:
        assert_kind(result, kind)
        assert tuple(result.shape) == ()
    assert to_numpy(result) == expected


@pytest.mark.parametrize("kind", KINDS)
def test_histogram_each_kind_counts_on_the_device(kind, rng):
    host = rng.integers(0, 256, 1_000_003).astype(np.uint8)
    counts = pyscan.byte_histogram(to_kind(host, kind), bins=37)
    assert_kind(counts, kind)
    np.testing.assert_array_equal(to_numpy(counts), reference_histogram(host, 37))
    text = np.frombuffer(b"programming massively parallel processors" * 99, np.uint8)
    letters = pyscan.text_histogram(to_kind(text, kind))
    assert_kind(letters, kind)
    np.testing.assert_array_equal(to_numpy(letters), pyscan.text_histogram(bytes(text)))


@pytest.mark.parametrize("kind", KINDS)
def test_scalar_multiply_each_kind(kind, rng):
    host = rng.standard_normal(10_001).astype(np.float32)
    result = pyscan.scalar_multiply(to_kind(host, kind), 3)
    assert_kind(result, kind)
    np.testing.assert_array_equal(to_numpy(result), host * np.float32(3))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int32])
def test_life_each_kind(kind, dtype, rng):
    if kind == "numba" and dtype == np.bool_:
        pytest.skip("Numba device arrays of bool are not exported through the interface")
    host = (rng.random((70, 90)) < 0.3).astype(dtype)
    lattice = to_kind(host, kind)
    result = pyscan.life.step(lattice, 7)
    assert_kind(result, kind)
    np.testing.assert_array_equal(to_numpy(result), pyscan.life.reference_step(host, 7))
    np.testing.assert_array_equal(to_numpy(lattice), host)
    game = pyscan.life.Life(lattice, kernel="tiled").advance(3)
    if kind != "numpy":
        assert_kind(game.lattice, kind if kind != "numpy" else "pycuda")
    np.testing.assert_array_equal(game.get(), pyscan.life.reference_step(host, 3))
    np.testing.assert_array_equal(to_numpy(game.lattice).astype(dtype), pyscan.life.reference_step(host, 3))
    assert game.population == int(pyscan.life.reference_step(host, 3).sum())


def test_device_lattice_of_bad_values_is_refused():
    cupy = pytest.importorskip("cupy")
    with pytest.raises(ValueError, match="0s and 1s"):
        pyscan.life.step(cupy.full((8, 8), 2, dtype=cupy.uint8))


@pytest.mark.parametrize("kind", ["cupy", "torch", "pycuda"])
def test_non_contiguous_views_are_refused_with_the_fix(kind):
    x = to_kind(np.arange(100, dtype=np.float32), kind)
    view = x[::2]
    for call in (pyscan.scan, pyscan.reduce):
        with pytest.raises(ValueError, match="not contiguous"):
            call(view)


@pytest.mark.parametrize("kind", ["cupy", "torch", "pycuda"])
def test_offset_views_are_used_where_they_are(kind, rng):
    host = rng.integers(-9, 9, 10_000).astype(np.int32)
    x = to_kind(host, kind)
    np.testing.assert_array_equal(to_numpy(pyscan.scan(x[3:])), np.cumsum(host[3:], dtype=np.int32))
    assert to_numpy(pyscan.reduce(x[5:-7])) == host[5:-7].sum(dtype=np.int32)


@pytest.mark.parametrize("algorithm", pyscan.SCAN_ALGORITHMS)
def test_out_and_in_place_every_algorithm(algorithm, rng):
    cupy = pytest.importorskip("cupy")
    host = rng.integers(-9, 9, 70_001).astype(np.int64)
    x = cupy.asarray(host)
    out = cupy.empty_like(x)
    assert pyscan.scan(x, algorithm=algorithm, out=out) is out
    np.testing.assert_array_equal(out.get(), np.cumsum(host))
    assert pyscan.scan(x, algorithm=algorithm, out=x) is x
    np.testing.assert_array_equal(x.get(), np.cumsum(host))
    host_out = np.empty(70_001, np.int64)
    assert pyscan.scan(host, algorithm=algorithm, out=host_out) is host_out
    np.testing.assert_array_equal(host_out, np.cumsum(host))


def test_histogram_out():
    torch = pytest.importorskip("torch")
    data = torch.randint(0, 256, (99_999,), dtype=torch.uint8, device="cuda")
    out = torch.empty(256, dtype=torch.uint64, device="cuda")
    assert pyscan.byte_histogram(data, out=out) is out
    np.testing.assert_array_equal(out.cpu().numpy(), reference_histogram(data.cpu().numpy(), 256))


def test_work_queued_on_a_torch_stream_is_seen_without_synchronize():
    """A non-blocking stream made current: a long sleep, then a fill, then pyscan; pyscan must run after the fill."""
    torch = pytest.importorskip("torch")
    n = 1 << 22
    x = torch.zeros(n, dtype=torch.int32, device="cuda")
    stream = torch.cuda.Stream()  # non-blocking with respect to the legacy stream? torch's are created so
    with torch.cuda.stream(stream):
        torch.cuda._sleep(50_000_000)  # ~ tens of ms of GPU time ahead of the fill
        x.fill_(1)
        scanned = pyscan.scan(x)
        total = pyscan.reduce(x)
        counts = pyscan.byte_histogram(x.view(torch.uint8))
    stream.synchronize()
    np.testing.assert_array_equal(scanned.cpu().numpy(), np.arange(1, n + 1, dtype=np.int32))
    assert int(total) == n
    assert int(counts[1].item()) == n and int(counts[0].item()) == 3 * n


def test_explicit_stream_argument_of_each_library(rng):
    torch = pytest.importorskip("torch")
    cupy = pytest.importorskip("cupy")
    host = rng.integers(-9, 9, 1 << 20).astype(np.int32)
    expected = np.cumsum(host, dtype=np.int32)
    t = torch.from_numpy(host).cuda()
    torch.cuda.synchronize()
    for stream in (torch.cuda.Stream(), cupy.cuda.Stream(non_blocking=True)):
        handle = stream.cuda_stream if hasattr(stream, "cuda_stream") else stream.ptr
        for given in (stream, handle):
            result = pyscan.scan(t, stream=given)
            stream.synchronize()
            np.testing.assert_array_equal(result.cpu().numpy(), expected)


def test_several_streams_at_once_many_rounds(rng):
    """Streams scanning 2^24 elements at the same time share no scratch or status: every result right."""
    torch = pytest.importorskip("torch")
    n, rounds = 1 << 24, 6
    streams = [torch.cuda.Stream() for _ in range(4)]
    inputs = [torch.randint(-3, 4, (n,), dtype=torch.int32, device="cuda") for _ in streams]
    expected = [np.cumsum(t.cpu().numpy(), dtype=np.int32) for t in inputs]
    torch.cuda.synchronize()
    for _ in range(rounds):
        results = []
        for stream, t in zip(streams, inputs):
            with torch.cuda.stream(stream):
                results.append(pyscan.scan(t))
        torch.cuda.synchronize()
        for result, want in zip(results, expected):
            np.testing.assert_array_equal(result.cpu().numpy(), want)


def test_thread_pool_of_mixed_calls(rng):
    cupy = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    host = rng.integers(-100, 100, 1 << 18).astype(np.int64)
    data = rng.integers(0, 256, 1 << 18).astype(np.uint8)
    sources = {"numpy": host, "cupy": cupy.asarray(host), "torch": torch.from_numpy(host).cuda()}
    torch.cuda.synchronize()

    def work(i):
        kind = ("numpy", "cupy", "torch")[i % 3]
        what = i % 4
        if what == 0:
            return np.array_equal(to_numpy(pyscan.scan(sources[kind])), np.cumsum(host))
        if what == 1:
            return to_numpy(pyscan.reduce(sources[kind], op="max")) == host.max()
        if what == 2:
            return np.array_equal(pyscan.byte_histogram(data, bins=16), reference_histogram(data, 16))
        lattice = (np.arange(40 * 40).reshape(40, 40) % 3 == 0).astype(np.uint8)
        return np.array_equal(pyscan.life.step(lattice, 2), pyscan.life.reference_step(lattice, 2))

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(64)))
    assert all(results), [i for i, ok in enumerate(results) if not ok]


def test_a_new_thread_needs_no_set_up(rng):
    host = rng.integers(-9, 9, 5000).astype(np.int32)
    out = {}
    thread = threading.Thread(target=lambda: out.update(result=pyscan.scan(host)))
    thread.start()
    thread.join()
    np.testing.assert_array_equal(out["result"], np.cumsum(host, dtype=np.int32))


def test_tensor_on_a_second_device_runs_there(rng):
    torch = pytest.importorskip("torch")
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device: the second-device path needs two")
    host = rng.integers(-9, 9, 300_000).astype(np.int32)
    t = torch.from_numpy(host).to("cuda:1")
    result = pyscan.scan(t)
    assert result.device == t.device
    np.testing.assert_array_equal(result.cpu().numpy(), np.cumsum(host, dtype=np.int32))
    assert int(pyscan.reduce(t).item()) == int(host.sum(dtype=np.int32))


@pytest.mark.parametrize("library", ["torch", "cupy"])
@pytest.mark.parametrize("n", [1, 4097, 100_003, 1 << 20])
@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_default_calls_on_the_library_stream(library, n, dtype, rng):
    """Default calls on a CuPy array or torch tensor under the library's own `with stream:`: right results, single
    tile and look-back alike, on that stream."""
    lib = pytest.importorskip(library)
    host = rng.integers(-9, 9, n).astype(dtype)
    x = to_kind(host, library)
    lib.cuda.synchronize() if library == "torch" else lib.cuda.Device().synchronize()  # x ready for any stream
    stream = lib.cuda.Stream() if library == "torch" else lib.cuda.Stream(non_blocking=True)
    with (lib.cuda.stream(stream) if library == "torch" else stream):
        scanned = pyscan.scan(x)
        excl = pyscan.scan(x, exclusive=True, op="max")
        total = pyscan.reduce(x)
        low = pyscan.reduce(x, op="min")
    stream.synchronize()
    np.testing.assert_array_equal(to_numpy(scanned), np.cumsum(host, dtype=dtype))
    expected = np.concatenate([[np.iinfo(dtype).min if dtype == np.int32 else -np.inf],
                               np.maximum.accumulate(host)[:-1]]).astype(dtype)
    np.testing.assert_array_equal(to_numpy(excl), expected)
    if dtype == np.int32:
        assert to_numpy(total) == host.sum(dtype=dtype)
    else:  # small integers: every partial sum is exact in float64
        assert to_numpy(total) == host.sum()
    assert to_numpy(low) == host.min() and to_numpy(total).shape == ()
    assert_kind(scanned, library)
    assert_kind(total, library)


class _Interface:
    """Any object with __cuda_array_interface__ (here over a CuPy array), as a library pyscan does not know."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__


@pytest.mark.parametrize("kind", ["pycuda", "cupy", "torch", "numba", "interface"])
@pytest.mark.parametrize("n", [1000, 100_003])
def test_the_commonest_call_launches_what_the_general_path_launches(kind, n, monkeypatch, rng):
    """pyscan.scan(x) / pyscan.reduce(x) of a 1-D device array take the auto algorithm's ready() (no begin(), no
    Call); with stream= the same stream they take begin().  Both must launch the same kernels with the same
    geometry and the same non-address arguments, and give the same results."""
    from pyscan.runtime import arrays, driver, loader

    host = rng.integers(-9, 9, n).astype(np.int32)
    x = to_kind(host, "cupy" if kind == "interface" else kind)
    if kind == "interface":
        x = _Interface(x)
    pyscan.scan(x), pyscan.reduce(x)  # the type is seen once: later calls may take ready()
    default = arrays.kind_of(x).default_stream(x, 0)
    launches, begun = [], []
    launch_raw, begin = loader.launch_raw, arrays.begin

    def record(context, function, handle, geometry, letters, *args):  # every launch: the plans' prepared calls
        kept = tuple(a for a, letter in zip(args, letters) if letter not in "PI")  # no addresses, no epoch
        launches.append((function, geometry, handle, kept))
        return launch_raw(context, function, handle, geometry, letters, *args)

    monkeypatch.setattr(loader, "launch_raw", record)
    monkeypatch.setattr(arrays, "begin", lambda *a, **k: begun.append(1) or begin(*a, **k))
    results = {}
    for path, options in (("ready", {}), ("general", {"stream": default})):
        launches.clear(), begun.clear()
        scanned = pyscan.scan(x, **options)
        total = pyscan.reduce(x, **options)
        results[path] = (list(launches), len(begun), to_numpy(scanned), to_numpy(total))
    assert results["ready"][1] == 0 and results["general"][1] == 2
    assert results["ready"][0] == results["general"][0] and len(results["ready"][0]) == 2
    for path in results:
        np.testing.assert_array_equal(results[path][2], np.cumsum(host, dtype=np.int32))
        assert results[path][3] == host.sum(dtype=np.int32)
    assert driver.current_context() in (0, driver.primary(0))


@pytest.mark.parametrize("kind", ["pycuda", "numba", "interface"])
def test_results_made_from_a_template_are_arrays_of_their_own(kind, rng):
    """GPUArray and Numba results copy one template's attributes (their constructors cost several µs): each result
    has its own memory, shape and dtype, right values, and outlives the others and the input."""
    from pyscan.runtime import arrays

    def make(host):
        x = to_kind(host, "cupy" if kind == "interface" else kind)
        return _Interface(x) if kind == "interface" else x

    host = rng.integers(-9, 9, 1000).astype(np.int32)
    x = make(host)
    first, second, third = pyscan.scan(x), pyscan.scan(x, op="max"), pyscan.scan(make(host[:999]))
    del x
    for result in (first, second, third):
        assert type(result).__module__.split(".")[0] == ("numba" if kind == "numba" else "pycuda")
    addresses = {arrays.kind_of(r).view(r)[0] for r in (first, second, third)}
    assert len(addresses) == 3 and 0 not in addresses
    assert tuple(third.shape) == (999,) and np.dtype(third.dtype) == np.int64  # NumPy's rule: int32 sums in int64
    np.testing.assert_array_equal(to_numpy(first), np.cumsum(host))
    del first
    np.testing.assert_array_equal(to_numpy(third), np.cumsum(host[:999]))
    np.testing.assert_array_equal(to_numpy(second), np.maximum.accumulate(host))
