"""Segments (pyscan.reduce(x, offsets=o), pyscan.scan(x, offsets=o)): the bench times them on float32 data over
mixes of segment lengths -- every segment 1, 32, 1024, 2^16 or 2^24 long (the last one cut at the end of the array),
and a power law (lengths log-uniform over 1 .. 2^24: p(L) ~ 1/L, most segments short, most elements in long ones)
-- against torch.segment_reduce(offsets=) and cuda.compute's segmented reduce (make_segmented_reduce, reused with
its temporary storage kept) for reductions, and against nothing for scans (no library has a segmented scan with
CSR offsets; the ratio to the copy is the yardstick).  A reduction's ratio is to reading the input once (copy time
/ 2), a scan's to the copy.

The offsets are a function of the element count and the mix (offsets_for), built on the host once and uploaded once
per array kind when a row is set up, so no row times an upload.  pyscan's rows pass check_offsets=False, as the
peers check nothing (the check is one more read of the offsets and a wait for the stream: docs/reduction.md,
"Segments").  Data: small nonzero integers (every partial sum exact in float32 in any order), so results compare
exactly.

The check (`python -m pyscan check segmented_reduce segmented_scan [--sanitize]`): every dtype on the lengths that
matter (0, 1, 31, 32, 33, tile edges, one long segment), host and device offsets, exclusive scans, custom
operators and initial=, and garbage offsets run unchecked (wrong values, but the sanitizer must see no access out
of bounds).
"""

from __future__ import annotations

import functools

import numpy as np

from . import Pattern, case, first_difference
from ._arrays import returning, to_numpy, upload
from .axes import device_view
from .scan import small_nonzero_ints

MIXES = ("uniform 1", "uniform 32", "uniform 1024", "uniform 2^16", "uniform 2^24", "power law")
SIZES = {"default": [2**20, 2**24, 2**28], "full": [2**k for k in range(20, 29, 2)], "quick": [2**20, 2**24, 2**28],
         "small": [2**12, 2**16 + 3]}
MAX_LENGTH = 2**24


@functools.lru_cache(maxsize=16)
def offsets_for(n: int, mix: str) -> np.ndarray:
    """The CSR offsets (int64, S + 1 entries) of a mix over n elements: uniform L (the last segment cut short), or
    the power law (log-uniform lengths 1 .. 2^24, from a generator seeded by n; the last one cut short)."""
    if mix.startswith("uniform"):
        text = mix.split()[1]
        length = 2 ** int(text[2:]) if text.startswith("2^") else int(text)
        return np.append(np.arange(0, n, length, dtype=np.int64), np.int64(n))
    rng = np.random.default_rng(n)
    parts, total = [], 0
    while total < n:
        lengths = np.floor(2.0 ** (rng.random(1 << 16) * 24)).astype(np.int64)
        parts.append(lengths)
        total += int(lengths.sum())
    ends = np.minimum(np.cumsum(np.concatenate(parts)), n)
    ends = ends[: int(np.searchsorted(ends, n)) + 1]
    return np.concatenate([[0], ends]).astype(np.int64)


def _like(x, host: np.ndarray):
    """host on x's device, in x's kind (NumPy for NumPy)."""
    module = type(x).__module__.split(".")[0]
    if module == "numpy":
        return host
    if module == "cupy":
        import cupy

        return cupy.asarray(host)
    if module == "torch":
        import torch

        return torch.as_tensor(host, device=x.device)
    return upload(host)


def reduce_reference(host, mix, units):
    o = offsets_for(host.size, mix)
    return np.add.reduceat(host.astype(np.float64), o[:-1]).astype(host.dtype) if host.size else host[:0]


def scan_reference(host, mix, units):
    o = offsets_for(host.size, mix)
    c = np.cumsum(host.astype(np.float64))
    starts = np.repeat(o[:-1], np.diff(o))
    return (c - np.where(starts > 0, c[np.maximum(starts - 1, 0)], 0)).astype(host.dtype)


def _same(got, expected) -> bool:
    return got.shape == expected.shape and np.array_equal(got, expected)


def reduce_call(pyscan, x, mix, algorithm):
    if algorithm != "auto":
        raise NotImplementedError(f"pyscan.reduce(offsets=) has no algorithm= (asked for {algorithm!r})")
    o = _like(x, offsets_for(int(x.shape[0]), mix))
    return returning(lambda: pyscan.reduce(x, offsets=o, dtype=x.dtype, check_offsets=False))


def scan_call(pyscan, x, mix, algorithm):
    if algorithm != "auto":
        raise NotImplementedError(f"pyscan.scan(offsets=) has no algorithm= (asked for {algorithm!r})")
    o = _like(x, offsets_for(int(x.shape[0]), mix))
    return returning(lambda: pyscan.scan(x, offsets=o, dtype=x.dtype, check_offsets=False))


# ---- check ---------------------------------------------------------------------------------------------------

CHECK_DTYPES = ("int32", "float32", "int64", "float64", "int8", "uint16", "float16", "bool")
CHECK_LENGTHS = (0, 1, 31, 32, 33, 0, 4095, 4096, 4097, 2047, 2049, 1, 70001, 0)
# More tiles than persistent blocks (3 an SM: 396 on 132 SMs), so blocks take tiles ahead: early aggregates, and
# the reduction's warp parts in which no segment ends (empty segments at 0 and inside, whole 8192-element tiles, a
# last segment of one element)
MANY_TILES = (1 << 22) + 3 * 8192


def check_cases(name: str, quick: bool) -> list:
    cases = []
    for dtype in CHECK_DTYPES[:3] if quick else CHECK_DTYPES:
        for op in ("max",) if dtype == "float16" else ("add", "max"):  # (float16 sums: NumPy rounds every step)
            for where in ("host", "device"):
                cases.append(case(name, "auto", dtype=dtype, op=op, offsets=where, exclusive=False))
            if name == "segmented_scan":
                cases.append(case(name, "auto", dtype=dtype, op=op, offsets="device", exclusive=True))
    cases.append(case(name, "auto", dtype="int32", op="max(a, b)", offsets="device", exclusive=False, initial=5))
    cases.append(case(name, "auto", dtype="float32", op="add", offsets="power law", exclusive=False))
    for dtype in ("int32", "int64"):
        cases.append(case(name, "auto", dtype=dtype, op="add", offsets="many tiles", exclusive=False))
    # x one element off 16-byte alignment: the kernel's scalar-load build (VECTOR_LOADS 0), a block per tile
    cases.append(case(name, "auto", dtype="int32", op="add", offsets="device", exclusive=False, unaligned=True))
    cases.append(case(name, "auto", dtype="float32", op="add", offsets="garbage", exclusive=False))
    return cases


def run_case(c, rng) -> tuple:
    import pyscan
    from pyscan.scans.reference import reference as one_scan
    from pyscan.segments import reference_reduce

    p = c.p
    dtype = np.dtype(p["dtype"])
    scan = c.pattern == "segmented_scan"
    if p["offsets"] == "power law":
        lengths = np.diff(offsets_for(1 << 20, "power law"))
        o = np.concatenate([[0], np.cumsum(np.minimum(lengths, 70001))]).astype(np.int64)
    elif p["offsets"] == "many tiles":
        o = np.sort(np.concatenate([np.arange(0, MANY_TILES, 8192), [0, 5, 5, 70000, 1 << 21, MANY_TILES - 1,
                                                                     MANY_TILES]])).astype(np.int64)
    else:
        o = np.concatenate([[0], np.cumsum(CHECK_LENGTHS)]).astype(np.int64)
    n = int(o[-1])
    x = small_nonzero_ints(n, dtype, p["op"], rng)
    xd = device_view(x, 1 if p.get("unaligned") else 0)
    if p["offsets"] == "garbage":  # unchecked: any values, but no access out of bounds (the sanitizer's part)
        bad = upload(rng.integers(-2**40, 2**40, 5001).astype(np.int64))
        fn = pyscan.scan if scan else pyscan.reduce
        fn(xd, offsets=bad, check_offsets=False)  # not read back: unchecked, some values may be left unwritten
        try:  # the checked call reads its flag back, after the unchecked kernel on the same stream
            fn(xd, offsets=bad)
        except ValueError:
            return "ok", ""
        return "mismatch", "garbage device offsets passed the check"
    od = upload(o) if p["offsets"] != "host" else o
    op = p["op"]
    kwargs = {"identity": np.iinfo(dtype).min} if op == "max(a, b)" else {}
    if "initial" in p:
        kwargs["initial"] = p["initial"]
    named = "max" if op == "max(a, b)" else op
    if scan:
        got = to_numpy(pyscan.scan(xd, offsets=od, op=op, exclusive=p["exclusive"], **kwargs))
        parts = [one_scan(x[a:b], named, p["exclusive"]) for a, b in zip(o[:-1], o[1:]) if b > a]
        want = np.concatenate(parts)
        if op == "max(a, b)":
            want = want.astype(dtype)
        if "initial" in p:
            want = np.maximum(want, p["initial"]).astype(want.dtype)
    else:
        got = to_numpy(pyscan.reduce(xd, offsets=od, op=op, **kwargs))
        value = dtype if op == "max(a, b)" else pyscan.types.result_dtype(dtype, op)
        want = reference_reduce(x, o, named, value)
        if "initial" in p:
            want = np.maximum(want, p["initial"]).astype(value)
    if got.dtype != want.dtype:
        return "mismatch", f"dtype {got.dtype}, expected {want.dtype}"
    diff = first_difference(got, want)
    return ("mismatch", diff) if diff else ("ok", "")


SEGMENTED_REDUCE = Pattern(
    name="segmented_reduce", registry=None,
    bench_cases=tuple(("float32", mix) for mix in MIXES),
    sizes=SIZES, make_input=small_nonzero_ints, reference=reduce_reference, same=_same, reads_only=True,
    public_name="pyscan.reduce(offsets=)", public_call=reduce_call,
    check_cases=check_cases, auto_cases=lambda: [], run_case=run_case,
)

SEGMENTED_SCAN = Pattern(
    name="segmented_scan", registry=None,
    bench_cases=tuple(("float32", mix) for mix in MIXES),
    sizes=SIZES, make_input=small_nonzero_ints, reference=scan_reference, same=_same,
    public_name="pyscan.scan(offsets=)", public_call=scan_call,
    check_cases=check_cases, auto_cases=lambda: [], run_case=run_case,
)
