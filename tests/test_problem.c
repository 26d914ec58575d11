/* test_problem.c: CPU tests of the typed problem key (text form, equality,
 * kind distance, plain-only families) and of the typed argument block. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "lookup.h"
#include "tpl.h"

/* ---- text form ---- */

/* Canonical texts and the fields they mean, written out independently. */
static const struct {
    const char *text;
    int n_dims;
    long long d0, d1, d2;
    at_dtype dtype;
    at_math math;
    at_op op_a, op_b;
    at_order order;
    long long batch;
} tp_forms[] = {
    {"4096x4096x4096", 3, 4096, 4096, 4096, AT_R_32F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N,
     AT_ROW_MAJOR, 0},
    {"1048576", 1, 1048576, 0, 0, AT_R_32F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N, AT_ROW_MAJOR, 0},
    {"4096x4096x4096:bf16", 3, 4096, 4096, 4096, AT_R_16BF, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N,
     AT_ROW_MAJOR, 0},
    {"4096x4096x4096:f16", 3, 4096, 4096, 4096, AT_R_16F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N,
     AT_ROW_MAJOR, 0},
    {"4096x4096x4096:tf32", 3, 4096, 4096, 4096, AT_R_32F, AT_MATH_TF32, AT_OP_N, AT_OP_N,
     AT_ROW_MAJOR, 0},
    {"4096x4096x4096:col:NT", 3, 4096, 4096, 4096, AT_R_32F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_T,
     AT_COL_MAJOR, 0},
    {"256x256x256:b64", 3, 256, 256, 256, AT_R_32F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N,
     AT_ROW_MAJOR, 64},
    {"1x2x3:f64:col:TT:b7", 3, 1, 2, 3, AT_R_64F, AT_MATH_DEFAULT, AT_OP_T, AT_OP_T,
     AT_COL_MAJOR, 7},
    {"5x6x7:tf32:TN", 3, 5, 6, 7, AT_R_32F, AT_MATH_TF32, AT_OP_T, AT_OP_N, AT_ROW_MAJOR, 0},
    {"134217728:f64", 1, 134217728, 0, 0, AT_R_64F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N,
     AT_ROW_MAJOR, 0},
    {"8192:f64:b2", 1, 8192, 0, 0, AT_R_64F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N, AT_ROW_MAJOR, 2},
    {"1099511627776x1", 2, 1LL << 40, 1, 0, AT_R_32F, AT_MATH_DEFAULT, AT_OP_N, AT_OP_N,
     AT_ROW_MAJOR, 0},
};

TEST(problem_text_canonical_forms)
{
    for (size_t i = 0; i < sizeof tp_forms / sizeof tp_forms[0]; i++) {
        tpl_problem p;
        char err[256] = "", back[128];
        CHECK_MSG(tpl_problem_parse(tp_forms[i].text, &p, err, sizeof err) == AT_OK,
                  "%s: %s", tp_forms[i].text, err);
        CHECK_EQ(p.n_dims, tp_forms[i].n_dims);
        CHECK_EQ(p.dims[0], tp_forms[i].d0);
        CHECK_EQ(p.dims[1], tp_forms[i].d1);
        CHECK_EQ(p.dims[2], tp_forms[i].d2);
        CHECK_EQ(p.dtype, tp_forms[i].dtype);
        CHECK_EQ(p.math, tp_forms[i].math);
        CHECK_EQ(p.op_a, tp_forms[i].op_a);
        CHECK_EQ(p.op_b, tp_forms[i].op_b);
        CHECK_EQ(p.order, tp_forms[i].order);
        CHECK_EQ(tpl_problem_batch(&p), tp_forms[i].batch > 1 ? tp_forms[i].batch : 1);
        tpl_problem_format(&p, back, sizeof back);
        CHECK_STR(back, tp_forms[i].text);
    }
}

TEST(problem_text_other_spellings_format_canonically)
{
    static const char *const pairs[][2] = {
        {"4096x4096x4096:NT:col", "4096x4096x4096:col:NT"},
        {"4096x4096x4096:f32:row:NN:b1", "4096x4096x4096"},
        {"8X8X8", "8x8x8"},
        {"64x64x64:b1:bf16", "64x64x64:bf16"},
        {"9:b3:TT:col:f16", "9:f16:col:TT:b3"},
        {"7x7x7:TN:tf32:f32", "7x7x7:tf32:TN"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        tpl_problem p;
        char err[256] = "", back[128];
        CHECK_MSG(tpl_problem_parse(pairs[i][0], &p, err, sizeof err) == AT_OK, "%s: %s",
                  pairs[i][0], err);
        tpl_problem_format(&p, back, sizeof back);
        CHECK_STR(back, pairs[i][1]);
    }
}

/* Every combination of kind values: format, then parse, gives it back. */
TEST(problem_text_round_trips_every_kind)
{
    static const at_dtype types[] = {AT_R_32F, AT_R_64F, AT_R_16F, AT_R_16BF};
    static const long long batches[] = {0, 1, 2, 1000};
    int n = 0;
    for (int t = 0; t < 4; t++)
        for (int m = 0; m < 2; m++)
            for (int oa = 0; oa < 2; oa++)
                for (int ob = 0; ob < 2; ob++)
                    for (int o = 0; o < 2; o++)
                        for (int b = 0; b < 4; b++) {
                            if (m == AT_MATH_TF32 && types[t] != AT_R_32F)
                                continue;
                            tpl_problem p = TPL_PROBLEM(3, {17, 1, 123456789});
                            p.dtype = types[t];
                            p.math = (at_math)m;
                            p.op_a = (at_op)oa;
                            p.op_b = (at_op)ob;
                            p.order = (at_order)o;
                            p.batch = batches[b];
                            char text[128], err[256] = "";
                            tpl_problem q;
                            tpl_problem_format(&p, text, sizeof text);
                            CHECK_MSG(tpl_problem_parse(text, &q, err, sizeof err) == AT_OK,
                                      "%s: %s", text, err);
                            CHECK_MSG(tpl_problem_equal(&p, &q), "%s does not round-trip", text);
                            CHECK_EQ(tpl_problem_plain(&p), strchr(text, ':') == NULL);
                            n++;
                        }
    CHECK_EQ(n, 4 * 2 * 2 * 2 * 4 + 1 * 2 * 2 * 2 * 4);
}

TEST(problem_text_rejects_malformed)
{
    static const char *const bad[] = {
        "", "x", "4096x", "x4096", "0", "-5", "+5", " 4096", "4096 ", "4096x0x4",
        "4096x4096x4096x4096", "1099511627777", "4096:", "4096::bf16", "4096:bf16:",
        "4096:f16:bf16", "4096:bf32", "4096:BF16", "4096:nt", "4096:NTN", "4096:N",
        "4096:NT:TN", "4096:b0", "4096:b", "4096:b-1", "4096:bx", "4096:b2:b3",
        "4096:b1099511627777", "4096:f16:tf32", "4096:tf32:bf16", "4096:tf32:tf32",
        "4096:col:row", "4096;bf16", "4096:bf16 ", "4096x4096:col:", "4096:exact",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tpl_problem p;
        memset(&p, 0x5a, sizeof p);
        char err[256] = "";
        CHECK_MSG(tpl_problem_parse(bad[i], &p, err, sizeof err) == AT_ERR_INVALID_ARG,
                  "\"%s\" accepted", bad[i]);
        CHECK_MSG(err[0] != '\0', "\"%s\": no reason given", bad[i]);
        static const tpl_problem zero;
        CHECK_MSG(memcmp(&p, &zero, sizeof p) == 0, "\"%s\": problem not cleared", bad[i]);
    }
    char err[64];
    tpl_problem p;
    CHECK_EQ(tpl_problem_parse(NULL, &p, err, sizeof err), AT_ERR_INVALID_ARG);
}

TEST(problem_kind_names_are_fixed)
{
    /* the database stores these names: they must never change */
    CHECK_STR(tpl_dtype_name(AT_R_32F), "f32");
    CHECK_STR(tpl_dtype_name(AT_R_64F), "f64");
    CHECK_STR(tpl_dtype_name(AT_R_16F), "f16");
    CHECK_STR(tpl_dtype_name(AT_R_16BF), "bf16");
    CHECK_STR(tpl_math_name(AT_MATH_DEFAULT), "");
    CHECK_STR(tpl_math_name(AT_MATH_TF32), "tf32");
    CHECK_STR(tpl_op_name(AT_OP_N), "N");
    CHECK_STR(tpl_op_name(AT_OP_T), "T");
    CHECK_STR(tpl_order_name(AT_ROW_MAJOR), "row");
    CHECK_STR(tpl_order_name(AT_COL_MAJOR), "col");
    CHECK(tpl_dtype_name((at_dtype)6) == NULL && tpl_op_name((at_op)TPL_KIND_UNKNOWN) == NULL);
    CHECK_EQ(tpl_dtype_of("bf16"), AT_R_16BF);
    CHECK_EQ(tpl_math_of(""), AT_MATH_DEFAULT);
    CHECK_EQ(tpl_order_of("col"), AT_COL_MAJOR);
    CHECK_EQ(tpl_op_of("T"), AT_OP_T);
    CHECK_EQ(tpl_dtype_of("f8"), TPL_KIND_UNKNOWN);
    CHECK_EQ(tpl_op_of(NULL), TPL_KIND_UNKNOWN);
    /* a value this build cannot name shows as "?" and never parses back */
    tpl_problem p = TPL_PROBLEM(1, {5});
    p.dtype = (at_dtype)TPL_KIND_UNKNOWN;
    char text[64], err[128];
    tpl_problem_format(&p, text, sizeof text);
    CHECK_STR(text, "5:?");
    CHECK_EQ(tpl_problem_parse(text, &p, err, sizeof err), AT_ERR_INVALID_ARG);
}

/* ---- equality, batch, distance ---- */

TEST(problem_equality_kind_and_batch)
{
    tpl_problem a = TPL_PROBLEM(3, {64, 64, 64}), b = a;
    b.batch = 1;
    CHECK(tpl_problem_equal(&a, &b) && tpl_problem_plain(&b));     /* 0 and 1: one product */
    CHECK_EQ(tpl_problem_batch(&a), 1);
    b.batch = 2;
    CHECK(!tpl_problem_equal(&a, &b) && tpl_problem_same_kind(&a, &b) && !tpl_problem_plain(&b));
    tpl_problem c = a;
    c.dtype = AT_R_16BF;
    CHECK(!tpl_problem_equal(&a, &c) && !tpl_problem_same_kind(&a, &c) && !tpl_problem_plain(&c));
    c = a;
    c.op_b = AT_OP_T;
    CHECK(!tpl_problem_equal(&a, &c) && !tpl_problem_same_kind(&a, &c));
    c = a;
    c.order = AT_COL_MAJOR;
    CHECK(!tpl_problem_equal(&a, &c) && !tpl_problem_same_kind(&a, &c));
    c = a;
    c.math = AT_MATH_TF32;
    CHECK(!tpl_problem_equal(&a, &c) && !tpl_problem_same_kind(&a, &c));
    c = a;
    c.dims[2] = 65;
    CHECK(!tpl_problem_equal(&a, &c) && tpl_problem_same_kind(&a, &c));
    c = a;
    c.n_dims = 2;
    CHECK(!tpl_problem_equal(&a, &c));
}

TEST(problem_distance_stays_within_a_kind)
{
    tpl_problem a = TPL_PROBLEM(3, {1024, 1024, 1024}), b = TPL_PROBLEM(3, {2048, 1024, 512});
    CHECK(fabs(lk_shape_distance(&a, &b) - 2 * log(2.0)) < 1e-12);
    /* the batch count is one more dimension among batches: 64 against 2 products */
    b = a;
    b.batch = 64;
    tpl_problem two = a;
    two.batch = 2;
    CHECK(fabs(lk_shape_distance(&two, &b) - log(32.0)) < 1e-12);
    CHECK(fabs(lk_shape_distance(&b, &two) - log(32.0)) < 1e-12);
    /* a batch and a single product are of different classes: never near */
    CHECK(isinf(lk_shape_distance(&a, &b)) && isinf(lk_shape_distance(&b, &a)));
    /* another kind is never near, however close its sizes */
    for (int k = 0; k < 6; k++) {
        b = a;
        switch (k) {
        case 0: b.dtype = AT_R_64F; break;
        case 1: b.dtype = AT_R_16BF; break;
        case 2: b.math = AT_MATH_TF32; break;
        case 3: b.op_a = AT_OP_T; break;
        case 4: b.op_b = AT_OP_T; break;
        default: b.order = AT_COL_MAJOR; break;
        }
        CHECK_MSG(isinf(lk_shape_distance(&a, &b)) && isinf(lk_shape_distance(&b, &a)),
                  "kind change %d is at a finite distance", k);
        CHECK(lk_shape_distance(&b, &b) == 0.0);
    }
    tpl_problem one = TPL_PROBLEM(1, {1024});
    CHECK(isinf(lk_shape_distance(&a, &one)));
}

/* ---- families take only the plain kind ---- */

/* The non-plain variants of p, one field changed each. */
static int tp_variants(const tpl_problem *p, tpl_problem *out)
{
    int n = 0;
    for (int k = 0; k < 8; k++) {
        tpl_problem v = *p;
        switch (k) {
        case 0: v.dtype = AT_R_64F; break;
        case 1: v.dtype = AT_R_16F; break;
        case 2: v.dtype = AT_R_16BF; break;
        case 3: v.math = AT_MATH_TF32; break;
        case 4: v.op_a = AT_OP_T; break;
        case 5: v.op_b = AT_OP_T; break;
        case 6: v.order = AT_COL_MAJOR; break;
        default: v.batch = 2; break;
        }
        out[n++] = v;
    }
    return n;
}

TEST(families_take_only_the_plain_kind)
{
    int checked = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        if (!fam->applicable || !fam->n_tuning_problems)
            continue;
        const tpl_problem *p = &fam->tuning_problems[0];
        CHECK_MSG(tpl_family_accepts(fam, p), "%s refuses its own tuning problem", fam->name);
        /* configurations that serve the plain problem: default, baselines, a spread */
        int cfgs[64][TPL_MAX_PARAMS], n_cfg = 0;
        char why[256];
        if (tpl_config_parse(fam, fam->default_config, cfgs[n_cfg], why, sizeof why) == AT_OK)
            n_cfg++;
        for (int b = 0; b < fam->n_baselines && n_cfg < 64; b++)
            if (tpl_config_parse(fam, fam->baselines[b].config, cfgs[n_cfg], why,
                                 sizeof why) == AT_OK)
                n_cfg++;
        long long size = tpl_space_size(fam), step = size / 4000 + 1;
        for (long long i = 0; i < size && n_cfg < 64; i += step) {
            tpl_config_from_index(fam, i, cfgs[n_cfg]);
            if (fam->valid(cfgs[n_cfg], NULL, why, sizeof why) &&
                fam->applicable(cfgs[n_cfg], p))
                n_cfg++;
        }
        CHECK_MSG(n_cfg >= 2, "%s: only %d configurations to try", fam->name, n_cfg);
        CHECK_MSG(fam->applicable(cfgs[0], p), "%s: default not applicable", fam->name);
        tpl_problem vars[8];
        int n_var = tp_variants(p, vars);
        for (int v = 0; v < n_var; v++) {
            char text[128];
            tpl_problem_format(&vars[v], text, sizeof text);
            if (tpl_problem_equal(&vars[v], p))
                continue;       /* a typed family's own kind (tcgemm's bf16) */
            if (tpl_problem_same_kind(&vars[v], p))
                continue;       /* only the batch count differs: a size, not a kind (tpl.h) */
            if (fam->accepts && tpl_family_accepts(fam, &vars[v]) &&
                vars[v].dtype == p->dtype && vars[v].math == p->math &&
                vars[v].order == p->order) {
                /* another op pair: a family may compute it with the same configuration
                 * (tcgemm packs op T operands); the database keys keep the winners apart
                 * (lk_shape_distance: problem_distance_stays_within_a_kind) */
                checked++;
                continue;
            }
            if (fam->accepts && tpl_family_accepts(fam, &vars[v])) {
                /* a family of several kinds (tcgemm): p's configurations never serve another
                 * kind (a batch count is a size of the same kind: bgemm serves any) */
                for (int c = 0; c < n_cfg && !tpl_problem_same_kind(&vars[v], p); c++)
                    CHECK_MSG(!fam->applicable(cfgs[c], p) || !fam->applicable(cfgs[c], &vars[v]),
                              "%s: a configuration of %s's kind serves %s", fam->name,
                              fam->name, text);
                checked++;
                continue;
            }
            CHECK_MSG(!tpl_family_accepts(fam, &vars[v]), "%s accepts %s", fam->name, text);
            for (int c = 0; c < n_cfg; c++)
                CHECK_MSG(!fam->applicable(cfgs[c], &vars[v]), "%s: a configuration serves %s",
                          fam->name, text);
            /* run() and prepare() refuse before touching the GPU */
            char msg[256] = "";
            at_exec ex;
            ex_init(&ex, NULL, NULL, NULL, 0, msg, sizeof msg);
            tpl_args args;
            memset(&args, 0, sizeof args);
            args.problem = vars[v];
            if (!fam->hidden) {
                CHECK_EQ(fam->run(&ex, cfgs[0], &args), AT_ERR_UNSUPPORTED);
                CHECK_MSG(strstr(msg, text) != NULL, "%s run: message \"%s\"", fam->name, msg);
                tpl_workset ws;
                memset(&ws, 0, sizeof ws);
                msg[0] = '\0';
                CHECK_EQ(fam->prepare(&ex, &vars[v], 1, &ws), AT_ERR_UNSUPPORTED);
                CHECK(ws.n_bufs == 0 && strstr(msg, text) != NULL);
            }
            checked++;
        }
    }
    CHECK_MSG(checked >= 4 * 8, "only %d family/kind pairs checked", checked);
}

/* ---- the argument block ---- */

TEST(args_block_slots)
{
    tpl_args g = tpl_gemm_args(3, 5, 7, 1.5f, 0x1000, 9, 0x2000, 11, -0.25f, 0x3000, 13);
    CHECK(g.problem.n_dims == 3 && g.problem.dims[0] == 3 && g.problem.dims[1] == 5 &&
          g.problem.dims[2] == 7 && tpl_problem_plain(&g.problem));
    CHECK(g.operand[TPL_GEMM_A].ptr == 0x1000 && g.operand[TPL_GEMM_A].ld == 9);
    CHECK(g.operand[TPL_GEMM_B].ptr == 0x2000 && g.operand[TPL_GEMM_B].ld == 11);
    CHECK(g.operand[TPL_GEMM_C].ptr == 0x3000 && g.operand[TPL_GEMM_C].ld == 13);
    CHECK(g.scalar[TPL_GEMM_ALPHA] == 1.5 && g.scalar[TPL_GEMM_BETA] == -0.25);
    CHECK(g.operand[TPL_GEMM_A].batch_stride == 0 && g.operand[3].ptr == 0);
    tpl_args r = tpl_reduce_args(1000003, 0x1000, 0, 0x2000);
    CHECK(r.problem.n_dims == 1 && r.problem.dims[0] == 1000003 && tpl_problem_plain(&r.problem));
    CHECK(r.operand[TPL_RED_X].ptr == 0x1000 && r.operand[TPL_RED_Y].ptr == 0 &&
          r.operand[TPL_RED_RESULT].ptr == 0x2000);
    tpl_args j = tpl_jacobi_args(64, 0x1000, 0x2000, 0x3000, 1e-6f, 77);
    CHECK(j.problem.n_dims == 1 && j.problem.dims[0] == 64);
    CHECK(j.operand[TPL_JAC_A].ptr == 0x1000 && j.operand[TPL_JAC_B].ptr == 0x2000 &&
          j.operand[TPL_JAC_X].ptr == 0x3000);
    CHECK(j.scalar[TPL_JAC_TOL] == (double)1e-6f && j.ints[TPL_JAC_MAX_ITER] == 77);
    CHECK(j.out.iterations == 0 && j.out.residual == 0.0);
    /* a float through the double scalars comes back bit for bit */
    unsigned s = 12345;
    for (int i = 0; i < 10000; i++) {
        s = s * 1664525u + 1013904223u;
        float f;
        memcpy(&f, &s, sizeof f);
        if (f != f)
            continue;
        tpl_args a = tpl_gemm_args(1, 1, 1, f, 0, 1, 0, 1, f, 0, 1);
        float back = (float)a.scalar[TPL_GEMM_ALPHA];
        CHECK(memcmp(&back, &f, sizeof f) == 0);
    }
}

/* run() refuses bad scalars, ints and leading dimensions before touching
 * the GPU (ex has no driver). */
TEST(args_block_checked_by_run)
{
    char msg[256] = "";
    at_exec ex;
    ex_init(&ex, NULL, NULL, NULL, 0, msg, sizeof msg);
    const tpl_family *jac = tpl_find("jacobi"), *mm = tpl_find("matmul");
    CHECK(jac && mm);
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    CHECK_OK(tpl_config_parse(jac, jac->default_config, cfg, why, sizeof why));
    tpl_args a = tpl_jacobi_args(64, 0x1000, 0x2000, 0x3000, 1e-6f, 10);
    a.ints[TPL_JAC_MAX_ITER] = 1LL << 31;
    CHECK_EQ(jac->run(&ex, cfg, &a), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(msg, "max_iter") != NULL, "%s", msg);
    a.ints[TPL_JAC_MAX_ITER] = 0;
    CHECK_EQ(jac->run(&ex, cfg, &a), AT_ERR_INVALID_ARG);
    a.ints[TPL_JAC_MAX_ITER] = 10;
    a.scalar[TPL_JAC_TOL] = -1.0;
    CHECK_EQ(jac->run(&ex, cfg, &a), AT_ERR_INVALID_ARG);
    a.scalar[TPL_JAC_TOL] = 1e-6;
    a.operand[TPL_JAC_B].ptr = 0;
    CHECK_EQ(jac->run(&ex, cfg, &a), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(msg, "NULL") != NULL, "%s", msg);

    CHECK_OK(tpl_config_parse(mm, mm->default_config, cfg, why, sizeof why));
    tpl_args g = tpl_gemm_args(8, 8, 8, 1.0f, 0x1000, 8, 0x2000, 8, 0.0f, 0x3000, 8);
    g.operand[TPL_GEMM_B].ld = 1LL << 31;
    CHECK_EQ(mm->run(&ex, cfg, &g), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(msg, "2^31") != NULL, "%s", msg);
    g.operand[TPL_GEMM_B].ld = 7;
    CHECK_EQ(mm->run(&ex, cfg, &g), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(msg, "too small") != NULL, "%s", msg);
}

/* ---- the fused epilogue in the key ---- */

TEST(problem_epilogue_text_forms)
{
    /* text, bias kind, activation: written out independently of the name table */
    static const struct { const char *text; int bias, act; } forms[] = {
        {"257x381x200:bf16:relu", TPL_BIAS_NONE, 1},
        {"257x381x200:bf16:gelu", TPL_BIAS_NONE, 2},
        {"257x381x200:bf16:gelu_erf", TPL_BIAS_NONE, 3},
        {"257x381x200:bf16:bias_row", TPL_BIAS_ROW, 0},
        {"257x381x200:bf16:bias_col", TPL_BIAS_COL, 0},
        {"4096x4096x4096:bf16:bias_col:gelu", TPL_BIAS_COL, 2},
        {"8x8x8:f16:col:NT:b3:bias_row:gelu_erf", TPL_BIAS_ROW, 3},
        {"8x8x8:tf32:bias_col:relu", TPL_BIAS_COL, 1},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        tpl_problem p;
        char err[256] = "", back[128];
        CHECK_MSG(tpl_problem_parse(forms[i].text, &p, err, sizeof err) == AT_OK, "%s: %s",
                  forms[i].text, err);
        CHECK_EQ(TPL_EPI_BIAS(p.epilogue), forms[i].bias);
        CHECK_EQ(TPL_EPI_ACT(p.epilogue), forms[i].act);
        CHECK(!tpl_problem_plain(&p));
        tpl_problem_format(&p, back, sizeof back);
        CHECK_STR(back, forms[i].text);
    }
    /* other orders and the explicit "none" spellings */
    static const char *const pairs[][2] = {
        {"64x64x64:gelu:bias_col:bf16", "64x64x64:bf16:bias_col:gelu"},
        {"64x64x64:bf16:bias_none:act_none", "64x64x64:bf16"},
        {"64x64x64:relu:bias_none", "64x64x64:relu"},
        {"64x64x64:act_none:bias_row", "64x64x64:bias_row"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        tpl_problem p;
        char err[256] = "", back[128];
        CHECK_MSG(tpl_problem_parse(pairs[i][0], &p, err, sizeof err) == AT_OK, "%s: %s",
                  pairs[i][0], err);
        tpl_problem_format(&p, back, sizeof back);
        CHECK_STR(back, pairs[i][1]);
    }
    static const char *const bad[] = {
        "64:relu:gelu", "64:bias_row:bias_col", "64:gelu:act_none", "64:bias", "64:GELU",
        "64:gelu_tanh", "64:bias_row:relu:relu", "64:swiglu",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tpl_problem p;
        char err[256] = "";
        CHECK_MSG(tpl_problem_parse(bad[i], &p, err, sizeof err) == AT_ERR_INVALID_ARG,
                  "\"%s\" accepted", bad[i]);
        CHECK(err[0] && p.epilogue == 0);
    }
    /* every epilogue of every kind round-trips, and is its own kind */
    int n = 0;
    for (int e = 0; e < TPL_N_EPI; e++)
        for (int t = 0; t < 4; t++)
            for (int o = 0; o < 2; o++) {
                tpl_problem p = TPL_PROBLEM(3, {17, 1, 99}), q;
                p.dtype = (at_dtype)t;
                p.order = (at_order)o;
                p.epilogue = e;
                char text[128], err[256] = "";
                tpl_problem_format(&p, text, sizeof text);
                CHECK_MSG(tpl_problem_parse(text, &q, err, sizeof err) == AT_OK, "%s: %s", text,
                          err);
                CHECK_MSG(tpl_problem_equal(&p, &q), "%s does not round-trip", text);
                tpl_problem plain = p;
                plain.epilogue = 0;
                CHECK_EQ(tpl_problem_same_kind(&p, &plain), e == 0);
                CHECK_EQ(tpl_problem_equal(&p, &plain), e == 0);
                n++;
            }
    CHECK_EQ(n, 12 * 4 * 2);
}

TEST(problem_epilogue_names_are_fixed)
{
    /* the database stores these names: they must never change */
    static const char *const names[TPL_N_EPI] = {
        "", "relu", "gelu", "gelu_erf", "bias_row", "bias_row:relu", "bias_row:gelu",
        "bias_row:gelu_erf", "bias_col", "bias_col:relu", "bias_col:gelu", "bias_col:gelu_erf",
    };
    for (int e = 0; e < TPL_N_EPI; e++) {
        CHECK_STR(tpl_epilogue_name(e), names[e]);
        CHECK_EQ(tpl_epilogue_of(names[e]), e);
    }
    CHECK_EQ(TPL_EPI(TPL_BIAS_COL, AT_ACT_GELU_TANH), 10);
    CHECK_EQ(TPL_EPI(AT_BIAS_ROW, AT_ACT_RELU), 5);
    CHECK(tpl_epilogue_name(TPL_N_EPI) == NULL && tpl_epilogue_name(-1) == NULL);
    CHECK_EQ(tpl_epilogue_of("bias_col:swiglu"), TPL_KIND_UNKNOWN);
    CHECK_EQ(tpl_epilogue_of(NULL), TPL_KIND_UNKNOWN);
    tpl_problem p = TPL_PROBLEM(3, {5, 5, 5});
    p.epilogue = TPL_KIND_UNKNOWN;
    char text[64];
    tpl_problem_format(&p, text, sizeof text);
    CHECK_STR(text, "5x5x5:?");
}
