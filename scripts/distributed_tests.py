"""The multi-GPU tests of pyscan.distributed (tests/gpu/test_distributed_gpu.py), one pytest per rank under torchrun:

    torchrun --nproc-per-node 2 scripts/distributed_tests.py [pytest options]

Rank 0 prints pytest's report; every other rank writes its own to distributed_tests_rank<r>.log in $OUT (or the
current directory).  The exit status is pytest's, and torchrun fails if any rank does.  Each process works on the
GPU its LOCAL_RANK names (CUDA_DEVICE, which pyscan's default context follows, is set to it too), and NVLink
multicast stays off (NCCL_NVLS_ENABLE=0 and the like, unless already set).
"""

import os
import sys
from pathlib import Path

for name, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1"),
                    ("CUDA_DEVICE", os.environ.get("LOCAL_RANK", "0"))):
    os.environ.setdefault(name, value)

root = Path(__file__).resolve().parents[1]


def main() -> int:
    import pytest

    rank = int(os.environ.get("RANK", "0"))
    os.chdir(root)
    if rank != 0:  # the file descriptors, so that NCCL's and CUDA's own output goes there too
        log = Path(os.environ.get("OUT", ".")) / f"distributed_tests_rank{rank}.log"
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
    args = ["-q", "-rs", "-p", "no:cacheprovider", "-p", "no:randomly", str(root / "tests" / "gpu" / "test_distributed_gpu.py")]
    return int(pytest.main(args + sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
