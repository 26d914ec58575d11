/* test_bgemm.c: the strided batched GEMM: bgemm's space, rules and kinds, the API's argument
 * checks, order mapping and family choice (CPU); results against float64 (GPU). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "autotune.h"
#include "batched.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "th_family.h"
#include "th_gemm.h"
#include "tpl.h"

extern const tpl_family tpl_bgemm;

static int bt_param(const char *name)
{
    return tpl_param_index(&tpl_bgemm, name);
}

/* ---------------- CPU tier: the space ---------------- */

TEST(bgemm_every_rejection_reason_is_reached)
{
    const tpl_family *f = &tpl_bgemm;
    long long *seen = calloc((size_t)tpl_bgemm_n_reasons, sizeof *seen);
    long long valid = 0;
    CHECK(seen);
    if (!th_scan_reasons(f, NULL, tpl_bgemm_reasons, tpl_bgemm_n_reasons, seen, &valid,
                         __FILE__, __LINE__)) {
        free(seen);
        return;
    }
    /* out-of-list values reach the range and smem rules on a small device */
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(f, f->default_config, cfg, err, sizeof err));
    cfg[bt_param("STAGES")] = 9;
    CHECK(!f->valid(cfg, NULL, err, sizeof err));
    CHECK_STR(err, tpl_bgemm_reasons[0]);
    seen[0]++;
    at_device_info small;
    memset(&small, 0, sizeof small);
    small.smem_per_block_optin = 1024;
    small.max_threads_per_block = 1024;
    small.regs_per_block = 65536;
    CHECK_OK(tpl_config_parse(f, f->default_config, cfg, err, sizeof err));
    CHECK(!f->valid(cfg, &small, err, sizeof err));
    for (int r = 0; r < tpl_bgemm_n_reasons; r++)
        if (strcmp(err, tpl_bgemm_reasons[r]) == 0)
            seen[r]++;
    /* MINB (out of the tuning list): 4 blocks of 256 threads need more registers than an SM
     * has */
    CHECK_OK(tpl_config_parse(f, "TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=4,TN=4,"
                              "STAGES=2,VEC=4,MINB=4", cfg, err, sizeof err));
    CHECK(!f->valid(cfg, NULL, err, sizeof err));
    cfg[bt_param("MINB")] = 2;
    CHECK(f->valid(cfg, NULL, err, sizeof err));
    cfg[bt_param("MINB")] = 4;
    f->valid(cfg, NULL, err, sizeof err);
    for (int r = 0; r < tpl_bgemm_n_reasons; r++)
        if (strcmp(err, tpl_bgemm_reasons[r]) == 0)
            seen[r]++;
    for (int r = 0; r < tpl_bgemm_n_reasons; r++)
        CHECK_MSG(seen[r] > 0, "reason %d never reached: %s", r, tpl_bgemm_reasons[r]);
    free(seen);
    CHECK(valid > 1000);
}

/* An independent statement of the space's hard limits, checked on every valid configuration:
 * threads, registers, shared memory as bgemm.cu lays it out. */
TEST(bgemm_valid_configurations_meet_the_written_limits)
{
    const tpl_family *f = &tpl_bgemm;
    long long *idx = NULL, n = tpl_valid_configs_cached(f, NULL, &idx);
    CHECK(n > 0);
    for (long long i = 0; i < n; i++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[i], c);
        int type = c[bt_param("TYPE")], mma = c[bt_param("MMA")], bm = c[bt_param("BM")],
            bn = c[bt_param("BN")], bk = c[bt_param("BK")], g = c[bt_param("G")],
            tm = c[bt_param("TM")], tn = c[bt_param("TN")], st = c[bt_param("STAGES")],
            vec = c[bt_param("VEC")], opa = c[bt_param("OPA")], opb = c[bt_param("OPB")],
            minb = c[bt_param("MINB")];
        int esz = type ? 8 : 4;
        int mr = mma >= 2 ? 16 : 8;
        int tpp = mma ? 32 * (bm / (mr * tm)) * (bn / (8 * tn)) : (bm / tm) * (bn / tn);
        int threads = g * tpp;
        CHECK(!mma || type == 1);
        CHECK(threads >= 32 && threads <= 512 && threads % 32 == 0);
        CHECK(vec * esz == 16 || vec == 1);
        CHECK(bm % (mma ? mr * tm : tm) == 0 && bn % (mma ? 8 * tn : tn) == 0);
        CHECK(mma != 3 || bk % 8 == 0);
        int pad = (mma ? 32 : 16) / esz;
        long long a = opa ? (long long)bk * (bm + pad) : (long long)bm * (bk + pad);
        long long b = opb ? (long long)bn * (bk + pad) : (long long)bk * (bn + pad);
        long long smem = (long long)st * g * (a + b) * esz;
        CHECK(smem <= 227 * 1024);
        /* MINB blocks of the block's threads and shared memory (1 KB reserved each) per SM */
        CHECK(minb == 1 || (threads * minb <= 2048 && minb * (smem + 1024) <= 228 * 1024));
        CHECK(mma ? tm * tn * mr / 4 <= 64 : tm * tn * esz / 4 <= 64);
    }
    free(idx);
}

/* The default run's share: the bgemm problems it tunes are searched exhaustively and small. */
TEST(bgemm_default_problems_are_small_exhaustive_spaces)
{
    const tpl_family *f = &tpl_bgemm;
    long long *idx = NULL, n = tpl_valid_configs_cached(f, NULL, &idx);
    CHECK(n > 0 && f->n_tuning_problems >= 1);
    long long total = 0;
    for (int q = 0; q < f->n_tuning_problems; q++) {
        long long count = 0;
        for (long long i = 0; i < n; i++) {
            int c[TPL_MAX_PARAMS];
            tpl_config_from_index(f, idx[i], c);
            count += f->applicable(c, &f->tuning_problems[q]);
        }
        CHECK(count >= 10 && count <= 300);
        total += count;
    }
    free(idx);
    CHECK_MSG(total <= 160, "%lld configurations in the default run", total);
}

TEST(bgemm_accepts_its_kinds_and_matches_type_and_ops)
{
    const tpl_family *f = &tpl_bgemm;
    char err[256];
    static const char *const yes[] = {"32x32x32:b64", "7x9x3:f64:TN:b5", "5x5x5:NT", "1x1x1:TT:b2"};
    static const char *const no[] = {"32x32x32:f16:b4", "32x32x32:bf16", "32x32x32:tf32:b8",
                                     "32x32x32:col:b4", "32x32"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        tpl_problem p;
        CHECK_OK(tpl_problem_parse(yes[i], &p, err, sizeof err));
        CHECK_MSG(tpl_family_accepts(f, &p), "refuses %s", yes[i]);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        tpl_problem p;
        CHECK_OK(tpl_problem_parse(no[i], &p, err, sizeof err));
        CHECK_MSG(!tpl_family_accepts(f, &p), "accepts %s", no[i]);
    }
    /* every kind and size is served by one of the fallbacks, and only by those of its kind */
    static const char *const sizes[] = {"1x1x1", "7x9x3", "16x16x16", "33x17x129", "300x5x700"};
    for (int type = 0; type < 2; type++)
        for (int ops = 0; ops < 4; ops++)
            for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                char text[64];
                snprintf(text, sizeof text, "%s:%s:%c%c:b3", sizes[s], type ? "f64" : "f32",
                         ops & 2 ? 'T' : 'N', ops & 1 ? 'T' : 'N');
                tpl_problem p;
                CHECK_OK(tpl_problem_parse(text, &p, err, sizeof err));
                int served = 0;
                for (int b = -1; b < f->n_baselines; b++) {
                    int c[TPL_MAX_PARAMS];
                    CHECK_OK(tpl_config_parse(f, b < 0 ? f->default_config
                                                       : f->baselines[b].config,
                                              c, err, sizeof err));
                    int fits = c[bt_param("TYPE")] == type &&
                               c[bt_param("OPA")] == (ops >> 1) && c[bt_param("OPB")] == (ops & 1);
                    int app = f->applicable(c, &p);
                    CHECK_MSG(!app || fits, "%s takes a configuration of another kind", text);
                    served += app;
                }
                CHECK_MSG(served > 0, "no fallback serves %s", text);
            }
    /* k = 0 (C = beta C) is served too */
    tpl_problem p = {.n_dims = 3, .dims = {5, 5, 0}, .batch = 2};
    int c[TPL_MAX_PARAMS];
    CHECK_OK(tpl_config_parse(f, f->default_config, c, err, sizeof err));
    CHECK(f->applicable(c, &p));
}

/* The kernel's logic without a GPU: tests/bgemm_host.cpp runs templates/bgemm.cu with one
 * POSIX thread per CUDA thread (cp.async a plain copy, the FP64 mma tiles emulated by their
 * PTX fragment layouts) on odd sizes, gaps, offsets, beta 0 over NaN, k 0 and grids smaller
 * than the work, against a float64 product; configurations cover every op pair, both types,
 * MMA 0..2, G 1..8, STAGES 1..4, element and 16-byte copies, SYNC 1 (named barriers and
 * __syncwarp: one pthread barrier per product) and the copy fast path LDF 1 (with whole-tile
 * cases). Skipped without a C++ compiler. */
TEST(bgemm_kernel_schedule_and_loaders_on_the_cpu)
{
    static const char *const cfgs[] = {
        "TYPE=0 MMA=0 OPA=0 OPB=1 BM=32 BN=32 BK=16 G=2 TM=4 TN=4 STAGES=3 VEC=4",
        "TYPE=1 MMA=0 OPA=1 OPB=0 BM=16 BN=16 BK=8 G=1 TM=2 TN=4 STAGES=1 VEC=1",
        "TYPE=0 MMA=0 OPA=1 OPB=1 BM=64 BN=64 BK=32 G=1 TM=8 TN=4 STAGES=4 VEC=4",
        "TYPE=0 MMA=0 OPA=0 OPB=0 BM=16 BN=16 BK=16 G=8 TM=2 TN=4 STAGES=3 VEC=4",
        "TYPE=1 MMA=1 OPA=1 OPB=0 BM=64 BN=32 BK=8 G=1 TM=4 TN=2 STAGES=4 VEC=1",
        "TYPE=1 MMA=2 OPA=0 OPB=1 BM=64 BN=64 BK=32 G=1 TM=2 TN=4 STAGES=2 VEC=2",
        "TYPE=1 MMA=2 OPA=1 OPB=1 BM=32 BN=16 BK=16 G=2 TM=1 TN=2 STAGES=3 VEC=2",
        "TYPE=0 MMA=0 OPA=1 OPB=0 BM=32 BN=32 BK=16 G=4 TM=4 TN=4 STAGES=2 VEC=4 SYNC=1 HINT=1",
        "TYPE=1 MMA=2 OPA=0 OPB=1 BM=32 BN=32 BK=16 G=2 TM=2 TN=4 STAGES=4 VEC=1 SYNC=1",
        "TYPE=0 MMA=0 OPA=0 OPB=1 BM=64 BN=64 BK=32 G=2 TM=8 TN=4 STAGES=3 VEC=4 SYNC=1 LDF=1",
        "TYPE=1 MMA=1 OPA=1 OPB=0 BM=32 BN=32 BK=32 G=2 TM=2 TN=4 STAGES=2 VEC=2 LDF=1",
        "TYPE=1 MMA=3 OPA=0 OPB=1 BM=32 BN=32 BK=16 G=2 TM=1 TN=2 STAGES=3 VEC=2 LDF=1 MINB=2",
    };
    th_run_host_emulator("bgemm_host.cpp", cfgs, sizeof cfgs / sizeof cfgs[0], ' ');
}

/* ---------------- CPU tier: the API's checks and mapping ---------------- */

static bt_call bt_good(void)
{
    static float dummy[4];
    bt_call c = {8, 6, 5, AT_OP_N, AT_OP_N, dummy, dummy, dummy, 5, 6, 6, 40, 30, 48};
    return c;
}

static at_status bt_try(at_order order, bt_call c, at_dtype type, int batch, double alpha,
                        char *msg, size_t len, int *empty)
{
    return bt_check(order, &c, type, batch, alpha, 0.0, empty, msg, len);
}

TEST(batched_argument_checks)
{
    char msg[512];
    int empty;
    bt_call c = bt_good();
    CHECK_OK(bt_try(AT_ROW_MAJOR, c, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty));
    CHECK(!empty);
    CHECK_OK(bt_try(AT_ROW_MAJOR, c, AT_R_64F, 4, 1.0, msg, sizeof msg, &empty));
    /* unknown values and types */
    CHECK_EQ(bt_try((at_order)7, c, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(bt_try(AT_ROW_MAJOR, c, (at_dtype)9, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    /* every type at_gemm takes (the tensor-core ones run on tcgemm) */
    CHECK_OK(bt_try(AT_ROW_MAJOR, c, AT_R_16F, 4, 1.0, msg, sizeof msg, &empty));
    CHECK_OK(bt_try(AT_ROW_MAJOR, c, AT_R_16BF, 4, 1.0, msg, sizeof msg, &empty));
    bt_call x = c;
    x.op_b = (at_op)3;
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    /* negative sizes and counts */
    x = c;
    x.k = -1;
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "negative"));
    CHECK_EQ(bt_try(AT_ROW_MAJOR, c, AT_R_32F, -2, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    /* leading dimensions, by order and op */
    x = c;
    x.lda = 4;              /* row-major A 8 x 5 needs lda >= 5 */
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "lda=4"));
    x.op_a = AT_OP_T;       /* stored 5 x 8: lda >= 8 */
    x.lda = 7;
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    x.lda = 8;
    CHECK_OK(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty));
    x = c;                  /* column-major: A 8 x 5 needs lda >= 8, B 5 x 6 ldb >= 5, C ldc >= 8 */
    x.lda = 8;
    x.ldb = 5;
    x.ldc = 8;
    x.sc = 48;
    CHECK_OK(bt_try(AT_COL_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty));
    x.ldc = 7;
    CHECK_EQ(bt_try(AT_COL_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "column-major"));
    /* strides: negative, overlapping C (row-major span (m-1) ldc + n = 48), broadcast A */
    x = c;
    x.sb = -1;
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    x = c;
    x.sc = 47;
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "overlap"));
    CHECK_OK(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 1, 1.0, msg, sizeof msg, &empty));
    x = c;
    x.sa = 0;
    CHECK_OK(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty));
    /* NULL pointers (A and B only matter when k > 0), non-finite scalars */
    x = c;
    x.B = NULL;
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    x.k = 0;
    x.lda = 1;
    CHECK_OK(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty));
    x = c;
    x.C = NULL;
    CHECK_EQ(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(bt_try(AT_ROW_MAJOR, c, AT_R_32F, 4, NAN, msg, sizeof msg, &empty),
             AT_ERR_INVALID_ARG);
    /* nothing to compute: counts or sizes zero, no pointer needed */
    x.m = 0;
    CHECK_OK(bt_try(AT_ROW_MAJOR, x, AT_R_32F, 4, 1.0, msg, sizeof msg, &empty));
    CHECK(empty);
    CHECK_OK(bt_try(AT_ROW_MAJOR, c, AT_R_32F, 0, 1.0, msg, sizeof msg, &empty));
    CHECK(empty);
    CHECK_EQ(at_gemm_strided_batched(NULL, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 1, 1, 1, AT_R_32F, 1.0,
                                     c.A, 1, 1, c.B, 1, 1, 0.0, c.C, 1, 1, 1),
             AT_ERR_INVALID_ARG);
}

/* Host GEMM of one product in the row-major canonical form the families compute. */
static void bt_host_row_major(const bt_call *c, const double *A, const double *B, double *C)
{
    for (int i = 0; i < c->m; i++)
        for (int j = 0; j < c->n; j++) {
            double s = 0;
            for (int p = 0; p < c->k; p++)
                s += (c->op_a ? A[(size_t)p * c->lda + i] : A[(size_t)i * c->lda + p]) *
                     (c->op_b ? B[(size_t)j * c->ldb + p] : B[(size_t)p * c->ldb + j]);
            C[(size_t)i * c->ldc + j] = s;
        }
}

/* A strided batched call as at_gemm_strided_batched hands it to ag_gemm_canonical. */
static tpl_args bt_args_of(at_order order, const bt_call *c)
{
    tpl_args a;
    memset(&a, 0, sizeof a);
    a.problem = (tpl_problem)TPL_PROBLEM(3, {c->m, c->n, c->k});
    a.problem.order = order;
    a.problem.op_a = c->op_a;
    a.problem.op_b = c->op_b;
    a.operand[TPL_GEMM_A] = (tpl_operand){(CUdeviceptr)(uintptr_t)c->A, c->lda, c->sa};
    a.operand[TPL_GEMM_B] = (tpl_operand){(CUdeviceptr)(uintptr_t)c->B, c->ldb, c->sb};
    a.operand[TPL_GEMM_C] = (tpl_operand){(CUdeviceptr)(uintptr_t)c->C, c->ldc, c->sc};
    return a;
}

/* The call a family receives, read back from its arguments. */
static bt_call bt_call_of(const tpl_args *a)
{
    const tpl_operand *o = a->operand;
    bt_call c = {(int)a->problem.dims[0], (int)a->problem.dims[1], (int)a->problem.dims[2],
                 a->problem.op_a, a->problem.op_b, (const void *)(uintptr_t)o[TPL_GEMM_A].ptr,
                 (const void *)(uintptr_t)o[TPL_GEMM_B].ptr, (void *)(uintptr_t)o[TPL_GEMM_C].ptr,
                 (int)o[TPL_GEMM_A].ld, (int)o[TPL_GEMM_B].ld, (int)o[TPL_GEMM_C].ld,
                 o[TPL_GEMM_A].batch_stride, o[TPL_GEMM_B].batch_stride,
                 o[TPL_GEMM_C].batch_stride};
    return c;
}

/* The mapping, against the column-major definition: for every op pair, a column-major
 * strided batched product computed by definition equals the row-major canonical call
 * ag_gemm_canonical makes of it (strides travel with their operands). */
TEST(batched_column_major_maps_to_row_major)
{
    int m = 5, n = 3, k = 4;
    double A[64], B[64], want[64], got[64];
    for (int i = 0; i < 64; i++) {
        A[i] = (i * 7 % 11) - 5;
        B[i] = (i * 5 % 13) - 6;
    }
    for (int ops = 0; ops < 4; ops++) {
        at_op oa = ops & 2 ? AT_OP_T : AT_OP_N, ob = ops & 1 ? AT_OP_T : AT_OP_N;
        int lda = (oa ? k : m) + 1, ldb = (ob ? n : k) + 2, ldc = m + 1;   /* column-major lds */
        bt_call c = {m, n, k, oa, ob, A, B, got, lda, ldb, ldc, 9, 7, 99};
        memset(want, 0, sizeof want);
        memset(got, 0, sizeof got);
        /* column-major definition: X(i, j) at X[i + j * ld] */
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double s = 0;
                for (int p = 0; p < k; p++)
                    s += (oa ? A[p + (size_t)i * lda] : A[i + (size_t)p * lda]) *
                         (ob ? B[j + (size_t)p * ldb] : B[p + (size_t)j * ldb]);
                want[i + (size_t)j * ldc] = s;
            }
        tpl_args col = bt_args_of(AT_COL_MAJOR, &c);
        ag_gemm_canonical(&col);
        CHECK(col.problem.order == AT_ROW_MAJOR);
        bt_call r = bt_call_of(&col);
        CHECK(r.m == n && r.n == m && r.k == k && r.A == (const void *)B && r.B == (const void *)A);
        CHECK(r.op_a == ob && r.op_b == oa && r.lda == ldb && r.ldb == lda && r.sa == 7 &&
              r.sb == 9 && r.sc == 99 && r.ldc == ldc);
        bt_host_row_major(&r, (const double *)r.A, (const double *)r.B, got);
        for (int i = 0; i < 64; i++)
            CHECK_MSG(got[i] == want[i], "ops %d element %d: %g != %g", ops, i, got[i], want[i]);
        tpl_args row = bt_args_of(AT_ROW_MAJOR, &c), same = row;
        ag_gemm_canonical(&same);
        CHECK(memcmp(&same, &row, sizeof row) == 0);
    }
}

/* ---------------- CPU tier: the choice among families ---------------- */

static int bt_fake_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    (void)dev;
    if (cfg[0] == 3) {
        tpl_reason(why, len, "A=3 needs more than the device has");
        return 0;
    }
    return 1;
}

static int bt_fake_accepts(const tpl_problem *p)
{
    return p->n_dims == 3 && p->dtype == AT_R_32F && p->math == AT_MATH_DEFAULT;
}

static const tpl_family bt_fake = {
    .name = "fakebatch", .source = "reference.cu", .fixed_options = "",
    .n_dims = 3, .dim_names = {"m", "n", "k"},
    .n_params = 1, .params = {{"A", 3, {1, 2, 3}, "fake"}},
    .valid = bt_fake_valid, .accepts = bt_fake_accepts, .default_config = "A=1",
};

static at_status bt_put(db *d, const char *kernel, const char *hash, const tpl_problem *p,
                        const char *config, double ms)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "GPU-bt");
    snprintf(r.kernel, sizeof r.kernel, "%s", kernel);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", hash);
    r.problem = *p;
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, DB_OK);
    r.time_ms = r.time_min_ms = r.time_max_ms = ms;
    r.runs = 5;
    r.deterministic = 1;
    return db_store_result(d, &r);
}

TEST(batched_family_choice_by_measurement_then_rule)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/batched_choice.db", th_tmpdir());
    remove(path);
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
    at_device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.uuid, sizeof dev.uuid, "GPU-bt");
    dev.cc_major = 9;
    dev.smem_per_block_optin = 232448;
    dev.max_threads_per_block = 1024;
    dev.regs_per_block = 65536;
    tpl_arch_name(9, 0, dev.arch, sizeof dev.arch);
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    const tpl_family *fams[] = {&tpl_bgemm, &bt_fake};
    tpl_problem small = {.n_dims = 3, .dims = {64, 64, 64}, .batch = 8192};
    tpl_problem large = {.n_dims = 3, .dims = {512, 512, 512}, .batch = 128};
    tpl_problem dbl = {.n_dims = 3, .dims = {512, 512, 512}, .dtype = AT_R_64F, .batch = 128};
    int measured = -1;
    /* nothing stored: the rule (small -> bgemm, large -> the other family, FP64 -> bgemm,
     * the only one of the two that takes it) */
    CHECK(lk_choose_family(d, &dev, &small, 0, fams, 2, &measured) == &tpl_bgemm);
    CHECK_EQ(measured, 0);
    CHECK(lk_choose_family(d, &dev, &large, 0, fams, 2, &measured) == &bt_fake);
    CHECK(lk_choose_family(d, &dev, &dbl, 0, fams, 2, &measured) == &tpl_bgemm);
    CHECK(lk_choose_family(NULL, &dev, &large, 0, fams, 1, &measured) == &tpl_bgemm);
    CHECK(lk_choose_family(d, &dev, &dbl, 0, fams + 1, 1, &measured) == NULL);
    /* measurements of exactly this problem decide, fastest first */
    const char *bg_cfg = "TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=16,G=1,TM=8,TN=8,STAGES=3,VEC=4";
    CHECK_OK(bt_put(d, "bgemm", tpl_source_hash(&tpl_bgemm), &small, bg_cfg, 2.0));
    CHECK_OK(bt_put(d, "fakebatch", tpl_source_hash(&bt_fake), &small, "A=2", 1.0));
    CHECK(lk_choose_family(d, &dev, &small, 0, fams, 2, &measured) == &bt_fake);
    CHECK_EQ(measured, 1);
    CHECK_OK(bt_put(d, "bgemm", tpl_source_hash(&tpl_bgemm), &large, bg_cfg, 0.5));
    CHECK_OK(bt_put(d, "fakebatch", tpl_source_hash(&bt_fake), &large, "A=1", 0.9));
    CHECK(lk_choose_family(d, &dev, &large, 0, fams, 2, &measured) == &tpl_bgemm);
    /* a faster result whose configuration this device cannot run is passed over */
    CHECK_OK(bt_put(d, "fakebatch", tpl_source_hash(&bt_fake), &large, "A=3", 0.1));
    CHECK(lk_choose_family(d, &dev, &large, 0, fams, 2, &measured) == &tpl_bgemm);
    /* another batch count is another problem: the rule again */
    tpl_problem other = small;
    other.batch = 100;
    CHECK(lk_choose_family(d, &dev, &other, 0, fams, 2, &measured) == &tpl_bgemm);
    CHECK_EQ(measured, 0);
    db_close(d);
}

/* ---------------- GPU tier ---------------- */

/* The GPU test's cases (odd sizes, every type and op pair, both compute paths): each
 * configuration is legal on an H100-class device and serves its problem, so the GPU test
 * verifies all of them instead of stopping at a mislabelled one. */
static const th_case bg_odd_cases[] = {
    {"33x17x29:b7", "TYPE=0,MMA=0,OPA=0,OPB=0,BM=32,BN=16,BK=16,G=1,TM=4,TN=2,STAGES=3,VEC=4"},
    {"33x17x29:NT:b7", "TYPE=0,MMA=0,OPA=0,OPB=1,BM=32,BN=32,BK=16,G=1,TM=4,TN=4,STAGES=2,VEC=4"},
    {"31x40x9:TN:b9", "TYPE=0,MMA=0,OPA=1,OPB=0,BM=32,BN=64,BK=16,G=1,TM=4,TN=8,STAGES=4,VEC=4"},
    {"16x16x16:TT:b13", "TYPE=0,MMA=0,OPA=1,OPB=1,BM=16,BN=16,BK=16,G=4,TM=2,TN=4,STAGES=3,VEC=4"},
    {"70x66x100:b3", "TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=8,TN=8,STAGES=2,VEC=4"},
    {"31x17x29:f64:b7", "TYPE=1,MMA=0,OPA=0,OPB=0,BM=32,BN=32,BK=16,G=2,TM=4,TN=4,STAGES=3,VEC=2"},
    {"70x33x45:f64:b3", "TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=2,TN=4,STAGES=2,VEC=2"},
    {"31x9x20:f64:TT:b4", "TYPE=1,MMA=2,OPA=1,OPB=1,BM=32,BN=16,BK=16,G=1,TM=1,TN=2,STAGES=3,VEC=2"},
    {"31x17x29:f64:b7", "TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=16,G=2,TM=2,TN=4,STAGES=2,VEC=2"},
    {"31x40x9:f64:TN:b9", "TYPE=1,MMA=1,OPA=1,OPB=0,BM=32,BN=64,BK=16,G=1,TM=4,TN=4,STAGES=3,VEC=2"},
    {"31x40x9:f64:NT:b9", "TYPE=1,MMA=1,OPA=0,OPB=1,BM=32,BN=32,BK=16,G=1,TM=2,TN=2,STAGES=4,VEC=2"},
    {"20x20x50:f64:TT:b5", "TYPE=1,MMA=0,OPA=1,OPB=1,BM=16,BN=16,BK=8,G=1,TM=2,TN=4,STAGES=1,VEC=1"},
    {"7x9x3:f64:b9", "TYPE=1,MMA=1,OPA=0,OPB=0,BM=16,BN=16,BK=8,G=8,TM=2,TN=2,STAGES=3,VEC=2"},
    /* per-product barriers (__syncwarp, named barriers) and the streaming hints */
    {"32x32x37:b9", "TYPE=0,MMA=0,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=4,TM=4,TN=4,STAGES=2,VEC=4,"
                    "SYNC=1,HINT=1"},
    {"45x64x33:NT:b6", "TYPE=0,MMA=0,OPA=0,OPB=1,BM=64,BN=64,BK=16,G=2,TM=8,TN=4,STAGES=3,"
                       "VEC=4,SYNC=1,HINT=2"},
    {"32x32x45:f64:TN:b7", "TYPE=1,MMA=2,OPA=1,OPB=0,BM=32,BN=32,BK=16,G=2,TM=2,TN=4,STAGES=3,"
                           "VEC=2,SYNC=1,HINT=1"},
    {"64x50x70:f64:b5", "TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=2,TM=2,TN=4,STAGES=2,"
                        "VEC=2,SYNC=1"},
    {"40x33x20:f64:NT:b5", "TYPE=1,MMA=1,OPA=0,OPB=1,BM=64,BN=64,BK=16,G=1,TM=2,TN=4,STAGES=2,"
                           "VEC=2,HINT=1"},
    /* the copy fast path (LDF 1): whole tiles, a last K step and a last group that are not */
    {"64x64x72:b5", "TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=2,TM=8,TN=4,STAGES=3,VEC=4,"
                    "SYNC=1,LDF=1"},
    {"32x32x45:f64:TN:b7", "TYPE=1,MMA=1,OPA=1,OPB=0,BM=32,BN=32,BK=16,G=2,TM=4,TN=2,STAGES=2,"
                           "VEC=2,SYNC=1,LDF=1"},
    {"96x64x64:f64:NT:b3", "TYPE=1,MMA=2,OPA=0,OPB=1,BM=64,BN=64,BK=32,G=1,TM=2,TN=4,STAGES=2,"
                           "VEC=2,LDF=1"},
    /* m16n8k8 (MMA 3), the launch grids (GRID 1: one block per unit, unused stage slots not
     * allocated; GRID 2: persistent, even turns) and the register bound (MINB) */
    {"33x32x29:f64:b7", "TYPE=1,MMA=3,OPA=0,OPB=0,BM=64,BN=32,BK=16,G=2,TM=2,TN=2,STAGES=3,VEC=2"},
    {"33x40x27:f64:TT:b5", "TYPE=1,MMA=3,OPA=1,OPB=1,BM=64,BN=64,BK=16,G=1,TM=2,TN=2,STAGES=4,"
                           "VEC=2,GRID=1"},
    {"40x70x45:f64:NT:b6", "TYPE=1,MMA=3,OPA=0,OPB=1,BM=32,BN=64,BK=16,G=1,TM=1,TN=2,STAGES=2,"
                           "VEC=2,GRID=2,MINB=2"},
    {"64x64x64:f64:TN:b9", "TYPE=1,MMA=3,OPA=1,OPB=0,BM=64,BN=64,BK=16,G=1,TM=2,TN=2,STAGES=4,"
                           "VEC=2,LDF=1,GRID=1,MINB=2"},
    {"32x32x45:b9", "TYPE=0,MMA=0,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=4,TN=4,STAGES=3,VEC=4,"
                    "LDF=1,GRID=1"},
    {"32x32x32:f64:b2001", "TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=4,"
                           "VEC=2,LDF=1,GRID=2"},
};

TEST(bgemm_gpu_cases_are_legal_and_serve_their_problems)
{
    at_device_info dev = th_h100(NULL);
    th_check_cases_legal(&tpl_bgemm, &dev, bg_odd_cases,
                         sizeof bg_odd_cases / sizeof bg_odd_cases[0], __FILE__, __LINE__);
}

/* Configurations of the family verified through the tuner's own path (ms_verify against
 * the float64 reference) on odd sizes, every type and op pair, both compute paths: each legal
 * on the device at hand, verified once. */
GPU_TEST(bgemm_configurations_verify_on_odd_problems)
{
    th_verify_cases_on_gpu(&tpl_bgemm, bg_odd_cases, sizeof bg_odd_cases / sizeof bg_odd_cases[0],
                           11, 1, 1);
}

typedef struct bt_case {
    at_dtype type;
    at_order order;
    at_op op_a, op_b;
    int m, n, k, batch;
    int pad;                        /* added to every leading dimension */
    long long gap;                  /* added to every batch stride (A: 0 = broadcast if < 0) */
    int offset;                     /* elements the operands start after an aligned base */
    double alpha, beta;
} bt_case;

static double bt_rand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return -1.0 + 2.0 * (double)(*s >> 8) / 16777216.0;
}

/* Runs one case through at_gemm_strided_batched against a host float64 product by the
 * definition of the order; C outside the products' matrices must come back untouched.
 * *error is the relative Frobenius error over the batch. */
static at_status bt_run(at_handle *h, const cudrv *cu, const bt_case *c, double *error,
                        int *untouched)
{
    int col = c->order == AT_COL_MAJOR, f64 = c->type == AT_R_64F;
    size_t es = f64 ? 8 : 4;
    int ar = c->op_a ? c->k : c->m, ac = c->op_a ? c->m : c->k;     /* stored A: ar x ac */
    int br = c->op_b ? c->n : c->k, bc = c->op_b ? c->k : c->n;
    /* BLAS: every leading dimension >= 1, even of an empty (k = 0) operand */
    int lda = (col ? ar : ac) + c->pad, ldb = (col ? br : bc) + c->pad;
    int ldc = (col ? c->m : c->n) + c->pad;
    lda = lda > 0 ? lda : 1;
    ldb = ldb > 0 ? ldb : 1;
    ldc = ldc > 0 ? ldc : 1;
    long long span_a = (long long)(col ? ac : ar) * lda, span_b = (long long)(col ? bc : br) * ldb;
    long long span_c = (long long)(col ? c->n : c->m) * ldc;
    long long sa = c->gap < 0 ? 0 : span_a + c->gap, sb = span_b + (c->gap < 0 ? 0 : c->gap);
    long long sc = span_c + (c->gap < 0 ? 1 : c->gap);
    /* one element more than the products reach: an empty operand still gets a buffer
     * (cuMemAlloc refuses 0 bytes) */
    size_t na = (size_t)(sa * (c->batch - 1) + span_a + c->offset) + 1;
    size_t nb = (size_t)(sb * (c->batch - 1) + span_b + c->offset) + 1;
    size_t nc = (size_t)(sc * (c->batch - 1) + span_c + c->offset);
    double *A = malloc(na * 8), *B = malloc(nb * 8), *C0 = malloc(nc * 8), *C = malloc(nc * 8);
    void *hA = malloc(na * es), *hB = malloc(nb * es), *hC = malloc(nc * es);
    unsigned seed = 12345u + (unsigned)c->m;
    for (size_t i = 0; i < na; i++)
        A[i] = f64 ? bt_rand(&seed) : (double)(float)bt_rand(&seed);
    for (size_t i = 0; i < nb; i++)
        B[i] = f64 ? bt_rand(&seed) : (double)(float)bt_rand(&seed);
    for (size_t i = 0; i < nc; i++)
        C0[i] = c->beta == 0 ? NAN : (f64 ? bt_rand(&seed) : (double)(float)bt_rand(&seed));
    for (size_t i = 0; i < na; i++)
        f64 ? (void)(((double *)hA)[i] = A[i]) : (void)(((float *)hA)[i] = (float)A[i]);
    for (size_t i = 0; i < nb; i++)
        f64 ? (void)(((double *)hB)[i] = B[i]) : (void)(((float *)hB)[i] = (float)B[i]);
    for (size_t i = 0; i < nc; i++)
        f64 ? (void)(((double *)hC)[i] = C0[i]) : (void)(((float *)hC)[i] = (float)C0[i]);
    CUdeviceptr dA = 0, dB = 0, dC = 0;
    at_status s = AT_ERR_CUDA;
    if (cu->MemAlloc(&dA, na * es) || cu->MemAlloc(&dB, nb * es) || cu->MemAlloc(&dC, nc * es) ||
        cu->MemcpyHtoD(dA, hA, na * es) || cu->MemcpyHtoD(dB, hB, nb * es) ||
        cu->MemcpyHtoD(dC, hC, nc * es))
        goto done;
    size_t off = (size_t)c->offset * es;
    s = at_gemm_strided_batched(h, c->order, c->op_a, c->op_b, c->m, c->n, c->k, c->type,
                                c->alpha, (const void *)(uintptr_t)(dA + off), lda, sa,
                                (const void *)(uintptr_t)(dB + off), ldb, sb, c->beta,
                                (void *)(uintptr_t)(dC + off), ldc, sc, c->batch);
    if (s != AT_OK)
        goto done;
    if (cu->CtxSynchronize() || cu->MemcpyDtoH(hC, dC, nc * es)) {
        s = AT_ERR_CUDA;
        goto done;
    }
    for (size_t i = 0; i < nc; i++)
        C[i] = f64 ? ((double *)hC)[i] : (double)((float *)hC)[i];
    double num = 0, den = 0;
    char *inside = calloc(nc, 1);
    for (int b = 0; b < c->batch; b++) {
        const double *Ab = A + c->offset + b * sa, *Bb = B + c->offset + b * sb;
        size_t cb = (size_t)c->offset + (size_t)b * sc;
        for (int i = 0; i < c->m; i++)
            for (int j = 0; j < c->n; j++) {
                double ref = 0;
                for (int p = 0; p < c->k; p++) {
                    /* element (r, q) of a stored matrix: row-major r * ld + q, col-major r + q * ld */
                    double a = c->op_a ? (col ? Ab[p + (size_t)i * lda] : Ab[(size_t)p * lda + i])
                                       : (col ? Ab[i + (size_t)p * lda] : Ab[(size_t)i * lda + p]);
                    double bb = c->op_b ? (col ? Bb[j + (size_t)p * ldb] : Bb[(size_t)j * ldb + p])
                                        : (col ? Bb[p + (size_t)j * ldb] : Bb[(size_t)p * ldb + j]);
                    ref += a * bb;
                }
                size_t ic = cb + (col ? i + (size_t)j * ldc : (size_t)i * ldc + j);
                ref *= c->alpha;
                if (c->beta != 0)
                    ref += c->beta * C0[ic];
                num += (C[ic] - ref) * (C[ic] - ref);
                den += ref * ref;
                if (inside)
                    inside[ic] = 1;
            }
    }
    *untouched = inside != NULL;
    for (size_t i = 0; inside && i < nc; i++)
        if (!inside[i] && !(C[i] == C0[i] || (isnan(C[i]) && isnan(C0[i]))))
            *untouched = 0;
    free(inside);
    *error = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
done:
    if (dA)
        cu->MemFree(dA);
    if (dB)
        cu->MemFree(dB);
    if (dC)
        cu->MemFree(dC);
    free(A);
    free(B);
    free(C0);
    free(C);
    free(hA);
    free(hB);
    free(hC);
    return s;
}

GPU_TEST(batched_api_odd_sizes_gaps_ops_orders_types)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    char path[4300];
    snprintf(path, sizeof path, "%s/batched_api.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    static const bt_case cases[] = {
        {AT_R_32F, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 33, 17, 29, 5, 0, 0, 0, 1.5, 0.0},
        {AT_R_32F, AT_ROW_MAJOR, AT_OP_T, AT_OP_N, 7, 9, 3, 11, 3, 5, 1, 1.0, 0.5},
        {AT_R_32F, AT_COL_MAJOR, AT_OP_N, AT_OP_T, 19, 6, 40, 4, 1, 7, 3, -2.0, 0.25},
        {AT_R_32F, AT_COL_MAJOR, AT_OP_T, AT_OP_T, 1, 1, 1, 3, 0, 2, 0, 1.0, 1.0},
        {AT_R_32F, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 64, 64, 64, 6, 0, -1, 0, 1.0, 0.0},
        {AT_R_32F, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 5, 4, 0, 3, 0, 0, 0, 1.0, 2.0},
        {AT_R_64F, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 33, 17, 29, 5, 0, 0, 0, 1.5, 0.0},
        {AT_R_64F, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 12, 31, 8, 6, 2, 9, 1, 0.5, -1.0},
        {AT_R_64F, AT_COL_MAJOR, AT_OP_T, AT_OP_N, 21, 2, 17, 7, 1, 3, 1, 1.0, 0.0},
        {AT_R_64F, AT_COL_MAJOR, AT_OP_N, AT_OP_N, 130, 70, 33, 2, 5, 11, 0, 1.0, 0.5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bt_case *c = &cases[i];
        double error = -1;
        int untouched = 0;
        at_status s = bt_run(h, g.cu, c, &error, &untouched);
        CHECK_MSG(s == AT_OK, "case %zu: %s: %s", i, at_status_string(s), at_errmsg(h));
        double tol = c->type == AT_R_64F ? (8 * sqrt((double)c->k + 1) + 8) * ldexp(1, -53)
                                         : 4e-7 * sqrt((double)c->k + 1) + 1e-6;
        CHECK_MSG(error <= tol, "case %zu: error %.3g above %.3g", i, error, tol);
        CHECK_MSG(untouched, "case %zu: C outside the products was written", i);
    }
    at_destroy(h);
    th_gemm_end(&g);
}
