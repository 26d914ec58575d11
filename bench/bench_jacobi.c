/* bench_jacobi.c: tuned at_sjacobi vs a cuBLAS-SGEMV Jacobi, the seed's methods
 * and a pthreads CPU Jacobi; `--sweep` verifies and times the valid space. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "autotune.h"
#include "db.h"
#include "measure.h"
#include "tpl.h"

extern const tpl_family tpl_jacobi;
/* templates/jacobi.c: `sweeps` sweeps with no convergence test (timing). */
at_status tpl_jacobi_bench_sweeps(at_exec *ex, const int *cfg, const tpl_args *args,
                                  int sweeps);

static const int bn_sizes[] = {1024, 4096, 8192, 16384};
#define BN_NSIZES 4
#define BN_TOL 1e-6f
#define BN_MAX_ITER 10000
#define BN_RESIDUAL_LIMIT 1e-4     /* the family's tolerance on ||Ax - b|| / ||b|| */
#define BN_SEED 2024ULL

#define BN_CUDA(call) do { cudaError_t bn_e = (call); if (bn_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bn_e)); \
    exit(1); } } while (0)
#define BN_CUBLAS(call) do { cublasStatus_t bn_s = (call); if (bn_s != CUBLAS_STATUS_SUCCESS) { \
    fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)bn_s); \
    exit(1); } } while (0)

static double bn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* ---------------- one problem's state ---------------- */

typedef struct bn_prob {
    int n;
    tpl_workset ws;              /* A, b, x (solution), x0 = 0 from the family's prepare */
    float *A, *b, *x;            /* = ws buffers */
    float *r, *t, *dinv;         /* cuBLAS Jacobi: residual, update, 1 / diag */
    float *sum_out;
    at_handle *h;
    cublasHandle_t cublas;
    at_exec *ref;
    int iterations;              /* of the last solve */
    float update;                /* its final relative update */
} bn_prob;

typedef struct bn_kernel {     /* a configuration compiled and loaded for direct runs */
    int cfg[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN];
    CUmodule module;
    at_exec ex;
    char msg[1024];
} bn_kernel;

static int bn_kernel_load(bn_kernel *k, const cudrv *cu, const at_device_info *dev,
                          const char *config)
{
    char err[512];
    memset(k, 0, sizeof *k);
    if (tpl_config_parse(&tpl_jacobi, config, k->cfg, err, sizeof err) != AT_OK) {
        fprintf(stderr, "config %s: %s\n", config, err);
        return 0;
    }
    tpl_config_format(&tpl_jacobi, k->cfg, k->text, sizeof k->text);
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    if (tpl_compile(&tpl_jacobi, k->cfg, dev->arch, &cubin, &size, &log) != AT_OK ||
        cu->ModuleLoadData(&k->module, cubin) != CUDA_SUCCESS) {
        fprintf(stderr, "%s: compile/load failed: %s\n", config, log ? log : "");
        free(log);
        free(cubin);
        return 0;
    }
    free(log);
    free(cubin);
    ex_init(&k->ex, cu, dev, k->module, 0, k->msg, sizeof k->msg);
    return 1;
}

static void bn_kernel_free(bn_kernel *k, const cudrv *cu)
{
    if (k->module) {
        ex_release(&k->ex);
        cu->ModuleUnload(k->module);
    }
    k->module = NULL;
}

static tpl_args bn_args(bn_prob *p)
{
    return tpl_jacobi_args(p->n, (CUdeviceptr)p->A, (CUdeviceptr)p->b, (CUdeviceptr)p->x, BN_TOL,
                           BN_MAX_ITER);
}

/* ---------------- timed operations ---------------- */

typedef int (*bn_op)(bn_prob *p, void *ctx);

/* x <- 0 (untimed), then op between two events; median ms of >= `min_runs`
 * runs (until ~0.3 s or 50 runs) after one warm-up; -1 if op failed. */
static double bn_time(bn_op op, bn_prob *p, void *ctx, int reset_x, int min_runs)
{
    cudaEvent_t e0, e1;
    BN_CUDA(cudaEventCreate(&e0));
    BN_CUDA(cudaEventCreate(&e1));
    double times[64], total = 0;
    int n = 0;
    for (int i = -1; n < 50 && (n < min_runs || total < 300.0); i++) {
        if (reset_x)
            BN_CUDA(cudaMemsetAsync(p->x, 0, (size_t)p->n * 4, 0));
        BN_CUDA(cudaEventRecord(e0, 0));
        if (op(p, ctx))
            return -1;
        BN_CUDA(cudaEventRecord(e1, 0));
        BN_CUDA(cudaEventSynchronize(e1));
        float ms;
        BN_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 0) {
            times[n++] = ms;
            total += ms;
        }
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    double med, mn, mx;
    ms_summarize(times, n, &med, &mn, &mx);
    return med;
}

static int bn_op_tuned(bn_prob *p, void *ctx)
{
    (void)ctx;
    at_status s = at_sjacobi(p->h, p->n, p->A, p->b, p->x, BN_TOL, BN_MAX_ITER, &p->iterations,
                             &p->update);
    if (s != AT_OK)
        fprintf(stderr, "at_sjacobi n=%d: %s: %s\n", p->n, at_status_string(s), at_errmsg(p->h));
    return s != AT_OK;
}

/* A whole solve with a configuration's run(). */
static int bn_op_solve(bn_prob *p, void *ctx)
{
    bn_kernel *k = ctx;
    tpl_args a = bn_args(p);
    at_status s = tpl_jacobi.run(&k->ex, k->cfg, &a);
    p->iterations = a.out.iterations;
    p->update = (float)a.out.residual;
    if (s != AT_OK)
        fprintf(stderr, "%s n=%d: %s: %s\n", k->text, p->n, at_status_string(s), k->msg);
    return s != AT_OK;
}

#define BN_SWEEPS 20
/* BN_SWEEPS bare sweeps of a configuration. */
static int bn_op_sweeps(bn_prob *p, void *ctx)
{
    bn_kernel *k = ctx;
    tpl_args a = bn_args(p);
    at_status s = tpl_jacobi_bench_sweeps(&k->ex, k->cfg, &a, BN_SWEEPS);
    if (s != AT_OK)
        fprintf(stderr, "%s sweeps n=%d: %s: %s\n", k->text, p->n, at_status_string(s), k->msg);
    return s != AT_OK;
}

/* One cuBLAS Jacobi iteration: r = b - A x (SGEMV), t = D^-1 r (SDGMM),
 * x += t (SAXPY): x_new = x + D^-1 (b - A x), the same update. */
static int bn_cublas_iteration(bn_prob *p)
{
    const float minus1 = -1.0f, one = 1.0f;
    int n = p->n;
    if (cudaMemcpyAsync(p->r, p->b, (size_t)n * 4, cudaMemcpyDeviceToDevice, 0) != cudaSuccess)
        return 1;
    /* row-major A is column-major A^T: r = -1 * (A^T)^T x + 1 * r */
    if (cublasSgemv(p->cublas, CUBLAS_OP_T, n, n, &minus1, p->A, n, p->x, 1, &one, p->r, 1) !=
        CUBLAS_STATUS_SUCCESS)
        return 1;
    if (cublasSdgmm(p->cublas, CUBLAS_SIDE_LEFT, n, 1, p->r, n, p->dinv, 1, p->t, n) !=
        CUBLAS_STATUS_SUCCESS)
        return 1;
    return cublasSaxpy(p->cublas, n, &one, p->t, 1, p->x, 1) != CUBLAS_STATUS_SUCCESS;
}

static int bn_op_cublas_iters(bn_prob *p, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < BN_SWEEPS; i++)
        if (bn_cublas_iteration(p))
            return 1;
    return 0;
}

/* Full cuBLAS solve: 10 iterations between host checks of max |t| <= tol max |x|. */
static int bn_op_cublas_solve(bn_prob *p, void *ctx)
{
    (void)ctx;
    for (int k = 0; k < BN_MAX_ITER;) {
        for (int i = 0; i < 10 && k < BN_MAX_ITER; i++, k++)
            if (bn_cublas_iteration(p))
                return 1;
        int it = 0, ix = 0;
        float dt = 0, dx = 0;
        if (cublasIsamax(p->cublas, p->n, p->t, 1, &it) != CUBLAS_STATUS_SUCCESS ||
            cublasIsamax(p->cublas, p->n, p->x, 1, &ix) != CUBLAS_STATUS_SUCCESS ||
            cudaMemcpy(&dt, p->t + it - 1, 4, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(&dx, p->x + ix - 1, 4, cudaMemcpyDeviceToHost) != cudaSuccess)
            return 1;
        p->iterations = k;
        p->update = fabsf(dx) > 0 ? fabsf(dt) / fabsf(dx) : fabsf(dt);
        if (!isfinite(dt) || fabsf(dt) <= BN_TOL * fabsf(dx))
            return !isfinite(dt);
    }
    return 1;
}

static int bn_op_sum(bn_prob *p, void *ctx)
{
    (void)ctx;
    at_status s = at_ssum(p->h, (long long)p->n * p->n, p->A, p->sum_out);
    if (s != AT_OK)
        fprintf(stderr, "at_ssum n=%lld: %s: %s\n", (long long)p->n * p->n,
                at_status_string(s), at_errmsg(p->h));
    return s != AT_OK;
}

/* ---------------- CPU Jacobi (pthreads, every core) ---------------- */

typedef float bn_v4 __attribute__((vector_size(16)));

typedef struct bn_cpu {
    int n, threads, max_iter;
    const float *A, *b;
    float *x[2];
    float *dmax, *mmax;          /* per thread */
    int cur, iterations, stop;
    float update;
    pthread_barrier_t bar;
} bn_cpu;

typedef struct bn_cpu_arg {
    bn_cpu *c;
    int id;
} bn_cpu_arg;

/* sum_{j in [lo, hi)} a[j] x[j]: four 4-wide float accumulators. */
static double bn_dot(const float *a, const float *x, int lo, int hi)
{
    bn_v4 acc[4] = {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}};
    int j = lo;
    for (; j + 16 <= hi; j += 16) {
        for (int u = 0; u < 4; u++) {
            bn_v4 va, vx;
            memcpy(&va, a + j + 4 * u, 16);
            memcpy(&vx, x + j + 4 * u, 16);
            acc[u] += va * vx;
        }
    }
    double s = 0;
    for (; j < hi; j++)
        s += (double)a[j] * x[j];
    bn_v4 t = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    return s + (double)t[0] + t[1] + t[2] + t[3];
}

static void *bn_cpu_worker(void *arg)
{
    bn_cpu_arg *ca = arg;
    bn_cpu *c = ca->c;
    int n = c->n, lo = (int)((long long)n * ca->id / c->threads);
    int hi = (int)((long long)n * (ca->id + 1) / c->threads);
    for (;;) {
        const float *xo = c->x[c->cur];
        float *xn = c->x[1 - c->cur];
        float d = 0, m = 0;
        for (int i = lo; i < hi; i++) {
            const float *a = c->A + (size_t)i * n;
            double s = bn_dot(a, xo, 0, i) + bn_dot(a, xo, i + 1, n);
            float v = (float)((c->b[i] - s) / a[i]);
            xn[i] = v;
            d = fmaxf(d, fabsf(v - xo[i]));
            m = fmaxf(m, fabsf(v));
            if (v != v)
                d = m = INFINITY;
        }
        c->dmax[ca->id] = d;
        c->mmax[ca->id] = m;
        pthread_barrier_wait(&c->bar);
        if (ca->id == 0) {
            float dd = 0, mm = 0;
            for (int t = 0; t < c->threads; t++) {
                dd = fmaxf(dd, c->dmax[t]);
                mm = fmaxf(mm, c->mmax[t]);
            }
            c->cur = 1 - c->cur;
            c->iterations++;
            c->update = mm > 0 ? dd / mm : dd;
            c->stop = dd <= BN_TOL * mm || !isfinite(dd) || c->iterations >= c->max_iter;
        }
        pthread_barrier_wait(&c->bar);
        if (c->stop)
            return NULL;
    }
}

/* Solves from x = 0 on every core; returns seconds. */
static double bn_cpu_solve(bn_cpu *c)
{
    memset(c->x[0], 0, (size_t)c->n * 4);
    c->cur = 0;
    c->iterations = 0;
    c->stop = 0;
    pthread_barrier_init(&c->bar, NULL, (unsigned)c->threads);
    pthread_t th[256];
    bn_cpu_arg args[256];
    double t0 = bn_now();
    for (int t = 0; t < c->threads; t++) {
        args[t].c = c;
        args[t].id = t;
        pthread_create(&th[t], NULL, bn_cpu_worker, &args[t]);
    }
    for (int t = 0; t < c->threads; t++)
        pthread_join(th[t], NULL);
    double secs = bn_now() - t0;
    pthread_barrier_destroy(&c->bar);
    return secs;
}

/* ---------------- checks and records ---------------- */

static double bn_residual(bn_prob *p)
{
    double r = INFINITY;
    if (tpl_ref_residual(p->ref, p->n, (CUdeviceptr)p->A, (CUdeviceptr)p->b, (CUdeviceptr)p->x,
                         &r) != AT_OK)
        return INFINITY;
    return r;
}

static void bn_store(db *d, const at_device_info *dev, int n, const char *name, double ms,
                     double sweeps, double err, const char *note)
{
    if (!d || ms <= 0)
        return;
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", dev->uuid);
    snprintf(m.kernel, sizeof m.kernel, "jacobi");
    m.problem.n_dims = 1;
    m.problem.dims[0] = n;
    snprintf(m.name, sizeof m.name, "%s", name);
    m.time_ms = ms;
    /* bytes of A read per second, as the tuned rows: 4 n^2 per sweep */
    m.gbs = 4.0 * n * (double)n * sweeps / (ms * 1e6);
    m.gflops = 2.0 * n * (double)n * sweeps / (ms * 1e6);
    m.rel_error = err;
    snprintf(m.note, sizeof m.note, "%s", note);
    if (db_put_measurement(d, &m) != AT_OK)
        fprintf(stderr, "db_put_measurement: %s\n", db_errmsg(d));
}

/* ---------------- --sweep: the valid space at CHECK_EVERY=25 ---------------- */

typedef struct bn_item {
    int cfg[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN];
    void *cubin;
    size_t size;
    double sweep_ms, solve_ms;
} bn_item;

typedef struct bn_pool {
    bn_item *items;
    int n, next, failed;
    const char *arch;
    pthread_mutex_t lock;
} bn_pool;

static void *bn_compile_worker(void *arg)
{
    bn_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            return NULL;
        char *log = NULL;
        if (tpl_compile(&tpl_jacobi, p->items[i].cfg, p->arch, &p->items[i].cubin,
                        &p->items[i].size, &log) != AT_OK) {
            fprintf(stderr, "compile failed: %s\n%s\n", p->items[i].text, log ? log : "");
            pthread_mutex_lock(&p->lock);
            p->failed++;
            pthread_mutex_unlock(&p->lock);
        }
        free(log);
    }
}

static int bn_by_sweep(const void *a, const void *b)
{
    const bn_item *x = a, *y = b;
    double tx = x->sweep_ms > 0 ? x->sweep_ms : 1e30, ty = y->sweep_ms > 0 ? y->sweep_ms : 1e30;
    return tx < ty ? -1 : tx > ty;
}

/* Every valid configuration with CHECK_EVERY=25 (the rest only change the
 * host loop): compiled on all cores, verified by a full solve at each size
 * (tuner path: ms_verify), bare sweeps timed; then the fastest by sweep get
 * their whole solve timed with CHECK_EVERY 10 and 25. */
static int bn_sweep(ms_gpu *g, int argc, char **argv)
{
    const tpl_family *f = &tpl_jacobi;
    const at_device_info *dev = ms_device(g);
    const cudrv *cu = ms_driver(g);
    int top = argc > 3 ? atoi(argv[3]) : 12;
    int ci = tpl_param_index(f, "CHECK_EVERY");
    long long raw = tpl_space_size(f);
    bn_item *items = calloc((size_t)raw, sizeof *items);
    int n = 0;
    char why[256];
    for (long long i = 0; i < raw; i++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, cfg);
        if (cfg[ci] != 25 || cfg[tpl_param_index(f, "TYPE")] != 0 ||   /* FP32 only */
            !f->valid(cfg, dev, why, sizeof why))
            continue;
        memcpy(items[n].cfg, cfg, sizeof cfg);
        tpl_config_format(f, cfg, items[n].text, sizeof items[n].text);
        n++;
    }
    bn_pool pool = {items, n, 0, 0, dev->arch, PTHREAD_MUTEX_INITIALIZER};
    double t0 = bn_now();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nth = cores > 1 ? (int)(cores > 64 ? 64 : cores) : 1;
    pthread_t th[64];
    for (int i = 0; i < nth; i++)
        pthread_create(&th[i], NULL, bn_compile_worker, &pool);
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    printf("sweep: %d kernel variants compiled in %.1f s on %d threads (%.3f s CPU each), "
           "%d failed\n", n, bn_now() - t0, nth, (bn_now() - t0) * nth / (n ? n : 1),
           pool.failed);
    fflush(stdout);
    int failures = pool.failed;
    char *sizes = strdup(argv[2]);
    for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
        tpl_problem p = TPL_PROBLEM(1, {atoll(tok)});
        char err[2048];
        if (ms_prepare(g, f, &p, BN_SEED, err, sizeof err) != AT_OK) {
            printf("prepare %s: %s\n", tok, err);
            return 1;
        }
        /* the workset's buffers, for the bare-sweep timing */
        tpl_workset ws;
        memset(&ws, 0, sizeof ws);
        if (f->prepare(ms_reference(g), &p, BN_SEED, &ws) != AT_OK) {
            printf("prepare (sweeps) %s failed\n", tok);
            return 1;
        }
        int wrong = 0, tried = 0;
        double t1 = bn_now();
        for (int i = 0; i < n; i++) {
            items[i].sweep_ms = items[i].solve_ms = -1;
            if (!items[i].cubin || !f->applicable(items[i].cfg, &p))
                continue;
            tried++;
            double e = -1;
            at_status s = ms_verify(g, f, items[i].cfg, items[i].cubin, items[i].size, &e, err,
                                    sizeof err);
            if (s != AT_OK) {
                printf("  FAILED n=%s %s: %s %s (residual %g)\n", tok, items[i].text,
                       at_status_string(s), err, e);
                wrong++;
                continue;
            }
            CUmodule mod;
            if (cu->ModuleLoadData(&mod, items[i].cubin) != CUDA_SUCCESS)
                continue;
            char msg[512];
            at_exec ex;
            ex_init(&ex, cu, dev, mod, 0, msg, sizeof msg);
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0);
            cudaEventCreate(&e1);
            double best = 1e30;
            for (int rep = 0; rep < 4; rep++) {
                cudaEventRecord(e0, 0);
                if (tpl_jacobi_bench_sweeps(&ex, items[i].cfg, &ws.args, 10) != AT_OK)
                    break;
                cudaEventRecord(e1, 0);
                cudaEventSynchronize(e1);
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                if (rep > 0 && ms / 10 < best)
                    best = ms / 10;
            }
            cudaEventDestroy(e0);
            cudaEventDestroy(e1);
            ex_release(&ex);
            cu->ModuleUnload(mod);
            if (best < 1e30)
                items[i].sweep_ms = best;
        }
        tpl_workset_free(cu, &ws);
        failures += wrong;
        qsort(items, (size_t)n, sizeof *items, bn_by_sweep);
        /* whole solves of the fastest sweeps, CHECK_EVERY 10 and 25 */
        ms_options o;
        ms_default_options(&o);
        o.min_runs = 5;
        o.max_runs = 20;
        o.budget_ms = 50;
        double bytes = 4.0 * (double)p.dims[0] * (double)p.dims[0];
        printf("sweep n=%s: %d verified (%d wrong) in %.1f s; fastest sweeps "
               "(GB/s = 4n^2 / sweep):\n", tok, tried - wrong, wrong, bn_now() - t1);
        for (int i = 0; i < n && i < top; i++) {
            if (items[i].sweep_ms <= 0)
                continue;
            double solve[2] = {-1, -1};
            static const int checks[2] = {10, 25};
            for (int c = 0; c < 2; c++) {
                int cfg[TPL_MAX_PARAMS];
                memcpy(cfg, items[i].cfg, sizeof cfg);
                cfg[ci] = checks[c];
                void *cubin = NULL;
                size_t size = 0;
                char *log = NULL;
                ms_timing t;
                double e;
                if (tpl_compile(f, cfg, dev->arch, &cubin, &size, &log) == AT_OK &&
                    ms_verify(g, f, cfg, cubin, size, &e, err, sizeof err) == AT_OK &&
                    ms_time(g, f, cfg, cubin, size, &o, &t, err, sizeof err) == AT_OK)
                    solve[c] = t.median_ms;
                free(cubin);
                free(log);
            }
            printf("  %8.1f us %7.1f GB/s  solve %7.3f ms (check 10) %7.3f ms (check 25)  %s\n",
                   items[i].sweep_ms * 1e3, bytes / (items[i].sweep_ms * 1e6), solve[0],
                   solve[1], items[i].text);
        }
        /* per parameter value: the best sweep time reached */
        for (int pi = 0; pi < f->n_params; pi++) {
            if (pi == ci)
                continue;
            printf("  best by %s:", f->params[pi].name);
            for (int v = 0; v < f->params[pi].n_values; v++) {
                double b = -1;
                for (int i = 0; i < n; i++)
                    if (items[i].sweep_ms > 0 && items[i].cfg[pi] == f->params[pi].values[v] &&
                        (b < 0 || items[i].sweep_ms < b))
                        b = items[i].sweep_ms;
                if (b > 0)
                    printf(" %d:%.0f", f->params[pi].values[v], bytes / (b * 1e6));
            }
            printf(" GB/s\n");
        }
        fflush(stdout);
    }
    free(sizes);
    for (int i = 0; i < n; i++)
        free(items[i].cubin);
    free(items);
    printf("sweep: %d failures\n", failures);
    return failures ? 1 : 0;
}

/* ---------------- main ---------------- */

int main(int argc, char **argv)
{
    const tpl_family *f = &tpl_jacobi;
    int sweep = argc > 2 && strcmp(argv[1], "--sweep") == 0;
    char db_path[4096];
    if (!sweep && argc > 1)
        snprintf(db_path, sizeof db_path, "%s", argv[1]);
    else
        db_default_path(db_path, sizeof db_path);

    BN_CUDA(cudaSetDevice(0));
    BN_CUDA(cudaFree(0));       /* primary context, shared with libautotune */
    char err[2048];
    ms_gpu *g = NULL;
    if (ms_open(&g, 0, err, sizeof err) != AT_OK) {
        fprintf(stderr, "ms_open: %s\n", err);
        return 1;
    }
    if (sweep)
        return bn_sweep(g, argc, argv);
    const at_device_info *dev = ms_device(g);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    cublasHandle_t cublas;
    BN_CUBLAS(cublasCreate(&cublas));

    int drv = 0, rtv = 0, cubv = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rtv);
    cublasGetVersion(cublas, &cubv);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = cores > 0 ? (int)(cores > 256 ? 256 : cores) : 1;
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    printf("# jacobi benchmark %s\n# GPU %s (%s, %d SMs), driver %d.%d, CUDA runtime %d.%d, "
           "cuBLAS %d, NVRTC %s; CPU: %d threads (pthreads, all online cores)\n# database %s\n",
           date, dev->name, dev->arch, dev->sm_count, drv / 1000, (drv % 1000) / 10, rtv / 1000,
           (rtv % 1000) / 10, cubv, tpl_nvrtc_version(), nthreads, db_path);
    printf("# A: off-diagonal U[0,1), diagonal n; b U[-1,1); x0 = 0; tol %g (max |dx| <= tol "
           "max |x|). Times: median of CUDA-event-timed runs after warm-up.\n", BN_TOL);
    printf("# sweep = one Jacobi iteration alone (%d back to back / %d); GB/s = 4 n^2 bytes of "
           "A per sweep / time; solve = whole solve to tol from x0 = 0 (ms, sweeps).\n",
           BN_SWEEPS, BN_SWEEPS);

    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db_path);
    if (s != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(s));
        return 1;
    }
    db *d = NULL;
    if (db_open(&d, db_path, 1, err, sizeof err) != AT_OK) {
        fprintf(stderr, "db_open %s: %s (measurements not stored)\n", db_path, err);
        d = NULL;
    } else if (db_put_device(d, dev, tpl_nvrtc_version()) != AT_OK) {
        fprintf(stderr, "db_put_device: %s (measurements not stored)\n", db_errmsg(d));
        db_close(d);
        d = NULL;
    }
    const char *basic_text = NULL, *improved_text = NULL;
    for (int b = 0; b < f->n_baselines; b++) {
        if (strcmp(f->baselines[b].name, "seed_basic") == 0)
            basic_text = f->baselines[b].config;
        if (strcmp(f->baselines[b].name, "seed_improved") == 0)
            improved_text = f->baselines[b].config;
    }
    bn_kernel basic, improved, warp;
    if (!basic_text || !improved_text || !bn_kernel_load(&basic, cu, dev, basic_text) ||
        !bn_kernel_load(&improved, cu, dev, improved_text) ||
        !bn_kernel_load(&warp, cu, dev,
                        "ROW_THREADS=32,ROWS_PER_BLOCK=8,VEC=1,UNROLL=1,XCACHE=0,CHECK_EVERY=10,"
                        "ORDER=0"))
        return 1;

    static const char *const level[] = {"none", "exact", "nearest", "arch", "default"};
    int failures = 0;
    double summary[BN_NSIZES][8];
    char tuned_cfg[BN_NSIZES][TPL_CONFIG_LEN];
    int lookup[BN_NSIZES];
    memset(summary, 0, sizeof summary);
    for (int si = 0; si < BN_NSIZES; si++) {
        int n = bn_sizes[si];
        bn_prob p;
        memset(&p, 0, sizeof p);
        p.n = n;
        p.h = h;
        p.cublas = cublas;
        p.ref = ref;
        tpl_problem prob = TPL_PROBLEM(1, {n});
        if (f->prepare(ref, &prob, BN_SEED, &p.ws) != AT_OK) {
            fprintf(stderr, "prepare n=%d: %s\n", n, ref->errmsg);
            return 1;
        }
        p.A = (float *)p.ws.args.operand[TPL_JAC_A].ptr;
        p.b = (float *)p.ws.args.operand[TPL_JAC_B].ptr;
        p.x = (float *)p.ws.args.operand[TPL_JAC_X].ptr;
        BN_CUDA(cudaMalloc((void **)&p.r, (size_t)n * 4));
        BN_CUDA(cudaMalloc((void **)&p.t, (size_t)n * 4));
        BN_CUDA(cudaMalloc((void **)&p.dinv, (size_t)n * 4));
        BN_CUDA(cudaMalloc((void **)&p.sum_out, 4));
        float *hd = malloc((size_t)n * 4);
        BN_CUDA(cudaMemcpy2D(hd, 4, p.A, (size_t)(n + 1) * 4, 4, (size_t)n,
                             cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            hd[i] = 1.0f / hd[i];
        BN_CUDA(cudaMemcpy(p.dinv, hd, (size_t)n * 4, cudaMemcpyHostToDevice));
        free(hd);
        double bytes = 4.0 * n * (double)n;

        /* tuned: whole solve through the public API, then its kernel alone */
        double tuned_ms = bn_time(bn_op_tuned, &p, NULL, 1, 10);
        int tuned_iters = p.iterations;
        double tuned_res = bn_residual(&p);
        at_stats st;
        at_get_stats(h, &st);
        snprintf(tuned_cfg[si], sizeof tuned_cfg[si], "%s", st.last_config);
        lookup[si] = st.last_level;
        bn_kernel tk;
        double tuned_sweep = -1;
        if (bn_kernel_load(&tk, cu, dev, st.last_config)) {
            tuned_sweep = bn_time(bn_op_sweeps, &p, &tk, 0, 10) / BN_SWEEPS;
            bn_kernel_free(&tk, cu);
        }
        /* seed basic / improved, the warp-per-row reference: whole solves */
        double basic_ms = bn_time(bn_op_solve, &p, &basic, 1, 3);
        int basic_iters = p.iterations;
        double basic_res = bn_residual(&p);
        double improved_ms = bn_time(bn_op_solve, &p, &improved, 1, 3);
        int improved_iters = p.iterations;
        double improved_res = bn_residual(&p);
        double warp_ms = bn_time(bn_op_solve, &p, &warp, 1, 5);
        int warp_iters = p.iterations;
        double warp_res = bn_residual(&p);
        double seed_sweep = bn_time(bn_op_sweeps, &p, &basic, 0, 3) / BN_SWEEPS;
        double warp_sweep = bn_time(bn_op_sweeps, &p, &warp, 0, 5) / BN_SWEEPS;
        /* cuBLAS: iterations alone, and a whole solve (check every 10) */
        double cublas_iter = bn_time(bn_op_cublas_iters, &p, NULL, 1, 5) / BN_SWEEPS;
        double cublas_ms = bn_time(bn_op_cublas_solve, &p, NULL, 1, 5);
        int cublas_iters = p.iterations;
        double cublas_res = bn_residual(&p);
        /* the reduction family on the same bytes (A as a vector) */
        double sum_ms = bn_time(bn_op_sum, &p, NULL, 0, 10);
        if (sum_ms <= 0)
            sum_ms = NAN;         /* printed as nan: the reduction family failed */
        /* CPU */
        bn_cpu c;
        memset(&c, 0, sizeof c);
        c.n = n;
        c.threads = nthreads;
        c.max_iter = BN_MAX_ITER;
        float *hA = malloc((size_t)n * n * 4), *hb = malloc((size_t)n * 4);
        c.x[0] = malloc((size_t)n * 4);
        c.x[1] = malloc((size_t)n * 4);
        c.dmax = calloc((size_t)nthreads, 4);
        c.mmax = calloc((size_t)nthreads, 4);
        if (!hA || !hb || !c.x[0] || !c.x[1] || !c.dmax || !c.mmax) {
            fprintf(stderr, "out of host memory\n");
            return 1;
        }
        BN_CUDA(cudaMemcpy(hA, p.A, (size_t)n * n * 4, cudaMemcpyDeviceToHost));
        BN_CUDA(cudaMemcpy(hb, p.b, (size_t)n * 4, cudaMemcpyDeviceToHost));
        c.A = hA;
        c.b = hb;
        double cpu_times[3];
        for (int r = 0; r < 3; r++)
            cpu_times[r] = bn_cpu_solve(&c) * 1e3;
        double cpu_ms, lo, hi;
        ms_summarize(cpu_times, 3, &cpu_ms, &lo, &hi);
        int cpu_iters = c.iterations;
        BN_CUDA(cudaMemcpy(p.x, c.x[c.cur], (size_t)n * 4, cudaMemcpyHostToDevice));
        double cpu_res = bn_residual(&p);
        free(hA); free(hb); free(c.x[0]); free(c.x[1]); free(c.dmax); free(c.mmax);

        printf("\nn = %d  (A = %.0f MiB)\n", n, bytes / 1048576.0);
        printf("  %-34s %10s %9s %8s %10s\n", "method", "time", "GB/s", "sweeps", "residual");
        printf("  %-34s %8.1f us %9.1f\n", "tuned sweep", tuned_sweep * 1e3,
               bytes / (tuned_sweep * 1e6));
        printf("  %-34s %8.1f us %9.1f\n", "cuBLAS SGEMV iteration (+dgmm+axpy)",
               cublas_iter * 1e3, bytes / (cublas_iter * 1e6));
        printf("  %-34s %8.1f us %9.1f\n", "seed thread-per-row sweep", seed_sweep * 1e3,
               bytes / (seed_sweep * 1e6));
        printf("  %-34s %8.1f us %9.1f\n", "plain warp-per-row sweep", warp_sweep * 1e3,
               bytes / (warp_sweep * 1e6));
        printf("  %-34s %8.1f us %9.1f\n", "at_ssum over A (reduction family)", sum_ms * 1e3,
               bytes / (sum_ms * 1e6));
        printf("  %-34s %8.3f ms %9.1f %8d %10.2e\n", "solve: tuned at_sjacobi", tuned_ms,
               bytes * tuned_iters / (tuned_ms * 1e6), tuned_iters, tuned_res);
        printf("  %-34s %8.3f ms %9.1f %8d %10.2e\n", "solve: seed basic (check each)", basic_ms,
               bytes * basic_iters / (basic_ms * 1e6), basic_iters, basic_res);
        printf("  %-34s %8.3f ms %9.1f %8d %10.2e\n", "solve: seed improved (check/10)",
               improved_ms, bytes * improved_iters / (improved_ms * 1e6), improved_iters,
               improved_res);
        printf("  %-34s %8.3f ms %9.1f %8d %10.2e\n", "solve: warp-per-row (check/10)", warp_ms,
               bytes * warp_iters / (warp_ms * 1e6), warp_iters, warp_res);
        printf("  %-34s %8.3f ms %9.1f %8d %10.2e\n", "solve: cuBLAS SGEMV (check/10)",
               cublas_ms, bytes * cublas_iters / (cublas_ms * 1e6), cublas_iters, cublas_res);
        char cpu_label[64];
        snprintf(cpu_label, sizeof cpu_label, "solve: CPU pthreads x%d", nthreads);
        printf("  %-34s %8.3f ms %9.1f %8d %10.2e\n", cpu_label, cpu_ms,
               bytes * cpu_iters / (cpu_ms * 1e6), cpu_iters, cpu_res);
        printf("  tuned config (%s): %s\n", level[lookup[si] >= 0 && lookup[si] <= 4 ?
               lookup[si] : 0], tuned_cfg[si]);
        printf("  ratios: sweep GB/s vs at_ssum %.2f; sweep vs cuBLAS iteration %.2fx; "
               "solve vs seed basic %.1fx, vs seed improved %.1fx, vs CPU %.1fx\n",
               sum_ms / tuned_sweep, cublas_iter / tuned_sweep, basic_ms / tuned_ms,
               improved_ms / tuned_ms, cpu_ms / tuned_ms);
        fflush(stdout);

        struct { const char *what; double res; } checks[] = {
            {"tuned", tuned_res}, {"seed basic", basic_res}, {"seed improved", improved_res},
            {"warp-per-row", warp_res}, {"cuBLAS", cublas_res}, {"CPU", cpu_res},
        };
        for (size_t k = 0; k < sizeof checks / sizeof checks[0]; k++)
            if (!(checks[k].res <= BN_RESIDUAL_LIMIT)) {
                printf("  CHECK FAILED: %s residual %g above %g\n", checks[k].what,
                       checks[k].res, BN_RESIDUAL_LIMIT);
                failures++;
            }
        if (tuned_ms <= 0 || tuned_sweep <= 0 || basic_ms <= 0 || improved_ms <= 0 ||
            cublas_iter <= 0 || cublas_ms <= 0 || seed_sweep <= 0) {
            printf("  CHECK FAILED: a timed method failed\n");
            failures++;
        }
        bn_store(d, dev, n, "seed_basic_solve", basic_ms, basic_iters, basic_res,
                 "seed 5 basic (thread per row, host check every sweep), whole solve to 1e-6");
        bn_store(d, dev, n, "seed_improved_solve", improved_ms, improved_iters, improved_res,
                 "seed 5 improved (thread per row, check every 10), whole solve to 1e-6");
        bn_store(d, dev, n, "seed_thread_per_row_sweep", seed_sweep, 1, -1,
                 "one sweep of the seed's thread-per-row kernel");
        bn_store(d, dev, n, "cublas_sgemv_solve", cublas_ms, cublas_iters, cublas_res,
                 "cuBLAS SGEMV + SDGMM + SAXPY Jacobi, host check every 10, whole solve");
        bn_store(d, dev, n, "cublas_sgemv_iteration", cublas_iter, 1, -1,
                 "one cuBLAS SGEMV + SDGMM + SAXPY Jacobi iteration");
        char note[256];
        snprintf(note, sizeof note, "pthreads Jacobi on %d host threads, whole solve to 1e-6",
                 nthreads);
        bn_store(d, dev, n, "cpu_pthreads_solve", cpu_ms, cpu_iters, cpu_res, note);
        summary[si][0] = tuned_sweep;
        summary[si][1] = cublas_iter;
        summary[si][2] = sum_ms;
        summary[si][3] = tuned_ms;
        summary[si][4] = basic_ms;
        summary[si][5] = cpu_ms;
        summary[si][6] = seed_sweep;
        summary[si][7] = improved_ms;

        cudaFree(p.r);
        cudaFree(p.t);
        cudaFree(p.dinv);
        cudaFree(p.sum_out);
        tpl_workset_free(cu, &p.ws);
    }

    printf("\n%-6s %10s %8s %8s %9s %10s %10s %10s %10s %9s %9s %8s\n", "n", "sweep us", "GB/s",
           "vs sum", "vs cuBLAS", "seed sweep", "solve ms", "seed basic", "seed impr",
           "x basic", "CPU ms", "x CPU");
    for (int si = 0; si < BN_NSIZES; si++) {
        double *v = summary[si], bytes = 4.0 * bn_sizes[si] * (double)bn_sizes[si];
        printf("%-6d %10.1f %8.0f %8.2f %8.2fx %10.1f %10.3f %10.3f %10.3f %8.1fx %9.1f %7.1fx\n",
               bn_sizes[si], v[0] * 1e3, bytes / (v[0] * 1e6), v[2] / v[0], v[1] / v[0],
               v[6] * 1e3, v[3], v[4], v[7], v[4] / v[3], v[5], v[5] / v[3]);
    }
    bn_kernel_free(&basic, cu);
    bn_kernel_free(&improved, cu);
    bn_kernel_free(&warp, cu);
    db_close(d);
    at_destroy(h);
    cublasDestroy(cublas);
    ms_close(g);
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
