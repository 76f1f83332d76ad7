"""pyscan's torch custom operators without a GPU: registration, the fake (meta) implementations with symbolic shapes,
the CPU kernels against NumPy, torch.compile(fullgraph=True) and torch.export on CPU, autograd by gradcheck in
float64, and the routing rule of pyscan.scan / pyscan.reduce (pyscan/torch_ops.py).  The CUDA side, graph capture
included, is tests/gpu/test_graphs_gpu.py."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the custom-operator tests need it (CPU torch "
                                            "is enough: .ci/run installs it where the wheel is available)")
if not hasattr(torch.library, "register_fake"):
    pytest.skip("torch < 2.4 has no torch.library.register_fake / register_autograd", allow_module_level=True)

import pyscan  # noqa: E402
from pyscan import torch_ops  # noqa: E402
from pyscan.runtime import arrays  # noqa: E402

OPS = ("add", "mul", "max", "min")


def _numpy_scan(v, op, exclusive, axis=None):
    v = v.reshape(-1) if axis is None else v
    a = 0 if axis is None else axis
    result = np.asarray(pyscan.types.ufunc(op).accumulate(v, axis=a, dtype=pyscan.types.result_dtype(v.dtype, op)))
    if exclusive:
        first = np.full_like(np.take(result, [0], axis=a), pyscan.types.identity(op, result.dtype))
        result = np.concatenate([first, np.take(result, range(result.shape[a] - 1), axis=a)], axis=a)
    return result


# --- registration and fake implementations ---------------------------------------------------------------------

def test_the_operators_are_registered_with_their_schemas():
    assert str(torch.ops.pyscan.scan.default._schema) == (
        "pyscan::scan(Tensor x, SymInt? dim, str op, bool exclusive, ScalarType? dtype) -> Tensor"
    ) or "pyscan::scan(Tensor x, int? dim" in str(torch.ops.pyscan.scan.default._schema)
    assert "pyscan::reduce(Tensor x, int[]? dim, bool keepdim, str op, ScalarType? dtype) -> Tensor" in str(
        torch.ops.pyscan.reduce.default._schema) or "pyscan::reduce(Tensor x, SymInt[]? dim" in str(
        torch.ops.pyscan.reduce.default._schema)


@pytest.mark.parametrize("dtype, op, expected", [
    (torch.int32, "add", torch.int64), (torch.bool, "add", torch.int64), (torch.uint8, "mul", getattr(torch, "uint64", None)),
    (torch.float16, "add", torch.float16), (torch.float32, "max", torch.float32), (torch.int8, "min", torch.int8),
    (torch.bool, "logical_or", torch.bool), (torch.int32, "bitwise_xor", torch.int32),
])
def test_fake_results_have_pyscans_result_dtypes_and_symbolic_shapes(dtype, op, expected):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    if expected is None:
        pytest.skip("this torch has no such dtype")
    mode = FakeTensorMode(shape_env=ShapeEnv())
    x = mode.from_tensor(torch.zeros(6, 5, dtype=dtype),
                         symbolic_context=StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * 2))
    with mode:
        flat = torch.ops.pyscan.scan(x, None, op, False, None)
        along = torch.ops.pyscan.scan(x, 1, op, True, None)
        total = torch.ops.pyscan.reduce(x, None, False, op, None)
        rows = torch.ops.pyscan.reduce(x, [1], True, op, None)
        cols = torch.ops.pyscan.reduce(x, [0], False, op, None)
    assert flat.dtype == along.dtype == total.dtype == rows.dtype == expected
    assert isinstance(flat.shape[0], torch.SymInt)  # dynamic: the length is a symbol, s0 * s1
    assert flat.shape[0] == x.shape[0] * x.shape[1] and along.shape == x.shape
    assert total.shape == () and rows.shape == (x.shape[0], 1) and cols.shape == (x.shape[1],)


@pytest.mark.parametrize("op", OPS)
def test_opcheck_scan_and_reduce(op):
    """torch.library.opcheck: schema, fake implementation, autograd registration and AOT dispatch agree with the
    CPU kernel."""
    x = torch.randn(5, 7, dtype=torch.float64, requires_grad=True)
    for args in ((x, None, op, False, None), (x, 1, op, True, None), (x, 0, op, False, None)):
        torch.library.opcheck(torch.ops.pyscan.scan.default, args)
    for args in ((x, None, False, op, None), (x, [1], True, op, None), (x, [0, 1], False, op, None)):
        torch.library.opcheck(torch.ops.pyscan.reduce.default, args)


def test_unknown_operators_are_refused_naming_the_named_ones():
    with pytest.raises(ValueError, match="named operators"):
        torch.ops.pyscan.scan(torch.ones(3), None, "a*b", False, None)


# --- the CPU kernels and the routing -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS + ("bitwise_or", "logical_and"))
@pytest.mark.parametrize("exclusive", [False, True])
def test_cpu_tensors_scan_with_torch_as_numpy_does(op, exclusive):
    rng = np.random.default_rng(1)
    host = (rng.integers(0, 2, (4, 9)).astype(bool) if op.startswith("logical") else
            rng.integers(-3, 4, (4, 9)).astype(np.int32))
    for axis in (None, 0, 1, -1):
        got = pyscan.scan(torch.from_numpy(host), axis=axis, op=op, exclusive=exclusive)
        expected = _numpy_scan(host, op, exclusive, None if axis is None else axis % 2)
        assert got.dtype == arrays.TORCH._to_torch[expected.dtype]
        np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("op", OPS + ("bitwise_and",))
def test_cpu_tensors_reduce_with_torch_as_numpy_does(op):
    host = np.random.default_rng(2).integers(1, 4, (3, 4, 5)).astype(np.int16)
    ufunc = pyscan.types.ufunc(op)
    for axis, keepdims in ((None, False), (1, False), ((0, 2), True), (-1, True)):
        got = pyscan.reduce(torch.from_numpy(host), axis=axis, keepdims=keepdims, op=op)
        expected = ufunc.reduce(host, axis=axis, keepdims=keepdims, dtype=pyscan.types.result_dtype(host.dtype, op))
        assert tuple(got.shape) == np.shape(expected)
        np.testing.assert_array_equal(got.numpy(), expected)


def test_routing_rule():
    """CPU, requires-grad and traced tensors go through the operators; NumPy and other kinds never ask torch."""
    cpu = torch.ones(3)
    assert arrays.torch_route(cpu, None) is torch_ops
    assert arrays.torch_route(np.ones(3), None) is None
    assert arrays.torch_route(np.ones(3), arrays.NUMPY) is None
    assert torch_ops.routed(torch.ones(3, requires_grad=True))
    assert arrays.kind_of(cpu) is arrays.TORCH
    assert arrays.TORCH.ready(torch.ones(3)) is None  # not CUDA: the slow path, then the operator


def test_fake_and_functional_tensors_are_a_kind_of_their_own():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.empty(8)
        assert arrays.kind_of(fake) is arrays.TORCH_TRACED and arrays.TORCH_TRACED.ready(fake) is None
        assert arrays.torch_route(fake, None) is torch_ops
        assert pyscan.scan(fake).shape == (8,)


def test_eager_only_arguments_are_refused_on_the_routed_path():
    x = torch.ones(4, requires_grad=True)
    with pytest.raises(ValueError, match="initial= runs only eagerly"):
        pyscan.scan(x, initial=1.0)
    with pytest.raises(ValueError, match="map= runs only eagerly"):
        pyscan.reduce(x, map="x*x")
    with pytest.raises(ValueError, match="algorithm= runs only eagerly"):
        pyscan.scan(x, algorithm="blelloch")
    for call in (pyscan.scan, pyscan.reduce):  # segments are not the operator's: never dropped in silence
        with pytest.raises(ValueError, match="offsets= runs only eagerly"):
            call(x, offsets=[0, 1, 4])
        with pytest.raises(ValueError, match="offsets= runs only eagerly"):
            call(torch.ones(4), offsets=[0, 1, 4])  # a CPU tensor
    with pytest.raises(np.exceptions.AxisError):
        pyscan.scan(torch.ones(2, 3), axis=2)


def test_dtype_argument_is_taken_as_numpy_or_torch():
    x = torch.arange(5, dtype=torch.int32)
    assert pyscan.scan(x, dtype=np.int32).dtype == torch.int32
    assert pyscan.reduce(x, dtype=torch.float64).dtype == torch.float64


# --- autograd ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_gradcheck(op, exclusive):
    torch.manual_seed(0)
    x = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    for axis in (None, 0, 1):
        def f(v, a=axis):
            y = pyscan.scan(v, axis=a, op=op, exclusive=exclusive)
            # an exclusive max/min starts with -inf/+inf, where finite differences say nan: checked from the second
            return y.narrow(a or 0, 1, y.shape[a or 0] - 1) if exclusive and op in ("max", "min") else y

        assert torch.autograd.gradcheck(f, (x,))


@pytest.mark.parametrize("op", OPS)
def test_reduce_gradcheck(op):
    torch.manual_seed(1)
    x = torch.randn(3, 4, 2, dtype=torch.float64, requires_grad=True)
    for axis, keepdims in ((None, False), (1, False), ((0, 2), True), (-1, False)):
        assert torch.autograd.gradcheck(lambda v, a=axis, k=keepdims: pyscan.reduce(v, axis=a, keepdims=k, op=op),
                                        (x,))


def _grads(f, x, g):
    v = x.detach().clone().requires_grad_()
    f(v).backward(g)
    return v.grad


@pytest.mark.parametrize("op, reference", [("max", torch.cummax), ("min", torch.cummin)])
def test_scan_max_min_gradient_follows_torch_cummax_indices_with_ties(op, reference):
    x = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, 5.0, 5.0, 0.0], dtype=torch.float64)
    g = torch.arange(1.0, 9.0, dtype=torch.float64)
    np.testing.assert_array_equal(_grads(lambda v: pyscan.scan(v, op=op), x, g),
                                  _grads(lambda v: reference(v, 0).values, x, g))


@pytest.mark.parametrize("op, reference", [("max", torch.amax), ("min", torch.amin)])
def test_reduce_max_min_gradient_shares_ties_as_torch_amax(op, reference):
    x = torch.tensor([[1.0, 4.0, 4.0], [2.0, 2.0, 0.5]], dtype=torch.float64)
    for axis in (None, 1, 0):
        dims = (0, 1) if axis is None else axis
        g = torch.ones_like(reference(x, dims))
        np.testing.assert_allclose(_grads(lambda v, a=axis: pyscan.reduce(v, axis=a, op=op), x, g),
                                   _grads(lambda v, d=dims: reference(v, d), x, g))


def test_mul_gradients_with_zeros_match_torch():
    x = torch.tensor([[2.0, 0.0, 3.0, 0.0], [1.5, -2.0, 0.0, 4.0]], dtype=torch.float64)
    g = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 1.5, 2.0]], dtype=torch.float64)
    np.testing.assert_allclose(_grads(lambda v: pyscan.scan(v, axis=1, op="mul"), x, g),
                               _grads(lambda v: torch.cumprod(v, 1), x, g))
    np.testing.assert_allclose(_grads(lambda v: pyscan.reduce(v, axis=1, op="mul"), x, g[:, 0]),
                               _grads(lambda v: torch.prod(v, 1), x, g[:, 0]))
    np.testing.assert_allclose(_grads(lambda v: pyscan.reduce(v, op="mul"), x, torch.tensor(2.0, dtype=torch.float64)),
                               _grads(lambda v: torch.prod(v), x, torch.tensor(2.0, dtype=torch.float64)))


def test_add_gradient_is_the_reverse_cumulative_sum():
    x = torch.randn(7, dtype=torch.float64)
    g = torch.arange(1.0, 8.0, dtype=torch.float64)
    np.testing.assert_allclose(_grads(lambda v: pyscan.scan(v), x, g), torch.flip(torch.cumsum(torch.flip(g, (0,)), 0),
                                                                                  (0,)))
    shifted = torch.cat([torch.flip(torch.cumsum(torch.flip(g[1:], (0,)), 0), (0,)), torch.zeros(1, dtype=g.dtype)])
    np.testing.assert_allclose(_grads(lambda v: pyscan.scan(v, exclusive=True), x, g), shifted)


def test_the_autograd_kernel_calls_the_backend_kernel_only_for_plain_tensors(monkeypatch):
    """Without grad the operators' Autograd kernel calls the CPU (CUDA) kernel itself; a dispatch mode (the Python key)
    still sees the operator, and a tensor that requires grad still gets its gradient."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Seen(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    calls = []
    monkeypatch.setattr(torch_ops, "_torch_scan", lambda *a: calls.append(a[1:]) or torch.zeros(3, dtype=torch.int64))
    x = torch.tensor([1, 2, 3], dtype=torch.int32)
    torch.ops.pyscan.scan(x, None, "add", False, None)
    assert calls == [(None, "add", False, None)]
    monkeypatch.undo()
    with Seen() as seen:
        y = torch.ops.pyscan.scan(x, None, "add", False, None)
    assert "pyscan.scan.default" in seen.ops and y.tolist() == [1, 3, 6]
    t = torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64, requires_grad=True)
    torch.ops.pyscan.scan(t, 0, "add", False, None).sum().backward()
    assert t.grad.tolist() == [3.0, 2.0, 1.0]
    with torch.no_grad():
        assert not torch.ops.pyscan.reduce(t, None, False, "add", None).requires_grad


# --- torch.compile and torch.export on CPU ---------------------------------------------------------------------------

def test_compile_fullgraph_dynamic_has_no_graph_break():
    torch._dynamo.reset()

    def f(x):
        return pyscan.scan(x) * 2 + pyscan.reduce(x, op="max") - pyscan.scan(x, op="min", exclusive=True)

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=True)
    for n in (5, 17, 300):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), f(x))
    explained = torch._dynamo.explain(f)(torch.randn(9))
    assert explained.graph_break_count == 0 and explained.graph_count == 1


def test_compile_with_autograd_and_axis():
    torch._dynamo.reset()

    def f(x):
        return pyscan.reduce(pyscan.scan(x, axis=1) ** 2, axis=0).sum()

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=True)
    for shape in ((3, 4), (5, 8)):
        x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
        compiled(x).backward()
        expected = _grads(f, x, torch.tensor(1.0, dtype=torch.float64))
        torch.testing.assert_close(x.grad, expected)


def test_export_sees_the_operators():
    class M(torch.nn.Module):
        def forward(self, x):
            return pyscan.scan(x, axis=0, op="add") + pyscan.reduce(x, axis=0, keepdims=True, op="max")

    batch = torch.export.Dim("batch", min=2)
    program = torch.export.export(M(), (torch.randn(4, 3),), dynamic_shapes=({0: batch},))
    targets = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    assert {"pyscan.scan.default", "pyscan.reduce.default"} <= targets
    x = torch.randn(6, 3)
    torch.testing.assert_close(program.module()(x), M()(x))


def test_the_eager_ready_path_of_a_cuda_tensor_reads_it_and_declines_grad(monkeypatch):
    """_Torch.ready on a stand-in CUDA tensor (no CUDA here): read as before; None when it requires grad or while
    compiling."""

    class Stand:
        dtype, requires_grad, is_cuda = torch.float32, False, True
        shape = (4096,)

        def dim(self):
            return 1

        def is_contiguous(self):
            return True

        def get_device(self):
            return 0

        def data_ptr(self):
            return 0x7000

    monkeypatch.setattr(arrays._Torch, "_current", staticmethod(lambda device: 0x33))
    stand = Stand()
    assert arrays.TORCH.ready(stand) == (0x7000, 4096, np.dtype(np.float32), 0, 0x33)
    stand.requires_grad = True
    assert arrays.TORCH.ready(stand) is None
    stand.requires_grad = False
    monkeypatch.setattr(arrays._Torch, "_compiling", staticmethod(lambda: True))
    assert arrays.TORCH.ready(stand) is None


def test_the_operators_cuda_kernel_never_routes_again(monkeypatch):
    x = torch.ones(3, requires_grad=True)
    assert torch_ops.routed(x)
    with torch_ops._Eager():
        assert not torch_ops.routed(x)
    assert torch_ops.routed(x)


def test_torchs_own_functions_give_pyscans_dtypes():  # the CPU tensors' implementation
    x = torch.tensor([[2, 3, 4], [1, 5, 6]], dtype=torch.int16)  # torch's own functions give pyscan's dtypes
    np.testing.assert_array_equal(torch_ops._torch_reduce(x, [1], True, "mul", None).numpy(),
                                  np.prod(x.numpy(), axis=1, keepdims=True, dtype=np.int64))
    np.testing.assert_array_equal(torch_ops._torch_scan(x, 0, "mul", True, None).numpy(),
                                  _numpy_scan(x.numpy(), "mul", True, 0))


@pytest.mark.parametrize("shape,d", [((50,), 0), ((7, 33), 1), ((33, 7), 0), ((4, 5, 6), 1), ((1,), 0), ((3, 1), 1),
                                     ((0, 4), 0)])
@pytest.mark.parametrize("extreme", ["cummax", "cummin"])
def test_running_extreme_gradient_is_scatter_add_without_atomics(shape, d, extreme):
    """The max/min scan's backward sums g over each run of equal running-extreme indices (ties and a NaN
    included) exactly as scatter_add does, in a fixed order."""
    gen = torch.Generator().manual_seed(len(shape) * 10 + d)
    x = torch.randint(0, 5, shape, generator=gen).double()  # many ties
    if x.numel() > 3:
        x.view(-1)[2] = float("nan")
    g = torch.randn(shape, generator=gen, dtype=torch.float64)
    indices = getattr(torch, extreme)(x, d).indices
    expected = torch.zeros_like(g).scatter_add(d, indices, g)
    torch.testing.assert_close(torch_ops._running_extreme_grad(g, indices, d), expected, rtol=0, atol=1e-12)
