/* A stand-in for libcuda's launch and context calls, for tests/test_native_launch.py on machines without a GPU:
 * cuLaunchKernel records what it was given (dimensions, shared bytes, stream and the packed argument buffer);
 * the context calls keep one handle per thread. */
#include <stddef.h>
#include <string.h>

static unsigned last_dims[7];
static void *last_function, *last_stream;
static unsigned char last_arguments[4096];
static size_t last_size;
static int launches;
static _Thread_local void *current_context;

int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) {
    last_function = function;
    last_dims[0] = gx; last_dims[1] = gy; last_dims[2] = gz;
    last_dims[3] = bx; last_dims[4] = by; last_dims[5] = bz; last_dims[6] = shared;
    last_stream = stream;
    last_size = 0;
    if (params != NULL) return 1; /* pyscan packs a buffer; CUDA_ERROR_INVALID_VALUE otherwise */
    if (extra != NULL) {
        /* {BUFFER_POINTER (1), buffer, BUFFER_SIZE (2), &size, END (0)} */
        if (extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)0) return 1;
        last_size = *(size_t *)extra[3];
        if (last_size > sizeof last_arguments) return 1;
        memcpy(last_arguments, extra[1], last_size);
    }
    launches++;
    return (int)(gx == 999); /* a grid of 999 blocks "fails" with CUDA_ERROR_INVALID_VALUE (1) */
}

int cuCtxGetCurrent(void **context) { *context = current_context; return 0; }
int cuCtxSetCurrent(void *context) { current_context = context; return 0; }

/* what the tests read back */
int fake_launches(void) { return launches; }
void *fake_function(void) { return last_function; }
void *fake_stream(void) { return last_stream; }
unsigned fake_dim(int i) { return last_dims[i]; }
size_t fake_argument_bytes(unsigned char *out) { memcpy(out, last_arguments, last_size); return last_size; }
