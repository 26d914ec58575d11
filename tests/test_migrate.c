/* test_migrate.c: CPU tests of the schema migrations: a release's database migrated (rows,
 * bests, lookup) or read read-only, version 4 gaining the epilogue column (kinds kept apart:
 * test_kinds.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"
#include "harness.h"
#include "th_migrate.h"
#include "th_sql.h"
#include "lookup.h"
#include "tpl.h"

/* Written by the release of schema version 1 (tests/data/README.md). */
#define TM_FIXTURE "tests/data/schema1-fake-tuning.db"
#define TM_UUID0 "GPU-fa4e0000-0000-0000-0000-000000000000"
#define TM_UUID1 "GPU-fa4e0000-0000-0000-0000-000000000001"
/* The 19 columns of a release's result table (version 3 adds two). */
#define TM_V1_RESULT_COLS \
    "id, device_id, kernel_id, problem_id, config, status, time_ms, time_min_ms, " \
    "time_max_ms, runs, gflops, gbs, rel_error, compile_ms, binary_key, error, " \
    "deterministic, session_id, created"

/* ---- raw SQL, outside db/: the independent view of a file ---- */

/* Copies the fixture into a fresh folder; 0 if it cannot. */
static int tm_copy_fixture(char *path, size_t len)
{
    snprintf(path, len, "%s/release.db", th_tmpdir());
    FILE *in = fopen(TM_FIXTURE, "rb"), *out = fopen(path, "wb");
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0)
        ok = fwrite(buf, 1, n, out) == n;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        ok = 0;
    return ok;
}

/* ---- the expected bests, read from the fixture before any migration ---- */

typedef struct tm_best {
    char uuid[48], kernel[32];
    tpl_problem problem;
    char best[TPL_CONFIG_LEN];          /* fastest ok result */
    char best_det[TPL_CONFIG_LEN];      /* fastest ok deterministic one, "" if none */
} tm_best;

/* Every (device, kernel, problem) tuned in the version 1 file at path,
 * with its bests by the rule "fastest ok time, then lowest id". */
static int tm_expected(const char *path, tm_best *out, int max)
{
    static const char sql[] =
        "SELECT d.uuid, p.kernel, p.n_dims, p.d0, p.d1, p.d2, "
        "(SELECT r.config FROM result r WHERE r.device_id = d.id AND r.problem_id = p.id "
        " AND r.status = 'ok' AND r.time_ms > 0 ORDER BY r.time_ms, r.id LIMIT 1), "
        "(SELECT r.config FROM result r WHERE r.device_id = d.id AND r.problem_id = p.id "
        " AND r.status = 'ok' AND r.time_ms > 0 AND r.deterministic = 1 "
        " ORDER BY r.time_ms, r.id LIMIT 1) "
        "FROM device d, problem p WHERE EXISTS (SELECT 1 FROM result r WHERE "
        "r.device_id = d.id AND r.problem_id = p.id) ORDER BY d.uuid, p.kernel, p.id";
    sqlite3 *h = NULL;
    int n = 0;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
            while (n < max && sqlite3_step(st) == SQLITE_ROW) {
                tm_best *b = &out[n++];
                memset(b, 0, sizeof *b);
                snprintf(b->uuid, sizeof b->uuid, "%s", sqlite3_column_text(st, 0));
                snprintf(b->kernel, sizeof b->kernel, "%s", sqlite3_column_text(st, 1));
                b->problem.n_dims = sqlite3_column_int(st, 2);
                for (int i = 0; i < 3; i++)
                    b->problem.dims[i] = sqlite3_column_int64(st, 3 + i);
                const unsigned char *c = sqlite3_column_text(st, 6);
                snprintf(b->best, sizeof b->best, "%s", c ? (const char *)c : "");
                c = sqlite3_column_text(st, 7);
                snprintf(b->best_det, sizeof b->best_det, "%s", c ? (const char *)c : "");
            }
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(h);
    return n;
}

/* Points the fixture's kernel rows at this build's sources where a family's
 * .cu changed since the release, and gives the stored configurations every
 * parameter added since at its canonical (first) value, what the release's
 * kernels computed (matmul's OPA and OPB), so its results stay the ones the
 * lookup takes; returns how many names were changed. */
static int tm_follow_sources(const char *path)
{
    int changed = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        char sql[256];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM kernel WHERE name = '%s' AND "
                 "source_hash <> '%s'", fam->name, tpl_source_hash(fam));
        if (th_sql_int(path, sql) > 0) {
            snprintf(sql, sizeof sql, "UPDATE kernel SET source_hash = '%s' WHERE name = '%s'",
                     tpl_source_hash(fam), fam->name);
            if (th_sql_exec(path, sql) == SQLITE_OK)
                changed++;
        }
        for (int p = 0; p < fam->n_params; p++) {
            char upd[512];
            snprintf(upd, sizeof upd, "UPDATE result SET config = config || ',%s=%d' WHERE "
                     "kernel_id IN (SELECT id FROM kernel WHERE name = '%s') AND "
                     "instr(',' || config, ',%s=') = 0", fam->params[p].name,
                     fam->params[p].values[0], fam->name, fam->params[p].name);
            snprintf(sql, sizeof sql, "SELECT count(*) FROM result WHERE kernel_id IN (SELECT id "
                     "FROM kernel WHERE name = '%s') AND instr(',' || config, ',%s=') = 0",
                     fam->name, fam->params[p].name);
            if (th_sql_int(path, sql) > 0 && th_sql_exec(path, upd) == SQLITE_OK)
                changed++;
        }
    }
    return changed;
}

/* sum over dimensions of |log(a/b)|, written again for the expectations */
static double tm_distance(const tpl_problem *a, const tpl_problem *b)
{
    double d = 0;
    for (int i = 0; i < a->n_dims; i++)
        d += fabs(log((double)a->dims[i] / (double)b->dims[i]));
    return d;
}

/* The expected best of the stored problem nearest q (uuid NULL: any device). */
static const tm_best *tm_nearest(const tm_best *e, int n, const char *uuid, const char *kernel,
                                 const tpl_problem *q)
{
    const tm_best *near = NULL;
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        if (strcmp(e[i].kernel, kernel) != 0 || (uuid && strcmp(e[i].uuid, uuid) != 0) ||
            e[i].problem.n_dims != q->n_dims || !e[i].best[0])
            continue;
        double d = tm_distance(&e[i].problem, q);
        if (d < best) {
            best = d;
            near = &e[i];
        }
    }
    return near;
}

#define TM_TABLES "result", "problem", "measurement", "binary", "session", "device", "kernel", \
                  "meta"

TEST(migrate_release_database_keeps_rows_and_bests)
{
    char path[4300], err[512];
    CHECK_MSG(tm_copy_fixture(path, sizeof path), "cannot copy %s (run from the repository "
              "root)", TM_FIXTURE);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), 1);
    if (tm_follow_sources(path))
        printf("     note: the fixture's kernel rows follow this build's changed sources\n");
    /* what the release stored, before this build touches the file */
    tm_best want[32];
    int n_want = tm_expected(path, want, 32);
    CHECK_MSG(n_want == 10, "%d tuned problems in the fixture, 10 expected", n_want);
    static const char *const tables[] = {TM_TABLES};
    long long counts[8];
    for (int t = 0; t < 8; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[t]);
        counts[t] = th_sql_int(path, sql);
        CHECK_MSG(counts[t] > 0, "fixture table %s is empty", tables[t]);
    }
    char *results = tm_text(path, "SELECT " TM_V1_RESULT_COLS " FROM result ORDER BY id");
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM pragma_table_info('result')"), 19);
    char *problems = tm_text(path, "SELECT id, kernel, n_dims, d0, d1, d2 FROM problem ORDER BY id");
    char *measures = tm_text(path, "SELECT id, device_id, kernel, n_dims, d0, d1, d2, name, "
                                   "time_ms, gflops, gbs, rel_error, note, created "
                                   "FROM measurement ORDER BY id");
    char *binaries = tm_text(path, "SELECT key, hex(cubin) FROM binary ORDER BY key");
    CHECK(results && problems && measures && binaries);

    /* opened as at_create opens it: migrated */
    db *d = NULL;
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "open: %s", err);
    CHECK(!db_is_readonly(d));
    db_close(d);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_int(path, "SELECT value FROM meta WHERE key = 'schema_version'"),
             DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM meta WHERE key = 'migrated_1_to_2'"), 1);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM meta WHERE key = 'migrated_2_to_3'"), 1);
    /* version 3: no row re-timed, so every row ranks by its time as before */
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result WHERE sustained_ms IS NOT NULL "
                              "OR rank_ms IS NOT NULL"), 0);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    char *check = tm_text(path, "PRAGMA integrity_check");
    CHECK_MSG(check && strcmp(check, "ok\n") == 0, "integrity: %s", check ? check : "?");
    free(check);
    for (int t = 0; t < 8; t++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[t]);
        CHECK_MSG(th_sql_int(path, sql) == counts[t] + (t == 7 ? DB_SCHEMA_VERSION - 1 : 0),
                  "table %s: %lld rows, had %lld",
                  tables[t], th_sql_int(path, sql), counts[t]);
    }
    char *r2 = tm_text(path, "SELECT " TM_V1_RESULT_COLS " FROM result ORDER BY id");
    char *p2 = tm_text(path, "SELECT id, kernel, n_dims, d0, d1, d2 FROM problem ORDER BY id");
    char *m2 = tm_text(path, "SELECT id, device_id, kernel, n_dims, d0, d1, d2, name, time_ms, "
                             "gflops, gbs, rel_error, note, created FROM measurement ORDER BY id");
    char *b2 = tm_text(path, "SELECT key, hex(cubin) FROM binary ORDER BY key");
    int same = r2 && p2 && m2 && b2 && !strcmp(r2, results) && !strcmp(p2, problems) &&
               !strcmp(m2, measures) && !strcmp(b2, binaries);
    free(results), free(problems), free(measures), free(binaries);
    free(r2), free(p2), free(m2), free(b2);
    CHECK_MSG(same, "rows changed by the migration");
    /* the new columns hold the plain problem's values */
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE dtype = 'f32' AND math = '' AND "
                              "op_a = 'N' AND op_b = 'N' AND layout = 'row' AND batch = 1"),
             counts[1]);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM measurement WHERE dtype = 'f32' AND math = '' "
                              "AND op_a = 'N' AND op_b = 'N' AND layout = 'row' AND batch = 1"),
             counts[2]);

    /* the lookup serves every stored best unchanged, exactly */
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    for (int i = 0; i < n_want && !th_failed(); i++) {
        const tpl_family *fam = tpl_find(want[i].kernel);
        CHECK_MSG(fam, "no family %s", want[i].kernel);
        at_device_info dev = tm_device(want[i].uuid);
        char size[64];
        tpl_problem_format(&want[i].problem, size, sizeof size);
        at_lookup_level lv = lk_choose(d, &dev, fam, &want[i].problem, 0, cfg, config);
        CHECK_MSG(lv == AT_LOOKUP_EXACT && strcmp(config, want[i].best) == 0,
                  "%s %s on %s: level %d, %s; stored best %s", fam->name, size, want[i].uuid,
                  lv, config, want[i].best);
        if (want[i].best_det[0]) {
            lv = lk_choose(d, &dev, fam, &want[i].problem, 1, cfg, config);
            CHECK_MSG(lv == AT_LOOKUP_EXACT && strcmp(config, want[i].best_det) == 0,
                      "%s %s deterministic: level %d, %s; stored %s", fam->name, size, lv,
                      config, want[i].best_det);
        }
    }
    /* nearest tuned shape on the device, then on another device of the arch */
    static const struct { const char *kernel, *size, *uuid; at_lookup_level level; } near[] = {
        {"sum", "100000", TM_UUID0, AT_LOOKUP_NEAREST},
        {"sum", "700000", TM_UUID0, AT_LOOKUP_NEAREST},
        {"dot", "30000", TM_UUID0, AT_LOOKUP_NEAREST},
        {"jacobi", "6000", TM_UUID0, AT_LOOKUP_NEAREST},
        {"matmul", "1000x1000x1000", TM_UUID0, AT_LOOKUP_NEAREST},
        {"matmul", "4096x4096x256", TM_UUID0, AT_LOOKUP_NEAREST},
        {"matmul", "2000x2000x2000", NULL, AT_LOOKUP_ARCH},
        {"jacobi", "2000", NULL, AT_LOOKUP_ARCH},
    };
    for (size_t i = 0; i < sizeof near / sizeof near[0] && !th_failed(); i++) {
        tpl_problem q;
        CHECK_OK(tpl_problem_parse(near[i].size, &q, err, sizeof err));
        const tm_best *e = tm_nearest(want, n_want, near[i].uuid, near[i].kernel, &q);
        CHECK(e);
        at_device_info dev = tm_device(near[i].uuid ? near[i].uuid : "GPU-never-tuned");
        at_lookup_level lv = lk_choose(d, &dev, tpl_find(near[i].kernel), &q, 0, cfg, config);
        CHECK_MSG(lv == near[i].level && strcmp(config, e->best) == 0,
                  "%s %s: level %d, %s; nearest stored best %s", near[i].kernel, near[i].size,
                  lv, config, e->best);
    }
    db_close(d);
    /* opened again: nothing left to do, nothing changed */
    char *meta = tm_text(path, "SELECT * FROM meta ORDER BY key");
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    db_close(d);
    char *meta2 = tm_text(path, "SELECT * FROM meta ORDER BY key");
    int unchanged = meta && meta2 && strcmp(meta, meta2) == 0;
    free(meta);
    free(meta2);
    CHECK(unchanged);
}

/* The migrated tables are the ones a new database gets: same columns,
 * types, defaults and UNIQUE keys. */
TEST(migrate_gives_the_created_schema)
{
    char path[4300], fresh[4300], err[512];
    CHECK(tm_copy_fixture(path, sizeof path));
    snprintf(fresh, sizeof fresh, "%s/fresh.db", th_tmpdir());
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    db_close(d);
    CHECK_OK(db_open(&d, fresh, 1, err, sizeof err));
    db_close(d);
    static const char *const queries[] = {
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('problem')",
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('measurement')",
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('result')",
        "SELECT l.\"unique\", group_concat(i.name, ',') FROM pragma_index_list('problem') l, "
        "pragma_index_info(l.name) i GROUP BY l.name ORDER BY 2",
        "SELECT l.\"unique\", group_concat(i.name, ',') FROM pragma_index_list('measurement') l, "
        "pragma_index_info(l.name) i GROUP BY l.name ORDER BY 2",
        "SELECT name, type FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' "
        "ORDER BY name",
    };
    for (size_t q = 0; q < sizeof queries / sizeof queries[0]; q++) {
        char *a = tm_text(path, queries[q]), *b = tm_text(fresh, queries[q]);
        int same = a && b && *a && strcmp(a, b) == 0;
        CHECK_MSG(same, "%s\nmigrated:\n%s\ncreated:\n%s", queries[q], a ? a : "?",
                  b ? b : "?");
        free(a);
        free(b);
    }
}

/* A migration that fails late leaves the file as the release wrote it. */
TEST(migrate_failure_leaves_the_file_unchanged)
{
    char path[4300], err[512];
    CHECK(tm_copy_fixture(path, sizeof path));
    /* the last step (the version in meta) is refused by a trigger */
    CHECK_EQ(th_sql_exec(path, "CREATE TRIGGER tm_block BEFORE UPDATE ON meta BEGIN "
                               "SELECT RAISE(ABORT, 'tm_block says no'); END;"), SQLITE_OK);
    char *before = tm_text(path, "SELECT * FROM result ORDER BY id");
    char *schema = tm_text(path, "SELECT name, sql FROM sqlite_master ORDER BY name");
    db *d = NULL;
    at_status s = db_open(&d, path, 1, err, sizeof err);
    CHECK_MSG(s != AT_OK && d == NULL, "opened: %s", at_status_string(s));
    CHECK_MSG(strstr(err, "migrating schema version 1 to 2 failed") &&
              strstr(err, "tm_block says no"), "message: %s", err);
    char *after = tm_text(path, "SELECT * FROM result ORDER BY id");
    char *schema2 = tm_text(path, "SELECT name, sql FROM sqlite_master ORDER BY name");
    int same = before && after && schema && schema2 && !strcmp(before, after) &&
               !strcmp(schema, schema2);
    free(before), free(after), free(schema), free(schema2);
    CHECK_MSG(same, "the failed migration changed the file");
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), 1);
    /* without the obstacle it goes through */
    CHECK_EQ(th_sql_exec(path, "DROP TRIGGER tm_block"), SQLITE_OK);
    CHECK_MSG(db_open(&d, path, 1, err, sizeof err) == AT_OK, "open: %s", err);
    db_close(d);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
}

/* ---- a read-only file of the old version ---- */

/* In the child: the read-only file reads as version 2 and serves the
 * release's bests; "" or what went wrong. */
static void tm_readonly_checks(const char *path, const tm_best *want, int n_want, char *why,
                               size_t len)
{
    db *d = NULL;
    char err[512];
    at_status s = db_open(&d, path, 1, err, sizeof err);
    if (s != AT_OK) {
        snprintf(why, len, "open: %s (%s)", at_status_string(s), err);
        return;
    }
    if (!db_is_readonly(d)) {
        snprintf(why, len, "not read-only");
        db_close(d);
        return;
    }
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    for (int i = 0; i < n_want && !why[0]; i++) {
        at_device_info dev = tm_device(want[i].uuid);
        at_lookup_level lv = lk_choose(d, &dev, tpl_find(want[i].kernel), &want[i].problem, 0,
                                       cfg, config);
        if (lv != AT_LOOKUP_EXACT || strcmp(config, want[i].best) != 0)
            snprintf(why, len, "%s #%d: level %d %s, stored %s", want[i].kernel, i, lv, config,
                     want[i].best);
    }
    db_result *rs = NULL;
    int n = 0;
    if (!why[0] && (db_results(d, NULL, NULL, &rs, &n) != AT_OK || n != 69 ||
                    !tpl_problem_plain(&rs[0].problem) || rs[0].problem.batch != 1))
        snprintf(why, len, "db_results: %d rows (%s)", n, db_errmsg(d));
    free(rs);
    db_measurement *ms = NULL;
    if (!why[0] && (db_measurements(d, NULL, NULL, &ms, &n) != AT_OK || n != 2 ||
                    !tpl_problem_plain(&ms[0].problem)))
        snprintf(why, len, "db_measurements: %d rows (%s)", n, db_errmsg(d));
    free(ms);
    db_close(d);
}

TEST(migrate_readonly_old_version_is_read_as_new)
{
    char path[4300];
    CHECK(tm_copy_fixture(path, sizeof path));
    tm_follow_sources(path);
    tm_best want[32];
    int n_want = tm_expected(path, want, 32);
    CHECK_EQ(n_want, 10);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM result"), 69);
    CHECK_EQ(chmod(path, 0444), 0);
    char *bytes = tm_text(path, "SELECT * FROM result ORDER BY id");
    struct stat before;
    CHECK_EQ(stat(path, &before), 0);

    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char why[1024] = "";
        close(fds[0]);
        if (geteuid() == 0) {
            /* root writes through permissions: read as nobody, who may
             * enter the test's folders but not write them */
            char dir[4300];
            snprintf(dir, sizeof dir, "%s", path);
            for (int up = 0; up < 2; up++) {
                char *slash = strrchr(dir, '/');
                if (!slash || slash == dir)
                    break;
                *slash = '\0';
                struct stat sb;
                if (stat(dir, &sb) == 0 && !(sb.st_mode & S_IXOTH))
                    chmod(dir, (sb.st_mode & 07777) | S_IXOTH);
            }
            if (setgid(65534) != 0 || setuid(65534) != 0)
                snprintf(why, sizeof why, "cannot drop root: %s", strerror(errno));
            else if (access(path, R_OK) != 0)
                _exit(77);
        }
        if (!why[0])
            tm_readonly_checks(path, want, n_want, why, sizeof why);
        ssize_t wr = write(fds[1], why, strlen(why));
        (void)wr;
        _exit(why[0] ? 1 : 0);
    }
    close(fds[1]);
    char msg[1024] = "";
    ssize_t got = read(fds[0], msg, sizeof msg - 1);
    if (got > 0)
        msg[got] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        free(bytes);
        printf("     note: read-only checks not run: nobody cannot reach %s\n", path);
        return;
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "read-only child: %s", msg);
    /* still the release's file */
    struct stat after;
    CHECK_EQ(stat(path, &after), 0);
    CHECK(after.st_size == before.st_size && after.st_mtime == before.st_mtime);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), 1);
    char *bytes2 = tm_text(path, "SELECT * FROM result ORDER BY id");
    int same = bytes && bytes2 && strcmp(bytes, bytes2) == 0;
    free(bytes);
    free(bytes2);
    CHECK(same);
}

/* ---- version 4 (no epilogue column) to 5 ---- */

/* The three tables of version 4 that version 5 widened, with the columns they had. */
static const struct { const char *table, *cols; } tm_v4_tables[] = {
    {"problem", "id, kernel, n_dims, d0, d1, d2, dtype, math, op_a, op_b, layout, batch"},
    {"measurement", "id, device_id, kernel, n_dims, d0, d1, d2, dtype, math, op_a, op_b, "
                    "layout, batch, name, time_ms, gflops, gbs, rel_error, note, created"},
    {"recorded", "id, device_id, kernel, n_dims, d0, d1, d2, dtype, math, op_a, op_b, layout, "
                 "batch, level, calls, time_ms, first_seen, last_seen"},
};

/* Removes every occurrence of cut from s (in place). */
static void tm_cut(char *s, const char *cut)
{
    size_t n = strlen(cut);
    for (char *p = strstr(s, cut); p; p = strstr(p, cut))
        memmove(p, p + n, strlen(p + n) + 1);
}

/* Rewrites the file at path, written by this build, as version 4 wrote it: each widened table
 * rebuilt from its own CREATE statement without the epilogue column and key part, rows and
 * ids kept; user_version and meta say 4. 1 on success. */
static int tm_make_v4(const char *path)
{
    sqlite3 *h = NULL;
    int ok = sqlite3_open(path, &h) == SQLITE_OK;
    for (size_t t = 0; ok && t < sizeof tm_v4_tables / sizeof tm_v4_tables[0]; t++) {
        const char *table = tm_v4_tables[t].table;
        char q[256], create[4096], sql[8192];
        snprintf(q, sizeof q, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '%s'",
                 table);
        sqlite3_stmt *st = NULL;
        ok = sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_ROW;
        if (ok)
            snprintf(create, sizeof create, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        if (!ok)
            break;
        tm_cut(create, "    epilogue TEXT NOT NULL DEFAULT '',\n");
        tm_cut(create, ", epilogue");
        const char *body = strchr(create, '(');
        ok = body && !strstr(create, "epilogue");
        if (!ok)
            break;
        snprintf(sql, sizeof sql, "CREATE TABLE %s_v4 %s; INSERT INTO %s_v4 (%s) SELECT %s FROM %s;"
                 " DROP TABLE %s; ALTER TABLE %s_v4 RENAME TO %s;", table, body, table,
                 tm_v4_tables[t].cols, tm_v4_tables[t].cols, table, table, table, table);
        ok = sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK;
    }
    ok = ok && sqlite3_exec(h, "PRAGMA user_version = 4; UPDATE meta SET value = '4' WHERE key = "
                               "'schema_version'", NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(h);
    return ok;
}

/* Stores the rows of the version 4 file: results of two plain kinds, a measurement and a
 * recorded problem, on device dev. */
static void tm_fill_v4(db *d, const at_device_info *dev)
{
    CHECK_OK(db_put_device(d, dev, "13.0"));
    CHECK_OK(tm_store(d, dev->uuid, "1024x1024x1024:bf16", "A=1", 2.0));
    CHECK_OK(tm_store(d, dev->uuid, "2048x2048x2048:bf16", "A=2", 9.0));
    CHECK_OK(tm_store(d, dev->uuid, "1024x1024x1024:tf32:col:NT", "A=3", 3.0));
    db_measurement m;
    memset(&m, 0, sizeof m);
    snprintf(m.device_uuid, sizeof m.device_uuid, "%s", dev->uuid);
    snprintf(m.kernel, sizeof m.kernel, "%s", tm_any_kind.name);
    snprintf(m.name, sizeof m.name, "cublas");
    m.problem = tm_problem("1024x1024x1024:bf16");
    m.time_ms = 1.5;
    CHECK_OK(db_put_measurement(d, &m));
}

TEST(migrate_version_4_gains_the_epilogue_column)
{
    char path[4300], ro[4300], fresh[4300], err[512];
    snprintf(path, sizeof path, "%s/v4.db", th_tmpdir());
    snprintf(ro, sizeof ro, "%s/v4ro.db", th_tmpdir());
    snprintf(fresh, sizeof fresh, "%s/v5fresh.db", th_tmpdir());
    at_device_info dev = tm_device("GPU-v4");
    db *d = NULL;
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    tm_fill_v4(d, &dev);
    db_close(d);
    CHECK_EQ(th_sql_exec(path, "INSERT INTO recorded (device_id, kernel, n_dims, d0, d1, d2, "
                               "dtype, level, calls, time_ms, first_seen, last_seen) SELECT id, "
                               "'tm_any_kind', 3, 777, 777, 777, 'bf16', 2, 5, 1.0, 'x', 'x' "
                               "FROM device"), SQLITE_OK);
    CHECK(tm_make_v4(path));
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), 4);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM pragma_table_info('problem') "
                              "WHERE name = 'epilogue'"), 0);
    char *problems = tm_text(path, "SELECT * FROM problem ORDER BY id");
    char *measures = tm_text(path, "SELECT * FROM measurement ORDER BY id");
    char *recorded = tm_text(path, "SELECT * FROM recorded ORDER BY id");
    char *results = tm_text(path, "SELECT * FROM result ORDER BY id");
    CHECK(problems && measures && recorded && results);

    /* read-only: read as version 5 (every row without an epilogue), the file untouched */
    char cmd[16384], *out = NULL;
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0444 '%s'", path, ro, ro);
    CHECK_EQ(th_run(cmd, &out), 0);
    free(out);
    CHECK_OK(db_open(&d, ro, DB_OPEN_READONLY, err, sizeof err));
    db_result *rs = NULL;
    int n = 0;
    CHECK_OK(db_results(d, dev.uuid, tm_any_kind.name, &rs, &n));
    CHECK_EQ(n, 3);
    for (int i = 0; i < n; i++)
        CHECK_EQ(rs[i].problem.epilogue, 0);
    free(rs);
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    tpl_problem q = tm_problem("1024x1024x1024:bf16");
    CHECK_EQ(lk_choose(d, &dev, &tm_any_kind, &q, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=1");
    q = tm_problem("1024x1024x1024:bf16:bias_col:gelu");      /* no epilogue tuned in 4 */
    CHECK_EQ(lk_choose(d, &dev, &tm_any_kind, &q, 0, cfg, config), AT_LOOKUP_DEFAULT);
    db_measurement *ms = NULL;
    CHECK_OK(db_measurements(d, NULL, tm_any_kind.name, &ms, &n));
    CHECK(n == 1 && ms[0].problem.epilogue == 0);
    free(ms);
    db_recorded *w = NULL;
    CHECK_OK(db_wanted(d, NULL, 1, &w, &n));
    CHECK(n == 1 && w[0].problem.dims[0] == 777 && w[0].problem.epilogue == 0);
    free(w);
    db_close(d);
    CHECK_EQ(th_sql_int(ro, "PRAGMA user_version"), 4);

    /* writable: version 5, every row and id kept, the epilogue '' (none), the schema a fresh
     * file's */
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    db_close(d);
    CHECK_EQ(th_sql_int(path, "PRAGMA user_version"), DB_SCHEMA_VERSION);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM meta WHERE key = 'migrated_4_to_5'"), 1);
    char sql[512];
    for (size_t t = 0; t < sizeof tm_v4_tables / sizeof tm_v4_tables[0]; t++) {
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE epilogue <> ''",
                 tm_v4_tables[t].table);
        CHECK_EQ(th_sql_int(path, sql), 0);
    }
    char *p2 = tm_text(path, "SELECT " "id, kernel, n_dims, d0, d1, d2, dtype, math, op_a, op_b, "
                             "layout, batch FROM problem ORDER BY id");
    char *m2 = tm_text(path, "SELECT id, device_id, kernel, n_dims, d0, d1, d2, dtype, math, "
                             "op_a, op_b, layout, batch, name, time_ms, gflops, gbs, rel_error, "
                             "note, created FROM measurement ORDER BY id");
    char *r2 = tm_text(path, "SELECT id, device_id, kernel, n_dims, d0, d1, d2, dtype, math, "
                             "op_a, op_b, layout, batch, level, calls, time_ms, first_seen, "
                             "last_seen FROM recorded ORDER BY id");
    char *res2 = tm_text(path, "SELECT * FROM result ORDER BY id");
    int same = p2 && m2 && r2 && res2 && !strcmp(p2, problems) && !strcmp(m2, measures) &&
               !strcmp(r2, recorded) && !strcmp(res2, results);
    free(problems), free(measures), free(recorded), free(results);
    free(p2), free(m2), free(r2), free(res2);
    CHECK_MSG(same, "rows changed by the migration");
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    CHECK_OK(db_open(&d, fresh, 1, err, sizeof err));
    db_close(d);
    static const char *const queries[] = {
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('problem')",
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('measurement')",
        "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info('recorded')",
        "SELECT l.\"unique\", group_concat(i.name, ',') FROM pragma_index_list('problem') l, "
        "pragma_index_info(l.name) i GROUP BY l.name ORDER BY 2",
        "SELECT l.\"unique\", group_concat(i.name, ',') FROM pragma_index_list('recorded') l, "
        "pragma_index_info(l.name) i GROUP BY l.name ORDER BY 2",
    };
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        char *a = tm_text(path, queries[i]), *b = tm_text(fresh, queries[i]);
        CHECK_MSG(a && b && *a && strcmp(a, b) == 0, "%s\nmigrated:\n%s\ncreated:\n%s", queries[i],
                  a ? a : "?", b ? b : "?");
        free(a);
        free(b);
    }
    /* the same sizes with an epilogue: a problem of its own, beside the plain one */
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    CHECK_OK(tm_store(d, dev.uuid, "1024x1024x1024:bf16:bias_col:gelu", "A=4", 1.0));
    q = tm_problem("1024x1024x1024:bf16");
    CHECK_EQ(lk_choose(d, &dev, &tm_any_kind, &q, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=1");
    q = tm_problem("1024x1024x1024:bf16:bias_col:gelu");
    CHECK_EQ(lk_choose(d, &dev, &tm_any_kind, &q, 0, cfg, config), AT_LOOKUP_EXACT);
    CHECK_STR(config, "A=4");
    db_close(d);
    CHECK_EQ(th_sql_int(path, "SELECT count(*) FROM problem WHERE epilogue = 'bias_col:gelu'"), 1);
}
