// skinny.cu: the skinny family, C = alpha*op(A)*op(B) + beta*C (row-major canonical form, ops N or
// T, strided batches) for the GEMMs the large-tile families serve badly: a small M or N (GEMV-like
// and inference-like calls), a small output over a deep K, a short K, small products in batches.
// FP32, FP64, FP16 and BF16 (FP32 accumulation) on the CUDA cores; FP32 data under TF32 math is
// rounded to TF32 as the tensor cores would. Small tiles, the K loop split inside a block (KT
// groups) and across blocks (the host picks the slices to fill the GPU), the slices summed in a
// fixed order by the last block of each tile (one launch, deterministic).

// ---- tunables (templates/skinny.c passes each as -D) ----
#ifndef TYPE
#define TYPE 0          // element type of A, B and C: 0 float, 1 double, 2 half, 3 bfloat16, 4 float under TF32 math
#endif
#ifndef OPA
#define OPA 0           // 0: A is m x k (lda >= k); 1: A is stored k x m (op T, lda >= m)
#endif
#ifndef OPB
#define OPB 0           // 0: B is k x n (ldb >= n); 1: B is stored n x k (op T, ldb >= k)
#endif
#ifndef BM
#define BM 32           // rows of a block's C tile
#endif
#ifndef BN
#define BN 64           // columns of a block's C tile
#endif
#ifndef BK
#define BK 32           // depth of one shared-memory stage
#endif
#ifndef TM
#define TM 4            // rows of a thread's register tile
#endif
#ifndef TN
#define TN 4            // columns of a thread's register tile
#endif
#ifndef KT
#define KT 2            // thread groups splitting each stage's K steps (their sums meet in shared memory)
#endif
#ifndef VEC
#define VEC 4           // elements per global load along an operand's contiguous dimension, where aligned
#endif
#ifndef WAVES
#define WAVES 2         // host-only (skinny.c's K slices, never passed here): waves of blocks a launch fills
#endif

#define SK_THREADS ((BM / TM) * (BN / TN) * KT)

#if TYPE == 0 || TYPE == 4
typedef float sk_elem;
typedef float sk_acc;
#elif TYPE == 1
typedef double sk_elem;
typedef double sk_acc;
#else
typedef unsigned short sk_elem;
typedef float sk_acc;
#endif
#define SK_ESZ ((int)sizeof(sk_elem))

__device__ __forceinline__ sk_acc sk_to_acc(sk_elem v)
{
#if TYPE == 0 || TYPE == 1 || TYPE == 4
    return v;
#elif TYPE == 3
    return __uint_as_float((unsigned)v << 16);
#else
    float f;
    asm("{ .reg .b16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(v));
    return f;
#endif
}

// Rounds an accumulator value to the element type (to nearest even).
__device__ __forceinline__ sk_elem sk_from_acc(sk_acc f)
{
#if TYPE == 0 || TYPE == 1 || TYPE == 4
    return f;
#elif TYPE == 3
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#endif
}

// An FP32 value rounded to TF32 (to nearest, ties to even: the 13 low mantissa bits then zero),
// as the tensor-core family and cuBLAS round FP32 data under TF32 math; Inf stays Inf, a NaN
// becomes the canonical NaN.
__device__ __forceinline__ float sk_tf32(float f)
{
    unsigned x = __float_as_uint(f);
    if ((x & 0x7f800000u) == 0x7f800000u)
        return __uint_as_float((x & 0x007fffffu) ? 0x7fffe000u : x);
    return __uint_as_float((x + 0xfffu + ((x >> 13) & 1u)) & 0xffffe000u);
}

// One vector of W elements from an address aligned to W elements.
template <int W> struct sk_vec;
template <> struct sk_vec<1> { sk_elem v[1]; };
template <> struct __align__(2 * SK_ESZ) sk_vec<2> { sk_elem v[2]; };
template <> struct __align__(4 * SK_ESZ) sk_vec<4> { sk_elem v[4]; };
template <> struct __align__(8 * SK_ESZ) sk_vec<8> { sk_elem v[8]; };

// The width of an operand's global loads: VEC where the tile's contiguous length is a multiple
// of it, else single elements.
#define SK_WIDTH(len) ((len) % VEC == 0 ? VEC : 1)
#define SK_WA SK_WIDTH(OPA ? BM : BK)
#define SK_WB SK_WIDTH(OPB ? BK : BN)
#define SK_CDIV(a, b) (((a) + (b) - 1) / (b))
// An operand stored along K (A of op N, B of op T) is stored transposed into shared memory: the
// lanes of a warp take SK_RUN(W) adjacent loads of one row (a 32-byte sector together), then the
// next rows, so one store instruction meets few lanes per bank (eight loads of one row, the
// order before, put eight lanes on each bank of a 32-wide tile)
#define SK_RUN(W) (32 / ((W) * SK_ESZ) < 1 ? 1 : 32 / ((W) * SK_ESZ))
#define SK_RUN_A (SK_RUN(SK_WA) < BK / SK_WA ? SK_RUN(SK_WA) : BK / SK_WA)
#define SK_RUN_B (SK_RUN(SK_WB) < BK / SK_WB ? SK_RUN(SK_WB) : BK / SK_WB)
#define SK_LOADS_A SK_CDIV(BM * BK / SK_WA, SK_THREADS)
#define SK_LOADS_B SK_CDIV(BK * BN / SK_WB, SK_THREADS)

// Shared memory: the stage's tiles (k-major: As[kk][i], Bs[kk][j]), then reused for the KT groups'
// partial tiles.
#define SK_STAGE_BYTES ((BK * BM + BK * BN) * (int)sizeof(sk_acc))
#define SK_RED_BYTES (KT * BM * BN * (int)sizeof(sk_acc))
#define SK_SMEM_BYTES (SK_STAGE_BYTES > SK_RED_BYTES ? SK_STAGE_BYTES : SK_RED_BYTES)

// Load c of A's stage tile (0 <= c < BM * BK / SK_WA): its first element's row i and K step kk.
// OPA 1: SK_WA rows of one K step, the steps' rows in order. OPA 0: SK_WA K steps of one row, in
// runs of SK_RUN_A loads of the row, the rows of a run's position next, then the next runs.
__device__ __forceinline__ void sk_map_a(int c, int *i, int *kk)
{
#if OPA
    *i = (c % (BM / SK_WA)) * SK_WA;
    *kk = c / (BM / SK_WA);
#else
    const int run = c / (SK_RUN_A * BM);
    *i = (c / SK_RUN_A) % BM;
    *kk = (run * SK_RUN_A + c % SK_RUN_A) * SK_WA;
#endif
}

// Load c of B's stage tile (0 <= c < BK * BN / SK_WB): its first element's K step kk and column j
// (the mapping of sk_map_a with B's roles: OPB 0 contiguous along j, OPB 1 along k).
__device__ __forceinline__ void sk_map_b(int c, int *kk, int *j)
{
#if OPB
    const int run = c / (SK_RUN_B * BN);
    *j = (c / SK_RUN_B) % BN;
    *kk = (run * SK_RUN_B + c % SK_RUN_B) * SK_WB;
#else
    *kk = c / (BN / SK_WB);
    *j = (c % (BN / SK_WB)) * SK_WB;
#endif
}

// Loads W consecutive elements of a row (or column) that starts at p, `avail` of which lie inside
// the matrix, into out (zeros past the edge); vector load when all W are inside and aligned.
// TYPE 4 (FP32 data under TF32 math): each value rounded to TF32.
template <int W>
__device__ __forceinline__ void sk_load(const sk_elem *p, int avail, int aligned, sk_acc *out)
{
    if (W > 1 && aligned && avail >= W) {
        sk_vec<W> v = *reinterpret_cast<const sk_vec<W> *>(p);
#pragma unroll
        for (int e = 0; e < W; e++)
            out[e] = sk_to_acc(v.v[e]);
    } else {
#pragma unroll
        for (int e = 0; e < W; e++)
            out[e] = e < avail ? sk_to_acc(p[e]) : (sk_acc)0;
    }
#if TYPE == 4
#pragma unroll
    for (int e = 0; e < W; e++)
        out[e] = sk_tf32(out[e]);
#endif
}

// One stage's tiles, global -> registers: A's rows row0.., K steps k0.. (BM x BK), B's K steps
// k0.. and columns col0.. (BK x BN). Each load is W elements along the operand's contiguous
// dimension.
__device__ __forceinline__ void sk_fetch(const sk_elem *A, const sk_elem *B, long long lda,
                                         long long ldb, int m, int n, int k, int row0, int col0,
                                         int k0, int va, int vb, sk_acc ra[][SK_WA],
                                         sk_acc rb[][SK_WB])
{
    int t = threadIdx.x;
#pragma unroll
    for (int l = 0; l < SK_LOADS_A; l++) {
        int c = t + l * SK_THREADS;
        if (c >= BM * BK / SK_WA)
            break;
        // OPA 0: contiguous along k (a row of A); OPA 1: contiguous along i (a row of A's storage)
        int i, kk;
        sk_map_a(c, &i, &kk);
        int gi = row0 + i, gk = k0 + kk;
        int inside = OPA ? (gk < k ? m - gi : 0) : (gi < m ? k - gk : 0);
        const sk_elem *p = OPA ? A + (long long)gk * lda + gi : A + (long long)gi * lda + gk;
        sk_load<SK_WA>(inside > 0 ? p : A, inside > 0 ? inside : 0, va, ra[l]);
    }
#pragma unroll
    for (int l = 0; l < SK_LOADS_B; l++) {
        int c = t + l * SK_THREADS;
        if (c >= BK * BN / SK_WB)
            break;
        // OPB 0: contiguous along j (a row of B); OPB 1: contiguous along k (a row of B's storage)
        int kk, j;
        sk_map_b(c, &kk, &j);
        int gk = k0 + kk, gj = col0 + j;
        int inside = OPB ? (gj < n ? k - gk : 0) : (gk < k ? n - gj : 0);
        const sk_elem *p = OPB ? B + (long long)gj * ldb + gk : B + (long long)gk * ldb + gj;
        sk_load<SK_WB>(inside > 0 ? p : B, inside > 0 ? inside : 0, vb, rb[l]);
    }
}

// Registers -> the stage's shared tiles (the mapping of sk_fetch).
__device__ __forceinline__ void sk_stash(sk_acc *As, sk_acc *Bs, sk_acc ra[][SK_WA],
                                         sk_acc rb[][SK_WB])
{
    int t = threadIdx.x;
#pragma unroll
    for (int l = 0; l < SK_LOADS_A; l++) {
        int c = t + l * SK_THREADS;
        if (c >= BM * BK / SK_WA)
            break;
        int i, kk;
        sk_map_a(c, &i, &kk);
#pragma unroll
        for (int e = 0; e < SK_WA; e++)
            As[(OPA ? kk : kk + e) * BM + (OPA ? i + e : i)] = ra[l][e];
    }
#pragma unroll
    for (int l = 0; l < SK_LOADS_B; l++) {
        int c = t + l * SK_THREADS;
        if (c >= BK * BN / SK_WB)
            break;
        int kk, j;
        sk_map_b(c, &kk, &j);
#pragma unroll
        for (int e = 0; e < SK_WB; e++)
            Bs[(OPB ? kk + e : kk) * BN + (OPB ? j : j + e)] = rb[l][e];
    }
}

// Grid: x the C tiles of one product (columns fastest), y the K slices, z the products. TYPE 4
// (FP32 data under TF32 math) rounds A and B to TF32 (their products are then exact in FP32).
// steps_per_slice: K stages of one slice (the last may have fewer). With more than one slice each
// block writes its partial tile to work (slices x tiles x BM x BN, this launch's products), the
// last block of a tile to arrive (counters: one per tile, zero between calls) sums the slices in
// slice order and writes C.
extern "C" __global__ void __launch_bounds__(SK_THREADS)
skinny_gemm(const sk_elem *__restrict__ A, const sk_elem *__restrict__ B, sk_elem *C,
            long long lda, long long ldb, long long ldc, long long sa, long long sb, long long sc,
            int m, int n, int k, sk_acc alpha, sk_acc beta, int steps_per_slice, int va, int vb,
            sk_acc *work, unsigned *counters)
{
    __shared__ __align__(16) unsigned char sk_smem[SK_SMEM_BYTES];
    __shared__ int sk_last;
    sk_acc *As = reinterpret_cast<sk_acc *>(sk_smem);
    sk_acc *Bs = As + BK * BM;
    sk_acc *red = reinterpret_cast<sk_acc *>(sk_smem);

    const int tiles_n = SK_CDIV(n, BN);
    const int row0 = (blockIdx.x / tiles_n) * BM, col0 = (blockIdx.x % tiles_n) * BN;
    const long long z = blockIdx.z;
    A += z * sa;
    B += z * sb;
    C += z * sc;

    const int t = threadIdx.x;
    const int tc = t % (BN / TN), tr = (t / (BN / TN)) % (BM / TM), g = t / ((BN / TN) * (BM / TM));

    sk_acc acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0;

    const int steps = SK_CDIV(k, BK);
    const int s0 = blockIdx.y * steps_per_slice;
    const int s1 = min(steps, s0 + steps_per_slice);
    sk_acc ra[SK_LOADS_A][SK_WA], rb[SK_LOADS_B][SK_WB];
    if (s0 < s1) {
        sk_fetch(A, B, lda, ldb, m, n, k, row0, col0, s0 * BK, va, vb, ra, rb);
        sk_stash(As, Bs, ra, rb);
        __syncthreads();
    }
    for (int s = s0; s < s1; s++) {
        if (s + 1 < s1)
            sk_fetch(A, B, lda, ldb, m, n, k, row0, col0, (s + 1) * BK, va, vb, ra, rb);
#pragma unroll
        for (int q = 0; q < BK / KT; q++) {
            const int kk = g + q * KT;
            sk_acc a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
                a[i] = As[kk * BM + tr * TM + i];
#pragma unroll
            for (int j = 0; j < TN; j++)
                b[j] = Bs[kk * BN + tc * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
        if (s + 1 < s1) {
            sk_stash(As, Bs, ra, rb);
            __syncthreads();
        }
    }

    // The KT groups' partial tiles meet in shared memory (the stage tiles are no longer read).
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            red[(g * BM + tr * TM + i) * BN + tc * TN + j] = acc[i][j];
    __syncthreads();

    const int slices = gridDim.y;
    const long long tile = (long long)blockIdx.z * gridDim.x + blockIdx.x;
    if (slices > 1) {
        sk_acc *mine = work + (tile * slices + blockIdx.y) * (BM * BN);
        for (int o = t; o < BM * BN; o += SK_THREADS) {
            sk_acc v = 0;
#pragma unroll
            for (int q = 0; q < KT; q++)
                v += red[q * BM * BN + o];
            mine[o] = v;
        }
        __threadfence();
        __syncthreads();
        if (t == 0)
            sk_last = atomicAdd(counters + tile, 1u) == (unsigned)(slices - 1);
        __syncthreads();
        if (!sk_last)
            return;
        __threadfence();
    }
    for (int o = t; o < BM * BN; o += SK_THREADS) {
        int i = row0 + o / BN, j = col0 + o % BN;
        sk_acc v = 0;
        if (slices > 1) {
            // four slices' loads in flight at once, added in slice order
            const sk_acc *part = work + tile * slices * (BM * BN) + o;
            int q = 0;
            for (; q + 4 <= slices; q += 4) {
                sk_acc p0 = __ldcg(part + (long long)q * (BM * BN));
                sk_acc p1 = __ldcg(part + (long long)(q + 1) * (BM * BN));
                sk_acc p2 = __ldcg(part + (long long)(q + 2) * (BM * BN));
                sk_acc p3 = __ldcg(part + (long long)(q + 3) * (BM * BN));
                v += p0;
                v += p1;
                v += p2;
                v += p3;
            }
            for (; q < slices; q++)
                v += __ldcg(part + (long long)q * (BM * BN));
        } else {
#pragma unroll
            for (int q = 0; q < KT; q++)
                v += red[q * BM * BN + o];
        }
        if (i < m && j < n) {
            sk_elem *c = C + (long long)i * ldc + j;
            sk_acc r = alpha * v;
            if (beta != (sk_acc)0)
                r += beta * sk_to_acc(*c);
            *c = sk_from_acc(r);
        }
    }
    if (slices > 1 && t == 0)
        counters[tile] = 0;
}
