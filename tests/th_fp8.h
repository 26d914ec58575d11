/* th_fp8.h: what the FP8 GPU tests share (tests/th_fp8.c): every kernel of each FP8 kind
 * through the tuner's verification. */
#ifndef TH_FP8_H
#define TH_FP8_H

#include "tpl.h"

/* One problem's shape; ops bit 0: op(A) = T, bit 1: op(B) = T. */
typedef struct th_fp8_shape {
    long long m, n, k;
    int ops;
} th_fp8_shape;

/* On the GPU of the test run (sm_90, else a skip): for each FP8 pair maths[p] (named names[p])
 * and each C type (BF16, FP16, FP32 by TYPE), the valid tensor-core kernels of that pair with
 * SCALE scale in tile order RASTER 0, GROUP 8 (at least min_kernels, the first 64) through the
 * tuner's verification at every shape (prepared with seed seed0 + its index); every failing
 * kernel is printed before the test fails with their count. */
void th_fp8_kinds_through_verification(const at_math maths[3], const char *const names[3],
                                       int scale, const th_fp8_shape *shapes, int n_shapes,
                                       int min_kernels, unsigned seed0);

#endif
