"""The exception types pyscan raises beyond the built-in ones."""


class GPUUnavailableError(RuntimeError):
    """A GPU entry point was called but a piece of the GPU stack is missing.

    The message names the missing piece (pycuda not installed, no CUDA driver, no device) and how to get it.
    Everything that needs no GPU (the NumPy step-models and references, input validation) keeps working.
    """


class KernelCompileError(RuntimeError):
    """nvcc rejected a kernel file.  The message holds nvcc's log, with `file:line` in the `.cu` under kernels/."""


class OutOfMemoryError(MemoryError):
    """The device has not the memory a call asked for; the message says how much was asked and how much is free."""


class ExpressionCompileError(KernelCompileError):
    """nvcc rejected a build specialised by the caller's own C text (a custom operator or a map, pyscan.expressions):
    the message quotes the expression as written, the types of the build, and nvcc's log."""


class CaptureError(RuntimeError):
    """A call that cannot be captured into a CUDA graph was made while its stream (or, for NumPy input, the caller's
    torch stream) was capturing: the message says what the call would have done (a host copy, a wait, a first-use
    upload) and what to do instead.  Raised before anything is enqueued, so the capture is still valid."""
