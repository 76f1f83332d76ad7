"""Streams: what `stream=` may be, and the stream the launches of the running call go to.

A stream argument may be a pycuda `Stream`, a CuPy `Stream`, a torch `Stream`, a Numba stream, any object with the
CUDA Python `__cuda_stream__` protocol, or a raw `cudaStream_t` handle as an int (0 is the legacy default stream).
Each becomes its driver handle, an int.

Every public call runs inside a `launching_on(stream)` block: the kernels' `prepared_call` and pyscan's copies and
memsets read the stream from there (a thread-local, so calls in several threads never see each other's stream).
Outside such a block (a kernel launched directly through `pyscan.get_kernel`), launches go to the legacy default
stream, as pycuda's `prepared_call` does.
"""

from __future__ import annotations

import threading


class _Running(threading.local):
    """Per thread: the running call's stream, context and pyscan.arrays.Call (the class attributes are the values
    outside any call).  One object, so a call enters and leaves with a few attribute writes."""

    stream = 0
    context = 0
    call = None


_local = _Running()


def handle(stream) -> int:
    """The driver handle of a stream object or int (see the module docstring); TypeError for anything else."""
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError("stream: expected a stream object or a cudaStream_t handle (int), got a bool")
    if isinstance(stream, int):
        if stream < 0:
            raise ValueError(f"stream: a cudaStream_t handle is a non-negative int, got {stream}")
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        value = protocol() if callable(protocol) else protocol
        return int(value[1])
    module = type(stream).__module__ or ""
    for attribute in ("cuda_stream", "ptr", "handle"):  # torch, CuPy, pycuda / Numba (a ctypes c_void_p)
        value = getattr(stream, attribute, None)
        if value is None:
            continue
        value = getattr(value, "value", value)  # Numba's handle is a c_void_p
        if isinstance(value, int):
            return value
        if value is None:  # a c_void_p holding NULL: the default stream
            return 0
    raise TypeError(f"stream: expected a pycuda, CuPy, torch or Numba stream or a cudaStream_t handle (int), "
                    f"got {module}.{type(stream).__name__}")


def current() -> int:
    """The stream of the call running in this thread (0, the legacy default stream, outside any call)."""
    return _local.stream


def current_context() -> int:
    """The context of the call running in this thread (its device's), or the thread's current context outside one."""
    context = _local.context
    if context:
        return context
    from . import cuda

    try:
        return cuda.current_context()
    except (OSError, cuda.CudaError):  # no driver, or not initialised yet: no context
        return 0


def enter(stream: int, context: int = 0) -> tuple:
    """Make (stream, context) the running call's in this thread; returns what exit() restores."""
    local = _local
    saved = (local.stream, local.context)
    local.stream, local.context = stream, context
    return saved


def exit(saved: tuple) -> None:
    _local.stream, _local.context = saved


class launching_on:
    """`with launching_on(handle):` launches in this thread go to that stream until the block ends (nests)."""

    __slots__ = ("stream", "context", "saved")

    def __init__(self, stream: int, context: int = 0):
        self.stream, self.context = stream, context

    def __enter__(self):
        self.saved = enter(self.stream, self.context)
        return self

    def __exit__(self, *exc):
        exit(self.saved)
        return False
