/* ceilings.cu: kernels that measure a device's ceilings for the report: an
 * empty kernel (the launch floor), a read-only stream (read bandwidth) and
 * FMA chains (FP32 and FP64 peaks). Compiled by NVRTC in the worker. */

/* Nothing: its time is the launch-latency floor of the timer. */
extern "C" __global__ void ceil_empty(void) {}

/* Reads n4 float4 values, UNROLL loads in flight per thread and step;
 * writes only when the sum equals never (keeps the loads alive). */
template <int UNROLL>
__device__ void ceil_read(const float4 *__restrict__ x, long long n4, float *sink)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            v[u] = x[i + u * stride];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    for (; i < n4; i += stride) {
        float4 v = x[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == -1.2345e-30f)
        sink[0] = acc;
}
extern "C" __global__ void ceil_read4(const float4 *__restrict__ x, long long n4, float *sink)
{
    ceil_read<4>(x, n4, sink);
}
extern "C" __global__ void ceil_read8(const float4 *__restrict__ x, long long n4, float *sink)
{
    ceil_read<8>(x, n4, sink);
}

/* 8 independent FMA chains per thread, iters x 16 steps each: 256 flops
 * per thread and iteration. b and c come from the host so nothing folds. */
template <typename T>
__device__ void ceil_fma(T *sink, int iters, T b, T c)
{
    T a[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        a[j] = (T)(threadIdx.x + j);
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int s = 0; s < 16; s++) {
#pragma unroll
            for (int j = 0; j < 8; j++)
                a[j] = a[j] * b + c;
        }
    }
    T sum = 0;
#pragma unroll
    for (int j = 0; j < 8; j++)
        sum += a[j];
    if (sum == (T)-1.2345e-30)
        sink[0] = sum;
}
extern "C" __global__ void ceil_fma32(float *sink, int iters, float b, float c)
{
    ceil_fma<float>(sink, iters, b, c);
}
extern "C" __global__ void ceil_fma64(double *sink, int iters, double b, double c)
{
    ceil_fma<double>(sink, iters, b, c);
}
