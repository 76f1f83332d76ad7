"""Calls captured into CUDA graphs (docs/runtime.md, "CUDA graphs").

A kernel launch, a stream-ordered allocation and a memset on the capturing stream are captured as graph nodes and
replayed as they are.  Three things a call does eagerly are not: a wait or a host copy (NumPy input, a range read
from the data: driver.refuse_capture raises CaptureError before anything is enqueued), a first-use upload (the
histogram's cached edges: made by the first call, so a call before the capture makes them), and state kept between
launches in a per-stream buffer (pyscan.runtime.workspace: the look-back scans' epoch-tagged tile status, the fast
reduction's block counter).  A kept buffer's host-side epoch would be frozen into the graph at the value it had
when captured, the buffer may be grown (and the old one freed) by a later eager call while a graph still names it,
and two graphs captured on one stream (torch's capture stream is shared) and replayed on two streams would share
it.  So a captured call that needs such a buffer takes `status()` instead: a buffer of its own, allocated on the
capturing stream by the capturing library's allocator (torch's graph pool under torch.cuda.graph, else pyscan's
stream-ordered pool, captured as a graph allocation node that the graph itself frees), zeroed by a memset node ahead
of the kernel on every replay, with epoch 0 (kernels/common/tile_status.cuh: the untagged protocol on zeroed
words).  Eager calls never come here: the check is one cuStreamIsCapturing from C, made only by calls that use a
kept buffer (more than one tile or block).
"""

from __future__ import annotations

import sys
import threading

from . import driver


class Scratch:
    """`address` of nbytes owned by `owner` (a torch tensor or pyscan's pool Memory), freed on the stream when the
    object goes: keep it until the launch that uses it is enqueued."""

    __slots__ = ("address", "owner")

    def __init__(self, address: int, owner):
        self.address, self.owner = address, owner


def _torch_capturing_on(stream: int, device: int):
    """torch, when torch's current stream of `device` is `stream` and is capturing (torch.cuda.graph), else None."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return None
    try:
        current = torch.cuda.current_stream(device)
        if current.cuda_stream == stream and torch.cuda.is_current_stream_capturing():
            return torch
    except Exception:  # noqa: BLE001 - a torch without CUDA, another device: pyscan's pool serves
        return None
    return None


def scratch(nbytes: int, device: int, stream: int) -> Scratch:
    """nbytes of device memory for one captured call, on the capturing stream: from torch's graph pool when torch is
    capturing there (torch's own recommendation for memory used in its graphs), else pyscan's stream-ordered pool
    (a graph allocation node, freed by the graph's free node when the Scratch goes during the capture)."""
    nbytes = max(16, -(-int(nbytes) // 16) * 16)
    torch = _torch_capturing_on(stream, device)
    if torch is not None:
        tensor = torch.empty(nbytes, dtype=torch.uint8, device=torch.device("cuda", device))
        return Scratch(tensor.data_ptr(), tensor)
    previous = driver.enter(device)  # a ready() call has not entered its device's context
    try:
        memory = driver.allocate(nbytes, device, stream)
    finally:
        driver.leave(previous)
    return Scratch(memory.address, memory)


def status(nbytes: int, device: int, stream: int, zero_bytes: int | None = None) -> Scratch:
    """A captured call's own kept-state buffer: scratch() zeroed on the stream (a memset node, run on every replay)
    over its first zero_bytes (default: all of it).  The kernel then runs with epoch 0."""
    buffer = scratch(nbytes, device, stream)
    words = -(-(nbytes if zero_bytes is None else zero_bytes) // 4)
    previous = driver.enter(device)
    try:
        driver.memset32(buffer.address, 0, words, stream)
    finally:
        driver.leave(previous)
    return buffer


# --- counters that put themselves back -----------------------------------------------------------------------------
# The fast reduction's last block puts its ticket counter back to zero (kernels/reduction/fast.cu), so a captured
# reduction needs no memset node when its counter is a word that is zero when the graph is made and stays the
# graph's: one of COUNTER_WORDS words a device keeps, zeroed once outside any capture (prepare_counters(), by the
# reduction's plan), each given to one captured call for good (a graph's lifetime is not known to pyscan).  When
# they are all given, or were never made, captured calls zero a counter of their own again (status()).
COUNTER_WORDS = 4096
_counters: dict = {}  # device -> [Memory of COUNTER_WORDS 8-byte words, the next word not given]
_counters_lock = threading.Lock()


def prepare_counters(device: int) -> None:
    """Allocate and zero device's counter words once, on the legacy stream, and wait for it: only while no capture
    forbids the legacy stream (then captured calls keep the memset)."""
    if device in _counters or driver._capturing is None or driver._capturing(0) != 0:
        return
    previous = driver.enter(device)
    try:
        memory = driver.allocate(8 * COUNTER_WORDS, device, 0)
        driver.memset32(memory.address, 0, 2 * COUNTER_WORDS, 0)
        driver.synchronize(0)
    finally:
        driver.leave(previous)
    with _counters_lock:
        _counters.setdefault(device, [memory, 0])


def counter(device: int) -> int | None:
    """The address of a zeroed counter word for one captured call, kept for good; None when none is left."""
    with _counters_lock:
        held = _counters.get(device)
        if held is None or held[1] >= COUNTER_WORDS:
            return None
        held[1] += 1
        return held[0].address + 8 * (held[1] - 1)


__all__ = ["COUNTER_WORDS", "Scratch", "counter", "prepare_counters", "scratch", "status"]
