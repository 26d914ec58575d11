/* smallm.c: descriptor of the smallm family (templates/smallm.cu): FP16 and BF16 GEMMs with a
 * small M (m <= 64) over a large N x K on the tensor cores, and exact FP32 ones on the CUDA cores
 * (TYPE 2) with a narrow m or n (a narrow n runs as the mirrored problem C^T = op(B)^T op(A)^T),
 * bound by reading the wide operand; its space and rules, the K slices chosen at run time to fill
 * the GPU, inputs and verification, the shapes it claims without measurements. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tpl.h"

/* Parameter order; must match the params table below. */
enum {
    P_TYPE, P_OPA, P_OPB, P_MT, P_BN, P_BK, P_STAGES, P_WARPS, P_KW, P_VEC, P_WAVES, P_CLUSTER,
    P_COUNT
};

#define SM_MAX_M 64                         /* the family computes m <= 64 (MT's largest) */
#define SM_MAX_DIM 0x7fffffffLL
#define SM_MAX_SLICES 256                   /* K slices of one tile */
#define SM_MAX_CLUSTER_SLICES 8             /* CLUSTER 1: a tile's slices are one (portable)
                                               cluster */
#define SM_MIN_SLICE_STEPS 4                /* K stages of one slice at least (pipeline fill) */
#define SM_MAX_WORKSPACE (256LL << 20)      /* bytes of slice partials */
#define SM_SMEM_RESERVE 128                 /* static shared memory (the last block's flag) */
#define SM_SLOT_WORK 0
#define SM_SLOT_COUNTERS 1

/* ---- rejection reasons (each reachable; tests/test_smallm.c reaches every one) ---- */
enum { R_RANGE, R_SPLIT, R_REGS, R_SMEM, R_KIND, R_FP32_SPLIT, R_FP32_REGS, R_CLUSTER, R_COUNT };

const char *const tpl_smallm_reasons[R_COUNT] = {
    [R_RANGE] = "TYPE 0, 1 or 2, OPA and OPB 0 or 1, MT 8, 16, 32 or 64, BN 64..512 and BK "
                "32..128 multiples of 16, STAGES 2..8, WARPS 4 or 8, KW 1, 2 or 4, VEC 2, 4 or 8, "
                "WAVES 1..8, CLUSTER 0 or 1",
    [R_SPLIT] = "the warps must split the tile: KW divides WARPS and the BK / 16 k16 steps of a "
                "stage, and BN is a multiple of 16 x WARPS / KW (the warps along n)",
    [R_REGS] = "accumulators above 64 registers per thread ((BN / (WARPS / KW) / 16) x (MT / 8) "
               "mma tiles of 4)",
    [R_SMEM] = "the pipeline stages (or the KW groups' partial tiles) above the device's shared "
               "memory per block",
    [R_KIND] = "BN above 256 is TYPE 2's (FP32) alone; VEC 8 is TYPE 0's and 1's (16 bytes of "
               "16-bit elements)",
    [R_FP32_SPLIT] = "TYPE 2: KW divides WARPS, BK / KW is a multiple of 4 (K steps four at a "
                     "time), and each thread takes 1, 2 or 4 columns (BN = 1, 2 or 4 x WARPS x "
                     "32 / KW)",
    [R_FP32_REGS] = "TYPE 2: accumulators above 128 registers per thread (MT x BN / (WARPS x 32 / "
                    "KW))",
    [R_CLUSTER] = "CLUSTER 1 needs sm_90 (thread-block clusters) and takes WAVES 1 (its slices "
                  "stop at 8 per tile, which one wave fills where more would)",
};
const int tpl_smallm_n_reasons = R_COUNT;

static int sm_reject(int r, char *why, size_t len)
{
    return tpl_reject(why, len, tpl_smallm_reasons[r]);
}

static int sm_threads(const int *c)
{
    return c[P_WARPS] * 32;
}

/* Bytes of an element: FP32 4 (TYPE 2), FP16 and BF16 2. */
static int sm_esz(const int *c)
{
    return c[P_TYPE] == 2 ? 4 : 2;
}

/* TYPE 2: columns of C per thread (BN over the threads of one K group). */
static int sm_fp32_columns(const int *c)
{
    int group = c[P_WARPS] * 32 / c[P_KW];
    return group > 0 && c[P_BN] % group == 0 ? c[P_BN] / group : 0;
}

/* Elements of one pipeline stage in shared memory (smallm.cu's SM_STAGE_ELEMS): B's tile as
 * stored and A's, each row padded to an odd number of 16-byte units. */
static long long sm_stage_elems(const int *c)
{
    if (c[P_TYPE] == 2) {       /* smallm.cu's SMF_STAGE_ELEMS: floats, B's [n][k] rows + 4 */
        long long fb = c[P_OPB] ? (long long)c[P_BN] * (c[P_BK] + 4)
                                : (long long)c[P_BK] * c[P_BN];
        return fb + (long long)c[P_MT] * c[P_BK];
    }
    long long b = c[P_OPB] ? (long long)c[P_BN] * (c[P_BK] + 8)
                           : (long long)c[P_BK] * (c[P_BN] + 8);
    long long a = c[P_OPA] ? (long long)c[P_BK] * (c[P_MT] == 8 ? 8 : c[P_MT] + 8)
                           : (long long)c[P_MT] * (c[P_BK] + 8);
    return a + b;
}

/* Bytes of dynamic shared memory: the stages, reused for the KW groups' partial tiles. */
static long long sm_smem(const int *c)
{
    long long pipe = (long long)c[P_STAGES] * sm_stage_elems(c) * sm_esz(c);
    long long red = (long long)c[P_KW] * c[P_MT] * (c[P_BN] + 4) * 4;
    return pipe > red ? pipe : red;
}

static int sm_valid(const int *c, const at_device_info *dev, char *why, size_t len)
{
    int mt = c[P_MT], vec = c[P_VEC];
    if (c[P_TYPE] < 0 || c[P_TYPE] > 2 || (c[P_OPA] | c[P_OPB]) & ~1 ||
        (mt != 8 && mt != 16 && mt != 32 && mt != 64) ||
        c[P_BN] < 64 || c[P_BN] > 512 || c[P_BN] % 16 || c[P_BK] < 32 || c[P_BK] > 128 ||
        c[P_BK] % 16 || c[P_STAGES] < 2 || c[P_STAGES] > 8 ||
        (c[P_WARPS] != 4 && c[P_WARPS] != 8) || (c[P_KW] != 1 && c[P_KW] != 2 && c[P_KW] != 4) ||
        (vec != 2 && vec != 4 && vec != 8) || c[P_WAVES] < 1 || c[P_WAVES] > 8 ||
        (c[P_CLUSTER] & ~1))
        return sm_reject(R_RANGE, why, len);
    int fp32 = c[P_TYPE] == 2;
    if ((!fp32 && c[P_BN] > 256) || (fp32 && vec == 8))
        return sm_reject(R_KIND, why, len);
    if (fp32) {
        int cols = c[P_WARPS] % c[P_KW] == 0 ? sm_fp32_columns(c) : 0;
        if ((c[P_BK] / c[P_KW]) % 4 || (cols != 1 && cols != 2 && cols != 4))
            return sm_reject(R_FP32_SPLIT, why, len);
        if (mt * cols > 128)
            return sm_reject(R_FP32_REGS, why, len);
    }
    if (c[P_CLUSTER] && (c[P_WAVES] != 1 || (dev && dev->cc_major < 9)))
        return sm_reject(R_CLUSTER, why, len);
    int nwarps = c[P_WARPS] / c[P_KW];
    if (!fp32 && (c[P_WARPS] % c[P_KW] || (c[P_BK] / 16) % c[P_KW] || c[P_BN] % (16 * nwarps)))
        return sm_reject(R_SPLIT, why, len);
    if (!fp32 && (c[P_BN] / nwarps / 16) * (mt / 8) * 4 > 64)
        return sm_reject(R_REGS, why, len);
    long long limit = (dev && dev->smem_per_block_optin > 0 ? dev->smem_per_block_optin
                                                             : 227 * 1024) - SM_SMEM_RESERVE;
    if (sm_smem(c) > limit)
        return sm_reject(R_SMEM, why, len);
    return 1;
}

/* TYPE of a problem's kind, -1 if the family does not compute it: FP16 0, BF16 1, exact FP32 2
 * (not TF32 math); row-major canonical form, ops N or T, any batch. */
static int sm_type_of(const tpl_problem *p)
{
    if ((unsigned)p->op_a > AT_OP_T || (unsigned)p->op_b > AT_OP_T ||
        p->order != AT_ROW_MAJOR || p->batch < 0 || p->math != AT_MATH_DEFAULT)
        return -1;
    return p->dtype == AT_R_16F ? 0 : p->dtype == AT_R_16BF ? 1 : p->dtype == AT_R_32F ? 2 : -1;
}

/* 1 if p runs as its mirror C^T = op(B)^T op(A)^T: FP32 whose n is below its m (the kernel's
 * rows are then n, its columns m, its A op(B)^T and its B op(A)^T, and it stores C
 * transposed). The 16-bit types never mirror. */
int tpl_smallm_mirrored(const tpl_problem *p)
{
    return p->n_dims == 3 && sm_type_of(p) == 2 && p->dims[1] < p->dims[0];
}

/* The rows of the kernel's problem (m, or n where mirrored): the side that MT holds. */
static long long sm_narrow(const tpl_problem *p)
{
    return tpl_smallm_mirrored(p) ? p->dims[1] : p->dims[0];
}

/* The ops of the kernel's problem: op(A) and op(B), or where mirrored op(B)^T's (OPA = 1 - op
 * of B: B of op N, k x n, is its transpose stored k x n') and op(A)^T's. */
static void sm_kernel_ops(const tpl_problem *p, int *opa, int *opb)
{
    int a = p->op_a == AT_OP_T, b = p->op_b == AT_OP_T;
    *opa = tpl_smallm_mirrored(p) ? 1 - b : a;
    *opb = tpl_smallm_mirrored(p) ? 1 - a : b;
}

/* FP16 and BF16 with m <= 64, FP32 with m or n <= 64: larger ones are the large-tile families'
 * (a block holds all of the narrow side). */
static int sm_accepts(const tpl_problem *p)
{
    return p->n_dims == 3 && sm_type_of(p) >= 0 && sm_narrow(p) <= SM_MAX_M;
}

/* The MT that serves m rows: the smallest of 8, 16, 32, 64 that holds them. */
static int sm_mt_for(long long m)
{
    return m <= 8 ? 8 : m <= 16 ? 16 : m <= 32 ? 32 : 64;
}

extern const tpl_family tpl_smallm;

/* A configuration serves a problem of its kind (TYPE, and the kernel's ops: mirrored for a
 * narrow n in FP32) whose narrow side its MT holds with the least padding (a larger MT
 * computes the same C with more idle mma columns or FFMA rows). */
static int sm_applicable(const int *c, const tpl_problem *p)
{
    int opa = 0, opb = 0;
    sm_kernel_ops(p, &opa, &opb);
    if (!tpl_family_accepts(&tpl_smallm, p) || sm_type_of(p) != c[P_TYPE] || opa != c[P_OPA] ||
        opb != c[P_OPB])
        return 0;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    if (m < 1 || n < 1 || k < 0 || m > SM_MAX_DIM || n > SM_MAX_DIM || k > SM_MAX_DIM)
        return 0;
    return c[P_MT] == sm_mt_for(sm_narrow(p));
}

static int sm_deterministic(const int *cfg)
{
    (void)cfg;      /* K slices are summed in slice order by one block: no float atomics */
    return 1;
}

/* ---- run ---- */

/* 1 if operand o allows cp.async chunks of w elements of esz bytes: base, ld and batch
 * stride. */
static int sm_aligned(const tpl_operand *o, int esz, int w, long long batch)
{
    return o->ptr % (unsigned long long)(w * esz) == 0 && o->ld % w == 0 &&
           (batch <= 1 || o->batch_stride % w == 0);
}

int tpl_smallm_slices(const int *c, long long tiles, long long rows, long long k,
                      long long resident)
{
    long long steps = tpl_cdiv(k > 0 ? k : 0, c[P_BK]);
    long long want = resident * c[P_WAVES];
    if (tiles < 1 || rows < 1 || steps < 2 * SM_MIN_SLICE_STEPS || tiles * 2 > want)
        return 1;
    long long slices = want / tiles;
    if (slices > steps / SM_MIN_SLICE_STEPS)
        slices = steps / SM_MIN_SLICE_STEPS;
    /* the last block reads slices x rows x BN partial floats, the slice's blocks read BN x k /
     * slices elements of B each: keep the first within a quarter of the second */
    while (slices > 1 && slices * slices * 8 * rows > k)
        slices--;
    if (slices > SM_MAX_SLICES)
        slices = SM_MAX_SLICES;
    if (c[P_CLUSTER] && slices > SM_MAX_CLUSTER_SLICES)
        slices = SM_MAX_CLUSTER_SLICES;
    while (slices > 1 && slices * tiles * c[P_MT] * c[P_BN] * 4 > SM_MAX_WORKSPACE)
        slices /= 2;
    if (slices < 2)
        return 1;
    /* every slice non-empty: the same stages per slice, the last one shorter */
    return (int)tpl_cdiv(steps, tpl_cdiv(steps, slices));
}

static at_status sm_run(at_exec *ex, const int *cfg, tpl_args *args)
{
    const tpl_problem *p = &args->problem;
    at_status s = tpl_check_problem(ex, &tpl_smallm, p);
    if (s != AT_OK)
        return s;
    int opa = 0, opb = 0;
    sm_kernel_ops(p, &opa, &opb);
    if (sm_type_of(p) != cfg[P_TYPE] || opa != cfg[P_OPA] || opb != cfg[P_OPB])
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "smallm: configuration TYPE=%d OPA=%d OPB=%d does "
                       "not compute this problem's type and ops", cfg[P_TYPE], cfg[P_OPA],
                       cfg[P_OPB]);
    long long m64 = p->dims[0], n64 = p->dims[1], k64 = p->dims[2], batch = tpl_problem_batch(p);
    if (m64 < 0 || n64 < 0 || k64 < 0 || m64 > SM_MAX_DIM || n64 > SM_MAX_DIM ||
        k64 > SM_MAX_DIM)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "smallm: sizes %lldx%lldx%lld out of range", m64,
                       n64, k64);
    int m = (int)m64, n = (int)n64, k = (int)k64;
    if (m == 0 || n == 0)
        return AT_OK;
    s = tpl_check_gemm_operands(ex, &tpl_smallm, args, m, n, k, p->op_a == AT_OP_T,
                                p->op_b == AT_OP_T);
    if (s != AT_OK)
        return s;
    const tpl_operand *oa = &args->operand[TPL_GEMM_A], *ob = &args->operand[TPL_GEMM_B],
                      *oc = &args->operand[TPL_GEMM_C];
    /* the mirror: the kernel's rows are n, its columns m, its A the caller's B and its B the
     * caller's A (the ops as sm_kernel_ops), C stored transposed */
    int transposed = tpl_smallm_mirrored(p);
    if (transposed) {
        const tpl_operand *o = oa;
        oa = ob;
        ob = o;
        int t = m;
        m = n;
        n = t;
    }
    long long tiles = tpl_cdiv(m, cfg[P_MT]) * tpl_cdiv(n, cfg[P_BN]);
    if (tiles > SM_MAX_DIM)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "smallm: %lld tiles of %dx%d above 2^31 - 1",
                       tiles, cfg[P_MT], cfg[P_BN]);
    int esz = sm_esz(cfg);
    int va = oa->ptr && sm_aligned(oa, esz, cfg[P_VEC], batch);
    int vb = ob->ptr && sm_aligned(ob, esz, cfg[P_VEC], batch);
    unsigned threads = (unsigned)sm_threads(cfg), smem = (unsigned)sm_smem(cfg);
    int per_sm = 0;
    if ((s = ex_occupancy(ex, "smallm_gemm", threads, smem, &per_sm)) != AT_OK)
        return s;
    long long sms = ex->dev && ex->dev->sm_count > 0 ? ex->dev->sm_count : 1;
    long long steps = tpl_cdiv(k, cfg[P_BK]);
    long long rows = m < cfg[P_MT] ? m : cfg[P_MT];
    long long sa = batch > 1 ? oa->batch_stride : 0, sb = batch > 1 ? ob->batch_stride : 0,
              sc = batch > 1 ? oc->batch_stride : 0;
    long long lda = oa->ld, ldb = ob->ld, ldc = oc->ld;
    float alpha = (float)args->scalar[TPL_GEMM_ALPHA], beta = (float)args->scalar[TPL_GEMM_BETA];
    for (long long z = 0; z < batch; z += 65535) {
        long long products = batch - z < 65535 ? batch - z : 65535;
        int slices = tpl_smallm_slices(cfg, tiles * products, rows, k, per_sm * sms);
        int per_slice = (int)(slices > 1 ? tpl_cdiv(steps, slices) : (steps > 0 ? steps : 1));
        CUdeviceptr work = 0, counters = 0;
        int cluster = cfg[P_CLUSTER] && slices > 1;  /* the slices sum in shared memory */
        if (slices > 1 && !cluster) {
            size_t launch_tiles = (size_t)(tiles * products);
            size_t bytes = launch_tiles * (size_t)slices * (size_t)cfg[P_MT] * (size_t)cfg[P_BN] *
                           4;
            if ((s = ex_scratch(ex, SM_SLOT_WORK, bytes, &work)) != AT_OK ||
                (s = ex_scratch_zeroed(ex, SM_SLOT_COUNTERS, launch_tiles * 4, &counters)) !=
                    AT_OK)
                return s;
        }
        CUdeviceptr A = (oa->ptr ? oa->ptr : oc->ptr) + (CUdeviceptr)(z * sa * esz);
        CUdeviceptr B = (ob->ptr ? ob->ptr : oc->ptr) + (CUdeviceptr)(z * sb * esz);
        CUdeviceptr C = oc->ptr + (CUdeviceptr)(z * sc * esz);
        /* TYPE 2's kernel takes one more argument: C stored transposed */
        void *a[] = {&A, &B, &C, &lda, &ldb, &ldc, &sa, &sb, &sc, &m, &n, &k, &alpha, &beta,
                     &per_slice, &va, &vb, &work, &counters, &transposed};
        unsigned grid[3] = {(unsigned)tiles, (unsigned)slices, (unsigned)products},
                 block[3] = {threads, 1, 1}, shape[3] = {1, (unsigned)slices, 1};
        s = cluster ? ex_launch_cluster(ex, "smallm_gemm", grid, block, shape, smem, a)
                    : ex_launch(ex, "smallm_gemm", grid[0], grid[1], grid[2], threads, 1, 1,
                                smem, a);
        if (s != AT_OK)
            return s;
    }
    return AT_OK;
}

/* Inputs of a problem (tpl_prepare_gemm_beta0: A and B uniform in [-1, 1) rounded to the type,
 * alpha 1.5, beta 0 over a NaN C, the compensated float64 reference of every product). A
 * mirrored FP32 problem is prepared as given (run() mirrors it). */
static at_status sm_prepare(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                            tpl_workset *ws)
{
    at_status s = tpl_check_gemm_prepare(ref, &tpl_smallm, p);
    return s != AT_OK ? s : tpl_prepare_gemm_beta0(ref, p, seed, ws);
}

/* The verification rule of the tensor-core family, relative Frobenius error against the
 * float64 reference: two roundings of C (2 u of the type) plus the FP32 accumulation,
 * (4 sqrt(k) + k / 8) 2^-24. FP32 (exact, FFMA) skinny's and bgemm's rule, 4e-7 sqrt(k) + 1e-6
 * (about 3 sqrt(k) 2^-24 of accumulation and the rounding of C). A wrong fragment, a lost
 * slice or a race gives 1e-2 or more. */
static double sm_tolerance(const tpl_problem *p)
{
    double k = p->n_dims == 3 && p->dims[2] > 0 ? (double)p->dims[2] : 1.0;
    if (p->dtype == AT_R_32F)
        return 4e-7 * sqrt(k) + 1e-6;
    return 2.0 * tpl_unit_roundoff(p->dtype) + (4.0 * sqrt(k) + k / 8.0) * ldexp(1.0, -24);
}

/* sm_80+: mma.sync m16n8k16 in BF16, ldmatrix, cp.async (FP32: cp.async); nothing older.
 * CLUSTER 1: sm_90+ (clusters, ld.shared::cluster). */
static const char *sm_target_arch(const int *cfg, const char *arch)
{
    int cc = 0;
    return sscanf(arch, "sm_%d", &cc) == 1 && cc >= (cfg[P_CLUSTER] ? 90 : 80) ? arch : NULL;
}

/* The problem's TYPE and the kernel's ops (mirrored for FP32 with n below m), the MT that holds
 * its narrow side; FP32 narrows VEC 8 to 4 (16 bytes). */
static void sm_fit_kind(int *cfg, const tpl_problem *p)
{
    int t = sm_type_of(p), opa = 0, opb = 0;
    sm_kernel_ops(p, &opa, &opb);
    cfg[P_TYPE] = t >= 0 ? t : 1;
    cfg[P_OPA] = opa;
    cfg[P_OPB] = opb;
    if (p->n_dims == 3)
        cfg[P_MT] = sm_mt_for(sm_narrow(p));
    if (cfg[P_TYPE] == 2 && cfg[P_VEC] > 4)
        cfg[P_VEC] = 4;
}

#define SM_CFG(rest) "TYPE=1,OPA=0,OPB=0," rest ",VEC=8,WAVES=1"

/* Built-in choices per m class (TYPE, ops and MT fitted to the problem), reasoned, not yet
 * measured: BN 128 columns of B per block in BK 64 stages, 4 stages (3 loads of 16-18 KiB in
 * flight per block, 2-3 blocks per SM: about 100-150 KiB of B in flight per SM, above the
 * ~40 KiB that one microsecond of HBM latency at 4.8 TB/s / 132 SMs needs), one wave of blocks
 * with K slices (WAVES 1). m <= 16: 4 warps of 32 columns each; m 17..64: 8 warps in two K
 * groups (KW 2) so that each warp's 2 x MT/8 accumulator tiles stay within 64 registers and an
 * SM has 16 warps to hide the mma and ldmatrix latency. */
#define SM_F32 TPL_BIT(AT_R_32F)
#define SM_F32_CFG(rest) "TYPE=2,OPA=0,OPB=0," rest ",VEC=4,WAVES=1"
static const tpl_default sm_defaults[] = {
    /* FP32 (TYPE 2, FFMA), reasoned, not yet measured. A narrow side of at most 16 rows: 4
     * columns per thread (4 warps in four K groups of 32 threads along n: BN 128), so that a
     * K step's 4 values of B and 4 of A per 4 rows feed 16 FFMA; 3 stages of 128 x 32 (20 KiB),
     * 3 blocks per SM: about 120 KiB of the wide operand in flight per SM. 17..64 rows: 2
     * columns per thread (two K groups of 64 threads), up to 128 accumulators, 2 blocks per
     * SM. A row's max_m or max_n takes a narrow m or n (the mirror). */
    {.cc_min = 80, .dtypes = SM_F32, .max_m = 16,
     .config = SM_F32_CFG("MT=16,BN=128,BK=32,STAGES=3,WARPS=4,KW=4"),
     .origin = "FP32 m <= 16: 4 columns x 16 rows per thread, 3 stages of 128 x 32 (reasoned)"},
    {.cc_min = 80, .dtypes = SM_F32, .max_n = 16,
     .config = SM_F32_CFG("MT=16,BN=128,BK=32,STAGES=3,WARPS=4,KW=4"),
     .origin = "FP32 n <= 16 (mirrored): 4 columns x 16 rows per thread (reasoned)"},
    {.cc_min = 80, .dtypes = SM_F32,
     .config = SM_F32_CFG("MT=64,BN=128,BK=32,STAGES=3,WARPS=4,KW=2"),
     .origin = "FP32 narrow side 17..64: 2 columns x MT rows per thread, 3 stages of 128 x 32 "
               "(reasoned)"},
    {.cc_min = 80, .max_m = 8,
     .config = SM_CFG("MT=16,BN=128,BK=64,STAGES=4,WARPS=4,KW=1"),
     .origin = "m <= 8: 4 warps of 32 columns, 4 stages of 128 x 64 (reasoned)"},
    {.cc_min = 80, .max_m = 16,
     .config = SM_CFG("MT=16,BN=64,BK=128,STAGES=3,WARPS=8,KW=4"),
     .origin = "m 9..16: the 16 x 8192 x 8192 BF16 winner (30 s; 0.69x -> 0.85x cuBLAS)"},
    {.cc_min = 80, .config = SM_CFG("MT=64,BN=128,BK=64,STAGES=4,WARPS=8,KW=2"),
     .origin = "m 17..64: 8 warps in two K groups, 4 stages of 128 x 64 (reasoned)"},
};

/* Without a measurement at the exact shape, the smallm family serves FP16 and BF16 calls with
 * m <= 16 (the row-major canonical form's m: a column-major call's n; at m = 32 and 64 its rows
 * ran 0.71x and 0.54x cuBLAS where the tensor-core family's 64-row wgmma tiles with a
 * wave-filling split-K ran 0.89-0.92x at m = 64; at m = 1, 8 and 16 0.99x, 0.83x, 0.87x: H200,
 * 2026-11-29) whose B is large enough
 * (n >= 256 and n k x batch >= 2^22 elements, 8 MiB) that reading it dominates the launch, and
 * whose B rows (n for op N, k for op T) are a multiple of 8 elements, so that B at its tightest
 * leading dimension streams in 16-byte cp.async chunks (elsewhere the kernel loads B element by
 * element, correct but far from the bandwidth); ahead of skinny (CUDA cores) and of the
 * large-tile family (tcgemm). Up to m = 32 it keeps a B of less than 2^24 elements, whose calls
 * are too small for the 64-row tiles' split to pay and too large for skinny's CUDA cores
 * (21 x 1592 x 2862 BF16: 0.74x on smallm, 0.53x on skinny). */
#define SM_CLAIMS_MAX_M 16
#define SM_CLAIMS_MAX_M_SMALL_B 32
/* FP32 (TYPE 2; reasoned, not yet measured): a narrow side (m, or n through the mirror) of at
 * most 16 over a wide operand of at least 2^24 elements (64 MiB: issue 33's m x 8192 x 8192)
 * whose rows are a multiple of 4 floats (16-byte cp.async at the tightest leading dimension),
 * where the FFMA work per byte read (2 x 16 / 4 = 8 flops) stays below the CUDA cores' rate and
 * the call is bound by reading the wide operand once; ahead of skinny, whose register tiles
 * re-read it per tile row. Other FP32 calls with a side of at most 64 reach the family through
 * the runtime's trial of every family's built-in choice (up to 2^35 flops, docs/serving.md). */
#define SM_CLAIMS_F32_MAX_NARROW 16
#define SM_CLAIMS_F32_MIN_WIDE 16777216.0
static int sm_claims_fp32(const tpl_problem *p)
{
    int mirrored = tpl_smallm_mirrored(p);
    long long narrow = sm_narrow(p), wide = mirrored ? p->dims[0] : p->dims[1], k = p->dims[2];
    /* the wide operand's stored rows: B (k x n, or n x k for op T), or through the mirror A
     * (m x k, or k x m for op T) */
    long long row = mirrored ? (p->op_a == AT_OP_T ? p->dims[0] : k)
                             : (p->op_b == AT_OP_T ? k : p->dims[1]);
    double elems = (double)wide * (double)k * (double)tpl_problem_batch(p);
    return narrow >= 1 && narrow <= SM_CLAIMS_F32_MAX_NARROW && wide >= 256 && k >= 256 &&
           row % 4 == 0 && elems >= SM_CLAIMS_F32_MIN_WIDE;
}

static int sm_claims(const tpl_problem *p, const at_device_info *dev)
{
    (void)dev;
    if (sm_accepts(p) && sm_type_of(p) == 2)
        return sm_claims_fp32(p);
    if (!sm_accepts(p) || p->dims[0] < 1 || p->dims[0] > SM_CLAIMS_MAX_M_SMALL_B)
        return 0;
    long long row = p->op_b == AT_OP_T ? p->dims[2] : p->dims[1];
    double n = (double)p->dims[1], k = (double)p->dims[2];
    double b_elems = n * k * (double)tpl_problem_batch(p);
    if (p->dims[0] > SM_CLAIMS_MAX_M && b_elems >= 16777216.0)
        return 0;
    return row % 8 == 0 && n >= 256 && b_elems >= 4194304.0;
}

/* the first is one the portable default_config (MT 64) serves */
static const tpl_problem sm_tuning[] = {
    {.n_dims = 3, .dims = {64, 8192, 8192}, .dtype = AT_R_16BF},
    {.n_dims = 3, .dims = {1, 8192, 8192}, .dtype = AT_R_16BF},
    {.n_dims = 3, .dims = {16, 8192, 8192}, .dtype = AT_R_16BF},
    {.n_dims = 3, .dims = {8, 8192, 8192}, .dtype = AT_R_16F, .op_b = AT_OP_T},
    {.n_dims = 3, .dims = {16, 8192, 8192}, .dtype = AT_R_32F},
    {.n_dims = 3, .dims = {17, 11119, 1775}, .dtype = AT_R_32F, .op_a = AT_OP_T, .batch = 6},
    {.n_dims = 3, .dims = {5115, 51, 1475}, .dtype = AT_R_32F, .op_b = AT_OP_T, .batch = 4},
};

static int sm_tile_of(const int *cfg, tpl_tile *t)
{
    memset(t, 0, sizeof *t);
    t->bm = cfg[P_MT];
    t->bn = cfg[P_BN];
    t->splitk = 1;
    t->products = 1;
    t->elem_bytes = sm_esz(cfg);
    t->threads = sm_threads(cfg);
    t->smem = sm_smem(cfg);
    return t->bm > 0 && t->bn > 0 && t->threads > 0;
}

const tpl_family tpl_smallm = {
    .name = "smallm",
    .source = "smallm.cu",
    .fixed_options = "",
    .summary = "GEMM for m <= 64 over a large N x K (FP16, BF16; row-major, ops N/T, batches) "
               "on the tensor cores: C^T = op(B)^T op(A)^T with mma m16n8k16 (m on the mma's "
               "8 side), B streamed through a cp.async pipeline, K split across blocks, slices "
               "summed in order; exact FP32 with m or n <= 64 on the CUDA cores (FFMA; a "
               "narrow n through the mirrored problem)",
    .n_dims = 3,
    .dim_names = {"m", "n", "k"},
    .metric_is_flops = 1,
    .hidden = 0,
    .n_params = P_COUNT,
    .params = {
        {"TYPE", 3, {1, 0, 2}, "element type: 1 bfloat16, 0 half (FP32 accumulation, tensor "
                               "cores), 2 float (exact, FFMA); must match the problem"},
        {"OPA", 2, {0, 1}, "op(A): 0 N (m x k), 1 T (stored k x m); must match the problem "
                           "(a mirrored FP32 problem: 1 - op(B))"},
        {"OPB", 2, {0, 1}, "op(B): 0 N (k x n), 1 T (stored n x k); must match the problem "
                           "(a mirrored FP32 problem: 1 - op(A))"},
        {"MT", 4, {8, 16, 32, 64}, "rows of C per block (mma n8 tiles of m): the smallest that "
                                   "holds the problem's m (a mirrored FP32 problem's n)"},
        {"BN", 4, {128, 64, 256, 512}, "columns of C per block (rows of op(B)^T); 512 FP32 "
                                       "only"},
        {"BK", 3, {64, 32, 128}, "K depth of one pipeline stage"},
        {"STAGES", 3, {4, 3, 6}, "pipeline stages in shared memory (STAGES - 1 loads in "
                                 "flight)"},
        {"WARPS", 2, {4, 8}, "warps per block"},
        {"KW", 3, {1, 2, 4}, "warp groups splitting each stage's k16 steps (the rest split "
                             "BN)"},
        {"VEC", 2, {8, 4}, "elements per cp.async where the operand is aligned to it (else "
                           "element loads); FP32 4 (or 2)"},
        {"WAVES", 2, {1, 2}, "K slices across blocks until the launch fills this many waves "
                             "of resident blocks", .host_only = 1},
        {"CLUSTER", 2, {0, 1}, "1 (sm_90): a tile's K slices (at most 8) are one thread-block "
                               "cluster summing their partials from each other's shared "
                               "memory; 0: through global memory, the last block sums",
         .omit_first = 1},
    },
    .valid = sm_valid,
    .tile_of = sm_tile_of,
    .accepts = sm_accepts,
    .applicable = sm_applicable,
    .deterministic = sm_deterministic,
    .run = sm_run,
    .work = tpl_gemm_work_beta0,
    .work_done = NULL,
    .prepare = sm_prepare,
    .check = tpl_check_gemm,
    .tolerance = sm_tolerance,
    .target_arch = sm_target_arch,
    .default_config = "TYPE=1,OPA=0,OPB=0,MT=64,BN=128,BK=64,STAGES=4,WARPS=8,KW=2,VEC=8,WAVES=1",
    .n_defaults = (int)(sizeof sm_defaults / sizeof sm_defaults[0]),
    .defaults = sm_defaults,
    .fit_kind = sm_fit_kind,
    .claims = sm_claims,
    .n_tuning_problems = (int)(sizeof sm_tuning / sizeof sm_tuning[0]),
    .tuning_problems = sm_tuning,
    .n_default_tuning_problems = 2,     /* m = 64 and m = 1; the rest with --kernel smallm */
};
