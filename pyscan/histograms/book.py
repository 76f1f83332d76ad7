"""The histogram kernels of PMPP ch. 9 (kernels/histogram/*.cu): drivers and registration."""

from __future__ import annotations

from . import launch
from . import models as m
from .registry import HISTOGRAMS


def _driver(relpath, function, config):
    def driver(data, bins, *, call, letters=False, out=None):
        grid, block = config(data.size, launch.sms(call))
        return launch.run_kernel(relpath, function, data, bins, letters, grid, block, call=call, out=out)

    driver.__name__ = function
    driver.__doc__ = f"Launch {function} (kernels/{relpath}) with the grid of models.{config.__name__}."
    return driver


HISTOGRAMS.register(
    "atomic_block", _driver("histogram/atomic_block.cu", "histogram_atomic_block", m.atomic_block_config),
    kernels=("histogram/atomic_block.cu",), source="PMPP Fig. 9.6",
    summary="strategy I: a contiguous section per thread, every byte a global atomicAdd",
    model=m.atomic_block_model)
HISTOGRAMS.register(
    "atomic_interleaved",
    _driver("histogram/atomic_interleaved.cu", "histogram_atomic_interleaved", m.atomic_interleaved_config),
    kernels=("histogram/atomic_interleaved.cu",), source="PMPP Fig. 9.8",
    summary="strategy II: interleaved (grid-stride) partition, coalesced reads, global atomics",
    model=m.atomic_interleaved_model)
HISTOGRAMS.register(
    "privatized", _driver("histogram/privatized.cu", "histogram_privatized", m.privatized_config),
    kernels=("histogram/privatized.cu",), source="PMPP Fig. 9.10",
    summary="a shared-memory histogram per block (one byte per thread), committed with global atomics",
    model=m.privatized_model)
HISTOGRAMS.register(
    "aggregated", _driver("histogram/aggregated.cu", "histogram_aggregated", m.aggregated_config),
    kernels=("histogram/aggregated.cu",), source="PMPP Fig. 9.11 (three bugs of the listing fixed)",
    summary="privatized, grid sized to the device, runs of one bin added with one atomic",
    model=m.aggregated_model)
HISTOGRAMS.register(
    "coarsened", _driver("histogram/coarsened.cu", "histogram_coarsened", m.coarsened_config),
    kernels=("histogram/coarsened.cu",), source="PMPP 4th ed. §9.5 (beyond the seed)",
    summary=f"privatized, {m.COARSE_FACTOR} bytes per thread interleaved in a tile, one commit per tile",
    model=m.coarsened_model)
