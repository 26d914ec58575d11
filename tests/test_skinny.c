/* test_skinny.c: the skinny family (small M or N, small outputs over a deep K, small batched
 * products): its space and rules, K slices, built-in defaults per class and the family choice
 * (CPU); configurations on odd problems against the float64 reference, and at_gemm's calls of
 * its shape classes with padded, offset operands and beta (GPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "th_db.h"
#include "th_family.h"
#include "tpl.h"

extern const tpl_family tpl_skinny, tpl_tcgemm, tpl_matmul, tpl_dgemm, tpl_bgemm, tpl_smallm;

static int sk_param(const char *name)
{
    return tpl_param_index(&tpl_skinny, name);
}

static at_device_info sk_h100(void)
{
    return th_h100("GPU-sk");
}

/* ---------------- CPU tier ---------------- */

TEST(skinny_every_rejection_reason_is_reached)
{
    const tpl_family *f = &tpl_skinny;
    long long seen[16] = {0}, valid = 0;
    CHECK(tpl_skinny_n_reasons <= 16);
    if (!th_scan_reasons(f, NULL, tpl_skinny_reasons, tpl_skinny_n_reasons, seen, &valid,
                         __FILE__, __LINE__))
        return;
    /* a value outside the lists reaches the range rule */
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(f, f->default_config, cfg, err, sizeof err));
    cfg[sk_param("VEC")] = 3;
    CHECK(!f->valid(cfg, NULL, err, sizeof err));
    CHECK_STR(err, tpl_skinny_reasons[0]);
    seen[0]++;
    for (int r = 0; r < tpl_skinny_n_reasons; r++)
        CHECK_MSG(seen[r] > 0, "reason never reached: %s", tpl_skinny_reasons[r]);
    CHECK(valid > 1000);
}

/* Every valid configuration keeps the written limits: threads, loads, shared memory. */
TEST(skinny_valid_configurations_meet_the_written_limits)
{
    const tpl_family *f = &tpl_skinny;
    long long *idx = NULL, n = tpl_valid_configs(f, NULL, &idx);
    CHECK(n > 0);
    for (long long i = 0; i < n; i += 97) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[i], c);
        int threads = (c[sk_param("BM")] / c[sk_param("TM")]) *
                      (c[sk_param("BN")] / c[sk_param("TN")]) * c[sk_param("KT")];
        int acc = c[sk_param("TYPE")] == 1 ? 8 : 4;
        int type = c[sk_param("TYPE")];
        int esz = type == 1 ? 8 : type == 2 || type == 3 ? 2 : 4;
        long long stage = (long long)c[sk_param("BK")] * (c[sk_param("BM")] + c[sk_param("BN")]) *
                          acc;
        long long red = (long long)c[sk_param("KT")] * c[sk_param("BM")] * c[sk_param("BN")] * acc;
        CHECK(threads >= 64 && threads <= 512 && threads % 32 == 0);
        CHECK(stage <= 48 * 1024 - 16 && red <= 48 * 1024 - 16);
        CHECK(c[sk_param("VEC")] * esz <= 16);
        CHECK(c[sk_param("BK")] % c[sk_param("KT")] == 0);
    }
    free(idx);
}

/* The K slices: none when the tiles fill the waves or K is short; otherwise every slice
 * has at least 2 stages and none is empty, within the caps, and more slices for fewer
 * tiles. */
TEST(skinny_slices_fill_the_gpu_within_their_caps)
{
    int c[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(&tpl_skinny, tpl_skinny.default_config, c, err, sizeof err));
    int waves = c[sk_param("WAVES")];
    long long tile_elems = (long long)c[sk_param("BM")] * c[sk_param("BN")];
    long long resident = 132 * 4;
    CHECK_EQ(tpl_skinny_slices(c, resident * waves, 1000, resident), 1);
    CHECK_EQ(tpl_skinny_slices(c, 1, 3, resident), 1);
    int prev = 1 << 30;
    for (long long tiles = 1; tiles < resident * waves; tiles *= 3) {
        for (long long steps = 4; steps < 5000; steps = steps * 2 + 1) {
            int s = tpl_skinny_slices(c, tiles, steps, resident);
            CHECK(s >= 1 && s <= 256);
            CHECK(s * tile_elems <= 131072 || s == 1);
            if (s > 1) {
                long long per = (steps + s - 1) / s;
                CHECK_MSG(per >= 2, "tiles %lld steps %lld: %d slices", tiles, steps, s);
                CHECK_MSG((s - 1) * per < steps, "tiles %lld steps %lld: an empty slice", tiles,
                          steps);
            }
        }
        int s = tpl_skinny_slices(c, tiles, 4096, resident);
        CHECK(s <= prev);
        prev = s;
    }
    CHECK(tpl_skinny_slices(c, 1, 4096, resident) > 1);
}

/* Each built-in default serves its class for every type and op pair, its kind fitted (TYPE,
 * OPA, OPB) and its loads no wider than 16 bytes. */
TEST(skinny_defaults_serve_every_kind_and_class)
{
    at_device_info dev = sk_h100();
    static const long long shapes[][4] = {
        {1, 8192, 8192, 1}, {16, 4000, 3000, 1}, {4096, 5, 4096, 1}, {9000, 16, 300, 1},
        {40, 50, 20000, 1}, {64, 64, 64, 5000}, {33, 17, 29, 7}, {300, 200, 100, 1},
    };
    static const struct { at_dtype t; at_math m; int type; } kinds[] = {
        {AT_R_32F, AT_MATH_DEFAULT, 0}, {AT_R_32F, AT_MATH_TF32, 4}, {AT_R_64F, AT_MATH_DEFAULT, 1},
        {AT_R_16F, AT_MATH_DEFAULT, 2}, {AT_R_16BF, AT_MATH_DEFAULT, 3},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            for (int ops = 0; ops < 4; ops++) {
                tpl_problem p = {.n_dims = 3, .dims = {shapes[s][0], shapes[s][1], shapes[s][2]},
                                 .dtype = kinds[k].t, .math = kinds[k].m,
                                 .op_a = (at_op)(ops >> 1), .op_b = (at_op)(ops & 1),
                                 .batch = shapes[s][3]};
                int cfg[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN];
                const char *origin = NULL;
                CHECK_MSG(tpl_builtin_config(&tpl_skinny, &dev, &p, 1, cfg, text, &origin),
                          "shape %zu kind %zu ops %d: no default", s, k, ops);
                CHECK_EQ(cfg[sk_param("TYPE")], kinds[k].type);
                CHECK_EQ(cfg[sk_param("OPA")], ops >> 1);
                CHECK_EQ(cfg[sk_param("OPB")], ops & 1);
                CHECK(tpl_skinny.applicable(cfg, &p));
                int esz = kinds[k].type == 1 ? 8 : kinds[k].type == 2 || kinds[k].type == 3 ? 2 : 4;
                CHECK(cfg[sk_param("VEC")] * esz <= 16);
                /* a GEMV-like class keeps its small side in one tile */
                if (p.dims[0] <= 16)
                    CHECK(cfg[sk_param("BM")] >= p.dims[0]);
            }
}

/* FP32 with n of 17-32 over many output rows (64 or more 128-row tiles over the batch): the
 * narrow side in one tile column over a K of 256 or more, a register tile of at least 16 accumulators (the generic
 * row's 4 x 2 reads shared memory once per 4 FMAs), and the generic row as the next opinion the
 * trial times; the same n over few rows, TF32 math and FP64 keep their rows. */
TEST(skinny_fp32_narrow_n_over_many_rows_takes_wider_thread_tiles)
{
    at_device_info dev = sk_h100();
    static const long long shapes[][4] = {
        {11119, 17, 1775, 6}, {8192, 32, 4096, 1}, {3000, 20, 900, 4}, {9000, 24, 60, 1},
        {250, 20, 3306, 1}, {774, 20, 9394, 1}, {91, 19, 11731, 1},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ops = 0; ops < 4; ops++)
            for (int kind = 0; kind < 3; kind++) {
                const long long *sh = shapes[s];
                tpl_problem p = {.n_dims = 3, .dims = {sh[0], sh[1], sh[2]},
                                 .dtype = kind == 2 ? AT_R_64F : AT_R_32F,
                                 .math = kind == 1 ? AT_MATH_TF32 : AT_MATH_DEFAULT,
                                 .op_a = (at_op)(ops >> 1), .op_b = (at_op)(ops & 1),
                                 .batch = sh[3]};
                tpl_problem few = p;       /* the same kind over 100 rows */
                few.dims[0] = 100;
                int cfg[TPL_MAX_PARAMS], next[TPL_MAX_PARAMS], base[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN], next_text[TPL_CONFIG_LEN], base_text[TPL_CONFIG_LEN];
                CHECK(tpl_builtin_config(&tpl_skinny, &dev, &p, 0, cfg, text, NULL));
                CHECK(tpl_builtin_config(&tpl_skinny, &dev, &few, 0, base, base_text, NULL));
                CHECK(tpl_skinny.applicable(cfg, &p));
                long long rows_tiles = tpl_cdiv(sh[0], 128) * sh[3];
                int tm = cfg[sk_param("TM")], tn = cfg[sk_param("TN")];
                if (kind == 0 && rows_tiles >= 64 && sh[2] >= 256) {
                    CHECK_MSG(cfg[sk_param("BN")] >= sh[1] && tm * tn >= 16, "%lld x %lld: %s",
                              sh[0], sh[1], text);
                    CHECK(tpl_builtin_config_nth(&tpl_skinny, &dev, &p, 0, 1, next, next_text,
                                                 NULL));
                    CHECK_MSG(strcmp(next_text, base_text) == 0, "%lld x %lld: next %s, few %s",
                              sh[0], sh[1], next_text, base_text);
                } else if (sh[2] > 64) {
                    CHECK_MSG(strcmp(text, base_text) == 0, "%lld x %lld kind %d: %s against %s",
                              sh[0], sh[1], kind, text, base_text);
                }
            }
}

/* With nothing measured, the skinny family takes its classes (a narrow side, a short K, a small
 * output; on the tensor-core types only small calls, or a side of at most 8) from the type's
 * large-tile family and leaves it the rest; a measurement at
 * the exact shape decides over the rule, in either direction. */
TEST(skinny_family_choice_by_class_then_measurement)
{
    at_device_info dev = sk_h100();
    const tpl_family *tc[] = {&tpl_tcgemm, &tpl_skinny};
    const tpl_family *mm[] = {&tpl_matmul, &tpl_skinny};
    const tpl_family *dg[] = {&tpl_dgemm, &tpl_bgemm, &tpl_skinny};
    int measured = -1;
    tpl_problem gemv = {.n_dims = 3, .dims = {8, 8192, 8192}, .dtype = AT_R_16BF};
    tpl_problem tall = {.n_dims = 3, .dims = {8192, 3, 8192}, .dtype = AT_R_16F, .op_b = AT_OP_T};
    tpl_problem square = {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_16BF};
    tpl_problem tiny = {.n_dims = 3, .dims = {40, 50, 20000}};
    tpl_problem mid = {.n_dims = 3, .dims = {300, 400, 100}};
    tpl_problem small_batch = {.n_dims = 3, .dims = {32, 32, 32}, .dtype = AT_R_64F,
                               .batch = 8192};
    tpl_problem dgemv = {.n_dims = 3, .dims = {7, 3000, 3000}, .dtype = AT_R_64F};
    CHECK(lk_choose_family(NULL, &dev, &gemv, 0, tc, 2, &measured) == &tpl_skinny);
    CHECK_EQ(measured, 0);
    CHECK(lk_choose_family(NULL, &dev, &tall, 0, tc, 2, &measured) == &tpl_skinny);
    CHECK(lk_choose_family(NULL, &dev, &square, 0, tc, 2, &measured) == &tpl_tcgemm);
    CHECK(lk_choose_family(NULL, &dev, &tiny, 0, mm, 2, &measured) == &tpl_skinny);
    CHECK(lk_choose_family(NULL, &dev, &mid, 0, mm, 2, &measured) == &tpl_matmul);
    /* on the tensor-core types a narrow side of 9..32 only while the call is small */
    tpl_problem narrow_small = {.n_dims = 3, .dims = {24, 1000, 2000}, .dtype = AT_R_16F};
    tpl_problem narrow_large = {.n_dims = 3, .dims = {24, 8192, 8192}, .dtype = AT_R_16F};
    tpl_problem short_k = {.n_dims = 3, .dims = {3000, 3000, 20}, .dtype = AT_R_32F,
                           .math = AT_MATH_TF32};
    CHECK(lk_choose_family(NULL, &dev, &narrow_small, 0, tc, 2, &measured) == &tpl_skinny);
    CHECK(lk_choose_family(NULL, &dev, &narrow_large, 0, tc, 2, &measured) == &tpl_tcgemm);
    /* past 2^16 outputs (a short K: 2^20) the tensor-core tiles keep even a small call */
    tpl_problem narrow_wide = {.n_dims = 3, .dims = {20, 15591, 119}, .dtype = AT_R_16F};
    tpl_problem short_wide = {.n_dims = 3, .dims = {1177, 3337, 21}, .dtype = AT_R_16BF};
    tpl_problem short_mid = {.n_dims = 3, .dims = {300, 1000, 21}, .dtype = AT_R_16BF};
    CHECK(lk_choose_family(NULL, &dev, &narrow_wide, 0, tc, 2, &measured) == &tpl_tcgemm);
    CHECK(lk_choose_family(NULL, &dev, &short_wide, 0, tc, 2, &measured) == &tpl_tcgemm);
    CHECK(lk_choose_family(NULL, &dev, &short_mid, 0, tc, 2, &measured) == &tpl_skinny);
    CHECK(lk_choose_family(NULL, &dev, &short_k, 0, tc, 2, &measured) == &tpl_tcgemm);
    short_k.dtype = AT_R_64F;
    short_k.math = AT_MATH_DEFAULT;
    /* a short K: skinny for a small output, the large tiles for a large one (stores bound) */
    CHECK(lk_choose_family(NULL, &dev, &short_k, 0, dg, 3, &measured) == &tpl_dgemm);
    short_k.dims[0] = 300;
    short_k.dims[1] = 400;
    CHECK(lk_choose_family(NULL, &dev, &short_k, 0, dg, 3, &measured) == &tpl_skinny);
    short_k.dtype = AT_R_32F;
    CHECK(lk_choose_family(NULL, &dev, &short_k, 0, mm, 2, &measured) == &tpl_skinny);
    /* FP32: K <= 20 over one product of 2^24 outputs stays with the large tiles, K 33..64
     * goes to skinny at any output size, K 65 back to the large tiles */
    short_k.dims[0] = short_k.dims[1] = 4096;
    CHECK(lk_choose_family(NULL, &dev, &short_k, 0, mm, 2, &measured) == &tpl_matmul);
    short_k.dims[2] = 40;
    CHECK(lk_choose_family(NULL, &dev, &short_k, 0, mm, 2, &measured) == &tpl_skinny);
    short_k.dims[2] = 65;
    CHECK(lk_choose_family(NULL, &dev, &short_k, 0, mm, 2, &measured) == &tpl_matmul);
    /* FP64 small outputs (up to 2^16) over a K of at most 384: skinny; deeper: dgemm */
    tpl_problem small_out = {.n_dims = 3, .dims = {212, 104, 275}, .dtype = AT_R_64F};
    CHECK(lk_choose_family(NULL, &dev, &small_out, 0, dg, 3, &measured) == &tpl_skinny);
    small_out.dims[2] = 1275;
    CHECK(lk_choose_family(NULL, &dev, &small_out, 0, dg, 3, &measured) == &tpl_dgemm);
    /* FP64 with a narrow side over a deep K: DMMA split-K, unless the output is tiny */
    tpl_problem deep = {.n_dims = 3, .dims = {25, 616, 15828}, .dtype = AT_R_64F};
    CHECK(lk_choose_family(NULL, &dev, &deep, 0, dg, 3, &measured) == &tpl_dgemm);
    deep.dims[1] = 400;
    CHECK(lk_choose_family(NULL, &dev, &deep, 0, dg, 3, &measured) == &tpl_skinny);
    /* small FP64 batches stay with bgemm (its tuned winners), a FP64 GEMV goes to skinny */
    CHECK(lk_choose_family(NULL, &dev, &small_batch, 0, dg, 3, &measured) == &tpl_bgemm);
    CHECK(lk_choose_family(NULL, &dev, &dgemv, 0, dg, 3, &measured) == &tpl_skinny);

    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/skinny_choice.db", th_tmpdir());
    remove(path);
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    int cfg[TPL_MAX_PARAMS];
    char sk_text[TPL_CONFIG_LEN], tc_text[TPL_CONFIG_LEN];
    CHECK(tpl_builtin_config(&tpl_skinny, &dev, &gemv, 0, cfg, sk_text, NULL));
    CHECK(tpl_builtin_config(&tpl_tcgemm, &dev, &gemv, 0, cfg, tc_text, NULL));
    CHECK_OK(tdb_store_measured(d, "GPU-sk", &tpl_tcgemm, &gemv, tc_text, 0.05));
    CHECK_OK(tdb_store_measured(d, "GPU-sk", &tpl_skinny, &gemv, sk_text, 0.08));
    CHECK(lk_choose_family(d, &dev, &gemv, 0, tc, 2, &measured) == &tpl_tcgemm);
    CHECK_EQ(measured, 1);
    CHECK(tpl_builtin_config(&tpl_skinny, &dev, &square, 0, cfg, sk_text, NULL));
    CHECK(tpl_builtin_config(&tpl_tcgemm, &dev, &square, 0, cfg, tc_text, NULL));
    CHECK_OK(tdb_store_measured(d, "GPU-sk", &tpl_skinny, &square, sk_text, 0.5));
    CHECK(lk_choose_family(d, &dev, &square, 0, tc, 2, &measured) == &tpl_skinny);
    /* the layers: the first with a measurement decides, an empty one is passed over */
    db *layers[] = {NULL, d};
    CHECK(lk_choose_family_layers(layers, 2, &dev, &gemv, 0, tc, 2, &measured) == &tpl_tcgemm);
    CHECK_EQ(measured, 1);
    /* a claimed shape stays with the large-tile family tuned at a near shape, not a far one */
    char mm_text[TPL_CONFIG_LEN];
    tpl_problem far = {.n_dims = 3, .dims = {4096, 4096, 4096}};
    CHECK(tpl_builtin_config(&tpl_matmul, &dev, &far, 0, cfg, mm_text, NULL));
    CHECK_OK(tdb_store_measured(d, "GPU-sk", &tpl_matmul, &far, mm_text, 30.0));
    CHECK(lk_choose_family_layers(layers, 2, &dev, &tiny, 0, mm, 2, &measured) == &tpl_skinny);
    CHECK_EQ(measured, 0);
    tpl_problem near = {.n_dims = 3, .dims = {40, 56, 18000}};
    CHECK(tpl_builtin_config(&tpl_matmul, &dev, &near, 0, cfg, mm_text, NULL));
    CHECK_OK(tdb_store_measured(d, "GPU-sk", &tpl_matmul, &near, mm_text, 0.02));
    CHECK(lk_choose_family_layers(layers, 2, &dev, &tiny, 0, mm, 2, &measured) == &tpl_matmul);
    CHECK_EQ(measured, 0);
    db_close(d);
}

/* The families a GEMM call chooses among: its type's large-tile family first, the claiming
 * families in registry order (smallm before skinny), and bgemm for a batch only. */
TEST(skinny_gemm_candidates_per_kind)
{
    const tpl_family *f[16];
    tpl_problem bf = {.n_dims = 3, .dims = {8, 4096, 4096}, .dtype = AT_R_16BF};
    int n = lk_gemm_families(&bf, NULL, f, 16);
    CHECK(n == 3 && f[0] == &tpl_tcgemm && f[1] == &tpl_smallm && f[2] == &tpl_skinny);
    tpl_problem sg = {.n_dims = 3, .dims = {64, 64, 64}};
    n = lk_gemm_families(&sg, NULL, f, 16);
    CHECK(n == 3 && f[0] == &tpl_matmul && f[1] == &tpl_smallm && f[2] == &tpl_skinny);
    sg.batch = 100;
    n = lk_gemm_families(&sg, NULL, f, 16);
    CHECK(n == 4 && f[0] == &tpl_matmul && f[1] == &tpl_bgemm && f[2] == &tpl_smallm &&
          f[3] == &tpl_skinny);
    tpl_problem dg = {.n_dims = 3, .dims = {64, 64, 64}, .dtype = AT_R_64F};
    CHECK_STR(lk_gemm_main_family(&dg), "dgemm");
    tpl_problem tf = {.n_dims = 3, .dims = {64, 64, 64}, .dtype = AT_R_32F, .math = AT_MATH_TF32};
    CHECK_STR(lk_gemm_main_family(&tf), "tcgemm");
    CHECK_EQ(lk_gemm_families(&tf, "dgemm", f, 1), 1);
    CHECK(f[0] == &tpl_dgemm);
}

/* ---------------- GPU tier ---------------- */

/* Odd problems for every type and op pair, each at a configuration picked to reach a path:
 * vector loads and their scalar fallback, a one-row tile, K groups, K slices summed by the last
 * block (deep K over few tiles), batches, k shorter than one stage. */
static const th_case sk_cases[] = {
    {"33x70x29", "TYPE=0,OPA=0,OPB=0,BM=32,BN=64,BK=32,TM=4,TN=4,KT=2,VEC=4,WAVES=2"},
    {"1x515x3001:NT", "TYPE=0,OPA=0,OPB=1,BM=1,BN=128,BK=64,TM=1,TN=4,KT=8,VEC=4,WAVES=2"},
    {"5x700x4099:tf32:TN", "TYPE=4,OPA=1,OPB=0,BM=8,BN=64,BK=32,TM=8,TN=2,KT=8,VEC=4,WAVES=1"},
    {"40x50x20000:TT", "TYPE=0,OPA=1,OPB=1,BM=32,BN=32,BK=32,TM=2,TN=4,KT=2,VEC=4,WAVES=4"},
    {"17x35x14526:f64", "TYPE=1,OPA=0,OPB=0,BM=32,BN=32,BK=16,TM=2,TN=4,KT=2,VEC=2,WAVES=2"},
    {"3001x7x999:f64:NT", "TYPE=1,OPA=0,OPB=1,BM=64,BN=8,BK=16,TM=4,TN=2,KT=4,VEC=2,WAVES=2"},
    {"16x1000x777:f16", "TYPE=2,OPA=0,OPB=0,BM=16,BN=128,BK=32,TM=8,TN=4,KT=4,VEC=8,WAVES=2"},
    {"3758x18x5758:f16:TT", "TYPE=2,OPA=1,OPB=1,BM=64,BN=32,BK=32,TM=4,TN=4,KT=2,VEC=8,WAVES=2"},
    {"8x4097x8191:bf16:NT", "TYPE=3,OPA=0,OPB=1,BM=8,BN=64,BK=64,TM=8,TN=2,KT=8,VEC=8,WAVES=2"},
    {"37x48x102:bf16:TT:b333", "TYPE=3,OPA=1,OPB=1,BM=32,BN=32,BK=32,TM=2,TN=4,KT=2,VEC=8,WAVES=2"},
    {"64x64x64:bf16:b77", "TYPE=3,OPA=0,OPB=0,BM=64,BN=64,BK=16,TM=4,TN=4,KT=1,VEC=8,WAVES=2"},
    {"19x23x5:f64:TN:b9", "TYPE=1,OPA=1,OPB=0,BM=16,BN=16,BK=8,TM=1,TN=2,KT=1,VEC=1,WAVES=2"},
    {"9x13x2001:b5", "TYPE=0,OPA=0,OPB=0,BM=16,BN=16,BK=64,TM=1,TN=1,KT=2,VEC=1,WAVES=2"},
    {"3001x17x777:NT:b3", "TYPE=0,OPA=0,OPB=1,BM=32,BN=32,BK=16,TM=4,TN=4,KT=2,VEC=4,WAVES=8"},
    {"2049x29x1503:bf16:NT", "TYPE=3,OPA=0,OPB=1,BM=32,BN=32,BK=32,TM=4,TN=2,KT=4,VEC=8,WAVES=4"},
};

TEST(skinny_gpu_cases_are_legal_and_serve_their_problems)
{
    at_device_info dev = sk_h100();
    th_check_cases_legal(&tpl_skinny, &dev, sk_cases, sizeof sk_cases / sizeof sk_cases[0],
                         __FILE__, __LINE__);
}

/* The kernel's logic without a GPU: tests/skinny_host.cpp runs templates/skinny.cu with one
 * POSIX thread per CUDA thread on odd sizes, padded and odd leading dimensions (the vector and
 * the element loads), batch gaps, K slices summed by the last block and beta 0 over NaN, against
 * a float64 product; the configurations cover every op pair, FP32 and FP64, the loads of an
 * operand stored along K in runs of a row (A of op N, B of op T) and in single elements, K
 * groups 1-8 and tiles of 4-64 rows. Each is a legal configuration of the family. Skipped
 * without a C++ compiler. */
TEST(skinny_kernel_loaders_and_slices_on_the_cpu)
{
    static const char *const cfgs[] = {
        "TYPE=0,OPA=0,OPB=1,BM=32,BN=32,BK=32,TM=4,TN=2,KT=4,VEC=4",
        "TYPE=0,OPA=0,OPB=0,BM=16,BN=32,BK=16,TM=4,TN=4,KT=2,VEC=4",
        "TYPE=0,OPA=1,OPB=1,BM=32,BN=32,BK=16,TM=4,TN=4,KT=2,VEC=4",
        "TYPE=1,OPA=0,OPB=1,BM=8,BN=16,BK=64,TM=4,TN=2,KT=8,VEC=2",
        "TYPE=0,OPA=1,OPB=0,BM=4,BN=32,BK=64,TM=2,TN=4,KT=8,VEC=4",
        "TYPE=1,OPA=0,OPB=0,BM=64,BN=16,BK=8,TM=8,TN=2,KT=1,VEC=1",
        "TYPE=0,OPA=0,OPB=1,BM=32,BN=8,BK=16,TM=8,TN=2,KT=4,VEC=4",
    };
    enum { N = sizeof cfgs / sizeof cfgs[0] };
    at_device_info dev = sk_h100();
    for (size_t i = 0; i < N; i++) {
        char text[TPL_CONFIG_LEN], why[256];
        int cfg[TPL_MAX_PARAMS];
        snprintf(text, sizeof text, "%s,WAVES=1", cfgs[i]);
        CHECK_OK(tpl_config_parse(&tpl_skinny, text, cfg, why, sizeof why));
        CHECK_MSG(tpl_skinny.valid(cfg, &dev, why, sizeof why), "%s: %s", cfgs[i], why);
    }
    th_run_host_emulator("skinny_host.cpp", cfgs, N, ',');
}

GPU_TEST(skinny_configurations_verify_on_odd_problems)
{
    /* twice each: the slice counters must be left at zero for the next call */
    th_verify_cases_on_gpu(&tpl_skinny, sk_cases, sizeof sk_cases / sizeof sk_cases[0], 5, 2, 0);
}
