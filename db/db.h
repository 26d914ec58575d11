/* db.h: the tuning database (SQLite, WAL). The only module that speaks SQL;
 * every value is bound, never pasted. "Best" is always a query. */
#ifndef DB_H
#define DB_H

#include <stddef.h>
#include <stdio.h>
#include "autotune.h"
#include "cudrv.h"
#include "tpl.h"

/* 1: the first release; 2: the problem's kind (element type, math, ops,
 * order, batch) in the problem and measurement keys; 3: a result's
 * sustained time and rank (the tuner's re-timing); 4: the recorded table
 * (problems the runtime served below the exact level); 5: a GEMM's fused
 * epilogue in the kind of the problem, measurement and recorded keys
 * (db/migrate.c). */
#define DB_SCHEMA_VERSION 5

typedef struct db db;

/* Result status strings stored in result.status. */
#define DB_OK            "ok"
#define DB_COMPILE_ERROR "compile_error"
#define DB_WRONG_RESULT  "wrong_result"
#define DB_LAUNCH_ERROR  "launch_error"   /* launch/run returned an error */
#define DB_CRASHED       "crashed"        /* worker died */
#define DB_TIMEOUT       "timeout"        /* watchdog killed the worker */
#define DB_ABANDONED     "abandoned"      /* stopped early: clearly slower */
#define DB_INVALID       "invalid"        /* not legal on this device */

typedef struct db_result {
    long long id;
    long long session_id;
    char device_uuid[48];
    char kernel[32];
    char source_hash[20];
    tpl_problem problem;
    char config[TPL_CONFIG_LEN];
    char status[16];
    double time_ms;         /* median */
    double time_min_ms;
    double time_max_ms;
    int runs;
    double gflops;          /* 0 where the metric is bytes */
    double gbs;
    double rel_error;       /* against the reference; -1 if not verified */
    double compile_ms;
    char binary_key[40];    /* "" if no cubin stored */
    char error[1024];       /* "" for ok */
    char created[32];       /* UTC, ISO 8601, set by db_store_result */
    int deterministic;      /* 1 if the configuration is bit-reproducible */
    /* The tuner's sustained re-timing of a problem's top configurations
     * (tuner/retime.c); both 0 for a row never re-timed. */
    double sustained_ms;    /* its median under sustained load */
    double rank_ms;         /* the time it ranks by (db_rank_ms) */
} db_result;

/* The one ranking rule of "best" (the lookup, gc's keep list, merge,
 * export and import, `autotune show`, the report): the lower rank wins,
 * where a row's rank is its rank_ms where it was re-timed under sustained
 * load, else its time_ms. The tuner re-times a problem's top few rows
 * together and gives them rank_ms = (their best time_ms) x (their own
 * sustained time / the best sustained time of the set): the sustained
 * winner takes the set's best short time, the others follow in sustained
 * order, and every row never re-timed ranks by time_ms exactly as before.
 * db/db_internal.h's DB_RANK is the same rule in SQL. */
double db_rank_ms(const db_result *r);

/* A device as recorded. */
typedef struct db_device {
    long long id;
    at_device_info info;
    char nvrtc_version[16];
} db_device;

/* Default path: $AUTOTUNE_DB, else $XDG_CACHE_HOME/autotune/tuning.db,
 * else $HOME/.cache/autotune/tuning.db. Writes into out (len >= 4096). */
void db_default_path(char *out, size_t len);

/* How db_open treats the file (the values 0 and 1 are the old "create"). */
#define DB_OPEN_EXISTING 0  /* an existing database: writable where allowed */
#define DB_OPEN_CREATE   1  /* also creates the file, its folder, the schema */
#define DB_OPEN_READONLY 2  /* an existing database, read-only: never writes */
#define DB_OPEN_SHIPPED  3  /* read-only, and no lock or side file (-wal, -shm)
                               made beside it: read as an unchanging file, or
                               from a private snapshot when a -wal is pending
                               (for databases shipped with a program) */

/* Opens the database at path (NULL or "": db_default_path) in WAL mode
 * with a busy timeout. A file we may not write (permissions, read-only
 * mount, or a folder where the WAL's -wal and -shm cannot be created) or
 * DB_OPEN_READONLY gives a read-only handle: every query works, every
 * write fails with AT_ERR_DB and a message naming why; where the -shm can
 * be neither opened nor created the file is read as immutable, or from a
 * private snapshot when a -wal holds changes. AT_ERR_NOT_FOUND if the
 * file is missing (unless DB_OPEN_CREATE); AT_ERR_DB_CORRUPT if it is not
 * a database of ours or of a newer schema version (left untouched);
 * AT_ERR_IO if it cannot be read or created; reason in err. */
at_status db_open(db **out, const char *path, int mode, char *err, size_t errlen);
void db_close(db *d);                         /* NULL is a no-op */
const char *db_errmsg(const db *d);           /* last failure, never NULL */
int db_is_readonly(const db *d);              /* 1 for NULL */
/* Why the handle is read-only ("read-only file system", ...), "" if not. */
const char *db_readonly_reason(const db *d);

/* Records or refreshes a device (by UUID). */
at_status db_put_device(db *d, const at_device_info *info, const char *nvrtc_version);
/* Fills out for the device of that UUID; AT_ERR_NOT_FOUND if unknown. */
at_status db_get_device(db *d, const char *uuid, db_device *out);
/* All recorded devices (malloc'd array, caller frees). */
at_status db_list_devices(db *d, db_device **out, int *count);

/* A tuning session: start/end facts (clocks, temperature, strategy) as
 * free text (JSON). */
at_status db_begin_session(db *d, const char *device_uuid, const char *command,
                           const char *start_facts, long long *session_id);
at_status db_end_session(db *d, long long session_id, const char *end_facts,
                         const char *outcome);
/* Sessions begun within the last day that have not ended (runs still writing: a run killed
 * without its end counts for a day) into *count. */
at_status db_open_sessions(db *d, long long *count);

/* Inserts or replaces the result of (device, kernel, source hash, problem,
 * config); sets r->created. A runtime trial's result (ok, rel_error -1, no
 * session) never replaces a verified ok row (rel_error >= 0): that row stays. */
at_status db_store_result(db *d, db_result *r);
/* 1 if a result of any status is stored for that key (resume), 0 if not,
 * -1 on error. An ok result never verified (rel_error < 0: a runtime trial
 * timed it on a caller's data) counts as not stored, so the tuner measures
 * and verifies it, and its row replaces the trial's. */
int db_has_result(db *d, const char *device_uuid, const char *kernel,
                  const char *source_hash, const tpl_problem *p, const char *config);
/* Best ok result for exactly this device/kernel/hash/problem (sizes, kind
 * and batch count); deterministic_only restricts to reproducible configurations.
 * AT_ERR_NOT_FOUND if none. */
at_status db_best(db *d, const char *device_uuid, const char *kernel,
                  const char *source_hash, const tpl_problem *p,
                  int deterministic_only, db_result *out);
/* The `per_problem` fastest ok results of every tuned problem of a kernel
 * and source hash, for one device (device_uuid) or every device of one
 * architecture (arch "sm_90", device_uuid NULL), only problems of the kind
 * of `kind` (element type, math, ops, order; its sizes and batch count
 * are ignored; NULL: every kind), ordered by problem then time. Malloc'd
 * array, caller frees. */
at_status db_candidates(db *d, const char *device_uuid, const char *arch,
                        const char *kernel, const char *source_hash,
                        const tpl_problem *kind, int per_problem, int deterministic_only,
                        db_result **out, int *count);
/* Every result matching the filters (NULL = any), ordered by created;
 * for reports and `autotune show`. Malloc'd array, caller frees. */
at_status db_results(db *d, const char *device_uuid, const char *kernel,
                     db_result **out, int *count);

/* Every ok, verified (rel_error >= 0) result of exactly this problem on
 * the device, fastest time_ms first (the short timings the search ranked
 * by, whatever the rank): what the tuner's re-timing chooses from.
 * Malloc'd array, caller frees. */
at_status db_problem_results(db *d, const char *device_uuid, const char *kernel,
                             const char *source_hash, const tpl_problem *p,
                             db_result **out, int *count);
/* Records one re-timing of a problem: in one transaction, every row of
 * (kernel, source hash, problem) on the n_uuids devices loses its
 * sustained_ms and rank_ms, then the n rows of ids get theirs. On failure
 * nothing changes (AT_ERR_DB, reason in d; AT_ERR_NOT_FOUND if an id is
 * not a row of that problem). */
at_status db_store_sustained(db *d, const char *const *uuids, int n_uuids, const char *kernel,
                             const char *source_hash, const tpl_problem *p,
                             const long long *ids, const double *sustained_ms,
                             const double *rank_ms, int n);

/* cubin cache keyed by tpl_binary_key. */
at_status db_put_binary(db *d, const char *key, const char *kernel,
                        const char *source_hash, const char *config,
                        const char *arch, const char *nvrtc_version,
                        const char *options, const void *cubin, size_t size);
/* malloc'd copy of the cubin; AT_ERR_NOT_FOUND if not stored. */
at_status db_get_binary(db *d, const char *key, void **cubin, size_t *size);
/* 1 if a cubin is stored under key, 0 if not, -1 on error (reason in d). */
int db_has_binary(db *d, const char *key);

/* The space the database takes. */
typedef struct db_usage {
    long long file_bytes;       /* the database file */
    long long wal_bytes;        /* its -wal, 0 if none */
    long long free_bytes;       /* unused pages inside the file (VACUUM returns them) */
    long long n_results;
    long long n_binaries;
    long long binary_bytes;     /* the stored cubins' sizes */
} db_usage;
/* Fills out (files by stat, counts by query); AT_ERR_DB if a count cannot
 * be read. */
at_status db_usage_of(db *d, db_usage *out);

/* What db_gc_binaries kept and deleted (dry run: would delete). */
typedef struct db_gc_stats {
    long long n_binaries, binary_bytes;   /* stored before */
    long long n_best;                     /* kept: a lookup can serve them */
    long long n_recent;                   /* kept: recent, not best */
    long long n_deleted, deleted_bytes;
} db_gc_stats;
/* Deletes every stored cubin except (a) those of every result a lookup can
 * serve: per device, kernel (name and source hash) and problem, and per
 * architecture, kernel and problem, the per_problem fastest ok results and
 * the per_problem fastest deterministic ones (lk_choose's db_best and
 * db_candidates), and (b) those of the keep_recent newest results and the
 * keep_recent newest cubins. Never deletes a result row. One transaction:
 * on failure nothing is deleted. dry_run: counts only, writes nothing (a
 * read-only handle will do); otherwise AT_ERR_DB on a read-only handle. */
at_status db_gc_binaries(db *d, int per_problem, long long keep_recent, int dry_run,
                         db_gc_stats *out);
/* VACUUM, then a truncating checkpoint of the WAL: the file shrinks to its
 * content. AT_ERR_DB with the reason (the content unchanged) if it cannot:
 * read-only, no room for VACUUM's copy, or another connection busy. */
at_status db_vacuum(db *d);
/* Copies the WAL into the file and truncates it (what closing the last
 * connection does). AT_ERR_DB if read-only or other connections keep it
 * from finishing (nothing is lost either way). */
at_status db_checkpoint(db *d);

/* Side measurements shown in reports: vendor libraries ("cublas", "cub"),
 * seeds run outside the tuner, and device ceilings (kernel "device", name
 * "copy_bandwidth" / "fp32_peak"). Replaces the row of the same
 * (device, kernel, problem, name). */
typedef struct db_measurement {
    char device_uuid[48];
    char kernel[32];
    tpl_problem problem;
    char name[64];
    double time_ms;
    double gflops;
    double gbs;
    double rel_error;       /* -1 if not checked */
    char note[256];
    char created[32];
} db_measurement;
at_status db_put_measurement(db *d, db_measurement *m);
at_status db_measurements(db *d, const char *device_uuid, const char *kernel,
                          db_measurement **out, int *count);

/* What db_merge copied. */
typedef struct db_merge_stats {
    long long devices;              /* device rows read (added or refreshed) */
    long long sessions;             /* sessions added */
    long long results_read;         /* result rows of the source */
    long long results_added;        /* of them, keys the destination lacked */
    long long results_replaced;     /* keys stored in both where the source's row was better */
    long long cubins_read;          /* cubins of the source: counted, never copied */
    long long measurements;         /* side measurements read */
} db_merge_stats;
/* Copies every row of src into dst in one transaction of dst (src is only
 * read, from one snapshot): devices (by UUID; the later sighting's facts),
 * sessions, kernels, problems, results and side measurements. Cubins are
 * code from outside and are not copied: db_servable_needs lists those a
 * lookup serves, to compile here (and to check the source's against). A result whose key (device, kernel and source hash,
 * problem, configuration) both hold keeps the better row: an ok row with a
 * time beats any other, then the lower median, then the newer, then a
 * fixed order of the other fields, so merging several sources gives the
 * same rows in any order and the best per device, kernel and problem is
 * the best over the sources. stats may be NULL. On failure dst is
 * unchanged (rolled back) and its message says why: AT_ERR_DB for a
 * read-only dst, AT_ERR_INVALID_ARG for dst == src. */
at_status db_merge(db *dst, db *src, db_merge_stats *stats);

/* ---- problems served below the exact level (db/recorded.c) ---- */

/* How many recorded rows a database keeps (db_record_served's bound). */
#define DB_RECORDED_MAX 1000

/* A problem the runtime served below the exact level: one row per device,
 * kernel and problem (sizes and kind), its counts summed over the
 * processes that recorded it. */
typedef struct db_recorded {
    char device_uuid[48];       /* db_wanted: one device of the model */
    char model[256];            /* the device's name (db_wanted) */
    char kernel[32];
    tpl_problem problem;
    int level;                  /* at_lookup_level that served it (db_wanted: the lowest
                                   level seen, as the largest number) */
    long long calls;
    double time_ms;             /* the time its calls took in all, estimated by the
                                   recorder (runtime/record.c says how) */
    char first_seen[32];        /* UTC, ISO 8601; "" in a write: now */
    char last_seen[32];
    int done;                   /* db_wanted: a verified ok result of the problem is
                                   stored for a device of the model (tuned) */
} db_recorded;

/* Adds rows[0..n) to the recorded table in one transaction (the device
 * recorded too): a row of the same device, kernel and problem gets the
 * calls and time added, the new level, the earlier first and the later
 * last sighting. Then keeps at most max_rows rows: the least recently seen,
 * then the lightest (time_ms), are deleted. On failure nothing changes:
 * AT_ERR_DB for a read-only database (a caller that records on the side
 * ignores it), AT_ERR_INVALID_ARG for a row the schema cannot hold. */
at_status db_record_served(db *d, const at_device_info *dev, const char *nvrtc_version,
                           const db_recorded *rows, int n, int max_rows);
/* The recorded problems of devices named model (NULL: every device),
 * summed per model, kernel and problem, heaviest first (time_ms, then
 * calls); those tuned since (done: a verified ok result of the problem on
 * a device of the model) only with with_done. Malloc'd array, caller
 * frees; a read-only database older than version 4 has none. */
at_status db_wanted(db *d, const char *model, int with_done, db_recorded **out, int *count);

/* ---- export and import (db/export.c, db/import.c; JSON: db/json.h) ---- */

/* Which results db_export writes (NULL members: any). */
typedef struct db_export_filter {
    const char *device_uuid;
    const char *model;              /* device name, e.g. "NVIDIA H200" */
    const char *kernel;
    int with_cubins;                /* 1: the stored cubins of the results, base64 */
    /* > 0: only the best_per_problem best (db_rank_ms) ok, verified results
     * of each device, kernel and problem, of this build's kernel sources,
     * ordered by kernel and problem, with no cubin keys: the shipped tuning
     * data (`autotune export --configs-only --shipped`) */
    int best_per_problem;
} db_export_filter;
/* Writes the selected results, their devices and (with_cubins) their
 * stored cubins to f as one JSON document (the format is described at the
 * top of db/export.c); counts what it wrote. flt NULL: everything, no
 * cubins. AT_ERR_IO if f fails, AT_ERR_DB if the database cannot be read. */
at_status db_export(db *d, const db_export_filter *flt, FILE *f, long long *n_results,
                    long long *n_cubins);

/* An export read and checked, ready to be stored (db/import.c). */
typedef struct db_import db_import;
/* Parses and checks a whole export document: format and version, every
 * device, every result (known kernel, every parameter of it and no other,
 * a problem of its dimensions, a known status, finite numbers) and every
 * cubin (base64, size). Decides which cubins may be this build's: same
 * NVRTC version, same source hash, and the key this build computes for
 * their configuration and arch; the others are dropped. A cubin is code
 * from outside: even a fitting one is stored only once this build compiled
 * the same bytes for its key (db_import_needs, db_import_add_cubin).
 * Touches no database. AT_ERR_INVALID_ARG with "WHERE: why" in err (a JSON
 * position or a path such as results[3].config), AT_ERR_NO_MEMORY. */
at_status db_import_read(const char *text, size_t len, db_import **out, char *err,
                         size_t errlen);
void db_import_free(db_import *im);                 /* NULL is a no-op */
/* A configuration whose cubin should be compiled here: imported (or
 * merged) results a lookup can serve (per device, kernel and problem the
 * per_problem fastest ok results, and as many deterministic ones) of this
 * build's source, whose cubin is not stored in d. Where the file carries a
 * cubin under the key, the compile checks it (in_file). */
typedef struct db_import_need {
    const tpl_family *fam;
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    char arch[16];                  /* the device's, as the runtime asks for it */
    char key[40];                   /* tpl_binary_key */
    int in_file;                    /* 1: the file has a cubin under key, to check */
} db_import_need;
/* The needs, each key once (malloc'd, caller frees). AT_ERR_NO_MEMORY, or
 * AT_ERR_DB if d cannot be read. */
at_status db_import_needs(db *d, db_import *im, int per_problem, db_import_need **out,
                          int *count);
/* The cubins d's results need, merged from elsewhere: the configurations a
 * lookup serves (as db_import_needs ranks them, per device and per arch) of
 * this build's kernel sources, whose cubin d lacks (in_file 0), each key once
 * (malloc'd, caller frees). AT_ERR_NO_MEMORY, AT_ERR_DB. */
at_status db_servable_needs(db *d, int per_problem, db_import_need **out, int *count);
/* Gives the import this build's cubin for need (copied): a cubin of the
 * file under need's key is verified if its bytes are the same (then it is
 * stored) and dropped if not; this build's cubin is stored in its place.
 * A file cubin never given its compile is dropped. */
at_status db_import_add_cubin(db_import *im, const db_import_need *need, const void *cubin,
                              size_t size);
/* What an import did. */
typedef struct db_import_stats {
    long long devices, results, results_added, results_replaced, results_kept;
    long long other_source;         /* results of another kernel source: stored, not served */
    long long cubins_in_file, cubins_stored, cubins_compiled;
    long long cubins_verified;      /* of the file's: this build compiled the same bytes */
    long long cubins_dropped;       /* of the file's: every other one (never stored) */
    long long cubins_differ;        /* of the dropped: this build compiled other bytes */
    long long cubins_unfit;         /* of the dropped: another toolkit, source, arch or key */
} db_import_stats;
/* Fills the counts known before storing (results, cubins in the file,
 * dropped, other source). */
void db_import_counts(const db_import *im, db_import_stats *st);
/* Stores everything in one transaction: devices, results (a key already
 * stored keeps the better row, as db_merge does), the verified and the
 * compiled cubins. On failure nothing is stored (rolled back), the reason
 * in d's message; AT_ERR_DB for a read-only database. */
at_status db_import_apply(db *d, db_import *im, db_import_stats *st);

#endif
