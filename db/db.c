/* db.c: the tuning database on SQLite (WAL, busy timeout, foreign keys,
 * schema version); the only code that speaks SQL, every value bound. */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <sqlite3.h>
#include "db.h"

#define DB_BUSY_TIMEOUT_MS 5000
#define DB_CREATED_BY "autotune"

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
    "CREATE TABLE problem (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    kernel TEXT NOT NULL,\n"
    "    n_dims INTEGER NOT NULL,\n"
    "    d0 INTEGER NOT NULL DEFAULT 0,\n"
    "    d1 INTEGER NOT NULL DEFAULT 0,\n"
    "    d2 INTEGER NOT NULL DEFAULT 0,\n"
    "    UNIQUE (kernel, d0, d1, d2)\n"
    ");\n"
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
    "CREATE TABLE measurement (\n"
    "    id INTEGER PRIMARY KEY,\n"
    "    device_id INTEGER NOT NULL REFERENCES device(id),\n"
    "    kernel TEXT NOT NULL,\n"
    "    n_dims INTEGER NOT NULL,\n"
    "    d0 INTEGER NOT NULL DEFAULT 0,\n"
    "    d1 INTEGER NOT NULL DEFAULT 0,\n"
    "    d2 INTEGER NOT NULL DEFAULT 0,\n"
    "    name TEXT NOT NULL,\n"
    "    time_ms REAL NOT NULL DEFAULT 0,\n"
    "    gflops REAL NOT NULL DEFAULT 0,\n"
    "    gbs REAL NOT NULL DEFAULT 0,\n"
    "    rel_error REAL NOT NULL DEFAULT -1,\n"
    "    note TEXT NOT NULL DEFAULT '',\n"
    "    created TEXT NOT NULL,\n"
    "    UNIQUE (device_id, kernel, d0, d1, d2, name)\n"
    ");\n";

/* Tables a database of ours must have. */
static const char *const db_tables[] = {
    "meta", "device", "kernel", "problem", "session", "result", "binary",
    "measurement",
};

struct db {
    sqlite3 *h;
    int readonly;
    char path[4096];
    char errmsg[1024];
};

/* ---- small helpers ---- */

static void db_copy(char *dst, size_t len, const char *src)
{
    if (!dst || len == 0)
        return;
    if (!src)
        src = "";
    size_t n = strlen(src);
    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void db_fmt(char *dst, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void db_fmt(char *dst, size_t len, const char *fmt, ...)
{
    if (!dst || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

/* Sets the handle's message and returns status. */
static at_status db_fail(db *d, at_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static at_status db_fail(db *d, at_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->errmsg, sizeof d->errmsg, fmt, ap);
    va_end(ap);
    return status;
}

/* Maps an SQLite result code to a status. */
static at_status db_status_of(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return AT_ERR_DB_CORRUPT;
    case SQLITE_NOMEM:
        return AT_ERR_NO_MEMORY;
    default:
        return AT_ERR_DB;
    }
}

/* Records SQLite's failure of `what` on the handle. */
static at_status db_sqlfail(db *d, int rc, const char *what)
{
    return db_fail(d, db_status_of(rc), "%s: %s (%s)", what,
                   sqlite3_errmsg(d->h), d->path);
}

/* Current UTC time, ISO 8601 with milliseconds. */
static void db_now(char *out, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    db_fmt(out, len, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

static at_status db_prepare(db *d, sqlite3_stmt **st, const char *sql)
{
    int rc = sqlite3_prepare_v2(d->h, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return db_sqlfail(d, rc, "preparing a statement");
    }
    return AT_OK;
}

static void db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

static long long db_dim(const tpl_problem *p, int i)
{
    if (!p || i >= p->n_dims || i >= TPL_MAX_DIMS)
        return 0;
    return p->dims[i];
}

/* Binds d0, d1, d2 of p at first, first+1, first+2. */
static void db_bind_dims(sqlite3_stmt *st, int first, const tpl_problem *p)
{
    for (int i = 0; i < 3; i++)
        sqlite3_bind_int64(st, first + i, db_dim(p, i));
}

static void db_col_text(sqlite3_stmt *st, int col, char *dst, size_t len)
{
    db_copy(dst, len, (const char *)sqlite3_column_text(st, col));
}

static void db_col_problem(sqlite3_stmt *st, int col, tpl_problem *p)
{
    memset(p, 0, sizeof *p);
    int n = sqlite3_column_int(st, col);
    p->n_dims = n < 0 ? 0 : n > TPL_MAX_DIMS ? TPL_MAX_DIMS : n;
    for (int i = 0; i < 3 && i < TPL_MAX_DIMS; i++)
        p->dims[i] = sqlite3_column_int64(st, col + 1 + i);
}

static int db_exec(db *d, const char *sql, const char *what, at_status *status)
{
    char *msg = NULL;
    int rc = sqlite3_exec(d->h, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        *status = db_fail(d, db_status_of(rc), "%s: %s (%s)", what,
                          msg ? msg : sqlite3_errmsg(d->h), d->path);
        sqlite3_free(msg);
        return 0;
    }
    return 1;
}

static at_status db_begin(db *d)
{
    at_status s = AT_OK;
    db_exec(d, "BEGIN IMMEDIATE", "starting a transaction", &s);
    return s;
}

static at_status db_commit(db *d)
{
    at_status s = AT_OK;
    if (!db_exec(d, "COMMIT", "committing", &s))
        sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    return s;
}

static void db_rollback(db *d)
{
    if (!sqlite3_get_autocommit(d->h))
        sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
}

/* AT_ERR_DB if the handle may not write. */
static at_status db_check_writable(db *d, const char *what)
{
    if (d->readonly)
        return db_fail(d, AT_ERR_DB, "%s: the database is read-only (%s)",
                       what, d->path);
    return AT_OK;
}

/* Runs a single-value integer query; *value = 0 if no row. */
static at_status db_query_int(db *d, const char *sql, const char *arg,
                              long long *value, const char *what)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, sql);
    if (s != AT_OK)
        return s;
    if (arg)
        db_bind_text(st, 1, arg);
    int rc = sqlite3_step(st);
    *value = 0;
    if (rc == SQLITE_ROW)
        *value = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_DONE)
        s = db_sqlfail(d, rc, what);
    sqlite3_finalize(st);
    return s;
}

/* id of the device of that UUID; AT_ERR_NOT_FOUND if unknown. */
static at_status db_device_id(db *d, const char *uuid, long long *id)
{
    if (!uuid)
        return db_fail(d, AT_ERR_INVALID_ARG, "device UUID is NULL");
    at_status s = db_query_int(d, "SELECT id FROM device WHERE uuid = ?1", uuid,
                               id, "looking up a device");
    if (s == AT_OK && *id == 0)
        return db_fail(d, AT_ERR_NOT_FOUND,
                       "device %s is not recorded (db_put_device first)", uuid);
    return s;
}

/* Inserts if missing and returns the id of (name, hash). */
static at_status db_kernel_id(db *d, const char *name, const char *hash,
                              long long *id)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st,
        "INSERT INTO kernel (name, source_hash) VALUES (?1, ?2) "
        "ON CONFLICT (name, source_hash) DO NOTHING");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, name);
    db_bind_text(st, 2, hash);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "recording a kernel");
    s = db_prepare(d, &st, "SELECT id FROM kernel WHERE name = ?1 AND source_hash = ?2");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, name);
    db_bind_text(st, 2, hash);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else
        s = db_sqlfail(d, rc, "looking up a kernel");
    sqlite3_finalize(st);
    return s;
}

/* Inserts if missing and returns the id of (kernel, dims). */
static at_status db_problem_id(db *d, const char *kernel, const tpl_problem *p,
                               long long *id)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st,
        "INSERT INTO problem (kernel, n_dims, d0, d1, d2) VALUES (?1, ?2, ?3, ?4, ?5) "
        "ON CONFLICT (kernel, d0, d1, d2) DO NOTHING");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, kernel);
    sqlite3_bind_int(st, 2, p->n_dims);
    db_bind_dims(st, 3, p);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "recording a problem");
    s = db_prepare(d, &st, "SELECT id FROM problem WHERE kernel = ?1 AND d0 = ?2 "
                           "AND d1 = ?3 AND d2 = ?4");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, kernel);
    db_bind_dims(st, 2, p);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else
        s = db_sqlfail(d, rc, "looking up a problem");
    sqlite3_finalize(st);
    return s;
}

/* ---- default path ---- */

void db_default_path(char *out, size_t len)
{
    const char *env = getenv("AUTOTUNE_DB");
    if (env && *env) {
        db_copy(out, len, env);
        return;
    }
    /* XDG: a relative $XDG_CACHE_HOME is invalid and ignored. */
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') {
        db_fmt(out, len, "%s/autotune/tuning.db", xdg);
        return;
    }
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir ? pw->pw_dir : ".";
    }
    db_fmt(out, len, "%s/.cache/autotune/tuning.db", home);
}

/* ---- open / close ---- */

/* mkdir -p of the folder holding path. */
static int db_mkdir_parent(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    db_copy(dir, sizeof dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 1;
    *slash = '\0';
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
                db_fmt(err, errlen, "cannot create folder %s: %s", dir, strerror(errno));
                return 0;
            }
            struct stat sb;
            if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
                db_fmt(err, errlen, "cannot create folder %s: not a directory", dir);
                return 0;
            }
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    return 1;
}

/* Checks the first bytes of an existing file: AT_OK if SQLite's header (or
 * an empty file, *empty = 1), AT_ERR_DB_CORRUPT if foreign, AT_ERR_IO if
 * unreadable. Never modifies the file. The bytes are read through SQLite's
 * own file layer, never fopen/fclose: closing any descriptor of the file
 * drops every POSIX lock this process holds on it, those of its other open
 * connections too, after which another process may checkpoint and reset
 * the WAL under them ("database disk image is malformed"); SQLite defers
 * such a close while its connections hold locks. */
static at_status db_check_header(const char *path, int *empty, char *err, size_t errlen)
{
    static const char magic[16] = "SQLite format 3";
    unsigned char head[100];
    *empty = 0;
    sqlite3 *h = NULL;
    sqlite3_file *file = NULL;
    sqlite3_int64 size = 0;
    int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_file_control(h, "main", SQLITE_FCNTL_FILE_POINTER, &file);
    if (rc == SQLITE_OK && (!file || !file->pMethods))
        rc = SQLITE_CANTOPEN;
    if (rc == SQLITE_OK)
        rc = file->pMethods->xFileSize(file, &size);
    if (rc == SQLITE_OK && size >= (sqlite3_int64)sizeof head)
        rc = file->pMethods->xRead(file, head, (int)sizeof head, 0);
    if (rc != SQLITE_OK) {
        db_fmt(err, errlen, "cannot read %s: %s", path,
               h ? sqlite3_errmsg(h) : sqlite3_errstr(rc));
        sqlite3_close(h);
        return AT_ERR_IO;
    }
    sqlite3_close(h);
    if (size == 0) {
        *empty = 1;
        return AT_OK;
    }
    if (size < (sqlite3_int64)sizeof head || memcmp(head, magic, sizeof magic) != 0) {
        db_fmt(err, errlen, "%s is not an SQLite database (not a tuning database; "
               "left untouched)", path);
        return AT_ERR_DB_CORRUPT;
    }
    return AT_OK;
}

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
static at_status db_setup(db *d, int create, int empty_file)
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

/* 1 if opening a read-only database failed for want of a writable -shm and
 * no -wal holds pending changes. */
static int db_wal_unreachable(db *d)
{
    int code = sqlite3_errcode(d->h) & 0xff;
    if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN)
        return 0;
    char wal[sizeof d->path + 8];
    db_fmt(wal, sizeof wal, "%s-wal", d->path);
    struct stat sb;
    return stat(wal, &sb) != 0 || sb.st_size == 0;
}

/* "file:PATH?immutable=1" with PATH percent-escaped. */
static void db_uri(char *out, size_t len, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    const char *prefix = "file:";
    for (; *prefix && n + 1 < len; prefix++)
        out[n++] = *prefix;
    for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < len; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7f) {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        } else {
            out[n++] = (char)*p;
        }
    }
    out[n] = '\0';
    size_t used = strlen(out);
    db_fmt(out + used, len - used, "?immutable=1");
}

at_status db_open(db **out, const char *path, int create, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!out) {
        db_fmt(err, errlen, "db_open: out is NULL");
        return AT_ERR_INVALID_ARG;
    }
    *out = NULL;
    char defpath[4096];
    if (!path || !*path) {
        db_default_path(defpath, sizeof defpath);
        path = defpath;
    }
    if (strlen(path) >= sizeof ((db *)0)->path) {
        db_fmt(err, errlen, "database path too long");
        return AT_ERR_INVALID_ARG;
    }

    struct stat sb;
    int empty_file = 0, readonly = 0;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT) {
            db_fmt(err, errlen, "cannot access %s: %s", path, strerror(errno));
            return AT_ERR_IO;
        }
        if (!create) {
            db_fmt(err, errlen, "no tuning database at %s", path);
            return AT_ERR_NOT_FOUND;
        }
        if (!db_mkdir_parent(path, err, errlen))
            return AT_ERR_IO;
    } else {
        if (S_ISDIR(sb.st_mode)) {
            db_fmt(err, errlen, "%s is a directory, not a tuning database", path);
            return AT_ERR_IO;
        }
        at_status s = db_check_header(path, &empty_file, err, errlen);
        if (s != AT_OK)
            return s;
        readonly = access(path, W_OK) != 0;
    }

    db *d = calloc(1, sizeof *d);
    if (!d) {
        db_fmt(err, errlen, "out of memory");
        return AT_ERR_NO_MEMORY;
    }
    db_copy(d->path, sizeof d->path, path);
    int flags = readonly ? SQLITE_OPEN_READONLY
                         : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &d->h, flags, NULL);
    if (rc != SQLITE_OK) {
        db_fmt(err, errlen, "cannot open %s: %s", path,
               d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc));
        sqlite3_close(d->h);
        free(d);
        return rc == SQLITE_CANTOPEN ? AT_ERR_IO : db_status_of(rc);
    }
    sqlite3_extended_result_codes(d->h, 1);
    sqlite3_busy_timeout(d->h, DB_BUSY_TIMEOUT_MS);
    d->readonly = readonly || sqlite3_db_readonly(d->h, "main") == 1;

    at_status s = db_setup(d, create, empty_file);
    if (s != AT_OK && d->readonly && db_wal_unreachable(d)) {
        /* A read-only WAL file whose -shm cannot be created (folder not
         * ours): with no pending -wal the file alone is the whole database,
         * so open it as immutable. */
        sqlite3_close(d->h);
        d->h = NULL;
        char uri[3 * sizeof d->path + 32];
        db_uri(uri, sizeof uri, path);
        rc = sqlite3_open_v2(uri, &d->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
        if (rc == SQLITE_OK) {
            sqlite3_extended_result_codes(d->h, 1);
            s = db_setup(d, 0, empty_file);
        } else {
            s = db_fail(d, AT_ERR_DB, "cannot open read-only %s: %s", path,
                        d->h ? sqlite3_errmsg(d->h) : sqlite3_errstr(rc));
        }
    }
    if (s != AT_OK) {
        db_copy(err, errlen, d->errmsg);
        sqlite3_close(d->h);
        free(d);
        return s;
    }
    d->errmsg[0] = '\0';
    *out = d;
    return AT_OK;
}

void db_close(db *d)
{
    if (!d)
        return;
    sqlite3_close(d->h);
    free(d);
}

const char *db_errmsg(const db *d)
{
    if (!d)
        return "no database handle";
    return d->errmsg;
}

int db_is_readonly(const db *d)
{
    return d ? d->readonly : 1;
}

/* ---- devices ---- */

at_status db_put_device(db *d, const at_device_info *info, const char *nvrtc_version)
{
    if (!d || !info || !info->uuid[0])
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_put_device: no device or UUID")
                 : AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "recording a device");
    if (s != AT_OK)
        return s;
    char arch[16], now[32];
    tpl_arch_name(info->cc_major, info->cc_minor, arch, sizeof arch);
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st,
        "INSERT INTO device (uuid, name, arch, ordinal, cc_major, cc_minor, sm_count, "
        "memory_bytes, l2_bytes, smem_per_block_optin, smem_per_sm, regs_per_block, "
        "regs_per_sm, max_threads_per_block, max_threads_per_sm, clock_khz, "
        "mem_clock_khz, mem_bus_bits, driver_version, nvrtc_version, first_seen, "
        "last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
        "?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?21) "
        "ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, arch = excluded.arch, "
        "ordinal = excluded.ordinal, cc_major = excluded.cc_major, "
        "cc_minor = excluded.cc_minor, sm_count = excluded.sm_count, "
        "memory_bytes = excluded.memory_bytes, l2_bytes = excluded.l2_bytes, "
        "smem_per_block_optin = excluded.smem_per_block_optin, "
        "smem_per_sm = excluded.smem_per_sm, regs_per_block = excluded.regs_per_block, "
        "regs_per_sm = excluded.regs_per_sm, "
        "max_threads_per_block = excluded.max_threads_per_block, "
        "max_threads_per_sm = excluded.max_threads_per_sm, "
        "clock_khz = excluded.clock_khz, mem_clock_khz = excluded.mem_clock_khz, "
        "mem_bus_bits = excluded.mem_bus_bits, driver_version = excluded.driver_version, "
        "nvrtc_version = excluded.nvrtc_version, last_seen = excluded.last_seen");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, info->uuid);
    db_bind_text(st, 2, info->name);
    db_bind_text(st, 3, arch);
    sqlite3_bind_int(st, 4, info->ordinal);
    sqlite3_bind_int(st, 5, info->cc_major);
    sqlite3_bind_int(st, 6, info->cc_minor);
    sqlite3_bind_int(st, 7, info->sm_count);
    sqlite3_bind_int64(st, 8, info->memory_bytes);
    sqlite3_bind_int(st, 9, info->l2_bytes);
    sqlite3_bind_int(st, 10, info->smem_per_block_optin);
    sqlite3_bind_int(st, 11, info->smem_per_sm);
    sqlite3_bind_int(st, 12, info->regs_per_block);
    sqlite3_bind_int(st, 13, info->regs_per_sm);
    sqlite3_bind_int(st, 14, info->max_threads_per_block);
    sqlite3_bind_int(st, 15, info->max_threads_per_sm);
    sqlite3_bind_int(st, 16, info->clock_khz);
    sqlite3_bind_int(st, 17, info->mem_clock_khz);
    sqlite3_bind_int(st, 18, info->mem_bus_bits);
    sqlite3_bind_int(st, 19, info->driver_version);
    db_bind_text(st, 20, nvrtc_version ? nvrtc_version : "");
    db_bind_text(st, 21, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "recording a device");
    return AT_OK;
}

#define DEVICE_COLS \
    "id, uuid, name, arch, ordinal, cc_major, cc_minor, sm_count, memory_bytes, " \
    "l2_bytes, smem_per_block_optin, smem_per_sm, regs_per_block, regs_per_sm, " \
    "max_threads_per_block, max_threads_per_sm, clock_khz, mem_clock_khz, " \
    "mem_bus_bits, driver_version, nvrtc_version"

static void db_read_device(sqlite3_stmt *st, db_device *out)
{
    memset(out, 0, sizeof *out);
    at_device_info *i = &out->info;
    out->id = sqlite3_column_int64(st, 0);
    db_col_text(st, 1, i->uuid, sizeof i->uuid);
    db_col_text(st, 2, i->name, sizeof i->name);
    db_col_text(st, 3, i->arch, sizeof i->arch);
    i->ordinal = sqlite3_column_int(st, 4);
    i->cc_major = sqlite3_column_int(st, 5);
    i->cc_minor = sqlite3_column_int(st, 6);
    i->sm_count = sqlite3_column_int(st, 7);
    i->memory_bytes = sqlite3_column_int64(st, 8);
    i->l2_bytes = sqlite3_column_int(st, 9);
    i->smem_per_block_optin = sqlite3_column_int(st, 10);
    i->smem_per_sm = sqlite3_column_int(st, 11);
    i->regs_per_block = sqlite3_column_int(st, 12);
    i->regs_per_sm = sqlite3_column_int(st, 13);
    i->max_threads_per_block = sqlite3_column_int(st, 14);
    i->max_threads_per_sm = sqlite3_column_int(st, 15);
    i->clock_khz = sqlite3_column_int(st, 16);
    i->mem_clock_khz = sqlite3_column_int(st, 17);
    i->mem_bus_bits = sqlite3_column_int(st, 18);
    i->driver_version = sqlite3_column_int(st, 19);
    db_col_text(st, 20, out->nvrtc_version, sizeof out->nvrtc_version);
}

at_status db_get_device(db *d, const char *uuid, db_device *out)
{
    if (!d || !uuid || !out)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_get_device: NULL argument")
                 : AT_ERR_INVALID_ARG;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT " DEVICE_COLS " FROM device WHERE uuid = ?1");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, uuid);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        db_read_device(st, out);
    else if (rc == SQLITE_DONE)
        s = db_fail(d, AT_ERR_NOT_FOUND, "device %s is not recorded", uuid);
    else
        s = db_sqlfail(d, rc, "reading a device");
    sqlite3_finalize(st);
    return s;
}

/* Grows a malloc'd array of elements of size `size` to hold n + 1. */
static int db_grow(void **arr, int *cap, int n, size_t size)
{
    if (n < *cap)
        return 1;
    int ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)ncap * size);
    if (!p)
        return 0;
    *arr = p;
    *cap = ncap;
    return 1;
}

at_status db_list_devices(db *d, db_device **out, int *count)
{
    if (!d || !out || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_list_devices: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT " DEVICE_COLS " FROM device ORDER BY id");
    if (s != AT_OK)
        return s;
    db_device *arr = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!db_grow((void **)&arr, &cap, n, sizeof *arr)) {
            s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory listing devices");
            break;
        }
        db_read_device(st, &arr[n++]);
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = db_sqlfail(d, rc, "listing devices");
    sqlite3_finalize(st);
    if (s != AT_OK) {
        free(arr);
        return s;
    }
    *out = arr;
    *count = n;
    return AT_OK;
}

/* ---- sessions ---- */

at_status db_begin_session(db *d, const char *device_uuid, const char *command,
                           const char *start_facts, long long *session_id)
{
    if (!d || !session_id)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_begin_session: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *session_id = 0;
    at_status s = db_check_writable(d, "starting a session");
    if (s != AT_OK)
        return s;
    long long dev = 0;
    if (device_uuid && (s = db_device_id(d, device_uuid, &dev)) != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "INSERT INTO session (device_id, command, start_facts, started) "
                           "VALUES (?1, ?2, ?3, ?4)");
    if (s != AT_OK)
        return s;
    if (dev)
        sqlite3_bind_int64(st, 1, dev);
    else
        sqlite3_bind_null(st, 1);
    db_bind_text(st, 2, command ? command : "");
    db_bind_text(st, 3, start_facts ? start_facts : "");
    db_bind_text(st, 4, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "starting a session");
    *session_id = sqlite3_last_insert_rowid(d->h);
    return AT_OK;
}

at_status db_end_session(db *d, long long session_id, const char *end_facts,
                         const char *outcome)
{
    if (!d)
        return AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "ending a session");
    if (s != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "UPDATE session SET end_facts = ?1, outcome = ?2, ended = ?3 "
                           "WHERE id = ?4");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, end_facts ? end_facts : "");
    db_bind_text(st, 2, outcome ? outcome : "");
    db_bind_text(st, 3, now);
    sqlite3_bind_int64(st, 4, session_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "ending a session");
    if (sqlite3_changes(d->h) == 0)
        return db_fail(d, AT_ERR_NOT_FOUND, "no session %lld", session_id);
    return AT_OK;
}

/* ---- results ---- */

#define RESULT_COLS \
    "r.id, r.session_id, d.uuid, k.name, k.source_hash, p.n_dims, p.d0, p.d1, " \
    "p.d2, r.config, r.status, r.time_ms, r.time_min_ms, r.time_max_ms, r.runs, " \
    "r.gflops, r.gbs, r.rel_error, r.compile_ms, r.binary_key, r.error, r.created, " \
    "r.deterministic"
#define RESULT_FROM \
    " FROM result r JOIN device d ON d.id = r.device_id " \
    "JOIN kernel k ON k.id = r.kernel_id JOIN problem p ON p.id = r.problem_id "

static void db_read_result(sqlite3_stmt *st, db_result *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->session_id = sqlite3_column_int64(st, 1);
    db_col_text(st, 2, r->device_uuid, sizeof r->device_uuid);
    db_col_text(st, 3, r->kernel, sizeof r->kernel);
    db_col_text(st, 4, r->source_hash, sizeof r->source_hash);
    db_col_problem(st, 5, &r->problem);
    db_col_text(st, 9, r->config, sizeof r->config);
    db_col_text(st, 10, r->status, sizeof r->status);
    r->time_ms = sqlite3_column_double(st, 11);
    r->time_min_ms = sqlite3_column_double(st, 12);
    r->time_max_ms = sqlite3_column_double(st, 13);
    r->runs = sqlite3_column_int(st, 14);
    r->gflops = sqlite3_column_double(st, 15);
    r->gbs = sqlite3_column_double(st, 16);
    r->rel_error = sqlite3_column_double(st, 17);
    r->compile_ms = sqlite3_column_double(st, 18);
    db_col_text(st, 19, r->binary_key, sizeof r->binary_key);
    db_col_text(st, 20, r->error, sizeof r->error);
    db_col_text(st, 21, r->created, sizeof r->created);
    r->deterministic = sqlite3_column_int(st, 22);
}

/* Steps st to the end, collecting rows into a malloc'd array. */
static at_status db_collect_results(db *d, sqlite3_stmt *st, db_result **out,
                                    int *count, const char *what)
{
    db_result *arr = NULL;
    int n = 0, cap = 0, rc;
    at_status s = AT_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!db_grow((void **)&arr, &cap, n, sizeof *arr)) {
            s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory %s", what);
            break;
        }
        db_read_result(st, &arr[n++]);
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = db_sqlfail(d, rc, what);
    sqlite3_finalize(st);
    if (s != AT_OK) {
        free(arr);
        return s;
    }
    *out = arr;
    *count = n;
    return AT_OK;
}

static int db_problem_ok(const tpl_problem *p)
{
    return p && p->n_dims >= 0 && p->n_dims <= TPL_MAX_DIMS;
}

at_status db_store_result(db *d, db_result *r)
{
    if (!d || !r)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_store_result: NULL result")
                 : AT_ERR_INVALID_ARG;
    if (!r->kernel[0] || !db_problem_ok(&r->problem))
        return db_fail(d, AT_ERR_INVALID_ARG, "db_store_result: no kernel or bad problem");
    at_status s = db_check_writable(d, "storing a result");
    if (s != AT_OK)
        return s;
    s = db_begin(d);
    if (s != AT_OK)
        return s;
    long long dev = 0, ker = 0, prob = 0;
    if ((s = db_device_id(d, r->device_uuid, &dev)) != AT_OK ||
        (s = db_kernel_id(d, r->kernel, r->source_hash, &ker)) != AT_OK ||
        (s = db_problem_id(d, r->kernel, &r->problem, &prob)) != AT_OK) {
        db_rollback(d);
        return s;
    }
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st,
        "INSERT INTO result (device_id, kernel_id, problem_id, config, status, time_ms, "
        "time_min_ms, time_max_ms, runs, gflops, gbs, rel_error, compile_ms, binary_key, "
        "error, deterministic, session_id, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
        "?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) "
        "ON CONFLICT (device_id, kernel_id, problem_id, config) DO UPDATE SET "
        "status = excluded.status, time_ms = excluded.time_ms, "
        "time_min_ms = excluded.time_min_ms, time_max_ms = excluded.time_max_ms, "
        "runs = excluded.runs, gflops = excluded.gflops, gbs = excluded.gbs, "
        "rel_error = excluded.rel_error, compile_ms = excluded.compile_ms, "
        "binary_key = excluded.binary_key, error = excluded.error, "
        "deterministic = excluded.deterministic, session_id = excluded.session_id, "
        "created = excluded.created");
    if (s != AT_OK) {
        db_rollback(d);
        return s;
    }
    sqlite3_bind_int64(st, 1, dev);
    sqlite3_bind_int64(st, 2, ker);
    sqlite3_bind_int64(st, 3, prob);
    db_bind_text(st, 4, r->config);
    db_bind_text(st, 5, r->status);
    sqlite3_bind_double(st, 6, r->time_ms);
    sqlite3_bind_double(st, 7, r->time_min_ms);
    sqlite3_bind_double(st, 8, r->time_max_ms);
    sqlite3_bind_int(st, 9, r->runs);
    sqlite3_bind_double(st, 10, r->gflops);
    sqlite3_bind_double(st, 11, r->gbs);
    sqlite3_bind_double(st, 12, r->rel_error);
    sqlite3_bind_double(st, 13, r->compile_ms);
    db_bind_text(st, 14, r->binary_key);
    db_bind_text(st, 15, r->error);
    sqlite3_bind_int(st, 16, r->deterministic ? 1 : 0);
    if (r->session_id > 0)
        sqlite3_bind_int64(st, 17, r->session_id);
    else
        sqlite3_bind_null(st, 17);
    db_bind_text(st, 18, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        s = db_sqlfail(d, rc, "storing a result");
        db_rollback(d);
        return s;
    }
    long long id = 0;
    sqlite3_stmt *q;
    s = db_prepare(d, &q, "SELECT id FROM result WHERE device_id = ?1 AND kernel_id = ?2 "
                          "AND problem_id = ?3 AND config = ?4");
    if (s != AT_OK) {
        db_rollback(d);
        return s;
    }
    sqlite3_bind_int64(q, 1, dev);
    sqlite3_bind_int64(q, 2, ker);
    sqlite3_bind_int64(q, 3, prob);
    db_bind_text(q, 4, r->config);
    rc = sqlite3_step(q);
    if (rc == SQLITE_ROW)
        id = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    if (rc != SQLITE_ROW) {
        s = db_sqlfail(d, rc, "reading back a result");
        db_rollback(d);
        return s;
    }
    s = db_commit(d);
    if (s == AT_OK) {
        r->id = id;
        db_copy(r->created, sizeof r->created, now);
    }
    return s;
}

int db_has_result(db *d, const char *device_uuid, const char *kernel,
                  const char *source_hash, const tpl_problem *p, const char *config)
{
    if (!d)
        return -1;
    if (!device_uuid || !kernel || !config || !db_problem_ok(p)) {
        db_fail(d, AT_ERR_INVALID_ARG, "db_has_result: NULL argument");
        return -1;
    }
    sqlite3_stmt *st;
    if (db_prepare(d, &st, "SELECT 1" RESULT_FROM
                   "WHERE d.uuid = ?1 AND k.name = ?2 "
                   "AND (?3 IS NULL OR k.source_hash = ?3) AND p.d0 = ?4 AND p.d1 = ?5 AND p.d2 = ?6 AND r.config = ?7 "
                   "LIMIT 1") != AT_OK)
        return -1;
    db_bind_text(st, 1, device_uuid);
    db_bind_text(st, 2, kernel);
    db_bind_text(st, 3, source_hash);
    db_bind_dims(st, 4, p);
    db_bind_text(st, 7, config);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    db_sqlfail(d, rc, "looking up a result");
    return -1;
}

at_status db_best(db *d, const char *device_uuid, const char *kernel,
                  const char *source_hash, const tpl_problem *p,
                  int deterministic_only, db_result *out)
{
    if (!d || !device_uuid || !kernel || !db_problem_ok(p) || !out)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_best: NULL argument")
                 : AT_ERR_INVALID_ARG;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT " RESULT_COLS RESULT_FROM
        "WHERE d.uuid = ?1 AND k.name = ?2 AND (?3 IS NULL OR k.source_hash = ?3) "
        "AND p.d0 = ?4 AND p.d1 = ?5 AND p.d2 = ?6 AND r.status = 'ok' "
        "AND r.time_ms > 0 AND (?7 = 0 OR r.deterministic = 1) "
        "ORDER BY r.time_ms, r.id LIMIT 1");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, device_uuid);
    db_bind_text(st, 2, kernel);
    db_bind_text(st, 3, source_hash);
    db_bind_dims(st, 4, p);
    sqlite3_bind_int(st, 7, deterministic_only ? 1 : 0);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        db_read_result(st, out);
    else if (rc == SQLITE_DONE)
        s = db_fail(d, AT_ERR_NOT_FOUND, "no ok result for %s on %s", kernel, device_uuid);
    else
        s = db_sqlfail(d, rc, "looking up the best result");
    sqlite3_finalize(st);
    return s;
}

at_status db_candidates(db *d, const char *device_uuid, const char *arch,
                        const char *kernel, const char *source_hash,
                        int per_problem, int deterministic_only,
                        db_result **out, int *count)
{
    if (!d || !kernel || !out || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_candidates: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    /* per_problem <= 0: every ok result. */
    at_status s = db_prepare(d, &st, "SELECT * FROM (SELECT " RESULT_COLS ", "
        "ROW_NUMBER() OVER (PARTITION BY r.problem_id ORDER BY r.time_ms, r.id) AS rank"
        RESULT_FROM
        "WHERE k.name = ?1 AND (?2 IS NULL OR k.source_hash = ?2) "
        "AND (?3 IS NULL OR d.uuid = ?3) AND (?4 IS NULL OR d.arch = ?4) "
        "AND r.status = 'ok' AND r.time_ms > 0 AND (?5 = 0 OR r.deterministic = 1)) "
        "WHERE ?6 <= 0 OR rank <= ?6 ORDER BY d0, d1, d2, time_ms, id");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, kernel);
    db_bind_text(st, 2, source_hash);
    db_bind_text(st, 3, device_uuid);
    db_bind_text(st, 4, arch);
    sqlite3_bind_int(st, 5, deterministic_only ? 1 : 0);
    sqlite3_bind_int(st, 6, per_problem);
    return db_collect_results(d, st, out, count, "listing candidates");
}

at_status db_results(db *d, const char *device_uuid, const char *kernel,
                     db_result **out, int *count)
{
    if (!d || !out || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_results: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT " RESULT_COLS RESULT_FROM
        "WHERE (?1 IS NULL OR d.uuid = ?1) AND (?2 IS NULL OR k.name = ?2) "
        "ORDER BY r.created, r.id");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, device_uuid);
    db_bind_text(st, 2, kernel);
    return db_collect_results(d, st, out, count, "listing results");
}

/* ---- binaries ---- */

at_status db_put_binary(db *d, const char *key, const char *kernel,
                        const char *source_hash, const char *config,
                        const char *arch, const char *nvrtc_version,
                        const char *options, const void *cubin, size_t size)
{
    if (!d || !key || !*key || !cubin || size == 0 || size > INT_MAX)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_put_binary: no key or empty cubin")
                 : AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "storing a cubin");
    if (s != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st, "INSERT OR REPLACE INTO binary (key, kernel, source_hash, "
                           "config, arch, nvrtc_version, options, cubin, size, created) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, key);
    db_bind_text(st, 2, kernel ? kernel : "");
    db_bind_text(st, 3, source_hash ? source_hash : "");
    db_bind_text(st, 4, config ? config : "");
    db_bind_text(st, 5, arch ? arch : "");
    db_bind_text(st, 6, nvrtc_version ? nvrtc_version : "");
    db_bind_text(st, 7, options ? options : "");
    sqlite3_bind_blob(st, 8, cubin, (int)size, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 9, (long long)size);
    db_bind_text(st, 10, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "storing a cubin");
    return AT_OK;
}

at_status db_get_binary(db *d, const char *key, void **cubin, size_t *size)
{
    if (!d || !key || !cubin || !size)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_get_binary: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *cubin = NULL;
    *size = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT cubin, size FROM binary WHERE key = ?1");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, key);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const void *blob = sqlite3_column_blob(st, 0);
        int n = sqlite3_column_bytes(st, 0);
        if (!blob || n <= 0 || n != sqlite3_column_int64(st, 1)) {
            s = db_fail(d, AT_ERR_DB_CORRUPT, "stored cubin %s is damaged (%d bytes, "
                        "%lld recorded)", key, n, (long long)sqlite3_column_int64(st, 1));
        } else {
            void *copy = malloc((size_t)n);
            if (!copy) {
                s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory reading a cubin");
            } else {
                memcpy(copy, blob, (size_t)n);
                *cubin = copy;
                *size = (size_t)n;
            }
        }
    } else if (rc == SQLITE_DONE) {
        s = db_fail(d, AT_ERR_NOT_FOUND, "no cubin stored for key %s", key);
    } else {
        s = db_sqlfail(d, rc, "reading a cubin");
    }
    sqlite3_finalize(st);
    return s;
}

/* ---- measurements ---- */

at_status db_put_measurement(db *d, db_measurement *m)
{
    if (!d || !m || !m->kernel[0] || !m->name[0] || !db_problem_ok(&m->problem))
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_put_measurement: no kernel or name")
                 : AT_ERR_INVALID_ARG;
    at_status s = db_check_writable(d, "storing a measurement");
    if (s != AT_OK)
        return s;
    long long dev = 0;
    if ((s = db_device_id(d, m->device_uuid, &dev)) != AT_OK)
        return s;
    char now[32];
    db_now(now, sizeof now);
    sqlite3_stmt *st;
    s = db_prepare(d, &st,
        "INSERT INTO measurement (device_id, kernel, n_dims, d0, d1, d2, name, time_ms, "
        "gflops, gbs, rel_error, note, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
        "?9, ?10, ?11, ?12, ?13) ON CONFLICT (device_id, kernel, d0, d1, d2, name) "
        "DO UPDATE SET n_dims = excluded.n_dims, time_ms = excluded.time_ms, "
        "gflops = excluded.gflops, gbs = excluded.gbs, rel_error = excluded.rel_error, "
        "note = excluded.note, created = excluded.created");
    if (s != AT_OK)
        return s;
    sqlite3_bind_int64(st, 1, dev);
    db_bind_text(st, 2, m->kernel);
    sqlite3_bind_int(st, 3, m->problem.n_dims);
    db_bind_dims(st, 4, &m->problem);
    db_bind_text(st, 7, m->name);
    sqlite3_bind_double(st, 8, m->time_ms);
    sqlite3_bind_double(st, 9, m->gflops);
    sqlite3_bind_double(st, 10, m->gbs);
    sqlite3_bind_double(st, 11, m->rel_error);
    db_bind_text(st, 12, m->note);
    db_bind_text(st, 13, now);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "storing a measurement");
    db_copy(m->created, sizeof m->created, now);
    return AT_OK;
}

at_status db_measurements(db *d, const char *device_uuid, const char *kernel,
                          db_measurement **out, int *count)
{
    if (!d || !out || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_measurements: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st,
        "SELECT d.uuid, m.kernel, m.n_dims, m.d0, m.d1, m.d2, m.name, m.time_ms, "
        "m.gflops, m.gbs, m.rel_error, m.note, m.created FROM measurement m "
        "JOIN device d ON d.id = m.device_id "
        "WHERE (?1 IS NULL OR d.uuid = ?1) AND (?2 IS NULL OR m.kernel = ?2) "
        "ORDER BY m.kernel, m.d0, m.d1, m.d2, m.name");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, device_uuid);
    db_bind_text(st, 2, kernel);
    db_measurement *arr = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!db_grow((void **)&arr, &cap, n, sizeof *arr)) {
            s = db_fail(d, AT_ERR_NO_MEMORY, "out of memory listing measurements");
            break;
        }
        db_measurement *m = &arr[n++];
        memset(m, 0, sizeof *m);
        db_col_text(st, 0, m->device_uuid, sizeof m->device_uuid);
        db_col_text(st, 1, m->kernel, sizeof m->kernel);
        db_col_problem(st, 2, &m->problem);
        db_col_text(st, 6, m->name, sizeof m->name);
        m->time_ms = sqlite3_column_double(st, 7);
        m->gflops = sqlite3_column_double(st, 8);
        m->gbs = sqlite3_column_double(st, 9);
        m->rel_error = sqlite3_column_double(st, 10);
        db_col_text(st, 11, m->note, sizeof m->note);
        db_col_text(st, 12, m->created, sizeof m->created);
    }
    if (s == AT_OK && rc != SQLITE_DONE)
        s = db_sqlfail(d, rc, "listing measurements");
    sqlite3_finalize(st);
    if (s != AT_OK) {
        free(arr);
        return s;
    }
    *out = arr;
    *count = n;
    return AT_OK;
}
