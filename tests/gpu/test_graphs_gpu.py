"""CUDA graphs, torch.compile and autograd on the GPU (docs/runtime.md, "CUDA graphs" and "torch").

Captures under torch.cuda.graph (after warm-up on a side stream, as torch's docs say) and CuPy's
Stream.begin_capture / end_capture, replayed 100 times with new data in the input, every pattern that can be
captured at several sizes; two threads capturing on two streams at once; what cannot be captured raising
CaptureError with the capture still usable; torch.compile(fullgraph=True) with dynamic sizes (and mode
"reduce-overhead", torch's own graphs); gradcheck in float64 on CUDA.  The same logic without a GPU:
tests/unit/test_capture.py and tests/unit/test_torch_ops.py."""

import threading

import numpy as np
import pytest

import pyscan
from pyscan.errors import CaptureError
from pyscan.histograms import reference_histogram

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("torch has no CUDA here", allow_module_level=True)

SIZES = (2**10, 2**13 + 5, 2**16, 2**18 + 3, 2**20)
REPLAYS = 100


def _fill(x, generator):
    """New data, in place (a graph reads its inputs where they were at capture): small integers, so float sums are
    exact and every result can be compared with ==."""
    x.copy_(torch.randint(-4, 5, x.shape, generator=generator, device=x.device).to(x.dtype))


def _capture(fn, *inputs):
    """fn(*inputs) captured as torch's docs say: warm-up calls on a side stream, then torch.cuda.graph; returns
    (graph, output)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(*inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn(*inputs)
    return graph, out


def _replay_and_check(graph, x, out, reference, generator, replays=REPLAYS):
    for _ in range(replays):
        _fill(x, generator)
        graph.replay()
        expected = reference(x)
        assert torch.equal(out, expected), (out, expected)


PATTERNS = {
    "scan add": (lambda x: pyscan.scan(x), lambda x: torch.cumsum(x, 0)),
    "scan add exclusive": (lambda x: pyscan.scan(x, exclusive=True),
                           lambda x: torch.cumsum(x, 0) - x),
    "scan max": (lambda x: pyscan.scan(x, op="max"), lambda x: torch.cummax(x, 0).values),
    "scan min": (lambda x: pyscan.scan(x, op="min"), lambda x: torch.cummin(x, 0).values),
    "reduce add": (lambda x: pyscan.reduce(x), lambda x: torch.sum(x)),
    "reduce max": (lambda x: pyscan.reduce(x, op="max"), lambda x: torch.amax(x)),
    "reduce min": (lambda x: pyscan.reduce(x, op="min"), lambda x: torch.amin(x)),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.int64, torch.float64])
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
def test_torch_graph_replays_with_new_data(pattern, dtype, n):
    fn, reference = PATTERNS[pattern]
    generator = torch.Generator(device="cuda").manual_seed(n)
    x = torch.empty(n, dtype=dtype, device="cuda")
    _fill(x, generator)
    graph, out = _capture(fn, x)
    _replay_and_check(graph, x, out, reference, generator)


@pytest.mark.parametrize("shape, axis", [((64, 4099), 1), ((4099, 64), 0), ((300, 2000), 0), ((8, 8, 5000), -1)])
def test_torch_graph_replays_along_an_axis(shape, axis):
    generator = torch.Generator(device="cuda").manual_seed(7)
    x = torch.empty(shape, dtype=torch.float32, device="cuda")
    _fill(x, generator)

    def fn(v):
        return pyscan.scan(v, axis=axis), pyscan.reduce(v, axis=axis, op="max")

    graph, (scanned, reduced) = _capture(fn, x)
    for _ in range(REPLAYS):
        _fill(x, generator)
        graph.replay()
        assert torch.equal(scanned, torch.cumsum(x, axis)) and torch.equal(reduced, torch.amax(x, axis))


def test_torch_graph_of_many_calls_replays_right():
    """Several kept-state calls in one graph, each with its own status (scan -> reduce -> scan of the result)."""
    generator = torch.Generator(device="cuda").manual_seed(3)
    x = torch.empty(2**20 + 77, dtype=torch.int32, device="cuda")
    _fill(x, generator)

    def fn(v):
        s = pyscan.scan(v)
        return s, pyscan.reduce(s), pyscan.scan(s, op="max")

    graph, (s, total, top) = _capture(fn, x)
    for _ in range(REPLAYS):
        _fill(x, generator)
        graph.replay()
        expected = torch.cumsum(x, 0)
        assert torch.equal(s, expected) and int(total) == int(expected.sum())
        assert torch.equal(top, torch.cummax(expected, 0).values)


def test_eager_calls_between_replays_stay_right():
    """The stream's kept buffer (eager) and the graph's own status never meet: eager calls on the capture's and the
    replay's streams between replays give right results, and so do the replays."""
    generator = torch.Generator(device="cuda").manual_seed(4)
    x = torch.empty(2**19 + 1, dtype=torch.int32, device="cuda")
    _fill(x, generator)
    graph, out = _capture(lambda v: pyscan.scan(v), x)
    for _ in range(20):
        _fill(x, generator)
        graph.replay()
        eager = pyscan.scan(x)
        assert torch.equal(out, torch.cumsum(x, 0)) and torch.equal(eager, out)


def test_histogram_and_life_replay():
    generator = torch.Generator(device="cuda").manual_seed(5)
    data = torch.randint(0, 256, (2**20,), dtype=torch.uint8, device="cuda", generator=generator)
    lattice = torch.rand((96, 130), device="cuda", generator=generator) < 0.3

    def fn(d, cells):
        return pyscan.byte_histogram(d, bins=37), pyscan.histogram(d, 64, range=(0, 256))[0], pyscan.life.step(cells, 3)

    graph, (bytes_hist, hist, life) = _capture(fn, data, lattice)
    for _ in range(REPLAYS):
        data.copy_(torch.randint(0, 256, data.shape, dtype=torch.uint8, device="cuda", generator=generator))
        lattice.copy_(torch.rand(lattice.shape, device="cuda", generator=generator) < 0.3)
        graph.replay()
        host = data.cpu().numpy()
        np.testing.assert_array_equal(bytes_hist.cpu().numpy(), reference_histogram(host, 37))
        np.testing.assert_array_equal(hist.cpu().numpy(), np.histogram(host, 64, range=(0, 256))[0])
        np.testing.assert_array_equal(life.cpu().numpy(), pyscan.life.reference_step(lattice.cpu().numpy(), 3))


@pytest.mark.parametrize("call, says", [
    (lambda d: pyscan.histogram(d.float(), 16), "cannot be captured"),  # its range read from the data
    (lambda d: pyscan.bincount(d), "cannot be captured"),  # its length read from the data
    (lambda d: pyscan.bincount(d, minlength=5000), "cannot be captured"),
    (lambda d: pyscan.scan(np.ones(100, np.int32)), "NumPy"),
    (lambda d: pyscan.life.step(torch.zeros((8, 8), dtype=torch.uint8, device="cuda")), "cannot be captured"),
])
def test_what_cannot_be_captured_says_so_and_leaves_the_capture_valid(call, says):
    data = torch.randint(0, 9, (4096,), dtype=torch.int32, device="cuda")
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        scanned = pyscan.scan(data)  # warm-up
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        scanned = pyscan.scan(data)
        with pytest.raises(CaptureError, match=says):
            call(data)
    data.fill_(2)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(scanned, torch.arange(2, 2 * 4096 + 1, 2, device="cuda"))


def test_a_range_from_the_data_made_whole_refuses_a_capture():
    """histogram(x, bins) with range=None once a first call kept its FreshRange: refused before anything is queued,
    and the capture stays valid."""
    from pyscan.histograms import numpy_histogram as nh

    x = torch.randn(4096, device="cuda")
    pyscan.histogram(x, 17)  # the general path, which keeps the FreshRange
    assert (np.dtype(np.float32), 17, x.get_device()) in nh._fresh
    data = torch.ones(4096, dtype=torch.int32, device="cuda")
    scanned = pyscan.scan(data)  # warm-up
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        scanned = pyscan.scan(data)
        with pytest.raises(CaptureError, match="range=None"):
            pyscan.histogram(x, 17)
    data.fill_(2)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(scanned, torch.arange(2, 2 * 4096 + 1, 2, device="cuda", dtype=torch.int32))


@pytest.mark.parametrize("n", (2**12, 2**20))
def test_two_threads_capture_on_two_streams_at_once(n):
    errors, barrier = [], threading.Barrier(2)

    def work(seed):
        try:
            generator = torch.Generator(device="cuda").manual_seed(seed)
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                x = torch.empty(n, dtype=torch.float32, device="cuda")
                _fill(x, generator)
                for _ in range(3):
                    pyscan.scan(x), pyscan.reduce(x)
                stream.synchronize()
                barrier.wait()
                # torch.cuda.graph() synchronizes the device on entry, which fails while the other thread captures
                # (cudaErrorStreamCaptureUnsupported): begin and end the captures directly, overlapping
                graph = torch.cuda.CUDAGraph()
                graph.capture_begin(capture_error_mode="thread_local")
                try:
                    s, r = pyscan.scan(x), pyscan.reduce(x)
                    barrier.wait()  # both captures are open here
                finally:
                    graph.capture_end()
                barrier.wait()
                for _ in range(REPLAYS):
                    _fill(x, generator)
                    graph.replay()
                    assert torch.equal(s, torch.cumsum(x, 0)) and torch.equal(r, torch.sum(x))
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(seed,)) for seed in (11, 12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@pytest.mark.parametrize("n", (2**10, 2**16 + 1, 2**20))
def test_cupy_capture_replays_with_new_data(n):
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(n)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(rng.integers(-4, 5, n).astype(np.int32))
        scanned = cupy.empty(n, np.int64)
        total = cupy.empty((), np.int64)
        top = cupy.empty(n, np.int32)
        for _ in range(3):  # warm-up: plans built, kernels loaded
            pyscan.scan(x, out=scanned), pyscan.reduce(x, out=total), pyscan.scan(x, op="max", out=top)
        stream.synchronize()
        stream.begin_capture()
        pyscan.scan(x, out=scanned)
        pyscan.reduce(x, out=total)
        pyscan.scan(x, op="max", out=top)
        graph = stream.end_capture()
        for _ in range(REPLAYS):
            host = rng.integers(-4, 5, n).astype(np.int32)
            x.set(host, stream=stream)
            graph.launch(stream=stream)
            stream.synchronize()
            np.testing.assert_array_equal(scanned.get(), np.cumsum(host))
            assert int(total.get()) == int(host.sum())
            np.testing.assert_array_equal(top.get(), np.maximum.accumulate(host))


def test_cupy_capture_allocating_results():
    """Results allocated by CuPy's pool during the capture, scratch from pyscan's pool as graph allocation nodes."""
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(2)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(rng.integers(-4, 5, 2**20).astype(np.int32))
        for _ in range(3):
            pyscan.scan(x)
        stream.synchronize()
        stream.begin_capture()
        y = pyscan.scan(x)
        graph = stream.end_capture()
        for _ in range(REPLAYS):
            host = rng.integers(-4, 5, x.size).astype(np.int32)
            x.set(host, stream=stream)
            graph.launch(stream=stream)
            stream.synchronize()
            np.testing.assert_array_equal(y.get(), np.cumsum(host))


def _node_types(graph) -> list:
    """The node types of a CuPy graph (its cudaGraph_t through cuda.bindings' cuGraphGetNodes)."""
    from cuda.bindings import driver as cu

    handle = cu.CUgraph(graph.graph)
    err, _, count = cu.cuGraphGetNodes(handle, 0)
    assert err == cu.CUresult.CUDA_SUCCESS, err
    err, nodes, count = cu.cuGraphGetNodes(handle, count)
    assert err == cu.CUresult.CUDA_SUCCESS, err
    return [cu.cuGraphNodeGetType(node)[1] for node in nodes[:count]]


def _capture_scan(cupy, stream, x, out, **kwargs):
    """pyscan.scan(x, out=out) captured on a CuPy stream after warm-up calls (plans built, kept memory made)."""
    with stream:
        for _ in range(3):
            pyscan.scan(x, out=out, **kwargs)
        stream.synchronize()
        stream.begin_capture()
        pyscan.scan(x, out=out, **kwargs)
        return stream.end_capture()


@pytest.mark.parametrize("dtype, n", [(np.int32, 2**16 + 1), (np.int32, 2**20), (np.float64, 2**18 + 3)])
def test_a_captured_multi_tile_scan_is_one_kernel_node(dtype, n):
    """The decoupled look-back's status is memory the graph keeps, and its epoch is read and advanced by the kernel
    (EPOCH_ON_DEVICE): no memset node, and every replay right."""
    cupy = pytest.importorskip("cupy")
    from cuda.bindings import driver as cu

    rng = np.random.default_rng(n)
    stream = cupy.cuda.Stream(non_blocking=True)
    x = cupy.asarray(rng.integers(-4, 5, n).astype(dtype))
    out = cupy.empty(n, np.float64 if dtype == np.float64 else np.int64)
    graph = _capture_scan(cupy, stream, x, out)
    assert _node_types(graph) == [cu.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL]
    for _ in range(20):
        host = rng.integers(-4, 5, n).astype(dtype)
        x.set(host, stream=stream)
        graph.launch(stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(out.get(), np.cumsum(host))


def test_the_device_epoch_wraps_with_the_flags_zeroed():
    """At the last epoch (2^30 - 1) the kernel's last block zeroes the status words and starts over at 1: words of
    the wrapped epoch 1 left from long ago must not be read as this replay's (planted here, with wrong values)."""
    cupy = pytest.importorskip("cupy")
    from pyscan.runtime import capture
    from pyscan.scans import decoupled_lookback as dl

    n = 2**16 + 1
    rng = np.random.default_rng(7)
    stream = cupy.cuda.Stream(non_blocking=True)
    x = cupy.asarray(rng.integers(-4, 5, n).astype(np.int32))
    out = cupy.empty(n, np.int32)
    with stream:
        pyscan.scan(x, out=out, dtype=np.int32)  # the plan, and the device's kept memory
    held = capture._kept[x.device.id]
    start = held[1]
    graph = _capture_scan(cupy, stream, x, out, dtype=np.int32)
    tiles = -(-n // dl.tile_size(np.dtype(np.int32), n))
    assert tiles > 1 and held[1] - start >= 8 * (2 + tiles)  # this graph's piece: counter and epoch, count, a word a tile
    memory = cupy.cuda.UnownedMemory(held[0].address + start, 8 * (2 + tiles), held[0])
    words = cupy.ndarray((2 + tiles,), cupy.uint64, cupy.cuda.MemoryPointer(memory, 0))
    with stream:
        words[0] = (dl.EPOCHS - 1) << 32  # the epoch: the counter word's high 32 bits
        words[2:] = (0x7777 << 32) | (1 << 2) | 2  # P of epoch 1, value 0x7777
    for expected_epoch, expected_flags in ((1, 0), (2, None)):
        host = rng.integers(-4, 5, n).astype(np.int32)
        x.set(host, stream=stream)
        graph.launch(stream=stream)
        stream.synchronize()
        np.testing.assert_array_equal(out.get(), np.cumsum(host, dtype=np.int32))
        kept_words = words.get()
        assert int(kept_words[0]) == expected_epoch << 32 and int(kept_words[1]) == 0  # the counters back to 0
        if expected_flags is not None:
            assert (kept_words[2:] == expected_flags).all()  # zeroed by the wrap


def test_torch_reduction_results_are_made_like_a_template_of_pyscans_memory(monkeypatch):
    """The ready path's 0-d torch results are torch.empty_like(a kept 0-d tensor): fresh memory from torch's allocator
    on each call; the template over pyscan's memory, not torch's, and never made during a capture (the first call
    captured takes new_empty, and the replays stay right)."""
    from pyscan.runtime import arrays

    generator = torch.Generator(device="cuda").manual_seed(5)
    x = torch.empty(2**16 + 3, dtype=torch.float32, device="cuda")
    _fill(x, generator)
    pyscan.reduce(x), pyscan.reduce(x, op="max")  # the plans made (outside the capture)
    monkeypatch.setattr(arrays.TORCH, "_zero_d", {})
    graph = torch.cuda.CUDAGraph()
    torch.cuda.synchronize()
    with torch.cuda.graph(graph):  # no warm-up: the template would be made here, and is not
        out = pyscan.reduce(x)
    assert arrays.TORCH._zero_d == {}
    _replay_and_check(graph, x, out, lambda x: torch.sum(x), generator, replays=5)
    allocated = torch.cuda.memory_allocated()
    a, b = pyscan.reduce(x), pyscan.reduce(x, op="max")  # the template made here
    torch.cuda.set_sync_debug_mode("error")  # then used, and nothing waits for the GPU (a tensor's truth, say)
    try:
        a, b = pyscan.reduce(x), pyscan.reduce(x, op="max")
    finally:
        torch.cuda.set_sync_debug_mode(0)
    like = arrays.TORCH._zero_d[(np.dtype(np.float32), x.get_device())]
    assert torch.cuda.memory_allocated() - allocated == 2 * 512  # the two results only: torch's smallest block each
    assert len({a.data_ptr(), b.data_ptr(), like.data_ptr()}) == 3
    assert a.shape == () and a.dtype == torch.float32 and a.device == x.device
    assert a.item() == torch.sum(x).item() and b.item() == torch.amax(x).item()


# --- torch.compile ---------------------------------------------------------------------------------------------------

def _f(x):
    return pyscan.scan(x) * 2 + pyscan.reduce(x, op="max") - pyscan.scan(x, op="min", exclusive=True)


def _f_torch(x):
    exclusive_min = torch.cat([torch.full_like(x[:1], float("inf")), torch.cummin(x, 0).values[:-1]])
    return torch.cumsum(x, 0) * 2 + torch.amax(x) - exclusive_min


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_compile_fullgraph_dynamic_sizes(mode):
    torch._dynamo.reset()
    compiled = torch.compile(_f, fullgraph=True, dynamic=True, mode=mode)
    for n in (1000, 2**13 + 5, 2**16, 2**20, 2**20 + 3):
        for _ in range(3):
            x = torch.randint(-4, 5, (n,), device="cuda").float()
            torch.testing.assert_close(compiled(x), _f_torch(x))
    explained = torch._dynamo.explain(_f)(torch.randn(4096, device="cuda"))
    assert explained.graph_break_count == 0


def test_the_eager_path_does_not_go_through_the_operator(monkeypatch):
    from pyscan import torch_ops

    monkeypatch.setattr(torch_ops, "scan", lambda *a, **k: (_ for _ in ()).throw(AssertionError("routed")))
    x = torch.arange(5000, dtype=torch.int32, device="cuda")
    assert torch.equal(pyscan.scan(x), torch.cumsum(x, 0))


def test_export_on_cuda():
    class M(torch.nn.Module):
        def forward(self, x):
            return pyscan.scan(x, axis=1) + pyscan.reduce(x, axis=1, keepdims=True)

    program = torch.export.export(M(), (torch.randn(4, 300, device="cuda"),))
    x = torch.randn(4, 300, device="cuda")
    torch.testing.assert_close(program.module()(x), M()(x))


# --- autograd ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("n", [7, 9000])
def test_scan_gradcheck_cuda(op, exclusive, n):
    torch.manual_seed(n)
    x = torch.randn(n, dtype=torch.float64, device="cuda", requires_grad=True)
    if op == "mul":
        x = (torch.rand(n, dtype=torch.float64, device="cuda") * 0.2 + 0.9).requires_grad_()

    def f(v):
        y = pyscan.scan(v, op=op, exclusive=exclusive)
        return y[1:] if exclusive and op in ("max", "min") else y

    fast = n > 100  # the full Jacobian of 9000 elements is slow: fast mode projects it
    # The backward of add and mul is a float64 scan by decoupled look-back, which is not bitwise the same from run to
    # run (how far a tile looks back changes the association of its prefix; README, "floating point, run to run");
    # so is max's and min's, whose run sums are differences of torch.cumsum in float64 (CUB's decoupled look-back:
    # one whole-suite run saw it differ between two backwards at n = 9000).  Two runs of n sums of at most n terms
    # of size <= 1 differ by at most 2 * n * eps * n.
    tolerance = 2 * n * n * np.finfo(np.float64).eps
    assert torch.autograd.gradcheck(f, (x,), fast_mode=fast, nondet_tol=tolerance)


@pytest.mark.parametrize("op", ["add", "mul", "max", "min"])
def test_reduce_and_axis_gradcheck_cuda(op):
    torch.manual_seed(1)
    x = (torch.rand(6, 40, dtype=torch.float64, device="cuda") + 0.5).requires_grad_()
    for axis, keepdims in ((None, False), (1, True), (0, False)):
        assert torch.autograd.gradcheck(lambda v, a=axis, k=keepdims: pyscan.reduce(v, axis=a, keepdims=k, op=op),
                                        (x,))
    assert torch.autograd.gradcheck(lambda v: pyscan.scan(v, axis=1, op=op), (x,))


def test_gradients_match_torchs_on_cuda():
    x = torch.randn(3, 5000, dtype=torch.float32, device="cuda")
    g = torch.randn(3, 5000, dtype=torch.float32, device="cuda")
    for ours, theirs in ((lambda v: pyscan.scan(v, axis=1), lambda v: torch.cumsum(v, 1)),
                         (lambda v: pyscan.scan(v, axis=1, op="max"), lambda v: torch.cummax(v, 1).values)):
        a = x.clone().requires_grad_()
        b = x.clone().requires_grad_()
        ours(a).backward(g)
        theirs(b).backward(g)
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-3)


def test_eager_only_arguments_on_a_tensor_that_requires_grad():
    w = torch.arange(1.0, 6.0, device="cuda", requires_grad=True)
    with torch.no_grad():  # outside autograd: the eager path, detached
        assert torch.equal(pyscan.scan(w, initial=1.0), torch.cumsum(w, 0) + 1)
    with pytest.raises(ValueError, match="initial= runs only eagerly"):
        pyscan.scan(w, initial=1.0)
    assert torch.equal(pyscan.scan(w.detach(), initial=1.0), torch.cumsum(w.detach(), 0) + 1)
