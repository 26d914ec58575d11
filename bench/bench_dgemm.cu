/* bench_dgemm.cu: the tuned double-precision GEMM (at_dgemm; the dgemm family directly for
 * strided batches) against cublasDgemm / cublasDgemmStridedBatched in the same process.
 * BENCH_DGEMM_SWEEP="cfg;cfg;..." instead times those dgemm configurations (the prototype
 * sweeps of docs/notes/dgemm.md) at BENCH_DGEMM_SWEEP_SHAPES ("4096x4096x4096 ...").
 * BENCH_DGEMM_TCMP="cfg;cfg;..." times those configurations at BENCH_DGEMM_SWEEP_SHAPES both
 * the tuner's way (templates/measure.c, the tuner's options) and this file's way, short and
 * sustained, with the SM clock and power sampled through NVML (notes_dgemm section 9).
 * BENCH_DGEMM_BATCHED_ONLY=1: the paired rounds of the batched shapes only. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <time.h>
#include <pthread.h>
#include <dlfcn.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_error.cuh"
#include "bench_timer.h"
#include "bench_nvml.h"
#include "autotune.h"
extern "C" {                    /* the library's internal headers are C */
#include "cudrv.h"
#include "db.h"
#include "exec.h"
#include "lookup.h"
#include "measure.h"
#include "tpl.h"
}
#include "bench_kernels.h"

#define BN_CUDA(call) do { cudaError_t bn_e = (call); if (bn_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bn_e)); \
    exit(1); } } while (0)

/* ---- device helpers: fill, the double-double reference, the error ---- */

__global__ void bn_fill(double *p, size_t n, unsigned long long seed, double value, int use)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        x ^= x >> 30;
        x *= 0xBF58476D1CE4E5B9ull;
        x ^= x >> 27;
        x *= 0x94D049BB133111EBull;
        x ^= x >> 31;
        p[i] = use ? value : -1.0 + 2.0 * (double)(x >> 11) * (1.0 / 9007199254740992.0);
    }
}

/* R = A B for `batch` packed row-major products in double-double (TwoProd + TwoSum), rounded
 * once: within about 2^-53 relative per element of the exact product. */
__global__ void bn_reference(const double *A, const double *B, double *R, int m, int n, int k)
{
    __shared__ double sa[16][17], sb[16][17];
    size_t b = blockIdx.z;
    A += b * (size_t)m * k;
    B += b * (size_t)k * n;
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    double hi = 0, lo = 0;
    for (int p0 = 0; p0 < k; p0 += 16) {
        int pa = p0 + threadIdx.x, pb = p0 + threadIdx.y;
        sa[threadIdx.y][threadIdx.x] = row < m && pa < k ? A[(size_t)row * k + pa] : 0;
        sb[threadIdx.y][threadIdx.x] = pb < k && col < n ? B[(size_t)pb * n + col] : 0;
        __syncthreads();
        for (int q = 0; q < 16; q++) {
            double x = sa[threadIdx.y][q], y = sb[q][threadIdx.x];
            double p = __dmul_rn(x, y), pe = __fma_rn(x, y, -p);
            double s = __dadd_rn(hi, p), bb = __dadd_rn(s, -hi);
            double e = __dadd_rn(__dadd_rn(hi, -__dadd_rn(s, -bb)), __dadd_rn(p, -bb));
            hi = s;
            lo = __dadd_rn(lo, __dadd_rn(e, pe));
        }
        __syncthreads();
    }
    if (row < m && col < n)
        R[(b * m + row) * (size_t)n + col] = __dadd_rn(hi, lo);
}

/* sums[0] += (C - R)^2, sums[1] += R^2; sums[2] counts non-finite C. */
__global__ void bn_error(const double *C, const double *R, size_t n, double *sums)
{
    bench_error_sums([=](size_t i) { return C[i]; }, R, n, sums);
}

/* ---- the contenders ---- */

typedef struct bn_call {
    int m, n, k, batch;
    double *A, *B, *C;
    at_handle *h;
    cublasHandle_t cublas;
    at_exec *ex;                    /* the family directly (batches, sweeps), else at_dgemm */
    const int *cfg;
} bn_call;

static int bn_ours(const bn_call *c)
{
    at_status s;
    if (c->ex) {
        tpl_args a;
        memset(&a, 0, sizeof a);
        a.problem.n_dims = 3;
        a.problem.dims[0] = c->m;
        a.problem.dims[1] = c->n;
        a.problem.dims[2] = c->k;
        a.problem.dtype = AT_R_64F;
        a.problem.batch = c->batch;
        a.operand[TPL_GEMM_A] = (tpl_operand){(CUdeviceptr)c->A, c->k, (long long)c->m * c->k};
        a.operand[TPL_GEMM_B] = (tpl_operand){(CUdeviceptr)c->B, c->n, (long long)c->k * c->n};
        a.operand[TPL_GEMM_C] = (tpl_operand){(CUdeviceptr)c->C, c->n, (long long)c->m * c->n};
        a.scalar[TPL_GEMM_ALPHA] = 1.0;
        a.scalar[TPL_GEMM_BETA] = 0.0;
        s = tpl_find("dgemm")->run(c->ex, c->cfg, &a);
        if (s != AT_OK)
            fprintf(stderr, "dgemm run: %s: %s\n", at_status_string(s), c->ex->errmsg);
    } else {
        s = at_dgemm(c->h, c->m, c->n, c->k, 1.0, c->A, c->k, c->B, c->n, 0.0, c->C, c->n);
        if (s != AT_OK)
            fprintf(stderr, "at_dgemm: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    }
    return s != AT_OK;
}

static int bn_vendor(const bn_call *c)
{
    const double one = 1.0, zero = 0.0;
    cublasStatus_t s;
    /* row-major C = A B  <=>  column-major C^T = B^T A^T */
    if (c->batch > 1)
        s = cublasDgemmStridedBatched(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, c->n, c->m, c->k, &one,
                                      c->B, c->n, (long long)c->k * c->n, c->A, c->k,
                                      (long long)c->m * c->k, &zero, c->C, c->n,
                                      (long long)c->m * c->n, c->batch);
    else
        s = cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, c->n, c->m, c->k, &one, c->B, c->n,
                        c->A, c->k, &zero, c->C, c->n);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasDgemm failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

/* One bench_time_ms call of op on c (bench_timer.h: warm-up, >= 20 runs, until ~400 ms
 * of runs or 200; median ms, or -1 if a call failed). */
typedef struct bn_timed {
    int (*op)(const bn_call *);
    const bn_call *c;
} bn_timed;

static int bn_timed_call(void *p)
{
    const bn_timed *t = (const bn_timed *)p;
    return t->op(t->c);
}

/* BENCH_DGEMM_TRACE=1: each timing's wall-clock start and end (epoch seconds) on stderr, to
 * match against a clock and power log (bench/dgemm/run6.sh samples nvidia-smi). */
static double bn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double bn_time(int (*op)(const bn_call *), const bn_call *c)
{
    bn_timed t = {op, c};
    static int trace = -1;
    if (trace < 0)
        trace = getenv("BENCH_DGEMM_TRACE") != NULL;
    double t0 = trace ? bn_now() : 0;
    double ms = bench_time_ms(bn_timed_call, &t, 20, 400.0);
    if (trace)
        fprintf(stderr, "trace %s %dx%dx%d:b%d %.3f %.3f %.4f ms\n",
                op == bn_vendor ? "cublas" : "ours", c->m, c->n, c->k, c->batch, t0, bn_now(), ms);
    return ms;
}

/* Poisons C with NaN, runs op once, returns ||C - R|| / ||R|| (inf if any element is not
 * finite, -1 if the call failed). */
static double bn_check(int (*op)(const bn_call *), const bn_call *c, const double *R,
                       double *sums)
{
    size_t count = (size_t)c->m * c->n * c->batch;
    bn_fill<<<1024, 256>>>(c->C, count, 0, NAN, 1);
    BN_CUDA(cudaDeviceSynchronize());
    if (op(c))
        return -1;
    BN_CUDA(cudaMemset(sums, 0, 3 * sizeof(double)));
    bn_error<<<1024, 256>>>(c->C, R, count, sums);
    double host[3];
    BN_CUDA(cudaMemcpy(host, sums, sizeof host, cudaMemcpyDeviceToHost));
    if (host[2] > 0)
        return INFINITY;
    return sqrt(host[0] / (host[1] > 0 ? host[1] : 1));
}

/* ---- the family directly: a configuration compiled with NVRTC and loaded ---- */

typedef struct bn_shape { int m, n, k, batch; } bn_shape;

/* base's handles and mode at shape s on the operands A, B, C. */
static bn_call bn_call_at(bn_call base, const bn_shape *s, double *A, double *B, double *C)
{
    base.m = s->m;
    base.n = s->n;
    base.k = s->k;
    base.batch = s->batch;
    base.A = A;
    base.B = B;
    base.C = C;
    return base;
}

/* The dgemm problem of shape s. */
static tpl_problem bn_problem(const bn_shape *s)
{
    tpl_problem p = TPL_PROBLEM(3, {s->m, s->n, s->k});
    p.dtype = AT_R_64F;
    p.batch = s->batch;
    return p;
}

/* Fills A, B for the shape (fresh data) and the reference R. */
static void bn_inputs(const bn_shape *s, double *A, double *B, double *R, unsigned long long seed)
{
    size_t na = (size_t)s->m * s->k * s->batch, nb = (size_t)s->k * s->n * s->batch;
    bn_fill<<<1024, 256>>>(A, na, seed, 0, 0);
    bn_fill<<<1024, 256>>>(B, nb, seed ^ 0xabcdefull, 0, 0);
    dim3 grid((unsigned)((s->n + 15) / 16), (unsigned)((s->m + 15) / 16), (unsigned)s->batch);
    bn_reference<<<grid, dim3(16, 16)>>>(A, B, R, s->m, s->n, s->k);
    BN_CUDA(cudaDeviceSynchronize());
}

static double bn_tol(int k)
{
    return tpl_dgemm_tolerance_rule(k);
}

/* The sweep: every configuration of `list` at every shape of `shapes`, one timing round each
 * between two cuBLAS rounds; with BENCH_DGEMM_SWEEP_ROUNDS=R (1..16) instead R alternating
 * rounds of each configuration and cuBLAS (ours first in even rounds): the median of ours and
 * the median of the rounds' paired ratios (cuBLAS time / ours). */
static int bn_sweep(const cudrv *cu, const at_device_info *dev, const char *list,
                    const char *shapes, bn_call base, double *A, double *B, double *C, double *R,
                    double *sums)
{
    bn_kernel *k = (bn_kernel *)calloc(256, sizeof *k);
    int n = bn_parse_list(tpl_find("dgemm"), dev, list, k, 256, 1);
    if (!bn_build(cu, dev, tpl_find("dgemm"), k, n))
        return 1;
    const char *rs = getenv("BENCH_DGEMM_SWEEP_ROUNDS");
    int rounds = rs ? atoi(rs) : 0;
    rounds = rounds < 0 ? 0 : rounds > 16 ? 16 : rounds;
    char *sh = strdup(shapes);
    for (char *tok = strtok(sh, " "); tok; tok = strtok(NULL, " ")) {
        bn_shape s = {0, 0, 0, 1};
        if (sscanf(tok, "%dx%dx%d:b%d", &s.m, &s.n, &s.k, &s.batch) < 3)
            continue;
        bn_inputs(&s, A, B, R, 77);
        bn_call c = bn_call_at(base, &s, A, B, C);
        double flop = 2.0 * s.m * s.n * (double)s.k * s.batch;
        double ev = bn_check(bn_vendor, &c, R, sums), tv0 = bn_time(bn_vendor, &c);
        printf("\nsweep %s: cuBLAS %.4f ms %.2f TF/s error %.2e (tolerance %.2e)\n", tok, tv0,
               flop / tv0 / 1e9, ev, bn_tol(s.k));
        for (int i = 0; i < n; i++) {
            c.ex = &k[i].ex;
            c.cfg = k[i].cfg;
            tpl_problem p = bn_problem(&s);
            if (!tpl_find("dgemm")->applicable(c.cfg, &p))
                continue;
            double e = bn_check(bn_ours, &c, R, sums);
            if (rounds > 0 && e >= 0) {
                double ro[16], rv[16], rp[16];
                int nr = 0;
                for (int r = 0; r < rounds; r++) {
                    if (r % 2 == 0) {
                        ro[r] = bn_time(bn_ours, &c);
                        rv[r] = bn_time(bn_vendor, &c);
                    } else {
                        rv[r] = bn_time(bn_vendor, &c);
                        ro[r] = bn_time(bn_ours, &c);
                    }
                    if (ro[r] <= 0 || rv[r] <= 0)
                        break;
                    rp[r] = rv[r] / ro[r];
                    nr++;
                }
                double mo = nr ? bench_median(ro, nr) : -1, mv = nr ? bench_median(rv, nr) : -1;
                double lo = 1e9, hi = 0;
                for (int r = 0; r < nr; r++) {
                    lo = rp[r] < lo ? rp[r] : lo;
                    hi = rp[r] > hi ? rp[r] : hi;
                }
                printf("  %9.4f ms %7.2f TF/s (cuBLAS %7.2f) paired %6.3fx [%5.3f-%5.3f] x%d  "
                       "error %.2e%s  %s\n", mo, mo > 0 ? flop / mo / 1e9 : 0,
                       mv > 0 ? flop / mv / 1e9 : 0, nr ? bench_median(rp, nr) : 0, nr ? lo : 0,
                       hi, nr, e, e <= bn_tol(s.k) ? "" : " ** FAILED **", k[i].text);
                fflush(stdout);
                continue;
            }
            double t = e >= 0 ? bn_time(bn_ours, &c) : -1;
            printf("  %9.4f ms %7.2f TF/s %6.3fx  error %.2e%s  %s\n", t, t > 0 ? flop / t / 1e9 : 0,
                   t > 0 ? tv0 / t : 0, e, e >= 0 && e <= bn_tol(s.k) ? "" : " ** FAILED **",
                   k[i].text);
            fflush(stdout);
        }
        c.ex = NULL;
        double tv1 = bn_time(bn_vendor, &c);
        printf("  cuBLAS again %.4f ms %.2f TF/s\n", tv1, flop / tv1 / 1e9);
    }
    free(sh);
    bn_release(cu, k, n);
    return 0;
}

/* ---- the tuner's timing beside this file's (BENCH_DGEMM_TCMP) ---- */

/* The tuner's measurement of k on g's prepared inputs: ms_verify, then ms_time with the options
 * tuner/pipeline.c gives a searched candidate (1 warm-up, 3..40 runs, 50 ms), or with `longrun`
 * the defaults at a 400 ms budget. Median ms, -1 on failure (said on stderr). */
static double bn_tuner_time(ms_gpu *g, const bn_kernel *k, int longrun)
{
    const tpl_family *f = tpl_find("dgemm");
    char msg[1024];
    double e;
    ms_timing t;
    ms_options o;
    ms_default_options(&o);
    if (longrun) {
        o.budget_ms = 400.0;
    } else {
        o.warmup = 1;
        o.min_runs = 3;
        o.max_runs = 40;
        o.budget_ms = 50.0;
    }
    if (ms_verify(g, f, k->cfg, k->cubin, k->size, &e, msg, sizeof msg) != AT_OK ||
        ms_time(g, f, k->cfg, k->cubin, k->size, &o, &t, msg, sizeof msg) != AT_OK) {
        fprintf(stderr, "tuner timing of %s: %s\n", k->text, msg);
        return -1;
    }
    return t.median_ms;
}

/* Two passes over the configurations (and cuBLAS) at each shape; per row four timings, each
 * with the mean SM clock and power while it ran: T the tuner's (after 300 ms idle), b this
 * file's with the tuner's length (3 runs, 50 ms; after 300 ms idle), B this file's sustained
 * one (20 runs, 400 ms; right after b), TL the tuner's method sustained (400 ms; right after B). */
static int bn_tcmp(const cudrv *cu, const at_device_info *dev, const char *list,
                   const char *shapes, bn_call base, double *A, double *B, double *C, double *R,
                   double *sums)
{
    bn_kernel *k = (bn_kernel *)calloc(64, sizeof *k);
    int n = bn_parse_list(tpl_find("dgemm"), dev, list, k, 64, 0);
    char err[256];
    if (!bn_build(cu, dev, tpl_find("dgemm"), k, n))
        return 1;
    bn_nvml nv;
    int have_nv = bn_nv_open(&nv);
    ms_gpu *g = NULL;
    if (ms_open(&g, 0, err, sizeof err) != AT_OK) {
        fprintf(stderr, "ms_open: %s\n", err);
        return 1;
    }
    printf("tuner vs bench timing (NVML %s): TF/s @ mean SM MHz / W; T tuner (ms_time, 1 warm-up, "
           "3..40 runs, 50 ms, after 300 ms idle), b bench_time_ms (3 runs, 50 ms, after 300 ms "
           "idle), B bench_time_ms (20 runs, 400 ms, hot), TL ms_time (400 ms, hot)\n",
           have_nv ? "on" : "off");
    char *sh = strdup(shapes);
    for (char *tok = strtok(sh, " "); tok; tok = strtok(NULL, " ")) {
        bn_shape s = {0, 0, 0, 1};
        if (sscanf(tok, "%dx%dx%d:b%d", &s.m, &s.n, &s.k, &s.batch) < 3)
            continue;
        tpl_problem p = bn_problem(&s);
        if (ms_prepare(g, tpl_find("dgemm"), &p, 1, err, sizeof err) != AT_OK) {
            fprintf(stderr, "ms_prepare %s: %s\n", tok, err);
            continue;
        }
        bn_inputs(&s, A, B, R, 77);
        bn_call c = bn_call_at(base, &s, A, B, C);
        double flop = 2.0 * s.m * s.n * (double)s.k * s.batch;
        printf("\ntcmp %s\n", tok);
        for (int pass = 0; pass < 2; pass++)
            for (int i = -1; i < n; i++) {
                double ms[4], mhz[4], w[4];
                c.ex = i < 0 ? NULL : &k[i].ex;
                c.cfg = i < 0 ? NULL : k[i].cfg;
                int (*op)(const bn_call *) = i < 0 ? bn_vendor : bn_ours;
                if (i >= 0 && !tpl_find("dgemm")->applicable(c.cfg, &p))
                    continue;
                double e = bn_check(op, &c, R, sums);
                usleep(300000);
                bn_nv_begin(&nv);
                ms[0] = i < 0 ? -1 : bn_tuner_time(g, &k[i], 0);
                bn_nv_end(&nv, &mhz[0], &w[0]);
                usleep(300000);
                bn_timed t = {op, &c};
                bn_nv_begin(&nv);
                ms[1] = bench_time_ms(bn_timed_call, &t, 3, 50.0);
                bn_nv_end(&nv, &mhz[1], &w[1]);
                bn_nv_begin(&nv);
                ms[2] = bench_time_ms(bn_timed_call, &t, 20, 400.0);
                bn_nv_end(&nv, &mhz[2], &w[2]);
                bn_nv_begin(&nv);
                ms[3] = i < 0 ? -1 : bn_tuner_time(g, &k[i], 1);
                bn_nv_end(&nv, &mhz[3], &w[3]);
                printf("  pass %d err %.2e", pass, e);
                static const char *lab[4] = {"T", "b", "B", "TL"};
                for (int q = 0; q < 4; q++)
                    printf("  %s %6.2f @%4.0f/%3.0f", lab[q], ms[q] > 0 ? flop / ms[q] / 1e9 : 0,
                           mhz[q], w[q]);
                printf("  %s\n", i < 0 ? "cuBLAS" : k[i].text);
                fflush(stdout);
            }
    }
    free(sh);
    ms_close(g);
    bn_release(cu, k, n);
    return 0;
}

#define BN_ROUNDS 5

static const bn_shape bn_shapes[] = {
    {4096, 4096, 4096, 1}, {8192, 8192, 8192, 1}, {4097, 4097, 4097, 1},
    {512, 512, 512, 128}, {256, 256, 256, 512},
};
#define BN_NSHAPES ((int)(sizeof bn_shapes / sizeof bn_shapes[0]))

int main(int argc, char **argv)
{
    const char *db_path = argc > 1 ? argv[1] : NULL;
    BN_CUDA(cudaSetDevice(0));
    BN_CUDA(cudaFree(0));       /* primary context, shared with libautotune */
    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db_path);
    if (s != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(s));
        return 1;
    }
    const cudrv *cu = cudrv_get(&s, NULL, 0);
    at_device_info dev;
    char msg[256];
    if (!cu || cudrv_device_info(cu, 0, &dev, msg, sizeof msg) != AT_OK) {
        fprintf(stderr, "driver: %s\n", msg);
        return 1;
    }
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        return 1;
    }
    int drv = 0, rt = 0, cubv = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cublasGetVersion(cublas, &cubv);
    printf("dgemm vs cublasDgemm on %s (driver %d, runtime %d, cuBLAS %d); row-major C = A B, "
           "alpha 1, beta 0; random doubles in [-1,1) with 53 random bits; error = "
           "||C - R||_F / ||R||_F against a double-double product rounded once; tolerance "
           "(16 + 8 sqrt(k)) 2^-53\n", dev.name, drv, rt, cubv);
    size_t max_a = 0, max_b = 0, max_c = 0;
    for (int i = 0; i < BN_NSHAPES; i++) {
        const bn_shape *x = &bn_shapes[i];
        size_t a = (size_t)x->m * x->k * x->batch, b = (size_t)x->k * x->n * x->batch,
               c = (size_t)x->m * x->n * x->batch;
        max_a = a > max_a ? a : max_a;
        max_b = b > max_b ? b : max_b;
        max_c = c > max_c ? c : max_c;
    }
    double *A, *B, *C, *R, *sums;
    BN_CUDA(cudaMalloc(&A, max_a * 8));
    BN_CUDA(cudaMalloc(&B, max_b * 8));
    BN_CUDA(cudaMalloc(&C, max_c * 8));
    BN_CUDA(cudaMalloc(&R, max_c * 8));
    BN_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
    bn_call base;
    memset(&base, 0, sizeof base);
    base.h = h;
    base.cublas = cublas;
    const char *tcmp = getenv("BENCH_DGEMM_TCMP");
    if (tcmp && *tcmp) {
        const char *shapes = getenv("BENCH_DGEMM_SWEEP_SHAPES");
        int rc = bn_tcmp(cu, &dev, tcmp, shapes ? shapes : "256x256x256:b512", base, A, B, C, R,
                         sums);
        at_destroy(h);
        return rc;
    }
    const char *sweep = getenv("BENCH_DGEMM_SWEEP");
    if (sweep && *sweep) {
        const char *shapes = getenv("BENCH_DGEMM_SWEEP_SHAPES");
        int rc = bn_sweep(cu, &dev, sweep, shapes ? shapes : "4096x4096x4096", base, A, B, C, R,
                          sums);
        at_destroy(h);
        return rc;
    }
    /* batched products run the family directly with the configuration the lookup chain picks
     * (the public API has no batched call yet) */
    db *d = NULL;
    lk_open_db(db_path, &d, msg, sizeof msg);
    printf("\n%d alternating rounds per shape: medians of each side, ratio = cuBLAS / ours of the "
           "medians, paired = median of the rounds' ratios\n", BN_ROUNDS);
    printf("%-20s %9s %7s %9s | %9s %7s %9s | %7s %7s  %s\n", "m x n x k (batch)", "ours ms",
           "TF/s", "error", "cuBLAS ms", "TF/s", "error", "ratio", "paired",
           "configuration (lookup level)");
    int failures = 0;
    static const char *levels[] = {"none", "exact", "nearest", "arch", "default"};
    const char *only_batched = getenv("BENCH_DGEMM_BATCHED_ONLY");
    for (int i = 0; i < BN_NSHAPES; i++) {
        bn_shape sh = bn_shapes[i];
        if (only_batched && *only_batched == '1' && sh.batch == 1)
            continue;
        bn_call c = bn_call_at(base, &sh, A, B, C);
        bn_inputs(&sh, A, B, R, 0x5eedull * (unsigned long long)(i + 1));
        bn_kernel *kb = NULL;
        char config[TPL_CONFIG_LEN] = "";
        int level = 0;
        if (sh.batch > 1) {
            tpl_problem p = bn_problem(&sh);
            kb = (bn_kernel *)calloc(1, sizeof *kb);
            level = (int)lk_choose(d, &dev, tpl_find("dgemm"), &p, 1, kb->cfg, config);
            snprintf(kb->text, sizeof kb->text, "%s", config);
            if (!bn_build(cu, &dev, tpl_find("dgemm"), kb, 1))
                return 1;
            c.ex = &kb->ex;
            c.cfg = kb->cfg;
        }
        double e_ours = bn_check(bn_ours, &c, R, sums);
        double e_vendor = bn_check(bn_vendor, &c, R, sums);
        /* BN_ROUNDS alternating rounds (ours first in even rounds); medians of each side and
         * the median of the rounds' paired ratios (cuBLAS time / ours) */
        double r_ours[BN_ROUNDS], r_vendor[BN_ROUNDS], r_pair[BN_ROUNDS];
        int rounds = 0;
        for (int round = 0; round < BN_ROUNDS && e_ours >= 0 && e_vendor >= 0; round++) {
            if (round % 2 == 0) {
                r_ours[round] = bn_time(bn_ours, &c);
                r_vendor[round] = bn_time(bn_vendor, &c);
            } else {
                r_vendor[round] = bn_time(bn_vendor, &c);
                r_ours[round] = bn_time(bn_ours, &c);
            }
            if (r_ours[round] <= 0 || r_vendor[round] <= 0)
                break;
            r_pair[round] = r_vendor[round] / r_ours[round];
            rounds++;
        }
        double pair = rounds ? bench_median(r_pair, rounds) : 0;
        double ms_o = rounds ? bench_median(r_ours, rounds) : -1;
        double ms_v = rounds ? bench_median(r_vendor, rounds) : -1;
        if (!kb) {
            at_stats st;
            at_get_stats(h, &st);
            snprintf(config, sizeof config, "%s", st.last_config);
            level = st.last_level;
        }
        double flop = 2.0 * sh.m * sh.n * (double)sh.k * sh.batch;
        int ok = e_ours >= 0 && e_ours <= bn_tol(sh.k);
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d (%d)", sh.m, sh.n, sh.k, sh.batch);
        printf("%-20s %9.4f %7.2f %9.2e | %9.4f %7.2f %9.2e | %6.3fx %6.3fx  %s (%s)%s\n", shape,
               ms_o, ms_o > 0 ? flop / ms_o / 1e9 : 0, e_ours, ms_v,
               ms_v > 0 ? flop / ms_v / 1e9 : 0, e_vendor, ms_o > 0 && ms_v > 0 ? ms_v / ms_o : 0,
               pair, config,
               levels[level >= 0 && level <= 4 ? level : 0], ok ? "" : "  ** FAILED CHECK **");
        fflush(stdout);
        failures += !ok;
        if (kb) {
            bn_release(cu, kb, 1);
        }
    }
    if (d)
        db_close(d);
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(R);
    cudaFree(sums);
    cublasDestroy(cublas);
    at_destroy(h);
    return failures ? 1 : 0;
}
