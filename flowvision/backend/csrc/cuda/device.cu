// Minimal CUDA runtime queries for flowvision.backend._C_cuda (C ABI so the pybind
// module itself is plain C++). cudart is linked statically.
#include <cuda_runtime.h>
#include <string.h>

namespace {
__global__ void fv_axpy_kernel(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
}  // namespace

extern "C" int fv_cuda_device_count(int* count) {
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        *count = 0;
        cudaGetLastError();  // clear the sticky error
        return static_cast<int>(e);
    }
    return 0;
}

extern "C" int fv_cuda_device_name(int index, char* buf, int n) {
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, index);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return static_cast<int>(e);
    }
    strncpy(buf, prop.name, n - 1);
    buf[n - 1] = 0;
    return 0;
}

extern "C" const char* fv_cuda_error_string(int e) { return cudaGetErrorString(static_cast<cudaError_t>(e)); }

extern "C" int fv_cuda_runtime_version(int* v) { return static_cast<int>(cudaRuntimeGetVersion(v)); }

// y = a*x + y on the device for a host vector: a smoke test that a kernel really runs.
extern "C" int fv_cuda_axpy(int n, float a, const float* x, float* y) {
    float *dx = nullptr, *dy = nullptr;
    cudaError_t e = cudaMalloc(&dx, sizeof(float) * n);
    if (e == cudaSuccess) e = cudaMalloc(&dy, sizeof(float) * n);
    if (e == cudaSuccess) e = cudaMemcpy(dx, x, sizeof(float) * n, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMemcpy(dy, y, sizeof(float) * n, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        fv_axpy_kernel<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(y, dy, sizeof(float) * n, cudaMemcpyDeviceToHost);
    if (dx) cudaFree(dx);
    if (dy) cudaFree(dy);
    if (e != cudaSuccess) cudaGetLastError();
    return static_cast<int>(e);
}

extern "C" int fv_cuda_driver_version(int* v) {
    *v = 0;
    cudaError_t e = cudaDriverGetVersion(v);
    if (e != cudaSuccess) cudaGetLastError();
    return static_cast<int>(e);
}

extern "C" int fv_cuda_device_capability(int index, int* major, int* minor) {
    cudaError_t e = cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, index);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, index);
    if (e != cudaSuccess) cudaGetLastError();
    return static_cast<int>(e);
}

extern "C" int fv_cuda_total_memory(int index, size_t* bytes) {
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, index);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return static_cast<int>(e);
    }
    *bytes = prop.totalGlobalMem;
    return 0;
}

extern "C" int fv_cuda_set_device(int index) {
    cudaError_t e = cudaSetDevice(index);
    if (e != cudaSuccess) cudaGetLastError();
    return static_cast<int>(e);
}
