"""The libraries' rows: what a user would call instead of pyscan, on the same input, timed the same way.

    scan       torch.cumsum, cupy.cumsum (both CUB underneath), PyCUDA's InclusiveScanKernel, cuda.compute's
               inclusive scan (CUB from Python): a reusable object with its temporary storage kept, and the
               one-shot call that allocates it every time
    reduce     torch.sum / torch.amax / torch.amin, cupy.sum / cupy.max / cupy.min, PyCUDA's ReductionKernel,
               cuda.compute's reduce_into (reusable and one-shot)
    axis_scan, axis_reduce  torch.cumsum / torch.sum and cupy.cumsum / cupy.sum along the same axis into the same
               result dtype as pyscan's row (bool and uint8 scans: int64)
    histogram  cupy.histogram, torch.bincount
    numpy_histogram  torch.histc, cupy.histogram, cuda.compute's histogram_even (a reusable object, its temporary
               storage kept)
    bincount   torch.bincount, cupy.bincount
    segmented_reduce  torch.segment_reduce(offsets=), cuda.compute's segmented reduce (make_segmented_reduce, a
               reusable object with its temporary storage kept); segmented_scan has no peer (no library scans CSR
               segments)
    life       the book's conway_ker exactly as printed (Hands-On ch. 4), two buffers swapped by the host

A peer whose library does not import is left out (the run says so once).  Every result is kept in the dtype of
the input (dtype=x.dtype where the library would widen it; pyscan's own rows likewise, patterns/_arrays.py), or
along an axis in the case's result dtype, so every row moves the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from pyscan.types import identity


@dataclass(frozen=True)
class Peer:
    name: str  # the row's name
    library: str  # torch, cupy, pycuda, cuda.compute, book
    arrays: str  # the array kind it is called on (and whose events time it)
    make: Callable  # (x of that kind, op) -> (call, result)
    reference: bool = False  # the x_ref of its pattern (life: the book's kernel)


def _returning(fn):
    box = {}

    def call():
        box["r"] = fn()
    return call, lambda: box["r"]


# ---- torch and CuPy: the public calls -------------------------------------------------------------------------

def _torch_scan(x, op):
    import torch

    return _returning(lambda: torch.cumsum(x, 0, dtype=x.dtype))


def _torch_reduce(x, op):
    import torch

    fn = {"add": lambda: torch.sum(x, dtype=x.dtype), "max": lambda: torch.amax(x), "min": lambda: torch.amin(x)}[op]
    return _returning(fn)


def _torch_bincount(x, data):
    import torch

    return _returning(lambda: torch.bincount(x, minlength=256))


def _cupy_scan(x, op):
    import cupy

    return _returning(lambda: cupy.cumsum(x, dtype=x.dtype))


def _cupy_reduce(x, op):
    import cupy

    fn = {"add": lambda: cupy.sum(x, dtype=x.dtype), "max": lambda: cupy.max(x), "min": lambda: cupy.min(x)}[op]
    return _returning(fn)


def _cupy_histogram(x, data):
    import cupy

    return _returning(lambda: cupy.histogram(x, bins=256, range=(0, 256))[0])


# ---- np.histogram's and np.bincount's contract: the same bins, range and length as pyscan's row ---------------

def _histogram_case(x, op):
    from ..patterns.numpy_histogram import parse_case, value_range

    bins, _ = parse_case(op)
    return bins, value_range(str(x.dtype).replace("torch.", ""), bins)


def _tried(call, result, library: str):
    """(call, result) after one trial call: a library that does not take the input is a refusal (a skipped row),
    not an error row."""
    try:
        call()
    except (RuntimeError, TypeError) as exc:
        raise NotImplementedError(f"{library}: {str(exc).strip().splitlines()[0][:200]}") from None
    return call, result


def _torch_histc(x, op):
    import torch

    bins, top = _histogram_case(x, op)
    return _tried(*_returning(lambda: torch.histc(x, bins, 0, top)), "torch.histc")


def _cupy_histogram_numpy(x, op):
    import cupy

    bins, top = _histogram_case(x, op)
    return _returning(lambda: cupy.histogram(x, bins, (0, top))[0])


def _cc_histogram(x, op):
    """cuda.compute's make_histogram_even, reused with its temporary storage kept; int32 counters (CUB's
    CounterT); levels in the data's type (int32 for bytes); upper level exclusive, as no value reaches it."""
    import cupy

    cc = cuda_compute()
    bins, top = _histogram_case(x, op)
    level_type = np.float32 if x.dtype == cupy.float32 else np.int32
    levels = np.array([bins + 1], np.int32)
    lower, upper = np.array([0], level_type), np.array([top], level_type)
    out = cupy.zeros(bins, cupy.int32)
    fn = cc.make_histogram_even(d_samples=x, d_histogram=out, h_num_output_levels=levels, h_lower_level=lower,
                                h_upper_level=upper, num_samples=x.size)

    def run(temp):
        return fn(temp_storage=temp, d_samples=x, d_histogram=out, h_num_output_levels=levels, h_lower_level=lower,
                  h_upper_level=upper, num_samples=x.size)
    temp = cupy.empty(max(1, run(None)), np.uint8)
    return (lambda: run(temp)), lambda: out


def _bincount_length(op):
    from ..patterns.numpy_histogram import parse_bincount_case

    return parse_bincount_case(op)[0]


def _torch_bincount_numpy(x, op):
    import torch

    length = _bincount_length(op)
    return _returning(lambda: torch.bincount(x, minlength=length))


def _cupy_bincount(x, op):
    import cupy

    length = _bincount_length(op)
    return _returning(lambda: cupy.bincount(x, minlength=length))


# ---- PyCUDA's own scan and reduction kernels ---------------------------------------------------------------------

_C_TYPES = {"int32": "int", "int64": "long", "float32": "float", "float64": "double"}  # pycuda's argument parser
_EXPRESSIONS = {"add": "a+b", "max": "(a>b)?a:b", "min": "(a<b)?a:b"}
_pycuda_kernels: dict = {}
_pycuda_pool = []


def _pool_allocate():
    """A pycuda memory pool for PyCUDA's kernels' scratch, so their rows do not time cudaMalloc."""
    if not _pycuda_pool:
        from pycuda.tools import DeviceMemoryPool

        _pycuda_pool.append(DeviceMemoryPool())
    return _pycuda_pool[0].allocate


def _c_literal(value, dtype) -> str:
    """A C expression for value in dtype (the neutral element of ReductionKernel)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        bits = value.view(np.uint32 if dtype.itemsize == 4 else np.uint64)
        return (f"__int_as_float({int(bits):#x})" if dtype.itemsize == 4
                else f"__longlong_as_double({int(bits):#x}ULL)")
    low = np.iinfo(dtype).min
    if int(value) == low:  # the lowest value has no literal of its own
        return f"({low + 1}LL-1)" if dtype.itemsize == 8 else f"({low + 1}-1)"
    return f"{int(value)}LL" if dtype.itemsize == 8 else str(int(value))


def _pycuda_scan(x, op):
    key = ("scan", str(x.dtype), op)
    if key not in _pycuda_kernels:
        from pycuda.scan import InclusiveScanKernel

        _pycuda_kernels[key] = InclusiveScanKernel(x.dtype, _EXPRESSIONS[op])
    knl, out, allocate = _pycuda_kernels[key], x.copy(), _pool_allocate()
    return (lambda: knl(x, out, allocator=allocate)), lambda: out


def _pycuda_reduce(x, op):
    key = ("reduce", str(x.dtype), op)
    if key not in _pycuda_kernels:
        from pycuda.reduction import ReductionKernel

        _pycuda_kernels[key] = ReductionKernel(x.dtype, neutral=_c_literal(identity(op, x.dtype), x.dtype),
                                               reduce_expr=_EXPRESSIONS[op], map_expr="x[i]",
                                               arguments=f"const {_C_TYPES[str(x.dtype)]} *x")
    knl, allocate = _pycuda_kernels[key], _pool_allocate()
    return _returning(lambda: knl(x, allocator=allocate))


# ---- cuda.compute (package cuda-cccl): CUB's algorithms from Python -------------------------------------------------

def cuda_compute():
    """The cuda.compute module (cuda-cccl), or its older name cuda.cccl.parallel.experimental; None if neither."""
    for name in ("cuda.compute", "cuda.cccl.parallel.experimental"):
        try:
            return __import__(name, fromlist=["OpKind"])
        except Exception:  # noqa: BLE001
            continue
    return None


_OP_KINDS = {"add": "PLUS", "max": "MAXIMUM", "min": "MINIMUM"}


def _cc_parts(x, op):
    cc = cuda_compute()
    return cc, getattr(cc.OpKind, _OP_KINDS[op]), np.array([identity(op, x.dtype)], x.dtype)


def _cc_reused(algorithm: str):
    """cuda.compute's reusable object ("scan": make_inclusive_scan, "reduce": make_reduce_into), its temporary
    storage allocated once, as a program calling it in a loop would keep it."""
    def make(x, op):
        import cupy

        cc, kind, init = _cc_parts(x, op)
        out = cupy.empty_like(x) if algorithm == "scan" else cupy.empty(1, x.dtype)
        if algorithm == "scan":  # cuda-cccl 1.2: keyword arguments only
            fn = cc.make_inclusive_scan(d_in=x, d_out=out, op=kind, init_value=init)
            run = lambda temp: fn(temp_storage=temp, d_in=x, d_out=out, op=kind, init_value=init,  # noqa: E731
                                  num_items=x.size)
        else:
            fn = cc.make_reduce_into(d_in=x, d_out=out, op=kind, h_init=init)
            run = lambda temp: fn(temp_storage=temp, d_in=x, d_out=out, num_items=x.size, op=kind,  # noqa: E731
                                  h_init=init)
        temp = cupy.empty(max(1, run(None)), np.uint8)
        return (lambda: run(temp)), lambda: out
    return make


def _cc_one_shot(algorithm: str):
    """cuda.compute's one-shot call (inclusive_scan, reduce_into): the temporary storage allocated every call."""
    def make(x, op):
        import cupy

        cc, kind, init = _cc_parts(x, op)

        def call():
            if algorithm == "scan":
                out = cupy.empty_like(x)
                cc.inclusive_scan(d_in=x, d_out=out, op=kind, init_value=init, num_items=x.size)
            else:
                out = cupy.empty(1, x.dtype)
                cc.reduce_into(d_in=x, d_out=out, num_items=x.size, op=kind, h_init=init)
            return out
        return _returning(call)
    return make


# ---- segments: the same offsets as pyscan's row (patterns/segments.py offsets_for), uploaded once -----------------

def _torch_segment_reduce(x, op):
    import torch

    from ..patterns.segments import offsets_for

    o = torch.as_tensor(offsets_for(int(x.shape[0]), op), device=x.device)
    return _tried(*_returning(lambda: torch.segment_reduce(x, "sum", offsets=o, axis=0)), "torch.segment_reduce")


def _cc_segmented_reduce(x, op):
    """cuda.compute's make_segmented_reduce, reused with its temporary storage kept (CUB's DeviceSegmentedReduce:
    begin and end offsets, here two views of the one CSR array)."""
    import cupy

    from ..patterns.segments import offsets_for

    cc = cuda_compute()
    o = cupy.asarray(offsets_for(int(x.size), op))
    starts, ends, count = o[:-1], o[1:], int(o.size - 1)
    out = cupy.empty(count, x.dtype)
    init = np.zeros(1, x.dtype)
    kind = cc.OpKind.PLUS
    fn = cc.make_segmented_reduce(d_in=x, d_out=out, start_offsets_in=starts, end_offsets_in=ends, op=kind,
                                  h_init=init)

    def run(temp):
        return fn(temp_storage=temp, d_in=x, d_out=out, num_segments=count, start_offsets_in=starts,
                  end_offsets_in=ends, op=kind, h_init=init)
    temp = cupy.empty(max(1, run(None)), np.uint8)
    return _tried((lambda: run(temp)), lambda: out, "cuda.compute segmented_reduce")


# ---- along an axis: the case's axis and result dtype (patterns/axes.py parse_case) -----------------------------------

def _torch_along_axis(function: str):
    def make(x, op):
        import torch

        from ..patterns.axes import parse_case

        axis, result = parse_case(op)
        fn, dtype = getattr(torch, function), getattr(torch, result.name)
        return _returning(lambda: fn(x, axis, dtype=dtype))
    return make


def _cupy_along_axis(function: str):
    def make(x, op):
        import cupy

        from ..patterns.axes import parse_case

        axis, result = parse_case(op)
        fn = getattr(cupy, function)
        return _returning(lambda: fn(x, axis=axis, dtype=result))
    return make


# ---- the book's Life kernel ---------------------------------------------------------------------------------------

def _book_life(x, op):
    """conway_ker as printed (kernels/life/global.cu: conway_ker_book): int32 cells, an N x N lattice with N a
    multiple of 32, a grid of (N/32, N/32) blocks of 32 x 32, two buffers swapped by the host."""
    from pyscan.runtime.loader import get_kernel

    from ..patterns.life import GENERATIONS_PER_CALL

    n = x.shape[0]
    if x.shape != (n, n) or n % 32:
        raise NotImplementedError(f"the book's kernel takes N x N lattices with N a multiple of 32, not {x.shape}")
    fn = get_kernel("life/global.cu", "conway_ker_book")
    buffers = [x.copy(), x.copy()]

    def call():
        for _ in range(GENERATIONS_PER_CALL):
            fn.prepared_call((n // 32, n // 32, 1), (32, 32, 1), buffers[1].gpudata, buffers[0].gpudata)
            buffers.reverse()
    return call, lambda: buffers[0]


PEERS = {
    "scan": (Peer("torch.cumsum", "torch", "torch", _torch_scan), Peer("cupy.cumsum", "cupy", "cupy", _cupy_scan),
             Peer("pycuda InclusiveScanKernel", "pycuda", "pycuda", _pycuda_scan),
             Peer("cuda.compute scan (reused)", "cuda.compute", "cupy", _cc_reused("scan")),
             Peer("cuda.compute inclusive_scan", "cuda.compute", "cupy", _cc_one_shot("scan"))),
    "reduce": (Peer("torch.{sum|amax|amin}", "torch", "torch", _torch_reduce),
               Peer("cupy.{sum|max|min}", "cupy", "cupy", _cupy_reduce),
               Peer("pycuda ReductionKernel", "pycuda", "pycuda", _pycuda_reduce),
               Peer("cuda.compute reduce (reused)", "cuda.compute", "cupy", _cc_reused("reduce")),
               Peer("cuda.compute reduce_into", "cuda.compute", "cupy", _cc_one_shot("reduce"))),
    "histogram": (Peer("cupy.histogram", "cupy", "cupy", _cupy_histogram, reference=True),
                  Peer("torch.bincount", "torch", "torch", _torch_bincount)),
    "numpy_histogram": (Peer("torch.histc", "torch", "torch", _torch_histc),
                        Peer("cupy.histogram", "cupy", "cupy", _cupy_histogram_numpy),
                        Peer("cuda.compute histogram_even (reused)", "cuda.compute", "cupy", _cc_histogram)),
    "bincount": (Peer("torch.bincount", "torch", "torch", _torch_bincount_numpy),
                 Peer("cupy.bincount", "cupy", "cupy", _cupy_bincount)),
    "axis_scan": (Peer("torch.cumsum", "torch", "torch", _torch_along_axis("cumsum")),
                  Peer("cupy.cumsum", "cupy", "cupy", _cupy_along_axis("cumsum"))),
    "axis_reduce": (Peer("torch.sum", "torch", "torch", _torch_along_axis("sum")),
                    Peer("cupy.sum", "cupy", "cupy", _cupy_along_axis("sum"))),
    "segmented_reduce": (Peer("torch.segment_reduce", "torch", "torch", _torch_segment_reduce),
                         Peer("cuda.compute segmented_reduce (reused)", "cuda.compute", "cupy", _cc_segmented_reduce)),
    "life": (Peer("book conway_ker (as printed)", "book", "pycuda", _book_life, reference=True),),
}


def peer_name(peer: Peer, op: str) -> str:
    """The row's name for an operator: torch.{sum|amax|amin} with op max is torch.amax."""
    if "{" not in peer.name:
        return peer.name
    head, choices = peer.name.split("{")
    return head + dict(zip(("add", "max", "min"), choices.rstrip("}").split("|")))[op]


def library_available(library: str) -> bool:
    if library == "cuda.compute":
        return cuda_compute() is not None
    if library == "book":
        library = "pycuda"
    try:
        __import__(library)
    except Exception:  # noqa: BLE001
        return False
    return True


def peers_for(pattern: str, kinds) -> tuple:
    """The peers of a pattern whose library imports and whose array kind is open, and {peer: why left out}."""
    chosen, left_out = [], {}
    for peer in PEERS.get(pattern, ()):
        if not library_available(peer.library):
            left_out[peer.name] = f"{peer.library} does not import"
        elif peer.arrays not in kinds:
            left_out[peer.name] = f"no {peer.arrays} arrays"
        else:
            chosen.append(peer)
    return tuple(chosen), left_out
