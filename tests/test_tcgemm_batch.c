/* test_tcgemm_batch.c: CPU tests of the tensor-core family's PATH 90 strided batches in one
 * launch (BATCH 1): which kernels exist, which problems they serve, which batch strides one 3-D
 * tensor map reads (on a GPU: tcgemm_gpu_batch_in_one_launch in test_tcgemm_gpu.c). */
#include <stdio.h>
#include <string.h>
#include "harness.h"
#include "tcgemm.h"
#include "th_family.h"
#include "th_tcgemm.h"
#include "tpl.h"

#define TB_STEP TH_TC_STEP     /* the raw numbering: th_tcgemm.h */

/* BATCH 1 (PATH 90: a strided batch's products in one launch) is the twin of every valid plain
 * kernel on PATH 90 without split-K in tile order GROUP 8, and of no other (FP8, split-K, PATH 80
 * and the other orders refused with the BATCH reason); it runs on sm_90 only, serves the batched
 * problems its BATCH 0 twin serves (same kinds and op pairs) and never a single product; texts
 * and NVRTC options name BATCH=1 and leave BATCH 0 out; the prefix walk agrees. */
TEST(tcgemm_batch_kernels_rules_and_kinds)
{
    const tpl_family *f = &tpl_tcgemm;
    CHECK(f->params[P_BATCH].omit_first && f->params[P_BATCH].n_values == 2);
    at_device_info h100 = tt_device(9, 0, 227 * 1024, 1024, 65536);
    at_device_info a100 = tt_device(8, 0, 163 * 1024, 1024, 65536);
    tpl_problem probs[6] = {tt_problem(59, 496, 181, AT_R_16BF, AT_MATH_DEFAULT),
                            tt_problem(644, 26, 4102, AT_R_16F, AT_MATH_DEFAULT),
                            tt_problem(46, 143, 299, AT_R_32F, AT_MATH_TF32),
                            tt_problem(128, 128, 64, AT_R_16BF, AT_MATH_DEFAULT),
                            tt_problem(279, 124, 1218, AT_R_32F, AT_MATH_TF32),
                            tt_problem(112, 1614, 172, AT_R_16F, AT_MATH_DEFAULT)};
    probs[1].op_b = AT_OP_T;
    probs[3].op_a = AT_OP_T;
    probs[4].op_b = AT_OP_T;
    probs[5].op_a = probs[5].op_b = AT_OP_T;
    const long long batches[6] = {1520, 72, 683, 1024, 308, 77};
    long long raw = tpl_space_size(f), n_batch[3] = {0}, served = 0;
    int texts_checked = 0;
    char why[256];
    for (long long i = 0; i < raw && !th_failed(); i += TB_STEP) {
        int c0[TPL_MAX_PARAMS], c1[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c0);
        tpl_config_from_index(f, i + TH_TC_INDEX(0, 0, 0, 1), c1);
        CHECK(c0[P_BATCH] == 0 && c1[P_BATCH] == 1);
        CHECK(memcmp(c0, c1, sizeof(int) * P_BATCH) == 0);
        int v0 = f->valid(c0, NULL, NULL, 0), v1 = f->valid(c1, NULL, why, sizeof why);
        int want = v0 && c0[P_PATH] == 90 && c0[P_SPLITK] == 1 && c0[P_GROUP] == 8;
        CHECK_MSG(v1 == want, "config %lld: BATCH 1 valid %d, want %d (%s)", i, v1, want, why);
        if (v0 && !v1)
            CHECK_MSG(strstr(why, "BATCH is 0 or 1") != NULL, "%s", why);
        CHECK_EQ(f->valid_prefix(c1, P_COUNT, NULL), v1);
        if (!v1)
            continue;
        n_batch[c1[P_TYPE]]++;
        CHECK(f->valid(c1, &h100, NULL, 0));
        CHECK(!f->valid(c1, &a100, NULL, 0));
        int ce[TPL_MAX_PARAMS];
        memcpy(ce, c1, sizeof ce);
        ce[P_EPI] = 6;
        CHECK(f->valid(ce, NULL, NULL, 0));     /* every BATCH 1 kernel computes every epilogue */
        for (int q = 0; q < 6; q++) {
            tpl_problem batched = probs[q], single = probs[q];
            batched.batch = batches[q];
            int a0 = f->applicable(c0, &batched);
            CHECK_EQ(f->applicable(c1, &batched), a0);
            served += a0;
            CHECK(!f->applicable(c1, &single));
            single.batch = 1;
            CHECK(!f->applicable(c1, &single));
        }
        if (texts_checked++ < 4) {
            char text[TPL_CONFIG_LEN], opts[2048];
            tpl_config_format(f, c1, text, sizeof text);
            CHECK_MSG(strstr(text, ",BATCH=1") != NULL, "%s", text);
            tpl_options_string(f, c1, "sm_90a", opts, sizeof opts);
            CHECK_MSG(strstr(opts, "-DBATCH=1") != NULL, "%s", opts);
            tpl_config_format(f, c0, text, sizeof text);
            CHECK_MSG(strstr(text, "BATCH") == NULL, "%s", text);
            tpl_options_string(f, c0, "sm_90a", opts, sizeof opts);
            CHECK_MSG(strstr(opts, "BATCH") == NULL, "%s", opts);
        }
    }
    /* the 16-bit PATH 90 rows (9) and TF32's (10) in both rasters, with their op pairs */
    for (int t = 0; t < 3; t++)
        CHECK_MSG(n_batch[t] >= (t == 2 ? 20 : 18), "type %d: %lld BATCH 1 kernels", t,
                  n_batch[t]);
    CHECK(served > 0);
    printf("    BATCH 1 kernels: BF16 %lld, FP16 %lld, TF32 %lld\n", n_batch[0], n_batch[1],
           n_batch[2]);
    /* refused: FP8 operands, split-K, PATH 80, GROUP 16 */
    static const char *const refused[] = {
        "TYPE=0,PATH=90,BM=128,BN=256,BK=128,STAGES=3,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
        "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,OPB=1,FP8=1,BATCH=1",
        "TYPE=0,PATH=90,BM=128,BN=128,BK=64,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
        "RASTER=0,GROUP=8,SPLITK=2,VEC=2,LOADW=16,BATCH=1",
        "TYPE=0,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
        "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,BATCH=1",
        "TYPE=0,PATH=90,BM=128,BN=128,BK=64,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
        "RASTER=0,GROUP=16,SPLITK=1,VEC=8,LOADW=16,BATCH=1",
    };
    for (size_t r = 0; r < sizeof refused / sizeof refused[0]; r++) {
        int c[TPL_MAX_PARAMS];
        CHECK(tt_parse(refused[r], c));
        CHECK(!f->valid(c, NULL, why, sizeof why));
        CHECK_MSG(strstr(why, "BATCH is 0 or 1") != NULL, "%s: %s", refused[r], why);
        c[P_BATCH] = 0;
        CHECK_MSG(f->valid(c, NULL, why, sizeof why), "%s at BATCH 0: %s", refused[r], why);
    }
}

/* Which batches a BATCH 1 launch reads through one 3-D tensor map (tcgemm_run.c; else it packs
 * the operand, or stores C without TMA): one product always; more when the product stride is a
 * positive multiple of 16 bytes below 2^40 bytes and the products do not overlap. The batched
 * calls of bench_calls are tight (stride rows x ld): 59 x 496 x 181 BF16's A (59 x 181) is
 * 21358 bytes, not a multiple of 16. */
TEST(tcgemm_batch_stride_rule)
{
    CHECK(tc_batch_stride_ok(1, 3, 64, 72, 2));
    CHECK(tc_batch_stride_ok(0, 0, 64, 72, 2));
    CHECK(tc_batch_stride_ok(1024, 128 * 64, 128, 64, 2));          /* 128 x 64 BF16, tight */
    CHECK(tc_batch_stride_ok(8, 64 * 72 + 8, 64, 72, 2));           /* padding between them */
    CHECK(tc_batch_stride_ok(8, 64 * 72 + 4, 64, 72, 4));           /* FP32: 16 bytes more */
    CHECK(!tc_batch_stride_ok(8, 64 * 72 + 1, 64, 72, 2));          /* 2 bytes off */
    CHECK(!tc_batch_stride_ok(8, 64 * 72 + 2, 64, 72, 4));          /* 8 bytes off */
    CHECK(!tc_batch_stride_ok(1520, 59 * 181, 59, 181, 2));         /* 21358 bytes */
    CHECK(!tc_batch_stride_ok(683, 46 * 299, 46, 299, 4));          /* 55016 bytes */
    CHECK(!tc_batch_stride_ok(8, 0, 64, 72, 2));                    /* broadcast */
    CHECK(!tc_batch_stride_ok(8, 63 * 72, 64, 72, 2));              /* overlapping */
    CHECK(!tc_batch_stride_ok(8, -64 * 72, 64, 72, 2));
    CHECK(tc_batch_stride_ok(2, (1LL << 39) - 8, 1, 8, 2));         /* below 2^40 bytes */
    CHECK(!tc_batch_stride_ok(2, 1LL << 39, 1, 8, 2));              /* 2^40 bytes */
}

/* PATH 80's load width per operand (tcgemm_run.c): LOADW where base, leading dimension and
 * (batches) product stride allow it, else the widest of 8 (16-bit only) and 4 bytes that does -
 * the same kernel reads the operand in place - else 2 for a 16-bit operand with 2-byte rows (an
 * odd ld or product stride, a base 2 bytes off) where the block's K tiles fit in the ring
 * (t8_prefill_fits), and 0 (packed) otherwise. */
TEST(tcgemm_path80_load_width_rule)
{
    for (int pf = 0; pf < 2; pf++) {
        CHECK_EQ(t8_load_width(4096, 64, 0, 1, 2, 16, pf), 16);     /* aligned BF16 */
        CHECK_EQ(t8_load_width(4096, 68, 0, 1, 2, 16, pf), 8);      /* ld % 8 == 4 */
        CHECK_EQ(t8_load_width(4096, 66, 0, 1, 2, 16, pf), 4);      /* ld % 8 == 2 */
        CHECK_EQ(t8_load_width(4096, 65, 0, 1, 2, 16, pf), 2 * pf); /* odd ld: 2-byte rows */
        CHECK_EQ(t8_load_width(4098, 64, 0, 1, 2, 16, pf), 2 * pf); /* base 2 bytes off */
        CHECK_EQ(t8_load_width(4097, 64, 0, 1, 2, 16, pf), 0);      /* an odd address: packed */
        CHECK_EQ(t8_load_width(4100, 64, 0, 1, 2, 16, pf), 4);      /* base 4 bytes off */
        CHECK_EQ(t8_load_width(4104, 64, 0, 1, 2, 16, pf), 8);      /* base 8 bytes off */
        CHECK_EQ(t8_load_width(4096, 64, 64 * 64 + 2, 8, 2, 16, pf), 4); /* product stride */
        CHECK_EQ(t8_load_width(4096, 64, 64 * 64 + 1, 8, 2, 16, pf), 2 * pf);
        CHECK_EQ(t8_load_width(4096, 64, 64 * 64 + 1, 1, 2, 16, pf), 16); /* one product */
        CHECK_EQ(t8_load_width(4096, 66, 0, 1, 2, 8, pf), 4);
        CHECK_EQ(t8_load_width(4096, 65, 0, 1, 2, 4, pf), 2 * pf);
        CHECK_EQ(t8_load_width(4098, 65, 3, 9, 2, 2, pf), 2);       /* LOADW 2 reads anything */
        CHECK_EQ(t8_load_width(4096, 37, 0, 1, 4, 16, pf), 4);      /* FP32: 16 or 4, never 8 */
        CHECK_EQ(t8_load_width(4096, 38, 0, 1, 4, 16, pf), 4);
        CHECK_EQ(t8_load_width(4100, 36, 0, 1, 4, 16, pf), 4);
        CHECK_EQ(t8_load_width(4096, 36, 0, 1, 4, 16, pf), 16);
        CHECK_EQ(t8_load_width(4096, 37, 0, 1, 4, 4, pf), 4);
        CHECK_EQ(t8_load_width(4098, 37, 0, 1, 4, 16, pf), 0);      /* FP32 2 bytes off */
    }
}

/* t8_prefill_fits: every block walks at most STAGES K tiles (BK 32, 4 stages: k <= 128; a
 * split-K slice of ceil(ceil(k / BK) / SPLITK) tiles). */
TEST(tcgemm_path80_prefill_rule)
{
    int c64[TPL_MAX_PARAMS], c256[TPL_MAX_PARAMS], sk[TPL_MAX_PARAMS];
    CHECK(tt_parse("TYPE=1,PATH=80,BM=64,BN=64,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
                   "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16", c64));
    CHECK(tt_parse("TYPE=0,PATH=80,BM=128,BN=256,BK=64,STAGES=3,WG=2,CM=1,CN=1,WARPS_M=2,"
                   "WARPS_N=4,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16", c256));
    CHECK(tt_parse("TYPE=0,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,"
                   "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=4,VEC=2,LOADW=16", sk));
    static const struct { int which; long long k; int want; } cases[] = {
        {0, 1, 1}, {0, 25, 1}, {0, 96, 1}, {0, 128, 1}, {0, 129, 0}, {0, 4096, 0},
        {1, 192, 1}, {1, 193, 0},
        {2, 512, 1},            /* 16 K tiles in 4 slices of 4 */
        {2, 513, 0},            /* 17: slices of 5 */
    };
    const int *cfgs[3] = {c64, c256, sk};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(t8_prefill_fits(cfgs[cases[i].which], cases[i].k) == cases[i].want,
                  "case %zu (configuration %d, k %lld): want %d", i, cases[i].which, cases[i].k,
                  cases[i].want);
}
