/* bench_calls.cu: the calls users make, not the points the tuner tuned: GEMM calls drawn at
 * random (every type, op pair, order, batched or not, log-uniform sizes under a FLOP cap), or
 * named one per line in a file (--shapes), each run through libautotune (at_gemm /
 * at_gemm_strided_batched) and through cuBLAS with the same types, ops, order and batch, in
 * one process, on fresh random data; ours is checked against cuBLAS's result first, then both
 * are timed (CUDA events, warm-up, median) and, for the host path, as a loop of back-to-back
 * calls. Prints one line per call and the summary (per type: geomean, lowest, calls below
 * 0.5x / 0.8x / 0.95x; short calls' extra time; with --shapes, every line's ratio too).
 *
 *   bench_calls [--db PATH] [--calls N] [--seed S] [--vendor on|off] [--label TEXT]
 *               [--flop-cap LOG2] [--tsv FILE] [--shapes FILE] [--bandwidth]
 *               [--dry-run] [--print-problems]
 *
 * --db: the user database (default: a fresh one under $TMPDIR: no tuning, the built-in
 * defaults and any shipped database); the vendor candidate is off unless --vendor on.
 * --shapes FILE: the calls of FILE instead of random ones (--calls and --flop-cap are then
 * refused): one per line in the problem text form (templates/tpl.h, tpl_problem_parse), e.g.
 * 4096x4096x4096:bf16:NT, 2500x6000x3000:f64, 32x32x32:f32:b8192, 1024x1024x16384:f16:col:TN;
 * '#' starts a comment, blank lines are skipped. The text is the call AS THE USER MAKES IT:
 * m, n, k, order and op(A), op(B) exactly as given to at_gemm (the database keeps the row-major
 * canonical form instead, where a :col call has m and n and A and B swapped).
 * --bandwidth: first the FP32 sum (at_ssum) over a 1 GiB buffer, its read bandwidth in GB/s;
 * then per call the read bandwidth ours reaches (bytes of A and B, and of C if beta were not 0,
 * over our time) and its share of the sum's.
 * --dry-run: prints the calls (drawn or read) with their canonical problem text, touches no GPU.
 * --print-problems: prints each call's row-major canonical problem text once, as `autotune
 * --problems FILE` takes it (with --bandwidth also the sum's 268435456 line), touches no GPU. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "autotune.h"
extern "C" {                    /* the library's internal headers are C */
#include "tpl.h"
}

#define BC_CUDA(call) do { cudaError_t bc_e = (call); if (bc_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bc_e)); \
    exit(1); } } while (0)

enum { BC_BF16, BC_FP16, BC_TF32, BC_FP32, BC_FP64, BC_NTYPES };
static const char *const bc_type_names[BC_NTYPES] = {"bf16", "fp16", "tf32", "fp32", "fp64"};
static const size_t bc_es[BC_NTYPES] = {2, 2, 4, 4, 8};

/* beta of every call, ours and cuBLAS's: C is written, never read */
static const double bc_beta = 0.0;

/* One call, drawn or read: as the user makes it (order, op(A), op(B) as given to at_gemm). */
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
                                  (int)r->lda, r->sa, r->B, (int)r->ldb, r->sb, bc_beta, r->C,
                                  (int)r->ldc, r->sc, c->batch)
        : at_gemm(r->h, o, oa, ob, c->m, c->n, c->k, bc_at_type(c->type), 1.0, r->A, (int)r->lda,
                  r->B, (int)r->ldb, bc_beta, r->C, (int)r->ldc);
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
    float af = 1.0f, bf = (float)bc_beta;
    double ad = 1.0, bd = bc_beta;
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

/* ---- named calls: the problem text form, as the user makes the call ---- */

/* The call as a problem in its own order and ops (canonical 0), or in the row-major canonical
 * form the database keeps (canonical 1: a column-major C = op(A) op(B) is the row-major
 * C^T = op(B)^T op(A)^T, so m and n and the operands swap, each keeping its own op). */
static tpl_problem bc_problem(const bc_call *c, int canonical)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    int swap = canonical && c->col;
    p.n_dims = 3;
    p.dims[0] = swap ? c->n : c->m;
    p.dims[1] = swap ? c->m : c->n;
    p.dims[2] = c->k;
    p.dtype = bc_at_type(c->type);
    p.math = c->type == BC_TF32 ? AT_MATH_TF32 : AT_MATH_DEFAULT;
    int oa = swap ? c->op_b : c->op_a, ob = swap ? c->op_a : c->op_b;
    p.op_a = oa ? AT_OP_T : AT_OP_N;
    p.op_b = ob ? AT_OP_T : AT_OP_N;
    p.order = c->col && !canonical ? AT_COL_MAJOR : AT_ROW_MAJOR;
    p.batch = c->batch > 1 ? c->batch : 0;
    return p;
}

static void bc_text(const bc_call *c, int canonical, char *out, size_t len)
{
    tpl_problem p = bc_problem(c, canonical);
    tpl_problem_format(&p, out, len);
}

/* The call a problem text names (tpl_problem_parse's grammar: MxNxK, then :f32 :f64 :f16
 * :bf16, :tf32, :row :col, :NN :NT :TN :TT, :bCOUNT). 0, or -1 with the reason in err. */
static int bc_parse_call(const char *text, bc_call *c, char *err, size_t len)
{
    tpl_problem p;
    char why[256];
    if (tpl_problem_parse(text, &p, why, sizeof why) != AT_OK) {
        snprintf(err, len, "%s", why);
        return -1;
    }
    if (p.n_dims != 3) {
        snprintf(err, len, "a GEMM call has three sizes MxNxK, not %d", p.n_dims);
        return -1;
    }
    for (int d = 0; d < 3; d++)
        if (p.dims[d] > 0x7fffffff) {
            snprintf(err, len, "size %lld is above at_gemm's int range", p.dims[d]);
            return -1;
        }
    if (p.batch > 0x7fffffff) {
        snprintf(err, len, "batch %lld is above at_gemm_strided_batched's int range", p.batch);
        return -1;
    }
    memset(c, 0, sizeof *c);
    c->type = p.dtype == AT_R_16BF ? BC_BF16 : p.dtype == AT_R_16F ? BC_FP16
            : p.dtype == AT_R_64F ? BC_FP64 : p.math == AT_MATH_TF32 ? BC_TF32 : BC_FP32;
    c->col = p.order == AT_COL_MAJOR;
    c->op_a = p.op_a == AT_OP_T;
    c->op_b = p.op_b == AT_OP_T;
    c->m = (int)p.dims[0];
    c->n = (int)p.dims[1];
    c->k = (int)p.dims[2];
    c->batch = p.batch > 1 ? (int)p.batch : 1;
    return 0;
}

/* Reads the calls of a --shapes file into *calls (malloc'd, *n of them): one call per line,
 * '#' to the end of a line a comment, blank lines skipped. 0, or 1 after a message naming the
 * file and line. */
static int bc_read_shapes(const char *path, bc_call **calls, int *n)
{
    *calls = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_calls: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    char line[512], why[300];
    int cap = 0, lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t end = strlen(line);
        if (end == sizeof line - 1 && line[end - 1] != '\n' && !feof(f)) {
            fprintf(stderr, "bench_calls: %s:%d: line longer than %d characters\n", path, lineno,
                    (int)sizeof line - 2);
            rc = 1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        end = strlen(line);
        while (end > 0 && strchr(" \t\r\n", line[end - 1]))
            line[--end] = '\0';
        char *start = line + strspn(line, " \t");
        if (!*start)
            continue;
        bc_call c;
        if (bc_parse_call(start, &c, why, sizeof why) != 0) {
            fprintf(stderr, "bench_calls: %s:%d: bad call \"%s\": %s\n", path, lineno, start, why);
            rc = 1;
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            bc_call *bigger = (bc_call *)realloc(*calls, (size_t)cap * sizeof *bigger);
            if (!bigger) {
                fprintf(stderr, "bench_calls: out of memory\n");
                rc = 1;
                break;
            }
            *calls = bigger;
        }
        (*calls)[(*n)++] = c;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "bench_calls: cannot read %s\n", path);
        rc = 1;
    }
    if (rc == 0 && *n == 0) {
        fprintf(stderr, "bench_calls: %s names no call\n", path);
        rc = 1;
    }
    fclose(f);
    if (rc) {
        free(*calls);
        *calls = NULL;
        *n = 0;
    }
    return rc;
}

static const char *const bc_ops[4] = {"NN", "NT", "TN", "TT"};

/* --dry-run: every call as read or drawn, with the canonical problem the database keeps. */
static void bc_print_calls(const bc_call *calls, int n, const char *source)
{
    printf("# bench_calls --dry-run: %d calls from %s; call = as given to at_gemm, canonical = "
           "the row-major problem the database keeps\n", n, source);
    printf("%4s %-4s %-3s %-2s %6s %6s %6s %5s  %-32s %s\n", "i", "type", "ord", "op", "m", "n",
           "k", "batch", "call", "canonical");
    for (int i = 0; i < n; i++) {
        const bc_call *c = &calls[i];
        char call[96], canon[96];
        bc_text(c, 0, call, sizeof call);
        bc_text(c, 1, canon, sizeof canon);
        printf("%4d %-4s %-3s %-2s %6d %6d %6d %5d  %-32s %s\n", i, bc_type_names[c->type],
               c->col ? "col" : "row", bc_ops[c->op_a * 2 + c->op_b], c->m, c->n, c->k, c->batch,
               call, canon);
    }
}

/* The FP32 sum's size for --bandwidth: 2^28 floats, 1 GiB. */
#define BC_SUM_N (1ll << 28)

/* --print-problems: each call's canonical problem once, in the order of first appearance
 * (`autotune --problems FILE` takes these lines); with the sum's line where bandwidth is on. */
static void bc_print_problems(const bc_call *calls, int n, int bandwidth)
{
    char(*seen)[96] = (char(*)[96])calloc((size_t)n + 1, sizeof *seen);
    int n_seen = 0;
    for (int i = 0; i < n; i++) {
        char canon[96];
        bc_text(&calls[i], 1, canon, sizeof canon);
        int dup = 0;
        for (int j = 0; j < n_seen && !dup; j++)
            dup = !strcmp(seen[j], canon);
        if (dup)
            continue;
        if (seen)
            strcpy(seen[n_seen++], canon);
        printf("%s\n", canon);
    }
    if (bandwidth)
        printf("sum %lld\n", BC_SUM_N);
    free(seen);
}

/* The commit: $COMMIT, else git's short hash of the current directory's tree, else "?". */
static void bc_commit(char *out, size_t len)
{
    const char *env = getenv("COMMIT");
    snprintf(out, len, "%s", env && *env ? env : "?");
    if (env && *env)
        return;
    FILE *g = popen("git rev-parse --short HEAD 2>/dev/null", "r");
    if (!g)
        return;
    char line[64];
    if (fgets(line, sizeof line, g)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (*line)
            snprintf(out, len, "%s", line);
    }
    pclose(g);
}

/* Read bandwidth of at_ssum over BC_SUM_N floats (GB/s): 27 warm-up calls (the first one's
 * lookup or compile, then any trials), then the median of 10 calls timed by events; level and
 * config from the handle's stats. -1 after a message on failure. */
static double bc_sum_bandwidth(at_handle *h, unsigned long long seed, double *ms_out,
                               at_stats *st)
{
    float *x, *result;
    if (cudaMalloc(&x, (size_t)BC_SUM_N * sizeof(float)) != cudaSuccess) {
        fprintf(stderr, "bench_calls: no 1 GiB for the sum's buffer\n");
        cudaGetLastError();
        return -1;
    }
    BC_CUDA(cudaMalloc(&result, sizeof(float)));
    bc_fill<<<1024, 256>>>(x, BC_FP32, (size_t)BC_SUM_N, seed * 1000 + 999);
    BC_CUDA(cudaGetLastError());
    at_set_math_mode(h, AT_MATH_DEFAULT);
    double t[10], gbs = -1;
    cudaEvent_t e0, e1;
    BC_CUDA(cudaEventCreate(&e0));
    BC_CUDA(cudaEventCreate(&e1));
    at_status s = AT_OK;
    for (int w = 0; w < 27 && s == AT_OK; w++)
        s = at_ssum(h, BC_SUM_N, x, result);
    for (int i = 0; i < 10 && s == AT_OK; i++) {
        BC_CUDA(cudaEventRecord(e0, 0));
        s = at_ssum(h, BC_SUM_N, x, result);
        BC_CUDA(cudaEventRecord(e1, 0));
        BC_CUDA(cudaEventSynchronize(e1));
        float ms;
        BC_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        t[i] = ms;
    }
    if (s != AT_OK) {
        fprintf(stderr, "at_ssum: %s: %s\n", at_status_string(s), at_errmsg(h));
    } else {
        qsort(t, 10, sizeof t[0], bc_cmp);
        *ms_out = 0.5 * (t[4] + t[5]);
        gbs = (double)BC_SUM_N * sizeof(float) / (*ms_out * 1e-3) / 1e9;
    }
    at_get_stats(h, st);
    BC_CUDA(cudaEventDestroy(e0));
    BC_CUDA(cudaEventDestroy(e1));
    cudaFree(x);
    cudaFree(result);
    return gbs;
}

/* Bytes a call must read: A and B, and C where beta is not 0. */
static double bc_bytes_read(const bc_run *r)
{
    double elems = (double)(r->sa + r->sb + (bc_beta != 0 ? r->sc : 0)) * r->c.batch;
    return elems * (double)bc_es[r->c.type];
}

static void bc_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [--db PATH] [--calls N] [--seed S] [--vendor on|off] [--label TEXT]\n"
            "       [--flop-cap LOG2] [--tsv FILE] [--shapes FILE] [--bandwidth] [--dry-run]\n"
            "       [--print-problems]\n"
            "  --shapes FILE    the calls of FILE instead of random ones (not with --calls or\n"
            "                   --flop-cap): one per line, e.g. 4096x4096x4096:bf16:NT,\n"
            "                   2500x6000x3000:f64, 32x32x32:f32:b8192, 1024x1024x16384:f16:col:TN\n"
            "                   ('#' comments); the text is the call AS THE USER MAKES IT (m, n, k,\n"
            "                   order and ops as given to at_gemm), not the database's row-major\n"
            "                   canonical form\n"
            "  --bandwidth      first at_ssum over 1 GiB (GB/s); then per call ours' read GB/s\n"
            "                   and its share of the sum's\n"
            "  --dry-run        print the calls and their canonical problems; no GPU\n"
            "  --print-problems print each call's canonical problem once, as `autotune\n"
            "                   --problems FILE` takes it; no GPU\n",
            prog);
}

int main(int argc, char **argv)
{
    const char *db = NULL, *label = "", *tsv_path = NULL, *shapes = NULL;
    int calls = 200, vendor = 0, bandwidth = 0, dry_run = 0, print_problems = 0;
    int calls_given = 0, cap_given = 0;
    unsigned long long seed = 1;
    double flop_cap = ldexp(1, 38);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db = argv[++i];
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]), calls_given = 1;
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--vendor") && i + 1 < argc)
            vendor = !strcmp(argv[++i], "on");
        else if (!strcmp(argv[i], "--label") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "--flop-cap") && i + 1 < argc)
            flop_cap = ldexp(1, atoi(argv[++i])), cap_given = 1;
        else if (!strcmp(argv[i], "--tsv") && i + 1 < argc)
            tsv_path = argv[++i];
        else if (!strcmp(argv[i], "--shapes") && i + 1 < argc)
            shapes = argv[++i];
        else if (!strcmp(argv[i], "--bandwidth"))
            bandwidth = 1;
        else if (!strcmp(argv[i], "--dry-run"))
            dry_run = 1;
        else if (!strcmp(argv[i], "--print-problems"))
            print_problems = 1;
        else {
            bc_usage(argv[0]);
            return 2;
        }
    }
    if (shapes && (calls_given || cap_given)) {
        fprintf(stderr, "bench_calls: --calls and --flop-cap shape the random draw; --shapes "
                        "names the calls\n");
        return 2;
    }
    /* the calls: read, or drawn in order (the same draws for the same seed as always) */
    bc_call *list = NULL;
    if (shapes) {
        if (bc_read_shapes(shapes, &list, &calls) != 0)
            return 2;
    } else {
        if (calls < 0)
            calls = 0;
        list = (bc_call *)malloc(((size_t)calls + 1) * sizeof *list);
        if (!list) {
            fprintf(stderr, "bench_calls: out of memory\n");
            return 1;
        }
        bc_state = seed * 0x9E3779B97F4A7C15ull + 7;
        for (int i = 0; i < calls; i++)
            list[i] = bc_draw(flop_cap);
    }
    if (dry_run || print_problems) {
        if (print_problems)
            bc_print_problems(list, calls, bandwidth);
        else
            bc_print_calls(list, calls, shapes ? shapes : "the random draw");
        free(list);
        return 0;
    }
    char fresh[4200];
    if (!db) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fresh, sizeof fresh, "%s/bench_calls_%d.db", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid());
        remove(fresh);
        db = fresh;
    }
    cudaDeviceProp prop;
    BC_CUDA(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    time_t now = time(NULL);
    char date[64], commit[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    bc_commit(commit, sizeof commit);
    if (shapes)
        printf("# bench_calls: named GEMM calls (%s), ours (libautotune) against cuBLAS in one "
               "process\n", shapes);
    else
        printf("# bench_calls: random GEMM calls, ours (libautotune) against cuBLAS in one "
               "process\n");
    printf("# date %s  commit %s  GPU %s (cc %d.%d, %d SMs)  CUDA driver %d runtime %d\n", date,
           commit, prop.name, prop.major, prop.minor, prop.multiProcessorCount, drv, rt);
    if (shapes) {
        printf("# state: %s  database %s  vendor candidate %s  calls %d  seed %llu\n", label, db,
               vendor ? "on" : "off", calls, seed);
        printf("# calls: the lines of %s, each as the user makes it (m, n, k, order and ops as "
               "given to at_gemm; alpha 1, beta 0, the smallest leading dimensions)\n", shapes);
    } else {
        printf("# state: %s  database %s  vendor candidate %s  calls %d  seed %llu  FLOP cap "
               "2^%.0f\n", label, db, vendor ? "on" : "off", calls, seed, log2(flop_cap));
        printf("# distribution: type uniform over bf16 fp16 tf32 fp32 fp64; order, op(A), op(B) "
               "each 1/2; m, n, k log-uniform in 16..16384; 1/3 strided batched with 2..4096 "
               "products (log-uniform); redrawn above the FLOP cap or 512 MiB per operand\n");
    }
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
    double sum_gbs = -1;
    if (bandwidth) {
        double sum_ms = 0;
        at_stats sst;
        sum_gbs = bc_sum_bandwidth(h, seed, &sum_ms, &sst);
        if (sum_gbs > 0)
            printf("# bandwidth: at_ssum over %lld floats (1 GiB): %.1f GB/s read (median of 10, "
                   "%.3f ms; lookup level %d, config %s)\n", BC_SUM_N, sum_gbs, sum_ms,
                   (int)sst.last_level, sst.last_config);
        else
            printf("# bandwidth: at_ssum over 1 GiB failed; no share of it below\n");
    }
    FILE *tsv = tsv_path ? fopen(tsv_path, "w") : NULL;
    if (tsv)
        fprintf(tsv, "i\ttype\torder\tops\tm\tn\tk\tbatch\tours_us\tcublas_us\tratio\tloop_ours_us\t"
                     "loop_cublas_us\tlevel\tvendor\terror\tconfig\tours_read_gbs\t"
                     "cublas_read_gbs\tours_of_sum\tcall\n");
    printf("%4s %-4s %-3s %-2s %6s %6s %6s %5s %10s %10s %6s %9s %9s %s%s\n", "i", "type", "ord",
           "op", "m", "n", "k", "batch", "ours_us", "cublas_us", "ratio", "loop_o", "loop_c",
           bandwidth ? "rd_GB/s of_sum " : "", "level");
    double *sums;
    BC_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
    double log_sum[BC_NTYPES] = {0}, lowest[BC_NTYPES], all_log = 0;
    int count[BC_NTYPES] = {0}, below[BC_NTYPES][3] = {{0}}, failures = 0, n_ok = 0;
    double short_diff[1024], short_ev[1024];
    int n_short = 0;
    /* per line, for the --shapes summary */
    double *line_ratio = (double *)calloc((size_t)calls + 1, sizeof(double));
    double *line_of_sum = (double *)calloc((size_t)calls + 1, sizeof(double));
    double *line_ours = (double *)calloc((size_t)calls + 1, sizeof(double));
    double *line_theirs = (double *)calloc((size_t)calls + 1, sizeof(double));
    if (!line_ratio || !line_of_sum || !line_ours || !line_theirs) {
        fprintf(stderr, "bench_calls: out of memory\n");
        return 1;
    }
    for (int t = 0; t < BC_NTYPES; t++)
        lowest[t] = INFINITY;
    for (int i = 0; i < calls; i++) {
        bc_run r;
        memset(&r, 0, sizeof r);
        r.c = list[i];
        r.h = h;
        r.cublas = cublas;
        bc_layout(&r);
        const bc_call *c = &r.c;
        size_t es = bc_es[c->type];
        size_t na = (size_t)r.sa * c->batch, nb = (size_t)r.sb * c->batch,
               nc = (size_t)r.sc * c->batch;
        /* a named call too large for the GPU fails its row, not the run */
        int bad = cudaMalloc(&r.A, na * es) != cudaSuccess || cudaMalloc(&r.B, nb * es) != cudaSuccess ||
                  cudaMalloc(&r.C, nc * es) != cudaSuccess || cudaMalloc(&r.Cref, nc * es) != cudaSuccess;
        if (bad) {
            fprintf(stderr, "bench_calls: call %d: out of GPU memory for its operands\n", i);
            cudaGetLastError();
        } else {
            bc_fill<<<1024, 256>>>(r.A, c->type, na, seed * 1000 + (unsigned long long)i * 3);
            bc_fill<<<1024, 256>>>(r.B, c->type, nb, seed * 1000 + (unsigned long long)i * 3 + 1);
            BC_CUDA(cudaMemset(r.C, 0xff, nc * es));          /* NaN: unwritten output fails */
            BC_CUDA(cudaGetLastError());
        }
        at_set_math_mode(h, c->type == BC_TF32 ? AT_MATH_TF32 : AT_MATH_DEFAULT);
        /* correctness first: ours (first call: lookup, load or compile) against cuBLAS */
        bad = bad || bc_ours(&r) || bc_vendor(&r, r.Cref);
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
        double ratio = bad ? 0 : theirs / ours;
        double bytes = bc_bytes_read(&r);
        double ours_gbs = bad ? 0 : bytes / (ours * 1e-3) / 1e9;
        double cublas_gbs = bad ? 0 : bytes / (theirs * 1e-3) / 1e9;
        double of_sum = sum_gbs > 0 ? ours_gbs / sum_gbs : NAN;
        char bw[48] = "", call[96];
        if (bandwidth)
            snprintf(bw, sizeof bw, "%7.1f %6.3f ", ours_gbs, of_sum);
        bc_text(c, 0, call, sizeof call);
        printf("%4d %-4s %-3s %-2s %6d %6d %6d %5d %10.2f %10.2f %6.3f %9.2f %9.2f %s%d%s%s\n", i,
               bc_type_names[c->type], c->col ? "col" : "row", bc_ops[c->op_a * 2 + c->op_b], c->m,
               c->n, c->k, c->batch, ours * 1e3, theirs * 1e3, ratio, lo, lc, bw,
               (int)st.last_level, st.last_vendor ? " vendor" : "", bad ? " FAILED" : "");
        fflush(stdout);
        if (tsv)
            fprintf(tsv, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.4f\t%.2f\t%.2f\t%d\t%d\t%.3g\t%s"
                         "\t%.2f\t%.2f\t%.4f\t%s\n",
                    i, bc_type_names[c->type], c->col ? "col" : "row", bc_ops[c->op_a * 2 + c->op_b],
                    c->m, c->n, c->k, c->batch, ours * 1e3, theirs * 1e3, ratio, lo, lc,
                    (int)st.last_level, st.last_vendor, err, st.last_config, ours_gbs, cublas_gbs,
                    of_sum, call);
        line_ratio[i] = ratio;
        line_of_sum[i] = bad ? NAN : of_sum;
        line_ours[i] = ours * 1e3;
        line_theirs[i] = theirs * 1e3;
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
    if (shapes) {
        /* every line's ratio; a failed line (not verified or not timed) counts below both */
        int below_1 = 0, below_095 = 0;
        printf("# per line (ratio = cuBLAS time / ours; of_sum = ours' read bandwidth / the "
               "sum's)\n");
        printf("# %4s %-32s %10s %10s %7s%s\n", "i", "call", "ours_us", "cublas_us", "ratio",
               bandwidth ? "  of_sum" : "");
        for (int i = 0; i < calls; i++) {
            char call[96], bw[32] = "";
            bc_text(&list[i], 0, call, sizeof call);
            if (bandwidth)
                snprintf(bw, sizeof bw, "  %6.3f", line_of_sum[i]);
            printf("# %4d %-32s %10.2f %10.2f %7.3f%s%s\n", i, call, line_ours[i], line_theirs[i],
                   line_ratio[i], bw, line_ratio[i] > 0 ? "" : " FAILED");
            below_1 += line_ratio[i] < 1.0;
            below_095 += line_ratio[i] < 0.95;
        }
        printf("# lines below 1.0x: %d of %d; below 0.95x: %d of %d (failed lines count below "
               "both: %d)\n", below_1, calls, below_095, calls, failures);
    }
    if (tsv)
        fclose(tsv);
    free(line_ratio);
    free(line_of_sum);
    free(line_ours);
    free(line_theirs);
    free(list);
    cublasDestroy(cublas);
    at_destroy(h);
    cudaFree(sums);
    if (db == fresh)
        remove(fresh);
    return failures ? 1 : 0;
}
