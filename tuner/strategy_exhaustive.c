/* strategy_exhaustive.c: every valid configuration once, in lattice order
 * (skipping those already told, e.g. stored by an earlier run). */
#include <stdlib.h>
#include "strategy.h"

typedef struct exh_state {
    const tn_space *space;
    long long pos;
    tn_bitset seen;
} exh_state;

static void *exh_create(const tn_space *space, unsigned long long seed)
{
    (void)seed;
    exh_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->space = space;
    if (tn_bitset_init(&s->seen, space->n_valid) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

static long long exh_next(void *state)
{
    exh_state *s = state;
    while (s->pos < s->space->n_valid) {
        long long p = s->pos++;
        if (!tn_bitset_test(&s->seen, p)) {
            tn_bitset_set(&s->seen, p);
            return s->space->valid[p];
        }
    }
    return -1;
}

static void exh_tell(void *state, long long index, double cost)
{
    exh_state *s = state;
    (void)cost;
    tn_bitset_set(&s->seen, tn_space_position(s->space, index));
}

static void exh_destroy(void *state)
{
    exh_state *s = state;
    if (!s)
        return;
    tn_bitset_free(&s->seen);
    free(s);
}

const tn_strategy tn_strategy_exhaustive = {
    .name = "exhaustive",
    .summary = "every valid configuration once",
    .lookahead = 0,
    .create = exh_create, .next = exh_next, .tell = exh_tell,
    .destroy = exh_destroy,
};
