/* strategy_anneal.c: simulated annealing over the parameter lattice:
 * a few random points first, then from the best of them a neighbour moves
 * one parameter to an adjacent value (or two steps), constrained to the
 * valid set; restarts when the search stalls. */
#include <math.h>
#include <stdlib.h>
#include "strategy.h"
#include "tn.h"

#define AN_T0 0.25            /* initial temperature (relative cost units) */
#define AN_COOL 0.92          /* temperature factor per result */
#define AN_STALL 14           /* results without a new best before restart */
#define AN_TRIES 48           /* random neighbour draws before a full scan */
#define AN_PAIR_MOVES 0.5     /* share of moves that change two parameters */
#define AN_SEED_POINTS 12     /* random points sampled before annealing starts,
                                 so one unlucky start cannot trap the search */

typedef struct an_state {
    const tn_space *space;
    const tpl_family *fam;
    tn_rng rng;
    tn_bitset seen;           /* proposed or told, by position */
    double *cost;             /* by position; NAN = unknown */
    long long cur;            /* position of the current point, -1 none */
    double cur_cost;
    long long best;
    double best_cost;
    double temp;
    int stall;
    long long n_seen;
    int restart_pending;      /* next() proposes a fresh random point */
    long long n_proposed;     /* proposals made so far */
    long long restart_at;     /* that point: adopted as current when told */
} an_state;

static void an_destroy(void *state)
{
    an_state *s = state;
    if (!s)
        return;
    tn_bitset_free(&s->seen);
    free(s->cost);
    free(s);
}

static void *an_create(const tn_space *space, unsigned long long seed)
{
    an_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->space = space;
    s->fam = space->fam;
    tn_rng_seed(&s->rng, seed ^ 0x414e4e45414cull);
    s->cost = malloc((size_t)(space->n_valid + 1) * sizeof *s->cost);
    if (!s->cost || tn_bitset_init(&s->seen, space->n_valid) != 0) {
        an_destroy(s);
        return NULL;
    }
    for (long long i = 0; i < space->n_valid; i++)
        s->cost[i] = NAN;
    s->cur = -1;
    s->cur_cost = INFINITY;
    s->best = -1;
    s->best_cost = INFINITY;
    s->temp = AN_T0;
    s->restart_at = -1;
    return s;
}

/* Moves parameter p of cfg by `step` value slots; 0 if off the lattice. */
static int an_move(const tpl_family *fam, int *cfg, int p, int step)
{
    const tpl_param *par = &fam->params[p];
    int vi = -1;
    for (int i = 0; i < par->n_values; i++)
        if (par->values[i] == cfg[p])
            vi = i;
    if (vi < 0 || vi + step < 0 || vi + step >= par->n_values)
        return 0;
    cfg[p] = par->values[vi + step];
    return 1;
}

/* Position of the neighbour of position `from` with parameter p moved by
 * `step` value slots and, when q >= 0, parameter q by `step2` too (coupled
 * parameters, e.g. a thread tile's two sides, often move together); -1 if
 * off the lattice or not valid. */
static long long an_neighbour2(an_state *s, long long from, int p, int step, int q, int step2)
{
    int cfg[TPL_MAX_PARAMS];
    tpl_config_from_index(s->fam, s->space->valid[from], cfg);
    if (!an_move(s->fam, cfg, p, step) || (q >= 0 && !an_move(s->fam, cfg, q, step2)))
        return -1;
    long long idx = tpl_config_to_index(s->fam, cfg);
    return idx < 0 ? -1 : tn_space_position(s->space, idx);
}

static long long an_neighbour(an_state *s, long long from, int p, int step)
{
    return an_neighbour2(s, from, p, step, -1, 0);
}

/* A random unseen position, -1 if every position was seen. */
static long long an_random_unseen(an_state *s)
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

static void an_mark(an_state *s, long long pos)
{
    if (pos >= 0 && !tn_bitset_test(&s->seen, pos)) {
        tn_bitset_set(&s->seen, pos);
        s->n_seen++;
    }
}

static long long an_next(void *state)
{
    an_state *s = state;
    long long pick = -1;
    long long seed_points = s->space->n_valid / 8 < AN_SEED_POINTS ? s->space->n_valid / 8
                                                                   : AN_SEED_POINTS;
    if (s->n_proposed++ < seed_points) {
        pick = an_random_unseen(s);
        if (pick >= 0) {
            an_mark(s, pick);
            return s->space->valid[pick];
        }
    }
    if (s->n_proposed == seed_points + 1 && s->best >= 0) {
        /* annealing starts from the best sampled point */
        s->cur = s->best;
        s->cur_cost = s->best_cost;
        s->stall = 0;
    }
    if (s->restart_pending) {
        s->restart_pending = 0;
        pick = an_random_unseen(s);
        if (pick >= 0) {
            s->restart_at = pick;
            an_mark(s, pick);
            return s->space->valid[pick];
        }
    }
    if (s->cur < 0 && s->best >= 0) {
        s->cur = s->best;
        s->cur_cost = s->best_cost;
    }
    if (s->cur >= 0) {
        int np = s->fam->n_params;
        for (int t = 0; t < AN_TRIES && pick < 0; t++) {
            int p = (int)tn_rng_below(&s->rng, (unsigned long long)np);
            int step = tn_rng_unit(&s->rng) < 0.8 ? 1 : 2;
            if (tn_rng_unit(&s->rng) < 0.5)
                step = -step;
            int p2 = -1, step2 = 0;
            if (np > 1 && tn_rng_unit(&s->rng) < AN_PAIR_MOVES) {
                p2 = (int)tn_rng_below(&s->rng, (unsigned long long)(np - 1));
                if (p2 >= p)
                    p2++;
                step2 = tn_rng_unit(&s->rng) < 0.5 ? -1 : 1;
            }
            long long q = an_neighbour2(s, s->cur, p, step, p2, step2);
            if (q >= 0 && !tn_bitset_test(&s->seen, q))
                pick = q;
        }
        for (int p = 0; p < np && pick < 0; p++)
            for (int step = -2; step <= 2 && pick < 0; step++) {
                if (step == 0)
                    continue;
                long long q = an_neighbour(s, s->cur, p, step);
                if (q >= 0 && !tn_bitset_test(&s->seen, q))
                    pick = q;
            }
        /* no single move left: pairs of parameters, one slot each */
        for (int p = 0; p < np && pick < 0; p++)
            for (int p2 = p + 1; p2 < np && pick < 0; p2++)
                for (int k = 0; k < 4 && pick < 0; k++) {
                    long long q = an_neighbour2(s, s->cur, p, k & 1 ? 1 : -1, p2,
                                                k & 2 ? 1 : -1);
                    if (q >= 0 && !tn_bitset_test(&s->seen, q))
                        pick = q;
                }
    }
    if (pick < 0) {
        /* no unseen neighbour (or no point yet): restart somewhere new */
        pick = an_random_unseen(s);
        if (pick < 0)
            return -1;
        s->restart_at = pick;
        s->temp = AN_T0;
    }
    an_mark(s, pick);
    return s->space->valid[pick];
}

static void an_tell(void *state, long long index, double cost)
{
    an_state *s = state;
    long long pos = tn_space_position(s->space, index);
    if (pos < 0)
        return;
    an_mark(s, pos);
    if (!isnan(s->cost[pos]))
        return;                      /* told twice: keep the first */
    s->cost[pos] = cost;
    int improved = isfinite(cost) && cost < s->best_cost;
    if (improved) {
        s->best = pos;
        s->best_cost = cost;
        s->stall = 0;
    } else {
        s->stall++;
    }
    if (pos == s->restart_at) {
        s->restart_at = -1;
        if (isfinite(cost)) {
            s->cur = pos;
            s->cur_cost = cost;
        }
    } else if (isfinite(cost)) {
        if (s->cur < 0 || !isfinite(s->cur_cost) || cost < s->cur_cost) {
            s->cur = pos;
            s->cur_cost = cost;
        } else {
            double delta = (cost - s->cur_cost) / s->cur_cost;
            if (tn_rng_unit(&s->rng) < exp(-delta / s->temp)) {
                s->cur = pos;
                s->cur_cost = cost;
            }
        }
    }
    s->temp *= AN_COOL;
    if (s->stall >= AN_STALL) {
        /* restart: half the time from the best, else from a fresh point */
        s->stall = 0;
        s->temp = AN_T0;
        if (tn_rng_unit(&s->rng) < 0.5 && s->best >= 0) {
            s->cur = s->best;
            s->cur_cost = s->best_cost;
        } else {
            s->restart_pending = 1;
        }
    }
}

/* Unseen valid neighbours of the current point, then of the best. */
static int an_hint(void *state, long long *out, int max)
{
    an_state *s = state;
    int n = 0;
    long long from[2] = {s->cur, s->best};
    for (int f = 0; f < 2; f++) {
        if (from[f] < 0 || (f == 1 && from[1] == from[0]))
            continue;
        for (int step = 1; step <= 2; step++)
            for (int p = 0; p < s->fam->n_params; p++)
                for (int sign = -1; sign <= 1; sign += 2) {
                    if (n >= max)
                        return n;
                    long long q = an_neighbour(s, from[f], p, sign * step);
                    if (q < 0 || tn_bitset_test(&s->seen, q))
                        continue;
                    int dup = 0;
                    for (int k = 0; k < n && !dup; k++)
                        dup = out[k] == s->space->valid[q];
                    if (!dup)
                        out[n++] = s->space->valid[q];
                }
    }
    return n;
}

const tn_strategy tn_strategy_anneal = {
    .name = "anneal",
    .summary = "simulated annealing over the parameter lattice, with restarts",
    .lookahead = 6,
    .create = an_create, .next = an_next, .tell = an_tell, .hint = an_hint,
    .destroy = an_destroy,
};
