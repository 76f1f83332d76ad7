"""nvcc on the CPU machine: compile many specialised builds of a kernel (their #define lines and source, from
pyscan.runtime.loader.build_source) to sm_90 cubins, two at a time, and collect what fails."""

import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

NVCC = shutil.which("nvcc")


def compile_failures(tmp_path, sources) -> dict:
    """{case: nvcc's output} for the (case, source text) pairs that do not compile (empty when all do)."""

    def compile_one(item):
        k, (case, text) = item
        source = tmp_path / f"k{k}.cu"
        source.write_text(text)
        p = subprocess.run([NVCC, "-std=c++17", "-arch=sm_90", "-cubin", "-o", str(tmp_path / f"k{k}.cubin"),
                            str(source)], capture_output=True, text=True)
        return case, (p.stdout + p.stderr if p.returncode else None)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return {case: log for case, log in pool.map(compile_one, enumerate(sources)) if log is not None}
