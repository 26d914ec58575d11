/* test_tcgemm.c: CPU tests of the tensor-core GEMM family: its space, rules, kinds, tolerance,
 * defaults, epilogues and NVRTC targets (on a GPU: test_tcgemm_gpu.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db.h"
#include "harness.h"
#include "th_compile.h"
#include "th_family.h"
#include "th_tcgemm.h"
#include "lookup.h"
#include "measure.h"
#include "tpl.h"

extern const tpl_family tpl_tcgemm;

enum {
    P_TYPE, P_PATH, P_BM, P_BN, P_BK, P_STAGES, P_WG, P_CM, P_CN, P_WARPS_M, P_WARPS_N,
    P_RASTER, P_GROUP, P_SPLITK, P_VEC, P_LOADW, P_OPB, P_OPA, P_EPI, P_FP8, P_SCALE, P_BATCH,
    P_COUNT
};

static const char *const tt_names[P_COUNT] = {
    "TYPE", "PATH", "BM", "BN", "BK", "STAGES", "WG", "CM", "CN", "WARPS_M", "WARPS_N",
    "RASTER", "GROUP", "SPLITK", "VEC", "LOADW", "OPB", "OPA", "EPI", "FP8", "SCALE", "BATCH",
};

/* the raw numbering (th_tcgemm.h): multiples of TT_STEP are the plain kernels, the space the
 * scans below walk; the epilogues' judgement is the plain kernel's (tcgemm_epilogue_* check that
 * on every one) */
#define TT_N_EPI TH_TC_N_EPI
#define TT_STEP TH_TC_STEP

/* ---------------- the specification, written from the notes ----------------
 * Tiles, pipelines and epilogues (docs/notes/tcgemm.md "Final", docs/notes/tcgemm_sm80.md
 * "Performance"), as "PATH type BMxBNxBK stages extra vec": type b = BF16/FP16, t = TF32;
 * extra is "wgW cMxN" (PATH 90) or "wMxN lL" (PATH 80); a trailing "split" allows SPLITK 2, 4, 8, 16,
 * "wave" SPLITK 0 (the wave-fill split, docs/notes/tcgemm.md section 21). */
static const char *const tt_spec[] = {
    "90 b 128x256x64 3 wg2 c1x1 v8 wave",
    "90 b 128x192x64 4 wg2 c1x1 v8",
    "90 b 128x256x64 4 wg2 c2x1 v2",
    "90 b 128x256x64 4 wg2 c1x1 v2",
    "90 b 128x128x64 4 wg2 c1x1 v8 wave",
    "90 b 128x128x64 4 wg2 c1x1 v2 split",
    "90 b 64x128x64 4 wg1 c1x1 v2 split",
    "90 b 64x256x64 4 wg1 c1x1 v2 split",
    "90 b 128x64x64 4 wg2 c1x1 v2 split",
    "90 t 256x128x32 4 wg2 c1x1 v-",
    "90 t 256x128x32 4 wg2 c1x2 v-",
    "90 t 256x128x64 2 wg2 c1x1 v-",
    "90 t 256x128x32 4 wg2 c1x1 v8",
    "90 t 256x128x32 4 wg2 c1x2 v8",
    "90 t 256x128x64 2 wg2 c1x1 v8",
    "90 t 128x256x32 4 wg2 c1x1 v-",
    "90 t 128x128x32 4 wg2 c1x1 v- split",
    "90 t 64x128x32 4 wg2 c1x1 v- split",
    "90 t 128x64x32 4 wg1 c1x1 v- split",
    "80 b 128x128x32 4 w2x2 l16 v8",
    "80 b 128x256x64 3 w2x4 l16 v8",
    "80 b 128x128x32 4 w2x4 l2 v2",
    "80 b 128x128x32 4 w2x2 l16 v2 split",
    "80 b 64x64x32 4 w2x2 l16 v8",
    "80 t 128x128x16 4 w2x2 l16 v4",
    "80 t 128x128x32 3 w2x2 l16 v4",
    "80 t 128x128x16 4 w2x4 l4 v2",
    "80 t 128x128x16 4 w2x2 l16 v2 split",
    "80 t 64x64x16 4 w2x2 l16 v4",
};

/* One spec line, parsed: its parameter values (-1 = VEC free: "v-"), whether split, wave. */
typedef struct tt_row {
    int v[P_COUNT];
    int split, wave;
} tt_row;

#define TT_ROWS ((int)(sizeof tt_spec / sizeof tt_spec[0]))

/* Parses spec line s into r; 0 if malformed. */
static int tt_spec_parse(const char *s, tt_row *r)
{
    int path, bm, bn, bk, st, wg = 2, cm = 1, cn = 1, wm = 2, wn = 2, lw = 16, vec = -1;
    char ty;
    if (sscanf(s, "%d %c %dx%dx%d %d", &path, &ty, &bm, &bn, &bk, &st) != 6)
        return 0;
    const char *rest = s;
    for (int sp = 0; sp < 4 && rest; sp++)
        rest = strchr(rest, ' ') ? strchr(rest, ' ') + 1 : NULL;
    if (!rest || (path == 90 && sscanf(rest, "wg%d c%dx%d v%d", &wg, &cm, &cn, &vec) < 3) ||
        (path == 80 && sscanf(rest, "w%dx%d l%d v%d", &wm, &wn, &lw, &vec) != 4))
        return 0;
    memset(r, 0, sizeof *r);
    r->v[P_TYPE] = ty == 't' ? 2 : 0;
    r->v[P_PATH] = path;
    r->v[P_BM] = bm;
    r->v[P_BN] = bn;
    r->v[P_BK] = bk;
    r->v[P_STAGES] = st;
    r->v[P_WG] = wg;
    r->v[P_CM] = cm;
    r->v[P_CN] = cn;
    r->v[P_WARPS_M] = wm;
    r->v[P_WARPS_N] = wn;
    r->v[P_LOADW] = lw;
    r->v[P_VEC] = vec;
    r->split = strstr(s, "split") != NULL;
    r->wave = strstr(s, "wave") != NULL;
    return 1;
}

static tt_row tt_rows[TT_ROWS];
static int tt_rows_ready;

/* 1 if row r describes cfg's tile, pipeline and epilogue (VEC only without split-K). */
static int tt_row_match(const tt_row *r, const int *c)
{
    static const int same[] = {P_PATH, P_BM, P_BN, P_BK, P_STAGES, P_WG, P_CM, P_CN, P_WARPS_M,
                               P_WARPS_N, P_LOADW};
    if ((r->v[P_TYPE] == 2) != (c[P_TYPE] == 2))
        return 0;
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
        if (r->v[same[i]] != c[same[i]])
            return 0;
    /* VEC: "v-" (TF32 PATH 90) and split-K leave it at its first value, 2 */
    if (r->v[P_VEC] < 0 || c[P_SPLITK] > 1)
        return c[P_VEC] == 2;
    return c[P_VEC] == r->v[P_VEC];
}

/* The specification: the lattice above, tile orders (PATH 90: RASTER 0/1 x GROUP 8/16 and
 * GROUP 1 with RASTER 0; PATH 80: GROUP 8 with RASTER 0/1), split-K 2 or 4 only on split rows
 * in RASTER 0, GROUP 8, SPLITK 0 only on wave rows in RASTER 0, GROUP 8. */
static int tt_spec_ok(const int *c)
{
    /* OPA / OPB 1 (an operand read in its stored layout) exist on every row of PATH 80 (every
     * type: ldmatrix reads either layout) and of PATH 90 BF16/FP16 (wgmma's transpose bit and
     * K-major B). PATH 90 TF32 (wgmma's shared-memory operand K-major only): OPB 1 on every row
     * (B's K-major tile into the register fragments); OPA 1 only with OPB 1 (D = A B: B K-major
     * by descriptor), where each consumer warpgroup's BM / WG rows are whole m64 wgmmas of at
     * most 128 accumulators and C is stored directly (VEC 2) */
    if (c[P_OPA] && c[P_PATH] == 90 && c[P_TYPE] == 2) {
        int rows = c[P_BM] / c[P_WG];
        if (!c[P_OPB] || c[P_BM] % c[P_WG] || rows % 64 || (rows / 64) * (c[P_BN] / 2) > 128 ||
            c[P_VEC] != 2)
            return 0;
    }
    if (!tt_rows_ready) {
        for (int i = 0; i < TT_ROWS; i++)
            if (!tt_spec_parse(tt_spec[i], &tt_rows[i]))
                th_fail(__FILE__, __LINE__, "spec line %d malformed", i);
        tt_rows_ready = 1;
    }
    int found = 0;
    for (int i = 0; i < TT_ROWS && !found; i++)
        found = tt_row_match(&tt_rows[i], c) &&
                (c[P_SPLITK] == 1 || (c[P_SPLITK] > 1 && tt_rows[i].split) ||
                 (c[P_SPLITK] == 0 && tt_rows[i].wave));
    if (!found)
        return 0;
    if (c[P_SPLITK] == 0)
        return c[P_RASTER] == 0 && c[P_GROUP] == 8;
    if (c[P_SPLITK] > 1)
        return (c[P_SPLITK] == 2 || c[P_SPLITK] == 4 || c[P_SPLITK] == 8 || c[P_SPLITK] == 16) &&
               c[P_RASTER] == 0 && c[P_GROUP] == 8;
    if (c[P_PATH] == 90)
        return c[P_GROUP] == 8 || c[P_GROUP] == 16 || (c[P_GROUP] == 1 && c[P_RASTER] == 0);
    return c[P_GROUP] == 8;
}

/* ---------------- CPU tier ---------------- */

TEST(tcgemm_space_is_the_specified_lattice)
{
    const tpl_family *f = &tpl_tcgemm;
    CHECK(tpl_find("tcgemm") == f);
    CHECK_EQ(f->n_params, P_COUNT);
    for (int p = 0; p < P_COUNT; p++)
        CHECK_STR(f->params[p].name, tt_names[p]);
    long long raw = 1;
    for (int p = 0; p < P_COUNT; p++)
        raw *= f->params[p].n_values;
    CHECK_EQ(tpl_space_size(f), raw);
    at_device_info h100 = tt_device(9, 0, 227 * 1024, 1024, 65536);
    int (*keys)[P_COUNT] = malloc(sizeof *keys * 1024);
    CHECK(keys != NULL);
    long long n_valid = 0, per[3][2] = {{0}};
    char why[256];
    for (long long i = 0; i < raw && !th_failed(); i += TT_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        CHECK(c[P_EPI] == 0);
        int v = f->valid(c, NULL, why, sizeof why);
        CHECK_MSG(v == tt_spec_ok(c), "config %lld: valid %d, specification %d (%s)", i, v,
                  tt_spec_ok(c), why);
        CHECK_MSG(v || why[0], "config %lld rejected without a reason", i);
        if (!v)
            continue;
        CHECK_MSG(f->valid(c, &h100, why, sizeof why), "valid, not on an H100: %s", why);
        /* OPA and OPB 1 quadruple the PATH 80 rows and the 16-bit PATH 90 rows (TF32 PATH 90:
         * OPB 1 doubles them, OPA 1 adds the D = A B rows) */
        per[c[P_TYPE]][c[P_PATH] == 90] += !c[P_OPB] && !c[P_OPA];
        /* the kernel a configuration compiles: parameters its path and type leave unused
         * do not count, and must then sit at their first value */
        int *k = keys[n_valid < 1024 ? n_valid : 1023];
        memcpy(k, c, sizeof(int) * P_COUNT);
        int unused[P_COUNT] = {0};
        if (c[P_PATH] == 90)
            unused[P_WARPS_M] = unused[P_WARPS_N] = unused[P_LOADW] = 1;
        else
            unused[P_WG] = unused[P_CM] = unused[P_CN] = 1;
        if (c[P_SPLITK] > 1)
            unused[P_VEC] = 1;
        for (int p = 0; p < P_COUNT; p++)
            if (unused[p]) {
                CHECK(c[p] == f->params[p].values[0]);
                k[p] = -1;
            }
        n_valid++;
    }
    CHECK(n_valid <= 1024);
    /* no two valid configurations compile the same kernel */
    for (long long a = 0; a < n_valid; a++)
        for (long long b = a + 1; b < n_valid; b++)
            CHECK_MSG(memcmp(keys[a], keys[b], sizeof keys[a]) != 0, "duplicate kernels %lld %lld",
                      a, b);
    free(keys);
    /* both paths for every type, at most 80 per type */
    for (int t = 0; t < 3; t++) {
        CHECK_MSG(per[t][0] >= 4 && per[t][1] >= 10, "type %d: %lld PATH 80, %lld PATH 90", t,
                  per[t][0], per[t][1]);
        CHECK_MSG(per[t][0] + per[t][1] <= 80, "type %d: %lld + %lld valid", t, per[t][0],
                  per[t][1]);
    }
    printf("    %lld raw, %lld valid: BF16 %lld+%lld, FP16 %lld+%lld, TF32 %lld+%lld (PATH 80+90)\n",
           raw, n_valid, per[0][0], per[0][1], per[1][0], per[1][1], per[2][0], per[2][1]);
}

TEST(tcgemm_every_rejection_reason_is_reachable)
{
    const tpl_family *f = &tpl_tcgemm;
    int n_reasons = tpl_tcgemm_n_reasons;
    int *hits = calloc((size_t)n_reasons, sizeof *hits);
    CHECK(hits != NULL);
    at_device_info devs[4] = {
        tt_device(9, 0, 227 * 1024, 1024, 65536),   /* H100/H200 */
        tt_device(8, 0, 163 * 1024, 1024, 65536),   /* A100 */
        tt_device(9, 0, 227 * 1024, 256, 32768),    /* a small block budget */
        tt_device(7, 5, 64 * 1024, 1024, 65536),    /* Turing: no bf16 mma.sync */
    };
    long long raw = tpl_space_size(f), valid_on[5] = {0};
    char why[256];
    for (int d = 0; d <= 4 && !th_failed(); d++) {
        const at_device_info *dev = d < 4 ? &devs[d] : NULL;
        for (long long i = 0; i < raw; i += TT_STEP) {
            int c[TPL_MAX_PARAMS];
            tpl_config_from_index(f, i, c);
            if (f->valid(c, dev, why, sizeof why)) {
                valid_on[d]++;
                CHECK(d != 1 || c[P_PATH] == 80);     /* A100: no wgmma */
                continue;
            }
            int r = 0;
            while (r < n_reasons && strcmp(why, tpl_tcgemm_reasons[r]) != 0)
                r++;
            CHECK_MSG(r < n_reasons, "a reason outside the table: %s", why);
            hits[r]++;
        }
    }
    /* values outside the tuning lists: the range, type and path rules; FP8 (the scans above
     * walk FP8 0) out of range, with an epilogue, on PATH 80 (the default), in a layout wgmma's
     * FP8 form does not read, with an FP32 C through TMA stores (the FP8 baseline, changed) */
    static const char *const odd[] = {"TYPE=3", "PATH=70", "BM=0", "RASTER=2", "SPLITK=0",
                                      "EPI=12", "EPI=-1", "FP8=4", "FP8=1", "BATCH=2", "B:EPI=1",
                                      "B:OPB=0", "B:OPA=1", "B:TYPE=2", "B:BN=192"};
    for (size_t o = 0; o < sizeof odd / sizeof odd[0]; o++) {
        int c[TPL_MAX_PARAMS];
        const char *set = odd[o];
        int from_fp8 = strncmp(set, "B:", 2) == 0;
        CHECK(tt_parse(from_fp8 ? f->baselines[f->n_baselines - 1].config
                                : tpl_tcgemm.default_config, c));
        CHECK(!from_fp8 || c[P_FP8] == 1);
        set += from_fp8 ? 2 : 0;
        char name[16];
        int value;
        CHECK(sscanf(set, "%15[^=]=%d", name, &value) == 2);
        c[tpl_param_index(f, name)] = value;
        CHECK(!f->valid(c, NULL, why, sizeof why));
        int r = 0;
        while (r < n_reasons && strcmp(why, tpl_tcgemm_reasons[r]) != 0)
            r++;
        CHECK_MSG(r < n_reasons, "%s: %s", odd[o], why);
        hits[r]++;
    }
    for (int r = 0; r < n_reasons; r++)
        CHECK_MSG(hits[r] > 0, "never reached: %s", tpl_tcgemm_reasons[r]);
    free(hits);
    CHECK_EQ(valid_on[0], valid_on[4]);     /* an H100 is the generic sm_90 device */
    CHECK(valid_on[1] > 0 && valid_on[1] < valid_on[0]);
    CHECK_EQ(valid_on[3], 0);
}

TEST(tcgemm_target_arch_per_path)
{
    const tpl_family *f = &tpl_tcgemm;
    int c90[TPL_MAX_PARAMS], c80[TPL_MAX_PARAMS];
    CHECK(tt_parse(f->baselines[2].config, c90) && c90[P_PATH] == 90);
    CHECK(tt_parse(f->default_config, c80) && c80[P_PATH] == 80);
    CHECK_STR(tpl_target_arch(f, c90, "sm_90"), "sm_90a");
    CHECK(tpl_target_arch(f, c90, "sm_80") == NULL);
    CHECK(tpl_target_arch(f, c90, "sm_89") == NULL);
    CHECK(tpl_target_arch(f, c90, "sm_100") == NULL);
    CHECK_STR(tpl_target_arch(f, c80, "sm_80"), "sm_80");
    CHECK_STR(tpl_target_arch(f, c80, "sm_90"), "sm_90");
    CHECK_STR(tpl_target_arch(f, c80, "sm_86"), "sm_86");
    char opts[1024];
    tpl_options_string(f, c90, "sm_90", opts, sizeof opts);
    CHECK_MSG(strstr(opts, "-arch=sm_90a") && strstr(opts, "-DPATH=90") &&
              strstr(opts, "-DTYPE=0"), "%s", opts);
    tpl_options_string(f, c80, "sm_90", opts, sizeof opts);
    CHECK_MSG(strstr(opts, "-arch=sm_90") && !strstr(opts, "sm_90a") &&
              strstr(opts, "-DPATH=80"), "%s", opts);
}

TEST(tcgemm_kinds_never_cross)
{
    const tpl_family *f = &tpl_tcgemm;
    tpl_problem bf16 = tt_problem(4096, 4096, 4096, AT_R_16BF, AT_MATH_DEFAULT);
    tpl_problem f16 = tt_problem(4096, 4096, 4096, AT_R_16F, AT_MATH_DEFAULT);
    tpl_problem tf32 = tt_problem(4096, 4096, 4096, AT_R_32F, AT_MATH_TF32);
    const tpl_problem *ok[3] = {&bf16, &f16, &tf32};
    /* refused kinds: exact FP32 (at_sgemm's, never silently TF32), FP64, TF32 on 16-bit data,
     * column-major (the API maps it to row-major first: tpl.h), other dimension counts, ops
     * outside N/T */
    tpl_problem refused[6];
    refused[0] = tt_problem(4096, 4096, 4096, AT_R_32F, AT_MATH_DEFAULT);
    refused[1] = tt_problem(4096, 4096, 4096, AT_R_64F, AT_MATH_DEFAULT);
    refused[2] = tt_problem(4096, 4096, 4096, AT_R_16BF, AT_MATH_TF32);
    refused[3] = tf32;
    refused[3].order = AT_COL_MAJOR;
    refused[4] = bf16;
    refused[4].n_dims = 2;
    refused[5] = f16;
    refused[5].op_b = (at_op)2;
    /* accepted: every type with either operand transposed, and batches */
    tpl_problem more[4];
    more[0] = bf16;
    more[0].op_a = AT_OP_T;
    more[1] = f16;
    more[1].op_b = AT_OP_T;
    more[2] = tf32;
    more[2].op_a = more[2].op_b = AT_OP_T;
    more[3] = bf16;
    more[3].batch = 4;
    for (int t = 0; t < 3; t++)
        CHECK(tpl_family_accepts(f, ok[t]));
    for (int r = 0; r < 6; r++)
        CHECK_MSG(!tpl_family_accepts(f, &refused[r]), "refused kind %d accepted", r);
    for (int r = 0; r < 4; r++)
        CHECK_MSG(tpl_family_accepts(f, &more[r]), "kind %d refused", r);
    long long raw = tpl_space_size(f);
    int served[3][2] = {{0}};
    char why[256];
    tpl_problem skinny = tt_problem(1024, 1024, 8192, AT_R_16BF, AT_MATH_DEFAULT);
    int split_served = 0;
    for (long long i = 0; i < raw && !th_failed(); i += TT_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        if (!f->valid(c, NULL, why, sizeof why))
            continue;
        for (int t = 0; t < 3; t++) {
            int app = f->applicable(c, ok[t]);
            /* a configuration serves exactly its own type; split-K not at 4096^3 (512+ tiles);
             * OPB 1 only where B is op T (these problems are NN) */
            CHECK_MSG(app == (c[P_TYPE] == t && c[P_SPLITK] == 1 && !c[P_OPB] && !c[P_OPA]),
                      "TYPE=%d on type %d: %d", c[P_TYPE], t, app);
            served[t][c[P_PATH] == 90] += app;
        }
        for (int r = 0; r < 6; r++)
            CHECK(!f->applicable(c, &refused[r]));
        /* split-K at 1024x1024x8192: at most 64 tiles' area of 128 x 128, 4 K tiles per
         * slice at least */
        long long tiles = ((1024 + c[P_BM] - 1) / c[P_BM]) * ((1024 + c[P_BN] - 1) / c[P_BN]);
        long long area = tiles * c[P_BM] * c[P_BN] / (128 * 128);
        int expect = c[P_TYPE] == 0 && !c[P_OPB] && !c[P_OPA] &&
                     (c[P_SPLITK] == 1 || (area <= 64 && 8192 >= 4LL * c[P_SPLITK] * c[P_BK]));
        CHECK_EQ(f->applicable(c, &skinny), expect);
        split_served += expect && c[P_SPLITK] > 1;
        /* sizes out of range */
        tpl_problem bad = bf16;
        bad.dims[c[P_TYPE] == 0 ? 0 : 1] = 0;
        CHECK(c[P_TYPE] != 0 || !f->applicable(c, &bad));
        bad = bf16;
        bad.dims[2] = 1LL << 31;
        CHECK(!f->applicable(c, &bad));
    }
    CHECK(split_served >= 4);
    for (int t = 0; t < 3; t++)
        CHECK_MSG(served[t][0] > 0 && served[t][1] > 0, "type %d: %d PATH 80, %d PATH 90", t,
                  served[t][0], served[t][1]);
}

/* An op-T operand is read as stored wherever the kernel can (PATH 80 every type, PATH 90
 * BF16/FP16): such a kernel serves exactly the op pair of its OPA / OPB (no transposing pack),
 * PATH 90 TF32 with OPA = OPB = 0 every op pair through the pack, with OPB 1 (and OPA 1) the
 * pairs whose operands it reads as stored; the built-in choice on sm_80 /
 * sm_86 / sm_90 carries the problem's ops, batches included; PATH 80's stage tiles keep the
 * stored layouts (shared memory written out from the row strides, not from t8_smem_bytes). */
TEST(tcgemm_op_t_operands_read_in_place)
{
    const tpl_family *f = &tpl_tcgemm;
    static const struct { at_dtype t; at_math m; } kinds[3] = {
        {AT_R_16BF, AT_MATH_DEFAULT}, {AT_R_16F, AT_MATH_DEFAULT}, {AT_R_32F, AT_MATH_TF32},
    };
    long long raw = tpl_space_size(f);
    int served80[3][4] = {{0}};    /* k 100: too shallow for split-K (4 K tiles a slice) */
    int served90tf[4][4] = {{0}};  /* PATH 90 TF32 kernels per op pair and OPA * 2 + OPB */
    for (long long i = 0; i < raw && !th_failed(); i += TT_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        if (!f->valid(c, NULL, NULL, 0))
            continue;
        int in_place = c[P_PATH] == 80 || c[P_TYPE] != 2;
        for (int ops = 0; ops < 4; ops++) {
            tpl_problem p = tt_problem(300, 257, 100, kinds[c[P_TYPE]].t, kinds[c[P_TYPE]].m);
            p.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
            p.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            /* PATH 90 TF32: OPA / OPB 0 pack an op-T operand (every op pair), 1 reads it as
             * stored (op T only) */
            int reads_ok = in_place ? c[P_OPA] == (ops & 1) && c[P_OPB] == (ops >> 1)
                                    : (!c[P_OPA] || (ops & 1)) && (!c[P_OPB] || (ops >> 1));
            int want = c[P_SPLITK] == 1 && reads_ok;
            CHECK_MSG(f->applicable(c, &p) == want, "config %lld ops %d: applicable %d", i, ops,
                      !want);
            p.batch = 7;
            CHECK(f->applicable(c, &p) == want);
            if (c[P_PATH] == 80)
                served80[c[P_TYPE]][ops] += want;
            else if (c[P_TYPE] == 2 && want)
                served90tf[ops][c[P_OPA] * 2 + c[P_OPB]]++;
        }
    }
    /* PATH 90 TF32: the packing kernels serve every pair; OPB 1 serves NT and TT, OPA 1 (with
     * OPB 1) TT only; no kernel reads the A of TN in place (wgmma's B side needs a K-major
     * operand) */
    for (int ops = 0; ops < 4; ops++) {
        CHECK_MSG(served90tf[ops][0] >= 4, "TF32 ops %d: %d packing kernels", ops, served90tf[ops][0]);
        CHECK_EQ(served90tf[ops][1] > 0, ops >= 2);
        CHECK_EQ(served90tf[ops][3] > 0, ops == 3);
        CHECK_EQ(served90tf[ops][2], 0);
    }
    CHECK_EQ(served90tf[2][1], served90tf[3][1]);
    CHECK_EQ(served90tf[2][1], served90tf[0][0]);    /* OPB 1 on every PATH 90 TF32 row */
    for (int t = 0; t < 3; t++)
        for (int ops = 0; ops < 4; ops++)
            CHECK_MSG(served80[t][ops] >= 4 && served80[t][ops] == served80[t][0],
                      "type %d ops %d: %d PATH 80 kernels", t, ops, served80[t][ops]);
    /* the built-in choice reads op-T operands as stored (PATH 90 TF32: packs) */
    at_device_info devs[3] = {tt_device(8, 0, 163 * 1024, 1024, 65536),
                              tt_device(8, 6, 99 * 1024, 1024, 65536),
                              tt_device(9, 0, 227 * 1024, 1024, 65536)};
    static const long long shapes[][4] = {
        {37, 48, 102, 3358}, {20, 51, 231, 2903}, {157, 105, 781, 266}, {7, 13, 5, 1},
        {1000, 1000, 1000, 1},
    };
    for (int d = 0; d < 3; d++)
        for (int t = 0; t < 3; t++)
            for (int ops = 0; ops < 4; ops++)
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                    tpl_problem p = tt_problem(shapes[s][0], shapes[s][1], shapes[s][2],
                                               kinds[t].t, kinds[t].m);
                    p.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
                    p.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
                    p.batch = shapes[s][3];
                    int cfg[TPL_MAX_PARAMS];
                    char config[TPL_CONFIG_LEN] = "";
                    CHECK_EQ(lk_choose(NULL, &devs[d], f, &p, 1, cfg, config), AT_LOOKUP_DEFAULT);
                    int in_place = cfg[P_PATH] == 80 || t != 2;
                    CHECK_MSG(cfg[P_OPA] == (in_place && (ops & 1)) &&
                              cfg[P_OPB] == (in_place && (ops >> 1)), "%s type %d ops %d: %s",
                              devs[d].arch, t, ops, config);
                    CHECK(f->valid(cfg, &devs[d], NULL, 0) && f->applicable(cfg, &p));
                    /* batches: one PATH 90 BATCH 1 launch on sm_90 for products of sides of
                     * 50 or more over a K of 32 or more, PATH 80 elsewhere; a single product
                     * never BATCH 1 */
                    int b90 = devs[d].cc_major == 9 && shapes[s][0] >= 50 &&
                              shapes[s][1] >= 50 && shapes[s][2] >= 32;
                    CHECK(p.batch == 1 || cfg[P_PATH] == (b90 ? 90 : 80));
                    CHECK_EQ(cfg[P_BATCH], p.batch > 1 && b90);
                }
    /* PATH 80 stage geometry: A BM x (BK + 16 bytes) or, OPA 1, BK x (BM + 8); B BK x (BN + 8)
     * or, OPB 1, BN x (BK + 16 bytes); STAGES of them (128 x 128 x 32 BF16, 128 x 128 x 16
     * TF32, 4 stages, VEC 2: no staged epilogue) */
    static const struct { const char *type; int bk, esz; long long bytes[4]; } geo[] = {
        {"TYPE=0", 32, 2, {(128 * 40 + 32 * 136) * 2 * 4, (32 * 136 + 32 * 136) * 2 * 4,
                           (128 * 40 + 128 * 40) * 2 * 4, (32 * 136 + 128 * 40) * 2 * 4}},
        {"TYPE=2", 16, 4, {(128 * 20 + 16 * 136) * 4 * 4, (16 * 136 + 16 * 136) * 4 * 4,
                           (128 * 20 + 128 * 20) * 4 * 4, (16 * 136 + 128 * 20) * 4 * 4}},
    };
    for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++)
        for (int ops = 0; ops < 4; ops++) {
            char text[512];
            snprintf(text, sizeof text, "%s,PATH=80,BM=128,BN=128,BK=%d,STAGES=4,WG=2,CM=1,CN=1,"
                     "WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16,OPB=%d,OPA=%d",
                     geo[g].type, geo[g].bk, ops >> 1, ops & 1);
            int c[TPL_MAX_PARAMS];
            CHECK(tt_parse(text, c));
            tpl_tile tile;
            CHECK(f->tile_of(c, &tile));
            CHECK_MSG(tile.smem == geo[g].bytes[ops], "%s: %lld bytes, want %lld", text,
                      (long long)tile.smem, geo[g].bytes[ops]);
        }
}

TEST(tcgemm_tolerance_rule)
{
    const tpl_family *f = &tpl_tcgemm;
    static const struct { at_dtype t; at_math m; double u; } types[] = {
        {AT_R_16BF, AT_MATH_DEFAULT, 1.0 / 256},
        {AT_R_16F, AT_MATH_DEFAULT, 1.0 / 2048},
        {AT_R_32F, AT_MATH_TF32, 1.0 / 16777216},
    };
    static const long long ks[] = {1, 5, 33, 512, 1000, 4096, 8192, 16384, 65536};
    for (size_t t = 0; t < 3; t++) {
        double prev = 0;
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            tpl_problem p = tt_problem(64, 64, ks[i], types[t].t, types[t].m);
            double k = (double)ks[i], tol = f->tolerance(&p);
            double expect = 2 * types[t].u + (4 * sqrt(k) + k / 8) / 16777216.0;
            CHECK_MSG(fabs(tol - expect) <= 1e-12 * expect, "type %zu k %lld: %g, rule %g", t,
                      ks[i], tol, expect);
            CHECK(tol > prev);
            prev = tol;
            /* a dropped K tile, a wrong tile or a race (1e-2 and up) is still rejected */
            CHECK(tol < 1e-2);
        }
    }
    /* TF32's accumulation error grows like 0.039 k 2^-24 (docs/notes/tcgemm.md): the rule
     * keeps a 3x margin at every k, where 4 sqrt(k) alone fails above k of about 10000 */
    for (long long k = 1024; k <= (1LL << 20); k *= 2) {
        tpl_problem p = tt_problem(64, 64, k, AT_R_32F, AT_MATH_TF32);
        CHECK(f->tolerance(&p) >= 3 * 0.039 * (double)k / 16777216.0);
    }
    CHECK(2.0 / 16777216 + 4 * sqrt(16384.0) / 16777216 < 0.039 * 16384 / 16777216);
}

TEST(tcgemm_defaults_serve_every_type_on_every_device)
{
    const tpl_family *f = &tpl_tcgemm;
    int c[TPL_MAX_PARAMS];
    char why[256];
    CHECK(tt_parse(f->default_config, c));
    CHECK(c[P_TYPE] == 0 && c[P_PATH] == 80 && f->valid(c, NULL, why, sizeof why));
    for (int b = 0; b < f->n_baselines; b++) {
        CHECK(tt_parse(f->baselines[b].config, c));
        CHECK_MSG(f->valid(c, NULL, why, sizeof why), "%s: %s", f->baselines[b].name, why);
        CHECK(strncmp(f->baselines[b].name, c[P_PATH] == 90 ? "sm90-" : "sm80-", 5) == 0);
    }
    at_device_info devs[4] = {
        tt_device(8, 0, 163 * 1024, 1024, 65536),   /* A100 */
        tt_device(8, 6, 99 * 1024, 1024, 65536),    /* RTX 30x0: 99 KiB per block */
        tt_device(8, 9, 99 * 1024, 1024, 65536),    /* L4, RTX 40x0 */
        tt_device(9, 0, 227 * 1024, 1024, 65536),   /* H100/H200 */
    };
    static const struct { at_dtype t; at_math m; int type; } kinds[] = {
        {AT_R_16BF, AT_MATH_DEFAULT, 0}, {AT_R_16F, AT_MATH_DEFAULT, 1},
        {AT_R_32F, AT_MATH_TF32, 2},
    };
    static const long long shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {4097, 4097, 4097}};
    for (int d = 0; d < 4; d++)
        for (int k = 0; k < 3; k++)
            for (int s = 0; s < 3; s++) {
                tpl_problem p = tt_problem(shapes[s][0], shapes[s][1], shapes[s][2], kinds[k].t,
                                           kinds[k].m);
                int cfg[TPL_MAX_PARAMS];
                char config[TPL_CONFIG_LEN] = "";
                at_lookup_level lv = lk_choose(NULL, &devs[d], f, &p, 1, cfg, config);
                CHECK_MSG(lv == AT_LOOKUP_DEFAULT, "%s type %d: level %d", devs[d].arch, k, lv);
                /* the built-in choice is a kernel of the problem's type: PATH 90 on sm_90,
                 * PATH 80 elsewhere */
                CHECK_MSG(cfg[P_TYPE] == kinds[k].type && cfg[P_PATH] == (d == 3 ? 90 : 80), "%s",
                          config);
                CHECK(f->valid(cfg, &devs[d], why, sizeof why) && f->applicable(cfg, &p));
            }
}

/* On sm_90 a narrow side of at most 64 takes a tile of that side's 64 (the other kinds' 128-row
 * or 128-column tiles would compute at least half padding), with a split-K that fills a wave
 * (tpl_wave_split) over a deep K; every type, both sides, each tile legal and applicable. */
TEST(tcgemm_narrow_side_takes_a_64_tile)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h100 = tt_device(9, 0, 227 * 1024, 1024, 65536);
    h100.sm_count = 132;
    static const struct { at_dtype t; at_math m; } kinds[] = {
        {AT_R_16BF, AT_MATH_DEFAULT}, {AT_R_16F, AT_MATH_DEFAULT}, {AT_R_32F, AT_MATH_TF32},
    };
    char why[256];
    for (int k = 0; k < 3; k++)
        for (int side = 0; side < 2; side++) {
            tpl_problem p = side ? tt_problem(8192, 40, 8192, kinds[k].t, kinds[k].m)
                                 : tt_problem(48, 8192, 8192, kinds[k].t, kinds[k].m);
            int cfg[TPL_MAX_PARAMS];
            char config[TPL_CONFIG_LEN] = "";
            CHECK(lk_choose(NULL, &h100, f, &p, 1, cfg, config) == AT_LOOKUP_DEFAULT);
            CHECK_MSG(cfg[P_PATH] == 90 && cfg[side ? P_BN : P_BM] == 64, "kind %d side %d: %s",
                      k, side, config);
            CHECK_MSG(cfg[P_SPLITK] > 1, "a deep K over %lld x %lld splits: %s", p.dims[0],
                      p.dims[1], config);
            CHECK(f->valid(cfg, &h100, why, sizeof why) && f->applicable(cfg, &p));
            /* past 64 the 128-wide tiles again */
            p.dims[side] = 200;
            CHECK(lk_choose(NULL, &h100, f, &p, 1, cfg, config) == AT_LOOKUP_DEFAULT);
            CHECK_MSG(cfg[P_BM] >= 128 && cfg[P_BN] >= 128, "kind %d side %d at 200: %s", k,
                      side, config);
        }
}

TEST(tcgemm_tuning_problems_stay_small)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h100 = tt_device(9, 0, 227 * 1024, 1024, 65536);
    at_device_info a100 = tt_device(8, 0, 163 * 1024, 1024, 65536);
    int per_type[4] = {0};             /* BF16, FP16, TF32, FP8 (any C) */
    long long raw = tpl_space_size(f);
    char why[256];
    for (int i = 0; i < f->n_tuning_problems; i++) {
        const tpl_problem *p = &f->tuning_problems[i];
        CHECK(tpl_family_accepts(f, p));
        int fp8 = tpl_math_fp8(p->math);
        int t = p->dtype == AT_R_16BF ? 0 : p->dtype == AT_R_16F ? 1 : 2;
        per_type[fp8 ? 3 : t]++;
        long long on_h = 0, on_a = 0;
        for (long long x = TH_TC_INDEX(0, fp8, tpl_math_fp8_block(p->math), 0); x < raw;
             x += TT_STEP) {
            int c[TPL_MAX_PARAMS];
            tpl_config_from_index(f, x, c);
            if (!f->applicable(c, p))
                continue;
            on_h += f->valid(c, &h100, why, sizeof why);
            on_a += f->valid(c, &a100, why, sizeof why);
        }
        CHECK_MSG(on_h >= 20 && on_h <= 60, "problem %d: %lld configurations on an H100", i, on_h);
        /* FP8 runs on sm_90 only (PATH 90) */
        CHECK_MSG(fp8 ? on_a == 0 : on_a >= 3 && on_a < on_h, "problem %d: %lld configurations "
                  "on an A100", i, on_a);
        /* the named PATH 90 winners of its type take part (16-bit ones reading an op-T
         * operand as stored, as every PATH 90 16-bit kernel of such a problem does) */
        int named = 0;
        for (int b = 0; b < f->n_baselines; b++) {
            int c[TPL_MAX_PARAMS];
            CHECK(tt_parse(f->baselines[b].config, c));
            if (c[P_PATH] == 90 && c[P_TYPE] != 2 && !c[P_FP8]) {
                c[P_OPA] = p->op_a == AT_OP_T;
                c[P_OPB] = p->op_b == AT_OP_T;
            }
            named += c[P_TYPE] == t && c[P_PATH] == 90 && f->applicable(c, p);
        }
        CHECK(named >= 1);
    }
    for (int t = 0; t < 3; t++)
        CHECK(per_type[t] >= 2 && per_type[t] <= 4);
    CHECK(per_type[3] >= 1 && per_type[3] <= 2);    /* FP8: per-tensor and block-scaled */
}

#define TC_P90_EPI(type, tile, split, vec, epi) type ",PATH=90," tile ",WG=2,CM=1,CN=1,WARPS_M=2," \
    "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=" #split ",VEC=" #vec ",LOADW=16,EPI=" #epi

#define TC_P80_OP(type, tile, wn, loadw, split, vec, opa, opb) type ",PATH=80," tile ",WG=2,CM=1,CN=1," \
    "WARPS_M=2,WARPS_N=" #wn ",RASTER=0,GROUP=8,SPLITK=" #split ",VEC=" #vec ",LOADW=" #loadw \
    ",OPB=" #opb ",OPA=" #opa

/* NVRTC compiles a sample: every type's PATH 80 default for sm_80, a PATH 90 winner for sm_90
 * (as sm_90a), and the faulty test family; PATH 90 is refused for sm_80 without compiling. */
TEST(tcgemm_nvrtc_compiles_a_sample)
{
    const tpl_family *f = &tpl_tcgemm;
    const tpl_family *fault = tpl_find("test_tcfault");
    CHECK(fault != NULL && fault->hidden && strstr(fault->fixed_options, "TC_FAULT=1"));
    struct { const tpl_family *fam; const char *config, *arch; at_status want; } cases[] = {
        {f, f->default_config, "sm_80", AT_OK},
        {f, f->baselines[0].config, "sm_80", AT_OK},
        {f, f->baselines[1].config, "sm_80", AT_OK},
        {f, f->baselines[2].config, "sm_90", AT_OK},
        {f, f->baselines[5].config, "sm_90", AT_OK},
        {f, f->baselines[2].config, "sm_80", AT_ERR_UNSUPPORTED},
        {fault, fault->default_config, "sm_80", AT_OK},
        /* fused epilogues in each store path: PATH 90 TMA stores (16-bit; TF32 T9_TES), PATH 90
         * split-K's reduce, PATH 80 staged rows (test_compile_sample covers every EPI value) */
        {f, TC_P90_EPI("TYPE=0", "BM=128,BN=256,BK=64,STAGES=3", 1, 8, 10), "sm_90", AT_OK},
        {f, "TYPE=2,PATH=90,BM=256,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=2,WARPS_M=2,WARPS_N=2,"
            "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,EPI=7", "sm_90", AT_OK},
        {f, TC_P90_EPI("TYPE=1", "BM=128,BN=128,BK=64,STAGES=4", 4, 2, 5), "sm_90", AT_OK},
        {f, "TYPE=0,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
            "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,EPI=11", "sm_80", AT_OK},
        /* PATH 80 reading op-T operands as stored (ldmatrix.trans of A, plain ldmatrix of B;
         * TF32 element by element), each type, narrow loads and split-K */
        {f, TC_P80_OP("TYPE=1", "BM=128,BN=256,BK=64,STAGES=3", 4, 16, 1, 8, 1, 1), "sm_80", AT_OK},
        {f, TC_P80_OP("TYPE=0", "BM=128,BN=128,BK=32,STAGES=4", 4, 2, 1, 2, 1, 0), "sm_86", AT_OK},
        {f, TC_P80_OP("TYPE=0", "BM=64,BN=64,BK=32,STAGES=4", 2, 16, 1, 8, 0, 1), "sm_90", AT_OK},
        {f, TC_P80_OP("TYPE=2", "BM=128,BN=128,BK=16,STAGES=4", 2, 16, 1, 4, 1, 1), "sm_80", AT_OK},
        {f, TC_P80_OP("TYPE=2", "BM=128,BN=128,BK=16,STAGES=4", 4, 4, 1, 2, 1, 0), "sm_90", AT_OK},
        {f, TC_P80_OP("TYPE=2", "BM=128,BN=128,BK=16,STAGES=4", 2, 16, 4, 2, 0, 1), "sm_80", AT_OK},
        /* BATCH 1 (3-D TMA loads, product offsets of C): TMA stores through a 3-D map with op-T
         * operands read as stored, clusters multicasting 3-D boxes, TF32's staged TMA stores
         * (T9_TES) and its D = A B form, one warpgroup of 64 rows with a fused epilogue */
        {f, "TYPE=0,PATH=90,BM=128,BN=128,BK=64,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
            "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,OPB=1,OPA=1,BATCH=1", "sm_90", AT_OK},
        {f, "TYPE=1,PATH=90,BM=128,BN=256,BK=64,STAGES=4,WG=2,CM=2,CN=1,WARPS_M=2,WARPS_N=2,"
            "RASTER=1,GROUP=8,SPLITK=1,VEC=2,LOADW=16,BATCH=1", "sm_90", AT_OK},
        {f, "TYPE=2,PATH=90,BM=256,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=2,WARPS_M=2,WARPS_N=2,"
            "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,BATCH=1", "sm_90", AT_OK},
        {f, "TYPE=2,PATH=90,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
            "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16,OPB=1,OPA=1,BATCH=1", "sm_90", AT_OK},
        {f, "TYPE=0,PATH=90,BM=64,BN=128,BK=64,STAGES=4,WG=1,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
            "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16,OPB=1,EPI=6,BATCH=1", "sm_90", AT_OK},
        {f, "TYPE=0,PATH=90,BM=64,BN=128,BK=64,STAGES=4,WG=1,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
            "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16,OPB=1,EPI=6,BATCH=1", "sm_80",
         AT_ERR_UNSUPPORTED},
        /* FP8 (every value and store path: test_fp8.c); on sm_80 refused without compiling */
        {f, f->baselines[f->n_baselines - 1].config, "sm_90", AT_OK},
        {f, f->baselines[f->n_baselines - 1].config, "sm_80", AT_ERR_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !th_failed(); i++)
        th_check_compile(cases[i].fam, cases[i].config, cases[i].arch, cases[i].want);
}

/* `autotune check --arch sm_80 --sample` compiles the PATH 80 configurations of the sample and
 * names the PATH 90 ones as for other architectures (compile-everything tier: skipped by
 * AUTOTUNE_SKIP_COMPILE_ALL; `make check` compiles every configuration, twelve epilogues of each
 * kernel, which is CPU hours rather than a test's minute). */
TEST(tcgemm_check_sm80_compiles_path80_only)
{
    if (getenv("AUTOTUNE_SKIP_COMPILE_ALL")) {
        printf("    skipped by AUTOTUNE_SKIP_COMPILE_ALL\n");
        return;
    }
    const tpl_family *f = &tpl_tcgemm;
    long long n80 = 0, n90 = 0;
    tpl_sample *sample = NULL;
    char err[256];
    int n = tpl_sample_configs(f, NULL, 1, NULL, 0, &sample, err, sizeof err);
    CHECK_MSG(n > 0, "%s", err);
    for (int i = 0; i < n; i++)
        *(sample[i].cfg[P_PATH] == 90 ? &n90 : &n80) += 1;
    free(sample);
    CHECK(n80 > 0 && n90 > 0);
    char cmd[4600], *out = NULL, expect[256];
    snprintf(cmd, sizeof cmd, "'%s/autotune' check --arch sm_80 --kernel tcgemm --sample",
             th_build_dir());
    int rc = th_run(cmd, &out);
    printf("%s", out ? out : "");
    CHECK_MSG(rc == 0, "exit %d", rc);
    snprintf(expect, sizeof expect, "%lld sampled, %lld compiled, 0 failed", n80, n80);
    CHECK_MSG(out && strstr(out, expect), "want \"%s\"", expect);
    snprintf(expect, sizeof expect, "; %lld only for other architectures", n90);
    CHECK_MSG(strstr(out, expect), "want \"%s\"", expect);
    free(out);
}

/* Every kernel computes every epilogue: with EPI = e a plain kernel stays valid (or invalid) on
 * every device, serves exactly the problems of epilogue e that its EPI 0 twin serves of the
 * plain kind, leaves EPI out of its text and NVRTC options at 0 only, and the prefix walk
 * agrees; fit_kind sets EPI from the problem. */
TEST(tcgemm_epilogue_every_kernel_computes_every_epilogue)
{
    const tpl_family *f = &tpl_tcgemm;
    CHECK(f->epilogues && f->params[P_EPI].omit_first && f->params[P_EPI].n_values == TT_N_EPI);
    CHECK_EQ(TT_N_EPI, TPL_N_EPI);
    at_device_info devs[2] = {tt_device(9, 0, 227 * 1024, 1024, 65536),
                              tt_device(8, 0, 163 * 1024, 1024, 65536)};
    tpl_problem probs[4] = {tt_problem(257, 381, 200, AT_R_16BF, AT_MATH_DEFAULT),
                            tt_problem(4096, 4096, 4096, AT_R_16F, AT_MATH_DEFAULT),
                            tt_problem(1024, 1024, 8192, AT_R_32F, AT_MATH_TF32),
                            tt_problem(1024, 1024, 8192, AT_R_16BF, AT_MATH_DEFAULT)};
    probs[1].op_b = AT_OP_T;
    long long raw = tpl_space_size(f), valid0 = 0, served = 0;
    for (long long i = 0; i < raw && !th_failed(); i += TT_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        int v0 = f->valid(c, NULL, NULL, 0);
        if (!v0 && i % (97 * TT_STEP) != 0)
            continue;               /* every valid kernel, and every 97th invalid one */
        valid0 += v0;
        int on_dev[2], app0[4];
        for (int d = 0; d < 2; d++)
            on_dev[d] = f->valid(c, &devs[d], NULL, 0);
        for (int q = 0; q < 4; q++)
            app0[q] = v0 && f->applicable(c, &probs[q]);
        for (int e = 1; e < TT_N_EPI; e++) {
            int ce[TPL_MAX_PARAMS];
            memcpy(ce, c, sizeof ce);
            ce[P_EPI] = e;
            CHECK_EQ(f->valid(ce, NULL, NULL, 0), v0);
            CHECK_EQ(f->valid_prefix(ce, P_FP8, NULL), v0);    /* FP8 free: none takes EPI */
            for (int d = 0; d < 2; d++)
                CHECK_EQ(f->valid(ce, &devs[d], NULL, 0), on_dev[d]);
            if (!v0)
                continue;
            for (int q = 0; q < 4; q++) {
                tpl_problem pe = probs[q];
                pe.epilogue = e;
                CHECK_EQ(f->applicable(ce, &pe), app0[q]);
                served += app0[q];
                CHECK(!f->applicable(ce, &probs[q]));   /* never the plain kind */
                CHECK(!f->applicable(c, &pe));          /* nor a plain kernel this one */
                pe.epilogue = e % (TT_N_EPI - 1) + 1;   /* another epilogue */
                CHECK(!f->applicable(ce, &pe));
            }
        }
        if (v0 && valid0 < 4) {     /* texts and options of a few */
            int ce[TPL_MAX_PARAMS];
            memcpy(ce, c, sizeof ce);
            char text[TPL_CONFIG_LEN], opts[2048];
            tpl_config_format(f, c, text, sizeof text);
            CHECK_MSG(!strstr(text, "EPI"), "%s", text);
            tpl_options_string(f, c, "sm_90", opts, sizeof opts);
            CHECK_MSG(!strstr(opts, "EPI"), "%s", opts);
            ce[P_EPI] = 10;
            tpl_config_format(f, ce, text, sizeof text);
            CHECK_MSG(strstr(text, ",EPI=10"), "%s", text);
            tpl_options_string(f, ce, "sm_90", opts, sizeof opts);
            CHECK_MSG(strstr(opts, "-DEPI=10"), "%s", opts);
        }
    }
    CHECK(valid0 > 300 && served > 0);
    /* fit_kind: the built-in choice of an epilogue problem computes it, on every device */
    for (int d = 0; d < 2; d++)
        for (int e = 0; e < TT_N_EPI; e++) {
            tpl_problem p = probs[0];
            p.epilogue = e;
            int cfg[TPL_MAX_PARAMS];
            char config[TPL_CONFIG_LEN] = "";
            CHECK_EQ(lk_choose(NULL, &devs[d], f, &p, 1, cfg, config), AT_LOOKUP_DEFAULT);
            CHECK_MSG(cfg[P_EPI] == e && f->valid(cfg, &devs[d], NULL, 0) &&
                      f->applicable(cfg, &p), "%s epilogue %d: %s", devs[d].arch, e, config);
        }
    /* other families never take an epilogue problem (test_tcfault is tcgemm's copy) */
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *g = tpl_family_at(i);
        tpl_problem p = probs[0];
        p.epilogue = TPL_EPI(TPL_BIAS_COL, 2);
        int tc = g == f || strcmp(g->name, "test_tcfault") == 0;
        CHECK_MSG(tpl_family_accepts(g, &p) == tc, "%s", g->name);
        p.dtype = AT_R_32F;
        CHECK(!tpl_family_accepts(g, &p));              /* exact FP32 has none */
    }
}

/* The epilogue tolerance: the plain rule times 1.2 (GELU's slope is at most 1.13). */
TEST(tcgemm_epilogue_tolerance)
{
    const tpl_family *f = &tpl_tcgemm;
    for (int e = 1; e < TT_N_EPI; e++) {
        tpl_problem p = tt_problem(257, 381, 200, AT_R_16BF, AT_MATH_DEFAULT), q = p;
        q.epilogue = e;
        CHECK(fabs(f->tolerance(&q) - 1.2 * f->tolerance(&p)) <= 1e-15);
        CHECK(f->tolerance(&q) < 1e-2);
    }
    /* GELU's derivative: 1.13 at most (tanh and erf forms, on a fine grid) */
    double worst = 0;
    for (double x = -10; x <= 10; x += 1e-3) {
        double h = 1e-6, gt[2], ge[2];
        for (int s = 0; s < 2; s++) {
            double y = x + (s ? h : -h);
            gt[s] = 0.5 * y * (1 + tanh(0.7978845608028654 * (y + 0.044715 * y * y * y)));
            ge[s] = 0.5 * y * (1 + erf(y / sqrt(2.0)));
        }
        worst = fmax(worst, fmax(fabs(gt[1] - gt[0]), fabs(ge[1] - ge[0])) / (2 * h));
    }
    CHECK_MSG(worst > 1.12 && worst < 1.14, "%g", worst);
}

/* th_tcgemm.h's raw numbering is the family's: EPI, FP8, SCALE and BATCH are its last four
 * parameters with those counts of values, in that order, so the index walks of the tcgemm, FP8
 * and batch tests land on the kernels they name. */
TEST(tcgemm_raw_numbering_matches_the_tests)
{
    const tpl_family *f = &tpl_tcgemm;
    static const struct { const char *name; int n; } last[] = {
        {"EPI", TH_TC_N_EPI}, {"FP8", TH_TC_N_FP8}, {"SCALE", TH_TC_N_SCALE},
        {"BATCH", TH_TC_N_BATCH},
    };
    for (int i = 0; i < 4; i++) {
        int at = tpl_param_index(f, last[i].name);
        CHECK_MSG(at == f->n_params - 4 + i, "%s at %d of %d", last[i].name, at, f->n_params);
        CHECK_MSG(at >= 0 && f->params[at].n_values == last[i].n, "%s: %d values", last[i].name,
                  at >= 0 ? f->params[at].n_values : -1);
    }
    int c[TPL_MAX_PARAMS];
    tpl_config_from_index(f, TH_TC_INDEX(3, 2, 1, 1), c);
    CHECK(c[P_EPI] == 0 && c[P_FP8] == 2 && c[P_SCALE] == 1 && c[P_BATCH] == 1);
    tpl_config_from_index(f, TH_TC_INDEX(3, 0, 0, 0) + (long long)5 * TH_TC_N_FP8 *
                                                      TH_TC_N_SCALE * TH_TC_N_BATCH, c);
    CHECK(c[P_EPI] == 5 && c[P_FP8] == 0 && c[P_SCALE] == 0 && c[P_BATCH] == 0);
}
