"""For tools that still call setup.py; the metadata is pyproject.toml's (`pip install -e ".[gpu,test]"`)."""

from setuptools import setup

setup()
