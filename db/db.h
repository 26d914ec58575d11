/* db.h: the tuning database (SQLite, WAL). The only module that speaks SQL;
 * every value is bound, never pasted. "Best" is always a query. */
#ifndef DB_H
#define DB_H

#include <stddef.h>
#include "autotune.h"
#include "cudrv.h"
#include "tpl.h"

/* 1: the first release; 2: the problem's kind (element type, math, ops,
 * order, batch) in the problem and measurement keys (db/migrate.c). */
#define DB_SCHEMA_VERSION 2

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
} db_result;

/* A device as recorded. */
typedef struct db_device {
    long long id;
    at_device_info info;
    char nvrtc_version[16];
} db_device;

/* Default path: $AUTOTUNE_DB, else $XDG_CACHE_HOME/autotune/tuning.db,
 * else $HOME/.cache/autotune/tuning.db. Writes into out (len >= 4096). */
void db_default_path(char *out, size_t len);

/* Opens (create = 1: creating the file, its folder and the schema) in WAL
 * mode with a busy timeout. AT_ERR_NOT_FOUND if the file is missing and
 * create = 0; AT_ERR_DB_CORRUPT if it is not a database of ours or of a
 * newer schema version; reason in err. */
at_status db_open(db **out, const char *path, int create, char *err, size_t errlen);
void db_close(db *d);                         /* NULL is a no-op */
const char *db_errmsg(const db *d);           /* last failure, never NULL */
int db_is_readonly(const db *d);

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

/* Inserts or replaces the result of (device, kernel, source hash, problem,
 * config); sets r->created. */
at_status db_store_result(db *d, db_result *r);
/* 1 if a result of any status is stored for that key (resume), 0 if not,
 * -1 on error. */
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

/* cubin cache keyed by tpl_binary_key. */
at_status db_put_binary(db *d, const char *key, const char *kernel,
                        const char *source_hash, const char *config,
                        const char *arch, const char *nvrtc_version,
                        const char *options, const void *cubin, size_t size);
/* malloc'd copy of the cubin; AT_ERR_NOT_FOUND if not stored. */
at_status db_get_binary(db *d, const char *key, void **cubin, size_t *size);

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

#endif
