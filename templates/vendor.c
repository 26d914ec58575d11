/* vendor.c: the vendor baselines: which cuBLAS or CUB call computes a
 * problem (one mapping for every kind), the libraries loaded at run time
 * with dlopen, and each call verified and timed through measure.c. */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vendor.h"

/* ---- cuBLAS's ABI: the few values and entry points used (cublas_api.h) ---- */
typedef void *vd_handle;
enum { VD_OP_N = 0, VD_OP_T = 1 };
enum { VD_R_32F = 0, VD_R_64F = 1, VD_R_16F = 2, VD_R_16BF = 14 };
enum { VD_COMPUTE_32F = 68, VD_COMPUTE_32F_FAST_TF32 = 77, VD_COMPUTE_64F = 70 };
enum { VD_GEMM_DEFAULT = -1, VD_POINTER_HOST = 0, VD_POINTER_DEVICE = 1 };

typedef int (*vd_create_fn)(vd_handle *);
typedef int (*vd_destroy_fn)(vd_handle);
typedef int (*vd_set_stream_fn)(vd_handle, CUstream);
typedef int (*vd_version_fn)(vd_handle, int *);
typedef int (*vd_pointer_mode_fn)(vd_handle, int);
typedef int (*vd_sgemm_fn)(vd_handle, int, int, int, int, int, const float *, const void *, int,
                           const void *, int, const float *, void *, int);
typedef int (*vd_dgemm_fn)(vd_handle, int, int, int, int, int, const double *, const void *,
                           int, const void *, int, const double *, void *, int);
typedef int (*vd_gemm_ex_fn)(vd_handle, int, int, int, int, int, const void *, const void *, int,
                             int, const void *, int, int, const void *, void *, int, int, int,
                             int);
typedef int (*vd_gemm_sb_fn)(vd_handle, int, int, int, int, int, const void *, const void *, int,
                             int, long long, const void *, int, int, long long, const void *,
                             void *, int, int, long long, int, int, int);
typedef int (*vd_sdot_fn)(vd_handle, int, const void *, int, const void *, int, void *);

/* libautotune_vendor.so (templates/vendor/cub_reduce.cu). */
typedef int (*vd_atv_version_fn)(char *, int);
typedef int (*vd_atv_reduce_fn)(int, long long, const void *, const void *, void *, void *,
                                char *, int);
typedef void (*vd_atv_release_fn)(void);

struct ms_vendor {
    int cublas_tried, cub_tried;
    void *cublas_lib, *cub_lib;
    char cublas_why[256], cub_why[256];      /* why a library is not there */
    char cublas_version[64], cub_version[96];
    vd_handle h;
    CUstream stream;            /* the stream and pointer mode last set on h (a call sets them */
    int mode;                   /* only when they change: a short call's host path) */
    int state_set;
    vd_destroy_fn destroy;
    vd_set_stream_fn set_stream;
    vd_pointer_mode_fn pointer_mode;
    vd_sgemm_fn sgemm;
    vd_dgemm_fn dgemm;
    vd_gemm_ex_fn gemm_ex;
    vd_gemm_sb_fn gemm_sb;
    vd_sdot_fn sdot, ddot;
    vd_atv_reduce_fn reduce;
    vd_atv_release_fn release;
};

/* ---- which call computes a problem ---- */

typedef enum vd_what {
    VD_NONE, VD_SGEMM, VD_DGEMM, VD_GEMM_EX, VD_GEMM_SB, VD_DOT, VD_CUB
} vd_what;

/* 1 if fam is a GEMM family: its dimensions are m, n, k. */
static int vd_is_gemm(const tpl_family *fam)
{
    return fam->n_dims == 3 && fam->dim_names[0] && fam->dim_names[1] && fam->dim_names[2] &&
           strcmp(fam->dim_names[0], "m") == 0 && strcmp(fam->dim_names[1], "n") == 0 &&
           strcmp(fam->dim_names[2], "k") == 0;
}

/* 1 if the name ends in suffix ("sum", "dsum"; "dot"). */
static int vd_ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n >= s && strcmp(name + n - s, suffix) == 0;
}

/* The cuBLAS data type of an element type; -1 if none. */
static int vd_cuda_type(at_dtype t)
{
    switch (t) {
    case AT_R_32F: return VD_R_32F;
    case AT_R_64F: return VD_R_64F;
    case AT_R_16F: return VD_R_16F;
    case AT_R_16BF: return VD_R_16BF;
    default: break;             /* FP8: no cuBLAS GEMM call of this table takes it */
    }
    return -1;
}

/* The compute type for p's element type and math: FP32 accumulation for
 * FP32, FP16 and BF16 data (TF32 tensor cores when p asks for TF32),
 * FP64 for FP64. */
static int vd_compute_type(const tpl_problem *p)
{
    if (p->dtype == AT_R_64F)
        return VD_COMPUTE_64F;
    return p->math == AT_MATH_TF32 ? VD_COMPUTE_32F_FAST_TF32 : VD_COMPUTE_32F;
}

/* The GEMM entry point for p: strided batched for a batch, else Sgemm for
 * exact FP32, Dgemm for FP64, GemmEx for FP16, BF16 and TF32; its name in
 * call unless call is NULL (a served call formats nothing). */
static vd_what vd_gemm_call(const tpl_problem *p, char *call, size_t len)
{
    if (vd_cuda_type(p->dtype) < 0 || (p->math == AT_MATH_TF32 && p->dtype != AT_R_32F) ||
        (p->math != AT_MATH_DEFAULT && p->math != AT_MATH_TF32) ||    /* FP8 operands */
        (p->op_a != AT_OP_N && p->op_a != AT_OP_T) || (p->op_b != AT_OP_N && p->op_b != AT_OP_T) ||
        (p->order != AT_ROW_MAJOR && p->order != AT_COL_MAJOR) || p->epilogue != 0)
        return VD_NONE;             /* no fused epilogue through these calls */
    vd_what w = tpl_problem_batch(p) > 1                             ? VD_GEMM_SB
                : p->dtype == AT_R_32F && p->math != AT_MATH_TF32 ? VD_SGEMM
                : p->dtype == AT_R_64F                            ? VD_DGEMM
                                                                  : VD_GEMM_EX;
    if (!call)
        return w;
    const char *type = tpl_dtype_name(p->dtype);
    const char *compute = vd_compute_type(p) == VD_COMPUTE_64F ? "64F"
                          : p->math == AT_MATH_TF32          ? "32F_FAST_TF32"
                                                             : "32F";
    if (w == VD_GEMM_SB)
        snprintf(call, len, "cublasGemmStridedBatchedEx (%s; compute %s)", type, compute);
    else if (w == VD_SGEMM)
        snprintf(call, len, "cublasSgemm");
    else if (w == VD_DGEMM)
        snprintf(call, len, "cublasDgemm");
    else
        snprintf(call, len, "cublasGemmEx (%s A, B, C; compute %s)", type, compute);
    return w;
}

/* The calls of (fam, p) with what each runs; returns the count (0: the
 * reason in why). */
static int vd_plan(const tpl_family *fam, const tpl_problem *p, ms_vendor_call *out,
                   vd_what *what, int max, char *why, size_t whylen)
{
    char text[96];
    tpl_problem_format(p, text, sizeof text);
    int n = 0;
    if (vd_is_gemm(fam) && p->n_dims == 3) {
        vd_what w = vd_gemm_call(p, out[0].call, sizeof out[0].call);
        if (w != VD_NONE && max > 0) {
            snprintf(out[0].name, sizeof out[0].name, "cublas");
            what[n++] = w;
        }
    } else if (p->n_dims == 1 && tpl_problem_batch(p) <= 1 &&
               (p->dtype == AT_R_32F || p->dtype == AT_R_64F) && p->math == AT_MATH_DEFAULT &&
               (vd_ends_with(fam->name, "sum") || vd_ends_with(fam->name, "dot"))) {
        int dot = vd_ends_with(fam->name, "dot");
        int f64 = p->dtype == AT_R_64F;
        if (n < max) {
            snprintf(out[n].name, sizeof out[n].name, "cub");
            snprintf(out[n].call, sizeof out[n].call, "cub::DeviceReduce::Sum%s (%s)",
                     dot ? " of x[i]*y[i]" : "", f64 ? "double" : "float");
            what[n++] = VD_CUB;
        }
        if (dot && n < max) {
            snprintf(out[n].name, sizeof out[n].name, "cublas");
            snprintf(out[n].call, sizeof out[n].call, "%s (device pointer mode)",
                     f64 ? "cublasDdot" : "cublasSdot");
            what[n++] = VD_DOT;
        }
    }
    if (n == 0)
        snprintf(why, whylen, "no vendor call for %s %s", fam->name, text);
    return n;
}

int ms_vendor_calls(const tpl_family *fam, const tpl_problem *p, ms_vendor_call *out, int max,
                    char *why, size_t whylen)
{
    vd_what what[MS_MAX_VENDOR];
    if (max > MS_MAX_VENDOR)
        max = MS_MAX_VENDOR;
    return vd_plan(fam, p, out, what, max, why, whylen);
}

/* ---- loading the libraries ---- */

ms_vendor *ms_vendor_open(void)
{
    return calloc(1, sizeof(ms_vendor));
}

void ms_vendor_close(ms_vendor *v)
{
    if (!v)
        return;
    if (v->h && v->destroy)
        v->destroy(v->h);
    if (v->release)
        v->release();
    if (v->cublas_lib)
        dlclose(v->cublas_lib);
    if (v->cub_lib)
        dlclose(v->cub_lib);
    free(v);
}

/* dlopen of the first of names that loads (then of each under
 * $CUDA_HOME/lib64 or /usr/local/cuda/lib64); NULL if none. */
static void *vd_load(const char *const *names, int n, char *loaded, size_t len)
{
    const char *home = getenv("CUDA_HOME");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            char path[4200];
            if (pass == 0)
                snprintf(path, sizeof path, "%s", names[i]);
            else
                snprintf(path, sizeof path, "%s/lib64/%s", home && *home ? home : "/usr/local/cuda",
                         names[i]);
            void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (lib) {
                snprintf(loaded, len, "%s", names[i]);
                return lib;
            }
        }
    return NULL;
}

/* Loads cuBLAS, resolves its entry points and makes a handle; 1 if ready,
 * 0 with the reason in v->cublas_why. */
static int vd_cublas(ms_vendor *v)
{
    if (v->cublas_tried)
        return v->h != NULL;
    v->cublas_tried = 1;
    static const char *const names[] = {
        "libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so",
    };
    char loaded[64] = "";
    v->cublas_lib = vd_load(names, 4, loaded, sizeof loaded);
    if (!v->cublas_lib) {
        snprintf(v->cublas_why, sizeof v->cublas_why,
                 "cuBLAS not found (libcublas.so.13, .12, .11 or libcublas.so)");
        return 0;
    }
    void *l = v->cublas_lib;
    vd_create_fn create = (vd_create_fn)dlsym(l, "cublasCreate_v2");
    vd_version_fn version = (vd_version_fn)dlsym(l, "cublasGetVersion_v2");
    v->destroy = (vd_destroy_fn)dlsym(l, "cublasDestroy_v2");
    v->set_stream = (vd_set_stream_fn)dlsym(l, "cublasSetStream_v2");
    v->pointer_mode = (vd_pointer_mode_fn)dlsym(l, "cublasSetPointerMode_v2");
    v->sgemm = (vd_sgemm_fn)dlsym(l, "cublasSgemm_v2");
    v->dgemm = (vd_dgemm_fn)dlsym(l, "cublasDgemm_v2");
    v->gemm_ex = (vd_gemm_ex_fn)dlsym(l, "cublasGemmEx");
    v->gemm_sb = (vd_gemm_sb_fn)dlsym(l, "cublasGemmStridedBatchedEx");
    v->sdot = (vd_sdot_fn)dlsym(l, "cublasSdot_v2");
    v->ddot = (vd_sdot_fn)dlsym(l, "cublasDdot_v2");
    if (!create || !version || !v->destroy || !v->set_stream || !v->pointer_mode || !v->sgemm ||
        !v->dgemm || !v->gemm_ex || !v->gemm_sb || !v->sdot || !v->ddot) {
        snprintf(v->cublas_why, sizeof v->cublas_why, "%s lacks an entry point used", loaded);
        return 0;
    }
    int rc = create(&v->h);
    if (rc != 0) {
        v->h = NULL;
        snprintf(v->cublas_why, sizeof v->cublas_why, "cublasCreate failed: status %d", rc);
        return 0;
    }
    int ver = 0;
    version(v->h, &ver);
    snprintf(v->cublas_version, sizeof v->cublas_version, "cuBLAS %d.%d.%d (%s)", ver / 10000,
             ver / 100 % 100, ver % 100, loaded);
    return 1;
}

/* The folder of the running program into out ("" if unknown). */
static void vd_exe_dir(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    out[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
    else
        out[0] = '\0';
}

/* Loads libautotune_vendor.so: $AUTOTUNE_VENDOR_LIB, else beside the
 * program, in ../lib from it, or on the library path; 1 if ready, 0 with
 * the reason in v->cub_why. */
static int vd_cub(ms_vendor *v)
{
    if (v->cub_tried)
        return v->reduce != NULL;
    v->cub_tried = 1;
    char dir[2048], paths[4][2200];
    vd_exe_dir(dir, sizeof dir);
    const char *env = getenv("AUTOTUNE_VENDOR_LIB");
    int n = 0;
    if (env && *env)
        snprintf(paths[n++], sizeof paths[0], "%s", env);
    if (dir[0]) {
        snprintf(paths[n++], sizeof paths[0], "%s/libautotune_vendor.so", dir);
        snprintf(paths[n++], sizeof paths[0], "%s/../lib/libautotune_vendor.so", dir);
    }
    snprintf(paths[n++], sizeof paths[0], "libautotune_vendor.so");
    for (int i = 0; i < n && !v->cub_lib; i++)
        v->cub_lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    if (!v->cub_lib) {
        snprintf(v->cub_why, sizeof v->cub_why,
                 "CUB not found: libautotune_vendor.so (built by make where nvcc is present) "
                 "is not beside autotune nor on the library path");
        return 0;
    }
    vd_atv_version_fn version = (vd_atv_version_fn)dlsym(v->cub_lib, "atv_version");
    v->reduce = (vd_atv_reduce_fn)dlsym(v->cub_lib, "atv_reduce");
    v->release = (vd_atv_release_fn)dlsym(v->cub_lib, "atv_release");
    if (!version || !v->reduce || !v->release) {
        v->reduce = NULL;
        v->release = NULL;
        snprintf(v->cub_why, sizeof v->cub_why, "libautotune_vendor.so lacks atv_reduce");
        return 0;
    }
    version(v->cub_version, (int)sizeof v->cub_version);
    return 1;
}

/* ---- the calls ---- */

typedef struct vd_ctx {
    ms_vendor *v;
    vd_what what;
} vd_ctx;

/* Sets h's stream and pointer mode where they differ from the last ones set. */
static void vd_state(ms_vendor *v, CUstream stream, int mode)
{
    if (!v->state_set || v->stream != stream)
        v->set_stream(v->h, stream);
    if (!v->state_set || v->mode != mode)
        v->pointer_mode(v->h, mode);
    v->stream = stream;
    v->mode = mode;
    v->state_set = 1;
}

/* 1 if every value fits cuBLAS's 32-bit int arguments. */
static int vd_fits(const long long *vals, int n)
{
    for (int i = 0; i < n; i++)
        if (vals[i] < 0 || vals[i] > INT_MAX)
            return 0;
    return 1;
}

/* One GEMM through cuBLAS (column-major). A row-major C = op(A) op(B) is
 * the column-major C^T = op(B)^T op(A)^T: the operands and m, n swap and
 * each keeps its op, since a row-major matrix read column-major is its
 * transpose. */
static at_status vd_gemm(vd_ctx *c, CUstream stream, tpl_args *a, char *err, size_t len)
{
    ms_vendor *v = c->v;
    const tpl_problem *p = &a->problem;
    const tpl_operand *A = &a->operand[TPL_GEMM_A], *B = &a->operand[TPL_GEMM_B],
                      *C = &a->operand[TPL_GEMM_C];
    int row = p->order == AT_ROW_MAJOR;
    const tpl_operand *X = row ? B : A, *Y = row ? A : B;
    int opx = (row ? p->op_b : p->op_a) == AT_OP_T ? VD_OP_T : VD_OP_N;
    int opy = (row ? p->op_a : p->op_b) == AT_OP_T ? VD_OP_T : VD_OP_N;
    long long m = row ? p->dims[1] : p->dims[0], n = row ? p->dims[0] : p->dims[1];
    long long k = p->dims[2], batch = tpl_problem_batch(p);
    long long vals[] = { m, n, k, X->ld, Y->ld, C->ld, batch };
    if (!vd_fits(vals, 7)) {
        snprintf(err, len, "sizes beyond cuBLAS's 32-bit arguments");
        return AT_ERR_UNSUPPORTED;
    }
    vd_state(v, stream, VD_POINTER_HOST);
    float af = (float)a->scalar[TPL_GEMM_ALPHA], bf = (float)a->scalar[TPL_GEMM_BETA];
    double ad = a->scalar[TPL_GEMM_ALPHA], bd = a->scalar[TPL_GEMM_BETA];
    int t = vd_cuda_type(p->dtype), ct = vd_compute_type(p);
    const void *al = ct == VD_COMPUTE_64F ? (const void *)&ad : (const void *)&af;
    const void *be = ct == VD_COMPUTE_64F ? (const void *)&bd : (const void *)&bf;
    const void *x = (const void *)(uintptr_t)X->ptr, *y = (const void *)(uintptr_t)Y->ptr;
    void *cp = (void *)(uintptr_t)C->ptr;
    int rc;
    switch (c->what) {
    case VD_SGEMM:
        rc = v->sgemm(v->h, opx, opy, (int)m, (int)n, (int)k, &af, x, (int)X->ld, y, (int)Y->ld,
                      &bf, cp, (int)C->ld);
        break;
    case VD_DGEMM:
        rc = v->dgemm(v->h, opx, opy, (int)m, (int)n, (int)k, &ad, x, (int)X->ld, y, (int)Y->ld,
                      &bd, cp, (int)C->ld);
        break;
    case VD_GEMM_EX:
        rc = v->gemm_ex(v->h, opx, opy, (int)m, (int)n, (int)k, al, x, t, (int)X->ld, y, t,
                        (int)Y->ld, be, cp, t, (int)C->ld, ct, VD_GEMM_DEFAULT);
        break;
    default:
        rc = v->gemm_sb(v->h, opx, opy, (int)m, (int)n, (int)k, al, x, t, (int)X->ld,
                        X->batch_stride, y, t, (int)Y->ld, Y->batch_stride, be, cp, t,
                        (int)C->ld, C->batch_stride, (int)batch, ct, VD_GEMM_DEFAULT);
        break;
    }
    if (rc != 0) {
        snprintf(err, len, "cuBLAS returned status %d", rc);
        return AT_ERR_CUDA;
    }
    return AT_OK;
}

static at_status vd_run(void *ctx, CUstream stream, tpl_args *a, char *err, size_t len)
{
    vd_ctx *c = ctx;
    ms_vendor *v = c->v;
    const tpl_problem *p = &a->problem;
    if (c->what == VD_SGEMM || c->what == VD_DGEMM || c->what == VD_GEMM_EX ||
        c->what == VD_GEMM_SB)
        return vd_gemm(c, stream, a, err, len);
    const void *x = (const void *)(uintptr_t)a->operand[TPL_RED_X].ptr;
    const void *y = (const void *)(uintptr_t)a->operand[TPL_RED_Y].ptr;
    void *r = (void *)(uintptr_t)a->operand[TPL_RED_RESULT].ptr;
    int f64 = p->dtype == AT_R_64F;
    if (c->what == VD_CUB) {
        int rc = v->reduce(f64, p->dims[0], x, y, r, (void *)stream, err, (int)len);
        return rc == 0 ? AT_OK : AT_ERR_CUDA;
    }
    if (p->dims[0] > INT_MAX) {
        snprintf(err, len, "n beyond cuBLAS's 32-bit arguments");
        return AT_ERR_UNSUPPORTED;
    }
    vd_state(v, stream, VD_POINTER_DEVICE);
    int rc = (f64 ? v->ddot : v->sdot)(v->h, (int)p->dims[0], x, 1, y, 1, r);
    vd_state(v, stream, VD_POINTER_HOST);
    if (rc != 0) {
        snprintf(err, len, "cuBLAS returned status %d", rc);
        return AT_ERR_CUDA;
    }
    return AT_OK;
}

/* Verifies, then times one call into out. */
static void vd_measure_one(ms_vendor *v, ms_gpu *g, const ms_options *opt,
                           const ms_vendor_call *call, vd_what what, ms_vendor_result *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", call->name);
    out->rel_error = -1;
    int cub = what == VD_CUB;
    if (!(cub ? vd_cub(v) : vd_cublas(v))) {
        out->status = AT_ERR_NOT_FOUND;
        snprintf(out->note, sizeof out->note, "%s", cub ? v->cub_why : v->cublas_why);
        return;
    }
    vd_ctx ctx = { v, what };
    char err[512] = "";
    ms_options o;
    if (opt)
        o = *opt;
    else
        ms_default_options(&o);
    o.abandon_ms = 0;
    /* TF32: the reference rounds the inputs to TF32 to nearest even, as cuBLAS
     * and the family's kernels do (H200: cuBLAS's error against it equals the
     * family's, 1.92e-5 at 8192^3), so cuBLAS meets the family's rule as is. */
    out->status = ms_verify_call(g, vd_run, &ctx, &out->rel_error, err, sizeof err);
    if (out->status == AT_OK)
        out->status = ms_time_call(g, vd_run, &ctx, &o, 0, 0, &out->timing, err, sizeof err);
    if (out->status == AT_OK)
        snprintf(out->note, sizeof out->note, "%.120s, %.100s", call->call,
                 cub ? v->cub_version : v->cublas_version);
    else
        snprintf(out->note, sizeof out->note, "%.100s: %.140s", call->call, err);
}

int ms_vendor_measure(ms_vendor *v, ms_gpu *g, const ms_options *opt, ms_vendor_result *out,
                      int max, char *why, size_t whylen)
{
    const tpl_family *fam = ms_family(g);
    const tpl_args *args = ms_args(g);
    if (!v || !fam || !args) {
        snprintf(why, whylen, "no inputs prepared");
        return 0;
    }
    ms_vendor_call calls[MS_MAX_VENDOR];
    vd_what what[MS_MAX_VENDOR];
    if (max > MS_MAX_VENDOR)
        max = MS_MAX_VENDOR;
    int n = vd_plan(fam, &args->problem, calls, what, max, why, whylen);
    for (int i = 0; i < n; i++) {
        vd_measure_one(v, g, opt, &calls[i], what[i], &out[i]);
        if (out[i].status == AT_ERR_CRASHED)
            return i + 1;               /* the context is gone: nothing more runs */
    }
    return n;
}

/* ---- the runtime's vendor candidate ---- */

int ms_vendor_gemm_supported(const tpl_problem *p, char *call, size_t len)
{
    char text[128];
    if (p->n_dims != 3)
        return 0;
    vd_what w = vd_gemm_call(p, text, sizeof text);
    if (w == VD_NONE)
        return 0;
    if (call && len)
        snprintf(call, len, "%s", text);
    return 1;
}

at_status ms_vendor_gemm(ms_vendor *v, CUstream stream, tpl_args *args, char *err, size_t len)
{
    vd_what w = args->problem.n_dims == 3 ? vd_gemm_call(&args->problem, NULL, 0) : VD_NONE;
    if (w == VD_NONE) {
        snprintf(err, len, "no cuBLAS call computes this problem");
        return AT_ERR_UNSUPPORTED;
    }
    if (!v) {
        snprintf(err, len, "no vendor handle (out of host memory)");
        return AT_ERR_NO_MEMORY;
    }
    if (!vd_cublas(v)) {
        snprintf(err, len, "%s", v->cublas_why);
        return AT_ERR_NOT_FOUND;
    }
    vd_ctx c = { v, w };
    return vd_gemm(&c, stream, args, err, len);
}
