"""pyscan.scan's input checks, which run without a GPU: they fail before anything is launched.  The scans
themselves against NumPy on the GPU: tests/gpu/test_scan_gpu.py.
"""

import numpy as np
import pytest

import pyscan
from pyscan.scans import MAX_LENGTH, SCAN_ALGORITHMS


def test_unknown_algorithm_lists_the_valid_ones():
    with pytest.raises(ValueError) as info:
        pyscan.scan(np.ones(4, np.float32), algorithm="bogus")
    for name in SCAN_ALGORITHMS + ("auto",):
        assert repr(name) in str(info.value)


def test_unknown_op_lists_the_valid_ones():
    with pytest.raises(ValueError, match="'add', 'mul', 'max', 'min', 'bitwise_and'.*'logical_or'"):
        pyscan.scan(np.ones(4, np.float32), op="prod")


@pytest.mark.parametrize("bad, exc, words", [
    (np.ones(4, np.complex64), TypeError, "complex64.*bool, int8.*float16.*float64"),
    (np.ones(4, "i4,i4"), TypeError, "unsupported dtype"),
    (np.ones(4, np.float32), TypeError, "bitwise_xor.*integers and bool.*float32"),  # op="bitwise_xor" below
    (np.ones((2, 3), np.int32), ValueError, r"axis 2 is out of bounds"),  # N-d arrays take axis= (test_axis.py)
    (np.float32(1), TypeError, "numpy.ndarray"),
    ([1, 2, 3], TypeError, "numpy.ndarray or a device array"),
    (None, TypeError, "numpy.ndarray"),
])
def test_bad_input(bad, exc, words):
    for algorithm in ("auto", "kogge_stone"):
        with pytest.raises(exc, match=words):
            pyscan.scan(bad, axis=2 if isinstance(bad, np.ndarray) and bad.ndim == 2 else None, algorithm=algorithm,
                        op="bitwise_xor" if "bitwise" in words else "add")


def test_exclusive_must_be_bool():
    with pytest.raises(TypeError, match="exclusive"):
        pyscan.scan(np.ones(4, np.int32), exclusive="yes")


def test_length_past_the_index_type():
    huge = np.broadcast_to(np.zeros(1, np.int32), (MAX_LENGTH + 1,))  # no memory: a zero-stride view
    with pytest.raises(ValueError, match="32-bit"):  # the book's scans keep the limit; the fast one takes any length
        pyscan.scan(huge, algorithm="hierarchical")
