/* vendor.h: the vendor libraries as baselines, measured like configurations:
 * cuBLAS (dlopen'd) for GEMM problems and dot, CUB (libautotune_vendor.so,
 * built with nvcc) for sum and dot; timed and verified through measure.h. */
#ifndef VENDOR_H
#define VENDOR_H

#include <stddef.h>
#include "autotune.h"
#include "measure.h"
#include "tpl.h"

#define MS_MAX_VENDOR 4             /* vendor calls of one problem at most */

/* The libraries, loaded on first use; one per worker process. */
typedef struct ms_vendor ms_vendor;

/* One vendor call of a problem: which library and which entry point. */
typedef struct ms_vendor_call {
    char name[32];                  /* "cublas" or "cub": the measurement's name */
    char call[128];                 /* "cublasGemmEx (BF16 A, B, C; compute 32F)" */
} ms_vendor_call;

/* What measuring one vendor call gave. */
typedef struct ms_vendor_result {
    char name[32];                  /* "cublas", "cub" */
    at_status status;               /* AT_OK: verified and timed; AT_ERR_NOT_FOUND:
                                       the library is absent; AT_ERR_WRONG_RESULT;
                                       AT_ERR_CRASHED: the context is unusable;
                                       else the call failed */
    ms_timing timing;
    double rel_error;               /* -1 if not verified */
    char note[256];                 /* the call and the library version, or why not */
} ms_vendor_result;

/* The vendor calls that compute fam's problem p, written into out (at most
 * max): GEMM families (dimensions m, n, k) by element type, math, ops,
 * order and batch; sum and dot by element type. Returns their count; 0
 * with the reason ("no vendor call for ...") in why for every other kind. */
int ms_vendor_calls(const tpl_family *fam, const tpl_problem *p, ms_vendor_call *out, int max,
                    char *why, size_t whylen);

/* A handle that loads the libraries on first use; NULL only when out of
 * memory. ms_vendor_close(NULL) is a no-op. */
ms_vendor *ms_vendor_open(void);
void ms_vendor_close(ms_vendor *v);

/* Verifies and times every vendor call of the problem prepared in g (same
 * inputs, reference, timer and options as its configurations; opt NULL:
 * the defaults) into out (at most max); returns how many results were
 * written (0 with the reason in why where the problem has no vendor call).
 * A library that is absent gives a result with AT_ERR_NOT_FOUND and the
 * note naming what was looked for; nothing fails for it. */
int ms_vendor_measure(ms_vendor *v, ms_gpu *g, const ms_options *opt, ms_vendor_result *out,
                      int max, char *why, size_t whylen);

/* The runtime's vendor candidate (runtime/api.c, at_set_vendor): 1 if v has a cuBLAS call
 * for the GEMM problem p (any type, ops, order and batch it computes), with its description
 * in call (may be NULL); 0 otherwise. Loads nothing. */
int ms_vendor_gemm_supported(const tpl_problem *p, char *call, size_t len);
/* Runs the GEMM of args (a family's row-major canonical form, or a column-major call) through
 * cuBLAS on stream, loading cuBLAS and making its handle on first use. AT_ERR_NOT_FOUND with
 * the reason in err where cuBLAS is absent, AT_ERR_UNSUPPORTED for a problem without a cuBLAS
 * call or beyond its 32-bit arguments, AT_ERR_CUDA where cuBLAS fails. */
at_status ms_vendor_gemm(ms_vendor *v, CUstream stream, tpl_args *args, char *err, size_t len);

#endif
