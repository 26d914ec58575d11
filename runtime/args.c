/* args.c: the argument checks of the vector and solver entry points, kept
 * apart from the handle so that the CPU tests can reach every one. */
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
