/* batched.c: the strided batched GEMM call's argument checks and its row-major canonical
 * form (batched.h); no GPU, no handle. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include "batched.h"
#include "tpl.h"

/* Writes the reason into msg and returns s. */
static at_status bt_fail(char *msg, size_t len, at_status s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static at_status bt_fail(char *msg, size_t len, at_status s, const char *fmt, ...)
{
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return s;
}

at_status bt_check(at_order order, const bt_call *c, at_dtype type, int batch, double alpha,
                   double beta, int *empty, char *msg, size_t len)
{
    const char *fn = "at_gemm_strided_batched";
    *empty = 0;
    if (type == AT_R_8F_E4M3 || type == AT_R_8F_E5M2)
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: FP8 operands (type %d) have no batched "
                       "call: at_gemm_fp8 per product", fn, (int)type);
    if ((unsigned)order > AT_COL_MAJOR || (unsigned)c->op_a > AT_OP_T ||
        (unsigned)c->op_b > AT_OP_T || (unsigned)type > AT_R_16BF)
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: unknown order %d, op %d/%d or type %d",
                       fn, (int)order, (int)c->op_a, (int)c->op_b, (int)type);
    if (c->m < 0 || c->n < 0 || c->k < 0 || batch < 0)
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: negative size m=%d n=%d k=%d or "
                       "batch_count=%d", fn, c->m, c->n, c->k, batch);
    int a_rows = c->op_a == AT_OP_N ? c->m : c->k, a_cols = c->op_a == AT_OP_N ? c->k : c->m;
    int b_rows = c->op_b == AT_OP_N ? c->k : c->n, b_cols = c->op_b == AT_OP_N ? c->n : c->k;
    if (c->lda < tpl_gemm_min_ld(order, c->op_a, c->m, c->k) ||
        c->ldb < tpl_gemm_min_ld(order, c->op_b, c->k, c->n) ||
        c->ldc < tpl_gemm_min_ld(order, AT_OP_N, c->m, c->n))
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: leading dimensions too small (%s: "
                       "each ld >= the stored matrix's %s): lda=%d for %dx%d, ldb=%d for %dx%d, "
                       "ldc=%d for %dx%d", fn, order == AT_COL_MAJOR ? "column-major" : "row-major",
                       order == AT_COL_MAJOR ? "rows" : "columns", c->lda, a_rows, a_cols,
                       c->ldb, b_rows, b_cols, c->ldc, c->m, c->n);
    if (c->sa < 0 || c->sb < 0 || c->sc < 0)
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: negative stride (stride_a=%lld "
                       "stride_b=%lld stride_c=%lld)", fn, c->sa, c->sb, c->sc);
    if (!isfinite(alpha) || !isfinite(beta))
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: alpha and beta must be finite",
                       fn);
    if (c->m == 0 || c->n == 0 || batch == 0) {
        *empty = 1;
        return AT_OK;
    }
    long long span = order == AT_COL_MAJOR ? (long long)(c->n - 1) * c->ldc + c->m
                                           : (long long)(c->m - 1) * c->ldc + c->n;
    if (batch > 1 && c->sc < span)
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: stride_c=%lld overlaps the products' "
                       "C (one C spans %lld elements)", fn, c->sc, span);
    if (!c->C || (c->k > 0 && (!c->A || !c->B)))
        return bt_fail(msg, len, AT_ERR_INVALID_ARG, "%s: NULL matrix pointer", fn);
    return AT_OK;
}
