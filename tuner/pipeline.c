/* pipeline.c: the search's pipeline: a window of proposed configurations
 * compiled ahead by the pool (and speculatively), evaluated one at a time
 * by the worker behind a watchdog, each result recorded as it comes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune_core.h"

/* Watchdogs (seconds) of evaluations before a best is known / of extras. */
#define TN_FIRST_EVAL_TIMEOUT 60.0
#define TN_EXTRA_TIMEOUT 10.0
#define TN_WINDOW_MAX 64

/* The configurations in flight, in proposal order: slots of a ring, a
 * queue of them, and what has been proposed. */
typedef struct tn_window {
    int size;                        /* slots (<= TN_WINDOW_MAX) */
    tn_item *ring;
    tn_item **q;
    int q_head, q_len;
    int free_slot[TN_WINDOW_MAX];
    int n_free;
    int next_extra;                  /* extras proposed so far */
    int exhausted;                   /* the strategy has nothing more */
    tn_bitset hinted, queued;        /* positions hinted / proposed */
} tn_window;

static int interrupted_now(void) { return tn_interrupts >= 2; }

/* ---- one evaluation ---- */

/* Frees an item's cubin and log. */
static void item_release(tn_item *it)
{
    if (it->from_db)
        free(it->cubin);
    free(it->job.cubin);
    free(it->job.log);
    it->cubin = it->job.cubin = NULL;
    it->job.log = NULL;
}

/* Fills r from the worker's answer to an evaluation: status, times,
 * throughput, relative error and message. */
static void reply_to_row(const tn_ctx *c, const tn_msg *rep, db_result *r)
{
    at_status rs = (at_status)rep->status;
    if (rep->verified)
        r->rel_error = rep->rel_error;
    snprintf(r->error, sizeof r->error, "%.1000s", rs == AT_OK ? "" : rep->text);
    if (rs == AT_OK) {
        r->time_ms = rep->timing.median_ms;
        r->time_min_ms = rep->timing.min_ms;
        r->time_max_ms = rep->timing.max_ms;
        r->runs = rep->timing.runs;
        double flops = rep->timing.flops, bytes = rep->timing.bytes;
        if (flops <= 0 && bytes <= 0)
            c->fam->work(&c->problem, &flops, &bytes);
        if (r->time_ms > 0) {
            r->gflops = flops / (r->time_ms * 1e6);
            r->gbs = bytes / (r->time_ms * 1e6);
        }
        snprintf(r->status, sizeof r->status, "%s",
                 rep->timing.abandoned ? DB_ABANDONED : DB_OK);
    } else if (rs == AT_ERR_WRONG_RESULT || rs == AT_ERR_NOT_CONVERGED ||
               rs == AT_ERR_DIVERGED) {
        snprintf(r->status, sizeof r->status, "%s", DB_WRONG_RESULT);
    } else if (rs == AT_ERR_CRASHED) {
        snprintf(r->status, sizeof r->status, "%s", DB_CRASHED);
    } else if (rs == AT_ERR_UNSUPPORTED) {
        snprintf(r->status, sizeof r->status, "%s", DB_INVALID);
    } else {
        snprintf(r->status, sizeof r->status, "%s", DB_LAUNCH_ERROR);
    }
}

/* A worker ready for the current problem, else why not: the run becomes
 * fatal (no worker can start) or the problem is skipped (its inputs cannot
 * be prepared). 0 ready, -1 not (nothing set when interrupted). */
static int worker_ready_or_stop(tn_ctx *c)
{
    char err[2048] = "";
    tn_ready rd = tn_worker_ready(c, err, sizeof err);
    if (rd == TN_READY)
        return 0;
    if (interrupted_now())
        return -1;
    if (rd == TN_NO_WORKER) {
        c->fatal = 1;
        snprintf(c->fatal_msg, sizeof c->fatal_msg, "the worker cannot start: %s", err);
    } else {
        c->skip = 1;
        snprintf(c->skip_msg, sizeof c->skip_msg, "%s", err);
    }
    return -1;
}

/* The worker's EVAL request for item it. */
static void eval_request(const tn_ctx *c, const tn_item *it, const ms_options *mo, tn_msg *m)
{
    memset(m, 0, sizeof *m);
    m->type = TN_MSG_EVAL;
    snprintf(m->family, sizeof m->family, "%s", c->fam->name);
    m->problem = c->problem;
    m->n_cfg = c->fam->n_params;
    memcpy(m->cfg, it->job.cfg, sizeof m->cfg);
    m->opt = *mo;
    m->blob = it->cubin;
    m->blob_size = it->cubin_size;
}

/* Evaluates one compiled item in the worker and fills r (not stored). A
 * worker that dies from the hand-off of the request to the end of its
 * reply is replaced and the item tried once more; if it dies again the
 * item is recorded as crashed. One that the watchdog kills is recorded as
 * a timeout, one that reports its own crash (a poisoned context) as
 * crashed, neither tried again. Returns 0 normally, -1 if the problem or
 * the run must stop (interrupt, c->skip, c->fatal). */
static int evaluate(tn_ctx *c, tn_item *it, const ms_options *mo, double timeout_s,
                    db_result *r)
{
    char err[2048] = "", how[256] = "", first[512] = "";
    for (int attempt = 0; attempt < 2; attempt++) {
        if (worker_ready_or_stop(c) != 0)
            return -1;
        tn_msg m, rep;
        eval_request(c, it, mo, &m);
        double t0 = tn_now();
        at_status st = tn_worker_call(c, &m, timeout_s, &rep, err, sizeof err, how, sizeof how);
        if (st == AT_OK && interrupted_now())
            tn_worker_down(c, how, sizeof how);
        if (interrupted_now()) {
            if (st == AT_OK)
                tn_msg_free(&rep);
            return -1;
        }
        if (st == AT_OK) {
            reply_to_row(c, &rep, r);
            if (rep.fatal) {
                tn_worker_down(c, how, sizeof how);
                size_t used = strlen(r->error);
                snprintf(r->error + used, sizeof r->error - used, "; worker %s",
                         how[0] ? how : "gone");
            }
            tn_msg_free(&rep);
            return 0;
        }
        if (st == AT_ERR_TIMEOUT) {
            snprintf(r->status, sizeof r->status, "%s", DB_TIMEOUT);
            snprintf(r->error, sizeof r->error,
                     "no result within the %.1f s watchdog; worker killed (%s)",
                     timeout_s, how);
            return 0;
        }
        if (attempt == 0) {
            snprintf(first, sizeof first, "%.200s after %.2f s (%.200s)",
                     how[0] ? how : "unknown", tn_now() - t0, err[0] ? err : "request lost");
            c->retries++;
        } else {
            snprintf(r->status, sizeof r->status, "%s", DB_CRASHED);
            snprintf(r->error, sizeof r->error,
                     "worker died on it twice: %s; then %.200s after %.2f s (%.400s)", first,
                     how[0] ? how : "unknown", tn_now() - t0, err[0] ? err : "request lost");
        }
    }
    return 0;
}

/* Derived watchdog: max(2 s, 20x the best median x the runs it may take),
 * plus the time budget of the timing loop; generous before any best. */
static double watchdog(const tn_ctx *c, const tn_best *best, const ms_options *mo,
                       int extra)
{
    if (c->opt->timeout_s > 0)
        return c->opt->timeout_s;
    if (!best->have)
        return TN_FIRST_EVAL_TIMEOUT;
    double runs = (double)(mo->warmup + mo->min_runs + 1);
    double t = (20.0 * best->median * runs + 4.0 * mo->budget_ms) / 1000.0;
    double lo = extra ? TN_EXTRA_TIMEOUT : 2.0;      /* seeds may be very slow */
    return t < lo ? lo : t;
}

/* ---- speculative compiles ---- */

/* Slot of the active speculative compile with that binary key, -1 none. */
static int spec_find(const tn_ctx *c, const char *key)
{
    for (int k = 0; k < TN_SPEC_MAX; k++)
        if (c->spec[k].active && strcmp(c->spec[k].key, key) == 0)
            return k;
    return -1;
}

/* Records key as a speculative compile made in this run (out of memory:
 * not recorded, so its later use is not counted). */
static void spec_note_made(tn_ctx *c, const char *key)
{
    tn_keys *k = c->spec_made;
    if (!k)
        return;
    if (k->n == k->cap) {
        int cap = k->cap ? 2 * k->cap : 256;
        void *more = realloc(k->item, (size_t)cap * sizeof *k->item);
        if (!more)
            return;
        k->item = more;
        k->cap = cap;
    }
    snprintf(k->item[k->n].key, sizeof k->item[0].key, "%s", key);
    k->item[k->n++].used = 0;
}

/* 1 the first time an item uses a stored cubin that a speculative compile of
 * this run made (the newest first: a recent one is the likely one), else 0. */
static int spec_note_used(tn_ctx *c, const char *key)
{
    tn_keys *k = c->spec_made;
    for (int i = k ? k->n - 1 : -1; i >= 0; i--)
        if (strcmp(k->item[i].key, key) == 0) {
            int first = !k->item[i].used;
            k->item[i].used = 1;
            return first;
        }
    return 0;
}

void tn_keys_free(tn_keys *k)
{
    free(k->item);
    memset(k, 0, sizeof *k);
}

void tn_spec_drop_other_families(tn_ctx *c, const tpl_family *fam)
{
    for (int k = 0; c->pool && k < TN_SPEC_MAX; k++) {
        tn_spec *sp = &c->spec[k];
        if (sp->active && !sp->attached && sp->job.fam != fam &&
            tn_pool_cancel(c->pool, &sp->job)) {
            sp->active = 0;
            c->spec_dropped++;
        }
    }
}

/* Stores the cubins of compiles let go by dropped items (item_drop) that
 * have finished since, so a later problem finds them. */
static void detached_harvest(tn_ctx *c)
{
    tn_job *job;
    while (c->pool && (job = tn_pool_take_detached(c->pool)) != NULL) {
        if (job->status == AT_OK) {
            char key[sizeof ((tn_item *)0)->key], config[TPL_CONFIG_LEN];
            tpl_binary_key(job->fam, job->cfg, job->arch, key, sizeof key);
            tpl_config_format(job->fam, job->cfg, config, sizeof config);
            tn_store_binary(c, job->fam, job->cfg, key, config, job->cubin, job->cubin_size);
        }
        free(job->cubin);
        free(job->log);
        free(job);
    }
}

static void spec_harvest(tn_ctx *c)
{
    detached_harvest(c);
    tn_prefetch_harvest(c);
    for (int k = 0; k < TN_SPEC_MAX; k++) {
        tn_spec *sp = &c->spec[k];
        if (sp->active && !sp->attached && tn_pool_poll(c->pool, &sp->job))
            tn_spec_store(c, sp);
    }
}

int tn_spec_room(int jobs, int busy, int spec_active, int prefetch_pending)
{
    int reserve = 0;
    if (prefetch_pending > 0 && jobs >= 4) {
        reserve = jobs / 4;
        if (reserve > prefetch_pending)
            reserve = prefetch_pending;
    }
    int room = jobs - reserve - busy - spec_active;
    if (room > TN_SPEC_MAX - spec_active)
        room = TN_SPEC_MAX - spec_active;
    return room > 0 ? room : 0;
}

/* Keeps speculative compiles of hinted configurations going on the compile
 * threads the window's own compiles (`busy`) and the prefetches' share leave
 * free (tn_spec_room). */
static void spec_fill(tn_ctx *c, const tn_strategy *strat, void *st, const tn_space *space,
                      tn_bitset *hinted, int busy)
{
    if (!strat->hint || c->fatal || tn_interrupts)
        return;
    int spec_active = 0;
    for (int k = 0; k < TN_SPEC_MAX; k++)
        spec_active += c->spec[k].active;
    int room = tn_spec_room(c->jobs, busy, spec_active, tn_pool_idle_pending(c->pool));
    if (room == 0)
        return;
    long long h[64];
    int nh = strat->hint(st, h, 64);
    for (int i = 0; i < nh && room > 0; i++) {
        long long pos = tn_space_position(space, h[i]);
        if (pos < 0 || tn_bitset_test(hinted, pos))
            continue;
        tn_bitset_set(hinted, pos);
        int k = 0;
        while (k < TN_SPEC_MAX && c->spec[k].active)
            k++;
        if (k == TN_SPEC_MAX)
            break;
        tn_spec *sp = &c->spec[k];
        memset(sp, 0, sizeof *sp);
        sp->job.fam = space->fam;
        snprintf(sp->job.arch, sizeof sp->job.arch, "%s", c->arch);
        tpl_config_from_index(space->fam, h[i], sp->job.cfg);
        tpl_binary_key(space->fam, sp->job.cfg, c->arch, sp->key, sizeof sp->key);
        if (spec_find(c, sp->key) >= 0)
            continue;
        void *bin = NULL;
        size_t size = 0;
        if (db_get_binary(c->d, sp->key, &bin, &size) == AT_OK) {
            free(bin);
            continue;
        }
        tpl_config_format(space->fam, sp->job.cfg, sp->config, sizeof sp->config);
        sp->active = 1;
        tn_pool_submit(c->pool, &sp->job);
        c->spec_submitted++;
        spec_note_made(c, sp->key);
        room--;
    }
}

/* End of the run: drop queued speculative compiles, keep finished ones,
 * and those that dropped items let go (the pool would wait for them
 * anyway when it is destroyed: now their cubins are stored). */
void tn_spec_finish(tn_ctx *c)
{
    for (int k = 0; k < TN_SPEC_MAX; k++) {
        tn_spec *sp = &c->spec[k];
        if (!sp->active)
            continue;
        sp->attached = 0;
        if (tn_pool_cancel(c->pool, &sp->job)) {
            sp->active = 0;
            continue;
        }
        tn_pool_wait(c->pool, &sp->job);
    }
    tn_pool_wait_detached(c->pool);
    spec_harvest(c);
}

/* ---- the items of the window ---- */

/* 1 if the item's cubin is stored under its key: then it is the item's,
 * as a finished compile; 0 (nothing changed) otherwise. */
static int item_from_db(tn_ctx *c, tn_item *it)
{
    void *bin = NULL;
    size_t size = 0;
    if (db_get_binary(c->d, it->key, &bin, &size) != AT_OK || size == 0)
        return 0;
    it->cubin = bin;
    it->cubin_size = size;
    it->from_db = 1;
    it->job.status = AT_OK;
    it->job.done = 1;
    return 1;
}

/* 1 if another item of the window (a GPU's, in flight) still compiles
 * it's key: its owner stores the cubin and wakes the waiters. */
static int twin_compiling(const tn_window *w, const tn_item *it)
{
    for (int i = 0; w && i < w->size; i++)
        if (&w->ring[i] != it && w->ring[i].compiling && strcmp(w->ring[i].key, it->key) == 0)
            return 1;
    return 0;
}

/* Waits for a compile without the run lock, until deadline (tn_now()'s
 * clock; 0: none). 1 if it is done, 0 if the deadline came first. */
static int pool_wait_unlocked(tn_ctx *c, tn_job *job, double deadline)
{
    tn_unlock(c);
    int done = 1;
    if (deadline > 0)
        done = tn_pool_wait_until(c->pool, job, deadline);
    else
        tn_pool_wait(c->pool, job);
    tn_relock(c);
    return done;
}

/* Waits on the group's wake-up until deadline (0: none); 0 once it passed. */
static int wake_wait(tn_ctx *c, double deadline)
{
    if (deadline <= 0) {
        pthread_cond_wait(c->wake, c->lock);
        return 1;
    }
    if (tn_now() >= deadline)
        return 0;
    struct timespec at = tn_abstime(deadline);
    pthread_cond_timedwait(c->wake, c->lock, &at);
    return 1;
}

/* Waits for an item's cubin (its own compile or a speculative one) and
 * stores a new cubin in the database. A twin whose cubin another GPU is
 * still compiling waits for it (w: the shared window, NULL alone). With a
 * deadline (tn_now()'s clock; 0: none) it stops waiting once it passes: 0,
 * with the item as item_drop lets it go (its compile goes on, detached);
 * else 1, the cubin there or its compile failed. */
static int item_await(tn_ctx *c, tn_item *it, const tn_window *w, double deadline)
{
    if (it->twin) {
        /* the item ahead stored its cubin; if it failed or was dropped,
         * compile here (a compile error then comes with its own log) */
        it->twin = 0;
        while (c->wake && !item_from_db(c, it) && twin_compiling(w, it))
            if (!wake_wait(c, deadline))
                return 0;
        if (it->from_db || item_from_db(c, it))
            return 1;
        if (deadline > 0 && tn_now() >= deadline)
            return 0;
        tn_pool_submit_urgent(c->pool, &it->job);
        it->submitted = 1;
        it->compiling = 1;
    }
    if (it->pre) {
        /* a prefetch of a later problem's compile was running when the item was
         * proposed: wait for it now (counted as a wait for compiles), take its
         * stored cubin; if it failed, compile here (its own log) */
        if (!tn_prefetch_await(c, it->pre, deadline))
            return 0;
        it->pre = 0;
        if (!item_from_db(c, it)) {
            if (deadline > 0 && tn_now() >= deadline)
                return 0;
            tn_pool_submit_urgent(c->pool, &it->job);
            it->submitted = 1;
        }
    }
    if (it->spec) {
        tn_spec *sp = &c->spec[it->spec - 1];
        if (!pool_wait_unlocked(c, &sp->job, deadline))
            return 0;
        it->job.status = sp->job.status;
        it->job.cubin = sp->job.cubin;
        it->job.cubin_size = sp->job.cubin_size;
        it->job.log = sp->job.log;
        it->job.compile_ms = sp->job.compile_ms;
        it->job.done = 1;
        sp->job.cubin = NULL;
        sp->job.log = NULL;
        sp->active = sp->attached = 0;
        it->spec = 0;
        it->submitted = 1;
        c->spec_used++;
        spec_note_used(c, it->key);  /* counted here, not again from the database */
    } else if (it->submitted && !pool_wait_unlocked(c, &it->job, deadline)) {
        return 0;
    }
    if (it->submitted && it->job.status == AT_OK) {
        it->cubin = it->job.cubin;
        it->cubin_size = it->job.cubin_size;
        if (!it->stored)
            tn_store_binary(c, c->fam, it->job.cfg, it->key, it->config, it->cubin,
                            it->cubin_size);
        it->stored = 1;
    }
    if (it->compiling) {
        it->compiling = 0;
        tn_wake(c);
    }
    return 1;
}

/* An item dropped unevaluated: a queued compile is cancelled, a running one
 * let go (its cubin stored by the harvest when done: a problem's end never
 * waits for NVRTC), a finished one kept; a speculative one is left to the
 * harvest. */
static void item_drop(tn_ctx *c, tn_item *it)
{
    it->pre = 0;                     /* a prefetch goes on: the harvest stores it */
    if (it->spec) {
        c->spec[it->spec - 1].attached = 0;
        it->spec = 0;
    } else if (it->submitted && !tn_pool_detach(c->pool, &it->job)) {
        item_await(c, it, NULL, 0);  /* done already: store its cubin */
    }
    if (it->compiling) {
        it->compiling = 0;
        tn_wake(c);
    }
    item_release(it);
}

/* Prepares an item: binary from the database, a speculative compile
 * already under way, or a compile job ahead of the speculative ones. */
static void item_start(tn_ctx *c, tn_item *it, tn_stats *stats, const tn_window *w)
{
    snprintf(it->job.arch, sizeof it->job.arch, "%s", c->arch);
    it->job.fam = c->fam;
    tpl_binary_key(c->fam, it->job.cfg, c->arch, it->key, sizeof it->key);
    for (int i = 0; i < w->q_len; i++) {
        const tn_item *ahead = w->q[(w->q_head + i) % w->size];
        if ((ahead->submitted || ahead->spec || ahead->twin || ahead->pre) &&
            strcmp(ahead->key, it->key) == 0) {
            it->twin = 1;
            return;
        }
    }
    if (twin_compiling(w, it)) {
        it->twin = 1;                /* another GPU's, in flight, compiles it */
        return;
    }
    int k = spec_find(c, it->key);
    if (k >= 0 && !c->spec[k].attached) {
        c->spec[k].attached = 1;
        it->spec = k + 1;
        it->compiling = 1;
        tn_pool_promote(c->pool, &c->spec[k].job);
        return;
    }
    int pre = tn_prefetch_claim(c, it->key);
    if (pre > 0) {
        it->pre = pre;               /* running: awaited in its turn (item_await) */
        it->compiling = 1;
        return;
    }
    if (item_from_db(c, it)) {
        stats->reused++;
        c->spec_used_later += spec_note_used(c, it->key);
        return;
    }
    tn_pool_submit_urgent(c->pool, &it->job);
    it->submitted = 1;
    it->compiling = 1;
}

/* ---- the window ---- */

/* Empty window of the strategy's lookahead (or enough to keep the compile
 * threads busy), one more slot for each GPU beyond the first (each holds
 * the one it evaluates). A search under a time budget takes at least one
 * slot per compile thread and GPU: its evaluations are as many as its
 * compiles can feed (a default run waited 52 of its 107 search seconds for
 * compiles with the model's 8 slots on 16 threads, the other threads
 * compiling guesses that were 29% used), and a model-guided strategy's
 * later proposals see fewer results than they would otherwise. -1 (message
 * printed) if out of memory. */
static int window_open(tn_ctx *c, const tn_prob *pr, tn_window *w, int n_gpus)
{
    memset(w, 0, sizeof *w);
    w->size = pr->strat->lookahead > 0 ? pr->strat->lookahead : 2 * c->jobs + 2;
    w->size += n_gpus > 1 ? n_gpus - 1 : 0;
    if (pr->budget_s > 0 && !pr->second_look && w->size < c->jobs + n_gpus)
        w->size = c->jobs + n_gpus;
    if (w->size > TN_WINDOW_MAX)
        w->size = TN_WINDOW_MAX;
    w->ring = calloc((size_t)w->size, sizeof *w->ring);
    w->q = calloc((size_t)w->size, sizeof *w->q);
    for (int i = w->size - 1; i >= 0; i--)
        w->free_slot[w->n_free++] = i;
    if (!w->ring || !w->q || tn_bitset_init(&w->hinted, pr->space.n_valid) != 0 ||
        tn_bitset_init(&w->queued, pr->space.n_valid) != 0) {
        fprintf(stderr, "autotune: out of memory\n");
        return -1;
    }
    return 0;
}

/* Drops what is still in flight (running compiles are kept) and frees. */
static void window_close(tn_ctx *c, tn_window *w)
{
    while (w->q_len > 0) {
        tn_item *it = w->q[w->q_head];
        w->q_head = (w->q_head + 1) % w->size;
        w->q_len--;
        item_drop(c, it);
    }
    tn_bitset_free(&w->hinted);
    tn_bitset_free(&w->queued);
    free(w->ring);
    free(w->q);
}

/* 1 if a result of config is stored for the problem on this GPU or, in a
 * group, on any GPU of it (resume: nothing is measured twice); -1 on a
 * database error. */
static int stored_anywhere(tn_ctx *c, const tn_prob *pr, const char *config)
{
    if (pr->n_peers <= 1)
        return db_has_result(c->d, c->dev.uuid, pr->fam->name, pr->hash, pr->p, config);
    for (int g = 0; g < pr->n_peers; g++) {
        int has = db_has_result(c->d, pr->peer_uuid[g], pr->fam->name, pr->hash, pr->p, config);
        if (has != 0)
            return has;
    }
    return 0;
}

/* Under a time budget: a configuration the strategy would propose soon (its hints) whose
 * cubin is there already (stored: a speculative compile of this run or a run-time sibling's
 * compile; or a speculative compile that finished), not proposed before; its raw index, or
 * -1. Proposing it ahead of the strategy's next pick turns a finished speculative compile
 * into an evaluation instead of a compile the GPU waits for; the strategy's own picks come
 * next (a hint is one of its best-ranked unseen points). */
static long long window_ready_hint(tn_ctx *c, tn_prob *pr, tn_window *w)
{
    if (pr->budget_s <= 0 || !pr->strat->hint || pr->second_look)
        return -1;
    long long h[16];
    int nh = pr->strat->hint(pr->st, h, 16);
    for (int i = 0; i < nh; i++) {
        long long pos = tn_space_position(&pr->space, h[i]);
        if (pos < 0 || tn_bitset_test(&w->queued, pos))
            continue;
        int cfg[TPL_MAX_PARAMS];
        char key[sizeof ((tn_item *)0)->key];
        tpl_config_from_index(pr->fam, h[i], cfg);
        tpl_binary_key(pr->fam, cfg, c->arch, key, sizeof key);
        int k = spec_find(c, key);
        if ((k >= 0 && !c->spec[k].attached && tn_pool_poll(c->pool, &c->spec[k].job)) ||
            (k < 0 && db_has_binary(c->d, key) == 1))
            return h[i];
    }
    return -1;
}

/* Proposes configurations (extras first, then the strategy's) into the
 * free slots until the window is full, the strategy is exhausted, the
 * budget is spent or an interrupt came; each starts its compile. The
 * extras (default, baselines, warm start) are proposed whatever the time
 * budget (an evaluation budget still counts them, and the configurations
 * other GPUs evaluate now), so a problem whose preparation outlasted its
 * share of time still ends with its default measured. A configuration
 * proposed before in this run or stored before is skipped. Returns 1 if
 * it stopped only because every slot is taken, else 0. */
static int window_fill(tn_ctx *c, tn_prob *pr, tn_window *w)
{
    const tpl_family *fam = pr->fam;
    while (!w->exhausted && w->n_free > 0 && tn_interrupts == 0) {
        int extra = w->next_extra < pr->n_extra;
        if (pr->budget_evals > 0 &&
            pr->stats.previously + pr->evals_this_run + (w->size - w->n_free) >=
                pr->budget_evals)
            return 0;
        if (!extra && tn_time_spent(pr))
            return 0;
        tn_item cand;
        memset(&cand, 0, sizeof cand);
        if (w->next_extra < pr->n_extra) {
            cand = pr->extras[w->next_extra++];
        } else {
            long long idx = window_ready_hint(c, pr, w);
            if (idx >= 0)
                pr->stats.ready_hints++;
            else
                idx = pr->strat->next(pr->st);
            if (idx < 0) {
                w->exhausted = 1;
                break;
            }
            cand.index = idx;
            tpl_config_from_index(fam, idx, cand.job.cfg);
            tpl_config_format(fam, cand.job.cfg, cand.config, sizeof cand.config);
        }
        /* once per run: an extra on the lattice is not proposed again */
        long long qpos = cand.index >= 0 ? tn_space_position(&pr->space, cand.index) : -1;
        if (qpos >= 0 && tn_bitset_test(&w->queued, qpos))
            continue;
        if (qpos >= 0)
            tn_bitset_set(&w->queued, qpos);
        if (stored_anywhere(c, pr, cand.config) != 0)
            continue;            /* stored before (told already), or db error */
        int slot = w->free_slot[--w->n_free];
        w->ring[slot] = cand;
        item_start(c, &w->ring[slot], &pr->stats, w);
        w->q[(w->q_head + w->q_len) % w->size] = &w->ring[slot];
        w->q_len++;
    }
    return w->n_free == 0 && !w->exhausted && tn_interrupts == 0;
}

/* The window's items whose own compile is queued or running. */
static int window_compiling(const tn_ctx *c, const tn_window *w)
{
    int n = 0;
    for (int i = 0; i < w->q_len; i++) {
        tn_item *it = w->q[(w->q_head + i) % w->size];
        n += it->submitted && !it->spec && !tn_pool_poll(c->pool, &it->job);
    }
    return n;
}

/* The oldest item of the window (q_len > 0). */
static tn_item *window_pop(tn_window *w)
{
    tn_item *it = w->q[w->q_head];
    w->q_head = (w->q_head + 1) % w->size;
    w->q_len--;
    return it;
}

/* 1 if the item's cubin is there to evaluate without waiting: read from the database,
 * stored, its own or its speculative compile finished, or (a twin) stored by the item of
 * its key ahead of it. */
static int item_ready(tn_ctx *c, const tn_window *w, tn_item *it)
{
    if (it->from_db || it->stored)
        return 1;
    if (it->spec)
        return tn_pool_poll(c->pool, &c->spec[it->spec - 1].job);
    if (it->pre)
        return tn_prefetch_ready(c, it->pre);
    if (it->twin) {
        for (int i = 0; i < w->size; i++)
            if (&w->ring[i] != it && w->ring[i].stored && strcmp(w->ring[i].key, it->key) == 0)
                return 1;
        return 0;
    }
    return it->submitted && tn_pool_poll(c->pool, &it->job);
}

/* 1 if the search may evaluate its window's items out of proposal order: under a time
 * budget (more evaluations in it), or when the strategy's proposals do not depend on the
 * results (lookahead 0: exhaustive, random), so the same configurations are proposed and
 * evaluated whatever the order. A model-guided search without a time budget keeps the
 * proposal order (its results, hence its next proposals, stay the same from run to run). */
int tn_may_reorder(double budget_s, const tn_strategy *strat)
{
    return budget_s > 0 || strat->lookahead == 0;
}

/* The item to evaluate next: the oldest, or, where tn_may_reorder allows, when the oldest
 * still waits for its compile (or a prefetch of it), the oldest one whose cubin is there
 * (a configuration sharing a compiled cubin: run-time parameters, docs/compile.md; a
 * finished prefetch), so the GPU measures while NVRTC works. q_len > 0. */
static tn_item *window_pop_next(tn_ctx *c, tn_prob *pr, tn_window *w)
{
    if (!tn_may_reorder(pr->budget_s, pr->strat) || w->q_len < 2 ||
        item_ready(c, w, w->q[w->q_head]))
        return window_pop(w);
    for (int i = 1; i < w->q_len; i++) {
        tn_item *it = w->q[(w->q_head + i) % w->size];
        if (!item_ready(c, w, it))
            continue;
        for (int j = i; j > 0; j--)          /* the older ones keep their order */
            w->q[(w->q_head + j) % w->size] = w->q[(w->q_head + j - 1) % w->size];
        w->q_head = (w->q_head + 1) % w->size;
        w->q_len--;
        pr->stats.ahead++;
        return it;
    }
    return window_pop(w);
}

/* Gives an item's slot back (released) and wakes the GPUs waiting for one. */
static void window_free(tn_ctx *c, tn_window *w, tn_item *it)
{
    item_release(it);
    it->compiling = 0;
    w->free_slot[w->n_free++] = (int)(it - w->ring);
    tn_wake(c);
}

/* Drops an item unevaluated (item_drop) and gives its slot back. */
static void window_drop(tn_ctx *c, tn_window *w, tn_item *it)
{
    item_drop(c, it);
    w->free_slot[w->n_free++] = (int)(it - w->ring);
    tn_wake(c);
}

/* Puts an item this GPU cannot measure (its worker cannot prepare the
 * inputs or start) back at the head of the shared window, its cubin kept,
 * and wakes the other GPUs. */
static void window_requeue(tn_ctx *c, tn_window *w, tn_item *it)
{
    it->submitted = it->twin = it->spec = it->pre = it->compiling = 0;   /* awaited already */
    w->q_head = (w->q_head + w->size - 1) % w->size;
    w->q[w->q_head] = it;
    w->q_len++;
    tn_wake(c);
}

/* Waits for the item's cubin and evaluates it into r: a compile error, or
 * the worker's verdict under the timing options of an extra or of a
 * searched candidate. A searched candidate whose cubin is not there when
 * the time budget runs out is not waited for (a problem's end never waits
 * for NVRTC): 1, for the caller to drop it. 0 normally, -1 if the run must
 * stop. */
static int evaluate_item(tn_ctx *c, tn_prob *pr, tn_window *w, tn_item *it, db_result *r)
{
    int compiled = it->submitted || it->spec, reused = !compiled && it->twin;
    int pre = it->pre;
    double deadline = !it->extra && pr->budget_s > 0 ? pr->t_start + pr->budget_s : 0;
    double t_await = tn_now();
    int ready = item_await(c, it, pr->win ? w : NULL, deadline);
    t_await = tn_now() - t_await;
    pr->stats.await_s += t_await;
    c->await_s += t_await;
    if (!ready)
        return 1;
    if (pre) {                       /* the prefetch's cubin, or compiled here after all */
        reused += it->from_db;
        compiled += !it->from_db;
    }
    pr->stats.compiled += compiled;
    pr->stats.reused += reused;
    tn_result_init(c, it, r);
    if (it->job.status != AT_OK) {
        snprintf(r->status, sizeof r->status, "%s", DB_COMPILE_ERROR);
        snprintf(r->error, sizeof r->error, "%s: %s", at_status_string(it->job.status),
                 it->job.log ? it->job.log : "no log");
        return 0;
    }
    snprintf(r->binary_key, sizeof r->binary_key, "%s", it->key);
    ms_options mo;
    ms_default_options(&mo);
    if (!it->extra) {
        /* searched candidates: shorter timing, abandoned when slow */
        mo.warmup = 1;
        mo.min_runs = 3;
        mo.max_runs = 40;
        mo.budget_ms = 50.0;
        if (pr->best.have)
            mo.abandon_ms = 1.5 * pr->best.median;
    }
    double t_eval = tn_now();
    int rc = evaluate(c, it, &mo, watchdog(c, &pr->best, &mo, it->extra), r);
    t_eval = tn_now() - t_eval;
    pr->stats.eval_s += t_eval;
    c->eval_s += t_eval;
    c->searched++;
    return rc;
}

/* Stores the cubin of every item of the window whose own compile has
 * finished, before it is evaluated: a run killed now (kill -9) leaves them
 * for its resume, which then compiles nothing twice. */
static void window_store_compiled(tn_ctx *c, tn_window *w)
{
    for (int i = 0; i < w->q_len; i++) {
        tn_item *it = w->q[(w->q_head + i) % w->size];
        if (it->submitted && !it->stored && !it->spec && tn_pool_poll(c->pool, &it->job) &&
            it->job.status == AT_OK) {
            tn_store_binary(c, c->fam, it->job.cfg, it->key, it->config, it->job.cubin,
                            it->job.cubin_size);
            it->stored = 1;
        }
    }
}

/* The search loop: fill the window, keep speculation going, evaluate
 * the oldest item and record it (a shared window: while it is empty and
 * other GPUs hold slots, wait); drops the rest at the end when alone.
 * 0, or -1 when out of memory, the problem is skipped (c->skip) or the run
 * became fatal. */
static int pipeline_loop(tn_ctx *c, tn_prob *pr, tn_window *w)
{
    for (;;) {
        int full = window_fill(c, pr, w);
        spec_harvest(c);
        window_store_compiled(c, w);
        if (!w->exhausted && !pr->second_look)
            spec_fill(c, pr->strat, pr->st, &pr->space, &w->hinted, window_compiling(c, w));
        if (w->q_len == 0) {
            /* other GPUs hold every slot, or hold the last ones (one that
             * cannot measure its configuration puts it back) */
            if (!c->wake || (!full && w->n_free == w->size))
                return 0;
            pthread_cond_wait(c->wake, c->lock);
            continue;
        }
        tn_item *it = window_pop_next(c, pr, w);
        if (tn_interrupts > 0 ||
            (!it->extra && tn_time_spent(pr))) {
            window_drop(c, w, it);
            if (tn_interrupts > 0)
                return 0;
            continue;
        }
        db_result r;
        int rc = evaluate_item(c, pr, w, it, &r);
        if (rc == 1) {                   /* out of time before its cubin */
            window_drop(c, w, it);
            continue;
        }
        if (rc != 0) {
            if (pr->win && (c->fatal || c->skip) && tn_interrupts == 0)
                window_requeue(c, w, it);        /* another GPU measures it */
            else
                window_free(c, w, it);
            return c->fatal || c->skip ? -1 : 0;
        }
        tn_record(c, pr, it, &r);
        window_free(c, w, it);
        if (c->fatal)
            return -1;
    }
}

int tn_pipeline_open(tn_ctx *c, tn_prob *pr, int n_gpus)
{
    tn_window *w = calloc(1, sizeof *w);
    if (!w) {
        fprintf(stderr, "autotune: out of memory\n");
        return -1;
    }
    if (window_open(c, pr, w, n_gpus) != 0) {
        window_close(c, w);
        free(w);
        return -1;
    }
    pr->win = w;
    return 0;
}

void tn_pipeline_close(tn_ctx *c, tn_prob *pr)
{
    if (!pr->win)
        return;
    window_close(c, pr->win);
    free(pr->win);
    pr->win = NULL;
}

int tn_pipeline_run(tn_ctx *c, tn_prob *pr)
{
    tn_spec_drop_other_families(c, pr->fam);
    if (pr->win)
        return pipeline_loop(c, pr, pr->win);
    tn_window w;
    int rc = -1;
    if (window_open(c, pr, &w, 1) == 0)
        rc = pipeline_loop(c, pr, &w);
    window_close(c, &w);
    return rc;
}
