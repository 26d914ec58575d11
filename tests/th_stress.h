/* th_stress.h: helpers of the concurrency stress tests (tests/th_stress.c). */
#ifndef TH_STRESS_H
#define TH_STRESS_H

#include <stddef.h>
#include <sys/types.h>
#include "db.h"

#define ST_THREADS 8
#define ST_TUNER_DEADLINE_S 240.0

/* splitmix64: every thread draws from its own stream; st_unit a draw in [0, 1). */
unsigned long long st_next(unsigned long long *s);
double st_unit(unsigned long long *s);

/* Uniform integer in [lo, hi]. */
long long st_range(unsigned long long *s, long long lo, long long hi);

/* $AUTOTUNE_STRESS_SEED repeats a run; otherwise from the clock (printed). */
unsigned long long st_seed(void);
/* Seconds on the monotonic clock; a sleep of ms milliseconds. */
double st_now(void);
void st_sleep_ms(double ms);

/* Starts `command` under /bin/sh in its own process group, stdout and
 * stderr into `log`; returns its pid, -1 if fork failed. */
pid_t st_spawn(const char *command, const char *log);

/* Waits up to `seconds` for pid: its exit status (128 + signal when
 * killed), or -1 after killing its process group at the deadline. */
int st_wait(pid_t pid, double seconds);

/* malloc'd text of a file ("" if unreadable; NULL only without memory). */
char *st_slurp(const char *path);

/* Sum of N over the tuner's "done: N results stored" lines (*runs: how
 * many such lines). */
long long st_done_total(const char *log, int *runs);

/* N of the tuner's "FAMILY SIZE: N evaluated" line; -1 if absent. */
long long st_evaluated(const char *log, const char *family, const char *size);

/* Rows of a raw SQL query outside db/ (first column's text of the first
 * row into first); -1 if the query cannot run. */
long long st_sql_rows(const char *path, const char *sql, char *first, size_t len);

/* Checks every tuning session except `skip`: outcome "complete" and as many
 * result rows carrying its id as its end facts say it stored. Returns the
 * sessions' total, or -1 with the reason in why. */
long long st_sessions_stored(const char *path, long long skip, char *why, size_t len);

/* Every result row (malloc'd into *rows); -1 with the reason in why. */
int st_all_results(const char *path, db_result **rows, char *why, size_t len);

/* Rows of `kernel` at exactly problem p. */
int st_rows_at(const db_result *r, int n, const char *kernel, const tpl_problem *p);

/* The whole database after a run: integrity and foreign keys, no damaged
 * cubin, the rows seeded before unchanged, every tuning session's rows
 * present, and nothing else: seeded + tuner_stored rows in all, and the
 * runtime's trial results (a handle that timed nearby winners for a shape
 * stores the fastest: ok, no session, rel_error -1, its cubin's key). */
void st_verify_db(const char *path, const db_result *seeded, int n_seeded,
                         long long seed_session, long long tuner_stored);

#endif
