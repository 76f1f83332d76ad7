"""Conway's Game of Life (Hands-On ch. 4).  Placeholder until issue 5 lands."""

from ..registry import Registry

LIFE = Registry("life")
LIFE_KERNELS: tuple = ()
