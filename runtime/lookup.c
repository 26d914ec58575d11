/* lookup.c: the lookup chain (exact -> nearest shape on this device ->
 * nearest on the same architecture -> built-in default); pure logic over
 * the database, so the CPU tests exercise it on fixture databases. */
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

at_lookup_level lk_choose(db *d, const at_device_info *dev, const tpl_family *fam,
                          const tpl_problem *p, int deterministic, int *cfg, char *config)
{
    const char *hash = tpl_source_hash(fam);
    if (d) {
        db_result best;
        if (db_best(d, dev->uuid, fam->name, hash, p, deterministic, &best) == AT_OK &&
            usable_config(dev, fam, best.config, p, deterministic, cfg)) {
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
                AT_OK && r.time_ms > 0 && r.time_ms < best_ms &&
            usable_config(dev, f, r.config, p, deterministic, cfg)) {
            best = f;
            best_ms = r.time_ms;
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
