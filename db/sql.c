/* sql.c: the helpers every db/ file uses: messages, statements and binding,
 * transactions, small queries. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include "db_internal.h"

void db_copy(char *dst, size_t len, const char *src)
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

void db_fmt(char *dst, size_t len, const char *fmt, ...)
{
    if (!dst || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

/* Sets the handle's message and returns status. */
at_status db_fail(db *d, at_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->errmsg, sizeof d->errmsg, fmt, ap);
    va_end(ap);
    return status;
}

/* Maps an SQLite result code to a status. */
at_status db_status_of(int rc)
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

/* After an I/O failure: 1 if the disk holding path has almost no room
 * left (less than 1 MiB for us), 2 if a file size limit (ulimit -f)
 * applies to this process, else 0. */
static int db_no_room(const char *path)
{
    char dir[4096];
    db_copy(dir, sizeof dir, path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        db_copy(dir, sizeof dir, ".");
    else if (slash == dir)
        slash[1] = '\0';            /* the root folder */
    else
        *slash = '\0';
    struct statvfs vs;
    if (statvfs(dir, &vs) == 0 && (unsigned long long)vs.f_bavail * vs.f_frsize < (1u << 20))
        return 1;
    struct rlimit lim;
    if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
        return 2;
    return 0;
}

/* Records SQLite's failure rc of `what` (sqlmsg: SQLite's text) on the
 * handle, naming a full disk or a file size limit as such. */
static at_status db_fail_sql(db *d, int rc, const char *what, const char *sqlmsg)
{
    at_status s = db_status_of(rc);
    int code = rc & 0xff;
    /* the OS error is only meaningful after an I/O failure */
    int io = code == SQLITE_IOERR || code == SQLITE_FULL || code == SQLITE_CANTOPEN;
    int e = io ? sqlite3_system_errno(d->h) : 0;
    int room = io ? db_no_room(d->path) : 0;
    if (code == SQLITE_FULL || e == ENOSPC || e == EDQUOT || room == 1)
        return db_fail(d, s, "%s: no space left on the disk holding %s (%s)", what,
                       d->path, sqlmsg);
    if (e == EFBIG || room == 2)
        return db_fail(d, s, "%s: %s cannot grow past the file size limit (ulimit -f) "
                       "(%s)", what, d->path, sqlmsg);
    if (e)
        return db_fail(d, s, "%s: %s: %s (%s)", what, sqlmsg, strerror(e), d->path);
    return db_fail(d, s, "%s: %s (%s)", what, sqlmsg, d->path);
}

at_status db_sqlfail(db *d, int rc, const char *what)
{
    return db_fail_sql(d, rc, what, sqlite3_errmsg(d->h));
}

/* Current UTC time, ISO 8601 with milliseconds. */
void db_now(char *out, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    db_fmt(out, len, "%s.%03ldZ", base, ts.tv_nsec / 1000000L);
}

at_status db_prepare(db *d, sqlite3_stmt **st, const char *sql)
{
    int rc = sqlite3_prepare_v2(d->h, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return db_sqlfail(d, rc, "preparing a statement");
    }
    return AT_OK;
}

void db_bind_text(sqlite3_stmt *st, int i, const char *s)
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

void db_bind_kind(sqlite3_stmt *st, const tpl_problem *p)
{
    db_bind_text(st, 23, p ? tpl_dtype_name(p->dtype) : NULL);
    db_bind_text(st, 24, p ? tpl_math_name(p->math) : NULL);
    db_bind_text(st, 25, p ? tpl_op_name(p->op_a) : NULL);
    db_bind_text(st, 26, p ? tpl_op_name(p->op_b) : NULL);
    db_bind_text(st, 27, p ? tpl_order_name(p->order) : NULL);
    db_bind_text(st, 29, p ? tpl_epilogue_name(p->epilogue) : NULL);
}

void db_bind_problem(sqlite3_stmt *st, const tpl_problem *p)
{
    for (int i = 0; i < 3; i++) {
        if (p)
            sqlite3_bind_int64(st, 20 + i, db_dim(p, i));
        else
            sqlite3_bind_null(st, 20 + i);
    }
    db_bind_kind(st, p);
    if (p)
        sqlite3_bind_int64(st, 28, tpl_problem_batch(p));
    else
        sqlite3_bind_null(st, 28);
}

void db_col_text(sqlite3_stmt *st, int col, char *dst, size_t len)
{
    db_copy(dst, len, (const char *)sqlite3_column_text(st, col));
}

void db_col_problem(sqlite3_stmt *st, int col, tpl_problem *p)
{
    memset(p, 0, sizeof *p);
    int n = sqlite3_column_int(st, col);
    p->n_dims = n < 0 ? 0 : n > TPL_MAX_DIMS ? TPL_MAX_DIMS : n;
    for (int i = 0; i < 3 && i < TPL_MAX_DIMS; i++)
        p->dims[i] = sqlite3_column_int64(st, col + 1 + i);
}

void db_col_kind(sqlite3_stmt *st, int col, tpl_problem *p)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    p->dtype = (at_dtype)tpl_dtype_of(t);
    const char *m = (const char *)sqlite3_column_text(st, col + 1);
    p->math = (at_math)tpl_math_of(m ? m : "");
    p->op_a = (at_op)tpl_op_of((const char *)sqlite3_column_text(st, col + 2));
    p->op_b = (at_op)tpl_op_of((const char *)sqlite3_column_text(st, col + 3));
    p->order = (at_order)tpl_order_of((const char *)sqlite3_column_text(st, col + 4));
    p->batch = sqlite3_column_int64(st, col + 5);
    const char *e = (const char *)sqlite3_column_text(st, col + 6);
    p->epilogue = tpl_epilogue_of(e ? e : "");
}

int db_exec(db *d, const char *sql, const char *what, at_status *status)
{
    char *msg = NULL;
    int rc = sqlite3_exec(d->h, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        *status = db_fail_sql(d, rc, what, msg ? msg : sqlite3_errmsg(d->h));
        sqlite3_free(msg);
        return 0;
    }
    return 1;
}

at_status db_begin(db *d)
{
    at_status s = AT_OK;
    db_exec(d, "BEGIN IMMEDIATE", "starting a transaction", &s);
    return s;
}

at_status db_commit(db *d)
{
    at_status s = AT_OK;
    if (!db_exec(d, "COMMIT", "committing", &s))
        sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
    return s;
}

void db_rollback(db *d)
{
    if (!sqlite3_get_autocommit(d->h))
        sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
}

/* AT_ERR_DB if the handle may not write. */
at_status db_check_writable(db *d, const char *what)
{
    if (d->readonly)
        return db_fail(d, AT_ERR_DB, "%s: the database %s is read-only (%s)",
                       what, d->path, d->ro_reason);
    return AT_OK;
}

/* Runs a single-value integer query; *value = 0 if no row. */
at_status db_query_int(db *d, const char *sql, const char *arg,
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

/* Grows a malloc'd array of elements of size `size` to hold n + 1. */
int db_grow(void **arr, int *cap, int n, size_t size)
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

int db_problem_ok(const tpl_problem *p)
{
    return p && p->n_dims >= 0 && p->n_dims <= TPL_MAX_DIMS && tpl_dtype_name(p->dtype) &&
           tpl_math_name(p->math) && tpl_op_name(p->op_a) && tpl_op_name(p->op_b) &&
           tpl_order_name(p->order) && tpl_epilogue_name(p->epilogue) && p->batch >= 0;
}
