"""The histogram registry: its order (PMPP ch. 9's strategies, then beyond the book, then the kernels of
pyscan.histogram / pyscan.bincount, which count bytes too) and what `auto` runs for the byte histogram."""

from __future__ import annotations

from ..registry import Registry

HISTOGRAMS = Registry(
    "histogram",
    order=("atomic_block", "atomic_interleaved", "privatized", "aggregated", "coarsened", "fast", "numpy_shared_copies",
           "numpy_global_atomics"),
    auto=("fast", "aggregated"),
)
