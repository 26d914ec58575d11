/* test_gemm_api.c: the typed GEMM entry point at_gemm and the handle's math
 * mode: routing by type and math, orders and transposes (the column-major
 * mapping and the leading-dimension rules on the CPU), results against a
 * float64 host reference. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "autotune.h"
#include "cudrv.h"
#include "harness.h"
#include "tpl.h"

/* ---- host conversions (independent of the kernels' code) ---- */

/* float -> bfloat16 bits, round to nearest even (finite inputs). */
static uint16_t ga_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float ga_from_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* float -> IEEE half bits, round to nearest even, for |f| < 65504 and
 * normal results or zero (the tests' inputs are in [-1, 1) scaled). */
static uint16_t ga_to_f16(float f)
{
    if (f == 0.0f)
        return signbit(f) ? 0x8000u : 0;
    int e;
    double m = frexp(fabs((double)f), &e);           /* |f| = m * 2^e, m in [0.5, 1) */
    uint16_t sign = f < 0 ? 0x8000u : 0;
    if (e < -13) {                                   /* subnormal half: multiples of 2^-24 */
        double q = nearbyint(fabs((double)f) * 16777216.0);
        return (uint16_t)(sign | (uint16_t)q);
    }
    double frac = nearbyint((m * 2.0 - 1.0) * 1024.0);  /* 10 mantissa bits */
    int exp = e - 1 + 15;
    if (frac >= 1024.0) {
        frac = 0;
        exp++;
    }
    return (uint16_t)(sign | (uint16_t)(exp << 10) | (uint16_t)frac);
}

static float ga_from_f16(uint16_t h)
{
    int exp = (h >> 10) & 31, frac = h & 1023;
    double v = exp == 0 ? ldexp(frac, -24) : ldexp(1024 + frac, exp - 25);
    return (float)((h & 0x8000u) ? -v : v);
}

/* FP32 -> TF32 rounded to nearest, ties to even (the kernels' TF32 rule;
 * finite inputs). */
static float ga_tf32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

static size_t ga_size(at_dtype t)
{
    return t == AT_R_64F ? 8 : t == AT_R_32F ? 4 : 2;
}

/* Element i of a typed host array, as the kernels' inputs read it. */
static double ga_get(at_dtype t, int tf32, const void *v, size_t i)
{
    if (t == AT_R_16BF)
        return ga_from_bf16(((const uint16_t *)v)[i]);
    if (t == AT_R_16F)
        return ga_from_f16(((const uint16_t *)v)[i]);
    if (t == AT_R_64F)
        return ((const double *)v)[i];
    float f = ((const float *)v)[i];
    return tf32 ? ga_tf32(f) : f;
}

static void ga_set(at_dtype t, void *v, size_t i, float f)
{
    if (t == AT_R_16BF)
        ((uint16_t *)v)[i] = ga_to_bf16(f);
    else if (t == AT_R_16F)
        ((uint16_t *)v)[i] = ga_to_f16(f);
    else if (t == AT_R_64F)
        ((double *)v)[i] = f;
    else
        ((float *)v)[i] = f;
}

static void *ga_random(at_dtype t, size_t count, unsigned seed)
{
    void *v = malloc(count * ga_size(t) + 16);
    for (size_t i = 0; v && i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        ga_set(t, v, i, -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f);
    }
    return v;
}

/* The acceptance rule of the tensor-core family (README, templates/tcgemm.c):
 * relative Frobenius error <= 2 u_out + (4 sqrt(k) + k/8) 2^-24; exact FP32
 * is held to the same FP32 bound. */
static double ga_tolerance(at_dtype t, int k)
{
    /* double: dgemm's rule (16 + 8 sqrt(k)) 2^-53, four times over, since this host
     * reference sums in plain double (float-valued inputs: its products are exact) */
    if (t == AT_R_64F)
        return (16 + 8 * sqrt((double)k)) * ldexp(1, -51);
    double u_out = t == AT_R_16BF ? ldexp(1, -8) : t == AT_R_16F ? ldexp(1, -11) : ldexp(1, -24);
    return 2 * u_out + (4 * sqrt((double)k) + k / 8.0) * ldexp(1, -24);
}

typedef struct ga_case {
    at_dtype type;
    int tf32;                       /* handle math mode TF32 */
    int m, n, k, lda, ldb, ldc;
    int offset;                     /* elements the operands start after an aligned base */
    double alpha, beta;
    int nan_c;                      /* C starts as NaN (beta must be 0) */
    at_order order;                 /* zero: row-major, N, N */
    at_op op_a, op_b;
} ga_case;

/* Where element (i, j) of op(X), an r x c matrix, lies in X as stored with leading dimension
 * ld, written out for each case (independent of the library's mapping): row-major N and
 * column-major T keep rows of op(X) contiguous, the other two its columns. */
static size_t ga_index(at_order order, at_op op, long long ld, long long i, long long j)
{
    int rows_contiguous = (order == AT_ROW_MAJOR) == (op == AT_OP_N);
    return rows_contiguous ? (size_t)(i * ld + j) : (size_t)(j * ld + i);
}

/* The smallest ld of an r x c op(X) (BLAS): the length of the contiguous lines. */
static long long ga_min_ld(at_order order, at_op op, long long r, long long c)
{
    long long need = (order == AT_ROW_MAJOR) == (op == AT_OP_N) ? c : r;
    return need > 1 ? need : 1;
}

/* Lines (of ld elements) an r x c op(X) spans as stored. */
static size_t ga_lines(at_order order, at_op op, long long r, long long c)
{
    return (size_t)((order == AT_ROW_MAJOR) == (op == AT_OP_N) ? r : c);
}

typedef struct ga_gpu {
    const cudrv *cu;
    CUcontext ctx;
    CUdevice dev;
} ga_gpu;

static int ga_begin(ga_gpu *g)
{
    at_status s;
    g->cu = cudrv_get(&s, NULL, 0);
    return g->cu && g->cu->Init(0) == CUDA_SUCCESS &&
           g->cu->DeviceGet(&g->dev, th_device()) == CUDA_SUCCESS &&
           g->cu->DevicePrimaryCtxRetain(&g->ctx, g->dev) == CUDA_SUCCESS &&
           g->cu->CtxPushCurrent(g->ctx) == CUDA_SUCCESS;
}

static void ga_end(ga_gpu *g)
{
    CUcontext popped;
    g->cu->CtxPopCurrent(&popped);
    g->cu->DevicePrimaryCtxRelease(g->dev);
}

/* Runs one case through at_gemm; *error gets the relative error against the
 * float64 product of the same (rounded) inputs, and C's padding must come
 * back untouched. AT_OK or the call's status (message via at_errmsg). */
static at_status ga_run(ga_gpu *g, at_handle *h, const ga_case *c, double *error,
                        int *padding_ok)
{
    size_t es = ga_size(c->type),
           na = ga_lines(c->order, c->op_a, c->m, c->k) * c->lda + c->offset,
           nb = ga_lines(c->order, c->op_b, c->k, c->n) * c->ldb + c->offset,
           nc = ga_lines(c->order, AT_OP_N, c->m, c->n) * c->ldc + c->offset;
    void *A = ga_random(c->type, na, 11u + (unsigned)c->m), *B = ga_random(c->type, nb, 23u),
         *C0 = ga_random(c->type, nc, 37u), *C = malloc(nc * es + 16);
    if (c->nan_c)
        for (size_t i = 0; i < nc; i++)
            ga_set(c->type, C0, i, NAN);
    CUdeviceptr dA = 0, dB = 0, dC = 0;
    at_status s = AT_ERR_CUDA;
    if (!A || !B || !C0 || !C || g->cu->MemAlloc(&dA, na * es) || g->cu->MemAlloc(&dB, nb * es) ||
        g->cu->MemAlloc(&dC, nc * es) || g->cu->MemcpyHtoD(dA, A, na * es) ||
        g->cu->MemcpyHtoD(dB, B, nb * es) || g->cu->MemcpyHtoD(dC, C0, nc * es))
        goto done;
    s = at_set_math_mode(h, c->tf32 ? AT_MATH_TF32 : AT_MATH_DEFAULT);
    if (s != AT_OK)
        goto done;
    size_t off = (size_t)c->offset * es;
    s = at_gemm(h, c->order, c->op_a, c->op_b, c->m, c->n, c->k, c->type, c->alpha,
                (const void *)(uintptr_t)(dA + off), c->lda, (const void *)(uintptr_t)(dB + off),
                c->ldb, c->beta, (void *)(uintptr_t)(dC + off), c->ldc);
    if (s != AT_OK)
        goto done;
    if (g->cu->CtxSynchronize() || g->cu->MemcpyDtoH(C, dC, nc * es)) {
        s = AT_ERR_CUDA;
        goto done;
    }
    double num = 0, den = 0;
    *padding_ok = 1;
    /* C's padding (every element of the buffer outside the m x n matrix) comes back as it was */
    unsigned char *in_c = calloc(nc, 1);
    if (!in_c) {
        s = AT_ERR_NO_MEMORY;
        goto done;
    }
    for (int i = 0; i < c->m; i++) {
        for (int j = 0; j < c->n; j++) {
            size_t ic = (size_t)c->offset + ga_index(c->order, AT_OP_N, c->ldc, i, j);
            in_c[ic] = 1;
            double got = ga_get(c->type, 0, C, ic);
            double ref = 0;
            for (int p = 0; p < c->k; p++)
                ref += ga_get(c->type, c->tf32, A,
                              (size_t)c->offset + ga_index(c->order, c->op_a, c->lda, i, p)) *
                       ga_get(c->type, c->tf32, B,
                              (size_t)c->offset + ga_index(c->order, c->op_b, c->ldb, p, j));
            ref *= c->alpha;
            if (c->beta != 0)
                ref += c->beta * ga_get(c->type, 0, C0, ic);
            num += (got - ref) * (got - ref);
            den += ref * ref;
        }
    }
    for (size_t ic = 0; ic < nc; ic++) {
        double got = ga_get(c->type, 0, C, ic), was = ga_get(c->type, 0, C0, ic);
        if (!in_c[ic] && !(got == was || (isnan(got) && isnan(was))))
            *padding_ok = 0;
    }
    free(in_c);
    *error = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
done:
    if (dA)
        g->cu->MemFree(dA);
    if (dB)
        g->cu->MemFree(dB);
    if (dC)
        g->cu->MemFree(dC);
    free(A);
    free(B);
    free(C0);
    free(C);
    return s;
}

GPU_TEST(gemm_api_every_type_odd_shapes_unaligned)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_api.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    static const at_dtype types[] = {AT_R_16BF, AT_R_16F, AT_R_32F};
    static const ga_case shapes[] = {
        /* m, n, k, lda, ldb, ldc, offset, alpha, beta, nan_c, order, ops */
        {0, 0, 1, 1, 1, 1, 1, 1, 0, 1.0, 0.0, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 7, 13, 5, 5, 13, 13, 0, 1.0, 0.0, 1, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 129, 65, 33, 35, 67, 70, 1, -0.5, 0.75, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 256, 192, 320, 320, 192, 192, 0, 1.0, 0.0, 1, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 301, 257, 263, 263, 257, 261, 3, 2.0, -1.0, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
        {0, 0, 64, 1000, 17, 24, 1000, 1003, 0, 1.0, 1.0, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N},
    };
    for (int t = 0; t < 3; t++) {
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            ga_case c = shapes[i];
            c.type = types[t];
            c.tf32 = types[t] == AT_R_32F;
            double err = 0;
            int padding_ok = 0;
            at_status s = ga_run(&g, h, &c, &err, &padding_ok);
            CHECK_MSG(s == AT_OK, "type %d %dx%dx%d: %s: %s", (int)c.type, c.m, c.n, c.k,
                      at_status_string(s), at_errmsg(h));
            CHECK_MSG(err <= ga_tolerance(c.type, c.k), "type %d %dx%dx%d lda %d ldb %d "
                      "ldc %d offset %d: error %.3g > %.3g", (int)c.type, c.m, c.n, c.k, c.lda,
                      c.ldb, c.ldc, c.offset, err, ga_tolerance(c.type, c.k));
            CHECK_MSG(padding_ok, "type %d %dx%dx%d wrote C's padding", (int)c.type, c.m, c.n,
                      c.k);
            at_stats st;
            CHECK_OK(at_get_stats(h, &st));
            /* the tensor-core family names its TYPE; 0 BF16, 1 FP16, 2 TF32 */
            char want[16];
            snprintf(want, sizeof want, "TYPE=%d", t);
            CHECK_MSG(strstr(st.last_config, want) != NULL, "type %d ran %s", (int)c.type,
                      st.last_config);
        }
    }
    CHECK_OK(at_destroy(h));
    ga_end(&g);
}

GPU_TEST(gemm_api_fp32_is_exact_unless_tf32_is_asked_for)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_math.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    ga_case c = {AT_R_32F, 0, 96, 80, 512, 512, 80, 80, 0, 1.0, 0.0, 0, AT_ROW_MAJOR, AT_OP_N, AT_OP_N};
    double exact_err = 0, tf32_err = 0;
    int padding_ok = 0;
    at_stats st;
    /* default math: the FP32 (FFMA) family, error at FP32 level */
    CHECK_OK(ga_run(&g, h, &c, &exact_err, &padding_ok));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(strstr(st.last_config, "TYPE=") == NULL, "default math ran %s", st.last_config);
    CHECK_MSG(exact_err < 1e-6, "exact FP32 error %.3g", exact_err);
    /* TF32 on: the tensor-core family; the same data's error against the
     * unrounded product is at TF32 level (rounding off 13 bits shows) */
    c.tf32 = 1;
    CHECK_OK(ga_run(&g, h, &c, &tf32_err, &padding_ok));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(strstr(st.last_config, "TYPE=2") != NULL, "TF32 math ran %s", st.last_config);
    CHECK_MSG(tf32_err <= ga_tolerance(AT_R_32F, c.k), "TF32 error %.3g", tf32_err);
    /* at_sgemm ignores the math mode: still exact (no TYPE parameter) */
    float *A = malloc(sizeof(float) * 64 * 64), *B = malloc(sizeof(float) * 64 * 64);
    CHECK(A && B);
    for (int i = 0; i < 64 * 64; i++) {
        A[i] = 1.0f + ldexp(1, -20) * (i % 7);        /* low bits TF32 drops */
        B[i] = 1.0f;
    }
    CUdeviceptr dA, dB, dC;
    CHECK(g.cu->MemAlloc(&dA, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemAlloc(&dB, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemAlloc(&dC, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyHtoD(dA, A, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyHtoD(dB, B, sizeof(float) * 64 * 64) == CUDA_SUCCESS);
    CHECK_OK(at_set_math_mode(h, AT_MATH_TF32));
    CHECK_OK(at_sgemm(h, 64, 64, 64, 1.0f, (const float *)dA, 64, (const float *)dB, 64, 0.0f,
                      (float *)dC, 64));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(strstr(st.last_config, "TYPE=") == NULL, "at_sgemm ran %s", st.last_config);
    float C[64];
    CHECK(g.cu->CtxSynchronize() == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyDtoH(C, dC, sizeof C) == CUDA_SUCCESS);
    for (int j = 0; j < 64; j++) {
        double ref = 0;
        for (int p = 0; p < 64; p++)
            ref += A[p];                          /* row 0 of A times a column of ones */
        CHECK_MSG(fabs(C[j] - ref) <= 1e-6 * ref, "at_sgemm under TF32 mode: %.9g vs %.9g",
                  C[j], ref);
    }
    g.cu->MemFree(dA);
    g.cu->MemFree(dB);
    g.cu->MemFree(dC);
    free(A);
    free(B);
    CHECK_OK(at_destroy(h));
    ga_end(&g);
}

GPU_TEST(gemm_api_refuses_what_it_does_not_compute)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_refuse.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CUdeviceptr d;
    CHECK(g.cu->MemAlloc(&d, 4096) == CUDA_SUCCESS);
    CHECK(g.cu->MemsetD8Async(d, 0x5a, 4096, 0) == CUDA_SUCCESS);
    const void *p = (const void *)(uintptr_t)d;
    void *c = (void *)(uintptr_t)d;
    /* column-major and op T with leading dimensions below the BLAS minimum */
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_N, AT_OP_N, 6, 4, 4, AT_R_16BF, 1, p, 5, p, 4, 0, c, 6),
             AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "lda") != NULL, "message: %s", at_errmsg(h));
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_T, AT_OP_N, 6, 4, 4, AT_R_16F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_N, AT_OP_T, 4, 6, 4, AT_R_32F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_N, AT_OP_N, 6, 4, 4, AT_R_32F, 1, p, 6, p, 4, 0, c, 5),
             AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "ldc") != NULL, "message: %s", at_errmsg(h));
    CHECK_EQ(at_gemm(h, (at_order)2, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_32F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, (at_op)2, AT_OP_N, 4, 4, 4, AT_R_32F, 1, p, 4, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    /* double follows the same BLAS rules: column-major op T A is stored k x m, lda >= k */
    CHECK_EQ(at_gemm(h, AT_COL_MAJOR, AT_OP_T, AT_OP_T, 6, 4, 4, AT_R_64F, 1, p, 3, p, 4, 0, c, 6),
             AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "lda") != NULL, "message: %s", at_errmsg(h));
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, (at_dtype)9, 1, p, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_16BF, 1, p, 3, p, 4, 0, c, 4),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, -1, 4, 4, AT_R_16BF, 1, p, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_16BF, 1, NULL, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 4, 4, 4, AT_R_16BF, NAN, p, 4, p, 4, 0, c,
                     4), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_set_math_mode(h, (at_math)7), AT_ERR_INVALID_ARG);
    /* nothing was written by the refused calls */
    unsigned char back[4096];
    CHECK(g.cu->CtxSynchronize() == CUDA_SUCCESS);
    CHECK(g.cu->MemcpyDtoH(back, d, sizeof back) == CUDA_SUCCESS);
    for (size_t i = 0; i < sizeof back; i++)
        CHECK_MSG(back[i] == 0x5a, "byte %zu changed", i);
    g.cu->MemFree(d);
    CHECK_OK(at_destroy(h));
    ga_end(&g);
}

TEST(gemm_api_null_handle_and_host_conversions)
{
    CHECK_EQ(at_gemm(NULL, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 1, 1, 1, AT_R_16BF, 1, NULL, 1, NULL, 1,
                     0, NULL, 1), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_set_math_mode(NULL, AT_MATH_TF32), AT_ERR_INVALID_ARG);
    /* the test's own conversions, against values worked out by hand */
    CHECK_EQ(ga_to_bf16(1.0f), 0x3f80);
    CHECK_EQ(ga_to_bf16(1.00390625f), 0x3f80);        /* a tie: rounds to even */
    CHECK_EQ(ga_to_bf16(1.01171875f), 0x3f82);        /* a tie: rounds to even (up) */
    CHECK_EQ(ga_to_f16(1.0f), 0x3c00);
    CHECK_EQ(ga_to_f16(-2.0f), 0xc000);
    CHECK_EQ(ga_to_f16(0.333251953125f), 0x3555);
    CHECK(ga_from_f16(0x3555) == 0.333251953125f);
    CHECK(ga_from_f16(0x0001) == (float)ldexp(1, -24));
    CHECK(ga_tf32(1.0f + (float)ldexp(1, -11)) == 1.0f);     /* a tie: to even (down) */
    CHECK(ga_tf32(1.0f + (float)ldexp(3, -11)) == 1.0f + (float)ldexp(1, -9));   /* a tie: up */
    CHECK(ga_tf32(1.0f + (float)ldexp(1, -11) + (float)ldexp(1, -20)) ==
          1.0f + (float)ldexp(1, -10));                        /* above half: up */
    CHECK(ga_tf32(-1.9999999f) == -2.0f);                      /* up into the next binade */
    CHECK(ga_tf32(1.0f + (float)ldexp(1, -10)) == 1.0f + (float)ldexp(1, -10));
}

/* Every type x op_a x op_b x order through at_gemm at odd sizes, unaligned leading
 * dimensions and offsets (16-bit: rows of odd byte length; FP32: pointers one element past
 * a 16-byte boundary), against the float64 host product; exact FP32 and FP64 must run the
 * matmul / dgemm configuration of the canonical ops (column-major swaps them: tpl.h). */
GPU_TEST(gemm_api_every_order_and_transpose)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_ops.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    static const at_dtype types[] = {AT_R_16BF, AT_R_16F, AT_R_32F, AT_R_32F, AT_R_64F};
    static const int sizes[][5] = {
        /* m, n, k, ld padding, offset */
        {129, 65, 33, 3, 1}, {1, 1, 1, 0, 0}, {64, 100, 48, 0, 0}, {70, 260, 129, 1, 1},
    };
    int runs = 0;
    for (int t = 0; t < 5; t++)
        for (int order = 0; order < 2; order++)
            for (int ops = 0; ops < 4; ops++)
                for (size_t z = 0; z < sizeof sizes / sizeof sizes[0] && !th_failed(); z++) {
                    ga_case c;
                    memset(&c, 0, sizeof c);
                    c.type = types[t];
                    c.tf32 = t == 2;                /* FP32 twice: TF32 math, then exact */
                    c.order = order ? AT_COL_MAJOR : AT_ROW_MAJOR;
                    c.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
                    c.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
                    c.m = sizes[z][0];
                    c.n = sizes[z][1];
                    c.k = sizes[z][2];
                    c.lda = (int)ga_min_ld(c.order, c.op_a, c.m, c.k) + sizes[z][3];
                    c.ldb = (int)ga_min_ld(c.order, c.op_b, c.k, c.n) + sizes[z][3];
                    c.ldc = (int)ga_min_ld(c.order, AT_OP_N, c.m, c.n) + sizes[z][3];
                    c.offset = sizes[z][4];
                    c.alpha = z % 2 ? -0.5 : 1.25;
                    c.beta = z == 1 ? 0.0 : 0.75;
                    double err = 0;
                    int padding_ok = 0;
                    at_status s = ga_run(&g, h, &c, &err, &padding_ok);
                    CHECK_MSG(s == AT_OK && err <= ga_tolerance(c.type, c.k) && padding_ok,
                              "type %d%s %s %s%s %dx%dx%d ld %d/%d/%d offset %d: %s %s, error "
                              "%.3g (bound %.3g), padding %s", (int)c.type, c.tf32 ? " tf32" : "",
                              order ? "col" : "row", c.op_a ? "T" : "N", c.op_b ? "T" : "N", c.m,
                              c.n, c.k, c.lda, c.ldb, c.ldc, c.offset, at_status_string(s),
                              at_errmsg(h), err, ga_tolerance(c.type, c.k),
                              padding_ok ? "kept" : "WRITTEN");
                    at_stats st;
                    CHECK_OK(at_get_stats(h, &st));
                    if ((c.type == AT_R_32F && !c.tf32) || c.type == AT_R_64F) {
                        /* canonical ops: column-major swaps A and B with their ops */
                        int opa = order ? (ops >> 1) : (ops & 1), opb = order ? (ops & 1) : (ops >> 1);
                        char want[32];
                        snprintf(want, sizeof want, "OPA=%d,OPB=%d", opa, opb);
                        CHECK_MSG(strstr(st.last_config, want) != NULL, "%s %d: ran %s",
                                  order ? "col" : "row", ops, st.last_config);
                    }
                    runs++;
                }
    CHECK_EQ(runs, 5 * 2 * 4 * 4);
    CHECK_OK(at_destroy(h));
    ga_end(&g);
}

/* ---- CPU tier: the mapping and the argument rules, against the host ---- */

/* Row-major host GEMM with ops (the form the families compute): C = op(A) op(B), op(A) m x k. */
static void ga_host_row_major(const tpl_args *a, const double *A, const double *B, double *C)
{
    const tpl_problem *p = &a->problem;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    long long lda = a->operand[TPL_GEMM_A].ld, ldb = a->operand[TPL_GEMM_B].ld,
              ldc = a->operand[TPL_GEMM_C].ld;
    for (long long i = 0; i < m; i++)
        for (long long j = 0; j < n; j++) {
            double acc = 0;
            for (long long q = 0; q < k; q++)
                acc += (p->op_a == AT_OP_T ? A[q * lda + i] : A[i * lda + q]) *
                       (p->op_b == AT_OP_T ? B[j * ldb + q] : B[q * ldb + j]);
            C[i * ldc + j] = acc;
        }
}

/* A column-major call, mapped by ag_gemm_canonical and computed row-major on the host, gives
 * what the column-major definition gives, element for element, for every pair of ops; a
 * row-major call is left as it is. */
TEST(gemm_mapping_column_major_is_row_major_swapped)
{
    static const int sizes[][3] = {{3, 5, 7}, {1, 4, 2}, {6, 1, 1}, {5, 5, 5}};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int ops = 0; ops < 4; ops++) {
            int m = sizes[z][0], n = sizes[z][1], k = sizes[z][2];
            at_op op_a = (ops & 1) ? AT_OP_T : AT_OP_N, op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            /* column-major: op N A is m x k with lda >= m; op T A is k x m with lda >= k */
            int lda = (op_a == AT_OP_N ? m : k) + 2, ldb = (op_b == AT_OP_N ? k : n) + 1,
                ldc = m + 3;
            double A[256], B[256], C[256], want[256];
            for (int i = 0; i < 256; i++) {
                A[i] = (double)((i * 37) % 19) - 9;
                B[i] = (double)((i * 53) % 23) - 11;
                C[i] = want[i] = -1000;
            }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int q = 0; q < k; q++)
                        acc += (op_a == AT_OP_N ? A[i + q * lda] : A[q + i * lda]) *
                               (op_b == AT_OP_N ? B[q + j * ldb] : B[j + q * ldb]);
                    want[i + j * ldc] = acc;
                }
            tpl_args args = tpl_gemm_args(m, n, k, 1.0f, (CUdeviceptr)(uintptr_t)A, lda,
                                          (CUdeviceptr)(uintptr_t)B, ldb, 0.0f,
                                          (CUdeviceptr)(uintptr_t)C, ldc);
            args.problem.order = AT_COL_MAJOR;
            args.problem.op_a = op_a;
            args.problem.op_b = op_b;
            char err[256];
            CHECK_OK(ag_gemm_check(&args, err, sizeof err));
            ag_gemm_canonical(&args);
            const tpl_problem *p = &args.problem;
            CHECK(p->order == AT_ROW_MAJOR && p->dims[0] == n && p->dims[1] == m &&
                  p->dims[2] == k && p->op_a == op_b && p->op_b == op_a);
            CHECK(args.operand[TPL_GEMM_A].ptr == (CUdeviceptr)(uintptr_t)B &&
                  args.operand[TPL_GEMM_A].ld == ldb && args.operand[TPL_GEMM_C].ld == ldc);
            /* the canonical call obeys the row-major rules */
            CHECK_OK(ag_gemm_check(&args, err, sizeof err));
            ga_host_row_major(&args, (const double *)(uintptr_t)args.operand[TPL_GEMM_A].ptr,
                              (const double *)(uintptr_t)args.operand[TPL_GEMM_B].ptr, C);
            for (int i = 0; i < 256; i++)
                CHECK_MSG(C[i] == want[i], "%dx%dx%d ops %d: element %d %g != %g", m, n, k, ops,
                          i, C[i], want[i]);
            /* row-major calls are already canonical */
            tpl_args row = tpl_gemm_args(m, n, k, 1.0f, 1, lda, 2, ldb, 0.0f, 3, ldc);
            row.problem.op_a = op_a;
            tpl_args before = row;
            ag_gemm_canonical(&row);
            CHECK(memcmp(&row, &before, sizeof row) == 0);
        }
}

/* The leading-dimension rules of every order and op (BLAS: row-major ld >= the columns of X
 * as stored, column-major >= its rows), at the minimum (accepted) and one below (refused,
 * naming the argument), written out here from the definitions; negative sizes and values
 * outside the enums refused. */
TEST(gemm_check_leading_dimensions_by_order_and_op)
{
    const int m = 7, n = 5, k = 3;
    for (int order = 0; order < 2; order++)
        for (int ops = 0; ops < 4; ops++) {
            at_op op_a = (ops & 1) ? AT_OP_T : AT_OP_N, op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            int need[3];
            if (order == 0) {   /* row-major: A m x k or k x m, B k x n or n x k, C m x n */
                need[0] = op_a == AT_OP_N ? k : m;
                need[1] = op_b == AT_OP_N ? n : k;
                need[2] = n;
            } else {            /* column-major: the rows of each as stored */
                need[0] = op_a == AT_OP_N ? m : k;
                need[1] = op_b == AT_OP_N ? k : n;
                need[2] = m;
            }
            static const char *const names[3] = {"lda", "ldb", "ldc"};
            for (int which = -1; which < 3; which++) {
                int ld[3] = {need[0], need[1], need[2]};
                if (which >= 0)
                    ld[which]--;
                tpl_args a = tpl_gemm_args(m, n, k, 1.0f, 16, ld[0], 32, ld[1], 0.0f, 48, ld[2]);
                a.problem.order = order ? AT_COL_MAJOR : AT_ROW_MAJOR;
                a.problem.op_a = op_a;
                a.problem.op_b = op_b;
                char err[256] = "";
                at_status s = ag_gemm_check(&a, err, sizeof err);
                if (which < 0) {
                    CHECK_MSG(s == AT_OK, "order %d ops %d at the minimum: %s", order, ops, err);
                } else {
                    CHECK_MSG(s == AT_ERR_INVALID_ARG && strstr(err, names[which]) != NULL,
                              "order %d ops %d %s one below: %s", order, ops, names[which], err);
                }
                CHECK_EQ(tpl_gemm_min_ld(a.problem.order, which == 1 ? op_b : op_a,
                                         which == 1 ? k : m, which == 1 ? n : k),
                         need[which == 1 ? 1 : 0]);
            }
        }
    /* empty matrices: ld >= 1 */
    tpl_args e = tpl_gemm_args(0, 0, 0, 1.0f, 0, 1, 0, 1, 0.0f, 0, 1);
    char err[256];
    CHECK_OK(ag_gemm_check(&e, err, sizeof err));
    e.operand[TPL_GEMM_B].ld = 0;
    CHECK_EQ(ag_gemm_check(&e, err, sizeof err), AT_ERR_INVALID_ARG);
    tpl_args bad = tpl_gemm_args(-1, 4, 4, 1.0f, 0, 4, 0, 4, 0.0f, 0, 4);
    CHECK_EQ(ag_gemm_check(&bad, err, sizeof err), AT_ERR_INVALID_ARG);
    CHECK(strstr(err, "negative") != NULL);
    bad = tpl_gemm_args(4, 4, 4, 1.0f, 0, 4, 0, 4, 0.0f, 0, 4);
    bad.problem.order = (at_order)2;
    CHECK_EQ(ag_gemm_check(&bad, err, sizeof err), AT_ERR_INVALID_ARG);
    bad.problem.order = AT_ROW_MAJOR;
    bad.problem.op_b = (at_op)5;
    CHECK_EQ(ag_gemm_check(&bad, err, sizeof err), AT_ERR_INVALID_ARG);
}
