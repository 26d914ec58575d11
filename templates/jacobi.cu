/* jacobi.cu: Jacobi sweep x_new = (b - (A - D) x) / D in float or double (TYPE) with
 * the convergence norms fused in and a device-side stop, plus the first-pass input check. */

#ifndef ROW_THREADS
#define ROW_THREADS 32     /* threads per row, power of 2: 1 (seed), 2..16 lanes, 32, 64..256 */
#endif
#ifndef ROWS_PER_BLOCK
#define ROWS_PER_BLOCK 4   /* rows per block, power of 2, 1..256 (block = 64..1024 threads) */
#endif
#ifndef VEC
#define VEC 4              /* floats per load of A and x: 1, 2, 4 (scalar head/tail: any n) */
#endif
#ifndef UNROLL
#define UNROLL 1           /* vector loads in flight per thread per step: 1..8 */
#endif
#ifndef XCACHE
#define XCACHE 0           /* x read via: 0 the read-only cache, 1 shared memory (all of x) */
#endif
#ifndef CHECK_EVERY
#define CHECK_EVERY 10     /* sweeps between host reads of the norms: 1..1000 (host only) */
#endif
#ifndef ORDER
#define ORDER 1            /* row order (host only, the kernel's `order`): 0 top to bottom every sweep (seed), 1 alternating, so a sweep starts on the rows of A the last one left in L2 */
#endif

#ifndef TYPE
#define TYPE 0             /* element type of A, b, x and the norms: 0 float (at_sjacobi), 1 double (at_djacobi; VEC 1 or 2) */
#endif

#define JAC_THREADS (ROW_THREADS * ROWS_PER_BLOCK)
#define JAC_WARPS ((JAC_THREADS + 31) / 32)
/* The element type, its bit pattern (norms are kept as the bits of
 * non-negative values: they order like unsigned integers, NaN above Inf),
 * and the vector type of whole-x staging in shared memory (16 bytes). */
#if TYPE == 1
typedef double jac_t;
typedef unsigned long long jac_bits_t;
typedef double2 jac_stage_t;
#define JAC_INF_BITS 0x7ff0000000000000ull  /* |v| bits >= this: Inf or NaN */
#define JAC_FMA fma
#define JAC_ABS fabs
#define JAC_BITS(v) ((unsigned long long)__double_as_longlong(v))
#define JAC_VALUE(u) __longlong_as_double((long long)(u))
#define JAC_STAGE_W 2
#elif TYPE == 0
typedef float jac_t;
typedef unsigned jac_bits_t;
typedef float4 jac_stage_t;
#define JAC_INF_BITS 0x7f800000u          /* |v| bits >= this: Inf or NaN */
#define JAC_FMA fmaf
#define JAC_ABS fabsf
#define JAC_BITS(v) __float_as_uint(v)
#define JAC_VALUE(u) __uint_as_float(u)
#define JAC_STAGE_W 4
#else
#error "TYPE must be 0 (float) or 1 (double)"
#endif

#if (ROW_THREADS & (ROW_THREADS - 1)) != 0 || ROW_THREADS < 1 || ROW_THREADS > 1024
#error "ROW_THREADS must be a power of 2 in 1..1024"
#endif
#if ROW_THREADS > 32 && (ROW_THREADS % 32) != 0
#error "ROW_THREADS above 32 must be whole warps"
#endif
#if VEC != 1 && VEC != 2 && VEC != 4
#error "VEC must be 1, 2 or 4"
#endif
#if UNROLL < 1 || UNROLL > 8
#error "UNROLL must be 1..8"
#endif
#if TYPE == 1 && VEC == 4
#error "double takes VEC 1 or 2 (16-byte loads)"
#endif

#if TYPE == 1 && VEC == 2
typedef double2 jac_vec;
#define JAC_MAKE2 make_double2
#elif TYPE == 1
typedef double jac_vec;
#elif VEC == 4
typedef float4 jac_vec;
#elif VEC == 2
typedef float2 jac_vec;
#define JAC_MAKE2 make_float2
#else
typedef float jac_vec;
#endif

/* ---- vector helpers (k is a compile-time constant after unrolling) ---- */
__device__ __forceinline__ float jac_get(float v, int) { return v; }
__device__ __forceinline__ float jac_get(float2 v, int k) { return k == 0 ? v.x : v.y; }
__device__ __forceinline__ float jac_get(float4 v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}
/* Zeroes component k (runtime k, taken only for the diagonal's vector). */
__device__ __forceinline__ float jac_zero(float v, int) { (void)v; return 0.0f; }
__device__ __forceinline__ float2 jac_zero(float2 v, int k)
{
    v.x = k == 0 ? 0.0f : v.x;
    v.y = k == 1 ? 0.0f : v.y;
    return v;
}
__device__ __forceinline__ float4 jac_zero(float4 v, int k)
{
    v.x = k == 0 ? 0.0f : v.x;
    v.y = k == 1 ? 0.0f : v.y;
    v.z = k == 2 ? 0.0f : v.z;
    v.w = k == 3 ? 0.0f : v.w;
    return v;
}
#if TYPE == 1
__device__ __forceinline__ double jac_get(double v, int) { return v; }
__device__ __forceinline__ double jac_get(double2 v, int k) { return k == 0 ? v.x : v.y; }
__device__ __forceinline__ double jac_zero(double v, int) { (void)v; return 0.0; }
__device__ __forceinline__ double2 jac_zero(double2 v, int k)
{
    v.x = k == 0 ? 0.0 : v.x;
    v.y = k == 1 ? 0.0 : v.y;
    return v;
}
#endif

/* A is streamed once per sweep: read-only path, no L1 allocation (keeps L1 for x). */
__device__ __forceinline__ float jac_lda(const float *p)
{
    float v;
    asm volatile("ld.global.nc.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ float2 jac_lda2(const float *p)
{
    float2 v;
    asm volatile("ld.global.nc.L1::no_allocate.v2.f32 {%0, %1}, [%2];"
                 : "=f"(v.x), "=f"(v.y) : "l"(p));
    return v;
}
__device__ __forceinline__ float4 jac_lda4(const float *p)
{
    float4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}
#if TYPE == 1
__device__ __forceinline__ double jac_lda(const double *p)
{
    double v;
    asm volatile("ld.global.nc.L1::no_allocate.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ double2 jac_lda2(const double *p)
{
    double2 v;
    asm volatile("ld.global.nc.L1::no_allocate.v2.f64 {%0, %1}, [%2];"
                 : "=d"(v.x), "=d"(v.y) : "l"(p));
    return v;
}
#endif
__device__ __forceinline__ jac_vec jac_loada(const jac_t *p)
{
#if VEC == 4
    return jac_lda4(p);
#elif VEC == 2
    return jac_lda2(p);
#else
    return jac_lda(p);
#endif
}

/* x: shared memory (XCACHE 1) or the read-only cache; vector load when the
 * column is aligned for it (ALIGNED), else VEC scalar loads. */
__device__ __forceinline__ jac_t jac_ldx1(const jac_t *x, int c)
{
#if XCACHE
    return x[c];
#else
    return __ldg(x + c);
#endif
}
template <bool ALIGNED>
__device__ __forceinline__ jac_vec jac_loadx(const jac_t *x, int c)
{
#if VEC == 1
    return jac_ldx1(x, c);
#elif VEC == 2
    if (ALIGNED) {
#if XCACHE
        return *(const jac_vec *)(x + c);
#else
        return __ldg((const jac_vec *)(x + c));
#endif
    }
    return JAC_MAKE2(jac_ldx1(x, c), jac_ldx1(x, c + 1));
#else
    if (ALIGNED) {
#if XCACHE
        return *(const float4 *)(x + c);
#else
        return __ldg((const float4 *)(x + c));
#endif
    }
    return make_float4(jac_ldx1(x, c), jac_ldx1(x, c + 1), jac_ldx1(x, c + 2),
                       jac_ldx1(x, c + 3));
#endif
}

/* Partial sum over this lane's vectors of the aligned body of row i:
 * columns c_begin + v*VEC.. for v = lane, lane+ROW_THREADS, ... < m. The
 * diagonal (column i) is left out, as in x_i = (b_i - sum_{j != i} a_ij x_j) / a_ii. */
template <bool ALIGNED>
__device__ __forceinline__ jac_t jac_body(const jac_t *arow, const jac_t *x, int c_begin,
                                          int m, int lane, int i)
{
    jac_t acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; u++)
        acc[u] = 0.0f;
    int v = lane;
    for (; v + (UNROLL - 1) * ROW_THREADS < m; v += UNROLL * ROW_THREADS) {
        jac_vec a[UNROLL], xv[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            a[u] = jac_loada(arow + c_begin + (v + u * ROW_THREADS) * VEC);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            xv[u] = jac_loadx<ALIGNED>(x, c_begin + (v + u * ROW_THREADS) * VEC);
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            int c0 = c_begin + (v + u * ROW_THREADS) * VEC;
            if ((unsigned)(i - c0) < (unsigned)VEC)
                a[u] = jac_zero(a[u], i - c0);
#pragma unroll
            for (int k = 0; k < VEC; k++)
                acc[u] = JAC_FMA(jac_get(a[u], k), jac_get(xv[u], k), acc[u]);
        }
    }
    for (; v < m; v += ROW_THREADS) {
        int c0 = c_begin + v * VEC;
        jac_vec a = jac_loada(arow + c0);
        jac_vec xv = jac_loadx<ALIGNED>(x, c0);
        if ((unsigned)(i - c0) < (unsigned)VEC)
            a = jac_zero(a, i - c0);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            acc[0] = JAC_FMA(jac_get(a, k), jac_get(xv, k), acc[0]);
    }
    jac_t s = acc[0];
#pragma unroll
    for (int u = 1; u < UNROLL; u++)
        s += acc[u];
    return s;
}

/* This lane's share of sum_{j != i} a_ij x_j over the whole row: a scalar head
 * up to the first VEC-aligned column of the row, the vector body, a scalar tail. */
__device__ __forceinline__ jac_t jac_row(const jac_t *A, const jac_t *x, int n, int i, int lane)
{
    const jac_t *arow = A + (unsigned long long)i * (unsigned long long)n;
    int head = 0;
#if VEC > 1
    {
        unsigned mis = (unsigned)((unsigned long long)arow & (VEC * sizeof(jac_t) - 1)) /
                       (unsigned)sizeof(jac_t);
        head = mis ? VEC - (int)mis : 0;
        if (head > n)
            head = n;
    }
#endif
    int m = (n - head) / VEC;
    jac_t s = 0.0f;
#if VEC > 1
    for (int c = lane; c < head; c += ROW_THREADS)
        if (c != i)
            s = JAC_FMA(jac_lda(arow + c), jac_ldx1(x, c), s);
#endif
    /* x buffers are 16-byte aligned: x + head is vector-aligned iff head == 0. */
    if (head == 0)
        s += jac_body<true>(arow, x, head, m, lane, i);
    else
        s += jac_body<false>(arow, x, head, m, lane, i);
#if VEC > 1
    for (int c = head + m * VEC + lane; c < n; c += ROW_THREADS)
        if (c != i)
            s = JAC_FMA(jac_lda(arow + c), jac_ldx1(x, c), s);
#endif
    return s;
}

__device__ __forceinline__ jac_bits_t jac_umax(jac_bits_t a, jac_bits_t b) { return a > b ? a : b; }

/* 1 if this sweep must not run: bad input, an earlier stop, or the previous
 * sweep's norms say converged / non-finite (then records the stop). Thread 0
 * decides for the whole block (ctl[1] may change while blocks run). */
__device__ __forceinline__ int jac_should_stop(unsigned *ctl, const jac_bits_t *prev, jac_t tol,
                                               int sweep)
{
    __shared__ int stop;
    if (threadIdx.x == 0) {
        volatile unsigned *vc = ctl;
        int st = vc[0] != 0u || vc[1] != 0u;
        if (!st && prev) {
            jac_bits_t pd = prev[0], pm = prev[1];
            if (pd >= JAC_INF_BITS || pm >= JAC_INF_BITS ||
                JAC_VALUE(pd) <= tol * JAC_VALUE(pm)) {
                vc[1] = (unsigned)sweep;
                st = 1;
            }
        }
        stop = st;
    }
    __syncthreads();
    return stop;
}

/* One sweep: xout = Jacobi update of xin. norms[0] / norms[1] receive (as
 * the element type's bits, atomicMax) max |xout - xin| and max |xout|; they must be zero
 * before. prev (may be NULL) holds the previous sweep's norms: if they show
 * convergence (d <= tol * m) or Inf/NaN, ctl[1] = sweep (the number of sweeps
 * done) and this and every later sweep return at once; ctl[0] != 0 (bad
 * input found by jacobi_check) stops every sweep too. */
extern "C" __global__ void __launch_bounds__(JAC_THREADS)
jacobi_sweep(const jac_t *__restrict__ A, const jac_t *__restrict__ b,
             const jac_t *__restrict__ xin, jac_t *__restrict__ xout, int n,
             jac_bits_t *norms, const jac_bits_t *prev, unsigned *ctl, jac_t tol, int sweep,
             int order)
{
    __shared__ jac_bits_t red_d[JAC_WARPS], red_m[JAC_WARPS];
#if ROW_THREADS > 32
    __shared__ jac_t red_s[JAC_WARPS];
#endif
    if (jac_should_stop(ctl, prev, tol, sweep))
        return;

    const int tid = threadIdx.x;
    const int lane = tid % ROW_THREADS;
    const int group = tid / ROW_THREADS;
#if XCACHE
    extern __shared__ jac_stage_t jac_xs4[];
    jac_t *xs = (jac_t *)jac_xs4;
    if ((n & (JAC_STAGE_W - 1)) == 0) {
        for (int c = tid; c < n / JAC_STAGE_W; c += JAC_THREADS)
            jac_xs4[c] = __ldg((const jac_stage_t *)xin + c);
    } else {
        for (int c = tid; c < n; c += JAC_THREADS)
            xs[c] = __ldg(xin + c);
    }
    __syncthreads();
    const jac_t *x = xs;
#else
    const jac_t *x = xin;
#endif

    /* order 1: odd sweeps walk the rows bottom to top, so the first blocks
     * read the rows of A the previous sweep read last (still in L2) */
    const bool backward = order != 0 && (sweep & 1) != 0;
    jac_bits_t dmax = 0u, mmax = 0u;
    for (int base = blockIdx.x * ROWS_PER_BLOCK; base < n; base += gridDim.x * ROWS_PER_BLOCK) {
        const bool in_range = base + group < n;
        const int i = backward ? n - 1 - (base + group) : base + group;
        jac_t s = 0.0f;
        if (in_range)
            s = jac_row(A, x, n, i, lane);
#if ROW_THREADS > 1
        {
            const int w = ROW_THREADS < 32 ? ROW_THREADS : 32;
#pragma unroll
            for (int off = w / 2; off > 0; off >>= 1)
                s += __shfl_xor_sync(0xffffffffu, s, off);
        }
#endif
#if ROW_THREADS > 32
        if ((tid & 31) == 0)
            red_s[tid / 32] = s;
        __syncthreads();
        if (lane == 0) {
            jac_t t = 0.0f;
#pragma unroll
            for (int k = 0; k < ROW_THREADS / 32; k++)
                t += red_s[tid / 32 + k];
            s = t;
        }
        __syncthreads();
#endif
        if (lane == 0 && in_range) {
            jac_t aii = A[(unsigned long long)i * (unsigned long long)n + i];
            jac_t xo = x[i];
            jac_t num = __ldg(b + i) - s;
#if TYPE == 1
            jac_t xn = num / aii;
#else
            /* num / aii without the IEEE division's slow-path call (it
             * made ptxas spill): approximate reciprocal plus one FMA
             * correction, operands scaled by a power of two into the range
             * where the reciprocal is accurate. */
            float sc = fabsf(aii) >= 1e30f ? 0x1p-64f : (fabsf(aii) <= 1e-30f ? 0x1p64f : 1.0f);
            float na = num * sc, da = aii * sc;
            float r = __fdividef(1.0f, da);
            float q = na * r;
            float xn = fmaf(fmaf(-q, da, na), r, q);
#endif
            xout[i] = xn;
            dmax = jac_umax(dmax, JAC_BITS(JAC_ABS(xn - xo)));
            mmax = jac_umax(mmax, JAC_BITS(JAC_ABS(xn)));
        }
    }

    /* Block max of the norms (as unsigned bits: NaN > Inf > finite), then
     * one atomicMax each per block. */
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        dmax = jac_umax(dmax, __shfl_xor_sync(0xffffffffu, dmax, off));
        mmax = jac_umax(mmax, __shfl_xor_sync(0xffffffffu, mmax, off));
    }
#if JAC_WARPS > 1
    if ((tid & 31) == 0) {
        red_d[tid / 32] = dmax;
        red_m[tid / 32] = mmax;
    }
    __syncthreads();
    if (tid == 0) {
        for (int k = 1; k < JAC_WARPS; k++) {
            dmax = jac_umax(dmax, red_d[k]);
            mmax = jac_umax(mmax, red_m[k]);
        }
    }
#else
    (void)red_d;
    (void)red_m;
#endif
    if (tid == 0) {
        if (dmax)
            atomicMax(norms, dmax);
        if (mmax)
            atomicMax(norms + 1, mmax);
    }
}

/* First pass: ctl[0] |= 1 for a zero or non-finite diagonal entry, 2 for a
 * non-finite b, 4 for a non-finite initial x. */
extern "C" __global__ void jacobi_check(const jac_t *__restrict__ A, const jac_t *__restrict__ b,
                                        const jac_t *__restrict__ x, int n, unsigned *ctl)
{
    unsigned flags = 0u;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        jac_t a = A[(unsigned long long)i * (unsigned long long)n + i];
        if (a == 0.0f || JAC_BITS(JAC_ABS(a)) >= JAC_INF_BITS)
            flags |= 1u;
        if (JAC_BITS(JAC_ABS(b[i])) >= JAC_INF_BITS)
            flags |= 2u;
        if (JAC_BITS(JAC_ABS(x[i])) >= JAC_INF_BITS)
            flags |= 4u;
    }
    if (flags)
        atomicOr(ctl, flags);
}
