/* matmul_defaults.c: the matmul family's named baselines and built-in choices (its defaults
 * table by architecture, kind and shape class, with the rules its rows apply), the tables
 * matmul.c's descriptor points at. */
#include "matmul.h"
#include "tpl.h"

#define MM_CANON_ALGO2 "BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0"
/* The default tile with other ops (PAD where the transposed stores need it): the built-in fallback
 * of transposed problems (the lookup tries baselines after the default). */
#define MM_DEFAULT_TILE "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4," \
                        "WNITER=2,STAGES=3,VEC=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,"
#define MM_NN_WINNER "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8," \
                     "WNITER=2,STAGES=2,VEC=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,"

#define MM_SKINNY "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2," \
                  "STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0"
/* Batches a 64-wide tile pads less: the tuner's winners (H200, docs/notes/matmul.md part 11) */
#define MM_B64 "BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0," \
               "FFMA=0,OPA=0,OPB=0,BATCH=1"

/* tpl_default.applies: cfg's tile pads p a sixteenth less than 128 x 128, not more than BN x BM */
static int mm_tile_pads_less(const int *cfg, const at_device_info *dev, const tpl_problem *p)
{
    (void)dev;
    long long m = p->dims[0], n = p->dims[1], bm = cfg[P_BM], bn = cfg[P_BN];
    long long mine = tpl_cdiv(m, bm) * bm * tpl_cdiv(n, bn) * bn;
    return p->n_dims == 3 && mine * 16 <= tpl_cdiv(m, 128) * tpl_cdiv(n, 128) * 128 * 128 * 15 &&
           mine <= tpl_cdiv(m, bn) * bn * tpl_cdiv(n, bm) * bm;
}

/* A small output over a deep K: both sides over 128, at most 16 tiles of 128 x 128 over a K of
 * 1024 or more, or at most 64 over 2048 or more (the class of the tuner's weakest calls,
 * 0.66-0.83x cuBLAS at 593 x 346 x 15207, 1747 x 148 x 12395, 202 x 676 x 7645,
 * 707 x 433 x 3407: .dev/deep-tuning-2026-11-30.txt) */
static int mm_small_output_deep_k(const tpl_problem *p)
{
    if (p->n_dims != 3 || p->dims[0] <= 128 || p->dims[1] <= 128)
        return 0;
    long long tiles = tpl_cdiv(p->dims[0], 128) * tpl_cdiv(p->dims[1], 128);
    return tiles <= 64 && p->dims[2] >= (tiles <= 16 ? 1024 : 2048);
}

/* tpl_default.applies of the deep-K rows: the class, and for the 64 x 128 row its padding */
static int mm_deep_k_applies(const int *cfg, const at_device_info *dev, const tpl_problem *p)
{
    (void)cfg;
    (void)dev;
    return mm_small_output_deep_k(p);
}

static int mm_deep_k_pads_less(const int *cfg, const at_device_info *dev, const tpl_problem *p)
{
    return mm_small_output_deep_k(p) && mm_tile_pads_less(cfg, dev, p);
}

/* 64 x 128 / 128 x 64 tiles of 4 warps (3 blocks per SM: ptxas -v, sm_90, 151-168 registers
 * under the launch bounds' 168) split to fill one wave of them exactly */
#define MM_DEEP_TAIL "BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1," \
                     "SK=0,FFMA=0,OPA=0,OPB=0"

#define MM_BATCHED "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1," \
                   "STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=1,OPA=0,OPB=0,BATCH=1"

/* Built-in choices (ops and batch fitted to the problem): the H200 winners of each op pair
 * at 4096^3, of 8192 x 64 x 8192 (narrow and deep: split-K), of batches that 64-wide tiles pad
 * less and of 256^3 x 512 (other batches); the default tile for everything else. */
const tpl_default mm_defaults[] = {
    {.cc_min = 80, .batch = TPL_BATCHED, .applies = mm_tile_pads_less,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128," MM_B64, .origin = "64 x 128: pads less"},
    {.cc_min = 80, .batch = TPL_BATCHED, .applies = mm_tile_pads_less,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64," MM_B64, .origin = "128 x 64: pads less"},
    {.cc_min = 80, .batch = TPL_BATCHED, .config = MM_BATCHED,
     .origin = "the 256^3 x 512 strided batched winner (H200)"},
    /* small outputs over a deep K: the split count that fills one wave of 3 blocks per SM
     * exactly (tpl_wave_split_exact; 593 x 346 x 15207: 30 tiles of 128 x 64, split 13 = 390
     * blocks, where the listed counts left 240: 8 warps on the busiest SMs, not 12) */
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 64, .min_k = 1024, .min_mn = 129,
     .fill_waves = TPL_FILL_ONE_WAVE, .applies = mm_deep_k_pads_less,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128," MM_DEEP_TAIL,
     .origin = "64 x 128 tiles where they pad less, split to fill one wave exactly, for a small "
               "output over a deep K"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 64, .min_k = 1024, .min_mn = 129,
     .fill_waves = TPL_FILL_ONE_WAVE, .applies = mm_deep_k_applies,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64," MM_DEEP_TAIL,
     .origin = "128 x 64 tiles split to fill one wave exactly, for a small output over a deep K"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 16, .min_k = 1024, .fill_waves = 1,
     .config = MM_SKINNY,
     .origin = "128 x 64 tiles, split-K filling a wave (8 at most on this tile) for a few tiles "
               "over a K of 1024 or more"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 64, .min_k = 2048, .config = MM_SKINNY,
     .origin = "the 8192 x 64 x 8192 winner (H200): 128 x 64, split-K 4"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 256, .min_k = 2048, .max_n = 64,
     .fill_waves = 1, .config = MM_SKINNY,
     .origin = "128 x 64 tiles over a narrow N and a deep K, split-K filling a wave (16384 x 64 "
               "x 16384: the tuner's winner, 2026-11-29)"},
    /* a side under 384 over a K of 512 or more, at most 80 tiles of 128 x 128: 128 x 64
     * tiles with the split that fills a wave, not 128 x 256 ones that pad the narrow side (the
     * tuner's winners at 2528 x 260 x 1782, 1555 x 498 x 2314, 14014 x 311 x 1637: 128 x 64,
     * split-K 4; 2528 x 260 x 1782 took 0.101 ms, the 128 x 256 row 0.179 ms; H200,
     * 2026-11-29-H200-fp32-fp64-every-family-seeds-4-8-bb64b50.txt) */
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 80, .min_k = 512, .max_m = 383,
     .fill_waves = 1, .config = MM_SKINNY,
     .origin = "128 x 64 tiles, split-K filling a wave, for an M under 384 over a K of 512 or "
               "more"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 80, .min_k = 512, .max_n = 383,
     .fill_waves = 1, .config = MM_SKINNY,
     .origin = "128 x 64 tiles, split-K filling a wave, for an N under 384 over a K of 512 or "
               "more"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 80, .min_k = 512,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=8,TN=4,WNITER=2,"
               "STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
     .origin = "the 1000^3 winner (H200): 128 x 256, split-K 4 for less than a wave of tiles"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 112, .min_k = 2048, .fill_waves = 1,
     .config = MM_SKINNY, .origin = "128 x 64 split to fill a wave, not the next row's unsplit "
                                     "64 x 128 (docs/notes/matmul.md part 11)"},
    {.cc_min = 80, .batch = TPL_SINGLE, .max_tiles = 132,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=16,WM=32,WN=64,TM=4,TN=4,WNITER=2,"
               "STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
     .origin = "64 x 128 tiles for less than a wave of 128 x 128 tiles over a shallow K"},
    {.cc_min = 80, .ops = TPL_OPS(0, 0), .batch = TPL_SINGLE, .config = MM_NN_WINNER "PAD=4,OPA=0,OPB=0",
     .origin = "the NN 4096^3 winner (H200)"},
    {.cc_min = 80, .ops = TPL_OPS(0, 1), .batch = TPL_SINGLE,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,"
               "STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=1,CPS=8",
     .origin = "the NT 4096^3 winner (H200)"},
    {.cc_min = 80, .ops = TPL_OPS(1, 0), .batch = TPL_SINGLE,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,"
               "STAGES=2,VEC=4,PAD=0,SPLITK=1,FRAG=1,SK=0,FFMA=1,OPA=1,OPB=0,CPS=4",
     .origin = "the TN 4096^3 winner (H200)"},
    {.cc_min = 80, .ops = TPL_OPS(1, 1), .batch = TPL_SINGLE,
     .config = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,"
               "STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=1,OPB=1,CPS=4",
     .origin = "the TT 4096^3 winner (H200)"},
    {.config = MM_DEFAULT_TILE "PAD=4,OPA=0,OPB=0", .origin = "the default tile, any ops"},
};

const tpl_baseline mm_baselines[] = {
    {"seed_naive", "ALGO=0,TILE=8,UNROLL=1," MM_CANON_ALGO2,
     "seed 1 version 0: one thread per element, 16x16 blocks, global memory only"},
    {"seed_tiled", "ALGO=1,TILE=16,UNROLL=1," MM_CANON_ALGO2,
     "seed 1 version 1 / seed 2: 16x16 shared-memory tiles, bounds-checked"},
    {"seed_tiled32", "ALGO=1,TILE=32,UNROLL=1," MM_CANON_ALGO2,
     "seed 2 as written: 32x32 shared-memory tiles, bounds-checked"},
    {"default_nt", MM_DEFAULT_TILE "PAD=4,OPA=0,OPB=1",
     "the default configuration for op(B) = T (B stored n x k)"},
    {"default_tn", MM_DEFAULT_TILE "PAD=0,OPA=1,OPB=0",
     "the default configuration for op(A) = T (A stored k x m)"},
    {"default_tt", MM_DEFAULT_TILE "PAD=4,OPA=1,OPB=1",
     "the default configuration for both operands transposed"},
    /* every tuning run evaluates the baselines that serve its problem: these start the
     * transposed searches from the NN winner's tile (4096^3 on the H200: 128x256x16, FRAG=1,
     * FFMA=2; bench/results/2026-11-22-H200-matmul-ffma-bench.txt) */
    {"nn_winner_nt", MM_NN_WINNER "PAD=4,OPA=0,OPB=1",
     "the NN 4096^3 winner's tile with op(B) = T"},
    {"nn_winner_tn", MM_NN_WINNER "PAD=0,OPA=1,OPB=0",
     "the NN 4096^3 winner's tile with op(A) = T"},
    {"nn_winner_tt", MM_NN_WINNER "PAD=4,OPA=1,OPB=1",
     "the NN 4096^3 winner's tile with both operands transposed"},
    /* the transposed 4096^3 winners on the H200 (TN, TT: bench/results/2026-11-23-H200-matmul-ops-
     * run2.txt; NT: 2026-11-23-H200-matmul-ops-8a9b7d7.txt; NT, TT and TN with spread copies:
     * 2026-11-23-H200-matmul-nt-cps.txt): short tunings of these kinds start from them */
    {"tn_winner", "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,"
                  "STAGES=2,VEC=4,PAD=0,SPLITK=1,FRAG=1,SK=0,FFMA=1,OPA=1,OPB=0,CPS=4",
     "the TN 4096^3 winner (H200): 128x128, BK=16, rows serpentine, copies spread over 4 k"},
    {"tt_winner", "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,"
                  "STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=1,OPB=1,CPS=4",
     "the TT 4096^3 winner (H200): 128x128, BK=16, columns serpentine, copies spread over 4 k"},
    /* NT: the best of all 1416 NT configurations searched exhaustively (2026-11-28-H200-matmul-nt-
     * exhaustive.txt: 1.0043x cuBLAS in 9 paired rounds, the 2026-11-23 winner 0.9995x in one process) */
    {"nt_winner", "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,"
                  "STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=1,CPS=8",
     "the NT 4096^3 winner (H200): 128x128, BK=16, 64x32 warps, 2 stages, columns serpentine, copies spread over 8 k"},
    /* the 8192x64x8192 winner (H200, 2026-11-23: 0.2064 ms, 1.048x cuBLAS): narrow and deep problems
     * need a narrow tile and split-K, a corner a short guided search can miss (the 2026-11-23 one-GPU
     * default run: 0.4023 ms after 71 evaluations, none split; 2026-11-23-H200x2-multigpu-ef2a28e.txt) */
    {"skinny_splitk", "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2,"
                      "STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
     "the 8192x64x8192 winner (H200): 128x64, BK=16, split-K 4"},
    /* strided batches take the batched kernel (BATCH=1): the lookup's fallback for a batch nothing
     * was tuned for (the default configuration computes one product) */
    {"batched_nn", "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,"
                   "STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=1,OPA=0,OPB=0,BATCH=1",
     "the 256^3 x 512 strided batched winner (H200, 2026-11-23): 128x128, BK=16, rows serpentine"},
    {"batched_nt", MM_DEFAULT_TILE "PAD=4,OPA=0,OPB=1,BATCH=1",
     "the default tile for strided batches with op(B) = T"},
    {"batched_tn", MM_DEFAULT_TILE "PAD=0,OPA=1,OPB=0,BATCH=1",
     "the default tile for strided batches with op(A) = T"},
    {"batched_tt", MM_DEFAULT_TILE "PAD=4,OPA=1,OPB=1,BATCH=1",
     "the default tile for strided batches with both operands transposed"},
};

_Static_assert(sizeof mm_defaults / sizeof mm_defaults[0] == MM_N_DEFAULTS,
               "MM_N_DEFAULTS (matmul.h) counts mm_defaults");
_Static_assert(sizeof mm_baselines / sizeof mm_baselines[0] == MM_N_BASELINES,
               "MM_N_BASELINES (matmul.h) counts mm_baselines");
