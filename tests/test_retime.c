/* test_retime.c: CPU tests of the sustained re-timing (issue 16): schema
 * version 3 and its migration, the one ranking rule (db_rank_ms / DB_RANK)
 * in the lookup, gc's keep list, merge and export/import, and the tuner's
 * re-timing step with the fake worker (hot=CONFIG: slower under load). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "th_sql.h"
#include "th_compile.h"
#include "measure.h"
#include "lookup.h"
#include "tn.h"
#include "tpl.h"
#include "tune_core.h"

#define RT_UUID "GPU-fa4e0000-0000-0000-0000-000000000000"
#define RT_N 4
#define RT_N_SETTLED 8               /* configurations re-timed in a family with a settle */

/* ---- fixtures ---- */

static at_device_info rt_device(const char *uuid)
{
    at_device_info i;
    memset(&i, 0, sizeof i);
    snprintf(i.name, sizeof i.name, "Fake GPU (autotune tests)");
    snprintf(i.uuid, sizeof i.uuid, "%s", uuid);
    snprintf(i.arch, sizeof i.arch, "sm_90");
    i.cc_major = 9;
    i.sm_count = 132;
    i.memory_bytes = 80ll << 30;
    i.l2_bytes = 50 << 20;
    i.smem_per_block_optin = 227 << 10;
    i.smem_per_sm = 228 << 10;
    i.regs_per_block = i.regs_per_sm = 65536;
    i.max_threads_per_block = 1024;
    i.max_threads_per_sm = 2048;
    return i;
}

/* The first RT_N valid configurations of test_wide, as text. */
static int rt_configs(const tpl_family *fam, char cfgs[RT_N][TPL_CONFIG_LEN])
{
    long long *valid = NULL;
    at_device_info dev = rt_device(RT_UUID);
    long long n = tpl_valid_configs(fam, &dev, &valid);
    for (int k = 0; k < RT_N && k < n; k++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, valid[k], cfg);
        tpl_config_format(fam, cfg, cfgs[k], TPL_CONFIG_LEN);
    }
    free(valid);
    return n >= RT_N;
}

/* Every row's id, sustained time and rank as one malloc'd text. */
static char *rt_text(const char *path)
{
    sqlite3 *h = NULL;
    char *out = NULL;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, "SELECT group_concat(id || ':' || ifnull(sustained_ms, '-') "
                                  "|| ':' || ifnull(rank_ms, '-'), ' ') FROM "
                                  "(SELECT * FROM result ORDER BY id)", -1, &st, NULL) ==
            SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
                out = strdup((const char *)sqlite3_column_text(st, 0));
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(h);
    return out;
}

/* A database at path with the device and test_wide 1000003's four rows
 * (times 1.00, 1.03, 1.10, 1.20 ms, each with a cubin of its own); their
 * ids in ids. NULL on failure. */
static db *rt_fixture(const char *path, char cfgs[RT_N][TPL_CONFIG_LEN], long long *ids)
{
    static const double times[RT_N] = {1.00, 1.03, 1.10, 1.20};
    const tpl_family *fam = tpl_find("test_wide");
    char err[512];
    db *d = NULL;
    at_device_info dev = rt_device(RT_UUID);
    if (!fam || !rt_configs(fam, cfgs) || db_open(&d, path, DB_OPEN_CREATE, err,
                                                  sizeof err) != AT_OK ||
        db_put_device(d, &dev, "13.0") != AT_OK) {
        db_close(d);
        return NULL;
    }
    for (int k = 0; k < RT_N; k++) {
        db_result r;
        memset(&r, 0, sizeof r);
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", RT_UUID);
        snprintf(r.kernel, sizeof r.kernel, "%s", fam->name);
        snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(fam));
        tpl_problem_parse("1000003", &r.problem, err, sizeof err);
        snprintf(r.config, sizeof r.config, "%s", cfgs[k]);
        snprintf(r.status, sizeof r.status, "%s", DB_OK);
        r.time_ms = r.time_min_ms = r.time_max_ms = times[k];
        r.runs = 5;
        r.gbs = 1.0 / times[k];
        r.rel_error = 1e-7;
        snprintf(r.binary_key, sizeof r.binary_key, "key%d", k);
        char cubin[16];
        snprintf(cubin, sizeof cubin, "cubin%d", k);
        if (db_store_result(d, &r) != AT_OK ||
            db_put_binary(d, r.binary_key, fam->name, r.source_hash, cfgs[k], "sm_90", "13.0",
                          "", cubin, strlen(cubin)) != AT_OK) {
            db_close(d);
            return NULL;
        }
        ids[k] = r.id;
    }
    return d;
}

/* The configuration the lookup serves for test_wide 1000003 on the fake
 * device ("" if none exactly). */
static void rt_lookup(db *d, char *config)
{
    tpl_problem p;
    char err[256];
    int cfg[TPL_MAX_PARAMS];
    at_device_info dev = rt_device(RT_UUID);
    tpl_problem_parse("1000003", &p, err, sizeof err);
    if (lk_choose(d, &dev, tpl_find("test_wide"), &p, 0, cfg, config) != AT_LOOKUP_EXACT)
        config[0] = '\0';
}

/* ---- the ranking rule in every consumer ---- */

/* Rows 0 and 1 re-timed (1 faster sustained): each consumer of "best"
 * prefers row 1; rows never re-timed keep their order by time. */
TEST(retime_rank_rule_in_lookup_gc_merge_export)
{
    char path[4300], cfgs[RT_N][TPL_CONFIG_LEN], config[TPL_CONFIG_LEN], err[512];
    long long ids[RT_N];
    snprintf(path, sizeof path, "%s/a.db", th_tmpdir());
    db *d = rt_fixture(path, cfgs, ids);
    CHECK(d);
    rt_lookup(d, config);
    CHECK_STR(config, cfgs[0]);                        /* never re-timed: by time */
    tpl_problem p1, p2;
    CHECK_OK(tpl_problem_parse("1000003", &p1, err, sizeof err));
    CHECK_OK(tpl_problem_parse("250007", &p2, err, sizeof err));
    /* sustained 1.30 and 1.20 ms: ranks 1.00 x 1.30 / 1.20 and 1.00 */
    const char *uuids[] = {RT_UUID};
    const double sus[2] = {1.30, 1.20}, rank[2] = {1.00 * 1.30 / 1.20, 1.00};
    CHECK_OK(db_store_sustained(d, uuids, 1, "test_wide", tpl_source_hash(tpl_find("test_wide")),
                                &p1, ids, sus, rank,
                                2));
    rt_lookup(d, config);
    CHECK_STR(config, cfgs[1]);
    db_result *c = NULL;
    int n = 0;
    CHECK_OK(db_candidates(d, RT_UUID, NULL, "test_wide", NULL, NULL, 0, 0, &c, &n));
    /* by rank: row 1 (1.00), row 0 (1.0833), row 2 (1.10), row 3 (1.20) */
    int want[RT_N] = {1, 0, 2, 3};
    CHECK_EQ(n, RT_N);
    for (int k = 0; k < RT_N; k++)
        CHECK_MSG(strcmp(c[k].config, cfgs[want[k]]) == 0, "candidate %d: %s", k, c[k].config);
    CHECK(fabs(c[0].sustained_ms - 1.20) < 1e-12 && fabs(c[0].rank_ms - 1.00) < 1e-12);
    CHECK(c[2].sustained_ms == 0 && c[2].rank_ms == 0 && db_rank_ms(&c[2]) == 1.10);
    free(c);
    /* gc keeps the one best cubin: row 1's */
    db_gc_stats gs;
    CHECK_OK(db_gc_binaries(d, 1, 0, 0, &gs));
    CHECK_EQ(db_has_binary(d, "key1"), 1);
    CHECK_EQ(db_has_binary(d, "key0"), 0);
    /* export, import into a new database: the same winner */
    char json[4300], imported[4300], merged[4300];
    snprintf(json, sizeof json, "%s/x.json", th_tmpdir());
    FILE *f = fopen(json, "w");
    CHECK(f);
    long long nr = 0, nc = 0;
    CHECK_OK(db_export(d, NULL, f, &nr, &nc));
    fclose(f);
    CHECK_EQ(nr, RT_N);
    f = fopen(json, "r");
    CHECK(f);
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    CHECK(strstr(buf, "\"rank_ms\": 1}"));
    /* only the two re-timed rows carry the members */
    int members = 0;
    for (const char *q = strstr(buf, "\"sustained_ms\""); q; q = strstr(q + 1, "\"sustained_ms\""))
        members++;
    CHECK_EQ(members, 2);
    db_import *im = NULL;
    CHECK_MSG(db_import_read(buf, len, &im, err, sizeof err) == AT_OK, "import: %s", err);
    snprintf(imported, sizeof imported, "%s/i.db", th_tmpdir());
    db *di = NULL;
    CHECK_OK(db_open(&di, imported, DB_OPEN_CREATE, err, sizeof err));
    db_import_stats ist;
    CHECK_OK(db_import_apply(di, im, &ist));
    db_import_free(im);
    rt_lookup(di, config);
    CHECK_STR(config, cfgs[1]);
    /* merge into a database holding row 0 again, measured faster, never
     * re-timed: the re-timed row is kept and row 1 stays the best */
    snprintf(merged, sizeof merged, "%s/m.db", th_tmpdir());
    char cf2[RT_N][TPL_CONFIG_LEN];
    long long ids2[RT_N];
    db *dm = rt_fixture(merged, cf2, ids2);
    CHECK(dm);
    db_merge_stats ms;
    CHECK_OK(db_merge(dm, d, &ms));
    rt_lookup(dm, config);
    CHECK_STR(config, cfgs[1]);
    CHECK_EQ(th_sql_int(merged, "SELECT count(*) FROM result WHERE rank_ms IS NOT NULL"), 2);
    /* a new re-timing of other rows clears the old ranks: row 0 leads again */
    const double sus2[1] = {1.5}, rank2[1] = {1.10};
    CHECK_OK(db_store_sustained(d, uuids, 1, "test_wide", NULL,
                                &p1, &ids[2], sus2,
                                rank2, 1));
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result WHERE rank_ms IS NOT NULL"), 1);
    rt_lookup(d, config);
    CHECK_STR(config, cfgs[0]);
    /* an id of another problem is refused, nothing changed */
    CHECK(db_store_sustained(d, uuids, 1, "test_wide", NULL,
                             &p2, &ids[1], sus2,
                             rank2, 1) != AT_OK);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result WHERE rank_ms IS NOT NULL"), 1);
    db_close(di);
    db_close(dm);
    db_close(d);
}

/* A version 2 database (the columns dropped, the version set back) is
 * migrated in place, its rows and ranking kept, or read through views. */
TEST(retime_migrates_version_2)
{
    char path[4300], ro[4300], cfgs[RT_N][TPL_CONFIG_LEN], config[TPL_CONFIG_LEN], err[512];
    long long ids[RT_N];
    snprintf(path, sizeof path, "%s/v2.db", th_tmpdir());
    db *d = rt_fixture(path, cfgs, ids);
    CHECK(d);
    db_close(d);
    CHECK_EQ(th_sql_exec(path, "ALTER TABLE result DROP COLUMN sustained_ms; "
                               "ALTER TABLE result DROP COLUMN rank_ms; PRAGMA user_version = 2; "
                               "UPDATE meta SET value = '2' WHERE key = 'schema_version'"),
             SQLITE_OK);
    snprintf(ro, sizeof ro, "%s/v2ro.db", th_tmpdir());
    char cmd[9000], *out = NULL;
    snprintf(cmd, sizeof cmd, "cp %s %s", path, ro);
    CHECK_EQ(th_run(cmd, &out), 0);
    free(out);
    /* read-only: version 2 read as 3 (no rank), nothing written */
    CHECK_OK(db_open(&d, ro, DB_OPEN_READONLY, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, cfgs[0]);
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, NULL, NULL, &rs, &n));
    CHECK_EQ(n, RT_N);
    CHECK(rs[0].rank_ms == 0 && rs[0].sustained_ms == 0);
    free(rs);
    db_close(d);
    CHECK_EQ(th_sql_int(ro, "PRAGMA user_version"), 2);
    /* writable: migrated to 3 */
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    db_close(d);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM meta WHERE key = 'migrated_2_to_3'"), 1);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result WHERE rank_ms IS NULL AND "
                              "sustained_ms IS NULL"), RT_N);
    CHECK_OK(db_open(&d, path, DB_OPEN_EXISTING, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, cfgs[0]);
    db_close(d);
}

/* ---- the tuner's step with the fake worker ---- */

/* One configuration and the fake's short time of it. */
typedef struct rt_timed { double t; char text[TPL_CONFIG_LEN]; } rt_timed;

static int rt_by_time(const void *a, const void *b)
{
    const rt_timed *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* The fake's short times (tn_fake_time) of test_wide's valid configurations:
 * the re-timed set (within `within` of the best, at most max, fastest
 * first) into set, its size returned; the sustained winner (hot ones 1.25x,
 * the others 1.05x: tuner/fake_worker.c) given `hot` in *win. */
static int rt_expected_within(const char *hot, char set[][TPL_CONFIG_LEN], int *win,
                              double within, int max)
{
    const tpl_family *fam = tpl_find("test_wide");
    long long *valid = NULL;
    at_device_info dev = rt_device(RT_UUID);
    long long n = tpl_valid_configs(fam, &dev, &valid);
    rt_timed *all = calloc((size_t)(n > 0 ? n : 1), sizeof *all);
    for (long long i = 0; all && i < n; i++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, valid[i], cfg);
        tpl_config_format(fam, cfg, all[i].text, sizeof all[i].text);
        all[i].t = tn_fake_time(all[i].text);
    }
    free(valid);
    if (!all || n < 1) {
        free(all);
        return 0;
    }
    qsort(all, (size_t)n, sizeof *all, rt_by_time);
    int k = 0;
    double best = INFINITY;
    *win = 0;
    while (k < max && k < n && all[k].t <= all[0].t * within) {
        snprintf(set[k], TPL_CONFIG_LEN, "%s", all[k].text);
        double sustained = all[k].t * (hot && strcmp(all[k].text, hot) == 0 ? 1.25 : 1.05);
        if (sustained < best) {
            best = sustained;
            *win = k;
        }
        k++;
    }
    free(all);
    return k;
}

static int rt_expected(const char *hot, char set[RT_N][TPL_CONFIG_LEN], int *win)
{
    return rt_expected_within(hot, set, win, 1.08, RT_N);
}

/* Runs the fake tuner on test_wide 1000003 into dbpath with more
 * environment; its exit status, output in *out. */
static int rt_tune(const char *dbpath, const char *env, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' %s %s/autotune-test --device 0 "
             "--kernel test_wide --size 1000003 --db %s --seed 3 --quiet 2>&1",
             th_build_dir(), env, th_build_dir(), dbpath);
    return th_run(cmd, out);
}

/* rt_tune into a fresh database `name` with $AUTOTUNE_FAKE=fake, and with
 * settle a 100 ms settle ($AUTOTUNE_RETIME_SETTLE_MS: test_wide has none);
 * the configuration the lookup then serves into config. Its exit status,
 * or -1 if the database cannot be read; output in *out. */
static int rt_tune_settled(const char *name, int settle, const char *fake, char **out,
                           char *config)
{
    char dbpath[4300], env[4096], err[512];
    snprintf(dbpath, sizeof dbpath, "%s/%s.db", th_tmpdir(), name);
    snprintf(env, sizeof env, "%sAUTOTUNE_FAKE='%s'", settle ? "AUTOTUNE_RETIME_SETTLE_MS=100 " : "",
             fake);
    int rc = rt_tune(dbpath, env, out);
    db *d = NULL;
    config[0] = '\0';
    if (db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err) != AT_OK)
        return -1;
    rt_lookup(d, config);
    db_close(d);
    return rc;
}

TEST(retime_fake_sustained_winner_takes_the_rank)
{
    char set[RT_N][TPL_CONFIG_LEN], dbpath[4300], env[4096], config[TPL_CONFIG_LEN], err[512];
    int win = 0;
    int k = rt_expected(NULL, set, &win);
    CHECK_MSG(k >= 2, "the fake's test_wide has %d configurations within 8%%", k);
    /* the short-timing winner is slower under load: the next one wins */
    rt_expected(set[0], set, &win);
    CHECK(win != 0);
    snprintf(dbpath, sizeof dbpath, "%s/hot.db", th_tmpdir());
    snprintf(env, sizeof env, "AUTOTUNE_FAKE='hot=%s'", set[0]);
    char *out = NULL;
    CHECK_EQ(rt_tune(dbpath, env, &out), 0);
    char line[256];
    snprintf(line, sizeof line, "sustained re-timing of %d configurations", k);
    CHECK_MSG(out && strstr(out, line) && strstr(out, "the short-timing winner ("), "%s",
              out ? out : "");
    free(out);
    db *d = NULL;
    CHECK_OK(db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, set[win]);
    db_result best;
    tpl_problem p;
    tpl_problem_parse("1000003", &p, err, sizeof err);
    CHECK_OK(db_best(d, RT_UUID, "test_wide", NULL, &p, 0, &best));
    CHECK_STR(best.config, set[win]);
    /* its rank is the best short time; the sustained time 1.05x its own */
    CHECK(fabs(best.rank_ms - tn_fake_time(set[0])) < 1e-9 * best.rank_ms);
    CHECK(fabs(best.sustained_ms - 1.05 * tn_fake_time(set[win])) < 1e-9);
    db_close(d);
    CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM result WHERE rank_ms IS NOT NULL"), k);
    /* run again: stored, nothing re-timed, nothing changed */
    char *ranks = rt_text(dbpath), *ranks2 = NULL;
    snprintf(env, sizeof env, "AUTOTUNE_FAKE='hot=%s'", set[0]);
    CHECK_EQ(rt_tune(dbpath, env, &out), 0);
    CHECK_MSG(out && !strstr(out, "sustained re-timing"), "%s", out ? out : "");
    free(out);
    ranks2 = rt_text(dbpath);
    int same = ranks && ranks2 && strcmp(ranks, ranks2) == 0;
    free(ranks);
    free(ranks2);
    CHECK(same);
}

/* A lead the rounds disagree on (faster by the median, in 3 of 5 rounds)
 * does not displace the short-timing winner. */
TEST(retime_fake_inconsistent_lead_keeps_the_order)
{
    char set[RT_N][TPL_CONFIG_LEN], dbpath[4300], env[4096], config[TPL_CONFIG_LEN], err[512];
    int win = 0;
    int k = rt_expected(NULL, set, &win);
    CHECK(k >= 2);
    /* 0.95x of its short time beats the winner's 1.05x by the median */
    CHECK(0.95 * tn_fake_time(set[1]) < 1.05 * tn_fake_time(set[0]));
    snprintf(dbpath, sizeof dbpath, "%s/flaky.db", th_tmpdir());
    snprintf(env, sizeof env, "AUTOTUNE_FAKE='flaky=%s'", set[1]);
    char *out = NULL;
    CHECK_EQ(rt_tune(dbpath, env, &out), 0);
    CHECK_MSG(out && strstr(out, "the short-timing winner stays first (1 faster by the median"),
              "%s", out ? out : "");
    free(out);
    db *d = NULL;
    CHECK_OK(db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, set[0]);
    db_result *c = NULL;
    int n = 0;
    CHECK_OK(db_candidates(d, RT_UUID, NULL, "test_wide", NULL, NULL, 2, 0, &c, &n));
    /* the flaky one: its measured median stored, ranked right behind */
    CHECK(n == 2 && strcmp(c[1].config, set[1]) == 0);
    CHECK(fabs(c[1].sustained_ms - 0.95 * tn_fake_time(set[1])) < 1e-9);
    CHECK(c[1].rank_ms > c[0].rank_ms && c[1].rank_ms < c[0].rank_ms * 1.0001);
    free(c);
    db_close(d);
}

/* A clear lead the noise cost one round (faster in 4 of 5, by a median
 * beyond 2%) displaces the short-timing winner; 4 of 5 with a smaller lead
 * would not (tuner/retime.c's displaces()). */
TEST(retime_fake_clear_lead_in_four_rounds_displaces)
{
    char set[RT_N][TPL_CONFIG_LEN], dbpath[4300], env[4096], config[TPL_CONFIG_LEN], err[512];
    int win = 0;
    int k = rt_expected(NULL, set, &win);
    CHECK(k >= 2);
    /* 0.90x of its short time is more than 2% ahead of the winner's 1.05x */
    CHECK(0.90 * tn_fake_time(set[1]) < 0.98 * 1.05 * tn_fake_time(set[0]));
    snprintf(dbpath, sizeof dbpath, "%s/lead4.db", th_tmpdir());
    snprintf(env, sizeof env, "AUTOTUNE_FAKE='lead4=%s'", set[1]);
    char *out = NULL;
    CHECK_EQ(rt_tune(dbpath, env, &out), 0);
    CHECK_MSG(out && strstr(out, "(in 4 of 5 rounds)"), "%s", out ? out : "");
    free(out);
    db *d = NULL;
    CHECK_OK(db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, set[1]);
    db_close(d);
}

/* A power-bound configuration (faster at its own steady clock, slower at
 * the clock its neighbours leave) wins only when every share is preceded by
 * its own untimed runs: the family's retime_settle_ms, here through
 * $AUTOTUNE_RETIME_SETTLE_MS (test_wide has none). With a settle the
 * re-timing takes up to 8 configurations within 20% and 4 rounds. */
TEST(retime_fake_settle_credits_a_power_bound_configuration)
{
    char set[RT_N][TPL_CONFIG_LEN], config[TPL_CONFIG_LEN], fake[TPL_CONFIG_LEN + 32];
    int win = 0;
    int k = rt_expected(NULL, set, &win);
    CHECK(k >= 2);
    /* settled: 0.90x of its short time, ahead of the winner's 1.05x in every round */
    CHECK(0.90 * tn_fake_time(set[1]) < 0.98 * 1.05 * tn_fake_time(set[0]));
    /* with a settle the re-timed set reaches 20% past the best short time */
    char wide[RT_N_SETTLED][TPL_CONFIG_LEN];
    int k_wide = rt_expected_within(NULL, wide, &win, 1.20, RT_N_SETTLED);
    CHECK_MSG(k_wide >= 2, "the fake's test_wide has %d configurations within 20%%", k_wide);
    snprintf(fake, sizeof fake, "powered=%s", set[1]);
    for (int settle = 0; settle <= 1; settle++) {
        char *out = NULL, line[128], name[32];
        snprintf(name, sizeof name, "powered%d", settle);
        CHECK_EQ(rt_tune_settled(name, settle, fake, &out, config), 0);
        snprintf(line, sizeof line, "sustained re-timing of %d configurations in", settle ? k_wide : k);
        CHECK_MSG(out && strstr(out, line), "expected '%s': %s", line, out ? out : "");
        int said = out && strstr(out, "4 alternating rounds, each share after 100 ms of its own "
                                      "runs") != NULL;
        CHECK_MSG(said == settle, "settle %d: %s", settle, out ? out : "");
        free(out);
        CHECK_STR(config, set[settle ? 1 : 0]);
    }
}

/* A family with a settle re-times the 8 fastest of a close field, and a
 * power-bound configuration 6th by short time (outside the 4 a family
 * without a settle re-times) wins: the fake's "close" puts all of
 * test_wide's short times within 0.5-0.6 ms. */
TEST(retime_fake_settled_field_of_eight)
{
    char set[RT_N_SETTLED][TPL_CONFIG_LEN], config[TPL_CONFIG_LEN], fake[TPL_CONFIG_LEN + 32];
    char line[128];
    int win = 0;
    setenv("AUTOTUNE_FAKE", "close", 1);          /* for tn_fake_time here */
    int k = rt_expected_within(NULL, set, &win, 1.20, RT_N_SETTLED);
    /* settled: 0.90x of its short time, ahead of every other one's 1.05x */
    int ahead = 0.90 * tn_fake_time(set[5]) < 1.05 * tn_fake_time(set[0]);
    unsetenv("AUTOTUNE_FAKE");
    CHECK_EQ(k, RT_N_SETTLED);
    CHECK(ahead);
    snprintf(fake, sizeof fake, "close;powered=%s", set[5]);
    for (int settle = 0; settle <= 1; settle++) {
        char *out = NULL, name[32];
        snprintf(name, sizeof name, "field%d", settle);
        CHECK_EQ(rt_tune_settled(name, settle, fake, &out, config), 0);
        snprintf(line, sizeof line, "sustained re-timing of %d configurations in",
                 settle ? RT_N_SETTLED : RT_N);
        CHECK_MSG(out && strstr(out, line), "expected '%s': %s", line, out ? out : "");
        CHECK_MSG(out && (strstr(out, "the lowest median of round-normalized times wins") !=
                          NULL) == settle, "settle %d: %s", settle, out ? out : "");
        free(out);
        CHECK_STR(config, set[settle ? 5 : 0]);
    }
}

/* The re-timing's width from its setting: 4 configurations, a settled family's 8 for one
 * problem named with --size and 4 in a run of many problems; $AUTOTUNE_RETIME_MAX within
 * 2..8 overrides every case, a value outside it is ignored. */
TEST(retime_width_from_its_setting)
{
    const char *saved = getenv("AUTOTUNE_RETIME_MAX");
    char keep[32] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    unsetenv("AUTOTUNE_RETIME_MAX");
    CHECK_EQ(tn_retime_width(0, 0), 4);
    CHECK_EQ(tn_retime_width(0, 1), 4);
    CHECK_EQ(tn_retime_width(1, 1), 8);
    CHECK_EQ(tn_retime_width(1, 0), 4);
    setenv("AUTOTUNE_RETIME_MAX", "6", 1);
    for (int settled = 0; settled <= 1; settled++)
        for (int size = 0; size <= 1; size++)
            CHECK_EQ(tn_retime_width(settled, size), 6);
    setenv("AUTOTUNE_RETIME_MAX", "9", 1);
    CHECK_EQ(tn_retime_width(1, 1), 8);
    CHECK_EQ(tn_retime_width(1, 0), 4);
    setenv("AUTOTUNE_RETIME_MAX", "1", 1);
    CHECK_EQ(tn_retime_width(0, 0), 4);
    if (saved)
        setenv("AUTOTUNE_RETIME_MAX", keep, 1);
    else
        unsetenv("AUTOTUNE_RETIME_MAX");
}

/* ---- the decision (tn_retime_decide) on given rounds ---- */

/* A lead of 1.5% by the median that the rounds disagree on (3 of 5): the
 * unsettled rule keeps the short-timing winner first and keys the
 * challenger just behind it; a family with a settle favours neither, so the
 * lower median wins. */
TEST(retime_decide_settled_favours_no_configuration)
{
    const double t[2 * 5] = {1.000, 1.000, 1.000, 1.000, 1.000,
                             0.985, 0.985, 1.010, 0.985, 1.010};
    double sus[2], key[2];
    int faster[2];
    CHECK_EQ(tn_retime_decide(t, 2, 5, 0, sus, faster, key), 0);
    CHECK_EQ(faster[1], 3);
    CHECK(fabs(sus[0] - 1.0) < 1e-12 && fabs(sus[1] - 0.985) < 1e-12);
    CHECK(key[1] > key[0] && key[1] < key[0] * 1.0001);
    CHECK_EQ(tn_retime_decide(t, 2, 5, 1, sus, faster, key), 1);
    CHECK_EQ(faster[1], 3);
    /* each row's median ratio to its round's geometric mean (sqrt(0.985) per
     * round: the rounds where row 1 ran 0.985), times the median level */
    double level = sqrt(0.985);
    CHECK_MSG(fabs(sus[1] - sqrt(0.985) * level) < 1e-9 && fabs(sus[0] - level / sqrt(0.985)) <
              1e-9, "sustained %.9f %.9f", sus[0], sus[1]);
    CHECK(key[1] < key[0]);
}

/* Settled: a clock drift common to a round (every row slower by the same
 * factor) changes no decision and no ratio between the sustained times. */
TEST(retime_decide_settled_round_drift_cancels)
{
    const double base[3 * 4] = {2.00, 2.04, 1.98, 2.01,
                                1.95, 1.97, 2.06, 1.96,
                                2.10, 2.08, 2.12, 2.09};
    const double drift[4] = {1.00, 1.06, 0.95, 1.02};
    double t[3 * 4], sus0[3], sus1[3], key[3];
    int faster[3];
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < 4; r++)
            t[k * 4 + r] = base[k * 4 + r] * drift[r];
    int w0 = tn_retime_decide(base, 3, 4, 1, sus0, faster, key);
    int w1 = tn_retime_decide(t, 3, 4, 1, sus1, faster, key);
    CHECK_EQ(w0, 1);
    CHECK_EQ(w1, 1);
    for (int k = 1; k < 3; k++)
        CHECK_MSG(fabs(sus1[k] / sus1[0] - sus0[k] / sus0[0]) < 1e-12, "row %d: %.12f %.12f", k,
                  sus1[k] / sus1[0], sus0[k] / sus0[0]);
}

/* The study's rounds (H200, TF32 8192^3, the first 4 of 12 after 400 ms
 * settles, docs/notes/tcgemm.md 18), with the sustained best (CN 2 GROUP 8
 * VEC 8) moved to row 4 behind the others in short-timing order: settled,
 * it wins, and the next runs at least 2% behind it by the median. */
TEST(retime_decide_settled_picks_the_study_best)
{
    static const double rows[8][4] = {
        {3.0925, 3.1998, 3.2143, 3.1954}, /* CN 1 RASTER 1 GROUP 16 VEC 8 */
        {3.1968, 3.2313, 3.2297, 3.2311}, /* CN 1 RASTER 1 GROUP 16 VEC 2 */
        {3.2015, 3.2270, 3.2414, 3.2227}, /* CN 2 GROUP 1 VEC 8 */
        {3.2015, 3.2458, 3.2272, 3.1465}, /* CN 1 GROUP 8 VEC 2 */
        {3.1418, 3.0928, 3.0925, 3.0938}, /* CN 2 GROUP 8 VEC 8 */
        {3.2499, 3.2149, 3.2229, 3.2264}, /* CN 1 GROUP 16 VEC 8 */
        {3.2785, 3.3019, 3.2314, 3.2780}, /* CN 1 GROUP 16 VEC 2 */
        {3.3528, 3.2874, 3.2847, 3.2763}, /* CN 2 GROUP 1 VEC 2 */
    };
    double sus[8], key[8];
    int faster[8];
    CHECK_EQ(tn_retime_decide(&rows[0][0], 8, 4, 1, sus, faster, key), 4);
    CHECK_EQ(faster[4], 3);
    for (int k = 0; k < 8; k++)
        CHECK_MSG(k == 4 || sus[k] >= 1.02 * sus[4], "row %d: %.4f against %.4f", k, sus[k],
                  sus[4]);
}

/* Below the threshold nothing is re-timed: the short-timing winner leads. */
TEST(retime_fake_below_threshold_left_alone)
{
    char set[RT_N][TPL_CONFIG_LEN], dbpath[4300], env[4096], config[TPL_CONFIG_LEN], err[512];
    int win = 0;
    rt_expected(NULL, set, &win);
    snprintf(dbpath, sizeof dbpath, "%s/cold.db", th_tmpdir());
    /* every fake time is below 20 ms */
    snprintf(env, sizeof env, "AUTOTUNE_RETIME_MIN_MS=20 AUTOTUNE_FAKE='hot=%s'", set[0]);
    char *out = NULL;
    CHECK_EQ(rt_tune(dbpath, env, &out), 0);
    CHECK_MSG(out && !strstr(out, "sustained"), "%s", out ? out : "");
    free(out);
    CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM result WHERE rank_ms IS NOT NULL "
                                "OR sustained_ms IS NOT NULL"), 0);
    db *d = NULL;
    CHECK_OK(db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, set[0]);
    db_close(d);
}

/* ^C during the re-timing stores nothing; the rerun re-times. */
TEST(retime_fake_interrupt_then_resume)
{
    char set[RT_N][TPL_CONFIG_LEN], dbpath[4300], cmd[32768], config[TPL_CONFIG_LEN], err[512];
    int win = 0;
    rt_expected(NULL, set, &win);
    rt_expected(set[0], set, &win);
    snprintf(dbpath, sizeof dbpath, "%s/int.db", th_tmpdir());
    char *out = NULL;
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE='hot=%s;sdelay=400' "
             "%s/autotune-test --device 0 --kernel test_wide --size 1000003 --db %s --seed 3 "
             "--quiet > %s.log 2>&1 & pid=$!; n=0; "
             "until grep -q '^  best' %s.log || [ $n -ge 600 ]; do sleep 0.1; n=$((n+1)); done; "
             "sleep 0.6; kill -INT $pid; wait $pid; echo \"rc=$?\"; cat %s.log",
             th_build_dir(), set[0], th_build_dir(), dbpath, dbpath, dbpath, dbpath);
    th_run(cmd, &out);
    CHECK_MSG(out && strstr(out, "rc=130") && !strstr(out, "sustained"), "%s", out ? out : "");
    free(out);
    CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM result WHERE rank_ms IS NOT NULL"), 0);
    char env[4096];
    snprintf(env, sizeof env, "AUTOTUNE_FAKE='hot=%s'", set[0]);
    CHECK_EQ(rt_tune(dbpath, env, &out), 0);
    CHECK_MSG(out && strstr(out, "sustained re-timing of"), "%s", out ? out : "");
    free(out);
    db *d = NULL;
    CHECK_OK(db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, set[win]);
    db_close(d);
}

/* Two fake GPUs of one model split the search; one re-times the set
 * (rows of both GPUs) and the lookup serves the sustained winner. */
TEST(retime_fake_two_gpus_one_retimes)
{
    char set[RT_N][TPL_CONFIG_LEN], dbpath[4300], cmd[32768], config[TPL_CONFIG_LEN], err[512];
    int win = 0;
    int k = rt_expected(NULL, set, &win);
    rt_expected(set[0], set, &win);
    snprintf(dbpath, sizeof dbpath, "%s/two.db", th_tmpdir());
    char *out = NULL;
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES=2 "
             "AUTOTUNE_FAKE='hot=%s' %s/autotune-test --device all --kernel test_wide "
             "--size 1000003 --db %s --seed 3 --quiet 2>&1",
             th_build_dir(), set[0], th_build_dir(), dbpath);
    CHECK_EQ(th_run(cmd, &out), 0);
    const char *at = out ? strstr(out, "sustained re-timing of") : NULL;
    CHECK_MSG(at && !strstr(at + 1, "sustained re-timing of"), "%s", out ? out : "");
    free(out);
    CHECK_EQ(th_sql_int(dbpath, "SELECT count(*) FROM result WHERE rank_ms IS NOT NULL"), k);
    CHECK_EQ(th_sql_int(dbpath, "SELECT count(DISTINCT device_id) FROM result"), 2);
    db *d = NULL;
    CHECK_OK(db_open(&d, dbpath, DB_OPEN_EXISTING, err, sizeof err));
    rt_lookup(d, config);
    CHECK_STR(config, set[win]);
    db_close(d);
}

/* The re-timing's back-to-back form (templates/measure.h) on the Jacobi
 * solver, whose runs start from their output (tpl_workset.out_is_state):
 * each run must do the same work as an ordinary timing's, so the two times
 * agree (a run from the converged x of the one before took a twentieth of
 * the time before out_is_state), and the runs counted are max_runs. */
GPU_TEST(retime_gpu_back_to_back_keeps_a_solvers_work)
{
    const tpl_family *f = tpl_find("jacobi");
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    th_compiled one;
    memset(&one, 0, sizeof one);
    one.fam = f;
    one.arch = ms_device(g)->arch;
    snprintf(one.text, sizeof one.text, "%s", f->default_config);
    CHECK_OK(tpl_config_parse(f, one.text, one.cfg, err, sizeof err));
    if (th_failed() || !th_compile_all(&one, 1)) {
        ms_close(g);
        return;
    }
    tpl_problem p;
    CHECK_OK(tpl_problem_parse("4096", &p, err, sizeof err));
    CHECK_OK(ms_prepare(g, f, &p, 5, err, sizeof err));
    ms_options o;
    ms_timing plain, b2b;
    ms_default_options(&o);
    CHECK_OK(ms_time(g, f, one.cfg, one.cubin, one.size, &o, &plain, err, sizeof err));
    o.back_to_back = 1;
    o.warmup = 1;
    o.min_runs = o.max_runs = 7;
    CHECK_OK(ms_time(g, f, one.cfg, one.cubin, one.size, &o, &b2b, err, sizeof err));
    CHECK_EQ(b2b.runs, 7);
    printf("    jacobi 4096 %s: %.4f ms ordinary, %.4f ms back to back\n", one.text,
           plain.median_ms, b2b.median_ms);
    CHECK_MSG(b2b.median_ms > 0.6 * plain.median_ms && b2b.median_ms < 1.6 * plain.median_ms,
              "back to back %.4f ms against %.4f ms", b2b.median_ms, plain.median_ms);
    th_release_compiled(&one, 1);
    ms_close(g);
}
