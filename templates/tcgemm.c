/* tcgemm.c: descriptor of the tensor-core GEMM family (templates/tcgemm.cu): BF16, FP16,
 * TF32 and FP8 problems, the PATH 90 (wgmma) and PATH 80 (mma.sync) kernels, their rules, inputs,
 * verification and built-in choices (the launches: tcgemm_run.c). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tcgemm.h"
#include "tpl.h"

/* ---- rejection reasons (each reachable; tests/test_tcgemm.c scans for every one) ---- */
enum {
    R_RANGE, R_TYPE, R_PATH, R_CANON_90, R_CANON_80, R_CANON_VEC_TF32, R_CANON_VEC_SPLIT,
    R9_TILE, R9_WARPGROUP, R9_VEC, R9_SMEM, R9_THREADS, R9_REGS, R9_ARCH,
    R8_ACC, R8_VEC, R8_LOADW, R8_SMEM, R8_THREADS, R8_REGS, R8_ARCH,
    R_LATTICE, R_ORDER, R_SPLIT, R_WAVE, R_OPB, R_EPI, R_FP8, R_FP8_PATH, R_FP8_LAYOUT, R_SCALE, R_BATCH,
    R_COUNT
};

const char *const tpl_tcgemm_reasons[R_COUNT] = {
    [R_RANGE] = "tile sizes, STAGES, WG, CM, CN, WARPS_M, WARPS_N, GROUP, VEC and LOADW must be "
                "positive, SPLITK at least 0 (RASTER 0 or 1)",
    [R_TYPE] = "TYPE is 0 (BF16), 1 (FP16) or 2 (TF32 math on FP32 data)",
    [R_PATH] = "PATH is 90 (wgmma + TMA, sm_90a) or 80 (mma.sync, sm_80+)",
    [R_CANON_90] = "WARPS_M, WARPS_N and LOADW are PATH 80 parameters: PATH 90 takes only their "
                   "first value",
    [R_CANON_80] = "WG, CM and CN are PATH 90 parameters: PATH 80 takes only their first value",
    [R_CANON_VEC_TF32] = "PATH 90 TF32 stores C element by element (VEC 2) or with TMA stores "
                         "(VEC 8)",
    [R_CANON_VEC_SPLIT] = "SPLITK > 1 writes FP32 partials and the reduce stores C: VEC takes only "
                          "its first value",
    [R9_TILE] = "PATH 90 tile: BK and BN multiples of one 128-byte swizzled row (64 16-bit or 32 "
                "FP32 elements), BM of 8*CN, BK of 8*CM, wgmma N (BN; TF32 OPA 0: BM) 64, 128, "
                "192 or 256, TMA boxes of at most 256 rows",
    [R9_WARPGROUP] = "PATH 90: each consumer warpgroup's share (BM/WG; TF32 OPA 0: BN/WG) must be a "
                     "multiple of 64 rows with at most 128 FP32 accumulators per thread, WG 1..3, "
                     "a cluster of at most 8",
    [R9_VEC] = "PATH 90 VEC is 1 (scalar), 2 (pairs) or 8 (TMA-store epilogue; TF32: 2 or 8, 8 "
                "with 64 columns per warpgroup, no split-K and OPA 0)",
    [R9_SMEM] = "PATH 90: shared memory (stages, C staging, barriers) above the device's "
                "per-block limit",
    [R9_THREADS] = "PATH 90: (WG + 1) x 128 threads above the device's per-block limit",
    [R9_REGS] = "PATH 90: the setmaxnreg split (producer 40, consumers 232 or 240 registers) needs "
                "more registers than a block has",
    [R9_ARCH] = "PATH 90 (wgmma, TMA, clusters) runs only on sm_90 devices (cc 9.0)",
    [R8_ACC] = "PATH 80: a warp tile above 64 x 64 (more than 128 accumulators per thread) "
               "spills; BM and BN must split into 16 x 16 warp tiles",
    [R8_VEC] = "PATH 80 VEC is 1, 2, 4 or 8, and 8 needs 16-bit C",
    [R8_LOADW] = "PATH 80 LOADW is 16, 8, 4 or 2 bytes, and FP32 loads 16 or 4",
    [R8_SMEM] = "PATH 80: shared memory (stages or staged epilogue) above the device's per-block "
                "limit",
    [R8_THREADS] = "PATH 80: WARPS_M x WARPS_N x 32 threads above the device's per-block limit",
    [R8_REGS] = "PATH 80: about (accumulators + fragments + 40) registers per thread exceed 255 "
                "or the registers of a block",
    [R8_ARCH] = "PATH 80 (bf16 mma.sync, cp.async) needs an sm_80+ device",
    [R_LATTICE] = "tile, pipeline and epilogue not in the tuned lattice (hand-picked around the "
                  "measured winners: docs/notes/tcgemm.md, docs/notes/tcgemm_sm80.md)",
    [R_ORDER] = "tile order: PATH 90 RASTER 0/1 with GROUP 8/16, or GROUP 1 with RASTER 0; "
                "PATH 80 GROUP 8 with RASTER 0/1; split-K RASTER 0 with GROUP 8",
    [R_SPLIT] = "SPLITK 2, 4, 8 and 16 only on the lattice's 128 x 128 direct-epilogue tiles",
    [R_WAVE] = "SPLITK 0 (the wave-fill split: whole waves data-parallel, the last tiles split by K "
               "and combined in the kernel) is PATH 90 without FP8 operands, BATCH or clusters, "
               "on the lattice's wave-fill rows, tile order RASTER 0 with GROUP 8",
    [R_OPB] = "OPA and OPB are 0 or 1; 1 (an operand read as stored, no transposing pack) exists "
              "on PATH 80, PATH 90 BF16/FP16 and PATH 90 TF32 (OPB 1, or OPA 1 with OPB 1: an "
              "op-T A beside an op-N B is packed)",
    [R_EPI] = "EPI is bias * 4 + activation: bias 0 none, 1 per row, 2 per column; activation 0 "
              "none, 1 ReLU, 2 GELU (tanh), 3 GELU (erf)",
    [R_FP8] = "FP8 is 0 (none), 1 (E4M3 x E4M3), 2 (E4M3 x E5M2) or 3 (E5M2 x E4M3), and FP8 "
              "products have no fused epilogue (EPI 0)",
    [R_FP8_PATH] = "FP8 operands are PATH 90 only: wgmma's FP8 form is Hopper's (sm_90a); PATH 80's "
                   "mma.sync has none before sm_89 and is not built for it",
    [R_FP8_LAYOUT] = "FP8 wgmma reads both operands K-major: OPA 0 and OPB 1 (other layouts are "
                     "packed first), and an FP32 C is stored directly (VEC 1 or 2)",
    [R_SCALE] = "SCALE is 0 (per-tensor), 1 or 2 (block scales, one or two promotion "
                "buffers: FP8, BK 128 = one scale block, BN 64 or 128, at most 64 "
                "accumulators per thread; SCALE 1 (N-halves) and 3 (N-quarters, A in registers) "
                "also BN 256, 64 rows per warpgroup)",
    [R_BATCH] = "BATCH is 0 or 1; 1 (a strided batch's products in one launch, 3-D tensor maps) is "
                "PATH 90 without split-K or FP8 operands, tile order GROUP 8 (RASTER 0 or 1)",
};
const int tpl_tcgemm_n_reasons = R_COUNT;

/* Writes reason r into why and returns 0 (tpl_reject: no formatting). */
static int tc_reject(int r, char *why, size_t len)
{
    return tpl_reject(why, len, tpl_tcgemm_reasons[r]);
}

int tc_esz(const int *c)
{
    return c[P_FP8] ? 1 : c[P_TYPE] == 2 ? 4 : 2;
}

int tc_csz(const int *c)
{
    return c[P_TYPE] == 2 ? 4 : 2;
}

int tc_tf32(const int *c)
{
    return c[P_TYPE] == 2 && !c[P_FP8];
}

/* ---- PATH 90 geometry (as in tcgemm.cu's T9_ macros) ---- */

/* Dynamic shared memory of tcgemm: STAGES ring, C staging (VEC 8: 16-bit the whole tile, TF32
 * two 32 x 64 FP32 chunks per consumer warpgroup, tcgemm.cu's T9_TES), 1 KB alignment slack,
 * full/empty barriers. */
long long t9_smem_bytes(const int *c)
{
    long long stage = (long long)(c[P_BM] * c[P_BK] + c[P_BK] * c[P_BN]) * tc_esz(c);
    long long cst = c[P_VEC] != 8 ? 0
                  : c[P_TYPE] != 2 ? (long long)c[P_BM] * c[P_BN] * 2
                  : tc_tf32(c) ? c[P_WG] * 2LL * 32 * 64 * 4 : 0;
    return c[P_STAGES] * stage + cst + 1024 + 2LL * c[P_STAGES] * 8;
}

/* Consumer registers per thread after setmaxnreg (tcgemm.cu): 240, 232, 152 for WG 1, 2, 3. */
static int t9_consumer_regs(int wg)
{
    return wg == 1 ? 240 : wg == 2 ? 232 : 152;
}

/* PATH 90 legality (tcgemm.cu's #error checks and bench/tc/t9_host.h's t9_reject) and the
 * device's limits; 0 with the reason. */
static int t9_valid(const int *c, const at_device_info *dev, char *why, size_t len)
{
    int tf32 = tc_tf32(c), boxe = 128 / tc_esz(c);
    /* TF32 of a K-major A (OPA 0) computes D^T = B^T A^T: wgmma N is BM, the warpgroups split
     * BN; OPA 1 (M-major A, K-major B) computes D = A B like the 16-bit kernels */
    int tr = tf32 && !c[P_OPA];
    int wn = tr ? c[P_BM] : c[P_BN];
    int wp = (tr ? c[P_BN] : c[P_BM]) / c[P_WG];
    int bm = c[P_BM], bn = c[P_BN], bk = c[P_BK], cm = c[P_CM], cn = c[P_CN];
    /* B's boxes span BN only N-major (OPB 0); K-major (OPB 1) their rows are BN's */
    if (bk % boxe || (!c[P_OPB] && bn % boxe) || bm % (8 * cn) || bk % (8 * cm) || wn % 64 || wn > 256 ||
        bm / cn > 256 || bk / cm > 256)
        return tc_reject(R9_TILE, why, len);
    if (c[P_WG] > 3 || (tr ? c[P_BN] : c[P_BM]) % c[P_WG] || wp % 64 ||
        (wp / 64) * (wn / 2) > 128 || cm * cn > 8 || c[P_STAGES] < 2)
        return tc_reject(R9_WARPGROUP, why, len);
    if (!tf32 && c[P_VEC] != 1 && c[P_VEC] != 2 && c[P_VEC] != 8)
        return tc_reject(R9_VEC, why, len);
    if (!tf32 && c[P_VEC] == 8 && (c[P_SPLITK] > 1 || bn % 64))
        return tc_reject(R9_VEC, why, len);
    /* TF32 VEC 8 (T9_TES, the 256x128 lattice rows): 64 C columns per
     * consumer warpgroup, no split-K, the D^T form (OPA 0) */
    if (tf32 && c[P_VEC] != 2 &&
        (c[P_VEC] != 8 || c[P_SPLITK] > 1 || wp != 64 || bm % 32 || c[P_OPA]))
        return tc_reject(R9_VEC, why, len);
    long long smem_limit = dev ? dev->smem_per_block_optin : 227 * 1024;
    int threads = (c[P_WG] + 1) * 128;
    if (t9_smem_bytes(c) > smem_limit)
        return tc_reject(R9_SMEM, why, len);
    if (threads > (dev ? dev->max_threads_per_block : 1024))
        return tc_reject(R9_THREADS, why, len);
    if (128LL * 40 + 128LL * c[P_WG] * t9_consumer_regs(c[P_WG]) >
        (dev ? dev->regs_per_block : 65536))
        return tc_reject(R9_REGS, why, len);
    if (dev && (dev->cc_major != 9 || dev->cc_minor != 0))
        return tc_reject(R9_ARCH, why, len);
    return 1;
}

/* ---- PATH 80 geometry (as in tcgemm.cu's T8_ macros) ---- */

/* Dynamic shared memory of t8_gemm: the padded stage ring or the staged epilogue, the larger.
 * Each operand's stage tile keeps its stored layout (T8_SA, T8_SB): a K-major row (A of OPA 0,
 * B of OPB 1) is padded by 16 bytes, an M- or N-major row (A of OPA 1, B of OPB 0) by 8
 * elements. */
long long t8_smem_bytes(const int *c)
{
    long long esz = tc_esz(c), bm = c[P_BM], bn = c[P_BN], bk = c[P_BK];
    long long a_elems = c[P_OPA] ? bk * (bm + 8) : bm * (bk + 16 / esz);
    long long b_elems = c[P_OPB] ? bn * (bk + 16 / esz) : bk * (bn + 8);
    long long pipe = (long long)c[P_STAGES] * (a_elems + b_elems) * esz;
    long long epi = c[P_VEC] >= 4 && c[P_SPLITK] == 1 ? (long long)c[P_BM] * (c[P_BN] + 8) * 4 : 0;
    return pipe > epi ? pipe : epi;
}

/* PATH 80 legality (tcgemm.cu's static_asserts, bench/tc80/t8_host.c's t8_check_cfg) and the
 * device's limits; 0 with the reason. */
static int t8_valid(const int *c, const at_device_info *dev, char *why, size_t len)
{
    int tf32 = tc_tf32(c), wm = c[P_WARPS_M], wn = c[P_WARPS_N];
    int ks = tf32 ? 8 : 16;
    if (c[P_BM] % (16 * wm) || c[P_BN] % (16 * wn) || c[P_BK] % ks || c[P_BK] > 64 ||
        wm * wn > 16 || (c[P_BM] / wm) * (c[P_BN] / wn) > 64 * 64 || c[P_STAGES] < 2 ||
        c[P_STAGES] > 6)
        return tc_reject(R8_ACC, why, len);
    int vec = c[P_VEC], lw = c[P_LOADW];
    if ((vec != 1 && vec != 2 && vec != 4 && vec != 8) || (vec == 8 && tf32))
        return tc_reject(R8_VEC, why, len);
    if ((lw != 16 && lw != 8 && lw != 4 && lw != 2) || (tf32 && (lw == 8 || lw == 2)))
        return tc_reject(R8_LOADW, why, len);
    if (t8_smem_bytes(c) > (dev ? dev->smem_per_block_optin : 227 * 1024))
        return tc_reject(R8_SMEM, why, len);
    int threads = 32 * wm * wn;
    if (threads > (dev ? dev->max_threads_per_block : 1024))
        return tc_reject(R8_THREADS, why, len);
    /* accumulators + double-buffered fragments + ~40 for addresses (notes: ~225 for 64x64) */
    int mi = c[P_BM] / wm / 16, ni = c[P_BN] / wn / 8;
    int regs = (c[P_BM] / wm) * (c[P_BN] / wn) / 32 + 2 * (mi * 4 + ni * 2) + 40;
    if (regs > 255 || (long long)regs * threads > (dev ? dev->regs_per_block : 65536))
        return tc_reject(R8_REGS, why, len);
    if (dev && dev->cc_major < 8)
        return tc_reject(R8_ARCH, why, len);
    return 1;
}

/* ---- the tuned lattice ---- */

/* One tile/pipeline/epilogue recipe: PATH 90 rows name WARPS_M, WARPS_N and LOADW at their
 * canonical values, PATH 80 rows WG, CM and CN; `split` rows also take SPLITK 2..16 (then
 * with VEC at its canonical 2). Sources: docs/notes/tcgemm.md "Final" (16-bit 128x256x64 3
 * stages VEC 8; 128x192 4 stages for ragged shapes; CM=2 with VEC 2; TF32 256x128x32 4 stages,
 * CN=2) and docs/notes/tcgemm_sm80.md (BF16 128x128x32 2x2 VEC 8, FP16 128x256x64 2x4, TF32
 * 128x128x16 VEC 4; the narrow-load rows need no pack at all and fit the 99 KiB of sm_86/89). */
typedef struct tc_recipe {
    int kind, path, bm, bn, bk, stages, wg, cm, cn, warps_m, warps_n, vec, loadw, split;
    int wave;   /* 1: also SPLITK 0, the wave-fill split (PATH 90, with the row's VEC) */
} tc_recipe;
/* tc_recipe.kind: 16-bit, TF32, FP8 operands (per-tensor scales), FP8 with block scales */
enum { TC_K16, TC_KTF32, TC_KFP8, TC_KFP8B };

/* The recipe kind of a configuration (TYPE, FP8 and SCALE). */
static int tc_kind(const int *c)
{
    return c[P_FP8] ? (c[P_SCALE] ? TC_KFP8B : TC_KFP8) : c[P_TYPE] == 2 ? TC_KTF32 : TC_K16;
}

static const tc_recipe tc_lattice[] = {
    /* PATH 90, BF16/FP16 */
    /* wave: the 4096^3 winner, 128 x 128 (deep K over few tiles) and the CM 2 cluster row */
    {0, 90, 128, 256, 64, 3, 2, 1, 1, 2, 2, 8, 16, 0, 1},
    {0, 90, 128, 192, 64, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {0, 90, 128, 256, 64, 4, 2, 2, 1, 2, 2, 2, 16, 0, 0},
    {0, 90, 128, 256, 64, 4, 2, 1, 1, 2, 2, 2, 16, 0, 0},
    {0, 90, 128, 128, 64, 4, 2, 1, 1, 2, 2, 8, 16, 0, 1},
    {0, 90, 128, 128, 64, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    /* 64-row tiles of one consumer warpgroup for m <= 64 (inference-like calls): the 128-row
     * tiles compute at least half padding there */
    {0, 90, 64, 128, 64, 4, 1, 1, 1, 2, 2, 2, 16, 1, 0},
    {0, 90, 64, 256, 64, 4, 1, 1, 1, 2, 2, 2, 16, 1, 0},
    /* 64-column tiles (wgmma N 64) for n <= 64 */
    {0, 90, 128, 64, 64, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    /* PATH 90, TF32: VEC 2 stores C element by element; VEC 8 stages it in shared memory
     * and writes it with TMA stores (T9_TES; notes_tcgemm 14: 4096^3 1.042x against 1.009x,
     * 16384^2x512 1.092x against 1.004x; beta != 0 or unaligned C store directly) */
    {1, 90, 256, 128, 32, 4, 2, 1, 1, 2, 2, 2, 16, 0, 0},
    {1, 90, 256, 128, 32, 4, 2, 1, 2, 2, 2, 2, 16, 0, 0},
    {1, 90, 256, 128, 64, 2, 2, 1, 1, 2, 2, 2, 16, 0, 0},
    {1, 90, 256, 128, 32, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {1, 90, 256, 128, 32, 4, 2, 1, 2, 2, 2, 8, 16, 0, 0},
    {1, 90, 256, 128, 64, 2, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {1, 90, 128, 256, 32, 4, 2, 1, 1, 2, 2, 2, 16, 0, 0},
    {1, 90, 128, 128, 32, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    /* TF32 (wgmma N is BM) for m <= 64 (64 x 128, two warpgroups of 64 columns) and n <= 64
     * (128 x 64, one warpgroup) */
    {1, 90, 64, 128, 32, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    {1, 90, 128, 64, 32, 4, 1, 1, 1, 2, 2, 2, 16, 1, 0},
    /* PATH 80, BF16/FP16 */
    {0, 80, 128, 128, 32, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {0, 80, 128, 256, 64, 3, 2, 1, 1, 2, 4, 8, 16, 0, 0},
    {0, 80, 128, 128, 32, 4, 2, 1, 1, 2, 4, 2, 2, 0, 0},
    {0, 80, 128, 128, 32, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    /* 64 x 64 (four warps of 32 x 32) for batches of small products, where a 128 x 128 tile
     * computes mostly padding */
    {0, 80, 64, 64, 32, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    /* PATH 80, TF32 */
    {1, 80, 128, 128, 16, 4, 2, 1, 1, 2, 2, 4, 16, 0, 0},
    {1, 80, 128, 128, 32, 3, 2, 1, 1, 2, 2, 4, 16, 0, 0},
    {1, 80, 128, 128, 16, 4, 2, 1, 1, 2, 4, 2, 4, 0, 0},
    {1, 80, 128, 128, 16, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    {1, 80, 64, 64, 16, 4, 2, 1, 1, 2, 2, 4, 16, 0, 0},
    /* PATH 90, FP8 (BK 128: one 128-byte swizzled row of K): the 16-bit rows' tiles at the same
     * bytes per stage (48 KB for 128 x 256), 256 x 128 (two m64 wgmmas per warpgroup) beside
     * them; VEC 8 for a 16-bit C, VEC 2 for an FP32 C (direct stores) */
    {2, 90, 128, 256, 128, 3, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {2, 90, 128, 256, 128, 4, 2, 1, 1, 2, 2, 2, 16, 0, 0},
    {2, 90, 128, 256, 128, 4, 2, 2, 1, 2, 2, 2, 16, 0, 0},
    {2, 90, 128, 192, 128, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {2, 90, 256, 128, 128, 3, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {2, 90, 128, 128, 128, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {2, 90, 128, 128, 128, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    /* PATH 90, FP8 with block scales (SCALE 1 and 2): each warpgroup keeps its FP32 accumulator
     * and one or two promotion buffers of the same size (tcgemm.cu), so one m64 x BN wgmma per
     * warpgroup, BN 128 (one scale block of B per tile) or 64 for small outputs */
    {3, 90, 128, 128, 128, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {3, 90, 128, 128, 128, 4, 2, 1, 1, 2, 2, 2, 16, 1, 0},
    {3, 90, 128, 128, 128, 4, 2, 2, 1, 2, 2, 2, 16, 0, 0},
    {3, 90, 128, 64, 128, 4, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    /* per-tensor FP8's tile, 128 x 256 (SCALE 1 only: two N-halves of 128 through one promotion
     * buffer, tcgemm.cu's T9_NH): 3 stages with TMA stores (16-bit C; 208 KB with the staging),
     * 4 stages with direct paired stores */
    {3, 90, 128, 256, 128, 3, 2, 1, 1, 2, 2, 8, 16, 0, 0},
    {3, 90, 128, 256, 128, 4, 2, 1, 1, 2, 2, 2, 16, 0, 0},
};
#define TC_LATTICE_N ((int)(sizeof tc_lattice / sizeof tc_lattice[0]))

/* The lattice row of c, or NULL: with SPLITK 1 the row of its tile, pipeline and VEC; with
 * SPLITK > 1 (VEC unused) a split row of its tile and pipeline, else any row of them; with
 * SPLITK 0 a wave row of its tile, pipeline and VEC, else its row. */
static const tc_recipe *tc_recipe_of(const int *c)
{
    const tc_recipe *found = NULL;
    for (int i = 0; i < TC_LATTICE_N; i++) {
        const tc_recipe *r = &tc_lattice[i];
        if (r->kind == tc_kind(c) && r->path == c[P_PATH] && r->bm == c[P_BM] &&
            r->bn == c[P_BN] && r->bk == c[P_BK] && r->stages == c[P_STAGES] &&
            r->wg == c[P_WG] && r->cm == c[P_CM] && r->cn == c[P_CN] &&
            r->warps_m == c[P_WARPS_M] && r->warps_n == c[P_WARPS_N] && r->loadw == c[P_LOADW] &&
            (c[P_SPLITK] > 1 || r->vec == c[P_VEC])) {
            if (c[P_SPLITK] == 1 || (c[P_SPLITK] > 1 && r->split) || (c[P_SPLITK] == 0 && r->wave))
                return r;
            found = r;
        }
    }
    return found;
}

/* Lattice membership, tile order and split-K rules; 0 with the reason. */
static int tc_lattice_ok(const int *c, char *why, size_t len)
{
    const tc_recipe *r = tc_recipe_of(c);
    if (!r)
        return tc_reject(R_LATTICE, why, len);
    int raster = c[P_RASTER], group = c[P_GROUP], split = c[P_SPLITK] > 1;
    int order_ok;
    if (split || c[P_SPLITK] == 0)
        order_ok = raster == 0 && group == 8;
    else if (c[P_PATH] == 90)
        order_ok = group == 8 || group == 16 || (group == 1 && raster == 0);
    else
        order_ok = group == 8;
    if (!order_ok)
        return tc_reject(c[P_SPLITK] == 0 ? R_WAVE : R_ORDER, why, len);
    if (c[P_SPLITK] == 0 && !r->wave)
        return tc_reject(R_WAVE, why, len);
    if (split && (!r->split || c[P_SPLITK] > 16 || (c[P_SPLITK] & (c[P_SPLITK] - 1))))
        return tc_reject(R_SPLIT, why, len);
    return 1;
}

extern const tpl_family tpl_tcgemm;

/* 1 if parameter p of cfg is at its canonical (first) value. */
static int tc_canonical(const int *cfg, int p)
{
    return cfg[p] == tpl_tcgemm.params[p].values[0];
}

static int tc_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    for (int p = P_BM; p <= P_LOADW; p++)
        if (p != P_RASTER && cfg[p] < (p == P_SPLITK ? 0 : 1))
            return tc_reject(R_RANGE, why, len);
    if (cfg[P_RASTER] != 0 && cfg[P_RASTER] != 1)
        return tc_reject(R_RANGE, why, len);
    if (cfg[P_TYPE] < 0 || cfg[P_TYPE] > 2)
        return tc_reject(R_TYPE, why, len);
    if (cfg[P_PATH] != 90 && cfg[P_PATH] != 80)
        return tc_reject(R_PATH, why, len);
    if (cfg[P_EPI] < 0 || cfg[P_EPI] >= TPL_N_EPI)
        return tc_reject(R_EPI, why, len);
    if (cfg[P_FP8] < 0 || cfg[P_FP8] > 3 || (cfg[P_FP8] && cfg[P_EPI]))
        return tc_reject(R_FP8, why, len);
    if (cfg[P_FP8] && cfg[P_PATH] != 90)
        return tc_reject(R_FP8_PATH, why, len);
    if (cfg[P_FP8] && (cfg[P_OPA] != 0 || cfg[P_OPB] != 1 ||
                       (cfg[P_TYPE] == 2 && cfg[P_VEC] != 1 && cfg[P_VEC] != 2)))
        return tc_reject(R_FP8_LAYOUT, why, len);
    /* block scales: the accumulator d and SCALE promotion buffers, (BM / WG / 64) x BN / 2 FP32
     * registers each (tcgemm.cu's SCALE): at most 128 with one buffer, 192 with two; SCALE 1 at
     * BN 256 (tcgemm.cu's T9_NH): d (128) and one buffer of an N-half of 128 columns (64), 192,
     * with one m64 wgmma per warpgroup; SCALE 3 is that tile with the K-block's A fragments in 16
     * registers and its wgmmas in four N-quarters through two buffers of 32 (tcgemm.cu's T9_AREG:
     * 128 + 64 + 16), BN 256 only */
    if (cfg[P_SCALE] < 0 || cfg[P_SCALE] > 3 ||
        (cfg[P_SCALE] && (!cfg[P_FP8] || cfg[P_BK] != 128 || cfg[P_WG] < 1 ||
                          cfg[P_BM] % cfg[P_WG] ||
                          (cfg[P_BN] == 256
                               ? (cfg[P_SCALE] != 1 && cfg[P_SCALE] != 3) ||
                                     cfg[P_BM] / cfg[P_WG] != 64
                               : cfg[P_SCALE] == 3 || (cfg[P_BN] != 64 && cfg[P_BN] != 128) ||
                                     (cfg[P_SCALE] + 1) * (cfg[P_BM] / cfg[P_WG] / 64) *
                                             (cfg[P_BN] / 2) >
                                         64 * (cfg[P_SCALE] + 1)))))
        return tc_reject(R_SCALE, why, len);
    /* BATCH 1: PATH 90's products in one launch (the units over tiles x products): one K slice
     * per unit (split-K batches stay per product, as on PATH 80), FP8 batches per product; the
     * tile orders GROUP 8 only (a small product has a few tiles: the order matters little, and
     * the batched space stays a fraction of the single one) */
    if (cfg[P_BATCH] < 0 || cfg[P_BATCH] > 1 ||
        (cfg[P_BATCH] && (cfg[P_PATH] != 90 || cfg[P_SPLITK] != 1 || cfg[P_FP8] ||
                          cfg[P_GROUP] != 8)))
        return tc_reject(R_BATCH, why, len);
    /* PATH 90 TF32: OPB 1 (B read K-major into the register fragments) and OPA 1 with OPB 1
     * (the D = A B form); an M-major A beside an N-major B has no K-major operand for wgmma's
     * shared-memory side */
    if ((cfg[P_OPB] != 0 || cfg[P_OPA] != 0) &&
        (cfg[P_OPB] > 1 || cfg[P_OPA] > 1 || cfg[P_OPB] < 0 || cfg[P_OPA] < 0 ||
         (cfg[P_PATH] == 90 && tc_tf32(cfg) && cfg[P_OPA] && !cfg[P_OPB])))
        return tc_reject(R_OPB, why, len);
    int p90 = cfg[P_PATH] == 90;
    /* SPLITK 0: the wave-fill split of PATH 90 (tcgemm.cu), one product per launch, no FP8; no
     * cluster row carries it (on an H200 the CM 2 row's pieces summed wrong:
     * tcgemm_gpu_wave_fill_split, 2026-11-29) */
    if (cfg[P_SPLITK] == 0 && (!p90 || cfg[P_FP8] || cfg[P_BATCH]))
        return tc_reject(R_WAVE, why, len);
    if (p90 && (!tc_canonical(cfg, P_WARPS_M) || !tc_canonical(cfg, P_WARPS_N) ||
                !tc_canonical(cfg, P_LOADW)))
        return tc_reject(R_CANON_90, why, len);
    if (!p90 && (!tc_canonical(cfg, P_WG) || !tc_canonical(cfg, P_CM) ||
                 !tc_canonical(cfg, P_CN)))
        return tc_reject(R_CANON_80, why, len);
    if (p90 && tc_tf32(cfg) && cfg[P_VEC] != 2 && cfg[P_VEC] != 8)
        return tc_reject(R_CANON_VEC_TF32, why, len);
    if (cfg[P_SPLITK] > 1 && !tc_canonical(cfg, P_VEC))
        return tc_reject(R_CANON_VEC_SPLIT, why, len);
    if (p90 ? !t9_valid(cfg, dev, why, len) : !t8_valid(cfg, dev, why, len))
        return 0;
    return tc_lattice_ok(cfg, why, len);
}

/* valid_prefix: the prefix matches some lattice row in the parameters it fixes (every valid
 * configuration is on a row: tc_lattice_ok), and once all but EPI, FP8, SCALE and BATCH are
 * fixed, the configuration at EPI 0 (or the EPI fixed) is valid with some FP8, SCALE and BATCH
 * values (EPI never changes the validity of FP8 0: every such kernel computes every epilogue;
 * FP8 1..3 take EPI 0 only). So the walk visits the lattice's few hundred nodes instead of the
 * raw space. */
static int tc_valid_prefix(const int *cfg, int n_fixed, const at_device_info *dev)
{
    if (n_fixed >= P_EPI) {
        /* EPI, FP8 and SCALE last: some FP8 and SCALE with EPI 0 (or those fixed) are valid */
        int c[TPL_MAX_PARAMS];
        memcpy(c, cfg, sizeof(int) * P_COUNT);
        if (n_fixed <= P_EPI)
            c[P_EPI] = 0;
        int f_lo = n_fixed > P_FP8 ? cfg[P_FP8] : 0, f_hi = n_fixed > P_FP8 ? cfg[P_FP8] : 3;
        int s_lo = n_fixed > P_SCALE ? cfg[P_SCALE] : 0, s_hi = n_fixed > P_SCALE ? cfg[P_SCALE] : 3;
        int b_lo = n_fixed > P_BATCH ? cfg[P_BATCH] : 0, b_hi = n_fixed > P_BATCH ? cfg[P_BATCH] : 1;
        for (int f = f_lo; f <= f_hi; f++)
            for (int sc = s_lo; sc <= s_hi; sc++)
                for (int b = b_lo; b <= b_hi; b++) {
                    c[P_FP8] = f;
                    c[P_SCALE] = sc;
                    c[P_BATCH] = b;
                    if (tc_valid(c, dev, NULL, 0))
                        return 1;
                }
        return 0;
    }
    for (int i = 0; i < TC_LATTICE_N; i++) {
        const tc_recipe *r = &tc_lattice[i];
        const int fields[][2] = {
            {P_PATH, r->path}, {P_BM, r->bm}, {P_BN, r->bn}, {P_BK, r->bk},
            {P_STAGES, r->stages}, {P_WG, r->wg}, {P_CM, r->cm}, {P_CN, r->cn},
            {P_WARPS_M, r->warps_m}, {P_WARPS_N, r->warps_n}, {P_LOADW, r->loadw},
        };
        /* FP8 comes last: an FP8 row fits every TYPE (C's type there) */
        int match = n_fixed <= P_TYPE || r->kind == TC_KFP8 || r->kind == TC_KFP8B ||
                    r->kind == (cfg[P_TYPE] == 2 ? TC_KTF32 : TC_K16);
        for (size_t f = 0; match && f < sizeof fields / sizeof fields[0]; f++)
            match = n_fixed <= fields[f][0] || cfg[fields[f][0]] == fields[f][1];
        /* SPLITK 0 only on wave rows; VEC counts with SPLITK 1 and 0 only (tc_recipe_of);
         * SPLITK comes before VEC */
        if (match && n_fixed > P_SPLITK && cfg[P_SPLITK] == 0)
            match = r->wave;
        if (match && n_fixed > P_VEC && cfg[P_SPLITK] <= 1)
            match = cfg[P_VEC] == r->vec;
        if (match)
            return 1;
    }
    return 0;
}

/* 1 if cfg reads an op-T operand as stored (OPA / OPB from the problem, fit_kind) rather than
 * through the transposing pack: every PATH 80 kernel and the PATH 90 BF16/FP16 ones (not FP8,
 * whose layout is fixed: OPA 0, OPB 1). PATH 90 TF32 has both: OPA / OPB 0 packs an op-T
 * operand and serves every op pair, OPB 1 (and OPA 1 with it) reads it as stored; the tuner
 * measures both, the built-in choices pack (docs/notes/tcgemm.md 19). */
static int tc_reads_op_t(const int *cfg)
{
    return !cfg[P_FP8] && (cfg[P_PATH] == 80 || (cfg[P_PATH] == 90 && cfg[P_TYPE] != 2));
}

/* The TYPE of a problem's kind, -1 if the family does not compute it (any ops, batch and
 * epilogue; row-major, the canonical form of tpl.h). */
int tc_type_of(const tpl_problem *p)
{
    if ((unsigned)p->op_a > AT_OP_T || (unsigned)p->op_b > AT_OP_T ||
        p->order != AT_ROW_MAJOR || p->batch < 0 || p->epilogue < 0 ||
        p->epilogue >= TPL_N_EPI)
        return -1;
    if (tpl_math_fp8(p->math))      /* FP8 operands: TYPE is C's type, no epilogue; block scales */
        return p->epilogue != 0 || (tpl_math_fp8_block(p->math) && p->batch > 1) ? -1   /* 1 product */
             : p->dtype == AT_R_16BF ? 0 : p->dtype == AT_R_16F ? 1 : p->dtype == AT_R_32F ? 2 : -1;
    if (p->dtype == AT_R_16BF && p->math == AT_MATH_DEFAULT)
        return 0;
    if (p->dtype == AT_R_16F && p->math == AT_MATH_DEFAULT)
        return 1;
    if (p->dtype == AT_R_32F && p->math == AT_MATH_TF32)
        return 2;
    return -1;
}

/* BF16 or FP16 with default math, or FP32 with TF32 math; row-major, ops N or T, any batch,
 * any fused epilogue (EPI); FP8 maths with a BF16, FP16 or FP32 C and no epilogue. */
static int tc_accepts(const tpl_problem *p)
{
    return p->n_dims == 3 && tc_type_of(p) >= 0;
}

static int tc_applicable(const int *cfg, const tpl_problem *p)
{
    if (!tpl_family_accepts(&tpl_tcgemm, p) || tc_type_of(p) != cfg[P_TYPE] ||
        cfg[P_FP8] != tpl_math_fp8(p->math) ||  /* FP8 operands: their own pair only */
        (cfg[P_SCALE] != 0) != tpl_math_fp8_block(p->math) ||  /* and their own scaling */
        cfg[P_EPI] != p->epilogue ||    /* a kernel computes its own epilogue only */
        (cfg[P_BATCH] && tpl_problem_batch(p) < 2))     /* BATCH 1: batches only */
        return 0;
    /* FP8 kernels read A m x k and B n x k (OPA 0, OPB 1) and serve every op pair: an operand
     * in another layout is packed (tc_run) */
    if (!cfg[P_FP8] &&
        ((cfg[P_OPB] && p->op_b != AT_OP_T) ||  /* OPB 1 reads B as the n x k of op T */
         (cfg[P_OPA] && p->op_a != AT_OP_T)))   /* OPA 1 reads A as the k x m of op T */
        return 0;
    /* PATH 80 and PATH 90 BF16/FP16 read an op-T operand as stored: their transposing pack is
     * never the better kernel, so it serves no problem (each op pair's space stays the NN
     * space's size) */
    if (tc_reads_op_t(cfg) &&
        (cfg[P_OPB] != (p->op_b == AT_OP_T) || cfg[P_OPA] != (p->op_a == AT_OP_T)))
        return 0;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    if (m < 1 || n < 1 || k < 1 || m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return 0;
    long long tiles = tpl_cdiv(m, cfg[P_BM]) * tpl_cdiv(n, cfg[P_BN]);
    if (tiles > 0x7fffffff)
        return 0;
    int sk = cfg[P_SPLITK];
    /* Split-K pays for its reduction only where the tiles leave most SMs idle (at most
     * TC_SPLIT_MAX_TILES tiles' area of 128 x 128, whatever the tile) and each slice keeps at
     * least 4 K tiles of work. */
    if (sk > 1 && (tiles * cfg[P_BM] * cfg[P_BN] > TC_SPLIT_MAX_TILES * 128LL * 128 ||
                   k < 4LL * sk * cfg[P_BK] ||
                   (long long)sk * m * n * 4 > TC_MAX_WORKSPACE))
        return 0;
    /* The wave-fill split serves only problems it splits on an H200's SMs (tpl_device_sms(NULL):
     * elsewhere it runs the SPLITK 1 kernel's schedule, a second measurement of the same work) */
    if (sk == 0) {
        int cl = cfg[P_CM] * cfg[P_CN];
        if (!tc_wave_fill_pays(tpl_cdiv(tpl_cdiv(m, cfg[P_BM]), cfg[P_CM]) *
                                   tpl_cdiv(tpl_cdiv(n, cfg[P_BN]), cfg[P_CN]),
                               tpl_cdiv(k, cfg[P_BK]), tpl_device_sms(NULL) / cl))
            return 0;
    }
    return 1;
}

static int tc_deterministic(const int *cfg)
{
    (void)cfg;      /* no float atomics: split-K partials are summed in slice order, SPLITK 0's
                     * pieces in piece order by whichever arrives last */
    return 1;
}

/* PATH 90 -> sm_90a on sm_90 (wgmma, setmaxnreg), nothing elsewhere; PATH 80 -> arch. */
static const char *tc_target_arch(const int *cfg, const char *arch)
{
    if (cfg[P_PATH] != 90)
        return arch;
    return strcmp(arch, "sm_90") == 0 ? "sm_90a" : NULL;
}

static void tc_work(const tpl_problem *p, double *flops, double *bytes)
{
    double m = (double)p->dims[0], n = (double)p->dims[1], k = (double)p->dims[2];
    double es = p->dtype == AT_R_32F ? 4.0 : 2.0, batch = (double)tpl_problem_batch(p);
    double ei = tpl_math_fp8(p->math) ? 1.0 : es;   /* FP8 operands: one byte */
    *flops = 2.0 * m * n * k * batch;
    *bytes = (ei * (m * k + k * n) + es * m * n) * batch;  /* A, B read, C written (beta 0) once */
}

/* The per-tensor scales of an FP8 problem's verification (tc_prepare). */
#define TC_FP8_SCALE_A 0.75f
#define TC_FP8_SCALE_B 1.25f
#define TC_FP8_SCALE_D 0.5f

/* Block scales of a block-scaled FP8 problem's verification: scale_a m x ceil(k/128) and
 * scale_b ceil(n/128) x ceil(k/128) floats uniform in [0.5, 2) (a kernel reading one at the wrong
 * row, K-block or column block errs by tens of percent), scale_d stays the per-tensor 0.5. */
static at_status tc_prepare_block_scales(at_exec *ref, const tpl_problem *p,
                                         unsigned long long seed, tpl_workset *ws)
{
    long long kb = tpl_cdiv(p->dims[2], 128), na = p->dims[0] * kb,
              nb = tpl_cdiv(p->dims[1], 128) * kb;
    CUdeviceptr sa, sb;
    at_status s;
    if ((s = tpl_ws_alloc(ref, ws, (size_t)(na > 0 ? na : 1) * 4, &sa)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, (size_t)(nb > 0 ? nb : 1) * 4, &sb)) != AT_OK ||
        (s = tpl_fill_typed(ref, sa, na, AT_R_32F, seed * 3 + 4, 0.5f, 2.0f)) != AT_OK ||
        (s = tpl_fill_typed(ref, sb, nb, AT_R_32F, seed * 3 + 5, 0.5f, 2.0f)) != AT_OK)
        return s;
    ws->args.operand[TPL_GEMM_SCALE_A].ptr = sa;
    ws->args.operand[TPL_GEMM_SCALE_B].ptr = sb;
    return AT_OK;
}

/* Inputs of a problem (any ops; a batch's products packed one after another): A, B uniform in
 * [-1, 1) of the type (FP8 maths: rounded to the pair's types, with the scales above), alpha
 * 1.5, beta 0 over a C filled with NaN (it must not be read: the NaN would reach the result),
 * the float64 reference of the same (TF32: rounded to nearest even; FP8: decoded exactly, scaled)
 * inputs. */
static at_status tc_prepare(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                            tpl_workset *ws)
{
    at_status s = tpl_check_gemm_prepare(ref, &tpl_tcgemm, p);
    if (s != AT_OK)
        return s;
    long long batch = tpl_problem_batch(p);
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    at_dtype t = p->dtype;
    /* FP8 maths: A and B of the pair's types (one byte), C of the problem's type */
    int fp8 = tpl_math_fp8(p->math);
    at_dtype ta = fp8 ? tpl_math_fp8_a(p->math) : t, tb = fp8 ? tpl_math_fp8_b(p->math) : t;
    size_t es = tpl_dtype_size(t), a_n = (size_t)m * k, b_n = (size_t)k * n, c_n = (size_t)m * n;
    size_t nb = (size_t)batch, c_bytes = c_n * nb * es, nan_bytes = (c_bytes + 3) / 4 * 4;
    size_t a_bytes = (a_n * nb * tpl_dtype_size(ta) + 3) / 4 * 4;
    size_t b_bytes = (b_n * nb * tpl_dtype_size(tb) + 3) / 4 * 4;
    CUdeviceptr A, B, C, C0, R;
    if ((s = tpl_ws_alloc(ref, ws, a_bytes, &A)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, b_bytes, &B)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, nan_bytes, &C)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, nan_bytes, &C0)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * nb * 8, &R)) != AT_OK)
        return s;
    const float alpha = 1.5f, beta = 0.0f;
    int lda = p->op_a == AT_OP_T ? m : k, ldb = p->op_b == AT_OP_T ? k : n;
    ws->args = tpl_gemm_args(m, n, k, alpha, A, lda, B, ldb, beta, C, n);
    ws->args.problem = *p;
    ws->args.operand[TPL_GEMM_A].batch_stride = (long long)a_n;
    ws->args.operand[TPL_GEMM_B].batch_stride = (long long)b_n;
    ws->args.operand[TPL_GEMM_C].batch_stride = (long long)c_n;
    /* a fused epilogue's bias: one vector of C's type, uniform in [-1, 1) like the products'
     * values (alpha 1.5 times a sum of k products of that range: the bias moves values across
     * ReLU's and GELU's bend wherever the product is small) */
    int bias_kind = TPL_EPI_BIAS(p->epilogue);
    if (bias_kind != TPL_BIAS_NONE) {
        long long len = bias_kind == TPL_BIAS_ROW ? m : n;
        CUdeviceptr bias;
        if ((s = tpl_ws_alloc(ref, ws, (size_t)len * es, &bias)) != AT_OK ||
            (s = tpl_fill_typed(ref, bias, len, t, seed * 3 + 3, -1.0f, 1.0f)) != AT_OK)
            return s;
        ws->args.operand[TPL_GEMM_BIAS].ptr = bias;
    }
    if (fp8) {
        /* per-tensor scales other than 1 (exact in FP32), so a kernel that drops one fails */
        const float scales[4] = {TC_FP8_SCALE_A, TC_FP8_SCALE_B, TC_FP8_SCALE_D, 0.0f};
        CUdeviceptr sc;
        if ((s = tpl_ws_alloc(ref, ws, sizeof scales, &sc)) != AT_OK ||
            (s = ex_upload(ref, sc, scales, sizeof scales)) != AT_OK)
            return s;
        ws->args.operand[TPL_GEMM_SCALE_A].ptr = sc;
        ws->args.operand[TPL_GEMM_SCALE_B].ptr = sc + 4;
        ws->args.operand[TPL_GEMM_SCALE_D].ptr = sc + 8;
    }
    if (tpl_math_fp8_block(p->math) && (s = tc_prepare_block_scales(ref, p, seed, ws)) != AT_OK)
        return s;
    if ((s = tpl_fill_typed(ref, A, (long long)(a_n * nb), ta, seed * 3 + 1, -1.0f, 1.0f)) != AT_OK ||
        (s = tpl_fill_typed(ref, B, (long long)(b_n * nb), tb, seed * 3 + 2, -1.0f, 1.0f)) != AT_OK ||
        (s = ex_memset32(ref, C0, 0xFFFFFFFFu, nan_bytes / 4)) != AT_OK ||
        (s = tpl_ref_gemm_args(ref, &ws->args, C0, R)) != AT_OK)
        return s;
    ws->out = C;
    ws->out_bytes = c_bytes;
    ws->out_initial = C0;
    ws->reference = R;
    return AT_OK;
}

/* The verification rule (README "Tensor-core GEMM"):
 *   ||C - C_ref||_F / ||C_ref||_F <= 2 u_out + (4 sqrt(k) + k / 8) 2^-24,
 * u_out the unit roundoff of C's type (BF16 2^-8, FP16 2^-11, FP32 2^-24): one rounding of
 * the output (measured 0.21 of 2 u_out on uniform [-1, 1) data) plus the FP32 accumulation,
 * whose error in the tensor cores grows linearly in k (truncating alignment: measured about
 * 0.039 k 2^-24 for TF32), so the k / 8 term keeps a 3x margin where 4 sqrt(k) alone would
 * reject correct kernels above k of about 10000. A wrong tile or a race gives 1e-2 or more. */
static double tc_tolerance_rule(at_dtype t, long long k)
{
    double kk = k > 0 ? (double)k : 1.0;
    return 2.0 * tpl_unit_roundoff(t) + (4.0 * sqrt(kk) + kk / 8.0) * ldexp(1.0, -24);
}

/* With a fused epilogue: the same rule times 1.2. The bias is added in FP32 to the FP32 value
 * (one rounding, 2^-24 relative, far below u_out) and the activation maps the value x + e,
 * e the accumulation's error, to f(x + e) = f(x) + f'(x) e: ReLU's derivative is 0 or 1 and
 * GELU's at most 1.13 (at x = 2.42, tanh and erf forms alike), so an element's error grows
 * by at most 1.13x, plus FP32 tanhf / erff (a few ulp, 2^-22 relative) or, with a 16-bit C,
 * tanh.approx (2^-11 relative in tanh: at most 2^-12 |x| in GELU(x), against the output's
 * 2^-8 (BF16) or 2^-11 (FP16) rounding of a GELU(x) near x for x > 0, small where x < 0:
 * under 0.1 of 2 u_out for BF16 and 0.35 for FP16 in the Frobenius norm, inside the margin
 * of the rule, which the plain kernels fill to 0.2-0.3), and one rounding of the output. The norm of the result may shrink (ReLU zeroes about half of it, and
 * the errors where it does go with it), so the relative error grows by at most the
 * derivative's bound: 1.2 keeps a margin over 1.13. A wrong bias (row for column, a missed
 * element) or activation errs by 1e-1 and more. */
#define TC_EPI_TOLERANCE 1.2

/* FP8 operands: the rule above plus (4 sqrt(k) + k / 32) 2^-13. Each product of two FP8 values is
 * exact in FP32 and the reference decodes the same bytes exactly, so no input rounding enters;
 * but Hopper's FP8 tensor cores (not measured here yet: published reports, DeepSeek-V3 section
 * 3.5.2 and SageAttention2) add each wgmma's 32 products in fixed point, each product shifted to
 * the largest one's exponent keeping 14 bits (sign-fill shifts truncate toward -inf: a bias
 * of about 16 ulp of the largest product per step, the same sign in every element), then round
 * the sum into an accumulator of 13 mantissa bits by truncation (toward zero: up to 2^-13 of
 * the running sum per step). On zero-mean data of [-1, 1) (largest of 32 products about 0.8,
 * their RMS 1/3) the first is about 0.8 sqrt(k) 2^-13 relative to ||C||, the second at most
 * (2/3) (k / 32) 2^-14; so 4 sqrt(k) + k / 32 keeps a 4-5x margin on each (k = 200: 0.77%,
 * 4096: 4.7%, plus the output's rounding; DeepSeek-V3 reports a largest element error of about
 * 2% at k = 4096). A dropped K tile of 128 at k = 4096 errs by 18%, a dropped scale by 25% and
 * more, a misread E4M3 / E5M2 operand by far more. cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM is
 * this accumulation; without it cuBLASLt promotes partial sums to FP32 (docs/fp8.md). The GPU
 * tests print the worst error as a fraction of this rule: tighten it from those numbers. */
static double tc_tolerance_fp8(at_dtype t, long long k)
{
    double kk = k > 0 ? (double)k : 1.0;
    return tc_tolerance_rule(t, k) + (4.0 * sqrt(kk) + kk / 32.0) * ldexp(1.0, -13);
}

/* Block-scaled FP8 (SCALE 1, 2): the kernel promotes every K-block of 128 (4 wgmma k32 steps) into
 * an FP32 accumulator with its two scales, so the 13-bit accumulator's truncation reaches at most 4
 * steps of each block's own sum, at most 4 2^-13 of it (the k / 32 term above becomes 4; 8 keeps
 * a 2x margin); the alignment of each step's 32 products to 14 bits is the tensor cores' and
 * stays (4 sqrt(k)). The scales' product and the promotion add 2^-24 roundings (far below).
 * The reference applies the same scales in float64 (k = 4096: 3.2% against 4.7% per-tensor;
 * a scale read for the wrong row, K-block or column block errs by tens of percent). */
static double tc_tolerance_fp8_block(at_dtype t, long long k)
{
    double kk = k > 0 ? (double)k : 1.0;
    return tc_tolerance_rule(t, k) + (4.0 * sqrt(kk) + 8.0) * ldexp(1.0, -13);
}

static double tc_tolerance(const tpl_problem *p)
{
    long long k = p->n_dims == 3 ? p->dims[2] : 1;
    if (tpl_math_fp8_block(p->math))
        return tc_tolerance_fp8_block(p->dtype, k);
    if (tpl_math_fp8(p->math))
        return tc_tolerance_fp8(p->dtype, k);
    double rule = tc_tolerance_rule(p->dtype, k);
    return p->epilogue != 0 ? TC_EPI_TOLERANCE * rule : rule;
}

/* The element type's TYPE value: BF16 0, FP16 1, FP32 data with TF32 math 2 (FP8 maths: C's
 * type, FP8 the pair); OPA / OPB 1 where A / B is op T and the kernel reads it in its stored
 * layout (PATH 80, PATH 90 16-bit: tc_reads_op_t; FP8: OPA 0, OPB 1). */
static void tc_fit_kind(int *cfg, const tpl_problem *p)
{
    cfg[P_TYPE] = p->dtype == AT_R_16BF ? 0 : p->dtype == AT_R_16F ? 1 : 2;
    cfg[P_FP8] = tpl_math_fp8(p->math);
    /* block scales: the row's SCALE (1 or 2: one or two promotion buffers; 3: the BN 256 tile with
     * A in registers, in N-quarters), else 1 */
    cfg[P_SCALE] = !tpl_math_fp8_block(p->math)              ? 0
                   : cfg[P_SCALE] == 2 || cfg[P_SCALE] == 3 ? cfg[P_SCALE]
                                                             : 1;
    /* a transposed operand is read as stored where the kernel can (PATH 80, PATH 90 16-bit),
     * not packed; PATH 90 TF32 packs here (its OPA / OPB 1 kernels are the tuner's to pick: not
     * yet measured as a built-in choice); FP8 reads A and B K-major always (m x k and n x k:
     * other layouts are packed) */
    int in_place = tc_reads_op_t(cfg);
    cfg[P_OPB] = cfg[P_FP8] || (in_place && p->op_b == AT_OP_T);
    cfg[P_OPA] = in_place && p->op_a == AT_OP_T;
    /* the fused epilogue: every kernel computes every one, so every row serves each */
    cfg[P_EPI] = p->epilogue >= 0 && p->epilogue < TPL_N_EPI ? p->epilogue : 0;
}

static const tpl_problem tc_tuning[] = {
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_16BF},
    {.n_dims = 3, .dims = {4097, 4097, 4097}, .dtype = AT_R_16BF},
    {.n_dims = 3, .dims = {8192, 8192, 1024}, .dtype = AT_R_16BF},
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_16F},
    {.n_dims = 3, .dims = {4097, 4097, 4097}, .dtype = AT_R_16F},
    {.n_dims = 3, .dims = {8192, 8192, 1024}, .dtype = AT_R_16F},
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_32F, .math = AT_MATH_TF32},
    {.n_dims = 3, .dims = {4097, 4097, 4097}, .dtype = AT_R_32F, .math = AT_MATH_TF32},
    {.n_dims = 3, .dims = {8192, 8192, 1024}, .dtype = AT_R_32F, .math = AT_MATH_TF32},
    /* one transposed problem per type (row-major; a column-major call is its row-major
     * canonical form, tpl_gemm_canonical: a linear layer's column-major TN is row-major NT):
     * kinds never serve each other, so each op pair tuned here gives its calls a nearest
     * shape; the other op pairs are in the shipped grid (share/grid-hopper.txt) */
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_16BF, .op_b = AT_OP_T},
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_16F, .op_b = AT_OP_T},
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_32F, .math = AT_MATH_TF32,
     .op_a = AT_OP_T},
    /* FP8 E4M3 x E4M3 -> BF16 in the layout wgmma reads (row-major NT = cuBLASLt's TN): its
     * lattice is a few dozen kernels */
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_16BF, .math = TPL_MATH_E4M3,
     .op_b = AT_OP_T},
    /* the same with block scales (DeepSeek-V3's 1 x 128 and 128 x 128) */
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .dtype = AT_R_16BF, .math = TPL_MATH_E4M3_B128,
     .op_b = AT_OP_T},
};

/* tile_of: the launch geometry for the runtime's selection model. PATH 90 runs one block
 * per SM ((WG + 1) x 128 threads, __launch_bounds__(T9_THREADS, 1)); PATH 80 as many as
 * its threads, shared memory and registers allow. */
static int tc_tile_of(const int *cfg, tpl_tile *t)
{
    memset(t, 0, sizeof *t);
    t->bm = cfg[P_BM];
    t->bn = cfg[P_BN];
    t->splitk = cfg[P_SPLITK] > 1 ? cfg[P_SPLITK] : 1;
    t->stream_k = cfg[P_SPLITK] == 0;   /* the wave-fill split evens out the last wave */
    t->products = 1;
    t->elem_bytes = tc_esz(cfg);
    if (cfg[P_PATH] == 90) {
        t->threads = (cfg[P_WG] + 1) * 128;
        t->smem = t9_smem_bytes(cfg);
        t->blocks_per_sm = 1;
    } else {
        t->threads = 32 * cfg[P_WARPS_M] * cfg[P_WARPS_N];
        t->smem = t8_smem_bytes(cfg);
    }
    return t->bm > 0 && t->bn > 0;
}

const tpl_family tpl_tcgemm = {
    .name = "tcgemm",
    .source = "tcgemm.cu",
    /* the power cap sets these kernels' clock, and configurations differ in the power they
     * draw by more than their margins (TF32 8192^3: CN 2 GROUP 8 1.013-1.029x cuBLAS at its
     * own clock, CN 1 GROUP 16 0.969-0.983x, the order 30 ms alternating slices reversed);
     * after 400 ms each the best of 8 led the next by 3.4% (fastest in 10 of 12 rounds), 150 ms
     * by 0.0-1.6% (docs/notes/tcgemm.md 18) */
    .retime_settle_ms = 400.0,
    .fixed_options = "",
    .summary = "tensor-core GEMM C = alpha*op(A)*op(B) + beta*C (row-major, ops N/T read as "
               "stored (PATH 90 TF32: OPB 1 / OPA 1 or a transposing pack), batches): BF16 or FP16 (C of the input "
               "type) or TF32 math on FP32 data, FP32 accumulation; PATH 90 wgmma + TMA + clusters "
               "(sm_90a), PATH 80 mma.sync + cp.async (sm_80+); fused epilogues, each its own kind "
               "(bias per row or column, ReLU, GELU tanh or erf: 4096x4096x4096:bf16:bias_col:gelu); "
               "FP8 E4M3/E5M2 operands with per-tensor scales, BF16/FP16/FP32 C (PATH 90: "
               "4096x4096x4096:bf16:e4m3xe4m3:NT) or block scales (1 x 128 of A, 128 x 128 of B: "
               "4096x4096x4096:bf16:e4m3xe4m3_b128:NT)",
    .n_dims = 3,
    .dim_names = {"m", "n", "k"},
    .metric_is_flops = 1,
    .hidden = 0,
    .n_params = P_COUNT,
    .params = {
        {"TYPE", 3, {0, 1, 2}, "element type: 0 BF16, 1 FP16 (C of the same type), 2 TF32 math "
                               "on FP32 data (FP32 C); with FP8 operands C's type (2: FP32)"},
        {"PATH", 2, {90, 80}, "90 wgmma + TMA + mbarriers + clusters (sm_90a), 80 mma.sync + "
                              "ldmatrix + cp.async (sm_80+)"},
        {"BM", 3, {128, 256, 64}, "block tile rows of C"},
        {"BN", 4, {256, 128, 192, 64}, "block tile columns of C"},
        {"BK", 4, {64, 32, 16, 128}, "K depth of one pipeline stage (FP8: 128)"},
        {"STAGES", 3, {4, 3, 2}, "shared-memory pipeline depth"},
        {"WG", 2, {2, 1}, "PATH 90: consumer warpgroups splitting the tile"},
        {"CM", 2, {1, 2}, "PATH 90: cluster rows (CTAs along M multicasting one B tile)"},
        {"CN", 2, {1, 2}, "PATH 90: cluster columns (CTAs along N multicasting one A tile)"},
        {"WARPS_M", 2, {2, 4}, "PATH 80: warps along M"},
        {"WARPS_N", 2, {2, 4}, "PATH 80: warps along N"},
        {"RASTER", 2, {0, 1}, "tile order: 0 along rows first, 1 along columns first"},
        {"GROUP", 3, {8, 16, 1}, "tile swizzle: this many tile rows (RASTER 1: columns) walked "
                                 "together for L2 reuse; 1 = off"},
        {"SPLITK", 6, {1, 2, 4, 8, 16, 0}, "K slices: FP32 partials + an ordered (deterministic) "
                                            "reduce; 0 PATH 90 wave-fill: whole waves of tiles "
                                            "data-parallel, the last ones split by K, combined in "
                                            "the kernel in a fixed order"},
        {"VEC", 4, {2, 8, 4, 1}, "epilogue width: 1 scalar, 2 pairs; 8 PATH 90 TMA stores or "
                                 "PATH 80 staged rows; 4 PATH 80 staged rows"},
        {"LOADW", 3, {16, 4, 2}, "PATH 80: bytes per global load of A and B (operands not "
                                 "aligned for it are packed first)"},
        {"OPB", 2, {0, 1}, "1 = a B given as op T (stored n x k) read K-major as stored, no "
                           "transposing pack (PATH 90 BF16/FP16: TMA and wgmma; PATH 90 TF32: "
                           "register fragments or, OPA 1, wgmma's B; PATH 80: ldmatrix)",
         .omit_first = 1},
        {"OPA", 2, {0, 1}, "1 = an A given as op T (stored k x m) read M-major as stored, no "
                           "transposing pack (PATH 90 BF16/FP16: wgmma's transpose bit; PATH 90 "
                           "TF32, with OPB 1: register fragments of D = A B; PATH 80: "
                           "ldmatrix.trans, TF32 element by element)", .omit_first = 1},
        {"EPI", TPL_N_EPI, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
         "fused epilogue (the problem's kind): bias * 4 + activation, bias 0 none, 1 per row, 2 "
         "per column of C; activation 0 none, 1 ReLU, 2 GELU (tanh), 3 GELU (erf)",
         .omit_first = 1},
        {"FP8", 4, {0, 1, 2, 3}, "FP8 operands (PATH 90, the problem's kind): 0 none, 1 E4M3 x "
                                 "E4M3, 2 E4M3 x E5M2, 3 E5M2 x E4M3; TYPE is then C's type (0 "
                                 "BF16, 1 FP16, 2 FP32)", .omit_first = 1},
        {"SCALE", 4, {0, 1, 2, 3}, "FP8 scaling (the problem's kind): 0 per-tensor, 1 block scales "
                                   "(1 x 128 of A, 128 x 128 of B; each K-block's product promoted "
                                   "to FP32 with its scales), 2 block scales with two promotion "
                                   "buffers (the next K-block's wgmmas run during a promotion); "
                                   "SCALE 1 at BN 256 runs each K-block in two N-halves of 128 "
                                   "through one buffer; 3 (BN 256) reads the K-block's A fragments "
                                   "into registers once and runs four N-quarters of 64 through two "
                                   "buffers, one quarter's wgmmas in flight during each promotion",
         .omit_first = 1},
        {"BATCH", 2, {0, 1}, "PATH 90 strided batches: 0 one launch per product, 1 every product "
                             "in one launch (3-D tensor maps, persistent units over tiles x "
                             "products; batches only)", .omit_first = 1},
    },
    .valid = tc_valid,
    .valid_prefix = tc_valid_prefix,
    .tile_of = tc_tile_of,
    .accepts = tc_accepts,
    .epilogues = 1,
    .applicable = tc_applicable,
    .deterministic = tc_deterministic,
    .run = tc_run,
    .work = tc_work,
    .work_done = NULL,
    .prepare = tc_prepare,
    .check = tpl_check_gemm,
    .tolerance = tc_tolerance,
    .target_arch = tc_target_arch,
    .default_config = TC_P80(0, "BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=4,"
                                "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=2"),
    .n_defaults = TC_N_DEFAULTS,
    .defaults = tc_defaults,
    .fit_kind = tc_fit_kind,
    .n_baselines = TC_N_BASELINES,
    .baselines = tc_baselines,
    .n_tuning_problems = (int)(sizeof tc_tuning / sizeof tc_tuning[0]),
    .tuning_problems = tc_tuning,
};
