/* tcgemm_defaults.c: the tensor-core family's named baselines and built-in choices (its
 * defaults table by architecture, kind and shape class), the tables tcgemm.c's descriptor
 * points at. */
#include "tcgemm.h"
#include "tpl.h"

const tpl_baseline tc_baselines[] = {
    {"sm80-fp16", TC_P80(1, "BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=4,"
                            "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=2"),
     "PATH 80 FP16 with narrow loads: correct on every sm_80+ device and any alignment"},
    {"sm80-tf32", TC_P80(2, "BM=128,BN=128,BK=16,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=4,"
                            "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=4"),
     "PATH 80 TF32 with narrow loads: correct on every sm_80+ device and any alignment"},
    {"sm90-bf16", TC_P90(0, "BM=128,BN=256,BK=64,STAGES=3,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
                            "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16"),
     "PATH 90 BF16 prototype winner: 128x256x64, 3 stages, TMA-store epilogue (H200 1.01x "
     "cuBLAS at 4096^3)"},
    {"sm90-fp16", TC_P90(1, "BM=128,BN=256,BK=64,STAGES=3,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
                            "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16"),
     "PATH 90 FP16 prototype winner: 128x256x64, 3 stages, TMA-store epilogue"},
    {"sm90-bf16-bn192", TC_P90(0, "BM=128,BN=192,BK=64,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,"
                                  "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16"),
     "PATH 90 BF16 prototype winner at 4097^3: 128x192 tiles (5.5 waves), 4 stages"},
    {"sm90-tf32", TC_P90(2, "BM=256,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=2,WARPS_M=2,WARPS_N=2,"
                            "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16"),
     "PATH 90 TF32 prototype winner: 256x128x32, 4 stages, clusters 1x2 (A multicast)"},
    {"sm90-fp8", TC_P90(0, "BM=128,BN=256,BK=128,STAGES=3,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
                           "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,OPB=1,FP8=1"),
     "PATH 90 FP8 E4M3 x E4M3 -> BF16: the 16-bit winner's tile at 128 K elements per stage "
     "(the same bytes), TMA-store epilogue"},
    {"sm90-fp8-b128", TC_P90(0, "BM=128,BN=128,BK=128,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,"
                                "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,OPB=1,FP8=1,"
                                "SCALE=1"),
     "PATH 90 block-scaled FP8 E4M3 x E4M3 -> BF16: 128 x 128 tiles (one scale block of B), "
     "promotion every K-block, TMA-store epilogue"},
};

#define TC_16BIT (TPL_BIT(AT_R_16BF) | TPL_BIT(AT_R_16F))
#define TC_TF32 TPL_BIT(AT_R_32F)
#define TC_TILE90(tile, split, vec) "TYPE=0,PATH=90," tile ",WG=2,CM=1,CN=1,WARPS_M=2," \
    "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=" #split ",VEC=" #vec ",LOADW=16"

/* Built-in choices (TYPE fitted to the problem's type): on sm_90 the PATH 90 lattice's tiles
 * by shape class, split-K where the output has too few tiles to fill the GPU and K is deep
 * (the split that fills a wave: tpl_wave_split), 128 x 128 tiles where 128 x 256 ones would
 * leave most SMs idle, 64-wide tiles for a narrow side; batches of a few large products per
 * product, other batches in one PATH 90 BATCH 1 launch; elsewhere (and as second choices on
 * sm_90) batches on PATH 80 (64 x 64 tiles for small products) and the PATH 80 rows of
 * docs/notes/tcgemm_sm80.md. fit_kind sets OPA /
 * OPB from the problem: an op-T operand is read as stored (PATH 90 TF32 packs it: tc_run). */
#define TC_FP8_MATHS (TPL_BIT(TPL_MATH_E4M3) | TPL_BIT(TPL_MATH_E4M3_E5M2) | \
                      TPL_BIT(TPL_MATH_E5M2_E4M3))
#define TC_FP8_C (TC_16BIT | TPL_BIT(AT_R_32F))        /* an FP8 product's C types */
#define TC_FP8B_MATHS (TPL_BIT(TPL_MATH_E4M3_B128) | TPL_BIT(TPL_MATH_E4M3_E5M2_B128) | \
                       TPL_BIT(TPL_MATH_E5M2_E4M3_B128))
#define TC_TILE90_FP8B(split, vec) "TYPE=0,PATH=90,BM=128,BN=128,BK=128,STAGES=4,WG=2,CM=1," \
    "CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,SPLITK=" #split ",VEC=" #vec ",LOADW=16,OPB=1," \
    "FP8=1,SCALE=1"
#define TC_TILE90_FP8(tile, split, vec) "TYPE=0,PATH=90," tile ",BK=128,WG=2,CM=1,CN=1," \
    "WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,SPLITK=" #split ",VEC=" #vec ",LOADW=16,OPB=1,FP8=1"

/* PATH 90 BATCH 1 (a strided batch in one launch): tile, then VEC; for products of both sides
 * at least TC_B90_MIN_SIDE over a K of at least TC_B90_MIN_K (measured: the rows below) */
#define TC_B90_MIN_SIDE 50
#define TC_B90_MIN_K 32
#define TC_B90(tile, vec) "TYPE=0,PATH=90," tile ",CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0," \
    "GROUP=8,SPLITK=1,VEC=" #vec ",LOADW=16,BATCH=1"

/* A wave-fill row's rule (tpl_default.applies): one product whose cluster tiles of cfg, on dev's
 * SMs (one CTA each: PATH 90's launch bounds), the wave-fill split pays for (tcgemm.h). */
static int tc_wave_row_applies(const int *cfg, const at_device_info *dev, const tpl_problem *p)
{
    if (p->n_dims != 3 || tpl_problem_batch(p) > 1)
        return 0;
    int cl = cfg[P_CM] * cfg[P_CN];
    long long units = tpl_cdiv(tpl_cdiv(p->dims[0], cfg[P_BM]), cfg[P_CM]) *
                      tpl_cdiv(tpl_cdiv(p->dims[1], cfg[P_BN]), cfg[P_CN]);
    /* less than one wave of units only: at a ragged last wave (2500 x 6000 x 3000) the split
     * measured 0.863x / 0.849x cuBLAS (BF16 / FP16, H200, 2026-11-29) against 0.90x / 0.91x
     * whole; under a wave 1024 x 1024 x 16384 went from 0.87-0.92x to 0.980x / 0.991x */
    long long slots = tpl_device_sms(dev) / cl;
    return units < slots && tc_wave_fill_pays(units, tpl_cdiv(p->dims[2], cfg[P_BK]), slots);
}

#define TC_P80_64 "TYPE=0,PATH=80,BM=64,BN=64,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2," \
    "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16"
#define TC_P80_64_TF32 "TYPE=2,PATH=80,BM=64,BN=64,BK=16,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2," \
    "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=4,LOADW=16"

const tpl_default tc_defaults[] = {
    /* block-scaled FP8 (fitted like FP8): 128 x 128 tiles, the only width of one scale block of
     * B with room for the promotion buffer (not measured yet: docs/fp8.md) */
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8B_MATHS, .max_tiles = 32,
     .min_k = 4096, .config = TC_TILE90_FP8B(4, 2),
     .origin = "sm90 block-scaled FP8: split-K 4 for fewer than a quarter wave of tiles"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8B_MATHS,
     .max_tiles = TC_SPLIT_MAX_TILES, .min_k = 4096, .config = TC_TILE90_FP8B(2, 2),
     .origin = "sm90 block-scaled FP8: split-K 2 for at most about half a wave of tiles"},
    /* per-tensor FP8's tile, 128 x 256 in two N-halves through one promotion buffer (SCALE 1 at
     * BN 256, tcgemm.cu's T9_NH), where its tiles fill more than one wave (more than 264 tiles of
     * 128 x 128); this row awaits its measurement on an H200 (docs/fp8.md: BENCH_TCGEMM_FP8_BLOCK
     * against the 128 x 128 rows below) */
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .maths = TC_FP8B_MATHS, .min_tiles = 265,
     .config = "TYPE=0,PATH=90,BM=128,BN=256,BK=128,STAGES=3,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16,OPB=1,FP8=1,SCALE=1",
     .origin = "sm90 block-scaled FP8, 16-bit C: 128 x 256 tiles in two N-halves, 3 stages, TMA "
               "stores, above one wave of them (not measured yet)"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .maths = TC_FP8B_MATHS,
     .config = TC_TILE90_FP8B(1, 8),
     .origin = "sm90 block-scaled FP8, 16-bit C: 128 x 128 tiles, TMA stores"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8B_MATHS,
     .config = TC_TILE90_FP8B(1, 2),
     .origin = "sm90 block-scaled FP8, FP32 C: 128 x 128 tiles, direct paired stores"},
    /* FP8 operands (sm_90 only; fitted: TYPE C's type, FP8 the pair): the 16-bit rows' shape
     * classes at BK 128 (not measured yet: docs/fp8.md); an FP32 C takes the VEC 2 rows */
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8_MATHS, .max_tiles = 32,
     .min_k = 4096, .config = TC_TILE90_FP8("BM=128,BN=128,STAGES=4", 4, 2),
     .origin = "sm90 FP8: split-K 4 for fewer than a quarter wave of 128 x 128 tiles"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8_MATHS,
     .max_tiles = TC_SPLIT_MAX_TILES, .min_k = 4096,
     .config = TC_TILE90_FP8("BM=128,BN=128,STAGES=4", 2, 2),
     .origin = "sm90 FP8: split-K 2 for at most about half a wave of 128 x 128 tiles"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8_MATHS, .max_tiles = 264,
     .config = TC_TILE90_FP8("BM=128,BN=128,STAGES=4", 1, 8),
     .origin = "sm90 FP8: 128 x 128 tiles where 128 x 256 ones fill at most one wave"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8_MATHS,
     .config = TC_TILE90_FP8("BM=128,BN=256,STAGES=3", 1, 8),
     .origin = "sm90 FP8: the 16-bit 4096^3 winner's tile (128 x 256, 3 stages, TMA stores)"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_FP8_C, .maths = TC_FP8_MATHS,
     .config = TC_TILE90_FP8("BM=128,BN=128,STAGES=4", 1, 2),
     .origin = "sm90 FP8, FP32 C (no TMA stores): 128 x 128 tiles with direct paired stores at "
               "every size (reasoned, not measured)"},
    /* batches: PATH 80 computes every product in one launch (grid y), PATH 90 launches per
     * product, which pays only for a few products of a wave of tiles or more each */
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .batch = TPL_BATCHED, .max_batch = 8,
     .min_mn = 2048, .config = TC_TILE90("BM=128,BN=256,BK=64,STAGES=3", 1, 8),
     .origin = "sm90: a few large products, the 4096^3 winner per product"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .batch = TPL_BATCHED, .max_batch = 8,
     .min_mn = 2048,
     .config = "TYPE=2,PATH=90,BM=256,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=2,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16",
     .origin = "sm90 TF32: a few large products, the 4096^3 winner per product"},
    /* other sm_90 batches: PATH 90 BATCH 1, every product in one persistent launch (3-D tensor
     * maps; a batch stride that is not a multiple of 16 bytes is packed first: tcgemm_run.c),
     * the tile by the product's size: 64 rows of one warpgroup for m <= 64, 64 columns (wgmma N
     * 64) for n <= 64, else 128 x 128 (16-bit with TMA stores where C allows). Reasoned from the
     * single-product rows below, not measured yet (docs/notes/tcgemm.md); the PATH 80 rows after
     * them are later choices here (the trial's second opinion for batches of at most 32) and
     * every other architecture's rows. Products with a side under 50 or a K under 32 stay on
     * PATH 80: on an H200 (2026-11-29, no database) BATCH 1 won where both sides were 54 or
     * more (59 x 496 x 181 x 1520 FP16 1.74x cuBLAS against 0.79x on PATH 80, BF16 128 x 128 x
     * 64 x 1024 1.21x against 0.92x, TF32 1259 x 337 x 2034 x 33 1.18x against 0.72x) and lost
     * below (BF16 37 x 48 x 102 x 3358 0.46x against 0.81x, TF32 385 x 48 x 143 x 284 0.49x
     * against 0.63x, TF32 4755 x 268 x 16 x 96 0.51x against 0.61x). */
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .batch = TPL_BATCHED, .max_m = 64,
     .min_mn = TC_B90_MIN_SIDE, .min_k = TC_B90_MIN_K, .config = TC_B90("BM=64,BN=128,BK=64,STAGES=4,WG=1", 2),
     .origin = "sm90 batches: PATH 90 BATCH 1, 64 x 128 tiles of one warpgroup for m <= 64"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .batch = TPL_BATCHED, .max_n = 64,
     .min_mn = TC_B90_MIN_SIDE, .min_k = TC_B90_MIN_K, .config = TC_B90("BM=128,BN=64,BK=64,STAGES=4,WG=2", 2),
     .origin = "sm90 batches: PATH 90 BATCH 1, 128 x 64 tiles for n <= 64"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .batch = TPL_BATCHED,
     .min_mn = TC_B90_MIN_SIDE, .min_k = TC_B90_MIN_K, .config = TC_B90("BM=128,BN=128,BK=64,STAGES=4,WG=2", 8),
     .origin = "sm90 batches: PATH 90 BATCH 1, 128 x 128 tiles, TMA stores"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .batch = TPL_BATCHED, .max_m = 64,
     .min_mn = TC_B90_MIN_SIDE, .min_k = TC_B90_MIN_K, .config = TC_B90("BM=64,BN=128,BK=32,STAGES=4,WG=2", 2),
     .origin = "sm90 TF32 batches: PATH 90 BATCH 1, 64 x 128 tiles (wgmma N 64) for m <= 64"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .batch = TPL_BATCHED, .max_n = 64,
     .min_mn = TC_B90_MIN_SIDE, .min_k = TC_B90_MIN_K, .config = TC_B90("BM=128,BN=64,BK=32,STAGES=4,WG=1", 2),
     .origin = "sm90 TF32 batches: PATH 90 BATCH 1, 128 x 64 tiles of one warpgroup for n <= 64"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .batch = TPL_BATCHED,
     .min_mn = TC_B90_MIN_SIDE, .min_k = TC_B90_MIN_K, .config = TC_B90("BM=128,BN=128,BK=32,STAGES=4,WG=2", 2),
     .origin = "sm90 TF32 batches: PATH 90 BATCH 1, 128 x 128 tiles, direct stores"},
    /* batches of small products: a 64 x 64 tile where one side is at most 64 or both at most
     * 192 (a 128 x 128 tile would compute mostly padding) */
    {.cc_min = 80, .dtypes = TC_16BIT, .batch = TPL_BATCHED, .max_m = 64, .config = TC_P80_64,
     .origin = "batches: PATH 80 64 x 64 for products of at most 64 rows"},
    {.cc_min = 80, .dtypes = TC_16BIT, .batch = TPL_BATCHED, .max_n = 64, .config = TC_P80_64,
     .origin = "batches: PATH 80 64 x 64 for products of at most 64 columns"},
    {.cc_min = 80, .dtypes = TC_16BIT, .batch = TPL_BATCHED, .max_mn = 192, .config = TC_P80_64,
     .origin = "batches: PATH 80 64 x 64 for products of at most 192 x 192"},
    {.cc_min = 80, .dtypes = TC_TF32, .batch = TPL_BATCHED, .max_m = 64, .config = TC_P80_64_TF32,
     .origin = "batches: PATH 80 TF32 64 x 64 for products of at most 64 rows"},
    {.cc_min = 80, .dtypes = TC_TF32, .batch = TPL_BATCHED, .max_n = 64, .config = TC_P80_64_TF32,
     .origin = "batches: PATH 80 TF32 64 x 64 for products of at most 64 columns"},
    {.cc_min = 80, .dtypes = TC_TF32, .batch = TPL_BATCHED, .max_mn = 192,
     .config = TC_P80_64_TF32,
     .origin = "batches: PATH 80 TF32 64 x 64 for products of at most 192 x 192"},
    /* batches of a short K (on sm_90 those under TC_B90_MIN_K, which BATCH 1 leaves here): the
     * block's work is its C tile's store, so 64 x 64 tiles run as t8_gemm_short (6 blocks per
     * SM, the shared memory of the stages used: tcgemm.cu), where 128 x 128 x 32 of four warps
     * holds 255 registers and spills (2 blocks per SM). Reasoned, not measured yet: on an H200
     * (2026-11-29, tuned at the shape) 1004 x 3911 x 25 FP16 x 30 took 0.252 ms in 64 x 64 and
     * 0.267 ms in 128 x 128 before t8_gemm_short, cuBLAS 0.167 ms
     * (bench/shapes/short_k_batched.txt) */
    {.cc_min = 80, .dtypes = TC_16BIT, .batch = TPL_BATCHED, .max_k = T8_SHORT_K,
     .config = TC_P80_64,
     .origin = "batches: PATH 80 64 x 64 for a short K (t8_gemm_short, k <= 128)"},
    {.cc_min = 80, .dtypes = TC_TF32, .batch = TPL_BATCHED, .max_k = 64,
     .config = TC_P80_64_TF32,
     .origin = "batches: PATH 80 TF32 64 x 64 for a short K (t8_gemm_short, k <= 64: 4 stages of "
               "16)"},
    {.cc_min = 80, .dtypes = TC_16BIT, .batch = TPL_BATCHED,
     .config = "TYPE=0,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16",
     .origin = "batches: PATH 80 BF16/FP16 128 x 128 x 32, every product in one launch"},
    {.cc_min = 80, .dtypes = TC_TF32, .batch = TPL_BATCHED,
     .config = "TYPE=2,PATH=80,BM=128,BN=128,BK=16,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=4,LOADW=16",
     .origin = "batches: PATH 80 TF32 128 x 128 x 16, every product in one launch"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .batch = TPL_SINGLE, .max_m = 64,
     .fill_waves = 1,
     .config = "TYPE=0,PATH=90,BM=64,BN=128,BK=64,STAGES=4,WG=1,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16",
     .origin = "sm90: m <= 64, 64 x 128 tiles of one warpgroup, split-K filling a wave"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .batch = TPL_SINGLE, .max_n = 64,
     .fill_waves = 1, .config = TC_TILE90("BM=128,BN=64,BK=64,STAGES=4", 1, 2),
     .origin = "sm90: n <= 64, 128 x 64 tiles (wgmma N 64), split-K filling a wave"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .batch = TPL_SINGLE, .max_m = 64,
     .fill_waves = 1,
     .config = "TYPE=2,PATH=90,BM=64,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16",
     .origin = "sm90 TF32: m <= 64, 64 x 128 tiles (wgmma N 64), split-K filling a wave"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .batch = TPL_SINGLE, .max_n = 64,
     .fill_waves = 1,
     .config = "TYPE=2,PATH=90,BM=128,BN=64,BK=32,STAGES=4,WG=1,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16",
     .origin = "sm90 TF32: n <= 64, 128 x 64 tiles of one warpgroup, split-K filling a wave"},
    /* the wave-fill split (SPLITK 0) where its rule says it pays: fewer 128 x 256 tiles than a
     * wave over a deep K (1024 x 1024 x 16384: 32 tiles in 4 pieces each), a ragged last wave
     * (2500 x 6000 x 3000: 3.6 waves, the last 1.6 in 3 pieces); reasoned, not yet measured
     * (docs/notes/tcgemm.md section 21) */
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .batch = TPL_SINGLE,
     .applies = tc_wave_row_applies, .config = TC_TILE90("BM=128,BN=256,BK=64,STAGES=3", 0, 8),
     .origin = "sm90: the 4096^3 winner's tile with the wave-fill split, where tc_wave_fill_pays "
               "for less than a wave of tiles over a deep enough K"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .max_tiles = TC_SPLIT_MAX_TILES, .min_k = 2048,
     .fill_waves = 1, .config = TC_TILE90("BM=128,BN=128,BK=64,STAGES=4", 1, 2),
     .origin = "sm90: 128 x 128 tiles, split-K filling a wave, for at most about half a wave of "
               "them over a deep K"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT, .max_tiles = 264,
     .config = TC_TILE90("BM=128,BN=128,BK=64,STAGES=4", 1, 8),
     .origin = "sm90: 128 x 128 tiles where 128 x 256 ones fill at most one wave"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_16BIT,
     .config = TC_TILE90("BM=128,BN=256,BK=64,STAGES=3", 1, 8),
     .origin = "sm90: the 4096^3 BF16/FP16 winner (128 x 256 x 64, 3 stages, TMA stores)"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .max_tiles = TC_SPLIT_MAX_TILES, .min_k = 2048,
     .fill_waves = 1, .config = TC_TILE90("BM=128,BN=128,BK=32,STAGES=4", 1, 2),
     .origin = "sm90 TF32: 128 x 128 tiles, split-K filling a wave, for at most about half a "
               "wave of them over a deep K"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32, .max_tiles = 264,
     .config = TC_TILE90("BM=128,BN=128,BK=32,STAGES=4", 1, 2),
     .origin = "sm90 TF32: 128 x 128 tiles where 256 x 128 ones fill at most one wave"},
    {.cc_min = 90, .cc_max = 90, .dtypes = TC_TF32,
     .config = "TYPE=2,PATH=90,BM=256,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=2,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16",
     .origin = "sm90 TF32: the 4096^3 winner (256 x 128 x 32, clusters 1 x 2, TMA stores)"},
    {.cc_min = 80, .dtypes = TC_16BIT,
     .config = "TYPE=0,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16",
     .origin = "sm80: BF16/FP16 128 x 128 x 32, 4 stages, staged 16-byte stores"},
    {.cc_min = 80, .dtypes = TC_TF32,
     .config = "TYPE=2,PATH=80,BM=128,BN=128,BK=16,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,WARPS_N=2,"
               "RASTER=0,GROUP=8,SPLITK=1,VEC=4,LOADW=16",
     .origin = "sm80: TF32 128 x 128 x 16, 4 stages, staged stores"},
};

_Static_assert(sizeof tc_baselines / sizeof tc_baselines[0] == TC_N_BASELINES,
               "TC_N_BASELINES (tcgemm.h) counts tc_baselines");
_Static_assert(sizeof tc_defaults / sizeof tc_defaults[0] == TC_N_DEFAULTS,
               "TC_N_DEFAULTS (tcgemm.h) counts tc_defaults");
