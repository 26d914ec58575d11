/* bench_reduce.cu: tuned at_ssum/at_sdot against CUB DeviceReduce::Sum, cuBLAS cublasSdot,
 * the seeds' methods and an empty launch; `--search` first tunes the bench sizes exhaustively;
 * `--sizes 1024,65536,...` limits both to some of the bench sizes. */
#include <cub/cub.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The project's headers are C without extern "C" guards (except autotune.h).
 * bench.mk gives nvcc -Iruntime -Idriver -Itemplates -Idb; built with
 * -Iruntime -Idriver alone, tpl.h is reached by its path and the db.h
 * declarations used here are mirrored below. */
extern "C" {
#include "autotune.h"
#include "cudrv.h"
#include "exec.h"
#if __has_include("tpl.h")
#include "tpl.h"
#else
#include "../templates/tpl.h"
#endif
#if __has_include("db.h") && __has_include("tpl.h")
#include "db.h"
#define BN_REAL_DB_H 1
#endif
}

/* Mirror of the parts of db/db.h used here, for builds that cannot see it;
 * checked against the real header whenever the build can. */
struct bn_result_layout {
    long long id;
    long long session_id;
    char device_uuid[48];
    char kernel[32];
    char source_hash[20];
    tpl_problem problem;
    char config[TPL_CONFIG_LEN];
    char status[16];
    double time_ms, time_min_ms, time_max_ms;
    int runs;
    double gflops, gbs, rel_error, compile_ms;
    char binary_key[40];
    char error[1024];
    char created[32];
    int deterministic;
    double sustained_ms, rank_ms;
};
struct bn_measurement_layout {
    char device_uuid[48];
    char kernel[32];
    tpl_problem problem;
    char name[64];
    double time_ms, gflops, gbs, rel_error;
    char note[256];
    char created[32];
};
#ifdef BN_REAL_DB_H
static_assert(sizeof(bn_result_layout) == sizeof(db_result) &&
              offsetof(bn_result_layout, config) == offsetof(db_result, config) &&
              offsetof(bn_result_layout, deterministic) == offsetof(db_result, deterministic),
              "bench_reduce.cu's db_result mirror is out of date with db/db.h");
static_assert(sizeof(bn_measurement_layout) == sizeof(db_measurement) &&
              offsetof(bn_measurement_layout, note) == offsetof(db_measurement, note),
              "bench_reduce.cu's db_measurement mirror is out of date with db/db.h");
#else
extern "C" {
typedef struct db db;
typedef bn_result_layout db_result;
typedef bn_measurement_layout db_measurement;
void db_default_path(char *out, size_t len);
at_status db_open(db **out, const char *path, int create, char *err, size_t errlen);
void db_close(db *d);
const char *db_errmsg(const db *d);
at_status db_put_device(db *d, const at_device_info *info, const char *nvrtc_version);
at_status db_store_result(db *d, db_result *r);
at_status db_put_measurement(db *d, db_measurement *m);
}
#endif

extern "C" const tpl_family tpl_sum, tpl_dot;

#define BN_CUDA(call) do { cudaError_t bn_e = (call); if (bn_e != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bn_e)); \
    exit(1); } } while (0)

static const long long bn_sizes[] = {1LL << 10, 1LL << 16, 1LL << 20, 1LL << 24, 1LL << 28,
                                     1000003};
#define BN_NSIZES ((int)(sizeof bn_sizes / sizeof bn_sizes[0]))
/* Sizes left out by --sizes. */
static int bn_skip[BN_NSIZES];
#define BN_MAXN (1LL << 28)
/* A result is accepted within this relative error of the float64 sum. */
#define BN_TOL 1e-5

__global__ void bn_empty_kernel() {}

/* Keeps the GPU busy for ns nanoseconds, so the host has queued what follows
 * before the GPU reaches it. */
__global__ void bn_spin_kernel(long long ns)
{
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

/* Timing modes: "queued" puts a 50 us spin kernel ahead of the first event,
 * so the events time the GPU's work for the call (the case of an
 * application that queues work ahead); "idle" times one call on an idle
 * GPU, host submission included. */
#define BN_SPIN_NS 50000

/* ---------------- timing ---------------- */

typedef int (*bn_op)(void *ctx);

static int bn_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the event-timed runs of op on the legacy stream after warmup
 * untimed ones (queued or idle mode, above): at least min_runs, then until
 * budget_ms of GPU time or max_runs (at least 5 runs and 1 s for slow ops).
 * abandon_ms > 0 stops after 3 runs slower than it (returns the median so
 * far, negated). NAN if op failed. */
/* Runs, fastest and slowest run of the last bn_time call. */
static int bn_last_runs;
static double bn_last_min_ms, bn_last_max_ms;

/* The pair of events every timing here uses, created on first use. */
static void bn_events(cudaEvent_t *start, cudaEvent_t *stop)
{
    static cudaEvent_t e0, e1;
    static int made;
    if (!made) {
        BN_CUDA(cudaEventCreate(&e0));
        BN_CUDA(cudaEventCreate(&e1));
        made = 1;
    }
    *start = e0;
    *stop = e1;
}

static double bn_time(bn_op op, void *ctx, int queued, int warmup, int min_runs, int max_runs,
                      double budget_ms, double abandon_ms)
{
    cudaEvent_t e0, e1;
    bn_events(&e0, &e1);
    for (int i = 0; i < warmup; i++)
        if (op(ctx))
            return NAN;
    BN_CUDA(cudaDeviceSynchronize());
    double *times = (double *)malloc((size_t)max_runs * sizeof *times), total = 0;
    int n = 0, abandoned = 0;
    while (n < max_runs && (n < min_runs || total < budget_ms) && !(n >= 5 && total > 1000.0)) {
        if (queued)
            bn_spin_kernel<<<1, 1>>>(BN_SPIN_NS);
        BN_CUDA(cudaEventRecord(e0, 0));
        if (op(ctx)) {
            free(times);
            return NAN;
        }
        BN_CUDA(cudaEventRecord(e1, 0));
        BN_CUDA(cudaEventSynchronize(e1));
        float ms;
        BN_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        times[n++] = ms;
        total += ms;
        if (abandon_ms > 0 && n == 3) {
            qsort(times, 3, sizeof *times, bn_cmp);
            if (times[1] > abandon_ms) {
                abandoned = 1;
                break;
            }
        }
    }
    qsort(times, (size_t)n, sizeof *times, bn_cmp);
    double med = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    bn_last_runs = n;
    bn_last_min_ms = times[0];
    bn_last_max_ms = times[n - 1];
    free(times);
    return abandoned ? -med : med;
}

/* ---------------- the operations ---------------- */

typedef struct bn_call {
    long long n;
    const float *x, *y;
    float *result;
    at_handle *h;
    cublasHandle_t cublas;
    void *cub_temp;
    size_t cub_bytes;
    const tpl_family *fam;
    const int *cfg;
    at_exec *ex;
} bn_call;

static int bn_tuned_sum(void *p)
{
    bn_call *c = (bn_call *)p;
    at_status s = at_ssum(c->h, c->n, c->x, c->result);
    if (s != AT_OK)
        fprintf(stderr, "at_ssum: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_tuned_dot(void *p)
{
    bn_call *c = (bn_call *)p;
    at_status s = at_sdot(c->h, c->n, c->x, c->y, c->result);
    if (s != AT_OK)
        fprintf(stderr, "at_sdot: %s: %s\n", at_status_string(s), at_errmsg(c->h));
    return s != AT_OK;
}

static int bn_cub(void *p)
{
    bn_call *c = (bn_call *)p;
    size_t bytes = c->cub_bytes;
    cudaError_t e = cub::DeviceReduce::Sum(c->cub_temp, bytes, c->x, c->result, (int)c->n);
    if (e != cudaSuccess)
        fprintf(stderr, "cub::DeviceReduce::Sum: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}

static int bn_cublas(void *p)
{
    bn_call *c = (bn_call *)p;
    cublasStatus_t s = cublasSdot(c->cublas, (int)c->n, c->x, 1, c->y, 1, c->result);
    if (s != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cublasSdot failed: %d\n", (int)s);
    return s != CUBLAS_STATUS_SUCCESS;
}

/* A configuration of the family run directly (seeds, --search). */
static int bn_config(void *p)
{
    bn_call *c = (bn_call *)p;
    tpl_args a = tpl_reduce_args(c->n, (CUdeviceptr)c->x,
                                 c->fam == &tpl_dot ? (CUdeviceptr)c->y : 0,
                                 (CUdeviceptr)c->result);
    at_status s = c->fam->run(c->ex, c->cfg, &a);
    if (s != AT_OK)
        fprintf(stderr, "%s run: %s: %s\n", c->fam->name, at_status_string(s), c->ex->errmsg);
    return s != AT_OK;
}

static int bn_empty(void *p)
{
    (void)p;
    bn_empty_kernel<<<1, 32>>>();
    return cudaGetLastError() != cudaSuccess;
}

/* ---------------- latency floor probes ----------------
 * Pieces of a reduction timed alone, the way the bench times everything
 * else, to show what the small-n targets are up against. None of them is a
 * reduction of the whole input except fl_blocks with one block. */

__global__ void fl_store(float *r)
{
    if (threadIdx.x == 0)
        *r = 1.0f;
}

__global__ void fl_load_store(const float *x, float *r)
{
    if (threadIdx.x == 0)
        *r = __ldg(x);
}

/* The sum over the warp's 32 lanes of v (valid in lane 0): a shuffle tree. */
template <typename T>
__device__ __forceinline__ T fl_warp_sum(T v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float fl_total(float a) { return a; }
__device__ __forceinline__ float fl_total(float4 a) { return (a.x + a.y) + (a.z + a.w); }

/* Each block reduces its BLOCK x ITEMS vectors (coalesced loads of float or
 * float4, all in flight at once, warp shuffles, one barrier) and stores its
 * own total: what every multi-block reduction does before its blocks
 * combine. With one block it is a complete single-block sum. */
template <typename V, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) fl_blocks(const V *__restrict__ x, float *partials)
{
    __shared__ float warp_sums[BLOCK / 32];
    const V *p = x + (long long)blockIdx.x * BLOCK * ITEMS + threadIdx.x;
    V a[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        a[u] = __ldg(p + u * BLOCK);
    float v = 0.0f;
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        v += fl_total(a[u]);
    v = fl_warp_sum(v);
    if (BLOCK > 32) {
        if ((threadIdx.x & 31) == 0)
            warp_sums[threadIdx.x >> 5] = v;
        __syncthreads();
        if (threadIdx.x < 32) {
            v = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
            v = fl_warp_sum(v);
        }
    }
    if (threadIdx.x == 0)
        partials[blockIdx.x] = v;
}

/* Each warp reduces its 32 x ITEMS floats and stores its own total: no
 * barrier, no shared memory; the least work a multi-block read can end in. */
template <int ITEMS>
__global__ void __launch_bounds__(64) fl_warps(const float *__restrict__ x, float *partials)
{
    const long long warp = (long long)blockIdx.x * 2 + (threadIdx.x >> 5);
    const float *p = x + warp * 32 * ITEMS + (threadIdx.x & 31);
    float a[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        a[u] = __ldg(p + u * 32);
    float v = 0.0f;
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        v += a[u];
    v = fl_warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        partials[warp] = v;
}

__global__ void fl_cluster_empty(const float4 *, float *) {}

/* The gather finish with a slot per warp instead of per block: each warp
 * stores (epoch << 32 | its total) with one relaxed store, warp 0 of block 0
 * reads all 256 slots until they carry this call's epoch, then adds them in
 * order. 128 blocks x 64 threads x 8 floats = 2^16. */
__global__ void __launch_bounds__(64) fl_warp_gather(const float *__restrict__ x,
                                                     unsigned long long *slots, unsigned epoch,
                                                     float *result)
{
    const unsigned warp = blockIdx.x * 2 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    const float *p = x + (long long)warp * 256 + lane;
    float a[8];
#pragma unroll
    for (int u = 0; u < 8; u++)
        a[u] = __ldg(p + u * 32);
    float v = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
    v = fl_warp_sum(v);
    if (warp != 0) {
        if (lane == 0) {
            const unsigned long long word = (unsigned long long)epoch << 32 | __float_as_uint(v);
            asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(slots + warp), "l"(word)
                         : "memory");
        }
        return;
    }
    float part[8];
    unsigned pending = 0;
#pragma unroll
    for (int u = 0; u < 8; u++) {
        part[u] = 0.0f;
        pending |= (lane + 32u * u != 0) << u;
    }
    part[0] = lane == 0 ? v : 0.0f;
    while (pending) {
        unsigned long long w[8];
#pragma unroll
        for (int u = 0; u < 8; u++)
            if (pending & (1u << u))
                asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w[u])
                             : "l"(slots + lane + 32u * u) : "memory");
#pragma unroll
        for (int u = 0; u < 8; u++)
            if ((pending & (1u << u)) && (unsigned)(w[u] >> 32) == epoch) {
                part[u] = __uint_as_float((unsigned)w[u]);
                pending &= ~(1u << u);
            }
    }
    double s = 0.0;
#pragma unroll
    for (int u = 0; u < 8; u++)
        s += part[u];
    s = fl_warp_sum(s);
    if (lane == 0)
        *result = (float)s;
}

/* A whole sum of C x BLOCK x ITEMS float4 by one thread-block cluster of C
 * blocks, combined on chip: every warp sends its total straight into block
 * 0's shared memory with st.async, which also counts the bytes on an
 * mbarrier there; warp 0 of block 0 waits on that barrier and adds the
 * totals in a fixed order. No L2 round trip, no __syncthreads. The cluster
 * barrier (arrive at the start, wait before the first remote store) only
 * guarantees that block 0 has initialised its mbarrier. */
template <int C, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) fl_cluster_sum(const float4 *__restrict__ x, float *result)
{
    constexpr int WARPS = BLOCK / 32;
    __shared__ float totals[C * WARPS];
    __shared__ alignas(8) unsigned long long bar;
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
    if (rank == 0 && threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar_addr) : "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     :: "r"(bar_addr), "r"(4 * C * WARPS) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    const float4 *p = x + ((long long)rank * BLOCK * ITEMS + threadIdx.x);
    float4 a[ITEMS];
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        a[u] = __ldg(p + u * BLOCK);
    float v = 0.0f;
#pragma unroll
    for (int u = 0; u < ITEMS; u++)
        v += (a[u].x + a[u].y) + (a[u].z + a[u].w);
    v = fl_warp_sum(v);
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
    const unsigned warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        const unsigned slot = (unsigned)__cvta_generic_to_shared(&totals[rank * WARPS + warp]);
        unsigned rslot, rbar;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(rslot) : "r"(slot));
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(rbar) : "r"(bar_addr));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];"
                     :: "r"(rslot), "r"(__float_as_uint(v)), "r"(rbar) : "memory");
    }
    if (rank != 0 || warp != 0)
        return;
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p;\n"
                     "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0;\n"
                     "selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(bar_addr) : "memory");
    float s = 0.0f;
    for (int i = lane; i < C * WARPS; i += 32)
        s += totals[i];
    s = fl_warp_sum(s);
    if (lane == 0)
        *result = s;
}

typedef struct fl_probe_ctx {
    int which;
    const float *x;
    float *result, *partials;   /* 1024 floats, zeroed; the warp gather's slots from 512 */
    unsigned epoch;
} fl_probe_ctx;

enum { FL_STORE, FL_LOAD_STORE, FL_BLOCK_2_10, FL_BLOCKS_2_16, FL_WARPS_2_16, FL_BLOCK_2_16,
       FL_BLOCKS_2_20, FL_BLOCKS4_2_20, FL_CLUSTER_2, FL_CLUSTER_8, FL_WARP_GATHER, FL_CSUM_8, FL_CSUM_16, FL_CSUM_16_512, FL_CSUM_8_256,
       FL_NPROBES };

static const char *const fl_names[FL_NPROBES] = {
    "store", "load_store", "1_block_2^10", "128_blocks_2^16", "256_warps_2^16", "1_block_2^16",
    "256_blocks_2^20", "128_blocks4_2^20", "cluster_of_2", "cluster_of_8", "warp_gather", "csum_8x1024", "csum_16x1024", "csum_16x512",
    "csum_8x256"};
static const char *const fl_what[FL_NPROBES] = {
    "<<<1,32>>>: thread 0 stores a constant through a pointer argument",
    "<<<1,32>>>: thread 0 loads x[0] and stores it",
    "<<<1,64>>> x 16 floats per thread: a whole single-block sum of 2^10",
    "<<<128,64>>> x 8 floats: each block stores its own total, no combine",
    "<<<128,64>>> x 8 floats: each warp stores its own total, no barrier, no combine",
    "<<<1,1024>>> x 64 floats: a whole single-block sum of 2^16 (one SM's bandwidth)",
    "<<<256,512>>> x 8 floats: 2^20, each block stores its own total, no combine",
    "<<<128,512>>> x 4 float4: 2^20, each block stores its own total, no combine",
    "empty kernel launched as one cluster of 2 blocks (cudaLaunchKernelEx)",
    "empty kernel launched as one cluster of 8 blocks (cudaLaunchKernelEx)",
    "whole sum of 2^16: <<<128,64>>> x 8 floats, a tagged slot per warp gathered by block 0",
    "whole sum of 2^16: one cluster of 8 x 1024 threads x 2 float4, st.async into block 0",
    "whole sum of 2^16: one cluster of 16 x 1024 threads x 1 float4 (non-portable size)",
    "whole sum of 2^16: one cluster of 16 x 512 threads x 2 float4 (non-portable size)",
    "whole sum of 2^16: one cluster of 8 x 256 threads x 8 float4"};

/* One cluster of `size` blocks running kernel over the probe's x. */
static int fl_cluster_launch(void (*kernel)(const float4 *, float *), unsigned size,
                             unsigned threads, fl_probe_ctx *c)
{
    if (size > 8 &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
            cudaSuccess)
        return 1;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(size);
    cfg.blockDim = dim3(threads);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = size;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, (const float4 *)c->x, c->result) != cudaSuccess;
}

static int fl_probe(void *p)
{
    fl_probe_ctx *c = (fl_probe_ctx *)p;
    switch (c->which) {
    case FL_STORE:
        fl_store<<<1, 32>>>(c->result);
        break;
    case FL_LOAD_STORE:
        fl_load_store<<<1, 32>>>(c->x, c->result);
        break;
    case FL_BLOCK_2_10:
        fl_blocks<float, 64, 16><<<1, 64>>>(c->x, c->result);
        break;
    case FL_BLOCKS_2_16:
        fl_blocks<float, 64, 8><<<128, 64>>>(c->x, c->partials);
        break;
    case FL_WARPS_2_16:
        fl_warps<8><<<128, 64>>>(c->x, c->partials);
        break;
    case FL_BLOCK_2_16:
        fl_blocks<float, 1024, 64><<<1, 1024>>>(c->x, c->result);
        break;
    case FL_BLOCKS_2_20:
        fl_blocks<float, 512, 8><<<256, 512>>>(c->x, c->partials);
        break;
    case FL_BLOCKS4_2_20:
        fl_blocks<float4, 512, 4><<<128, 512>>>((const float4 *)c->x, c->partials);
        break;
    case FL_CLUSTER_2:
        return fl_cluster_launch(fl_cluster_empty, 2, 32, c);
    case FL_CLUSTER_8:
        return fl_cluster_launch(fl_cluster_empty, 8, 32, c);
    case FL_WARP_GATHER:
        fl_warp_gather<<<128, 64>>>(c->x, (unsigned long long *)(c->partials + 512), ++c->epoch,
                                    c->result);
        break;
    case FL_CSUM_8:
        return fl_cluster_launch(fl_cluster_sum<8, 1024, 2>, 8, 1024, c);
    case FL_CSUM_16:
        return fl_cluster_launch(fl_cluster_sum<16, 1024, 1>, 16, 1024, c);
    case FL_CSUM_16_512:
        return fl_cluster_launch(fl_cluster_sum<16, 512, 2>, 16, 512, c);
    case FL_CSUM_8_256:
        return fl_cluster_launch(fl_cluster_sum<8, 256, 8>, 8, 256, c);
    default:
        return 1;
    }
    return cudaGetLastError() != cudaSuccess;
}

static double bn_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* Host time of one call (the submission alone, not the GPU's work): median
 * over 15 batches of 64 calls, the GPU drained between batches. */
static double bn_host_us(bn_op op, void *ctx)
{
    double t[15];
    for (int b = 0; b < 15; b++) {
        BN_CUDA(cudaDeviceSynchronize());
        double t0 = bn_now_us();
        for (int i = 0; i < 64; i++)
            if (op(ctx))
                return NAN;
        t[b] = (bn_now_us() - t0) / 64;
    }
    BN_CUDA(cudaDeviceSynchronize());
    qsort(t, 15, sizeof t[0], bn_cmp);
    return t[7];
}

/* Per-call GPU time of 32 calls back to back between two events, all 32
 * queued before the first event fires (an 800 us spin kernel runs ahead:
 * longer than the host takes to submit 32 calls of any method here, about
 * 11 us each at most), so the GPU, not the host, sets the pace: median of
 * 15 batches. Finer than one call's events (their resolution is about
 * 0.2-0.5 us), and the front end may overlap one call's launch with the
 * previous call's work. */
#define BN_BATCH_SPIN_NS 800000
static double bn_time_batch(bn_op op, void *ctx)
{
    cudaEvent_t e0, e1;
    bn_events(&e0, &e1);
    double t[15];
    for (int b = 0; b < 15; b++) {
        bn_spin_kernel<<<1, 1>>>(BN_BATCH_SPIN_NS);
        BN_CUDA(cudaEventRecord(e0, 0));
        for (int i = 0; i < 32; i++)
            if (op(ctx))
                return NAN;
        BN_CUDA(cudaEventRecord(e1, 0));
        BN_CUDA(cudaEventSynchronize(e1));
        float ms;
        BN_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        t[b] = ms * 1e3 / 32;
    }
    qsort(t, 15, sizeof t[0], bn_cmp);
    return t[7];
}

/* Poisons the result, runs op once, returns |got - ref| / |ref| (inf on
 * NaN, -1 if op failed). */
static double bn_check(bn_op op, bn_call *c, double ref, float *got)
{
    BN_CUDA(cudaMemset(c->result, 0xff, sizeof(float)));
    BN_CUDA(cudaDeviceSynchronize());
    if (op(c))
        return -1;
    BN_CUDA(cudaDeviceSynchronize());
    float v;
    BN_CUDA(cudaMemcpy(&v, c->result, sizeof v, cudaMemcpyDeviceToHost));
    if (got)
        *got = v;
    if (!isfinite(v))
        return INFINITY;
    return ref == 0.0 ? fabs((double)v) : fabs((double)v - ref) / fabs(ref);
}

/* ---------------- data ---------------- */

/* n floats in [0, 1) from a 64-bit LCG (top 24 bits), fresh per seed. */
static void bn_fill(float *v, long long n, unsigned long long seed)
{
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (long long i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (float)(s >> 40) * (1.0f / 16777216.0f);
    }
}

static void bn_reference(const float *x, const float *y, long long n, double *sum, double *dot)
{
    double s = 0, d = 0;
    for (long long i = 0; i < n; i++) {
        s += x[i];
        d += (double)x[i] * y[i];
    }
    *sum = s;
    *dot = d;
}

typedef struct bn_data {
    float *hx, *hy;          /* host copies */
    float *x, *y, *result;   /* device */
    double ref_sum, ref_dot;
} bn_data;

static void bn_make_data(bn_data *d, long long n, unsigned long long seed)
{
    bn_fill(d->hx, n, seed);
    bn_fill(d->hy, n, seed + 7777);
    BN_CUDA(cudaMemcpy(d->x, d->hx, (size_t)n * 4, cudaMemcpyHostToDevice));
    BN_CUDA(cudaMemcpy(d->y, d->hy, (size_t)n * 4, cudaMemcpyHostToDevice));
    bn_reference(d->hx, d->hy, n, &d->ref_sum, &d->ref_dot);
}

static void bn_gb(char *out, size_t len, double bytes, double ms)
{
    snprintf(out, len, "%.1f", bytes / (ms * 1e-3) * 1e-9);
}

static void bn_measure(db *d, const at_device_info *dev, const char *kernel, long long n,
                       const char *name, double ms, double bytes, double err, const char *note)
{
    if (!d || ms <= 0)
        return;
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", dev->uuid);
    snprintf(m.kernel, sizeof m.kernel, "%s", kernel);
    m.problem.n_dims = 1;
    m.problem.dims[0] = n;
    snprintf(m.name, sizeof m.name, "%s", name);
    m.time_ms = ms;
    m.gbs = bytes / (ms * 1e-3) * 1e-9;
    m.rel_error = err;
    snprintf(m.note, sizeof m.note, "%s", note);
    if (db_put_measurement(d, &m) != AT_OK)
        fprintf(stderr, "db_put_measurement: %s\n", db_errmsg(d));
}

/* ---------------- compiled configurations ---------------- */

typedef struct bn_item {
    int cfg[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN];
    void *cubin;
    size_t size;
    double compile_ms;
    CUmodule module;
    at_exec ex;
    char msg[512];
    double ms, err;
} bn_item;

typedef struct bn_pool {
    const tpl_family *fam;
    bn_item *items;
    int n, next;
    const char *arch;
    pthread_mutex_t lock;
} bn_pool;

static double bn_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void *bn_compile_worker(void *arg)
{
    bn_pool *p = (bn_pool *)arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n)
            return NULL;
        char *log = NULL;
        double t0 = bn_now_ms();
        if (tpl_compile(p->fam, p->items[i].cfg, p->arch, &p->items[i].cubin, &p->items[i].size,
                        &log) != AT_OK)
            fprintf(stderr, "compile failed: %s\n%s\n", p->items[i].text, log ? log : "");
        p->items[i].compile_ms = bn_now_ms() - t0;
        free(log);
    }
}

/* Compiles and loads items (in parallel); 0 on any failure. */
static int bn_build(const tpl_family *fam, bn_item *items, int n, const cudrv *cu,
                    const at_device_info *dev)
{
    bn_pool pool;
    pool.fam = fam;
    pool.items = items;
    pool.n = n;
    pool.next = 0;
    pool.arch = dev->arch;
    pthread_mutex_init(&pool.lock, NULL);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nth = cpus > 1 ? (int)(cpus < 32 ? cpus : 32) : 1;
    pthread_t th[32];
    for (int i = 0; i < nth; i++)
        pthread_create(&th[i], NULL, bn_compile_worker, &pool);
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++) {
        if (!items[i].cubin || cu->ModuleLoadData(&items[i].module, items[i].cubin) != CUDA_SUCCESS)
            return 0;
        ex_init(&items[i].ex, cu, dev, items[i].module, 0, items[i].msg, sizeof items[i].msg);
    }
    return 1;
}

static void bn_unbuild(const cudrv *cu, bn_item *items, int n)
{
    for (int i = 0; i < n; i++) {
        if (items[i].module) {
            ex_release(&items[i].ex);
            cu->ModuleUnload(items[i].module);
        }
        free(items[i].cubin);
    }
}

/* ---------------- --search: every valid configuration at the bench sizes ---------------- */

static int bn_by_time(const void *a, const void *b)
{
    const bn_item *x = (const bn_item *)a, *y = (const bn_item *)b;
    double tx = x->ms > 0 ? x->ms : 1e30, ty = y->ms > 0 ? y->ms : 1e30;
    return tx < ty ? -1 : tx > ty;
}

static int bn_search(const tpl_family *fam, const cudrv *cu, const at_device_info *dev,
                     bn_data *data, db *d)
{
    long long raw = tpl_space_size(fam);
    bn_item *items = (bn_item *)calloc((size_t)raw, sizeof *items);
    int n = 0;
    char why[256];
    for (long long i = 0; i < raw; i++) {
        tpl_config_from_index(fam, i, items[n].cfg);
        if (items[n].cfg[tpl_param_index(fam, "TYPE")] != 0 ||    /* FP32 only here */
            !fam->valid(items[n].cfg, dev, why, sizeof why))
            continue;
        tpl_config_format(fam, items[n].cfg, items[n].text, sizeof items[n].text);
        n++;
    }
    double t0 = bn_now_ms();
    if (!bn_build(fam, items, n, cu, dev)) {
        fprintf(stderr, "search %s: a configuration did not compile or load\n", fam->name);
        return 1;
    }
    printf("search %s: %d valid configurations compiled and loaded in %.1f s\n", fam->name, n,
           (bn_now_ms() - t0) * 1e-3);
    fflush(stdout);
    int failures = 0;
    for (int si = 0; si < BN_NSIZES; si++) {
        if (bn_skip[si])
            continue;
        long long nn = bn_sizes[si];
        tpl_problem p = {1, {nn}};
        double bytes = 0, flops = 0;
        fam->work(&p, &flops, &bytes);
        bn_make_data(data, nn, 500 + (unsigned long long)si);
        double ref = fam == &tpl_dot ? data->ref_dot : data->ref_sum;
        double best = 1e30, ts = bn_now_ms();
        int tried = 0, wrong = 0;
        for (int i = 0; i < n; i++) {
            items[i].ms = -1;
            items[i].err = -1;
            if (!fam->applicable(items[i].cfg, &p))
                continue;
            tried++;
            bn_call c;
            memset(&c, 0, sizeof c);
            c.n = nn;
            c.x = data->x;
            c.y = data->y;
            c.result = data->result;
            c.fam = fam;
            c.cfg = items[i].cfg;
            c.ex = &items[i].ex;
            double e = bn_check(bn_config, &c, ref, NULL);
            items[i].err = e;
            db_result r;
            memset(&r, 0, sizeof r);
            if (e < 0 || !(e <= fam->tolerance(&p))) {
                /* Over the tolerance is a recorded wrong_result (float
                 * atomics drift at large n), as in the tuner; a failed
                 * launch, NaN or a grossly wrong sum is a bug. */
                wrong++;
                failures += e < 0 || !(e <= 1e-3);
                printf("  %s n=%lld WRONG (error %g): %s\n", fam->name, nn, e, items[i].text);
                snprintf(r.status, sizeof r.status, "%s", e < 0 ? "launch_error" : "wrong_result");
                snprintf(r.error, sizeof r.error, "relative error %g", e);
            } else {
                double ms = bn_time(bn_config, &c, 1, 1, 5, 30, 3.0, 1.3 * best);
                if (ms > 0) {
                    items[i].ms = ms;
                    if (ms < best)
                        best = ms;
                }
                if (isnan(ms))
                    failures++;
                snprintf(r.status, sizeof r.status, "%s",
                         isnan(ms) ? "launch_error" : ms > 0 ? "ok" : "abandoned");
                if (!isnan(ms)) {
                    r.time_ms = fabs(ms);
                    r.time_min_ms = bn_last_min_ms;
                    r.time_max_ms = bn_last_max_ms;
                    r.runs = bn_last_runs;
                    r.gbs = bytes / (fabs(ms) * 1e-3) * 1e-9;
                }
            }
            if (d) {
                snprintf(r.device_uuid, sizeof r.device_uuid, "%s", dev->uuid);
                snprintf(r.kernel, sizeof r.kernel, "%s", fam->name);
                snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
                r.problem = p;
                snprintf(r.config, sizeof r.config, "%s", items[i].text);
                r.rel_error = e;
                r.compile_ms = items[i].compile_ms;
                r.deterministic = fam->deterministic(items[i].cfg);
                if (db_store_result(d, &r) != AT_OK)
                    fprintf(stderr, "db_store_result: %s\n", db_errmsg(d));
            }
        }
        bn_item *sorted = (bn_item *)malloc((size_t)n * sizeof *sorted);
        memcpy(sorted, items, (size_t)n * sizeof *sorted);
        qsort(sorted, (size_t)n, sizeof *sorted, bn_by_time);
        printf("search %s n=%lld: %d applicable, %d wrong, %.1f s; fastest:\n", fam->name, nn,
               tried, wrong, (bn_now_ms() - ts) * 1e-3);
        for (int i = 0; i < 5 && i < n && sorted[i].ms > 0; i++) {
            char gb[32];
            bn_gb(gb, sizeof gb, bytes, sorted[i].ms);
            printf("  %9.2f us %8s GB/s err %.1e det %d  %s\n", sorted[i].ms * 1e3, gb,
                   sorted[i].err, fam->deterministic(sorted[i].cfg), sorted[i].text);
        }
        /* the fastest of each FINISH (parameter 1): what each way of
         * combining the blocks costs at this size, launches and memsets
         * of run() included */
        int fi = tpl_param_index(fam, "FINISH");
        for (int v = 0; fi >= 0 && v < fam->params[fi].n_values; v++) {
            for (int i = 0; i < n; i++) {
                if (sorted[i].ms > 0 && sorted[i].cfg[fi] == fam->params[fi].values[v]) {
                    printf("  fastest FINISH=%d: %.2f us  %s\n", fam->params[fi].values[v],
                           sorted[i].ms * 1e3, sorted[i].text);
                    break;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            if (sorted[i].ms > 0 && fam->deterministic(sorted[i].cfg)) {
                char gb[32];
                bn_gb(gb, sizeof gb, bytes, sorted[i].ms);
                printf("  fastest deterministic: %.2f us %s GB/s  %s\n", sorted[i].ms * 1e3, gb,
                       sorted[i].text);
                break;
            }
        }
        free(sorted);
        fflush(stdout);
    }
    bn_unbuild(cu, items, n);
    free(items);
    return failures;
}

/* ---------------- main ---------------- */

typedef struct bn_row {
    double us, idle_us, b2b_us, gbs, err;
} bn_row;

int main(int argc, char **argv)
{
    int search = 0;
    const char *db_arg = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--search") == 0) {
            search = 1;
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            /* a comma-separated subset of the bench sizes */
            for (int si = 0; si < BN_NSIZES; si++)
                bn_skip[si] = 1;
            for (char *tok = strtok(argv[++i], ","); tok; tok = strtok(NULL, ",")) {
                long long v = atoll(tok);
                int found = 0;
                for (int si = 0; si < BN_NSIZES; si++) {
                    if (bn_sizes[si] == v) {
                        bn_skip[si] = 0;
                        found = 1;
                    }
                }
                if (!found) {
                    fprintf(stderr, "--sizes: %s is not a bench size (1024, 65536, 1048576, "
                            "16777216, 268435456, 1000003)\n", tok);
                    return 2;
                }
            }
        } else {
            db_arg = argv[i];
        }
    }
    char db_path[4096];
    if (db_arg)
        snprintf(db_path, sizeof db_path, "%s", db_arg);
    else
        db_default_path(db_path, sizeof db_path);   /* $AUTOTUNE_DB first */

    BN_CUDA(cudaSetDevice(0));
    BN_CUDA(cudaFree(0));       /* primary context, shared with libautotune */
    at_status st;
    char err[1024];
    const cudrv *cu = cudrv_get(&st, err, sizeof err);
    at_device_info dev;
    if (!cu || cudrv_device_info(cu, 0, &dev, err, sizeof err) != AT_OK) {
        fprintf(stderr, "no device: %s\n", err);
        return 1;
    }
    db *d = NULL;
    if (db_open(&d, db_path, 1, err, sizeof err) != AT_OK) {
        fprintf(stderr, "db_open %s: %s (nothing stored)\n", db_path, err);
        d = NULL;
    } else if (db_put_device(d, &dev, tpl_nvrtc_version()) != AT_OK) {
        fprintf(stderr, "db_put_device: %s\n", db_errmsg(d));
    }

    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    printf("# reduce benchmark %s\n# GPU %s (%s, %d SMs, L2 %d MB), driver %d.%d, CUDA runtime "
           "%d.%d, NVRTC %s, CUB %d.%d.%d; database %s\n",
           date, dev.name, dev.arch, dev.sm_count, dev.l2_bytes >> 20, drv / 1000,
           (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, tpl_nvrtc_version(),
           CUB_VERSION / 100000, CUB_VERSION / 100 % 1000, CUB_VERSION % 100, db_path);
    printf("# GB/s = bytes of input read (4n sum, 8n dot) / median of >= 20 event-timed calls "
           "after warm-up (inputs stay in L2 where they fit); \"queued\": a 50 us spin kernel "
           "runs ahead so the events time the GPU's work; \"idle\": one call on an idle GPU, "
           "host submission included; \"b2b\": per call of 32 calls back to back between two "
           "events, all queued behind an 800 us spin kernel first (GPU-bound), median of 15 "
           "batches; error = |r - ref| / |ref| against a float64 CPU sum of "
           "the same data in [0, 1); \"tuned\" is at_ssum/at_sdot, so the events enclose "
           "everything its run() enqueues (FINISH 0: a memset and the kernel; 1: two kernels; "
           "2, 3 and one-block grids: one kernel)\n");
    if (search)
        printf("# --search: every valid configuration at each size, verified, then timed queued "
               "(median of 5..30 runs, abandoned at 1.3x the best); results stored in the "
               "database, where at_ssum/at_sdot find them (lookup \"exact\")\n");
    fflush(stdout);

    bn_data data;
    data.hx = (float *)malloc((size_t)BN_MAXN * 4);
    data.hy = (float *)malloc((size_t)BN_MAXN * 4);
    if (!data.hx || !data.hy) {
        fprintf(stderr, "out of host memory\n");
        return 1;
    }
    BN_CUDA(cudaMalloc((void **)&data.x, (size_t)BN_MAXN * 4));
    BN_CUDA(cudaMalloc((void **)&data.y, (size_t)BN_MAXN * 4));
    BN_CUDA(cudaMalloc((void **)&data.result, 256));

    int failures = 0;
    if (search) {
        failures += bn_search(&tpl_sum, cu, &dev, &data, d);
        failures += bn_search(&tpl_dot, cu, &dev, &data, d);
    }

    at_handle *h = NULL;
    st = at_create(&h, 0, db_path);
    if (st != AT_OK) {
        fprintf(stderr, "at_create: %s\n", at_status_string(st));
        return 1;
    }
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS ||
        cublasSetPointerMode(cublas, CUBLAS_POINTER_MODE_DEVICE) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cuBLAS setup failed\n");
        return 1;
    }
    size_t cub_bytes = 0;
    BN_CUDA(cub::DeviceReduce::Sum(nullptr, cub_bytes, data.x, data.result, (int)BN_MAXN));
    void *cub_temp = NULL;
    BN_CUDA(cudaMalloc(&cub_temp, cub_bytes));

    /* the seeds' methods: each family's baselines, compiled once */
    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    bn_item seeds[2][8];
    int n_seeds[2];
    memset(seeds, 0, sizeof seeds);
    for (int f = 0; f < 2; f++) {
        /* the FP32 baselines (the double one, last, runs in bench_dreduce) */
        n_seeds[f] = 0;
        while (n_seeds[f] < fams[f]->n_baselines && n_seeds[f] < 8 &&
               !strstr(fams[f]->baselines[n_seeds[f]].config, "TYPE=1"))
            n_seeds[f]++;
        for (int b = 0; b < n_seeds[f]; b++) {
            snprintf(seeds[f][b].text, sizeof seeds[f][b].text, "%s",
                     fams[f]->baselines[b].name);
            if (tpl_config_parse(fams[f], fams[f]->baselines[b].config, seeds[f][b].cfg, err,
                                 sizeof err) != AT_OK) {
                fprintf(stderr, "baseline %s: %s\n", fams[f]->baselines[b].name, err);
                return 1;
            }
        }
        if (!bn_build(fams[f], seeds[f], n_seeds[f], cu, &dev)) {
            fprintf(stderr, "the seeds' configurations did not compile\n");
            return 1;
        }
    }

    /* what every timed call below shares; each size sets n (and the seeds fam, cfg, ex) */
    bn_call call;
    memset(&call, 0, sizeof call);
    call.x = data.x;
    call.y = data.y;
    call.result = data.result;
    call.h = h;
    call.cublas = cublas;
    call.cub_temp = cub_temp;
    call.cub_bytes = cub_bytes;
    static const char *const level[] = {"none", "exact", "nearest", "arch", "default"};
    bn_row sum_tuned[BN_NSIZES], sum_cub[BN_NSIZES], dot_tuned[BN_NSIZES], dot_cublas[BN_NSIZES];
    double empty_us[BN_NSIZES], empty_idle_us[BN_NSIZES], empty_b2b_us[BN_NSIZES];
    for (int si = 0; si < BN_NSIZES; si++) {
        if (bn_skip[si])
            continue;
        long long n = bn_sizes[si];
        bn_make_data(&data, n, 1000 + (unsigned long long)si);
        bn_call c = call;
        c.n = n;
        printf("\nn = %lld (%.1f MB sum, %.1f MB dot)\n", n, 4e-6 * n, 8e-6 * n);
        printf("  %-6s %-17s %10s %9s %8s %10s %9s %9s  %s\n", "kernel", "method", "us queued",
               "GB/s", "x vendor", "us idle", "us b2b", "error", "configuration");
        double e_ms = bn_time(bn_empty, &c, 1, 3, 20, 1000, 50.0, 0);
        double e_idle = bn_time(bn_empty, &c, 0, 3, 20, 1000, 50.0, 0);
        empty_us[si] = e_ms * 1e3;
        empty_idle_us[si] = e_idle * 1e3;
        empty_b2b_us[si] = bn_time_batch(bn_empty, &c);
        printf("  %-6s %-17s %10.2f %9s %8s %10.2f %9.2f %9s\n", "-", "empty_launch", e_ms * 1e3,
               "-", "-", e_idle * 1e3, empty_b2b_us[si], "-");
        bn_measure(d, &dev, "sum", n, "empty_launch", e_ms, 4.0 * n, -1,
                   "empty kernel <<<1,32>>>, queued behind a spin kernel");
        bn_measure(d, &dev, "dot", n, "empty_launch", e_ms, 8.0 * n, -1,
                   "empty kernel <<<1,32>>>, queued behind a spin kernel");
        for (int f = 0; f < 2; f++) {
            const tpl_family *fam = fams[f];
            double bytes = (f ? 8.0 : 4.0) * n;
            double ref = f ? data.ref_dot : data.ref_sum;
            bn_op tuned = f ? bn_tuned_dot : bn_tuned_sum;
            bn_op vendor = f ? bn_cublas : bn_cub;
            const char *vname = f ? "cublas" : "cub";
            /* tuned through the public API */
            double te = bn_check(tuned, &c, ref, NULL);
            at_stats stats;
            at_get_stats(h, &stats);
            double tms = te >= 0 ? bn_time(tuned, &c, 1, 3, 20, 1000, 100.0, 0) : -1;
            double tidle = te >= 0 ? bn_time(tuned, &c, 0, 3, 20, 1000, 100.0, 0) : -1;
            double ve = bn_check(vendor, &c, ref, NULL);
            double vms = ve >= 0 ? bn_time(vendor, &c, 1, 3, 20, 1000, 100.0, 0) : -1;
            double vidle = ve >= 0 ? bn_time(vendor, &c, 0, 3, 20, 1000, 100.0, 0) : -1;
            bn_row *tr = f ? &dot_tuned[si] : &sum_tuned[si];
            bn_row *vr = f ? &dot_cublas[si] : &sum_cub[si];
            tr->us = tms * 1e3;
            tr->idle_us = tidle * 1e3;
            tr->b2b_us = te >= 0 ? bn_time_batch(tuned, &c) : -1;
            vr->b2b_us = ve >= 0 ? bn_time_batch(vendor, &c) : -1;
            tr->gbs = bytes / (tms * 1e-3) * 1e-9;
            tr->err = te;
            vr->us = vms * 1e3;
            vr->idle_us = vidle * 1e3;
            vr->gbs = bytes / (vms * 1e-3) * 1e-9;
            vr->err = ve;
            int bad_t = !(te >= 0 && te <= BN_TOL && tms > 0);
            int bad_v = !(ve >= 0 && ve <= BN_TOL && vms > 0);
            failures += bad_t + bad_v;
            printf("  %-6s %-17s %10.2f %9.1f %8.2f %10.2f %9.2f %9.1e  %s (%s)%s\n", fam->name,
                   "tuned", tr->us, tr->gbs, vms / tms, tr->idle_us, tr->b2b_us, te,
                   stats.last_config, level[stats.last_level], bad_t ? "  FAILED" : "");
            printf("  %-6s %-17s %10.2f %9.1f %8.2f %10.2f %9.2f %9.1e%s\n", fam->name, vname,
                   vr->us, vr->gbs, 1.0, vr->idle_us, vr->b2b_us, ve, bad_v ? "  FAILED" : "");
            bn_measure(d, &dev, fam->name, n, vname, vms, bytes, ve,
                       f ? "cublasSdot, device pointer mode, queued behind a spin kernel"
                         : "cub::DeviceReduce::Sum, temp storage allocated outside timing, "
                           "queued behind a spin kernel");
            for (int b = 0; b < n_seeds[f]; b++) {
                c.fam = fam;
                c.cfg = seeds[f][b].cfg;
                c.ex = &seeds[f][b].ex;
                double se = bn_check(bn_config, &c, ref, NULL);
                double sms = se >= 0 ? bn_time(bn_config, &c, 1, 2, 20, 1000, 100.0, 0) : -1;
                double sidle = se >= 0 ? bn_time(bn_config, &c, 0, 2, 20, 1000, 100.0, 0) : -1;
                /* the seeds' float atomics may drift; a broken run fails */
                int broken = !(se >= 0 && se <= 1e-3 && sms > 0);
                failures += broken;
                printf("  %-6s %-17s %10.2f %9.1f %8.2f %10.2f %9s %9.1e  %s%s\n", fam->name,
                       fam->baselines[b].name, sms * 1e3, bytes / (sms * 1e-3) * 1e-9, vms / sms,
                       sidle * 1e3, "-", se, fam->baselines[b].config,
                       broken ? "  FAILED" : se > BN_TOL ? "  (above 1e-5)" : "");
                bn_measure(d, &dev, fam->name, n, fam->baselines[b].name, sms, bytes, se,
                           fam->baselines[b].description);
            }
        }
        fflush(stdout);
    }

    /* The small-n floor: the pieces of a reduction timed alone at 2^16 */
    if (!bn_skip[1]) {
        bn_make_data(&data, 1LL << 16, 1001);
        float *partials = NULL;
        BN_CUDA(cudaMalloc((void **)&partials, 1024 * sizeof(float)));
        BN_CUDA(cudaMemset(partials, 0, 1024 * sizeof(float)));
        fl_probe_ctx fc = {0, data.x, data.result, partials, 0};
        bn_call c = call;
        c.n = 1LL << 16;
        printf("\nlatency floor at n = 2^16 (two probes at 2^20): the pieces of a reduction "
               "timed alone (us; queued, idle and b2b as above; \"host\": CPU time of the "
               "submission alone, median of 15 x 64 calls)\n");
        printf("  %-16s %8s %8s %8s %8s  %s\n", "probe", "queued", "x empty", "idle", "b2b",
               "what");
        double empty_q = bn_time(bn_empty, &c, 1, 3, 50, 1000, 50.0, 0) * 1e3;
        printf("  %-16s %8.2f %8.2f %8.2f %8.2f  %s\n", "empty", empty_q, 1.0,
               bn_time(bn_empty, &c, 0, 3, 50, 1000, 50.0, 0) * 1e3, bn_time_batch(bn_empty, &c),
               "<<<1,32>>> empty kernel");
        for (int i = 0; i < FL_NPROBES; i++) {
            fc.which = i;
            double q = bn_time(fl_probe, &fc, 1, 3, 50, 1000, 50.0, 0) * 1e3;
            if (!(q > 0)) {
                printf("  %-16s launch failed: %s\n", fl_names[i],
                       cudaGetErrorString(cudaGetLastError()));
                continue;
            }
            char checked[64] = "";
            if (i >= FL_WARP_GATHER) {
                /* a whole sum: checked against the float64 reference */
                float got = NAN;
                BN_CUDA(cudaMemset(data.result, 0xff, sizeof(float)));
                double e = -1;
                if (fl_probe(&fc) == 0 && cudaDeviceSynchronize() == cudaSuccess &&
                    cudaMemcpy(&got, data.result, sizeof got, cudaMemcpyDeviceToHost) ==
                        cudaSuccess)
                    e = isfinite(got) ? fabs(got - data.ref_sum) / fabs(data.ref_sum) : INFINITY;
                snprintf(checked, sizeof checked, " (error %.1e%s)", e,
                         e >= 0 && e <= BN_TOL ? "" : " FAILED");
                failures += !(e >= 0 && e <= BN_TOL);
            }
            printf("  %-16s %8.2f %8.2f %8.2f %8.2f  %s%s\n", fl_names[i], q, q / empty_q,
                   bn_time(fl_probe, &fc, 0, 3, 50, 1000, 50.0, 0) * 1e3,
                   bn_time_batch(fl_probe, &fc), fl_what[i], checked);
        }
        const struct { const char *name; bn_op op; } full[] = {
            {"at_ssum", bn_tuned_sum}, {"at_sdot", bn_tuned_dot}, {"cub_sum", bn_cub},
            {"cublas_sdot", bn_cublas}};
        for (size_t i = 0; i < sizeof full / sizeof full[0]; i++) {
            double q = bn_time(full[i].op, &c, 1, 3, 50, 1000, 50.0, 0) * 1e3;
            printf("  %-16s %8.2f %8.2f %8.2f %8.2f  %s\n", full[i].name, q, q / empty_q,
                   bn_time(full[i].op, &c, 0, 3, 50, 1000, 50.0, 0) * 1e3,
                   bn_time_batch(full[i].op, &c), "the whole reduction of 2^16");
        }
        printf("  host us per call: empty <<<>>> %.2f, at_ssum %.2f, at_sdot %.2f, CUB %.2f, "
               "cublasSdot %.2f\n", bn_host_us(bn_empty, &c), bn_host_us(bn_tuned_sum, &c),
               bn_host_us(bn_tuned_dot, &c), bn_host_us(bn_cub, &c), bn_host_us(bn_cublas, &c));
        cudaFree(partials);
        fflush(stdout);
    }

    printf("\nsummary: queued timing (GB/s of input read; speed-up = vendor time / tuned "
           "time), idle-GPU single-call microseconds in the last columns\n");
    printf("%-10s %8s %8s %7s %8s %8s %7s %8s %8s %8s | %8s %8s %8s\n", "n", "sum", "CUB",
           "speedup", "dot", "cuBLAS", "speedup", "empty us", "sum us", "dot us", "empty", "sum",
           "dot");
    for (int si = 0; si < BN_NSIZES; si++)
        if (!bn_skip[si])
            printf("%-10lld %8.1f %8.1f %7.2f %8.1f %8.1f %7.2f %8.2f %8.2f %8.2f | %8.2f %8.2f "
                   "%8.2f\n", bn_sizes[si], sum_tuned[si].gbs, sum_cub[si].gbs,
                   sum_cub[si].us / sum_tuned[si].us, dot_tuned[si].gbs, dot_cublas[si].gbs,
                   dot_cublas[si].us / dot_tuned[si].us, empty_us[si], sum_tuned[si].us,
                   dot_tuned[si].us, empty_idle_us[si], sum_tuned[si].idle_us,
                   dot_tuned[si].idle_us);
    /* the issue's targets, judged in each timing mode */
    printf("\ntargets in each timing mode (queued: the GPU's work for one call; idle: one call "
           "on an idle GPU, host submission included; b2b: per call of 32 back to back):\n");
    if (!bn_skip[4]) {
        printf("  2^28 sum >= 1.0x CUB:    %.2fx %s\n", sum_cub[4].us / sum_tuned[4].us,
               sum_cub[4].us >= sum_tuned[4].us ? "met" : "NOT met");
        printf("  2^28 dot >= 1.0x cuBLAS: %.2fx %s\n", dot_cublas[4].us / dot_tuned[4].us,
               dot_cublas[4].us >= dot_tuned[4].us ? "met" : "NOT met");
    }
    if (!bn_skip[2]) {
        const double rq = sum_cub[2].us / sum_tuned[2].us;
        const double ri = sum_cub[2].idle_us / sum_tuned[2].idle_us;
        const double rb = sum_cub[2].b2b_us / sum_tuned[2].b2b_us;
        printf("  2^20 sum >= 1.3x CUB:    queued %.2fx %s, idle %.2fx %s, b2b %.2fx %s\n", rq,
               rq >= 1.3 ? "met" : "NOT met", ri, ri >= 1.3 ? "met" : "NOT met", rb,
               rb >= 1.3 ? "met" : "NOT met");
    }
    for (int si = 0; si < 2; si++) {
        if (bn_skip[si])
            continue;
        const double q = fmax(sum_tuned[si].us, dot_tuned[si].us) / empty_us[si];
        const double i = fmax(sum_tuned[si].idle_us, dot_tuned[si].idle_us) / empty_idle_us[si];
        const double b = fmax(sum_tuned[si].b2b_us, dot_tuned[si].b2b_us) / empty_b2b_us[si];
        printf("  2^%d sum and dot within 1.2x of an empty launch (the slower of the two): "
               "queued %.2fx %s, idle %.2fx %s, b2b %.2fx %s\n", si ? 16 : 10, q,
               q <= 1.2 ? "met" : "NOT met", i, i <= 1.2 ? "met" : "NOT met", b,
               b <= 1.2 ? "met" : "NOT met");
    }
    if (!bn_skip[4])
        printf("  2^28 relative error <= 1e-5: sum %.1e, dot %.1e %s\n", sum_tuned[4].err,
               dot_tuned[4].err,
               sum_tuned[4].err <= 1e-5 && dot_tuned[4].err <= 1e-5 ? "met" : "NOT met");
    printf("%s\n", failures ? "FAILED checks above" : "all checks passed");

    for (int f = 0; f < 2; f++)
        bn_unbuild(cu, seeds[f], n_seeds[f]);
    cudaFree(cub_temp);
    cublasDestroy(cublas);
    at_destroy(h);
    db_close(d);
    cudaFree(data.x);
    cudaFree(data.y);
    cudaFree(data.result);
    free(data.hx);
    free(data.hy);
    return failures ? 1 : 0;
}
