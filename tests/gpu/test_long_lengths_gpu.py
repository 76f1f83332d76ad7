"""Lengths past 2^31 elements (and 2^32 bytes) through the fast algorithms, checked by construction on the GPU.

* scan: 2^31 + 5 int32 (8 GiB in, 8 GiB out) of ones with a few large spikes, scanned with dtype=np.int32 (the
  default result would be NumPy's int64): the inclusive sum at i is i + 1 + (the spikes at or before i), modulo
  2^32 (int32 add wraps like np.cumsum(x, dtype=np.int32)); every
  element is compared by a checking kernel (64-bit indices) against that closed form.  Aligned (persistent
  blocks, vector copies) and a view one element in (unaligned: one block per tile, scalar loads), inclusive and
  exclusive.
* histogram: 2^32 + 7 bytes, zeros with a thousand spikes of known values: bin 0 counts past 2^32, so the
  result must be exact in uint64 while every block's shared counters stay 32-bit.  A view three bytes in (head,
  body and tail of the 16-byte loads all used).
* reduce: 2^31 + 5 int64 with x[i] = i: the sum n(n - 1) / 2, max n - 1, min over x[1:] 1.

Inputs are CuPy arrays (made and checked on the device: no 8 GiB host copies); the results come back as CuPy.
Each test needs its bytes free on the device (about 17 GiB for the scan and the reduce) and skips otherwise.
On an H100: about 10 s each, most of it filling and checking the arrays.

The index arithmetic that makes these lengths safe is checked without a GPU: tests/unit/test_long_lengths.py.
"""

import numpy as np
import pytest

GIB = 1 << 30
SCAN_N = (1 << 31) + 5
HISTOGRAM_N = (1 << 32) + 7
REDUCE_N = (1 << 31) + 5

CHECK_SOURCE = r"""
// out[i] against the closed form of an inclusive (or exclusive) int32 add-scan of ones plus spikes: spike j adds
// delta[j] at position pos[j] (sorted); cum[j] = delta[0] + ... + delta[j] (mod 2^32).  Counts mismatches and
// keeps the first mismatching index.
extern "C" __global__ void check_scan_of_spiked_ones(const unsigned int* out, long long n, int exclusive,
                                                     const long long* pos, const unsigned int* cum, int k,
                                                     unsigned long long* bad, unsigned long long* first) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const long long last = exclusive ? i - 1 : i;  // the last input the output at i includes
        int lo = 0, hi = k;  // spikes at or before `last`: pos[0 .. lo)
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (pos[mid] <= last) lo = mid + 1; else hi = mid;
        }
        const unsigned int expected = (unsigned int)(last + 1) + (lo > 0 ? cum[lo - 1] : 0u);
        if (out[i] != expected) {
            atomicAdd(bad, 1ull);
            atomicMin(first, (unsigned long long)i);
        }
    }
}

// x[i] = i for i < n, 64-bit.
extern "C" __global__ void iota_int64(long long* x, long long n) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = i;
}

// x[i] = value for i < n, 32-bit.
extern "C" __global__ void fill_int32(int* x, long long n, int value) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = value;
}
"""

GRID, BLOCK = (132 * 16,), (256,)  # grid-stride loops: any device


@pytest.fixture
def cp():
    """CuPy, with its memory pool emptied before and after the test (these tests need most of the device)."""
    cupy = pytest.importorskip("cupy", reason="the long-length tests make and check their arrays with CuPy")
    cupy.get_default_memory_pool().free_all_blocks()
    yield cupy
    cupy.get_default_memory_pool().free_all_blocks()


def need_free(cp, nbytes: int, what: str):
    free, total = cp.cuda.runtime.memGetInfo()
    if free < nbytes:
        pytest.skip(f"{what} needs {nbytes / GIB:.1f} GiB free on the device; {free / GIB:.1f} of "
                    f"{total / GIB:.1f} GiB are free")


def kernels(cp):
    module = cp.RawModule(code=CHECK_SOURCE)
    return {name: module.get_function(name) for name in ("check_scan_of_spiked_ones", "iota_int64", "fill_int32")}


def host(result) -> np.ndarray:
    """A result of the caller's kind (CuPy here) on the host."""
    return np.asarray(result.get() if hasattr(result, "get") else result)


@pytest.mark.slow
@pytest.mark.parametrize("aligned, exclusive, algorithm", [(True, False, "decoupled_lookback"),
                                                           (False, True, "auto")])
def test_scan_past_2_31_int32(cp, rng, aligned, exclusive, algorithm):
    import pyscan

    offset = 0 if aligned else 1
    need_free(cp, 2 * 4 * (SCAN_N + offset) + GIB // 2, f"a scan of {SCAN_N} int32")
    k = kernels(cp)
    buffer = cp.empty(SCAN_N + offset, dtype=cp.int32)
    k["fill_int32"](GRID, BLOCK, (buffer, np.int64(buffer.size), np.int32(1)))
    x = buffer[offset:]
    assert x.size == SCAN_N
    # Spikes: distinct sorted positions, the first and last elements and both sides of 2^31 among them.
    spikes = 64
    pos = np.unique(np.concatenate([rng.integers(0, SCAN_N, spikes - 4), [0, 2**31 - 1, 2**31, SCAN_N - 1]]))
    delta = rng.integers(0, 2**32, pos.size, dtype=np.uint64).astype(np.uint32)
    x[cp.asarray(pos)] = cp.asarray((delta + np.uint32(1)).view(np.int32))  # 1 + delta, wrapping
    cum = np.cumsum(delta, dtype=np.uint32)

    out = pyscan.scan(x, algorithm=algorithm, exclusive=exclusive, dtype=np.int32)  # int32 out: the checker's type
    assert isinstance(out, cp.ndarray) and out.dtype == np.int32 and out.size == SCAN_N

    bad = cp.zeros(1, dtype=cp.uint64)
    first = cp.full(1, np.iinfo(np.uint64).max, dtype=cp.uint64)
    k["check_scan_of_spiked_ones"](GRID, BLOCK, (out, np.int64(SCAN_N), np.int32(exclusive), cp.asarray(pos),
                                                 cp.asarray(cum), np.int32(pos.size), bad, first))
    bad, first = int(bad.get()[0]), int(first.get()[0])
    assert bad == 0, (f"{bad} of {SCAN_N} outputs differ from the closed form; first at {first}: got "
                      f"{int(out[first].get())}")
    # Spot checks against NumPy around 2^31, where int32 indices would wrap.
    lo = 2**31 - 4096
    window = cp.asnumpy(x[lo:lo + 8192]).astype(np.int64)
    before = int(np.int64(lo) + sum(int(d) for p, d in zip(pos, delta) if p < lo))
    ref = (before + np.cumsum(window) - (window if exclusive else 0)) % 2**32
    np.testing.assert_array_equal(cp.asnumpy(out[lo:lo + 8192]).view(np.uint32), ref.astype(np.uint32))


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["fast", "auto"])
def test_histogram_past_2_32_bytes(cp, rng, algorithm):
    import pyscan

    offset = 3  # a view that does not start 16-byte aligned: head, body and tail
    need_free(cp, HISTOGRAM_N + offset + GIB // 2, f"a histogram of {HISTOGRAM_N} bytes")
    buffer = cp.zeros(HISTOGRAM_N + offset, dtype=cp.uint8)
    data = buffer[offset:]
    assert data.size == HISTOGRAM_N
    pos = np.unique(np.concatenate([rng.integers(0, HISTOGRAM_N, 1000), np.arange(13),
                                    HISTOGRAM_N - 1 - np.arange(7), [2**31, 2**32]]))
    values = rng.integers(1, 256, pos.size).astype(np.uint8)
    data[cp.asarray(pos)] = cp.asarray(values)
    spikes = np.bincount(values, minlength=256).astype(np.uint64)
    for bins in (256, 10, 1):
        counts = host(pyscan.byte_histogram(data, bins, algorithm=algorithm)).astype(np.uint64)
        expected = np.zeros(bins, np.uint64)
        np.add.at(expected, np.arange(256) * bins // 256, spikes)
        expected[0] += np.uint64(HISTOGRAM_N - pos.size)
        assert int(expected.sum()) == HISTOGRAM_N
        if bins == 1:
            assert expected[0] > 2**32  # one bin holds every byte: a count past 32 bits
        np.testing.assert_array_equal(counts, expected, err_msg=f"bins={bins}")


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["fast", "auto"])
def test_reduce_past_2_31_int64(cp, algorithm):
    import pyscan

    need_free(cp, 8 * REDUCE_N + GIB // 2, f"a reduction of {REDUCE_N} int64")
    k = kernels(cp)
    x = cp.empty(REDUCE_N, dtype=cp.int64)
    k["iota_int64"](GRID, BLOCK, (x, np.int64(REDUCE_N)))
    n = REDUCE_N
    assert int(host(pyscan.reduce(x, algorithm=algorithm))) == n * (n - 1) // 2  # < 2^63: no wrap
    assert int(host(pyscan.reduce(x, algorithm=algorithm, op="max"))) == n - 1
    assert int(host(pyscan.reduce(x[1:], algorithm=algorithm, op="min"))) == 1  # unaligned view
    assert int(host(pyscan.reduce(x[1:], algorithm=algorithm))) == n * (n - 1) // 2
