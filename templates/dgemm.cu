// dgemm.cu: the dgemm family, C = alpha * op(A) * op(B) + beta * C in double precision
// (row-major, op N or T as compile-time loader layouts, strided batches, any sizes and leading
// dimensions). Two paths:
// PATH 1, DMMA: FP64 tensor cores through mma.sync (m8n8k4 on sm_80+; the Hopper shapes
//   m16n8k4 / m16n8k8 / m16n8k16 on sm_90+), a STAGES-deep cp.async ring of padded
//   shared-memory tiles (pads per DG_PADK / DG_PADMN: conflict-free fragment loads), K permuted
//   inside each mma so K-major fragments load 16 bytes at a time, FRAG 2 double-buffered
//   fragments (CUTLASS's multistage order), LDR 1/2 per-thread copy plans with the next tile's
//   copies spread over the mma steps (LDR 3: running pointers; LDR 4: a block-uniform
//   base and a fixed 32-bit per-thread offset), SA 1/2 shared addresses as
//   per-thread byte bases with immediate offsets (SA 2: 8-byte loads in the PTX depth order,
//   straight into the DMMA's operand registers), MINB blocks per SM in the launch bounds,
//   PERS 1 blocks walking several products (the next one's first copies in flight while the
//   last one's results are stored), TMA 1/2 (sm_90+) stage tiles copied as TMA boxes by one
//   thread into the same padded layout (no per-thread copy state), GROUP-swizzled tile order, optional split-K (double partials, summed in slice order by
//   dg_splitk_reduce). bench/notes_dgemm.md has the sweeps.
//   Operands need 16-byte aligned bases and even leading dimensions; the host packs others
//   first with dg_pack, but for an operand whose copies are 8 bytes each (CP8: any leading
//   dimension, read in place). Edges: cp.async zero-fills the bytes past the matrix (src-size).
// PATH 0, FFMA64: a SIMT register-tiled kernel (TM x TN doubles per thread, guarded element
//   loads through shared memory): correct on every device, alignment and shape.
// Kernels: dg_mma, dg_ffma, dg_pack, dg_splitk_reduce. blockIdx.z walks batch x SPLITK slices
// (grid-stride when there are more than 65535).

// ---- tunables (templates/dgemm.c passes every one as -D) ----
#ifndef PATH
#define PATH 1          // 1 DMMA (FP64 tensor cores, sm_80+), 0 FFMA64 (SIMT, every device)
#endif
#ifndef OPA
#define OPA 0           // op(A): 0 N (A is m x k, row-major), 1 T (A is stored k x m)
#endif
#ifndef OPB
#define OPB 0           // op(B): 0 N (B is k x n, row-major), 1 T (B is stored n x k)
#endif
#ifndef MMA
#define MMA 1688        // PATH 1: mma shape 16816 (m16n8k16), 1688 (m16n8k8), 1684 (m16n8k4): sm_90+; 884 (m8n8k4): sm_80+
#endif
#ifndef BM
#define BM 128          // block tile rows of C (32..256)
#endif
#ifndef BN
#define BN 128          // block tile columns of C (32..256)
#endif
#ifndef BK
#define BK 16           // K depth of one shared-memory stage (8, 16, 32)
#endif
#ifndef WARPS_M
#define WARPS_M 2       // PATH 1: warps along M (BM / WARPS_M rows per warp, a multiple of the mma's M)
#endif
#ifndef WARPS_N
#define WARPS_N 4       // PATH 1: warps along N (BN / WARPS_N columns per warp, a multiple of 8)
#endif
#ifndef STAGES
#define STAGES 4        // PATH 1: cp.async pipeline depth (2..6)
#endif
#ifndef FRAG
#define FRAG 2          // PATH 1: 2 = the next mma step's fragments load during this step's mmas (double-buffered registers), 1 = load, then mma
#endif
#ifndef LDR
#define LDR 2           // PATH 1: 1 = per-thread copy plans made once per product (pointers, row masks), the next tile's copies spread over the mma steps; 2 = as 1, and blocks inside M and N copy with no bounds at all; 3 = as 2, but inner blocks copy through running pointers (one 64-bit add per 16-byte copy, block-uniform strides); 4 = as 3, addresses as a block-uniform base + a fixed 32-bit per-thread offset; 0 = every stage recomputes each copy's address and bounds, all at step 0
#endif
#ifndef UNR
#define UNR 0           // PATH 1: 1 = the K loop unrolled over the ring's STAGES slots (constant shared addresses), 0 = slots at run time
#endif
#ifndef SA
#define SA 0            // PATH 1: 1, 2 = shared addresses as per-thread 32-bit byte bases made once, ring slots as byte offsets (one add per stage), every fragment load an immediate offset (ld.shared; 2: 8-byte loads in the PTX depth order, DG_KPL 1); 0 = element indices scaled at each load
#endif
#ifndef MINB
#define MINB 1          // PATH 1: blocks per SM the kernel is compiled for (__launch_bounds__ minimum: the register cap is 64K / (MINB x threads))
#endif
#ifndef PERS
#define PERS 0          // PATH 1: 1 = a block walks several products (the host launches about MINB blocks per SM), the next product's first copies issued before this product's results are stored
#endif
#ifndef TMA
#define TMA 0           // PATH 1 (sm_90+): 1 = each stage's A and B tiles are two TMA boxes (cp.async.bulk.tensor, issued by thread 0, completing on a per-slot mbarrier) in the padded layout (the box's inner extent is the padded row: the pad columns carry the next elements or zeros), every slot of the ring in flight; LDR's plans are unused; 2 = as 1, each warp releases a slot through a second ("empty") mbarrier instead of the block barrier per K tile, and thread 0 waits for all warps' releases before refilling it
#endif
#ifndef CP8
#define CP8 0           // PATH 1, TMA 0: bit 0 = A's cp.async copies 8 bytes each, bit 1 = B's (any leading dimension and 8-byte aligned base: the operand is read in place where 16-byte copies need it packed first); 0 = 16-byte copies of both
#endif
#ifndef TM
#define TM 8            // PATH 0: rows of a thread's register tile (4, 8)
#endif
#ifndef TN
#define TN 8            // PATH 0: columns of a thread's register tile (4, 8)
#endif
#ifndef GROUP
#define GROUP 8         // tile swizzle: this many tile rows walked together for L2 reuse (1 = off)
#endif
#ifndef SPLITK
#define SPLITK 1        // K slices: > 1 writes double partials, dg_splitk_reduce sums them in order
#endif
#ifndef DG_FAULT
#define DG_FAULT 0      // test only: 1 skips the last K tile of every product (a wrong kernel)
#endif

static_assert(PATH == 0 || PATH == 1, "PATH is 0 (FFMA64) or 1 (DMMA)");
static_assert(OPA == 0 || OPA == 1, "OPA is 0 (N) or 1 (T)");
static_assert(OPB == 0 || OPB == 1, "OPB is 0 (N) or 1 (T)");
static_assert(GROUP >= 1 && SPLITK >= 1, "GROUP and SPLITK >= 1");

#define DG_CDIV(a, b) (((a) + (b) - 1) / (b))

// The product's arguments, shared by both paths. Batch strides and leading dimensions in
// elements; A, B as stored (op T: transposed).
struct dg_args {
    int m, n, k, batch;
    const double *A, *B;
    double *C, *W;              // W: split-K partials, SPLITK * batch * m * n
    long long lda, ldb, ldc, sa, sb, sc;
    double alpha, beta;
    int vec;                    // 1: C rows allow 16-byte stores (C and ldc even-aligned)
};

// Block id -> (tile row, tile column), GROUP tile rows walked together (column by column).
__device__ __forceinline__ void dg_tile(int id, int tm, int tn, int &mt, int &nt)
{
    const int gsize = GROUP * tn, grp = id / gsize, first = grp * GROUP;
    const int gh = tm - first < GROUP ? tm - first : GROUP;
    const int in = id - grp * gsize;
    mt = first + in % gh;
    nt = in / gh;
}

// K tiles [kt0, kt1) of slice `slice` of a product with ktiles tiles of BK.
__device__ __forceinline__ void dg_slice(int ktiles, int slice, int &kt0, int &kt1)
{
    const int per = DG_CDIV(ktiles, SPLITK);
    kt0 = slice * per;
    kt1 = kt0 + per < ktiles ? kt0 + per : ktiles;
    if (kt0 > kt1)
        kt0 = kt1;
#if DG_FAULT
    if (kt1 == ktiles && kt1 > kt0)
        kt1--;
#endif
}

// Writes two adjacent results (row r, columns c and c + 1) of a product: C = alpha v + beta C,
// or the raw partials into the split-K workspace. Guarded by the matrix edges.
__device__ __forceinline__ void dg_store2(const dg_args &a, long long bz, int r, int c, double v0,
                                          double v1)
{
    if (r >= a.m || c >= a.n)
        return;
    const bool two = c + 1 < a.n;
    if (SPLITK > 1) {
        double *w = a.W + bz * (long long)a.m * a.n + (long long)r * a.n + c;
        w[0] = v0;
        if (two)
            w[1] = v1;
        return;
    }
    double *p = a.C + (bz * a.sc) + (long long)r * a.ldc + c;
    v0 *= a.alpha;
    v1 *= a.alpha;
    if (two && a.vec) {
        double2 o = make_double2(v0, v1);
        if (a.beta != 0.0) {
            const double2 old = *(const double2 *)p;
            o.x = fma(a.beta, old.x, o.x);
            o.y = fma(a.beta, old.y, o.y);
        }
        *(double2 *)p = o;
        return;
    }
    if (a.beta != 0.0) {
        v0 = fma(a.beta, p[0], v0);
        if (two)
            v1 = fma(a.beta, p[1], v1);
    }
    p[0] = v0;
    if (two)
        p[1] = v1;
}

#if PATH == 1
// ================= PATH 1: DMMA =================
#if MMA == 16816
#define DG_MM 16
#define DG_MK 16
#elif MMA == 1688
#define DG_MM 16
#define DG_MK 8
#elif MMA == 1684
#define DG_MM 16
#define DG_MK 4
#elif MMA == 884
#define DG_MM 8
#define DG_MK 4
#else
#error "MMA is 16816, 1688, 1684 or 884"
#endif
#define DG_THREADS (WARPS_M * WARPS_N * 32)
#define DG_WM (BM / WARPS_M)                    // warp tile rows
#define DG_WN (BN / WARPS_N)                    // warp tile columns
#define DG_MT (DG_WM / DG_MM)                   // mma tiles along M per warp
#define DG_NT (DG_WN / 8)                       // mma tiles along N per warp
#define DG_AR (DG_MM * DG_MK / 32)              // A registers per mma
#define DG_BR (DG_MK / 4)                       // B registers per mma
#define DG_CR (DG_MM / 4)                       // C registers per mma
// K is permuted inside each mma (the sum does not care, A and B agree): lane t holds the DG_KPL
// consecutive depths kk + t DG_KPL + v, v < DG_KPL, where the PTX layout names depths t + 4 v.
// So a K-major tile (rows of BK + pad doubles: A op N, B op T) gives each lane DG_KPL adjacent
// doubles (one 16-byte load for m16n8k8, two for m16n8k16), and an M/N-major tile ([BK][cols +
// pad]: A op T, B op N) one 8-byte load per slot. Pads make a warp's loads hit distinct banks
// per phase (8-byte loads: 16 lanes; 16-byte loads: 8 lanes) and keep rows 16-byte aligned:
// K-major rows are 4, 8, 2 mod 16 doubles for DG_KPL 1, 2, 4; M/N-major 4 mod 16 (DG_KPL 1)
// or 2 mod 8 (2; with DG_KPL 4 two lanes share a bank pair).
// SA 2 keeps the PTX order (DG_KPL 1: lane t, slot q at depth kk + t + 4 q, 8-byte loads that
// land in the mma's operand registers as they are: a 16-byte K-major load fills A slots 0 and 2,
// which the DMMA wants apart, so ptxas adds moves).
#define DG_KQ (DG_MK / 4)                       // depths per lane per mma
#define DG_KPL (SA == 2 ? 1 : DG_MK / 4)
#define DG_PADK (DG_KPL == 1 ? 4 : DG_KPL == 2 ? 8 : 2)
#define DG_PADMN (DG_KPL == 1 ? 4 : 2)
#define DG_ALD (OPA == 0 ? BK + DG_PADK : BM + DG_PADMN)
#define DG_BLD (OPB == 1 ? BK + DG_PADK : BN + DG_PADMN)
#define DG_ASZ (OPA == 0 ? BM * DG_ALD : BK * DG_ALD)
#define DG_BSZ (OPB == 1 ? BN * DG_BLD : BK * DG_BLD)
#define DG_KS (BK / DG_MK)                      // mma steps per stage
#define DG_STAGE (DG_ASZ + DG_BSZ)              // doubles per stage
#define DG_UN (UNR ? STAGES : 1)                // tiles per trip of the K loop
#define DG_SMEM_ALIGN (TMA ? 128 : 16)          // the ring's alignment (TMA boxes: 128 bytes)
#define DG_CWA (CP8 & 1 ? 1 : 2)                // doubles per cp.async copy of A (CP8)
#define DG_CWB (CP8 & 2 ? 1 : 2)                // ... of B

static_assert(BM % (WARPS_M * DG_MM) == 0 && BN % (WARPS_N * 8) == 0, "warp tiles split into mma tiles");
static_assert(BK % DG_MK == 0 && (FRAG == 1 || DG_KS >= 2) && (BK == 8 || BK == 16 || BK == 32),
              "BK 8, 16 or 32, a multiple of the mma's K (FRAG 2: at least two mma steps)");
static_assert(FRAG == 1 || FRAG == 2, "FRAG 1 or 2");
static_assert(UNR == 0 || UNR == 1, "UNR 0 or 1");
static_assert(SA == 0 || ((SA == 1 || SA == 2) && LDR >= 1), "SA 0, or 1, 2 with LDR 1..4");
static_assert(MINB >= 1 && MINB <= 4, "MINB 1..4");
static_assert(PERS == 0 || PERS == 1, "PERS 0 or 1");
static_assert(TMA == 0 || ((TMA == 1 || TMA == 2) && SA >= 1 && UNR == 0), "TMA 0, or 1, 2 with SA 1, 2 and UNR 0");
static_assert(LDR >= 0 && LDR <= 4, "LDR 0..4");
static_assert(CP8 >= 0 && CP8 <= 3 && (CP8 == 0 || TMA == 0), "CP8 0..3, nonzero only with TMA 0");
static_assert(STAGES >= 2 && STAGES <= 6, "STAGES 2..6");
static_assert(DG_MT * DG_NT * DG_CR <= 128, "at most 128 accumulators per thread");

__device__ __forceinline__ unsigned dg_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// 16 bytes (two doubles) from src to shared dst; only `bytes` (0, 8, 16) are read, the rest of
// the 16 is zero-filled.
__device__ __forceinline__ void dg_cp16(unsigned dst, const double *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(src), "r"(bytes));
}

// CW doubles (CW 2: 16 bytes, 16-byte aligned src; CW 1: 8 bytes) from src to shared dst; only
// `bytes` (0, 8, 16) are read, the rest is zero-filled. cp.async copies 16 bytes through L2
// only (.cg), 8 bytes through L1 (.ca: the only form of that size).
template <int CW>
__device__ __forceinline__ void dg_cp(unsigned dst, const double *src, int bytes)
{
    if (CW == 2)
        dg_cp16(dst, src, bytes);
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" :: "r"(dst), "l"(src), "r"(bytes));
}

// A whole copy of CW doubles (no bounds) from src to shared dst.
template <int CW>
__device__ __forceinline__ void dg_cpf(unsigned dst, const void *src)
{
    if (CW == 2)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(src));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" :: "r"(dst), "l"(src));
}

// The bytes of a copy of CW doubles with `left` columns of the matrix left (0 past it).
template <int CW>
__device__ __forceinline__ int dg_cp_bytes(int left)
{
    return CW == 2 ? (left >= 2 ? 16 : left == 1 ? 8 : 0) : (left >= 1 ? 8 : 0);
}

// Copies the R x CC tile (CC doubles contiguous per row) of g (leading dimension ld) at (r0, c0)
// into shared s (row stride SLD doubles), CW doubles a copy; rows >= rmax and columns >= cmax
// read as zero.
template <int R, int CC, int SLD, int CW>
__device__ __forceinline__ void dg_load_tile(double *s, const double *g, long long ld, int r0, int c0,
                                             int rmax, int cmax)
{
    constexpr int CPR = CC / CW, TOTAL = R * CPR;
#pragma unroll
    for (int i = threadIdx.x; i < TOTAL; i += DG_THREADS) {
        const int r = i / CPR, c = (i - r * CPR) * CW;
        const int gr = r0 + r, gc = c0 + c;
        int left = cmax - gc;
        int bytes = gr < rmax ? dg_cp_bytes<CW>(left) : 0;
        const double *src = bytes ? g + (long long)gr * ld + gc : g;
        dg_cp<CW>(dg_smem_addr(s + r * SLD + c), src, bytes);
    }
}

// The stage of K tile kt: A and B tiles into s.
__device__ __forceinline__ void dg_load_stage(double *s, const double *A, const double *B,
                                              const dg_args &a, int m0, int n0, int kt)
{
    const int k0 = kt * BK;
#if OPA == 0
    dg_load_tile<BM, BK, DG_ALD, DG_CWA>(s, A, a.lda, m0, k0, a.m, a.k);
#else
    dg_load_tile<BK, BM, DG_ALD, DG_CWA>(s, A, a.lda, k0, m0, a.k, a.m);
#endif
#if OPB == 0
    dg_load_tile<BK, BN, DG_BLD, DG_CWB>(s + DG_ASZ, B, a.ldb, k0, n0, a.k, a.n);
#else
    dg_load_tile<BN, BK, DG_BLD, DG_CWB>(s + DG_ASZ, B, a.ldb, n0, k0, a.n, a.k);
#endif
}

// LDR 1: a thread's copy plan for one operand tile of R rows x CC contiguous doubles (16-byte
// chunks; CP8: 8-byte ones, one column): its chunk u is row r + u * RS, columns c, c + 1 of the tile, the same for every K
// tile of the product. Bounds that do not move with K are decided once per product: `mask`
// (bit u: the row is inside; K-major tiles, whose rows are M or N) or `bytes` (16, 8, 0: the
// columns inside; M/N-major tiles). Full K tiles then need one pointer add and one predicate
// per copy; the last partial K tile (if any) takes dg_load_tile.
// CP8: the copy width (doubles per copy, W) is a template parameter only where an operand copies
// 8 bytes; with CP8 0 the plan keeps its type and members (dg_plan<R, CC>: CPR, RS, N, which
// NVRTC emits as globals), so those kernels compile to the bytes they did before CP8.
#if CP8
#define DG_PLAN_HEAD template <int R, int CC, int CW>
#define DG_PLAN(R, CC, CW) dg_plan<R, CC, CW>
#define DG_PLAN_CW CW
#else
#define DG_PLAN_HEAD template <int R, int CC>
#define DG_PLAN(R, CC, CW) dg_plan<R, CC>
#define DG_PLAN_CW 2
#endif
DG_PLAN_HEAD
struct dg_plan {
    enum { W = DG_PLAN_CW };            // doubles per copy (2; CP8: 1 for its operands)
    static constexpr int CPR = CC / W, RS = DG_THREADS / CPR, N = R * CPR / DG_THREADS;
    static_assert(DG_THREADS % CPR == 0 && (R * CPR) % DG_THREADS == 0,
                  "LDR 1: the tile's 16-byte chunks split evenly over the threads");
    const double *g;            // chunk 0 of the thread at the product's first K tile
    unsigned mask;
    int bytes;

    // kmajor: rows are M/N (bounded by rmax), columns K; else rows K, columns M/N (cmax).
    __device__ __forceinline__ void init(const double *base, long long ld, int r0, int c0,
                                         int rmax, int cmax, bool kmajor)
    {
        const int r = threadIdx.x / CPR, c = (threadIdx.x % CPR) * W;
        g = base + (long long)(r0 + r) * ld + (c0 + c);
        mask = 0;
#pragma unroll
        for (int u = 0; u < N; u++)
            mask |= (!kmajor || r0 + r + u * RS < rmax ? 1u : 0u) << u;
        const int left = kmajor ? 2 : cmax - (c0 + c);
        bytes = dg_cp_bytes<W>(left);
    }

    // LDR 2, a block whose tile lies inside M and N: part `part` of `parts` of a full K tile
    // with no bounds at all (plain 16-byte copies; chunk u at p + u * RS * ld).
    template <int SLD>
    __device__ __forceinline__ void copy_inner(unsigned sbase, long long adv, long long ld, int part,
                                               int parts) const
    {
        const double *p = g + adv;
        const long long rs = (long long)RS * ld;
        const unsigned so = sbase + (unsigned)(((threadIdx.x / CPR) * SLD + (threadIdx.x % CPR) * W) * 8);
#pragma unroll
        for (int u = 0; u < N; u++)
            if ((u * parts) / N == part)
                dg_cpf<W>(so + (unsigned)(u * RS * SLD * 8), p + u * rs);
    }

    // Part `part` of `parts` of a full K tile: g advanced by `adv` elements (ld: the operand's
    // leading dimension), into the stage tile at shared byte address sbase (row stride SLD).
    template <int SLD>
    __device__ __forceinline__ void copy(unsigned sbase, long long adv, long long ld, int part,
                                         int parts) const
    {
        const double *p = g + adv;
        const unsigned so = sbase + (unsigned)(((threadIdx.x / CPR) * SLD + (threadIdx.x % CPR) * W) * 8);
#pragma unroll
        for (int u = 0; u < N; u++)
            if ((u * parts) / N == part) {
                const int nb = (mask >> u) & 1 ? bytes : 0;
                dg_cp<W>(so + (unsigned)(u * RS * SLD * 8), nb ? p + (long long)(u * RS) * ld : g, nb);
            }
    }
};

#if OPA == 0
typedef DG_PLAN(BM, BK, DG_CWA) dg_plan_a;
#else
typedef DG_PLAN(BK, BM, DG_CWA) dg_plan_a;
#endif
#if OPB == 0
typedef DG_PLAN(BK, BN, DG_CWB) dg_plan_b;
#else
typedef DG_PLAN(BN, BK, DG_CWB) dg_plan_b;
#endif

// LDR 3, blocks whose tile lies inside M and N: one operand's copies through a running pointer.
// q is the global address of the thread's next 16-byte chunk: chunk u + 1 lies rs bytes past
// chunk u (RS rows further), and after the tile's last chunk q jumps to the next K tile's first
// (delta). Copies walk the chunks in order, however they are split over the mma steps, so each
// costs one LDGSTS and one 64-bit add; the strides are block-uniform (uniform registers).
#if LDR == 4
// LDR 4: as LDR 3, the address split into a block-uniform part and a fixed per-thread 32-bit
// part: base (the tile's origin at the next K tile, advanced by adv after the tile's last
// chunk) + off (the thread's chunk 0, bytes) + u rs (chunk u). Only off and so are per-thread
// state; base, rs and adv can live in uniform registers. The host keeps blocks whose tiles span
// 2^32 bytes or more (R rows x ld) on the LDR 1 plans (dg_mma's inner test).
template <class P, int SLD>
struct dg_run {
    const char *base;
    long long adv;
    unsigned off, rs, so;

    __device__ __forceinline__ void init(const double *b0, long long ld, int r0, int c0,
                                         bool kmajor)
    {
        const int r = threadIdx.x / P::CPR, c = (threadIdx.x % P::CPR) * P::W;
        base = (const char *)(b0 + (long long)r0 * ld + c0);
        off = (unsigned)(((long long)r * ld + c) * 8);
        rs = (unsigned)(P::RS * ld * 8);
        adv = kmajor ? (long long)BK * 8 : (long long)BK * ld * 8;
        so = (unsigned)((r * SLD + c) * 8);
    }

    __device__ __forceinline__ void copy(unsigned sbase, int part, int parts)
    {
#pragma unroll
        for (int u = 0; u < P::N; u++)
            if ((u * parts) / P::N == part) {
                dg_cpf<P::W>(sbase + so + (unsigned)(u * P::RS * SLD * 8),
                               base + (off + (unsigned)u * rs));
                if (u + 1 == P::N)
                    base += adv;
            }
    }
};
#else
template <class P, int SLD>
struct dg_run {
    const char *q;
    long long rs, delta;
    unsigned so;                // the thread's chunk 0 in the stage tile, bytes

    __device__ __forceinline__ void init(const double *base, long long ld, int r0, int c0,
                                         bool kmajor)
    {
        const int r = threadIdx.x / P::CPR, c = (threadIdx.x % P::CPR) * P::W;
        q = (const char *)(base + (long long)(r0 + r) * ld + (c0 + c));
        rs = (long long)P::RS * ld * 8;
        delta = (kmajor ? (long long)BK * 8 : (long long)BK * ld * 8) - (long long)P::N * rs;
        so = (unsigned)((r * SLD + c) * 8);
    }

    // part `part` of `parts` of a full K tile into the stage at shared byte address sbase
    __device__ __forceinline__ void copy(unsigned sbase, int part, int parts)
    {
#pragma unroll
        for (int u = 0; u < P::N; u++)
            if ((u * parts) / P::N == part) {
                dg_cpf<P::W>(sbase + so + (unsigned)(u * P::RS * SLD * 8), q);
                q += u + 1 < P::N ? rs : rs + delta;
            }
    }
};
#endif

// LDR 1: part `part` of `parts` of the stage of K tile kt (product's first tile kt0) into the
// stage at shared byte address sbase; a partial last K tile goes whole at part 0.
template <bool INNER>
__device__ __forceinline__ void dg_load_part(unsigned sbase, const dg_plan_a &pa,
                                             const dg_plan_b &pb, const double *A, const double *B,
                                             const dg_args &a, int m0, int n0, int kt, int kt0,
                                             int part, int parts)
{
    if ((kt + 1) * BK <= a.k) {
        const long long d = (long long)(kt - kt0) * BK;
        if (INNER) {
            pa.copy_inner<DG_ALD>(sbase, OPA == 0 ? d : d * a.lda, a.lda, part, parts);
            pb.copy_inner<DG_BLD>(sbase + DG_ASZ * 8, OPB == 1 ? d : d * a.ldb, a.ldb, part, parts);
        } else {
            pa.copy<DG_ALD>(sbase, OPA == 0 ? d : d * a.lda, a.lda, part, parts);
            pb.copy<DG_BLD>(sbase + DG_ASZ * 8, OPB == 1 ? d : d * a.ldb, a.ldb, part, parts);
        }
    } else if (part == 0) {
        double *s = (double *)__cvta_shared_to_generic(sbase);
        dg_load_stage(s, A, B, a, m0, n0, kt);
    }
}

// DG_KPL doubles at p (8 * DG_KPL-byte aligned) into v.
__device__ __forceinline__ void dg_ldk(const double *p, double *v)
{
#if DG_KPL == 1
    v[0] = p[0];
#else
#pragma unroll
    for (int i = 0; i < DG_KPL; i += 2) {
        const double2 x = *(const double2 *)(p + i);
        v[i] = x.x;
        v[i + 1] = x.y;
    }
#endif
}

// The warp's fragments of mma step kk of stage s: A slot q of m-tile i is row g + 8 (q % 2)
// (m16; m8: g) at permuted depth q / 2 (m8: q), B slot j of n-tile jn column g at depth j.
__device__ __forceinline__ void dg_frags(const double *s, int kk, int wm0, int wn0, int g, int t,
                                         double (&fa)[DG_MT][DG_AR], double (&fb)[DG_NT][DG_BR])
{
    constexpr int RH = DG_MM / 8;               // row halves per m-tile
    const int k0 = kk + t * DG_KPL;
#pragma unroll
    for (int i = 0; i < DG_MT; i++)
#pragma unroll
        for (int h = 0; h < RH; h++) {
            const int row = wm0 + i * DG_MM + g + 8 * h;
            double v[DG_KPL];
#if OPA == 0
            dg_ldk(s + row * DG_ALD + k0, v);
#else
#pragma unroll
            for (int q = 0; q < DG_KPL; q++)
                v[q] = s[(k0 + q) * DG_ALD + row];
#endif
#pragma unroll
            for (int q = 0; q < DG_KPL; q++)
                fa[i][h + RH * q] = v[q];
        }
    const double *sb = s + DG_ASZ;
#pragma unroll
    for (int j = 0; j < DG_NT; j++) {
        const int col = wn0 + j * 8 + g;
#if OPB == 1
        dg_ldk(sb + col * DG_BLD + k0, fb[j]);
#else
#pragma unroll
        for (int q = 0; q < DG_KPL; q++)
            fb[j][q] = sb[(k0 + q) * DG_BLD + col];
#endif
    }
}

#if SA
// SA 1: one double / two doubles at shared byte address p (ptxas folds a constant added to a
// per-thread base into the LDS immediate).
__device__ __forceinline__ double dg_lds(unsigned p)
{
    double v;
    asm volatile("ld.shared.f64 %0, [%1];\n" : "=d"(v) : "r"(p));
    return v;
}
__device__ __forceinline__ void dg_lds2(unsigned p, double &x, double &y)
{
    asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];\n" : "=d"(x), "=d"(y) : "r"(p));
}

// SA 1: the thread's byte offsets, inside a stage, of its A fragment (m-tile 0, row half 0,
// depth t DG_KPL of step 0) and B fragment (n-tile 0); every other slot is a constant past them.
__device__ __forceinline__ unsigned dg_fa_off(int wm0, int g, int t)
{
    return (unsigned)((OPA == 0 ? (wm0 + g) * DG_ALD + t * DG_KPL : t * DG_KPL * DG_ALD + wm0 + g) * 8);
}
__device__ __forceinline__ unsigned dg_fb_off(int wn0, int g, int t)
{
    return (unsigned)((DG_ASZ + (OPB == 1 ? (wn0 + g) * DG_BLD + t * DG_KPL
                                          : t * DG_KPL * DG_BLD + wn0 + g)) * 8);
}

// dg_frags with SA 1, 2: pa, pb are the stage's shared byte address plus dg_fa_off /
// dg_fb_off; kk (a constant after unrolling) and the tile indices only add immediates. Slot q
// of a lane lies at depth kk + t DG_KPL + dq(q), dq(q) = (q / DG_KPL) 4 DG_KPL + q % DG_KPL.
// dg_fa_sa: the A fragment of m-tile i; dg_fb_sa: every B fragment.
__device__ __forceinline__ void dg_fa_sa(unsigned pa, int kk, int i, double (&fa)[DG_AR])
{
    constexpr int RH = DG_MM / 8;
#pragma unroll
    for (int h = 0; h < RH; h++) {
        const int ro = i * DG_MM + 8 * h;
        double v[DG_KQ];
#pragma unroll
        for (int q = 0; q < DG_KQ; q += DG_KPL) {
            const int dk = kk + (q / DG_KPL) * 4 * DG_KPL;
#if OPA == 0
            const unsigned p = pa + (unsigned)((ro * DG_ALD + dk) * 8);
            if (DG_KPL == 1) {
                v[q] = dg_lds(p);
            } else {
#pragma unroll
                for (int e = 0; e < DG_KPL; e += 2)
                    dg_lds2(p + e * 8, v[q + e], v[q + e + 1]);
            }
#else
#pragma unroll
            for (int e = 0; e < DG_KPL; e++)
                v[q + e] = dg_lds(pa + (unsigned)(((dk + e) * DG_ALD + ro) * 8));
#endif
        }
#pragma unroll
        for (int q = 0; q < DG_KQ; q++)
            fa[h + RH * q] = v[q];
    }
}

__device__ __forceinline__ void dg_fb_sa(unsigned pb, int kk, double (&fb)[DG_NT][DG_BR])
{
#pragma unroll
    for (int j = 0; j < DG_NT; j++) {
#pragma unroll
        for (int q = 0; q < DG_KQ; q += DG_KPL) {
            const int dk = kk + (q / DG_KPL) * 4 * DG_KPL;
#if OPB == 1
            const unsigned p = pb + (unsigned)((j * 8 * DG_BLD + dk) * 8);
            if (DG_KPL == 1) {
                fb[j][q] = dg_lds(p);
            } else {
#pragma unroll
                for (int e = 0; e < DG_KPL; e += 2)
                    dg_lds2(p + e * 8, fb[j][q + e], fb[j][q + e + 1]);
            }
#else
#pragma unroll
            for (int e = 0; e < DG_KPL; e++)
                fb[j][q + e] = dg_lds(pb + (unsigned)(((dk + e) * DG_BLD + j * 8) * 8));
#endif
        }
    }
}

__device__ __forceinline__ void dg_frags_sa(unsigned pa, unsigned pb, int kk,
                                            double (&fa)[DG_MT][DG_AR], double (&fb)[DG_NT][DG_BR])
{
#pragma unroll
    for (int i = 0; i < DG_MT; i++)
        dg_fa_sa(pa, kk, i, fa[i]);
    dg_fb_sa(pb, kk, fb);
}
#endif

// d += a * b for one mma tile.
__device__ __forceinline__ void dg_mma(double (&d)[DG_CR], const double (&x)[DG_AR], const double (&y)[DG_BR])
{
#if MMA == 16816
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(x[0]), "d"(x[1]), "d"(x[2]), "d"(x[3]), "d"(x[4]), "d"(x[5]), "d"(x[6]),
                   "d"(x[7]), "d"(y[0]), "d"(y[1]), "d"(y[2]), "d"(y[3]));
#elif MMA == 1688
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(x[0]), "d"(x[1]), "d"(x[2]), "d"(x[3]), "d"(y[0]), "d"(y[1]));
#elif MMA == 1684
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                 "{%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(x[0]), "d"(x[1]), "d"(y[0]));
#else
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(x[0]), "d"(y[0]));
#endif
}

// acc = 0.
__device__ __forceinline__ void dg_zero(double (&acc)[DG_MT][DG_NT][DG_CR])
{
#pragma unroll
    for (int i = 0; i < DG_MT; i++)
#pragma unroll
        for (int j = 0; j < DG_NT; j++)
#pragma unroll
            for (int r = 0; r < DG_CR; r++)
                acc[i][j][r] = 0.0;
}

// The block's results of product (or split-K slice) bz: C = alpha acc + beta C.
__device__ __forceinline__ void dg_epilogue(const dg_args &a, const double (&acc)[DG_MT][DG_NT][DG_CR],
                                            long long bz, int m0, int n0, int wm0, int wn0, int g,
                                            int t)
{
#pragma unroll
    for (int i = 0; i < DG_MT; i++)
#pragma unroll
        for (int j = 0; j < DG_NT; j++)
#pragma unroll
            for (int h = 0; h < DG_CR / 2; h++)
                dg_store2(a, bz, m0 + wm0 + i * DG_MM + g + 8 * h, n0 + wn0 + j * 8 + 2 * t,
                          acc[i][j][2 * h], acc[i][j][2 * h + 1]);
}

// The K loop of one product (K tiles kt0..kt1) into acc. INNER (LDR 2): the block's tile lies
// inside M and N, so full K tiles copy with no bounds; a separate instance, so that the two
// copy paths do not hold registers at once. PERS 1: acc holds the previous product's results
// (pz: its store index, -1 none), stored while this product's first copies are in flight.
template <bool INNER>
__device__ __forceinline__ void dg_main(double (&acc)[DG_MT][DG_NT][DG_CR], const double *A,
                                        const double *B, const dg_args &a, int m0, int n0,
                                        int kt0, int kt1, int wm0, int wn0, int g, int t
#if PERS
                                        , long long pz
#endif
                                        )
{
    extern __shared__ __align__(DG_SMEM_ALIGN) double dg_smem[];
    const int nk = kt1 - kt0;
    // prologue: STAGES - 1 tiles in flight, the first fragments of tile 0
#if LDR >= 1
    dg_plan_a pa;
    dg_plan_b pb;
#if OPA == 0
    pa.init(A, a.lda, m0, kt0 * BK, a.m, a.k, true);
#else
    pa.init(A, a.lda, kt0 * BK, m0, a.k, a.m, false);
#endif
#if OPB == 0
    pb.init(B, a.ldb, kt0 * BK, n0, a.k, a.n, false);
#else
    pb.init(B, a.ldb, n0, kt0 * BK, a.n, a.k, true);
#endif
    const unsigned sm0 = dg_smem_addr(dg_smem);
#endif
#if LDR >= 3
    // inner blocks: running pointers; K tiles kt0 + i, i < lim, are full (no K edge)
    dg_run<dg_plan_a, DG_ALD> ra;
    dg_run<dg_plan_b, DG_BLD> rb;
    const int lim = min(nk, a.k / BK - kt0);
    if (INNER) {
        ra.init(A, a.lda, OPA == 0 ? m0 : kt0 * BK, OPA == 0 ? kt0 * BK : m0, OPA == 0);
        rb.init(B, a.ldb, OPB == 0 ? kt0 * BK : n0, OPB == 0 ? n0 : kt0 * BK, OPB == 1);
    }
#endif
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nk) {
#if LDR >= 3
            if (INNER) {
                if (s < lim) {
                    ra.copy(sm0 + s * DG_STAGE * 8, 0, 1);
                    rb.copy(sm0 + (s * DG_STAGE + DG_ASZ) * 8, 0, 1);
                } else {
                    dg_load_stage(dg_smem + s * DG_STAGE, A, B, a, m0, n0, kt0 + s);
                }
            } else
#endif
#if LDR >= 1
            dg_load_part<INNER>(sm0 + s * DG_STAGE * 8, pa, pb, A, B, a, m0, n0, kt0 + s, kt0, 0, 1);
#else
            dg_load_stage(dg_smem + s * DG_STAGE, A, B, a, m0, n0, kt0 + s);
#endif
        }
        asm volatile("cp.async.commit_group;\n" ::);
    }
#if PERS
    if (pz >= 0)
        dg_epilogue(a, acc, pz, m0, n0, wm0, wn0, g, t);
    dg_zero(acc);
#endif
    asm volatile("cp.async.wait_group %0;\n" :: "n"(STAGES - 2));
    __syncthreads();
    double fa[FRAG == 2 ? 2 : 1][DG_MT][DG_AR], fb[FRAG == 2 ? 2 : 1][DG_NT][DG_BR];
#if SA
    // SA 1: the ring slots read and written as byte offsets (UNR 0: at run time), the thread's
    // fragment bases made once
    unsigned rdo = 0, wro = (STAGES - 1) * DG_STAGE * 8;
    const unsigned ta = sm0 + dg_fa_off(wm0, g, t), tb = sm0 + dg_fb_off(wn0, g, t);
    if (FRAG == 2)
        dg_frags_sa(ta, tb, 0, fa[0], fb[0]);
#else
    int rdd = 0, wrd = STAGES - 1;      // UNR 0: the ring slots read and written, at run time
    if (FRAG == 2)
        dg_frags(dg_smem, 0, wm0, wn0, g, t, fa[0], fb[0]);
#endif
    // main loop, FRAG 2: the fragments of step kk + 1 load while the mmas of step kk run;
    // the next tile's copies start at step 0; at step DG_KS - 2 the barrier (after the
    // last reads of the old stage) makes the next stage readable, so step DG_KS - 1
    // already loads the next tile's first fragments (CUTLASS's multistage order).
    // FRAG 1: each step loads its fragments, then runs its mmas; the barrier ends the tile.
    // UNR 1: the loop is unrolled over the STAGES ring slots, so every shared address is a
    // constant offset (slot `un` of the ring at tile it0 + un).
    constexpr int BSTEP = FRAG == 2 ? DG_KS - 2 : DG_KS - 1;
    for (int it0 = 0; it0 < nk; it0 += DG_UN) {
#pragma unroll
        for (int un = 0; un < DG_UN; un++) {
            const int it = it0 + un;
            if (DG_UN > 1 && it >= nk)
                break;
#if SA
            constexpr unsigned OB = DG_STAGE * 8, RING = STAGES * DG_STAGE * 8;
            const unsigned rb0 = UNR ? un * OB : rdo, wb = UNR ? ((un + STAGES - 1) % STAGES) * OB : wro;
            const unsigned rb1 = UNR ? ((un + 1) % STAGES) * OB : (rdo + OB == RING ? 0 : rdo + OB);
            // the write slot: shared byte address of its A and B tiles, generic pointer
#define DG_WSA (sm0 + wb)
#define DG_WSB (sm0 + wb + DG_ASZ * 8)
#define DG_WP ((double *)((char *)dg_smem + wb))
#define DG_FR(KK, F, G) dg_frags_sa(ta + ro, tb + ro, KK, F, G)
#else
            const int rd0 = UNR ? un : rdd, wr = UNR ? (un + STAGES - 1) % STAGES : wrd;
            const int rd1 = UNR ? (un + 1) % STAGES : (rdd + 1 == STAGES ? 0 : rdd + 1);
#define DG_WSA (sm0 + wr * DG_STAGE * 8)
#define DG_WSB (sm0 + (wr * DG_STAGE + DG_ASZ) * 8)
#define DG_WP (dg_smem + wr * DG_STAGE)
#define DG_FR(KK, F, G) dg_frags(dg_smem + rd * DG_STAGE, KK, wm0, wn0, g, t, F, G)
#endif
#pragma unroll
            for (int kk = 0; kk < DG_KS; kk++) {
                const int cur = FRAG == 2 ? kk & 1 : 0, nxt = FRAG == 2 ? cur ^ 1 : 0;
#if SA
                const unsigned ro = kk > BSTEP ? rb1 : rb0; // after the barrier: the next slot
#else
                const int rd = kk > BSTEP ? rd1 : rd0;      // after the barrier: the next slot
#endif
                if (FRAG == 2)
                    DG_FR(kk + 1 < DG_KS ? (kk + 1) * DG_MK : 0, fa[nxt], fb[nxt]);
#if LDR >= 3
                if (INNER) {
                    if (kk <= BSTEP && it + STAGES - 1 < lim) {
                        ra.copy(DG_WSA, kk, BSTEP + 1);
                        rb.copy(DG_WSB, kk, BSTEP + 1);
                    } else if (kk == 0 && it + STAGES - 1 < nk) {
                        dg_load_stage(DG_WP, A, B, a, m0, n0, kt0 + it + STAGES - 1);
                    }
                } else
#endif
#if LDR >= 1
                // the next tile's copies, spread over steps 0..BSTEP, one group per tile
                if (kk <= BSTEP && it + STAGES - 1 < nk)
                    dg_load_part<INNER>(DG_WSA, pa, pb, A, B, a, m0, n0,
                                 kt0 + it + STAGES - 1, kt0, kk, BSTEP + 1);
                if (kk == BSTEP)
                    asm volatile("cp.async.commit_group;\n" ::);
#else
                if (kk == 0) {
                    if (it + STAGES - 1 < nk)
                        dg_load_stage(DG_WP, A, B, a, m0, n0, kt0 + it + STAGES - 1);
                    asm volatile("cp.async.commit_group;\n" ::);
                }
#endif
                if (FRAG == 1)
                    DG_FR(kk * DG_MK, fa[cur], fb[cur]);
#pragma unroll
                for (int i = 0; i < DG_MT; i++)
#pragma unroll
                    for (int j = 0; j < DG_NT; j++)
                        dg_mma(acc[i][j], fa[cur][i], fb[cur][j]);
                if (kk == BSTEP) {
                    asm volatile("cp.async.wait_group %0;\n" :: "n"(STAGES - 2));
                    __syncthreads();
                    if (!UNR) {
#if SA
                        rdo = rb1;
                        wro = wro + OB == RING ? 0 : wro + OB;
#else
                        rdd = rd1;
                        wrd = wrd + 1 == STAGES ? 0 : wrd + 1;
#endif
                    }
                }
            }
#undef DG_WSA
#undef DG_WSB
#undef DG_WP
#undef DG_FR
        }
    }
}

#if TMA
// ---- TMA 1: the stage copies as two TMA boxes per K tile ----
// A tensor map (CUtensorMap: 128 bytes, 64-byte aligned), passed by value as __grid_constant__.
// The host (templates/dgemm.c, dg_tma_maps) maps each operand as a 3D tensor {columns, rows,
// batch} (row stride ld, batch stride sa / sb) with a box of one stage tile in the padded
// layout: K-major tiles {DG_ALD or DG_BLD, BM or BN}, M/N-major tiles {BM or BN + pad, BK}. The box
// lands in shared memory densely, so its inner extent is the padded row: the pad columns hold
// the next elements of the row (or zeros past the matrix) and are never read. Elements past
// the matrix (edge tiles, a partial last K tile) read as zero, so every block takes one path.
struct __align__(64) dg_tmap { unsigned long long v[16]; };

// Waits until the phase of the given parity of the mbarrier at shared address bar has completed.
__device__ __forceinline__ void dg_bar_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n.reg .pred p;\nDG_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@!p bra DG_WAIT;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}

// The box of map at {c0 (inner), c1, c2} into shared memory at dst, completing on bar.
__device__ __forceinline__ void dg_tma3(const dg_tmap &map, unsigned dst, unsigned bar, int c0,
                                        int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5}], [%2];"
                 :: "r"(dst), "l"(&map), "r"(bar), "r"(c0), "r"(c1), "r"(c2) : "memory");
}

// Thread 0: K tile kt of product b (A and B boxes) into the stage at shared byte address s,
// completing on the slot's mbarrier bar (one arrival that expects the stage's bytes).
__device__ __forceinline__ void dg_tma_stage(const dg_tmap &ma, const dg_tmap &mb, unsigned s,
                                             unsigned bar, int m0, int n0, int kt, int b)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(bar), "n"(DG_STAGE * 8) : "memory");
    const int k0 = kt * BK;
    dg_tma3(ma, s, bar, OPA == 0 ? k0 : m0, OPA == 0 ? m0 : k0, b);
    dg_tma3(mb, s + DG_ASZ * 8, bar, OPB == 0 ? n0 : k0, OPB == 0 ? k0 : n0, b);
}

// Thread 0 prefetches the tensor maps (k > 0: with k == 0 the host passes no maps and no tile
// is copied) and initializes the ring's mbarriers (full: one arrival; TMA 2, empty: one per
// warp); then the block barrier.
__device__ __forceinline__ void dg_tma_init(const dg_tmap &ma, const dg_tmap &mb, int k)
{
    extern __shared__ __align__(DG_SMEM_ALIGN) double dg_smem[];
    if (threadIdx.x == 0) {
        const unsigned bars = dg_smem_addr(dg_smem) + STAGES * DG_STAGE * 8;
        if (k > 0) {
            asm volatile("prefetch.tensormap [%0];" :: "l"(&ma) : "memory");
            asm volatile("prefetch.tensormap [%0];" :: "l"(&mb) : "memory");
        }
        for (int s = 0; s < STAGES; s++) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bars + 8 * s));
            if (TMA == 2)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"
                             :: "r"(bars + 8 * (STAGES + s)), "n"(DG_THREADS / 32));
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
}

// dg_main with TMA copies (SA 1, 2; UNR 0): the K loop of product b (K tiles kt0..kt1) into acc.
// All STAGES slots are in flight: the prologue issues the first STAGES tiles; at step BSTEP of
// tile it, after the barrier that ends every read of its slot, thread 0 refills that slot with
// tile it + STAGES, and every thread waits for tile it + 1's mbarrier. ph: bit s is the parity
// of slot s's next phase (carried across products; every issued tile is waited for, so the
// ring is empty at a product's end); TMA 2: bit STAGES + s the parity of slot s's "empty"
// mbarrier (at bars + 8 (STAGES + s), one arrival per warp), on which each warp releases the
// slot (only where it is refilled, so every phase is waited for once) instead of the block
// barrier; thread 0 waits for it before the refill. PERS 1: as dg_main.
__device__ __forceinline__ void dg_main_tma(double (&acc)[DG_MT][DG_NT][DG_CR], const dg_tmap &ma,
                                            const dg_tmap &mb, const dg_args &a, int b, int m0,
                                            int n0, int kt0, int kt1, int wm0, int wn0, int g,
                                            int t, unsigned &ph
#if PERS
                                            , long long pz
#endif
                                            )
{
    extern __shared__ __align__(DG_SMEM_ALIGN) double dg_smem[];
    const int nk = kt1 - kt0;
    constexpr unsigned OB = DG_STAGE * 8;
    const unsigned sm0 = dg_smem_addr(dg_smem), bars = sm0 + STAGES * OB;
    if (threadIdx.x == 0) {
#pragma unroll
        for (int s = 0; s < STAGES; s++)
            if (s < nk)
                dg_tma_stage(ma, mb, sm0 + s * OB, bars + 8 * s, m0, n0, kt0 + s, b);
    }
#if PERS
    if (pz >= 0)
        dg_epilogue(a, acc, pz, m0, n0, wm0, wn0, g, t);
    dg_zero(acc);
#else
    (void)a;
#endif
    if (nk > 0) {
        dg_bar_wait(bars, ph & 1u);
        ph ^= 1u;
    }
    double fa[FRAG == 2 ? 2 : 1][DG_MT][DG_AR], fb[FRAG == 2 ? 2 : 1][DG_NT][DG_BR];
    unsigned rdo = 0, rsl = 0;          // the slot read: byte offset, index
    const unsigned ta = sm0 + dg_fa_off(wm0, g, t), tb = sm0 + dg_fb_off(wn0, g, t);
    if (FRAG == 2)
        dg_frags_sa(ta, tb, 0, fa[0], fb[0]);
    constexpr int BSTEP = FRAG == 2 ? DG_KS - 2 : DG_KS - 1;
    for (int it = 0; it < nk; it++) {
        const unsigned nsl = rsl + 1 == STAGES ? 0 : rsl + 1, rb1 = nsl * OB;
#pragma unroll
        for (int kk = 0; kk < DG_KS; kk++) {
            const int cur = FRAG == 2 ? kk & 1 : 0, nxt = FRAG == 2 ? cur ^ 1 : 0;
            const unsigned ro = kk > BSTEP ? rb1 : rdo;     // after the barrier: the next slot
            if (FRAG == 2)
                dg_frags_sa(ta + ro, tb + ro, kk + 1 < DG_KS ? (kk + 1) * DG_MK : 0, fa[nxt], fb[nxt]);
            if (FRAG == 1)
                dg_frags_sa(ta + ro, tb + ro, kk * DG_MK, fa[cur], fb[cur]);
#pragma unroll
            for (int i = 0; i < DG_MT; i++)
#pragma unroll
                for (int j = 0; j < DG_NT; j++)
                    dg_mma(acc[i][j], fa[cur][i], fb[cur][j]);
            if (kk == BSTEP) {
#if TMA == 2
                if (it + STAGES < nk) {
                    __syncwarp();               // the warp's reads of slot rsl are done
                    if ((threadIdx.x & 31) == 0)
                        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];"
                                     :: "r"(bars + 8 * (STAGES + rsl)) : "memory");
                    if (threadIdx.x == 0) {
                        dg_bar_wait(bars + 8 * (STAGES + rsl), (ph >> (STAGES + rsl)) & 1u);
                        dg_tma_stage(ma, mb, sm0 + rdo, bars + 8 * rsl, m0, n0, kt0 + it + STAGES, b);
                    }
                    ph ^= 1u << (STAGES + rsl);
                }
#else
                __syncthreads();                // every read of slot rsl is done
                if (threadIdx.x == 0 && it + STAGES < nk)
                    dg_tma_stage(ma, mb, sm0 + rdo, bars + 8 * rsl, m0, n0, kt0 + it + STAGES, b);
#endif
                if (it + 1 < nk) {
                    dg_bar_wait(bars + 8 * nsl, (ph >> nsl) & 1u);
                    ph ^= 1u << nsl;
                }
                rdo = rb1;
                rsl = nsl;
            }
        }
    }
}
#endif

#if LDR == 4
// LDR 4: 1 if a tile's rows (A: BM op N, BK op T; B: BK op N, BN op T) span less than 2^32
// bytes in both operands (dg_run's 32-bit offsets); DG_OFF32 adds the test to the inner-block
// condition (nothing for the other LDR, whose code stays as it was).
__device__ __forceinline__ bool dg_off32(const dg_args &a)
{
    return (long long)(OPA == 0 ? BM : BK) * a.lda * 8 < (1LL << 32) &&
           (long long)(OPB == 0 ? BK : BN) * a.ldb * 8 < (1LL << 32);
}
#define DG_OFF32 && dg_off32(a)
#else
#define DG_OFF32
#endif

// One output tile per block (grid.x = tiles, grid.z over batch x SPLITK); STAGES-deep cp.async
// ring; each warp owns a DG_WM x DG_WN tile of DG_MT x DG_NT mma tiles. Fragment slots (PTX
// ISA): A slot i is (row g + 8 (i % 2), k t + 4 (i / 2)) for the m16 shapes, (g, t) for m8n8k4;
// B slot j is (k t + 4 j, column g); accumulator r is (row g + 8 (r / 2), column 2 t + r % 2).
// TMA 1, 2: the tensor maps of A and B follow the arguments (dg_tmap); STAGES mbarriers after
// the ring (TMA 2: 2 STAGES).
extern "C" __global__ void __launch_bounds__(DG_THREADS, MINB)
dg_mma(dg_args a
#if TMA
       , const __grid_constant__ dg_tmap ma, const __grid_constant__ dg_tmap mb
#endif
       )
{
#if TMA
    unsigned ph = 0;                    // bit s: the parity of slot s's next phase
    dg_tma_init(ma, mb, a.k);
#else
    extern __shared__ __align__(DG_SMEM_ALIGN) double dg_smem[];
#endif
    const int tm = DG_CDIV(a.m, BM), tn = DG_CDIV(a.n, BN);
    int mt, nt;
    dg_tile(blockIdx.x, tm, tn, mt, nt);
    const int m0 = mt * BM, n0 = nt * BN;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm0 = (warp / WARPS_N) * DG_WM, wn0 = (warp % WARPS_N) * DG_WN;
    const int ktiles = DG_CDIV(a.k, BK);
    const long long nz = (long long)a.batch * SPLITK;
#if PERS
    // several products per block: each one's first copies go out before the previous one's
    // results are stored (in dg_main), the last product's results after the loop
    double acc[DG_MT][DG_NT][DG_CR];
    long long pz = -1;
    const bool inner = LDR >= 2 && m0 + BM <= a.m && n0 + BN <= a.n DG_OFF32;
    for (long long z = blockIdx.z; z < nz; z += gridDim.z) {
        const long long b = z / SPLITK;
        int kt0, kt1;
        dg_slice(ktiles, (int)(z - b * SPLITK), kt0, kt1);
#if TMA
        (void)inner;
        dg_main_tma(acc, ma, mb, a, (int)b, m0, n0, kt0, kt1, wm0, wn0, g, t, ph, pz);
#else
        const double *A = a.A + b * a.sa, *B = a.B + b * a.sb;
        if (inner)
            dg_main<true>(acc, A, B, a, m0, n0, kt0, kt1, wm0, wn0, g, t, pz);
        else
            dg_main<false>(acc, A, B, a, m0, n0, kt0, kt1, wm0, wn0, g, t, pz);
#endif
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads();            // the ring is free for the next product
        pz = SPLITK > 1 ? z : b;
    }
    if (pz >= 0)
        dg_epilogue(a, acc, pz, m0, n0, wm0, wn0, g, t);
#else
    for (long long z = blockIdx.z; z < nz; z += gridDim.z) {
        const long long b = z / SPLITK;
        int kt0, kt1;
        dg_slice(ktiles, (int)(z - b * SPLITK), kt0, kt1);
#if !TMA
        const double *A = a.A + b * a.sa, *B = a.B + b * a.sb;
#endif
        double acc[DG_MT][DG_NT][DG_CR];
        dg_zero(acc);
#if TMA
        dg_main_tma(acc, ma, mb, a, (int)b, m0, n0, kt0, kt1, wm0, wn0, g, t, ph);
#else
        if (LDR >= 2 && m0 + BM <= a.m && n0 + BN <= a.n DG_OFF32)
            dg_main<true>(acc, A, B, a, m0, n0, kt0, kt1, wm0, wn0, g, t);
        else
            dg_main<false>(acc, A, B, a, m0, n0, kt0, kt1, wm0, wn0, g, t);
#endif
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads();            // the ring is free for the next product
#pragma unroll
        for (int i = 0; i < DG_MT; i++)
#pragma unroll
            for (int j = 0; j < DG_NT; j++)
#pragma unroll
                for (int h = 0; h < DG_CR / 2; h++)
                    dg_store2(a, SPLITK > 1 ? z : b, m0 + wm0 + i * DG_MM + g + 8 * h,
                              n0 + wn0 + j * 8 + 2 * t, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
    }
#endif
}

#else
// ================= PATH 0: FFMA64 =================
#define DG_TX (BN / TN)                         // threads along N
#define DG_TY (BM / TM)                         // threads along M
#define DG_THREADS (DG_TX * DG_TY)
static_assert(BM % TM == 0 && BN % TN == 0, "TM divides BM, TN divides BN");
static_assert(DG_THREADS >= 32 && DG_THREADS <= 1024, "32..1024 threads");

// Register-tiled SIMT kernel: thread (ty, tx) owns rows ty + i DG_TY and columns tx + j DG_TX
// (broadcast shared reads, coalesced stores); A and B tiles staged in shared memory as
// [BK][BM + 1] and [BK][BN + 1] with guarded element loads (any alignment, any op).
extern "C" __global__ void __launch_bounds__(DG_THREADS)
dg_ffma(dg_args a)
{
    __shared__ double sa[BK][BM + 1];
    __shared__ double sb[BK][BN + 1];
    const int tm = DG_CDIV(a.m, BM), tn = DG_CDIV(a.n, BN);
    int mt, nt;
    dg_tile(blockIdx.x, tm, tn, mt, nt);
    const int m0 = mt * BM, n0 = nt * BN;
    const int tx = threadIdx.x % DG_TX, ty = threadIdx.x / DG_TX;
    const int ktiles = DG_CDIV(a.k, BK);
    const long long nz = (long long)a.batch * SPLITK;
    for (long long z = blockIdx.z; z < nz; z += gridDim.z) {
        const long long b = z / SPLITK;
        int kt0, kt1;
        dg_slice(ktiles, (int)(z - b * SPLITK), kt0, kt1);
        const double *A = a.A + b * a.sa, *B = a.B + b * a.sb;
        double acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++)
                acc[i][j] = 0.0;
        for (int kt = kt0; kt < kt1; kt++) {
            const int k0 = kt * BK;
            // A tile: consecutive threads along A's contiguous dimension
            for (int e = threadIdx.x; e < BM * BK; e += DG_THREADS) {
#if OPA == 0
                const int i = e / BK, kk = e % BK;
                const long long off = (long long)(m0 + i) * a.lda + (k0 + kk);
#else
                const int kk = e / BM, i = e % BM;
                const long long off = (long long)(k0 + kk) * a.lda + (m0 + i);
#endif
                sa[kk][i] = m0 + i < a.m && k0 + kk < a.k ? A[off] : 0.0;
            }
            for (int e = threadIdx.x; e < BN * BK; e += DG_THREADS) {
#if OPB == 0
                const int kk = e / BN, j = e % BN;
                const long long off = (long long)(k0 + kk) * a.ldb + (n0 + j);
#else
                const int j = e / BK, kk = e % BK;
                const long long off = (long long)(n0 + j) * a.ldb + (k0 + kk);
#endif
                sb[kk][j] = n0 + j < a.n && k0 + kk < a.k ? B[off] : 0.0;
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
                double x[TM], y[TN];
#pragma unroll
                for (int i = 0; i < TM; i++)
                    x[i] = sa[kk][ty + i * DG_TY];
#pragma unroll
                for (int j = 0; j < TN; j++)
                    y[j] = sb[kk][tx + j * DG_TX];
#pragma unroll
                for (int i = 0; i < TM; i++)
#pragma unroll
                    for (int j = 0; j < TN; j++)
                        acc[i][j] = fma(x[i], y[j], acc[i][j]);
            }
            __syncthreads();
        }
        const long long bz = SPLITK > 1 ? z : b;
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const int r = m0 + ty + i * DG_TY;
#pragma unroll
            for (int j = 0; j < TN; j++) {
                const int c = n0 + tx + j * DG_TX;
                if (r >= a.m || c >= a.n)
                    continue;
                if (SPLITK > 1) {
                    a.W[bz * (long long)a.m * a.n + (long long)r * a.n + c] = acc[i][j];
                } else {
                    double *p = a.C + b * a.sc + (long long)r * a.ldc + c;
                    double v = a.alpha * acc[i][j];
                    *p = a.beta != 0.0 ? fma(a.beta, *p, v) : v;
                }
            }
        }
    }
}
#endif

// Copies `batch` products of the rows x cols matrix src (leading dimension ld, batch stride
// ss, any alignment) to dst (leading dimension ldd even, batch stride rows * ldd, 16-byte
// aligned), zero-filling columns cols..ldd-1. Grid-stride over 16-byte chunks.
extern "C" __global__ void __launch_bounds__(256)
dg_pack(int rows, int cols, int batch, const double *__restrict__ src, long long ld, long long ss,
        double *__restrict__ dst, long long ldd)
{
    const long long cpr = ldd / 2, per = (long long)rows * cpr, tot = per * batch;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < tot; i += (long long)gridDim.x * 256) {
        const long long b = i / per, rest = i - b * per, r = rest / cpr;
        const int c = (int)(rest - r * cpr) * 2;
        const double *s = src + b * ss + r * ld + c;
        double2 o;
        o.x = c < cols ? s[0] : 0.0;
        o.y = c + 1 < cols ? s[1] : 0.0;
        *(double2 *)(dst + b * per * 2 + r * ldd + c) = o;
    }
}

// Split-K finish: C = alpha * sum_s W[b][s] + beta * C, slices summed in order s = 0..
// (deterministic); beta == 0 never reads C. Grid-stride over batch x m x n.
extern "C" __global__ void __launch_bounds__(256)
dg_splitk_reduce(dg_args a)
{
    const long long mn = (long long)a.m * a.n, tot = mn * a.batch;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < tot; i += (long long)gridDim.x * 256) {
        const long long b = i / mn, e = i - b * mn, r = e / a.n, c = e - r * a.n;
        double s = 0.0;
#pragma unroll
        for (int z = 0; z < SPLITK; z++)
            s += a.W[(b * SPLITK + z) * mn + e];
        double *p = a.C + b * a.sc + r * a.ldc + c;
        const double v = a.alpha * s;
        *p = a.beta != 0.0 ? fma(a.beta, *p, v) : v;
    }
}
