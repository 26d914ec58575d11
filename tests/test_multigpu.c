/* test_multigpu.c: CPU-tier tests of tuning several GPUs at once with the
 * fake worker posing as GPUs of one or two models, and of the model lookup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "th_sql.h"

/* The fake worker's time formula, written again here (FNV-1a 64). */
static double mg_fake_time(const char *config)
{
    unsigned long long h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)config; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return 0.5 + (double)(h % 10000u) / 1000.0;
}

/* Runs autotune-test with the fake worker posing as `devices` (and the
 * directives `fake`) on `args`; returns the exit status and the output. */
static int mg_run(const char *devices, const char *fake, const char *args, char **out)
{
    char cmd[40000];
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES='%s' "
             "AUTOTUNE_FAKE='%s' %s/autotune-test %s --quiet --jobs 2",
             th_build_dir(), devices, fake, th_build_dir(), args);
    return th_run(cmd, out);
}

/* Every result row of kernel (malloc'd; the count, -1 if unreadable). */
static int mg_rows(const char *dbpath, const char *kernel, db_result **rows)
{
    db *d = NULL;
    char err[256];
    *rows = NULL;
    if (db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err) != AT_OK)
        return -1;
    int n = -1;
    if (db_results(d, NULL, kernel, rows, &n) != AT_OK)
        n = -1;
    db_close(d);
    return n;
}

/* The fake device UUID of ordinal (tuner/fake_worker.c). */
static void mg_uuid(int ordinal, char *out, size_t len)
{
    snprintf(out, len, "GPU-fa4e0000-0000-0000-0000-00000000000%d", ordinal % 10);
}

/* Checks kernel's rows at size n: `want` distinct configurations, none
 * measured twice (on one GPU or on two), each GPU of `gpus` (a mask) took
 * at least one and no other GPU any; *best gets the fastest ok row's
 * configuration. */
static void mg_check_split(const db_result *r, int nr, long long n, int want, unsigned gpus,
                           char *best, size_t blen)
{
    int count = 0, per[10] = {0};
    double best_ms = 1e30;
    for (int i = 0; i < nr; i++) {
        if (r[i].problem.dims[0] != n)
            continue;
        count++;
        for (int j = 0; j < i; j++)
            CHECK_MSG(r[j].problem.dims[0] != n || strcmp(r[j].config, r[i].config) != 0,
                      "%s measured twice (on %s and %s)", r[i].config, r[j].device_uuid,
                      r[i].device_uuid);
        int dev = r[i].device_uuid[strlen(r[i].device_uuid) - 1] - '0';
        CHECK_MSG(dev >= 0 && dev < 10 && (gpus >> dev & 1), "a result on %s",
                  r[i].device_uuid);
        per[dev]++;
        if (strcmp(r[i].status, DB_OK) == 0 && r[i].time_ms < best_ms) {
            best_ms = r[i].time_ms;
            snprintf(best, blen, "%s", r[i].config);
        }
    }
    CHECK_MSG(count == want, "size %lld: %d results, expected %d", n, count, want);
    for (int dev = 0; dev < 10; dev++)
        CHECK_MSG(!(gpus >> dev & 1) || per[dev] > 0, "size %lld: GPU %d took none", n, dev);
}

/* test_oob's valid configurations (its documented rule) and the fastest of
 * them by the fake's formula. */
static void mg_oob_fastest(char *out, size_t len)
{
    static const int blocks[] = {64, 128, 256, 512}, items[] = {1, 2, 4};
    double best = 1e30;
    char cfg[64];
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < 4; i++) {
            if (i == 3)
                snprintf(cfg, sizeof cfg, "BLOCK=128,ITEMS=1,BAD=1");
            else
                snprintf(cfg, sizeof cfg, "BLOCK=%d,ITEMS=%d,BAD=0", blocks[b], items[i]);
            if (mg_fake_time(cfg) < best) {
                best = mg_fake_time(cfg);
                snprintf(out, len, "%s", cfg);
            }
        }
}

TEST(multigpu_one_model_splits_each_search)
{
    char db2[4300], db1[4300], args[9000], *out = NULL;
    snprintf(db2, sizeof db2, "%s/two.db", th_tmpdir());
    snprintf(db1, sizeof db1, "%s/one.db", th_tmpdir());
    snprintf(args, sizeof args, "--device all --kernel test_oob,test_wide --db %s --seed 5",
             db2);
    int rc = mg_run("2", "delay=10", args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "GPU 0,1 (Fake GPU (autotune tests)): one model") &&
              strstr(out, "done: ") && strstr(out, "on 2 GPUs (0 worker restarts)") &&
              !strstr(out, "retried"), "%s", out);
    free(out);
    /* the same on one GPU */
    snprintf(args, sizeof args, "--device 0 --kernel test_oob,test_wide --db %s --seed 5", db1);
    rc = mg_run("2", "", args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);

    db_result *r2 = NULL, *r1 = NULL;
    int n2 = mg_rows(db2, "test_oob", &r2), n1 = mg_rows(db1, "test_oob", &r1);
    char best2[TPL_CONFIG_LEN] = "", best1[TPL_CONFIG_LEN] = "", want[64] = "";
    mg_check_split(r2, n2, 1000003, 13, 3u, best2, sizeof best2);
    mg_check_split(r1, n1, 1000003, 13, 1u, best1, sizeof best1);
    mg_oob_fastest(want, sizeof want);
    CHECK_STR(best2, want);
    CHECK_STR(best1, want);
    free(r2);
    free(r1);
    n2 = mg_rows(db2, "test_wide", &r2);
    n1 = mg_rows(db1, "test_wide", &r1);
    for (int s = 0; s < 2 && !th_failed(); s++) {
        long long n = s ? 250007 : 1000003;
        mg_check_split(r2, n2, n, 96, 3u, best2, sizeof best2);
        mg_check_split(r1, n1, n, 96, 1u, best1, sizeof best1);
        CHECK_STR(best2, best1);
    }
    free(r2);
    free(r1);
}

TEST(multigpu_two_models_each_tuned_fully)
{
    char dbpath[4300], args[9000], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/models.db", th_tmpdir());
    snprintf(args, sizeof args, "--device all --kernel test_oob --db %s --seed 5", dbpath);
    int rc = mg_run("x,x,y", "delay=10", args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "GPU 0,1 (Fake GPU x (autotune tests)): one model") &&
              strstr(out, "GPU 2 (Fake GPU y (autotune tests)): tuned on its own"), "%s", out);
    free(out);
    db_result *r = NULL;
    int n = mg_rows(dbpath, "test_oob", &r);
    CHECK(n == 26 && r);
    /* model x's 13 split between GPUs 0 and 1, model y's 13 all on GPU 2 */
    db_result *x = calloc(26, sizeof *x), *y = calloc(26, sizeof *y);
    int nx = 0, ny = 0;
    char uuid2[64], bx[TPL_CONFIG_LEN], by[TPL_CONFIG_LEN], want[64];
    mg_uuid(2, uuid2, sizeof uuid2);
    for (int i = 0; i < n; i++) {
        if (strcmp(r[i].device_uuid, uuid2) == 0)
            y[ny++] = r[i];
        else
            x[nx++] = r[i];
    }
    mg_check_split(x, nx, 1000003, 13, 3u, bx, sizeof bx);
    mg_check_split(y, ny, 1000003, 13, 4u, by, sizeof by);
    mg_oob_fastest(want, sizeof want);
    CHECK_STR(bx, want);
    CHECK_STR(by, want);
    free(x);
    free(y);
    free(r);
}

TEST(multigpu_sigint_then_resume_loses_and_repeats_nothing)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/int.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES=2 "
             "AUTOTUNE_FAKE='delay=200' %s/autotune-test --device all --kernel test_wide "
             "--db %s --seed 9 --quiet --jobs 2 > %s.log 2>&1 & pid=$!; sleep 3; "
             "kill -INT $pid; wait $pid; echo \"rc=$?\"; cat %s.log",
             th_build_dir(), th_build_dir(), dbpath, dbpath, dbpath);
    th_run(cmd, &out);
    CHECK_MSG(out && strstr(out, "rc=130") && strstr(out, "rerun the same command to resume"),
              "%s", out ? out : "");
    free(out);
    db_result *r = NULL;
    int stored = mg_rows(dbpath, "test_wide", &r);
    free(r);
    CHECK_MSG(stored >= 2 && stored < 96, "stored %d", stored);
    char args[9000];
    snprintf(args, sizeof args, "--device all --kernel test_wide --db %s --seed 9", dbpath);
    int rc = mg_run("2", "", args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    char want[128];
    snprintf(want, sizeof want, "test_wide 1000003: %d evaluated (+%d stored before)",
             96 - stored, stored);
    CHECK_MSG(strstr(out, want) != NULL, "want '%s' in %s", want, out);
    free(out);
    int n = mg_rows(dbpath, "test_wide", &r);
    char best[TPL_CONFIG_LEN];
    mg_check_split(r, n, 1000003, 96, 3u, best, sizeof best);
    mg_check_split(r, n, 250007, 96, 3u, best, sizeof best);
    free(r);
}

TEST(multigpu_dead_worker_on_one_gpu_the_other_goes_on)
{
    char dbpath[4300], args[9000], *out = NULL;
    /* GPU 1's worker dies at the 4th timing of each: restarted, the run completes */
    snprintf(dbpath, sizeof dbpath, "%s/die.db", th_tmpdir());
    snprintf(args, sizeof args, "--device 0,1 --kernel test_wide --db %s --seed 5", dbpath);
    int rc = mg_run("2", "delay=10;die@1=time:4", args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "GPU 0: ") && strstr(out, ", 0 worker restarts\n") &&
              !strstr(out, "GPU 1: 0 results"), "%s", out);
    /* GPU 1's summary line ("GPU 1: N results stored, M worker restarts")
     * says it was restarted */
    char g1[256] = "";
    for (const char *at = strstr(out, "\nGPU 1: "); at && !g1[0]; at = strstr(at + 1, "\nGPU 1: ")) {
        int len = (int)strcspn(at + 1, "\n");
        const char *stored = strstr(at, " results stored, ");
        if (stored && stored < at + 1 + len)
            snprintf(g1, sizeof g1, "%.*s", len, at + 1);
    }
    CHECK_MSG(g1[0] && !strstr(g1, " 0 worker restarts"), "%s", out);
    free(out);
    db_result *r = NULL;
    int n = mg_rows(dbpath, "test_wide", &r);
    char best[TPL_CONFIG_LEN];
    mg_check_split(r, n, 1000003, 96, 3u, best, sizeof best);
    mg_check_split(r, n, 250007, 96, 3u, best, sizeof best);
    for (int i = 0; i < n; i++)
        CHECK_MSG(strcmp(r[i].status, DB_OK) == 0 || strcmp(r[i].status, DB_ABANDONED) == 0,
                  "%s: %s (%s)", r[i].config, r[i].status, r[i].error);
    free(r);

    /* GPU 1's worker dies preparing every problem: skipped there, GPU 0
     * searches everything, the run says so (exit 1) */
    snprintf(dbpath, sizeof dbpath, "%s/die2.db", th_tmpdir());
    snprintf(args, sizeof args, "--device all --kernel test_wide --db %s --seed 5", dbpath);
    rc = mg_run("2", "die@1=prepare:1", args, &out);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "GPU 1: test_wide 1000003 skipped on this GPU") &&
              strstr(out, "the other GPUs go on"), "%s", out);
    free(out);
    n = mg_rows(dbpath, "test_wide", &r);
    mg_check_split(r, n, 1000003, 96, 1u, best, sizeof best);
    mg_check_split(r, n, 250007, 96, 1u, best, sizeof best);
    free(r);
}

TEST(multigpu_gpu_whose_worker_cannot_start_stops_alone)
{
    char dbpath[4300], fake[9000], args[9000], *out = NULL;
    for (int when = 0; when < 2 && !th_failed(); when++) {
        /* GPU 1's worker dies measuring the copy bandwidth (before the
         * search) or at its 3rd timing, and every new one dies opening */
        snprintf(dbpath, sizeof dbpath, "%s/gone%d.db", th_tmpdir(), when);
        snprintf(fake, sizeof fake, "state=%s/state%d;delay=10;die@1=%s;die@1=open:2;"
                 "die@1=open:3", th_tmpdir(), when, when ? "time:3" : "ceiling:1");
        snprintf(args, sizeof args, "--device all --kernel test_oob --db %s --seed 5", dbpath);
        int rc = mg_run("2", fake, args, &out);
        CHECK_MSG(rc == 1 && strstr(out, "autotune: GPU 1: the worker cannot start") &&
                  strstr(out, "GPU 1: ") && strstr(out, ", stopped (below)"),
                  "exit %d: %s", rc, out ? out : "");
        free(out);
        db_result *r = NULL;
        int n = mg_rows(dbpath, "test_oob", &r);
        char best[TPL_CONFIG_LEN], want[64];
        mg_check_split(r, n, 1000003, 13, when ? 3u : 1u, best, sizeof best);
        mg_oob_fastest(want, sizeof want);
        CHECK_STR(best, want);
        free(r);
    }
}

/* Expects exit status rc and `what` in the output of autotune-test ARGS
 * with the fake posing as two GPUs. */
static void mg_expect(const char *args, int want_rc, const char *what)
{
    char full[9000], *out = NULL;
    snprintf(full, sizeof full, "%s --kernel test_oob --db %s/bad.db", args, th_tmpdir());
    int rc = mg_run("2", "", full, &out);
    if (rc != want_rc || !out || !strstr(out, what))
        th_fail(__FILE__, __LINE__, "autotune %s: exit %d, output: %s", args, rc,
                out ? out : "(none)");
    free(out);
}

TEST(multigpu_bad_device_lists_are_clear_errors)
{
    mg_expect("--device 0,0", 2, "--device lists GPU 0 twice");
    mg_expect("--device 1,0,1", 2, "--device lists GPU 1 twice");
    mg_expect("--device x", 2, "--device needs a device number, 'all' or a list");
    mg_expect("--device 0,", 2, "not '0,'");
    mg_expect("--device ,1", 2, "not ',1'");
    mg_expect("--device -1", 2, "not '-1'");
    mg_expect("--device 7", 1, "no device 7 (this machine has 2)");
    mg_expect("--device 0,7", 1, "--device lists GPU 7, but this machine has 2 (0-1)");
    /* nothing was tuned */
    db_result *r = NULL;
    char path[4300];
    snprintf(path, sizeof path, "%s/bad.db", th_tmpdir());
    int n = mg_rows(path, "test_oob", &r);
    free(r);
    CHECK(n <= 0);
}

/* ---- the lookup: GPUs of one model are one ---- */

static int mg_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    (void)cfg;
    (void)dev;
    (void)why;
    (void)len;
    return 1;
}

static const tpl_family mg_family = {
    .name = "mg_lookup", .source = "reference.cu", .fixed_options = "",
    .n_dims = 1, .dim_names = {"n"},
    .n_params = 1, .params = {{"A", 4, {1, 2, 3, 4}, "fake"}},
    .valid = mg_valid, .default_config = "A=1",
};

static at_device_info mg_device(const char *uuid, const char *name, long long mem)
{
    at_device_info info;
    memset(&info, 0, sizeof info);
    snprintf(info.uuid, sizeof info.uuid, "%s", uuid);
    snprintf(info.name, sizeof info.name, "%s", name);
    info.cc_major = 9;
    info.memory_bytes = mem;
    tpl_arch_name(9, 0, info.arch, sizeof info.arch);
    return info;
}

static at_status mg_put(db *d, const char *uuid, long long n, const char *config, double ms)
{
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", uuid);
    snprintf(r.kernel, sizeof r.kernel, "mg_lookup");
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(&mg_family));
    r.problem.n_dims = 1;
    r.problem.dims[0] = n;
    snprintf(r.config, sizeof r.config, "%s", config);
    snprintf(r.status, sizeof r.status, DB_OK);
    r.time_ms = r.time_min_ms = r.time_max_ms = ms;
    r.runs = 5;
    return db_store_result(d, &r);
}

TEST(multigpu_lookup_serves_a_model_as_one)
{
    char path[4300], err[512];
    snprintf(path, sizeof path, "%s/model.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_CREATE, err, sizeof err));
    at_device_info a = mg_device("GPU-a", "H", 80ll << 30), b = mg_device("GPU-b", "H", 80ll << 30),
                   c = mg_device("GPU-c", "H", 96ll << 30), e = mg_device("GPU-e", "H", 80ll << 30);
    CHECK_OK(db_put_device(d, &a, "13.0"));
    CHECK_OK(db_put_device(d, &b, "13.0"));
    CHECK_OK(db_put_device(d, &c, "13.0"));
    /* 1024: measured on b only; 4096: a's slower A=2, b's faster A=3, and
     * c (another model: more memory) faster still */
    CHECK_OK(mg_put(d, "GPU-b", 1024, "A=4", 1.0));
    CHECK_OK(mg_put(d, "GPU-b", 1024, "A=2", 2.0));
    CHECK_OK(mg_put(d, "GPU-a", 4096, "A=2", 3.0));
    CHECK_OK(mg_put(d, "GPU-b", 4096, "A=3", 2.5));
    CHECK_OK(mg_put(d, "GPU-c", 4096, "A=4", 0.5));
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    tpl_problem p = TPL_PROBLEM(1, {1024, 0, 0});
    CHECK_EQ(lk_choose(d, &a, &mg_family, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=4");
    CHECK_EQ(cfg[0], 4);
    /* a GPU of the model never recorded (e, a new one) is served the same */
    CHECK_EQ(lk_choose(d, &e, &mg_family, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=4");
    /* another model (more memory): never exact from a and b; its own
     * nearest size serves it */
    CHECK_EQ(lk_choose(d, &c, &mg_family, &p, 0, cfg, config), AT_LOOKUP_NEAREST);
    CHECK_STR(config, "A=4");
    p.dims[0] = 2048;
    CHECK_EQ(lk_choose(d, &a, &mg_family, &p, 0, cfg, config), AT_LOOKUP_NEAREST);
    p.dims[0] = 1024;
    /* c's model, never tuned: c's winners are its model's, served as its own */
    at_device_info f = mg_device("GPU-f", "H", 96ll << 30);
    CHECK_EQ(lk_choose(d, &f, &mg_family, &p, 0, cfg, config), AT_LOOKUP_NEAREST);
    CHECK_STR(config, "A=4");
    /* a GPU of a model never recorded: the architecture's winners */
    at_device_info g = mg_device("GPU-g", "H", 40ll << 30);
    CHECK_EQ(lk_choose(d, &g, &mg_family, &p, 0, cfg, config), AT_LOOKUP_ARCH);
    p.dims[0] = 4096;
    CHECK_EQ(lk_choose(d, &a, &mg_family, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=3");
    CHECK_EQ(lk_choose(d, &b, &mg_family, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=3");
    CHECK_EQ(lk_choose(d, &c, &mg_family, &p, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=4");
    db_close(d);
}

/* ---- the real worker: --device all on every GPU of this machine ---- */

GPU_TEST(multigpu_gpu_device_all_real_workers)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/all.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "env -u AUTOTUNE_WORKER -u AUTOTUNE_FAKE -u AUTOTUNE_FAKE_DEVICES "
             "%s/autotune-test --device all --kernel test_oob,test_hang --db %s --seed 1 "
             "--quiet", th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    printf("    %s", out ? out : "");
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    /* the run's summary ("on N GPUs" only where this machine has several: one GPU is a
     * group of one) */
    CHECK_MSG(strstr(out, "done: ") && strstr(out, " worker restarts"), "%s", out);
    free(out);
    /* each configuration once over the GPUs: the out-of-bounds one crashed
     * (its worker restarted), the spinning one timed out, the rest passed */
    db_result *r = NULL;
    int n = mg_rows(dbpath, NULL, &r);
    int crashed = 0, timeout = 0, passed = 0, other = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < i; j++)
            CHECK_MSG(strcmp(r[i].kernel, r[j].kernel) != 0 ||
                      strcmp(r[i].config, r[j].config) != 0, "%s measured twice", r[i].config);
        if (strstr(r[i].config, "BAD=1"))
            crashed += strcmp(r[i].status, DB_CRASHED) == 0;
        else if (strstr(r[i].config, "SPIN=1"))
            timeout += strcmp(r[i].status, DB_TIMEOUT) == 0;
        else if (strcmp(r[i].status, DB_OK) == 0 || strcmp(r[i].status, DB_ABANDONED) == 0)
            passed++;
        else
            other++;
    }
    free(r);
    CHECK_EQ(crashed, 1);
    CHECK_EQ(timeout, 1);
    CHECK_EQ(other, 0);
    CHECK_EQ(passed, 12 + 4);
}

/* Cubins of the database that the gc rule would not keep: not the binary
 * of one of the LK_PER_PROBLEM fastest ok results of the (one) problem per
 * device or over all devices, nor of the fastest deterministic ones (the
 * rule of db_gc_binaries, written again in SQL). */
static long long mg_cubins_beyond_rule(const char *dbpath)
{
    char sql[2048];
    snprintf(sql, sizeof sql,
             "WITH r AS (SELECT binary_key k, device_id d, deterministic det, "
             "COALESCE(rank_ms, time_ms) t, id FROM result WHERE status = 'ok'), "
             "keep AS (SELECT k FROM (SELECT k, row_number() OVER (PARTITION BY d ORDER BY t, id) "
             "n FROM r) WHERE n <= %d "
             "UNION SELECT k FROM (SELECT k, row_number() OVER (ORDER BY t, id) n FROM r) "
             "WHERE n <= %d "
             "UNION SELECT k FROM (SELECT k, row_number() OVER (PARTITION BY d ORDER BY t, id) "
             "n FROM r WHERE det) WHERE n <= %d "
             "UNION SELECT k FROM (SELECT k, row_number() OVER (ORDER BY t, id) n FROM r "
             "WHERE det) WHERE n <= %d) "
             "SELECT count(*) FROM binary WHERE key NOT IN (SELECT k FROM keep)",
             LK_PER_PROBLEM, LK_PER_PROBLEM, LK_PER_PROBLEM, LK_PER_PROBLEM);
    return th_sql_int(dbpath, sql);
}

TEST(multigpu_run_end_keeps_the_cubins_lookups_serve)
{
    static const char *devices[] = {"0", "all"};
    for (int d = 0; d < 2 && !th_failed(); d++) {
        char dbpath[4300], args[9000], *out = NULL;
        snprintf(dbpath, sizeof dbpath, "%s/gc%d.db", th_tmpdir(), d);
        snprintf(args, sizeof args, "--device %s --kernel test_oob --db %s --seed 4",
                 devices[d], dbpath);
        int rc = mg_run("2", "", args, &out);
        CHECK_MSG(rc == 0 && strstr(out, "gc: kept the "), "--device %s: exit %d: %s",
                  devices[d], rc, out ? out : "");
        /* 13 configurations, each its own cubin: the rule keeps fewer */
        long long cubins = th_sql_int(dbpath, "SELECT count(*) FROM binary");
        CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM result"), 13);
        CHECK_MSG(cubins >= 1 && cubins < 13, "--device %s: %lld cubins", devices[d], cubins);
        if (d == 0)                  /* one device: the fastest 4, and as many deterministic */
            CHECK_MSG(cubins <= 2 * LK_PER_PROBLEM, "%lld cubins", cubins);
        CHECK_EQ(mg_cubins_beyond_rule(dbpath), 0);
        /* every lookup still finds its cubin: the best row's is there */
        CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM binary WHERE key = (SELECT binary_key "
                            "FROM result WHERE status = 'ok' ORDER BY COALESCE(rank_ms, "
                            "time_ms), id LIMIT 1)"), 1);
        /* the size printed is the database's as it is left, with no hint that gc would
         * reclaim what it just reclaimed */
        char want[64];
        snprintf(want, sizeof want, "13 results, %lld cubins of ", cubins);
        CHECK_MSG(strstr(out, want), "want '%s' in %s", want, out);
        CHECK_MSG(!strstr(out, "autotune gc reclaims"), "stale hint in %s", out);
        free(out);
    }
    /* --keep-all-cubins: every compiled cubin stays */
    char dbpath[4300], args[9000], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/keep.db", th_tmpdir());
    snprintf(args, sizeof args, "--device 0 --kernel test_oob --db %s --seed 4 "
             "--keep-all-cubins", dbpath);
    int rc = mg_run("2", "", args, &out);
    CHECK_MSG(rc == 0 && !strstr(out, "gc: "), "exit %d: %s", rc, out ? out : "");
    /* the size line says gc would reclaim them; after a run-end gc it does not */
    CHECK_MSG(out && strstr(out, "; autotune gc reclaims the cubins no lookup serves"), "%s",
              out ? out : "");
    free(out);
    CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM binary"), 13);
}

/* The budget line of size's summary in out ("  budget ... on N GPU"), up
 * to " on " (the budget itself), into b. */
static void mg_budget_of(const char *out, char *b, size_t len)
{
    const char *line = out ? strstr(out, "\n  budget ") : NULL;
    const char *on = line ? strstr(line, " on ") : NULL;
    snprintf(b, len, "%.*s", line && on ? (int)(on - line - 1) : 0, line ? line + 1 : "");
}

TEST(multigpu_two_gpus_keep_the_budget_of_one)
{
    /* a guided search without --budget: the same budget on one GPU and on
     * two (two GPUs evaluate its candidates in parallel, they do not
     * halve its time), and the summary says what each had and got */
    char budget[2][256], dbpath[4300], args[9000], *out = NULL;
    static const char *devices[] = {"0", "all"};
    for (int d = 0; d < 2 && !th_failed(); d++) {
        snprintf(dbpath, sizeof dbpath, "%s/budget%d.db", th_tmpdir(), d);
        snprintf(args, sizeof args, "--device %s --kernel test_wide --size 1000003 --strategy "
                 "random --db %s --seed 4", devices[d], dbpath);
        int rc = mg_run("2", "", args, &out);
        CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
        mg_budget_of(out, budget[d], sizeof budget[d]);
        CHECK_MSG(strstr(budget[d], "budget 120 evaluations or "), "%s", out ? out : "");
        CHECK_MSG(strstr(out, d ? " on 2 GPUs: " : " on 1 GPU: ") &&
                  strstr(out, " evaluations of this problem (") &&
                  strstr(out, "speculative compiles: "), "%s", out);
        free(out);
    }
    CHECK_STR(budget[0], budget[1]);
}

TEST(multigpu_two_gpus_end_early_only_with_one_gpus_evaluations)
{
    /* a time-budgeted search on two GPUs of one model ends before its time only once it has
     * the evaluations one GPU would make in the whole time at the look's mean round trip,
     * and never before half its time; else at its time, as alone */
    char dbpath[4300], args[9000], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/early.db", th_tmpdir());
    snprintf(args, sizeof args, "--device all --kernel test_wide --size 1000003 --strategy "
             "random --budget 4s --db %s --seed 5", dbpath);
    int rc = mg_run("2", "delay=150", args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    double seconds = -1, estimate = -1;
    long long evaluated = -1, total = -1;
    const char *sum = out;
    int used = 0;
    while (sum && (sum = strstr(sum, "test_wide 1000003: ")) != NULL &&
           (used = 0, sscanf(sum + strlen("test_wide 1000003: "), "%lld evaluated%n", &evaluated,
                             &used) < 1 || used == 0))
        sum++;
    const char *comma = sum ? strstr(sum, " cubins reused, ") : NULL;
    if (comma)
        sscanf(comma + strlen(" cubins reused, "), "%lf s", &seconds);
    const char *line = out ? strstr(out, " on 2 GPUs: ") : NULL;
    if (line)
        sscanf(line + strlen(" on 2 GPUs: "), "%lld evaluations", &total);
    const char *rule = out ? strstr(out, "ended by one GPU's evaluations in the time budget (") : NULL;
    if (rule)
        sscanf(rule + strlen("ended by one GPU's evaluations in the time budget ("), "%lf",
               &estimate);
    CHECK_MSG(evaluated > 0 && seconds > 0 && total >= evaluated, "evaluated %lld, %.1f s, "
              "total %lld: %s", evaluated, seconds, total, out ? out : "");
    if (rule) {
        printf("    ended early: %lld evaluations in %.1f s, one GPU's estimate %.0f\n", total,
                seconds, estimate);
        CHECK_MSG(estimate > 0 && (double)total >= estimate, "%s", out);
        CHECK_MSG(seconds >= 2.0 - 0.05 && seconds < 4.0, "%s", out);
    } else {
        printf("    ended at its time (the compiles did not feed one GPU's count): %lld in %.1f s\n",
                total, seconds);
        CHECK_MSG(strstr(out, "ended by the time budget") && seconds >= 4.0 - 0.05, "%s", out);
    }
    free(out);
}
