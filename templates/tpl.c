/* tpl.c: what all families share: configuration spaces and their text form,
 * NVRTC compilation of a configuration to a cubin, cubin keys, and the
 * reference/input helpers that verification uses. */
#include <ctype.h>
#include <math.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tpl.h"

/* ---------------- configuration spaces ---------------- */

long long tpl_space_size(const tpl_family *fam)
{
    long long size = 1;
    for (int i = 0; i < fam->n_params; i++)
        size *= fam->params[i].n_values;
    return size;
}

void tpl_config_from_index(const tpl_family *fam, long long index, int *cfg)
{
    for (int i = fam->n_params - 1; i >= 0; i--) {
        int n = fam->params[i].n_values;
        cfg[i] = fam->params[i].values[index % n];
        index /= n;
    }
}

long long tpl_config_to_index(const tpl_family *fam, const int *cfg)
{
    long long index = 0;
    for (int i = 0; i < fam->n_params; i++) {
        int pos = -1;
        for (int v = 0; v < fam->params[i].n_values; v++)
            if (fam->params[i].values[v] == cfg[i])
                pos = v;
        if (pos < 0)
            return -1;
        index = index * fam->params[i].n_values + pos;
    }
    return index;
}

tpl_args tpl_gemm_args(int m, int n, int k, float alpha, CUdeviceptr A, int lda, CUdeviceptr B,
                       int ldb, float beta, CUdeviceptr C, int ldc)
{
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 3;
    args.problem.dims[0] = m;
    args.problem.dims[1] = n;
    args.problem.dims[2] = k;
    args.operand[TPL_GEMM_A] = (tpl_operand){A, lda, 0};
    args.operand[TPL_GEMM_B] = (tpl_operand){B, ldb, 0};
    args.operand[TPL_GEMM_C] = (tpl_operand){C, ldc, 0};
    args.scalar[TPL_GEMM_ALPHA] = alpha;
    args.scalar[TPL_GEMM_BETA] = beta;
    return args;
}

long long tpl_gemm_min_ld(at_order order, at_op op, long long rows, long long cols)
{
    /* stored as rows x cols (op N) or cols x rows (op T); row-major ld spans the
     * stored columns, column-major ld the stored rows */
    long long stored_rows = op == AT_OP_T ? cols : rows;
    long long stored_cols = op == AT_OP_T ? rows : cols;
    long long need = order == AT_COL_MAJOR ? stored_rows : stored_cols;
    return need > 1 ? need : 1;
}

at_status tpl_gemm_check(const tpl_args *args, char *err, size_t errlen)
{
    const tpl_problem *p = &args->problem;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    if ((unsigned)p->order > AT_COL_MAJOR || (unsigned)p->op_a > AT_OP_T ||
        (unsigned)p->op_b > AT_OP_T) {
        snprintf(err, errlen, "unknown order %d or op %d/%d", (int)p->order, (int)p->op_a,
                 (int)p->op_b);
        return AT_ERR_INVALID_ARG;
    }
    if (p->n_dims != 3 || m < 0 || n < 0 || k < 0) {
        snprintf(err, errlen, "negative size m=%lld n=%lld k=%lld", m, n, k);
        return AT_ERR_INVALID_ARG;
    }
    const char *ord = p->order == AT_COL_MAJOR ? "column-major" : "row-major";
    long long need[3] = {tpl_gemm_min_ld(p->order, p->op_a, m, k),
                         tpl_gemm_min_ld(p->order, p->op_b, k, n),
                         tpl_gemm_min_ld(p->order, AT_OP_N, m, n)};
    static const char *const names[3] = {"lda", "ldb", "ldc"};
    static const int which[3] = {TPL_GEMM_A, TPL_GEMM_B, TPL_GEMM_C};
    for (int i = 0; i < 3; i++) {
        long long ld = args->operand[which[i]].ld;
        if (ld < need[i]) {
            at_op op = i == 0 ? p->op_a : i == 1 ? p->op_b : AT_OP_N;
            snprintf(err, errlen, "%s=%lld too small: %s %s%s needs %s >= %lld (the %s of %c as "
                     "stored)", names[i], ld, ord, i == 2 ? "C" : i == 0 ? "op_a " : "op_b ",
                     i == 2 ? "" : tpl_op_name(op), names[i], need[i],
                     p->order == AT_COL_MAJOR ? "rows" : "columns", "ABC"[i]);
            return AT_ERR_INVALID_ARG;
        }
    }
    return AT_OK;
}

void tpl_gemm_canonical(tpl_args *args)
{
    tpl_problem *p = &args->problem;
    if (p->order != AT_COL_MAJOR)
        return;
    long long m = p->dims[0];
    p->dims[0] = p->dims[1];
    p->dims[1] = m;
    tpl_operand a = args->operand[TPL_GEMM_A];
    args->operand[TPL_GEMM_A] = args->operand[TPL_GEMM_B];
    args->operand[TPL_GEMM_B] = a;
    at_op op = p->op_a;
    p->op_a = p->op_b;
    p->op_b = op;
    p->order = AT_ROW_MAJOR;
}

tpl_args tpl_reduce_args(long long n, CUdeviceptr x, CUdeviceptr y, CUdeviceptr result)
{
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 1;
    args.problem.dims[0] = n;
    args.operand[TPL_RED_X].ptr = x;
    args.operand[TPL_RED_Y].ptr = y;
    args.operand[TPL_RED_RESULT].ptr = result;
    return args;
}

tpl_args tpl_jacobi_args(int n, CUdeviceptr A, CUdeviceptr b, CUdeviceptr x, float tol,
                         int max_iter)
{
    tpl_args args;
    memset(&args, 0, sizeof args);
    args.problem.n_dims = 1;
    args.problem.dims[0] = n;
    args.operand[TPL_JAC_A] = (tpl_operand){A, n, 0};
    args.operand[TPL_JAC_B].ptr = b;
    args.operand[TPL_JAC_X].ptr = x;
    args.scalar[TPL_JAC_TOL] = tol;
    args.ints[TPL_JAC_MAX_ITER] = max_iter;
    return args;
}

void tpl_config_format(const tpl_family *fam, const int *cfg, char *out, size_t len)
{
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (int i = 0; i < fam->n_params && used < len; i++) {
        if (fam->params[i].omit_first && cfg[i] == fam->params[i].values[0])
            continue;
        int w = snprintf(out + used, len - used, "%s%s=%d", used ? "," : "",
                         fam->params[i].name, cfg[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int tpl_param_index(const tpl_family *fam, const char *name)
{
    for (int i = 0; i < fam->n_params; i++)
        if (strcmp(fam->params[i].name, name) == 0)
            return i;
    return -1;
}

at_status tpl_config_parse(const tpl_family *fam, const char *text, int *cfg,
                           char *err, size_t errlen)
{
    int seen[TPL_MAX_PARAMS] = {0};
    if (!text) {
        snprintf(err, errlen, "no configuration given");
        return AT_ERR_INVALID_ARG;
    }
    const char *p = text;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *eq = strchr(p, '=');
        if (!eq) {
            snprintf(err, errlen, "%s: expected NAME=value at \"%s\"", fam->name, p);
            return AT_ERR_INVALID_ARG;
        }
        char name[64];
        size_t nlen = (size_t)(eq - p);
        if (nlen == 0 || nlen >= sizeof name) {
            snprintf(err, errlen, "%s: bad parameter name at \"%s\"", fam->name, p);
            return AT_ERR_INVALID_ARG;
        }
        memcpy(name, p, nlen);
        name[nlen] = '\0';
        int idx = tpl_param_index(fam, name);
        if (idx < 0) {
            snprintf(err, errlen, "%s has no parameter %s", fam->name, name);
            return AT_ERR_INVALID_ARG;
        }
        char *end;
        long value = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || (*end && *end != ',' && !isspace((unsigned char)*end))) {
            snprintf(err, errlen, "%s: %s needs an integer value", fam->name, name);
            return AT_ERR_INVALID_ARG;
        }
        if (seen[idx]) {
            snprintf(err, errlen, "%s: %s given twice", fam->name, name);
            return AT_ERR_INVALID_ARG;
        }
        seen[idx] = 1;
        cfg[idx] = (int)value;
        p = end;
    }
    for (int i = 0; i < fam->n_params; i++) {
        if (!seen[i] && fam->params[i].omit_first) {
            cfg[i] = fam->params[i].values[0];
        } else if (!seen[i]) {
            snprintf(err, errlen, "%s: parameter %s missing", fam->name, fam->params[i].name);
            return AT_ERR_INVALID_ARG;
        }
    }
    return AT_OK;
}

/* ---------------- valid spaces and compile samples ---------------- */

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

/* ---------------- hashing and keys ---------------- */

static unsigned long long fnv1a(unsigned long long h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001B3ull;
    }
    return h;
}

#define FNV_OFFSET 0xCBF29CE484222325ull

const char *tpl_source_hash(const tpl_family *fam)
{
    /* Families are static, so the hash is computed once per family. */
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct { const tpl_family *fam; char hex[20]; } memo[32];
    static int n_memo;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n_memo; i++) {
        if (memo[i].fam == fam) {
            pthread_mutex_unlock(&lock);
            return memo[i].hex;
        }
    }
    size_t len = 0;
    const char *text = tpl_source_text(fam->source, &len);
    unsigned long long h = fnv1a(FNV_OFFSET, text ? text : "", text ? len : 0);
    h = fnv1a(h, fam->fixed_options, strlen(fam->fixed_options));
    static char fallback[20];
    char *out = fallback;
    if (n_memo < 32) {
        memo[n_memo].fam = fam;
        out = memo[n_memo++].hex;
    }
    snprintf(out, 20, "%016llx", h);
    pthread_mutex_unlock(&lock);
    return out;
}

static char nvrtc_version_text[16];
static pthread_once_t nvrtc_version_once = PTHREAD_ONCE_INIT;

static void nvrtc_version_init(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
        snprintf(nvrtc_version_text, sizeof nvrtc_version_text, "%d.%d", major, minor);
    else
        snprintf(nvrtc_version_text, sizeof nvrtc_version_text, "unknown");
}

const char *tpl_nvrtc_version(void)
{
    pthread_once(&nvrtc_version_once, nvrtc_version_init);
    return nvrtc_version_text;
}

void tpl_arch_name(int cc_major, int cc_minor, char *out, size_t len)
{
    snprintf(out, len, "sm_%d%d", cc_major, cc_minor);
}

/* NVRTC options of a configuration, as an argv (strings in storage). */
#define OPT_MAX (TPL_MAX_PARAMS + 16)
typedef struct opt_list {
    char storage[4096];
    const char *argv[OPT_MAX];
    int argc;
    size_t used;
} opt_list;

static void opt_add(opt_list *o, const char *text)
{
    size_t len = strlen(text) + 1;
    if (o->argc >= OPT_MAX || o->used + len > sizeof o->storage)
        return;
    memcpy(o->storage + o->used, text, len);
    o->argv[o->argc++] = o->storage + o->used;
    o->used += len;
}

const char *tpl_target_arch(const tpl_family *fam, const int *cfg, const char *arch)
{
    if (!fam || !cfg || !fam->target_arch)
        return arch;
    return fam->target_arch(cfg, arch);
}

static void opt_build(const tpl_family *fam, const int *cfg, const char *arch, opt_list *o)
{
    char buf[256];
    memset(o, 0, sizeof *o);
    const char *target = tpl_target_arch(fam, cfg, arch);
    snprintf(buf, sizeof buf, "-arch=%s", target ? target : "none");
    opt_add(o, buf);
    opt_add(o, "-std=c++17");
    opt_add(o, "-default-device");
    for (int i = 0; fam && cfg && i < fam->n_params; i++) {
        if (fam->params[i].host_only ||
            (fam->params[i].omit_first && cfg[i] == fam->params[i].values[0]))
            continue;
        snprintf(buf, sizeof buf, "-D%s=%d", fam->params[i].name, cfg[i]);
        opt_add(o, buf);
    }
    /* fixed_options: space-separated words */
    const char *p = fam ? fam->fixed_options : "";
    while (p && *p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n > 0 && n < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '\0';
            opt_add(o, buf);
        }
        p += n;
    }
}

void tpl_options_string(const tpl_family *fam, const int *cfg, const char *arch,
                        char *out, size_t len)
{
    opt_list o;
    opt_build(fam, cfg, arch, &o);
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (int i = 0; i < o.argc && used < len; i++) {
        int w = snprintf(out + used, len - used, "%s%s", i ? " " : "", o.argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void tpl_binary_key(const tpl_family *fam, const int *cfg, const char *arch,
                    char *out, size_t len)
{
    char options[4096];
    tpl_options_string(fam, cfg, arch, options, sizeof options);
    const char *hash = tpl_source_hash(fam);
    const char *version = tpl_nvrtc_version();
    unsigned long long h = fnv1a(FNV_OFFSET, hash, strlen(hash));
    h = fnv1a(h, "|", 1);
    h = fnv1a(h, options, strlen(options));
    h = fnv1a(h, "|", 1);
    h = fnv1a(h, version, strlen(version));
    const char *target = tpl_target_arch(fam, cfg, arch);
    snprintf(out, len, "%s-%s-%016llx", fam->name, target ? target : arch, h);
}

/* ---------------- compiling ---------------- */

static at_status compile_source(const char *name, const char *text, const opt_list *o,
                                void **cubin, size_t *cubin_size, char **log)
{
    *cubin = NULL;
    *cubin_size = 0;
    if (log)
        *log = NULL;
    if (!text) {
        if (log) {
            *log = malloc(128);
            if (*log)
                snprintf(*log, 128, "source %s is not embedded in this build", name);
        }
        return AT_ERR_NOT_FOUND;
    }
    nvrtcProgram prog;
    nvrtcResult rc = nvrtcCreateProgram(&prog, text, name, 0, NULL, NULL);
    if (rc != NVRTC_SUCCESS) {
        if (log) {
            *log = malloc(256);
            if (*log)
                snprintf(*log, 256, "nvrtcCreateProgram: %s", nvrtcGetErrorString(rc));
        }
        return rc == NVRTC_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_COMPILE;
    }
    rc = nvrtcCompileProgram(prog, o->argc, o->argv);
    size_t log_size = 0;
    if (log && nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
        *log = malloc(log_size);
        if (*log && nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS) {
            free(*log);
            *log = NULL;
        }
    }
    at_status status = AT_OK;
    if (rc != NVRTC_SUCCESS) {
        status = AT_ERR_COMPILE;
        if (log && !*log) {
            *log = malloc(256);
            if (*log)
                snprintf(*log, 256, "nvrtcCompileProgram: %s", nvrtcGetErrorString(rc));
        }
    } else {
        size_t size = 0;
        if (nvrtcGetCUBINSize(prog, &size) != NVRTC_SUCCESS || size == 0) {
            status = AT_ERR_COMPILE;
        } else if (!(*cubin = malloc(size))) {
            status = AT_ERR_NO_MEMORY;
        } else if (nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS) {
            free(*cubin);
            *cubin = NULL;
            status = AT_ERR_COMPILE;
        } else {
            *cubin_size = size;
        }
    }
    nvrtcDestroyProgram(&prog);
    return status;
}

at_status tpl_compile(const tpl_family *fam, const int *cfg, const char *arch,
                      void **cubin, size_t *cubin_size, char **log)
{
    if (!tpl_target_arch(fam, cfg, arch)) {
        *cubin = NULL;
        *cubin_size = 0;
        if (log) {
            *log = malloc(160);
            if (*log)
                snprintf(*log, 160, "this %s configuration cannot run on %s", fam->name, arch);
        }
        return AT_ERR_UNSUPPORTED;
    }
    opt_list o;
    opt_build(fam, cfg, arch, &o);
    return compile_source(fam->source, tpl_source_text(fam->source, NULL), &o, cubin,
                          cubin_size, log);
}

at_status tpl_compile_reference(const char *arch, void **cubin, size_t *size, char **log)
{
    opt_list o;
    opt_build(NULL, NULL, arch, &o);
    return compile_source("reference.cu", tpl_source_text("reference.cu", NULL), &o,
                          cubin, size, log);
}

at_status tpl_compile_utility(const char *name, const char *arch, void **cubin, size_t *size,
                              char **log)
{
    const char *text = tpl_source_text(name, NULL);
    if (!text) {
        *cubin = NULL;
        *size = 0;
        *log = NULL;
        return AT_ERR_NOT_FOUND;
    }
    opt_list o;
    opt_build(NULL, NULL, arch, &o);
    return compile_source(name, text, &o, cubin, size, log);
}

/* ---------------- verification helpers ---------------- */

static unsigned grid_for(long long n, unsigned block)
{
    long long blocks = (n + block - 1) / block;
    if (blocks < 1)
        blocks = 1;
    if (blocks > 65535LL * 8)
        blocks = 65535LL * 8;
    return (unsigned)blocks;
}

at_status tpl_ws_alloc(at_exec *ref, tpl_workset *ws, size_t bytes, CUdeviceptr *ptr)
{
    if (ws->n_bufs >= TPL_MAX_BUFS)
        return ex_fail(ref, AT_ERR_INTERNAL, "workset holds at most %d buffers", TPL_MAX_BUFS);
    if (bytes == 0)
        bytes = 4;
    CUresult rc = ref->cu->MemAlloc(ptr, bytes);
    if (rc != CUDA_SUCCESS) {
        cudrv_describe(ref->cu, rc, "cuMemAlloc(workset)", ref->errmsg, ref->errlen);
        return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
    }
    ws->bufs[ws->n_bufs] = *ptr;
    ws->buf_bytes[ws->n_bufs] = bytes;
    ws->n_bufs++;
    return AT_OK;
}

void tpl_workset_free(const cudrv *cu, tpl_workset *ws)
{
    if (!ws)
        return;
    for (int i = 0; cu && i < ws->n_bufs; i++)
        if (ws->bufs[i])
            cu->MemFree(ws->bufs[i]);
    memset(ws, 0, sizeof *ws);
}

at_status tpl_fill_uniform(at_exec *ref, CUdeviceptr p, long long n,
                           unsigned long long seed, float lo, float hi)
{
    void *args[] = {&p, &n, &seed, &lo, &hi};
    return ex_launch(ref, "ref_fill_uniform", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}

at_status tpl_fill_diag_dominant(at_exec *ref, CUdeviceptr A, int n,
                                 unsigned long long seed, float margin)
{
    void *args[] = {&A, &n, &seed, &margin};
    return ex_launch(ref, "ref_fill_diag_dominant", (unsigned)n, 1, 1, 256, 1, 1, 0, args);
}

/* Runs one accumulating reference kernel into a zeroed 3-double scratch
 * and downloads the three sums. */
static at_status reference_sums(at_exec *ref, const char *kernel, unsigned grid,
                                void **args, int acc_arg, double sums[3])
{
    CUdeviceptr acc;
    at_status s = ex_scratch(ref, EX_MAX_SCRATCH - 1, 3 * sizeof(double), &acc);
    if (s != AT_OK)
        return s;
    if ((s = ex_memset32(ref, acc, 0, 6)) != AT_OK)
        return s;
    args[acc_arg] = &acc;
    if ((s = ex_launch(ref, kernel, grid, 1, 1, 256, 1, 1, 0, args)) != AT_OK)
        return s;
    return ex_download(ref, sums, acc, 3 * sizeof(double));
}

/* ||out - expected||_F / ||expected||_F from the reference kernels' sums
 * {sum of squared differences, sum of squared expected values, non-finite
 * outputs}: +inf if any output is not finite, the absolute norm when the
 * expected values are all zero. */
static double error_of_sums(const double sums[3])
{
    if (sums[2] > 0 || !isfinite(sums[0]))
        return INFINITY;
    return sums[1] == 0 ? sqrt(sums[0]) : sqrt(sums[0] / sums[1]);
}

at_status tpl_rel_error(at_exec *ref, CUdeviceptr out, CUdeviceptr expected,
                        long long n, double *error)
{
    double sums[3];
    void *args[] = {&n, &out, &expected, NULL};
    at_status s = reference_sums(ref, "ref_error", grid_for(n, 256), args, 3, sums);
    if (s == AT_OK)
        *error = error_of_sums(sums);
    return s;
}

at_status tpl_ref_gemm(at_exec *ref, int m, int n, int k, float alpha, CUdeviceptr A,
                       int lda, CUdeviceptr B, int ldb, float beta, CUdeviceptr C0,
                       CUdeviceptr C, int ldc)
{
    void *args[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C0, &C, &ldc};
    return ex_launch(ref, "ref_gemm", (unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16),
                     1, 16, 16, 1, 0, args);
}

size_t tpl_dtype_size(at_dtype t)
{
    switch (t) {
    case AT_R_32F: return 4;
    case AT_R_64F: return 8;
    case AT_R_16F: return 2;
    case AT_R_16BF: return 2;
    default: return 0;
    }
}

double tpl_unit_roundoff(at_dtype t)
{
    switch (t) {
    case AT_R_32F: return ldexp(1.0, -24);
    case AT_R_64F: return ldexp(1.0, -53);
    case AT_R_16F: return ldexp(1.0, -11);
    case AT_R_16BF: return ldexp(1.0, -8);
    default: return 0.0;
    }
}

at_status tpl_fill_typed(at_exec *ref, CUdeviceptr p, long long n, at_dtype t,
                         unsigned long long seed, float lo, float hi)
{
    if (tpl_dtype_size(t) == 0)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_fill_typed: unknown element type %d", (int)t);
    int dtype = (int)t;
    void *args[] = {&p, &n, &dtype, &seed, &lo, &hi};
    return ex_launch(ref, "ref_fill_typed", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}

at_status tpl_ref_gemm_typed(at_exec *ref, at_dtype t, int tf32, int m, int n, int k,
                             float alpha, CUdeviceptr A, long long lda, CUdeviceptr B,
                             long long ldb, float beta, CUdeviceptr C0, long long ldc0,
                             CUdeviceptr R)
{
    if (tpl_dtype_size(t) == 0 || (tf32 && t != AT_R_32F))
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_ref_gemm_typed: element type %d%s", (int)t,
                       tf32 ? " with TF32" : "");
    if (m < 1 || n < 1)
        return AT_OK;
    int dtype = (int)t, round_tf32 = tf32 != 0;
    long long ldr = n;
    void *args[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C0, &ldc0, &R, &ldr,
                    &dtype, &round_tf32};
    return ex_launch(ref, "ref_gemm_typed", (unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16),
                     1, 16, 16, 1, 0, args);
}

at_status tpl_ref_gemm_args(at_exec *ref, const tpl_args *args, CUdeviceptr C0, CUdeviceptr R)
{
    const tpl_problem *p = &args->problem;
    long long batch = tpl_problem_batch(p);
    if (tpl_dtype_size(p->dtype) == 0 || p->order != AT_ROW_MAJOR || p->n_dims != 3 ||
        (p->math == AT_MATH_TF32 && p->dtype != AT_R_32F) || batch > 65535 ||
        p->dims[0] > 0x7fffffff || p->dims[1] > 0x7fffffff || p->dims[2] > 0x7fffffff)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_ref_gemm_args: a problem it cannot check");
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    if (m < 1 || n < 1)
        return AT_OK;
    const tpl_operand *a = &args->operand[TPL_GEMM_A], *b = &args->operand[TPL_GEMM_B],
                      *c = &args->operand[TPL_GEMM_C];
    /* op N: (i, p) at i * ld + p; op T: at p * ld + i */
    long long a_rs = p->op_a == AT_OP_T ? 1 : a->ld, a_cs = p->op_a == AT_OP_T ? a->ld : 1;
    long long b_rs = p->op_b == AT_OP_T ? 1 : b->ld, b_cs = p->op_b == AT_OP_T ? b->ld : 1;
    long long a_bs = a->batch_stride, b_bs = b->batch_stride, c_bs = c->batch_stride,
              ldc0 = c->ld;
    float alpha = (float)args->scalar[TPL_GEMM_ALPHA], beta = (float)args->scalar[TPL_GEMM_BETA];
    CUdeviceptr A = a->ptr, B = b->ptr;
    int dtype = (int)p->dtype, tf32 = p->math == AT_MATH_TF32;
    void *kargs[] = {&m, &n, &k, &alpha, &A, &a_rs, &a_cs, &a_bs, &B, &b_rs, &b_cs, &b_bs,
                     &beta, &C0, &ldc0, &c_bs, &R, &dtype, &tf32};
    return ex_launch(ref, "ref_gemm_strided", (unsigned)((n + 15) / 16),
                     (unsigned)((m + 15) / 16), (unsigned)batch, 16, 16, 1, 0, kargs);
}

at_status tpl_rel_error_typed(at_exec *ref, at_dtype t, CUdeviceptr out, int rows, int cols,
                              long long ld, CUdeviceptr expected, double *error)
{
    if (tpl_dtype_size(t) == 0)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "tpl_rel_error_typed: unknown element type %d",
                       (int)t);
    double sums[3];
    int dtype = (int)t;
    long long ldr = cols;
    void *args[] = {&rows, &cols, &out, &ld, &dtype, &expected, &ldr, NULL};
    at_status s = reference_sums(ref, "ref_error_typed",
                                 grid_for((long long)rows * cols, 256), args, 7, sums);
    if (s == AT_OK)
        *error = error_of_sums(sums);
    return s;
}

at_status tpl_ref_reduce(at_exec *ref, long long n, CUdeviceptr x, CUdeviceptr y,
                         double *result)
{
    double sums[3];
    void *args[] = {&n, &x, &y, NULL};
    unsigned grid = grid_for(n, 256);
    if (grid > 4096)
        grid = 4096;
    at_status s = reference_sums(ref, "ref_reduce", grid, args, 3, sums);
    if (s == AT_OK)
        *result = sums[0];
    return s;
}

at_status tpl_fill_f64(at_exec *ref, CUdeviceptr p, long long n, unsigned long long seed,
                       double lo, double hi)
{
    void *args[] = {&p, &n, &seed, &lo, &hi};
    return ex_launch(ref, "ref_fill_f64", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}

/* s + e == a + b exactly (TwoSum), on the host. */
static void two_sum(double a, double b, double *s, double *e)
{
    double t = a + b;
    double bv = t - a;
    *e = (a - (t - bv)) + (b - bv);
    *s = t;
}

#define TPL_REF_F64_BLOCKS 1024     /* blocks of ref_reduce_f64: pairs added on the host */

at_status tpl_ref_reduce_f64(at_exec *ref, long long n, CUdeviceptr x, CUdeviceptr y,
                             double *result)
{
    *result = 0.0;
    if (n <= 0)
        return AT_OK;
    unsigned grid = grid_for(n, 256);
    if (grid > TPL_REF_F64_BLOCKS)
        grid = TPL_REF_F64_BLOCKS;
    CUdeviceptr out;
    at_status s = ex_scratch(ref, EX_MAX_SCRATCH - 1, 2 * sizeof(double) * TPL_REF_F64_BLOCKS,
                             &out);
    if (s != AT_OK)
        return s;
    void *args[] = {&n, &x, &y, &out};
    if ((s = ex_launch(ref, "ref_reduce_f64", grid, 1, 1, 256, 1, 1, 0, args)) != AT_OK)
        return s;
    double *buf = malloc(2 * sizeof(double) * grid);
    if (!buf)
        return ex_fail(ref, AT_ERR_NO_MEMORY, "tpl_ref_reduce_f64: out of host memory");
    s = ex_download(ref, buf, out, 2 * sizeof(double) * grid);
    double hi = 0.0, lo = 0.0;
    for (unsigned i = 0; s == AT_OK && i < grid; i++) {
        double t;
        two_sum(hi, buf[2 * i], &hi, &t);
        lo += t + buf[2 * i + 1];
    }
    free(buf);
    if (s == AT_OK)
        *result = hi + lo;
    return s;
}

/* ||A x - b|| / ||b|| by the residual kernel `kernel` (float or double). */
static at_status residual_by(at_exec *ref, const char *kernel, int n, CUdeviceptr A,
                             CUdeviceptr b, CUdeviceptr x, double *residual)
{
    double sums[3];
    void *args[] = {&n, &A, &b, &x, NULL};
    at_status s = reference_sums(ref, kernel, (unsigned)n, args, 4, sums);
    if (s != AT_OK)
        return s;
    if (sums[2] > 0 || !isfinite(sums[0]))
        *residual = INFINITY;
    else
        *residual = sums[1] > 0 ? sqrt(sums[0] / sums[1]) : sqrt(sums[0]);
    return AT_OK;
}

at_status tpl_ref_residual(at_exec *ref, int n, CUdeviceptr A, CUdeviceptr b,
                           CUdeviceptr x, double *residual)
{
    return residual_by(ref, "ref_residual", n, A, b, x, residual);
}

at_status tpl_ref_residual_f64(at_exec *ref, int n, CUdeviceptr A, CUdeviceptr b,
                               CUdeviceptr x, double *residual)
{
    return residual_by(ref, "ref_residual_f64", n, A, b, x, residual);
}

at_status tpl_set_diagonal_f64(at_exec *ref, CUdeviceptr A, int n, double v)
{
    void *args[] = {&A, &n, &v};
    return ex_launch(ref, "ref_set_diagonal_f64", grid_for(n, 256), 1, 1, 256, 1, 1, 0, args);
}
