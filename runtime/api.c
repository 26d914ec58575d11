/* api.c: the public runtime (autotune.h): handles, the lookup chain
 * (exact -> nearest tuned shape -> same architecture -> built-in default),
 * the in-memory plan cache and the at_s* entry points. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "exec.h"
#include "batched.h"
#include "lookup.h"
#include "tpl.h"

/* A kernel ready to launch for one (family, shape, mode). */
typedef struct at_plan {
    const tpl_family *fam;
    tpl_problem problem;
    int deterministic;
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    at_lookup_level level;
    CUmodule module;
    at_exec exec;
} at_plan;

struct at_handle {
    const cudrv *cu;
    at_device_info info;
    CUdevice device;
    CUcontext ctx;
    CUstream stream;
    int deterministic;
    at_math math;               /* at_set_math_mode: TF32 for at_gemm's FP32 */
    db *db;
    char db_path[4096];
    char errmsg[2048];
    at_stats stats;
    at_plan **plans;            /* open addressing, power-of-two capacity */
    size_t n_plans, cap_plans;
    at_plan *last_plan;         /* the previous call's plan: repeated calls skip the table */
    struct {                    /* at_gemm_strided_batched's family per problem, newest 8 */
        tpl_problem problem;
        int deterministic;
        const tpl_family *fam;
    } batched[8];
    int n_batched;
};

static at_status fail(at_handle *h, at_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static at_status fail(at_handle *h, at_status s, const char *fmt, ...)
{
    if (h) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
        va_end(ap);
    }
    return s;
}

static at_status cuda_fail(at_handle *h, CUresult rc, const char *call)
{
    if (h)
        cudrv_describe(h->cu, rc, call, h->errmsg, sizeof h->errmsg);
    return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
}

const char *at_errmsg(const at_handle *h)
{
    return h ? h->errmsg : "no handle";
}

/* ---------------- handles ---------------- */

at_status at_create(at_handle **out, int device, const char *db_path)
{
    if (!out)
        return AT_ERR_INVALID_ARG;
    *out = NULL;
    if (device < 0)
        return AT_ERR_INVALID_ARG;
    at_handle *h = calloc(1, sizeof *h);
    if (!h)
        return AT_ERR_NO_MEMORY;
    at_status s;
    char msg[512];
    h->cu = cudrv_get(&s, msg, sizeof msg);
    if (!h->cu) {
        free(h);
        return s;
    }
    if ((s = cudrv_device_info(h->cu, device, &h->info, msg, sizeof msg)) != AT_OK) {
        free(h);
        return s;
    }
    CUresult rc = h->cu->DeviceGet(&h->device, device);
    if (rc == CUDA_SUCCESS)
        rc = h->cu->DevicePrimaryCtxRetain(&h->ctx, h->device);
    if (rc != CUDA_SUCCESS) {
        free(h);
        return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
    }
    if (db_path && *db_path)
        snprintf(h->db_path, sizeof h->db_path, "%s", db_path);
    else
        db_default_path(h->db_path, sizeof h->db_path);
    /* The database is also the cubin cache, so it is created when missing;
     * one that cannot be written is read (lookups, stored cubins) and never
     * written; one that cannot be created just means no cache. */
    char err[1024] = "";
    s = lk_open_db(h->db_path, &h->db, err, sizeof err);
    if (s == AT_ERR_DB_CORRUPT) {
        h->cu->DevicePrimaryCtxRelease(h->device);
        free(h);
        return s;
    }
    if (s != AT_OK) {
        h->db = NULL;
        snprintf(h->errmsg, sizeof h->errmsg,
                 "tuning database %.1000s not usable (%.900s): built-in defaults only", h->db_path, err);
    }
    *out = h;
    return AT_OK;
}

/* Makes the handle's primary context current for one call: pushed (and
 * popped by ctx_leave) only when the calling thread has another one
 * current, so the usual case costs one query, not a push and a pop. */
static at_status ctx_enter(at_handle *h, int *pushed)
{
    CUcontext current = NULL;
    *pushed = 0;
    if (h->cu->CtxGetCurrent(&current) == CUDA_SUCCESS && current == h->ctx)
        return AT_OK;
    CUresult rc = h->cu->CtxPushCurrent(h->ctx);
    if (rc != CUDA_SUCCESS)
        return cuda_fail(h, rc, "cuCtxPushCurrent");
    *pushed = 1;
    return AT_OK;
}

static void ctx_leave(at_handle *h, int pushed)
{
    CUcontext popped;
    if (pushed)
        h->cu->CtxPopCurrent(&popped);
}

static void plan_free(at_handle *h, at_plan *p)
{
    if (!p)
        return;
    ex_release(&p->exec);
    if (p->module)
        h->cu->ModuleUnload(p->module);
    free(p);
}

at_status at_destroy(at_handle *h)
{
    if (!h)
        return AT_OK;
    int pushed;
    if (ctx_enter(h, &pushed) == AT_OK) {
        h->cu->StreamSynchronize(h->stream);
        for (size_t i = 0; i < h->cap_plans; i++)
            plan_free(h, h->plans[i]);
        ctx_leave(h, pushed);
    }
    free(h->plans);
    db_close(h->db);
    h->cu->DevicePrimaryCtxRelease(h->device);
    free(h);
    return AT_OK;
}

at_status at_set_stream(at_handle *h, CUstream stream)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    h->stream = stream;
    for (size_t i = 0; i < h->cap_plans; i++)
        if (h->plans[i])
            h->plans[i]->exec.stream = stream;
    return AT_OK;
}

at_status at_set_deterministic(at_handle *h, int deterministic)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    h->deterministic = deterministic ? 1 : 0;
    return AT_OK;
}

at_status at_set_math_mode(at_handle *h, at_math mode)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    if (mode != AT_MATH_DEFAULT && mode != AT_MATH_TF32)
        return fail(h, AT_ERR_INVALID_ARG, "at_set_math_mode: unknown math mode %d", (int)mode);
    h->math = mode;
    return AT_OK;
}

at_status at_get_stats(const at_handle *h, at_stats *stats)
{
    if (!h || !stats)
        return AT_ERR_INVALID_ARG;
    *stats = h->stats;
    return AT_OK;
}

/* ---------------- plan cache ---------------- */

static size_t plan_hash(const tpl_family *fam, const tpl_problem *p, int det)
{
    unsigned long long x = (unsigned long long)(size_t)fam * 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < p->n_dims; i++)
        x = (x ^ (unsigned long long)p->dims[i]) * 0x100000001B3ull;
    unsigned long long kind = (unsigned long long)p->dtype | (unsigned long long)p->math << 8 |
                              (unsigned long long)p->op_a << 16 |
                              (unsigned long long)p->op_b << 24 |
                              (unsigned long long)p->order << 32;
    x = (x ^ kind) * 0x100000001B3ull;
    x = (x ^ (unsigned long long)tpl_problem_batch(p)) * 0x100000001B3ull;
    x ^= (unsigned long long)det;
    return (size_t)(x ^ (x >> 29));
}

static int plan_matches(const at_plan *pl, const tpl_family *fam, const tpl_problem *p, int det)
{
    return pl->fam == fam && pl->deterministic == det && tpl_problem_equal(&pl->problem, p);
}

static at_plan *plan_lookup(at_handle *h, const tpl_family *fam, const tpl_problem *p)
{
    if (!h->cap_plans)
        return NULL;
    size_t mask = h->cap_plans - 1;
    for (size_t i = plan_hash(fam, p, h->deterministic) & mask; h->plans[i]; i = (i + 1) & mask)
        if (plan_matches(h->plans[i], fam, p, h->deterministic))
            return h->plans[i];
    return NULL;
}

static at_status plan_insert(at_handle *h, at_plan *pl)
{
    if ((h->n_plans + 1) * 10 > h->cap_plans * 7) {
        size_t cap = h->cap_plans ? h->cap_plans * 2 : 64;
        at_plan **table = calloc(cap, sizeof *table);
        if (!table)
            return AT_ERR_NO_MEMORY;
        for (size_t i = 0; i < h->cap_plans; i++) {
            at_plan *old = h->plans[i];
            if (!old)
                continue;
            size_t j = plan_hash(old->fam, &old->problem, old->deterministic) & (cap - 1);
            while (table[j])
                j = (j + 1) & (cap - 1);
            table[j] = old;
        }
        free(h->plans);
        h->plans = table;
        h->cap_plans = cap;
    }
    size_t mask = h->cap_plans - 1;
    size_t i = plan_hash(pl->fam, &pl->problem, pl->deterministic) & mask;
    while (h->plans[i])
        i = (i + 1) & mask;
    h->plans[i] = pl;
    h->n_plans++;
    return AT_OK;
}

/* Stored cubin if there is one, else NVRTC (and store it for next time). */
static at_status load_module(at_handle *h, at_plan *pl)
{
    char key[128];
    tpl_binary_key(pl->fam, pl->cfg, h->info.arch, key, sizeof key);
    void *cubin = NULL;
    size_t size = 0;
    int from_db = 0;
    if (h->db && db_get_binary(h->db, key, &cubin, &size) == AT_OK)
        from_db = 1;
    if (!from_db) {
        char *log = NULL;
        at_status s = tpl_compile(pl->fam, pl->cfg, h->info.arch, &cubin, &size, &log);
        if (s != AT_OK) {
            fail(h, s, "%s %s failed to compile for %s: %.1500s", pl->fam->name, pl->config,
                 h->info.arch, log ? log : "");
            free(log);
            return s;
        }
        free(log);
        h->stats.compiled++;
        if (h->db && !db_is_readonly(h->db)) {
            char options[4096];
            tpl_options_string(pl->fam, pl->cfg, h->info.arch, options, sizeof options);
            /* A failed cache write only costs a compile next time. */
            db_put_binary(h->db, key, pl->fam->name, tpl_source_hash(pl->fam), pl->config,
                          h->info.arch, tpl_nvrtc_version(), options, cubin, size);
        }
    }
    CUresult rc = h->cu->ModuleLoadData(&pl->module, cubin);
    free(cubin);
    if (rc != CUDA_SUCCESS) {
        pl->module = NULL;
        return cuda_fail(h, rc, "cuModuleLoadData");
    }
    if (from_db)
        h->stats.loaded++;
    return AT_OK;
}

static at_status get_plan(at_handle *h, const char *kernel, const tpl_problem *p,
                          at_plan **out)
{
    /* the previous call's plan first: a repeated call skips the table */
    at_plan *pl = h->last_plan;
    const tpl_family *fam = pl && strcmp(pl->fam->name, kernel) == 0 ? pl->fam : tpl_find(kernel);
    if (!fam)
        return fail(h, AT_ERR_INTERNAL, "kernel family %s is not built in", kernel);
    if (!pl || !plan_matches(pl, fam, p, h->deterministic))
        pl = plan_lookup(h, fam, p);
    if (pl) {
        h->stats.cache_hits++;
        *out = pl;
        return AT_OK;
    }
    pl = calloc(1, sizeof *pl);
    if (!pl)
        return fail(h, AT_ERR_NO_MEMORY, "out of host memory");
    pl->fam = fam;
    pl->problem = *p;
    pl->deterministic = h->deterministic;
    pl->level = lk_choose(h->db, &h->info, fam, p, h->deterministic, pl->cfg, pl->config);
    if (pl->level == AT_LOOKUP_NONE) {
        free(pl);
        return fail(h, AT_ERR_UNSUPPORTED, "no %sconfiguration of %s serves this problem",
                    h->deterministic ? "deterministic " : "", kernel);
    }
    at_status s = load_module(h, pl);
    if (s != AT_OK) {
        free(pl);
        return s;
    }
    ex_init(&pl->exec, h->cu, &h->info, pl->module, h->stream, h->errmsg, sizeof h->errmsg);
    if ((s = plan_insert(h, pl)) != AT_OK) {
        plan_free(h, pl);
        return fail(h, s, "out of host memory");
    }
    h->stats.lookups[pl->level]++;
    *out = pl;
    return AT_OK;
}

/* Looks up (or builds) the plan and runs it inside the primary context. */
static at_status run_plan(at_handle *h, const char *kernel, tpl_args *args)
{
    int pushed;
    at_status s = ctx_enter(h, &pushed);
    if (s != AT_OK)
        return s;
    at_plan *pl = NULL;
    h->errmsg[0] = '\0';
    s = get_plan(h, kernel, &args->problem, &pl);
    if (s == AT_OK) {
        if (pl != h->last_plan) {
            h->stats.last_level = pl->level;
            snprintf(h->stats.last_config, sizeof h->stats.last_config, "%.500s", pl->config);
            h->last_plan = pl;
        }
        pl->exec.stream = h->stream;
        s = pl->fam->run(&pl->exec, pl->cfg, args);
    }
    ctx_leave(h, pushed);
    return s;
}

/* ---------------- entry points ---------------- */

/* The checks every row-major GEMM entry point (named fn in messages) makes:
 * sizes >= 0, leading dimensions >= the row lengths, and, unless m or n is
 * 0 (*empty = 1: nothing to compute), non-NULL matrices (A and B only when
 * k > 0). AT_OK, or AT_ERR_INVALID_ARG with the message in h. */
static at_status gemm_check(at_handle *h, const char *fn, int m, int n, int k, int lda, int ldb,
                            int ldc, const void *A, const void *B, const void *C, int *empty)
{
    *empty = 0;
    if (m < 0 || n < 0 || k < 0)
        return fail(h, AT_ERR_INVALID_ARG, "%s: negative size m=%d n=%d k=%d", fn, m, n, k);
    if (lda < (k > 1 ? k : 1) || ldb < (n > 1 ? n : 1) || ldc < (n > 1 ? n : 1))
        return fail(h, AT_ERR_INVALID_ARG,
                    "%s: leading dimensions too small (row-major: lda >= k, ldb >= n, "
                    "ldc >= n): lda=%d ldb=%d ldc=%d", fn, lda, ldb, ldc);
    if (m == 0 || n == 0) {
        *empty = 1;
        return AT_OK;
    }
    if (!C || (k > 0 && (!A || !B)))
        return fail(h, AT_ERR_INVALID_ARG, "%s: NULL matrix pointer", fn);
    return AT_OK;
}

at_status at_sgemm(at_handle *h, int m, int n, int k, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    int empty = 0;
    at_status s = gemm_check(h, "at_sgemm", m, n, k, lda, ldb, ldc, A, B, C, &empty);
    if (s != AT_OK || empty)
        return s;
    tpl_args args = tpl_gemm_args(m, n, k, alpha, (CUdeviceptr)A, lda, (CUdeviceptr)B, ldb, beta,
                                  (CUdeviceptr)C, ldc);
    return run_plan(h, "matmul", &args);
}

/* The family of a typed GEMM call ("matmul" for exact FP32, "tcgemm" for
 * the tensor-core kinds) in *kernel, and the kind in p. AT_ERR_INVALID_ARG
 * for values outside the enums, AT_ERR_UNSUPPORTED for kinds this release
 * does not compute; the message in h. */
static at_status gemm_route(at_handle *h, at_order order, at_op op_a, at_op op_b,
                            at_dtype type, tpl_problem *p, const char **kernel)
{
    if ((unsigned)order > AT_COL_MAJOR || (unsigned)op_a > AT_OP_T || (unsigned)op_b > AT_OP_T ||
        (unsigned)type > AT_R_16BF)
        return fail(h, AT_ERR_INVALID_ARG, "at_gemm: unknown order %d, op %d/%d or type %d",
                    (int)order, (int)op_a, (int)op_b, (int)type);
    if (order != AT_ROW_MAJOR || op_a != AT_OP_N || op_b != AT_OP_N)
        return fail(h, AT_ERR_UNSUPPORTED,
                    "at_gemm: this release computes row-major products with op N only");
    if (type == AT_R_64F)
        return fail(h, AT_ERR_UNSUPPORTED,
                    "at_gemm: this release does not compute double precision");
    p->dtype = type;
    p->math = type == AT_R_32F ? h->math : AT_MATH_DEFAULT;
    *kernel = p->dtype == AT_R_32F && p->math == AT_MATH_DEFAULT ? "matmul" : "tcgemm";
    return AT_OK;
}

at_status at_gemm(at_handle *h, at_order order, at_op op_a, at_op op_b, int m, int n, int k,
                  at_dtype type, double alpha, const void *A, int lda, const void *B, int ldb,
                  double beta, void *C, int ldc)
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
        return fail(h, AT_ERR_INVALID_ARG, "at_gemm: alpha and beta must be finite");
    int empty = 0;
    s = gemm_check(h, "at_gemm", m, n, k, lda, ldb, ldc, A, B, C, &empty);
    if (s != AT_OK || empty)
        return s;
    args.scalar[TPL_GEMM_ALPHA] = alpha;
    args.scalar[TPL_GEMM_BETA] = beta;
    return run_plan(h, kernel, &args);
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
    int empty = 0;
    at_status s = bt_check(order, &c, type, batch_count, alpha, beta, &empty, h->errmsg,
                           sizeof h->errmsg);
    if (s != AT_OK || empty)
        return s;
    bt_row_major(order, &c);
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 3;
    args.problem.dims[0] = c.m;
    args.problem.dims[1] = c.n;
    args.problem.dims[2] = c.k;
    args.problem.dtype = type;
    args.problem.op_a = c.op_a;
    args.problem.op_b = c.op_b;
    args.problem.batch = batch_count;
    args.operand[TPL_GEMM_A] = (tpl_operand){(CUdeviceptr)c.A, c.lda, c.sa};
    args.operand[TPL_GEMM_B] = (tpl_operand){(CUdeviceptr)c.B, c.ldb, c.sb};
    args.operand[TPL_GEMM_C] = (tpl_operand){(CUdeviceptr)c.C, c.ldc, c.sc};
    args.scalar[TPL_GEMM_ALPHA] = alpha;
    args.scalar[TPL_GEMM_BETA] = beta;
    /* the choice is a database query: made once per problem and remembered */
    const tpl_family *fam = NULL;
    int slots = h->n_batched < 8 ? h->n_batched : 8;
    for (int i = 0; i < slots && !fam; i++)
        if (h->batched[i].deterministic == h->deterministic &&
            tpl_problem_equal(&h->batched[i].problem, &args.problem))
            fam = h->batched[i].fam;
    if (!fam) {
        const tpl_family *fams[32];
        int n_fams = 0, measured = 0;
        for (int i = 0; i < tpl_family_count() && n_fams < 32; i++)
            if (!tpl_family_at(i)->hidden)
                fams[n_fams++] = tpl_family_at(i);
        fam = lk_choose_family(h->db, &h->info, &args.problem, h->deterministic, fams, n_fams,
                               &measured);
        if (fam) {
            int slot = h->n_batched++ % 8;
            h->batched[slot].problem = args.problem;
            h->batched[slot].deterministic = h->deterministic;
            h->batched[slot].fam = fam;
        }
    }
    if (!fam) {
        char text[128];
        tpl_problem_format(&args.problem, text, sizeof text);
        return fail(h, AT_ERR_UNSUPPORTED, "at_gemm_strided_batched: no family computes %s",
                    text);
    }
    return run_plan(h, fam->name, &args);
}

static at_status reduce(at_handle *h, const char *kernel, long long n, const float *x,
                        const float *y, float *result)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    if (n < 0)
        return fail(h, AT_ERR_INVALID_ARG, "at_s%s: negative length %lld", kernel, n);
    if (!result || (n > 0 && (!x || (strcmp(kernel, "dot") == 0 && !y))))
        return fail(h, AT_ERR_INVALID_ARG, "at_s%s: NULL pointer", kernel);
    if (n == 0) {
        int pushed;
        at_status s = ctx_enter(h, &pushed);
        if (s != AT_OK)
            return s;
        CUresult rc = h->cu->MemsetD32Async((CUdeviceptr)result, 0, 1, h->stream);
        ctx_leave(h, pushed);
        return rc == CUDA_SUCCESS ? AT_OK : cuda_fail(h, rc, "cuMemsetD32Async");
    }
    tpl_args args = tpl_reduce_args(n, (CUdeviceptr)x, (CUdeviceptr)y, (CUdeviceptr)result);
    return run_plan(h, kernel, &args);
}

at_status at_ssum(at_handle *h, long long n, const float *x, float *result)
{
    return reduce(h, "sum", n, x, NULL, result);
}

at_status at_sdot(at_handle *h, long long n, const float *x, const float *y, float *result)
{
    return reduce(h, "dot", n, x, y, result);
}

at_status at_sjacobi(at_handle *h, int n, const float *A, const float *b, float *x, float tol,
                     int max_iter, int *iterations, float *residual)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    if (iterations)
        *iterations = 0;
    if (residual)
        *residual = 0.0f;
    if (n <= 0)
        return fail(h, AT_ERR_INVALID_ARG, "at_sjacobi: size must be positive, got %d", n);
    if (!A || !b || !x)
        return fail(h, AT_ERR_INVALID_ARG, "at_sjacobi: NULL pointer");
    if (!(tol >= 0.0f) || max_iter < 1)
        return fail(h, AT_ERR_INVALID_ARG,
                    "at_sjacobi: need tol >= 0 and max_iter >= 1 (got %g, %d)", tol, max_iter);
    tpl_args args = tpl_jacobi_args(n, (CUdeviceptr)A, (CUdeviceptr)b, (CUdeviceptr)x, tol,
                                    max_iter);
    at_status s = run_plan(h, "jacobi", &args);
    if (iterations)
        *iterations = args.out.iterations;
    if (residual)
        *residual = (float)args.out.residual;
    return s;
}
