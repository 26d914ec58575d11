/* t8_host.h: host-side launch logic of the tcgemm PATH 80 kernels (templates/tcgemm.cu, PATH 80) as
 * plain C over a small driver-entry table, ready to move into the family's descriptor. */
#ifndef T8_HOST_H
#define T8_HOST_H

#include <cuda.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One PATH 80 configuration: the kernel's -D macros. */
typedef struct t8_cfg {
    int type;       /* 0 BF16, 1 FP16, 2 FP32 data with TF32 math */
    int bm, bn, bk, stages, warps_m, warps_n;
    int raster, group, splitk, vec, loadw, tf32r;
    int fragdb;     /* 1 = double-buffered ldmatrix fragments, 0 = single */
} t8_cfg;

/* The driver entry points the launch code needs (same signatures as runtime/cudrv.h's table). */
typedef struct t8_drv {
    CUresult (*LaunchKernel)(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned smem, CUstream stream,
                             void **params, void **extra);
    CUresult (*FuncSetAttribute)(CUfunction fn, CUfunction_attribute attr, int value);
} t8_drv;

/* Bytes of one element of A, B and C for the configuration's type (2 or 4). */
int t8_esz(const t8_cfg *c);

/* The built-in default: correct for every shape, leading dimension and alignment. */
t8_cfg t8_default(int type);

/* Dynamic shared memory bytes of t8_gemm for c (pipeline ring or staged epilogue, the larger). */
size_t t8_smem_bytes(const t8_cfg *c);

/* 0 if c is legal on a device allowing smem_max bytes of dynamic shared memory per block;
 * otherwise -1 with the reason in why (n bytes). Mirrors the kernel's static_asserts. */
int t8_check_cfg(const t8_cfg *c, size_t smem_max, char *why, size_t n);

/* 0 if the call's A, B (device addresses) and leading dimensions (elements) are aligned for
 * c->loadw; -1 otherwise (the caller then packs with tc_pack or picks a narrower LOADW). C needs
 * no check: the epilogue falls back to scalar stores at run time. */
int t8_align_ok(const t8_cfg *c, CUdeviceptr A, long long lda, CUdeviceptr B, long long ldb);

/* Bytes of FP32 split-K workspace for an m x n call (0 when c->splitk == 1). */
size_t t8_ws_bytes(const t8_cfg *c, int m, int n);

/* Writes the NVRTC -D options of c (space-separated) into buf; returns the length, or -1 if n
 * is too small. */
int t8_options(const t8_cfg *c, char *buf, size_t n);

/* Launches C = alpha*A*B + beta*C: t8_gemm (and tc_splitk_reduce when c->splitk > 1, with ws
 * of t8_ws_bytes) on stream s. Raises the dynamic shared memory limit first when needed. Returns
 * the first failing CUresult, or CUDA_ERROR_INVALID_VALUE for a bad shape. */
CUresult t8_launch(const t8_drv *d, const t8_cfg *c, CUfunction gemm, CUfunction reduce, int m, int n,
                   int k, float alpha, CUdeviceptr A, long long lda, CUdeviceptr B, long long ldb,
                   float beta, CUdeviceptr C, long long ldc, CUdeviceptr ws, CUstream s);

/* Leading dimension (elements) of a packed copy of a matrix with `cols` columns: cols rounded
 * up to a multiple of round_elems, itself rounded up to a multiple of 16 bytes' elements. */
long long t8_pack_ld(int cols, int round_elems, int esz);

/* Launches tc_pack(r, c, src, ld, dst, ldd) on `sms` multiprocessors' worth of blocks;
 * dst must be 16-byte aligned with ldd from t8_pack_ld. Returns the launch's CUresult. */
CUresult t8_pack_launch(const t8_drv *d, CUfunction pack, int r, int c, CUdeviceptr src, long long ld,
                        CUdeviceptr dst, long long ldd, int sms, CUstream s);

#ifdef __cplusplus
}
#endif
#endif
