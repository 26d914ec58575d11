/* strategy_random.c: valid configurations in a seeded random order without
 * replacement (a Fisher-Yates shuffle of the valid set). */
#include <stdlib.h>
#include "strategy.h"
#include "tn.h"

typedef struct rnd_state {
    const tn_space *space;
    long long *order;                /* positions, shuffled */
    long long pos;
    tn_bitset seen;
} rnd_state;

static void rnd_destroy(void *state)
{
    rnd_state *s = state;
    if (!s)
        return;
    free(s->order);
    tn_bitset_free(&s->seen);
    free(s);
}

static void *rnd_create(const tn_space *space, unsigned long long seed)
{
    rnd_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->space = space;
    s->order = malloc((size_t)(space->n_valid + 1) * sizeof *s->order);
    if (!s->order || tn_bitset_init(&s->seen, space->n_valid) != 0) {
        rnd_destroy(s);
        return NULL;
    }
    tn_rng rng;
    tn_rng_seed(&rng, seed ^ 0x52414e444f4dull);
    for (long long i = 0; i < space->n_valid; i++)
        s->order[i] = i;
    for (long long i = space->n_valid - 1; i > 0; i--) {
        long long j = (long long)tn_rng_below(&rng, (unsigned long long)i + 1);
        long long t = s->order[i];
        s->order[i] = s->order[j];
        s->order[j] = t;
    }
    return s;
}

static long long rnd_next(void *state)
{
    rnd_state *s = state;
    while (s->pos < s->space->n_valid) {
        long long p = s->order[s->pos++];
        if (!tn_bitset_test(&s->seen, p)) {
            tn_bitset_set(&s->seen, p);
            return s->space->valid[p];
        }
    }
    return -1;
}

static void rnd_tell(void *state, long long index, double cost)
{
    rnd_state *s = state;
    (void)cost;
    tn_bitset_set(&s->seen, tn_space_position(s->space, index));
}

const tn_strategy tn_strategy_random = {
    .name = "random",
    .summary = "valid configurations in random order, without repeats",
    .lookahead = 0,
    .create = rnd_create, .next = rnd_next, .tell = rnd_tell,
    .destroy = rnd_destroy,
};
