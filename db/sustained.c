/* sustained.c: what the tuner's sustained re-timing (tuner/retime.c) reads
 * and writes: a problem's verified rows by short time, and one re-timing's
 * sustained times and ranks (the ranking rule: db.h's db_rank_ms). */
#include <string.h>
#include "db_internal.h"

at_status db_problem_results(db *d, const char *device_uuid, const char *kernel,
                             const char *source_hash, const tpl_problem *p,
                             db_result **out, int *count)
{
    if (!d || !device_uuid || !kernel || !db_problem_ok(p) || !out || !count)
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_problem_results: NULL argument")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "SELECT " RESULT_COLS RESULT_FROM
        "WHERE d.uuid = ?1 AND k.name = ?2 AND (?3 IS NULL OR k.source_hash = ?3) "
        "AND " DB_PROBLEM_IS("p") " AND r.status = 'ok' AND r.time_ms > 0 "
        "AND r.rel_error >= 0 ORDER BY r.time_ms, r.id");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, device_uuid);
    db_bind_text(st, 2, kernel);
    db_bind_text(st, 3, source_hash);
    db_bind_problem(st, p);
    return db_collect_results(d, st, out, count, "listing a problem's results");
}

/* Inside the transaction: the problem's rows on one device lose their
 * sustained time and rank. */
static at_status clear_problem(db *d, const char *uuid, const char *kernel, const char *hash,
                               const tpl_problem *p)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "UPDATE result SET sustained_ms = NULL, rank_ms = NULL "
        "WHERE device_id = (SELECT id FROM device WHERE uuid = ?1) "
        "AND kernel_id IN (SELECT id FROM kernel WHERE name = ?2 "
        "AND (?3 IS NULL OR source_hash = ?3)) "
        "AND problem_id IN (SELECT p.id FROM problem p WHERE p.kernel = ?2 AND "
        DB_PROBLEM_IS("p") ")");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, uuid);
    db_bind_text(st, 2, kernel);
    db_bind_text(st, 3, hash);
    db_bind_problem(st, p);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? AT_OK : db_sqlfail(d, rc, "clearing sustained times");
}

/* Inside the transaction: row id (of the problem, on one of the devices
 * just cleared) gets its sustained time and rank. */
static at_status set_row(db *d, const char *kernel, const tpl_problem *p, long long id,
                         double sustained, double rank)
{
    sqlite3_stmt *st;
    at_status s = db_prepare(d, &st, "UPDATE result SET sustained_ms = ?2, rank_ms = ?3 "
        "WHERE id = ?1 AND problem_id IN (SELECT p.id FROM problem p WHERE p.kernel = ?4 "
        "AND " DB_PROBLEM_IS("p") ")");
    if (s != AT_OK)
        return s;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_double(st, 2, sustained);
    sqlite3_bind_double(st, 3, rank);
    db_bind_text(st, 4, kernel);
    db_bind_problem(st, p);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_sqlfail(d, rc, "storing a sustained time");
    if (sqlite3_changes(d->h) != 1)
        return db_fail(d, AT_ERR_NOT_FOUND, "result %lld is not a row of that problem", id);
    return AT_OK;
}

at_status db_store_sustained(db *d, const char *const *uuids, int n_uuids, const char *kernel,
                             const char *source_hash, const tpl_problem *p,
                             const long long *ids, const double *sustained_ms,
                             const double *rank_ms, int n)
{
    if (!d || !uuids || n_uuids < 1 || !kernel || !db_problem_ok(p) || n < 0 ||
        (n > 0 && (!ids || !sustained_ms || !rank_ms)))
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_store_sustained: bad argument")
                 : AT_ERR_INVALID_ARG;
    for (int i = 0; i < n; i++)
        if (!(sustained_ms[i] > 0) || !(rank_ms[i] > 0))
            return db_fail(d, AT_ERR_INVALID_ARG, "db_store_sustained: a time is not positive");
    at_status s = db_check_writable(d, "storing sustained times");
    if (s != AT_OK || (s = db_begin(d)) != AT_OK)
        return s;
    for (int u = 0; u < n_uuids && s == AT_OK; u++)
        s = clear_problem(d, uuids[u], kernel, source_hash, p);
    for (int i = 0; i < n && s == AT_OK; i++)
        s = set_row(d, kernel, p, ids[i], sustained_ms[i], rank_ms[i]);
    if (s != AT_OK) {
        db_rollback(d);
        return s;
    }
    return db_commit(d);
}
