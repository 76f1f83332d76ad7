"""Shared test set-up: the `gpu` marker skips (with the reason) when no GPU is usable; `load_script` loads a
demo or script of the repository as a module, and `run_demo` runs a demo's main() and checks its pictures."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from pyscan.gpu import gpu_unavailable_reason

_reason = gpu_unavailable_reason()


def pytest_collection_modifyitems(config, items):
    if _reason is None:
        return
    skip = pytest.mark.skip(reason=f"no usable GPU: {_reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def rng(request):
    """A fresh, reproducible random generator per test (seeded from the test's name)."""
    seed = abs(hash(request.node.nodeid)) % 2**32
    return np.random.default_rng(seed)


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def load_script():
    """load_script("demos/races.py") -> that file loaded afresh as a module (its main() and functions to call)."""
    def load(relative_path: str):
        path = ROOT / relative_path
        spec = importlib.util.spec_from_file_location(f"{path.parent.name}_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def run_demo(load_script, capsys):
    """run_demo("demos/races.py", "--model", "--save", path, pngs=[path]) -> what the demo printed, after asserting
    that its main() returned `code` (default 0) and that each of `pngs` is a PNG file; its figures are closed."""
    def run(relative_path: str, *args, code: int = 0, pngs=()):
        import matplotlib.pyplot as plt

        capsys.readouterr()
        assert load_script(relative_path).main([str(a) for a in args]) == code
        for path in pngs:
            assert Path(path).read_bytes()[:8] == PNG_MAGIC, f"{path} is not a PNG file"
        plt.close("all")
        return capsys.readouterr().out

    return run
