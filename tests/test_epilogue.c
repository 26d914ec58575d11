/* test_epilogue.c: fused GEMM epilogues (bias per row or column, ReLU, GELU): the argument
 * checks of at_gemm_epilogue and the column-major mapping of a bias (CPU), and on a GPU every
 * epilogue through every store path of the tensor-core family (the tuner's verification
 * against the float64 reference) and through at_gemm_epilogue in both orders (a float64 host
 * reference written here). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "exec.h"
#include "harness.h"
#include "lookup.h"
#include "measure.h"
#include "th_compile.h"
#include "th_half.h"
#include "tpl.h"

extern const tpl_family tpl_tcgemm;

/* ---- the epilogue on the host, from its definition ---- */

static double te_act(int act, double x)
{
    switch (act) {
    case AT_ACT_RELU:
        return x > 0 ? x : 0;
    case AT_ACT_GELU_TANH:
        return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case AT_ACT_GELU_ERF:
        return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    default:
        return x;
    }
}

/* ---- CPU tier ---- */

TEST(epilogue_argument_checks)
{
    static float bias[8] __attribute__((aligned(16)));
    const char *b = (const char *)bias;
    static const struct {
        at_epilogue epi;
        at_dtype type;
        at_math math;
        at_status want;
        int code;
        const char *says;               /* a piece of the message */
    } cases[] = {
        {{AT_ACT_NONE, AT_BIAS_NONE, NULL}, AT_R_16BF, AT_MATH_DEFAULT, AT_OK, 0, ""},
        {{AT_ACT_RELU, AT_BIAS_NONE, NULL}, AT_R_16BF, AT_MATH_DEFAULT, AT_OK, 1, ""},
        {{AT_ACT_GELU_TANH, AT_BIAS_COL, NULL}, AT_R_16F, AT_MATH_DEFAULT, AT_ERR_INVALID_ARG, 0,
         "AT_BIAS_COL with a NULL bias pointer"},
        {{AT_ACT_GELU_ERF, AT_BIAS_ROW, NULL}, AT_R_16F, AT_MATH_DEFAULT, AT_ERR_INVALID_ARG, 0,
         "AT_BIAS_ROW with a NULL bias pointer"},
        {{AT_ACT_NONE, AT_BIAS_NONE, (const void *)1}, AT_R_16F, AT_MATH_DEFAULT,
         AT_ERR_INVALID_ARG, 0, "a bias pointer with bias kind AT_BIAS_NONE"},
        {{(at_activation)4, AT_BIAS_NONE, NULL}, AT_R_16BF, AT_MATH_DEFAULT, AT_ERR_INVALID_ARG, 0,
         "unknown activation 4"},
        {{(at_activation)-1, AT_BIAS_NONE, NULL}, AT_R_16BF, AT_MATH_DEFAULT, AT_ERR_INVALID_ARG,
         0, "unknown activation -1"},
        {{AT_ACT_RELU, (at_bias_kind)3, NULL}, AT_R_16BF, AT_MATH_DEFAULT, AT_ERR_INVALID_ARG, 0,
         "unknown bias kind 3"},
        {{AT_ACT_RELU, AT_BIAS_COL, NULL}, AT_R_32F, AT_MATH_DEFAULT, AT_ERR_INVALID_ARG, 0,
         "NULL bias pointer"},
        {{AT_ACT_RELU, AT_BIAS_NONE, NULL}, AT_R_32F, AT_MATH_DEFAULT, AT_ERR_UNSUPPORTED, 0,
         "not in exact FP32"},
        {{AT_ACT_RELU, AT_BIAS_NONE, NULL}, AT_R_64F, AT_MATH_DEFAULT, AT_ERR_UNSUPPORTED, 0,
         "not in FP64"},
        {{AT_ACT_NONE, AT_BIAS_NONE, NULL}, AT_R_64F, AT_MATH_DEFAULT, AT_OK, 0, ""},
        {{AT_ACT_GELU_TANH, AT_BIAS_COL, NULL}, AT_R_32F, AT_MATH_TF32, AT_ERR_INVALID_ARG, 0,
         "NULL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        int code = -1;
        at_status s = ag_check_epilogue("at_gemm_epilogue", &cases[i].epi, cases[i].type,
                                        cases[i].math, &code, err, sizeof err);
        CHECK_MSG(s == cases[i].want, "case %zu: %s (%s)", i, at_status_string(s), err);
        CHECK_MSG(strstr(err, cases[i].says) != NULL, "case %zu: \"%s\"", i, err);
        CHECK_MSG(s != AT_OK || code == cases[i].code, "case %zu: code %d", i, code);
        CHECK(s == AT_OK || strncmp(err, "at_gemm_epilogue: ", 18) == 0);
    }
    /* with a bias: the code is TPL_EPI, the pointer's alignment is its element's */
    char err[256] = "";
    int code = -1;
    at_epilogue e = {AT_ACT_GELU_TANH, AT_BIAS_COL, b};
    CHECK_OK(ag_check_epilogue("f", &e, AT_R_16BF, AT_MATH_DEFAULT, &code, err, sizeof err));
    CHECK_EQ(code, TPL_EPI(TPL_BIAS_COL, 2));
    e = (at_epilogue){AT_ACT_GELU_ERF, AT_BIAS_ROW, b + 2};
    CHECK_OK(ag_check_epilogue("f", &e, AT_R_16F, AT_MATH_DEFAULT, &code, err, sizeof err));
    CHECK_EQ(code, TPL_EPI(TPL_BIAS_ROW, 3));
    CHECK_EQ(ag_check_epilogue("f", &e, AT_R_32F, AT_MATH_TF32, &code, err, sizeof err),
             AT_ERR_INVALID_ARG);                /* 2 bytes past a float */
    CHECK_MSG(strstr(err, "not aligned to its 4-byte elements"), "%s", err);
    e.bias = b + 1;
    CHECK_EQ(ag_check_epilogue("f", &e, AT_R_16BF, AT_MATH_DEFAULT, &code, err, sizeof err),
             AT_ERR_INVALID_ARG);
    e.bias = b + 4;
    CHECK_OK(ag_check_epilogue("f", &e, AT_R_32F, AT_MATH_TF32, &code, err, sizeof err));
    /* NULL: no epilogue */
    CHECK_OK(ag_check_epilogue("f", NULL, AT_R_64F, AT_MATH_DEFAULT, &code, err, sizeof err));
    CHECK_EQ(code, 0);
    CHECK_EQ(at_gemm_epilogue(NULL, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 1, 1, 1, AT_R_16BF, 1, NULL,
                              1, NULL, 1, 0, NULL, 1, &e), AT_ERR_INVALID_ARG);
}

/* A column-major call with a bias per row (or column), mapped by ag_gemm_canonical and
 * computed row-major on the host with the canonical problem's bias kind, gives what the
 * column-major definition gives, element for element: the call's rows are the canonical C's
 * columns, so its per-row bias is per column there (and back). */
TEST(epilogue_column_major_bias_swaps_rows_and_columns)
{
    static const int sizes[][3] = {{3, 5, 7}, {1, 4, 2}, {6, 1, 1}, {5, 5, 5}};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int kind = AT_BIAS_NONE; kind <= AT_BIAS_COL; kind++)
            for (int act = 0; act < 4; act++) {
                int m = sizes[z][0], n = sizes[z][1], k = sizes[z][2];
                int lda = m + 2, ldb = k + 1, ldc = m + 3;
                double A[128], B[128], C[128], want[128], bias[16];
                for (int i = 0; i < 128; i++) {
                    A[i] = (double)((i * 37) % 19) / 9 - 1;
                    B[i] = (double)((i * 53) % 23) / 11 - 1;
                    C[i] = want[i] = -1000;
                }
                for (int i = 0; i < 16; i++)
                    bias[i] = (double)(i % 5) - 2;
                /* column-major: (i, j) of C at i + j * ldc; bias[i] per row, bias[j] per column */
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        double acc = 0;
                        for (int q = 0; q < k; q++)
                            acc += A[i + q * lda] * B[q + j * ldb];
                        acc += kind == AT_BIAS_ROW ? bias[i] : kind == AT_BIAS_COL ? bias[j] : 0;
                        want[i + j * ldc] = te_act(act, acc);
                    }
                tpl_args args = tpl_gemm_args(m, n, k, 1.0f, (CUdeviceptr)(uintptr_t)A, lda,
                                              (CUdeviceptr)(uintptr_t)B, ldb, 0.0f,
                                              (CUdeviceptr)(uintptr_t)C, ldc);
                args.problem.order = AT_COL_MAJOR;
                args.problem.epilogue = TPL_EPI(kind, act);
                ag_gemm_canonical(&args);
                const tpl_problem *p = &args.problem;
                int ckind = TPL_EPI_BIAS(p->epilogue);
                CHECK_EQ(TPL_EPI_ACT(p->epilogue), act);
                CHECK_EQ(ckind, kind == AT_BIAS_ROW ? TPL_BIAS_COL
                                : kind == AT_BIAS_COL ? TPL_BIAS_ROW : TPL_BIAS_NONE);
                /* row-major canonical: (i, j) at i * ldc + j of the n x m C' */
                const double *cA = (const double *)(uintptr_t)args.operand[TPL_GEMM_A].ptr,
                             *cB = (const double *)(uintptr_t)args.operand[TPL_GEMM_B].ptr;
                long long cm = p->dims[0], cn = p->dims[1], ca = args.operand[TPL_GEMM_A].ld,
                          cb = args.operand[TPL_GEMM_B].ld;
                for (long long i = 0; i < cm; i++)
                    for (long long j = 0; j < cn; j++) {
                        double acc = 0;
                        for (long long q = 0; q < k; q++)
                            acc += cA[i * ca + q] * cB[q * cb + j];
                        acc += ckind == TPL_BIAS_ROW   ? bias[i]
                               : ckind == TPL_BIAS_COL ? bias[j]
                                                       : 0;
                        C[i * ldc + j] = te_act(act, acc);
                    }
                for (int i = 0; i < 128; i++)
                    CHECK_MSG(C[i] == want[i], "%dx%dx%d bias %d act %d: element %d %g != %g", m,
                              n, k, kind, act, i, C[i], want[i]);
                /* a row-major call keeps its bias kind */
                tpl_args row = tpl_gemm_args(m, n, k, 1.0f, 1, k, 2, n, 0.0f, 3, n);
                row.problem.epilogue = TPL_EPI(kind, act);
                ag_gemm_canonical(&row);
                CHECK_EQ(row.problem.epilogue, TPL_EPI(kind, act));
            }
}

/* tcgemm's run() refuses, before it touches a device, a kernel of another epilogue than the
 * problem's, and a bias epilogue without a bias or with one misaligned; each with a message. */
TEST(epilogue_run_refuses_a_mismatch)
{
    const tpl_family *f = &tpl_tcgemm;
    static at_exec ex;                  /* no driver: every refusal comes first */
    char msg[512] = "";
    memset(&ex, 0, sizeof ex);
    ex.errmsg = msg;
    ex.errlen = sizeof msg;
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(f, f->default_config, cfg, err, sizeof err));
    int p_epi = tpl_param_index(f, "EPI");
    tpl_args args = tpl_gemm_args(64, 64, 64, 1.0f, 256, 64, 512, 64, 0.0f, 1024, 64);
    args.problem.dtype = AT_R_16BF;
    args.problem.epilogue = TPL_EPI(TPL_BIAS_COL, 2);
    CHECK_EQ(f->run(&ex, cfg, &args), AT_ERR_UNSUPPORTED);     /* EPI 0 kernel */
    CHECK_MSG(strstr(msg, "EPI=0") && strstr(msg, "\"bias_col:gelu\""), "%s", msg);
    cfg[p_epi] = TPL_EPI(TPL_BIAS_ROW, 2);
    CHECK_EQ(f->run(&ex, cfg, &args), AT_ERR_UNSUPPORTED);     /* another epilogue */
    CHECK_MSG(strstr(msg, "\"bias_row:gelu\""), "%s", msg);
    args.problem.epilogue = TPL_EPI(TPL_BIAS_NONE, 1);
    CHECK_EQ(f->run(&ex, cfg, &args), AT_ERR_UNSUPPORTED);     /* a plain-bias kernel, ReLU */
    cfg[p_epi] = TPL_EPI(TPL_BIAS_COL, 2);
    args.problem.epilogue = TPL_EPI(TPL_BIAS_COL, 2);
    CHECK_EQ(f->run(&ex, cfg, &args), AT_ERR_INVALID_ARG);     /* no bias given */
    CHECK_MSG(strstr(msg, "needs a bias vector"), "%s", msg);
    args.operand[TPL_GEMM_BIAS].ptr = 4097;                    /* not 2-byte aligned */
    CHECK_EQ(f->run(&ex, cfg, &args), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(msg, "not aligned"), "%s", msg);
    cfg[p_epi] = 0;
    args.problem.epilogue = 0;
    args.problem.dims[0] = 0;                                  /* plain, empty: nothing to do */
    CHECK_OK(f->run(&ex, cfg, &args));
}

/* The tuner tunes an epilogue problem given in a --problems file (the fake worker of the tests:
 * compiles for real, times by formula): every configuration it stores computes that epilogue,
 * the row's kind is the epilogue's, and the lookup serves it at the exact level while the
 * plain problem of the same sizes stays untuned. */
TEST(epilogue_tuner_tunes_a_problems_file_line)
{
    char dbpath[4300], list[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/epi_tune.db", th_tmpdir());
    snprintf(list, sizeof list, "%s/epi_problems.txt", th_tmpdir());
    FILE *f = fopen(list, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "tcgemm 1024x1024x1024:bf16:bias_col:gelu\n");
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' %s/autotune-test --device 0 "
             "--kernel tcgemm --problems '%s' --db '%s' --budget 2e --seed 5 --quiet",
             th_build_dir(), th_build_dir(), list, dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    db *d = NULL;
    char err[512];
    CHECK_OK(db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err));
    db_result *r = NULL;
    int n = 0;
    CHECK_OK(db_results(d, NULL, "tcgemm", &r, &n));
    CHECK(n >= 2);
    tpl_problem want;
    CHECK_OK(tpl_problem_parse("1024x1024x1024:bf16:bias_col:gelu", &want, err, sizeof err));
    for (int i = 0; i < n; i++) {
        CHECK(tpl_problem_equal(&r[i].problem, &want));
        CHECK_MSG(strstr(r[i].config, ",EPI=10"), "%s", r[i].config);
    }
    at_device_info dev;
    memset(&dev, 0, sizeof dev);
    if (n > 0)
        snprintf(dev.uuid, sizeof dev.uuid, "%s", r[0].device_uuid);
    free(r);
    snprintf(dev.arch, sizeof dev.arch, "sm_90");
    dev.cc_major = 9;
    dev.sm_count = 132;
    dev.smem_per_block_optin = 227 * 1024;
    dev.max_threads_per_block = 1024;
    dev.regs_per_block = 65536;
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    CHECK_EQ(lk_choose(d, &dev, &tpl_tcgemm, &want, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_MSG(strstr(config, ",EPI=10"), "%s", config);
    tpl_problem plain = want;
    plain.epilogue = 0;
    CHECK_EQ(lk_choose(d, &dev, &tpl_tcgemm, &plain, 0, cfg, config), AT_LOOKUP_DEFAULT);
    CHECK_MSG(!strstr(config, "EPI"), "%s", config);
    db_close(d);
}

/* ---- GPU tier ---- */

/* The store paths of each type (TYPE %d; EPI appended): PATH 90 with TMA-store staging (TF32:
 * T9_TES), PATH 90 direct stores on clusters, PATH 90 split-K (the reduce forms the value),
 * PATH 80 staged rows, PATH 80 direct pairs with narrow loads, PATH 80 split-K. The first of
 * each PATH takes every epilogue, the others four (every bias kind and activation). */
static const char *const te_paths16[] = {
    "TYPE=%d,PATH=90,BM=128,BN=256,BK=64,STAGES=3,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=8,LOADW=16",
    "TYPE=%d,PATH=90,BM=128,BN=256,BK=64,STAGES=4,WG=2,CM=2,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=2,LOADW=16",
    "TYPE=%d,PATH=90,BM=128,BN=128,BK=64,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=2,VEC=2,LOADW=16",
    "TYPE=%d,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=8,LOADW=16",
    "TYPE=%d,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=4,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=2,LOADW=2",
    "TYPE=%d,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=2,VEC=2,LOADW=16",
};
static const char *const te_paths32[] = {
    "TYPE=%d,PATH=90,BM=256,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=2,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=8,LOADW=16",
    "TYPE=%d,PATH=90,BM=256,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=2,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=2,LOADW=16",
    "TYPE=%d,PATH=90,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=2,VEC=2,LOADW=16",
    "TYPE=%d,PATH=80,BM=128,BN=128,BK=16,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=4,LOADW=16",
    "TYPE=%d,PATH=80,BM=128,BN=128,BK=16,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=4,RASTER=0,"
    "GROUP=8,SPLITK=1,VEC=2,LOADW=4",
    "TYPE=%d,PATH=80,BM=128,BN=128,BK=16,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,SPLITK=2,VEC=2,LOADW=16",
};
#define TE_N_PATHS 6
/* The four epilogues of the other paths: each bias kind, each activation. */
static const int te_some[] = {TPL_EPI(TPL_BIAS_ROW, 2), TPL_EPI(TPL_BIAS_COL, 1),
                              TPL_EPI(TPL_BIAS_NONE, 3), TPL_EPI(TPL_BIAS_COL, 2)};

static const struct { at_dtype t; at_math m; const char *name; } te_kinds[3] = {
    {AT_R_16BF, AT_MATH_DEFAULT, "bf16"}, {AT_R_16F, AT_MATH_DEFAULT, "fp16"},
    {AT_R_32F, AT_MATH_TF32, "tf32"},
};

/* The GPU test's configurations are valid on an H100 with every epilogue, and each serves at
 * least one of its shapes (split-K only the deep one). */
TEST(epilogue_gpu_test_configurations_are_valid)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h100;
    memset(&h100, 0, sizeof h100);
    h100.cc_major = 9;
    h100.sm_count = 132;
    h100.smem_per_block_optin = 227 * 1024;
    h100.max_threads_per_block = 1024;
    h100.regs_per_block = 65536;
    snprintf(h100.arch, sizeof h100.arch, "sm_90");
    int p_epi = tpl_param_index(f, "EPI");
    for (int t = 0; t < 3; t++)
        for (int path = 0; path < TE_N_PATHS; path++) {
            char text[TPL_CONFIG_LEN], why[256];
            snprintf(text, sizeof text, t == 2 ? te_paths32[path] : te_paths16[path], t);
            int cfg[TPL_MAX_PARAMS];
            CHECK_MSG(tpl_config_parse(f, text, cfg, why, sizeof why) == AT_OK, "%s", why);
            for (int e = 1; e < TPL_N_EPI; e++) {
                cfg[p_epi] = e;
                CHECK_MSG(f->valid(cfg, &h100, why, sizeof why), "%s EPI=%d: %s", text, e, why);
                tpl_problem p = TPL_PROBLEM(3, {257, 381, path % 3 == 2 ? 1100 : 200});
                p.dtype = te_kinds[t].t;
                p.math = te_kinds[t].m;
                p.epilogue = e;
                CHECK_MSG(f->applicable(cfg, &p), "%s EPI=%d", text, e);
            }
        }
}

/* Every epilogue x bias kind x type x PATH through the tuner's verification (fresh inputs, a
 * random bias of the type, alpha 1.5, beta 0 over NaN) against the float64 reference of the
 * unfused product with the epilogue applied in float64: at 257 x 381 x 200 (odd: scalar and
 * staged row stores), 263 x 384 x 136 (aligned C: TMA stores, pairs) and, for split-K, 257 x
 * 381 x 1100. */
GPU_TEST(epilogue_gpu_every_epilogue_store_path_and_type)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    static const long long shapes[][3] = {{257, 381, 200}, {263, 384, 136}, {257, 381, 1100}};
    int p_epi = tpl_param_index(f, "EPI");
    CHECK(p_epi >= 0);
    for (int t = 0; t < 3 && !th_failed(); t++) {
        th_compiled *set = calloc(TE_N_PATHS * TPL_N_EPI, sizeof *set);
        CHECK(set != NULL);
        int n = 0;
        for (int path = 0; path < TE_N_PATHS; path++) {
            char text[TPL_CONFIG_LEN];
            snprintf(text, sizeof text, t == 2 ? te_paths32[path] : te_paths16[path], t);
            int every = path == 0 || path == 3;
            int count = every ? TPL_N_EPI - 1 : 4;
            for (int i = 0; i < count; i++) {
                th_compiled *s = &set[n];
                char why[256];
                s->fam = f;
                CHECK_MSG(tpl_config_parse(f, text, s->cfg, why, sizeof why) == AT_OK, "%s: %s",
                          text, why);
                s->cfg[p_epi] = every ? i + 1 : te_some[i];
                if (!f->valid(s->cfg, dev, why, sizeof why))
                    continue;               /* PATH 90 off sm_90 */
                tpl_config_format(f, s->cfg, s->text, sizeof s->text);
                s->arch = dev->arch;
                n++;
            }
        }
        if (!th_compile_all(set, n)) {
            th_free_compiled(set, n);
            break;
        }
        double worst = 0;
        int verified = 0;
        for (int e = 1; e < TPL_N_EPI && !th_failed(); e++)
            for (size_t z = 0; z < sizeof shapes / sizeof shapes[0] && !th_failed(); z++) {
                tpl_problem p = TPL_PROBLEM(3, {shapes[z][0], shapes[z][1], shapes[z][2]});
                p.dtype = te_kinds[t].t;
                p.math = te_kinds[t].m;
                p.epilogue = e;
                int prepared = 0;
                for (int i = 0; i < n && !th_failed(); i++) {
                    if (set[i].cfg[p_epi] != e || !f->applicable(set[i].cfg, &p))
                        continue;
                    if (!prepared && ms_prepare(g, f, &p, 31 + z, err, sizeof err) != AT_OK) {
                        th_fail(__FILE__, __LINE__, "prepare: %s", err);
                        break;
                    }
                    prepared = 1;
                    double x = -1;
                    at_status st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &x,
                                             err, sizeof err);
                    char size[96];
                    tpl_problem_format(&p, size, sizeof size);
                    CHECK_MSG(st == AT_OK && x <= f->tolerance(&p), "%s %s: %s (error %g, "
                              "tolerance %g, %s)", size, set[i].text, at_status_string(st), x,
                              f->tolerance(&p), err);
                    worst = fmax(worst, x / f->tolerance(&p));
                    verified++;
                }
            }
        printf("    %s: %d kernels, %d verifications, worst error %.2f of the tolerance\n",
               te_kinds[t].name, n, verified, worst);
        th_free_compiled(set, n);
    }
    ms_close(g);
}

/* ---- through the runtime ---- */

static double te_tf32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
    memcpy(&f, &u, 4);
    return f;
}

/* Element i of a typed host array; tf32 rounds an FP32 operand as the tensor cores read it. */
static double te_get(at_dtype t, const void *v, size_t i, int tf32)
{
    if (t == AT_R_16BF)
        return th_from_bf16(((const uint16_t *)v)[i]);
    if (t == AT_R_16F)
        return th_from_f16(((const uint16_t *)v)[i]);
    float f = ((const float *)v)[i];
    return tf32 ? te_tf32(f) : f;
}

static void *te_random(at_dtype t, size_t count, unsigned seed)
{
    size_t es = t == AT_R_32F ? 4 : 2;
    void *v = malloc(count * es + 16);
    for (size_t i = 0; v && i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        float f = -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f;
        if (t == AT_R_16BF)
            ((uint16_t *)v)[i] = th_to_bf16(f);
        else if (t == AT_R_16F)
            ((uint16_t *)v)[i] = th_to_f16(f);
        else
            ((float *)v)[i] = f;
    }
    return v;
}

/* Every epilogue of every type in both orders through at_gemm_epilogue at 257 x 381 x 200
 * (alpha 0.25 so that the bias and the activations' bends matter; beta 0 and 0.5, and beta 0
 * with the bias one element past an aligned address: PATH 90's staged store reads a 16-bit bias
 * in pairs only where it is 4-byte aligned, element by element otherwise), against
 * the float64 host product of the same inputs with the epilogue of the call's own definition
 * (a per-row bias has m elements in either order). The kernel that ran is the tensor-core
 * family's with the canonical EPI: a column-major per-row bias is per column there. */
GPU_TEST(epilogue_gpu_api_every_order_bias_and_type)
{
    at_status s;
    const cudrv *cu = cudrv_get(&s, NULL, 0);
    CUdevice cd;
    CUcontext ctx;
    CHECK(cu && cu->Init(0) == CUDA_SUCCESS && cu->DeviceGet(&cd, th_device()) == CUDA_SUCCESS &&
          cu->DevicePrimaryCtxRetain(&ctx, cd) == CUDA_SUCCESS &&
          cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    char path[4300];
    snprintf(path, sizeof path, "%s/epilogue_api.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    const int m = 257, n = 381, k = 200;
    for (int t = 0; t < 3 && !th_failed(); t++) {
        at_dtype type = te_kinds[t].t;
        int tf32 = type == AT_R_32F;
        size_t es = tf32 ? 4 : 2;
        CHECK_OK(at_set_math_mode(h, tf32 ? AT_MATH_TF32 : AT_MATH_DEFAULT));
        /* inputs shared by the orders: A m x k, B k x n, C m x n, both read in either order
         * with their own leading dimensions (row-major k, n, n; column-major m, k, m) */
        void *A = te_random(type, (size_t)m * k, 5), *B = te_random(type, (size_t)k * n, 7),
             *C0 = te_random(type, (size_t)m * n, 9), *bias = te_random(type, 512, 11),
             *C = malloc((size_t)m * n * es);
        CUdeviceptr dA, dB, dC, dbias;
        CHECK(A && B && C0 && bias && C);
        CHECK(!cu->MemAlloc(&dA, (size_t)m * k * es) && !cu->MemAlloc(&dB, (size_t)k * n * es) &&
              !cu->MemAlloc(&dC, (size_t)m * n * es) && !cu->MemAlloc(&dbias, 512 * es));
        CHECK(!cu->MemcpyHtoD(dA, A, (size_t)m * k * es) &&
              !cu->MemcpyHtoD(dB, B, (size_t)k * n * es) && !cu->MemcpyHtoD(dbias, bias, 512 * es));
        /* the product of each order's reading of the buffers, once */
        double *prod = malloc(2 * sizeof(double) * m * n);
        CHECK(prod != NULL);
        for (int order = 0; prod && order < 2; order++) {
            int col = order == AT_COL_MAJOR;
            long long lda = col ? m : k, ldb = col ? k : n;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int q = 0; q < k; q++)
                        acc += te_get(type, A, col ? i + q * lda : i * lda + q, tf32) *
                               te_get(type, B, col ? q + j * ldb : q * ldb + j, tf32);
                    prod[(size_t)order * m * n + (size_t)i * n + j] = acc;
                }
        }
        double worst = 0;
        for (int e = 1; prod && e < TPL_N_EPI && !th_failed(); e++)
            for (int order = 0; order < 2 && !th_failed(); order++)
                for (int bz = 0; bz < 3 && !th_failed(); bz++) {
                    double alpha = 0.25, beta = bz == 1 ? 0.5 : 0.0;
                    const int b0 = bz == 2;     /* the bias's first element in the buffer */
                    int col = order == AT_COL_MAJOR;
                    long long lda = col ? m : k, ldb = col ? k : n, ldc = col ? m : n;
                    (void)lda, (void)ldb;
                    at_epilogue epi = {(at_activation)TPL_EPI_ACT(e), (at_bias_kind)TPL_EPI_BIAS(e),
                                       TPL_EPI_BIAS(e) ? (const void *)(uintptr_t)(dbias + b0 * es)
                                                       : NULL};
                    CHECK(!cu->MemcpyHtoD(dC, C0, (size_t)m * n * es));
                    s = at_gemm_epilogue(h, (at_order)order, AT_OP_N, AT_OP_N, m, n, k, type, alpha,
                                         (const void *)(uintptr_t)dA, (int)lda,
                                         (const void *)(uintptr_t)dB, (int)ldb, beta,
                                         (void *)(uintptr_t)dC, (int)ldc, &epi);
                    CHECK_MSG(s == AT_OK, "%s epilogue %d order %d: %s: %s", te_kinds[t].name, e,
                              order, at_status_string(s), at_errmsg(h));
                    if (s != AT_OK)
                        break;
                    CHECK(!cu->CtxSynchronize() && !cu->MemcpyDtoH(C, dC, (size_t)m * n * es));
                    at_stats st;
                    CHECK_OK(at_get_stats(h, &st));
                    int kind = TPL_EPI_BIAS(e);
                    int canon = TPL_EPI(col && kind ? 3 - kind : kind, TPL_EPI_ACT(e));
                    char want[16];
                    snprintf(want, sizeof want, ",EPI=%d", canon);
                    CHECK_MSG(strstr(st.last_config, want) && !st.last_vendor, "%s %s: ran %s",
                              te_kinds[t].name, want, st.last_config);
                    double num = 0, den = 0;
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < n; j++) {
                            size_t ic = col ? (size_t)i + (size_t)j * ldc : (size_t)i * ldc + j;
                            double acc = prod[(size_t)order * m * n + (size_t)i * n + j];
                            double ref = alpha * acc + beta * te_get(type, C0, ic, 0);
                            ref += kind == AT_BIAS_ROW ? te_get(type, bias, b0 + i, 0)
                                   : kind == AT_BIAS_COL ? te_get(type, bias, b0 + j, 0) : 0;
                            ref = te_act(TPL_EPI_ACT(e), ref);
                            double got = te_get(type, C, ic, 0);
                            num += (got - ref) * (got - ref);
                            den += ref * ref;
                        }
                    tpl_problem p = TPL_PROBLEM(3, {m, n, k});
                    p.dtype = type;
                    p.math = te_kinds[t].m;
                    p.epilogue = e;
                    double err = isfinite(num) ? sqrt(num / den) : INFINITY;
                    CHECK_MSG(err <= tpl_tcgemm.tolerance(&p), "%s epilogue %s order %d beta %g: "
                              "error %g > %g (%s)", te_kinds[t].name, tpl_epilogue_name(e), order,
                              beta, err, tpl_tcgemm.tolerance(&p), st.last_config);
                    worst = fmax(worst, err / tpl_tcgemm.tolerance(&p));
                }
        printf("    %s: 11 epilogues x 2 orders x 3 (beta 0, 0.5, an offset bias), worst error %.2f "
               "of the tolerance\n",
               te_kinds[t].name, worst);
        cu->MemFree(dA);
        cu->MemFree(dB);
        cu->MemFree(dC);
        cu->MemFree(dbias);
        free(A), free(B), free(C0), free(bias), free(C), free(prod);
    }
    /* refused on the GPU too, C untouched: exact FP32, FP64 */
    at_epilogue relu = {AT_ACT_RELU, AT_BIAS_NONE, NULL};
    CHECK_OK(at_set_math_mode(h, AT_MATH_DEFAULT));
    CHECK_EQ(at_gemm_epilogue(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 8, 8, 8, AT_R_32F, 1,
                              (const void *)16, 8, (const void *)16, 8, 0, (void *)16, 8, &relu),
             AT_ERR_UNSUPPORTED);
    CHECK_MSG(strstr(at_errmsg(h), "exact FP32"), "%s", at_errmsg(h));
    CHECK_EQ(at_gemm_epilogue(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 8, 8, 8, AT_R_64F, 1,
                              (const void *)16, 8, (const void *)16, 8, 0, (void *)16, 8, &relu),
             AT_ERR_UNSUPPORTED);
    CHECK_OK(at_destroy(h));
    CUcontext popped;
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(cd);
}

/* bench/shapes/epilogue.txt (the fused-epilogue benchmark's problems, tuned before it by
 * `bench/run.sh epilogue`): every line a tcgemm problem that parses, BF16 with the column bias
 * and GELU (tanh) or plain, each served by the family's built-in choice on sm_90. */
TEST(epilogue_benchmark_problems_file)
{
    FILE *f = fopen("bench/shapes/epilogue.txt", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    at_device_info h100;
    memset(&h100, 0, sizeof h100);
    h100.cc_major = 9;
    h100.sm_count = 132;
    h100.smem_per_block_optin = 227 * 1024;
    h100.max_threads_per_block = 1024;
    h100.regs_per_block = 65536;
    snprintf(h100.arch, sizeof h100.arch, "sm_90");
    char line[256], err[256];
    int fused = 0, plain = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        CHECK_MSG(strncmp(line, "tcgemm ", 7) == 0, "%s", line);
        tpl_problem p;
        CHECK_MSG(tpl_problem_parse(line + 7, &p, err, sizeof err) == AT_OK, "%s: %s", line, err);
        CHECK(p.dtype == AT_R_16BF && p.op_a == AT_OP_N && p.op_b == AT_OP_N);
        CHECK(p.epilogue == 0 || p.epilogue == TPL_EPI(TPL_BIAS_COL, AT_ACT_GELU_TANH));
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        CHECK_EQ(lk_choose(NULL, &h100, &tpl_tcgemm, &p, 0, cfg, config), AT_LOOKUP_DEFAULT);
        CHECK_MSG(tpl_tcgemm.applicable(cfg, &p), "%s: %s", line, config);
        fused += p.epilogue != 0;
        plain += p.epilogue == 0;
    }
    fclose(f);
    CHECK(fused == 3 && plain == 3);
}
