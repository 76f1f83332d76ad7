"""pyscan.distributed on several GPUs, one process each, under torchrun with NCCL:

    torchrun --nproc-per-node 2 scripts/distributed_tests.py        # rank 0 prints pytest's report

Every rank runs this file; the tests are collectives, so every rank runs the same tests in the same order and
they agree on the verdict before asserting (a failure on one rank fails the test on all of them).  On every rank
the distributed scan / reduce / histogram must equal pyscan's single-GPU result on the concatenation of the
shards (built on every rank from a seed every rank knows, not sent), and NumPy's: integers and max/min exactly
(NaN positions included), float add within the scan's rounding bound plus the prefix's roundings.  Shards differ
in length, and one is empty in some layouts.

Skipped with the reason unless WORLD_SIZE >= 2 and each process has a CUDA device of its own.
PYSCAN_DISTRIBUTED_TEST_CPU=1 runs the same tests on a gloo group with CPU tensors and NumPy in place of the
GPU kernels (a check of the tests themselves, on a machine without a GPU).
"""

import os
from datetime import timedelta

import numpy as np
import pytest
from scan_checks import check_scan, expected_scan, make_input

from pyscan import distributed
from pyscan.types import result_dtype

OPERATOR_NAMES = ("add", "max", "min")  # the operators of these tests; every operator x dtype: test_dtypes*.py

DTYPES = ("int32", "int64", "float32", "float64")
WORLD = int(os.environ.get("WORLD_SIZE", "1"))
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", "0"))
LOCAL_WORLD = int(os.environ.get("LOCAL_WORLD_SIZE", str(WORLD)))
CPU_MODE = os.environ.get("PYSCAN_DISTRIBUTED_TEST_CPU") == "1"
SEED = 1106


def _skip_reason():
    if WORLD < 2:
        return (f"needs torchrun with 2 or more processes (WORLD_SIZE={WORLD}): "
                "torchrun --nproc-per-node 2 scripts/distributed_tests.py")
    try:
        import torch
        import torch.distributed as dist
    except ImportError as exc:
        return f"needs PyTorch ({exc})"
    if not dist.is_available():
        return "this PyTorch has no torch.distributed"
    if CPU_MODE:
        return None
    if not dist.is_nccl_available():
        return "this PyTorch has no NCCL"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < max(2, LOCAL_WORLD):
        return f"needs a CUDA device per process: {LOCAL_WORLD} processes on this host, {count} CUDA device(s)"
    return None


_reason = _skip_reason()
NEEDS_GPU = not CPU_MODE  # tests/gpu/conftest.py marks this file's tests `gpu` unless CPU_MODE
pytestmark = pytest.mark.skipif(_reason is not None, reason=str(_reason))


# ------------------------------------------------------------------------------------------------ set-up


class Rig:
    """This rank's place: its device, the group, and the single-device references."""

    def __init__(self):
        import torch
        import torch.distributed as dist

        self.torch, self.dist = torch, dist
        for name, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
                            ("NVSHMEM_DISABLE_NVLS", "1")):
            os.environ.setdefault(name, value)  # NVLink multicast stays off on the multi-GPU hosts
        if CPU_MODE:
            self.device = torch.device("cpu")
            dist.init_process_group("gloo", timeout=timedelta(seconds=120))
        else:
            self.device = torch.device("cuda", LOCAL_RANK)
            torch.cuda.set_device(self.device)
            dist.init_process_group("nccl", timeout=timedelta(seconds=120), device_id=self.device)
        self.rank, self.size = dist.get_rank(), dist.get_world_size()

    def close(self):
        self.dist.destroy_process_group()

    def to_device(self, x: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(x)).to(self.device)

    def host(self, t):
        return t.cpu().numpy()

    # pyscan's single-device results on the whole array (NumPy in CPU mode)
    def single_scan(self, whole, op, exclusive):
        import pyscan

        if CPU_MODE:
            from scan_checks import reference

            return reference(whole, op, exclusive)
        return self.host(pyscan.scan(self.to_device(whole), op=op, exclusive=exclusive))

    def single_reduce(self, whole, op):
        import pyscan

        if CPU_MODE:
            from distributed_numpy import numpy_reduce

            return numpy_reduce(whole, op)
        return self.host(pyscan.reduce(self.to_device(whole), op=op))

    def single_histogram(self, whole, bins):
        import pyscan

        if CPU_MODE or whole.size == 0:
            return np.histogram(whole, bins, range=(0, 256))[0].astype(np.uint64)
        return self.host(pyscan.byte_histogram(self.to_device(whole), bins))

    def agree(self, failure):
        """Every rank's failure message (None if it passed), gathered so that every rank asserts the same."""
        messages = [None] * self.size
        self.dist.all_gather_object(messages, failure)
        bad = [f"rank {r}: {m}" for r, m in enumerate(messages) if m is not None]
        assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def rig():
    rig = Rig()
    if CPU_MODE:  # NumPy in place of the GPU kernels
        from distributed_numpy import numpy_local_steps

        saved = {name: getattr(distributed, name) for name in numpy_local_steps()}
        for name, fn in numpy_local_steps().items():
            setattr(distributed, name, fn)
    yield rig
    if CPU_MODE:
        for name, fn in saved.items():
            setattr(distributed, name, fn)
    rig.close()


def run_checked(rig, fn):
    """fn() on this rank -> None or its failure; then every rank asserts on every rank's outcome."""
    try:
        failure = fn()
    except Exception as exc:  # noqa: BLE001  reported through agree(), which every rank reaches
        failure = f"{type(exc).__name__}: {exc}"
    rig.agree(failure)


# ------------------------------------------------------------------------------------------- the shards


def layouts(size):
    """Shard lengths per rank: uneven ones (a million, a few thousand, ...), an empty shard first, one last."""
    uneven = [1_000_003, 4097, 65_537, 31][:size] + [2049] * max(0, size - 4)
    return {"uneven": uneven, "empty_first": [0] + [100_003] * (size - 1), "empty_last": [77_777] * (size - 1) + [0]}


def shards_for(size, dtype, op, layout):
    """Every rank's shard, from a seed every rank knows."""
    rng = np.random.default_rng([SEED, DTYPES.index(dtype), OPERATOR_NAMES.index(op), sorted(layouts(size)).index(layout)])
    dtype = np.dtype(dtype)
    shards = []
    for n in layouts(size)[layout]:
        if dtype.kind == "i":  # the whole range: int64 add wraps many times over (int32 add is int64: exact)
            info = np.iinfo(dtype)
            shards.append(rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True))
        else:
            shards.append(make_input(rng, n, dtype, op))
    return shards


def error_depth(registry, n) -> int:
    """The largest rounding depth any registered algorithm declares for n elements (auto picks one of them)."""
    depths = []
    for algorithm in registry:
        fn = getattr(algorithm, "error_depth", None) or getattr(algorithm, "options", {}).get("error_depth")
        if fn is not None:
            depths.append(fn(n))
    return max(depths)


# -------------------------------------------------------------------------------------------------- scan


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPERATOR_NAMES)
@pytest.mark.parametrize("exclusive", [False, True], ids=["inclusive", "exclusive"])
def test_scan_equals_single_gpu_scan_of_concatenation(rig, dtype, op, exclusive):
    """The three ways to call it: a new result, out=, and in place (out=local_shard, reduce-then-scan)."""
    from pyscan.reductions import REDUCTIONS
    from pyscan.scans import SCANS

    def check():
        failures = []
        for layout in layouts(rig.size):
            shards = shards_for(rig.size, dtype, op, layout)
            whole = np.concatenate(shards)
            start = sum(s.size for s in shards[:rig.rank])
            stop = start + shards[rig.rank].size
            x = rig.to_device(shards[rig.rank])
            value = getattr(rig.torch, result_dtype(dtype, op).name)  # NumPy's: int64 for int32 add
            # in place needs the result dtype: an int32 shard's add is converted to int64 first, as a caller must
            given, in_place = rig.torch.empty_like(x, dtype=value), x.to(value, copy=True)
            results = {"new": distributed.scan(x, op=op, exclusive=exclusive),
                       "out=": distributed.scan(x, op=op, exclusive=exclusive, out=given),
                       "in place": distributed.scan(in_place, op=op, exclusive=exclusive, out=in_place)}
            what = f"{layout} {dtype} {op} exclusive={exclusive}"
            if results["out="] is not given or results["in place"] is not in_place:
                failures.append(f"{what}: out= not returned")
            if not np.array_equal(rig.host(x), shards[rig.rank], equal_nan=True):
                failures.append(f"{what}: the shard was changed")
            single = rig.single_scan(whole, op, exclusive)[start:stop]
            longest = max(len(s) for s in shards)
            depth = error_depth(SCANS, longest) + error_depth(REDUCTIONS, longest) + rig.size + 1
            expected = expected_scan(whole, op, exclusive)
            part = type(expected)(expected.dtype, **{f: getattr(expected, f)[start:stop] for f in ("exact", "ref", "mag")
                                                     if getattr(expected, f) is not None})
            try:
                check_scan(single, part, error_depth(SCANS, whole.size), f"{what} (single GPU)")
            except AssertionError as exc:
                failures.append(str(exc)[:2000])
            for mode, out in results.items():
                if out.device != x.device or out.dtype != value or out.shape != x.shape:
                    failures.append(f"{what} {mode}: got {out.dtype} {tuple(out.shape)} on {out.device}, shard on {x.device}")
                    continue
                mine = rig.host(out)
                try:
                    check_scan(mine, part, depth, f"{what} {mode} (distributed)")
                    if np.dtype(dtype).kind == "i" or op != "add":
                        np.testing.assert_array_equal(mine, single, err_msg=f"{what} {mode}: distributed != single GPU")
                except AssertionError as exc:
                    failures.append(str(exc)[:2000])
        return "\n".join(failures) or None

    run_checked(rig, check)


def test_scan_on_a_stream_and_own_device(rig):
    """A side stream (the caller's): the result is ordered on it and lives on the shard's device."""
    torch = rig.torch
    if CPU_MODE:
        pytest.skip("streams need CUDA")

    def check():
        shards = shards_for(rig.size, "int64", "add", "uneven")
        whole = np.concatenate(shards)
        start = sum(s.size for s in shards[:rig.rank])
        side = torch.cuda.Stream(device=rig.device)
        with torch.cuda.stream(side):
            x = rig.to_device(shards[rig.rank])
            out = distributed.scan(x, stream=side)
            out2 = out * 1  # queued behind the scan on the side stream
        side.synchronize()
        if out.device.index != LOCAL_RANK:
            return f"result on {out.device}, expected cuda:{LOCAL_RANK}"
        expected = np.cumsum(whole, dtype=np.int64)[start:start + shards[rig.rank].size]
        if not np.array_equal(rig.host(out2), expected):
            return "the scan on a side stream differs from np.cumsum of the concatenation"
        return None

    run_checked(rig, check)


# ------------------------------------------------------------------------------------------------ reduce


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_reduce_equals_single_gpu_reduce_of_concatenation(rig, dtype, op):
    from pyscan.reductions import REDUCTIONS

    def check():
        failures = []
        for layout in layouts(rig.size):
            shards = shards_for(rig.size, dtype, op, layout)
            whole = np.concatenate(shards)
            x = rig.to_device(shards[rig.rank])
            value = distributed.reduce(x, op=op)
            what = f"{layout} {dtype} {op}"
            want = getattr(rig.torch, result_dtype(dtype, op).name)  # NumPy's: int64 for int32 add
            if value.dim() != 0 or value.dtype != want or value.device != x.device:
                failures.append(f"{what}: got {value.dtype} {tuple(value.shape)} on {value.device}")
                continue
            got, single = rig.host(value)[()], rig.single_reduce(whole, op)
            if np.dtype(dtype).kind == "i" or op != "add":
                expected = np.sum(whole) if op == "add" else (np.max if op == "max" else np.min)(whole)
                if not (np.array_equal(got, expected, equal_nan=True) and np.array_equal(got, single, equal_nan=True)):
                    failures.append(f"{what}: distributed {got}, single GPU {single}, NumPy {expected}")
            else:
                exact = float(np.sum(whole.astype(np.longdouble)))
                depth = error_depth(REDUCTIONS, max(len(s) for s in shards)) + rig.size
                tol = depth * np.finfo(dtype).eps * float(np.sum(np.abs(whole.astype(np.float64))))
                if not abs(float(got) - exact) <= tol:
                    failures.append(f"{what}: distributed {got}, exact {exact}, bound {tol}")
        return "\n".join(failures) or None

    run_checked(rig, check)


@pytest.mark.parametrize("op", OPERATOR_NAMES)
def test_reduce_of_empty_shards(rig, op):
    def check():
        x = rig.to_device(np.zeros(0, np.float32))
        try:
            value = distributed.reduce(x, op=op)
        except ValueError as exc:
            return None if op != "add" and "every shard is empty" in str(exc) else f"ValueError {exc}"
        if op != "add":
            return f"no ValueError for {op} of empty shards (got {value})"
        return None if rig.host(value)[()] == 0 and value.dtype == x.dtype else f"add of empty shards gave {value}"

    run_checked(rig, check)


# --------------------------------------------------------------------------------------------- histogram


@pytest.mark.parametrize("bins", [1, 7, 256])
def test_histogram_equals_single_gpu_histogram_of_concatenation(rig, bins):
    def check():
        failures = []
        rng = np.random.default_rng([SEED, bins])
        for layout, lengths in layouts(rig.size).items():
            shards = [rng.integers(0, 256, n, dtype=np.uint8) for n in lengths]
            shards[-1][: len(shards[-1]) // 2] = 42  # contention on one bin
            whole = np.concatenate(shards)
            x = rig.to_device(shards[rig.rank])
            counts = distributed.histogram(x, bins=bins)
            if counts.dtype != rig.torch.uint64 or counts.device != x.device or counts.shape != (bins,):
                failures.append(f"{layout}: got {counts.dtype} {tuple(counts.shape)} on {counts.device}")
                continue
            got = rig.host(counts)
            expected = np.histogram(whole, bins, range=(0, 256))[0]
            single = rig.single_histogram(whole, bins)
            if not (np.array_equal(got, expected) and np.array_equal(got, single)):
                failures.append(f"{layout} bins={bins}: distributed {got[:8]}..., NumPy {expected[:8]}...")
        return "\n".join(failures) or None

    run_checked(rig, check)
