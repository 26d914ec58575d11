/* bench_bgemm.cu: strided batched GEMM through at_gemm_strided_batched (the family its
 * choice rule or the stored measurements pick) against cublas{S,D}gemmStridedBatched; with
 * BENCH_BGEMM_SWEEP, given bgemm configurations run directly beside cuBLAS (paired rounds,
 * back-to-back rows with the SM clock and board power from NVML). */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_error.cuh"
#include "bench_timer.h"
#include "bench_nvml.h"
#include "autotune.h"
extern "C" {                    /* the library's internal headers are C */
#include "cudrv.h"
#include "exec.h"
#include "tpl.h"
}
#include "bench_kernels.h"

#define BN_CUDA(call) do { cudaError_t bn_e = (call); if (bn_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bn_e)); \
    exit(1); } } while (0)

typedef struct bn_shape { int m, n, k, batch; } bn_shape;
static const bn_shape bn_shapes[] = {
    {256, 256, 256, 512}, {64, 64, 64, 8192}, {32, 32, 32, 65536}, {512, 512, 512, 128},
};
#define BN_NSHAPES ((int)(sizeof bn_shapes / sizeof bn_shapes[0]))
#define BN_ROUNDS 5     /* timing rounds per side, alternating which goes first (odd) */

__device__ double bn_uniform(unsigned long long seed, unsigned long long i)
{
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return -1.0 + 2.0 * (double)(x >> 11) / 9007199254740992.0;
}

/* n values uniform in [-1, 1) (f64: 53 random bits; f32: rounded), or `value` when use. */
__global__ void bn_fill(void *p, size_t n, int f64, unsigned long long seed, double value, int use)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double v = use ? value : bn_uniform(seed, i);
        if (f64)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
}

__device__ double bn_get(const void *p, size_t i, int f64)
{
    return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* R_b = A_b B_b in float64 (row-major, packed products); FP64 data summed with compensation
 * (TwoProduct by fma, TwoSum), so R is good to about one rounding for both types. */
__global__ void bn_reference(const void *A, const void *B, double *R, int m, int n, int k,
                             long long batch, int f64)
{
    long long per = (long long)m * n;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < per * batch;
         idx += (long long)gridDim.x * blockDim.x) {
        long long b = idx / per, rem = idx - b * per;
        int i = (int)(rem / n), j = (int)(rem % n);
        double s = 0, comp = 0;
        for (int p = 0; p < k; p++) {
            double x = bn_get(A, b * m * k + (long long)i * k + p, f64);
            double y = bn_get(B, b * k * n + (long long)p * n + j, f64);
            double pr = x * y, pe = fma(x, y, -pr), t = s + pr, z = t - s;
            comp += pe + ((s - (t - z)) + (pr - z));
            s = t;
        }
        R[idx] = s + comp;
    }
}

/* sums[0] += (C - R)^2, sums[1] += R^2; sums[2] counts non-finite C. */
__global__ void bn_error(const void *C, const double *R, size_t n, int f64, double *sums)
{
    bench_error_sums([=](size_t i) { return bn_get(C, i, f64); }, R, n, sums);
}

typedef struct bn_call {
    int f64;
    bn_shape s;
    void *A, *B, *C;
    at_handle *h;
    cublasHandle_t cublas;
    at_exec *ex;                /* the sweep's compiled configuration, else the API */
    const int *cfg;
} bn_call;

static int bn_ours(const bn_call *c)
{
    const bn_shape *s = &c->s;
    if (c->ex) {                /* the sweep: the family's run with one compiled configuration */
        tpl_args a;
        memset(&a, 0, sizeof a);
        a.problem.n_dims = 3;
        a.problem.dims[0] = s->m;
        a.problem.dims[1] = s->n;
        a.problem.dims[2] = s->k;
        a.problem.dtype = c->f64 ? AT_R_64F : AT_R_32F;
        a.problem.batch = s->batch;
        a.operand[TPL_GEMM_A] = (tpl_operand){(CUdeviceptr)c->A, s->k, (long long)s->m * s->k};
        a.operand[TPL_GEMM_B] = (tpl_operand){(CUdeviceptr)c->B, s->n, (long long)s->k * s->n};
        a.operand[TPL_GEMM_C] = (tpl_operand){(CUdeviceptr)c->C, s->n, (long long)s->m * s->n};
        a.scalar[TPL_GEMM_ALPHA] = 1.0;
        a.scalar[TPL_GEMM_BETA] = 0.0;
        at_status r = tpl_find("bgemm")->run(c->ex, c->cfg, &a);
        if (r != AT_OK)
            fprintf(stderr, "bgemm run: %s: %s\n", at_status_string(r), c->ex->errmsg);
        return r != AT_OK;
    }
    at_status st = at_gemm_strided_batched(
        c->h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, s->m, s->n, s->k, c->f64 ? AT_R_64F : AT_R_32F, 1.0,
        c->A, s->k, (long long)s->m * s->k, c->B, s->n, (long long)s->k * s->n, 0.0, c->C, s->n,
        (long long)s->m * s->n, s->batch);
    if (st != AT_OK)
        fprintf(stderr, "at_gemm_strided_batched: %s: %s\n", at_status_string(st),
                at_errmsg(c->h));
    return st != AT_OK;
}

static int bn_vendor(const bn_call *c)
{
    const bn_shape *s = &c->s;
    cublasStatus_t st;
    /* row-major C = A B  <=>  column-major C^T = B^T A^T */
    if (c->f64) {
        const double one = 1.0, zero = 0.0;
        st = cublasDgemmStridedBatched(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, s->n, s->m, s->k, &one,
                                       (const double *)c->B, s->n, (long long)s->k * s->n,
                                       (const double *)c->A, s->k, (long long)s->m * s->k, &zero,
                                       (double *)c->C, s->n, (long long)s->m * s->n, s->batch);
    } else {
        const float one = 1.0f, zero = 0.0f;
        st = cublasSgemmStridedBatched(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, s->n, s->m, s->k, &one,
                                       (const float *)c->B, s->n, (long long)s->k * s->n,
                                       (const float *)c->A, s->k, (long long)s->m * s->k, &zero,
                                       (float *)c->C, s->n, (long long)s->m * s->n, s->batch);
    }
    if (st != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublas%cgemmStridedBatched failed: %d\n", c->f64 ? 'D' : 'S', (int)st);
    return st != CUBLAS_STATUS_SUCCESS;
}

/* One bench_time_ms call of op on c (bench_timer.h: warm-up, >= 20 runs, until ~300 ms
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

static double bn_time(int (*op)(const bn_call *), const bn_call *c)
{
    bn_timed t = {op, c};
    return bench_time_ms(bn_timed_call, &t, 20, 300.0);
}

/* Back-to-back: calls calls of op between one pair of events (the host's per-call work
 * overlaps the GPU's), 5 times; the median per call in ms, -1 if a call failed. */
#define BN_B2B 10
static double bn_time_b2b_n(int (*op)(const bn_call *), const bn_call *c, int calls)
{
    cudaEvent_t e0, e1;
    double t[5];
    BN_CUDA(cudaEventCreate(&e0));
    BN_CUDA(cudaEventCreate(&e1));
    for (int w = 0; w < 3; w++)
        if (op(c))
            return -1;
    for (int r = 0; r < 5; r++) {
        float ms = 0;
        BN_CUDA(cudaEventRecord(e0, 0));
        for (int i = 0; i < calls; i++)
            if (op(c))
                return -1;
        BN_CUDA(cudaEventRecord(e1, 0));
        BN_CUDA(cudaEventSynchronize(e1));
        BN_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        t[r] = ms / calls;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    qsort(t, 5, sizeof t[0], bench_cmp_double);
    return t[2];
}

static double bn_time_b2b(int (*op)(const bn_call *), const bn_call *c)
{
    return bn_time_b2b_n(op, c, BN_B2B);
}

/* Poisons C with NaN, runs op once, returns ||C - R|| / ||R|| (inf if any element is not
 * finite, -1 if the call failed). */
static double bn_check(int (*op)(const bn_call *), const bn_call *c, const double *R,
                       double *sums)
{
    size_t count = (size_t)c->s.m * c->s.n * c->s.batch;
    bn_fill<<<1024, 256>>>(c->C, count, c->f64, 0, NAN, 1);
    BN_CUDA(cudaDeviceSynchronize());
    if (op(c))
        return -1;
    BN_CUDA(cudaMemset(sums, 0, 3 * sizeof(double)));
    bn_error<<<1024, 256>>>(c->C, R, count, c->f64, sums);
    double host[3];
    BN_CUDA(cudaMemcpy(host, sums, sizeof host, cudaMemcpyDeviceToHost));
    if (host[2] > 0)
        return INFINITY;
    return sqrt(host[0] / (host[1] > 0 ? host[1] : 1));
}

/* bgemm's acceptance rule (templates/bgemm.c). */
static double bn_tolerance(int f64, int k)
{
    return f64 ? (8.0 * sqrt((double)k) + 8.0) * ldexp(1.0, -53) : 4e-7 * sqrt((double)k) + 1e-6;
}

/* ---- the sweep (BENCH_BGEMM_SWEEP): configurations compiled here, beside cuBLAS ---- */

#define BN_SW_ROUNDS 3
#define BN_SOAK 100     /* back-to-back calls of one soak timing (20-40 ms) */

/* One row of the sweep for op (ours with c->ex set, else cuBLAS) against cuBLAS: per-call
 * rounds alternating with cuBLAS (paired ratio cuBLAS / ours, median), then soaks of BN_SOAK
 * back-to-back calls alternating likewise with the mean SM clock and power of each side.
 * Prints the row. */
static void bn_sweep_row(const bn_call *c, bn_nvml *nv, double err, double tol, const char *text)
{
    bn_call v = *c;
    v.ex = NULL;
    double flop = 2.0 * c->s.m * c->s.n * (double)c->s.k * c->s.batch;
    double po[BN_SW_ROUNDS], pv[BN_SW_ROUNDS], pr[BN_SW_ROUNDS];
    double so[BN_SW_ROUNDS], sv[BN_SW_ROUNDS], sr[BN_SW_ROUNDS];
    double mo = 0, wo = 0, mv = 0, wv = 0;
    for (int r = 0; r < BN_SW_ROUNDS; r++) {
        for (int side = 0; side < 2; side++) {
            int ours = (side + r) % 2 == 0;
            double t = bn_time(ours ? bn_ours : bn_vendor, ours ? c : &v);
            (ours ? po : pv)[r] = t;
        }
        pr[r] = po[r] > 0 && pv[r] > 0 ? pv[r] / po[r] : -1;
        for (int side = 0; side < 2; side++) {
            int ours = (side + r) % 2 == 0;
            double mhz, w;
            bn_nv_begin(nv);
            double t = bn_time_b2b_n(ours ? bn_ours : bn_vendor, ours ? c : &v, BN_SOAK);
            bn_nv_end(nv, &mhz, &w);
            (ours ? so : sv)[r] = t;
            *(ours ? &mo : &mv) += mhz / BN_SW_ROUNDS;
            *(ours ? &wo : &wv) += w / BN_SW_ROUNDS;
        }
        sr[r] = so[r] > 0 && sv[r] > 0 ? sv[r] / so[r] : -1;
    }
    double to = bench_median(po, BN_SW_ROUNDS), tv = bench_median(pv, BN_SW_ROUNDS);
    double bo = bench_median(so, BN_SW_ROUNDS), bv = bench_median(sv, BN_SW_ROUNDS);
    printf("  %8.4f %6.2f %8.4f %6.3fx | %8.4f %8.4f %6.3fx | %4.0f %3.0f | %4.0f %3.0f | %.2e%s %s\n",
           to, to > 0 ? flop / to / 1e9 : 0, tv, bench_median(pr, BN_SW_ROUNDS), bo, bv,
           bench_median(sr, BN_SW_ROUNDS), mo, wo, mv, wv, err,
           err >= 0 && err <= tol ? "" : " ** FAILED **", text);
    fflush(stdout);
}

/* The sweep: every configuration of `list` at every shape of `shapes` ("MxNxK[:f64]:bN",
 * space-separated) that it serves, one row each (bn_sweep_row; with BENCH_BGEMM_SWEEP_CHECK
 * only the error). 0, or 1 if a kernel did not
 * build or a row failed its check. */
static int bn_sweep(const cudrv *cu, const at_device_info *dev, const char *list,
                    const char *shapes, bn_call base, double *R, double *sums)
{
    bn_kernel *k = (bn_kernel *)calloc(128, sizeof *k);
    int n = bn_parse_list(tpl_find("bgemm"), dev, list, k, 128, 1), fails = 0;
    if (!bn_build(cu, dev, tpl_find("bgemm"), k, n))
        return 1;
    bn_nvml nv;
    int have_nv = bn_nv_open(&nv);
    int check_only = getenv("BENCH_BGEMM_SWEEP_CHECK") != NULL;     /* errors only (profiles) */
    printf("\nsweep (NVML %s): per call: ours ms, TF/s, cuBLAS ms, median of %d paired ratios "
           "cuBLAS/ours (alternating order) | back-to-back (%d calls between events, per call ms, "
           "median of 5, %d paired rounds): ours, cuBLAS, ratio | mean SM MHz and W during "
           "ours' back-to-back | during cuBLAS's | error, configuration\n",
           have_nv ? "on" : "off", BN_SW_ROUNDS, BN_SOAK, BN_SW_ROUNDS);
    char *sh = strdup(shapes);
    for (char *tok = strtok(sh, " "); tok; tok = strtok(NULL, " ")) {
        bn_shape s = {0, 0, 0, 1};
        if (sscanf(tok, "%dx%dx%d", &s.m, &s.n, &s.k) != 3 || !strstr(tok, ":b"))
            continue;
        s.batch = atoi(strstr(tok, ":b") + 2);
        int f64 = strstr(tok, ":f64") != NULL;
        bn_call c = base;
        c.f64 = f64;
        c.s = s;
        size_t na = (size_t)s.m * s.k * s.batch, nb = (size_t)s.k * s.n * s.batch;
        bn_fill<<<1024, 256>>>(c.A, na, f64, 0x5eedull, 0, 0);
        bn_fill<<<1024, 256>>>(c.B, nb, f64, 0x5eedull ^ 0xabcdefull, 0, 0);
        bn_reference<<<8192, 256>>>(c.A, c.B, R, s.m, s.n, s.k, s.batch, f64);
        BN_CUDA(cudaDeviceSynchronize());
        tpl_problem p = TPL_PROBLEM(3, {s.m, s.n, s.k});
        p.dtype = f64 ? AT_R_64F : AT_R_32F;
        p.batch = s.batch;
        double tol = bn_tolerance(f64, s.k), ev = bn_check(bn_vendor, &c, R, sums);
        printf("\nsweep %s: cuBLAS error %.2e (tolerance %.2e)\n", tok, ev, tol);
        for (int i = 0; i < n; i++) {
            if (!tpl_find("bgemm")->applicable(k[i].cfg, &p))
                continue;
            c.ex = &k[i].ex;
            c.cfg = k[i].cfg;
            double e = bn_check(bn_ours, &c, R, sums);
            if (e < 0 || e > tol)
                fails++;
            if (e >= 0 && !check_only)
                bn_sweep_row(&c, &nv, e, tol, k[i].text);
            else
                printf("  error %.2e%s %s\n", e, e >= 0 && e <= tol ? "" : " ** FAILED **",
                       k[i].text);
        }
    }
    free(sh);
    bn_release(cu, k, n);
    return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *db_path = argc > 1 ? argv[1] : NULL;
    const char *only = getenv("BENCH_BGEMM_TYPES");       /* "f32", "f64" */
    const char *max_dim = getenv("BENCH_BGEMM_MAX_DIM");    /* "64": only shapes up to 64^3 */
    BN_CUDA(cudaSetDevice(0));
    BN_CUDA(cudaFree(0));       /* primary context, shared with libautotune */
    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db_path);
    if (s != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(s));
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
    cudaDeviceProp prop;
    BN_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("strided batched GEMM: at_gemm_strided_batched vs cublas{S,D}gemmStridedBatched on %s "
           "(driver %d, runtime %d, cuBLAS %d); row-major C_b = A_b B_b packed, alpha 1, beta 0 "
           "(C poisoned with NaN for the check); random inputs in [-1,1); error = ||C - R||_F / "
           "||R||_F over the batch against a compensated float64 product; each side timed in "
           "%d rounds alternating which goes first, each round the median of >= 20 "
           "CUDA-event timings after 3 warm-ups; ms: the median round of each side; ratio: the "
           "median of the rounds' paired ratios cuBLAS ms / ours; b2b: the same pairs of rounds "
           "with 10 back-to-back calls between the events (per-call ms, the median of 5; the "
           "host's per-call work overlaps the GPU's)\n",
           prop.name, drv, rt, cubv, BN_ROUNDS);
    size_t max_a = 0, max_b = 0, max_c = 0;
    for (int i = 0; i < BN_NSHAPES; i++) {
        const bn_shape *x = &bn_shapes[i];
        size_t a = (size_t)x->m * x->k * x->batch, b = (size_t)x->k * x->n * x->batch,
               c = (size_t)x->m * x->n * x->batch;
        max_a = a > max_a ? a : max_a;
        max_b = b > max_b ? b : max_b;
        max_c = c > max_c ? c : max_c;
    }
    void *A, *B, *C;
    double *R, *sums;
    BN_CUDA(cudaMalloc(&A, max_a * 8));
    BN_CUDA(cudaMalloc(&B, max_b * 8));
    BN_CUDA(cudaMalloc(&C, max_c * 8));
    BN_CUDA(cudaMalloc(&R, max_c * sizeof(double)));
    BN_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
    const char *sweep = getenv("BENCH_BGEMM_SWEEP");    /* "cfg;cfg;..." */
    if (sweep) {
        const char *shapes = getenv("BENCH_BGEMM_SWEEP_SHAPES");
        const cudrv *cu = cudrv_get(&s, NULL, 0);
        at_device_info dev;
        char msg[256];
        if (!cu || cudrv_device_info(cu, 0, &dev, msg, sizeof msg) != AT_OK) {
            fprintf(stderr, "driver: %s\n", msg);
            return 1;
        }
        bn_call base = {0, bn_shapes[0], A, B, C, h, cublas, NULL, NULL};
        int rc = bn_sweep(cu, &dev, sweep, shapes ? shapes : "64x64x64:f64:b8192", base, R, sums);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        cudaFree(R);
        cudaFree(sums);
        cublasDestroy(cublas);
        at_destroy(h);
        return rc;
    }
    int failures = 0;
    for (int f64 = 0; f64 < 2; f64++) {
        const char *tname = f64 ? "f64" : "f32";
        if (only && !strstr(only, tname))
            continue;
        printf("\n%-4s %-19s %9s %7s %9s | %9s %7s %9s | %7s | %9s %9s %7s  %s\n", "type",
               "m x n x k x batch", "ours ms", "TF/s", "error", "cuBLAS ms", "TF/s", "error",
               "ratio", "b2b ours", "b2b cuBLAS", "ratio", "configuration (lookup level)");
        for (int i = 0; i < BN_NSHAPES; i++) {
            if (max_dim && bn_shapes[i].m > atoi(max_dim))
                continue;
            bn_call c = {f64, bn_shapes[i], A, B, C, h, cublas, NULL, NULL};
            const bn_shape *x = &c.s;
            size_t na = (size_t)x->m * x->k * x->batch, nb = (size_t)x->k * x->n * x->batch;
            unsigned long long seed = 0xb9e3ull * (unsigned long long)(i + 1) + (unsigned)f64;
            bn_fill<<<1024, 256>>>(A, na, f64, seed, 0, 0);
            bn_fill<<<1024, 256>>>(B, nb, f64, seed ^ 0xabcdefull, 0, 0);
            bn_reference<<<8192, 256>>>(A, B, R, x->m, x->n, x->k, x->batch, f64);
            BN_CUDA(cudaDeviceSynchronize());
            double err_ours = bn_check(bn_ours, &c, R, sums);
            double err_vendor = bn_check(bn_vendor, &c, R, sums);
            double r_ours[BN_ROUNDS], r_vendor[BN_ROUNDS], r_ratio[BN_ROUNDS];
            for (int round = 0; round < BN_ROUNDS; round++)
                r_ours[round] = r_vendor[round] = r_ratio[round] = -1;
            for (int round = 0; round < BN_ROUNDS && err_ours >= 0 && err_vendor >= 0; round++) {
                if (round % 2 == 0) {
                    r_ours[round] = bn_time(bn_ours, &c);
                    r_vendor[round] = bn_time(bn_vendor, &c);
                } else {
                    r_vendor[round] = bn_time(bn_vendor, &c);
                    r_ours[round] = bn_time(bn_ours, &c);
                }
                if (r_ours[round] > 0 && r_vendor[round] > 0)
                    r_ratio[round] = r_vendor[round] / r_ours[round];
            }
            /* the same back-to-back (throughput; per-call host work hidden), paired rounds */
            double b_ours[BN_ROUNDS], b_vendor[BN_ROUNDS], b_ratio[BN_ROUNDS];
            for (int round = 0; round < BN_ROUNDS; round++) {
                b_ours[round] = b_vendor[round] = b_ratio[round] = -1;
                if (err_ours < 0 || err_vendor < 0)
                    continue;
                if (round % 2 == 0) {
                    b_ours[round] = bn_time_b2b(bn_ours, &c);
                    b_vendor[round] = bn_time_b2b(bn_vendor, &c);
                } else {
                    b_vendor[round] = bn_time_b2b(bn_vendor, &c);
                    b_ours[round] = bn_time_b2b(bn_ours, &c);
                }
                if (b_ours[round] > 0 && b_vendor[round] > 0)
                    b_ratio[round] = b_vendor[round] / b_ours[round];
            }
            qsort(b_ratio, BN_ROUNDS, sizeof b_ratio[0], bench_cmp_double);
            qsort(b_ours, BN_ROUNDS, sizeof b_ours[0], bench_cmp_double);
            qsort(b_vendor, BN_ROUNDS, sizeof b_vendor[0], bench_cmp_double);
            qsort(r_ours, BN_ROUNDS, sizeof r_ours[0], bench_cmp_double);
            qsort(r_vendor, BN_ROUNDS, sizeof r_vendor[0], bench_cmp_double);
            qsort(r_ratio, BN_ROUNDS, sizeof r_ratio[0], bench_cmp_double);
            double ms_ours = r_ours[0] > 0 ? r_ours[BN_ROUNDS / 2] : -1;
            double ms_vendor = r_vendor[0] > 0 ? r_vendor[BN_ROUNDS / 2] : -1;
            at_stats st;
            at_get_stats(h, &st);
            static const char *levels[] = {"none", "exact", "nearest", "arch", "default"};
            double flop = 2.0 * x->m * x->n * (double)x->k * x->batch;
            double ratio = r_ratio[0] > 0 ? r_ratio[BN_ROUNDS / 2] : 0;   /* median paired */
            int ok = err_ours >= 0 && err_ours <= bn_tolerance(f64, x->k);
            char shape[64];
            snprintf(shape, sizeof shape, "%dx%dx%d x%d", x->m, x->n, x->k, x->batch);
            printf("%-4s %-19s %9.4f %7.2f %9.2e | %9.4f %7.2f %9.2e | %6.3fx | %9.4f %9.4f %6.3fx  "
                   "%s (%s)%s\n", tname, shape, ms_ours, ms_ours > 0 ? flop / ms_ours / 1e9 : 0,
                   err_ours, ms_vendor, ms_vendor > 0 ? flop / ms_vendor / 1e9 : 0, err_vendor,
                   ratio, b_ours[BN_ROUNDS / 2], b_vendor[BN_ROUNDS / 2], b_ratio[BN_ROUNDS / 2],
                   st.last_config, levels[st.last_level], ok ? "" : "  ** FAILED CHECK **");
            fflush(stdout);
            if (!ok)
                failures++;
        }
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(R);
    cudaFree(sums);
    cublasDestroy(cublas);
    at_destroy(h);
    return failures ? 1 : 0;
}
