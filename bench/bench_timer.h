/* bench_timer.h: the benchmarks' one timer, for the C and the CUDA benches:
 * warm-up calls, then calls each between two CUDA events on the default
 * stream until a minimum count and a time budget are reached; the median. */
#ifndef BENCH_TIMER_H
#define BENCH_TIMER_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

/* One timed call on the default stream; nonzero if it failed (and said why). */
typedef int (*bench_op)(void *ctx);

#define BENCH_MAX_RUNS 200

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v); 0 for n = 0. */
static double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* 3 warm-up calls, then at least min_runs timed calls, more until their
 * times add up to budget_ms (at most BENCH_MAX_RUNS); the median in ms. -1
 * if a call or a CUDA event call failed (the message on stderr). */
static double bench_time_ms(bench_op op, void *ctx, int min_runs, double budget_ms)
{
    cudaEvent_t e0 = NULL, e1 = NULL;
    double times[BENCH_MAX_RUNS], total = 0, result = -1;
    int n = 0;
    cudaError_t e = cudaEventCreate(&e0);
    if (e == cudaSuccess)
        e = cudaEventCreate(&e1);
    for (int i = 0; e == cudaSuccess && i < 3; i++)
        if (op(ctx))
            goto done;
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    while (e == cudaSuccess && n < BENCH_MAX_RUNS && (n < min_runs || total < budget_ms)) {
        float ms = 0;
        e = cudaEventRecord(e0, 0);
        if (e == cudaSuccess && op(ctx))
            goto done;
        if (e == cudaSuccess)
            e = cudaEventRecord(e1, 0);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(e1);
        if (e == cudaSuccess)
            e = cudaEventElapsedTime(&ms, e0, e1);
        times[n++] = ms;
        total += ms;
    }
    if (e != cudaSuccess)
        fprintf(stderr, "bench timer: %s\n", cudaGetErrorString(e));
    else
        result = bench_median(times, n);
done:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return result;
}

#endif
