/* tune.c: the tuning driver: per family and problem, a strategy proposes
 * configurations, the compile pool builds them ahead, the worker verifies
 * and times them behind a watchdog, and every result is stored as it comes. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lookup.h"
#include "strategy.h"
#include "tn.h"

/* Below this many valid configurations the automatic choice is exhaustive. */
#define TN_EXHAUSTIVE_MAX 300
/* Default budget of the guided strategy, per problem: this many
 * evaluations, or a share of TN_RUN_SECONDS proportional to the number of
 * tunable parameters of the family (bigger spaces get more time), clamped. */
#define TN_GUIDED_EVALS 120
#define TN_RUN_SECONDS 80.0
#define TN_GUIDED_MIN_S 1.5
#define TN_GUIDED_MAX_S 20.0
/* Watchdogs (seconds) for the steps that are not evaluations. */
#define TN_HELLO_TIMEOUT 120.0
#define TN_PREPARE_TIMEOUT 300.0
#define TN_FIRST_EVAL_TIMEOUT 60.0
#define TN_EXTRA_TIMEOUT 10.0
#define TN_WINDOW_MAX 64
/* Warm start: the fastest stored configuration of up to this many other
 * sizes of the family (nearest first) is evaluated before the search. */
#define TN_TRANSFER_MAX 6

static volatile sig_atomic_t tn_interrupts;
static volatile pid_t tn_worker_pid;

static void tn_on_signal(int sig)
{
    (void)sig;
    tn_interrupts++;
    if (tn_interrupts >= 2 && tn_worker_pid > 0)
        kill(-tn_worker_pid, SIGKILL);   /* second ^C: stop now */
}

long long tn_valid_space(const tpl_family *fam, const at_device_info *dev,
                         const tpl_problem *p, long long **indices)
{
    long long raw = tpl_space_size(fam);
    long long cap = 64, n = 0;
    long long *out = malloc((size_t)cap * sizeof *out);
    if (!out)
        return -1;
    for (long long i = 0; i < raw; i++) {
        int cfg[TPL_MAX_PARAMS];
        char why[256];
        tpl_config_from_index(fam, i, cfg);
        if (fam->valid && !fam->valid(cfg, dev, why, sizeof why))
            continue;
        if (p && fam->applicable && !fam->applicable(cfg, p))
            continue;
        if (n == cap) {
            long long *q = realloc(out, (size_t)(cap * 2) * sizeof *out);
            if (!q) {
                free(out);
                return -1;
            }
            out = q;
            cap *= 2;
        }
        out[n++] = i;
    }
    *indices = out;
    return n;
}

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

#define TN_SPEC_MAX 64

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
    long long respawns;
    int jobs;                        /* compile threads */
    double guided_unit_s;            /* default budget per tunable parameter */
    tn_spec spec[TN_SPEC_MAX];
    long long spec_submitted, spec_used;
    const tpl_family *vs_fam;        /* cached valid set (problem-free) */
    long long *vs_idx;
    long long vs_n;
    int fatal;                       /* the run cannot go on */
    char fatal_msg[2048];
} tn_ctx;

static int interrupted_now(void) { return tn_interrupts >= 2; }

/* Starts the worker and opens the device; fills ctx->dev. */
static at_status worker_up(tn_ctx *c, char *err, size_t errlen)
{
    at_status st = tn_proc_start(&c->worker, err, errlen);
    if (st != AT_OK)
        return st;
    tn_worker_pid = c->worker.pid;
    tn_msg m, r;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_OPEN;
    m.device = c->opt->device;
    char how[256];
    if (tn_msg_send(c->worker.to_fd, &m) != AT_OK ||
        (st = tn_msg_recv(c->worker.from_fd, &r, TN_HELLO_TIMEOUT, err, errlen)) != AT_OK) {
        tn_proc_kill(&c->worker, how, sizeof how);
        tn_worker_pid = 0;
        snprintf(err, errlen, "the worker (%s) did not start: %s", c->worker.command,
                 how[0] ? how : "no answer");
        return AT_ERR_NO_DEVICE;
    }
    if (r.type != TN_MSG_HELLO || r.status != AT_OK) {
        snprintf(err, errlen, "%s", r.text[0] ? r.text : at_status_string(r.status));
        st = r.status != AT_OK ? (at_status)r.status : AT_ERR_INTERNAL;
        tn_msg_free(&r);
        tn_proc_stop(&c->worker);
        tn_worker_pid = 0;
        return st;
    }
    if (c->dev.uuid[0] && strcmp(c->dev.uuid, r.dev.uuid) != 0) {
        snprintf(err, errlen, "the respawned worker sees another device (%s, not %s)",
                 r.dev.uuid, c->dev.uuid);
        tn_msg_free(&r);
        tn_proc_stop(&c->worker);
        tn_worker_pid = 0;
        return AT_ERR_INTERNAL;
    }
    c->dev = r.dev;
    tn_msg_free(&r);
    c->worker_up = 1;
    c->prepared = 0;
    return AT_OK;
}

static void worker_down(tn_ctx *c, char *how, size_t howlen)
{
    tn_proc_kill(&c->worker, how, howlen);
    tn_worker_pid = 0;
    c->worker_up = 0;
    c->prepared = 0;
}

/* Makes sure a worker is up with the current problem prepared. */
static at_status worker_ready(tn_ctx *c, char *err, size_t errlen)
{
    at_status st;
    if (!c->worker_up) {
        if ((st = worker_up(c, err, errlen)) != AT_OK)
            return st;
        c->respawns++;
    }
    if (c->prepared)
        return AT_OK;
    tn_msg m, r;
    memset(&m, 0, sizeof m);
    m.type = TN_MSG_PREPARE;
    snprintf(m.family, sizeof m.family, "%s", c->fam->name);
    m.problem = c->problem;
    m.seed = c->seed;
    if (tn_msg_send(c->worker.to_fd, &m) != AT_OK ||
        (st = tn_msg_recv(c->worker.from_fd, &r, TN_PREPARE_TIMEOUT, err, errlen)) != AT_OK) {
        char how[256];
        worker_down(c, how, sizeof how);
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, "%sworker lost while preparing inputs%s%s",
                 used ? "; " : "", how[0] ? ": " : "", how);
        return AT_ERR_CRASHED;
    }
    st = (at_status)r.status;
    if (st != AT_OK)
        snprintf(err, errlen, "preparing inputs failed: %.1900s", r.text);
    tn_msg_free(&r);
    if (st == AT_OK)
        c->prepared = 1;
    return st;
}

/* ---- nvidia-smi facts (clocks, temperature) from the parent ---- */

static void json_escape(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (; *s && o + 7 < len; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20) {
            o += (size_t)snprintf(out + o, len - o, "\\u%04x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o] = '\0';
}

static void gpu_facts(const char *uuid, char *out, size_t len)
{
    char cmd[256], line[256] = "";
    snprintf(cmd, sizeof cmd,
             "command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -i '%s' "
             "--query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader "
             "2>/dev/null", uuid);
    FILE *f = popen(cmd, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        pclose(f);
    }
    line[strcspn(line, "\r\n")] = '\0';
    char esc[512];
    if (line[0]) {
        json_escape(line, esc, sizeof esc);
        snprintf(out, len, "\"gpu_clocks_sm_mem_temp\": \"%.400s\"", esc);
    } else {
        snprintf(out, len, "\"gpu_clocks_sm_mem_temp\": \"unavailable: nvidia-smi "
                 "not found or failed\"");
    }
}

/* ---- one evaluation ---- */

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

static void item_release(tn_item *it)
{
    if (it->from_db)
        free(it->cubin);
    free(it->job.cubin);
    free(it->job.log);
    it->cubin = it->job.cubin = NULL;
    it->job.log = NULL;
}

static double metric_of(const tpl_family *fam, const tpl_problem *p, double ms)
{
    double flops = 0, bytes = 0;
    if (ms <= 0)
        return 0;
    fam->work(p, &flops, &bytes);
    return (fam->metric_is_flops ? flops : bytes) / (ms * 1e6);
}

static void result_init(tn_ctx *c, tn_item *it, db_result *r)
{
    memset(r, 0, sizeof *r);
    r->session_id = c->session_id;
    snprintf(r->device_uuid, sizeof r->device_uuid, "%s", c->dev.uuid);
    snprintf(r->kernel, sizeof r->kernel, "%s", c->fam->name);
    snprintf(r->source_hash, sizeof r->source_hash, "%s", tpl_source_hash(c->fam));
    r->problem = c->problem;
    snprintf(r->config, sizeof r->config, "%s", it->config);
    r->rel_error = -1;
    r->compile_ms = it->from_db ? 0.0 : it->job.compile_ms;
    r->deterministic = c->fam->deterministic ? c->fam->deterministic(it->job.cfg) : 0;
}

static void store(tn_ctx *c, db_result *r)
{
    if (db_store_result(c->d, r) == AT_OK) {
        c->stored++;
    } else {
        c->fatal = 1;
        snprintf(c->fatal_msg, sizeof c->fatal_msg, "storing a result failed: %s",
                 db_errmsg(c->d));
    }
}

/* Evaluates one compiled item in the worker and fills r (not stored).
 * Returns 0 normally, -1 if the run must stop (interrupt or fatal). */
static int evaluate(tn_ctx *c, tn_item *it, const ms_options *mo, double timeout_s,
                    db_result *r)
{
    char err[2048] = "";
    for (int attempt = 0; attempt < 2; attempt++) {
        at_status st = worker_ready(c, err, sizeof err);
        if (st != AT_OK) {
            c->fatal = 1;
            snprintf(c->fatal_msg, sizeof c->fatal_msg, "%s", err);
            return -1;
        }
        tn_msg m, rep;
        memset(&m, 0, sizeof m);
        m.type = TN_MSG_EVAL;
        snprintf(m.family, sizeof m.family, "%s", c->fam->name);
        m.problem = c->problem;
        m.n_cfg = c->fam->n_params;
        memcpy(m.cfg, it->job.cfg, sizeof m.cfg);
        m.opt = *mo;
        m.blob = it->cubin;
        m.blob_size = it->cubin_size;
        if (tn_msg_send(c->worker.to_fd, &m) != AT_OK) {
            /* died between evaluations: not this configuration's fault */
            char how[256];
            worker_down(c, how, sizeof how);
            continue;
        }
        double t0 = tn_now();
        st = tn_msg_recv(c->worker.from_fd, &rep, timeout_s, err, sizeof err);
        if (interrupted_now()) {
            char how[256];
            worker_down(c, how, sizeof how);
            if (st == AT_OK)
                tn_msg_free(&rep);
            return -1;
        }
        if (st == AT_ERR_TIMEOUT) {
            char how[256];
            worker_down(c, how, sizeof how);
            snprintf(r->status, sizeof r->status, "%s", DB_TIMEOUT);
            snprintf(r->error, sizeof r->error,
                     "no result within the %.1f s watchdog; worker killed (%s)",
                     timeout_s, how);
            return 0;
        }
        if (st != AT_OK) {
            char how[256];
            worker_down(c, how, sizeof how);
            snprintf(r->status, sizeof r->status, "%s", DB_CRASHED);
            snprintf(r->error, sizeof r->error, "worker died after %.2f s: %.200s (%.600s)",
                     tn_now() - t0, how[0] ? how : "unknown", err);
            return 0;
        }
        at_status rs = (at_status)rep.status;
        if (rep.verified)
            r->rel_error = rep.rel_error;
        snprintf(r->error, sizeof r->error, "%.1000s", rs == AT_OK ? "" : rep.text);
        if (rs == AT_OK) {
            r->time_ms = rep.timing.median_ms;
            r->time_min_ms = rep.timing.min_ms;
            r->time_max_ms = rep.timing.max_ms;
            r->runs = rep.timing.runs;
            double flops = rep.timing.flops, bytes = rep.timing.bytes;
            if (flops <= 0 && bytes <= 0)
                c->fam->work(&c->problem, &flops, &bytes);
            if (r->time_ms > 0) {
                r->gflops = flops / (r->time_ms * 1e6);
                r->gbs = bytes / (r->time_ms * 1e6);
            }
            snprintf(r->status, sizeof r->status, "%s",
                     rep.timing.abandoned ? DB_ABANDONED : DB_OK);
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
        if (rep.fatal) {
            char how[256];
            worker_down(c, how, sizeof how);
            size_t used = strlen(r->error);
            snprintf(r->error + used, sizeof r->error - used, "; worker %s",
                     how[0] ? how : "gone");
        }
        tn_msg_free(&rep);
        return 0;
    }
    snprintf(r->status, sizeof r->status, "%s", DB_CRASHED);
    snprintf(r->error, sizeof r->error, "the worker could not take the request");
    return 0;
}

/* ---- one problem ---- */

/* Share of the default run time a family's problem gets: its number of
 * parameters that take more than one value. */
static double family_weight(const tpl_family *fam)
{
    int n = 0;
    for (int p = 0; p < fam->n_params; p++)
        n += fam->params[p].n_values > 1;
    return n > 0 ? n : 1;
}

typedef struct tn_stats {
    long long valid, evaluated, previously, failures, compiled, reused;
    double seconds;
} tn_stats;

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

static int is_failure(const char *status)
{
    return strcmp(status, DB_OK) != 0 && strcmp(status, DB_ABANDONED) != 0;
}

/* Applies the noise rule: a challenger becomes the announced best only if
 * its median beats the incumbent's by more than the measured noise, the
 * larger (median - min) of the two measurements (a one-sided spread that
 * rare slow outliers, which inflate max, do not widen). */
static int beats(const tn_best *inc, double median, double min, double max)
{
    (void)max;
    if (!inc->have)
        return 1;
    double noise = fmax(inc->median - inc->min, median - min);
    return median < inc->median - noise;
}

static void best_take(tn_best *b, const db_result *r, double metric)
{
    b->have = 1;
    b->median = r->time_ms;
    b->min = r->time_min_ms;
    b->max = r->time_max_ms;
    b->metric = metric;
    snprintf(b->config, sizeof b->config, "%s", r->config);
}

static void store_binary(tn_ctx *c, const tpl_family *fam, const int *cfg, const char *key,
                         const char *config, const void *cubin, size_t size)
{
    char opts[2048];
    if (c->fatal || !cubin || !size)
        return;
    tpl_options_string(fam, cfg, c->arch, opts, sizeof opts);
    db_put_binary(c->d, key, fam->name, tpl_source_hash(fam), config, c->arch,
                  tpl_nvrtc_version(), opts, cubin, size);
}

static int spec_find(const tn_ctx *c, const char *key)
{
    for (int k = 0; k < TN_SPEC_MAX; k++)
        if (c->spec[k].active && strcmp(c->spec[k].key, key) == 0)
            return k;
    return -1;
}

/* Stores the cubins of finished speculative compiles nobody waits for. */
static void spec_harvest(tn_ctx *c)
{
    for (int k = 0; k < TN_SPEC_MAX; k++) {
        tn_spec *sp = &c->spec[k];
        if (!sp->active || sp->attached || !tn_pool_poll(c->pool, &sp->job))
            continue;
        if (sp->job.status == AT_OK)
            store_binary(c, sp->job.fam, sp->job.cfg, sp->key, sp->config, sp->job.cubin,
                         sp->job.cubin_size);
        free(sp->job.cubin);
        free(sp->job.log);
        sp->job.cubin = NULL;
        sp->job.log = NULL;
        sp->active = 0;
    }
}

/* Keeps up to `jobs` speculative compiles of hinted configurations going. */
static void spec_fill(tn_ctx *c, const tn_strategy *strat, void *st, const tn_space *space,
                      tn_bitset *hinted)
{
    if (!strat->hint || c->fatal || tn_interrupts)
        return;
    int active = 0;
    for (int k = 0; k < TN_SPEC_MAX; k++)
        active += c->spec[k].active;
    if (active >= c->jobs)
        return;
    long long h[64];
    int nh = strat->hint(st, h, 64);
    for (int i = 0; i < nh && active < c->jobs && active < TN_SPEC_MAX; i++) {
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
        active++;
    }
}

/* End of the run: drop queued speculative compiles, keep finished ones. */
static void spec_finish(tn_ctx *c)
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
    spec_harvest(c);
}

/* Waits for an item's cubin (its own compile or a speculative one) and
 * stores a new cubin in the database. */
static void item_await(tn_ctx *c, tn_item *it)
{
    if (it->twin) {
        /* the item ahead stored its cubin; if it failed or was dropped,
         * compile here (a compile error then comes with its own log) */
        it->twin = 0;
        void *bin = NULL;
        size_t size = 0;
        if (db_get_binary(c->d, it->key, &bin, &size) == AT_OK && size > 0) {
            it->cubin = bin;
            it->cubin_size = size;
            it->from_db = 1;
            it->job.status = AT_OK;
            it->job.done = 1;
            return;
        }
        tn_pool_submit_urgent(c->pool, &it->job);
        it->submitted = 1;
    }
    if (it->spec) {
        tn_spec *sp = &c->spec[it->spec - 1];
        tn_pool_wait(c->pool, &sp->job);
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
    } else if (it->submitted) {
        tn_pool_wait(c->pool, &it->job);
    }
    if (it->submitted && it->job.status == AT_OK) {
        it->cubin = it->job.cubin;
        it->cubin_size = it->job.cubin_size;
        store_binary(c, c->fam, it->job.cfg, it->key, it->config, it->cubin, it->cubin_size);
    }
}

/* An item dropped unevaluated: a queued compile is cancelled, a running one
 * finished and kept; a speculative one is left to the harvest. */
static void item_drop(tn_ctx *c, tn_item *it)
{
    if (it->spec) {
        c->spec[it->spec - 1].attached = 0;
        it->spec = 0;
    } else if (it->submitted && !tn_pool_cancel(c->pool, &it->job)) {
        item_await(c, it);
    }
    item_release(it);
}

/* Prepares an item: binary from the database, a speculative compile
 * already under way, or a compile job ahead of the speculative ones. */
static void item_start(tn_ctx *c, tn_item *it, tn_stats *stats, tn_item *const *queue,
                       int q_head, int q_len, int window)
{
    snprintf(it->job.arch, sizeof it->job.arch, "%s", c->arch);
    it->job.fam = c->fam;
    tpl_binary_key(c->fam, it->job.cfg, c->arch, it->key, sizeof it->key);
    for (int i = 0; i < q_len; i++) {
        const tn_item *ahead = queue[(q_head + i) % window];
        if ((ahead->submitted || ahead->spec || ahead->twin) &&
            strcmp(ahead->key, it->key) == 0) {
            it->twin = 1;
            return;
        }
    }
    int k = spec_find(c, it->key);
    if (k >= 0 && !c->spec[k].attached) {
        c->spec[k].attached = 1;
        it->spec = k + 1;
        tn_pool_promote(c->pool, &c->spec[k].job);
        return;
    }
    void *bin = NULL;
    size_t size = 0;
    if (db_get_binary(c->d, it->key, &bin, &size) == AT_OK && size > 0) {
        it->cubin = bin;
        it->cubin_size = size;
        it->from_db = 1;
        it->job.status = AT_OK;
        it->job.done = 1;
        stats->reused++;
        return;
    }
    tn_pool_submit_urgent(c->pool, &it->job);
    it->submitted = 1;
}

/* Warm start from other sizes: for each other problem of fam stored for
 * this device (same source), its fastest ok configuration, nearest problem
 * first (lk_shape_distance, the runtime's nearest-shape measure), each text
 * once, at most max. What won nearby tends to win here, and a strong
 * incumbent early lets the search abandon slow candidates sooner. Returns
 * how many were written to out (0 when out of memory: it is only a hint). */
static int transfer_configs(const tpl_problem *p, const char *hash, const db_result *rows,
                            int n_rows, char (*out)[TPL_CONFIG_LEN], int max)
{
    int *best = malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof *best);
    double *dist = malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof *dist);
    int n_best = 0, n_out = 0;
    if (!best || !dist) {
        free(best);
        free(dist);
        return 0;
    }
    for (int i = 0; i < n_rows; i++) {
        const db_result *r = &rows[i];
        if (strcmp(r->status, DB_OK) != 0 || strcmp(r->source_hash, hash) != 0 ||
            tpl_problem_equal(&r->problem, p))
            continue;
        int k = 0;
        while (k < n_best && !tpl_problem_equal(&rows[best[k]].problem, &r->problem))
            k++;
        if (k == n_best) {
            dist[n_best] = lk_shape_distance(p, &r->problem);
            best[n_best++] = i;
        } else if (r->time_ms < rows[best[k]].time_ms) {
            best[k] = i;
        }
    }
    /* nearest first (insertion sort: a family has tens of sizes) */
    for (int i = 1; i < n_best; i++)
        for (int j = i; j > 0 && dist[j] < dist[j - 1]; j--) {
            double td = dist[j];
            int tb = best[j];
            dist[j] = dist[j - 1];
            best[j] = best[j - 1];
            dist[j - 1] = td;
            best[j - 1] = tb;
        }
    for (int i = 0; i < n_best && n_out < max; i++) {
        int dup = 0;
        for (int k = 0; k < n_out; k++)
            dup |= strcmp(out[k], rows[best[i]].config) == 0;
        if (!dup)
            snprintf(out[n_out++], TPL_CONFIG_LEN, "%s", rows[best[i]].config);
    }
    free(best);
    free(dist);
    return n_out;
}

static int tune_problem(tn_ctx *c, const tpl_family *fam, const tpl_problem *p)
{
    const tn_options *o = c->opt;
    char size[64];
    tn_format_size(p, size, sizeof size);
    c->fam = fam;
    c->problem = *p;
    c->prepared = 0;
    tn_stats stats;
    memset(&stats, 0, sizeof stats);
    double t_start = tn_now();

    if (c->vs_fam != fam) {
        free(c->vs_idx);
        c->vs_idx = NULL;
        c->vs_fam = NULL;
        c->vs_n = tn_valid_space(fam, &c->dev, NULL, &c->vs_idx);
        if (c->vs_n < 0) {
            fprintf(stderr, "autotune: out of memory enumerating %s\n", fam->name);
            return -1;
        }
        c->vs_fam = fam;
    }
    long long *valid = malloc((size_t)(c->vs_n + 1) * sizeof *valid);
    long long n_valid = 0;
    if (!valid) {
        fprintf(stderr, "autotune: out of memory enumerating %s\n", fam->name);
        return -1;
    }
    for (long long k = 0; k < c->vs_n; k++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, c->vs_idx[k], cfg);
        if (!fam->applicable || fam->applicable(cfg, p))
            valid[n_valid++] = c->vs_idx[k];
    }
    tn_space space = {fam, n_valid, valid};
    stats.valid = n_valid;

    /* strategy and budget */
    const tn_strategy *strat = o->strategy ? tn_strategy_find(o->strategy) : NULL;
    double budget_s = o->budget_s;
    long long budget_evals = o->budget_evals;
    if (!strat)
        strat = n_valid <= TN_EXHAUSTIVE_MAX ? &tn_strategy_exhaustive
                                           : tn_strategy_find("guided");
    if (strat != &tn_strategy_exhaustive && budget_s <= 0 && budget_evals <= 0) {
        /* random or guided without --budget: the default share */
        budget_s = c->guided_unit_s * family_weight(fam);
        if (budget_s < TN_GUIDED_MIN_S)
            budget_s = TN_GUIDED_MIN_S;
        if (budget_s > TN_GUIDED_MAX_S)
            budget_s = TN_GUIDED_MAX_S;
        budget_evals = TN_GUIDED_EVALS;
    }
    void *st = strat->create(&space, c->seed);
    if (!st) {
        free(valid);
        fprintf(stderr, "autotune: out of memory\n");
        return -1;
    }

    /* extras: the default configuration, every baseline, and the winners
     * of other sizes (transfer_configs), evaluated before the search */
    int n_extra = 0, n_transfer = 0, n_transferred = 0;
    tn_item *extras = calloc((size_t)fam->n_baselines + 1 + TN_TRANSFER_MAX, sizeof *extras);
    char transfer[TN_TRANSFER_MAX][TPL_CONFIG_LEN];
    const char *hash = tpl_source_hash(fam);
    tn_best best;
    memset(&best, 0, sizeof best);

    /* results stored before: told to the strategy, counted, best known */
    db_result *old = NULL;
    int n_old = 0;
    if (db_results(c->d, c->dev.uuid, fam->name, &old, &n_old) == AT_OK) {
        for (int i = 0; i < n_old; i++) {
            db_result *r = &old[i];
            if (strcmp(r->source_hash, hash) != 0 || !tpl_problem_equal(&r->problem, p))
                continue;
            int cfg[TPL_MAX_PARAMS];
            char perr[256];
            stats.previously++;
            int ok = strcmp(r->status, DB_OK) == 0;
            int measured = !is_failure(r->status);
            if (ok && beats(&best, r->time_ms, r->time_min_ms, r->time_max_ms))
                best_take(&best, r, metric_of(fam, p, r->time_ms));
            if (tpl_config_parse(fam, r->config, cfg, perr, sizeof perr) != AT_OK)
                continue;
            long long idx = tpl_config_to_index(fam, cfg);
            if (idx >= 0 && tn_space_position(&space, idx) >= 0)
                strat->tell(st, idx, measured ? r->time_ms : INFINITY);
        }
        n_transfer = transfer_configs(p, hash, old, n_old, transfer, TN_TRANSFER_MAX);
    }
    free(old);

    for (int b = -1; extras && b < fam->n_baselines + n_transfer; b++) {
        const char *text = b < 0 ? fam->default_config
                           : b < fam->n_baselines ? fam->baselines[b].config
                                                  : transfer[b - fam->n_baselines];
        tn_item *it = &extras[n_extra];
        char perr[256], why[256];
        if (!text || tpl_config_parse(fam, text, it->job.cfg, perr, sizeof perr) != AT_OK)
            continue;
        if ((fam->valid && !fam->valid(it->job.cfg, &c->dev, why, sizeof why)) ||
            (fam->applicable && !fam->applicable(it->job.cfg, p)))
            continue;
        tpl_config_format(fam, it->job.cfg, it->config, sizeof it->config);
        int dup = 0;
        for (int k = 0; k < n_extra; k++)
            dup |= strcmp(extras[k].config, it->config) == 0;
        if (dup)
            continue;
        it->index = tpl_config_to_index(fam, it->job.cfg);
        it->extra = 1;
        n_transferred += b >= fam->n_baselines;
        if (it->index < 0 || tn_space_position(&space, it->index) < 0)
            stats.valid++;           /* off-lattice extra */
        n_extra++;
    }

    printf("%s %s: %lld valid configurations, strategy %s", fam->name, size,
           stats.valid, strat->name);
    if (budget_evals > 0)
        printf(", budget %lld evaluations", budget_evals);
    if (budget_s > 0)
        printf("%s %.1f s", budget_evals > 0 ? " or" : ", budget", budget_s);
    if (stats.previously)
        printf(", %lld stored before", stats.previously);
    if (n_transferred)
        printf(", %d winners of other sizes first", n_transferred);
    printf("\n");
    fflush(stdout);

    tn_progress pg;
    long long total = budget_evals > 0 && budget_evals < stats.valid ? budget_evals : stats.valid;
    tn_progress_begin(&pg, fam, p, total);
    pg.done = pg.base = stats.previously;
    pg.budget_s = budget_s;
    if (best.have) {
        pg.best_ms = best.median;
        pg.best_metric = best.metric;
    }
    if (o->quiet)
        pg.tty = 0;

    int window = strat->lookahead > 0 ? strat->lookahead : 2 * c->jobs + 2;
    if (window > TN_WINDOW_MAX)
        window = TN_WINDOW_MAX;
    tn_item *ring = calloc((size_t)window, sizeof *ring);
    tn_item **q = calloc((size_t)window, sizeof *q);
    int q_head = 0, q_len = 0, next_extra = 0, exhausted = 0, stop = 0;
    int rc = 0;
    if (!ring || !q || !extras) {
        fprintf(stderr, "autotune: out of memory\n");
        rc = -1;
        stop = 1;
    }
    int free_slot[TN_WINDOW_MAX];
    int n_free = 0;
    for (int i = window - 1; i >= 0; i--)
        free_slot[n_free++] = i;

    tn_bitset hinted, queued;
    memset(&queued, 0, sizeof queued);
    if (tn_bitset_init(&hinted, n_valid) != 0 || tn_bitset_init(&queued, n_valid) != 0) {
        fprintf(stderr, "autotune: out of memory\n");
        rc = -1;
        stop = 1;
    }
    long long evals_this_run = 0;
    while (!stop) {
        /* fill the window */
        while (!exhausted && n_free > 0 && tn_interrupts == 0) {
            if (budget_evals > 0 && stats.previously + evals_this_run + q_len >= budget_evals)
                break;
            if (budget_s > 0 && tn_now() - t_start >= budget_s)
                break;
            tn_item cand;
            memset(&cand, 0, sizeof cand);
            if (next_extra < n_extra) {
                cand = extras[next_extra++];
            } else {
                long long idx = strat->next(st);
                if (idx < 0) {
                    exhausted = 1;
                    break;
                }
                cand.index = idx;
                tpl_config_from_index(fam, idx, cand.job.cfg);
                tpl_config_format(fam, cand.job.cfg, cand.config, sizeof cand.config);
            }
            /* once per run: an extra on the lattice is not proposed again */
            long long qpos = cand.index >= 0 ? tn_space_position(&space, cand.index) : -1;
            if (qpos >= 0 && tn_bitset_test(&queued, qpos))
                continue;
            if (qpos >= 0)
                tn_bitset_set(&queued, qpos);
            int has = db_has_result(c->d, c->dev.uuid, fam->name, hash, p, cand.config);
            if (has != 0)
                continue;            /* stored before (told already), or db error */
            int slot = free_slot[--n_free];
            ring[slot] = cand;
            item_start(c, &ring[slot], &stats, q, q_head, q_len, window);
            q[(q_head + q_len) % window] = &ring[slot];
            q_len++;
        }
        spec_harvest(c);
        if (!exhausted)
            spec_fill(c, strat, st, &space, &hinted);
        if (q_len == 0)
            break;
        tn_item *it = q[q_head];
        q_head = (q_head + 1) % window;
        q_len--;
        int slot = (int)(it - ring);

        int stop_now = tn_interrupts > 0 ||
                       (budget_s > 0 && tn_now() - t_start >= budget_s && !it->extra);
        if (stop_now) {
            item_drop(c, it);
            free_slot[n_free++] = slot;
            if (tn_interrupts > 0)
                stop = 1;
            continue;
        }
        if (it->submitted || it->spec)
            stats.compiled++;
        else if (it->twin)
            stats.reused++;
        item_await(c, it);
        db_result r;
        result_init(c, it, &r);
        if (it->job.status != AT_OK) {
            snprintf(r.status, sizeof r.status, "%s", DB_COMPILE_ERROR);
            snprintf(r.error, sizeof r.error, "%s: %s", at_status_string(it->job.status),
                     it->job.log ? it->job.log : "no log");
        } else {
            snprintf(r.binary_key, sizeof r.binary_key, "%s", it->key);
            ms_options mo;
            ms_default_options(&mo);
            if (!it->extra) {
                /* searched candidates: shorter timing, abandoned when slow */
                mo.warmup = 1;
                mo.min_runs = 3;
                mo.max_runs = 40;
                mo.budget_ms = 50.0;
                if (best.have)
                    mo.abandon_ms = 1.5 * best.median;
            }
            if (evaluate(c, it, &mo, watchdog(c, &best, &mo, it->extra), &r) != 0) {
                item_release(it);
                free_slot[n_free++] = slot;
                stop = 1;
                if (c->fatal)
                    rc = -1;
                break;
            }
        }
        store(c, &r);
        evals_this_run++;
        stats.evaluated++;
        int failed = is_failure(r.status);
        if (failed)
            stats.failures++;
        if (it->index >= 0 && tn_space_position(&space, it->index) >= 0)
            strat->tell(st, it->index, is_failure(r.status) ? INFINITY : r.time_ms);
        if (strcmp(r.status, DB_OK) == 0 &&
            beats(&best, r.time_ms, r.time_min_ms, r.time_max_ms)) {
            best_take(&best, &r, metric_of(fam, p, r.time_ms));
            pg.best_ms = best.median;
            pg.best_metric = best.metric;
        }
        pg.done++;
        pg.failures += failed;
        tn_progress_update(&pg, 0);
        item_release(it);
        free_slot[n_free++] = slot;
        if (c->fatal) {
            rc = -1;
            stop = 1;
        }
    }
    /* drop what is still in flight; running compiles are kept */
    while (q_len > 0) {
        tn_item *it = q[q_head];
        q_head = (q_head + 1) % window;
        q_len--;
        item_drop(c, it);
    }
    tn_bitset_free(&hinted);
    tn_bitset_free(&queued);
    tn_progress_end(&pg);
    stats.seconds = tn_now() - t_start;

    const char *unit = fam->metric_is_flops ? "GFLOP/s" : "GB/s";
    printf("%s %s: %lld evaluated", fam->name, size, stats.evaluated);
    if (stats.previously)
        printf(" (+%lld stored before)", stats.previously);
    printf(", %lld failed, %lld compiled, %lld cubins reused, %.1f s", stats.failures,
           stats.compiled, stats.reused, stats.seconds);
    if (stats.evaluated > 0)
        printf(" (%.0f ms per configuration)", stats.seconds * 1000.0 / (double)stats.evaluated);
    printf("\n");
    if (best.have)
        printf("  best %.1f %s (%.4f ms, min %.4f, max %.4f) %s\n", best.metric, unit,
               best.median, best.min, best.max, best.config);
    else
        printf("  no configuration passed\n");
    fflush(stdout);

    free(ring);
    free(q);
    free(extras);
    strat->destroy(st);
    free(valid);
    return rc;
}

/* ---- the whole run ---- */

static int family_selected(const tn_options *o, const tpl_family *fam)
{
    if (o->n_families == 0)
        return !fam->hidden;
    for (int i = 0; i < o->n_families; i++)
        if (o->families[i] == fam)
            return 1;
    return 0;
}

/* Problems of fam for this run (the --size or the defaults). */
static int problems_of(const tn_options *o, const tpl_family *fam, const tpl_problem **list)
{
    if (o->have_size) {
        if (!tpl_family_accepts(fam, &o->size))
            return 0;
        *list = &o->size;
        return 1;
    }
    *list = fam->tuning_problems;
    return fam->n_tuning_problems;
}

int tn_tune(const tn_options *o)
{
    tn_ctx c;
    memset(&c, 0, sizeof c);
    c.opt = o;
    c.worker.pid = -1;
    c.seed = o->seed;
    c.jobs = o->jobs > 0 ? o->jobs : tn_cpu_count();
    tn_interrupts = 0;
    tn_worker_pid = 0;

    /* what will be tuned */
    printf("tuning sizes:");
    int n_problems = 0;
    double weights = 0;
    for (int i = 0; i < tpl_family_count(); i++) {
        const tpl_family *fam = tpl_family_at(i);
        const tpl_problem *list = NULL;
        if (!family_selected(o, fam))
            continue;
        int n = problems_of(o, fam, &list);
        if (n == 0)
            continue;
        printf("%s %s", n_problems ? ";" : "", fam->name);
        for (int k = 0; k < n; k++) {
            char s[64];
            tn_format_size(&list[k], s, sizeof s);
            printf("%s%s", k ? ", " : " ", s);
        }
        n_problems += n;
        weights += n * family_weight(fam);
    }
    printf("\n");
    if (n_problems == 0) {
        fprintf(stderr, "autotune: no kernel has problems of that size; see autotune --help\n");
        return 2;
    }
    c.guided_unit_s = TN_RUN_SECONDS / (weights > 0 ? weights : 1.0);
    printf("seed %llu (--seed %llu repeats the inputs and the search)\n", c.seed, c.seed);
    fflush(stdout);

    char path[4096], err[4096] = "";
    if (o->db_path)
        snprintf(path, sizeof path, "%s", o->db_path);
    else
        db_default_path(path, sizeof path);

    struct sigaction sa, old_int, old_term, old_pipe;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tn_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);

    int exit_code = 0;
    at_status st = worker_up(&c, err, sizeof err);
    if (st != AT_OK) {
        fprintf(stderr, "autotune: no CUDA driver/device: %s\n", err);
        exit_code = 1;
        goto restore;
    }
    if (db_open(&c.d, path, 1, err, sizeof err) != AT_OK) {
        fprintf(stderr, "autotune: cannot open the database %s: %s\n", path, err);
        exit_code = 1;
        goto out;
    }
    if (c.dev.arch[0])
        snprintf(c.arch, sizeof c.arch, "%s", c.dev.arch);
    else
        tpl_arch_name(c.dev.cc_major, c.dev.cc_minor, c.arch, sizeof c.arch);
    printf("device %d: %s (%s, %d SMs, %.1f GiB), database %s\n", o->device, c.dev.name,
           c.arch, c.dev.sm_count, (double)c.dev.memory_bytes / (1 << 30), path);
    fflush(stdout);
    if (db_put_device(c.d, &c.dev, tpl_nvrtc_version()) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(c.d));
        exit_code = 1;
        goto out;
    }
    char gpu[512], facts[4096], cmd_esc[256];
    gpu_facts(c.dev.uuid, gpu, sizeof gpu);
    json_escape(o->strategy ? o->strategy : "auto", cmd_esc, sizeof cmd_esc);
    snprintf(facts, sizeof facts,
             "{\"strategy\": \"%s\", \"budget_s\": %g, \"budget_evals\": %lld, "
             "\"seed\": %llu, \"jobs\": %d, \"timeout_s\": %g, \"nvrtc\": \"%s\", %s}",
             cmd_esc, o->budget_s, o->budget_evals, c.seed, c.jobs, o->timeout_s,
             tpl_nvrtc_version(), gpu);
    if (db_begin_session(c.d, c.dev.uuid, o->command, facts, &c.session_id) != AT_OK) {
        fprintf(stderr, "autotune: %s\n", db_errmsg(c.d));
        exit_code = 1;
        goto out;
    }

    /* device ceiling: copy bandwidth */
    {
        tn_msg m, r;
        memset(&m, 0, sizeof m);
        m.type = TN_MSG_CEILING;
        if (tn_msg_send(c.worker.to_fd, &m) == AT_OK &&
            tn_msg_recv(c.worker.from_fd, &r, 60.0, err, sizeof err) == AT_OK) {
            if (r.status == AT_OK && r.value > 0) {
                db_measurement dm;
                memset(&dm, 0, sizeof dm);
                snprintf(dm.device_uuid, sizeof dm.device_uuid, "%s", c.dev.uuid);
                snprintf(dm.kernel, sizeof dm.kernel, "device");
                snprintf(dm.name, sizeof dm.name, "copy_bandwidth");
                dm.problem.n_dims = 1;
                dm.problem.dims[0] = 256ll << 20;
                dm.time_ms = r.value2;
                dm.gbs = r.value;
                dm.rel_error = -1;
                snprintf(dm.note, sizeof dm.note, "%.200s", r.text);
                db_put_measurement(c.d, &dm);
                printf("copy bandwidth: %.0f GB/s\n", r.value);
            } else {
                printf("copy bandwidth: not measured (%s)\n", r.text);
            }
            tn_msg_free(&r);
        } else {
            char how[256];
            worker_down(&c, how, sizeof how);
        }
    }

    c.pool = tn_pool_create(c.jobs);
    if (!c.pool) {
        fprintf(stderr, "autotune: could not start compile threads\n");
        exit_code = 1;
        goto out;
    }
    double t0 = tn_now();
    for (int i = 0; i < tpl_family_count() && !tn_interrupts && !c.fatal; i++) {
        const tpl_family *fam = tpl_family_at(i);
        const tpl_problem *list = NULL;
        if (!family_selected(o, fam))
            continue;
        int n = problems_of(o, fam, &list);
        for (int k = 0; k < n && !tn_interrupts && !c.fatal; k++)
            if (tune_problem(&c, fam, &list[k]) != 0 && !c.fatal)
                exit_code = 1;
    }
    spec_finish(&c);
    double total = tn_now() - t0;

    char end_facts[1024];
    gpu_facts(c.dev.uuid, gpu, sizeof gpu);
    snprintf(end_facts, sizeof end_facts,
             "{\"seconds\": %.3f, \"results_stored\": %lld, \"worker_respawns\": %lld, %s}",
             total, c.stored, c.respawns, gpu);
    const char *outcome = tn_interrupts ? "interrupted" : c.fatal ? "failed" : "complete";
    db_end_session(c.d, c.session_id, end_facts, outcome);
    if (tn_interrupts) {
        printf("interrupted: %lld results stored; rerun the same command to resume\n",
               c.stored);
        exit_code = 130;
    } else if (c.fatal) {
        fprintf(stderr, "autotune: %s\n", c.fatal_msg);
        exit_code = 1;
    } else {
        printf("done: %lld results stored in %.1f s (%lld worker restarts", c.stored,
               total, c.respawns);
        if (c.spec_submitted)
            printf(", %lld speculative compiles, %lld of them used", c.spec_submitted,
                   c.spec_used);
        printf(")\n");
    }
out:
    tn_pool_destroy(c.pool);
    if (c.worker_up)
        tn_proc_stop(&c.worker);
    else if (c.worker.pid > 0)
        tn_proc_kill(&c.worker, NULL, 0);
    tn_worker_pid = 0;
    db_close(c.d);
    free(c.vs_idx);
restore:
    fflush(stdout);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    return exit_code;
}
