// t9_host.h: host-side launch logic of the tcgemm PATH 90 kernel as plain C (grid, tensor maps,
// shared-memory size, pack decisions, cluster-aware occupancy, launch), driver entry points from a table.
#ifndef T9_HOST_H
#define T9_HOST_H
#include <cuda.h>
#include <stdint.h>
#include <string.h>

// Driver entry points the launch logic needs (the project's cudrv table provides the same).
typedef struct {
    CUresult (*tensor_map_encode_tiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                        const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                        const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                        CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int);
    CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void **, void **);
    CUresult (*occupancy_max_active_clusters)(int *, CUfunction, const CUlaunchConfig *);
    CUresult (*launch_kernel_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
} t9_drv;

// One configuration's macros (the -D values the kernel was compiled with).
typedef struct {
    int type, bm, bn, bk, stages, wg, cm, cn, raster, group, splitk, vec, ping;
    int tfk;    // TF32: -1 = the kernel's default T9_TFK, else compiled with -DT9_TFK=tfk
    int promo;  // L2 promotion of the A and B tensor maps: 0 none, 1 64B, 2 128B, 3 256B (the family's, and the default)
    int tes;    // TF32 experiment: 1 = -DT9_TES=1 (C staged in shared memory, TMA stores), 0 = the direct epilogue
    int tmt;    // TF32 (host only): 1 = A and B tensor maps of type TFLOAT32 (the TMA rounds FP32 to TF32 to nearest
                // even on its way to shared memory: the family's), 0 = FLOAT32 (the tensor cores truncate; session 15
                // measured it 4-7% slower under the power cap)
} t9_cfg;

// CUtensorMapL2promotion of t9_cfg's promo (out of range: 256B, the family's choice).
static inline CUtensorMapL2promotion t9_promo(int p)
{
    return p == 0 ? CU_TENSOR_MAP_L2_PROMOTION_NONE : p == 1 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
         : p == 2 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

static inline int t9_es(const t9_cfg *c) { return c->type == 2 ? 4 : 2; }

// Dynamic shared memory the kernel asks for (stages, 1 KB alignment slack, barriers).
static inline size_t t9_smem_bytes(const t9_cfg *c)
{
    size_t stage = (size_t)(c->bm * c->bk + c->bk * c->bn) * t9_es(c);
    size_t cst = c->vec == 8 && c->type != 2 ? (size_t)c->bm * c->bn * 2 : 0;   // C staging
    if (c->tes && c->type == 2)
        cst = (size_t)c->wg * 2 * 32 * 64 * 4;    // T9_TES: two 32 x 64 FP32 chunks per consumer warpgroup
    return c->stages * stage + cst + 1024 + 2 * c->stages * 8;
}

// Structural legality before compiling (mirrors the kernel's #error checks; 0 = legal, else why).
static inline const char *t9_reject(const t9_cfg *c)
{
    int boxe = 128 / t9_es(c), wn = c->type == 2 ? c->bm : c->bn;
    int wp = c->ping ? (c->type == 2 ? c->bn : c->bm) : (c->type == 2 ? c->bn / c->wg : c->bm / c->wg);
    if (c->bk % boxe || c->bn % boxe || c->bm % (8 * c->cn) || c->bk % (8 * c->cm))
        return "tile not a multiple of the 128-byte box";
    if (wn != 64 && wn != 128 && wn != 192 && wn != 256)
        return "wgmma N not 64/128/192/256";
    if (wp % 64 || (wp / 64) * (wn / 2) > 128)   // FP32 accumulators per thread <= 128
        return "consumer warpgroup tile not a multiple of 64 or too many accumulators";
    if (c->cm * c->cn > 8 || c->stages < 2 || c->wg < 1 || c->wg > 3)
        return "cluster > 8, stages < 2 or WG not 1..3";
    if (t9_smem_bytes(c) > 227 * 1024)
        return "shared memory over 227 KB";
    if (c->vec == 8 && (c->type == 2 || c->splitk > 1 || c->ping || c->bn % 64))
        return "VEC 8 (TMA-store epilogue) is for 16-bit types without split-K";
    if (c->tes && (c->type != 2 || c->splitk > 1 || c->ping || c->bn / c->wg != 64 || c->bm % 32))
        return "TES (TF32 TMA-store epilogue) needs TF32, no split-K or pingpong, 64 columns per warpgroup";
    if (c->bm / c->cn > 256 || c->bk / c->cm > 256)
        return "TMA box over 256 rows";
    return 0;
}

// Does an operand need the pack pre-pass (TMA: 16-byte aligned base and row stride)?
static inline int t9_needs_pack(const void *p, long long ld, int es)
{
    return ((uintptr_t)p % 16) != 0 || (ld * es) % 16 != 0;
}

// Bytes a packed copy's rows are rounded up to: TMA needs 16, but 128 ran 4097^3 BF16 1.35x faster
// (H100: every 128-byte box row then lies in one 128-byte line).
static int t9_pack_align = 128;

// Leading dimension of an operand's packed copy (row length rounded up to t9_pack_align bytes).
static inline long long t9_packed_ld(long long cols, int es)
{
    long long per = t9_pack_align / es;
    return (cols + per - 1) / per * per;
}

// Tensor maps over row-major A (m x k, lda) and B (k x n, ldb), both 16-byte aligned.
// Returns the first failing CUresult (CUDA_SUCCESS on success).
static inline CUresult t9_encode_maps(const t9_drv *d, const t9_cfg *c, const void *A, long long lda,
                               const void *B, long long ldb, int m, int n, int k,
                               CUtensorMap *ma, CUtensorMap *mb)
{
    int es = t9_es(c), boxe = 128 / es;
    CUtensorMapDataType dt = c->type == 0 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                           : c->type == 1 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                           : c->tmt ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    cuuint32_t es1[2] = {1, 1};
    cuuint64_t dimA[2] = {(cuuint64_t)k, (cuuint64_t)m}, strA[1] = {(cuuint64_t)(lda * es)};
    cuuint32_t boxA[2] = {(cuuint32_t)boxe, (cuuint32_t)(c->bm / c->cn)};
    CUresult r = d->tensor_map_encode_tiled(ma, dt, 2, (void *)A, dimA, strA, boxA, es1,
                                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                            t9_promo(c->promo), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return r;
    cuuint64_t dimB[2] = {(cuuint64_t)n, (cuuint64_t)k}, strB[1] = {(cuuint64_t)(ldb * es)};
    cuuint32_t boxB[2] = {(cuuint32_t)boxe, (cuuint32_t)(c->bk / c->cm)};
    return d->tensor_map_encode_tiled(mb, dt, 2, (void *)B, dimB, strB, boxB, es1,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                      t9_promo(c->promo), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

// Persistent grid: as many whole clusters as run at once (cluster occupancy from the driver,
// sms when the cluster is one CTA), never more than there are work units. Returns blocks, 0 on error.
static inline unsigned t9_grid(const t9_drv *d, CUfunction f, const t9_cfg *c, int m, int n, int sms)
{
    int cl = c->cm * c->cn;
    long long tm = (m + c->bm - 1) / c->bm, tn = (n + c->bn - 1) / c->bn;
    long long units = ((tm + c->cm - 1) / c->cm) * ((tn + c->cn - 1) / c->cn) * c->splitk;
    int fit = sms / cl;
    if (d->func_set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)t9_smem_bytes(c))
        != CUDA_SUCCESS)
        return 0;
    if (cl > 1) {
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        at.value.clusterDim.x = (unsigned)cl;
        at.value.clusterDim.y = at.value.clusterDim.z = 1;
        CUlaunchConfig lc;
        memset(&lc, 0, sizeof lc);
        lc.attrs = &at;
        lc.numAttrs = 1;
        lc.gridDimX = cl * fit;
        lc.gridDimY = lc.gridDimZ = 1;
        lc.blockDimX = (c->wg + 1) * 128;
        lc.blockDimY = lc.blockDimZ = 1;
        lc.sharedMemBytes = (unsigned)t9_smem_bytes(c);
        if (d->occupancy_max_active_clusters(&fit, f, &lc) != CUDA_SUCCESS || fit < 1)
            return 0;
    }
    if (units < fit)
        fit = (int)units;
    return (unsigned)(fit * cl);
}

// Tensor map over C for the TMA-store epilogue (VEC 8), when this call can use it: beta == 0,
// 16-byte aligned C and row stride. Returns 1 with *mc built, 0 when the direct epilogue must run.
static inline int t9_encode_c(const t9_drv *d, const t9_cfg *c, void *C, long long ldc, int m, int n, float beta,
                       CUtensorMap *mc)
{
    cuuint32_t es1[2] = {1, 1};
    if (c->tes && c->type == 2) {   // T9_TES: FP32 C in boxes of 32 columns x 32 rows
        if (c->splitk > 1 || beta != 0.0f || t9_needs_pack(C, ldc, 4))
            return 0;
        cuuint64_t dim4[2] = {(cuuint64_t)n, (cuuint64_t)m}, str4[1] = {(cuuint64_t)(ldc * 4)};
        cuuint32_t box4[2] = {32, 32};
        return d->tensor_map_encode_tiled(mc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, C, dim4, str4, box4, es1,
                                          CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                          CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
    }
    if (c->vec != 8 || c->type == 2 || c->splitk > 1 || beta != 0.0f || t9_needs_pack(C, ldc, 2))
        return 0;
    cuuint64_t dim[2] = {(cuuint64_t)n, (cuuint64_t)m}, str[1] = {(cuuint64_t)(ldc * 2)};
    cuuint32_t box[2] = {64, (cuuint32_t)(c->ping ? c->bm : c->bm / c->wg)};
    return d->tensor_map_encode_tiled(mc, c->type == 0 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                      2, C, dim, str, box, es1, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Launches tcgemm (maps by value, C of the input type with ldc, workspace for SPLITK > 1).
static inline CUresult t9_launch(const t9_drv *d, CUfunction f, const t9_cfg *c, unsigned grid,
                          CUtensorMap *ma, CUtensorMap *mb, void *C, int m, int n, int k,
                          long long ldc, float alpha, float beta, float *ws, CUstream st)
{
    int es_c = c->type == 2 ? 4 : 2;
    CUtensorMap mc;
    memset(&mc, 0, sizeof mc);
    int vec_ok = (((uintptr_t)C % (2 * es_c)) == 0 && ldc % 2 == 0)
               | (t9_encode_c(d, c, C, ldc, m, n, beta, &mc) << 1);
    if (!(vec_ok & 2) && c->vec == 8 && c->type != 2 && c->splitk == 1 && beta == 0.0f)
        vec_ok |= 4;    // staged epilogue with row-contiguous stores (C not TMA-able)
    void *args[] = {ma, mb, &mc, &C, &m, &n, &k, &ldc, &alpha, &beta, &vec_ok, &ws};
    unsigned smem = (unsigned)t9_smem_bytes(c);
    CUresult r = d->func_set_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    if (r != CUDA_SUCCESS)
        return r;
    if (c->cm * c->cn == 1)
        return d->launch_kernel(f, grid, 1, 1, (c->wg + 1) * 128, 1, 1, smem, st, args, 0);
    // clusters are a launch attribute (the kernel has no __cluster_dims__)
    CUlaunchAttribute at;
    memset(&at, 0, sizeof at);
    at.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at.value.clusterDim.x = (unsigned)(c->cm * c->cn);
    at.value.clusterDim.y = at.value.clusterDim.z = 1;
    CUlaunchConfig lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDimX = grid;
    lc.gridDimY = lc.gridDimZ = 1;
    lc.blockDimX = (c->wg + 1) * 128;
    lc.blockDimY = lc.blockDimZ = 1;
    lc.sharedMemBytes = smem;
    lc.hStream = st;
    lc.attrs = &at;
    lc.numAttrs = 1;
    return d->launch_kernel_ex(&lc, f, args, 0);
}
#endif
