"""Scan, reduce and histogram of a 1-D array sharded across processes, one GPU each, through torch.distributed.

    pyscan.distributed.scan(local_shard, *, group=None, op="add", exclusive=False, out=None, stream=None, dtype=None)
        -> this rank's part of the scan of the whole array (a new tensor shaped like the shard, on its device, of
           NumPy's result dtype: int64 for int32 add, as np.cumsum)
    pyscan.distributed.reduce(local_shard, *, group=None, op="add", stream=None, dtype=None)
        -> the reduction of the whole array, on every rank (a 0-d tensor on the shard's device, of NumPy's result
           dtype: int64 for int32 add, as np.sum)
    pyscan.distributed.histogram(local_shard, *, bins=256, group=None, stream=None)
        -> the counts of the whole array, on every rank (`bins` torch.uint64 on the shard's device)

The whole array is the concatenation of the ranks' shards in rank order (of `group`, the default process group
if None).  Shards may differ in length, and may be empty.  Every rank of the group must make the same call (these
are collectives).  The collectives go through torch.distributed: NCCL under `torchrun` (each process on the GPU
its LOCAL_RANK names, which is the device of its shard); a gloo group works too (the few values exchanged are
staged through the host).  Each rank's own work is pyscan's single-GPU scan / reduce / histogram on the device
its shard lives on, never an assumed device 0.

The scan is PMPP §11.6's hierarchical scan one level up: the ranks play the blocks.
 1. Each rank scans its shard with pyscan.scan (the shard's total is the last output of an inclusive scan; of an
    exclusive scan, op(last output, last input); of an empty shard, op's identity).
 2. One all-gather of every rank's (last output, last input) pair: every rank learns every rank's total.
 3. Each rank combines the exclusive prefix of the totals, op over the ranks before it (the identity on rank 0),
    into every element of its local result (add for add, maximum / minimum for max / min): rank_prefix().
Step 3 reads and writes the local result once more, so a distributed scan moves about twice the bytes of a local
one on every rank but the first.  In place (out=local_shard) the order is reduce-then-scan instead (PMPP §11.6's
other arrangement, and the one of the decoupled look-back): each rank reduces its shard, the totals are
exchanged, and each rank folds its prefix into its first element and scans once: 1.5 times the bytes of a local
scan (only where the result dtype is the shard's: int32 add gives int64, which an int32 shard cannot hold).  The
ranks' totals and prefixes are combined on the host in NumPy (R values), in rank order and in the result dtype
(pyscan.types.result_dtype, NumPy's accumulator), exactly as np.cumsum of the concatenation would wrap (int64 add
is modulo 2^64) and propagate NaN.

reduce: add is one all_reduce(SUM) of the ranks' pyscan.reduce results, in the result dtype (an empty shard gives 0;
all shards empty give 0, as np.sum).  max and min gather every rank's (result, non-empty) pair and combine them on the host:
NCCL's float max/min are fmaxf/fminf, which drop a NaN where np.max keeps it, and all shards empty must raise
ValueError as np.max does.  So max/min wait for the collective on the host; add does not.

histogram: pyscan.byte_histogram's uint64 counts on each rank, then one all_reduce(SUM) of them viewed as int64 (NCCL
has no unsigned 64-bit sum in torch; counts below 2^63 sum to the same bits), viewed back as torch.uint64.

slowest_rank_ms(fn, repeat=, device=) times a call across the ranks (median of the slowest rank's time per call,
and every rank's median) for the distributed demo and benchmark.

`import pyscan` does not need torch: it is imported by these functions.  The host-side logic (records, totals,
prefixes, the combination of reduce results) is in small functions of NumPy arrays, tested in CI without a GPU
or torch.distributed.
"""

from __future__ import annotations

import statistics

import numpy as np

from .types import check_op, identity, result_dtype, ufunc

_WHAT = "pyscan.distributed"
# The operators the ranks' combine steps implement (_TorchArrays.combine; reduce's SUM all-reduce for add and the
# host-side combination of the gathered results for max and min).
OPERATORS = ("add", "max", "min")

# ------------------------------------------------------------------------------------------ host-side logic


def shard_record(local_out, shard, op):
    """What a rank sends in step 2: [last output of its local scan, last input] as a length-2 array of the
    local scan's dtype (the result dtype; the input converted to it, as NumPy converts to its accumulator), or
    [identity, identity] for an empty shard (then the total is the identity for an inclusive
    and an exclusive scan alike).  NumPy arrays in, a NumPy array out; the torch path builds the same pair on
    the device (_TorchArrays.record)."""
    dtype = np.dtype(local_out.dtype)
    if len(local_out) == 0:
        return np.full(2, identity(op, dtype), dtype)
    return np.array([local_out[-1], shard[-1]], dtype)


def rank_totals(records, op, exclusive) -> np.ndarray:
    """Every rank's total from the gathered records (R x 2, rank order): the last output of an inclusive scan;
    op(last output, last input) of an exclusive one (its last output leaves the last element out)."""
    records = np.asarray(records)
    if records.ndim != 2 or records.shape[1] != 2:
        raise ValueError(f"expected records of shape (ranks, 2), got {records.shape}")
    if not exclusive:
        return records[:, 0].copy()
    with np.errstate(over="ignore", invalid="ignore"):  # inf + -inf is NaN, as in np.cumsum, without a warning
        return ufunc(op)(records[:, 0], records[:, 1])  # an array operation: integer add wraps, no warning


def exclusive_prefixes(totals, op) -> np.ndarray:
    """prefix[r] = op over totals[0 .. r-1] in rank order, the identity for r = 0, in the totals' dtype: integer
    add wraps like np.cumsum(x, dtype=x.dtype), NaN propagates, +inf + -inf is NaN."""
    totals = np.asarray(totals)
    dtype = np.dtype(totals.dtype)
    out = np.empty(totals.shape, dtype)
    if out.size:
        out[0] = identity(op, dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            out[1:] = ufunc(op).accumulate(totals[:-1], dtype=dtype)
    return out


def rank_prefix(records, rank: int, op, exclusive):
    """What rank `rank` combines into its local scan: op over the totals of the ranks before it (a NumPy scalar)."""
    records = np.asarray(records)
    if not 0 <= rank < len(records):
        raise ValueError(f"rank {rank} is not one of the {len(records)} ranks gathered")
    return exclusive_prefixes(rank_totals(records, op, exclusive), op)[rank]


def combine_changes_nothing(prefix, op) -> bool:
    """True when combining `prefix` into a scan leaves every element as it is: the prefix is op's identity
    (rank 0's always is; x + 0, max(x, lowest), min(x, highest) are x, signed zeros aside).  A NaN prefix is
    never the identity."""
    return bool(prefix == identity(op, np.asarray(prefix).dtype))


def reduce_records(records, op):
    """The global reduction from every rank's (local result, 1 if its shard is non-empty else 0) pair, in rank
    order, as NumPy would reduce the concatenation: add of nothing is 0 (np.sum); max/min of nothing raise
    ValueError (np.max / np.min); NaN propagates through max and min."""
    check_op(op)
    records = np.asarray(records)
    if records.ndim != 2 or records.shape[1] != 2:
        raise ValueError(f"expected records of shape (ranks, 2), got {records.shape}")
    dtype = np.dtype(records.dtype)
    values = records[records[:, 1] != 0, 0]
    if values.size == 0:
        if op == "add":
            return dtype.type(0)
        raise ValueError(f"{_WHAT}.reduce: every shard is empty: zero-size array to reduction operation {op} "
                         f"which has no identity (as np.{op} raises; op='add' of empty shards is 0, as np.sum gives)")
    with np.errstate(over="ignore", invalid="ignore"):
        return ufunc(op).reduce(values, dtype=dtype)


# ------------------------------------------------------------- one rank's steps, for NumPy or torch arrays


def scan_combine(local_out, shard, *, op, exclusive, comm, arrays):
    """Steps 2 and 3 of the distributed scan on one rank, after its local scan `local_out` of `shard`: gather the
    records, combine the prefix into local_out in place.  `comm` is the group (rank, all_gather of records to a
    host (R, 2) NumPy array); `arrays` the array operations (_NumpyArrays or _TorchArrays)."""
    records = comm.all_gather(arrays.record(local_out, shard, op))
    prefix = rank_prefix(records, comm.rank, op, exclusive)
    if not combine_changes_nothing(prefix, op):
        arrays.combine(local_out, prefix, op)
    return local_out


def scan_in_place_steps(x, local_total, *, dtype, op, exclusive, comm, arrays, scan_in_place):
    """The in-place distributed scan on one rank: reduce first, then one scan with the prefix folded in.

    1. This rank's total is its local reduction `local_total` (None for an empty shard: the identity).
    2. The all-gather of the totals gives the prefix of the ranks before this one.
    3. x[0] = op(x[0], prefix) (one element), then the local scan of x in place (scan_in_place(x)): every output
       then starts from the prefix.  An exclusive scan writes op's identity at 0; that element is the prefix.
    Each rank reads x once for the reduction and once more, writing it, for the scan: 3 passes over the shard
    where scan-then-combine makes 4."""
    dtype = np.dtype(dtype)
    total = identity(op, dtype) if local_total is None else local_total
    records = comm.all_gather(arrays.pair(total, identity(op, dtype), dtype))
    prefix = rank_prefix(records, comm.rank, op, False)
    if len(x) == 0:
        return x
    folded = not combine_changes_nothing(prefix, op)
    if folded:
        arrays.combine(x[:1], prefix, op)
    scan_in_place(x)
    if folded and exclusive:
        arrays.set_first(x, prefix)
    return x


def reduce_combine(local_result, *, nonempty: bool, dtype, op, comm, arrays):
    """The global reduction on one rank from its local result (None for an empty shard)."""
    dtype = np.dtype(dtype)
    if op == "add":
        value = arrays.scalar_vector(dtype.type(0) if local_result is None else local_result, dtype)
        comm.all_reduce_sum(value)
        return arrays.as_0d(value)
    value = identity(op, dtype) if local_result is None else local_result
    records = comm.all_gather(arrays.pair(value, 1 if nonempty else 0, dtype))
    return arrays.full_0d(reduce_records(records, op), dtype)


def histogram_combine(local_counts, *, comm, arrays):
    """The global counts on one rank: one SUM all-reduce of the local uint64 counts viewed as int64."""
    as_int64 = arrays.view_int64(local_counts)
    comm.all_reduce_sum(as_int64)
    return arrays.view_uint64(as_int64)


class _NumpyArrays:
    """The array operations of scan_combine / reduce_combine / histogram_combine on NumPy arrays (tests)."""

    @staticmethod
    def record(local_out, shard, op):
        return shard_record(local_out, shard, op)

    @staticmethod
    def combine(local_out, prefix, op):
        ufunc(op)(local_out, prefix, out=local_out)

    @staticmethod
    def set_first(x, value):
        x[0] = value

    @staticmethod
    def scalar_vector(value, dtype):
        return np.array([value], dtype)

    @staticmethod
    def pair(value, flag, dtype):
        return np.array([value, flag], dtype)

    @staticmethod
    def as_0d(vector):
        return vector.reshape(())[()]

    @staticmethod
    def full_0d(value, dtype):
        return np.dtype(dtype).type(value)

    @staticmethod
    def view_int64(counts):
        return counts.view(np.int64)

    @staticmethod
    def view_uint64(counts):
        return counts.view(np.uint64)


# ------------------------------------------------------------------------------------------------ torch


def _torch():
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        raise ImportError(f"{_WHAT} needs PyTorch (torch.distributed): pip install torch ({exc})") from exc
    if not dist.is_available():
        raise RuntimeError(f"{_WHAT}: this PyTorch build has no torch.distributed")
    return torch, dist


def _torch_dtypes(torch):
    return {torch.int32: np.dtype(np.int32), torch.int64: np.dtype(np.int64),
            torch.float32: np.dtype(np.float32), torch.float64: np.dtype(np.float64)}


def _as_tensor(x, torch, what):
    """A torch tensor for x: x itself, or a zero-copy view of another CUDA array (CuPy, Numba, pycuda)."""
    if isinstance(x, torch.Tensor):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        return torch.as_tensor(x)
    raise TypeError(f"{what}: expected a torch.Tensor (or a CUDA array with __cuda_array_interface__), "
                    f"got {type(x).__module__}.{type(x).__name__}")


def _backend(dist, group) -> str:
    return str(dist.get_backend(group))


def check_shard(x, *, group, dtypes, what):
    """Validate a shard before anything is launched or communicated; returns (tensor, NumPy dtype, backend)."""
    torch, dist = _torch()
    x = _as_tensor(x, torch, what)
    if x.dim() != 1:
        raise ValueError(f"{what}: expected a 1-D shard, got shape {tuple(x.shape)}")
    if x.dtype not in dtypes:
        raise TypeError(f"{what}: unsupported dtype {x.dtype}: expected one of {', '.join(map(str, dtypes))}")
    if not dist.is_initialized():
        raise RuntimeError(f"{what}: torch.distributed is not initialised: call torch.distributed.init_process_group() "
                           "first (under torchrun, init_process_group('nccl') with each process on cuda:LOCAL_RANK)")
    backend = _backend(dist, group)
    if x.device.type != "cuda" and "gloo" not in backend:
        raise ValueError(f"{what}: the shard is on {x.device}, but the group's backend is {backend!r}: put it on "
                         "this rank's GPU (cuda:LOCAL_RANK under torchrun)")
    dtype = dtypes[x.dtype] if isinstance(dtypes, dict) else np.dtype(np.uint8)
    return x, dtype, backend


class _TorchGroup:
    """The group as scan_combine needs it: this rank's index, all_gather of small records, SUM all-reduce.  With
    NCCL the tensors stay on the shard's GPU; with another backend (gloo) they go through the host."""

    def __init__(self, dist, group, device, backend):
        self.dist, self.group, self.device = dist, group, device
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)
        nccl = device.type == "cuda" and "nccl" in backend
        self.comm_device = device if nccl else _cpu()

    def all_gather(self, record):
        import torch

        record = record.to(self.comm_device)
        gathered = torch.empty((self.size, record.numel()), dtype=record.dtype, device=self.comm_device)
        gather = getattr(self.dist, "all_gather_single", None) or self.dist.all_gather_into_tensor
        gather(gathered.view(-1), record, group=self.group)
        return gathered.cpu().numpy()

    def all_reduce_sum(self, tensor):
        staged = tensor.to(self.comm_device)
        self.dist.all_reduce(staged, op=self.dist.ReduceOp.SUM, group=self.group)
        if staged is not tensor:
            tensor.copy_(staged)


def _cpu():
    import torch

    return torch.device("cpu")


class _TorchArrays:
    """The array operations of the combine steps on torch tensors, on the shard's device (elementwise torch ops;
    in-place ops keep the tensor's dtype, the result dtype, so int64 stays int64 and wraps)."""

    def __init__(self, torch, device):
        self.torch, self.device = torch, device

    def _full(self, shape, value, dtype):
        return self.torch.full(shape, value.item() if hasattr(value, "item") else value,
                               dtype=_torch_dtype(self.torch, dtype), device=self.device)

    def record(self, local_out, shard, op):
        if local_out.numel() == 0:
            return self._full((2,), identity(op, _np_dtype(self.torch, local_out.dtype)),
                              _np_dtype(self.torch, local_out.dtype))
        return self.torch.cat((local_out[-1:], shard[-1:].to(local_out.dtype)))  # the input as the result dtype

    def combine(self, local_out, prefix, op):
        p = self._full((), prefix, prefix.dtype)
        if op == "add":
            local_out.add_(p)
        else:
            (self.torch.maximum if op == "max" else self.torch.minimum)(local_out, p, out=local_out)

    @staticmethod
    def set_first(x, value):
        x[:1].fill_(value.item())

    def scalar_vector(self, value, dtype):
        if isinstance(value, self.torch.Tensor):
            return value.reshape(1).to(self.device)
        return self._full((1,), value, dtype)

    def pair(self, value, flag, dtype):
        head = value.reshape(1).to(self.device) if isinstance(value, self.torch.Tensor) else self._full((1,), value, dtype)
        return self.torch.cat((head, self._full((1,), flag, dtype)))

    @staticmethod
    def as_0d(vector):
        return vector.reshape(())

    def full_0d(self, value, dtype):
        return self._full((), value, dtype)

    def view_int64(self, counts):
        return counts.view(self.torch.int64) if counts.dtype != self.torch.int64 else counts

    def view_uint64(self, counts):
        return counts.view(self.torch.uint64)


def _np_dtype(torch, dtype):
    return _torch_dtypes(torch)[dtype]


def _torch_dtype(torch, dtype):
    dtype = np.dtype(dtype)
    for t, d in _torch_dtypes(torch).items():
        if d == dtype:
            return t
    raise TypeError(f"no torch dtype for {dtype}")


def _torch_stream(torch, stream, device):
    """The torch stream for `stream`: a torch Stream as it is; a CuPy, pycuda or Numba stream, an object with
    __cuda_stream__, or a raw cudaStream_t handle (int) wrapped as a torch.cuda.ExternalStream."""
    if stream is None or isinstance(stream, torch.cuda.Stream):
        return stream
    value = stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        value = (protocol() if callable(protocol) else protocol)[1]
    else:
        for attribute in ("cuda_stream", "ptr", "handle"):  # torch, CuPy, pycuda / Numba (a ctypes c_void_p)
            if hasattr(stream, attribute):
                value = getattr(stream, attribute)
                value = getattr(value, "value", value) or 0
                break
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"stream: expected a torch, CuPy, pycuda or Numba stream or a cudaStream_t handle (int), "
                        f"got {type(stream).__module__}.{type(stream).__name__}")
    return torch.cuda.ExternalStream(int(value), device=device)


class _OnDevice:
    """The shard's device and the caller's stream current for torch's ops and collectives."""

    def __init__(self, torch, x, stream):
        self.contexts = []
        if x.device.type == "cuda":
            self.contexts.append(torch.cuda.device(x.device))
            ts = _torch_stream(torch, stream, x.device)
            if ts is not None:
                self.contexts.append(torch.cuda.stream(ts))
        elif stream is not None:
            raise ValueError(f"stream: the shard is on {x.device}; a stream needs a CUDA shard")

    def __enter__(self):
        for c in self.contexts:
            c.__enter__()
        return self

    def __exit__(self, *exc):
        for c in reversed(self.contexts):
            c.__exit__(*exc)
        return False


def _as_result(result, torch, device):
    """pyscan's result as a torch tensor on `device` (pyscan hands a CUDA tensor back as one; NumPy in, NumPy out)."""
    return result if isinstance(result, torch.Tensor) else torch.as_tensor(result, device=device)


def _stream_kwargs(stream):
    return {} if stream is None else {"stream": stream}


def _local_input(x):
    """pyscan takes CUDA tensors as they are; a CPU tensor (a gloo group) goes in as NumPy."""
    return x if x.device.type == "cuda" else x.numpy()


# The local steps, one function each (tests without a GPU replace them with NumPy ones).


def _local_scan(x, op, exclusive, stream, out=None, dtype=None):
    import pyscan

    torch, _ = _torch()
    kwargs = _stream_kwargs(stream)
    if dtype is not None:  # else NumPy's result dtype, and the default call's ready() path
        kwargs["dtype"] = dtype
    if out is not None:
        kwargs["out"] = _local_input(out)
        pyscan.scan(_local_input(x), op=op, exclusive=exclusive, **kwargs)
        return out
    return _as_result(pyscan.scan(_local_input(x), op=op, exclusive=exclusive, **kwargs), torch, x.device)


def _local_reduce(x, op, stream, dtype=None):
    import pyscan

    torch, _ = _torch()
    kwargs = _stream_kwargs(stream)
    if dtype is not None:
        kwargs["dtype"] = dtype
    return _as_result(pyscan.reduce(_local_input(x), op=op, **kwargs), torch, x.device)


def _local_histogram(x, bins, stream):
    import pyscan

    torch, _ = _torch()
    return _as_result(pyscan.byte_histogram(_local_input(x), bins, **_stream_kwargs(stream)), torch, x.device)


def _check_bins(bins) -> int:
    if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)):
        raise TypeError(f"{_WHAT}.histogram: bins must be an int between 1 and 256, got {type(bins).__name__} {bins!r}")
    if not 1 <= bins <= 256:
        raise ValueError(f"{_WHAT}.histogram: bins must be between 1 and 256, got {bins}")
    return int(bins)


def _check_common(op=None, exclusive=None):
    if op is not None:
        check_op(op)
        if op not in OPERATORS:
            raise ValueError(f"{_WHAT}: op {op!r} is not supported across ranks: expected one of "
                             f"{', '.join(map(repr, OPERATORS))} (pyscan.scan / pyscan.reduce take every op on one GPU)")
    if exclusive is not None and not isinstance(exclusive, (bool, np.bool_)):
        raise TypeError(f"exclusive must be True or False, got {type(exclusive).__name__} {exclusive!r}")


def _result_dtype(dtype, op, requested, torch, what):
    """NumPy's result dtype of the shard's dtype and op, or dtype= (requested: a NumPy or torch dtype), as np.cumsum's
    dtype=; one of the four dtypes the ranks exchange."""
    from .types import as_dtype

    value = result_dtype(dtype, op, None if requested is None else as_dtype(requested))
    if value not in _torch_dtypes(torch).values():
        raise TypeError(f"{what}: dtype={value} is not one the ranks exchange: expected one of int32, int64, float32, "
                        "float64")
    return value


def _check_out(out, x, torch, value):
    """out must be a tensor of x's shape and device, of the result dtype `value`, contiguous; returns whether it is
    x itself (in place, where the result dtype is x's)."""
    what = f"{_WHAT}.scan: out"
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{what}: expected a torch.Tensor like the shard, got {type(out).__module__}.{type(out).__name__}")
    dtype = _torch_dtype(torch, value)
    if out.shape != x.shape or out.dtype != dtype or out.device != x.device:
        raise ValueError(f"{what}: expected shape {tuple(x.shape)}, dtype {dtype} on {x.device} (the shard's shape "
                         f"and device, the result's dtype: NumPy's accumulator), got shape {tuple(out.shape)}, dtype "
                         f"{out.dtype} on {out.device}")
    if not out.is_contiguous():
        raise ValueError(f"{what}: must be contiguous")
    if out.numel() == 0:
        return out is x
    start, stop = x.data_ptr(), x.data_ptr() + x.numel() * x.element_size()
    out_start = out.data_ptr()
    if out_start == start:
        return True
    if out_start < stop and start < out_start + out.numel() * out.element_size():
        raise ValueError(f"{what}: overlaps the shard without being it (pass out=local_shard to scan in place)")
    return False


def scan(local_shard, *, group=None, op="add", exclusive=False, out=None, stream=None, dtype=None):
    """This rank's part of the inclusive (or exclusive) scan with `op` of the concatenation of every rank's
    shard, in rank order of `group` (the default group if None): a new tensor of the shard's shape, dtype and
    device (or `out`).  Every rank of the group must call it.

    local_shard: a 1-D torch tensor on this rank's GPU (or another CUDA array, viewed as a tensor), int32,
    int64, float32 or float64; any length, 0 included.  op: "add", "max" or "min".  The result dtype is NumPy's
    (pyscan.types.result_dtype): int32 add gives int64, as np.cumsum of the concatenation; int64 add wraps modulo
    2^64; an exclusive scan starts from op's identity on rank 0.  Float add: the local scan's rounding bound plus
    one rounding for the prefix and one per earlier rank.
    out: a tensor of the shard's shape and device and of the result dtype to write the result into (returned);
    out=local_shard (where the result dtype is the shard's) scans in place, by the faster scheme of
    scan_in_place_steps (reduce, exchange, one scan with the prefix folded into the first element: about 1.5 times
    a local scan's memory traffic instead of 2).
    dtype: the accumulator and result dtype, as np.cumsum's dtype= (int32, int64, float32 or float64, NumPy or
    torch): dtype=torch.int32 keeps an int32 shard's add in int32, wrapping, and lets it scan in place.
    stream: the stream to work on (torch, CuPy or pycuda stream, or a raw handle; torch's current one if None).
    The host waits for the gathered totals (R values) before it launches the combine.
    """
    _check_common(op, exclusive)
    exclusive = bool(exclusive)
    torch, dist = _torch()
    x, shard_dtype, backend = check_shard(local_shard, group=group, dtypes=_torch_dtypes(torch), what=f"{_WHAT}.scan")
    # NumPy's accumulator (or dtype=): the local scans, the records and the result
    value = _result_dtype(shard_dtype, op, dtype, torch, f"{_WHAT}.scan")
    local_dtype = None if dtype is None else value
    in_place = out is not None and _check_out(out, x, torch, value)
    arrays = _TorchArrays(torch, x.device)
    with _OnDevice(torch, x, stream):
        comm = _TorchGroup(dist, group, x.device, backend)
        if in_place:
            total = None if x.numel() == 0 else _local_reduce(x, op, stream, dtype=local_dtype)
            return scan_in_place_steps(x, total, dtype=value, op=op, exclusive=exclusive, comm=comm, arrays=arrays,
                                       scan_in_place=lambda y: _local_scan(y, op, exclusive, stream, out=y,
                                                                           dtype=local_dtype))
        if x.numel() == 0:
            local = torch.empty_like(x, dtype=_torch_dtype(torch, value)) if out is None else out
        else:
            local = _local_scan(x, op, exclusive, stream, out=out, dtype=local_dtype)
        return scan_combine(local, x, op=op, exclusive=exclusive, comm=comm, arrays=arrays)


def reduce(local_shard, *, group=None, op="add", stream=None, dtype=None):
    """The reduction with `op` of the concatenation of every rank's shard, on every rank: a 0-d tensor of NumPy's
    result dtype (int64 for int32 add, as np.sum; else the shard's) on its device.  Every rank of the group must
    call it.

    An empty shard contributes nothing; if every shard is empty, add gives 0 and max/min raise ValueError (as
    np.sum / np.max).  int64 add wraps modulo 2^64; max/min propagate NaN as np.max does.  add runs without a host
    wait; max/min wait on the host for the R gathered results.  dtype: the accumulator and result dtype, as
    np.sum's dtype= (int32, int64, float32 or float64)."""
    _check_common(op)
    torch, dist = _torch()
    x, shard_dtype, backend = check_shard(local_shard, group=group, dtypes=_torch_dtypes(torch), what=f"{_WHAT}.reduce")
    value = _result_dtype(shard_dtype, op, dtype, torch, f"{_WHAT}.reduce")
    with _OnDevice(torch, x, stream):
        comm = _TorchGroup(dist, group, x.device, backend)
        local = None if x.numel() == 0 else _local_reduce(x, op, stream, dtype=None if dtype is None else value)
        return reduce_combine(local, nonempty=x.numel() > 0, dtype=value, op=op, comm=comm,
                              arrays=_TorchArrays(torch, x.device))


def histogram(local_shard, *, bins=256, group=None, stream=None):
    """The histogram of the concatenation of every rank's uint8 shard, on every rank: `bins` counts of dtype
    torch.uint64 on the shard's device, equal to np.histogram(whole, bins, range=(0, 256))[0] (byte v in bin
    v * bins // 256).  The counts are summed by NCCL as int64 (the same bits for counts below 2^63) and viewed
    back as torch.uint64.  Every rank of the group must call it."""
    bins = _check_bins(bins)
    torch, dist = _torch()
    x, _, backend = check_shard(local_shard, group=group, dtypes=(torch.uint8,), what=f"{_WHAT}.histogram")
    with _OnDevice(torch, x, stream):
        comm = _TorchGroup(dist, group, x.device, backend)
        if x.numel() == 0:
            counts = torch.zeros(bins, dtype=torch.int64, device=x.device)
        else:
            counts = _local_histogram(x, bins, stream)
        return histogram_combine(counts, comm=comm, arrays=_TorchArrays(torch, x.device))


# ------------------------------------------------------------------------------------------------ timing


def slowest_rank_ms(fn, *, repeat, device, warmup=2, group=None):
    """How long fn() takes across the ranks of `group` (the default group if None), as the distributed demo and
    benchmark report it: (the median over `repeat` calls of the slowest rank's milliseconds, [every rank's own
    median]).  Every rank of the group must call it (it meets the others at a barrier before each call and at an
    all-gather of the times at the end).

    After `warmup` untimed calls (compilation, memory pools, NCCL's connections), each call runs between two torch
    CUDA events on the current stream, after the barrier and a device synchronisation, so the ranks start it
    together and nothing queued earlier is counted.  A distributed call ends when its slowest rank does, so the
    figure is the per-call maximum over the ranks, then the median.  `device`: where the times are gathered (this
    rank's GPU under NCCL)."""
    torch, dist = _torch()
    for _ in range(warmup):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeat):
        dist.barrier(group=group)
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    mine = torch.tensor(times, device=device, dtype=torch.float64)
    every = [torch.empty_like(mine) for _ in range(dist.get_world_size(group))]
    dist.all_gather(every, mine, group=group)
    every = torch.stack(every)  # ranks x calls
    return statistics.median(every.max(dim=0).values.tolist()), [statistics.median(r.tolist()) for r in every]


__all__ = ["exclusive_prefixes", "histogram", "rank_prefix", "rank_totals", "reduce", "reduce_records", "scan",
           "scan_in_place_steps", "shard_record", "slowest_rank_ms"]
