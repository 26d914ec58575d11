/* test_dgemm.c: tests of the double-precision GEMM family: its space against a written spec,
 * every rejection reason, kinds, targets, defaults and tolerance (CPU); every configuration,
 * transpose, batch and layout against a double-double reference, a faulty kernel, and at_gemm
 * / at_dgemm against a host reference (GPU). The narrow tiles: test_dgemm_narrow.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "th_compile.h"
#include "th_dgemm.h"
#include "lookup.h"
#include "measure.h"
#include "tpl.h"

static const char *const td_names[P_COUNT] = {
    "PATH", "OPA", "OPB", "MMA", "BM", "BN", "BK", "WARPS_M", "WARPS_N", "STAGES", "FRAG", "TM",
    "TN", "GROUP", "SPLITK", "LDR", "UNR", "SA", "MINB", "PERS", "TMA", "CP8",
};

/* ---------------- the specification, written from docs/notes/dgemm.md ----------------
 * "dmma MMA BMxBNxBK WARPS_MxWARPS_N STAGES FRAG LDR [split] [unr] [sa1 | sa2] [m2 | m3] [pers]
 * [tma]" (unr: UNR 1; saN: SA N; mN: MINB N; pers: PERS 1; tma: TMA 1) or "ffma BMxBNxBK TMxTN
 * [split]";
 * every row with any OPA, OPB and GROUP 8 or 1; split rows also with SPLITK 2, 4, 8, 16 and 32
 * (GROUP 8), DMMA split rows each of them with CP8 0..3 (8-byte copies of A, B). */
static const char *const td_spec[] = {
    "dmma 1688 128x128x32 2x4 3 2 3 sa2",
    "dmma 1688 128x128x32 2x4 2 2 2 sa2 tma",
    "dmma 1688 64x128x16 2x2 3 2 2 sa2 m2 tma",
    "dmma 1684 64x64x16 2x2 3 2 3 sa1 m3",
    "dmma 1684 64x64x16 2x2 4 2 2 split",
    "dmma 1688 128x128x32 2x4 3 2 2 sa2 pers tma",
    "dmma 1688 64x128x16 2x2 3 2 2 sa2 m2 pers tma",
    "dmma 884 128x128x16 4x2 4 2 2",
    "dmma 884 64x64x16 2x2 4 2 2 split",
    /* the narrow tiles (docs/open.md, FP64 narrow products over a deep K) */
    "dmma 1684 32x64x16 2x2 4 2 2 split",
    "dmma 1684 32x128x16 2x4 4 2 2 split",
    "dmma 1684 64x32x16 2x2 4 2 2 split",
    "dmma 1684 128x32x16 4x2 4 2 2 split",
    "dmma 1684 32x64x16 2x2 4 2 2 split m3",
    "dmma 1684 64x32x16 2x2 4 2 2 split m3",
    "dmma 1688 32x64x16 2x2 4 2 3 split sa2",
    "dmma 1688 32x128x16 2x4 4 2 3 split sa2",
    "dmma 1688 64x32x16 2x2 4 2 3 split sa2",
    "dmma 1688 128x32x16 4x2 4 2 3 split sa2",
    "ffma 128x128x8 8x8",
    "ffma 64x64x16 4x4 split",
};
#define TD_ROWS ((int)(sizeof td_spec / sizeof td_spec[0]))

typedef struct td_row {
    int path, mma, bm, bn, bk, wm, wn, stages, frag, ldr, tm, tn, split, unr, sa, minb, pers, tma;
} td_row;

/* Parses spec line s; 0 if malformed. */
static int td_spec_parse(const char *s, td_row *r)
{
    char kind[8];
    int used = 0;
    memset(r, 0, sizeof *r);
    r->minb = 1;
    r->tm = r->tn = 8;              /* the canonical values of the other path's parameters */
    r->mma = 16816;
    r->wm = 2;
    r->wn = 4;
    r->stages = 4;
    r->frag = 2;
    r->ldr = 2;
    if (sscanf(s, "%7s", kind) != 1)
        return 0;
    if (strcmp(kind, "dmma") == 0) {
        r->path = 1;
        if (sscanf(s, "dmma %d %dx%dx%d %dx%d %d %d %d%n", &r->mma, &r->bm, &r->bn, &r->bk,
                   &r->wm, &r->wn, &r->stages, &r->frag, &r->ldr, &used) < 9)
            return 0;
    } else {
        if (sscanf(s, "ffma %dx%dx%d %dx%d%n", &r->bm, &r->bn, &r->bk, &r->tm, &r->tn,
                   &used) < 5)
            return 0;
    }
    /* the flags after the numbers */
    char flag[8];
    int more = 0;
    for (const char *q = s + used; sscanf(q, "%7s%n", flag, &more) == 1; q += more) {
        if (strcmp(flag, "split") == 0)
            r->split = 1;
        else if (strcmp(flag, "unr") == 0)
            r->unr = 1;
        else if (strcmp(flag, "sa1") == 0 || strcmp(flag, "sa2") == 0)
            r->sa = flag[2] - '0';
        else if (strcmp(flag, "m2") == 0 || strcmp(flag, "m3") == 0)
            r->minb = flag[1] - '0';
        else if (strcmp(flag, "pers") == 0)
            r->pers = 1;
        else if (strcmp(flag, "tma") == 0)
            r->tma = 1;
        else
            return 0;
    }
    return 1;
}

/* 1 if c is in the specification. */
static int td_spec_ok(const int *c)
{
    for (int i = 0; i < TD_ROWS; i++) {
        td_row r;
        if (!td_spec_parse(td_spec[i], &r))
            return 0;
        if (r.path != c[P_PATH] || r.mma != c[P_MMA] || r.bm != c[P_BM] || r.bn != c[P_BN] ||
            r.bk != c[P_BK] || r.wm != c[P_WARPS_M] || r.wn != c[P_WARPS_N] ||
            r.stages != c[P_STAGES] || r.frag != c[P_FRAG] || r.tm != c[P_TM] || r.tn != c[P_TN] ||
            r.ldr != c[P_LDR] || r.unr != c[P_UNR] || r.sa != c[P_SA] || r.minb != c[P_MINB] ||
            r.pers != c[P_PERS] || r.tma != c[P_TMA])
            continue;
        if (c[P_GROUP] != 8 && c[P_GROUP] != 1)
            return 0;
        if (c[P_CP8] != 0 && !(r.split && r.path == 1 && c[P_CP8] >= 1 && c[P_CP8] <= 3))
            return 0;
        if (c[P_SPLITK] == 1)
            return 1;
        return r.split &&
               (c[P_SPLITK] == 2 || c[P_SPLITK] == 4 || c[P_SPLITK] == 8 || c[P_SPLITK] == 16 ||
                c[P_SPLITK] == 32) &&
               c[P_GROUP] == 8;
    }
    return 0;
}

/* Every valid configuration (generic device and an H100) is a spec row, and every spec row
 * with every transpose and tile order is valid on an H100 (the Hopper shapes not on an A100). */
TEST(dgemm_space_is_the_specified_lattice)
{
    const tpl_family *f = &tpl_dgemm;
    CHECK_EQ(f->n_params, P_COUNT);
    for (int p = 0; p < P_COUNT; p++)
        CHECK_STR(f->params[p].name, td_names[p]);
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    at_device_info a100 = th_dgemm_device(8, 0, 163 * 1024, 1024, 65536);
    long long *idx = NULL;
    long long n = tpl_valid_configs_cached(f, &h100, &idx);
    CHECK(n > 0 && idx);
    for (long long i = 0; i < n; i++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[i], c);
        char text[TPL_CONFIG_LEN];
        tpl_config_format(f, c, text, sizeof text);
        CHECK_MSG(td_spec_ok(c), "valid but not in the spec: %s", text);
    }
    free(idx);
    long long want = 0;
    for (int i = 0; i < TD_ROWS; i++) {
        td_row r;
        CHECK(td_spec_parse(td_spec[i], &r));
        /* ops x (GROUP 8, 1 + SPLITK 2..32) x CP8 0..3 (DMMA split rows) */
        const int cp8s = r.split && r.path == 1 ? 4 : 1;
        want += 4 * (2 + 5 * r.split) * cp8s;
        for (int ops = 0; ops < 4; ops++)
            for (int v = 0; v < (2 + 5 * r.split) * cp8s; v++) {
                const int sv = v % (2 + 5 * r.split), cp8 = v / (2 + 5 * r.split);
                int c[TPL_MAX_PARAMS] = {r.path, ops & 1, ops >> 1, r.mma, r.bm, r.bn, r.bk,
                                         r.wm, r.wn, r.stages, r.frag, r.tm, r.tn, sv == 1 ? 1 : 8,
                                         sv < 2 ? 1 : 1 << (sv - 1), r.ldr, r.unr, r.sa, r.minb,
                                         r.pers, r.tma, cp8};
                char why[256];
                CHECK_MSG(f->valid(c, &h100, why, sizeof why), "%s: %s", td_spec[i], why);
                int hopper = r.path == 1 && (r.mma != 884 || r.tma);
                CHECK_EQ(f->valid(c, &a100, why, sizeof why), !hopper);
            }
    }
    CHECK_EQ(n, want);
}

/* Each reason of tpl_dgemm_reasons comes back for a configuration made to break that rule. */
TEST(dgemm_every_rejection_reason_is_reachable)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    at_device_info a100 = th_dgemm_device(8, 0, 163 * 1024, 1024, 65536);
    at_device_info small = th_dgemm_device(9, 0, 227 * 1024, 128, 65536);
    static const struct { const char *change; int dev; } cases[] = {
        /* in tpl_dgemm_reasons' order; dev 0 H100, 1 A100, 2 a device of 128 threads */
        {"OPA=2", 0},
        {"PATH=3", 0},
        {"PATH=0,MMA=884", 0},
        {"TM=4", 0},
        {"MMA=999", 0},
        {"MMA=884,BM=120", 0},
        {"BM=256,BN=128,WARPS_M=2,WARPS_N=2", 0},
        {"MMA=1688,WARPS_M=1,WARPS_N=4", 0},
        {"MMA=884,BK=32,STAGES=6,WARPS_M=4,WARPS_N=2", 0},
        {"MMA=884,WARPS_M=4,WARPS_N=2", 2},
        {"MMA=1684", 1},
        {"PATH=0,MMA=16816,WARPS_M=2,WARPS_N=4,STAGES=4,BK=8,TM=3", 0},
        {"PATH=0,MMA=16816,WARPS_M=2,WARPS_N=4,STAGES=4,BM=256,BN=256,BK=16", 0},
        {"STAGES=5", 0},
        {"MMA=884,WARPS_M=4,WARPS_N=2,SPLITK=2", 0},
        {"MMA=884,WARPS_M=4,WARPS_N=2,CP8=1", 0},
    };
    CHECK_EQ((int)(sizeof cases / sizeof cases[0]), tpl_dgemm_n_reasons);
    for (int r = 0; r < tpl_dgemm_n_reasons; r++) {
        /* the m16n8k4 lattice winner, then the change */
        char text[TPL_CONFIG_LEN];
        snprintf(text, sizeof text, "PATH=1,OPA=0,OPB=0,MMA=16816,BM=128,BN=128,BK=16,WARPS_M=2,"
                 "WARPS_N=4,STAGES=4,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=1");
        if (r != 4 && r != 10 && strncmp(cases[r].change, "MMA=", 4) != 0 &&
            strncmp(cases[r].change, "PATH=0", 6) != 0)
            memcpy(strstr(text, "MMA=16816"), "MMA=1684 ", 9);
        int c[TPL_MAX_PARAMS];
        CHECK(th_dgemm_parse(text, c));
        char change[256];
        snprintf(change, sizeof change, "%s", cases[r].change);
        for (char *tok = strtok(change, ","); tok; tok = strtok(NULL, ",")) {
            char *eq = strchr(tok, '=');
            CHECK(eq);
            *eq = '\0';
            int p = tpl_param_index(f, tok);
            CHECK(p >= 0);
            c[p] = atoi(eq + 1);
        }
        const at_device_info *dev = cases[r].dev == 0 ? &h100 : cases[r].dev == 1 ? &a100 : &small;
        char why[512];
        CHECK_MSG(!f->valid(c, dev, why, sizeof why), "reason %d: %s is valid", r,
                  cases[r].change);
        CHECK_MSG(strcmp(why, tpl_dgemm_reasons[r]) == 0, "reason %d (%s): got \"%s\"", r,
                  cases[r].change, why);
        /* a scan without reasons agrees */
        CHECK(!f->valid(c, dev, NULL, 0));
    }
}

/* SA, MINB and PERS: their ranges, SA 1/2 only with the copy plans (LDR 1..4), MINB blocks per
 * SM within the SM's registers (64K / (MINB x threads)) and shared memory (MINB rings + 1 KiB
 * each, 228 KiB), PERS 1 only on its lattice rows; reasons in tpl_dgemm_reasons' order (R_RANGE 0, R_REGS 7, R_SMEM 8,
 * R_LATTICE 13). */
TEST(dgemm_sa_and_minb_rules)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    static const struct { const char *text; int reason; } cases[] = {
        /* the m16n8k4 128x128x32 row with SA 1 (in the lattice until section 11), then
         * variations */
        {"OPA=0,OPB=0,MMA=1684,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=1", 13},
        {"OPA=0,OPB=0,MMA=1684,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=3", 0},
        {"OPA=0,OPB=0,MMA=1684,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=0,SA=1", 0},
        /* LDR 4 (uniform-base copies): in the range, on no lattice row; LDR 5 out of it */
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=4,SA=2", 13},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=5,SA=2", 0},
        {"OPA=0,OPB=0,MMA=1684,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,MINB=4", 0},
        /* 256 threads: two blocks cap a thread at 128 registers, below the tile's ~200 */
        {"OPA=0,OPB=0,MMA=1684,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=1,MINB=2",
         7},
        /* 64x64x16, 4 stages, three blocks: NN rings (75776 B) fit three to an SM, NT rings
         * (K-major B, 81920 B) do not */
        {"OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,LDR=3,SA=1,MINB=3",
         13},
        {"OPA=0,OPB=1,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,LDR=3,SA=1,MINB=3",
         8},
        {"OPA=0,OPB=1,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,LDR=3,SA=1,MINB=3",
         -1},
        /* m16n8k8 64x128 at two blocks: the estimate (248) fits the 255 cap, at three (168) not;
         * the lattice takes it as TMA 1 (its cp.async form LDR 3 left in section 11) */
        {"OPA=0,OPB=0,MMA=1688,BM=64,BN=128,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,LDR=3,SA=2,MINB=2",
         13},
        {"OPA=0,OPB=0,MMA=1688,BM=64,BN=128,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,SA=2,MINB=2,TMA=1",
         -1},
        {"OPA=0,OPB=0,MMA=1688,BM=64,BN=128,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,LDR=3,SA=2,MINB=3",
         7},
        /* PERS: 0 or 1; PERS 1 only on the lattice's PERS rows (TMA 1 since section 11) */
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=2,PERS=0",
         -1},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=2,PERS=2",
         0},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=2,PERS=1",
         13},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,SA=2,PERS=1,TMA=1",
         -1},
        {"OPA=0,OPB=0,MMA=1684,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=1,PERS=1",
         13},
        /* TMA: 0..2; 1, 2 only with SA 1, 2, UNR 0 and LDR's first value (2: the copy plans
         * are unused), on its lattice rows; its mbarriers (8 B a slot) count in the ring */
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=2,LDR=2,SA=2,TMA=1",
         -1},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=2,SA=2,TMA=3",
         0},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=2,SA=2,TMA=2",
         13},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=3,SA=2,TMA=1",
         0},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=2,SA=0,TMA=1",
         0},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=2,SA=2,UNR=1,"
         "TMA=1", 0},
        {"OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,LDR=2,SA=2,TMA=1",
         13},
        /* 64x64x16 at three blocks: 3 x (56832 + 24 + 1024) B fit 228 KiB; not in the lattice
         * (sweep 12b: 0.92x, 0.95x) */
        {"OPA=0,OPB=0,MMA=1688,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,LDR=2,SA=2,MINB=3,"
         "TMA=1", 13},
        /* 64x64x16 with 6 stages at three blocks: 3 x (113664 + 48 + 1024) B do not fit */
        {"OPA=0,OPB=0,MMA=1688,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=6,LDR=2,SA=2,MINB=3,"
         "TMA=1", 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[TPL_CONFIG_LEN];
        snprintf(text, sizeof text, "PATH=1,%s,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=1", cases[i].text);
        int c[TPL_MAX_PARAMS];
        CHECK_MSG(th_dgemm_parse(text, c), "%s", text);
        char why[512];
        int ok = f->valid(c, &h100, why, sizeof why);
        CHECK_MSG(ok == (cases[i].reason < 0), "%s: valid %d (%s)", text, ok, why);
        if (cases[i].reason >= 0)
            CHECK_MSG(strcmp(why, tpl_dgemm_reasons[cases[i].reason]) == 0, "%s: got \"%s\"",
                      text, why);
    }
}

/* The Hopper shapes compile only from sm_90 on; m8n8k4 and FFMA64 for the arch asked. */
TEST(dgemm_target_arch_per_path)
{
    const tpl_family *f = &tpl_dgemm;
    int c[TPL_MAX_PARAMS];
    CHECK(th_dgemm_parse(f->baselines[f->n_baselines - 1].config, c));
    CHECK_EQ(c[P_MMA], 1688);
    CHECK(tpl_target_arch(f, c, "sm_80") == NULL);
    CHECK(tpl_target_arch(f, c, "sm_89") == NULL);
    CHECK_STR(tpl_target_arch(f, c, "sm_90"), "sm_90");
    CHECK_STR(tpl_target_arch(f, c, "sm_100"), "sm_100");
    CHECK(th_dgemm_parse(f->default_config, c));
    CHECK_STR(tpl_target_arch(f, c, "sm_80"), "sm_80");
    c[P_PATH] = 0;
    c[P_MMA] = 16816;               /* FFMA64 ignores MMA */
    CHECK_STR(tpl_target_arch(f, c, "sm_70"), "sm_70");
}

/* A double problem never takes an FP32 configuration and vice versa; within dgemm, each
 * configuration serves only the transposes of its OPA/OPB. */
TEST(dgemm_kinds_never_cross)
{
    const tpl_family *f = &tpl_dgemm;
    const tpl_family *others[] = {tpl_find("matmul"), tpl_find("tcgemm")};
    tpl_problem kinds[6];
    for (int i = 0; i < 4; i++)
        kinds[i] = th_dgemm_problem(300, 200, 100, (at_op)(i & 1), (at_op)(i >> 1), 1);
    kinds[4] = th_dgemm_problem(300, 200, 100, AT_OP_N, AT_OP_N, 1);
    kinds[4].dtype = AT_R_32F;
    kinds[5] = kinds[4];
    kinds[5].dtype = AT_R_16BF;
    for (int i = 0; i < 6; i++) {
        CHECK_EQ(tpl_family_accepts(f, &kinds[i]), i < 4);
        for (int o = 0; o < 2; o++) {
            CHECK(others[o] != NULL);
            if (i < 4)
                CHECK_MSG(!tpl_family_accepts(others[o], &kinds[i]), "%s takes f64",
                          others[o]->name);
        }
    }
    tpl_problem col = kinds[0];
    col.order = AT_COL_MAJOR;
    CHECK(!tpl_family_accepts(f, &col));
    tpl_problem tf = kinds[0];
    tf.math = AT_MATH_TF32;
    CHECK(!tpl_family_accepts(f, &tf));
    long long *idx = NULL;
    long long n = tpl_valid_configs_cached(f, NULL, &idx);
    CHECK(n > 0);
    int served[4] = {0};
    for (long long x = 0; x < n; x++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[x], c);
        for (int i = 0; i < 6; i++) {
            int ok = f->applicable(c, &kinds[i]);
            /* 300 x 200: wider than the narrow tiles serve (m, n > 128); every tight leading
             * dimension even (300, 200, 100): no 8-byte copies (CP8) */
            int want = i < 4 && c[P_OPA] == (i & 1) && c[P_OPB] == (i >> 1) &&
                       c[P_SPLITK] == 1 && c[P_PERS] == 0 && c[P_BM] != 32 && c[P_BN] != 32 &&
                       c[P_CP8] == 0;
            CHECK_EQ(ok, want);
            if (i < 4)
                served[i] += ok;
        }
    }
    free(idx);
    for (int i = 0; i < 4; i++)
        CHECK(served[i] > 0 && served[i] == served[0]);
    /* split-K only where the tiles are few, each slice deep enough */
    int c[TPL_MAX_PARAMS];
    CHECK(th_dgemm_parse("PATH=1,OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,"
                   "STAGES=4,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=4", c));
    tpl_problem skinny = th_dgemm_problem(256, 256, 8192, AT_OP_N, AT_OP_N, 1);
    CHECK(f->applicable(c, &skinny));
    skinny.batch = 8;               /* 16 tiles x 8 products: enough blocks without a split */
    CHECK(!f->applicable(c, &skinny));
    skinny = th_dgemm_problem(256, 256, 128, AT_OP_N, AT_OP_N, 1);
    CHECK(!f->applicable(c, &skinny));
    /* PERS 1 (several products per block) only for batches */
    CHECK(th_dgemm_parse("PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,"
                   "STAGES=3,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=1,LDR=3,SA=2,PERS=1", c));
    tpl_problem batched = th_dgemm_problem(256, 256, 256, AT_OP_N, AT_OP_N, 1);
    CHECK(!f->applicable(c, &batched));
    batched.batch = 2;
    CHECK(f->applicable(c, &batched));
}

/* The rule (16 + 8 sqrt(k)) 2^-53, worked out by hand at three depths. */
TEST(dgemm_tolerance_rule)
{
    CHECK(fabs(tpl_dgemm_tolerance_rule(1) - 24 * ldexp(1, -53)) < 1e-30);
    CHECK(fabs(tpl_dgemm_tolerance_rule(4096) - 528 * ldexp(1, -53)) < 1e-30);
    CHECK(fabs(tpl_dgemm_tolerance_rule(0) - 24 * ldexp(1, -53)) < 1e-30);
    tpl_problem p = th_dgemm_problem(10, 10, 1024, AT_OP_N, AT_OP_N, 1);
    CHECK(fabs(tpl_dgemm.tolerance(&p) - 272 * ldexp(1, -53)) < 1e-30);
}

/* The built-in choice serves every transpose on every device: DMMA m16n8k8 on sm_90, m8n8k4 on
 * the other sm_80+ devices, FFMA64 on sm_70. */
TEST(dgemm_defaults_serve_every_kind_on_every_device)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info devs[4] = {
        th_dgemm_device(7, 0, 96 * 1024, 1024, 65536),    /* V100 */
        th_dgemm_device(8, 0, 163 * 1024, 1024, 65536),
        th_dgemm_device(8, 6, 99 * 1024, 1024, 65536),
        th_dgemm_device(9, 0, 227 * 1024, 1024, 65536),
    };
    static const long long shapes[][4] = {{1, 1, 1, 1}, {7, 13, 5, 3}, {4097, 4097, 4097, 1}};
    for (int d = 0; d < 4; d++)
        for (int ops = 0; ops < 4; ops++)
            for (int s = 0; s < 3; s++) {
                tpl_problem p = th_dgemm_problem(shapes[s][0], shapes[s][1], shapes[s][2],
                                                 (at_op)(ops & 1), (at_op)(ops >> 1),
                                                 shapes[s][3]);
                int cfg[TPL_MAX_PARAMS];
                char config[TPL_CONFIG_LEN] = "", why[256];
                at_lookup_level lv = lk_choose(NULL, &devs[d], f, &p, 1, cfg, config);
                CHECK_MSG(lv == AT_LOOKUP_DEFAULT, "%s ops %d: level %d", devs[d].arch, ops, lv);
                CHECK_MSG(cfg[P_OPA] == (ops & 1) && cfg[P_OPB] == (ops >> 1), "%s", config);
                CHECK_EQ(cfg[P_PATH], d > 0);
                /* sm_90: m16n8k8 128 x 128 tiles for a wave of them or more, m16n8k4 64 x 64
                 * for small outputs; m8n8k4 64 x 64 on sm_80 */
                CHECK(d == 0 || cfg[P_MMA] == (d < 3 ? 884 : shapes[s][0] > 1000 ? 1688 : 1684));
                CHECK(f->valid(cfg, &devs[d], why, sizeof why) && f->applicable(cfg, &p));
            }
}

/* The default run's problems: 4096^3, one small NN problem and 4096^3 TN, each a handful
 * of configurations on an H100 (the ~15 s share of the default run, ~20 s with TN). */
TEST(dgemm_tuning_problems_stay_small)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    CHECK(f->n_tuning_problems >= 1 && f->n_tuning_problems <= 3);
    long long *idx = NULL;
    long long n = tpl_valid_configs_cached(f, &h100, &idx);
    CHECK(n > 0);
    for (int i = 0; i < f->n_tuning_problems; i++) {
        const tpl_problem *p = &f->tuning_problems[i];
        CHECK(tpl_family_accepts(f, p));
        int count = 0;
        for (long long x = 0; x < n; x++) {
            int c[TPL_MAX_PARAMS];
            tpl_config_from_index(f, idx[x], c);
            count += f->applicable(c, p);
        }
        CHECK_MSG(count >= 6 && count <= 24, "problem %d: %d configurations", i, count);
    }
    free(idx);
}

/* NVRTC compiles the default for sm_80, a Hopper winner for sm_90, FFMA64 TT for sm_75 and
 * the faulty family; the Hopper shape is refused for sm_80 without compiling. */
TEST(dgemm_nvrtc_compiles_a_sample)
{
    const tpl_family *f = &tpl_dgemm, *fault = tpl_find("test_dgfault");
    CHECK(fault != NULL && fault->hidden && strstr(fault->fixed_options, "DG_FAULT=1"));
    const char *hopper = f->baselines[f->n_baselines - 1].config;
    struct { const tpl_family *fam; const char *config, *arch; at_status want; } cases[] = {
        {f, f->default_config, "sm_80", AT_OK},
        {f, hopper, "sm_90", AT_OK},
        {f, f->baselines[6].config, "sm_75", AT_OK},
        {f, hopper, "sm_80", AT_ERR_UNSUPPORTED},
        {fault, fault->default_config, "sm_80", AT_OK},
    };
    CHECK(strstr(f->baselines[6].config, "PATH=0,OPA=1,OPB=1") != NULL);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !th_failed(); i++)
        th_check_compile(cases[i].fam, cases[i].config, cases[i].arch, cases[i].want);
}

TEST(dgemm_api_null_handle)
{
    CHECK_EQ(at_dgemm(NULL, 1, 1, 1, 1.0, NULL, 1, NULL, 1, 0.0, NULL, 1), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_gemm(NULL, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, 1, 1, 1, AT_R_64F, 1, NULL, 1, NULL, 1,
                     0, NULL, 1), AT_ERR_INVALID_ARG);
}

/* ---------------- GPU tier ---------------- */

/* Every valid configuration on dev with GROUP 8 (plus GROUP 1 of the first), all transposes;
 * CP8 0 (the 8-byte copies have their own test, dgemm_gpu_cp8_copies_against_the_host). */
static th_compiled *td_set(const at_device_info *dev, int *n)
{
    const tpl_family *f = &tpl_dgemm;
    long long *idx = NULL;
    long long nv = tpl_valid_configs_cached(f, dev, &idx);
    th_compiled *set = calloc(nv > 0 ? (size_t)nv : 1, sizeof *set);
    int group1 = 0;
    *n = 0;
    for (long long i = 0; set && i < nv; i++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[i], c);
        if (c[P_CP8] != 0 || (c[P_GROUP] == 1 && group1++))
            continue;
        th_compiled *s = &set[(*n)++];
        memcpy(s->cfg, c, sizeof s->cfg);
        tpl_config_format(f, c, s->text, sizeof s->text);
        s->fam = f;
        s->arch = dev->arch;
    }
    free(idx);
    return set;
}

/* Every configuration (each transpose, path, shape, split-K) against the double-double
 * reference at odd and ragged shapes and batches (the last: PERS 1 blocks walk ~10 products of
 * edge and inner tiles), through the tuner's verification (fresh
 * inputs with 53 random mantissa bits, alpha 1.5, beta 0 over NaN); the worst error as a
 * fraction of the tolerance is printed (docs/notes/dgemm.md), then the named configurations'
 * speed at 4096^3. */
GPU_TEST(dgemm_gpu_every_configuration_and_shape)
{
    const tpl_family *f = &tpl_dgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    int n = 0;
    th_compiled *set = td_set(dev, &n);
    CHECK(set && n >= 8);
    if (!th_compile_all(set, n)) {
        th_free_compiled(set, n);
        ms_close(g);
        return;
    }
    static const long long shapes[][4] = {
        {1, 1, 1, 1}, {7, 13, 5, 1}, {129, 65, 33, 1}, {517, 1031, 263, 1}, {65, 70, 2100, 1},
        {33, 17, 40, 3}, {200, 72, 600, 2}, {300, 260, 70, 150},
    };
    double worst = 0;
    int runs = 0;
    for (int ops = 0; ops < 4 && !th_failed(); ops++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && !th_failed(); s++) {
            tpl_problem p = th_dgemm_problem(shapes[s][0], shapes[s][1], shapes[s][2],
                                             (at_op)(ops & 1), (at_op)(ops >> 1), shapes[s][3]);
            if (ms_prepare(g, f, &p, 21 + s, err, sizeof err) != AT_OK) {
                th_fail(__FILE__, __LINE__, "prepare: %s", err);
                break;
            }
            for (int i = 0; i < n && !th_failed(); i++) {
                if (!f->applicable(set[i].cfg, &p))
                    continue;
                double e = -1;
                at_status st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &e, err,
                                         sizeof err);
                char ptext[64];
                tpl_problem_format(&p, ptext, sizeof ptext);
                CHECK_MSG(st == AT_OK && e <= f->tolerance(&p), "%s %s: %s (error %g, %s)",
                          ptext, set[i].text, at_status_string(st), e, err);
                worst = e / f->tolerance(&p) > worst ? e / f->tolerance(&p) : worst;
                runs++;
            }
        }
    printf("    %d configurations, %d verified runs, worst error %.3f of the tolerance\n", n, runs,
           worst);
    /* the named configurations at 4096^3 (NN), and the errors' share of the tolerance */
    tpl_problem big = th_dgemm_problem(4096, 4096, 4096, AT_OP_N, AT_OP_N, 1);
    CHECK_OK(ms_prepare(g, f, &big, 3, err, sizeof err));
    for (int i = 0; i < n && !th_failed(); i++) {
        if (!f->applicable(set[i].cfg, &big) || set[i].cfg[P_GROUP] != 8)
            continue;
        double e = -1;
        at_status st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &e, err, sizeof err);
        CHECK_MSG(st == AT_OK, "%s at 4096^3: %s %s", set[i].text, at_status_string(st), err);
        ms_options o;
        ms_timing tm;
        ms_default_options(&o);
        if (ms_time(g, f, set[i].cfg, set[i].cubin, set[i].size, &o, &tm, err, sizeof err) ==
            AT_OK)
            printf("    4096^3 %.3f ms = %.1f TFLOP/s, error %.2e (%.3f of the tolerance): %s\n",
                   tm.median_ms, 2.0 * 4096 * 4096 * 4096 / tm.median_ms * 1e-9, e,
                   e / f->tolerance(&big), set[i].text);
        /* the re-timing's back-to-back form (templates/measure.h): exactly max_runs runs,
         * near the ordinary timing, and the module it leaves cached still verifies */
        ms_timing b2b;
        o.back_to_back = 1;
        o.warmup = 2;
        o.min_runs = o.max_runs = 12;
        CHECK_OK(ms_time(g, f, set[i].cfg, set[i].cubin, set[i].size, &o, &b2b, err, sizeof err));
        CHECK_EQ(b2b.runs, 12);
        CHECK_MSG(b2b.median_ms > 0.6 * tm.median_ms && b2b.median_ms < 1.6 * tm.median_ms,
                  "%s: back to back %.3f ms against %.3f ms", set[i].text, b2b.median_ms,
                  tm.median_ms);
        printf("    back to back %.3f ms (min %.3f, max %.3f)\n", b2b.median_ms, b2b.min_ms,
               b2b.max_ms);
        if (i > 0 && f->applicable(set[i - 1].cfg, &big)) {
            e = -1;
            st = ms_verify(g, f, set[i - 1].cfg, set[i - 1].cubin, set[i - 1].size, &e, err,
                           sizeof err);
            CHECK_MSG(st == AT_OK, "%s again (cached module): %s %s", set[i - 1].text,
                      at_status_string(st), err);
        }
    }
    th_free_compiled(set, n);
    ms_close(g);
}

/* Host LCG doubles in [-1, 1) with 53 random bits. */
static void td_host_fill(double *v, size_t n, unsigned long long seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = -1.0 + 2.0 * (double)(seed >> 11) * ldexp(1, -53);
    }
}

/* Odd and padded leading dimensions, base pointers offset by 1..3 elements (packed operands),
 * every transpose, batches with strides, alpha/beta with beta = 0 over NaN and beta != 0,
 * k = 0: a few configurations of each path run on the GPU and compared with a host reference,
 * and every element of C outside the products' blocks unchanged. */
GPU_TEST(dgemm_gpu_layouts_offsets_alpha_beta)
{
    const tpl_family *f = &tpl_dgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    const at_device_info *dev = ms_device(g);
    /* the default, FFMA64, the Hopper baseline (m16n8k8, SA 2) where the device has it, a
     * split-K row, an m16n8k4 SA 1 row of three blocks per SM and the TMA row (tensor maps over
     * padded leading dimensions and batch strides, packed operands, k = 0) */
    const char *texts[] = {
        f->default_config, f->baselines[3].config, f->baselines[f->n_baselines - 1].config,
        "PATH=1,OPA=0,OPB=0,MMA=884,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,TM=8,"
        "TN=8,GROUP=8,SPLITK=2",
        "PATH=1,OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,FRAG=2,TM=8,"
        "TN=8,GROUP=1,SPLITK=1,LDR=3,SA=1,MINB=3",
        "PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=2,FRAG=2,TM=8,"
        "TN=8,GROUP=8,SPLITK=1,SA=2,TMA=1",
    };
    th_compiled set[24];
    int n = 0;
    memset(set, 0, sizeof set);
    for (int t = 0; t < 6; t++)
        for (int ops = 0; ops < 4; ops++) {
            th_compiled *s = &set[n];
            char why[256];
            CHECK(th_dgemm_parse(texts[t], s->cfg));
            s->cfg[P_OPA] = ops & 1;
            s->cfg[P_OPB] = ops >> 1;
            if (!f->valid(s->cfg, dev, why, sizeof why))
                continue;
            tpl_config_format(f, s->cfg, s->text, sizeof s->text);
            s->fam = f;
            s->arch = dev->arch;
            n++;
        }
    CHECK(n >= 8);
    CHECK(th_compile_all(set, n));
    static const int cases[][10] = {
        /* m, n, k, batch, pad of lda, ldb, ldc (elements past the minimum), offset A, B, C */
        {129, 65, 33, 1, 3, 5, 7, 1, 3, 1},
        {300, 257, 190, 1, 0, 0, 0, 0, 0, 0},
        {64, 200, 70, 3, 1, 2, 3, 0, 1, 2},
        {97, 131, 0, 2, 0, 0, 2, 0, 0, 1},
        {33, 9, 700, 1, 2, 0, 1, 2, 0, 0},
    };
    static const double ab[3][2] = {{1.25, 0.0}, {-0.5, 1.5}, {1.0, -1.0}};
    int runs = 0;
    double worst = 0;
    for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++) {
        int m = cases[d][0], nn = cases[d][1], k = cases[d][2], batch = cases[d][3];
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            int opa = ops & 1, opb = ops >> 1;
            long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? nn : k, bc = opb ? k : nn;
            long long lda = (ac > 1 ? ac : 1) + cases[d][4], ldb = (bc > 1 ? bc : 1) + cases[d][5];
            long long ldc = nn + cases[d][6];
            long long sa = ar * lda + 1, sb = br * ldb + 3, sc = (long long)m * ldc + 5;
            size_t na = cases[d][7] + (size_t)(sa * batch), nb = cases[d][8] + (size_t)(sb * batch);
            size_t nc = cases[d][9] + (size_t)(sc * batch);
            double *hA = malloc(na * 8), *hB = malloc(nb * 8), *hC0 = malloc(nc * 8),
                   *hC = malloc(nc * 8);
            CHECK(hA && hB && hC0 && hC);
            td_host_fill(hA, na, 11 + d);
            td_host_fill(hB, nb, 22 + d);
            td_host_fill(hC0, nc, 33 + d);
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A, B, C;
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * 8, &A));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * 8, &B));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 8, &C));
            CHECK(cu->MemcpyHtoD(A, hA, na * 8) == CUDA_SUCCESS);
            CHECK(cu->MemcpyHtoD(B, hB, nb * 8) == CUDA_SUCCESS);
            const double *a0 = hA + cases[d][7], *b0 = hB + cases[d][8];
            for (int v = 0; v < 3 && !th_failed(); v++) {
                double alpha = ab[v][0], beta = ab[v][1];
                for (int i = 0; i < n && !th_failed(); i++) {
                    if (set[i].cfg[P_OPA] != opa || set[i].cfg[P_OPB] != opb)
                        continue;
                    tpl_problem p = th_dgemm_problem(m, nn, k, (at_op)opa, (at_op)opb, batch);
                    int split = set[i].cfg[P_SPLITK] > 1;
                    if (split && !f->applicable(set[i].cfg, &p))
                        continue;
                    /* C = C0, with NaN in the products' blocks when beta = 0 */
                    memcpy(hC, hC0, nc * 8);
                    for (int b = 0; beta == 0.0 && b < batch; b++)
                        for (int r = 0; r < m; r++)
                            for (int c = 0; c < nn; c++)
                                hC[cases[d][9] + b * sc + (long long)r * ldc + c] = NAN;
                    CHECK(cu->MemcpyHtoD(C, hC, nc * 8) == CUDA_SUCCESS);
                    tpl_args args;
                    memset(&args, 0, sizeof args);
                    args.problem = p;
                    args.operand[TPL_GEMM_A] = (tpl_operand){A + 8 * cases[d][7], lda, sa};
                    args.operand[TPL_GEMM_B] = (tpl_operand){B + 8 * cases[d][8], ldb, sb};
                    args.operand[TPL_GEMM_C] = (tpl_operand){C + 8 * cases[d][9], ldc, sc};
                    args.scalar[TPL_GEMM_ALPHA] = alpha;
                    args.scalar[TPL_GEMM_BETA] = beta;
                    at_status s = th_dgemm_run_cubin(cu, dev, ref->stream, set[i].cubin,
                                                        set[i].cfg, &args, err, sizeof err);
                    CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                    CHECK(cu->MemcpyDtoH(hC, C, nc * 8) == CUDA_SUCCESS);
                    double num = 0, den = 0;
                    for (size_t x = 0; x < nc; x++) {
                        long long off = (long long)x - cases[d][9];
                        long long b = off >= 0 ? off / sc : -1, e = off - b * sc;
                        long long r = e / ldc, c = e % ldc;
                        int inside = off >= 0 && b < batch && r < m && c < nn;
                        if (!inside) {
                            CHECK_MSG(memcmp(&hC[x], &hC0[x], 8) == 0,
                                      "%s: element %zu outside C's blocks changed", set[i].text, x);
                            continue;
                        }
                        double want = alpha * th_dgemm_host_dot(a0 + b * sa, lda, opa,
                                                                b0 + b * sb, ldb, opb, (int)r,
                                                                (int)c, k);
                        if (beta != 0.0)
                            want += beta * hC0[x];
                        num += (hC[x] - want) * (hC[x] - want);
                        den += want * want;
                    }
                    double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                    CHECK_MSG(e <= f->tolerance(&p), "%s %dx%dx%d b%d ops %d alpha %g beta %g: "
                              "error %g", set[i].text, m, nn, k, batch, ops, alpha, beta, e);
                    worst = e / f->tolerance(&p) > worst ? e / f->tolerance(&p) : worst;
                    runs++;
                }
            }
            tpl_workset_free(cu, &ws);
            free(hA);
            free(hB);
            free(hC0);
            free(hC);
        }
    }
    printf("    %d configurations, %d runs against the host, worst %.3f of the tolerance\n", n,
           runs, worst);
    th_release_compiled(set, n);
    ms_close(g);
}

/* A configuration that computes a wrong result (test_dgfault: the last K tile dropped) is
 * rejected by verification; the same configuration without the fault passes. */
GPU_TEST(dgemm_gpu_faulty_configuration_is_rejected)
{
    th_check_fault_rejected(tpl_find("test_dgfault"), &tpl_dgemm, 1e6);
}

/* at_gemm(AT_R_64F) and at_dgemm against a host reference: odd sizes, unaligned leading
 * dimensions and bases, alpha/beta, beta = 0 over NaN; the call runs the dgemm family. */
GPU_TEST(dgemm_api_at_gemm_f64_against_the_host)
{
    at_status s;
    const cudrv *cu = cudrv_get(&s, NULL, 0);
    CUdevice dv;
    CUcontext ctx;
    CHECK(cu && cu->Init(0) == CUDA_SUCCESS && cu->DeviceGet(&dv, th_device()) == CUDA_SUCCESS &&
          cu->DevicePrimaryCtxRetain(&ctx, dv) == CUDA_SUCCESS &&
          cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    char path[4300];
    snprintf(path, sizeof path, "%s/dgemm_api.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    static const int cases[][8] = {
        /* m, n, k, lda, ldb, ldc, offset, nan C */
        {67, 45, 33, 35, 47, 49, 1, 1},
        {128, 128, 128, 128, 128, 128, 0, 0},
        {5, 300, 77, 77, 301, 303, 3, 0},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        int m = cases[t][0], n = cases[t][1], k = cases[t][2], lda = cases[t][3];
        int ldb = cases[t][4], ldc = cases[t][5], off = cases[t][6];
        size_t na = (size_t)m * lda + off, nb = (size_t)k * ldb + off, nc = (size_t)m * ldc + off;
        double *hA = malloc(na * 8), *hB = malloc(nb * 8), *hC0 = malloc(nc * 8),
               *hC = malloc(nc * 8);
        CHECK(hA && hB && hC0 && hC);
        td_host_fill(hA, na, 5 + t);
        td_host_fill(hB, nb, 6 + t);
        td_host_fill(hC0, nc, 7 + t);
        double alpha = cases[t][7] ? 0.75 : -1.5, beta = cases[t][7] ? 0.0 : 0.5;
        for (size_t x = 0; cases[t][7] && x < nc; x++)
            hC0[x] = NAN;
        CUdeviceptr dA, dB, dC;
        CHECK(cu->MemAlloc(&dA, na * 8) == CUDA_SUCCESS && cu->MemAlloc(&dB, nb * 8) == CUDA_SUCCESS &&
              cu->MemAlloc(&dC, nc * 8) == CUDA_SUCCESS);
        CHECK(cu->MemcpyHtoD(dA, hA, na * 8) == CUDA_SUCCESS &&
              cu->MemcpyHtoD(dB, hB, nb * 8) == CUDA_SUCCESS &&
              cu->MemcpyHtoD(dC, hC0, nc * 8) == CUDA_SUCCESS);
        const double *pa = (const double *)(uintptr_t)(dA + 8 * off);
        const double *pb = (const double *)(uintptr_t)(dB + 8 * off);
        double *pc = (double *)(uintptr_t)(dC + 8 * off);
        if (t % 2)
            s = at_dgemm(h, m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc);
        else
            s = at_gemm(h, AT_ROW_MAJOR, AT_OP_N, AT_OP_N, m, n, k, AT_R_64F, alpha, pa, lda, pb,
                        ldb, beta, pc, ldc);
        CHECK_MSG(s == AT_OK, "%s: %s", at_status_string(s), at_errmsg(h));
        CHECK(cu->CtxSynchronize() == CUDA_SUCCESS && cu->MemcpyDtoH(hC, dC, nc * 8) == CUDA_SUCCESS);
        at_stats st;
        CHECK_OK(at_get_stats(h, &st));
        CHECK_MSG(strstr(st.last_config, "OPA=0,OPB=0") != NULL, "ran %s", st.last_config);
        double num = 0, den = 0;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < ldc; j++) {
                size_t x = (size_t)off + (size_t)i * ldc + j;
                if (j >= n) {
                    CHECK(memcmp(&hC[x], &hC0[x], 8) == 0);
                    continue;
                }
                double want =
                    alpha * th_dgemm_host_dot(hA + off, lda, 0, hB + off, ldb, 0, i, j, k);
                if (beta != 0.0)
                    want += beta * hC0[x];
                num += (hC[x] - want) * (hC[x] - want);
                den += want * want;
            }
        double e = isfinite(num) ? sqrt(num / den) : INFINITY;
        CHECK_MSG(e <= tpl_dgemm_tolerance_rule(k), "%dx%dx%d: error %g", m, n, k, e);
        cu->MemFree(dA);
        cu->MemFree(dB);
        cu->MemFree(dC);
        free(hA);
        free(hB);
        free(hC0);
        free(hC);
    }
    CHECK_OK(at_destroy(h));
    CUcontext popped;
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(dv);
}
