/* prefetch.c: compiles that later problems will need (every configuration
 * of an exhaustive search), made at idle priority while the CPU is free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tune_core.h"

/* Adds one configuration to pf unless its cubin is stored, queued or in
 * the list already (inactive: only listed, the first problem compiles it
 * at once anyway); 0, or -1 when out of memory. */
static int prefetch_add(tn_ctx *c, tn_prefetch *pf, const tpl_family *fam, const int *cfg,
                        int active)
{
    char key[40];
    tpl_binary_key(fam, cfg, c->arch, key, sizeof key);
    for (int i = 0; i < pf->n; i++)
        if (strcmp(pf->item[i].key, key) == 0)
            return 0;
    void *bin = NULL;
    size_t size = 0;
    if (db_get_binary(c->d, key, &bin, &size) == AT_OK) {
        free(bin);
        return 0;
    }
    if (pf->n == pf->cap) {
        int cap = pf->cap ? 2 * pf->cap : 64;
        tn_spec *more = realloc(pf->item, (size_t)cap * sizeof *more);
        if (!more)
            return -1;
        pf->item = more;
        pf->cap = cap;
    }
    tn_spec *sp = &pf->item[pf->n];
    memset(sp, 0, sizeof *sp);
    sp->job.fam = fam;
    memcpy(sp->job.cfg, cfg, sizeof sp->job.cfg);
    snprintf(sp->job.arch, sizeof sp->job.arch, "%s", c->arch);
    snprintf(sp->key, sizeof sp->key, "%s", key);
    tpl_config_format(fam, cfg, sp->config, sizeof sp->config);
    sp->active = active;
    pf->n++;
    return 0;
}

void tn_prefetch_start(tn_ctx *c, tn_prefetch *pf)
{
    const tn_options *o = c->opt;
    if (o->strategy && strcmp(o->strategy, "exhaustive") != 0)
        return;
    int first = pf->n;
    const tpl_family *fam = NULL;
    long long *valid = NULL, n_valid = -1;
    int (*cfg)[TPL_MAX_PARAMS] = NULL;
    for (int i = 0; i < c->list->n; i++) {
        const tn_look *look = &c->list->look[i];
        if (look->second_look)
            continue;
        if (look->fam != fam) {
            free(cfg);
            free(valid);
            fam = look->fam;
            valid = NULL;
            n_valid = tn_valid_space(fam, &c->dev, NULL, &valid);
            cfg = n_valid > 0 ? malloc((size_t)n_valid * sizeof *cfg) : NULL;
        }
        /* the problem's space, as plan.c makes it */
        long long m = cfg ? tn_serving_configs(fam, valid, n_valid, look->p, TN_EXHAUSTIVE_MAX,
                                               cfg) : 0;
        for (long long v = 0; m <= TN_EXHAUSTIVE_MAX && v < m; v++)
            if (prefetch_add(c, pf, fam, cfg[v], i > 0) != 0)
                break;
    }
    free(cfg);
    free(valid);
    for (int i = first; i < pf->n; i++)
        if (pf->item[i].active)
            tn_pool_submit_idle(c->pool, &pf->item[i].job);
}

void tn_spec_store(tn_ctx *c, tn_spec *sp)
{
    if (sp->job.status == AT_OK)
        tn_store_binary(c, sp->job.fam, sp->job.cfg, sp->key, sp->config, sp->job.cubin,
                        sp->job.cubin_size);
    free(sp->job.cubin);
    free(sp->job.log);
    sp->job.cubin = NULL;
    sp->job.log = NULL;
    sp->active = 0;
}

void tn_prefetch_harvest(tn_ctx *c)
{
    tn_prefetch *pf = c->pre;
    for (int i = 0; pf && i < pf->n; i++)
        if (pf->item[i].active && tn_pool_poll(c->pool, &pf->item[i].job))
            tn_spec_store(c, &pf->item[i]);
}

int tn_prefetch_claim(tn_ctx *c, const char *key)
{
    tn_prefetch *pf = c->pre;
    for (int i = 0; pf && i < pf->n; i++) {
        tn_spec *sp = &pf->item[i];
        if (!sp->active || strcmp(sp->key, key) != 0)
            continue;
        if (tn_pool_cancel(c->pool, &sp->job)) {
            sp->active = 0;                  /* not started: compiled urgently instead */
            return 0;
        }
        if (tn_pool_poll(c->pool, &sp->job)) {
            tn_spec_store(c, sp);            /* finished: its cubin is stored now */
            return 0;
        }
        return i + 1;                        /* running: the item waits for it later */
    }
    return 0;
}

int tn_prefetch_await(tn_ctx *c, int slot, double deadline)
{
    tn_spec *sp = &c->pre->item[slot - 1];
    if (!sp->active)
        return 1;                            /* stored (or failed) meanwhile */
    tn_unlock(c);
    int done = 1;
    if (deadline > 0)
        done = tn_pool_wait_until(c->pool, &sp->job, deadline);
    else
        tn_pool_wait(c->pool, &sp->job);
    tn_relock(c);
    if (done && sp->active)                  /* another GPU may have stored it */
        tn_spec_store(c, sp);
    return done;
}

int tn_prefetch_ready(tn_ctx *c, int slot)
{
    tn_spec *sp = &c->pre->item[slot - 1];
    return !sp->active || tn_pool_poll(c->pool, &sp->job);
}

void tn_prefetch_finish(tn_ctx *c, tn_prefetch *pf)
{
    for (int i = 0; i < pf->n; i++) {
        tn_spec *sp = &pf->item[i];
        if (!sp->active)
            continue;
        if (tn_pool_cancel(c->pool, &sp->job)) {
            sp->active = 0;
            continue;
        }
        tn_pool_wait(c->pool, &sp->job);
        tn_spec_store(c, sp);
    }
    free(pf->item);
    memset(pf, 0, sizeof *pf);
}
