"""Histogram (PMPP ch. 9).  Placeholder until issue 4 lands."""

from ..registry import Registry

HISTOGRAMS = Registry("histogram")
HISTOGRAM_ALGORITHMS: tuple = ()


def histogram(data, bins=256, *, algorithm="auto"):
    raise NotImplementedError("pyscan.histogram is not implemented yet")


def text_histogram(text, *, algorithm="auto"):
    raise NotImplementedError("pyscan.text_histogram is not implemented yet")
