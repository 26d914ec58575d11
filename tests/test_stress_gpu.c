/* test_stress_gpu.c: concurrency stress, GPU tier: eight threads call every family through the
 * public API while two real tuners write the same database; then the whole database is checked. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "th_stress.h"
#include "tpl.h"

/* ---------------- GPU tier: every family from eight threads ---------------- */

/* Sizes the tuners tune (exact lookups once stored) and the seeded earlier
 * run stored (exact lookups from the start). */
#define ST_TUNED_GEMM_M 200
#define ST_TUNED_GEMM_N 136
#define ST_TUNED_GEMM_K 72
#define ST_TUNED_GEMM "200x136x72"
#define ST_TUNED_REDUCE 100003
#define ST_TUNED_REDUCE_TEXT "100003"
#define ST_SEED_GEMM_M 77
#define ST_SEED_GEMM_N 45
#define ST_SEED_GEMM_K 129
#define ST_SEED_REDUCE 50001
#define ST_SEED_JACOBI 203
#define ST_GPU_MIN_ITERS 40
#define ST_GPU_MAX_ITERS 4000
#define ST_GPU_DEADLINE_S 150.0          /* both tuners together */

typedef struct st_gpu_worker {
    int index;
    const char *path;
    const cudrv *cu;
    CUcontext ctx;
    CUstream stream;                 /* 0: the legacy stream */
    at_handle *h;
    unsigned long long rng;
    atomic_int *stop, *abort_all;
    long long calls[4], det_calls, handles, levels[5], compiled, loaded;
    char error[2048];
} st_gpu_worker;

static void st_gpu_fail(st_gpu_worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void st_gpu_fail(st_gpu_worker *w, const char *fmt, ...)
{
    if (w->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->error, sizeof w->error, fmt, ap);
    va_end(ap);
    atomic_store(w->abort_all, 1);
}

/* count floats uniform in [lo, hi) (malloc'd; NULL without memory). */
static float *st_floats(st_gpu_worker *w, size_t count, float lo, float hi)
{
    float *v = malloc((count ? count : 1) * sizeof *v);
    for (size_t i = 0; v && i < count; i++)
        v[i] = lo + (hi - lo) * (float)st_unit(&w->rng);
    return v;
}

/* Device buffer of count floats plus one (room for a shifted start). */
static CUdeviceptr st_alloc(st_gpu_worker *w, size_t count)
{
    CUdeviceptr p = 0;
    return w->cu->MemAlloc(&p, (count + 1) * sizeof(float)) == CUDA_SUCCESS ? p : 0;
}

/* Copies in the handle's stream order (a non-blocking stream does not
 * wait for the legacy one); downloads wait for the stream. 0 on success. */
static int st_up(st_gpu_worker *w, CUdeviceptr dst, const float *src, size_t count)
{
    return w->cu->MemcpyHtoDAsync(dst, src, count * sizeof *src, w->stream) == CUDA_SUCCESS
               ? 0 : -1;
}

static int st_down(st_gpu_worker *w, float *dst, CUdeviceptr src, size_t count)
{
    if (w->cu->MemcpyDtoHAsync(dst, src, count * sizeof *dst, w->stream) != CUDA_SUCCESS)
        return -1;
    return w->cu->StreamSynchronize(w->stream) == CUDA_SUCCESS ? 0 : -1;
}

/* 1 if the device copy at src still holds exactly host[0..count). */
static int st_unchanged(st_gpu_worker *w, CUdeviceptr src, const float *host, size_t count)
{
    float *back = malloc((count ? count : 1) * sizeof *back);
    int same = back && st_down(w, back, src, count) == 0 &&
               memcmp(back, host, count * sizeof *host) == 0;
    free(back);
    return same;
}

static const float *st_cf(CUdeviceptr p) { return (const float *)(uintptr_t)p; }
static float *st_f(CUdeviceptr p) { return (float *)(uintptr_t)p; }

/* One at_sgemm at a random (odd, padded, shifted) shape against a float64
 * host reference; A and B must come back unchanged, C's padding too.
 * Returns 0, or -1 after recording the failure. */
static int st_gemm(st_gpu_worker *w)
{
    const tpl_family *fam = tpl_find("matmul");
    double pick = st_unit(&w->rng);
    int m, n, k;
    if (pick < 0.15) {
        m = ST_TUNED_GEMM_M, n = ST_TUNED_GEMM_N, k = ST_TUNED_GEMM_K;
    } else if (pick < 0.3) {
        m = ST_SEED_GEMM_M, n = ST_SEED_GEMM_N, k = ST_SEED_GEMM_K;
    } else {
        m = (int)st_range(&w->rng, 1, 260);
        n = (int)st_range(&w->rng, 1, 260);
        k = (int)st_range(&w->rng, 1, 260);
    }
    int lda = k + (int)st_range(&w->rng, 0, 5), ldb = n + (int)st_range(&w->rng, 0, 5);
    int ldc = n + (int)st_range(&w->rng, 0, 5), shift = (int)st_range(&w->rng, 0, 1);
    float alpha = (float)(4 * st_unit(&w->rng) - 2);
    float beta = st_range(&w->rng, 0, 2) == 0 ? 0.0f : (float)(2 * st_unit(&w->rng) - 1);
    size_t an = (size_t)m * lda, bn = (size_t)k * ldb, cn = (size_t)m * ldc;
    float *A = st_floats(w, an, -1, 1), *B = st_floats(w, bn, -1, 1);
    float *C0 = st_floats(w, cn, -1, 1), *C = malloc(cn * sizeof *C);
    CUdeviceptr dA = st_alloc(w, an), dB = st_alloc(w, bn), dC = st_alloc(w, cn);
    int rc = -1;
    if (!A || !B || !C0 || !C || !dA || !dB || !dC || !fam) {
        st_gpu_fail(w, "sgemm: out of host or device memory");
        goto done;
    }
    if (beta == 0.0f)     /* NaN inside m x n: beta = 0 must not read C */
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                C0[(size_t)i * ldc + j] = NAN;
    CUdeviceptr a = dA + 4 * (CUdeviceptr)shift, b = dB + 4 * (CUdeviceptr)shift,
                c = dC + 4 * (CUdeviceptr)shift;
    if (st_up(w, a, A, an) || st_up(w, b, B, bn) || st_up(w, c, C0, cn)) {
        st_gpu_fail(w, "sgemm: upload failed");
        goto done;
    }
    at_status s = at_sgemm(w->h, m, n, k, alpha, st_cf(a), lda, st_cf(b), ldb, beta, st_f(c), ldc);
    if (s != AT_OK) {
        st_gpu_fail(w, "at_sgemm %dx%dx%d ld %d/%d/%d: %s: %s", m, n, k, lda, ldb, ldc,
                    at_status_string(s), at_errmsg(w->h));
        goto done;
    }
    if (st_down(w, C, c, cn) || !st_unchanged(w, a, A, an) || !st_unchanged(w, b, B, bn)) {
        st_gpu_fail(w, "sgemm %dx%dx%d: download failed or A/B changed", m, n, k);
        goto done;
    }
    double num = 0, den = 0;
    int pad_changed = 0;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < ldc; j++) {
            size_t at = (size_t)i * ldc + j;
            if (j >= n) {
                pad_changed |= memcmp(&C[at], &C0[at], sizeof *C) != 0;
                continue;
            }
            double acc = 0;
            for (int p = 0; p < k; p++)
                acc += (double)A[(size_t)i * lda + p] * B[(size_t)p * ldb + j];
            double ref = alpha * acc + (beta != 0.0f ? beta * (double)C0[at] : 0.0);
            num += (C[at] - ref) * (C[at] - ref);
            den += ref * ref;
        }
    }
    tpl_problem p = TPL_PROBLEM(3, {m, n, k});
    double err = sqrt(num / (den > 0 ? den : 1)), tol = fam->tolerance(&p);
    if (!(err <= tol) || pad_changed) {
        st_gpu_fail(w, "sgemm %dx%dx%d ld %d/%d/%d shift %d alpha %g beta %g: error %g (tolerance "
                    "%g)%s", m, n, k, lda, ldb, ldc, shift, alpha, beta, err, tol,
                    pad_changed ? ", padding of C changed" : "");
        goto done;
    }
    rc = 0;
done:
    w->cu->MemFree(dA);
    w->cu->MemFree(dB);
    w->cu->MemFree(dC);
    free(A); free(B); free(C0); free(C);
    return rc;
}

/* Runs at_ssum/at_sdot once into dr (poisoned first); the value in *got. */
static at_status st_reduce_call(st_gpu_worker *w, int dot, long long n, CUdeviceptr x,
                                CUdeviceptr y, CUdeviceptr dr, float *got)
{
    if (w->cu->MemsetD32Async(dr, 0x7fc00000u, 1, w->stream) != CUDA_SUCCESS)
        return AT_ERR_CUDA;
    at_status s = dot ? at_sdot(w->h, n, st_cf(x), st_cf(y), st_f(dr))
                      : at_ssum(w->h, n, st_cf(x), st_f(dr));
    if (s == AT_OK && st_down(w, got, dr, 1) != 0)
        s = AT_ERR_CUDA;
    return s;
}

/* One at_ssum or at_sdot at a random length and offset against float64; in
 * deterministic mode a second call must give the same bits. */
static int st_reduce(st_gpu_worker *w, int dot, int det)
{
    const tpl_family *fam = tpl_find(dot ? "dot" : "sum");
    double pick = st_unit(&w->rng);
    long long n = pick < 0.15 ? ST_TUNED_REDUCE : pick < 0.3 ? ST_SEED_REDUCE
                : pick < 0.4 ? st_range(&w->rng, 1, 40)
                : (long long)exp(st_unit(&w->rng) * log(3e6)) + 1;
    int off = (int)st_range(&w->rng, 0, 3);
    float *x = st_floats(w, (size_t)n, 0, 1), *y = dot ? st_floats(w, (size_t)n, 0, 1) : NULL;
    CUdeviceptr dx = st_alloc(w, (size_t)n + 3), dy = dot ? st_alloc(w, (size_t)n + 3) : 0;
    CUdeviceptr dr = st_alloc(w, 1);
    const char *name = dot ? "dot" : "sum";
    int rc = -1;
    if (!fam || !x || !dx || !dr || (dot && (!y || !dy))) {
        st_gpu_fail(w, "%s: out of host or device memory", name);
        goto done;
    }
    CUdeviceptr xs = dx + 4 * (CUdeviceptr)off, ys = dot ? dy + 4 * (CUdeviceptr)off : 0;
    if (st_up(w, xs, x, (size_t)n) || (dot && st_up(w, ys, y, (size_t)n))) {
        st_gpu_fail(w, "%s: upload failed", name);
        goto done;
    }
    float got = 0, again = 0;
    at_status s = st_reduce_call(w, dot, n, xs, ys, dr, &got);
    if (s == AT_OK && det)
        s = st_reduce_call(w, dot, n, xs, ys, dr, &again);
    if (s != AT_OK) {
        st_gpu_fail(w, "at_s%s n=%lld offset %d: %s: %s", name, n, off, at_status_string(s),
                    at_errmsg(w->h));
        goto done;
    }
    if (!st_unchanged(w, xs, x, (size_t)n) || (dot && !st_unchanged(w, ys, y, (size_t)n))) {
        st_gpu_fail(w, "%s n=%lld: an input changed", name, n);
        goto done;
    }
    double ref = 0;
    for (long long i = 0; i < n; i++)
        ref += dot ? (double)x[i] * y[i] : (double)x[i];
    tpl_problem p = TPL_PROBLEM(1, {n});
    double tol = n <= 1 ? (dot ? 1e-7 : 0.0) : fam->tolerance(&p);
    double err = ref == 0.0 ? fabs((double)got) : fabs(got - ref) / fabs(ref);
    if (!(err <= tol) || (det && memcmp(&got, &again, sizeof got) != 0)) {
        st_gpu_fail(w, "%s n=%lld offset %d det %d: got %.9g (again %.9g), want %.9g: error %g "
                    "(tolerance %g)", name, n, off, det, got, again, ref, err, tol);
        goto done;
    }
    rc = 0;
done:
    w->cu->MemFree(dx);
    w->cu->MemFree(dy);
    w->cu->MemFree(dr);
    free(x);
    free(y);
    return rc;
}

/* Float64 Jacobi with the library's stopping rule (max |x_new - x| <= tol *
 * max |x_new|) from x = 0; the sweeps it took, -1 if not within max_iter. */
static int st_cpu_jacobi(int n, const float *A, const float *b, double *x, double tol,
                         int max_iter)
{
    double *xn = malloc((size_t)n * sizeof *xn);
    int sweeps = -1;
    for (int i = 0; i < n; i++)
        x[i] = 0;
    for (int it = 1; xn && it <= max_iter; it++) {
        double d = 0, big = 0;
        for (int i = 0; i < n; i++) {
            double s = b[i];
            for (int j = 0; j < n; j++)
                if (j != i)
                    s -= (double)A[(size_t)i * n + j] * x[j];
            xn[i] = s / A[(size_t)i * n + i];
            d = fmax(d, fabs(xn[i] - x[i]));
            big = fmax(big, fabs(xn[i]));
        }
        memcpy(x, xn, (size_t)n * sizeof *x);
        if (d <= tol * big) {
            sweeps = it;
            break;
        }
    }
    free(xn);
    return sweeps;
}

/* One at_sjacobi on a fresh diagonally dominant system (random margin,
 * some negative diagonals, A sometimes one float off alignment) against
 * float64: sweep count, residual and solution as tests/test_jacobi.c. */
static int st_jacobi(st_gpu_worker *w)
{
    int n = st_unit(&w->rng) < 0.3 ? ST_SEED_JACOBI : (int)st_range(&w->rng, 2, 320);
    int shift = (int)st_range(&w->rng, 0, 1), flip = st_range(&w->rng, 0, 3) == 0;
    double margin = 1.3 + 0.7 * st_unit(&w->rng);
    float *A = st_floats(w, (size_t)n * n, -1, 1), *b = st_floats(w, (size_t)n, -1, 1);
    float *x = calloc((size_t)n, sizeof *x);
    double *xc = malloc((size_t)n * sizeof *xc);
    CUdeviceptr dA = st_alloc(w, (size_t)n * n), db = st_alloc(w, (size_t)n);
    CUdeviceptr dx = st_alloc(w, (size_t)n);
    int rc = -1;
    if (!A || !b || !x || !xc || !dA || !db || !dx) {
        st_gpu_fail(w, "jacobi: out of host or device memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        double off = 0;
        for (int j = 0; j < n; j++)
            off += j != i ? fabs(A[(size_t)i * n + j]) : 0;
        A[(size_t)i * n + i] = (float)(margin * off + 0.25) * (flip && i % 2 ? -1.0f : 1.0f);
    }
    CUdeviceptr as = dA + 4 * (CUdeviceptr)shift;
    if (st_up(w, as, A, (size_t)n * n) || st_up(w, db, b, (size_t)n) ||
        st_up(w, dx, x, (size_t)n)) {
        st_gpu_fail(w, "jacobi: upload failed");
        goto done;
    }
    int iters = 0;
    float resid = -1;
    at_status s = at_sjacobi(w->h, n, st_cf(as), st_cf(db), st_f(dx), 1e-6f, 1000, &iters, &resid);
    if (s != AT_OK) {
        st_gpu_fail(w, "at_sjacobi n=%d: %s: %s", n, at_status_string(s), at_errmsg(w->h));
        goto done;
    }
    if (st_down(w, x, dx, (size_t)n) || !st_unchanged(w, as, A, (size_t)n * n) ||
        !st_unchanged(w, db, b, (size_t)n)) {
        st_gpu_fail(w, "jacobi n=%d: download failed or A/b changed", n);
        goto done;
    }
    int sweeps = st_cpu_jacobi(n, A, b, xc, 1e-6, 1000);
    double rn = 0, bn = 0, e = 0, big = 0;
    for (int i = 0; i < n; i++) {
        double r = -(double)b[i];
        for (int j = 0; j < n; j++)
            r += (double)A[(size_t)i * n + j] * x[j];
        rn += r * r;
        bn += (double)b[i] * b[i];
        e = fmax(e, fabs(x[i] - xc[i]));
        big = fmax(big, fabs(xc[i]));
    }
    double res = sqrt(rn / (bn > 0 ? bn : 1));
    if (sweeps < 0 || abs(iters - sweeps) > 1 || !(resid >= 0 && resid <= 1e-6f) ||
        !(res < 1e-5) || !(e <= 1e-5 * big)) {
        st_gpu_fail(w, "jacobi n=%d shift %d margin %.2f flip %d: %d sweeps (CPU %d), reported "
                    "update %g, residual %g, |x - x_cpu| %g of %g", n, shift, margin, flip,
                    iters, sweeps, resid, res, e, big);
        goto done;
    }
    rc = 0;
done:
    w->cu->MemFree(dA);
    w->cu->MemFree(db);
    w->cu->MemFree(dx);
    free(A); free(b); free(x); free(xc);
    return rc;
}

/* After a call: a plan was chosen, and in deterministic mode a
 * reproducible one. 0, or -1 after recording the failure. */
static int st_check_plan(st_gpu_worker *w, const char *family, int det)
{
    at_stats st;
    const tpl_family *fam = NULL;
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    /* a GEMM call names the family that served it (matmul, or skinny for its shapes) */
    if (at_get_stats(w->h, &st) == AT_OK)
        fam = tpl_find(st.last_kernel[0] ? st.last_kernel : family);
    if (at_get_stats(w->h, &st) != AT_OK || st.last_level == AT_LOOKUP_NONE || !fam ||
        tpl_config_parse(fam, st.last_config, cfg, why, sizeof why) != AT_OK) {
        st_gpu_fail(w, "%s: no plan recorded (last config '%s')", family, st.last_config);
        return -1;
    }
    if (det && fam->deterministic && !fam->deterministic(cfg)) {
        st_gpu_fail(w, "%s: deterministic mode ran %s", family, st.last_config);
        return -1;
    }
    return 0;
}

/* at_create on the shared database: it must open (no fallback to defaults). */
static int st_open_handle(st_gpu_worker *w, int device)
{
    at_status s = at_create(&w->h, device, w->path);
    if (s != AT_OK || at_errmsg(w->h)[0] || at_set_stream(w->h, w->stream) != AT_OK) {
        st_gpu_fail(w, "at_create: %s: %s", at_status_string(s), w->h ? at_errmsg(w->h) : "");
        at_destroy(w->h);
        w->h = NULL;
        return -1;
    }
    w->handles++;
    return 0;
}

static void st_close_handle(st_gpu_worker *w)
{
    at_stats st;
    if (w->h && at_get_stats(w->h, &st) == AT_OK) {
        for (int l = 0; l < 5; l++)
            w->levels[l] += st.lookups[l];
        w->compiled += st.compiled;
        w->loaded += st.loaded;
    }
    at_destroy(w->h);
    w->h = NULL;
}

/* A thread: its own handle (the last thread a new one every round), odd
 * threads on their own non-blocking stream, the first half sometimes in
 * deterministic mode; families in turn until the tuners are done. */
static void *st_gpu_thread(void *arg)
{
    st_gpu_worker *w = arg;
    static const char *const names[4] = {"matmul", "sum", "dot", "jacobi"};
    if (w->cu->CtxPushCurrent(w->ctx) != CUDA_SUCCESS) {
        st_gpu_fail(w, "cuCtxPushCurrent failed");
        return NULL;
    }
    if (w->index % 2 && w->cu->StreamCreate(&w->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
        st_gpu_fail(w, "cuStreamCreate failed");
    if (!w->error[0])
        st_open_handle(w, th_device());
    for (int iter = 0; w->h && !atomic_load(w->abort_all) && iter < ST_GPU_MAX_ITERS; iter++) {
        if (iter >= ST_GPU_MIN_ITERS && atomic_load(w->stop))
            break;
        if (iter > 0 && w->index == ST_THREADS - 1) {
            st_close_handle(w);
            if (st_open_handle(w, th_device()) != 0)
                break;
        }
        int det = w->index < ST_THREADS / 2 && st_range(&w->rng, 0, 2) == 0;
        int f = (iter + w->index) % 4;
        int rc = at_set_deterministic(w->h, det) == AT_OK ? 0 : -1;
        if (rc == 0)
            rc = f == 0 ? st_gemm(w) : f == 3 ? st_jacobi(w) : st_reduce(w, f == 2, det);
        if (rc == 0)
            rc = st_check_plan(w, names[f], det);
        if (rc != 0)
            break;
        w->calls[f]++;
        w->det_calls += det;
    }
    st_close_handle(w);
    if (w->stream) {
        w->cu->StreamSynchronize(w->stream);
        w->cu->StreamDestroy(w->stream);
    }
    CUcontext popped;
    w->cu->CtxPopCurrent(&popped);
    return NULL;
}

/* Stores one result row of the seeded run. */
static at_status st_seed_row(db *d, const at_device_info *dev, const tpl_family *fam,
                             const tpl_problem *p, const char *config, const char *status,
                             double time_ms, long long session)
{
    db_result r;
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", dev->uuid);
    snprintf(r.kernel, sizeof r.kernel, "%s", fam->name);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, "%s", status);
    r.problem = *p;
    r.session_id = session;
    r.time_ms = time_ms;
    r.time_min_ms = 0.95 * time_ms;
    r.time_max_ms = 1.05 * time_ms;
    r.runs = 10;
    r.rel_error = strcmp(status, DB_OK) == 0 ? 1e-7 : 0.5;
    r.deterministic = tpl_config_parse(fam, config, cfg, why, sizeof why) == AT_OK &&
                      (!fam->deterministic || fam->deterministic(cfg));
    return db_store_result(d, &r);
}

/* The earlier run: a session storing, per family at its seed size, the
 * default and every baseline (ok, the first baseline fastest) and a
 * wrong_result row faster than all (never to be chosen). */
static at_status st_seed_gpu_db(const char *path, const at_device_info *dev, long long *session,
                                char *why, size_t len)
{
    db *d = NULL;
    at_status s = db_open(&d, path, 1, why, len);
    if (s != AT_OK)
        return s;
    s = db_put_device(d, dev, tpl_nvrtc_version());
    if (s == AT_OK)
        s = db_begin_session(d, dev->uuid, "test_stress seed", "{}", session);
    static const char *const names[4] = {"matmul", "sum", "dot", "jacobi"};
    const tpl_problem sizes[4] = {
        TPL_PROBLEM(3, {ST_SEED_GEMM_M, ST_SEED_GEMM_N, ST_SEED_GEMM_K}),
        TPL_PROBLEM(1, {ST_SEED_REDUCE}), TPL_PROBLEM(1, {ST_SEED_REDUCE}),
        TPL_PROBLEM(1, {ST_SEED_JACOBI}),
    };
    for (int f = 0; f < 4 && s == AT_OK; f++) {
        const tpl_family *fam = tpl_find(names[f]);
        if (!fam) {
            snprintf(why, len, "no family %s", names[f]);
            db_close(d);
            return AT_ERR_NOT_FOUND;
        }
        s = st_seed_row(d, dev, fam, &sizes[f], fam->default_config, DB_OK, 2.0, *session);
        for (int b = 0; b < fam->n_baselines && s == AT_OK; b++)
            if (!strstr(fam->baselines[b].config, "TYPE=1"))    /* FP32 sizes: FP32 rows */
                s = st_seed_row(d, dev, fam, &sizes[f], fam->baselines[b].config, DB_OK,
                                1.0 + 0.125 * b, *session);
        int cfg[TPL_MAX_PARAMS];
        char wrong[TPL_CONFIG_LEN];
        tpl_config_from_index(fam, tpl_space_size(fam) / 2, cfg);
        tpl_config_format(fam, cfg, wrong, sizeof wrong);
        if (s == AT_OK)
            s = st_seed_row(d, dev, fam, &sizes[f], wrong, DB_WRONG_RESULT, 0.25, *session);
    }
    if (s == AT_OK)
        s = db_end_session(d, *session, "{\"results_stored\": 0}", "seeded");
    if (s != AT_OK)
        snprintf(why, len, "%s", db_errmsg(d));
    db_close(d);
    return s;
}

/* Joins the threads, prints their counts, fails the test for each error. */
static void st_gpu_report(st_gpu_worker *w, pthread_t *threads, int started,
                          unsigned long long seed, double seconds)
{
    long long calls[4] = {0}, levels[5] = {0}, det = 0, handles = 0, compiled = 0, loaded = 0;
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < started; t++) {
        for (int f = 0; f < 4; f++)
            calls[f] += w[t].calls[f];
        for (int l = 0; l < 5; l++)
            levels[l] += w[t].levels[l];
        det += w[t].det_calls;
        handles += w[t].handles;
        compiled += w[t].compiled;
        loaded += w[t].loaded;
        if (w[t].error[0])
            th_fail(__FILE__, __LINE__, "thread %d: %s", t, w[t].error);
    }
    printf("    seed %llu, %.1f s: sgemm %lld, ssum %lld, sdot %lld, sjacobi %lld calls "
           "(%lld deterministic) on %lld handles; plans: exact %lld, nearest %lld, arch %lld, "
           "default %lld; %lld compiled, %lld cubins loaded\n", seed, seconds, calls[0],
           calls[1], calls[2], calls[3], det, handles, levels[AT_LOOKUP_EXACT],
           levels[AT_LOOKUP_NEAREST], levels[AT_LOOKUP_ARCH], levels[AT_LOOKUP_DEFAULT],
           compiled, loaded);
    if (!th_failed())
        CHECK_MSG(levels[AT_LOOKUP_EXACT] > 0, "no call used a stored result");
}

/* Starts a real tuner (build/autotune) on the shared database. */
static pid_t st_tuner(const char *path, const char *kernels, const char *size, const char *log)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "exec env -u AUTOTUNE_WORKER %s/autotune --device %d --kernel %s --size %s "
             "--budget 10e --seed 5 --jobs 4 --quiet --db %s", th_build_dir(), th_device(),
             kernels, size, path);
    return st_spawn(cmd, log);
}

/* Checks a tuner's exit, its rows per tuned family against its own counts
 * and the best's cubin; adds its "done" total to *stored. */
static void st_check_tuner(const char *path, const char *log, int rc, const char *const *fams,
                           int n_fams, const tpl_problem *p, const char *size, long long *stored)
{
    char *out = st_slurp(log), why[512];
    int runs = 0;
    long long done = st_done_total(out, &runs);
    if (rc != 0 || runs != 1) {
        th_fail(__FILE__, __LINE__, "tuner %s: exit %d, %d runs: %s", size, rc, runs,
                out ? out : "");
        free(out);
        return;
    }
    printf("    %s", out);
    *stored += done;
    db_result *all = NULL;
    int n = st_all_results(path, &all, why, sizeof why);
    db *d = NULL;
    if (n <= 0 || db_open(&d, path, 0, why, sizeof why) != AT_OK)
        th_fail(__FILE__, __LINE__, "reading %s: %s", path, why);
    for (int f = 0; d && f < n_fams; f++) {
        long long evaluated = st_evaluated(out, fams[f], size);
        int rows = st_rows_at(all, n, fams[f], p);
        if (evaluated <= 0 || rows != evaluated) {
            th_fail(__FILE__, __LINE__, "%s %s: %lld evaluated, %d rows", fams[f], size,
                    evaluated, rows);
            continue;
        }
        const tpl_family *fam = tpl_find(fams[f]);
        db_result best;
        void *bin = NULL;
        size_t bytes = 0;
        if (db_best(d, all[0].device_uuid, fams[f], tpl_source_hash(fam), p, 0, &best) != AT_OK ||
            db_get_binary(d, best.binary_key, &bin, &bytes) != AT_OK || bytes == 0)
            th_fail(__FILE__, __LINE__, "%s %s: no best with a stored cubin (%s)", fams[f],
                    size, db_errmsg(d));
        free(bin);
    }
    db_close(d);
    free(all);
    free(out);
}

GPU_TEST(stress_eight_threads_every_family_while_tuner_writes)
{
    at_status s;
    char why[1024], path[4300], log_reduce[4400], log_gemm[4400];
    const cudrv *cu = cudrv_get(&s, why, sizeof why);
    CHECK_MSG(cu, "%s", why);
    at_device_info dev;
    CUdevice device;
    CUcontext ctx;
    CHECK_OK(cudrv_device_info(cu, th_device(), &dev, why, sizeof why));
    CHECK(cu->DeviceGet(&device, th_device()) == CUDA_SUCCESS);
    CHECK(cu->DevicePrimaryCtxRetain(&ctx, device) == CUDA_SUCCESS);
    snprintf(path, sizeof path, "%s/stress.db", th_tmpdir());
    snprintf(log_reduce, sizeof log_reduce, "%s.reduce.log", path);
    snprintf(log_gemm, sizeof log_gemm, "%s.matmul.log", path);
    long long seed_session = 0;
    s = st_seed_gpu_db(path, &dev, &seed_session, why, sizeof why);
    db_result *seeded = NULL;
    int n_seeded = s == AT_OK ? st_all_results(path, &seeded, why, sizeof why) : -1;
    if (n_seeded <= 0) {
        cu->DevicePrimaryCtxRelease(device);
        CHECK_MSG(n_seeded > 0, "seeding: %s", why);
    }

    unsigned long long seed = st_seed();
    atomic_int stop = 0, abort_all = 0;
    double t0 = st_now();
    pid_t reduce = st_tuner(path, "sum,dot", ST_TUNED_REDUCE_TEXT, log_reduce);
    pid_t gemm = st_tuner(path, "matmul", ST_TUNED_GEMM, log_gemm);
    st_gpu_worker w[ST_THREADS];
    pthread_t threads[ST_THREADS];
    memset(w, 0, sizeof w);
    int started = 0;
    for (int t = 0; t < ST_THREADS && reduce > 0 && gemm > 0; t++) {
        w[t].index = t;
        w[t].path = path;
        w[t].cu = cu;
        w[t].ctx = ctx;
        w[t].rng = seed + 7919ull * (unsigned long long)t;
        w[t].stop = &stop;
        w[t].abort_all = &abort_all;
        if (pthread_create(&threads[t], NULL, st_gpu_thread, &w[t]) != 0)
            break;
        started++;
    }
    int rc_reduce = reduce > 0 ? st_wait(reduce, ST_GPU_DEADLINE_S) : -1;
    int rc_gemm = gemm > 0 ? st_wait(gemm, ST_GPU_DEADLINE_S - (st_now() - t0)) : -1;
    double tuners_s = st_now() - t0;
    atomic_store(&stop, 1);
    st_gpu_report(w, threads, started, seed, st_now() - t0);
    printf("    tuners done after %.1f s\n", tuners_s);
    cu->DevicePrimaryCtxRelease(device);
    CHECK_EQ(started, ST_THREADS);
    long long stored = 0;
    static const char *const reduce_fams[] = {"sum", "dot"}, *const gemm_fams[] = {"matmul"};
    const tpl_problem reduce_p = TPL_PROBLEM(1, {ST_TUNED_REDUCE});
    const tpl_problem gemm_p = TPL_PROBLEM(3, {ST_TUNED_GEMM_M, ST_TUNED_GEMM_N, ST_TUNED_GEMM_K});
    st_check_tuner(path, log_reduce, rc_reduce, reduce_fams, 2, &reduce_p, ST_TUNED_REDUCE_TEXT,
                   &stored);
    st_check_tuner(path, log_gemm, rc_gemm, gemm_fams, 1, &gemm_p, ST_TUNED_GEMM, &stored);
    if (!th_failed())
        st_verify_db(path, seeded, n_seeded, seed_session, stored);
    free(seeded);
}
