/* tune_multi.c: tuning several GPUs at once (--device all, --device 0,1): one
 * worker and thread per GPU; GPUs of one model split each problem's search. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune_core.h"

/* GPUs of one model (name, architecture, memory) in this run. They tune the
 * same problems in the same order, each problem planned once (by the first
 * to reach it) and searched through one shared window: a GPU whose worker
 * is free takes the oldest configuration, so a slow or restarted one holds
 * up nobody. The last to finish a problem summarizes it; the others wait. */
typedef struct tn_group {
    tn_ctx *member[TN_MAX_DEVICES];
    int n;                           /* GPUs */
    int n_live;                      /* GPUs still tuning (not fatal) */
    pthread_cond_t wake;             /* a slot freed, a cubin stored, a
                                        problem finished */
    long long started, finished;     /* sequence numbers of problems */
    int left;                        /* GPUs done with the current problem */
    int plan_rc;                     /* 0: the current problem is planned */
    tn_prob pr;
    tn_spec spec[TN_SPEC_MAX];
    tn_prefetch pre;                 /* compiles for later problems */
    char tag[64];                    /* "GPU 0,1: " */
} tn_group;

typedef struct tn_run {
    const tn_options *opt;
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

/* ---- one problem, split between the GPUs of a group ---- */

/* Summarizes and frees the group's current problem; wakes the waiters.
 * Then c, the GPU that finished it last, re-times its fastest
 * configurations while the others start the next problem (c joins it
 * after: the shared window does not wait for it). */
static void finish_problem(tn_ctx *c, tn_group *g, long long seq)
{
    tn_prob *pr = &g->pr, later;
    int retime = g->plan_rc == 0 && !c->fatal;
    if (g->plan_rc == 0) {
        tn_progress_end(&pr->pg);
        pr->stats.seconds = tn_now() - pr->t_start;
        tn_problem_summary(pr);
    }
    if (retime) {                    /* what the re-timing reads, past the reset */
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
    if (retime)
        tn_retime_problem(c, &later);
}

/* c's share of problem number seq (fam, p) of its group: the first GPU to
 * reach it plans it; each searches until nothing is left; the last one
 * summarizes it, the others wait for that. 0, or -1 if the problem failed
 * here (skipped on this GPU, the GPU fatal, or not planned). Called and
 * returns with the run lock held. */
static int group_problem(tn_ctx *c, tn_group *g, long long seq, const tpl_family *fam,
                         const tpl_problem *p)
{
    if (g->started < seq) {
        g->started = seq;
        g->left = 0;
        tn_prepare_problem(c, &g->pr, fam, p);
        g->plan_rc = tn_plan_problem(c, &g->pr);
        if (g->plan_rc == 0)
            g->plan_rc = tn_pipeline_open(c, &g->pr, g->n_live);
    } else {
        c->fam = fam;
        c->problem = *p;
        c->prepared = 0;
        c->skip = 0;
        c->skip_msg[0] = '\0';
    }
    int rc = g->plan_rc == 0 ? tn_pipeline_run(c, &g->pr) : -1;
    if (c->skip) {
        fprintf(stderr, "autotune: GPU %d: %s %s skipped on this GPU: %s; the other GPUs "
                "go on\n", c->device, fam->name, g->pr.size, c->skip_msg);
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
    return rc;
}

/* One GPU's thread: every problem of the run, in order, with its group. */
static void *gpu_thread(void *arg)
{
    tn_ctx *c = arg;
    tn_group *g = c->group;
    pthread_mutex_lock(c->lock);
    /* the device's ceilings first, each GPU on its own (the lock is let go
     * while its worker measures): one that is done starts the search */
    tn_measure_ceiling(c);
    long long seq = 0;
    tn_chunk *chunks = NULL;
    int n_chunks = tn_run_chunks(c->opt, &chunks);
    for (int i = 0; i < n_chunks && !tn_interrupts && !c->fatal; i++) {
        const tpl_family *fam = chunks[i].fam;
        const tpl_problem *list = chunks[i].list;
        int n = chunks[i].n;
        /* every GPU of the group takes the same problems in the same order
         * (the sequence numbers), second looks included: a problem skipped
         * on one GPU is prepared there again for its second look (and
         * skipped again there if that fails: the others go on) */
        for (int k = 0; k < n && !tn_interrupts && !c->fatal; k++)
            if (group_problem(c, g, ++seq, fam, &list[k]) != 0 && !c->fatal)
                c->problems_failed++;
        c->second_look = 1;
        for (int k = 0; k < chunks[i].looks && !tn_interrupts && !c->fatal; k++)
            if (group_problem(c, g, ++seq, fam, &list[k]) != 0 && !c->fatal)
                c->problems_failed++;
        c->second_look = 0;
    }
    free(chunks);
    if (!c->left_group) {            /* done, interrupted, or fatal before */
        g->n_live--;
        c->left_group = 1;
        /* a problem others still search no longer waits for this GPU */
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
    c->worker.pid = -1;
    c->seed = o->seed;
    c->jobs = o->jobs > 0 ? o->jobs : tn_cpu_count();
    c->guided_unit_s = guided_unit_s;
    c->spec = c->spec_own;
    run->ctx[slot] = c;
    run->n = slot + 1;
    return c;
}

/* Prints why GPU ordinal's worker did not start. */
static void open_failed(int ordinal, at_status st, const char *err)
{
    fprintf(stderr, "autotune: GPU %d: %s: %s\n", ordinal,
            st == AT_ERR_CRASHED || st == AT_ERR_IO ? "the worker cannot start"
            : st == AT_ERR_NO_MEMORY ? "out of memory" : "no CUDA driver/device", err);
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
    int list[TN_MAX_DEVICES], n = o->all_devices ? 1 : o->n_devices;
    if (o->all_devices)
        list[0] = 0;
    else
        memcpy(list, o->devices, sizeof list);
    for (int i = 0; i < n; i++) {
        tn_ctx *c = new_ctx(run, i, list[i], guided_unit_s);
        char err[4096] = "";
        at_status st = c ? tn_worker_up(c, err, sizeof err) : AT_ERR_NO_MEMORY;
        if (st != AT_OK) {
            open_failed(list[i], st, err);
            return -1;
        }
        if (i > 0 || c->device_count <= 0)
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
 * gives each context its group, peers and tag; prints the groups. */
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
        for (int m = 0; m < g->n; m++) {
            tn_ctx *c = g->member[m];
            c->group = g;
            c->wake = &g->wake;
            c->spec = g->spec;
            c->pre = &g->pre;
            c->n_peers = g->n;
            snprintf(c->tag, sizeof c->tag, "%s", g->tag);
            for (int j = 0; j < g->n; j++) {
                c->peer_uuid[j] = g->member[j]->dev.uuid;
                c->peer_ordinal[j] = g->member[j]->device;
            }
        }
        printf("%.*s (%s): %s\n", (int)strlen(g->tag) - 2, g->tag, g->member[0]->dev.name,
               g->n > 1 ? "one model, each search split between these GPUs"
                        : "tuned on its own");
    }
    fflush(stdout);
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
        char extra[512];
        snprintf(extra, sizeof extra, ", \"gpus\": \"%s\", \"split_with\": \"%s\"", gpus,
                 c->tag);
        if (tn_begin_device(c, extra) != 0)
            return -1;
    }
    return 0;
}

/* Ends every session; prints the run's summary. Returns the exit status:
 * 130 interrupted, 1 if a GPU failed or a problem failed, else 0. */
static int finish_devices(tn_run *run, double total)
{
    long long stored = 0, respawns = 0, retries = 0, skipped = 0, spec = 0, used = 0;
    int fatal = 0;
    for (int i = 0; i < run->n; i++) {
        tn_ctx *c = run->ctx[i];
        tn_end_device(c, total);
        stored += c->stored;
        respawns += c->respawns;
        retries += c->retries;
        skipped += c->skipped;
        spec += c->spec_submitted;
        used += c->spec_used;
        fatal |= c->fatal;
        run->failed |= c->problems_failed > 0;
        printf("GPU %d: %lld results stored, %lld worker restarts%s\n", c->device, c->stored,
               c->respawns, c->fatal ? ", stopped (below)" : "");
    }
    if (tn_interrupts) {
        printf("interrupted: %lld results stored; rerun the same command to resume\n", stored);
        return 130;
    }
    for (int i = 0; i < run->n; i++)
        if (run->ctx[i]->fatal)
            fprintf(stderr, "autotune: GPU %d: %s\n", run->ctx[i]->device,
                    run->ctx[i]->fatal_msg);
    printf("done: %lld results stored in %.1f s on %d GPUs (%lld worker restarts", stored,
           total, run->n, respawns);
    if (retries)
        printf(", %lld retried after a worker died", retries);
    if (spec)
        printf(", %lld speculative compiles, %lld of them used", spec, used);
    printf(")\n");
    fflush(stdout);
    if (skipped)
        fprintf(stderr, "autotune: %lld problem%s skipped on a GPU (see above)\n", skipped,
                skipped > 1 ? "s" : "");
    return fatal || run->failed ? 1 : 0;
}

/* Runs one thread per GPU until every problem is done. The run lock is
 * held on entry and on return. */
static void run_threads(tn_run *run)
{
    pthread_t th[TN_MAX_DEVICES];
    int started[TN_MAX_DEVICES] = {0};
    pthread_mutex_unlock(&run->lock);
    for (int i = 0; i < run->n; i++)
        started[i] = pthread_create(&th[i], NULL, gpu_thread, run->ctx[i]) == 0;
    for (int i = 0; i < run->n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else
            gpu_thread(run->ctx[i]);         /* no thread: its share here */
    }
    pthread_mutex_lock(&run->lock);
}

int tn_tune_multi(const tn_options *o)
{
    tn_run *run = calloc(1, sizeof *run);
    if (!run) {
        fprintf(stderr, "autotune: out of memory\n");
        return 1;
    }
    run->opt = o;
    tn_interrupts = 0;
    memset((void *)tn_worker_pids, 0, sizeof tn_worker_pids);
    double weights = 0;
    if (tn_announce_problems(o, &weights) == 0) {
        fprintf(stderr, "autotune: no kernel has problems of that size; see autotune --help\n");
        free(run);
        return 2;
    }
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
        tn_print_db_size(d);
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
    for (int k = 0; k < run->n_groups; k++)
        pthread_cond_destroy(&run->group[k].wake);
    db_close(d);
    pthread_mutex_unlock(&run->lock);
    pthread_mutex_destroy(&run->lock);
    free(run);
    fflush(stdout);
    tn_signals_restore(&sigs);
    return exit_code;
}
