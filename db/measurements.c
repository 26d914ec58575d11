/* measurements.c: side measurements for reports (vendor libraries, seeds,
 * device ceilings): storing and listing them. */
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"

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
        "INSERT INTO measurement (device_id, kernel, n_dims, " DB_KEY_COLS ", name, time_ms, "
        "gflops, gbs, rel_error, note, created) VALUES (?1, ?2, ?3, " DB_KEY_VALUES ", ?7, ?8, "
        "?9, ?10, ?11, ?12, ?13) ON CONFLICT (device_id, kernel, " DB_KEY_COLS ", name) "
        "DO UPDATE SET n_dims = excluded.n_dims, time_ms = excluded.time_ms, "
        "gflops = excluded.gflops, gbs = excluded.gbs, rel_error = excluded.rel_error, "
        "note = excluded.note, created = excluded.created");
    if (s != AT_OK)
        return s;
    sqlite3_bind_int64(st, 1, dev);
    db_bind_text(st, 2, m->kernel);
    sqlite3_bind_int(st, 3, m->problem.n_dims);
    db_bind_problem(st, &m->problem);
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
        "m.gflops, m.gbs, m.rel_error, m.note, m.created, " DB_KIND_COLS("m")
        " FROM measurement m JOIN device d ON d.id = m.device_id "
        "WHERE (?1 IS NULL OR d.uuid = ?1) AND (?2 IS NULL OR m.kernel = ?2) "
        "ORDER BY m.kernel, m.d0, m.d1, m.d2, m.dtype, m.math, m.op_a, m.op_b, m.layout, "
        "m.batch, m.epilogue, m.name");
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
        db_col_kind(st, 13, &m->problem);
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
