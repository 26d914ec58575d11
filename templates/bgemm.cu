// bgemm.cu: the bgemm family, strided batched C_b = alpha*op(A_b)*op(B_b) + beta*C_b for many
// small matrices (FP32 FFMA; FP64 DFMA or DMMA tensor cores), row-major, any sizes and strides.

// ---- tunables (the descriptor templates/bgemm.c passes every one as -D) ----
#ifndef TYPE
#define TYPE 0          // element type of A, B, C, alpha, beta: 0 float, 1 double
#endif
#ifndef MMA
#define MMA 0           // 0 FMA on the CUDA cores; FP64 tensor cores (TYPE 1): 1 mma.sync m8n8k4 (sm_80+), 2 m16n8k4, 3 m16n8k8 (sm_90+)
#endif
#ifndef OPA
#define OPA 0           // 0: A_b is m x k (lda >= k); 1: A_b is stored k x m (op T, lda >= m)
#endif
#ifndef OPB
#define OPB 0           // 0: B_b is k x n (ldb >= n); 1: B_b is stored n x k (op T, ldb >= k)
#endif
#ifndef BM
#define BM 32           // rows of a product's C tile (16, 32, 64, 128)
#endif
#ifndef BN
#define BN 32           // columns of a product's C tile (16, 32, 64, 128)
#endif
#ifndef BK
#define BK 32           // depth of one shared-memory stage (8, 16, 32)
#endif
#ifndef G
#define G 1             // products a block computes at once, each by its own threads (1, 2, 4, 8)
#endif
#ifndef TM
#define TM 4            // MMA 0: rows of a thread's register tile; MMA 1, 2: mma tiles (8 or 16 rows) along M per warp
#endif
#ifndef TN
#define TN 4            // MMA 0: columns of a thread's register tile; MMA 1, 2: mma tiles (8 columns) along N per warp
#endif
#ifndef STAGES
#define STAGES 2        // cp.async stages in flight, across K steps and products (1 = load, wait, compute)
#endif
#ifndef VEC
#define VEC 4           // elements per global->shared copy along the contiguous dimension (16 bytes at most); 1 = element copies
#endif
#ifndef SYNC
#define SYNC 0          // 0: the block copies all G products' tiles and meets at __syncthreads; 1: each product's threads copy its own tiles and meet at their own barrier (bar.sync 1 + gi, TPP threads; __syncwarp where one warp computes a product)
#endif
#ifndef LDF
#define LDF 0           // 1: tiles wholly inside the operands are copied by a fast path (each thread's 16-byte copies at fixed offsets from its first: no per-copy index arithmetic or bounds checks)
#endif
#ifndef GRID
#define GRID 0          // host-only (bgemm.c's launch, never passed here): 0 persistent grid, 1 one block per work unit, 2 persistent with even turns; the kernel runs any grid
#endif
#ifndef MINB
#define MINB 1          // blocks per SM the kernel is compiled for (__launch_bounds__'s second argument: registers at most 64K / (MINB threads)); 1: no bound
#endif
#ifndef HINT
#define HINT 0          // 1: A and B 16-byte copies carry an L2 evict_first policy (read once) and C is stored with st.global.cs (streaming); 2: the copies' policy only
#endif

#if TYPE == 0
typedef float T;
#else
typedef double T;
#endif
#define ESZ (TYPE ? 8 : 4)            // bytes of an element
#define KV (16 / ESZ)                   // elements of one 16-byte shared-memory read
#define PADB (MMA ? 32 : 16)            // bytes of padding per shared row (bank spread)
#define PADE (PADB / ESZ)

// Shared tiles keep the layout of global memory (so copies are contiguous):
// A op N as As[BM][BK], op T as As[BK][BM]; B op N as Bs[BK][BN], op T as Bs[BN][BK].
#if OPA == 0
#define A_ROWS BM
#define A_COLS BK
#else
#define A_ROWS BK
#define A_COLS BM
#endif
#if OPB == 0
#define B_ROWS BK
#define B_COLS BN
#else
#define B_ROWS BN
#define B_COLS BK
#endif
#define A_LD (A_COLS + PADE)
#define B_LD (B_COLS + PADE)
#define A_TILE (A_ROWS * A_LD)
#define B_TILE (B_ROWS * B_LD)
#define STAGE_ELEMS (G * (A_TILE + B_TILE))

#if MMA == 0
#define TXN (BN / TN)                   // threads along N of one product
#define TPP ((BM / TM) * TXN)           // threads per product
#else
#define MR (MMA >= 2 ? 16 : 8)          // rows of one mma tile
#define MK (MMA == 3 ? 8 : 4)           // depth of one mma
#define FA (MR / 8 * MK / 4)            // A fragment doubles per lane: MMA 1 one, 2 two, 3 four
#define FB (MK / 4)                     // B fragment doubles per lane
#define WPM (BM / (MR * TM))            // warps along M of one product
#define WPN (BN / (8 * TN))
#define TPP (32 * WPM * WPN)
#endif
#define NT (G * TPP)                    // threads per block

#if MMA != 0 && TYPE != 1
#error "MMA 1..3 (DMMA) compute doubles only"
#endif
#if SYNC && TPP % 32
#error "SYNC 1 needs whole warps per product"
#endif
#if SYNC
#define LN TPP                          // threads that copy one set of tiles
#define LG 1                            // products in that set
#else
#define LN NT
#define LG G
#endif
#if BM % (MMA >= 2 ? 16 * TM : MMA ? 8 * TM : TM) || BN % (MMA ? 8 * TN : TN) || BK % (MMA ? MK : KV)
#error "tile sizes must divide evenly"
#endif

__device__ __forceinline__ unsigned bg_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// Copies BYTES (4, 8 or 16) from src to shared dst when valid, else fills them with zeros
// (cp.async's src-size operand; src is then not read).
template <int BYTES>
__device__ __forceinline__ void bg_copy(T *dst, const T *src, bool valid)
{
#if __CUDA_ARCH__ >= 800
    if (BYTES == 16) {
#if HINT
        unsigned long long pol;
        asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n"
                     :: "r"(bg_smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0), "l"(pol));
#else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                     :: "r"(bg_smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0));
#endif
    } else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n"
                     :: "r"(bg_smem_addr(dst)), "l"(src), "n"(BYTES), "r"(valid ? BYTES : 0));
#else
    for (int i = 0; i < BYTES / ESZ; i++)
        dst[i] = valid ? src[i] : (T)0;
#endif
}

__device__ __forceinline__ void bg_commit(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

template <int N_PENDING>
__device__ __forceinline__ void bg_wait(void)
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N_PENDING));
#endif
}

#ifdef BG_HOST_BAR
BG_HOST_BAR     // tests/bgemm_host.cpp: the per-product barrier emulated on the CPU
#else
// The barrier of the threads that share a stage's tiles: the block (SYNC 0), or product gi's
// TPP threads (SYNC 1: named barrier 1 + gi, or the warp where it computes the product alone;
// both order shared-memory accesses among their threads).
__device__ __forceinline__ void bg_bar(int gi)
{
#if SYNC == 0
    (void)gi;
    __syncthreads();
#elif TPP == 32
    (void)gi;
    __syncwarp();
#else
    // constant barrier ids (a register id makes ptxas reserve all 16 barriers)
#define BG_NBAR(q) if (G > q - 1 && gi == q - 1) \
        asm volatile("bar.sync " #q ", %0;\n" :: "n"(TPP) : "memory")
    BG_NBAR(1); else BG_NBAR(2); else BG_NBAR(3); else BG_NBAR(4); else BG_NBAR(5);
    else BG_NBAR(6); else BG_NBAR(7); else BG_NBAR(8);
#undef BG_NBAR
#endif
}
#endif

// One operand tile of ROWS x COLS elements for each of the LG products g0, ..., g0 + LG - 1
// of the block's group (SYNC 0: all G, by the block's threads; SYNC 1: product g0 alone, by
// its TPP threads, t its thread): element (r, c) of product b0 + gi is
// P[(b0 + gi) * stride + (r0 + r) * ld + c0 + c], zero where r0 + r >= rmax, c0 + c >= cmax
// or the product is past the batch. vec_ok: P, ld and stride allow VEC-element copies.
template <int ROWS, int COLS, int LD>
__device__ __forceinline__ void bg_load(T *s, const T *P, long long ld, long long stride,
                                        long long b0, long long batch, int r0, int rmax, int c0,
                                        int cmax, bool vec_ok, int t, int g0)
{
    constexpr int CV = COLS / VEC, PER = ROWS * CV;
#if LDF
    // Fast path (LDF 1) where every copy is a whole 16-byte one: the LG tiles inside the
    // operand and the batch, and each thread's copies PER / LN per product, RSTEP rows apart
    // in one column (LN a multiple of CV, PER of LN), so their addresses are the first's
    // plus constants (shared) and multiples of RSTEP ld (global).
    constexpr bool FAST = VEC > 1 && LN % CV == 0 && PER % LN == 0;
    if (FAST && vec_ok && b0 + g0 + LG <= batch && r0 + ROWS <= rmax && c0 + COLS <= cmax) {
        constexpr int PPT = PER / LN, RSTEP = LN / CV;
        const int rt = t / CV, ct = (t - rt * CV) * VEC;
        const T *g = P + (b0 + g0) * stride + (long long)(r0 + rt) * ld + c0 + ct;
        T *d = s + g0 * (ROWS * LD) + rt * LD + ct;
        const long long rs = RSTEP * ld;
#pragma unroll
        for (int q = 0; q < LG; q++)
#pragma unroll
            for (int j = 0; j < PPT; j++)
                bg_copy<VEC * ESZ>(d + q * (ROWS * LD) + j * (RSTEP * LD), g + q * stride + j * rs,
                                   true);
        return;
    }
#endif
#pragma unroll 4
    for (int v = t; v < LG * PER; v += LN) {
        int gi = g0 + v / PER, rem = v - (gi - g0) * PER;
        int r = rem / CV, c = (rem - r * CV) * VEC;
        T *d = s + gi * (ROWS * LD) + r * LD + c;
        long long b = b0 + gi;
        int row = r0 + r, col = c0 + c;
        bool rowok = b < batch && row < rmax;
        const T *g = rowok ? P + b * stride + (long long)row * ld + col : P;
        if (VEC > 1 && vec_ok && rowok && col + VEC <= cmax) {
            bg_copy<VEC * ESZ>(d, g, true);
        } else {
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                bool ok = rowok && col + e < cmax;
                bg_copy<ESZ>(d + e, ok ? g + e : P, ok);
            }
        }
    }
}

// N contiguous shared elements into registers, in aligned chunks of up to 16 bytes.
template <int BYTES>
struct alignas(BYTES) bg_chunk {
    T v[BYTES / ESZ];
};

template <int N>
__device__ __forceinline__ void bg_lds(T *dst, const T *src)
{
    constexpr int CB = N * ESZ < 16 ? N * ESZ : 16, CE = CB / ESZ;
#pragma unroll
    for (int c = 0; c < N; c += CE) {
        bg_chunk<CB> x = *reinterpret_cast<const bg_chunk<CB> *>(src + c);
#pragma unroll
        for (int e = 0; e < CE; e++)
            dst[c + e] = x.v[e];
    }
}

// Stores a chunk of C: st.global.cs (streaming, evict first) with HINT 1.
template <int CB>
__device__ __forceinline__ void bg_st(T *p, const bg_chunk<CB> &x)
{
#if HINT == 1 && defined(__CUDA_ARCH__)
    if (CB == 16)
        __stcs(reinterpret_cast<int4 *>(p), *reinterpret_cast<const int4 *>(&x));
    else if (CB == 8)
        __stcs(reinterpret_cast<int2 *>(p), *reinterpret_cast<const int2 *>(&x));
    else
        __stcs(reinterpret_cast<int *>(p), *reinterpret_cast<const int *>(&x));
#else
    *reinterpret_cast<bg_chunk<CB> *>(p) = x;
#endif
}

// Result element: beta == 0 never reads C (it may hold NaN).
__device__ __forceinline__ T bg_out(T acc, T alpha, T beta, const T *c)
{
    return beta == (T)0 ? alpha * acc : alpha * acc + beta * *c;
}

#if MMA == 0
// One stage of a product: acc += A tile x B tile; the thread owns rows ty*TM + i and columns
// tx*TN + j (op N B) or tx + j*TXN (op T B: neighbouring lanes read neighbouring rows).
__device__ __forceinline__ void bg_compute(const T *sA, const T *sB, T (&acc)[TM][TN], int ty,
                                           int tx)
{
#pragma unroll
    for (int kk = 0; kk < BK; kk += KV) {
        T a[TM][KV], b[KV][TN];
#if OPA == 0
#pragma unroll
        for (int i = 0; i < TM; i++)
            bg_lds<KV>(a[i], sA + (ty * TM + i) * A_LD + kk);
#else
#pragma unroll
        for (int q = 0; q < KV; q++) {
            T t[TM];
            bg_lds<TM>(t, sA + (kk + q) * A_LD + ty * TM);
#pragma unroll
            for (int i = 0; i < TM; i++)
                a[i][q] = t[i];
        }
#endif
#if OPB == 0
#pragma unroll
        for (int q = 0; q < KV; q++)
            bg_lds<TN>(b[q], sB + (kk + q) * B_LD + tx * TN);
#else
#pragma unroll
        for (int j = 0; j < TN; j++) {
            T t[KV];
            bg_lds<KV>(t, sB + (tx + j * TXN) * B_LD + kk);
#pragma unroll
            for (int q = 0; q < KV; q++)
                b[q][j] = t[q];
        }
#endif
#pragma unroll
        for (int q = 0; q < KV; q++)
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fma(a[i][q], b[q][j], acc[i][j]);
    }
}

// Writes the thread's tile of product tile (tm, tn) of C_b. vec_c: C, ldc and the batch
// stride allow 16-byte accesses.
__device__ __forceinline__ void bg_store(T *Cb, long long ldc, int m, int n, int row0, int col0,
                                         T (&acc)[TM][TN], T alpha, T beta, int ty, int tx,
                                         bool vec_c)
{
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int row = row0 + ty * TM + i;
        if (row >= m)
            continue;
        T *crow = Cb + (long long)row * ldc;
#if OPB == 0
        int c0 = col0 + tx * TN;
        constexpr int CB = TN * ESZ < 16 ? TN * ESZ : 16, CE = CB / ESZ;
        if (vec_c && c0 + TN <= n) {
#pragma unroll
            for (int c = 0; c < TN; c += CE) {
                bg_chunk<CB> x;
                if (beta != (T)0)
                    x = *reinterpret_cast<const bg_chunk<CB> *>(crow + c0 + c);
#pragma unroll
                for (int e = 0; e < CE; e++)
                    x.v[e] = beta == (T)0 ? alpha * acc[i][c + e]
                                          : alpha * acc[i][c + e] + beta * x.v[e];
                bg_st<CB>(crow + c0 + c, x);
            }
        } else {
#pragma unroll
            for (int j = 0; j < TN; j++)
                if (c0 + j < n)
                    crow[c0 + j] = bg_out(acc[i][j], alpha, beta, crow + c0 + j);
        }
#else
#pragma unroll
        for (int j = 0; j < TN; j++) {
            int col = col0 + tx + j * TXN;
            if (col < n)
                crow[col] = bg_out(acc[i][j], alpha, beta, crow + col);
        }
#endif
    }
}
#else
#ifdef BG_HOST_MMA
BG_HOST_MMA     // tests/bgemm_host.cpp: the instruction emulated on the CPU
#else
// d += a b for one mma tile: m8n8k4 (MMA 1), m16n8k4 (MMA 2) or m16n8k8 (MMA 3), FP64,
// fragments as below.
__device__ __forceinline__ void bg_mma(double (&d)[MR / 4], const double (&a)[FA],
                                       const double (&b)[FB])
{
#if MMA == 1
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, "
                 "{%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a[0]), "d"(b[0]));
#elif MMA == 2
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, "
                 "{%6}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#else
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#endif
}
#endif

// One stage of a product on the FP64 tensor cores: the warp's (MR TM) x (8 TN) tile from
// m8n8k4 (MMA 1), m16n8k4 (MMA 2) or m16n8k8 (MMA 3) fragments: A rows g = lane / 4 (and
// g + 8), column c = lane % 4 (and c + 4: MMA 3's a[2], a[3]); B row c (and c + 4), column g;
// C rows g (and g + 8), columns 2c and 2c + 1.
__device__ __forceinline__ void bg_compute(const T *sA, const T *sB,
                                           double (&acc)[TM][TN][MR / 4], int wm0, int wn0, int g,
                                           int c)
{
#pragma unroll
    for (int kk = 0; kk < BK; kk += MK) {
        double a[TM][FA], b[TN][FB];
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int q = 0; q < MK / 4; q++)
#pragma unroll
                for (int hh = 0; hh < MR / 8; hh++) {
                    int r = wm0 + i * MR + hh * 8 + g, kc = kk + 4 * q + c;
                    a[i][q * (MR / 8) + hh] = OPA == 0 ? sA[r * A_LD + kc] : sA[kc * A_LD + r];
                }
#pragma unroll
        for (int j = 0; j < TN; j++)
#pragma unroll
            for (int q = 0; q < MK / 4; q++) {
                int col = wn0 + j * 8 + g, kc = kk + 4 * q + c;
                b[j][q] = OPB == 0 ? sB[kc * B_LD + col] : sB[col * B_LD + kc];
            }
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++)
                bg_mma(acc[i][j], a[i], b[j]);
    }
}

__device__ __forceinline__ void bg_store(T *Cb, long long ldc, int m, int n, int row0, int col0,
                                         double (&acc)[TM][TN][MR / 4], T alpha, T beta, int wm0,
                                         int wn0, int g, int c, bool vec_c)
{
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int hh = 0; hh < MR / 8; hh++) {
            int row = row0 + wm0 + i * MR + hh * 8 + g;
            if (row >= m)
                continue;
            T *crow = Cb + (long long)row * ldc;
#pragma unroll
            for (int j = 0; j < TN; j++) {
                int col = col0 + wn0 + j * 8 + 2 * c;
                double v0 = acc[i][j][2 * hh], v1 = acc[i][j][2 * hh + 1];
                if (vec_c && col + 2 <= n) {
                    bg_chunk<16> x;
                    if (beta != 0.0)
                        x = *reinterpret_cast<const bg_chunk<16> *>(crow + col);
                    x.v[0] = beta == 0.0 ? alpha * v0 : alpha * v0 + beta * x.v[0];
                    x.v[1] = beta == 0.0 ? alpha * v1 : alpha * v1 + beta * x.v[1];
                    bg_st<16>(crow + col, x);
                } else {
                    if (col < n)
                        crow[col] = bg_out(v0, alpha, beta, crow + col);
                    if (col + 1 < n)
                        crow[col + 1] = bg_out(v1, alpha, beta, crow + col + 1);
                }
            }
        }
}
#endif

// The batched product. Work units are (group of G products, tile of C); a block walks the
// units blockIdx.x, blockIdx.x + gridDim.x, ... and their K steps as one sequence of stages,
// so the copies of the next products fly while this one is computed. flags: bit 0 A allows
// VEC copies, bit 1 B does, bit 2 C allows 16-byte accesses.
#if MINB > 1
#define BG_BOUNDS __launch_bounds__(NT, MINB)
#else
#define BG_BOUNDS __launch_bounds__(NT)
#endif
extern "C" __global__ void BG_BOUNDS
bgemm(int m, int n, int k, T alpha, const T *__restrict__ A, long long lda, long long sa,
      const T *__restrict__ B, long long ldb, long long sb, T beta, T *__restrict__ C,
      long long ldc, long long sc, long long batch, int flags)
{
    extern __shared__ __align__(16) unsigned char bg_smem_raw[];
    T *smem = reinterpret_cast<T *>(bg_smem_raw);
    const int tiles_n = (n + BN - 1) / BN;
    const long long tiles = (long long)((m + BM - 1) / BM) * tiles_n;
    const long long units = (batch + G - 1) / G * tiles;
    const int ksteps = k > 0 ? (k + BK - 1) / BK : 1;
    const long long mine = blockIdx.x < units ? (units - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const long long its = mine * ksteps;
    const int gi = threadIdx.x / TPP, lt = threadIdx.x - gi * TPP;
#if SYNC
    const int lt0 = lt, lg0 = gi;       // the product's threads copy its tiles
#else
    const int lt0 = threadIdx.x, lg0 = 0;
#endif

    // The unit of the block's j-th turn: its product group and tile (32-bit division
    // where the unit count allows: this runs once per product group and K sweep).
    auto unit_of = [&](long long j, long long &grp, int &tm, int &tn) {
        long long u = blockIdx.x + j * gridDim.x;
        int t;
        if (tiles == 1) {               // one tile per product (the small shapes): no division
            grp = u;
            tm = tn = 0;
            return;
        }
        if (units <= 0xffffffffLL) {
            unsigned uu = (unsigned)u, tt = (unsigned)tiles, q = uu / tt;
            grp = q;
            t = (int)(uu - q * tt);
        } else {
            grp = u / tiles;
            t = (int)(u - grp * tiles);
        }
        tm = t / tiles_n;
        tn = t - tm * tiles_n;
    };
    // Loads advance through (turn, K step) in order, STAGES - 1 ahead of the compute.
    long long lj = 0;
    int lks = 0, lslot = 0;
    auto load_next = [&]() {
        long long grp;
        int tm, tn;
        unit_of(lj, grp, tm, tn);
        T *sA = smem + lslot * STAGE_ELEMS, *sB = sA + G * A_TILE;
        long long b0 = grp * G;
        int k0 = lks * BK;
#if OPA == 0
        bg_load<BM, BK, A_LD>(sA, A, lda, sa, b0, batch, tm * BM, m, k0, k, flags & 1, lt0, lg0);
#else
        bg_load<BK, BM, A_LD>(sA, A, lda, sa, b0, batch, k0, k, tm * BM, m, flags & 1, lt0, lg0);
#endif
#if OPB == 0
        bg_load<BK, BN, B_LD>(sB, B, ldb, sb, b0, batch, k0, k, tn * BN, n, flags & 2, lt0, lg0);
#else
        bg_load<BN, BK, B_LD>(sB, B, ldb, sb, b0, batch, tn * BN, n, k0, k, flags & 2, lt0, lg0);
#endif
        if (++lks == ksteps) {
            lks = 0;
            lj++;
        }
        lslot = lslot + 1 == STAGES ? 0 : lslot + 1;
    };

#if MMA == 0
    const int ty = lt / TXN, tx = lt - ty * TXN;
    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = (T)0;
#else
    const int lane = lt & 31, w = lt >> 5, g = lane >> 2, c = lane & 3;
    const int wm0 = (w / WPN) * MR * TM, wn0 = (w % WPN) * 8 * TN;
    double acc[TM][TN][MR / 4];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
#pragma unroll
            for (int e = 0; e < MR / 4; e++)
                acc[i][j][e] = 0.0;
#endif

#if STAGES > 1
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < its)
            load_next();
        bg_commit();
    }
#endif
    long long cj = 0;
    int cks = 0, slot = 0;
    for (long long it = 0; it < its; it++) {
#if STAGES == 1
        load_next();
        bg_commit();
        bg_wait<0>();
        bg_bar(gi);
#else
        bg_wait<STAGES - 2>();
        bg_bar(gi);
        if (it + STAGES - 1 < its)
            load_next();
        bg_commit();
#endif
        const T *sA = smem + slot * STAGE_ELEMS + gi * A_TILE;
        const T *sB = smem + slot * STAGE_ELEMS + G * A_TILE + gi * B_TILE;
#if MMA == 0
        bg_compute(sA, sB, acc, ty, tx);
#else
        bg_compute(sA, sB, acc, wm0, wn0, g, c);
#endif
        slot = slot + 1 == STAGES ? 0 : slot + 1;
        if (++cks == ksteps) {
            long long grp;
            int tm, tn;
            unit_of(cj, grp, tm, tn);
            cks = 0;
            cj++;
            long long b = grp * G + gi;
            if (b < batch) {
#if MMA == 0
                bg_store(C + b * sc, ldc, m, n, tm * BM, tn * BN, acc, alpha, beta, ty, tx,
                         flags & 4);
#else
                bg_store(C + b * sc, ldc, m, n, tm * BM, tn * BN, acc, alpha, beta, wm0, wn0, g,
                         c, flags & 4);
#endif
            }
#if MMA == 0
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int q = 0; q < TN; q++)
                    acc[i][q] = (T)0;
#else
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int q = 0; q < TN; q++)
#pragma unroll
                    for (int e = 0; e < MR / 4; e++)
                        acc[i][q][e] = 0.0;
#endif
        }
#if STAGES == 1
        bg_bar(gi);
#endif
    }
}
