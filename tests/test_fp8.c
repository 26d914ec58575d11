/* test_fp8.c: the FP8 GEMM (issue 36): its problem kind (text form, names, database key,
 * lookups), the public call's argument checks and canonical form, the tensor-core family's FP8
 * kernels (rules, kinds, defaults, tolerance, NVRTC compiles of every new parameter value); on a
 * GPU the float64 reference's decoding, every kind through the tuner's verification and
 * at_gemm_fp8 against a float64 host product. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "cudrv.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "measure.h"
#include "tcgemm.h"
#include "th_compile.h"
#include "th_family.h"
#include "th_fp8.h"
#include "th_tcgemm.h"
#include "th_half.h"
#include "th_migrate.h"
#include "th_sql.h"
#include "tpl.h"

#define TF_STEP TH_TC_STEP     /* the raw numbering: th_tcgemm.h */

static const struct { at_math math; const char *name; at_dtype a, b; } tf_pairs[3] = {
    {TPL_MATH_E4M3, "e4m3xe4m3", AT_R_8F_E4M3, AT_R_8F_E4M3},
    {TPL_MATH_E4M3_E5M2, "e4m3xe5m2", AT_R_8F_E4M3, AT_R_8F_E5M2},
    {TPL_MATH_E5M2_E4M3, "e5m2xe4m3", AT_R_8F_E5M2, AT_R_8F_E4M3},
};
static const at_dtype tf_ctypes[3] = {AT_R_16BF, AT_R_16F, AT_R_32F};  /* by TYPE */

static tpl_problem tf_problem(long long m, long long n, long long k, at_dtype c, at_math math)
{
    tpl_problem p = TPL_PROBLEM(3, {m, n, k});
    p.dtype = c;
    p.math = math;
    return p;
}

static at_device_info tf_device(int cc_major, int cc_minor, int smem)
{
    at_device_info d;
    memset(&d, 0, sizeof d);
    d.cc_major = cc_major;
    d.cc_minor = cc_minor;
    d.sm_count = 132;
    d.smem_per_block_optin = smem;
    d.max_threads_per_block = 1024;
    d.regs_per_block = 65536;
    snprintf(d.arch, sizeof d.arch, "sm_%d%d", cc_major, cc_minor);
    return d;
}

/* ---------------- CPU tier: the kind ---------------- */

TEST(fp8_kind_names_and_text_forms)
{
    /* the database stores these names: they never change */
    CHECK_STR(tpl_dtype_name(AT_R_8F_E4M3), "e4m3");
    CHECK_STR(tpl_dtype_name(AT_R_8F_E5M2), "e5m2");
    CHECK_EQ(AT_R_8F_E4M3, 4);
    CHECK_EQ(AT_R_8F_E5M2, 5);
    CHECK_EQ((int)tpl_dtype_size(AT_R_8F_E4M3), 1);
    CHECK_EQ((int)tpl_dtype_size(AT_R_8F_E5M2), 1);
    for (int i = 0; i < 3; i++) {
        CHECK_STR(tpl_math_name(tf_pairs[i].math), tf_pairs[i].name);
        CHECK_EQ(tpl_math_of(tf_pairs[i].name), (int)tf_pairs[i].math);
        CHECK_EQ(tpl_math_fp8(tf_pairs[i].math), i + 1);
        CHECK_EQ(tpl_math_of_fp8(tf_pairs[i].a, tf_pairs[i].b), (int)tf_pairs[i].math);
        CHECK(tpl_math_fp8_a(tf_pairs[i].math) == tf_pairs[i].a);
        CHECK(tpl_math_fp8_b(tf_pairs[i].math) == tf_pairs[i].b);
    }
    CHECK_EQ(tpl_math_of_fp8(AT_R_8F_E5M2, AT_R_8F_E5M2), TPL_KIND_UNKNOWN);
    CHECK_EQ(tpl_math_of_fp8(AT_R_16BF, AT_R_8F_E4M3), TPL_KIND_UNKNOWN);
    CHECK(tpl_math_fp8_swap(TPL_MATH_E4M3_E5M2) == TPL_MATH_E5M2_E4M3);
    CHECK(tpl_math_fp8_swap(TPL_MATH_E5M2_E4M3) == TPL_MATH_E4M3_E5M2);
    CHECK(tpl_math_fp8_swap(TPL_MATH_E4M3) == TPL_MATH_E4M3);
    CHECK(tpl_math_fp8_swap(AT_MATH_TF32) == AT_MATH_TF32);
    CHECK_EQ(tpl_math_fp8(AT_MATH_TF32), 0);
    CHECK_EQ(tpl_math_fp8(AT_MATH_DEFAULT), 0);
    CHECK(tpl_math_name((at_math)22) == NULL && tpl_math_name((at_math)2) == NULL);

    /* canonical texts, written out */
    static const struct { const char *text; long long m; at_dtype c; int pair; at_op a, b;
                          at_order order; } forms[] = {
        {"4096x4096x4096:bf16:e4m3xe4m3:NT", 4096, AT_R_16BF, 0, AT_OP_N, AT_OP_T, AT_ROW_MAJOR},
        {"8x8x8:e5m2xe4m3", 8, AT_R_32F, 2, AT_OP_N, AT_OP_N, AT_ROW_MAJOR},
        {"7x9x5:f16:e4m3xe5m2:col:TN", 7, AT_R_16F, 1, AT_OP_T, AT_OP_N, AT_COL_MAJOR},
    };
    char text[128], err[256];
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        tpl_problem p;
        CHECK_OK(tpl_problem_parse(forms[i].text, &p, err, sizeof err));
        CHECK(p.dims[0] == forms[i].m && p.dtype == forms[i].c &&
              p.math == tf_pairs[forms[i].pair].math && p.op_a == forms[i].a &&
              p.op_b == forms[i].b && p.order == forms[i].order && p.epilogue == 0);
        tpl_problem_format(&p, text, sizeof text);
        CHECK_STR(text, forms[i].text);
    }
    /* every pair x C type x ops x order round-trips, and is a kind of its own */
    tpl_problem plain = tf_problem(64, 64, 64, AT_R_16BF, AT_MATH_DEFAULT);
    for (int pr = 0; pr < 3; pr++)
        for (int c = 0; c < 3; c++)
            for (int ops = 0; ops < 8; ops++) {
                tpl_problem p = tf_problem(33, 65, 129, tf_ctypes[c], tf_pairs[pr].math), q;
                p.op_a = (at_op)(ops & 1);
                p.op_b = (at_op)((ops >> 1) & 1);
                p.order = (at_order)(ops >> 2);
                tpl_problem_format(&p, text, sizeof text);
                CHECK_OK(tpl_problem_parse(text, &q, err, sizeof err));
                CHECK_MSG(tpl_problem_equal(&p, &q), "%s", text);
                CHECK(!tpl_problem_same_kind(&p, &plain));
                tpl_problem other = p;
                other.math = tf_pairs[(pr + 1) % 3].math;
                CHECK(!tpl_problem_same_kind(&p, &other));
            }
    /* refused: an FP8 product stored as FP64 or FP8, two maths, E5M2 x E5M2 */
    static const char *const bad[] = {
        "8x8x8:f64:e4m3xe4m3", "8x8x8:e4m3:e4m3xe4m3", "8x8x8:tf32:e4m3xe4m3",
        "8x8x8:e5m2xe5m2", "8x8x8:e4m3xe4m3:e4m3xe5m2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tpl_problem p;
        CHECK_MSG(tpl_problem_parse(bad[i], &p, err, sizeof err) == AT_ERR_INVALID_ARG,
                  "%s accepted", bad[i]);
        CHECK(p.n_dims == 0);
    }
}

/* The database keeps the FP8 kinds apart from the plain one and from each other (the math
 * column holds the pair: no schema change), and the lookup serves each from its own rows. */
TEST(fp8_database_key_and_lookups)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/fp8.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    at_device_info dev = tm_device("GPU-fp8");
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    /* every FP8 row faster than the plain one: a kind-blind lookup would take it */
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:bf16", "A=1", 5.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:bf16:e4m3xe4m3", "A=2", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:bf16:e4m3xe5m2", "A=3", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:f16:e4m3xe4m3", "A=4", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:e4m3xe4m3:NT", "A=5", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "2048x2048x2048:bf16:e4m3xe4m3", "A=6", 1.0));
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, dev.uuid, tm_any_kind.name, &rs, &n));
    CHECK_EQ(n, 6);
    static const char *const texts[] = {
        "1024x1024x1024:bf16", "1024x1024x1024:bf16:e4m3xe4m3", "1024x1024x1024:bf16:e4m3xe5m2",
        "1024x1024x1024:f16:e4m3xe4m3", "1024x1024x1024:e4m3xe4m3:NT",
        "2048x2048x2048:bf16:e4m3xe4m3",
    };
    for (int i = 0; i < n && i < 6; i++) {
        char text[64];
        tpl_problem_format(&rs[i].problem, text, sizeof text);
        CHECK_STR(text, texts[i]);
    }
    free(rs);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE math = 'e4m3xe4m3'"), 4);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE math = 'e4m3xe5m2' AND "
                              "dtype = 'bf16'"), 1);
    static const struct { const char *size; at_lookup_level level; const char *config; } cases[] = {
        {"1024x1024x1024:bf16", AT_LOOKUP_EXACT, "A=1"},
        {"1024x1024x1024:bf16:e4m3xe4m3", AT_LOOKUP_EXACT, "A=2"},
        {"1024x1024x1024:bf16:e4m3xe5m2", AT_LOOKUP_EXACT, "A=3"},
        {"1024x1024x1024:f16:e4m3xe4m3", AT_LOOKUP_EXACT, "A=4"},
        {"1024x1024x1024:e4m3xe4m3:NT", AT_LOOKUP_EXACT, "A=5"},
        {"1100x1100x1100:bf16:e4m3xe4m3", AT_LOOKUP_NEAREST, "A=2"},
        {"1900x1900x1900:bf16:e4m3xe4m3", AT_LOOKUP_NEAREST, "A=6"},
        {"1100x1100x1100:bf16", AT_LOOKUP_NEAREST, "A=1"},     /* never an FP8 row */
        {"1024x1024x1024:bf16:e5m2xe4m3", AT_LOOKUP_DEFAULT, "A=9"},
        {"1024x1024x1024:e4m3xe4m3", AT_LOOKUP_DEFAULT, "A=9"},  /* NT tuned, not NN */
        {"1024x1024x1024:tf32", AT_LOOKUP_DEFAULT, "A=9"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        tpl_problem q = tm_problem(cases[i].size);
        at_lookup_level lv = lk_choose(d, &dev, &tm_any_kind, &q, 0, cfg, config);
        CHECK_MSG(lv == cases[i].level && strcmp(config, cases[i].config) == 0,
                  "%s: level %d %s, expected %d %s", cases[i].size, lv, config, cases[i].level,
                  cases[i].config);
    }
    db_close(d);
}

/* ---------------- CPU tier: the call ---------------- */

TEST(fp8_argument_checks)
{
    char err[256];
    at_math math;
    const float *ok = (const float *)(uintptr_t)256, *odd = (const float *)(uintptr_t)258;
    static const struct { at_dtype a, b, c; int odd_scale; at_status want; const char *says; }
        cases[] = {
        {AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, -1, AT_OK, NULL},
        {AT_R_8F_E4M3, AT_R_8F_E5M2, AT_R_16F, -1, AT_OK, NULL},
        {AT_R_8F_E5M2, AT_R_8F_E4M3, AT_R_32F, -1, AT_OK, NULL},
        {AT_R_8F_E5M2, AT_R_8F_E5M2, AT_R_16BF, -1, AT_ERR_INVALID_ARG, "both AT_R_8F_E5M2"},
        {AT_R_16BF, AT_R_8F_E4M3, AT_R_16BF, -1, AT_ERR_INVALID_ARG, "must be FP8"},
        {AT_R_8F_E4M3, (at_dtype)9, AT_R_16BF, -1, AT_ERR_INVALID_ARG, "must be FP8"},
        {AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_64F, -1, AT_ERR_INVALID_ARG, "AT_R_16BF, AT_R_16F"},
        {AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_8F_E4M3, -1, AT_ERR_INVALID_ARG, "stored as"},
        {AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 0, AT_ERR_INVALID_ARG, "scale_a is not"},
        {AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 1, AT_ERR_INVALID_ARG, "scale_b is not"},
        {AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 2, AT_ERR_INVALID_ARG, "scale_d is not"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const float *sc[3] = {ok, NULL, ok};
        if (cases[i].odd_scale >= 0)
            sc[cases[i].odd_scale] = odd;
        err[0] = '\0';
        at_status s = ag_check_fp8("at_gemm_fp8", cases[i].a, cases[i].b, cases[i].c, sc[0],
                                   sc[1], sc[2], &math, err, sizeof err);
        CHECK_MSG(s == cases[i].want, "case %zu: %s (%s)", i, at_status_string(s), err);
        if (cases[i].says)
            CHECK_MSG(strstr(err, cases[i].says) && strstr(err, "at_gemm_fp8"), "case %zu: %s", i,
                      err);
        else
            CHECK(math == (at_math)tpl_math_of_fp8(cases[i].a, cases[i].b));
    }
    /* NULL scales mean 1.0: accepted */
    CHECK_OK(ag_check_fp8("f", AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, NULL, NULL, NULL, &math,
                          err, sizeof err));
    CHECK(at_gemm_fp8(NULL, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 8, 8, 16, AT_R_8F_E4M3, AT_R_8F_E4M3,
                      AT_R_16BF, 1.0, ok, 16, NULL, ok, 16, NULL, 0.0, (void *)ok, 8, NULL) ==
          AT_ERR_INVALID_ARG);
}

/* A column-major FP8 call runs as its row-major canonical form: A and B swap with their types
 * (the pair's order) and their scales; scale_d and C stay. */
TEST(fp8_column_major_swaps_types_and_scales)
{
    tpl_args args = tpl_gemm_args(7, 9, 5, 1.0f, 100, 7, 200, 5, 0.0f, 300, 7);
    args.problem.dtype = AT_R_16F;
    args.problem.math = TPL_MATH_E4M3_E5M2;
    args.problem.order = AT_COL_MAJOR;
    args.problem.op_a = AT_OP_T;
    args.operand[TPL_GEMM_SCALE_A].ptr = 1000;
    args.operand[TPL_GEMM_SCALE_B].ptr = 2000;
    args.operand[TPL_GEMM_SCALE_D].ptr = 3000;
    ag_gemm_canonical(&args);
    const tpl_problem *p = &args.problem;
    CHECK(p->order == AT_ROW_MAJOR && p->dims[0] == 9 && p->dims[1] == 7 && p->dims[2] == 5);
    CHECK(p->math == TPL_MATH_E5M2_E4M3 && p->dtype == AT_R_16F);
    CHECK(p->op_a == AT_OP_N && p->op_b == AT_OP_T);
    CHECK(args.operand[TPL_GEMM_A].ptr == 200 && args.operand[TPL_GEMM_B].ptr == 100);
    CHECK(args.operand[TPL_GEMM_SCALE_A].ptr == 2000 && args.operand[TPL_GEMM_SCALE_B].ptr == 1000);
    CHECK(args.operand[TPL_GEMM_SCALE_D].ptr == 3000 && args.operand[TPL_GEMM_C].ptr == 300);
    /* row-major: unchanged */
    tpl_args row = tpl_gemm_args(7, 9, 5, 1.0f, 100, 5, 200, 9, 0.0f, 300, 9);
    row.problem.math = TPL_MATH_E4M3_E5M2;
    row.operand[TPL_GEMM_SCALE_A].ptr = 1000;
    ag_gemm_canonical(&row);
    CHECK(row.problem.math == TPL_MATH_E4M3_E5M2 && row.operand[TPL_GEMM_SCALE_A].ptr == 1000);
}

/* ---------------- CPU tier: the kernels ---------------- */

/* The FP8 kernels: PATH 90 only (PATH 80 refused with its reason), both operands K-major, BK
 * 128, no epilogue, an FP32 C stored directly; each serves exactly its pair and C type in every
 * op pair, never a plain problem, and no plain kernel serves an FP8 problem; no other family
 * takes an FP8 problem. */
TEST(fp8_kernels_rules_and_kinds)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h100 = tf_device(9, 0, 227 * 1024), a100 = tf_device(8, 0, 163 * 1024);
    long long raw = tpl_space_size(f);
    CHECK_EQ(raw % TF_STEP, 0);
    CHECK(f->params[P_FP8].omit_first && f->params[P_FP8].n_values == 4);
    int per[4][3] = {{0}};
    char why[256];
    tpl_problem plain = tf_problem(4096, 4096, 4096, AT_R_16BF, AT_MATH_DEFAULT);
    for (long long j = 0; j < raw && !th_failed(); j += TF_STEP)
        for (int fv = 0; fv < 4; fv++) {
            int c[TPL_MAX_PARAMS];
            tpl_config_from_index(f, j + TH_TC_INDEX(0, fv, 0, 0), c);
            CHECK(c[P_FP8] == fv && c[P_EPI] == 0 && c[P_SCALE] == 0);
            int v = f->valid(c, NULL, why, sizeof why);
            if (fv == 0) {
                /* a plain kernel never serves an FP8 problem */
                for (int pr = 0; v && pr < 3; pr++) {
                    tpl_problem q = tf_problem(4096, 4096, 4096, tf_ctypes[c[P_TYPE]],
                                               tf_pairs[pr].math);
                    q.op_b = AT_OP_T;
                    CHECK(!f->applicable(c, &q));
                }
                continue;
            }
            if (!v)
                continue;
            per[fv][c[P_TYPE]]++;
            CHECK(c[P_PATH] == 90 && c[P_BK] == 128 && c[P_OPB] == 1 && c[P_OPA] == 0);
            CHECK(c[P_TYPE] != 2 || c[P_VEC] != 8);
            CHECK(f->valid(c, &h100, why, sizeof why) && !f->valid(c, &a100, NULL, 0));
            CHECK(f->valid_prefix(c, P_EPI, NULL) && f->valid_prefix(c, P_FP8, NULL));
            int c0[TPL_MAX_PARAMS];
            memcpy(c0, c, sizeof c0);
            c0[P_FP8] = 0;
            CHECK(!f->valid(c0, NULL, NULL, 0));       /* not a plain kernel's configuration */
            c0[P_FP8] = c[P_FP8];
            c0[P_PATH] = 80;
            CHECK(!f->valid(c0, NULL, why, sizeof why) && strstr(why, "PATH 90 only"));
            CHECK(!f->applicable(c, &plain));
            for (int pr = 0; pr < 3; pr++)
                for (int t = 0; t < 3; t++)
                    for (int ops = 0; ops < 4; ops++) {
                        tpl_problem q = tf_problem(4096, 4096, 4096, tf_ctypes[t],
                                                   tf_pairs[pr].math);
                        q.op_a = (at_op)(ops & 1);
                        q.op_b = (at_op)(ops >> 1);
                        int want = pr + 1 == c[P_FP8] && t == c[P_TYPE] && c[P_SPLITK] == 1;
                        CHECK_MSG(f->applicable(c, &q) == want, "FP8=%d TYPE=%d on %s C %d ops %d",
                                  c[P_FP8], c[P_TYPE], tf_pairs[pr].name, t, ops);
                    }
        }
    for (int fv = 1; fv < 4; fv++)
        for (int t = 0; t < 3; t++)
            /* an FP32 C has only the direct-store (VEC 2) rows */
            CHECK_MSG(per[fv][t] >= (t == 2 ? 12 : 20) && per[fv][t] <= 60, "FP8=%d TYPE=%d: %d "
                      "kernels", fv, t, per[fv][t]);
    printf("    FP8 kernels per pair (BF16, FP16, FP32 C): %d %d %d\n", per[1][0], per[1][1],
           per[1][2]);
    /* no other family computes an FP8 problem (test_tcfault is tcgemm's copy) */
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *g = tpl_family_at(i);
        for (int t = 0; t < 3; t++) {
            tpl_problem q = tf_problem(256, 256, 256, tf_ctypes[t], TPL_MATH_E4M3);
            int tc = g == f || strcmp(g->name, "test_tcfault") == 0;
            CHECK_MSG(tpl_family_accepts(g, &q) == tc, "%s", g->name);
            q.epilogue = TPL_EPI(TPL_BIAS_COL, 1);
            CHECK(!tpl_family_accepts(g, &q));     /* no FP8 epilogue */
        }
    }
}

/* The built-in choice of every FP8 kind on sm_90 is a PATH 90 FP8 kernel of the pair with C's
 * TYPE, valid and applicable at every shape class; elsewhere none serves (at_gemm_fp8 refuses
 * the device first). */
TEST(fp8_defaults_and_tolerance)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h100 = tf_device(9, 0, 227 * 1024);
    static const long long shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {257, 381, 200}, {1024, 1024, 8192}, {512, 512, 16384},
        {4097, 4097, 4097}, {8192, 8192, 1024},
    };
    for (int pr = 0; pr < 3; pr++)
        for (int t = 0; t < 3; t++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int ops = 0; ops < 4; ops++) {
                    tpl_problem p = tf_problem(shapes[s][0], shapes[s][1], shapes[s][2],
                                               tf_ctypes[t], tf_pairs[pr].math);
                    p.op_a = (at_op)(ops & 1);
                    p.op_b = (at_op)(ops >> 1);
                    int cfg[TPL_MAX_PARAMS];
                    char config[TPL_CONFIG_LEN] = "";
                    CHECK_EQ(lk_choose(NULL, &h100, f, &p, 1, cfg, config), AT_LOOKUP_DEFAULT);
                    CHECK_MSG(cfg[P_FP8] == pr + 1 && cfg[P_TYPE] == t && cfg[P_PATH] == 90 &&
                              f->valid(cfg, &h100, NULL, 0) && f->applicable(cfg, &p),
                              "%s C %d shape %zu: %s", tf_pairs[pr].name, t, s, config);
                }
    /* the tolerance: the plain rule of C's type plus (4 sqrt(k) + k / 32) 2^-13 (tcgemm.c) */
    static const long long ks[] = {1, 32, 200, 1000, 4096, 16384};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            double k = (double)ks[i], u = t == 0 ? 1.0 / 256 : t == 1 ? 1.0 / 2048 : 0x1p-24;
            tpl_problem p = tf_problem(64, 64, ks[i], tf_ctypes[t], TPL_MATH_E4M3);
            double want = 2 * u + (4 * sqrt(k) + k / 8) * 0x1p-24 +
                          (4 * sqrt(k) + k / 32) * 0x1p-13;
            CHECK_MSG(fabs(f->tolerance(&p) - want) <= 1e-12 * want, "C %d k %lld: %g, rule %g",
                      t, ks[i], f->tolerance(&p), want);
            /* a dropped K tile of 128 at k = 4096 (18%) is still rejected, a missed edge row
             * block of a 257-row product (6%) at k = 200 */
            CHECK(ks[i] > 4096 || f->tolerance(&p) < 0.09);
            CHECK(ks[i] > 200 || f->tolerance(&p) < 0.02);
        }
}

/* bench/shapes/fp8.txt (the benchmark's shapes, to tune before it) holds FP8 E4M3 x E4M3 -> BF16
 * problems in the layout wgmma reads in place (row-major NT), each one tcgemm's built-in choice
 * serves on sm_90, and among them issue 36's three target shapes in canonical form. */
TEST(fp8_benchmark_shapes_file)
{
    FILE *f = fopen("bench/shapes/fp8.txt", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    at_device_info h100 = tf_device(9, 0, 227 * 1024);
    char line[256], err[256];
    int n = 0, targets = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        CHECK_MSG(strncmp(line, "tcgemm ", 7) == 0, "%s", line);
        tpl_problem p;
        CHECK_MSG(tpl_problem_parse(line + 7, &p, err, sizeof err) == AT_OK, "%s: %s", line, err);
        CHECK(p.math == TPL_MATH_E4M3 && p.dtype == AT_R_16BF && p.op_a == AT_OP_N &&
              p.op_b == AT_OP_T && p.order == AT_ROW_MAJOR);
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        CHECK_EQ(lk_choose(NULL, &h100, &tpl_tcgemm, &p, 1, cfg, config), AT_LOOKUP_DEFAULT);
        CHECK(cfg[P_FP8] == 1 && tpl_tcgemm.applicable(cfg, &p));
        targets += (p.dims[0] == 4096 && p.dims[1] == 4096 && p.dims[2] == 4096) ||
                   (p.dims[0] == 8192 && p.dims[1] == 8192 && (p.dims[2] == 8192 ||
                                                               p.dims[2] == 1024));
        n++;
    }
    fclose(f);
    CHECK(n >= 4 && targets == 3);
}

#define TF_P90(type, tile, rest) "TYPE=" #type ",PATH=90," tile ",WG=2,WARPS_M=2,WARPS_N=2," \
    rest ",LOADW=16,OPB=1"

/* NVRTC compiles every FP8 value with every C type and store path (sm_90a): TMA stores of a
 * 16-bit C, direct paired stores (FP32 C), split-K's reduce with the scales, two m64 wgmmas per
 * warpgroup (256 x 128), 192 columns, a cluster; PATH 80 FP8 refused before compiling. */
TEST(fp8_nvrtc_compiles_every_value)
{
    const tpl_family *f = &tpl_tcgemm;
    static const char *const configs[] = {
        TF_P90(0, "BM=128,BN=256,BK=128,STAGES=3,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=1",
        TF_P90(1, "BM=128,BN=192,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=2",
        TF_P90(2, "BM=128,BN=256,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=1,GROUP=16,SPLITK=1,VEC=2") ",FP8=3",
        TF_P90(2, "BM=128,BN=128,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=4,VEC=2") ",FP8=1",
        TF_P90(0, "BM=256,BN=128,BK=128,STAGES=3,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=2",
        TF_P90(1, "BM=128,BN=256,BK=128,STAGES=4,CM=2,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=2") ",FP8=3",
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0] && !th_failed(); i++) {
        int c[TPL_MAX_PARAMS];
        char why[256];
        CHECK(th_parse_config(f, configs[i], c, __FILE__, __LINE__));
        CHECK_MSG(f->valid(c, NULL, why, sizeof why), "%s: %s", configs[i], why);
        th_check_compile(f, configs[i], "sm_90", AT_OK);
    }
    th_check_compile(f, TF_P90(0, "BM=128,BN=256,BK=128,STAGES=3,CM=1,CN=1",
                               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=1", "sm_89",
                     AT_ERR_UNSUPPORTED);
}

/* ---------------- GPU tier ---------------- */

/* An FP8 byte as a double, written from the formats' definitions (OCP FP8: E4M3 bias 7, no
 * infinities, S.1111.111 NaN; E5M2 bias 15, IEEE specials), independent of reference.cu. */
static double tf_fp8(unsigned char b, int e4m3)
{
    int s = b >> 7, e = e4m3 ? (b >> 3) & 15 : (b >> 2) & 31, f = e4m3 ? b & 7 : b & 3;
    double v;
    if (e4m3 && e == 15 && f == 7)
        return NAN;
    if (!e4m3 && e == 31)
        return f ? NAN : (s ? -INFINITY : INFINITY);
    if (e4m3)
        v = e ? (1 + f / 8.0) * pow(2, e - 7) : f / 8.0 * pow(2, -6);
    else
        v = e ? (1 + f / 4.0) * pow(2, e - 15) : f / 4.0 * pow(2, -14);
    return s ? -v : v;
}

static int tf_open(const cudrv **cu, CUdevice *cd, CUcontext *ctx)
{
    at_status s;
    *cu = cudrv_get(&s, NULL, 0);
    return *cu && (*cu)->Init(0) == CUDA_SUCCESS &&
           (*cu)->DeviceGet(cd, th_device()) == CUDA_SUCCESS &&
           (*cu)->DevicePrimaryCtxRetain(ctx, *cd) == CUDA_SUCCESS &&
           (*cu)->CtxPushCurrent(*ctx) == CUDA_SUCCESS;
}

static void tf_close(const cudrv *cu, CUdevice cd)
{
    CUcontext popped;
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(cd);
}

/* The float64 reference decodes every FP8 byte exactly: all 256 codes of each format as the
 * 256 x 1 A of a product with B = 1 (reference.cu's ref_gemm_typed), against the definition;
 * and the reference's own fill rounds to the nearest value (its codes decode within half a
 * spacing of the draw). */
GPU_TEST(fp8_gpu_reference_decodes_every_code)
{
    const cudrv *cu;
    CUdevice cd;
    CUcontext ctx;
    CHECK(tf_open(&cu, &cd, &ctx));
    char err[512];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    at_exec *ref = ms_reference(g);
    CHECK(ref != NULL);
    unsigned char codes[256], one[2][1] = {{0x38}, {0x3c}};     /* 1.0 in E4M3, E5M2 */
    for (int i = 0; i < 256; i++)
        codes[i] = (unsigned char)i;
    CUdeviceptr dA, dB, dR;
    CHECK(!cu->MemAlloc(&dA, 256) && !cu->MemAlloc(&dB, 16) && !cu->MemAlloc(&dR, 256 * 8));
    CHECK(!cu->MemcpyHtoD(dA, codes, 256));
    for (int e4m3 = 0; e4m3 < 2 && !th_failed(); e4m3++) {
        at_dtype t = e4m3 ? AT_R_8F_E4M3 : AT_R_8F_E5M2;
        CHECK(tf_fp8(one[!e4m3][0], e4m3) == 1.0);
        CHECK(!cu->MemcpyHtoD(dB, one[!e4m3], 1));
        CHECK_OK(tpl_ref_gemm_typed(ref, t, 0, 256, 1, 1, 1.0f, dA, 1, dB, 1, 0.0f, 0, 1, dR));
        double r[256];
        CHECK(!cu->CtxSynchronize() && !cu->MemcpyDtoH(r, dR, sizeof r));
        for (int i = 0; i < 256; i++) {
            double want = tf_fp8((unsigned char)i, e4m3);
            CHECK_MSG((isnan(want) && isnan(r[i])) || r[i] == want, "%s code 0x%02x: %g, want %g",
                      e4m3 ? "E4M3" : "E5M2", i, r[i], want);
        }
    }
    cu->MemFree(dA);
    cu->MemFree(dB);
    cu->MemFree(dR);
    ms_close(g);
    tf_close(cu, cd);
}

/* Every FP8 kind (3 pairs x 3 C types), every valid kernel of it in tile order RASTER 0 GROUP 8,
 * through the tuner's verification (scales 0.75, 1.25, 0.5, alpha 1.5; ops NT, NN packed, TN,
 * TT) at odd sizes (m, n, k no multiples of the tile; k no multiple of 16) and deep K split. */
GPU_TEST(fp8_gpu_every_kind_through_verification)
{
    static const th_fp8_shape shapes[] = {
        {257, 381, 200, 2}, {263, 384, 136, 0}, {129, 65, 33, 1}, {7, 13, 5, 3},
        {257, 381, 1100, 2}, {1025, 1023, 1027, 2},
    };
    const at_math maths[3] = {tf_pairs[0].math, tf_pairs[1].math, tf_pairs[2].math};
    const char *const names[3] = {tf_pairs[0].name, tf_pairs[1].name, tf_pairs[2].name};
    th_fp8_kinds_through_verification(maths, names, 0, shapes,
                                      (int)(sizeof shapes / sizeof shapes[0]), 5, 31);
}

static double tf_get_c(at_dtype t, const void *v, size_t i)
{
    if (t == AT_R_16BF)
        return th_from_bf16(((const uint16_t *)v)[i]);
    if (t == AT_R_16F)
        return th_from_f16(((const uint16_t *)v)[i]);
    return ((const float *)v)[i];
}

/* Random FP8 bytes of magnitude at most 4 (no NaN, no infinity), seeded. */
static void tf_random_fp8(unsigned char *v, size_t count, int e4m3, unsigned seed)
{
    for (size_t i = 0; i < count;) {
        seed = seed * 1664525u + 1013904223u;
        unsigned char b = (unsigned char)(seed >> 24);
        double x = tf_fp8(b, e4m3);
        if (isfinite(x) && fabs(x) <= 4.0)
            v[i++] = b;
    }
}

/* at_gemm_fp8 against the float64 host product of the same bytes, decoded by the definition:
 * every pair and C type, row-major NT (read in place), NN and TN (packed), column-major TN
 * (cuBLASLt's layout), a leading dimension that is no multiple of 16 bytes (packed), k = 100
 * (no multiple of 16 or 32), scales other than 1 and NULL (1.0), beta 0 (C poisoned) and 0.5;
 * the kernel that ran is an FP8 one of the canonical pair. */
GPU_TEST(fp8_gpu_api_against_host_reference)
{
    const cudrv *cu;
    CUdevice cd;
    CUcontext ctx;
    CHECK(tf_open(&cu, &cd, &ctx));
    char path[4300];
    snprintf(path, sizeof path, "%s/fp8_api.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    int cc_major = 0, cc_minor = 0;
    cu->DeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cd);
    cu->DeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cd);
    if (cc_major != 9 || cc_minor != 0) {
        CHECK_EQ(at_gemm_fp8(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 8, 8, 16, AT_R_8F_E4M3,
                             AT_R_8F_E4M3, AT_R_16BF, 1, (const void *)16, 16, NULL,
                             (const void *)16, 16, NULL, 0, (void *)16, 8, NULL),
                 AT_ERR_UNSUPPORTED);
        at_destroy(h);
        tf_close(cu, cd);
        th_skip("FP8 GEMM runs on sm_90 only");
        return;
    }
    const int m = 257, n = 129, k = 100, pad = 3;   /* lda/ldb k + 3 in the padded case */
    const float scales[3] = {0.75f, 1.25f, 0.5f};
    CUdeviceptr dA, dB, dC, dS;
    size_t big = (size_t)(m > n ? m : n) * (k + pad) + 64;
    CHECK(!cu->MemAlloc(&dA, big) && !cu->MemAlloc(&dB, big) &&
          !cu->MemAlloc(&dC, (size_t)m * n * 4) && !cu->MemAlloc(&dS, 16));
    CHECK(!cu->MemcpyHtoD(dS, scales, sizeof scales));
    unsigned char *A = malloc(big), *B = malloc(big);
    void *C0 = malloc((size_t)m * n * 4), *C = malloc((size_t)m * n * 4);
    CHECK(A && B && C0 && C);
    /* layouts: order, op_a, op_b, padded leading dimensions */
    static const struct { at_order order; at_op a, b; int padded; } lays[] = {
        {AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 0}, {AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 0},
        {AT_ROW_MAJOR, AT_OP_T, AT_OP_N, 0}, {AT_COL_MAJOR, AT_OP_T, AT_OP_N, 0},
        {AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 1},
    };
    double worst = 0;
    for (int pr = 0; pr < 3 && !th_failed(); pr++)
        for (int t = 0; t < 3 && !th_failed(); t++)
            for (size_t l = 0; l < sizeof lays / sizeof lays[0] && !th_failed(); l++)
                for (int bz = 0; bz < 2 && !th_failed(); bz++) {
                    at_dtype ct = tf_ctypes[t];
                    size_t cs = ct == AT_R_32F ? 4 : 2;
                    int col = lays[l].order == AT_COL_MAJOR;
                    /* op(A) m x k stored (op N row-major) m x k; op T k x m; column-major the
                     * transposes: element (i, q) of op(A) at the index below */
                    int a_rows_stored = (lays[l].a == AT_OP_N) != col ? m : k;
                    int a_cols_stored = (lays[l].a == AT_OP_N) != col ? k : m;
                    int b_rows_stored = (lays[l].b == AT_OP_N) != col ? k : n;
                    int b_cols_stored = (lays[l].b == AT_OP_N) != col ? n : k;
                    int lda = a_cols_stored + (lays[l].padded ? pad : 0);
                    int ldb = b_cols_stored + (lays[l].padded ? pad : 0);
                    int ldc = col ? m : n;
                    int e4a = tf_pairs[pr].a == AT_R_8F_E4M3, e4b = tf_pairs[pr].b == AT_R_8F_E4M3;
                    tf_random_fp8(A, (size_t)a_rows_stored * lda, e4a, 11 + pr + 3 * t);
                    tf_random_fp8(B, (size_t)b_rows_stored * ldb, e4b, 17 + pr + 5 * t);
                    for (size_t i = 0; i < (size_t)m * n; i++) {
                        double v = ((int)(i * 2654435761u % 2001) - 1000) / 500.0;
                        if (ct == AT_R_16BF)
                            ((uint16_t *)C0)[i] = bz ? th_to_bf16((float)v) : 0x7fc0;     /* NaN */
                        else if (ct == AT_R_16F)
                            ((uint16_t *)C0)[i] = bz ? th_to_f16(v) : 0x7e00;
                        else
                            ((float *)C0)[i] = bz ? (float)v : NAN;
                    }
                    CHECK(!cu->MemcpyHtoD(dA, A, (size_t)a_rows_stored * lda) &&
                          !cu->MemcpyHtoD(dB, B, (size_t)b_rows_stored * ldb) &&
                          !cu->MemcpyHtoD(dC, C0, (size_t)m * n * cs));
                    double alpha = 1.5, beta = bz ? 0.5 : 0.0;
                    int null_scales = l == 2;      /* NULL: 1.0 */
                    const float *sa = null_scales ? NULL : (const float *)(uintptr_t)dS;
                    const float *sb = null_scales ? NULL : (const float *)(uintptr_t)(dS + 4);
                    const float *sd = null_scales ? NULL : (const float *)(uintptr_t)(dS + 8);
                    at_status s = at_gemm_fp8(h, lays[l].order, lays[l].a, lays[l].b, m, n, k,
                                              tf_pairs[pr].a, tf_pairs[pr].b, ct, alpha,
                                              (const void *)(uintptr_t)dA, lda, sa,
                                              (const void *)(uintptr_t)dB, ldb, sb, beta,
                                              (void *)(uintptr_t)dC, ldc, sd);
                    CHECK_MSG(s == AT_OK, "%s C %d layout %zu: %s: %s", tf_pairs[pr].name, t, l,
                              at_status_string(s), at_errmsg(h));
                    if (s != AT_OK)
                        break;
                    CHECK(!cu->CtxSynchronize() && !cu->MemcpyDtoH(C, dC, (size_t)m * n * cs));
                    at_stats st;
                    CHECK_OK(at_get_stats(h, &st));
                    /* canonical pair: a column-major call swaps A and B */
                    int canon = col ? tpl_math_fp8(tpl_math_fp8_swap(tf_pairs[pr].math)) : pr + 1;
                    char want[16];
                    snprintf(want, sizeof want, ",FP8=%d", canon);
                    CHECK_MSG(strstr(st.last_config, want), "want %s, ran %s", want,
                              st.last_config);
                    double f = null_scales ? 1.0 : (double)scales[0] * scales[1];
                    double sdv = null_scales ? 1.0 : scales[2], num = 0, den = 0;
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < n; j++) {
                            double acc = 0;
                            for (int q = 0; q < k; q++) {
                                /* stored row-major index of op(A)(i, q), op(B)(q, j) */
                                int an = (lays[l].a == AT_OP_N) != col;
                                int bn = (lays[l].b == AT_OP_N) != col;
                                size_t ia = an ? (size_t)i * lda + q : (size_t)q * lda + i;
                                size_t ib = bn ? (size_t)q * ldb + j : (size_t)j * ldb + q;
                                acc += tf_fp8(A[ia], e4a) * tf_fp8(B[ib], e4b);
                            }
                            size_t ic = col ? (size_t)i + (size_t)j * ldc : (size_t)i * ldc + j;
                            double ref = sdv * (alpha * f * acc +
                                                (bz ? beta * tf_get_c(ct, C0, ic) : 0.0));
                            double got = tf_get_c(ct, C, ic);
                            num += (got - ref) * (got - ref);
                            den += ref * ref;
                        }
                    tpl_problem p = tf_problem(m, n, k, ct, tf_pairs[pr].math);
                    double err = isfinite(num) ? sqrt(num / den) : INFINITY;
                    CHECK_MSG(err <= tpl_tcgemm.tolerance(&p), "%s C %d layout %zu beta %g: "
                              "error %g > %g (%s)", tf_pairs[pr].name, t, l, beta, err,
                              tpl_tcgemm.tolerance(&p), st.last_config);
                    worst = fmax(worst, err / tpl_tcgemm.tolerance(&p));
                }
    printf("    3 pairs x 3 C types x 5 layouts x 2 betas, worst error %.3f of the tolerance\n",
           worst);
    /* refused on the device too, C untouched */
    CHECK_EQ(at_gemm_fp8(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 8, 8, 16, AT_R_8F_E5M2, AT_R_8F_E5M2,
                         AT_R_16BF, 1, (const void *)(uintptr_t)dA, 16, NULL,
                         (const void *)(uintptr_t)dB, 16, NULL, 0, (void *)(uintptr_t)dC, 8,
                         NULL), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "E5M2"), "%s", at_errmsg(h));
    CHECK_EQ(at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 8, 8, 8, AT_R_8F_E4M3, 1,
                     (const void *)(uintptr_t)dA, 8, (const void *)(uintptr_t)dB, 8, 0,
                     (void *)(uintptr_t)dC, 8), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "at_gemm_fp8"), "%s", at_errmsg(h));
    cu->MemFree(dA);
    cu->MemFree(dB);
    cu->MemFree(dC);
    cu->MemFree(dS);
    free(A), free(B), free(C0), free(C);
    CHECK_OK(at_destroy(h));
    tf_close(cu, cd);
}
