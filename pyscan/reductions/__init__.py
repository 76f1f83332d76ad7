"""Reduction (PMPP ch. 10).  Placeholder until issue 4 lands."""

from ..registry import Registry

REDUCTIONS = Registry("reduce")
REDUCE_ALGORITHMS: tuple = ()


def reduce(x, *, algorithm="auto", op="add"):
    raise NotImplementedError("pyscan.reduce is not implemented yet")
