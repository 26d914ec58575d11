/* tune_core.h: what the tuner's steps share: the run context, one problem's
 * search state, and the steps (prepare, plan, pipeline, record) tune.c runs. */
#ifndef TUNE_CORE_H
#define TUNE_CORE_H

/* Below this many valid configurations the automatic choice is exhaustive. */
#define TN_EXHAUSTIVE_MAX 300

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

/* ^C count (the second one kills the worker's group) and the worker's pid
 * for the signal handler (tuner/tune.c). */
extern volatile sig_atomic_t tn_interrupts;
extern volatile pid_t tn_worker_pid;

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

typedef struct tn_ctx {
    const tn_options *opt;
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
    long long skipped;               /* problems skipped */
    int jobs;                        /* compile threads */
    double guided_unit_s;            /* default budget per tunable parameter */
    tn_spec spec[TN_SPEC_MAX];
    long long spec_submitted, spec_used;
    const tpl_family *vs_fam;        /* cached valid set (problem-free) */
    long long *vs_idx;
    long long vs_n;
    int fatal;                       /* the run cannot go on */
    char fatal_msg[2048];
    int skip;                        /* the current problem cannot go on */
    char skip_msg[2048];
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
} tn_item;

typedef struct tn_stats {
    long long valid, evaluated, previously, failures, compiled, reused;
    double seconds;
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
} tn_prob;

/* ---- prepare (tuner/prepare.c): the worker, the inputs, stored results,
 * device facts ---- */

/* Starts the worker and opens the device; fills c->dev. A worker that
 * dies (or does not answer) while starting is started once more. Errors,
 * message in err: AT_ERR_CRASHED (it died twice), the worker's status when
 * it refused (no driver or device), AT_ERR_IO (no process). */
at_status tn_worker_up(tn_ctx *c, char *err, size_t errlen);
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
/* Times the vendor libraries (cuBLAS, CUB) on pr's problem in the worker,
 * on the inputs the configurations ran on, stores each as a measurement
 * (kind vendor: "cublas", "cub"; an absent library or a failed call with
 * time 0 and why) and prints it against the best. Nothing fails the run:
 * a worker that dies is restarted by the next problem. */
void tn_measure_vendor(tn_ctx *c, tn_prob *pr);
/* Makes fam/p the current problem (not skipped) and reads its stored
 * results (pr->old, the count before this run, the best so far). Never
 * fails: an unreadable database means nothing stored. */
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
 * ends it, recording each result. 0 normally, -1 if it failed (out of
 * memory, the problem skipped: c->skip, the run fatal: c->fatal). */
int tn_pipeline_run(tn_ctx *c, tn_prob *pr);
/* End of the run: drop queued speculative compiles, keep finished ones. */
void tn_spec_finish(tn_ctx *c);

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

#endif
