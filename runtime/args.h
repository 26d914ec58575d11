/* args.h: the argument checks of the entry points (at_ssum, at_dsum, at_sdot,
 * at_ddot, at_sjacobi, at_djacobi; a GEMM call's sizes and leading dimensions)
 * and the GEMM call's row-major canonical form; pure, so the CPU tests reach
 * each one. */
#ifndef ARGS_H
#define ARGS_H

#include <stddef.h>
#include "autotune.h"
#include "tpl.h"

/* Checks a sum (dot 0: y unread) or dot of n elements of elem bytes (4 or
 * 8) into *result, named fn in messages: n >= 0, result non-NULL, and when
 * n > 0 x (and y) non-NULL; every pointer given must be aligned to elem.
 * AT_OK with *empty = 1 when n == 0 (the caller stores 0), else *empty = 0;
 * AT_ERR_INVALID_ARG with the reason in msg. */
at_status ag_check_reduce(const char *fn, long long n, const void *x, const void *y, int dot,
                          const void *result, size_t elem, int *empty, char *msg, size_t len);
/* Checks a Jacobi solve of an n x n system of elem-byte elements, named fn:
 * n >= 1, A, b, x non-NULL and aligned to elem, tol >= 0 (NaN refused),
 * max_iter >= 1. AT_OK, or AT_ERR_INVALID_ARG with the reason in msg. */
at_status ag_check_jacobi(const char *fn, int n, const void *A, const void *b, const void *x,
                          double tol, int max_iter, size_t elem, char *msg, size_t len);

/* Checks the sizes and leading dimensions of a GEMM call as the caller gave it
 * (problem {m, n, k} with its order and ops; before ag_gemm_canonical):
 * AT_OK, or AT_ERR_INVALID_ARG with the reason in err (negative size, order or
 * op outside the enums, a leading dimension below its minimum, named with the
 * rule it breaks). */
at_status ag_gemm_check(const tpl_args *args, char *err, size_t errlen);
/* Checks a GEMM call's fused epilogue (at_gemm_epilogue) of element type `type` with math
 * `math`, named fn in messages: activation and bias kind inside their enums, a bias pointer
 * exactly when there is a bias kind, aligned to the element; then the kind: exact FP32 and
 * FP64 have no fused epilogue. epi NULL or all none: no epilogue. AT_OK with the problem's
 * epilogue value (tpl.h TPL_EPI, 0 for none) in *code; AT_ERR_INVALID_ARG or
 * AT_ERR_UNSUPPORTED with the reason in err. */
at_status ag_check_epilogue(const char *fn, const at_epilogue *epi, at_dtype type, at_math math,
                            int *code, char *err, size_t errlen);
/* Checks the kinds of an FP8 GEMM call (at_gemm_fp8), named fn in messages: A's and B's types
 * AT_R_8F_E4M3 or AT_R_8F_E5M2 and not both E5M2, C's AT_R_16BF, AT_R_16F or AT_R_32F, every
 * scale pointer given 4-byte aligned (NULL means 1.0). AT_OK with the problem's FP8 math
 * (tpl.h TPL_MATH_E4M3, ...) in *math; AT_ERR_INVALID_ARG with the reason in err. */
at_status ag_check_fp8(const char *fn, at_dtype type_a, at_dtype type_b, at_dtype type_c,
                       const void *scale_a, const void *scale_b, const void *scale_d,
                       at_math *math, char *err, size_t errlen);
/* Checks what a block-scaled FP8 call (at_gemm_fp8_blockscaled, named fn in messages) adds to
 * ag_check_fp8's (its checks first, with math then the block-scaled pair): row-major order
 * (AT_ERR_UNSUPPORTED otherwise), and scale_a and scale_b given unless m, n or k is 0 (the arrays
 * are then empty). AT_OK with the math in *math; else the reason in err. */
at_status ag_check_fp8_block(const char *fn, at_order order, int m, int n, int k, at_dtype type_a,
                             at_dtype type_b, at_dtype type_c, const void *scale_a,
                             const void *scale_b, const void *scale_d, at_math *math, char *err,
                             size_t errlen);
/* Rewrites a column-major GEMM call into its row-major canonical form
 * (templates/tpl.h, "GEMM orders and transposes"): swaps dims m and n,
 * operands A and B (pointer, ld, batch stride) and op_a and op_b, a fused
 * epilogue's per-row bias for a per-column one and back (the rows of the
 * call's C are the columns of the canonical C), an FP8 math's operand types and the
 * scales of A and B (E4M3 x E5M2 becomes E5M2 x E4M3), and sets order
 * AT_ROW_MAJOR. A row-major call is left unchanged. */
void ag_gemm_canonical(tpl_args *args);

#endif
