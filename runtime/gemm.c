/* gemm.c: the GEMM entry points of the public runtime (at_sgemm, at_gemm, at_dgemm,
 * at_gemm_epilogue, at_gemm_fp8, at_gemm_fp8_blockscaled, at_gemm_strided_batched): argument checks, the row-major canonical form,
 * and the family each problem runs (gemm_family: measured, else the shape classes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "autotune.h"
#include "batched.h"
#include "handle.h"
#include "lookup.h"
#include "tpl.h"

static const tpl_family *gemm_family(at_handle *h, const tpl_problem *p, const char *main_kernel);

/* ---------------- the call table (handle.h) ---------------- */

/* The key of a call: the caller's arguments less pointers and scalars, the handle's math mode
 * and deterministic mode (both change a call's problem or plan). */
static ah_call_key call_key(const at_handle *h, int entry, at_order order, at_op op_a, at_op op_b,
                            at_dtype type, int m, int n, int k, int lda, int ldb, int ldc,
                            long long stride_a, long long stride_b, long long stride_c,
                            int batch)
{
    ah_call_key key;
    memset(&key, 0, sizeof key);
    key.entry = entry;
    key.order = (int)order;
    key.op_a = (int)op_a;
    key.op_b = (int)op_b;
    key.type = (int)type;
    key.math = (int)h->math;
    key.deterministic = h->deterministic;
    key.m = m;
    key.n = n;
    key.k = k;
    key.lda = lda;
    key.ldb = ldb;
    key.ldc = ldc;
    key.batch = batch;
    key.stride_a = stride_a;
    key.stride_b = stride_b;
    key.stride_c = stride_c;
    return key;
}

/* The key as 64-bit words, mixed (a short call's host path: ten words, no loop over bytes). */
static size_t call_hash(const ah_call_key *key)
{
    unsigned long long w[(sizeof *key + 7) / 8] = {0}, x = 0x9E3779B97F4A7C15ull;
    memcpy(w, key, sizeof *key);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        x ^= w[i];
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 32;
    }
    return (size_t)x;
}

struct at_plan *ah_call_find(at_handle *h, const ah_call_key *key)
{
    if (!h->n_calls)
        return NULL;
    if (h->last_call.plan && memcmp(&h->last_call.key, key, sizeof *key) == 0)
        return h->last_call.plan;
    size_t mask = h->cap_calls - 1;
    for (size_t i = call_hash(key) & mask; h->calls[i].plan; i = (i + 1) & mask)
        if (memcmp(&h->calls[i].key, key, sizeof *key) == 0) {
            h->last_call = h->calls[i];
            return h->calls[i].plan;
        }
    return NULL;
}

void ah_call_forget(at_handle *h)
{
    if (h->calls)
        memset(h->calls, 0, h->cap_calls * sizeof *h->calls);
    h->n_calls = 0;
    h->last_call.plan = NULL;
}

void ah_call_remember(at_handle *h, const ah_call_key *key, struct at_plan *pl)
{
    if (!pl || ah_call_find(h, key))
        return;
    if (h->n_calls >= AH_CALLS_MAX)
        ah_call_forget(h);          /* bounded: a program of endless shapes starts over */
    if ((h->n_calls + 1) * 4 > h->cap_calls * 3) {  /* at most 3/4 full */
        size_t cap = h->cap_calls ? h->cap_calls * 2 : 64;
        ah_call *table = calloc(cap, sizeof *table);
        if (!table)
            return;
        for (size_t i = 0; i < h->cap_calls; i++) {
            if (!h->calls[i].plan)
                continue;
            size_t j = call_hash(&h->calls[i].key) & (cap - 1);
            while (table[j].plan)
                j = (j + 1) & (cap - 1);
            table[j] = h->calls[i];
        }
        free(h->calls);
        h->calls = table;
        h->cap_calls = cap;
    }
    size_t mask = h->cap_calls - 1, i = call_hash(key) & mask;
    while (h->calls[i].plan)
        i = (i + 1) & mask;
    h->calls[i].key = *key;
    h->calls[i].plan = pl;
    h->last_call = h->calls[i];
    h->n_calls++;
}

/* The checks every row-major GEMM entry point (named fn in messages) makes:
 * sizes >= 0, leading dimensions >= the row lengths, and, unless m or n is
 * 0 (*empty = 1: nothing to compute), non-NULL matrices (A and B only when
 * k > 0). AT_OK, or AT_ERR_INVALID_ARG with the message in h. */
static at_status gemm_check(at_handle *h, const char *fn, int m, int n, int k, int lda, int ldb,
                            int ldc, const void *A, const void *B, const void *C, int *empty)
{
    *empty = 0;
    if (m < 0 || n < 0 || k < 0)
        return ah_fail(h, AT_ERR_INVALID_ARG, "%s: negative size m=%d n=%d k=%d", fn, m, n, k);
    if (lda < (k > 1 ? k : 1) || ldb < (n > 1 ? n : 1) || ldc < (n > 1 ? n : 1))
        return ah_fail(h, AT_ERR_INVALID_ARG,
                    "%s: leading dimensions too small (row-major: lda >= k, ldb >= n, "
                    "ldc >= n): lda=%d ldb=%d ldc=%d", fn, lda, ldb, ldc);
    if (m == 0 || n == 0) {
        *empty = 1;
        return AT_OK;
    }
    if (!C || (k > 0 && (!A || !B)))
        return ah_fail(h, AT_ERR_INVALID_ARG, "%s: NULL matrix pointer", fn);
    return AT_OK;
}

at_status at_sgemm(at_handle *h, int m, int n, int k, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    /* at_sgemm is exact FP32 whatever the math mode: its key says AT_MATH_DEFAULT */
    ah_call_key key = call_key(h, AH_CALL_SGEMM, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, AT_R_32F, m, n,
                               k, lda, ldb, ldc, 0, 0, 0, 1);
    key.math = AT_MATH_DEFAULT;
    struct at_plan *pl = ah_call_find(h, &key);
    tpl_args args = tpl_gemm_args(m, n, k, alpha, (CUdeviceptr)A, lda, (CUdeviceptr)B, ldb, beta,
                                  (CUdeviceptr)C, ldc);
    if (pl && C && (k == 0 || (A && B))) {
        /* served before with these sizes: its checks passed and its plan is known */
        h->call_hits++;
        return ah_run_known_plan(h, pl, &args);
    }
    int empty = 0;
    at_status s = gemm_check(h, "at_sgemm", m, n, k, lda, ldb, ldc, A, B, C, &empty);
    if (s != AT_OK || empty)
        return s;
    const tpl_family *fam = gemm_family(h, &args.problem, "matmul");
    s = ah_run_plan(h, fam ? fam->name : "matmul", &args, &pl);
    ah_call_remember(h, &key, pl);
    return s;
}

/* The family of a typed GEMM call ("matmul" for exact FP32, "tcgemm" for
 * the tensor-core kinds) in *kernel, and the kind in p. AT_ERR_INVALID_ARG
 * for values outside the enums, AT_ERR_UNSUPPORTED for kinds this release
 * does not compute; the message in h. */
static at_status gemm_route(at_handle *h, at_order order, at_op op_a, at_op op_b,
                            at_dtype type, tpl_problem *p, const char **kernel)
{
    if (type == AT_R_8F_E4M3 || type == AT_R_8F_E5M2)
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_gemm: FP8 operands (type %d) go through "
                       "at_gemm_fp8 (their scales and C's type)", (int)type);
    if ((unsigned)order > AT_COL_MAJOR || (unsigned)op_a > AT_OP_T || (unsigned)op_b > AT_OP_T ||
        (unsigned)type > AT_R_16BF)
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_gemm: unknown order %d, op %d/%d or type %d",
                    (int)order, (int)op_a, (int)op_b, (int)type);
    p->dtype = type;
    p->math = type == AT_R_32F ? h->math : AT_MATH_DEFAULT;
    p->order = order;
    p->op_a = op_a;
    p->op_b = op_b;
    *kernel = lk_gemm_main_family(p);
    return AT_OK;
}

/* The family that serves a GEMM problem (row-major canonical form) whose type's large-tile
 * family is main_kernel (gemm_route): the family named by $AUTOTUNE_GEMM_FAMILY where it computes
 * p, "main" naming main_kernel's (a diagnostic: serve every call such a family can with it);
 * else lk_choose_family_layers
 * over main_kernel's family, the families whose claims hook may take the shape (skinny), and
 * for a batch the bgemm family: the fastest measured at p's exact shape in the first database
 * layer that has one, else the shape-class rule. Remembered per problem (the newest 8): the
 * choice is a database query. NULL if none computes p. */
static const tpl_family *gemm_family(at_handle *h, const tpl_problem *p, const char *main_kernel)
{
    int slots = h->n_gemm_fam < 8 ? h->n_gemm_fam : 8;
    for (int i = 0; i < slots; i++)
        if (h->gemm_fam[i].deterministic == h->deterministic &&
            tpl_problem_equal(&h->gemm_fam[i].problem, p))
            return h->gemm_fam[i].fam;
    const tpl_family *fam = NULL, *main_fam = tpl_find(main_kernel);
    const char *forced = getenv("AUTOTUNE_GEMM_FAMILY");
    if (forced && strcmp(forced, "main") == 0)
        fam = main_fam;
    else if (forced && *forced)
        fam = tpl_find(forced);
    if (fam && !tpl_family_accepts(fam, p))
        fam = NULL;
    if (!fam) {
        const tpl_family *fams[32];
        int measured = 0, n_fams = lk_gemm_families(p, main_kernel, fams, 32);
        fam = lk_choose_family_layers(h->layers, h->n_layers, &h->info, p, h->deterministic,
                                      fams, n_fams, &measured);
    }
    if (fam) {
        int slot = h->n_gemm_fam++ % 8;
        h->gemm_fam[slot].problem = *p;
        h->gemm_fam[slot].deterministic = h->deterministic;
        h->gemm_fam[slot].fam = fam;
    }
    return fam;
}

/* The checks of a typed GEMM call in any order and ops (named fn in messages): sizes and
 * leading dimensions by BLAS rules (ag_gemm_check), then, unless m or n is 0 (*empty = 1),
 * non-NULL matrices (A and B only when k > 0). AT_OK, or AT_ERR_INVALID_ARG with the message
 * in h. */
static at_status gemm_check_ops(at_handle *h, const char *fn, const tpl_args *args, int *empty)
{
    char why[256];
    *empty = 0;
    if (ag_gemm_check(args, why, sizeof why) != AT_OK)
        return ah_fail(h, AT_ERR_INVALID_ARG, "%s: %s", fn, why);
    const tpl_problem *p = &args->problem;
    if (p->dims[0] == 0 || p->dims[1] == 0) {
        *empty = 1;
        return AT_OK;
    }
    if (!args->operand[TPL_GEMM_C].ptr ||
        (p->dims[2] > 0 && (!args->operand[TPL_GEMM_A].ptr || !args->operand[TPL_GEMM_B].ptr)))
        return ah_fail(h, AT_ERR_INVALID_ARG, "%s: NULL matrix pointer", fn);
    return AT_OK;
}

at_status at_gemm(at_handle *h, at_order order, at_op op_a, at_op op_b, int m, int n, int k,
                  at_dtype type, double alpha, const void *A, int lda, const void *B, int ldb,
                  double beta, void *C, int ldc)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    ah_call_key key = call_key(h, AH_CALL_GEMM, order, op_a, op_b, type, m, n, k, lda, ldb, ldc,
                               0, 0, 0, 1);
    struct at_plan *pl = ah_call_find(h, &key);
    tpl_args args = tpl_gemm_args(m, n, k, 0.0f, (CUdeviceptr)A, lda, (CUdeviceptr)B, ldb, 0.0f,
                                  (CUdeviceptr)C, ldc);
    if (pl && isfinite(alpha) && isfinite(beta) && C && (k == 0 || (A && B))) {
        /* served before with these sizes and kind: its checks passed and its plan is known */
        args.problem.dtype = type;
        args.problem.math = type == AT_R_32F ? h->math : AT_MATH_DEFAULT;
        args.problem.order = order;
        args.problem.op_a = op_a;
        args.problem.op_b = op_b;
        args.scalar[TPL_GEMM_ALPHA] = alpha;
        args.scalar[TPL_GEMM_BETA] = beta;
        ag_gemm_canonical(&args);
        h->call_hits++;
        return ah_run_known_plan(h, pl, &args);
    }
    const char *kernel = NULL;
    at_status s = gemm_route(h, order, op_a, op_b, type, &args.problem, &kernel);
    if (s != AT_OK)
        return s;
    if (!isfinite(alpha) || !isfinite(beta))
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_gemm: alpha and beta must be finite");
    int empty = 0;
    s = gemm_check_ops(h, "at_gemm", &args, &empty);
    if (s != AT_OK || empty)
        return s;
    args.scalar[TPL_GEMM_ALPHA] = alpha;
    args.scalar[TPL_GEMM_BETA] = beta;
    ag_gemm_canonical(&args);      /* the families compute the row-major form (tpl.h) */
    const tpl_family *fam = gemm_family(h, &args.problem, kernel);
    if (!fam)
        return ah_fail(h, AT_ERR_UNSUPPORTED, "at_gemm: no family computes this problem");
    s = ah_run_plan(h, fam->name, &args, &pl);
    ah_call_remember(h, &key, pl);
    return s;
}

/* at_gemm with a fused epilogue: at_gemm's checks, then the epilogue's (ag_check_epilogue);
 * the problem's kind carries the epilogue, the bias travels as operand TPL_GEMM_BIAS, and the
 * tensor-core family computes it (the only one with epilogues). */
at_status at_gemm_epilogue(at_handle *h, at_order order, at_op op_a, at_op op_b, int m, int n,
                           int k, at_dtype type, double alpha, const void *A, int lda,
                           const void *B, int ldb, double beta, void *C, int ldc,
                           const at_epilogue *epi)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    tpl_args args = tpl_gemm_args(m, n, k, 0.0f, (CUdeviceptr)A, lda, (CUdeviceptr)B, ldb, 0.0f,
                                  (CUdeviceptr)C, ldc);
    const char *kernel = NULL;
    at_status s = gemm_route(h, order, op_a, op_b, type, &args.problem, &kernel);
    if (s != AT_OK)
        return s;
    if (!isfinite(alpha) || !isfinite(beta))
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_gemm_epilogue: alpha and beta must be finite");
    int code = 0;
    char why[256];
    if ((s = ag_check_epilogue("at_gemm_epilogue", epi, type, args.problem.math, &code, why,
                               sizeof why)) != AT_OK)
        return ah_fail(h, s, "%s", why);
    if (code == 0)                  /* no epilogue: the plain GEMM */
        return at_gemm(h, order, op_a, op_b, m, n, k, type, alpha, A, lda, B, ldb, beta, C, ldc);
    int empty = 0;
    s = gemm_check_ops(h, "at_gemm_epilogue", &args, &empty);
    if (s != AT_OK || empty)
        return s;
    args.problem.epilogue = code;
    args.operand[TPL_GEMM_BIAS].ptr = (CUdeviceptr)epi->bias;
    args.scalar[TPL_GEMM_ALPHA] = alpha;
    args.scalar[TPL_GEMM_BETA] = beta;
    ag_gemm_canonical(&args);      /* a per-row bias becomes per-column there (args.h) */
    return ah_run_plan(h, "tcgemm", &args, NULL);
}

/* The FP8 calls' common part after their kind checks: finite alpha and beta, at_gemm's size and
 * operand checks on args (its problem's kind set by the caller), sm_90 only (refused before any
 * lookup elsewhere), the scales as operands TPL_GEMM_SCALE_*; canonical: the row-major form of a
 * call that may be column-major (A and B swap with their types and scales, args.h). Then the
 * tensor-core family's PATH 90 computes it. */
static at_status gemm_fp8_run(at_handle *h, const char *fn, tpl_args *args, double alpha,
                              double beta, const float *scale_a, const float *scale_b,
                              const float *scale_d, int canonical)
{
    if (!isfinite(alpha) || !isfinite(beta))
        return ah_fail(h, AT_ERR_INVALID_ARG, "%s: alpha and beta must be finite", fn);
    int empty = 0;
    at_status s = gemm_check_ops(h, fn, args, &empty);
    if (s != AT_OK || empty)
        return s;
    if (h->info.cc_major != 9 || h->info.cc_minor != 0)
        return ah_fail(h, AT_ERR_UNSUPPORTED, "%s: FP8 GEMM runs on sm_90 (Hopper, wgmma) only; "
                       "this device is sm_%d%d", fn, h->info.cc_major, h->info.cc_minor);
    args->operand[TPL_GEMM_SCALE_A].ptr = (CUdeviceptr)scale_a;
    args->operand[TPL_GEMM_SCALE_B].ptr = (CUdeviceptr)scale_b;
    args->operand[TPL_GEMM_SCALE_D].ptr = (CUdeviceptr)scale_d;
    args->scalar[TPL_GEMM_ALPHA] = alpha;
    args->scalar[TPL_GEMM_BETA] = beta;
    if (canonical)
        ag_gemm_canonical(args);
    return ah_run_plan(h, "tcgemm", args, NULL);
}

/* The FP8 GEMM: its kinds (ag_check_fp8), then gemm_fp8_run; the FP8 pair is the problem's
 * math (tpl.h). */
at_status at_gemm_fp8(at_handle *h, at_order order, at_op op_a, at_op op_b, int m, int n, int k,
                      at_dtype type_a, at_dtype type_b, at_dtype type_c, double alpha,
                      const void *A, int lda, const float *scale_a, const void *B, int ldb,
                      const float *scale_b, double beta, void *C, int ldc, const float *scale_d)
{
    static const char fn[] = "at_gemm_fp8";
    if (!h)
        return AT_ERR_INVALID_ARG;
    if ((unsigned)order > AT_COL_MAJOR || (unsigned)op_a > AT_OP_T || (unsigned)op_b > AT_OP_T)
        return ah_fail(h, AT_ERR_INVALID_ARG, "%s: unknown order %d or op %d/%d", fn,
                       (int)order, (int)op_a, (int)op_b);
    at_math math;
    char why[256];
    at_status s = ag_check_fp8(fn, type_a, type_b, type_c, scale_a, scale_b, scale_d, &math, why,
                               sizeof why);
    if (s != AT_OK)
        return ah_fail(h, s, "%s", why);
    tpl_args args = tpl_gemm_args(m, n, k, 0.0f, (CUdeviceptr)A, lda, (CUdeviceptr)B, ldb, 0.0f,
                                  (CUdeviceptr)C, ldc);
    args.problem.dtype = type_c;
    args.problem.math = math;
    args.problem.order = order;
    args.problem.op_a = op_a;
    args.problem.op_b = op_b;
    return gemm_fp8_run(h, fn, &args, alpha, beta, scale_a, scale_b, scale_d, 1);
}

/* The block-scaled FP8 GEMM: ag_check_fp8_block's checks, then gemm_fp8_run; the block-scaled
 * pair is the problem's math, scale_a and scale_b (the arrays) and scale_d travel as
 * at_gemm_fp8's scales, and the tensor-core family's SCALE 1 kernels compute it. Row-major only,
 * so the call is its own canonical form. */
at_status at_gemm_fp8_blockscaled(at_handle *h, at_order order, at_op op_a, at_op op_b, int m,
                                  int n, int k, at_dtype type_a, at_dtype type_b,
                                  at_dtype type_c, double alpha, const void *A, int lda,
                                  const float *scale_a, const void *B, int ldb,
                                  const float *scale_b, double beta, void *C, int ldc,
                                  const float *scale_d)
{
    static const char fn[] = "at_gemm_fp8_blockscaled";
    if (!h)
        return AT_ERR_INVALID_ARG;
    if ((unsigned)order > AT_COL_MAJOR || (unsigned)op_a > AT_OP_T || (unsigned)op_b > AT_OP_T)
        return ah_fail(h, AT_ERR_INVALID_ARG, "%s: unknown order %d or op %d/%d", fn,
                       (int)order, (int)op_a, (int)op_b);
    at_math math;
    char why[256];
    at_status s = ag_check_fp8_block(fn, order, m, n, k, type_a, type_b, type_c, scale_a,
                                     scale_b, scale_d, &math, why, sizeof why);
    if (s != AT_OK)
        return ah_fail(h, s, "%s", why);
    tpl_args args = tpl_gemm_args(m, n, k, 0.0f, (CUdeviceptr)A, lda, (CUdeviceptr)B, ldb, 0.0f,
                                  (CUdeviceptr)C, ldc);
    args.problem.dtype = type_c;
    args.problem.math = math;
    args.problem.op_a = op_a;
    args.problem.op_b = op_b;
    return gemm_fp8_run(h, fn, &args, alpha, beta, scale_a, scale_b, scale_d, 0);
}

at_status at_dgemm(at_handle *h, int m, int n, int k, double alpha, const double *A, int lda,
                   const double *B, int ldb, double beta, double *C, int ldc)
{
    return at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, m, n, k, AT_R_64F, alpha, A, lda, B, ldb,
                   beta, C, ldc);
}

/* ---------------- strided batched GEMM ---------------- */

at_status at_gemm_strided_batched(at_handle *h, at_order order, at_op op_a, at_op op_b, int m,
                                  int n, int k, at_dtype type, double alpha, const void *A,
                                  int lda, long long stride_a, const void *B, int ldb,
                                  long long stride_b, double beta, void *C, int ldc,
                                  long long stride_c, int batch_count)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    bt_call c = {m, n, k, op_a, op_b, A, B, C, lda, ldb, ldc, stride_a, stride_b, stride_c};
    ah_call_key key = call_key(h, AH_CALL_BATCHED, order, op_a, op_b, type, m, n, k, lda, ldb,
                               ldc, stride_a, stride_b, stride_c, batch_count);
    struct at_plan *pl = ah_call_find(h, &key);
    int hit = pl && isfinite(alpha) && isfinite(beta) && C && (k == 0 || (A && B));
    int empty = 0;
    at_status s = hit ? AT_OK : bt_check(order, &c, type, batch_count, alpha, beta, &empty,
                                         h->errmsg, sizeof h->errmsg);
    if (s != AT_OK || empty)
        return s;
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 3;
    args.problem.dims[0] = c.m;
    args.problem.dims[1] = c.n;
    args.problem.dims[2] = c.k;
    args.problem.dtype = type;
    args.problem.math = type == AT_R_32F ? h->math : AT_MATH_DEFAULT;
    args.problem.order = order;
    args.problem.op_a = c.op_a;
    args.problem.op_b = c.op_b;
    args.problem.batch = batch_count;
    args.operand[TPL_GEMM_A] = (tpl_operand){(CUdeviceptr)c.A, c.lda, c.sa};
    args.operand[TPL_GEMM_B] = (tpl_operand){(CUdeviceptr)c.B, c.ldb, c.sb};
    args.operand[TPL_GEMM_C] = (tpl_operand){(CUdeviceptr)c.C, c.ldc, c.sc};
    args.scalar[TPL_GEMM_ALPHA] = alpha;
    args.scalar[TPL_GEMM_BETA] = beta;
    ag_gemm_canonical(&args);      /* the row-major form every family computes (tpl.h) */
    if (hit) {                      /* served before with these sizes and kind */
        h->call_hits++;
        return ah_run_known_plan(h, pl, &args);
    }
    const tpl_family *fam = gemm_family(h, &args.problem, lk_gemm_main_family(&args.problem));
    if (!fam) {
        char text[128];
        tpl_problem_format(&args.problem, text, sizeof text);
        return ah_fail(h, AT_ERR_UNSUPPORTED, "at_gemm_strided_batched: no family computes %s",
                    text);
    }
    s = ah_run_plan(h, fam->name, &args, &pl);
    ah_call_remember(h, &key, pl);
    return s;
}
