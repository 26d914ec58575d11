/* defaults.c: the built-in configuration of a problem nothing was tuned for: a family's
 * defaults table per architecture, kind and shape class (with the wave-fill split-K rule),
 * then its portable default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

/* An H200-class device where the caller has none (tests, replay): 132 SMs, 228 KiB of
 * shared memory, 64 Ki registers and 2048 threads per SM. */
#define TPL_DEFAULT_SMS 132
#define TPL_DEFAULT_SMEM_PER_SM (228 * 1024)
#define TPL_DEFAULT_REGS_PER_SM 65536
#define TPL_DEFAULT_THREADS_PER_SM 2048
#define TPL_MAX_BLOCKS_PER_SM 32

int tpl_tile_blocks_per_sm(const tpl_tile *t, const at_device_info *dev)
{
    if (t->blocks_per_sm > 0)
        return t->blocks_per_sm;
    int threads_sm = dev && dev->max_threads_per_sm > 0 ? dev->max_threads_per_sm
                                                        : TPL_DEFAULT_THREADS_PER_SM;
    long long smem_sm = dev && dev->smem_per_sm > 0 ? dev->smem_per_sm : TPL_DEFAULT_SMEM_PER_SM;
    long long regs_sm = dev && dev->regs_per_sm > 0 ? dev->regs_per_sm : TPL_DEFAULT_REGS_PER_SM;
    long long n = TPL_MAX_BLOCKS_PER_SM;
    if (t->threads > 0 && threads_sm / t->threads < n)
        n = threads_sm / t->threads;
    if (t->smem > 0 && smem_sm / (t->smem + 1024) < n)
        n = smem_sm / (t->smem + 1024);
    if (t->regs > 0 && t->threads > 0 && regs_sm / ((long long)t->regs * t->threads) < n)
        n = regs_sm / ((long long)t->regs * t->threads);
    return n > 0 ? (int)n : 1;
}

int tpl_device_sms(const at_device_info *dev)
{
    return dev && dev->sm_count > 0 ? dev->sm_count : TPL_DEFAULT_SMS;
}

/* The output tiles of cfg's tile (its SPLITK parameter sp at 1) over p's output and batch, and
 * the blocks one wave of dev holds: 1 with cfg[sp] left at 1, 0 (cfg unchanged) where the
 * family cannot describe the tile. */
static int wave_geometry(const tpl_family *fam, const at_device_info *dev, const tpl_problem *p,
                         int sp, int *cfg, long long *tiles, long long *wave)
{
    const int given = cfg[sp];
    cfg[sp] = 1;
    tpl_tile t;
    if (!fam->tile_of(cfg, &t) || t.bm <= 0 || t.bn <= 0) {
        cfg[sp] = given;
        return 0;
    }
    *tiles = tpl_cdiv(p->dims[0], t.bm) * tpl_cdiv(p->dims[1], t.bn) * tpl_problem_batch(p);
    *wave = (long long)tpl_device_sms(dev) * tpl_tile_blocks_per_sm(&t, dev);
    return 1;
}

int tpl_wave_split(const tpl_family *fam, const at_device_info *dev, const tpl_problem *p,
                   int deterministic, int *cfg)
{
    int sp = tpl_param_index(fam, "SPLITK");
    if (sp < 0 || !fam->tile_of || p->n_dims != 3)
        return 0;
    const int given = cfg[sp];
    long long tiles, wave, k = p->dims[2];
    if (!wave_geometry(fam, dev, p, sp, cfg, &tiles, &wave))
        return 0;
    char text[TPL_CONFIG_LEN];
    int best = 0, scratch[TPL_MAX_PARAMS];
    /* the family's values in increasing order; the first that fills the wave ends the walk */
    for (int last = 0;;) {
        int next = 0;
        for (int v = 0; v < fam->params[sp].n_values; v++) {
            int s = fam->params[sp].values[v];
            if (s > last && (next == 0 || s < next))
                next = s;
        }
        if (next == 0 || (next > 1 && k / next < TPL_WAVE_MIN_SLICE_K))
            break;
        last = next;
        cfg[sp] = next;
        tpl_config_format(fam, cfg, text, sizeof text);
        if (tpl_config_usable(fam, dev, text, p, deterministic, scratch))
            best = next;
        if (best && tiles * best * 100 >= wave * TPL_WAVE_FILL_PERCENT)
            break;
    }
    cfg[sp] = best ? best : given;
    return best;
}

int tpl_wave_split_exact(const tpl_family *fam, const at_device_info *dev, const tpl_problem *p,
                         int deterministic, int *cfg)
{
    int sp = tpl_param_index(fam, "SPLITK");
    if (sp < 0 || !fam->tile_of || p->n_dims != 3 || fam->params[sp].runtime_from < 1)
        return tpl_wave_split(fam, dev, p, deterministic, cfg);
    const tpl_param *par = &fam->params[sp];
    const int given = cfg[sp];
    long long tiles, wave, k = p->dims[2];
    if (!wave_geometry(fam, dev, p, sp, cfg, &tiles, &wave))
        return 0;
    int top = 0;
    for (int v = 0; v < par->n_values; v++)
        top = par->values[v] > top ? par->values[v] : top;
    long long s = tiles > 0 ? wave / tiles : 0;
    if (s > top)
        s = top;
    while (s >= 2 && k / s < TPL_WAVE_MIN_SLICE_K)
        s--;
    int lo = par->runtime_from > 2 ? par->runtime_from : 2;
    char text[TPL_CONFIG_LEN];
    int scratch[TPL_MAX_PARAMS];
    for (; s >= lo; s--) {
        cfg[sp] = (int)s;
        tpl_config_format(fam, cfg, text, sizeof text);
        if (tpl_config_usable(fam, dev, text, p, deterministic, scratch))
            return (int)s;
    }
    cfg[sp] = given;
    return tpl_wave_split(fam, dev, p, deterministic, cfg);
}

int tpl_config_usable(const tpl_family *fam, const at_device_info *dev, const char *text,
                      const tpl_problem *p, int deterministic, int *cfg)
{
    char why[256];
    if (!text || tpl_config_parse(fam, text, cfg, why, sizeof why) != AT_OK)
        return 0;
    if (!fam->valid(cfg, dev, NULL, 0))
        return 0;
    if (fam->applicable && !fam->applicable(cfg, p))
        return 0;
    if (deterministic && fam->deterministic && !fam->deterministic(cfg))
        return 0;
    return 1;
}

/* 1 if mask is 0 (any) or has bit v. */
static int in_mask(unsigned mask, int v)
{
    return mask == 0 || (v >= 0 && v < 32 && (mask & TPL_BIT(v)));
}

int tpl_default_matches(const tpl_default *r, const at_device_info *dev, const tpl_problem *p)
{
    if (dev) {
        int cc = dev->cc_major * 10 + dev->cc_minor;
        if ((r->cc_min > 0 && cc < r->cc_min) || (r->cc_max > 0 && cc > r->cc_max))
            return 0;
    }
    if (!in_mask(r->dtypes, (int)p->dtype) || !in_mask(r->maths, (int)p->math) ||
        !in_mask(r->ops, (int)p->op_a * 2 + (int)p->op_b))
        return 0;
    long long batch = tpl_problem_batch(p);
    if ((r->batch == TPL_SINGLE && batch > 1) || (r->batch == TPL_BATCHED && batch <= 1) ||
        (r->max_batch > 0 && batch > r->max_batch))
        return 0;
    if (p->n_dims == 3) {
        long long tiles = tpl_cdiv(p->dims[0], 128) * tpl_cdiv(p->dims[1], 128) * batch;
        if ((r->max_tiles > 0 && tiles > r->max_tiles) ||
            (r->min_tiles > 0 && tiles < r->min_tiles) ||
            (r->min_k > 0 && p->dims[2] < r->min_k) ||
            (r->max_mn > 0 && (p->dims[0] > r->max_mn || p->dims[1] > r->max_mn)) ||
            (r->min_mn > 0 && (p->dims[0] < r->min_mn || p->dims[1] < r->min_mn)) ||
            (r->max_m > 0 && p->dims[0] > r->max_m) || (r->max_n > 0 && p->dims[1] > r->max_n) ||
            (r->max_k > 0 && p->dims[2] > r->max_k))
            return 0;
    } else if (r->max_tiles > 0 || r->min_tiles > 0 || r->min_k > 0 || r->max_mn > 0 || r->min_mn > 0 ||
               r->max_m > 0 || r->max_n > 0 || r->max_k > 0) {
        return 0;
    }
    return 1;
}

/* Row r's configuration fitted to p's kind, if usable: 1 with cfg and its text. */
static int row_usable(const tpl_family *fam, const at_device_info *dev, const tpl_default *r,
                      const tpl_problem *p, int deterministic, int *cfg, char *config)
{
    char why[256];
    if (tpl_config_parse(fam, r->config, cfg, why, sizeof why) != AT_OK)
        return 0;
    if (fam->fit_kind)
        fam->fit_kind(cfg, p);
    if (r->fill_waves == TPL_FILL_ONE_WAVE)
        tpl_wave_split_exact(fam, dev, p, deterministic, cfg);
    else if (r->fill_waves)
        tpl_wave_split(fam, dev, p, deterministic, cfg);
    if (r->applies && !r->applies(cfg, dev, p))
        return 0;
    char text[TPL_CONFIG_LEN];
    tpl_config_format(fam, cfg, text, sizeof text);
    if (!tpl_config_usable(fam, dev, text, p, deterministic, cfg))
        return 0;
    snprintf(config, TPL_CONFIG_LEN, "%s", text);
    return 1;
}

int tpl_builtin_config_nth(const tpl_family *fam, const at_device_info *dev,
                           const tpl_problem *p, int deterministic, int nth, int *cfg,
                           char *config, const char **origin)
{
    /* no more distinct choices than rows */
    if (nth < 0 || nth >= fam->n_defaults)
        return 0;
    /* the texts of the distinct choices met so far, in row order */
    char (*seen)[TPL_CONFIG_LEN] = malloc((size_t)(nth + 1) * sizeof *seen);
    if (!seen)
        return 0;
    int n_seen = 0, found = 0;
    for (int i = 0; i < fam->n_defaults && !found; i++) {
        const tpl_default *r = &fam->defaults[i];
        int c[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        if (!tpl_default_matches(r, dev, p) || !row_usable(fam, dev, r, p, deterministic, c, text))
            continue;
        int repeat = 0;
        for (int j = 0; j < n_seen && !repeat; j++)
            repeat = strcmp(seen[j], text) == 0;
        if (repeat)
            continue;
        if (n_seen == nth) {
            memcpy(cfg, c, sizeof c);
            snprintf(config, TPL_CONFIG_LEN, "%s", text);
            if (origin)
                *origin = r->origin;
            found = 1;
        }
        snprintf(seen[n_seen++], TPL_CONFIG_LEN, "%s", text);
    }
    free(seen);
    return found;
}

int tpl_builtin_config(const tpl_family *fam, const at_device_info *dev, const tpl_problem *p,
                       int deterministic, int *cfg, char *config, const char **origin)
{
    if (tpl_builtin_config_nth(fam, dev, p, deterministic, 0, cfg, config, origin))
        return 1;
    if (tpl_config_usable(fam, dev, fam->default_config, p, deterministic, cfg)) {
        snprintf(config, TPL_CONFIG_LEN, "%s", fam->default_config);
        if (origin)
            *origin = "default";
        return 1;
    }
    for (int i = 0; i < fam->n_baselines; i++) {
        if (tpl_config_usable(fam, dev, fam->baselines[i].config, p, deterministic, cfg)) {
            snprintf(config, TPL_CONFIG_LEN, "%s", fam->baselines[i].config);
            if (origin)
                *origin = fam->baselines[i].name;
            return 1;
        }
    }
    return 0;
}
