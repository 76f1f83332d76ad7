"""The no_gpu fixture and the checks that tests/unit/test_bad_input.py and tests/gpu/test_bad_input_gpu.py share
(tests/unit/test_bad_input.py says what they prove).  tests/helpers is on sys.path (pytest.ini's pythonpath);
tests/conftest.py imports the fixture, so that tests in either folder can ask for it."""

import re
import sys

import numpy as np
import pytest

import pyscan
from pyscan.runtime import driver

SUPPORTED = r"(?s)(?=.*int32)(?=.*int64)(?=.*float32)(?=.*float64)"  # the message lists all four, in any order

# ------------------------------------------------------------------------------------------------ fixtures


class GPUTouched(Exception):
    """Raised by the no_gpu fixture where pyscan would start using the GPU."""

def _blocker(*args, **kwargs):
    raise GPUTouched("the GPU was touched (pyscan.runtime.driver, cuda.core or a pycuda launch) before the input was "
                     "validated")


class _Blocked:
    """Stands for cuda.core and cuda.bindings.driver: any use raises GPUTouched."""

    def __getattr__(self, name):
        _blocker()


@pytest.fixture
def no_gpu(monkeypatch):
    """Every path to the GPU raises GPUTouched for the duration of the test."""
    for name, module in list(sys.modules.items()):
        if (name == "pyscan" or name.startswith("pyscan.")) and module is not None:
            for attr, value in list(vars(module).items()):
                if value is driver.ready or value is driver.enter:
                    monkeypatch.setattr(module, attr, _blocker)
    monkeypatch.setattr(driver, "ready", _blocker)
    monkeypatch.setattr(driver, "enter", _blocker)  # where every public call starts on the GPU
    monkeypatch.setattr(driver, "_core", _Blocked())
    monkeypatch.setattr(driver, "_cu", _Blocked())
    drv = sys.modules.get("pycuda.driver")
    if drv is not None:  # on a GPU host: launches and allocations too
        for attr in ("__call__", "prepared_call", "prepared_async_call", "prepared_timed_call"):
            if hasattr(drv.Function, attr):
                monkeypatch.setattr(drv.Function, attr, _blocker)
        monkeypatch.setattr(drv, "mem_alloc", _blocker)
    yield


def snapshot(x):
    """What the input looked like, to compare after the call."""
    if isinstance(x, np.ndarray):
        return ("ndarray", x.copy(), x.strides, x.dtype, x.flags.writeable)
    if type(x).__module__ == "pycuda.gpuarray":
        try:
            host = x.get()
        except Exception:  # noqa: BLE001  a pycuda that cannot copy a non-contiguous GPUArray back
            host = None
        return ("gpuarray", host, x.strides, x.dtype)
    if isinstance(x, (list, dict, bytearray)):
        import copy

        return ("container", copy.deepcopy(x))
    return ("other", x)


def assert_untouched(x, snap):
    kind = snap[0]
    if kind == "ndarray":
        assert x.strides == snap[2] and x.dtype == snap[3] and x.flags.writeable == snap[4]
        np.testing.assert_array_equal(x, snap[1])
    elif kind == "gpuarray":
        assert x.strides == snap[2] and x.dtype == snap[3]
        if snap[1] is not None:
            np.testing.assert_array_equal(x.get(), snap[1])
    elif kind == "container":
        assert x == snap[1]


def raises_clearly(call, x, exc, pattern):
    """call(x) raises exc (TypeError/ValueError) whose message matches pattern; x is untouched afterwards."""
    snap = snapshot(x)
    with pytest.raises(exc) as info:
        call(x)
    assert not isinstance(info.value, pyscan.GPUUnavailableError)
    assert re.search(pattern, str(info.value)), f"message {str(info.value)!r} does not match {pattern!r}"
    assert_untouched(x, snap)
    return info.value
