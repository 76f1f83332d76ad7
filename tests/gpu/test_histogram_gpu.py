"""Histogram (PMPP ch. 9) on the GPU: every algorithm against np.histogram, the letter histogram against a
Python reference, the input kinds, and bad input."""

import numpy as np
import pytest

import pyscan
from pyscan.histograms import HISTOGRAMS, fast, reference

LENGTHS = [1, 2, 1023, 1024, 1025, 2**20 + 7, 2**24]
BINS = [1, 7, 64, 255, 256]
HISTOGRAM_NAMES = ("auto",) + pyscan.HISTOGRAM_ALGORITHMS


def as_numpy(result):
    """A result as NumPy: device input gives device results (a 0-d GPUArray for a reduction, a GPUArray of counts
    for a histogram); NumPy results pass through."""
    if isinstance(result, (np.ndarray, np.generic)):
        return result
    return result.get()[()]


def python_letter_histogram(text: bytes) -> list:
    counts = [0] * 7
    for byte in text:
        if ord("a") <= byte <= ord("z"):
            counts[(byte - ord("a")) // 4] += 1
    return counts


def _data(kind, n, rng):
    if kind == "uniform":
        return rng.integers(0, 256, n, dtype=np.uint8)
    return np.full(n, rng.integers(0, 256), dtype=np.uint8)


@pytest.mark.parametrize("kind", ["uniform", "equal"])
@pytest.mark.parametrize("n", LENGTHS)
def test_every_algorithm_equals_numpy(n, kind, rng):
    import pycuda.gpuarray as ga

    data = _data(kind, n, rng)
    data_gpu = ga.to_gpu(data)  # once for all algorithms and bins
    for bins in BINS:
        expected = np.histogram(data, bins=bins, range=(0, 256))[0]
        for name in HISTOGRAM_NAMES:
            counts = as_numpy(pyscan.byte_histogram(data_gpu, bins, algorithm=name))
            assert isinstance(counts, np.ndarray) and counts.dtype == np.uint64 and counts.shape == (bins,)
            np.testing.assert_array_equal(counts, expected, err_msg=f"{name}, bins={bins}, n={n}, {kind}")


@pytest.mark.parametrize("value", [0, 1, 127, 128, 254, 255])
def test_all_equal_extreme_values(value):
    data = np.full(100_003, value, np.uint8)
    for bins in BINS:
        expected = np.histogram(data, bins=bins, range=(0, 256))[0]
        for name in pyscan.HISTOGRAM_ALGORITHMS:
            np.testing.assert_array_equal(as_numpy(pyscan.byte_histogram(data, bins, algorithm=name)), expected, err_msg=name)


@pytest.mark.parametrize("offset", range(17))
def test_unaligned_gpuarray_slices(offset, rng):
    """A slice of a GPUArray starts at any address: the fast kernel's head/body/tail split must cover it."""
    import pycuda.gpuarray as ga

    data = rng.integers(0, 256, 10_000, dtype=np.uint8)
    data_gpu = ga.to_gpu(data)
    for end in (offset + 1, offset + 16, offset + 40, 10_000 - offset % 5):
        piece = data[offset:end]
        for name in pyscan.HISTOGRAM_ALGORITHMS:
            np.testing.assert_array_equal(as_numpy(pyscan.byte_histogram(data_gpu[offset:end], algorithm=name)),
                                          np.histogram(piece, bins=256, range=(0, 256))[0], err_msg=f"{name} {end}")


@pytest.mark.parametrize("copies", [1, 8, 16, 32])
@pytest.mark.parametrize("block", [256, 1024])
@pytest.mark.parametrize("aggregate", [True, False])
def test_fast_variants(copies, block, aggregate, rng):
    import pycuda.gpuarray as ga

    from pyscan.runtime.arrays import Call

    for data in (rng.integers(0, 256, 3_000_017, dtype=np.uint8), np.full(3_000_017, 77, np.uint8)):
        for bins in (7, 256):
            counts = fast.run_fast(ga.to_gpu(data), bins, call=Call.tool(), copies=copies, block=block,
                                   aggregate=aggregate).get()
            np.testing.assert_array_equal(counts, np.histogram(data, bins=bins, range=(0, 256))[0])


def test_text_histogram_every_algorithm(rng):
    phrase = "programming massively parallel processors"
    noisy = rng.integers(0, 256, 1_000_003, dtype=np.uint8).tobytes()
    letters = rng.choice(np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", np.uint8), 2**20 + 5).tobytes()
    texts = [phrase, "Été à Paris: ÀÉÎ naïve façade, 123 ABC xyz!", noisy, letters, b"q" * 100_000, b"A" * 5000]
    for text in texts:
        raw = text.encode() if isinstance(text, str) else text
        expected = python_letter_histogram(raw)
        assert reference.reference_histogram(np.frombuffer(raw, np.uint8), letters=True).tolist() == expected
        for name in HISTOGRAM_NAMES:
            counts = as_numpy(pyscan.text_histogram(text, algorithm=name))
            assert counts.dtype == np.uint64 and counts.tolist() == expected, name


def test_input_kinds(rng):
    import pycuda.gpuarray as ga

    data = rng.integers(0, 256, 50_001, dtype=np.uint8)
    expected = np.histogram(data, bins=64, range=(0, 256))[0]
    raw = data.tobytes()
    for value in (data, ga.to_gpu(data), raw, bytearray(raw), memoryview(raw), memoryview(bytearray(raw))):
        counts = as_numpy(pyscan.byte_histogram(value, 64))
        assert isinstance(counts, np.ndarray) and counts.dtype == np.uint64
        np.testing.assert_array_equal(counts, expected, err_msg=type(value).__name__)
    strided = rng.integers(0, 256, 20_001, dtype=np.uint8)
    np.testing.assert_array_equal(as_numpy(pyscan.byte_histogram(strided[::3], 255)),
                                  np.histogram(strided[::3], 255, (0, 256))[0])
    letters = b"hello world, programming massively parallel processors"
    counts = as_numpy(pyscan.text_histogram(ga.to_gpu(np.frombuffer(letters, np.uint8))))
    assert counts.tolist() == python_letter_histogram(letters)


def test_empty_gives_zeros():
    import pycuda.gpuarray as ga

    for name in HISTOGRAM_NAMES:
        for empty in (np.zeros(0, np.uint8), b"", ga.empty(0, np.uint8)):  # (ga.zeros(0) fails in pycuda)
            counts = as_numpy(pyscan.byte_histogram(empty, 7, algorithm=name))
            assert counts.dtype == np.uint64 and counts.tolist() == [0] * 7
        assert as_numpy(pyscan.text_histogram("", algorithm=name)).tolist() == [0] * 7


def test_bad_input_on_the_gpu():
    import pycuda.gpuarray as ga

    with pytest.raises(TypeError, match="uint8"):
        as_numpy(pyscan.byte_histogram(ga.zeros(10, np.int32)))
    with pytest.raises(ValueError, match="1-D"):
        as_numpy(pyscan.byte_histogram(ga.zeros((2, 5), np.uint8)))
    with pytest.raises(ValueError, match="bins"):
        as_numpy(pyscan.byte_histogram(ga.zeros(10, np.uint8), 300))
    with pytest.raises(ValueError, match="unknown histogram algorithm"):
        as_numpy(pyscan.text_histogram("abc", algorithm="nope"))


def test_counts_beyond_32_bits_do_not_wrap():
    """2^32 + 5 copies of one byte would wrap a 32-bit counter.  Needs 4 GiB of device memory: skipped if the
    device has less free."""
    from pyscan.basics import pycuda_context
    from pyscan.runtime import driver as rt

    n = 2**32 + 5
    if rt.device_attributes()["free_memory"] < n + 2**30:
        pytest.skip("not enough free device memory for 2^32 + 5 bytes")
    import pycuda.gpuarray as ga

    data = ga.empty(n, np.uint8)
    pycuda_context().memset_d8(data.gpudata, 200, n)
    for name in ("fast", "aggregated", "coarsened"):
        counts = as_numpy(pyscan.byte_histogram(data, 256, algorithm=name))
        assert counts[200] == n and counts.sum() == n, name
    del data


def test_registry_drivers_return_gpuarrays(rng):
    import pycuda.gpuarray as ga

    from pyscan.runtime import arrays

    data = ga.to_gpu(rng.integers(0, 256, 4097, dtype=np.uint8))
    for algorithm in HISTOGRAMS:
        with arrays.begin(data, what="data", dtypes=(np.uint8,)) as call:
            out = algorithm.driver(data, 256, call=call)
        assert isinstance(out, ga.GPUArray) and out.dtype == np.uint64 and out.shape == (256,)
        np.testing.assert_array_equal(out.get(), algorithm.model(data.get(), 256))
