"""`exercise start NAME [DIR]`: the stub (and the stub driver) written into the student's folder, with the project's
headers beside them in pyscan_headers/ -- copies, so that the folder compiles on its own (plain nvcc too) wherever
pyscan is installed, and a student may read them."""

from __future__ import annotations

import shutil
from pathlib import Path

from pyscan.runtime.loader import KERNEL_ROOT

from .registry import get

HEADERS = "pyscan_headers"  # the folder the stubs include from: pyscan_headers/common/scan_section.cuh, ...
HEADER_FOLDERS = ("common", "histogram", "life")


def copy_headers(folder) -> Path:
    """kernels/{common,histogram,life}/*.cuh -> folder/pyscan_headers/... (refreshed every time)."""
    target = Path(folder) / HEADERS
    for sub in HEADER_FOLDERS:
        (target / sub).mkdir(parents=True, exist_ok=True)
        for header in sorted((KERNEL_ROOT / sub).glob("*.cuh")):
            shutil.copyfile(header, target / sub / header.name)
    return target


def start(name: str, folder=".", *, force: bool = False) -> list:
    """Write the exercise's stub file(s) into `folder` (created if needed) and the headers they include; returns the
    paths written.  A stub already there is kept unless force (FileExistsError names it)."""
    exercise = get(name)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    targets = [folder / f for f in exercise.files]
    existing = [str(t) for t in targets if t.exists()]
    if existing and not force:
        raise FileExistsError(f"{', '.join(existing)} already exist(s): your work is kept; pass --force to overwrite")
    for stub_name, target in zip(exercise.files, targets):
        shutil.copyfile(Path(__file__).resolve().parent / "stubs" / stub_name, target)
    copy_headers(folder)
    return targets
