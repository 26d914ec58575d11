/* lookup.c: the lookup chain (exact, on this device or its model -> nearest
 * shape on this device -> nearest on the same architecture -> built-in
 * default); pure logic over the database, so the CPU tests exercise it on
 * fixture databases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lookup.h"

at_status lk_open_db(const char *path, db **out, char *msg, size_t len)
{
    *out = NULL;
    return db_open(out, path, DB_OPEN_CREATE, msg, len);
}

/* |log(x / y)| with sizes below 1 taken as 1. */
static double log_ratio(long long x, long long y)
{
    return fabs(log((double)(x > 0 ? x : 1) / (double)(y > 0 ? y : 1)));
}

double lk_shape_distance(const tpl_problem *a, const tpl_problem *b)
{
    if (a->n_dims != b->n_dims || !tpl_problem_same_kind(a, b))
        return INFINITY;
    double d = log_ratio(tpl_problem_batch(a), tpl_problem_batch(b));
    for (int i = 0; i < a->n_dims && i < TPL_MAX_DIMS; i++)
        d += log_ratio(a->dims[i], b->dims[i]);
    return d;
}

/* 1 if the configuration text parses, is legal on dev and serves p. */
static int usable_config(const at_device_info *dev, const tpl_family *fam, const char *text,
                         const tpl_problem *p, int deterministic, int *cfg)
{
    char why[256];
    if (tpl_config_parse(fam, text, cfg, why, sizeof why) != AT_OK)
        return 0;
    if (!fam->valid(cfg, dev, why, sizeof why))
        return 0;
    if (fam->applicable && !fam->applicable(cfg, p))
        return 0;
    if (deterministic && fam->deterministic && !fam->deterministic(cfg))
        return 0;
    return 1;
}

/* Nearest usable candidate; candidates come fastest first per problem. */
static int pick_nearest(const at_device_info *dev, const tpl_family *fam, const tpl_problem *p,
                        int deterministic, const db_result *cands, int n, int *cfg,
                        char *config)
{
    double best = INFINITY;
    int found = 0, tmp[TPL_MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        double d = lk_shape_distance(p, &cands[i].problem);
        if (d >= best || !usable_config(dev, fam, cands[i].config, p, deterministic, tmp))
            continue;
        best = d;
        memcpy(cfg, tmp, sizeof tmp);
        snprintf(config, TPL_CONFIG_LEN, "%s", cands[i].config);
        found = 1;
    }
    return found;
}

/* The LK_PER_PROBLEM fastest results of every tuned problem of p's kind:
 * level 0 on dev itself, level 1 on any device of dev's architecture. */
static at_status level_candidates(db *d, const at_device_info *dev, const tpl_family *fam,
                                  const char *hash, const tpl_problem *p, int deterministic,
                                  int level, db_result **cands, int *n)
{
    return db_candidates(d, level == 0 ? dev->uuid : NULL, level == 0 ? NULL : dev->arch,
                         fam->name, hash, p, LK_PER_PROBLEM, deterministic, cands, n);
}

/* Adds cands[i] to out (count *n, room max) if usable, cubin stored and
 * not already there; keeps out sorted by distance. */
static void nearby_add(db *d, const at_device_info *dev, const tpl_family *fam,
                       const tpl_problem *p, int deterministic, const db_result *cand,
                       int max, lk_candidate *out, int *n)
{
    lk_candidate c;
    c.distance = lk_shape_distance(p, &cand->problem);
    if (!isfinite(c.distance) ||
        !usable_config(dev, fam, cand->config, p, deterministic, c.cfg))
        return;
    snprintf(c.config, sizeof c.config, "%s", cand->config);
    for (int i = 0; i < *n; i++)
        if (strcmp(out[i].config, c.config) == 0)
            return;
    char key[128];
    tpl_binary_key(fam, c.cfg, dev->arch, key, sizeof key);
    if (db_has_binary(d, key) != 1)
        return;
    int at = *n;
    while (at > 0 && out[at - 1].distance > c.distance)
        at--;
    if (at >= max)
        return;
    int last = *n < max ? *n : max - 1;
    memmove(&out[at + 1], &out[at], (size_t)(last - at) * sizeof *out);
    out[at] = c;
    if (*n < max)
        (*n)++;
}

int lk_nearby(db *d, const at_device_info *dev, const tpl_family *fam, const tpl_problem *p,
              int deterministic, int max, lk_candidate *out)
{
    if (!d || !dev || !fam || !p || !out || max <= 0)
        return 0;
    const char *hash = tpl_source_hash(fam);
    int n = 0;
    for (int level = 0; level < 2 && n < max; level++) {
        db_result *cands = NULL;
        int count = 0;
        at_status s = level_candidates(d, dev, fam, hash, p, deterministic, level, &cands,
                                       &count);
        if (s != AT_OK)
            continue;
        /* this device's winners fill the list first; the architecture's
         * only take the room left */
        lk_candidate level_out[16];
        int level_n = 0, room = 16;
        for (int i = 0; i < count; i++)
            nearby_add(d, dev, fam, p, deterministic, &cands[i], room, level_out, &level_n);
        free(cands);
        for (int i = 0; i < level_n && n < max; i++) {
            int dup = 0;
            for (int j = 0; j < n; j++)
                dup |= strcmp(out[j].config, level_out[i].config) == 0;
            if (!dup)
                out[n++] = level_out[i];
        }
    }
    return n;
}

/* 1 if the recorded device is of dev's model: the same name, compute
 * capability and memory (GPUs that split a search, autotune --device all). */
static int same_model(const at_device_info *dev, const at_device_info *other)
{
    return strcmp(dev->name, other->name) == 0 && dev->cc_major == other->cc_major &&
           dev->cc_minor == other->cc_minor && dev->memory_bytes == other->memory_bytes;
}

/* The fastest usable ok result (by db_rank_ms) of (fam, p) measured on dev
 * or on another GPU of its model, whose results are one set (each
 * configuration of a split search is measured on one of them): 1 with it in best and its
 * configuration in cfg, 0 if none (an unreadable device list: dev's own). */
static int best_of_model(db *d, const at_device_info *dev, const tpl_family *fam,
                         const char *hash, const tpl_problem *p, int deterministic,
                         db_result *best, int *cfg)
{
    int found = db_best(d, dev->uuid, fam->name, hash, p, deterministic, best) == AT_OK &&
                usable_config(dev, fam, best->config, p, deterministic, cfg);
    db_device *devs = NULL;
    int n = 0, tmp[TPL_MAX_PARAMS];
    if (db_list_devices(d, &devs, &n) != AT_OK)
        return found;
    for (int k = 0; k < n; k++) {
        db_result r;
        if (strcmp(devs[k].info.uuid, dev->uuid) == 0 || !same_model(dev, &devs[k].info) ||
            db_best(d, devs[k].info.uuid, fam->name, hash, p, deterministic, &r) != AT_OK ||
            (found && db_rank_ms(&r) >= db_rank_ms(best)) ||
            !usable_config(dev, fam, r.config, p, deterministic, tmp))
            continue;
        *best = r;
        memcpy(cfg, tmp, sizeof tmp);
        found = 1;
    }
    free(devs);
    return found;
}

at_lookup_level lk_choose(db *d, const at_device_info *dev, const tpl_family *fam,
                          const tpl_problem *p, int deterministic, int *cfg, char *config)
{
    const char *hash = tpl_source_hash(fam);
    if (d) {
        db_result best;
        if (best_of_model(d, dev, fam, hash, p, deterministic, &best, cfg)) {
            snprintf(config, TPL_CONFIG_LEN, "%s", best.config);
            return AT_LOOKUP_EXACT;
        }
        static const at_lookup_level levels[2] = {AT_LOOKUP_NEAREST, AT_LOOKUP_ARCH};
        for (int level = 0; level < 2; level++) {
            db_result *cands = NULL;
            int n = 0;
            /* only problems of p's kind: another kind never serves it */
            at_status s = level_candidates(d, dev, fam, hash, p, deterministic, level,
                                           &cands, &n);
            if (s != AT_OK)
                continue;
            int ok = pick_nearest(dev, fam, p, deterministic, cands, n, cfg, config);
            free(cands);
            if (ok)
                return levels[level];
        }
    }
    /* the built-in choice for dev's architecture, p's kind and shape class */
    if (tpl_builtin_config(fam, dev, p, deterministic, cfg, config, NULL))
        return AT_LOOKUP_DEFAULT;
    return AT_LOOKUP_NONE;
}

at_lookup_level lk_choose_layers(db *const *dbs, int n, const at_device_info *dev,
                                 const tpl_family *fam, const tpl_problem *p,
                                 int deterministic, int *cfg, char *config, int *which)
{
    at_lookup_level best = AT_LOOKUP_NONE;
    *which = -1;
    for (int i = 0; i < n && best != AT_LOOKUP_EXACT; i++) {
        int c[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        if (!dbs[i])
            continue;
        at_lookup_level level = lk_choose(dbs[i], dev, fam, p, deterministic, c, text);
        if (level == AT_LOOKUP_NONE || level == AT_LOOKUP_DEFAULT ||
            (best != AT_LOOKUP_NONE && level >= best))
            continue;
        best = level;
        *which = i;
        memcpy(cfg, c, sizeof c);
        snprintf(config, TPL_CONFIG_LEN, "%s", text);
    }
    return best != AT_LOOKUP_NONE ? best : lk_choose(NULL, dev, fam, p, deterministic, cfg, config);
}

void lk_open_shipped(const char *list, db **layers, int *n, int max, char *msg, size_t len)
{
    char buf[8192], err[1024];
    size_t used = 0;
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    if (len)
        msg[0] = '\0';
    for (char *save = NULL, *path = strtok_r(buf, ":", &save); path;
         path = strtok_r(NULL, ":", &save)) {
        db *d = NULL;
        at_status s = *n < max ? db_open(&d, path, DB_OPEN_SHIPPED, err, sizeof err)
                               : AT_ERR_INVALID_ARG;
        if (s == AT_OK) {
            layers[(*n)++] = d;
            continue;
        }
        if (*n >= max)
            snprintf(err, sizeof err, "more than %d read-only databases", max);
        if (used + 1 < len) {
            snprintf(msg + used, len - used, "%sread-only tuning database %.1000s not used (%s)",
                     used ? "; " : "", path, err);
            used = strlen(msg);
        }
    }
}

const tpl_family *lk_choose_family(db *d, const at_device_info *dev, const tpl_problem *p,
                                   int deterministic, const tpl_family *const *fams, int n,
                                   int *measured)
{
    const tpl_family *best = NULL, *small = NULL, *other = NULL;
    double best_ms = INFINITY;
    *measured = 0;
    for (int i = 0; i < n; i++) {
        const tpl_family *f = fams[i];
        if (!tpl_family_accepts(f, p))
            continue;
        if (strcmp(f->name, "bgemm") == 0)
            small = f;
        else if (!other)
            other = f;
        db_result r;
        int cfg[TPL_MAX_PARAMS];
        if (d && db_best(d, dev->uuid, f->name, tpl_source_hash(f), p, deterministic, &r) ==
                AT_OK && r.time_ms > 0 && db_rank_ms(&r) < best_ms &&
            usable_config(dev, f, r.config, p, deterministic, cfg)) {
            best = f;
            best_ms = db_rank_ms(&r);
        }
    }
    if (best) {
        *measured = 1;
        return best;
    }
    int is_small = p->n_dims == 3 && p->dims[0] <= LK_SMALL_GEMM &&
                   p->dims[1] <= LK_SMALL_GEMM && p->dims[2] <= LK_SMALL_GEMM;
    if (small && (is_small || !other))
        return small;
    return other;
}
