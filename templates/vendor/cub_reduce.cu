/* cub_reduce.cu: the CUB side of the vendor baselines: a small shared object
 * (libautotune_vendor.so, built with nvcc where nvcc and CUB are present) that
 * the tuner's worker dlopens to time cub::DeviceReduce on its own inputs.
 *
 * C ABI only; it includes nothing of autotune. The CUDA runtime is linked
 * statically and shares the worker's primary context. Temporary storage is
 * grown once (the untimed warm-up run) and kept until atv_release. */
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cuda_runtime.h>
#include <stdio.h>

namespace {

void *atv_temp = nullptr;
size_t atv_temp_bytes = 0;

/* x[i] * y[i] for the dot product, read through a counting iterator. */
template <typename T>
struct atv_product {
    const T *x, *y;
    __host__ __device__ T operator()(long long i) const { return x[i] * y[i]; }
};

int atv_fail(cudaError_t e, const char *what, char *err, int errlen)
{
    if (err && errlen > 0)
        snprintf(err, (size_t)errlen, "%s: %s", what, cudaGetErrorString(e));
    return (int)e;
}

/* Grows the temporary storage to bytes (only ever on the first calls). */
cudaError_t atv_reserve(size_t bytes)
{
    if (bytes <= atv_temp_bytes)
        return cudaSuccess;
    if (atv_temp)
        cudaFree(atv_temp);
    atv_temp = nullptr;
    atv_temp_bytes = 0;
    cudaError_t e = cudaMalloc(&atv_temp, bytes);
    if (e == cudaSuccess)
        atv_temp_bytes = bytes;
    return e;
}

template <typename T>
int atv_run(long long n, const void *xv, const void *yv, void *result, cudaStream_t stream,
            char *err, int errlen)
{
    const T *x = static_cast<const T *>(xv), *y = static_cast<const T *>(yv);
    T *out = static_cast<T *>(result);
    size_t bytes = 0;
    cudaError_t e;
    if (!y) {
        e = cub::DeviceReduce::Sum(nullptr, bytes, x, out, n, stream);
        if (e == cudaSuccess)
            e = atv_reserve(bytes);
        if (e == cudaSuccess)
            e = cub::DeviceReduce::Sum(atv_temp, bytes, x, out, n, stream);
        return e == cudaSuccess ? 0 : atv_fail(e, "cub::DeviceReduce::Sum", err, errlen);
    }
    auto in = thrust::make_transform_iterator(thrust::counting_iterator<long long>(0),
                                              atv_product<T>{x, y});
    e = cub::DeviceReduce::Sum(nullptr, bytes, in, out, n, stream);
    if (e == cudaSuccess)
        e = atv_reserve(bytes);
    if (e == cudaSuccess)
        e = cub::DeviceReduce::Sum(atv_temp, bytes, in, out, n, stream);
    return e == cudaSuccess ? 0 : atv_fail(e, "cub::DeviceReduce::Sum(x*y)", err, errlen);
}

} /* namespace */

extern "C" {

/* "CUB 3.0.1, CUDA runtime 13.0" into out. Returns 0. */
int atv_version(char *out, int len)
{
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    snprintf(out, (size_t)len, "CUB %d.%d.%d, CUDA runtime %d.%d", CUB_VERSION / 100000,
             CUB_VERSION / 100 % 1000, CUB_VERSION % 100, rt / 1000, rt % 1000 / 10);
    return 0;
}

/* Sum (y NULL) or dot of n elements of type dtype (0 float, 1 double) into
 * *result (device memory) on stream, with cub::DeviceReduce::Sum (the dot
 * over x[i] * y[i]). 0, or the CUDA error with the reason in err. */
int atv_reduce(int dtype, long long n, const void *x, const void *y, void *result,
               void *stream, char *err, int errlen)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (dtype == 0)
        return atv_run<float>(n, x, y, result, s, err, errlen);
    if (dtype == 1)
        return atv_run<double>(n, x, y, result, s, err, errlen);
    if (err && errlen > 0)
        snprintf(err, (size_t)errlen, "atv_reduce: element type %d not built", dtype);
    return -1;
}

/* Frees the temporary storage. */
void atv_release(void)
{
    if (atv_temp)
        cudaFree(atv_temp);
    atv_temp = nullptr;
    atv_temp_bytes = 0;
}

}
