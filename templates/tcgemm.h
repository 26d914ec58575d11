/* tcgemm.h: what the tensor-core family's descriptor (tcgemm.c) and its launches
 * (tcgemm_run.c) share: the parameter order, limits, scratch slots and geometry. Internal to
 * templates/. */
#ifndef TCGEMM_H
#define TCGEMM_H

#include "tpl.h"

/* Parameter order; must match the params table of tcgemm.c. */
enum {
    P_TYPE, P_PATH, P_BM, P_BN, P_BK, P_STAGES, P_WG, P_CM, P_CN, P_WARPS_M, P_WARPS_N,
    P_RASTER, P_GROUP, P_SPLITK, P_VEC, P_LOADW, P_OPB, P_OPA, P_EPI, P_FP8, P_SCALE, P_BATCH,
    P_COUNT
};

#define TC_MAX_WORKSPACE (1LL << 30)    /* split-K partials, bytes */
#define TC_MAX_LD (1LL << 34)           /* row strides below the 2^40 bytes of a TMA map */
#define TC_SPLIT_MAX_TILES 64           /* split-K only up to this many 128 x 128 tiles' area */
#define TC_PACK_ALIGN_90 128            /* PATH 90 packed rows: 128 bytes (docs/notes/tcgemm.md 3.) */
#define TC_PACK_ALIGN_80 16             /* PATH 80 packed rows: one 16-byte load */

/* Scratch slots of the configuration's exec. */
#define TC_SLOT_PARTIALS 0              /* split-K partials (zeros for k == 0) */
#define TC_SLOT_PACKED_A 1
#define TC_SLOT_PACKED_B 2
#define TC_SLOT_COUNTERS 3              /* SPLITK 0's counters (zeroed when allocated, left zero) */

extern const tpl_family tpl_tcgemm;

/* Configuration texts of one PATH and TYPE (tcgemm.c's default, tcgemm_defaults.c's tables). */
#define TC_P80(type, tile) "TYPE=" #type ",PATH=80," tile
#define TC_P90(type, tile) "TYPE=" #type ",PATH=90," tile

/* The named baselines and the built-in choices (tcgemm_defaults.c); the counts are checked
 * there at compile time. */
#define TC_N_BASELINES 8
#define TC_N_DEFAULTS 41
extern const tpl_baseline tc_baselines[TC_N_BASELINES];
extern const tpl_default tc_defaults[TC_N_DEFAULTS];

/* Bytes of one element of A and B for cfg's TYPE and FP8 (2 BF16/FP16, 4 TF32, 1 FP8). */
int tc_esz(const int *c);
/* Bytes of one element of C (and of a bias): 2 for TYPE 0 and 1, 4 for TYPE 2. */
int tc_csz(const int *c);
/* 1 if cfg computes TF32 math (TYPE 2 without FP8 operands: TYPE 2 with FP8 is an FP32 C). */
int tc_tf32(const int *c);
/* Dynamic shared memory of a PATH 90 / PATH 80 configuration (tcgemm.cu's T9_ / T8_ layout). */
long long t9_smem_bytes(const int *c);
long long t8_smem_bytes(const int *c);
/* The TYPE of a problem's kind, -1 if the family does not compute it (FP8 maths: C's type;
 * the FP8 value is tpl_math_fp8 of its math, SCALE tpl_math_fp8_block's). */
int tc_type_of(const tpl_problem *p);
/* 1 if `count` products of a rows x ld operand (esz-byte elements) `stride` elements apart can
 * be one 3D tensor map of a PATH 90 BATCH 1 launch (tcgemm_run.c): stride a positive multiple of
 * 16 bytes below 2^40 bytes, the products apart (stride >= rows * ld); count <= 1 always. Else
 * the launch packs the operand (C: stores without TMA). */
int tc_batch_stride_ok(long long count, long long stride, long long rows, long long ld, int esz);
/* PATH 80's load width in bytes for an operand at byte address base, leading dimension ld and
 * product stride stride (elements; count products): loadw (the kernel's LOADW) where all three are
 * that aligned, else 8 or 4 bytes (read in place by the same kernel), else, for 16-bit elements
 * at an even address where `prefill` (t8_prefill_fits), 2 (2-byte loads before the ring: an odd
 * ld or product stride), else 0 (the host packs it). */
int t8_load_width(unsigned long long base, long long ld, long long stride, long long count, int esz,
                  int loadw, int prefill);
/* 1 if every block of a PATH 80 call of depth k walks at most STAGES K tiles (its slice with
 * SPLITK > 1), so tcgemm.cu's t8_prefill can load a 2-byte operand whole before the ring. */
int t8_prefill_fits(const int *cfg, long long k);
/* PATH 80 short K (tcgemm.cu's t8_gemm_short): the blocks per SM its launch bounds ask for,
 * 65536 / (threads x (BM x BN / threads + 45)), where that is at least 4 (the kernel is compiled
 * only then: warp tiles of at most 32 x 32), else 0. */
#define T8_SHORT_K 128          /* the largest K run by t8_gemm_short (tcgemm.cu names it) */
int t8_short_minb(const int *cfg);
/* 1 if a call of depth k runs t8_gemm_short: it exists (t8_short_minb), SPLITK 1, 0 < k <=
 * T8_SHORT_K, and the block's K tiles fit in the ring (at most STAGES). */
int t8_short_entry(const int *cfg, long long k);
/* Dynamic shared memory a PATH 80 launch of depth k needs: t8_smem_bytes with STAGES cut to
 * the K tiles a block walks where those are fewer (the kernel loads stage s only where s is
 * below that count), never below the staged epilogue's. */
long long t8_smem_used(const int *cfg, long long k);
/* The wave-fill split of SPLITK 0 (PATH 90, tcgemm.cu): `units` output units (cluster tiles) of
 * `ksteps` K steps each on `slots` persistent clusters walking them round-robin. Units
 * [0, dp_units) run whole (full waves, dp_units a multiple of slots); each of the others is cut
 * into `split` pieces of equal K ranges (piece z of every such unit over the same range, so the
 * clusters running at once share A and B slices in L2), combined by the last piece to arrive.
 * Of the splits that cut the last partial wave alone or with up to TC_WAVE_MAX_EXTRA full waves
 * before it into 2..TC_WAVE_MAX_SPLIT pieces of at least TC_WAVE_MIN_KSTEPS K steps, the one
 * whose busiest cluster has the fewest K steps (a piece's partial counted as TC_WAVE_FIXUP_KSTEPS
 * K steps where it is stored and again where it is summed), if it saves at least
 * TC_WAVE_MIN_GAIN_PERCENT of the whole units' K steps; split 1 (dp_units = units) otherwise.
 * steps and steps_whole: the busiest cluster's predicted K steps with the plan and with every
 * unit whole. */
#define TC_WAVE_MAX_SPLIT 16
#define TC_WAVE_MAX_EXTRA 2
#define TC_WAVE_MIN_KSTEPS 8
#define TC_WAVE_FIXUP_KSTEPS 1
typedef struct tc_wave_plan {
    long long dp_units, split, steps, steps_whole;
} tc_wave_plan;
void tc_wave_plan_of(long long units, long long ksteps, long long slots, tc_wave_plan *w);
#define TC_WAVE_MIN_GAIN_PERCENT 5
/* The wave-fill rule (the built-in choices, applicable): 1 if the plan splits, so where fewer
 * units than about 0.9 of a wave, or a ragged last wave, leave at least TC_WAVE_MIN_GAIN_PERCENT
 * of the clusters' time idle, over a K deep enough for pieces of TC_WAVE_MIN_KSTEPS K steps. */
int tc_wave_fill_pays(long long units, long long ksteps, long long slots);
/* How a PATH 90 configuration reads one operand (tcgemm_run.c's t9_run): through its tensor map
 * (TMA: base and row stride 16-byte aligned, BATCH 1 product strides as tc_batch_stride_ok
 * says), copied directly by the producer warps in 8- or 4-byte words (BF16/FP16 without a
 * cluster: base, row stride and, with count > 1, product stride 8- or 4-byte aligned; tcgemm.cu's
 * t9x_ section), or packed first (everything else: FP8, TF32, clusters, an odd 16-bit ld). */
enum { T9_READ_TMA, T9_READ_DIRECT8, T9_READ_DIRECT4, T9_READ_PACK };
/* The way cfg reads an operand at byte address addr, `rows` stored rows ld elements apart,
 * `count` products `stride` elements apart (count is 1 outside BATCH 1). */
int t9_operand_read(const int *cfg, unsigned long long addr, long long rows, long long ld,
                    long long count, long long stride);
/* Row-major C = act(alpha op(A) op(B) + beta C + bias) for every product of the batch
 * (tcgemm_run.c): the family's run(). */
at_status tc_run(at_exec *ex, const int *cfg, tpl_args *args);

#endif
