// proto.cu: standalone prototype harness of tcgemm PATH 80: NVRTC-compiles templates/tcgemm.cu,
// checks it against a float64 GPU reference, times it against cublasGemmEx and measures tc_pack.
//
// Build (GPU machine): nvcc -O2 -std=c++17 -arch=sm_90 -o proto proto.cu t8_host.c -lcuda -lnvrtc -lcublas
// Run:   ./proto [--src ../../templates/tcgemm.cu] [--compile-only] [--quick]
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "t8_host.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CD(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { const char *s_ = ""; cuGetErrorString(e_, &s_); \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); exit(1); } } while (0)

static std::string g_src;
static int g_arch = 90;          // compute capability of the device (x10)
static size_t g_smem_max = 0;
static int g_sms = 0;
static t8_drv g_drv = {cuLaunchKernel, cuFuncSetAttribute};
static const char *tname[3] = {"BF16", "FP16", "TF32"};

// ---------------- NVRTC ----------------
struct Mod {
    bool ok = false;
    std::string log;
    std::vector<char> image;     // cubin (or PTX, NUL-terminated, when ptx)
    CUmodule mod = 0;
    CUfunction gemm = 0, reduce = 0, pack = 0;
    int regs = 0, lmem = 0;
    double compile_s = 0;
};

static std::string opts_of(const t8_cfg &c)
{
    char b[512];
    t8_options(&c, b, sizeof b);
    return b;
}

// Compiles the source with the configuration's -D options for sm_<arch>; ptx = keep PTX instead of cubin.
static void compile(const t8_cfg &c, int arch, bool ptx, Mod &m)
{
    auto t0 = std::chrono::steady_clock::now();
    nvrtcProgram p;
    nvrtcCreateProgram(&p, g_src.c_str(), "tcgemm.cu", 0, nullptr, nullptr);
    std::vector<std::string> o;
    char a[64];
    snprintf(a, sizeof a, ptx ? "-arch=compute_%d" : "-arch=sm_%d", arch);
    o.push_back(a);
    o.push_back("-std=c++17");
    std::string s = opts_of(c);
    size_t i = 0;
    while (i < s.size()) {
        size_t j = s.find(' ', i);
        if (j == std::string::npos) j = s.size();
        o.push_back(s.substr(i, j - i));
        i = j + 1;
    }
    std::vector<const char *> ov;
    for (auto &x : o) ov.push_back(x.c_str());
    nvrtcResult r = nvrtcCompileProgram(p, (int)ov.size(), ov.data());
    size_t n = 0;
    nvrtcGetProgramLogSize(p, &n);
    m.log.resize(n);
    nvrtcGetProgramLog(p, &m.log[0]);
    if (r == NVRTC_SUCCESS) {
        if (ptx) {
            nvrtcGetPTXSize(p, &n);
            m.image.resize(n);
            nvrtcGetPTX(p, m.image.data());
        } else {
            nvrtcGetCUBINSize(p, &n);
            m.image.resize(n);
            nvrtcGetCUBIN(p, m.image.data());
        }
        m.ok = true;
    }
    nvrtcDestroyProgram(&p);
    m.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static std::map<std::string, Mod> g_mods;

// Compiles every configuration not yet compiled, in parallel threads; then loads the modules.
static void compile_all(const std::vector<t8_cfg> &cfgs, bool load)
{
    std::vector<std::string> todo;
    for (auto &c : cfgs)
        if (!g_mods.count(opts_of(c))) { g_mods[opts_of(c)]; todo.push_back(opts_of(c)); }
    std::vector<const t8_cfg *> byopt;
    for (auto &k : todo)
        for (auto &c : cfgs)
            if (opts_of(c) == k) { byopt.push_back(&c); break; }
    std::mutex mu;
    size_t next = 0;
    unsigned nt = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++)
        th.emplace_back([&]() {
            for (;;) {
                size_t i;
                { std::lock_guard<std::mutex> l(mu); i = next++; }
                if (i >= todo.size()) return;
                Mod m;
                compile(*byopt[i], g_arch, false, m);
                std::lock_guard<std::mutex> l(mu);
                g_mods[todo[i]] = std::move(m);
            }
        });
    for (auto &t : th) t.join();
    for (auto &k : todo) {
        Mod &m = g_mods[k];
        if (!m.ok) { printf("COMPILE FAIL %s\n%s\n", k.c_str(), m.log.c_str()); continue; }
        if (!load) { printf("compiled %-150s %.1fs\n", k.c_str(), m.compile_s); continue; }
        CD(cuModuleLoadData(&m.mod, m.image.data()));
        CD(cuModuleGetFunction(&m.gemm, m.mod, "t8_gemm"));
        CD(cuModuleGetFunction(&m.reduce, m.mod, "tc_splitk_reduce"));
        CD(cuModuleGetFunction(&m.pack, m.mod, "tc_pack"));
        CD(cuFuncGetAttribute(&m.regs, CU_FUNC_ATTRIBUTE_NUM_REGS, m.gemm));
        CD(cuFuncGetAttribute(&m.lmem, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, m.gemm));
    }
}

static Mod &mod_of(const t8_cfg &c)
{
    if (!g_mods.count(opts_of(c))) compile_all({c}, true);
    return g_mods[opts_of(c)];
}

// ---------------- data and reference ----------------
__device__ unsigned hash32(unsigned long long x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return (unsigned)x;
}

// Fills n elements with uniform [-1, 1) values rounded to the type (nan = all-ones bits).
__global__ void fill(void *p, long long n, int type, unsigned long long seed, int nan)
{
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += (long long)gridDim.x * 256) {
        float v = (hash32(seed * 0x9E3779B97F4A7C15ULL + i) >> 8) * (2.0f / 16777216.0f) - 1.0f;
        if (type == 2) ((unsigned *)p)[i] = nan ? 0xffffffffu : __float_as_uint(v);
        else if (type == 0) ((unsigned short *)p)[i] = nan ? 0xffff : __bfloat16_as_ushort(__float2bfloat16_rn(v));
        else ((unsigned short *)p)[i] = nan ? 0xffff : __half_as_ushort(__float2half_rn(v));
    }
}

__device__ double ld_in(const void *p, long long i, int type, int tf32r, bool op)
{
    if (type == 0) return (double)__bfloat162float(__ushort_as_bfloat16(((const unsigned short *)p)[i]));
    if (type == 1) return (double)__half2float(__ushort_as_half(((const unsigned short *)p)[i]));
    unsigned u = ((const unsigned *)p)[i];
    if (op) u = tf32r ? ((u + 0x1000u) & 0xffffe000u) : (u & 0xffffe000u);   // same rounding as the kernel
    return (double)__uint_as_float(u);
}

// R[ri][j] = alpha * sum_k A[i][k] B[k][j] + beta * C0[i][j] in float64, i = ri * rowstep.
__global__ void ref_gemm(int m, int n, int k, int type, int tf32r, double alpha, const void *A, long long lda,
                         const void *B, long long ldb, double beta, const void *C0, long long ldc, int rowstep,
                         double *R)
{
    int j = blockIdx.x * 256 + threadIdx.x, ri = blockIdx.y, i = ri * rowstep;
    if (j >= n || i >= m) return;
    double s = 0;
    for (int q = 0; q < k; q++)
        s += ld_in(A, (long long)i * lda + q, type, tf32r, true) * ld_in(B, (long long)q * ldb + j, type, tf32r, true);
    s *= alpha;
    if (beta != 0) s += beta * ld_in(C0, (long long)i * ldc + j, type, tf32r, false);
    R[(long long)ri * n + j] = s;
}

static double h_in(const void *p, long long i, int type)
{
    if (type == 2) return ((const float *)p)[i];
    unsigned short u = ((const unsigned short *)p)[i];
    if (type == 0) { unsigned x = (unsigned)u << 16; float f; memcpy(&f, &x, 4); return f; }
    __half_raw hr; hr.x = u; return (double)__half2float(__half(hr));
}

// ---------------- correctness ----------------
struct Case {
    const char *name;
    t8_cfg cfg;
    int m, n, k;
    long long lda, ldb, ldc;       // 0 = tight
    int offA, offB, offC;          // element offsets of the base pointers
    float alpha, beta;
    int rowstep;
    bool expect_reject;            // alignment check must refuse it
};

static double tol_of(int type, int k)
{
    double u = type == 0 ? std::ldexp(1.0, -8) : type == 1 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
    return 2 * u + 4 * std::sqrt((double)k) * std::ldexp(1.0, -24);
}

static int g_fail = 0, g_pass = 0;

static void run_case(const Case &cs, unsigned long long seed)
{
    const t8_cfg &c = cs.cfg;
    int esz = t8_esz(&c), m = cs.m, n = cs.n, k = cs.k;
    long long lda = cs.lda ? cs.lda : k, ldb = cs.ldb ? cs.ldb : n, ldc = cs.ldc ? cs.ldc : n;
    size_t na = cs.offA + (size_t)m * lda, nb = cs.offB + (size_t)k * ldb, nc = cs.offC + (size_t)m * ldc;
    char *A, *B, *C, *C0;
    CK(cudaMalloc(&A, na * esz)); CK(cudaMalloc(&B, nb * esz)); CK(cudaMalloc(&C, nc * esz));
    CK(cudaMalloc(&C0, nc * esz));
    fill<<<1024, 256>>>(A, na, c.type, seed * 3 + 1, 0);
    fill<<<1024, 256>>>(B, nb, c.type, seed * 3 + 2, 0);
    fill<<<1024, 256>>>(C0, nc, c.type, seed * 3 + 3, cs.beta == 0.0f);
    CK(cudaMemcpy(C, C0, nc * esz, cudaMemcpyDeviceToDevice));
    CUdeviceptr dA = (CUdeviceptr)(A + (size_t)cs.offA * esz), dB = (CUdeviceptr)(B + (size_t)cs.offB * esz),
                dC = (CUdeviceptr)(C + (size_t)cs.offC * esz);
    bool aligned = t8_align_ok(&c, dA, lda, dB, ldb) == 0;
    char line[256];
    snprintf(line, sizeof line, "%-34s %s %5dx%5dx%5d ld %lld/%lld/%lld off %d/%d/%d a=%g b=%g", cs.name,
             tname[c.type], m, n, k, lda, ldb, ldc, cs.offA, cs.offB, cs.offC, cs.alpha, cs.beta);
    if (!aligned || cs.expect_reject) {
        bool ok = !aligned && cs.expect_reject;
        printf("%s  %s (alignment check %s)\n", ok ? "PASS" : "FAIL", line, aligned ? "accepted" : "rejected");
        ok ? g_pass++ : g_fail++;
        CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C)); CK(cudaFree(C0));
        return;
    }
    Mod &md = mod_of(c);
    CUdeviceptr ws = 0;
    size_t wsb = t8_ws_bytes(&c, m, n);
    if (wsb) CD(cuMemAlloc(&ws, wsb));
    CD(t8_launch(&g_drv, &c, md.gemm, md.reduce, m, n, k, cs.alpha, dA, lda, dB, ldb, cs.beta, dC, ldc, ws, 0));
    CK(cudaDeviceSynchronize());
    int rs = cs.rowstep > 0 ? cs.rowstep : 1, nr = (m + rs - 1) / rs;
    double *R;
    CK(cudaMalloc(&R, (size_t)nr * n * sizeof(double)));
    ref_gemm<<<dim3((n + 255) / 256, nr), 256>>>(m, n, k, c.type, c.tf32r, cs.alpha, (void *)dA, lda, (void *)dB, ldb,
                                                 cs.beta, C0 + (size_t)cs.offC * esz, ldc, rs, R);
    CK(cudaDeviceSynchronize());
    std::vector<double> hr((size_t)nr * n);
    std::vector<char> hc((size_t)ldc * esz), h0((size_t)ldc * esz);
    CK(cudaMemcpy(hr.data(), R, hr.size() * 8, cudaMemcpyDeviceToHost));
    double e2 = 0, r2 = 0;
    long long bad_pad = 0;
    for (int ri = 0; ri < nr; ri++) {
        size_t off = ((size_t)cs.offC + (size_t)ri * rs * ldc) * esz;
        CK(cudaMemcpy(hc.data(), C + off, ldc * esz, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h0.data(), C0 + off, ldc * esz, cudaMemcpyDeviceToHost));
        for (int j = 0; j < n; j++) {
            double d = h_in(hc.data(), j, c.type) - hr[(size_t)ri * n + j];
            e2 += d * d;
            r2 += hr[(size_t)ri * n + j] * hr[(size_t)ri * n + j];
        }
        if (memcmp(hc.data() + (size_t)n * esz, h0.data() + (size_t)n * esz, (size_t)(ldc - n) * esz)) bad_pad++;
    }
    // Elements before the first row and after the last must be untouched too.
    std::vector<char> t1(nc * esz), t0(nc * esz);
    CK(cudaMemcpy(t1.data(), C, nc * esz, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(t0.data(), C0, nc * esz, cudaMemcpyDeviceToHost));
    if (memcmp(t1.data(), t0.data(), (size_t)cs.offC * esz)) bad_pad++;
    double err = std::sqrt(e2) / std::sqrt(r2), tol = tol_of(c.type, k);
    bool ok = err <= tol && bad_pad == 0;
    printf("%s  %s  relF %.3e tol %.3e (%.2f of tol)%s\n", ok ? "PASS" : "FAIL", line, err, tol, err / tol,
           bad_pad ? "  OUTSIDE-REGION WRITE" : "");
    ok ? g_pass++ : g_fail++;
    CK(cudaFree(R));
    if (ws) CD(cuMemFree(ws));
    CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C)); CK(cudaFree(C0));
}

static t8_cfg mk(int type, int bm, int bn, int bk, int st, int wm, int wn, int loadw, int vec, int splitk = 1,
                 int raster = 0, int group = 8, int tf32r = 0, int fragdb = 1)
{
    t8_cfg c = {type, bm, bn, bk, st, wm, wn, raster, group, splitk, vec, loadw, tf32r, fragdb};
    return c;
}

static std::vector<Case> correctness_cases()
{
    std::vector<Case> v;
    for (int t = 0; t < 3; t++) {
        t8_cfg d = t8_default(t);
        t8_cfg fast = t == 2 ? mk(2, 128, 128, 32, 3, 2, 2, 16, 4) : mk(t, 128, 128, 32, 4, 2, 2, 16, 8);
        t8_cfg big = t == 2 ? mk(2, 128, 256, 32, 3, 2, 4, 16, 4) : mk(t, 128, 256, 32, 3, 2, 4, 16, 8);
        t8_cfg sk = mk(t, 64, 64, t == 2 ? 16 : 32, 3, 2, 2, t == 2 ? 4 : 2, 1, 3, 1, 3);
        t8_cfg r1 = mk(t, 64, 128, 32, 3, 2, 2, t == 2 ? 4 : 4, 4, 1, 1, 4);
        t8_cfg w8 = mk(t, 128, 64, 16, 2, 4, 1, t == 2 ? 4 : 8, 2);
        v.push_back({"1x1x1 default", d, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 1, false});
        v.push_back({"7x13x5 default beta", d, 7, 13, 5, 0, 0, 0, 0, 0, 0, 1.5f, -0.5f, 1, false});
        v.push_back({"129x65x33 default", d, 129, 65, 33, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 1, false});
        v.push_back({"129x65x33 odd ld + offsets", d, 129, 65, 33, 37, 67, 71, 1, 3, 5, -2.0f, 0.25f, 1, false});
        v.push_back({"300x200x100 splitk3 odd ld", sk, 300, 200, 100, 101, 203, 201, 1, 1, 1, 0.5f, 1.0f, 1, false});
        v.push_back({"300x200x1000 splitk3 beta0", sk, 300, 200, 1000, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 1, false});
        v.push_back({"257x191x77 raster1 group4 vec4", r1, 257, 191, 77, 80, 192, 195, 0, 0, 1, 1.0f, 0.5f, 1, false});
        v.push_back({"200x300x64 w8/4x1 loadw8", w8, 200, 300, 64, 64, 304, 300, 0, 0, 0, 1.0f, 0.0f, 1, false});
        v.push_back({"1000x1000x1000 fast", fast, 1000, 1000, 1000, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 1, false});
        v.push_back({"1000x1000x1000 fast beta", fast, 1000, 1000, 1000, 0, 0, 0, 0, 0, 0, 0.75f, 2.0f, 1, false});
        v.push_back({"1000x1000x999 fast odd ldc vec fb", fast, 1000, 1000, 999, 1000, 1000, 1001, 0, 0, 1, 1.0f,
                     1.0f, 1, false});
        v.push_back({"517x1031x263 big tile edges", big, 517, 1031, 263, 264, 1032, 1031, 0, 0, 0, 1.0f, 0.5f, 1,
                     false});
        t8_cfg nofdb = fast;
        nofdb.fragdb = 0;
        t8_cfg gen = mk(t, 96, 64, 16, 3, 2, 2, 16, t == 2 ? 4 : 8);
        v.push_back({"1000x1000x1000 fast FRAGDB=0", nofdb, 1000, 1000, 1000, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 1, false});
        v.push_back({"333x222x111 96x64 generic loads", gen, 333, 222, 111, 112, 224, 222, 0, 0, 0, 1.0f, 0.5f, 1,
                     false});
        v.push_back({"fast with odd lda: must reject", fast, 100, 100, 100, 101, 0, 0, 0, 0, 0, 1.0f, 0.0f, 1, true});
        v.push_back({"fast with offset B: must reject", fast, 100, 104, 96, 0, 0, 0, 0, 1, 0, 1.0f, 0.0f, 1, true});
        v.push_back({"4097^3 default (narrow loads)", d, 4097, 4097, 4097, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 31, false});
    }
    t8_cfg rn = mk(2, 128, 128, 32, 3, 2, 2, 16, 4, 1, 0, 8, 1);
    v.push_back({"TF32 round-to-nearest 640x384x512", rn, 640, 384, 512, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 1, false});
    return v;
}

// ---------------- timing ----------------
static double median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class F>
static double time_ms(F f, int reps = 15)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; i++) f();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return median(t);
}

struct Bufs {
    int type, m, n, k;
    char *A, *B, *C;
};

static Bufs alloc_bufs(int type, int m, int n, int k)
{
    Bufs b{type, m, n, k, 0, 0, 0};
    int esz = type == 2 ? 4 : 2;
    CK(cudaMalloc(&b.A, (size_t)m * k * esz)); CK(cudaMalloc(&b.B, (size_t)k * n * esz));
    CK(cudaMalloc(&b.C, (size_t)m * n * esz));
    fill<<<1024, 256>>>(b.A, (long long)m * k, type, 11, 0);
    fill<<<1024, 256>>>(b.B, (long long)k * n, type, 12, 0);
    fill<<<1024, 256>>>(b.C, (long long)m * n, type, 13, 0);
    CK(cudaDeviceSynchronize());
    return b;
}

static void free_bufs(Bufs &b) { CK(cudaFree(b.A)); CK(cudaFree(b.B)); CK(cudaFree(b.C)); }

static double cublas_ms(cublasHandle_t h, const Bufs &b)
{
    cudaDataType_t dt = b.type == 0 ? CUDA_R_16BF : b.type == 1 ? CUDA_R_16F : CUDA_R_32F;
    cublasComputeType_t ct = b.type == 2 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    float alpha = 1, beta = 0;
    // Row-major C = A B is column-major C^T = B^T A^T.
    auto f = [&]() {
        cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, b.n, b.m, b.k, &alpha, b.B, dt, b.n, b.A, dt, b.k,
                                        &beta, b.C, dt, b.n, ct, CUBLAS_GEMM_DEFAULT);
        if (s != CUBLAS_STATUS_SUCCESS) { printf("cublasGemmEx failed %d\n", (int)s); exit(1); }
    };
    return time_ms(f);
}

static double ours_ms(const t8_cfg &c, const Bufs &b, CUdeviceptr ws)
{
    Mod &md = mod_of(c);
    auto f = [&]() {
        CD(t8_launch(&g_drv, &c, md.gemm, md.reduce, b.m, b.n, b.k, 1.0f, (CUdeviceptr)b.A, b.k, (CUdeviceptr)b.B,
                     b.n, 0.0f, (CUdeviceptr)b.C, b.n, ws, 0));
    };
    return time_ms(f);
}

static double tflops(int m, int n, int k, double ms) { return 2.0 * m * n * k / (ms * 1e-3) / 1e12; }

static std::vector<t8_cfg> sweep_cfgs(int t)
{
    std::vector<t8_cfg> v;
    if (t == 2) {
        v.push_back(mk(2, 128, 128, 16, 4, 2, 2, 16, 4));
        v.push_back(mk(2, 128, 128, 16, 4, 2, 2, 16, 4, 1, 0, 8, 0, 0));  // FRAGDB=0
        v.push_back(mk(2, 128, 128, 16, 5, 2, 2, 16, 4));
        v.push_back(mk(2, 128, 128, 16, 6, 2, 2, 16, 4));
        v.push_back(mk(2, 128, 128, 32, 3, 2, 2, 16, 4));
        v.push_back(mk(2, 128, 128, 32, 4, 2, 2, 16, 4));
        v.push_back(mk(2, 128, 256, 16, 4, 2, 4, 16, 4));
        v.push_back(mk(2, 256, 128, 32, 3, 4, 2, 16, 4));
        v.push_back(mk(2, 64, 128, 16, 4, 1, 2, 16, 4));
        v.push_back(mk(2, 128, 128, 16, 4, 2, 2, 16, 4, 1, 0, 8, 1));   // TF32R=1 (rna) cost
    } else {
        v.push_back(mk(t, 128, 128, 32, 4, 2, 2, 16, 8));
        v.push_back(mk(t, 128, 128, 32, 4, 2, 2, 16, 8, 1, 0, 8, 0, 0)); // FRAGDB=0
        v.push_back(mk(t, 128, 128, 32, 5, 2, 2, 16, 8));
        v.push_back(mk(t, 128, 128, 32, 3, 2, 2, 16, 8));
        v.push_back(mk(t, 128, 128, 64, 3, 2, 2, 16, 8));
        v.push_back(mk(t, 128, 128, 64, 4, 2, 2, 16, 8));
        v.push_back(mk(t, 128, 128, 32, 4, 2, 4, 16, 8));
        v.push_back(mk(t, 128, 256, 64, 3, 2, 4, 16, 8));
        v.push_back(mk(t, 256, 128, 64, 3, 4, 2, 16, 8));
        v.push_back(mk(t, 128, 256, 32, 3, 2, 4, 16, 8));
        v.push_back(mk(t, 64, 128, 32, 4, 1, 2, 16, 8));
        v.push_back(mk(t, 128, 128, 32, 4, 2, 2, 16, 2));               // VEC=2 register epilogue
        v.push_back(mk(t, 128, 128, 32, 4, 2, 2, 16, 8, 1, 0, 1));      // GROUP=1
        v.push_back(mk(t, 128, 128, 32, 4, 2, 2, 16, 8, 1, 1, 16));     // RASTER=1 GROUP=16
    }
    return v;
}

static void cfg_str(const t8_cfg &c, char *b, size_t n)
{
    snprintf(b, n, "%dx%dx%d s%d w%dx%d r%d g%d sk%d v%d lw%d fdb%d%s", c.bm, c.bn, c.bk, c.stages, c.warps_m,
             c.warps_n, c.raster, c.group, c.splitk, c.vec, c.loadw, c.fragdb, c.type == 2 && c.tf32r ? " rna" : "");
}

int main(int argc, char **argv)
{
    const char *src = "templates/tcgemm.cu";
    bool compile_only = false, quick = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--src") && i + 1 < argc) src = argv[++i];
        else if (!strcmp(argv[i], "--compile-only")) compile_only = true;
        else if (!strcmp(argv[i], "--quick")) quick = true;
    }
    FILE *f = fopen(src, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", src); return 1; }
    fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
    g_src.resize(sz); if (fread(&g_src[0], 1, sz, f) != (size_t)sz) return 1; fclose(f);

    if (compile_only) {
        // NVRTC check with no GPU: sm_80 and sm_90 for the default and sweep configurations.
        std::vector<t8_cfg> cs;
        for (int t = 0; t < 3; t++) {
            cs.push_back(t8_default(t));
            if (!quick) for (auto &c : sweep_cfgs(t)) cs.push_back(c);
        }
        for (int arch : {80, 90}) {
            g_arch = arch;
            g_mods.clear();
            printf("-- sm_%d\n", arch);
            compile_all(cs, false);
        }
        return 0;
    }

    CK(cudaFree(0));
    int dev = 0, drv = 0, rt = 0;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    CK(cudaDriverGetVersion(&drv)); CK(cudaRuntimeGetVersion(&rt));
    g_arch = p.major * 10 + p.minor;
    g_smem_max = p.sharedMemPerBlockOptin;
    g_sms = p.multiProcessorCount;
    printf("GPU %s (sm_%d, %d SMs, %zu B smem/block), driver %d, runtime %d, NVRTC -arch=sm_%d\n", p.name, g_arch,
           g_sms, g_smem_max, drv, rt, g_arch);

    // Legality of everything we will use, then compile it all in parallel.
    std::vector<Case> cases = correctness_cases();
    std::vector<t8_cfg> all;
    for (auto &c : cases) all.push_back(c.cfg);
    for (int t = 0; t < 3; t++) for (auto &c : sweep_cfgs(t)) all.push_back(c);
    for (auto &c : all) {
        char why[128];
        if (t8_check_cfg(&c, g_smem_max, why, sizeof why)) { printf("ILLEGAL cfg %s: %s\n", opts_of(c).c_str(), why); return 1; }
    }
    auto t0 = std::chrono::steady_clock::now();
    compile_all(all, true);
    printf("compiled %zu modules in %.1f s\n", g_mods.size(),
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

    // The sm_80 build itself on this GPU: compile for sm_80, load its PTX (driver JIT), run a case.
    if (g_arch != 80) {
        Mod m80;
        t8_cfg c = mk(0, 128, 128, 32, 4, 2, 2, 16, 8);
        compile(c, 80, true, m80);
        if (!m80.ok) { printf("sm_80 compile FAIL\n%s\n", m80.log.c_str()); g_fail++; }
        else {
            CD(cuModuleLoadData(&m80.mod, m80.image.data()));
            CD(cuModuleGetFunction(&m80.gemm, m80.mod, "t8_gemm"));
            CD(cuModuleGetFunction(&m80.reduce, m80.mod, "tc_splitk_reduce"));
            CD(cuModuleGetFunction(&m80.pack, m80.mod, "tc_pack"));
            Mod saved = g_mods[opts_of(c)];
            g_mods[opts_of(c)] = m80;
            Case cs = {"sm_80 PTX JIT on this GPU", c, 1000, 1000, 1000, 0, 0, 0, 0, 0, 0, 1.0f, 0.5f, 1, false};
            run_case(cs, 999);
            g_mods[opts_of(c)] = saved;
        }
    }

    printf("\n== correctness (relative Frobenius error vs float64 reference of the same rounded inputs)\n");
    unsigned long long seed = 1;
    for (auto &cs : cases) run_case(cs, seed++);

    printf("\n== tc_pack correctness (copy + zero padding, offset source, odd ld)\n");
    for (int t : {0, 2}) {
        struct { int r, c, ld, off, round; } pc[] = {{37, 29, 31, 1, 8}, {5, 1, 1, 3, 8}, {300, 4097, 4099, 7, 64}};
        int esz = t == 2 ? 4 : 2;
        for (auto &q : pc) {
            long long ldd = t8_pack_ld(q.c, q.round, esz);
            size_t ns = (size_t)q.off + (size_t)q.r * q.ld, nd = (size_t)q.r * ldd;
            char *S, *D;
            CK(cudaMalloc(&S, ns * esz)); CK(cudaMalloc(&D, nd * esz));
            fill<<<256, 256>>>(S, ns, t, 77, 0);
            CK(cudaMemset(D, 0xff, nd * esz));
            Mod &mp = mod_of(t8_default(t));
            CD(t8_pack_launch(&g_drv, mp.pack, q.r, q.c, (CUdeviceptr)(S + (size_t)q.off * esz), q.ld, (CUdeviceptr)D,
                              ldd, g_sms, 0));
            CK(cudaDeviceSynchronize());
            std::vector<char> hs(ns * esz), hd(nd * esz), z(esz, 0);
            CK(cudaMemcpy(hs.data(), S, ns * esz, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hd.data(), D, nd * esz, cudaMemcpyDeviceToHost));
            long long bad = 0;
            for (int i = 0; i < q.r; i++)
                for (long long j = 0; j < ldd; j++) {
                    const char *want = j < q.c ? &hs[((size_t)q.off + (size_t)i * q.ld + j) * esz] : z.data();
                    if (memcmp(&hd[((size_t)i * ldd + j) * esz], want, esz)) bad++;
                }
            printf("%s  tc_pack %s %dx%d ld %d off %d round %d -> ldd %lld: %lld wrong\n", bad ? "FAIL" : "PASS",
                   tname[t], q.r, q.c, q.ld, q.off, q.round, ldd, bad);
            bad ? g_fail++ : g_pass++;
            CK(cudaFree(S)); CK(cudaFree(D));
        }
    }

    printf("\n== registers / local memory per configuration\n");
    for (auto &kv : g_mods)
        if (kv.second.ok) printf("regs %3d lmem %4d  %s\n", kv.second.regs, kv.second.lmem, kv.first.c_str());

    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) { printf("cublasCreate failed\n"); return 1; }
    printf("\n== sweep at 4096^3 (alpha 1, beta 0; TF/s = 2mnk / median time, 15 reps after 3 warm-up)\n");
    t8_cfg best[3];
    double cub4096[3], best_ms[3];
    for (int t = 0; t < 3; t++) {
        Bufs b = alloc_bufs(t, 4096, 4096, 4096);
        cub4096[t] = cublas_ms(h, b);
        printf("%s cublasGemmEx: %.3f ms  %.1f TF/s\n", tname[t], cub4096[t], tflops(4096, 4096, 4096, cub4096[t]));
        best_ms[t] = 1e30;
        for (auto &c : sweep_cfgs(t)) {
            double ms = ours_ms(c, b, 0);
            char s[128];
            cfg_str(c, s, sizeof s);
            printf("%s %-44s regs %3d: %.3f ms  %6.1f TF/s  %.2fx cuBLAS\n", tname[t], s, mod_of(c).regs, ms,
                   tflops(4096, 4096, 4096, ms), cub4096[t] / ms);
            if (ms < best_ms[t] && !c.tf32r) { best_ms[t] = ms; best[t] = c; }
        }
        free_bufs(b);
    }

    printf("\n== verification of each type's best configuration at 4096^3 (every 16th row)\n");
    for (int t = 0; t < 3; t++) {
        Case cs = {"4096^3 best", best[t], 4096, 4096, 4096, 0, 0, 0, 0, 0, 0, 1.0f, 0.0f, 16, false};
        run_case(cs, 500 + t);
    }

    printf("\n== 4097^3: cuBLAS vs best tile with LOADW narrowest (direct) vs tc_pack of A and B + LOADW 16\n");
    for (int t = 0; t < 3; t++) {
        int N = 4097, esz = t == 2 ? 4 : 2;
        Bufs b = alloc_bufs(t, N, N, N);
        double cb = cublas_ms(h, b);
        t8_cfg nar = best[t];
        nar.loadw = esz;
        double ms_n = ours_ms(nar, b, 0);
        // packed: A (N x N, ld N) and B to ld rounded to 8 elements, then the 16-byte-load kernel.
        long long ldp = t8_pack_ld(N, 8, esz);
        char *Ap, *Bp;
        CK(cudaMalloc(&Ap, (size_t)N * ldp * esz)); CK(cudaMalloc(&Bp, (size_t)N * ldp * esz));
        t8_cfg wide = best[t];
        Mod &mw = mod_of(wide);
        double ms_p = time_ms([&]() {
            CD(t8_pack_launch(&g_drv, mw.pack, N, N, (CUdeviceptr)b.A, N, (CUdeviceptr)Ap, ldp, g_sms, 0));
            CD(t8_pack_launch(&g_drv, mw.pack, N, N, (CUdeviceptr)b.B, N, (CUdeviceptr)Bp, ldp, g_sms, 0));
            CD(t8_launch(&g_drv, &wide, mw.gemm, mw.reduce, N, N, N, 1.0f, (CUdeviceptr)Ap, ldp, (CUdeviceptr)Bp, ldp,
                         0.0f, (CUdeviceptr)b.C, N, 0, 0));
        });
        double ms_pack = time_ms([&]() {
            CD(t8_pack_launch(&g_drv, mw.pack, N, N, (CUdeviceptr)b.A, N, (CUdeviceptr)Ap, ldp, g_sms, 0));
        });
        double bytes = (double)N * N * esz + (double)N * ldp * esz;
        printf("%s 4097^3 cuBLAS %.3f ms %.1f TF/s | narrow LOADW=%d %.3f ms %.1f TF/s (%.2fx) | pack+LOADW16 %.3f ms "
               "%.1f TF/s (%.2fx) | one tc_pack %.1f us = %.0f GB/s\n", tname[t], cb, tflops(N, N, N, cb), esz, ms_n,
               tflops(N, N, N, ms_n), cb / ms_n, ms_p, tflops(N, N, N, ms_p), cb / ms_p, ms_pack * 1e3,
               bytes / (ms_pack * 1e-3) / 1e9);
        // verify the packed path's result (every 31st row) against the reference of the unpacked inputs
        {
            double *R;
            int rs = 31, nr = (N + rs - 1) / rs;
            CK(cudaMalloc(&R, (size_t)nr * N * 8));
            ref_gemm<<<dim3((N + 255) / 256, nr), 256>>>(N, N, N, t, 0, 1.0, b.A, N, b.B, N, 0.0, b.C, N, rs, R);
            std::vector<double> hr((size_t)nr * N);
            std::vector<char> hc((size_t)N * esz);
            CK(cudaMemcpy(hr.data(), R, hr.size() * 8, cudaMemcpyDeviceToHost));
            double e2 = 0, r2 = 0;
            for (int ri = 0; ri < nr; ri++) {
                CK(cudaMemcpy(hc.data(), b.C + (size_t)ri * rs * N * esz, N * esz, cudaMemcpyDeviceToHost));
                for (int j = 0; j < N; j++) {
                    double d = h_in(hc.data(), j, t) - hr[(size_t)ri * N + j];
                    e2 += d * d; r2 += hr[(size_t)ri * N + j] * hr[(size_t)ri * N + j];
                }
            }
            double err = std::sqrt(e2 / r2), tol = tol_of(t, N);
            bool ok = err <= tol;
            printf("%s  %s 4097^3 packed path relF %.3e tol %.3e\n", ok ? "PASS" : "FAIL", tname[t], err, tol);
            ok ? g_pass++ : g_fail++;
            CK(cudaFree(R));
        }
        CK(cudaFree(Ap)); CK(cudaFree(Bp));
        free_bufs(b);
    }

    printf("\n== tc_pack bandwidth (read r*c + write r*ldd elements)\n");
    for (int t : {0, 2}) {
        int esz = t == 2 ? 4 : 2;
        for (int N : {4097, 8191, 8192}) {
            char *S, *D;
            long long ldp = t8_pack_ld(N, 8, esz);
            CK(cudaMalloc(&S, (size_t)N * N * esz)); CK(cudaMalloc(&D, (size_t)N * ldp * esz));
            Mod &mw = mod_of(best[t]);
            double ms = time_ms([&]() {
                CD(t8_pack_launch(&g_drv, mw.pack, N, N, (CUdeviceptr)S, N, (CUdeviceptr)D, ldp, g_sms, 0));
            });
            double bytes = (double)N * N * esz + (double)N * ldp * esz;
            printf("tc_pack %s %d x %d ld %d -> %lld: %.1f us, %.0f GB/s\n", t == 2 ? "FP32" : "16-bit", N, N, N, ldp,
                   ms * 1e3, bytes / (ms * 1e-3) / 1e9);
            // copy bandwidth for comparison
            double mc = time_ms([&]() { CK(cudaMemcpyAsync(D, S, (size_t)N * N * esz, cudaMemcpyDeviceToDevice)); });
            printf("   cudaMemcpy D2D same bytes: %.0f GB/s\n", 2.0 * N * N * esz / (mc * 1e-3) / 1e9);
            CK(cudaFree(S)); CK(cudaFree(D));
        }
    }
    cublasDestroy(h);
    printf("\n%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
