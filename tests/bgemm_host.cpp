// bgemm_host.cpp: runs templates/bgemm.cu's kernel on the CPU, one POSIX thread per CUDA
// thread (cp.async a plain copy, the FP64 mma tiles emulated), against a float64 product:
// schedule, loaders, fragments and epilogue checked without a GPU (tests/test_bgemm.c).
#include <pthread.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "th_host.h"

struct bh_dim { unsigned x, y, z; };
static thread_local bh_dim threadIdx;
static bh_dim blockIdx, gridDim;
static pthread_barrier_t bh_barrier;

#define __shared__
static inline void __syncthreads() { pthread_barrier_wait(&bh_barrier); }
static inline unsigned __cvta_generic_to_shared(const void *) { return 0; }

// The FP64 mma tiles (MMA 1: m8n8k4, MMA 2: m16n8k4, MMA 3: m16n8k8) as the PTX ISA lays out
// their fragments: lane = 4 g + c holds A(g, c) (and A(g + 8, c); MMA 3 then A(g, c + 4),
// A(g + 8, c + 4)), B(c, g) (MMA 3 and B(c + 4, g)) and C(g, 2c), C(g, 2c + 1) (and rows
// g + 8); the warp's lanes meet at a barrier to exchange them. Fragment element q (k half)
// and h (row half) is a[q * mr / 8 + h].
struct bh_warp {
    double a[32][4], b[32][2];
    pthread_barrier_t bar;
};
static bh_warp bh_warps[32];

static void bh_mma(double *d, const double *a, const double *b, int mr, int mk)
{
    int lane = threadIdx.x & 31, g = lane >> 2, c = lane & 3, fa = mr / 8 * mk / 4;
    bh_warp &w = bh_warps[threadIdx.x >> 5];
    for (int i = 0; i < 4; i++)
        w.a[lane][i] = i < fa ? a[i] : NAN;
    for (int i = 0; i < 2; i++)
        w.b[lane][i] = i < mk / 4 ? b[i] : NAN;
    pthread_barrier_wait(&w.bar);
    for (int h = 0; h < mr / 8; h++)
        for (int e = 0; e < 2; e++) {
            double s = d[2 * h + e];
            for (int q = 0; q < mk / 4; q++)
                for (int kk = 0; kk < 4; kk++)
                    s += w.a[g * 4 + kk][q * (mr / 8) + h] * w.b[(2 * c + e) * 4 + kk][q];
            d[2 * h + e] = s;
        }
    pthread_barrier_wait(&w.bar);
}
// SYNC 1: product gi's TPP threads meet at their own barrier (SYNC 0: the block's).
static pthread_barrier_t bh_prod_bar[8];
#define BG_HOST_BAR \
    static void bg_bar(int gi) { pthread_barrier_wait(SYNC ? &bh_prod_bar[gi] : &bh_barrier); }
#define BG_HOST_MMA \
    static void bg_mma(double (&d)[MR / 4], const double (&a)[FA], const double (&b)[FB]) \
    { bh_mma(d, a, b, MR, MK); }

#include "bgemm.cu"

alignas(16) unsigned char bg_smem_raw[240 * 1024];


// One case: op(A) m x k, op(B) k x n, row-major, strides with gaps, offsets; grid -1: one
// block per work unit (GRID 1's launch).
struct bh_case { int m, n, k, batch, pad, gap, offset; double alpha, beta; int grid; };

struct bh_launch {
    const bh_case *c;
    T *A, *B, *C;
    long long lda, ldb, ldc, sa, sb, sc;
    int flags;
    unsigned tid;
};

static void *bh_thread(void *arg)
{
    bh_launch *l = (bh_launch *)arg;
    threadIdx.x = l->tid;
    threadIdx.y = threadIdx.z = 0;
    bgemm(l->c->m, l->c->n, l->c->k, (T)l->c->alpha, l->A, l->lda, l->sa, l->B, l->ldb, l->sb,
          (T)l->c->beta, l->C, l->ldc, l->sc, l->c->batch, l->flags);
    return nullptr;
}

// Runs one case; returns the relative Frobenius error, or -1 if C outside the products
// changed or a thread could not start.
static double bh_run(const bh_case *c, int aligned)
{
    int ar = OPA ? c->k : c->m, ac = OPA ? c->m : c->k;   // stored A: ar x ac
    int br = OPB ? c->n : c->k, bc = OPB ? c->k : c->n;
    long long lda = ac + c->pad, ldb = bc + c->pad, ldc = c->n + c->pad;
    long long sa = (long long)ar * lda + c->gap, sb = (long long)br * ldb + c->gap;
    long long sc = (long long)c->m * ldc + c->gap;
    if (!aligned) {         // odd leading dimensions and offsets: the element-copy paths
        lda |= 1;
        ldb |= 1;
        ldc |= 1;
        sa = (long long)ar * lda + c->gap + 1;
        sb = (long long)br * ldb + c->gap + 1;
        sc = (long long)c->m * ldc + c->gap + 1;
    }
    size_t na = (size_t)(sa * c->batch) + 8, nb = (size_t)(sb * c->batch) + 8;
    size_t nc = (size_t)(sc * c->batch) + 8;
    std::vector<T> A(na), B(nb), C(nc), C0(nc);
    th_host_fill(A, B, C0, 777u + (unsigned)c->m, c->beta, TYPE != 0);
    C = C0;
    int off = aligned ? 0 : 1 + c->offset;
    T *pa = A.data() + off, *pb = B.data() + off, *pc = C.data() + off;
    int vecb = VEC * ESZ, esz = ESZ;
    auto ok = [&](const T *p, long long ld, long long st, int bytes) {
        int v = bytes / esz;
        return (unsigned long long)(uintptr_t)p % bytes == 0 && ld % v == 0 && st % v == 0;
    };
    int flags = (ok(pa, lda, sa, vecb) ? 1 : 0) | (ok(pb, ldb, sb, vecb) ? 2 : 0) |
                (ok(pc, ldc, sc, 16) ? 4 : 0);
    long long units = (long long)((c->batch + G - 1) / G) * ((c->m + BM - 1) / BM) *
                      ((c->n + BN - 1) / BN);
    gridDim.x = (unsigned)(c->grid < 0 ? units : c->grid);     // -1: one block per unit (GRID 1)
    gridDim.y = gridDim.z = 1;
    std::vector<bh_launch> ls(NT);
    std::vector<pthread_t> th(NT);
    for (unsigned b = 0; b < gridDim.x; b++) {
        blockIdx.x = b;
        blockIdx.y = blockIdx.z = 0;
        pthread_barrier_init(&bh_barrier, nullptr, NT);
        for (int g = 0; g < G; g++)
            pthread_barrier_init(&bh_prod_bar[g], nullptr, TPP);
        for (int w = 0; MMA && w < NT / 32; w++)
            pthread_barrier_init(&bh_warps[w].bar, nullptr, 32);
        for (unsigned t = 0; t < (unsigned)NT; t++) {
            ls[t] = {c, pa, pb, pc, lda, ldb, ldc, sa, sb, sc, flags, t};
            if (pthread_create(&th[t], nullptr, bh_thread, &ls[t]) != 0)
                return -1;
        }
        for (unsigned t = 0; t < (unsigned)NT; t++)
            pthread_join(th[t], nullptr);
        pthread_barrier_destroy(&bh_barrier);
        for (int g = 0; g < G; g++)
            pthread_barrier_destroy(&bh_prod_bar[g]);
        for (int w = 0; MMA && w < NT / 32; w++)
            pthread_barrier_destroy(&bh_warps[w].bar);
    }
    th_host_gemm g = {c->m, c->n, c->k, c->batch, OPA, OPB, lda, ldb, ldc, sa, sb, sc,
                      c->alpha, c->beta};
    return th_host_error(g, pa, pb, C, C0, off);
}

int main()
{
    // Odd sizes (edge tiles), several products and tiles per block turn, grids smaller than
    // the units (persistent turns), gaps between products, beta 0 over NaN and beta != 0, k 0.
    static const bh_case cases[] = {
        {BM - 3, BN + 5, 2 * BK + 3, 2 * G + 1, 0, 0, 0, 1.5, 0.0, 2},
        {BM, BN, BK, 3 * G, 3, 5, 1, -1.0, 0.5, 1},
        {7, 9, 3, G + 2, 1, 2, 0, 1.0, 1.0, 3},
        {BM + 1, 2 * BN - 1, 1, 2, 0, 1, 0, 2.0, 0.0, 4},
        {5, 4, 0, 3, 0, 0, 0, 1.0, 2.0, 2},
        {BM - 3, BN + 5, 2 * BK + 3, 2 * G + 1, 1, 3, 0, 1.0, 0.5, -1},
#if LDF
        // whole tiles (the copy fast path), a last group past the batch, and leading
        // dimensions and gaps that keep 16-byte copies
        {2 * BM, 2 * BN, 2 * BK, 2 * G + 1, 0, 0, 0, 1.0, 0.0, 3},
        {BM, BN, 3 * BK, G + 1, 4, 8, 0, 0.5, 0.25, 2},
#endif
    };
    double worst = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int aligned = 1; aligned >= 0; aligned--) {
            bh_case c = cases[i];
            double e = bh_run(&c, aligned);
            if (e < 0 || !(e <= (TYPE ? 1e-13 : 1e-5))) {
                printf("FAIL case %zu aligned %d: error %g\n", i, aligned, e);
                return 1;
            }
            worst = e > worst ? e : worst;
        }
    printf("ok worst %g\n", worst);
    return 0;
}
