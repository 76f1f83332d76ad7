"""Hierarchical scan, PMPP §11.6 (Figs. 11.9-11.10): any length from a kernel that scans one section per block.

    kernel 1   every block b scans its section [b*S, (b+1)*S) of x into out and writes the section's total
               (op over the whole section) to S_sums[b]                              -> out (local scans), S_sums
    step 2     S_sums is scanned (inclusive) by the same scheme, recursively, so any number of sections works
    kernel 3   kernels/scan/add_block_sums.cu: out[i] = op(scanned[b-1], out[i]) for every i of section b > 0

Kernel 3 is right for inclusive and for exclusive section scans alike: section b's global result is the local
result combined with the op over every element of the sections before it, which is scanned[b-1].

**Section-scan kernel contract.**  A section kernel (any `.cu` file; see SectionScan) has the signature

    extern "C" __global__ void NAME(T* out, const T* in, T* block_sums, long long n, int exclusive)

Block b scans elements [b*SECTION_SIZE, (b+1)*SECTION_SIZE) of `in` (positions past n count as op_identity()),
writes the inclusive (exclusive if `exclusive` != 0) scan of the section to `out` (positions < n only), and, if
`block_sums` is not null, writes the section's total to block_sums[b].  It takes the #defines ELEM_TYPE, OP and
SECTION_SIZE (plus its own, with defaults, given in SectionScan.defines) and is launched with `threads` threads
per block.  `out` may alias `in`.  Optional builds (traces, counted work) add trailing parameters:
TRACE=1 adds `T* trace`, COUNT_WORK=1 adds `unsigned long long* counters` (in that order).

**Choosing the block scan.**  `hierarchical_scan(x, out, op=..., exclusive=..., block_scan=NAME)` takes any
name of SECTION_SCANS; the registered algorithm `hierarchical` uses DEFAULT_BLOCK_SCAN ("coarsened": of
kogge_stone / brent_kung / coarsened it has by far the fewest barriers and the most elements per block, so the
fewest sections and levels).  Change
it for the process with `pyscan.scans.hierarchical.DEFAULT_BLOCK_SCAN = "brent_kung"`.  The single-section
algorithms (naive, kogge_stone, ...) are registered with drivers that call hierarchical_scan with their own
section kernel, so every algorithm takes every length.

The NumPy counterpart is hierarchical_model(x, section_model, section_size, op=..., exclusive=...), which does
the same arithmetic on a (sections, section_size) array: every section at once, one vectorised step at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..runtime.loader import get_kernel
from ..types import COMPUTE_TYPES, identity, ufunc
from ..types import defines as type_defines
from .registry import SCANS

# The prepare() argument types of a section kernel (see the contract above); read off by hand because the
# optional trailing parameters are conditional (#if TRACE ...), which the loader's signature reader cannot see.
SECTION_ARG_TYPES = "PPPqi"
ADD_BLOCK_SUMS = "scan/add_block_sums.cu"
ADD_BLOCK_SUMS_THREADS = 256


@dataclass(frozen=True)
class SectionScan:
    """A kernel that scans one section per block (see the module docstring for its contract)."""

    file: str  # under kernels/, e.g. "scan/kogge_stone.cu"
    function: str  # its __global__ function
    section_size: int  # elements per block (the SECTION_SIZE #define)
    threads: int  # threads per block
    defines: dict = field(default_factory=dict)  # its other #defines (COARSEN=8, ...)


SECTION_SCANS: dict[str, SectionScan] = {}


def register_section_scan(name: str, section_scan: SectionScan) -> SectionScan:
    if name in SECTION_SCANS:
        raise ValueError(f"section scan {name!r} registered twice")
    if section_scan.section_size < 1 or section_scan.threads < 1 or section_scan.threads > 1024:
        raise ValueError(f"section scan {name!r}: bad geometry {section_scan}")
    SECTION_SCANS[name] = section_scan
    return section_scan


# The section scans register themselves: the single-section kernels of PMPP §11.2-§11.5 and Hands-On ch. 4 in
# single_section.py, blelloch_block in blelloch.py (both import this module; it imports neither).
BLOCK_SCANS = ("kogge_stone", "brent_kung", "coarsened")  # the block scans `hierarchical` offers (PMPP §11.6)
DEFAULT_BLOCK_SCAN = "coarsened"


def section_kernel(block_scan: str, dtype, op: str, device=None, file=None, result=None, out=None, **extra):
    """The prepared section kernel of SECTION_SCANS[block_scan] for x of dtype, op, a result dtype (default: dtype)
    stored as `out` (default: the result dtype; the compute type for a scratch array), extra #defines overriding;
    `file`: another .cu file with the same function and contract (a student's exercise, pyscan_tools.exercises)."""
    path, function, macros = section_build(block_scan, dtype, op, result, out, **extra)
    arg_types = SECTION_ARG_TYPES + ("P" if macros.get("TRACE") else "") + ("P" if macros.get("COUNT_WORK") else "")
    return get_kernel(file or path, function, arg_types=arg_types, device=device, **macros)


def section_build(block_scan: str, dtype, op: str, result=None, out=None, **extra) -> tuple:
    """(kernel file, function, #defines) of section_kernel's build (its arguments' meaning): what the loader
    compiles, and the tests' CPU emulator (tests/emulate/sections_on_cpu.cpp) too."""
    if block_scan not in SECTION_SCANS:
        raise ValueError(f"unknown block scan {block_scan!r}: expected one of {', '.join(map(repr, SECTION_SCANS))}")
    s = SECTION_SCANS[block_scan]
    return s.file, s.function, {**type_defines(dtype, op, result, out=out), "SECTION_SIZE": s.section_size,
                                **s.defines, **extra}


def hierarchical_scan(x, out, *, op: str, exclusive: bool, call, block_scan: str | None = None, file=None) -> int:
    """Scan the contiguous device array x into out (same shape and dtype; may be x itself) on the call's stream with
    the section kernel SECTION_SCANS[block_scan] (DEFAULT_BLOCK_SCAN if None; its function read from `file` if
    given) and PMPP §11.6's three-kernel scheme, recursively.  Returns the number of kernel launches."""
    block_scan = DEFAULT_BLOCK_SCAN if block_scan is None else block_scan
    n = int(x.size)
    if n == 0:
        return 0
    result, compute = out.dtype, COMPUTE_TYPES[out.dtype]
    # A result narrower than the compute type (float16, int8, bool): kernel 1 writes its local scans as the compute
    # type to a scratch array and kernel 3 stores every section from it, so every result is rounded once.
    local = out if result == compute else call.empty((n,), compute)
    # raises for an unknown block scan
    fn = section_kernel(block_scan, x.dtype, op, call.device, file, result=result, out=compute)
    s = SECTION_SCANS[block_scan]
    sections = -(-n // s.section_size)
    sums = call.empty((sections,), compute) if sections > 1 else None
    fn.prepared_async_call((sections, 1, 1), (s.threads, 1, 1), call.stream, local.gpudata, x.gpudata,
                           sums.gpudata if sums is not None else 0, np.int64(n), np.int32(bool(exclusive)))
    launches = 1
    scanned = None
    if sections > 1:
        # The section totals scanned inclusively: scanned[b] = op over sections 0..b.  Into a second buffer, so the
        # scheme does not rely on a section kernel supporting out == in.
        scanned = call.empty((sections,), compute)
        launches += hierarchical_scan(sums, scanned, op=op, exclusive=False, call=call, block_scan=block_scan, file=file)
    if sections > 1 or local is not out:
        first = 1 if local is out else 0  # section 0 is already right where it is the result
        add = get_kernel(ADD_BLOCK_SUMS, "add_block_sums", device=call.device, **type_defines(result, op, result))
        add.prepared_async_call((sections - first, 1, 1), (ADD_BLOCK_SUMS_THREADS, 1, 1), call.stream, out.gpudata,
                                local.gpudata, scanned.gpudata if scanned is not None else 0, np.int64(n),
                                np.int64(s.section_size), np.int64(first))
        launches += 1
    return launches


def hierarchical_model(x, section_model: Callable, section_size: int, *, op: str = "add", exclusive: bool = False):
    """NumPy model of hierarchical_scan: the same section arithmetic, every section at once.

    section_model(sections, *, op, exclusive) -> scanned: `sections` is a (k, section_size) array of raw section
    inputs (already padded with the identity), `scanned` the (k, section_size) inclusive or exclusive scan of
    each row, computed as the section kernel does.  The section totals are the last inclusive values (for an
    exclusive scan: op(last exclusive value, last input), as the kernels do).  Returns a new array like x.
    """
    x = np.asarray(x)
    n = x.size
    if n == 0:
        return x.copy()
    f, e = ufunc(op), identity(op, x.dtype)
    k = -(-n // section_size)
    rows = np.full(k * section_size, e, dtype=x.dtype)
    rows[:n] = x
    rows = rows.reshape(k, section_size)
    scanned = np.asarray(section_model(rows, op=op, exclusive=exclusive)).astype(x.dtype, copy=True)
    if k > 1:
        totals = f(scanned[:, -1], rows[:, -1]) if exclusive else scanned[:, -1].copy()
        prefix = hierarchical_model(totals, section_model, section_size, op=op, exclusive=False)
        scanned[1:] = f(prefix[:-1, None], scanned[1:])  # kernel 3: op(scanned[b-1], out[i]) for b > 0
    return scanned.reshape(-1)[:n]


def hierarchical_error_depth(n: int, section_size: int, section_depth: int) -> int:
    """Rounding bound for hierarchical scans.  `section_depth` bounds the roundings from any input to any output
    of one section scan *and* to its total (exclusive scans add one combine for the total).  An output of section
    b > 0 is op(scanned[b-1], local): local has <= section_depth roundings, scanned[b-1] comes from the totals
    (<= section_depth) through the recursive inclusive scan of the totals (hierarchical_error_depth of their count),
    then one more rounding in kernel 3."""
    if n <= section_size:
        return section_depth
    return section_depth + hierarchical_error_depth(-(-n // section_size), section_size, section_depth) + 1


# ----------------------------------------------------------------------------------------------------------------
# The registered `hierarchical` algorithm: DEFAULT_BLOCK_SCAN's section kernel in the three-kernel scheme.  Its
# model, trace and counts are those of the block scan's registered algorithm (looked up at call time, so that
# changing DEFAULT_BLOCK_SCAN changes them too).


def _driver(x, out, *, op, exclusive, call):
    return hierarchical_scan(x, out, op=op, exclusive=exclusive, call=call, block_scan=DEFAULT_BLOCK_SCAN)


def _block_algorithm():
    return SCANS.get(DEFAULT_BLOCK_SCAN)


def hierarchical_algorithm_model(x, *, op="add", exclusive=False, return_steps=False):
    """Model of `hierarchical`: the model of its block scan (DEFAULT_BLOCK_SCAN), which already applies the
    hierarchical scheme beyond one section."""
    return _block_algorithm().model.compute_model(x, op=op, exclusive=exclusive, return_steps=return_steps)


def _trace(x, *, op="add", exclusive=False):
    return _block_algorithm().trace(x, op=op, exclusive=exclusive)


def _count_work(n):
    return _block_algorithm().count_work(n)


def _model_count_work(n):
    return _block_algorithm().model_count_work(n)


def _error_depth(n):
    return _block_algorithm().error_depth(n)


SCANS.register(
    "hierarchical", _driver,
    kernels=tuple(f"scan/{name}.cu" for name in BLOCK_SCANS) + (ADD_BLOCK_SUMS,),
    source="PMPP §11.6, Figs. 11.9-11.10",
    summary="three kernels: scan sections writing block sums; scan the sums (recursively); add them back",
    model=hierarchical_algorithm_model, trace=_trace, count_work=_count_work, model_count_work=_model_count_work,
    error_depth=_error_depth, block_scans=BLOCK_SCANS,
)
