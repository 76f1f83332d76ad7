"""pyscan: GPU parallel patterns (scan, reduction, histogram, Game of Life) as readable CUDA from Python.

The kernels live in kernels/ at the top of the checkout; they are installed as the package data
`pyscan/kernels/**.cu` (package_dir maps pyscan.kernels to kernels/), and the loader looks in both places.
"""

from pathlib import Path

from setuptools import setup

here = Path(__file__).parent
kernel_data = sorted(str(p.relative_to(here / "kernels")) for p in (here / "kernels").rglob("*") if p.suffix in (".cu", ".cuh"))

setup(
    name="pyscan",
    version="0.1.0",
    description="PMPP and Hands-On GPU parallel patterns as readable CUDA kernels launched through PyCUDA",
    long_description=(here / "README.md").read_text(),
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=["pyscan", "pyscan.scans", "pyscan.reductions", "pyscan.histograms", "pyscan.life", "pyscan.kernels"],
    package_dir={"pyscan.kernels": "kernels"},
    package_data={"pyscan.kernels": kernel_data},
    install_requires=["numpy", "matplotlib"],
    extras_require={
        "gpu": ["pycuda"],
        "test": ["pytest"],
    },
)
