"""The metadata is pyproject.toml's (`pip install -e ".[gpu,test]"`).  This file adds the one C extension: the kernel
launcher pyscan/runtime/_launch.c (mechanism only: it packs a plan's arguments and calls cuLaunchKernel; libcuda is
opened at run time, so it builds without CUDA).  Optional: where no C compiler is found pyscan still installs, and
launches through cuda.core (`python -m pyscan info` says which)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("pyscan.runtime._launch", ["pyscan/runtime/_launch.c"], libraries=["dl"],
                             optional=True)])
