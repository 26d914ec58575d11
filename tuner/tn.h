/* tn.h: the tuner's internal interfaces: worker protocol, worker process
 * control, compile pool, progress line, the tuning driver and the CLI. */
#ifndef TN_H
#define TN_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include "autotune.h"
#include "cudrv.h"
#include "measure.h"
#include "tpl.h"
#include "db.h"

#define TN_VERSION "0.1.0"
/* Most GPUs one run tunes (--device all, --device 0,1,...). */
#define TN_MAX_DEVICES 16

/* ---- small helpers (tuner/util.c) ---- */
typedef struct tn_rng { unsigned long long s; } tn_rng;
void tn_rng_seed(tn_rng *r, unsigned long long seed);
unsigned long long tn_rng_next(tn_rng *r);
/* Uniform in [0, n); n > 0. */
unsigned long long tn_rng_below(tn_rng *r, unsigned long long n);
/* Uniform in [0, 1). */
double tn_rng_unit(tn_rng *r);
/* Monotonic seconds. */
double tn_now(void);
/* A condition variable whose timed waits take tn_now()'s clock, and the
 * absolute time of such a wait for tn_now() moment t. */
void tn_cond_init_monotonic(pthread_cond_t *cv);
struct timespec tn_abstime(double t);
/* Parses "4096x4096x4096" / "1048576" / "4096x4096x4096:bf16" into p
 * (tpl_problem_parse); 0 on success, -1 if bad. */
int tn_parse_size(const char *text, tpl_problem *p);
/* "4096x4096x4096", with the kind's suffixes (tpl_problem_format) */
void tn_format_size(const tpl_problem *p, char *out, size_t len);
/* The database a command works on: the --db path given, else the default
 * location (db_default_path: $AUTOTUNE_DB, then XDG). */
void tn_db_path(const char *given, char *out, size_t len);
/* Budget: "60" / "60s" -> seconds, "200e" / "200evals" -> evaluations.
 * 0 on success, -1 if bad. */
int tn_parse_budget(const char *text, double *seconds, long long *evals);

/* ---- worker protocol (tuner/proto.c) ----
 * Every message is a 4-byte little-endian length, then that many bytes:
 * a 4-byte type and the fields of tn_msg in a fixed order (integers
 * little-endian, doubles as IEEE bits, strings and the blob length-prefixed). */
typedef enum tn_msg_type {
    TN_MSG_OPEN = 1,        /* parent -> worker: device ordinal */
    TN_MSG_HELLO = 2,       /* worker -> parent: status, device info,
                               value: the number of GPUs it sees (0 unknown) */
    TN_MSG_PREPARE = 3,     /* parent -> worker: family, problem, seed */
    TN_MSG_EVAL = 4,        /* parent -> worker: family, cfg, cubin, options */
    TN_MSG_CEILING = 5,     /* parent -> worker: measure copy bandwidth */
    TN_MSG_REPLY = 6,       /* worker -> parent: status, numbers, text */
    TN_MSG_QUIT = 7,        /* parent -> worker: exit */
    TN_MSG_VENDOR = 8,      /* parent -> worker: time the vendor libraries on the
                               prepared problem (reply: lines in the blob) */
    TN_MSG_SUSTAIN = 9      /* parent -> worker: as EVAL, for a configuration
                               verified before: timed only, not verified
                               (the sustained re-timing, tuner/retime.c) */
} tn_msg_type;

#define TN_MSG_MAX (256u << 20)      /* largest message accepted */

typedef struct tn_msg {
    int type;
    int status;                      /* at_status of a reply / hello */
    int device;                      /* OPEN */
    char family[32];
    tpl_problem problem;
    unsigned long long seed;
    int n_cfg;
    int cfg[TPL_MAX_PARAMS];
    ms_options opt;
    at_device_info dev;              /* HELLO */
    double rel_error;                /* REPLY of EVAL */
    ms_timing timing;
    int verified;                    /* 1 if the reply's rel_error is set */
    int fatal;                       /* 1: the worker exits after this reply
                                        (CUDA context poisoned) */
    double value;                    /* REPLY of CEILING: GB/s */
    double value2;                   /* REPLY of CEILING: ms per copy */
    char text[2048];                 /* error message */
    const void *blob;                /* EVAL: cubin (not owned when sending) */
    size_t blob_size;
    void *blob_owned;                /* set by tn_msg_decode; tn_msg_free */
} tn_msg;

/* Serializes m into a malloc'd buffer (length prefix included).
 * AT_ERR_NO_MEMORY if out of memory. */
at_status tn_msg_encode(const tn_msg *m, unsigned char **buf, size_t *len);
/* Parses a body (after the length prefix) into m; the blob is copied.
 * AT_ERR_INVALID_ARG if malformed. */
at_status tn_msg_decode(const unsigned char *body, size_t len, tn_msg *m);
void tn_msg_free(tn_msg *m);
/* An empty REPLY with status (rel_error -1: not verified). */
void tn_msg_reply_init(tn_msg *r, int status);
/* Writes m to fd (retrying on EINTR). AT_ERR_IO on failure. */
at_status tn_msg_send(int fd, const tn_msg *m);
/* Reads one message, waiting at most timeout_s (< 0: forever). Returns
 * AT_OK, AT_ERR_TIMEOUT, AT_ERR_IO on EOF/error (message in err). A signal
 * interrupting the wait does not end it. */
at_status tn_msg_recv(int fd, tn_msg *m, double timeout_s, char *err, size_t errlen);

/* ---- the worker processes (tuner/worker.c, tuner/fake_worker.c) ---- */
/* Serves the protocol on fds in_fd/out_fd until QUIT or EOF with a real
 * GPU (measure.h). Returns the process exit status. */
int tn_worker_main(int in_fd, int out_fd);
/* The same with a fake device for tests ($AUTOTUNE_FAKE, see
 * tuner/fake_worker.c), which can die at chosen moments of every phase. */
int tn_fake_worker_main(int in_fd, int out_fd);
/* Fake time in ms of a configuration string (exposed for tests; it reads
 * $AUTOTUNE_FAKE for "close"). */
double tn_fake_time(const char *config);

/* ---- worker control in the parent (tuner/proc.c) ---- */
typedef struct tn_proc {
    pid_t pid;
    int to_fd, from_fd;
    char command[1024];              /* what was run, for messages */
} tn_proc;
/* Starts the worker: $AUTOTUNE_WORKER through /bin/sh, else this program
 * (/proc/self/exe) with "__worker". Protocol on the child's fds 3 (in) and
 * 4 (out); the child gets its own process group and dies with the parent
 * (with the thread that called this: start none on a short-lived thread).
 * AT_ERR_IO with a message on failure. */
at_status tn_proc_start(tn_proc *p, char *err, size_t errlen);
/* Kills (SIGKILL, whole group) and reaps; describes how it ended in how
 * ("killed by signal 11 (Segmentation fault)", "exit status 3"). */
void tn_proc_kill(tn_proc *p, char *how, size_t howlen);
/* 1 while the worker has not ended (it is not reaped: tn_proc_kill then
 * says how it ended); 0 once it has, or if it was never started. */
int tn_proc_alive(const tn_proc *p);
/* Closes the pipes and waits up to 1 s for a clean exit, then kills. */
void tn_proc_stop(tn_proc *p);

/* ---- compile pool (tuner/compile_pool.c) ---- */
typedef struct tn_pool tn_pool;
typedef struct tn_job {
    /* in */
    const tpl_family *fam;
    int cfg[TPL_MAX_PARAMS];
    char arch[16];
    /* out, valid once done */
    at_status status;
    void *cubin;
    size_t cubin_size;
    char *log;
    double compile_ms;
    int done;
} tn_job;
/* Starts n_threads (>= 1) compile threads. NULL if out of memory/threads. */
tn_pool *tn_pool_create(int n_threads);
/* Queues a job (the pool does not own it; keep it alive until done). */
void tn_pool_submit(tn_pool *pool, tn_job *job);
/* The same, ahead of every normal job (FIFO among urgent ones). */
void tn_pool_submit_urgent(tn_pool *pool, tn_job *job);
/* The same, behind every other job, on at most tn_pool_idle_cap threads at
 * once (compiles needed later, made while the CPU is idle). */
void tn_pool_submit_idle(tn_pool *pool, tn_job *job);
/* How many idle-time jobs run at once on n_threads: all but a quarter (at
 * least one kept free for urgent compiles); 1 on one thread. */
int tn_pool_idle_cap(int n_threads);
/* 1 if the job is done (never blocks). */
int tn_pool_poll(tn_pool *pool, tn_job *job);
/* Removes a job not started yet: 1 if removed (it stays done == 0),
 * 0 if it already started or finished. */
int tn_pool_cancel(tn_pool *pool, tn_job *job);
/* Moves a job that has not started to the urgent queue. */
void tn_pool_promote(tn_pool *pool, tn_job *job);
/* Blocks until job->done. */
void tn_pool_wait(tn_pool *pool, tn_job *job);
/* Blocks until job->done or the moment deadline (tn_now()'s clock) has
 * passed: 1 if the job is done, 0 if the deadline came first (the job goes
 * on: wait again, or let it go with tn_pool_detach). */
int tn_pool_wait_until(tn_pool *pool, tn_job *job, double deadline);
/* Lets go of a job without waiting for it: a queued one is cancelled (1),
 * a running one finishes into a copy that tn_pool_take_detached hands out
 * (2); either way job is never written again and may be freed at once. 0
 * if it was done already (its results are in job, the caller's). */
int tn_pool_detach(tn_pool *pool, tn_job *job);
/* A detached job that finished (malloc'd, with its cubin and log: the
 * caller frees all three), or NULL if none. */
tn_job *tn_pool_take_detached(tn_pool *pool);
/* Blocks until every detached job has finished (then each waits for
 * tn_pool_take_detached). NULL is a no-op. */
void tn_pool_wait_detached(tn_pool *pool);
/* Drops queued jobs not yet started (they stay done == 0), waits for the
 * running ones, joins the threads, frees the pool. NULL is a no-op. */
void tn_pool_destroy(tn_pool *pool);
/* Idle-time jobs queued or running. */
int tn_pool_idle_pending(tn_pool *pool);
/* The queue a free compile thread serves, given which queues hold jobs and
 * the idle-time jobs running (idle_running of at most idle_max): 1 urgent,
 * else 0 normal, else -1 idle-time; 2: none, the thread waits. */
int tn_pool_pick(int urgent, int normal, int idle, int idle_running, int idle_max);
/* Default thread count: the CPUs this process may run on (its affinity:
 * a container's or taskset's limit), at most the online ones. */
int tn_cpu_count(void);
/* The same from the counts: online CPUs, and allowed by the affinity mask
 * (<= 0: unknown); 1..256. */
int tn_cpu_count_of(long online, int allowed);

/* ---- progress line (tuner/progress.c) ---- */
typedef struct tn_progress {
    int tty;
    int n_gpus;                      /* > 1: a split search, counts per GPU */
    int gpu[TN_MAX_DEVICES];         /* their ordinals */
    long long by_gpu[TN_MAX_DEVICES];/* evaluated by each in this run */
    const tpl_family *fam;
    char size[64];
    long long done, total, failures;
    long long base;                  /* done before this run (resumed) */
    double best_ms, best_metric;     /* best_ms <= 0: none */
    double start;
    double last_draw;
    double budget_s;                 /* > 0: the search stops by then */
} tn_progress;
void tn_progress_begin(tn_progress *pg, const tpl_family *fam,
                       const tpl_problem *p, long long total);
void tn_progress_update(tn_progress *pg, int force);
/* Clears the line; the caller then prints its summary. */
void tn_progress_end(tn_progress *pg);

/* ---- tuning driver (tuner/tune.c; its steps: tuner/tune_core.h) ---- */
/* A problem a run tunes before the defaults, each on its own: one the
 * runtime recorded (heaviest first) or a line of --problems. */
typedef struct tn_first {
    const tpl_family *fam;
    tpl_problem problem;
} tn_first;

typedef struct tn_options {
    int device;                      /* one GPU (n_devices 0) */
    int devices[TN_MAX_DEVICES];     /* --device 0,1,...: the list */
    int n_devices;                   /* 0: just `device` */
    int all_devices;                 /* --device all */
    const tpl_family *families[32];  /* NULL-terminated; empty: all visible */
    int n_families;
    int have_size;
    tpl_problem size;
    const char *strategy;            /* NULL: automatic */
    double budget_s;                 /* 0: none / default */
    long long budget_evals;          /* 0: none / default */
    double timeout_s;                /* 0: derived */
    int jobs;                        /* 0: CPU count */
    const char *db_path;             /* NULL: default */
    unsigned long long seed;
    int quiet;                       /* no progress line even on a TTY */
    int keep_all_cubins;             /* no gc at the end of a run */
    char command[1024];              /* the command line, for the session */
    const tn_first *items;            /* tuned first, in this order, no second looks */
    int n_items;
    int items_only;                  /* --recorded, --problems: no default problems */
} tn_options;

/* Runs the tuner on one GPU or several (--device all or a list): one
 * worker per GPU, GPUs of one model splitting each problem's search; prints
 * to stdout/stderr (this is the command, not the library). Returns the exit
 * status: 0, 1 (a problem failed, a listed GPU is absent), 130
 * (interrupted). */
int tn_tune(const tn_options *opt);
/* Parses --device's value: "N", "all" or "N,M,..." (distinct ordinals) into
 * o. 0, or -1 with the reason in err. */
int tn_parse_devices(const char *text, tn_options *o, char *err, size_t errlen);

/* ---- search space (tuner/plan.c) ---- */
/* Valid configurations of fam for problem p on dev (dev NULL: generic):
 * malloc'd sorted raw indices. -1 count if out of memory. */
long long tn_valid_space(const tpl_family *fam, const at_device_info *dev,
                         const tpl_problem *p, long long **indices);
/* How many of the configurations valid[0..n_valid) (raw indices) serve p, counting
 * stopped once past cap; with out (room for min(n_valid, cap + 1) rows), their
 * parameter values, in order. */
long long tn_serving_configs(const tpl_family *fam, const long long *valid, long long n_valid,
                             const tpl_problem *p, long long cap, int (*out)[TPL_MAX_PARAMS]);

/* ---- database size and gc (tuner/gc.c) ---- */
/* Checkpoints the WAL, then prints one line: the database's size (file +
 * WAL) and its cubins; unless gc_applied (the gc rules just ran), the hint
 * that `autotune gc` reclaims the cubins no lookup serves. */
void tn_print_db_size(db *d, int gc_applied);
/* The gc rules at the end of a tuning run that completed: keeps the cubins
 * every lookup can serve, deletes the others (never a result), VACUUMs;
 * prints one line of what it reclaimed. A failure deletes nothing and
 * says so; so does another run still open on the database (db_open_sessions:
 * its cubins may be waiting for their results). 1 if the rules were applied. */
int tn_gc_after_run(db *d);
/* `autotune gc`: keeps the cubins every lookup can serve and those of the
 * keep_recent newest results and cubins, deletes the others (never a
 * result), VACUUMs, prints sizes before and after; dry_run only counts.
 * db_path NULL: the default. Returns the exit status (1: read-only or a
 * failure, with a message). */
int tn_gc(const char *db_path, long long keep_recent, int dry_run);

/* ---- results that travel (tuner/travel.c) ---- */
/* `autotune export`, `autotune import`, `autotune merge` (argv as tn_main
 * got it); each returns the exit status (2 usage, 1 failure). */
int tn_export(int argc, char **argv);
int tn_import(int argc, char **argv);
int tn_merge(int argc, char **argv);
/* The cubins a merged database's lookups serve (db_servable_needs): compiled
 * here, each input's cubin under the same key counted verified (the same
 * bytes) or not (never copied), this build's stored; prints the counts
 * (cubins_read: the inputs' cubins; n_inputs may be 0). 0, or 1 after a
 * message (tuner/travel.c). */
int tn_merge_cubins(db *out, char **inputs, int n_inputs, long long cubins_read);

/* `autotune ship-build FILE.json -o OUT.db`: a read-only database (mode
 * 0444, no WAL) made from a configurations-only export (`autotune export
 * --configs-only --shipped`), the best configurations per problem that the
 * family's valid() accepts compiled here with NVRTC (no GPU). Exit status. */
int tn_ship_build(int argc, char **argv);

/* ---- problems tuned before the defaults (tuner/wanted.c) ---- */
/* The recorded problems of the database (db_path NULL: the default) that
 * wait for tuning (db_wanted: not tuned on a device of the model that
 * recorded them), heaviest first, each once, as items of their families
 * (a kernel or kind this build lacks is skipped): malloc'd in *items.
 * 0 (a missing database has none), or 1 after a message. */
int tn_recorded_items(const char *db_path, tn_first **items, int *n);
/* The problems of a file (--problems): one per line as --size takes it
 * ("4096x4096x4096:bf16:TN"), optionally after a kernel name ("tcgemm
 * 4096x4096x4096:bf16"); blank lines and text after '#' ignored. A line
 * becomes an item of every selected family that computes it (of the named
 * one only). 0, 2 for a bad line (message with file:line), 1 otherwise. */
int tn_problem_file_items(const char *file, const tn_options *o, tn_first **items, int *n);
/* `autotune show --wanted`: the recorded problems waiting for tuning
 * (with_done: all of them), heaviest first. Exit status. */
int tn_show_wanted(const char *db_path, int with_done);

/* ---- command line (tuner/cli.c) ---- */
int tn_main(int argc, char **argv);

/* ---- side measurements in a reply's blob (tuner/side.c) ---- */
typedef struct tn_side {
    char name[32];                   /* "cublas", "cub", "read_bandwidth", ... */
    int status;                      /* at_status of the measurement */
    double time_ms, min_ms, max_ms;
    int runs;
    double rel_error;                /* -1 if not verified */
    double gflops, gbs;
    char note[256];
} tn_side;
typedef struct tn_side_buf {
    char *p;
    size_t len, cap;
    int oom;                         /* set when out of memory (lines dropped) */
} tn_side_buf;
/* Appends s as one line (tabs and newlines in the note become spaces);
 * on allocation failure sets b->oom and appends nothing. */
void tn_side_put(tn_side_buf *b, const tn_side *s);
/* The lines of a blob into out (at most max); returns how many parsed
 * (malformed lines are skipped). */
int tn_side_parse(const void *blob, size_t size, tn_side *out, int max);

#endif
