/* test_vendor.c: the vendor baselines (templates/vendor.c): the cuBLAS/CUB
 * call chosen for every kind of problem (CPU), and on a GPU each call
 * verified and timed on the prepared inputs; the ceilings (ceiling.c). */
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "measure.h"
#include "vendor.h"

extern const tpl_family tpl_matmul, tpl_tcgemm, tpl_sum, tpl_dot, tpl_jacobi;

/* A GEMM family of every kind (dimensions m, n, k), for the mapping only. */
static int tv_any(const tpl_problem *p) { (void)p; return 1; }
static const tpl_family tv_gemm = {
    .name = "tv_gemm", .n_dims = 3, .dim_names = { "m", "n", "k" }, .accepts = tv_any,
};

/* The calls chosen for text (a problem's text form) of fam: "name:call|...". */
static void tv_calls(const tpl_family *fam, const char *text, char *out, size_t len)
{
    tpl_problem p;
    char err[256];
    out[0] = '\0';
    if (tpl_problem_parse(text, &p, err, sizeof err) != AT_OK) {
        snprintf(out, len, "parse error: %s", err);
        return;
    }
    ms_vendor_call calls[MS_MAX_VENDOR];
    int n = ms_vendor_calls(fam, &p, calls, MS_MAX_VENDOR, err, sizeof err);
    if (n == 0)
        snprintf(out, len, "none: %s", err);
    size_t used = strlen(out);
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s:%s", i ? "|" : "", calls[i].name,
                                 calls[i].call);
}

TEST(vendor_calls_name_the_cublas_or_cub_call_of_every_kind)
{
    static const struct { const tpl_family *fam; const char *problem, *want; } cases[] = {
        { &tpl_matmul, "1000x999x1001", "cublas:cublasSgemm" },
        { &tpl_tcgemm, "4096x4096x4096:bf16",
          "cublas:cublasGemmEx (bf16 A, B, C; compute 32F)" },
        { &tpl_tcgemm, "4096x4096x4096:f16", "cublas:cublasGemmEx (f16 A, B, C; compute 32F)" },
        { &tpl_tcgemm, "4096x4096x4096:tf32",
          "cublas:cublasGemmEx (f32 A, B, C; compute 32F_FAST_TF32)" },
        { &tv_gemm, "512x512x512:f64", "cublas:cublasDgemm" },
        { &tv_gemm, "512x512x512:col:TN", "cublas:cublasSgemm" },
        { &tv_gemm, "64x64x64:f64:b100",
          "cublas:cublasGemmStridedBatchedEx (f64; compute 64F)" },
        { &tv_gemm, "64x64x64:bf16:NT:b8",
          "cublas:cublasGemmStridedBatchedEx (bf16; compute 32F)" },
        { &tpl_sum, "1048576", "cub:cub::DeviceReduce::Sum (float)" },
        { &tpl_sum, "1048576:f64", "cub:cub::DeviceReduce::Sum (double)" },
        { &tpl_dot, "1000003",
          "cub:cub::DeviceReduce::Sum of x[i]*y[i] (float)|"
          "cublas:cublasSdot (device pointer mode)" },
        { &tpl_dot, "1000003:f64",
          "cub:cub::DeviceReduce::Sum of x[i]*y[i] (double)|"
          "cublas:cublasDdot (device pointer mode)" },
        { &tpl_jacobi, "4096", "none: no vendor call for jacobi 4096" },
        { &tpl_sum, "1048576:bf16", "none: no vendor call for sum 1048576:bf16" },
        { &tv_gemm, "64x64x64:f16:tf32", "parse error" },
    };
    char got[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tv_calls(cases[i].fam, cases[i].problem, got, sizeof got);
        CHECK_MSG(strncmp(got, cases[i].want, strlen(cases[i].want)) == 0,
                  "%s %s: got '%s', want '%s'", cases[i].fam->name, cases[i].problem, got,
                  cases[i].want);
    }
}

/* A "vendor" that does nothing: the output stays poisoned or at C0. */
static at_status tv_nothing(void *ctx, CUstream stream, tpl_args *args, char *err, size_t len)
{
    (void)ctx, (void)stream, (void)args, (void)err, (void)len;
    return AT_OK;
}

GPU_TEST(vendor_calls_verify_and_time_on_the_prepared_inputs)
{
    char err[1024], why[256];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    ms_vendor *v = ms_vendor_open();
    CHECK(v);
    static const struct { const tpl_family *fam; const char *problem; } cases[] = {
        { &tpl_matmul, "515x257x300" }, { &tpl_tcgemm, "520x264x1037:bf16" },
        { &tpl_tcgemm, "512x512x512:f16" }, { &tpl_tcgemm, "1000x999x1001:tf32" },
        { &tpl_sum, "1048577" }, { &tpl_dot, "1000003" },
    };
    char lib[4200];
    snprintf(lib, sizeof lib, "%s/libautotune_vendor.so", th_build_dir());
    int have_cub = access(lib, R_OK) == 0;
    for (size_t i = 0; !th_failed() && i < sizeof cases / sizeof cases[0]; i++) {
        tpl_problem p;
        CHECK_OK(tpl_problem_parse(cases[i].problem, &p, err, sizeof err));
        if (!tpl_family_accepts(cases[i].fam, &p))
            continue;
        CHECK_MSG(ms_prepare(g, cases[i].fam, &p, 5 + i, err, sizeof err) == AT_OK, "%s", err);
        ms_vendor_result r[MS_MAX_VENDOR];
        int n = ms_vendor_measure(v, g, NULL, r, MS_MAX_VENDOR, why, sizeof why);
        CHECK_MSG(n > 0, "%s %s: %s", cases[i].fam->name, cases[i].problem, why);
        for (int k = 0; k < n; k++) {
            if (r[k].status == AT_ERR_NOT_FOUND && strcmp(r[k].name, "cub") == 0 && !have_cub)
                continue;
            CHECK_MSG(r[k].status == AT_OK && r[k].timing.median_ms > 0 &&
                          r[k].rel_error >= 0 &&
                          r[k].rel_error <= cases[i].fam->tolerance(&p) +
                                                (p.math == AT_MATH_TF32 ? 3.0 / 1024 : 0),
                      "%s %s %s: %s, error %g, %s", cases[i].fam->name, cases[i].problem,
                      r[k].name, at_status_string(r[k].status), r[k].rel_error, r[k].note);
            printf("     %s %s %s: %.4f ms, error %.2g, %s\n", cases[i].fam->name, cases[i].problem,
                   r[k].name, r[k].timing.median_ms, r[k].rel_error, r[k].note);
        }
        /* the same check rejects a call that computes nothing */
        double e = -1;
        CHECK_MSG(ms_verify_call(g, tv_nothing, NULL, &e, err, sizeof err) ==
                      AT_ERR_WRONG_RESULT, "%s %s: a call that does nothing passed (%g)",
                  cases[i].fam->name, cases[i].problem, e);
    }
    ms_vendor_close(v);
    ms_close(g);
}

GPU_TEST(ceilings_lie_between_zero_and_the_theoretical_peaks)
{
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *d = ms_device(g);
    ms_ceiling ce[8];
    int n = ms_ceilings(g, ce, 8, err, sizeof err);
    CHECK_MSG(n == 4, "ms_ceilings: %d (%s)", n, err);
    double fp32 = (double)d->sm_count * 128 * 2 * d->clock_khz / 1e6;
    double bw = 2.0 * d->mem_clock_khz * 1e3 * d->mem_bus_bits / 8 / 1e9;
    for (int i = 0; i < n; i++) {
        printf("     %s: %.1f GFLOP/s, %.1f GB/s, %.4f ms (%s)\n", ce[i].name, ce[i].gflops, ce[i].gbs,
               ce[i].time_ms, ce[i].note);
        if (strcmp(ce[i].name, "launch_floor") == 0)
            CHECK(ce[i].time_ms > 0 && ce[i].time_ms < 0.1);
        else if (strcmp(ce[i].name, "read_bandwidth") == 0)
            CHECK(ce[i].gbs > 0.3 * bw && ce[i].gbs < 1.02 * bw);
        else if (strcmp(ce[i].name, "fp32_peak") == 0)
            CHECK(ce[i].gflops > 0.3 * fp32 && ce[i].gflops < 1.02 * fp32);
        else
            CHECK(strcmp(ce[i].name, "fp64_peak") == 0 && ce[i].gflops > 0 &&
                  ce[i].gflops < fp32);
    }
    ms_close(g);
}
