/* strategy.c: what the search strategies share: the registry of strategies,
 * membership in the valid space and a small bitmap for visited sets. */
#include <stdlib.h>
#include <string.h>
#include "strategy.h"

static const tn_strategy *const strategy_list[] = {
    &tn_strategy_exhaustive, &tn_strategy_random, &tn_strategy_anneal, &tn_strategy_surrogate,
    NULL,
};

const tn_strategy *const *tn_strategy_all(void)
{
    return strategy_list;
}

const tn_strategy *tn_strategy_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; strategy_list[i]; i++)
        if (strcmp(strategy_list[i]->name, name) == 0)
            return strategy_list[i];
    if (strcmp(name, "annealing") == 0)
        return &tn_strategy_anneal;
    if (strcmp(name, "guided") == 0)     /* the default guided search */
        return &tn_strategy_surrogate;
    return NULL;
}

long long tn_space_position(const tn_space *s, long long index)
{
    long long lo = 0, hi = s->n_valid - 1;
    while (lo <= hi) {
        long long mid = lo + (hi - lo) / 2;
        if (s->valid[mid] == index)
            return mid;
        if (s->valid[mid] < index)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int tn_bitset_init(tn_bitset *b, long long n)
{
    b->n = n;
    b->w = calloc((size_t)(n / 64 + 1), sizeof *b->w);
    return b->w ? 0 : -1;
}

int tn_bitset_test(const tn_bitset *b, long long i)
{
    if (i < 0 || i >= b->n)
        return 0;
    return (int)((b->w[i / 64] >> (i % 64)) & 1u);
}

void tn_bitset_set(tn_bitset *b, long long i)
{
    if (i >= 0 && i < b->n)
        b->w[i / 64] |= 1ull << (i % 64);
}

void tn_bitset_free(tn_bitset *b)
{
    free(b->w);
    b->w = NULL;
    b->n = 0;
}
