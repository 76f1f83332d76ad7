"""Shared test set-up: the `gpu` marker skips (with the reason) when no GPU is usable."""

import numpy as np
import pytest

from pyscan.gpu import gpu_unavailable_reason

_reason = gpu_unavailable_reason()


def pytest_collection_modifyitems(config, items):
    if _reason is None:
        return
    skip = pytest.mark.skip(reason=f"no usable GPU: {_reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng(request):
    """A fresh, reproducible random generator per test (seeded from the test's name)."""
    seed = abs(hash(request.node.nodeid)) % 2**32
    return np.random.default_rng(seed)
