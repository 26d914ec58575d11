/* db_internal.h: what the db/ files share and nothing else includes: the
 * handle, the SQL helpers (sql.c) and the pieces one topic lends another. */
#ifndef DB_INTERNAL_H
#define DB_INTERNAL_H

#include <stddef.h>
#include <sqlite3.h>
#include "db.h"

struct db {
    sqlite3 *h;
    int readonly;
    char ro_reason[512];             /* why readonly, "" if writable */
    char path[4096];
    char errmsg[1024];
};

/* ---- sql.c: strings and messages ---- */

/* Copies src (NULL = "") into dst, truncated to len - 1 bytes. */
void db_copy(char *dst, size_t len, const char *src);
void db_fmt(char *dst, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets the handle's message and returns status. */
at_status db_fail(db *d, at_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps an SQLite result code to a status. */
at_status db_status_of(int rc);
/* Records SQLite's failure of `what` on the handle (a full disk or a file
 * size limit named as such); returns its status. */
at_status db_sqlfail(db *d, int rc, const char *what);
/* Current UTC time, ISO 8601 with milliseconds. */
void db_now(char *out, size_t len);

/* ---- sql.c: statements ---- */

/* Prepares sql; on failure *st = NULL and the handle says why. */
at_status db_prepare(db *d, sqlite3_stmt **st, const char *sql);
/* Binds s as text, NULL as NULL. */
void db_bind_text(sqlite3_stmt *st, int i, const char *s);
void db_col_text(sqlite3_stmt *st, int col, char *dst, size_t len);

/* ---- sql.c: the problem key ----
 * A problem's key columns, in the problem and measurement tables, are
 * d0, d1, d2 (unused ones 0) and its kind as readable text: dtype ('f32',
 * 'f64', 'f16', 'bf16'), math ('' or 'tf32'), op_a and op_b ('N', 'T'),
 * layout ('row', 'col'), batch (1 for one product), epilogue ('' none,
 * 'bias_col:gelu', ...; version 5); see tpl_dtype_name, tpl_epilogue_name.
 * Statements bind a problem's key at the fixed parameters ?20 .. ?29, above
 * every other parameter they use: DB_KEY_VALUES, DB_PROBLEM_IS, DB_KIND_IS. */
#define DB_KEY_COLS "d0, d1, d2, dtype, math, op_a, op_b, layout, batch, epilogue"
#define DB_KEY_VALUES "?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29"
#define DB_N_KEY_COLS 10            /* the columns of DB_KEY_COLS, bound at ?20 on */
/* t's kind is the bound one (never true where the kind is bound NULL) */
#define DB_KIND_IS(t) \
    t ".dtype = ?23 AND " t ".math = ?24 AND " t ".op_a = ?25 AND " t ".op_b = ?26 AND " \
    t ".layout = ?27 AND " t ".epilogue = ?29"
/* t's whole key is the bound one */
#define DB_PROBLEM_IS(t) \
    "(" t ".d0 = ?20 AND " t ".d1 = ?21 AND " t ".d2 = ?22 AND " DB_KIND_IS(t) " AND " \
    t ".batch = ?28)"
/* The kind columns of t in the order db_col_kind reads them (DB_N_KIND_COLS). */
#define DB_KIND_COLS(t) \
    t ".dtype, " t ".math, " t ".op_a, " t ".op_b, " t ".layout, " t ".batch, " t ".epilogue"
#define DB_N_KIND_COLS 7
/* Binds p's key at ?20 .. ?29 (p NULL: all NULL, matching nothing). */
void db_bind_problem(sqlite3_stmt *st, const tpl_problem *p);
/* Binds p's kind alone at ?23 .. ?27 and ?29 (for DB_KIND_IS; p NULL: NULL). */
void db_bind_kind(sqlite3_stmt *st, const tpl_problem *p);
/* Reads n_dims, d0, d1, d2 from columns col .. col + 3 (kind left plain). */
void db_col_problem(sqlite3_stmt *st, int col, tpl_problem *p);
/* Reads the kind (DB_KIND_COLS) from columns col .. col + 6; a name this
 * build does not know reads as TPL_KIND_UNKNOWN. */
void db_col_kind(sqlite3_stmt *st, int col, tpl_problem *p);
/* Runs sql; 1 if it succeeded, else 0 with *status and the message set. */
int db_exec(db *d, const char *sql, const char *what, at_status *status);
/* BEGIN IMMEDIATE (waits up to the busy timeout for other writers). */
at_status db_begin(db *d);
/* COMMIT; rolls back if it fails. */
at_status db_commit(db *d);
/* Rolls back the open transaction, if any. */
void db_rollback(db *d);
/* AT_ERR_DB (and the message) if the handle may not write. */
at_status db_check_writable(db *d, const char *what);
/* Runs a single-value integer query (arg bound to ?1 if not NULL);
 * *value = 0 if no row. */
at_status db_query_int(db *d, const char *sql, const char *arg,
                       long long *value, const char *what);
/* Grows a malloc'd array of elements of size `size` to hold n + 1; 0 if
 * out of memory (the array is kept). */
int db_grow(void **arr, int *cap, int n, size_t size);
/* 1 if p is a problem the schema can hold: 0..3 sizes, a kind with names,
 * a batch count >= 0. */
int db_problem_ok(const tpl_problem *p);

/* ---- schema.c ---- */

/* Validates the database, creates the schema where allowed (create and an
 * empty database), brings an older schema up to date (db_upgrade), then
 * sets the connection's pragmas. */
at_status db_setup(db *d, int create, int empty_file);
/* CREATE TABLE statements of the current schema's problem and measurement
 * tables under another name (the migration builds them beside the old). */
void db_problem_table_sql(char *out, size_t len, const char *name);
void db_measurement_table_sql(char *out, size_t len, const char *name);
/* CREATE TABLE of the recorded table (version 4) under name. */
void db_recorded_table_sql(char *out, size_t len, const char *name);

/* ---- migrate.c ---- */

/* Brings a database of schema `version` (older than DB_SCHEMA_VERSION) up
 * to date: a writable one is migrated in one transaction that keeps every
 * row and id (or left as it was, with the reason, if that fails); a
 * read-only one is read as the current schema through temporary views
 * that give the new columns their defaults. */
at_status db_upgrade(db *d, long long version);

/* ---- open.c, readonly.c ---- */

/* (Re)opens d->h on filename (d->path, a copy of it or a URI) with
 * SQLite's flags; marks the handle read-only if SQLite opened it so.
 * AT_ERR_IO if SQLite cannot open it, reason on the handle. */
at_status db_connect(db *d, const char *filename, int flags);
/* 1 if the last failure is SQLite not finding or not being allowed to
 * open or create a file: the database's -wal, its -shm, or their folder. */
int db_side_files_blocked(const db *d);
/* For a read-only d whose -shm cannot be opened or created: reads the file
 * as immutable or, where a -wal holds changes, a private snapshot of both
 * (the changes are seen). Reason on the handle. */
at_status db_open_readonly(db *d, int empty_file);

/* ---- devices.c ---- */

/* id of the device of that UUID; AT_ERR_NOT_FOUND if unknown. */
at_status db_device_id(db *d, const char *uuid, long long *id);

/* ---- results.c ---- */

/* The rank of result row t (db.h's db_rank_ms, the one ranking rule):
 * its rank_ms where the tuner re-timed it, else its time_ms. Every query
 * that orders results by speed orders by DB_RANK, then by id. */
#define DB_RANK(t) "COALESCE(" t ".rank_ms, " t ".time_ms)"

/* The columns db_read_result reads, from RESULT_FROM. */
#define RESULT_COLS \
    "r.id, r.session_id, d.uuid, k.name, k.source_hash, p.n_dims, p.d0, p.d1, " \
    "p.d2, r.config, r.status, r.time_ms, r.time_min_ms, r.time_max_ms, r.runs, " \
    "r.gflops, r.gbs, r.rel_error, r.compile_ms, r.binary_key, r.error, r.created, " \
    "r.deterministic, " DB_KIND_COLS("p") ", r.sustained_ms, r.rank_ms"
#define RESULT_FROM \
    " FROM result r JOIN device d ON d.id = r.device_id " \
    "JOIN kernel k ON k.id = r.kernel_id JOIN problem p ON p.id = r.problem_id "

/* Reads one row of RESULT_COLS. */
void db_read_result(sqlite3_stmt *st, db_result *r);
/* Steps st to the end, collecting rows into a malloc'd array; finalizes
 * st. On failure nothing is returned and the handle says why. */
at_status db_collect_results(db *d, sqlite3_stmt *st, db_result **out,
                             int *count, const char *what);

/* ---- results.c, merge.c: the rows merge and import write ---- */

/* Inserts (name, hash) if missing; its id. */
at_status db_kernel_id(db *d, const char *name, const char *hash, long long *id);
/* Inserts (kernel, problem key) if missing; its id. */
at_status db_problem_id(db *d, const char *kernel, const tpl_problem *p, long long *id);
/* Inserts or updates a device row (arch as given), with first_seen and
 * last_seen; only_if_newer keeps a stored row whose last_seen is not older
 * (merge: the later sighting's facts win). AT_ERR_DB on failure. */
at_status db_write_device(db *d, const at_device_info *info, const char *arch,
                          const char *nvrtc_version, const char *first_seen,
                          const char *last_seen, int only_if_newer);
/* The device row of dev (by UUID), its facts replaced where last_seen is
 * later than the stored one's, first_seen the earlier; its id. */
at_status db_upsert_device(db *d, const db_device *dev, const char *first_seen,
                           const char *last_seen, long long *id);
/* The upsert of a result row: ?1 device_id, ?2 kernel_id, ?3 problem_id,
 * ?4 config, ?5 status, ?6 time_ms, ?7 time_min_ms, ?8 time_max_ms, ?9 runs,
 * ?10 gflops, ?11 gbs, ?12 rel_error, ?13 compile_ms, ?14 binary_key,
 * ?15 error, ?16 deterministic, ?17 session_id, ?18 created, ?19
 * sustained_ms, ?29 rank_ms (NULL: not re-timed; ?20 .. ?28 are the problem
 * key's, unused here); a stored row of the same key is replaced only by a
 * better one (db_merge). */
at_status db_prepare_result_upsert(db *d, sqlite3_stmt **st);
/* INSERT OR IGNORE of a cubin: ?1 key, ?2 kernel, ?3 source_hash, ?4 config,
 * ?5 arch, ?6 nvrtc_version, ?7 options, ?8 cubin, ?9 size, ?10 created. */
at_status db_prepare_binary_insert(db *d, sqlite3_stmt **st);

#endif
