"""pyscan.argmax / pyscan.argmin on the GPU against np.argmax / np.argmin (the model's side:
tests/unit/test_argextreme.py): every dtype, NaN (the first wins), ties (the first wins), infinities and -0.0, extents
0, 1, 31, 32, 33 and primes, 3-D and 4-D, every axis and keepdims, plans of one, two and three passes (long rows cut
into segments, long columns into chunks), non-contiguous views, NumPy / CuPy / torch input (torch bfloat16 too),
out=, the result kinds, empty inputs.  Indices are exact: every comparison is."""


import numpy as np
import pytest
from argextreme_checks import make

import pyscan
from pyscan.reductions import arg_extreme as ae
from pyscan.runtime import driver
from pyscan.types import NUMPY_DTYPES

SHAPES = [(1,), (2,), (31,), (32,), (33,), (97,), (4099,), (1, 1), (3, 4), (31, 33), (33, 32), (7, 1, 13),
          (2, 33, 31), (3, 2, 5, 7), (1, 1, 1, 2), (257, 3), (3, 257), (2 ** 15, 2), (2, 2 ** 15), (4, 70001),
          (70001, 3), (33, 4099), (3, 3001, 7)]
FUNCTIONS = ((pyscan.argmax, np.argmax), (pyscan.argmin, np.argmin))


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_every_axis(dtype):
    rng = np.random.default_rng([NUMPY_DTYPES.index(dtype), 23])
    for shape in SHAPES:
        for special in (False, True):
            x = make(rng, shape, dtype, special)
            for public, f in FUNCTIONS:
                got = public(x)
                assert isinstance(got, np.int64) and got == f(x), (shape, public.__name__, got, f(x))
                assert public(x, keepdims=True).shape == f(x, keepdims=True).shape
                for axis in range(-len(shape), len(shape)):
                    for keepdims in (False, True):
                        got = public(x, axis=axis, keepdims=keepdims)
                        want = f(x, axis=axis, keepdims=keepdims)
                        assert isinstance(got, np.ndarray) and got.dtype == np.int64 and got.shape == want.shape
                        np.testing.assert_array_equal(got, want, err_msg=str((shape, axis, public.__name__)))


@pytest.mark.parametrize("n", [2 ** 20 + 3, 2 ** 24 + 1, 10 ** 8 + 7])
def test_long_1d(n, rng):
    """One row cut into a device-sized grid of segments, the partials reduced by a second pass: the extreme at the
    very end, at the start, ties between segments, a NaN late."""
    x = np.zeros(n, np.float32)
    x[-1] = 1.0
    assert pyscan.argmax(x) == n - 1 and pyscan.argmin(x) == 0
    x[[7, n // 2, n - 2]] = 5.0  # ties: the first
    assert pyscan.argmax(x) == 7
    x[[n // 3, n - 5]] = np.nan
    assert pyscan.argmax(x) == pyscan.argmin(x) == n // 3
    y = np.full(n, 3, np.int8)
    y[n - 1] = -128
    assert pyscan.argmin(y) == n - 1 and pyscan.argmax(y) == 0


def test_matches_the_model_on_this_device(rng):
    sms = driver.multiprocessor_count(0)
    for shape, axis in [((300001,), None), ((5, 2 ** 18), 1), ((2 ** 18, 5), 0), ((40, 9000, 3), 1)]:
        x = make(rng, shape, np.float16)
        for public, largest in ((pyscan.argmax, True), (pyscan.argmin, False)):
            np.testing.assert_array_equal(public(x, axis=axis), ae.model(x, largest=largest, axis=axis, sms=sms))


def test_non_contiguous_views(rng):
    base = make(rng, (34, 66, 5), np.float32)
    for view in (base[:, ::2], base.transpose(2, 0, 1), base[::-1, 3:40, ::3]):
        for public, f in FUNCTIONS:
            assert public(view) == f(view)
            for axis in range(view.ndim):
                np.testing.assert_array_equal(public(view, axis=axis), f(view, axis=axis))


def test_empty_raises_and_empty_results():
    for public, _ in FUNCTIONS:
        with pytest.raises(ValueError, match="attempt to get arg(max|min) of an empty sequence"):
            public(np.zeros(0, np.float32))
        with pytest.raises(ValueError, match="empty sequence"):
            public(np.zeros((3, 0), np.int32), axis=1)
        got = public(np.zeros((0, 3), np.int32), axis=1)
        assert got.shape == (0,) and got.dtype == np.int64


@pytest.mark.parametrize("kind", ["cupy", "torch"])
def test_device_arrays_and_out(kind, rng):
    lib = pytest.importorskip(kind)
    if kind == "torch" and not lib.cuda.is_available():
        pytest.skip("torch sees no GPU")
    host = make(rng, (33, 129, 5), np.float32)

    def to(a):
        return lib.asarray(a) if kind == "cupy" else lib.from_numpy(np.ascontiguousarray(a)).cuda()

    def back(r):
        return r.get() if kind == "cupy" else r.cpu().numpy()

    d = to(host)
    for public, f in FUNCTIONS:
        got = public(d)  # a 0-d int64 device array, not waited for
        assert type(got) is type(d) and tuple(got.shape) == () and back(got) == f(host)
        for axis in range(3):
            np.testing.assert_array_equal(back(public(d, axis=axis)), f(host, axis=axis))
        t = d.permute(1, 0, 2) if kind == "torch" else d.transpose(1, 0, 2)  # not C-contiguous: copied
        np.testing.assert_array_equal(back(public(t, axis=0)), f(host.transpose(1, 0, 2), axis=0))
        out = to(np.zeros((33, 5), np.int64))
        assert public(d, axis=1, out=out) is out
        np.testing.assert_array_equal(back(out), f(host, axis=1))


def test_torch_bfloat16():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no GPU")
    host = np.random.default_rng(3).integers(-4, 5, (17, 1025)).astype(np.float32)
    host[3, 700] = np.nan
    t = torch.from_numpy(host).cuda().to(torch.bfloat16)
    as_float = t.float().cpu().numpy()
    for public, f in FUNCTIONS:
        assert int(public(t).cpu()) == f(as_float)
        for axis in (0, 1):
            np.testing.assert_array_equal(public(t, axis=axis).cpu().numpy(), f(as_float, axis=axis))


def test_prewarm_builds_them():
    assert pyscan.reductions.prewarm(names=["arg_extreme"], dtypes=[np.float32, np.int8]) == 4
