/* A stand-in for libcuda's launch and context calls, for tests/unit/test_launcher.py on machines without a GPU:
 * built as libcuda.so.1 and found through LD_LIBRARY_PATH by pyscan/runtime/_launch.c.  cuLaunchKernel records what
 * it was given (function, dimensions, shared bytes, stream, the context current at the launch and the first
 * fake_expect_args(n) kernel parameters, 8 bytes each); the context calls keep one handle per thread. */
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
