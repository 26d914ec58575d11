/* bench_coverage.c: GEMM calls drawn at random from a stated distribution, each run through
 * libautotune's public API and through cuBLAS in one process (correctness first, then CUDA
 * event timings); per-call TSV and per-type summary; a held-out mode for the selection model. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <library_types.h>
#include "autotune.h"
#include "bench_timer.h"

#if defined(AT_HAVE_VENDOR_CANDIDATE) || defined(AT_VENDOR_ON)
#define CV_VENDOR 1
#else
#define CV_VENDOR 0
#endif

/* ---- the distribution ---- */
#define CV_MIN_DIM 16
#define CV_MAX_DIM 16384
#define CV_MIN_BATCH 2
#define CV_MAX_BATCH 4096
#define CV_FLOP_CAP 1099511627776.0       /* 2 m n k batch <= 2^40 */
#define CV_BYTE_CAP 1073741824.0          /* A + B + C of the whole batch <= 1 GiB */
#define CV_BATCHED_SHARE 0.5              /* of FP32 and FP64 calls (the batched API's types) */
#define CV_SHORT_US 30.0                  /* a short call: cuBLAS under 30 us */
#define CV_SETTLE_CALLS 30                /* calls before timing: a trial settles in <= 27 */

enum { CV_BF16, CV_FP16, CV_TF32, CV_FP32, CV_FP64, CV_NTYPES };
static const char *const cv_type_name[CV_NTYPES] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
static const int cv_esz[CV_NTYPES] = {2, 2, 4, 4, 8};
/* relative Frobenius error of ours against cuBLAS accepted per type: both round C to the type
 * (BF16 8 bits, FP16 11) or TF32 inputs (11 bits), with different summation orders */
static const double cv_tol[CV_NTYPES] = {3e-2, 1e-2, 5e-3, 1e-4, 1e-10};

typedef struct cv_call {
    int type;
    at_order order;
    at_op opa, opb;
    int m, n, k, batch;             /* batch 1: at_gemm, else at_gemm_strided_batched */
} cv_call;

/* Two splitmix64 streams from the seed: the calls (so --print-shapes lists exactly the
 * calls a run with the same seed makes) and their data. */
static unsigned long long cv_rng, cv_data_rng;
static unsigned long long cv_mix(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static unsigned long long cv_next(void)
{
    return cv_mix(&cv_rng);
}
static double cv_uniform(void)
{
    return (double)(cv_next() >> 11) / 9007199254740992.0;
}
static double cv_data_uniform(void)
{
    return (double)(cv_mix(&cv_data_rng) >> 11) / 9007199254740992.0;
}
static int cv_log_uniform(int lo, int hi)
{
    double v = exp(log(lo) + cv_uniform() * (log(hi + 1.0) - log(lo)));
    int x = (int)v;
    return x < lo ? lo : x > hi ? hi : x;
}

static double cv_flops(const cv_call *c)
{
    return 2.0 * c->m * (double)c->n * c->k * c->batch;
}
static double cv_bytes(const cv_call *c)
{
    return (double)cv_esz[c->type] * c->batch *
           ((double)c->m * c->k + (double)c->k * c->n + (double)c->m * c->n);
}

/* One call: type, order and ops uniform; FP32 and FP64 batched with CV_BATCHED_SHARE,
 * the count log-uniform; m, n, k log-uniform, drawn again until under both caps. */
static cv_call cv_draw(void)
{
    cv_call c;
    c.type = (int)(cv_next() % CV_NTYPES);
    c.order = cv_next() % 2 ? AT_COL_MAJOR : AT_ROW_MAJOR;
    c.opa = cv_next() % 2 ? AT_OP_T : AT_OP_N;
    c.opb = cv_next() % 2 ? AT_OP_T : AT_OP_N;
    int batched = (c.type == CV_FP32 || c.type == CV_FP64) && cv_uniform() < CV_BATCHED_SHARE;
    for (;;) {
        c.batch = batched ? cv_log_uniform(CV_MIN_BATCH, CV_MAX_BATCH) : 1;
        for (int tries = 0; tries < 64; tries++) {
            c.m = cv_log_uniform(CV_MIN_DIM, CV_MAX_DIM);
            c.n = cv_log_uniform(CV_MIN_DIM, CV_MAX_DIM);
            c.k = cv_log_uniform(CV_MIN_DIM, CV_MAX_DIM);
            if (cv_flops(&c) <= CV_FLOP_CAP && cv_bytes(&c) <= CV_BYTE_CAP)
                return c;
        }
    }
}

/* The problem as the tuner names it (`autotune --size`): the row-major canonical form
 * (a column-major call is the row-major product of the swapped operands). */
static void cv_size_text(const cv_call *c, char *out, size_t len)
{
    int m = c->m, n = c->n;
    at_op a = c->opa, b = c->opb;
    if (c->order == AT_COL_MAJOR) {
        m = c->n;
        n = c->m;
        a = c->opb;
        b = c->opa;
    }
    static const char *const suffix[CV_NTYPES] = {":bf16", ":f16", ":tf32", "", ":f64"};
    char ops[8] = "", batch[24] = "";
    if (a || b)
        snprintf(ops, sizeof ops, ":%c%c", a ? 'T' : 'N', b ? 'T' : 'N');
    if (c->batch > 1)
        snprintf(batch, sizeof batch, ":b%d", c->batch);
    snprintf(out, len, "%dx%dx%d%s%s%s", m, n, c->k, suffix[c->type], ops, batch);
}

/* ---- data ---- */

/* A pool of random host values per type, never zero (uniform in [-1, -1/64] U [1/64, 1]),
 * of a prime length, so the copies that fill each call's operands from a random offset
 * never repeat along a row. */
#define CV_POOL 16777259
static void *cv_pool[CV_NTYPES];

static unsigned short cv_to_bf16(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (unsigned short)(u >> 16);
}
static float cv_from_bf16(unsigned short h)
{
    unsigned u = (unsigned)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/* IEEE half of a float in [-1, 1] (normal range only: |f| >= 2^-14), nearest even */
static unsigned short cv_to_half(float f)
{
    unsigned u;
    memcpy(&u, &f, 4);
    unsigned sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, man = u & 0x7fffff;
    if (exp < 113)
        return (unsigned short)sign;
    unsigned h = ((exp - 112) << 10) | (man >> 13), rest = man & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
        h++;
    return (unsigned short)(sign | h);
}
static double cv_from_half(unsigned short h)
{
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v = exp ? ldexp(1024 + man, exp - 25) : ldexp(man, -24);
    return h & 0x8000 ? -v : v;
}

static int cv_make_pool(int type)
{
    if (cv_pool[type])
        return 0;
    cv_pool[type] = malloc((size_t)CV_POOL * cv_esz[type]);
    if (!cv_pool[type])
        return -1;
    for (size_t i = 0; i < CV_POOL; i++) {
        double v = 2.0 * cv_data_uniform() - 1.0;
        if (fabs(v) < 1.0 / 64)
            v = v < 0 ? -0.5 : 0.5;
        switch (type) {
        case CV_BF16: ((unsigned short *)cv_pool[type])[i] = cv_to_bf16((float)v); break;
        case CV_FP16: ((unsigned short *)cv_pool[type])[i] = cv_to_half((float)v); break;
        case CV_FP64: ((double *)cv_pool[type])[i] = v; break;
        default: ((float *)cv_pool[type])[i] = (float)v; break;
        }
    }
    return 0;
}

/* Fills n elements at dev from the pool, starting at a random offset. */
static int cv_fill(int type, void *dev, size_t n)
{
    size_t esz = (size_t)cv_esz[type], at = (size_t)(cv_mix(&cv_data_rng) % CV_POOL), done = 0;
    while (done < n) {
        size_t chunk = CV_POOL - at < n - done ? CV_POOL - at : n - done;
        if (cudaMemcpy((char *)dev + done * esz, (char *)cv_pool[type] + at * esz, chunk * esz,
                       cudaMemcpyHostToDevice) != cudaSuccess)
            return -1;
        done += chunk;
        at = 0;
    }
    return 0;
}

static double cv_value(int type, const void *p, size_t i)
{
    switch (type) {
    case CV_BF16: return cv_from_bf16(((const unsigned short *)p)[i]);
    case CV_FP16: return cv_from_half(((const unsigned short *)p)[i]);
    case CV_FP64: return ((const double *)p)[i];
    default: return ((const float *)p)[i];
    }
}

/* ---- one call on both libraries ---- */

typedef struct cv_ctx {
    cv_call c;
    void *A, *B, *C, *Cref;
    int lda, ldb, ldc;
    long long sa, sb, sc;           /* elements per product */
    at_handle *h;
    cublasHandle_t cublas;
    int use_cublas;
    char err[512];
} cv_ctx;

static void cv_lds(cv_ctx *x)
{
    const cv_call *c = &x->c;
    if (c->order == AT_ROW_MAJOR) {
        x->lda = c->opa == AT_OP_N ? c->k : c->m;
        x->ldb = c->opb == AT_OP_N ? c->n : c->k;
        x->ldc = c->n;
    } else {
        x->lda = c->opa == AT_OP_N ? c->m : c->k;
        x->ldb = c->opb == AT_OP_N ? c->k : c->n;
        x->ldc = c->m;
    }
    x->sa = (long long)c->m * c->k;
    x->sb = (long long)c->k * c->n;
    x->sc = (long long)c->m * c->n;
}

static const at_dtype cv_at_type[CV_NTYPES] = {AT_R_16BF, AT_R_16F, AT_R_32F, AT_R_32F, AT_R_64F};

static int cv_ours(cv_ctx *x, void *C)
{
    const cv_call *c = &x->c;
    at_status s;
    if (c->batch > 1)
        s = at_gemm_strided_batched(x->h, c->order, c->opa, c->opb, c->m, c->n, c->k,
                                    cv_at_type[c->type], 1.0, x->A, x->lda, x->sa, x->B, x->ldb,
                                    x->sb, 0.0, C, x->ldc, x->sc, c->batch);
    else
        s = at_gemm(x->h, c->order, c->opa, c->opb, c->m, c->n, c->k, cv_at_type[c->type], 1.0,
                    x->A, x->lda, x->B, x->ldb, 0.0, C, x->ldc);
    if (s != AT_OK)
        snprintf(x->err, sizeof x->err, "%s: %s", at_status_string(s), at_errmsg(x->h));
    return s != AT_OK;
}

static int cv_cublas(cv_ctx *x, void *C)
{
    const cv_call *c = &x->c;
    static const cudaDataType dt[CV_NTYPES] = {CUDA_R_16BF, CUDA_R_16F, CUDA_R_32F, CUDA_R_32F,
                                               CUDA_R_64F};
    static const cublasComputeType_t ct[CV_NTYPES] = {
        CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F,
        CUBLAS_COMPUTE_64F};
    float one = 1.0f, zero = 0.0f;
    double done = 1.0, dzero = 0.0;
    const void *alpha = c->type == CV_FP64 ? (const void *)&done : (const void *)&one;
    const void *beta = c->type == CV_FP64 ? (const void *)&dzero : (const void *)&zero;
    cublasOperation_t oa = c->opa ? CUBLAS_OP_T : CUBLAS_OP_N, ob = c->opb ? CUBLAS_OP_T : CUBLAS_OP_N;
    /* column-major natively; a row-major C = op(A) op(B) is the column-major C' = op(B)' op(A)' */
    int rm = c->order == AT_ROW_MAJOR;
    int m = rm ? c->n : c->m, n = rm ? c->m : c->n;
    cublasOperation_t o1 = rm ? ob : oa, o2 = rm ? oa : ob;
    const void *X = rm ? x->B : x->A, *Y = rm ? x->A : x->B;
    int ldx = rm ? x->ldb : x->lda, ldy = rm ? x->lda : x->ldb;
    long long sx = rm ? x->sb : x->sa, sy = rm ? x->sa : x->sb;
    cublasStatus_t s;
    if (c->batch > 1)
        s = cublasGemmStridedBatchedEx(x->cublas, o1, o2, m, n, c->k, alpha, X, dt[c->type], ldx,
                                       sx, Y, dt[c->type], ldy, sy, beta, C, dt[c->type], x->ldc,
                                       x->sc, c->batch, ct[c->type], CUBLAS_GEMM_DEFAULT);
    else
        s = cublasGemmEx(x->cublas, o1, o2, m, n, c->k, alpha, X, dt[c->type], ldx, Y,
                         dt[c->type], ldy, beta, C, dt[c->type], x->ldc, ct[c->type],
                         CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        snprintf(x->err, sizeof x->err, "cuBLAS status %d", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

static int cv_op(void *ctx)
{
    cv_ctx *x = ctx;
    return x->use_cublas ? cv_cublas(x, x->Cref) : cv_ours(x, x->C);
}

/* Relative Frobenius error of C against Cref over up to 2^20 evenly spaced elements; -1 if
 * the copies fail, INFINITY for a non-finite value of ours. */
static double cv_error(const cv_ctx *x)
{
    size_t total = (size_t)x->sc * x->c.batch, step = total > (1u << 20) ? total / (1u << 20) : 1;
    size_t n = (total + step - 1) / step, esz = (size_t)cv_esz[x->c.type];
    char *a = malloc(n * esz), *b = malloc(n * esz);
    double diff = 0, norm = 0;
    int ok = a && b &&
             cudaMemcpy2D(a, esz, x->C, step * esz, esz, n, cudaMemcpyDeviceToHost) == cudaSuccess &&
             cudaMemcpy2D(b, esz, x->Cref, step * esz, esz, n, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (size_t i = 0; ok && i < n; i++) {
        double u = cv_value(x->c.type, a, i), v = cv_value(x->c.type, b, i);
        if (!isfinite(u)) {
            diff = INFINITY;
            break;
        }
        diff += (u - v) * (u - v);
        norm += v * v;
    }
    free(a);
    free(b);
    return !ok ? -1 : norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

static const char *cv_level_name(at_lookup_level l)
{
    static const char *const names[] = {"none", "exact", "nearest", "arch", "default"};
    return (unsigned)l < 5 ? names[l] : "?";
}

static int cv_alloc(cv_ctx *x)
{
    size_t esz = (size_t)cv_esz[x->c.type], b = (size_t)x->c.batch;
    x->A = x->B = x->C = x->Cref = NULL;
    if (cudaMalloc(&x->A, (size_t)x->sa * b * esz) != cudaSuccess ||
        cudaMalloc(&x->B, (size_t)x->sb * b * esz) != cudaSuccess ||
        cudaMalloc(&x->C, (size_t)x->sc * b * esz) != cudaSuccess ||
        cudaMalloc(&x->Cref, (size_t)x->sc * b * esz) != cudaSuccess)
        return -1;
    if (cv_make_pool(x->c.type) || cv_fill(x->c.type, x->A, (size_t)x->sa * b) ||
        cv_fill(x->c.type, x->B, (size_t)x->sb * b))
        return -1;
    /* C poisoned with NaN bytes: a result never written shows */
    cudaMemset(x->C, 0xff, (size_t)x->sc * b * esz);
    return 0;
}

static void cv_free(cv_ctx *x)
{
    cudaFree(x->A);
    cudaFree(x->B);
    cudaFree(x->C);
    cudaFree(x->Cref);
    cudaGetLastError();
}

/* ---- options ---- */

typedef struct cv_opts {
    const char *db, *oracle_db, *out, *commit;
    int calls, vendor, record, held_out, print_shapes;
    unsigned long long seed;
} cv_opts;

static void cv_usage(FILE *f)
{
    fprintf(f,
            "usage: bench_coverage [--db PATH|none] [--calls N] [--seed S] [--vendor on|off]\n"
            "                      [--record] [--out FILE.tsv] [--commit HASH]\n"
            "       bench_coverage --held-out --db TRAIN.db --oracle-db ORACLE.db [--calls N]\n"
            "                      [--seed S] [--out FILE.tsv]\n"
            "       bench_coverage --print-shapes [--calls N] [--seed S]\n"
            "Draws N GEMM calls (default 200; held-out 50) with seed S (default 1): type BF16,\n"
            "FP16, TF32, FP32, FP64 uniform; op pairs NN/NT/TN/TT and orders uniform; FP32 and\n"
            "FP64 strided batched with probability 0.5, batch log-uniform in 2..4096; m, n, k\n"
            "log-uniform in 16..16384, drawn again until 2 m n k batch <= 2^40 and A + B + C\n"
            "<= 1 GiB. --db none: a fresh empty user database (built-in defaults and the shipped\n"
            "database only); --db PATH runs on a private copy of PATH unless --record, which\n"
            "leaves what the runtime writes (its record of problems served below the exact\n"
            "level, trial winners) in PATH for `autotune --recorded`. --held-out: the model's first choice (trials off) and its trial's\n"
            "choice (4 candidates) on a copy of TRAIN against ORACLE (tuned at each call's shape:\n"
            "--print-shapes lists them as `autotune --kernel K --size S` arguments).\n");
}

static int cv_parse(int argc, char **argv, cv_opts *o)
{
    memset(o, 0, sizeof *o);
    o->calls = -1;
    o->seed = 1;
    o->vendor = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            cv_usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--record")) {
            o->record = 1;
        } else if (!strcmp(a, "--held-out")) {
            o->held_out = 1;
        } else if (!strcmp(a, "--print-shapes")) {
            o->print_shapes = 1;
        } else if (v && !strcmp(a, "--db")) {
            o->db = argv[++i];
        } else if (v && !strcmp(a, "--oracle-db")) {
            o->oracle_db = argv[++i];
        } else if (v && !strcmp(a, "--out")) {
            o->out = argv[++i];
        } else if (v && !strcmp(a, "--commit")) {
            o->commit = argv[++i];
        } else if (v && !strcmp(a, "--calls")) {
            o->calls = atoi(argv[++i]);
        } else if (v && !strcmp(a, "--seed")) {
            o->seed = strtoull(argv[++i], NULL, 10);
        } else if (v && !strcmp(a, "--vendor")) {
            v = argv[++i];
            if (strcmp(v, "on") && strcmp(v, "off"))
                return -1;
            o->vendor = !strcmp(v, "on");
        } else {
            return -1;
        }
    }
    if (o->calls < 0)
        o->calls = o->held_out ? 50 : 200;
    if (o->calls == 0 || (o->held_out && (!o->db || !o->oracle_db)))
        return -1;
#if !CV_VENDOR
    if (o->vendor) {
        fprintf(stderr, "bench_coverage: --vendor on: this libautotune has no vendor candidate\n");
        return -1;
    }
#endif
    return 0;
}

/* ---- handles and databases ---- */

static char cv_tmpdir[256];

static void cv_cleanup_tmp(void)
{
    if (!cv_tmpdir[0])
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cv_tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_coverage: could not remove %s\n", cv_tmpdir);
}

static int cv_copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[1 << 16];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out && fclose(out))
        ok = 0;
    return ok ? 0 : -1;
}

/* A handle on db (NULL: a fresh empty database in the temporary folder), our kernels alone
 * unless vendor, trials as given (-1: the library's default). */
static at_handle *cv_handle(const char *db, int vendor, int trials)
{
    char path[512];
    static int fresh;
    if (!db) {
        snprintf(path, sizeof path, "%s/empty%d.db", cv_tmpdir, fresh++);
        db = path;
    }
    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db);
    if (s != AT_OK) {
        fprintf(stderr, "bench_coverage: at_create(%s): %s\n", db, at_status_string(s));
        return NULL;
    }
#if CV_VENDOR
    at_set_vendor(h, vendor ? AT_VENDOR_ON : AT_VENDOR_OFF);
#else
    (void)vendor;
#endif
    if (trials >= 0)
        at_set_trials(h, trials);
    if (at_errmsg(h)[0])
        fprintf(stderr, "bench_coverage: %s\n", at_errmsg(h));
    return h;
}

/* ---- header, rows, summary ---- */

static void cv_header(FILE *f, const cv_opts *o, const char *mode)
{
    char date[64], commit[64] = "unknown";
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    if (o->commit) {
        snprintf(commit, sizeof commit, "%s", o->commit);
    } else {
        FILE *p = popen("git rev-parse --short HEAD 2>/dev/null", "r");
        if (p) {
            if (fgets(commit, sizeof commit, p))
                commit[strcspn(commit, "\n")] = '\0';
            pclose(p);
        }
    }
    struct cudaDeviceProp prop;
    int rt = 0, drv = 0, cb = 0;
    cudaGetDeviceProperties(&prop, 0);
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    cublasHandle_t h;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        cublasGetVersion(h, &cb);
        cublasDestroy(h);
    }
    fprintf(f, "# bench_coverage %s: %s, commit %s, %s (sm_%d%d, %d SMs), CUDA runtime %d.%d, "
               "driver %d.%d, cuBLAS %d; calls %d, seed %llu, db %s, vendor %s, record %s\n",
            mode, date, commit, prop.name, prop.major, prop.minor, prop.multiProcessorCount,
            rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10, cb, o->calls, o->seed,
            o->db ? o->db : "none", o->vendor ? "on" : "off", o->record ? "on" : "off");
    fprintf(f, "# distribution: type uniform over bf16 fp16 tf32 fp32 fp64; ops and order uniform; "
               "fp32/fp64 strided batched with p 0.5, batch log-uniform 2..4096; m, n, k "
               "log-uniform 16..16384 under 2mnk*batch <= 2^40 and A+B+C <= 1 GiB; beta 0\n");
}

typedef struct cv_result {
    cv_call c;
    double ours_us, cublas_us, error;
    at_lookup_level level;
    int vendor, failed;
    char config[512];
} cv_result;

static int cv_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void cv_summary(FILE *f, const cv_result *r, int n)
{
    double *over = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    fprintf(f, "# summary: ratio = cuBLAS time / our time (above 1: ours faster)\n");
    fprintf(f, "# %-5s %5s %8s %7s %6s %6s %6s %7s\n", "type", "calls", "geomean", "min", "<0.5x",
            "<0.8x", "<0.95x", "failed");
    for (int t = 0; t <= CV_NTYPES; t++) {
        int count = 0, b5 = 0, b8 = 0, b95 = 0, failed = 0;
        double logsum = 0, min = INFINITY;
        for (int i = 0; i < n; i++) {
            if (t < CV_NTYPES && r[i].c.type != t)
                continue;
            if (r[i].failed) {
                failed++;
                continue;
            }
            double ratio = r[i].cublas_us / r[i].ours_us;
            count++;
            logsum += log(ratio);
            min = ratio < min ? ratio : min;
            b5 += ratio < 0.5;
            b8 += ratio < 0.8;
            b95 += ratio < 0.95;
        }
        fprintf(f, "# %-5s %5d %8.3f %7.3f %6d %6d %6d %7d\n", t < CV_NTYPES ? cv_type_name[t] : "all",
                count, count ? exp(logsum / count) : 0, count ? min : 0, b5, b8, b95, failed);
    }
    int shorts = 0;
    for (int i = 0; i < n; i++)
        if (!r[i].failed && r[i].cublas_us < CV_SHORT_US)
            over[shorts++] = r[i].ours_us - r[i].cublas_us;
    qsort(over, (size_t)shorts, sizeof *over, cv_cmp);
    fprintf(f, "# short calls (cuBLAS < %.0f us): %d, median overhead of ours %+.2f us\n",
            CV_SHORT_US, shorts,
            shorts ? (shorts % 2 ? over[shorts / 2] : 0.5 * (over[shorts / 2 - 1] + over[shorts / 2]))
                   : 0.0);
    int levels[5] = {0};
    for (int i = 0; i < n; i++)
        if ((unsigned)r[i].level < 5)
            levels[r[i].level]++;
    fprintf(f, "# served by level: exact %d, nearest %d, arch %d, default %d\n", levels[1],
            levels[2], levels[3], levels[4]);
    free(over);
}

/* ---- the modes ---- */

/* Correctness then timing of one call on handle h (cuBLAS computed into Cref first). */
static void cv_measure(cv_ctx *x, cv_result *res, int check)
{
    res->failed = 0;
    x->use_cublas = 0;
    for (int i = 0; i < CV_SETTLE_CALLS && !res->failed; i++)
        res->failed = cv_op(x);
    if (!res->failed && cudaDeviceSynchronize() != cudaSuccess) {
        snprintf(x->err, sizeof x->err, "%s", cudaGetErrorString(cudaGetLastError()));
        res->failed = 1;
    }
    if (!res->failed && check) {
        res->error = cv_error(x);
        if (!(res->error >= 0 && res->error <= cv_tol[x->c.type])) {
            snprintf(x->err, sizeof x->err, "wrong result: relative error %.3g (tolerance %.1g)",
                     res->error, cv_tol[x->c.type]);
            res->failed = 1;
        }
    }
    if (!res->failed) {
        res->ours_us = 1e3 * bench_time_ms(cv_op, x, 10, 100);
        res->failed = res->ours_us < 0;
    }
    at_stats st;
    if (at_get_stats(x->h, &st) == AT_OK) {
        res->level = st.last_level;
        snprintf(res->config, sizeof res->config, "%s", st.last_config);
#if CV_VENDOR
        res->vendor = st.last_vendor;
#endif
    }
}

static void cv_call_text(const cv_call *c, char *out, size_t len)
{
    snprintf(out, len, "%s\t%s\t%c%c\t%d\t%d\t%d\t%d", cv_type_name[c->type],
             c->order == AT_ROW_MAJOR ? "row" : "col", c->opa ? 'T' : 'N', c->opb ? 'T' : 'N',
             c->m, c->n, c->k, c->batch);
}

static int cv_run_coverage(const cv_opts *o, FILE *tsv)
{
    const char *db = o->db && strcmp(o->db, "") && strcmp(o->db, "none") ? o->db : NULL;
    /* what the handle writes (trial winners, the record of problems served below the exact
     * level, cubins) goes to a private copy unless --record asks for the database itself */
    char copy[512];
    if (db && !o->record) {
        snprintf(copy, sizeof copy, "%s/user.db", cv_tmpdir);
        if (cv_copy_file(db, copy)) {
            fprintf(stderr, "bench_coverage: cannot copy %s: %s\n", db, strerror(errno));
            return 1;
        }
        db = copy;
    }
    at_handle *h = cv_handle(db, o->vendor, -1);
    cublasHandle_t cublas;
    if (!h || cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS)
        return 1;
    cv_result *res = calloc((size_t)o->calls, sizeof *res);
    cv_header(stdout, o, "coverage");
    if (tsv) {
        cv_header(tsv, o, "coverage");
        fprintf(tsv, "call\ttype\torder\tops\tm\tn\tk\tbatch\tgflop\tours_us\tcublas_us\tratio\t"
                     "level\tvendor\tshort\tdiff_us\trel_error\tstatus\tconfig\n");
    }
    for (int i = 0; i < o->calls; i++) {
        cv_ctx x;
        memset(&x, 0, sizeof x);
        x.c = cv_draw();
        x.h = h;
        x.cublas = cublas;
        res[i].c = x.c;
        cv_lds(&x);
        at_set_math_mode(h, x.c.type == CV_TF32 ? AT_MATH_TF32 : AT_MATH_DEFAULT);
        char call[128];
        cv_call_text(&x.c, call, sizeof call);
        if (cv_alloc(&x)) {
            snprintf(x.err, sizeof x.err, "allocation or fill failed");
            res[i].failed = 1;
        } else {
            x.use_cublas = 1;
            res[i].failed = cv_op(&x) || cudaDeviceSynchronize() != cudaSuccess;
            if (!res[i].failed) {
                res[i].cublas_us = 1e3 * bench_time_ms(cv_op, &x, 10, 100);
                cv_measure(&x, &res[i], 1);
            }
        }
        cv_free(&x);
        double ratio = res[i].failed ? 0 : res[i].cublas_us / res[i].ours_us;
        int is_short = res[i].cublas_us < CV_SHORT_US;
        const char *status = res[i].failed ? x.err : "ok";
        printf("%3d %s  ours %9.1f us  cuBLAS %9.1f us  %6.3fx  %-7s%s%s%s\n", i, call,
               res[i].ours_us, res[i].cublas_us, ratio, cv_level_name(res[i].level),
               res[i].vendor ? " vendor" : "", is_short ? " short" : "",
               res[i].failed ? "  FAILED: " : "");
        if (res[i].failed)
            printf("    %s\n", status);
        if (tsv)
            fprintf(tsv, "%d\t%s\t%.4f\t%.2f\t%.2f\t%.4f\t%s\t%d\t%d\t%.2f\t%.3g\t%s\t%s\n", i, call,
                    cv_flops(&x.c) * 1e-9, res[i].ours_us, res[i].cublas_us, ratio,
                    cv_level_name(res[i].level), res[i].vendor, is_short,
                    res[i].ours_us - res[i].cublas_us, res[i].error, status, res[i].config);
        fflush(stdout);
    }
    cv_summary(stdout, res, o->calls);
    if (tsv)
        cv_summary(tsv, res, o->calls);
    int failed = 0;
    for (int i = 0; i < o->calls; i++)
        failed += res[i].failed;
    free(res);
    cublasDestroy(cublas);
    at_destroy(h);
    return failed ? 3 : 0;
}

/* Held out: per call, the model's first choice (trials off) on a copy of TRAIN, its trial's
 * choice (4 candidates) on a fresh copy (a trial stores its winner: the next call must not
 * see it), and ORACLE's exact winner; oracle time / picked time. */
static int cv_run_held_out(const cv_opts *o, FILE *tsv)
{
    char top1_db[512], top4_db[512];
    snprintf(top1_db, sizeof top1_db, "%s/train-top1.db", cv_tmpdir);
    snprintf(top4_db, sizeof top4_db, "%s/train-top4.db", cv_tmpdir);
    if (cv_copy_file(o->db, top1_db)) {
        fprintf(stderr, "bench_coverage: cannot copy %s: %s\n", o->db, strerror(errno));
        return 1;
    }
    at_handle *h1 = cv_handle(top1_db, 0, 0), *ho = cv_handle(o->oracle_db, 0, 0);
    cublasHandle_t cublas;
    if (!h1 || !ho || cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS)
        return 1;
    cv_header(stdout, o, "held-out");
    if (tsv) {
        cv_header(tsv, o, "held-out");
        fprintf(tsv, "call\ttype\torder\tops\tm\tn\tk\tbatch\tsize\ttop1_us\ttop4_us\toracle_us\t"
                     "cublas_us\toracle/top1\toracle/top4\tlevel_top1\tlevel_oracle\tstatus\n");
    }
    double log1 = 0, log4 = 0;
    int counted = 0, failed = 0;
    for (int i = 0; i < o->calls; i++) {
        cv_ctx x;
        memset(&x, 0, sizeof x);
        x.c = cv_draw();
        x.cublas = cublas;
        cv_lds(&x);
        char call[128], size[96];
        cv_call_text(&x.c, call, sizeof call);
        cv_size_text(&x.c, size, sizeof size);
        cv_result r1 = {0}, r4 = {0}, ro = {0};
        double cublas_us = 0;
        int bad = cv_alloc(&x);
        if (!bad) {
            x.use_cublas = 1;
            bad = cv_op(&x) || cudaDeviceSynchronize() != cudaSuccess;
            cublas_us = bad ? 0 : 1e3 * bench_time_ms(cv_op, &x, 10, 100);
        }
        at_handle *h4 = NULL;
        if (!bad)
            bad = cv_copy_file(o->db, top4_db) || !(h4 = cv_handle(top4_db, 0, 4));
        at_handle *hs[3] = {h1, h4, ho};
        cv_result *rs[3] = {&r1, &r4, &ro};
        for (int j = 0; j < 3 && !bad; j++) {
            x.h = hs[j];
            at_set_math_mode(x.h, x.c.type == CV_TF32 ? AT_MATH_TF32 : AT_MATH_DEFAULT);
            cv_measure(&x, rs[j], 1);
            bad = rs[j]->failed;
        }
        at_destroy(h4);
        cv_free(&x);
        double q1 = bad ? 0 : ro.ours_us / r1.ours_us, q4 = bad ? 0 : ro.ours_us / r4.ours_us;
        if (!bad) {
            log1 += log(q1);
            log4 += log(q4);
            counted++;
        }
        failed += bad;
        printf("%3d %s  %-24s top-1 %9.1f  top-4 %9.1f  oracle %9.1f us (%s)  %.3f %.3f%s%s\n", i,
               call, size, r1.ours_us, r4.ours_us, ro.ours_us, cv_level_name(ro.level), q1, q4,
               bad ? "  FAILED: " : "", bad ? x.err : "");
        if (tsv)
            fprintf(tsv, "%d\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.4f\t%.4f\t%s\t%s\t%s\n", i, call,
                    size, r1.ours_us, r4.ours_us, ro.ours_us, cublas_us, q1, q4,
                    cv_level_name(r1.level), cv_level_name(ro.level), bad ? x.err : "ok");
        fflush(stdout);
    }
    for (FILE *f = stdout; f; f = f == stdout ? tsv : NULL)
        fprintf(f, "# held out %d calls (%d failed): geomean oracle/picked top-1 %.3f, top-4 %.3f\n",
                counted, failed, counted ? exp(log1 / counted) : 0, counted ? exp(log4 / counted) : 0);
    cublasDestroy(cublas);
    at_destroy(h1);
    at_destroy(ho);
    return failed ? 3 : 0;
}

int main(int argc, char **argv)
{
    cv_opts o;
    if (cv_parse(argc, argv, &o)) {
        cv_usage(stderr);
        return 2;
    }
    cv_rng = o.seed;
    cv_data_rng = o.seed ^ 0x5bd1e995ULL;
    if (o.print_shapes) {
        for (int i = 0; i < o.calls; i++) {
            cv_call c = cv_draw();
            char size[96];
            cv_size_text(&c, size, sizeof size);
            const char *kernel = c.type <= CV_TF32 ? "tcgemm"
                               : c.type == CV_FP32 ? (c.batch > 1 ? "matmul,bgemm" : "matmul")
                                                   : (c.batch > 1 ? "dgemm,bgemm" : "dgemm");
            printf("--kernel %s --size %s\n", kernel, size);
        }
        return 0;
    }
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        fprintf(stderr, "bench_coverage: no CUDA device (%s): it compares with cuBLAS on a GPU\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(cv_tmpdir, sizeof cv_tmpdir, "%s/bench_coverage.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(cv_tmpdir)) {
        fprintf(stderr, "bench_coverage: mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    FILE *tsv = NULL;
    if (o.out && !(tsv = fopen(o.out, "w"))) {
        fprintf(stderr, "bench_coverage: cannot write %s: %s\n", o.out, strerror(errno));
        cv_cleanup_tmp();
        return 1;
    }
    int rc = o.held_out ? cv_run_held_out(&o, tsv) : cv_run_coverage(&o, tsv);
    if (tsv)
        fclose(tsv);
    cv_cleanup_tmp();
    return rc;
}
