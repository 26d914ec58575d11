/* test_matmul.c: tests of the matmul family: its configuration space and legality
 * rules (CPU) and GPU verification of many configurations (the CPU tier's NVRTC
 * compiles of every family: test_compile_sample.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "measure.h"
#include "th_family.h"
#include "tpl.h"

extern const tpl_family tpl_matmul;

/* Parses text into cfg; 0 (test failed) if it does not parse. */
static int mt_parse(const char *text, int *cfg)
{
    return th_parse_config(&tpl_matmul, text, cfg, __FILE__, __LINE__);
}

static int mt_param(const char *name)
{
    return tpl_param_index(&tpl_matmul, name);
}

/* ---------------- CPU tier ---------------- */


/* Counts over matmul's valid configurations, and the first broken rule
 * (matmul_space_sizes). */
typedef struct mt_scan {
    long long valid;
    int algo_count[3], stages_seen[5], split_seen, frag_seen[2], frag_split128, acc128_bk16;
    int streamk, sk_able, ffma_seen[3], ffma_able;
    int cps_count, cps_able;         /* CPS 4, 8 configurations; the CPS=0 ones they double */
    int ops_count[4];                /* valid ALGO 2 configurations per OPA + 2 * OPB */
    int batch_count[4];              /* the same with BATCH=1 (strided batches) */
    char error[512];                 /* "" if every rule held */
} mt_scan;

#define MT_RULE(cond) do { if (!(cond) && !sc->error[0]) \
    snprintf(sc->error, sizeof sc->error, "config %lld: %s", i, #cond); } while (0)

/* Tallies one valid configuration and checks the rules that tie its values. */
static void mt_scan_valid(mt_scan *sc, long long i, const int *cfg)
{
    sc->valid++;
    sc->algo_count[cfg[0]]++;
    int opa = cfg[mt_param("OPA")], opb = cfg[mt_param("OPB")];
    /* the seeds compute NN only; a transposed operand needs the 16-byte variants */
    MT_RULE(cfg[0] == 2 || (opa == 0 && opb == 0));
    MT_RULE((opa == 0 && opb == 0) || cfg[mt_param("VEC")] == 4);
    if (cfg[0] != 2)
        return;
    if (cfg[mt_param("BATCH")]) {
        /* the batched kernel: one product per grid y, no split-K, no stream-K */
        MT_RULE(cfg[mt_param("BATCH")] == 1 && cfg[mt_param("SPLITK")] == 1 &&
                cfg[mt_param("SK")] == 0);
        sc->batch_count[(opa & 1) + 2 * (opb & 1)]++;
        return;
    }
    sc->ops_count[(opa & 1) + 2 * (opb & 1)]++;
    if (opa || opb)
        return;     /* the rules below count NN's space, the one the recorded landscapes hold */
    sc->stages_seen[cfg[mt_param("STAGES")]] = 1;
    sc->split_seen |= cfg[mt_param("SPLITK")] > 1;
    int fr = cfg[mt_param("FRAG")], bm = cfg[mt_param("BM")], bn = cfg[mt_param("BN")];
    MT_RULE(fr == 0 || fr == 1);
    sc->frag_seen[fr & 1]++;
    /* FRAG=1 needs the second buffer the kernel's static_assert asks for */
    MT_RULE(!fr || (cfg[mt_param("STAGES")] >= 2 && cfg[mt_param("BK")] % 2 == 0));
    sc->frag_split128 += fr && cfg[mt_param("SPLITK")] > 1 && bm == 128 && bn == 128;
    int order = cfg[mt_param("FFMA")];
    MT_RULE(order >= 0 && order <= 2);
    sc->ffma_seen[order < 0 || order > 2 ? 0 : order]++;
    /* other FFMA orders: FRAG=1 tiles of at least 128x128 */
    MT_RULE(order == 0 || (fr == 1 && bm * bn >= 128 * 128));
    sc->ffma_able += order == 0 && fr == 1 && bm * bn >= 128 * 128;
    /* spread copies (CPS 4, 8) double each the FRAG=1, SK=0, SPLITK=1 tiles of >= 128x128 */
    int cps = cfg[mt_param("CPS")];
    int cps_ok = fr == 1 && cfg[mt_param("SK")] == 0 && cfg[mt_param("SPLITK")] == 1 &&
                 bm * bn >= 128 * 128;
    MT_RULE(cps == 0 || ((cps == 4 || cps == 8) && cps_ok));
    sc->cps_count += cps != 0;
    sc->cps_able += cps == 0 && cps_ok;
    if (cps)
        return;     /* the counts below are of the CPS=0 space, as before part 9 */
    if (cfg[mt_param("SK")] == 1) {
        /* stream-K: FRAG=1 main loop, no split-K, tiles of at least 128x128 */
        MT_RULE(fr == 1 && cfg[mt_param("SPLITK")] == 1 && bm * bn >= 128 * 128);
        sc->streamk += order == 0;
    } else {
        sc->sk_able += order == 0 && fr == 1 && cfg[mt_param("SPLITK")] == 1 &&
                       bm * bn >= 128 * 128;
    }
    /* 128 accumulators at BK=16: FRAG=1 only (ptxas -v: FRAG=0 spills) */
    if (cfg[mt_param("WM")] * cfg[mt_param("WN")] == 128 * 32 && cfg[mt_param("BK")] == 16) {
        MT_RULE(fr == 1);
        sc->acc128_bk16++;
    }
}

/* Scans one slice with its own counter over the value lists; every 4099th
 * index also through tpl_config_from_index, which must agree. */
/* A strided sample of the raw space (every MT_STRIDE-th index, from a prime
 * offset): each index decodes as the stepped configuration, every rejection
 * has a reason, and valid() agrees with the enumerated list. */
#define MT_STRIDE 1009LL
static void mt_sample_raw(mt_scan *sc, const long long *valid, long long n_valid)
{
    const tpl_family *f = &tpl_matmul;
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    long long raw = tpl_space_size(f), sampled = 0, i;
    for (i = 7; i < raw && !sc->error[0]; i += MT_STRIDE) {
        tpl_config_from_index(f, i, cfg);
        MT_RULE(tpl_config_to_index(f, cfg) == i);
        why[0] = '\0';
        int ok = f->valid(cfg, NULL, why, sizeof why);
        MT_RULE(ok || why[0] != '\0');              /* rejected with a reason */
        long long lo = 0, hi = n_valid;               /* in the list iff valid */
        while (lo < hi) {
            long long mid = lo + (hi - lo) / 2;
            if (valid[mid] < i)
                lo = mid + 1;
            else
                hi = mid;
        }
        MT_RULE(ok == (lo < n_valid && valid[lo] == i));
        sampled++;
    }
    MT_RULE(sampled > 1000000);       /* (i: past the end) */
}

TEST(matmul_space_sizes)
{
    const tpl_family *f = &tpl_matmul;
    CHECK(tpl_find("matmul") == f);
    long long expect = 1;
    for (int p = 0; p < f->n_params; p++)
        expect *= f->params[p].n_values;
    /* 3*3*2 (ALGO, TILE, UNROLL) * 3^5 (BM BN BK WM WN) * 2*2*3*4*2*2*5*2*2*3 * 2*2 (OPA OPB)
     * * 2 (BATCH) * 3 (CPS) */
    CHECK_EQ(expect, 18LL * 243 * 2 * 2 * 3 * 4 * 2 * 2 * 5 * 2 * 2 * 3 * 2 * 2 * 2 * 3);
    CHECK_EQ(tpl_space_size(f), expect);
    /* the tally runs over the enumerated valid set (test_enum proves the
     * enumeration equal to a plain scan); a strided sample of the raw space
     * cross-checks it here */
    long long *valid = NULL;
    long long n_valid = tpl_valid_configs_cached(f, NULL, &valid);
    CHECK(n_valid > 0);
    mt_scan all;
    memset(&all, 0, sizeof all);
    for (long long v = 0; v < n_valid; v++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(f, valid[v], cfg);
        mt_scan_valid(&all, valid[v], cfg);
    }
    mt_sample_raw(&all, valid, n_valid);
    free(valid);
    CHECK_MSG(!all.error[0], "%s", all.error);
    printf("    matmul: BATCH=1 per ops NN/TN/NT/TT: %d/%d/%d/%d\n", all.batch_count[0],
           all.batch_count[1], all.batch_count[2], all.batch_count[3]);
    /* every kind has a batched space: its one-product configurations without split-K or
     * stream-K (nonempty, never larger than the kind's own) */
    for (int k = 0; k < 4; k++)
        CHECK_MSG(all.batch_count[k] >= 100 && all.batch_count[k] < all.ops_count[k],
                  "ops %d: %d batched configurations", k, all.batch_count[k]);
    printf("    matmul: ALGO 2 per ops NN/TN/NT/TT: %d/%d/%d/%d\n", all.ops_count[0],
           all.ops_count[1], all.ops_count[2], all.ops_count[3]);
    /* each kind's own space stays tunable: every transposed kind has a space of its
     * own of the NN space's order (the tuner searches one kind at a time) */
    for (int k = 1; k < 4; k++)
        CHECK_MSG(all.ops_count[k] >= 200 && all.ops_count[k] <= all.ops_count[0],
                  "ops %d: %d configurations", k, all.ops_count[k]);
    all.valid -= all.ops_count[1] + all.ops_count[2] + all.ops_count[3];
    for (int k = 0; k < 4; k++)
        all.valid -= all.batch_count[k];
    printf("    matmul: raw %lld, valid %lld (naive %d, tiled %d, tuned %d)\n", expect, all.valid,
           all.algo_count[0], all.algo_count[1], all.algo_count[2]);
    printf("    matmul: FRAG=0 %d, FRAG=1 %d (split-K on 128x128: %d), stream-K %d\n",
           all.frag_seen[0], all.frag_seen[1], all.frag_split128, all.streamk);
    /* `make check` compiles every one twice; CPS 4 and 8 (part 9) added 432; SPLITK=16 on
     * FRAG=1 tiles up to 128x128 (part 12) 60, all sharing their SPLITK=2 cubins */
    CHECK(all.valid >= 200 && all.valid <= 1600);
    /* SK=1 doubles exactly the FRAG=1, SPLITK=1 configurations with tiles of at
     * least 128x128 (72 of them, 2026-11-22) */
    CHECK(all.streamk >= 36);
    CHECK_EQ(all.streamk, all.sk_able);
    /* FFMA 1 and 2 triple exactly the FRAG=1 configurations of >= 128x128 tiles */
    printf("    matmul: FFMA orders 0/1/2: %d/%d/%d\n", all.ffma_seen[0], all.ffma_seen[1],
           all.ffma_seen[2]);
    CHECK(all.ffma_able >= 100);
    CHECK_EQ(all.ffma_seen[1], all.ffma_able);
    CHECK_EQ(all.ffma_seen[2], all.ffma_able);
    CHECK(all.frag_seen[0] > 100 && all.frag_seen[1] > 100 && all.frag_split128 > 0);
    printf("    matmul: CPS 4 and 8 (NN) %d, %d able\n", all.cps_count, all.cps_able);
    CHECK(all.cps_able >= 100);
    CHECK_EQ(all.cps_count, 2 * all.cps_able);
    CHECK_EQ(all.acc128_bk16, 180);     /* 128x256 and 256x128, FRAG=1, STAGES 2/3, + SPLITK=4 at 3, + SK=1, x 3 FFMA orders */
    CHECK_EQ(all.algo_count[0], 1);     /* the naive kernel has no parameters */
    CHECK_EQ(all.algo_count[1], 6);     /* TILE 8/16/32 x UNROLL 1/4 */
    CHECK(all.stages_seen[1] && all.stages_seen[2] && all.stages_seen[3] && all.stages_seen[4] &&
          all.split_seen);
}

TEST(matmul_valid_rejects_with_reason)
{
    const tpl_family *f = &tpl_matmul;
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    static const char *const bad[] = {
        /* unused parameter off its canonical value: a duplicate of ALGO=0 */
        "ALGO=0,TILE=8,UNROLL=1,BM=128,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=1,TILE=16,UNROLL=1,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=2,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=16,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* UNROLL does not divide TILE */
        "ALGO=1,TILE=8,UNROLL=3,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* 64 warps = 2048 threads */
        "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=256,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* warp tile does not divide the block tile */
        "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=8,WM=128,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* 256 accumulators per thread */
        "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=256,BK=8,WM=128,WN=64,TM=8,TN=8,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* shared memory: 4 x 32 x (256+256+8) x 4 bytes = 266 KB */
        "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=256,BK=32,WM=128,WN=64,TM=8,TN=4,WNITER=2,STAGES=4,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* PAD=0 leaves the 8-way conflicts of the transposed A stores */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* split-K with large tiles */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* VEC outside 1/4, unknown ALGO */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=2,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=3,TILE=8,UNROLL=1,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        /* FRAG=1: needs a second stage, VEC=4, STAGES <= 3, BK <= 16; FRAG outside 0/1 */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=32,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=1,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=3,VEC=1,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=4,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=2,SK=0,FFMA=0,OPA=0,OPB=0",
        /* split-K: 128x128 tiles only with FRAG=1; STAGES=3 only; at most 16 splits; tiles
         * under 128x128 at least 4 */
        "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=4,VEC=4,PAD=4,SPLITK=2,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=17,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=3,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        /* 128 accumulators: BK=16 only with FRAG=1 (FRAG=0 spills), BK=32 never */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=32,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        /* split-K on 128x256: FRAG=1, BK=16, SPLITK=4 only */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=3,VEC=4,PAD=4,SPLITK=2,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=8,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        /* stream-K: not with split-K, FRAG=0 or tiles under 128x128; SK outside 0/1 */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=1,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=2,FFMA=0,OPA=0,OPB=0",
        "ALGO=1,TILE=16,UNROLL=1,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=1,FFMA=0,OPA=0,OPB=0",
        /* FFMA orders: FRAG=1 on tiles of >= 128x128 only; 0..2 */
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=1,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=3,OPA=0,OPB=0",
        /* FRAG with an unused-by-ALGO parameter off canonical */
        "ALGO=1,TILE=16,UNROLL=1,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (!mt_parse(bad[i], cfg))
            return;
        why[0] = '\0';
        CHECK_MSG(!f->valid(cfg, NULL, why, sizeof why), "accepted: %s", bad[i]);
        CHECK_MSG(why[0] != '\0', "no reason for %s", bad[i]);
    }
    /* Split counts that fill a wave of a small output over a deep K (part 12): up to 16 on
     * 128x128 FRAG=1 tiles and on smaller ones, any count (SPLITK is run-time from 2: one
     * cubin), not only the listed values */
    static const char *const splits[] = {
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=11,FRAG=1,SK=0,FFMA=0,OPA=1,OPB=1",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=0,SPLITK=13,FRAG=1,SK=0,FFMA=0,OPA=1,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=1",
    };
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        if (!mt_parse(splits[i], cfg))
            return;
        CHECK_MSG(f->valid(cfg, NULL, why, sizeof why), "%s: %s", splits[i], why);
    }
    /* The device's shared-memory limit is honoured: 4 stages of 128x256x8 with
     * padding need 4*8*(128+256+8)*4 = 50176 bytes, legal on the generic sm_80+
     * device, illegal on a 48 KiB one. */
    const char *big = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=8,WM=64,WN=64,TM=4,TN=4,WNITER=4,"
                      "STAGES=4,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0";
    if (!mt_parse(big, cfg))
        return;
    CHECK_MSG(f->valid(cfg, NULL, why, sizeof why), "%s", why);
    at_device_info small;
    memset(&small, 0, sizeof small);
    small.smem_per_block_optin = 48 * 1024;
    small.regs_per_block = 65536;
    small.max_threads_per_block = 1024;
    CHECK(!f->valid(cfg, &small, why, sizeof why));
    CHECK(strstr(why, "shared memory") != NULL);
}

TEST(matmul_default_and_baselines_are_valid_everywhere)
{
    const tpl_family *f = &tpl_matmul;
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    static const tpl_problem shapes[] = {
        TPL_PROBLEM(3, {1, 1, 1}), TPL_PROBLEM(3, {1000, 999, 1001}),
        TPL_PROBLEM(3, {4097, 4097, 4097}), TPL_PROBLEM(3, {1, 8192, 1}),
        TPL_PROBLEM(3, {16384, 16384, 1024}), TPL_PROBLEM(3, {8192, 64, 8192}),
        TPL_PROBLEM(3, {5, 7, 0}),
    };
    if (!mt_parse(f->default_config, cfg))
        return;
    CHECK_MSG(f->valid(cfg, NULL, why, sizeof why), "default: %s", why);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        CHECK(f->applicable(cfg, &shapes[s]));
    CHECK(f->deterministic(cfg));
    CHECK(f->n_baselines >= 2);
    int have_tiled = 0, batched[4] = {0};
    /* one product takes the kernel without batch offsets, a batch the batched kernel: the
     * default computes no batch, and the lookup's fallback finds a baseline for each kind */
    tpl_problem batch = TPL_PROBLEM(3, {512, 512, 512});
    batch.batch = 128;
    CHECK(!f->applicable(cfg, &batch));
    for (int b = 0; b < f->n_baselines; b++) {
        if (!mt_parse(f->baselines[b].config, cfg))
            return;
        CHECK_MSG(f->valid(cfg, NULL, why, sizeof why), "%s: %s", f->baselines[b].name, why);
        /* the seeds (NN), tiles for each other pair of ops, the batched kernel for each pair */
        if (strncmp(f->baselines[b].name, "seed", 4) == 0) {
            CHECK(cfg[0] == 0 || cfg[0] == 1);
        } else if (strcmp(f->baselines[b].name, "skinny_splitk") == 0) {
            /* the one NN search start besides the seeds: split-K on a narrow tile (the
             * default, tried first, stays the fallback of every NN product) */
            CHECK(cfg[0] == 2 && !cfg[mt_param("OPA")] && !cfg[mt_param("OPB")] &&
                  !cfg[mt_param("BATCH")] && cfg[mt_param("SPLITK")] > 1);
            CHECK(f->applicable(cfg, &shapes[5]));
        } else {
            CHECK_MSG(cfg[0] == 2 && (cfg[mt_param("OPA")] || cfg[mt_param("OPB")] ||
                                      cfg[mt_param("BATCH")]), "%s", f->baselines[b].name);
        }
        batched[cfg[mt_param("OPA")] + 2 * cfg[mt_param("OPB")]] |= cfg[mt_param("BATCH")];
        have_tiled |= strcmp(f->baselines[b].name, "seed_tiled") == 0;
    }
    CHECK(have_tiled);
    CHECK(batched[0] && batched[1] && batched[2] && batched[3]);
    CHECK(f->n_tuning_problems >= 4);
    for (int i = 0; i < f->n_tuning_problems; i++)
        CHECK_EQ(f->tuning_problems[i].n_dims, 3);
}

TEST(matmul_applicable_and_work)
{
    const tpl_family *f = &tpl_matmul;
    int cfg[TPL_MAX_PARAMS];
    const char *sk = "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,"
                     "STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0";
    if (!mt_parse(sk, cfg))
        return;
    char why[256];
    CHECK_MSG(f->valid(cfg, NULL, why, sizeof why), "%s", why);
    tpl_problem longk = TPL_PROBLEM(3, {128, 8192, 8192});
    tpl_problem shortk = TPL_PROBLEM(3, {128, 128, 200});
    tpl_problem huge = TPL_PROBLEM(3, {16384, 16384, 1024});
    CHECK(f->applicable(cfg, &longk));
    CHECK(!f->applicable(cfg, &shortk));    /* 16 splits of 200: under 2 steps each */
    CHECK(!f->applicable(cfg, &huge));      /* 16 GiB of partial sums */
    /* a batch needs the batched kernel (BATCH=1: no split-K or stream-K), one product the
     * kernel without batch offsets (BATCH=0) */
    tpl_problem batch = TPL_PROBLEM(3, {128, 8192, 8192});
    batch.batch = 3;
    CHECK(!f->applicable(cfg, &batch));
    cfg[mt_param("BATCH")] = 1;
    CHECK(!f->valid(cfg, NULL, why, sizeof why) && strstr(why, "BATCH=1") != NULL);
    cfg[mt_param("SPLITK")] = 1;
    CHECK_MSG(f->valid(cfg, NULL, why, sizeof why), "%s", why);
    CHECK(f->applicable(cfg, &batch));
    CHECK(!f->applicable(cfg, &longk));
    char text[TPL_CONFIG_LEN];
    tpl_config_format(f, cfg, text, sizeof text);
    CHECK(strstr(text, ",BATCH=1") != NULL);
    cfg[mt_param("BATCH")] = 0;
    tpl_config_format(f, cfg, text, sizeof text);
    CHECK(strstr(text, "BATCH") == NULL);     /* one product's texts read as before */
    double flops = 0, bytes = 0;
    tpl_problem p = TPL_PROBLEM(3, {3, 5, 7});
    f->work(&p, &flops, &bytes);
    CHECK(flops == 2.0 * 3 * 5 * 7);
    CHECK(bytes == 4.0 * (3 * 7 + 7 * 5 + 2 * 3 * 5));
    CHECK(f->tolerance(&p) > 0 && f->tolerance(&p) < 1e-4);
}

/* The stream-K schedule: the cases by hand, then for many shapes the invariants the
 * kernel relies on, with its range formulas (begin, owner, slot) replayed here:
 * every K step of every tile computed exactly once, at most two partial segments
 * per block, each partial tile's contributors lo..hi exactly the blocks whose
 * ranges touch it, and no two partial segments sharing a workspace slot. */
static int mt_sk_begin(const mm_streamk_schedule *s, int b)
{
    return b * s->q + (b < s->r ? b : s->r);
}

static int mt_sk_owner(const mm_streamk_schedule *s, int x)
{
    int split = s->r * (s->q + 1);
    return x < split ? x / (s->q + 1) : s->r + (x - split) / s->q;
}

TEST(matmul_streamk_schedule)
{
    mm_streamk_schedule s;
    /* 4096^3, 128x256 tiles, BK=16 on 132 SMs: 512 tiles = 3 waves + 116; the last
     * two waves' 248 tiles are split by K: 63488 steps, 480 or 481 per block. */
    mm_streamk_plan(512, 256, 132, &s);
    CHECK_EQ(s.grid, 132);
    CHECK_EQ(s.dp_tiles, 264);
    CHECK_EQ(s.sk_tiles, 248);
    CHECK_EQ(s.q, 480);
    CHECK_EQ(s.r, 128);
    mm_streamk_plan(264, 64, 132, &s);      /* whole waves: no stream-K */
    CHECK(s.grid == 132 && s.dp_tiles == 264 && s.sk_tiles == 0 && s.q == 0 && s.r == 0);
    mm_streamk_plan(32, 512, 132, &s);      /* 128x8192x8192: fewer tiles than blocks */
    CHECK(s.grid == 132 && s.dp_tiles == 0 && s.sk_tiles == 32 && s.q == 124 && s.r == 16);
    mm_streamk_plan(3, 2, 132, &s);         /* 6 steps: 6 blocks */
    CHECK(s.grid == 6 && s.sk_tiles == 3 && s.q == 1 && s.r == 0);
    mm_streamk_plan(40, 0, 132, &s);        /* K = 0: one block per tile (beta * C) */
    CHECK(s.grid == 40 && s.dp_tiles == 40 && s.sk_tiles == 0);
    mm_streamk_plan(200, 1LL << 30, 132, &s);   /* iterations beyond 32 bits */
    CHECK(s.grid == 200 && s.dp_tiles == 200 && s.sk_tiles == 0);

    static const int blocks[] = {1, 7, 132, 264};
    static const long long tiles[] = {1, 2, 5, 131, 132, 133, 263, 264, 265, 512, 1000};
    static const long long steps[] = {1, 2, 3, 16, 63, 256};
    for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++)
        for (size_t ti = 0; ti < sizeof tiles / sizeof tiles[0]; ti++)
            for (size_t ki = 0; ki < sizeof steps / sizeof steps[0]; ki++) {
                long long T = tiles[ti], ks = steps[ki];
                mm_streamk_plan(T, ks, blocks[bi], &s);
                CHECK(s.grid >= 1 && s.grid <= blocks[bi]);
                CHECK(s.dp_tiles % s.grid == 0 && s.dp_tiles + s.sk_tiles == T);
                long long iters = s.sk_tiles * ks;
                CHECK_EQ((long long)s.q * s.grid + s.r, iters);
                CHECK(s.sk_tiles == 0 || (s.q >= 1 && s.r < s.grid));
                /* whole waves stay data-parallel; stream-K takes at most two waves */
                CHECK(s.sk_tiles <= 2 * (long long)s.grid || s.dp_tiles == 0);
                if (!s.sk_tiles)
                    continue;
                int *covered = calloc((size_t)iters, sizeof *covered);
                int *slot_used = calloc((size_t)s.grid * 2, sizeof *slot_used);
                CHECK(covered && slot_used);
                for (int b = 0; b < s.grid && !th_failed(); b++) {
                    int beg = mt_sk_begin(&s, b), end = mt_sk_begin(&s, b + 1), partials = 0;
                    CHECK(end > beg);
                    for (int it = beg; it < end;) {
                        int t = it / (int)ks, kb = it - t * (int)ks;
                        int ke = end - t * (int)ks < ks ? end - t * (int)ks : (int)ks;
                        for (int x = it; x < it + ke - kb; x++)
                            covered[x]++;
                        if (kb != 0 || ke != ks) {
                            partials++;
                            int slot = 2 * b + (it == beg ? 0 : 1);
                            CHECK_MSG(slot_used[slot]++ == 0, "slot %d used twice", slot);
                            int tb = t * (int)ks;
                            int lo = mt_sk_owner(&s, tb), hi = mt_sk_owner(&s, tb + (int)ks - 1);
                            CHECK(lo <= b && b <= hi && hi > lo);
                            CHECK(mt_sk_begin(&s, lo) <= tb && mt_sk_begin(&s, hi + 1) >= tb + ks);
                            CHECK(lo == b || mt_sk_begin(&s, b) > tb);
                            /* the slot the finisher reads for this block */
                            CHECK_EQ(2 * b + (mt_sk_begin(&s, b) >= tb ? 0 : 1), slot);
                        }
                        it += ke - kb;
                    }
                    CHECK(partials <= 2);
                }
                for (long long x = 0; x < iters && !th_failed(); x++)
                    CHECK_MSG(covered[x] == 1, "T=%lld ks=%lld P=%d: step %lld done %d times", T,
                              ks, blocks[bi], x, covered[x]);
                free(covered);
                free(slot_used);
                if (th_failed())
                    return;
            }
}
