/* test_smallm.c: the smallm family (FP16/BF16 GEMMs with m <= 64 on the tensor cores): its space
 * and rules, the K slices, the MT each m takes, the built-in defaults, the claims rule and the
 * family choice with and without measurements, NVRTC compiles of the GPU cases (CPU); every op
 * pair and type on odd problems against the float64 reference (FP32, TYPE 2, too), and padded,
 * offset, unaligned operands with alpha, beta and batches against the host (GPU). The FP32
 * path's own rules and tests: tests/test_smallm_fp32.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "measure.h"
#include "th_compile.h"
#include "th_db.h"
#include "th_family.h"
#include "th_smallm.h"
#include "tpl.h"

extern const tpl_family tpl_smallm, tpl_skinny, tpl_tcgemm, tpl_matmul;

/* ---------------- CPU tier ---------------- */

TEST(smallm_every_rejection_reason_is_reached)
{
    const tpl_family *f = &tpl_smallm;
    long long seen[8] = {0}, valid = 0;
    CHECK(tpl_smallm_n_reasons <= 8);
    if (!th_scan_reasons(f, NULL, tpl_smallm_reasons, tpl_smallm_n_reasons, seen, &valid,
                         __FILE__, __LINE__))
        return;
    /* a value outside the lists reaches the range rule */
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(f, f->default_config, cfg, err, sizeof err));
    cfg[smt_param("MT")] = 24;
    CHECK(!f->valid(cfg, NULL, err, sizeof err));
    CHECK_STR(err, tpl_smallm_reasons[0]);
    seen[0]++;
    for (int r = 0; r < tpl_smallm_n_reasons; r++)
        CHECK_MSG(seen[r] > 0, "reason never reached: %s", tpl_smallm_reasons[r]);
    /* per problem (one TYPE, OPA, OPB and MT) tens to a few hundred configurations */
    long long per_problem = valid / (3 * 2 * 2 * 4);
    CHECK_MSG(per_problem >= 30 && per_problem <= 600, "%lld valid per problem", per_problem);
    /* a device with 99 KiB of shared memory per block (sm_86) rejects the largest pipelines */
    at_device_info small = smt_h100();
    small.smem_per_block_optin = 99 * 1024;
    CHECK_OK(tpl_config_parse(f, "TYPE=1,OPA=0,OPB=1,MT=64,BN=256,BK=128,STAGES=6,WARPS=8,KW=1,"
                              "VEC=8,WAVES=1", cfg, err, sizeof err));
    CHECK(!f->valid(cfg, &small, err, sizeof err));
    CHECK_STR(err, tpl_smallm_reasons[3]);
}

/* Every valid configuration keeps the written limits, computed here from the parameters: the
 * warps split BN into 16-column strips and a stage's k16 steps evenly, at most 64 accumulator
 * registers, the stages (padded rows) within 227 KiB. Every listed value occurs in some valid
 * configuration (so the NVRTC sample, which covers every value, compiles each). */
TEST(smallm_valid_configurations_meet_the_written_limits)
{
    const tpl_family *f = &tpl_smallm;
    long long *idx = NULL, n = tpl_valid_configs(f, NULL, &idx);
    CHECK(n > 0);
    int used[TPL_MAX_PARAMS][TPL_MAX_VALUES];
    memset(used, 0, sizeof used);
    for (long long i = 0; i < n; i++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[i], c);
        for (int p = 0; p < f->n_params; p++)
            for (int v = 0; v < f->params[p].n_values; v++)
                used[p][v] |= f->params[p].values[v] == c[p];
        if (i % 13)
            continue;
        int mt = c[smt_param("MT")], bn = c[smt_param("BN")], bk = c[smt_param("BK")];
        int warps = c[smt_param("WARPS")], kw = c[smt_param("KW")];
        int along_n = warps / kw;
        if (c[smt_param("TYPE")] == 2) {
            /* FP32: 1, 2 or 4 columns per thread, K steps four at a time per K group, at most
             * 128 accumulators, the float stages (B's [n][k] rows + 4) within 227 KiB */
            int group = warps * 32 / kw, cols = bn / group;
            CHECK(warps % kw == 0 && bn % group == 0 && (cols == 1 || cols == 2 || cols == 4));
            CHECK((bk / kw) % 4 == 0 && mt * cols <= 128 && c[smt_param("VEC")] <= 4);
            long long fb = c[smt_param("OPB")] ? (long long)bn * (bk + 4) : (long long)bk * bn;
            CHECK(c[smt_param("STAGES")] * (fb + (long long)mt * bk) * 4 <= 227 * 1024 - 128);
            CHECK((long long)kw * mt * (bn + 4) * 4 <= 227 * 1024 - 128);
            continue;
        }
        CHECK(bn <= 256);
        CHECK(warps % kw == 0 && bn % (16 * along_n) == 0 && (bk / 16) % kw == 0);
        CHECK((bn / along_n / 16) * (mt / 8) * 4 <= 64);
        long long b = c[smt_param("OPB")] ? (long long)bn * (bk + 8) : (long long)bk * (bn + 8);
        long long a = c[smt_param("OPA")] ? (long long)bk * (mt == 8 ? 8 : mt + 8)
                                          : (long long)mt * (bk + 8);
        CHECK(c[smt_param("STAGES")] * (a + b) * 2 <= 227 * 1024 - 128);
        CHECK((long long)kw * mt * (bn + 4) * 4 <= 227 * 1024 - 128);
    }
    for (int p = 0; p < f->n_params; p++)
        for (int v = 0; v < f->params[p].n_values; v++)
            CHECK_MSG(used[p][v], "%s=%d in no valid configuration", f->params[p].name,
                      f->params[p].values[v]);
    free(idx);
}

/* The K slices: none when fewer than two per tile fit the waves or K is short; otherwise the
 * slices fill at most the waves (no partial wave), each has at least 4 stages, none is empty,
 * and the last block's sum stays small against the slice's reading of B (slices^2 x 8 x rows
 * <= k); more tiles never get more slices. */
TEST(smallm_slices_fill_one_wave_within_their_caps)
{
    int c[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(&tpl_smallm, tpl_smallm.default_config, c, err, sizeof err));
    int bk = c[smt_param("BK")], waves = c[smt_param("WAVES")];
    long long resident = 132 * 2;
    CHECK_EQ(tpl_smallm_slices(c, resident * waves, 64, 8192, resident), 1);
    CHECK_EQ(tpl_smallm_slices(c, 1, 1, 7 * bk, resident), 1);
    CHECK_EQ(tpl_smallm_slices(c, 1, 1, 0, resident), 1);
    /* 1 x 8192 x 8192 in 64 tiles of 128 columns on 3 x 132 resident blocks: 6 slices, one
     * wave of 384 blocks; 64 rows: at most 4 (4^2 x 8 x 64 = 8192) */
    CHECK_EQ(tpl_smallm_slices(c, 64, 1, 8192, 396), 6);
    CHECK_EQ(tpl_smallm_slices(c, 64, 64, 8192, 264), 4);
    long long rows_list[] = {1, 8, 17, 64};
    for (int r = 0; r < 4; r++) {
        int prev = 1 << 30;
        for (long long tiles = 1; tiles < resident * waves; tiles = tiles * 2 + 1) {
            for (long long k = 1; k < 70000; k = k * 3 + 5) {
                int s = tpl_smallm_slices(c, tiles, rows_list[r], k, resident);
                long long steps = (k + bk - 1) / bk;
                CHECK(s >= 1 && s <= 256);
                if (s > 1) {
                    long long per = (steps + s - 1) / s;
                    CHECK_MSG(s * tiles <= resident * waves, "tiles %lld k %lld: %d slices",
                              tiles, k, s);
                    CHECK_MSG(per >= 4, "tiles %lld k %lld: %d slices", tiles, k, s);
                    CHECK_MSG((s - 1) * per < steps, "tiles %lld k %lld: an empty slice",
                              tiles, k);
                    CHECK_MSG((long long)s * s * 8 * rows_list[r] <= k,
                              "rows %lld k %lld: %d slices", rows_list[r], k, s);
                }
            }
            int s = tpl_smallm_slices(c, tiles, rows_list[r], 65536, resident);
            CHECK(s <= prev);
            prev = s;
        }
    }
}

/* CLUSTER 1: a tile's slices are one portable cluster, so at most 8 of them (the same count as
 * CLUSTER 0 below that); sm_90 only (rejected for an sm_86 device, no NVRTC target below
 * sm_90); WAVES 1 only; a text leaves CLUSTER 0 out (stored texts keep their meaning). */
TEST(smallm_cluster_slices_arch_and_texts)
{
    const tpl_family *f = &tpl_smallm;
    int c[TPL_MAX_PARAMS], g[TPL_MAX_PARAMS];
    char err[256], text[TPL_CONFIG_LEN];
    CHECK_OK(tpl_config_parse(f, "TYPE=1,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=4,KW=1,"
                              "VEC=8,WAVES=1", c, err, sizeof err));
    CHECK_EQ(c[smt_param("CLUSTER")], 0);
    tpl_config_format(f, c, text, sizeof text);
    CHECK(strstr(text, "CLUSTER") == NULL);
    memcpy(g, c, sizeof g);
    g[smt_param("CLUSTER")] = 1;
    tpl_config_format(f, g, text, sizeof text);
    CHECK(strstr(text, ",CLUSTER=1") != NULL);
    /* 1 x 8192 x 8192 in 64 tiles on 396 resident blocks: 6 slices either way; 1 x 300 x 16384
     * in 5 tiles: 43 through global memory, 8 in a cluster; 3 rows over k 20000 on 24 tiles
     * (792 resident, WAVES 1): 28 and 8 */
    CHECK_EQ(tpl_smallm_slices(c, 64, 1, 8192, 396), 6);
    CHECK_EQ(tpl_smallm_slices(g, 64, 1, 8192, 396), 6);
    CHECK_EQ(tpl_smallm_slices(c, 5, 1, 16384, 2112), 43);
    CHECK_EQ(tpl_smallm_slices(g, 5, 1, 16384, 2112), 8);
    for (long long tiles = 1; tiles < 800; tiles = tiles * 2 + 1)
        for (long long k = 1; k < 70000; k = k * 3 + 5) {
            int plain = tpl_smallm_slices(c, tiles, 3, k, 792),
                clustered = tpl_smallm_slices(g, tiles, 3, k, 792);
            CHECK_MSG(clustered <= 8 && clustered <= plain &&
                          (plain > 8 || clustered == plain),
                      "tiles %lld k %lld: %d slices, %d in clusters", tiles, k, plain, clustered);
        }
    at_device_info h100 = smt_h100(), a10 = smt_h100();
    a10.cc_major = 8;
    a10.cc_minor = 6;
    CHECK(f->valid(g, &h100, err, sizeof err));
    CHECK(!f->valid(g, &a10, err, sizeof err));
    CHECK_STR(err, tpl_smallm_reasons[7]);
    CHECK(f->valid(c, &a10, err, sizeof err));
    g[smt_param("WAVES")] = 2;
    CHECK(!f->valid(g, &h100, err, sizeof err));
    CHECK_STR(err, tpl_smallm_reasons[7]);
    g[smt_param("WAVES")] = 1;
    CHECK(f->target_arch(g, "sm_80") == NULL);
    CHECK_STR(f->target_arch(g, "sm_90"), "sm_90");
    CHECK_STR(f->target_arch(c, "sm_80"), "sm_80");
}

/* The family computes FP16 and BF16 with m <= 64 only; a configuration serves a problem of
 * its TYPE and ops when its MT is the smallest of 8, 16, 32, 64 that holds m. */
TEST(smallm_applicable_takes_its_kind_and_the_fitting_mt)
{
    const tpl_family *f = &tpl_smallm;
    int c[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(f, f->default_config, c, err, sizeof err));
    static const int mts[] = {8, 16, 32, 64};
    for (long long m = 1; m <= 64; m++) {
        int want = m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64, takers = 0;
        tpl_problem p = smt_problem(m, 999, 1001, AT_R_16BF, 0, 0, 1);
        for (int i = 0; i < 4; i++) {
            c[smt_param("MT")] = mts[i];
            if (f->applicable(c, &p)) {
                takers++;
                CHECK_EQ(mts[i], want);
            }
        }
        CHECK_EQ(takers, 1);
    }
    c[smt_param("MT")] = 8;
    tpl_problem p = smt_problem(5, 4096, 4096, AT_R_16BF, 0, 0, 3);
    CHECK(f->applicable(c, &p));
    p.dtype = AT_R_16F;                         /* TYPE 1 is BF16 */
    CHECK(!f->applicable(c, &p));
    c[smt_param("TYPE")] = 0;
    CHECK(f->applicable(c, &p));
    p.op_b = AT_OP_T;                           /* OPB 0 computes op N only */
    CHECK(!f->applicable(c, &p));
    /* not its kinds or sizes: TF32 math, FP64, a 16-bit narrow n (never mirrored), FP32 with
     * both sides above 64, column-major (the runtime gives the row-major canonical form) */
    tpl_problem fp32 = smt_problem(8, 4096, 4096, AT_R_32F, 0, 0, 1);
    tpl_problem tf32 = fp32, fp64 = fp32, big = smt_problem(65, 4096, 4096, AT_R_16BF, 0, 0, 1);
    tf32.math = AT_MATH_TF32;
    fp64.dtype = AT_R_64F;
    tpl_problem col = smt_problem(8, 4096, 4096, AT_R_16BF, 0, 0, 1);
    col.order = AT_COL_MAJOR;
    tpl_problem narrow_n16 = smt_problem(4096, 8, 4096, AT_R_16BF, 0, 0, 1);
    tpl_problem wide32 = smt_problem(65, 65, 4096, AT_R_32F, 0, 0, 1);
    CHECK(tpl_family_accepts(f, &fp32));
    CHECK(!tpl_family_accepts(f, &tf32) && !tpl_family_accepts(f, &fp64) &&
          !tpl_family_accepts(f, &big) && !tpl_family_accepts(f, &col) &&
          !tpl_family_accepts(f, &narrow_n16) && !tpl_family_accepts(f, &wide32));
}

/* Each m class, type, op pair and batch has a built-in configuration, fitted to the kind (TYPE,
 * OPA, OPB, MT) and usable on the device. */
TEST(smallm_defaults_serve_every_kind_and_m)
{
    at_device_info dev = smt_h100();
    static const long long ms[] = {1, 3, 8, 9, 16, 17, 32, 33, 64};
    static const at_dtype types[] = {AT_R_16F, AT_R_16BF};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        for (int t = 0; t < 2; t++)
            for (int ops = 0; ops < 4; ops++)
                for (long long batch = 1; batch <= 3; batch += 2) {
                    tpl_problem p = smt_problem(ms[i], 8192, 8192, types[t], ops >> 1, ops & 1,
                                                batch);
                    int cfg[TPL_MAX_PARAMS];
                    char text[TPL_CONFIG_LEN];
                    const char *origin = NULL;
                    CHECK_MSG(tpl_builtin_config(&tpl_smallm, &dev, &p, 1, cfg, text, &origin),
                              "m %lld type %d ops %d: no default", ms[i], t, ops);
                    CHECK_EQ(cfg[smt_param("TYPE")], types[t] == AT_R_16BF);
                    CHECK_EQ(cfg[smt_param("OPA")], ops >> 1);
                    CHECK_EQ(cfg[smt_param("OPB")], ops & 1);
                    CHECK(cfg[smt_param("MT")] >= ms[i] && cfg[smt_param("MT")] < 2 * ms[i] + 8);
                    CHECK(origin && strcmp(origin, "default") != 0);
                }
}

/* With nothing measured, the calls of issue 33's small-M rows (m in {1, 8, 16, 32, 64} x 8192
 * x 8192, FP16 and BF16, every op pair, row- and column-major as the canonical form sees them)
 * go to smallm up to m = 16 ahead of skinny and tcgemm (m 17..64 to tcgemm's 64-row tiles,
 * but m <= 32 over a B of less than 2^24 elements stays with smallm);
 * small B, B rows not a multiple of 8 and other types do not. A measurement at the exact shape decides, in either direction, and a
 * stored smallm winner comes back from the database (the lookup's exact level). */
TEST(smallm_claims_and_family_choice)
{
    at_device_info dev = smt_h100();
    int measured = -1;
    for (int ops = 0; ops < 4; ops++)
        for (int t = 0; t < 2; t++) {
            static const long long ms[] = {1, 8, 16};
            for (int i = 0; i < 3; i++) {
                tpl_problem p = smt_problem(ms[i], 8192, 8192, t ? AT_R_16BF : AT_R_16F,
                                            ops >> 1, ops & 1, 1);
                const tpl_family *fams[16];
                int n = lk_gemm_families(&p, NULL, fams, 16);
                CHECK(lk_choose_family(NULL, &dev, &p, 0, fams, n, &measured) == &tpl_smallm);
                CHECK_EQ(measured, 0);
            }
        }
    struct { tpl_problem p; const tpl_family *want; } others[] = {
        {smt_problem(65, 8192, 8192, AT_R_16BF, 0, 0, 1), &tpl_tcgemm},
        {smt_problem(64, 8192, 8192, AT_R_16BF, 0, 0, 1), &tpl_tcgemm},  /* measured faster */
        {smt_problem(33, 8192, 8192, AT_R_16F, 0, 1, 1), &tpl_tcgemm},
        {smt_problem(17, 8192, 8192, AT_R_16BF, 1, 0, 1), &tpl_tcgemm},  /* 64-row wgmma */
        {smt_problem(21, 1592, 2862, AT_R_16BF, 0, 0, 1), &tpl_smallm},  /* B under 2^24 */
        {smt_problem(33, 1592, 2862, AT_R_16BF, 0, 0, 1), &tpl_tcgemm},
        {smt_problem(8, 1024, 1024, AT_R_16BF, 0, 0, 1), &tpl_skinny},   /* B of 2 MiB */
        {smt_problem(8, 8191, 8192, AT_R_16BF, 0, 0, 1), &tpl_skinny},   /* rows of B odd */
        {smt_problem(8, 8191, 8192, AT_R_16BF, 0, 1, 1), &tpl_smallm},   /* op T: rows of k */
        {smt_problem(8, 8192, 8192, AT_R_32F, 0, 0, 1), &tpl_smallm},   /* FP32 claim */
        {smt_problem(8, 4096, 2048, AT_R_32F, 0, 0, 1), &tpl_skinny},   /* wide under 2^24 */
        {smt_problem(48, 200, 100000, AT_R_16F, 0, 0, 1), &tpl_tcgemm},  /* n below 256 */
        {smt_problem(4, 512, 2048, AT_R_16BF, 0, 0, 4), &tpl_smallm},    /* batch of 4 Mi */
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        const tpl_family *fams[16];
        int n = lk_gemm_families(&others[i].p, NULL, fams, 16);
        const tpl_family *got = lk_choose_family(NULL, &dev, &others[i].p, 0, fams, n, &measured);
        CHECK_MSG(got == others[i].want, "case %zu: %s, wanted %s", i, got ? got->name : "none",
                  others[i].want->name);
    }

    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/smallm_choice.db", th_tmpdir());
    remove(path);
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    tpl_problem p = smt_problem(16, 8192, 8192, AT_R_16BF, 0, 1, 1);
    const tpl_family *fams[16];
    int n = lk_gemm_families(&p, NULL, fams, 16), cfg[TPL_MAX_PARAMS];
    char sm_text[TPL_CONFIG_LEN], tc_text[TPL_CONFIG_LEN], got[TPL_CONFIG_LEN];
    const char *stored = "TYPE=1,OPA=0,OPB=1,MT=16,BN=256,BK=32,STAGES=6,WARPS=8,KW=2,VEC=8,"
                         "WAVES=2";
    CHECK(tpl_config_usable(&tpl_smallm, &dev, stored, &p, 1, cfg));
    snprintf(sm_text, sizeof sm_text, "%s", stored);
    CHECK(tpl_builtin_config(&tpl_tcgemm, &dev, &p, 0, cfg, tc_text, NULL));
    CHECK_OK(tdb_store_measured(d, "GPU-smallm", &tpl_tcgemm, &p, tc_text, 0.05));
    CHECK_OK(tdb_store_measured(d, "GPU-smallm", &tpl_smallm, &p, sm_text, 0.08));
    CHECK(lk_choose_family(d, &dev, &p, 0, fams, n, &measured) == &tpl_tcgemm);
    CHECK_EQ(measured, 1);
    CHECK_OK(tdb_store_measured(d, "GPU-smallm", &tpl_smallm, &p, sm_text, 0.03));
    CHECK(lk_choose_family(d, &dev, &p, 0, fams, n, &measured) == &tpl_smallm);
    CHECK_EQ(lk_choose(d, &dev, &tpl_smallm, &p, 0, cfg, got), AT_LOOKUP_EXACT);
    CHECK_STR(got, stored);
    /* a nearby m of the same MT class takes the stored winner (nearest level); another class
     * cannot (its MT does not fit) and falls to the built-in default */
    tpl_problem near = smt_problem(12, 8192, 8192, AT_R_16BF, 0, 1, 1);
    CHECK_EQ(lk_choose(d, &dev, &tpl_smallm, &near, 0, cfg, got), AT_LOOKUP_NEAREST);
    CHECK_STR(got, stored);
    tpl_problem other = smt_problem(40, 8192, 8192, AT_R_16BF, 0, 1, 1);
    CHECK_EQ(lk_choose(d, &dev, &tpl_smallm, &other, 0, cfg, got), AT_LOOKUP_DEFAULT);
    CHECK_EQ(cfg[smt_param("MT")], 64);
    db_close(d);
}

/* ---------------- GPU tier ---------------- */

/* Odd problems for every type and op pair, each at a configuration picked to reach a path:
 * cp.async chunks (16 and 8 bytes) and the element loads of unaligned operands, partial chunks
 * at the k and n edges, one and several mma tiles of m, K groups (KW), K slices summed by the
 * last block, batches, a K shorter than one stage. */
static const th_case smt_cases[] = {
    {"1x515x3001:bf16", "TYPE=1,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1"},
    {"3x4096x2048:bf16:NT",
     "TYPE=1,OPA=0,OPB=1,MT=8,BN=256,BK=128,STAGES=3,WARPS=8,KW=2,VEC=8,WAVES=1"},
    {"8x1000x777:f16:TN",
     "TYPE=0,OPA=1,OPB=0,MT=8,BN=64,BK=32,STAGES=6,WARPS=4,KW=1,VEC=4,WAVES=2"},
    {"17x2048x4100:f16:TT",
     "TYPE=0,OPA=1,OPB=1,MT=32,BN=128,BK=64,STAGES=4,WARPS=8,KW=2,VEC=8,WAVES=1"},
    {"64x1024x8192:bf16:TT",
     "TYPE=1,OPA=1,OPB=1,MT=64,BN=128,BK=64,STAGES=4,WARPS=8,KW=2,VEC=8,WAVES=1"},
    {"64x777x1001:bf16",
     "TYPE=1,OPA=0,OPB=0,MT=64,BN=64,BK=128,STAGES=3,WARPS=8,KW=2,VEC=8,WAVES=1"},
    {"33x256x520:f16:NT:b3",
     "TYPE=0,OPA=0,OPB=1,MT=64,BN=64,BK=32,STAGES=3,WARPS=4,KW=1,VEC=8,WAVES=2"},
    {"16x4104x64:bf16:TN:b3",
     "TYPE=1,OPA=1,OPB=0,MT=16,BN=256,BK=64,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1"},
    {"5x3000x6000:f16", "TYPE=0,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=8,KW=4,VEC=8,WAVES=1"},
    {"32x4096x4096:bf16:NT",
     "TYPE=1,OPA=0,OPB=1,MT=32,BN=64,BK=128,STAGES=3,WARPS=4,KW=4,VEC=8,WAVES=1"},
    {"9x2001x3000:f16:TN",
     "TYPE=0,OPA=1,OPB=0,MT=16,BN=128,BK=32,STAGES=6,WARPS=8,KW=1,VEC=8,WAVES=1"},
    /* the last block's sum of the slices through each thread's shared memory: the m <= 8 and
     * m 9..16 built-in rows at the m = 8 (2 groups of 4 elements x 6 slices per
     * thread, one batch) and at odd sizes (odd n: B element by element; 5 and 13 rows: some
     * threads 2 groups, some 1, some none; 12 and 6 slices), and 43 slices of one group in
     * batches of 2 pieces (BN 64 in 2 stages on 8 warps: 10 KiB of shared memory), so that
     * a group's slices straddle batches */
    {"8x8192x8192:bf16", "TYPE=1,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1"},
    {"5x4133x9001:f16", "TYPE=0,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1"},
    {"13x4133x5000:bf16:NT",
     "TYPE=1,OPA=0,OPB=1,MT=16,BN=64,BK=128,STAGES=3,WARPS=8,KW=4,VEC=8,WAVES=1"},
    {"1x300x16384:bf16", "TYPE=1,OPA=0,OPB=0,MT=8,BN=64,BK=32,STAGES=2,WARPS=8,KW=2,VEC=8,WAVES=2"},
    /* CLUSTER 1 (sm_90): the slices of a tile sum from each other's shared memory: the m <= 8
     * and m 9..16 rows (6 slices; KW 4), 8 slices (the cap) of one row with KW 2, batches on
     * grid z, and a K too short to slice (no cluster) */
    {"8x8192x8192:bf16",
     "TYPE=1,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1,CLUSTER=1"},
    {"13x4133x5000:bf16:NT",
     "TYPE=1,OPA=0,OPB=1,MT=16,BN=64,BK=128,STAGES=3,WARPS=8,KW=4,VEC=8,WAVES=1,CLUSTER=1"},
    {"1x300x16384:f16",
     "TYPE=0,OPA=0,OPB=0,MT=8,BN=64,BK=32,STAGES=2,WARPS=8,KW=2,VEC=8,WAVES=1,CLUSTER=1"},
    {"7x1000x3000:bf16:TN:b3",
     "TYPE=1,OPA=1,OPB=0,MT=8,BN=128,BK=32,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1,CLUSTER=1"},
    {"5x3000x200:f16", "TYPE=0,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1,CLUSTER=1"},
    /* FP32 (TYPE 2): every op pair, MT and column count per thread (1, 2, 4), K groups,
     * unaligned operands (element loads) and 8-byte chunks (VEC 2), BN 512, K slices, batches,
     * a K of two stages; a narrow n through the mirror (the config's ops are the kernel's:
     * OPA = 1 - op(B), OPB = 1 - op(A)) */
    {"1x515x3001:f32", "TYPE=2,OPA=0,OPB=0,MT=8,BN=128,BK=32,STAGES=3,WARPS=4,KW=4,VEC=4,WAVES=1"},
    {"3x4096x2048:f32:NT",
     "TYPE=2,OPA=0,OPB=1,MT=8,BN=256,BK=64,STAGES=2,WARPS=8,KW=2,VEC=4,WAVES=1"},
    {"8x1000x777:f32:TN",
     "TYPE=2,OPA=1,OPB=0,MT=8,BN=64,BK=32,STAGES=6,WARPS=4,KW=2,VEC=4,WAVES=2"},
    {"17x2048x4100:f32:TT",
     "TYPE=2,OPA=1,OPB=1,MT=32,BN=256,BK=32,STAGES=3,WARPS=8,KW=2,VEC=4,WAVES=1"},
    {"64x1024x8192:f32",
     "TYPE=2,OPA=0,OPB=0,MT=64,BN=128,BK=32,STAGES=3,WARPS=4,KW=2,VEC=4,WAVES=1"},
    {"33x256x520:f32:NT:b3",
     "TYPE=2,OPA=0,OPB=1,MT=64,BN=64,BK=32,STAGES=3,WARPS=4,KW=4,VEC=4,WAVES=2"},
    {"16x4104x64:f32:TN:b3",
     "TYPE=2,OPA=1,OPB=0,MT=16,BN=512,BK=32,STAGES=2,WARPS=8,KW=2,VEC=4,WAVES=1"},
    {"29x640x1536:f32", "TYPE=2,OPA=0,OPB=0,MT=32,BN=64,BK=32,STAGES=4,WARPS=4,KW=4,VEC=2,WAVES=1"},
    {"2000x51x1475:f32:NT:b2",
     "TYPE=2,OPA=0,OPB=1,MT=64,BN=128,BK=32,STAGES=3,WARPS=4,KW=2,VEC=4,WAVES=1"},
    {"1000x17x999:f32:TT",
     "TYPE=2,OPA=0,OPB=0,MT=32,BN=256,BK=64,STAGES=2,WARPS=4,KW=1,VEC=4,WAVES=1"},
    {"3000x5x2000:f32:b3",
     "TYPE=2,OPA=1,OPB=1,MT=8,BN=512,BK=32,STAGES=2,WARPS=4,KW=1,VEC=4,WAVES=1"},
    {"777x9x4100:f32:TN",
     "TYPE=2,OPA=1,OPB=0,MT=16,BN=128,BK=128,STAGES=2,WARPS=8,KW=4,VEC=4,WAVES=1"},
    {"64x60x3001:f32:NT",
     "TYPE=2,OPA=0,OPB=1,MT=64,BN=64,BK=64,STAGES=4,WARPS=4,KW=2,VEC=4,WAVES=2"},
    /* C stored transposed from 28 slices of 3 rows in batches of 17 pieces: groups of 4
     * elements that span columns of C^T */
    {"3001x3x20000:f32:TN",
     "TYPE=2,OPA=1,OPB=0,MT=8,BN=128,BK=32,STAGES=2,WARPS=4,KW=4,VEC=4,WAVES=2"},
    {"3001x3x20000:f32:TN",
     "TYPE=2,OPA=1,OPB=0,MT=8,BN=128,BK=32,STAGES=2,WARPS=4,KW=4,VEC=4,WAVES=1,CLUSTER=1"},
};

/* The GPU cases are legal, serve their problems, and compile (NVRTC; sm_80 and sm_90 in turn,
 * CLUSTER 1 on sm_90). */
TEST(smallm_gpu_cases_are_legal_serve_their_problems_and_compile)
{
    at_device_info dev = smt_h100();
    char err[1024];
    enum { N = sizeof smt_cases / sizeof smt_cases[0] };
    th_compiled set[N];
    memset(set, 0, sizeof set);
    th_check_cases_legal(&tpl_smallm, &dev, smt_cases, N, __FILE__, __LINE__);
    if (th_failed())
        return;
    for (size_t i = 0; i < N; i++) {
        int cfg[TPL_MAX_PARAMS];
        CHECK_OK(tpl_config_parse(&tpl_smallm, smt_cases[i].config, cfg, err, sizeof err));
        th_compiled *s = &set[i];
        s->fam = &tpl_smallm;
        memcpy(s->cfg, cfg, sizeof cfg);
        snprintf(s->text, sizeof s->text, "%s", smt_cases[i].config);
        s->arch = i % 2 || cfg[smt_param("CLUSTER")] ? "sm_90" : "sm_80";
    }
    CHECK(th_compile_all(set, N));
    th_release_compiled(set, N);
}

GPU_TEST(smallm_configurations_verify_on_odd_problems)
{
    /* twice each: the slice counters must be left at zero for the next call */
    th_verify_cases_on_gpu(&tpl_smallm, smt_cases, sizeof smt_cases / sizeof smt_cases[0], 7, 2,
                           0);
}

/* ---- host values for the padded-operand test: multiples of 1/8 in [-1, 1], exact in FP16
 * and BF16 (so the host's double sums are exact and the kernel's only error is C's rounding) */

static uint16_t smt_bits(at_dtype t, int eighths)
{
    if (eighths == 0)
        return 0;
    double x = fabs(eighths / 8.0);
    uint16_t sign = eighths < 0 ? 0x8000u : 0;
    int e;
    double mant = frexp(x, &e);                         /* x = mant 2^e, mant in [0.5, 1) */
    if (t == AT_R_16BF)                                 /* 8 exponent bits, bias 127, 7 frac */
        return (uint16_t)(sign | (uint16_t)((e - 1 + 127) << 7) |
                          (uint16_t)((mant * 2 - 1) * 128));
    return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((mant * 2 - 1) * 1024));
}

/* A, B and C0 (na, nb, nc elements of type t) filled, in that order, with the eighths in
 * [-1, 1] that an LCG from seed draws. */
static void smt_fill_operands(at_dtype t, unsigned long long seed, uint16_t *hA, size_t na,
                              uint16_t *hB, size_t nb, uint16_t *hC0, size_t nc)
{
    for (size_t x = 0; x < na + nb + nc; x++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint16_t v = smt_bits(t, (int)((seed >> 33) % 17) - 8);
        if (x < na)
            hA[x] = v;
        else if (x < na + nb)
            hB[x - na] = v;
        else
            hC0[x - na - nb] = v;
    }
}

static double smt_value(at_dtype t, uint16_t h)
{
    int sign = h >> 15;
    double v;
    if (t == AT_R_16BF) {
        int exp = (h >> 7) & 255, frac = h & 127;
        v = exp == 0 ? ldexp(frac, -133) : exp == 255 ? NAN : ldexp(128 + frac, exp - 134);
    } else {
        int exp = (h >> 10) & 31, frac = h & 1023;
        v = exp == 0 ? ldexp(frac, -24) : exp == 31 ? NAN : ldexp(1024 + frac, exp - 25);
    }
    return sign ? -v : v;
}

/* Padded and offset operands (unaligned: element loads; aligned to 16 bytes: cp.async), alpha
 * and beta, batches, K slices, every op pair and both types, run through the family's run() and
 * compared with the host's exact product; C outside its m x n blocks comes back untouched. */
GPU_TEST(smallm_gpu_padded_offset_alpha_beta_batches)
{
    const tpl_family *f = &tpl_smallm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    const at_device_info *dev = ms_device(g);
    static const char *const texts[] = {
        "TYPE=1,OPA=0,OPB=0,MT=8,BN=128,BK=64,STAGES=4,WARPS=4,KW=1,VEC=8,WAVES=1",
        "TYPE=1,OPA=0,OPB=0,MT=32,BN=64,BK=64,STAGES=3,WARPS=8,KW=2,VEC=4,WAVES=2",
        "TYPE=1,OPA=0,OPB=0,MT=64,BN=128,BK=64,STAGES=4,WARPS=8,KW=2,VEC=8,WAVES=1",
    };
    enum { NT = sizeof texts / sizeof texts[0] };
    th_compiled set[NT * 8];
    int n = 0;
    memset(set, 0, sizeof set);
    for (int t = 0; t < NT; t++)
        for (int kind = 0; kind < 8; kind++) {
            th_compiled *s = &set[n];
            CHECK(th_parse_config(f, texts[t], s->cfg, __FILE__, __LINE__));
            s->cfg[smt_param("TYPE")] = kind >> 2;
            s->cfg[smt_param("OPA")] = (kind >> 1) & 1;
            s->cfg[smt_param("OPB")] = kind & 1;
            CHECK(f->valid(s->cfg, dev, NULL, 0));
            tpl_config_format(f, s->cfg, s->text, sizeof s->text);
            s->fam = f;
            s->arch = dev->arch;
            n++;
        }
    CHECK(th_compile_all(set, n));
    static const int cases[][10] = {
        /* m, n, k, batch, pad of lda, ldb, ldc (elements past the minimum), offset A, B, C */
        {1, 300, 517, 1, 0, 0, 0, 0, 0, 0},
        {3, 1032, 2000, 3, 8, 8, 5, 8, 8, 1},
        {17, 513, 999, 1, 1, 3, 2, 1, 3, 1},
        {29, 640, 1536, 3, 0, 0, 0, 0, 0, 0},
        {64, 264, 777, 2, 3, 5, 7, 2, 1, 3},
    };
    static const double ab[2][2] = {{1.25, 0.0}, {-0.75, 0.5}};
    int runs = 0;
    double worst = 0;
    for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++) {
        int m = cases[d][0], nn = cases[d][1], k = cases[d][2], batch = cases[d][3];
        for (int kind = 0; kind < 8 && !th_failed(); kind++) {
            at_dtype type = kind >> 2 ? AT_R_16BF : AT_R_16F;
            int opa = (kind >> 1) & 1, opb = kind & 1;
            long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? nn : k, bc = opb ? k : nn;
            long long lda = ac + cases[d][4], ldb = bc + cases[d][5], ldc = nn + cases[d][6];
            /* batch strides keep the operands' alignment: a multiple of 8 past the rows */
            long long sa = ar * lda + 8, sb = br * ldb + 8, sc = (long long)m * ldc + 5;
            size_t na = cases[d][7] + (size_t)(sa * batch), nb = cases[d][8] + (size_t)(sb * batch);
            size_t nc = cases[d][9] + (size_t)(sc * batch);
            uint16_t *hA = malloc(na * 2), *hB = malloc(nb * 2), *hC0 = malloc(nc * 2),
                     *hC = malloc(nc * 2);
            CHECK(hA && hB && hC0 && hC);
            if (hA && hB && hC0 && hC)
                smt_fill_operands(type, 1234567 + d * 17 + (unsigned long long)kind, hA, na, hB,
                                  nb, hC0, nc);
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A, B, C;
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * 2, &A));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * 2, &B));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 2, &C));
            CHECK(cu->MemcpyHtoD(A, hA, na * 2) == CUDA_SUCCESS);
            CHECK(cu->MemcpyHtoD(B, hB, nb * 2) == CUDA_SUCCESS);
            const uint16_t *a0 = hA + cases[d][7], *b0 = hB + cases[d][8];
            tpl_problem p = smt_problem(m, nn, k, type, opa, opb, batch);
            /* the exact products op(A) op(B), batch x m x n, in double */
            double *dot = calloc((size_t)batch * m * nn, sizeof *dot);
            CHECK(dot);
            for (int b = 0; b < batch; b++)
                for (int r = 0; r < m; r++)
                    for (int c = 0; c < nn; c++) {
                        const uint16_t *pa = a0 + b * sa, *pb = b0 + b * sb;
                        double sum = 0;
                        for (int q = 0; q < k; q++) {
                            uint16_t av = opa ? pa[(long long)q * lda + r] : pa[r * lda + q];
                            uint16_t bv = opb ? pb[c * ldb + q] : pb[(long long)q * ldb + c];
                            sum += smt_value(type, av) * smt_value(type, bv);
                        }
                        dot[((size_t)b * m + r) * nn + c] = sum;
                    }
            for (int v = 0; v < 2 && !th_failed(); v++) {
                double alpha = ab[v][0], beta = ab[v][1];
                for (int i = 0; i < n && !th_failed(); i++) {
                    if (!f->applicable(set[i].cfg, &p))
                        continue;
                    /* C = C0, with NaN in the products' blocks when beta = 0 (never read) */
                    memcpy(hC, hC0, nc * 2);
                    for (int b = 0; beta == 0.0 && b < batch; b++)
                        for (int r = 0; r < m; r++)
                            for (int c = 0; c < nn; c++)
                                hC[cases[d][9] + b * sc + (long long)r * ldc + c] = 0x7fffu;
                    CHECK(cu->MemcpyHtoD(C, hC, nc * 2) == CUDA_SUCCESS);
                    CUmodule mod;
                    CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                    at_exec ex;
                    ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
                    tpl_args args;
                    memset(&args, 0, sizeof args);
                    args.problem = p;
                    args.operand[TPL_GEMM_A] = (tpl_operand){A + 2 * cases[d][7], lda, sa};
                    args.operand[TPL_GEMM_B] = (tpl_operand){B + 2 * cases[d][8], ldb, sb};
                    args.operand[TPL_GEMM_C] = (tpl_operand){C + 2 * cases[d][9], ldc, sc};
                    args.scalar[TPL_GEMM_ALPHA] = alpha;
                    args.scalar[TPL_GEMM_BETA] = beta;
                    /* twice: the second call reuses the slice counters the first left, from
                     * the same C (with beta != 0 the first call's result would be read) */
                    at_status s = f->run(&ex, set[i].cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    if (s == AT_OK && cu->MemcpyHtoD(C, hC, nc * 2) != CUDA_SUCCESS)
                        s = AT_ERR_CUDA;
                    if (s == AT_OK)
                        s = f->run(&ex, set[i].cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    ex_release(&ex);
                    cu->ModuleUnload(mod);
                    CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                    CHECK(cu->MemcpyDtoH(hC, C, nc * 2) == CUDA_SUCCESS);
                    double num = 0, den = 0;
                    for (size_t x = 0; x < nc; x++) {
                        long long off = (long long)x - cases[d][9];
                        long long b = off >= 0 ? off / sc : -1, e = off - b * sc;
                        long long r = e / ldc, c = e % ldc;
                        if (!(off >= 0 && b < batch && r < m && c < nn)) {
                            CHECK_MSG(hC[x] == hC0[x], "%s: element %zu outside C changed",
                                      set[i].text, x);
                            continue;
                        }
                        double want = alpha * dot[((size_t)b * m + r) * nn + c];
                        if (beta != 0.0)
                            want += beta * smt_value(type, hC0[x]);
                        double got = smt_value(type, hC[x]);
                        num += (got - want) * (got - want);
                        den += want * want;
                    }
                    double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                    CHECK_MSG(e <= f->tolerance(&p), "%s %dx%dx%d b%d alpha %g beta %g: error %g",
                              set[i].text, m, nn, k, batch, alpha, beta, e);
                    worst = e / f->tolerance(&p) > worst ? e / f->tolerance(&p) : worst;
                    runs++;
                }
            }
            tpl_workset_free(cu, &ws);
            free(dot);
            free(hA);
            free(hB);
            free(hC0);
            free(hC);
        }
    }
    /* every case found its configurations: 5 cases x 8 kinds x 2 scalars */
    CHECK_EQ(runs, 5 * 8 * 2);
    printf("    %d runs against the host, worst %.3f of the tolerance\n", runs, worst);
    th_release_compiled(set, n);
    ms_close(g);
}

/* at_gemm routes the small-M calls to smallm with nothing stored (its claims, defaults fitted
 * to the kind, K slices, scratch), row- and column-major (the canonical m is a column-major
 * call's n), every op pair, FP16 and BF16, alpha and beta; results against the host's exact
 * product of exactly representable inputs, twice per call (the slice counters reused). */
GPU_TEST(smallm_api_serves_small_m_calls)
{
    at_status s;
    const cudrv *cu = cudrv_get(&s, NULL, 0);
    CUdevice cdev;
    CUcontext ctx;
    CHECK(cu && cu->Init(0) == CUDA_SUCCESS && cu->DeviceGet(&cdev, th_device()) == CUDA_SUCCESS &&
          cu->DevicePrimaryCtxRetain(&ctx, cdev) == CUDA_SUCCESS &&
          cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    char path[4300];
    snprintf(path, sizeof path, "%s/smallm_api.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    CHECK_OK(at_set_vendor(h, AT_VENDOR_OFF));
    /* user's m, n, k and order: the canonical small side is m (row-major) or n (column-major) */
    static const struct { int m, n, k; at_order order; } calls[] = {
        {8, 2048, 2048, AT_ROW_MAJOR}, {2048, 16, 2048, AT_COL_MAJOR},
        {1, 4096, 1024, AT_ROW_MAJOR}, {24, 1024, 4096, AT_ROW_MAJOR},
    };
    for (size_t c = 0; c < sizeof calls / sizeof calls[0] && !th_failed(); c++)
        for (int kind = 0; kind < 8 && !th_failed(); kind++) {
            at_dtype type = kind >> 2 ? AT_R_16BF : AT_R_16F;
            at_op opa = (kind >> 1) & 1 ? AT_OP_T : AT_OP_N, opb = kind & 1 ? AT_OP_T : AT_OP_N;
            int m = calls[c].m, n = calls[c].n, k = calls[c].k;
            int col = calls[c].order == AT_COL_MAJOR;
            /* op(A) is m x k, op(B) k x n, C m x n; stored row- or column-major, tight ld */
            int a_rows_contig = !col == (opa == AT_OP_N), b_rows_contig = !col == (opb == AT_OP_N);
            int lda = a_rows_contig ? k : m, ldb = b_rows_contig ? n : k, ldc = col ? m : n;
            size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
            uint16_t *hA = malloc(na * 2), *hB = malloc(nb * 2), *hC0 = malloc(nc * 2),
                     *hC = malloc(nc * 2);
            CHECK(hA && hB && hC0 && hC);
            if (hA && hB && hC0 && hC)
                smt_fill_operands(type, 99 + c * 8 + (unsigned long long)kind, hA, na, hB, nb,
                                  hC0, nc);
            CUdeviceptr dA = 0, dB = 0, dC = 0;
            CHECK(cu->MemAlloc(&dA, na * 2) == CUDA_SUCCESS &&
                  cu->MemAlloc(&dB, nb * 2) == CUDA_SUCCESS &&
                  cu->MemAlloc(&dC, nc * 2) == CUDA_SUCCESS &&
                  cu->MemcpyHtoD(dA, hA, na * 2) == CUDA_SUCCESS &&
                  cu->MemcpyHtoD(dB, hB, nb * 2) == CUDA_SUCCESS);
            double alpha = 0.75, beta = kind % 2 ? -0.5 : 0.0;
            /* the exact op(A) op(B), m x n row by row, from the inputs as doubles */
            double *fa = malloc(na * sizeof *fa), *fb = malloc(nb * sizeof *fb),
                   *prod = malloc(nc * sizeof *prod);
            CHECK(fa && fb && prod);
            for (size_t x = 0; x < na; x++)
                fa[x] = smt_value(type, hA[x]);
            for (size_t x = 0; x < nb; x++)
                fb[x] = smt_value(type, hB[x]);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double sum = 0;
                    for (int q = 0; q < k; q++)
                        sum += fa[a_rows_contig ? (size_t)i * lda + q : (size_t)q * lda + i] *
                               fb[b_rows_contig ? (size_t)q * ldb + j : (size_t)j * ldb + q];
                    prod[(size_t)i * n + j] = sum;
                }
            for (int rep = 0; rep < 2 && !th_failed(); rep++) {
                CHECK(cu->MemcpyHtoD(dC, hC0, nc * 2) == CUDA_SUCCESS);
                s = at_gemm(h, calls[c].order, opa, opb, m, n, k, type, alpha,
                            (const void *)(uintptr_t)dA, lda, (const void *)(uintptr_t)dB, ldb,
                            beta, (void *)(uintptr_t)dC, ldc);
                CHECK_MSG(s == AT_OK, "%s", at_errmsg(h));
                CHECK(cu->CtxSynchronize() == CUDA_SUCCESS &&
                      cu->MemcpyDtoH(hC, dC, nc * 2) == CUDA_SUCCESS);
                at_stats st;
                CHECK_OK(at_get_stats(h, &st));
                CHECK_STR(st.last_kernel, "smallm");
                double num = 0, den = 0;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        size_t ic = col ? (size_t)j * ldc + i : (size_t)i * ldc + j;
                        double want = alpha * prod[(size_t)i * n + j] +
                                      (beta != 0 ? beta * smt_value(type, hC0[ic]) : 0);
                        double got = smt_value(type, hC[ic]);
                        num += (got - want) * (got - want);
                        den += want * want;
                    }
                tpl_problem p = smt_problem(m, n, k, type, 0, 0, 1);
                double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                CHECK_MSG(e <= tpl_smallm.tolerance(&p), "%dx%dx%d %s type %d ops %d%d call %d: "
                          "error %g (%s)", m, n, k, col ? "col" : "row", (int)type, (int)opa,
                          (int)opb, rep + 1, e, st.last_config);
            }
            cu->MemFree(dA);
            cu->MemFree(dB);
            cu->MemFree(dC);
            free(fa);
            free(fb);
            free(prod);
            free(hA);
            free(hB);
            free(hC0);
            free(hC);
        }
    CHECK_OK(at_destroy(h));
    CUcontext popped;
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(cdev);
}
