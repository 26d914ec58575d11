/* test_merge.c: merging tuning databases: random databases merged in every order give the
 * best row per key (property style), the merge command, and shipped read-only databases under
 * the user's (CPU tier). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "json.h"
#include "lookup.h"
#include "tn.h"
#include "th_travel.h"

/* ---- merge ---- */

/* The generator's view of one row and the rule merge must follow. */
typedef struct trv_row {
    char uuid[48], model[64], config[64];
    long long n;
    int ok;
    double t;
    char created[32];
} trv_row;

/* 1 if x beats y under merge's rule: servable first, lower time, newer. */
static int trv_better(const trv_row *x, const trv_row *y)
{
    int sx = x->ok && x->t > 0, sy = y->ok && y->t > 0;
    if (sx != sy)
        return sx > sy;
    if (x->t != y->t)
        return x->t < y->t;
    return strcmp(x->created, y->created) > 0;
}

#define TRV_DBS 3
#define TRV_ROWS 60

/* Random databases from seed: 5 devices of 2 models (shared between the
 * databases, so keys collide), 4 sizes, 12 configurations, random times and
 * statuses; the rows written in rows[db][i]. */
static int trv_random_dbs(unsigned long long seed, char paths[TRV_DBS][4300],
                          trv_row rows[TRV_DBS][TRV_ROWS])
{
    tn_rng g;
    tn_rng_seed(&g, seed);
    static const char *const models[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3"};
    const tpl_family *fam = tpl_find("sum");
    for (int k = 0; k < TRV_DBS; k++) {
        char name[64];
        snprintf(name, sizeof name, "rand-%llu-%d.db", seed, k);
        db *d = trv_open(name, DB_OPEN_CREATE, paths[k], sizeof paths[k]);
        if (!d)
            return 0;
        for (int dv = 0; dv < 5; dv++) {
            at_device_info info;
            char uuid[48];
            snprintf(uuid, sizeof uuid, "GPU-rand-%d", dv);
            trv_device(&info, uuid, models[dv % 2], 9, 0);
            info.clock_khz = 1000 + k;   /* facts differ between the databases */
            if (db_put_device(d, &info, "13.0") != AT_OK)
                return 0;
        }
        for (int i = 0; i < TRV_ROWS; i++) {
            trv_row *w = &rows[k][i];
            memset(w, 0, sizeof *w);
            int dv = (int)tn_rng_below(&g, 5);
            snprintf(w->uuid, sizeof w->uuid, "GPU-rand-%d", dv);
            snprintf(w->model, sizeof w->model, "%s", models[dv % 2]);
            snprintf(w->config, sizeof w->config, "X=%d", (int)tn_rng_below(&g, 12));
            w->n = 1024ll << tn_rng_below(&g, 4);
            w->ok = tn_rng_below(&g, 4) != 0;
            /* distinct times (no ties for the rule to break) */
            w->t = w->ok && tn_rng_below(&g, 10) == 0 ? 0.0
                 : 0.001 * (double)(1 + tn_rng_below(&g, 1000000)) + 1e-9 * (k * TRV_ROWS + i);
            snprintf(w->created, sizeof w->created, "2026-11-%02uT10:00:%02u.%03uZ",
                     1u + (unsigned)tn_rng_below(&g, 28) % 28u,
                     (unsigned)tn_rng_below(&g, 60) % 60u, (unsigned)(k * 100 + i) % 1000u);
            db_result r;
            trv_result(&r, w->uuid, fam, trv_problem(w->n), w->config,
                       w->ok ? DB_OK : DB_WRONG_RESULT, w->t);
            if (db_store_result(d, &r) != AT_OK)
                return 0;
        }
        db_close(d);
        /* db_store_result stamps the time: put the generated ones back */
        sqlite3 *h = NULL;
        if (sqlite3_open(paths[k], &h) != SQLITE_OK)
            return 0;
        for (int i = 0; i < TRV_ROWS; i++) {
            char sql[512];
            /* in write order: a key written twice keeps the later row */
            snprintf(sql, sizeof sql, "UPDATE result SET created = '%s' WHERE config = '%s' "
                     "AND problem_id IN (SELECT id FROM problem WHERE d0 = %lld) AND "
                     "device_id IN (SELECT id FROM device WHERE uuid = '%s')",
                     rows[k][i].created, rows[k][i].config, rows[k][i].n, rows[k][i].uuid);
            sqlite3_exec(h, sql, NULL, NULL, NULL);
        }
        sqlite3_close(h);
    }
    return 1;
}

static int trv_same_key(const trv_row *a, const trv_row *b)
{
    return strcmp(a->uuid, b->uuid) == 0 && strcmp(a->config, b->config) == 0 && a->n == b->n;
}

/* The rows a database holds: per key, the last written. */
static int trv_effective(trv_row rows[TRV_ROWS], trv_row *out)
{
    int n = 0;
    for (int i = 0; i < TRV_ROWS; i++) {
        int k;
        for (k = 0; k < n && !trv_same_key(&out[k], &rows[i]); k++)
            ;
        out[k] = rows[i];
        n += k == n;
    }
    return n;
}

/* Merges the databases in the order given into a fresh database; its rows. */
static int trv_merge_order(const char paths[TRV_DBS][4300], const int *order, const char *name,
                           db_result **res, int *n)
{
    char out[4300], err[512];
    db *d = trv_open(name, DB_OPEN_CREATE, out, sizeof out);
    if (!d)
        return 0;
    for (int k = 0; k < TRV_DBS; k++) {
        db *in = NULL;
        if (db_open(&in, paths[order[k]], DB_OPEN_READONLY, err, sizeof err) != AT_OK ||
            db_merge(d, in, NULL) != AT_OK) {
            th_fail(__FILE__, __LINE__, "merge: %s %s", err, db_errmsg(d));
            db_close(in);
            db_close(d);
            return 0;
        }
        db_close(in);
    }
    int ok = db_results(d, NULL, NULL, res, n) == AT_OK;
    db_close(d);
    return ok;
}

static const db_result *trv_find(const db_result *res, int n, const trv_row *w)
{
    for (int i = 0; i < n; i++)
        if (strcmp(res[i].device_uuid, w->uuid) == 0 && strcmp(res[i].config, w->config) == 0 &&
            res[i].problem.dims[0] == w->n)
            return &res[i];
    return NULL;
}

/* For seeds 1..8: every key of every input is in the merge with the row
 * the rule picks, the best per (model, kernel, problem) is the best over
 * the inputs, nothing else is there, two orders give the same rows, and
 * the inputs are unchanged. */
TEST(travel_merge_random_databases)
{
    for (unsigned long long seed = 1; seed <= 8; seed++) {
        char paths[TRV_DBS][4300];
        static trv_row rows[TRV_DBS][TRV_ROWS], eff[TRV_DBS][TRV_ROWS];
        int n_eff[TRV_DBS];
        CHECK(trv_random_dbs(seed, paths, rows));
        char *before[TRV_DBS];
        size_t blen[TRV_DBS];
        for (int k = 0; k < TRV_DBS; k++) {
            n_eff[k] = trv_effective(rows[k], eff[k]);
            before[k] = trv_slurp(paths[k], &blen[k]);
        }
        static const int orders[2][TRV_DBS] = {{0, 1, 2}, {2, 0, 1}};
        db_result *res[2] = {NULL, NULL};
        int n[2] = {0, 0};
        for (int o = 0; o < 2; o++) {
            char name[64];
            snprintf(name, sizeof name, "merged-%llu-%d.db", seed, o);
            CHECK(trv_merge_order(paths, orders[o], name, &res[o], &n[o]));
        }
        /* the expected row of every key: the rule over the inputs */
        static trv_row want[TRV_DBS * TRV_ROWS];
        int n_want = 0;
        for (int k = 0; k < TRV_DBS; k++)
            for (int i = 0; i < n_eff[k]; i++) {
                int w;
                for (w = 0; w < n_want && !trv_same_key(&want[w], &eff[k][i]); w++)
                    ;
                if (w == n_want || trv_better(&eff[k][i], &want[w]))
                    want[w] = eff[k][i];
                n_want += w == n_want;
            }
        for (int o = 0; o < 2; o++) {
            CHECK_MSG(n[o] == n_want, "seed %llu: %d rows, %d keys in the inputs", seed, n[o],
                      n_want);
            for (int w = 0; w < n_want; w++) {
                const db_result *r = trv_find(res[o], n[o], &want[w]);
                CHECK_MSG(r && r->time_ms == want[w].t && strcmp(r->created, want[w].created) == 0 &&
                          (strcmp(r->status, DB_OK) == 0) == want[w].ok,
                          "seed %llu order %d: key %s %s %lld kept the wrong row", seed, o,
                          want[w].uuid, want[w].config, want[w].n);
            }
            /* best per model and size: the minimum over every input row */
            static const char *const models[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3"};
            for (int m = 0; m < 2; m++)
                for (long long size = 1024; size <= 8192; size *= 2) {
                    double in_best = INFINITY, out_best = INFINITY;
                    for (int k = 0; k < TRV_DBS; k++)
                        for (int i = 0; i < n_eff[k]; i++)
                            if (eff[k][i].ok && eff[k][i].t > 0 && eff[k][i].n == size &&
                                strcmp(eff[k][i].model, models[m]) == 0)
                                in_best = fmin(in_best, eff[k][i].t);
                    for (int i = 0; i < n[o]; i++) {
                        int dv = res[o][i].device_uuid[9] - '0';
                        if (strcmp(res[o][i].status, DB_OK) == 0 && res[o][i].time_ms > 0 &&
                            res[o][i].problem.dims[0] == size && dv % 2 == m)
                            out_best = fmin(out_best, res[o][i].time_ms);
                    }
                    CHECK_MSG(in_best == out_best, "seed %llu: best of %s at %lld: %g, inputs %g",
                              seed, models[m], size, out_best, in_best);
                }
        }
        char why[256];
        CHECK_MSG(trv_same_rows(res[0], n[0], res[1], n[1], why, sizeof why),
                  "seed %llu: the orders differ: %s", seed, why);
        for (int k = 0; k < TRV_DBS; k++) {
            size_t len = 0;
            char *after = trv_slurp(paths[k], &len);
            CHECK_MSG(after && len == blen[k] && memcmp(after, before[k], len) == 0,
                      "seed %llu: input %d changed", seed, k);
            free(after);
            free(before[k]);
        }
        free(res[0]);
        free(res[1]);
    }
}

/* The command: OUT must not exist without --force; the inputs are read
 * only; the merged database serves the lookups. */
TEST(travel_merge_command)
{
    char paths[TRV_DBS][4300], out[4300], cmd[40000], *text = NULL;
    static trv_row rows[TRV_DBS][TRV_ROWS];
    CHECK(trv_random_dbs(99, paths, rows));
    snprintf(out, sizeof out, "%s/out.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s' '%s' '%s' -o '%s'", th_build_dir(),
             paths[0], paths[1], paths[2], out);
    CHECK_MSG(th_run(cmd, &text) == 0, "%s", text);
    free(text);
    CHECK_MSG(th_run(cmd, &text) == 1 && strstr(text, "exists"), "%s", text);
    free(text);
    strcat(cmd, " --force");
    CHECK_MSG(th_run(cmd, &text) == 0, "%s", text);
    free(text);
    char side[4400];
    snprintf(side, sizeof side, "%s-wal", out);
    CHECK(!trv_exists(side));
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s' -o '%s/x.db'", th_build_dir(),
             "/nonexistent/a.db", th_tmpdir());
    CHECK(th_run(cmd, &text) == 1);
    free(text);
    snprintf(cmd, sizeof cmd, "%s/autotune merge '%s'", th_build_dir(), paths[0]);
    CHECK(th_run(cmd, &text) == 2);
    free(text);
}

/* ---- shipped read-only databases ---- */

/* Stores an ok result of sum's k-th valid configuration for size n on uuid. */
static int trv_put(db *d, const char *uuid, long long n, long long k, double t, char *config)
{
    at_device_info dev;
    trv_device(&dev, "GPU-user", "NVIDIA H200", 9, 0);
    const tpl_family *fam = tpl_find("sum");
    int cfg[TPL_MAX_PARAMS];
    trv_config(fam, &dev, k, cfg, config);
    db_result r;
    trv_result(&r, uuid, fam, trv_problem(n), config, DB_OK, t);
    return db_store_result(d, &r) == AT_OK;
}

static long long trv_mtime_ns(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return -1;
    return (long long)sb.st_mtim.tv_sec * 1000000000ll + sb.st_mtim.tv_nsec;
}

/* Lookup order over the user's database and shipped ones (exact anywhere
 * beats nearest; equal levels: the user's, then the shipped in order); a
 * corrupt or missing shipped database is named and skipped; the shipped
 * files are never written, not even a side file beside them. */
TEST(travel_shipped_databases_under_the_users)
{
    char user[4300], s1[4300], s2[4300], bad[4400], missing[4400];
    char c_near[TPL_CONFIG_LEN], c_p[TPL_CONFIG_LEN], c_q_user[TPL_CONFIG_LEN];
    char c_q_ship[TPL_CONFIG_LEN], c_r[TPL_CONFIG_LEN];
    at_device_info dev, other;
    trv_device(&dev, "GPU-user", "NVIDIA H200", 9, 0);
    trv_device(&other, "GPU-other", "NVIDIA H100 80GB HBM3", 9, 0);
    db *u = trv_open("user.db", DB_OPEN_CREATE, user, sizeof user);
    db *a = trv_open("ship1.db", DB_OPEN_CREATE, s1, sizeof s1);
    db *b = trv_open("ship2.db", DB_OPEN_CREATE, s2, sizeof s2);
    CHECK(u && a && b);
    CHECK_OK(db_put_device(u, &dev, "13.0"));
    CHECK_OK(db_put_device(a, &dev, "13.0"));
    CHECK_OK(db_put_device(b, &other, "13.0"));
    /* P = 2^20: the user has only a nearby size, ship1 the exact one;
     * Q = 4096: both exact; R = 65536: only ship2, tuned on another model */
    CHECK(trv_put(u, "GPU-user", 2000000, 3, 1.0, c_near));
    CHECK(trv_put(a, "GPU-user", 1048576, 5, 1.0, c_p));
    CHECK(trv_put(u, "GPU-user", 4096, 7, 1.0, c_q_user));
    CHECK(trv_put(a, "GPU-user", 4096, 11, 0.5, c_q_ship));
    CHECK(trv_put(b, "GPU-other", 65536, 13, 1.0, c_r));
    db_close(a);
    db_close(b);
    snprintf(bad, sizeof bad, "%s/corrupt.db", th_tmpdir());
    snprintf(missing, sizeof missing, "%s/missing.db", th_tmpdir());
    CHECK(trv_write(bad, "this is not an SQLite database, just text\n", 42));
    size_t l1 = 0, l2 = 0;
    char *h1 = trv_slurp(s1, &l1), *h2 = trv_slurp(s2, &l2);
    long long m1 = trv_mtime_ns(s1), m2 = trv_mtime_ns(s2);
    char list[20000], msg[4096];
    snprintf(list, sizeof list, "%s:%s:%s:%s", s1, bad, missing, s2);
    db *layers[1 + AT_MAX_READONLY_DBS] = {u};
    int n = 1;
    lk_open_shipped(list, layers, &n, 1 + AT_MAX_READONLY_DBS, msg, sizeof msg);
    CHECK_EQ(n, 3);
    CHECK_MSG(strstr(msg, "corrupt.db") && strstr(msg, "missing.db") && !strstr(msg, "ship1"),
              "%s", msg);
    CHECK(db_is_readonly(layers[1]) && db_is_readonly(layers[2]));
    const tpl_family *fam = tpl_find("sum");
    struct { long long n; at_lookup_level level; int which; const char *config; } want[] = {
        {1048576, AT_LOOKUP_EXACT, 1, c_p},
        {4096, AT_LOOKUP_EXACT, 0, c_q_user},
        {65536, AT_LOOKUP_NEAREST, 0, c_q_user},  /* the user's nearest beats ARCH */
        {2100000, AT_LOOKUP_NEAREST, 0, c_near},
    };
    for (int i = 0; i < 4; i++) {
        tpl_problem p = trv_problem(want[i].n);
        int cfg[TPL_MAX_PARAMS], which = -9;
        char config[TPL_CONFIG_LEN];
        at_lookup_level level = lk_choose_layers(layers, n, &dev, fam, &p, 0, cfg, config, &which);
        CHECK_MSG(level == want[i].level && which == want[i].which &&
                  strcmp(config, want[i].config) == 0,
                  "n=%lld: level %d from %d (%s), expected %d from %d (%s)", want[i].n,
                  (int)level, which, config, (int)want[i].level, want[i].which, want[i].config);
    }
    /* without the user's database, on a third device of the arch: the
     * shipped ones at the ARCH level in one ranking (sum has no model: the
     * nearest shape, ship2's, though ship1 comes first); defaults last */
    at_device_info third;
    trv_device(&third, "GPU-third", "NVIDIA GH200 480GB", 9, 0);
    layers[0] = NULL;
    tpl_problem p = trv_problem(100000);
    int cfg[TPL_MAX_PARAMS], which = -9;
    char config[TPL_CONFIG_LEN];
    CHECK(lk_choose_layers(layers, n, &third, fam, &p, 0, cfg, config, &which) ==
          AT_LOOKUP_ARCH && which == 2 && strcmp(config, c_r) == 0);
    db *only2[2] = {NULL, layers[2]};
    CHECK(lk_choose_layers(only2, 2, &third, fam, &p, 0, cfg, config, &which) ==
          AT_LOOKUP_ARCH && which == 1 && strcmp(config, c_r) == 0);
    CHECK(lk_choose_layers(layers, 0, &dev, fam, &p, 0, cfg, config, &which) ==
          AT_LOOKUP_DEFAULT && which == -1);
    /* a shipped handle refuses writes, even though its file is writable */
    db_result r;
    trv_result(&r, "GPU-user", fam, trv_problem(8), fam->default_config, DB_OK, 1.0);
    CHECK(db_store_result(layers[1], &r) == AT_ERR_DB);
    db_close(layers[1]);
    db_close(layers[2]);
    db_close(u);
    size_t a1 = 0, a2 = 0;
    char *g1 = trv_slurp(s1, &a1), *g2 = trv_slurp(s2, &a2);
    CHECK(g1 && g2 && a1 == l1 && a2 == l2 && memcmp(g1, h1, l1) == 0 &&
          memcmp(g2, h2, l2) == 0);
    CHECK(trv_mtime_ns(s1) == m1 && trv_mtime_ns(s2) == m2);
    char side[4400];
    const char *sfx[] = {"-wal", "-shm", "-journal"};
    for (int k = 0; k < 3; k++) {
        snprintf(side, sizeof side, "%s%s", s1, sfx[k]);
        CHECK_MSG(!trv_exists(side), "%s was made", side);
        snprintf(side, sizeof side, "%s%s", s2, sfx[k]);
        CHECK_MSG(!trv_exists(side), "%s was made", side);
    }
    free(h1);
    free(h2);
    free(g1);
    free(g2);
    CHECK(at_add_readonly_db(NULL, s1) == AT_ERR_INVALID_ARG);
}
