/* test_matmul.c: tests of the matmul family: its configuration space and legality
 * rules (CPU) and GPU verification of many configurations (the CPU tier's NVRTC
 * compiles of every family: test_compile_sample.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "measure.h"
#include "tpl.h"

extern const tpl_family tpl_matmul;

/* Parses text into cfg; 0 (test failed) if it does not parse. */
static int mt_parse(const char *text, int *cfg)
{
    char err[256];
    if (tpl_config_parse(&tpl_matmul, text, cfg, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "parse \"%s\": %s", text, err);
        return 0;
    }
    return 1;
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
    /* `make check` compiles every one twice; CPS 4 and 8 (part 9) added 432 */
    CHECK(all.valid >= 200 && all.valid <= 1500);
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
        /* split-K: 128x128 tiles only with FRAG=1; STAGES=3 only; FRAG=1 at most 8 splits */
        "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=4,VEC=4,PAD=4,SPLITK=2,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
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

/* ---------------- GPU tier ---------------- */

static const char *const mt_spread[] = {
    /* every STAGES, both layouts, 16-byte and 4-byte paths, split-K, big tiles */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=8,TN=4,WNITER=2,STAGES=1,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=8,WM=64,WN=32,TM=8,TN=8,WNITER=1,STAGES=2,VEC=1,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=32,WN=64,TM=8,TN=4,WNITER=2,STAGES=4,VEC=1,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=8,WM=64,WN=64,TM=8,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=128,BK=8,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=4,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=32,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=2,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    /* FRAG=1: fragments double-buffered across the barrier; both stage counts, BK 8/16,
     * 4- and 8-warp tiles, 128 accumulators, split-K on 64x128 and 128x128 tiles */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=128,BK=8,WM=64,WN=64,TM=8,TN=8,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=64,WN=32,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=8,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    /* part 3: the 4096^3 sweep winner (128 accumulators, interior copy path), a
     * 128x128 BK=16 split-K FRAG=1 tile (the 128x8192x8192 winner's shape) and the
     * new 128-accumulator BK=16 FRAG=1 tiles */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=8,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=128,BK=16,WM=64,WN=64,TM=8,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    /* part 4: stream-K on the 4096^3 winner's tile (one block per SM) and on a
     * 128x128 tile (two per SM); the small shapes here split every tile over many
     * blocks (fewer tiles than blocks) */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
    /* part 5: the serpentine FFMA orders (rows with stream-K, columns with split-K) */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=1,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0",
    "ALGO=1,TILE=8,UNROLL=4,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=1,TILE=32,UNROLL=4,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    /* part 9: copies spread over the next K step (CPS 4, 8): 3 and 2 stages, BK 16 and 8,
     * 64 and 128 accumulators */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0,CPS=4",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0,CPS=8",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0,CPS=4",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=1,OPA=0,OPB=0,CPS=8",
};

typedef struct mt_cfg {
    char text[TPL_CONFIG_LEN];
    int cfg[TPL_MAX_PARAMS];
    void *cubin;
    size_t size;
} mt_cfg;

/* 1 if cfg computes one NN product (the tests below that build such calls skip the
 * others: other ops, and the batched kernel, which computes batches only). */
static int mt_is_nn(const int *cfg)
{
    return cfg[mt_param("OPA")] == 0 && cfg[mt_param("OPB")] == 0 && cfg[mt_param("BATCH")] == 0;
}

/* The default, the baselines and the spread above, parsed and checked valid; those that
 * compute one NN product (the users' only calls) compiled for the device's arch; *n set to
 * the count (0 on failure). */
static mt_cfg *mt_compile_set(const at_device_info *dev, int *n)
{
    const tpl_family *f = &tpl_matmul;
    int total = 1 + f->n_baselines + (int)(sizeof mt_spread / sizeof mt_spread[0]);
    mt_cfg *set = calloc((size_t)total, sizeof *set);
    *n = 0;
    if (!set)
        return NULL;
    for (int i = 0; i < total; i++) {
        const char *t = i == 0 ? f->default_config
                      : i <= f->n_baselines ? f->baselines[i - 1].config
                      : mt_spread[i - 1 - f->n_baselines];
        snprintf(set[i].text, sizeof set[i].text, "%s", t);
        char why[256], *log = NULL;
        if (!mt_parse(t, set[i].cfg))
            return set;
        if (!f->valid(set[i].cfg, dev, why, sizeof why)) {
            th_fail(__FILE__, __LINE__, "%s invalid on device: %s", t, why);
            return set;
        }
        if (!mt_is_nn(set[i].cfg)) {
            *n = i + 1;         /* other ops, batches: valid, never launched here */
            continue;
        }
        at_status s = tpl_compile(f, set[i].cfg, dev->arch, &set[i].cubin, &set[i].size, &log);
        if (s != AT_OK) {
            th_fail(__FILE__, __LINE__, "%s: compile failed: %s", t, log ? log : "");
            free(log);
            return set;
        }
        free(log);
        *n = i + 1;
    }
    return set;
}

static void mt_free_set(mt_cfg *set, int n)
{
    for (int i = 0; set && i < n; i++)
        free(set[i].cubin);
    free(set);
}

GPU_TEST(matmul_gpu_configs_verify_at_ragged_shapes)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    int n = 0;
    mt_cfg *set = mt_compile_set(ms_device(g), &n);
    static const tpl_problem shapes[] = {
        TPL_PROBLEM(3, {1000, 999, 1001}), TPL_PROBLEM(3, {1, 1, 1}), TPL_PROBLEM(3, {17, 33, 65}),
        TPL_PROBLEM(3, {130, 70, 300}),
        /* n % 4 == 0 and k >= 512: every split-K config runs, with the float4 reduction */
        TPL_PROBLEM(3, {96, 132, 520}),
        /* interior blocks of every tile size (FRAG=1's unpredicated copy path) next to
         * edge blocks, a ragged K tail, several K steps per split */
        TPL_PROBLEM(3, {260, 264, 1037}),
        /* whole K steps: interior blocks take the spread copies (CPS), edge blocks not */
        TPL_PROBLEM(3, {260, 264, 1024}),
    };
    for (size_t s = 0; !th_failed() && s < sizeof shapes / sizeof shapes[0]; s++) {
        const tpl_problem *p = &shapes[s];
        at_status st = ms_prepare(g, f, p, 11 + s, err, sizeof err);
        if (st != AT_OK) {
            th_fail(__FILE__, __LINE__, "prepare: %s", err);
            break;
        }
        for (int i = 0; i < n; i++) {
            double e = -1;
            if (!mt_is_nn(set[i].cfg))
                continue;
            st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &e, err, sizeof err);
            if (st != AT_OK || !(e <= f->tolerance(p))) {
                th_fail(__FILE__, __LINE__, "%lldx%lldx%lld %s: %s (error %g, %s)", p->dims[0],
                        p->dims[1], p->dims[2], set[i].text, at_status_string(st), e, err);
                break;
            }
        }
    }
    /* The default at a large ragged shape, with its speed for the log. */
    if (!th_failed() && n > 0) {
        tpl_problem big = TPL_PROBLEM(3, {4097, 4095, 4096});
        double e = -1;
        at_status st = ms_prepare(g, f, &big, 5, err, sizeof err);
        if (st == AT_OK)
            st = ms_verify(g, f, set[0].cfg, set[0].cubin, set[0].size, &e, err, sizeof err);
        if (st != AT_OK || !(e <= 1e-5)) {
            th_fail(__FILE__, __LINE__, "default at 4097x4095x4096: %s error %g %s",
                    at_status_string(st), e, err);
        } else {
            ms_options o;
            ms_timing t;
            ms_default_options(&o);
            if (ms_time(g, f, set[0].cfg, set[0].cubin, set[0].size, &o, &t, err, sizeof err) == AT_OK)
                printf("    default at 4097x4095x4096: %.3f ms = %.1f TFLOP/s, rel error %.2e\n",
                       t.median_ms, 2.0 * 4097 * 4095 * 4096 / t.median_ms * 1e-9, e);
        }
    }
    mt_free_set(set, n);
    ms_close(g);
}

/* Spread configurations that get transposed variants in matmul_gpu_ops_and_batches: the
 * STAGES=1 loop, a FRAG=0 128x256 tile, split-K, FRAG=1 128x128 and 128x256 (interior copy
 * paths), stream-K, spread copies (CPS=4; also batched). */
static const int mt_ops_spread[] = {0, 3, 6, 8, 15, 20, 26};

/* Every op pair on odd sizes (odd leading dimensions: A of op T at m = 129 has lda 129, so
 * A's 16-byte path falls back to 4-byte copies) and batches with odd strides, each
 * product against float64: the transposed and batched baselines and transposed variants of
 * spread configurations (PAD set to what valid() asks for), the first two also as the
 * batched kernel (BATCH=1). BATCH=0 configurations run the one-product shapes, BATCH=1
 * ones the batches (NN included). */
enum { MT_OPS_MAX = 48 };

/* Fills set (MT_OPS_MAX entries) with the configurations above, valid on dev (NULL: the
 * generic device); returns their count. */
static int mt_ops_set(const at_device_info *dev, mt_cfg *set)
{
    const tpl_family *f = &tpl_matmul;
    int n = 0;
    for (int b = 0; b < f->n_baselines && n < MT_OPS_MAX; b++)
        if (mt_parse(f->baselines[b].config, set[n].cfg) && !mt_is_nn(set[n].cfg))
            snprintf(set[n++].text, TPL_CONFIG_LEN, "%s", f->baselines[b].config);
    for (size_t i = 0; i < sizeof mt_ops_spread / sizeof mt_ops_spread[0]; i++)
        for (int ops = 1; ops < 4 && n < MT_OPS_MAX; ops++) {
            int *c = set[n].cfg;
            char why[256];
            if (!mt_parse(mt_spread[mt_ops_spread[i]], c))
                break;
            c[mt_param("OPA")] = ops & 1;
            c[mt_param("OPB")] = ops >> 1;
            c[mt_param("PAD")] = 0;
            if (!f->valid(c, dev, why, sizeof why))
                c[mt_param("PAD")] = 4;
            if (!f->valid(c, dev, why, sizeof why))
                continue;       /* this tile's copies do not split for these ops */
            tpl_config_format(f, c, set[n].text, TPL_CONFIG_LEN);
            n++;
            /* the batched kernel of the first two spread tiles and the CPS one too */
            if ((i < 2 || i == 6) && n < MT_OPS_MAX) {
                memcpy(set[n].cfg, c, sizeof set[n].cfg);
                set[n].cfg[mt_param("BATCH")] = 1;
                if (f->valid(set[n].cfg, dev, why, sizeof why)) {
                    tpl_config_format(f, set[n].cfg, set[n].text, TPL_CONFIG_LEN);
                    n++;
                }
            }
        }
    return n;
}

TEST(matmul_ops_set_covers_every_pair)
{
    mt_cfg set[MT_OPS_MAX];
    memset(set, 0, sizeof set);
    int n = mt_ops_set(NULL, set), per[4] = {0}, batched[4] = {0};
    for (int i = 0; i < n; i++) {
        int k = set[i].cfg[mt_param("OPA")] + 2 * set[i].cfg[mt_param("OPB")];
        per[k]++;
        batched[k] += set[i].cfg[mt_param("BATCH")];
    }
    printf("    %d configurations: NN %d, TN %d, NT %d, TT %d; batched NN %d, TN %d, NT %d, TT %d\n",
           n, per[0], per[1], per[2], per[3], batched[0], batched[1], batched[2], batched[3]);
    /* NN only in the batched kernel (one NN product is the other tests' subject) */
    CHECK(per[0] == batched[0] && batched[0] >= 1);
    for (int k = 1; k < 4; k++)
        CHECK(per[k] >= 4 && batched[k] >= 2 && per[k] - batched[k] >= 4);
}

GPU_TEST(matmul_gpu_ops_and_batches)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    mt_cfg *set = calloc(MT_OPS_MAX, sizeof *set);
    CHECK(set != NULL);
    int n = mt_ops_set(ms_device(g), set);
    for (int i = 0; i < n && !th_failed(); i++) {
        char *log = NULL;
        at_status s = tpl_compile(f, set[i].cfg, ms_device(g)->arch, &set[i].cubin,
                                  &set[i].size, &log);
        CHECK_MSG(s == AT_OK, "%s: compile failed: %s", set[i].text, log ? log : "");
        free(log);
    }
    static const long long shapes[][4] = {
        /* m, n, k, batch */
        {129, 65, 33, 1}, {1, 1, 1, 1}, {260, 264, 1037, 1}, {300, 130, 520, 1},
        {260, 264, 512, 1},     /* whole K steps: CPS's spread copies in interior blocks */
        {65, 33, 17, 3}, {129, 128, 64, 5}, {1, 7, 3, 4},
    };
    int ran = 0, expect = 0;
    for (int i = 0; i < n; i++)     /* 5 one-product shapes or 3 batches per configuration */
        expect += set[i].cfg[mt_param("BATCH")] ? 3 : 5;
    for (int ops = 0; ops < 4 && !th_failed(); ops++)
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0] && !th_failed(); sh++) {
            tpl_problem p = TPL_PROBLEM(3, {shapes[sh][0], shapes[sh][1], shapes[sh][2]});
            p.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
            p.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            p.batch = shapes[sh][3];
            at_status st = ms_prepare(g, f, &p, 40 + sh, err, sizeof err);
            CHECK_MSG(st == AT_OK, "prepare: %s", err);
            for (int i = 0; i < n && !th_failed(); i++) {
                const int *c = set[i].cfg;
                if (c[mt_param("OPA")] != (ops & 1) || c[mt_param("OPB")] != (ops >> 1) ||
                    c[mt_param("BATCH")] != (p.batch > 1))
                    continue;
                double e = -1;
                st = ms_verify(g, f, c, set[i].cubin, set[i].size, &e, err, sizeof err);
                CHECK_MSG(st == AT_OK && e <= f->tolerance(&p), "%lldx%lldx%lld ops %d batch %lld "
                          "%s: %s (error %g, %s)", p.dims[0], p.dims[1], p.dims[2], ops, p.batch,
                          set[i].text, at_status_string(st), e, err);
                ran++;
            }
        }
    printf("    %d configurations, %d verified runs\n", n, ran);
    CHECK(n >= 12);
    CHECK_EQ(ran, expect);
    mt_free_set(set, n);
    ms_close(g);
}

/* Fills a device buffer with n host floats from an LCG in [-1, 1). */
static int mt_upload_random(const cudrv *cu, CUdeviceptr p, size_t n, unsigned seed)
{
    float *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f;
    }
    int ok = cu->MemcpyHtoD(p, v, n * sizeof *v) == CUDA_SUCCESS;
    free(v);
    return ok;
}

/* Padded and odd leading dimensions, unaligned pointers, C's padding left
 * untouched, beta = 0 with NaN in C: every config of the set against the
 * float64 reference over the whole ldc-wide buffer. */
GPU_TEST(matmul_gpu_leading_dimensions_and_alignment)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    int n_set = 0;
    mt_cfg *set = mt_compile_set(ms_device(g), &n_set);
    static const int dims[][6] = {
        /* m, n, k, lda, ldb, ldc */
        {123, 77, 95, 101, 80, 84},     /* padded, multiples of 4 where possible */
        {67, 45, 129, 131, 47, 50},     /* odd: no 16-byte path for A/B rows */
        {200, 130, 70, 70, 133, 131},
        /* interior 128x256 blocks with an odd lda and a padded, 16-byte ldb (FRAG=1's
         * unpredicated copies), ragged K */
        {270, 300, 83, 85, 304, 301},
    };
    tpl_workset ws;
    memset(&ws, 0, sizeof ws);
    for (size_t d = 0; !th_failed() && d < sizeof dims / sizeof dims[0]; d++) {
        int m = dims[d][0], n = dims[d][1], k = dims[d][2];
        int lda = dims[d][3], ldb = dims[d][4], ldc = dims[d][5];
        size_t an = (size_t)m * lda, bn = (size_t)k * ldb, cn = (size_t)m * ldc;
        CUdeviceptr A, B, C0, C, R;
        tpl_workset_free(cu, &ws);
        CHECK_OK(tpl_ws_alloc(ref, &ws, (an + 4) * 4, &A));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (bn + 4) * 4, &B));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (cn + 4) * 4, &C0));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (cn + 4) * 4, &C));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (cn + 4) * 4, &R));
        /* the second case runs on pointers one float past a 16-byte boundary */
        int shift = d == 1 ? 1 : 0;
        A += 4 * shift;
        B += 4 * shift;
        C0 += 4 * shift;
        C += 4 * shift;
        R += 4 * shift;
        CHECK(mt_upload_random(cu, A, an, 100 + (unsigned)d));
        CHECK(mt_upload_random(cu, B, bn, 200 + (unsigned)d));
        CHECK(mt_upload_random(cu, C0, cn, 300 + (unsigned)d));
        for (int beta_zero = 0; beta_zero < 2 && !th_failed(); beta_zero++) {
            float alpha = 0.75f, beta = beta_zero ? 0.0f : -1.25f;
            /* reference over the full buffer: padding = C0's padding */
            CHECK(cu->MemcpyDtoD(R, C0, cn * 4) == CUDA_SUCCESS);
            CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
            CHECK_OK(tpl_ref_gemm(ref, m, n, k, alpha, A, lda, B, ldb, beta, C0, R, ldc));
            for (int i = 0; i < n_set; i++) {
                CUmodule mod;
                if (!mt_is_nn(set[i].cfg))
                    continue;
                CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                CHECK(cu->MemcpyDtoD(C, C0, cn * 4) == CUDA_SUCCESS);
                if (beta_zero) {
                    /* NaN inside the m x n block: beta = 0 must not read it */
                    CUdeviceptr nanrow = C;
                    for (int r = 0; r < m; r++, nanrow += (CUdeviceptr)ldc * 4)
                        CHECK(cu->MemsetD32Async(nanrow, 0x7fc00000u, (size_t)n, ref->stream) ==
                              CUDA_SUCCESS);
                }
                CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
                at_exec ex;
                ex_init(&ex, cu, ms_device(g), mod, ref->stream, err, sizeof err);
                tpl_args args = tpl_gemm_args(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
                at_status s = f->run(&ex, set[i].cfg, &args);
                if (s == AT_OK)
                    s = ex_sync(&ex);
                ex_release(&ex);
                cu->ModuleUnload(mod);
                CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                double e = -1;
                CHECK_OK(tpl_rel_error(ref, C, R, (long long)cn, &e));
                CHECK_MSG(e <= 2e-6, "%dx%dx%d ld %d/%d/%d shift %d beta %g %s: error %g", m, n, k,
                          lda, ldb, ldc, shift, beta, set[i].text, e);
            }
        }
    }
    tpl_workset_free(cu, &ws);
    mt_free_set(set, n_set);
    ms_close(g);
}

/* Stream-K at shapes with whole data-parallel waves plus a split last wave (the
 * tile counts below give 2 waves + 12 tiles on 132 SMs for 128x256, 2 + 24 at two
 * blocks per SM for 128x128, other SM counts land elsewhere): three calls on one
 * exec (the tile counters must be left zero), each checked against float64 and
 * bit-identical to the first. */
GPU_TEST(matmul_gpu_streamk_repeat_bitwise)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const char *const cfgs[] = {
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
    };
    static const int shapes[][3] = {{2944, 3000, 200}, {2944, 3064, 1000}};
    tpl_workset ws;
    memset(&ws, 0, sizeof ws);
    float *first = NULL, *again = NULL;
    for (int c = 0; c < 2 && !th_failed(); c++) {
        int cfg[TPL_MAX_PARAMS];
        char why[256];
        CHECK(mt_parse(cfgs[c], cfg));
        CHECK_MSG(f->valid(cfg, ms_device(g), why, sizeof why), "%s: %s", cfgs[c], why);
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status cs = tpl_compile(f, cfg, ms_device(g)->arch, &cubin, &size, &log);
        free(log);
        CHECK_MSG(cs == AT_OK, "compile %s", cfgs[c]);
        int m = shapes[c][0], n = shapes[c][1], k = shapes[c][2];
        size_t cn = (size_t)m * n;
        CUdeviceptr A, B, C0, C, R;
        tpl_workset_free(cu, &ws);
        free(first);
        free(again);
        first = malloc(cn * 4);
        again = malloc(cn * 4);
        CHECK(first && again);
        CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * k * 4, &A));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)k * n * 4, &B));
        CHECK_OK(tpl_ws_alloc(ref, &ws, cn * 4, &C0));
        CHECK_OK(tpl_ws_alloc(ref, &ws, cn * 4, &C));
        CHECK_OK(tpl_ws_alloc(ref, &ws, cn * 4, &R));
        CHECK_OK(tpl_fill_uniform(ref, A, (long long)m * k, 41 + c, -1.0f, 1.0f));
        CHECK_OK(tpl_fill_uniform(ref, B, (long long)k * n, 42 + c, -1.0f, 1.0f));
        CHECK_OK(tpl_fill_uniform(ref, C0, (long long)cn, 43 + c, -1.0f, 1.0f));
        CHECK_OK(tpl_ref_gemm(ref, m, n, k, 1.5f, A, k, B, n, 0.5f, C0, R, n));
        CUmodule mod;
        CHECK(cu->ModuleLoadData(&mod, cubin) == CUDA_SUCCESS);
        free(cubin);
        at_exec ex;
        ex_init(&ex, cu, ms_device(g), mod, ref->stream, err, sizeof err);
        for (int call = 0; call < 3 && !th_failed(); call++) {
            CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
            CHECK(cu->MemcpyDtoD(C, C0, cn * 4) == CUDA_SUCCESS);
            CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
            tpl_args args = tpl_gemm_args(m, n, k, 1.5f, A, k, B, n, 0.5f, C, n);
            at_status s = f->run(&ex, cfg, &args);
            if (s == AT_OK)
                s = ex_sync(&ex);
            CHECK_MSG(s == AT_OK, "%s call %d: %s", cfgs[c], call, err);
            double e = -1;
            CHECK_OK(tpl_rel_error(ref, C, R, (long long)cn, &e));
            CHECK_MSG(e <= f->tolerance(&args.problem), "%dx%dx%d %s call %d: error %g", m, n, k,
                      cfgs[c], call, e);
            CHECK(cu->MemcpyDtoH(call ? again : first, C, cn * 4) == CUDA_SUCCESS);
            CHECK_MSG(call == 0 || memcmp(first, again, cn * 4) == 0,
                      "%s: call %d differs from call 0 (not deterministic)", cfgs[c], call);
            if (call == 0)
                printf("    %s at %dx%dx%d: error %.2e\n", c ? "128x128" : "128x256", m, n, k, e);
        }
        ex_release(&ex);
        cu->ModuleUnload(mod);
    }
    free(first);
    free(again);
    tpl_workset_free(cu, &ws);
    ms_close(g);
}

/* at_sgemm through the public API with a padded ldc, against the CPU. */
GPU_TEST(matmul_gpu_api_padded_ldc_matches_cpu)
{
    at_status s;
    const cudrv *cu = cudrv_get(&s, NULL, 0);
    CHECK(cu != NULL);
    CUdevice dev;
    CUcontext ctx, popped;
    CHECK(cu->Init(0) == CUDA_SUCCESS && cu->DeviceGet(&dev, th_device()) == CUDA_SUCCESS);
    CHECK(cu->DevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS);
    CHECK(cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    char db_path[4096];
    snprintf(db_path, sizeof db_path, "%s/none.db", th_tmpdir());
    at_handle *h = NULL;
    int m = 150, n = 93, k = 211, lda = 211, ldb = 96, ldc = 101;
    size_t an = (size_t)m * lda, bn = (size_t)k * ldb, cn = (size_t)m * ldc;
    float *A = malloc(an * 4), *B = malloc(bn * 4), *C0 = malloc(cn * 4), *C = malloc(cn * 4);
    CUdeviceptr dA = 0, dB = 0, dC = 0;
    int ok = A && B && C0 && C && cu->MemAlloc(&dA, an * 4) == CUDA_SUCCESS &&
             cu->MemAlloc(&dB, bn * 4) == CUDA_SUCCESS && cu->MemAlloc(&dC, cn * 4) == CUDA_SUCCESS;
    unsigned seed = 7;
    for (size_t i = 0; ok && i < an + bn + cn; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f;
        if (i < an)
            A[i] = v;
        else if (i < an + bn)
            B[i - an] = v;
        else
            C0[i - an - bn] = v;
    }
    ok = ok && cu->MemcpyHtoD(dA, A, an * 4) == CUDA_SUCCESS &&
         cu->MemcpyHtoD(dB, B, bn * 4) == CUDA_SUCCESS && cu->MemcpyHtoD(dC, C0, cn * 4) == CUDA_SUCCESS;
    double err = -1, pad_diff = -1;
    if (ok && at_create(&h, th_device(), db_path) == AT_OK) {
        ok = at_sgemm(h, m, n, k, 1.5f, (const float *)dA, lda, (const float *)dB, ldb, 0.5f,
                      (float *)dC, ldc) == AT_OK;
        if (!ok)
            th_fail(__FILE__, __LINE__, "at_sgemm: %s", at_errmsg(h));
        ok = ok && cu->CtxSynchronize() == CUDA_SUCCESS &&
             cu->MemcpyDtoH(C, dC, cn * 4) == CUDA_SUCCESS;
        double num = 0, den = 0;
        pad_diff = 0;
        for (int i = 0; ok && i < m; i++) {
            for (int j = 0; j < ldc; j++) {
                size_t c = (size_t)i * ldc + j;
                if (j >= n) {
                    pad_diff += fabs((double)C[c] - C0[c]);
                    continue;
                }
                double acc = 0;
                for (int p = 0; p < k; p++)
                    acc += (double)A[(size_t)i * lda + p] * B[(size_t)p * ldb + j];
                double r = 1.5 * acc + 0.5 * (double)C0[c];
                num += (C[c] - r) * (C[c] - r);
                den += r * r;
            }
        }
        err = sqrt(num / den);
        at_destroy(h);
    } else if (ok) {
        th_fail(__FILE__, __LINE__, "at_create failed");
    }
    cu->MemFree(dA);
    cu->MemFree(dB);
    cu->MemFree(dC);
    free(A);
    free(B);
    free(C0);
    free(C);
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(dev);
    CHECK(ok);
    CHECK_MSG(err >= 0 && err < 2e-6, "relative error %g", err);
    CHECK_MSG(pad_diff == 0.0, "padding of C changed (sum |diff| %g)", pad_diff);
}

/* The GPU tier's spread set must stay inside the valid space as rules change. */
TEST(matmul_gpu_spread_set_is_valid)
{
    for (size_t i = 0; i < sizeof mt_spread / sizeof mt_spread[0]; i++) {
        int cfg[TPL_MAX_PARAMS];
        char why[256];
        CHECK(mt_parse(mt_spread[i], cfg));
        CHECK_MSG(tpl_matmul.valid(cfg, NULL, why, sizeof why), "%s: %s", mt_spread[i], why);
    }
}
