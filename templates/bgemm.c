/* bgemm.c: descriptor of the bgemm family (templates/bgemm.cu): strided batched GEMM of small
 * matrices in FP32 or FP64, its space and rules, the persistent launch, inputs and verification. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tpl.h"

/* Parameter order; must match the params table below. */
enum {
    P_TYPE, P_MMA, P_OPA, P_OPB, P_BM, P_BN, P_BK, P_G, P_TM, P_TN, P_STAGES, P_VEC, P_SYNC, P_HINT,
    P_LDF, P_GRID, P_MINB, P_COUNT
};

#define BG_MAX_DIM 0x7fffffffLL
#define BG_MAX_BATCH (1LL << 40)

/* ---- rejection reasons (each reachable; tests/test_bgemm.c scans for every one) ---- */
enum {
    R_RANGE, R_MMA_TYPE, R_VEC, R_TILE, R_ASPECT, R_THREADS, R_REGS, R_REUSE, R_GROUP, R_SMEM,
    R_SYNC, R_LDF, R_MINB, R_COUNT
};

const char *const tpl_bgemm_reasons[R_COUNT] = {
    [R_RANGE] = "TYPE, OPA, OPB, SYNC and LDF are 0 or 1, HINT and GRID 0..2, MMA 0..3, VEC 1, 2 "
                "or 4, STAGES 1..4, G 1..8, MINB 1..4, tiles positive",
    [R_MMA_TYPE] = "MMA 1..3 (FP64 tensor cores: mma.sync m8n8k4, sm_80+; m16n8k4 and m16n8k8, "
                   "sm_90+) compute TYPE 1 (double) only, MMA 2 and 3 on sm_90+ devices only",
    [R_VEC] = "VEC is one 16-byte copy (4 floats, 2 doubles) or element copies (1): narrower "
              "vectors add nothing (the kernel copies elements where alignment fails); VEC 1 "
              "and STAGES 1 (no copy in flight) only in the fallback shape (16 x 16 tiles, "
              "one product of one warp, TM 2, TN 4)",
    [R_TILE] = "tiles must divide: BM by TM and BN by TN (MMA 1..3: by 8 TM (MMA 2, 3: 16 TM) "
               "and 8 TN, the warp's mma tiles), BK by one 16-byte read (MMA: by the mma's depth, "
               "4; MMA 3: 8)",
    [R_ASPECT] = "tile aspect beyond 2:1 (BM:BN or TM:TN) moves more data per FMA",
    [R_THREADS] = "G x threads per product must be 32..512 threads, whole warps",
    [R_REGS] = "accumulators and fragments above 128 registers per thread (FFMA: TM x TN "
               "elements and the fragments; MMA: TM x TN tiles of 2 (MMA 2, 3: 4) doubles)",
    [R_REUSE] = "thread tile below 8 elements (TM x TN < 8): too few FMAs per shared-memory read",
    [R_GROUP] = "several products per block (G > 1) only for tiles of at most 64 x 64 (small "
                "matrices)",
    [R_SMEM] = "STAGES x G x (A and B tiles, padded) above the device's shared memory per block",
    [R_SYNC] = "SYNC 1 (each product's threads copy its tiles and meet at their own barrier) needs "
               "whole warps per product and several products per block (G > 1) or one warp per "
               "product (the barrier is then __syncwarp); elsewhere it is SYNC 0",
    [R_LDF] = "LDF 1 (the copy fast path of interior tiles) needs 16-byte copies (VEC > 1) and, for "
              "the A and B tiles alike, copying threads a multiple of the 16-byte chunks of a "
              "tile row and a tile's chunks a multiple of the copying threads (each thread's "
              "copies one column, rows apart); elsewhere it would compile the same kernel as LDF 0",
    [R_MINB] = "MINB blocks of the block's threads must fit an SM (threads, shared memory with 1 KB "
               "reserved per block) and leave each thread the registers of its accumulators and "
               "fragments plus 40 (64K registers / (MINB threads))",
};
const int tpl_bgemm_n_reasons = R_COUNT;

/* Writes reason r into why and returns 0 (tpl_reject: no formatting). */
static int bg_reject(int r, char *why, size_t len)
{
    return tpl_reject(why, len, tpl_bgemm_reasons[r]);
}

static int bg_esz(const int *c)
{
    return c[P_TYPE] ? 8 : 4;
}

/* Rows of one mma tile: 16 for m16n8k4 and m16n8k8 (MMA 2, 3), else 8. */
static int bg_mr(const int *c)
{
    return c[P_MMA] >= 2 ? 16 : 8;
}

/* Threads of one product (as TPP in bgemm.cu). */
static int bg_tpp(const int *c)
{
    if (c[P_MMA])
        return 32 * (c[P_BM] / (bg_mr(c) * c[P_TM])) * (c[P_BN] / (8 * c[P_TN]));
    return (c[P_BM] / c[P_TM]) * (c[P_BN] / c[P_TN]);
}

static int bg_threads(const int *c)
{
    return c[P_G] * bg_tpp(c);
}

/* Dynamic shared memory: STAGES x G x (A tile + B tile), rows padded by 16 bytes (MMA: 32). */
static long long bg_smem(const int *c)
{
    long long esz = bg_esz(c), pade = (c[P_MMA] ? 32 : 16) / esz;
    long long a_rows = c[P_OPA] ? c[P_BK] : c[P_BM], a_cols = c[P_OPA] ? c[P_BM] : c[P_BK];
    long long b_rows = c[P_OPB] ? c[P_BN] : c[P_BK], b_cols = c[P_OPB] ? c[P_BK] : c[P_BN];
    long long stage = c[P_G] * (a_rows * (a_cols + pade) + b_rows * (b_cols + pade));
    return c[P_STAGES] * stage * esz;
}

/* 1 for the fallback shape: 16 x 16 tiles, one product of one warp, TM 2, TN 4. */
static int bg_fallback_shape(const int *c)
{
    return c[P_BM] == 16 && c[P_BN] == 16 && c[P_G] == 1 && c[P_TM] == 2 && c[P_TN] == 4 &&
           !c[P_MMA];
}

/* 1 where bgemm.cu's copy fast path (LDF 1) exists: VEC > 1 and, for the A and B tiles, the
 * copying threads LN (SYNC 1: a product's, else the block's) a multiple of a tile row's
 * chunks CV and the tile's chunks PER a multiple of LN. */
static int bg_fast_copies(const int *c)
{
    if (c[P_VEC] < 2)
        return 0;
    int ln = c[P_SYNC] ? bg_tpp(c) : bg_threads(c);
    int a_rows = c[P_OPA] ? c[P_BK] : c[P_BM], a_cols = c[P_OPA] ? c[P_BM] : c[P_BK];
    int b_rows = c[P_OPB] ? c[P_BN] : c[P_BK], b_cols = c[P_OPB] ? c[P_BK] : c[P_BN];
    int rows[2] = {a_rows, b_rows}, cols[2] = {a_cols, b_cols};
    for (int i = 0; i < 2; i++) {
        int cv = cols[i] / c[P_VEC], per = rows[i] * cv;
        if (cv < 1 || ln % cv || per % ln)
            return 0;
    }
    return 1;
}

/* A rule of bg_rules applies once every parameter it reads is fixed: the first nf of a
 * prefix (valid_prefix), all P_COUNT of a configuration. A rule that fails on a prefix
 * fails on each of its completions, so valid() rejects them all. */
#define BG_FIXED(p) ((p) < nf)

/* The rules of valid() that read only the first nf parameters of c (all P_COUNT: valid()
 * itself; fewer: valid_prefix, the rules on later parameters skipped); 0 with the reason
 * of the first that fails, as valid(). */
static int bg_rules(const int *c, int nf, const at_device_info *dev, char *why, size_t len)
{
    if (why && len)
        why[0] = '\0';
    for (int p = P_TYPE; p <= P_OPB && BG_FIXED(p); p++)
        if (c[p] < 0 || c[p] > (p == P_MMA ? 3 : 1))
            return bg_reject(R_RANGE, why, len);
    if ((BG_FIXED(P_SYNC) && (c[P_SYNC] < 0 || c[P_SYNC] > 1)) ||
        (BG_FIXED(P_HINT) && (c[P_HINT] < 0 || c[P_HINT] > 2)) ||
        (BG_FIXED(P_LDF) && (c[P_LDF] < 0 || c[P_LDF] > 1)) ||
        (BG_FIXED(P_GRID) && (c[P_GRID] < 0 || c[P_GRID] > 2)) ||
        (BG_FIXED(P_MINB) && (c[P_MINB] < 1 || c[P_MINB] > 4)))
        return bg_reject(R_RANGE, why, len);
    for (int p = P_BM; p <= P_VEC && BG_FIXED(p); p++)
        if (c[p] < 1)
            return bg_reject(R_RANGE, why, len);
    if ((BG_FIXED(P_STAGES) && c[P_STAGES] > 4) || (BG_FIXED(P_G) && c[P_G] > 8) ||
        (BG_FIXED(P_VEC) && c[P_VEC] != 1 && c[P_VEC] != 2 && c[P_VEC] != 4))
        return bg_reject(R_RANGE, why, len);
    if (BG_FIXED(P_MMA) &&
        ((c[P_MMA] && !c[P_TYPE]) || (c[P_MMA] >= 2 && dev && dev->cc_major < 9)))
        return bg_reject(R_MMA_TYPE, why, len);
    if (!BG_FIXED(P_TN))
        return 1;       /* every rule below reads the tile */
    int esz = bg_esz(c), kv = 16 / esz;
    if (BG_FIXED(P_VEC) && ((c[P_VEC] != 1 && c[P_VEC] != kv) ||
                            ((c[P_VEC] == 1 || c[P_STAGES] == 1) && !bg_fallback_shape(c))))
        return bg_reject(R_VEC, why, len);
    int mt = c[P_MMA] ? bg_mr(c) * c[P_TM] : c[P_TM], nt = c[P_MMA] ? 8 * c[P_TN] : c[P_TN];
    int mk = c[P_MMA] == 3 ? 8 : c[P_MMA] ? 4 : kv;
    if (c[P_BM] % mt || c[P_BN] % nt || c[P_BK] % mk ||
        (BG_FIXED(P_VEC) && (c[P_BK] % c[P_VEC] || c[P_BM] % c[P_VEC] || c[P_BN] % c[P_VEC])))
        return bg_reject(R_TILE, why, len);
    if (c[P_BM] > 2 * c[P_BN] || c[P_BN] > 2 * c[P_BM] || c[P_TM] > 2 * c[P_TN] ||
        c[P_TN] > 2 * c[P_TM])
        return bg_reject(R_ASPECT, why, len);
    int threads = bg_threads(c);
    if (threads < 32 || threads > 512 || threads % 32 ||
        threads > (dev ? dev->max_threads_per_block : 1024))
        return bg_reject(R_THREADS, why, len);
    int words = esz / 4;
    int kq = c[P_MMA] == 3 ? 2 : 1;   /* m16n8k8: two k halves per fragment */
    int regs = c[P_MMA] ? c[P_TM] * c[P_TN] * bg_mr(c) / 2 +
                              2 * kq * (c[P_TM] * bg_mr(c) / 8 + c[P_TN])
                        : words * (c[P_TM] * c[P_TN] + kv * (c[P_TM] + c[P_TN]));
    if ((c[P_MMA] && c[P_TM] * c[P_TN] * bg_mr(c) / 4 > 64) || regs > 128 ||
        (long long)(regs + 40) * threads > (dev ? dev->regs_per_block : 65536))
        return bg_reject(R_REGS, why, len);
    if (!c[P_MMA] && c[P_TM] * c[P_TN] < 8)
        return bg_reject(R_REUSE, why, len);
    if (c[P_G] > 1 && c[P_BM] * c[P_BN] > 64 * 64)
        return bg_reject(R_GROUP, why, len);
    if (BG_FIXED(P_STAGES) && bg_smem(c) > (dev ? dev->smem_per_block_optin : 227 * 1024))
        return bg_reject(R_SMEM, why, len);
    if (BG_FIXED(P_SYNC) && c[P_SYNC] && (bg_tpp(c) % 32 || (c[P_G] == 1 && bg_tpp(c) != 32)))
        return bg_reject(R_SYNC, why, len);
    if (BG_FIXED(P_LDF) && c[P_LDF] && !bg_fast_copies(c))
        return bg_reject(R_LDF, why, len);
    if (BG_FIXED(P_MINB) && c[P_MINB] > 1 &&
        (threads * c[P_MINB] > (dev && dev->max_threads_per_sm ? dev->max_threads_per_sm : 2048) ||
         c[P_MINB] * (bg_smem(c) + 1024) > (dev && dev->smem_per_sm ? dev->smem_per_sm : 228 * 1024) ||
         (long long)(regs + 40) * threads * c[P_MINB] > (dev && dev->regs_per_sm ? dev->regs_per_sm : 65536)))
        return bg_reject(R_MINB, why, len);
    return 1;
}

static int bg_valid(const int *c, const at_device_info *dev, char *why, size_t len)
{
    return bg_rules(c, P_COUNT, dev, why, len);
}

/* valid_prefix: bg_rules on the fixed parameters (the tile rules once TN is fixed). */
static int bg_valid_prefix(const int *c, int n_fixed, const at_device_info *dev)
{
    return bg_rules(c, n_fixed, dev, NULL, 0);
}

/* The TYPE of a problem's kind, -1 if the family does not compute it. */
static int bg_type_of(const tpl_problem *p)
{
    if (p->order != AT_ROW_MAJOR || p->math != AT_MATH_DEFAULT ||
        (p->op_a != AT_OP_N && p->op_a != AT_OP_T) || (p->op_b != AT_OP_N && p->op_b != AT_OP_T))
        return -1;
    return p->dtype == AT_R_32F ? 0 : p->dtype == AT_R_64F ? 1 : -1;
}

/* FP32 (exact) or FP64, row-major canonical form, any ops, any batch count (one included). */
static int bg_accepts(const tpl_problem *p)
{
    return p->n_dims == 3 && bg_type_of(p) >= 0;
}

/* Smallest power of two >= x, at least lo. */
static long long bg_pow2(long long x, long long lo)
{
    long long v = lo;
    while (v < x)
        v *= 2;
    return v;
}

extern const tpl_family tpl_bgemm;

static int bg_applicable(const int *c, const tpl_problem *p)
{
    if (!tpl_family_accepts(&tpl_bgemm, p) || bg_type_of(p) != c[P_TYPE] ||
        (int)p->op_a != c[P_OPA] || (int)p->op_b != c[P_OPB])
        return 0;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2], batch = tpl_problem_batch(p);
    if (m < 1 || n < 1 || k < 0 || m > BG_MAX_DIM || n > BG_MAX_DIM || k > BG_MAX_DIM ||
        batch > BG_MAX_BATCH)
        return 0;
    /* Tiles no larger than the matrices need (a tile of twice the matrix only idles
     * threads), K steps of at least 16 where k allows (shorter ones only add barriers; the
     * fallback shape takes any), several products per block only where one tile
     * holds a whole product. */
    long long bk_max = bg_pow2(k, 8), bk_min = bk_max < 16 ? bk_max : 16;
    if (c[P_BM] > bg_pow2(m, 16) || c[P_BN] > bg_pow2(n, 16) || c[P_BK] > bk_max ||
        (c[P_BK] < bk_min && !bg_fallback_shape(c)))
        return 0;
    if (c[P_G] > 1 && (m > c[P_BM] || n > c[P_BN] || c[P_G] > batch))
        return 0;
    /* The per-product barriers, the streaming hints, the copy fast path, the grids, the
     * register bound and m16n8k8 serve the batched shapes
     * (products of 32 x 32 and more, thousands of them), so the default run's 16^3 problems
     * keep their exhaustive space and time. */
    if ((c[P_SYNC] || c[P_HINT] || c[P_LDF] || c[P_GRID] || c[P_MINB] > 1 || c[P_MMA] == 3) &&
        (m < 32 || n < 32))
        return 0;
    return 1;
}

static int bg_deterministic(const int *cfg)
{
    (void)cfg;      /* no atomics: each element is summed by one thread in K order */
    return 1;
}

/* MMA 1 needs sm_80+ (mma.sync m8n8k4 f64, cp.async), MMA 2 and 3 sm_90+ (m16n8k4, m16n8k8
 * f64); FFMA runs everywhere. */
static const char *bg_target_arch(const int *cfg, const char *arch)
{
    int cc = 0;
    if (cfg[P_MMA] && sscanf(arch, "sm_%d", &cc) == 1 && cc < (cfg[P_MMA] >= 2 ? 90 : 80))
        return NULL;
    return arch;
}

/* ---- run ---- */

/* 1 if operand o (element size esz) allows copies of vec elements: base, ld and batch stride. */
static int bg_aligned(const tpl_operand *o, int esz, int vec)
{
    return o->ptr % (unsigned long long)(vec * esz) == 0 && o->ld % vec == 0 &&
           o->batch_stride % vec == 0;
}

/* Blocks of the launch for `units` work units where `resident` blocks fit on the device:
 * GRID 0 the persistent grid (resident, at most units), 1 one block per unit (the hardware
 * schedules blocks as others finish), 2 persistent with the turns of GRID 0 spread evenly (units
 * / turns blocks, so no last turn runs on a few blocks). At most BG_MAX_DIM (the kernel's loop
 * takes what is left); at least 1. */
static long long bg_grid(int mode, long long resident, long long units)
{
    if (resident < 1)
        resident = 1;
    long long grid = resident < units ? resident : units;
    if (mode == 1)
        grid = units;
    else if (mode == 2 && units > resident)
        grid = tpl_cdiv(units, tpl_cdiv(units, resident));
    if (grid > BG_MAX_DIM)
        grid = BG_MAX_DIM;
    return grid > 0 ? grid : 1;
}

/* One launch for the whole batch. AT_ERR_UNSUPPORTED for a problem of another kind than cfg's
 * (type, ops), AT_ERR_INVALID_ARG for sizes out of range, leading dimensions too small,
 * negative strides or NULL operands (nothing launched); otherwise what the occupancy query
 * and the launch return, with ex's message. m or n 0: nothing to do. */
static at_status bg_run(at_exec *ex, const int *cfg, tpl_args *args)
{
    const tpl_problem *p = &args->problem;
    at_status s = tpl_check_problem(ex, &tpl_bgemm, p);
    if (s != AT_OK)
        return s;
    if (bg_type_of(p) != cfg[P_TYPE] || (int)p->op_a != cfg[P_OPA] || (int)p->op_b != cfg[P_OPB])
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "bgemm: configuration TYPE=%d OPA=%d OPB=%d does "
                       "not compute this problem's type and ops", cfg[P_TYPE], cfg[P_OPA],
                       cfg[P_OPB]);
    long long m64 = p->dims[0], n64 = p->dims[1], k64 = p->dims[2], batch = tpl_problem_batch(p);
    if (m64 < 0 || n64 < 0 || k64 < 0 || m64 > BG_MAX_DIM || n64 > BG_MAX_DIM ||
        k64 > BG_MAX_DIM || batch > BG_MAX_BATCH)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "bgemm: sizes %lldx%lldx%lld x %lld out of range",
                       m64, n64, k64, batch);
    int m = (int)m64, n = (int)n64, k = (int)k64;
    if (m == 0 || n == 0)
        return AT_OK;
    const tpl_operand *oa = &args->operand[TPL_GEMM_A], *ob = &args->operand[TPL_GEMM_B],
                      *oc = &args->operand[TPL_GEMM_C];
    long long need_a = cfg[P_OPA] ? m : k, need_b = cfg[P_OPB] ? k : n;
    if (oa->ld < (need_a > 1 ? need_a : 1) || ob->ld < (need_b > 1 ? need_b : 1) || oc->ld < n)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "bgemm: leading dimensions lda=%lld ldb=%lld "
                       "ldc=%lld too small for %dx%dx%d (ops %c%c)", oa->ld, ob->ld, oc->ld, m,
                       n, k, cfg[P_OPA] ? 'T' : 'N', cfg[P_OPB] ? 'T' : 'N');
    if (oa->batch_stride < 0 || ob->batch_stride < 0 || oc->batch_stride < 0)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "bgemm: negative batch stride");
    if (!oc->ptr || (k > 0 && (!oa->ptr || !ob->ptr)))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "bgemm: NULL operand");
    int esz = bg_esz(cfg), vec = cfg[P_VEC];
    int flags = (bg_aligned(oa, esz, vec) ? 1 : 0) | (bg_aligned(ob, esz, vec) ? 2 : 0) |
                (bg_aligned(oc, esz, 16 / esz) ? 4 : 0);
    unsigned threads = (unsigned)bg_threads(cfg), smem = (unsigned)bg_smem(cfg);
    long long units = tpl_cdiv(batch, cfg[P_G]) * tpl_cdiv(m, cfg[P_BM]) * tpl_cdiv(n, cfg[P_BN]);
    long long ksteps = k > 0 ? tpl_cdiv(k, cfg[P_BK]) : 1;
    /* GRID 1: a block computes one unit, so it fills at most ksteps of its STAGES slots (the
     * kernel's slot of stage i is i mod STAGES): the unused ones are not allocated (more
     * blocks per SM) */
    if (cfg[P_GRID] == 1 && units <= BG_MAX_DIM && ksteps < cfg[P_STAGES])
        smem = (unsigned)(smem / cfg[P_STAGES] * ksteps);
    int per_sm = 0;
    if ((s = ex_occupancy(ex, "bgemm", threads, smem, &per_sm)) != AT_OK)
        return s;
    int sms = ex->dev && ex->dev->sm_count > 0 ? ex->dev->sm_count : 1;
    long long grid = bg_grid(cfg[P_GRID], (long long)per_sm * sms, units);
    CUdeviceptr A = oa->ptr ? oa->ptr : oc->ptr, B = ob->ptr ? ob->ptr : oc->ptr, C = oc->ptr;
    long long lda = oa->ld, sa = oa->batch_stride, ldb = ob->ld, sb = ob->batch_stride;
    long long ldc = oc->ld, sc = oc->batch_stride;
    float af = (float)args->scalar[TPL_GEMM_ALPHA], bf = (float)args->scalar[TPL_GEMM_BETA];
    double ad = args->scalar[TPL_GEMM_ALPHA], bd = args->scalar[TPL_GEMM_BETA];
    void *alpha = cfg[P_TYPE] ? (void *)&ad : (void *)&af;
    void *beta = cfg[P_TYPE] ? (void *)&bd : (void *)&bf;
    void *a[] = {&m, &n, &k, alpha, &A, &lda, &sa, &B, &ldb, &sb, beta, &C, &ldc, &sc, &batch,
                 &flags};
    return ex_launch(ex, "bgemm", (unsigned)grid, 1, 1, threads, 1, 1, smem, a);
}

/* Inputs of a problem (tpl_prepare_gemm_beta0: A and B uniform in [-1, 1), alpha 1.5, beta 0
 * over a NaN C, the compensated float64 reference of every product), for sizes bgemm computes. */
static at_status bg_prepare(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                            tpl_workset *ws)
{
    at_status s = tpl_check_problem(ref, &tpl_bgemm, p);
    if (s != AT_OK)
        return s;
    long long batch = tpl_problem_batch(p);
    if (p->dims[0] < 1 || p->dims[1] < 1 || p->dims[2] < 1 || p->dims[0] > BG_MAX_DIM ||
        p->dims[1] > BG_MAX_DIM || p->dims[2] > BG_MAX_DIM || batch * p->dims[0] > BG_MAX_DIM)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "bgemm: bad problem for prepare");
    return tpl_prepare_gemm_beta0(ref, p, seed, ws);
}

/* The verification rule, relative Frobenius error against the float64 reference:
 * FP32: 4e-7 sqrt(k) + 1e-6 (matmul's: the FP32 accumulation grows like sqrt(k) 2^-24,
 * about 10x margin); FP64: (8 sqrt(k) + 8) 2^-53, the same over the double unit roundoff
 * (the reference sums FP64 data with compensation, so its own error is about one rounding).
 * A wrong tile or a race gives 1e-2 or more. */
static double bg_tolerance(const tpl_problem *p)
{
    double k = p->n_dims == 3 && p->dims[2] > 0 ? (double)p->dims[2] : 1.0;
    if (p->dtype == AT_R_64F)
        return (8.0 * sqrt(k) + 8.0) * ldexp(1.0, -53);
    return 4e-7 * sqrt(k) + 1e-6;
}

/* Fallbacks of every kind (type x ops) that serve any size: 16x16 tiles, K steps of 8, one
 * product per block of one warp, FMA on the CUDA cores (every GPU); the default is FP32 NN. */
#define BG_FALLBACK(type, opa, opb, vec) "TYPE=" #type ",MMA=0,OPA=" #opa ",OPB=" #opb \
    ",BM=16,BN=16,BK=8,G=1,TM=2,TN=4,STAGES=2,VEC=" #vec

static const tpl_baseline bg_baselines[] = {
    {"f32-NT", BG_FALLBACK(0, 0, 1, 4), "FP32 op(B) = T fallback: any size, every GPU"},
    {"f32-TN", BG_FALLBACK(0, 1, 0, 4), "FP32 op(A) = T fallback: any size, every GPU"},
    {"f32-TT", BG_FALLBACK(0, 1, 1, 4), "FP32 TT fallback: any size, every GPU"},
    {"f64-NN", BG_FALLBACK(1, 0, 0, 2), "FP64 fallback on the CUDA cores (DFMA): any size"},
    {"f64-NT", BG_FALLBACK(1, 0, 1, 2), "FP64 op(B) = T fallback: any size, every GPU"},
    {"f64-TN", BG_FALLBACK(1, 1, 0, 2), "FP64 op(A) = T fallback: any size, every GPU"},
    {"f64-TT", BG_FALLBACK(1, 1, 1, 2), "FP64 TT fallback: any size, every GPU"},
    {"f64-dmma", "TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=16,G=2,TM=2,TN=4,STAGES=2,VEC=2",
     "FP64 tensor cores (mma.sync m8n8k4), two 32x32 products per block: sm_80+"},
    {"f64-dmma16", "TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=2,TN=4,STAGES=2,VEC=2",
     "FP64 tensor cores (mma.sync m16n8k4), 64x64 tiles: sm_90+ (the 64^3 x 8192 winner on the "
     "H200 before the copy fast path)"},
    /* the H200 winners of the small shapes (part 3, second call,
     * bench/results/2026-11-23-H200-bgemm-cd1d511.txt): every run tuning such a shape starts from
     * them; the default run's 16^3 problems are not served by them (tiles of 32 and more,
     * LDF only for products of 32 x 32 and more) */
    {"f32-32-l", "TYPE=0,MMA=0,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=4,TN=4,STAGES=3,VEC=4,LDF=1",
     "FP32, one 32x32 product per block, 3 stages, the copy fast path (the 32^3 x 65536 "
     "winner on the H200)"},
    {"f32-64-l", "TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=8,TN=4,STAGES=2,VEC=4,LDF=1",
     "FP32, one 64x64 product per block, the copy fast path (the 64^3 x 8192 winner on the "
     "H200)"},
    {"f64-dmma32-l", "TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=4,VEC=2,"
     "LDF=1", "FP64 tensor cores (mma.sync m8n8k4), two 32x32 products per block, 4 stages, "
     "the copy fast path (the 32^3 x 65536 winner on the H200): sm_80+"},
    {"f64-dmma64-l", "TYPE=1,MMA=2,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=2,TN=2,STAGES=3,VEC=2,"
     "LDF=1", "FP64 tensor cores (mma.sync m16n8k4), 64x64 tiles, 3 stages, the copy fast "
     "path (the 64^3 x 8192 winner on the H200): sm_90+"},
    /* the H200 winners of 2026-11-23 (bench/results/2026-11-23-H200-bgemm-f2adc41.txt): one block
     * per work unit (GRID 1) and several blocks per SM, as cuBLAS launches these shapes */
    {"f64-32-g1", "TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=4,VEC=2,LDF=1,"
     "GRID=1", "FP64 m8n8k4, two 32x32 products per block, one block per product pair (the "
     "unused stage slots not allocated; 1.13x cuBLAS at 32^3 x 65536 on the H200): sm_80+"},
    {"f64-32-k8", "TYPE=1,MMA=3,OPA=0,OPB=0,BM=32,BN=32,BK=16,G=1,TM=2,TN=2,STAGES=3,VEC=2,LDF=1,"
     "GRID=1,MINB=2", "FP64 m16n8k8, one 32x32 product per block of 2 warps, one block per "
     "product (the 32^3 x 65536 winner on the H200): sm_90+"},
    {"f64-64-k8", "TYPE=1,MMA=3,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=2,TN=4,STAGES=2,VEC=2,LDF=1,"
     "GRID=1", "FP64 m16n8k8, 64x64 by 4 warps of 32x32, one block per product (the 64^3 x "
     "8192 winner on the H200): sm_90+"},
};

/* TYPE, OPA and OPB follow the problem's type and ops. */
static void bg_fit_kind(int *cfg, const tpl_problem *p)
{
    cfg[P_TYPE] = p->dtype == AT_R_64F;
    cfg[P_OPA] = p->op_a == AT_OP_T;
    cfg[P_OPB] = p->op_b == AT_OP_T;
}

#define BG_F32 TPL_BIT(AT_R_32F)
#define BG_F64 TPL_BIT(AT_R_64F)

/* Built-in choices (type and ops fitted): the H200 winners of 32^3 x 65536 and 64^3 x 8192
 * by product size (a configuration that cannot serve a size, e.g. the copy fast path below
 * 32 x 32, is skipped for the next row), else the 16 x 16 fallback. */
static const tpl_default bg_defaults[] = {
    {.cc_min = 80, .dtypes = BG_F32, .max_mn = 32,
     .config = "TYPE=0,MMA=0,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=1,TM=4,TN=4,STAGES=3,VEC=4,LDF=1",
     .origin = "FP32 32 x 32 products: the 32^3 x 65536 winner (H200)"},
    {.cc_min = 80, .dtypes = BG_F32, .max_mn = 128,
     .config = "TYPE=0,MMA=0,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=8,TN=4,STAGES=2,VEC=4,LDF=1",
     .origin = "FP32 up to 128 x 128: the 64^3 x 8192 winner (H200)"},
    {.cc_min = 90, .dtypes = BG_F64, .max_mn = 32,
     .config = "TYPE=1,MMA=3,OPA=0,OPB=0,BM=32,BN=32,BK=16,G=1,TM=2,TN=2,STAGES=3,VEC=2,LDF=1,"
               "GRID=1,MINB=2",
     .origin = "sm90 FP64 32 x 32 products: the 32^3 x 65536 winner (H200)"},
    {.cc_min = 90, .dtypes = BG_F64, .max_mn = 128,
     .config = "TYPE=1,MMA=3,OPA=0,OPB=0,BM=64,BN=64,BK=32,G=1,TM=2,TN=4,STAGES=2,VEC=2,LDF=1,"
               "GRID=1",
     .origin = "sm90 FP64 up to 128 x 128: the 64^3 x 8192 winner (H200)"},
    {.cc_min = 80, .dtypes = BG_F64, .max_mn = 128,
     .config = "TYPE=1,MMA=1,OPA=0,OPB=0,BM=32,BN=32,BK=32,G=2,TM=2,TN=2,STAGES=4,VEC=2,LDF=1",
     .origin = "sm80 FP64 tensor cores, two 32 x 32 products per block"},
    {.config = BG_FALLBACK(0, 0, 0, 4), .origin = "FP32 16 x 16 fallback (any size)"},
    {.config = BG_FALLBACK(1, 0, 0, 2), .origin = "FP64 16 x 16 fallback (any size)"},
};

static const tpl_problem bg_tuning[] = {
    {.n_dims = 3, .dims = {16, 16, 16}, .batch = 16384},
    {.n_dims = 3, .dims = {16, 16, 16}, .dtype = AT_R_64F, .batch = 16384},
};

/* tile_of: the launch geometry for the runtime's selection model: G products per block,
 * each of BM x BN tiles. */
static int bg_tile_of(const int *cfg, tpl_tile *t)
{
    memset(t, 0, sizeof *t);
    t->bm = cfg[P_BM];
    t->bn = cfg[P_BN];
    t->splitk = 1;
    t->products = cfg[P_G] > 0 ? cfg[P_G] : 1;
    t->elem_bytes = bg_esz(cfg);
    t->threads = bg_threads(cfg);
    t->smem = bg_smem(cfg);
    t->blocks_per_sm = cfg[P_MINB] > 1 ? cfg[P_MINB] : 0;
    return t->bm > 0 && t->bn > 0 && t->threads > 0;
}

const tpl_family tpl_bgemm = {
    .name = "bgemm",
    .source = "bgemm.cu",
    .fixed_options = "",
    .summary = "strided batched GEMM C_b = alpha*op(A_b)*op(B_b) + beta*C_b of small matrices "
               "(FP32 FFMA; FP64 DFMA or DMMA tensor cores; row-major, ops N/T): several products "
               "per block, a persistent grid pipelining across products",
    .n_dims = 3,
    .dim_names = {"m", "n", "k"},
    .metric_is_flops = 1,
    .hidden = 0,
    .n_params = P_COUNT,
    .params = {
        {"TYPE", 2, {0, 1}, "element type: 0 float, 1 double"},
        {"MMA", 4, {0, 1, 2, 3}, "0 FMA on the CUDA cores; FP64 tensor cores (TYPE 1): 1 "
                                 "mma.sync m8n8k4 (sm_80+), 2 m16n8k4, 3 m16n8k8 (sm_90+)"},
        {"OPA", 2, {0, 1}, "op(A): 0 N (A_b m x k), 1 T (stored k x m); must match the problem"},
        {"OPB", 2, {0, 1}, "op(B): 0 N (B_b k x n), 1 T (stored n x k); must match the problem"},
        {"BM", 4, {32, 64, 16, 128}, "rows of a product's C tile"},
        {"BN", 4, {32, 64, 16, 128}, "columns of a product's C tile"},
        {"BK", 3, {32, 16, 8}, "K depth of one shared-memory stage"},
        {"G", 4, {1, 2, 4, 8}, "products a block computes at once (each by its own threads)"},
        {"TM", 3, {4, 8, 2}, "MMA 0: rows of a thread's tile; MMA 1, 2: mma tiles (8 or 16 "
                             "rows) along M per warp"},
        {"TN", 3, {4, 8, 2}, "MMA 0: columns of a thread's tile; MMA 1, 2: mma tiles (8 "
                             "columns) along N per warp"},
        {"STAGES", 4, {2, 3, 1, 4}, "cp.async stages in flight across K steps and products"},
        {"VEC", 3, {4, 2, 1}, "elements per global copy along the contiguous dimension (16 "
                              "bytes) or 1"},
        {"SYNC", 2, {0, 1}, "0: the block copies every product's tiles and meets at "
                            "__syncthreads; 1: each product's threads copy its own and meet at "
                            "their own barrier (__syncwarp for one warp)", .omit_first = 1},
        /* HINT 1 and 2 lost on every shape in part 3 (up to +21% time on f64 32^3): out of
         * the tuning list, reachable by configuration text */
        {"HINT", 1, {0}, "1: A and B copies with an L2 evict_first policy, C stored streaming "
                         "(st.global.cs); 2: the copies' policy only (tuning list: 0; slower "
                         "on the H200)", .omit_first = 1},
        {"LDF", 2, {0, 1}, "1: tiles inside the operands copied by a fast path (fixed offsets, "
                           "no per-copy index arithmetic or bounds checks)", .omit_first = 1},
        /* GRID 2 measured no better than GRID 0 (2026-11-23, first call): reachable by
         * configuration text, not searched */
        {"GRID", 2, {0, 1}, "blocks of the launch: 0 persistent (resident blocks), 1 one per "
                            "work unit; 2 (tuning list: 0, 1) persistent with its turns spread "
                            "evenly (no short last turn)", .host_only = 1, .omit_first = 1},
        /* MINB 2 and 3 were searched on 2026-11-23: no gain beyond noise (the bound spills
         * where it bites: part 3's 64^3 tile lost 10%), and they tripled the space: out of
         * the tuning list, reachable by configuration text */
        {"MINB", 1, {1}, "blocks per SM the kernel is compiled for (__launch_bounds__: "
                         "registers capped at 64K / (MINB threads)); 1: no bound (tuning list: "
                         "1)", .omit_first = 1},
    },
    .valid = bg_valid,
    .tile_of = bg_tile_of,
    .accepts = bg_accepts,
    .applicable = bg_applicable,
    .deterministic = bg_deterministic,
    .run = bg_run,
    .work = tpl_gemm_work_beta0,
    .work_done = NULL,
    .prepare = bg_prepare,
    .check = tpl_check_gemm,
    .tolerance = bg_tolerance,
    .target_arch = bg_target_arch,
    .default_config = BG_FALLBACK(0, 0, 0, 4),
    .n_defaults = (int)(sizeof bg_defaults / sizeof bg_defaults[0]),
    .defaults = bg_defaults,
    .fit_kind = bg_fit_kind,
    .n_baselines = (int)(sizeof bg_baselines / sizeof bg_baselines[0]),
    .baselines = bg_baselines,
    .n_tuning_problems = (int)(sizeof bg_tuning / sizeof bg_tuning[0]),
    .tuning_problems = bg_tuning,
    .valid_prefix = bg_valid_prefix,
};
