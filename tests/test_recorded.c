/* test_recorded.c: CPU tests of the record of problems served below the
 * exact level (counts, bound, read-only, migration), `autotune --recorded`
 * (order, budget, done), --problems, show --wanted, and the shipped data
 * (export --configs-only --shipped, ship-build, the shipped layer served). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "lookup.h"
#include "record.h"
#include "th_sql.h"
#include "tn.h"
#include "tpl.h"

#define RC_FAKE_UUID "GPU-fa4e0000-0000-0000-0000-000000000000"
#define RC_FAKE_NAME "Fake GPU (autotune tests)"

/* The fake worker's device 0 (tuner/fake_worker.c), as the runtime would see it. */
static void rc_device(at_device_info *i, const char *uuid, const char *name)
{
    memset(i, 0, sizeof *i);
    snprintf(i->uuid, sizeof i->uuid, "%s", uuid);
    snprintf(i->name, sizeof i->name, "%s", name);
    i->cc_major = 9;
    snprintf(i->arch, sizeof i->arch, "sm_90");
    i->sm_count = 132;
    i->memory_bytes = 80ll << 30;
    i->smem_per_block_optin = 227 << 10;
    i->smem_per_sm = 228 << 10;
    i->regs_per_block = 65536;
    i->regs_per_sm = 65536;
    i->max_threads_per_block = 1024;
    i->max_threads_per_sm = 2048;
    i->clock_khz = 1980000;
    i->mem_clock_khz = 2619000;
    i->mem_bus_bits = 5120;
}

static tpl_problem rc_problem1(long long n)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    p.n_dims = 1;
    p.dims[0] = n;
    return p;
}

static db *rc_open(const char *name, int mode, char *path, size_t len)
{
    char err[512];
    db *d = NULL;
    snprintf(path, len, "%s/%s", th_tmpdir(), name);
    if (db_open(&d, path, mode, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "db_open %s: %s", path, err);
        return NULL;
    }
    return d;
}

/* The plans of one handle: only those below the exact level and called
 * are kept; a second handle's counts add up; the time is calls x the
 * roofline estimate computed here by hand. */
TEST(recorded_counts_levels_and_time)
{
    char path[4300];
    db *d = rc_open("rec.db", DB_OPEN_CREATE, path, sizeof path);
    CHECK(d != NULL);
    at_device_info dev;
    rc_device(&dev, RC_FAKE_UUID, RC_FAKE_NAME);
    const tpl_family *mm = tpl_find("matmul"), *sum = tpl_find("sum");
    tpl_problem g;
    memset(&g, 0, sizeof g);
    g.n_dims = 3;
    g.dims[0] = g.dims[1] = g.dims[2] = 1024;
    tpl_problem bf = g;
    bf.dtype = AT_R_16BF;
    bf.op_a = AT_OP_T;
    tpl_problem s = rc_problem1(1 << 20);
    rec_batch b = {0};
    rec_add(&b, mm, &g, AT_LOOKUP_NEAREST, 7, 0, &dev);
    rec_add(&b, tpl_find("tcgemm"), &bf, AT_LOOKUP_DEFAULT, 3, 0, &dev);
    rec_add(&b, sum, &s, AT_LOOKUP_EXACT, 50, 0, &dev);       /* exact: not recorded */
    rec_add(&b, sum, &g, AT_LOOKUP_ARCH, 0, 0, &dev);         /* never called */
    CHECK_EQ(b.n, 2);
    CHECK_OK(rec_write(&b, d, &dev));
    CHECK_EQ(b.n, 0);
    rec_add(&b, mm, &g, AT_LOOKUP_ARCH, 5, 0, &dev);          /* a second process */
    CHECK_OK(rec_write(&b, d, &dev));
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM recorded"), 2);
    CHECK_EQ(th_sql_int(path, "SELECT calls FROM recorded WHERE kernel = 'matmul'"), 12);
    CHECK_EQ(th_sql_int(path, "SELECT level FROM recorded WHERE kernel = 'matmul'"),
             AT_LOOKUP_ARCH);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM recorded WHERE kernel = 'tcgemm' AND "
                              "dtype = 'bf16' AND op_a = 'T' AND op_b = 'N' AND d0 = 1024"), 1);
    /* by hand: 2 x 1024^3 flops at 132 SMs x 1.98 GHz x 128 x 2 (sm_90 FP32);
     * bytes 3 x 1024^2 x 4 at 2.619 GHz x 2 x 640 bytes: compute bound */
    double flops_ms = 2.0 * 1024 * 1024 * 1024 / (132 * 1.98e9 * 256) * 1e3;
    double bytes_ms = 3.0 * 1024 * 1024 * 4 / (2.619e9 * 2 * 640) * 1e3;
    double per_call = (flops_ms > bytes_ms ? flops_ms : bytes_ms) + REC_LAUNCH_MS;
    db_recorded *w = NULL;
    int n = 0;
    CHECK_OK(db_wanted(d, NULL, 0, &w, &n));
    CHECK_EQ(n, 2);
    int mi = strcmp(w[0].kernel, "matmul") == 0 ? 0 : 1;
    CHECK_MSG(fabs(w[mi].time_ms - 12 * per_call) < 1e-9 * per_call * 12 + 1e-12,
              "time %g, by hand %g", w[mi].time_ms, 12 * per_call);
    CHECK_EQ(w[mi].calls, 12);
    CHECK(strcmp(w[mi].model, RC_FAKE_NAME) == 0);
    /* heaviest first */
    CHECK(w[0].time_ms >= w[1].time_ms);
    free(w);
    db_close(d);
}

/* At most DB_RECORDED_MAX rows: the least recently seen go first, then
 * the lightest. */
TEST(recorded_is_bounded_lru_then_lightest)
{
    char path[4300];
    db *d = rc_open("bound.db", DB_OPEN_CREATE, path, sizeof path);
    CHECK(d != NULL);
    at_device_info dev;
    rc_device(&dev, RC_FAKE_UUID, RC_FAKE_NAME);
    const int old_n = 300, new_n = DB_RECORDED_MAX - 100;
    db_recorded *rows = calloc((size_t)old_n + (size_t)new_n, sizeof *rows);
    CHECK(rows != NULL);
    for (int i = 0; i < old_n + new_n; i++) {
        snprintf(rows[i].kernel, sizeof rows[i].kernel, "sum");
        rows[i].problem = rc_problem1(1000 + i);
        rows[i].level = AT_LOOKUP_DEFAULT;
        rows[i].calls = 1;
        rows[i].time_ms = (double)((i * 7919) % 1000);     /* distinct weights */
        snprintf(rows[i].first_seen, sizeof rows[i].first_seen, "%s",
                 i < old_n ? "2026-01-01T00:00:00.000Z" : "2026-11-01T00:00:00.000Z");
        snprintf(rows[i].last_seen, sizeof rows[i].last_seen, "%s", rows[i].first_seen);
    }
    CHECK_OK(db_record_served(d, &dev, "13.0", rows, old_n, DB_RECORDED_MAX));
    CHECK_OK(db_record_served(d, &dev, "13.0", rows + old_n, new_n, DB_RECORDED_MAX));
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM recorded"), DB_RECORDED_MAX);
    /* every new row kept; of the old ones the 100 heaviest */
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM recorded WHERE last_seen LIKE '2026-11%'"),
             new_n);
    double w[300];
    for (int i = 0; i < old_n; i++)
        w[i] = rows[i].time_ms;
    for (int i = 0; i < old_n; i++)          /* sort descending */
        for (int j = i + 1; j < old_n; j++)
            if (w[j] > w[i]) {
                double t = w[i];
                w[i] = w[j];
                w[j] = t;
            }
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM recorded WHERE last_seen LIKE '2026-01%%' "
             "AND time_ms >= %.17g", w[99]);
    CHECK_EQ(th_sql_int(path, sql), 100);
    free(rows);
    db_close(d);
}

/* A read-only database records nothing and says nothing. */
TEST(recorded_readonly_database_records_nothing)
{
    char path[4300], err[512];
    db *d = rc_open("ro.db", DB_OPEN_CREATE, path, sizeof path);
    CHECK(d != NULL);
    db_close(d);
    CHECK_OK(db_open(&d, path, DB_OPEN_READONLY, err, sizeof err));
    at_device_info dev;
    rc_device(&dev, RC_FAKE_UUID, RC_FAKE_NAME);
    rec_batch b = {0};
    tpl_problem p = rc_problem1(4096);
    rec_add(&b, tpl_find("sum"), &p, AT_LOOKUP_DEFAULT, 9, 0, &dev);
    CHECK_OK(rec_write(&b, d, &dev));
    CHECK(b.rows == NULL);
    db_close(d);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM recorded"), 0);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM device"), 0);
    rec_add(&b, tpl_find("sum"), &p, AT_LOOKUP_DEFAULT, 9, 0, &dev);
    CHECK_OK(rec_write(&b, NULL, &dev));                 /* no database at all */
}

/* A version 3 database (the table dropped, the version set back) is
 * migrated in place with every row kept, or read read-only with an empty
 * recorded table. */
TEST(recorded_migrates_version_3)
{
    char path[4300], ro[4300], err[512];
    db *d = rc_open("v3.db", DB_OPEN_CREATE, path, sizeof path);
    CHECK(d != NULL);
    at_device_info dev;
    rc_device(&dev, RC_FAKE_UUID, RC_FAKE_NAME);
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    const tpl_family *fam = tpl_find("sum");
    for (int i = 0; i < 5; i++) {
        db_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", RC_FAKE_UUID);
        snprintf(r.kernel, sizeof r.kernel, "sum");
        snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
        r.problem = rc_problem1(1000 * (i + 1));
        snprintf(r.config, sizeof r.config, "%s", fam->default_config);
        snprintf(r.status, sizeof r.status, DB_OK);
        r.time_ms = 0.1 * (i + 1);
        r.rel_error = 0;
        CHECK_OK(db_store_result(d, &r));
    }
    db_close(d);
    CHECK_EQ(th_sql_exec(path, "DROP TABLE recorded; PRAGMA user_version = 3; "
                               "UPDATE meta SET value = '3' WHERE key = 'schema_version'"),
             SQLITE_OK);
    snprintf(ro, sizeof ro, "%s/v3ro.db", th_tmpdir());
    char cmd[16384], *out = NULL;
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0444 '%s'", path, ro, ro);
    CHECK_EQ(th_run(cmd, &out), 0);
    free(out);
    /* read-only: no recorded problem, no error, nothing written */
    CHECK_OK(db_open(&d, ro, DB_OPEN_READONLY, err, sizeof err));
    db_recorded *w = NULL;
    int n = -1;
    CHECK_OK(db_wanted(d, NULL, 1, &w, &n));
    CHECK_EQ(n, 0);
    free(w);
    db_close(d);
    CHECK_EQ(th_sql_int(ro, "PRAGMA user_version"), 3);
    /* writable: the current version, every result kept, the table there and usable */
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result"), 5);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM meta WHERE key = 'migrated_3_to_4'"), 1);
    rec_batch b = {0};
    tpl_problem p = rc_problem1(777);
    rec_add(&b, fam, &p, AT_LOOKUP_NEAREST, 4, 0, &dev);
    CHECK_OK(rec_write(&b, d, &dev));
    db_close(d);
    CHECK_EQ(th_sql_int(path, "SELECT calls FROM recorded WHERE d0 = 777"), 4);
}

/* A recorded problem leaves the wanted list once a verified ok result of
 * it is stored for a device of the same model (not for an unverified
 * trial's row, nor another model's). */
TEST(recorded_tuned_problem_leaves_the_list)
{
    char path[4300];
    db *d = rc_open("done.db", DB_OPEN_CREATE, path, sizeof path);
    CHECK(d != NULL);
    at_device_info a, twin, other;
    rc_device(&a, "GPU-a", "Model A");
    rc_device(&twin, "GPU-a2", "Model A");
    rc_device(&other, "GPU-b", "Model B");
    const tpl_family *fam = tpl_find("sum");
    rec_batch b = {0};
    tpl_problem p = rc_problem1(5000), q = rc_problem1(6000);
    rec_add(&b, fam, &p, AT_LOOKUP_NEAREST, 10, 0, &a);
    rec_add(&b, fam, &q, AT_LOOKUP_NEAREST, 1, 0, &a);
    CHECK_OK(rec_write(&b, d, &a));
    CHECK_OK(db_put_device(d, &twin, "13.0"));
    CHECK_OK(db_put_device(d, &other, "13.0"));
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.kernel, sizeof r.kernel, "sum");
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
    r.problem = p;
    snprintf(r.config, sizeof r.config, "%s", fam->default_config);
    snprintf(r.status, sizeof r.status, DB_OK);
    r.time_ms = 0.1;
    r.rel_error = -1;                                    /* a trial's: not tuned */
    snprintf(r.device_uuid, sizeof r.device_uuid, "GPU-a2");
    CHECK_OK(db_store_result(d, &r));
    r.rel_error = 0;                                     /* tuned, on another model */
    snprintf(r.device_uuid, sizeof r.device_uuid, "GPU-b");
    CHECK_OK(db_store_result(d, &r));
    db_recorded *w = NULL;
    int n = 0;
    CHECK_OK(db_wanted(d, NULL, 0, &w, &n));
    CHECK_EQ(n, 2);
    free(w);
    r.time_ms = 0.09;                                    /* tuned on the twin */
    snprintf(r.device_uuid, sizeof r.device_uuid, "GPU-a2");
    snprintf(r.config, sizeof r.config, "%s", fam->baselines[0].config);
    CHECK_OK(db_store_result(d, &r));
    CHECK_OK(db_wanted(d, NULL, 0, &w, &n));
    CHECK_EQ(n, 1);
    CHECK(n == 1 && w[0].problem.dims[0] == 6000);
    free(w);
    CHECK_OK(db_wanted(d, "Model A", 1, &w, &n));
    CHECK_EQ(n, 2);
    CHECK(n == 2 && w[0].problem.dims[0] == 5000 && w[0].done == 1 && w[1].done == 0);
    free(w);
    CHECK_OK(db_wanted(d, "Model B", 1, &w, &n));
    CHECK_EQ(n, 0);
    free(w);
    db_close(d);
}

/* Records test_oob problems of three weights under the fake worker's
 * device into path; 1 if done. */
static int rc_record_fake(const char *name, char *path, size_t len, const long long *sizes,
                          const long long *calls, int n)
{
    db *d = rc_open(name, DB_OPEN_CREATE, path, len);
    if (!d)
        return 0;
    at_device_info dev;
    rc_device(&dev, RC_FAKE_UUID, RC_FAKE_NAME);
    rec_batch b = {0};
    for (int k = 0; k < n; k++) {
        tpl_problem p = rc_problem1(sizes[k]);
        rec_add(&b, tpl_find("test_oob"), &p, AT_LOOKUP_DEFAULT, calls[k], 0, &dev);
    }
    int ok = rec_write(&b, d, &dev) == AT_OK;
    db_close(d);
    return ok;
}

/* Where text's line "test_oob SIZE: N evaluated" starts, NULL if none. */
static const char *rc_summary(const char *out, long long size)
{
    char key[64];
    snprintf(key, sizeof key, "test_oob %lld: ", size);
    for (const char *at = strstr(out, key); at; at = strstr(at + 1, key))
        if (strstr(at, " evaluated") && strstr(at, " evaluated") < strchr(at, '\n'))
            return at;
    return NULL;
}

/* --recorded tunes only the recorded problems, heaviest first, each
 * within --budget's evaluations; then they leave `show --wanted`. */
TEST(recorded_tune_order_budget_and_done)
{
    char path[4300], cmd[16384], *out = NULL;
    const long long sizes[] = {1000, 3000, 2000}, calls[] = {10, 1000, 100};
    CHECK(rc_record_fake("tune.db", path, sizeof path, sizes, calls, 3));
    snprintf(cmd, sizeof cmd, "%s/autotune show --wanted --db '%s'", th_build_dir(), path);
    CHECK_EQ(th_run(cmd, &out), 0);
    const char *a = strstr(out, "test_oob 3000"), *b = strstr(out, "test_oob 2000"),
               *c = strstr(out, "test_oob 1000");
    CHECK_MSG(a && b && c && a < b && b < c && strstr(out, "default"), "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --recorded --budget 3e --db '%s' "
             "--quiet --seed 1", th_build_dir(), th_build_dir(), path);
    CHECK_EQ(th_run(cmd, &out), 0);
    a = rc_summary(out, 3000);
    b = rc_summary(out, 2000);
    c = rc_summary(out, 1000);
    CHECK_MSG(a && b && c && a < b && b < c, "%s", out);
    CHECK_MSG(strstr(out, "tuning sizes") == NULL, "%s", out);   /* no default problems */
    free(out);
    /* the budget: at most 3 evaluations stored per problem, none elsewhere */
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result r JOIN problem p ON p.id = "
                              "r.problem_id WHERE p.d0 NOT IN (1000, 2000, 3000)"), 0);
    CHECK_EQ(th_sql_int(path, "SELECT max(n) FROM (SELECT count(*) AS n FROM result "
                              "GROUP BY problem_id)"), 3);
    snprintf(cmd, sizeof cmd, "%s/autotune show --wanted --db '%s'", th_build_dir(), path);
    CHECK_EQ(th_run(cmd, &out), 0);
    CHECK_MSG(strstr(out, "no recorded problem waits") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/autotune show --wanted --all --db '%s'", th_build_dir(), path);
    CHECK_EQ(th_run(cmd, &out), 0);
    CHECK_MSG(strstr(out, "yes") != NULL && strstr(out, "test_oob 3000"), "%s", out);
    free(out);
    /* nothing left: --recorded says so and tunes nothing */
    snprintf(cmd, sizeof cmd, "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --recorded --budget 3e --db '%s' "
             "--quiet --seed 1", th_build_dir(), th_build_dir(), path);
    CHECK_EQ(th_run(cmd, &out), 0);
    CHECK_MSG(strstr(out, "no recorded problem waits") && !strstr(out, "evaluated"), "%s", out);
    free(out);
}

/* A recorded GEMM call is tuned for every family the runtime chooses among for it (the one
 * that served it first), so the measurement decides which serves the shape; a call of
 * another family (a reduction) only for its own. */
TEST(recorded_gemm_call_tunes_every_candidate_family)
{
    char path[4300];
    db *d = rc_open("gemm_cands.db", DB_OPEN_CREATE, path, sizeof path);
    CHECK(d != NULL);
    at_device_info dev;
    rc_device(&dev, RC_FAKE_UUID, RC_FAKE_NAME);
    rec_batch b = {0};
    tpl_problem gemv = {.n_dims = 3, .dims = {8, 4096, 4096}, .dtype = AT_R_16BF};
    tpl_problem batch = {.n_dims = 3, .dims = {48, 48, 48}, .dtype = AT_R_64F, .batch = 500};
    tpl_problem sum = rc_problem1(100003);
    rec_add(&b, tpl_find("skinny"), &gemv, AT_LOOKUP_DEFAULT, 50, 0, &dev);
    rec_add(&b, tpl_find("bgemm"), &batch, AT_LOOKUP_DEFAULT, 20, 0, &dev);
    rec_add(&b, tpl_find("sum"), &sum, AT_LOOKUP_DEFAULT, 10, 0, &dev);
    CHECK_OK(rec_write(&b, d, &dev));
    db_close(d);
    tn_first *items = NULL;
    int n = 0;
    CHECK_EQ(tn_recorded_items(path, &items, &n), 0);
    const char *want[][2] = {
        {"skinny", "8x4096x4096:bf16"}, {"tcgemm", "8x4096x4096:bf16"},
        {"smallm", "8x4096x4096:bf16"},
        {"bgemm", "48x48x48:f64:b500"}, {"dgemm", "48x48x48:f64:b500"},
        {"skinny", "48x48x48:f64:b500"}, {"sum", "100003"},
    };
    CHECK_EQ(n, (int)(sizeof want / sizeof want[0]));
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int found = 0;
        for (int i = 0; i < n && !found; i++) {
            char text[128];
            tpl_problem_format(&items[i].problem, text, sizeof text);
            found = strcmp(items[i].fam->name, want[w][0]) == 0 && strcmp(text, want[w][1]) == 0;
        }
        CHECK_MSG(found, "no item %s %s", want[w][0], want[w][1]);
    }
    /* the family that served a call comes first among its problem's items */
    CHECK(n > 0 && strcmp(items[0].fam->name, "skinny") == 0);
    free(items);
}

/* The plain run tunes the recorded problems first, then the defaults. */
TEST(recorded_default_run_tunes_them_first)
{
    char path[4300], cmd[16384], *out = NULL;
    const long long sizes[] = {7777};
    const long long calls[] = {5};
    CHECK(rc_record_fake("first.db", path, sizeof path, sizes, calls, 1));
    const tpl_problem *def = &tpl_find("test_oob")->tuning_problems[0];
    snprintf(cmd, sizeof cmd, "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --budget 2e --db '%s' "
             "--quiet --seed 1", th_build_dir(), th_build_dir(), path);
    CHECK_EQ(th_run(cmd, &out), 0);
    const char *rec = rc_summary(out, 7777), *dflt = rc_summary(out, def->dims[0]);
    CHECK_MSG(rec && dflt && rec < dflt, "%s", out);
    free(out);
}

/* --problems: the file's lines in order (a kernel name optional), comments
 * and blank lines skipped; a bad line is a usage error naming file:line. */
TEST(recorded_problem_file)
{
    char path[4300], file[4300], cmd[16384], *out = NULL;
    snprintf(path, sizeof path, "%s/grid.db", th_tmpdir());
    snprintf(file, sizeof file, "%s/grid.txt", th_tmpdir());
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    fprintf(f, "# a grid\n\ntest_oob 2500\n   1500   # any selected kernel\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' "
             "%s/autotune-test --device 0 --kernel test_oob --problems '%s' --budget 2e "
             "--db '%s' --quiet --seed 1", th_build_dir(), th_build_dir(), file, path);
    CHECK_EQ(th_run(cmd, &out), 0);
    const char *a = rc_summary(out, 2500), *b = rc_summary(out, 1500);
    CHECK_MSG(a && b && a < b && !strstr(out, "tuning sizes"), "%s", out);
    free(out);
    CHECK_EQ(th_sql_int(path, "SELECT count(DISTINCT problem_id) FROM result"), 2);
    f = fopen(file, "w");
    CHECK(f != NULL);
    fprintf(f, "test_oob 2500\nnokernel 12\n");
    fclose(f);
    CHECK_EQ(th_run(cmd, &out), 2);
    CHECK_MSG(strstr(out, "grid.txt:2: unknown kernel 'nokernel'") != NULL, "%s", out);
    free(out);
}

/* A database with six results of sum at 1<<22 on grid (NULL: an H200) (five ok at
 * 0.05 .. 0.01 ms, the last the best, one wrong and faster), exported with
 * --configs-only --shipped into json; the six configurations in cfg_text.
 * 1 if done. */
static int rc_shipped_json(const char *name, const at_device_info *grid, char *json, size_t len,
                           char cfg_text[6][TPL_CONFIG_LEN])
{
    char src[4300], db_name[64], cmd[20000], *out = NULL;
    snprintf(db_name, sizeof db_name, "%s.db", name);
    db *d = rc_open(db_name, DB_OPEN_CREATE, src, sizeof src);
    if (!d)
        return 0;
    at_device_info h200;
    rc_device(&h200, "GPU-h200-grid", "NVIDIA H200");
    if (grid)
        h200 = *grid;
    int ok = db_put_device(d, &h200, tpl_nvrtc_version()) == AT_OK;
    const tpl_family *fam = tpl_find("sum");
    long long *valid = NULL;
    long long n_valid = tpl_valid_configs(fam, &h200, &valid);
    ok = ok && n_valid >= 6;
    for (int k = 0; ok && k < 6; k++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, valid[k * (n_valid / 6)], cfg);
        tpl_config_format(fam, cfg, cfg_text[k], TPL_CONFIG_LEN);
        db_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", h200.uuid);
        snprintf(r.kernel, sizeof r.kernel, "sum");
        snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
        r.problem = rc_problem1(1 << 22);
        snprintf(r.config, sizeof r.config, "%.500s", cfg_text[k]);
        snprintf(r.status, sizeof r.status, "%s", k == 5 ? DB_WRONG_RESULT : DB_OK);
        r.time_ms = k == 5 ? 0.001 : 0.01 * (5 - k);
        r.rel_error = k == 5 ? 0.5 : 1e-7;
        r.runs = 5;
        snprintf(r.binary_key, sizeof r.binary_key, "somekey%d", k);
        ok = db_store_result(d, &r) == AT_OK;
    }
    free(valid);
    db_close(d);
    snprintf(json, len, "%s/%s.json", th_tmpdir(), name);
    snprintf(cmd, sizeof cmd, "%s/autotune export --db '%s' --configs-only --shipped -o '%s'",
             th_build_dir(), src, json);
    if (ok && th_run(cmd, &out) != 0) {
        th_fail(__FILE__, __LINE__, "export failed: %s", out ? out : "");
        ok = 0;
    }
    free(out);
    return ok;
}

/* export --configs-only --shipped keeps the best verified rows per problem
 * and no cubin; ship-build makes a read-only database with the best
 * compiled; a handle's layers serve it: exact for the problem on a GPU of
 * the model, the model's nearest for another size. */
TEST(recorded_shipped_round_trip)
{
    char json[4300], out_db[4300], cmd[40000], *out = NULL, err[512];
    char cfg_text[6][TPL_CONFIG_LEN];
    CHECK(rc_shipped_json("ship", NULL, json, sizeof json, cfg_text));
    at_device_info user;
    rc_device(&user, "GPU-h200-user", "NVIDIA H200");
    const tpl_family *fam = tpl_find("sum");
    snprintf(out_db, sizeof out_db, "%s/share/shipped.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/share'", th_tmpdir());
    CHECK_EQ(th_run(cmd, &out), 0);
    free(out);
    FILE *f = fopen(json, "r");
    CHECK(f != NULL);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    int n_results = 0;
    for (const char *p = strstr(text, "\"kernel\": \"sum\""); p; p = strstr(p + 1, "\"kernel\": \"sum\""))
        n_results++;
    CHECK_EQ(n_results, 3);                              /* the best three ok, verified */
    CHECK(strstr(text, "somekey") == NULL && strstr(text, "\"data\"") == NULL);
    CHECK(strstr(text, "wrong_result") == NULL);
    snprintf(cmd, sizeof cmd, "%s/autotune ship-build '%s' -o '%s' --jobs 2", th_build_dir(),
             json, out_db);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
    free(out);
    struct stat sb;
    CHECK(stat(out_db, &sb) == 0 && (sb.st_mode & 0222) == 0);
    db *shipped = NULL;
    CHECK_OK(db_open(&shipped, out_db, DB_OPEN_SHIPPED, err, sizeof err));
    int best_cfg[TPL_MAX_PARAMS];
    CHECK_OK(tpl_config_parse(fam, cfg_text[4], best_cfg, err, sizeof err));
    char key[128];
    tpl_binary_key(fam, best_cfg, "sm_90", key, sizeof key);
    CHECK_EQ(db_has_binary(shipped, key), 1);
    /* the layers of a handle on another H200: the user's empty database first */
    char user_path[4300];
    db *mine = rc_open("ship-user.db", DB_OPEN_CREATE, user_path, sizeof user_path);
    CHECK(mine != NULL);
    db *layers[2] = {mine, shipped};
    int cfg[TPL_MAX_PARAMS], which = -1;
    char config[TPL_CONFIG_LEN];
    tpl_problem p = rc_problem1(1 << 22);
    CHECK_EQ(lk_choose_layers(layers, 2, &user, fam, &p, 0, cfg, config, &which),
             AT_LOOKUP_EXACT);
    CHECK_STR(config, cfg_text[4]);
    CHECK_EQ(which, 1);
    p = rc_problem1(3 << 20);
    CHECK_EQ(lk_choose_layers(layers, 2, &user, fam, &p, 0, cfg, config, &which),
             AT_LOOKUP_NEAREST);            /* another H200's nearest size: this model's */
    CHECK_STR(config, cfg_text[4]);
    db_close(mine);
    db_close(shipped);
    /* a file that is not an export: refused, the output left as it was */
    snprintf(cmd, sizeof cmd, "echo '{\"format\": 1}' > '%s' && %s/autotune ship-build '%s' "
             "-o '%s'", json, th_build_dir(), json, out_db);
    CHECK(th_run(cmd, &out) == 1);
    free(out);
    CHECK(stat(out_db, &sb) == 0);
}

/* The shipped file as it is in the tree (share/hopper.json, made from share/grid-hopper.txt on
 * an H200: docs/recording.md): at most 1 MB, read whole as an import is, every result an ok
 * configuration its family accepts and compiles for sm_90 and of its family's current source
 * (lookups never serve a result of another source version), and every problem of the grid
 * tuned by at least one family the runtime would serve it with. A grid line added without
 * tuning it, a kernel change that makes shipped configurations invalid, or a kernel source
 * changed without re-tuning the shipped file (or re-keying it where the change cannot alter
 * the shipped problems' timings: docs/recording.md) fails here. */
TEST(recorded_shipped_file_covers_its_grid)
{
    const char *json = "share/hopper.json", *grid = "share/grid-hopper.txt";
    struct stat st;
    CHECK_MSG(stat(json, &st) == 0, "%s: missing", json);
    CHECK_MSG(st.st_size > 0 && st.st_size <= 1000000, "%s: %lld bytes (at most 1 MB)", json,
              (long long)st.st_size);
    char *text = malloc((size_t)st.st_size + 1);
    CHECK(text != NULL);
    FILE *f = fopen(json, "r");
    size_t len = f ? fread(text, 1, (size_t)st.st_size, f) : 0;
    if (f)
        fclose(f);
    text[len] = '\0';
    char err[512] = "", path[4300];
    db_import *im = NULL;
    at_status s = db_import_read(text, len, &im, err, sizeof err);
    free(text);
    CHECK_MSG(s == AT_OK, "%s: %s", json, err);
    db *d = rc_open("shipped-file", DB_OPEN_CREATE, path, sizeof path);
    db_import_stats ist;
    CHECK_OK(db_import_apply(d, im, &ist));
    db_import_free(im);
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, NULL, NULL, &rs, &n));
    CHECK_MSG(n > 0, "%s: no results", json);
    int stale = 0;
    for (int i = 0; i < n; i++) {
        const tpl_family *fam = tpl_find(rs[i].kernel);
        int cfg[TPL_MAX_PARAMS];
        char why[256] = "";
        CHECK_MSG(fam != NULL, "result %d: unknown kernel %s", i, rs[i].kernel);
        CHECK_MSG(strcmp(rs[i].status, DB_OK) == 0, "%s %s: status %s", rs[i].kernel,
                  rs[i].config, rs[i].status);
        CHECK_MSG(tpl_config_parse(fam, rs[i].config, cfg, why, sizeof why) == AT_OK,
                  "%s %s: %s", rs[i].kernel, rs[i].config, why);
        CHECK_MSG(fam->valid(cfg, NULL, why, sizeof why) && tpl_target_arch(fam, cfg, "sm_90"),
                  "%s %s: not valid for sm_90 (%s)", rs[i].kernel, rs[i].config, why);
        if (strcmp(rs[i].source_hash, tpl_source_hash(fam)) != 0 && stale++ < 3)
            printf("    %s: %s results are of source %s, %s is %s now: never served\n", json,
                   rs[i].kernel, rs[i].source_hash, fam->source, tpl_source_hash(fam));
    }
    CHECK_MSG(stale == 0, "%s: %d results of another source version (docs/recording.md: "
              "re-tune, or re-key where the change cannot alter their timings)", json, stale);
    tn_options o;
    memset(&o, 0, sizeof o);
    tn_first *items = NULL;
    int n_items = 0;
    CHECK_EQ(tn_problem_file_items(grid, &o, &items, &n_items), 0);
    CHECK(n_items > 0);
    int problems = 0, missing = 0;
    for (int i = 0; i < n_items; i++) {
        char want[256], got[256];
        tpl_problem_format(&items[i].problem, want, sizeof want);
        int first_of_problem = 1, covered = 0;
        for (int j = 0; j < i && first_of_problem; j++) {
            tpl_problem_format(&items[j].problem, got, sizeof got);
            first_of_problem = strcmp(got, want) != 0;
        }
        if (!first_of_problem)
            continue;
        problems++;
        /* any family the file tunes this problem with */
        for (int j = i; j < n_items && !covered; j++) {
            tpl_problem_format(&items[j].problem, got, sizeof got);
            if (strcmp(got, want) != 0)
                continue;
            for (int r = 0; r < n && !covered; r++) {
                tpl_problem_format(&rs[r].problem, got, sizeof got);
                covered = strcmp(rs[r].kernel, items[j].fam->name) == 0 && strcmp(got, want) == 0;
            }
        }
        if (!covered && missing++ < 10)
            printf("    %s: no result for %s\n", json, want);
    }
    free(items);
    free(rs);
    db_close(d);
    CHECK_MSG(missing == 0, "%d of the grid's %d problems have no result in %s", missing, problems,
              json);
    printf("    %d results, the grid's %d problems each tuned\n", n, problems);
}

/* `make install SHIPPED_JSON=...` installs the file and the read-only
 * database built from it where the runtime looks (PREFIX/share/autotune). */
TEST(recorded_make_install_builds_the_shipped_database)
{
    char json[4300], prefix[4300], path[4400], cmd[40000], *out = NULL, err[512];
    char cfg_text[6][TPL_CONFIG_LEN];
    CHECK(rc_shipped_json("install", NULL, json, sizeof json, cfg_text));
    snprintf(prefix, sizeof prefix, "%s/prefix", th_tmpdir());
    snprintf(cmd, sizeof cmd, "make -s install BUILD=%s PREFIX='%s' SHIPPED_JSON='%s'",
             th_build_dir(), prefix, json);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out ? out : "");
    free(out);
    struct stat sb;
    snprintf(path, sizeof path, "%s/share/autotune/shipped.json", prefix);
    CHECK(stat(path, &sb) == 0);
    snprintf(path, sizeof path, "%s/share/autotune/grid-hopper.txt", prefix);
    CHECK(stat(path, &sb) == 0);
    snprintf(path, sizeof path, "%s/share/autotune/tuning.db", prefix);
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0222) == 0);
    db *d = NULL;
    CHECK_OK(db_open(&d, path, DB_OPEN_SHIPPED, err, sizeof err));
    db_result *r = NULL;
    int n = 0;
    CHECK_OK(db_results(d, NULL, "sum", &r, &n));
    CHECK_EQ(n, 3);
    free(r);
    db_close(d);
}

/* ---- through the library on a GPU ---- */

/* A context current on the test's device and n floats of device memory
 * (x: ones, r: one result); 0 if the device cannot give them. */
static int rc_gpu_begin(const cudrv **cu, CUdevice *dev, CUcontext *ctx, CUdeviceptr *x,
                        CUdeviceptr *r, long long n)
{
    at_status s;
    *cu = cudrv_get(&s, NULL, 0);
    if (!*cu || (*cu)->Init(0) != CUDA_SUCCESS || (*cu)->DeviceGet(dev, th_device()) !=
        CUDA_SUCCESS || (*cu)->DevicePrimaryCtxRetain(ctx, *dev) != CUDA_SUCCESS ||
        (*cu)->CtxPushCurrent(*ctx) != CUDA_SUCCESS)
        return 0;
    float *ones = malloc((size_t)n * sizeof *ones);
    for (long long i = 0; ones && i < n; i++)
        ones[i] = 1.0f;
    int ok = ones && (*cu)->MemAlloc(x, (size_t)n * sizeof(float)) == CUDA_SUCCESS &&
             (*cu)->MemAlloc(r, 16) == CUDA_SUCCESS &&
             (*cu)->MemcpyHtoD(*x, ones, (size_t)n * sizeof(float)) == CUDA_SUCCESS;
    free(ones);
    return ok;
}

static void rc_gpu_end(const cudrv *cu, CUdevice dev, CUdeviceptr x, CUdeviceptr r)
{
    CUcontext popped;
    cu->MemFree(x);
    cu->MemFree(r);
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(dev);
}

/* A handle's calls served below the exact level are in its database after
 * at_destroy, counted, and a second handle's add up (a read-only database
 * records nothing: the CPU test above, as root cannot make one here). */
GPU_TEST(recorded_by_the_library_at_destroy)
{
    const cudrv *cu;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr x = 0, r = 0;
    const long long n = 100003;
    CHECK(rc_gpu_begin(&cu, &dev, &ctx, &x, &r, n));
    char path[4300];
    snprintf(path, sizeof path, "%s/lib-record.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    for (int i = 0; i < 7; i++)
        CHECK_OK(at_ssum(h, n, (const float *)x, (float *)r));
    for (int i = 0; i < 2; i++)
        CHECK_OK(at_sdot(h, 5000, (const float *)x, (const float *)x, (float *)r));
    at_stats st;
    CHECK_OK(at_get_stats(h, &st));
    CHECK(st.last_level > AT_LOOKUP_EXACT);
    CHECK_OK(at_destroy(h));
    CHECK_EQ(th_sql_int(path, "SELECT calls FROM recorded WHERE kernel = 'sum' AND d0 = 100003"),
             7);
    CHECK_EQ(th_sql_int(path, "SELECT calls FROM recorded WHERE kernel = 'dot' AND d0 = 5000"), 2);
    CHECK(th_sql_int(path, "SELECT count(*) FROM recorded WHERE time_ms > 0") == 2);
    /* a second handle adds to the counts */
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_ssum(h, n, (const float *)x, (float *)r));
    CHECK_OK(at_destroy(h));
    CHECK_EQ(th_sql_int(path, "SELECT calls FROM recorded WHERE kernel = 'sum' AND d0 = 100003"),
             8);
    rc_gpu_end(cu, dev, x, r);
}

/* A shipped database named by $AUTOTUNE_SHIPPED_DB, tuned (here: written) on
 * another GPU of this model, serves a handle whose own database is empty, at
 * the exact level, with its stored cubin (no compile). */
GPU_TEST(recorded_shipped_database_serves_a_fresh_handle)
{
    char json[4300], shipped[4300], user[4300], cmd[40000], *out = NULL, msg[256];
    char cfg_text[6][TPL_CONFIG_LEN];
    at_status ds;
    const cudrv *drv = cudrv_get(&ds, NULL, 0);
    at_device_info info, grid;
    CHECK(drv && cudrv_device_info(drv, th_device(), &info, msg, sizeof msg) == AT_OK);
    grid = info;
    snprintf(grid.uuid, sizeof grid.uuid, "GPU-another-of-the-model");
    CHECK(rc_shipped_json("served", &grid, json, sizeof json, cfg_text));
    snprintf(shipped, sizeof shipped, "%s/served-shipped.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune ship-build '%s' -o '%s'", th_build_dir(), json,
             shipped);
    CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
    free(out);
    const cudrv *cu;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr x = 0, r = 0;
    const long long n = 1 << 22;
    CHECK(rc_gpu_begin(&cu, &dev, &ctx, &x, &r, n));
    snprintf(user, sizeof user, "%s/served-user.db", th_tmpdir());
    setenv("AUTOTUNE_SHIPPED_DB", shipped, 1);
    at_handle *h = NULL;
    at_status s = at_create(&h, th_device(), user);
    unsetenv("AUTOTUNE_SHIPPED_DB");
    CHECK_OK(s);
    CHECK_OK(at_ssum(h, n, (const float *)x, (float *)r));
    float sum = 0;
    CHECK(cu->MemcpyDtoH(&sum, r, sizeof sum) == CUDA_SUCCESS);
    CHECK(sum == (float)n);
    at_stats st;
    CHECK_OK(at_get_stats(h, &st));
    CHECK_EQ(st.last_level, AT_LOOKUP_EXACT);
    CHECK_EQ(st.compiled, 0);
    CHECK_STR(st.last_config, cfg_text[4]);
    CHECK_OK(at_destroy(h));
    rc_gpu_end(cu, dev, x, r);
}
