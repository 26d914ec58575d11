/* plan.c: planning a problem's search: its space of valid configurations,
 * the strategy and its budget, and the extras evaluated first. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lookup.h"
#include "tune_core.h"

/* Default budget of the guided strategy, per problem: this many
 * evaluations, or a share of the run's default time (tn_tune's
 * guided_unit_s) proportional to the number of tunable parameters of the
 * family (bigger spaces get more time), clamped. */
#define TN_GUIDED_EVALS 120
#define TN_GUIDED_MIN_S 1.5
#define TN_GUIDED_MAX_S 20.0
/* A second look's time budget: over before the first proposal, so only
 * the extras (never cut by time) are measured. */
#define TN_SECOND_LOOK_S 1e-9

long long tn_valid_space(const tpl_family *fam, const at_device_info *dev,
                         const tpl_problem *p, long long **indices)
{
    long long n = tpl_valid_configs_cached(fam, dev, indices), kept = 0;
    if (n < 0 || !p || !fam->applicable)
        return n;
    for (long long i = 0; i < n; i++) {      /* keep those that serve p */
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, (*indices)[i], cfg);
        if (fam->applicable(cfg, p))
            (*indices)[kept++] = (*indices)[i];
    }
    return kept;
}

long long tn_serving_configs(const tpl_family *fam, const long long *valid, long long n_valid,
                             const tpl_problem *p, long long cap, int (*out)[TPL_MAX_PARAMS])
{
    long long m = 0;
    for (long long v = 0; v < n_valid && m <= cap; v++) {
        int cfg[TPL_MAX_PARAMS];
        int *c = out ? out[m] : cfg;
        tpl_config_from_index(fam, valid[v], c);
        m += !fam->applicable || fam->applicable(c, p);
    }
    return m;
}

/* Share of the default run time a family's problem gets: its number of
 * parameters that take more than one value (an omit_first one, a kind such
 * as sum's TYPE, of which one value serves each problem, not counted). */
double tn_family_weight(const tpl_family *fam)
{
    int n = 0;
    for (int p = 0; p < fam->n_params; p++)
        n += fam->params[p].n_values > 1 && !fam->params[p].omit_first;
    return n > 0 ? n : 1;
}

/* Warm start from other sizes: for each other problem of fam and of p's kind stored for
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
            tpl_problem_equal(&r->problem, p) || !isfinite(lk_shape_distance(p, &r->problem)))
            continue;                   /* another kind never warm-starts this one */
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

/* The valid, applicable configurations of the current problem (the family's
 * valid set comes from tpl's cache, scanned once per device). -1 if out of
 * memory. */
static int problem_space(tn_ctx *c, tn_prob *pr)
{
    const tpl_family *fam = pr->fam;
    long long *valid = NULL;
    long long n_valid = tn_valid_space(fam, &c->dev, pr->p, &valid);
    if (n_valid < 0)
        return -1;
    pr->valid = valid;
    pr->space.fam = fam;
    pr->space.n_valid = n_valid;
    pr->space.valid = valid;
    pr->stats.valid = n_valid;
    return 0;
}

/* The strategy (--strategy, else by the size of the space) and its budget;
 * creates its state. -1 if out of memory. */
static int choose_strategy(tn_ctx *c, tn_prob *pr)
{
    const tn_options *o = c->opt;
    const tn_strategy *strat = o->strategy ? tn_strategy_find(o->strategy) : NULL;
    pr->budget_s = o->budget_s;
    pr->budget_evals = o->budget_evals;
    if (!strat)
        strat = pr->space.n_valid <= TN_EXHAUSTIVE_MAX ? &tn_strategy_exhaustive
                                                       : tn_strategy_find("guided");
    if (strat != &tn_strategy_exhaustive && pr->budget_s <= 0 && pr->budget_evals <= 0) {
        /* random or guided without --budget: the default share of the
         * run's time, the same whatever the number of GPUs that split the
         * search (they evaluate its candidates in parallel: as many
         * evaluations as one GPU, or more, and the evaluation budget
         * reached sooner) */
        pr->budget_s = c->guided_unit_s * tn_family_weight(pr->fam);
        if (pr->budget_s < TN_GUIDED_MIN_S)
            pr->budget_s = TN_GUIDED_MIN_S;
        if (pr->budget_s > TN_GUIDED_MAX_S)
            pr->budget_s = TN_GUIDED_MAX_S;
        pr->budget_evals = TN_GUIDED_EVALS;
    }
    if (c->second_look) {
        /* the extras only: the time budget is over at once, and an extra
         * is proposed whatever the time (pipeline.c) */
        pr->second_look = 1;
        pr->budget_s = TN_SECOND_LOOK_S;
        pr->budget_evals = 0;
    }
    pr->strat = strat;
    pr->st = strat->create(&pr->space, c->seed);
    return pr->st ? 0 : -1;
}

/* Tells the strategy every result stored before for this problem. */
static void tell_stored(tn_prob *pr)
{
    const tpl_family *fam = pr->fam;
    for (int i = 0; i < pr->n_old; i++) {
        const db_result *r = &pr->old[i];
        if (strcmp(r->source_hash, pr->hash) != 0 || !tpl_problem_equal(&r->problem, pr->p))
            continue;
        int cfg[TPL_MAX_PARAMS];
        char perr[256];
        if (tpl_config_parse(fam, r->config, cfg, perr, sizeof perr) != AT_OK)
            continue;
        long long idx = tpl_config_to_index(fam, cfg);
        if (idx >= 0 && tn_space_position(&pr->space, idx) >= 0)
            pr->strat->tell(pr->st, idx, tn_is_failure(r->status) ? INFINITY : r->time_ms);
    }
}

/* The extras: the built-in choice, the default configuration, every baseline, and the winners
 * of other sizes (transfer_configs), evaluated before the search; each
 * valid, applicable and distinct. -1 if out of memory. */
static int plan_extras(tn_ctx *c, tn_prob *pr)
{
    const tpl_family *fam = pr->fam;
    char transfer[TN_TRANSFER_MAX][TPL_CONFIG_LEN];
    int n_transfer = pr->old ? transfer_configs(pr->p, pr->hash, pr->old, pr->n_old, transfer,
                                                TN_TRANSFER_MAX)
                             : 0;
    /* the built-in choice for this device and problem (what an untuned call runs) first */
    int builtin_cfg[TPL_MAX_PARAMS];
    char builtin[TPL_CONFIG_LEN];
    if (!tpl_builtin_config(fam, &c->dev, pr->p, 0, builtin_cfg, builtin, NULL))
        snprintf(builtin, sizeof builtin, "%s", fam->default_config ? fam->default_config : "");
    pr->extras = calloc((size_t)fam->n_baselines + 2 + TN_TRANSFER_MAX, sizeof *pr->extras);
    for (int b = -2; pr->extras && b < fam->n_baselines + n_transfer; b++) {
        const char *text = b == -2 ? builtin
                           : b < 0 ? fam->default_config
                           : b < fam->n_baselines ? fam->baselines[b].config
                                                  : transfer[b - fam->n_baselines];
        tn_item *it = &pr->extras[pr->n_extra];
        char perr[256], why[256];
        if (!text || tpl_config_parse(fam, text, it->job.cfg, perr, sizeof perr) != AT_OK)
            continue;
        if ((fam->valid && !fam->valid(it->job.cfg, &c->dev, why, sizeof why)) ||
            (fam->applicable && !fam->applicable(it->job.cfg, pr->p)))
            continue;
        tpl_config_format(fam, it->job.cfg, it->config, sizeof it->config);
        int dup = 0;
        for (int k = 0; k < pr->n_extra; k++)
            dup |= strcmp(pr->extras[k].config, it->config) == 0;
        if (dup)
            continue;
        it->index = tpl_config_to_index(fam, it->job.cfg);
        it->extra = 1;
        pr->n_transferred += b >= fam->n_baselines;
        if (it->index < 0 || tn_space_position(&pr->space, it->index) < 0)
            pr->stats.valid++;       /* off-lattice extra */
        pr->n_extra++;
    }
    return pr->extras ? 0 : -1;
}

/* The problem's header line, and the progress line started. */
static void plan_announce(tn_ctx *c, tn_prob *pr)
{
    const tn_stats *s = &pr->stats;
    pr->best_before_ms = pr->best.have ? pr->best.median : 0;
    if (pr->second_look) {           /* silent: the summary says what it did */
        tn_progress_begin(&pr->pg, pr->fam, pr->p, pr->n_extra);
        pr->pg.done = pr->pg.base = s->previously;
        pr->pg.tty = 0;
        return;
    }
    printf("%s%s %s: %lld valid configurations, strategy %s", pr->tag, pr->fam->name,
           pr->size, s->valid, pr->strat->name);
    if (pr->budget_evals > 0)
        printf(", budget %lld evaluations", pr->budget_evals);
    if (pr->budget_s > 0)
        printf("%s %.1f s", pr->budget_evals > 0 ? " or" : ", budget", pr->budget_s);
    if (s->previously)
        printf(", %lld stored before", s->previously);
    if (pr->n_transferred)
        printf(", %d winners of other sizes first", pr->n_transferred);
    printf("\n");
    fflush(stdout);

    long long total = pr->budget_evals > 0 && pr->budget_evals < s->valid ? pr->budget_evals
                                                                          : s->valid;
    tn_progress_begin(&pr->pg, pr->fam, pr->p, total);
    pr->pg.done = pr->pg.base = s->previously;
    pr->pg.budget_s = pr->budget_s;
    if (pr->best.have) {
        pr->pg.best_ms = pr->best.median;
        pr->pg.best_metric = pr->best.metric;
    }
    if (c->opt->quiet)
        pr->pg.tty = 0;
    pr->pg.n_gpus = pr->n_peers;
    memcpy(pr->pg.gpu, pr->peer_ordinal, sizeof pr->pg.gpu);
}

int tn_plan_problem(tn_ctx *c, tn_prob *pr)
{
    if (problem_space(c, pr) != 0) {
        fprintf(stderr, "autotune: out of memory enumerating %s\n", pr->fam->name);
        return -1;
    }
    if (choose_strategy(c, pr) != 0) {
        fprintf(stderr, "autotune: out of memory\n");
        return -1;
    }
    tell_stored(pr);
    int rc = plan_extras(c, pr);
    free(pr->old);
    pr->old = NULL;
    plan_announce(c, pr);
    if (rc != 0)
        fprintf(stderr, "autotune: out of memory\n");
    return rc;
}
