/* dgemm.c: descriptor of the double-precision GEMM family (templates/dgemm.cu): the DMMA (FP64
 * tensor cores) and FFMA64 paths, their legality rules, launches, inputs and verification. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tpl.h"

/* Parameter order; must match the params table below. */
enum {
    P_PATH, P_OPA, P_OPB, P_MMA, P_BM, P_BN, P_BK, P_WARPS_M, P_WARPS_N, P_STAGES, P_FRAG, P_TM,
    P_TN, P_GROUP, P_SPLITK, P_LDR, P_UNR, P_SA, P_MINB, P_PERS, P_TMA, P_CP8, P_COUNT
};

#define DG_MAX_WORKSPACE (1LL << 30)    /* split-K partials, bytes */
#define DG_SPLIT_MAX_TILES 66           /* split-K only below this many output tiles (all products) */
#define DG_MAX_GRID_Z 65535
#define DG_NARROW 32                    /* the narrow tiles' side (BM or BN) */
#define DG_NARROW_MAX 128               /* ... taken only where that side of C is at most this */
#define DG_SPLIT_MAX 32                 /* the largest SPLITK */

/* Scratch slots of the configuration's exec. */
#define DG_SLOT_PARTIALS 0
#define DG_SLOT_PACKED_A 1
#define DG_SLOT_PACKED_B 2

/* ---- rejection reasons (each reachable; tests/test_dgemm.c scans for every one) ---- */
enum {
    R_RANGE, R_PATH, R_CANON_FFMA, R_CANON_DMMA, R_MMA, R_TILE, R_ACC, R_REGS, R_SMEM, R_THREADS,
    R_ARCH, R_FTILE, R_FSMEM, R_LATTICE, R_SPLIT, R_CP8, R_COUNT
};

const char *const tpl_dgemm_reasons[R_COUNT] = {
    [R_RANGE] = "OPA and OPB are 0 or 1, LDR 0..4, UNR 0 or 1, SA 0..2 (1, 2 with LDR 1..4), "
                "MINB 1..3, PERS 0 or 1, TMA 0..2 (1, 2 with SA 1 or 2, UNR 0 and LDR's first "
                "value), CP8 0..3 (1..3 with TMA 0); tile sizes, warps, STAGES, TM, TN, GROUP and SPLITK must be positive",
    [R_PATH] = "PATH is 1 (DMMA, FP64 tensor cores) or 0 (FFMA64, SIMT)",
    [R_CANON_FFMA] = "MMA, WARPS_M, WARPS_N, STAGES, FRAG, LDR, UNR, SA, MINB, PERS, TMA and CP8 "
                     "are DMMA parameters: PATH 0 takes only their first value",
    [R_CANON_DMMA] = "TM and TN are FFMA64 parameters: PATH 1 takes only their first value",
    [R_MMA] = "MMA is 16816 (m16n8k16), 1688 (m16n8k8), 1684 (m16n8k4) or 884 (m8n8k4)",
    [R_TILE] = "DMMA tile: BM a multiple of WARPS_M x the mma's M, BN of WARPS_N x 8, BK 8, 16 or "
               "32 and a multiple of the mma's K (FRAG 2: twice), STAGES 2..6, FRAG 1..2; LDR 1..4: "
               "BM x BK / 2 and BN x BK / 2 multiples of the threads, and with CP8 the threads a "
               "multiple of the 8-byte copies of the operand's tile row",
    [R_ACC] = "DMMA: a warp tile above 128 double accumulators per thread",
    [R_REGS] = "DMMA: about 2 x (accumulators + FRAG x fragments) + 24 registers per thread "
               "exceed 255 or the registers of a block, or of MINB blocks per SM",
    [R_SMEM] = "DMMA: the shared-memory ring above the device's per-block limit, or MINB rings "
               "above the per-SM limit",
    [R_THREADS] = "DMMA: WARPS_M x WARPS_N x 32 threads above the device's per-block limit",
    [R_ARCH] = "DMMA needs an sm_80+ device, and MMA 16816 / 1688 / 1684 (the Hopper shapes) "
               "and TMA 1 sm_90+",
    [R_FTILE] = "FFMA64: TM and TN 4 or 8 dividing BM and BN, 32..1024 threads in whole warps, "
                "BK 8 or 16",
    [R_FSMEM] = "FFMA64: its static shared tiles need more than 48 KiB",
    [R_LATTICE] = "tile and pipeline not in the tuned lattice (hand-picked around the measured "
                  "winners: docs/notes/dgemm.md)",
    [R_SPLIT] = "SPLITK 2..32 only on the lattice's split rows, with GROUP 8",
    [R_CP8] = "CP8 1..3 only on the lattice's DMMA split rows",
};
const int tpl_dgemm_n_reasons = R_COUNT;

/* Writes reason r into why and returns 0 (tpl_reject: no formatting). */
static int dg_reject(int r, char *why, size_t len)
{
    return tpl_reject(why, len, tpl_dgemm_reasons[r]);
}

/* The mma's M and K (dgemm.cu's DG_MM, DG_MK); 0 for an unknown shape. */
static int dg_mma_m(int mma)
{
    return mma == 16816 || mma == 1688 || mma == 1684 ? 16 : mma == 884 ? 8 : 0;
}
static int dg_mma_k(int mma)
{
    return mma == 16816 ? 16 : mma == 1688 ? 8 : mma == 1684 || mma == 884 ? 4 : 0;
}

/* Dynamic shared memory of dg_mma: STAGES x (A tile + B tile); rows padded as dgemm.cu's
 * DG_PADK (K-major tiles: 4, 8, 2 doubles for mma K 4, 8, 16) and DG_PADMN (4, 2, 2); TMA 1:
 * one 8-byte mbarrier per slot after the ring (TMA 2: two). */
static long long dg_smem_bytes(const int *c)
{
    long long bm = c[P_BM], bn = c[P_BN], bk = c[P_BK];
    int kpl = c[P_SA] == 2 ? 1 : dg_mma_k(c[P_MMA]) / 4;     /* SA 2: 8-byte loads */
    long long padk = kpl == 1 ? 4 : kpl == 2 ? 8 : 2, padmn = kpl == 1 ? 4 : 2;
    long long a = c[P_OPA] == 0 ? bm * (bk + padk) : bk * (bm + padmn);
    long long b = c[P_OPB] == 1 ? bn * (bk + padk) : bk * (bn + padmn);
    return c[P_STAGES] * (a + b) * 8 + 8LL * c[P_STAGES] * c[P_TMA];
}

static int dg_threads(const int *c)
{
    if (c[P_PATH] == 1)
        return 32 * c[P_WARPS_M] * c[P_WARPS_N];
    return (c[P_BM] / c[P_TM]) * (c[P_BN] / c[P_TN]);
}

/* DMMA legality (dgemm.cu's static_asserts) and the device's limits; 0 with the reason. */
static int dg_valid_dmma(const int *c, const at_device_info *dev, char *why, size_t len)
{
    int mm = dg_mma_m(c[P_MMA]), mk = dg_mma_k(c[P_MMA]);
    if (!mm)
        return dg_reject(R_MMA, why, len);
    int wm = c[P_BM] / c[P_WARPS_M], wn = c[P_BN] / c[P_WARPS_N], bk = c[P_BK];
    if (c[P_BM] % (c[P_WARPS_M] * mm) || c[P_BN] % (c[P_WARPS_N] * 8) ||
        (bk != 8 && bk != 16 && bk != 32) || c[P_FRAG] < 1 || c[P_FRAG] > 2 ||
        bk % ((c[P_FRAG] == 1 ? 1 : 2) * mk) || c[P_STAGES] < 2 || c[P_STAGES] > 6)
        return dg_reject(R_TILE, why, len);
    int threads = dg_threads(c);
    /* LDR 1..4 (dgemm.cu's dg_plan, dg_run): each tile's 16-byte chunks split evenly over the
     * threads */
    if (c[P_LDR] >= 1 &&
        ((long long)c[P_BM] * bk / 2 % threads || (long long)c[P_BN] * bk / 2 % threads))
        return dg_reject(R_TILE, why, len);
    /* CP8 (dgemm.cu's dg_plan with CW 1): an operand copied 8 bytes at a time has one copy per
     * double of its tile's contiguous row (A op N, B op T: BK; else BM, BN), a whole number of
     * rows per pass of the threads */
    if (c[P_LDR] >= 1 &&
        (((c[P_CP8] & 1) && threads % (c[P_OPA] == 0 ? bk : c[P_BM])) ||
         ((c[P_CP8] & 2) && threads % (c[P_OPB] == 1 ? bk : c[P_BN]))))
        return dg_reject(R_TILE, why, len);
    int acc = wm * wn / 32;
    if (acc > 128)
        return dg_reject(R_ACC, why, len);
    int afr = mm * mk / 32, bfr = (wn / 8) * (mk / 4), frags = (wm / mm) * afr + bfr;
    /* FRAG 2: fragments double-buffered */
    int regs = 2 * (acc + c[P_FRAG] * frags) + 24;
    /* MINB blocks per SM (__launch_bounds__ minimum): ptxas caps a thread at the SM's registers
     * over MINB blocks, in steps of 8 */
    int cap = (int)((dev && dev->regs_per_sm ? dev->regs_per_sm : 65536) /
                    ((long long)threads * c[P_MINB]) / 8 * 8);
    if (regs > 255 || regs > cap || (long long)regs * threads > (dev ? dev->regs_per_block : 65536))
        return dg_reject(R_REGS, why, len);
    /* each resident block also takes 1 KiB of shared memory for the system */
    if (dg_smem_bytes(c) > (dev ? dev->smem_per_block_optin : 227 * 1024) ||
        c[P_MINB] * (dg_smem_bytes(c) + 1024) > (dev && dev->smem_per_sm ? dev->smem_per_sm
                                                                         : 228 * 1024))
        return dg_reject(R_SMEM, why, len);
    if (threads > (dev ? dev->max_threads_per_block : 1024))
        return dg_reject(R_THREADS, why, len);
    if (dev && (dev->cc_major < 8 || ((mm == 16 || c[P_TMA]) && dev->cc_major < 9)))
        return dg_reject(R_ARCH, why, len);
    return 1;
}

/* FFMA64 legality; 0 with the reason. */
static int dg_valid_ffma(const int *c, const at_device_info *dev, char *why, size_t len)
{
    int tm = c[P_TM], tn = c[P_TN], bk = c[P_BK];
    int threads = dg_threads(c);
    if ((tm != 4 && tm != 8) || (tn != 4 && tn != 8) || c[P_BM] % tm || c[P_BN] % tn ||
        threads < 32 || threads % 32 || threads > (dev ? dev->max_threads_per_block : 1024) ||
        (bk != 8 && bk != 16))
        return dg_reject(R_FTILE, why, len);
    if ((long long)bk * (c[P_BM] + 1 + c[P_BN] + 1) * 8 > 48 * 1024)
        return dg_reject(R_FSMEM, why, len);
    (void)dev;
    return 1;
}

/* ---- the tuned lattice ---- */

/* One tile/pipeline recipe; `split` rows also take SPLITK 2, 4, 8, 16 and 32 and (DMMA) CP8 1..3
 * (8-byte copies of an operand with an odd leading dimension). Sources: docs/notes/dgemm.md
 * (H200 sweeps of the DMMA shapes, tiles, warps and stages). */
typedef struct dg_recipe {
    int path, mma, bm, bn, bk, warps_m, warps_n, stages, frag, ldr, tm, tn, split, unr, sa, minb,
        pers, tma;
} dg_recipe;  /* minb 0 reads as 1 */

#ifndef DG_WIDE_SPACE   /* the wide build (bench sweeps) takes every legal configuration */
static const dg_recipe dg_lattice[] = {
    /* DMMA (sm_90+), docs/notes/dgemm.md section 8 (sweep 7): m16n8k8 with 8-byte fragment
     * loads in the mma's depth order and shared addresses at immediate offsets (SA 2), the
     * 128 x 128 x 32 tile of 2 x 4 warps (the best row at 4096^3, 8192^3, 512^3 x 128; the
     * sm_90 baseline); section 11 (sweep 12): its TMA form with two ring slots (TMA 1 STAGES 2:
     * 1.025x / 1.028x of cuBLAS paired at 4096^3 / 8192^3, the cp.async form 1.026x / 1.009x)
     * in place of the m16n8k4 SA 1 row (0.968x sustained in section 10, its TMA form 0.992x /
     * 0.986x), and the 64 x 128 two-block tile as TMA 1 (+25 % at 4096^3 in the GPU test's
     * timings); the m16n8k4 64 x 64 three-block row (the 1024^3 winner); 64 x 64 split-K
     * (sections 6, 7: SA 0, LDR 3 rows, 4 x 2 warps and 16 warps of 32 x 32 lost to these) */
    {1, 1688, 128, 128, 32, 2, 4, 3, 2, 3, 8, 8, 0, 0, 2, 1, 0, 0},
    {1, 1688, 128, 128, 32, 2, 4, 2, 2, 2, 8, 8, 0, 0, 2, 1, 0, 1},
    {1, 1688, 64, 128, 16, 2, 2, 3, 2, 2, 8, 8, 0, 0, 2, 2, 0, 1},
    {1, 1684, 64, 64, 16, 2, 2, 3, 2, 3, 8, 8, 0, 0, 1, 3, 0, 0},
    {1, 1684, 64, 64, 16, 2, 2, 4, 2, 2, 8, 8, 1, 0, 0, 0, 0, 0},
    /* PERS 1 (section 9): the m16n8k8 rows walking several products per block (batches only:
     * dg_applicable), as TMA 1 since section 11 (sweep 12b: 128 x 128 1.081x / 1.064x of cuBLAS
     * at 256^3 x 512 / 512^3 x 128 against 0.939x / 1.036x with cp.async; 64 x 128 1.034x /
     * 1.005x against 0.969x / 0.973x) */
    {1, 1688, 128, 128, 32, 2, 4, 3, 2, 2, 8, 8, 0, 0, 2, 1, 1, 1},
    {1, 1688, 64, 128, 16, 2, 2, 3, 2, 2, 8, 8, 0, 0, 2, 2, 1, 1},
    /* DMMA m8n8k4 (sm_80+) */
    {1, 884, 128, 128, 16, 4, 2, 4, 2, 2, 8, 8, 0, 0, 0, 0, 0, 0},
    {1, 884, 64, 64, 16, 2, 2, 4, 2, 2, 8, 8, 1, 0, 0, 0, 0, 0},
    /* Narrow DMMA tiles (sm_90+), a side of 32 for products whose m or n is at most
     * DG_NARROW_MAX (dg_applicable), with split-K for a deep K: a 64-row tile computes 66% padding
     * at m = 22 (22 x 1905 x 4955 ran 0.38x of cuBLAS on the 64 x 64 split row, 2026-11-29).
     * Not measured yet (docs/open.md, "FP64 narrow products over a deep K"): m16n8k4 as the 64 x
     * 64 split row (LDR 2, SA 0) and m16n8k8 as the Hopper winners (LDR 3, SA 2), each 32 x 64
     * and 64 x 32 of 2 x 2 warps, 32 x 128 of 2 x 4 and 128 x 32 of 4 x 2 (warp tiles of 16
     * rows or 16 columns: one or two mma tiles a side); the 128-thread m16n8k4 tiles also with
     * three blocks per SM (MINB 3: 168 registers where MINB 1 takes 210-240, nvcc -Xptxas -v,
     * 2026-11-29; LDR 2 SA 0, which spills 0 or 4 bytes there; LDR 3 SA 1 spilled 4). */
    {1, 1684, 32, 64, 16, 2, 2, 4, 2, 2, 8, 8, 1, 0, 0, 0, 0, 0},
    {1, 1684, 32, 128, 16, 2, 4, 4, 2, 2, 8, 8, 1, 0, 0, 0, 0, 0},
    {1, 1684, 64, 32, 16, 2, 2, 4, 2, 2, 8, 8, 1, 0, 0, 0, 0, 0},
    {1, 1684, 128, 32, 16, 4, 2, 4, 2, 2, 8, 8, 1, 0, 0, 0, 0, 0},
    {1, 1684, 32, 64, 16, 2, 2, 4, 2, 2, 8, 8, 1, 0, 0, 3, 0, 0},
    {1, 1684, 64, 32, 16, 2, 2, 4, 2, 2, 8, 8, 1, 0, 0, 3, 0, 0},
    {1, 1688, 32, 64, 16, 2, 2, 4, 2, 3, 8, 8, 1, 0, 2, 0, 0, 0},
    {1, 1688, 32, 128, 16, 2, 4, 4, 2, 3, 8, 8, 1, 0, 2, 0, 0, 0},
    {1, 1688, 64, 32, 16, 2, 2, 4, 2, 3, 8, 8, 1, 0, 2, 0, 0, 0},
    {1, 1688, 128, 32, 16, 4, 2, 4, 2, 3, 8, 8, 1, 0, 2, 0, 0, 0},
    /* FFMA64 */
    {0, 16816, 128, 128, 8, 2, 4, 4, 2, 2, 8, 8, 0, 0, 0, 0, 0, 0},
    {0, 16816, 64, 64, 16, 2, 4, 4, 2, 2, 4, 4, 1, 0, 0, 0, 0, 0},
};
#define DG_LATTICE_N ((int)(sizeof dg_lattice / sizeof dg_lattice[0]))

/* The lattice row of c, or NULL. */
static const dg_recipe *dg_recipe_of(const int *c)
{
    for (int i = 0; i < DG_LATTICE_N; i++) {
        const dg_recipe *r = &dg_lattice[i];
        if (r->path == c[P_PATH] && r->mma == c[P_MMA] && r->bm == c[P_BM] && r->bn == c[P_BN] &&
            r->bk == c[P_BK] && r->warps_m == c[P_WARPS_M] && r->warps_n == c[P_WARPS_N] &&
            r->stages == c[P_STAGES] && r->frag == c[P_FRAG] && r->ldr == c[P_LDR] &&
            r->unr == c[P_UNR] && r->sa == c[P_SA] && (r->minb ? r->minb : 1) == c[P_MINB] &&
            r->pers == c[P_PERS] && r->tma == c[P_TMA] &&
            r->tm == c[P_TM] && r->tn == c[P_TN])
            return r;
    }
    return NULL;
}
#endif

extern const tpl_family tpl_dgemm;

/* 1 if parameter p of cfg is at its canonical (first) value. */
static int dg_canonical(const int *cfg, int p)
{
    return cfg[p] == tpl_dgemm.params[p].values[0];
}

/* Without the lattice (a build with -DDG_WIDE_SPACE, docs/notes/dgemm.md) every legal
 * configuration is valid: the prototype sweeps. */
static int dg_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    if ((cfg[P_OPA] != 0 && cfg[P_OPA] != 1) || (cfg[P_OPB] != 0 && cfg[P_OPB] != 1))
        return dg_reject(R_RANGE, why, len);
    for (int p = P_MMA; p < P_COUNT; p++)
        if (cfg[p] < (p == P_LDR || p == P_UNR || p == P_SA || p == P_PERS || p == P_TMA ||
                      p == P_CP8 ? 0 : 1) ||
            (p == P_LDR && cfg[p] > 4) || (p == P_UNR && cfg[p] > 1) || (p == P_SA && cfg[p] > 2) ||
            (p == P_MINB && cfg[p] > 3) || (p == P_PERS && cfg[p] > 1) ||
            (p == P_SA && cfg[p] && cfg[P_LDR] < 1) || (p == P_TMA && cfg[p] > 2) ||
            (p == P_TMA && cfg[p] && (!cfg[P_SA] || cfg[P_UNR] || !dg_canonical(cfg, P_LDR))) ||
            (p == P_CP8 && (cfg[p] > 3 || (cfg[p] && cfg[P_TMA]))))
            return dg_reject(R_RANGE, why, len);
    if (cfg[P_PATH] != 0 && cfg[P_PATH] != 1)
        return dg_reject(R_PATH, why, len);
    int dmma = cfg[P_PATH] == 1;
    if (!dmma && (!dg_canonical(cfg, P_MMA) || !dg_canonical(cfg, P_WARPS_M) ||
                  !dg_canonical(cfg, P_WARPS_N) || !dg_canonical(cfg, P_STAGES) ||
                  !dg_canonical(cfg, P_FRAG) || !dg_canonical(cfg, P_LDR) ||
                  !dg_canonical(cfg, P_UNR) || !dg_canonical(cfg, P_SA) ||
                  !dg_canonical(cfg, P_MINB) || !dg_canonical(cfg, P_PERS) ||
                  !dg_canonical(cfg, P_TMA) || !dg_canonical(cfg, P_CP8)))
        return dg_reject(R_CANON_FFMA, why, len);
    if (dmma && (!dg_canonical(cfg, P_TM) || !dg_canonical(cfg, P_TN)))
        return dg_reject(R_CANON_DMMA, why, len);
    if (dmma ? !dg_valid_dmma(cfg, dev, why, len) : !dg_valid_ffma(cfg, dev, why, len))
        return 0;
#ifndef DG_WIDE_SPACE
    const dg_recipe *r = dg_recipe_of(cfg);
    if (!r)
        return dg_reject(R_LATTICE, why, len);
    if (cfg[P_SPLITK] > 1 && (!r->split || cfg[P_SPLITK] > DG_SPLIT_MAX ||
                              (cfg[P_SPLITK] & (cfg[P_SPLITK] - 1)) || cfg[P_GROUP] != 8))
        return dg_reject(R_SPLIT, why, len);
    if (cfg[P_CP8] && !r->split)
        return dg_reject(R_CP8, why, len);
#endif
    return 1;
}

/* valid_prefix: 0 when the fixed parameters match no lattice row (valid() then rejects every
 * completion: a valid configuration is one of the rows), so the walk skips the 159 million raw
 * configurations outside the rows instead of scanning them (`autotune list` and the tuner's
 * start took 4-5 s in that scan). The wide build takes every legal configuration: no pruning. */
static int dg_valid_prefix(const int *c, int n_fixed, const at_device_info *dev)
{
    (void)dev;
#ifdef DG_WIDE_SPACE
    (void)c;
    (void)n_fixed;
    return 1;
#else
    for (int i = 0; i < DG_LATTICE_N; i++) {
        const dg_recipe *r = &dg_lattice[i];
        const int want[P_COUNT] = {
            [P_PATH] = r->path, [P_MMA] = r->mma, [P_BM] = r->bm, [P_BN] = r->bn,
            [P_BK] = r->bk, [P_WARPS_M] = r->warps_m, [P_WARPS_N] = r->warps_n,
            [P_STAGES] = r->stages, [P_FRAG] = r->frag, [P_TM] = r->tm, [P_TN] = r->tn,
            [P_LDR] = r->ldr, [P_UNR] = r->unr, [P_SA] = r->sa,
            [P_MINB] = r->minb ? r->minb : 1, [P_PERS] = r->pers, [P_TMA] = r->tma,
        };
        int match = 1;
        for (int p = 0; p < n_fixed && p < P_COUNT && match; p++)
            if (p != P_OPA && p != P_OPB && p != P_GROUP && p != P_SPLITK && p != P_CP8)
                match = c[p] == want[p];
        if (match)
            return 1;
    }
    return 0;
#endif
}

/* The kind the family computes: double, default math, row-major, any ops and batch. */
static int dg_accepts(const tpl_problem *p)
{
    return p->n_dims == 3 && p->dtype == AT_R_64F && p->math == AT_MATH_DEFAULT &&
           p->order == AT_ROW_MAJOR && (p->op_a == AT_OP_N || p->op_a == AT_OP_T) &&
           (p->op_b == AT_OP_N || p->op_b == AT_OP_T) && p->batch >= 0;
}

/* CP8's bits of a problem: 1 where op(A)'s tight leading dimension (op N: k, T: m) is odd, 2
 * where op(B)'s (op N: n, T: k) is. */
static int dg_cp8_of(const tpl_problem *p)
{
    long long lda = p->op_a == AT_OP_T ? p->dims[0] : p->dims[2];
    long long ldb = p->op_b == AT_OP_T ? p->dims[2] : p->dims[1];
    return (lda % 2 ? 1 : 0) | (ldb % 2 ? 2 : 0);
}

static int dg_applicable(const int *cfg, const tpl_problem *p)
{
    if (!tpl_family_accepts(&tpl_dgemm, p))
        return 0;
    if (cfg[P_OPA] != (p->op_a == AT_OP_T) || cfg[P_OPB] != (p->op_b == AT_OP_T))
        return 0;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2], batch = tpl_problem_batch(p);
    if (m < 1 || n < 1 || k < 1 || m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff ||
        batch > 0x7fffffff)
        return 0;
    long long tiles = tpl_cdiv(m, cfg[P_BM]) * tpl_cdiv(n, cfg[P_BN]);
    if (tiles > 0x7fffffff)
        return 0;
    /* A 32-row (32-column) tile computes less padding than a 64-wide one only where m (n) is
     * small; elsewhere it reads each B (A) tile twice as often for nothing, so the tuner does
     * not spend its budget on it (the default run's problems keep their few configurations). */
    if ((cfg[P_BM] == DG_NARROW && m > DG_NARROW_MAX) ||
        (cfg[P_BN] == DG_NARROW && n > DG_NARROW_MAX))
        return 0;
    /* CP8 reads an operand of any leading dimension in place with 8-byte copies, where 16-byte
     * copies need it packed first (dg_launch): it pays only where the operand's tight leading
     * dimension (the problem's, as the tuner and most callers store it) is odd. So CP8 is 0 or
     * exactly the operands whose tight one is odd (dg_cp8_of): one more configuration a split row,
     * none where both are even. */
    if (cfg[P_CP8] && cfg[P_CP8] != dg_cp8_of(p))
        return 0;
    int sk = cfg[P_SPLITK];
    /* PERS 1 walks several products per block: only for batches (or split-K slices) */
    if (cfg[P_PERS] && batch * sk <= 1)
        return 0;
    /* Split-K pays for its reduction only where the tiles leave most SMs idle and each slice
     * keeps at least 4 K tiles of work. */
    if (sk > 1 && (tiles * batch > DG_SPLIT_MAX_TILES || k < 4LL * sk * cfg[P_BK] ||
                   (long long)sk * batch * m * n * 8 > DG_MAX_WORKSPACE))
        return 0;
    return 1;
}

static int dg_deterministic(const int *cfg)
{
    (void)cfg;      /* no atomics: split-K partials are summed in slice order */
    return 1;
}

/* DMMA with the Hopper shapes or TMA -> arch only from sm_90 on; everything else -> arch. */
static const char *dg_target_arch(const int *cfg, const char *arch)
{
    if (cfg[P_PATH] != 1 || (dg_mma_m(cfg[P_MMA]) != 16 && !cfg[P_TMA]))
        return arch;
    int major = 0;
    if (sscanf(arch, "sm_%d", &major) != 1)
        return NULL;
    return major >= 90 ? arch : NULL;
}

/* ---- run ---- */

/* The kernels' argument block (dgemm.cu's dg_args, same layout). */
typedef struct dg_call {
    int m, n, k, batch;
    CUdeviceptr A, B, C, W;
    long long lda, ldb, ldc, sa, sb, sc;
    double alpha, beta;
    int vec;
} dg_call;

/* Grid of a grid-stride helper kernel for `items` units of work. */
static unsigned dg_stride_grid(const at_exec *ex, long long items)
{
    long long cap = ex->dev && ex->dev->sm_count > 0 ? 8LL * ex->dev->sm_count : 1024;
    long long g = tpl_cdiv(items > 0 ? items : 1, 256);
    return (unsigned)(g < cap ? g : cap);
}

/* Copies the batch of rows x cols operands at *p (leading dimension *ld, batch stride *bs)
 * into scratch slot `slot` with even leading dimensions and 16-byte aligned rows, and points
 * *p, *ld, *bs at the copy. */
static at_status dg_pack(at_exec *ex, int slot, int rows, int cols, int batch, CUdeviceptr *p,
                         long long *ld, long long *bs)
{
    long long ldd = tpl_cdiv(cols, 2) * 2;
    CUdeviceptr dst = 0;
    at_status s = ex_scratch(ex, slot, (size_t)batch * rows * (size_t)ldd * 8, &dst);
    if (s != AT_OK)
        return s;
    if (dst % 16)
        return ex_fail(ex, AT_ERR_INTERNAL, "dgemm: scratch memory not 16-byte aligned");
    CUdeviceptr src = *p;
    long long lds = *ld, ss = *bs;
    void *a[] = {&rows, &cols, &batch, &src, &lds, &ss, &dst, &ldd};
    s = ex_launch(ex, "dg_pack", dg_stride_grid(ex, (long long)batch * rows * ldd / 2), 1, 1, 256,
                  1, 1, 0, a);
    if (s == AT_OK) {
        *p = dst;
        *ld = ldd;
        *bs = (long long)rows * ldd;
    }
    return s;
}

/* TMA 1, 2: a 3D tensor map {cols, rows, batch} of doubles over the operand at p (row stride
 * ld, batch stride bs) with the box {box_cols, box_rows, 1} (dgemm.cu's dg_tmap); batch 1 takes
 * the matrix's own size as its batch stride. The driver's result. */
static CUresult dg_tma_map(at_exec *ex, CUtensorMap *map, CUdeviceptr p, long long rows,
                           long long cols, long long ld, long long bs, int batch, int box_cols,
                           int box_rows)
{
    cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)batch};
    cuuint64_t strides[2] = {(cuuint64_t)(ld * 8),
                             (cuuint64_t)((batch > 1 ? bs : rows * ld) * 8)};
    cuuint32_t box[3] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows, 1}, elem[3] = {1, 1, 1};
    return ex->cu->TensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT64, 3,
                                        (void *)(uintptr_t)p, dims, strides, box, elem,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* TMA 1, 2: the map of operand `op` (0 A, 1 B) with dgemm.cu's stage box: K-major tiles (A op
 * N, B op T) {BK + padk, BM or BN}, M/N-major tiles (A op T, B op N) {BM or BN + padmn, BK}
 * (the pads as dg_smem_bytes). */
static CUresult dg_tma_map_op(at_exec *ex, const int *cfg, const dg_call *c, int op,
                              CUtensorMap *map)
{
    int kpl = cfg[P_SA] == 2 ? 1 : dg_mma_k(cfg[P_MMA]) / 4;
    int padk = kpl == 1 ? 4 : kpl == 2 ? 8 : 2, padmn = kpl == 1 ? 4 : 2;
    int bk = cfg[P_BK], t = cfg[op ? P_OPB : P_OPA];
    int mn = op ? c->n : c->m, tile = cfg[op ? P_BN : P_BM];
    /* the stored matrix: A op N and B op T are mn x k, the others k x mn */
    int kmajor = op ? t : !t;
    long long rows = kmajor ? mn : c->k, cols = kmajor ? c->k : mn;
    return dg_tma_map(ex, map, op ? c->B : c->A, rows, cols, op ? c->ldb : c->lda,
                      op ? c->sb : c->sa, c->batch, kmajor ? bk + padk : tile + padmn,
                      kmajor ? tile : bk);
}

/* TMA 1, 2: the maps of A and B (operands aligned already: dg_aligned_tma); an operand whose
 * layout the driver refuses (e.g. batch strides it does not take) is packed (dg_pack) and
 * mapped again. AT_ERR_UNSUPPORTED without cuTensorMapEncodeTiled, AT_ERR_CUDA if the packed
 * copy is refused too. */
static at_status dg_tma_maps(at_exec *ex, const int *cfg, dg_call *c, CUtensorMap *maps)
{
    if (!ex->cu->TensorMapEncodeTiled)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "dgemm: TMA needs cuTensorMapEncodeTiled "
                       "(CUDA 12+ driver)");
    for (int op = 0; op < 2; op++) {
        CUresult rc = dg_tma_map_op(ex, cfg, c, op, &maps[op]);
        if (rc == CUDA_SUCCESS)
            continue;
        int t = cfg[op ? P_OPB : P_OPA], mn = op ? c->n : c->m, kmajor = op ? t : !t;
        at_status s = op ? dg_pack(ex, DG_SLOT_PACKED_B, kmajor ? mn : c->k, kmajor ? c->k : mn,
                                   c->batch, &c->B, &c->ldb, &c->sb)
                         : dg_pack(ex, DG_SLOT_PACKED_A, kmajor ? mn : c->k, kmajor ? c->k : mn,
                                   c->batch, &c->A, &c->lda, &c->sa);
        if (s != AT_OK)
            return s;
        if ((rc = dg_tma_map_op(ex, cfg, c, op, &maps[op])) != CUDA_SUCCESS)
            return ex_fail(ex, AT_ERR_CUDA, "dgemm: cuTensorMapEncodeTiled failed (%d) for "
                           "operand %c (%dx%dx%d, batch %d)", (int)rc, op ? 'B' : 'A', c->m,
                           c->n, c->k, c->batch);
    }
    return AT_OK;
}

/* 1 if a DMMA kernel can read the operand with 16-byte copies (TMA 1: also a nonzero batch
 * stride below 2^37 elements, a row stride below 2^37). */
static int dg_aligned_tma(CUdeviceptr p, long long ld, long long bs, int batch)
{
    return p % 16 == 0 && ld % 2 == 0 && ld < (1LL << 37) &&
           (batch == 1 || (bs % 2 == 0 && bs > 0 && bs < (1LL << 37)));
}

/* 1 if a DMMA kernel can read the operand with 16-byte copies. */
static int dg_aligned(CUdeviceptr p, long long ld, long long bs, int batch)
{
    return p % 16 == 0 && ld % 2 == 0 && (batch == 1 || bs % 2 == 0);
}

/* Launches the configuration's kernel (and the split-K reduce) on the call. */
static at_status dg_launch(at_exec *ex, const int *cfg, dg_call *c)
{
    at_status s;
    int dmma = cfg[P_PATH] == 1;
    if (dmma && c->k > 0) {
        int ar = cfg[P_OPA] ? c->k : c->m, ac = cfg[P_OPA] ? c->m : c->k;
        int br = cfg[P_OPB] ? c->n : c->k, bc = cfg[P_OPB] ? c->k : c->n;
        int tma = cfg[P_TMA], cp8 = cfg[P_CP8];
        /* CP8: the operand's 8-byte copies read it in place (any leading dimension) */
        if (!((cp8 & 1) ? c->A % 8 == 0
                        : (tma ? dg_aligned_tma : dg_aligned)(c->A, c->lda, c->sa, c->batch)) &&
            (s = dg_pack(ex, DG_SLOT_PACKED_A, ar, ac, c->batch, &c->A, &c->lda, &c->sa)) != AT_OK)
            return s;
        if (!((cp8 & 2) ? c->B % 8 == 0
                        : (tma ? dg_aligned_tma : dg_aligned)(c->B, c->ldb, c->sb, c->batch)) &&
            (s = dg_pack(ex, DG_SLOT_PACKED_B, br, bc, c->batch, &c->B, &c->ldb, &c->sb)) != AT_OK)
            return s;
    }
    c->vec = c->C % 16 == 0 && c->ldc % 2 == 0 && (c->batch == 1 || c->sc % 2 == 0);
    int sk = cfg[P_SPLITK];
    c->W = 0;
    if (sk > 1 &&
        (s = ex_scratch(ex, DG_SLOT_PARTIALS, (size_t)sk * c->batch * c->m * c->n * 8, &c->W)) !=
            AT_OK)
        return s;
    long long tiles = tpl_cdiv(c->m, cfg[P_BM]) * tpl_cdiv(c->n, cfg[P_BN]);
    if (tiles > 0x7fffffff)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "dgemm: %lld tiles (limit 2^31-1)", tiles);
    long long z = (long long)c->batch * sk;
    if (dmma && cfg[P_PERS]) {
        /* PERS 1: about MINB blocks per SM, each walking z / gz products */
        long long sms = ex->dev && ex->dev->sm_count > 0 ? ex->dev->sm_count : 132;
        long long per = sms * cfg[P_MINB] / tiles;
        z = per < 1 ? 1 : per < z ? per : z;
    }
    unsigned gz = (unsigned)(z < DG_MAX_GRID_Z ? z : DG_MAX_GRID_Z);
    /* TMA 1: the tensor maps follow the arguments (64-byte aligned, as the driver wants) */
    CUtensorMap maps[2];
    memset(maps, 0, sizeof maps);           /* k == 0: no tile is copied */
    if (dmma && cfg[P_TMA] && c->k > 0 && (s = dg_tma_maps(ex, cfg, c, maps)) != AT_OK)
        return s;
    void *a[] = {c, &maps[0], &maps[1]};
    s = ex_launch(ex, dmma ? "dg_mma" : "dg_ffma", (unsigned)tiles, 1, gz,
                  (unsigned)dg_threads(cfg), 1, 1, dmma ? (unsigned)dg_smem_bytes(cfg) : 0, a);
    if (s != AT_OK || sk == 1)
        return s;
    return ex_launch(ex, "dg_splitk_reduce", dg_stride_grid(ex, (long long)c->batch * c->m * c->n),
                     1, 1, 256, 1, 1, 0, a);
}

static at_status dg_run(at_exec *ex, const int *cfg, tpl_args *args)
{
    const tpl_problem *p = &args->problem;
    at_status s = tpl_check_problem(ex, &tpl_dgemm, p);
    if (s != AT_OK)
        return s;
    if (cfg[P_OPA] != (p->op_a == AT_OP_T) || cfg[P_OPB] != (p->op_b == AT_OP_T))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "dgemm: configuration OPA=%d OPB=%d does not "
                       "compute op(A)=%s op(B)=%s", cfg[P_OPA], cfg[P_OPB],
                       tpl_op_name(p->op_a), tpl_op_name(p->op_b));
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2], batch = tpl_problem_batch(p);
    if (m < 0 || n < 0 || k < 0 || m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff ||
        batch > 0x7fffffff)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "dgemm: sizes %lldx%lldx%lld, batch %lld out of "
                       "range", m, n, k, batch);
    const tpl_operand *oa = &args->operand[TPL_GEMM_A], *ob = &args->operand[TPL_GEMM_B],
                      *oc = &args->operand[TPL_GEMM_C];
    dg_call c = {(int)m, (int)n, (int)k, (int)batch, oa->ptr, ob->ptr, oc->ptr, 0, oa->ld, ob->ld,
                 oc->ld, oa->batch_stride, ob->batch_stride, oc->batch_stride,
                 args->scalar[TPL_GEMM_ALPHA], args->scalar[TPL_GEMM_BETA], 0};
    if (c.m == 0 || c.n == 0 || c.batch == 0)
        return AT_OK;
    long long acols = cfg[P_OPA] ? m : k, bcols = cfg[P_OPB] ? k : n;
    if (c.lda < (acols > 1 ? acols : 1) || c.ldb < (bcols > 1 ? bcols : 1) || c.ldc < c.n)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "dgemm: leading dimensions lda=%lld ldb=%lld "
                       "ldc=%lld too small for %dx%dx%d (op %s%s)", c.lda, c.ldb, c.ldc, c.m, c.n,
                       c.k, tpl_op_name(p->op_a), tpl_op_name(p->op_b));
    if (c.sa < 0 || c.sb < 0 || c.sc < 0)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "dgemm: negative batch stride");
    if (!c.C || (c.k > 0 && (!c.A || !c.B)))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "dgemm: NULL operand");
    if (!isfinite(c.alpha) || !isfinite(c.beta))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "dgemm: alpha and beta must be finite");
    return dg_launch(ex, cfg, &c);
}

static void dg_work(const tpl_problem *p, double *flops, double *bytes)
{
    double m = (double)p->dims[0], n = (double)p->dims[1], k = (double)p->dims[2];
    double b = (double)tpl_problem_batch(p);
    *flops = 2.0 * m * n * k * b;
    *bytes = 8.0 * (m * k + k * n + m * n) * b;     /* A and B read, C written (beta 0) once */
}

/* R (batch x m x n doubles, packed) = alpha op(A) op(B) + beta C0 in double-double arithmetic
 * rounded once (reference.cu's ref_dg_gemm): within about 2^-53 relative of the exact product. */
static at_status dg_reference(at_exec *ref, const tpl_problem *p, double alpha, CUdeviceptr A,
                              long long lda, long long sa, CUdeviceptr B, long long ldb,
                              long long sb, double beta, CUdeviceptr C0, long long ldc0,
                              long long sc0, CUdeviceptr R)
{
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    int opa = p->op_a == AT_OP_T, opb = p->op_b == AT_OP_T;
    long long batch = tpl_problem_batch(p);
    void *a[] = {&m, &n, &k, &alpha, &A, &lda, &sa, &opa, &B, &ldb, &sb, &opb, &beta, &C0, &ldc0,
                 &sc0, &R};
    return ex_launch(ref, "ref_dg_gemm", (unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16),
                     (unsigned)batch, 16, 16, 1, 0, a);
}

/* Inputs of a problem: A, B uniform in [-1, 1) with 53 random mantissa bits, packed (batch
 * stride one operand), alpha 1.5, beta 0 over a C filled with NaN (it must not be read), the
 * double-double reference. */
static at_status dg_prepare(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                            tpl_workset *ws)
{
    at_status s = tpl_check_gemm_prepare(ref, &tpl_dgemm, p);
    if (s != AT_OK)
        return s;
    long long batch = tpl_problem_batch(p);
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    size_t a_n = (size_t)(m * k), b_n = (size_t)(k * n), c_n = (size_t)(m * n);
    CUdeviceptr A, B, C, C0, R;
    if ((s = tpl_ws_alloc(ref, ws, a_n * batch * 8, &A)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, b_n * batch * 8, &B)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * batch * 8, &C)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * batch * 8, &C0)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * batch * 8, &R)) != AT_OK)
        return s;
    long long lda = p->op_a == AT_OP_T ? m : k, ldb = p->op_b == AT_OP_T ? k : n;
    const double alpha = 1.5, beta = 0.0;
    if ((s = tpl_fill_f64(ref, A, (long long)(a_n * batch), seed * 3 + 1, -1.0, 1.0)) != AT_OK ||
        (s = tpl_fill_f64(ref, B, (long long)(b_n * batch), seed * 3 + 2, -1.0, 1.0)) != AT_OK ||
        (s = ex_memset32(ref, C0, 0xFFFFFFFFu, c_n * batch * 2)) != AT_OK ||
        (s = dg_reference(ref, p, alpha, A, lda, (long long)a_n, B, ldb, (long long)b_n, beta, C0,
                          n, (long long)c_n, R)) != AT_OK)
        return s;
    memset(&ws->args, 0, sizeof ws->args);
    ws->args.problem = *p;
    ws->args.operand[TPL_GEMM_A] = (tpl_operand){A, lda, (long long)a_n};
    ws->args.operand[TPL_GEMM_B] = (tpl_operand){B, ldb, (long long)b_n};
    ws->args.operand[TPL_GEMM_C] = (tpl_operand){C, n, (long long)c_n};
    ws->args.scalar[TPL_GEMM_ALPHA] = alpha;
    ws->args.scalar[TPL_GEMM_BETA] = beta;
    ws->out = C;
    ws->out_bytes = c_n * batch * 8;
    ws->out_initial = C0;
    ws->reference = R;
    return AT_OK;
}

/* The verification rule (README "Double-precision GEMM"):
 *   ||C - C_ref||_F / ||C_ref||_F <= (16 + 8 sqrt(k)) 2^-53,
 * C_ref the double-double product rounded once (itself within 2^-53 per element). A double
 * sum of k terms in any blocking errs by about sqrt(k) 2^-53 relative on random data
 * (docs/notes/dgemm.md: measured DMMA and cublasDgemm errors); a wrong tile or a race gives
 * 1e-3 or more (the test family test_dgfault, which drops one K tile, measures it). */
double tpl_dgemm_tolerance_rule(long long k)
{
    double kk = k > 0 ? (double)k : 1.0;
    return (16.0 + 8.0 * sqrt(kk)) * ldexp(1.0, -53);
}

static double dg_tolerance(const tpl_problem *p)
{
    return tpl_dgemm_tolerance_rule(p->n_dims == 3 ? p->dims[2] : 1);
}

#define DG_DMMA(ops, mma, tile) "PATH=1," ops ",MMA=" #mma "," tile ",TM=8,TN=8"
#define DG_FFMA(ops, tile) "PATH=0," ops ",MMA=16816," tile ",WARPS_M=2,WARPS_N=4,STAGES=4,FRAG=2"
#define DG_FT "BM=128,BN=128,BK=8,TM=8,TN=8,GROUP=8,SPLITK=1"
#define DG_T884 "BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,GROUP=8,SPLITK=1"

/* The default (DMMA m8n8k4 NN, 64x64 tiles: 74 KiB of shared memory fit every sm_80+ device)
 * and, first usable wins in the runtime's fallback, the other
 * transposes on sm_80+, then FFMA64 for every device, then the Hopper prototype winners. */
static const tpl_baseline dg_baselines[] = {
    {"dmma884-nt", DG_DMMA("OPA=0,OPB=1", 884, DG_T884), "DMMA m8n8k4, op(B) = T (sm_80+)"},
    {"dmma884-tn", DG_DMMA("OPA=1,OPB=0", 884, DG_T884), "DMMA m8n8k4, op(A) = T (sm_80+)"},
    {"dmma884-tt", DG_DMMA("OPA=1,OPB=1", 884, DG_T884), "DMMA m8n8k4, both T (sm_80+)"},
    {"ffma-nn", DG_FFMA("OPA=0,OPB=0", DG_FT), "FFMA64 128x128x8, 8x8 per thread: every device"},
    {"ffma-nt", DG_FFMA("OPA=0,OPB=1", DG_FT), "FFMA64, op(B) = T: every device"},
    {"ffma-tn", DG_FFMA("OPA=1,OPB=0", DG_FT), "FFMA64, op(A) = T: every device"},
    {"ffma-tt", DG_FFMA("OPA=1,OPB=1", DG_FT), "FFMA64, both T: every device"},
    {"sm90-dmma1688", DG_DMMA("OPA=0,OPB=0", 1688, "BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,"
                                                   "STAGES=3,FRAG=2,GROUP=8,SPLITK=1,LDR=3,SA=2"),
     "DMMA m16n8k8 128x128x32, 2x4 warps, 3 stages, double-buffered fragments, running-pointer "
     "copies, 8-byte fragment loads at immediate offsets (sm_90; sweep 7 of 2026-11-23, "
     "docs/notes/dgemm.md)"},
};

/* OPA and OPB follow the problem's ops; on a DMMA split row (TMA 0) CP8 too: the operands whose
 * tight leading dimension is odd are read in place with 8-byte copies instead of packed. Other
 * rows (the large tiles, TMA) keep CP8 0. */
static void dg_fit_kind(int *cfg, const tpl_problem *p)
{
    cfg[P_OPA] = p->op_a == AT_OP_T;
    cfg[P_OPB] = p->op_b == AT_OP_T;
    int split_row = cfg[P_PATH] == 1 && !cfg[P_TMA];
#ifndef DG_WIDE_SPACE
    const dg_recipe *r = dg_recipe_of(cfg);
    split_row = split_row && r && r->split;
#endif
    if (split_row)
        cfg[P_CP8] = dg_cp8_of(p);
}

#define DG_1688 "PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,FRAG=2," \
                "TM=8,TN=8,GROUP=8,"

#define DG_1684_SPLIT "PATH=1,OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2," \
                      "STAGES=4,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=1"

/* Built-in choices (ops fitted to the problem): on sm_90 the DMMA m16n8k8 128 x 128 tiles
 * the tuner picks at 4096^3 and 8192^3 (TMA copies where the ops allow them, else the
 * running-pointer copies); where few tiles meet a deep K the m16n8k4 64 x 64 split row with
 * the split that fills a wave (tpl_wave_split: the tuner's winner at 1000 x 100 x 8192,
 * 400 x 180 x 9820, 55 x 600 x 12500 and 1000 x 54 x 2573, 2026-11-29, split 4 the largest
 * it was offered); elsewhere DMMA m8n8k4 with the same rule. Before them, a side of at most 64
 * over at most 16 wide tiles and a deep K takes the narrow m16n8k8 tile of that side (32 x 128,
 * 128 x 32) with the wave-fill split (up to 32): the tuner's winners at 22 x 1905 x 4955 TT,
 * 26 x 967 x 12722 NT and their mirrors (2026-11-29, split 8-16); not measured as a default
 * yet. On every split row fit_kind sets CP8 for an operand whose tight leading dimension is odd
 * (read in place with 8-byte copies instead of packed first: the packing copy doubled the
 * traffic of the large operand of the five calls that stayed at 0.50-0.62x; not measured yet). */
#define DG_NARROW_1688 "PATH=1,OPA=0,OPB=0,MMA=1688,BK=16,STAGES=4,FRAG=2,TM=8,TN=8,GROUP=8," \
                       "SPLITK=1,LDR=3,SA=2,"
static const tpl_default dg_defaults[] = {
    {.cc_min = 90, .cc_max = 90, .max_m = 64, .max_tiles = 16, .min_k = 1024, .fill_waves = 1,
     .config = DG_NARROW_1688 "BM=32,BN=128,WARPS_M=2,WARPS_N=4",
     .origin = "sm90: DMMA 1688 32 x 128 tiles (m <= 64), split-K filling a wave, over a deep K "
               "(not measured as a default)"},
    {.cc_min = 90, .cc_max = 90, .max_n = 64, .max_tiles = 16, .min_k = 1024, .fill_waves = 1,
     .config = DG_NARROW_1688 "BM=128,BN=32,WARPS_M=4,WARPS_N=2",
     .origin = "sm90: DMMA 1688 128 x 32 tiles (n <= 64), split-K filling a wave, over a deep K "
               "(not measured as a default)"},
    {.cc_min = 90, .cc_max = 90, .max_tiles = 32, .min_k = 512, .fill_waves = 1,
     .config = DG_1684_SPLIT,
     .origin = "sm90: DMMA 1684 64 x 64 tiles, split-K filling a wave, for few tiles over a "
               "deep K"},
    {.cc_min = 90, .cc_max = 90, .max_tiles = 132,
     .config = "PATH=1,OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,"
               "FRAG=2,TM=8,TN=8,GROUP=1,SPLITK=1,LDR=3,SA=1,MINB=3",
     .origin = "sm90: DMMA 1684 64 x 64 tiles, three blocks per SM, where 128 x 128 ones fill "
               "less than a wave (the tuner's winner at 879 x 564 x 512 and 778 x 1387 x 312, "
               "1.5x the DMMA 884 row, 2026-11-29)"},
    {.cc_min = 90, .cc_max = 90, .max_k = 64,
     .config = "PATH=1,OPA=0,OPB=0,MMA=1688,BM=64,BN=128,BK=16,WARPS_M=2,WARPS_N=2,STAGES=3,"
               "FRAG=2,TM=8,TN=8,GROUP=1,SPLITK=1,SA=2,MINB=2,TMA=1",
     .origin = "sm90: K <= 64 over many tiles, DMMA 1688 64 x 128 x 16, two blocks per SM (the "
               "tuner's winner at 11863 x 3205 x 32 TT and 2142 x 11681 x 34, 1.19-1.23x the "
               "128 x 128 x 32 row, 2026-11-29)"},
    {.cc_min = 90, .cc_max = 90, .config = DG_1688 "STAGES=2,SPLITK=1,SA=2,TMA=1",
     .origin = "sm90: the 8192^3 winner (DMMA 1688, 128 x 128 x 32, TMA copies)"},
    {.cc_min = 90, .cc_max = 90, .config = DG_1688 "STAGES=3,SPLITK=1,LDR=3,SA=2",
     .origin = "sm90: DMMA 1688 128 x 128 x 32 with running-pointer copies"},
    {.cc_min = 80, .max_tiles = 32, .min_k = 512, .fill_waves = 1,
     .config = DG_DMMA("OPA=0,OPB=0", 884, DG_T884),
     .origin = "sm80: DMMA m8n8k4 64 x 64 tiles, split-K filling a wave over a deep K"},
    {.cc_min = 80, .config = DG_DMMA("OPA=0,OPB=0", 884, DG_T884),
     .origin = "sm80: DMMA m8n8k4 64 x 64 tiles"},
};

static const tpl_problem dg_tuning[] = {
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_64F},
    {.n_dims = 3, .dims = {1024, 1024, 1024}, .dtype = AT_R_64F},
    /* a transposed operand (column-major NT's row-major form; kinds never serve each other) */
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_64F, .op_a = AT_OP_T},
};

/* tile_of: the launch geometry for the runtime's selection model; DMMA blocks are compiled
 * for MINB per SM (launch bounds), FFMA64 ones run as their threads allow. */
static int dg_tile_of(const int *cfg, tpl_tile *t)
{
    memset(t, 0, sizeof *t);
    t->bm = cfg[P_BM];
    t->bn = cfg[P_BN];
    t->splitk = cfg[P_SPLITK] > 1 ? cfg[P_SPLITK] : 1;
    t->products = 1;
    t->elem_bytes = 8;
    t->threads = dg_threads(cfg);
    if (cfg[P_PATH] == 1) {
        t->smem = dg_smem_bytes(cfg);
        t->blocks_per_sm = cfg[P_MINB] > 0 ? cfg[P_MINB] : 1;
    }
    return t->bm > 0 && t->bn > 0 && t->threads > 0;
}

const tpl_family tpl_dgemm = {
    .name = "dgemm",
    .source = "dgemm.cu",
    .fixed_options = "",
    .summary = "double-precision GEMM C = alpha*op(A)*op(B) + beta*C (row-major, op N/T, strided "
               "batches): PATH 1 FP64 tensor cores (mma.sync m8n8k4 sm_80+, m16n8k4/k8/k16 sm_90+) "
               "with a cp.async ring, PATH 0 FFMA64 register tiles (every device)",
    .n_dims = 3,
    .dim_names = {"m", "n", "k"},
    .metric_is_flops = 1,
    .hidden = 0,
    .n_params = P_COUNT,
    .params = {
        {"PATH", 2, {1, 0}, "1 DMMA (FP64 tensor cores, mma.sync + cp.async, sm_80+), 0 FFMA64 "
                            "(SIMT register tiles, every device)"},
        {"OPA", 2, {0, 1}, "op(A) as a loader layout: 0 N (m x k rows), 1 T (stored k x m)"},
        {"OPB", 2, {0, 1}, "op(B) as a loader layout: 0 N (k x n rows), 1 T (stored n x k)"},
        {"MMA", 4, {16816, 1688, 1684, 884}, "DMMA shape: 16816 m16n8k16, 1688 m16n8k8, 1684 "
                                             "m16n8k4 (sm_90+), 884 m8n8k4 (sm_80+)"},
        {"BM", 3, {128, 64, 32}, "block tile rows of C (32: narrow products only, m <= 128)"},
        {"BN", 3, {128, 64, 32}, "block tile columns of C (32: narrow products only, "
                                 "n <= 128)"},
        {"BK", 3, {16, 8, 32}, "K depth of one shared-memory stage"},
        {"WARPS_M", 2, {2, 4}, "DMMA: warps along M"},
        {"WARPS_N", 2, {4, 2}, "DMMA: warps along N"},
        {"STAGES", 4, {4, 3, 5, 2}, "DMMA: pipeline depth (ring slots)"},
        {"FRAG", 2, {2, 1}, "DMMA: 2 = the next mma step's fragments load during this step's "
                               "mmas (double-buffered registers), 1 = load, then mma"},
        {"TM", 2, {8, 4}, "FFMA64: rows of a thread's register tile"},
        {"TN", 2, {8, 4}, "FFMA64: columns of a thread's register tile"},
        {"GROUP", 2, {8, 1}, "tile swizzle: this many tile rows walked together for L2 reuse; "
                             "1 = off"},
        {"SPLITK", 6, {1, 2, 4, 8, 16, 32}, "K slices: double partials + an ordered "
                                             "(deterministic) reduce"},
        {"LDR", 5, {2, 1, 0, 3, 4}, "DMMA copy issue: 1 = per-thread copy plans made once per "
                                 "product, the next tile's copies spread over the mma steps; 2 = "
                                 "as 1, and blocks inside M and N copy with no bounds; 3 = as 2, "
                                 "those blocks through running pointers (one 64-bit add per "
                                 "copy); 4 = as 3, each address a block-uniform base plus a fixed "
                                 "32-bit per-thread offset; 0 = every stage recomputes each copy's "
                                 "bounds, all at the stage's first step",
         .omit_first = 1},
        {"UNR", 2, {0, 1}, "DMMA: 1 = the K loop unrolled over the ring's STAGES slots (constant "
                           "shared-memory addresses), 0 = ring slots at run time",
         .omit_first = 1},
        {"SA", 3, {0, 1, 2}, "DMMA: 1 = shared addresses as per-thread byte bases made once, "
                             "ring slots as byte offsets, every fragment load an immediate offset; "
                             "2 = as 1 with 8-byte loads in the mma's depth order; 0 = element "
                             "indices scaled at each load",
         .omit_first = 1},
        {"MINB", 3, {1, 2, 3}, "DMMA: blocks per SM the kernel is compiled for (launch bounds: "
                               "registers capped at 64K / (MINB x threads))",
         .omit_first = 1},
        {"PERS", 2, {0, 1}, "DMMA: 1 = about MINB blocks per SM, each walking several products, "
                            "the next product's first copies issued before this one's results are "
                            "stored; 0 = one block per product tile",
         .omit_first = 1},
        {"TMA", 3, {0, 1, 2}, "DMMA (sm_90+): 1 = each stage's tiles copied as two TMA boxes "
                              "(cp.async.bulk.tensor by one thread, an mbarrier per ring slot, "
                              "every slot in flight; the copy plans of LDR unused); 2 = as 1, the "
                              "warps release each slot through a second mbarrier instead of a "
                              "block barrier per K tile; 0 = cp.async copies by every thread",
         .omit_first = 1},
        {"CP8", 4, {0, 1, 2, 3}, "DMMA, TMA 0: bit 1 = A's cp.async copies 8 bytes each, bit 2 = "
                                 "B's (any leading dimension, read in place: no packing copy "
                                 "first); 0 = 16-byte copies (an operand with an odd leading "
                                 "dimension or a base off 16 bytes is packed first). Split rows "
                                 "only; 1..3 only for the operands whose tight leading dimension "
                                 "is odd",
         .omit_first = 1},
    },
    .valid = dg_valid,
    .tile_of = dg_tile_of,
    .valid_prefix = dg_valid_prefix,
    .accepts = dg_accepts,
    .applicable = dg_applicable,
    .deterministic = dg_deterministic,
    .run = dg_run,
    .work = dg_work,
    .work_done = NULL,
    .prepare = dg_prepare,
    .check = tpl_check_gemm,
    .tolerance = dg_tolerance,
    .target_arch = dg_target_arch,
    .default_config = DG_DMMA("OPA=0,OPB=0", 884, DG_T884),
    .n_defaults = (int)(sizeof dg_defaults / sizeof dg_defaults[0]),
    .defaults = dg_defaults,
    .fit_kind = dg_fit_kind,
    .n_baselines = (int)(sizeof dg_baselines / sizeof dg_baselines[0]),
    .baselines = dg_baselines,
    .n_tuning_problems = (int)(sizeof dg_tuning / sizeof dg_tuning[0]),
    .tuning_problems = dg_tuning,
};
