/* t8_host.c: host-side launch logic of the tcgemm PATH 80 kernels: constraints, shared memory,
 * alignment, split-K workspace, NVRTC options and launches through a driver-entry table. */
#include "t8_host.h"

#include <stdio.h>

#define T8_CDIV(a, b) (((a) + (b) - 1) / (b))

/* Element size of the configuration's type. Never fails. */
int t8_esz(const t8_cfg *c)
{
    return c->type == 2 ? 4 : 2;
}

/* Narrowest loads, scalar-safe epilogue, no split: correct everywhere. Never fails. */
t8_cfg t8_default(int type)
{
    t8_cfg c = {type, 128, 128, 32, 4, 2, 4, 0, 8, 1, 2, type == 2 ? 4 : 2, 0, 1};
    return c;
}

/* Pipeline stages' or staged epilogue's bytes, whichever is larger. Never fails. */
size_t t8_smem_bytes(const t8_cfg *c)
{
    size_t esz = (size_t)t8_esz(c);
    size_t sa = (size_t)c->bk + 16 / esz, sb = (size_t)c->bn + 8;
    size_t pipe = (size_t)c->stages * ((size_t)c->bm * sa + (size_t)c->bk * sb) * esz;
    size_t epi = (c->vec >= 4 && c->splitk == 1) ? (size_t)c->bm * (size_t)(c->bn + 8) * 4 : 0;
    return pipe > epi ? pipe : epi;
}

static int is_one_of(int v, const int *set, int n)
{
    for (int i = 0; i < n; i++)
        if (v == set[i])
            return 1;
    return 0;
}

/* See the header: -1 with the first violated rule in why. */
int t8_check_cfg(const t8_cfg *c, size_t smem_max, char *why, size_t n)
{
    static const int tiles[] = {32, 64, 96, 128, 192, 256};
    static const int bks[] = {8, 16, 32, 64};
    const char *err = NULL;
    int warps = c->warps_m * c->warps_n;
    if (c->type < 0 || c->type > 2)
        err = "TYPE is 0, 1 or 2";
    else if (!is_one_of(c->bm, tiles, 6) || !is_one_of(c->bn, tiles, 6))
        err = "BM and BN are 32, 64, 96, 128, 192 or 256";
    else if (!is_one_of(c->bk, bks, 4) || (c->bk == 8 && c->type != 2))
        err = "BK is 16, 32 or 64 (8 for TF32 too)";
    else if (c->warps_m < 1 || c->warps_n < 1 || warps > 16)
        err = "WARPS_M, WARPS_N >= 1, at most 16 warps";
    else if (c->bm % (16 * c->warps_m) || c->bn % (16 * c->warps_n))
        err = "warp tile (BM/WARPS_M x BN/WARPS_N) must be a multiple of 16 x 16";
    else if ((c->bm / c->warps_m) * (c->bn / c->warps_n) > 64 * 128)
        err = "warp tile above 64 x 128 accumulators would spill";
    else if (c->stages < 2 || c->stages > 6)
        err = "STAGES is 2..6";
    else if (c->raster != 0 && c->raster != 1)
        err = "RASTER is 0 or 1";
    else if (c->group < 1 || c->group > 16)
        err = "GROUP is 1..16";
    else if (c->splitk < 1 || c->splitk > 16)
        err = "SPLITK is 1..16";
    else if (!(c->vec == 1 || c->vec == 2 || c->vec == 4 || (c->vec == 8 && c->type != 2)))
        err = "VEC is 1, 2, 4 or 8 (8 only for 16-bit types)";
    else if (c->type == 2 ? !(c->loadw == 16 || c->loadw == 4)
                          : !(c->loadw == 16 || c->loadw == 8 || c->loadw == 4 || c->loadw == 2))
        err = "LOADW is 16, 8, 4 or 2 (16-bit) or 16, 4 (FP32)";
    else if (c->tf32r != 0 && c->tf32r != 1)
        err = "TF32R is 0 or 1";
    else if (c->fragdb != 0 && c->fragdb != 1)
        err = "FRAGDB is 0 or 1";
    else if (t8_smem_bytes(c) > smem_max)
        err = "shared memory above the device's per-block limit";
    if (!err)
        return 0;
    if (why && n)
        snprintf(why, n, "%s", err);
    return -1;
}

/* See the header. */
int t8_align_ok(const t8_cfg *c, CUdeviceptr A, long long lda, CUdeviceptr B, long long ldb)
{
    unsigned long long w = (unsigned long long)c->loadw, e = (unsigned long long)t8_esz(c);
    return (A % w == 0 && ((unsigned long long)lda * e) % w == 0 && B % w == 0 &&
            ((unsigned long long)ldb * e) % w == 0) ? 0 : -1;
}

/* See the header. */
size_t t8_ws_bytes(const t8_cfg *c, int m, int n)
{
    return c->splitk > 1 ? (size_t)c->splitk * (size_t)m * (size_t)n * 4 : 0;
}

/* See the header. */
int t8_options(const t8_cfg *c, char *buf, size_t n)
{
    int len = snprintf(buf, n,
                       "-DPATH=80 -DTYPE=%d -DBM=%d -DBN=%d -DBK=%d -DSTAGES=%d -DWARPS_M=%d "
                       "-DWARPS_N=%d -DRASTER=%d -DGROUP=%d -DSPLITK=%d -DVEC=%d -DLOADW=%d -DTF32R=%d -DFRAGDB=%d",
                       c->type, c->bm, c->bn, c->bk, c->stages, c->warps_m, c->warps_n, c->raster,
                       c->group, c->splitk, c->vec, c->loadw, c->tf32r, c->fragdb);
    return (len < 0 || (size_t)len >= n) ? -1 : len;
}

/* See the header. */
CUresult t8_launch(const t8_drv *d, const t8_cfg *c, CUfunction gemm, CUfunction reduce, int m, int n,
                   int k, float alpha, CUdeviceptr A, long long lda, CUdeviceptr B, long long ldb,
                   float beta, CUdeviceptr C, long long ldc, CUdeviceptr ws, CUstream s)
{
    if (m < 1 || n < 1 || k < 1 || lda < k || ldb < n || ldc < n)
        return CUDA_ERROR_INVALID_VALUE;
    if (c->splitk > 1 && !ws)
        return CUDA_ERROR_INVALID_VALUE;
    size_t smem = t8_smem_bytes(c);
    CUresult r;
    if (smem > 48 * 1024) {
        r = d->FuncSetAttribute(gemm, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
        if (r != CUDA_SUCCESS)
            return r;
    }
    unsigned long long tiles = (unsigned long long)T8_CDIV(m, c->bm) * (unsigned long long)T8_CDIV(n, c->bn);
    if (tiles > 0x7fffffffULL)
        return CUDA_ERROR_INVALID_VALUE;
    void *args[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &ws};
    r = d->LaunchKernel(gemm, (unsigned)tiles, 1, (unsigned)c->splitk, 32u * c->warps_m * c->warps_n, 1, 1,
                        (unsigned)smem, s, args, NULL);
    if (r != CUDA_SUCCESS || c->splitk == 1)
        return r;
    unsigned long long mn = (unsigned long long)m * (unsigned long long)n;
    unsigned blocks = (unsigned)(T8_CDIV(mn, 256) < 65536 ? T8_CDIV(mn, 256) : 65536);
    void *rargs[] = {&m, &n, &ws, &alpha, &beta, &C, &ldc};
    return d->LaunchKernel(reduce, blocks, 1, 1, 256, 1, 1, 0, s, rargs, NULL);
}

/* See the header. */
long long t8_pack_ld(int cols, int round_elems, int esz)
{
    long long q = 16 / esz, r = round_elems > 0 ? round_elems : 1;
    long long ld = T8_CDIV((long long)cols, r) * r;
    return T8_CDIV(ld, q) * q;
}

/* See the header. */
CUresult t8_pack_launch(const t8_drv *d, CUfunction pack, int r, int c, CUdeviceptr src, long long ld,
                        CUdeviceptr dst, long long ldd, int sms, CUstream s)
{
    void *args[] = {&r, &c, &src, &ld, &dst, &ldd};
    return d->LaunchKernel(pack, (unsigned)(sms > 0 ? sms * 8 : 1024), 1, 1, 256, 1, 1, 0, s, args, NULL);
}
