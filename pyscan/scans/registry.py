"""The scan registry: its order (PMPP ch. 11 and Hands-On ch. 4, then beyond the book) and what `auto` runs."""

from __future__ import annotations

from ..registry import Registry, ScanAlgorithm

SCANS = Registry(
    "scan", entry_type=ScanAlgorithm,
    order=("naive", "kogge_stone", "kogge_stone_double_buffer", "brent_kung", "coarsened", "hierarchical", "blelloch",
           "blelloch_block", "single_pass", "decoupled_lookback", "axis"),
    # the single-pass look-back scan (Merrill & Garland 2016) wins at every size; the hierarchical scan of
    # PMPP §11.6 where it is not registered
    auto=("decoupled_lookback", "hierarchical"),
)
