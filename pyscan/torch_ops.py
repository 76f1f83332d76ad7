"""pyscan's scan and reduce as torch custom operators: torch.compile(fullgraph=True), torch.export and autograd.

    torch.ops.pyscan.scan(x, dim, op, exclusive, dtype)        # dim: int or None (the flattened array)
    torch.ops.pyscan.reduce(x, dim, keepdim, op, dtype)        # dim: list of ints or None (every element)

Both are torch.library operators (a Library's schemas, CUDA and CPU kernels, `register_fake` implementations and an
Autograd kernel with the backward formulas: what torch.library.custom_op makes, with fewer Python layers a call), so
torch.compile and torch.export trace them as single opaque nodes with symbolic shapes, and autograd differentiates
them.  The public `pyscan.scan` / `pyscan.reduce` route a torch tensor here only where it is needed: a tensor that
requires grad, a CPU tensor, a fake or functional tensor (torch.export, AOT tracing), or a call traced by
torch.compile; a CUDA tensor that does none of this takes the plain eager path, which costs one `x.requires_grad` and
one `torch.compiler.is_compiling()` more than before (docs/runtime.md, "torch").  This module is imported with torch:
at `import pyscan` when torch is already imported, else right after torch's own import (pyscan/__init__.py), so
before anything can trace a call; pyscan imports without torch.

The CUDA kernels are pyscan's (the eager path on a contiguous tensor).  The CPU kernels are torch's own functions
(torch.cumsum / cumprod / cummax / cummin, torch.sum / prod / amax / amin, NumPy's ufuncs for the bitwise and
logical operators) with pyscan's result dtypes: what CPU tracing, export, the fake-tensor checks and gradcheck run
on a machine without a GPU.  So `pyscan.scan(cpu_tensor)` computes on the CPU with torch, where NumPy input is copied
to the GPU.

Autograd (floating x): add (an inclusive scan's gradient is the reverse cumulative sum of the upstream gradient;
exclusive: the same, shifted one place), max and min (the scan's gradient goes to the position of the running
extreme, torch.cummax's / cummin's indices; the reduction's is shared evenly among the tied extremes, as torch.amax),
mul (torch.cumprod's backward; the reduction's product of the others, zeros included).  Other operators have no
gradient (RuntimeError in backward).

The operators take the named operators, dim/axis, exclusive, keepdim and dtype; C-expression operators, identity=,
initial=, map=, out=, stream= and named algorithms are eager-only (a ValueError says so when such a call is routed
here).
"""

from __future__ import annotations

import threading
from typing import List, Optional

import numpy as np
import torch
from torch import Tensor

from . import reductions as _reductions
from . import scans as _scans
from .runtime import arrays
from .types import OPERATOR_NAMES, identity, result_dtype, ufunc

DIFFERENTIABLE = ("add", "mul", "max", "min")
_EAGER_ONLY = ("out", "stream", "identity", "initial", "map")

if not arrays.TORCH._to_numpy:
    arrays.TORCH._dtypes()
_TO_NUMPY, _TO_TORCH = arrays.TORCH._to_numpy, arrays.TORCH._to_torch


def _result(x_dtype: torch.dtype, op: str, dtype: Optional[torch.dtype]) -> torch.dtype:
    """pyscan's (NumPy's) result dtype for x's dtype, op and dtype=, as a torch dtype (TypeError where none)."""
    numpy_dtype = _TO_NUMPY.get(x_dtype)
    if numpy_dtype is None:
        raise TypeError(f"pyscan: unsupported dtype {x_dtype}")
    requested = None if dtype is None else _TO_NUMPY[dtype]
    return _TO_TORCH[result_dtype(numpy_dtype, op, requested)]


def _check_op(op: str, what: str) -> None:
    if op not in OPERATOR_NAMES:
        raise ValueError(f"{what}: op {op!r}: the torch operator takes the named operators {', '.join(OPERATOR_NAMES)};"
                         " a C-expression operator runs only eagerly on CUDA tensors that do not require grad")


# --- autograd ------------------------------------------------------------------------------------------------------

_AFTER_AUTOGRAD = torch._C._after_autograd_keyset
_AFTER_INPLACE_OR_VIEW = torch._C._after_ADInplaceOrView_keyset


def _register_autograd(name: str, operator, setup_context, backward, kernels: dict) -> None:
    """The operator's Autograd kernel: what torch.library.register_autograd registers, in fewer Python layers.

    Where x requires grad (in grad mode), an autograd.Function runs the operator below autograd and keeps what
    backward(ctx, grad) needs (setup_context(ctx, inputs, output)).  Otherwise the call goes on below autograd: to the
    CUDA or CPU kernel itself where that is the next key (a plain tensor, as in a compiled function's calls), else
    through the dispatcher (fake and functional tensors, dispatch modes: the Python key).  register_autograd's
    layers (a generic any-input-requires-grad test, a redispatch on every call) cost an operator call about 3 us of
    20 more on the H200 host (docs/runtime.md, "torch")."""
    direct = {getattr(torch._C.DispatchKey, key): kernel for key, kernel in kernels.items()}

    def forward(ctx, keyset, x, *rest):
        with torch._C._AutoDispatchBelowAutograd():
            output = operator.redispatch(keyset & _AFTER_AUTOGRAD, x, *rest)
        setup_context(ctx, (x, *rest), output)
        return output

    def backward_(ctx, grad):
        return (None, *backward(ctx, grad))

    function = type(f"PyscanAutograd_{name}", (torch.autograd.Function,),
                    {"forward": staticmethod(forward), "backward": staticmethod(backward_)})

    def autograd_kernel(keyset, x, *rest):
        if x.requires_grad and torch.is_grad_enabled():
            return function.apply(keyset, x, *rest)
        kernel = direct.get((keyset & _AFTER_INPLACE_OR_VIEW).highestPriorityTypeId())
        if kernel is not None:
            return kernel(x, *rest)
        with torch._C._AutoDispatchBelowAutograd():
            return operator.redispatch(keyset & _AFTER_AUTOGRAD, x, *rest)

    _LIBRARY.impl(name, autograd_kernel, "Autograd", with_keyset=True)


# --- scan ---------------------------------------------------------------------------------------------------------

# The operators are defined with torch.library.Library and their kernels, fake implementations and autograd
# formulas registered one by one: the same operators as torch.library.custom_op makes, whose extra Python layers
# cost more: a call of pyscan::scan on a 16-element CPU tensor took 14.4 us through custom_op and 8.7 through
# these registrations, its kernel 3 (the CI machine; pyscan_tools/lab/graph_replay_vs_torch.py times compiled
# functions against eager ones on the GPU).
_LIBRARY = torch.library.Library("pyscan", "DEF")
_LIBRARY.define("scan(Tensor x, int? dim, str op, bool exclusive, ScalarType? dtype) -> Tensor")
_LIBRARY.define("reduce(Tensor x, int[]? dim, bool keepdim, str op, ScalarType? dtype) -> Tensor")


def _scan_cuda(x: Tensor, dim: Optional[int], op: str, exclusive: bool, dtype: Optional[torch.dtype]) -> Tensor:
    """pyscan.scan(x, axis=dim, op=op, exclusive=exclusive, dtype=dtype) on pyscan's kernels."""
    _check_op(op, "pyscan::scan")
    if x.requires_grad:  # below autograd: the eager path reads a plain tensor
        x = x.detach()
    if not x.is_contiguous():
        x = x.contiguous()
    with _Eager():
        return _scans.scan(x, axis=dim, dtype=None if dtype is None else _TO_NUMPY[dtype], op=op, exclusive=exclusive)


def _scan_cpu(x: Tensor, dim: Optional[int], op: str, exclusive: bool, dtype: Optional[torch.dtype]) -> Tensor:
    _check_op(op, "pyscan::scan")
    return _torch_scan(x, dim, op, exclusive, dtype)


_LIBRARY.impl("scan", _scan_cuda, "CUDA")
_LIBRARY.impl("scan", _scan_cpu, "CPU")
scan_op = torch.ops.pyscan.scan.default


class _Eager:
    """Inside an operator's CUDA kernel: the public function takes its eager path, never the operator again."""

    state = threading.local()

    def __enter__(self):
        self.previous = getattr(self.state, "on", False)
        self.state.on = True

    def __exit__(self, *exc):
        self.state.on = self.previous
        return False


@torch.library.register_fake("pyscan::scan")
def _scan_fake(x, dim, op, exclusive, dtype):
    _check_op(op, "pyscan::scan")
    result = _result(x.dtype, op, dtype)
    if dim is None:
        return x.new_empty((x.numel(),), dtype=result)
    return x.new_empty(x.shape, dtype=result)


def _shift_right(y: Tensor, dim: int, fill) -> Tensor:
    """y moved one place along dim, `fill` first: an inclusive scan made exclusive."""
    if y.shape[dim] == 0:
        return y
    head = torch.full_like(y.narrow(dim, 0, 1), fill)
    return torch.cat([head, y.narrow(dim, 0, y.shape[dim] - 1)], dim)


def _shift_left(g: Tensor, dim: int) -> Tensor:
    """g moved one place back along dim, a zero last: an exclusive scan's gradient as its inclusive scan's."""
    if g.shape[dim] == 0:
        return g
    return torch.cat([g.narrow(dim, 1, g.shape[dim] - 1), torch.zeros_like(g.narrow(dim, 0, 1))], dim)


def _torch_scan(x: Tensor, dim, op: str, exclusive: bool, dtype) -> Tensor:
    """The scan by torch's own functions in pyscan's result dtype: the CPU kernel."""
    result = _result(x.dtype, op, dtype)
    v, d = (x.reshape(-1), 0) if dim is None else (x, dim)
    if op == "add":
        y = torch.cumsum(v, d, dtype=result)
    elif op == "mul":
        y = torch.cumprod(v, d, dtype=result)
    elif op in ("max", "min") and result != torch.bool:
        y = (torch.cummax if op == "max" else torch.cummin)(v.to(result), d).values
    else:  # bool max/min, the bitwise and logical operators (CPU): NumPy's accumulate in the result dtype
        numpy_result = _TO_NUMPY[result]
        y = torch.from_numpy(np.array(ufunc(op).accumulate(v.numpy(), axis=d, dtype=numpy_result)))
    if exclusive:
        y = _shift_right(y, d, _identity_value(op, result))
    return y.contiguous()


def _identity_value(op: str, dtype: torch.dtype):
    value = identity(op, _TO_NUMPY[dtype])
    return value.item() if hasattr(value, "item") else value


def _scan_setup(ctx, inputs, output):
    x, dim, op, exclusive, dtype = inputs
    ctx.dim, ctx.op, ctx.exclusive, ctx.x_dtype, ctx.shape = dim, op, exclusive, x.dtype, x.shape
    ctx.save_for_backward(x if op in ("mul", "max", "min") else None, output if op == "mul" else None)


def _scan_backward(ctx, grad):
    op, dim = ctx.op, ctx.dim
    if op not in DIFFERENTIABLE:
        raise RuntimeError(f"pyscan.scan: op {op!r} has no gradient (differentiable: {', '.join(DIFFERENTIABLE)})")
    x, output = ctx.saved_tensors
    d = 0 if dim is None else dim
    g = grad.reshape(-1) if dim is None else grad
    if ctx.exclusive:  # y[k] = inclusive[k - 1]: the inclusive scan's gradient of g moved back one place
        g = _shift_left(g, d)
    if op == "add":
        grad_x = torch.flip(torch.cumsum(torch.flip(g, (d,)), d), (d,))
    else:
        v = x.reshape(-1) if dim is None else x
        v = v.to(g.dtype)
        if op == "mul":
            inclusive = output.reshape(-1) if dim is None else output
            if ctx.exclusive:
                inclusive = torch.cumprod(v, d)
            grad_x = torch.ops.aten.cumprod_backward(g, v, d, inclusive.to(g.dtype))
        else:
            indices = (torch.cummax if op == "max" else torch.cummin)(v, d).indices
            grad_x = _running_extreme_grad(g, indices, d)
    return grad_x.reshape(ctx.shape).to(ctx.x_dtype), None, None, None, None


def _running_extreme_grad(g: Tensor, indices: Tensor, d: int) -> Tensor:
    """For each j, the sum of g[i] over the i whose running max/min sits at j (torch.cummax's indices), without
    atomics: scatter_add adds in a different order on every CUDA run (gradcheck: "Backward is not reentrant").
    The indices never decrease along d and the i that point at j are the run that starts at j (indices[j] == j),
    so a run's sum is a difference of g's cumulative sum, taken in float64 so that the difference loses nothing
    that matters to a float32 gradient."""
    n = g.shape[d]
    if n == 0:
        return torch.zeros_like(g)
    shape = [1] * g.dim()
    shape[d] = n
    position = torch.arange(n, device=g.device).view(shape)
    start = indices == position
    starts = torch.where(start, position, n)
    at_or_after = torch.flip(torch.cummin(torch.flip(starts, (d,)), d).values, (d,))  # the first run start >= j
    after = torch.cat([at_or_after.narrow(d, 1, n - 1), torch.full_like(at_or_after.narrow(d, 0, 1), n)], d)
    total = torch.cumsum(g.to(torch.float64), d)
    before = torch.cat([torch.zeros_like(total.narrow(d, 0, 1)), total.narrow(d, 0, n - 1)], d)
    return torch.where(start, total.gather(d, after - 1) - before, torch.zeros_like(total)).to(g.dtype)


_register_autograd("scan", scan_op, _scan_setup, _scan_backward, {"CUDA": _scan_cuda, "CPU": _scan_cpu})


# --- reduce -------------------------------------------------------------------------------------------------------

def _reduce_cuda(x: Tensor, dim: Optional[List[int]], keepdim: bool, op: str,
                 dtype: Optional[torch.dtype]) -> Tensor:
    """pyscan.reduce(x, axis=dim, keepdims=keepdim, op=op, dtype=dtype) on pyscan's kernels."""
    _check_op(op, "pyscan::reduce")
    if x.requires_grad:
        x = x.detach()
    if not x.is_contiguous():
        x = x.contiguous()
    with _Eager():
        return _reductions.reduce(x, axis=None if dim is None else tuple(dim), keepdims=keepdim, op=op,
                                  dtype=None if dtype is None else _TO_NUMPY[dtype])


def _reduce_cpu(x: Tensor, dim: Optional[List[int]], keepdim: bool, op: str, dtype: Optional[torch.dtype]) -> Tensor:
    _check_op(op, "pyscan::reduce")
    return _torch_reduce(x, dim, keepdim, op, dtype)


_LIBRARY.impl("reduce", _reduce_cuda, "CUDA")
_LIBRARY.impl("reduce", _reduce_cpu, "CPU")
reduce_op = torch.ops.pyscan.reduce.default


def _reduced_shape(shape, dims, keepdim) -> list:
    return [1 if i in dims else extent for i, extent in enumerate(shape) if keepdim or i not in dims]


def _dims(x: Tensor, dim) -> list:
    return list(range(x.dim())) if dim is None else sorted(d % max(x.dim(), 1) for d in dim)


@torch.library.register_fake("pyscan::reduce")
def _reduce_fake(x, dim, keepdim, op, dtype):
    _check_op(op, "pyscan::reduce")
    return x.new_empty(_reduced_shape(x.shape, _dims(x, dim), keepdim), dtype=_result(x.dtype, op, dtype))


def _torch_reduce(x: Tensor, dim, keepdim: bool, op: str, dtype) -> Tensor:
    """The reduction by torch's own functions in pyscan's result dtype: the CPU kernel."""
    result = _result(x.dtype, op, dtype)
    dims = _dims(x, dim)
    if x.dim() == 0:
        y = x.to(result).clone()
    elif op == "add":
        y = torch.sum(x, dims, keepdim=keepdim, dtype=result)
    elif op in ("max", "min") and result != torch.bool:
        y = (torch.amax if op == "max" else torch.amin)(x.to(result), dims, keepdim=keepdim)
    elif op == "mul" and result != torch.bool:  # torch.prod takes one dim: the reduced ones moved last, as one
        kept = [d for d in range(x.dim()) if d not in dims]
        moved = x.permute(kept + dims)
        y = torch.prod(moved.reshape(*moved.shape[:len(kept)], -1), -1, dtype=result)
        if keepdim:
            y = y.reshape(_reduced_shape(x.shape, dims, True))
    else:  # bool max/min, bitwise, logical (CPU): NumPy's reduce
        y = torch.from_numpy(np.array(ufunc(op).reduce(x.numpy(), axis=tuple(dims), keepdims=keepdim,
                                                       dtype=_TO_NUMPY[result])))
    return y.contiguous()


def _reduce_setup(ctx, inputs, output):
    x, dim, keepdim, op, dtype = inputs
    ctx.dims, ctx.keepdim, ctx.op, ctx.x_dtype, ctx.shape = _dims(x, dim), keepdim, op, x.dtype, x.shape
    ctx.save_for_backward(x if op in ("mul", "max", "min") else None, output if op in ("max", "min") else None)


def _exclusive_cumprod(v: Tensor) -> Tensor:
    """prod of the elements before each one along the last axis (1 first): no division, zeros included."""
    return _shift_right(torch.cumprod(v, -1), -1, 1)


def _reduce_backward(ctx, grad):
    op, dims = ctx.op, ctx.dims
    if op not in DIFFERENTIABLE:
        raise RuntimeError(f"pyscan.reduce: op {op!r} has no gradient (differentiable: {', '.join(DIFFERENTIABLE)})")
    x, output = ctx.saved_tensors
    g = grad
    if not ctx.keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    if op == "add":
        grad_x = g.expand(ctx.shape)
    elif op in ("max", "min"):
        y = output if ctx.keepdim else output.reshape(g.shape)
        v = x.to(g.dtype)
        y = y.to(g.dtype)
        mask = (v == y) | (v.isnan() & y.isnan())  # torch.amax's rule: the gradient shared evenly by the ties
        count = mask.sum(dims, keepdim=True) if dims else mask.to(g.dtype)
        grad_x = mask.to(g.dtype) * (g / count)
    else:  # mul: the product of every other element of the reduced set, from the two sides (zeros exact)
        kept = [d for d in range(len(ctx.shape)) if d not in dims]
        order = kept + dims
        v = x.to(g.dtype).permute(order)
        flat = v.reshape(*v.shape[:len(kept)], -1)
        others = _exclusive_cumprod(flat) * torch.flip(_exclusive_cumprod(torch.flip(flat, (-1,))), (-1,))
        inverse = [order.index(i) for i in range(len(order))]
        grad_x = (others.reshape(v.shape).permute(inverse)) * g
    return grad_x.to(ctx.x_dtype).contiguous(), None, None, None, None


_register_autograd("reduce", reduce_op, _reduce_setup, _reduce_backward, {"CUDA": _reduce_cuda, "CPU": _reduce_cpu})


# --- the public functions' routed calls ----------------------------------------------------------------------------

def _torch_dtype(dtype):
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    found = _TO_TORCH.get(np.dtype(dtype))
    if found is None:
        raise TypeError(f"pyscan: dtype {dtype!r} has no torch dtype")
    return found


def _eager_only(x, what: str, algorithm, **given) -> bool:
    """Whether the call names an eager-only argument (then a CUDA tensor outside grad mode and tracing runs eagerly,
    detached; anything else is refused, naming the way out)."""
    named = [name for name, value in given.items() if value is not None] + (["algorithm"] if algorithm != "auto"
                                                                            else [])
    if not named:
        return False
    if (x.device.type == "cuda" and type(x) is torch.Tensor and not torch.compiler.is_compiling()
            and not torch.is_grad_enabled()):
        return True
    raise ValueError(f"{what}: {', '.join(named)}= runs only eagerly, on CUDA tensors outside autograd (x.detach() or "
                     "torch.no_grad()) and outside tracing: the torch operator takes dim, op, exclusive/keepdim and "
                     "dtype; this call was routed to it because the tensor requires grad, is on the CPU, or is traced")


def _normalize_dim(axis, ndim: int, what: str) -> int:
    a = int(axis)
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise np.exceptions.AxisError(a, ndim, what)
    return a % max(ndim, 1)


def scan(x: Tensor, axis=None, dtype=None, out=None, *, op="add", exclusive=False, algorithm="auto", stream=None,
         identity=None, initial=None, offsets=None, check_offsets=True) -> Tensor:
    """pyscan.scan for a torch tensor through the custom operator (differentiable, traceable, CPU or CUDA)."""
    if _eager_only(x, "pyscan.scan", algorithm, out=out, stream=stream, identity=identity, initial=initial,
                   offsets=offsets):
        with _Eager():
            return _scans.scan(x.detach(), axis, dtype, out, op=op, exclusive=exclusive, algorithm=algorithm,
                               stream=stream, identity=identity, initial=initial, offsets=offsets,
                               check_offsets=check_offsets)
    dim = None if axis is None else _normalize_dim(axis, x.dim(), "scan: axis")
    return torch.ops.pyscan.scan(x, dim, op, bool(exclusive), _torch_dtype(dtype))


def reduce(x: Tensor, axis=None, dtype=None, out=None, keepdims=False, *, op="add", algorithm="auto", stream=None,
           identity=None, initial=None, map=None, offsets=None, check_offsets=True) -> Tensor:
    """pyscan.reduce for a torch tensor through the custom operator (differentiable, traceable, CPU or CUDA)."""
    if _eager_only(x, "pyscan.reduce", algorithm, out=out, stream=stream, identity=identity, initial=initial,
                   map=map, offsets=offsets):
        with _Eager():
            return _reductions.reduce(x.detach(), axis, dtype, out, keepdims, op=op, algorithm=algorithm,
                                      stream=stream, identity=identity, initial=initial, map=map, offsets=offsets,
                                      check_offsets=check_offsets)
    if axis is None:
        dim = None
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if not axes:
            raise ValueError("pyscan.reduce: axis=() (reduce nothing) runs only eagerly")
        dim = [_normalize_dim(a, x.dim(), "reduce: axis") for a in axes]
        if len(set(dim)) != len(dim):
            raise ValueError(f"pyscan.reduce: duplicate axes in {axis}")
    return torch.ops.pyscan.reduce(x, dim, bool(keepdims), op, _torch_dtype(dtype))


def routed(x) -> bool:
    """Whether pyscan.scan / pyscan.reduce of torch tensor x go through the custom operators: x requires grad, is
    not on a CUDA device, is a fake or functional tensor, or the call is being traced (torch.compile, export)."""
    if getattr(_Eager.state, "on", False):  # called by the operator's own CUDA kernel
        return False
    return (x.requires_grad or x.device.type != "cuda" or torch.compiler.is_compiling()
            or type(x) is not torch.Tensor and type(x).__name__ in _TRACED_TYPES)


_TRACED_TYPES = frozenset({"FakeTensor", "FunctionalTensor"})

__all__ = ["DIFFERENTIABLE", "reduce", "reduce_op", "routed", "scan", "scan_op"]
