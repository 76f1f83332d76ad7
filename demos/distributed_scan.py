"""A prefix scan across GPUs: one process per GPU, each holding a shard of one array, under torchrun.

    torchrun --nproc-per-node 2 demos/distributed_scan.py [--size N] [--dtype int32] [--op add] [--exclusive]

Each rank makes a shard on its own GPU (cuda:LOCAL_RANK; the shards differ in length) and calls
pyscan.distributed.scan: PMPP §11.6's hierarchical scan with the ranks as the blocks -- a local pyscan.scan, one
NCCL all-gather of the ranks' totals, and each rank combining the total of the ranks before it into its part.
Rank 0 then gathers the shards and the distributed result, scans the concatenation on its own GPU with
pyscan.scan, and prints whether the two agree (integers and max/min exactly, float add within the rounding
bound), and the times: the distributed call against each GPU scanning only its own shard (median of --repeat,
CUDA events after a barrier, the slowest rank's).  Without a usable GPU or PyTorch the demo says why on stderr and
exits with status 3.
"""

import argparse
import os
import sys
from datetime import timedelta

for name, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1"),
                    ("CUDA_DEVICE", os.environ.get("LOCAL_RANK", "0"))):
    os.environ.setdefault(name, value)  # NVLink multicast off; pyscan's default context on this rank's GPU

import numpy as np  # noqa: E402

import pyscan  # noqa: E402
from pyscan import distributed  # noqa: E402
from pyscan.types import result_dtype  # noqa: E402


def make_shard(torch, n, dtype, rank, device):
    generator = torch.Generator(device=device)
    generator.manual_seed(1000 + rank)
    if dtype.is_floating_point:
        return torch.randn(n, generator=generator, device=device, dtype=dtype) * 100
    return torch.randint(-1000, 1000, (n,), generator=generator, device=device, dtype=dtype)


def gather_to_rank0(torch, dist, x, lengths):
    """The concatenation of every rank's x on rank 0 (None elsewhere); shards of different lengths are padded."""
    longest = max(lengths)
    padded = torch.zeros(longest, dtype=x.dtype, device=x.device)
    padded[: x.numel()] = x
    parts = [torch.empty_like(padded) for _ in lengths] if dist.get_rank() == 0 else None
    dist.gather(padded, parts, dst=0)
    if dist.get_rank() != 0:
        return None
    return torch.cat([p[:n] for p, n in zip(parts, lengths)])


def error_depth(n):
    """The largest rounding depth (additions on any input's path) pyscan's scans declare for n elements."""
    from pyscan.scans import SCANS

    depths = [getattr(a, "error_depth", None) or getattr(a, "options", {}).get("error_depth") for a in SCANS]
    return max(d(n) for d in depths if d is not None)


def compare(whole, result, single, lengths, op):
    """(ok, verdict): integers and max/min exactly (NaN where NaN); float add within the two scans' rounding
    bounds, each |scan - exact| <= depth * eps * sum_{j<=i} |x_j| (the distributed one: the longest shard's
    depth, one rounding per earlier rank and one for the combine)."""
    got, ref = result.cpu().numpy(), single.cpu().numpy()
    if got.dtype.kind == "i" or op != "add":
        ok = bool(np.array_equal(got, ref, equal_nan=got.dtype.kind == "f"))
        return ok, "equals" if ok else "DIFFERS from"
    depth = error_depth(max(lengths)) + len(lengths) + 1 + error_depth(sum(lengths))
    magnitude = np.cumsum(np.abs(whole.cpu().numpy().astype(np.float64)))
    bound = depth * np.finfo(got.dtype).eps * magnitude
    ok = bool(np.all(np.abs(got.astype(np.float64) - ref.astype(np.float64)) <= bound))
    return ok, "is within the rounding bound of" if ok else "is OUTSIDE the rounding bound of"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=2**24, help="elements on rank 0 (rank r has size - r*size/8)")
    parser.add_argument("--dtype", default="int32", choices=["int32", "int64", "float32", "float64"])
    parser.add_argument("--op", default="add", choices=["add", "max", "min"])
    parser.add_argument("--exclusive", action="store_true")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    reason = pyscan.gpu_unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}", file=sys.stderr)
        return 3
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        print(f"PyTorch is not installed ({exc}): this demo runs under torchrun, one process per GPU", file=sys.stderr)
        return 3
    if "LOCAL_RANK" not in os.environ:
        sys.exit("run me under torchrun: torchrun --nproc-per-node 2 demos/distributed_scan.py")

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device, timeout=timedelta(seconds=300))
    rank, size = dist.get_rank(), dist.get_world_size()
    dtype = getattr(torch, args.dtype)
    lengths = [max(0, args.size - r * (args.size // 8)) for r in range(size)]
    x = make_shard(torch, lengths[rank], dtype, rank, device)

    out = distributed.scan(x, op=args.op, exclusive=args.exclusive)
    torch.cuda.synchronize()
    result_type = getattr(torch, result_dtype(np.dtype(args.dtype), args.op).name)  # NumPy's: int64 for int32 add
    assert out.device == device and out.dtype == result_type and out.shape == x.shape

    whole = gather_to_rank0(torch, dist, x, lengths)
    result = gather_to_rank0(torch, dist, out, lengths)
    t_dist, _ = distributed.slowest_rank_ms(lambda: distributed.scan(x, op=args.op, exclusive=args.exclusive),
                                            repeat=args.repeat, device=device)
    t_local, _ = distributed.slowest_rank_ms(lambda: pyscan.scan(x, op=args.op, exclusive=args.exclusive),
                                             repeat=args.repeat, device=device)
    names = [None] * size
    dist.all_gather_object(names, f"{torch.cuda.get_device_name(device)} (cuda:{local_rank})")

    status = 0
    if rank == 0:
        what = f"{args.op} {'exclusive' if args.exclusive else 'inclusive'} scan of {whole.numel():,} {args.dtype}"
        print(f"{size} ranks, {what}")
        for r, (n, name) in enumerate(zip(lengths, names)):
            print(f"  rank {r}: {n:>12,} elements on {name}")
        try:
            single = pyscan.scan(whole, op=args.op, exclusive=args.exclusive)
            ok, verdict = compare(whole, result, single, lengths, args.op)
        except Exception as exc:  # noqa: BLE001  the other ranks wait for the verdict below
            ok, verdict = False, f"could not be compared ({type(exc).__name__}: {exc}) with"
        print(f"the distributed result {verdict} pyscan.scan of the concatenation on one GPU")
        print(f"distributed scan {t_dist:8.3f} ms   each GPU scanning its own shard {t_local:8.3f} ms   "
              f"ratio {t_dist / t_local:.2f}   (median of {args.repeat}, slowest rank)")
        status = 0 if ok else 1
    flag = torch.tensor([status], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    dist.destroy_process_group()
    return int(flag.item())


if __name__ == "__main__":
    sys.exit(main())
