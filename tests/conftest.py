"""Shared test set-up of tests/unit (runs without a GPU) and tests/gpu (needs one: tests/gpu/conftest.py marks every
test there `gpu`): the `gpu` marker skips when no GPU is usable, all such tests on one line of `-rs` with the first
part of the reason; `load_script` loads a demo or script of the repository as a module, `run_demo` runs a demo's
main() and checks its pictures, and `no_gpu` (tests/helpers/bad_input_checks.py) blocks every path to the GPU."""

import importlib.util
import os
import re
import zlib
from pathlib import Path

import numpy as np
import pytest
from bad_input_checks import no_gpu  # noqa: F401  the fixture, for the bad-input tests of tests/unit and tests/gpu

from pyscan import gpu_unavailable_reason


def short_reason(reason: str, limit: int = 100) -> str:
    """"no usable GPU: " and the reason's first sentence (up to its first "; " or ". "), at most `limit` characters:
    one cause, one line ("pycuda is not installed (No module named 'pycuda')"); `python -m pyscan info` has the
    whole reason with what to install."""
    first = re.split(r";\s|\.\s", reason.strip(), maxsplit=1)[0].rstrip(".")
    text = f"no usable GPU: {first}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


_reason = gpu_unavailable_reason()
if _reason is None:  # tests that make pycuda GPUArrays themselves need pycuda's context (the primary one)
    from pyscan.basics import pycuda_context

    pycuda_context()
_skip_reason = None if _reason is None else short_reason(_reason)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # Raised here, not through a skip marker: pytest's `-rs` summary folds skips of one (file, line, reason), and a
    # marker's skip is placed at each test's own line, so 85 tests would print 85 lines.  Raised from this one line,
    # they print one: "SKIPPED [85] tests/conftest.py:LINE: no usable GPU: ...".  tryfirst: before the tests' own
    # skipif markers (a gpu test that also needs torchrun is skipped for the missing GPU, on the same line).
    if _skip_reason is not None and item.get_closest_marker("gpu") is not None:
        pytest.skip(_skip_reason)


def pytest_addoption(parser):
    parser.addoption("--shard", default=None, metavar="I/N",
                     help="run only shard I of N (0 <= I < N) of the collected tests, chosen by a hash of the node id: "
                          "the whole GPU suite in device calls shorter than its limit (scripts/gpu_host.sh suite)")


def _shard(config):
    """(index, count) of --shard I/N, or None; a bad value is a usage error."""
    shard = config.getoption("--shard")
    if not shard:
        return None
    try:
        index, count = (int(part) for part in shard.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard: expected I/N with 0 <= I < N, got {shard!r}") from None
    if not 0 <= index < count:
        raise pytest.UsageError(f"--shard: expected I/N with 0 <= I < N, got {shard!r}")
    return index, count


def pytest_configure(config):
    # checked here too, where pytest-xdist's controller runs it: raised only in the workers' collection, the error
    # reaches the user as an xdist INTERNALERROR about a crashed worker ("no tests ran")
    _shard(config)


def pytest_collection_modifyitems(config, items):
    shard = _shard(config)
    if shard is None:
        return
    index, count = shard
    kept = [item for item in items if zlib.crc32(item.nodeid.encode()) % count == index]
    config.hook.pytest_deselected(items=[item for item in items if zlib.crc32(item.nodeid.encode()) % count != index])
    items[:] = kept


_durations = os.environ.get("PYSCAN_TEST_DURATIONS")  # a folder: each worker appends "seconds phase outcome nodeid"


def pytest_runtest_logreport(report):
    # Written as each test ends, so a run stopped at a time limit still says where its time went and what failed
    # (pytest's own --durations and -rf summaries print only at the end): every phase of 10 ms or more, and every
    # failure however short.
    if _durations and (report.duration >= 0.01 or report.failed):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(os.path.join(_durations, f"durations-{worker}.txt"), "a") as log:
            log.write(f"{report.duration:.3f} {report.when} {report.outcome} {report.nodeid}\n")


@pytest.fixture
def rng(request):
    """A fresh, reproducible random generator per test, seeded from the test's name (crc32, not hash(): str hashes
    are salted per process, so a failure seen once could not be seen again)."""
    seed = zlib.crc32(request.node.nodeid.encode())
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
