// matmul.cu: the matmul family, C = alpha*A*B + beta*C (FP32, IEEE FFMA, row-major,
// any M, N, K and leading dimensions): the seeds' naive and tiled kernels and a tuned one.

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
#define VEC 4           // ALGO 2: 4 = 16-byte loads/stores of B and C where alignment allows, 1 = 4-byte only
#endif
#ifndef PAD
#define PAD 4           // ALGO 2: floats of padding per shared-memory row against bank conflicts (0, 4)
#endif
#ifndef SPLITK
#define SPLITK 1        // ALGO 2: K split across blocks, partials summed by a second kernel (1..16)
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

__device__ __forceinline__ unsigned mm_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// Copies `bytes` (0..cp) of src to dst and zero-fills the rest of the cp bytes.
__device__ __forceinline__ void mm_cp4(float *dst, const float *src, int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(mm_smem_addr(dst)), "l"(src), "r"(bytes));
#else
    *dst = bytes ? *src : 0.0f;
#endif
}

__device__ __forceinline__ void mm_cp16(float *dst, const float *src, int bytes)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(mm_smem_addr(dst)), "l"(src), "r"(bytes));
#else
    for (int i = 0; i < 4; i++)
        dst[i] = 4 * i < bytes ? src[i] : 0.0f;
#endif
}

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

// Queues the copy of K step [k0, k0 + BK) (clipped at kend) into stage buffer s.
__device__ __forceinline__ void mm_load_tile(float *s, const float *__restrict__ A, int lda,
                                             const float *__restrict__ B, int ldb,
                                             int M, int N, int m0, int n0, int k0, int kend,
                                             int vec_b)
{
    float *As = s;
    float *Bs = s + BK * AS_LD;
    int tid = threadIdx.x;
    // A: element e -> (m = e / BK, k = e % BK); consecutive lanes read consecutive k
    // of one row (coalesced) and store them transposed into As[k][m].
#pragma unroll
    for (int i = 0; i < MM_CDIV(BM * BK, NTHREADS); i++) {
        int e = tid + i * NTHREADS;
        if ((BM * BK) % NTHREADS == 0 || e < BM * BK) {
            int m = e / BK, k = e % BK;
            int gm = m0 + m, gk = k0 + k;
            int ok = gm < M && gk < kend;
            const float *src = ok ? A + (long long)gm * lda + gk : A;
            mm_cp4(As + k * AS_LD + m, src, ok ? 4 : 0);
        }
    }
    // B: rows of the tile are contiguous in global memory.
    if (VEC == 4 && vec_b) {
#pragma unroll
        for (int i = 0; i < MM_CDIV(BK * BN / 4, NTHREADS); i++) {
            int e = tid + i * NTHREADS;
            if ((BK * BN / 4) % NTHREADS == 0 || e < BK * BN / 4) {
                int k = e / (BN / 4), n = (e % (BN / 4)) * 4;
                int gk = k0 + k, gn = n0 + n;
                int cnt = N - gn;
                cnt = cnt > 4 ? 4 : cnt;
                int ok = gk < kend && cnt > 0;
                const float *src = ok ? B + (long long)gk * ldb + gn : B;
                mm_cp16(Bs + k * BS_LD + n, src, ok ? 4 * cnt : 0);
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < MM_CDIV(BK * BN, NTHREADS); i++) {
            int e = tid + i * NTHREADS;
            if ((BK * BN) % NTHREADS == 0 || e < BK * BN) {
                int k = e / BN, n = e % BN;
                int gk = k0 + k, gn = n0 + n;
                int ok = gk < kend && gn < N;
                const float *src = ok ? B + (long long)gk * ldb + gn : B;
                mm_cp4(Bs + k * BS_LD + n, src, ok ? 4 : 0);
            }
        }
    }
}

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

// Grid: (tiles of C, 1, SPLITK); block NTHREADS; dynamic shared memory
// STAGES * STAGE_FLOATS floats. flags bit 0: B allows 16-byte loads; bit 1: C (or W)
// allows 16-byte stores. With SPLITK > 1 the block writes its partial sum (unscaled)
// to W + z * M * N (leading dimension N) instead of C.
extern "C" __global__ void __launch_bounds__(NTHREADS)
matmul_tuned(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
             const float *__restrict__ B, int ldb, float beta, float *__restrict__ C, int ldc,
             float *__restrict__ W, int flags)
{
    extern __shared__ float4 mm_smem4[];
    float *smem = (float *)mm_smem4;

    // Grouped block order: GROUP_M block rows sweep the columns together (L2 reuse).
    int npm = MM_CDIV(M, BM), npn = MM_CDIV(N, BN);
    int pid = blockIdx.x;
    int in_group = GROUP_M * npn;
    int first_m = (pid / in_group) * GROUP_M;
    int gsize = npm - first_m < GROUP_M ? npm - first_m : GROUP_M;
    int pm = first_m + (pid % in_group) % gsize;
    int pn = (pid % in_group) / gsize;
    int m0 = pm * BM, n0 = pn * BN;

    // This split's K range, whole BK steps.
    int ksteps = MM_CDIV(K, BK);
    int per_split = MM_CDIV(ksteps, SPLITK);
    int kbeg = blockIdx.z * per_split * BK;
    int kend = kbeg + per_split * BK;
    kend = kend < K ? kend : K;
    int ntiles = kend > kbeg ? MM_CDIV(kend - kbeg, BK) : 0;

    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm0 = (warp / (BN / WN)) * WM;
    int wn0 = (warp % (BN / WN)) * WN;
    int tm = lane / TPN, tn = lane % TPN;
    int vec_b = flags & 1;

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; i++)
#pragma unroll
        for (int j = 0; j < WNITER * TN; j++)
            acc[i][j] = 0.0f;

#if STAGES == 1
    for (int t = 0; t < ntiles; t++) {
        mm_load_tile(smem, A, lda, B, ldb, M, N, m0, n0, kbeg + t * BK, kend, vec_b);
        mm_commit();
        mm_wait<0>();
        __syncthreads();
        mm_compute_tile(smem, wm0, wn0, tm, tn, acc);
        __syncthreads();
    }
#else
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ntiles)
            mm_load_tile(smem + s * STAGE_FLOATS, A, lda, B, ldb, M, N, m0, n0,
                         kbeg + s * BK, kend, vec_b);
        mm_commit();
    }
    for (int t = 0; t < ntiles; t++) {
        mm_wait<STAGES - 2>();
        __syncthreads();    // step t landed for all; everyone finished step t - 1
        int next = t + STAGES - 1;
        if (next < ntiles)
            mm_load_tile(smem + (next % STAGES) * STAGE_FLOATS, A, lda, B, ldb, M, N, m0, n0,
                         kbeg + next * BK, kend, vec_b);
        mm_commit();
        mm_compute_tile(smem + (t % STAGES) * STAGE_FLOATS, wm0, wn0, tm, tn, acc);
    }
    mm_wait<0>();
#endif

    // Epilogue: 16-byte stores where the row segment is whole and aligned.
    int vec_c = (flags & 2) && VEC == 4;
    float *out = C;
    int ldo = ldc;
    if (SPLITK > 1) {
        out = W + (long long)blockIdx.z * M * N;
        ldo = N;
    }
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
                    if (SPLITK > 1) {
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

// Split-K second pass: C = alpha * sum_z W[z] + beta * C, summed in a fixed order.
extern "C" __global__ void __launch_bounds__(256)
matmul_splitk_reduce(int M, int N, int splits, float alpha, const float *__restrict__ W,
                     float beta, float *__restrict__ C, int ldc)
{
    long long total = (long long)M * N;
    for (long long e = blockIdx.x * 256LL + threadIdx.x; e < total;
         e += (long long)gridDim.x * 256) {
        float s = 0.0f;
        for (int z = 0; z < splits; z++)
            s += W[z * total + e];
        long long m = e / N, n = e % N;
        float *c = C + m * ldc + n;
        *c = mm_out(s, alpha, beta, c);
    }
}
#endif
