/* test_fp8_block.c: the block-scaled FP8 GEMM (issue 36: 1 x 128 scales of A, 128 x 128 of B):
 * its problem kinds (names, text forms, database key), at_gemm_fp8_blockscaled's argument checks,
 * the tensor-core family's SCALE 1, 2 and 3 kernels (one or two promotion buffers, N-quarters with
 * A in registers: rules, kinds, defaults, tolerance, NVRTC compiles); on an sm_90 GPU every
 * block-scaled kernel through the tuner's verification and the call against a float64 host product
 * of the same bytes and scales. */
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
#include "th_half.h"
#include "th_migrate.h"
#include "th_sql.h"
#include "tpl.h"

static const struct { at_math math, tensor; const char *name; at_dtype a, b; } tb_pairs[3] = {
    {TPL_MATH_E4M3_B128, TPL_MATH_E4M3, "e4m3xe4m3_b128", AT_R_8F_E4M3, AT_R_8F_E4M3},
    {TPL_MATH_E4M3_E5M2_B128, TPL_MATH_E4M3_E5M2, "e4m3xe5m2_b128", AT_R_8F_E4M3, AT_R_8F_E5M2},
    {TPL_MATH_E5M2_E4M3_B128, TPL_MATH_E5M2_E4M3, "e5m2xe4m3_b128", AT_R_8F_E5M2, AT_R_8F_E4M3},
};
static const at_dtype tb_ctypes[3] = {AT_R_16BF, AT_R_16F, AT_R_32F};  /* by TYPE */

static tpl_problem tb_problem(long long m, long long n, long long k, at_dtype c, at_math math)
{
    tpl_problem p = TPL_PROBLEM(3, {m, n, k});
    p.dtype = c;
    p.math = math;
    return p;
}

static at_device_info tb_h100(void)
{
    at_device_info d;
    memset(&d, 0, sizeof d);
    d.cc_major = 9;
    d.sm_count = 132;
    d.smem_per_block_optin = 227 * 1024;
    d.max_threads_per_block = 1024;
    d.regs_per_block = 65536;
    snprintf(d.arch, sizeof d.arch, "sm_90");
    return d;
}

/* ---------------- CPU tier: the kind ---------------- */

/* Each block-scaled pair has its name, its pair's operand types, a math of its own (never the
 * per-tensor pair's), a swap that keeps the scaling; its text form round-trips, and a
 * column-major or batched block-scaled problem is refused with the reason. */
TEST(fp8_block_kind_names_and_text_forms)
{
    for (int i = 0; i < 3; i++) {
        at_math m = tb_pairs[i].math;
        CHECK_STR(tpl_math_name(m), tb_pairs[i].name);
        CHECK_EQ(tpl_math_of(tb_pairs[i].name), (int)m);
        CHECK_EQ(tpl_math_fp8(m), i + 1);
        CHECK_EQ(tpl_math_fp8(tb_pairs[i].tensor), i + 1);
        CHECK(tpl_math_fp8_block(m) && !tpl_math_fp8_block(tb_pairs[i].tensor));
        CHECK(m != tb_pairs[i].tensor);
        CHECK(tpl_math_fp8_a(m) == tb_pairs[i].a && tpl_math_fp8_b(m) == tb_pairs[i].b);
        CHECK(tpl_math_fp8_scaled(i + 1, 1) == m && tpl_math_fp8_scaled(i + 1, 0) ==
                                                    tb_pairs[i].tensor);
        CHECK(tpl_math_fp8_block(tpl_math_fp8_swap(m)));
        CHECK(tpl_math_fp8_swap(tpl_math_fp8_swap(m)) == m);
    }
    CHECK(tpl_math_fp8_swap(TPL_MATH_E4M3_E5M2_B128) == TPL_MATH_E5M2_E4M3_B128);
    CHECK(!tpl_math_fp8_block(AT_MATH_DEFAULT) && !tpl_math_fp8_block(AT_MATH_TF32));
    CHECK(tpl_math_fp8_scaled(0, 1) == AT_MATH_DEFAULT && tpl_math_fp8_scaled(4, 0) ==
                                                          AT_MATH_DEFAULT);
    static const char *const texts[] = {
        "4096x4096x4096:bf16:e4m3xe4m3_b128:NT", "257x381x200:f16:e4m3xe5m2_b128:TN",
        "7x13x5:e5m2xe4m3_b128",
    };
    char err[256], back[128];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        tpl_problem p;
        CHECK_MSG(tpl_problem_parse(texts[i], &p, err, sizeof err) == AT_OK, "%s: %s", texts[i],
                  err);
        CHECK(tpl_math_fp8_block(p.math));
        tpl_problem_format(&p, back, sizeof back);
        CHECK_STR(back, texts[i]);
    }
    static const struct { const char *text, *says; } bad[] = {
        {"64x64x64:bf16:e4m3xe4m3_b128:col", "row-major problem of one product"},
        {"64x64x64:bf16:e4m3xe4m3_b128:b4", "row-major problem of one product"},
        {"64x64x64:f64:e4m3xe4m3_b128", "outputs bf16, f16 or f32"},
        {"64x64x64:bf16:e4m3xe4m3_b64", "unknown suffix"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tpl_problem p;
        err[0] = '\0';
        CHECK(tpl_problem_parse(bad[i].text, &p, err, sizeof err) != AT_OK);
        CHECK_MSG(strstr(err, bad[i].says), "%s: %s", bad[i].text, err);
    }
}

/* The database keeps block-scaled and per-tensor rows apart: the math column holds the
 * block-scaled name, and a lookup of either kind never takes the other's (faster) row. */
TEST(fp8_block_database_key_and_lookups)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/fp8_block.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    at_device_info dev = tm_device("GPU-fp8-block");
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:bf16:e4m3xe4m3:NT", "A=1", 5.0));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:bf16:e4m3xe4m3_b128:NT", "A=2", 1.0));
    CHECK_OK(tm_store(d, dev.uuid, "2048x2048x2048:bf16:e4m3xe4m3:NT", "A=3", 0.5));
    static const struct { const char *size; at_lookup_level level; const char *config; } cases[] = {
        {"1024x1024x1024:bf16:e4m3xe4m3:NT", AT_LOOKUP_EXACT, "A=1"},
        {"1024x1024x1024:bf16:e4m3xe4m3_b128:NT", AT_LOOKUP_EXACT, "A=2"},
        {"2048x2048x2048:bf16:e4m3xe4m3_b128:NT", AT_LOOKUP_NEAREST, "A=2"},  /* never A=3 */
        {"1100x1100x1100:bf16:e4m3xe4m3:NT", AT_LOOKUP_NEAREST, "A=1"},      /* never A=2 */
        {"1024x1024x1024:bf16:e4m3xe5m2_b128:NT", AT_LOOKUP_DEFAULT, "A=9"},
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
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE math = 'e4m3xe4m3_b128'"), 1);
}

/* ---------------- CPU tier: the call ---------------- */

/* ag_check_fp8_block: at_gemm_fp8's checks first (types, alignment), then row-major only
 * (AT_ERR_UNSUPPORTED), scale_a and scale_b required unless the product is empty; scale_d may be
 * NULL; the math is the pair's block-scaled one. */
TEST(fp8_block_argument_checks)
{
    char err[256];
    at_math math;
    const float *ok = (const float *)(uintptr_t)256, *odd = (const float *)(uintptr_t)258;
    static const char fn[] = "at_gemm_fp8_blockscaled";
    static const struct {
        at_order order; int m, n, k; at_dtype a, b, c; int sa, sb, sd; at_status want;
        const char *says;
    } cases[] = {
        /* sa/sb/sd: 0 NULL, 1 aligned, 2 misaligned */
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 1, 1, 0, AT_OK, NULL},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E5M2, AT_R_32F, 1, 1, 1, AT_OK, NULL},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E5M2, AT_R_8F_E4M3, AT_R_16F, 1, 1, 0, AT_OK, NULL},
        {AT_ROW_MAJOR, 64, 64, 0, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 0, 0, 0, AT_OK, NULL},
        {AT_ROW_MAJOR, 0, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 0, 0, 0, AT_OK, NULL},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 0, 1, 0,
         AT_ERR_INVALID_ARG, "scale_a is NULL"},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 1, 0, 0,
         AT_ERR_INVALID_ARG, "scale_b is NULL"},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 2, 1, 0,
         AT_ERR_INVALID_ARG, "scale_a is not 4-byte aligned"},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 1, 1, 2,
         AT_ERR_INVALID_ARG, "scale_d is not 4-byte aligned"},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E5M2, AT_R_8F_E5M2, AT_R_16BF, 1, 1, 0,
         AT_ERR_INVALID_ARG, "both AT_R_8F_E5M2"},
        {AT_ROW_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_64F, 1, 1, 0,
         AT_ERR_INVALID_ARG, "stored as"},
        {AT_COL_MAJOR, 64, 64, 64, AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 1, 1, 0,
         AT_ERR_UNSUPPORTED, "row-major only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const float *pick[3] = {NULL, ok, odd};
        err[0] = '\0';
        at_status s = ag_check_fp8_block(fn, cases[i].order, cases[i].m, cases[i].n, cases[i].k,
                                         cases[i].a, cases[i].b, cases[i].c, pick[cases[i].sa],
                                         pick[cases[i].sb], pick[cases[i].sd], &math, err,
                                         sizeof err);
        CHECK_MSG(s == cases[i].want, "case %zu: %s (%s)", i, at_status_string(s), err);
        if (cases[i].says) {
            CHECK_MSG(strstr(err, cases[i].says) && strstr(err, fn), "case %zu: %s", i, err);
        } else {
            CHECK(tpl_math_fp8_block(math));
            CHECK(tpl_math_fp8_scaled(tpl_math_fp8(math), 0) ==
                  (at_math)tpl_math_of_fp8(cases[i].a, cases[i].b));
        }
    }
    CHECK(at_gemm_fp8_blockscaled(NULL, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 8, 8, 16, AT_R_8F_E4M3,
                                  AT_R_8F_E4M3, AT_R_16BF, 1.0, ok, 16, ok, ok, 16, ok, 0.0,
                                  (void *)ok, 8, NULL) == AT_ERR_INVALID_ARG);
}

/* ---------------- CPU tier: the kernels ---------------- */

/* Every valid SCALE 1 or 2 kernel is a PATH 90 FP8 kernel with BK 128, BN 64 or 128 and one m64
 * wgmma per warpgroup; it serves exactly its pair, C type and block scaling (in every op pair),
 * never the per-tensor kind, and no SCALE 0 kernel serves a block-scaled problem. SCALE 2 (two
 * promotion buffers) is valid exactly where SCALE 1 is: the same lattice rows. SCALE 3 (the BN 256
 * tile with A in registers, in four N-quarters) is valid exactly where SCALE 1 is at BN 256. SCALE
 * 2 on the 128 x 256 tile, SCALE 3 below BN 256, any SCALE without FP8, and SCALE 4 are refused
 * with the reason. */
TEST(fp8_block_kernels_rules_and_kinds)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h100 = tb_h100();
    CHECK(f->params[P_SCALE].omit_first && f->params[P_SCALE].n_values == 4);
    long long *idx = NULL, n = tpl_valid_configs(f, NULL, &idx);
    CHECK(n > 0 && idx);
    int per[3][4][3] = {{{0}}}, wide[4][4][3] = {{{0}}}, tensor_checked = 0;
    for (long long i = 0; i < n && !th_failed(); i++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[i], c);
        if (c[P_FP8] && !c[P_SCALE] && tensor_checked < 200) {
            /* a per-tensor FP8 kernel never serves a block-scaled problem */
            tpl_problem q = tb_problem(4096, 4096, 4096, tb_ctypes[c[P_TYPE]],
                                       tpl_math_fp8_scaled(c[P_FP8], 1));
            q.op_b = AT_OP_T;
            CHECK(!f->applicable(c, &q));
            tensor_checked++;
        }
        if (!c[P_SCALE])
            continue;
        /* BN 256 (two N-halves through one promotion buffer) is SCALE 1's and 3's alone */
        CHECK(c[P_SCALE] >= 1 && c[P_SCALE] <= 3);
        if (c[P_BN] == 256)
            wide[c[P_SCALE]][c[P_FP8]][c[P_TYPE]]++;
        else if (c[P_SCALE] < 3)
            per[c[P_SCALE]][c[P_FP8]][c[P_TYPE]]++;
        /* the twin with the other number of promotion buffers (BN 64, 128) or the other A source
         * (BN 256: SCALE 1 and 3) is valid too; SCALE 2 is not at BN 256 nor SCALE 3 below it */
        int twin[TPL_MAX_PARAMS];
        memcpy(twin, c, sizeof twin);
        twin[P_SCALE] = c[P_BN] == 256 ? 4 - c[P_SCALE] : 3 - c[P_SCALE];
        CHECK_MSG(f->valid(twin, &h100, NULL, 0), "SCALE=%d FP8=%d BN=%d SPLITK=%d", c[P_SCALE],
                  c[P_FP8], c[P_BN], c[P_SPLITK]);
        twin[P_SCALE] = c[P_BN] == 256 ? 2 : 3;
        CHECK_MSG(!f->valid(twin, &h100, NULL, 0), "SCALE=%d FP8=%d BN=%d SPLITK=%d", twin[P_SCALE],
                  c[P_FP8], c[P_BN], c[P_SPLITK]);
        CHECK(c[P_FP8] >= 1 && c[P_PATH] == 90 && c[P_BK] == 128 && c[P_OPB] == 1 &&
              c[P_OPA] == 0 && c[P_EPI] == 0);
        CHECK((c[P_BN] == 128 || c[P_BN] == 64 || (c[P_BN] == 256 && c[P_SCALE] != 2)) &&
              c[P_BM] / c[P_WG] == 64);
        CHECK(f->valid(c, &h100, NULL, 0));
        for (int pr = 0; pr < 3; pr++)
            for (int t = 0; t < 3; t++)
                for (int ops = 0; ops < 4; ops++)
                    for (int blk = 0; blk < 2; blk++) {
                        tpl_problem q = tb_problem(4096, 4096, 4096, tb_ctypes[t],
                                                   tpl_math_fp8_scaled(pr + 1, blk));
                        q.op_a = (at_op)(ops & 1);
                        q.op_b = (at_op)(ops >> 1);
                        int want = blk && pr + 1 == c[P_FP8] && t == c[P_TYPE] &&
                                   c[P_SPLITK] == 1;
                        CHECK_MSG(f->applicable(c, &q) == want, "FP8=%d TYPE=%d %s C %d ops %d",
                                  c[P_FP8], c[P_TYPE], tpl_math_name(q.math), t, ops);
                    }
    }
    free(idx);
    for (int sc = 1; sc < 3; sc++)
        for (int fv = 1; fv < 4; fv++)
            for (int t = 0; t < 3; t++)
                CHECK_MSG(per[sc][fv][t] >= (t == 2 ? 4 : 8) && per[sc][fv][t] <= 40 &&
                          per[sc][fv][t] == per[1][fv][t], "SCALE=%d FP8=%d TYPE=%d: %d", sc, fv,
                          t, per[sc][fv][t]);
    printf("    block-scaled kernels per pair and SCALE (BF16, FP16, FP32 C): %d %d %d\n",
           per[1][1][0], per[1][1][1], per[1][1][2]);
    /* BN 256 SCALE 1 kernels of every pair and C type: VEC 8 (16-bit C) and VEC 2 rows, tile
     * orders; as many SCALE 3 ones */
    for (int fv = 1; fv < 4; fv++)
        for (int t = 0; t < 3; t++)
            CHECK_MSG(wide[1][fv][t] >= 4 && wide[1][fv][t] <= 20 &&
                          wide[3][fv][t] == wide[1][fv][t] && wide[2][fv][t] == 0,
                      "BN 256 FP8=%d TYPE=%d: %d SCALE 1, %d SCALE 3", fv, t, wide[1][fv][t],
                      wide[3][fv][t]);
    printf("    BN 256 block-scaled kernels per pair and SCALE 1 or 3 (BF16, FP16, FP32 C): %d %d "
           "%d\n", wide[1][1][0], wide[1][1][1], wide[1][1][2]);
    CHECK(tensor_checked > 0);
    /* the refusals */
    int c[TPL_MAX_PARAMS];
    char why[256];
    CHECK(th_parse_config(f, "TYPE=0,PATH=90,BM=128,BN=256,BK=128,STAGES=3,WG=2,CM=1,CN=1,"
                             "WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,OPB=1,"
                             "FP8=1,SCALE=1", c, __FILE__, __LINE__));
    /* BN 256: SCALE 1 in two N-halves (128 + 64 registers), SCALE 3 in N-quarters through two
     * buffers of 32 with A's fragments (128 + 64 + 16), SCALE 2 would need 128 + 2 x 64 */
    CHECK_MSG(f->valid(c, &h100, why, sizeof why), "%s", why);
    c[P_SCALE] = 3;
    CHECK_MSG(f->valid(c, &h100, why, sizeof why), "%s", why);
    c[P_SCALE] = 4;
    CHECK(!f->valid(c, NULL, why, sizeof why) && strstr(why, "SCALE is 0"));
    c[P_SCALE] = 2;
    CHECK(!f->valid(c, NULL, why, sizeof why) && strstr(why, "SCALE is 0"));
    c[P_SCALE] = 1;
    c[P_BM] = 256;                      /* two m64 wgmmas per warpgroup: 2 x (128 + 64) */
    CHECK(!f->valid(c, NULL, why, sizeof why) && strstr(why, "SCALE is 0"));
    c[P_BM] = 128;
    c[P_BN] = 192;                      /* no halves of one scale block each */
    CHECK(!f->valid(c, NULL, why, sizeof why) && strstr(why, "SCALE is 0"));
    c[P_BN] = 256;
    c[P_SCALE] = 2;
    c[P_BN] = 128;
    c[P_STAGES] = 4;
    CHECK_MSG(f->valid(c, NULL, why, sizeof why), "%s", why);
    c[P_SCALE] = 1;
    CHECK_MSG(f->valid(c, NULL, why, sizeof why), "%s", why);
    c[P_SCALE] = 3;                     /* A in registers, N-quarters: the 128 x 256 tile only */
    CHECK(!f->valid(c, NULL, why, sizeof why) && strstr(why, "SCALE is 0"));
    for (int sc = 1; sc < 4; sc++) {
        c[P_SCALE] = sc;
        c[P_FP8] = 0;
        c[P_OPB] = 0;
        CHECK(!f->valid(c, NULL, why, sizeof why) && strstr(why, "SCALE is 0"));
        c[P_FP8] = 1;
        c[P_OPB] = 1;
    }
    /* the block-scaled problems are one product, row-major */
    tpl_problem q = tb_problem(512, 512, 512, AT_R_16BF, TPL_MATH_E4M3_B128);
    CHECK(tpl_family_accepts(f, &q));
    q.batch = 2;
    CHECK(!tpl_family_accepts(f, &q));
}

/* The built-in choice of every block-scaled kind on sm_90 is a SCALE 1 kernel of the pair, valid
 * and applicable at every shape class; the tolerance is the plain rule of C's type plus
 * (4 sqrt(k) + 8) 2^-13, below the per-tensor FP8 rule from k = 256 on. */
TEST(fp8_block_defaults_and_tolerance)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h100 = tb_h100();
    static const long long shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {257, 381, 200}, {1024, 1024, 8192}, {512, 512, 16384},
        {4097, 4097, 4097}, {8192, 8192, 8192},
    };
    for (int pr = 0; pr < 3; pr++)
        for (int t = 0; t < 3; t++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                for (int ops = 0; ops < 4; ops++) {
                    tpl_problem p = tb_problem(shapes[s][0], shapes[s][1], shapes[s][2],
                                               tb_ctypes[t], tb_pairs[pr].math);
                    p.op_a = (at_op)(ops & 1);
                    p.op_b = (at_op)(ops >> 1);
                    int cfg[TPL_MAX_PARAMS];
                    char config[TPL_CONFIG_LEN] = "";
                    CHECK_EQ(lk_choose(NULL, &h100, f, &p, 1, cfg, config), AT_LOOKUP_DEFAULT);
                    CHECK_MSG(cfg[P_FP8] == pr + 1 && cfg[P_SCALE] == 1 && cfg[P_TYPE] == t &&
                              f->valid(cfg, &h100, NULL, 0) && f->applicable(cfg, &p),
                              "%s C %d shape %zu: %s", tb_pairs[pr].name, t, s, config);
                }
    static const long long ks[] = {1, 128, 200, 1000, 4096, 16384};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            double k = (double)ks[i], u = t == 0 ? 1.0 / 256 : t == 1 ? 1.0 / 2048 : 0x1p-24;
            tpl_problem p = tb_problem(64, 64, ks[i], tb_ctypes[t], TPL_MATH_E4M3_B128);
            tpl_problem pt = tb_problem(64, 64, ks[i], tb_ctypes[t], TPL_MATH_E4M3);
            double want = 2 * u + (4 * sqrt(k) + k / 8) * 0x1p-24 + (4 * sqrt(k) + 8) * 0x1p-13;
            CHECK_MSG(fabs(f->tolerance(&p) - want) <= 1e-12 * want, "C %d k %lld: %g, rule %g",
                      t, ks[i], f->tolerance(&p), want);
            CHECK(ks[i] < 256 || f->tolerance(&p) < f->tolerance(&pt));
            /* a dropped K-block (one of 32 at k = 4096: about 18% of the norm) is rejected */
            CHECK(ks[i] > 4096 || f->tolerance(&p) < 0.09);
        }
    /* fit_kind keeps a block-scaled row's number of promotion buffers (SCALE 1 or 2; 1 for a
     * per-tensor row) and gives a per-tensor problem SCALE 0 */
    static const struct { int row, block, want; } fits[] = {
        {2, 1, 2}, {1, 1, 1}, {0, 1, 1}, {2, 0, 0}, {1, 0, 0},
    };
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        int cfg[TPL_MAX_PARAMS];
        CHECK(th_parse_config(f, "TYPE=0,PATH=90,BM=128,BN=128,BK=128,STAGES=4,WG=2,CM=1,CN=1,"
                                 "WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,"
                                 "OPB=1,FP8=1", cfg, __FILE__, __LINE__));
        cfg[P_SCALE] = fits[i].row;
        tpl_problem p = tb_problem(4096, 4096, 4096, AT_R_16BF,
                                   tpl_math_fp8_scaled(1, fits[i].block));
        p.op_b = AT_OP_T;
        f->fit_kind(cfg, &p);
        CHECK_MSG(cfg[P_SCALE] == fits[i].want && f->valid(cfg, &h100, NULL, 0) &&
                  f->applicable(cfg, &p), "row SCALE %d, block %d: SCALE %d", fits[i].row,
                  fits[i].block, cfg[P_SCALE]);
    }
    /* and a SCALE 3 row (BN 256, A in registers, N-quarters) its SCALE 3 */
    for (int block = 0; block < 2; block++) {
        int cfg[TPL_MAX_PARAMS];
        CHECK(th_parse_config(f, "TYPE=0,PATH=90,BM=128,BN=256,BK=128,STAGES=3,WG=2,CM=1,CN=1,"
                                 "WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,"
                                 "OPB=1,FP8=1,SCALE=3", cfg, __FILE__, __LINE__));
        tpl_problem p = tb_problem(4096, 4096, 4096, AT_R_16BF, tpl_math_fp8_scaled(1, block));
        p.op_b = AT_OP_T;
        f->fit_kind(cfg, &p);
        CHECK_MSG(cfg[P_SCALE] == (block ? 3 : 0) && f->valid(cfg, &h100, NULL, 0) &&
                  f->applicable(cfg, &p), "row SCALE 3, block %d: SCALE %d", block, cfg[P_SCALE]);
    }
}

#define TB_P90(type, tile, rest) "TYPE=" #type ",PATH=90," tile ",WG=2,WARPS_M=2,WARPS_N=2," \
    rest ",LOADW=16,OPB=1"

/* bench/shapes/fp8_block.txt (bench/run.sh fp8-block): every line a tcgemm problem in the
 * benchmark's row-major NT form, each block-scaled shape beside its per-tensor twin, the
 * targets 4096^3 and 8192^3 among them, each served by a built-in row of its own kind. */
TEST(fp8_block_benchmark_shapes_file)
{
    FILE *fp = fopen("bench/shapes/fp8_block.txt", "r");
    CHECK(fp != NULL);
    if (!fp)
        return;
    at_device_info h100 = tb_h100();
    char line[256], err[256];
    long long dims[32][3];
    int scaled[32], n = 0;
    while (fgets(line, sizeof line, fp) && n < 32) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        CHECK_MSG(strncmp(line, "tcgemm ", 7) == 0, "%s", line);
        tpl_problem p;
        CHECK_MSG(tpl_problem_parse(line + 7, &p, err, sizeof err) == AT_OK, "%s: %s", line, err);
        CHECK(p.dtype == AT_R_16BF && p.op_a == AT_OP_N && p.op_b == AT_OP_T &&
              p.order == AT_ROW_MAJOR);
        CHECK_MSG(p.math == TPL_MATH_E4M3 || p.math == TPL_MATH_E4M3_B128, "%s", line);
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        CHECK_EQ(lk_choose(NULL, &h100, &tpl_tcgemm, &p, 1, cfg, config), AT_LOOKUP_DEFAULT);
        scaled[n] = p.math == TPL_MATH_E4M3_B128;
        CHECK(cfg[P_FP8] == 1 && cfg[P_SCALE] == scaled[n] && tpl_tcgemm.applicable(cfg, &p));
        memcpy(dims[n], p.dims, sizeof dims[n]);
        n++;
    }
    fclose(fp);
    int twins = 0, targets = 0;
    for (int i = 0; i < n; i++) {
        if (!scaled[i])
            continue;
        for (int j = 0; j < n; j++)
            twins += !scaled[j] && memcmp(dims[i], dims[j], sizeof dims[i]) == 0;
        targets += dims[i][0] == dims[i][1] && dims[i][1] == dims[i][2] &&
                   (dims[i][0] == 4096 || dims[i][0] == 8192);
    }
    CHECK(n >= 4 && twins * 2 == n && targets == 2);
}

/* NVRTC compiles SCALE 1, 2 and 3 with every pair, C type and store path (sm_90a): TMA stores of a
 * 16-bit C, BN 64, BN 256 (SCALE 1's N-halves, SCALE 3's N-quarters), direct paired stores (FP32
 * C), split-K's reduce, a cluster; and ptxas keeps the wgmmas asynchronous: its log has no C7514
 * ("wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator
 * registers ..."), which SCALE 2's promotion of one buffer while the other's wgmmas run draws as
 * soon as a group stays in flight across a loop's back edge, and no C7517 ("warpgroup.wait is
 * injected ... to allow use of registers defined by GMMA"), which SCALE 3 draws where it promotes
 * the previous K-block's last quarter with the next block's first quarter in flight (a wait for
 * every group ptxas inserts there: tcgemm.cu). */
TEST(fp8_block_nvrtc_compiles_every_value)
{
    const tpl_family *f = &tpl_tcgemm;
    static const char *const configs[] = {
        TB_P90(0, "BM=128,BN=128,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=1,SCALE=1",
        TB_P90(1, "BM=128,BN=64,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=1,GROUP=16,SPLITK=1,VEC=8") ",FP8=2,SCALE=1",
        TB_P90(2, "BM=128,BN=128,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=4,VEC=2") ",FP8=3,SCALE=1",
        TB_P90(1, "BM=128,BN=128,BK=128,STAGES=4,CM=2,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=2") ",FP8=1,SCALE=1",
        TB_P90(0, "BM=128,BN=128,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=1,SCALE=2",
        TB_P90(1, "BM=128,BN=64,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=1,GROUP=16,SPLITK=1,VEC=8") ",FP8=2,SCALE=2",
        TB_P90(2, "BM=128,BN=128,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=4,VEC=2") ",FP8=3,SCALE=2",
        TB_P90(1, "BM=128,BN=128,BK=128,STAGES=4,CM=2,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=2") ",FP8=1,SCALE=2",
        /* BN 256: two N-halves through one promotion buffer, TMA stores and direct FP32 ones */
        TB_P90(0, "BM=128,BN=256,BK=128,STAGES=3,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=2,SCALE=1",
        TB_P90(2, "BM=128,BN=256,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=1,GROUP=16,SPLITK=1,VEC=2") ",FP8=3,SCALE=1",
        /* SCALE 3: A's fragments in registers (ldmatrix, register-A wgmmas), four N-quarters */
        TB_P90(0, "BM=128,BN=256,BK=128,STAGES=3,CM=1,CN=1",
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8") ",FP8=1,SCALE=3",
        TB_P90(2, "BM=128,BN=256,BK=128,STAGES=4,CM=1,CN=1",
               "RASTER=1,GROUP=16,SPLITK=1,VEC=2") ",FP8=2,SCALE=3",
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0] && !th_failed(); i++) {
        int c[TPL_MAX_PARAMS];
        char why[256];
        CHECK(th_parse_config(f, configs[i], c, __FILE__, __LINE__));
        CHECK_MSG(f->valid(c, NULL, why, sizeof why), "%s: %s", configs[i], why);
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status s = tpl_compile(f, c, "sm_90", &cubin, &size, &log);
        CHECK_MSG(s == AT_OK && cubin && size > 0, "%s: %s %s", configs[i], at_status_string(s),
                  log ? log : "");
        CHECK_MSG(!log || (!strstr(log, "C7514") && !strstr(log, "are serialized") &&
                           !strstr(log, "C7517") && !strstr(log, "is injected")),
                  "%s: %s", configs[i], log);
        free(cubin);
        free(log);
    }
}

/* ---------------- GPU tier ---------------- */

/* Every block-scaled kind (3 pairs x 3 C types) and every valid SCALE 1 kernel (RASTER 0, GROUP
 * 8) through the tuner's own verification (tcgemm's prepare: scales uniform in [0.5, 2), the
 * float64 reference applying them per K-block) at odd shapes in every op pair: partial K-blocks
 * (k 200, 136, 33, 5, 1027), partial column blocks of B (n 381, 65, 13, 1023), split-K. */
GPU_TEST(fp8_block_gpu_every_kind_through_verification)
{
    static const th_fp8_shape shapes[] = {
        {257, 381, 200, 2}, {263, 384, 136, 0}, {129, 65, 33, 1}, {7, 13, 5, 3},
        {257, 381, 1100, 2}, {1025, 1023, 1027, 2}, {300, 260, 4096, 2},
    };
    const at_math maths[3] = {tb_pairs[0].math, tb_pairs[1].math, tb_pairs[2].math};
    const char *const names[3] = {tb_pairs[0].name, tb_pairs[1].name, tb_pairs[2].name};
    th_fp8_kinds_through_verification(maths, names, 1, shapes,
                                      (int)(sizeof shapes / sizeof shapes[0]), 3, 41);
}

/* The same for every SCALE 2 kernel (two promotion buffers, K-blocks in chunks of at most 4, the
 * second warpgroup's first chunk of 2): tiles of 1, 2, 3, 5, 7, 9 and 32 K-blocks (each chunk
 * length and remainder in both warpgroups), split-K slices of 2 to 5 (k 1100). */
GPU_TEST(fp8_block_gpu_two_buffers_through_verification)
{
    static const th_fp8_shape shapes[] = {
        {257, 381, 200, 2}, {263, 384, 300, 0}, {129, 65, 33, 1}, {7, 13, 5, 3},
        {257, 381, 1100, 2}, {1025, 1023, 600, 2}, {300, 260, 800, 1}, {300, 260, 4096, 2},
    };
    const at_math maths[3] = {tb_pairs[0].math, tb_pairs[1].math, tb_pairs[2].math};
    const char *const names[3] = {tb_pairs[0].name, tb_pairs[1].name, tb_pairs[2].name};
    th_fp8_kinds_through_verification(maths, names, 2, shapes,
                                      (int)(sizeof shapes / sizeof shapes[0]), 3, 43);
}

/* The same for every SCALE 3 kernel (the 128 x 256 tile with the K-block's A fragments read into
 * registers by ldmatrix, four N-quarters through two buffers, each K-block's last quarter promoted
 * during the next step): partial K-blocks, 1 to 32 K-blocks, partial and absent N-quarters, every op
 * pair, and more tiles than an H200's 132 SMs (2049 x 2100: 153, 1100 x 4700: 171) so that CTAs
 * run a second tile, whose first step must promote nothing from the first tile's last block. */
GPU_TEST(fp8_block_gpu_a_in_registers_through_verification)
{
    static const th_fp8_shape shapes[] = {
        {257, 381, 200, 2}, {263, 384, 136, 0}, {129, 65, 33, 1}, {7, 13, 5, 3},
        {257, 381, 1100, 2}, {1025, 1023, 1027, 2}, {300, 260, 4096, 2}, {2049, 2100, 300, 2},
        {1100, 4700, 130, 0},
    };
    const at_math maths[3] = {tb_pairs[0].math, tb_pairs[1].math, tb_pairs[2].math};
    const char *const names[3] = {tb_pairs[0].name, tb_pairs[1].name, tb_pairs[2].name};
    th_fp8_kinds_through_verification(maths, names, 3, shapes,
                                      (int)(sizeof shapes / sizeof shapes[0]), 1, 47);
}

/* An FP8 byte as a double from the formats' definitions (OCP FP8), independent of reference.cu. */
static double tb_fp8(unsigned char b, int e4m3)
{
    int s = b >> 7, e = e4m3 ? (b >> 3) & 15 : (b >> 2) & 31, f = e4m3 ? b & 7 : b & 3;
    double v;
    if (e4m3)
        v = e ? (1 + f / 8.0) * pow(2, e - 7) : f / 8.0 * pow(2, -6);
    else
        v = e ? (1 + f / 4.0) * pow(2, e - 15) : f / 4.0 * pow(2, -14);
    return s ? -v : v;
}

/* Random FP8 bytes of magnitude at most 4 (no NaN, no infinity), seeded. */
static void tb_random_fp8(unsigned char *v, size_t count, int e4m3, unsigned seed)
{
    for (size_t i = 0; i < count;) {
        seed = seed * 1664525u + 1013904223u;
        unsigned char b = (unsigned char)(seed >> 24);
        int e = e4m3 ? (b >> 3) & 15 : (b >> 2) & 31;
        if ((e4m3 && e == 15 && (b & 7) == 7) || (!e4m3 && e == 31))
            continue;
        if (fabs(tb_fp8(b, e4m3)) <= 4.0)
            v[i++] = b;
    }
}

static double tb_get_c(at_dtype t, const void *v, size_t i)
{
    if (t == AT_R_16BF)
        return th_from_bf16(((const uint16_t *)v)[i]);
    if (t == AT_R_16F)
        return th_from_f16(((const uint16_t *)v)[i]);
    return ((const float *)v)[i];
}

/* at_gemm_fp8_blockscaled against the float64 host product of the same bytes and scales, every
 * pair and C type, row-major NT (in place), NN, TN, TT (packed) and an lda that is no multiple of
 * 16 bytes; k = 300 (two full K-blocks and a partial one), n = 200 (a partial column block of
 * B); scales in [0.25, 4) per row / block; beta 0 over NaN and 0.5; scale_d 0.5 and NULL; the
 * kernel that ran is a SCALE 1 kernel of the pair. Plus the refusals on the device. */
GPU_TEST(fp8_block_gpu_api_against_host_reference)
{
    const cudrv *cu;
    at_status ds;
    CUdevice cd;
    CUcontext ctx;
    cu = cudrv_get(&ds, NULL, 0);
    CHECK(cu && cu->Init(0) == CUDA_SUCCESS && cu->DeviceGet(&cd, th_device()) == CUDA_SUCCESS &&
          cu->DevicePrimaryCtxRetain(&ctx, cd) == CUDA_SUCCESS &&
          cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    char path[4300];
    snprintf(path, sizeof path, "%s/fp8_block_api.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    int cc_major = 0, cc_minor = 0;
    cu->DeviceGetAttribute(&cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cd);
    cu->DeviceGetAttribute(&cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cd);
    CUcontext popped;
    if (cc_major != 9 || cc_minor != 0) {
        CHECK_EQ(at_gemm_fp8_blockscaled(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 8, 8, 16,
                                         AT_R_8F_E4M3, AT_R_8F_E4M3, AT_R_16BF, 1,
                                         (const void *)16, 16, (const float *)16,
                                         (const void *)16, 16, (const float *)16, 0, (void *)16,
                                         8, NULL), AT_ERR_UNSUPPORTED);
        at_destroy(h);
        cu->CtxPopCurrent(&popped);
        cu->DevicePrimaryCtxRelease(cd);
        th_skip("FP8 GEMM runs on sm_90 only");
        return;
    }
    const int m = 257, n = 200, k = 300, pad = 3, kb = (k + 127) / 128, nb = (n + 127) / 128;
    size_t big = (size_t)(m > n ? m : n) * (k + pad) + 64;
    CUdeviceptr dA, dB, dC, dSA, dSB, dSD;
    CHECK(!cu->MemAlloc(&dA, big) && !cu->MemAlloc(&dB, big) &&
          !cu->MemAlloc(&dC, (size_t)m * n * 4) && !cu->MemAlloc(&dSA, (size_t)m * kb * 4) &&
          !cu->MemAlloc(&dSB, (size_t)nb * kb * 4) && !cu->MemAlloc(&dSD, 16));
    unsigned char *A = malloc(big), *B = malloc(big);
    void *C0 = malloc((size_t)m * n * 4), *C = malloc((size_t)m * n * 4);
    float *SA = malloc((size_t)m * kb * 4), *SB = malloc((size_t)nb * kb * 4);
    CHECK(A && B && C0 && C && SA && SB);
    /* scales: powers of two times odd eighths in [0.25, 4), seeded (exact in FP32) */
    unsigned seed = 5;
    for (int i = 0; i < m * kb + nb * kb; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = (float)(8 + (seed >> 24) % 8) / 8.0f * (float)(1 << ((seed >> 16) % 4)) / 4.0f;
        if (i < m * kb)
            SA[i] = v;
        else
            SB[i - m * kb] = v;
    }
    const float sd = 0.5f;
    CHECK(!cu->MemcpyHtoD(dSA, SA, (size_t)m * kb * 4) &&
          !cu->MemcpyHtoD(dSB, SB, (size_t)nb * kb * 4) && !cu->MemcpyHtoD(dSD, &sd, 4));
    static const struct { at_op a, b; int padded; } lays[] = {
        {AT_OP_N, AT_OP_T, 0}, {AT_OP_N, AT_OP_N, 0}, {AT_OP_T, AT_OP_N, 0}, {AT_OP_T, AT_OP_T, 0},
        {AT_OP_N, AT_OP_T, 1},
    };
    double worst = 0;
    for (int pr = 0; pr < 3 && !th_failed(); pr++)
        for (int t = 0; t < 3 && !th_failed(); t++)
            for (size_t l = 0; l < sizeof lays / sizeof lays[0] && !th_failed(); l++)
                for (int bz = 0; bz < 2 && !th_failed(); bz++) {
                    at_dtype ct = tb_ctypes[t];
                    size_t cs = ct == AT_R_32F ? 4 : 2;
                    int an = lays[l].a == AT_OP_N, bn = lays[l].b == AT_OP_N;
                    int a_rows = an ? m : k, a_cols = an ? k : m;
                    int b_rows = bn ? k : n, b_cols = bn ? n : k;
                    int lda = a_cols + (lays[l].padded ? pad : 0), ldb = b_cols, ldc = n;
                    int e4a = tb_pairs[pr].a == AT_R_8F_E4M3, e4b = tb_pairs[pr].b == AT_R_8F_E4M3;
                    tb_random_fp8(A, (size_t)a_rows * lda, e4a, 11 + pr + 3 * t);
                    tb_random_fp8(B, (size_t)b_rows * ldb, e4b, 17 + pr + 5 * t);
                    for (size_t i = 0; i < (size_t)m * n; i++) {
                        double v = ((int)(i * 2654435761u % 2001) - 1000) / 500.0;
                        if (ct == AT_R_16BF)
                            ((uint16_t *)C0)[i] = bz ? th_to_bf16((float)v) : 0x7fc0;     /* NaN */
                        else if (ct == AT_R_16F)
                            ((uint16_t *)C0)[i] = bz ? th_to_f16(v) : 0x7e00;
                        else
                            ((float *)C0)[i] = bz ? (float)v : NAN;
                    }
                    CHECK(!cu->MemcpyHtoD(dA, A, (size_t)a_rows * lda) &&
                          !cu->MemcpyHtoD(dB, B, (size_t)b_rows * ldb) &&
                          !cu->MemcpyHtoD(dC, C0, (size_t)m * n * cs));
                    double alpha = 1.5, beta = bz ? 0.5 : 0.0;
                    int null_d = l == 2;            /* scale_d NULL: 1.0 */
                    at_status s = at_gemm_fp8_blockscaled(
                        h, AT_ROW_MAJOR, lays[l].a, lays[l].b, m, n, k, tb_pairs[pr].a,
                        tb_pairs[pr].b, ct, alpha, (const void *)(uintptr_t)dA, lda,
                        (const float *)(uintptr_t)dSA, (const void *)(uintptr_t)dB, ldb,
                        (const float *)(uintptr_t)dSB, beta, (void *)(uintptr_t)dC, ldc,
                        null_d ? NULL : (const float *)(uintptr_t)dSD);
                    CHECK_MSG(s == AT_OK, "%s C %d layout %zu: %s: %s", tb_pairs[pr].name, t, l,
                              at_status_string(s), at_errmsg(h));
                    if (s != AT_OK)
                        break;
                    CHECK(!cu->CtxSynchronize() && !cu->MemcpyDtoH(C, dC, (size_t)m * n * cs));
                    at_stats st;
                    CHECK_OK(at_get_stats(h, &st));
                    char want[24];
                    snprintf(want, sizeof want, ",FP8=%d,SCALE=1", pr + 1);
                    CHECK_MSG(strstr(st.last_config, want), "want %s, ran %s", want,
                              st.last_config);
                    double sdv = null_d ? 1.0 : sd, num = 0, den = 0;
                    for (int i = 0; i < m; i++)
                        for (int j = 0; j < n; j++) {
                            double acc = 0;
                            for (int b = 0; b < kb; b++) {
                                double blk = 0;
                                for (int q = b * 128; q < k && q < b * 128 + 128; q++) {
                                    size_t ia = an ? (size_t)i * lda + q : (size_t)q * lda + i;
                                    size_t ib = bn ? (size_t)q * ldb + j : (size_t)j * ldb + q;
                                    blk += tb_fp8(A[ia], e4a) * tb_fp8(B[ib], e4b);
                                }
                                acc += (double)SA[i * kb + b] * SB[(j / 128) * kb + b] * blk;
                            }
                            size_t ic = (size_t)i * ldc + j;
                            double ref = sdv * (alpha * acc +
                                                (bz ? beta * tb_get_c(ct, C0, ic) : 0.0));
                            double got = tb_get_c(ct, C, ic);
                            num += (got - ref) * (got - ref);
                            den += ref * ref;
                        }
                    tpl_problem p = tb_problem(m, n, k, ct, tb_pairs[pr].math);
                    double err = isfinite(num) ? sqrt(num / den) : INFINITY;
                    CHECK_MSG(err <= tpl_tcgemm.tolerance(&p), "%s C %d layout %zu beta %g: "
                              "error %g > %g (%s)", tb_pairs[pr].name, t, l, beta, err,
                              tpl_tcgemm.tolerance(&p), st.last_config);
                    worst = fmax(worst, err / tpl_tcgemm.tolerance(&p));
                }
    printf("    3 pairs x 3 C types x 5 layouts x 2 betas, worst error %.3f of the tolerance\n",
           worst);
    /* refused on the device too, with the reason */
    CHECK_EQ(at_gemm_fp8_blockscaled(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_T, 8, 8, 16, AT_R_8F_E4M3,
                                     AT_R_8F_E4M3, AT_R_16BF, 1, (const void *)(uintptr_t)dA, 16,
                                     NULL, (const void *)(uintptr_t)dB, 16,
                                     (const float *)(uintptr_t)dSB, 0, (void *)(uintptr_t)dC, 8,
                                     NULL), AT_ERR_INVALID_ARG);
    CHECK_MSG(strstr(at_errmsg(h), "scale_a is NULL"), "%s", at_errmsg(h));
    CHECK_EQ(at_gemm_fp8_blockscaled(h, AT_COL_MAJOR, AT_OP_T, AT_OP_N, 8, 8, 16, AT_R_8F_E4M3,
                                     AT_R_8F_E4M3, AT_R_16BF, 1, (const void *)(uintptr_t)dA, 16,
                                     (const float *)(uintptr_t)dSA, (const void *)(uintptr_t)dB,
                                     16, (const float *)(uintptr_t)dSB, 0,
                                     (void *)(uintptr_t)dC, 8, NULL), AT_ERR_UNSUPPORTED);
    cu->MemFree(dA);
    cu->MemFree(dB);
    cu->MemFree(dC);
    cu->MemFree(dSA);
    cu->MemFree(dSB);
    cu->MemFree(dSD);
    free(A), free(B), free(C0), free(C), free(SA), free(SB);
    CHECK_OK(at_destroy(h));
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(cd);
}

/* The BN 256 block-scaled kernels (SCALE 1 in two N-halves of 128 through one promotion buffer,
 * tcgemm.cu's T9_NH; SCALE 3 in four N-quarters with A in registers, T9_AREG), each run by
 * tcgemm's run() on row-major NT operands against a float64 host product of the same bytes and
 * scales (per K-block, from the definition): n no multiple of 256
 * (a tile whose second half is partial, one whose second half lies past n and reads the clamped
 * last column block's scales, 8 columns of a third tile), ragged m, k multiples of 128 (1 to 16
 * K-blocks), every scale distinct per row / column block and K-block, beta 0 over a C of NaN
 * and beta 0.5; the first element off by more than the tolerance is printed. */
GPU_TEST(fp8_block_gpu_wide_tile_against_host_reference)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    if (th_failed())
        return;
    const at_device_info *dev = ms_device(g);
    if (dev->cc_major != 9 || dev->cc_minor != 0) {
        ms_close(g);
        th_skip("FP8 GEMM runs on sm_90 only (this device: %s)", dev->arch);
        return;
    }
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    /* the two lattice rows (TMA stores, direct paired stores), one pair and C type each */
    static const struct { const char *config; int pair; } kernels[] = {
        {TB_P90(0, "BM=128,BN=256,BK=128,STAGES=3,CM=1,CN=1", "RASTER=0,GROUP=8,SPLITK=1,VEC=8")
         ",FP8=1,SCALE=1", 0},
        {TB_P90(1, "BM=128,BN=256,BK=128,STAGES=4,CM=1,CN=1", "RASTER=1,GROUP=16,SPLITK=1,VEC=2")
         ",FP8=2,SCALE=1", 1},
        {TB_P90(2, "BM=128,BN=256,BK=128,STAGES=4,CM=1,CN=1", "RASTER=0,GROUP=8,SPLITK=1,VEC=2")
         ",FP8=3,SCALE=1", 2},
        /* SCALE 3 (A's fragments in registers, N-quarters): the same rows */
        {TB_P90(0, "BM=128,BN=256,BK=128,STAGES=3,CM=1,CN=1", "RASTER=0,GROUP=8,SPLITK=1,VEC=8")
         ",FP8=1,SCALE=3", 0},
        {TB_P90(1, "BM=128,BN=256,BK=128,STAGES=4,CM=1,CN=1", "RASTER=1,GROUP=16,SPLITK=1,VEC=2")
         ",FP8=2,SCALE=3", 1},
        {TB_P90(2, "BM=128,BN=256,BK=128,STAGES=4,CM=1,CN=1", "RASTER=0,GROUP=8,SPLITK=1,VEC=2")
         ",FP8=3,SCALE=3", 2},
    };
    static const int shapes[][3] = {
        {300, 381, 384}, {257, 200, 256}, {129, 520, 1024}, {64, 130, 128}, {520, 640, 2048},
    };
    double worst = 0;
    for (size_t kc = 0; kc < sizeof kernels / sizeof kernels[0] && !th_failed(); kc++) {
        int cfg[TPL_MAX_PARAMS];
        char why[256];
        CHECK(th_parse_config(f, kernels[kc].config, cfg, __FILE__, __LINE__));
        CHECK_MSG(f->valid(cfg, dev, why, sizeof why), "%s: %s", kernels[kc].config, why);
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status cs = tpl_compile(f, cfg, dev->arch, &cubin, &size, &log);
        CHECK_MSG(cs == AT_OK, "compile %s: %s", kernels[kc].config, log ? log : "");
        free(log);
        CUmodule mod;
        CHECK(cs == AT_OK && cu->ModuleLoadData(&mod, cubin) == CUDA_SUCCESS);
        free(cubin);
        if (th_failed())
            break;
        at_exec ex;
        ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
        const int pr = kernels[kc].pair, t = cfg[P_TYPE];
        const at_dtype ct = tb_ctypes[t];
        const size_t csz = ct == AT_R_32F ? 4 : 2;
        const int e4a = tb_pairs[pr].a == AT_R_8F_E4M3, e4b = tb_pairs[pr].b == AT_R_8F_E4M3;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && !th_failed(); s++) {
            const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            const int kb = (k + 127) / 128, nb = (n + 127) / 128;
            unsigned char *A = malloc((size_t)m * k), *B = malloc((size_t)n * k);
            float *SA = malloc((size_t)m * kb * 4), *SB = malloc((size_t)nb * kb * 4);
            void *C0 = malloc((size_t)m * n * csz), *C = malloc((size_t)m * n * csz);
            double *R = malloc((size_t)m * n * sizeof(double));
            CHECK(A && B && SA && SB && C0 && C && R);
            if (th_failed()) {
                free(A), free(B), free(SA), free(SB), free(C0), free(C), free(R);
                break;
            }
            tb_random_fp8(A, (size_t)m * k, e4a, 101 + (unsigned)(s + 7 * kc));
            tb_random_fp8(B, (size_t)n * k, e4b, 203 + (unsigned)(s + 7 * kc));
            /* powers of two times odd eighths in [0.25, 4), distinct per block (exact in FP32) */
            unsigned seed = 31 + (unsigned)s;
            for (int i = 0; i < m * kb + nb * kb; i++) {
                seed = seed * 1664525u + 1013904223u;
                float v = (float)(8 + (seed >> 24) % 8) / 8.0f * (float)(1 << ((seed >> 16) % 4)) /
                          4.0f;
                if (i < m * kb)
                    SA[i] = v;
                else
                    SB[i - m * kb] = v;
            }
            /* the float64 product, per K-block with its two scales (scale_b by column block) */
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int b = 0; b < kb; b++) {
                        double blk = 0;
                        for (int q = b * 128; q < k && q < b * 128 + 128; q++)
                            blk += tb_fp8(A[(size_t)i * k + q], e4a) *
                                   tb_fp8(B[(size_t)j * k + q], e4b);
                        acc += (double)SA[i * kb + b] * SB[(j / 128) * kb + b] * blk;
                    }
                    R[(size_t)i * n + j] = acc;
                }
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr dA, dB, dC, dSA, dSB, dSD;
            const float sd = 0.5f;
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * k, &dA));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)n * k, &dB));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * n * csz, &dC));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * kb * 4, &dSA));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)nb * kb * 4, &dSB));
            CHECK_OK(tpl_ws_alloc(ref, &ws, 16, &dSD));
            CHECK_OK(ex_upload(ref, dA, A, (size_t)m * k));
            CHECK_OK(ex_upload(ref, dB, B, (size_t)n * k));
            CHECK_OK(ex_upload(ref, dSA, SA, (size_t)m * kb * 4));
            CHECK_OK(ex_upload(ref, dSB, SB, (size_t)nb * kb * 4));
            CHECK_OK(ex_upload(ref, dSD, &sd, 4));
            for (int bz = 0; bz < 2 && !th_failed(); bz++) {
                for (size_t i = 0; i < (size_t)m * n; i++) {
                    double v = ((int)(i * 2654435761u % 2001) - 1000) / 500.0;
                    if (ct == AT_R_16BF)
                        ((uint16_t *)C0)[i] = bz ? th_to_bf16((float)v) : 0x7fc0;     /* NaN */
                    else if (ct == AT_R_16F)
                        ((uint16_t *)C0)[i] = bz ? th_to_f16(v) : 0x7e00;
                    else
                        ((float *)C0)[i] = bz ? (float)v : NAN;
                }
                CHECK_OK(ex_upload(ref, dC, C0, (size_t)m * n * csz));
                const double alpha = 1.5, beta = bz ? 0.5 : 0.0;
                tpl_args args = tpl_gemm_args(m, n, k, (float)alpha, dA, k, dB, k, (float)beta, dC,
                                              n);
                args.problem.dtype = ct;
                args.problem.math = tb_pairs[pr].math;
                args.problem.op_b = AT_OP_T;
                args.operand[TPL_GEMM_SCALE_A].ptr = dSA;
                args.operand[TPL_GEMM_SCALE_B].ptr = dSB;
                args.operand[TPL_GEMM_SCALE_D].ptr = dSD;
                at_status rs = f->run(&ex, cfg, &args);
                if (rs == AT_OK)
                    rs = ex_sync(&ex);
                CHECK_MSG(rs == AT_OK, "%s at %dx%dx%d: %s", kernels[kc].config, m, n, k, err);
                CHECK_OK(ex_download(ref, C, dC, (size_t)m * n * csz));
                if (th_failed())
                    break;
                tpl_problem p = tb_problem(m, n, k, ct, tb_pairs[pr].math);
                const double tol = f->tolerance(&p);
                double num = 0, den = 0;
                long long first_bad = -1;
                double bad_got = 0, bad_ref = 0, rms = 0;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        size_t ic = (size_t)i * n + j;
                        double r = sd * (alpha * R[ic] + (bz ? beta * tb_get_c(ct, C0, ic) : 0.0));
                        double got = tb_get_c(ct, C, ic);
                        num += (got - r) * (got - r);
                        den += r * r;
                    }
                rms = sqrt(den / ((double)m * n));
                /* the first element whose error exceeds the tolerance times the RMS of the result
                 * (an element-wise view of the norm-wise rule; NaN counts) */
                for (long long ic = 0; ic < (long long)m * n && first_bad < 0; ic++) {
                    double c0 = bz ? tb_get_c(ct, C0, (size_t)ic) : 0.0;
                    double r = sd * (alpha * R[ic] + beta * c0);
                    double got = tb_get_c(ct, C, (size_t)ic);
                    if (!(fabs(got - r) <= 8 * tol * rms)) {
                        first_bad = ic;
                        bad_got = got;
                        bad_ref = r;
                    }
                }
                double e = isfinite(num) ? sqrt(num / den) : INFINITY;
                CHECK_MSG(e <= tol && first_bad < 0,
                          "%s at %dx%dx%d beta %g: error %g (tolerance %g); first element off by "
                          "more than 8 x tolerance x RMS: %s (%lld, %lld) = %g, want %g",
                          kernels[kc].config, m, n, k, beta, e, tol,
                          first_bad < 0 ? "none" : "at", first_bad < 0 ? -1LL : first_bad / n,
                          first_bad < 0 ? -1LL : first_bad % n, bad_got, bad_ref);
                worst = fmax(worst, e / tol);
            }
            tpl_workset_free(cu, &ws);
            free(A), free(B), free(SA), free(SB), free(C0), free(C), free(R);
        }
        ex_release(&ex);
        cu->ModuleUnload(mod);
    }
    printf("    BN 256 block-scaled kernels: 3 pairs / C types x 5 shapes x 2 betas, worst error "
           "%.3f of the tolerance\n", worst);
    ms_close(g);
}
