/* verify.c: the helpers every family's prepare()/check() verifies with:
 * workspaces, seeded inputs, float64 reference results (templates/reference.cu)
 * and relative errors, typed and untyped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

static unsigned grid_for(long long n, unsigned block)
{
    long long blocks = (n + block - 1) / block;
    if (blocks < 1)
        blocks = 1;
    if (blocks > 65535LL * 8)
        blocks = 65535LL * 8;
    return (unsigned)blocks;
}

at_status tpl_ws_alloc(at_exec *ref, tpl_workset *ws, size_t bytes, CUdeviceptr *ptr)
{
    if (ws->n_bufs >= TPL_MAX_BUFS)
        return ex_fail(ref, AT_ERR_INTERNAL, "workset holds at most %d buffers", TPL_MAX_BUFS);
    if (bytes == 0)
        bytes = 4;
    CUresult rc = ref->cu->MemAlloc(ptr, bytes);
    if (rc != CUDA_SUCCESS) {
        cudrv_describe(ref->cu, rc, "cuMemAlloc(workset)", ref->errmsg, ref->errlen);
        return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
    }
    ws->bufs[ws->n_bufs] = *ptr;
    ws->buf_bytes[ws->n_bufs] = bytes;
    ws->n_bufs++;
    return AT_OK;
}

void tpl_workset_free(const cudrv *cu, tpl_workset *ws)
{
    if (!ws)
        return;
    for (int i = 0; cu && i < ws->n_bufs; i++)
        if (ws->bufs[i])
            cu->MemFree(ws->bufs[i]);
    memset(ws, 0, sizeof *ws);
}

at_status tpl_fill_uniform(at_exec *ref, CUdeviceptr p, long long n,
                           unsigned long long seed, float lo, float hi)
{
    void *args[] = {&p, &n, &seed, &lo, &hi};
    return ex_launch(ref, "ref_fill_uniform", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}

at_status tpl_fill_diag_dominant(at_exec *ref, CUdeviceptr A, int n,
                                 unsigned long long seed, float margin)
{
    void *args[] = {&A, &n, &seed, &margin};
    return ex_launch(ref, "ref_fill_diag_dominant", (unsigned)n, 1, 1, 256, 1, 1, 0, args);
}

/* Runs one accumulating reference kernel into a zeroed 3-double scratch
 * and downloads the three sums. */
static at_status reference_sums(at_exec *ref, const char *kernel, unsigned grid,
                                void **args, int acc_arg, double sums[3])
{
    CUdeviceptr acc;
    at_status s = ex_scratch(ref, EX_MAX_SCRATCH - 1, 3 * sizeof(double), &acc);
    if (s != AT_OK)
        return s;
    if ((s = ex_memset32(ref, acc, 0, 6)) != AT_OK)
        return s;
    args[acc_arg] = &acc;
    if ((s = ex_launch(ref, kernel, grid, 1, 1, 256, 1, 1, 0, args)) != AT_OK)
        return s;
    return ex_download(ref, sums, acc, 3 * sizeof(double));
}

/* ||out - expected||_F / ||expected||_F from the reference kernels' sums
 * {sum of squared differences, sum of squared expected values, non-finite
 * outputs}: +inf if any output is not finite, the absolute norm when the
 * expected values are all zero. */
static double error_of_sums(const double sums[3])
{
    if (sums[2] > 0 || !isfinite(sums[0]))
        return INFINITY;
    return sums[1] == 0 ? sqrt(sums[0]) : sqrt(sums[0] / sums[1]);
}

at_status tpl_rel_error(at_exec *ref, CUdeviceptr out, CUdeviceptr expected,
                        long long n, double *error)
{
    double sums[3];
    void *args[] = {&n, &out, &expected, NULL};
    at_status s = reference_sums(ref, "ref_error", grid_for(n, 256), args, 3, sums);
    if (s == AT_OK)
        *error = error_of_sums(sums);
    return s;
}

at_status tpl_ref_gemm(at_exec *ref, int m, int n, int k, float alpha, CUdeviceptr A,
                       int lda, CUdeviceptr B, int ldb, float beta, CUdeviceptr C0,
                       CUdeviceptr C, int ldc)
{
    void *args[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C0, &C, &ldc};
    return ex_launch(ref, "ref_gemm", (unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16),
                     1, 16, 16, 1, 0, args);
}

size_t tpl_dtype_size(at_dtype t)
{
    switch (t) {
    case AT_R_32F: return 4;
    case AT_R_64F: return 8;
    case AT_R_16F: return 2;
    case AT_R_16BF: return 2;
    case AT_R_8F_E4M3: return 1;
    case AT_R_8F_E5M2: return 1;
    default: return 0;
    }
}

double tpl_unit_roundoff(at_dtype t)
{
    switch (t) {
    case AT_R_32F: return ldexp(1.0, -24);
    case AT_R_64F: return ldexp(1.0, -53);
    case AT_R_16F: return ldexp(1.0, -11);
    case AT_R_16BF: return ldexp(1.0, -8);
    case AT_R_8F_E4M3: return ldexp(1.0, -4);
    case AT_R_8F_E5M2: return ldexp(1.0, -3);
    default: return 0.0;
    }
}

at_status tpl_fill_typed(at_exec *ref, CUdeviceptr p, long long n, at_dtype t,
                         unsigned long long seed, float lo, float hi)
{
    if (tpl_dtype_size(t) == 0)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_fill_typed: unknown element type %d", (int)t);
    int dtype = (int)t;
    void *args[] = {&p, &n, &dtype, &seed, &lo, &hi};
    return ex_launch(ref, "ref_fill_typed", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}

at_status tpl_ref_gemm_typed(at_exec *ref, at_dtype t, int tf32, int m, int n, int k,
                             float alpha, CUdeviceptr A, long long lda, CUdeviceptr B,
                             long long ldb, float beta, CUdeviceptr C0, long long ldc0,
                             CUdeviceptr R)
{
    if (tpl_dtype_size(t) == 0 || (tf32 && t != AT_R_32F))
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_ref_gemm_typed: element type %d%s", (int)t,
                       tf32 ? " with TF32" : "");
    if (m < 1 || n < 1)
        return AT_OK;
    int dtype = (int)t, round_tf32 = tf32 != 0;
    long long ldr = n;
    void *args[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C0, &ldc0, &R, &ldr,
                    &dtype, &round_tf32};
    return ex_launch(ref, "ref_gemm_typed", (unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16),
                     1, 16, 16, 1, 0, args);
}

at_status tpl_ref_gemm_args(at_exec *ref, const tpl_args *args, CUdeviceptr C0, CUdeviceptr R)
{
    const tpl_problem *p = &args->problem;
    long long batch = tpl_problem_batch(p);
    if (tpl_dtype_size(p->dtype) == 0 || p->order != AT_ROW_MAJOR || p->n_dims != 3 ||
        p->epilogue < 0 || p->epilogue >= TPL_N_EPI ||
        (TPL_EPI_BIAS(p->epilogue) != TPL_BIAS_NONE && !args->operand[TPL_GEMM_BIAS].ptr) ||
        (p->math == AT_MATH_TF32 && p->dtype != AT_R_32F) ||
        (p->math != AT_MATH_DEFAULT && p->math != AT_MATH_TF32 && !tpl_math_fp8(p->math)) ||
        batch > 65535 ||
        p->dims[0] > 0x7fffffff || p->dims[1] > 0x7fffffff || p->dims[2] > 0x7fffffff)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_ref_gemm_args: a problem it cannot check");
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    if (m < 1 || n < 1)
        return AT_OK;
    const tpl_operand *a = &args->operand[TPL_GEMM_A], *b = &args->operand[TPL_GEMM_B],
                      *c = &args->operand[TPL_GEMM_C];
    /* op N: (i, p) at i * ld + p; op T: at p * ld + i */
    long long a_rs = p->op_a == AT_OP_T ? 1 : a->ld, a_cs = p->op_a == AT_OP_T ? a->ld : 1;
    long long b_rs = p->op_b == AT_OP_T ? 1 : b->ld, b_cs = p->op_b == AT_OP_T ? b->ld : 1;
    long long a_bs = a->batch_stride, b_bs = b->batch_stride, c_bs = c->batch_stride,
              ldc0 = c->ld;
    /* alpha and beta as the kernels take them: rounded to FP32 */
    double alpha = (float)args->scalar[TPL_GEMM_ALPHA], beta = (float)args->scalar[TPL_GEMM_BETA];
    CUdeviceptr A = a->ptr, B = b->ptr;
    int dtype = (int)p->dtype, tf32 = p->math == AT_MATH_TF32;
    int dtype_a = dtype, dtype_b = dtype;
    if (tpl_math_fp8(p->math)) {
        /* FP8: the operands' own types; D = scale_d (alpha scale_a scale_b A B + beta C), the
         * scales read from the device (0: 1.0) and applied in float64 */
        dtype_a = (int)tpl_math_fp8_a(p->math);
        dtype_b = (int)tpl_math_fp8_b(p->math);
        float sc[3] = {1.0f, 1.0f, 1.0f};
        for (int i = tpl_math_fp8_block(p->math) ? 2 : 0; i < 3; i++) {   /* block: scale_d only */
            CUdeviceptr sp = args->operand[TPL_GEMM_SCALE_A + i].ptr;
            at_status s = sp ? ex_download(ref, &sc[i], sp, sizeof sc[i]) : AT_OK;
            if (s != AT_OK)
                return s;
        }
        alpha *= (double)sc[0] * (double)sc[1] * (double)sc[2];
        beta *= (double)sc[2];
    }
    /* block scales: the arrays at SCALE_A and SCALE_B are applied per K-block in the kernel */
    CUdeviceptr scale_rows = 0, scale_blocks = 0;
    if (tpl_math_fp8_block(p->math)) {
        scale_rows = args->operand[TPL_GEMM_SCALE_A].ptr;
        scale_blocks = args->operand[TPL_GEMM_SCALE_B].ptr;
        if (k > 0 && (!scale_rows || !scale_blocks))
            return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_ref_gemm_args: block-scaled FP8 without "
                           "its scale arrays");
    }
    void *kargs[] = {&m, &n, &k, &alpha, &A, &a_rs, &a_cs, &a_bs, &B, &b_rs, &b_cs, &b_bs,
                     &beta, &C0, &ldc0, &c_bs, &R, &dtype, &tf32, &dtype_a, &dtype_b,
                     &scale_rows, &scale_blocks};
    at_status s = ex_launch(ref, "ref_gemm_strided", (unsigned)((n + 15) / 16),
                            (unsigned)((m + 15) / 16), (unsigned)batch, 16, 16, 1, 0, kargs);
    if (s != AT_OK || p->epilogue == 0)
        return s;
    /* the fused epilogue, in float64 on the unfused result */
    CUdeviceptr bias = args->operand[TPL_GEMM_BIAS].ptr;
    int epi = p->epilogue;
    long long total = batch * m * n;
    void *eargs[] = {&R, &total, &m, &n, &epi, &bias, &dtype};
    return ex_launch(ref, "ref_epilogue", grid_for(total, 256), 1, 1, 256, 1, 1, 0, eargs);
}

at_status tpl_ref_gemm_compensated(at_exec *ref, const tpl_args *args, CUdeviceptr C0,
                                   CUdeviceptr R)
{
    const tpl_problem *p = &args->problem;
    if (p->n_dims != 3 || p->dims[0] > 0x7fffffff || p->dims[1] > 0x7fffffff ||
        p->dims[2] > 0x7fffffff)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_ref_gemm_compensated: a problem it cannot "
                       "check");
    const tpl_operand *a = &args->operand[TPL_GEMM_A], *b = &args->operand[TPL_GEMM_B],
                      *c = &args->operand[TPL_GEMM_C];
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    int opa = p->op_a == AT_OP_T, opb = p->op_b == AT_OP_T, dtype = (int)p->dtype;
    double alpha = args->scalar[TPL_GEMM_ALPHA], beta = args->scalar[TPL_GEMM_BETA];
    long long batch = tpl_problem_batch(p), lda = a->ld, sa = a->batch_stride, ldb = b->ld;
    long long sb = b->batch_stride, ldc = c->ld, sc = c->batch_stride;
    CUdeviceptr A = a->ptr, B = b->ptr;
    long long blocks = (batch * m * n + 255) / 256;
    if (blocks > 65536)
        blocks = 65536;
    void *kargs[] = {&m, &n, &k, &alpha, &A, &lda, &sa, &opa, &B, &ldb, &sb, &opb, &beta, &C0,
                     &ldc, &sc, &R, &batch, &dtype};
    return ex_launch(ref, "ref_bgemm", (unsigned)blocks, 1, 1, 256, 1, 1, 0, kargs);
}

/* FP64 draws with every mantissa bit random, as dgemm and bench_bgemm draw them: float draws
 * widened make every product exact and are likely easier on the FP64 units (the FP64 rows ran
 * 7-13% slower in bench_bgemm than the tuner measured on such inputs). */
at_status tpl_fill_gemm_operand(at_exec *ref, CUdeviceptr p, long long n, at_dtype t,
                                unsigned long long seed)
{
    if (t == AT_R_64F)
        return tpl_fill_f64(ref, p, n, seed, -1.0, 1.0);
    return tpl_fill_typed(ref, p, n, t, seed, -1.0f, 1.0f);
}

at_status tpl_prepare_gemm_beta0(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                                 tpl_workset *ws)
{
    at_status s;
    long long batch = tpl_problem_batch(p);
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    at_dtype t = p->dtype;
    size_t es = tpl_dtype_size(t), a_n = (size_t)batch * m * k, b_n = (size_t)batch * k * n;
    size_t c_n = (size_t)batch * m * n, c_bytes = c_n * es, nan_bytes = (c_bytes + 3) / 4 * 4;
    CUdeviceptr A, B, C, C0, R;
    if ((s = tpl_ws_alloc(ref, ws, a_n * es, &A)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, b_n * es, &B)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, nan_bytes, &C)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, nan_bytes, &C0)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * 8, &R)) != AT_OK)
        return s;
    long long lda = p->op_a == AT_OP_T ? m : k, ldb = p->op_b == AT_OP_T ? k : n;
    long long sa = (long long)m * k, sb = (long long)k * n, sc = (long long)m * n;
    memset(&ws->args, 0, sizeof ws->args);
    ws->args.problem = *p;
    ws->args.operand[TPL_GEMM_A] = (tpl_operand){A, lda, sa};
    ws->args.operand[TPL_GEMM_B] = (tpl_operand){B, ldb, sb};
    ws->args.operand[TPL_GEMM_C] = (tpl_operand){C, n, sc};
    ws->args.scalar[TPL_GEMM_ALPHA] = 1.5;
    ws->args.scalar[TPL_GEMM_BETA] = 0.0;
    if ((s = tpl_fill_gemm_operand(ref, A, (long long)a_n, t, seed * 3 + 1)) != AT_OK ||
        (s = tpl_fill_gemm_operand(ref, B, (long long)b_n, t, seed * 3 + 2)) != AT_OK ||
        (s = ex_memset32(ref, C0, 0xFFFFFFFFu, nan_bytes / 4)) != AT_OK)
        return s;
    /* TF32 math: the reference of the TF32-rounded inputs, as the tensor-core family's */
    s = p->math == AT_MATH_TF32 ? tpl_ref_gemm_args(ref, &ws->args, C0, R)
                                : tpl_ref_gemm_compensated(ref, &ws->args, C0, R);
    if (s != AT_OK)
        return s;
    ws->out = C;
    ws->out_bytes = c_bytes;
    ws->out_initial = C0;
    ws->reference = R;
    return AT_OK;
}

void tpl_gemm_work_beta0(const tpl_problem *p, double *flops, double *bytes)
{
    double m = (double)p->dims[0], n = (double)p->dims[1], k = (double)p->dims[2];
    double b = (double)tpl_problem_batch(p), es = (double)tpl_dtype_size(p->dtype);
    *flops = 2.0 * m * n * k * b;
    *bytes = es * (m * k + k * n + m * n) * b;  /* A and B read, C written (beta 0) once */
}

at_status tpl_check_gemm(at_exec *ref, tpl_workset *ws, double *error)
{
    const tpl_problem *p = &ws->args.problem;
    return tpl_rel_error_typed(ref, p->dtype, ws->out, (int)(tpl_problem_batch(p) * p->dims[0]),
                               (int)p->dims[1], ws->args.operand[TPL_GEMM_C].ld, ws->reference,
                               error);
}

at_status tpl_rel_error_typed(at_exec *ref, at_dtype t, CUdeviceptr out, int rows, int cols,
                              long long ld, CUdeviceptr expected, double *error)
{
    if (tpl_dtype_size(t) == 0)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_rel_error_typed: unknown element type %d",
                       (int)t);
    double sums[3];
    int dtype = (int)t;
    long long ldr = cols;
    void *args[] = {&rows, &cols, &out, &ld, &dtype, &expected, &ldr, NULL};
    at_status s = reference_sums(ref, "ref_error_typed",
                                 grid_for((long long)rows * cols, 256), args, 7, sums);
    if (s == AT_OK)
        *error = error_of_sums(sums);
    return s;
}

at_status tpl_ref_reduce(at_exec *ref, long long n, CUdeviceptr x, CUdeviceptr y,
                         double *result)
{
    double sums[3];
    void *args[] = {&n, &x, &y, NULL};
    unsigned grid = grid_for(n, 256);
    if (grid > 4096)
        grid = 4096;
    at_status s = reference_sums(ref, "ref_reduce", grid, args, 3, sums);
    if (s == AT_OK)
        *result = sums[0];
    return s;
}

at_status tpl_fill_f64(at_exec *ref, CUdeviceptr p, long long n, unsigned long long seed,
                       double lo, double hi)
{
    void *args[] = {&p, &n, &seed, &lo, &hi};
    return ex_launch(ref, "ref_fill_f64", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}

/* s + e == a + b exactly (TwoSum), on the host. */
static void two_sum(double a, double b, double *s, double *e)
{
    double t = a + b;
    double bv = t - a;
    *e = (a - (t - bv)) + (b - bv);
    *s = t;
}

#define TPL_REF_F64_BLOCKS 1024     /* blocks of ref_reduce_f64: pairs added on the host */

at_status tpl_ref_reduce_f64(at_exec *ref, long long n, CUdeviceptr x, CUdeviceptr y,
                             double *result)
{
    *result = 0.0;
    if (n <= 0)
        return AT_OK;
    unsigned grid = grid_for(n, 256);
    if (grid > TPL_REF_F64_BLOCKS)
        grid = TPL_REF_F64_BLOCKS;
    CUdeviceptr out;
    at_status s = ex_scratch(ref, EX_MAX_SCRATCH - 1, 2 * sizeof(double) * TPL_REF_F64_BLOCKS,
                             &out);
    if (s != AT_OK)
        return s;
    void *args[] = {&n, &x, &y, &out};
    if ((s = ex_launch(ref, "ref_reduce_f64", grid, 1, 1, 256, 1, 1, 0, args)) != AT_OK)
        return s;
    double *buf = malloc(2 * sizeof(double) * grid);
    if (!buf)
        return ex_fail(ref, AT_ERR_NO_MEMORY, "tpl_ref_reduce_f64: out of host memory");
    s = ex_download(ref, buf, out, 2 * sizeof(double) * grid);
    double hi = 0.0, lo = 0.0;
    for (unsigned i = 0; s == AT_OK && i < grid; i++) {
        double t;
        two_sum(hi, buf[2 * i], &hi, &t);
        lo += t + buf[2 * i + 1];
    }
    free(buf);
    if (s == AT_OK)
        *result = hi + lo;
    return s;
}

/* ||A x - b|| / ||b|| by the residual kernel `kernel` (float or double). */
static at_status residual_by(at_exec *ref, const char *kernel, int n, CUdeviceptr A,
                             CUdeviceptr b, CUdeviceptr x, double *residual)
{
    double sums[3];
    void *args[] = {&n, &A, &b, &x, NULL};
    at_status s = reference_sums(ref, kernel, (unsigned)n, args, 4, sums);
    if (s != AT_OK)
        return s;
    if (sums[2] > 0 || !isfinite(sums[0]))
        *residual = INFINITY;
    else
        *residual = sums[1] > 0 ? sqrt(sums[0] / sums[1]) : sqrt(sums[0]);
    return AT_OK;
}

at_status tpl_ref_residual(at_exec *ref, int n, CUdeviceptr A, CUdeviceptr b,
                           CUdeviceptr x, double *residual)
{
    return residual_by(ref, "ref_residual", n, A, b, x, residual);
}

at_status tpl_ref_residual_f64(at_exec *ref, int n, CUdeviceptr A, CUdeviceptr b,
                               CUdeviceptr x, double *residual)
{
    return residual_by(ref, "ref_residual_f64", n, A, b, x, residual);
}

at_status tpl_set_diagonal_f64(at_exec *ref, CUdeviceptr A, int n, double v)
{
    void *args[] = {&A, &n, &v};
    return ex_launch(ref, "ref_set_diagonal_f64", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}
