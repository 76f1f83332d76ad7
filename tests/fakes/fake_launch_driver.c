/* A stand-in for libcuda's launch and context calls, for tests/unit/test_launcher.py on machines without a GPU:
 * built as libcuda.so.1 and found through LD_LIBRARY_PATH by pyscan/runtime/_launch.c.  cuLaunchKernel records what
 * it was given (function, dimensions, shared bytes, stream, the context current at the launch and the first
 * fake_expect_args(n) kernel parameters, 8 bytes each); the context calls keep one handle per thread; the pool calls
 * record the pool, stream and the last address freed. */
#include <string.h>

static unsigned last_dims[7];
static void *last_function, *last_stream, *last_context;
static unsigned char last_arguments[32 * 8];
static int expected_args, launches;
static _Thread_local void *current_context;

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
    if (extra != NULL || (expected_args && params == NULL)) return 1; /* CUDA_ERROR_INVALID_VALUE */
    last_function = function;
    last_dims[0] = gx; last_dims[1] = gy; last_dims[2] = gz;
    last_dims[3] = bx; last_dims[4] = by; last_dims[5] = bz; last_dims[6] = shared;
    last_stream = stream;
    last_context = current_context;
    for (int i = 0; i < expected_args; i++) memcpy(last_arguments + 8 * i, params[i], 8);
    launches++;
    return gx == 999 ? 1 : 0; /* a grid of 999 blocks "fails" with CUDA_ERROR_INVALID_VALUE (1) */
}

/* a pool hands out 0x1000, 0x2000, ...; a request of 999 bytes "fails" with CUDA_ERROR_OUT_OF_MEMORY (2) */
static unsigned long long next_address = 0x1000, last_freed;
static void *last_pool, *freed_on;
int cuMemAllocFromPoolAsync(unsigned long long *address, unsigned long long nbytes, void *pool, void *stream) {
    if (nbytes == 999) return 2;
    *address = next_address;
    next_address += 0x1000;
    last_pool = pool;
    last_stream = stream;
    return 0;
}
int cuMemFreeAsync(unsigned long long address, void *stream) { last_freed = address; freed_on = stream; return 0; }

/* stream capture: fake_set_capturing(stream, status) makes cuStreamIsCapturing report status for that stream (a
 * negative status: that error code, as the legacy stream's CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) */
static void *capturing_stream;
static int capturing_status;
int cuStreamIsCapturing(void *stream, int *status) {
    *status = 0;
    if (stream != capturing_stream) return 0;
    if (capturing_status < 0) return -capturing_status;
    *status = capturing_status;
    return 0;
}
void fake_set_capturing(void *stream, int status) { capturing_stream = stream; capturing_status = status; }

int cuCtxGetCurrent(void **context) { *context = current_context; return 0; }
int cuCtxSetCurrent(void *context) { current_context = context; return 0; }

/* what the tests set and read back */
void fake_expect_args(int n) { expected_args = n; memset(last_arguments, 0, sizeof last_arguments); }
int fake_launches(void) { return launches; }
void *fake_function(void) { return last_function; }
void *fake_stream(void) { return last_stream; }
void *fake_context(void) { return last_context; }
unsigned fake_dim(int i) { return last_dims[i]; }
void fake_arguments(unsigned char *out) { memcpy(out, last_arguments, sizeof last_arguments); }
unsigned long long fake_freed(void) { return last_freed; }
void *fake_freed_on(void) { return freed_on; }
void *fake_pool(void) { return last_pool; }
