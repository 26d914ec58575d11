/* th_gemm.c: host side of the typed-GEMM GPU tests (test_gemm_api.c, test_gemm_trials.c):
 * typed host arrays, the float64 reference of one at_gemm call in any order and op pair, and
 * the acceptance rule. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "cudrv.h"
#include "harness.h"
#include "th_gemm.h"
#include "th_half.h"

/* ---- host conversions (independent of the kernels' code; the 16-bit formats: th_half.c) ---- */

/* FP32 -> TF32 rounded to nearest, ties to even (the kernels' TF32 rule;
 * finite inputs). */
float th_gemm_tf32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

size_t th_gemm_size(at_dtype t)
{
    return t == AT_R_64F ? 8 : t == AT_R_32F ? 4 : 2;
}

/* Element i of a typed host array, as the kernels' inputs read it. */
double th_gemm_get(at_dtype t, int tf32, const void *v, size_t i)
{
    if (t == AT_R_16BF)
        return th_from_bf16(((const uint16_t *)v)[i]);
    if (t == AT_R_16F)
        return (float)th_from_f16(((const uint16_t *)v)[i]);
    if (t == AT_R_64F)
        return ((const double *)v)[i];
    float f = ((const float *)v)[i];
    return tf32 ? th_gemm_tf32(f) : f;
}

void th_gemm_set(at_dtype t, void *v, size_t i, float f)
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

void *th_gemm_random(at_dtype t, size_t count, unsigned seed)
{
    void *v = malloc(count * th_gemm_size(t) + 16);
    for (size_t i = 0; v && i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        th_gemm_set(t, v, i, -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f);
    }
    return v;
}

/* The acceptance rule of the tensor-core family (README, templates/tcgemm.c):
 * relative Frobenius error <= 2 u_out + (4 sqrt(k) + k/8) 2^-24; exact FP32
 * is held to the same FP32 bound. */
double th_gemm_tolerance(at_dtype t, int k)
{
    /* double: dgemm's rule (16 + 8 sqrt(k)) 2^-53, four times over, since this host
     * reference sums in plain double (float-valued inputs: its products are exact) */
    if (t == AT_R_64F)
        return (16 + 8 * sqrt((double)k)) * ldexp(1, -51);
    double u_out = t == AT_R_16BF ? ldexp(1, -8) : t == AT_R_16F ? ldexp(1, -11) : ldexp(1, -24);
    return 2 * u_out + (4 * sqrt((double)k) + k / 8.0) * ldexp(1, -24);
}

/* Where element (i, j) of op(X), an r x c matrix, lies in X as stored with leading dimension
 * ld, written out for each case (independent of the library's mapping): row-major N and
 * column-major T keep rows of op(X) contiguous, the other two its columns. */
size_t th_gemm_index(at_order order, at_op op, long long ld, long long i, long long j)
{
    int rows_contiguous = (order == AT_ROW_MAJOR) == (op == AT_OP_N);
    return rows_contiguous ? (size_t)(i * ld + j) : (size_t)(j * ld + i);
}

/* The smallest ld of an r x c op(X) (BLAS): the length of the contiguous lines. */
long long th_gemm_min_ld(at_order order, at_op op, long long r, long long c)
{
    long long need = (order == AT_ROW_MAJOR) == (op == AT_OP_N) ? c : r;
    return need > 1 ? need : 1;
}

/* The case of one type (tf32: the handle's TF32 math), order and op pair (bit 0 op(A) = T,
 * bit 1 op(B) = T) at m x n x k, each leading dimension the smallest its order and op allow
 * plus its pad; offset, alpha and beta zero for the caller to set. */
th_gemm_case th_gemm_case_of(at_dtype type, int tf32, at_order order, int ops, int m, int n,
                             int k, int pad_a, int pad_b, int pad_c)
{
    th_gemm_case c;
    memset(&c, 0, sizeof c);
    c.type = type;
    c.tf32 = tf32;
    c.order = order;
    c.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
    c.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
    c.m = m;
    c.n = n;
    c.k = k;
    c.lda = (int)th_gemm_min_ld(c.order, c.op_a, c.m, c.k) + pad_a;
    c.ldb = (int)th_gemm_min_ld(c.order, c.op_b, c.k, c.n) + pad_b;
    c.ldc = (int)th_gemm_min_ld(c.order, AT_OP_N, c.m, c.n) + pad_c;
    return c;
}

/* Lines (of ld elements) an r x c op(X) spans as stored. */
size_t th_gemm_lines(at_order order, at_op op, long long r, long long c)
{
    return (size_t)((order == AT_ROW_MAJOR) == (op == AT_OP_N) ? r : c);
}

int th_gemm_begin(th_gemm_gpu *g)
{
    at_status s;
    g->cu = cudrv_get(&s, NULL, 0);
    return g->cu && g->cu->Init(0) == CUDA_SUCCESS &&
           g->cu->DeviceGet(&g->dev, th_device()) == CUDA_SUCCESS &&
           g->cu->DevicePrimaryCtxRetain(&g->ctx, g->dev) == CUDA_SUCCESS &&
           g->cu->CtxPushCurrent(g->ctx) == CUDA_SUCCESS;
}

void th_gemm_end(th_gemm_gpu *g)
{
    CUcontext popped;
    g->cu->CtxPopCurrent(&popped);
    g->cu->DevicePrimaryCtxRelease(g->dev);
}

/* Runs one case through at_gemm; *error gets the relative error against the
 * float64 product of the same (rounded) inputs, and C's padding must come
 * back untouched. AT_OK or the call's status (message via at_errmsg). */
at_status th_gemm_run(th_gemm_gpu *g, at_handle *h, const th_gemm_case *c, double *error,
                      int *padding_ok)
{
    size_t es = th_gemm_size(c->type),
           na = th_gemm_lines(c->order, c->op_a, c->m, c->k) * c->lda + c->offset,
           nb = th_gemm_lines(c->order, c->op_b, c->k, c->n) * c->ldb + c->offset,
           nc = th_gemm_lines(c->order, AT_OP_N, c->m, c->n) * c->ldc + c->offset;
    void *A = th_gemm_random(c->type, na, 11u + (unsigned)c->m),
         *B = th_gemm_random(c->type, nb, 23u), *C0 = th_gemm_random(c->type, nc, 37u),
         *C = malloc(nc * es + 16);
    if (c->nan_c)
        for (size_t i = 0; i < nc; i++)
            th_gemm_set(c->type, C0, i, NAN);
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
            size_t ic = (size_t)c->offset + th_gemm_index(c->order, AT_OP_N, c->ldc, i, j);
            in_c[ic] = 1;
            double got = th_gemm_get(c->type, 0, C, ic);
            double ref = 0;
            for (int p = 0; p < c->k; p++)
                ref += th_gemm_get(c->type, c->tf32, A,
                              (size_t)c->offset + th_gemm_index(c->order, c->op_a, c->lda, i, p)) *
                       th_gemm_get(c->type, c->tf32, B,
                              (size_t)c->offset + th_gemm_index(c->order, c->op_b, c->ldb, p, j));
            ref *= c->alpha;
            if (c->beta != 0)
                ref += c->beta * th_gemm_get(c->type, 0, C0, ic);
            num += (got - ref) * (got - ref);
            den += ref * ref;
        }
    }
    for (size_t ic = 0; ic < nc; ic++) {
        double got = th_gemm_get(c->type, 0, C, ic), was = th_gemm_get(c->type, 0, C0, ic);
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
