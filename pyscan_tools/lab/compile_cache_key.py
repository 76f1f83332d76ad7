"""What a kernel build's first use in a process costs when pycuda's disk cache already holds its cubin: pycuda's
compile() keys the cache on the source, and a source that says "#include" is first run through nvcc's preprocessor
(`nvcc --preprocess <options> kernel.cu --compiler-options -P`, as pycuda.compiler.preprocess_source runs it) and
keyed on the output; the loader hands it the source with the toolkit's includes spelled "# include"
(loader.keyed_as_written), keyed on the text itself.  Per kernel file (its default build): the preprocessor's
time (the median of 3 runs) and the md5 of the keyed text, ms.  No GPU needed (nvcc on PATH).

    python pyscan_tools/lab/compile_cache_key.py        (benchmarks/compile_cache_key.txt)
"""

from __future__ import annotations

import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pyscan.runtime import loader  # noqa: E402


def preprocess_ms(source: str, folder: Path) -> float:
    path = folder / "kernel.cu"
    path.write_text(source)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(["nvcc", "--preprocess", *loader.COMPILE_OPTIONS, "-arch", "sm_90", str(path),
                        "--compiler-options", "-P"], check=True, capture_output=True)
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times)


def md5_ms(text: str) -> float:
    start = time.perf_counter()
    hashlib.md5(text.encode("utf-8")).hexdigest()
    return 1e3 * (time.perf_counter() - start)


def main() -> None:
    total_pre = total_md5 = 0.0
    with tempfile.TemporaryDirectory() as folder:
        for relpath in loader.kernel_files():
            built = loader.build_source(relpath)
            keyed = loader.keyed_as_written(built)
            pre = preprocess_ms(built, Path(folder)) if "#include" in built else 0.0
            md5 = md5_ms(keyed)
            total_pre, total_md5 = total_pre + pre, total_md5 + md5
            print(f"{relpath:44s} preprocessor {pre:7.1f} ms   md5 of the keyed text {md5:6.3f} ms")
    print(f"{len(loader.kernel_files())} files: preprocessor {total_pre:.0f} ms, md5 {total_md5:.1f} ms")


if __name__ == "__main__":
    main()
