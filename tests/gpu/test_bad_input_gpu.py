"""Bad input on the GPU: GPUArrays of the wrong dtype or shape, refused before any GPU work once they are uploaded;
non-contiguous NumPy inputs, accepted, answered right and left untouched; the empty reduce; Life.advance's
generations.  tests/unit/test_bad_input.py has the tests that need no GPU, and says what the no_gpu fixture proves.
"""

import numpy as np
import pytest
from bad_input_checks import SUPPORTED, assert_untouched, raises_clearly, snapshot

import pyscan


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_gpuarray_of_the_wrong_dtype(dtype, no_gpu_after_upload):
    import pycuda.gpuarray as ga

    # scan and reduce take float16 and uint8 (NumPy's accumulator rule); complex they refuse, as scalar_multiply
    # refuses all three
    wrong = ga.to_gpu(np.arange(10, dtype=np.float16 if dtype == np.int32 else np.uint8))
    complex_ = ga.to_gpu(np.arange(10, dtype=np.complex64))
    ints = ga.to_gpu(np.arange(10, dtype=dtype))
    no_gpu_after_upload()
    for call in (pyscan.scan, pyscan.reduce, lambda v: pyscan.scalar_multiply(v, 2)):
        raises_clearly(call, complex_, TypeError, SUPPORTED)
    raises_clearly(lambda v: pyscan.scalar_multiply(v, 2), wrong, TypeError, SUPPORTED)
    raises_clearly(pyscan.byte_histogram, ints, TypeError, "uint8")
    raises_clearly(pyscan.text_histogram, ints, TypeError, "uint8")


@pytest.fixture
def no_gpu_after_upload(monkeypatch, request):
    """Like no_gpu, but switched on by the test once its GPUArrays exist."""
    def switch_on():
        request.getfixturevalue("no_gpu")

    return switch_on


def test_gpuarray_non_contiguous(no_gpu_after_upload):
    """A strided GPUArray is refused before any GPU work (N-d and axis calls copy only CuPy's and torch's strided
    arrays, with their own libraries); a 2-D one is taken (tests/gpu/test_axis_gpu.py)."""
    import pycuda.gpuarray as ga

    try:
        strided = ga.to_gpu(np.arange(20, dtype=np.float32))[::2]
    except Exception as exc:  # noqa: BLE001  an older pycuda without strided slicing
        pytest.skip(f"cannot make a non-contiguous GPUArray here: {exc}")
    if strided.flags.c_contiguous:
        pytest.skip("this pycuda's slice is contiguous")
    no_gpu_after_upload()
    for call in (pyscan.scan, pyscan.reduce):
        raises_clearly(call, strided, ValueError, r"contiguous")


def test_non_contiguous_numpy_inputs_work_and_stay_untouched(rng):
    base = rng.integers(-1000, 1000, 5001).astype(np.int32)
    for x in (base[::2], base[::-1], base[100:4000:7][::-1]):
        snap = snapshot(x)
        scanned = pyscan.scan(x)
        assert scanned.dtype == np.cumsum(x).dtype == np.int64  # NumPy's accumulator for int32 add
        np.testing.assert_array_equal(scanned, np.cumsum(x))
        np.testing.assert_array_equal(pyscan.scan(x, exclusive=True, op="max")[1:], np.maximum.accumulate(x)[:-1])
        total = pyscan.reduce(x)
        assert total == x.sum() and total.dtype == x.sum().dtype == np.int64
        assert pyscan.reduce(x, op="min") == x.min()
        np.testing.assert_array_equal(pyscan.scalar_multiply(x, 3), x * np.int32(3))
        assert_untouched(x, snap)
    data = rng.integers(0, 256, 9001, dtype=np.uint8)
    for d in (data[::3], data[::-1]):
        snap = snapshot(d)
        np.testing.assert_array_equal(pyscan.byte_histogram(d, 7), np.histogram(d, bins=7, range=(0, 256))[0])
        assert_untouched(d, snap)
    lattice = (rng.random((40, 30)) < 0.4).astype(np.int32)
    for lat in (lattice.T, lattice[::-1, ::2]):
        snap = snapshot(lat)
        np.testing.assert_array_equal(pyscan.life.step(lat, 3), pyscan.life.reference_step(lat, 3))
        assert_untouched(lat, snap)


def test_empty_reduce_follows_numpy():
    """np.max/np.min of nothing raise ValueError; np.sum of nothing is 0 (pyscan may also refuse it)."""
    for op in ("max", "min"):
        with pytest.raises(ValueError):
            pyscan.reduce(np.zeros(0, np.float32), op=op)
    try:
        total = pyscan.reduce(np.zeros(0, np.int64))
    except ValueError:
        return
    assert total == 0 and np.asarray(total).dtype == np.int64


def test_life_advance_bad_generations():
    game = pyscan.life.Life(np.zeros((8, 8), np.uint8), kernel="global")
    for bad, exc in ((-1, ValueError), (1.5, TypeError), (None, TypeError)):
        with pytest.raises(exc, match="non-negative int|generations"):
            game.advance(bad)
    assert game.generation == 0
