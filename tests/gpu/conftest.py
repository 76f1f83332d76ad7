"""Every test under tests/gpu needs the GPU: each one collected here gets the `gpu` marker, so the files carry no
@pytest.mark.gpu of their own, and tests/conftest.py skips them all (one line of `-rs`) where no GPU is usable.

The one way out is a module's own NEEDS_GPU = False: test_distributed_gpu.py sets it under
PYSCAN_DISTRIBUTED_TEST_CPU=1, where it runs its tests on a gloo group with NumPy in place of the GPU kernels."""

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before `-m gpu` / `-m "not gpu"` select by the marker
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in Path(item.path).resolve().parents and getattr(getattr(item, "module", None), "NEEDS_GPU", True):
            item.add_marker(pytest.mark.gpu)
