/* bench_tcgemm.cu: the tuned tensor-core GEMM (at_gemm: BF16, FP16, and FP32
 * data with TF32 math) against cublasGemmEx in the same process, on issue 15's shapes; with
 * BENCH_TCGEMM_EPILOGUE=1, BF16 GEMM + bias + GELU (at_gemm_epilogue) against cublasLtMatmul
 * with CUBLASLT_EPILOGUE_GELU_BIAS and against the unfused pair (at_gemm, then a bias + GELU
 * kernel), issue 36's shapes; with BENCH_TCGEMM_FP8=1, FP8 E4M3 x E4M3 (and E4M3 x E5M2) -> BF16
 * with per-tensor scales (at_gemm_fp8) against cublasLtMatmul FP8, TN, fast accumulation off and
 * on (issue 36); with BENCH_TCGEMM_FP8_BLOCK=1, block-scaled FP8 (at_gemm_fp8_blockscaled) against
 * our per-tensor FP8 and cuBLASLt's block scaling (bench_fp8_block.cuh). */
#include <cublasLt.h>
#include <cuda_fp8.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_error.cuh"
#include "bench_timer.h"
#include "autotune.h"

#define BN_CUDA(call) do { cudaError_t bn_e = (call); if (bn_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bn_e)); \
    exit(1); } } while (0)

typedef struct bn_shape { int m, n, k; } bn_shape;
static const bn_shape bn_shapes[] = {
    {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {4097, 4097, 4097},
    {8192, 8192, 1024}, {1024, 8192, 8192}, {8192, 1024, 8192}, {16384, 16384, 512},
};
#define BN_NSHAPES ((int)(sizeof bn_shapes / sizeof bn_shapes[0]))

/* at_lookup_level's names, as the tables print them. */
static const char *const bn_levels[] = {"none", "exact", "nearest", "arch", "default"};

typedef struct bn_type {
    const char *name;
    at_dtype type;
    int tf32;
    size_t es;
    cudaDataType_t cuda;
    cublasComputeType_t compute;
} bn_type;
static const bn_type bn_types[] = {
    {"bf16", AT_R_16BF, 0, 2, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
    {"fp16", AT_R_16F, 0, 2, CUDA_R_16F, CUBLAS_COMPUTE_32F},
    {"tf32", AT_R_32F, 1, 4, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
};

/* ---- device helpers: fills, the float64 reference, the error ---- */

__device__ float bn_uniform(unsigned long long seed, unsigned long long i)
{
    unsigned long long x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return -1.0f + 2.0f * (float)(x >> 40) / 16777216.0f;
}

/* Value i as the kernels read it: 16-bit as stored, FP32 rounded to TF32 (to nearest, ties to
 * even: the family's TFLOAT32 tensor maps and cuBLAS's rule). */
__device__ double bn_load(const void *p, size_t i, int t)
{
    if (t == 0)
        return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    if (t == 1)
        return (double)__half2float(((const __half *)p)[i]);
    unsigned x = __float_as_uint(((const float *)p)[i]);
    unsigned u = (x + 0xfffu + ((x >> 13) & 1u)) & 0xffffe000u;
    return (double)__uint_as_float(u);
}

__global__ void bn_fill(void *p, size_t n, int t, unsigned long long seed, float value, int use)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = use ? value : bn_uniform(seed, i);
        if (t == 0)
            ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
        else if (t == 1)
            ((__half *)p)[i] = __float2half(v);
        else
            ((float *)p)[i] = v;
    }
}

/* R = A * B in float64 (row-major, packed), 16x16 tiles through shared memory. */
__global__ void bn_reference(const void *A, const void *B, double *R, int m, int n, int k, int t)
{
    __shared__ double sa[16][17], sb[16][17];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    double acc = 0;
    for (int p0 = 0; p0 < k; p0 += 16) {
        int pa = p0 + threadIdx.x, pb = p0 + threadIdx.y;
        sa[threadIdx.y][threadIdx.x] = row < m && pa < k ? bn_load(A, (size_t)row * k + pa, t) : 0;
        sb[threadIdx.y][threadIdx.x] = pb < k && col < n ? bn_load(B, (size_t)pb * n + col, t) : 0;
        __syncthreads();
        for (int q = 0; q < 16; q++)
            acc += sa[threadIdx.y][q] * sb[q][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n)
        R[(size_t)row * n + col] = acc;
}

/* sums[0] += (C - R)^2, sums[1] += R^2; sums[2] counts non-finite C. */
__global__ void bn_error(const void *C, const double *R, size_t n, int t, double *sums)
{
    bench_error_sums([=](size_t i) {
        return t == 0 ? (double)__bfloat162float(((const __nv_bfloat16 *)C)[i])
             : t == 1 ? (double)__half2float(((const __half *)C)[i])
                      : (double)((const float *)C)[i];
    }, R, n, sums);
}

/* ---- the two contenders ---- */

typedef struct bn_call {
    const bn_type *ty;
    int m, n, k;
    void *A, *B, *C;
    at_handle *h;
    cublasHandle_t cublas;
} bn_call;

static int bn_ours(const bn_call *c)
{
    at_status s = at_gemm(c->h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, c->m, c->n, c->k, c->ty->type, 1.0,
                          c->A, c->k, c->B, c->n, 0.0, c->C, c->n);
    if (s != AT_OK)
        fprintf(stderr, "at_gemm: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_vendor(const bn_call *c)
{
    const float one = 1.0f, zero = 0.0f;
    /* row-major C = A B  <=>  column-major C^T = B^T A^T */
    cublasStatus_t s = cublasGemmEx(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, c->n, c->m, c->k, &one,
                                    c->B, c->ty->cuda, c->n, c->A, c->ty->cuda, c->k, &zero, c->C,
                                    c->ty->cuda, c->n, c->ty->compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasGemmEx failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

/* ---- timing: each mode times functions of its call (bn_call, bn_epi_call, ...) ---- */

/* One contender bound to its call, as bench_time_rounds takes it (a bench_op and its ctx). */
template <typename Call> struct bn_bound {
    int (*op)(const Call *);
    const Call *c;
};

template <typename Call> static int bn_bound_call(void *p)
{
    const bn_bound<Call> *b = (const bn_bound<Call> *)p;
    return b->op(b->c);
}

/* ops[0..n) on c timed against each other in alternating rounds (bench_time_rounds in
 * bench_timer.h; each timing 3 warm-ups, then >= 20 runs until ~500 ms of runs or 200, the
 * median ms); rounds 0 times nothing. */
template <typename Call>
static bench_rounds bn_time_rounds(int (*const ops[])(const Call *), int n, const Call *c,
                                   int rounds)
{
    bn_bound<Call> bound[BENCH_MAX_OPS];
    bench_contender contenders[BENCH_MAX_OPS];
    for (int j = 0; j < n && j < BENCH_MAX_OPS; j++) {
        bound[j] = {ops[j], c};
        contenders[j] = {bn_bound_call<Call>, &bound[j]};
    }
    return bench_time_rounds(contenders, n, rounds, 20, 500.0);
}

/* Every mode's check: poisons c->C (count elements of bn_fill's type t) with NaN, runs op once,
 * then launch_error (an error kernel adding into sums as bn_error does) and returns
 * ||C - R|| / ||R|| (inf if any element is not finite, -1 if the call failed). */
template <typename Call, typename LaunchError>
static double bn_check_with(int (*op)(const Call *), const Call *c, size_t count, int t,
                            double *sums, LaunchError launch_error)
{
    bn_fill<<<1024, 256>>>(c->C, count, t, 0, NAN, 1);
    BN_CUDA(cudaDeviceSynchronize());
    if (op(c))
        return -1;
    BN_CUDA(cudaMemset(sums, 0, 3 * sizeof(double)));
    launch_error();
    double host[3];
    BN_CUDA(cudaMemcpy(host, sums, sizeof host, cudaMemcpyDeviceToHost));
    if (host[2] > 0)
        return INFINITY;
    return sqrt(host[0] / (host[1] > 0 ? host[1] : 1));
}

/* ||C - R|| / ||R|| of op's C (bn_check_with). */
static double bn_check(int (*op)(const bn_call *), const bn_call *c, const double *R,
                       double *sums)
{
    size_t count = (size_t)c->m * c->n;
    int t = (int)(c->ty - bn_types);
    return bn_check_with(op, c, count, t, sums,
                         [=] { bn_error<<<1024, 256>>>(c->C, R, count, t, sums); });
}

/* ---- GEMM + bias + GELU (BENCH_TCGEMM_EPILOGUE=1) ---- */

static const bn_shape bn_epi_shapes[] = {
    {4096, 4096, 4096}, {8192, 28672, 4096}, {8192, 8192, 1024},
};
#define BN_EPI_NSHAPES ((int)(sizeof bn_epi_shapes / sizeof bn_epi_shapes[0]))
#define BN_LT_WORKSPACE (32u << 20)

__device__ __forceinline__ double bn_gelu_ref(double x)
{
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* R = GELU(A B + bias) in float64 for rows 0, step, 2 step, ... of C (BF16 A m x k, B k x n,
 * bias n, row-major): R holds those rows one after another. */
__global__ void bn_epi_reference(const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                 const __nv_bfloat16 *bias, double *R, int m, int n, int k,
                                 int step)
{
    __shared__ double sa[16][17], sb[16][17];
    int rr = blockIdx.y * 16 + threadIdx.y, row = rr * step, col = blockIdx.x * 16 + threadIdx.x;
    double acc = 0;
    for (int p0 = 0; p0 < k; p0 += 16) {
        int pa = p0 + threadIdx.x, pb = p0 + threadIdx.y;
        sa[threadIdx.y][threadIdx.x] =
            row < m && pa < k ? (double)__bfloat162float(A[(size_t)row * k + pa]) : 0;
        sb[threadIdx.y][threadIdx.x] =
            pb < k && col < n ? (double)__bfloat162float(B[(size_t)pb * n + col]) : 0;
        __syncthreads();
        for (int q = 0; q < 16; q++)
            acc += sa[threadIdx.y][q] * sb[q][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n)
        R[(size_t)rr * n + col] = bn_gelu_ref(acc + (double)__bfloat162float(bias[col]));
}

/* The error over the reference's rows: sums as bn_error. */
__global__ void bn_epi_error(const __nv_bfloat16 *C, const double *R, int rows, int n, int step,
                             double *sums)
{
    bench_error_sums([=](size_t i) {
        size_t rr = i / n, col = i % n;
        return (double)__bfloat162float(C[rr * step * (size_t)n + col]);
    }, R, (size_t)rows * n, sums);
}

/* The unfused pair's second kernel: C = GELU(C + bias) in FP32 (tanh form, tanhf), BF16 C with
 * n a multiple of 8, eight elements (16 bytes) per thread and step. */
__global__ void __launch_bounds__(256) bn_bias_gelu(__nv_bfloat16 *C, const __nv_bfloat16 *bias,
                                                    size_t count, int n)
{
    for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 8; i < count;
         i += (size_t)gridDim.x * blockDim.x * 8) {
        uint4 raw = *(const uint4 *)(C + i);
        uint4 braw = *(const uint4 *)(bias + i % n);
        __nv_bfloat162 *v = (__nv_bfloat162 *)&raw;
        const __nv_bfloat162 *b = (const __nv_bfloat162 *)&braw;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float2 x = __bfloat1622float2(v[j]), y = __bfloat1622float2(b[j]);
            x.x += y.x;
            x.y += y.y;
            x.x = 0.5f * x.x * (1.0f + tanhf(0.7978845608f * (x.x + 0.044715f * x.x * x.x * x.x)));
            x.y = 0.5f * x.y * (1.0f + tanhf(0.7978845608f * (x.y + 0.044715f * x.y * x.y * x.y)));
            v[j] = __float22bfloat162_rn(x);
        }
        *(uint4 *)(C + i) = raw;
    }
}

typedef struct bn_epi_call {
    int m, n, k;
    void *A, *B, *C, *bias;
    at_handle *h;
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op[2];             /* [0] plain, [1] GELU_BIAS */
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo[2];
    void *ws;
    int sms;
} bn_epi_call;

static int bn_epi_ours(const bn_epi_call *c)
{
    at_epilogue epi = {AT_ACT_GELU_TANH, AT_BIAS_COL, c->bias};
    at_status s = at_gemm_epilogue(c->h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, c->m, c->n, c->k,
                                   AT_R_16BF, 1.0, c->A, c->k, c->B, c->n, 0.0, c->C, c->n, &epi);
    if (s != AT_OK)
        fprintf(stderr, "at_gemm_epilogue: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

/* Our GEMM alone (no epilogue): the first half of the pair, the base of both epilogues' costs. */
static int bn_epi_ours_plain(const bn_epi_call *c)
{
    at_status s = at_gemm(c->h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, c->m, c->n, c->k, AT_R_16BF, 1.0,
                          c->A, c->k, c->B, c->n, 0.0, c->C, c->n);
    if (s != AT_OK)
        fprintf(stderr, "at_gemm: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_epi_pair(const bn_epi_call *c)
{
    at_status s = at_gemm(c->h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, c->m, c->n, c->k, AT_R_16BF, 1.0,
                          c->A, c->k, c->B, c->n, 0.0, c->C, c->n);
    if (s != AT_OK) {
        fprintf(stderr, "at_gemm: %s: %s\n", at_status_string(s), at_errmsg(c->h));
        return 1;
    }
    bn_bias_gelu<<<c->sms * 8, 256>>>((__nv_bfloat16 *)c->C, (const __nv_bfloat16 *)c->bias,
                                      (size_t)c->m * c->n, c->n);
    return cudaGetLastError() != cudaSuccess;
}

/* The heuristic's first algorithm for each of the two descriptors op[0..1] over the layouts
 * of A, B and C (D alike), within BN_LT_WORKSPACE of workspace, into algo; 0 on success. */
static int bn_lt_algos(cublasLtHandle_t lt, const cublasLtMatmulDesc_t op[2],
                       cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                       cublasLtMatrixLayout_t lc, cublasLtMatmulAlgo_t algo[2])
{
    cublasLtMatmulPreference_t pref;
    size_t wsz = BN_LT_WORKSPACE;
    if (cublasLtMatmulPreferenceCreate(&pref) ||
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz,
                                             sizeof wsz))
        return 1;
    for (int w = 0; w < 2; w++) {
        cublasLtMatmulHeuristicResult_t res;
        int found = 0;
        if (cublasLtMatmulAlgoGetHeuristic(lt, op[w], la, lb, lc, lc, pref, 1, &res, &found) ||
            found < 1) {
            cublasLtMatmulPreferenceDestroy(pref);
            return 1;
        }
        algo[w] = res.algo;
    }
    cublasLtMatmulPreferenceDestroy(pref);
    return 0;
}

/* Destroys the two descriptors and the three layouts bn_lt_algos ran over. */
static void bn_lt_destroy(const cublasLtMatmulDesc_t op[2], cublasLtMatrixLayout_t la,
                          cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc)
{
    for (int w = 0; w < 2; w++)
        cublasLtMatmulDescDestroy(op[w]);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
}

/* cublasLtMatmul, plain (which 0) or with CUBLASLT_EPILOGUE_GELU_BIAS (1): row-major C = A B is
 * column-major C^T = B^T A^T, so cuBLASLt's per-row bias of D = C^T is our per-column one. */
static int bn_epi_lt(const bn_epi_call *c, int which)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasLtMatmul(c->lt, c->op[which], &one, c->B, c->la, c->A, c->lb, &zero,
                                      c->C, c->lc, c->C, c->lc, &c->algo[which], c->ws,
                                      BN_LT_WORKSPACE, 0);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasLtMatmul failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

static int bn_epi_lt_fused(const bn_epi_call *c) { return bn_epi_lt(c, 1); }
static int bn_epi_lt_plain(const bn_epi_call *c) { return bn_epi_lt(c, 0); }

/* Sets up cuBLASLt's descriptors and heuristic algorithms for c's shape; 0 on success. */
static int bn_epi_lt_setup(bn_epi_call *c)
{
    cublasOperation_t no = CUBLAS_OP_N;
    for (int w = 0; w < 2; w++) {
        cublasLtEpilogue_t e = w ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
        if (cublasLtMatmulDescCreate(&c->op[w], CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_TRANSA, &no, sizeof no) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e))
            return 1;
        if (w && cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                &c->bias, sizeof c->bias))
            return 1;
    }
    if (cublasLtMatrixLayoutCreate(&c->la, CUDA_R_16BF, c->n, c->k, c->n) ||
        cublasLtMatrixLayoutCreate(&c->lb, CUDA_R_16BF, c->k, c->m, c->k) ||
        cublasLtMatrixLayoutCreate(&c->lc, CUDA_R_16BF, c->n, c->m, c->n))
        return 1;
    return bn_lt_algos(c->lt, c->op, c->la, c->lb, c->lc, c->algo);
}

static void bn_epi_lt_teardown(bn_epi_call *c)
{
    bn_lt_destroy(c->op, c->la, c->lb, c->lc);
}

/* The relative error of op's C over the reference rows (bn_check_with). */
static double bn_epi_check(int (*op)(const bn_epi_call *), const bn_epi_call *c, const double *R,
                           int rows, int step, double *sums)
{
    return bn_check_with(op, c, (size_t)c->m * c->n, 0, sums, [=] {
        bn_epi_error<<<1024, 256>>>((const __nv_bfloat16 *)c->C, R, rows, c->n, step, sums);
    });
}

/* BF16 GEMM + bias (per column of C, per output feature) + GELU (tanh form): ours fused, cuBLASLt
 * with CUBLASLT_EPILOGUE_GELU_BIAS, the unfused pair (our GEMM, then bn_bias_gelu), and plain
 * cuBLASLt for scale; rounds alternate the order. 0 if every check passed. */
static int bn_epilogue_main(at_handle *h, cublasLtHandle_t lt, const cudaDeviceProp *prop,
                            int rounds)
{
    printf("GEMM + bias + GELU (BF16, row-major C = GELU(A B + bias), bias per column of C, GELU "
           "tanh form) on %s (cuBLASLt %zu): ours = at_gemm_epilogue (fused), Lt = cublasLtMatmul "
           "CUBLASLT_EPILOGUE_GELU_BIAS, pair = at_gemm then a bias + GELU kernel, Lt plain = no "
           "epilogue; error = ||C - R||_F / ||R||_F over every (m/512)-th row against float64; %d "
           "rounds alternating the order, each the median of >= 20 CUDA-event timings; x Lt and "
           "x pair = their median ms over ours\n", prop->name, cublasLtGetVersion(), rounds);
    printf("\n%-17s %9s %8s %9s | %9s %8s %9s | %9s %8s | %9s | %7s %7s  %s\n", "m x n x k",
           "ours ms", "TF/s", "error", "Lt ms", "TF/s", "error", "pair ms", "error", "Ltplain",
           "x Lt", "x pair", "configuration (lookup level)");
    int failures = 0;
    for (int i = 0; i < BN_EPI_NSHAPES; i++) {
        bn_epi_call c;
        memset(&c, 0, sizeof c);
        c.m = bn_epi_shapes[i].m;
        c.n = bn_epi_shapes[i].n;
        c.k = bn_epi_shapes[i].k;
        c.h = h;
        c.lt = lt;
        c.sms = prop->multiProcessorCount;
        size_t na = (size_t)c.m * c.k, nb = (size_t)c.k * c.n, nc = (size_t)c.m * c.n;
        int step = c.m >= 512 ? c.m / 512 : 1, rows = (c.m + step - 1) / step;
        double *R, *sums;
        BN_CUDA(cudaMalloc(&c.A, na * 2));
        BN_CUDA(cudaMalloc(&c.B, nb * 2));
        BN_CUDA(cudaMalloc(&c.C, nc * 2));
        BN_CUDA(cudaMalloc(&c.bias, (size_t)c.n * 2));
        BN_CUDA(cudaMalloc(&c.ws, BN_LT_WORKSPACE));
        BN_CUDA(cudaMalloc(&R, (size_t)rows * c.n * sizeof(double)));
        BN_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
        unsigned long long seed = 0xe91ull * (unsigned long long)(i + 1);
        bn_fill<<<1024, 256>>>(c.A, na, 0, seed, 0, 0);
        bn_fill<<<1024, 256>>>(c.B, nb, 0, seed ^ 0xabcdefull, 0, 0);
        bn_fill<<<1024, 256>>>(c.bias, (size_t)c.n, 0, seed ^ 0x5151ull, 0, 0);
        dim3 grid((unsigned)((c.n + 15) / 16), (unsigned)((rows + 15) / 16));
        bn_epi_reference<<<grid, dim3(16, 16)>>>((const __nv_bfloat16 *)c.A,
                                                 (const __nv_bfloat16 *)c.B,
                                                 (const __nv_bfloat16 *)c.bias, R, c.m, c.n, c.k,
                                                 step);
        BN_CUDA(cudaDeviceSynchronize());
        if (bn_epi_lt_setup(&c)) {
            fprintf(stderr, "cuBLASLt: no algorithm for %dx%dx%d with GELU_BIAS\n", c.m, c.n, c.k);
            return 1;
        }
        double e_ours = bn_epi_check(bn_epi_ours, &c, R, rows, step, sums);
        at_stats st;
        at_get_stats(h, &st);
        char config[sizeof st.last_config];
        snprintf(config, sizeof config, "%s", st.last_config);
        at_lookup_level level = st.last_level;
        double e_lt = bn_epi_check(bn_epi_lt_fused, &c, R, rows, step, sums);
        double e_pair = bn_epi_check(bn_epi_pair, &c, R, rows, step, sums);
        int (*const ops[4])(const bn_epi_call *) = {bn_epi_ours, bn_epi_lt_fused, bn_epi_pair,
                                                    bn_epi_lt_plain};
        int ran = e_ours >= 0 && e_lt >= 0 && e_pair >= 0;        /* each check's call ran */
        bench_rounds timed = bn_time_rounds(ops, 4, &c, ran ? rounds : 0);
        const double *ms = timed.ms;
        double flop = 2.0 * c.m * c.n * (double)c.k;
        /* the family's rule with the epilogue's 1.2 (templates/tcgemm.c) */
        double tol = 1.2 * (2 * ldexp(1, -8) + (4 * sqrt((double)c.k) + c.k / 8.0) * ldexp(1, -24));
        int ok = e_ours >= 0 && e_ours <= tol && e_pair >= 0 && e_pair <= tol;
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d", c.m, c.n, c.k);
        printf("%-17s %9.4f %8.1f %9.2e | %9.4f %8.1f %9.2e | %9.4f %9.2e | %9.4f | %6.3fx "
               "%6.3fx  %s (%s)%s\n", shape, ms[0], ms[0] > 0 ? flop / ms[0] / 1e9 : 0, e_ours,
               ms[1], ms[1] > 0 ? flop / ms[1] / 1e9 : 0, e_lt, ms[2], e_pair, ms[3],
               timed.over_first[1], timed.over_first[2], config, bn_levels[level],
               ok ? "" : "  ** FAILED CHECK **");
        /* Where the time goes: ours plain against ours fused and the pair in rounds of their own.
         * The pair's second kernel costs pair - plain; it reads and writes C once (4 m n bytes of
         * BF16), so at the memory's bandwidth the pair can be at most (plain + 4 m n / BW) / plain
         * slower than a fused kernel whose epilogue were free (docs/fp8.md, "fused epilogues"). */
        int (*const split[3])(const bn_epi_call *) = {bn_epi_ours_plain, bn_epi_ours, bn_epi_pair};
        bench_rounds parts = bn_time_rounds(split, 3, &c, ran ? rounds : 0);
        if (parts.done) {
            double plain = parts.ms[0], pass = parts.ms[2] - plain, bytes = 4.0 * c.m * c.n;
            printf("  ours plain %.4f ms: epilogue costs ours %+.1f%%, Lt %+.1f%%; the pair's bias + "
                   "GELU pass %.4f ms (%.2f TB/s over its 4 m n bytes); x pair with a free epilogue "
                   "%.3fx, with a pass at 4.8 TB/s %.3fx\n", plain,
                   100.0 * (parts.over_first[1] - 1.0), 100.0 * (ms[1] / ms[3] - 1.0), pass,
                   pass > 0 ? bytes / pass / 1e9 : 0.0, parts.over_first[2],
                   (plain + bytes / 4.8e9) / plain);
        }
        fflush(stdout);
        failures += !ok;
        bn_epi_lt_teardown(&c);
        cudaFree(c.A);
        cudaFree(c.B);
        cudaFree(c.C);
        cudaFree(c.bias);
        cudaFree(c.ws);
        cudaFree(R);
        cudaFree(sums);
    }
    return failures ? 1 : 0;
}

/* ---- FP8 with per-tensor scales (BENCH_TCGEMM_FP8=1) ---- */

/* issue 36's FP8 shapes, then the other issues' table (bn_shapes) for the geomean */
static const bn_shape bn_f8_shapes[] = {
    {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024}, {8192, 28672, 4096},
    {2048, 2048, 2048}, {4097, 4097, 4097}, {1024, 8192, 8192}, {8192, 1024, 8192},
    {16384, 16384, 512},
};
#define BN_F8_NSHAPES ((int)(sizeof bn_f8_shapes / sizeof bn_f8_shapes[0]))
#define BN_F8_SCALE_A 0.75f
#define BN_F8_SCALE_B 1.25f

/* n FP8 values (E4M3 e4m3 1, else E5M2) of uniform draws in [-1, 1), rounded to nearest. */
__global__ void bn_f8_fill(unsigned char *p, size_t n, int e4m3, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (unsigned char)__nv_cvt_float_to_fp8(bn_uniform(seed, i), __NV_SATFINITE,
                                                    e4m3 ? __NV_E4M3 : __NV_E5M2);
}

__device__ double bn_f8_load(const unsigned char *p, size_t i, int e4m3)
{
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)p[i], e4m3 ? __NV_E4M3 : __NV_E5M2);
    return (double)__half2float(__half(h));
}

/* R = scale_a scale_b A B in float64 for the rows 0, step, 2 step, ... of C (A m x k and B n x k,
 * both K-major: cuBLASLt's TN), R holding those rows one after another. */
__global__ void bn_f8_reference(const unsigned char *A, const unsigned char *B, double *R, int m,
                                int n, int k, int step, int e4b, double scale)
{
    __shared__ double sa[16][17], sb[16][17];
    int rr = blockIdx.y * 16 + threadIdx.y, row = rr * step, col = blockIdx.x * 16 + threadIdx.x;
    int brow = blockIdx.x * 16 + threadIdx.y;     /* B's row (a column of C) this thread loads */
    double acc = 0;
    for (int p0 = 0; p0 < k; p0 += 16) {
        int pa = p0 + threadIdx.x;
        sa[threadIdx.y][threadIdx.x] =
            row < m && pa < k ? bn_f8_load(A, (size_t)row * k + pa, 1) : 0;
        sb[threadIdx.x][threadIdx.y] =
            brow < n && pa < k ? bn_f8_load(B, (size_t)brow * k + pa, e4b) : 0;
        __syncthreads();
        for (int q = 0; q < 16; q++)
            acc += sa[threadIdx.y][q] * sb[q][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n)
        R[(size_t)rr * n + col] = scale * acc;
}

/* The error over the reference's rows of the column-major m x n BF16 C: sums as bn_error. */
__global__ void bn_f8_error(const __nv_bfloat16 *C, const double *R, int rows, int m, int n,
                            int step, double *sums)
{
    bench_error_sums([=](size_t i) {
        size_t rr = i / n, col = i % n;
        return (double)__bfloat162float(C[rr * step + col * (size_t)m]);
    }, R, (size_t)rows * n, sums);
}

typedef struct bn_f8_call {
    int m, n, k, e4b;                   /* e4b: B in E4M3 (1) or E5M2 (0) */
    void *A, *B, *C;
    float *scales;                      /* device: scale_a, scale_b (16-byte aligned each) */
    at_handle *h;
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op[2];         /* [0] fast accumulation off, [1] on */
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulAlgo_t algo[2];
    void *ws;
} bn_f8_call;

/* Ours: column-major C (m x n) = alpha sa sb A^T B with A k x m and B k x n column-major (lda =
 * ldb = k): the TN call, whose row-major canonical form (NT) wgmma reads in place. */
static int bn_f8_ours(const bn_f8_call *c)
{
    at_status s = at_gemm_fp8(c->h, AT_COL_MAJOR, AT_OP_T, AT_OP_N, c->m, c->n, c->k,
                              AT_R_8F_E4M3, c->e4b ? AT_R_8F_E4M3 : AT_R_8F_E5M2, AT_R_16BF, 1.0,
                              c->A, c->k, c->scales, c->B, c->k, c->scales + 4, 0.0, c->C, c->m,
                              NULL);
    if (s != AT_OK)
        fprintf(stderr, "at_gemm_fp8: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_f8_lt(const bn_f8_call *c, int fast)
{
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = cublasLtMatmul(c->lt, c->op[fast], &one, c->A, c->la, c->B, c->lb, &zero,
                                      c->C, c->lc, c->C, c->lc, &c->algo[fast], c->ws,
                                      BN_LT_WORKSPACE, 0);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasLtMatmul FP8 failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

static int bn_f8_lt_accurate(const bn_f8_call *c) { return bn_f8_lt(c, 0); }
static int bn_f8_lt_fast(const bn_f8_call *c) { return bn_f8_lt(c, 1); }

/* cuBLASLt FP8 TN: D (m x n, BF16, column-major) = scale_a scale_b A^T B, A k x m E4M3, B k x n,
 * compute 32F, the scale pointers (16-byte aligned), fast accumulation off ([0]) and on ([1]);
 * the heuristic's first algorithm of each. 0 on success. */
static int bn_f8_lt_setup(bn_f8_call *c)
{
    cublasOperation_t t = CUBLAS_OP_T, no = CUBLAS_OP_N;
    const float *sa = c->scales, *sb = c->scales + 4;
    for (int w = 0; w < 2; w++) {
        int8_t fast = (int8_t)w;
        if (cublasLtMatmulDescCreate(&c->op[w], CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa,
                                           sizeof sa) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb,
                                           sizeof sb) ||
            cublasLtMatmulDescSetAttribute(c->op[w], CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                           sizeof fast))
            return 1;
    }
    if (cublasLtMatrixLayoutCreate(&c->la, CUDA_R_8F_E4M3, c->k, c->m, c->k) ||
        cublasLtMatrixLayoutCreate(&c->lb, c->e4b ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2, c->k, c->n,
                                   c->k) ||
        cublasLtMatrixLayoutCreate(&c->lc, CUDA_R_16BF, c->m, c->n, c->m))
        return 1;
    return bn_lt_algos(c->lt, c->op, c->la, c->lb, c->lc, c->algo);
}

static void bn_f8_lt_teardown(bn_f8_call *c)
{
    bn_lt_destroy(c->op, c->la, c->lb, c->lc);
}

/* The relative error of op's C over the reference rows (bn_check_with). */
static double bn_f8_check(int (*op)(const bn_f8_call *), const bn_f8_call *c, const double *R,
                          int rows, int step, double *sums)
{
    return bn_check_with(op, c, (size_t)c->m * c->n, 0, sums, [=] {
        bn_f8_error<<<1024, 256>>>((const __nv_bfloat16 *)c->C, R, rows, c->m, c->n, step, sums);
    });
}

/* FP8 E4M3 x E4M3 (BENCH_TCGEMM_FP8_B=e5m2: x E5M2) -> BF16, per-tensor scales of A and B
 * (0.75, 1.25), TN: ours (at_gemm_fp8) and cublasLtMatmul with fast accumulation off and on;
 * rounds alternate the order. 0 if every check passed. */
static int bn_fp8_main(at_handle *h, cublasLtHandle_t lt, const cudaDeviceProp *prop, int rounds)
{
    const char *b_env = getenv("BENCH_TCGEMM_FP8_B");
    int e4b = !(b_env && strcmp(b_env, "e5m2") == 0);
    printf("FP8 GEMM E4M3 x %s -> BF16, TN (column-major C = scale_a scale_b A^T B, A and B "
           "K-major), scales 0.75 and 1.25 (device pointers, 16-byte aligned), on %s (cuBLASLt "
           "%zu): ours = at_gemm_fp8 (FP8 wgmma accumulation, as fast accumulation), Lt acc = "
           "cublasLtMatmul with CUBLASLT_MATMUL_DESC_FAST_ACCUM 0, Lt fast = with it 1; error = "
           "||C - R||_F / ||R||_F over every (m/512)-th row against float64 of the decoded inputs; "
           "%d rounds alternating the order, each the median of >= 20 CUDA-event timings; x = "
           "their median ms over ours\n", e4b ? "E4M3" : "E5M2", prop->name, cublasLtGetVersion(),
           rounds);
    printf("\n%-17s %9s %8s %9s | %9s %8s %9s | %9s %8s %9s | %7s %7s  %s\n", "m x n x k",
           "ours ms", "TF/s", "error", "Lt acc ms", "TF/s", "error", "Lt fastms", "TF/s", "error",
           "x acc", "x fast", "configuration (lookup level)");
    int failures = 0, counted = 0;
    double log_fast = 0, log_acc = 0;
    for (int i = 0; i < BN_F8_NSHAPES; i++) {
        bn_f8_call c;
        memset(&c, 0, sizeof c);
        c.m = bn_f8_shapes[i].m;
        c.n = bn_f8_shapes[i].n;
        c.k = bn_f8_shapes[i].k;
        c.e4b = e4b;
        c.h = h;
        c.lt = lt;
        size_t na = (size_t)c.m * c.k, nb = (size_t)c.n * c.k, nc = (size_t)c.m * c.n;
        int step = c.m >= 512 ? c.m / 512 : 1, rows = (c.m + step - 1) / step;
        double *R, *sums;
        BN_CUDA(cudaMalloc(&c.A, na));
        BN_CUDA(cudaMalloc(&c.B, nb));
        BN_CUDA(cudaMalloc(&c.C, nc * 2));
        BN_CUDA(cudaMalloc(&c.scales, 8 * sizeof(float)));
        BN_CUDA(cudaMalloc(&c.ws, BN_LT_WORKSPACE));
        BN_CUDA(cudaMalloc(&R, (size_t)rows * c.n * sizeof(double)));
        BN_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
        const float scales[8] = {BN_F8_SCALE_A, 0, 0, 0, BN_F8_SCALE_B, 0, 0, 0};
        BN_CUDA(cudaMemcpy(c.scales, scales, sizeof scales, cudaMemcpyHostToDevice));
        unsigned long long seed = 0xf8ull * (unsigned long long)(i + 1);
        bn_f8_fill<<<1024, 256>>>((unsigned char *)c.A, na, 1, seed);
        bn_f8_fill<<<1024, 256>>>((unsigned char *)c.B, nb, e4b, seed ^ 0xabcdefull);
        dim3 grid((unsigned)((c.n + 15) / 16), (unsigned)((rows + 15) / 16));
        bn_f8_reference<<<grid, dim3(16, 16)>>>((const unsigned char *)c.A,
                                                (const unsigned char *)c.B, R, c.m, c.n, c.k, step,
                                                e4b, (double)BN_F8_SCALE_A * BN_F8_SCALE_B);
        BN_CUDA(cudaDeviceSynchronize());
        int no_lt = bn_f8_lt_setup(&c);
        double e_ours = bn_f8_check(bn_f8_ours, &c, R, rows, step, sums);
        /* the family's FP8 rule (templates/tcgemm.c): BF16's, plus (4 sqrt(k) + k / 32) 2^-13 */
        double tol = 2 * ldexp(1, -8) + (4 * sqrt((double)c.k) + c.k / 8.0) * ldexp(1, -24) +
                     (4 * sqrt((double)c.k) + c.k / 32.0) * ldexp(1, -13);
        int ok = e_ours >= 0 && e_ours <= tol;
        failures += !ok;
        if (no_lt) {
            /* cuBLASLt's heuristic offers no algorithm (an odd k): ours checked, not timed, the
             * shape left out of the geomean */
            printf("%-17s ours error %.2e%s; cuBLASLt: no FP8 algorithm for %dx%dx%d\n", "",
                   e_ours, ok ? "" : "  ** FAILED CHECK **", c.m, c.n, c.k);
        } else {
            at_stats st;
            at_get_stats(h, &st);
            char config[sizeof st.last_config];
            snprintf(config, sizeof config, "%s", st.last_config);
            at_lookup_level level = st.last_level;
            double e_acc = bn_f8_check(bn_f8_lt_accurate, &c, R, rows, step, sums);
            double e_fast = bn_f8_check(bn_f8_lt_fast, &c, R, rows, step, sums);
            int (*const ops[3])(const bn_f8_call *) = {bn_f8_ours, bn_f8_lt_accurate,
                                                       bn_f8_lt_fast};
            int ran = e_ours >= 0 && e_acc >= 0 && e_fast >= 0;   /* each check's call ran */
            bench_rounds timed = bn_time_rounds(ops, 3, &c, ran ? rounds : 0);
            const double *ms = timed.ms;
            double flop = 2.0 * c.m * c.n * (double)c.k;
            char shape[64];
            snprintf(shape, sizeof shape, "%dx%dx%d", c.m, c.n, c.k);
            double xa = timed.over_first[1], xf = timed.over_first[2];
            printf("%-17s %9.4f %8.1f %9.2e | %9.4f %8.1f %9.2e | %9.4f %8.1f %9.2e | %6.3fx "
                   "%6.3fx  %s (%s)%s\n", shape, ms[0], ms[0] > 0 ? flop / ms[0] / 1e9 : 0, e_ours,
                   ms[1], ms[1] > 0 ? flop / ms[1] / 1e9 : 0, e_acc, ms[2],
                   ms[2] > 0 ? flop / ms[2] / 1e9 : 0, e_fast, xa, xf, config, bn_levels[level],
                   ok ? "" : "  ** FAILED CHECK **");
            fflush(stdout);
            if (xa > 0 && xf > 0) {
                log_acc += log(xa);
                log_fast += log(xf);
                counted++;
            }
        }
        bn_f8_lt_teardown(&c);
        cudaFree(c.A);
        cudaFree(c.B);
        cudaFree(c.C);
        cudaFree(c.scales);
        cudaFree(c.ws);
        cudaFree(R);
        cudaFree(sums);
    }
    if (counted)
        printf("geomean over %d shapes: %.3fx Lt (fast accumulation off), %.3fx Lt (on)\n",
               counted, exp(log_acc / counted), exp(log_fast / counted));
    return failures ? 1 : 0;
}

#include "bench_fp8_block.cuh"

/* The acceptance rule of the tensor-core family (README). */
static double bn_tolerance(const bn_type *ty, int k)
{
    double u_out = ty->type == AT_R_16BF ? ldexp(1, -8) : ty->type == AT_R_16F ? ldexp(1, -11)
                                                                                  : ldexp(1, -24);
    return 2 * u_out + (4 * sqrt((double)k) + k / 8.0) * ldexp(1, -24);
}

/* A mode other than the default (BENCH_TCGEMM_EPILOGUE, _FP8, _FP8_BLOCK), given cuBLASLt and
 * the device's properties: 0 if every check passed. */
typedef int (*bn_mode)(at_handle *h, cublasLtHandle_t lt, const cudaDeviceProp *prop, int rounds);

/* 1 if the environment variable name is set, not empty and not "0". */
static int bn_env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

int main(int argc, char **argv)
{
    const char *db_path = argc > 1 ? argv[1] : NULL;
    const char *only = getenv("BENCH_TCGEMM_TYPES");      /* e.g. "bf16,tf32" */
    const char *rounds_env = getenv("BENCH_TCGEMM_ROUNDS");
    int bn_rounds = rounds_env ? atoi(rounds_env) : 3;
    bn_rounds = bn_rounds < 1 ? 1 : bn_rounds > BENCH_MAX_ROUNDS ? BENCH_MAX_ROUNDS : bn_rounds;
    BN_CUDA(cudaSetDevice(0));
    BN_CUDA(cudaFree(0));       /* primary context, shared with libautotune */
    at_handle *h = NULL;
    at_status s = at_create(&h, 0, db_path);
    if (s != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(s));
        return 1;
    }
    /* the other modes, the first whose variable is set (not empty, not "0") */
    bn_mode mode = bn_env_set("BENCH_TCGEMM_FP8_BLOCK") ? bn_fp8_block_main
                   : bn_env_set("BENCH_TCGEMM_FP8") ? bn_fp8_main
                   : bn_env_set("BENCH_TCGEMM_EPILOGUE") ? bn_epilogue_main : NULL;
    if (mode) {
        cublasLtHandle_t lt;
        if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cublasLtCreate failed\n");
            return 1;
        }
        cudaDeviceProp prop;
        BN_CUDA(cudaGetDeviceProperties(&prop, 0));
        int rc = mode(h, lt, &prop, bn_rounds);
        cublasLtDestroy(lt);
        at_destroy(h);
        return rc;
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
    printf("tcgemm vs cublasGemmEx on %s (driver %d, runtime %d, cuBLAS %d); row-major C = A B, "
           "alpha 1, beta 0, C of the input type (TF32: FP32 data, FP32 C); random inputs in "
           "[-1,1); error = ||C - R||_F / ||R||_F against a float64 product of the same rounded "
           "inputs (TF32: rounded to nearest even); each side timed in R rounds alternating which goes "
           "first (3; %d at 4096^3 and 8192^3: BENCH_TCGEMM_ROUNDS), each round the median of "
           ">= 20 CUDA-event timings after 3 warm-ups; ratio = the sides' median rounds, "
           "paired = the median of the rounds' ratios\n",
           prop.name, drv, rt, cubv, bn_rounds);
    size_t max_a = 0, max_b = 0, max_c = 0;
    for (int i = 0; i < BN_NSHAPES; i++) {
        size_t a = (size_t)bn_shapes[i].m * bn_shapes[i].k, b = (size_t)bn_shapes[i].k *
               bn_shapes[i].n, c = (size_t)bn_shapes[i].m * bn_shapes[i].n;
        max_a = a > max_a ? a : max_a;
        max_b = b > max_b ? b : max_b;
        max_c = c > max_c ? c : max_c;
    }
    void *A, *B, *C;
    double *R, *sums;
    BN_CUDA(cudaMalloc(&A, max_a * 4));
    BN_CUDA(cudaMalloc(&B, max_b * 4));
    BN_CUDA(cudaMalloc(&C, max_c * 4));
    BN_CUDA(cudaMalloc(&R, max_c * sizeof(double)));
    BN_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
    int failures = 0;
    for (int t = 0; t < 3; t++) {
        const bn_type *ty = &bn_types[t];
        if (only && !strstr(only, ty->name))
            continue;
        if (at_set_math_mode(h, ty->tf32 ? AT_MATH_TF32 : AT_MATH_DEFAULT) != AT_OK)
            return 1;
        printf("\n%-5s %-17s %9s %8s %9s | %9s %8s %9s | %7s %7s %2s  %s\n", "type", "m x n x k",
               "ours ms", "TF/s", "error", "cuBLAS ms", "TF/s", "error", "ratio", "paired", "R",
               "configuration (lookup level)");
        double log_sum = 0, lowest = INFINITY;
        int counted = 0;
        for (int i = 0; i < BN_NSHAPES; i++) {
            bn_call c = {ty, bn_shapes[i].m, bn_shapes[i].n, bn_shapes[i].k, A, B, C, h, cublas};
            size_t na = (size_t)c.m * c.k, nb = (size_t)c.k * c.n;
            unsigned long long seed = 0x5eedull * (unsigned long long)(i + 1) + (unsigned)t;
            bn_fill<<<1024, 256>>>(A, na, t, seed, 0, 0);
            bn_fill<<<1024, 256>>>(B, nb, t, seed ^ 0xabcdefull, 0, 0);
            dim3 grid((unsigned)((c.n + 15) / 16), (unsigned)((c.m + 15) / 16));
            bn_reference<<<grid, dim3(16, 16)>>>(A, B, R, c.m, c.n, c.k, t);
            BN_CUDA(cudaDeviceSynchronize());
            double err_ours = bn_check(bn_ours, &c, R, sums);
            double err_vendor = bn_check(bn_vendor, &c, R, sums);
            /* rounds alternating which goes first; the median of each side's medians and the
             * median of the rounds' paired ratios (the issue's two >= 1.0x shapes take
             * BENCH_TCGEMM_ROUNDS) */
            int target = (c.m == 4096 || c.m == 8192) && c.m == c.n && c.n == c.k;
            int rounds = target ? bn_rounds : 3;
            int (*const ops[2])(const bn_call *) = {bn_ours, bn_vendor};
            int ran = err_ours >= 0 && err_vendor >= 0;           /* each check's call ran */
            bench_rounds timed = bn_time_rounds(ops, 2, &c, ran ? rounds : 0);
            double ms_ours = timed.ms[0], ms_vendor = timed.ms[1], paired = timed.over_first[1];
            at_stats st;
            at_get_stats(h, &st);
            double flop = 2.0 * c.m * c.n * (double)c.k;
            double ratio = ms_ours > 0 && ms_vendor > 0 ? ms_vendor / ms_ours : 0;
            int ok = err_ours >= 0 && err_ours <= bn_tolerance(ty, c.k);
            char shape[64];
            snprintf(shape, sizeof shape, "%dx%dx%d", c.m, c.n, c.k);
            printf("%-5s %-17s %9.4f %8.1f %9.2e | %9.4f %8.1f %9.2e | %6.3fx %6.3fx %2d  %s "
                   "(%s)%s\n", ty->name, shape, ms_ours, ms_ours > 0 ? flop / ms_ours / 1e9 : 0,
                   err_ours, ms_vendor, ms_vendor > 0 ? flop / ms_vendor / 1e9 : 0, err_vendor,
                   ratio, paired, timed.done, st.last_config, bn_levels[st.last_level],
                   ok ? "" : "  ** FAILED CHECK **");
            fflush(stdout);
            if (!ok)
                failures++;
            if (ratio > 0) {
                log_sum += log(ratio);
                lowest = ratio < lowest ? ratio : lowest;
                counted++;
            }
        }
        if (counted)
            printf("%-5s geomean %.3fx cuBLAS over %d shapes, lowest %.3fx\n", ty->name,
                   exp(log_sum / counted), counted, lowest);
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
