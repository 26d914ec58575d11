/* tune.c: the tuning driver, one for one GPU or several: each GPU has a
 * worker and a context; GPUs of one model form a group (one GPU alone is a
 * group of one) that takes the run's looks (policy.c) in order, each
 * prepared (prepare.c), planned (plan.c), searched through one shared window
 * (pipeline.c), summarized with the vendor baselines and re-timed (retime.c).
 *
 * Calls among the tuner's files form no cycle (`make layers` checks it with
 * tools/calls.c; docs/tuner.md draws the graph): cli.c calls tn_tune here,
 * and this file calls the steps, never the other way round. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune_core.h"

/* GPUs of one model (name, architecture, memory) in this run. They tune the
 * same looks in the same order, each planned once (by the first GPU to
 * reach it) and searched through one shared window: a GPU whose worker is
 * free takes the oldest configuration, so a slow or restarted one holds up
 * nobody. The last to finish a look summarizes it; the others wait. */
typedef struct tn_group {
    tn_ctx *member[TN_MAX_DEVICES];
    int n;                           /* GPUs */
    int n_live;                      /* GPUs still tuning (not fatal) */
    pthread_cond_t wake;             /* a slot freed, a cubin stored, a
                                        problem finished */
    long long started, finished;     /* sequence numbers of looks */
    int left;                        /* GPUs done with the current look */
    int plan_rc;                     /* 0: the current look is planned */
    tn_prob pr;
    tn_spec spec[TN_SPEC_MAX];
    tn_keys spec_made;               /* the keys of its speculative compiles */
    tn_prefetch pre;                 /* compiles for later problems */
    char tag[64];                    /* "GPU 0,1: ", "" for a run of one GPU */
} tn_group;

typedef struct tn_run {
    const tn_options *opt;
    tn_run_list list;                /* the looks (policy.c) */
    int several;                     /* several GPUs asked for (all or a list) */
    pthread_mutex_t lock;            /* the run lock (tune_core.h) */
    tn_ctx *ctx[TN_MAX_DEVICES];
    int n;
    tn_group group[TN_MAX_DEVICES];
    int n_groups;
    int failed;                      /* a problem failed or was skipped */
} tn_run;

int tn_parse_devices(const char *text, tn_options *o, char *err, size_t errlen)
{
    o->n_devices = 0;
    o->all_devices = 0;
    if (!text || !*text) {
        snprintf(err, errlen, "--device needs a device number, 'all' or a list such as 0,1");
        return -1;
    }
    if (strcmp(text, "all") == 0) {
        o->all_devices = 1;
        return 0;
    }
    const char *p = text;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long v = *p >= '0' && *p <= '9' ? strtol(p, &end, 10) : -1;
        if (v < 0 || errno || v > 1024 || (*end != ',' && *end != '\0')) {
            snprintf(err, errlen, "--device needs a device number, 'all' or a list such as "
                     "0,1, not '%.100s'", text);
            return -1;
        }
        for (int i = 0; i < o->n_devices; i++)
            if (o->devices[i] == (int)v) {
                snprintf(err, errlen, "--device lists GPU %ld twice in '%.100s'", v, text);
                return -1;
            }
        if (o->n_devices == TN_MAX_DEVICES) {
            snprintf(err, errlen, "--device lists more than %d GPUs", TN_MAX_DEVICES);
            return -1;
        }
        o->devices[o->n_devices++] = (int)v;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    o->device = o->devices[0];
    return 0;
}

/* ---- one look, searched by the GPUs of a group ---- */

/* Summarizes and frees the group's current look; wakes the waiters. Then
 * c, the GPU that finished it last, measures the vendor libraries on it
 * (not on a second look) and re-times its fastest configurations while the
 * others start the next look (c joins it after: the shared window does not
 * wait for it). */
static void finish_problem(tn_ctx *c, tn_group *g, long long seq)
{
    tn_prob *pr = &g->pr, later;
    int after = g->plan_rc == 0 && !c->fatal;
    if (g->plan_rc == 0) {
        tn_progress_end(&pr->pg);
        pr->stats.seconds = tn_now() - pr->t_start;
        tn_problem_summary(pr);
    }
    if (after) {                     /* what the vendor and re-timing read, past the reset */
        later = *pr;
        later.old = NULL;
        later.extras = NULL;
        later.st = NULL;
        later.valid = NULL;
        later.win = NULL;
    }
    tn_pipeline_close(c, pr);
    free(pr->old);
    free(pr->extras);
    if (pr->st)
        pr->strat->destroy(pr->st);
    free(pr->valid);
    memset(pr, 0, sizeof *pr);
    g->finished = seq;
    pthread_cond_broadcast(&g->wake);
    if (!after)
        return;
    if (!later.second_look)
        tn_measure_vendor(c, &later);
    tn_retime_problem(c, &later);
}

/* c's share of look number seq of its group: the first GPU to reach it
 * plans it; each searches until nothing is left; the last one summarizes
 * it, the others wait for that. 0, or -1 if the problem failed here
 * (skipped on this GPU, the GPU fatal, or not planned). Called and
 * returns with the run lock held. */
static int group_problem(tn_ctx *c, tn_group *g, long long seq, const tn_look *look)
{
    c->second_look = look->second_look;
    if (g->started < seq) {
        g->started = seq;
        g->left = 0;
        tn_prepare_problem(c, &g->pr, look->fam, look->p);
        g->pr.last_look = look->last_look;
        g->plan_rc = tn_plan_problem(c, &g->pr);
        if (g->plan_rc == 0)
            g->plan_rc = tn_pipeline_open(c, &g->pr, g->n_live);
    } else {
        c->fam = look->fam;
        c->problem = *look->p;
        c->prepared = 0;
        c->skip = 0;
        c->skip_msg[0] = '\0';
    }
    int rc = g->plan_rc == 0 ? tn_pipeline_run(c, &g->pr) : -1;
    if (c->skip) {
        if (g->n > 1)
            fprintf(stderr, "autotune: GPU %d: %s %s skipped on this GPU: %s; the other GPUs "
                    "go on\n", c->device, look->fam->name, g->pr.size, c->skip_msg);
        else
            fprintf(stderr, "autotune: %s%s %s skipped: %s; its %lld results stored are kept, "
                    "the other problems go on\n", c->tag, look->fam->name, g->pr.size,
                    c->skip_msg, g->pr.stats.previously + g->pr.stats.evaluated);
        fflush(stderr);
        c->skipped++;
    }
    if (c->fatal) {
        g->n_live--;                 /* it leaves the group for good */
        c->left_group = 1;
    } else {
        g->left++;
    }
    if (g->left >= g->n_live)
        finish_problem(c, g, seq);
    while (g->finished < seq)
        pthread_cond_wait(&g->wake, c->lock);
    c->second_look = 0;
    return rc;
}

/* One GPU's work: the ceiling, then every look of the run, in order, with
 * its group. A thread of its own with several GPUs. */
static void *gpu_thread(void *arg)
{
    tn_ctx *c = arg;
    tn_group *g = c->group;
    pthread_mutex_lock(c->lock);
    /* the device's ceilings first, each GPU on its own (the lock is let go
     * while its worker measures): one that is done starts the search */
    tn_measure_ceiling(c);
    /* every GPU of the group takes the same looks in the same order (the
     * sequence numbers): a problem skipped on one GPU is prepared there
     * again for its second look (and skipped again there if that fails:
     * the others go on) */
    for (int i = 0; i < c->list->n && !tn_interrupts && !c->fatal; i++)
        if (group_problem(c, g, i + 1, &c->list->look[i]) != 0 && !c->fatal)
            c->problems_failed++;
    if (!c->left_group) {            /* done, interrupted, or fatal before */
        g->n_live--;
        c->left_group = 1;
        /* a look others still search no longer waits for this GPU */
        if (g->started > g->finished && g->left >= g->n_live)
            finish_problem(c, g, g->started);
    }
    pthread_mutex_unlock(c->lock);
    return NULL;
}

/* ---- the run ---- */

/* A context for GPU ordinal as the run's slot-th. NULL if out of memory. */
static tn_ctx *new_ctx(tn_run *run, int slot, int ordinal, double guided_unit_s)
{
    tn_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    const tn_options *o = run->opt;
    c->opt = o;
    c->device = ordinal;
    c->slot = slot;
    c->lock = &run->lock;
    c->list = &run->list;
    c->worker.pid = -1;
    c->seed = o->seed;
    c->jobs = o->jobs > 0 ? o->jobs : tn_cpu_count();
    c->guided_unit_s = guided_unit_s;
    c->spec = c->spec_own;
    run->ctx[slot] = c;
    run->n = slot + 1;
    return c;
}

/* Prints why GPU ordinal's worker did not start (the GPU named where the
 * run asked for several). */
static void open_failed(const tn_run *run, int ordinal, at_status st, const char *err)
{
    const char *what = st == AT_ERR_CRASHED || st == AT_ERR_IO ? "the worker cannot start"
                       : st == AT_ERR_NO_MEMORY ? "out of memory" : "no CUDA driver/device";
    if (run->several)
        fprintf(stderr, "autotune: GPU %d: %s: %s\n", ordinal, what, err);
    else
        fprintf(stderr, "autotune: %s: %s\n", what, err);
}

/* Starts the worker of every listed GPU (--device all: every GPU the first
 * one's worker counts), one after the other on this thread: a worker dies
 * with the thread that started it (PR_SET_PDEATHSIG), so none is started
 * on a short-lived one. 0, or -1 with the message printed: a worker that
 * cannot start or a GPU it does not see, a listed ordinal beyond the count.
 * Run lock held. */
static int open_devices(tn_run *run, double guided_unit_s)
{
    const tn_options *o = run->opt;
    int list[TN_MAX_DEVICES], n = o->all_devices ? 1 : o->n_devices > 0 ? o->n_devices : 1;
    if (o->all_devices)
        list[0] = 0;
    else if (o->n_devices > 0)
        memcpy(list, o->devices, sizeof list);
    else
        list[0] = o->device;
    for (int i = 0; i < n; i++) {
        tn_ctx *c = new_ctx(run, i, list[i], guided_unit_s);
        char err[4096] = "";
        at_status st = c ? tn_worker_up(c, err, sizeof err) : AT_ERR_NO_MEMORY;
        if (st != AT_OK) {
            open_failed(run, list[i], st, err);
            return -1;
        }
        if (i > 0 || c->device_count <= 0 || !run->several)
            continue;
        if (o->all_devices) {
            n = c->device_count < TN_MAX_DEVICES ? c->device_count : TN_MAX_DEVICES;
            for (int k = 0; k < n; k++)
                list[k] = k;
        }
        for (int k = 0; k < n; k++)
            if (list[k] >= c->device_count) {
                fprintf(stderr, "autotune: --device lists GPU %d, but this machine has %d "
                        "(0-%d)\n", list[k], c->device_count, c->device_count - 1);
                return -1;
            }
    }
    return 0;
}

/* Sorts the GPUs into groups of one model (name, architecture, memory) and
 * gives each context its group, peers and tag; prints the groups of a run
 * of several GPUs (one GPU alone is a group of one, untagged). */
static void form_groups(tn_run *run)
{
    for (int i = 0; i < run->n; i++) {
        tn_ctx *c = run->ctx[i];
        tn_group *g = NULL;
        for (int k = 0; k < run->n_groups && !g; k++) {
            const at_device_info *a = &run->group[k].member[0]->dev;
            if (strcmp(a->name, c->dev.name) == 0 &&
                strcmp(run->group[k].member[0]->arch, c->arch) == 0 &&
                a->memory_bytes == c->dev.memory_bytes && run->group[k].n < TN_MAX_DEVICES)
                g = &run->group[k];
        }
        if (!g) {
            g = &run->group[run->n_groups++];
            tn_cond_init_monotonic(&g->wake);   /* the pipeline's timed waits */
        }
        c->member = g->n;
        g->member[g->n++] = c;
        g->n_live = g->n;
    }
    for (int k = 0; k < run->n_groups; k++) {
        tn_group *g = &run->group[k];
        size_t used = (size_t)snprintf(g->tag, sizeof g->tag, "GPU");
        for (int m = 0; m < g->n && used + 8 < sizeof g->tag; m++)
            used += (size_t)snprintf(g->tag + used, sizeof g->tag - used, "%s%d",
                                     m ? "," : " ", g->member[m]->device);
        snprintf(g->tag + used, sizeof g->tag - used, ": ");
        if (!run->several)
            g->tag[0] = '\0';           /* one GPU asked for: its lines untagged */
        for (int m = 0; m < g->n; m++) {
            tn_ctx *c = g->member[m];
            c->group = g;
            c->wake = &g->wake;
            c->spec = g->spec;
            c->spec_made = &g->spec_made;
            c->pre = &g->pre;
            c->n_peers = g->n;
            snprintf(c->tag, sizeof c->tag, "%s", g->tag);
            for (int j = 0; j < g->n; j++) {
                c->peer_uuid[j] = g->member[j]->dev.uuid;
                c->peer_ordinal[j] = g->member[j]->device;
            }
        }
        if (!run->several)
            continue;
        printf("%.*s (%s): %s\n", (int)strlen(g->tag) - 2, g->tag, g->member[0]->dev.name,
               g->n > 1 ? "one model, each search split between these GPUs"
                        : "tuned on its own");
    }
    fflush(stdout);
}

/* Records c's device and begins its session (facts: the options, more
 * JSON members in extra or ""). 0, or -1 with the message printed. */
static int begin_device(tn_ctx *c, const char *extra)
{
    const tn_options *o = c->opt;
    if (db_put_device(c->d, &c->dev, tpl_nvrtc_version()) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(c->d));
        return -1;
    }
    char gpu[512], facts[4096], cmd_esc[256];
    tn_gpu_facts(c->dev.uuid, gpu, sizeof gpu);
    tn_json_escape(o->strategy ? o->strategy : "auto", cmd_esc, sizeof cmd_esc);
    snprintf(facts, sizeof facts,
             "{\"strategy\": \"%s\", \"budget_s\": %g, \"budget_evals\": %lld, "
             "\"seed\": %llu, \"jobs\": %d, \"timeout_s\": %g, \"nvrtc\": \"%s\", %s%s}",
             cmd_esc, o->budget_s, o->budget_evals, c->seed, c->jobs, o->timeout_s,
             tpl_nvrtc_version(), gpu, extra);
    if (db_begin_session(c->d, c->dev.uuid, o->command, facts, &c->session_id) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(c->d));
        return -1;
    }
    return 0;
}

/* Ends c's session with its counts and the outcome. */
static void end_device(tn_ctx *c, double total)
{
    char gpu[512], end_facts[1024];
    tn_gpu_facts(c->dev.uuid, gpu, sizeof gpu);
    snprintf(end_facts, sizeof end_facts,
             "{\"seconds\": %.3f, \"results_stored\": %lld, \"worker_respawns\": %lld, "
             "\"retried_after_worker_death\": %lld, \"problems_skipped\": %lld, %s}",
             total, c->stored, c->respawns, c->retries, c->skipped, gpu);
    const char *outcome = tn_interrupts ? "interrupted" : c->fatal ? "failed" : "complete";
    db_end_session(c->d, c->session_id, end_facts, outcome);
}

/* Opens the database, records every GPU and begins its session. 0, or -1
 * with the message printed. */
static int begin_devices(tn_run *run, const char *path, db **d)
{
    char err[4096] = "", gpus[256] = "";
    if (db_open(d, path, 1, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        return -1;
    }
    size_t used = 0;
    for (int i = 0; i < run->n && used + 8 < sizeof gpus; i++)
        used += (size_t)snprintf(gpus + used, sizeof gpus - used, "%s%d", i ? "," : "",
                                 run->ctx[i]->device);
    for (int i = 0; i < run->n; i++) {
        tn_ctx *c = run->ctx[i];
        c->d = *d;
        printf("device %d: %s (%s, %d SMs, %.1f GiB), database %s\n", c->device,
               c->dev.name, c->arch, c->dev.sm_count,
               (double)c->dev.memory_bytes / (1 << 30), path);
        fflush(stdout);
        char extra[512] = "";
        if (run->several)
            snprintf(extra, sizeof extra, ", \"gpus\": \"%s\", \"split_with\": \"%s\"", gpus,
                     c->tag);
        if (begin_device(c, extra) != 0)
            return -1;
    }
    return 0;
}

/* Ends every session; prints the run's summary. Returns the exit status:
 * 130 interrupted, 1 if a GPU failed or a problem failed, else 0. */
static int finish_devices(tn_run *run, double total)
{
    long long stored = 0, respawns = 0, retries = 0, skipped = 0, spec = 0, used = 0;
    long long used_later = 0, dropped = 0, searched = 0;
    double eval_s = 0, await_s = 0;
    int fatal = 0;
    for (int i = 0; i < run->n; i++) {
        tn_ctx *c = run->ctx[i];
        end_device(c, total);
        stored += c->stored;
        respawns += c->respawns;
        retries += c->retries;
        skipped += c->skipped;
        spec += c->spec_submitted;
        used += c->spec_used;
        used_later += c->spec_used_later;
        dropped += c->spec_dropped;
        searched += c->searched;
        eval_s += c->eval_s;
        await_s += c->await_s;
        fatal |= c->fatal;
        run->failed |= c->problems_failed > 0;
        if (run->n > 1)
            printf("GPU %d: %lld results stored, %lld worker restarts%s\n", c->device,
                   c->stored, c->respawns, c->fatal ? ", stopped (below)" : "");
    }
    if (tn_interrupts) {
        printf("interrupted: %lld results stored; rerun the same command to resume\n", stored);
        return 130;
    }
    for (int i = 0; i < run->n; i++) {
        if (!run->ctx[i]->fatal)
            continue;
        if (run->n > 1)
            fprintf(stderr, "autotune: GPU %d: %s\n", run->ctx[i]->device,
                    run->ctx[i]->fatal_msg);
        else
            fprintf(stderr, "autotune: %s\n", run->ctx[i]->fatal_msg);
    }
    if (run->n == 1 && fatal)
        return 1;
    printf("done: %lld results stored in %.1f s", stored, total);
    if (run->n > 1)
        printf(" on %d GPUs", run->n);
    printf(" (%lld worker restarts", respawns);
    if (retries)
        printf(", %lld retried after %s worker died", retries, run->n > 1 ? "a" : "the");
    printf(")\n");
    /* used: taken while compiling, or found stored by a later item (this run) */
    printf("speculative compiles: %lld made, %lld used by the search (%lld while compiling, "
           "%lld later from the database), %lld never used", spec, used + used_later, used,
           used_later, spec - used - used_later - dropped);
    if (dropped)
        printf("; %lld cancelled unstarted when the family changed", dropped);
    printf("\n");
    /* where a search's time went: the throughput's two limits */
    if (searched > 0)
        printf("search time: %lld evaluations, %.1f s in worker round trips (%.1f ms each), "
               "%.1f s waiting for compiles%s\n", searched, eval_s,
               eval_s * 1000.0 / (double)searched, await_s,
               run->n > 1 ? " (summed over the GPUs)" : "");
    fflush(stdout);
    if (skipped)
        fprintf(stderr, "autotune: %lld problem%s skipped%s (see above)\n", skipped,
                skipped > 1 ? "s" : "", run->n > 1 ? " on a GPU" : "");
    return fatal || run->failed ? 1 : 0;
}

/* Runs every GPU's work until every look is done: one thread per GPU, or
 * this thread for a run of one. The run lock is held on entry and on
 * return. */
static void run_threads(tn_run *run)
{
    pthread_t th[TN_MAX_DEVICES];
    int started[TN_MAX_DEVICES] = {0};
    pthread_mutex_unlock(&run->lock);
    for (int i = 0; run->n > 1 && i < run->n; i++)
        started[i] = pthread_create(&th[i], NULL, gpu_thread, run->ctx[i]) == 0;
    for (int i = 0; i < run->n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            gpu_thread(run->ctx[i]);         /* no thread: its share here */
    }
    pthread_mutex_lock(&run->lock);
}

/* The end of a run that completed: the gc rules applied (the cubins a
 * lookup can serve are kept; an interrupted or failed run keeps every
 * cubin for its resume), unless --keep-all-cubins; then the size. */
static void finish_database(db *d, const tn_options *o, int complete)
{
    int gc_applied = complete && !o->keep_all_cubins && tn_gc_after_run(d);
    tn_print_db_size(d, gc_applied);
}

int tn_tune(const tn_options *o)
{
    tn_run *run = calloc(1, sizeof *run);
    if (!run || tn_run_list_make(o, &run->list) != 0) {
        fprintf(stderr, "autotune: out of memory\n");
        if (run)
            tn_run_list_free(&run->list);
        free(run);
        return 1;
    }
    run->opt = o;
    run->several = o->all_devices || o->n_devices > 1;
    if (run->list.n == 0) {
        fprintf(stderr, "autotune: no kernel has problems of that size; see autotune --help\n");
        tn_run_list_free(&run->list);
        free(run);
        return 2;
    }
    double weights = tn_announce_problems(o, &run->list);
    printf("seed %llu (--seed %llu repeats the inputs and the search)\n", o->seed, o->seed);
    fflush(stdout);
    char path[4096];
    tn_db_path(o->db_path, path, sizeof path);
    tn_signals sigs;
    tn_signals_catch(&sigs);
    pthread_mutex_init(&run->lock, NULL);
    pthread_mutex_lock(&run->lock);

    int exit_code = 1;
    db *d = NULL;
    tn_pool *pool = NULL;
    if (open_devices(run, tn_run_seconds() / (weights > 0 ? weights : 1.0)) == 0) {
        form_groups(run);
        if (begin_devices(run, path, &d) == 0) {
            pool = tn_pool_create(run->ctx[0]->jobs);
            if (!pool)
                fprintf(stderr, "autotune: could not start compile threads\n");
        }
    }
    if (pool) {
        for (int i = 0; i < run->n; i++)
            run->ctx[i]->pool = pool;
        for (int k = 0; k < run->n_groups; k++)
            tn_prefetch_start(run->group[k].member[0], &run->group[k].pre);
        double t0 = tn_now();
        run_threads(run);
        for (int k = 0; k < run->n_groups; k++) {
            tn_spec_finish(run->group[k].member[0]);
            tn_prefetch_finish(run->group[k].member[0], &run->group[k].pre);
        }
        exit_code = finish_devices(run, tn_now() - t0);
        finish_database(d, o, exit_code != 130 && exit_code != 1);
    }
    tn_pool_destroy(pool);
    for (int i = 0; i < run->n; i++) {
        tn_ctx *c = run->ctx[i];
        if (c->worker_up)
            tn_proc_stop(&c->worker);
        else if (c->worker.pid > 0)
            tn_proc_kill(&c->worker, NULL, 0);
        tn_worker_pids[c->slot] = 0;
        free(c);
    }
    for (int k = 0; k < run->n_groups; k++) {
        pthread_cond_destroy(&run->group[k].wake);
        tn_keys_free(&run->group[k].spec_made);
    }
    db_close(d);
    pthread_mutex_unlock(&run->lock);
    pthread_mutex_destroy(&run->lock);
    tn_run_list_free(&run->list);
    free(run);
    fflush(stdout);
    tn_signals_restore(&sigs);
    return exit_code;
}
