// Lab: the host time of one kernel launch from C, the floor under any Python call that launches (pyscan's, torch's,
// CuPy's).  Batches of 200 launches of a kernel with the fast scan's argument list (8 arguments, 48 bytes), fewer
// than the launch queue holds, timed on the host before a synchronize; the best batch's time per launch.
//
//   nvcc -O2 -o /tmp/launch_floor pyscan_tools/lab/launch_floor.cu && /tmp/launch_floor
// (the driver's functions come from the runtime's entry-point query, so nothing links against libcuda)
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>

__global__ void eight(int *out, const int *x, long long n, int exclusive, void *status, void *tiles, long long count,
                      unsigned epoch) {
    if (threadIdx.x == 0 && blockIdx.x == 0 && n < 0) out[0] = x[0] + exclusive + (int)count + (int)epoch;
}

template <class F>
static double per_launch_us(const char *label, F launch) {
    double best = 1e30;
    for (int batch = 0; batch < 30; batch++) {
        cudaDeviceSynchronize();
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < 200; i++) launch();
        auto end = std::chrono::steady_clock::now();
        double us = std::chrono::duration<double, std::micro>(end - start).count() / 200;
        if (us < best) best = us;
    }
    cudaDeviceSynchronize();
    std::printf("%-58s %6.2f us\n", label, best);
    return best;
}

template <class T>
static T driver_function(const char *name) {
    void *address = nullptr;
    cudaDriverEntryPointQueryResult found;
    cudaGetDriverEntryPointByVersion(name, &address, 12000, cudaEnableDefault, &found);
    return reinterpret_cast<T>(address);
}

int main() {
    auto launch_kernel = driver_function<decltype(&cuLaunchKernel)>("cuLaunchKernel");
    auto get_current = driver_function<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
    int *out, *x;
    cudaMalloc(&out, 1 << 20);
    cudaMalloc(&x, 1 << 20);
    cudaStream_t nonblocking;
    cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking);
    long long n = 1024, count = 1;
    int exclusive = 0;
    void *status = nullptr, *tiles = nullptr;
    unsigned epoch = 0;
    CUfunction function;
    cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t *>(&function), reinterpret_cast<const void *>(eight));
    void *params[] = {&out, &x, &n, &exclusive, &status, &tiles, &count, &epoch};
    alignas(16) char buffer[64];
    size_t size = 0;
    auto put = [&](const void *value, size_t bytes) {
        size = (size + bytes - 1) / bytes * bytes;
        std::memcpy(buffer + size, value, bytes);
        size += bytes;
    };
    put(&out, 8); put(&x, 8); put(&n, 8); put(&exclusive, 4); put(&status, 8); put(&tiles, 8); put(&count, 8);
    put(&epoch, 4);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    for (CUstream stream : {static_cast<CUstream>(nullptr), reinterpret_cast<CUstream>(nonblocking)}) {
        const char *which = stream ? "a non-blocking stream" : "the legacy stream";
        std::printf("-- %s\n", which);
        per_launch_us("eight<<<1, 256, 0, s>>> (runtime)", [&] {
            eight<<<1, 256, 0, reinterpret_cast<cudaStream_t>(stream)>>>(out, x, n, exclusive, status, tiles, count,
                                                                           epoch);
        });
        per_launch_us("cuLaunchKernel, kernelParams", [&] {
            launch_kernel(function, 1, 1, 1, 256, 1, 1, 0, stream, params, nullptr);
        });
        per_launch_us("cuLaunchKernel, extra (one packed buffer: pyscan's)", [&] {
            launch_kernel(function, 1, 1, 1, 256, 1, 1, 0, stream, nullptr, extra);
        });
        per_launch_us("cuLaunchKernel, extra, 36 KB dynamic shared memory", [&] {
            launch_kernel(function, 1, 1, 1, 256, 1, 1, 36 * 1024, stream, nullptr, extra);
        });
        per_launch_us("cudaMemcpyAsync 4 KB device to device", [&] {
            cudaMemcpyAsync(out, x, 4096, cudaMemcpyDeviceToDevice, reinterpret_cast<cudaStream_t>(stream));
        });
    }
    CUcontext context;
    per_launch_us("cuCtxGetCurrent", [&] { get_current(&context); });
    return 0;
}
