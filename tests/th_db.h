/* th_db.h: fixtures of the database tests (tests/th_db.c). */
#ifndef TH_DB_H
#define TH_DB_H

#include <stddef.h>
#include "db.h"

/* th_tmpdir()/name into out. */
void tdb_path(char *out, size_t len, const char *name);
/* An H100-like device of this uuid, name and compute capability. */
void tdb_device(at_device_info *i, const char *uuid, const char *name, int major, int minor);
/* A plain problem of n sizes a, b, c. */
tpl_problem tdb_problem(int n, long long a, long long b, long long c);
/* A result row of these keys, status and time (min and max 10% around it, 7 runs). */
void tdb_result(db_result *r, const char *uuid, const char *kernel, const char *hash,
                tpl_problem p, const char *config, const char *status, double time_ms,
                int deterministic);
/* Stores an ok, deterministic result (tdb_result) of fam at p with config and time_ms on the
 * device of this uuid, with fam's source hash: a measurement the lookup ranks families by. */
at_status tdb_store_measured(db *d, const char *uuid, const tpl_family *fam, const tpl_problem *p,
                             const char *config, double time_ms);
/* Opens a fresh database with one sm_90 device "GPU-A" (path filled); NULL after a failure. */
db *tdb_fresh(char *path, size_t len);
/* malloc'd contents of a file (NULL if unreadable), its size in *size. */
unsigned char *tdb_slurp(const char *path, size_t *size);
/* 1 if path exists. */
int tdb_exists(const char *path);

#endif
