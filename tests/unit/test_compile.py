"""Every kernel file compiles on its own with nvcc, with the defaults of its #defines (no GPU needed)."""

import shutil
import subprocess

import pytest

from pyscan.runtime.loader import KERNEL_ROOT, kernel_files

NVCC = shutil.which("nvcc")
ARCHS = ("sm_80", "sm_90")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("relpath", kernel_files())
def test_kernel_compiles_standalone(relpath, tmp_path):
    procs = {
        arch: subprocess.Popen(
            [NVCC, "-std=c++17", f"-arch={arch}", "-cubin", "-o", str(tmp_path / f"{arch}.cubin"),
             str(KERNEL_ROOT / relpath)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for arch in ARCHS
    }
    failures = {arch: p.communicate()[0] for arch, p in procs.items() if p.wait() != 0}
    assert not failures, f"{relpath} failed to compile:\n" + "\n".join(f"[{a}]\n{log}" for a, log in failures.items())


def test_there_are_kernels():
    assert "basics/scalar_multiply.cu" in kernel_files()
