"""Where the CUDA toolkit's headers are, for the tests that compile kernels' own source for the CPU
(tests/emulate/*_on_cpu.cpp)."""

import os
import shutil
import subprocess
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


GXX = shutil.which("g++")
CUDA_INCLUDE = cuda_include()
ROOT = Path(__file__).resolve().parents[2]


def needs_emulator():
    """The skip mark of a test module that builds an emulator: it needs g++ and the CUDA headers."""
    import pytest

    return pytest.mark.skipif(GXX is None or CUDA_INCLUDE is None,
                              reason="needs g++ and the CUDA headers ($CUDA_HOME/include or /usr/local/cuda)")


def build_emulator(name: str, where: Path, macros: dict | None = None, extra=()) -> Path:
    """tests/emulate/<name>.cpp built by g++ with AddressSanitizer into where/<name>: `macros` (a kernel's #defines,
    as pyscan's loader writes them) in a header included first, `extra` more compiler arguments."""
    from pyscan.runtime.loader import _define_lines

    command = [GXX, "-std=c++20", "-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer", "-pthread", *extra]
    if macros is not None:
        header = where / "defines.h"
        header.write_text("\n".join(_define_lines(macros)) + "\n")
        command += ["-include", str(header)]
    binary = where / name
    p = subprocess.run([*command, f"-I{CUDA_INCLUDE}", f"-I{CUDA_INCLUDE / 'cccl'}", "-o", str(binary),
                        str(ROOT / "tests" / "emulate" / f"{name}.cpp")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr[-4000:]
    return binary
