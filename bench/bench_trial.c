/* bench_trial.c: what the runtime's trials of nearby winners buy a shape
 * nobody tuned: at_sgemm through the nearest shape's winner (trials off),
 * through the trial's choice (trials on, after its calls), and cublasSgemm,
 * in one process on a private copy of the benchmark database. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include "autotune.h"
#include "bench_timer.h"

#define BT_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

/* Shapes far from every size `make bench` tunes (skinny and odd). */
static const int bt_shapes[][3] = {
    {3000, 200, 6000}, {12288, 384, 2048}, {512, 12288, 3072}, {2500, 2500, 300},
    {6144, 96, 12288},
};

typedef struct bt_call {
    int m, n, k;
    float *A, *B, *C;
    at_handle *h;               /* NULL: cuBLAS */
    cublasHandle_t cublas;
} bt_call;

static int bt_run(bt_call *c)
{
    const float one = 1.0f, zero = 0.0f;
    if (!c->h)
        return cublasSgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, c->n, c->m, c->k, &one, c->B,
                           c->n, c->A, c->k, &zero, c->C, c->n) != CUBLAS_STATUS_SUCCESS;
    at_status s = at_sgemm(c->h, c->m, c->n, c->k, 1.0f, c->A, c->k, c->B, c->n, 0.0f, c->C,
                           c->n);
    if (s != AT_OK)
        fprintf(stderr, "at_sgemm: %s\n", at_errmsg(c->h));
    return s != AT_OK;
}

static int bt_op(void *c)
{
    return bt_run((bt_call *)c);
}

/* Median ms of 30 event-timed calls after 3 warm-up calls (bench_timer.h). */
static double bt_time(bt_call *c)
{
    double ms = bench_time_ms(bt_op, c, 30, 0);
    if (ms < 0)
        exit(1);
    return ms;
}

/* Worst error of 200 sampled entries of C against the float64 product,
 * relative to the largest |reference| among them. */
static double bt_error(const bt_call *c, const float *A, const float *B)
{
    float *C = malloc((size_t)c->m * c->n * sizeof *C);
    BT_CUDA(cudaMemcpy(C, c->C, (size_t)c->m * c->n * sizeof *C, cudaMemcpyDeviceToHost));
    double worst = 0, scale = 1e-30;
    unsigned seed = 99;
    for (int s = 0; s < 200; s++) {
        seed = seed * 1664525u + 1013904223u;
        int i = (int)(seed % (unsigned)c->m);
        seed = seed * 1664525u + 1013904223u;
        int j = (int)(seed % (unsigned)c->n);
        double ref = 0;
        for (int p = 0; p < c->k; p++)
            ref += (double)A[(size_t)i * c->k + p] * B[(size_t)p * c->n + j];
        scale = fmax(scale, fabs(ref));
        worst = fmax(worst, fabs(C[(size_t)i * c->n + j] - ref));
    }
    free(C);
    return worst / scale;
}

static float *bt_random(size_t count, unsigned seed)
{
    float *v = malloc(count * sizeof *v);
    for (size_t i = 0; v && i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    return v;
}

/* A private copy of the database (the trial writes its choices there). */
static int bt_copy_db(const char *from, const char *to)
{
    sqlite3 *s = NULL;
    char sql[8400];
    unlink(to);
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", to);
    int rc = sqlite3_open_v2(from, &s, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(s, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        fprintf(stderr, "copying %s: %s\n", from, sqlite3_errmsg(s));
    sqlite3_close(s);
    return rc == SQLITE_OK;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s TUNED.db\n", argv[0]);
        return 2;
    }
    char copy[4200];
    snprintf(copy, sizeof copy, "%s.trial-copy", argv[1]);
    BT_CUDA(cudaSetDevice(0));
    BT_CUDA(cudaFree(0));
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS)
        return 1;
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    struct cudaDeviceProp prop;
    BT_CUDA(cudaGetDeviceProperties(&prop, 0));
    int drv = 0;
    cudaDriverGetVersion(&drv);
    printf("# trials of nearby winners %s, %s, driver %d.%d; database copy %s\n", date,
           prop.name, drv / 1000, (drv % 1000) / 10, copy);
    printf("# at_sgemm on shapes never tuned: 'nearest' = trials off (the nearest shape's "
           "winner), 'trial' = default handle after its trial calls; cublasSgemm in the same "
           "process; median of 30 event-timed calls, 3 alternating rounds, median of rounds\n");
    printf("%-18s %9s %9s %9s %8s %8s %9s %9s  %s -> %s\n", "shape", "cuBLAS", "nearest",
           "trial", "near/cB", "trial/cB", "err near", "err trial", "nearest config",
           "trial config");
    for (size_t s = 0; s < sizeof bt_shapes / sizeof bt_shapes[0]; s++) {
        int m = bt_shapes[s][0], n = bt_shapes[s][1], k = bt_shapes[s][2];
        float *A = bt_random((size_t)m * k, 11 + (unsigned)s), *B = bt_random((size_t)k * n, 7);
        float *dA, *dB, *dC;
        BT_CUDA(cudaMalloc((void **)&dA, (size_t)m * k * 4));
        BT_CUDA(cudaMalloc((void **)&dB, (size_t)k * n * 4));
        BT_CUDA(cudaMalloc((void **)&dC, (size_t)m * n * 4));
        BT_CUDA(cudaMemcpy(dA, A, (size_t)m * k * 4, cudaMemcpyHostToDevice));
        BT_CUDA(cudaMemcpy(dB, B, (size_t)k * n * 4, cudaMemcpyHostToDevice));
        at_handle *near = NULL, *trial = NULL;
        if (!bt_copy_db(argv[1], copy))      /* fresh per shape: no trial sees another's */
            return 1;
        if (at_create(&near, 0, copy) != AT_OK || at_create(&trial, 0, copy) != AT_OK ||
            at_set_trials(near, 0) != AT_OK)
            return 1;
        bt_call cb = {m, n, k, dA, dB, dC, NULL, cublas};
        bt_call cn = cb, ct = cb;
        cn.h = near;
        ct.h = trial;
        /* correctness first (the trial's first calls rotate candidates) */
        if (bt_run(&cn))
            return 1;
        double err_n = bt_error(&cn, A, B);
        double err_t = 0;
        for (int i = 0; i < 3 * AT_TRIALS_DEFAULT + 1; i++) {
            if (bt_run(&ct))
                return 1;
            err_t = fmax(err_t, bt_error(&ct, A, B));
        }
        double tb[3], tn[3], tt[3];
        for (int r = 0; r < 3; r++) {
            tb[r] = bt_time(&cb);
            tn[r] = bt_time(&cn);
            tt[r] = bt_time(&ct);
        }
        bench_median(tb, 3);
        bench_median(tn, 3);
        bench_median(tt, 3);
        at_stats sn, st;
        at_get_stats(near, &sn);
        at_get_stats(trial, &st);
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d", m, n, k);
        printf("%-18s %9.4f %9.4f %9.4f %8.3f %8.3f %9.2e %9.2e  %s -> %s%s\n", shape, tb[1],
               tn[1], tt[1], tb[1] / tn[1], tb[1] / tt[1], err_n, err_t, sn.last_config,
               st.last_config, st.trials ? "" : " (no trial: nothing nearby)");
        at_destroy(near);
        at_destroy(trial);
        cudaFree(dA);
        cudaFree(dB);
        cudaFree(dC);
        free(A);
        free(B);
    }
    printf("# ratios: cuBLAS time / ours (above 1: ours is faster)\n");
    cublasDestroy(cublas);
    unlink(copy);
    return 0;
}
