/* recorded.c: the problems a program's calls were served below the exact
 * level (the runtime's record, runtime/record.c), bounded, and the list of
 * those still wanted (`autotune --recorded`, `autotune show --wanted`). */
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"

/* Adds one row's calls and time to its (device, kernel, problem) row,
 * inserting it where missing. */
static at_status record_one(db *d, sqlite3_stmt *st, long long device_id, const db_recorded *r,
                            const char *now)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    sqlite3_bind_int64(st, 1, device_id);
    db_bind_text(st, 2, r->kernel);
    sqlite3_bind_int(st, 3, r->problem.n_dims);
    sqlite3_bind_int(st, 4, r->level);
    sqlite3_bind_int64(st, 5, r->calls);
    sqlite3_bind_double(st, 6, r->time_ms);
    db_bind_text(st, 7, r->first_seen[0] ? r->first_seen : now);
    db_bind_text(st, 8, r->last_seen[0] ? r->last_seen : now);
    db_bind_problem(st, &r->problem);
    int rc = sqlite3_step(st);
    return rc == SQLITE_DONE ? AT_OK : db_sqlfail(d, rc, "recording a served problem");
}

/* Deletes the rows beyond max_rows: the least recently seen first, then
 * the lightest (least time spent), then the oldest id. */
static at_status record_evict(db *d, int max_rows)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st,
        "DELETE FROM recorded WHERE id IN (SELECT id FROM recorded ORDER BY last_seen ASC, "
        "time_ms ASC, calls ASC, id ASC LIMIT max(0, (SELECT count(*) FROM recorded) - ?1))");
    if (s != AT_OK)
        return s;
    sqlite3_bind_int(st, 1, max_rows);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? AT_OK : db_sqlfail(d, rc, "bounding the recorded problems");
}

at_status db_record_served(db *d, const at_device_info *dev, const char *nvrtc_version,
                           const db_recorded *rows, int n, int max_rows)
{
    if (!d || !dev || (n > 0 && !rows) || n < 0 || max_rows < 1)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_record_served: bad arguments")
                 : AT_ERR_INVALID_ARG;
    for (int i = 0; i < n; i++)
        if (!db_problem_ok(&rows[i].problem) || !rows[i].kernel[0] || rows[i].calls < 0 ||
            !(rows[i].time_ms >= 0))
            return db_fail(d, AT_ERR_INVALID_ARG, "db_record_served: row %d is not a problem "
                           "this database can hold", i);
    if (n == 0)
        return AT_OK;
    at_status s = db_check_writable(d, "recording served problems");
    if (s != AT_OK || (s = db_begin(d)) != AT_OK)
        return s;
    long long device_id = 0;
    sqlite3_stmt *st = NULL;
    char now[32];
    db_now(now, sizeof now);
    if ((s = db_put_device(d, dev, nvrtc_version)) == AT_OK &&
        (s = db_device_id(d, dev->uuid, &device_id)) == AT_OK)
        s = db_prepare(d, &st,
            "INSERT INTO recorded (device_id, kernel, n_dims, " DB_KEY_COLS ", level, calls, "
            "time_ms, first_seen, last_seen) VALUES (?1, ?2, ?3, " DB_KEY_VALUES ", ?4, ?5, "
            "?6, ?7, ?8) ON CONFLICT (device_id, kernel, " DB_KEY_COLS ") DO UPDATE SET "
            "level = excluded.level, calls = calls + excluded.calls, "
            "time_ms = time_ms + excluded.time_ms, "
            "first_seen = min(first_seen, excluded.first_seen), "
            "last_seen = max(last_seen, excluded.last_seen)");
    for (int i = 0; s == AT_OK && i < n; i++)
        s = record_one(d, st, device_id, &rows[i], now);
    sqlite3_finalize(st);
    if (s == AT_OK)
        s = record_evict(d, max_rows);
    if (s != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}

/* The wanted list: recorded rows grouped by device model, kernel and
 * problem; done where a verified ok result of that kernel and problem is
 * stored for a device of the same model. */
#define WANTED_SQL \
    "SELECT dv.name, min(dv.uuid), r.kernel, r.n_dims, r.d0, r.d1, r.d2, " \
    DB_KIND_COLS("r") ", max(r.level), sum(r.calls), sum(r.time_ms), min(r.first_seen), " \
    "max(r.last_seen), EXISTS (SELECT 1 FROM result res JOIN problem p ON p.id = " \
    "res.problem_id JOIN kernel k ON k.id = res.kernel_id JOIN device d2 ON d2.id = " \
    "res.device_id WHERE k.name = r.kernel AND d2.name = dv.name AND res.status = 'ok' AND " \
    "res.rel_error >= 0 AND p.n_dims = r.n_dims AND p.d0 = r.d0 AND p.d1 = r.d1 AND " \
    "p.d2 = r.d2 AND p.dtype = r.dtype AND p.math = r.math AND p.op_a = r.op_a AND " \
    "p.op_b = r.op_b AND p.layout = r.layout AND p.batch = r.batch AND " \
    "p.epilogue = r.epilogue) AS done " \
    "FROM recorded r JOIN device dv ON dv.id = r.device_id " \
    "WHERE (?1 IS NULL OR dv.name = ?1) " \
    "GROUP BY dv.name, r.kernel, r.n_dims, " DB_KEY_COLS \
    " ORDER BY sum(r.time_ms) DESC, sum(r.calls) DESC, r.kernel, r.d0, r.d1, r.d2, r.dtype, " \
    "r.math, r.op_a, r.op_b, r.layout, r.batch, r.epilogue"

at_status db_wanted(db *d, const char *model, int with_done, db_recorded **out, int *count)
{
    if (!d || !out || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_wanted: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, WANTED_SQL);
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, model);
    db_recorded *rows = NULL;
    int n = 0, cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        db_recorded r;
        memset(&r, 0, sizeof r);
        db_col_text(st, 0, r.model, sizeof r.model);
        db_col_text(st, 1, r.device_uuid, sizeof r.device_uuid);
        db_col_text(st, 2, r.kernel, sizeof r.kernel);
        db_col_problem(st, 3, &r.problem);
        db_col_kind(st, 7, &r.problem);
        int col = 7 + DB_N_KIND_COLS;
        r.level = sqlite3_column_int(st, col);
        r.calls = sqlite3_column_int64(st, col + 1);
        r.time_ms = sqlite3_column_double(st, col + 2);
        db_col_text(st, col + 3, r.first_seen, sizeof r.first_seen);
        db_col_text(st, col + 4, r.last_seen, sizeof r.last_seen);
        r.done = sqlite3_column_int(st, col + 5);
        if (r.done && !with_done)
            continue;
        if (!db_grow((void **)&rows, &cap, n, sizeof *rows)) {
            sqlite3_finalize(st);
            free(rows);
            return db_fail(d, AT_ERR_NO_MEMORY, "out of memory reading the recorded problems");
        }
        rows[n++] = r;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(rows);
        return db_sqlfail(d, rc, "reading the recorded problems");
    }
    *out = rows;
    *count = n;
    return AT_OK;
}
