/* queries.c: the lookups over stored results: resume checks, the best of
 * a problem, candidates for the nearest shape, every result. */
#include <string.h>
#include "db_internal.h"

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
                   "AND (?3 IS NULL OR k.source_hash = ?3) AND " DB_PROBLEM_IS("p")
                   " AND r.config = ?7 AND NOT (r.status = 'ok' AND r.rel_error < 0) "
                   "LIMIT 1") != AT_OK)
        return -1;
    db_bind_text(st, 1, device_uuid);
    db_bind_text(st, 2, kernel);
    db_bind_text(st, 3, source_hash);
    db_bind_problem(st, p);
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
        "AND " DB_PROBLEM_IS("p") " AND r.status = 'ok' "
        "AND r.time_ms > 0 AND (?7 = 0 OR r.deterministic = 1) "
        "ORDER BY " DB_RANK("r") ", r.id LIMIT 1");
    if (s != AT_OK)
        return s;
    db_bind_text(st, 1, device_uuid);
    db_bind_text(st, 2, kernel);
    db_bind_text(st, 3, source_hash);
    db_bind_problem(st, p);
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
                        const tpl_problem *kind, int per_problem, int deterministic_only,
                        db_result **out, int *count)
{
    if (!d || !kernel || !out || !count || (kind && !db_problem_ok(kind)))
        return d ? db_fail(d, AT_ERR_INVALID_ARG, "db_candidates: NULL argument or bad kind")
                 : AT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    /* per_problem <= 0: every ok result. */
    at_status s = db_prepare(d, &st, "SELECT * FROM (SELECT " RESULT_COLS ", "
        "ROW_NUMBER() OVER (PARTITION BY r.problem_id ORDER BY " DB_RANK("r") ", r.id) AS rank, "
        DB_RANK("r") " AS by_rank"
        RESULT_FROM
        "WHERE k.name = ?1 AND (?2 IS NULL OR k.source_hash = ?2) "
        "AND (?3 IS NULL OR d.uuid = ?3) AND (?4 IS NULL OR d.arch = ?4) "
        "AND r.status = 'ok' AND r.time_ms > 0 AND (?5 = 0 OR r.deterministic = 1) "
        "AND (?23 IS NULL OR " DB_KIND_IS("p") ")) "
        "WHERE ?6 <= 0 OR rank <= ?6 "
        "ORDER BY d0, d1, d2, dtype, math, op_a, op_b, layout, batch, epilogue, by_rank, id");
    if (s != AT_OK)
        return s;
    db_bind_kind(st, kind);
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
