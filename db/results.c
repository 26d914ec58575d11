/* results.c: storing a result (device, kernel, problem, configuration)
 * and reading result rows back into db_result. */
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"

/* Inserts if missing and returns the id of (name, hash). */
at_status db_kernel_id(db *d, const char *name, const char *hash, long long *id)
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

/* Inserts if missing and returns the id of (kernel, problem key). */
at_status db_problem_id(db *d, const char *kernel, const tpl_problem *p, long long *id)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st,
        "INSERT INTO problem (kernel, n_dims, " DB_KEY_COLS ") VALUES (?1, ?2, "
        DB_KEY_VALUES ") ON CONFLICT (kernel, " DB_KEY_COLS ") DO NOTHING");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, kernel);
    sqlite3_bind_int(st, 2, p->n_dims);
    db_bind_problem(st, p);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "recording a problem");
    s = db_prepare(d, &st, "SELECT id FROM problem p WHERE p.kernel = ?1 AND "
                           DB_PROBLEM_IS("p"));
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, kernel);
    db_bind_problem(st, p);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else
        s = db_sqlfail(d, rc, "looking up a problem");
    sqlite3_finalize(st);
    return s;
}

void db_read_result(sqlite3_stmt *st, db_result *r)
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
    db_col_kind(st, 23, &r->problem);
    r->sustained_ms = sqlite3_column_double(st, 23 + DB_N_KIND_COLS);  /* NULL reads as 0 */
    r->rank_ms = sqlite3_column_double(st, 24 + DB_N_KIND_COLS);
}

double db_rank_ms(const db_result *r)
{
    return r->rank_ms > 0 ? r->rank_ms : r->time_ms;
}

/* Binds v at i, or NULL where v is not positive (a row not re-timed). */
static void db_bind_positive(sqlite3_stmt *st, int i, double v)
{
    if (v > 0)
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

/* Steps st to the end, collecting rows into a malloc'd array. */
at_status db_collect_results(db *d, sqlite3_stmt *st, db_result **out,
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
        "error, deterministic, session_id, created, sustained_ms, rank_ms) VALUES (?1, ?2, "
        "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?29) "
        "ON CONFLICT (device_id, kernel_id, problem_id, config) DO UPDATE SET "
        "status = excluded.status, time_ms = excluded.time_ms, "
        "time_min_ms = excluded.time_min_ms, time_max_ms = excluded.time_max_ms, "
        "runs = excluded.runs, gflops = excluded.gflops, gbs = excluded.gbs, "
        "rel_error = excluded.rel_error, compile_ms = excluded.compile_ms, "
        "binary_key = excluded.binary_key, error = excluded.error, "
        "deterministic = excluded.deterministic, session_id = excluded.session_id, "
        "created = excluded.created, sustained_ms = excluded.sustained_ms, "
        "rank_ms = excluded.rank_ms "
        /* a runtime trial's unverified time never replaces a verified row */
        "WHERE NOT (excluded.status = 'ok' AND excluded.rel_error = -1 AND "
        "excluded.session_id IS NULL AND result.status = 'ok' AND result.rel_error >= 0)");
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
    db_bind_positive(st, 19, r->sustained_ms);   /* a row measured again: its own */
    db_bind_positive(st, 29, r->rank_ms);
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
