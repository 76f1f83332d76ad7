"""pyscan's small runtime on NVIDIA's cuda.core: `driver` (devices, streams, memory), `loader` (kernel files compiled
by pycuda, launched through cuda.core), `arrays` (every array kind in and out: one `Call` per public call) and
`workspace` (buffers kept per stream)."""
