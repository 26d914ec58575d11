/* schema.c: the schema of version DB_SCHEMA_VERSION, its creation in an
 * empty file, and the checks that a database is one of ours. */
#include <string.h>
#include "db_internal.h"

#define DB_CREATED_BY "autotune"

/* The problem's kind: readable names (tpl_dtype_name, ...), defaults the
 * plain problem's (FP32, exact math, NN, row-major, one product). */
#define DB_KIND_COLUMNS \
    "    dtype TEXT NOT NULL DEFAULT 'f32',\n" \
    "    math TEXT NOT NULL DEFAULT '',\n" \
    "    op_a TEXT NOT NULL DEFAULT 'N',\n" \
    "    op_b TEXT NOT NULL DEFAULT 'N',\n" \
    "    layout TEXT NOT NULL DEFAULT 'row',\n" \
    "    batch INTEGER NOT NULL DEFAULT 1,\n" \
    "    epilogue TEXT NOT NULL DEFAULT '',\n"

/* The problem table after its name (one key: kernel, sizes and kind). */
#define DB_PROBLEM_BODY \
    " (\n" \
    "    id INTEGER PRIMARY KEY,\n" \
    "    kernel TEXT NOT NULL,\n" \
    "    n_dims INTEGER NOT NULL,\n" \
    "    d0 INTEGER NOT NULL DEFAULT 0,\n" \
    "    d1 INTEGER NOT NULL DEFAULT 0,\n" \
    "    d2 INTEGER NOT NULL DEFAULT 0,\n" \
    DB_KIND_COLUMNS \
    "    UNIQUE (kernel, " DB_KEY_COLS ")\n" \
    ");\n"

/* The measurement table after its name. */
#define DB_MEASUREMENT_BODY \
    " (\n" \
    "    id INTEGER PRIMARY KEY,\n" \
    "    device_id INTEGER NOT NULL REFERENCES device(id),\n" \
    "    kernel TEXT NOT NULL,\n" \
    "    n_dims INTEGER NOT NULL,\n" \
    "    d0 INTEGER NOT NULL DEFAULT 0,\n" \
    "    d1 INTEGER NOT NULL DEFAULT 0,\n" \
    "    d2 INTEGER NOT NULL DEFAULT 0,\n" \
    DB_KIND_COLUMNS \
    "    name TEXT NOT NULL,\n" \
    "    time_ms REAL NOT NULL DEFAULT 0,\n" \
    "    gflops REAL NOT NULL DEFAULT 0,\n" \
    "    gbs REAL NOT NULL DEFAULT 0,\n" \
    "    rel_error REAL NOT NULL DEFAULT -1,\n" \
    "    note TEXT NOT NULL DEFAULT '',\n" \
    "    created TEXT NOT NULL,\n" \
    "    UNIQUE (device_id, kernel, " DB_KEY_COLS ", name)\n" \
    ");\n"

/* The recorded table after its name: problems the runtime served below the
 * exact level (db/recorded.c), one row per device and problem. level is the
 * at_lookup_level that served it last; time_ms the estimated time its calls
 * took in all (db.h's db_recorded). */
#define DB_RECORDED_BODY \
    " (\n" \
    "    id INTEGER PRIMARY KEY,\n" \
    "    device_id INTEGER NOT NULL REFERENCES device(id),\n" \
    "    kernel TEXT NOT NULL,\n" \
    "    n_dims INTEGER NOT NULL,\n" \
    "    d0 INTEGER NOT NULL DEFAULT 0,\n" \
    "    d1 INTEGER NOT NULL DEFAULT 0,\n" \
    "    d2 INTEGER NOT NULL DEFAULT 0,\n" \
    DB_KIND_COLUMNS \
    "    level INTEGER NOT NULL,\n" \
    "    calls INTEGER NOT NULL DEFAULT 0,\n" \
    "    time_ms REAL NOT NULL DEFAULT 0,\n" \
    "    first_seen TEXT NOT NULL,\n" \
    "    last_seen TEXT NOT NULL,\n" \
    "    UNIQUE (device_id, kernel, " DB_KEY_COLS ")\n" \
    ");\n"

void db_recorded_table_sql(char *out, size_t len, const char *name)
{
    db_fmt(out, len, "CREATE TABLE %s%s", name, DB_RECORDED_BODY);
}

void db_problem_table_sql(char *out, size_t len, const char *name)
{
    db_fmt(out, len, "CREATE TABLE %s%s", name, DB_PROBLEM_BODY);
}

void db_measurement_table_sql(char *out, size_t len, const char *name)
{
    db_fmt(out, len, "CREATE TABLE %s%s", name, DB_MEASUREMENT_BODY);
}

/* The schema of version DB_SCHEMA_VERSION. Unused problem dimensions are 0.
 * Times are UTC ISO 8601 with milliseconds ("2026-01-02T03:04:05.678Z"). */
static const char db_schema_sql[] =
    "CREATE TABLE meta (\n"
    "    key TEXT PRIMARY KEY,\n"
    "    value TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE device (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    uuid TEXT NOT NULL UNIQUE,\n"
    "    name TEXT NOT NULL,\n"
    "    arch TEXT NOT NULL,\n"
    "    ordinal INTEGER NOT NULL DEFAULT 0,\n"
    "    cc_major INTEGER NOT NULL,\n"
    "    cc_minor INTEGER NOT NULL,\n"
    "    sm_count INTEGER NOT NULL DEFAULT 0,\n"
    "    memory_bytes INTEGER NOT NULL DEFAULT 0,\n"
    "    l2_bytes INTEGER NOT NULL DEFAULT 0,\n"
    "    smem_per_block_optin INTEGER NOT NULL DEFAULT 0,\n"
    "    smem_per_sm INTEGER NOT NULL DEFAULT 0,\n"
    "    regs_per_block INTEGER NOT NULL DEFAULT 0,\n"
    "    regs_per_sm INTEGER NOT NULL DEFAULT 0,\n"
    "    max_threads_per_block INTEGER NOT NULL DEFAULT 0,\n"
    "    max_threads_per_sm INTEGER NOT NULL DEFAULT 0,\n"
    "    clock_khz INTEGER NOT NULL DEFAULT 0,\n"
    "    mem_clock_khz INTEGER NOT NULL DEFAULT 0,\n"
    "    mem_bus_bits INTEGER NOT NULL DEFAULT 0,\n"
    "    driver_version INTEGER NOT NULL DEFAULT 0,\n"
    "    nvrtc_version TEXT NOT NULL DEFAULT '',\n"
    "    first_seen TEXT NOT NULL,\n"
    "    last_seen TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX device_by_arch ON device(arch);\n"
    "CREATE TABLE kernel (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    name TEXT NOT NULL,\n"
    "    source_hash TEXT NOT NULL,\n"
    "    UNIQUE (name, source_hash)\n"
    ");\n"
    "CREATE TABLE problem" DB_PROBLEM_BODY
    "CREATE TABLE session (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    device_id INTEGER REFERENCES device(id),\n"
    "    command TEXT NOT NULL DEFAULT '',\n"
    "    start_facts TEXT NOT NULL DEFAULT '',\n"
    "    end_facts TEXT NOT NULL DEFAULT '',\n"
    "    outcome TEXT NOT NULL DEFAULT '',\n"
    "    started TEXT NOT NULL,\n"
    "    ended TEXT\n"
    ");\n"
    "CREATE TABLE result (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    device_id INTEGER NOT NULL REFERENCES device(id),\n"
    "    kernel_id INTEGER NOT NULL REFERENCES kernel(id),\n"
    "    problem_id INTEGER NOT NULL REFERENCES problem(id),\n"
    "    config TEXT NOT NULL,\n"
    "    status TEXT NOT NULL,\n"
    "    time_ms REAL NOT NULL DEFAULT 0,\n"
    "    time_min_ms REAL NOT NULL DEFAULT 0,\n"
    "    time_max_ms REAL NOT NULL DEFAULT 0,\n"
    "    runs INTEGER NOT NULL DEFAULT 0,\n"
    "    gflops REAL NOT NULL DEFAULT 0,\n"
    "    gbs REAL NOT NULL DEFAULT 0,\n"
    "    rel_error REAL NOT NULL DEFAULT -1,\n"
    "    compile_ms REAL NOT NULL DEFAULT 0,\n"
    "    binary_key TEXT NOT NULL DEFAULT '',\n"
    "    error TEXT NOT NULL DEFAULT '',\n"
    "    deterministic INTEGER NOT NULL DEFAULT 0,\n"
    "    session_id INTEGER REFERENCES session(id) ON DELETE SET NULL,\n"
    "    created TEXT NOT NULL,\n"
    "    sustained_ms REAL,\n"
    "    rank_ms REAL,\n"
    "    UNIQUE (device_id, kernel_id, problem_id, config)\n"
    ");\n"
    "CREATE INDEX result_best ON result(kernel_id, problem_id, status, time_ms);\n"
    "CREATE INDEX result_created ON result(created);\n"
    "CREATE TABLE binary (\n"
    "    key TEXT PRIMARY KEY,\n"
    "    kernel TEXT NOT NULL,\n"
    "    source_hash TEXT NOT NULL,\n"
    "    config TEXT NOT NULL,\n"
    "    arch TEXT NOT NULL,\n"
    "    nvrtc_version TEXT NOT NULL,\n"
    "    options TEXT NOT NULL,\n"
    "    cubin BLOB NOT NULL,\n"
    "    size INTEGER NOT NULL,\n"
    "    created TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE measurement" DB_MEASUREMENT_BODY
    "CREATE TABLE recorded" DB_RECORDED_BODY;

/* Tables a database of ours must have. */
static const char *const db_tables[] = {
    "meta", "device", "kernel", "problem", "session", "result", "binary",
    "measurement",
};

/* Counts our tables and reads the markers. */
static at_status db_inspect(db *d, long long *n_tables, long long *version,
                            int *has_meta)
{
    at_status s = db_query_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                               NULL, n_tables, "reading the schema");
    if (s != AT_OK)
        return s;
    s = db_query_int(d, "PRAGMA user_version", NULL, version, "reading the schema version");
    if (s != AT_OK)
        return s;
    long long m = 0;
    s = db_query_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                        "AND name = 'meta'", NULL, &m, "reading the schema");
    *has_meta = m > 0;
    return s;
}

/* AT_OK if the (non-empty) database is one of ours of a known version. */
static at_status db_validate(db *d, long long version, int has_meta)
{
    if (!has_meta)
        return db_fail(d, AT_ERR_DB_CORRUPT, "%s is an SQLite database but not an "
                       "autotune tuning database (no meta table); left untouched", d->path);
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT value FROM meta WHERE key = 'created_by'");
    if (s != AT_OK)
        return db_fail(d, AT_ERR_DB_CORRUPT, "%s: unreadable meta table: %s", d->path,
                       sqlite3_errmsg(d->h));
    int rc = sqlite3_step(st);
    int ours = rc == SQLITE_ROW && sqlite3_column_text(st, 0) &&
               strcmp((const char *)sqlite3_column_text(st, 0), DB_CREATED_BY) == 0;
    sqlite3_finalize(st);
    if (!ours)
        return db_fail(d, AT_ERR_DB_CORRUPT, "%s is an SQLite database but not an "
                       "autotune tuning database (meta.created_by is not \"%s\")",
                       d->path, DB_CREATED_BY);
    if (version > DB_SCHEMA_VERSION)
        return db_fail(d, AT_ERR_DB_CORRUPT, "%s has schema version %lld, newer than "
                       "this autotune supports (%d); use a newer autotune or another "
                       "database", d->path, version, DB_SCHEMA_VERSION);
    if (version < 1)
        return db_fail(d, AT_ERR_DB_CORRUPT, "%s has unknown schema version %lld",
                       d->path, version);
    for (size_t i = 0; i < sizeof db_tables / sizeof db_tables[0]; i++) {
        sqlite3_stmt *q;
        s = db_prepare(d, &q, "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                              "AND name = ?1");
        if (s != AT_OK)
            return s;
        db_bind_text(q, 1, db_tables[i]);
        long long n = 0;
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW)
            n = sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
        if (rc != SQLITE_ROW)
            return db_sqlfail(d, rc, "reading the schema");
        if (n == 0)
            return db_fail(d, AT_ERR_DB_CORRUPT, "%s: table %s is missing; not a "
                           "usable tuning database", d->path, db_tables[i]);
    }
    return AT_OK;
}

/* Creates the schema in an empty database (one transaction; a concurrent
 * creator is waited for and its schema kept). */
static at_status db_create_schema(db *d)
{
    at_status s = db_begin(d);
    if (s != AT_OK)
        return s;
    long long n = 0;
    s = db_query_int(d, "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                     NULL, &n, "reading the schema");
    if (s != AT_OK || n > 0) {
        db_rollback(d);
        return s;
    }
    char sql[128];
    db_fmt(sql, sizeof sql, "PRAGMA user_version = %d", DB_SCHEMA_VERSION);
    if (!db_exec(d, db_schema_sql, "creating the schema", &s) ||
        !db_exec(d, sql, "setting the schema version", &s)) {
        db_rollback(d);
        return s;
    }
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "INSERT INTO meta (key, value) VALUES (?1, ?2)");
    if (s != AT_OK) {
        db_rollback(d);
        return s;
    }
    char version[16], now[32];
    db_fmt(version, sizeof version, "%d", DB_SCHEMA_VERSION);
    db_now(now, sizeof now);
    const char *rows[][2] = {
        { "schema_version", version }, { "created_by", DB_CREATED_BY },
        { "created", now },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sqlite3_reset(st);
        db_bind_text(st, 1, rows[i][0]);
        db_bind_text(st, 2, rows[i][1]);
        int rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) {
            s = db_sqlfail(d, rc, "writing the meta table");
            sqlite3_finalize(st);
            db_rollback(d);
            return s;
        }
    }
    sqlite3_finalize(st);
    return db_commit(d);
}

/* Validates, creates if allowed, then sets the connection's pragmas. */
at_status db_setup(db *d, int create, int empty_file)
{
    long long n_tables = 0, version = 0;
    int has_meta = 0;
    at_status s = db_inspect(d, &n_tables, &version, &has_meta);
    if (s != AT_OK)
        return s == AT_ERR_DB_CORRUPT
            ? db_fail(d, s, "%s is not a usable SQLite database: %s", d->path,
                      sqlite3_errmsg(d->h))
            : s;
    if (n_tables == 0 && version == 0) {
        if (!create)
            return db_fail(d, AT_ERR_DB_CORRUPT, "%s is %s without autotune tables "
                           "(not a tuning database)", d->path,
                           empty_file ? "an empty file" : "an SQLite database");
        if (d->readonly)
            return db_fail(d, AT_ERR_DB, "cannot create the schema in %s: read-only",
                           d->path);
        at_status ws = AT_OK;
        if (!db_exec(d, "PRAGMA journal_mode = WAL", "enabling WAL", &ws))
            return ws;
        s = db_create_schema(d);
        if (s != AT_OK)
            return s;
        s = db_inspect(d, &n_tables, &version, &has_meta);
        if (s != AT_OK)
            return s;
    }
    s = db_validate(d, version, has_meta);
    if (s == AT_OK && version < DB_SCHEMA_VERSION)
        s = db_upgrade(d, version);
    if (s != AT_OK)
        return s;
    if (!d->readonly && !db_exec(d, "PRAGMA journal_mode = WAL", "enabling WAL", &s))
        return s;
    if (!db_exec(d, "PRAGMA foreign_keys = ON", "enabling foreign keys", &s))
        return s;
    if (!d->readonly && !db_exec(d, "PRAGMA synchronous = NORMAL", "setting synchronous", &s))
        return s;
    return AT_OK;
}
