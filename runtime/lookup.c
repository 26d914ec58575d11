/* lookup.c: the lookup chain (exact, on this device or its model -> stored
 * winners of other shapes of every database layer on the architecture, in
 * one ranking by the selection model -> built-in default); pure logic over
 * the database, so the CPU tests exercise it on fixture databases. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lookup.h"
#include "model.h"

at_status lk_open_db(const char *path, db **out, char *msg, size_t len)
{
    *out = NULL;
    return db_open(out, path, DB_OPEN_CREATE, msg, len);
}

/* |log(x / y)| with sizes below 1 taken as 1. */
static double log_ratio(long long x, long long y)
{
    return fabs(log((double)(x > 0 ? x : 1) / (double)(y > 0 ? y : 1)));
}

double lk_shape_distance(const tpl_problem *a, const tpl_problem *b)
{
    if (a->n_dims != b->n_dims || !tpl_problem_same_kind(a, b))
        return INFINITY;
    /* a batch and a single product never serve each other: a single product's winner runs a
     * batch product by product (H200: 0.01-0.02x cuBLAS on batches of 1000), and the built-in
     * defaults have rows for each */
    if ((tpl_problem_batch(a) > 1) != (tpl_problem_batch(b) > 1))
        return INFINITY;
    double d = log_ratio(tpl_problem_batch(a), tpl_problem_batch(b));
    for (int i = 0; i < a->n_dims && i < TPL_MAX_DIMS; i++)
        d += log_ratio(a->dims[i], b->dims[i]);
    return d;
}


/* 1 if the recorded device is of dev's model: the same name, compute
 * capability and memory (GPUs that split a search, autotune --device all). */
static int same_model(const at_device_info *dev, const at_device_info *other)
{
    return strcmp(dev->name, other->name) == 0 && dev->cc_major == other->cc_major &&
           dev->cc_minor == other->cc_minor && dev->memory_bytes == other->memory_bytes;
}

/* Orders ranked candidates: the results of this device and its model before
 * the architecture's (another model's times are not this one's: a faster GPU's
 * winners would always look faster), then by predicted time (NAN, where the
 * family's model cannot predict, after every prediction), then by shape
 * distance. */
static int rank_before(const lk_candidate *a, const lk_candidate *b)
{
    if (a->own != b->own)
        return a->own;
    int pa = !isnan(a->predicted_ms), pb = !isnan(b->predicted_ms);
    if (pa != pb)
        return pa;
    if (pa && a->predicted_ms != b->predicted_ms)
        return a->predicted_ms < b->predicted_ms;
    return a->distance < b->distance;
}

/* lk_rank over cands[0..n) whose own[i] says measured on dev or its model and
 * layer[i] the database it came from (both may be NULL: own by uuid, layer 0). */
static int rank_pool(const at_device_info *dev, const tpl_family *fam, const tpl_problem *p,
                     int deterministic, const db_result *cands, const int *own,
                     const int *layer, int n, lk_candidate **out)
{
    *out = NULL;
    lk_candidate *list = n > 0 ? malloc((size_t)n * sizeof *list) : NULL;
    if (n > 0 && !list)
        return -1;
    int count = 0;
    for (int i = 0; i < n; i++) {
        lk_candidate c;
        c.distance = lk_shape_distance(p, &cands[i].problem);
        if (!isfinite(c.distance) ||
            !tpl_config_usable(fam, dev, cands[i].config, p, deterministic, c.cfg))
            continue;
        snprintf(c.config, sizeof c.config, "%s", cands[i].config);
        c.predicted_ms = md_predict_ms(fam, c.cfg, dev, &cands[i].problem,
                                       db_rank_ms(&cands[i]), p);
        c.own = own ? own[i] : strcmp(cands[i].device_uuid, dev->uuid) == 0;
        c.layer = layer ? layer[i] : 0;
        /* a configuration stored for several shapes is predicted from the
         * nearest of them (the shortest extrapolation) */
        int dup = -1;
        for (int j = 0; j < count && dup < 0; j++)
            if (strcmp(list[j].config, c.config) == 0)
                dup = j;
        /* a configuration measured on this device (or its model) at any shape
         * counts as its own */
        if (dup >= 0 && c.distance >= list[dup].distance) {
            list[dup].own |= c.own;
            continue;
        }
        /* the nearer measurement takes the place of its row in the database's
         * order, so ties below still fall to that problem's fastest first */
        if (dup >= 0) {
            c.own |= list[dup].own;
            memmove(&list[dup], &list[dup + 1], (size_t)(count - dup - 1) * sizeof *list);
            count--;
        }
        list[count++] = c;
    }
    /* insertion sort: stable, so equal keys keep the database's order
     * (by problem, then fastest first) */
    for (int i = 1; i < count; i++) {
        lk_candidate c = list[i];
        int j = i;
        while (j > 0 && rank_before(&c, &list[j - 1])) {
            list[j] = list[j - 1];
            j--;
        }
        list[j] = c;
    }
    *out = list;
    return count;
}

int lk_rank(const at_device_info *dev, const tpl_family *fam, const tpl_problem *p,
            int deterministic, const db_result *cands, int n, lk_candidate **out)
{
    return rank_pool(dev, fam, p, deterministic, cands, NULL, NULL, n, out);
}

/* The stored winners of p's kind in every database of dbs[0..n_dbs) (NULLs
 * skipped), the LK_PER_PROBLEM fastest of each tuned problem on any device of
 * dev's architecture, as one list ranked by rank_pool: a user's own winners
 * and a shipped database's compete on their predicted times, so a few tuned
 * shapes never hide the shipped grid's better fits. -1 if out of memory. */
static int rank_layers(db *const *dbs, int n_dbs, const at_device_info *dev,
                       const tpl_family *fam, const tpl_problem *p, int deterministic,
                       lk_candidate **out)
{
    const char *hash = tpl_source_hash(fam);
    db_result *all = NULL;
    int *own = NULL, *layer = NULL, n = 0, failed = 0;
    for (int l = 0; l < n_dbs && !failed; l++) {
        db_result *cands = NULL;
        int k = 0;
        if (!dbs[l] || db_candidates(dbs[l], NULL, dev->arch, fam->name, hash, p,
                                     LK_PER_PROBLEM, deterministic, &cands, &k) != AT_OK ||
            k == 0) {
            free(cands);
            continue;
        }
        db_device *devs = NULL;
        int n_devs = 0;
        if (db_list_devices(dbs[l], &devs, &n_devs) != AT_OK)
            n_devs = 0;
        db_result *grown = realloc(all, (size_t)(n + k) * sizeof *all);
        int *grown_own = grown ? realloc(own, (size_t)(n + k) * sizeof *own) : NULL;
        int *grown_layer = grown_own ? realloc(layer, (size_t)(n + k) * sizeof *layer) : NULL;
        if (grown)
            all = grown;
        if (grown_own)
            own = grown_own;
        if (grown_layer)
            layer = grown_layer;
        failed = !grown_layer;
        for (int i = 0; i < k && !failed; i++) {
            int mine = strcmp(cands[i].device_uuid, dev->uuid) == 0;
            for (int j = 0; j < n_devs && !mine; j++)
                mine = strcmp(devs[j].info.uuid, cands[i].device_uuid) == 0 &&
                       same_model(dev, &devs[j].info);
            all[n] = cands[i];
            own[n] = mine;
            layer[n++] = l;
        }
        free(devs);
        free(cands);
    }
    int count = failed ? -1 : rank_pool(dev, fam, p, deterministic, all, own, layer, n, out);
    free(all);
    free(own);
    free(layer);
    return count;
}

/* The geometry key of a configuration (tile, split-K, stream-K, products
 * per block); 0 where the family cannot describe it. */
static int geometry_key(const tpl_family *fam, const int *cfg, long long *key)
{
    tpl_tile t;
    if (!fam->tile_of || !fam->tile_of(cfg, &t))
        return 0;
    *key = (((long long)t.bm * 1024 + t.bn) * 64 + t.splitk) * 256 + t.products * 2 + t.stream_k;
    return 1;
}

void lk_diversify(const tpl_family *fam, lk_candidate *list, int n)
{
    for (int i = 1; i < n; i++) {
        long long key;
        if (!geometry_key(fam, list[i].cfg, &key))
            continue;
        int seen = 0, first_repeat = -1;
        for (int j = 0; j < i; j++) {
            long long other;
            int known = geometry_key(fam, list[j].cfg, &other);
            if (known && other == key)
                seen = 1;
            /* the first earlier entry whose geometry an even earlier one has */
            if (first_repeat < 0 && known) {
                for (int q = 0; q < j; q++) {
                    long long prev;
                    if (geometry_key(fam, list[q].cfg, &prev) && prev == other) {
                        first_repeat = j;
                        break;
                    }
                }
            }
        }
        if (seen || first_repeat < 0)
            continue;
        lk_candidate c = list[i];
        memmove(&list[first_repeat + 1], &list[first_repeat],
                (size_t)(i - first_repeat) * sizeof *list);
        list[first_repeat] = c;
    }
}

int lk_nearby_layers(db *const *dbs, int n_dbs, const at_device_info *dev,
                     const tpl_family *fam, const tpl_problem *p, int deterministic, int max,
                     lk_candidate *out)
{
    if (!dbs || !dev || !fam || !p || !out || max <= 0)
        return 0;
    lk_candidate *ranked = NULL;
    int ranked_n = rank_layers(dbs, n_dbs, dev, fam, p, deterministic, &ranked), n = 0;
    lk_diversify(fam, ranked, ranked_n);
    /* a trial never compiles: only those whose cubin is stored in a layer */
    char key[128];
    for (int i = 0; i < ranked_n && n < max; i++) {
        tpl_binary_key(fam, ranked[i].cfg, dev->arch, key, sizeof key);
        int stored = 0;
        for (int l = 0; l < n_dbs && !stored; l++)
            stored = dbs[l] && db_has_binary(dbs[l], key) == 1;
        if (stored)
            out[n++] = ranked[i];
    }
    free(ranked);
    return n;
}

int lk_nearby(db *d, const at_device_info *dev, const tpl_family *fam, const tpl_problem *p,
              int deterministic, int max, lk_candidate *out)
{
    return d ? lk_nearby_layers(&d, 1, dev, fam, p, deterministic, max, out) : 0;
}

/* The fastest usable ok result (by db_rank_ms) of (fam, p) measured on dev
 * or on another GPU of its model, whose results are one set (each
 * configuration of a split search is measured on one of them): 1 with it in best and its
 * configuration in cfg, 0 if none (an unreadable device list: dev's own). */
static int best_of_model(db *d, const at_device_info *dev, const tpl_family *fam,
                         const char *hash, const tpl_problem *p, int deterministic,
                         db_result *best, int *cfg)
{
    int found = db_best(d, dev->uuid, fam->name, hash, p, deterministic, best) == AT_OK &&
                tpl_config_usable(fam, dev, best->config, p, deterministic, cfg);
    db_device *devs = NULL;
    int n = 0, tmp[TPL_MAX_PARAMS];
    if (db_list_devices(d, &devs, &n) != AT_OK)
        return found;
    for (int k = 0; k < n; k++) {
        db_result r;
        if (strcmp(devs[k].info.uuid, dev->uuid) == 0 || !same_model(dev, &devs[k].info) ||
            db_best(d, devs[k].info.uuid, fam->name, hash, p, deterministic, &r) != AT_OK ||
            (found && db_rank_ms(&r) >= db_rank_ms(best)) ||
            !tpl_config_usable(fam, dev, r.config, p, deterministic, tmp))
            continue;
        *best = r;
        memcpy(cfg, tmp, sizeof tmp);
        found = 1;
    }
    free(devs);
    return found;
}

at_lookup_level lk_choose(db *d, const at_device_info *dev, const tpl_family *fam,
                          const tpl_problem *p, int deterministic, int *cfg, char *config)
{
    int which;
    return lk_choose_layers(&d, d ? 1 : 0, dev, fam, p, deterministic, cfg, config, &which);
}

at_lookup_level lk_choose_layers(db *const *dbs, int n, const at_device_info *dev,
                                 const tpl_family *fam, const tpl_problem *p,
                                 int deterministic, int *cfg, char *config, int *which)
{
    const char *hash = tpl_source_hash(fam);
    *which = -1;
    /* exact: the earliest database that tuned the shape on dev or its model */
    for (int i = 0; i < n; i++) {
        db_result best;
        if (dbs[i] && best_of_model(dbs[i], dev, fam, hash, p, deterministic, &best, cfg)) {
            snprintf(config, TPL_CONFIG_LEN, "%s", best.config);
            *which = i;
            return AT_LOOKUP_EXACT;
        }
    }
    /* stored winners of other shapes, every database's in one ranking */
    lk_candidate *ranked = NULL;
    int ranked_n = rank_layers(dbs, n, dev, fam, p, deterministic, &ranked);
    if (ranked_n > 0) {
        memcpy(cfg, ranked[0].cfg, sizeof ranked[0].cfg);
        snprintf(config, TPL_CONFIG_LEN, "%s", ranked[0].config);
        *which = ranked[0].layer;
        at_lookup_level level = ranked[0].own ? AT_LOOKUP_NEAREST : AT_LOOKUP_ARCH;
        free(ranked);
        return level;
    }
    free(ranked);
    /* the built-in choice for dev's architecture, p's kind and shape class */
    if (tpl_builtin_config(fam, dev, p, deterministic, cfg, config, NULL))
        return AT_LOOKUP_DEFAULT;
    return AT_LOOKUP_NONE;
}

void lk_open_shipped(const char *list, db **layers, int *n, int max, char *msg, size_t len)
{
    char buf[8192], err[1024];
    size_t used = 0;
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    if (len)
        msg[0] = '\0';
    for (char *save = NULL, *path = strtok_r(buf, ":", &save); path;
         path = strtok_r(NULL, ":", &save)) {
        db *d = NULL;
        at_status s = *n < max ? db_open(&d, path, DB_OPEN_SHIPPED, err, sizeof err)
                               : AT_ERR_INVALID_ARG;
        if (s == AT_OK) {
            layers[(*n)++] = d;
            continue;
        }
        if (*n >= max)
            snprintf(err, sizeof err, "more than %d read-only databases", max);
        if (used + 1 < len) {
            snprintf(msg + used, len - used, "%sread-only tuning database %.1000s not used (%s)",
                     used ? "; " : "", path, err);
            used = strlen(msg);
        }
    }
}

const tpl_family *lk_choose_family(db *d, const at_device_info *dev, const tpl_problem *p,
                                   int deterministic, const tpl_family *const *fams, int n,
                                   int *measured)
{
    const tpl_family *best = NULL, *small = NULL, *other = NULL;
    double best_ms = INFINITY;
    *measured = 0;
    for (int i = 0; i < n; i++) {
        const tpl_family *f = fams[i];
        if (!tpl_family_accepts(f, p))
            continue;
        if (strcmp(f->name, "bgemm") == 0)
            small = f;
        else if (!other)
            other = f;
        db_result r;
        int cfg[TPL_MAX_PARAMS];
        if (d && db_best(d, dev->uuid, f->name, tpl_source_hash(f), p, deterministic, &r) ==
                AT_OK && r.time_ms > 0 && db_rank_ms(&r) < best_ms &&
            tpl_config_usable(f, dev, r.config, p, deterministic, cfg)) {
            best = f;
            best_ms = db_rank_ms(&r);
        }
    }
    if (best) {
        *measured = 1;
        return best;
    }
    int is_small = p->n_dims == 3 && p->dims[0] <= LK_SMALL_GEMM &&
                   p->dims[1] <= LK_SMALL_GEMM && p->dims[2] <= LK_SMALL_GEMM;
    if (small && (is_small || !other))
        return small;
    for (int i = 0; i < n; i++)
        if (fams[i] != small && fams[i]->claims && tpl_family_accepts(fams[i], p) &&
            fams[i]->claims(p, dev))
            return fams[i];
    return other;
}

/* 1 if d holds a usable ok result of fam, of p's kind, measured on dev or its architecture
 * within LK_NEAR_SHAPE of p. */
static int near_result(db *d, const at_device_info *dev, const tpl_family *fam,
                       const tpl_problem *p, int deterministic)
{
    db_result *cands = NULL;
    int count = 0, near = 0;
    if (db_candidates(d, NULL, dev->arch, fam->name, tpl_source_hash(fam), p, LK_PER_PROBLEM,
                      deterministic, &cands, &count) != AT_OK)
        return 0;
    for (int i = 0; i < count && !near; i++) {
        int cfg[TPL_MAX_PARAMS];
        near = lk_shape_distance(&cands[i].problem, p) <= LK_NEAR_SHAPE &&
               tpl_config_usable(fam, dev, cands[i].config, p, deterministic, cfg);
    }
    free(cands);
    return near;
}

const tpl_family *lk_choose_family_layers(db *const *layers, int n_layers,
                                          const at_device_info *dev, const tpl_problem *p,
                                          int deterministic, const tpl_family *const *fams, int n,
                                          int *measured)
{
    const tpl_family *f = NULL;
    for (int i = 0; i < n_layers; i++) {
        if (!layers[i])
            continue;
        f = lk_choose_family(layers[i], dev, p, deterministic, fams, n, measured);
        if (*measured)
            return f;
    }
    f = lk_choose_family(NULL, dev, p, deterministic, fams, n, measured);
    if (!f || !f->claims)
        return f;
    /* a claimed shape goes back to a large-tile family that was tuned at a near shape */
    for (int j = 0; j < n; j++) {
        const tpl_family *g = fams[j];
        if (g == f || g->claims || strcmp(g->name, "bgemm") == 0 || !tpl_family_accepts(g, p))
            continue;
        for (int i = 0; i < n_layers; i++)
            if (layers[i] && near_result(layers[i], dev, g, p, deterministic))
                return g;
    }
    return f;
}

const char *lk_gemm_main_family(const tpl_problem *p)
{
    if (p->dtype == AT_R_64F)
        return "dgemm";
    return p->dtype == AT_R_32F && p->math == AT_MATH_DEFAULT ? "matmul" : "tcgemm";
}

int lk_gemm_families(const tpl_problem *p, const char *main_kernel, const tpl_family **out,
                     int max)
{
    const tpl_family *main_fam = tpl_find(main_kernel ? main_kernel : lk_gemm_main_family(p));
    int n = 0;
    if (main_fam && n < max)
        out[n++] = main_fam;
    for (int i = 0; i < tpl_family_count() && n < max; i++) {
        const tpl_family *f = tpl_family_at(i);
        if (f != main_fam && !f->hidden &&
            (f->claims || (tpl_problem_batch(p) > 1 && strcmp(f->name, "bgemm") == 0)))
            out[n++] = f;
    }
    return n;
}
