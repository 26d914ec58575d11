// skinny_host.cpp: runs templates/skinny.cu's kernel on the CPU, one POSIX thread per CUDA
// thread and the blocks one after another, against a float64 product: loaders (the order of the
// loads of an operand stored along K), K groups, K slices and epilogue checked without a GPU
// (tests/test_skinny.c). TYPE 0 (float) and 1 (double). The block's threads start once and walk
// the grid together, a barrier between blocks.
#include <pthread.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "th_host.h"

struct sh_dim { unsigned x, y, z; };
static thread_local sh_dim threadIdx, blockIdx;
static sh_dim gridDim;
static pthread_barrier_t sh_barrier;

#define __shared__ static
static inline void __syncthreads() { pthread_barrier_wait(&sh_barrier); }
static inline void __threadfence() { __sync_synchronize(); }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static inline T __ldcg(const T *p) { return *p; }
static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
using std::min;

#include "skinny.cu"

typedef sk_elem T;

struct sh_case { int m, n, k, batch, pad, gap, slices; double alpha, beta; };

struct sh_launch {
    const T *A, *B;
    T *C;
    long long lda, ldb, ldc, sa, sb, sc;
    int m, n, k, per_slice, va, vb;
    sk_acc alpha, beta, *work;
    unsigned *counters, tid;
};

/* One thread of every block in grid order (x fastest, then the slices, then the products). */
static void *sh_thread(void *arg)
{
    sh_launch *l = (sh_launch *)arg;
    threadIdx.x = l->tid;
    threadIdx.y = threadIdx.z = 0;
    for (unsigned z = 0; z < gridDim.z; z++)
        for (unsigned y = 0; y < gridDim.y; y++)
            for (unsigned x = 0; x < gridDim.x; x++) {
                blockIdx.x = x;
                blockIdx.y = y;
                blockIdx.z = z;
                skinny_gemm(l->A, l->B, l->C, l->lda, l->ldb, l->ldc, l->sa, l->sb, l->sc, l->m,
                            l->n, l->k, l->alpha, l->beta, l->per_slice, l->va, l->vb, l->work,
                            l->counters);
                pthread_barrier_wait(&sh_barrier);
            }
    return nullptr;
}

/* The relative Frobenius error of one call (aligned: leading dimensions and bases that allow
 * VEC-wide loads; else odd ones, the element paths), -1 where an element outside C changed or
 * the threads could not start. */
static double sh_run(const sh_case *c, int aligned)
{
    int ar = OPA ? c->k : c->m, ac = OPA ? c->m : c->k;   // stored A: ar x ac
    int br = OPB ? c->n : c->k, bc = OPB ? c->k : c->n;
    long long lda = ac + c->pad, ldb = bc + c->pad, ldc = c->n + c->pad;
    if (aligned) {
        lda = (lda + VEC - 1) / VEC * VEC;
        ldb = (ldb + VEC - 1) / VEC * VEC;
    } else {
        lda |= 1;
        ldb |= 1;
        ldc |= 1;
    }
    long long sa = ((long long)ar * lda + c->gap + VEC - 1) / VEC * VEC + (aligned ? 0 : 1);
    long long sb = ((long long)br * ldb + c->gap + VEC - 1) / VEC * VEC + (aligned ? 0 : 1);
    long long sc = (long long)c->m * ldc + c->gap;
    size_t na = (size_t)(sa * c->batch) + 16, nb = (size_t)(sb * c->batch) + 16;
    size_t nc = (size_t)(sc * c->batch) + 16;
    std::vector<T> A(na), B(nb), C(nc), C0(nc);
    th_host_fill(A, B, C0, 777u + (unsigned)c->m, c->beta, TYPE == 1);
    C = C0;
    int off = aligned ? 0 : 1;
    const T *pa = A.data() + off, *pb = B.data() + off;
    T *pc = C.data() + off;
    auto ok = [&](const T *p, long long ld, long long st, int w) {
        return w > 1 && (uintptr_t)p % (uintptr_t)(w * (int)sizeof(T)) == 0 && ld % w == 0 &&
               (c->batch <= 1 || st % w == 0);
    };
    int va = ok(pa, lda, sa, SK_WA), vb = ok(pb, ldb, sb, SK_WB);
    if (va != aligned || vb != aligned)
        return -2;      // the case does not take the path it means to
    int tiles = ((c->m + BM - 1) / BM) * ((c->n + BN - 1) / BN);
    int steps = (c->k + BK - 1) / BK;
    int slices = c->slices < steps ? c->slices : (steps > 0 ? steps : 1);
    int per_slice = slices > 1 ? (steps + slices - 1) / slices : (steps > 0 ? steps : 1);
    slices = slices > 1 ? (steps + per_slice - 1) / per_slice : 1;
    std::vector<sk_acc> work((size_t)tiles * c->batch * slices * BM * BN + 1);
    std::vector<unsigned> counters((size_t)tiles * c->batch + 1, 0);
    gridDim.x = (unsigned)tiles;
    gridDim.y = (unsigned)slices;
    gridDim.z = (unsigned)c->batch;
    std::vector<sh_launch> ls(SK_THREADS);
    std::vector<pthread_t> th(SK_THREADS);
    pthread_barrier_init(&sh_barrier, nullptr, SK_THREADS);
    unsigned started = 0;
    for (unsigned t = 0; t < (unsigned)SK_THREADS; t++) {
        ls[t] = {pa, pb, pc, lda, ldb, ldc, sa, sb, sc, c->m, c->n, c->k, per_slice, va, vb,
                 (sk_acc)c->alpha, (sk_acc)c->beta, work.data(), counters.data(), t};
        started += pthread_create(&th[t], nullptr, sh_thread, &ls[t]) == 0;
    }
    if (started < (unsigned)SK_THREADS) {
        fprintf(stderr, "could not start %d threads\n", SK_THREADS);
        exit(2);        // the started ones wait at the barrier for ever
    }
    for (unsigned t = 0; t < (unsigned)SK_THREADS; t++)
        pthread_join(th[t], nullptr);
    pthread_barrier_destroy(&sh_barrier);
    th_host_gemm g = {c->m, c->n, c->k, c->batch, OPA, OPB, lda, ldb, ldc, sa, sb, sc,
                      c->alpha, c->beta};
    return th_host_error(g, pa, pb, C, C0, off);
}

int main()
{
    static const sh_case cases[] = {
        {BM + 3, BN + 5, 3 * BK + 5, 2, 0, 0, 1, 1.5, 0.0},
        {2 * BM - 1, BN - 1 > 0 ? BN - 1 : 1, 5 * BK + 1, 1, 3, 5, 3, -1.0, 0.5},
        {BM, 2 * BN + 1, 4 * BK, 3, 1, 7, 2, 1.0, 0.0},
    };
    double tol = TYPE == 1 ? 1e-13 : 1e-5;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int aligned = 0; aligned < (VEC > 1 ? 2 : 1); aligned++) {
            double e = sh_run(&cases[i], aligned);
            if (!(e >= 0 && e <= tol)) {
                printf("case %zu (%dx%dx%d x %d, %s, %d slices): error %g\n", i, cases[i].m,
                       cases[i].n, cases[i].k, cases[i].batch, aligned ? "aligned" : "odd",
                       cases[i].slices, e);
                return 1;
            }
        }
    printf("ok\n");
    return 0;
}
