/* migrate.c: brings a database of an older schema version up to date:
 * migrated in place where writable, read through views where read-only. */
#include <string.h>
#include "db_internal.h"

/* Version 1 to 2: the problem and measurement tables gain the problem's
 * kind (dtype, math, op_a, op_b, layout, batch) in their UNIQUE keys. The
 * columns version 1 has, in each: */
#define V1_PROBLEM_COLS "id, kernel, n_dims, d0, d1, d2"
#define V1_MEASUREMENT_COLS \
    "id, device_id, kernel, n_dims, d0, d1, d2, name, time_ms, gflops, gbs, rel_error, " \
    "note, created"
/* What a version 1 row means in the new columns: the plain problem. */
#define V1_KIND_DEFAULTS \
    "'f32' AS dtype, '' AS math, 'N' AS op_a, 'N' AS op_b, 'row' AS layout, 1 AS batch, " \
    "'' AS epilogue"

/* A read-only version 1 database seen as version 2: temporary views named
 * like the two tables (the temp schema is searched first) that add the new
 * columns at their defaults. Nothing is written to the file. */
static at_status db_views_1(db *d)
{
    at_status s = AT_OK;
    if (!db_exec(d, "CREATE TEMP VIEW IF NOT EXISTS problem AS SELECT " V1_PROBLEM_COLS ", "
                    V1_KIND_DEFAULTS " FROM main.problem;"
                    "CREATE TEMP VIEW IF NOT EXISTS measurement AS SELECT " V1_MEASUREMENT_COLS
                    ", " V1_KIND_DEFAULTS " FROM main.measurement;",
                 "reading schema version 1 as version 2", &s))
        return s;
    return AT_OK;
}

/* Rows whose reference points nowhere, over the whole database. */
static at_status db_dangling(db *d, long long *n)
{
    return db_query_int(d, "SELECT count(*) FROM pragma_foreign_key_check", NULL, n,
                        "checking references");
}

/* Inside the migration's transaction: rebuilds `table` from its current
 * definition (create: the CREATE TABLE of "<table>_v2"), copying `cols`
 * with their ids, and replaces it. Fails if a row is lost. */
static at_status db_rebuild(db *d, const char *table, const char *create, const char *cols)
{
    char sql[2048];
    long long before = 0, after = -1;
    at_status s;
    db_fmt(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    if ((s = db_query_int(d, sql, NULL, &before, "counting rows to migrate")) != AT_OK)
        return s;
    db_fmt(sql, sizeof sql, "DROP TABLE IF EXISTS %s_v2; %s INSERT INTO %s_v2 (%s) SELECT %s "
           "FROM %s ORDER BY id;", table, create, table, cols, cols, table);
    if (!db_exec(d, sql, "copying rows into the new schema", &s))
        return s;
    db_fmt(sql, sizeof sql, "SELECT count(*) FROM %s_v2", table);
    if ((s = db_query_int(d, sql, NULL, &after, "counting migrated rows")) != AT_OK)
        return s;
    if (after != before)
        return db_fail(d, AT_ERR_DB_CORRUPT, "table %s: %lld rows before, %lld after copying",
                       table, before, after);
    db_fmt(sql, sizeof sql, "DROP TABLE %s; ALTER TABLE %s_v2 RENAME TO %s;", table, table,
           table);
    return db_exec(d, sql, "replacing a table", &s) ? AT_OK : s;
}

/* Inside the transaction: both tables rebuilt, and no reference broken
 * by it (rows that pointed nowhere before are not ours to judge). */
static at_status db_migrate_tables_1_to_2(db *d)
{
    char problem[2048], measurement[2048];
    db_problem_table_sql(problem, sizeof problem, "problem_v2");
    db_measurement_table_sql(measurement, sizeof measurement, "measurement_v2");
    long long before = 0, after = 0;
    at_status s;
    if ((s = db_dangling(d, &before)) != AT_OK ||
        (s = db_rebuild(d, "problem", problem, V1_PROBLEM_COLS)) != AT_OK ||
        (s = db_rebuild(d, "measurement", measurement, V1_MEASUREMENT_COLS)) != AT_OK ||
        (s = db_dangling(d, &after)) != AT_OK)
        return s;
    if (after > before)
        return db_fail(d, AT_ERR_DB_CORRUPT, "%lld rows lost their reference", after - before);
    return AT_OK;
}

/* Inside the transaction: version `to` in the header and the meta table,
 * and when the migration to it ran (meta key migrated_<to-1>_to_<to>). */
static at_status db_record_migration(db *d, int to)
{
    at_status s = AT_OK;
    char sql[256];
    db_fmt(sql, sizeof sql, "PRAGMA user_version = %d; UPDATE meta SET value = '%d' "
           "WHERE key = 'schema_version'", to, to);
    if (!db_exec(d, sql, "recording the schema version", &s))
        return s;
    sqlite3_stmt *st;
    db_fmt(sql, sizeof sql, "INSERT OR REPLACE INTO meta (key, value) "
           "VALUES ('migrated_%d_to_%d', ?1)", to - 1, to);
    if ((s = db_prepare(d, &st, sql)) != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    db_bind_text(st, 1, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? AT_OK : db_sqlfail(d, rc, "recording the migration");
}

/* The version 1 to 2 migration, in one transaction: both tables rebuilt
 * with their ids (results keep their problem_id), no reference broken by
 * it, version and meta updated. Another process that migrated first is seen
 * inside the transaction and left alone. */
static at_status db_migrate_1_to_2(db *d)
{
    at_status s = AT_OK;
    /* dropping a referenced table needs foreign keys off (outside a
     * transaction); db_setup turns them on afterwards */
    if (!db_exec(d, "PRAGMA foreign_keys = OFF", "disabling foreign keys", &s))
        return s;
    if ((s = db_begin(d)) != AT_OK)
        return s;
    long long version = 0;
    s = db_query_int(d, "PRAGMA user_version", NULL, &version, "reading the schema version");
    if (s != AT_OK || version >= 2) {
        db_rollback(d);
        return s;
    }
    if ((s = db_migrate_tables_1_to_2(d)) != AT_OK ||
        (s = db_record_migration(d, 2)) != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}

/* Version 2 to 3: the result table gains sustained_ms and rank_ms (NULL:
 * never re-timed, so every stored row ranks by time_ms as before), in one
 * transaction; another process that migrated first is left alone. */
static at_status db_migrate_2_to_3(db *d)
{
    at_status s = db_begin(d);
    if (s != AT_OK)
        return s;
    long long version = 0;
    s = db_query_int(d, "PRAGMA user_version", NULL, &version, "reading the schema version");
    if (s != AT_OK || version >= 3) {
        db_rollback(d);
        return s;
    }
    if (!db_exec(d, "ALTER TABLE result ADD COLUMN sustained_ms REAL; "
                    "ALTER TABLE result ADD COLUMN rank_ms REAL;",
                 "adding the sustained times", &s) ||
        (s = db_record_migration(d, 3)) != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}

/* A read-only database older than version 3 seen with the result table of
 * version 3: a temporary view that adds the two columns as NULL. */
static at_status db_views_2(db *d)
{
    at_status s = AT_OK;
    if (!db_exec(d, "CREATE TEMP VIEW IF NOT EXISTS result AS SELECT *, "
                    "NULL AS sustained_ms, NULL AS rank_ms FROM main.result;",
                 "reading an older schema's results as version 3", &s))
        return s;
    return AT_OK;
}

/* Version 3 to 4: the recorded table (problems the runtime served below
 * the exact level) is added, empty; every other table is left as it is.
 * One transaction; another process that migrated first is left alone. */
static at_status db_migrate_3_to_4(db *d)
{
    at_status s = db_begin(d);
    if (s != AT_OK)
        return s;
    long long version = 0;
    s = db_query_int(d, "PRAGMA user_version", NULL, &version, "reading the schema version");
    if (s != AT_OK || version >= 4) {
        db_rollback(d);
        return s;
    }
    char sql[2048];
    db_recorded_table_sql(sql, sizeof sql, "IF NOT EXISTS recorded");
    if (!db_exec(d, sql, "adding the recorded table", &s) ||
        (s = db_record_migration(d, 4)) != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}

/* A read-only database older than version 4 seen with an (empty) recorded
 * table: a temporary one, so its queries work and find nothing. */
static at_status db_views_3(db *d)
{
    char sql[2048];
    at_status s = AT_OK;
    db_recorded_table_sql(sql, sizeof sql, "IF NOT EXISTS temp.recorded");
    if (!db_exec(d, sql, "reading an older schema as version 4", &s))
        return s;
    return AT_OK;
}

/* Version 4 to 5: the problem, measurement and recorded tables gain the epilogue column ('':
 * none, what every older row means) in their UNIQUE keys. The columns version 4 has: */
#define V4_PROBLEM_COLS "id, kernel, n_dims, d0, d1, d2, dtype, math, op_a, op_b, layout, batch"
#define V4_MEASUREMENT_COLS \
    "id, device_id, kernel, n_dims, d0, d1, d2, dtype, math, op_a, op_b, layout, batch, name, " \
    "time_ms, gflops, gbs, rel_error, note, created"
#define V4_RECORDED_COLS \
    "id, device_id, kernel, n_dims, d0, d1, d2, dtype, math, op_a, op_b, layout, batch, level, " \
    "calls, time_ms, first_seen, last_seen"

/* The version 4 to 5 migration, in one transaction (as 1 to 2): the three tables rebuilt
 * with their ids, no reference broken, version and meta updated; another process that
 * migrated first is left alone. */
static at_status db_migrate_4_to_5(db *d)
{
    at_status s = AT_OK;
    if (!db_exec(d, "PRAGMA foreign_keys = OFF", "disabling foreign keys", &s))
        return s;
    if ((s = db_begin(d)) != AT_OK)
        return s;
    long long version = 0, before = 0, after = 0;
    s = db_query_int(d, "PRAGMA user_version", NULL, &version, "reading the schema version");
    if (s != AT_OK || version >= 5) {
        db_rollback(d);
        return s;
    }
    char problem[2048], measurement[2048], recorded[2048];
    db_problem_table_sql(problem, sizeof problem, "problem_v2");
    db_measurement_table_sql(measurement, sizeof measurement, "measurement_v2");
    db_recorded_table_sql(recorded, sizeof recorded, "recorded_v2");
    if ((s = db_dangling(d, &before)) != AT_OK ||
        (s = db_rebuild(d, "problem", problem, V4_PROBLEM_COLS)) != AT_OK ||
        (s = db_rebuild(d, "measurement", measurement, V4_MEASUREMENT_COLS)) != AT_OK ||
        (s = db_rebuild(d, "recorded", recorded, V4_RECORDED_COLS)) != AT_OK ||
        (s = db_dangling(d, &after)) != AT_OK) {
        db_rollback(d);
        return s;
    }
    if (after > before) {
        db_rollback(d);
        return db_fail(d, AT_ERR_DB_CORRUPT, "%lld rows lost their reference", after - before);
    }
    if ((s = db_record_migration(d, 5)) != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}

/* A read-only database older than version 5 seen with the epilogue column: temporary views
 * over the tables that lack it (version 1's problem and measurement views, and the temporary
 * recorded table of one older than 4, have it already). */
static at_status db_views_4(db *d, long long version)
{
    at_status s = AT_OK;
    if (version >= 2 &&
        !db_exec(d, "CREATE TEMP VIEW IF NOT EXISTS problem AS SELECT *, '' AS epilogue "
                    "FROM main.problem;"
                    "CREATE TEMP VIEW IF NOT EXISTS measurement AS SELECT *, '' AS epilogue "
                    "FROM main.measurement;",
                 "reading an older schema's problems as version 5", &s))
        return s;
    if (version == 4 &&
        !db_exec(d, "CREATE TEMP VIEW IF NOT EXISTS recorded AS SELECT *, '' AS epilogue "
                    "FROM main.recorded;",
                 "reading an older schema's recorded problems as version 5", &s))
        return s;
    return AT_OK;
}

at_status db_upgrade(db *d, long long version)
{
    if (version < 1 || version > 4)
        return db_fail(d, AT_ERR_DB_CORRUPT, "%s has schema version %lld, which this autotune "
                       "cannot migrate", d->path, version);
    if (d->readonly) {
        at_status s = version < 2 ? db_views_1(d) : AT_OK;
        if (s == AT_OK && version < 3)
            s = db_views_2(d);
        if (s == AT_OK && version < 4)
            s = db_views_3(d);
        return s == AT_OK ? db_views_4(d, version) : s;
    }
    int from = (int)version;
    at_status s = AT_OK;
    static at_status (*const steps[])(db *) = {
        db_migrate_1_to_2, db_migrate_2_to_3, db_migrate_3_to_4, db_migrate_4_to_5,
    };
    for (; s == AT_OK && from < DB_SCHEMA_VERSION; from++)
        if ((s = steps[from - 1](d)) != AT_OK)
            break;
    if (s != AT_OK) {
        char why[sizeof d->errmsg], state[32];
        db_copy(why, sizeof why, d->errmsg);
        if (from > version)
            db_fmt(state, sizeof state, "at version %d", from);
        else
            db_copy(state, sizeof state, "unchanged");
        db_fail(d, s, "%s: migrating schema version %d to %d failed, the file is %s: %.900s",
                d->path, from, from + 1, state, why);
    }
    return s;
}
