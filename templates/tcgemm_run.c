/* tcgemm_run.c: the tensor-core family's launches: operands packed where a kernel cannot read
 * them as stored (op T with OPA / OPB 0, FP8 into K-major, unaligned rows), split-K workspace
 * and its ordered reduce, PATH 80 batches in one launch (short K: t8_gemm_short), PATH 90
 * tensor maps and cluster fit
 * (memoized per call), the products of a strided batch. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "tcgemm.h"
#include "tpl.h"

/* ---- run ---- */

/* One call's operands, as the kernels get them (after any packing). */
typedef struct tc_call {
    int m, n, k;
    CUdeviceptr A, B, C;
    long long lda, ldb, ldc;
    float alpha, beta;
    int epi;                /* the configuration's EPI: > 0 passes bias as the last argument */
    CUdeviceptr bias;       /* of C's type, one per row or column of C (0 without a bias) */
    int fp8;                /* the configuration's FP8: > 0 passes the three scales last */
    CUdeviceptr scale[3];   /* FP8: device floats scale_a, scale_b, scale_d (0 = 1.0) */
} tc_call;

/* The argument list of a kernel that forms C: `n` fixed arguments, then the bias (EPI > 0), then
 * the scales' pointers (FP8 > 0), NULL-terminated as ex_launch reads it. */
static void tc_tail_args(void **a, int n, tc_call *c)
{
    if (c->epi)
        a[n++] = &c->bias;
    if (c->fp8)
        for (int i = 0; i < 3; i++)
            a[n++] = &c->scale[i];
    a[n] = NULL;
}

/* Grid of a grid-stride helper kernel for `items` units of work. */
static unsigned tc_stride_grid(const at_exec *ex, long long items)
{
    long long cap = ex->dev && ex->dev->sm_count > 0 ? 8LL * ex->dev->sm_count : 1024;
    long long g = tpl_cdiv(items > 0 ? items : 1, 256);
    return (unsigned)(g < cap ? g : cap);
}

/* Copies `count` products of the rows x cols operand at *p (leading dimension *ld, *stride
 * elements from one product to the next) into scratch slot `slot` with rows of a multiple of
 * `align` bytes (zero-filled past cols), and points *p, *ld, *stride at the copies. */
static at_status tc_pack(at_exec *ex, int slot, int esz, int align, int rows, int cols, int count,
                         CUdeviceptr *p, long long *ld, long long *stride)
{
    long long per = align / esz, ldd = tpl_cdiv(cols, per) * per, sd = (long long)rows * ldd;
    CUdeviceptr dst = 0;
    at_status s = ex_scratch(ex, slot, (size_t)count * (size_t)sd * (size_t)esz, &dst);
    if (s != AT_OK)
        return s;
    if (dst % 16)
        return ex_fail(ex, AT_ERR_INTERNAL, "tcgemm: scratch memory not 16-byte aligned");
    CUdeviceptr src = *p;
    long long lds = *ld, ss = *stride;
    void *a[] = {&rows, &cols, &src, &lds, &dst, &ldd, &ss, &sd};
    s = ex_launch(ex, "tc_pack", tc_stride_grid(ex, (long long)rows * ldd * esz / 16), 1,
                  (unsigned)count, 256, 1, 1, 0, a);
    if (s == AT_OK) {
        *p = dst;
        *ld = ldd;
        *stride = sd;
    }
    return s;
}

/* The transposing pack: `count` products of the rows x cols operand at *p (leading dimension
 * *ld, *stride elements apart), given with op T, become their cols x rows transposes in scratch
 * slot `slot`, rows of a multiple of `align` bytes (zero-filled past rows); *p, *ld, *stride
 * then point at the copies. */
static at_status tc_pack_t(at_exec *ex, int slot, int esz, int align, int rows, int cols,
                           int count, CUdeviceptr *p, long long *ld, long long *stride)
{
    long long per = align / esz, ldd = tpl_cdiv(rows, per) * per, sd = (long long)cols * ldd;
    CUdeviceptr dst = 0;
    at_status s = ex_scratch(ex, slot, (size_t)count * (size_t)sd * (size_t)esz, &dst);
    if (s != AT_OK)
        return s;
    if (dst % 16)
        return ex_fail(ex, AT_ERR_INTERNAL, "tcgemm: scratch memory not 16-byte aligned");
    CUdeviceptr src = *p;
    long long lds = *ld, ss = *stride, gx = tpl_cdiv(ldd, 32), gy = tpl_cdiv(cols, 32);
    if (gx > 0x7fffffff)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: operand of %d rows too large to pack", rows);
    if (gy > 65535)
        gy = 65535;
    void *a[] = {&rows, &cols, &src, &lds, &dst, &ldd, &ss, &sd};
    s = ex_launch(ex, "tc_pack_t", (unsigned)gx, (unsigned)gy, (unsigned)count, 32, 8, 1, 0, a);
    if (s == AT_OK) {
        *p = dst;
        *ld = ldd;
        *stride = sd;
    }
    return s;
}

/* C = alpha * (sum of the SPLITK partials in W) + beta * C (FP8: with the scales). */
static at_status tc_reduce(at_exec *ex, tc_call *c, CUdeviceptr W)
{
    void *a[12] = {&c->m, &c->n, &W, &c->alpha, &c->beta, &c->C, &c->ldc};
    tc_tail_args(a, 7, c);
    return ex_launch(ex, "tc_splitk_reduce", tc_stride_grid(ex, (long long)c->m * c->n), 1, 1,
                     256, 1, 1, 0, a);
}

/* The split-K workspace (SPLITK m x n FP32 partials) in slot 0 (SPLITK 0: t9_run's own). */
static at_status tc_workspace(at_exec *ex, const int *cfg, const tc_call *c, CUdeviceptr *W)
{
    *W = 0;
    if (cfg[P_SPLITK] <= 1)
        return AT_OK;
    return ex_scratch(ex, TC_SLOT_PARTIALS, (size_t)cfg[P_SPLITK] * c->m * c->n * 4, W);
}

void tc_wave_plan_of(long long units, long long ksteps, long long slots, tc_wave_plan *w)
{
    slots = slots < 1 ? 1 : slots;
    long long full = units > 0 ? units / slots : 0, rem = units > 0 ? units % slots : 0;
    w->dp_units = units > 0 ? units : 0;
    w->split = 1;
    w->steps = w->steps_whole = tpl_cdiv(w->dp_units, slots) * (ksteps > 0 ? ksteps : 0);
    if (rem == 0 || ksteps < 2 * TC_WAVE_MIN_KSTEPS)
        return;
    for (long long extra = 0; extra <= full && extra <= TC_WAVE_MAX_EXTRA; extra++) {
        long long sk = rem + extra * slots, whole_waves = full - extra;
        for (long long s = 2; s <= TC_WAVE_MAX_SPLIT && ksteps / s >= TC_WAVE_MIN_KSTEPS; s++) {
            long long rounds = tpl_cdiv(sk * s, slots);
            /* the busiest cluster: its whole units, its pieces (the longest K range each), a
             * partial stored per piece and the s partials of a tile summed once */
            long long steps = whole_waves * ksteps + rounds * tpl_cdiv(ksteps, s) +
                              (rounds + s) * TC_WAVE_FIXUP_KSTEPS;
            if (steps < w->steps && whole_waves * slots + sk * s <= 0x7fffffffLL) {
                w->steps = steps;
                w->dp_units = whole_waves * slots;
                w->split = s;
            }
        }
    }
    if (w->steps * 100 > w->steps_whole * (100 - TC_WAVE_MIN_GAIN_PERCENT)) {
        w->dp_units = units;    /* too little saved for the partials' traffic risk */
        w->split = 1;
        w->steps = w->steps_whole;
    }
}

int tc_wave_fill_pays(long long units, long long ksteps, long long slots)
{
    tc_wave_plan w;
    tc_wave_plan_of(units, ksteps, slots, &w);
    return w.split > 1;
}

/* SPLITK 0's plan for `units` cluster tiles on `fit` clusters, its piece slots (CL x BM x BN
 * FP32 partials each, TC_SLOT_PARTIALS) and counters (one per split unit, CTA and consumer
 * warpgroup, TC_SLOT_COUNTERS: zeroed when allocated, the kernel leaves them zero). */
static at_status t9_wave_workspace(at_exec *ex, const int *cfg, long long units, int k, int fit,
                                   tc_wave_plan *w, CUdeviceptr *W, CUdeviceptr *counters)
{
    int cl = cfg[P_CM] * cfg[P_CN];
    tc_wave_plan_of(units, tpl_cdiv(k, cfg[P_BK]), fit, w);
    *W = *counters = 0;
    if (w->split <= 1)
        return AT_OK;
    long long sk = units - w->dp_units;
    long long bytes = sk * w->split * cl * cfg[P_BM] * cfg[P_BN] * 4;
    if (bytes > TC_MAX_WORKSPACE) {     /* the whole units instead */
        w->dp_units = units;
        w->split = 1;
        return AT_OK;
    }
    at_status s = ex_scratch(ex, TC_SLOT_PARTIALS, (size_t)bytes, W);
    if (s != AT_OK)
        return s;
    return ex_scratch_zeroed(ex, TC_SLOT_COUNTERS, (size_t)(sk * cl * cfg[P_WG]) * 4, counters);
}

/* `count` products of a strided batch (strides in elements: b->sa, b->sb, b->sc; count 1 with
 * SPLITK > 1) in one launch, grid y over the products. */
typedef struct tc_batch {
    int count;
    long long sa, sb, sc;
} tc_batch;

/* 1 if an operand at byte address base with rows ld elements apart (esz-byte elements) and, for
 * count > 1 products, products stride elements apart starts every row on a w-byte boundary. */
static int tc_rows_aligned(unsigned long long base, long long ld, long long count, long long stride,
                           int esz, int w)
{
    return base % (unsigned)w == 0 && (ld * esz) % w == 0 &&
           (count <= 1 || (stride * esz) % w == 0);
}

int t8_load_width(unsigned long long base, long long ld, long long stride, long long count, int esz,
                  int loadw, int prefill)
{
    if (loadw == 2)
        return 2;    /* plain 2-byte loads: any 16-bit operand */
    /* the widths the kernel has: LOADW, then 8 (16-bit types; FP32 loads 16 or 4) and 4 */
    for (int w = loadw; w >= 4; w /= 2) {
        if (w == 8 && esz == 4)
            continue;
        if (tc_rows_aligned(base, ld, count, stride, esz, w))
            return w;
    }
    /* 2-byte rows: loaded whole before the ring (t8_prefill) where the block's K tiles fit in it */
    return esz == 2 && prefill && base % 2 == 0 ? 2 : 0;
}

/* K tiles one block of t8_gemm walks (its slice of them with SPLITK > 1). */
static long long t8_block_ktiles(const int *cfg, long long k)
{
    long long nkt = tpl_cdiv(k, cfg[P_BK]);
    return cfg[P_SPLITK] > 1 ? tpl_cdiv(nkt, cfg[P_SPLITK]) : nkt;
}

int t8_prefill_fits(const int *cfg, long long k)
{
    return t8_block_ktiles(cfg, k) <= cfg[P_STAGES];
}

long long t8_smem_used(const int *cfg, long long k)
{
    long long nk = t8_block_ktiles(cfg, k);
    if (nk >= cfg[P_STAGES])
        return t8_smem_bytes(cfg);
    int c[TPL_MAX_PARAMS];
    memcpy(c, cfg, sizeof(int) * P_COUNT);
    c[P_STAGES] = nk < 1 ? 1 : (int)nk;
    return t8_smem_bytes(c);
}

int t8_short_minb(const int *cfg)
{
    long long threads = 32LL * cfg[P_WARPS_M] * cfg[P_WARPS_N];
    if (threads <= 0)
        return 0;
    long long acc = (long long)cfg[P_BM] * cfg[P_BN] / threads;
    long long minb = 65536 / (threads * (acc + 45));
    return minb >= 4 ? (int)minb : 0;
}

int t8_short_entry(const int *cfg, long long k)
{
    return t8_short_minb(cfg) > 0 && cfg[P_SPLITK] == 1 && k > 0 && k <= T8_SHORT_K &&
           t8_block_ktiles(cfg, k) <= cfg[P_STAGES];
}

static at_status t8_run(at_exec *ex, const int *cfg, tc_call *c, tc_batch *b)
{
    int esz = tc_esz(cfg), lw = cfg[P_LOADW];
    at_status s;
    /* the operands as stored: A m x k, or k x m (OPA 1: op T read in place); B k x n, or n x k
     * (OPB 1) */
    int a_rows = cfg[P_OPA] ? c->k : c->m, a_cols = cfg[P_OPA] ? c->m : c->k;
    int b_rows = cfg[P_OPB] ? c->n : c->k, b_cols = cfg[P_OPB] ? c->k : c->n;
    /* Loads of LOADW bytes need LOADW-aligned bases, rows and product strides; a less aligned
     * operand is read 8 or 4 bytes at a time by the same kernel (`narrow`: A's width in bits 0-7,
     * B's in 8-15), a 16-bit one with 2-byte rows (an odd ld or product stride) 2 bytes at a time
     * where each block's K tiles fit in the ring (t8_prefill: short K, split-K slices), and packed
     * (a plain copy in the same layout) otherwise. */
    int prefill = t8_prefill_fits(cfg, c->k);
    int wa = t8_load_width(c->A, c->lda, b->sa, b->count, esz, lw, prefill);
    int wb = t8_load_width(c->B, c->ldb, b->sb, b->count, esz, lw, prefill);
    if (!wa && (s = tc_pack(ex, TC_SLOT_PACKED_A, esz, TC_PACK_ALIGN_80, a_rows, a_cols, b->count,
                            &c->A, &c->lda, &b->sa)) != AT_OK)
        return s;
    if (!wb && (s = tc_pack(ex, TC_SLOT_PACKED_B, esz, TC_PACK_ALIGN_80, b_rows, b_cols, b->count,
                            &c->B, &c->ldb, &b->sb)) != AT_OK)
        return s;
    int narrow = (wa && wa < lw ? wa : 0) | (wb && wb < lw ? wb : 0) << 8;
    CUdeviceptr W;
    if ((s = tc_workspace(ex, cfg, c, &W)) != AT_OK)
        return s;
    long long tiles = tpl_cdiv(c->m, cfg[P_BM]) * tpl_cdiv(c->n, cfg[P_BN]);
    if (tiles > 0x7fffffff)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: %lld tiles (limit 2^31-1)", tiles);
    void *a[] = {&c->m, &c->n, &c->k, &c->alpha, &c->A, &c->lda, &c->B, &c->ldb, &c->beta, &c->C,
                 &c->ldc, &W, &b->sa, &b->sb, &b->sc, &narrow, c->epi ? &c->bias : NULL};
    /* short K: the register-bounded entry, and shared memory for the stages a block uses */
    s = ex_launch(ex, t8_short_entry(cfg, c->k) ? "t8_gemm_short" : "t8_gemm", (unsigned)tiles,
                  (unsigned)b->count, (unsigned)cfg[P_SPLITK],
                  32u * (unsigned)(cfg[P_WARPS_M] * cfg[P_WARPS_N]), 1, 1,
                  (unsigned)t8_smem_used(cfg, c->k), a);
    if (s != AT_OK || cfg[P_SPLITK] == 1)
        return s;
    return tc_reduce(ex, c, W);
}

/* A 2D tensor map of element type dt over a row-major rows x cols matrix (16-byte aligned base
 * and rows), box {box_cols, box_rows}, 128-byte swizzle; with depth > 0 (BATCH 1) a 3D map over
 * `depth` such matrices `bstride` elements apart (dims {cols, rows, depth}, box depth 1: the
 * product is the third coordinate; bstride * esz a multiple of 16 below 2^40). TF32 operands take
 * CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: the TMA rounds each FP32 element to TF32 (to nearest, ties
 * to even) on its way to shared memory, so the tensor cores read operands whose 13 low bits are
 * zero. FP32 C (the TF32 TMA-store epilogue) takes FLOAT32: its values pass unchanged. */
static at_status t9_map(at_exec *ex, int slot, CUtensorMap *map, CUtensorMapDataType dt,
                        CUdeviceptr p, long long rows, long long cols, long long ld, int esz,
                        unsigned box_cols, unsigned box_rows, CUtensorMapL2promotion l2,
                        long long depth, long long bstride)
{
    /* a call repeating the previous one's operand (same pointer, shape and box) reuses its
     * map: encoding costs microseconds, a short call's budget */
    unsigned long long key[10] = {(unsigned long long)dt, (unsigned long long)p,
                                  (unsigned long long)rows, (unsigned long long)cols,
                                  (unsigned long long)ld, (unsigned long long)esz,
                                  (unsigned long long)box_cols << 32 | box_rows,
                                  (unsigned long long)l2, (unsigned long long)depth,
                                  (unsigned long long)bstride};
    if (ex_memo_get(ex, slot, key, 10, map, sizeof *map))
        return AT_OK;
    cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)depth};
    cuuint64_t strides[2] = {(cuuint64_t)(ld * esz), (cuuint64_t)(bstride * esz)};
    cuuint32_t box[3] = {box_cols, box_rows, 1}, elem[3] = {1, 1, 1};
    CUresult rc = ex->cu->TensorMapEncodeTiled(map, dt, depth > 0 ? 3 : 2, (void *)(uintptr_t)p,
                                               dims, strides, box, elem,
                                               CU_TENSOR_MAP_INTERLEAVE_NONE,
                                               CU_TENSOR_MAP_SWIZZLE_128B, l2,
                                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (rc != CUDA_SUCCESS)
        return ex_fail(ex, AT_ERR_CUDA, "tcgemm: cuTensorMapEncodeTiled failed (%d) for a %lldx%lld "
                       "matrix, ld %lld, %lld products %lld apart", (int)rc, rows, cols, ld,
                       depth, bstride);
    ex_memo_put(ex, slot, key, 10, map, sizeof *map);
    return AT_OK;
}

/* 1 if `count` products of a rows x ld operand `stride` elements apart can be one 3D tensor map
 * (BATCH 1): a stride of a multiple of 16 bytes, below 2^40 bytes, and no products overlapping
 * (stride >= rows * ld; a broadcast stride 0 is packed); one product always can. */
int tc_batch_stride_ok(long long count, long long stride, long long rows, long long ld, int esz)
{
    if (count <= 1)
        return 1;
    return stride > 0 && (stride * esz) % 16 == 0 && stride * esz < (1LL << 40) &&
           stride >= rows * ld;
}

/* ex_memo slots of t9_run: the A, B and C maps, the cluster occupancy */
enum { T9_MEMO_A, T9_MEMO_B, T9_MEMO_C, T9_MEMO_FIT };

/* Clusters of tcgemm that run at once (cuOccupancyMaxActiveClusters where the driver has it,
 * else blocks per SM x SMs / cluster). */
static at_status t9_fit(at_exec *ex, const int *cfg, unsigned threads, unsigned smem, int *fit)
{
    int per_sm = 0, cl = cfg[P_CM] * cfg[P_CN];
    int sms = ex->dev && ex->dev->sm_count > 0 ? ex->dev->sm_count : 1;
    unsigned long long key[3] = {threads, smem, (unsigned long long)cl};
    if (ex_memo_get(ex, T9_MEMO_FIT, key, 3, fit, sizeof *fit))
        return AT_OK;
    at_status s = ex_occupancy(ex, "tcgemm", threads, smem, &per_sm);
    if (s != AT_OK)
        return s;
    *fit = per_sm * sms / cl;
    if (cl == 1 || !ex->cu->OccupancyMaxActiveClusters) {
        if (*fit < 1)
            return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: no cluster fits");
        ex_memo_put(ex, T9_MEMO_FIT, key, 3, fit, sizeof *fit);
        return AT_OK;
    }
    CUfunction fn;
    if ((s = ex_function(ex, "tcgemm", &fn)) != AT_OK)
        return s;
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = (unsigned)cl;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDimX = (unsigned)(cl * (sms / cl > 0 ? sms / cl : 1));
    lc.gridDimY = lc.gridDimZ = 1;
    lc.blockDimX = threads;
    lc.blockDimY = lc.blockDimZ = 1;
    lc.sharedMemBytes = smem;
    lc.hStream = ex->stream;
    lc.attrs = &attr;
    lc.numAttrs = 1;
    int clusters = 0;
    CUresult rc = ex->cu->OccupancyMaxActiveClusters(&clusters, fn, &lc);
    if (rc == CUDA_SUCCESS && clusters > 0)
        *fit = clusters;
    if (*fit < 1)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: a cluster of %d CTAs does not fit", cl);
    ex_memo_put(ex, T9_MEMO_FIT, key, 3, fit, sizeof *fit);
    return AT_OK;
}

int t9_operand_read(const int *cfg, unsigned long long addr, long long rows, long long ld,
                    long long count, long long stride)
{
    int esz = tc_esz(cfg);
    if (addr % 16 == 0 && (ld * esz) % 16 == 0 && tc_batch_stride_ok(count, stride, rows, ld, esz))
        return T9_READ_TMA;
    /* the direct copies (tcgemm.cu's T9X_ON): 16-bit operands, one CTA per cluster; any product
     * stride (overlapping or broadcast products only read) */
    if (esz != 2 || cfg[P_FP8] || cfg[P_CM] * cfg[P_CN] != 1)
        return T9_READ_PACK;
    if (tc_rows_aligned(addr, ld, count, stride, esz, 8))
        return T9_READ_DIRECT8;
    if (tc_rows_aligned(addr, ld, count, stride, esz, 4))
        return T9_READ_DIRECT4;
    return T9_READ_PACK;
}

/* In place of the tensor map of an operand the kernel copies directly (tcgemm.cu's t9x_
 * section): its base address, row stride in bytes, stored rows and columns of one product, and
 * the product stride in bytes. */
static void t9_direct_map(CUtensorMap *map, CUdeviceptr p, long long rows, long long cols,
                          long long ld, long long stride, int esz)
{
    uint64_t v[5] = {(uint64_t)p, (uint64_t)(ld * esz), (uint64_t)rows, (uint64_t)cols,
                     (uint64_t)(stride * esz)};
    memset(map, 0, sizeof *map);
    memcpy(map, v, sizeof v);
}

static at_status t9_run(at_exec *ex, const int *cfg, tc_call *c, tc_batch *b)
{
    const at_device_info *dev = ex->dev;
    if (dev && (dev->cc_major != 9 || dev->cc_minor != 0))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: PATH 90 needs an sm_90 device");
    if (!ex->cu->TensorMapEncodeTiled)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: PATH 90 needs cuTensorMapEncodeTiled "
                       "(CUDA 12+ driver)");
    int esz = tc_esz(cfg), csz = tc_csz(cfg), tf32 = tc_tf32(cfg), bf16 = cfg[P_TYPE] == 0;
    int cl = cfg[P_CM] * cfg[P_CN];
    at_status s;
    /* BATCH 1: b->count products in this launch through 3D maps (BATCH 0: count 1) */
    long long count = cfg[P_BATCH] ? b->count : 1;
    /* OPA 1: A is the k x m matrix of op T, read M-major */
    int a_rows = cfg[P_OPA] ? c->k : c->m, a_cols = cfg[P_OPA] ? c->m : c->k;
    /* TMA reads 16-byte aligned bases and row strides only (BATCH 1: product strides too, no
     * overlap); a 16-bit operand 4- or 8-byte aligned is copied by the kernel's producer warps
     * instead (vec_ok bits 3: A, 4: B; bit 5: both in 8-byte words); else pack to 128-byte rows
     * (the packed products lie rows x row apart) */
    int read_a = t9_operand_read(cfg, c->A, a_rows, c->lda, count, b->sa);
    if (read_a == T9_READ_PACK &&
        (s = tc_pack(ex, TC_SLOT_PACKED_A, esz, TC_PACK_ALIGN_90, a_rows, a_cols, (int)count,
                     &c->A, &c->lda, &b->sa)) != AT_OK)
        return s;
    /* OPB 1: B is the n x k matrix of op T, read K-major */
    int b_rows = cfg[P_OPB] ? c->n : c->k, b_cols = cfg[P_OPB] ? c->k : c->n;
    int read_b = t9_operand_read(cfg, c->B, b_rows, c->ldb, count, b->sb);
    if (read_b == T9_READ_PACK &&
        (s = tc_pack(ex, TC_SLOT_PACKED_B, esz, TC_PACK_ALIGN_90, b_rows, b_cols, (int)count,
                     &c->B, &c->ldb, &b->sb)) != AT_OK)
        return s;
    int dir_a = read_a == T9_READ_DIRECT8 || read_a == T9_READ_DIRECT4;
    int dir_b = read_b == T9_READ_DIRECT8 || read_b == T9_READ_DIRECT4;
    int dir8 = (dir_a || dir_b) && read_a != T9_READ_DIRECT4 && read_b != T9_READ_DIRECT4;
    /* the maps' depth (0: a 2D map) and product strides; one product of BATCH 1 takes a depth
     * of 1 and the product's own extent as its stride */
    long long depth = cfg[P_BATCH] ? count : 0;
    long long sa = count > 1 ? b->sa : (long long)a_rows * c->lda;
    long long sb = count > 1 ? b->sb : (long long)b_rows * c->ldb;
    long long sc = count > 1 ? b->sc : (long long)c->m * c->ldc;
    CUtensorMap ma, mb, mc;
    memset(&mc, 0, sizeof mc);
    unsigned boxe = (unsigned)(128 / esz);
    /* C's 16-bit type (VEC 8); the operands' type: C's, TF32, or FP8 bytes */
    CUtensorMapDataType c_type = bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                      : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    CUtensorMapDataType op_type = cfg[P_FP8] ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                  : tf32     ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32
                                             : c_type;
    if (dir_a)
        t9_direct_map(&ma, c->A, a_rows, a_cols, c->lda, count > 1 ? b->sa : 0, esz);
    else if ((s = t9_map(ex, T9_MEMO_A, &ma, op_type, c->A, a_rows, a_cols, c->lda, esz, boxe,
                         (unsigned)((cfg[P_OPA] ? cfg[P_BK] : cfg[P_BM]) / cfg[P_CN]),
                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, depth, sa)) != AT_OK)
        return s;
    if (dir_b)
        t9_direct_map(&mb, c->B, b_rows, b_cols, c->ldb, count > 1 ? b->sb : 0, esz);
    else if ((s = t9_map(ex, T9_MEMO_B, &mb, op_type, c->B, b_rows, b_cols, c->ldb, esz, boxe,
                         (unsigned)((cfg[P_OPB] ? cfg[P_BN] : cfg[P_BK]) / cfg[P_CM]),
                         CU_TENSOR_MAP_L2_PROMOTION_L2_256B, depth, sb)) != AT_OK)
        return s;
    /* vec_ok: bit 0 paired stores; bit 1 the TMA-store epilogue (VEC 8, beta == 0, C, ldc and
     * C's rows 16-byte aligned); bit 2 the staged epilogue with row stores (VEC 8, beta == 0,
     * else). The TMA store writes a row's last partial 16 bytes whole: on an H200 a C of n = 257
     * FP32 columns and ldc 260 had columns 257..259 of every row overwritten, of n = 1000 and ldc
     * 1004 none (tcgemm_gpu_tf32_op_t_in_place, tcgemm_gpu_layouts_offsets_alpha_beta).
     * BATCH 1: every product's C as well (its stride even for pairs; for TMA stores a multiple
     * of 16 bytes, the products apart: tc_batch_stride_ok). */
    int vec_ok = (c->C % (2 * csz) == 0 && c->ldc % 2 == 0 && (count <= 1 || sc % 2 == 0)) |
                 (dir_a ? 8 : 0) | (dir_b ? 16 : 0) | (dir8 ? 32 : 0);
    int c_tma = c->C % 16 == 0 && (c->ldc * csz) % 16 == 0 && (c->n * csz) % 16 == 0 &&
                tc_batch_stride_ok(count, sc, c->m, c->ldc, csz);
    if (cfg[P_VEC] == 8 && csz == 2 && cfg[P_SPLITK] <= 1 && c->beta == 0.0f) {
        if (c_tma) {
            if ((s = t9_map(ex, T9_MEMO_C, &mc, c_type, c->C, c->m, c->n, c->ldc, 2, 64,
                            (unsigned)(cfg[P_BM] / cfg[P_WG]), CU_TENSOR_MAP_L2_PROMOTION_NONE,
                            depth, sc)) != AT_OK)
                return s;
            vec_ok |= 2;
        } else {
            vec_ok |= 4;
        }
    }
    /* TF32 VEC 8 (T9_TES): FP32 C in boxes of 32 x 32 with beta == 0 and C TMA-able; else the
     * kernel stores directly */
    if (cfg[P_VEC] == 8 && tf32 && cfg[P_SPLITK] <= 1 && c->beta == 0.0f && c_tma) {
        if ((s = t9_map(ex, T9_MEMO_C, &mc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, c->C, c->m, c->n,
                        c->ldc, 4, 32, 32, CU_TENSOR_MAP_L2_PROMOTION_NONE, depth, sc)) != AT_OK)
            return s;
        vec_ok |= 2;
    }
    CUdeviceptr W;
    if ((s = tc_workspace(ex, cfg, c, &W)) != AT_OK)
        return s;
    unsigned threads = (unsigned)(cfg[P_WG] + 1) * 128, smem = (unsigned)t9_smem_bytes(cfg);
    int fit;
    if ((s = t9_fit(ex, cfg, threads, smem, &fit)) != AT_OK)
        return s;
    long long units = tpl_cdiv(tpl_cdiv(c->m, cfg[P_BM]), cfg[P_CM]) *
                      tpl_cdiv(tpl_cdiv(c->n, cfg[P_BN]), cfg[P_CN]) *
                      (cfg[P_SPLITK] > 1 ? cfg[P_SPLITK] : 1) * count;
    if (units > 0x7fffffff)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: %lld cluster tiles in one launch (limit "
                       "2^31-1)", units);
    /* SPLITK 0: the wave-fill plan; its items (whole units, then the pieces) are the units the
     * clusters walk */
    tc_wave_plan wave = {units, 1, 0, 0};
    CUdeviceptr counters = 0;
    if (cfg[P_SPLITK] == 0 &&
        (s = t9_wave_workspace(ex, cfg, units, c->k, fit, &wave, &W, &counters)) != AT_OK)
        return s;
    long long items = wave.dp_units + (units - wave.dp_units) * wave.split;
    long long clusters = items < fit ? items : fit;
    int batch_count = (int)count, dp_units = (int)wave.dp_units, split = (int)wave.split;
    void *a[22] = {&ma, &mb, &mc, &c->C, &c->m, &c->n, &c->k, &c->ldc, &c->alpha, &c->beta,
                   &vec_ok, &W, &batch_count, &sc};
    if (cfg[P_SPLITK] == 0) {
        a[12] = &counters;
        a[13] = &dp_units;
        a[14] = &split;
    }
    tc_tail_args(a, cfg[P_BATCH] ? 14 : cfg[P_SPLITK] == 0 ? 15 : 12, c);
    const unsigned grid[3] = {(unsigned)(clusters * cl), 1, 1}, block[3] = {threads, 1, 1};
    const unsigned cluster[3] = {(unsigned)cl, 1, 1};
    s = cl > 1 ? ex_launch_cluster(ex, "tcgemm", grid, block, cluster, smem, a)
               : ex_launch(ex, "tcgemm", grid[0], 1, 1, threads, 1, 1, smem, a);
    if (s != AT_OK || cfg[P_SPLITK] <= 1)
        return s;
    return tc_reduce(ex, c, W);
}

/* b->count products of a call from c (operands at the first product): the transposing packs
 * of op T operands the configuration does not read as stored (OPA / OPB 0: PATH 90 TF32, or a
 * configuration run outside its kind), then the PATH's kernel (k == 0: C = beta * C through
 * the reduce). More than one product only on PATH 80 without split-K (one launch, grid y over
 * the products) and PATH 90 BATCH 1 (one launch, units over tiles x products). */
static at_status tc_run_products(at_exec *ex, const int *cfg, const tpl_problem *p, tc_call c,
                                 tc_batch b)
{
    at_status s;
    if (c.k == 0) {
        /* C = beta * C: the reduce over SPLITK zero partials, product by product */
        CUdeviceptr W;
        size_t words = (size_t)cfg[P_SPLITK] * c.m * c.n;
        if ((s = ex_scratch(ex, TC_SLOT_PARTIALS, words * 4, &W)) != AT_OK ||
            (s = ex_memset32(ex, W, 0, words)) != AT_OK)
            return s;
        CUdeviceptr csz = (CUdeviceptr)tc_csz(cfg);
        for (int z = 0; z < b.count && s == AT_OK; z++) {
            tc_call cz = c;
            cz.C += (CUdeviceptr)(z * b.sc) * csz;
            s = tc_reduce(ex, &cz, W);
        }
        return s;
    }
    int esz = tc_esz(cfg), align = cfg[P_PATH] == 90 ? TC_PACK_ALIGN_90 : TC_PACK_ALIGN_80;
    /* op T: A is stored k x m, B n x k; their transposes are what the kernels read */
    if (p->op_a == AT_OP_T && !cfg[P_OPA] &&
        (s = tc_pack_t(ex, TC_SLOT_PACKED_A, esz, align, c.k, c.m, b.count, &c.A, &c.lda,
                       &b.sa)) != AT_OK)
        return s;
    if (p->op_b == AT_OP_T && !cfg[P_OPB] &&
        (s = tc_pack_t(ex, TC_SLOT_PACKED_B, esz, align, c.n, c.k, b.count, &c.B, &c.ldb,
                       &b.sb)) != AT_OK)
        return s;
    /* FP8 reads B K-major (n x k, OPB 1): a B of op N (k x n) becomes its transpose */
    if (p->op_b == AT_OP_N && cfg[P_FP8] &&
        (s = tc_pack_t(ex, TC_SLOT_PACKED_B, esz, align, c.k, c.n, b.count, &c.B, &c.ldb,
                       &b.sb)) != AT_OK)
        return s;
    return cfg[P_PATH] == 90 ? t9_run(ex, cfg, &c, &b) : t8_run(ex, cfg, &c, &b);
}

/* Row-major C = alpha op(A) op(B) + beta C for every product of the batch. Transposed
 * operands are read as stored by a configuration with OPA / OPB 1, else go through the
 * transposing pack (tc_pack_t). PATH 80 without split-K computes up to 65535 products per
 * launch (grid y), PATH 90 BATCH 1 as many (below 2^31 cluster tiles); other PATH 90
 * configurations and split-K launch per product. */
at_status tc_run(at_exec *ex, const int *cfg, tpl_args *args)
{
    const tpl_problem *p = &args->problem;
    at_status s = tpl_check_problem(ex, &tpl_tcgemm, p);
    if (s != AT_OK)
        return s;
    if (tc_type_of(p) != cfg[P_TYPE])
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: configuration TYPE=%d does not compute "
                       "this element type", cfg[P_TYPE]);
    if (cfg[P_FP8] != tpl_math_fp8(p->math))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: configuration FP8=%d does not compute "
                       "the problem's operand types (%s)", cfg[P_FP8],
                       tpl_math_name(p->math) ? tpl_math_name(p->math) : "?");
    if ((cfg[P_SCALE] != 0) != tpl_math_fp8_block(p->math))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: configuration SCALE=%d does not compute "
                       "the problem's %s scaling", cfg[P_SCALE],
                       tpl_math_fp8_block(p->math) ? "block" : "per-tensor");
    if (!cfg[P_FP8] &&
        ((cfg[P_OPA] && p->op_a != AT_OP_T) || (cfg[P_OPB] && p->op_b != AT_OP_T)))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: configuration OPA=%d,OPB=%d reads an "
                       "operand as op T, the problem's is op N", cfg[P_OPA], cfg[P_OPB]);
    if (cfg[P_EPI] != p->epilogue)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "tcgemm: configuration EPI=%d computes the "
                       "epilogue \"%s\", the problem's is \"%s\"", cfg[P_EPI],
                       tpl_epilogue_name(cfg[P_EPI]) ? tpl_epilogue_name(cfg[P_EPI]) : "?",
                       tpl_epilogue_name(p->epilogue) ? tpl_epilogue_name(p->epilogue) : "?");
    long long m64 = p->dims[0], n64 = p->dims[1], k64 = p->dims[2];
    if (m64 < 0 || n64 < 0 || k64 < 0 || m64 > 0x7fffffff || n64 > 0x7fffffff || k64 > 0x7fffffff)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: sizes %lldx%lldx%lld out of range", m64,
                       n64, k64);
    const tpl_operand *oa = &args->operand[TPL_GEMM_A], *ob = &args->operand[TPL_GEMM_B],
                      *oc = &args->operand[TPL_GEMM_C];
    tc_call c = {(int)m64, (int)n64, (int)k64, oa->ptr, ob->ptr, oc->ptr, oa->ld, ob->ld, oc->ld,
                 (float)args->scalar[TPL_GEMM_ALPHA], (float)args->scalar[TPL_GEMM_BETA],
                 cfg[P_EPI], args->operand[TPL_GEMM_BIAS].ptr, cfg[P_FP8],
                 {args->operand[TPL_GEMM_SCALE_A].ptr, args->operand[TPL_GEMM_SCALE_B].ptr,
                  args->operand[TPL_GEMM_SCALE_D].ptr}};
    if (c.m == 0 || c.n == 0)
        return AT_OK;
    if (c.fp8 && (c.scale[0] % 4 || c.scale[1] % 4 || c.scale[2] % 4))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: FP8 scale pointers must be 4-byte "
                       "aligned (device floats)");
    if (cfg[P_SCALE] && c.k > 0 && (!c.scale[0] || !c.scale[1]))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: block-scaled FP8 needs the scale arrays "
                       "of A (m x ceil(k/128)) and B (ceil(n/128) x ceil(k/128))");
    if (TPL_EPI_BIAS(p->epilogue) != TPL_BIAS_NONE && !c.bias)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: the epilogue \"%s\" needs a bias vector, "
                       "none given", tpl_epilogue_name(p->epilogue));
    if (TPL_EPI_BIAS(p->epilogue) != TPL_BIAS_NONE && c.bias % tc_csz(cfg))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: bias vector not aligned to its %d-byte "
                       "elements", tc_csz(cfg));
    if (c.lda < tpl_gemm_min_ld(AT_ROW_MAJOR, p->op_a, c.m, c.k) ||
        c.ldb < tpl_gemm_min_ld(AT_ROW_MAJOR, p->op_b, c.k, c.n) || c.ldc < c.n)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: leading dimensions lda=%lld ldb=%lld "
                       "ldc=%lld too small for %dx%dx%d (ops %s%s)", c.lda, c.ldb, c.ldc, c.m,
                       c.n, c.k, tpl_op_name(p->op_a), tpl_op_name(p->op_b));
    if (c.lda > TC_MAX_LD || c.ldb > TC_MAX_LD || c.ldc > TC_MAX_LD)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: leading dimensions lda=%lld ldb=%lld "
                       "ldc=%lld above 2^34 elements", c.lda, c.ldb, c.ldc);
    if (!c.C || (c.k > 0 && (!c.A || !c.B)))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: NULL operand");
    long long batch = tpl_problem_batch(p);
    long long sA = oa->batch_stride, sB = ob->batch_stride, sC = oc->batch_stride;
    if (batch > 1 && (sA < 0 || sB < 0 || sC < 0))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "tcgemm: negative batch stride");
    if (batch <= 1)
        sA = sB = sC = 0;
    CUdeviceptr esz = (CUdeviceptr)tc_esz(cfg), csz = (CUdeviceptr)tc_csz(cfg);
    long long per_launch = cfg[P_PATH] == 80 && cfg[P_SPLITK] == 1 ? 65535 : 1;
    if (cfg[P_PATH] == 90 && cfg[P_BATCH]) {
        /* BATCH 1: up to 65535 products per launch (the packs' grid z), fewer where the
         * cluster tiles would reach 2^31 */
        long long per = tpl_cdiv(tpl_cdiv(c.m, cfg[P_BM]), cfg[P_CM]) *
                        tpl_cdiv(tpl_cdiv(c.n, cfg[P_BN]), cfg[P_CN]);
        per_launch = 0x7fffffff / (per > 0 ? per : 1);
        per_launch = per_launch < 1 ? 1 : per_launch > 65535 ? 65535 : per_launch;
    }
    for (long long z = 0; z < batch; z += per_launch) {
        tc_call cz = c;
        cz.A += (CUdeviceptr)(z * sA) * esz;
        cz.B += (CUdeviceptr)(z * sB) * esz;
        cz.C += (CUdeviceptr)(z * sC) * csz;
        tc_batch b = {(int)(batch - z < per_launch ? batch - z : per_launch), sA, sB, sC};
        if ((s = tc_run_products(ex, cfg, p, cz, b)) != AT_OK)
            return s;
    }
    return AT_OK;
}
