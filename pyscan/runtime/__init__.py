"""pyscan's small runtime on NVIDIA's cuda.core: `driver` (devices, streams, memory), `loader` (kernel files compiled
by pycuda, loaded by cuda.core, launched by `_launch` or cuda.core), `arrays` (every array kind in and out: its
`ready()` reader for the commonest call, a `Call` for the rest) and `workspace` (buffers kept per stream)."""
