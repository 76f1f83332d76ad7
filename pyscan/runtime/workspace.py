"""Device memory a kernel keeps between calls, one buffer per (device, stream): the fast scan's tile-status words and
the fast reduction's block counter, zeroed when (re)allocated and left as they started by every launch
(docs/runtime.md, "Kept buffers").
"""

from __future__ import annotations

import threading

from . import driver


class Kept:
    """One (device, stream)'s buffer: `address`, `nbytes`, and `state` for its owner (the scan's epoch)."""

    __slots__ = ("address", "nbytes", "state", "lock", "buffer")

    def __init__(self):
        self.address, self.nbytes, self.state, self.lock, self.buffer = 0, 0, 0, threading.Lock(), None


class StreamWorkspace:
    """`workspace.get(nbytes, device, stream)` -> the Kept buffer of that device and stream, at least nbytes, zero
    when it was (re)allocated (then `state` is 0 too)."""

    def __init__(self, name: str):
        self.name = name
        self._buffers: dict = {}
        self._lock = threading.Lock()

    def get(self, nbytes: int, device: int, stream: int) -> Kept:
        key = (device, stream)
        kept = self._buffers.get(key)
        if kept is None:
            with self._lock:
                kept = self._buffers.setdefault(key, Kept())
        if kept.nbytes < nbytes:
            with kept.lock:
                if kept.nbytes < nbytes:
                    nbytes = -(-max(nbytes, 2 * kept.nbytes, 4096) // 16) * 16
                    previous = driver.enter(device)  # a call made without entering its device's context
                    try:
                        kept.buffer = driver.allocate(nbytes, device, stream)  # the old one freed on the stream
                        kept.address, kept.nbytes, kept.state = kept.buffer.address, nbytes, 0
                        driver.memset32(kept.address, 0, nbytes // 4, stream)
                    finally:
                        driver.leave(previous)
        return kept

    def kept(self, device: int, stream: int = 0) -> Kept | None:
        """The buffer of (device, stream), if a call has made one (for tests and tools)."""
        return self._buffers.get((device, stream))

    def zero(self, kept: Kept, stream: int) -> None:
        driver.memset32(kept.address, 0, kept.nbytes // 4, stream)

    def __len__(self):
        return len(self._buffers)
