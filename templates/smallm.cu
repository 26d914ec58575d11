// smallm.cu: the smallm family, C = alpha*op(A)*op(B) + beta*C (row-major canonical form, ops N
// or T, strided batches) in FP16 and BF16 for a small M (inference-like calls, m <= 64) over a
// large N x K: the calls are bound by reading B once. The tensor cores compute C^T = op(B)^T
// op(A)^T (mma.sync m16n8k16, FP32 accumulation) so that B fills the mma's 16-row side and the
// small m its 8-column side (no padding of m to 16). B and A stream through shared memory in a
// STAGES-deep cp.async pipeline; K is split across blocks (the host picks the slices to fill the
// GPU) and the slices are summed in slice order by the last block of each tile (one launch,
// deterministic), or with CLUSTER 1 (sm_90) by the cluster of the tile's slices from each
// other's shared memory.
// TYPE 2 is exact FP32 on the CUDA cores (FFMA): the same pipeline, K slices, batches and ops,
// each thread TN columns of the wide side (TN = BN / (WARPS x 32 / KW)) x all MT rows, A broadcast
// from shared memory, rows past m skipped four at a time; its C may be stored transposed (a
// problem whose narrow side is n runs as its mirror C^T = op(B)^T op(A)^T: templates/smallm.c).
// One kernel serves both: the element type, the shared-memory geometry, a stage's products and
// the accumulators' way into shared memory are each type's own (#if TYPE == 2); the loads, the
// pipeline, the summing of the K groups and slices and the stores of C are common.

// ---- tunables (templates/smallm.c passes each as -D) ----
#ifndef TYPE
#define TYPE 1          // element type: 0 half, 1 bfloat16 (FP32 accumulation), 2 float (FFMA)
#endif
#ifndef OPA
#define OPA 0           // 0: A is m x k (lda >= k); 1: A is stored k x m (op T, lda >= m)
#endif
#ifndef OPB
#define OPB 0           // 0: B is k x n (ldb >= n); 1: B is stored n x k (op T, ldb >= k)
#endif
#ifndef MT
#define MT 8            // rows of C (m) per block: 8, 16, 32, 64 (mma n8 tiles of m; TYPE 2 rows)
#endif
#ifndef BN
#define BN 128          // columns of C (n) per block: 64, 128, 256 (TYPE 2 also 512)
#endif
#ifndef BK
#define BK 64           // K depth of one pipeline stage: 32, 64, 128
#endif
#ifndef STAGES
#define STAGES 4        // pipeline stages in shared memory (STAGES - 1 loads in flight): 2..8
#endif
#ifndef WARPS
#define WARPS 4         // warps per block: 4 or 8
#endif
#ifndef KW
#define KW 1            // warp groups splitting each stage's k16 steps (sums meet in shared memory)
#endif
#ifndef VEC
#define VEC 8           // elements per cp.async (16, 8 or 4 bytes) where aligned (TYPE 2: 4 or 2)
#endif
#ifndef WAVES
#define WAVES 2         // host-only (smallm.c's K slices, never passed here): waves to fill
#endif
#ifndef CLUSTER
#define CLUSTER 0       // 1 (sm_90): a tile's K slices (2..8) are one thread-block cluster that
                        // sums their partial tiles from each other's shared memory; 0: global
#endif

#define SM_THREADS (WARPS * 32)
#define SM_CDIV(a, b) (((a) + (b) - 1) / (b))

#if TYPE == 2
// ---- TYPE 2 geometry: FP32 elements, FFMA ----
// A block computes MT rows x BN columns of C (the row-major canonical form, or of C^T for a
// mirrored problem: c_transposed). Each K group of SM_THREADS / KW threads takes BK / KW of a
// stage's K steps; each of its threads TN columns (OPB 0: TN adjacent ones, vector reads of
// shared memory; OPB 1: every SMF_GROUP-th, 16-byte reads along k) x all MT rows, four K steps
// at a time: per step TN values of B and, per group of 4 rows inside m, 4 of A (the same
// address in every lane: broadcast), then 4 x 4 x TN FFMA.
typedef float sm_elem;
#define SM_ESZ 4                        // bytes of an element
#define SMF_GROUP (SM_THREADS / KW)     // threads of one K group (along n)
#define SMF_TN (BN / SMF_GROUP)         // columns of C per thread: 1, 2 or 4
#define SMF_KG (BK / KW)                // K steps of a stage per K group, a multiple of 4

// Shared-memory strides in floats: B's [n][k] rows padded by 4 so that 8 lanes' 16-byte reads of
// 8 rows fall on 8 different 16-byte bank groups; B's [k][n] and A (read by all lanes at one
// address) unpadded.
#if OPB
#define SM_B_ROWS BN                    // B tile as stored: [n][k]
#define SM_B_STRIDE (BK + 4)
#else
#define SM_B_ROWS BK                    // [k][n]
#define SM_B_STRIDE BN
#endif
#if OPA
#define SM_A_ROWS BK                    // A tile as stored: [k][m]
#define SM_A_STRIDE MT
#else
#define SM_A_ROWS MT                    // [m][k]
#define SM_A_STRIDE BK
#endif

#else
// ---- TYPE 0 and 1 geometry: 16-bit elements, mma.sync ----
// The warps split the block's BN rows of C^T (SM_NWARPS warps along n) and each stage's k16
// steps (KW groups of them); each warp holds SM_N16 x SM_M8 mma tiles of 16 x 8.
typedef unsigned short sm_elem;
#define SM_ESZ 2                        // bytes of an element
#define SM_NWARPS (WARPS / KW)          // warps along n
#define SM_WN (BN / SM_NWARPS)          // n rows (of C^T) per warp, a multiple of 16
#define SM_N16 (SM_WN / 16)
#define SM_M8 (MT / 8)

// Shared-memory strides in elements (rows of 16 bytes padded so that the 8 row addresses of an
// ldmatrix fall on 8 different 16-byte bank groups: an odd number of 16-byte units per row).
#if OPB
#define SM_B_ROWS BN                    // B tile as stored: [n][k]
#define SM_B_STRIDE (BK + 8)
#else
#define SM_B_ROWS BK                    // [k][n]
#define SM_B_STRIDE (BN + 8)
#endif
#if OPA
#define SM_A_ROWS BK                    // A tile as stored: [k][m]
#define SM_A_STRIDE (MT == 8 ? 8 : MT + 8)
#else
#define SM_A_ROWS MT                    // [m][k]
#define SM_A_STRIDE (BK + 8)
#endif
#endif  // TYPE

#define SM_B_ELEMS (SM_B_ROWS * SM_B_STRIDE)
#define SM_A_ELEMS (SM_A_ROWS * SM_A_STRIDE)
#define SM_STAGE_ELEMS (SM_B_ELEMS + SM_A_ELEMS)
#define SM_RED_STRIDE (BN + 4)          // partial tiles [kw][m][n] in floats, rows padded
// bytes of dynamic shared memory (smallm.c computes the same): the stages, reused at the end
// for the KW groups' partial tiles
#define SM_PIPE_BYTES (STAGES * SM_STAGE_ELEMS * SM_ESZ)
#define SM_RED_BYTES (KW * MT * SM_RED_STRIDE * 4)
#define SM_SMEM_BYTES (SM_PIPE_BYTES > SM_RED_BYTES ? SM_PIPE_BYTES : SM_RED_BYTES)
// the last block's sum of the K slices' partial tiles: each thread copies up to SM_SUM_BATCH
// 16-byte pieces of them into its own share of the (then free) shared memory at once
#define SM_SUM_FIT (SM_SMEM_BYTES / SM_THREADS / 16)
#define SM_SUM_BATCH (SM_SUM_FIT > 32 ? 32 : SM_SUM_FIT)
static_assert(SM_SUM_FIT >= 1, "a 16-byte piece per thread fits the shared memory");

__device__ __forceinline__ unsigned sm_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// One chunk of VEC elements global -> shared: `avail` of them inside the matrix (the rest
// zero-filled). aligned: cp.async of VEC elements (16, 8 or 4 bytes; src-size avail elements,
// zero fill); else element by element (plain loads and stores: the stage is read only after a
// __syncthreads).
__device__ __forceinline__ void sm_chunk(sm_elem *dst, const sm_elem *src, int avail, int aligned)
{
    if (avail > VEC)
        avail = VEC;
    if (avail < 0)
        avail = 0;
    if (aligned) {
        unsigned d = sm_smem_addr(dst);
        int bytes = avail * SM_ESZ;
#if VEC * SM_ESZ == 16
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
                     "r"(bytes));
#elif VEC * SM_ESZ == 8
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src),
                     "r"(bytes));
#else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src),
                     "r"(bytes));
#endif
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++)
            dst[e] = e < avail ? src[e] : (sm_elem)0;
    }
}

__device__ __forceinline__ void sm_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void sm_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// One stage's tiles, global -> shared: B's K steps k0.. and columns col0.. (BK x BN as op(B)), A's
// rows row0.. and K steps k0.. (MT x BK as op(A)), in chunks of VEC along each operand's
// contiguous dimension, every thread a share of the chunks.
__device__ __forceinline__ void sm_load_stage(sm_elem *Bs, sm_elem *As, const sm_elem *A,
                                              const sm_elem *B, long long lda, long long ldb,
                                              int m, int n, int k, int row0, int col0, int k0,
                                              int va, int vb)
{
    const int t = threadIdx.x;
#if OPB
    // stored n x k: rows j, contiguous along k
    for (int c = t; c < BN * (BK / VEC); c += SM_THREADS) {
        int j = c / (BK / VEC), kk = (c % (BK / VEC)) * VEC;
        int gj = col0 + j, gk = k0 + kk;
        int avail = gj < n ? k - gk : 0;
        const sm_elem *src = avail > 0 ? B + (long long)gj * ldb + gk : B;
        sm_chunk(Bs + j * SM_B_STRIDE + kk, src, avail, vb);
    }
#else
    // k x n: rows kk, contiguous along n
    for (int c = t; c < BK * (BN / VEC); c += SM_THREADS) {
        int kk = c / (BN / VEC), j = (c % (BN / VEC)) * VEC;
        int gj = col0 + j, gk = k0 + kk;
        int avail = gk < k ? n - gj : 0;
        const sm_elem *src = avail > 0 ? B + (long long)gk * ldb + gj : B;
        sm_chunk(Bs + kk * SM_B_STRIDE + j, src, avail, vb);
    }
#endif
#if OPA
    // stored k x m: rows kk, contiguous along m
    for (int c = t; c < BK * (MT / VEC); c += SM_THREADS) {
        int kk = c / (MT / VEC), i = (c % (MT / VEC)) * VEC;
        int gi = row0 + i, gk = k0 + kk;
        int avail = gk < k ? m - gi : 0;
        const sm_elem *src = avail > 0 ? A + (long long)gk * lda + gi : A;
        sm_chunk(As + kk * SM_A_STRIDE + i, src, avail, va);
    }
#else
    // m x k: rows i, contiguous along k
    for (int c = t; c < MT * (BK / VEC); c += SM_THREADS) {
        int i = c / (BK / VEC), kk = (c % (BK / VEC)) * VEC;
        int gi = row0 + i, gk = k0 + kk;
        int avail = gi < m ? k - gk : 0;
        const sm_elem *src = avail > 0 ? A + (long long)gi * lda + gk : A;
        sm_chunk(As + i * SM_A_STRIDE + kk, src, avail, va);
    }
#endif
}

#if TYPE == 2
// ---- TYPE 2: a thread's columns and its partial tile (the FFMA products: in the kernel) ----

// The column (inside the block's BN) of a thread's c-th column.
__device__ __forceinline__ int smf_col(int tn, int c)
{
#if OPB
    return tn + c * SMF_GROUP;
#else
    return tn * SMF_TN + c;
#endif
}

// The K group's partial tile into shared memory as [kw][m][n].
__device__ __forceinline__ void smf_partials_to_shared(float *red, float (*acc)[SMF_TN], int kw,
                                                       int tn)
{
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int c = 0; c < SMF_TN; c++)
            red[(kw * MT + i) * SM_RED_STRIDE + smf_col(tn, c)] = acc[i][c];
}

#else
// ---- TYPE 0 and 1: the mma, its fragments and the partial tiles ----

__device__ __forceinline__ void sm_ldmatrix_x4(unsigned *r, const sm_elem *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(sm_smem_addr(p)));
}

__device__ __forceinline__ void sm_ldmatrix_x4_trans(unsigned *r, const sm_elem *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(sm_smem_addr(p)));
}

__device__ __forceinline__ void sm_ldmatrix_x2(unsigned *r, const sm_elem *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(sm_smem_addr(p)));
}

__device__ __forceinline__ void sm_ldmatrix_x2_trans(unsigned *r, const sm_elem *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(sm_smem_addr(p)));
}

// d += a (16 x 16, rows n of C^T, "row") * b (16 x 8, k by m, "col"), FP32 accumulation.
__device__ __forceinline__ void sm_mma(float *d, const unsigned *a, const unsigned *b)
{
#if TYPE == 1
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// The mma fragments of one k16 step at stage offset kb:
// op(A)^T (k x m) as the mma's "col" B operand, two registers per m8 tile: matrices (m8 tile,
// k 0-7) and (m8 tile, k 8-15) of A's [m][k] storage (plain), or of its [k][m] storage (trans).
__device__ __forceinline__ void sm_frag_a(unsigned (*fa)[2], const sm_elem *As, int kb, int lane)
{
    const int j = lane >> 3, r = lane & 7;
#if SM_M8 == 1
#if OPA
    unsigned q[2];
    sm_ldmatrix_x2_trans(q, As + (kb + (j & 1) * 8 + r) * SM_A_STRIDE);
#else
    unsigned q[2];
    sm_ldmatrix_x2(q, As + r * SM_A_STRIDE + kb + (j & 1) * 8);
#endif
    fa[0][0] = q[0];
    fa[0][1] = q[1];
#else
#pragma unroll
    for (int p = 0; p < SM_M8 / 2; p++) {
        unsigned q[4];
        // matrices: (m8 tile 2p, k 0-7), (2p, k 8-15), (2p + 1, k 0-7), (2p + 1, k 8-15)
#if OPA
        sm_ldmatrix_x4_trans(q, As + (kb + (j & 1) * 8 + r) * SM_A_STRIDE + (2 * p + (j >> 1)) * 8);
#else
        sm_ldmatrix_x4(q, As + ((2 * p + (j >> 1)) * 8 + r) * SM_A_STRIDE + kb + (j & 1) * 8);
#endif
        fa[2 * p][0] = q[0];
        fa[2 * p][1] = q[1];
        fa[2 * p + 1][0] = q[2];
        fa[2 * p + 1][1] = q[3];
    }
#endif
}

// op(B)^T (n x k) rows nb.. as the mma's "row" A operand: matrices (n 0-7, k 0-7), (n 8-15,
// k 0-7), (n 0-7, k 8-15), (n 8-15, k 8-15) of B's [n][k] storage (plain) or [k][n] (trans).
__device__ __forceinline__ void sm_frag_b(unsigned *fb, const sm_elem *Bs, int nb, int kb,
                                          int lane)
{
    const int j = lane >> 3, r = lane & 7;
#if OPB
    sm_ldmatrix_x4(fb, Bs + (nb + (j & 1) * 8 + r) * SM_B_STRIDE + kb + (j >> 1) * 8);
#else
    sm_ldmatrix_x4_trans(fb, Bs + (kb + (j >> 1) * 8 + r) * SM_B_STRIDE + nb + (j & 1) * 8);
#endif
}

// The warp's partial tiles into shared memory as [kw][m][n]: d0, d1 at n = g, m = 2 tg,
// 2 tg + 1; d2, d3 at n = g + 8.
__device__ __forceinline__ void sm_partials_to_shared(float *red, float (*acc)[SM_M8][4], int kw,
                                                      int wn, int lane)
{
    const int g = lane >> 2, tg = lane & 3;
#pragma unroll
    for (int a = 0; a < SM_N16; a++)
#pragma unroll
        for (int b = 0; b < SM_M8; b++) {
            int nn = wn * SM_WN + a * 16 + g, mm = b * 8 + 2 * tg;
            float *r = red + (kw * MT + mm) * SM_RED_STRIDE + nn;
            r[0] = acc[a][b][0];
            r[SM_RED_STRIDE] = acc[a][b][1];
            r[8] = acc[a][b][2];
            r[SM_RED_STRIDE + 8] = acc[a][b][3];
        }
}
#endif  // TYPE

// ---- common to both: C's elements and stores ----

// C element o of a tile of `rows` rows (the summing order of the partials and the stores):
// row-major C along the tile's rows; a transposed C (a mirrored FP32 problem) along its
// columns, so that neighbouring threads store neighbouring addresses either way.
__device__ __forceinline__ void sm_element(int o, int rows, int c_transposed, int *i, int *j)
{
    if (c_transposed) {
        *i = o % rows;
        *j = o / rows;
    } else {
        *i = o / BN;
        *j = o % BN;
    }
}

#if TYPE != 2
// A 16-bit element's value.
__device__ __forceinline__ float sm_to_float(sm_elem v)
{
#if TYPE == 1
    return __uint_as_float((unsigned)v << 16);
#else
    float f;
    asm("{ .reg .b16 h; mov.b16 h, %1; cvt.f32.f16 %0, h; }" : "=f"(f) : "h"(v));
    return f;
#endif
}

// Rounds to the element type (to nearest even).
__device__ __forceinline__ sm_elem sm_from_float(float f)
{
    unsigned short h;
#if TYPE == 1
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
#else
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
#endif
    return h;
}
#endif

// *c = alpha * v + beta * *c in the element type (16-bit: rounded to nearest even); beta 0
// never reads C.
__device__ __forceinline__ void sm_store(sm_elem *c, float v, float alpha, float beta)
{
    float r = alpha * v;
#if TYPE == 2
    if (beta != 0.0f)
        r = fmaf(beta, *c, r);
    *c = r;
#else
    if (beta != 0.0f)
        r += beta * sm_to_float(*c);
    *c = sm_from_float(r);
#endif
}

// C's element (i, j) of the tile at (row0, col0) (stored at C[j * ldc + i] where c_transposed),
// if inside n.
__device__ __forceinline__ void sm_write_c(sm_elem *C, long long ldc, int row0, int col0, int n,
                                           int i, int j, int c_transposed, float v, float alpha,
                                           float beta)
{
    int gi = row0 + i, gj = col0 + j;
    if (gj < n)
        sm_store(C + (c_transposed ? (long long)gj * ldc + gi : (long long)gi * ldc + gj), v,
                 alpha, beta);
}

#if CLUSTER
// The K slices of a tile are one cluster (1 x slices x 1, launched so by smallm.c; the block of
// slice q is the cluster's block of rank q): once every block's KW partial tiles are in its
// shared memory (red, [kw][m][n]), block q sums the q-th share of the tile's elements from all
// of them (ld.shared::cluster), each slice's KW groups in order and the slices in slice order
// (deterministic, as the global path), and stores C; the second barrier keeps every block's
// shared memory alive until all have read it.
__device__ __forceinline__ void sm_cluster_sum(const float *red, sm_elem *C, long long ldc,
                                               int row0, int col0, int n, int rows,
                                               int c_transposed, float alpha, float beta)
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
    const int slices = gridDim.y, elems = rows * BN;
    const int share = (elems + slices - 1) / slices;
    const int o1 = min(elems, ((int)blockIdx.y + 1) * share);
    const unsigned base = sm_smem_addr(red);
    for (int o = (int)blockIdx.y * share + (int)threadIdx.x; o < o1; o += SM_THREADS) {
        int i, j;
        sm_element(o, rows, c_transposed, &i, &j);
        // every slice's KW values in flight at once (at most 8 slices: predicated loads)
        float p[8][KW];
#pragma unroll
        for (int q = 0; q < 8; q++)
#pragma unroll
            for (int w = 0; w < KW; w++) {
                unsigned local = base + ((w * MT + i) * SM_RED_STRIDE + j) * 4, remote;
                float x = 0.0f;
                if (q < slices) {
                    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
                                 : "=r"(remote) : "r"(local), "r"(q));
                    asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(x) : "r"(remote));
                }
                p[q][w] = x;
            }
        float v = 0.0f;
#pragma unroll
        for (int q = 0; q < 8; q++) {
            float slice = 0.0f;
#pragma unroll
            for (int w = 0; w < KW; w++)
                slice += p[q][w];
            if (q < slices)
                v += slice;
        }
        sm_write_c(C, ldc, row0, col0, n, i, j, c_transposed, v, alpha, beta);
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
#endif

// Grid: x the C tiles of one product (m tiles fastest), y the K slices, z the products.
// steps_per_slice: K stages of one slice (the last may have fewer). With more than one slice
// each block writes its partial tile to work (tiles x slices x MT x BN floats, this launch's
// products); the last block of a tile to arrive (counters: one per tile, zero between calls)
// sums the slices in slice order and writes C. va, vb: A's and B's chunks may be loaded by
// cp.async (base, ld and batch stride aligned to VEC elements). TYPE 2's c_transposed: C's
// element (i, j) is at C[j * ldc + i] (a mirrored problem's C^T), else at C[i * ldc + j].
extern "C" __global__ void __launch_bounds__(SM_THREADS)
smallm_gemm(const sm_elem *__restrict__ A, const sm_elem *__restrict__ B, sm_elem *C,
            long long lda, long long ldb, long long ldc, long long sa, long long sb, long long sc,
            int m, int n, int k, float alpha, float beta, int steps_per_slice, int va, int vb,
            float *work, unsigned *counters
#if TYPE == 2
            , int c_transposed
#endif
            )
{
#if TYPE != 2
    const int c_transposed = 0;         // a 16-bit C is stored as it is
#endif
    extern __shared__ __align__(16) unsigned char sm_smem[];
    __shared__ int sm_last;
    sm_elem *stages = reinterpret_cast<sm_elem *>(sm_smem);
    float *red = reinterpret_cast<float *>(sm_smem);

    const int tiles_m = SM_CDIV(m, MT);
    const int row0 = (blockIdx.x % tiles_m) * MT, col0 = (blockIdx.x / tiles_m) * BN;
    const long long z = blockIdx.z;
    A += z * sa;
    B += z * sb;
    C += z * sc;

    const int t = threadIdx.x;
#if TYPE == 2
    const int kw = t / SMF_GROUP, tn = t % SMF_GROUP;
    const int rows = min(MT, m - row0);

    float acc[MT][SMF_TN];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int c = 0; c < SMF_TN; c++)
            acc[i][c] = 0.0f;
#else
    const int lane = t & 31, warp = t >> 5;
    const int wn = warp % SM_NWARPS, kw = warp / SM_NWARPS;

    float acc[SM_N16][SM_M8][4];
#pragma unroll
    for (int a = 0; a < SM_N16; a++)
#pragma unroll
        for (int b = 0; b < SM_M8; b++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[a][b][e] = 0.0f;
#endif

    const int steps = SM_CDIV(k, BK);
    const int s0 = blockIdx.y * steps_per_slice;
    const int s1 = min(steps, s0 + steps_per_slice);
    const int count = s1 > s0 ? s1 - s0 : 0;

    // prologue: the first STAGES - 1 stages in flight (one commit group each, empty or not)
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < count) {
            sm_elem *st = stages + s * SM_STAGE_ELEMS;
            sm_load_stage(st, st + SM_B_ELEMS, A, B, lda, ldb, m, n, k, row0, col0,
                          (s0 + s) * BK, va, vb);
        }
        sm_commit();
    }
    for (int it = 0; it < count; it++) {
        sm_wait<STAGES - 2>();
        __syncthreads();
        // the buffer read in the previous step is free: the load STAGES - 1 steps ahead goes there
        int next = it + STAGES - 1;
        if (next < count) {
            sm_elem *st = stages + (next % STAGES) * SM_STAGE_ELEMS;
            sm_load_stage(st, st + SM_B_ELEMS, A, B, lda, ldb, m, n, k, row0, col0,
                          (s0 + next) * BK, va, vb);
        }
        sm_commit();
        const sm_elem *Bs = stages + (it % STAGES) * SM_STAGE_ELEMS;
        const sm_elem *As = Bs + SM_B_ELEMS;
#if TYPE == 2
        // FFMA: the K group's SMF_KG steps, four at a time, for the row groups of 4 inside m
#pragma unroll
        for (int q = 0; q < SMF_KG / 4; q++) {
            const int kc = kw * SMF_KG + q * 4;
            float b[SMF_TN][4];
#if OPB
#pragma unroll
            for (int c = 0; c < SMF_TN; c++) {
                float4 v = *reinterpret_cast<const float4 *>(
                    Bs + smf_col(tn, c) * SM_B_STRIDE + kc);
                b[c][0] = v.x;
                b[c][1] = v.y;
                b[c][2] = v.z;
                b[c][3] = v.w;
            }
#else
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float *src = Bs + (kc + e) * SM_B_STRIDE + tn * SMF_TN;
#if SMF_TN == 4
                float4 v = *reinterpret_cast<const float4 *>(src);
                b[0][e] = v.x;
                b[1][e] = v.y;
                b[2][e] = v.z;
                b[3][e] = v.w;
#elif SMF_TN == 2
                float2 v = *reinterpret_cast<const float2 *>(src);
                b[0][e] = v.x;
                b[1][e] = v.y;
#else
                b[0][e] = src[0];
#endif
            }
#endif
#pragma unroll
            for (int g = 0; g < MT / 4; g++) {
                if (g * 4 < rows) {
                    float a[4][4];          // [row][k step]
#pragma unroll
                    for (int e = 0; e < 4; e++) {
#if OPA
                        float4 v = *reinterpret_cast<const float4 *>(
                            As + (kc + e) * SM_A_STRIDE + g * 4);
                        a[0][e] = v.x;
                        a[1][e] = v.y;
                        a[2][e] = v.z;
                        a[3][e] = v.w;
#else
                        float4 v = *reinterpret_cast<const float4 *>(
                            As + (g * 4 + e) * SM_A_STRIDE + kc);
                        a[e][0] = v.x;
                        a[e][1] = v.y;
                        a[e][2] = v.z;
                        a[e][3] = v.w;
#endif
                    }
#pragma unroll
                    for (int e = 0; e < 4; e++)
#pragma unroll
                        for (int r = 0; r < 4; r++)
#pragma unroll
                            for (int c = 0; c < SMF_TN; c++)
                                acc[g * 4 + r][c] = fmaf(a[r][e], b[c][e], acc[g * 4 + r][c]);
                }
            }
        }
#else
        // mma: the warp's k16 steps of the stage (every KW-th) for its SM_N16 x SM_M8 tiles
#pragma unroll
        for (int q = 0; q < BK / 16 / KW; q++) {
            const int kb = (q * KW + kw) * 16;
            unsigned fa[SM_M8][2];
            sm_frag_a(fa, As, kb, lane);
#pragma unroll
            for (int a = 0; a < SM_N16; a++) {
                unsigned fb[4];
                sm_frag_b(fb, Bs, wn * SM_WN + a * 16, kb, lane);
#pragma unroll
                for (int b = 0; b < SM_M8; b++)
                    sm_mma(acc[a][b], fb, fa[b]);
            }
        }
#endif
    }
    sm_wait<0>();
    __syncthreads();

    // the K groups' partial tiles meet in shared memory (the stages are no longer read)
#if TYPE == 2
    smf_partials_to_shared(red, acc, kw, tn);
#else
    sm_partials_to_shared(red, acc, kw, wn, lane);
#endif
    __syncthreads();

    // only the rows inside the matrix are summed, stored and written
#if TYPE != 2
    const int rows = min(MT, m - row0);
#endif
    const int elems = rows * BN;
    const int slices = gridDim.y;
    const long long tile = (long long)blockIdx.z * gridDim.x + blockIdx.x;
#if CLUSTER
    if (slices > 1) {
        sm_cluster_sum(red, C, ldc, row0, col0, n, rows, c_transposed, alpha, beta);
        return;
    }
#endif
    if (slices == 1) {
        for (int o = t; o < elems; o += SM_THREADS) {
            int i, j;
            sm_element(o, rows, c_transposed, &i, &j);
            float v = 0.0f;
#pragma unroll
            for (int q = 0; q < KW; q++)
                v += red[(q * MT + i) * SM_RED_STRIDE + j];
            sm_write_c(C, ldc, row0, col0, n, i, j, c_transposed, v, alpha, beta);
        }
        return;
    }
    // K slices: each block writes its partial tile as float4 groups of 4 elements (elems is a
    // multiple of 4: BN is of 16); the last block of the tile to arrive sums them
    const int groups = elems / 4;
    float4 *mine = reinterpret_cast<float4 *>(work + (tile * slices + blockIdx.y) * (MT * BN));
    for (int g = t; g < groups; g += SM_THREADS) {
        float4 w = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        int i, j;
        sm_element(4 * g, rows, c_transposed, &i, &j);
        if (!c_transposed) {
            // 4 neighbours in one row of the partial tiles (16-byte aligned: BN + 4 and j of 4)
#pragma unroll
            for (int q = 0; q < KW; q++) {
                float4 r = *reinterpret_cast<const float4 *>(
                    red + (q * MT + i) * SM_RED_STRIDE + j);
                w.x += r.x;
                w.y += r.y;
                w.z += r.z;
                w.w += r.w;
            }
        } else {
            float r[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                sm_element(4 * g + e, rows, c_transposed, &i, &j);
                r[e] = 0.0f;
#pragma unroll
                for (int q = 0; q < KW; q++)
                    r[e] += red[(q * MT + i) * SM_RED_STRIDE + j];
            }
            w = make_float4(r[0], r[1], r[2], r[3]);
        }
        __stcg(mine + g, w);
    }
    __threadfence();
    __syncthreads();
    if (t == 0)
        sm_last = atomicAdd(counters + tile, 1u) == (unsigned)(slices - 1);
    __syncthreads();
    if (!sm_last)
        return;
    __threadfence();
    // the thread's groups (t, t + SM_THREADS, ...) x the slices, in that order, SM_SUM_BATCH
    // pieces at a time: all copied to the thread's own shared memory by cp.async (no registers
    // held per load: every piece of a batch in flight at once, one L2 round trip per batch;
    // the m <= 16 built-in rows' tiles take one batch: 2 groups x 6 slices at m = 8, 1 x 3 at
    // m = 16), then each group's pieces added in slice order from zero (deterministic) and
    // written. The loop of one element per thread that this replaces took a round trip per 4
    // slices and element: 16 of them at m = 8 x 8192 x 8192 (about 7 us of a 50 us call).
    const float *part = work + tile * slices * (MT * BN);
    const int pieces = (groups > t ? (groups - 1 - t) / SM_THREADS + 1 : 0) * slices;
    const unsigned mine_smem = sm_smem_addr(sm_smem) + t * (SM_SUM_BATCH * 16);
    const float4 *mine_pieces = reinterpret_cast<const float4 *>(sm_smem) + t * SM_SUM_BATCH;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    int g = t, q = 0;               // the group and slice of the next piece to add
    for (int b0 = 0; b0 < pieces; b0 += SM_SUM_BATCH) {
        const int nb = min(SM_SUM_BATCH, pieces - b0);
        for (int b = 0, bg = g, bq = q; b < nb; b++) {
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(mine_smem + b * 16),
                         "l"(part + (long long)bq * (MT * BN) + 4 * bg));
            if (++bq == slices) {
                bq = 0;
                bg += SM_THREADS;
            }
        }
        sm_commit();
        sm_wait<0>();
        for (int b = 0; b < nb; b++) {
            float4 x = mine_pieces[b];
            if (q == 0)
                v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            v.x += x.x;
            v.y += x.y;
            v.z += x.z;
            v.w += x.w;
            if (++q == slices) {
                float w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    int i, j;
                    sm_element(4 * g + e, rows, c_transposed, &i, &j);
                    sm_write_c(C, ldc, row0, col0, n, i, j, c_transposed, w[e], alpha, beta);
                }
                q = 0;
                g += SM_THREADS;
            }
        }
    }
    if (t == 0)
        counters[tile] = 0;
}
