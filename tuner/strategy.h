/* strategy.h: the one interface every search strategy implements (ask for
 * the next configuration, tell it a result), one strategy per file. */
#ifndef STRATEGY_H
#define STRATEGY_H

#include "tpl.h"

/* The searchable set for one problem: the family's lattice (param value
 * lists) restricted to the valid, applicable configurations. */
typedef struct tn_space {
    const tpl_family *fam;
    long long n_valid;
    const long long *valid;          /* sorted raw indices */
} tn_space;

/* Position of raw index in s->valid (binary search), -1 if not in it. */
long long tn_space_position(const tn_space *s, long long index);

typedef struct tn_strategy {
    const char *name;                /* "exhaustive", "random", "anneal", "surrogate" */
    const char *summary;             /* one line for --help */
    /* Proposals may run ahead of results: how many to keep in flight. */
    int lookahead;                   /* 0: unlimited (order independent of results) */
    /* New search state; NULL if out of memory. */
    void *(*create)(const tn_space *space, unsigned long long seed);
    /* Next raw index to evaluate, never one told or proposed before;
     * -1 when the strategy has nothing more to propose. */
    long long (*next)(void *state);
    /* Result of any configuration of the space (proposed or not, e.g. a
     * stored result or a baseline): cost = median ms, +INFINITY if failed. */
    void (*tell)(void *state, long long index, double cost);
    /* Optional (NULL): up to max raw indices likely to be proposed soon, not
     * proposed yet, for speculative compiles; returns how many. */
    int (*hint)(void *state, long long *out, int max);
    void (*destroy)(void *state);
} tn_strategy;

extern const tn_strategy tn_strategy_exhaustive;
extern const tn_strategy tn_strategy_random;
extern const tn_strategy tn_strategy_anneal;
extern const tn_strategy tn_strategy_surrogate;

/* By name; NULL if unknown. */
const tn_strategy *tn_strategy_find(const char *name);
/* NULL-terminated list of all strategies. */
const tn_strategy *const *tn_strategy_all(void);

/* Visited-set helper shared by strategies: a bitmap over positions. */
typedef struct tn_bitset { unsigned long long *w; long long n; } tn_bitset;
int tn_bitset_init(tn_bitset *b, long long n);       /* 0 ok, -1 no memory */
int tn_bitset_test(const tn_bitset *b, long long i);
void tn_bitset_set(tn_bitset *b, long long i);
void tn_bitset_free(tn_bitset *b);

#endif
