"""tests/unit runs anywhere, CI's machine without a GPU included: no test here may carry the `gpu` marker.  A test
that needs the GPU belongs in tests/gpu, whose conftest marks it.  One marked `gpu` here fails, on every machine,
instead of being skipped quietly wherever no GPU is."""

import pytest


# A wrapper runs before every plain pytest_runtest_setup, tests/conftest.py's skip of `gpu` tests included, and this
# conftest's hooks see only the tests under tests/unit.  A failure at setup, not a UsageError at collection: under
# pytest-xdist (CI's `-n 2`) a collection hook's exception reaches the user as a bare INTERNALERROR.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is not None:
        pytest.fail("marked gpu, but under tests/unit (which must run without a GPU): move it to tests/gpu, whose "
                    "conftest marks every test there", pytrace=False)
    return (yield)
