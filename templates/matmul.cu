// matmul.cu: the matmul family, C = alpha*op(A)*op(B) + beta*C (FP32, IEEE FFMA, row-major,
// any M, N, K and leading dimensions, op N or T on each operand (OPA, OPB; the seeds: N only),
// batches of products along grid y): the seeds' naive and tiled kernels and a tuned one.

// ---- tunables (the descriptor templates/matmul.c passes every one as -D) ----
#ifndef ALGO
#define ALGO 2          // algorithm: 0 seed naive, 1 seed tiled (shared memory), 2 register-tiled pipeline
#endif
#ifndef TILE
#define TILE 16         // ALGO 1: square tile edge = thread block edge (8, 16, 32)
#endif
#ifndef UNROLL
#define UNROLL 1        // ALGO 1: unroll factor of the inner product loop (1, 4; divides TILE)
#endif
#ifndef BM
#define BM 128          // ALGO 2: block tile rows of C (32..256, multiple of WM)
#endif
#ifndef BN
#define BN 128          // ALGO 2: block tile columns of C (32..256, multiple of WN)
#endif
#ifndef BK
#define BK 8            // ALGO 2: depth of one K step held in shared memory (8, 16, 32)
#endif
#ifndef WM
#define WM 64           // ALGO 2: warp tile rows (32, 64, 128; divides BM)
#endif
#ifndef WN
#define WN 32           // ALGO 2: warp tile columns (32, 64, 128; divides BN)
#endif
#ifndef TM
#define TM 4            // ALGO 2: rows of a thread's register tile per warp iteration (4, 8)
#endif
#ifndef TN
#define TN 4            // ALGO 2: columns of a thread's register tile per warp iteration (4, 8)
#endif
#ifndef WNITER
#define WNITER 2        // ALGO 2: warp iterations along N (1, 2, 4); along M it follows from the rest
#endif
#ifndef STAGES
#define STAGES 3        // ALGO 2: shared-memory pipeline depth with cp.async (1..4; 1 = load, sync, compute)
#endif
#ifndef VEC
#define VEC 4           // ALGO 2: 4 = 16-byte copies of B (an unaligned B is first packed by matmul_pack_b) and 16-byte C stores where C allows; 1 = 4-byte only
#endif
#ifndef PAD
#define PAD 4           // ALGO 2: floats of padding per shared-memory row against bank conflicts (0, 4)
#endif
#ifndef SPLITK
#define SPLITK 1        // ALGO 2: K split across blocks, partials summed by a second kernel (1..16; run-time from 2: the count is the grid's z)
#endif
#ifndef FRAG
#define FRAG 0          // ALGO 2: 1 = double-buffered register fragments across the K-step barrier (STAGES >= 2), 0 = single
#endif
#ifndef FFMA
#define FFMA 0          // ALGO 2, FRAG=1: order of a K step's FFMAs over the lane's accumulators: 0 rows, 1 rows serpentine, 2 columns serpentine
#endif
#ifndef OPA
#define OPA 0           // ALGO 2: 0 = A stored M x K (op N), 1 = A stored K x M (op T: 16-byte loads along M)
#endif
#ifndef OPB
#define OPB 0           // ALGO 2: 0 = B stored K x N (op N), 1 = B stored N x K (op T: 4-byte loads, stored transposed)
#endif
#ifndef BATCH
#define BATCH 0         // ALGO 2: 1 = products of a strided batch along grid y; 0 = one product, no batch offsets (they cost 6% at NN 4096^3)
#endif
#ifndef CPS
#define CPS 0           // ALGO 2, FRAG=1: 0 = a K step's copies queued together after its last FFMAs; n > 0 = interior blocks (whole K steps) issue them spread over the first n kk of the next step, in the FFMAs' basic block
#endif
#ifndef SK
#define SK 0            // ALGO 2: 1 = stream-K: a persistent grid, full waves of tiles, the rest split evenly by K steps
#endif

#define MM_CDIV(a, b) (((a) + (b) - 1) / (b))

// Output epilogue shared by all kernels: beta == 0 never reads C (it may hold NaN).
__device__ __forceinline__ float mm_out(float acc, float alpha, float beta, const float *c)
{
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}

#if ALGO == 0
// Seed 1, version 0: one thread per element of C, 16x16 blocks, A and B straight from
// global memory (bounds-checked so any shape works).
extern "C" __global__ void __launch_bounds__(256)
matmul_naive(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
             const float *__restrict__ B, int ldb, float beta, float *__restrict__ C, int ldc)
{
    int col = blockIdx.x * 16 + threadIdx.x;
    int row = blockIdx.y * 16 + threadIdx.y;
    if (row >= M || col >= N)
        return;
    const float *a = A + (long long)row * lda;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc = fmaf(a[k], B[(long long)k * ldb + col], acc);
    float *c = C + (long long)row * ldc + col;
    *c = mm_out(acc, alpha, beta, c);
}
#endif

#if ALGO == 1
// Seeds 1 (version 1) and 2: each TILE x TILE block stages one tile of A and one of B in
// shared memory per phase, ceil(K / TILE) phases, zero-filled outside the matrix.
extern "C" __global__ void __launch_bounds__(TILE * TILE)
matmul_tiled(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
             const float *__restrict__ B, int ldb, float beta, float *__restrict__ C, int ldc)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(long long)row * lda + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(long long)(k0 + ty) * ldb + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k += UNROLL) {
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                acc = fmaf(As[ty][k + u], Bs[k + u][tx], acc);
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        float *c = C + (long long)row * ldc + col;
        *c = mm_out(acc, alpha, beta, c);
    }
}
#endif

#if ALGO == 2
// Register-tiled SGEMM. A BM x BN block tile of C is split into warp tiles WM x WN; a
// warp covers its tile in WMITER x WNITER steps of (TPM*TM) x (TPN*TN), each lane
// holding a TM x TN register tile per step (lanes laid out TPM x TPN). Per K step the
// block copies A (transposed: As[k][m]) and B (Bs[k][n]) into a STAGES-deep ring of
// shared-memory buffers with cp.async; the copies of later steps fly while this one is
// computed. Out-of-range elements are zero-filled by cp.async's src-size operand, so
// ragged M, N, K run the same code. SPLITK > 1 writes per-split partial sums to a
// workspace that matmul_splitk_reduce combines (deterministic, beta applied once).
#define NWARPS ((BM / WM) * (BN / WN))
#define NTHREADS (NWARPS * 32)
#define WMITER ((WM * WN) / (32 * TM * TN * WNITER))
#define WSUBM (WM / WMITER)
#define WSUBN (WN / WNITER)
#define TPN (WSUBN / TN)
#define TPM (WSUBM / TM)
#define AS_LD (BM + PAD)
#define BS_LD (BN + PAD)
#define STAGE_FLOATS (BK * AS_LD + BK * BS_LD)
#define GROUP_M 8       // block rows per L2 swizzle group
// Blocks per SM the register allocation must allow: 64-accumulator tiles get
// 2 blocks of 256 threads (128 registers) or 3 of 128 (168), larger ones 1.
// (STAGES = 1 is left unconstrained: there ptxas hoists fragment loads and spills.)
#define MINB ((WM * WN) / 32 <= 64 && STAGES > 1 ? (NTHREADS >= 256 ? 2 : 3) : 1)

__device__ __forceinline__ unsigned mm_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// Copies `bytes` (0 or 4) of src to shared float smem[off] (shared address
// sbase + 4 * off), zero-filling what is not copied.
__device__ __forceinline__ void mm_cp4(float *smem, unsigned sbase, int off, const float *src,
                                       int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(sbase + 4u * (unsigned)off), "l"(src), "r"(bytes));
#else
    smem[off] = bytes ? *src : 0.0f;
#endif
}

// 16-byte version: copies `bytes` (0..16) and zero-fills the rest; src 16-byte aligned.
__device__ __forceinline__ void mm_cp16(float *smem, unsigned sbase, int off, const float *src,
                                        int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(sbase + 4u * (unsigned)off), "l"(src), "r"(bytes));
#else
    for (int i = 0; i < 4; i++)
        smem[off + i] = 4 * i < bytes ? src[i] : 0.0f;
#endif
}

// Unpredicated versions for interior tiles: always copy the whole element / float4.
__device__ __forceinline__ void mm_cp4_full(float *smem, unsigned sbase, int off, const float *src)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n"
                 :: "r"(sbase + 4u * (unsigned)off), "l"(src));
#else
    smem[off] = *src;
#endif
}

__device__ __forceinline__ void mm_cp16_full(float *smem, unsigned sbase, int off, const float *src)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                 :: "r"(sbase + 4u * (unsigned)off), "l"(src));
#else
    *(float4 *)(smem + off) = *(const float4 *)src;
#endif
}

#if CPS > 0
// Interior copies with cp.async's ignore-src predicate: skip != 0 copies nothing from src (it
// is not read) and zero-fills the destination.
__device__ __forceinline__ void mm_cp4_ign(float *smem, unsigned sbase, int off, const float *src,
                                           int skip)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
                 " cp.async.ca.shared.global [%0], [%1], 4, p;\n}\n"
                 :: "r"(sbase + 4u * (unsigned)off), "l"(src), "r"(skip));
#else
    smem[off] = skip ? 0.0f : *src;
#endif
}

__device__ __forceinline__ void mm_cp16_ign(float *smem, unsigned sbase, int off, const float *src,
                                            int skip)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
                 " cp.async.cg.shared.global [%0], [%1], 16, p;\n}\n"
                 :: "r"(sbase + 4u * (unsigned)off), "l"(src), "r"(skip));
#else
    *(float4 *)(smem + off) = skip ? make_float4(0.0f, 0.0f, 0.0f, 0.0f) : *(const float4 *)src;
#endif
}
#endif

__device__ __forceinline__ void mm_commit(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N_PENDING>
__device__ __forceinline__ void mm_wait(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N_PENDING));
#endif
}

// Per-thread copy plan (valid() guarantees the divisions are exact).
#define A_ITERS (BM * BK / NTHREADS)        // 4-byte copies of A per thread per step
#define A_ROWSTEP (NTHREADS / BK)           // rows of A between them
#define B_VPR (BN / 4)                      // float4 per row of the B tile
#define BV_ITERS (BK * B_VPR / NTHREADS)    // 16-byte copies of B per thread per step
#define BV_ROWSTEP (NTHREADS / B_VPR)
#define BS_ITERS (BK * BN / NTHREADS)       // 4-byte copies of B (fallback path)
// OPA=1: A stored K x M, copied like B (float4 along M, 4-byte fallback when unaligned).
#define A_VPR (BM / 4)                      // float4 per K row of the A tile
#define AV_ITERS (BK * A_VPR / NTHREADS)
#define AV_ROWSTEP (NTHREADS / A_VPR)
// OPB=1: B stored N x K, copied like A of OPA=0 (4-byte along K, stored transposed).
#define BT_ITERS (BN * BK / NTHREADS)
#define BT_ROWSTEP (NTHREADS / BK)
#if OPA == 0
static_assert((BM * BK) % NTHREADS == 0 && NTHREADS % BK == 0, "A copies must split evenly");
#else
static_assert((BK * A_VPR) % NTHREADS == 0 && NTHREADS % A_VPR == 0 && (BM * BK) % NTHREADS == 0,
              "A copies must split evenly");
#endif
#if OPB == 0
static_assert((BK * B_VPR) % NTHREADS == 0 && NTHREADS % B_VPR == 0, "B copies must split evenly");
#else
static_assert((BN * BK) % NTHREADS == 0 && NTHREADS % BK == 0, "B copies must split evenly");
#endif
static_assert(FRAG == 0 || (STAGES >= 2 && BK % 2 == 0), "FRAG=1 needs a second stage buffer");
static_assert(BN % 4 == 0 && (BM + PAD) % 4 == 0 && (BN + PAD) % 4 == 0, "16-byte alignment");

// Multiplies one K step held in stage buffer s into the lane's accumulators.
__device__ __forceinline__ void mm_compute_tile(const float *s, int wm0, int wn0, int tm, int tn,
                                                float (&acc)[WMITER * TM][WNITER * TN])
{
    const float *As = s;
    const float *Bs = s + BK * AS_LD;
#pragma unroll
    for (int kk = 0; kk < BK; kk++) {
        float a[WMITER * TM], b[WNITER * TN];
#pragma unroll
        for (int wi = 0; wi < WMITER; wi++)
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                float4 v = *(const float4 *)(As + kk * AS_LD + wm0 + wi * WSUBM + tm * TM + i);
                a[wi * TM + i] = v.x;
                a[wi * TM + i + 1] = v.y;
                a[wi * TM + i + 2] = v.z;
                a[wi * TM + i + 3] = v.w;
            }
#pragma unroll
        for (int wj = 0; wj < WNITER; wj++)
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                float4 v = *(const float4 *)(Bs + kk * BS_LD + wn0 + wj * WSUBN + tn * TN + j);
                b[wj * TN + j] = v.x;
                b[wj * TN + j + 1] = v.y;
                b[wj * TN + j + 2] = v.z;
                b[wj * TN + j + 3] = v.w;
            }
#pragma unroll
        for (int i = 0; i < WMITER * TM; i++)
#pragma unroll
            for (int j = 0; j < WNITER * TN; j++)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// Origin (m0, n0) of block tile `tile` in the grouped order: GROUP_M block rows sweep
// the columns together (L2 reuse of B).
__device__ __forceinline__ void mm_tile_origin(int M, int N, int tile, int &m0, int &n0)
{
    int npm = MM_CDIV(M, BM), npn = MM_CDIV(N, BN);
    int in_group = GROUP_M * npn;
    int first_m = (tile / in_group) * GROUP_M;
    int gsize = npm - first_m < GROUP_M ? npm - first_m : GROUP_M;
    m0 = (first_m + (tile % in_group) % gsize) * BM;
    n0 = ((tile % in_group) / gsize) * BN;
}

// Where the calling lane's register tile sits in the block tile: warp origin
// (wm0, wn0) and lane position (tm, tn) in the warp's TPM x TPN lane grid.
__device__ __forceinline__ void mm_lane_origin(int &wm0, int &wn0, int &tm, int &tn)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    wm0 = (warp / (BN / WN)) * WM;
    wn0 = (warp % (BN / WN)) * WN;
    tm = lane / TPN;
    tn = lane % TPN;
}

// Accumulates the K range [kbeg, kend) (kbeg a multiple of BK) of block tile (m0, n0)
// into acc, which it zeroes first. flags bit 0: B allows 16-byte loads (OPB=0); bit 2: A
// allows 16-byte loads (OPA=1). Leaves every cp.async group complete; the caller separates
// two calls by a barrier.
__device__ __forceinline__ void mm_mainloop(int M, int N, const float *__restrict__ A, int lda,
                                            const float *__restrict__ B, int ldb, int flags,
                                            float *smem, int m0, int n0, int kbeg, int kend,
                                            float (&acc)[WMITER * TM][WNITER * TN])
{
    int ntiles = kend > kbeg ? MM_CDIV(kend - kbeg, BK) : 0;

    int wm0, wn0, tm, tn;
    mm_lane_origin(wm0, wn0, tm, tn);
    const int vec_b = flags & 1;
    const int vec_a = (flags & 4) != 0;

#pragma unroll
    for (int i = 0; i < WMITER * TM; i++)
#pragma unroll
        for (int j = 0; j < WNITER * TN; j++)
            acc[i][j] = 0.0f;
    // Copy plan: each thread's source pointers advance by one K step per tile;
    // rows/columns outside the matrix and the K tail are zero-filled.
    const int tid = threadIdx.x;
    const unsigned sbase = mm_smem_addr(smem);
#if OPA == 0
    const int a_k = tid % BK, a_m = tid / BK;
    const int a_mrem = M - m0 - a_m;                // row i is inside if i*A_ROWSTEP < a_mrem
    const float *a_ptr = A + (long long)(m0 + a_m) * lda + kbeg + a_k;
    const long long a_istep = (long long)A_ROWSTEP * lda;
#else
    const int a_k = tid / A_VPR, a_m = (tid % A_VPR) * 4;
    const int a_left = M - m0 - a_m;
    const int a_bytes = a_left >= 4 ? 16 : a_left > 0 ? 4 * a_left : 0;
    const float *a_ptr = A + (long long)(kbeg + a_k) * lda + m0 + a_m;
    const long long a_istep = (long long)AV_ROWSTEP * lda;
    const long long a_tstep = (long long)BK * lda;
#endif
#if OPB == 0
    const int b_k = tid / B_VPR, b_n = (tid % B_VPR) * 4;
    const int b_left = N - n0 - b_n;
    const int b_bytes = b_left >= 4 ? 16 : b_left > 0 ? 4 * b_left : 0;
    const float *b_ptr = B + (long long)(kbeg + b_k) * ldb + n0 + b_n;
    const long long b_istep = (long long)BV_ROWSTEP * ldb;
    const long long b_tstep = (long long)BK * ldb;
#else
    const int b_k = tid % BK, b_n = tid / BK;
    const int b_nrem = N - n0 - b_n;                // column i is inside if i*BT_ROWSTEP < b_nrem
    const float *b_ptr = B + (long long)(n0 + b_n) * ldb + kbeg + b_k;
    const long long b_istep = (long long)BT_ROWSTEP * ldb;
#endif

    // Interior blocks (block-uniform): every row of A and column of B inside the
    // matrix and B on the 16-byte path, so whole K steps copy without predicates,
    // zero-fill sizes or safe-pointer selects; only the ragged K tail and edge
    // blocks take the predicated path below.
    // FRAG=1 only: at FRAG=0 the extra path costs registers (ptxas -v, sm_90: 64x128
    // BK=16 tiles went from 157-162 registers to 168 with 40-60 bytes of spills).
    const bool interior = FRAG == 1 && VEC == 4 && (OPB == 1 || vec_b) && (OPA == 0 || vec_a) &&
                          m0 + BM <= M && n0 + BN <= N;

    // Queues the copies of K step [k0, k0 + BK) into stage buffer `stage`.
    auto load_tile = [&](int stage, int k0) {
        const int soff = stage * STAGE_FLOATS;
        if (interior && k0 + BK <= kend) {
#if OPA == 0
#pragma unroll
            for (int i = 0; i < A_ITERS; i++)
                mm_cp4_full(smem, sbase, soff + a_k * AS_LD + a_m + i * A_ROWSTEP,
                            a_ptr + i * a_istep);
            a_ptr += BK;
#else
#pragma unroll
            for (int i = 0; i < AV_ITERS; i++)
                mm_cp16_full(smem, sbase, soff + (a_k + i * AV_ROWSTEP) * AS_LD + a_m,
                             a_ptr + i * a_istep);
            a_ptr += a_tstep;
#endif
#if OPB == 0
#pragma unroll
            for (int i = 0; i < BV_ITERS; i++)
                mm_cp16_full(smem, sbase,
                             soff + BK * AS_LD + (b_k + i * BV_ROWSTEP) * BS_LD + b_n,
                             b_ptr + i * b_istep);
            b_ptr += b_tstep;
#else
#pragma unroll
            for (int i = 0; i < BT_ITERS; i++)
                mm_cp4_full(smem, sbase, soff + BK * AS_LD + b_k * BS_LD + b_n + i * BT_ROWSTEP,
                            b_ptr + i * b_istep);
            b_ptr += BK;
#endif
            return;
        }
#if OPA == 0
        const int a_kin = k0 + a_k < kend;
#pragma unroll
        for (int i = 0; i < A_ITERS; i++) {
            int ok = a_kin && i * A_ROWSTEP < a_mrem;
            mm_cp4(smem, sbase, soff + a_k * AS_LD + a_m + i * A_ROWSTEP,
                   ok ? a_ptr + i * a_istep : A, ok ? 4 : 0);
        }
        a_ptr += BK;
#else
        if (VEC == 4 && vec_a) {
#pragma unroll
            for (int i = 0; i < AV_ITERS; i++) {
                int ok = k0 + a_k + i * AV_ROWSTEP < kend && a_bytes;
                mm_cp16(smem, sbase, soff + (a_k + i * AV_ROWSTEP) * AS_LD + a_m,
                        ok ? a_ptr + i * a_istep : A, ok ? a_bytes : 0);
            }
            a_ptr += a_tstep;
        } else {
#pragma unroll
            for (int i = 0; i < A_ITERS; i++) {
                int e = tid + i * NTHREADS;
                int k = e / BM, m = e % BM;
                int gk = k0 + k, gm = m0 + m;
                int ok = gk < kend && gm < M;
                mm_cp4(smem, sbase, soff + k * AS_LD + m, ok ? A + (long long)gk * lda + gm : A,
                       ok ? 4 : 0);
            }
        }
#endif
#if OPB == 1
        const int b_kin = k0 + b_k < kend;
#pragma unroll
        for (int i = 0; i < BT_ITERS; i++) {
            int ok = b_kin && i * BT_ROWSTEP < b_nrem;
            mm_cp4(smem, sbase, soff + BK * AS_LD + b_k * BS_LD + b_n + i * BT_ROWSTEP,
                   ok ? b_ptr + i * b_istep : B, ok ? 4 : 0);
        }
        b_ptr += BK;
#else
        if (VEC == 4 && vec_b) {
#pragma unroll
            for (int i = 0; i < BV_ITERS; i++) {
                int ok = k0 + b_k + i * BV_ROWSTEP < kend && b_bytes;
                mm_cp16(smem, sbase, soff + BK * AS_LD + (b_k + i * BV_ROWSTEP) * BS_LD + b_n,
                        ok ? b_ptr + i * b_istep : B, ok ? b_bytes : 0);
            }
            b_ptr += b_tstep;
        } else {
#pragma unroll
            for (int i = 0; i < BS_ITERS; i++) {
                int e = tid + i * NTHREADS;
                int k = e / BN, n = e % BN;
                int gk = k0 + k, gn = n0 + n;
                int ok = gk < kend && gn < N;
                mm_cp4(smem, sbase, soff + BK * AS_LD + k * BS_LD + n,
                       ok ? B + (long long)gk * ldb + gn : B, ok ? 4 : 0);
            }
        }
#endif
    };

#if STAGES == 1
    for (int t = 0; t < ntiles; t++) {
        load_tile(0, kbeg + t * BK);
        mm_commit();
        mm_wait<0>();
        __syncthreads();
        mm_compute_tile(smem, wm0, wn0, tm, tn, acc);
        __syncthreads();
    }
#elif FRAG == 1
    // Fragments double-buffered in registers: fragment kk + 1 is read from shared
    // memory while kk is multiplied. The one barrier of a K step sits before the
    // last kk, whose fragments are already in registers: there step t + 1's first
    // fragments are read (their latency hidden by the last kk's FFMAs); after those
    // FFMAs the buffer of step t, read by nobody now, is refilled with step t + STAGES.
    // Group accounting: the prologue commits steps 0..STAGES-1, iteration t
    // commits step t + STAGES (possibly empty), so STAGES - 2 groups may stay
    // pending when step t + 1 must have landed.
    float fa[2][WMITER * TM], fb[2][WNITER * TN];
    auto load_frag = [&](float (&a)[WMITER * TM], float (&b)[WNITER * TN], const float *s,
                         int kk) {
        const float *As = s + kk * AS_LD + wm0 + tm * TM;
        const float *Bs = s + BK * AS_LD + kk * BS_LD + wn0 + tn * TN;
#pragma unroll
        for (int wi = 0; wi < WMITER; wi++)
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                float4 v = *(const float4 *)(As + wi * WSUBM + i);
                a[wi * TM + i] = v.x;
                a[wi * TM + i + 1] = v.y;
                a[wi * TM + i + 2] = v.z;
                a[wi * TM + i + 3] = v.w;
            }
#pragma unroll
        for (int wj = 0; wj < WNITER; wj++)
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                float4 v = *(const float4 *)(Bs + wj * WSUBN + j);
                b[wj * TN + j] = v.x;
                b[wj * TN + j + 1] = v.y;
                b[wj * TN + j + 2] = v.z;
                b[wj * TN + j + 3] = v.w;
            }
    };
    // One k step's FFMAs in the order FFMA picks (the SASS keeps it): it decides which
    // operands the register reuse caches can hold and where register banks collide.
    // Serpentine orders keep one operand across the turn of a row or column.
    auto ffma_step = [&](const float (&a)[WMITER * TM], const float (&b)[WNITER * TN]) {
#pragma unroll
        for (int l = 0; l < WMITER * TM * WNITER * TN; l++) {
            constexpr int NI = WMITER * TM, NJ = WNITER * TN;
            const int r0 = l / NJ, c0 = l % NJ, c1 = l / NI, r1 = l % NI;
            const int i = FFMA < 2 ? r0 : (c1 & 1) ? NI - 1 - r1 : r1;
            const int j = FFMA == 0 ? c0 : FFMA == 1 ? ((r0 & 1) ? NJ - 1 - c0 : c0) : c1;
            acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
    };
#if CPS > 0
    if (interior && (kend - kbeg) % BK == 0) {
        // Every K step whole and inside: iteration t copies step t + STAGES - 1 into the buffer
        // of step t - 1 (free since t - 1's barrier), copy c of the NCP at kk = c * CSLOTS / NCP,
        // with the FFMAs in one basic block (no branch; ignore-src past the last step), and
        // commits it before its own barrier. Same groups in flight as the loop below: the
        // prologue commits STAGES - 1, iteration t waits for step t + 1 with STAGES - 2 pending.
        constexpr int NCA = OPA == 0 ? A_ITERS : AV_ITERS;
        constexpr int NCP = NCA + (OPB == 1 ? BT_ITERS : BV_ITERS);
        constexpr int CSLOTS = CPS < BK - 1 ? CPS : BK - 1;
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < ntiles)
                load_tile(s, kbeg + s * BK);
            mm_commit();
        }
        if (ntiles > 0) {
            mm_wait<STAGES - 2>();
            __syncthreads();
            load_frag(fa[0], fb[0], smem, 0);
        }
        int rd_stage = 0, wr_stage = STAGES - 1;
        for (int t = 0; t < ntiles; t++) {
            const float *s = smem + rd_stage * STAGE_FLOATS;
            const int woff = wr_stage * STAGE_FLOATS;
            const int skip = t + STAGES - 1 >= ntiles;
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
                const int cur = kk & 1;
#pragma unroll
                for (int c = 0; c < NCP; c++) {
                    if (c * CSLOTS / NCP != kk)
                        continue;
                    if (c < NCA) {
#if OPA == 0
                        mm_cp4_ign(smem, sbase, woff + a_k * AS_LD + a_m + c * A_ROWSTEP,
                                   a_ptr + c * a_istep, skip);
#else
                        mm_cp16_ign(smem, sbase, woff + (a_k + c * AV_ROWSTEP) * AS_LD + a_m,
                                    a_ptr + c * a_istep, skip);
#endif
                    } else {
                        const int i = c - NCA;
#if OPB == 1
                        mm_cp4_ign(smem, sbase,
                                   woff + BK * AS_LD + b_k * BS_LD + b_n + i * BT_ROWSTEP,
                                   b_ptr + i * b_istep, skip);
#else
                        mm_cp16_ign(smem, sbase,
                                    woff + BK * AS_LD + (b_k + i * BV_ROWSTEP) * BS_LD + b_n,
                                    b_ptr + i * b_istep, skip);
#endif
                    }
                }
                if (kk < BK - 1) {
                    load_frag(fa[cur ^ 1], fb[cur ^ 1], s, kk + 1);
                } else {
                    mm_commit();
                    mm_wait<STAGES - 2>();
                    __syncthreads();
                    const int nx = rd_stage == STAGES - 1 ? 0 : rd_stage + 1;
                    load_frag(fa[cur ^ 1], fb[cur ^ 1], smem + nx * STAGE_FLOATS, 0);
                }
                ffma_step(fa[cur], fb[cur]);
            }
#if OPA == 0
            a_ptr += BK;
#else
            a_ptr += a_tstep;
#endif
#if OPB == 1
            b_ptr += BK;
#else
            b_ptr += b_tstep;
#endif
            rd_stage = rd_stage == STAGES - 1 ? 0 : rd_stage + 1;
            wr_stage = wr_stage == STAGES - 1 ? 0 : wr_stage + 1;
        }
        mm_wait<0>();
        return;
    }
#endif
#pragma unroll
    for (int s = 0; s < STAGES; s++) {
        if (s < ntiles)
            load_tile(s, kbeg + s * BK);
        mm_commit();
    }
    if (ntiles > 0) {
        mm_wait<STAGES - 1>();
        __syncthreads();
        load_frag(fa[0], fb[0], smem, 0);
    }
    int rd_stage = 0;
    for (int t = 0; t < ntiles; t++) {
        const float *s = smem + rd_stage * STAGE_FLOATS;
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            const int cur = kk & 1;
            if (kk < BK - 1) {
                load_frag(fa[cur ^ 1], fb[cur ^ 1], s, kk + 1);
            } else {
                mm_wait<STAGES - 2>();
                __syncthreads();    // step t + 1 landed; everyone is done reading step t
                // (after the last step this reads a stale buffer: harmless, unused, no branch)
                const int nx = rd_stage == STAGES - 1 ? 0 : rd_stage + 1;
                load_frag(fa[cur ^ 1], fb[cur ^ 1], smem + nx * STAGE_FLOATS, 0);
            }
            ffma_step(fa[cur], fb[cur]);
        }
        // Refill the buffer of step t (after the last FFMAs: fewer live registers).
        if (t + STAGES < ntiles)
            load_tile(rd_stage, kbeg + (t + STAGES) * BK);
        mm_commit();
        rd_stage = rd_stage == STAGES - 1 ? 0 : rd_stage + 1;
    }
    mm_wait<0>();
#else
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ntiles)
            load_tile(s, kbeg + s * BK);
        mm_commit();
    }
    int ld_stage = STAGES - 1, rd_stage = 0;
    for (int t = 0; t < ntiles; t++) {
        mm_wait<STAGES - 2>();
        __syncthreads();    // step t landed for all; everyone finished step t - 1
        if (t + STAGES - 1 < ntiles)
            load_tile(ld_stage, kbeg + (t + STAGES - 1) * BK);
        mm_commit();
        ld_stage = ld_stage == STAGES - 1 ? 0 : ld_stage + 1;
        mm_compute_tile(smem + rd_stage * STAGE_FLOATS, wm0, wn0, tm, tn, acc);
        rd_stage = rd_stage == STAGES - 1 ? 0 : rd_stage + 1;
    }
    mm_wait<0>();
#endif

}

// Writes the lane's accumulators of block tile (m0, n0) to out (leading dimension ldo):
// RAW stores them unscaled (split-K partials), else alpha * acc + beta * out (beta == 0
// never reads out). 16-byte stores where vec_c and the row segment is whole.
template <bool RAW>
__device__ __forceinline__ void mm_store_tile(const float (&acc)[WMITER * TM][WNITER * TN],
                                              int M, int N, float alpha, float beta,
                                              float *__restrict__ out, int ldo, int m0, int n0,
                                              int vec_c)
{
    int wm0, wn0, tm, tn;
    mm_lane_origin(wm0, wn0, tm, tn);
#pragma unroll
    for (int wi = 0; wi < WMITER; wi++)
#pragma unroll
        for (int i = 0; i < TM; i++) {
            int gm = m0 + wm0 + wi * WSUBM + tm * TM + i;
            if (gm >= M)
                continue;
            float *row = out + (long long)gm * ldo;
#pragma unroll
            for (int wj = 0; wj < WNITER; wj++)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    int gn = n0 + wn0 + wj * WSUBN + tn * TN + j;
                    const float *v = &acc[wi * TM + i][wj * TN + j];
                    if (RAW) {
                        if (vec_c && gn + 3 < N) {
                            *(float4 *)(row + gn) = make_float4(v[0], v[1], v[2], v[3]);
                        } else {
#pragma unroll
                            for (int q = 0; q < 4; q++)
                                if (gn + q < N)
                                    row[gn + q] = v[q];
                        }
                    } else if (vec_c && gn + 3 < N) {
                        float4 r;
                        if (beta == 0.0f) {
                            r = make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
                        } else {
                            float4 c = *(const float4 *)(row + gn);
                            r = make_float4(alpha * v[0] + beta * c.x, alpha * v[1] + beta * c.y,
                                            alpha * v[2] + beta * c.z, alpha * v[3] + beta * c.w);
                        }
                        *(float4 *)(row + gn) = r;
                    } else {
#pragma unroll
                        for (int q = 0; q < 4; q++)
                            if (gn + q < N)
                                row[gn + q] = mm_out(v[q], alpha, beta, row + gn + q);
                    }
                }
        }
}

#if SK == 0
// Grid: (tiles of C, products of the batch, SPLITK); block NTHREADS; dynamic shared memory
// STAGES * STAGE_FLOATS floats. flags bit 0: B allows 16-byte loads; bit 1: C (or W)
// allows 16-byte stores; bit 2: A allows 16-byte loads (OPA=1). Product y of the batch
// reads A + y * sA, B + y * sB and writes C + y * sC (strides in floats). With SPLITK > 1
// (one product) the block writes its partial sum (unscaled) to W + z * M * N (leading
// dimension N) instead of C. SPLITK is run-time from 2 (matmul.c): every split count
// compiles as SPLITK=2, the host launches the count as the grid's z and passes each
// split's whole K steps, per_split = ceil(ceil(K / BK) / splits), so the split
// configurations share one cubin.
extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
matmul_tuned(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
             const float *__restrict__ B, int ldb, float beta, float *__restrict__ C, int ldc,
             float *__restrict__ W, int flags, long long sA, long long sB, long long sC
#if SPLITK >= 2     // not "> 1": test_compile_kernels.c opens the split-K pass's guard by it
             , int per_split
#endif
             )
{
#if BATCH
    A += blockIdx.y * sA;
    B += blockIdx.y * sB;
    C += blockIdx.y * sC;
#endif
    extern __shared__ float4 mm_smem4[];
    float *smem = (float *)mm_smem4;
    int m0, n0;
    mm_tile_origin(M, N, blockIdx.x, m0, n0);

    // This split's K range, whole BK steps.
#if SPLITK == 1
    int ksteps = MM_CDIV(K, BK);
    int per_split = MM_CDIV(ksteps, SPLITK);
#endif
    int kbeg = blockIdx.z * per_split * BK;
    int kend = kbeg + per_split * BK;
    kend = kend < K ? kend : K;

    float acc[WMITER * TM][WNITER * TN];
    mm_mainloop(M, N, A, lda, B, ldb, flags, smem, m0, n0, kbeg, kend, acc);

    int vec_c = (flags & 2) && VEC == 4;
    if (SPLITK > 1)
        mm_store_tile<true>(acc, M, N, alpha, beta, W + (long long)blockIdx.z * M * N, N, m0,
                            n0, vec_c);
    else
        mm_store_tile<false>(acc, M, N, alpha, beta, C, ldc, m0, n0, vec_c);
}
#else
// Stream-K: a persistent grid of G blocks (one wave: SMs x blocks per SM). Tiles
// [0, dp_tiles) are data-parallel, block b taking b, b + G, ... (dp_tiles is a multiple
// of G). The K steps of tiles [dp_tiles, dp_tiles + sk_tiles) form one iteration space
// of sk_tiles * ksteps steps that the blocks split evenly in order, so every block
// does the same work and the last partial wave of tiles does not leave SMs idle. A
// tile whose steps fall to several blocks is combined without any waiting: each
// contributor stores its unscaled partial to its workspace slot (2 per block: the
// segment its range starts with, and the one it ends with), fences, and counts in on
// the tile's counter; the last to arrive adds all partials in block order (fixed, so
// the result is deterministic), applies alpha and beta, and resets the counter for
// the next call. Slots hold BM * BN floats in thread order (float4 q of thread t at
// (q * NTHREADS + t) * 4): coalesced, and only L2 ever sees them.
#define SK_ACC4 (WMITER * TM * WNITER * TN / 4)     // float4s of accumulators per thread

// The ranges split [0, iters) evenly in order: every block gets q = iters / G
// iterations, the first r = iters % G one more. 32-bit arithmetic only: a 64-bit
// division is a called subroutine, and a call with 128+ live accumulators spills.
__device__ __forceinline__ int mm_sk_begin(int q, int r, int b)
{
    return b * q + (b < r ? b : r);
}

// The block whose range holds iteration x.
__device__ __forceinline__ int mm_sk_owner(int q, int r, int x)
{
    const int split = r * (q + 1);
    return x < split ? x / (q + 1) : r + (x - split) / q;
}

// acc = (ADD ? acc + : ) the partial in workspace slot `slot` (thread order).
template <bool ADD>
__device__ __forceinline__ void mm_sk_read_partial(float (&acc)[WMITER * TM][WNITER * TN],
                                                   const float *__restrict__ W, int slot)
{
    const float4 *src = (const float4 *)(W + (long long)slot * (BM * BN)) + threadIdx.x;
#pragma unroll
    for (int q4 = 0; q4 < SK_ACC4; q4++) {
        float4 p = __ldcg(src + q4 * NTHREADS);
        float *v = &acc[(4 * q4) / (WNITER * TN)][(4 * q4) % (WNITER * TN)];
        v[0] = ADD ? v[0] + p.x : p.x;
        v[1] = ADD ? v[1] + p.y : p.y;
        v[2] = ADD ? v[2] + p.z : p.z;
        v[3] = ADD ? v[3] + p.w : p.w;
    }
}

// Work item w of block b (it: the next stream-K iteration of its range): the tile and
// its K steps [kb, ke). 0 when the block is done.
__device__ __forceinline__ int mm_sk_item(int w, int it, int b, int G, int dp_rounds,
                                          int dp_tiles, int ksteps, int q, int r, int &tile,
                                          int &kb, int &ke)
{
    if (w < dp_rounds) {
        tile = b + w * G;
        kb = 0;
        ke = ksteps;
        return 1;
    }
    const int end = mm_sk_begin(q, r, b + 1);
    if (it >= end)
        return 0;
    const int t = it / ksteps;
    kb = it - t * ksteps;
    ke = end - t * ksteps < ksteps ? end - t * ksteps : ksteps;
    tile = dp_tiles + t;
    return 1;
}

// Stores acc, unscaled, to workspace slot `slot` in thread order (the layout
// mm_sk_read_partial reads).
__device__ __forceinline__ void mm_sk_write_partial(const float (&acc)[WMITER * TM][WNITER * TN],
                                                    float *__restrict__ W, int slot)
{
    float4 *dst = (float4 *)(W + (long long)slot * (BM * BN)) + (int)threadIdx.x;
#pragma unroll
    for (int q4 = 0; q4 < SK_ACC4; q4++) {
        const float *v = &acc[(4 * q4) / (WNITER * TN)][(4 * q4) % (WNITER * TN)];
        __stcg(dst + q4 * NTHREADS, make_float4(v[0], v[1], v[2], v[3]));
    }
}

// The host passes ksteps = ceil(K / BK) and the split of the iters = sk_tiles * ksteps
// (< 2^31) stream-K iterations: q = iters / G >= 1 (no block has an empty range), r =
// iters % G (q = r = 0: no stream-K tiles); it guarantees dp_tiles % G == 0 and
// counters[0..sk_tiles) zero (the kernel leaves them zero).
// One loop serves both phases so the main loop is inlined once (registers).
extern "C" __global__ void __launch_bounds__(NTHREADS, MINB)
matmul_streamk(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
               const float *__restrict__ B, int ldb, float beta, float *__restrict__ C, int ldc,
               float *__restrict__ W, int *__restrict__ counters, int flags, int dp_tiles,
               int ksteps, int q, int r)
{
    extern __shared__ float4 mm_smem4[];
    __shared__ int last_arrival;
    float *smem = (float *)mm_smem4;
    const int G = gridDim.x, b = blockIdx.x, tid = threadIdx.x;
    const int dp_rounds = dp_tiles / G;
    float acc[WMITER * TM][WNITER * TN];

    // Work item w < dp_rounds: data-parallel tile b + w * G; after that the stream-K
    // segments, `it` being the next iteration of this block's range.
    int it = mm_sk_begin(q, r, b);
    for (int w = 0;; w++) {
        int tile, kb, ke;
        if (!mm_sk_item(w, it, b, G, dp_rounds, dp_tiles, ksteps, q, r, tile, kb, ke))
            break;
        int m0, n0;
        mm_tile_origin(M, N, tile, m0, n0);
        __syncthreads();    // the previous item's shared-memory reads are done
        mm_mainloop(M, N, A, lda, B, ldb, flags, smem, m0, n0, kb * BK,
                    ke * BK < K ? ke * BK : K, acc);
        if (w >= dp_rounds) {
            const int first = it == mm_sk_begin(q, r, b);
            it += ke - kb;
            if (kb != 0 || ke != ksteps) {
                // A partial tile: store this segment's sum to the slot of the segment
                // (the range's first or last), then count in on the tile's counter.
                const int t = tile - dp_tiles;
                mm_sk_write_partial(acc, W, 2 * b + !first);
                __threadfence();
                __syncthreads();
                const int tile_beg = t * ksteps;
                const int lo = mm_sk_owner(q, r, tile_beg);
                const int hi = mm_sk_owner(q, r, tile_beg + ksteps - 1);
                if (tid == 0) {
                    int arrived = atomicAdd(counters + t, 1);
                    last_arrival = arrived == hi - lo;
                    if (last_arrival)
                        counters[t] = 0;    // all have counted in: ready for the next call
                }
                __syncthreads();
                if (!last_arrival)
                    continue;
                __threadfence();
                // The last to arrive sums the partials in block order lo..hi: block lo's
                // is in acc already if that is this block, the others are read back.
                if (b != lo)
                    mm_sk_read_partial<false>(acc, W,
                                              2 * lo + (mm_sk_begin(q, r, lo) >= tile_beg ? 0 : 1));
#pragma unroll 1
                for (int c = lo + 1; c <= hi; c++)
                    mm_sk_read_partial<true>(acc, W, 2 * c);
            }
        }
        mm_store_tile<false>(acc, M, N, alpha, beta, C, ldc, m0, n0, (flags & 2) && VEC == 4);
    }
}
#endif

// Compiled only where the host can launch it (matmul.c): the pack with VEC 4, the split-K
// pass with SPLITK > 1; a configuration's compile skips the kernel it never runs (12% of a
// compile for the split-K pass: bench_compile --trace).
#if VEC == 4
// Packs B (K x N, leading dimension ldb, any alignment) into P with leading
// dimension ldp (a multiple of 4, P 16-byte aligned), zero-filling the padding,
// so matmul_tuned can take the 16-byte copy path for B. A thread owns 4 columns
// of a row (one float4 store); rows are strided over the grid.
extern "C" __global__ void __launch_bounds__(256)
matmul_pack_b(int K, int N, const float *__restrict__ B, int ldb, float *__restrict__ P,
              int ldp)
{
    int n = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (n >= ldp)
        return;
    for (int k = blockIdx.y * blockDim.y + threadIdx.y; k < K; k += gridDim.y * blockDim.y) {
        const float *b = B + (long long)k * ldb + n;
        float4 v;
        v.x = n < N ? b[0] : 0.0f;
        v.y = n + 1 < N ? b[1] : 0.0f;
        v.z = n + 2 < N ? b[2] : 0.0f;
        v.w = n + 3 < N ? b[3] : 0.0f;
        *(float4 *)(P + (long long)k * ldp + n) = v;
    }
}

#endif

#if SPLITK > 1
// Split-K second pass: C = alpha * sum_z W[z] + beta * C, summed in a fixed order.
// Blocks of 256 threads as blockDim.x column chunks x blockDim.y rows; a thread owns
// 4 adjacent columns (float4 loads and stores when vec: N % 4 == 0, C, ldc and W
// 16-byte aligned) or 1, rows strided over the grid: no 64-bit division per element.
extern "C" __global__ void __launch_bounds__(256)
matmul_splitk_reduce(int M, int N, int splits, float alpha, const float *__restrict__ W,
                     float beta, float *__restrict__ C, int ldc, int vec)
{
    const long long plane = (long long)M * N;
    if (vec) {
        int n = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
        if (n >= N)
            return;
        for (int m = blockIdx.y * blockDim.y + threadIdx.y; m < M; m += gridDim.y * blockDim.y) {
            const float *w = W + (long long)m * N + n;
            float4 s = *(const float4 *)w;
            for (int z = 1; z < splits; z++) {
                float4 v = *(const float4 *)(w + z * plane);
                s.x += v.x;
                s.y += v.y;
                s.z += v.z;
                s.w += v.w;
            }
            float *c = C + (long long)m * ldc + n;
            float4 r;
            if (beta == 0.0f) {
                r = make_float4(alpha * s.x, alpha * s.y, alpha * s.z, alpha * s.w);
            } else {
                float4 o = *(const float4 *)c;
                r = make_float4(alpha * s.x + beta * o.x, alpha * s.y + beta * o.y,
                                alpha * s.z + beta * o.z, alpha * s.w + beta * o.w);
            }
            *(float4 *)c = r;
        }
    } else {
        int n = blockIdx.x * blockDim.x + threadIdx.x;
        if (n >= N)
            return;
        for (int m = blockIdx.y * blockDim.y + threadIdx.y; m < M; m += gridDim.y * blockDim.y) {
            const float *w = W + (long long)m * N + n;
            float s = *w;
            for (int z = 1; z < splits; z++)
                s += w[z * plane];
            float *c = C + (long long)m * ldc + n;
            *c = mm_out(s, alpha, beta, c);
        }
    }
}
#endif
#endif
