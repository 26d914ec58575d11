/* test_dreduce.c: double precision sum, dot and Jacobi: the TYPE parameter, kinds
 * that never cross, the double lattice, the API's argument checks (CPU tier); at_dsum and
 * at_ddot against a compensated host sum, and a system FP32 Jacobi cannot solve (GPU tier). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "autotune.h"
#include "cudrv.h"
#include "harness.h"
#include "lookup.h"
#include "measure.h"
#include "tpl.h"
#include "tune_core.h"

extern const tpl_family tpl_sum, tpl_dot, tpl_jacobi;

/* The TYPE parameter's position in each family (its last). */
static int dr_type_index(const tpl_family *f)
{
    return tpl_param_index(f, "TYPE");
}

/* ---------------- CPU tier ---------------- */

/* TYPE is the last parameter of each family, left out of texts and NVRTC
 * options at 0, so every FP32 text and cubin key reads as before. */
TEST(dreduce_type_parameter_is_omitted_at_float)
{
    const tpl_family *fams[3] = {&tpl_sum, &tpl_dot, &tpl_jacobi};
    for (int f = 0; f < 3; f++) {
        const tpl_family *fam = fams[f];
        int t = dr_type_index(fam);
        CHECK_EQ(t, fam->n_params - 1);
        CHECK(fam->params[t].omit_first && !fam->params[t].host_only);
        CHECK(fam->params[t].n_values == 2 && fam->params[t].values[0] == 0 &&
              fam->params[t].values[1] == 1);
        int cfg[TPL_MAX_PARAMS];
        char err[256], text[TPL_CONFIG_LEN], opts[1024];
        CHECK_OK(tpl_config_parse(fam, fam->default_config, cfg, err, sizeof err));
        CHECK_EQ(cfg[t], 0);
        tpl_config_format(fam, cfg, text, sizeof text);
        CHECK_STR(text, fam->default_config);           /* no ",TYPE=0" */
        tpl_options_string(fam, cfg, "sm_90", opts, sizeof opts);
        CHECK_MSG(!strstr(opts, "-DTYPE"), "%s: %s", fam->name, opts);
        cfg[t] = 1;
        tpl_config_format(fam, cfg, text, sizeof text);
        CHECK(strstr(text, ",TYPE=1") != NULL);
        tpl_options_string(fam, cfg, "sm_90", opts, sizeof opts);
        CHECK(strstr(opts, "-DTYPE=1") != NULL);
        int back[TPL_MAX_PARAMS];
        CHECK_OK(tpl_config_parse(fam, text, back, err, sizeof err));
        CHECK(memcmp(back, cfg, sizeof(int) * (size_t)fam->n_params) == 0);
        /* given explicitly at 0, it parses too; given twice, not */
        char twice[TPL_CONFIG_LEN + 16];
        snprintf(twice, sizeof twice, "%s,TYPE=0", fam->default_config);
        CHECK_OK(tpl_config_parse(fam, twice, back, err, sizeof err));
        CHECK_EQ(back[t], 0);
        snprintf(twice, sizeof twice, "%s,TYPE=0,TYPE=1", fam->default_config);
        CHECK_EQ(tpl_config_parse(fam, twice, back, err, sizeof err), AT_ERR_INVALID_ARG);
        /* keys differ by type */
        char k0[128], k1[128];
        cfg[t] = 0;
        tpl_binary_key(fam, cfg, "sm_90", k0, sizeof k0);
        cfg[t] = 1;
        tpl_binary_key(fam, cfg, "sm_90", k1, sizeof k1);
        CHECK(strcmp(k0, k1) != 0);
    }
    /* the text form of a double problem */
    tpl_problem p;
    char err[256], text[64];
    CHECK_OK(tpl_problem_parse("134217728:f64", &p, err, sizeof err));
    CHECK(p.n_dims == 1 && p.dims[0] == 134217728 && p.dtype == AT_R_64F);
    tpl_problem_format(&p, text, sizeof text);
    CHECK_STR(text, "134217728:f64");
}

/* Sum, dot and Jacobi accept FP32 and FP64 problems of the plain kind and
 * nothing else, and no valid configuration serves both types: a double
 * problem never runs an FP32 winner, nor the reverse. */
TEST(dreduce_kinds_never_cross)
{
    const tpl_family *fams[3] = {&tpl_sum, &tpl_dot, &tpl_jacobi};
    for (int f = 0; f < 3; f++) {
        const tpl_family *fam = fams[f];
        tpl_problem p32 = TPL_PROBLEM(1, {4096}), p64 = p32, other = p32;
        p64.dtype = AT_R_64F;
        CHECK(tpl_family_accepts(fam, &p32) && tpl_family_accepts(fam, &p64));
        other.dtype = AT_R_16BF;
        CHECK(!tpl_family_accepts(fam, &other));
        other = p32;
        other.math = AT_MATH_TF32;
        CHECK(!tpl_family_accepts(fam, &other));
        other = p64;
        other.batch = 4;
        CHECK(!tpl_family_accepts(fam, &other));
        other = p64;
        other.order = AT_COL_MAJOR;
        CHECK(!tpl_family_accepts(fam, &other));
        long long *idx = NULL;
        long long n = tpl_valid_configs_cached(fam, NULL, &idx);
        CHECK(n > 0);
        int t = dr_type_index(fam);
        long long served32 = 0, served64 = 0;
        for (long long i = 0; i < n; i++) {
            int cfg[TPL_MAX_PARAMS];
            tpl_config_from_index(fam, idx[i], cfg);
            int a32 = fam->applicable(cfg, &p32), a64 = fam->applicable(cfg, &p64);
            CHECK_MSG(!(a32 && a64), "%s: index %lld serves both types", fam->name, idx[i]);
            CHECK(!a32 || cfg[t] == 0);
            CHECK(!a64 || cfg[t] == 1);
            served32 += a32;
            served64 += a64;
        }
        free(idx);
        CHECK(served32 > 0 && served64 > 0);
        /* an empty database: the FP32 default for FP32, f64_default for
         * FP64 (deterministic mode too) */
        at_device_info dev;
        memset(&dev, 0, sizeof dev);
        snprintf(dev.arch, sizeof dev.arch, "sm_90");
        dev.max_threads_per_block = 1024;
        dev.max_threads_per_sm = 2048;
        dev.regs_per_block = 65536;
        dev.sm_count = 132;
        dev.smem_per_block_optin = 227 * 1024;
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        for (int det = 0; det < 2; det++) {
            CHECK_EQ(lk_choose(NULL, &dev, fam, &p32, det, cfg, config), AT_LOOKUP_DEFAULT);
            CHECK_STR(config, fam->default_config);
            CHECK_EQ(lk_choose(NULL, &dev, fam, &p64, det, cfg, config), AT_LOOKUP_DEFAULT);
            CHECK(strstr(config, "TYPE=1") != NULL);
            CHECK(!det || fam->deterministic(cfg));
        }
        const tpl_baseline *last = &fam->baselines[fam->n_baselines - 1];
        CHECK_STR(last->name, "f64_default");
        CHECK_STR(config, last->config);
    }
}

/* The double lattice: the seeds' styles stay reachable (each seed text
 * with TYPE=1 is valid and serves a double problem), the default run's
 * double spaces stay small, and the per-type rules hold. */
TEST(dreduce_double_lattice)
{
    const tpl_family *fams[3] = {&tpl_sum, &tpl_dot, &tpl_jacobi};
    static const long long sizes[3] = {1LL << 20, 1LL << 20, 1024};
    for (int f = 0; f < 3; f++) {
        const tpl_family *fam = fams[f];
        int t = dr_type_index(fam);
        tpl_problem p64 = TPL_PROBLEM(1, {sizes[f]});
        p64.dtype = AT_R_64F;
        for (int b = 0; b < fam->n_baselines; b++) {
            char text[TPL_CONFIG_LEN + 8], err[256], why[256];
            int cfg[TPL_MAX_PARAMS];
            if (strstr(fam->baselines[b].config, "TYPE="))
                snprintf(text, sizeof text, "%s", fam->baselines[b].config);
            else
                snprintf(text, sizeof text, "%s,TYPE=1", fam->baselines[b].config);
            CHECK_OK(tpl_config_parse(fam, text, cfg, err, sizeof err));
            CHECK_MSG(fam->valid(cfg, NULL, why, sizeof why), "%s %s: %s", fam->name, text, why);
            CHECK_MSG(fam->applicable(cfg, &p64), "%s %s", fam->name, text);
        }
        long long raw = tpl_space_size(fam), n64 = 0, styles[5] = {0};
        for (long long i = 0; i < raw; i++) {
            int cfg[TPL_MAX_PARAMS];
            tpl_config_from_index(fam, i, cfg);
            if (cfg[t] != 1 || !fam->valid(cfg, NULL, NULL, 0))
                continue;
            n64++;
            if (fam == &tpl_jacobi) {
                /* VEC 1 only in the seeds' shape, else 16-byte loads */
                CHECK(cfg[2] == 2 || (cfg[0] == 1 && cfg[1] == 256 && cfg[2] == 1));
                continue;
            }
            styles[cfg[0]]++;
            CHECK(cfg[4] <= 2 && cfg[1] != 4);              /* VEC <= 2, no gather */
            CHECK(cfg[5] <= 0 || cfg[4] == 2);              /* persistent: 16-byte loads */
            CHECK(cfg[0] == 3 || (cfg[3] == 1 && cfg[4] == 1));
        }
        printf("    %s: %lld double configurations\n", fam->name, n64);
        CHECK(n64 >= 8 && n64 <= 60);
        if (fam != &tpl_jacobi)
            for (int s = 0; s < 5; s++)
                CHECK_MSG(styles[s] > 0, "%s: double STYLE %d unreachable", fam->name, s);
        /* TYPE takes no share of the default run's guided time: FP32 problems
         * keep theirs (7 parameters that vary, as before TYPE) */
        CHECK(tn_family_weight(fam) == 7.0);
        /* FP64 problems in the default run: few */
        int n_default64 = 0;
        for (int i = 0; i < fam->n_tuning_problems; i++)
            n_default64 += fam->tuning_problems[i].dtype == AT_R_64F;
        CHECK(n_default64 >= 1 && n_default64 <= 2);
    }
    /* tolerances: FP32's rule in units of the type's roundoff */
    tpl_problem p = TPL_PROBLEM(1, {1LL << 27});
    CHECK(tpl_sum.tolerance(&p) == 1e-5);
    p.dtype = AT_R_64F;
    CHECK(fabs(tpl_sum.tolerance(&p) - 1e-5 * ldexp(1.0, -29)) < 1e-30);
    CHECK(tpl_dot.tolerance(&p) == tpl_sum.tolerance(&p));
    double flops, bytes;
    tpl_sum.work(&p, &flops, &bytes);
    CHECK(bytes == 8.0 * (1LL << 27));
    tpl_dot.work(&p, &flops, &bytes);
    CHECK(bytes == 16.0 * (1LL << 27));
    p.dims[0] = 8192;
    CHECK(tpl_jacobi.tolerance(&p) < 1e-8);
}

/* Every argument check of at_dsum, at_ddot, at_djacobi (and the FP32 calls
 * that share them), reached without a GPU. */
TEST(dreduce_api_argument_checks)
{
    double d[4] = {0};
    CHECK_EQ(at_dsum(NULL, 1, d, d), AT_ERR_INVALID_ARG);
    CHECK_EQ(at_ddot(NULL, 1, d, d, d), AT_ERR_INVALID_ARG);
    int iters = 7;
    double resid = 7.0;
    CHECK_EQ(at_djacobi(NULL, 1, d, d, d, 1e-12, 10, &iters, &resid), AT_ERR_INVALID_ARG);
    CHECK(iters == 0 && resid == 0.0);

    char msg[256];
    int empty = -1;
    const char *odd = (const char *)d + 4;          /* 4-byte aligned, not 8 */
    /* reduce: n, NULL pointers, alignment, n = 0 */
    CHECK_EQ(ag_check_reduce("at_dsum", -1, d, NULL, 0, d, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "at_dsum") && strstr(msg, "negative"));
    CHECK_EQ(ag_check_reduce("at_dsum", 5, d, NULL, 0, NULL, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "NULL"));
    CHECK_EQ(ag_check_reduce("at_dsum", 5, NULL, NULL, 0, d, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_reduce("at_ddot", 5, d, NULL, 1, d, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_reduce("at_dsum", 5, d, NULL, 0, d, 8, &empty, msg, sizeof msg), AT_OK);
    CHECK_EQ(empty, 0);
    CHECK_EQ(ag_check_reduce("at_dsum", 5, odd, NULL, 0, d, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "aligned"));
    CHECK_EQ(ag_check_reduce("at_dsum", 5, d, NULL, 0, odd, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_reduce("at_ddot", 5, d, odd, 1, d, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_reduce("at_ddot", 5, d + 1, d + 3, 1, d + 2, 8, &empty, msg, sizeof msg),
             AT_OK);                                    /* any element offset */
    CHECK_EQ(ag_check_reduce("at_sdot", 5, odd, odd, 1, odd, 4, &empty, msg, sizeof msg),
             AT_OK);                                    /* floats: 4 bytes suffice */
    CHECK_EQ(ag_check_reduce("at_dsum", 0, NULL, NULL, 0, d, 8, &empty, msg, sizeof msg), AT_OK);
    CHECK_EQ(empty, 1);                                 /* nothing to read: stores 0 */
    CHECK_EQ(ag_check_reduce("at_dsum", 0, NULL, NULL, 0, NULL, 8, &empty, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    /* jacobi: n, NULL pointers, alignment, tol, max_iter */
    CHECK_EQ(ag_check_jacobi("at_djacobi", 0, d, d, d, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "at_djacobi") && strstr(msg, "positive"));
    CHECK_EQ(ag_check_jacobi("at_djacobi", -3, d, d, d, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, NULL, d, d, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, NULL, d, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, d, NULL, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, odd, d, d, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, odd, d, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, d, odd, 1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, d, d, -1e-12, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK(strstr(msg, "tol"));
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, d, d, NAN, 10, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, d, d, 1e-12, 0, 8, msg, sizeof msg),
             AT_ERR_INVALID_ARG);
    CHECK_EQ(ag_check_jacobi("at_djacobi", 2, d, d, d, 0.0, 1, 8, msg, sizeof msg), AT_OK);
    CHECK_EQ(ag_check_jacobi("at_sjacobi", 2, odd, odd, odd, 1e-6, 1, 4, msg, sizeof msg), AT_OK);
}

/* ---------------- GPU tier ---------------- */

/* s + e == a + b exactly. */
static void dr_two_sum(double a, double b, double *s, double *e)
{
    double t = a + b, bv = t - a;
    *e = (a - (t - bv)) + (b - bv);
    *s = t;
}

/* Compensated host sum or dot (TwoSum, TwoProduct by fma): the reference. */
static double dr_host_reduce(const double *x, const double *y, long long n)
{
    double hi = 0.0, lo = 0.0;
    for (long long i = 0; i < n; i++) {
        double v = x[i], e = 0.0, t;
        if (y) {
            v = x[i] * y[i];
            e = fma(x[i], y[i], -v);
        }
        dr_two_sum(hi, v, &hi, &t);
        lo += t + e;
    }
    return hi + lo;
}

/* n doubles in [0, 1) with all 53 bits random. */
static double *dr_random(long long n, unsigned long long seed)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    unsigned long long s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (long long i = 0; v && i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v[i] = (double)(s >> 11) * 0x1p-53;
    }
    return v;
}

/* at_dsum and at_ddot at n = 0, 1, 7, 2^20 + 3, from aligned and x + 1
 * (y + 1) pointers, default and deterministic mode, against a compensated
 * host sum with the family's double tolerance; the deterministic mode runs
 * a deterministic double configuration and repeats its result bit for bit. */
GPU_TEST(dreduce_gpu_api_sum_and_dot_odd_sizes)
{
    const long long big = (1LL << 20) + 3;
    at_status st;
    char why[512];
    ms_gpu *g = NULL;                       /* the primary context, current on this thread */
    CHECK_OK(ms_open(&g, th_device(), why, sizeof why));
    if (!g)
        return;
    const cudrv *cu = ms_driver(g);
    char db_path[4200];
    snprintf(db_path, sizeof db_path, "%s/dreduce-none.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), db_path));
    if (!h) {
        ms_close(g);
        return;
    }
    double *hx = dr_random(big + 2, 11), *hy = dr_random(big + 2, 12);
    CUdeviceptr dx = 0, dy = 0, dr = 0;
    CHECK(hx && hy && cu->MemAlloc(&dx, (size_t)(big + 2) * 8) == CUDA_SUCCESS &&
          cu->MemAlloc(&dy, (size_t)(big + 2) * 8) == CUDA_SUCCESS &&
          cu->MemAlloc(&dr, 64) == CUDA_SUCCESS &&
          cu->MemcpyHtoD(dx, hx, (size_t)(big + 2) * 8) == CUDA_SUCCESS &&
          cu->MemcpyHtoD(dy, hy, (size_t)(big + 2) * 8) == CUDA_SUCCESS);
    static const long long ns[] = {0, 1, 7, (1LL << 20) + 3};
    for (int det = 0; det < 2 && !th_failed(); det++) {
        CHECK_OK(at_set_deterministic(h, det));
        for (size_t k = 0; k < sizeof ns / sizeof ns[0] && !th_failed(); k++) {
            for (int off = 0; off < 2 && !th_failed(); off++) {
                long long n = ns[k];
                const double *x = (const double *)(uintptr_t)(dx + 8 * (CUdeviceptr)off);
                const double *y = (const double *)(uintptr_t)(dy + 8 * (CUdeviceptr)off);
                for (int dot = 0; dot < 2; dot++) {
                    double got = NAN, again = NAN;
                    CHECK(cu->MemsetD32Async(dr, 0x7fc00000u, 2, 0) == CUDA_SUCCESS);
                    st = dot ? at_ddot(h, n, x, y, (double *)(uintptr_t)dr)
                             : at_dsum(h, n, x, (double *)(uintptr_t)dr);
                    CHECK_MSG(st == AT_OK, "%s n=%lld off=%d: %s", dot ? "at_ddot" : "at_dsum",
                              n, off, at_errmsg(h));
                    CHECK(cu->MemcpyDtoH(&got, dr, 8) == CUDA_SUCCESS);
                    double ref = dr_host_reduce(hx + off, dot ? hy + off : NULL, n);
                    tpl_problem p = TPL_PROBLEM(1, {n});
                    p.dtype = AT_R_64F;
                    double tol = tpl_sum.tolerance(&p);
                    double err = ref == 0.0 ? fabs(got) : fabs(got - ref) / fabs(ref);
                    CHECK_MSG(err <= tol, "%s n=%lld off=%d det=%d: %.17g vs %.17g (error %.3g, "
                              "tolerance %.3g)", dot ? "dot" : "sum", n, off, det, got, ref, err,
                              tol);
                    at_stats stats;
                    CHECK_OK(at_get_stats(h, &stats));
                    if (n > 0)
                        CHECK_MSG(strstr(stats.last_config, "TYPE=1"), "ran %s",
                                  stats.last_config);
                    if (det && n > 0) {
                        int cfg[TPL_MAX_PARAMS];
                        char err2[256];
                        CHECK_OK(tpl_config_parse(&tpl_sum, stats.last_config, cfg, err2,
                                                  sizeof err2));
                        CHECK(tpl_sum.deterministic(cfg));
                        st = dot ? at_ddot(h, n, x, y, (double *)(uintptr_t)dr)
                                 : at_dsum(h, n, x, (double *)(uintptr_t)dr);
                        CHECK(st == AT_OK && cu->MemcpyDtoH(&again, dr, 8) == CUDA_SUCCESS);
                        CHECK_MSG(memcmp(&got, &again, 8) == 0, "not bit-identical: %.17g %.17g",
                                  got, again);
                    }
                }
            }
        }
    }
    /* a 4-byte offset is refused, nothing written */
    CHECK_EQ(at_dsum(h, 5, (const double *)(uintptr_t)(dx + 4), (double *)(uintptr_t)dr),
             AT_ERR_INVALID_ARG);
    cu->MemFree(dx);
    cu->MemFree(dy);
    cu->MemFree(dr);
    free(hx);
    free(hy);
    at_destroy(h);
    ms_close(g);
}

/* Every double configuration of the lattice (and the seeds' texts with
 * TYPE=1) through the tuner's path: the family's prepare (53-bit inputs,
 * compensated reference) at 2^20 + 3 and its check against the double
 * tolerance. */
GPU_TEST(dreduce_gpu_every_double_configuration_verifies)
{
    ms_gpu *g = NULL;
    char err[1024];
    CHECK_OK(ms_open(&g, th_device(), err, sizeof err));
    if (!g)
        return;
    const at_device_info *dev = ms_device(g);
    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    tpl_problem p = TPL_PROBLEM(1, {(1LL << 20) + 3});
    p.dtype = AT_R_64F;
    int checked = 0;
    for (int f = 0; f < 2 && !th_failed(); f++) {
        const tpl_family *fam = fams[f];
        CHECK_OK(ms_prepare(g, fam, &p, 5 + (unsigned)f, err, sizeof err));
        long long raw = tpl_space_size(fam);
        for (long long i = 0; i < raw && !th_failed(); i++) {
            int cfg[TPL_MAX_PARAMS];
            tpl_config_from_index(fam, i, cfg);
            if (cfg[dr_type_index(fam)] != 1 || !fam->valid(cfg, dev, NULL, 0) ||
                !fam->applicable(cfg, &p))
                continue;
            void *cubin = NULL;
            size_t size = 0;
            char *log = NULL;
            at_status s = tpl_compile(fam, cfg, dev->arch, &cubin, &size, &log);
            char text[TPL_CONFIG_LEN];
            tpl_config_format(fam, cfg, text, sizeof text);
            CHECK_MSG(s == AT_OK, "compile %s %s: %s", fam->name, text, log ? log : "");
            free(log);
            double e = -1;
            if (s == AT_OK)
                s = ms_verify(g, fam, cfg, cubin, size, &e, err, sizeof err);
            free(cubin);
            CHECK_MSG(s == AT_OK && e >= 0 && e <= fam->tolerance(&p), "%s %s: %s %s (%g)",
                      fam->name, text, at_status_string(s), err, e);
            checked++;
        }
    }
    printf("    %d double configurations verified at n = 2^20 + 3\n", checked);
    CHECK(checked >= 40);
    ms_close(g);
}

/* A well-conditioned but demanding system: A = off-diagonal U[0, 1), each
 * diagonal 1.05 x its row's off-diagonal sum (Jacobi contracts by ~1/1.05
 * per sweep, cond(A) ~ 40), b = U[0, 1). Solved to a relative update of
 * 1e-12: the double solve converges and matches a host elimination to
 * 1e-10; the FP32 solve of the same system (rounded) stalls near 1e-7 and
 * returns NOT_CONVERGED, far less accurate. */
GPU_TEST(dreduce_gpu_double_jacobi_converges_where_float_cannot)
{
    const int n = 1024, max_iter = 3000;
    const double tol = 1e-12;
    at_status st;
    char why[512];
    ms_gpu *g = NULL;                       /* the primary context, current on this thread */
    CHECK_OK(ms_open(&g, th_device(), why, sizeof why));
    if (!g)
        return;
    const cudrv *cu = ms_driver(g);
    size_t nn = (size_t)n * n;
    double *A = dr_random((long long)nn, 21), *b = dr_random(n, 22);
    double *LU = malloc(nn * sizeof *LU), *xh = malloc((size_t)n * sizeof *xh);
    double *x64 = calloc((size_t)n, sizeof *x64);
    float *A32 = malloc(nn * sizeof *A32), *b32 = malloc((size_t)n * 4);
    float *x32 = calloc((size_t)n, sizeof *x32);
    CHECK(A && b && LU && xh && x64 && A32 && b32 && x32);
    if (th_failed()) {
        ms_close(g);
        return;
    }
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++)
            s += j == i ? 0.0 : A[(size_t)i * n + j];
        A[(size_t)i * n + i] = 1.05 * s;
    }
    for (size_t k = 0; k < nn; k++)
        A32[k] = (float)A[k];
    for (int i = 0; i < n; i++)
        b32[i] = (float)b[i];
    /* host solve: Gaussian elimination without pivoting (A is strictly
     * diagonally dominant by rows, so no pivot shrinks), in double */
    memcpy(LU, A, nn * sizeof *LU);
    memcpy(xh, b, (size_t)n * sizeof *xh);
    for (int k = 0; k < n; k++) {
        for (int i = k + 1; i < n; i++) {
            double l = LU[(size_t)i * n + k] / LU[(size_t)k * n + k];
            for (int j = k + 1; j < n; j++)
                LU[(size_t)i * n + j] -= l * LU[(size_t)k * n + j];
            xh[i] -= l * xh[k];
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = xh[i];
        for (int j = i + 1; j < n; j++)
            s -= LU[(size_t)i * n + j] * xh[j];
        xh[i] = s / LU[(size_t)i * n + i];
    }
    char db_path[4200];
    snprintf(db_path, sizeof db_path, "%s/djacobi-none.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), db_path));
    CUdeviceptr dA = 0, db = 0, dx = 0;
    CHECK(h && cu->MemAlloc(&dA, nn * 8) == CUDA_SUCCESS &&
          cu->MemAlloc(&db, (size_t)n * 8) == CUDA_SUCCESS &&
          cu->MemAlloc(&dx, (size_t)n * 8) == CUDA_SUCCESS);
    if (!th_failed()) {
        /* double */
        int it64 = 0;
        double r64 = -1;
        CHECK(cu->MemcpyHtoD(dA, A, nn * 8) == CUDA_SUCCESS &&
              cu->MemcpyHtoD(db, b, (size_t)n * 8) == CUDA_SUCCESS &&
              cu->MemsetD32Async(dx, 0, 2 * (size_t)n, 0) == CUDA_SUCCESS);
        st = at_djacobi(h, n, (const double *)(uintptr_t)dA, (const double *)(uintptr_t)db,
                        (double *)(uintptr_t)dx, tol, max_iter, &it64, &r64);
        CHECK_MSG(st == AT_OK, "at_djacobi: %s: %s", at_status_string(st), at_errmsg(h));
        CHECK(cu->MemcpyDtoH(x64, dx, (size_t)n * 8) == CUDA_SUCCESS);
        /* float, the same system rounded */
        int it32 = 0;
        float r32 = -1;
        CHECK(cu->MemcpyHtoD(dA, A32, nn * 4) == CUDA_SUCCESS &&
              cu->MemcpyHtoD(db, b32, (size_t)n * 4) == CUDA_SUCCESS &&
              cu->MemsetD32Async(dx, 0, (size_t)n, 0) == CUDA_SUCCESS);
        at_status st32 = at_sjacobi(h, n, (const float *)(uintptr_t)dA,
                                    (const float *)(uintptr_t)db, (float *)(uintptr_t)dx,
                                    (float)tol, max_iter, &it32, &r32);
        CHECK(cu->MemcpyDtoH(x32, dx, (size_t)n * 4) == CUDA_SUCCESS);
        double e64 = 0, e32 = 0, xmax = 0;
        for (int i = 0; i < n; i++) {
            e64 = fmax(e64, fabs(x64[i] - xh[i]));
            e32 = fmax(e32, fabs((double)x32[i] - xh[i]));
            xmax = fmax(xmax, fabs(xh[i]));
        }
        e64 /= xmax;
        e32 /= xmax;
        printf("    n = %d: double %d sweeps, relative update %.3g, error vs host %.3g; float %s "
               "after %d sweeps, relative update %.3g, error %.3g\n", n, it64, r64, e64,
               at_status_string(st32), it32, (double)r32, e32);
        CHECK(it64 > 0 && it64 < max_iter && r64 <= tol);
        CHECK_MSG(e64 <= 1e-10, "double solution off the host solve by %.3g", e64);
        CHECK_MSG(st32 == AT_ERR_NOT_CONVERGED && it32 == max_iter && r32 > 1e-9,
                  "float: %s after %d sweeps at %.3g", at_status_string(st32), it32, (double)r32);
        CHECK_MSG(e32 > 100 * e64, "float error %.3g not far above double's %.3g", e32, e64);
    }
    if (dA)
        cu->MemFree(dA);
    if (db)
        cu->MemFree(db);
    if (dx)
        cu->MemFree(dx);
    at_destroy(h);
    free(A);
    free(b);
    free(LU);
    free(xh);
    free(x64);
    free(A32);
    free(b32);
    free(x32);
    ms_close(g);
}
