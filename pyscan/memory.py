"""pyscan's own device memory, for the calls whose caller has no allocator of its own (NumPy and GPUArray input).

A stream-ordered pool per device (cuMemPoolCreate; cuMemAllocFromPoolAsync / cuMemFreeAsync, CUDA 11.2+): a buffer is
allocated on the call's stream and freed on that stream when its last reference goes, so memory freed by one call
is reused by the next one on the stream without a cudaFree or a synchronisation, and calls on other streams never
get memory a running kernel still uses (the driver orders the reuse).  The pool keeps what it has (release threshold
at the maximum), as CuPy's and torch's caching allocators do; `trim()` gives the unused part back.

Nothing here needs pycuda's context stack, so any thread may allocate and free (the buffer's context is made
current around the free when the freeing thread has another or none).
"""

from __future__ import annotations

import ctypes
import threading

from . import cuda

_pools: dict = {}  # device ordinal -> CUmemoryPool handle
_lock = threading.Lock()


class _PoolProps(ctypes.Structure):  # CUmemPoolProps (cuda.h)
    _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int), ("location_type", ctypes.c_int),
                ("location_id", ctypes.c_int), ("win32SecurityAttributes", ctypes.c_void_p),
                ("maxSize", ctypes.c_size_t), ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]


_ALLOCATION_TYPE_PINNED = 1
_LOCATION_TYPE_DEVICE = 1
_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4


def pool(ordinal: int) -> int:
    handle = _pools.get(ordinal)
    if handle is None:
        with _lock:
            handle = _pools.get(ordinal)
            if handle is None:
                lib = cuda.lib()
                props = _PoolProps(allocType=_ALLOCATION_TYPE_PINNED, location_type=_LOCATION_TYPE_DEVICE,
                                   location_id=ordinal)
                created = ctypes.c_void_p()
                cuda.check(lib.cuMemPoolCreate(ctypes.byref(created), ctypes.byref(props)), "cuMemPoolCreate")
                keep = ctypes.c_uint64(2**64 - 1)
                cuda.check(lib.cuMemPoolSetAttribute(created, _MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.byref(keep)),
                           "cuMemPoolSetAttribute(RELEASE_THRESHOLD)")
                handle = _pools[ordinal] = created.value
    return handle


_exact = False


def exact_allocations(on: bool = True) -> None:
    """From now on, allocate each buffer exactly (cuMemAlloc / cuMemFree, synchronous) instead of from the pool: for
    compute-sanitizer's memcheck, which then sees every buffer's own bounds."""
    global _exact
    _exact = bool(on)


class DeviceBuffer:
    """`nbytes` of device memory from the pool of device `ordinal`, allocated on `stream` in `context` and freed on
    it when the buffer goes.  int(buffer) is its address."""

    __slots__ = ("address", "nbytes", "stream", "context", "__weakref__")

    def __init__(self, nbytes: int, ordinal: int, stream: int, context: int):
        if _exact:
            cuda.stream_synchronize(stream)
            self.address, self.nbytes, self.stream, self.context = cuda.mem_alloc(nbytes), nbytes, -1, context
            return
        address = ctypes.c_uint64()
        cuda.check(cuda.lib().cuMemAllocFromPoolAsync(ctypes.byref(address), max(1, nbytes), pool(ordinal),
                                                      stream or None), f"cuMemAllocFromPoolAsync({nbytes} bytes)")
        self.address, self.nbytes, self.stream, self.context = address.value, nbytes, stream, context

    def __int__(self):
        return self.address

    __index__ = __int__

    def __del__(self):
        address, self.address = self.address, 0
        if not address or cuda is None or cuda.lib is None:  # interpreter shutdown: the process frees it
            return
        try:
            lib = cuda.lib()
            previous = cuda.current_context()
            if previous != self.context:
                cuda.set_current_context(self.context)
            if self.stream == -1 or lib.cuMemFreeAsync(address, self.stream or None):  # exact, or its stream is gone
                lib.cuMemFree_v2(address)
            if previous != self.context:
                cuda.set_current_context(previous)
        except Exception:  # noqa: BLE001 - nothing may escape a destructor (at exit the driver may be gone)
            pass

    def __repr__(self):
        return f"DeviceBuffer(0x{self.address:x}, {self.nbytes} bytes, stream {self.stream})"


def trim() -> None:
    """Give the memory the pools keep, but no buffer uses, back to the driver (waits for the device first)."""
    lib = cuda.lib()
    for handle in list(_pools.values()):
        lib.cuCtxSynchronize()
        cuda.check(lib.cuMemPoolTrimTo(handle, 0), "cuMemPoolTrimTo")
