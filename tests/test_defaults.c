/* test_defaults.c: the built-in choices per architecture, kind and shape class
 * (templates/defaults.c and each GEMM family's defaults table): every kind has a
 * usable choice on sm_90 and sm_80, the rows follow their rules, the lookup serves them. */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "lookup.h"
#include "tcgemm.h"
#include "tpl.h"

extern const tpl_family tpl_tcgemm, tpl_dgemm, tpl_matmul, tpl_bgemm;

/* An H200-like (sm_90) or A100-like (sm_80) device. */
static at_device_info df_device(int cc_major)
{
    at_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.uuid, sizeof d.uuid, "GPU-defaults-%d", cc_major);
    snprintf(d.name, sizeof d.name, "test sm_%d0", cc_major);
    d.cc_major = cc_major;
    d.sm_count = cc_major == 9 ? 132 : 108;
    d.smem_per_block_optin = cc_major == 9 ? 232448 : 166912;
    d.smem_per_sm = cc_major == 9 ? 233472 : 167936;
    d.regs_per_block = 65536;
    d.regs_per_sm = 65536;
    d.max_threads_per_block = 1024;
    d.max_threads_per_sm = 2048;
    tpl_arch_name(cc_major, 0, d.arch, sizeof d.arch);
    return d;
}

static tpl_problem df_gemm(long long m, long long n, long long k, at_dtype t, at_math math,
                           int op_a, int op_b, long long batch)
{
    tpl_problem p = {.n_dims = 3, .dims = {m, n, k}, .dtype = t, .math = math,
                     .op_a = op_a ? AT_OP_T : AT_OP_N, .op_b = op_b ? AT_OP_T : AT_OP_N,
                     .batch = batch};
    return p;
}

/* Value of parameter name in cfg. */
static int df_value(const tpl_family *f, const int *cfg, const char *name)
{
    int i = tpl_param_index(f, name);
    return i < 0 ? -1 : cfg[i];
}

static const long long df_shapes[][3] = {
    {4096, 4096, 4096}, {4097, 4097, 4097}, {1024, 1024, 16384}, {256, 256, 256},
    {64, 8192, 8192}, {8192, 16, 8192}, {3000, 200, 6000}, {17, 33, 4099},
};
#define DF_N_SHAPES ((int)(sizeof df_shapes / sizeof df_shapes[0]))

TEST(defaults_tensor_core_kinds_have_an_sm90_choice)
{
    at_device_info h200 = df_device(9), a100 = df_device(8);
    static const at_dtype types[3] = {AT_R_16BF, AT_R_16F, AT_R_32F};
    for (int t = 0; t < 3; t++)
        for (int ops = 0; ops < 4; ops++)
            for (int s = 0; s < DF_N_SHAPES; s++) {
                tpl_problem p = df_gemm(df_shapes[s][0], df_shapes[s][1], df_shapes[s][2],
                                        types[t], types[t] == AT_R_32F ? AT_MATH_TF32 : 0,
                                        ops >> 1, ops & 1, 1);
                int cfg[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN], label[96];
                const char *origin = NULL;
                tpl_problem_format(&p, label, sizeof label);
                CHECK_MSG(tpl_builtin_config(&tpl_tcgemm, &h200, &p, 0, cfg, text, &origin),
                          "no sm_90 choice for %s", label);
                /* a Hopper row, not the portable PATH 80 default */
                CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 90, "%s on sm_90: %s (%s)",
                          label, text, origin ? origin : "?");
                CHECK(strcmp(origin, "default") != 0);
                CHECK(tpl_config_usable(&tpl_tcgemm, &h200, text, &p, 0, cfg));
                /* a transposed operand of a 16-bit type is read as stored, not packed */
                CHECK_EQ(df_value(&tpl_tcgemm, cfg, "OPB"), types[t] != AT_R_32F && (ops & 1));
                CHECK_EQ(df_value(&tpl_tcgemm, cfg, "OPA"), types[t] != AT_R_32F && (ops >> 1));
                CHECK_MSG(tpl_builtin_config(&tpl_tcgemm, &a100, &p, 0, cfg, text, &origin),
                          "no sm_80 choice for %s", label);
                CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 80, "%s on sm_80: %s", label,
                          text);
                /* deterministic mode gets a choice too (split-K reduces in order) */
                CHECK(tpl_builtin_config(&tpl_tcgemm, &h200, &p, 1, cfg, text, &origin));
            }
}

TEST(defaults_small_tensor_core_batches_launch_once)
{
    at_device_info h200 = df_device(9);
    static const at_dtype types[3] = {AT_R_16BF, AT_R_16F, AT_R_32F};
    for (int t = 0; t < 3; t++)
        for (int big = 0; big < 2; big++) {
            long long s = big ? 4096 : 128;
            tpl_problem p = df_gemm(s, s, 64, types[t], types[t] == AT_R_32F ? AT_MATH_TF32 : 0,
                                    0, 1, big ? 4 : 1024);
            int cfg[TPL_MAX_PARAMS];
            char text[TPL_CONFIG_LEN];
            CHECK(tpl_builtin_config(&tpl_tcgemm, &h200, &p, 0, cfg, text, NULL));
            /* small products: PATH 90 BATCH 1 launches every product at once without split-K;
             * a few products of a wave of tiles or more each launch the Hopper kernel per
             * product */
            CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 90, "%s", text);
            CHECK_MSG(df_value(&tpl_tcgemm, cfg, "BATCH") == !big, "%s", text);
            if (!big)
                CHECK_EQ(df_value(&tpl_tcgemm, cfg, "SPLITK"), 1);
        }
}

/* The sm_90 batch rows (m x n x k x batch, the weakest batched calls of bench_calls on PATH 80
 * and issue 33's 128 x 128 x 64 x 1024), every type and op pair: PATH 90 BATCH 1 without split-K,
 * its tile by the product's size (64 rows for m <= 64, 64 columns for n <= 64, else 128 x 128),
 * usable as fitted (valid on the H200 and serving the problem), a 16-bit op-T operand read as
 * stored; PATH 80's one-launch batch among the next choices (the 128 x 128 BATCH 1 row first
 * where a narrow side took the first); PATH 80 on an A100; a single product never BATCH 1. */
TEST(defaults_sm90_batches_launch_once_on_path90)
{
    at_device_info h200 = df_device(9), a100 = df_device(8);
    static const long long shapes[][4] = {
        {6444, 26, 90, 212}, {74, 2314, 68, 76}, {1138, 54, 444, 60}, {644, 26, 4102, 72},
        {22, 946, 102, 215}, {112, 1614, 172, 77}, {59, 496, 181, 1520}, {46, 143, 299, 683},
        {4755, 268, 16, 96}, {279, 124, 1218, 308}, {1259, 337, 2034, 33}, {128, 128, 64, 1024},
    };
    static const at_dtype types[3] = {AT_R_16BF, AT_R_16F, AT_R_32F};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 3; t++)
            for (int ops = 0; ops < 4; ops++) {
                tpl_problem p = df_gemm(shapes[s][0], shapes[s][1], shapes[s][2], types[t],
                                        types[t] == AT_R_32F ? AT_MATH_TF32 : 0, ops >> 1,
                                        ops & 1, shapes[s][3]);
                int cfg[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN], label[96];
                tpl_problem_format(&p, label, sizeof label);
                CHECK(tpl_builtin_config(&tpl_tcgemm, &h200, &p, 0, cfg, text, NULL));
                /* a side under 50 or a K under 32: PATH 80 (measured: tcgemm_defaults.c) */
                int small = shapes[s][0] < 50 || shapes[s][1] < 50 || shapes[s][2] < 32;
                if (small) {
                    CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 80, "%s: %s", label, text);
                    continue;
                }
                CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 90 &&
                              df_value(&tpl_tcgemm, cfg, "BATCH") == 1 &&
                              df_value(&tpl_tcgemm, cfg, "SPLITK") == 1, "%s: %s", label, text);
                CHECK_MSG(tpl_config_usable(&tpl_tcgemm, &h200, text, &p, 0, cfg), "%s: %s",
                          label, text);
                int bm = shapes[s][0] <= 64 ? 64 : 128;
                int bn = shapes[s][0] > 64 && shapes[s][1] <= 64 ? 64 : 128;
                CHECK_MSG(df_value(&tpl_tcgemm, cfg, "BM") == bm &&
                              df_value(&tpl_tcgemm, cfg, "BN") == bn, "%s: %s", label, text);
                CHECK_EQ(df_value(&tpl_tcgemm, cfg, "OPB"), types[t] != AT_R_32F && (ops & 1));
                CHECK_EQ(df_value(&tpl_tcgemm, cfg, "OPA"), types[t] != AT_R_32F && (ops >> 1));
                int path80 = 0;
                for (int nth = 1; nth < 4 && !path80; nth++)
                    path80 = tpl_builtin_config_nth(&tpl_tcgemm, &h200, &p, 0, nth, cfg, text,
                                                    NULL) &&
                             df_value(&tpl_tcgemm, cfg, "PATH") == 80;
                CHECK_MSG(path80, "%s: no PATH 80 among the next choices", label);
                CHECK(tpl_builtin_config(&tpl_tcgemm, &a100, &p, 0, cfg, text, NULL));
                CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 80, "%s on sm_80: %s", label,
                          text);
                p.batch = 1;
                CHECK(tpl_builtin_config(&tpl_tcgemm, &h200, &p, 0, cfg, text, NULL));
                CHECK_MSG(df_value(&tpl_tcgemm, cfg, "BATCH") == 0, "%s single: %s", label,
                          text);
            }
}

TEST(defaults_split_k_only_for_few_tiles_and_deep_k)
{
    at_device_info h200 = df_device(9);
    for (int s = 0; s < DF_N_SHAPES; s++) {
        tpl_problem p = df_gemm(df_shapes[s][0], df_shapes[s][1], df_shapes[s][2], AT_R_16BF, 0,
                                0, 0, 1);
        int cfg[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        CHECK(tpl_builtin_config(&tpl_tcgemm, &h200, &p, 0, cfg, text, NULL));
        long long tiles = tpl_cdiv(p.dims[0], 128) * tpl_cdiv(p.dims[1], 128);
        int split = df_value(&tpl_tcgemm, cfg, "SPLITK");
        /* the wave-fill split (SPLITK 0) of 128 x 256 tiles where its rule pays on 132 SMs for
         * less than a wave of them (past the m, n <= 64 rows); else the wave-fill split-K rule over 128 x 128 tiles, one block
         * per SM: the smallest split whose blocks fill 85% of 132, slices of at least 128 K and
         * 4 K steps of 64 */
        long long units256 = tiles / tpl_cdiv(p.dims[1], 128) * tpl_cdiv(p.dims[1], 256);
        int wave = p.dims[0] > 64 && p.dims[1] > 64 && units256 < 132 &&
                   tc_wave_fill_pays(units256, tpl_cdiv(p.dims[2], 64), 132);
        if (wave) {
            CHECK_MSG(split == 0 && df_value(&tpl_tcgemm, cfg, "BN") == 256,
                      "%lldx%lldx%lld: %s, want the wave-fill split of 128 x 256", p.dims[0],
                      p.dims[1], p.dims[2], text);
            continue;
        }
        int want = 1;
        if (tiles <= 64 && p.dims[2] >= 2048)
            for (int v = 2; v <= 16 && tiles * want * 100 < 132 * TPL_WAVE_FILL_PERCENT; v *= 2)
                if (p.dims[2] / v >= TPL_WAVE_MIN_SLICE_K && p.dims[2] >= 4LL * v * 64)
                    want = v;
        CHECK_MSG(split == want, "%lldx%lldx%lld: SPLITK %d, want %d", p.dims[0], p.dims[1],
                  p.dims[2], split, want);
        /* 128 x 256 tiles only where they fill more than one wave of the GPU */
        if (split == 1)
            CHECK_EQ(df_value(&tpl_tcgemm, cfg, "BN") == 256 ||
                         df_value(&tpl_tcgemm, cfg, "BM") == 256,
                     tiles > 264);
    }
}

TEST(defaults_fp64_and_fp32_follow_the_ops_and_batch)
{
    at_device_info devs[2] = {df_device(9), df_device(8)};
    for (int d = 0; d < 2; d++)
        for (int ops = 0; ops < 4; ops++)
            for (int s = 0; s < DF_N_SHAPES; s++)
                for (int b = 0; b < 2; b++) {
                    long long batch = b ? 16 : 1;
                    const long long *sh = df_shapes[s];
                    tpl_problem pd = df_gemm(sh[0], sh[1], sh[2], AT_R_64F, 0, ops >> 1, ops & 1,
                                             batch);
                    tpl_problem pf = df_gemm(sh[0], sh[1], sh[2], AT_R_32F, 0, ops >> 1, ops & 1,
                                             batch);
                    int cfg[TPL_MAX_PARAMS];
                    char text[TPL_CONFIG_LEN], label[96];
                    const char *origin = NULL;
                    tpl_problem_format(&pd, label, sizeof label);
                    CHECK_MSG(tpl_builtin_config(&tpl_dgemm, &devs[d], &pd, 0, cfg, text, &origin),
                              "dgemm %s", label);
                    CHECK_EQ(df_value(&tpl_dgemm, cfg, "OPA"), ops >> 1);
                    CHECK_EQ(df_value(&tpl_dgemm, cfg, "OPB"), ops & 1);
                    /* a tensor-core (DMMA) row of the device's architecture */
                    CHECK_MSG(df_value(&tpl_dgemm, cfg, "PATH") == 1, "dgemm %s: %s", label, text);
                    /* sm_90: m16n8k8 128 x 128 tiles where they fill a wave, else 64 x 64 */
                    long long tiles = tpl_cdiv(sh[0], 128) * tpl_cdiv(sh[1], 128) * batch;
                    if (d == 0 && tiles > 132)
                        CHECK_MSG(df_value(&tpl_dgemm, cfg, "MMA") == 1688, "dgemm %s on sm_90: %s",
                                  label, text);
                    /* (sm_90: a side of at most 64 over a deep K takes a narrow 32-wide tile) */
                    int narrow = d == 0 && sh[2] >= 1024 &&
                                 ((sh[0] <= 64 && df_value(&tpl_dgemm, cfg, "BM") == 32) ||
                                  (sh[1] <= 64 && df_value(&tpl_dgemm, cfg, "BN") == 32));
                    if (tiles <= 132)
                        CHECK_MSG(df_value(&tpl_dgemm, cfg, "BM") == 64 || tiles > 8 || narrow,
                                  "dgemm %s: %s", label, text);
                    tpl_problem_format(&pf, label, sizeof label);
                    CHECK_MSG(tpl_builtin_config(&tpl_matmul, &devs[d], &pf, 0, cfg, text, &origin),
                              "matmul %s", label);
                    CHECK_EQ(df_value(&tpl_matmul, cfg, "OPA"), ops >> 1);
                    CHECK_EQ(df_value(&tpl_matmul, cfg, "OPB"), ops & 1);
                    CHECK_EQ(df_value(&tpl_matmul, cfg, "BATCH"), batch > 1);
                    CHECK_MSG(strcmp(origin, "default") != 0, "matmul %s: %s", label, origin);
                }
}

TEST(defaults_small_batches_by_product_size)
{
    at_device_info h200 = df_device(9);
    static const long long sizes[] = {16, 32, 50, 64, 100, 128};
    for (int t = 0; t < 2; t++)
        for (int ops = 0; ops < 4; ops++)
            for (int i = 0; i < 6; i++) {
                long long s = sizes[i];
                tpl_problem p = df_gemm(s, s, s, t ? AT_R_64F : AT_R_32F, 0, ops >> 1, ops & 1,
                                        4096);
                int cfg[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN];
                CHECK(tpl_builtin_config(&tpl_bgemm, &h200, &p, 0, cfg, text, NULL));
                CHECK_EQ(df_value(&tpl_bgemm, cfg, "TYPE"), t);
                CHECK_EQ(df_value(&tpl_bgemm, cfg, "OPA"), ops >> 1);
                /* the tile never exceeds the product by more than one step of 2 */
                int bm = df_value(&tpl_bgemm, cfg, "BM");
                CHECK_MSG(bm <= 2 * s || bm == 16, "%lld^3: BM %d (%s)", s, bm, text);
                /* products of 32 x 32 and more take more than the 16 x 16 fallback */
                if (s >= 32)
                    CHECK_MSG(bm >= 32, "%lld^3 (%s): %s", s, t ? "f64" : "f32", text);
            }
}

TEST(defaults_rows_match_their_fields)
{
    at_device_info h200 = df_device(9), a100 = df_device(8);
    tpl_default r = {.cc_min = 90, .cc_max = 90, .dtypes = TPL_BIT(AT_R_16BF),
                     .ops = TPL_OPS(1, 0), .batch = TPL_SINGLE, .max_mn = 4096,
                     .max_tiles = 100, .min_k = 1000};
    tpl_problem p = df_gemm(1024, 1024, 2000, AT_R_16BF, 0, 1, 0, 1);
    CHECK(tpl_default_matches(&r, &h200, &p));
    CHECK(!tpl_default_matches(&r, &a100, &p));             /* architecture */
    tpl_problem q = p;
    q.dtype = AT_R_16F;
    CHECK(!tpl_default_matches(&r, &h200, &q));             /* type */
    q = p;
    q.op_a = AT_OP_N;
    CHECK(!tpl_default_matches(&r, &h200, &q));             /* ops */
    q = p;
    q.batch = 2;
    CHECK(!tpl_default_matches(&r, &h200, &q));             /* batch class */
    q = p;
    q.dims[2] = 999;
    CHECK(!tpl_default_matches(&r, &h200, &q));             /* K depth */
    q = p;
    q.dims[0] = 1409;                                       /* 12 x 8 = 96 tiles: still in */
    CHECK(tpl_default_matches(&r, &h200, &q));
    q.dims[0] = 1665;                                       /* 14 x 8 = 112 tiles: out */
    CHECK(!tpl_default_matches(&r, &h200, &q));
    tpl_default any = {.config = "x"};
    CHECK(tpl_default_matches(&any, &a100, &q));
    CHECK(tpl_default_matches(&any, NULL, &q));
}

TEST(defaults_serve_the_lookup_without_a_database)
{
    at_device_info h200 = df_device(9);
    tpl_problem p = df_gemm(4096, 4096, 4096, AT_R_16BF, 0, 1, 0, 1);
    int cfg[TPL_MAX_PARAMS], want[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN], expect[TPL_CONFIG_LEN];
    CHECK(lk_choose(NULL, &h200, &tpl_tcgemm, &p, 0, cfg, text) == AT_LOOKUP_DEFAULT);
    CHECK(tpl_builtin_config(&tpl_tcgemm, &h200, &p, 0, want, expect, NULL));
    CHECK(strcmp(text, expect) == 0);
    CHECK(memcmp(cfg, want, sizeof cfg[0] * (size_t)tpl_tcgemm.n_params) == 0);
}

/* The wave-fill split-K rule (tpl_wave_split) on the FP64 rows: the split is the smallest of
 * the family's values whose blocks fill most of a wave, never a slice under the minimum K, 1
 * where the tiles already fill the GPU, and the configuration it yields is usable. Each
 * expectation is worked out here from the tile count, not read back from the rule. */
TEST(defaults_wave_fill_split_fills_a_wave_with_deep_slices)
{
    at_device_info h200 = df_device(9);
    static const long long shapes[][3] = {
        {2000, 64, 4096}, {1000, 100, 8192}, {400, 180, 9820}, {55, 600, 12500},
        {1000, 54, 2573}, {64, 64, 16384}, {300, 300, 600}, {1024, 1024, 4096},
    };
    static const int values[] = {1, 2, 4, 8, 16, 32};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const long long *sh = shapes[s];
        tpl_problem p = df_gemm(sh[0], sh[1], sh[2], AT_R_64F, 0, (int)s & 1, 0, 1);
        int cfg[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN], label[96];
        const char *origin = NULL;
        tpl_problem_format(&p, label, sizeof label);
        CHECK(tpl_builtin_config(&tpl_dgemm, &h200, &p, 0, cfg, text, &origin));
        int split = df_value(&tpl_dgemm, cfg, "SPLITK");
        long long tiles = tpl_cdiv(sh[0], df_value(&tpl_dgemm, cfg, "BM")) *
                          tpl_cdiv(sh[1], df_value(&tpl_dgemm, cfg, "BN"));
        long long wide = tpl_cdiv(sh[0], 128) * tpl_cdiv(sh[1], 128);
        if (wide > 32 || sh[2] < 512) {
            CHECK_MSG(split == 1, "%s: %s", label, text);       /* not a fill row's class */
            continue;
        }
        /* 64 x 64 tiles of a block per SM (MINB 1): a wave is 132 blocks; a side of at most 64
         * over at most 16 wide tiles and K >= 1024: 32 x 128 (m) or 128 x 32 (n), MINB 1 too */
        int narrow_m = sh[0] <= 64 && wide <= 16 && sh[2] >= 1024;
        int narrow_n = !narrow_m && sh[1] <= 64 && wide <= 16 && sh[2] >= 1024;
        CHECK_EQ(df_value(&tpl_dgemm, cfg, "BM"), narrow_m ? 32 : narrow_n ? 128 : 64);
        CHECK_EQ(df_value(&tpl_dgemm, cfg, "BN"), narrow_m ? 128 : narrow_n ? 32 : 64);
        int want = 1;
        for (int v = 0; v < 6; v++) {
            int usable = values[v] == 1 ||
                         (sh[2] / values[v] >= TPL_WAVE_MIN_SLICE_K && tiles <= 66 &&
                          sh[2] >= 4LL * values[v] * 16);
            if (!usable)
                break;
            want = values[v];
            if (tiles * values[v] * 100 >= 132LL * TPL_WAVE_FILL_PERCENT)
                break;
        }
        CHECK_MSG(split == want, "%s: SPLITK %d, want %d (%lld tiles): %s", label, split, want,
                  tiles, text);
        CHECK(tpl_config_usable(&tpl_dgemm, &h200, text, &p, 0, cfg));
        CHECK(sh[2] / split >= TPL_WAVE_MIN_SLICE_K || split == 1);
    }
    /* matmul's 128 x 64 fill rows: the split from the tile's own occupancy, never one whose
     * blocks fill less of a wave than a smaller split already did, 1 past the rows' classes */
    static const long long fp32[][4] = {
        /* m, n, k, expect a split > 1 */
        {16384, 64, 16384, 1}, {300, 200, 8000, 1}, {8192, 64, 8192, 1}, {4096, 4096, 4096, 0},
        {16384, 128, 16384, 0},
    };
    for (size_t s = 0; s < sizeof fp32 / sizeof fp32[0]; s++) {
        tpl_problem p = df_gemm(fp32[s][0], fp32[s][1], fp32[s][2], AT_R_32F, 0, 0, 0, 1);
        int cfg[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        CHECK(tpl_builtin_config(&tpl_matmul, &h200, &p, 0, cfg, text, NULL));
        int split = df_value(&tpl_matmul, cfg, "SPLITK");
        CHECK_MSG((split > 1) == (fp32[s][3] != 0), "%lldx%lldx%lld: %s", fp32[s][0],
                  fp32[s][1], fp32[s][2], text);
        if (split > 1) {
            tpl_tile t;
            int one[TPL_MAX_PARAMS];
            memcpy(one, cfg, sizeof one);
            one[tpl_param_index(&tpl_matmul, "SPLITK")] = 1;
            CHECK(tpl_matmul.tile_of(one, &t));
            long long tiles = tpl_cdiv(fp32[s][0], t.bm) * tpl_cdiv(fp32[s][1], t.bn);
            long long wave = 132LL * tpl_tile_blocks_per_sm(&t, &h200);
            /* the split below it did not fill the wave yet */
            CHECK_MSG(tiles * (split / 2) * 100 < wave * TPL_WAVE_FILL_PERCENT,
                      "%s: %lld tiles, wave %lld", text, tiles, wave);
            CHECK(fp32[s][2] / split >= TPL_WAVE_MIN_SLICE_K);
        }
    }
    /* the rule itself: no SPLITK parameter, nothing changes */
    extern const tpl_family tpl_skinny;
    tpl_problem p = df_gemm(64, 64, 16384, AT_R_64F, 0, 0, 0, 1);
    int cfg[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN];
    CHECK(tpl_builtin_config(&tpl_skinny, &h200, &p, 0, cfg, text, NULL));
    int before[TPL_MAX_PARAMS];
    memcpy(before, cfg, sizeof before);
    CHECK_EQ(tpl_wave_split(&tpl_skinny, &h200, &p, 0, cfg), 0);
    CHECK(memcmp(before, cfg, sizeof before) == 0);
}

/* Every row of every family's defaults table is a legal configuration, fitted to some kind it
 * serves, on a device of the row's own architecture: a row the family's rules reject for every
 * kind would never serve (it is skipped in silence for the next one). */
TEST(defaults_every_row_is_legal_on_its_architecture)
{
    static const struct { at_dtype t; at_math m; } kinds[] = {
        {AT_R_32F, AT_MATH_DEFAULT}, {AT_R_32F, AT_MATH_TF32}, {AT_R_64F, AT_MATH_DEFAULT},
        {AT_R_16F, AT_MATH_DEFAULT}, {AT_R_16BF, AT_MATH_DEFAULT}, {AT_R_16BF, TPL_MATH_E4M3},
    };
    const int n_kinds = (int)(sizeof kinds / sizeof kinds[0]);
    int rows = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        for (int i = 0; i < fam->n_defaults; i++) {
            const tpl_default *r = &fam->defaults[i];
            at_device_info dev = df_device(r->cc_min >= 90 ? 9 : 8);
            int legal = 0;
            char why[256] = "";
            /* a large square problem, and narrow ones for the families of narrow calls */
            static const long long ms[] = {4096, 16, 64, 1};
            for (int t = 0; t < 4 * n_kinds * 4 && !legal; t++) {
                int z = t / (4 * n_kinds), k = t / 4 % n_kinds, ops = t % 4;
                tpl_problem p = df_gemm(ms[z], 4096, 4096, kinds[k].t, kinds[k].m, ops >> 1,
                                        ops & 1, r->batch == TPL_BATCHED ? 8 : 1);
                if (!tpl_family_accepts(fam, &p) ||
                    (r->dtypes && !(r->dtypes & TPL_BIT(kinds[k].t))) ||
                    (r->ops && !(r->ops & TPL_OPS(ops >> 1, ops & 1))))
                    continue;
                int cfg[TPL_MAX_PARAMS];
                CHECK_MSG(tpl_config_parse(fam, r->config, cfg, why, sizeof why) == AT_OK,
                          "%s row %d: %s", fam->name, i, why);
                if (fam->fit_kind)
                    fam->fit_kind(cfg, &p);
                legal = fam->valid(cfg, &dev, why, sizeof why);
            }
            CHECK_MSG(legal, "%s row %d (%s): %s", fam->name, i, r->origin, why);
            rows++;
        }
    }
    CHECK(rows > 20);
}

/* Index of the defaults row whose origin text is origin (the pointer), -1 if none. */
static int df_row_of(const tpl_family *f, const char *origin)
{
    for (int i = 0; i < f->n_defaults; i++)
        if (f->defaults[i].origin == origin)
            return i;
    return -1;
}

/* tpl_builtin_config_nth walks the matching rows in table order: the 0th is the rules' choice
 * (tpl_builtin_config's where a row matches), each next one comes from a later row that also
 * matches the problem, every choice distinct, and the walk ends. A 16-bit batch of large
 * products over a short K (30 x 1004 x 3911 x 25) gets the Hopper kernel's one-launch batch
 * (BATCH 1) first and PATH 80's one-launch batch kernel as the next opinion (the trial times
 * both). */
TEST(defaults_next_rows_are_later_distinct_matching_choices)
{
    const tpl_family *fams[4] = {&tpl_tcgemm, &tpl_dgemm, &tpl_matmul, &tpl_bgemm};
    at_device_info devs[2] = {df_device(9), df_device(8)};
    static const at_dtype types[5] = {AT_R_16BF, AT_R_16F, AT_R_32F, AT_R_32F, AT_R_64F};
    static const at_math maths[5] = {0, 0, AT_MATH_TF32, 0, 0};
    int seconds = 0;
    for (int fi = 0; fi < 4; fi++)
    for (int d = 0; d < 2; d++)
    for (int t = 0; t < 5; t++)
    for (int s = 0; s < DF_N_SHAPES; s++)
    for (int b = 0; b < 2; b++) {
        const tpl_family *f = fams[fi];
        tpl_problem p = df_gemm(df_shapes[s][0], df_shapes[s][1], df_shapes[s][2], types[t],
                                maths[t], s % 2, s % 3 == 0, b ? 6 : 1);
        if (!tpl_family_accepts(f, &p))
            continue;
        int cfg[TPL_MAX_PARAMS], first[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN], texts[64][TPL_CONFIG_LEN];
        const char *origin = NULL, *first_origin = NULL;
        if (!tpl_builtin_config_nth(f, &devs[d], &p, 0, 0, first, texts[0], &first_origin))
            continue;
        CHECK(tpl_builtin_config(f, &devs[d], &p, 0, cfg, text, &origin));
        CHECK_MSG(strcmp(text, texts[0]) == 0 && origin == first_origin, "%s: %s against %s",
                  f->name, text, texts[0]);
        int prev_row = df_row_of(f, first_origin), n = 1;
        CHECK(prev_row >= 0 && tpl_default_matches(&f->defaults[prev_row], &devs[d], &p));
        while (n < 64 && tpl_builtin_config_nth(f, &devs[d], &p, 0, n, cfg, texts[n], &origin)) {
            int row = df_row_of(f, origin);
            CHECK_MSG(row > prev_row && tpl_default_matches(&f->defaults[row], &devs[d], &p),
                      "%s choice %d: row %d after row %d", f->name, n, row, prev_row);
            for (int j = 0; j < n; j++)
                CHECK_MSG(strcmp(texts[j], texts[n]) != 0, "%s: choice %d repeats %d: %s",
                          f->name, n, j, texts[n]);
            prev_row = row;
            n++;
        }
        CHECK(n < 64 && n <= f->n_defaults);
        seconds += n > 1;
    }
    CHECK(seconds > 0);
    at_device_info h200 = df_device(9);
    for (int t = 0; t < 2; t++) {
        tpl_problem p = df_gemm(1004, 3911, 64, types[t], 0, 0, 0, 30);
        int cfg[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        CHECK(tpl_builtin_config_nth(&tpl_tcgemm, &h200, &p, 0, 0, cfg, text, NULL));
        CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 90 &&
                      df_value(&tpl_tcgemm, cfg, "BATCH") == 1, "%s", text);
        CHECK(tpl_builtin_config_nth(&tpl_tcgemm, &h200, &p, 0, 1, cfg, text, NULL));
        CHECK_MSG(df_value(&tpl_tcgemm, cfg, "PATH") == 80, "%s", text);
    }
    CHECK(!tpl_builtin_config_nth(&tpl_tcgemm, &h200, &(tpl_problem){0}, 0, -1, NULL, NULL, NULL));
}

/* The area of an m x n product padded to whole bm x bn tiles. */
static long long df_padded(long long m, long long n, int bm, int bn)
{
    return tpl_cdiv(m, bm) * bm * tpl_cdiv(n, bn) * bn;
}

/* Batched FP32 on matmul takes the tile (128 x 128, 64 x 128 or 128 x 64) that pads its
 * products least: a 64-wide one where it pads clearly less (by an eighth or more), 128 x 128
 * where neither pads less by a thirty-second; never more padding than 128 x 128; every op pair
 * and both architectures, the batch kernel (BATCH 1); the 128 x 128 row stays among the next
 * opinions the trial times. The areas are worked out here from the shape. */
TEST(defaults_fp32_batches_take_the_tile_that_pads_least)
{
    at_device_info devs[2] = {df_device(9), df_device(8)};
    static const long long shapes[][4] = {
        {5115, 51, 1475, 4}, {50, 5613, 423, 15}, {54, 1664, 85, 53}, {11119, 17, 1775, 6},
        {64, 4096, 4096, 2}, {4096, 64, 512, 30}, {271, 442, 87, 631}, {2348, 85, 910, 22},
        {3582, 211, 2341, 6}, {256, 256, 256, 512}, {65, 65, 2000, 8}, {412, 379, 399, 12},
        {388, 1852, 2900, 9}, {2651, 1280, 175, 3}, {217, 9019, 1765, 4}, {1000, 1000, 100, 7},
    };
    int narrow = 0, square = 0;
    for (int d = 0; d < 2; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int ops = 0; ops < 4; ops++) {
                const long long *sh = shapes[s];
                tpl_problem p = df_gemm(sh[0], sh[1], sh[2], AT_R_32F, 0, ops >> 1, ops & 1, sh[3]);
                int cfg[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN], label[96];
                tpl_problem_format(&p, label, sizeof label);
                CHECK_MSG(tpl_builtin_config(&tpl_matmul, &devs[d], &p, 0, cfg, text, NULL),
                          "%s", label);
                CHECK_EQ(df_value(&tpl_matmul, cfg, "BATCH"), 1);
                CHECK_EQ(df_value(&tpl_matmul, cfg, "OPA"), ops >> 1);
                CHECK_EQ(df_value(&tpl_matmul, cfg, "OPB"), ops & 1);
                int bm = df_value(&tpl_matmul, cfg, "BM"), bn = df_value(&tpl_matmul, cfg, "BN");
                long long mine = df_padded(sh[0], sh[1], bm, bn);
                long long big = df_padded(sh[0], sh[1], 128, 128);
                long long rows = df_padded(sh[0], sh[1], 64, 128);
                long long cols = df_padded(sh[0], sh[1], 128, 64);
                long long least = rows < cols ? rows : cols;
                CHECK_MSG(mine <= big, "%s: %s", label, text);
                if (least * 8 <= big * 7) {
                    CHECK_MSG(mine == least && (bm == 64 || bn == 64), "%s: %s", label, text);
                    narrow++;
                } else if (least * 32 > big * 31) {
                    CHECK_MSG(bm == 128 && bn == 128, "%s: %s", label, text);
                    square++;
                }
                /* the 128 x 128 batched row among the next opinions */
                int found = bm == 128 && bn == 128;
                for (int nth = 1; nth < 4 && !found; nth++) {
                    int next[TPL_MAX_PARAMS];
                    char next_text[TPL_CONFIG_LEN];
                    if (!tpl_builtin_config_nth(&tpl_matmul, &devs[d], &p, 0, nth, next,
                                                next_text, NULL))
                        break;
                    found = df_value(&tpl_matmul, next, "BM") == 128 &&
                            df_value(&tpl_matmul, next, "BN") == 128 &&
                            df_value(&tpl_matmul, next, "BATCH") == 1;
                }
                CHECK_MSG(found, "%s: no 128 x 128 opinion", label);
            }
    CHECK(narrow > 0 && square > 0);
}

/* A single FP32 product of 81-112 tiles of 128 x 128 over a K of 2048 or more is split along
 * K, every slice at least TPL_WAVE_MIN_SLICE_K deep and its blocks at least one per SM; over a
 * shallower K, or past 112 tiles, it is not split. Counted here from the chosen tile. */
TEST(defaults_fp32_deep_k_under_a_wave_of_tiles_is_split)
{
    at_device_info h200 = df_device(9);
    static const long long shapes[][3] = {
        {310, 4006, 10946}, {1256, 1030, 2296}, {13110, 66, 4029}, {6224, 207, 10208},
        {1200, 1200, 2048}, {1200, 1200, 1000}, {2000, 700, 1500}, {16384, 128, 16384},
        {1500, 1500, 4096},
    };
    int split_some = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ops = 0; ops < 4; ops++) {
            const long long *sh = shapes[s];
            tpl_problem p = df_gemm(sh[0], sh[1], sh[2], AT_R_32F, 0, ops >> 1, ops & 1, 1);
            long long tiles128 = tpl_cdiv(sh[0], 128) * tpl_cdiv(sh[1], 128);
            CHECK(tiles128 > 80 && tiles128 <= 144);
            int cfg[TPL_MAX_PARAMS];
            char text[TPL_CONFIG_LEN];
            CHECK(tpl_builtin_config(&tpl_matmul, &h200, &p, 0, cfg, text, NULL));
            int split = df_value(&tpl_matmul, cfg, "SPLITK");
            long long blocks = tpl_cdiv(sh[0], df_value(&tpl_matmul, cfg, "BM")) *
                               tpl_cdiv(sh[1], df_value(&tpl_matmul, cfg, "BN")) * split;
            if (sh[2] >= 2048 && tiles128 <= 112) {
                CHECK_MSG(split > 1 && sh[2] / split >= TPL_WAVE_MIN_SLICE_K && blocks >= 132,
                          "%lldx%lldx%lld: %s", sh[0], sh[1], sh[2], text);
                split_some++;
            } else {
                CHECK_MSG(split == 1, "%lldx%lldx%lld: %s", sh[0], sh[1], sh[2], text);
            }
        }
    CHECK(split_some > 0);
}

/* A single FP32 product whose sides both pass 128, with at most 16 tiles of 128 x 128 over a K
 * of 1024 or more (or at most 64 over 2048), takes a 4-warp tile (3 blocks per SM under the
 * launch bounds) split to fill one wave of them exactly: 64 x 128 where it pads a sixteenth less
 * than 128 x 128 and no more than 128 x 64, else 128 x 64; the split is the largest count, any
 * integer up to 16, whose blocks fit one wave with slices of TPL_WAVE_MIN_SLICE_K (SPLITK is
 * run-time: one cubin for every count), or the listed-values walk where even 4 overflows it.
 * Outside the class no call takes these rows. Every op pair, sm_90 and sm_80; the counts are
 * worked out here from the shape. */
TEST(defaults_fp32_small_output_deep_k_fills_one_wave)
{
    at_device_info devs[2] = {df_device(9), df_device(8)};
    static const long long shapes[][3] = {
        {593, 346, 15207}, {1747, 148, 12395}, {202, 676, 7645}, {707, 433, 3407},
        {300, 200, 8000}, {129, 1000, 1024}, {1000, 1000, 2048}, {333, 2000, 1500},
        {1000, 1000, 2047}, {128, 4000, 8000}, {8192, 64, 8192}, {4096, 4096, 4096},
    };
    int in_class = 0, exact = 0, wide = 0;
    for (int d = 0; d < 2; d++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int ops = 0; ops < 4; ops++) {
                const long long m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                tpl_problem p = df_gemm(m, n, k, AT_R_32F, 0, ops >> 1, ops & 1, 1);
                long long tiles128 = tpl_cdiv(m, 128) * tpl_cdiv(n, 128);
                int in = m > 128 && n > 128 && tiles128 <= 64 &&
                         k >= (tiles128 <= 16 ? 1024 : 2048);
                int cfg[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN];
                const char *origin = NULL;
                CHECK(tpl_builtin_config(&tpl_matmul, &devs[d], &p, 0, cfg, text, &origin));
                int from_rows = origin && strstr(origin, "fill one wave exactly") != NULL;
                CHECK_MSG(from_rows == in, "%lldx%lldx%lld ops %d: %s (%s)", m, n, k, ops, text,
                          origin ? origin : "default");
                if (!in)
                    continue;
                in_class++;
                int bm = df_value(&tpl_matmul, cfg, "BM"), bn = df_value(&tpl_matmul, cfg, "BN");
                long long a64 = df_padded(m, n, 64, 128);
                int want64 = a64 * 16 <= df_padded(m, n, 128, 128) * 15 &&
                             a64 <= df_padded(m, n, 128, 64);
                CHECK_MSG(bm == (want64 ? 64 : 128) && bn == (want64 ? 128 : 64),
                          "%lldx%lldx%lld: %s", m, n, k, text);
                wide += want64;
                long long tiles = tpl_cdiv(m, bm) * tpl_cdiv(n, bn);
                long long wave = 3LL * devs[d].sm_count;
                long long want = wave / tiles < 16 ? wave / tiles : 16;
                while (want >= 4 && k / want < TPL_WAVE_MIN_SLICE_K)
                    want--;
                if (want < 4) {
                    /* the listed values 4, 8, 16 in order: the first that fills the wave */
                    want = 4;
                    while (want < 16 && tiles * want * 100 < wave * TPL_WAVE_FILL_PERCENT &&
                           k / (want * 2) >= TPL_WAVE_MIN_SLICE_K)
                        want *= 2;
                } else {
                    CHECK(tiles * want <= wave);
                    exact++;
                }
                int split = df_value(&tpl_matmul, cfg, "SPLITK");
                CHECK_MSG(split == want, "%lldx%lldx%lld on %d SMs: SPLITK %d, want %lld (%lld "
                          "tiles): %s", m, n, k, devs[d].sm_count, split, want, tiles, text);
                CHECK(df_value(&tpl_matmul, cfg, "FRAG") == 1 &&
                      df_value(&tpl_matmul, cfg, "OPA") == (ops >> 1) &&
                      df_value(&tpl_matmul, cfg, "OPB") == (ops & 1));
                CHECK(tpl_config_usable(&tpl_matmul, &devs[d], text, &p, 0, cfg));
            }
    printf("    %d calls in the class, %d split to fill one wave exactly, %d on 64 x 128\n",
           in_class, exact, wide);
    CHECK(in_class >= 48 && exact >= 40 && wide >= 8);
}

/* bench/shapes/fp32_deep_k.txt: every line an exact FP32 call of one product whose row-major
 * canonical form (a column-major call: m and n swapped, op(A) and op(B) swapped) is in the
 * class of the exact wave-fill rows, so the benchmark measures them: served by them on an
 * H200 with a split of at least 4 and at most one wave of blocks. */
TEST(defaults_fp32_deep_k_shapes_file_is_the_class)
{
    FILE *fp = fopen("bench/shapes/fp32_deep_k.txt", "r");
    CHECK(fp != NULL);
    if (!fp)
        return;
    at_device_info h200 = df_device(9);
    char line[256], err[256];
    int n = 0;
    while (fgets(line, sizeof line, fp) && !th_failed()) {
        line[strcspn(line, "\r\n#")] = '\0';
        if (!line[0])
            continue;
        tpl_problem p;
        CHECK_MSG(tpl_problem_parse(line, &p, err, sizeof err) == AT_OK, "%s: %s", line, err);
        int col = p.order == AT_COL_MAJOR;
        tpl_problem q = df_gemm(col ? p.dims[1] : p.dims[0], col ? p.dims[0] : p.dims[1],
                                p.dims[2], AT_R_32F, 0, (col ? p.op_b : p.op_a) == AT_OP_T,
                                (col ? p.op_a : p.op_b) == AT_OP_T, 1);
        CHECK_MSG(p.dtype == AT_R_32F && p.math == AT_MATH_DEFAULT && p.n_dims == 3 &&
                  tpl_problem_batch(&p) == 1, "%s: not one exact FP32 product", line);
        int cfg[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        const char *origin = NULL;
        CHECK(tpl_builtin_config(&tpl_matmul, &h200, &q, 0, cfg, text, &origin));
        long long blocks = tpl_cdiv(q.dims[0], df_value(&tpl_matmul, cfg, "BM")) *
                           tpl_cdiv(q.dims[1], df_value(&tpl_matmul, cfg, "BN")) *
                           df_value(&tpl_matmul, cfg, "SPLITK");
        CHECK_MSG(origin && strstr(origin, "fill one wave exactly") &&
                  df_value(&tpl_matmul, cfg, "SPLITK") >= 4 && blocks <= 3 * 132,
                  "%s: %s (%s)", line, text, origin ? origin : "default");
        n++;
    }
    fclose(fp);
    CHECK(n >= 12);
}
