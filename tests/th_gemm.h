/* th_gemm.h: host side of the typed-GEMM GPU tests (th_gemm.c): typed host arrays, one
 * at_gemm call in any order and op pair against its float64 reference, the acceptance rule. */
#ifndef TH_GEMM_H
#define TH_GEMM_H

#include <stddef.h>
#include "autotune.h"
#include "cudrv.h"

/* One at_gemm call: type, math, sizes, leading dimensions, order and ops. */
typedef struct th_gemm_case {
    at_dtype type;
    int tf32;                       /* handle math mode TF32 */
    int m, n, k, lda, ldb, ldc;
    int offset;                     /* elements the operands start after an aligned base */
    double alpha, beta;
    int nan_c;                      /* C starts as NaN (beta must be 0) */
    at_order order;                 /* zero: row-major, N, N */
    at_op op_a, op_b;
} th_gemm_case;

/* The GPU context of a test (the device's primary context, pushed). */
typedef struct th_gemm_gpu {
    const cudrv *cu;
    CUcontext ctx;
    CUdevice dev;
} th_gemm_gpu;

float th_gemm_tf32(float f);                                   /* FP32 -> TF32, to nearest even */
size_t th_gemm_size(at_dtype t);                               /* bytes per element */
double th_gemm_get(at_dtype t, int tf32, const void *v, size_t i);
void th_gemm_set(at_dtype t, void *v, size_t i, float f);
void *th_gemm_random(at_dtype t, size_t count, unsigned seed); /* uniform in [-1, 1) */
double th_gemm_tolerance(at_dtype t, int k);                   /* the acceptance rule */
size_t th_gemm_index(at_order order, at_op op, long long ld, long long i, long long j);
long long th_gemm_min_ld(at_order order, at_op op, long long r, long long c);
th_gemm_case th_gemm_case_of(at_dtype type, int tf32, at_order order, int ops, int m, int n,
                             int k, int pad_a, int pad_b, int pad_c);
size_t th_gemm_lines(at_order order, at_op op, long long r, long long c);
int th_gemm_begin(th_gemm_gpu *g);
void th_gemm_end(th_gemm_gpu *g);
at_status th_gemm_run(th_gemm_gpu *g, at_handle *h, const th_gemm_case *c, double *error,
                      int *padding_ok);

#endif
