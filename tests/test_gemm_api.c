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
#include "db.h"
#include "harness.h"
#include "th_half.h"
#include "tpl.h"

/* ---- host conversions (independent of the kernels' code; the 16-bit formats: th_half.c) ---- */

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
        return th_from_bf16(((const uint16_t *)v)[i]);
    if (t == AT_R_16F)
        return (float)th_from_f16(((const uint16_t *)v)[i]);
    if (t == AT_R_64F)
        return ((const double *)v)[i];
    float f = ((const float *)v)[i];
    return tf32 ? ga_tf32(f) : f;
}

static void ga_set(at_dtype t, void *v, size_t i, float f)
{
    if (t == AT_R_16BF)
        ((uint16_t *)v)[i] = th_to_bf16(f);
    else if (t == AT_R_16F)
        ((uint16_t *)v)[i] = th_to_f16(f);
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

/* The case of one type (tf32: the handle's TF32 math), order and op pair (bit 0 op(A) = T,
 * bit 1 op(B) = T) at m x n x k, each leading dimension the smallest its order and op allow
 * plus its pad; offset, alpha and beta zero for the caller to set. */
static ga_case ga_case_of(at_dtype type, int tf32, at_order order, int ops, int m, int n, int k,
                          int pad_a, int pad_b, int pad_c)
{
    ga_case c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.tf32 = tf32;
    c.order = order;
    c.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
    c.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
    c.m = m;
    c.n = n;
    c.k = k;
    c.lda = (int)ga_min_ld(c.order, c.op_a, c.m, c.k) + pad_a;
    c.ldb = (int)ga_min_ld(c.order, c.op_b, c.k, c.n) + pad_b;
    c.ldc = (int)ga_min_ld(c.order, AT_OP_N, c.m, c.n) + pad_c;
    return c;
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
            /* the tensor-core family (its TYPE 0 BF16, 1 FP16, 2 TF32), or the skinny family
             * for the small shapes it claims; never the FP32 family */
            char want[16];
            snprintf(want, sizeof want, "TYPE=%d", t);
            CHECK_MSG((strcmp(st.last_kernel, "tcgemm") == 0 &&
                       strstr(st.last_config, want) != NULL) ||
                          strcmp(st.last_kernel, "skinny") == 0,
                      "type %d ran %s %s", (int)c.type, st.last_kernel, st.last_config);
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
    /* default math: a CUDA-core family (matmul, or skinny for this small output), error at
     * FP32 level */
    CHECK_OK(ga_run(&g, h, &c, &exact_err, &padding_ok));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG(strcmp(st.last_kernel, "matmul") == 0 || strcmp(st.last_kernel, "skinny") == 0,
              "default math ran %s %s", st.last_kernel, st.last_config);
    CHECK_MSG(exact_err < 1e-6, "exact FP32 error %.3g", exact_err);
    /* TF32 on: the tensor-core family (or skinny, rounding to TF32 alike); the same data's
     * error against the unrounded product is at TF32 level (rounding off 13 bits shows) */
    c.tf32 = 1;
    CHECK_OK(ga_run(&g, h, &c, &tf32_err, &padding_ok));
    CHECK_OK(at_get_stats(h, &st));
    CHECK_MSG((strcmp(st.last_kernel, "tcgemm") == 0 && strstr(st.last_config, "TYPE=2")) ||
                  strcmp(st.last_kernel, "skinny") == 0,
              "TF32 math ran %s %s", st.last_kernel, st.last_config);
    CHECK_MSG(tf32_err <= ga_tolerance(AT_R_32F, c.k), "TF32 error %.3g", tf32_err);
    /* at_sgemm ignores the math mode: still exact (never the tensor-core family; the result
     * keeps the low bits TF32 would drop) */
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
    CHECK_MSG(strcmp(st.last_kernel, "tcgemm") != 0, "at_sgemm ran %s %s", st.last_kernel,
              st.last_config);
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
    CHECK_EQ(th_to_bf16(1.0f), 0x3f80);
    CHECK_EQ(th_to_bf16(1.00390625f), 0x3f80);        /* a tie: rounds to even */
    CHECK_EQ(th_to_bf16(1.01171875f), 0x3f82);        /* a tie: rounds to even (up) */
    CHECK_EQ(th_to_f16(1.0f), 0x3c00);
    CHECK_EQ(th_to_f16(-2.0f), 0xc000);
    CHECK_EQ(th_to_f16(0.333251953125f), 0x3555);
    CHECK((float)th_from_f16(0x3555) == 0.333251953125f);
    CHECK((float)th_from_f16(0x0001) == (float)ldexp(1, -24));
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
                    /* FP32 twice: TF32 math, then exact */
                    ga_case c = ga_case_of(types[t], t == 2, order ? AT_COL_MAJOR : AT_ROW_MAJOR,
                                           ops, sizes[z][0], sizes[z][1], sizes[z][2],
                                           sizes[z][3], sizes[z][3], sizes[z][3]);
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

/* Every built-in default row's class on this GPU, with a fresh database (nothing tuned, no
 * trials): split-K (few tiles, deep K), small and large outputs, each type, every
 * op pair and both orders at the class's shape; the result against float64 and the row that
 * ran named by the stats. */
GPU_TEST(gemm_api_builtin_defaults_of_every_class)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_defaults.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    static const struct { at_dtype t; int tf32; } types[] = {
        {AT_R_16BF, 0}, {AT_R_16F, 0}, {AT_R_32F, 1}, {AT_R_32F, 0}, {AT_R_64F, 0},
    };
    /* the host reference costs m n k per case: each class at its smallest */
    static const int sizes[][3] = {
        {130, 257, 2100},    /* 6 tiles of 128 x 128, deep: split-K 4 */
        {700, 900, 200},     /* 48 tiles, shallow: 128 x 128 */
        {1700, 2500, 16},    /* 280 tiles: 128 x 256 (BF16/FP16) */
        {17, 4099, 33},      /* odd and thin */
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int ops = 0; ops < 4 && !th_failed(); ops++) {
                ga_case c = ga_case_of(types[t].t, types[t].tf32,
                                       (ops + (int)z) % 2 ? AT_COL_MAJOR : AT_ROW_MAJOR, ops,
                                       sizes[z][0], sizes[z][1], sizes[z][2], 0, 0, 0);
                c.alpha = 1.0;
                c.beta = ops == 3 ? 0.5 : 0.0;
                double err = 0;
                int padding_ok = 0;
                at_status s = ga_run(&g, h, &c, &err, &padding_ok);
                at_stats st;
                CHECK_OK(at_get_stats(h, &st));
                CHECK_MSG(s == AT_OK && err <= ga_tolerance(c.type, c.k) && padding_ok,
                          "type %d%s %s %s%s %dx%dx%d: %s %s, error %.3g (bound %.3g), ran %s",
                          (int)c.type, c.tf32 ? " tf32" : "", c.order ? "col" : "row",
                          c.op_a ? "T" : "N", c.op_b ? "T" : "N", c.m, c.n, c.k,
                          at_status_string(s), at_errmsg(h), err, ga_tolerance(c.type, c.k),
                          st.last_config);
                CHECK_EQ(st.last_level, AT_LOOKUP_DEFAULT);
            }
    CHECK_OK(at_destroy(h));
    ga_end(&g);
}

/* The shape classes the skinny family serves without measurements (a side of at most 16, a
 * small output over a deep K, a tall-thin output): at_gemm routes them to it, and every type,
 * op pair and order comes back right with padded, offset (unaligned) operands, alpha and beta,
 * C's padding untouched; a repeated call (the slice counters reused) is right again. */
GPU_TEST(gemm_api_skinny_classes_padded_offset_beta)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_skinny.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    CHECK_OK(at_set_vendor(h, AT_VENDOR_OFF));
    static const struct { at_dtype t; int tf32; } types[] = {
        {AT_R_16BF, 0}, {AT_R_16F, 0}, {AT_R_32F, 1}, {AT_R_32F, 0}, {AT_R_64F, 0},
    };
    static const int sizes[][3] = {
        {3, 517, 1200},     /* GEMV-like: one tile row, K slices */
        {29, 41, 3100},     /* small output, deep K: 32 x 32 tiles, K slices */
        {700, 9, 300},      /* tall and thin */
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (int ops = 0; ops < 4 && !th_failed(); ops++) {
                ga_case c = ga_case_of(types[t].t, types[t].tf32,
                                       (ops + (int)z) % 2 ? AT_COL_MAJOR : AT_ROW_MAJOR, ops,
                                       sizes[z][0], sizes[z][1], sizes[z][2], 1, 3, 2);
                c.offset = 1;
                c.alpha = -0.75;
                c.beta = ops == 2 ? 0.5 : 0.0;
                for (int rep = 0; rep < 2 && !th_failed(); rep++) {
                    double err = 0;
                    int padding_ok = 0;
                    at_status s = ga_run(&g, h, &c, &err, &padding_ok);
                    at_stats st;
                    CHECK_OK(at_get_stats(h, &st));
                    CHECK_MSG(s == AT_OK && err <= ga_tolerance(c.type, c.k) && padding_ok,
                              "type %d%s %s %s%s %dx%dx%d call %d: %s %s, error %.3g (bound "
                              "%.3g), ran %s %s", (int)c.type, c.tf32 ? " tf32" : "",
                              c.order ? "col" : "row", c.op_a ? "T" : "N", c.op_b ? "T" : "N",
                              c.m, c.n, c.k, rep + 1, at_status_string(s), at_errmsg(h), err,
                              ga_tolerance(c.type, c.k), st.last_kernel, st.last_config);
                    CHECK_STR(st.last_kernel, "skinny");
                }
            }
    CHECK_OK(at_destroy(h));
    ga_end(&g);
}

/* The vendor candidate (at_set_vendor) on a fresh shape: its trial times our kernel and
 * cuBLAS on the calls themselves, every call's result is right whichever ran, the stats say
 * which one serves afterwards, and with the candidate off cuBLAS never runs. The large-tile
 * family alone ($AUTOTUNE_GEMM_FAMILY=main): no other family's built-in choice joins the
 * trial (gemm_api_builtin_trial_across_families tests those). */
GPU_TEST(gemm_api_vendor_candidate_trial_and_stats)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    setenv("AUTOTUNE_GEMM_FAMILY", "main", 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_vendor.db", th_tmpdir());
    remove(path);
    for (int mode = 0; mode < 2; mode++) {
        at_handle *h = NULL;
        CHECK_OK(at_create(&h, th_device(), path));
        CHECK_OK(at_set_vendor(h, mode ? AT_VENDOR_ON : AT_VENDOR_OFF));
        CHECK(at_set_vendor(h, 7) == AT_ERR_INVALID_ARG);
        ga_case c;
        memset(&c, 0, sizeof c);
        c.type = AT_R_16BF;
        c.order = AT_COL_MAJOR;
        c.op_a = AT_OP_T;
        c.m = 300;
        c.n = 260;
        c.k = 1000;
        c.lda = c.k;
        c.ldb = c.k;
        c.ldc = c.m;
        c.alpha = 1.0;
        /* 2 candidates x 3 rounds settle the trial; then 3 calls by the winner */
        for (int call = 0; call < 9 && !th_failed(); call++) {
            double err = 0;
            int padding_ok = 0;
            at_status s = ga_run(&g, h, &c, &err, &padding_ok);
            CHECK_MSG(s == AT_OK && err <= ga_tolerance(c.type, c.k) && padding_ok,
                      "mode %d call %d: %s %s, error %.3g", mode, call, at_status_string(s),
                      at_errmsg(h), err);
        }
        at_stats st;
        CHECK_OK(at_get_stats(h, &st));
        if (!mode) {
            CHECK_EQ(st.vendor_calls, 0);
            CHECK_EQ(st.trials, 0);
            CHECK_EQ(st.last_vendor, 0);
        } else {
            CHECK_EQ(st.trials, 1);
            CHECK(st.vendor_calls >= 3);            /* its 3 trial calls at least */
            CHECK_EQ(st.last_vendor, st.vendor_plans);
            CHECK_EQ(st.last_vendor, strncmp(st.last_config, "vendor: ", 8) == 0);
            CHECK_EQ(st.vendor_calls, 3 + 3 * st.last_vendor);
        }
        CHECK_OK(at_destroy(h));
    }
    unsetenv("AUTOTUNE_GEMM_FAMILY");
    ga_end(&g);
}

/* A shape no database knows, computed by several families (FP32 200 x 300 x 100 and FP64
 * 804 x 28 x 32: the large-tile family and skinny): its plan starts from the shape-class rule's
 * built-in choice, and its first calls also time the other families' built-in choices (each
 * compiled once: more than one compile in a fresh database); every call's result is right
 * whichever ran; after at most AT_TRIALS_DEFAULT x 3 calls the trial is settled, and the next
 * handle serves the kept family's choice at the exact level, compiling nothing. With
 * $AUTOTUNE_GEMM_FAMILY set, or in deterministic mode, no other family joins. Which family
 * wins is the GPU's business, not the test's. */
GPU_TEST(gemm_api_builtin_trial_across_families)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    static const struct {
        at_dtype type;
        int m, n, k;
    } shapes[] = {{AT_R_32F, 200, 300, 100}, {AT_R_64F, 804, 28, 32}};
    for (int sh = 0; sh < 2 && !th_failed(); sh++) {
        ga_case c;
        memset(&c, 0, sizeof c);
        c.type = shapes[sh].type;
        c.m = shapes[sh].m;
        c.n = shapes[sh].n;
        c.k = shapes[sh].k;
        c.lda = c.k;
        c.ldb = c.n;
        c.ldc = c.n;
        c.alpha = 1.0;
        c.beta = 0.5;
        for (int mode = 0; mode < 3 && !th_failed(); mode++) {
            /* 0: trials across families; 1: $AUTOTUNE_GEMM_FAMILY; 2: deterministic */
            char path[4300];
            snprintf(path, sizeof path, "%s/gemm_families_%d_%d.db", th_tmpdir(), sh, mode);
            remove(path);
            if (mode == 1)
                setenv("AUTOTUNE_GEMM_FAMILY", "main", 1);
            at_handle *h = NULL;
            CHECK_OK(at_create(&h, th_device(), path));
            if (mode == 2)
                CHECK_OK(at_set_deterministic(h, 1));
            for (int call = 0; call < 3 * AT_TRIALS_DEFAULT && !th_failed(); call++) {
                double err = 0;
                int padding_ok = 0;
                at_status s = ga_run(&g, h, &c, &err, &padding_ok);
                CHECK_MSG(s == AT_OK && err <= ga_tolerance(c.type, c.k) && padding_ok,
                          "shape %d mode %d call %d: %s %s, error %.3g", sh, mode, call,
                          at_status_string(s), at_errmsg(h), err);
            }
            at_stats st;
            CHECK_OK(at_get_stats(h, &st));
            CHECK_EQ(st.last_level, AT_LOOKUP_DEFAULT);
            if (mode == 0) {
                CHECK_MSG(st.trials == 1 && st.compiled >= 2, "shape %d: %d trials, %d compiled",
                          sh, st.trials, st.compiled);
            } else {
                CHECK_MSG(st.trials == 0 && st.compiled == 1, "shape %d mode %d: %d trials, %d "
                          "compiled", sh, mode, st.trials, st.compiled);
            }
            char kept[32];
            snprintf(kept, sizeof kept, "%s", st.last_kernel);
            CHECK_OK(at_destroy(h));
            unsetenv("AUTOTUNE_GEMM_FAMILY");
            if (mode != 0)
                continue;
            /* the next handle: the kept family's choice at the exact level, no compile */
            CHECK_OK(at_create(&h, th_device(), path));
            double err = 0;
            int padding_ok = 0;
            CHECK_OK(ga_run(&g, h, &c, &err, &padding_ok));
            CHECK(err <= ga_tolerance(c.type, c.k) && padding_ok);
            CHECK_OK(at_get_stats(h, &st));
            CHECK_MSG(st.last_level == AT_LOOKUP_EXACT && strcmp(st.last_kernel, kept) == 0 &&
                          st.compiled == 0 && st.trials == 0,
                      "shape %d: level %d %s (kept %s), %d compiled", sh, (int)st.last_level,
                      st.last_kernel, kept, st.compiled);
            CHECK_OK(at_destroy(h));
        }
    }
    ga_end(&g);
}

/* A shape tuned on this device decides with the stored times, without a trial: a stored
 * cuBLAS measurement more than AT_VENDOR_MARGIN faster than our stored best makes cuBLAS
 * serve it, a slower one leaves our kernel. */
GPU_TEST(gemm_api_vendor_candidate_from_stored_measurements)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    at_device_info info;
    char msg[512], path[4300], err[512];
    CHECK_OK(cudrv_device_info(g.cu, th_device(), &info, msg, sizeof msg));
    extern const tpl_family tpl_tcgemm;
    for (int faster = 0; faster < 2; faster++) {
        snprintf(path, sizeof path, "%s/gemm_vendor_stored_%d.db", th_tmpdir(), faster);
        remove(path);
        /* the canonical (row-major) problem of a row-major NN 192 x 320 x 512 BF16 call */
        tpl_problem p = {.n_dims = 3, .dims = {192, 320, 512}, .dtype = AT_R_16BF};
        db *d = NULL;
        CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
        CHECK_OK(db_put_device(d, &info, tpl_nvrtc_version()));
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        CHECK(tpl_builtin_config(&tpl_tcgemm, &info, &p, 0, cfg, config, NULL));
        db_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", info.uuid);
        snprintf(r.kernel, sizeof r.kernel, "tcgemm");
        snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(&tpl_tcgemm));
        r.problem = p;
        snprintf(r.config, sizeof r.config, "%s", config);
        snprintf(r.status, sizeof r.status, "%s", DB_OK);
        r.time_ms = 1.0;
        r.rel_error = 1e-3;
        tpl_binary_key(&tpl_tcgemm, cfg, info.arch, r.binary_key, sizeof r.binary_key);
        CHECK_OK(db_store_result(d, &r));
        db_measurement m;
        memset(&m, 0, sizeof m);
        snprintf(m.device_uuid, sizeof m.device_uuid, "%s", info.uuid);
        snprintf(m.kernel, sizeof m.kernel, "tcgemm");
        snprintf(m.name, sizeof m.name, "cublas");
        m.problem = p;
        m.time_ms = faster ? 0.5 : 0.99;        /* 0.99: within the margin, ours stays */
        m.rel_error = -1;
        CHECK_OK(db_put_measurement(d, &m));
        db_close(d);
        at_handle *h = NULL;
        CHECK_OK(at_create(&h, th_device(), path));
        CHECK_OK(at_set_vendor(h, AT_VENDOR_ON));
        ga_case c;
        memset(&c, 0, sizeof c);
        c.type = AT_R_16BF;
        c.m = 192;
        c.n = 320;
        c.k = 512;
        c.lda = 512;
        c.ldb = 320;
        c.ldc = 320;
        c.alpha = 1.0;
        double e = 0;
        int padding_ok = 0;
        at_status s = ga_run(&g, h, &c, &e, &padding_ok);
        CHECK_MSG(s == AT_OK && e <= ga_tolerance(c.type, c.k) && padding_ok, "%s %s %.3g",
                  at_status_string(s), at_errmsg(h), e);
        at_stats st;
        CHECK_OK(at_get_stats(h, &st));
        CHECK_EQ(st.last_level, AT_LOOKUP_EXACT);
        CHECK_EQ(st.trials, 0);
        CHECK_EQ(st.last_vendor, faster);
        CHECK_EQ(st.vendor_calls, faster);
        CHECK_OK(at_destroy(h));
    }
    ga_end(&g);
}

/* Strided batches of the tensor-core types through at_gemm_strided_batched with a fresh
 * database: every op pair, both orders, product strides that break 16-byte alignment (packed
 * first) and ones that keep it; each product against its float64 host product. */
GPU_TEST(gemm_api_tensor_core_batches)
{
    ga_gpu g;
    CHECK(ga_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_batches.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    static const struct { at_dtype t; int tf32; } types[] = {
        {AT_R_16BF, 0}, {AT_R_16F, 0}, {AT_R_32F, 1},
    };
    const int m = 130, n = 70, k = 50, batch = 5;
    for (size_t t = 0; t < 3; t++)
        for (int order = 0; order < 2; order++)
            for (int ops = 0; ops < 4 && !th_failed(); ops++) {
                at_order o = order ? AT_COL_MAJOR : AT_ROW_MAJOR;
                at_op opa = (ops & 1) ? AT_OP_T : AT_OP_N, opb = (ops >> 1) ? AT_OP_T : AT_OP_N;
                long long lda = ga_min_ld(o, opa, m, k), ldb = ga_min_ld(o, opb, k, n),
                          ldc = ga_min_ld(o, AT_OP_N, m, n);
                int pad = ops == 1 ? 3 : 8;             /* odd: unaligned product starts */
                long long sa = (long long)ga_lines(o, opa, m, k) * lda + pad,
                          sb = (long long)ga_lines(o, opb, k, n) * ldb + pad,
                          sc = (long long)ga_lines(o, AT_OP_N, m, n) * ldc + pad;
                at_dtype ty = types[t].t;
                size_t es = ga_size(ty), na = (size_t)(sa * batch), nb = (size_t)(sb * batch),
                       nc = (size_t)(sc * batch);
                void *A = ga_random(ty, na, 5u + (unsigned)ops), *B = ga_random(ty, nb, 7u),
                     *C = malloc(nc * es);
                CUdeviceptr dA = 0, dB = 0, dC = 0;
                CHECK(A && B && C && !g.cu->MemAlloc(&dA, na * es) &&
                      !g.cu->MemAlloc(&dB, nb * es) && !g.cu->MemAlloc(&dC, nc * es) &&
                      !g.cu->MemcpyHtoD(dA, A, na * es) && !g.cu->MemcpyHtoD(dB, B, nb * es) &&
                      !g.cu->MemsetD8Async(dC, 0xff, nc * es, 0));
                CHECK_OK(at_set_math_mode(h, types[t].tf32 ? AT_MATH_TF32 : AT_MATH_DEFAULT));
                at_status s = at_gemm_strided_batched(
                    h, o, opa, opb, m, n, k, ty, 1.0, (const void *)(uintptr_t)dA, (int)lda, sa,
                    (const void *)(uintptr_t)dB, (int)ldb, sb, 0.0, (void *)(uintptr_t)dC,
                    (int)ldc, sc, batch);
                CHECK_MSG(s == AT_OK, "%s", at_errmsg(h));
                CHECK(!g.cu->CtxSynchronize() && !g.cu->MemcpyDtoH(C, dC, nc * es));
                double worst = 0;
                for (int z = 0; z < batch; z++) {
                    double num = 0, den = 0;
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < n; j++) {
                            double ref = 0;
                            for (int q = 0; q < k; q++)
                                ref += ga_get(ty, types[t].tf32, A,
                                              (size_t)(z * sa) + ga_index(o, opa, lda, i, q)) *
                                       ga_get(ty, types[t].tf32, B,
                                              (size_t)(z * sb) + ga_index(o, opb, ldb, q, j));
                            double got = ga_get(ty, 0, C,
                                                (size_t)(z * sc) + ga_index(o, AT_OP_N, ldc, i, j));
                            num += (got - ref) * (got - ref);
                            den += ref * ref;
                        }
                    double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                    worst = e > worst ? e : worst;
                }
                at_stats st;
                CHECK_OK(at_get_stats(h, &st));
                CHECK_MSG(worst <= ga_tolerance(ty, k), "type %d %s ops %d: error %.3g (%s)",
                          (int)ty, order ? "col" : "row", ops, worst, st.last_config);
                g.cu->MemFree(dA);
                g.cu->MemFree(dB);
                g.cu->MemFree(dC);
                free(A);
                free(B);
                free(C);
            }
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
