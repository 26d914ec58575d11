/* bench_error.cuh: the CUDA benches' error measure against a float64
 * reference R: over a grid-stride loop, sums[0] += (C - R)^2 and sums[1] +=
 * R^2 where C is finite, sums[2] counts the non-finite elements of C; the
 * caller passes how its C is read (element i as a double). */
#ifndef BENCH_ERROR_CUH
#define BENCH_ERROR_CUH

#include <math.h>

template <typename ElementAt>
__device__ void bench_error_sums(ElementAt c_at, const double *R, size_t n, double *sums)
{
    double num = 0, den = 0, bad = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double c = c_at(i);
        if (!isfinite(c))
            bad += 1;
        else
            num += (c - R[i]) * (c - R[i]);
        den += R[i] * R[i];
    }
    for (int o = 16; o > 0; o >>= 1) {
        num += __shfl_down_sync(0xffffffffu, num, o);
        den += __shfl_down_sync(0xffffffffu, den, o);
        bad += __shfl_down_sync(0xffffffffu, bad, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sums[0], num);
        atomicAdd(&sums[1], den);
        atomicAdd(&sums[2], bad);
    }
}

#endif
