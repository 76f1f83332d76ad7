"""The launch in C (pyscan/launch.c), compiled at first use and cached, as pycuda compiles kernels.

A public call's host time is mostly small Python steps and one cuLaunchKernel; through ctypes that one call costs
about as much as all the rest (docs/public_call_overhead.md).  `launcher()` returns the compiled module (its
`launch`, `get_context`, `set_context` bound to libcuda's functions), or None where it cannot be built or is turned
off, and pyscan then launches through ctypes (pyscan.cuda) with the same results.

* **Build.**  The C compiler Python was built with (sysconfig's CC, else `cc`) and Python's headers, the same two
  that building pycuda needs; nothing is linked (the driver's functions come from pyscan.cuda's ctypes handle).
* **Cache.**  `$PYSCAN_CACHE_DIR` or `~/.cache/pyscan`, one file per (source text, Python's ABI), written
  atomically, so processes and threads building at once are safe and a second process compiles nothing.
* **Off switch.**  `PYSCAN_NATIVE_LAUNCH=0` keeps the ctypes launch (`why_not()` then says so), for comparing the
  two or where no compiler is at hand.  A failed build warns once, with the compiler's message.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import threading
import warnings
from pathlib import Path

SOURCE = Path(__file__).with_name("launch.c")
_lock = threading.Lock()
_state: dict = {}  # "module": the bound module or None; "why": why there is none


def cache_dir() -> Path:
    return Path(os.environ.get("PYSCAN_CACHE_DIR") or Path.home() / ".cache" / "pyscan")


def compiler() -> list:
    """The C compiler command: sysconfig's CC (the one that built this Python), else cc."""
    cc = sysconfig.get_config_var("CC") or "cc"
    return shlex.split(cc)


def library_path(source_text: bytes | None = None) -> Path:
    """Where the compiled module of this source and this Python's ABI lives in the cache."""
    text = SOURCE.read_bytes() if source_text is None else source_text
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    tag = hashlib.sha256(text + sys.version.encode() + " ".join(compiler()).encode()).hexdigest()[:16]
    return cache_dir() / f"launch-{tag}{suffix}"


def build(target: Path | None = None) -> Path:
    """Compile launch.c into the cache (if not there yet); returns the module's path.  RuntimeError with the
    compiler's output if it fails."""
    text = SOURCE.read_bytes()
    target = target or library_path(text)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        raise RuntimeError(f"no Python.h under {include}: the Python headers are not installed (python3-dev)")
    handle, partial = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
    os.close(handle)
    command = compiler() + ["-O2", "-shared", "-fPIC", "-std=c11", "-I", include, str(SOURCE), "-o", partial]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr or done.stdout}")
        os.replace(partial, target)  # atomic: another process sees the whole file or none
    except OSError as exc:
        raise RuntimeError(f"could not run the C compiler ({' '.join(command[:1])}): {exc}") from None
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return target


def load(path: Path):
    """Import the compiled module at `path` (unbound)."""
    spec = importlib.util.spec_from_file_location("pyscan._launch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bind(module, lib) -> None:
    """Give the module the driver functions of `lib` (a ctypes CDLL of libcuda, or a fake one)."""
    import ctypes

    address = lambda name: ctypes.cast(getattr(lib, name), ctypes.c_void_p).value  # noqa: E731
    module.bind(address("cuLaunchKernel"), address("cuCtxGetCurrent"), address("cuCtxSetCurrent"))


def enabled() -> bool:
    return os.environ.get("PYSCAN_NATIVE_LAUNCH", "1").strip().lower() not in ("0", "off", "no", "false")


def launcher(lib=None):
    """The bound C launch module, or None (then why_not() says why).  `lib`: libcuda's ctypes CDLL (default:
    pyscan.cuda's)."""
    if "module" in _state:
        return _state["module"]
    with _lock:
        if "module" in _state:
            return _state["module"]
        module, why = None, None
        if not enabled():
            why = "turned off by PYSCAN_NATIVE_LAUNCH=0"
        else:
            try:
                module = load(build())
                if lib is None:
                    from . import cuda

                    lib = cuda.raw_lib()
                bind(module, lib)
            except Exception as exc:  # noqa: BLE001 - any failure leaves the ctypes launch, which works
                module, why = None, f"the C launch could not be built or loaded: {exc}"
                warnings.warn(f"pyscan: {why}; launching through ctypes (slower per call)", RuntimeWarning,
                              stacklevel=2)
        _state["module"], _state["why"] = module, why
        return module


def loaded():
    """The bound C module if launcher() has already loaded it, else None (never builds or binds anything)."""
    return _state.get("module")


def resolved() -> bool:
    """Whether launcher() has run (loaded() then says whether it found the C module)."""
    return "module" in _state


def why_not() -> str | None:
    """None when launches go through the C module, else why they go through ctypes."""
    launcher()
    return _state.get("why")


def reset() -> None:
    """Forget the loaded module (tests)."""
    _state.clear()
