/* api.c: the public runtime (autotune.h): handles, the lookup chain
 * (exact -> nearest tuned shape -> same architecture -> built-in default),
 * the in-memory plan cache, trials, the vendor candidate, and the entry
 * points of the reductions and the solver (the GEMM calls: gemm.c). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "args.h"
#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "exec.h"
#include "handle.h"
#include "lookup.h"
#include "record.h"
#include "tpl.h"
#include "trial.h"
#include "vendor.h"

struct at_trial;

/* A kernel ready to launch for one (family, shape, mode). */

at_status ah_fail(at_handle *h, at_status s, const char *fmt, ...)
{
    if (h) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
        va_end(ap);
    }
    return s;
}

static at_status cuda_fail(at_handle *h, CUresult rc, const char *call)
{
    if (h)
        cudrv_describe(h->cu, rc, call, h->errmsg, sizeof h->errmsg);
    return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
}

const char *at_errmsg(const at_handle *h)
{
    return h ? h->errmsg : "no handle";
}

/* ---------------- handles ---------------- */

#ifndef AT_SHARE_DIR
#define AT_SHARE_DIR "/usr/local/share/autotune"
#endif

/* The shipped databases of $AUTOTUNE_SHIPPED_DB (paths separated by ':',
 * searched in that order), else AT_SHARE_DIR/tuning.db where it exists.
 * One that cannot be used is skipped, named in h's message after the
 * user's database's message, if any. */
static void add_shipped(at_handle *h)
{
    const char *env = getenv("AUTOTUNE_SHIPPED_DB");
    char def[4200], msg[2048];
    if (!env) {
        snprintf(def, sizeof def, "%s/tuning.db", AT_SHARE_DIR);
        if (access(def, F_OK) != 0)
            return;
        env = def;
    }
    lk_open_shipped(env, h->layers, &h->n_layers, 1 + AT_MAX_READONLY_DBS, msg, sizeof msg);
    if (msg[0]) {
        size_t used = strlen(h->errmsg);
        snprintf(h->errmsg + used, sizeof h->errmsg - used, "%s%.1500s", used ? "; " : "", msg);
    }
}

at_status at_add_readonly_db(at_handle *h, const char *path)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    if (!path || !*path)
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_add_readonly_db: no path");
    if (h->n_layers >= 1 + AT_MAX_READONLY_DBS)
        return ah_fail(h, AT_ERR_INVALID_ARG, "at most %d read-only databases per handle",
                    AT_MAX_READONLY_DBS);
    char err[1024] = "";
    db *d = NULL;
    at_status s = db_open(&d, path, DB_OPEN_SHIPPED, err, sizeof err);
    if (s != AT_OK)
        return ah_fail(h, s, "read-only tuning database %.1000s not used: %.900s", path, err);
    h->layers[h->n_layers++] = d;
    ah_call_forget(h);          /* a problem's family may come from this layer now */
    return AT_OK;
}

at_status at_create(at_handle **out, int device, const char *db_path)
{
    if (!out)
        return AT_ERR_INVALID_ARG;
    *out = NULL;
    if (device < 0)
        return AT_ERR_INVALID_ARG;
    at_handle *h = calloc(1, sizeof *h);
    if (!h)
        return AT_ERR_NO_MEMORY;
    h->trial_max = AT_TRIALS_DEFAULT;
    const char *vendor_env = getenv("AUTOTUNE_VENDOR");
    int vendor_off = vendor_env && (strcmp(vendor_env, "off") == 0 || strcmp(vendor_env, "0") == 0);
    h->vendor_mode = vendor_off ? AT_VENDOR_OFF : AT_VENDOR_ON;
    const char *trial_log = getenv("AUTOTUNE_TRIAL_LOG");
    if (trial_log)
        snprintf(h->trial_log, sizeof h->trial_log, "%s", trial_log);
    at_status s;
    char msg[512];
    h->cu = cudrv_get(&s, msg, sizeof msg);
    if (!h->cu) {
        free(h);
        return s;
    }
    if ((s = cudrv_device_info(h->cu, device, &h->info, msg, sizeof msg)) != AT_OK) {
        free(h);
        return s;
    }
    CUresult rc = h->cu->DeviceGet(&h->device, device);
    if (rc == CUDA_SUCCESS)
        rc = h->cu->DevicePrimaryCtxRetain(&h->ctx, h->device);
    if (rc != CUDA_SUCCESS) {
        free(h);
        return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
    }
    if (db_path && *db_path)
        snprintf(h->db_path, sizeof h->db_path, "%s", db_path);
    else
        db_default_path(h->db_path, sizeof h->db_path);
    /* The database is also the cubin cache, so it is created when missing;
     * one that cannot be written is read (lookups, stored cubins) and never
     * written; one that cannot be created just means no cache. */
    char err[1024] = "";
    s = lk_open_db(h->db_path, &h->db, err, sizeof err);
    if (s == AT_ERR_DB_CORRUPT) {
        h->cu->DevicePrimaryCtxRelease(h->device);
        free(h);
        return s;
    }
    if (s != AT_OK) {
        h->db = NULL;
        snprintf(h->errmsg, sizeof h->errmsg,
                 "tuning database %.1000s not usable (%.900s): built-in defaults only", h->db_path, err);
    }
    h->layers[h->n_layers++] = h->db;
    add_shipped(h);
    *out = h;
    return AT_OK;
}

/* Makes the handle's primary context current for one call: pushed (and
 * popped by ctx_leave) only when the calling thread has another one
 * current, so the usual case costs one query, not a push and a pop. */
static at_status ctx_enter(at_handle *h, int *pushed)
{
    CUcontext current = NULL;
    *pushed = 0;
    if (h->cu->CtxGetCurrent(&current) == CUDA_SUCCESS && current == h->ctx)
        return AT_OK;
    CUresult rc = h->cu->CtxPushCurrent(h->ctx);
    if (rc != CUDA_SUCCESS)
        return cuda_fail(h, rc, "cuCtxPushCurrent");
    *pushed = 1;
    return AT_OK;
}

static void ctx_leave(at_handle *h, int pushed)
{
    CUcontext popped;
    if (pushed)
        h->cu->CtxPopCurrent(&popped);
}

static void trial_free(at_handle *h, at_plan *pl, int keep);

static void plan_free(at_handle *h, at_plan *p)
{
    if (!p)
        return;
    trial_free(h, p, -1);
    ex_release(&p->exec);
    if (p->module)
        h->cu->ModuleUnload(p->module);
    free(p);
}

at_status at_destroy(at_handle *h)
{
    if (!h)
        return AT_OK;
    rec_batch rb = {0};         /* problems served below the exact level */
    for (size_t i = 0; i < h->cap_plans; i++)
        if (h->plans[i])
            rec_add(&rb, h->plans[i]->fam, &h->plans[i]->problem, h->plans[i]->level,
                    h->plans[i]->calls, h->plans[i]->born, &h->info);
    rec_write(&rb, h->db, &h->info);
    int pushed;
    if (ctx_enter(h, &pushed) == AT_OK) {
        h->cu->StreamSynchronize(h->stream);
        for (size_t i = 0; i < h->cap_plans; i++)
            plan_free(h, h->plans[i]);
        ms_vendor_close(h->vendor);
        ctx_leave(h, pushed);
    }
    free(h->plans);
    free(h->calls);
    for (int i = 1; i < h->n_layers; i++)
        db_close(h->layers[i]);
    db_close(h->db);
    h->cu->DevicePrimaryCtxRelease(h->device);
    free(h);
    return AT_OK;
}

at_status at_set_stream(at_handle *h, CUstream stream)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    h->stream = stream;
    for (size_t i = 0; i < h->cap_plans; i++)
        if (h->plans[i])
            h->plans[i]->exec.stream = stream;
    return AT_OK;
}

at_status at_set_deterministic(at_handle *h, int deterministic)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    h->deterministic = deterministic ? 1 : 0;
    return AT_OK;
}

at_status at_set_math_mode(at_handle *h, at_math mode)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    if (mode != AT_MATH_DEFAULT && mode != AT_MATH_TF32)
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_set_math_mode: unknown math mode %d", (int)mode);
    h->math = mode;
    return AT_OK;
}

at_status at_set_trials(at_handle *h, int candidates)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    if (candidates < 0 || candidates > AT_TRIALS_MAX)
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_set_trials: %d candidates (0 to %d)", candidates,
                    AT_TRIALS_MAX);
    h->trial_max = candidates;
    return AT_OK;
}

at_status at_set_vendor(at_handle *h, int mode)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    if (mode != AT_VENDOR_OFF && mode != AT_VENDOR_ON)
        return ah_fail(h, AT_ERR_INVALID_ARG, "at_set_vendor: unknown mode %d", mode);
    h->vendor_mode = mode;
    return AT_OK;
}

at_status at_get_stats(const at_handle *h, at_stats *stats)
{
    if (!h || !stats)
        return AT_ERR_INVALID_ARG;
    *stats = h->stats;
    const at_plan *pl = h->last_plan;   /* the most recent call's plan, as it is now */
    if (pl) {
        int vendor = stats->last_vendor;
        snprintf(stats->last_config, sizeof stats->last_config, "%s%.500s",
                 vendor ? "vendor: " : "", vendor ? pl->vendor_call : pl->config);
        snprintf(stats->last_kernel, sizeof stats->last_kernel, "%.31s",
                 vendor ? "vendor" : pl->fam->name);
    }
    return AT_OK;
}

/* ---------------- plan cache ---------------- */

/* The cubin of fam's cfg for this device: from the first database layer that has it
 * (*from_db 1), else, where compile, from NVRTC, counted in the stats and stored in the
 * user's database for next time (a failed write only costs a compile next time).
 * AT_ERR_NOT_FOUND where no layer has it and compile is 0; a failed compile's status with
 * its log in *log (NULL: dropped; else the caller frees it). */
static at_status handle_cubin(at_handle *h, const tpl_family *fam, const int *cfg,
                              const char *config, int compile, void **cubin, size_t *size,
                              int *from_db, char **log)
{
    char key[128];
    tpl_binary_key(fam, cfg, h->info.arch, key, sizeof key);
    *from_db = 0;
    for (int i = 0; i < h->n_layers && !*from_db; i++)
        if (h->layers[i] && db_get_binary(h->layers[i], key, cubin, size) == AT_OK)
            *from_db = 1;
    if (*from_db)
        return AT_OK;
    if (!compile)
        return AT_ERR_NOT_FOUND;
    char *text = NULL;
    at_status s = tpl_compile(fam, cfg, h->info.arch, cubin, size, &text);
    if (log)
        *log = text;
    else
        free(text);
    if (s != AT_OK)
        return s;
    h->stats.compiled++;
    if (h->db && !db_is_readonly(h->db)) {
        char options[4096];
        tpl_options_string(fam, cfg, h->info.arch, options, sizeof options);
        db_put_binary(h->db, key, fam->name, tpl_source_hash(fam), config, h->info.arch,
                      tpl_nvrtc_version(), options, *cubin, *size);
    }
    return AT_OK;
}

/* Stored cubin if there is one, else NVRTC (and store it for next time). */
static at_status load_module(at_handle *h, at_plan *pl)
{
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    int from_db = 0;
    at_status s = handle_cubin(h, pl->fam, pl->cfg, pl->config, 1, &cubin, &size, &from_db,
                               &log);
    if (s != AT_OK) {
        ah_fail(h, s, "%s %s failed to compile for %s: %.1500s", pl->fam->name, pl->config,
                h->info.arch, log ? log : "");
        free(log);
        return s;
    }
    free(log);
    CUresult rc = h->cu->ModuleLoadData(&pl->module, cubin);
    free(cubin);
    if (rc != CUDA_SUCCESS) {
        pl->module = NULL;
        return cuda_fail(h, rc, "cuModuleLoadData");
    }
    if (from_db)
        h->stats.loaded++;
    return AT_OK;
}

/* ---------------- trials of nearby winners ---------------- */

/* A shape never tuned on this device is served by the winner of the
 * nearest tuned shape, which may not be the fastest stored winner for it.
 * So its first calls rotate among up to trial_max stored winners of nearby
 * shapes (their cubins are in a database layer, the user's or a read-only
 * one such as the shipped database: no compile), the family's built-in
 * choice, and for calls of at most AT_TRIAL_ALTERNATIVES_MAX_FLOPS the
 * family's next matching built-in row and each other family's nearest stored
 * winner and built-in choice, each timed with
 * CUDA events on the caller's own calls and data, AT_TRIAL_ROUNDS times;
 * then the plan keeps the one with the lowest median and stores it as an
 * unverified ok result of this shape (rel_error -1), so that later handles
 * find it at the exact level, and the tuner, which measures and verifies
 * it again, replaces it. Every candidate is a configuration the family
 * declares correct for any shape, so every trial call computes the same
 * product; a candidate that fails to launch ends the trial and the call
 * runs the lookup's choice. Deterministic mode never tries (its results
 * must not depend on the call). */
#define AT_TRIAL_ROUNDS 3

typedef struct at_trial {
    int n;                                  /* candidates, [0] the lookup's choice */
    int vendor_slot;                        /* the vendor library's candidate, -1 if none */
    int calls;                              /* trial calls made */
    const tpl_family *fam[AT_TRIALS_MAX];   /* each candidate's family ([0]: the plan's) */
    int cfg[AT_TRIALS_MAX][TPL_MAX_PARAMS];
    char config[AT_TRIALS_MAX][TPL_CONFIG_LEN];
    CUmodule module[AT_TRIALS_MAX];         /* [0] is the plan's own */
    at_exec exec[AT_TRIALS_MAX];            /* [0] unused: the plan's exec */
    CUevent ev[AT_TRIALS_MAX][AT_TRIAL_ROUNDS][2];
} at_trial;

/* Frees the trial; candidate keep (or none: -1; 0 is the plan's own) moves
 * into the plan, whose previous module is then unloaded. */
static void trial_free(at_handle *h, at_plan *pl, int keep)
{
    at_trial *t = pl->trial;
    if (!t)
        return;
    if (keep > 0) {
        ex_release(&pl->exec);
        h->cu->ModuleUnload(pl->module);
        pl->fam = t->fam[keep];
        memcpy(pl->cfg, t->cfg[keep], sizeof pl->cfg);
        snprintf(pl->config, sizeof pl->config, "%s", t->config[keep]);
        pl->module = t->module[keep];
        pl->exec = t->exec[keep];
    }
    for (int i = 1; i < t->n; i++) {
        if (i == keep || i == t->vendor_slot)
            continue;
        ex_release(&t->exec[i]);
        h->cu->ModuleUnload(t->module[i]);
    }
    for (int i = 0; i < t->n; i++)
        for (int r = 0; r < AT_TRIAL_ROUNDS; r++)
            for (int e = 0; e < 2; e++)
                if (t->ev[i][r][e])
                    h->cu->EventDestroy(t->ev[i][r][e]);
    free(t);
    pl->trial = NULL;
}

/* Puts family fam's configuration (cfg, its text config) with its loaded module into t at
 * slot t->n, an exec ready to run it. */
static void trial_slot_add(at_handle *h, at_trial *t, const tpl_family *fam, const int *cfg,
                           const char *config, CUmodule module)
{
    int i = t->n++;
    t->fam[i] = fam;
    memcpy(t->cfg[i], cfg, sizeof t->cfg[i]);
    snprintf(t->config[i], sizeof t->config[i], "%s", config);
    t->module[i] = module;
    ex_init(&t->exec[i], h->cu, &h->info, module, h->stream, h->errmsg, sizeof h->errmsg);
}

/* Loads candidate c into t at slot t->n (a stored winner's cubin from a layer; a built-in
 * choice's from a layer or compiled); a candidate that cannot load is left out. */
static void trial_load(at_handle *h, at_trial *t, const at_trial_candidate *c)
{
    void *cubin = NULL;
    size_t size = 0;
    int from_db = 0;
    if (t->n >= AT_TRIALS_MAX || handle_cubin(h, c->fam, c->cfg, c->config, c->builtin, &cubin,
                                              &size, &from_db, NULL) != AT_OK)
        return;
    CUmodule module = NULL;
    CUresult rc = h->cu->ModuleLoadData(&module, cubin);
    free(cubin);
    if (rc == CUDA_SUCCESS)
        trial_slot_add(h, t, c->fam, c->cfg, c->config, module);
}

/* 1 if the vendor library is a candidate for the plan's shape. */
static int vendor_candidate(const at_handle *h, const at_plan *pl)
{
    return h->vendor_mode == AT_VENDOR_ON && !h->deterministic &&
           pl->fam->n_dims == 3 && ms_vendor_gemm_supported(&pl->problem, NULL, 0);
}

/* Starts a trial on a new plan when the handle allows one (at_set_trials) and
 * there is something to compare: the candidates runtime/trial.c chooses (stored
 * winners of nearby shapes, built-in rows, the other families' for small calls)
 * and the vendor library (vendor_candidate, unless a stored measurement already
 * decided: pl->vendor_call set). Otherwise leaves the plan as it is (a trial is
 * an optimization only). */
static void trial_start(at_handle *h, at_plan *pl)
{
    if (h->trial_max < 2 || h->deterministic)
        return;
    at_trial_request rq = {.layers = h->layers, .n_layers = h->n_layers, .dev = &h->info,
                           .fam = pl->fam, .problem = &pl->problem, .level = pl->level,
                           .cfg = pl->cfg, .config = pl->config, .trial_max = h->trial_max};
    at_trial_candidate cands[AT_TRIALS_MAX];
    /* the vendor's slot is kept: a shape with many stored and built-in candidates filled every
     * slot and left cuBLAS out of its trial (random calls with the vendor on: ours kept at 0.75x) */
    int vendor = vendor_candidate(h, pl) && !pl->vendor_call[0];
    int n = at_trial_candidates(&rq, cands, AT_TRIALS_MAX - vendor);
    if (n < 2 && !vendor)
        return;
    at_trial *t = calloc(1, sizeof *t);
    if (!t)
        return;
    pl->trial = t;
    t->n = 1;
    t->vendor_slot = -1;
    t->fam[0] = pl->fam;
    memcpy(t->cfg[0], pl->cfg, sizeof t->cfg[0]);
    snprintf(t->config[0], sizeof t->config[0], "%s", pl->config);
    t->module[0] = pl->module;
    for (int i = 1; i < n; i++)
        trial_load(h, t, &cands[i]);
    if (vendor && t->n < AT_TRIALS_MAX && (h->vendor || (h->vendor = ms_vendor_open()))) {
        t->vendor_slot = t->n++;
        ms_vendor_gemm_supported(&pl->problem, t->config[t->vendor_slot], TPL_CONFIG_LEN);
    }
    int ok = t->n >= 2;
    for (int i = 0; ok && i < t->n; i++)
        for (int r = 0; ok && r < AT_TRIAL_ROUNDS; r++)
            for (int e = 0; ok && e < 2; e++)
                ok = h->cu->EventCreate(&t->ev[i][r][e], CU_EVENT_DEFAULT) == CUDA_SUCCESS;
    if (!ok)
        trial_free(h, pl, 0);
}

/* A candidate's trial score: the fastest of its three calls. Each call starts on an idle
 * stream, so what adds to a call's time is a delay (the first launch's module load, a late
 * clock, the host preempted), never a gain; under the median one delayed cuBLAS call of
 * three decided. Replaying the 200 trials of the random calls with the vendor candidate on
 * (bench/results/2026-11-29-H200-calls-vendor-on-shipped-database-7a05a23-seed1.txt, its
 * trial log), the fastest call picks cuBLAS in 9 of the 25 calls where our kernel served
 * more than 2% slower than cuBLAS, and in 1 where ours was not. */
static float fastest3(const float x[AT_TRIAL_ROUNDS])
{
    return fminf(x[0], fminf(x[1], x[2]));
}

/* Median of three. */
static float median3(const float x[AT_TRIAL_ROUNDS])
{
    float a = x[0], b = x[1], c = x[2];
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* Stores the trial's winner w as an unverified ok result of the plan's
 * problem (a failed write costs the next process a trial, nothing else). */
static void trial_store(at_handle *h, const at_plan *pl, int w,
                        float times[][AT_TRIAL_ROUNDS])
{
    if (!h->db || db_is_readonly(h->db) ||
        db_put_device(h->db, &h->info, tpl_nvrtc_version()) != AT_OK)
        return;
    db_result r;
    memset(&r, 0, sizeof r);
    snprintf(r.device_uuid, sizeof r.device_uuid, "%s", h->info.uuid);
    snprintf(r.kernel, sizeof r.kernel, "%s", pl->fam->name);
    snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(pl->fam));
    r.problem = pl->problem;
    snprintf(r.config, sizeof r.config, "%s", pl->config);
    snprintf(r.status, sizeof r.status, "%s", DB_OK);
    r.time_ms = median3(times[w]);
    r.time_min_ms = fminf(times[w][0], fminf(times[w][1], times[w][2]));
    r.time_max_ms = fmaxf(times[w][0], fmaxf(times[w][1], times[w][2]));
    r.runs = AT_TRIAL_ROUNDS;
    double flops = 0, bytes = 0;
    pl->fam->work(&pl->problem, &flops, &bytes);
    if (r.time_ms > 0) {
        r.gflops = flops / (r.time_ms * 1e6);
        r.gbs = bytes / (r.time_ms * 1e6);
    }
    r.rel_error = -1;
    tpl_binary_key(pl->fam, pl->cfg, h->info.arch, r.binary_key, sizeof r.binary_key);
    r.deterministic = pl->fam->deterministic ? pl->fam->deterministic(pl->cfg) : 0;
    db_store_result(h->db, &r);
}

/* Appends the finished trial of plan pl to the handle's trial log (AUTOTUNE_TRIAL_LOG): one
 * line per candidate with its score (the fastest of its three times) and the three times, the
 * chosen one marked. A log that cannot be opened is skipped: it is a diagnostic, never a
 * reason for a call to fail. */
static void trial_log_write(const at_handle *h, const at_plan *pl,
                            float times[][AT_TRIAL_ROUNDS], int best, int vendor)
{
    const at_trial *t = pl->trial;
    int to_stderr = strcmp(h->trial_log, "-") == 0;
    FILE *f = to_stderr ? stderr : fopen(h->trial_log, "a");
    if (!f)
        return;
    char shape[128];
    tpl_problem_format(&pl->problem, shape, sizeof shape);
    for (int i = 0; i < t->n; i++) {
        int chosen = vendor ? i == t->vendor_slot : i == best;
        fprintf(f, "trial\t%s\t%s\t%d\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\n", shape,
                pl->key_fam->name, i, chosen ? "chosen" : "-", 1e3 * fastest3(times[i]),
                1e3 * times[i][0], 1e3 * times[i][1], 1e3 * times[i][2],
                i == t->vendor_slot ? "vendor" : t->fam[i]->name, t->config[i]);
    }
    if (!to_stderr)
        fclose(f);
}

/* After the last trial call: reads the events, keeps the candidate with the lowest score
 * (fastest3), stores it (its median as its time). Events that cannot be read end the trial
 * with the lookup's choice. */
static void trial_finish(at_handle *h, at_plan *pl)
{
    at_trial *t = pl->trial;
    float times[AT_TRIALS_MAX][AT_TRIAL_ROUNDS];
    int best = 0;                           /* ours: the vendor's slot never is */
    for (int i = 0; i < t->n; i++) {
        for (int r = 0; r < AT_TRIAL_ROUNDS; r++) {
            if (h->cu->EventSynchronize(t->ev[i][r][1]) != CUDA_SUCCESS ||
                h->cu->EventElapsedTime(&times[i][r], t->ev[i][r][0], t->ev[i][r][1]) !=
                    CUDA_SUCCESS) {
                trial_free(h, pl, 0);
                return;
            }
        }
        if (i != t->vendor_slot && fastest3(times[i]) < fastest3(times[best]))
            best = i;
    }
    int vendor = t->vendor_slot >= 0 &&
                 fastest3(times[t->vendor_slot]) < (1.0 - AT_VENDOR_MARGIN) * fastest3(times[best]);
    if (t->vendor_slot >= 0)
        snprintf(pl->vendor_call, sizeof pl->vendor_call, "%s", t->config[t->vendor_slot]);
    if (h->trial_log[0])
        trial_log_write(h, pl, times, best, vendor);
    int nearby = t->n - (t->vendor_slot >= 0) >= 2;
    trial_free(h, pl, best);
    h->stats.trials++;
    if (vendor) {
        pl->vendor = 1;
        h->stats.vendor_plans++;
    }
    /* at_get_stats names the winner (a built-in choice of another family may have won) */
    if (nearby)                             /* ours, for the next process's exact level */
        trial_store(h, pl, best, times);
}

/* One call during a trial: the next candidate in turn, between events. The stream is idle
 * before the first event, so each time is the call's whole latency: its host path (cuBLAS's
 * heuristics, our packs and extra launches), the launch and the GPU's work. Timed behind a
 * busy stream, an event pair sees the GPU's work only, and cuBLAS, whose short calls spend
 * 5-10 us more on the host than ours, won trials by that and then served calls 1.3-1.6x
 * slower than our kernels (bench/results/2026-11-29-H200-vendor-trial-probe-*.txt). */
static at_status trial_call(at_handle *h, at_plan *pl, tpl_args *args)
{
    at_trial *t = pl->trial;
    int i = t->calls % t->n, round = t->calls / t->n;
    at_exec *ex = i == 0 ? &pl->exec : &t->exec[i];
    ex->stream = h->stream;
    CUresult rc = h->cu->StreamSynchronize(h->stream);
    if (rc == CUDA_SUCCESS)
        rc = h->cu->EventRecord(t->ev[i][round][0], h->stream);
    at_status s = rc != CUDA_SUCCESS     ? AT_ERR_CUDA
                  : i == t->vendor_slot ? ms_vendor_gemm(h->vendor, h->stream, args, h->errmsg,
                                                         sizeof h->errmsg)
                                        : t->fam[i]->run(ex, t->cfg[i], args);
    if (s == AT_OK)
        rc = h->cu->EventRecord(t->ev[i][round][1], h->stream);
    if (s == AT_OK && i == t->vendor_slot)
        h->stats.vendor_calls++;
    if (s != AT_OK || rc != CUDA_SUCCESS) {
        /* the trial is an optimization: the lookup's choice runs the call; a vendor
         * library that is absent or refuses is not asked again by this handle */
        if (i == t->vendor_slot && s != AT_ERR_CUDA)
            h->vendor_mode = AT_VENDOR_OFF;
        trial_free(h, pl, 0);
        h->errmsg[0] = '\0';
        return s == AT_OK ? AT_OK : pl->fam->run(&pl->exec, pl->cfg, args);
    }
    if (++t->calls == t->n * AT_TRIAL_ROUNDS)
        trial_finish(h, pl);
    return AT_OK;
}

/* A shape tuned on this device: the tuner measured cuBLAS on it too (a side measurement of
 * d), so the stored times decide without a trial: the vendor serves where it beat our stored
 * best by more than AT_VENDOR_MARGIN. Sets pl->vendor_call (decided) when both times are
 * there and at least AT_VENDOR_STORED_MIN_MS; leaves the plan to a trial otherwise. */
static void vendor_from_measurements(at_handle *h, db *d, at_plan *pl)
{
    db_result ours;
    db_measurement *ms = NULL;
    int n = 0;
    if (db_best(d, h->info.uuid, pl->fam->name, tpl_source_hash(pl->fam), &pl->problem, 0,
                &ours) != AT_OK || db_rank_ms(&ours) <= 0 ||
        db_measurements(d, h->info.uuid, pl->fam->name, &ms, &n) != AT_OK)
        return;
    for (int i = 0; i < n; i++) {
        if (strcmp(ms[i].name, "cublas") != 0 || ms[i].time_ms <= 0 ||
            !tpl_problem_equal(&ms[i].problem, &pl->problem))
            continue;
        /* the tuner times GPU work (behind an L2 flush): for short calls the host path, where
         * cuBLAS spends more than ours, decides, and only a trial's latency sees it */
        if (ms[i].time_ms < AT_VENDOR_STORED_MIN_MS || db_rank_ms(&ours) < AT_VENDOR_STORED_MIN_MS)
            break;
        ms_vendor_gemm_supported(&pl->problem, pl->vendor_call, sizeof pl->vendor_call);
        if (ms[i].time_ms < (1.0 - AT_VENDOR_MARGIN) * db_rank_ms(&ours)) {
            pl->vendor = 1;
            h->stats.vendor_plans++;
        }
        break;
    }
    free(ms);
}

static at_status get_plan(at_handle *h, const char *kernel, const tpl_problem *p,
                          at_plan **out)
{
    /* the previous call's plan first: a repeated call skips the table */
    at_plan *pl = h->last_plan;
    const tpl_family *fam =
        pl && strcmp(pl->key_fam->name, kernel) == 0 ? pl->key_fam : tpl_find(kernel);
    if (!fam)
        return ah_fail(h, AT_ERR_INTERNAL, "kernel family %s is not built in", kernel);
    if (!pl || !ah_plan_matches(pl, fam, p, h->deterministic))
        pl = ah_plan_lookup(h, fam, p);
    if (pl) {
        h->stats.cache_hits++;
        *out = pl;
        return AT_OK;
    }
    pl = calloc(1, sizeof *pl);
    if (!pl)
        return ah_fail(h, AT_ERR_NO_MEMORY, "out of host memory");
    pl->key_fam = pl->fam = fam;
    pl->problem = *p;
    pl->deterministic = h->deterministic;
    pl->born = time(NULL);
    int layer = -1;
    pl->level = lk_choose_layers(h->layers, h->n_layers, &h->info, fam, p, h->deterministic,
                                 pl->cfg, pl->config, &layer);
    if (pl->level == AT_LOOKUP_NONE) {
        free(pl);
        return ah_fail(h, AT_ERR_UNSUPPORTED, "no %sconfiguration of %s serves this problem",
                    h->deterministic ? "deterministic " : "", kernel);
    }
    at_status s = load_module(h, pl);
    if (s != AT_OK) {
        free(pl);
        return s;
    }
    ex_init(&pl->exec, h->cu, &h->info, pl->module, h->stream, h->errmsg, sizeof h->errmsg);
    if ((s = ah_plan_insert(h, pl)) != AT_OK) {
        plan_free(h, pl);
        return ah_fail(h, s, "out of host memory");
    }
    h->stats.lookups[pl->level]++;
    if (pl->level == AT_LOOKUP_EXACT && layer >= 0 && vendor_candidate(h, pl))
        vendor_from_measurements(h, h->layers[layer], pl);
    trial_start(h, pl);
    *out = pl;
    return AT_OK;
}

/* Runs plan pl on args (the context current): the vendor library where it serves the plan,
 * the trial's next candidate during a trial, else the plan's kernel; the stats say which. */
static at_status plan_serve(at_handle *h, at_plan *pl, tpl_args *args)
{
    at_status s;
    /* the stats' texts are written when asked for (at_get_stats), not per call: shapes in
     * turn formatted two strings on every call */
    int vendor = pl->vendor && !pl->trial;
    h->last_plan = pl;
    h->stats.last_level = pl->level;
    h->stats.last_vendor = vendor;
    pl->exec.stream = h->stream;
    pl->calls++;
    if (vendor) {
        s = ms_vendor_gemm(h->vendor ? h->vendor : (h->vendor = ms_vendor_open()), h->stream,
                           args, h->errmsg, sizeof h->errmsg);
        h->stats.vendor_calls += s == AT_OK;
        if (s != AT_OK && s != AT_ERR_CUDA) {
            /* cuBLAS went away or refuses the call: ours serve the shape from now on */
            pl->vendor = 0;
            h->errmsg[0] = '\0';
            s = pl->fam->run(&pl->exec, pl->cfg, args);
        }
    } else {
        size_t held = ah_plan_scratch_bytes(pl);
        s = pl->trial ? trial_call(h, pl, args) : pl->fam->run(&pl->exec, pl->cfg, args);
        /* device memory ran out (a scratch buffer, a kernel's lazy load): the other plans
         * give theirs back and the call runs once more */
        if (s == AT_ERR_NO_MEMORY && !pl->trial && ah_release_other_scratch(h, pl) > 0) {
            h->errmsg[0] = '\0';
            s = pl->fam->run(&pl->exec, pl->cfg, args);
        }
        size_t now = ah_plan_scratch_bytes(pl);
        if (now != held) {
            h->scratch_bytes += now - held;
            if (now > held && h->scratch_bytes > ah_scratch_keep_limit(h))
                ah_release_other_scratch(h, pl);
        }
    }
    return s;
}

/* Looks up (or builds) the plan and runs it inside the primary context. */
at_status ah_run_plan(at_handle *h, const char *kernel, tpl_args *args, at_plan **used)
{
    if (used)
        *used = NULL;
    int pushed;
    at_status s = ctx_enter(h, &pushed);
    if (s != AT_OK)
        return s;
    at_plan *pl = NULL;
    h->errmsg[0] = '\0';
    s = get_plan(h, kernel, &args->problem, &pl);
    if (s == AT_OK) {
        if (used)
            *used = pl;
        s = plan_serve(h, pl, args);
    }
    ctx_leave(h, pushed);
    return s;
}

at_status ah_run_known_plan(at_handle *h, at_plan *pl, tpl_args *args)
{
    int pushed;
    at_status s = ctx_enter(h, &pushed);
    if (s != AT_OK)
        return s;
    h->errmsg[0] = '\0';
    h->stats.cache_hits++;
    s = plan_serve(h, pl, args);
    ctx_leave(h, pushed);
    return s;
}

/* ---------------- entry points (the GEMM calls: gemm.c) ---------------- */

/* A sum (kernel "sum") or dot ("dot") of n elements of type (FP32 or FP64)
 * into *result (device memory): the checks of ag_check_reduce, n = 0
 * stores 0, else the plan of that kind runs. */
static at_status reduce(at_handle *h, const char *kernel, at_dtype type, long long n,
                        const void *x, const void *y, void *result)
{
    if (!h)
        return AT_ERR_INVALID_ARG;
    char fn[16];
    snprintf(fn, sizeof fn, "at_%c%s", type == AT_R_64F ? 'd' : 's', kernel);
    size_t elem = tpl_dtype_size(type);
    int empty = 0;
    at_status s = ag_check_reduce(fn, n, x, y, strcmp(kernel, "dot") == 0, result, elem, &empty,
                                  h->errmsg, sizeof h->errmsg);
    if (s != AT_OK)
        return s;
    if (empty) {
        int pushed;
        if ((s = ctx_enter(h, &pushed)) != AT_OK)
            return s;
        CUresult rc = h->cu->MemsetD32Async((CUdeviceptr)result, 0, elem / 4, h->stream);
        ctx_leave(h, pushed);
        return rc == CUDA_SUCCESS ? AT_OK : cuda_fail(h, rc, "cuMemsetD32Async");
    }
    tpl_args args = tpl_reduce_args(n, (CUdeviceptr)x, (CUdeviceptr)y, (CUdeviceptr)result);
    args.problem.dtype = type;
    return ah_run_plan(h, kernel, &args, NULL);
}

at_status at_ssum(at_handle *h, long long n, const float *x, float *result)
{
    return reduce(h, "sum", AT_R_32F, n, x, NULL, result);
}

at_status at_sdot(at_handle *h, long long n, const float *x, const float *y, float *result)
{
    return reduce(h, "dot", AT_R_32F, n, x, y, result);
}

at_status at_dsum(at_handle *h, long long n, const double *x, double *result)
{
    return reduce(h, "sum", AT_R_64F, n, x, NULL, result);
}

at_status at_ddot(at_handle *h, long long n, const double *x, const double *y, double *result)
{
    return reduce(h, "dot", AT_R_64F, n, x, y, result);
}

/* A Jacobi solve of type (FP32 or FP64) after the checks of
 * ag_check_jacobi; *iterations and *residual (may be NULL) are set on every
 * return, 0 when the arguments are refused. */
static at_status jacobi(at_handle *h, at_dtype type, int n, const void *A, const void *b,
                        void *x, double tol, int max_iter, int *iterations, double *residual)
{
    if (iterations)
        *iterations = 0;
    if (residual)
        *residual = 0.0;
    if (!h)
        return AT_ERR_INVALID_ARG;
    at_status s = ag_check_jacobi(type == AT_R_64F ? "at_djacobi" : "at_sjacobi", n, A, b, x,
                                  tol, max_iter, tpl_dtype_size(type), h->errmsg,
                                  sizeof h->errmsg);
    if (s != AT_OK)
        return s;
    tpl_args args = tpl_jacobi_args(n, (CUdeviceptr)A, (CUdeviceptr)b, (CUdeviceptr)x, 0.0f,
                                    max_iter);
    args.scalar[TPL_JAC_TOL] = tol;
    args.problem.dtype = type;
    s = ah_run_plan(h, "jacobi", &args, NULL);
    if (iterations)
        *iterations = args.out.iterations;
    if (residual)
        *residual = args.out.residual;
    return s;
}

at_status at_sjacobi(at_handle *h, int n, const float *A, const float *b, float *x, float tol,
                     int max_iter, int *iterations, float *residual)
{
    double r = 0.0;
    at_status s = jacobi(h, AT_R_32F, n, A, b, x, tol, max_iter, iterations, &r);
    if (residual)
        *residual = (float)r;
    return s;
}

at_status at_djacobi(at_handle *h, int n, const double *A, const double *b, double *x,
                     double tol, int max_iter, int *iterations, double *residual)
{
    return jacobi(h, AT_R_64F, n, A, b, x, tol, max_iter, iterations, residual);
}
