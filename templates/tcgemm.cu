// tcgemm.cu: the tensor-core GEMM family, C = alpha*A*B + beta*C, row-major, BF16/FP16 inputs
// (C of the input type), TF32 math on FP32 data (FP32 C) or FP8 inputs with per-tensor scales (PATH 90;
// BF16/FP16/FP32 C), FP32 accumulation; PATH picks the kernel.
//
// PATH 90 (NVRTC -arch=sm_90a, sm_90 devices only): `tcgemm`, a persistent, warp-specialized
// kernel. Warpgroup 0 is the producer: one elected thread brings A and B tiles with TMA
// (cp.async.bulk.tensor, 128-byte swizzle) into a STAGES-deep ring, each stage guarded by a
// full/empty mbarrier pair; with a thread-block cluster of CM x CN CTAs the A tile is shared by the
// CN CTAs of a cluster row and the B tile by the CM CTAs of a cluster column (each loads a slice
// and multicasts it). Warpgroups 1..WG are consumers issuing wgmma.mma_async from shared memory;
// setmaxnreg moves registers from the producer to them. The epilogue applies alpha and beta to
// the FP32 accumulators and rounds once at the store, guarded at the edges (any m, n).
//   Host contract (templates/tcgemm.c): tensor maps over A (dims {k, m}, box {128/ES, BM/CN}) and
// B (dims {n, k}, box {128/ES, BK/CM}), 128-byte swizzle, so row strides must be multiples of 16
// bytes and bases 16-byte aligned; zero fill of out-of-range boxes makes ragged m, n, k correct with
// no special loop. A BF16/FP16 operand without that alignment but 4-byte aligned (an even ld) is
// copied by the 128 producer threads with cp.async straight into the same swizzled layout (vec_ok
// bits 3-5, the t9x_ section; no cluster); the host packs any other one first with tc_pack. OPB 1: B is the n x k
// matrix of an op(B) = T call (dims {k, n}, box {128/ES, BN/CM}), read K-major like A; OPA 1: A is
// the k x m matrix of an op(A) = T call (dims {m, k}, box {128/ES, BK/CN}), read M-major like B. A launch with CM*CN > 1
// is a cluster launch (cuLaunchKernelEx, cluster CM*CN x 1 x 1).
//   16-bit types compute D = A*B with A K-major and B N-major (wgmma transposes B). TF32 needs
// both wgmma operands K-major, so it computes D^T = B^T * A^T: the B tile (N-major in shared
// memory) is read into registers as wgmma's A operand, the A tile is the K-major B operand; each
// k8 step is its own wgmma group, 3 in flight (T9_TFK), so no register load falls inside a group.
//   SPLITK 0 (wave-fill split, BATCH 0, no FP8): the host (tcgemm_run.c's tc_wave_plan) keeps whole
// waves of units (cluster tiles) data-parallel, one unit per item with the normal epilogue, and splits the
// last sk units (the partial wave, perhaps with a full wave or two before it) into S pieces of equal K
// steps, piece z of every split tile over the same K range, walked in the persistent order (units dp + S t
// + z), so the CTAs that run at once share A and B slices in L2 as a data-parallel wave does (a stream-K
// split into spread K ranges did not: notes section 10). The pieces of a tile are combined in the kernel
// with no waiting (no co-residency assumed): each piece's warpgroups store FP32 partials to the piece's
// workspace slot and count in on a counter per tile in global memory; the last to arrive adds the S
// pieces in order z = 0..S-1 (deterministic, whoever arrives last), resets the counter and runs the
// normal epilogue (alpha, beta, EPI, VEC 8's TMA stores) on the sum. docs/notes/tcgemm.md section 21.
//
// PATH 80 (NVRTC -arch=sm_80 or the device's own arch; every GPU since Ampere): `t8_gemm`,
// mma.sync (m16n8k16 16-bit, m16n8k8 TF32) with ldmatrix fragments and a cp.async ring of STAGES
// stages, WARPS_M x WARPS_N warps per block, one block per output tile (grid tiles x 1 x SPLITK).
// A short K (SPLITK 1, k <= 128, at most STAGES K tiles) runs `t8_gemm_short`, the same kernel
// bounded to more resident blocks (64 x 64 tiles: 6 per SM) with the shared memory of its stages.
// Loads are LOADW bytes wide; an operand whose base, row stride or product stride is less aligned
// is read in place 8 or 4 bytes at a time (a run-time choice, `narrow`); a 16-bit one with 2-byte
// rows (an odd leading dimension) 2 bytes at a time by `t8_prefill` before the ring starts, where
// every block walks at most STAGES K tiles (short K, split-K slices), and packed by the host only
// past that; the epilogue falls back to scalar stores where C or ldc is not aligned. Each operand's
// stage tile keeps its stored layout: A BM x BK (OPA 0) or BK x BM (OPA 1, op T), B BK x BN (OPB 0)
// or BN x BK (OPB 1, op T); the fragments come from either with ldmatrix, .trans where the stored
// layout is the fragment's transpose (TF32: 32-bit elements, which ldmatrix cannot transpose, are
// read one by one there), so an op-T operand needs no transposing pack.
//
// Shared by both paths: tc_pack (copies an operand into an aligned, padded buffer), tc_pack_t
// (the same for an operand given transposed, op T: the copy is its transpose) and
// tc_splitk_reduce (SPLITK > 1: the kernels write FP32 partials ws[z][m][n], the reduce sums them
// in slice order (deterministic) and applies alpha and beta).
//
// Types (TYPE): 0 BF16 A, B and C; 1 FP16 A, B and C; 2 FP32 A, B and C with TF32 math.
// FP8 (FP8 1..3, PATH 90 only): A and B in FP8 (E4M3 x E4M3, E4M3 x E5M2, E5M2 x E4M3), TYPE then names C's type (0
// BF16, 1 FP16, 2 FP32); wgmma m64nNk32 reads both operands K-major (OPA 0, OPB 1: A m x k, B n x k; the host packs
// other layouts), 128 elements = one 128-byte swizzled row per box (BK 128); the per-tensor scales are device floats
// read at the start, D = scale_d (alpha scale_a scale_b A B + beta C) folded into alpha and beta (TC_F8_SCALE).
// SCALE 1 (block scales, docs/fp8.md): scale_a per 1 x 128 of A and scale_b per 128 x 128 of B (device arrays);
// each K-block's wgmmas accumulate into a second accumulator, promoted into the first with its two scales in FP32.
// SCALE 2: the same product with two promotion buffers, so one K-block's wgmmas run while the previous one is promoted.
// SCALE 1 at BN 256 (T9_NH): each K-block's wgmmas run in two N-halves of 128 (m64n128k32) into one promotion buffer of
// half the accumulator's size, each half promoted into its half of the accumulator before the next half is issued.
// SCALE 3: the BN 256 tile with A's fragments in registers and the wgmmas never drained during a promotion (T9_AREG):
// each K-block's A slice (64 x 128 per warpgroup) is read once with ldmatrix; its wgmmas run in four N-quarters of 64
// through two promotion buffers of 32 registers, each quarter issued before the previous one is waited for and
// promoted, the last one promoted during the next K-block's first (docs/fp8.md, "SCALE 3").
// Accumulation is FP32; alpha and beta are FP32 and applied to the FP32 accumulator; C is rounded
// once (round to nearest even) at the store. C has the input type: it halves the epilogue's
// traffic and is what frameworks and cublasGemmEx with Ctype = Atype do. beta == 0 never reads C
// (NaN there cannot leak into the result).
// TF32 rounding: every FP32 input is ROUNDED to TF32 (to nearest, ties to even; the 13 low
// mantissa bits then zero), as cuBLAS's TF32 math does. PATH 90: the host's tensor maps over A
// and B have type TFLOAT32, so the TMA rounds on the way to shared memory; PATH 80 rounds each
// fragment element (cvt.rn.tf32.f32 on sm_90+, the same rule in integer operations below that).
// Both paths round alike; a reference must round the same way. Rounding is more accurate than
// truncating (wgmma reads FP32 operands truncated) and it is faster on the H200: operands whose
// low bits are zero toggle fewer bits on their way into the tensor cores, which buys clock under
// the power cap (bench/notes_tcgemm.md section 17: 8192^3 from 1485-1504 to 1568-1571 MHz).
//
// Fused epilogue (EPI, templates/tcgemm.c from the problem's kind): D = act(alpha A B + beta C + bias) with a bias of
// C's type per row or per column of C and ReLU or GELU (tanh or erf form), applied in FP32 where alpha and beta are
// (every store path of both PATHs, and tc_splitk_reduce where split-K forms the final value), rounded once.
//
// Verification rule (templates/tcgemm.c's tolerance(), README): with C_ref the float64 product of
// the same rounded (TF32: rounded to nearest even) inputs, times alpha, plus beta * C0, NOT rounded,
//   ||C - C_ref||_F / ||C_ref||_F <= 2 * u_out + (4 * sqrt(k) + k / 8) * 2^-24,
// u_out = 2^-8 (BF16 C), 2^-11 (FP16 C), 2^-24 (FP32 C); NaN anywhere fails. The k / 8 term:
// the tensor cores' FP32 accumulation truncates, so TF32's error grows linearly in k (measured
// about 0.039 k 2^-24 on uniform [-1, 1) data, bench/notes_tcgemm.md); 4 sqrt(k) alone would
// reject correct kernels above k of about 10000.

// ---- tunables (the host passes every one as -D; defaults: the PATH's usual winner) ----
#ifndef TYPE
#define TYPE 0          // input/output type: 0 BF16, 1 FP16 (C of the same type), 2 TF32 math on FP32 data (FP32 C)
#endif
#ifndef PATH
#define PATH 90         // 90: wgmma + TMA + mbarriers + clusters (sm_90a); 80: mma.sync + ldmatrix + cp.async (sm_80+)
#endif
#ifndef BM
#define BM 128          // block tile rows of C. PATH 90: 64*WG*i (16-bit), TF32 wgmma N (64, 128, 192, 256); PATH 80: multiple of 16*WARPS_M
#endif
#ifndef BN
#if PATH == 80
#define BN 128          // block tile columns of C. PATH 90: 64, 128, 192, 256 (16-bit: wgmma N), TF32 64*WG*i; PATH 80: multiple of 16*WARPS_N
#else
#define BN 256
#endif
#endif
#ifndef BK
#if PATH == 80
#define BK 32           // K depth of one stage. PATH 90: multiple of 128 bytes (64 16-bit, 32 TF32) and of 8*CM; PATH 80: 16, 32, 64 (8 for TF32 too)
#else
#define BK 64
#endif
#endif
#ifndef STAGES
#define STAGES 4        // pipeline depth: PATH 90 2..8 (within 227 KB of shared memory), PATH 80 2..6
#endif
#ifndef WG
#define WG 2            // PATH 90: consumer warpgroups (1, 2, 3); each owns BM/WG rows (TF32: BN/WG columns)
#endif
#ifndef CM
#define CM 1            // PATH 90: cluster rows (1, 2, 4): CTAs along M sharing (multicasting) one B tile
#endif
#ifndef CN
#define CN 1            // PATH 90: cluster columns (1, 2, 4): CTAs along N sharing one A tile; CM*CN <= 8
#endif
#ifndef WARPS_M
#define WARPS_M 2       // PATH 80: warps along M; warp tile rows BM / WARPS_M (multiple of 16)
#endif
#ifndef WARPS_N
#define WARPS_N 4       // PATH 80: warps along N; warp tile columns BN / WARPS_N (multiple of 16)
#endif
#ifndef RASTER
#define RASTER 0        // tile order: 0 along rows first (n fastest), 1 along columns first (m fastest)
#endif
#ifndef GROUP
#define GROUP 8         // tile swizzle: this many (cluster-)tile rows (RASTER 1: columns) walked together; 1 = off (1..16)
#endif
#ifndef SPLITK
#define SPLITK 1        // K slices (1..16): >1 writes FP32 partials to a workspace, tc_splitk_reduce sums them;
                        // PATH 90 0 = wave-fill: whole waves of tiles as SPLITK 1, the last ones split by K and
                        // combined in the kernel (the host plans the split)
#endif
#ifndef PING
#define PING 0          // PATH 90: 1 = pingpong: each consumer warpgroup owns whole tiles (BM x BN), taking
                        // turns, so one's epilogue overlaps the other's MMAs; 0 = WG split one tile
#endif
#ifndef VEC
#define VEC 2           // epilogue vector width in elements: 1 scalar, 2 pairs (from registers, when C and ldc allow);
                        // PATH 90 8 (16-bit): C staged in shared memory, asynchronous TMA stores (beta == 0, aligned C);
                        // PATH 80 4, 8 (8 only 16-bit): staged in shared memory, VEC-wide row stores aligned in memory (rows realigned where C or ldc is not)
#endif
#ifndef LOADW
#define LOADW (TYPE == 2 ? 4 : 2) // PATH 80: bytes per global load of A and B: 16, 8, 4, 2 (16-bit types) or 16, 4 (FP32); must not exceed the alignment of A, B, lda, ldb (the host packs otherwise)
#endif
#ifndef OPA
#define OPA 0           // 1 = A given as op T (stored k x m) is read as stored, no transposing pack: PATH 90 BF16/FP16
                        // loads it M-major, read through wgmma's transpose bit; PATH 90 TF32 (with OPB 1) loads it
                        // M-major and reads it into wgmma's register A fragments (the D = A B form, T9_TR 0); PATH 80
                        // (every TYPE) keeps a BK x BM stage tile, read by ldmatrix.trans (TF32: element by element);
                        // 0 = A stored m x k (K-major)
#endif
#ifndef OPB
#define OPB 0           // 1 = B given as op T (stored n x k) is read as stored, K-major, no transposing pack: PATH 90
                        // BF16/FP16 (wgmma's own layout, no transpose bit), PATH 90 TF32 (register A fragments of
                        // D^T = B^T A^T read from the K-major tile; with OPA 1 wgmma's B by descriptor), PATH 80
                        // every TYPE (a BN x BK stage tile, read by ldmatrix without .trans); 0 = B stored k x n
                        // (N-major)
#endif
#ifndef FRAGDB
#define FRAGDB 1        // PATH 80: 1 = double-buffer the warp's ldmatrix fragments across the mma K steps of a stage, 0 = load then multiply
#endif
#ifndef EPI
#define EPI 0           // fused epilogue bias * 4 + act (tpl.h TPL_EPI): bias 0 none, 1 per row of C, 2 per column; act 0 none,
                        // 1 ReLU, 2 GELU (tanh), 3 GELU (erf); D = act(alpha acc + beta C + bias), rounded once at the store
#endif
#ifndef FP8
#define FP8 0           // FP8 operands (PATH 90): 0 none (TYPE's A and B), 1 E4M3 x E4M3, 2 E4M3 x E5M2, 3 E5M2 x E4M3; TYPE
                        // is then C's type (0 BF16, 1 FP16, 2 FP32), EPI 0, OPA 0, OPB 1
#endif
#ifndef SCALE
#define SCALE 0         // FP8 scaling: 0 per-tensor (three device floats); 1 block scales: scale_a m x ceil(k/128) floats
                        // (row i, K-block kb at i * ceil(k/128) + kb), scale_b ceil(n/128) x ceil(k/128) (column block jb,
                        // K-block kb at jb * ceil(k/128) + kb), scale_d one float; BK 128, BN 64 or 128, one m64 wgmma per warpgroup;
                        // 2 block scales with two promotion buffers (K-block j + 1's wgmmas in flight while j is promoted);
                        // SCALE 1 also takes BN 256: two N-halves of 128 through one promotion buffer (T9_NH);
                        // 3 is the BN 256 tile with A's fragments in registers, in four N-quarters through two
                        // buffers of 32, one quarter always in flight (T9_AREG)
#endif
#ifndef BATCH
#define BATCH 0         // PATH 90: 1 = every product of a strided batch in one launch (3-D tensor maps {cols, rows,
                        // products}, the persistent units over cluster tiles x products, C offset per product);
                        // 0 = one product per launch (the host loops). SPLITK 1, no FP8
#endif
#ifndef TC_FAULT
#define TC_FAULT 0      // test only (PATH 80): 1 drops the last K tile, a wrong result verification must reject; 0 always in the product
#endif

#define TC_CDIV(a, b) (((a) + (b) - 1) / (b))
#define TC_TF32 (TYPE == 2 && !FP8)    // TF32 math on FP32 A and B (TYPE 2 with FP8 is an FP32 C)
#if FP8 < 0 || FP8 > 3 || (FP8 && (EPI || PATH != 90))
#error "tcgemm: FP8 is 0..3, PATH 90 only, without a fused epilogue"
#endif
#if SCALE == 3 && BN != 256
#error "tcgemm: SCALE 3 (SCALE 1 with A's fragments in registers) is BN 256"
#endif
#if SCALE == 3
// SCALE 3 is SCALE 1 with T9_AREG: the code below reads SCALE 1 and T9_AREG
#undef SCALE
#define SCALE 1
#define T9_AREG 1
#else
#define T9_AREG 0
#endif
#if SCALE < 0 || SCALE > 2 || (SCALE && (!FP8 || BK != 128 || (BN != 64 && BN != 128 && (SCALE != 1 || BN != 256)) || \
                                          BM / WG != 64 || PING))
#error "tcgemm: SCALE 1 or 2 (block scales) is FP8 with BK 128, BN 64 or 128 (SCALE 1 also 256) and one m64 wgmma per consumer warpgroup"
#endif

// ---- shared: the element type of C (and of A and B, FP8 0), the operands' tc_in, conversions ----
#if TYPE == 2
typedef float tc_elem;
#define TC_ESZ 4
#else
typedef unsigned short tc_elem;
#define TC_ESZ 2
#endif
#if FP8
typedef unsigned char tc_in;   // one FP8 element (E4M3 or E5M2: the packs copy bytes)
#define TC_ISZ 1
#else
typedef tc_elem tc_in;
#define TC_ISZ TC_ESZ
#endif

__device__ __forceinline__ float tc_to_f32(tc_elem v)
{
#if TYPE == 2
    return v;
#elif TYPE == 0
    return __uint_as_float((unsigned)v << 16);
#else
    float f;
    asm("{ .reg .b16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(v));
    return f;
#endif
}

// Rounds an FP32 value to the storage type (round to nearest even).
__device__ __forceinline__ tc_elem tc_from_f32(float f)
{
#if TYPE == 2
    return f;
#elif TYPE == 0
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#endif
}

// Two FP32 values to one packed 16-bit pair (lo at the lower address).
__device__ __forceinline__ unsigned tc_pack2(float lo, float hi)
{
    unsigned r;
#if TYPE == 0
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

// ---- the fused epilogue (EPI) ----
// With EPI 0 nothing below changes the code: TC_EPI_PARAM and TC_EPI_ARG are empty, TC_EPI(v, r, c) is v, so the
// plain kernels' signatures and code are those of a build without epilogues. With EPI > 0 every kernel that forms
// a final value of C takes one more argument, the bias (of C's type; unread, and may be 0, without a bias part).
#define TC_BIAS (EPI / 4)
#define TC_ACT (EPI % 4)
#if EPI < 0 || EPI > 11
#error "tcgemm: EPI is bias * 4 + act with bias 0..2 and act 0..3"
#endif
#if EPI
#define TC_EPI_PARAM , const tc_elem *__restrict__ bias
#define TC_EPI_ARG , bias
#define TC_EPI(v, r, c) tc_epi(v, bias, r, c, m, n)
#else
#define TC_EPI_PARAM
#define TC_EPI_ARG
#define TC_EPI(v, r, c) (v)
#endif

#if EPI
// act(v): GELU's tanh form is 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), its erf form 0.5 v (1 + erf(v /
// sqrt(2))), in FP32: erff, and for the tanh the hardware's tanh.approx.f32 (one MUFU op) with a 16-bit C, the
// accurate tanhf with TF32's FP32 C (the approximation's error would exceed FP32's tolerance there). The tanh form's
// argument is v (k0 + k1 v^2) with k1 = k0 0.044715 (a mul, an FMA, a mul) and the result 0.5 v + 0.5 v t (a mul, an
// FMA): 5 FP32 operations and one MUFU per element, where the textbook order takes 8. Error with a 16-bit C:
// tanh.approx.f32's relative error is below 2^-10.98, so where t >= 0 (v >= 0) the result's relative error is at most
// 2^-11 t / (1 + t) <= 2^-12, a sixteenth of BF16's rounding (2^-8) and half of FP16's (2^-11); where v < 0 the
// result is small (|GELU(v)| < 0.17) and its absolute error at most 0.5 |v| 2^-11 |t|, below the rounding of the
// large values that dominate the Frobenius norm of the tolerance rule (templates/tcgemm.c's TC_EPI_TOLERANCE
// argues it; measured 1.66e-03 against the BF16 rule's 9.4e-03 at 4096^3, bench/results/2026-11-29-H200-fp8-
// epilogue-tuned-c67a051.txt). The reordering changes FP32 roundings only (2^-24 relative). ReLU keeps a NaN a NaN
// (v < 0 is false), so a wrong value is never hidden; NaN passes through tanh.approx and tanhf alike.
__device__ __forceinline__ float tc_act(float v)
{
#if TC_ACT == 1
    v = v < 0.0f ? 0.0f : v;
#elif TC_ACT == 2
    float u = v * fmaf(0.035677408136300125f, v * v, 0.7978845608028654f), t;
#if TYPE == 2
    t = tanhf(u);
#else
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
#endif
    const float hv = 0.5f * v;
    v = fmaf(hv, t, hv);
#elif TC_ACT == 3
    v = 0.5f * v * (1.0f + erff(v * 0.7071067811865476f));
#endif
    return v;
}

// act(v + bias) of output (r, c) of an m x n C: bias[r] (per row) or bias[c] (per column), read only inside C (the
// staged epilogues form values past the edge that the TMA store then clips). PATH 90's staged store (VEC 8) reads
// each thread's bias values once per tile instead (t9_bias_load) and calls tc_act.
__device__ __forceinline__ float tc_epi(float v, const tc_elem *__restrict__ bias, int r, int c, int m, int n)
{
#if TC_BIAS == 1
    if (r < m)
        v += tc_to_f32(bias[r]);
#elif TC_BIAS == 2
    if (c < n)
        v += tc_to_f32(bias[c]);
#endif
    (void)r; (void)c; (void)m; (void)n;
    return tc_act(v);
}
#endif

// ---- FP8's per-tensor scales ----
// D = scale_d (alpha scale_a scale_b acc + beta C): every kernel forming a final value of C takes the three scale
// pointers (device floats; 0 = 1.0) and folds them into its alpha and beta once, in FP32. With FP8 0 nothing changes.
// SCALE 1: scale_a and scale_b are the block scales, applied in the main loop (the promotion); only scale_d folds.
#if FP8
#define TC_F8_PARAM , const float *__restrict__ scale_a, const float *__restrict__ scale_b, \
    const float *__restrict__ scale_d
__device__ __forceinline__ float tc_scale(const float *p)
{
    return p ? *p : 1.0f;
}
#if SCALE
#define TC_F8_SCALE()                                                                  \
    do {                                                                               \
        const float sd_ = tc_scale(scale_d);                                           \
        alpha = alpha * sd_;                                                           \
        beta = beta * sd_;                                                             \
        (void)scale_a; (void)scale_b;                                                  \
    } while (0)
#else
#define TC_F8_SCALE()                                                                  \
    do {                                                                               \
        const float sd_ = tc_scale(scale_d);                                           \
        alpha = alpha * tc_scale(scale_a) * tc_scale(scale_b) * sd_;                   \
        beta = beta * sd_;                                                             \
    } while (0)
#endif
#else
#define TC_F8_PARAM
#define TC_F8_SCALE() ((void)0)
#endif

// ---- shared kernels ----
// Copies the r x c row-major matrix src (leading dimension ld, any alignment) to dst with
// leading dimension ldd (a multiple of 16 / element size, chosen by the caller's rounding; dst
// 16-byte aligned), zero-filling columns c..ldd-1. Each thread writes 16-byte chunks; reads are
// 16-byte where the source chunk happens to be aligned, element-wise otherwise (coalesced either
// way: consecutive threads take consecutive chunks of a row). Grid-stride in x; grid z walks the
// products of a strided batch (src and dst advance by ss and sd elements per product).
extern "C" __global__ void __launch_bounds__(256)
tc_pack(int r, int c, const tc_in *__restrict__ src, long long ld, tc_in *__restrict__ dst, long long ldd,
        long long ss, long long sd)
{
    constexpr int CE = 16 / TC_ISZ;
    src += blockIdx.z * ss;
    dst += blockIdx.z * sd;
    const long long cpr = ldd / CE, tot = (long long)r * cpr;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < tot; i += (long long)gridDim.x * 256) {
        const long long row = i / cpr;
        const int cc = (int)(i - row * cpr) * CE;
        const tc_in *s = src + row * ld + cc;
        uint4 o;
        if (cc + CE <= c && ((unsigned long long)s & 15) == 0) {
            o = *(const uint4 *)s;
        } else {
            tc_in v[CE];
#pragma unroll
            for (int j = 0; j < CE; j++)
                v[j] = cc + j < c ? s[j] : (tc_in)0;
#if FP8
            unsigned w[4];
#pragma unroll
            for (int q = 0; q < 4; q++)
                w[q] = v[4 * q] | ((unsigned)v[4 * q + 1] << 8) | ((unsigned)v[4 * q + 2] << 16) |
                       ((unsigned)v[4 * q + 3] << 24);
            o = make_uint4(w[0], w[1], w[2], w[3]);
#elif TYPE == 2
            o = make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]),
                           __float_as_uint(v[3]));
#else
            o = make_uint4(v[0] | ((unsigned)v[1] << 16), v[2] | ((unsigned)v[3] << 16),
                           v[4] | ((unsigned)v[5] << 16), v[6] | ((unsigned)v[7] << 16));
#endif
        }
        *(uint4 *)(dst + row * ldd + cc) = o;
    }
}

// The transposing pack: copies the transpose of the r x c row-major matrix src (leading dimension
// ld, any alignment) to dst, c x r with leading dimension ldd >= r (dst 16-byte aligned), zero-
// filling columns r..ldd-1: how an operand given with op T reaches the kernels, which read A as
// m x k and B as k x n. 32 x 32 tiles through shared memory, so reads and writes are both
// coalesced; block 32 x 8, grid x over tiles of dst columns, grid y strided over tiles of rows,
// grid z over the products of a strided batch (src, dst advance by ss, sd elements per product).
extern "C" __global__ void __launch_bounds__(256)
tc_pack_t(int r, int c, const tc_in *__restrict__ src, long long ld, tc_in *__restrict__ dst,
          long long ldd, long long ss, long long sd)
{
    __shared__ tc_in tile[32][33];
    src += blockIdx.z * ss;
    dst += blockIdx.z * sd;
    const long long j0 = blockIdx.x * 32LL;                 // dst column = src row
    for (long long i0 = blockIdx.y * 32LL; i0 < c; i0 += gridDim.y * 32LL) {
        for (int y = threadIdx.y; y < 32; y += 8) {
            const long long sr = j0 + y, sc = i0 + threadIdx.x;
            tile[y][threadIdx.x] = sr < r && sc < c ? src[sr * ld + sc] : (tc_in)0;
        }
        __syncthreads();
        for (int y = threadIdx.y; y < 32; y += 8) {
            const long long dr = i0 + y, dc = j0 + threadIdx.x;
            if (dr < c && dc < ldd)
                dst[dr * ldd + dc] = tile[threadIdx.x][y];
        }
        __syncthreads();
    }
}

// Split-K finish: C = alpha * sum_z ws[z] + beta * C (then the fused epilogue), slices summed in order z = 0..
// (deterministic).
// Grid-stride over M*N elements; any launch shape works.
extern "C" __global__ void __launch_bounds__(256)
tc_splitk_reduce(int M, int N, const float *__restrict__ ws, float alpha, float beta,
                 tc_elem *__restrict__ C, long long ldc TC_EPI_PARAM TC_F8_PARAM)
{
    TC_F8_SCALE();
#if EPI
    const int m = M, n = N;     // TC_EPI's bounds
#endif
    const long long MN = (long long)M * N;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < MN; i += (long long)gridDim.x * 256) {
        float s = 0.0f;
#pragma unroll
        for (int z = 0; z < SPLITK; z++)
            s += ws[z * MN + i];
        const long long r = i / N, c = i - r * N;
        tc_elem *p = C + r * ldc + c;
        float v = alpha * s;
        if (beta != 0.0f)
            v += beta * tc_to_f32(*p);
        *p = tc_from_f32(TC_EPI(v, (int)r, (int)c));
    }
}

#if PATH == 90
#if TC_TF32 && OPA
#define T9_ES 4         // TF32 with A M-major (OPA 1, OPB 1): D = A B, A from registers (the M-major tile), B K-major
#define T9_KSTEP 8
#define T9_WN BN        // wgmma N: the B tile's rows
#define T9_WP (PING ? BM : BM / WG) // C rows per consumer warpgroup
#elif TC_TF32
#define T9_ES 4         // bytes per input element
#define T9_KSTEP 8      // K of one wgmma
#define T9_WN BM        // wgmma N: the A tile's rows (D^T = B^T A^T)
#define T9_WP (PING ? BN : BN / WG) // C columns per consumer warpgroup
#elif FP8
#define T9_ES 1
#define T9_KSTEP 32
#define T9_WN BN
#define T9_WP (PING ? BM : BM / WG)
#else
#define T9_ES 2
#define T9_KSTEP 16
#define T9_WN BN        // wgmma N: the B tile's columns
#define T9_WP (PING ? BM : BM / WG) // C rows per consumer warpgroup
#endif
#if FP8 == 3            // t9_mma's operand types (A, B)
#define T9_PTXA "e5m2"
#define T9_PTXB "e4m3"
#elif FP8 == 2
#define T9_PTXA "e4m3"
#define T9_PTXB "e5m2"
#elif FP8 == 1
#define T9_PTXA "e4m3"
#define T9_PTXB "e4m3"
#elif TYPE == 0
#define T9_PTXT "bf16"
#elif TYPE == 1
#define T9_PTXT "f16"
#else
#define T9_PTXT "tf32"   // t9_mma (TF32 takes t9_mma_tf32: register A fragments)
#endif
#if !FP8
#define T9_PTXA T9_PTXT
#define T9_PTXB T9_PTXT
#endif
#if TC_TF32
#define T9_KSH "k8"     // t9_mma's K and transpose flags (TF32 takes K-major operands only)
#define T9_TRANS ""
#elif FP8
#define T9_KSH "k32"    // FP8: K-major operands only, no transpose flags
#define T9_TRANS ""
#else
#define T9_KSH "k16"        // transpose flags: A M-major (OPA 1) or K-major; B K-major (OPB 1) or N-major
#if OPA && OPB
#define T9_TRANS ", 1, 0"
#elif OPA
#define T9_TRANS ", 1, 1"
#elif OPB
#define T9_TRANS ", 0, 0"
#else
#define T9_TRANS ", 0, 1"
#endif
#endif
#if OPA && !OPB && TC_TF32
#error "tcgemm PATH 90 TF32: OPA 1 needs OPB 1 (wgmma reads its shared-memory operand K-major: an op-T A with an op-N B is packed)"
#endif
#if OPA && TC_TF32 && (VEC != 2 || PING)
#error "tcgemm PATH 90 TF32: OPA 1 (the D = A B form) stores C directly in pairs (VEC 2), no PING"
#endif
#define T9_TR (TC_TF32 && !OPA)         // the accumulators hold D^T (TF32 of K-major A): fragment rows are C columns
#if FP8 && (OPA || !OPB || (VEC == 8 && TYPE == 2))
#error "tcgemm PATH 90 FP8: A and B K-major (OPA 0, OPB 1); an FP32 C stores directly (VEC 1, 2)"
#endif
#define T9_BOXE (128 / T9_ES)           // elements in one 128-byte swizzled row
#define T9_MI (T9_WP / 64)              // wgmma (m64) instructions per K step per warpgroup
#define T9_A_BYTES (BM * BK * T9_ES)
#define T9_B_BYTES (BK * BN * T9_ES)
#define T9_RF TC_TF32                   // TF32 A fragments loaded into registers
// TF32 variants measured and taken out (bench/notes_tcgemm.md sections 11-12, the code is in git history): B
// transposed to K-major by the producer warps (T9_TB, 0.67-0.77x cuBLAS), B boxes of 8 columns with the 32-byte
// swizzle (T9_BSW, 0.66-0.72x), a lane's fragment rows as adjacent C columns (T9_PAIR), several k8 steps per
// wgmma group (T9_TKG) and sleeping barrier waits (T9_SUSPEND): none faster than this kernel.
#define T9_TMA_BYTES (T9_A_BYTES + T9_B_BYTES)
#define T9_STAGE_BYTES T9_TMA_BYTES
#define T9_CL (CM * CN)
#define T9_OWN (PING ? 1 : WG)         // consumer warpgroups reading each stage
#define T9_THREADS ((WG + 1) * 128)
#ifndef T9_TFK
#define T9_TFK (T9_RF ? 3 : 0) // TF32 (internal): n > 0 = one wgmma group per k8, n in flight (n + 1 4-register
                        // fragment buffers; 1 and 3 measured alike), 0 = fragments of a whole stage, one group (slower:
                        // ptxas serializes its wgmmas, warning C7513); bench/notes_tcgemm.md section 9
#endif
#define T9_NB (T9_TFK + 1)              // T9_TFK: fragment buffers
#if TC_TF32 && T9_TFK && (BK / 8) % T9_NB != 0
#error "tcgemm PATH 90: T9_TFK + 1 must divide BK / 8"
#endif
#ifndef T9_TES
#define T9_TES (TC_TF32 && VEC == 8) // TF32: 1 = with beta == 0 and C TMA-able (vec_ok bit 1) the epilogue stages
                        // 32-row chunks of C in shared memory (two buffers per consumer warpgroup, 128-byte swizzle,
                        // conflict-free stores) and writes them with TMA stores, as cuBLAS's TF32 kernel does; 0 = direct
                        // stores. TF32 VEC 8 selects it (the family's lattice does not offer it yet: notes section 14)
#endif
#if T9_TES && (!TC_TF32 || PING || SPLITK > 1 || T9_WP != 64 || BM % 32 != 0)
#error "tcgemm PATH 90: T9_TES is for TF32 without PING or SPLITK, 64 C columns per consumer warpgroup"
#endif
#if VEC == 8 && TYPE != 2
#define T9_C_BYTES (BM * BN * 2)        // C staging for the TMA-store epilogue
#elif T9_TES
#define T9_C_BYTES (WG * 2 * 32 * 64 * 4) // T9_TES: per consumer warpgroup two 32-row x 64-column FP32 chunks
#else
#define T9_C_BYTES 0
#endif
#define T9_SMEM_BYTES (STAGES * T9_STAGE_BYTES + T9_C_BYTES + 1024 + 2 * STAGES * 8)

#if BK % T9_BOXE != 0 || T9_WP % 64 != 0 || (!OPB && BN % T9_BOXE != 0) || BM % (8 * CN) != 0 || BK % (8 * CM) != 0
#error "tcgemm PATH 90: illegal tile (BK, BN multiples of 128 bytes; BM/WG or BN/WG (TF32) multiple of 64)"
#endif
#if T9_WN != 64 && T9_WN != 128 && T9_WN != 192 && T9_WN != 256
#error "tcgemm PATH 90: wgmma N (BN, TF32: BM) must be 64, 128, 192 or 256"
#endif
#if VEC == 8 && TYPE != 2 && (PING || SPLITK > 1 || BN % 64 != 0)
#error "tcgemm PATH 90: VEC 8 (TMA-store epilogue) needs PING 0, SPLITK 1"
#endif
#if T9_CL > 8 || STAGES < 2
#error "tcgemm PATH 90: cluster at most 8 CTAs, at least 2 stages"
#endif
#if BATCH < 0 || BATCH > 1 || (BATCH && (SPLITK != 1 || PING || FP8))
#error "tcgemm PATH 90: BATCH 1 (products in one launch) has SPLITK 1, no PING, no FP8"
#endif
#if BATCH
#define T9_BATCH_PARAM , int batch, long long sc   // products in this launch, C's product stride (elements)
#else
#define T9_BATCH_PARAM
#endif
#define T9_WF (SPLITK == 0)             // the wave-fill split (the header comment)
#define T9_SLICES (T9_WF ? 1 : SPLITK)  // K slices of every unit
#if T9_WF && (BATCH || PING || FP8)
#error "tcgemm PATH 90: SPLITK 0 (wave-fill split) has BATCH 0, no PING, no FP8"
#endif
#if T9_WF
// counters: one int per split unit, CTA of the cluster and consumer warpgroup, zero at the launch (the
// kernel leaves them zero); units [0, dp_units) whole, the rest in wf_split pieces each
#define T9_WF_PARAM , int *__restrict__ counters, int dp_units, int wf_split
#else
#define T9_WF_PARAM
#endif

// TMA tensor map (CUtensorMap: 128 bytes, 64-byte aligned), passed by value as __grid_constant__
struct __align__(64) t9_tmap { unsigned long long v[16]; };

// ---- wgmma wrappers (generated: one per wgmma N; T9_ACC = FP32 accumulators per thread) ----
#if T9_WN == 64
#define T9_ACC 32
// d += A * B on a 64 x 64 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64" T9_KSH ".f32." T9_PTXA "." T9_PTXB "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1" T9_TRANS ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif
#if T9_WN == 128
#define T9_ACC 64
// d += A * B on a 64 x 128 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128" T9_KSH ".f32." T9_PTXA "." T9_PTXB "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1" T9_TRANS ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif
#if T9_WN == 192
#define T9_ACC 96
// d += A * B on a 64 x 192 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192" T9_KSH ".f32." T9_PTXA "." T9_PTXB "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, p, 1, 1" T9_TRANS ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, {%96, %97, %98, %99}, %100, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif
#if T9_WN == 256
#define T9_ACC 128
// d += A * B on a 64 x 256 tile, k16; A and B from shared memory by descriptor, B N-major;
// scd = 0 overwrites d instead (first k step of a tile)
__device__ __forceinline__ void t9_mma(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256" T9_KSH ".f32." T9_PTXA "." T9_PTXB "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1" T9_TRANS ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db), "r"(scd));
}
// tf32, k8: A (64 x 8) from registers in the wgmma fragment layout, B K-major by descriptor
__device__ __forceinline__ void t9_mma_tf32(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}
#endif

// ---- SCALE 1 at BN 256 (T9_NH): block scales through two N-halves ----
// The accumulator d is the m64n256 wgmma's (T9_ACC 128); each K-block's wgmmas run as two m64n128k32 chains into one
// promotion buffer of 64 FP32 registers (t9_mma_h), whose register j is, in half h, the element of d's register
// 64 h + j (the fragment layout orders registers by 8-column groups: registers 0..63 hold columns 0..127).
// SCALE 3 (T9_AREG) runs the same tile in four N-quarters of 64 (t9_mma_q, A from registers) through two buffers of 32
// registers, the halves of the same 64: quarter q's register j is d's register 32 q + j.
#define T9_NH (SCALE == 1 && BN == 256)
#ifndef T9_TURN
// SCALE 3 with two consumer warpgroups (internal; 0 turns it off): the warpgroups take turns by K-block, half a block
// apart. Each step's wait_group 0 leaves its warpgroup without wgmmas for a while (the last quarter's completion, the
// next block's ldmatrix and pending promotion, the first issue); two warpgroups that start a tile together stay in step
// (they share the tensor cores evenly), so their waits fall together and the tensor cores idle. With turns, warpgroup
// c issues a block's first quarter only after the other one has issued its current block's third (named barriers
// T9_TURN_BAR + c, 256 threads: one warpgroup's bar.sync, the other's bar.arrive), so one warpgroup's wait always falls
// while the other has quarters queued.
#define T9_TURN (T9_AREG && WG == 2)
#endif
#define T9_TURN_BAR 4       // named barriers 4 and 5 (PING's are 1 and 2, the epilogue's 8 + c)
#if T9_NH
// d += A * B on a 64 x 128 tile, k32 (FP8, both operands K-major by descriptor); scd = 0 overwrites d instead
__device__ __forceinline__ void t9_mma_h(float *d, unsigned long long da, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32." T9_PTXA "." T9_PTXB "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "r"(scd));
}

#if T9_AREG
// SCALE 3: d = A * B (scd = 0) or d += A * B on a 64 x 64 tile, k32, A (64 x 32 FP8) from registers in wgmma's
// fragment layout (t9_fa8), B K-major by descriptor: one N-quarter of the 64 x 256 tile, 32 FP32 accumulators
__device__ __forceinline__ void t9_mma_q(float *d, const unsigned *a, unsigned long long db, int scd)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32." T9_PTXA "." T9_PTXB "\n"
        "{"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scd));
}

// SCALE 3's promotion of one N-quarter: d[4 j], d[4 j + 1] (row sr0) += f0 x[.], d[4 j + 2], d[4 j + 3] (row sr1) += f1 x[.]
__device__ __forceinline__ void t9_promote_q(float *d, const float *x, float f0, float f1)
{
#pragma unroll
    for (int j = 0; j < 8; j++) {
        d[4 * j] += f0 * x[4 * j];
        d[4 * j + 1] += f0 * x[4 * j + 1];
        d[4 * j + 2] += f1 * x[4 * j + 2];
        d[4 * j + 3] += f1 * x[4 * j + 3];
    }
}

// Orders the compiler's uses of one quarter's 32 registers after the asm before it (a wait_group)
__device__ __forceinline__ void t9_fence_q(float *d)
{
#pragma unroll
    for (int i = 0; i < 32; i++)
        asm volatile("" : "+f"(d[i]) :: "memory");
}

// The FP8 A fragments of k32 step kk, one ldmatrix.x4: wgmma's m64nNk32 8-bit A layout gives warp w, lane l, register q
// row 16 w + l / 4 + 8 (q % 2) and the 4 bytes at k = 32 kk + 16 (q / 2) + 4 (l % 4) (byte j at k + j), which is
// ldmatrix's b16 layout of four 8 x 16-byte matrices, matrix q = register q: lane l gives the address of row l % 8 of
// matrix l / 8. In the stage's K-major A tile (rows of 128 bytes, 128-byte swizzle: 16-byte chunk x of row p at
// x ^ (p % 8), p % 8 = l % 8 here) a matrix's 8 rows fall in 8 different chunk columns: no bank conflict.
__device__ __forceinline__ void t9_fa8(unsigned (&a)[4], unsigned sa, int row0, int warp, int lane, int kk)
{
    const int mq = lane / 8, p = row0 + warp * 16 + lane % 8 + 8 * (mq % 2);
    // chunk (2 kk + mq / 2) ^ (l % 8) = ((mq / 2) ^ (l % 8)) ^ 2 kk: one lane term, kk's part a constant XOR
    const unsigned ad = sa + p * 128 + ((((mq / 2) ^ (lane % 8)) * 16) ^ (32 * kk));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(ad) : "memory");
}
#endif

__device__ __forceinline__ void t9_fence_h(float *d)
{
#pragma unroll
    for (int i = 0; i < 64; i++)
        asm volatile("" : "+f"(d[i]) :: "memory");
}
#endif

// ---- PTX helpers (sm_90) ----
__device__ __forceinline__ unsigned t9_smem_addr(const void *p)
{
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

__device__ __forceinline__ void t9_bar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count));
}

__device__ __forceinline__ void t9_bar_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}

// Waits until the phase of the given parity of the barrier has completed (spins on try_wait; a
// suspend-time hint, so waiting warps sleep, measured no faster: bench/notes_tcgemm.md section 12).
__device__ __forceinline__ void t9_bar_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n.reg .pred p;\nT9_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra T9_WAIT;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}

// Arrives once on the barrier at the same offset in CTA `rank` of the cluster (itself included).
__device__ __forceinline__ void t9_bar_arrive_cta(unsigned bar, unsigned rank)
{
#if T9_CL == 1
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
#else
    asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [r];\n}\n"
                 :: "r"(bar), "r"(rank) : "memory");
#endif
}

// TMA: a 2D box at {c0 (inner), c1} of the tensor map into shared memory at dst, completing on
// bar; with mask != 0 the same box lands at dst in every CTA of the cluster named by mask. BATCH 1:
// a 3D box at {c0, c1, c2} (c2 the product; BATCH 0 ignores it).
__device__ __forceinline__ void t9_tma(const void *map, unsigned dst, unsigned bar, int c0, int c1,
                                       int c2, unsigned short mask)
{
#if BATCH && T9_CL == 1
    (void)mask;
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
#elif BATCH
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%3, %4, %5}], [%2], %6;"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "h"(mask) : "memory");
#elif T9_CL == 1
    (void)mask; (void)c2;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1) : "memory");
#else
    (void)c2;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%3, %4}], [%2], %5;"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1), "h"(mask) : "memory");
#endif
}

// TMA store of a 2D box of shared memory at src to {c0 (inner), c1} of the tensor map (bulk group);
// BATCH 1: a 3D box at {c0, c1, c2}, c2 the product.
__device__ __forceinline__ void t9_tma_store(const void *map, unsigned src, int c0, int c1, int c2)
{
#if BATCH
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
                 :: "l"(map), "r"(src), "r"(c0), "r"(c1), "r"(c2) : "memory");
#else
    (void)c2;
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 :: "l"(map), "r"(src), "r"(c0), "r"(c1) : "memory");
#endif
}

// wgmma shared-memory descriptor, 128-byte swizzle: lbo/sbo in bytes (address of a 1024-byte
// aligned atom plus an offset inside its first row).
__device__ __forceinline__ unsigned long long t9_desc(unsigned addr, unsigned lbo, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16)
         | ((unsigned long long)(sbo >> 4) << 32) | (1ull << 62);
}

// TF32: shared address of element (k row kc, column p) of a stage's B tile (N-major), as the producer's
// boxes of 32 columns lay it out (128-byte swizzle).
__device__ __forceinline__ unsigned t9_fa(unsigned sb, int p, int kc)
{
    return sb + (p / 32) * (BK * 128) + kc * 128 + ((((p % 32) / 4) ^ (kc % 8)) * 16) + (p % 4) * 4;
}

#if TC_TF32 && (OPA || OPB)
// TF32: shared address of element (row p, k column kc) of a K-major tile of `rows` rows (B of OPB 1: boxes of 32
// k-columns x rows, 128-byte swizzle). A register fragment's lanes then read 8 rows x 4 adjacent words each, the
// rows' 16-byte chunks XORed apart: 32 different banks.
__device__ __forceinline__ unsigned t9_fk(unsigned s, int rows, int p, int kc)
{
    return s + (kc / 32) * (rows * 128) + p * 128 + ((((kc % 32) / 4) ^ (p % 8)) * 16) + (kc % 4) * 4;
}
#endif
// TF32: the register A fragments' source (element p, kc of wgmma's A: row p of the consumer's M side, k column kc)
// and wgmma's B descriptor of k8 step kk. OPA 0 (D^T = B^T A^T): A is the B tile (N-major, or K-major with OPB 1),
// B the K-major A tile. OPA 1 (D = A B): A is the M-major A tile (laid out like OPB 0's B tile), B the K-major B tile.
#if TC_TF32 && OPA
#define T9_FRAG(sa, sb, p, kc) t9_fa(sa, p, kc)
#define T9_TFB(sa, sb, kk) t9_desc((sb) + ((kk) / 4) * (BN * 128) + ((kk) % 4) * 32, 16, 1024)
#elif TC_TF32 && OPB
#define T9_FRAG(sa, sb, p, kc) t9_fk(sb, BN, p, kc)
#define T9_TFB(sa, sb, kk) t9_desc((sa) + ((kk) / 4) * (BM * 128) + ((kk) % 4) * 32, 16, 1024)
#else
#define T9_FRAG(sa, sb, p, kc) t9_fa(sb, p, kc)
#define T9_TFB(sa, sb, kk) t9_desc((sa) + ((kk) / 4) * (BM * 128) + ((kk) % 4) * 32, 16, 1024)
#endif

__device__ __forceinline__ void t9_fence_acc(float *d)
{
#pragma unroll
    for (int i = 0; i < T9_ACC; i++)
        asm volatile("" : "+f"(d[i]) :: "memory");
}

__device__ __forceinline__ void t9_cluster_sync()
{
#if T9_CL > 1
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif
}

// Cluster tile t -> its (row, column) in cluster tiles, by RASTER and GROUP (see the tunables).
__device__ __forceinline__ void t9_tile(int t, int sm, int sn, int *pm, int *pn)
{
#if RASTER == 0
    int rows = sm, cols = sn;
#else
    int rows = sn, cols = sm;
#endif
    int per = GROUP * cols, g = t / per, first = g * GROUP;
    int in = rows - first < GROUP ? rows - first : GROUP;
    int r = first + (t - g * per) % in, c = (t - g * per) / in;
#if RASTER == 0
    *pm = r; *pn = c;
#else
    *pm = c; *pn = r;
#endif
}

#if EPI && TC_BIAS && TYPE != 2
// The staged store's (VEC 8, 16-bit C) bias values of this thread, read once per tile ahead of the store loop, where
// tc_epi would read one per element, each behind the previous element's shared-memory store (an asm with a memory
// clobber, which no load may pass) and so with the load's whole latency exposed. Per column (TC_BIAS 2): columns
// n0 + 8 j + 2 (lane % 4) + e, e = 0, 1, the same in every row the thread stores, in bits 16 e of bv[j] (one 4-byte
// load a pair where the tile lies inside C and bias is 4-byte aligned); per row (TC_BIAS 1): rows r0 + 64 i + 8 h in
// bits 16 h of bv[i]. 0 (+0.0) outside C, whose values the TMA store clips.
#define T9_NBIAS (TC_BIAS == 2 ? T9_ACC / 4 : T9_MI)
__device__ __forceinline__ void t9_bias_load(unsigned (&bv)[T9_NBIAS], const tc_elem *__restrict__ bias, int r0,
                                             int n0, int lane, int m, int n)
{
#if TC_BIAS == 2
    const int c0 = n0 + (lane % 4) * 2;
    (void)r0; (void)m;
    if (n0 + BN <= n && ((unsigned long long)bias & 3) == 0) {
#pragma unroll
        for (int j = 0; j < T9_NBIAS; j++)
            bv[j] = __ldg((const unsigned *)(bias + c0 + 8 * j));
    } else {
#pragma unroll
        for (int j = 0; j < T9_NBIAS; j++) {
            const int gc = c0 + 8 * j;
            bv[j] = (gc < n ? (unsigned)bias[gc] : 0u) | (gc + 1 < n ? (unsigned)bias[gc + 1] << 16 : 0u);
        }
    }
#else
    (void)n0; (void)lane; (void)n;
#pragma unroll
    for (int i = 0; i < T9_NBIAS; i++) {
        const int gr = r0 + 64 * i;
        bv[i] = (gr < m ? (unsigned)bias[gr] : 0u) | (gr + 8 < m ? (unsigned)bias[gr + 8] << 16 : 0u);
    }
#endif
}

// Half e (0, 1) of a t9_bias_load pair as FP32.
__device__ __forceinline__ float t9_bias_half(unsigned pair, int e)
{
    return tc_to_f32((tc_elem)(pair >> (16 * e)));
}
#endif

// Epilogue store of one value (scalar) or an adjacent pair (VEC 2) at (r, c), guarded.
__device__ __forceinline__ void t9_st1(tc_elem *C, long long ldc, int m, int n, int r, int c,
                                       float v, float alpha, float beta TC_EPI_PARAM)
{
    if (r < m && c < n) {
        tc_elem *p = C + (long long)r * ldc + c;
        float o = alpha * v;
        if (beta != 0.0f)
            o += beta * tc_to_f32(*p);
        *p = tc_from_f32(TC_EPI(o, r, c));
    }
}

#if TYPE != 2
__device__ __forceinline__ void t9_st2(tc_elem *C, long long ldc, int m, int n, int r, int c,
                                       float v0, float v1, float alpha, float beta, int vec_ok TC_EPI_PARAM)
{
    if (r >= m)
        return;
#if VEC == 2
    if (vec_ok && c + 1 < n) {
        unsigned *p = (unsigned *)(C + (long long)r * ldc + c);
        float o0 = alpha * v0, o1 = alpha * v1;
        if (beta != 0.0f) {
            unsigned old = *p;
            o0 += beta * tc_to_f32((tc_elem)(old & 0xFFFF));
            o1 += beta * tc_to_f32((tc_elem)(old >> 16));
        }
        *p = tc_pack2(TC_EPI(o0, r, c), TC_EPI(o1, r, c + 1));
        return;
    }
#endif
    (void)vec_ok;
    t9_st1(C, ldc, m, n, r, c, v0, alpha, beta TC_EPI_ARG);
    t9_st1(C, ldc, m, n, r, c + 1, v1, alpha, beta TC_EPI_ARG);
}
#elif FP8 || OPA
// FP32 C of an FP8 product or of TF32's D = A B form (OPA 1): adjacent pairs as one 8-byte store (VEC 2, C and ldc
// allowing), else scalar
__device__ __forceinline__ void t9_st2(tc_elem *C, long long ldc, int m, int n, int r, int c,
                                       float v0, float v1, float alpha, float beta, int vec_ok TC_EPI_PARAM)
{
    if (r >= m)
        return;
#if VEC == 2
    if (vec_ok && c + 1 < n) {
        float2 *p = (float2 *)(C + (long long)r * ldc + c);
        float o0 = alpha * v0, o1 = alpha * v1;
        if (beta != 0.0f) {
            float2 old = *p;
            o0 += beta * old.x;
            o1 += beta * old.y;
        }
        *p = make_float2(TC_EPI(o0, r, c), TC_EPI(o1, r, c + 1));
        return;
    }
#endif
    (void)vec_ok;
    t9_st1(C, ldc, m, n, r, c, v0, alpha, beta TC_EPI_ARG);
    t9_st1(C, ldc, m, n, r, c + 1, v1, alpha, beta TC_EPI_ARG);
}
#endif


#if T9_WF
// Item u of the wave-fill walk: its unit t and K steps [k0, k1) (the balanced split of kt K steps in S pieces)
#define T9_WF_ITEM(u, t, k0, k1)                                                      \
    int t = (u), k0 = 0, k1 = kt_all;                                                 \
    if ((u) >= dp_units) {                                                            \
        const int p_ = (u) - dp_units, s_ = p_ / wf_split, z_ = p_ - s_ * wf_split;   \
        t = dp_units + s_;                                                            \
        k0 = (int)((long long)z_ * kt_all / wf_split);                                \
        k1 = (int)((long long)(z_ + 1) * kt_all / wf_split);                          \
    }

// 1 in every thread of the 128 at named barrier id if v is non-zero in any of them (a barrier with an OR).
__device__ __forceinline__ int t9_bar_or(int id, int v)
{
    int o;
    asm volatile("{\n.reg .pred p, q;\nsetp.ne.s32 p, %1, 0;\nbar.red.or.pred q, %2, 128, p;\n"
                 "selp.s32 %0, 1, 0, q;\n}" : "=r"(o) : "r"(v), "r"(id) : "memory");
    return o;
}

// A piece's accumulators to or from its workspace slot w (BM x BN floats of one CTA): float4 j of accumulator
// row i of consumer thread x (c * 128 + tid) at (i * T9_ACC / 4 + j) * (WG * 128) + x, coalesced; every
// piece of a tile is computed by the same threads of its CTAs, so a thread reads back its own elements.
__device__ __forceinline__ void t9_wf_store(const float (&d)[T9_MI][T9_ACC], float *w, int x)
{
    float4 *p = (float4 *)w + x;
#pragma unroll
    for (int i = 0; i < T9_MI; i++)
#pragma unroll
        for (int j = 0; j < T9_ACC / 4; j++)
            __stcg(p + (i * T9_ACC / 4 + j) * (WG * 128),
                   make_float4(d[i][4 * j], d[i][4 * j + 1], d[i][4 * j + 2], d[i][4 * j + 3]));
}

template <bool ADD>
__device__ __forceinline__ void t9_wf_load(float (&d)[T9_MI][T9_ACC], const float *w, int x)
{
    const float4 *p = (const float4 *)w + x;
#pragma unroll
    for (int i = 0; i < T9_MI; i++)
#pragma unroll
        for (int j = 0; j < T9_ACC / 4; j++) {
            const float4 v = __ldcg(p + (i * T9_ACC / 4 + j) * (WG * 128));
            d[i][4 * j] = ADD ? d[i][4 * j] + v.x : v.x;
            d[i][4 * j + 1] = ADD ? d[i][4 * j + 1] + v.y : v.y;
            d[i][4 * j + 2] = ADD ? d[i][4 * j + 2] + v.z : v.z;
            d[i][4 * j + 3] = ADD ? d[i][4 * j + 3] + v.w : v.w;
        }
}
#endif

// BATCH 1: unit tile t of the launch -> its product `prod` and its cluster tile t inside the product
// (a cluster's CTAs share a unit, so they work in one product); BATCH 0: product 0.
#if BATCH
#define T9_PRODUCT(t) const int prod = (t) / (sm * sn); (t) -= prod * (sm * sn)
#else
#define T9_PRODUCT(t) const int prod = 0; (void)prod
#endif

// ---- direct loads of a 16-bit operand that TMA cannot read (vec_ok bit 3: A, bit 4: B) ----
// TMA needs 16-byte aligned bases and row strides; the host packs (copies whole) an operand without them, which on
// memory-bound shapes doubles or triples the traffic. A BF16/FP16 operand whose base, row stride and (BATCH 1)
// product stride are 4-byte aligned is instead copied by the producer warpgroup's 128 threads with cp.async of 4
// bytes (an element pair), or 8 bytes where base, row stride and product stride are 8-byte aligned, each straight to
// its final place in the TMA's box layout and 128-byte swizzle (boxes of 64 stored columns, R * 128 bytes apart, for
// a tile of R stored rows; in each 1024-byte atom of 8 rows, 16-byte chunk c of row r at chunk c ^ (r & 7)), so the
// consumers read the stage unchanged; src-size 0 (or the pair's one stored element) zero-fills past the stored rows
// and columns as the TMA's out-of-range fill does. Every producer thread then arrives on the stage's full barrier with
// cp.async.mbarrier.arrive.noinc, which fires once the thread's copies have landed: the producer never waits for its
// own copies and every stage stays in flight. The full barriers then count 1 + 128 arrivals (thread 0's expect_tx
// for the operand TMA still brings, or a plain arrive, and the 128 threads'). cp.async writes shared memory through
// the generic proxy and wgmma reads it through the async proxy: each consumer thread executes fence.proxy.async after
// its full-barrier wait (as compilers do ahead of a wgmma whose operands were written by generic stores).
// In place of the tensor map of a direct operand the host passes v[0] its base address, v[1] its row stride in bytes,
// v[2] its stored rows, v[3] its stored columns (of one product), v[4] the product stride in bytes (BATCH 1); vec_ok bit
// 5 says the direct operands take copies of 8 bytes (every one of them aligned for it), else 4. Built for BF16/FP16 without a cluster (CM*CN 1); FP8, TF32 (its TFLOAT32 maps round on
// the way: a copy would not) and cluster configurations keep the pack (the host never sets the bits for them).
#define T9_DIR_A 8
#define T9_DIR_B 16
#define T9_DIR_8 32     // the direct operands in copies of 8 bytes (else 4)
#if !FP8 && !TC_TF32 && T9_CL == 1
#define T9X_ON 1
#else
#define T9X_ON 0
#endif
#if T9_WF
#define T9X_WF_PARAM , int dp_units, int wf_split   // SPLITK 0: the kernel's wave-fill walk (T9_WF_ITEM)
#define T9X_WF_ARGS , dp_units, wf_split
#else
#define T9X_WF_PARAM
#define T9X_WF_ARGS
#endif

#if T9X_ON
// Thread tid's copies of one tile of R stored rows x W stored columns of the operand of map tm (product prod) whose
// first element is stored element (row0, col0), into shared memory at dst, CP (4 or 8) bytes each. A box row (128
// bytes) is 128 / CP copies by consecutive lanes (coalesced); the 128 threads take 128 * CP / 128 box rows at once:
// rows q0 = tid / (128 / CP) (and q0 + 4 for 4-byte copies) of each 8-row atom, so a thread's swizzled slots repeat
// 1024 bytes apart. A copy past the stored rows or columns reads nothing (src-size 0: its address is never used).
template <int R, int W, int CP>
__device__ __forceinline__ void t9x_tile(unsigned dst, const t9_tmap &tm, int prod, int row0, int col0, int tid)
{
    constexpr int LPR = 128 / CP;               // copies (threads) per box row: 32 or 16
    const long long ld4 = 4 * (long long)tm.v[1];
    const int lane = tid % LPR, q0 = tid / LPR, rlq = (int)tm.v[2] - row0 - q0;  // stored rows from row q0
    const unsigned byte = lane * CP;            // this thread's bytes of a 128-byte row
    const unsigned o0 = q0 * 128 + ((((byte >> 4) ^ q0) & 7) << 4) + (byte & 15);
#pragma unroll 1
    for (int b = 0; b < W / 64; b++) {
        const int c = col0 + b * 64 + lane * (CP / 2), left = (int)tm.v[3] - c;   // stored columns from c
        const int cb = left <= 0 ? 0 : left >= CP / 2 ? CP : 2 * left;          // bytes of the copy to read
        unsigned long long src = tm.v[0] + (unsigned long long)prod * tm.v[4] +
                                 (unsigned long long)((row0 + q0) * (ld4 / 4) + 2ll * c);
        unsigned e = dst + b * (R * 128) + o0;
#pragma unroll 1
        for (int r = 0; r < R; r += 8, e += 1024, src += 2 * ld4) {
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;"
                         :: "r"(e), "l"(src), "n"(CP), "r"(r < rlq ? cb : 0) : "memory");
            if (CP == 4)    // row q0 + 4 of the atom: chunk bit 2 flipped by the swizzle
                asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;"
                             :: "r"((e ^ 64) + 512), "l"(src + ld4), "n"(CP), "r"(r + 4 < rlq ? cb : 0) : "memory");
        }
    }
}

// The producer warpgroup's loop when an operand is direct (dirs: T9_DIR_A, T9_DIR_B bits): the walk of the TMA loop
// (units, K tiles, stages), every thread waiting for the stage's empty barrier; thread 0 brings the operand that is
// not direct with TMA, expecting its bytes; all 128 threads copy the direct tiles, CP bytes a copy, and arrive when
// their copies land.
template <int CP>
__device__ __forceinline__ void t9x_produce(const t9_tmap &tmA, const t9_tmap &tmB, unsigned base, unsigned bars,
                                            int dirs, int tid, int cluster, int clusters, int units, int sm, int sn,
                                            int kt_all, int kt_per T9X_WF_PARAM)
{
    int s = 0;
    unsigned ph = 0;
    for (int u = cluster; u < units; u += clusters) {
#if T9_WF
        T9_WF_ITEM(u, t, k0, k1);     // the kernel's walk of whole units and wave-fill pieces
        int pm, pn;
        (void)kt_per;
#else
        int t = u / SPLITK, z = u - t * SPLITK, pm, pn;
        int k0 = z * kt_per, k1 = k0 + kt_per < kt_all ? k0 + kt_per : kt_all;
#endif
        T9_PRODUCT(t);
        t9_tile(t, sm, sn, &pm, &pn);
        int m0 = pm * BM, n0 = pn * BN;
        for (int kt = k0; kt < k1; kt++) {
            t9_bar_wait(bars + 8 * (STAGES + s), ph ^ 1);
            unsigned full = bars + 8 * s, sa = base + s * T9_STAGE_BYTES, sb = sa + T9_A_BYTES;
            if (tid == 0) {
                if (dirs == (T9_DIR_A | T9_DIR_B))
                    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(full) : "memory");
                else
                    t9_bar_expect(full, dirs & T9_DIR_A ? T9_B_BYTES : T9_A_BYTES);
                if (!(dirs & T9_DIR_A)) {
#if OPA
#pragma unroll
                    for (int j = 0; j < BM / T9_BOXE; j++)
                        t9_tma(&tmA, sa + j * (BK * 128), full, m0 + j * T9_BOXE, kt * BK, prod, 0);
#else
#pragma unroll
                    for (int b = 0; b < BK / T9_BOXE; b++)
                        t9_tma(&tmA, sa + b * (BM * 128), full, kt * BK + b * T9_BOXE, m0, prod, 0);
#endif
                }
                if (!(dirs & T9_DIR_B)) {
#if OPB
#pragma unroll
                    for (int b = 0; b < BK / T9_BOXE; b++)
                        t9_tma(&tmB, sb + b * (BN * 128), full, kt * BK + b * T9_BOXE, n0, prod, 0);
#else
#pragma unroll
                    for (int j = 0; j < BN / T9_BOXE; j++)
                        t9_tma(&tmB, sb + j * (BK * 128), full, n0 + j * T9_BOXE, kt * BK, prod, 0);
#endif
                }
            }
            // the stored tiles: A m x k (OPA 1: k x m), B k x n (OPB 1: n x k)
            if (dirs & T9_DIR_A)
                t9x_tile<OPA ? BK : BM, OPA ? BM : BK, CP>(sa, tmA, prod, OPA ? kt * BK : m0, OPA ? m0 : kt * BK, tid);
            if (dirs & T9_DIR_B)
                t9x_tile<OPB ? BN : BK, OPB ? BK : BN, CP>(sb, tmB, prod, OPB ? n0 : kt * BK, OPB ? kt * BK : n0, tid);
            asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(full) : "memory");
            if (++s == STAGES) { s = 0; ph ^= 1; }
        }
    }
    asm volatile("cp.async.wait_all;" ::: "memory");   // no copy outlives its thread
}
#endif

// The kernel. Grid: a whole number of clusters (<= the number that fit at once), each walking
// cluster tiles t = cluster, cluster + clusters, ... (times SPLITK K slices). vec_ok: bit 0, C base
// and ldc allow paired stores; bit 1 (VEC 8), tmC maps C (dims {n, m}, box {64, BM/WG (PING: BM)},
// 128-byte swizzle) and beta == 0: the TMA-store epilogue; bit 2 (VEC 8), beta == 0 but C not
// TMA-able: staged, then row-contiguous stores; bits 3 and 4: A, B read directly (tmA, tmB then hold the operand's
// address and strides: the t9x_ section). ws: SPLITK > 1 workspace, else unused.
// With CM*CN > 1 the host launches clusters of CM*CN x 1 x 1 CTAs (cuLaunchKernelEx): the cluster
// shape is a launch attribute (no __cluster_dims__), as templates/tcgemm.c launches it.
// BATCH 1: `batch` products in one launch; tmA, tmB (and tmC) are 3-D maps {cols, rows, products}
// whose third stride is the product stride, the units walk cluster tiles x products, and C (direct
// and staged stores) advances by sc elements per product.
extern "C" __global__ void __launch_bounds__(T9_THREADS, 1)
tcgemm(const __grid_constant__ t9_tmap tmA, const __grid_constant__ t9_tmap tmB,
       const __grid_constant__ t9_tmap tmC, tc_elem *__restrict__ C, int m, int n, int k, long long ldc,
       float alpha, float beta, int vec_ok, float *__restrict__ ws T9_BATCH_PARAM T9_WF_PARAM TC_EPI_PARAM
       TC_F8_PARAM)
{
    TC_F8_SCALE();
    extern __shared__ unsigned char t9_raw[];
    unsigned base = (t9_smem_addr(t9_raw) + 1023) & ~1023u;
    unsigned bars = base + STAGES * T9_STAGE_BYTES + T9_C_BYTES;   // full[s] at bars + 8s, empty[s] at bars + 8(STAGES+s)
    int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    unsigned rank = 0;
#if T9_CL > 1
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
#endif
    int cm = rank % CM, cn = rank / CM;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
#if T9X_ON
            t9_bar_init(bars + 8 * s, vec_ok & (T9_DIR_A | T9_DIR_B) ? 1 + 128 : 1);  // + the direct copiers
#else
            t9_bar_init(bars + 8 * s, 1);
#endif
            t9_bar_init(bars + 8 * (STAGES + s), T9_OWN * (CM + CN - 1));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    t9_cluster_sync();

    int tm = TC_CDIV(m, BM), tn = TC_CDIV(n, BN);
    int sm = TC_CDIV(tm, CM), sn = TC_CDIV(tn, CN);
#if BATCH
    int units = sm * sn * batch;    // the host keeps it below 2^31
#elif T9_WF
    int units = dp_units + (sm * sn - dp_units) * wf_split;
#else
    int units = sm * sn * SPLITK;
#endif
    int kt_all = TC_CDIV(k, BK), kt_per = TC_CDIV(kt_all, T9_SLICES);
    int cluster = blockIdx.x / T9_CL, clusters = gridDim.x / T9_CL;

    if (wg == 0) {
        // ---- producer ----
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
#if T9X_ON
        if (vec_ok & T9_DIR_8)
            t9x_produce<8>(tmA, tmB, base, bars, vec_ok & (T9_DIR_A | T9_DIR_B), tid, cluster, clusters, units, sm, sn,
                           kt_all, kt_per T9X_WF_ARGS);
        else if (vec_ok & (T9_DIR_A | T9_DIR_B))
            t9x_produce<4>(tmA, tmB, base, bars, vec_ok & (T9_DIR_A | T9_DIR_B), tid, cluster, clusters, units, sm, sn,
                           kt_all, kt_per T9X_WF_ARGS);
        else
#endif
        if (tid == 0) {
            unsigned short maskA = 0, maskB = 0;   // A: same cm (a cluster row); B: same cn
            for (int j = 0; j < CN; j++) maskA |= (unsigned short)(1u << (cm + j * CM));
            for (int i = 0; i < CM; i++) maskB |= (unsigned short)(1u << (i + cn * CM));
            int s = 0;
            unsigned ph = 0;
            for (int u = cluster; u < units; u += clusters) {
#if T9_WF
                T9_WF_ITEM(u, t, k0, k1);
                int pm, pn;
#else
                int t = u / SPLITK, z = u - t * SPLITK, pm, pn;
#endif
                T9_PRODUCT(t);
                t9_tile(t, sm, sn, &pm, &pn);
                int m0 = (pm * CM + cm) * BM, n0 = (pn * CN + cn) * BN;
#if !T9_WF
                int k0 = z * kt_per, k1 = k0 + kt_per < kt_all ? k0 + kt_per : kt_all;
#endif
                for (int kt = k0; kt < k1; kt++) {
                    t9_bar_wait(bars + 8 * (STAGES + s), ph ^ 1);
                    unsigned full = bars + 8 * s;
                    t9_bar_expect(full, T9_TMA_BYTES);
                    unsigned sa = base + s * T9_STAGE_BYTES, sb = sa + T9_A_BYTES;
#if OPA
                    // A stored k x m: boxes of 64 m-columns x BK/CN k-rows, laid out like B's (NN)
#pragma unroll
                    for (int j = 0; j < BM / T9_BOXE; j++)
                        t9_tma(&tmA, sa + j * (BK * 128) + cn * (BK / CN) * 128, full,
                               m0 + j * T9_BOXE, kt * BK + cn * (BK / CN), prod, maskA);
#else
#pragma unroll
                    for (int b = 0; b < BK / T9_BOXE; b++)
                        t9_tma(&tmA, sa + b * (BM * 128) + cn * (BM / CN) * 128, full,
                               kt * BK + b * T9_BOXE, m0 + cn * (BM / CN), prod, maskA);
#endif
#if OPB
                    // B stored n x k: boxes of 64 k-columns x BN/CM rows, laid out like A's
#pragma unroll
                    for (int b = 0; b < BK / T9_BOXE; b++)
                        t9_tma(&tmB, sb + b * (BN * 128) + cm * (BN / CM) * 128, full,
                               kt * BK + b * T9_BOXE, n0 + cm * (BN / CM), prod, maskB);
#else
#pragma unroll
                    for (int j = 0; j < BN / T9_BOXE; j++)
                        t9_tma(&tmB, sb + j * (BK * 128) + cm * (BK / CM) * 128, full,
                               n0 + j * T9_BOXE, kt * BK + cm * (BK / CM), prod, maskB);
#endif
                    if (++s == STAGES) { s = 0; ph ^= 1; }
                }
            }
        }
    } else {
        // ---- consumers ----
#if WG == 1
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
#elif WG == 2
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
#else
        asm volatile("setmaxnreg.inc.sync.aligned.u32 152;");
#endif
        int c = wg - 1, warp = tid / 32, lane = tid % 32;
        float d[T9_MI][T9_ACC];
#if SCALE
        // Block scales: each K-block's wgmmas (BK 128 = one block) accumulate into dt, which is then promoted into d
        // with the block's scales, d += scale_a[row][kb] scale_b[n0 / 128][kb] dt, in FP32: the tensor cores' reduced-
        // precision accumulation never spans more than 128 of K (docs/fp8.md). The wgmmas of a step complete before
        // the promotion (wait_group 0), so the stage is released at once.
#if T9_NH
        float dt[64];       // BN 256: one N-half's promotion buffer (t9_mma_h), d's registers 64 h .. 64 h + 63; SCALE 3:
                            // two N-quarters' buffers, dt[0..31] (quarters 0, 2) and dt[32..63] (quarters 1, 3)
#else
        float dt[T9_ACC];
#endif
#endif
#if SCALE == 2
        // Two promotion buffers, dt and dt1, taken in turns: a step issues K-block j's wgmmas, waits for block j - 1's
        // only (wait_group 1), releases its stage and promotes it while block j runs. d, dt and dt1: 3 x 64 registers
        // at BN 128 (of the consumers' 232). The blocks run in chunks of at most 4 (below), each ending with wait_group 0.
        float dt1[T9_ACC];
        auto promote = [&](float (&x)[T9_ACC], float f0, float f1) {
#pragma unroll
            for (int j = 0; j < T9_ACC / 4; j++) {
                d[0][4 * j] += f0 * x[4 * j];
                d[0][4 * j + 1] += f0 * x[4 * j + 1];
                d[0][4 * j + 2] += f1 * x[4 * j + 2];
                d[0][4 * j + 3] += f1 * x[4 * j + 3];
            }
        };
#endif
        unsigned fr0[T9_MI][BK / 8][4], fr1[T9_MI][BK / 8][4];   // TF32 A fragments, two K steps
#pragma unroll
        for (int i = 0; i < T9_MI; i++)
#pragma unroll
            for (int kk = 0; kk < BK / 8; kk++)
#pragma unroll
                for (int q = 0; q < 4; q++)
                    fr0[i][kk][q] = fr1[i][kk][q] = 0u;
#if TC_TF32 && T9_TFK
        unsigned fk[T9_MI][T9_NB][4];   // T9_TFK: the fragments of k8 step j at j % T9_NB
#endif
        int s = 0, i_unit = 0;
        unsigned ph = 0;
#if T9_TURN
        int turn = 0;       // SCALE 3: this warpgroup has run a step (warpgroup 0's first waits for no turn)
#endif
        for (int u = cluster; u < units; u += clusters, i_unit++) {
#if T9_WF
            T9_WF_ITEM(u, t, k0, k1);
            int pm, pn;
            const int z = 0;
#else
            int t = u / SPLITK, z = u - t * SPLITK, pm, pn;
#endif
            T9_PRODUCT(t);
#if !T9_WF
            int k0 = z * kt_per, k1 = k0 + kt_per < kt_all ? k0 + kt_per : kt_all;
#endif
            if (PING && i_unit % WG != c) {     // the other warpgroup's tile: skip its stages
                int adv = s + (k1 > k0 ? k1 - k0 : 0);
                ph ^= (adv / STAGES) & 1;
                s = adv % STAGES;
                continue;
            }
            t9_tile(t, sm, sn, &pm, &pn);
            int m0 = (pm * CM + cm) * BM, n0 = (pn * CN + cn) * BN;
            int prev = -1;
#if BATCH
            tc_elem *const Cp = C + (long long)prod * sc;     // this unit's product of C
#else
            tc_elem *const Cp = C;
#endif
#if SCALE
            // this thread's two accumulator rows (fragment rows lane / 4 and + 8 of its warp's 16; rows past m read
            // row m - 1's scales and are never stored) and the tile's column block of B (BN 64 or 128 divides 128)
            const int sr0 = m0 + c * 64 + warp * 16 + lane / 4, sr1 = sr0 + 8;
            const float *sa0 = scale_a + (long long)(sr0 < m ? sr0 : m - 1) * kt_all;
            const float *sa1 = scale_a + (long long)(sr1 < m ? sr1 : m - 1) * kt_all;
            const float *sbk = scale_b + (long long)(n0 / 128) * kt_all;
#pragma unroll
            for (int j = 0; j < T9_ACC; j++)
                d[0][j] = 0.0f;
#endif
#if T9_NH
            // BN 256: the second N-half's column block of B, n0 / 128 + 1, clamped to the last block (a half past n
            // reads the last block's scales; its columns are never stored)
            const int jb1 = n0 / 128 + 1 < TC_CDIV(n, 128) ? n0 / 128 + 1 : TC_CDIV(n, 128) - 1;
            const float *sbk1 = scale_b + (long long)jb1 * kt_all;
#endif
#if T9_AREG
            // SCALE 3 reads the second row's and column block's scales at 32-bit offsets from the first ones' pointers:
            // two registers fewer than two more pointers (d, the two quarter buffers and the A fragments take 208 of
            // the consumers' 232; with the pointers ptxas spilled 12 bytes)
            const int ao1 = (int)(sa1 - sa0), bo1 = (int)(sbk1 - sbk);
#define T9_SA1(i) sa0[(i) + ao1]
#define T9_SB1(i) sbk[(i) + bo1]
#else
#define T9_SA1(i) sa1[i]
#define T9_SB1(i) sbk1[i]
#endif
#if SCALE == 2
            float pf0 = 0.0f, pf1 = 0.0f;   // the previous K-block's scale products (rows sr0, sr1)
#elif SCALE == 1
            // SCALE 1 (and 3): the scales of the step's K-block, loaded one step ahead: a step's first promotion
            // follows its stage's wait by only a few wgmmas' time (T9_NH: 4 m64n128k32, a few hundred clocks), less
            // than an L2 access for a scale row that missed L1, so a load in the same step could stall the promotion
            float sc_a0 = 0.0f, sc_a1 = 0.0f, sc_b = 0.0f;
            if (k0 < k1) {
                sc_a0 = sa0[k0];
                sc_a1 = T9_SA1(k0);
                sc_b = sbk[k0];
            }
#if T9_NH
            float sc_b1 = k0 < k1 ? T9_SB1(k0) : 0.0f;
#endif
#if T9_AREG
            // SCALE 3: the previous K-block's quarter 3 (dt[32..63]) and its scale products, promoted by the next step
            // before its first wgmma; zero before a tile's first block (0 x 0 adds nothing; stale values could be NaN)
            float pg0 = 0.0f, pg1 = 0.0f;
#pragma unroll
            for (int j = 32; j < 64; j++)
                dt[j] = 0.0f;
#endif
#endif
#if PING
            // the previous tile's owner must have finished its main loop: before that, this
            // warpgroup's full-barrier phases are not the next ones (parity would alias)
            if (i_unit > 0)
                asm volatile("bar.sync %0, 256;" :: "r"(1 + c) : "memory");
#endif
            // One K step: wait for the stage, issue its wgmmas, keep one step in flight, release the
            // previous stage. TF32: fa holds this step's register A fragments, fo the previous
            // step's, still read by its in-flight wgmmas until the wait below (so the two are never
            // the same registers: the loop is unrolled by two and fo is fenced after the wait).
            auto step = [&](int kt, unsigned (&fa)[T9_MI][BK / 8][4], unsigned (&fo)[T9_MI][BK / 8][4]
#if SCALE == 2
                            , float (&dc)[T9_ACC], float (&dp)[T9_ACC], int after  // this K-block's buffer, the
                            // previous one's (promoted if after: not the first block of a chunk)
#endif
                            ) {
#if SCALE == 1
                // the block's scales, loaded during the previous step (sc_*); this step loads the next block's, read
                // one whole step later (the last block reloads its own)
                const float la0 = sc_a0, la1 = sc_a1, lb = sc_b;
                const int kn = kt + 1 < k1 ? kt + 1 : kt;
                sc_a0 = sa0[kn];
                sc_a1 = T9_SA1(kn);
                sc_b = sbk[kn];
#elif SCALE
                // the block's scales, loaded ahead of the stage's wait and read after its wgmmas
                const float la0 = sa0[kt], la1 = sa1[kt], lb = sbk[kt];
#endif
#if T9_NH
                const float lb1 = sc_b1;        // the second N-half's
                sc_b1 = T9_SB1(kn);
#endif
                t9_bar_wait(bars + 8 * s, ph);
#if T9X_ON
                if (vec_ok & (T9_DIR_A | T9_DIR_B))     // the direct copies' generic-proxy writes, before wgmma reads
                    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
                unsigned sa = base + s * T9_STAGE_BYTES, sb = sa + T9_A_BYTES;
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
                    t9_fence_acc(d[i]);
#if SCALE == 2
                t9_fence_acc(dc);
                t9_fence_acc(dp);
#elif T9_NH
                t9_fence_h(dt);
#elif SCALE
                t9_fence_acc(dt);
#endif
#if T9_AREG
                // SCALE 3: the K-block's A fragments (4 k32 steps x 4 registers) read once; four N-quarters (B rows
                // 64 q .. 64 q + 63 of the stage), each four m64n64k32 wgmmas with A from registers into dt[0..31]
                // (q even) or dt[32..63] (q odd). Quarter q is committed before quarter q - 1 is waited for (wait_group
                // 1) and promoted, so a quarter's wgmmas always run during a promotion. The step ends with wait_group
                // 0 (no group in flight at a branch or the loop's back edge, where ptxas would serialize the wgmmas:
                // C7514), releases the stage and leaves quarter 3 in dt[32..63] with its products pg0, pg1: the next
                // step promotes it while its ldmatrix loads are in flight, before its first wgmma (with a wgmma in
                // flight, ptxas cannot tell that a register last written by a wgmma of the previous loop iteration is
                // complete, and waits for everything there: its C7517). Descriptors: the stage's B descriptor plus
                // the byte offset / 16 (the 14-bit address field cannot carry: shared addresses are below 2^18).
                (void)fa;
                unsigned af[BK / T9_KSTEP][4];
#pragma unroll
                for (int kk = 0; kk < BK / T9_KSTEP; kk++)
                    t9_fa8(af[kk], sa, c * T9_WP, warp, lane, kk);
                t9_promote_q(d[0] + 96, dt + 32, pg0, pg1);     // the previous block's quarter 3
#if T9_TURN
                if (c == 1 || turn)         // the other warpgroup has issued its current block's quarter 2
                    asm volatile("bar.sync %0, 256;" :: "r"(T9_TURN_BAR + c) : "memory");
                turn = 1;
#endif
                const unsigned long long db0 = t9_desc(sb, 16, 1024);
                // rows sr0 and sr1: column block n0 / 128 (quarters 0, 1) and n0 / 128 + 1 (quarters 2, 3)
                const float f0 = la0 * lb, f1 = la1 * lb, g0 = la0 * lb1, g1 = la1 * lb1;
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                    for (int kk = 0; kk < BK / T9_KSTEP; kk++)
                        t9_mma_q(dt + 32 * (q % 2), af[kk], db0 + (unsigned)((q * 64 * 128 + kk * 32) >> 4), kk > 0);
                    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#if T9_TURN
                    if (q == 2)             // the other warpgroup's turn
                        asm volatile("bar.arrive %0, 256;" :: "r"(T9_TURN_BAR + 1 - c) : "memory");
#endif
                    if (q > 0) {
                        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
                        t9_fence_q(dt + 32 * ((q - 1) % 2));
                        t9_promote_q(d[0] + 32 * (q - 1), dt + 32 * ((q - 1) % 2), q < 3 ? f0 : g0, q < 3 ? f1 : g1);
                    }
                }
                asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
                t9_fence_q(dt + 32);
                if (tid < T9_CL) {          // this stage is read (A fragments in registers, quarter 3 complete)
                    unsigned r = tid;
                    if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                        t9_bar_arrive_cta(bars + 8 * (STAGES + s), r);
                }
                pg0 = g0;
                pg1 = g1;
#elif T9_NH
                // BN 256 block scales: N-half 0's four wgmmas (B rows 0..127 of the stage) into dt, complete, promoted
                // into d's registers 0..63 with the block's scales; then N-half 1's (B rows 128..255) into dt, left
                // to the step's commit and wait below, which promote them into registers 64..127
                (void)fa;
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    if (h == 1) {
                        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
                        t9_fence_h(dt);
                        const float f0 = la0 * lb, f1 = la1 * lb;   // rows sr0 and sr1, column block n0 / 128
#pragma unroll
                        for (int j = 0; j < 16; j++) {
                            d[0][4 * j] += f0 * dt[4 * j];
                            d[0][4 * j + 1] += f0 * dt[4 * j + 1];
                            d[0][4 * j + 2] += f1 * dt[4 * j + 2];
                            d[0][4 * j + 3] += f1 * dt[4 * j + 3];
                        }
                        t9_fence_h(dt);
                    }
                    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                    for (int kk = 0; kk < BK / T9_KSTEP; kk++) {
                        unsigned long long db = t9_desc(sb + h * (128 * 128) + (kk % 4) * 32, 16, 1024);
                        unsigned long long da =
                            t9_desc(sa + (kk / 4) * (BM * 128) + c * T9_WP * 128 + (kk % 4) * 32, 16, 1024);
                        t9_mma_h(dt, da, db, kk > 0);
                    }
                }
#elif !TC_TF32
                (void)fa;
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int kk = 0; kk < BK / T9_KSTEP; kk++) {
                    unsigned long long db = OPB ? t9_desc(sb + (kk / 4) * (BN * 128) + (kk % 4) * 32, 16, 1024)
                                                : t9_desc(sb + kk * 2048, BK * 128, 1024);
#pragma unroll
                    for (int i = 0; i < T9_MI; i++) {
                        const int row0 = (PING ? 0 : c * T9_WP) + i * 64;
                        unsigned long long da =
                            OPA ? t9_desc(sa + (row0 / 64) * (BK * 128) + kk * 2048, BK * 128, 1024)
                                : t9_desc(sa + (kk / 4) * (BM * 128) + row0 * 128 + (kk % 4) * 32, 16, 1024);
#if SCALE == 2
                        t9_mma(dc, da, db, kk > 0);
#elif SCALE
                        t9_mma(dt, da, db, kk > 0);
#else
                        t9_mma(d[i], da, db, kt > k0 || kk > 0);
#endif
                    }
                }
#else
                // A fragments (64 x 8 of B^T per k8: rows p = C columns, cols = k) go to registers, and
                // wgmma.fence orders those register writes before the wgmmas that read them. T9_TFO
                // (internal, measured in bench/notes_tcgemm.md): 0 = per k8 load, fence, wgmma (the next
                // loads run under this wgmma); 1 = the whole stage's loads, one fence, the wgmmas;
                // 2 = one fence per stage ahead of the loads (the register-write ordering then rests on
                // the hardware scoreboard alone: not what the PTX ISA promises)
#ifndef T9_TFO
#define T9_TFO 0
#endif
#if T9_TFK
                // one group per k8, T9_TFK in flight: fk[i][kk % T9_NB] is free once group kk - T9_NB is
                // complete (wait_group T9_TFK after each commit). Loads then never fall between the
                // wgmmas of one group: ptxas otherwise serializes the wgmmas (its warning C7513)
                (void)fa; (void)fo;
#pragma unroll
                for (int kk = 0; kk < BK / 8; kk++) {
#pragma unroll
                    for (int i = 0; i < T9_MI; i++)
#pragma unroll
                        for (int q = 0; q < 4; q++) {
                            int p = (PING ? 0 : c * T9_WP) + i * 64 + warp * 16 + lane / 4 + (q & 1) * 8;
                            int kc = kk * 8 + lane % 4 + (q >> 1) * 4;
                            unsigned ad = T9_FRAG(sa, sb, p, kc);
                            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(fk[i][kk % T9_NB][q]) : "r"(ad) : "memory");
                        }
                    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                    for (int i = 0; i < T9_MI; i++)
                        t9_mma_tf32(d[i], fk[i][kk % T9_NB], T9_TFB(sa, sb, kk),
                                    kt > k0 || kk > 0);
                    if (kk + 1 < BK / 8) {
                        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                        asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(T9_TFK) : "memory");
#pragma unroll
                        for (int i = 0; i < T9_MI; i++)
#pragma unroll
                            for (int q = 0; q < 4; q++)
                                asm volatile("" : "+r"(fk[i][(kk + 1) % T9_NB][q]) :: "memory");
                    }
                }
#else
#if T9_TFO == 2
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int kk = 0; kk < BK / 8; kk++) {
#pragma unroll
                        for (int q = 0; q < 4; q++) {
                            int p = (PING ? 0 : c * T9_WP) + i * 64 + warp * 16 + lane / 4 + (q & 1) * 8;
                            int kc = kk * 8 + lane % 4 + (q >> 1) * 4;
                            unsigned ad = T9_FRAG(sa, sb, p, kc);
                            asm volatile("ld.shared.b32 %0, [%1];" : "=r"(fa[i][kk][q]) : "r"(ad) : "memory");
                        }
#if T9_TFO == 0
                        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
#if T9_TFO != 1
                        t9_mma_tf32(d[i], fa[i][kk], T9_TFB(sa, sb, kk),
                                    kt > k0 || kk > 0);
#endif
                    }
#if T9_TFO == 1
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int kk = 0; kk < BK / 8; kk++)
                        t9_mma_tf32(d[i], fa[i][kk], T9_TFB(sa, sb, kk),
                                    kt > k0 || kk > 0);
#endif
#endif  // T9_TFK
#endif
#if !T9_AREG                        // (SCALE 3's step has committed and waited for all its groups)
                asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
#if TC_TF32 && T9_TFK
                asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(T9_TFK) : "memory");
#elif T9_AREG
#elif SCALE == 1
                asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#else
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#endif
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
                    t9_fence_acc(d[i]);
#if TC_TF32 && T9_TFK
                (void)fo;
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        asm volatile("" : "+r"(fk[i][0][q]) :: "memory");   // group BK/8 - T9_NB: buffer 0
#elif T9_RF
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int kk = 0; kk < BK / 8; kk++)
#pragma unroll
                        for (int q = 0; q < 4; q++)
                            asm volatile("" : "+r"(fo[i][kk][q]) :: "memory");
#else
                (void)fo;
#endif
#if SCALE == 2
                t9_fence_acc(dp);           // block kt - 1 (if any) is complete: its stage is released below
#endif
#if T9_AREG
#elif T9_NH
                t9_fence_h(dt);
                if (tid < T9_CL) {          // this stage is read: release it before N-half 1's promotion
                    unsigned r = tid;
                    if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                        t9_bar_arrive_cta(bars + 8 * (STAGES + s), r);
                }
                const float f0 = la0 * lb1, f1 = la1 * lb1;  // rows sr0 and sr1, column block n0 / 128 + 1
#pragma unroll
                for (int j = 0; j < 16; j++) {
                    d[0][64 + 4 * j] += f0 * dt[4 * j];
                    d[0][64 + 4 * j + 1] += f0 * dt[4 * j + 1];
                    d[0][64 + 4 * j + 2] += f1 * dt[4 * j + 2];
                    d[0][64 + 4 * j + 3] += f1 * dt[4 * j + 3];
                }
#elif SCALE == 1
                t9_fence_acc(dt);
                if (tid < T9_CL) {          // this stage is read: release it before the promotion
                    unsigned r = tid;
                    if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                        t9_bar_arrive_cta(bars + 8 * (STAGES + s), r);
                }
                const float f0 = la0 * lb, f1 = la1 * lb;   // rows sr0 (d[4j], d[4j+1]) and sr1 (d[4j+2], d[4j+3])
#pragma unroll
                for (int j = 0; j < T9_ACC / 4; j++) {
                    d[0][4 * j] += f0 * dt[4 * j];
                    d[0][4 * j + 1] += f0 * dt[4 * j + 1];
                    d[0][4 * j + 2] += f1 * dt[4 * j + 2];
                    d[0][4 * j + 3] += f1 * dt[4 * j + 3];
                }
#else
                if (prev >= 0 && tid < T9_CL) {
                    unsigned r = tid;
                    if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                        t9_bar_arrive_cta(bars + 8 * (STAGES + prev), r);
                }
                prev = s;
#endif
#if SCALE == 2
                if (after)                  // block kt - 1, while block kt's wgmmas run
                    promote(dp, pf0, pf1);
                pf0 = la0 * lb;
                pf1 = la1 * lb;
#endif
                if (++s == STAGES) { s = 0; ph ^= 1; }
            };
#if SCALE == 2
            // Chunks of at most 4 K-blocks, straight-line code that ends with wait_group 0 and the last block's promotion:
            // no wgmma group stays in flight across a branch merge or a loop's back edge, where ptxas would lose track
            // of which buffer a wait_group 1 completes and serialize every wgmma (its C7514). So one promotion in 4
            // waits for its wgmmas; warpgroup 2 starts each tile with a chunk of 2, so the two warpgroups' waits fall
            // apart and the other one's wgmmas keep the tensor cores busy.
            auto finish = [&](float (&x)[T9_ACC]) {
                asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
                t9_fence_acc(x);
                if (tid < T9_CL) {          // the chunk's last stage is read
                    unsigned r = tid;
                    if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                        t9_bar_arrive_cta(bars + 8 * (STAGES + prev), r);
                }
                prev = -1;
                promote(x, pf0, pf1);
            };
            for (int kt = k0, chunk = c % 2 ? 2 : 4; kt < k1; kt += chunk, chunk = 4) {
                const int left = k1 - kt;
                step(kt, fr0, fr1, dt, dt1, 0);
                if (left > 1) {
                    step(kt + 1, fr1, fr0, dt1, dt, 1);
                    if (left > 2 && chunk > 2) {
                        step(kt + 2, fr0, fr1, dt, dt1, 1);
                        if (left > 3) {
                            step(kt + 3, fr1, fr0, dt1, dt, 1);
                            finish(dt1);
                        } else {
                            finish(dt);
                        }
                    } else {
                        finish(dt1);
                    }
                } else {
                    finish(dt);
                }
            }
#else
            for (int kt = k0; kt < k1; kt += 2) {
                step(kt, fr0, fr1);
                if (kt + 1 < k1)
                    step(kt + 1, fr1, fr0);
            }
#endif
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
            for (int i = 0; i < T9_MI; i++)
                t9_fence_acc(d[i]);
#if T9_AREG
            t9_promote_q(d[0] + 96, dt + 32, pg0, pg1);     // the tile's last K-block's quarter 3
#endif
#if TC_TF32 && T9_TFK
#pragma unroll
            for (int i = 0; i < T9_MI; i++)
#pragma unroll
                for (int b = 0; b < T9_NB; b++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        asm volatile("" : "+r"(fk[i][b][q]) :: "memory");
#elif T9_RF
#pragma unroll
            for (int i = 0; i < T9_MI; i++)
#pragma unroll
                for (int kk = 0; kk < BK / 8; kk++)
#pragma unroll
                    for (int q = 0; q < 4; q++)
                        asm volatile("" : "+r"(fr0[i][kk][q]), "+r"(fr1[i][kk][q]) :: "memory");
#endif
#if PING
            if (u + clusters < units)       // hand the ring to the next tile's owner
                asm volatile("bar.arrive %0, 256;" :: "r"(1 + (c + 1) % WG) : "memory");
#endif
            if (prev >= 0 && tid < T9_CL) {
                unsigned r = tid;
                if ((int)(r % CM) == cm || (int)(r / CM) == cn)
                    t9_bar_arrive_cta(bars + 8 * (STAGES + prev), r);
            }
            if (k1 <= k0) {                 // empty K slice: its partial is zero
#pragma unroll
                for (int i = 0; i < T9_MI; i++)
#pragma unroll
                    for (int j = 0; j < T9_ACC; j++)
                        d[i][j] = 0.0f;
            }
#if T9_WF
            if (u >= dp_units && wf_split > 1) {
                // A piece of a split unit (the header comment): store it, fence, count in; the last of the
                // tile's wf_split pieces to arrive sums them in piece order and stores C below, the others
                // go on to their next item.
                const int piece = u - dp_units, st = piece / wf_split, x = c * 128 + tid;
                float *const slot0 = ws + ((long long)(st * wf_split) * T9_CL + rank) * (BM * BN);
                t9_wf_store(d, slot0 + (long long)(piece - st * wf_split) * T9_CL * (BM * BN), x);
                __threadfence();
                asm volatile("bar.sync %0, 128;" :: "r"(8 + c) : "memory");
                int last = 0;
                if (tid == 0) {
                    int *cnt = counters + ((long long)st * T9_CL + rank) * WG + c;
                    last = atomicAdd(cnt, 1) == wf_split - 1;
                    if (last)
                        *cnt = 0;           // every piece has counted in: ready for the next call
                }
                if (!t9_bar_or(8 + c, last))
                    continue;
                __threadfence();
                t9_wf_load<false>(d, slot0, x);
#pragma unroll 1
                for (int zz = 1; zz < wf_split; zz++)
                    t9_wf_load<true>(d, slot0 + (long long)zz * T9_CL * (BM * BN), x);
            }
#endif
#if T9_TES
            if (vec_ok & 2) {
                // T9_TES: chunk b = C rows m0 + 32b .. + 31 of this warpgroup's 64 columns, in two 128-byte-swizzled
                // boxes of 32 columns (buffer b % 2), written by one thread with two TMA stores; a buffer is refilled
                // once the store of two chunks back has read it (wait_group.read 1)
                unsigned cs = base + STAGES * T9_STAGE_BYTES + c * (2 * 32 * 64 * 4);
#pragma unroll
                for (int b = 0; b < BM / 32; b++) {
                    unsigned buf = cs + (b & 1) * (32 * 64 * 4);
                    if (tid == 0)
                        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
                    asm volatile("bar.sync %0, 128;" :: "r"(8 + c) : "memory");
#pragma unroll
                    for (int jj = 0; jj < 4; jj++)
#pragma unroll
                        for (int e = 0; e < 2; e++)
#pragma unroll
                            for (int h = 0; h < 2; h++) {
                                int r = jj * 8 + (lane % 4) * 2 + h, cb = (warp % 2) * 16 + lane / 4 + e * 8;
                                unsigned ad = buf + (warp / 2) * 4096 + r * 128 + (((cb / 4) ^ (r % 8)) * 16) + (cb % 4) * 4;
                                float o = TC_EPI(alpha * d[0][4 * (4 * b + jj) + 2 * e + h], m0 + 32 * b + r,
                                                 n0 + c * 64 + (warp / 2) * 32 + cb);
                                asm volatile("st.shared.f32 [%0], %1;" :: "r"(ad), "f"(o) : "memory");
                            }
                    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                    asm volatile("bar.sync %0, 128;" :: "r"(8 + c) : "memory");
                    if (tid == 0) {
#pragma unroll
                        for (int bx = 0; bx < 2; bx++)
                            t9_tma_store(&tmC, buf + bx * 4096, n0 + c * 64 + bx * 32, m0 + 32 * b, prod);
                        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
                    }
                }
                continue;
            }
#endif
#if T9_C_BYTES > 0 && SPLITK <= 1 && TYPE != 2
            if (vec_ok & 6) {
                // stage alpha*acc (rounded) in this warpgroup's 128-byte-swizzled boxes of 64 columns,
                // then one thread stores them with TMA; the stores overlap the next tile's main loop
                unsigned cs = base + STAGES * T9_STAGE_BYTES + (PING ? 0 : c) * (T9_WP * BN * 2);
#if EPI && TC_BIAS
                // the thread's bias values, loaded while the previous tile's stores drain
                unsigned bv[T9_NBIAS];
                t9_bias_load(bv, bias, m0 + (PING ? 0 : c * T9_WP) + warp * 16 + lane / 4, n0, lane, m, n);
#endif
                if (tid == 0)
                    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
                asm volatile("bar.sync %0, 128;" :: "r"(8 + c) : "memory");
#pragma unroll
                for (int i = 0; i < T9_MI; i++) {
#pragma unroll
                    for (int j = 0; j < T9_ACC / 4; j++) {
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            int r = i * 64 + warp * 16 + lane / 4 + h * 8, col = j * 8 + (lane % 4) * 2;
                            unsigned ad = cs + (col / 64) * (T9_WP * 128) + r * 128
                                        + ((((col % 64) / 8) ^ (r % 8)) * 16) + (col % 8) * 2;
#if EPI
                            float o0 = alpha * d[i][4 * j + 2 * h], o1 = alpha * d[i][4 * j + 2 * h + 1];
#if TC_BIAS == 2
                            o0 += t9_bias_half(bv[j], 0);
                            o1 += t9_bias_half(bv[j], 1);
#elif TC_BIAS == 1
                            o0 += t9_bias_half(bv[i], h);
                            o1 += t9_bias_half(bv[i], h);
#endif
                            unsigned v = tc_pack2(tc_act(o0), tc_act(o1));
#else
                            int gr = m0 + (PING ? 0 : c * T9_WP) + r, gc = n0 + col;
                            unsigned v = tc_pack2(TC_EPI(alpha * d[i][4 * j + 2 * h], gr, gc),
                                                  TC_EPI(alpha * d[i][4 * j + 2 * h + 1], gr, gc + 1));
                            (void)gr; (void)gc;
#endif
                            asm volatile("st.shared.b32 [%0], %1;" :: "r"(ad), "r"(v) : "memory");
                        }
                    }
                }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                asm volatile("bar.sync %0, 128;" :: "r"(8 + c) : "memory");
                if (!(vec_ok & 2)) {
                    // C not TMA-able (unaligned ldc or base): 16-byte stores aligned in memory, each
                    // row's chunks shifted by its start's misalignment (element stores only at a
                    // row's partial first and last chunk)
                    const int rbase = m0 + (PING ? 0 : c * T9_WP), cpr = BN / 8 + 1;
                    const int n_end = min(n, n0 + BN);
                    for (int e = tid; e < T9_WP * cpr; e += 128) {
                        const int r = e / cpr, gr = rbase + r;
                        tc_elem *row = Cp + (long long)gr * ldc;
                        const int a = (int)(((unsigned long long)(row + n0) / 2) % 8);
                        const int gc = n0 + (e % cpr) * 8 - a;
                        if (gr >= m || gc >= n_end || gc + 8 <= n0)
                            continue;
                        unsigned short v[8];
#pragma unroll
                        for (int j = 0; j < 8; j++) {
                            const int col = min(max(gc + j - n0, 0), BN - 1);
                            unsigned ad = cs + (col / 64) * (T9_WP * 128) + r * 128
                                        + ((((col % 64) / 8) ^ (r % 8)) * 16) + (col % 8) * 2;
                            asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v[j]) : "r"(ad));
                        }
                        if (gc >= n0 && gc + 8 <= n_end) {
                            *(uint4 *)(row + gc) =
                                make_uint4(v[0] | (unsigned)v[1] << 16, v[2] | (unsigned)v[3] << 16,
                                           v[4] | (unsigned)v[5] << 16, v[6] | (unsigned)v[7] << 16);
                        } else {
                            for (int j = 0; j < 8; j++)
                                if (gc + j >= n0 && gc + j < n_end)
                                    row[gc + j] = v[j];
                        }
                    }
                    continue;
                }
                if (tid == 0) {
#pragma unroll
                    for (int b = 0; b < BN / 64; b++)
                        t9_tma_store(&tmC, cs + b * (T9_WP * 128), n0 + b * 64, m0 + (PING ? 0 : c * T9_WP), prod);
                    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
                }
                continue;
            }
#endif
            // ---- epilogue: fragment (warp, lane) holds rows g, g+8 and column pairs of each n8 ----
#pragma unroll
            for (int i = 0; i < T9_MI; i++) {
                int g = (PING ? 0 : c * T9_WP) + i * 64 + warp * 16 + lane / 4;
#pragma unroll
                for (int j = 0; j < T9_ACC / 4; j++) {
                    int q = j * 8 + (lane % 4) * 2;
#if !T9_TR
                    int r0 = m0 + g, c0 = n0 + q;
#else
                    int r0 = m0 + q, c0 = n0 + g;   // D^T: rows of the fragment are C columns
#endif
                    if (SPLITK > 1) {
                        float *w = ws + (long long)z * m * n;
#if !T9_TR
                        if (r0 < m && c0 < n) w[(long long)r0 * n + c0] = d[i][4 * j];
                        if (r0 < m && c0 + 1 < n) w[(long long)r0 * n + c0 + 1] = d[i][4 * j + 1];
                        if (r0 + 8 < m && c0 < n) w[(long long)(r0 + 8) * n + c0] = d[i][4 * j + 2];
                        if (r0 + 8 < m && c0 + 1 < n) w[(long long)(r0 + 8) * n + c0 + 1] = d[i][4 * j + 3];
#else
                        const int c8 = 8;     // C column of the fragment's row g + 8
                        if (r0 < m && c0 < n) w[(long long)r0 * n + c0] = d[i][4 * j];
                        if (r0 + 1 < m && c0 < n) w[(long long)(r0 + 1) * n + c0] = d[i][4 * j + 1];
                        if (r0 < m && c0 + c8 < n) w[(long long)r0 * n + c0 + c8] = d[i][4 * j + 2];
                        if (r0 + 1 < m && c0 + c8 < n) w[(long long)(r0 + 1) * n + c0 + c8] = d[i][4 * j + 3];
#endif
                        continue;
                    }
#if !T9_TR
                    t9_st2(Cp, ldc, m, n, r0, c0, d[i][4 * j], d[i][4 * j + 1], alpha, beta, vec_ok & 1 TC_EPI_ARG);
                    t9_st2(Cp, ldc, m, n, r0 + 8, c0, d[i][4 * j + 2], d[i][4 * j + 3], alpha, beta,
                           vec_ok & 1 TC_EPI_ARG);
#else
                    (void)vec_ok;
                    t9_st1(Cp, ldc, m, n, r0, c0, d[i][4 * j], alpha, beta TC_EPI_ARG);
                    t9_st1(Cp, ldc, m, n, r0 + 1, c0, d[i][4 * j + 1], alpha, beta TC_EPI_ARG);
                    t9_st1(Cp, ldc, m, n, r0, c0 + 8, d[i][4 * j + 2], alpha, beta TC_EPI_ARG);
                    t9_st1(Cp, ldc, m, n, r0 + 1, c0 + 8, d[i][4 * j + 3], alpha, beta TC_EPI_ARG);
#endif
                }
            }
        }
#if T9_TURN
        if (c == 0 && turn)         // warpgroup 1's last turn signal (one bar.arrive per step of each)
            asm volatile("bar.sync %0, 256;" :: "r"(T9_TURN_BAR) : "memory");
#endif
#if T9_C_BYTES > 0
        if (tid == 0)
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");   // C stores complete
#endif
    }
    t9_cluster_sync();      // no CTA leaves while a peer may still signal or write its shared memory
}
#endif  // PATH == 90

#if PATH == 80
// ======================= PATH 80 =======================
#define T8_NT (32 * WARPS_M * WARPS_N)            // threads per block
#define T8_WTM (BM / WARPS_M)                     // warp tile rows
#define T8_WTN (BN / WARPS_N)                     // warp tile columns
#define T8_MI (T8_WTM / 16)                       // m16 fragments per warp
#define T8_NI (T8_WTN / 8)                        // n8 fragments per warp
#define T8_KS (TYPE == 2 ? 8 : 16)                // K of one mma
// Stage row strides (elements). A K-major row (A of OPA 0, B of OPB 1) has 16 bytes of padding: the
// 8 rows of one ldmatrix 8x8 matrix then start 16 * odd bytes apart, in 8 different 16-byte bank
// groups. An M- or N-major row (A of OPA 1, B of OPB 0) has 8 elements: 16 bytes (16-bit, the same
// rule for ldmatrix.trans) or 32 bytes (FP32, read element by element: row t and column g of a
// fragment then hit bank 8t + g, 32 different banks).
#define T8_SA (OPA ? BM + 8 : BK + 16 / TC_ESZ)   // A stage row stride
#define T8_SB (OPB ? BK + 16 / TC_ESZ : BN + 8)   // B stage row stride
#define T8_AE ((OPA ? BK : BM) * T8_SA)           // A elements per stage
#define T8_BE ((OPB ? BN : BK) * T8_SB)           // B elements per stage
#define T8_STAGE_ELEMS (T8_AE + T8_BE)            // elements per stage
#define T8_SE (BN + 8)                            // staged-epilogue row stride (floats)

static_assert(TYPE >= 0 && TYPE <= 2, "TYPE is 0, 1 or 2");
static_assert(T8_WTM % 16 == 0 && T8_WTN % 16 == 0, "warp tile must be a multiple of 16 x 16");
static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "warps must split the block tile");
static_assert(BK % T8_KS == 0 && BK % 8 == 0, "BK must be a multiple of the mma K (16; 8 for TF32)");
static_assert(STAGES >= 2, "STAGES >= 2");
static_assert(LOADW == 16 || LOADW == 8 || LOADW == 4 || (LOADW == 2 && TYPE != 2),
              "LOADW is 16, 8, 4 or 2 bytes (2 only for 16-bit types)");
static_assert(TYPE != 2 || LOADW != 8, "FP32 loads are 16 or 4 bytes");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || (VEC == 8 && TYPE != 2), "VEC is 1, 2, 4 or 8 (8: 16-bit only)");
static_assert(SPLITK >= 1 && GROUP >= 1 && (RASTER == 0 || RASTER == 1), "SPLITK, GROUP >= 1; RASTER 0 or 1");
static_assert((OPA == 0 || OPA == 1) && (OPB == 0 || OPB == 1), "OPA and OPB are 0 or 1");

// Dynamic shared memory bytes the host must provide: max(pipeline, staged epilogue).
#define T8_SMEM_PIPE (STAGES * T8_STAGE_ELEMS * TC_ESZ)
#define T8_SMEM_EPI ((VEC >= 4 && SPLITK == 1) ? BM * T8_SE * 4 : 0)
#define T8_SMEM (T8_SMEM_PIPE > T8_SMEM_EPI ? T8_SMEM_PIPE : T8_SMEM_EPI)

// Copies `bytes` (0..W) from global src to shared address dst, zero-filling up to W. W is LOADW or,
// for an operand whose base, row stride or product stride is less aligned (the kernel's `narrow`
// argument), 8 or 4. W 2 has no cp.async form: a plain load and shared store (latency not hidden;
// LOADW 2 kernels only: a 2-byte operand of a wider LOADW is read by t8_prefill).
template <int W>
__device__ __forceinline__ void t8_copy(unsigned dst, const tc_elem *src, int bytes)
{
    if constexpr (W == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes));
    } else if constexpr (W == 8 || W == 4) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n"
                     :: "r"(dst), "l"(src), "n"(W), "r"(bytes));
    } else {
        unsigned short v = bytes ? *(const unsigned short *)src : (unsigned short)0;
        asm volatile("st.shared.u16 [%0], %1;\n" :: "r"(dst), "h"(v));
    }
}

// The 2-byte loads of an operand with 2-byte rows (`narrow` 2: a 16-bit operand with an odd leading
// dimension or product stride, where LOADW > 2; t8_tile2): an element into a register (t8_ld2_if: 0
// where `ok` is false, nothing read), then t8_st2 to shared memory. Volatile asm, so a group's loads
// and stores keep the order t8_tile2 writes: plain C++ loads were hoisted by the compiler across the
// tiles and stages (250 registers instead of 126 in a 64 x 64 t8_gemm).
__device__ __forceinline__ unsigned short t8_ld2(const tc_elem *p)
{
    unsigned short v;
    asm volatile("ld.global.nc.b16 %0, [%1];\n" : "=h"(v) : "l"(p));
    return v;
}

__device__ __forceinline__ unsigned short t8_ld2_if(const tc_elem *p, bool ok)
{
    unsigned short v;
    asm volatile("{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n mov.b16 %0, 0;\n @q ld.global.nc.b16 %0, [%1];\n}\n"
                 : "=h"(v) : "l"(p), "r"((int)ok));
    return v;
}

__device__ __forceinline__ void t8_st2(unsigned dst, unsigned short v)
{
    asm volatile("st.shared.b16 [%0], %1;\n" :: "r"(dst), "h"(v));
}

__device__ __forceinline__ void t8_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void t8_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

// Loads the ROWS x COLS tile of g (leading dimension ld) at global (r0, c0) into shared memory
// at dst (row stride SST elements); rows >= R and columns >= NCOL are zero-filled. `full` (block-
// uniform) says the tile lies inside the matrix, so no guard is needed. Consecutive threads take
// consecutive chunks of a row (coalesced); each thread's chunks are RS rows apart, so its source
// pointer advances by a precomputed stride.
template <int ROWS, int COLS, int SST, int W>
__device__ __forceinline__ void t8_load_tile_w(unsigned dst, const tc_elem *__restrict__ g, long long ld, int r0,
                                               int c0, int R, int NCOL, bool full, int tid)
{
    constexpr int CE = W / TC_ESZ, CPR = COLS / CE, TOT = ROWS * CPR;
    if constexpr (T8_NT % CPR == 0 && TOT % T8_NT == 0) {
        constexpr int RS = T8_NT / CPR, IT = TOT / T8_NT;
        const int r = tid / CPR, cc = (tid % CPR) * CE;
        const tc_elem *p = g + (long long)(r0 + r) * ld + c0 + cc;
        const long long step = (long long)RS * ld;
        const unsigned d = dst + (unsigned)(r * SST + cc) * TC_ESZ;
        if (full) {
#pragma unroll
            for (int i = 0; i < IT; i++)
                t8_copy<W>(d + (unsigned)(i * RS * SST * TC_ESZ), p + i * step, W);
        } else {
            int v = NCOL - (c0 + cc);
            v = v < 0 ? 0 : (v > CE ? CE : v);
#pragma unroll
            for (int i = 0; i < IT; i++) {
                const int vi = r0 + r + i * RS < R ? v : 0;
                t8_copy<W>(d + (unsigned)(i * RS * SST * TC_ESZ), vi ? p + i * step : g, vi * TC_ESZ);
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < TC_CDIV(TOT, T8_NT); i++) {
            int c = tid + i * T8_NT;
            if (TOT % T8_NT == 0 || c < TOT) {
                int r = c / CPR, cc = (c % CPR) * CE;
                int gr = r0 + r, gc = c0 + cc;
                int v = NCOL - gc;
                v = gr < R ? (v < 0 ? 0 : (v > CE ? CE : v)) : 0;
                const tc_elem *src = v ? g + (long long)gr * ld + gc : g;
                t8_copy<W>(dst + (unsigned)(r * SST + cc) * TC_ESZ, src, v * TC_ESZ);
            }
        }
    }
}

// The tile load at the operand's load width: LOADW, or 8 / 4 bytes where `w` (from the kernel's
// `narrow` argument) says the operand is less aligned (block-uniform, so no divergence). An operand
// of width 2 is skipped: t8_prefill loads it.
template <int ROWS, int COLS, int SST>
__device__ __forceinline__ void t8_load_tile(unsigned dst, const tc_elem *__restrict__ g, long long ld, int r0,
                                             int c0, int R, int NCOL, bool full, int tid, int w)
{
#if LOADW > 2 && TYPE != 2
    if (w == 2)
        return;
#endif
#if LOADW > 8
    if (w == 8) {
        t8_load_tile_w<ROWS, COLS, SST, 8>(dst, g, ld, r0, c0, R, NCOL, full, tid);
        return;
    }
#endif
#if LOADW > 4
    if (w == 4) {
        t8_load_tile_w<ROWS, COLS, SST, 4>(dst, g, ld, r0, c0, R, NCOL, full, tid);
        return;
    }
#endif
    (void)w;
    t8_load_tile_w<ROWS, COLS, SST, LOADW>(dst, g, ld, r0, c0, R, NCOL, full, tid);
}

// Loads K tile `kt` (BK deep) of A and B into the stage at shared address st, each as stored: A
// m x k (a BM x BK tile) or, OPA 1, k x m (BK x BM); B k x n (BK x BN) or, OPB 1, n x k (BN x BK).
// Rows and columns outside the matrix are zero-filled, so partial tiles need no other guard.
// narrow: A's load width in bytes in bits 0-7, B's in bits 8-15 (0: LOADW).
__device__ __forceinline__ void t8_load_stage(unsigned st, int m0, int n0, int kt, int M, int N, int K,
                                              const tc_elem *__restrict__ A, long long lda,
                                              const tc_elem *__restrict__ B, long long ldb, int tid, int narrow)
{
    const int wa = narrow & 0xff, wb = narrow >> 8;
    const int k0 = kt * BK;
    const bool full = m0 + BM <= M && n0 + BN <= N && k0 + BK <= K;
#if OPA
    t8_load_tile<BK, BM, T8_SA>(st, A, lda, k0, m0, K, M, full, tid, wa);
#else
    t8_load_tile<BM, BK, T8_SA>(st, A, lda, m0, k0, M, K, full, tid, wa);
#endif
#if OPB
    t8_load_tile<BN, BK, T8_SB>(st + T8_AE * TC_ESZ, B, ldb, n0, k0, N, K, full, tid, wb);
#else
    t8_load_tile<BK, BN, T8_SB>(st + T8_AE * TC_ESZ, B, ldb, k0, n0, K, N, full, tid, wb);
#endif
}

// A 16-bit operand with 2-byte rows (`narrow` 2, LOADW > 2: no cp.async form) is read synchronously:
// t8_tile2 loads the ROWS x COLS tile at global (r0, c0) (zeros past row R or column NCOL) into shared
// memory at dst (row stride SST) in groups of T8_GROUP2 elements per thread: a group's loads back to
// back, then its stores, so a group costs one memory latency and T8_GROUP2 registers. Consecutive
// threads take consecutive elements of a row (a warp reads 64 contiguous bytes), a thread's elements
// are RS rows apart. Larger groups spill (a 128 x 256 x 64 tile's B is 64 elements per thread: 156
// bytes of spills in t8_gemm at 64; loading A's and B's tiles before either store spilled 116 bytes
// in t8_gemm_short).
#if LOADW > 2 && TYPE != 2
#define T8_GROUP2 16
template <int ROWS, int COLS, int SST>
__device__ __forceinline__ void t8_tile2(unsigned dst, const tc_elem *__restrict__ g, long long ld, int r0, int c0,
                                         int R, int NCOL, bool full, int tid)
{
    constexpr int TOT = ROWS * COLS, IT = TC_CDIV(TOT, T8_NT);
    if constexpr (T8_NT % COLS == 0 && TOT % T8_NT == 0) {
        constexpr int RS = T8_NT / COLS, GR = IT < T8_GROUP2 ? IT : T8_GROUP2;
        static_assert(IT % GR == 0, "a tile's elements per thread are whole groups");
        const int r = tid / COLS, c = tid % COLS;
        const tc_elem *p = g + (long long)(r0 + r) * ld + c0 + c;
        const long long step = (long long)RS * ld;
        const unsigned d = dst + (unsigned)(r * SST + c) * TC_ESZ;
        const bool cok = c0 + c < NCOL;
#pragma unroll
        for (int j = 0; j < IT; j += GR) {
            unsigned short v[GR];
            if (full) {
#pragma unroll
                for (int i = 0; i < GR; i++)
                    v[i] = t8_ld2(p + (j + i) * step);
            } else {
#pragma unroll
                for (int i = 0; i < GR; i++)
                    v[i] = t8_ld2_if(p + (j + i) * step, cok && r0 + r + (j + i) * RS < R);
            }
#pragma unroll
            for (int i = 0; i < GR; i++)
                t8_st2(d + (unsigned)((j + i) * RS * SST * TC_ESZ), v[i]);
        }
    } else {
        // not met by the lattice's tiles (COLS <= threads, whole rows per pass); one element per step
#pragma unroll 1
        for (int i = 0; i < IT; i++) {
            const int e = tid + i * T8_NT, gr = r0 + e / COLS, gc = c0 + e % COLS;
            const bool ok = (TOT % T8_NT == 0 || e < TOT) && gr < R && gc < NCOL;
            const unsigned short v = t8_ld2_if(ok ? g + (long long)gr * ld + gc : g, ok);
            if (TOT % T8_NT == 0 || e < TOT)
                t8_st2(dst + (unsigned)((e / COLS) * SST + e % COLS) * TC_ESZ, v);
        }
    }
}

// Narrow 2: every K tile a block walks of its operands with 2-byte rows, loaded into the ring
// (stage s in slot s) by the block itself (nk <= STAGES: the host's rule, tcgemm_run.c's
// t8_prefill_fits, which packs otherwise); the prologue and the main loop skip those operands
// (t8_load_tile). It runs once, after the prologue has issued the cp.async copies of the other
// operand (so their latencies overlap) and before the main loop, whose first __syncthreads makes
// the stores visible as a landed cp.async stage is. Why here and not in the main loop: measured
// with ptxas (CUDA 13.0, sm_90), any branch inside the main loop (even one trivial store) took a
// 64 x 64 t8_gemm from 126 to 160 registers, and a second copy of the loop spilled in
// t8_gemm_short; this pass, its stage loop kept rolled (unrolled, ptxas hoists the loads of every
// stage), leaves aligned calls' register allocation as it was (docs/notes/tcgemm.md section 23).
__device__ __forceinline__ void t8_prefill(unsigned s0, int m0, int n0, int kb, int nk, int M, int N, int K,
                                           const tc_elem *__restrict__ A, long long lda,
                                           const tc_elem *__restrict__ B, long long ldb, int tid, int narrow)
{
    constexpr unsigned STB = T8_STAGE_ELEMS * TC_ESZ;
    const bool na = (narrow & 0xff) == 2, nb = (narrow >> 8) == 2;
    constexpr int AR = OPA ? BK : BM, AC = OPA ? BM : BK, BR = OPB ? BN : BK, BC = OPB ? BK : BN;
#pragma unroll 1
    for (int s = 0; s < STAGES && s < nk; s++) {
        const int k0 = (kb + s) * BK;
        const bool full = m0 + BM <= M && n0 + BN <= N && k0 + BK <= K;
        if (na)
            t8_tile2<AR, AC, T8_SA>(s0 + s * STB, A, lda, OPA ? k0 : m0, OPA ? m0 : k0, OPA ? K : M, OPA ? M : K,
                                    full, tid);
        if (nb)
            t8_tile2<BR, BC, T8_SB>(s0 + s * STB + T8_AE * TC_ESZ, B, ldb, OPB ? n0 : k0, OPB ? k0 : n0,
                                    OPB ? N : K, OPB ? K : N, full, tid);
    }
}
#endif

__device__ __forceinline__ void t8_ldsm_x4(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2,
                                           unsigned &r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

__device__ __forceinline__ void t8_ldsm_x4_t(unsigned addr, unsigned &r0, unsigned &r1, unsigned &r2,
                                             unsigned &r3)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

__device__ __forceinline__ void t8_mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
#if TYPE == 2
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
#elif TYPE == 1
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
#else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
#endif
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// FP32 bits -> TF32 operand bits, rounded to nearest with ties to even (the rule of PATH 90's
// TFLOAT32 tensor maps). Below sm_90 (no cvt.rn to tf32) in integer operations on the magnitude
// bits: Inf stays Inf, a NaN becomes the canonical NaN.
__device__ __forceinline__ unsigned t8_tf32(unsigned x)
{
#if __CUDA_ARCH__ >= 900
    unsigned r;
    asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(__uint_as_float(x)));
    return r & 0xffffe000u;         // the PTX ISA leaves the 13 low bits of a .tf32 result unspecified
#else
    if ((x & 0x7f800000u) == 0x7f800000u)
        return (x & 0x007fffffu) ? 0x7fffe000u : x;
    return (x + 0xfffu + ((x >> 13) & 1u)) & 0xffffe000u;
#endif
}

// Loads the warp's A and B fragments of the mma K step at element kk of a stage. sa, sb: this lane's
// shared addresses of the ldmatrix forms, ag, bg: its elements of the element-by-element forms
// (TF32 where the stored layout is the fragment's transpose); t8_compute_stage sets them.
__device__ __forceinline__ void t8_frags(unsigned (&a)[T8_MI][4], unsigned (&b)[T8_NI][2], unsigned sa,
                                         unsigned sb, const tc_elem *ag, const tc_elem *bg, int kk)
{
#pragma unroll
    for (int mi = 0; mi < T8_MI; mi++) {
#if OPA && TYPE == 2
        // ldmatrix cannot transpose 32-bit data: a0..a3 = A[m+g][kk+t], A[m+g+8][kk+t], then kk+t+4
        const tc_elem *p = ag + kk * T8_SA + mi * 16;
        a[mi][0] = __float_as_uint(p[0]);
        a[mi][1] = __float_as_uint(p[8]);
        a[mi][2] = __float_as_uint(p[4 * T8_SA]);
        a[mi][3] = __float_as_uint(p[4 * T8_SA + 8]);
#elif OPA
        t8_ldsm_x4_t(sa + (unsigned)(kk * T8_SA + mi * 16) * TC_ESZ, a[mi][0], a[mi][1], a[mi][2], a[mi][3]);
#else
        t8_ldsm_x4(sa + (unsigned)(mi * 16 * T8_SA + kk) * TC_ESZ, a[mi][0], a[mi][1], a[mi][2], a[mi][3]);
#endif
#if TYPE == 2
#pragma unroll
        for (int j = 0; j < 4; j++)
            a[mi][j] = t8_tf32(a[mi][j]);
#endif
    }
#if OPB
    // the BN x BK tile holds B's fragments as they lie (row n, K pairs): plain ldmatrix
#pragma unroll
    for (int nj = 0; nj < T8_NI / 2; nj++) {
        t8_ldsm_x4(sb + (unsigned)(nj * 16 * T8_SB + kk) * TC_ESZ, b[2 * nj][0], b[2 * nj][1], b[2 * nj + 1][0],
                   b[2 * nj + 1][1]);
#if TYPE == 2
        b[2 * nj][0] = t8_tf32(b[2 * nj][0]);
        b[2 * nj][1] = t8_tf32(b[2 * nj][1]);
        b[2 * nj + 1][0] = t8_tf32(b[2 * nj + 1][0]);
        b[2 * nj + 1][1] = t8_tf32(b[2 * nj + 1][1]);
#endif
    }
#elif TYPE == 2
    // ldmatrix cannot transpose 32-bit data: b0 = B[kk+t][n+g], b1 = B[kk+t+4][n+g].
    const tc_elem *bp = bg + kk * T8_SB;
#pragma unroll
    for (int ni = 0; ni < T8_NI; ni++) {
        b[ni][0] = t8_tf32(__float_as_uint(bp[ni * 8]));
        b[ni][1] = t8_tf32(__float_as_uint(bp[ni * 8 + 4 * T8_SB]));
    }
#else
#pragma unroll
    for (int nj = 0; nj < T8_NI / 2; nj++)
        t8_ldsm_x4_t(sb + (unsigned)(kk * T8_SB + nj * 16) * TC_ESZ, b[2 * nj][0], b[2 * nj][1], b[2 * nj + 1][0],
                     b[2 * nj + 1][1]);
#endif
    (void)sa; (void)sb; (void)ag; (void)bg;
}

__device__ __forceinline__ void t8_mmas(float (&acc)[T8_MI][T8_NI][4], const unsigned (&a)[T8_MI][4],
                                        const unsigned (&b)[T8_NI][2])
{
#pragma unroll
    for (int mi = 0; mi < T8_MI; mi++)
#pragma unroll
        for (int ni = 0; ni < T8_NI; ni++)
            t8_mma(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
}

// One stage's math: the warp's MI x NI fragments over BK (DB, FRAGDB in t8_gemm: step kk+1's fragments are
// loaded before step kk's mma). st: the stage's shared address, sg: the same as a pointer.
// ldmatrix x4 takes four 8x8 matrices, lanes 8q..8q+7 addressing matrix q's rows, in fragment
// register order: A (16 x k16; TF32 k8) from m rows (OPA 0: lane row 0..15, second K half at
// +16 bytes) or from K rows (OPA 1, .trans: K row (l & 7) + 8 (l >> 4), M column 8 ((l >> 3) & 1));
// B (k16 x two n8) from K rows (OPB 0, .trans: K row 0..15, second n8 at +8 elements) or from n
// rows (OPB 1: n row (l & 7) + 8 (l >> 4), second K half at +16 bytes).
template <int DB>
__device__ __forceinline__ void t8_compute_stage(float (&acc)[T8_MI][T8_NI][4], unsigned st, int wm, int wn,
                                                 int lane, const tc_elem *sg)
{
    const int g = lane >> 2, t = lane & 3;
#if OPA
    const unsigned sa = st + (unsigned)(((lane & 7) + ((lane >> 4) << 3)) * T8_SA + wm * T8_WTM +
                                        ((lane >> 3) & 1) * 8) * TC_ESZ;
#else
    const unsigned sa = st + (unsigned)((wm * T8_WTM + (lane & 15)) * T8_SA) * TC_ESZ + (lane >> 4) * 16;
#endif
#if OPB
    const unsigned sb = st + (unsigned)(T8_AE + (wn * T8_WTN + (lane & 7) + ((lane >> 4) << 3)) * T8_SB) * TC_ESZ +
                        ((lane >> 3) & 1) * 16;
#else
    const unsigned sb = st + (unsigned)(T8_AE + (lane & 15) * T8_SB + wn * T8_WTN) * TC_ESZ + (lane >> 4) * 16;
#endif
    const tc_elem *ag = sg + t * T8_SA + wm * T8_WTM + g;           // OPA 1 TF32: A[.][kk+t] of row g
    const tc_elem *bg = sg + T8_AE + t * T8_SB + wn * T8_WTN + g;   // OPB 0 TF32: B[kk+t][.] of column g
    if constexpr (DB) {
        unsigned a[2][T8_MI][4], b[2][T8_NI][2];
        t8_frags(a[0], b[0], sa, sb, ag, bg, 0);
#pragma unroll
        for (int ks = 0; ks < BK / T8_KS; ks++) {
            if (ks + 1 < BK / T8_KS)
                t8_frags(a[(ks + 1) & 1], b[(ks + 1) & 1], sa, sb, ag, bg, (ks + 1) * T8_KS);
            t8_mmas(acc, a[ks & 1], b[ks & 1]);
        }
    } else {
#pragma unroll
        for (int kk = 0; kk < BK; kk += T8_KS) {
            unsigned a[T8_MI][4], b[T8_NI][2];
            t8_frags(a, b, sa, sb, ag, bg, kk);
            t8_mmas(acc, a, b);
        }
    }
}

// Block -> (tile row, tile column), RASTER order with GROUP-wide swizzle.
__device__ __forceinline__ void t8_tile(int id, int tm, int tn, int &mt, int &nt)
{
#if RASTER == 0
    const int major = tm, minor = tn;
#else
    const int major = tn, minor = tm;
#endif
    const int gsize = GROUP * minor, grp = id / gsize, first = grp * GROUP;
    const int gh = major - first < GROUP ? major - first : GROUP;
    const int in = id - grp * gsize;
    const int a = first + in % gh, b = in / gh;
#if RASTER == 0
    mt = a; nt = b;
#else
    mt = b; nt = a;
#endif
}

// Stores up to two adjacent outputs (row r, columns c, c+1) with alpha/beta; guarded.
__device__ __forceinline__ void t8_store2(tc_elem *__restrict__ C, long long ldc, int M, int N, int r, int c,
                                          float v0, float v1, float alpha, float beta, bool pair_ok TC_EPI_PARAM)
{
#if EPI
    const int m = M, n = N;     // TC_EPI's bounds
#endif
    if (r >= M || c >= N)
        return;
    tc_elem *p = C + (long long)r * ldc + c;
    v0 *= alpha;
    v1 *= alpha;
    if (VEC >= 2 && pair_ok && c + 1 < N) {
#if TYPE == 2
        float2 o;
        if (beta != 0.0f) {
            float2 x = *(const float2 *)p;
            v0 += beta * x.x;
            v1 += beta * x.y;
        }
        o.x = TC_EPI(v0, r, c);
        o.y = TC_EPI(v1, r, c + 1);
        *(float2 *)p = o;
#else
        if (beta != 0.0f) {
            unsigned x = *(const unsigned *)p;
            v0 += beta * tc_to_f32((tc_elem)(x & 0xffffu));
            v1 += beta * tc_to_f32((tc_elem)(x >> 16));
        }
        *(unsigned *)p = (unsigned)tc_from_f32(TC_EPI(v0, r, c)) | ((unsigned)tc_from_f32(TC_EPI(v1, r, c + 1)) << 16);
#endif
        return;
    }
    if (beta != 0.0f)
        v0 += beta * tc_to_f32(p[0]);
    p[0] = tc_from_f32(TC_EPI(v0, r, c));
    if (c + 1 < N) {
        if (beta != 0.0f)
            v1 += beta * tc_to_f32(p[1]);
        p[1] = tc_from_f32(TC_EPI(v1, r, c + 1));
    }
}

#if VEC >= 4
// The staged tile's rows (se, alpha applied) into C with beta and the fused epilogue: CPR chunks
// of VEC elements per row, consecutive threads on consecutive chunks; AL: C and ldc VEC-aligned
// (CPR = BN / VEC), else each row's chunks shifted left by its start's misalignment (CPR one
// more). Both compile-time, so a chunk's row and column take no division at run time.
template <int CPR, bool AL>
__device__ __forceinline__ void t8_store_staged(const float *se, int tid, tc_elem *__restrict__ C, long long ldc,
                                                int M, int N, int m0, int n0, float beta TC_EPI_PARAM)
{
#if EPI
    const int m = M, n = N;     // TC_EPI's bounds
#endif
    const int n_end = min(N, n0 + BN);
#pragma unroll 4
    for (int c = tid; c < BM * CPR; c += T8_NT) {
        const int r = c / CPR, gr = m0 + r;
        if (gr >= M)
            continue;
        const int a = AL ? 0 : (int)(((unsigned long long)(C + (long long)gr * ldc + n0) /
                                          TC_ESZ) % VEC);
        const int gc = n0 + (c % CPR) * VEC - a;   // first column of the chunk (maybe < n0)
        if (gc >= n_end)
            continue;
        const float *s = se + r * T8_SE + (gc - n0);
        tc_elem *p = C + (long long)gr * ldc + gc;
        const bool vok = gc >= n0 && gc + VEC <= n_end;
        if (vok) {
            float v[VEC];
#pragma unroll
            for (int j = 0; j < VEC; j++)
                v[j] = s[j];
#if TYPE == 2
            if (beta != 0.0f) {
                float4 x = *(const float4 *)p;
                v[0] += beta * x.x; v[1] += beta * x.y; v[2] += beta * x.z; v[3] += beta * x.w;
            }
#if EPI
#pragma unroll
            for (int j = 0; j < VEC; j++)
                v[j] = TC_EPI(v[j], gr, gc + j);
#endif
            *(float4 *)p = make_float4(v[0], v[1], v[2], v[3]);
#else
            unsigned w[VEC / 2];
            if (beta != 0.0f) {
                if (VEC == 8) {
                    uint4 x = *(const uint4 *)p;
                    w[0] = x.x; w[1] = x.y; w[VEC / 2 - 2] = x.z; w[VEC / 2 - 1] = x.w;
                } else {
                    uint2 x = *(const uint2 *)p;
                    w[0] = x.x; w[VEC / 2 - 1] = x.y;
                }
#pragma unroll
                for (int j = 0; j < VEC / 2; j++) {
                    v[2 * j] += beta * tc_to_f32((tc_elem)(w[j] & 0xffffu));
                    v[2 * j + 1] += beta * tc_to_f32((tc_elem)(w[j] >> 16));
                }
            }
#if EPI
#pragma unroll
            for (int j = 0; j < VEC; j++)
                v[j] = TC_EPI(v[j], gr, gc + j);
#endif
#pragma unroll
            for (int j = 0; j < VEC / 2; j++)
                w[j] = (unsigned)tc_from_f32(v[2 * j]) | ((unsigned)tc_from_f32(v[2 * j + 1]) << 16);
            if (VEC == 8)
                *(uint4 *)p = make_uint4(w[0], w[1], w[VEC / 2 - 2], w[VEC / 2 - 1]);
            else
                *(uint2 *)p = make_uint2(w[0], w[VEC / 2 - 1]);
#endif
        } else {
            for (int j = 0; j < VEC; j++) {
                if (gc + j < n0 || gc + j >= n_end)
                    continue;
                float x = s[j];
                if (beta != 0.0f)
                    x += beta * tc_to_f32(p[j]);
                p[j] = tc_from_f32(TC_EPI(x, gr, gc + j));
            }
        }
    }
}

// Staged epilogue (VEC 4, 8): alpha*acc goes to shared memory, then each thread writes VEC
// contiguous outputs of a row with one vector access, aligned in memory whatever C and ldc
// (element stores only at a row's partial chunks).
__device__ __forceinline__ void t8_epilogue_staged(const float (&acc)[T8_MI][T8_NI][4], float *se, int wm,
                                                   int wn, int lane, int tid, tc_elem *__restrict__ C,
                                                   long long ldc, int M, int N, int m0, int n0, float alpha,
                                                   float beta TC_EPI_PARAM)
{
    const int g = lane >> 2, t = lane & 3;
    t8_wait<0>();
    __syncthreads();
#pragma unroll
    for (int mi = 0; mi < T8_MI; mi++)
#pragma unroll
        for (int ni = 0; ni < T8_NI; ni++) {
            float *p = se + (wm * T8_WTM + mi * 16 + g) * T8_SE + wn * T8_WTN + ni * 8 + 2 * t;
            *(float2 *)p = make_float2(alpha * acc[mi][ni][0], alpha * acc[mi][ni][1]);
            *(float2 *)(p + 8 * T8_SE) = make_float2(alpha * acc[mi][ni][2], alpha * acc[mi][ni][3]);
        }
    __syncthreads();
    // Each row's stores are aligned to VEC elements in memory: where C or ldc leaves a row
    // start misaligned by a elements, a row takes CPR + 1 chunks shifted left by a, the first
    // and last partial (element stores for the part inside the tile), the rest whole vectors.
    // Without it a misaligned C stored every element alone, strided across the warp (a short-K
    // call with an odd n ran at 0.36-0.5x cuBLAS on that).
    if (((unsigned long long)C % (VEC * TC_ESZ)) == 0 && ldc % VEC == 0)
        t8_store_staged<BN / VEC, true>(se, tid, C, ldc, M, N, m0, n0, beta TC_EPI_ARG);
    else
        t8_store_staged<BN / VEC + 1, false>(se, tid, C, ldc, M, N, m0, n0, beta TC_EPI_ARG);
}
#endif

// The GEMM (t8_gemm and t8_gemm_short below): grid (tiles_m * tiles_n, products, SPLITK), T8_NT
// threads, T8_SMEM bytes of dynamic shared memory, or fewer where K is short: the ring is touched
// only in its first min(STAGES, K tiles) stages (a stage s is loaded only where s < nk), so the
// host passes max(that many stages, the staged epilogue) (tcgemm_run.c's t8_smem_used). Grid y
// walks the products of a strided batch: A, B and C advance by sa, sb and sc elements per product
// (one product with SPLITK > 1). SPLITK > 1 writes the raw FP32 partial sums of slice z to
// ws + z*M*N (row-major, ld N); tc_splitk_reduce then applies alpha and beta.
// narrow: the load widths of an operand less aligned than LOADW (t8_load_stage; the host's t8_run);
// width 2 only where a block walks at most STAGES K tiles (t8_prefill).
// C, ws: device memory; no failure path.
#define T8_GEMM_PARAMS                                                                              \
    int M, int N, int K, float alpha, const tc_elem *__restrict__ A, long long lda,                 \
        const tc_elem *__restrict__ B, long long ldb, float beta, tc_elem *__restrict__ C,          \
        long long ldc, float *__restrict__ ws, long long sa, long long sb, long long sc, int narrow \
        TC_EPI_PARAM
template <int DB>     // DB: FRAGDB (t8_compute_stage)
__device__ __forceinline__ void t8_gemm_body(T8_GEMM_PARAMS)
{
    extern __shared__ __align__(128) unsigned char t8_smem[];
    A += blockIdx.y * sa;
    B += blockIdx.y * sb;
    C += blockIdx.y * sc;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int tm = TC_CDIV(M, BM), tn = TC_CDIV(N, BN);
    int mt, nt;
    t8_tile(blockIdx.x, tm, tn, mt, nt);
    const int m0 = mt * BM, n0 = nt * BN;

    const int nkt = TC_CDIV(K, BK) - TC_FAULT;
    int kb = 0, ke = nkt;
    if (SPLITK > 1) {
        const int per = TC_CDIV(nkt, SPLITK);
        kb = blockIdx.z * per;
        ke = kb + per < nkt ? kb + per : nkt;
        if (kb > ke)
            kb = ke;
    }
    const int nk = ke - kb;

    float acc[T8_MI][T8_NI][4];
#pragma unroll
    for (int mi = 0; mi < T8_MI; mi++)
#pragma unroll
        for (int ni = 0; ni < T8_NI; ni++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                acc[mi][ni][j] = 0.0f;

    const unsigned s0 = (unsigned)__cvta_generic_to_shared(t8_smem);
    constexpr unsigned STB = T8_STAGE_ELEMS * TC_ESZ;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk)
            t8_load_stage(s0 + s * STB, m0, n0, kb + s, M, N, K, A, lda, B, ldb, tid, narrow);
        t8_commit();
    }
#if LOADW > 2 && TYPE != 2
    if ((narrow & 0xff) == 2 || (narrow >> 8) == 2)
        t8_prefill(s0, m0, n0, kb, nk, M, N, K, A, lda, B, ldb, tid, narrow);
#endif
    int slot = 0, wslot = STAGES - 1;
    for (int it = 0; it < nk; it++) {
        t8_wait<STAGES - 2>();
        __syncthreads();
        if (it + STAGES - 1 < nk)
            t8_load_stage(s0 + wslot * STB, m0, n0, kb + it + STAGES - 1, M, N, K, A, lda, B, ldb, tid,
                          narrow);
        t8_commit();
        t8_compute_stage<DB>(acc, s0 + slot * STB, wm, wn, lane, (const tc_elem *)(t8_smem + slot * STB));
        slot = slot + 1 == STAGES ? 0 : slot + 1;
        wslot = wslot + 1 == STAGES ? 0 : wslot + 1;
    }

    const int g = lane >> 2, t = lane & 3;
    const int r0 = m0 + wm * T8_WTM + g, c0 = n0 + wn * T8_WTN + 2 * t;
    if (SPLITK > 1) {
        float *w = ws + (long long)blockIdx.z * M * N;
        const bool pok = (N & 1) == 0;
#pragma unroll
        for (int mi = 0; mi < T8_MI; mi++)
#pragma unroll
            for (int ni = 0; ni < T8_NI; ni++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int r = r0 + mi * 16 + 8 * h, c = c0 + ni * 8;
                    if (r < M && c < N) {
                        float *p = w + (long long)r * N + c;
                        if (pok)
                            *(float2 *)p = make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
                        else {
                            p[0] = acc[mi][ni][2 * h];
                            if (c + 1 < N)
                                p[1] = acc[mi][ni][2 * h + 1];
                        }
                    }
                }
        return;
    }
#if VEC >= 4
    t8_epilogue_staged(acc, (float *)t8_smem, wm, wn, lane, tid, C, ldc, M, N, m0, n0, alpha, beta TC_EPI_ARG);
#else
    const bool pok = ((unsigned long long)C % (2 * TC_ESZ)) == 0 && (ldc & 1) == 0;
#pragma unroll
    for (int mi = 0; mi < T8_MI; mi++)
#pragma unroll
        for (int ni = 0; ni < T8_NI; ni++) {
            const int r = r0 + mi * 16, c = c0 + ni * 8;
            t8_store2(C, ldc, M, N, r, c, acc[mi][ni][0], acc[mi][ni][1], alpha, beta, pok TC_EPI_ARG);
            t8_store2(C, ldc, M, N, r + 8, c, acc[mi][ni][2], acc[mi][ni][3], alpha, beta, pok TC_EPI_ARG);
        }
#endif
}

extern "C" __global__ void __launch_bounds__(T8_NT)
t8_gemm(T8_GEMM_PARAMS)
{
    t8_gemm_body<FRAGDB>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws, sa, sb, sc, narrow TC_EPI_ARG);
}

// Short K (the host's rule, tcgemm_run.c's t8_short_entry: SPLITK 1, K <= 128, at most STAGES K
// tiles): the main loop is one or a few stages and the block's work is its C tile's store, so the
// time goes to latency (operand loads, then the staged store) that only more resident blocks
// hide. t8_gemm leaves the compiler free with registers (a 64 x 64 tile of four warps: 96-160 per
// thread by ptxas 13.0, 3-4 blocks per SM) and its ring sizes shared memory for deep K;
// t8_gemm_short is the same kernel bounded to T8_SHORT_MINB blocks per SM (64 x 64: 6, at most 80
// registers; OPB 1 with LOADW 16 spills 80-88 bytes, others 0-28), launched with the shared
// memory of the stages it uses (64 x 64 x 32 16-bit: the 18 KiB epilogue staging, 11 blocks).
// T8_SHORT_MINB: the blocks whose registers (65536 per SM) leave each thread its accumulators and
// 45 more; compiled only where that is at least 4, i.e. warp tiles of at most 32 x 32 (the 64 x 64
// rows); the host computes the same (t8_short_minb).
#define T8_ACC_REGS (T8_MI * T8_NI * 4)             // FP32 accumulators per thread
#define T8_SHORT_MINB (65536 / (T8_NT * (T8_ACC_REGS + 45)))
#if T8_SHORT_MINB >= 4
extern "C" __global__ void __launch_bounds__(T8_NT, T8_SHORT_MINB)
t8_gemm_short(T8_GEMM_PARAMS)
{
    t8_gemm_body<FRAGDB>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws, sa, sb, sc, narrow TC_EPI_ARG);
}
#endif

// ======================= end PATH 80 =======================
#endif
