/* skinny.c: descriptor of the skinny family (templates/skinny.cu): GEMMs with a small M or N, a
 * small output over a deep K, or small products in a batch, in FP32, FP64, FP16 and BF16 on the
 * CUDA cores; its space and rules, the K slices chosen at run time to fill the GPU, inputs and
 * verification, the shape classes it serves without measurements. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tpl.h"

/* Parameter order; must match the params table below. */
enum { P_TYPE, P_OPA, P_OPB, P_BM, P_BN, P_BK, P_TM, P_TN, P_KT, P_VEC, P_WAVES, P_COUNT };

#define SK_MAX_DIM 0x7fffffffLL
#define SK_MAX_SLICES 256                   /* K slices of one tile */
#define SK_FIXUP_ELEMS 131072LL             /* slices x tile elements the last block sums */
#define SK_MAX_WORKSPACE (256LL << 20)      /* bytes of slice partials */
#define SK_MAX_SMEM (48 * 1024 - 16)        /* static shared memory of one block's tiles (48 KiB
                                               less the last-block flag) */
#define SK_SLOT_WORK 0
#define SK_SLOT_COUNTERS 1

/* ---- rejection reasons (each reachable; tests/test_skinny.c reaches every one) ---- */
enum { R_RANGE, R_TILE, R_THREADS, R_VEC, R_REGS, R_LOADS, R_SMEM, R_COUNT };

const char *const tpl_skinny_reasons[R_COUNT] = {
    [R_RANGE] = "TYPE 0..4, OPA and OPB 0 or 1, VEC 1, 2, 4 or 8, WAVES 1..8, tiles positive",
    [R_TILE] = "tiles must divide: BM by TM, BN by TN, BK by KT (each K group takes every KT-th "
               "step of a stage)",
    [R_THREADS] = "(BM / TM) x (BN / TN) x KT threads must be 64..512, whole warps",
    [R_VEC] = "VEC elements are one load of at most 16 bytes (FP64: 2, FP32: 4, 16-bit: 8)",
    [R_REGS] = "accumulators above 64 registers per thread (TM x TN, FP64 counting twice)",
    [R_LOADS] = "a stage's A and B tiles above 64 elements per thread (the registers that carry "
                "the next stage)",
    [R_SMEM] = "a stage's tiles or the K groups' partial tiles above 48 KiB of static shared "
               "memory (less 16 bytes for the last block's flag)",
};
const int tpl_skinny_n_reasons = R_COUNT;

static int sk_reject(int r, char *why, size_t len)
{
    return tpl_reject(why, len, tpl_skinny_reasons[r]);
}

static int sk_esz(const int *c)
{
    return c[P_TYPE] == 1 ? 8 : c[P_TYPE] == 2 || c[P_TYPE] == 3 ? 2 : 4;
}

/* Bytes of one accumulator (FP64 for FP64 data, else FP32). */
static int sk_acc_size(const int *c)
{
    return c[P_TYPE] == 1 ? 8 : 4;
}

static int sk_threads(const int *c)
{
    return (c[P_BM] / c[P_TM]) * (c[P_BN] / c[P_TN]) * c[P_KT];
}

/* Elements of one global load of an operand whose tile is `len` long along its contiguous
 * dimension (as SK_WIDTH in skinny.cu). */
static int sk_width(const int *c, int len)
{
    return len % c[P_VEC] == 0 ? c[P_VEC] : 1;
}
static int sk_width_a(const int *c)
{
    return sk_width(c, c[P_OPA] ? c[P_BM] : c[P_BK]);
}
static int sk_width_b(const int *c)
{
    return sk_width(c, c[P_OPB] ? c[P_BK] : c[P_BN]);
}

static long long sk_smem(const int *c)
{
    long long stage = (long long)c[P_BK] * (c[P_BM] + c[P_BN]) * sk_acc_size(c);
    long long red = (long long)c[P_KT] * c[P_BM] * c[P_BN] * sk_acc_size(c);
    return stage > red ? stage : red;
}

static int sk_valid(const int *c, const at_device_info *dev, char *why, size_t len)
{
    (void)dev;      /* 48 KiB of static shared memory fit every sm_80+ device */
    int vec = c[P_VEC];
    if (c[P_TYPE] < 0 || c[P_TYPE] > 4 || (c[P_OPA] | c[P_OPB]) & ~1 ||
        (vec != 1 && vec != 2 && vec != 4 && vec != 8) || c[P_WAVES] < 1 || c[P_WAVES] > 8 ||
        c[P_BM] < 1 || c[P_BN] < 1 || c[P_BK] < 1 || c[P_TM] < 1 || c[P_TN] < 1 || c[P_KT] < 1)
        return sk_reject(R_RANGE, why, len);
    if (c[P_BM] % c[P_TM] || c[P_BN] % c[P_TN] || c[P_BK] % c[P_KT])
        return sk_reject(R_TILE, why, len);
    int threads = sk_threads(c);
    if (threads < 64 || threads > 512 || threads % 32)
        return sk_reject(R_THREADS, why, len);
    if (vec * sk_esz(c) > 16)
        return sk_reject(R_VEC, why, len);
    if (c[P_TM] * c[P_TN] * (sk_acc_size(c) / 4) > 64)
        return sk_reject(R_REGS, why, len);
    int wa = sk_width_a(c), wb = sk_width_b(c);
    long long loads = tpl_cdiv((long long)c[P_BM] * c[P_BK] / wa, threads) * wa +
                      tpl_cdiv((long long)c[P_BK] * c[P_BN] / wb, threads) * wb;
    if (loads * (sk_acc_size(c) / 4) > 64)
        return sk_reject(R_LOADS, why, len);
    if (sk_smem(c) > SK_MAX_SMEM)
        return sk_reject(R_SMEM, why, len);
    return 1;
}

/* TYPE of a problem's kind, -1 if the family does not compute it: FP32 0, FP64 1, FP16 2, BF16
 * 3, FP32 data under TF32 math 4 (the kernel rounds A and B to TF32); row-major canonical form,
 * ops N or T, any batch. */
static int sk_type_of(const tpl_problem *p)
{
    if ((unsigned)p->op_a > AT_OP_T || (unsigned)p->op_b > AT_OP_T ||
        p->order != AT_ROW_MAJOR || p->batch < 0)
        return -1;
    if (p->dtype == AT_R_32F && p->math == AT_MATH_TF32)
        return 4;
    if (p->math != AT_MATH_DEFAULT)
        return -1;
    return p->dtype == AT_R_32F  ? 0
           : p->dtype == AT_R_64F ? 1
           : p->dtype == AT_R_16F ? 2
           : p->dtype == AT_R_16BF ? 3
                                   : -1;
}

static int sk_accepts(const tpl_problem *p)
{
    return p->n_dims == 3 && sk_type_of(p) >= 0;
}

extern const tpl_family tpl_skinny;

static int sk_applicable(const int *c, const tpl_problem *p)
{
    if (!tpl_family_accepts(&tpl_skinny, p) || sk_type_of(p) != c[P_TYPE] ||
        (int)p->op_a != c[P_OPA] || (int)p->op_b != c[P_OPB])
        return 0;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    if (m < 1 || n < 1 || k < 0 || m > SK_MAX_DIM || n > SK_MAX_DIM || k > SK_MAX_DIM)
        return 0;
    return tpl_cdiv(m, c[P_BM]) * tpl_cdiv(n, c[P_BN]) <= SK_MAX_DIM;
}

static int sk_deterministic(const int *cfg)
{
    (void)cfg;      /* K slices are summed in slice order by one block: no float atomics */
    return 1;
}

/* ---- run ---- */

/* 1 if operand o allows loads of w elements of esz bytes: base, ld and batch stride. */
static int sk_aligned(const tpl_operand *o, int esz, int w, long long batch)
{
    return w > 1 && o->ptr % (unsigned long long)(w * esz) == 0 && o->ld % w == 0 &&
           (batch <= 1 || o->batch_stride % w == 0);
}

/* K slices per tile for `tiles` tiles (all products of one launch) of `steps` K stages on a
 * device where `resident` blocks run at once: none when the tiles fill `waves` waves; else
 * enough to fill them, each slice at least 2 stages, the last block's sum of the slices at
 * most SK_FIXUP_ELEMS elements, the partials within SK_MAX_WORKSPACE. */
int tpl_skinny_slices(const int *c, long long tiles, long long steps, long long resident)
{
    long long want = resident * c[P_WAVES];
    if (steps < 4 || tiles >= want)
        return 1;
    long long slices = tpl_cdiv(want, tiles);
    long long tile_elems = (long long)c[P_BM] * c[P_BN];
    long long cap = SK_FIXUP_ELEMS / tile_elems;
    if (slices > steps / 2)
        slices = steps / 2;
    if (slices > cap)
        slices = cap;
    if (slices > SK_MAX_SLICES)
        slices = SK_MAX_SLICES;
    while (slices > 1 && slices * tiles * tile_elems * sk_acc_size(c) > SK_MAX_WORKSPACE)
        slices /= 2;
    if (slices < 2)
        return 1;
    /* every slice non-empty: the same stages per slice, the last one shorter */
    return (int)tpl_cdiv(steps, tpl_cdiv(steps, slices));
}

static at_status sk_run(at_exec *ex, const int *cfg, tpl_args *args)
{
    const tpl_problem *p = &args->problem;
    at_status s = tpl_check_problem(ex, &tpl_skinny, p);
    if (s != AT_OK)
        return s;
    if (sk_type_of(p) != cfg[P_TYPE] || (int)p->op_a != cfg[P_OPA] || (int)p->op_b != cfg[P_OPB])
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "skinny: configuration TYPE=%d OPA=%d OPB=%d does "
                       "not compute this problem's type and ops", cfg[P_TYPE], cfg[P_OPA],
                       cfg[P_OPB]);
    long long m64 = p->dims[0], n64 = p->dims[1], k64 = p->dims[2], batch = tpl_problem_batch(p);
    if (m64 < 0 || n64 < 0 || k64 < 0 || m64 > SK_MAX_DIM || n64 > SK_MAX_DIM || k64 > SK_MAX_DIM)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "skinny: sizes %lldx%lldx%lld out of range", m64,
                       n64, k64);
    int m = (int)m64, n = (int)n64, k = (int)k64;
    if (m == 0 || n == 0)
        return AT_OK;
    s = tpl_check_gemm_operands(ex, &tpl_skinny, args, m, n, k, cfg[P_OPA], cfg[P_OPB]);
    if (s != AT_OK)
        return s;
    const tpl_operand *oa = &args->operand[TPL_GEMM_A], *ob = &args->operand[TPL_GEMM_B],
                      *oc = &args->operand[TPL_GEMM_C];
    long long tiles = tpl_cdiv(m, cfg[P_BM]) * tpl_cdiv(n, cfg[P_BN]);
    if (tiles > SK_MAX_DIM)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "skinny: %lld tiles of %dx%d above 2^31 - 1", tiles,
                       cfg[P_BM], cfg[P_BN]);
    int esz = sk_esz(cfg);
    int va = sk_aligned(oa, esz, sk_width_a(cfg), batch);
    int vb = sk_aligned(ob, esz, sk_width_b(cfg), batch);
    unsigned threads = (unsigned)sk_threads(cfg);
    int per_sm = 0;
    if ((s = ex_occupancy(ex, "skinny_gemm", threads, 0, &per_sm)) != AT_OK)
        return s;
    long long sms = ex->dev && ex->dev->sm_count > 0 ? ex->dev->sm_count : 1;
    long long steps = tpl_cdiv(k, cfg[P_BK]);
    long long sa = batch > 1 ? oa->batch_stride : 0, sb = batch > 1 ? ob->batch_stride : 0,
              sc = batch > 1 ? oc->batch_stride : 0;
    long long lda = oa->ld, ldb = ob->ld, ldc = oc->ld;
    float af = (float)args->scalar[TPL_GEMM_ALPHA], bf = (float)args->scalar[TPL_GEMM_BETA];
    double ad = args->scalar[TPL_GEMM_ALPHA], bd = args->scalar[TPL_GEMM_BETA];
    void *alpha = cfg[P_TYPE] == 1 ? (void *)&ad : (void *)&af;
    void *beta = cfg[P_TYPE] == 1 ? (void *)&bd : (void *)&bf;
    for (long long z = 0; z < batch; z += 65535) {
        long long products = batch - z < 65535 ? batch - z : 65535;
        int slices = tpl_skinny_slices(cfg, tiles * products, steps, per_sm * sms);
        int per_slice = (int)(slices > 1 ? tpl_cdiv(steps, slices) : (steps > 0 ? steps : 1));
        CUdeviceptr work = 0, counters = 0;
        if (slices > 1) {
            size_t launch_tiles = (size_t)(tiles * products);
            size_t bytes = launch_tiles * (size_t)slices * (size_t)cfg[P_BM] * (size_t)cfg[P_BN] *
                           (size_t)sk_acc_size(cfg);
            if ((s = ex_scratch(ex, SK_SLOT_WORK, bytes, &work)) != AT_OK ||
                (s = ex_scratch_zeroed(ex, SK_SLOT_COUNTERS, launch_tiles * 4, &counters)) !=
                    AT_OK)
                return s;
        }
        CUdeviceptr A = (oa->ptr ? oa->ptr : oc->ptr) + (CUdeviceptr)(z * sa * esz);
        CUdeviceptr B = (ob->ptr ? ob->ptr : oc->ptr) + (CUdeviceptr)(z * sb * esz);
        CUdeviceptr C = oc->ptr + (CUdeviceptr)(z * sc * esz);
        void *a[] = {&A, &B, &C, &lda, &ldb, &ldc, &sa, &sb, &sc, &m, &n, &k, alpha, beta,
                     &per_slice, &va, &vb, &work, &counters};
        if ((s = ex_launch(ex, "skinny_gemm", (unsigned)tiles, (unsigned)slices,
                           (unsigned)products, threads, 1, 1, 0, a)) != AT_OK)
            return s;
    }
    return AT_OK;
}

/* Inputs of a problem (tpl_prepare_gemm_beta0: A and B uniform in [-1, 1) rounded to the type,
 * alpha 1.5, beta 0 over a NaN C, the compensated float64 reference of every product, under
 * TF32 math the float64 reference of the TF32-rounded inputs). */
static at_status sk_prepare(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                            tpl_workset *ws)
{
    at_status s = tpl_check_gemm_prepare(ref, &tpl_skinny, p);
    return s != AT_OK ? s : tpl_prepare_gemm_beta0(ref, p, seed, ws);
}

/* The verification rule, relative Frobenius error against the compensated float64 reference:
 * FP64 (8 sqrt(k) + 8) 2^-53 (a double sum of k terms errs by about sqrt(k) 2^-53 on random
 * data, in any blocking); FP32 4e-7 sqrt(k) + 1e-6 (bgemm's rule: about 3 sqrt(k) 2^-24 of
 * accumulation and the rounding of C); FP16 and BF16 two roundings of C plus the FP32
 * accumulation, the rule of the tensor-core family: 2 u + (4 sqrt(k) + k / 8) 2^-24. A wrong
 * tile, a lost slice or a race gives 1e-2 or more. */
static double sk_tolerance(const tpl_problem *p)
{
    double k = p->n_dims == 3 && p->dims[2] > 0 ? (double)p->dims[2] : 1.0;
    if (p->dtype == AT_R_64F)
        return (8.0 * sqrt(k) + 8.0) * ldexp(1.0, -53);
    if (p->dtype == AT_R_32F)
        return 4e-7 * sqrt(k) + 1e-6;
    return 2.0 * tpl_unit_roundoff(p->dtype) + (4.0 * sqrt(k) + k / 8.0) * ldexp(1.0, -24);
}

/* sm_80+: cvt.rn.bf16.f32 and the 16-byte loads; nothing older. */
static const char *sk_target_arch(const int *cfg, const char *arch)
{
    (void)cfg;
    int cc = 0;
    return sscanf(arch, "sm_%d", &cc) == 1 && cc >= 80 ? arch : NULL;
}

/* The problem's TYPE and ops; VEC narrowed to one 16-byte load of the type. */
static void sk_fit_kind(int *cfg, const tpl_problem *p)
{
    int t = sk_type_of(p);
    cfg[P_TYPE] = t >= 0 ? t : 0;
    cfg[P_OPA] = p->op_a == AT_OP_T;
    cfg[P_OPB] = p->op_b == AT_OP_T;
    while (cfg[P_VEC] > 1 && cfg[P_VEC] * sk_esz(cfg) > 16)
        cfg[P_VEC] /= 2;
}

#define SK_CFG(tile, waves) "TYPE=0,OPA=0,OPB=0," tile ",VEC=8,WAVES=" #waves
#define SK_F64 TPL_BIT(AT_R_64F)

/* Built-in choices by shape class (TYPE, ops and VEC fitted to the problem): the narrow side in
 * one tile row or column, small tiles and K groups. Most rows are the winner of a problem of
 * their class in bench/shapes/narrow.txt (H200, 2026-11-29, 4 s each), kept where the random
 * calls of bench_calls (seeds 1 and 2, 400 calls) confirmed them against the rows before
 * (per-row geomean of the changed calls: generic 1.08x, FP64 m <= 48 1.09x, m <= 16 1.11x,
 * deep K 1.38x); three such winners lost on the calls and are not rows (n <= 48: 0.76x, k <=
 * 32: 0.80x, m <= 48: 0.92x): one shape's winner at a 4 s budget need not serve its class. */
static const tpl_default sk_defaults[] = {
    {.cc_min = 80, .max_m = 4, .config = SK_CFG("BM=4,BN=32,BK=64,TM=2,TN=4,KT=8", 1),
     .origin = "m <= 4: the 4 x 4096 x 4096 FP32 winner"},
    {.cc_min = 80, .max_m = 16, .config = SK_CFG("BM=16,BN=32,BK=32,TM=4,TN=4,KT=4", 2),
     .origin = "m <= 16: the 16 x 4096 x 4096 FP32 TN winner"},
    {.cc_min = 80, .max_n = 8, .config = SK_CFG("BM=32,BN=8,BK=16,TM=8,TN=2,KT=4", 1),
     .origin = "n <= 8: the 4096 x 8 x 4096 BF16 winner"},
    {.cc_min = 80, .max_n = 16, .config = SK_CFG("BM=64,BN=16,BK=32,TM=4,TN=4,KT=4", 2),
     .origin = "n <= 16: 64 rows, one tile column, 4 K groups"},
    /* FP32 n of 17-32 over many rows (64 or more 128-row tiles over the batch) and a K of 256
     * or more: 4 x 4 thread tiles and 2 K groups in 128 threads, where the generic row's 512
     * threads of 4 x 2 tiles read shared memory more per FMA (11119 x 17 x 1775 x 6 NT, tuned
     * 3 s: 0.469 ms against 0.614 ms, 2026-11-29-H200-narrow-batched-tuned-per-family-
     * de1cea3.txt); fewer rows (250 x 20 x 3306, 774 x 20 x 9394, 91 x 19 x 11731: 0.79-1.10x
     * cuBLAS) stay on the generic row, the next opinion the trial times here */
    {.cc_min = 80, .dtypes = TPL_BIT(AT_R_32F), .maths = TPL_BIT(AT_MATH_DEFAULT), .max_n = 32,
     .min_tiles = 64, .min_k = 256, .config = SK_CFG("BM=32,BN=32,BK=16,TM=4,TN=4,KT=2", 8),
     .origin = "FP32 n <= 32 over 64 or more 128-row tiles and K >= 256: the 11119 x 17 x 1775 "
               "x 6 NT winner"},
    {.cc_min = 80, .dtypes = TPL_BIT(AT_R_32F), .maths = TPL_BIT(AT_MATH_DEFAULT), .max_k = 64,
     .min_tiles = 128, .config = SK_CFG("BM=64,BN=64,BK=8,TM=8,TN=4,KT=1", 1),
     .origin = "FP32 k <= 64 over about a wave of 128 x 128 tiles or more: the 15485 x 2633 x 59 "
               "TT winner's tile (0.39x -> 0.71x cuBLAS), one wave (WAVES 4 split 1763 x 2793 x "
               "46 to 0.30x); below 128 tiles its 64 x 64 blocks leave SMs idle or split a short "
               "K (50 x 10255 x 28: 1.36x on the 32 x 32 row, 0.54x on this one)"},
    {.cc_min = 80, .max_mn = 64, .min_k = 2048,
     .config = SK_CFG("BM=8,BN=16,BK=64,TM=4,TN=2,KT=8", 1),
     .origin = "outputs up to 64 x 64 over a deep K: the 48 x 48 x 8192 BF16 and 17 x 35 x 14526 "
               "FP64 winner"},
    {.cc_min = 80, .dtypes = SK_F64, .max_m = 48,
     .config = SK_CFG("BM=32,BN=64,BK=16,TM=4,TN=2,KT=2", 4),
     .origin = "FP64 m <= 48: the 32 x 2048 x 8192 winner"},
    {.cc_min = 80, .dtypes = SK_F64, .max_k = 32,
     .config = SK_CFG("BM=32,BN=128,BK=16,TM=8,TN=2,KT=1", 8),
     .origin = "FP64 k <= 32: the 2000 x 2000 x 16 winner"},
    {.cc_min = 80, .config = SK_CFG("BM=32,BN=32,BK=32,TM=4,TN=2,KT=4", 4),
     .origin = "small outputs: the 250 x 250 x 200 FP64 TN winner"},
};

/* Without a measurement of any family for p, the skinny family serves it ahead of its type's
 * large-tile family in the shape classes where its built-in defaults were faster over the random
 * calls of bench/bench_calls.cu (H200, 2026-11-29: every call of seeds 1 and 2 run on each
 * family, checked on seed 3): one side of the output narrow, a short K, or a small output per
 * product, per type as below; on the tensor-core types (BF16, FP16, TF32) a side of at most 8,
 * or a small output while the call is small enough (2^28 flops) that the CUDA cores keep up
 * with the tensor cores. Large-tile families compute mostly padding there, and their shortest
 * calls cost more than the launch. */
#define SK_TC_MAX_FLOPS 268435456.0
static int sk_claims(const tpl_problem *p, const at_device_info *dev)
{
    (void)dev;
    if (!sk_accepts(p))
        return 0;
    double m = (double)p->dims[0], n = (double)p->dims[1], k = (double)p->dims[2];
    double narrow = m < n ? m : n;
    double outputs = m * n * (double)tpl_problem_batch(p);
    /* FP32: a short K (at most 64): the 64 x 64 tiles of one K step beat the large tiles,
     * whose pipeline has nothing to overlap (eight calls of seeds 1-3, both families tuned 6 s
     * each: skinny won 7), except K <= 32 over one product of more than 2^23 outputs, where
     * the large tiles' stores win (7551 x 4168 x 21: 1.08x against 0.75x; H200, 2026-11-29) */
    if (p->dtype == AT_R_32F && p->math == AT_MATH_DEFAULT)
        return narrow <= 48 || m * n <= 65536 ||
               (k <= 64 && (k > 32 || outputs <= 8388608.0 || tpl_problem_batch(p) > 1));
    /* FP64: the dgemm family's DMMA tiles with a wave-filling split-K (templates/defaults.c)
     * beat the DFMA tiles here on all but tiny outputs, GEMV-like calls, short or shallow
     * narrow products (random calls of seed 3 and the tuner's winners, H200, 2026-11-29) and
     * small outputs (up to 2^16) over a K of at most 384 (212 x 104 x 275, 502 x 62 x 274,
     * 163 x 301 x 220, 72 x 198 x 319: 1.09-1.36x on skinny, 0.67-0.89x on dgemm's 64 x 64
     * tiles at 73b2ee5) */
    if (p->dtype == AT_R_64F && tpl_problem_batch(p) > 1 && outputs > 131072.0)
        return 0;   /* batches past 2^17 outputs: bgemm's and dgemm's tiles, 2-5x faster at
                     * 804 x 28 x 32 x 498, 156 x 175 x 57 x 2038, 48 x 7217 x 165 x 4 (every
                     * family tuned, H200, 2026-11-29-H200-fp32-fp64-every-family-seeds-4-8-
                     * bb64b50.txt); the small batches of seeds 1-3 (up to 30660 outputs) ran
                     * 1.24-1.49x cuBLAS on skinny */
    if (p->dtype == AT_R_64F)
        return m * n <= 12288 || narrow <= 8 || (k <= 32 && outputs <= 262144.0) ||
               (narrow <= 48 && k <= 256) || (m * n <= 65536 && k <= 384);
    /* a side of at most 8 is bound by memory, not by either kind of core; past 2^16 outputs
     * (a short K: 2^20 over the batch) the tensor cores' large tiles win even on a narrow
     * side (the three seeds' calls, both families forced, 2026-11-29) */
    double flops = 2.0 * m * n * k * (double)tpl_problem_batch(p);
    return narrow <= 8 ||
           (((k <= 64 && outputs <= 1048576.0) || m * n <= 65536) && flops <= SK_TC_MAX_FLOPS);
}

static const tpl_problem sk_tuning[] = {
    {.n_dims = 3, .dims = {64, 64, 16384}},
    {.n_dims = 3, .dims = {16, 8192, 8192}, .dtype = AT_R_16BF},
    {.n_dims = 3, .dims = {32, 32, 4096}, .dtype = AT_R_64F},
    {.n_dims = 3, .dims = {8192, 16, 4096}},
};

static int sk_tile_of(const int *cfg, tpl_tile *t)
{
    memset(t, 0, sizeof *t);
    t->bm = cfg[P_BM];
    t->bn = cfg[P_BN];
    t->splitk = 1;
    t->products = 1;
    t->elem_bytes = sk_esz(cfg);
    t->threads = sk_threads(cfg);
    t->smem = sk_smem(cfg);
    return t->bm > 0 && t->bn > 0 && t->threads > 0;
}

const tpl_family tpl_skinny = {
    .name = "skinny",
    .source = "skinny.cu",
    .fixed_options = "",
    .summary = "GEMM for small M or N, a short K, small outputs over a deep K and small "
               "products (FP32, TF32 math, FP64, FP16, BF16 on the CUDA cores; row-major, ops "
               "N/T, batches): small tiles, K split inside a block and across blocks, slices "
               "summed in order",
    .n_dims = 3,
    .dim_names = {"m", "n", "k"},
    .metric_is_flops = 1,
    .hidden = 0,
    .n_params = P_COUNT,
    .params = {
        {"TYPE", 5, {0, 1, 2, 3, 4}, "element type: 0 float, 1 double, 2 half, 3 bfloat16, 4 "
                                     "float under TF32 math (inputs rounded to TF32); FP32 "
                                     "accumulation but FP64"},
        {"OPA", 2, {0, 1}, "op(A): 0 N (m x k), 1 T (stored k x m); must match the problem"},
        {"OPB", 2, {0, 1}, "op(B): 0 N (k x n), 1 T (stored n x k); must match the problem"},
        {"BM", 7, {32, 16, 64, 8, 4, 2, 1}, "rows of a block's C tile"},
        {"BN", 5, {64, 32, 128, 16, 8}, "columns of a block's C tile"},
        {"BK", 4, {32, 64, 16, 8}, "K depth of one shared-memory stage"},
        {"TM", 4, {4, 2, 8, 1}, "rows of a thread's register tile"},
        {"TN", 4, {4, 2, 8, 1}, "columns of a thread's register tile"},
        {"KT", 5, {2, 1, 4, 8, 16}, "thread groups splitting each stage's K steps"},
        {"VEC", 4, {8, 4, 2, 1}, "elements per global load along the contiguous dimension "
                                 "(where aligned; at most 16 bytes)"},
        {"WAVES", 4, {2, 1, 4, 8}, "K slices across blocks until the launch fills this many "
                                   "waves of resident blocks", .host_only = 1},
    },
    .valid = sk_valid,
    .tile_of = sk_tile_of,
    .accepts = sk_accepts,
    .applicable = sk_applicable,
    .deterministic = sk_deterministic,
    .run = sk_run,
    .work = tpl_gemm_work_beta0,
    .work_done = NULL,
    .prepare = sk_prepare,
    .check = tpl_check_gemm,
    .tolerance = sk_tolerance,
    .target_arch = sk_target_arch,
    .default_config = "TYPE=0,OPA=0,OPB=0,BM=32,BN=32,BK=32,TM=4,TN=2,KT=4,VEC=4,WAVES=4",
    .n_defaults = (int)(sizeof sk_defaults / sizeof sk_defaults[0]),
    .defaults = sk_defaults,
    .fit_kind = sk_fit_kind,
    .claims = sk_claims,
    .n_tuning_problems = (int)(sizeof sk_tuning / sizeof sk_tuning[0]),
    .tuning_problems = sk_tuning,
};
