/* bench_calls.cu: the calls users make, not the points the tuner tuned: GEMM calls drawn at
 * random (every type, op pair, order, batched or not, log-uniform sizes under a FLOP cap),
 * each run through libautotune (at_gemm / at_gemm_strided_batched) and through cuBLAS with
 * the same types, ops, order and batch, in one process, on fresh random data; ours is checked
 * against cuBLAS's result first, then both are timed (CUDA events, warm-up, median) and, for
 * the host path, as a loop of back-to-back calls. Prints one line per call and the summary
 * (per type: geomean, lowest, calls below 0.5x / 0.8x / 0.95x; short calls' extra time).
 *
 *   bench_calls [--db PATH] [--calls N] [--seed S] [--vendor on|off] [--label TEXT]
 *               [--flop-cap LOG2] [--tsv FILE]
 *
 * --db: the user database (default: a fresh one under $TMPDIR: no tuning, the built-in
 * defaults and any shipped database); the vendor candidate is off unless --vendor on. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "autotune.h"

#define BC_CUDA(call) do { cudaError_t bc_e = (call); if (bc_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bc_e)); \
    exit(1); } } while (0)

enum { BC_BF16, BC_FP16, BC_TF32, BC_FP32, BC_FP64, BC_NTYPES };
static const char *const bc_type_names[BC_NTYPES] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
static const size_t bc_es[BC_NTYPES] = {2, 2, 4, 4, 8};

/* One drawn call. */
typedef struct bc_call {
    int type, col, op_a, op_b;
    int m, n, k, batch;
} bc_call;

/* ---- random numbers (host: the draw; device: the data) ---- */

static unsigned long long bc_state;
static double bc_uniform(void)
{
    bc_state = bc_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(bc_state >> 11) / 9007199254740992.0;
}
static int bc_log_uniform(int lo, int hi)
{
    return (int)floor(exp(log((double)lo) + bc_uniform() * (log((double)hi + 1) - log((double)lo))));
}

__device__ float bc_value(unsigned long long seed, unsigned long long i)
{
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return -1.0f + 2.0f * (float)(x >> 40) / 16777216.0f;
}

__global__ void bc_fill(void *p, int type, size_t n, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = bc_value(seed, i);
        if (type == BC_BF16)
            ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
        else if (type == BC_FP16)
            ((__half *)p)[i] = __float2half(v);
        else if (type == BC_FP64)
            ((double *)p)[i] = (double)v + 1e-9 * bc_value(seed ^ 0x55ull, i);
        else
            ((float *)p)[i] = v;
    }
}

__device__ double bc_load(const void *p, int type, size_t i)
{
    if (type == BC_BF16)
        return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    if (type == BC_FP16)
        return (double)__half2float(((const __half *)p)[i]);
    if (type == BC_FP64)
        return ((const double *)p)[i];
    return (double)((const float *)p)[i];
}

/* sums[0] += (x - y)^2, sums[1] += y^2 over n elements; sums[2] counts non-finite x */
__global__ void bc_diff(const void *x, const void *y, int type, size_t n, double *sums)
{
    double d = 0, r = 0, bad = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double a = bc_load(x, type, i), b = bc_load(y, type, i);
        if (!isfinite(a))
            bad += 1;
        else
            d += (a - b) * (a - b);
        r += b * b;
    }
    atomicAdd(&sums[0], d);
    atomicAdd(&sums[1], r);
    atomicAdd(&sums[2], bad);
}

/* ---- one call's operands and the two libraries ---- */

typedef struct bc_run {
    bc_call c;
    void *A, *B, *C, *Cref;
    long long lda, ldb, ldc, sa, sb, sc;
    at_handle *h;
    cublasHandle_t cublas;
} bc_run;

static at_dtype bc_at_type(int t)
{
    return t == BC_BF16 ? AT_R_16BF : t == BC_FP16 ? AT_R_16F : t == BC_FP64 ? AT_R_64F : AT_R_32F;
}

static cudaDataType_t bc_cuda_type(int t)
{
    return t == BC_BF16 ? CUDA_R_16BF : t == BC_FP16 ? CUDA_R_16F : t == BC_FP64 ? CUDA_R_64F
                                                                                 : CUDA_R_32F;
}

static int bc_ours(bc_run *r)
{
    const bc_call *c = &r->c;
    at_order o = c->col ? AT_COL_MAJOR : AT_ROW_MAJOR;
    at_op oa = c->op_a ? AT_OP_T : AT_OP_N, ob = c->op_b ? AT_OP_T : AT_OP_N;
    at_status s = c->batch > 1
        ? at_gemm_strided_batched(r->h, o, oa, ob, c->m, c->n, c->k, bc_at_type(c->type), 1.0, r->A,
                                  (int)r->lda, r->sa, r->B, (int)r->ldb, r->sb, 0.0, r->C,
                                  (int)r->ldc, r->sc, c->batch)
        : at_gemm(r->h, o, oa, ob, c->m, c->n, c->k, bc_at_type(c->type), 1.0, r->A, (int)r->lda,
                  r->B, (int)r->ldb, 0.0, r->C, (int)r->ldc);
    if (s != AT_OK)
        fprintf(stderr, "autotune: %s: %s\n", at_status_string(s), at_errmsg(r->h));
    return s != AT_OK;
}

/* cuBLAS is column-major: a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T. */
static int bc_vendor(bc_run *r, void *C)
{
    const bc_call *c = &r->c;
    cublasOperation_t oa = c->op_a ? CUBLAS_OP_T : CUBLAS_OP_N, ob = c->op_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const void *X = c->col ? r->A : r->B, *Y = c->col ? r->B : r->A;
    long long ldx = c->col ? r->lda : r->ldb, ldy = c->col ? r->ldb : r->lda;
    long long sx = c->col ? r->sa : r->sb, sy = c->col ? r->sb : r->sa;
    cublasOperation_t ox = c->col ? oa : ob, oy = c->col ? ob : oa;
    int m = c->col ? c->m : c->n, n = c->col ? c->n : c->m;
    cudaDataType_t t = bc_cuda_type(c->type);
    cublasComputeType_t ct = c->type == BC_FP64   ? CUBLAS_COMPUTE_64F
                             : c->type == BC_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                  : CUBLAS_COMPUTE_32F;
    float af = 1.0f, bf = 0.0f;
    double ad = 1.0, bd = 0.0;
    const void *al = c->type == BC_FP64 ? (const void *)&ad : (const void *)&af;
    const void *be = c->type == BC_FP64 ? (const void *)&bd : (const void *)&bf;
    cublasStatus_t s = c->batch > 1
        ? cublasGemmStridedBatchedEx(r->cublas, ox, oy, m, n, c->k, al, X, t, (int)ldx, sx, Y, t,
                                     (int)ldy, sy, be, C, t, (int)r->ldc, r->sc, c->batch, ct,
                                     CUBLAS_GEMM_DEFAULT)
        : cublasGemmEx(r->cublas, ox, oy, m, n, c->k, al, X, t, (int)ldx, Y, t, (int)ldy, be, C, t,
                       (int)r->ldc, ct, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cuBLAS: status %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

typedef int (*bc_op)(bc_run *r);
static int bc_vendor_op(bc_run *r)
{
    return bc_vendor(r, r->Cref);
}

static int bc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median event time (ms) of at least 5 calls adding up to 10 ms (at most 100), after 3 more. */
static double bc_time(bc_op op, bc_run *r)
{
    double t[100];
    int n = 0;
    double total = 0;
    cudaEvent_t e0, e1;
    BC_CUDA(cudaEventCreate(&e0));
    BC_CUDA(cudaEventCreate(&e1));
    for (int i = 0; i < 3; i++)
        if (op(r))
            return -1;
    while (n < 100 && (n < 5 || total < 10.0)) {
        BC_CUDA(cudaEventRecord(e0, 0));
        if (op(r))
            return -1;
        BC_CUDA(cudaEventRecord(e1, 0));
        BC_CUDA(cudaEventSynchronize(e1));
        float ms;
        BC_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        t[n++] = ms;
        total += ms;
    }
    BC_CUDA(cudaEventDestroy(e0));
    BC_CUDA(cudaEventDestroy(e1));
    qsort(t, (size_t)n, sizeof t[0], bc_cmp);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Per-call time (us) of `reps` calls issued back to back, host clock to the final sync: the
 * host path where the GPU work is short. */
static double bc_loop_us(bc_op op, bc_run *r, int reps)
{
    BC_CUDA(cudaDeviceSynchronize());
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < reps; i++)
        if (op(r))
            return -1;
    BC_CUDA(cudaDeviceSynchronize());
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) * 1e-3) / reps;
}

/* The relative tolerance of ours against cuBLAS: both round to the output type and accumulate
 * in FP32 (FP64) over k, so their difference is bounded by twice either's error. */
static double bc_tolerance(int type, int k)
{
    double u = type == BC_BF16 ? ldexp(1, -8) : type == BC_FP16 ? ldexp(1, -11)
             : type == BC_FP64 ? ldexp(1, -53) : ldexp(1, -24);
    double acc = type == BC_FP64 ? ldexp(1, -53) : type == BC_TF32 ? ldexp(1, -11) : ldexp(1, -24);
    return 2 * (2 * u + (4 * sqrt((double)k) + (type == BC_TF32 ? 0 : k / 8.0)) * acc) + 1e-15;
}

/* Draws a call: sizes log-uniform in 16..16384, a third batched (2..4096 products), the FLOP
 * cap and 512 MiB per operand respected by redrawing. */
static bc_call bc_draw(double flop_cap)
{
    for (;;) {
        bc_call c;
        c.type = (int)(bc_uniform() * BC_NTYPES) % BC_NTYPES;
        c.col = bc_uniform() < 0.5;
        c.op_a = bc_uniform() < 0.5;
        c.op_b = bc_uniform() < 0.5;
        c.m = bc_log_uniform(16, 16384);
        c.n = bc_log_uniform(16, 16384);
        c.k = bc_log_uniform(16, 16384);
        c.batch = bc_uniform() < 1.0 / 3 ? bc_log_uniform(2, 4096) : 1;
        double flops = 2.0 * c.m * c.n * (double)c.k * c.batch;
        double most = (double)bc_es[c.type] * c.batch *
                      fmax(fmax((double)c.m * c.k, (double)c.k * c.n), (double)c.m * c.n);
        if (flops <= flop_cap && most <= 512.0 * 1024 * 1024)
            return c;
    }
}

static void bc_layout(bc_run *r)
{
    const bc_call *c = &r->c;
    /* stored rows x cols of each operand, ld the minimum of the order */
    long long ar = c->op_a ? c->k : c->m, ac = c->op_a ? c->m : c->k;
    long long br = c->op_b ? c->n : c->k, bcn = c->op_b ? c->k : c->n;
    r->lda = c->col ? ar : ac;
    r->ldb = c->col ? br : bcn;
    r->ldc = c->col ? c->m : c->n;
    r->sa = ar * ac;
    r->sb = br * bcn;
    r->sc = (long long)c->m * c->n;
}

int main(int argc, char **argv)
{
    const char *db = NULL, *label = "", *tsv_path = NULL;
    int calls = 200, vendor = 0;
    unsigned long long seed = 1;
    double flop_cap = ldexp(1, 38);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db = argv[++i];
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--vendor") && i + 1 < argc)
            vendor = !strcmp(argv[++i], "on");
        else if (!strcmp(argv[i], "--label") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "--flop-cap") && i + 1 < argc)
            flop_cap = ldexp(1, atoi(argv[++i]));
        else if (!strcmp(argv[i], "--tsv") && i + 1 < argc)
            tsv_path = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--db PATH] [--calls N] [--seed S] [--vendor on|off] "
                    "[--label TEXT] [--flop-cap LOG2] [--tsv FILE]\n", argv[0]);
            return 2;
        }
    }
    char fresh[4200];
    if (!db) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fresh, sizeof fresh, "%s/bench_calls_%d.db", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid());
        remove(fresh);
        db = fresh;
    }
    bc_state = seed * 0x9E3779B97F4A7C15ull + 7;
    cudaDeviceProp prop;
    BC_CUDA(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    const char *commit = getenv("COMMIT");
    printf("# bench_calls: random GEMM calls, ours (libautotune) against cuBLAS in one process\n");
    printf("# date %s  commit %s  GPU %s (cc %d.%d, %d SMs)  CUDA driver %d runtime %d\n", date,
           commit ? commit : "?", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           drv, rt);
    printf("# state: %s  database %s  vendor candidate %s  calls %d  seed %llu  FLOP cap 2^%.0f\n",
           label, db, vendor ? "on" : "off", calls, seed, log2(flop_cap));
    printf("# distribution: type uniform over bf16 fp16 tf32 fp32 fp64; order, op(A), op(B) each "
           "1/2; m, n, k log-uniform in 16..16384; 1/3 strided batched with 2..4096 products "
           "(log-uniform); redrawn above the FLOP cap or 512 MiB per operand\n");
    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db);
    if (s != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(s));
        return 1;
    }
    at_set_vendor(h, vendor ? AT_VENDOR_ON : AT_VENDOR_OFF);
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate failed\n");
        return 1;
    }
    FILE *tsv = tsv_path ? fopen(tsv_path, "w") : NULL;
    if (tsv)
        fprintf(tsv, "i\ttype\torder\tops\tm\tn\tk\tbatch\tours_us\tcublas_us\tratio\tloop_ours_us\t"
                     "loop_cublas_us\tlevel\tvendor\terror\tconfig\n");
    printf("%4s %-4s %-3s %-2s %6s %6s %6s %5s %10s %10s %6s %9s %9s %s\n", "i", "type", "ord",
           "op", "m", "n", "k", "batch", "ours_us", "cublas_us", "ratio", "loop_o", "loop_c",
           "level");
    double *sums;
    BC_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
    double log_sum[BC_NTYPES] = {0}, lowest[BC_NTYPES], all_log = 0;
    int count[BC_NTYPES] = {0}, below[BC_NTYPES][3] = {{0}}, failures = 0, n_ok = 0;
    double short_diff[1024], short_ev[1024];
    int n_short = 0;
    for (int t = 0; t < BC_NTYPES; t++)
        lowest[t] = INFINITY;
    for (int i = 0; i < calls; i++) {
        bc_run r;
        memset(&r, 0, sizeof r);
        r.c = bc_draw(flop_cap);
        r.h = h;
        r.cublas = cublas;
        bc_layout(&r);
        const bc_call *c = &r.c;
        size_t es = bc_es[c->type];
        size_t na = (size_t)r.sa * c->batch, nb = (size_t)r.sb * c->batch,
               nc = (size_t)r.sc * c->batch;
        BC_CUDA(cudaMalloc(&r.A, na * es));
        BC_CUDA(cudaMalloc(&r.B, nb * es));
        BC_CUDA(cudaMalloc(&r.C, nc * es));
        BC_CUDA(cudaMalloc(&r.Cref, nc * es));
        bc_fill<<<1024, 256>>>(r.A, c->type, na, seed * 1000 + (unsigned long long)i * 3);
        bc_fill<<<1024, 256>>>(r.B, c->type, nb, seed * 1000 + (unsigned long long)i * 3 + 1);
        BC_CUDA(cudaMemset(r.C, 0xff, nc * es));          /* NaN: unwritten output fails */
        BC_CUDA(cudaGetLastError());
        at_set_math_mode(h, c->type == BC_TF32 ? AT_MATH_TF32 : AT_MATH_DEFAULT);
        /* correctness first: ours (first call: lookup, load or compile) against cuBLAS */
        int bad = bc_ours(&r) || bc_vendor(&r, r.Cref);
        double err = INFINITY;
        if (!bad) {
            double h3[3];
            BC_CUDA(cudaMemset(sums, 0, 3 * sizeof(double)));
            bc_diff<<<1024, 256>>>(r.C, r.Cref, c->type, nc, sums);
            BC_CUDA(cudaMemcpy(h3, sums, sizeof h3, cudaMemcpyDeviceToHost));
            err = h3[2] > 0 ? INFINITY : sqrt(h3[0] / (h3[1] > 0 ? h3[1] : 1));
            bad = !(err <= bc_tolerance(c->type, c->k));
        }
        double ours = -1, theirs = -1, lo = -1, lc = -1;
        if (!bad) {
            /* warm-up through the trials (up to 8 candidates x 3 calls) before timing */
            for (int w = 0; w < 27 && !bad; w++)
                bad = bc_ours(&r);
            ours = bc_time(bc_ours, &r);
            theirs = bc_time(bc_vendor_op, &r);
            bad = ours <= 0 || theirs <= 0;
        }
        at_stats st;
        at_get_stats(h, &st);
        if (!bad && theirs * 1e3 < 30.0) {
            lo = bc_loop_us(bc_ours, &r, 50);
            lc = bc_loop_us(bc_vendor_op, &r, 50);
        }
        const char *ops[4] = {"NN", "NT", "TN", "TT"};
        double ratio = bad ? 0 : theirs / ours;
        printf("%4d %-4s %-3s %-2s %6d %6d %6d %5d %10.2f %10.2f %6.3f %9.2f %9.2f %d%s%s\n", i,
               bc_type_names[c->type], c->col ? "col" : "row", ops[c->op_a * 2 + c->op_b], c->m,
               c->n, c->k, c->batch, ours * 1e3, theirs * 1e3, ratio, lo, lc, (int)st.last_level,
               st.last_vendor ? " vendor" : "", bad ? " FAILED" : "");
        if (tsv)
            fprintf(tsv, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.4f\t%.2f\t%.2f\t%d\t%d\t%.3g\t%s\n",
                    i, bc_type_names[c->type], c->col ? "col" : "row", ops[c->op_a * 2 + c->op_b],
                    c->m, c->n, c->k, c->batch, ours * 1e3, theirs * 1e3, ratio, lo, lc,
                    (int)st.last_level, st.last_vendor, err, st.last_config);
        if (bad) {
            failures++;
        } else {
            int t = c->type;
            count[t]++;
            n_ok++;
            log_sum[t] += log(ratio);
            all_log += log(ratio);
            lowest[t] = fmin(lowest[t], ratio);
            below[t][0] += ratio < 0.5;
            below[t][1] += ratio < 0.8;
            below[t][2] += ratio < 0.95;
            if (lo > 0 && n_short < 1024) {
                short_diff[n_short] = lo - lc;
                short_ev[n_short++] = (ours - theirs) * 1e3;
            }
        }
        cudaFree(r.A);
        cudaFree(r.B);
        cudaFree(r.C);
        cudaFree(r.Cref);
    }
    printf("\n# summary (%s): %d calls, %d verified and timed, %d failed\n", label, calls, n_ok,
           failures);
    printf("# %-5s %5s %8s %8s %6s %6s %6s\n", "type", "calls", "geomean", "lowest", "<0.5x",
           "<0.8x", "<0.95x");
    for (int t = 0; t < BC_NTYPES; t++)
        if (count[t])
            printf("# %-5s %5d %8.3f %8.3f %6d %6d %6d\n", bc_type_names[t], count[t],
                   exp(log_sum[t] / count[t]), lowest[t], below[t][0], below[t][1], below[t][2]);
    if (n_ok)
        printf("# all   %5d %8.3f\n", n_ok, exp(all_log / n_ok));
    if (n_short) {
        qsort(short_diff, (size_t)n_short, sizeof short_diff[0], bc_cmp);
        qsort(short_ev, (size_t)n_short, sizeof short_ev[0], bc_cmp);
        printf("# short calls (cuBLAS < 30 us): %d; ours minus cuBLAS, median: %.2f us per call "
               "back to back (host path included), %.2f us by events\n", n_short,
               short_diff[n_short / 2], short_ev[n_short / 2]);
    }
    if (tsv)
        fclose(tsv);
    cublasDestroy(cublas);
    at_destroy(h);
    cudaFree(sums);
    if (db == fresh)
        remove(fresh);
    return failures ? 1 : 0;
}
