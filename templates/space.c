/* space.c: the valid configurations of a family on a device: rejection
 * reasons, the raw scan on several threads (or a family's depth-first walk,
 * valid_prefix), and a cache of the last spaces asked for. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tpl.h"

void tpl_reason(char *why, size_t len, const char *fmt, ...)
{
    if (!why || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

int tpl_reject(char *why, size_t len, const char *reason)
{
    if (why && len) {
        size_t n = strlen(reason);
        if (n >= len)
            n = len - 1;
        memcpy(why, reason, n);
        why[n] = '\0';
    }
    return 0;
}

/* Steps cfg (its value positions in pos) to the next raw index, the last
 * parameter fastest as tpl_config_from_index numbers them: no division per
 * configuration. */
static void space_next(const tpl_family *fam, int *pos, int *cfg)
{
    for (int p = fam->n_params - 1; p >= 0; p--) {
        if (++pos[p] < fam->params[p].n_values) {
            cfg[p] = fam->params[p].values[pos[p]];
            return;
        }
        pos[p] = 0;
        cfg[p] = fam->params[p].values[0];
    }
}

/* One slice [begin, end) of the raw space: the valid indices, in order. */
typedef struct valid_slice {
    const tpl_family *fam;
    const at_device_info *dev;
    long long begin, end, n, cap;
    long long *out;
    int oom;                    /* 1 after running out of memory */
} valid_slice;

/* Appends raw index i to v's list; -1 (and v->oom set) if out of memory. */
static int valid_push(valid_slice *v, long long i)
{
    if (v->n == v->cap) {
        long long cap = v->cap ? 2 * v->cap : 64;
        long long *q = realloc(v->out, (size_t)cap * sizeof *q);
        if (!q) {
            v->oom = 1;
            return -1;
        }
        v->out = q;
        v->cap = cap;
    }
    v->out[v->n++] = i;
    return 0;
}

static void *valid_scan(void *arg)
{
    valid_slice *v = arg;
    const tpl_family *fam = v->fam;
    int pos[TPL_MAX_PARAMS] = {0}, cfg[TPL_MAX_PARAMS];
    long long x = v->begin;
    for (int p = fam->n_params - 1; p >= 0; p--) {
        pos[p] = (int)(x % fam->params[p].n_values);
        x /= fam->params[p].n_values;
        cfg[p] = fam->params[p].values[pos[p]];
    }
    for (long long i = v->begin; i < v->end; i++, space_next(fam, pos, cfg)) {
        if (fam->valid && !fam->valid(cfg, v->dev, NULL, 0))
            continue;
        if (valid_push(v, i) < 0)
            return NULL;
    }
    return NULL;
}

/* The whole space of a family with valid_prefix, depth first in index order
 * (parameter 0 outermost, as tpl_config_from_index numbers them): a value
 * whose prefix valid_prefix rejects is skipped with its whole subtree, a
 * complete configuration is judged by valid(). The valid indices in order,
 * as a scan finds them, into v (v->oom set if out of memory). */
static void valid_walk(valid_slice *v)
{
    const tpl_family *fam = v->fam;
    int np = fam->n_params, d = 0;
    int pos[TPL_MAX_PARAMS], cfg[TPL_MAX_PARAMS];
    long long base[TPL_MAX_PARAMS];     /* index of the prefix cfg[0..d) */
    for (int p = 0; p < np; p++)        /* defined values past the prefix */
        cfg[p] = fam->params[p].values[0];
    base[0] = 0;
    pos[0] = -1;
    while (d >= 0) {
        const tpl_param *par = &fam->params[d];
        if (++pos[d] >= par->n_values) {
            d--;
            continue;
        }
        cfg[d] = par->values[pos[d]];
        long long index = base[d] * par->n_values + pos[d];
        if (d + 1 < np) {
            if (fam->valid_prefix(cfg, d + 1, v->dev)) {
                base[++d] = index;
                pos[d] = -1;
            }
        } else if ((!fam->valid || fam->valid(cfg, v->dev, NULL, 0)) && valid_push(v, index) < 0) {
            return;
        }
    }
}

/* Large raw spaces without valid_prefix are scanned in slices on several
 * threads: valid() is a pure function. The indices come out in order, as from
 * one pass. (matmul's 1.2e9 raw configurations, most rejected at once by a
 * few parameters, are walked with valid_prefix instead.) */
#define VALID_MAX_THREADS 16
#define VALID_SLICE_MIN (1LL << 22)

long long tpl_valid_configs(const tpl_family *fam, const at_device_info *dev,
                            long long **indices)
{
    long long raw = tpl_space_size(fam);
    *indices = NULL;
    if (fam->valid_prefix && fam->n_params > 0 && raw > 0) {
        valid_slice walk = {fam, dev, 0, raw, 0, 0, NULL, 0};
        valid_walk(&walk);
        if (walk.oom) {
            free(walk.out);
            return -1;
        }
        *indices = walk.out ? walk.out : malloc(sizeof **indices);
        return *indices ? walk.n : -1;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n_threads = cores < 1 ? 1 : cores > VALID_MAX_THREADS ? VALID_MAX_THREADS : (int)cores;
    if (raw / VALID_SLICE_MIN < n_threads)
        n_threads = raw / VALID_SLICE_MIN > 1 ? (int)(raw / VALID_SLICE_MIN) : 1;
    valid_slice slices[VALID_MAX_THREADS];
    pthread_t threads[VALID_MAX_THREADS];
    int started[VALID_MAX_THREADS] = {0};
    for (int t = 0; t < n_threads; t++) {
        slices[t] = (valid_slice){fam, dev, raw * t / n_threads, raw * (t + 1) / n_threads, 0, 0,
                                  NULL, 0};
        started[t] = t > 0 && pthread_create(&threads[t], NULL, valid_scan, &slices[t]) == 0;
    }
    for (int t = 0; t < n_threads; t++)     /* this thread takes slice 0 and any not started */
        if (!started[t])
            valid_scan(&slices[t]);
    long long n = 0, failed = 0;
    for (int t = 0; t < n_threads; t++) {
        if (started[t])
            pthread_join(threads[t], NULL);
        failed |= slices[t].oom;
        n += slices[t].n;
    }
    long long *out = failed ? NULL : malloc((size_t)(n ? n : 1) * sizeof *out), at = 0;
    for (int t = 0; t < n_threads; t++) {
        if (out && slices[t].n)
            memcpy(out + at, slices[t].out, (size_t)slices[t].n * sizeof *out);
        at += slices[t].n;
        free(slices[t].out);
    }
    if (!out)
        return -1;
    *indices = out;
    return n;
}

/* The valid configurations of the last few (family, device) pairs asked
 * for: one space is often scanned several times (the tuner's announcement,
 * plan and prefetch; seeds, architectures, tests), and matmul's raw space
 * holds 1.2e9 configurations. Room for every family on two devices. */
#define SAMPLE_CACHE_SIZE 32
static struct {
    const tpl_family *fam;
    int has_dev;
    at_device_info dev;
    long long n;
    long long *valid;
} sample_cache[SAMPLE_CACHE_SIZE];
static int sample_cache_next;
static pthread_mutex_t sample_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* A malloc'd copy of the valid configurations of fam on dev (caller frees),
 * from the cache or a scan; the count, or -1 if out of memory. */
long long tpl_valid_configs_cached(const tpl_family *fam, const at_device_info *dev,
                                   long long **out)
{
    long long n = -1;
    *out = NULL;
    at_device_info model;            /* GPUs of one model share an entry: */
    if (dev) {                       /* valid() reads no identity */
        model = *dev;
        model.ordinal = 0;
        memset(model.uuid, 0, sizeof model.uuid);
        dev = &model;
    }
    pthread_mutex_lock(&sample_cache_lock);
    for (int i = 0; i < SAMPLE_CACHE_SIZE && n < 0; i++) {
        if (sample_cache[i].fam != fam || sample_cache[i].has_dev != (dev != NULL) ||
            (dev && memcmp(&sample_cache[i].dev, dev, sizeof *dev) != 0))
            continue;
        n = sample_cache[i].n;
        *out = malloc((size_t)(n ? n : 1) * sizeof **out);
        if (*out)
            memcpy(*out, sample_cache[i].valid, (size_t)n * sizeof **out);
        else
            n = -1;
    }
    pthread_mutex_unlock(&sample_cache_lock);
    if (n >= 0)
        return n;
    n = tpl_valid_configs(fam, dev, out);
    long long *copy = n >= 0 ? malloc((size_t)(n ? n : 1) * sizeof *copy) : NULL;
    if (!copy)
        return n;
    memcpy(copy, *out, (size_t)n * sizeof *copy);
    pthread_mutex_lock(&sample_cache_lock);
    int slot = sample_cache_next++ % SAMPLE_CACHE_SIZE;
    free(sample_cache[slot].valid);
    sample_cache[slot].fam = fam;
    sample_cache[slot].has_dev = dev != NULL;
    if (dev)
        sample_cache[slot].dev = *dev;
    sample_cache[slot].n = n;
    sample_cache[slot].valid = copy;
    pthread_mutex_unlock(&sample_cache_lock);
    return n;
}
