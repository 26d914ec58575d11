/* strategy_surrogate.c: model-guided search: a few random points, then
 * unseen configurations that cost models fitted on every result rank best.
 *
 * Two models of log(cost), refitted on every new result, take turns to pick
 * (the additive one twice, then the pair one):
 * - additive: a ridge regression on the one-hot encoded parameter values
 *   (one weight per value of each parameter, plus an intercept): "what does
 *   each value cost on average, the others being equal";
 * - pairs: the same plus a weight per value pair of every two parameters
 *   that vary over the valid set, solved in its dual form (a kernel ridge
 *   regression: the kernel of two configurations with m equal parameters is
 *   1 + m + s2 m(m-1)/2), whose Cholesky factors grow by one row per result;
 *   the prior (s2 and the ridge) is chosen on every refit by the largest
 *   marginal likelihood among SG_MODELS candidates. Beyond SG_PAIR_MAX
 *   results the additive model picks alone.
 * The pair model finds optima that are interactions the values' averages
 * rank poorly; the additive one converges faster where they rank well.
 * Neither knows anything of a family: only the lattice of tn_space and the
 * costs. Every proposal scores the whole valid set, so the constraints of
 * the space are honoured for free; SG_EXPLORE of the proposals are random
 * unseen points so a wrong model cannot trap the search, and failures count
 * as the worst cost seen + 1 (log units), so their values are avoided
 * without dominating the fit. Measured by replaying the recorded H200 matmul
 * tuning and synthetic landscapes over the same lattice (tests/test_replay.c).
 * The lookahead is larger than anneal's and hint() names the models' next
 * picks, so the compile pool stays busy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "strategy.h"
#include "tn.h"

#define SG_SEED_POINTS 10     /* random points before the model is used (at most
                                 an eighth of the space) */
#define SG_EXPLORE 0.05       /* share of later proposals that are random */
#define SG_RIDGE 1.0          /* the additive model's ridge penalty on each
                                 value's weight */
#define SG_FAIL_PENALTY 1.0   /* a failure's log cost above the worst seen */
#define SG_HINTS 16           /* most configurations hint() names */
#define SG_PAIR_MAX 300       /* most results the pair model is fitted on */
#define SG_MODELS 4
#define SG_PAIR_EVERY 3       /* every third model pick is the pair model's */
/* the pair model's candidate priors: the pairs' weight relative to the
 * values', and the ridge (noise) */
static const double sg_pair_prior[SG_MODELS] = {0, 0.3, 1.0, 1.0};
static const double sg_pair_ridge[SG_MODELS] = {0.1, 0.3, 0.3, 0.1};

typedef struct sg_state {
    const tn_space *space;
    int np;
    int nv[TPL_MAX_PARAMS];
    int off[TPL_MAX_PARAMS];
    int nf;                          /* features: one-hot values + intercept */
    unsigned char *vi;               /* value index by position and parameter */
    double *cost;                    /* by position, NAN unknown */
    long long *obs;                  /* told positions in order */
    long long n_obs;
    tn_bitset seen;
    long long n_seen;
    long long n_proposed;
    double *w;                       /* model weights (nf) */
    double *a, *b;                   /* normal equations */
    double *pred;                    /* by position: the additive model's */
    double *pred_pair;               /* by position: the pair model's */
    int turn;                        /* model picks mod SG_PAIR_EVERY, 0 pairs */
    long long fit_at[2];             /* n_obs at the last fit of the additive
                                        model, of the pair model; -1 none */
    int nvp, vp[TPL_MAX_PARAMS];     /* the parameters that vary over the valid set */
    int poff[TPL_MAX_PARAMS][TPL_MAX_PARAMS]; /* by vp indexes a < b: first pair cell */
    int npf;                         /* pair cells */
    double *wpair;                   /* pair cell weights (npf), zero when additive */
    int pairs_on;                    /* the last fit has pair weights */
    double *fac[SG_MODELS];          /* packed lower Cholesky factors of K + ridge I */
    long long n_fac, cap_fac;        /* rows factored, rows allocated */
    unsigned char *match;            /* scratch: equal parameters (cap_fac) */
    double *y, *alpha, *tmp;         /* scratch (cap_fac) */
    tn_rng rng;
} sg_state;

static void sg_destroy(void *state)
{
    sg_state *s = state;
    if (!s)
        return;
    free(s->vi);
    free(s->cost);
    free(s->obs);
    free(s->w);
    free(s->a);
    free(s->b);
    free(s->pred);
    free(s->pred_pair);
    free(s->wpair);
    for (int g = 0; g < SG_MODELS; g++)
        free(s->fac[g]);
    free(s->match);
    free(s->y);
    free(s->alpha);
    free(s->tmp);
    tn_bitset_free(&s->seen);
    free(s);
}

static void *sg_create(const tn_space *space, unsigned long long seed)
{
    sg_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    const tpl_family *fam = space->fam;
    long long n = space->n_valid;
    s->space = space;
    s->np = fam->n_params;
    s->nf = 1;
    for (int p = 0; p < s->np; p++) {
        s->nv[p] = fam->params[p].n_values;
        s->off[p] = s->nf;
        s->nf += s->nv[p];
    }
    s->vi = malloc((size_t)(n + 1) * (size_t)s->np);
    s->cost = malloc((size_t)(n + 1) * sizeof *s->cost);
    s->obs = malloc((size_t)(n + 1) * sizeof *s->obs);
    s->pred = malloc((size_t)(n + 1) * sizeof *s->pred);
    s->pred_pair = malloc((size_t)(n + 1) * sizeof *s->pred_pair);
    s->w = calloc((size_t)s->nf, sizeof *s->w);
    s->a = malloc((size_t)s->nf * (size_t)s->nf * sizeof *s->a);
    s->b = malloc((size_t)s->nf * sizeof *s->b);
    if (!s->vi || !s->cost || !s->obs || !s->pred || !s->pred_pair || !s->w || !s->a || !s->b ||
        tn_bitset_init(&s->seen, n) != 0) {
        sg_destroy(s);
        return NULL;
    }
    for (long long i = 0; i < n; i++) {
        long long idx = space->valid[i];
        for (int p = s->np - 1; p >= 0; p--) {
            s->vi[i * s->np + p] = (unsigned char)(idx % s->nv[p]);
            idx /= s->nv[p];
        }
        s->cost[i] = NAN;
    }
    for (int p = 0; p < s->np; p++) {
        int varies = 0;
        for (long long i = 1; i < n && !varies; i++)
            varies = s->vi[i * s->np + p] != s->vi[p];
        if (varies)
            s->vp[s->nvp++] = p;
    }
    for (int a = 0; a < s->nvp; a++)
        for (int b = a + 1; b < s->nvp; b++) {
            s->poff[a][b] = s->npf;
            s->npf += s->nv[s->vp[a]] * s->nv[s->vp[b]];
        }
    s->wpair = calloc((size_t)s->npf + 1, sizeof *s->wpair);
    if (!s->wpair) {
        sg_destroy(s);
        return NULL;
    }
    s->fit_at[0] = s->fit_at[1] = -1;
    tn_rng_seed(&s->rng, seed ^ 0x5355525247ull);
    return s;
}

static void sg_mark(sg_state *s, long long pos)
{
    if (pos >= 0 && !tn_bitset_test(&s->seen, pos)) {
        tn_bitset_set(&s->seen, pos);
        s->n_seen++;
    }
}

/* Cholesky solve of the nf x nf system a w = b (a symmetric positive). */
static void sg_solve(sg_state *s)
{
    int n = s->nf;
    double *a = s->a;
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];
        for (int k = 0; k < j; k++)
            d -= a[j * n + k] * a[j * n + k];
        d = d > 1e-12 ? sqrt(d) : 1e-6;
        a[j * n + j] = d;
        for (int i = j + 1; i < n; i++) {
            double v = a[i * n + j];
            for (int k = 0; k < j; k++)
                v -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = v / d;
        }
    }
    double *w = s->w;
    for (int i = 0; i < n; i++) {
        double v = s->b[i];
        for (int k = 0; k < i; k++)
            v -= a[i * n + k] * w[k];
        w[i] = v / a[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = w[i];
        for (int k = i + 1; k < n; k++)
            v -= a[k * n + i] * w[k];
        w[i] = v / a[i * n + i];
    }
}

/* The log cost of result k relative to the best seen; a failure counts as
 * the worst seen + SG_FAIL_PENALTY. */
static double sg_target(const sg_state *s, long long k, double lo, double fail)
{
    double c = s->cost[s->obs[k]];
    return (isfinite(c) && c > 0 ? log(c) : fail) - lo;
}

/* The additive model in its primal form (the normal equations of the
 * one-hot values, the intercept free) into s->w. */
static void sg_fit_additive(sg_state *s, double lo, double fail)
{
    int n = s->nf, np = s->np;
    memset(s->a, 0, (size_t)n * (size_t)n * sizeof *s->a);
    memset(s->b, 0, (size_t)n * sizeof *s->b);
    for (int i = 0; i < n; i++)
        s->a[i * n + i] = i == 0 ? 1e-6 : SG_RIDGE;     /* the intercept is free */
    int f[TPL_MAX_PARAMS + 1];
    for (long long k = 0; k < s->n_obs; k++) {
        long long pos = s->obs[k];
        double y = sg_target(s, k, lo, fail);
        f[0] = 0;
        for (int p = 0; p < np; p++)
            f[p + 1] = s->off[p] + s->vi[pos * np + p];
        for (int i = 0; i <= np; i++) {
            s->b[f[i]] += y;
            for (int j = 0; j <= np; j++)
                s->a[f[i] * n + f[j]] += 1;
        }
    }
    sg_solve(s);
}

/* Room for n results in the factors and the scratch arrays; -1 if out of
 * memory (what was grown stays, the state stays usable). */
static int sg_fac_reserve(sg_state *s, long long n)
{
    if (n <= s->cap_fac)
        return 0;
    long long cap = s->cap_fac ? s->cap_fac : 64;
    while (cap < n)
        cap *= 2;
    size_t tri = (size_t)(cap * (cap + 1) / 2);
    for (int g = 0; g < SG_MODELS; g++) {
        double *f = realloc(s->fac[g], tri * sizeof *f);
        if (!f)
            return -1;
        s->fac[g] = f;
    }
    double **vec[3] = {&s->y, &s->alpha, &s->tmp};
    for (int k = 0; k < 3; k++) {
        double *v = realloc(*vec[k], (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        *vec[k] = v;
    }
    unsigned char *m = realloc(s->match, (size_t)cap);
    if (!m)
        return -1;
    s->match = m;
    s->cap_fac = cap;
    return 0;
}

/* Extends the Cholesky factors of K + ridge I (one per pair prior) by a row
 * for each result told since the last fit; -1 if out of memory. */
static int sg_fac_grow(sg_state *s)
{
    if (sg_fac_reserve(s, s->n_obs) != 0)
        return -1;
    int np = s->np;
    for (long long k = s->n_fac; k < s->n_obs; k++) {
        const unsigned char *vk = s->vi + s->obs[k] * np;
        for (long long j = 0; j <= k; j++) {
            const unsigned char *vj = s->vi + s->obs[j] * np;
            int m = 0;
            for (int t = 0; t < s->nvp; t++)
                m += vk[s->vp[t]] == vj[s->vp[t]];
            s->match[j] = (unsigned char)m;
        }
        for (int g = 0; g < SG_MODELS; g++) {
            double *lk = s->fac[g] + k * (k + 1) / 2;
            for (long long j = 0; j <= k; j++) {
                const double *lj = s->fac[g] + j * (j + 1) / 2;
                double m = s->match[j];
                double v = 1.0 + m + sg_pair_prior[g] * 0.5 * m * (m - 1);
                for (long long t = 0; t < j; t++)
                    v -= lk[t] * lj[t];
                if (j < k)
                    lk[j] = v / lj[j];
                else
                    lk[k] = sqrt(fmax(v + sg_pair_ridge[g], 1e-9));
            }
        }
    }
    s->n_fac = s->n_obs;
    return 0;
}

/* Forward solve L z = y into z; the profile log marginal likelihood of the
 * model of factor L (the signal scale at its best): -n/2 log(|z|^2/n) -
 * log det L. */
static double sg_fac_forward(const double *L, long long n, const double *y, double *z)
{
    double logdet = 0, q = 0;
    for (long long k = 0; k < n; k++) {
        const double *lk = L + k * (k + 1) / 2;
        double v = y[k];
        for (long long t = 0; t < k; t++)
            v -= lk[t] * z[t];
        z[k] = v / lk[k];
        logdet += log(lk[k]);
        q += z[k] * z[k];
    }
    return -0.5 * (double)n * log(q / (double)n + 1e-300) - logdet;
}

/* The pair model in its dual form: the pair prior of the largest marginal
 * likelihood, its dual weights, folded into value weights (s->w) and pair
 * weights (s->wpair). -1 if out of memory (nothing changed). */
static int sg_fit_pairs(sg_state *s, double lo, double fail)
{
    if (sg_fac_grow(s) != 0)
        return -1;
    long long n = s->n_obs;
    int np = s->np, best = 0;
    double mean = 0, best_ll = -INFINITY;
    for (long long k = 0; k < n; k++)
        mean += sg_target(s, k, lo, fail) / (double)n;
    for (long long k = 0; k < n; k++)
        s->y[k] = sg_target(s, k, lo, fail) - mean;
    for (int g = 0; g < SG_MODELS; g++) {
        double ll = sg_fac_forward(s->fac[g], n, s->y, s->tmp);
        if (ll > best_ll) {
            best_ll = ll;
            best = g;
            memcpy(s->alpha, s->tmp, (size_t)n * sizeof *s->alpha);
        }
    }
    const double *L = s->fac[best];
    double *al = s->alpha, s2 = sg_pair_prior[best];
    for (long long k = n - 1; k >= 0; k--) {    /* back solve L^T alpha = z */
        double v = al[k];
        for (long long t = k + 1; t < n; t++)
            v -= L[t * (t + 1) / 2 + k] * al[t];
        al[k] = v / L[k * (k + 1) / 2 + k];
    }
    memset(s->w, 0, (size_t)s->nf * sizeof *s->w);
    memset(s->wpair, 0, (size_t)s->npf * sizeof *s->wpair);
    s->w[0] = mean;
    for (long long k = 0; k < n; k++) {
        const unsigned char *v = s->vi + s->obs[k] * np;
        s->w[0] += al[k];
        for (int a = 0; a < s->nvp; a++) {
            int pa = s->vp[a];
            s->w[s->off[pa] + v[pa]] += al[k];
            for (int b = a + 1; b < s->nvp && s2 > 0; b++) {
                int pb = s->vp[b];
                s->wpair[s->poff[a][b] + v[pa] * s->nv[pb] + v[pb]] += s2 * al[k];
            }
        }
    }
    s->pairs_on = s2 > 0;
    return 0;
}

/* The predictions of the weights in s->w (and s->wpair if pairs) for every
 * position into out. */
static void sg_predict(const sg_state *s, int pairs, double *out)
{
    int np = s->np;
    for (long long i = 0; i < s->space->n_valid; i++) {
        const unsigned char *v = s->vi + i * np;
        double p = s->w[0];
        for (int a = 0; a < s->nvp; a++) {
            int pa = s->vp[a];
            p += s->w[s->off[pa] + v[pa]];
            for (int b = a + 1; b < s->nvp && pairs; b++) {
                int pb = s->vp[b];
                p += s->wpair[s->poff[a][b] + v[pa] * s->nv[pb] + v[pb]];
            }
        }
        out[i] = p;
    }
}

/* Refits one model (pairs or additive) on every told result and predicts
 * every position into its array: the pair model into pred_pair (up to
 * SG_PAIR_MAX results; beyond, or out of memory, the additive model's
 * predictions), the additive one into pred. */
static void sg_fit(sg_state *s, int pairs)
{
    double lo = INFINITY, hi = -INFINITY;
    for (long long k = 0; k < s->n_obs; k++) {
        double c = s->cost[s->obs[k]];
        if (isfinite(c) && c > 0) {
            lo = fmin(lo, log(c));
            hi = fmax(hi, log(c));
        }
    }
    if (!isfinite(lo))
        lo = hi = 0;
    double fail = hi + SG_FAIL_PENALTY;
    if (pairs && s->n_obs <= SG_PAIR_MAX && sg_fit_pairs(s, lo, fail) == 0) {
        sg_predict(s, s->pairs_on, s->pred_pair);
    } else {
        sg_fit_additive(s, lo, fail);
        sg_predict(s, 0, pairs ? s->pred_pair : s->pred);
    }
    s->fit_at[pairs] = s->n_obs;
}

/* A random unseen position, -1 if every position was seen. */
static long long sg_random_unseen(sg_state *s)
{
    long long n = s->space->n_valid;
    if (s->n_seen >= n)
        return -1;
    for (int t = 0; t < 64; t++) {
        long long p = (long long)tn_rng_below(&s->rng, (unsigned long long)n);
        if (!tn_bitset_test(&s->seen, p))
            return p;
    }
    long long start = (long long)tn_rng_below(&s->rng, (unsigned long long)n);
    for (long long k = 0; k < n; k++) {
        long long p = (start + k) % n;
        if (!tn_bitset_test(&s->seen, p))
            return p;
    }
    return -1;
}

/* The `max` unseen positions that the predictions pred (s->pred or
 * s->pred_pair, refitted first if a result came since) rank best, best first
 * (ties: lower position first); how many. */
static int sg_ranked(sg_state *s, int pairs, long long *out, int max)
{
    if (s->fit_at[pairs] != s->n_obs)
        sg_fit(s, pairs);
    const double *pred = pairs ? s->pred_pair : s->pred;
    int m = 0;
    for (long long i = 0; i < s->space->n_valid; i++) {
        if (tn_bitset_test(&s->seen, i))
            continue;
        double v = pred[i];
        if (m == max && v >= pred[out[m - 1]])
            continue;
        int j = m < max ? m++ : max - 1;
        while (j > 0 && pred[out[j - 1]] > v) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = i;
    }
    return m;
}

/* After the random points, the models take turns: two picks of the additive
 * model, one of the pair model, so neither one's misjudgement can hold the
 * search for long (the pair model finds optima that are interactions, the
 * additive one converges faster where the values' averages rank well: on the
 * recorded matmul tuning, equal turns lost 9 of 200 searches at 1%). */
static long long sg_next(void *state)
{
    sg_state *s = state;
    long long n0 = s->space->n_valid / 8 < SG_SEED_POINTS ? s->space->n_valid / 8
                                                          : SG_SEED_POINTS;
    long long pick = -1;
    if (s->n_proposed < n0 || s->n_obs == 0 || tn_rng_unit(&s->rng) < SG_EXPLORE)
        pick = sg_random_unseen(s);
    else {
        s->turn = (s->turn + 1) % SG_PAIR_EVERY;
        if (sg_ranked(s, s->turn == 0, &pick, 1) < 1)
            pick = -1;
    }
    if (pick < 0)
        pick = sg_random_unseen(s);
    if (pick < 0)
        return -1;
    s->n_proposed++;
    sg_mark(s, pick);
    return s->space->valid[pick];
}

/* The next proposals the models would make if no result changed them: their
 * rankings interleaved, the next pick's model first, each position once. */
static int sg_hint(void *state, long long *out, int max)
{
    sg_state *s = state;
    if (s->n_obs == 0 || max <= 0)
        return 0;
    if (max > SG_HINTS)
        max = SG_HINTS;
    long long pos[2][SG_HINTS];
    int first = (s->turn + 1) % SG_PAIR_EVERY == 0;   /* the next pick's model */
    int cnt[2] = {sg_ranked(s, first, pos[0], max), sg_ranked(s, !first, pos[1], max)};
    int m = 0, at[2] = {0, 0};
    for (int k = 0; m < max && (at[0] < cnt[0] || at[1] < cnt[1]); k ^= 1) {
        if (at[k] >= cnt[k])
            continue;
        long long p = pos[k][at[k]++];
        int dup = 0;
        for (int i = 0; i < m && !dup; i++)
            dup = out[i] == s->space->valid[p];
        if (!dup)
            out[m++] = s->space->valid[p];
    }
    return m;
}

static void sg_tell(void *state, long long index, double cost)
{
    sg_state *s = state;
    long long pos = tn_space_position(s->space, index);
    if (pos < 0)
        return;
    sg_mark(s, pos);
    if (!isnan(s->cost[pos]))
        return;                      /* told twice: keep the first */
    s->cost[pos] = cost;
    s->obs[s->n_obs++] = pos;
}

const tn_strategy tn_strategy_surrogate = {
    .name = "surrogate",
    .summary = "the best unseen point of per-value and value-pair cost models fitted on every result",
    .lookahead = 8,
    .create = sg_create, .next = sg_next, .tell = sg_tell, .hint = sg_hint,
    .destroy = sg_destroy,
};
