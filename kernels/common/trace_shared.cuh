// trace_shared.cuh -- the TRACE builds of the shared-memory reduction trees (PMPP §10.6 shared_memory.cu, §10.8
// coarsened.cu): each step's shared array copied out for pyscan.reductions.steps' pictures, which are checked
// against the NumPy step-models.
#pragma once

#ifndef TRACE
#define TRACE 0
#endif

// TRACE=1 (default 0): the kernel takes a trailing `T* trace` of (1 + log2(blockDim.x)) * gridDim.x * blockDim.x
// elements: the shared arrays of all blocks side by side (block b's thread t at b * blockDim.x + t) after every
// step; the host passes its prepare() argument types ("PPqP").  TRACE_SHARED(step) has each thread copy only its
// own element of the shared array `input_s` (index `t`), which only it writes, so no extra barrier is needed.
// With TRACE=0 it expands to nothing: the shipped build is unchanged.
#if TRACE
#define TRACE_SHARED(step) trace[(long long)(step) * gridDim.x * blockDim.x + (long long)blockIdx.x * blockDim.x + t] = input_s[t]
#else
#define TRACE_SHARED(step)
#endif
