"""pyscan.histogram and pyscan.bincount: np.histogram's and np.bincount's contract for every integer and float
array pyscan takes, on the GPU (kernels/histogram/numpy_histogram.cu, min_max.cu, histogram_finish.cu).

    histogram(x, bins=10, range=None, weights=None, density=False, *, stream=None) -> (hist, bin_edges)
    bincount(x, weights=None, minlength=0, *, stream=None) -> counts

The host works out NumPy's edges and the constants of its bin arithmetic (numpy_plan); the kernels count; the
NumPy step-models (numpy_models) repeat the kernels' arithmetic.  The two kernels are also registered in the
byte histogram's registry (histograms/registry.py: "numpy_shared_copies", "numpy_global_atomics") with drivers
and models of the byte histogram's signature, so every tool that runs the byte histograms runs them too.
"""

from __future__ import annotations

import functools
import math
import operator
import sys
import weakref

import numpy as np

from ..errors import CaptureError
from ..runtime import arrays, capture, driver
from ..runtime.loader import get_kernel
from ..runtime.workspace import StreamWorkspace
from . import numpy_models
from . import numpy_plan as plan
from .fast import fast_kernel, fast_shared, run_fast
from .launch import sms
from .models import fast_config
from .reference import COUNT_DTYPE as BYTE_COUNT_DTYPE
from .registry import HISTOGRAMS

KERNEL = "histogram/numpy_histogram.cu"
FUNCTIONS = {plan.SHARED: "numpy_histogram_shared", plan.GLOBAL: "numpy_histogram_global"}
FOLD = "numpy_histogram_fold"  # 1-byte data: fast.cu's byte counts into the bins (BYTES)
ONE_LAUNCH = "numpy_histogram_once"  # SHARED and BYTES (BYTE_VALUES=1) in one launch: counts and finishes
GLOBAL_PASS = "numpy_bincount_global"  # bincount's one pass on the global histogram (EXTREMES)


# ---- launches ------------------------------------------------------------------------------------------------

def counting_kernel(rule: plan.BinRule, chosen: str, copies: int, device: int, *, weights=None,
                    aggregations=plan.AGGREGATE, one_launch: bool = False, extremes: bool = False) -> tuple:
    """(the counting kernel of strategy `chosen` (SHARED or GLOBAL) for the rule, its dynamic shared memory): the
    block's `copies` private copies of the bins' counters for SHARED (4 bytes a count, 8 a weighted sum), none for
    GLOBAL.  weights: the weights' dtype, None for counts.  one_launch: the ready call's kernel of SHARED or BYTES,
    which counts and finishes in one launch (ONE_LAUNCH; BYTES: BYTE_VALUES, the 256 byte values in MAX_COPIES
    copies); extremes: bincount's one pass, ONE_LAUNCH of SHARED that also writes the data's least and greatest
    value after the counts, or GLOBAL_PASS for GLOBAL (EXTREMES)."""
    function, defines, shared = counting_build(rule, chosen, copies, weights=weights, aggregations=aggregations,
                                               one_launch=one_launch, extremes=extremes)
    return get_kernel(KERNEL, function, device=device, **defines), shared


def counting_build(rule: plan.BinRule, chosen: str, copies: int, *, weights=None, aggregations=plan.AGGREGATE,
                   one_launch: bool = False, extremes: bool = False) -> tuple:
    """(function, #defines, dynamic shared bytes) of counting_kernel's build (its arguments' meaning): what the
    loader compiles, and the tests' CPU emulators (tests/emulate/) too."""
    byte_values = one_launch and chosen == plan.BYTES
    if byte_values:
        copies, counted = plan.MAX_COPIES, 256
    else:
        counted = rule.bins
    weight_dtype = np.dtype(np.float32) if weights is None else np.dtype(weights)
    function = GLOBAL_PASS if extremes and chosen == plan.GLOBAL else ONE_LAUNCH if one_launch else FUNCTIONS[chosen]
    defines = {"BLOCK_SIZE": plan.BLOCK, "COPIES": max(copies, 1), "BYTE_VALUES": int(byte_values),
               "EXTREMES": int(extremes), "WEIGHTED": int(weights is not None),
               "WEIGHT_T": plan.VALUE_C_TYPES[weight_dtype], "WEIGHT_IS_HALF": int(weight_dtype == np.float16),
               "SHARED_AGGREGATE": plan.AGGREGATIONS[aggregations[plan.SHARED]],
               "GLOBAL_AGGREGATE": plan.AGGREGATIONS[aggregations[plan.GLOBAL]], **rule.defines()}
    shared = counted * copies * (4 if weights is None else 8) if chosen != plan.GLOBAL else 0
    return function, defines, shared


def count_into(data, weights, rule: plan.BinRule, out, *, call, strategy: str | None = None,
               aggregate: str | None = None, edges=None):
    """Count `data` (a contiguous device array of rule.dtype, any shape) into `out` (rule.bins 8-byte counters on
    the device: int64 / uint64 counts, or float64 sums with `weights`, a device array of data's size), on the
    call's stream: in one launch where fits_one_launch says so (out written whole), else zeroed here first.
    strategy: as numpy_plan.choose_strategy (None: the host's choice); aggregate: one of numpy_plan.AGGREGATIONS
    for the strategy's kernel (None: numpy_plan.AGGREGATE's for it); edges: rule.edges on the device, where the
    call has them already (_kernel_edges)."""
    weighted = weights is not None
    chosen, copies = plan.choose_strategy(rule.bins, weighted, strategy, np.dtype(data.dtype).itemsize)
    aggregations = plan.AGGREGATE
    if aggregate is not None:
        if aggregate not in plan.AGGREGATIONS:
            raise ValueError(f"aggregate: expected one of {', '.join(plan.AGGREGATIONS)}, got {aggregate!r}")
        aggregations = {**plan.AGGREGATE, chosen: aggregate}
    if data.size == 0 or rule.bins == 0:
        call.memset32(out, 0, 2 * rule.bins)
        return out
    if edges is None:  # kept until the launches are queued (then freed in stream order)
        edges = _edges_on_device(rule, call)
    if not weighted and fits_one_launch(chosen, rule.bins):  # out written whole by the last block: no zeroing
        fn, shared = counting_kernel(rule, chosen, copies, call.device, aggregations=aggregations, one_launch=True)
        # `owner` holds the counters' memory until the launch is queued
        owner, counters = kept_counters(counter_bytes(chosen, rule.bins), call.device, call.stream)
        launch_one_count(fn, 0, call.stream, one_count_geometry(fn, chosen, data.size, rule, sms(call), shared),
                         int(data.gpudata), data.size, (rule.bins, *rule.arguments()), _address(edges), counters,
                         int(out.gpudata))
        return out
    call.memset32(out, 0, 2 * rule.bins)
    if chosen == plan.BYTES:
        byte_counts = call.scratch((256,), np.uint64)
        run_fast(data, 256, call=call, out=byte_counts)  # zeroes byte_counts; a byte b in bin b
        fn = get_kernel(KERNEL, FOLD, device=call.device, **rule.defines())
        fn.prepared_async_call((1, 1, 1), (256, 1, 1), call.stream, int(byte_counts.gpudata), np.int32(rule.bins),
                               *rule.arguments(), _address(edges), int(out.gpudata))
        return out
    fn, shared = counting_kernel(rule, chosen, copies, call.device, weights=weights.dtype if weighted else None,
                                 aggregations=aggregations)
    grid = plan.grid_size(data.size, rule.dtype.itemsize, weighted, sms(call), plan.private_counters(chosen, rule.bins))
    fn.prepared_async_call((grid, 1, 1), (plan.BLOCK, 1, 1), call.stream, int(data.gpudata),
                           int(weights.gpudata) if weighted else 0, np.int64(data.size), np.int32(rule.bins),
                           *rule.arguments(), _address(edges), int(out.gpudata), shared_size=shared)
    return out


# A uniform rule's arrays on the device (uniform rules are cached, below), kept per device while the rule is:
# uploaded once and waited for, so no later call on any stream waits for them.  A rule made from the data's range
# (range=None) is kept from its second use on: with new data every call has a range, and a rule, of its own, and
# its first use uploads them for itself, on its stream, with no wait (such a call is never captured into a CUDA
# graph: it reads the min and max back).  Explicit edges make a new rule per call, whose arrays go with it.
_device_constants: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # rule -> {(device, what): view | None}


def _constant(rule: plan.BinRule, what: str, host: np.ndarray, call):
    """The rule's kept device copy of `host` (uploaded and waited for here, the first time)."""
    per_device = _device_constants.setdefault(rule, {})
    view = per_device.get((call.device, what))
    if view is None:
        if driver.capturing(call.stream):  # the upload waits for itself: no place in a CUDA graph
            raise CaptureError(f"pyscan.histogram: this bin rule's {what} are uploaded to the device once, by the first "
                               "call that uses them, and that upload cannot be captured into a CUDA graph: make the "
                               "same call once before the capture (torch's warm-up), then capture it")
        host = np.ascontiguousarray(host)
        view = arrays.OWN.empty(host.shape, host.dtype, call.device, 0)  # the legacy stream: no caller's stream
        driver.copy_htod(view.gpudata, host.ctypes.data, host.nbytes, 0)  # owns it when it is freed
        driver.synchronize(0)
        per_device[(call.device, what)] = view
    return view


def _first_use(rule: plan.BinRule, what: str, call) -> bool:
    """Whether this call uploads the rule's array `what` for itself, on its stream, rather than take the rule's
    kept copy (_constant): explicit edges, and the first use on this device of a rule from the data's range."""
    if rule.mode != plan.UNIFORM:
        return True  # explicit edges: a rule per call
    if not rule.from_data:
        return False
    per_device = _device_constants.setdefault(rule, {})
    if (call.device, what) in per_device:
        return False
    per_device[(call.device, what)] = None  # the next use keeps a copy
    return True


def _rule_array(rule, what: str, host: np.ndarray, call):
    """One of a rule's arrays on the device: uploaded for this call, on its stream (_first_use), or the rule's kept
    copy (_constant)."""
    if _first_use(rule, what, call):
        return call.to_device(host)
    return _constant(rule, what, host, call)


def _edges_on_device(rule, call):
    """The edges the kernel reads (none for bincount)."""
    return None if rule.mode == plan.BINCOUNT else _rule_array(rule, "edges", rule.edges, call)


def _kernel_edges(rule, returned):
    """The device edges the call returns (a DeviceView, or None) where they are what the kernel reads: a uniform
    rule's, when the kernel compares in the edges' own dtype (all but float16 data)."""
    if returned is None or rule.mode != plan.UNIFORM or rule.edges.dtype != rule.bin_edges.dtype:
        return None
    return returned


def _address(view) -> int:
    return 0 if view is None else int(view.gpudata)


@functools.lru_cache(maxsize=16)
def _cached_uniform_rule(dtype_str: str, count: int, first: tuple, last: tuple, explicit_range: bool):
    rule = plan.uniform_rule(np.dtype(dtype_str), count, first[2], last[2], explicit_range=explicit_range)
    rule.edges.flags.writeable = rule.bin_edges.flags.writeable = False  # shared by every call: callers get copies
    return rule


def _uniform_rule(dtype, count: int, first, last, *, explicit_range: bool) -> plan.BinRule:
    """plan.uniform_rule, made once per (dtype, bins, range) of the last 16 (NumPy's edges of 2^20 bins take
    milliseconds to make)."""
    return _cached_uniform_rule(np.dtype(dtype).str, count, plan.scalar_key(first), plan.scalar_key(last),
                                explicit_range)


def min_max_defines(dtype) -> dict:
    """min_max.cu's #defines for data of dtype (MinMax's build, and the tests' CPU emulator's)."""
    return {"VALUE_T": plan.VALUE_C_TYPES[dtype], "VALUE_IS_HALF": int(dtype == np.float16),
            "KEY_T": plan.VALUE_C_TYPES[plan.key_dtype(dtype)], "MIN_MAX_BLOCK": plan.MIN_MAX_BLOCK}


class MinMax:
    """min_max.cu's pass for one dtype on one device: its kernel and the identities its blocks start from."""

    __slots__ = ("dtype", "key_dtype", "fn", "identities")

    def __init__(self, dtype, device: int):
        self.dtype, self.key_dtype = dtype, plan.key_dtype(dtype)
        self.fn = get_kernel("histogram/min_max.cu", "min_max_partials", device=device, **min_max_defines(dtype))
        self.identities = tuple(plan._kernel_number(v) for v in plan._lowest_highest(dtype))

    def __call__(self, address: int, n: int, device: int, stream: int, sms_: int) -> tuple:
        """(min, max) of the n > 0 values at `address` as NumPy scalars of the dtype ((nan, nan) if one is NaN, as
        NumPy's a.min() and a.max()): the block partials, copied back (this waits) and finished on the host.  A
        context of the device is current."""
        return self.read(*self.launch(address, n, device, stream, sms_))

    def launch(self, address: int, n: int, device: int, stream: int, sms_: int) -> tuple:
        """The pass queued on `stream`: (its partials, their grid, the stream) for read()."""
        grid = plan.min_max_grid(n, self.dtype.itemsize, sms_)
        slot = grid * self.key_dtype.itemsize  # a multiple of 8 (min_max_grid): the arrays back to back, aligned
        scratch = driver.allocate(2 * slot + 4 * grid, device, stream)  # freed on the stream
        base = scratch.address
        self.fn.prepared_async_call((grid, 1, 1), (plan.MIN_MAX_BLOCK, 1, 1), stream, address, np.int64(n),
                                    *self.identities, base, base + slot, base + 2 * slot)
        return scratch, grid, stream

    def read(self, scratch, grid: int, stream: int) -> tuple:
        """The launched pass's partials copied back (this waits for the pass) and finished: (min, max)."""
        slot = grid * self.key_dtype.itemsize
        host = np.empty(2 * slot + 4 * grid, np.uint8)
        driver.copy_dtoh(host.ctypes.data, scratch.address, host.nbytes, stream)
        return numpy_models.finish_min_max(host[:slot].view(self.key_dtype), host[slot:2 * slot].view(self.key_dtype),
                                           host[2 * slot:].view(np.int32), self.dtype)


_min_maxes: dict = {}  # (dtype, device) -> MinMax


def _min_max(dtype, device: int) -> MinMax:
    made = _min_maxes.get((dtype, device))
    if made is None:
        made = _min_maxes[(dtype, device)] = MinMax(dtype, device)
    return made


def device_min_max(data, call) -> tuple:
    """(min, max) of a non-empty contiguous device array of the call (MinMax)."""
    return _min_max(np.dtype(data.dtype), call.device)(int(data.gpudata), data.size, call.device, call.stream,
                                                         sms(call))


def data_range(first, last) -> tuple:
    """The data's (min, max) as NumPy's range=None takes them: ValueError where one is not finite (NaN, inf)."""
    if not (math.isfinite(first) and math.isfinite(last)):  # NumPy scalars of a real dtype (ints are finite)
        raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    return first, last


def _launch_convert(sums, out, call):
    dtype = np.dtype(out.dtype)
    fn = get_kernel("histogram/histogram_finish.cu", "histogram_convert", device=call.device,
                    OUT_T=plan.VALUE_C_TYPES[dtype], OUT_IS_HALF=int(dtype == np.float16))
    grid = max(1, min(-(-sums.size // 256), 4 * sms(call)))
    fn.prepared_async_call((grid, 1, 1), (256, 1, 1), call.stream, int(sums.gpudata), int(out.gpudata),
                           np.int64(sums.size))


def _launch_density(sums, rule, out, call):
    widths = _rule_array(rule, "widths", np.array(np.diff(rule.bin_edges), float), call)
    sum_type = "double" if np.dtype(sums.dtype).kind == "f" else "unsigned long long"
    fn = get_kernel("histogram/histogram_finish.cu", "histogram_density", device=call.device, SUM_T=sum_type)
    fn.prepared_async_call((1, 1, 1), (1024, 1, 1), call.stream, int(sums.gpudata), int(widths.gpudata),
                           np.int32(sums.size), int(out.gpudata))


# ---- arguments -----------------------------------------------------------------------------------------------

def _prepared(x):
    """x as arrays.begin takes it: a list, tuple or number as a NumPy array (as NumPy's array_like); a CuPy or torch
    array that is not contiguous copied by its own library (a histogram does not depend on the order)."""
    kind = arrays.kind_of(x)
    if kind is None:
        if isinstance(x, (list, tuple, int, float, np.generic)) and not isinstance(x, bool):
            return np.asarray(x)
        return x
    if kind is arrays.CUPY and not x.flags.c_contiguous:
        return sys.modules["cupy"].ascontiguousarray(x)
    if kind is arrays.TORCH and x.is_cuda and not x.is_contiguous():
        return x.contiguous()
    return x


def _is_device(x) -> bool:
    kind = arrays.kind_of(x)
    return kind is not None and kind is not arrays.NUMPY


def _begin_weights(weights, call, what: str, stream, shape_message: str):
    """The weights' Call, checked against x's: the same side (host or device), device and size."""
    weights_call = arrays.begin(_prepared(weights), what=what, dtypes=plan.VALUE_DTYPES, ndim=None, stream=stream)
    if (weights_call.kind is arrays.NUMPY) != (call.kind is arrays.NUMPY):
        side = "a NumPy array" if call.kind is arrays.NUMPY else "a device array"
        raise TypeError(f"{what}: expected {side} like x, got {arrays.describe(weights)}")
    if weights_call.shape != call.shape:
        raise ValueError(f"{shape_message} (x: {call.shape}, weights: {weights_call.shape})")
    if weights_call.kind is not arrays.NUMPY and weights_call.device != call.device:
        raise ValueError(f"{what}: on device {weights_call.device}, but x is on device {call.device}")
    return weights_call


def _weights_on_device(weights_call, call):
    if weights_call is None:
        return None
    if weights_call.host is not None:
        return call.to_device(np.ascontiguousarray(weights_call.host).ravel())
    return weights_call.x


def _device_edges_to_host(bins, stream) -> np.ndarray:
    edges_call = arrays.begin(_prepared(bins), what="histogram: bins", dtypes=plan.EDGE_DTYPES, ndim=1, stream=stream)
    with edges_call:
        host = np.empty(edges_call.shape, edges_call.dtype)
        driver.copy_dtoh(host.ctypes.data, int(edges_call.x.gpudata), host.nbytes, edges_call.stream)
    return host


def _edges_out(call, rule: plan.BinRule, bins) -> tuple:
    """(bin_edges in the caller's kind, their DeviceView or None): NumPy's array for NumPy input (a copy of a cached
    rule's); for device input the caller's own edges array when it passed one (NumPy returns np.asarray(bins)),
    else a new array of its kind, on the call's stream: uploaded into (_first_use), or copied from the rule's kept
    device copy (_constant)."""
    bin_edges = rule.bin_edges
    if call.kind is arrays.NUMPY:
        return (bin_edges if bin_edges.flags.writeable else bin_edges.copy()), None
    if _is_device(bins):
        return bins, None
    edges = call.empty(bin_edges.shape, bin_edges.dtype)
    if _first_use(rule, "bin_edges", call):
        call.upload(edges, bin_edges)
    else:
        call.copy(edges, _constant(rule, "bin_edges", bin_edges, call), bin_edges.nbytes)
    return call.finish(edges), edges


def _finish(call, sums, rule, result_dtype, density: bool):
    """The histogram in the caller's kind: counts (int64), sums converted to the weights' dtype, or the density."""
    if density and call.kind is arrays.NUMPY:
        counts = call.finish(sums)
        if result_dtype != counts.dtype:
            counts = counts.astype(result_dtype)
        return plan.density(counts, rule.bin_edges)
    if density:
        out = call.empty((rule.bins,), np.float64)
        if rule.bins:
            _launch_density(sums, rule, out, call)
        return call.finish(out)
    if np.dtype(sums.dtype) == result_dtype:
        return call.finish(sums)
    out = call.empty((rule.bins,), result_dtype)
    if rule.bins:
        _launch_convert(sums, out, call)
    return call.finish(out)


# ---- the commonest call, made whole -----------------------------------------------------------------------------
# histogram(x, int bins, range=(lo, hi)) of a 1-D contiguous device array with no weights and no density: after a
# first call has made its rule, a ReadyHistogram per (dtype, bins, range with its types, device) holds what that
# call worked out (the kernels, their geometry and shared memory, the rule's arguments, the edges on the device),
# and a call is one look-up, two allocations of x's kind (the counts and the edges it returns, made like x) and one
# launch in the device's primary context, nothing entered (numpy_histogram_once: the edges copied, the count, the
# histogram written by the last block from counters kept zero per stream), for the private copies (SHARED) and for
# 1-byte data up to ONE_LAUNCH_MOST_BINS.
# More bins: histogram_start.cu (the counters zeroed, the edges copied), then count_into's launches (GLOBAL: the
# atomics; BYTES: fast.cu's byte counts, then the fold).  On a GPU host each launch and allocation is several µs of
# host time, most of a call up to 2^20 elements (pyscan_tools/lab/histogram_call_profile.py).
START = ("histogram/histogram_start.cu", "histogram_start")
START_BLOCK = 256
ONE_LAUNCH_MOST_BINS = plan.SHARED_BYTES // 4  # SHARED's most bins; the last block of BYTES zeroes the histogram
TICKET_BYTES = 16  # the kept counters' buffer: the ticket, then the counters (8 bytes each)
_kept_counters = StreamWorkspace("histogram counters")


def fits_one_launch(chosen: str, bins: int) -> bool:
    """Whether counts of strategy `chosen` are made in one launch (ONE_LAUNCH): the private copies (SHARED), and
    the byte values (BYTES) up to ONE_LAUNCH_MOST_BINS, whose histogram the last block zeroes before the fold."""
    return chosen == plan.SHARED or (chosen == plan.BYTES and bins <= ONE_LAUNCH_MOST_BINS)


def counter_bytes(chosen: str, bins: int, extremes: bool = False) -> int:
    """The kept counters of a one-launch count: the ticket, then 8 bytes for each bin (each byte value: BYTES), and
    the two extremes of bincount's one pass."""
    return TICKET_BYTES + 8 * (plan.private_counters(chosen, bins) + (2 if extremes else 0))


def kept_counters(nbytes: int, device: int, stream: int):
    """(owner, address) of nbytes that are zero when a one-launch count starts on `stream` and that it leaves zero: the
    stream's kept buffer, or under a CUDA graph capture capture.zeroed's: a piece of memory the graph keeps, or the
    call's own, zeroed by a memset node -- as the fast reduction's ticket (runtime/capture.py)."""
    if driver._capturing(stream) and driver.capturing(stream, device):
        return capture.zeroed(nbytes, device, stream)
    kept = _kept_counters.get(nbytes, device, stream)
    return kept, kept.address


def one_count_geometry(fn, chosen: str, n: int, rule: plan.BinRule, sms_: int, shared: int) -> tuple:
    """The geometry (Kernel.config) of numpy_histogram_once of strategy `chosen` over n values of the rule's dtype."""
    grid = plan.grid_size(n, rule.dtype.itemsize, False, sms_, plan.private_counters(chosen, rule.bins))
    return fn.config((grid, 1, 1), (plan.BLOCK, 1, 1), shared)


def kept_geometry(geometries: dict, fn, chosen: str, n: int, rule: plan.BinRule, sms_: int, shared: int) -> tuple:
    """one_count_geometry for n, kept in `geometries` (n -> geometry; the newest 64 lengths): a ready call's."""
    geometry = geometries.get(n)
    if geometry is None:
        if len(geometries) >= 64:
            geometries.clear()
        geometry = geometries[n] = one_count_geometry(fn, chosen, n, rule, sms_, shared)
    return geometry


def launch_one_count(fn, context: int, stream: int, geometry: tuple, address: int, n: int, numbers, edges: int,
                     counters: int, out: int, copy=(0, 0, 0)) -> None:
    """numpy_histogram_once (counting_kernel(..., one_launch=True)) over the n values at `address` with its
    geometry (one_count_geometry), in `context` (0: the current one): rule.bins counts into `out`, through the kept
    counters at `counters` (kept_counters).  numbers: the bin count and the rule's arguments; edges: the rule's
    edges on the device; copy: (source, destination, bytes) of the bin edges the call returns, which the grid
    copies on its way in (ReadyHistogram), or none; numpy_bincount_global (the same arguments up to `out`): its
    extremes' address alone (BincountPass)."""
    fn.launch_typed(context, stream, geometry, address, n, *numbers, edges, counters + TICKET_BYTES, counters, out,
                    *copy)


class ReadyHistogram:
    __slots__ = ("rule", "fn", "shared", "arguments", "edges", "bin_edges", "edges_at", "bin_edges_at", "sms",
                 "byte_counter", "start", "start_grid", "one_launch", "counter_bytes", "context", "geometries")

    def __init__(self, rule: plan.BinRule, fn, shared: int, edges, bin_edges, sms_: int, start, byte_counter=None,
                 one_launch=None, context: int = 0):
        self.rule, self.fn, self.shared, self.sms, self.start = rule, fn, shared, sms_, start
        self.arguments = (rule.bins, *rule.arguments())  # Python numbers (the launcher packs those fastest)
        self.edges, self.bin_edges = edges, bin_edges  # the rule's device constants (kept while the rule is)
        self.edges_at, self.bin_edges_at = _address(edges), _address(bin_edges)  # their addresses, read once
        self.byte_counter = byte_counter  # BYTES: fast.cu's kernel and shared memory; fn is then the fold
        self.one_launch = one_launch  # SHARED or BYTES: fn counts and finishes in one launch (the strategy)
        self.counter_bytes = counter_bytes(one_launch, rule.bins) if one_launch is not None else 0
        jobs = max(rule.bins, 256, rule.bin_edges.nbytes // 4)
        self.start_grid = max(1, min(-(-jobs // START_BLOCK), 4 * sms_))
        # the one launch's own: the device's primary context it launches in (nothing entered, as the scan's ready
        # call), and its geometry per length, worked out once
        self.context = context
        self.geometries: dict = {}

    def __call__(self, kind, x, address: int, n: int, device: int, stream: int):
        if self.one_launch is None:
            return self._start_and_count(kind, x, address, n, device, stream)
        rule, bin_edges = self.rule, self.rule.bin_edges
        hist, out = kind.new_shaped(x, (rule.bins,), plan.COUNT_DTYPE, device, stream)
        edges, edges_to = kind.new_shaped(x, bin_edges.shape, bin_edges.dtype, device, stream)
        owner, counters = kept_counters(self.counter_bytes, device, stream)  # owner: held until the launch is queued
        geometry = kept_geometry(self.geometries, self.fn, self.one_launch, n, rule, self.sms, self.shared)
        copy = (self.bin_edges_at, edges_to, bin_edges.nbytes)  # the edges returned, copied by the grid
        launch_one_count(self.fn, self.context, stream, geometry, address, n, self.arguments, self.edges_at, counters,
                         out, copy)
        return hist, edges

    def _start_and_count(self, kind, x, address, n, device, stream):
        """More bins than one launch counts: histogram_start, then count_into's launches, in the device's context."""
        rule, bin_edges = self.rule, self.rule.bin_edges
        byte_path = n and self.byte_counter is not None  # as count_into's BYTES: the 256 byte values, then the fold
        previous = driver.enter(device)
        try:
            hist = kind.empty((rule.bins,), plan.COUNT_DTYPE, device, stream)
            edges = kind.empty(bin_edges.shape, bin_edges.dtype, device, stream)
            out, counts = kind.pointer(hist), 0
            if byte_path:
                byte_counts = kind.empty((256,), plan.COUNT_DTYPE, device, stream)  # uint64 to the kernels
                counts = kind.pointer(byte_counts)
            self.start.prepared_async_call((self.start_grid, 1, 1), (START_BLOCK, 1, 1), stream, out,
                                           np.int64(rule.bins), counts, np.int64(256 if byte_path else 0),
                                           self.bin_edges_at, kind.pointer(edges), np.int64(bin_edges.nbytes))
            if byte_path:
                counter, shared = self.byte_counter
                grid, block = fast_config(n, self.sms)
                counter.prepared_async_call((grid, 1, 1), (block, 1, 1), stream, address, np.int64(n), np.int32(256),
                                            counts, shared_size=shared)
                self.fn.prepared_async_call((1, 1, 1), (256, 1, 1), stream, counts, *self.arguments,
                                            self.edges_at, out)
            elif n:
                grid = plan.grid_size(n, rule.dtype.itemsize, False, self.sms)
                self.fn.prepared_async_call((grid, 1, 1), (plan.BLOCK, 1, 1), stream, address, 0, np.int64(n),
                                            *self.arguments, self.edges_at, out, shared_size=self.shared)
        finally:
            driver.leave(previous)
        return hist, edges


_ready: dict = {}  # (dtype, bins, range's types and values, device) -> ReadyHistogram, the READY_KEPT newest
READY_KEPT = 16  # as many as the uniform rules kept (_cached_uniform_rule)


def _ready_key(dtype, bins: int, range_, device: int):
    """The look-up key of the commonest call, or None (a range that is not a pair): the range's types go with its
    values (np.float64(0) and 0 give NumPy different edges dtypes, and are equal)."""
    try:
        first, last = range_
    except (TypeError, ValueError):
        return None
    return (dtype, bins, type(first), first, type(last), last, device)


def _keep_ready(key, rule: plan.BinRule, call) -> None:
    """After a general call that the commonest path could have taken: keep what it worked out."""
    chosen, copies = plan.choose_strategy(rule.bins, False, None, rule.dtype.itemsize)
    while len(_ready) >= READY_KEPT:  # the oldest goes (with the device copies of its edges)
        _ready.pop(next(iter(_ready)), None)
    byte_counter, shared, one_launch = None, 0, None
    if fits_one_launch(chosen, rule.bins):
        one_launch = chosen
        fn, shared = counting_kernel(rule, chosen, copies, call.device, one_launch=True)
        capture.prepare_kept(call.device)  # made outside any capture: a captured call's counters without a memset
    elif chosen == plan.BYTES:  # count_into's two launches: fast.cu's byte counts, then the fold
        fn = get_kernel(KERNEL, FOLD, device=call.device, **rule.defines())
        byte_counter = (fast_kernel(call.device), fast_shared(256))
    else:
        fn, shared = counting_kernel(rule, chosen, copies, call.device)
    start = None if one_launch is not None else get_kernel(*START, device=call.device)
    _ready[key] = ReadyHistogram(rule, fn, shared, _constant(rule, "edges", rule.edges, call),
                                 _constant(rule, "bin_edges", rule.bin_edges, call), sms(call), start,
                                 byte_counter, one_launch, driver.primary(call.device))


# ---- a range from the data, made whole ----------------------------------------------------------------------------
# histogram(x, int bins) with range=None of a non-empty 1-D contiguous device array, no weights, no density, where
# the bins fit one launch (not for float16 data, whose kernel compares in float32): the range is new whenever the
# data is, so nothing of the rule can be kept; a FreshRange per (dtype, bins, device) keeps the rest (min_max.cu's
# pass, the strategy, the counting kernels met so far by their #defines, the geometry per length), and a call is
# the min and max read back (the one wait NumPy's contract asks for: the edges are made from them on the host), the
# rule (_uniform_rule), the edges uploaded into the array returned, and the one launch, which reads them.

class FreshRange:
    __slots__ = ("dtype", "bins", "device", "sms", "chosen", "copies", "counter_bytes", "min_max", "context",
                 "kernels", "geometries", "edges_dtype")

    def __init__(self, dtype, bins: int, device: int, sms_: int, min_max: MinMax, edges_dtype):
        self.dtype, self.bins, self.device, self.sms, self.min_max = dtype, bins, device, sms_, min_max
        self.edges_dtype = edges_dtype  # NumPy's bin type for a range of the data's own scalars (own_range_types)
        self.chosen, self.copies = plan.choose_strategy(bins, False, None, dtype.itemsize)
        self.counter_bytes = counter_bytes(self.chosen, bins)
        self.context = driver.primary(device)
        self.kernels: dict = {}  # the rule's #defines' values -> (its one-launch kernel, dynamic shared bytes)
        self.geometries: dict = {}  # n -> the launch's geometry (the newest 64 lengths)

    def __call__(self, kind, x, address: int, n: int, stream: int):
        driver.refuse_capture(stream, "pyscan.histogram with range=None (its range is read back from the device)")
        previous = driver.enter(self.device)  # the copies need it current (a CuPy or torch thread's already is)
        try:
            partials = self.min_max.launch(address, n, self.device, stream, self.sms)
            # the arrays returned, made while the pass runs (before the wait for it)
            hist, out = kind.new_shaped(x, (self.bins,), plan.COUNT_DTYPE, self.device, stream)
            edges, edges_to = kind.new_shaped(x, (self.bins + 1,), self.edges_dtype, self.device, stream)
            first, last = data_range(*self.min_max.read(*partials))
            rule = _uniform_rule(self.dtype, self.bins, first, last, explicit_range=False)
            key = tuple(rule.defines().values())
            made = self.kernels.get(key)
            if made is None:
                made = self.kernels[key] = counting_kernel(rule, self.chosen, self.copies, self.device,
                                                           one_launch=True)
            fn, shared = made
            bin_edges = rule.bin_edges
            if bin_edges.dtype != self.edges_dtype:  # (the data's own scalars give that type: a guard, not a way)
                edges, edges_to = kind.new_shaped(x, bin_edges.shape, bin_edges.dtype, self.device, stream)
            driver.upload(edges_to, bin_edges.ctypes.data, bin_edges.nbytes, stream)
            owner, counters = kept_counters(self.counter_bytes, self.device, stream)  # held until queued
            geometry = kept_geometry(self.geometries, fn, self.chosen, n, rule, self.sms, shared)
            launch_one_count(fn, self.context, stream, geometry, address, n, (self.bins, *rule.arguments()), edges_to,
                             counters, out)
            return hist, edges
        finally:
            driver.leave(previous)


_fresh: dict = {}  # (dtype, bins, device) -> FreshRange, the READY_KEPT newest


def _keep_fresh(key, call) -> None:
    """After a general call with range=None that the fresh-range path could have taken: keep a FreshRange."""
    dtype, bins, device = key
    chosen, _ = plan.choose_strategy(bins, False, None, dtype.itemsize)
    own = plan.own_range_types(dtype)
    if dtype == np.float16 or not fits_one_launch(chosen, bins) or own is None:
        return
    while len(_fresh) >= READY_KEPT:
        _fresh.pop(next(iter(_fresh)), None)
    _fresh[key] = FreshRange(dtype, bins, device, sms(call), _min_max(dtype, device), own[0])


# ---- the public functions ------------------------------------------------------------------------------------

def histogram(x, bins=10, range=None, weights=None, density=False, *, stream=None):  # noqa: A002  NumPy's names
    """np.histogram on the GPU: (hist, bin_edges) with NumPy's meaning, for any integer or float array.

    x: int8..int64, uint8..uint64, float16, float32 or float64, of any shape (flattened, as NumPy does): a NumPy
    array (or a list), or a device array -- CuPy, torch CUDA tensor, pycuda GPUArray, Numba, any
    __cuda_array_interface__ object -- used where it is (a non-contiguous CuPy or torch view is first made
    contiguous by its library).  bins: an int (equal bins over the range) or a monotonically increasing 1-D array
    of edges, host or device.  range: (min, max), or None for the data's min and max (one pass over the data on
    the device, whose result comes to the host to make NumPy's edges).  Values outside the range are not counted;
    the last bin is closed on the right; NaN is not counted with an explicit range or edges, and with range=None
    it raises ValueError, as in NumPy.  weights: an array of x's shape of any of those dtypes, on x's side (host
    or device): the histogram is then the sums of the weights, in the weights' dtype (summed in float64 on the
    device).  density: NumPy's n / db / n.sum() (float64).

    Returns (hist, bin_edges): int64 counts like NumPy's; the edges NumPy would return (float64 for integer data,
    the data's float type for floats, or the edges given).  NumPy input gives NumPy arrays; device input gives
    arrays of its kind on its device (the edges made from the host's, or the bins array given), on the call's
    stream (`stream=` as for pyscan.scan).  Bin indices are NumPy's to the bit, values on edges included.
    """
    kind = arrays.READY.get(type(x))
    if kind is None and arrays.kind_of(x) is not None:  # a device kind's first call (kind_of registers it) keeps too
        kind = arrays.READY.get(type(x))
    ready_key = fresh_key = None
    if kind is not None and type(bins) is int and weights is None and density is False and stream is None:
        read = kind.ready(x)  # a 1-D contiguous device array: (address, n, dtype, device, stream)
        if read is not None and read[2] in plan.VALUE_DTYPES:
            if range is None:
                fresh_key = (read[2], bins, read[3])
                made = _fresh.get(fresh_key)
                if made is not None and read[1]:  # an empty array: the general path (NumPy's range (0, 1))
                    return made(kind, x, read[0], read[1], read[4])
            else:
                ready_key = _ready_key(read[2], bins, range, read[3])
                try:
                    made = _ready.get(ready_key)
                except TypeError:  # an unhashable range end: the general path checks it
                    made = ready_key = None
                if made is not None:
                    return made(kind, x, read[0], read[1], read[3], read[4])
    x = _prepared(x)
    call = arrays.begin(x, what="histogram: x", dtypes=plan.VALUE_DTYPES, ndim=None, stream=stream)
    device_bins = _is_device(bins)
    rule = count = None
    if device_bins:
        rule = plan.edges_rule(call.dtype, _device_edges_to_host(bins, stream))
    elif np.ndim(bins) == 0:
        if isinstance(bins, str):
            raise TypeError(f"`bins`: the estimators of NumPy ({bins!r}) are not supported: pass an int or edges")
        count = plan.check_bins_count(bins)
        if range is not None:
            first, last = plan.check_range(range)
            rule = _uniform_rule(call.dtype, count, first, last, explicit_range=True)
    else:
        rule = plan.edges_rule(call.dtype, bins)
    if not isinstance(density, (bool, np.bool_)) and density is not None:
        raise TypeError(f"density must be a bool, got {arrays.describe(density)}")
    weights_call = None
    if weights is not None:
        weights_call = _begin_weights(weights, call, "histogram: weights", stream,
                                      "weights should have the same shape as a.")
    result_dtype = np.dtype(weights_call.dtype) if weights_call is not None else plan.COUNT_DTYPE
    with call:
        if rule is None:  # bins=int, range=None: NumPy's range is the data's min and max
            if call.size == 0:
                first, last = 0, 1
            else:
                first, last = data_range(*device_min_max(call.x, call))
            rule = _uniform_rule(call.dtype, count, first, last, explicit_range=False)
        device_weights = _weights_on_device(weights_call, call)
        sums_dtype = plan.SUM_DTYPE if device_weights is not None else plan.COUNT_DTYPE
        if sums_dtype == result_dtype and not density:
            sums = call.empty((rule.bins,), sums_dtype)
        else:
            sums = call.scratch((rule.bins,), sums_dtype)
        edges, edges_view = _edges_out(call, rule, bins)  # first: the kernel may read them (_kernel_edges)
        count_into(call.x, device_weights, rule, sums, call=call, edges=_kernel_edges(rule, edges_view))
        hist = _finish(call, sums, rule, result_dtype, bool(density))
        if ready_key is not None and call.size:
            _keep_ready(ready_key, rule, call)
        elif fresh_key is not None and call.size:
            _keep_fresh(fresh_key, call)
        return hist, edges


def bincount(x, weights=None, minlength=0, *, stream=None):
    """np.bincount on the GPU: the number of occurrences of each value 0 .. max(x) in a 1-D array of non-negative
    integers (int8..int64, uint8..uint64), at least `minlength` bins.

    The length needs max(x), read back from the device (as is whether any value is negative, which raises
    ValueError as NumPy does): for counts of 2- to 8-byte integers the pass that counts finds it where the last
    call's length on the same dtype and device was long enough, or where minlength is past the private copies'
    bins (up to 2^24 values: the pass counts into the result then); else a pass for it comes first
    (docs/histogram.md, "bincount in one pass").  weights: an array of x's length, on x's side (host or device): the
    result is then the float64 sums of the weights of each value, as NumPy's.  Counts are int64.  NumPy input gives a
    NumPy array, device input an array of its kind on its device, on the call's stream.
    """
    kind = arrays.READY.get(type(x))
    extremes = None  # the data's (least, greatest) where the ready call's pass found them past its bins
    if kind is not None and weights is None and stream is None and type(minlength) is int and minlength >= 0:
        read = kind.ready(x)  # a 1-D contiguous device array: (address, n, dtype, device, stream)
        if read is not None and read[1] and read[2] in plan.BINCOUNT_DTYPES:
            made, extremes = _ready_bincount(kind, x, read, minlength)
            if made is not None:
                return made
    x = _prepared(x)
    call = arrays.begin(x, what="bincount: x", dtypes=plan.BINCOUNT_DTYPES, ndim=1, stream=stream)
    if isinstance(minlength, (bool, np.bool_)):
        raise TypeError("minlength must be an int, got a bool")
    try:
        minlength = operator.index(minlength)
    except TypeError:
        raise TypeError(f"minlength must be an int, got {arrays.describe(minlength)}") from None
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    weights_call = None
    if weights is not None:
        weights_call = _begin_weights(weights, call, "bincount: weights", stream,
                                      "The weights and list don't have the same length.")
    with call:
        length, counted, result = minlength, None, None
        if call.size:
            if extremes is not None:  # read by the ready call's pass: the count below is the data's second read
                low, high = extremes
            elif weights_call is None:
                low, high, counted, result = _count_in_one_pass(call, minlength)
            else:
                low, high = device_min_max(call.x, call)
            length = _bincount_length(low, high, minlength)
        rule = plan.bincount_rule(call.dtype, length)  # (kept per dtype and length; it refuses too many bins)
        if weights_call is None:
            _expected_lengths[(call.dtype, call.device)] = length
        if result is not None and length == minlength:  # the global pass counted every value into it
            return call.finish(result)
        device_weights = _weights_on_device(weights_call, call)
        out = call.empty((length,), plan.SUM_DTYPE if device_weights is not None else plan.COUNT_DTYPE)
        if counted is not None and length <= counted.size - 2:  # the one pass's bins held every value
            call.copy(out, counted, 8 * length)
        else:
            count_into(call.x, device_weights, rule, out, call=call)
        return call.finish(out)


# ---- bincount's one pass ---------------------------------------------------------------------------------------
# The counts below a guess of the result's length and the data's extremes in one read (numpy_histogram_once's
# EXTREMES build; docs/histogram.md, "bincount in one pass").  The guess is the last call's length on the same dtype
# and device (or minlength); where the greatest value is not below it, the data are counted again with the right
# bins.  A 1-D contiguous device array without weights takes it without a Call after its dtype's first call made
# the pass (_ready_bincount, as histogram's ReadyHistogram); the general path takes it too.  A minlength past the
# private copies' most bins is a length the result has whatever the data: the pass then counts on the global
# histogram, into the result itself, up to numpy_plan.GLOBAL_PASS_MOST_VALUES values (BincountPass,
# numpy_plan.global_pass).
_expected_lengths: dict = {}  # (dtype, device) -> the length of its last bincount without weights
_one_passes: dict = {}  # (dtype, device, bins) -> BincountPass over bins private counters
_global_passes: dict = {}  # (dtype, device) -> BincountPass on the global histogram (bins None)


def _guessed_bins(dtype, device: int, minlength: int):
    """The one pass's bins for a call: plan.one_pass_bins of the larger of minlength and the last call's length on
    the dtype and device (None: past the pass's most bins)."""
    return plan.one_pass_bins(max(minlength, _expected_lengths.get((dtype, device), 0)))


def _bincount_length(low, high, minlength: int) -> int:
    """np.bincount's length from the data's least and greatest value; ValueError for a negative value, as NumPy."""
    if low < 0:
        raise ValueError(f"'list' argument must have no negative elements (found {low})")
    return max(minlength, int(high) + 1)


class BincountPass:
    """bincount's one pass for one dtype and device: its kernel, arguments and kept counters' size, its geometry per
    length, and the device's primary context (the ready call launches in it).  bins: the private copies' counters
    (numpy_histogram_once's EXTREMES build), the counts and then the extremes into bins + 2 words; None: the pass on
    the global histogram (GLOBAL_PASS), where the caller's minlength alone puts the result past the private copies
    (plan.global_pass): the counts below the call's bins straight into the result, zeroed first, the extremes into 16
    bytes of their own.  A bincount rule's build and arguments are its dtype's whatever its length, so one global
    kernel serves every minlength."""

    __slots__ = ("rule", "device", "bins", "chosen", "fn", "shared", "arguments", "counter_bytes", "sms", "context",
                 "geometries")

    def __init__(self, dtype, device: int, sms_: int, bins: int | None = None):
        on_global = bins is None
        self.rule = rule = plan.bincount_rule(dtype, plan.ONE_PASS_MOST_BINS + 1 if on_global else bins)
        self.chosen, copies = (plan.GLOBAL, 0) if on_global else plan.choose_strategy(bins, False, None, dtype.itemsize)
        self.fn, self.shared = counting_kernel(rule, self.chosen, copies, device, one_launch=not on_global,
                                               extremes=True)
        self.device, self.bins, self.sms = device, bins, sms_
        self.arguments = rule.arguments()
        self.counter_bytes = counter_bytes(self.chosen, rule.bins, extremes=True)  # GLOBAL: the ticket, the extremes
        self.context = driver.primary(device)
        self.geometries: dict = {}  # n -> the launch's geometry (the newest 64 lengths)

    def count(self, address: int, n: int, stream: int, out: int, context: int, *, bins=0, extremes=0) -> tuple:
        """Count the n values at `address` into `out` in `context` (self.context, or 0: the current one) and read their
        extremes back (this waits): (least, greatest) as Python ints.  The private copies' `out`: bins + 2 device words,
        the counts then the extremes; the global pass's: `bins` device int64s, zeroed here first, the extremes into
        `extremes` (16 device bytes).  A context of the device is current."""
        driver.refuse_capture(stream, "pyscan.bincount (its length is read back from the device)")  # before a launch
        if self.bins is None:  # the global pass adds its counts into the result (PMPP §9.3)
            driver.memset32(out, 0, 2 * bins, stream)
            last = (extremes,)  # numpy_bincount_global's last argument, where numpy_histogram_once's copy comes
        else:
            bins, extremes, last = self.bins, out + 8 * self.bins, (0, 0, 0)  # numpy_histogram_once's: no edges to copy
        owner, counters = kept_counters(self.counter_bytes, self.device, stream)  # owner: held until queued
        geometry = kept_geometry(self.geometries, self.fn, self.chosen, n, self.rule, self.sms, self.shared)
        launch_one_count(self.fn, context, stream, geometry, address, n, (bins, *self.arguments), 0, counters, out, last)
        words = np.empty(2, np.uint64)
        driver.copy_dtoh(words.ctypes.data, extremes, words.nbytes, stream)
        return plan.extremes_of(words, self.rule.dtype)


def _kept_pass(call, bins: int | None) -> BincountPass:
    """The call's dtype and device's pass over `bins` private counters, or (None) on the global histogram: made by
    its first call, kept."""
    if bins is None:
        passes, key = _global_passes, (call.dtype, call.device)
    else:
        passes, key = _one_passes, (call.dtype, call.device, bins)
    made = passes.get(key)
    if made is None:
        made = passes[key] = BincountPass(call.dtype, call.device, sms(call), bins)
    return made


def _count_in_one_pass(call, minlength: int) -> tuple:
    """(least, greatest, counted, result) of the call's non-empty integer data: the one pass over
    plan.one_pass_bins of the expected length into `counted` (bins + 2 device words, the extremes last), which holds
    bincount's result where greatest < bins; or, where minlength is past those bins and the data are not too many
    (plan.global_pass), the global pass into `result` (an array of the call's kind of minlength counts: bincount's
    result where greatest < minlength).  Both None where neither pass was made (min_max.cu's pass then)."""
    if plan.global_pass(minlength, call.size) and call.dtype.itemsize > 1:
        result = call.empty((minlength,), plan.COUNT_DTYPE)
        extremes = call.scratch((2,), np.uint64)
        low, high = _kept_pass(call, None).count(int(call.x.gpudata), call.size, call.stream, int(result.gpudata), 0,
                                                 bins=minlength, extremes=int(extremes.gpudata))  # the call's context
        return low, high, None, result
    bins = _guessed_bins(call.dtype, call.device, minlength)
    if bins is None or call.dtype.itemsize == 1:  # 1-byte data: count_into's byte values, after min_max.cu
        low, high = device_min_max(call.x, call)
        return low, high, None, None
    counted = call.scratch((bins + 2,), np.uint64)
    low, high = _kept_pass(call, bins).count(int(call.x.gpudata), call.size, call.stream, int(counted.gpudata),
                                             0)  # the call's context
    return low, high, counted, None


def _ready_bincount(kind, x, read, minlength: int):
    """(result, None): bincount(x, minlength=...) of a non-empty 1-D contiguous device array of integers
    (kind.ready's `read`) where the pass its expected length asks for was made by an earlier call: one look-up, the
    pass in the device's context (entered only if it is not current), the result made like x -- counted into by the
    global pass (plan.global_pass: minlength counts), copied from the private copies' pass.  (None, None) where there
    is no such pass; (None, (least, greatest)) where the data's greatest value is past it: the general path then
    counts, with those extremes."""
    address, n, dtype, device, stream = read
    on_global = plan.global_pass(minlength, n)
    bins = minlength if on_global else _guessed_bins(dtype, device, minlength)
    made = _global_passes.get((dtype, device)) if on_global else _one_passes.get((dtype, device, bins))
    if made is None:  # none made yet, past the one pass's bins, or 1-byte data (never made)
        return None, None
    previous = driver.enter(device)  # the memset and copies need it current (a CuPy or torch thread's already is)
    try:
        if on_global:
            out, pointer = kind.new_shaped(x, (minlength,), plan.COUNT_DTYPE, device, stream)
            words = driver.allocate(16, device, stream)  # freed on the stream after the copy back
            extremes = made.count(address, n, stream, pointer, made.context, bins=minlength, extremes=words.address)
        else:
            counted = driver.allocate(8 * (bins + 2), device, stream)  # freed on the stream after the copy
            extremes = made.count(address, n, stream, counted.address, made.context)
        length = _bincount_length(*extremes, minlength)
        _expected_lengths[(dtype, device)] = length
        if length > bins:  # (the global pass's bins are minlength: a miss is a greatest value not below it)
            return None, extremes
        if not on_global:
            out, pointer = kind.new_shaped(x, (length,), plan.COUNT_DTYPE, device, stream)
            driver.copy_dtod(pointer, counted.address, 8 * length, stream)
        return out, None
    finally:
        driver.leave(previous)


# ---- the byte histogram's registry: the same kernels on bytes ------------------------------------------------

_byte_rule = functools.lru_cache(maxsize=None)(plan.byte_rule)


def _byte_driver(strategy: str):
    def driver_(data, bins, *, call, letters=False, out=None):
        rule = _byte_rule(bins, letters)
        if out is None:
            out = call.empty((rule.bins,), BYTE_COUNT_DTYPE)
        return count_into(data, None, rule, out, call=call, strategy=strategy)

    driver_.__name__ = f"numpy_{strategy}_driver"
    driver_.__doc__ = f"The byte histogram through {FUNCTIONS[strategy]} (NumPy's rule for range (0, 256))."
    return driver_


def _byte_model(strategy: str):
    def model(data, bins, *, letters=False, sms=132, return_stats=False):
        rule = _byte_rule(bins, letters)
        counts, stats = numpy_models.numpy_histogram_model(np.asarray(data, dtype=np.uint8), rule, strategy=strategy,
                                                           sms=sms, return_stats=True)
        counts = counts.astype(BYTE_COUNT_DTYPE)
        stats = {"global_atomics": stats["global_atomics"], "shared_atomics": stats["shared_atomics"]}
        return (counts, stats) if return_stats else counts

    model.__name__ = f"numpy_{strategy}_model"
    return model


KERNELS = ("histogram/numpy_histogram.cu", "histogram/numpy_bins.cuh", "histogram/element_loads.cuh")
HISTOGRAMS.register(
    "numpy_shared_copies", _byte_driver(plan.SHARED), kernels=("histogram/numpy_histogram.cu",),
    source="PMPP §9.4-9.5 carried to NumPy's bins",
    summary=f"any dtype, NumPy's bin arithmetic; up to {plan.MAX_COPIES} private copies per block in shared "
            "memory, 16-byte loads, one commit per nonzero bin",
    model=_byte_model(plan.SHARED))
HISTOGRAMS.register(
    "numpy_global_atomics", _byte_driver(plan.GLOBAL), kernels=("histogram/numpy_histogram.cu",),
    source="PMPP §9.3 and §9.6 (aggregation across a warp)",
    summary="any dtype, any number of bins: global atomics, the lanes of a warp on one bin added as one",
    model=_byte_model(plan.GLOBAL))
