/* samples.c: the stratified compile sample of a family (tpl_sample_configs):
 * the default, every value of every parameter that some valid configuration
 * takes, and seeded random valid configurations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

/* A sample being built: its configurations and the values they cover. */
typedef struct sample_set {
    tpl_sample *items;
    int n, cap;
    unsigned char covered[TPL_MAX_PARAMS][TPL_MAX_VALUES];
} sample_set;

/* Adds cfg unless already there and marks its values covered; -1 if out of
 * memory. */
static int sample_add(sample_set *s, const tpl_family *fam, const int *cfg, const char *origin)
{
    size_t bytes = (size_t)fam->n_params * sizeof *cfg;
    for (int i = 0; i < s->n; i++)
        if (memcmp(s->items[i].cfg, cfg, bytes) == 0)
            return 0;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        tpl_sample *q = realloc(s->items, (size_t)cap * sizeof *q);
        if (!q)
            return -1;
        s->items = q;
        s->cap = cap;
    }
    tpl_sample *it = &s->items[s->n++];
    memset(it, 0, sizeof *it);
    memcpy(it->cfg, cfg, bytes);
    it->origin = origin;
    for (int p = 0; p < fam->n_params; p++)
        for (int v = 0; v < fam->params[p].n_values; v++)
            if (fam->params[p].values[v] == cfg[p])
                s->covered[p][v] = 1;
    return 0;
}

static unsigned long long splitmix64(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Adds valid configurations until every value that some valid configuration
 * takes is covered: each time the one (in an order shuffled from seed) that
 * covers the most values not yet covered. -1 if out of memory. */
static int sample_cover(sample_set *s, const tpl_family *fam, const at_device_info *dev,
                        unsigned long long seed)
{
    long long *valid = NULL;
    long long n = tpl_valid_configs_cached(fam, dev, &valid);
    int np = fam->n_params;
    unsigned char *vpos = n > 0 ? malloc((size_t)n * (size_t)(np ? np : 1)) : NULL;
    if (n < 0 || (n > 0 && !vpos)) {
        free(valid);
        return -1;
    }
    unsigned long long state = seed;
    for (long long i = n - 1; i > 0; i--) {
        long long j = (long long)(splitmix64(&state) % (unsigned long long)(i + 1));
        long long t = valid[i];
        valid[i] = valid[j];
        valid[j] = t;
    }
    for (long long k = 0; k < n; k++) {
        long long x = valid[k];
        for (int p = np - 1; p >= 0; p--) {
            vpos[k * np + p] = (unsigned char)(x % fam->params[p].n_values);
            x /= fam->params[p].n_values;
        }
    }
    int rc = 0;
    for (;;) {
        long long best = -1;
        int best_gain = 0;
        for (long long k = 0; k < n; k++) {
            int gain = 0;
            for (int p = 0; p < np; p++)
                gain += !s->covered[p][vpos[k * np + p]];
            if (gain > best_gain) {
                best_gain = gain;
                best = k;
            }
        }
        if (best < 0)
            break;
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, valid[best], cfg);
        if (sample_add(s, fam, cfg, "cover") != 0) {
            rc = -1;
            break;
        }
    }
    free(vpos);
    free(valid);
    return rc;
}

int tpl_sample_configs(const tpl_family *fam, const at_device_info *dev,
                       unsigned long long seed, const char *const *extra, int n_extra,
                       tpl_sample **out, char *err, size_t errlen)
{
    sample_set s;
    memset(&s, 0, sizeof s);
    *out = NULL;
    int cfg[TPL_MAX_PARAMS];
    for (int b = -1; b < fam->n_baselines + n_extra; b++) {
        const char *text = b < 0 ? fam->default_config
                         : b < fam->n_baselines ? fam->baselines[b].config
                         : extra[b - fam->n_baselines];
        if (!text && b < 0)
            continue;                       /* a family without a default */
        if (tpl_config_parse(fam, text, cfg, err, errlen) != AT_OK) {
            free(s.items);
            return -1;
        }
        /* the default runs everywhere; a baseline (some are arch-specific,
         * e.g. tcgemm's sm_90a winners) and an extra (a stored winner of one
         * device) only where they are valid */
        if (b >= 0 && fam->valid && !fam->valid(cfg, dev, NULL, 0))
            continue;
        const char *origin = b < 0 ? "default"
                           : b < fam->n_baselines ? fam->baselines[b].name : "extra";
        if (sample_add(&s, fam, cfg, origin) != 0)
            goto oom;
    }
    if (sample_cover(&s, fam, dev, seed) != 0)
        goto oom;
    *out = s.items;
    return s.n;
oom:
    snprintf(err, errlen, "%s: out of memory while sampling configurations", fam->name);
    free(s.items);
    return -1;
}
