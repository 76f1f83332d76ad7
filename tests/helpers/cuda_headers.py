"""Where the CUDA toolkit's headers are, for the tests that compile kernels' own source for the CPU
(tests/emulate/*_on_cpu.cpp)."""

import os
import shutil
from pathlib import Path


def cuda_include():
    """The CUDA toolkit's include directory ($CUDA_HOME / $CUDA_PATH, /usr/local/cuda, or beside nvcc) holding
    cuda_fp16.h and libcu++ (cccl), or None."""
    nvcc = shutil.which("nvcc")
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda",
                  str(Path(nvcc).resolve().parent.parent) if nvcc else None]
    for root in filter(None, candidates):
        include = Path(root) / "include"
        if (include / "cuda_fp16.h").exists() and ((include / "cccl").is_dir() or (include / "cuda" / "std").is_dir()):
            return include
    return None
