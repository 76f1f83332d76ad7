"""Prefix scan (PMPP ch. 11, Hands-On ch. 4).  Placeholder until issue 3 lands."""

from ..registry import Registry

SCANS = Registry("scan")
SCAN_ALGORITHMS: tuple = ()


def scan(x, *, algorithm="auto", exclusive=False, op="add"):
    raise NotImplementedError("pyscan.scan is not implemented yet")
