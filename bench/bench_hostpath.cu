/* bench_hostpath.cu: what a short GEMM call costs through libautotune against cuBLAS in one
 * process (issue 32: a call under 30 us in cuBLAS may cost at most 2 us more through ours):
 * per call shape, ours with the vendor candidate off, ours with it on, and cuBLAS itself, each
 * timed as N back-to-back calls between two CUDA events (us per call: where the GPU is idle
 * between launches this is the host path), the host time to issue those N calls (the CPU side
 * alone, no sync inside), and one call alone between events (the single call bench_calls
 * times); the three contenders interleave in every round (order rotated per round), write the
 * same C, and the medians over the rounds are printed, with ours - cuBLAS per call and the
 * median of those differences over the calls whose cuBLAS time is under 30 us.
 *
 *   bench_hostpath [--db PATH] [--calls N] [--rounds R] [--warmup W] [--shapes FILE]
 *
 * --db: the user database of both handles (default: a fresh one under $TMPDIR: built-in
 * defaults and any shipped database). --calls: back-to-back calls per timing (200).
 * --rounds: rounds per call shape (15). --warmup: calls of each contender before timing (64:
 * enough for any trial to settle, AT_TRIALS_MAX candidates x 3 rounds). --shapes FILE: one
 * call a line, "M N K TYPE LAYOUT" (TYPE bf16 fp16 tf32 fp32 fp64; LAYOUT NN row-major,
 * TN column-major with A transposed: a linear layer's call); the default list is 20 calls of
 * 64^3 .. 512 x 512 x 256. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "autotune.h"

#define HP_CUDA(call) do { cudaError_t hp_e = (call); if (hp_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(hp_e)); \
    exit(1); } } while (0)

enum { HP_BF16, HP_FP16, HP_TF32, HP_FP32, HP_FP64, HP_NTYPES };
static const char *const hp_type_names[HP_NTYPES] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
static const size_t hp_es[HP_NTYPES] = {2, 2, 4, 4, 8};

typedef struct hp_call {
    int m, n, k, type;
    int col_tn;                 /* 1: column-major, op(A) = T, op(B) = N; 0: row-major NN */
} hp_call;

/* The default calls: short ones (cuBLAS well under 30 us on an H200), every type, both layouts. */
static const hp_call hp_default[] = {
    {64, 64, 64, HP_BF16, 0},    {128, 128, 128, HP_BF16, 0}, {256, 256, 256, HP_BF16, 0},
    {512, 512, 256, HP_BF16, 0}, {256, 1024, 256, HP_BF16, 1}, {512, 512, 512, HP_BF16, 1},
    {64, 64, 64, HP_FP16, 0},    {256, 256, 256, HP_FP16, 0}, {512, 512, 256, HP_FP16, 1},
    {128, 128, 128, HP_TF32, 0}, {256, 256, 256, HP_TF32, 0}, {512, 512, 256, HP_TF32, 1},
    {64, 64, 64, HP_FP32, 0},    {128, 128, 128, HP_FP32, 0}, {256, 256, 256, HP_FP32, 0},
    {512, 256, 128, HP_FP32, 1}, {64, 64, 64, HP_FP64, 0},    {128, 128, 128, HP_FP64, 0},
    {256, 256, 128, HP_FP64, 0}, {256, 256, 256, HP_FP64, 1},
};

typedef struct hp_ctx {
    hp_call c;
    void *A, *B, *C;
    at_handle *h;               /* ours: the handle of the contender */
    cublasHandle_t cublas;
} hp_ctx;

static at_dtype hp_at_type(int t)
{
    return t == HP_BF16 ? AT_R_16BF : t == HP_FP16 ? AT_R_16F : t == HP_FP64 ? AT_R_64F : AT_R_32F;
}

/* Leading dimensions of the call as the caller stores it (tight). */
static void hp_lds(const hp_call *c, int *lda, int *ldb, int *ldc)
{
    if (c->col_tn) {            /* column-major: A^T is m x k, so A is k x m (ld k); B k x n */
        *lda = c->k;
        *ldb = c->k;
        *ldc = c->m;
    } else {
        *lda = c->k;
        *ldb = c->n;
        *ldc = c->n;
    }
}

static int hp_ours(hp_ctx *x)
{
    const hp_call *c = &x->c;
    int lda, ldb, ldc;
    hp_lds(c, &lda, &ldb, &ldc);
    at_status s = at_gemm(x->h, c->col_tn ? AT_COL_MAJOR : AT_ROW_MAJOR,
                          c->col_tn ? AT_OP_T : AT_OP_N, AT_OP_N, c->m, c->n, c->k,
                          hp_at_type(c->type), 1.0, x->A, lda, x->B, ldb, 0.0, x->C, ldc);
    if (s != AT_OK)
        fprintf(stderr, "autotune: %s: %s\n", at_status_string(s), at_errmsg(x->h));
    return s != AT_OK;
}

/* cuBLAS with the same call: column-major as given, or a row-major C = A B as the
 * column-major C^T = B^T A^T. */
static int hp_cublas(hp_ctx *x)
{
    const hp_call *c = &x->c;
    int lda, ldb, ldc;
    hp_lds(c, &lda, &ldb, &ldc);
    cudaDataType_t t = c->type == HP_BF16 ? CUDA_R_16BF : c->type == HP_FP16 ? CUDA_R_16F
                       : c->type == HP_FP64 ? CUDA_R_64F : CUDA_R_32F;
    cublasComputeType_t ct = c->type == HP_FP64   ? CUBLAS_COMPUTE_64F
                             : c->type == HP_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                  : CUBLAS_COMPUTE_32F;
    float af = 1.0f, bf = 0.0f;
    double ad = 1.0, bd = 0.0;
    const void *al = c->type == HP_FP64 ? (const void *)&ad : (const void *)&af;
    const void *be = c->type == HP_FP64 ? (const void *)&bd : (const void *)&bf;
    cublasStatus_t s =
        c->col_tn ? cublasGemmEx(x->cublas, CUBLAS_OP_T, CUBLAS_OP_N, c->m, c->n, c->k, al, x->A,
                                 t, lda, x->B, t, ldb, be, x->C, t, ldc, ct, CUBLAS_GEMM_DEFAULT)
                  : cublasGemmEx(x->cublas, CUBLAS_OP_N, CUBLAS_OP_N, c->n, c->m, c->k, al, x->B,
                                 t, ldb, x->A, t, lda, be, x->C, t, ldc, ct, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cuBLAS: status %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

static double hp_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int hp_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double hp_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], hp_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

enum { HP_OFF, HP_ON, HP_CUBLAS, HP_NCONT };
static const char *const hp_cont_names[HP_NCONT] = {"ours (vendor off)", "ours (vendor on)",
                                                    "cuBLAS"};

/* One timing of contender `who`: n back-to-back calls between events (us per call into *b2b),
 * the host time to issue them (*issue), then one call alone between events (*single). */
static int hp_time(hp_ctx *x, int who, int n, cudaEvent_t e0, cudaEvent_t e1, double *b2b,
                   double *issue, double *single)
{
    HP_CUDA(cudaDeviceSynchronize());
    HP_CUDA(cudaEventRecord(e0, 0));
    double t0 = hp_now_us();
    for (int i = 0; i < n; i++)
        if (who == HP_CUBLAS ? hp_cublas(x) : hp_ours(x))
            return 1;
    double t1 = hp_now_us();
    HP_CUDA(cudaEventRecord(e1, 0));
    HP_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    HP_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    *b2b = ms * 1e3 / n;
    *issue = (t1 - t0) / n;
    HP_CUDA(cudaEventRecord(e0, 0));
    if (who == HP_CUBLAS ? hp_cublas(x) : hp_ours(x))
        return 1;
    HP_CUDA(cudaEventRecord(e1, 0));
    HP_CUDA(cudaEventSynchronize(e1));
    HP_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    *single = ms * 1e3;
    return 0;
}

static int hp_read_shapes(const char *path, hp_call **out, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_hostpath: cannot open %s\n", path);
        return 1;
    }
    int cap = 64;
    *out = (hp_call *)malloc(cap * sizeof **out);
    *n = 0;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char type[16], layout[16];
        hp_call c;
        if (line[0] == '#' || sscanf(line, "%d %d %d %15s %15s", &c.m, &c.n, &c.k, type,
                                     layout) != 5)
            continue;
        c.type = -1;
        for (int t = 0; t < HP_NTYPES; t++)
            if (strcmp(type, hp_type_names[t]) == 0)
                c.type = t;
        c.col_tn = strcmp(layout, "TN") == 0;
        if (c.type < 0 || c.m < 1 || c.n < 1 || c.k < 1 ||
            (!c.col_tn && strcmp(layout, "NN") != 0)) {
            fprintf(stderr, "bench_hostpath: %s: bad line: %s", path, line);
            fclose(f);
            return 1;
        }
        if (*n == cap)
            *out = (hp_call *)realloc(*out, (cap *= 2) * sizeof **out);
        (*out)[(*n)++] = c;
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    const char *db = NULL, *shapes = NULL;
    int n_calls = 200, rounds = 15, warmup = 64;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db = argv[++i];
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            n_calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
            shapes = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--db PATH] [--calls N] [--rounds R] [--warmup W] "
                            "[--shapes FILE]\n", argv[0]);
            return 2;
        }
    }
    if (n_calls < 1 || rounds < 1 || rounds > 1000 || warmup < 0)
        return 2;
    const hp_call *calls = hp_default;
    int n = (int)(sizeof hp_default / sizeof hp_default[0]);
    hp_call *read = NULL;
    if (shapes) {
        if (hp_read_shapes(shapes, &read, &n))
            return 2;
        calls = read;
    }
    char dbpath[4200];
    if (!db) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dbpath, sizeof dbpath, "%s/bench_hostpath_%d.db", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid());
        db = dbpath;
    }
    HP_CUDA(cudaSetDevice(0));
    HP_CUDA(cudaFree(0));       /* the primary context current, as in any CUDA program */
    at_handle *h[2] = {NULL, NULL};
    for (int v = 0; v < 2; v++) {
        at_status s = at_create(&h[v], 0, db);
        if (s != AT_OK) {
            fprintf(stderr, "at_create: %s\n", at_status_string(s));
            return 1;
        }
        at_set_vendor(h[v], v ? AT_VENDOR_ON : AT_VENDOR_OFF);
    }
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        return 1;
    }
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        size_t es = hp_es[calls[i].type], a = (size_t)calls[i].m * calls[i].k * es,
               b = (size_t)calls[i].k * calls[i].n * es, c = (size_t)calls[i].m * calls[i].n * es;
        bytes = a > bytes ? a : bytes;
        bytes = b > bytes ? b : bytes;
        bytes = c > bytes ? c : bytes;
    }
    void *A, *B, *C;
    HP_CUDA(cudaMalloc(&A, bytes));
    HP_CUDA(cudaMalloc(&B, bytes));
    HP_CUDA(cudaMalloc(&C, bytes));
    HP_CUDA(cudaMemset(A, 0x3c, bytes));    /* finite values of every type */
    HP_CUDA(cudaMemset(B, 0x3c, bytes));
    cudaEvent_t e0, e1;
    HP_CUDA(cudaEventCreate(&e0));
    HP_CUDA(cudaEventCreate(&e1));
    cudaDeviceProp prop;
    HP_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("# bench_hostpath: %s, %d back-to-back calls per timing, %d rounds (median), warm-up "
           "%d, database %s\n", prop.name, n_calls, rounds, warmup, db);
    printf("# b2b: us per call of %d calls between two events; issue: host us per call to issue "
           "them; single: one call alone between events\n", n_calls);
    printf("%-22s %-10s | %-26s | %-26s | %-20s | %-17s | %s\n", "call", "on: served",
           "ours off b2b/issue/single", "ours on b2b/issue/single", "cuBLAS b2b/issue/single",
           "off-cuBLAS b2b/1", "on-cuBLAS b2b/1");
    double *d_off = (double *)malloc(n * sizeof(double)), *d_on = (double *)malloc(n * sizeof(double));
    double *s_off = (double *)malloc(n * sizeof(double)), *s_on = (double *)malloc(n * sizeof(double));
    double *i_off = (double *)malloc(n * sizeof(double)), *i_on = (double *)malloc(n * sizeof(double));
    int n_short = 0;
    for (int i = 0; i < n; i++) {
        hp_ctx x[HP_NCONT];
        for (int w = 0; w < HP_NCONT; w++) {
            x[w].c = calls[i];
            x[w].A = A;
            x[w].B = B;
            x[w].C = C;
            x[w].h = w == HP_CUBLAS ? NULL : h[w];
            x[w].cublas = cublas;
        }
        at_math math = calls[i].type == HP_TF32 ? AT_MATH_TF32 : AT_MATH_DEFAULT;
        at_set_math_mode(h[0], math);
        at_set_math_mode(h[1], math);
        for (int w = 0; w < HP_NCONT; w++)
            for (int r = 0; r < warmup; r++)
                if (w == HP_CUBLAS ? hp_cublas(&x[w]) : hp_ours(&x[w]))
                    return 1;
        HP_CUDA(cudaDeviceSynchronize());
        static double b2b[HP_NCONT][1000], issue[HP_NCONT][1000], single[HP_NCONT][1000];
        for (int r = 0; r < rounds; r++)
            for (int j = 0; j < HP_NCONT; j++) {
                int w = (j + r) % HP_NCONT;        /* every contender first in turn */
                if (hp_time(&x[w], w, n_calls, e0, e1, &b2b[w][r], &issue[w][r], &single[w][r]))
                    return 1;
            }
        double mb[HP_NCONT], mi[HP_NCONT], ms[HP_NCONT];
        for (int w = 0; w < HP_NCONT; w++) {
            mb[w] = hp_median(b2b[w], rounds);
            mi[w] = hp_median(issue[w], rounds);
            ms[w] = hp_median(single[w], rounds);
        }
        at_stats st;
        at_get_stats(h[1], &st);
        char name[64];
        snprintf(name, sizeof name, "%dx%dx%d %s %s", calls[i].m, calls[i].n, calls[i].k,
                 hp_type_names[calls[i].type], calls[i].col_tn ? "col TN" : "row NN");
        printf("%-22s %-10.10s | %7.2f %7.2f %8.2f   | %7.2f %7.2f %8.2f   | %6.2f %6.2f %6.2f "
               "| %+7.2f %+7.2f | %+7.2f %+7.2f\n", name, st.last_vendor ? "cuBLAS" : st.last_kernel,
               mb[HP_OFF], mi[HP_OFF], ms[HP_OFF], mb[HP_ON], mi[HP_ON], ms[HP_ON],
               mb[HP_CUBLAS], mi[HP_CUBLAS], ms[HP_CUBLAS], mb[HP_OFF] - mb[HP_CUBLAS],
               ms[HP_OFF] - ms[HP_CUBLAS], mb[HP_ON] - mb[HP_CUBLAS], ms[HP_ON] - ms[HP_CUBLAS]);
        if (ms[HP_CUBLAS] < 30.0) {
            d_off[n_short] = mb[HP_OFF] - mb[HP_CUBLAS];
            d_on[n_short] = mb[HP_ON] - mb[HP_CUBLAS];
            s_off[n_short] = ms[HP_OFF] - ms[HP_CUBLAS];
            s_on[n_short] = ms[HP_ON] - ms[HP_CUBLAS];
            i_off[n_short] = mi[HP_OFF] - mi[HP_CUBLAS];
            i_on[n_short] = mi[HP_ON] - mi[HP_CUBLAS];
            n_short++;
        }
    }
    if (n_short) {
        printf("# %d calls under 30 us in cuBLAS (single call): median of ours - cuBLAS per call\n",
               n_short);
        for (int v = 0; v < 2; v++)
            printf("%-18s back to back %+.2f us, single call %+.2f us, host issue %+.2f us "
                   "(target: at most +2 us)\n", hp_cont_names[v], hp_median(v ? d_on : d_off, n_short),
                   hp_median(v ? s_on : s_off, n_short), hp_median(v ? i_on : i_off, n_short));
    }
    for (int v = 0; v < 2; v++) {
        at_stats st;
        at_get_stats(h[v], &st);
        printf("# %s: %d plans (exact %d, nearest %d, arch %d, default %d), %lld vendor calls, "
               "%d trials\n", hp_cont_names[v], st.lookups[0] + st.lookups[1] + st.lookups[2] +
               st.lookups[3] + st.lookups[4], st.lookups[1], st.lookups[2], st.lookups[3],
               st.lookups[4], st.vendor_calls, st.trials);
        at_destroy(h[v]);
    }
    cublasDestroy(cublas);
    if (db == dbpath)
        unlink(dbpath);
    free(read);
    return 0;
}
