"""Device memory a kernel keeps between calls, one buffer per (context, stream).

The fast scan's tile-status words and the fast reduction's block counter must start each launch in a known state,
and the kernels leave them in that state when they finish (the scan tags its flags with the call's epoch, the
reduction's last block puts the counter back to 0), so the buffers are zeroed once, not before every call.  Calls
on one stream run one after the other, so one buffer serves them all; calls on two streams may run at the same
time, so each stream has its own buffer.  Growing a buffer waits for its stream (the old one may still be read) and
zeroes the new one on the stream, ahead of the launch that follows.

A stream handle that is destroyed and re-created by its library may name a new stream while the old one still runs
work on the buffer; pyscan cannot see that.  Keep streams alive while their work runs (CuPy's and torch's streams
are).
"""

from __future__ import annotations

import threading

from . import cuda, gpu, streams


class Kept:
    """One (context, stream)'s buffer: `address`, `nbytes`, and `state` for its owner (the scan's epoch)."""

    __slots__ = ("address", "nbytes", "state", "lock")

    def __init__(self):
        self.address, self.nbytes, self.state, self.lock = 0, 0, 0, threading.Lock()


class StreamWorkspace:
    """`workspace.get(nbytes)` -> the Kept buffer of the current context and the running call's stream (or of a
    given stream and context), at least nbytes, zero when it was (re)allocated (then `state` is 0 too)."""

    def __init__(self, name: str):
        self.name = name
        self._buffers: dict = {}
        self._lock = threading.Lock()

    def get(self, nbytes: int, stream: int | None = None, context: int = 0) -> Kept:
        """The buffer of (context, stream): default, the running call's stream and context."""
        if stream is None:
            stream = streams.current()
        key = (context or streams.current_context(), stream)
        kept = self._buffers.get(key)
        if kept is None:
            with self._lock:
                kept = self._buffers.setdefault(key, Kept())
                gpu.at_release(self.release)
        if kept.nbytes < nbytes:
            with kept.lock:
                if kept.nbytes < nbytes:
                    self._grow(kept, max(nbytes, 2 * kept.nbytes, 4096), stream)
        return kept

    @staticmethod
    def _grow(kept: Kept, nbytes: int, stream: int) -> None:
        nbytes = -(-nbytes // 16) * 16
        if kept.address:
            cuda.stream_synchronize(stream)  # the old buffer may still be in use on this stream
            cuda.mem_free(kept.address)
            kept.address, kept.nbytes = 0, 0
        address = cuda.mem_alloc(nbytes)
        cuda.memset_d32(address, 0, nbytes // 4, stream)
        kept.address, kept.nbytes, kept.state = address, nbytes, 0

    def kept(self, stream: int = 0) -> Kept | None:
        """The buffer of the current context and `stream`, if a call has made one (for tests and tools)."""
        return self._buffers.get((streams.current_context(), stream))

    def zero(self, kept: Kept, stream: int | None = None) -> None:
        """Zero the whole buffer again, on `stream` (default: the running call's)."""
        cuda.memset_d32(kept.address, 0, kept.nbytes // 4, streams.current() if stream is None else stream)

    def release(self) -> None:
        """Free the buffers of the current context (gpu's release hook, at exit) and forget the others'."""
        current = cuda.current_context()
        for (context, _), kept in list(self._buffers.items()):
            if context == current and kept.address:
                cuda.mem_free(kept.address)
        self._buffers.clear()

    def __len__(self):
        return len(self._buffers)
