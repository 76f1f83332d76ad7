"""Histogram (PMPP ch. 9) without a GPU: the bin mappings against NumPy, the NumPy models of every kernel,
the aggregated kernel's run logic (and the book listing's bugs), validation, and the registry."""

import numpy as np
import pytest

import pyscan
from pyscan.histograms import HISTOGRAMS, LETTER_LABELS, choose_auto, models, reference
from pyscan.runtime.loader import build_source, kernel_files, signature

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def python_letter_histogram(text: bytes) -> list:
    """PMPP Fig. 9.1's histogram, written out by hand in plain Python."""
    counts = [0] * 7
    for byte in text:
        if ord("a") <= byte <= ord("z"):
            counts[(byte - ord("a")) // 4] += 1
    return counts


# ---- the bin mapping -----------------------------------------------------------------------------------

def test_bin_mapping_equals_numpy_for_every_value_and_bins():
    """v * bins // 256 (the kernels' integer mapping) is the bin np.histogram(range=(0, 256)) puts v in, with
    its floating-point edges, for every byte value v and every 1 <= bins <= 256."""
    values = np.arange(256, dtype=np.uint8)
    for bins in range(1, 257):
        mapped = reference.bin_of(values, bins)
        for v in range(256):
            counts = np.histogram(values[v:v + 1], bins=bins, range=(0, 256))[0]
            assert counts.sum() == 1 and counts[mapped[v]] == 1, (v, bins)


def test_letter_mapping():
    text = bytes(range(256))
    bins = reference.bin_of(np.frombuffer(text, np.uint8), 7, letters=True)
    for byte, b in zip(text, bins):
        expected = (byte - ord("a")) // 4 if chr(byte) in LETTERS else -1
        assert b == expected, (byte, b)
    assert [LETTERS[4 * k] + "-" + LETTERS[min(4 * k + 3, 25)] for k in range(7)] == list(LETTER_LABELS)


def test_reference_letter_histogram(rng):
    text = rng.integers(0, 256, 10_000, dtype=np.uint8).tobytes() + "Programming MASSIVELY parallel".encode()
    expected = python_letter_histogram(text)
    got = reference.reference_histogram(np.frombuffer(text, np.uint8), letters=True)
    assert got.dtype == np.uint64 and got.tolist() == expected


# ---- the models of every kernel ------------------------------------------------------------------------

def _data(kind, n, rng):
    if kind == "uniform":
        return rng.integers(0, 256, n, dtype=np.uint8)
    if kind == "equal":
        return np.full(n, rng.integers(0, 256), dtype=np.uint8)
    if kind == "runs":  # runs of random lengths, long enough to cross thread chunks and vectors
        values = rng.integers(0, 256, n // 20 + 1, dtype=np.uint8)
        return np.repeat(values, rng.integers(1, 40, values.size))[:n]
    if kind == "letters":
        return rng.choice(np.frombuffer(b"abcdefghijklmnopqrstuvwxyz .,ABZ\xc3\xa9", np.uint8), n)
    raise ValueError(kind)


@pytest.mark.parametrize("name", [a.name for a in HISTOGRAMS])
@pytest.mark.parametrize("kind", ["uniform", "equal", "runs"])
@pytest.mark.parametrize("n", [1, 2, 15, 17, 1023, 1024, 1025, 70_001])
@pytest.mark.parametrize("sms", [1, 132])
def test_model_equals_numpy(name, kind, n, sms, rng):
    data = _data(kind, n, rng)
    model = HISTOGRAMS.get(name).model
    for bins in (1, 7, 64, 255, 256):
        counts = model(data, bins, sms=sms)
        assert counts.dtype == np.uint64 and counts.shape == (bins,)
        np.testing.assert_array_equal(counts, np.histogram(data, bins=bins, range=(0, 256))[0], err_msg=f"bins={bins}")


@pytest.mark.parametrize("name", [a.name for a in HISTOGRAMS])
@pytest.mark.parametrize("n", [1, 100, 5000])
def test_model_letters(name, n, rng):
    data = _data("letters", n, rng)
    for sms in (1, 132):
        counts = HISTOGRAMS.get(name).model(data, 7, letters=True, sms=sms)
        assert counts.tolist() == python_letter_histogram(data.tobytes())


def test_model_stats_show_what_privatization_and_aggregation_save(rng):
    n = 300_000
    equal = _data("equal", n, rng)
    uniform = _data("uniform", n, rng)
    stats = {a.name: a.model(equal, 256, return_stats=True)[1] for a in HISTOGRAMS}
    assert stats["atomic_interleaved"] == {"global_atomics": n, "shared_atomics": 0}
    assert stats["privatized"]["global_atomics"] == -(-n // models.BLOCK)  # one commit per block
    assert stats["privatized"]["shared_atomics"] == n
    # aggregation: on all-equal data every thread of the grid adds one run, whatever its length
    grid, block = models.aggregated_config(n, 132)
    assert stats["aggregated"]["shared_atomics"] == min(n, grid * block)
    # without runs it saves (almost) nothing
    _, s = models.aggregated_model(uniform, 256, return_stats=True)
    assert s["shared_atomics"] > 0.99 * n


# ---- aggregation: the run logic ------------------------------------------------------------------------

def test_runs_crossing_thread_chunks_and_the_last_run():
    """Hand-checkable: 2 threads, thread 0 sees bins 3 3 3 5 (one run of 3s, then a last run of one 5),
    thread 1 sees 3 3 (one run that is also its last)."""
    element_bins = np.array([3, 3, 3, 3, 3, 5])
    thread = np.array([0, 1, 0, 1, 0, 0])
    position = np.array([0, 0, 1, 1, 2, 3])
    run_bins, lengths, run_threads = models.runs(element_bins, thread, position)
    assert run_bins.tolist() == [3, 5, 3] and lengths.tolist() == [3, 1, 2] and run_threads.tolist() == [0, 0, 1]


def test_runs_skip_uncounted_bytes():
    """Bytes that are not counted (-1: not letters) neither count nor end a run."""
    run_bins, lengths, _ = models.runs(np.array([2, -1, 2, -1, -1, 4, 2]), np.zeros(7, np.int64), np.arange(7))
    assert run_bins.tolist() == [2, 4, 2] and lengths.tolist() == [2, 1, 1]


@pytest.mark.parametrize("kind", ["uniform", "equal", "runs", "letters"])
@pytest.mark.parametrize("grid, block", [(1, 1), (1, 4), (3, 5), (4, 32)])
def test_aggregated_listing_fixed_and_as_printed(kind, grid, block, rng):
    """The kernel run thread by thread in Python.  Written right it equals NumPy; as printed in the book
    (current bin instead of previous, no last flush, histo_s committed into itself) it does not."""
    data = _data(kind, 997, rng)
    letters = kind == "letters"
    bins = 7 if letters else 64
    expected = reference.reference_histogram(data, bins, letters=letters)
    fixed = models.aggregated_listing(data, bins, letters=letters, grid=grid, block=block)
    np.testing.assert_array_equal(fixed, expected)
    as_printed = models.aggregated_listing(data, bins, letters=letters, grid=grid, block=block, book_bugs=models.BOOK_BUGS)
    assert as_printed.sum() == 0 and expected.sum() > 0  # bug 3 alone leaves the global histogram empty


def test_book_bugs_one_and_two_change_the_counts():
    """Bugs 1 and 2 alone (the commit fixed), one thread on bins 0 0 1 1 1 2: the runs 0 0 and 1 1 1 are added
    to the bins that end them (1 and 2), and the last run (2) is lost."""
    data = np.array([0, 0, 1, 1, 1, 2], np.uint8) * 64  # bins 0 0 1 1 1 2 of 4
    listing = models.aggregated_listing
    assert listing(data, 4, grid=1, block=1).tolist() == [2, 3, 1, 0]
    assert listing(data, 4, grid=1, block=1, book_bugs=("current_bin", "no_last_flush")).tolist() == [0, 2, 3, 0]
    assert listing(data, 4, grid=1, block=1, book_bugs=("no_last_flush",)).tolist() == [2, 3, 0, 0]
    assert listing(data, 4, grid=1, block=1, book_bugs=("current_bin",)).tolist() == [0, 2, 4, 0]
    with pytest.raises(ValueError, match="book bugs"):
        listing(data, 4, book_bugs=("typo",))


# ---- the fast kernel's model ---------------------------------------------------------------------------

@pytest.mark.parametrize("address", range(16))
@pytest.mark.parametrize("n", [1, 15, 16, 17, 31, 33, 4099])
def test_fast_model_any_alignment(address, n, rng):
    data = _data("runs", n, rng)
    for bins in (1, 256):
        counts = models.fast_model(data, bins, address=address, sms=1)
        np.testing.assert_array_equal(counts, np.histogram(data, bins=bins, range=(0, 256))[0])


@pytest.mark.parametrize("copies", [1, 8, 32])
@pytest.mark.parametrize("aggregate", [True, False])
@pytest.mark.parametrize("block", [256, 1024])
def test_fast_model_variants(copies, aggregate, block, rng):
    data = _data("runs", 200_003, rng)
    counts, stats = models.fast_model(data, 256, address=3, block=block, copies=copies, aggregate=aggregate,
                                      return_stats=True)
    np.testing.assert_array_equal(counts, np.histogram(data, bins=256, range=(0, 256))[0])
    assert (stats["shared_atomics"] < data.size) == aggregate


def test_fast_model_aggregated_all_equal_costs_one_atomic_per_thread(rng):
    n = 1 << 20
    data = _data("equal", n, rng)
    _, stats = models.fast_model(data, 256, return_stats=True, aggregate=True)
    grid, block = models.fast_config(n, 132)
    assert stats["shared_atomics"] == grid * block  # n / 16 vectors, more than there are threads
    assert stats["global_atomics"] == grid


def test_fast_grid_fills_the_device_and_bounds_block_counts():
    grid, block = models.fast_config(2**28, 132)
    assert (grid, block) == (132 * 2048 // models.FAST_BLOCK, models.FAST_BLOCK)
    assert models.fast_config(1, 132)[0] == 1
    assert models.device_grid(2**40, 256, 1, 8) * models.MAX_BLOCK_COUNT >= 2**40


# ---- the registry, the kernels -------------------------------------------------------------------------

def test_registry():
    assert pyscan.HISTOGRAM_ALGORITHMS == ("atomic_block", "atomic_interleaved", "privatized", "aggregated",
                                           "coarsened", "fast", "numpy_shared_copies", "numpy_global_atomics")
    assert choose_auto() == "fast" and [a.name for a in HISTOGRAMS if a.fast] == ["fast"]
    assert pyscan.REGISTRIES["histogram"] is HISTOGRAMS
    for algorithm in HISTOGRAMS:
        assert algorithm.model is not None and algorithm.source and algorithm.summary
        for relpath in algorithm.kernels:
            assert relpath in kernel_files()


BYTE_KERNELS = sorted({f for a in HISTOGRAMS if not a.name.startswith("numpy_") for f in a.kernels})


@pytest.mark.parametrize("relpath", BYTE_KERNELS)
@pytest.mark.parametrize("letters", [0, 1])
def test_kernel_signatures(relpath, letters):
    """Every byte histogram kernel takes (data, n, bins, histo): pointer, long long, int, pointer (the kernels of
    pyscan.histogram, which the registry also holds, are checked in test_histogram_numpy.py)."""
    source = build_source(relpath, LETTERS=letters)
    function = "histogram_" + relpath.split("/")[1][:-3]
    assert signature(source, function) == "PqiP"


# ---- validation: before anything is launched -----------------------------------------------------------

@pytest.fixture
def no_launch(monkeypatch):
    """Make any attempt to reach the GPU fail the test."""
    def forbidden(*args, **kwargs):
        raise AssertionError("the GPU was reached before the input was validated")

    monkeypatch.setattr("pyscan.runtime.driver.ready", forbidden)
    monkeypatch.setattr("pyscan.runtime.driver.enter", forbidden)


@pytest.mark.parametrize("bad, exc, match", [
    (np.zeros(4, np.int8), TypeError, "uint8"),
    (np.zeros(4, np.int32), TypeError, "uint8"),
    (np.zeros((2, 2), np.uint8), ValueError, "1-D"),
    ([1, 2, 3], TypeError, "numpy.ndarray"),
    ("abc", TypeError, "str"),
    (memoryview(np.zeros(3, np.int32)), TypeError, "memoryview"),
    (memoryview(np.zeros((2, 2), np.uint8)), TypeError, "memoryview"),
    (None, TypeError, "numpy.ndarray"),
])
def test_histogram_bad_data(bad, exc, match, no_launch):
    with pytest.raises(exc, match=match):
        pyscan.byte_histogram(bad)


@pytest.mark.parametrize("bins, exc", [(0, ValueError), (257, ValueError), (-1, ValueError), (2.0, TypeError),
                                       (True, TypeError), ("256", TypeError), (None, TypeError),
                                       (np.float32(8), TypeError)])
def test_histogram_bad_bins(bins, exc, no_launch):
    with pytest.raises(exc, match="bins"):
        pyscan.byte_histogram(np.zeros(4, np.uint8), bins)


def test_bad_algorithm_lists_the_valid_names(no_launch):
    with pytest.raises(ValueError, match="'auto', 'atomic_block', .*'fast'"):
        pyscan.byte_histogram(np.zeros(4, np.uint8), algorithm="bogus")
    with pytest.raises(ValueError, match="'aggregated'"):
        pyscan.text_histogram("abc", algorithm="Aggregated")
    with pytest.raises(TypeError, match="algorithm"):
        pyscan.byte_histogram(np.zeros(4, np.uint8), algorithm=None)


@pytest.mark.parametrize("bad", [np.zeros(3, np.int16), 3, ["a"], np.zeros((1, 3), np.uint8)])
def test_text_histogram_bad_input(bad, no_launch):
    with pytest.raises((TypeError, ValueError)):
        pyscan.text_histogram(bad)


def test_numpy_integer_bins_accepted_up_to_the_gpu(monkeypatch):
    """Valid input gets as far as the GPU (and not further on a machine without one)."""
    reached = []

    def driver(*args, **kwargs):
        reached.append(True)
        raise pyscan.GPUUnavailableError("test: no GPU")

    monkeypatch.setattr("pyscan.runtime.driver.ready", driver)
    monkeypatch.setattr("pyscan.runtime.driver.enter", driver)  # where every public call starts on the GPU
    for call in (lambda: pyscan.byte_histogram(np.zeros(4, np.uint8), np.int64(7)),
                 lambda: pyscan.byte_histogram(b"abc", 1), lambda: pyscan.byte_histogram(bytearray(b"")),
                 lambda: pyscan.byte_histogram(memoryview(b"xyz")), lambda: pyscan.text_histogram("é et à"),
                 lambda: pyscan.byte_histogram(np.zeros(9, np.uint8)[::2], algorithm="privatized")):
        with pytest.raises(pyscan.GPUUnavailableError):
            call()
    assert len(reached) == 6
