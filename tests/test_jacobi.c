/* test_jacobi.c: tests of the Jacobi family: its space and legality (CPU tier;
 * NVRTC compiles: test_compile_sample.c); solves checked against float64 CPU
 * references (GPU tier). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "autotune.h"
#include "cudrv.h"
#include "exec.h"
#include "harness.h"
#include "measure.h"
#include "tpl.h"

extern const tpl_family tpl_jacobi;

/* Parameter positions as the descriptor lists them (checked below). */
enum { J_RT, J_RPB, J_VEC, J_UNROLL, J_XCACHE, J_CHECK, J_ORDER, J_TYPE, J_N };

static void jt_cfg(int *cfg, int rt, int rpb, int vec, int unroll, int xcache, int check)
{
    cfg[J_RT] = rt;
    cfg[J_RPB] = rpb;
    cfg[J_VEC] = vec;
    cfg[J_UNROLL] = unroll;
    cfg[J_XCACHE] = xcache;
    cfg[J_CHECK] = check;
    cfg[J_ORDER] = 1;
    cfg[J_TYPE] = 0;
}

/* ---------------- CPU tier ---------------- */

TEST(jacobi_descriptor_layout)
{
    const tpl_family *f = tpl_find("jacobi");
    CHECK(f == &tpl_jacobi);
    CHECK_EQ(f->n_params, J_N);
    static const char *names[] = {"ROW_THREADS", "ROWS_PER_BLOCK", "VEC", "UNROLL", "XCACHE",
                                  "CHECK_EVERY", "ORDER", "TYPE"};
    for (int i = 0; i < J_N; i++)
        CHECK_EQ(tpl_param_index(f, names[i]), i);
    CHECK_EQ(f->n_dims, 1);
    CHECK(f->metric_is_flops == 0 && !f->hidden);
    CHECK_EQ(f->n_tuning_problems, 5);            /* 4 FP32 sizes, then 8192 in FP64 */
    static const long long sizes[] = {1024, 4096, 8192, 16384, 8192};
    for (int i = 0; i < 5; i++)
        CHECK(f->tuning_problems[i].dims[0] == sizes[i] &&
              f->tuning_problems[i].dtype == (i < 4 ? AT_R_32F : AT_R_64F));
}

/* The valid space, counted from the rules (block of 64..1024 threads,
 * XCACHE=1 needs >= 256) rather than from valid(): pairs of powers of two
 * 2^a x 2^b with a, b in 0..8 and a + b in 6..10 (39), of which a + b >= 8
 * (24) for XCACHE=1; times 9 (VEC, UNROLL), 2 CHECK_EVERY and 2 ORDER values. */
TEST(jacobi_space_size_and_valid_count)
{
    const tpl_family *f = &tpl_jacobi;
    long long size = tpl_space_size(f);
    CHECK_EQ(size, 9LL * 9 * 3 * 3 * 2 * 2 * 2 * 2);
    long long valid = 0;
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    for (long long i = 0; i < size; i++) {
        tpl_config_from_index(f, i, cfg);
        if (f->valid(cfg, NULL, why, sizeof why))
            valid += cfg[J_TYPE] == 0;      /* FP32; the double lattice: test_dreduce.c */
        else
            CHECK_MSG(why[0], "rejected without a reason");
    }
    CHECK_EQ(valid, (39LL * 9 + 24LL * 9) * 2 * 2);
}

TEST(jacobi_valid_rejects_illegal)
{
    const tpl_family *f = &tpl_jacobi;
    int cfg[J_N];
    char why[256];
    jt_cfg(cfg, 32, 4, 4, 2, 0, 10);
    CHECK(f->valid(cfg, NULL, why, sizeof why));
    jt_cfg(cfg, 32, 1, 4, 2, 0, 10);            /* one warp per block */
    CHECK(!f->valid(cfg, NULL, why, sizeof why) && strstr(why, "threads"));
    jt_cfg(cfg, 256, 8, 4, 2, 0, 10);           /* 2048 threads */
    CHECK(!f->valid(cfg, NULL, why, sizeof why));
    jt_cfg(cfg, 3, 32, 4, 2, 0, 10);            /* not a power of two */
    CHECK(!f->valid(cfg, NULL, why, sizeof why) && strstr(why, "ROW_THREADS"));
    jt_cfg(cfg, 32, 4, 3, 2, 0, 10);
    CHECK(!f->valid(cfg, NULL, why, sizeof why) && strstr(why, "VEC"));
    jt_cfg(cfg, 32, 4, 4, 2, 1, 10);            /* XCACHE with 128 threads */
    CHECK(!f->valid(cfg, NULL, why, sizeof why) && strstr(why, "XCACHE"));
    jt_cfg(cfg, 32, 8, 4, 2, 1, 10);
    CHECK(f->valid(cfg, NULL, why, sizeof why));
    jt_cfg(cfg, 32, 4, 4, 2, 0, 0);
    CHECK(!f->valid(cfg, NULL, why, sizeof why) && strstr(why, "CHECK_EVERY"));
    /* a device with 512 threads per block */
    at_device_info small;
    memset(&small, 0, sizeof small);
    small.max_threads_per_block = 512;
    small.regs_per_block = 65536;
    jt_cfg(cfg, 32, 32, 4, 2, 0, 10);
    CHECK(f->valid(cfg, NULL, why, sizeof why));
    CHECK(!f->valid(cfg, &small, why, sizeof why));
}

TEST(jacobi_applicable_and_baselines)
{
    const tpl_family *f = &tpl_jacobi;
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(f, f->default_config, cfg, err, sizeof err));
    CHECK_EQ(cfg[J_XCACHE], 0);       /* the default must work at any n on any device */
    static const long long ns[] = {1, 2, 33, 1001, 1024, 16384, 100000};
    for (int i = 0; i < 7; i++) {
        tpl_problem p = TPL_PROBLEM(1, {ns[i]});
        CHECK_MSG(f->applicable(cfg, &p), "default not applicable at n = %lld", ns[i]);
    }
    tpl_problem big = TPL_PROBLEM(1, {60000}), ok = TPL_PROBLEM(1, {16384});
    jt_cfg(cfg, 32, 8, 4, 2, 1, 10);
    CHECK(!f->applicable(cfg, &big));
    CHECK(f->applicable(cfg, &ok));
    CHECK_EQ(f->n_baselines, 3);           /* the seeds, then f64_default (test_dreduce.c) */
    CHECK_STR(f->baselines[0].name, "seed_basic");
    CHECK_STR(f->baselines[1].name, "seed_improved");
    CHECK_OK(tpl_config_parse(f, f->baselines[0].config, cfg, err, sizeof err));
    CHECK(cfg[J_RT] == 1 && cfg[J_CHECK] == 1 && cfg[J_VEC] == 1);
    CHECK_OK(tpl_config_parse(f, f->baselines[1].config, cfg, err, sizeof err));
    CHECK(cfg[J_RT] == 1 && cfg[J_CHECK] == 10);
    CHECK(f->deterministic(cfg));
    double flops = 0, bytes = 0;
    f->work(&ok, &flops, &bytes);
    CHECK(bytes > 4.0 * 16384 * 16384 && fabs(bytes / flops - 2.0) < 1e-12);
}

/* ---------------- GPU tier ---------------- */

/* The float64 CPU Jacobi the device must agree with: same stopping rule
 * (max |x_new - x| <= tol * max |x_new|); returns sweeps, -1 if not
 * converged in max_iter. */
static int cpu_jacobi(int n, const float *A, const float *b, double *x, double tol, int max_iter)
{
    double *xn = malloc((size_t)n * sizeof *xn);
    int sweeps = -1;
    for (int k = 1; xn && k <= max_iter; k++) {
        double d = 0, m = 0;
        for (int i = 0; i < n; i++) {
            double s = b[i];
            for (int j = 0; j < n; j++)
                if (j != i)
                    s -= (double)A[(size_t)i * n + j] * x[j];
            xn[i] = s / A[(size_t)i * n + i];
            d = fmax(d, fabs(xn[i] - x[i]));
            m = fmax(m, fabs(xn[i]));
        }
        memcpy(x, xn, (size_t)n * sizeof *x);
        if (d <= tol * m) {
            sweeps = k;
            break;
        }
    }
    free(xn);
    return sweeps;
}

static double cpu_residual(int n, const float *A, const float *b, const float *x)
{
    double rn = 0, bn = 0;
    for (int i = 0; i < n; i++) {
        double r = -(double)b[i];
        for (int j = 0; j < n; j++)
            r += (double)A[(size_t)i * n + j] * x[j];
        rn += r * r;
        bn += (double)b[i] * b[i];
    }
    return sqrt(rn / (bn > 0 ? bn : 1));
}

static unsigned jt_seed = 12345u;
static float jt_rand(float lo, float hi)
{
    jt_seed = jt_seed * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(jt_seed >> 8) / 16777216.0f;
}

/* n x n: off-diagonal uniform in [lo, hi), diagonal diag. */
static float *jt_matrix(int n, float lo, float hi, float diag)
{
    float *A = malloc((size_t)n * n * sizeof *A);
    for (size_t i = 0; A && i < (size_t)n * n; i++)
        A[i] = jt_rand(lo, hi);
    for (int i = 0; A && i < n; i++)
        A[(size_t)i * n + i] = diag;
    return A;
}

/* A device session for running configurations directly through run(). */
typedef struct jt_gpu {
    ms_gpu *g;
    const cudrv *cu;
    const at_device_info *dev;
    CUmodule module;
    int cfg[J_N];
    at_exec ex;
    char msg[1024];
} jt_gpu;

static int jt_open(jt_gpu *t)
{
    char err[512];
    memset(t, 0, sizeof *t);
    if (ms_open(&t->g, th_device(), err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "ms_open: %s", err);
        return 0;
    }
    t->cu = ms_driver(t->g);
    t->dev = ms_device(t->g);
    return 1;
}

/* Compiles and loads cfg; the exec runs on the legacy stream. */
static int jt_load(jt_gpu *t, const int *cfg)
{
    if (t->module) {
        ex_release(&t->ex);
        t->cu->ModuleUnload(t->module);
        t->module = NULL;
    }
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    memcpy(t->cfg, cfg, sizeof t->cfg);
    at_status s = tpl_compile(&tpl_jacobi, cfg, t->dev->arch, &cubin, &size, &log);
    if (s != AT_OK) {
        th_fail(__FILE__, __LINE__, "compile: %s", log ? log : "");
        free(log);
        return 0;
    }
    free(log);
    CUresult rc = t->cu->ModuleLoadData(&t->module, cubin);
    free(cubin);
    if (rc != CUDA_SUCCESS) {
        th_fail(__FILE__, __LINE__, "cuModuleLoadData failed: %d", (int)rc);
        return 0;
    }
    ex_init(&t->ex, t->cu, t->dev, t->module, 0, t->msg, sizeof t->msg);
    return 1;
}

static void jt_close(jt_gpu *t)
{
    if (t->module) {
        ex_release(&t->ex);
        t->cu->ModuleUnload(t->module);
    }
    ms_close(t->g);
}

static CUdeviceptr jt_upload(jt_gpu *t, const float *h, size_t count)
{
    CUdeviceptr p = 0;
    if (t->cu->MemAlloc(&p, count * 4 + 64) != CUDA_SUCCESS)
        return 0;
    if (h && t->cu->MemcpyHtoD(p, h, count * 4) != CUDA_SUCCESS)
        return 0;
    return p;
}


/* Runs the loaded configuration on (A, b, x) and waits for it. */
static at_status jt_solve(jt_gpu *t, int n, CUdeviceptr A, CUdeviceptr b, CUdeviceptr x,
                          float tol, int max_iter, int *iters, float *resid)
{
    tpl_args args = tpl_jacobi_args(n, A, b, x, tol, max_iter);
    args.out.iterations = -7;
    t->msg[0] = '\0';
    at_status s = tpl_jacobi.run(&t->ex, t->cfg, &args);
    at_status w = ex_sync(&t->ex);
    *iters = args.out.iterations;
    *resid = (float)args.out.residual;
    return s != AT_OK ? s : w;
}

/* One configuration per (ROW_THREADS, VEC, XCACHE), with ROWS_PER_BLOCK,
 * UNROLL and CHECK_EVERY cycling, through the tuner's path (ms_verify:
 * x reset to 0, solve, float64 residual against the tolerance) at ragged n. */
GPU_TEST(jacobi_every_shape_solves_ragged_sizes)
{
    jt_gpu t;
    if (!jt_open(&t))
        return;
    static const int rts[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
    static const int vecs[] = {1, 2, 4};
    static const int unrolls[] = {1, 2, 4};
    static const int checks[] = {1, 10, 25};
    enum { NCFG = 9 * 3 * 2 };
    int cfgs[NCFG][J_N];
    void *cubins[NCFG];
    size_t sizes[NCFG];
    int count = 0;
    for (int r = 0; r < 9; r++)
        for (int v = 0; v < 3; v++)
            for (int xc = 0; xc < 2; xc++) {
                int rt = rts[r], min_threads = xc ? 256 : 64;
                int rpb = rt >= min_threads ? 1 : min_threads / rt;
                if ((r + v) % 2 && rt * rpb * 2 <= 1024)
                    rpb *= 2;
                jt_cfg(cfgs[count], rt, rpb, vecs[v], unrolls[(r + v + xc) % 3], xc,
                       checks[(r + 2 * v + xc) % 3]);
                char why[256];
                CHECK_MSG(tpl_jacobi.valid(cfgs[count], t.dev, why, sizeof why), "%s", why);
                char *log = NULL;
                at_status s = tpl_compile(&tpl_jacobi, cfgs[count], t.dev->arch, &cubins[count],
                                          &sizes[count], &log);
                CHECK_MSG(s == AT_OK, "compile: %s", log ? log : "");
                free(log);
                count++;
            }
    static const long long ns[] = {1001, 33, 1};
    char err[2048], text[TPL_CONFIG_LEN];
    for (int p = 0; p < 3; p++) {
        tpl_problem prob = TPL_PROBLEM(1, {ns[p]});
        CHECK_MSG(ms_prepare(t.g, &tpl_jacobi, &prob, 99 + p, err, sizeof err) == AT_OK, "%s", err);
        for (int c = 0; c < count; c++) {
            double error = -1;
            tpl_config_format(&tpl_jacobi, cfgs[c], text, sizeof text);
            at_status s = ms_verify(t.g, &tpl_jacobi, cfgs[c], cubins[c], sizes[c], &error, err,
                                    sizeof err);
            CHECK_MSG(s == AT_OK, "n=%lld %s: %s: %s", ns[p], text, at_status_string(s), err);
            CHECK_MSG(error >= 0 && error < 1e-5, "n=%lld %s: residual %g", ns[p], text, error);
        }
    }
    for (int c = 0; c < count; c++)
        free(cubins[c]);
    jt_close(&t);
}

/* Against a float64 CPU Jacobi with the same stopping rule: same sweep count
 * (+-1: float rounding near the threshold), small residual, and every
 * CHECK_EVERY gives the identical count (the device stops exactly); the row
 * order (ORDER 0 / 1) gives the bit-identical x (each row depends only on
 * the previous iterate). A is stored one float past an aligned address
 * (rows misaligned, n odd). */
GPU_TEST(jacobi_matches_cpu_float64)
{
    jt_gpu t;
    if (!jt_open(&t))
        return;
    const int n = 257;
    for (int kind = 0; kind < 2; kind++) {
        /* kind 0: positive entries (slow, ~20 sweeps); 1: mean-zero, margin 1.2 */
        float *A = kind == 0 ? jt_matrix(n, 0.0f, 1.0f, (float)n) : jt_matrix(n, -1.0f, 1.0f, 0);
        float *b = malloc(n * sizeof *b), *xg = malloc(n * sizeof *xg);
        double *xc = calloc(n, sizeof *xc);
        CHECK(A && b && xg && xc);
        if (kind == 1)
            for (int i = 0; i < n; i++) {
                double off = 0;
                for (int j = 0; j < n; j++)
                    off += j != i ? fabs(A[(size_t)i * n + j]) : 0;
                A[(size_t)i * n + i] = (float)(1.2 * off) * (i % 2 ? -1.0f : 1.0f);
            }
        for (int i = 0; i < n; i++)
            b[i] = jt_rand(-1, 1);
        int cpu_sweeps = cpu_jacobi(n, A, b, xc, 1e-6, 1000);
        CHECK(cpu_sweeps > 2);
        CUdeviceptr dA = jt_upload(&t, NULL, (size_t)n * n + 1), db = jt_upload(&t, b, n);
        CUdeviceptr dx = jt_upload(&t, NULL, n);
        CHECK(dA && db && dx);
        CHECK(t.cu->MemcpyHtoD(dA + 4, A, (size_t)n * n * 4) == CUDA_SUCCESS);
        static const int cfgs[][J_N] = {
            {32, 4, 4, 2, 0, 1, 1}, {32, 4, 4, 2, 0, 10, 1}, {32, 4, 4, 2, 0, 25, 1},
            {32, 4, 4, 2, 0, 25, 0}, {1, 256, 1, 1, 0, 1, 0}, {1, 128, 4, 2, 1, 10, 1},
            {256, 1, 4, 4, 1, 25, 1}, {4, 32, 2, 4, 0, 7, 0}, {128, 2, 1, 1, 0, 3, 1},
            {1, 128, 4, 2, 1, 10, 0},
        };
        float *x_order1 = malloc(n * sizeof *x_order1);
        CHECK(x_order1 != NULL);
        int first = -1;
        for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
            if (!jt_load(&t, cfgs[c]))
                break;
            CHECK(t.cu->MemsetD32Async(dx, 0, n, 0) == CUDA_SUCCESS);
            int iters = 0;
            float resid = -1;
            at_status s = jt_solve(&t, n, dA + 4, db, dx, 1e-6f, 1000, &iters, &resid);
            CHECK_MSG(s == AT_OK, "kind %d cfg %zu: %s: %s", kind, c, at_status_string(s), t.msg);
            CHECK(t.cu->MemcpyDtoH(xg, dx, n * 4) == CUDA_SUCCESS);
            CHECK_MSG(abs(iters - cpu_sweeps) <= 1, "kind %d cfg %zu: %d sweeps, CPU %d", kind, c,
                      iters, cpu_sweeps);
            CHECK_MSG(resid >= 0 && resid <= 1e-6f, "reported relative update %g", resid);
            double r = cpu_residual(n, A, b, xg);
            CHECK_MSG(r < 1e-5, "kind %d cfg %zu: residual %g", kind, c, r);
            double e = 0, m = 0;
            for (int i = 0; i < n; i++) {
                e = fmax(e, fabs(xg[i] - xc[i]));
                m = fmax(m, fabs(xc[i]));
            }
            CHECK_MSG(e <= 1e-5 * m, "kind %d cfg %zu: |x - x_cpu| %g of %g", kind, c, e, m);
            if (c < 4) {   /* same kernel, CHECK_EVERY 1 / 10 / 25, then ORDER 0 */
                if (first < 0)
                    first = iters;
                CHECK_MSG(iters == first, "CHECK_EVERY or ORDER changed the sweep count: %d vs %d",
                          iters, first);
            }
            /* ORDER 1 then 0 of one kernel: bit-identical x (configs 2/3 and 5/9) */
            if (c == 2 || c == 5)
                memcpy(x_order1, xg, n * sizeof *xg);
            if (c == 3 || c == 9)
                CHECK_MSG(memcmp(x_order1, xg, n * sizeof *xg) == 0,
                          "kind %d cfg %zu: ORDER changed x", kind, c);
        }
        t.cu->MemFree(dA);
        t.cu->MemFree(db);
        t.cu->MemFree(dx);
        free(A); free(b); free(xg); free(xc); free(x_order1);
        if (th_failed())
            break;
    }
    jt_close(&t);
}

static double jt_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Inputs that cannot be solved come back with a status, promptly. */
GPU_TEST(jacobi_bad_inputs_fail_cleanly)
{
    jt_gpu t;
    if (!jt_open(&t))
        return;
    const int n = 301;
    static const int cfgs[][J_N] = {
        {32, 4, 4, 2, 0, 10}, {1, 256, 1, 1, 0, 1}, {64, 4, 4, 1, 1, 25},
    };
    float *A = jt_matrix(n, 0.0f, 1.0f, (float)n), *b = malloc(n * sizeof *b);
    float *x0 = malloc(n * sizeof *x0), *xg = malloc(n * sizeof *xg);
    CHECK(A && b && x0 && xg);
    for (int i = 0; i < n; i++) {
        b[i] = jt_rand(-1, 1);
        x0[i] = 0.25f;
    }
    CUdeviceptr dA = jt_upload(&t, A, (size_t)n * n), db = jt_upload(&t, b, n);
    CUdeviceptr dx = jt_upload(&t, NULL, n);
    CHECK(dA && db && dx);
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
        if (!jt_load(&t, cfgs[c]))
            break;
        int iters;
        float resid;
        at_status s;
        /* zero on the diagonal: at once, x untouched */
        float zero = 0.0f, keep = A[17 * n + 17];
        CHECK(t.cu->MemcpyHtoD(dA + (size_t)(17 * n + 17) * 4, &zero, 4) == CUDA_SUCCESS);
        CHECK(t.cu->MemcpyHtoD(dx, x0, n * 4) == CUDA_SUCCESS);
        s = jt_solve(&t, n, dA, db, dx, 1e-6f, 10000, &iters, &resid);
        CHECK_MSG(s == AT_ERR_DIVERGED, "zero diagonal: %s", at_status_string(s));
        CHECK(strstr(t.msg, "diagonal") != NULL);
        CHECK_EQ(iters, 0);
        CHECK(t.cu->MemcpyDtoH(xg, dx, n * 4) == CUDA_SUCCESS);
        CHECK(memcmp(xg, x0, n * 4) == 0);
        CHECK(t.cu->MemcpyHtoD(dA + (size_t)(17 * n + 17) * 4, &keep, 4) == CUDA_SUCCESS);
        /* NaN in b */
        float nan = NAN, bk = b[5];
        CHECK(t.cu->MemcpyHtoD(db + 5 * 4, &nan, 4) == CUDA_SUCCESS);
        s = jt_solve(&t, n, dA, db, dx, 1e-6f, 10000, &iters, &resid);
        CHECK_MSG(s == AT_ERR_DIVERGED && strstr(t.msg, " b"), "NaN in b: %s: %s",
                  at_status_string(s), t.msg);
        CHECK(t.cu->MemcpyHtoD(db + 5 * 4, &bk, 4) == CUDA_SUCCESS);
        /* Inf off the diagonal: the first sweep turns x non-finite */
        float inf = INFINITY, ak = A[3 * n + 200];
        CHECK(t.cu->MemcpyHtoD(dA + (size_t)(3 * n + 200) * 4, &inf, 4) == CUDA_SUCCESS);
        s = jt_solve(&t, n, dA, db, dx, 1e-6f, 10000, &iters, &resid);
        CHECK_MSG(s == AT_ERR_DIVERGED && iters == 1, "Inf in A: %s after %d",
                  at_status_string(s), iters);
        CHECK(t.cu->MemcpyHtoD(dA + (size_t)(3 * n + 200) * 4, &ak, 4) == CUDA_SUCCESS);
        /* max_iter too small: NOT_CONVERGED after exactly max_iter, last iterate kept */
        CHECK(t.cu->MemsetD32Async(dx, 0, n, 0) == CUDA_SUCCESS);
        s = jt_solve(&t, n, dA, db, dx, 1e-6f, 3, &iters, &resid);
        CHECK_MSG(s == AT_ERR_NOT_CONVERGED, "max_iter 3: %s", at_status_string(s));
        CHECK_EQ(iters, 3);
        CHECK(resid > 1e-6f && isfinite(resid));
        double *xc = calloc(n, sizeof *xc);
        CHECK(xc);
        cpu_jacobi(n, A, b, xc, 0.0, 3);
        CHECK(t.cu->MemcpyDtoH(xg, dx, n * 4) == CUDA_SUCCESS);
        for (int i = 0; i < n; i++)
            CHECK_MSG(fabs(xg[i] - xc[i]) <= 1e-5 * (fabs(xc[i]) + 1e-3), "x[%d] %g vs third "
                      "iterate %g", i, xg[i], xc[i]);
        free(xc);
        /* not diagonally dominant (diagonal n/20): grows to Inf, or runs out */
        float *Bad = jt_matrix(n, 0.0f, 1.0f, n / 20.0f);
        CUdeviceptr dBad = jt_upload(&t, Bad, (size_t)n * n);
        CHECK(Bad && dBad);
        CHECK(t.cu->MemsetD32Async(dx, 0, n, 0) == CUDA_SUCCESS);
        double t0 = jt_seconds();
        s = jt_solve(&t, n, dBad, db, dx, 1e-6f, 10000, &iters, &resid);
        double secs = jt_seconds() - t0;
        CHECK_MSG(s == AT_ERR_DIVERGED || s == AT_ERR_NOT_CONVERGED, "non-dominant: %s",
                  at_status_string(s));
        CHECK(iters >= 1 && iters <= 10000);
        CHECK_MSG(secs < 10, "non-dominant took %.1f s", secs);
        /* and with few iterations allowed: NOT_CONVERGED, not a wrong OK */
        CHECK(t.cu->MemsetD32Async(dx, 0, n, 0) == CUDA_SUCCESS);
        s = jt_solve(&t, n, dBad, db, dx, 1e-6f, 4, &iters, &resid);
        CHECK_MSG(s == AT_ERR_NOT_CONVERGED, "non-dominant, 4 sweeps: %s", at_status_string(s));
        t.cu->MemFree(dBad);
        free(Bad);
        if (th_failed())
            break;
    }
    t.cu->MemFree(dA);
    t.cu->MemFree(db);
    t.cu->MemFree(dx);
    free(A); free(b); free(x0); free(xg);
    jt_close(&t);
}

/* The public entry point (built-in default or whatever the database holds),
 * checked in float64 on the CPU, including an unaligned A and a tiny n. */
GPU_TEST(jacobi_public_api_solves)
{
    jt_gpu t;
    if (!jt_open(&t))
        return;
    at_handle *h = NULL;
    char path[4300];
    snprintf(path, sizeof path, "%s/jacobi.db", th_tmpdir());
    CHECK_OK(at_create(&h, th_device(), path));
    static const int ns[] = {1000, 33, 2};
    for (int p = 0; p < 3; p++) {
        int n = ns[p];
        float *A = jt_matrix(n, 0.0f, 1.0f, (float)n), *b = malloc(n * sizeof *b);
        float *x = calloc(n, sizeof *x);
        double *xc = calloc(n, sizeof *xc);
        CHECK(A && b && x && xc);
        for (int i = 0; i < n; i++)
            b[i] = jt_rand(-1, 1);
        int cpu_sweeps = cpu_jacobi(n, A, b, xc, 1e-6, 1000);
        CUdeviceptr dA = jt_upload(&t, NULL, (size_t)n * n + 1), db = jt_upload(&t, b, n);
        CUdeviceptr dx = jt_upload(&t, x, n);
        CHECK(dA && db && dx);
        CHECK(t.cu->MemcpyHtoD(dA + 4, A, (size_t)n * n * 4) == CUDA_SUCCESS);
        int iters = 0;
        float resid = -1;
        at_status s = at_sjacobi(h, n, (const float *)(dA + 4), (const float *)db, (float *)dx,
                                 1e-6f, 1000, &iters, &resid);
        CHECK_MSG(s == AT_OK, "n=%d: %s: %s", n, at_status_string(s), at_errmsg(h));
        CHECK(t.cu->CtxSynchronize() == CUDA_SUCCESS);
        CHECK(t.cu->MemcpyDtoH(x, dx, n * 4) == CUDA_SUCCESS);
        CHECK_MSG(abs(iters - cpu_sweeps) <= 1, "n=%d: %d sweeps, CPU %d", n, iters, cpu_sweeps);
        CHECK(resid >= 0 && resid <= 1e-6f);
        double r = cpu_residual(n, A, b, x);
        CHECK_MSG(r < 1e-5, "n=%d: residual %g", n, r);
        /* a second call from the converged x stops after one sweep */
        s = at_sjacobi(h, n, (const float *)(dA + 4), (const float *)db, (float *)dx, 1e-5f, 1000,
                       &iters, &resid);
        CHECK_MSG(s == AT_OK && iters <= 2, "restart from the solution: %s, %d sweeps",
                  at_status_string(s), iters);
        t.cu->MemFree(dA);
        t.cu->MemFree(db);
        t.cu->MemFree(dx);
        free(A); free(b); free(x); free(xc);
        if (th_failed())
            break;
    }
    at_destroy(h);
    jt_close(&t);
}
