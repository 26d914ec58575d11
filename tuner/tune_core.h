/* tune_core.h: what the tuner's steps share: the run context, one problem's
 * search state, and the steps (prepare, plan, pipeline, record) tune.c runs. */
#ifndef TUNE_CORE_H
#define TUNE_CORE_H

/* Below this many valid configurations the automatic choice is exhaustive. */
#define TN_EXHAUSTIVE_MAX 300

#include <pthread.h>
#include <signal.h>
#include "strategy.h"
#include "tn.h"

/* Watchdogs (seconds) for the steps that are not evaluations. */
#define TN_HELLO_TIMEOUT 120.0
#define TN_PREPARE_TIMEOUT 300.0
#define TN_CEILING_TIMEOUT 60.0
#define TN_VENDOR_TIMEOUT 120.0
/* Warm start: the fastest stored configuration of up to this many other
 * sizes of the family (nearest first) is evaluated before the search. */
#define TN_TRANSFER_MAX 6
#define TN_SPEC_MAX 64

/* ^C count (the second one kills the workers' groups) and each GPU's
 * worker pid (by tn_ctx.slot) for the signal handler (tuner/tune.c). */
extern volatile sig_atomic_t tn_interrupts;
extern volatile pid_t tn_worker_pids[TN_MAX_DEVICES];

/* ---- the run context ---- */

typedef struct tn_best {
    int have;
    double median, min, max, metric;
    char config[TPL_CONFIG_LEN];
} tn_best;

/* A speculative compile: a configuration the strategy hints it may propose
 * soon, compiled while the pool has idle threads; its cubin goes to the
 * database, or straight to the item that proposes it. */
typedef struct tn_spec {
    tn_job job;
    char key[40];
    char config[TPL_CONFIG_LEN];
    int active;                      /* submitted, not yet harvested */
    int attached;                    /* an item waits for it */
} tn_spec;

/* Compiles of later problems' configurations at idle priority
 * (tuner/prefetch.c): a growing array, submitted once filled. */
typedef struct tn_prefetch {
    tn_spec *item;
    int n, cap;
} tn_prefetch;

struct tn_group;                     /* GPUs of one model (tuner/tune.c) */
struct tn_run_list;                  /* the run's looks (tuner/policy.c) */
struct tn_window;                    /* a search's window (tuner/pipeline.c) */

/* One GPU's tuning context. With several GPUs (tune.c) each has its
 * own thread, worker and session; the database, the compile pool and the
 * run lock are shared, and the tuner's code runs only under that lock:
 * it is let go only while a thread waits for its worker or a compile. */
/* Binary keys of the speculative compiles a group made in this run, each with
 * whether an item has used its cubin (tn_spec_note_made, tn_spec_note_used). */
typedef struct tn_keys {
    struct { char key[40]; int used; } *item;
    int n, cap;
} tn_keys;

typedef struct tn_ctx {
    const tn_options *opt;
    int device;                      /* the CUDA ordinal it tunes */
    int slot;                        /* index into tn_worker_pids */
    int device_count;                /* GPUs the worker sees, 0 unknown */
    pthread_mutex_t *lock;           /* the run lock, NULL: one thread */
    pthread_cond_t *wake;            /* its group's condition, NULL: none */
    struct tn_group *group;          /* NULL: this GPU alone */
    int member;                      /* index in its group (0 alone) */
    int left_group;                  /* no longer counted among its group's */
    int n_peers;                     /* GPUs of its group (0: alone) */
    const char *peer_uuid[TN_MAX_DEVICES];   /* their UUIDs, member order */
    int peer_ordinal[TN_MAX_DEVICES];
    char tag[64];                    /* "GPU 0,1: " before its lines, or "" */
    db *d;
    tn_pool *pool;
    tn_proc worker;
    int worker_up;                   /* opened and alive */
    int prepared;                    /* current problem prepared in it */
    at_device_info dev;
    char arch[16];
    long long session_id;
    unsigned long long seed;
    const tpl_family *fam;           /* current problem */
    tpl_problem problem;
    long long stored;                /* results stored by this run */
    long long respawns;              /* worker starts after the first */
    long long retries;               /* steps retried after the worker died */
    long long searched;              /* searched and extra items evaluated by this GPU */
    double eval_s;                   /* ... seconds in their worker round trips */
    double await_s;                  /* ... seconds waiting for their compiles */
    long long skipped;               /* problems skipped */
    long long problems_failed;       /* problems that failed here (multi) */
    int jobs;                        /* compile threads */
    double guided_unit_s;            /* default budget per tunable parameter */
    tn_prefetch *pre;                /* its (group's) prefetches, NULL none */
    tn_spec *spec;                   /* spec_own, or the group's table */
    tn_spec spec_own[TN_SPEC_MAX];
    tn_keys *spec_made;              /* the group's speculative compiles' keys */
    long long spec_submitted;        /* speculative compiles made */
    long long spec_used;             /* ... an item took while it was compiling */
    long long spec_used_later;       /* ... an item found stored (made this run) */
    long long spec_dropped;          /* ... cancelled unstarted: another family's */
    int fatal;                       /* the run cannot go on */
    char fatal_msg[2048];
    int skip;                        /* the current problem cannot go on */
    char skip_msg[2048];
    int second_look;                 /* problems planned now get a second
                                        look (tn_second_looks) */
    const struct tn_run_list *list;  /* the run's looks (policy.c) */
} tn_ctx;

/* ---- one problem ---- */

/* One configuration on its way through the pipeline. */
typedef struct tn_item {
    tn_job job;
    long long index;                 /* raw lattice index, -1 off-lattice */
    int extra;                       /* default or baseline */
    char config[TPL_CONFIG_LEN];
    char key[40];
    void *cubin;                     /* from the database, or the job's */
    size_t cubin_size;
    int from_db;
    int submitted;                   /* its own compile job is in the pool */
    int spec;                        /* 1 + slot of the speculative compile
                                        it waits for, 0 none */
    int twin;                        /* an item ahead compiles the same
                                        NVRTC input: take its stored cubin */
    int compiling;                   /* its compile (own or speculative) is
                                        not awaited yet */
    int stored;                      /* its own compile's cubin is stored */
    int pre;                         /* 1 + index of the running prefetch of
                                        its key it waits for (c->pre), 0 none */
} tn_item;

typedef struct tn_stats {
    long long valid, evaluated, previously, failures, compiled, reused;
    double seconds;
    double eval_s, await_s;          /* worker round trips; waits for compiles (summed over GPUs) */
    long long ahead;                 /* evaluated ahead of an older item whose compile ran */
    long long ready_hints;           /* hints proposed because their cubin was there */
    long long by_gpu[TN_MAX_DEVICES];/* evaluated by each GPU of a group */
} tn_stats;

/* One problem being tuned: filled by prepare and plan, run by the
 * pipeline, summarized by record. */
typedef struct tn_prob {
    const tpl_family *fam;
    const tpl_problem *p;
    char size[64];                   /* "4096x4096x4096" */
    const char *hash;                /* the family's source hash */
    double t_start;
    db_result *old;                  /* stored rows of fam on this device */
    int n_old;
    long long *valid;                /* the space: valid, applicable */
    tn_space space;
    const tn_strategy *strat;
    void *st;
    double budget_s;                 /* 0: none */
    long long budget_evals;          /* 0: none */
    tn_item *extras;                 /* default, baselines, warm start */
    int n_extra, n_transferred;
    tn_best best;
    tn_stats stats;
    tn_progress pg;
    long long evals_this_run;
    int second_look;                 /* only the winners of other sizes not
                                        measured here yet, no search */
    int last_look;                   /* no later look at it in this run */
    double best_before_ms;           /* its best before (0: none) */
    /* several GPUs of one model split this search (tune.c): the
     * peers and tag of the context that planned it */
    int n_peers;                     /* GPUs sharing it (0 or 1: alone) */
    const char *peer_uuid[TN_MAX_DEVICES];
    int peer_ordinal[TN_MAX_DEVICES];
    char tag[64];
    struct tn_window *win;           /* the shared window, NULL: alone */
} tn_prob;

/* The run lock let go around a wait (no-ops with one thread), and its
 * group's waiters woken after a change they may wait for. */
static inline void tn_unlock(tn_ctx *c) { if (c->lock) pthread_mutex_unlock(c->lock); }
static inline void tn_relock(tn_ctx *c) { if (c->lock) pthread_mutex_lock(c->lock); }
static inline void tn_wake(tn_ctx *c) { if (c->wake) pthread_cond_broadcast(c->wake); }

/* ---- prepare (tuner/prepare.c): the worker, the inputs, stored results,
 * device facts ---- */

/* Starts the worker and opens the device; fills c->dev. A worker that
 * dies (or does not answer) while starting is started once more. Errors,
 * message in err: AT_ERR_CRASHED (it died twice), the worker's status when
 * it refused (no driver or device), AT_ERR_IO (no process). */
at_status tn_worker_up(tn_ctx *c, char *err, size_t errlen);
/* The worker round trip, the one place a request goes to c's worker and
 * its answer comes back: sends m and waits up to timeout_s for the reply
 * in r, the run lock let go meanwhile. AT_OK (r to be freed), else the
 * worker is taken down (how it ended in how) and the result is
 * AT_ERR_TIMEOUT (no answer in time) or AT_ERR_IO (it died or the pipe
 * failed; why in err). */
at_status tn_worker_call(tn_ctx *c, const tn_msg *m, double timeout_s, tn_msg *r, char *err,
                         size_t errlen, char *how, size_t howlen);
/* Kills the worker; how it ended in how. */
void tn_worker_down(tn_ctx *c, char *how, size_t howlen);
typedef enum tn_ready {
    TN_READY,                        /* up, the current problem prepared */
    TN_NO_WORKER,                    /* it cannot start: the run ends */
    TN_NO_INPUTS                     /* preparing failed, or killed the
                                        worker twice: skip the problem */
} tn_ready;
/* Makes sure a worker is up (one that died while idle is replaced) with
 * the current problem prepared; a preparation that kills the worker is
 * tried once more. Why not in err. */
tn_ready tn_worker_ready(tn_ctx *c, char *err, size_t errlen);
/* JSON string body of s (quotes, backslashes, control characters escaped). */
void tn_json_escape(const char *s, char *out, size_t len);
/* "gpu_clocks_sm_mem_temp": ... from nvidia-smi, or why it is unavailable. */
void tn_gpu_facts(const char *uuid, char *out, size_t len);
/* Measures and stores the device's copy bandwidth; prints it. A worker
 * that dies is replaced and asked once more (then the run goes on without
 * the figure); one that cannot start makes the run fatal. */
void tn_measure_ceiling(tn_ctx *c);
/* The rows fetch returns for c's device, or for each GPU of its group, in
 * one malloc'd array (*rows NULL and *n 0 on failure). AT_OK, or the first
 * failure of fetch (nothing kept), or AT_ERR_NO_MEMORY. */
typedef at_status (*tn_rows_fetch)(tn_ctx *c, const char *uuid, const void *arg,
                                   db_result **rows, int *n);
at_status tn_group_rows(tn_ctx *c, tn_rows_fetch fetch, const void *arg, db_result **rows,
                        int *n);
/* Times the vendor libraries (cuBLAS, CUB) on pr's problem in the worker,
 * on the inputs the configurations ran on, stores each as a measurement
 * (kind vendor: "cublas", "cub"; an absent library or a failed call with
 * time 0 and why) and prints it against the best. Nothing fails the run:
 * a worker that dies is restarted by the next problem. */
void tn_measure_vendor(tn_ctx *c, tn_prob *pr);
/* Makes fam/p the current problem (not skipped) and reads its stored
 * results (pr->old, the count before this run, the best so far), on this
 * GPU or, in a group, on each GPU of it. Never fails: an unreadable
 * database means nothing stored. */
void tn_prepare_problem(tn_ctx *c, tn_prob *pr, const tpl_family *fam, const tpl_problem *p);

/* ---- plan (tuner/plan.c): the space, the strategy, the extras ---- */

/* Share of the default run time a family's problem gets. */
double tn_family_weight(const tpl_family *fam);
/* The space, the strategy and its budget, the stored results told to it,
 * the extras (default, baselines, warm start); prints the problem's header
 * line and starts the progress line. -1 (message printed) if out of memory. */
int tn_plan_problem(tn_ctx *c, tn_prob *pr);

/* ---- pipeline (tuner/pipeline.c): compile pool, speculation, the worker's
 * evaluation behind a watchdog ---- */

/* Runs the search of pr until the strategy, the budget or an interrupt
 * ends it, recording each result. With pr->win set (several GPUs) the
 * window is shared: each GPU takes the oldest configuration when its
 * worker is free, and waits while the others hold every slot. 0 normally,
 * -1 if it failed (out of memory, the problem skipped: c->skip, the run
 * fatal: c->fatal). */
int tn_pipeline_run(tn_ctx *c, tn_prob *pr);
/* Whether pr's time budget is spent: alone, when the time is up; on N GPUs, after 1/N of
 * it once the look has the evaluations one GPU would make in the whole time at the look's
 * mean worker round trip, else when the time is up. */
int tn_time_spent(const tn_prob *pr);
/* 1 if a search with this time budget (0: none) and strategy may evaluate its
 * window out of proposal order (the oldest item whose cubin is there first). */
int tn_may_reorder(double budget_s, const tn_strategy *strat);
/* The shared window of pr for n_gpus GPUs, in pr->win. -1 (message
 * printed) if out of memory. */
int tn_pipeline_open(tn_ctx *c, tn_prob *pr, int n_gpus);
/* Drops what is left in pr->win (running compiles kept) and frees it. */
void tn_pipeline_close(tn_ctx *c, tn_prob *pr);
/* How many more speculative compiles to start: the compile threads (jobs)
 * less the window's own compiles (busy), the speculative ones active and,
 * while prefetches of later problems are queued or running
 * (prefetch_pending), a quarter of the threads (at most that many, none
 * below 4 threads) left to them; never past TN_SPEC_MAX active. A guess
 * about the next proposals (a default run used 308 of 799) gives way to a
 * compile an exhaustive problem certainly needs. */
int tn_spec_room(int jobs, int busy, int spec_active, int prefetch_pending);
/* End of the run: drop queued speculative compiles, keep finished ones. */
void tn_spec_finish(tn_ctx *c);
/* Cancels the queued (unstarted) speculative compiles of families other than
 * fam: a new problem's compiles come first (counted in c->spec_dropped). */
void tn_spec_drop_other_families(tn_ctx *c, const tpl_family *fam);
/* Frees a group's record of speculative compiles. */
void tn_keys_free(tn_keys *k);

/* ---- prefetch (tuner/prefetch.c): compiles for later problems ---- */

/* Queues at idle priority the compile of every configuration of each of
 * the run's problems (c->list) that will be searched exhaustively (on c's device)
 * whose cubin is not stored: they are made while the CPU waits for the
 * GPU, and harvested into the database. Out of memory: fewer queued. */
void tn_prefetch_start(tn_ctx *c, tn_prefetch *pf);
/* Stores the cubins of finished prefetches (c->pre). */
void tn_prefetch_harvest(tn_ctx *c);
/* Stores the cubin of a finished speculative compile or prefetch (when it
 * compiled) and frees the job; the slot is free again. */
void tn_spec_store(tn_ctx *c, tn_spec *sp);
/* Before an item compiles key itself: a queued prefetch of it is dropped
 * (the item compiles it now: 0), a finished one stored (0); a running one is
 * not waited for here (the window goes on evaluating what is ready): its
 * slot, 1 + index, for tn_prefetch_await when the item's turn comes. */
int tn_prefetch_claim(tn_ctx *c, const char *key);
/* Waits (without the run lock) for the running prefetch of slot (from
 * tn_prefetch_claim) until deadline (tn_now()'s clock; 0: none) and stores
 * its cubin: 1 once it is done (its cubin stored unless it failed), 0 if the
 * deadline came first (the prefetch goes on; the harvest stores it). */
int tn_prefetch_await(tn_ctx *c, int slot, double deadline);
/* 1 if the prefetch of slot has finished (its cubin can be taken at once). */
int tn_prefetch_ready(tn_ctx *c, int slot);
/* End of the run: queued prefetches dropped, running ones stored; frees. */
void tn_prefetch_finish(tn_ctx *c, tn_prefetch *pf);

/* ---- record (tuner/record.c): results, binaries, the best, summaries ---- */

int tn_is_failure(const char *status);
/* The noise rule: 1 if a challenger (median, min, max) beats inc. */
int tn_beats(const tn_best *inc, double median, double min, double max);
void tn_best_take(tn_best *b, const db_result *r, double metric);
/* GFLOP/s or GB/s of fam on p at ms (0 if ms <= 0). */
double tn_metric_of(const tpl_family *fam, const tpl_problem *p, double ms);
/* A result row for item it of the current problem, not yet evaluated. */
void tn_result_init(tn_ctx *c, const tn_item *it, db_result *r);
/* Stores r; on failure the run becomes fatal. */
void tn_store(tn_ctx *c, db_result *r);
/* Stores a cubin (no-op when fatal or empty; a failure only loses a cache). */
void tn_store_binary(tn_ctx *c, const tpl_family *fam, const int *cfg, const char *key,
                     const char *config, const void *cubin, size_t size);
/* Stores the result of an item and accounts for it: the counts, the
 * strategy, the best, the progress line. */
void tn_record(tn_ctx *c, tn_prob *pr, const tn_item *it, db_result *r);
/* Prints the problem's summary (counts, time, best). */
void tn_problem_summary(const tn_prob *pr);

/* ---- retime (tuner/retime.c): the sustained re-timing after a search ---- */

/* Re-times pr's fastest few distinct configurations (by short time) under
 * sustained load in c's worker and stores their ranks (db_rank_ms), then
 * prints one line; only for a best time long enough to heat the GPU, once
 * the problem's last look of the run is done, and not again while the same
 * configurations lead. A failure (the worker, the database) is printed and
 * leaves the ranking to the short timings; an interrupt stores nothing. */
void tn_retime_problem(tn_ctx *c, tn_prob *pr);
/* How many configurations a re-timing takes at most: 4; in a family with a
 * settle (settled) 8 for a problem named with --size (have_size), 4 in a run
 * of many problems; $AUTOTUNE_RETIME_MAX (2..8) overrides. */
int tn_retime_width(int settled, int have_size);
/* The re-timing's decision on t (n configurations x rounds round medians,
 * row-major; row 0 the short-timing winner): each one's sustained time
 * (ms) into sustained[], the rounds it beat row 0 in into faster[], its
 * ranking key into key[] (the lowest wins, ties to the earlier row), and
 * the index of the winner. settled 0: the median of paired ratios to row 0,
 * and row 0 stays first unless a challenger beats it in all rounds, or in
 * all but one by a median lead of 2% (one that does not is keyed just
 * behind row 0). settled 1 (a family with a settle): the median of each
 * one's ratios to its round's geometric mean, and none is favoured. */
int tn_retime_decide(const double *t, int n, int rounds, int settled, double *sustained,
                     int *faster, double *key);

/* ---- the run's signals (tuner/signals.c) ---- */

/* Installs the run's signal handlers (the ^C count and the worker pids
 * cleared) / puts the old ones back. */
typedef struct tn_signals { struct sigaction old_int, old_term, old_pipe; } tn_signals;
void tn_signals_catch(tn_signals *s);
void tn_signals_restore(const tn_signals *s);

/* ---- the run's policy (tuner/policy.c) ---- */

/* 1 if the run tunes fam. */
int tn_family_selected(const tn_options *o, const tpl_family *fam);
/* The problem list: the problems of fam the run tunes, in *list; their
 * count. Every other part of the tuner takes its problems from here
 * (through tn_run_list_make). */
int tn_problems_of(const tn_options *o, const tpl_family *fam, const tpl_problem **list);
/* The second look: after the n problems of a family are searched, the
 * first ones (the return value: n - 1, or 0 for a single problem) are
 * planned again with c->second_look set, and measure only the winners of
 * the other sizes they have not measured (their cubins are stored: no
 * compile, no search). A problem searched first, while the compiles of the
 * family were cold, so ends with the later problems' winners tried too. */
int tn_second_looks(const tn_options *o, int n);
/* The run's looks in order: each family's problems, then their second
 * looks; every GPU of the run takes them in this order. */
typedef struct tn_look {
    const tpl_family *fam;
    const tpl_problem *p;
    int second_look;                 /* the extras only (tn_second_looks) */
    int last_look;                   /* no later look at p in this run */
} tn_look;
typedef struct tn_run_list {
    tn_look *look;
    int n, cap;
    int n_problems;                  /* distinct problems (first looks) */
} tn_run_list;
/* Fills l for the options; -1 when out of memory (l partly filled: free it). */
int tn_run_list_make(const tn_options *o, tn_run_list *l);
void tn_run_list_free(tn_run_list *l);
/* Prints what will be tuned; returns the guided searches' summed weights
 * (tn_family_weight; a problem searched exhaustively takes none). */
double tn_announce_problems(const tn_options *o, const tn_run_list *l);
/* The default run time the guided searches share (seconds). */
double tn_run_seconds(void);

#endif
