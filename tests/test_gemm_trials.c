/* test_gemm_trials.c: the runtime's trials through at_gemm on the GPU: the vendor candidate
 * (timed on the calls, or decided by stored measurements) and the other families' built-in
 * choices on a shape no database knows; every call's result against a float64 host
 * reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "db.h"
#include "harness.h"
#include "th_gemm.h"
#include "tpl.h"

/* The vendor candidate (at_set_vendor) on a fresh shape: its trial times our kernel and
 * cuBLAS on the calls themselves, every call's result is right whichever ran, the stats say
 * which one serves afterwards, and with the candidate off cuBLAS never runs. The large-tile
 * family alone ($AUTOTUNE_GEMM_FAMILY=main): no other family's built-in choice joins the
 * trial (gemm_api_builtin_trial_across_families tests those). */
GPU_TEST(gemm_api_vendor_candidate_trial_and_stats)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    setenv("AUTOTUNE_GEMM_FAMILY", "main", 1);
    char path[4300];
    snprintf(path, sizeof path, "%s/gemm_vendor.db", th_tmpdir());
    remove(path);
    for (int mode = 0; mode < 2; mode++) {
        at_handle *h = NULL;
        CHECK_OK(at_create(&h, th_device(), path));
        CHECK_OK(at_set_vendor(h, mode ? AT_VENDOR_ON : AT_VENDOR_OFF));
        CHECK(at_set_vendor(h, 7) == AT_ERR_INVALID_ARG);
        th_gemm_case c;
        memset(&c, 0, sizeof c);
        c.type = AT_R_16BF;
        c.order = AT_COL_MAJOR;
        c.op_a = AT_OP_T;
        c.m = 300;
        c.n = 260;
        c.k = 1000;
        c.lda = c.k;
        c.ldb = c.k;
        c.ldc = c.m;
        c.alpha = 1.0;
        /* 2 candidates x 3 rounds settle the trial; then 3 calls by the winner */
        for (int call = 0; call < 9 && !th_failed(); call++) {
            double err = 0;
            int padding_ok = 0;
            at_status s = th_gemm_run(&g, h, &c, &err, &padding_ok);
            CHECK_MSG(s == AT_OK && err <= th_gemm_tolerance(c.type, c.k) && padding_ok,
                      "mode %d call %d: %s %s, error %.3g", mode, call, at_status_string(s),
                      at_errmsg(h), err);
        }
        at_stats st;
        CHECK_OK(at_get_stats(h, &st));
        if (!mode) {
            CHECK_EQ(st.vendor_calls, 0);
            CHECK_EQ(st.trials, 0);
            CHECK_EQ(st.last_vendor, 0);
        } else {
            CHECK_EQ(st.trials, 1);
            CHECK(st.vendor_calls >= 3);            /* its 3 trial calls at least */
            CHECK_EQ(st.last_vendor, st.vendor_plans);
            CHECK_EQ(st.last_vendor, strncmp(st.last_config, "vendor: ", 8) == 0);
            CHECK_EQ(st.vendor_calls, 3 + 3 * st.last_vendor);
        }
        CHECK_OK(at_destroy(h));
    }
    unsetenv("AUTOTUNE_GEMM_FAMILY");
    th_gemm_end(&g);
}

/* A shape no database knows, computed by several families (FP32 200 x 300 x 100 and FP64
 * 804 x 28 x 32: the large-tile family and skinny): its plan starts from the shape-class rule's
 * built-in choice, and its first calls also time the other families' built-in choices (each
 * compiled once: more than one compile in a fresh database); every call's result is right
 * whichever ran; after at most AT_TRIALS_DEFAULT x 3 calls the trial is settled, and the next
 * handle serves the kept family's choice at the exact level, compiling nothing. With
 * $AUTOTUNE_GEMM_FAMILY set, or in deterministic mode, no other family joins. Which family
 * wins is the GPU's business, not the test's. */
GPU_TEST(gemm_api_builtin_trial_across_families)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    static const struct {
        at_dtype type;
        int m, n, k;
    } shapes[] = {{AT_R_32F, 200, 300, 100}, {AT_R_64F, 804, 28, 32}};
    for (int sh = 0; sh < 2 && !th_failed(); sh++) {
        th_gemm_case c;
        memset(&c, 0, sizeof c);
        c.type = shapes[sh].type;
        c.m = shapes[sh].m;
        c.n = shapes[sh].n;
        c.k = shapes[sh].k;
        c.lda = c.k;
        c.ldb = c.n;
        c.ldc = c.n;
        c.alpha = 1.0;
        c.beta = 0.5;
        for (int mode = 0; mode < 3 && !th_failed(); mode++) {
            /* 0: trials across families; 1: $AUTOTUNE_GEMM_FAMILY; 2: deterministic */
            char path[4300];
            snprintf(path, sizeof path, "%s/gemm_families_%d_%d.db", th_tmpdir(), sh, mode);
            remove(path);
            if (mode == 1)
                setenv("AUTOTUNE_GEMM_FAMILY", "main", 1);
            at_handle *h = NULL;
            CHECK_OK(at_create(&h, th_device(), path));
            if (mode == 2)
                CHECK_OK(at_set_deterministic(h, 1));
            for (int call = 0; call < 3 * AT_TRIALS_DEFAULT && !th_failed(); call++) {
                double err = 0;
                int padding_ok = 0;
                at_status s = th_gemm_run(&g, h, &c, &err, &padding_ok);
                CHECK_MSG(s == AT_OK && err <= th_gemm_tolerance(c.type, c.k) && padding_ok,
                          "shape %d mode %d call %d: %s %s, error %.3g", sh, mode, call,
                          at_status_string(s), at_errmsg(h), err);
            }
            at_stats st;
            CHECK_OK(at_get_stats(h, &st));
            CHECK_EQ(st.last_level, AT_LOOKUP_DEFAULT);
            if (mode == 0) {
                CHECK_MSG(st.trials == 1 && st.compiled >= 2, "shape %d: %d trials, %d compiled",
                          sh, st.trials, st.compiled);
            } else {
                CHECK_MSG(st.trials == 0 && st.compiled == 1, "shape %d mode %d: %d trials, %d "
                          "compiled", sh, mode, st.trials, st.compiled);
            }
            char kept[32];
            snprintf(kept, sizeof kept, "%s", st.last_kernel);
            CHECK_OK(at_destroy(h));
            unsetenv("AUTOTUNE_GEMM_FAMILY");
            if (mode != 0)
                continue;
            /* the next handle: the kept family's choice at the exact level, no compile */
            CHECK_OK(at_create(&h, th_device(), path));
            double err = 0;
            int padding_ok = 0;
            CHECK_OK(th_gemm_run(&g, h, &c, &err, &padding_ok));
            CHECK(err <= th_gemm_tolerance(c.type, c.k) && padding_ok);
            CHECK_OK(at_get_stats(h, &st));
            CHECK_MSG(st.last_level == AT_LOOKUP_EXACT && strcmp(st.last_kernel, kept) == 0 &&
                          st.compiled == 0 && st.trials == 0,
                      "shape %d: level %d %s (kept %s), %d compiled", sh, (int)st.last_level,
                      st.last_kernel, kept, st.compiled);
            CHECK_OK(at_destroy(h));
        }
    }
    th_gemm_end(&g);
}

/* A shape tuned on this device decides with the stored times, without a trial: a stored
 * cuBLAS measurement more than AT_VENDOR_MARGIN faster than our stored best makes cuBLAS
 * serve it, a slower one leaves our kernel. */
GPU_TEST(gemm_api_vendor_candidate_from_stored_measurements)
{
    th_gemm_gpu g;
    CHECK(th_gemm_begin(&g));
    at_device_info info;
    char msg[512], path[4300], err[512];
    CHECK_OK(cudrv_device_info(g.cu, th_device(), &info, msg, sizeof msg));
    extern const tpl_family tpl_tcgemm;
    /* faster 0: cuBLAS within the margin; 1: cuBLAS faster; 2: both under
     * AT_VENDOR_STORED_MIN_MS, so the stored times do not decide and the first calls time both */
    for (int faster = 0; faster < 3; faster++) {
        snprintf(path, sizeof path, "%s/gemm_vendor_stored_%d.db", th_tmpdir(), faster);
        remove(path);
        /* the canonical (row-major) problem of a row-major NN 192 x 320 x 512 BF16 call */
        tpl_problem p = {.n_dims = 3, .dims = {192, 320, 512}, .dtype = AT_R_16BF};
        db *d = NULL;
        CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
        CHECK_OK(db_put_device(d, &info, tpl_nvrtc_version()));
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        CHECK(tpl_builtin_config(&tpl_tcgemm, &info, &p, 0, cfg, config, NULL));
        db_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", info.uuid);
        snprintf(r.kernel, sizeof r.kernel, "tcgemm");
        snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(&tpl_tcgemm));
        r.problem = p;
        snprintf(r.config, sizeof r.config, "%s", config);
        snprintf(r.status, sizeof r.status, "%s", DB_OK);
        r.time_ms = faster == 2 ? 0.5 * AT_VENDOR_STORED_MIN_MS : 1.0;
        r.rel_error = 1e-3;
        tpl_binary_key(&tpl_tcgemm, cfg, info.arch, r.binary_key, sizeof r.binary_key);
        CHECK_OK(db_store_result(d, &r));
        db_measurement m;
        memset(&m, 0, sizeof m);
        snprintf(m.device_uuid, sizeof m.device_uuid, "%s", info.uuid);
        snprintf(m.kernel, sizeof m.kernel, "tcgemm");
        snprintf(m.name, sizeof m.name, "cublas");
        m.problem = p;
        m.time_ms = faster == 2 ? 0.1 * AT_VENDOR_STORED_MIN_MS
                    : faster      ? 0.5 : 0.99;     /* 0.99: within the margin, ours stays */
        m.rel_error = -1;
        CHECK_OK(db_put_measurement(d, &m));
        db_close(d);
        at_handle *h = NULL;
        CHECK_OK(at_create(&h, th_device(), path));
        CHECK_OK(at_set_vendor(h, AT_VENDOR_ON));
        th_gemm_case c;
        memset(&c, 0, sizeof c);
        c.type = AT_R_16BF;
        c.m = 192;
        c.n = 320;
        c.k = 512;
        c.lda = 512;
        c.ldb = 320;
        c.ldc = 320;
        c.alpha = 1.0;
        double e = 0;
        int padding_ok = 0;
        at_status s = th_gemm_run(&g, h, &c, &e, &padding_ok);
        CHECK_MSG(s == AT_OK && e <= th_gemm_tolerance(c.type, c.k) && padding_ok, "%s %s %.3g",
                  at_status_string(s), at_errmsg(h), e);
        at_stats st;
        CHECK_OK(at_get_stats(h, &st));
        CHECK_EQ(st.last_level, AT_LOOKUP_EXACT);
        CHECK_EQ(st.trials, 0);
        if (faster == 2) {
            /* a trial of ours against cuBLAS: it finishes within a few more calls */
            CHECK_EQ(st.vendor_plans, 0);
            for (int call = 0; call < 3 * AT_TRIALS_MAX && st.trials == 0; call++) {
                s = th_gemm_run(&g, h, &c, &e, &padding_ok);
                CHECK_MSG(s == AT_OK && e <= th_gemm_tolerance(c.type, c.k), "%s %.3g",
                          at_status_string(s), e);
                CHECK_OK(at_get_stats(h, &st));
            }
            CHECK_EQ(st.trials, 1);
            CHECK(st.vendor_calls >= 1);
        } else {
            CHECK_EQ(st.last_vendor, faster);
            CHECK_EQ(st.vendor_calls, faster);
        }
        CHECK_OK(at_destroy(h));
    }
    th_gemm_end(&g);
}
