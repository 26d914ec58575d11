/* reduce.cu: the sum (RED_DOT=0) and dot (RED_DOT=1) reduction family, float or double
 * (TYPE); every seed style (serial, halving tree, interleaved mask tree, single block) plus
 * warp shuffle. */

#ifndef RED_DOT
#define RED_DOT 0   /* fixed by the family: 0 sum of x, 1 dot of x and y */
#endif
#ifndef STYLE
#define STYLE 3     /* block reduction: 0 serial by thread 0, 1 halving tree, 2 interleaved mask tree, 3 warp shuffle, 4 single block (serial) */
#endif
#ifndef FINISH
#define FINISH 2    /* blocks combine: 0 atomicAdd per block (result zeroed first), 1 second-pass kernel, 2 last block finishes (partials + counter), 3 last block finishes (self-resetting float64 accumulator + counter), 4 block 0 gathers the others' partials tagged with the call's epoch (one block per tile, <= RD_GATHER_MAX blocks) */
#endif
#ifndef BLOCK
#define BLOCK 256   /* threads per block: 64, 128, 256, 512, 1024 */
#endif
#ifndef ITEMS
#define ITEMS 4     /* vectors each thread loads per tile (independent loads in flight): 1, 2, 4, 8, 16 */
#endif
#ifndef VEC
#define VEC 4       /* floats per load: 1, 2, 4 (scalar head/tail for unaligned pointers and ragged n) */
#endif
#ifndef GRID
#define GRID 8      /* 0 one block per tile, k > 0 k x SM count (grid-stride), -1 one block, -k fixed k blocks (the kernel uses it to skip the trip-count division) */
#endif
#ifndef UNROLL
#define UNROLL 1    /* unrolling of the loop over a block's tiles: 1, 2, 4 */
#endif
#ifndef TYPE
#define TYPE 0      /* element type: 0 float (at_ssum, at_sdot), 1 double (at_dsum, at_ddot; VEC 1 or 2, FINISH 0..3) */
#endif

/* The element type: inputs, block partials and the result. */
#if TYPE == 1
typedef double rd_t;
#elif TYPE == 0
typedef float rd_t;
#else
#error "TYPE must be 0 (float) or 1 (double)"
#endif
#if TYPE == 1 && (VEC == 4 || FINISH == 4)
#error "double takes VEC 1 or 2 (16-byte loads) and FINISH 0..3 (the gather tags float bits)"
#endif

/* A tile is what one block reads per loop trip: BLOCK * ITEMS vectors.
 * (#pragma unroll does not expand macros: it takes a constant.) */
static constexpr int rd_unroll = UNROLL;

template <int V> struct rd_vec;
#if TYPE == 1
template <> struct rd_vec<1> { typedef double type; };
template <> struct rd_vec<2> { typedef double2 type; };
#else
template <> struct rd_vec<1> { typedef float type; };
template <> struct rd_vec<2> { typedef float2 type; };
template <> struct rd_vec<4> { typedef float4 type; };
#endif

/* Sum of one vector (sum) or of its products with another (dot), paired so
 * the four lanes form a short tree. */
__device__ __forceinline__ float rd_value(float a, float b)
{
#if RED_DOT
    return a * b;
#else
    (void)b;
    return a;
#endif
}
__device__ __forceinline__ float rd_value(float2 a, float2 b)
{
#if RED_DOT
    return fmaf(a.y, b.y, a.x * b.x);
#else
    (void)b;
    return a.x + a.y;
#endif
}
__device__ __forceinline__ float rd_value(float4 a, float4 b)
{
#if RED_DOT
    return fmaf(a.y, b.y, a.x * b.x) + fmaf(a.w, b.w, a.z * b.z);
#else
    (void)b;
    return (a.x + a.y) + (a.z + a.w);
#endif
}
#if TYPE == 1
__device__ __forceinline__ double rd_value(double a, double b)
{
#if RED_DOT
    return a * b;
#else
    (void)b;
    return a;
#endif
}
__device__ __forceinline__ double rd_value(double2 a, double2 b)
{
#if RED_DOT
    return fma(a.y, b.y, a.x * b.x);
#else
    (void)b;
    return a.x + a.y;
#endif
}
#endif

/* This thread's share of nvec vectors of width V starting at x (and y):
 * full tiles grid-strided with ITEMS unchecked loads each, then the one
 * block whose turn it is takes the partial tile with bounds checks. */
template <int V>
__device__ __forceinline__ rd_t rd_thread(const rd_t *__restrict__ x,
                                          const rd_t *__restrict__ y,
                                          long long nvec)
{
    typedef typename rd_vec<V>::type vec;
    const vec *xv = (const vec *)x;
    const vec *yv = (const vec *)y;
    const long long tile = (long long)BLOCK * ITEMS;
    const long long nfull = nvec / tile;
    const long long step = (long long)gridDim.x * tile;
    const long long first = blockIdx.x;
    /* Full tiles this block reads: with one block per tile (GRID 0: the
     * host launches ceil(nvec / tile) blocks) at most one, with one block
     * all of them; else a 32-bit division where it fits (a 64-bit one is
     * a long subroutine). */
#if GRID == 0
    const long long trips = first < nfull ? 1 : 0;
#elif GRID == -1
    const long long trips = nfull;
#else
    long long trips = 0;
    if (first < nfull)
        trips = nfull <= 0xffffffffLL
                    ? (long long)((unsigned)(nfull - 1 - first) / gridDim.x) + 1
                    : (nfull - 1 - first) / gridDim.x + 1;
#endif
    rd_t acc[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        acc[u] = 0.0f;
    const vec *px = xv + first * tile + threadIdx.x;
    const vec *py = yv + first * tile + threadIdx.x;
#pragma unroll rd_unroll
    for (long long k = 0; k < trips; k++) {
        vec a[ITEMS], b[ITEMS];
#pragma unroll
        for (int u = 0; u < ITEMS; u++) {
            a[u] = __ldg(px + u * BLOCK);
            b[u] = RED_DOT ? __ldg(py + u * BLOCK) : a[u];
        }
#pragma unroll
        for (int u = 0; u < ITEMS; u++)
            acc[u] += rd_value(a[u], b[u]);
        px += step;
        py += step;
    }
    if (first + trips * gridDim.x == nfull) {
        for (long long i = nfull * tile + threadIdx.x; i < nvec; i += BLOCK) {
            vec a = __ldg(xv + i);
            vec b = RED_DOT ? __ldg(yv + i) : a;
            acc[0] += rd_value(a, b);
        }
    }
#pragma unroll
    for (int w = 1; w < ITEMS; w *= 2)
#pragma unroll
        for (int u = 0; u + w < ITEMS; u += 2 * w)
            acc[u] += acc[u + w];
    return acc[0];
}

/* Reduces v over the block in the configured style; the total is valid in
 * thread 0. smem holds BLOCK elements (32 for the warp-shuffle style). */
__device__ __forceinline__ rd_t rd_block(rd_t v, rd_t *smem)
{
    const int tid = threadIdx.x;
#if STYLE == 3
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    if (BLOCK > 32) {
        if ((tid & 31) == 0)
            smem[tid >> 5] = v;
        __syncthreads();
        if (tid < 32) {
            v = tid < BLOCK / 32 ? smem[tid] : 0.0f;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                v += __shfl_down_sync(0xffffffffu, v, o);
        }
    }
    return v;
#else
    smem[tid] = v;
    __syncthreads();
#if STYLE == 0 || STYLE == 4
    /* seed 3 methods 1 and 2: thread 0 adds the block's values in order */
    if (tid == 0) {
        rd_t s = 0.0f;
        for (int i = 0; i < BLOCK; i++)
            s += smem[i];
        v = s;
    }
#elif STYLE == 1
    /* seed 3 method 3: halving tree */
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            smem[tid] += smem[tid + s];
        __syncthreads();
    }
    v = smem[0];
#elif STYLE == 2
    /* seed 4: interleaved tree with a growing mask */
    int offset = 1, mask = 1;
    while (offset < BLOCK) {
        if ((tid & mask) == 0)
            smem[tid] += smem[tid + offset];
        offset *= 2;
        mask = offset + mask;
        __syncthreads();
    }
    v = smem[0];
#else
#error "STYLE must be 0..4"
#endif
    return v;
#endif
}

/* Partials up to this many are summed by one warp (no barrier, no shared
 * memory): each lane issues 8 loads before adding, 16 at most. */
#define RD_WARP_FINISH_MAX 512

/* Sum of count <= RD_WARP_FINISH_MAX partials by the calling warp (all 32
 * lanes): strided float64 per lane, then a float64 shuffle tree. Fixed
 * order for a given count; the total is valid in lane 0. */
__device__ __forceinline__ rd_t rd_finish_warp(const rd_t *partials, unsigned count)
{
    const unsigned lane = threadIdx.x & 31;
    double s = 0.0;
    for (unsigned base = 0; base < count; base += 32 * 8) {
        rd_t p[8];
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const unsigned i = base + u * 32 + lane;
            p[u] = i < count ? __ldcg(partials + i) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < 8; u++)
            s += (double)p[u];
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    return (rd_t)s;
}

/* Sums count block partials in a fixed order and stores the total:
 * deterministic for a given count. Called by the whole block; up to
 * RD_WARP_FINISH_MAX partials warp 0 alone does it (rd_finish_warp), more
 * are summed strided in float64 per thread, then in the block style. */
__device__ __forceinline__ void rd_finish(const rd_t *partials, unsigned count,
                                          rd_t *result, rd_t *smem)
{
    if (count <= RD_WARP_FINISH_MAX) {
        if (threadIdx.x < 32) {
            const rd_t v = rd_finish_warp(partials, count);
            if (threadIdx.x == 0)
                *result = v;
        }
        return;
    }
    double s = 0.0;
    for (unsigned i = threadIdx.x; i < count; i += BLOCK)
        s += (double)__ldcg(partials + i);
    rd_t v = rd_block((rd_t)s, smem);
    if (threadIdx.x == 0)
        *result = v;
}

/* FINISH 4: the most blocks block 0 gathers from (8 slots per lane). */
#define RD_GATHER_MAX 256
/* FINISH 4: how long block 0 waits for the other blocks' partials before it
 * gives up and stores NaN (a partial that never comes means two calls
 * shared the scratch concurrently): a guard against a hang, far beyond any
 * legitimate wait. */
#define RD_GATHER_TIMEOUT_NS 2000000000LL

__device__ __forceinline__ long long rd_globaltimer()
{
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* The first (and with FINISH 0, 2, 3 or 4, only) pass. x (and y) + head are
 * aligned to VEC floats when vec_ok; head < VEC leading and the ragged
 * trailing elements are added by block 0 with scalar loads, issued before
 * the vector loads. With one block the result is written directly;
 * otherwise per FINISH: atomicAdd into a zeroed result, a partial per block
 * for reduce_finish, partials plus a counter that the last block to arrive
 * resets while it finishes, or (3) a float64 atomicAdd per block into the
 * accumulator `partials` points at (a double, 0 between calls) plus the
 * counter, where the last block takes the total and puts 0 back; (4) every
 * block but 0 stores (epoch << 32 | its total's bits) into its 64-bit slot
 * in one store, no fence and no atomic, and warp 0 of block 0 waits until
 * every slot carries this call's epoch, then adds them in block order
 * (deterministic). */
extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_main(const rd_t *__restrict__ x, const rd_t *__restrict__ y, long long n,
            int head, int vec_ok, rd_t *result, rd_t *partials, unsigned *counter,
            unsigned epoch)
{
    __shared__ rd_t smem[STYLE == 3 ? 32 : BLOCK];
    const int width = VEC > 1 && vec_ok ? VEC : 1;
    if (width == 1)
        head = 0;
    rd_t v = 0.0f;
    if (blockIdx.x == 0) {
        const long long tail = head + (n - head) / width * width;
        const int tid = threadIdx.x;
        if (tid < head)
            v += rd_value(x[tid], y[tid]);
        if (tail + tid < n)
            v += rd_value(x[tail + tid], y[tail + tid]);
    }
    if (VEC > 1 && width > 1)
        v += rd_thread<VEC>(x + head, y + head, (n - head) / VEC);
    else
        v += rd_thread<1>(x, y, n);
    v = rd_block(v, smem);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0)
            *result = v;
        return;
    }
#if FINISH == 0
    (void)partials;
    (void)counter;
    if (threadIdx.x == 0)
        atomicAdd(result, v);
#elif FINISH == 1
    (void)counter;
    if (threadIdx.x == 0)
        partials[blockIdx.x] = v;
#elif FINISH == 2
    /* One acquire-release increment instead of two fences: it publishes
     * this block's partial, and in the last block makes every partial
     * visible. It wraps to 0 when the last block arrives: ready for the
     * next call. Up to RD_WARP_FINISH_MAX blocks, warp 0 alone takes the
     * ticket and finishes (no barrier); beyond, the whole block. */
    const bool warp_finish = gridDim.x <= RD_WARP_FINISH_MAX;
    if (warp_finish && threadIdx.x >= 32)
        return;
    __shared__ int is_last;
    unsigned ticket = 0;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = v;
        asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;"
                     : "=r"(ticket) : "l"(counter), "r"(gridDim.x - 1) : "memory");
    }
    if (warp_finish) {
        ticket = __shfl_sync(0xffffffffu, ticket, 0);
        __syncwarp();   /* orders lane 0's acquire before the other lanes' loads */
        if (ticket == gridDim.x - 1) {
            const rd_t total = rd_finish_warp(partials, gridDim.x);
            if (threadIdx.x == 0)
                *result = total;
        }
        return;
    }
    if (threadIdx.x == 0)
        is_last = ticket == gridDim.x - 1;
    __syncthreads();
    if (is_last)
        rd_finish(partials, gridDim.x, result, smem);
#elif FINISH == 3
    /* Thread 0 alone: add the block's total into the accumulator, then one
     * acquire-release increment (it orders the add before the ticket and,
     * in the last block, every block's add before the exchange). The
     * counter wraps to 0 when the last block arrives; the last block swaps
     * the total out for 0. Both are back to 0 for the next call, whatever
     * its n or grid. No memset, no second kernel. */
    if (threadIdx.x == 0) {
        double *acc = (double *)partials;
        atomicAdd(acc, (double)v);
        unsigned ticket;
        asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;"
                     : "=r"(ticket) : "l"(counter), "r"(gridDim.x - 1) : "memory");
        if (ticket == gridDim.x - 1)
            *result = (rd_t)__longlong_as_double(
                (long long)atomicExch((unsigned long long *)acc, 0ull));
    }
#elif FINISH == 4
    (void)counter;
    unsigned long long *slots = (unsigned long long *)partials;
    if (blockIdx.x != 0) {
        if (threadIdx.x == 0) {
            const unsigned long long word =
                (unsigned long long)epoch << 32 | __float_as_uint(v);
            asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(slots + blockIdx.x),
                         "l"(word) : "memory");
        }
        return;
    }
    if (threadIdx.x >= 32)
        return;
    /* Lane l owns slots l, l + 32, ...; all its loads are in flight at
     * once, and only the missing ones are read again. Block 0's own total
     * (thread 0's v) is slot 0. */
    const unsigned lane = threadIdx.x, count = gridDim.x;
    float p[RD_GATHER_MAX / 32];
    unsigned pending = 0;
#pragma unroll
    for (int u = 0; u < RD_GATHER_MAX / 32; u++) {
        const unsigned i = lane + 32u * u;
        p[u] = i == 0 ? v : 0.0f;
        if (i != 0 && i < count)
            pending |= 1u << u;
    }
    const long long start = rd_globaltimer();
    bool timed_out = false;
    while (pending) {
        unsigned long long word[RD_GATHER_MAX / 32];
#pragma unroll
        for (int u = 0; u < RD_GATHER_MAX / 32; u++)
            if (pending & (1u << u))
                asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                             : "=l"(word[u]) : "l"(slots + lane + 32u * u) : "memory");
#pragma unroll
        for (int u = 0; u < RD_GATHER_MAX / 32; u++) {
            if ((pending & (1u << u)) && (unsigned)(word[u] >> 32) == epoch) {
                p[u] = __uint_as_float((unsigned)word[u]);
                pending &= ~(1u << u);
            }
        }
        if (pending && rd_globaltimer() - start > RD_GATHER_TIMEOUT_NS) {
            timed_out = true;
            break;
        }
    }
    double s = 0.0;
#pragma unroll
    for (int u = 0; u < RD_GATHER_MAX / 32; u++)
        s += (double)p[u];
    __syncwarp();
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    const bool failed = __any_sync(0xffffffffu, timed_out);
    if (lane == 0)
        *result = failed ? __int_as_float(0x7fc00000) : (float)s;
#else
#error "FINISH must be 0..4"
#endif
}

/* FINISH 1: the second pass, one block over the first pass's partials; compiled only
 * for FINISH 1, the one reduce.c launches it for (14% of a compile: bench_compile --trace). */
#if FINISH == 1
extern "C" __global__ void __launch_bounds__(BLOCK)
reduce_finish(const rd_t *partials, unsigned count, rd_t *result)
{
    __shared__ rd_t smem[STYLE == 3 ? 32 : BLOCK];
    rd_finish(partials, count, result, smem);
}
#endif
