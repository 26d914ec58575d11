/* trial.c: which candidates a shape's first calls time when the lookup served it below the
 * exact level: stored winners of nearby shapes from every database layer, the built-in rows'
 * choices, and for small calls the other families' (runtime/api.c loads and times them; the
 * rules are here, apart from CUDA, so the CPU tests check them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "trial.h"

int at_trial_widens(const at_trial_request *r)
{
    const char *forced = getenv("AUTOTUNE_GEMM_FAMILY");
    if (r->level == AT_LOOKUP_EXACT || r->fam->n_dims != 3 || (forced && *forced))
        return 0;
    double flops = 0, bytes = 0;
    r->fam->work(r->problem, &flops, &bytes);
    return flops <= AT_TRIAL_ALTERNATIVES_MAX_FLOPS;
}

/* Appends (fam, cfg, config) unless the list is full or holds it already. */
static void cand_add(at_trial_candidate *out, int *n, int max, const tpl_family *fam,
                     const int *cfg, const char *config, int builtin)
{
    if (*n >= max)
        return;
    for (int i = 0; i < *n; i++)
        if (out[i].fam == fam && strcmp(out[i].config, config) == 0)
            return;
    at_trial_candidate *c = &out[(*n)++];
    c->fam = fam;
    memcpy(c->cfg, cfg, sizeof c->cfg);
    snprintf(c->config, sizeof c->config, "%s", config);
    c->builtin = builtin;
}

/* Family fam's stored winners of shapes near the problem, every layer's in one ranking
 * (lk_nearby_layers), until the list holds upto candidates. */
static void add_nearby(const at_trial_request *r, const tpl_family *fam, at_trial_candidate *out,
                       int *n, int upto)
{
    lk_candidate near[AT_TRIALS_MAX];
    int k = *n < upto ? lk_nearby_layers(r->layers, r->n_layers, r->dev, fam, r->problem, 0,
                                         AT_TRIALS_MAX, near)
                      : 0;
    for (int i = 0; i < k && *n < upto; i++)
        cand_add(out, n, upto, fam, near[i].cfg, near[i].config, 0);
}

/* Family fam's nth built-in choice for the problem (0: tpl_builtin_config's, with its
 * fallbacks; then the next matching rows: tpl_builtin_config_nth). */
static void add_builtin(const at_trial_request *r, const tpl_family *fam, int nth,
                        at_trial_candidate *out, int *n, int max)
{
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    int ok = nth == 0 ? tpl_builtin_config(fam, r->dev, r->problem, 0, cfg, config, NULL)
                      : tpl_builtin_config_nth(fam, r->dev, r->problem, 0, nth, cfg, config, NULL);
    if (ok)
        cand_add(out, n, max, fam, cfg, config, 1);
}

int at_trial_candidates(const at_trial_request *r, at_trial_candidate *out, int max)
{
    int n = 0;
    max = max < AT_TRIALS_MAX ? max : AT_TRIALS_MAX;
    if (max < 1)
        return 0;
    cand_add(out, &n, max, r->fam, r->cfg, r->config, r->level == AT_LOOKUP_DEFAULT);
    int nearby = r->level == AT_LOOKUP_NEAREST || r->level == AT_LOOKUP_ARCH;
    int widens = at_trial_widens(r);
    if (nearby) {
        add_nearby(r, r->fam, out, &n, r->trial_max < max ? r->trial_max : max);
        /* the stored winners of other shapes can be far slower at this shape than the row
         * written for its class (H200, after the default run: FP32 91 x 19 x 11731 at 0.024x
         * cuBLAS through a 4096^3 winner) */
        add_builtin(r, r->fam, 0, out, &n, max);
    }
    /* a second opinion of the plan's family: the next built-in row that matches the shape (a
     * broader class's choice), where a rule's boundary may sit on the wrong side of the call */
    if (widens && tpl_problem_batch(r->problem) <= AT_TRIAL_SECOND_MAX_BATCH)
        add_builtin(r, r->fam, 1, out, &n, max);
    if (!widens)
        return n;
    /* the other families: the shape-class rules that picked the plan's family are right for
     * most shapes, not all: of 56 FP32 and FP64 calls of the random benchmark's seeds 4-8
     * tuned 2.5 s with every family (H200, 2026-11-29), another family beat the rule's built-in
     * choice on 20, by more than 1.2x on 13, up to 5x (FP64 804 x 28 x 32 x 498: bgemm
     * 0.071 ms, skinny's row 0.358 ms) */
    const tpl_family *fams[16];
    int n_fams = lk_gemm_families(r->problem, NULL, fams, 16), others = 0;
    for (int i = 0; i < n_fams && others < r->trial_max - 1 && n < max; i++) {
        if (fams[i] == r->fam || !tpl_family_accepts(fams[i], r->problem))
            continue;
        others++;
        if (nearby)
            add_nearby(r, fams[i], out, &n, n + 1 < max ? n + 1 : max);
        add_builtin(r, fams[i], 0, out, &n, max);
    }
    return n;
}
