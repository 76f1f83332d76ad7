"""Calls captured into CUDA graphs (docs/runtime.md, "CUDA graphs").

A kernel launch, a stream-ordered allocation and a memset on the capturing stream are captured as graph nodes and
replayed as they are.  Three things a call does eagerly are not: a wait or a host copy (NumPy input, a range read
from the data: driver.refuse_capture raises CaptureError before anything is enqueued), a first-use upload (the
histogram's cached edges: made by the first call, so a call before the capture makes them), and state kept between
launches in a per-stream buffer (pyscan.runtime.workspace: the look-back scans' epoch-tagged tile status, the fast
reduction's block counter, the one-launch histograms' counters).  A kept buffer's host-side epoch would be frozen
into the graph at the value it had when captured, the buffer may be grown (and the old one freed) by a later eager
call while a graph still names it, and two graphs captured on one stream (torch's capture stream is shared) and
replayed on two streams would share it.  So a captured call that needs such a buffer takes memory the graph keeps
(`kept()`, below: the fast scan, the fast reduction and the one-launch histograms, whose kernels put their state
back themselves) or `status()`: a buffer of its own, allocated on the capturing stream by the capturing library's
allocator (torch's graph pool under torch.cuda.graph, else pyscan's stream-ordered pool, captured as a graph
allocation node that the graph itself frees), zeroed by a memset node ahead of the kernel on every replay, with
epoch 0 (kernels/common/tile_status.cuh: the untagged protocol on zeroed words).  Eager calls never come here: the
check is one cuStreamIsCapturing from C, made only by calls that use a kept buffer (more than one tile or block).
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


# --- memory a graph keeps -----------------------------------------------------------------------------------------
# Four kernels put their kept state back themselves at the end of every launch: the fast reduction's last block
# zeroes its ticket counter (kernels/reduction/fast.cu), the axis reductions' last blocks their groups' counters
# (kernels/reduction/axis_rows.cu, axis_columns.cu), the one-launch histograms' last block its counters and ticket
# (kernels/histogram/one_launch.cuh), and the decoupled look-back scan, given the epoch EPOCH_ON_DEVICE,
# reads its epoch from its status buffer and its last block advances it (kernels/scan/decoupled_lookback.cu).  A
# captured launch of either needs no memset node when its buffer is zero when the graph is made and stays the
# graph's: a piece of KEPT_BYTES that a device keeps, zeroed once outside any capture (prepare_kept(), by the plans),
# each piece given to one captured call for good (a graph's lifetime is not known to pyscan).  A call that asks for
# more than KEPT_MOST bytes, finds too few left or none made, zeroes a buffer of its own again (status()).
KEPT_BYTES = 4 << 20
KEPT_MOST = KEPT_BYTES // 64  # 64 KB: the status of an int32 scan of 2^26 elements; past it a memset node is cheap
_kept: dict = {}  # device -> [Memory of KEPT_BYTES, the offset of the next piece not given]
_kept_lock = threading.Lock()


def prepare_kept(device: int) -> None:
    """Allocate and zero device's kept bytes once, on the legacy stream, and wait for it: only while no capture
    forbids the legacy stream (then captured calls keep the memset)."""
    if device in _kept or driver._capturing is None or driver._capturing(0) != 0:
        return
    previous = driver.enter(device)
    try:
        memory = driver.allocate(KEPT_BYTES, device, 0)
        driver.memset32(memory.address, 0, KEPT_BYTES // 4, 0)
        driver.synchronize(0)
    finally:
        driver.leave(previous)
    with _kept_lock:
        _kept.setdefault(device, [memory, 0])


def kept(nbytes: int, device: int) -> int | None:
    """The address of nbytes of zeroed device memory for one captured call, kept for good (16-byte aligned); None
    when the call asks for more than KEPT_MOST or too few bytes are left."""
    size = -(-int(nbytes) // 16) * 16
    with _kept_lock:
        held = _kept.get(device)
        if held is None or size > KEPT_MOST or held[1] + size > KEPT_BYTES:
            return None
        held[1] += size
        return held[0].address + held[1] - size


def zeroed(nbytes: int, device: int, stream: int) -> tuple:
    """(owner, address) of nbytes that are zero when a captured launch starts and that the kernel leaves zero: a
    piece the graph keeps (kept(); owner None), else the call's own buffer zeroed by a memset node (status(); the
    owner to hold until the launch is queued)."""
    address = kept(nbytes, device)
    if address is not None:
        return None, address
    own = status(nbytes, device, stream)
    return own, own.address


__all__ = ["KEPT_BYTES", "KEPT_MOST", "Scratch", "kept", "prepare_kept", "scratch", "status", "zeroed"]
