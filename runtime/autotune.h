/* autotune.h: the public API of libautotune, the runtime that launches tuned
 * CUDA kernels (matmul, sum, dot, Jacobi) chosen from the tuning database. */
#ifndef AUTOTUNE_H
#define AUTOTUNE_H

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One status enum for the whole project. Append only: values never change. */
typedef enum at_status {
    AT_OK = 0,
    AT_ERR_INVALID_ARG = 1,      /* bad size, NULL pointer, bad option */
    AT_ERR_NO_DRIVER = 2,        /* libcuda.so.1 could not be loaded */
    AT_ERR_NO_DEVICE = 3,        /* no CUDA device with that ordinal */
    AT_ERR_CUDA = 4,             /* a CUDA driver call failed */
    AT_ERR_COMPILE = 5,          /* NVRTC rejected a configuration */
    AT_ERR_DB = 6,               /* the tuning database failed */
    AT_ERR_DB_CORRUPT = 7,       /* the file is not a usable tuning database */
    AT_ERR_NO_MEMORY = 8,        /* host or device allocation failed */
    AT_ERR_NOT_FOUND = 9,        /* no such kernel, configuration or row */
    AT_ERR_WRONG_RESULT = 10,    /* verification against the reference failed */
    AT_ERR_NOT_CONVERGED = 11,   /* Jacobi hit max_iter above the tolerance */
    AT_ERR_DIVERGED = 12,        /* Jacobi produced NaN/Inf or a zero pivot */
    AT_ERR_TIMEOUT = 13,         /* a configuration ran past its watchdog */
    AT_ERR_CRASHED = 14,         /* a configuration crashed its worker */
    AT_ERR_UNSUPPORTED = 15,     /* configuration not valid for this problem/device */
    AT_ERR_IO = 16,              /* a file could not be read or written */
    AT_ERR_INTERNAL = 17         /* a bug in autotune: please report */
} at_status;

/* The kind of a problem, beside its sizes: element type, math mode, the
 * operands' ops and storage order. Append only: values never change. Zero
 * everywhere is what at_sgemm, at_ssum, at_sdot and at_sjacobi compute. */
typedef enum at_dtype {
    AT_R_32F = 0,                /* float */
    AT_R_64F = 1,                /* double */
    AT_R_16F = 2,                /* IEEE half */
    AT_R_16BF = 3,               /* bfloat16 */
    AT_R_8F_E4M3 = 4,            /* FP8 E4M3 (1 sign, 4 exponent, 3 mantissa bits; max 448, no
                                    infinity): operands of at_gemm_fp8 only */
    AT_R_8F_E5M2 = 5             /* FP8 E5M2 (IEEE-like: 5 exponent, 2 mantissa bits; max 57344):
                                    operands of at_gemm_fp8 only */
} at_dtype;
typedef enum at_math {
    AT_MATH_DEFAULT = 0,         /* exact in the element type (FP32: FFMA, no TF32) */
    AT_MATH_TF32 = 1             /* FP32 data through TF32 tensor cores: explicit opt-in */
} at_math;
typedef enum at_op {
    AT_OP_N = 0,                 /* the operand as stored */
    AT_OP_T = 1                  /* its transpose */
} at_op;
typedef enum at_order {
    AT_ROW_MAJOR = 0,            /* C order: rows contiguous, ld >= columns */
    AT_COL_MAJOR = 1             /* BLAS order: columns contiguous, ld >= rows */
} at_order;

/* A handle serves one thread at a time (as a cuBLAS handle does); use one
 * handle per thread for concurrent calls. */
typedef struct at_handle at_handle;

/* Which level of the lookup chain chose a kernel's configuration. */
typedef enum at_lookup_level {
    AT_LOOKUP_NONE = 0,          /* not looked up yet */
    AT_LOOKUP_EXACT = 1,         /* tuned for this device and this shape */
    AT_LOOKUP_NEAREST = 2,       /* another shape's winner, measured on this device or its model */
    AT_LOOKUP_ARCH = 3,          /* another shape's winner, measured on another model of the arch */
    AT_LOOKUP_DEFAULT = 4        /* built-in default, correct everywhere */
} at_lookup_level;

typedef struct at_stats {
    int compiled;                /* kernels compiled with NVRTC by this handle */
    int loaded;                  /* kernels loaded from a stored cubin */
    int cache_hits;              /* calls served from the in-memory cache */
    int lookups[5];              /* count of plans chosen per at_lookup_level */
    at_lookup_level last_level;  /* level used by the most recent call */
    char last_config[512];       /* configuration used by the most recent call */
    int trials;                  /* trials of nearby winners settled (at_set_trials) */
    long long vendor_calls;      /* calls the vendor library served (at_set_vendor) */
    int vendor_plans;            /* shapes the vendor library was chosen for */
    int last_vendor;             /* 1: the most recent call ran the vendor library (its
                                    entry point is then in last_config) */
    char last_kernel[32];        /* family of the most recent call ("tcgemm", "skinny", ...;
                                    "vendor" when last_vendor) */
} at_stats;

/* Creates a handle on CUDA device `device` (its primary context, so memory
 * from cudaMalloc works). db_path NULL means $AUTOTUNE_DB, else
 * $XDG_CACHE_HOME/autotune/tuning.db, else ~/.cache/autotune/tuning.db.
 * A missing database is not an error: built-in defaults are used. A corrupt
 * one is reported as AT_ERR_DB_CORRUPT and no handle is made. */
at_status at_create(at_handle **handle, int device, const char *db_path);
at_status at_destroy(at_handle *handle);            /* NULL is a no-op */

/* Read-only tuning databases below the handle's own (e.g. one a program
 * ships under share/): a call's configuration comes from the lowest lookup
 * level any database reaches (exact, then nearest shape, then same
 * architecture), the handle's own database first at equal levels, then
 * these in the order added, then the built-in default. They are opened
 * read-only, even where writable, and never written (no lock or side
 * file is made beside them; a kernel compiled because none of them holds
 * its cubin is stored in the handle's own database). at_create adds those
 * of $AUTOTUNE_SHIPPED_DB (paths separated by ':'), else
 * PREFIX/share/autotune/tuning.db where it exists; one that cannot be used
 * is skipped and named in at_errmsg, never fatal. at_add_readonly_db adds
 * one more: AT_ERR_NOT_FOUND (missing), AT_ERR_DB_CORRUPT (not a tuning
 * database), AT_ERR_IO, or AT_ERR_INVALID_ARG beyond AT_MAX_READONLY_DBS,
 * the handle unchanged and usable. Calls already made keep their kernel:
 * add databases before the first call. */
#define AT_MAX_READONLY_DBS 8
at_status at_add_readonly_db(at_handle *handle, const char *path);
at_status at_set_stream(at_handle *handle, CUstream stream);
/* 1: only configurations whose result is bit-identical run to run. */
at_status at_set_deterministic(at_handle *handle, int deterministic);

/* Math mode of the handle for at_gemm with FP32 data: AT_MATH_DEFAULT (the
 * default) computes in exact FP32 like at_sgemm; AT_MATH_TF32 lets at_gemm
 * use the TF32 tensor cores (each FP32 input rounded to nearest even to
 * TF32's 10-bit mantissa, as cuBLAS does; FP32 accumulation): an explicit opt-in, as cuBLAS's math mode.
 * at_sgemm ignores it and stays exact. AT_ERR_INVALID_ARG for other values. */
at_status at_set_math_mode(at_handle *handle, at_math mode);

/* The typed GEMM: C = alpha * op(A) * op(B) + beta * C, with A, B and C all
 * of `type`, device pointers, leading dimensions in elements:
 * - AT_R_16BF, AT_R_16F: tensor cores with FP32 accumulation; alpha and
 *   beta are applied in FP32 to the accumulator and C, which has the input
 *   type, is rounded once when stored. C of the input type (as cublasGemmEx
 *   with Ctype = Atype and frameworks do) halves the epilogue's memory
 *   traffic and keeps one type per call.
 * - AT_R_32F: exact FP32 (the same kernels as at_sgemm), or TF32 tensor
 *   cores with an FP32 C when the handle's math mode is AT_MATH_TF32.
 * op(X) is X (AT_OP_N) or its transpose (AT_OP_T); op(A) is m x k, op(B)
 * k x n, C m x n. Leading dimensions follow the BLAS rules: row-major
 * (AT_ROW_MAJOR), each matrix as stored has ld >= its columns: lda >= k
 * (op N) or m (op T), ldb >= n (N) or k (T), ldc >= n; column-major
 * (AT_COL_MAJOR, cuBLAS's convention), ld >= its rows: lda >= m (N) or k
 * (T), ldb >= k (N) or n (T), ldc >= m. A smaller one, a negative size or
 * an order, op or type outside the enums is AT_ERR_INVALID_ARG (the rule
 * broken in at_errmsg), C untouched. A column-major call runs as the
 * row-major product of the swapped operands (C' = op(B)' op(A)'), so both
 * orders share the kernels tuned for each pair of ops. Any m, n, k >= 0 and
 * any leading dimension or pointer alignment is correct (unaligned or
 * transposed operands may be packed first). If beta == 0, C is not read.
 * - AT_R_64F: double precision throughout (FP64 tensor cores on sm_80+,
 *   FFMA64 elsewhere; the math mode does not apply); alpha and beta in double;
 *   op T as the dgemm family's tile layouts. */
at_status at_gemm(at_handle *handle, at_order order, at_op op_a, at_op op_b, int m, int n,
                  int k, at_dtype type, double alpha, const void *A, int lda, const void *B,
                  int ldb, double beta, void *C, int ldc);

/* A fused epilogue of at_gemm_epilogue: D = act(alpha op(A) op(B) + beta C + bias), formed in
 * FP32 where alpha and beta are applied and rounded once when stored into C. Append only. */
typedef enum at_activation {
    AT_ACT_NONE = 0,
    AT_ACT_RELU = 1,             /* max(x, 0) */
    AT_ACT_GELU_TANH = 2,        /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    AT_ACT_GELU_ERF = 3          /* 0.5 x (1 + erf(x / sqrt(2))) */
} at_activation;
typedef enum at_bias_kind {
    AT_BIAS_NONE = 0,
    AT_BIAS_ROW = 1,             /* bias[i] added to row i of C: m elements */
    AT_BIAS_COL = 2              /* bias[j] added to column j of C: n elements */
} at_bias_kind;
typedef struct at_epilogue {
    at_activation activation;
    at_bias_kind bias_kind;
    const void *bias;            /* device pointer, C's type (FP32 for TF32 math), aligned to
                                    its element; NULL exactly when bias_kind is AT_BIAS_NONE */
} at_epilogue;

/* at_gemm with a fused epilogue: C = act(alpha * op(A) * op(B) + beta * C + bias), rows and
 * columns those of C as the call gives it (in either order: a per-row bias has m elements).
 * Arguments, orders, ops and leading dimensions as at_gemm; epi NULL or all none is at_gemm.
 * The bias of a product with k == 0 is added too (C = act(beta C + bias)). Computed by the
 * tensor-core family: AT_R_16BF, AT_R_16F, and AT_R_32F with the handle's math mode
 * AT_MATH_TF32; exact FP32 and FP64 with an epilogue are AT_ERR_UNSUPPORTED. An activation or
 * bias kind outside the enums, a bias pointer NULL with a bias kind or given without one, or
 * one not aligned to its element is AT_ERR_INVALID_ARG (the rule in at_errmsg), C untouched.
 * Each epilogue is its own problem kind: tuned, stored and looked up apart from the plain
 * GEMM (`autotune --problems 4096x4096x4096:bf16:bias_col:gelu`), never served by its
 * kernels, nor by the vendor library. */
at_status at_gemm_epilogue(at_handle *handle, at_order order, at_op op_a, at_op op_b, int m,
                           int n, int k, at_dtype type, double alpha, const void *A, int lda,
                           const void *B, int ldb, double beta, void *C, int ldc,
                           const at_epilogue *epi);

/* The FP8 GEMM with per-tensor scales (as cublasLtMatmul's scale pointers):
 *   C = scale_d * (alpha * scale_a * scale_b * op(A) op(B) + beta * C)
 * A of type_a and B of type_b, each AT_R_8F_E4M3 or AT_R_8F_E5M2 but not both E5M2 (E4M3 x E4M3,
 * E4M3 x E5M2, E5M2 x E4M3, as cuBLASLt takes them); C of type_c, AT_R_16BF, AT_R_16F or AT_R_32F.
 * The products are exact in the FP32 accumulator; the scales and alpha are applied in FP32 to it,
 * beta to C, and C is rounded once when stored. scale_a, scale_b, scale_d: device pointers to one
 * float each (read by the kernel at the call, so a scale computed on the GPU needs no copy to the
 * host), 4-byte aligned; NULL means 1.0. Orders, ops, sizes and leading dimensions as at_gemm
 * (elements; FP8 leading dimensions are bytes). Computed by the tensor-core family on sm_90
 * (wgmma's FP8 form reads A and B K-major: row-major A op N and B op T, column-major A op T and
 * B op N, read in place when their bases and leading dimensions are 16-byte aligned; every other
 * layout or alignment is first copied by a transposing or aligning pack, any m, n, k >= 0).
 * AT_ERR_INVALID_ARG (the rule in at_errmsg, C untouched) for a type outside those, both E5M2,
 * a misaligned scale pointer, non-finite alpha or beta, and at_gemm's checks;
 * AT_ERR_UNSUPPORTED on a device other than sm_90. Each type triple is its own problem kind,
 * tuned and looked up apart (`autotune --problems 4096x4096x4096:bf16:e4m3xe4m3`). */
at_status at_gemm_fp8(at_handle *handle, at_order order, at_op op_a, at_op op_b, int m, int n,
                      int k, at_dtype type_a, at_dtype type_b, at_dtype type_c, double alpha,
                      const void *A, int lda, const float *scale_a, const void *B, int ldb,
                      const float *scale_b, double beta, void *C, int ldc, const float *scale_d);

/* The block-scaled FP8 GEMM (DeepSeek-V3's and DeepGEMM's 1 x 128 and 128 x 128 scales):
 *   C = scale_d * (alpha * sum over K-blocks kb of scale_a[i][kb] scale_b[j / 128][kb]
 *                  (op(A) op(B) over the kb-th 128 of K)[i][j] + beta * C)
 * with kb = 0 .. ceil(k / 128) - 1 and, on the host's row-major view (the index named first is
 * the slow one):
 *   scale_a: m x ceil(k / 128) floats, scale_a[i * ceil(k / 128) + kb] the scale of row i of
 *            op(A) over K-block kb (a 1 x 128 slice);
 *   scale_b: ceil(n / 128) x ceil(k / 128) floats, scale_b[jb * ceil(k / 128) + kb] the scale of
 *            the 128 x 128 block of op(B) with K-block kb and columns 128 jb .. 128 jb + 127;
 *   scale_d: one float (NULL means 1.0), as at_gemm_fp8's.
 * All device pointers, 4-byte aligned, read by the kernel at the call; scale_a and scale_b must
 * be given when m, n and k are all > 0. Each K-block's product is accumulated by the tensor cores
 * and promoted to an FP32 accumulator with its two scales (the accuracy of cuBLASLt without fast
 * accumulation). Types, ops, sizes, leading dimensions and alignment as at_gemm_fp8; row-major
 * only (a column-major call is AT_ERR_UNSUPPORTED: its canonical form would need the 1 x 128
 * scales on B). AT_ERR_INVALID_ARG (the rule in at_errmsg, C untouched) for at_gemm_fp8's
 * reasons and a NULL scale_a or scale_b; AT_ERR_UNSUPPORTED on a device other than sm_90. Its
 * own problem kinds (`autotune --problems 4096x4096x4096:bf16:e4m3xe4m3_b128:NT`). */
at_status at_gemm_fp8_blockscaled(at_handle *handle, at_order order, at_op op_a, at_op op_b,
                                  int m, int n, int k, at_dtype type_a, at_dtype type_b,
                                  at_dtype type_c, double alpha, const void *A, int lda,
                                  const float *scale_a, const void *B, int ldb,
                                  const float *scale_b, double beta, void *C, int ldc,
                                  const float *scale_d);

/* C = alpha * A * B + beta * C in double precision, row-major, A is m x k
 * (lda >= k), B is k x n (ldb >= n), C is m x n (ldc >= n), device pointers:
 * at_gemm with AT_R_64F, AT_ROW_MAJOR and op N (any sizes, leading dimensions
 * and alignment; C is not read when beta == 0). */
at_status at_dgemm(at_handle *handle, int m, int n, int k, double alpha, const double *A,
                   int lda, const double *B, int ldb, double beta, double *C, int ldc);
/* Strided batched GEMM: for b in [0, batch_count),
 *   C_b = alpha * op(A_b) * op(B_b) + beta * C_b,
 * A_b = A + b * stride_a (elements), B_b = B + b * stride_b, C_b = C + b * stride_c; all of
 * `type` (any type at_gemm takes, with its rules: BF16 and FP16 on the tensor cores, FP32
 * exact unless the math mode is AT_MATH_TF32, FP64), device pointers,
 * leading dimensions in elements, order AT_ROW_MAJOR or AT_COL_MAJOR (the BLAS convention:
 * op(A) is m x k, stored m x k for op N or k x m for op T, ld >= its rows in column-major
 * and >= its columns in row-major; likewise B k x n and C m x n). Any m, n, k >= 0 and
 * any alignment. stride_a and stride_b may be 0 (one matrix for every product); the
 * products' C must not overlap: with batch_count > 1, stride_c >= the span of one C
 * ((m - 1) * ldc + n row-major, (n - 1) * ldc + m column-major). If beta == 0, C is not
 * read. batch_count 0, m 0 or n 0 computes nothing. Runs the family whose stored
 * measurement of this problem is fastest on this device (bgemm for small matrices;
 * others that accept batches), else by a rule: small products (m, n, k <= 128) bgemm.
 * AT_ERR_INVALID_ARG (message in at_errmsg) for negative sizes, counts or strides,
 * leading dimensions too small, overlapping C, NULL pointers, non-finite alpha or beta, or
 * a type outside the enum. */
at_status at_gemm_strided_batched(at_handle *handle, at_order order, at_op op_a, at_op op_b,
                                  int m, int n, int k, at_dtype type, double alpha,
                                  const void *A, int lda, long long stride_a, const void *B,
                                  int ldb, long long stride_b, double beta, void *C, int ldc,
                                  long long stride_c, int batch_count);

/* C = alpha * A * B + beta * C, row-major, A is m x k, B is k x n. */
at_status at_sgemm(at_handle *handle, int m, int n, int k, float alpha,
                   const float *A, int lda, const float *B, int ldb,
                   float beta, float *C, int ldc);
/* *result (device memory) = sum of x[0..n). */
at_status at_ssum(at_handle *handle, long long n, const float *x, float *result);
/* *result (device memory) = sum of x[i] * y[i]. */
at_status at_sdot(at_handle *handle, long long n, const float *x,
                  const float *y, float *result);
/* Solves A x = b (A n x n row-major, device memory) by Jacobi iteration from
 * the x given, until ||x_new - x||_inf <= tol * ||x_new||_inf or max_iter.
 * iterations/residual (host pointers, may be NULL) receive the iterations run
 * and the final relative update. AT_ERR_NOT_CONVERGED after max_iter,
 * AT_ERR_DIVERGED on NaN/Inf or a zero diagonal. */
at_status at_sjacobi(at_handle *handle, int n, const float *A, const float *b,
                     float *x, float tol, int max_iter,
                     int *iterations, float *residual);

/* Double precision, with the contracts of the FP32 calls above (argument
 * checks, deterministic mode, statuses); pointers must be 8-byte aligned
 * (AT_ERR_INVALID_ARG otherwise), any n and offset into an array is fine.
 * *result (device memory) = sum of x[0..n), accumulated in double. */
at_status at_dsum(at_handle *handle, long long n, const double *x, double *result);
/* *result (device memory) = sum of x[i] * y[i], accumulated in double. */
at_status at_ddot(at_handle *handle, long long n, const double *x, const double *y,
                  double *result);
/* at_sjacobi in double: A, b, x and every sum in double, so the relative
 * update can go down to about 1e-15 where FP32 stalls near 1e-7;
 * iterations/residual (host pointers, may be NULL) as there. */
at_status at_djacobi(at_handle *handle, int n, const double *A, const double *b, double *x,
                     double tol, int max_iter, int *iterations, double *residual);

/* Counters of compiles, loads and lookup levels since at_create. */
/* A shape never tuned on this device (lookup level NEAREST or ARCH) is
 * served by stored winners of nearby shapes: its first calls rotate among
 * up to `candidates` of them (cubins from the user's or a read-only
 * database, never compiled) and the built-in choice for its class, timed on
 * the calls themselves, 3 calls each; the fastest then serves the shape and
 * is stored in the database (an unverified result, which the tuner
 * re-measures), so later handles start from it. A call of at most 2^35
 * flops served below the exact level (a shape no database knows too) also
 * times its family's next matching built-in row and each other family that
 * computes it (its nearest stored winner and built-in choice); at_get_stats
 * names the family that runs. Every candidate computes the same product. 0 or 1 turns trials off; default
 * AT_TRIALS_DEFAULT, at most AT_TRIALS_MAX; deterministic mode never
 * tries. AT_ERR_INVALID_ARG outside 0..AT_TRIALS_MAX. */
#define AT_TRIALS_DEFAULT 4
#define AT_TRIALS_MAX 8
at_status at_set_trials(at_handle *handle, int candidates);

/* The vendor library as one more candidate (as PyTorch TunableOp keeps its default): where
 * cuBLAS is installed, a GEMM shape's first calls also time cuBLAS's call for it (within the
 * trials above, so at_set_trials(h, 0) turns that timing off too), and a shape tuned on this
 * device compares its stored cuBLAS measurement (the tuner takes one per problem; a call
 * under AT_VENDOR_STORED_MIN_MS is timed in a trial instead); cuBLAS
 * then serves the shape where it is more than AT_VENDOR_MARGIN faster than the best kernel
 * of ours, and at_get_stats says so (vendor_calls, last_vendor). AT_VENDOR_ON is the default
 * unless $AUTOTUNE_VENDOR is "off" or "0"; AT_VENDOR_OFF serves our kernels alone (as the
 * benchmarks measure them). Deterministic mode never picks the vendor. Shapes already served
 * keep their choice: set it before the first call. AT_ERR_INVALID_ARG for other modes. */
#define AT_VENDOR_OFF 0
#define AT_VENDOR_ON 1
#define AT_VENDOR_MARGIN 0.02
/* The stored times decide a tuned shape only where both are at least this long (ms); a
 * shorter call's host path, which the tuner's times leave out, is a large part of what the
 * caller waits for, so its first calls time both (a trial) instead. */
#define AT_VENDOR_STORED_MIN_MS 0.1
at_status at_set_vendor(at_handle *handle, int mode);

at_status at_get_stats(const at_handle *handle, at_stats *stats);
const char *at_status_string(at_status status);
/* Detailed message of the handle's last failure ("" if none); never NULL. */
const char *at_errmsg(const at_handle *handle);

#ifdef __cplusplus
}
#endif
#endif
