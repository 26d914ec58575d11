/* bench_dreduce.cu: double precision at_dsum vs CUB DeviceReduce::Sum<double>, at_ddot vs
 * cublasDdot (device pointer mode), and the double Jacobi sweep's read bandwidth against
 * at_dsum's in the same process; rounds alternate (ours, vendor, ours, vendor). */
#include <cub/cub.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_timer.h"

extern "C" {
#include "autotune.h"
#include "cudrv.h"
#include "exec.h"
#if __has_include("tpl.h")
#include "tpl.h"
#include "measure.h"
#else
#include "../templates/tpl.h"
#include "../templates/measure.h"
#endif
extern const tpl_family tpl_sum, tpl_dot, tpl_jacobi;
/* templates/jacobi.c: `sweeps` sweeps with no convergence test (timing). */
at_status tpl_jacobi_bench_sweeps(at_exec *ex, const int *cfg, const tpl_args *args,
                                  int sweeps);
}

#define BN_CUDA(call) do { cudaError_t bn_e = (call); if (bn_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bn_e)); \
    exit(1); } } while (0)

static const long long bn_sizes[] = {1LL << 20, 1LL << 24, 1LL << 27};
#define BN_NSIZES 3
#define BN_MAXN (1LL << 27)
#define BN_ROUNDS 4          /* alternating rounds per method */
#define BN_RUNS 25           /* event-timed runs per round (median) */
#define BN_JN 8192           /* Jacobi size */
#define BN_SWEEPS 10         /* sweeps per timed Jacobi run */

typedef bench_op bn_op;

/* Median ms of BN_RUNS event-timed calls of op after 3 warm-up calls
 * (bench_timer.h); -1 on failure. */
static double bn_time(bn_op op, void *ctx)
{
    return bench_time_ms(op, ctx, BN_RUNS, 0);
}

/* Medians over BN_ROUNDS rounds of a then b, alternated (the H200 throttles
 * in long runs: neither side gets all the cool or all the hot rounds). */
static void bn_alternate(bn_op a, void *actx, bn_op b, void *bctx, double *ams, double *bms)
{
    double ta[BN_ROUNDS], tb[BN_ROUNDS];
    for (int r = 0; r < BN_ROUNDS; r++) {
        ta[r] = bn_time(a, actx);
        tb[r] = bn_time(b, bctx);
    }
    *ams = bench_median(ta, BN_ROUNDS);
    *bms = bench_median(tb, BN_ROUNDS);
}

/* ---------------- operations ---------------- */

typedef struct bn_call {
    long long n;
    const double *x, *y;
    double *result;
    const float *xf;
    float *resultf;
    at_handle *h;
    cublasHandle_t cublas;
    void *cub_temp;
    size_t cub_bytes;
    /* jacobi sweeps */
    at_exec *ex;
    const int *cfg;
    tpl_args jargs;
} bn_call;

static int bn_dsum(void *p)
{
    bn_call *c = (bn_call *)p;
    at_status s = at_dsum(c->h, c->n, c->x, c->result);
    if (s != AT_OK)
        fprintf(stderr, "at_dsum: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_ddot(void *p)
{
    bn_call *c = (bn_call *)p;
    at_status s = at_ddot(c->h, c->n, c->x, c->y, c->result);
    if (s != AT_OK)
        fprintf(stderr, "at_ddot: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_cub(void *p)
{
    bn_call *c = (bn_call *)p;
    size_t bytes = c->cub_bytes;
    cudaError_t e = cub::DeviceReduce::Sum(c->cub_temp, bytes, c->x, c->result, (int)c->n);
    if (e != cudaSuccess)
        fprintf(stderr, "cub::DeviceReduce::Sum<double>: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}

static int bn_cublas(void *p)
{
    bn_call *c = (bn_call *)p;
    cublasStatus_t s = cublasDdot(c->cublas, (int)c->n, c->x, 1, c->y, 1, c->result);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasDdot failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

static int bn_ssum(void *p)
{
    bn_call *c = (bn_call *)p;
    at_status s = at_ssum(c->h, c->n, c->xf, c->resultf);
    if (s != AT_OK)
        fprintf(stderr, "at_ssum: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_cub_float(void *p)
{
    bn_call *c = (bn_call *)p;
    size_t bytes = c->cub_bytes;
    cudaError_t e = cub::DeviceReduce::Sum(c->cub_temp, bytes, c->xf, c->resultf, (int)c->n);
    return e != cudaSuccess;
}

static int bn_sweeps(void *p)
{
    bn_call *c = (bn_call *)p;
    at_status s = tpl_jacobi_bench_sweeps(c->ex, c->cfg, &c->jargs, BN_SWEEPS);
    if (s != AT_OK)
        fprintf(stderr, "sweeps: %s: %s\n", at_status_string(s), c->ex->errmsg);
    return s != AT_OK;
}

/* ---------------- data and references ---------------- */

static void bn_two_sum(double a, double b, double *s, double *e)
{
    double t = a + b, bv = t - a;
    *e = (a - (t - bv)) + (b - bv);
    *s = t;
}

/* Compensated sum (y NULL) or dot: TwoSum, TwoProduct by fma. */
static double bn_reference(const double *x, const double *y, long long n)
{
    double hi = 0.0, lo = 0.0;
    for (long long i = 0; i < n; i++) {
        double v = x[i], e = 0.0, t;
        if (y) {
            v = x[i] * y[i];
            e = fma(x[i], y[i], -v);
        }
        bn_two_sum(hi, v, &hi, &t);
        lo += t + e;
    }
    return hi + lo;
}

/* n doubles in [0, 1), all 53 bits random, fresh per seed. */
static void bn_fill(double *v, long long n, unsigned long long seed)
{
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (long long i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)(s >> 11) * 0x1p-53;
    }
}

/* Poisons the result, runs op once, returns |got - ref| / |ref| (inf for NaN, -1 on failure). */
static double bn_check(bn_op op, bn_call *c, double ref)
{
    BN_CUDA(cudaMemset(c->result, 0xff, sizeof(double)));
    if (op(c))
        return -1;
    double v;
    BN_CUDA(cudaMemcpy(&v, c->result, sizeof v, cudaMemcpyDeviceToHost));
    return isfinite(v) ? fabs(v - ref) / fabs(ref) : INFINITY;
}

int main(int argc, char **argv)
{
    const char *db_path = argc > 1 ? argv[1] : NULL;
    BN_CUDA(cudaSetDevice(0));
    BN_CUDA(cudaFree(0));
    char err[2048];
    ms_gpu *g = NULL;
    if (ms_open(&g, 0, err, sizeof err) != AT_OK) {
        fprintf(stderr, "ms_open: %s\n", err);
        return 1;
    }
    const at_device_info *dev = ms_device(g);
    const cudrv *cu = ms_driver(g);
    at_handle *h = NULL;
    at_status st = at_create(&h, 0, db_path);
    if (st != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(st));
        return 1;
    }
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS ||
        cublasSetPointerMode(cublas, CUBLAS_POINTER_MODE_DEVICE) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cuBLAS setup failed\n");
        return 1;
    }
    int drv = 0, rt = 0, cubv = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    cublasGetVersion(cublas, &cubv);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    printf("# double reduce and Jacobi benchmark %s\n# GPU %s (%s, %d SMs), driver %d.%d, CUDA "
           "runtime %d.%d, cuBLAS %d, CUB %d.%d.%d, NVRTC %s; database %s\n", date, dev->name,
           dev->arch, dev->sm_count, drv / 1000, (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10,
           cubv, CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100,
           tpl_nvrtc_version(), db_path ? db_path : "(default)");
    printf("# time: median over %d alternating rounds (ours, vendor, ours, vendor) of the median "
           "of %d CUDA-event-timed calls after 3 warm-up calls; GB/s = bytes read (8n sum, 16n "
           "dot) / time; error = |r - ref| / |ref| against a compensated (TwoSum/TwoProduct) "
           "host sum of fresh 53-bit random data in [0, 1), checked before timing\n",
           BN_ROUNDS, BN_RUNS);

    double *hx = (double *)malloc((size_t)BN_MAXN * 8), *hy = (double *)malloc((size_t)BN_MAXN * 8);
    double *x = NULL, *y = NULL, *result = NULL;
    BN_CUDA(cudaMalloc((void **)&x, (size_t)BN_MAXN * 8));
    BN_CUDA(cudaMalloc((void **)&y, (size_t)BN_MAXN * 8));
    BN_CUDA(cudaMalloc((void **)&result, 256));
    size_t cub_bytes = 0, cub_bytes_f = 0;
    BN_CUDA(cub::DeviceReduce::Sum(nullptr, cub_bytes, x, result, (int)BN_MAXN));
    BN_CUDA(cub::DeviceReduce::Sum(nullptr, cub_bytes_f, (float *)x, (float *)result,
                                   (int)(2 * BN_MAXN)));
    void *cub_temp = NULL;
    BN_CUDA(cudaMalloc(&cub_temp, cub_bytes > cub_bytes_f ? cub_bytes : cub_bytes_f));
    bn_call call;
    memset(&call, 0, sizeof call);
    call.x = x;
    call.y = y;
    call.result = result;
    call.h = h;
    call.cublas = cublas;
    call.cub_temp = cub_temp;
    call.cub_bytes = cub_bytes > cub_bytes_f ? cub_bytes : cub_bytes_f;
    static const char *const level[] = {"none", "exact", "nearest", "arch", "default"};
    int failures = 0;
    double sum_gbs_big = 0, ratio_sum = 0, ratio_dot = 0;
    printf("\n%-11s %-6s %-10s %10s %9s %8s %9s  %s\n", "n", "kernel", "method", "us", "GB/s",
           "x vendor", "error", "configuration (lookup)");
    for (int si = 0; si < BN_NSIZES; si++) {
        long long n = bn_sizes[si];
        if (!hx || !hy) {
            fprintf(stderr, "out of host memory\n");
            return 1;
        }
        bn_fill(hx, n, 100 + (unsigned long long)si);
        bn_fill(hy, n, 200 + (unsigned long long)si);
        BN_CUDA(cudaMemcpy(x, hx, (size_t)n * 8, cudaMemcpyHostToDevice));
        BN_CUDA(cudaMemcpy(y, hy, (size_t)n * 8, cudaMemcpyHostToDevice));
        double ref_sum = bn_reference(hx, NULL, n), ref_dot = bn_reference(hx, hy, n);
        bn_call c = call;
        c.n = n;
        tpl_problem p = TPL_PROBLEM(1, {n});
        p.dtype = AT_R_64F;
        double tol = tpl_sum.tolerance(&p);
        for (int dot = 0; dot < 2; dot++) {
            bn_op ours = dot ? bn_ddot : bn_dsum, vendor = dot ? bn_cublas : bn_cub;
            double ref = dot ? ref_dot : ref_sum, bytes = (dot ? 16.0 : 8.0) * n;
            double eo = bn_check(ours, &c, ref), ev = bn_check(vendor, &c, ref);
            at_stats stats;
            at_get_stats(h, &stats);
            double tms = -1, vms = -1;
            if (eo >= 0 && ev >= 0)
                bn_alternate(ours, &c, vendor, &c, &tms, &vms);
            int bad = !(eo >= 0 && eo <= tol && tms > 0 && vms > 0);
            failures += bad;
            printf("%-11lld %-6s %-10s %10.2f %9.1f %8.3f %9.2e  %s (%s)%s\n", n,
                   dot ? "ddot" : "dsum", "tuned", tms * 1e3, bytes / (tms * 1e-3) * 1e-9,
                   vms / tms, eo, stats.last_config, level[stats.last_level],
                   bad ? "  FAILED" : "");
            printf("%-11lld %-6s %-10s %10.2f %9.1f %8.3f %9.2e\n", n, dot ? "ddot" : "dsum",
                   dot ? "cublasDdot" : "cub", vms * 1e3, bytes / (vms * 1e-3) * 1e-9, 1.0, ev);
            if (si == BN_NSIZES - 1) {
                if (dot)
                    ratio_dot = vms / tms;
                else {
                    ratio_sum = vms / tms;
                    sum_gbs_big = bytes / (tms * 1e-3) * 1e-9;
                }
            }
        }
        fflush(stdout);
    }

    /* FP32 at the same bytes as the largest double size, for comparison */
    {
        long long nf = 2 * BN_MAXN;
        float *hf = (float *)hx;          /* 2^28 floats in the same host buffer */
        unsigned long long s = 77;
        for (long long i = 0; i < nf; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            hf[i] = (float)(s >> 40) * (1.0f / 16777216.0f);
        }
        double ref = 0.0;
        for (long long i = 0; i < nf; i++)
            ref += hf[i];
        BN_CUDA(cudaMemcpy(x, hf, (size_t)nf * 4, cudaMemcpyHostToDevice));
        bn_call c = call;
        c.n = nf;
        c.xf = (const float *)x;
        c.resultf = (float *)result;
        float got = NAN;
        int ok = bn_ssum(&c) == 0 &&
                 cudaMemcpy(&got, result, 4, cudaMemcpyDeviceToHost) == cudaSuccess;
        double e = ok && isfinite(got) ? fabs(got - ref) / ref : INFINITY;
        double tms = -1, vms = -1;
        bn_alternate(bn_ssum, &c, bn_cub_float, &c, &tms, &vms);
        at_stats stats;
        at_get_stats(h, &stats);
        printf("%-11lld %-6s %-10s %10.2f %9.1f %8.3f %9.2e  %s (%s)  [FP32, same bytes]\n", nf,
               "ssum", "tuned", tms * 1e3, 4.0 * nf / (tms * 1e-3) * 1e-9, vms / tms, e,
               stats.last_config, level[stats.last_level]);
        printf("%-11lld %-6s %-10s %10.2f %9.1f %8.3f\n", nf, "ssum", "cub", vms * 1e3,
               4.0 * nf / (vms * 1e-3) * 1e-9, 1.0);
        failures += !(e <= 1e-5);
    }

    /* the double Jacobi sweep at n = 8192 against at_dsum reading the same bytes */
    at_exec *ref = ms_reference(g);
    tpl_problem jp = TPL_PROBLEM(1, {BN_JN});
    jp.dtype = AT_R_64F;
    tpl_workset ws;
    memset(&ws, 0, sizeof ws);
    if (tpl_jacobi.prepare(ref, &jp, 42, &ws) != AT_OK) {
        fprintf(stderr, "jacobi prepare: %s\n", ref->errmsg);
        return 1;
    }
    const double *A = (const double *)(uintptr_t)ws.args.operand[TPL_JAC_A].ptr;
    const double *b = (const double *)(uintptr_t)ws.args.operand[TPL_JAC_B].ptr;
    double *jx = (double *)(uintptr_t)ws.args.operand[TPL_JAC_X].ptr;
    int iters = 0;
    double update = 0;
    BN_CUDA(cudaMemset(jx, 0, (size_t)BN_JN * 8));
    st = at_djacobi(h, BN_JN, A, b, jx, 1e-12, 10000, &iters, &update);
    at_stats js;
    at_get_stats(h, &js);
    double resid = -1;
    tpl_ref_residual_f64(ref, BN_JN, (CUdeviceptr)A, (CUdeviceptr)b, (CUdeviceptr)jx, &resid);
    printf("\njacobi n = %d double: at_djacobi %s in %d sweeps, relative update %.2e, "
           "||Ax - b|| / ||b|| = %.2e; configuration %s (%s)\n", BN_JN, at_status_string(st),
           iters, update, resid, js.last_config, level[js.last_level]);
    failures += st != AT_OK || !(resid <= 1e-9);
    int jcfg[TPL_MAX_PARAMS];
    void *cubin = NULL;
    size_t cubin_size = 0;
    char *log = NULL;
    CUmodule module = NULL;
    at_exec jex;
    char jmsg[1024];
    if (tpl_config_parse(&tpl_jacobi, js.last_config, jcfg, err, sizeof err) != AT_OK ||
        tpl_compile(&tpl_jacobi, jcfg, dev->arch, &cubin, &cubin_size, &log) != AT_OK ||
        cu->ModuleLoadData(&module, cubin) != CUDA_SUCCESS) {
        fprintf(stderr, "jacobi kernel: %s %s\n", err, log ? log : "");
        return 1;
    }
    free(cubin);
    free(log);
    ex_init(&jex, cu, dev, module, 0, jmsg, sizeof jmsg);
    bn_call jc = call;
    jc.ex = &jex;
    jc.cfg = jcfg;
    jc.jargs = ws.args;
    bn_call sc = call;
    sc.x = A;
    sc.n = (long long)BN_JN * BN_JN;
    double sweep_ms = -1, sum_ms = -1;
    bn_alternate(bn_sweeps, &jc, bn_dsum, &sc, &sweep_ms, &sum_ms);
    sweep_ms /= BN_SWEEPS;
    double abytes = 8.0 * BN_JN * (double)BN_JN;
    double sweep_gbs = abytes / (sweep_ms * 1e-3) * 1e-9, suma_gbs = abytes / (sum_ms * 1e-3) * 1e-9;
    printf("  sweep (%d back to back / %d): %.2f us, %.1f GB/s of A\n", BN_SWEEPS, BN_SWEEPS,
           sweep_ms * 1e3, sweep_gbs);
    printf("  at_dsum over A (n^2 = %lld doubles, the same bytes): %.2f us, %.1f GB/s\n",
           (long long)BN_JN * BN_JN, sum_ms * 1e3, suma_gbs);
    printf("  at_dsum at 2^27 (above): %.1f GB/s\n", sum_gbs_big);

    printf("\ntargets (H200):\n");
    printf("  double sum 2^27 >= 1.0x CUB:        %.3fx %s\n", ratio_sum,
           ratio_sum >= 1.0 ? "met" : "NOT met");
    printf("  double dot 2^27 >= 1.0x cublasDdot: %.3fx %s\n", ratio_dot,
           ratio_dot >= 1.0 ? "met" : "NOT met");
    double r1 = sweep_gbs / suma_gbs, r2 = sweep_gbs / sum_gbs_big;
    printf("  double Jacobi sweep n = 8192 >= 90%% of double sum's read bandwidth: %.1f%% of "
           "at_dsum over A, %.1f%% of at_dsum at 2^27 %s\n", 100 * r1, 100 * r2,
           r1 >= 0.9 && r2 >= 0.9 ? "met" : "NOT met");
    printf("%s\n", failures ? "FAILED checks above" : "all checks passed");
    ex_release(&jex);
    cu->ModuleUnload(module);
    tpl_workset_free(cu, &ws);
    cudaFree(cub_temp);
    cudaFree(x);
    cudaFree(y);
    cudaFree(result);
    cublasDestroy(cublas);
    at_destroy(h);
    ms_close(g);
    free(hx);
    free(hy);
    return failures ? 1 : 0;
}
