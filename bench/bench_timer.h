/* bench_timer.h: the benchmarks' one timer, for the C and the CUDA benches:
 * warm-up calls, then calls each between two CUDA events on the default
 * stream until a minimum count and a time budget are reached; the median.
 * bench_time_rounds times contenders against each other in alternating rounds. */
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

#define BENCH_MAX_OPS 4
#define BENCH_MAX_ROUNDS 16

/* One contender of bench_time_rounds: op(ctx), timed by bench_time_ms. */
typedef struct bench_contender {
    bench_op op;
    void *ctx;
} bench_contender;

/* What bench_time_rounds measured: done rounds completed; ms[j] the median of contender j's
 * round times (-1 where no round completed, and past n); over_first[j] the median of the
 * rounds' paired ratios j / contender 0 (0 where no round completed, and past n). */
typedef struct bench_rounds {
    int done;
    double ms[BENCH_MAX_OPS];
    double over_first[BENCH_MAX_OPS];
} bench_rounds;

/* Up to `rounds` rounds (at most BENCH_MAX_ROUNDS) of one bench_time_ms(op, ctx, min_runs,
 * budget_ms) for each of ops[0..n) (n at most BENCH_MAX_OPS), in order in even rounds and in
 * reverse order in odd ones, so clock and thermal drift during a long run reach all alike. A
 * call that fails (time <= 0) ends the rounds: the rest of its round is not timed and the round
 * not counted. (inline: the benches that include this header and leave it unused stay
 * warning-free) */
static inline bench_rounds bench_time_rounds(const bench_contender *ops, int n, int rounds,
                                             int min_runs, double budget_ms)
{
    bench_rounds out;
    double r[BENCH_MAX_OPS][BENCH_MAX_ROUNDS], ratio[BENCH_MAX_OPS][BENCH_MAX_ROUNDS];
    n = n < BENCH_MAX_OPS ? n : BENCH_MAX_OPS;
    rounds = n < 1 ? 0 : rounds < BENCH_MAX_ROUNDS ? rounds : BENCH_MAX_ROUNDS;
    out.done = 0;
    for (int round = 0; round < rounds; round++) {
        int timed = 1;
        for (int j = 0; j < n && timed; j++) {
            int o = round % 2 ? n - 1 - j : j;
            r[o][round] = bench_time_ms(ops[o].op, ops[o].ctx, min_runs, budget_ms);
            timed = r[o][round] > 0;
        }
        if (!timed)
            break;
        for (int j = 0; j < n; j++)
            ratio[j][round] = r[j][round] / r[0][round];
        out.done++;
    }
    for (int j = 0; j < BENCH_MAX_OPS; j++) {
        out.ms[j] = out.done && j < n ? bench_median(r[j], out.done) : -1;
        out.over_first[j] = out.done && j < n ? bench_median(ratio[j], out.done) : 0;
    }
    return out;
}

#endif
