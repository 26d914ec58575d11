/* args.h: the argument checks of the vector and solver entry points (at_ssum,
 * at_dsum, at_sdot, at_ddot, at_sjacobi, at_djacobi); pure, so the CPU tests reach each one. */
#ifndef ARGS_H
#define ARGS_H

#include <stddef.h>
#include "autotune.h"

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

#endif
