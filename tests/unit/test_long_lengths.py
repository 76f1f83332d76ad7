"""The index arithmetic that makes lengths past 2^31 elements (and 2^32 bytes) safe in the fast algorithms, checked
without a GPU.  The lengths themselves, checked by construction on the GPU: tests/gpu/test_long_lengths_gpu.py.
"""

import numpy as np
import pytest

from pyscan.histograms import models as hm
from pyscan.scans import decoupled_lookback as dl

HISTOGRAM_N = (1 << 32) + 7


def test_scan_tile_indices_fit_in_32_bits():
    """decoupled_lookback.cu keeps tile indices in int and element offsets in 64 bits: the tile count plus the
    persistent grid must stay below 2^31 for any length a device can hold (2^40 elements = 4 TiB of int32)."""
    for dtype in (np.int32, np.int64):
        tiles = -(-(1 << 40) // dl.tile_size(dtype))
        assert tiles + 10_000 * dl.config(dtype).min_blocks < 2**31


@pytest.mark.parametrize("sms", [1, 8, 114, 132, 264])
@pytest.mark.parametrize("block, per_sm", [(hm.FAST_BLOCK, None), (256, 8), (1024, 1)])
def test_histogram_blocks_count_fewer_than_2_32_bytes(sms, block, per_sm):
    """The fast histogram's per-copy and per-bin block sums are 32-bit: for 2^32 + 7 bytes (and far more) the grid
    gives no block more than MAX_BLOCK_COUNT + one grid-stride step of bytes, under 2^32."""
    for n in (HISTOGRAM_N, 1 << 36, (1 << 40) + 3):
        grid, block_ = hm.fast_config(n, sms, block=block, blocks_per_sm=per_sm)
        vectors = n // hm.FAST_VECTOR
        threads = grid * block_
        per_block = -(-vectors // threads) * hm.FAST_VECTOR * block_ + 2 * hm.FAST_VECTOR  # body + head/tail bytes
        assert per_block <= hm.MAX_BLOCK_COUNT + hm.FAST_VECTOR * block_ + 2 * hm.FAST_VECTOR < 2**32
        assert grid < 2**31
