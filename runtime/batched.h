/* batched.h: the strided batched GEMM call's argument checks, apart from the handle so the
 * CPU tests check them (the order/op mapping is ag_gemm_canonical's, as at_gemm's). */
#ifndef BATCHED_H
#define BATCHED_H

#include <stddef.h>
#include "autotune.h"

/* One strided batched call: op(A) m x k, op(B) k x n, C m x n, strides in elements. */
typedef struct bt_call {
    int m, n, k;
    at_op op_a, op_b;
    const void *A, *B;
    void *C;
    int lda, ldb, ldc;
    long long sa, sb, sc;
} bt_call;

/* The checks of at_gemm_strided_batched in the caller's terms (order): known enums; type
 * FP32 or FP64 (else AT_ERR_UNSUPPORTED); sizes and batch >= 0; each ld >= the stored
 * matrix's rows (column-major) or columns (row-major), at least 1; strides >= 0; finite
 * alpha and beta; then, unless nothing is computed (*empty = 1: m, n or batch 0), products'
 * C not overlapping (batch > 1: stride_c >= one C's span) and non-NULL C (A and B when
 * k > 0). AT_OK, or AT_ERR_INVALID_ARG / AT_ERR_UNSUPPORTED with the reason in msg. */
at_status bt_check(at_order order, const bt_call *c, at_dtype type, int batch, double alpha,
                   double beta, int *empty, char *msg, size_t len);

#endif
