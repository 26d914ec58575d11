/* args.c: the argument checks of the entry points and the GEMM call's
 * canonical form, kept apart from the handle so that the CPU tests can reach
 * every one. */
#include <stdint.h>
#include <stdio.h>
#include "args.h"

/* 1 if p (may be NULL) is a multiple of elem bytes. */
static int ag_aligned(const void *p, size_t elem)
{
    return elem == 0 || (uintptr_t)p % elem == 0;
}

at_status ag_check_reduce(const char *fn, long long n, const void *x, const void *y, int dot,
                          const void *result, size_t elem, int *empty, char *msg, size_t len)
{
    *empty = 0;
    if (n < 0) {
        snprintf(msg, len, "%s: negative length %lld", fn, n);
        return AT_ERR_INVALID_ARG;
    }
    if (!result || (n > 0 && (!x || (dot && !y)))) {
        snprintf(msg, len, "%s: NULL pointer", fn);
        return AT_ERR_INVALID_ARG;
    }
    if (!ag_aligned(result, elem) || !ag_aligned(x, elem) || (dot && !ag_aligned(y, elem))) {
        snprintf(msg, len, "%s: pointers must be aligned to the element (%zu bytes)", fn, elem);
        return AT_ERR_INVALID_ARG;
    }
    *empty = n == 0;
    return AT_OK;
}

at_status ag_check_jacobi(const char *fn, int n, const void *A, const void *b, const void *x,
                          double tol, int max_iter, size_t elem, char *msg, size_t len)
{
    if (n <= 0) {
        snprintf(msg, len, "%s: size must be positive, got %d", fn, n);
        return AT_ERR_INVALID_ARG;
    }
    if (!A || !b || !x) {
        snprintf(msg, len, "%s: NULL pointer", fn);
        return AT_ERR_INVALID_ARG;
    }
    if (!ag_aligned(A, elem) || !ag_aligned(b, elem) || !ag_aligned(x, elem)) {
        snprintf(msg, len, "%s: A, b and x must be aligned to the element (%zu bytes)", fn,
                 elem);
        return AT_ERR_INVALID_ARG;
    }
    if (!(tol >= 0.0) || max_iter < 1) {
        snprintf(msg, len, "%s: need tol >= 0 and max_iter >= 1 (got %g, %d)", fn, tol, max_iter);
        return AT_ERR_INVALID_ARG;
    }
    return AT_OK;
}

at_status ag_gemm_check(const tpl_args *args, char *err, size_t errlen)
{
    const tpl_problem *p = &args->problem;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    if ((unsigned)p->order > AT_COL_MAJOR || (unsigned)p->op_a > AT_OP_T ||
        (unsigned)p->op_b > AT_OP_T) {
        snprintf(err, errlen, "unknown order %d or op %d/%d", (int)p->order, (int)p->op_a,
                 (int)p->op_b);
        return AT_ERR_INVALID_ARG;
    }
    if (p->n_dims != 3 || m < 0 || n < 0 || k < 0) {
        snprintf(err, errlen, "negative size m=%lld n=%lld k=%lld", m, n, k);
        return AT_ERR_INVALID_ARG;
    }
    const char *ord = p->order == AT_COL_MAJOR ? "column-major" : "row-major";
    long long need[3] = {tpl_gemm_min_ld(p->order, p->op_a, m, k),
                         tpl_gemm_min_ld(p->order, p->op_b, k, n),
                         tpl_gemm_min_ld(p->order, AT_OP_N, m, n)};
    static const char *const names[3] = {"lda", "ldb", "ldc"};
    static const int which[3] = {TPL_GEMM_A, TPL_GEMM_B, TPL_GEMM_C};
    for (int i = 0; i < 3; i++) {
        long long ld = args->operand[which[i]].ld;
        if (ld < need[i]) {
            at_op op = i == 0 ? p->op_a : i == 1 ? p->op_b : AT_OP_N;
            snprintf(err, errlen, "%s=%lld too small: %s %s%s needs %s >= %lld (the %s of %c as "
                     "stored)", names[i], ld, ord, i == 2 ? "C" : i == 0 ? "op_a " : "op_b ",
                     i == 2 ? "" : tpl_op_name(op), names[i], need[i],
                     p->order == AT_COL_MAJOR ? "rows" : "columns", "ABC"[i]);
            return AT_ERR_INVALID_ARG;
        }
    }
    return AT_OK;
}

void ag_gemm_canonical(tpl_args *args)
{
    tpl_problem *p = &args->problem;
    if (p->order != AT_COL_MAJOR)
        return;
    long long m = p->dims[0];
    p->dims[0] = p->dims[1];
    p->dims[1] = m;
    tpl_operand a = args->operand[TPL_GEMM_A];
    args->operand[TPL_GEMM_A] = args->operand[TPL_GEMM_B];
    args->operand[TPL_GEMM_B] = a;
    at_op op = p->op_a;
    p->op_a = p->op_b;
    p->op_b = op;
    p->math = tpl_math_fp8_swap(p->math);
    CUdeviceptr scale_a = args->operand[TPL_GEMM_SCALE_A].ptr;
    args->operand[TPL_GEMM_SCALE_A].ptr = args->operand[TPL_GEMM_SCALE_B].ptr;
    args->operand[TPL_GEMM_SCALE_B].ptr = scale_a;
    int bias = TPL_EPI_BIAS(p->epilogue);
    if (bias == TPL_BIAS_ROW || bias == TPL_BIAS_COL)
        p->epilogue = TPL_EPI(bias == TPL_BIAS_ROW ? TPL_BIAS_COL : TPL_BIAS_ROW,
                              TPL_EPI_ACT(p->epilogue));
    p->order = AT_ROW_MAJOR;
}

/* The name of an FP8 operand type for messages; NULL for any other. */
static const char *ag_fp8_name(at_dtype t)
{
    return t == AT_R_8F_E4M3 ? "AT_R_8F_E4M3" : t == AT_R_8F_E5M2 ? "AT_R_8F_E5M2" : NULL;
}

at_status ag_check_fp8(const char *fn, at_dtype type_a, at_dtype type_b, at_dtype type_c,
                       const void *scale_a, const void *scale_b, const void *scale_d,
                       at_math *math, char *err, size_t errlen)
{
    *math = AT_MATH_DEFAULT;
    if (!ag_fp8_name(type_a) || !ag_fp8_name(type_b)) {
        snprintf(err, errlen, "%s: A and B must be FP8 (AT_R_8F_E4M3 or AT_R_8F_E5M2), got types "
                 "%d and %d", fn, (int)type_a, (int)type_b);
        return AT_ERR_INVALID_ARG;
    }
    int m = tpl_math_of_fp8(type_a, type_b);
    if (m == TPL_KIND_UNKNOWN) {
        snprintf(err, errlen, "%s: A and B both AT_R_8F_E5M2: FP8 GEMM takes E4M3 x E4M3, "
                 "E4M3 x E5M2 or E5M2 x E4M3 (as cuBLASLt does)", fn);
        return AT_ERR_INVALID_ARG;
    }
    if (type_c != AT_R_16BF && type_c != AT_R_16F && type_c != AT_R_32F) {
        snprintf(err, errlen, "%s: C of type %d: an FP8 product is stored as AT_R_16BF, AT_R_16F "
                 "or AT_R_32F", fn, (int)type_c);
        return AT_ERR_INVALID_ARG;
    }
    const void *scales[3] = {scale_a, scale_b, scale_d};
    static const char *const names[3] = {"scale_a", "scale_b", "scale_d"};
    for (int i = 0; i < 3; i++)
        if ((uintptr_t)scales[i] % 4) {
            snprintf(err, errlen, "%s: %s is not 4-byte aligned (a device pointer to one float; "
                     "NULL means 1.0)", fn, names[i]);
            return AT_ERR_INVALID_ARG;
        }
    *math = (at_math)m;
    return AT_OK;
}

at_status ag_check_fp8_block(const char *fn, at_order order, int m, int n, int k, at_dtype type_a,
                             at_dtype type_b, at_dtype type_c, const void *scale_a,
                             const void *scale_b, const void *scale_d, at_math *math, char *err,
                             size_t errlen)
{
    at_status s = ag_check_fp8(fn, type_a, type_b, type_c, scale_a, scale_b, scale_d, math, err,
                               errlen);
    if (s != AT_OK)
        return s;
    int pair = tpl_math_fp8(*math);
    *math = AT_MATH_DEFAULT;
    if (order != AT_ROW_MAJOR) {
        snprintf(err, errlen, "%s: row-major only (a column-major C = op(A) op(B) is the row-major "
                 "C^T = op(B)^T op(A)^T, whose 1 x 128 scales would be B's: not computed yet)", fn);
        return AT_ERR_UNSUPPORTED;
    }
    if (m > 0 && n > 0 && k > 0 && (!scale_a || !scale_b)) {
        snprintf(err, errlen, "%s: %s is NULL: block scaling needs %s (%s floats, row-major)", fn,
                 !scale_a ? "scale_a" : "scale_b", !scale_a ? "A's 1 x 128 scales" :
                 "B's 128 x 128 scales", !scale_a ? "m x ceil(k/128)" : "ceil(n/128) x ceil(k/128)");
        return AT_ERR_INVALID_ARG;
    }
    *math = tpl_math_fp8_scaled(pair, 1);
    return AT_OK;
}

at_status ag_check_epilogue(const char *fn, const at_epilogue *epi, at_dtype type, at_math math,
                            int *code, char *err, size_t errlen)
{
    *code = 0;
    if (!epi)
        return AT_OK;
    if ((unsigned)epi->activation > AT_ACT_GELU_ERF) {
        snprintf(err, errlen, "%s: unknown activation %d (AT_ACT_NONE, AT_ACT_RELU, "
                 "AT_ACT_GELU_TANH, AT_ACT_GELU_ERF)", fn, (int)epi->activation);
        return AT_ERR_INVALID_ARG;
    }
    if ((unsigned)epi->bias_kind > AT_BIAS_COL) {
        snprintf(err, errlen, "%s: unknown bias kind %d (AT_BIAS_NONE, AT_BIAS_ROW, "
                 "AT_BIAS_COL)", fn, (int)epi->bias_kind);
        return AT_ERR_INVALID_ARG;
    }
    if (epi->bias_kind == AT_BIAS_NONE && epi->bias) {
        snprintf(err, errlen, "%s: a bias pointer with bias kind AT_BIAS_NONE (say AT_BIAS_ROW "
                 "or AT_BIAS_COL, or pass NULL)", fn);
        return AT_ERR_INVALID_ARG;
    }
    if (epi->bias_kind != AT_BIAS_NONE && !epi->bias) {
        snprintf(err, errlen, "%s: bias kind %s with a NULL bias pointer", fn,
                 epi->bias_kind == AT_BIAS_ROW ? "AT_BIAS_ROW" : "AT_BIAS_COL");
        return AT_ERR_INVALID_ARG;
    }
    size_t elem = tpl_dtype_size(type);
    if (epi->bias && elem && (size_t)epi->bias % elem) {
        snprintf(err, errlen, "%s: bias pointer not aligned to its %zu-byte elements", fn, elem);
        return AT_ERR_INVALID_ARG;
    }
    int e = TPL_EPI((int)epi->bias_kind, (int)epi->activation);
    if (e != 0 && (type == AT_R_64F || (type == AT_R_32F && math != AT_MATH_TF32))) {
        snprintf(err, errlen, "%s: fused epilogues are computed on the tensor cores only (BF16, "
                 "FP16, FP32 with the math mode AT_MATH_TF32), not in %s", fn,
                 type == AT_R_64F ? "FP64" : "exact FP32");
        return AT_ERR_UNSUPPORTED;
    }
    *code = e;
    return AT_OK;
}
