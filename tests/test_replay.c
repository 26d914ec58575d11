/* test_replay.c: replays search strategies on a recorded exhaustive tuning
 * of matmul 4096^3 on an H200 (tests/data/h200-matmul-4096-ffma.tsv: every valid
 * configuration and its median ms), so the guided search's quality is
 * tested on real timings without a GPU; and on synthetic landscapes over the
 * same lattice, so it is not tuned to that one recording. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "strategy.h"
#include "tpl.h"

typedef struct replay {
    tn_space space;
    long long *idx;                  /* sorted raw indices */
    double *cost;                    /* by position */
    double best;
} replay;

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Loads the recording; 0 on success. */
static int replay_load(replay *r, const char *path)
{
    memset(r, 0, sizeof *r);
    const tpl_family *fam = tpl_find("matmul");
    FILE *f = fopen(path, "r");
    if (!fam || !f)
        return -1;
    size_t cap = 1024, n = 0;
    long long *idx = malloc(cap * sizeof *idx);
    double *ms = malloc(cap * sizeof *ms);
    char line[1024];
    while (idx && ms && fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        int cfg[TPL_MAX_PARAMS];
        char err[256];
        if (tpl_config_parse(fam, line, cfg, err, sizeof err) != AT_OK)
            continue;
        long long i = tpl_config_to_index(fam, cfg);
        if (i < 0)
            continue;
        if (n == cap) {
            cap *= 2;
            long long *ni = realloc(idx, cap * sizeof *idx);
            double *nm = realloc(ms, cap * sizeof *ms);
            if (ni)
                idx = ni;
            if (nm)
                ms = nm;
            if (!ni || !nm)
                break;
        }
        idx[n] = i;
        ms[n] = strtod(tab + 1, NULL);
        n++;
    }
    fclose(f);
    if (n < 100) {
        free(idx);
        free(ms);
        return -1;
    }
    /* sort positions by raw index, carrying the costs */
    long long *pairs = malloc(n * 2 * sizeof *pairs);
    for (size_t i = 0; i < n; i++) {
        pairs[2 * i] = idx[i];
        memcpy(&pairs[2 * i + 1], &ms[i], sizeof(double));
    }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_ll);
    r->best = INFINITY;
    r->cost = malloc(n * sizeof *r->cost);
    for (size_t i = 0; i < n; i++) {
        idx[i] = pairs[2 * i];
        memcpy(&r->cost[i], &pairs[2 * i + 1], sizeof(double));
        if (r->cost[i] < r->best)
            r->best = r->cost[i];
    }
    free(pairs);
    free(ms);
    r->idx = idx;
    r->space.fam = fam;
    r->space.n_valid = (long long)n;
    r->space.valid = idx;
    return 0;
}

/* Modeled tuner time (ms) of evaluating a configuration of median `ms`
 * when the best so far is `best`: the searched candidates' timing options
 * of tuner/pipeline.c (1 warm-up run, 3 to 40 timed runs until 50 ms of GPU
 * time, abandoned after 3 runs when slower than 1.5x the best), one
 * verification run, and 7 ms of fixed cost (load, copies, the pipe): the
 * recorded exhaustive run took 66 ms per configuration, this model 66 too. */
static double replay_eval_ms(double ms, double best)
{
    int runs = 0;
    double total = 0;
    while (runs < 40) {
        runs++;
        total += ms;
        if (runs >= 3 && ((isfinite(best) && ms > 1.5 * best) || total >= 50.0))
            break;
    }
    return 7.0 + ms * (runs + 2);
}

/* One search with the tuner's lookahead, stopping after budget_evals
 * evaluations (0: no limit) or once budget_ms of modeled time is spent
 * (0: no limit), as the tuner checks its time budget before each start;
 * the default configuration is told first, as the tuner does (its time
 * counts). Best cost; the evaluations made in *evals, time in *spent. */
static double replay_search(const replay *r, const tn_strategy *strat, unsigned long long seed,
                            long long budget_evals, double budget_ms, long long *evals,
                            double *spent)
{
    void *st = strat->create(&r->space, seed);
    double best = INFINITY, t = 0;
    long long done = 0;
    if (!st)
        return INFINITY;
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    const tpl_family *fam = r->space.fam;
    if (fam->default_config &&
        tpl_config_parse(fam, fam->default_config, cfg, err, sizeof err) == AT_OK) {
        long long pos = tn_space_position(&r->space, tpl_config_to_index(fam, cfg));
        if (pos >= 0) {
            strat->tell(st, r->idx[pos], r->cost[pos]);
            t += replay_eval_ms(r->cost[pos], best);
            best = r->cost[pos];
        }
    }
    long long inflight[16];
    int n_in = 0;
    int look = strat->lookahead > 0 && strat->lookahead < 16 ? strat->lookahead : 1;
    for (;;) {
        if ((budget_evals > 0 && done >= budget_evals) || (budget_ms > 0 && t >= budget_ms))
            break;
        while (n_in < look && (budget_evals <= 0 || done + n_in < budget_evals)) {
            long long i = strat->next(st);
            if (i < 0)
                break;
            inflight[n_in++] = i;
        }
        if (n_in == 0)
            break;
        long long i = inflight[0];
        memmove(inflight, inflight + 1, (size_t)(n_in - 1) * sizeof *inflight);
        n_in--;
        long long pos = tn_space_position(&r->space, i);
        double c = pos >= 0 ? r->cost[pos] : INFINITY;
        t += replay_eval_ms(c, best);
        if (c < best)
            best = c;
        strat->tell(st, i, c);
        done++;
    }
    strat->destroy(st);
    if (evals)
        *evals = done;
    if (spent)
        *spent = t;
    return best;
}

/* Success counts of a strategy over `trials` seeds (100, 101, ...): within
 * a factor within[k] of the best (1.03: 3%) at a quarter of the exhaustive
 * evaluations (hits[k]) and at a quarter of the exhaustive modeled time
 * (hits_t[k], with the mean evaluations that time allowed in *evals_t).
 * Each seed's two searches serve both factors; the seeds run on all cores. */
typedef struct replay_job {
    const replay *r;
    const tn_strategy *strat;
    double ex_ms;
    int trials, stride, first;
    double *best_e, *best_t;         /* per trial: best at 1/4 evaluations, at 1/4 time */
    long long *evals;                /* per trial: evaluations in 1/4 of the time */
} replay_job;

static void *replay_trials(void *arg)
{
    replay_job *j = arg;
    for (int t = j->first; t < j->trials; t += j->stride) {
        j->best_e[t] = replay_search(j->r, j->strat, 100 + t, j->r->space.n_valid / 4, 0, NULL,
                                     NULL);
        j->best_t[t] = replay_search(j->r, j->strat, 100 + t, 0, j->ex_ms / 4, &j->evals[t], NULL);
    }
    return NULL;
}

static void replay_rate(const replay *r, const tn_strategy *strat, int trials, double ex_ms,
                        const double within[2], int hits[2], int hits_t[2], double *evals_t)
{
    enum { MAX_THREADS = 8 };
    double *best_e = calloc((size_t)trials, sizeof *best_e);
    double *best_t = calloc((size_t)trials, sizeof *best_t);
    long long *evals = calloc((size_t)trials, sizeof *evals);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
    replay_job jobs[MAX_THREADS];
    pthread_t threads[MAX_THREADS];
    int started[MAX_THREADS];
    hits[0] = hits[1] = hits_t[0] = hits_t[1] = 0;
    *evals_t = 0;
    if (!best_e || !best_t || !evals)
        n = 0;                       /* out of memory: no hits */
    for (int k = 0; k < n; k++) {
        jobs[k] = (replay_job){r, strat, ex_ms, trials, n, k, best_e, best_t, evals};
        started[k] = pthread_create(&threads[k], NULL, replay_trials, &jobs[k]) == 0;
        if (!started[k])
            replay_trials(&jobs[k]);
    }
    for (int k = 0; k < n; k++)
        if (started[k])
            pthread_join(threads[k], NULL);
    for (int t = 0; n > 0 && t < trials; t++) {
        for (int w = 0; w < 2; w++) {
            hits[w] += best_e[t] <= within[w] * r->best;
            hits_t[w] += best_t[t] <= within[w] * r->best;
        }
        *evals_t += (double)evals[t] / trials;
    }
    free(best_e);
    free(best_t);
    free(evals);
}

/* Modeled time of the exhaustive strategy over the whole space (the
 * default configuration, told first, is not proposed again); -1 if it did
 * not see every configuration. */
static double replay_exhaustive_ms(const replay *r)
{
    double spent = 0;
    long long n = 0;
    double b = replay_search(r, &tn_strategy_exhaustive, 1, 0, 0, &n, &spent);
    return n >= r->space.n_valid - 1 && b == r->best ? spent : -1;
}

static void replay_free(replay *r)
{
    free(r->idx);
    free(r->cost);
}

TEST(replay_guided_search_on_recorded_h200_matmul)
{
    replay r;
    CHECK_MSG(replay_load(&r, "tests/data/h200-matmul-4096-ffma.tsv") == 0,
              "cannot load tests/data/h200-matmul-4096-ffma.tsv (run from the repository root)");
    double ex_ms = replay_exhaustive_ms(&r);
    CHECK(ex_ms > 0);
    /* issue 6: within 3% of the exhaustive best in a quarter of the
     * exhaustive time; a quarter of the evaluations is the second view */
    const tn_strategy *guided = tn_strategy_find("guided");
    const tn_strategy *list[] = {guided, &tn_strategy_anneal, &tn_strategy_random};
    const int trials = 100;
    int hits[3], hits_t[3], tight[3], tight_t[3];
    double evals_t[3];
    const double within[2] = {1.03, 1.01};
    printf("    %lld configurations, exhaustive %.1f s modeled (%.0f ms each); budgets %lld "
           "evaluations / %.1f s\n", r.space.n_valid, ex_ms / 1000, ex_ms / (double)r.space.n_valid,
           r.space.n_valid / 4, ex_ms / 4000);
    for (int k = 0; k < 3; k++) {
        int h[2], ht[2];
        replay_rate(&r, list[k], trials, ex_ms, within, h, ht, &evals_t[k]);
        hits[k] = h[0];
        tight[k] = h[1];
        hits_t[k] = ht[0];
        tight_t[k] = ht[1];
        printf("    %-10s within 3%% / 1%%: %3d / %3d of %d at 1/4 of the evaluations, %3d / %3d "
               "at 1/4 of the time (%.0f evaluations)\n", list[k]->name, hits[k], tight[k], trials,
               hits_t[k], tight_t[k], evals_t[k]);
    }
    /* This recording (stream-K and FFMA orders in the space) has many 128x256 tiles
     * within 3% of the best, so random search reaches 3% too and the strategies are
     * told apart at 1%. Measured when written (evaluations / time views, all 1045
     * configurations, 200 seeds): surrogate 200/200 at 3%, 198/198 at 1% (the additive
     * model alone 200/200); anneal 200/200 and 170/170; random 200/200 and 53/53. */
    CHECK_MSG(guided == &tn_strategy_surrogate, "guided is %s", guided->name);
    CHECK_MSG(hits[0] * 100 >= trials * 95, "guided reached 3%% in only %d of %d searches",
              hits[0], trials);
    CHECK_MSG(hits_t[0] * 100 >= trials * 95,
              "guided reached 3%% in a quarter of the time in only %d of %d searches", hits_t[0],
              trials);
    CHECK_MSG(tight[0] * 2 >= tight[2] * 3, "1%%: guided %d vs random %d", tight[0], tight[2]);
    CHECK_MSG(tight[1] * 5 >= tight[2] * 6, "1%%: anneal %d vs random %d", tight[1], tight[2]);
    replay_free(&r);
}

static unsigned long long syn_hash(unsigned long long x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* Uniform in [0, 1) from a key. */
static double syn_unit(unsigned long long key)
{
    return (double)(syn_hash(key) >> 11) * (1.0 / 9007199254740992.0);
}

/* Replaces the recorded costs by a synthetic landscape over the same valid
 * set: log cost = random effects of each parameter's value + random effects
 * of value pairs for about 15% of the parameter pairs (weight `inter`) + 2%
 * noise per configuration, so the optimum is an interaction, not only the
 * best value of each parameter. Parameters that keep one value over the whole
 * set (the problem's kind: ops, batch) take no part unless `all` (the
 * generator before 2026-11-23): they would only shift the effects of the
 * others, so a family that gains such a parameter keeps its landscapes; with
 * `all`, their pair terms act as large extra effects of their partners'
 * values. */
static void syn_costs(replay *r, unsigned long long seed, double inter, int all)
{
    const tpl_family *fam = r->space.fam;
    int np = fam->n_params, varies[TPL_MAX_PARAMS] = {0}, first[TPL_MAX_PARAMS];
    for (long long i = 0; i < r->space.n_valid; i++) {
        long long x = r->idx[i];
        for (int p = np - 1; p >= 0; p--) {
            int v = (int)(x % fam->params[p].n_values);
            x /= fam->params[p].n_values;
            if (i == 0)
                first[p] = v;
            varies[p] |= v != first[p] || all;
        }
    }
    r->best = INFINITY;
    for (long long i = 0; i < r->space.n_valid; i++) {
        int vi[TPL_MAX_PARAMS];
        long long x = r->idx[i];
        for (int p = np - 1; p >= 0; p--) {
            vi[p] = (int)(x % fam->params[p].n_values);
            x /= fam->params[p].n_values;
        }
        double y = 0;
        for (int p = 0; p < np; p++)
            if (varies[p])
                y += 0.15 * syn_unit(seed * 1000003ull + (unsigned long long)(p * 131 + vi[p]));
        for (int p = 0; p < np; p++)
            for (int q = p + 1; q < np; q++)
                if (varies[p] && varies[q] &&
                    syn_unit(seed * 7777ull + (unsigned long long)(p * 31 + q)) < 0.15)
                    y += inter * 0.3 *
                         (syn_unit(seed * 99991ull +
                                   (unsigned long long)(p * 1313 + q * 17 + vi[p] * 5 + vi[q])) -
                          0.5);
        y += 0.02 * syn_unit(seed * 31337ull + (unsigned long long)i);
        r->cost[i] = exp(y);
        if (r->cost[i] < r->best)
            r->best = r->cost[i];
    }
}

/* Generalization: the guided search on landscapes it was not tuned on. */
TEST(replay_guided_search_on_synthetic_landscapes)
{
    replay r;
    CHECK_MSG(replay_load(&r, "tests/data/h200-matmul-4096-ffma.tsv") == 0,
              "cannot load tests/data/h200-matmul-4096-ffma.tsv (run from the repository root)");
    const tn_strategy *guided = tn_strategy_find("guided");
    const int trials = 30;
    /* weights of the pairwise interactions; 6 makes them dominate. Landscape
     * 4 is landscape 2 of the generator before 2026-11-23 (constant parameters
     * take part): its optimum is a lone configuration 39% faster than the
     * next best, 8 parameters away from it, which the values' averages rank
     * poorly: at a quarter of the evaluations the additive model alone found
     * it in 18 of 60 searches (random 14), with the pair model's turns 48. */
    const double inter[] = {1.0, 2.5, 6.0, 6.0, 6.0};
    const int seed[] = {11, 12, 13, 14, 13}, all[] = {0, 0, 0, 0, 1}, n_land = 5;
    int sum_g = 0, sum_r = 0;
    for (int k = 0; k < n_land; k++) {
        syn_costs(&r, (unsigned long long)seed[k], inter[k], all[k]);
        double ex_ms = replay_exhaustive_ms(&r);
        CHECK(ex_ms > 0);
        const double within[2] = {1.03, 1.03};
        int g[2], gt[2], rn[2], rnt[2];
        double eg, er;
        replay_rate(&r, guided, trials, ex_ms, within, g, gt, &eg);
        replay_rate(&r, &tn_strategy_random, trials, ex_ms, within, rn, rnt, &er);
        int hg = g[0], hgt = gt[0], hr = rn[0], hrt = rnt[0];
        printf("    landscape %d (interactions x%.1f%s): %s %d/%d and %d/%d, random %d/%d and "
               "%d/%d (evaluations / time)\n", k, inter[k], all[k] ? ", old generator" : "",
               guided->name, hg, trials, hgt, trials, hr, trials, hrt, trials);
        /* landscape 4 when written: 28/30, the additive model alone 16/30 */
        CHECK_MSG(hg * 10 >= trials * (all[k] ? 7 : 8), "landscape %d: guided %d of %d", k, hg,
                  trials);
        sum_g += hg + hgt;
        sum_r += hr + hrt;
    }
    /* measured when written: guided 298/300, random 136/300 (the additive model alone
     * 283/300, failing landscape 4) */
    CHECK_MSG(sum_g * 100 >= 2 * n_land * trials * 95, "guided %d of %d", sum_g,
              2 * n_land * trials);
    CHECK_MSG(sum_g >= 2 * sum_r, "guided %d vs random %d", sum_g, sum_r);
    replay_free(&r);
}

/* The guided search proposes only valid configurations, never one twice,
 * eventually all of them, and the same ones for the same seed. */
TEST(replay_guided_search_proposals)
{
    replay r;
    CHECK_MSG(replay_load(&r, "tests/data/h200-matmul-4096-ffma.tsv") == 0,
              "cannot load tests/data/h200-matmul-4096-ffma.tsv (run from the repository root)");
    const tn_strategy *g = tn_strategy_find("guided");
    unsigned char *hit = calloc((size_t)r.space.n_valid, 1);
    long long *order = malloc((size_t)r.space.n_valid * sizeof *order);
    void *a = g->create(&r.space, 5), *b = g->create(&r.space, 5);
    CHECK(hit && order && a && b);
    /* a result told up front (a stored one) is never proposed */
    g->tell(a, r.idx[7], r.cost[7]);
    g->tell(b, r.idx[7], r.cost[7]);
    hit[7] = 1;
    long long n = 1, bad = 0, differ = 0;
    for (;;) {
        long long i = g->next(a);
        if (i < 0)
            break;
        long long pos = tn_space_position(&r.space, i);
        if (pos < 0 || hit[pos]) {
            bad++;
            break;
        }
        hit[pos] = 1;
        order[n++] = i;
        differ += g->next(b) != i;
        /* a failure now and then, told like the tuner does */
        double c = n % 17 == 0 ? INFINITY : r.cost[pos];
        g->tell(a, i, c);
        g->tell(b, i, c);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(n, r.space.n_valid);
    CHECK_EQ(differ, 0);
    g->destroy(a);
    g->destroy(b);
    free(hit);
    free(order);
    replay_free(&r);
}
