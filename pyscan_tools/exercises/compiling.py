"""The first stage, with or without a GPU: nvcc compiles the student's file in the builds the checker will run (the
loader's source: the #defines, the includes inlined with #line directives, so nvcc's messages name the student's
file and line)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyscan.runtime.loader import COMPILE_OPTIONS, build_source
from pyscan.types import defines as type_defines

ARCH = "sm_90"  # the architecture of the compile stage (the GPU stages compile for the device's own)
_MESSAGE_RE = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?P<kind>error|warning|catastrophic error)[^:]*: (?P<text>.*)$")


def find_nvcc() -> str | None:
    from ..check.sanitizer import find_cuda_tool

    return find_cuda_tool("nvcc")


def builds(exercise) -> list:
    """The #defines of each build the checker runs: the integer build, and a float one (the TRACE build where the
    exercise has one, so that its hooks compile too)."""
    import numpy as np

    kind = exercise.kind
    if kind == "histogram":
        return [{"LETTERS": 0}, {"LETTERS": 1}]
    if kind == "life":
        return [{"ELEM_TYPE": "int"}]
    if kind == "map":
        return [{"ELEM_TYPE": "int"}, {"ELEM_TYPE": "float"}]
    base_int = type_defines(np.int32, exercise.op)
    base_float = type_defines(np.float32, exercise.op)
    sized = {"SECTION_SIZE": exercise.section} if kind in ("section_scan", "hierarchical", "segmented_scan") else {}
    traced = kind in ("section_scan", "hierarchical", "reduce_tree", "reduce_atomic")
    return [{**base_int, **sized, **exercise.defines},
            {**base_float, **sized, **exercise.defines, **({"TRACE": 1} if traced else {})}]


def parse_messages(log: str) -> list:
    """nvcc's errors as 'file:line: text' (the first ones; warnings dropped)."""
    out = []
    for line in log.splitlines():
        m = _MESSAGE_RE.match(line.strip())
        if m and m.group("kind") != "warning":
            out.append(f"{m.group('file')}:{m.group('line')}: {m.group('kind')}: {m.group('text')}")
    return out


def compile_file(path, defines: dict, nvcc: str) -> tuple:
    """(ok, messages, log) of one build of `path` (an absolute .cu path)."""
    try:
        source = build_source(str(path), **defines)
    except FileNotFoundError as exc:  # an #include that is not there
        return False, [str(exc)], str(exc)
    with tempfile.TemporaryDirectory(prefix="pyscan-exercise-") as tmp:
        src = Path(tmp) / "build.cu"
        src.write_text(source)
        proc = subprocess.run([nvcc, *COMPILE_OPTIONS, f"-arch={ARCH}", "-cubin", "-o", str(Path(tmp) / "build.cubin"),
                               str(src)], capture_output=True, text=True)
    log = (proc.stdout + proc.stderr).strip()
    messages = parse_messages(log)
    if proc.returncode != 0 and not messages:
        messages = log.splitlines()[-8:]
    return proc.returncode == 0, messages, log


def compile_builds(path, exercise, nvcc: str | None = None) -> tuple:
    """(ok, lines to show): every build of the exercise compiled (in parallel); the first failing build's messages."""
    nvcc = nvcc or find_nvcc()
    if nvcc is None:
        return None, ["nvcc not found (not on PATH, nor under $CUDA_HOME/bin or /usr/local/cuda/bin)"]
    all_builds = builds(exercise)
    with ThreadPoolExecutor(max_workers=len(all_builds)) as pool:
        results = list(pool.map(lambda d: compile_file(path, d, nvcc), all_builds))
    for d, (ok, messages, _) in zip(all_builds, results):
        if not ok:
            shown = ", ".join(f"{k}={v}" for k, v in d.items())
            return False, [f"in the build {shown}:"] + messages[:8]
    return True, [f"{len(all_builds)} build(s): " + "; ".join(", ".join(f"{k}={v}" for k, v in d.items())
                                                        for d in all_builds)]
