// proto.cu: standalone prototype harness of the tcgemm PATH 90 kernel: NVRTC-compiles
// templates/tcgemm.cu for sm_90a, checks each configuration against a float64 reference, times it
// beside cublasGemmEx in the same process.
//
// Build (GPU machine): nvcc -O2 -std=c++17 -o proto bench/tc/proto.cu -lcuda -lnvrtc -lcublas
// Usage:  proto bench TYPE M N K CFG...   verify and time each CFG (e.g. BM=128,BN=256,CM=2) at one shape
//         proto check TYPE CFG...         correctness battery: odd shapes, offsets, odd ld, alpha/beta, splits
//         proto rounds TYPE M N K R CFG...  R interleaved rounds of cuBLAS and each CFG, paired ratios (env BLAS_ALT=TN:
//                                          also cuBLAS with those column-major ops, square shapes only)
//         proto compile TYPE CFG...       NVRTC only (no GPU), into CUBIN_DIR (then runs load from there)
//         proto prof TYPE M N K CFG...    one launch each of cuBLAS and every CFG (for ncu), no checks
// CFG keys: BM BN BK STAGES WG CM CN RASTER GROUP SPLITK VEC PING; TF32 TFK=n (-DT9_TFK=n); PROMO=0..3 (host:
// the tensor maps' L2 promotion, none/64B/128B/256B; 256B default as in the family); TF32 TMT=0|1 (host: FLOAT32
// tensor maps, the tensor cores truncate, against TFLOAT32, the TMA rounds to nearest even: 1, the family's, is the
// default; each verifies against the reference of its own rounding). Env DATA_TF32=1: operands already TF32. The
// experiment key TRM (session 15, up to commit 15797d4; notes section 17) and the experiment
// keys PERM and TF32 VEC=4 (session 7, commits d65e066 and b747d1c), TB, BSW, SUSP, PAIR and TKG (sessions 7-8,
// up to commit 9dca9d0; docs/notes/tcgemm.md sections 11-12) and session 9's UNI, SNAKE, L2A and L2B (up to
// commit 1ee6570; notes section 13) and session 11's TFP (up to commit 3062509; notes section 14) were removed
// with the kernel code they selected.
// TYPE: 0 BF16, 1 FP16, 2 TF32. Verification rule: see templates/tcgemm.cu's header.
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "t9_host.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CU(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { const char *s_ = 0; cuGetErrorString(e_, &s_); \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t e_ = (x); if (e_ != CUBLAS_STATUS_SUCCESS) { \
    fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, (int)e_); exit(1); } } while (0)

static int g_type;
static char *g_src;
static int g_sms;
static t9_drv g_drv;

// ---------- device helpers: random inputs, float64 reference, error ----------
__device__ float rnd(unsigned long long i, unsigned seed)
{
    unsigned long long x = i * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull;
    x ^= x >> 31; x *= 0x7FB5D329728EA185ull; x ^= x >> 27; x *= 0x81DADEF4BC2DD44Dull; x ^= x >> 33;
    return (float)((x >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;   // [-1, 1)
}

__device__ double ld_in(const void *p, long long i, int type, int rn)   // input element as the tensor cores see it
{
    if (type == 0) return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    if (type == 1) return (double)__half2float(((const __half *)p)[i]);
    float x = ((const float *)p)[i];
    // TF32 rounded to nearest, ties to even (TMT's TMA conversion and cuBLAS's: ties away left a 1.1e-5 floor, the
    // share of exact ties, run_s15b), or truncated (wgmma on FP32 data). Finite inputs, on the magnitude bits.
    unsigned v = __float_as_uint(x);
    unsigned u = rn ? (v + 0xFFFu + ((v >> 13) & 1u)) & 0xFFFFE000u : v & 0xFFFFE000u;
    return (double)__uint_as_float(u);
}

__device__ double ld_out(const void *p, long long i, int type)
{
    if (type == 0) return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    if (type == 1) return (double)__half2float(((const __half *)p)[i]);
    return (double)((const float *)p)[i];
}

// fills a rows x cols matrix (leading dimension ld; the gaps too) with random values of the type
__global__ void k_fill(void *p, long long count, int type, unsigned seed, unsigned mask)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x) {
        float v = rnd(i, seed);
        if (type == 0) ((__nv_bfloat16 *)p)[i] = __float2bfloat16(v);
        else if (type == 1) ((__half *)p)[i] = __float2half(v);
        else ((unsigned *)p)[i] = __float_as_uint(v) & mask;   // mask: env DATA_TF32 clears the 13 low bits
    }
}

__global__ void k_poison(void *p, long long bytes)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < bytes; i += (long long)gridDim.x * blockDim.x)
        ((unsigned char *)p)[i] = 0xFF;   // NaN in BF16, FP16 and FP32
}

// ref[r][c] = alpha * sum_k A[r][k] B[k][c] + beta * C0[r][c], float64; 16 rows per block.
__global__ void k_ref(const void *A, long long lda, const void *B, long long ldb, const void *C0, long long ldc,
                      double *ref, int m, int n, int k, float alpha, float beta, int type, int rn)
{
    __shared__ double as[16][64];
    int c = blockIdx.x * blockDim.x + threadIdx.x, r0 = blockIdx.y * 16;
    double acc[16];
    for (int i = 0; i < 16; i++) acc[i] = 0;
    for (int k0 = 0; k0 < k; k0 += 64) {
        __syncthreads();
        for (int i = threadIdx.x; i < 16 * 64; i += blockDim.x) {
            int rr = r0 + i / 64, kk = k0 + i % 64;
            as[i / 64][i % 64] = (rr < m && kk < k) ? ld_in(A, rr * lda + kk, type, rn) : 0.0;
        }
        __syncthreads();
        if (c < n) {
            int ke = k - k0 < 64 ? k - k0 : 64;
            for (int kk = 0; kk < ke; kk++) {
                double b = ld_in(B, (k0 + kk) * ldb + c, type, rn);
                for (int i = 0; i < 16; i++) acc[i] += as[i][kk] * b;
            }
        }
    }
    if (c < n)
        for (int i = 0; i < 16 && r0 + i < m; i++) {
            double v = (double)alpha * acc[i];
            if (beta != 0.0f) v += (double)beta * ld_out(C0, (r0 + i) * ldc + c, type);
            ref[(long long)(r0 + i) * n + c] = v;
        }
}

// err[0] += sum (C - ref)^2, err[1] += sum ref^2, err[2] += count of non-finite C
__global__ void k_err(const void *C, long long ldc, const double *ref, int m, int n, int type, double *err)
{
    double e = 0, s = 0, bad = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (long long)m * n; i += (long long)gridDim.x * blockDim.x) {
        long long r = i / n, c = i % n;
        double v = ld_out(C, r * ldc + c, type), x = ref[i];
        if (!isfinite(v)) bad += 1;
        else e += (v - x) * (v - x);
        s += x * x;
    }
    atomicAdd(&err[0], e); atomicAdd(&err[1], s); atomicAdd(&err[2], bad);
}

// ---------- configurations ----------
struct Kern { t9_cfg c; CUmodule mod; CUfunction f, pack, red; char name[200]; };

static void parse_cfg(const char *s, t9_cfg *c)
{
    t9_cfg d = {g_type, 128, 256, g_type == 2 ? 32 : 64, 4, 2, 1, 1, 0, 8, 1, 2, 0, -1};
    if (g_type == 2) { d.bm = 256; d.bn = 128; }
    d.promo = 3;
    d.tmt = g_type == 2;    // TF32: the TMA rounds A and B to TF32 as in the family (TMT=0: FLOAT32 maps, truncated)
    *c = d;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(0, ",")) {
        char *eq = strchr(t, '=');
        if (!eq) continue;
        *eq = 0;
        int v = atoi(eq + 1);
        if (!strcmp(t, "BM")) c->bm = v; else if (!strcmp(t, "BN")) c->bn = v;
        else if (!strcmp(t, "BK")) c->bk = v; else if (!strcmp(t, "STAGES")) c->stages = v;
        else if (!strcmp(t, "WG")) c->wg = v; else if (!strcmp(t, "CM")) c->cm = v;
        else if (!strcmp(t, "CN")) c->cn = v; else if (!strcmp(t, "RASTER")) c->raster = v;
        else if (!strcmp(t, "GROUP")) c->group = v; else if (!strcmp(t, "SPLITK")) c->splitk = v;
        else if (!strcmp(t, "VEC")) c->vec = v; else if (!strcmp(t, "PING")) c->ping = v;
        else if (!strcmp(t, "TFK")) c->tfk = v;
        else if (!strcmp(t, "TES")) c->tes = v;    // session 11: TF32 TMA-store epilogue (T9_TES)
        else if (!strcmp(t, "PROMO")) c->promo = v;   // host only: the tensor maps' L2 promotion (t9_promo)
        else if (!strcmp(t, "TMT")) c->tmt = v;       // TF32: 1 TFLOAT32 tensor maps (the family's), 0 FLOAT32 (host only)
        else { fprintf(stderr, "unknown parameter %s\n", t); exit(1); }
    }
}

static int g_compile_only;   // `proto compile`: fill CUBIN_DIR, no GPU

static int build(const char *s, Kern *K)
{
    parse_cfg(s, &K->c);
    t9_cfg *c = &K->c;
    snprintf(K->name, sizeof K->name, "BM%d BN%d BK%d S%d WG%d%s C%dx%d R%d G%d SK%d V%d%s", c->bm, c->bn, c->bk,
             c->stages, c->wg, c->ping ? "P" : "", c->cm, c->cn, c->raster, c->group, c->splitk, c->vec,
             c->tfk >= 0 ? (c->tfk == 1 ? " TFK1" : c->tfk == 3 ? " TFK3" : " TFK?") : "");
    if (c->tes) {
        size_t ln = strlen(K->name);
        snprintf(K->name + ln, sizeof K->name - ln, " TES");
    }
    if (c->type == 2 && !c->tmt) {
        size_t ln = strlen(K->name);
        snprintf(K->name + ln, sizeof K->name - ln, " TMT0");
    }
    if (c->promo != 3) {
        size_t ln = strlen(K->name);
        snprintf(K->name + ln, sizeof K->name - ln, " PROMO=%d", c->promo);
    }
    const char *why = t9_reject(c);
    if (why) { printf("  %-52s rejected: %s\n", K->name, why); return 0; }
    char o[16][48];
    int v[] = {c->type, c->bm, c->bn, c->bk, c->stages, c->wg, c->cm, c->cn, c->raster, c->group, c->splitk, c->vec, c->ping};
    const char *nm[] = {"TYPE", "BM", "BN", "BK", "STAGES", "WG", "CM", "CN", "RASTER", "GROUP", "SPLITK", "VEC", "PING"};
    const char *opts[32];
    int no = 0;
    opts[no++] = "-arch=sm_90a";
    opts[no++] = "-std=c++17";
    opts[no++] = "-DPATH=90";
    for (int i = 0; i < 13; i++) { snprintf(o[i], 48, "-D%s=%d", nm[i], v[i]); opts[no++] = o[i]; }
    if (getenv("XDEFS")) opts[no++] = getenv("XDEFS");   // one extra -D for experiments
    char tkd[32];
    if (c->tfk >= 0) { snprintf(tkd, sizeof tkd, "-DT9_TFK=%d", c->tfk); opts[no++] = tkd; }
    if (c->tes) opts[no++] = "-DT9_TES=1";
    // CUBIN_DIR: cubins cached by a hash of the source and the options (`proto compile` fills it
    // with no GPU, so a device run spends no time in NVRTC)
    char cpath[512] = "";
    const char *cdir = getenv("CUBIN_DIR");
    if (cdir) {
        unsigned long long hsh = 1469598103934665603ull;
        for (const char *q = g_src; *q; q++) hsh = (hsh ^ (unsigned char)*q) * 1099511628211ull;
        for (int i = 0; i < no; i++)
            for (const char *q = opts[i]; ; q++) { hsh = (hsh ^ (unsigned char)*q) * 1099511628211ull; if (!*q) break; }
        snprintf(cpath, sizeof cpath, "%s/%016llx.cubin", cdir, hsh);
    }
    std::vector<char> cubin;
    FILE *cf = cpath[0] ? fopen(cpath, "rb") : 0;
    if (cf) {
        fseek(cf, 0, SEEK_END); long cn = ftell(cf); fseek(cf, 0, SEEK_SET);
        cubin.resize(cn);
        if (fread(cubin.data(), 1, cn, cf) != (size_t)cn) cubin.clear();
        fclose(cf);
    }
    if (cubin.empty()) {
        nvrtcProgram p;
        nvrtcCreateProgram(&p, g_src, "tcgemm.cu", 0, 0, 0);
        nvrtcResult r = nvrtcCompileProgram(p, no, opts);
        if (r != NVRTC_SUCCESS) {
            size_t ls; nvrtcGetProgramLogSize(p, &ls);
            std::vector<char> log(ls + 1); nvrtcGetProgramLog(p, log.data());
            printf("  %-52s compile failed:\n%s\n", K->name, log.data());
            return 0;
        }
        size_t cs; nvrtcGetCUBINSize(p, &cs);
        cubin.resize(cs); nvrtcGetCUBIN(p, cubin.data());
        nvrtcDestroyProgram(&p);
        if (cpath[0] && (cf = fopen(cpath, "wb"))) { fwrite(cubin.data(), 1, cubin.size(), cf); fclose(cf); }
    }
    if (g_compile_only) return 1;
    CU(cuModuleLoadData(&K->mod, cubin.data()));
    CU(cuModuleGetFunction(&K->f, K->mod, "tcgemm"));
    CU(cuModuleGetFunction(&K->pack, K->mod, "tc_pack"));
    CU(cuModuleGetFunction(&K->red, K->mod, "tc_splitk_reduce"));
    return 1;
}

// ---------- one problem: operands with offsets and leading dimensions ----------
struct Prob {
    int m, n, k; long long lda, ldb, ldc; int offa, offb, offc; float alpha, beta;
    void *A, *B, *C, *C0; double *ref, *err;
    double *ref_rn;     // TF32: the reference of inputs rounded to nearest (TMT configurations), else 0
    void *pa, *pb; float *ws; size_t wsz;   // packed copies, split-K workspace
};

static size_t es_in() { return g_type == 2 ? 4 : 2; }

static void prob_init(Prob *P, unsigned seed)
{
    size_t es = es_in();
    size_t na = P->offa + (size_t)(P->m - 1) * P->lda + P->k, nb = P->offb + (size_t)(P->k - 1) * P->ldb + P->n;
    size_t nc = P->offc + (size_t)(P->m - 1) * P->ldc + P->n;
    void *a, *b, *c, *c0;
    CK(cudaMalloc(&a, na * es)); CK(cudaMalloc(&b, nb * es)); CK(cudaMalloc(&c, nc * es)); CK(cudaMalloc(&c0, nc * es));
    unsigned mask = getenv("DATA_TF32") ? 0xFFFFE000u : 0xFFFFFFFFu;   // operands already TF32 (data-dependent power)
    k_fill<<<1024, 256>>>(a, na, g_type, seed, mask); k_fill<<<1024, 256>>>(b, nb, g_type, seed + 1, mask);
    k_fill<<<1024, 256>>>(c0, nc, g_type, seed + 2, 0xFFFFFFFFu);
    P->A = (char *)a + P->offa * es; P->B = (char *)b + P->offb * es;
    P->C = (char *)c + P->offc * es; P->C0 = (char *)c0 + P->offc * es;
    CK(cudaMalloc(&P->ref, (size_t)P->m * P->n * 8)); CK(cudaMalloc(&P->err, 3 * 8));
    dim3 g((P->n + 127) / 128, (P->m + 15) / 16);
    k_ref<<<g, 128>>>(P->A, P->lda, P->B, P->ldb, P->C0, P->ldc, P->ref, P->m, P->n, P->k, P->alpha, P->beta, g_type, 0);
    P->ref_rn = 0;
    if (g_type == 2) {
        CK(cudaMalloc(&P->ref_rn, (size_t)P->m * P->n * 8));
        k_ref<<<g, 128>>>(P->A, P->lda, P->B, P->ldb, P->C0, P->ldc, P->ref_rn, P->m, P->n, P->k, P->alpha, P->beta,
                          g_type, 1);
    }
    CK(cudaGetLastError());
    P->pa = P->pb = 0; P->ws = 0; P->wsz = 0;
    if (t9_needs_pack(P->A, P->lda, es)) CK(cudaMalloc(&P->pa, (size_t)P->m * t9_packed_ld(P->k, es) * es));
    if (t9_needs_pack(P->B, P->ldb, es)) CK(cudaMalloc(&P->pb, (size_t)P->k * t9_packed_ld(P->n, es) * es));
    CK(cudaDeviceSynchronize());
}

static void prob_free(Prob *P)
{
    size_t es = es_in();
    cudaFree((char *)P->A - P->offa * es); cudaFree((char *)P->B - P->offb * es);
    cudaFree((char *)P->C - P->offc * es); cudaFree((char *)P->C0 - P->offc * es);
    cudaFree(P->ref); cudaFree(P->ref_rn); cudaFree(P->err); cudaFree(P->pa); cudaFree(P->pb); cudaFree(P->ws);
}

static size_t c_bytes(const Prob *P) { return ((size_t)(P->m - 1) * P->ldc + P->n) * es_in(); }

// Puts C0 into C (beta != 0) or NaN (beta == 0: C must not be read).
static void reset_c(const Prob *P)
{
    if (P->beta != 0.0f) CK(cudaMemcpy(P->C, P->C0, c_bytes(P), cudaMemcpyDeviceToDevice));
    else k_poison<<<1024, 256>>>(P->C, c_bytes(P));
}

// One full call of our path: pack (if needed), GEMM, split-K reduce. Maps built once per (kernel, problem).
struct Launch { CUtensorMap ma, mb; unsigned grid; };

static int setup(Kern *K, Prob *P, Launch *L)
{
    size_t es = es_in();
    const void *A = P->pa ? P->pa : P->A, *B = P->pb ? P->pb : P->B;
    long long lda = P->pa ? t9_packed_ld(P->k, es) : P->lda, ldb = P->pb ? t9_packed_ld(P->n, es) : P->ldb;
    CU(t9_encode_maps(&g_drv, &K->c, A, lda, B, ldb, P->m, P->n, P->k, &L->ma, &L->mb));
    L->grid = t9_grid(&g_drv, K->f, &K->c, P->m, P->n, g_sms);
    if (!L->grid) { printf("  %-52s no grid (cluster does not fit)\n", K->name); return 0; }
    size_t need = K->c.splitk > 1 ? (size_t)K->c.splitk * P->m * P->n * 4 : 0;
    if (need > P->wsz) { cudaFree(P->ws); CK(cudaMalloc(&P->ws, need)); P->wsz = need; }
    return 1;
}

static int g_pack_only;

static void run(Kern *K, Prob *P, Launch *L)
{
    size_t es = es_in();
    unsigned pack_grid = (unsigned)(g_sms * 8);    // tc_pack: grid-stride, 256 threads
    if (P->pa) {
        long long ldd = t9_packed_ld(P->k, es);
        void *args[] = {&P->m, &P->k, &P->A, &P->lda, &P->pa, &ldd};
        CU(cuLaunchKernel(K->pack, pack_grid, 1, 1, 256, 1, 1, 0, 0, args, 0));
    }
    if (P->pb) {
        long long ldd = t9_packed_ld(P->n, es);
        void *args[] = {&P->k, &P->n, &P->B, &P->ldb, &P->pb, &ldd};
        CU(cuLaunchKernel(K->pack, pack_grid, 1, 1, 256, 1, 1, 0, 0, args, 0));
    }
    if (g_pack_only)
        return;
    CU(t9_launch(&g_drv, K->f, &K->c, L->grid, &L->ma, &L->mb, P->C, P->m, P->n, P->k, P->ldc, P->alpha,
                 P->beta, P->ws, 0));
    if (K->c.splitk > 1) {
        long long mn = (long long)P->m * P->n, blocks = (mn + 255) / 256;
        void *args[] = {&P->m, &P->n, &P->ws, &P->alpha, &P->beta, &P->C, &P->ldc};
        CU(cuLaunchKernel(K->red, (unsigned)(blocks < 65536 ? blocks : 65536), 1, 1, 256, 1, 1, 0, 0, args, 0));
    }
}

static double tol(const Prob *P)
{
    double u = g_type == 0 ? ldexp(1.0, -8) : g_type == 1 ? ldexp(1.0, -11) : ldexp(1.0, -24);
    return 2 * u + 4 * sqrt((double)P->k) * ldexp(1.0, -24);
}

// relative Frobenius error of C against the reference (NaN count returned in *bad)
static double check_ref(const Prob *P, const double *ref, double *bad)
{
    CK(cudaMemset(P->err, 0, 24));
    k_err<<<1024, 256>>>(P->C, P->ldc, ref, P->m, P->n, g_type, P->err);
    double h[3];
    CK(cudaMemcpy(h, P->err, 24, cudaMemcpyDeviceToHost));
    *bad = h[2];
    return h[1] > 0 ? sqrt(h[0] / h[1]) : sqrt(h[0]);
}

static double check(const Prob *P, double *bad) { return check_ref(P, P->ref, bad); }

// cuBLAS's error against the round-to-nearest TF32 reference (-1 for 16-bit types)
static double check_rn(const Prob *P)
{
    double bad;
    return P->ref_rn ? check_ref(P, P->ref_rn, &bad) : -1.0;
}

static double median_ms(std::vector<float> &v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static int g_reps = 20;

// SM clock while a contender runs (NVML through dlopen, no build dependency; 0 where unavailable):
// sampled 4 times during its timed runs, right after a run completes; g_mhz = their mean.
typedef int (*nvml_init_t)(void);
typedef int (*nvml_handle_t)(unsigned, void **);
typedef int (*nvml_clock_t)(void *, int, unsigned *);
typedef int (*nvml_energy_t)(void *, unsigned long long *);
typedef int (*nvml_power_t)(void *, unsigned *);
static nvml_clock_t g_nvml_clock;
static nvml_energy_t g_nvml_energy;   // total energy since driver load, mJ (0 where unavailable)
static nvml_power_t g_nvml_power;     // power draw, mW
static void *g_nvml_dev;
static double g_mhz, g_mhz_sum, g_w, g_w_sum, g_mj;   // g_w: mean power (W); g_mj: energy per run (mJ)
static int g_mhz_n, g_w_n;
static unsigned long long g_e0;

static void nvml_open()
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h) return;
    nvml_init_t init = (nvml_init_t)dlsym(h, "nvmlInit_v2");
    nvml_handle_t get = (nvml_handle_t)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    g_nvml_clock = (nvml_clock_t)dlsym(h, "nvmlDeviceGetClockInfo");
    g_nvml_energy = (nvml_energy_t)dlsym(h, "nvmlDeviceGetTotalEnergyConsumption");
    g_nvml_power = (nvml_power_t)dlsym(h, "nvmlDeviceGetPowerUsage");
    if (!init || !get || !g_nvml_clock || init() != 0 || get(0, &g_nvml_dev) != 0) g_nvml_clock = 0;
    if (!g_nvml_clock) g_nvml_energy = 0, g_nvml_power = 0;
}

static void clk_sample(int i)
{
    if (!g_nvml_clock || (i + 1) % (g_reps / 4 > 0 ? g_reps / 4 : 1) != 0) return;
    unsigned mhz = 0;
    if (g_nvml_clock(g_nvml_dev, 1 /* NVML_CLOCK_SM */, &mhz) == 0) { g_mhz_sum += mhz; g_mhz_n++; }
    unsigned mw = 0;
    if (g_nvml_power && g_nvml_power(g_nvml_dev, &mw) == 0) { g_w_sum += mw / 1000.0; g_w_n++; }
}

static void clk_begin() { g_mhz_sum = 0; g_mhz_n = 0; g_w_sum = 0; g_w_n = 0; }
static void clk_end() { g_mhz = g_mhz_n ? g_mhz_sum / g_mhz_n : 0; g_w = g_w_n ? g_w_sum / g_w_n : 0; }

// Energy per run (mJ): the NVML energy counter read after the device is idle (synchronized) before the
// warm-up and after the timed runs, divided by the runs in between (warm-up + timed: ~WARM_MS + REPS runs,
// long enough for the counter's update interval)
static void energy_begin()
{
    cudaDeviceSynchronize();
    if (!g_nvml_energy || g_nvml_energy(g_nvml_dev, &g_e0) != 0) g_e0 = 0;
}

static void energy_end(int runs)
{
    cudaDeviceSynchronize();
    unsigned long long e1 = 0;
    g_mj = 0;
    if (g_e0 && runs > 0 && g_nvml_energy(g_nvml_dev, &e1) == 0 && e1 > g_e0) g_mj = (double)(e1 - g_e0) / runs;
}

// WARM_MS: before its timed runs each contender runs back to back for about this long, so every one is
// timed in the steady state of the power cap (not in the clock state the previous contender left)
static double g_warm_ms;

static double time_ours(Kern *K, Prob *P, Launch *L)
{
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) run(K, P, L);
    energy_begin();
    int runs = 0;
    if (g_warm_ms > 0) {
        cudaEventRecord(a); run(K, P, L); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b);
        int nw = (int)(g_warm_ms / (ms > 0.001f ? ms : 0.001f));
        for (int i = 0; i < nw && i < 5000; i++) run(K, P, L);
        runs += 1 + (nw < 5000 ? nw : 5000);
    }
    std::vector<float> t;
    clk_begin();
    for (int i = 0; i < g_reps; i++) {
        cudaEventRecord(a); run(K, P, L); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
        clk_sample(i);
    }
    clk_end();
    energy_end(runs + g_reps);
    CK(cudaGetLastError());
    cudaEventDestroy(a); cudaEventDestroy(b);
    return median_ms(t);
}

static cublasHandle_t g_blas;

// g_alt_ops (env BLAS_ALT, e.g. "TN": cuBLAS's column-major transa, transb): a second cuBLAS contender in
// `rounds` that runs the same square product with those operand layouts on the same buffers (its result is
// another product of the same random data, not checked): what cuBLAS's own kernel for another layout costs,
// e.g. TF32 "TN" = both operands K-major, both wgmma operands from shared memory.
static char g_alt_ops[3];
static int g_use_alt;

static void blas(Prob *P)
{
    cudaDataType t = g_type == 0 ? CUDA_R_16BF : g_type == 1 ? CUDA_R_16F : CUDA_R_32F;
    cublasComputeType_t ct = g_type == 2 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (g_use_alt) {
        cublasOperation_t ta = g_alt_ops[0] == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
        cublasOperation_t tb = g_alt_ops[1] == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
        CB(cublasGemmEx(g_blas, ta, tb, P->n, P->m, P->k, &P->alpha, P->B, t, P->k, P->A, t, P->k, &P->beta,
                        P->C, t, (int)P->ldc, ct, CUBLAS_GEMM_DEFAULT));
        return;
    }
    CB(cublasGemmEx(g_blas, CUBLAS_OP_N, CUBLAS_OP_N, P->n, P->m, P->k, &P->alpha, P->B, t, (int)P->ldb, P->A, t,
                    (int)P->lda, &P->beta, P->C, t, (int)P->ldc, ct, CUBLAS_GEMM_DEFAULT));
}

static double time_blas(Prob *P)
{
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; i++) blas(P);
    energy_begin();
    int runs = 0;
    if (g_warm_ms > 0) {
        cudaEventRecord(a); blas(P); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b);
        int nw = (int)(g_warm_ms / (ms > 0.001f ? ms : 0.001f));
        for (int i = 0; i < nw && i < 5000; i++) blas(P);
        runs += 1 + (nw < 5000 ? nw : 5000);
    }
    std::vector<float> t;
    clk_begin();
    for (int i = 0; i < g_reps; i++) {
        cudaEventRecord(a); blas(P); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
        clk_sample(i);
    }
    clk_end();
    energy_end(runs + g_reps);
    cudaEventDestroy(a); cudaEventDestroy(b);
    return median_ms(t);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *s = (char *)malloc(n + 1);
    if (fread(s, 1, n, f) != (size_t)n) exit(1);
    s[n] = 0; fclose(f);
    return s;
}

// verify one kernel on one problem (fresh NaN/C0 in C); prints and returns pass
static int verify(Kern *K, Prob *P, Launch *L, double *relp)
{
    reset_c(P);
    run(K, P, L);
    CK(cudaDeviceSynchronize());
    double bad, rel = check_ref(P, K->c.tmt ? P->ref_rn : P->ref, &bad);
    *relp = rel;
    return bad == 0 && rel <= tol(P);
}

static int cmd_bench(int m, int n, int k, int nc, char **cfgs)
{
    Prob P = {m, n, k, k, n, n, 0, 0, 0, 1.0f, 0.0f};
    prob_init(&P, 1234 + m + n + k);
    double flop = 2.0 * m * n * k;
    reset_c(&P);
    blas(&P); CK(cudaDeviceSynchronize());
    double bad, brel = check(&P, &bad);
    double tb = time_blas(&P);
    printf("shape %dx%dx%d type %d: cuBLAS %.4f ms %.1f TF/s (err %.2e, tol %.2e)\n", m, n, k, g_type, tb,
           flop / tb / 1e9, brel, tol(&P));
    double best = 1e30; const char *bestn = "none";
    static Kern Ks[64];
    for (int i = 0; i < nc && i < 64; i++) {
        Kern *K = &Ks[i];
        if (!build(cfgs[i], K)) continue;
        Launch L;
        if (!setup(K, &P, &L)) continue;
        double rel;
        int ok = verify(K, &P, &L, &rel);
        if (!ok) { printf("  %-52s FAIL err %.3e\n", K->name, rel); cuModuleUnload(K->mod); continue; }
        double t = time_ours(K, &P, &L);
        char pk[48] = "";
        if (P.pa || P.pb) {
            g_pack_only = 1;
            snprintf(pk, sizeof pk, " (pack %.4f ms)", time_ours(K, &P, &L));
            g_pack_only = 0;
        }
        printf("  %-52s %.4f ms %7.1f TF/s %.3fx  err %.2e grid %u%s\n", K->name, t, flop / t / 1e9, tb / t, rel, L.grid, pk);
        if (t < best) { best = t; bestn = K->name; }
        cuModuleUnload(K->mod);
    }
    printf("BEST %dx%dx%d type %d: %s %.1f TF/s = %.3fx cuBLAS (%.1f)\n", m, n, k, g_type, bestn, flop / best / 1e9,
           tb / best, flop / tb / 1e9);
    prob_free(&P);
    return 0;
}

// Interleaved rounds: each round times cuBLAS and every configuration (REPS timings each, median),
// the starting contender rotating by one per round, so clock and thermal drift reach all alike.
// Per configuration: the median of its round medians and the median of the paired ratios
// (cuBLAS ms / ours ms of the same round).
static int cmd_rounds(int m, int n, int k, int rounds, int nc, char **cfgs)
{
    Prob P = {m, n, k, k, n, n, 0, 0, 0, 1.0f, 0.0f};
    prob_init(&P, 4321 + m + n + k);
    double flop = 2.0 * m * n * k;
    reset_c(&P);
    blas(&P); CK(cudaDeviceSynchronize());
    double bad, brel = check(&P, &bad);
    printf("rounds %dx%dx%d type %d: cuBLAS err %.2e (against inputs rounded to nearest: %.2e), tol %.2e\n", m, n, k,
           g_type, brel, check_rn(&P), tol(&P));
    static Kern Ks[16];
    static Launch Ls[16];
    int ok[16] = {0};
    if (nc > 15) nc = 15;
    for (int i = 0; i < nc; i++) {
        if (!build(cfgs[i], &Ks[i]) || !setup(&Ks[i], &P, &Ls[i])) continue;
        double rel;
        ok[i] = verify(&Ks[i], &P, &Ls[i], &rel);
        printf("  %-58s %s err %.3e grid %u\n", Ks[i].name, ok[i] ? "ok  " : "FAIL", rel, Ls[i].grid);
    }
    const char *alt = getenv("BLAS_ALT");
    int na = alt && strlen(alt) == 2 && m == n && n == k;     // the alternative-layout cuBLAS contender
    if (na) { g_alt_ops[0] = alt[0]; g_alt_ops[1] = alt[1]; }
    std::vector<double> ta(rounds), fa(rounds), wa(rounds), ea(rounds);
    std::vector<double> tb(rounds), tc[16], fb(rounds), fc[16], wb(rounds), wc[16], eb(rounds), ec[16];
    for (int i = 0; i < nc; i++) { tc[i].resize(rounds, 0); fc[i].resize(rounds, 0); wc[i].resize(rounds, 0); ec[i].resize(rounds, 0); }
    for (int r = 0; r < rounds; r++) {
        printf("  round %d:", r);
        for (int j = 0; j <= nc + na; j++) {
            int x = (j + r) % (nc + 1 + na);    // 0 = cuBLAS, x = configuration x - 1, nc + 1 = cuBLAS BLAS_ALT
            if (x == nc + 1) {
                g_use_alt = 1;
                ta[r] = time_blas(&P); fa[r] = g_mhz; wa[r] = g_w; ea[r] = g_mj;
                g_use_alt = 0;
                printf(" cuBLAS-%s %.4f@%.0f/%.0fW/%.1fmJ", g_alt_ops, ta[r], g_mhz, g_w, g_mj);
            }
            else if (x == 0) {
                tb[r] = time_blas(&P); fb[r] = g_mhz; wb[r] = g_w; eb[r] = g_mj;
                printf(" cuBLAS %.4f@%.0f/%.0fW/%.1fmJ", tb[r], g_mhz, g_w, g_mj);
            }
            else if (ok[x - 1]) {
                tc[x - 1][r] = time_ours(&Ks[x - 1], &P, &Ls[x - 1]); fc[x - 1][r] = g_mhz;
                wc[x - 1][r] = g_w; ec[x - 1][r] = g_mj;
                printf(" #%d %.4f@%.0f/%.0fW/%.1fmJ", x - 1, tc[x - 1][r], g_mhz, g_w, g_mj);
            }
        }
        printf("\n");
    }
    std::vector<double> sb = tb, sfb = fb, swb = wb, seb = eb;
    std::sort(sb.begin(), sb.end()); std::sort(sfb.begin(), sfb.end());
    std::sort(swb.begin(), swb.end()); std::sort(seb.begin(), seb.end());
    double mb = sb[rounds / 2];
    printf("ROUNDS %dx%dx%d type %d: cuBLAS median %.4f ms %.1f TF/s, SM clock median %.0f MHz, %.0f W, %.2f pJ/flop\n", m, n, k,
           g_type, mb, flop / mb / 1e9, sfb[rounds / 2], swb[rounds / 2], seb[rounds / 2] * 1e9 / flop);
    if (na) {
        std::vector<double> st = ta, ra(rounds), sf = fa, sw = wa, se = ea;
        for (int r = 0; r < rounds; r++) ra[r] = tb[r] / ta[r];
        std::sort(st.begin(), st.end()); std::sort(ra.begin(), ra.end()); std::sort(sf.begin(), sf.end());
        std::sort(sw.begin(), sw.end()); std::sort(se.begin(), se.end());
        printf("ROUNDS %dx%dx%d type %d: cuBLAS %s (column-major ops, same buffers) median %.4f ms %.1f TF/s, paired ratio"
               " median %.3fx (min %.3f max %.3f) %.0f MHz %.0f W %.2f pJ/flop\n", m, n, k, g_type, g_alt_ops,
               st[rounds / 2], flop / st[rounds / 2] / 1e9, ra[rounds / 2], ra[0], ra[rounds - 1], sf[rounds / 2],
               sw[rounds / 2], se[rounds / 2] * 1e9 / flop);
    }
    for (int i = 0; i < nc; i++) {
        if (!ok[i]) continue;
        std::vector<double> st = tc[i], ra(rounds), sf = fc[i], sw = wc[i], se = ec[i];
        for (int r = 0; r < rounds; r++) ra[r] = tb[r] / tc[i][r];
        std::sort(st.begin(), st.end()); std::sort(ra.begin(), ra.end()); std::sort(sf.begin(), sf.end());
        std::sort(sw.begin(), sw.end()); std::sort(se.begin(), se.end());
        printf("ROUNDS %dx%dx%d type %d: #%-2d %-58s median %.4f ms %.1f TF/s, paired ratio median %.3fx (min %.3f max %.3f) %.0f MHz"
               " %.0f W %.2f pJ/flop\n",
               m, n, k, g_type, i, Ks[i].name, st[rounds / 2], flop / st[rounds / 2] / 1e9, ra[rounds / 2], ra[0], ra[rounds - 1],
               sf[rounds / 2], sw[rounds / 2], se[rounds / 2] * 1e9 / flop);
    }
    prob_free(&P);
    return 0;
}

// `proto prof TYPE M N K CFG...`: one cuBLAS call, then one launch of each configuration (no verification,
// no timing), for a profiler filtering on kernel names (ncu -k regex:'^tcgemm$|xmma|nvjet'): the profiled
// launches are cuBLAS's, then the configurations' in order.
static int cmd_prof(int m, int n, int k, int nc, char **cfgs)
{
    Prob P = {m, n, k, k, n, n, 0, 0, 0, 1.0f, 0.0f};
    prob_init(&P, 1234 + m + n + k);
    blas(&P); CK(cudaDeviceSynchronize());
    printf("prof %dx%dx%d type %d: #0 cuBLAS\n", m, n, k, g_type);
    static Kern Ks[64];
    for (int i = 0; i < nc && i < 64; i++) {
        Launch L;
        if (!build(cfgs[i], &Ks[i]) || !setup(&Ks[i], &P, &L)) continue;
        run(&Ks[i], &P, &L); CK(cudaDeviceSynchronize());
        printf("prof %dx%dx%d type %d: #%d %s\n", m, n, k, g_type, i + 1, Ks[i].name);
        cuModuleUnload(Ks[i].mod);
    }
    prob_free(&P);
    return 0;
}

// correctness battery for each configuration
static int cmd_check(int nc, char **cfgs)
{
    struct { int m, n, k; int dlda, dldb, dldc, offa, offb, offc; float alpha, beta; } S[] = {
        {1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0}, {127, 255, 63, 0, 0, 0, 0, 0, 0, 1, 0},
        {300, 500, 700, 0, 0, 0, 0, 0, 0, 1.5f, 0.5f}, {1000, 1000, 1000, 0, 0, 0, 0, 0, 0, 1, 0},
        {513, 257, 4097, 3, 5, 1, 1, 3, 1, -0.75f, 2.0f}, {4097, 4097, 259, 0, 0, 0, 0, 0, 0, 1, 0},
        {2048, 2048, 2048, 8, 8, 8, 8, 8, 8, 1, 1}, {777, 1536, 96, 1, 0, 7, 0, 1, 3, 2, -1},
        {64, 8192, 1024, 0, 0, 0, 0, 0, 0, 1, 0}, {3000, 200, 5000, 0, 0, 0, 0, 0, 0, 1, 0.25f},
        // more tiles than SMs, a partial last wave, ragged
        {2000, 2100, 300, 0, 0, 0, 0, 0, 0, 1, 0}, {4096, 4096, 1000, 0, 0, 0, 0, 0, 0, 0.5f, -1.5f},
        {2900, 4500, 777, 3, 1, 5, 0, 0, 0, 1, 0},
    };
    int ns = sizeof S / sizeof S[0], fails = 0;
    static Kern Ks[64];
    for (int i = 0; i < nc && i < 64; i++) {
        if (!build(cfgs[i], &Ks[i])) continue;
        printf("%s\n", Ks[i].name);
    }
    for (int s = 0; s < ns; s++) {
        Prob P = {S[s].m, S[s].n, S[s].k, S[s].k + S[s].dlda, S[s].n + S[s].dldb, S[s].n + S[s].dldc,
                  S[s].offa, S[s].offb, S[s].offc, S[s].alpha, S[s].beta};
        prob_init(&P, 77 + s);
        reset_c(&P); blas(&P); CK(cudaDeviceSynchronize());
        double bad, brel = check(&P, &bad);
        printf("shape %dx%dx%d ld+%d,%d,%d off %d,%d,%d a %.2f b %.2f  tol %.2e cuBLAS err %.2e (rounded inputs %.2e)\n",
               P.m, P.n, P.k, S[s].dlda, S[s].dldb, S[s].dldc, P.offa, P.offb, P.offc, P.alpha, P.beta, tol(&P), brel,
               check_rn(&P));
        for (int i = 0; i < nc && i < 64; i++) {
            if (!Ks[i].mod) continue;
            Launch L;
            if (!setup(&Ks[i], &P, &L)) { fails++; continue; }
            double rel, rel2;
            int ok = verify(&Ks[i], &P, &L, &rel) && verify(&Ks[i], &P, &L, &rel2);
            printf("  %-52s %s err %.3e%s\n", Ks[i].name, ok ? "ok  " : "FAIL", rel, P.pa || P.pb ? " (packed)" : "");
            fails += !ok;
        }
        prob_free(&P);
    }
    printf("CHECK type %d: %d failures\n", g_type, fails);
    return fails != 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: see the header\n"); return 2; }
    g_type = atoi(argv[2]);
    const char *src = getenv("TCGEMM_SRC");
    g_src = slurp(src ? src : "templates/tcgemm.cu");
    if (getenv("REPS")) g_reps = atoi(getenv("REPS"));
    if (getenv("WARM_MS")) g_warm_ms = atof(getenv("WARM_MS"));
    if (getenv("PACKALIGN")) t9_pack_align = atoi(getenv("PACKALIGN"));
    if (!strcmp(argv[1], "compile")) {      // proto compile TYPE CFG...: CUBIN_DIR cache only
        static Kern K;
        g_compile_only = 1;
        int bad = 0;
        for (int i = 3; i < argc; i++) bad += !build(argv[i], &K);
        printf("compiled %d of %d\n", argc - 3 - bad, argc - 3);
        return bad != 0;
    }
    CK(cudaFree(0));
    CU(cuInit(0));
    cudaDeviceProp pr; CK(cudaGetDeviceProperties(&pr, 0));
    g_sms = pr.multiProcessorCount;
    g_drv.tensor_map_encode_tiled = cuTensorMapEncodeTiled;
    g_drv.func_set_attribute = cuFuncSetAttribute;
    g_drv.launch_kernel = cuLaunchKernel;
    g_drv.occupancy_max_active_clusters = cuOccupancyMaxActiveClusters;
    g_drv.launch_kernel_ex = cuLaunchKernelEx;
    nvml_open();
    CB(cublasCreate(&g_blas));
    if (g_type == 2) CB(cublasSetMathMode(g_blas, CUBLAS_TF32_TENSOR_OP_MATH));
    if (!strcmp(argv[1], "bench") && argc >= 6)
        return cmd_bench(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argc - 6, argv + 6);
    if (!strcmp(argv[1], "rounds") && argc >= 7)
        return cmd_rounds(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), argc - 7, argv + 7);
    if (!strcmp(argv[1], "prof") && argc >= 6)
        return cmd_prof(atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), argc - 6, argv + 6);
    if (!strcmp(argv[1], "check"))
        return cmd_check(argc - 3, argv + 3);
    fprintf(stderr, "unknown command\n");
    return 2;
}
