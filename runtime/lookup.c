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

/* 1 if the recorded device is of dev's model: the same name, compute
 * capability and memory (GPUs that split a search, autotune --device all). */
static int same_model(const at_device_info *dev, const at_device_info *other)
{
    return strcmp(dev->name, other->name) == 0 && dev->cc_major == other->cc_major &&
           dev->cc_minor == other->cc_minor && dev->memory_bytes == other->memory_bytes;
}

/* The fastest usable ok result of (fam, p) measured on dev or on another
 * GPU of its model, whose results are one set (each configuration of a
 * split search is measured on one of them): 1 with it in best and its
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
            (found && r.time_ms >= best->time_ms) ||
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
            at_status s = level == 0
                ? db_candidates(d, dev->uuid, NULL, fam->name, hash, p, LK_PER_PROBLEM,
                                deterministic, &cands, &n)
                : db_candidates(d, NULL, dev->arch, fam->name, hash, p, LK_PER_PROBLEM,
                                deterministic, &cands, &n);
            if (s != AT_OK)
                continue;
            int ok = pick_nearest(dev, fam, p, deterministic, cands, n, cfg, config);
            free(cands);
            if (ok)
                return levels[level];
        }
    }
    if (usable_config(dev, fam, fam->default_config, p, deterministic, cfg)) {
        snprintf(config, TPL_CONFIG_LEN, "%s", fam->default_config);
        return AT_LOOKUP_DEFAULT;
    }
    for (int i = 0; i < fam->n_baselines; i++) {
        if (usable_config(dev, fam, fam->baselines[i].config, p, deterministic, cfg)) {
            snprintf(config, TPL_CONFIG_LEN, "%s", fam->baselines[i].config);
            return AT_LOOKUP_DEFAULT;
        }
    }
    return AT_LOOKUP_NONE;
}
