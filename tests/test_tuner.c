/* test_tuner.c: whole tuner runs with a fake (CPU) or the real worker: crashes, hangs, wrong
 * results, signals, resumes, warm starts, second looks, a worker dying in every phase
 * (strategies and protocol: test_strategy.c; the compile pool: test_compile_pool.c). */
#include <math.h>
#include <signal.h>
#include <dirent.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "db.h"
#include "harness.h"
#include "strategy.h"
#include "th_sql.h"
#include "tn.h"


/* ---- whole runs with the fake worker ---- */

/* The fake worker's time formula, written again here (FNV-1a 64). */
static double fake_time(const char *config)
{
    unsigned long long h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)config; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return 0.5 + (double)(h % 10000u) / 1000.0;
}

/* The valid configurations of test_oob, by its documented rule. */
static int oob_configs(char list[][64])
{
    static const int blocks[] = {64, 128, 256, 512}, items[] = {1, 2, 4};
    int n = 0;
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < 3; i++)
            snprintf(list[n++], 64, "BLOCK=%d,ITEMS=%d,BAD=0", blocks[b], items[i]);
    snprintf(list[n++], 64, "BLOCK=128,ITEMS=1,BAD=1");
    return n;
}

static const db_result *find_config(const db_result *r, int n, const char *config)
{
    for (int i = 0; i < n; i++)
        if (strcmp(r[i].config, config) == 0)
            return &r[i];
    return NULL;
}

static int count_rows(const char *path, const char *kernel)
{
    db *d = NULL;
    char err[256];
    if (db_open(&d, path, 0, err, sizeof err) != AT_OK)
        return -1;
    db_result *r = NULL;
    int n = -1;
    if (db_results(d, NULL, kernel, &r, &n) != AT_OK)
        n = -1;
    free(r);
    db_close(d);
    return n;
}

TEST(tuner_fake_worker_crash_hang_wrong_best_resume)
{
    char cfgs[16][64];
    int n = oob_configs(cfgs);
    /* wrong_result on the formula's optimum (so it must not become best),
     * a crash and a hang on two others */
    int order[16];
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (fake_time(cfgs[order[j]]) < fake_time(cfgs[order[i]])) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    const char *wrong = cfgs[order[0]], *crash = cfgs[order[1]], *hang = cfgs[order[3]];
    const char *expect = cfgs[order[2]];
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/fake.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "AUTOTUNE_FAKE='crash=%s;hang=%s;wrong=%s' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --timeout 1 --seed 3 --quiet "
             "--jobs 16",
             th_build_dir(), crash, hang, wrong, th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK(strstr(out, "13 evaluated") != NULL);
    free(out);

    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 0, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, "test_oob", &r, &nr));
    CHECK_EQ(nr, n);
    const db_result *x;
    CHECK((x = find_config(r, nr, crash)) && strcmp(x->status, DB_CRASHED) == 0);
    CHECK(strstr(x->error, "signal 11") != NULL);
    CHECK((x = find_config(r, nr, hang)) && strcmp(x->status, DB_TIMEOUT) == 0);
    CHECK((x = find_config(r, nr, wrong)) && strcmp(x->status, DB_WRONG_RESULT) == 0);
    CHECK(x->rel_error == 0.5);
    int ok = 0;
    for (int i = 0; i < nr; i++) {
        ok += strcmp(r[i].status, DB_OK) == 0;
        if (strcmp(r[i].status, DB_OK) == 0 || strcmp(r[i].status, DB_ABANDONED) == 0) {
            CHECK(fabs(r[i].time_ms - fake_time(r[i].config)) < 1e-9);
            CHECK(r[i].binary_key[0] != '\0');
        }
    }
    CHECK(ok >= 2);
    db_result best;
    CHECK_OK(db_best(d, r[0].device_uuid, "test_oob", r[0].source_hash, &r[0].problem, 0, &best));
    CHECK_STR(best.config, expect);
    /* the cubin of the best is stored */
    void *bin = NULL;
    size_t size = 0;
    CHECK_OK(db_get_binary(d, best.binary_key, &bin, &size));
    CHECK(size > 0);
    free(bin);
    free(r);
    db_close(d);

    /* a rerun evaluates nothing new */
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "rerun exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "0 evaluated (+13 stored before)") != NULL, "%s", out);
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), n);
}

TEST(tuner_fake_worker_no_device)
{
    char cmd[16384], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE=nodevice "
             "%s/autotune-test --device 5 --kernel test_oob --db %s/x.db",
             th_build_dir(), th_build_dir(), th_tmpdir());
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out ? out : "");
    CHECK(strstr(out, "no CUDA driver/device") && strstr(out, "no device 5"));
    free(out);
}

/* Interrupts a slow fake run with `sig` once its first result is stored; returns its
 * output (malloc'd) and exit status. */
static int run_and_signal(const char *dbpath, const char *sig, char **out)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker %s' AUTOTUNE_FAKE='delay=200' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --seed 9 --quiet "
             "> %s.log 2>&1 & pid=$!; "
             /* the signal lands once a result is stored (at most 60 s), whatever the machine's
              * speed: 13 evaluations of 200 ms each cannot all be done by then */
             "for i in $(seq 600); do sleep 0.1; "
             "%s/autotune-test show --db %s 2>/dev/null | grep -q test_oob && break; done; "
             "kill -%s $pid; wait $pid; echo \"rc=$?\"; cat %s.log",
             th_build_dir(), dbpath, th_build_dir(), dbpath, dbpath, th_build_dir(), dbpath, sig,
             dbpath);
    return th_run(cmd, out);
}

TEST(tuner_sigint_stops_cleanly_and_rerun_completes)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/int.db", th_tmpdir());
    run_and_signal(dbpath, "INT", &out);
    CHECK_MSG(out && strstr(out, "rc=130"), "%s", out ? out : "");
    CHECK(strstr(out, "interrupted: ") && strstr(out, "rerun the same command to resume"));
    free(out);
    int stored = count_rows(dbpath, "test_oob");
    CHECK_MSG(stored >= 1 && stored < 13, "stored %d", stored);
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --seed 9 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    char want[64];
    snprintf(want, sizeof want, "%d evaluated (+%d stored before)", 13 - stored, stored);
    CHECK_MSG(strstr(out, want) != NULL, "want '%s' in %s", want, out);
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 13);
}

TEST(tuner_kill9_loses_nothing_stored)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/k9.db", th_tmpdir());
    run_and_signal(dbpath, "9", &out);
    CHECK_MSG(out && strstr(out, "rc=137"), "%s", out ? out : "");
    free(out);
    int stored = count_rows(dbpath, "test_oob");
    CHECK_MSG(stored >= 1 && stored < 13, "stored %d", stored);
    /* the orphaned worker (its command line names this database) died
     * with its parent */
    snprintf(cmd, sizeof cmd, "sleep 0.3; pgrep -f '[_]_fake_worker %s' >/dev/null", dbpath);
    CHECK(th_run(cmd, NULL) != 0);
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --seed 9 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 13);
}

/* ---- the real worker on a GPU ---- */

GPU_TEST(tuner_gpu_worker_isolates_crash_and_hang)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/gpu.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "env -u AUTOTUNE_WORKER %s/autotune-test --device %d --kernel test_oob,test_hang "
             "--db %s --seed 1 --quiet",
             th_build_dir(), th_device(), dbpath);
    double t0 = tn_now();
    int rc = th_run(cmd, &out);
    double secs = tn_now() - t0;
    printf("    %s    (%.1f s)\n", out ? out : "", secs);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 0, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, NULL, &r, &nr));
    int crashed = 0, timeout = 0, passed = 0, other = 0;
    for (int i = 0; i < nr; i++) {
        const char *s = r[i].status;
        int oob = strcmp(r[i].kernel, "test_oob") == 0;
        if (oob && strstr(r[i].config, "BAD=1")) {
            CHECK_MSG(strcmp(s, DB_CRASHED) == 0, "%s: %s (%s)", r[i].config, s, r[i].error);
            crashed++;
        } else if (!oob && strstr(r[i].config, "SPIN=1")) {
            CHECK_MSG(strcmp(s, DB_TIMEOUT) == 0, "%s: %s (%s)", r[i].config, s, r[i].error);
            timeout++;
        } else if (strcmp(s, DB_OK) == 0 || strcmp(s, DB_ABANDONED) == 0) {
            CHECK(r[i].rel_error >= 0 && r[i].rel_error < 1e-6);
            passed++;
        } else {
            printf("    unexpected %s %s: %s (%s)\n", r[i].kernel, r[i].config, s, r[i].error);
            other++;
        }
    }
    CHECK_EQ(crashed, 1);
    CHECK_EQ(timeout, 1);
    CHECK_EQ(other, 0);
    CHECK_EQ(passed, 12 + 4);
    free(r);
    db_close(d);
}

/* The results stored for kernel at size n (malloc'd into *rows); how
 * many, 0 when the database cannot be read. */
static int kernel_rows_at(const char *dbpath, const char *kernel, long long n,
                          db_result **rows)
{
    db *d = NULL;
    char err[256];
    int nr = 0, kept = 0;
    *rows = NULL;
    if (db_open(&d, dbpath, 0, err, sizeof err) != AT_OK)
        return 0;
    if (db_results(d, NULL, kernel, rows, &nr) != AT_OK)
        nr = 0;
    db_close(d);
    for (int i = 0; i < nr; i++)
        if ((*rows)[i].problem.dims[0] == n)
            (*rows)[kept++] = (*rows)[i];
    return kept;
}

static int oob_rows_at(const char *dbpath, long long n, db_result **rows)
{
    return kernel_rows_at(dbpath, "test_oob", n, rows);
}

static int oob_rows_wide(const char *dbpath, long long n, db_result **rows)
{
    return kernel_rows_at(dbpath, "test_wide", n, rows);
}

/* 1 if test_oob has a stored result for config at size n. */
static int find_config_at(const char *dbpath, long long n, const char *config)
{
    db_result *r;
    int nr = oob_rows_at(dbpath, n, &r);
    int found = find_config(r, nr, config) != NULL;
    free(r);
    return found;
}

/* The fastest ok configuration of rows (by the fake worker's formula, which
 * does not depend on the size); NULL if none. */
static const db_result *fastest_row(const db_result *rows, int n)
{
    const db_result *best = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].status, DB_OK) == 0 &&
            (!best || fake_time(rows[i].config) < fake_time(best->config)))
            best = &rows[i];
    return best;
}

/* The fastest ok configuration stored for test_oob at size n (by the fake
 * worker's formula); 0 if none. */
static int best_at(const char *dbpath, long long n, char *out, size_t len)
{
    db_result *r;
    int nr = oob_rows_at(dbpath, n, &r);
    const db_result *best = fastest_row(r, nr);
    if (best)
        snprintf(out, len, "%s", best->config);
    free(r);
    return best != NULL;
}

/* Warm start: with a budget of two evaluations, a new size evaluates the
 * default and the winner of the nearest stored size (by the fake worker's
 * formula), not a random configuration. */
TEST(tuner_warm_start_from_nearest_size)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/transfer.db", th_tmpdir());
    const char *fmt = "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
                      "%s/autotune-test --device 0 --kernel test_oob --db %s --strategy random "
                      "--size %s --budget %s --seed %d --quiet";
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "1000", "13e", 1);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    /* the whole space at 1000: its winner is the formula's optimum */
    char cfgs[16][64];
    int n = oob_configs(cfgs), opt = 0;
    for (int i = 1; i < n; i++)
        if (fake_time(cfgs[i]) < fake_time(cfgs[opt]))
            opt = i;
    char win1000[TPL_CONFIG_LEN], win2000[TPL_CONFIG_LEN], got[TPL_CONFIG_LEN];
    CHECK(best_at(dbpath, 1000, win1000, sizeof win1000));
    CHECK_STR(win1000, cfgs[opt]);
    CHECK(strcmp(win1000, "BLOCK=256,ITEMS=1,BAD=0") != 0);      /* not the default */
    /* 2000: the default plus the winner of 1000 */
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "2000", "2e", 2);
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "1 winners of other sizes first") &&
              strstr(out, "2 evaluated"), "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK(best_at(dbpath, 2000, win2000, sizeof win2000));
    CHECK_STR(win2000, win1000);
    /* 3000, after 2000 got a different winner by hand: nearest first */
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 1, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, "test_oob", &r, &nr));
    db_result extra = r[0];
    free(r);
    extra.id = 0;
    extra.problem.dims[0] = 2900;
    const char *near = strcmp(cfgs[opt], "BLOCK=512,ITEMS=4,BAD=0") != 0
                           ? "BLOCK=512,ITEMS=4,BAD=0" : "BLOCK=512,ITEMS=2,BAD=0";
    snprintf(extra.config, sizeof extra.config, "%s", near);
    snprintf(extra.status, sizeof extra.status, "%s", DB_OK);
    extra.time_ms = 0.01;
    CHECK_OK(db_store_result(d, &extra));
    db_close(d);
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "3000", "2e", 3);
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "2 winners of other sizes first"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    CHECK(best_at(dbpath, 3000, got, sizeof got));
    /* evaluated: the default and 2900's winner (nearest), not 1000's */
    CHECK(find_config_at(dbpath, 3000, near));
    CHECK(!find_config_at(dbpath, 3000, win1000));
}

/* The second look. 1000003 is searched alone (5 evaluations); then a
 * faster result of 250007 appears (stored by hand: the fake formula's
 * optimum, which that search missed); the run of both default sizes finds
 * 1000003's evaluation budget spent, searches 250007, and the second look
 * then measures 250007's winner on 1000003 too (its cubin is stored: no
 * compile), which becomes 1000003's best. A rerun measures nothing more. */
TEST(tuner_second_look_measures_later_winners)
{
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/second_look.db", th_tmpdir());
    const char *fmt = "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' %s/autotune-test "
                      "--device 0 --kernel test_wide --db %s --strategy random --budget 5e "
                      "--seed 7%s";
    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, " --size 1000003");
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    /* the formula's optimum over the 96 configurations */
    char opt[TPL_CONFIG_LEN] = "", text[TPL_CONFIG_LEN];
    const int blocks[] = {64, 128, 256, 512}, items[] = {1, 2, 4};
    for (int b = 0; b < 4; b++)
        for (int i = 0; i < 3; i++)
            for (int r = 1; r <= 8; r++) {
                snprintf(text, sizeof text, "BLOCK=%d,ITEMS=%d,REPEAT=%d", blocks[b], items[i],
                         r);
                if (!opt[0] || fake_time(text) < fake_time(opt))
                    snprintf(opt, sizeof opt, "%s", text);
            }
    db_result *first = NULL;
    int n1 = oob_rows_wide(dbpath, 1000003, &first);
    CHECK(n1 == 5);
    CHECK(n1 > 0 && !find_config(first, n1, opt));      /* the search missed it */
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 1, err, sizeof err));
    db_result later = first[0];
    free(first);
    later.id = 0;
    later.problem.dims[0] = 250007;
    snprintf(later.config, sizeof later.config, "%s", opt);
    snprintf(later.status, sizeof later.status, "%s", DB_OK);
    later.time_ms = later.time_min_ms = later.time_max_ms = fake_time(opt);
    CHECK_OK(db_store_result(d, &later));
    db_close(d);

    snprintf(cmd, sizeof cmd, fmt, th_build_dir(), th_build_dir(), dbpath, "");
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && out && strstr(out, "test_wide 1000003: second look, 1 winners of "
                                       "other sizes measured") && strstr(out, opt),
              "exit %d: %s", rc, out ? out : "");
    free(out);
    n1 = oob_rows_wide(dbpath, 1000003, &first);
    CHECK_MSG(n1 == 6 && find_config(first, n1, opt), "1000003: %d results", n1);
    const db_result *best = fastest_row(first, n1);
    CHECK(best && strcmp(best->config, opt) == 0);
    free(first);
    /* a rerun (resume) finds everything measured: no second look line */
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && out && !strstr(out, "second look"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    CHECK(oob_rows_wide(dbpath, 1000003, &first) == 6);
    free(first);
}

TEST(tuner_fake_worker_anneal_no_duplicates)
{
    char cfgs[16][64];
    int n = oob_configs(cfgs);
    double opt = INFINITY;
    for (int i = 0; i < n; i++)
        opt = fmin(opt, fake_time(cfgs[i]));
    char dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/anneal.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE='delay=5' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --strategy anneal "
             "--budget 100e --seed 4 --jobs 8 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    /* the whole small space, each configuration once (the default too) */
    CHECK_MSG(strstr(out, "13 evaluated, 0 failed") != NULL, "%s", out);
    free(out);
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, dbpath, 0, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, "test_oob", &r, &nr));
    CHECK_EQ(nr, n);
    double best = INFINITY;
    for (int i = 0; i < nr; i++) {
        CHECK(find_config(r, nr, cfgs[i]) != NULL);
        if (strcmp(r[i].status, DB_OK) == 0)
            best = fmin(best, r[i].time_ms);
    }
    CHECK(fabs(best - opt) < 1e-9);
    free(r);
    db_close(d);
    /* a budget in evaluations is respected */
    snprintf(dbpath, sizeof dbpath, "%s/budget.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --db %s --strategy random "
             "--budget 5e --seed 4 --quiet",
             th_build_dir(), th_build_dir(), dbpath);
    rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "5 evaluated"), "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 5);
}

/* ---- the worker dies in any phase (the fake worker's die= directives) ---- */

/* Runs autotune-test on kernel with the fake worker and $AUTOTUNE_FAKE
 * `fake`; its output (malloc'd) in *out, its exit status returned. */
static int fake_run(const char *kernel, const char *dbpath, const char *fake, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE='%s' "
             "%s/autotune-test --device 0 --kernel %s --db %s --seed 3 --jobs 2 --quiet",
             th_build_dir(), fake, th_build_dir(), kernel, dbpath);
    return th_run(cmd, out);
}

#define FAKE_PHASES 8                  /* open ... idle (fake_worker.c) */

/* Deaths the fake worker counted in its state file (events of any phase,
 * of each phase, deaths, deaths by phase); by phase into by[] if not NULL.
 * -1 if there is no state file. */
static long long fake_kills(const char *state, long long *by)
{
    long long v[2 + 2 * FAKE_PHASES] = {0};
    FILE *f = fopen(state, "r");
    if (!f)
        return -1;
    for (int i = 0; i < 2 + 2 * FAKE_PHASES; i++)
        if (fscanf(f, "%lld", &v[i]) != 1)
            break;
    fclose(f);
    for (int i = 0; by && i < FAKE_PHASES; i++)
        by[i] = v[2 + FAKE_PHASES + i];
    return v[1 + FAKE_PHASES];
}

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of kernel as sorted "size config status time" lines in one
 * malloc'd string; NULL if the database cannot be read. */
static char *rows_text(const char *dbpath, const char *kernel)
{
    db *d = NULL;
    char err[256];
    db_result *r = NULL;
    int n = 0;
    if (db_open(&d, dbpath, 0, err, sizeof err) != AT_OK)
        return NULL;
    int ok = db_results(d, NULL, kernel, &r, &n) == AT_OK;
    db_close(d);
    char **lines = calloc((size_t)n + 1, sizeof *lines);
    char *text = ok && lines ? calloc((size_t)n + 1, 700) : NULL;
    for (int i = 0; text && i < n; i++) {
        lines[i] = malloc(700);
        if (lines[i])
            snprintf(lines[i], 700, "%lld %s %s %.6f\n", r[i].problem.dims[0], r[i].config,
                     r[i].status, r[i].time_ms);
    }
    if (text)
        qsort(lines, (size_t)n, sizeof *lines, cmp_text);
    for (int i = 0; text && i < n; i++)
        if (lines[i])
            strcat(text, lines[i]);
    for (int i = 0; lines && i < n; i++)
        free(lines[i]);
    free(lines);
    free(r);
    return text;
}

/* Checks what a disturbed test_oob run stored against the fake worker's
 * formula: every valid configuration once, measured (ok or abandoned) at
 * the formula's time, except `crashed` rows crashed by the worker dying
 * twice; the best stored is the formula's fastest measured one. */
static void check_oob_rows(const char *dbpath, int crashed)
{
    char cfgs[16][64];
    int n = oob_configs(cfgs), n_crashed = 0;
    db_result *r;
    int nr = oob_rows_at(dbpath, 1000003, &r);
    CHECK_EQ(nr, n);
    const char *opt = NULL;
    for (int i = 0; i < n; i++) {
        const db_result *x = find_config(r, nr, cfgs[i]);
        CHECK_MSG(x, "%s not stored", cfgs[i]);
        if (strcmp(x->status, DB_CRASHED) == 0) {
            CHECK_MSG(strstr(x->error, "died on it twice"), "%s: %s", x->config, x->error);
            n_crashed++;
            continue;
        }
        CHECK_MSG(strcmp(x->status, DB_OK) == 0 || strcmp(x->status, DB_ABANDONED) == 0,
                  "%s: %s (%s)", x->config, x->status, x->error);
        CHECK(fabs(x->time_ms - fake_time(x->config)) < 1e-9);
        if (!opt || fake_time(x->config) < fake_time(opt))
            opt = x->config;
    }
    CHECK_EQ(n_crashed, crashed);
    char best[TPL_CONFIG_LEN];
    CHECK(best_at(dbpath, 1000003, best, sizeof best));
    CHECK_STR(best, opt);
    free(r);
}

/* A run of test_oob whose fake worker dies at the events of `die` (events
 * counted across its workers): it ends with exit 0, `kills` deaths and as
 * many steps retried, and every result (check_oob_rows). */
static void survives(const char *die, int kills)
{
    char dir[4300], dbpath[4400], state[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/die.db", dir);
    snprintf(state, sizeof state, "%s/die.state", dir);
    snprintf(fake, sizeof fake, "%s;state=%s", die, state);
    int rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", die, rc, out ? out : "");
    CHECK_EQ(fake_kills(state, NULL), kills);
    char want[64];
    snprintf(want, sizeof want, "%d retried after the worker died", kills);
    CHECK_MSG(strstr(out, want) && strstr(out, "13 evaluated"), "%s: %s", die, out);
    free(out);
    check_oob_rows(dbpath, 0);
}

/* start: the first start, and a restart after a death in verification */
TEST(tuner_worker_dies_at_start)
{
    survives("die=open:1;die=verify:4;die=open:3", 3);
}

TEST(tuner_worker_dies_measuring_the_ceiling)
{
    survives("die=ceiling:1", 1);
}

/* input preparation: the first, and the one after a death in timing */
TEST(tuner_worker_dies_preparing_inputs)
{
    survives("die=prepare:1;die=time:6;die=prepare:3", 3);
}

/* with the request's first bytes read, its cubin not */
TEST(tuner_worker_dies_in_compile_handoff)
{
    survives("die=handoff:5", 1);
}

TEST(tuner_worker_dies_verifying)
{
    survives("die=verify:5", 1);
}

TEST(tuner_worker_dies_timing)
{
    survives("die=time:5", 1);
}

/* half of the reply written */
TEST(tuner_worker_dies_replying)
{
    survives("die=reply:5", 1);
}

/* between requests: replaced before the next one (or, when its death is
 * not visible yet, on the next one's retry) */
TEST(tuner_worker_dies_between_requests)
{
    char dir[4300], dbpath[4400], fake[9000], state[4400], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/idle.db", dir);
    snprintf(state, sizeof state, "%s/idle.state", dir);
    snprintf(fake, sizeof fake, "die=idle:5;state=%s", state);
    int rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 0 && strstr(out, "13 evaluated, 0 failed") &&
              strstr(out, "(1 worker restarts"), "exit %d: %s", rc, out ? out : "");
    free(out);
    CHECK_EQ(fake_kills(state, NULL), 1);
    check_oob_rows(dbpath, 0);
}

/* dying on a configuration twice (in verification, then in its retry's
 * timing) records it as crashed; the search goes on */
TEST(tuner_worker_dies_twice_on_a_configuration)
{
    char dir[4300], dbpath[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/twice.db", dir);
    snprintf(fake, sizeof fake, "die=verify:5;die=time:5;state=%s/twice.state", dir);
    int rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 0 && strstr(out, "13 evaluated, 1 failed"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    check_oob_rows(dbpath, 1);
}

/* Input preparation that kills the worker twice skips the problem, keeps
 * its results and goes on with the others (exit 1); a worker that cannot
 * start ends the run, at the start or later, keeping what was stored. */
TEST(tuner_worker_lost_preparing_twice_or_unable_to_start)
{
    char dir[4300], dbpath[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(dbpath, sizeof dbpath, "%s/skip.db", dir);
    /* the 10th evaluation of size 1000003 kills it; preparing again, twice */
    snprintf(fake, sizeof fake, "die=verify:10;die=prepare:2;die=prepare:3;state=%s/skip.state",
             dir);
    int rc = fake_run("test_wide", dbpath, fake, &out);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "test_wide 1000003 skipped: preparing the inputs killed the "
                          "worker twice") &&
              strstr(out, "its 9 results stored are kept") &&
              strstr(out, "test_wide 250007: 96 evaluated, 0 failed") &&
              strstr(out, "1 problem skipped"), "%s", out);
    /* the skipped problem still gets its second look (as every problem
     * searched before its family's last): the winner of 250007 measured */
    CHECK_MSG(strstr(out, "test_wide 1000003: second look, 1 winners of other sizes"), "%s",
              out);
    free(out);
    db_result *r;
    CHECK_EQ(oob_rows_wide(dbpath, 1000003, &r), 10);
    free(r);
    CHECK_EQ(oob_rows_wide(dbpath, 250007, &r), 96);
    free(r);

    /* no start at all: no state file, so every worker dies opening */
    snprintf(dbpath, sizeof dbpath, "%s/nostart.db", dir);
    rc = fake_run("test_oob", dbpath, "die=open:1", &out);
    CHECK_MSG(rc == 1 && strstr(out, "autotune: the worker cannot start: ") &&
              strstr(out, "died twice while starting: killed by signal 9"), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    /* a restart that fails twice, after two results */
    snprintf(dbpath, sizeof dbpath, "%s/late.db", dir);
    snprintf(fake, sizeof fake, "die=verify:3;die=open:2;die=open:3;state=%s/late.state", dir);
    rc = fake_run("test_oob", dbpath, fake, &out);
    CHECK_MSG(rc == 1 && strstr(out, "autotune: the worker cannot start: "), "exit %d: %s", rc,
              out ? out : "");
    free(out);
    CHECK_EQ(count_rows(dbpath, "test_oob"), 2);
}

/* The fake worker SIGKILLs itself at 20 random moments of one run of
 * test_wide (two sizes, 96 configurations each, about 960 events from
 * start to the last reply): the moments are events of any phase, at least
 * 8 apart so that each retry finishes before the next death. The run ends
 * with exit 0, a retry for each death (but those between requests that are
 * seen before the next one), and the rows and best of an undisturbed run. */
TEST(tuner_worker_killed_at_20_random_moments)
{
    unsigned long long seed = (unsigned long long)time(NULL);
    const char *env = getenv("AUTOTUNE_KILL_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 10);
    printf("    kill seed %llu (AUTOTUNE_KILL_SEED=%llu replays it)\n", seed, seed);
    tn_rng rng;
    tn_rng_seed(&rng, seed);
    char dir[4300], calm[4400], hit[4400], fake[9000], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(calm, sizeof calm, "%s/calm.db", dir);
    snprintf(hit, sizeof hit, "%s/hit.db", dir);
    int used = snprintf(fake, sizeof fake, "state=%s/hit.state", dir);
    long long event = 1 + (long long)tn_rng_below(&rng, 8);
    for (int k = 0; k < 20; k++) {
        used += snprintf(fake + used, sizeof fake - (size_t)used, ";die=%lld", event);
        event += 8 + (long long)tn_rng_below(&rng, 31);
    }
    printf("    %s\n", fake);
    int rc = fake_run("test_wide", calm, "", &out);
    CHECK_MSG(rc == 0, "undisturbed: exit %d: %s", rc, out ? out : "");
    free(out);
    rc = fake_run("test_wide", hit, fake, &out);
    const char *retried = out ? strstr(out, " retried after the worker died") : NULL;
    while (retried && retried > out && retried[-1] != ' ')
        retried--;
    int n_retried = retried ? atoi(retried) : 0;
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    char state[4400];
    snprintf(state, sizeof state, "%s/hit.state", dir);
    long long by[FAKE_PHASES];
    CHECK_EQ(fake_kills(state, by), 20);
    printf("    deaths: open %lld, ceiling %lld, prepare %lld, handoff %lld, verify %lld, "
           "time %lld, reply %lld, idle %lld; %d retried\n", by[0], by[1], by[2], by[3], by[4],
           by[5], by[6], by[7], n_retried);
    CHECK(n_retried >= 20 - by[7] && n_retried <= 20);
    char *a = rows_text(calm, "test_wide"), *b = rows_text(hit, "test_wide");
    CHECK(a && b);
    int same = strcmp(a, b) == 0;
    CHECK_MSG(same, "rows differ:\n--- undisturbed\n%s--- killed\n%s", a, b);
    CHECK(strstr(a, " crashed ") == NULL);
    /* every configuration of both sizes, the best the formula's */
    for (int s = 0; s < 2; s++) {
        long long n = s ? 250007 : 1000003;
        db_result *r;
        int nr = oob_rows_wide(hit, n, &r);
        CHECK_EQ(nr, 96);
        const char *opt = NULL;
        for (int i = 0; i < nr; i++)
            if (!opt || fake_time(r[i].config) < fake_time(opt))
                opt = r[i].config;
        db *d = NULL;
        char err[256];
        db_result best;
        CHECK_OK(db_open(&d, hit, 0, err, sizeof err));
        CHECK_OK(db_best(d, r[0].device_uuid, "test_wide", r[0].source_hash, &r[0].problem, 0,
                         &best));
        db_close(d);
        CHECK_STR(best.config, opt);
        free(r);
    }
    free(a);
    free(b);
}

/* ---- the real worker killed on a GPU ---- */

/* 1 if a status is a measurement (ok or abandoned: which one depends on
 * noise and on the order of results). */
static int measured(const char *status)
{
    return strcmp(status, DB_OK) == 0 || strcmp(status, DB_ABANDONED) == 0;
}

/* Every row of ref has one in hit of the same configuration and kind of
 * status, unless the test killed the worker twice on it (crashed, "died on
 * it twice", counted in *twice). Returns the rows matched. */
static int match_rows(const db_result *ref, int n_ref, const db_result *hit, int n_hit,
                      int *twice)
{
    int matched = 0;
    *twice = 0;
    for (int i = 0; i < n_ref; i++) {
        const db_result *h = find_config(hit, n_hit, ref[i].config);
        if (!h)
            continue;
        if (strcmp(h->status, DB_CRASHED) == 0 && strstr(h->error, "died on it twice")) {
            printf("    %s: killed twice by the test (%s)\n", h->config, h->error);
            (*twice)++;
            matched++;
        } else if (measured(ref[i].status) ? measured(h->status)
                                            : strcmp(h->status, ref[i].status) == 0) {
            matched++;
        } else {
            printf("    %s: %s, undisturbed %s (%s)\n", h->config, h->status, ref[i].status,
                   h->error);
        }
    }
    return matched;
}

/* The real worker of `autotune` (its child running __worker) is SIGKILLed
 * at several random moments of a search of sum at 2^20 (seeded random
 * strategy, a budget of 400 evaluations, about 8 s on an H200 (80 took
 * 1.5 s, too short for two kills): the same configurations as an
 * undisturbed run). Each kill comes 0.8 to 1.8 s after a worker appears,
 * so that the retry of the step it hits has mostly finished before the
 * next (a configuration killed twice is recorded as crashed, and counted
 * here as the test's doing). The run ends with exit 0, a result for every
 * configuration of the undisturbed run, and its best: the same
 * configuration or a time within 3%. */
GPU_TEST(tuner_gpu_worker_killed_at_random_moments)
{
    unsigned long long seed = (unsigned long long)time(NULL);
    const char *env = getenv("AUTOTUNE_KILL_SEED");
    if (env && *env)
        seed = strtoull(env, NULL, 10);
    printf("    kill seed %llu (AUTOTUNE_KILL_SEED=%llu replays it)\n", seed, seed);
    tn_rng rng;
    tn_rng_seed(&rng, seed);
    char dir[4300], ref[4400], hit[4400], run[6000], sleeps[128] = "", cmd[16384];
    char *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(ref, sizeof ref, "%s/ref.db", dir);
    snprintf(hit, sizeof hit, "%s/hit.db", dir);
    for (int k = 0; k < 6; k++)
        snprintf(sleeps + strlen(sleeps), sizeof sleeps - strlen(sleeps), " %.2f",
                 0.8 + tn_rng_unit(&rng));
    const char *fmt = "env -u AUTOTUNE_WORKER -u AUTOTUNE_FAKE %s/autotune --device %d "
                      "--kernel sum --size 1048576 --strategy random --budget 400e --seed 5 "
                      "--quiet --db %s";
    snprintf(run, sizeof run, fmt, th_build_dir(), th_device(), ref);
    int rc = th_run(run, &out);
    CHECK_MSG(rc == 0, "undisturbed: exit %d: %s", rc, out ? out : "");
    free(out);
    snprintf(run, sizeof run, fmt, th_build_dir(), th_device(), hit);
    snprintf(cmd, sizeof cmd,
             "worker() { if command -v pgrep >/dev/null; then pgrep -P $1 -f __worker; "
             "else for c in $(cat /proc/$1/task/*/children 2>/dev/null); do "
             "tr '\\0' ' ' </proc/$c/cmdline 2>/dev/null | grep -q __worker && echo $c; "
             "done; fi | head -n 1; }; "
             "alive() { [ -e /proc/$1 ] && ! grep -q '^State:[[:space:]]*Z' /proc/$1/status; }; "
             "%s > %s/hit.log 2>&1 & pid=$!; kills=0; last=; "
             "for r in%s; do w=; "
             "while alive $pid; do w=$(worker $pid); "
             "[ -n \"$w\" ] && [ \"$w\" != \"$last\" ] && break; w=; sleep 0.05; "
             "done; [ -z \"$w\" ] && break; sleep $r; "
             "kill -9 $w 2>/dev/null && kills=$((kills+1)); last=$w; done; "
             "wait $pid; echo \"rc=$? kills=$kills\"; cat %s/hit.log",
             run, dir, sleeps, dir);
    th_run(cmd, &out);
    int kills = -1;
    const char *p = out ? strstr(out, "rc=") : NULL;
    rc = -1;
    if (p)
        sscanf(p, "rc=%d kills=%d", &rc, &kills);
    printf("    %d kills; %s", kills, out && strstr(out, "done:") ? strstr(out, "done:") : "\n");
    CHECK_MSG(rc == 0 && kills >= 2, "exit %d, %d kills: %s", rc, kills, out ? out : "");
    free(out);

    db_result *r0, *r1;
    int n0 = kernel_rows_at(ref, "sum", 1048576, &r0), n1 = kernel_rows_at(hit, "sum", 1048576,
                                                                          &r1);
    int twice = 0;
    int matched = match_rows(r0, n0, r1, n1, &twice);
    CHECK_MSG(n0 > 0 && n1 == n0 && matched == n0, "undisturbed %d rows, killed %d, %d matched",
              n0, n1, matched);
    db *d = NULL;
    char err[256];
    db_result b0, b1;
    CHECK_OK(db_open(&d, ref, 0, err, sizeof err));
    CHECK_OK(db_best(d, r0[0].device_uuid, "sum", r0[0].source_hash, &r0[0].problem, 0, &b0));
    db_close(d);
    CHECK_OK(db_open(&d, hit, 0, err, sizeof err));
    CHECK_OK(db_best(d, r1[0].device_uuid, "sum", r1[0].source_hash, &r1[0].problem, 0, &b1));
    db_close(d);
    printf("    best undisturbed %.4f ms %s; killed %.4f ms %s\n", b0.time_ms, b0.config,
           b1.time_ms, b1.config);
    CHECK_MSG(strcmp(b0.config, b1.config) == 0 || fabs(b1.time_ms - b0.time_ms) <= 0.03 *
              b0.time_ms, "bests differ: %.4f ms %s vs %.4f ms %s", b0.time_ms, b0.config,
              b1.time_ms, b1.config);
    free(r0);
    free(r1);
}
