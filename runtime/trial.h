/* trial.h: the candidates a new shape's first calls time (runtime/trial.c
 * chooses them from the database layers and the built-in rows; runtime/api.c
 * loads and times them). Internal to the library. */
#ifndef AT_TRIAL_H
#define AT_TRIAL_H

#include "db.h"
#include "lookup.h"
#include "tpl.h"

/* Calls of at most this many floating-point operations (the family's work: 2 m n k per
 * product) widen their trial to the other families and to their own family's next built-in
 * row: 2^35, about 0.7 ms of FP32 on an H200 */
#define AT_TRIAL_ALTERNATIVES_MAX_FLOPS 34359738368.0
/* Batches of at most this many products also time the family's next built-in row: a later
 * row can be one launch per product (tcgemm's PATH 90), which thousands of small products
 * would make each trial call pay thousands of times */
#define AT_TRIAL_SECOND_MAX_BATCH 32

/* One candidate: a family's configuration, and where its cubin comes from. */
typedef struct at_trial_candidate {
    const tpl_family *fam;
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    int builtin;        /* 1: a built-in choice (its cubin from a layer, else compiled once);
                           0: a stored winner of another shape (its cubin in a layer) */
} at_trial_candidate;

/* What a plan's trial is chosen from. */
typedef struct at_trial_request {
    db *const *layers;              /* the handle's databases, the user's first (NULLs skipped) */
    int n_layers;
    const at_device_info *dev;
    const tpl_family *fam;          /* the plan's family */
    const tpl_problem *problem;
    at_lookup_level level;          /* the level the lookup served the plan at */
    const int *cfg;                 /* the plan's configuration (candidate 0) */
    const char *config;
    int trial_max;                  /* at_set_trials: nearby winners of the plan's family */
} at_trial_request;

/* 1 if the plan's trial widens beyond its own family's first choices: a GEMM served below
 * the exact level, of at most AT_TRIAL_ALTERNATIVES_MAX_FLOPS, without $AUTOTUNE_GEMM_FAMILY
 * naming the family to serve with. */
int at_trial_widens(const at_trial_request *r);

/* The candidates, distinct (family, configuration), at most max (<= AT_TRIALS_MAX) into out;
 * the count. out[0] is the plan's own. Then, for a plan served at the nearest or the
 * architecture's level, its family's stored winners of nearby shapes (lk_nearby_layers: every
 * layer's in one ranking) until trial_max candidates, and its built-in choice; for a widened trial
 * its family's next matching built-in row (batches of at most AT_TRIAL_SECOND_MAX_BATCH),
 * then for each other family the runtime chooses among for the shape (lk_gemm_families, at
 * most trial_max - 1 of them) its winner of the nearest stored shape and its built-in
 * choice. Deterministic plans never try (the caller's rule). */
int at_trial_candidates(const at_trial_request *r, at_trial_candidate *out, int max);

#endif
