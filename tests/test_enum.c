/* test_enum.c: the pruned enumeration of valid configurations (tpl_valid_configs
 * walking a family's valid_prefix) against plain scans of the raw space (the
 * test's own counter), and valid_prefix's promise: it never rejects a prefix
 * that some valid configuration completes. CPU only. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "tpl.h"

/* Raw spaces up to this size are compared with a plain scan in full on every
 * device; larger ones (matmul 1.2e9, dgemm 2.9e9, tcgemm 1.8e10: minutes of
 * CPU each) on the subtrees of the last parameters around what the walk found
 * (en_compare_subtrees), on random windows and on every configuration's
 * neighbours. $AUTOTUNE_ENUM_FULL=1 (`make check` sets it) compares every
 * space in full on every device. */
#define EN_FULL_MAX (1LL << 24)
/* The subtrees compared (en_compare_subtrees) and a random window: at most so
 * many raw configurations. */
#define EN_TREE (1LL << 16)
#define EN_NEAR_TREE (1LL << 12)
#define EN_RANDOM_WINDOW (1LL << 18)
#define EN_RANDOM_WINDOWS 8
#define EN_MAX_THREADS 8
#define EN_N_RANDOM_DEVICES 3
/* Random prefixes per family and device, and the configurations searched for a
 * valid completion of each rejected one (matmul: whole subtrees from WNITER on). */
#define EN_PREFIXES 200
#define EN_BUDGET (1LL << 15)

/* A nominal device: sm_80 (A100), sm_90 (H100); arch NULL: a random one from
 * *seed (shared memory, threads, registers and architecture drawn from the
 * ranges of real parts, so the limits valid() reads all move). */
static void en_device(const char *arch, unsigned long long *seed, at_device_info *dev)
{
    memset(dev, 0, sizeof *dev);
    int is80 = arch && strcmp(arch, "sm_80") == 0;
    dev->cc_major = is80 ? 8 : 9;
    dev->sm_count = is80 ? 108 : 132;
    dev->smem_per_block_optin = (is80 ? 163 : 227) * 1024;
    dev->smem_per_sm = (is80 ? 164 : 228) * 1024;
    dev->regs_per_block = dev->regs_per_sm = 65536;
    dev->max_threads_per_block = 1024;
    dev->max_threads_per_sm = 2048;
    if (!arch) {
        static const int smem_kib[] = {48, 99, 163, 227}, threads[] = {256, 512, 1024};
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned long long r = *seed >> 17;
        dev->cc_major = 7 + (int)(r % 4);
        dev->smem_per_block_optin = smem_kib[(r >> 3) % 4] * 1024;
        dev->smem_per_sm = dev->smem_per_block_optin + 1024;
        dev->max_threads_per_block = threads[(r >> 6) % 3];
        dev->max_threads_per_sm = (r >> 9) % 2 ? 1536 : 2048;
        dev->regs_per_block = (r >> 10) % 2 ? 32768 : 65536;
        dev->regs_per_sm = 65536;
        arch = "random";
    }
    dev->cc_minor = 0;
    snprintf(dev->arch, sizeof dev->arch, "%s", arch);
    snprintf(dev->name, sizeof dev->name, "nominal %s", arch);
}

static unsigned long long en_rand(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static long long en_raw(const tpl_family *fam)
{
    long long raw = 1;
    for (int p = 0; p < fam->n_params; p++)
        raw *= fam->params[p].n_values;
    return raw;
}

/* ---------------- the plain scan (its own counter, not tpl's) ---------------- */

typedef struct en_scan {
    const tpl_family *fam;
    const at_device_info *dev;
    long long begin, end, n, cap;
    long long *idx;
    int oom;
} en_scan;

/* Every raw configuration in [begin, end) through valid(): the valid indices in order. */
static void *en_scan_run(void *arg)
{
    en_scan *s = arg;
    const tpl_family *fam = s->fam;
    int pos[TPL_MAX_PARAMS], cfg[TPL_MAX_PARAMS];
    long long x = s->begin;
    for (int p = fam->n_params - 1; p >= 0; p--) {
        pos[p] = (int)(x % fam->params[p].n_values);
        x /= fam->params[p].n_values;
        cfg[p] = fam->params[p].values[pos[p]];
    }
    for (long long i = s->begin; i < s->end; i++) {
        if (!fam->valid || fam->valid(cfg, s->dev, NULL, 0)) {
            if (s->n == s->cap) {
                long long cap = s->cap ? 2 * s->cap : 256;
                long long *q = realloc(s->idx, (size_t)cap * sizeof *q);
                if (!q) {
                    s->oom = 1;
                    return NULL;
                }
                s->idx = q;
                s->cap = cap;
            }
            s->idx[s->n++] = i;
        }
        for (int p = fam->n_params - 1; p >= 0; p--) {  /* the last parameter fastest */
            int wrap = ++pos[p] == fam->params[p].n_values;
            pos[p] = wrap ? 0 : pos[p];
            cfg[p] = fam->params[p].values[pos[p]];
            if (!wrap)
                break;
        }
    }
    return NULL;
}

/* The plain scan of [begin, end) on up to EN_MAX_THREADS threads: valid raw
 * indices in order in *idx (caller frees); the count, -1 if out of memory. */
static long long en_plain(const tpl_family *fam, const at_device_info *dev, long long begin,
                          long long end, long long **idx)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = end - begin < (1 << 20) || cores < 2 ? 1 : cores > EN_MAX_THREADS ? EN_MAX_THREADS
                                                                                 : (int)cores;
    en_scan s[EN_MAX_THREADS];
    pthread_t th[EN_MAX_THREADS];
    int started[EN_MAX_THREADS] = {0};
    for (int t = 0; t < nt; t++) {
        s[t] = (en_scan){fam, dev, begin + (end - begin) * t / nt,
                         begin + (end - begin) * (t + 1) / nt, 0, 0, NULL, 0};
        started[t] = t > 0 && pthread_create(&th[t], NULL, en_scan_run, &s[t]) == 0;
    }
    for (int t = 0; t < nt; t++)
        if (!started[t])
            en_scan_run(&s[t]);
    long long n = 0, oom = 0;
    for (int t = 0; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        n += s[t].n;
        oom |= s[t].oom;
    }
    *idx = oom ? NULL : malloc((size_t)(n ? n : 1) * sizeof **idx);
    for (long long t = 0, at = 0; t < nt; t++) {
        if (*idx && s[t].n)
            memcpy(*idx + at, s[t].idx, (size_t)s[t].n * sizeof **idx);
        at += s[t].n;
        free(s[t].idx);
    }
    return *idx ? n : -1;
}

/* First position in the sorted list at which x could go. */
static long long en_lower(const long long *v, long long n, long long x)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* 0 if the enumeration got (n_got sorted indices) holds exactly the plain
 * scan's valid indices within [begin, end); else 1 with the first difference
 * in msg. */
static int en_compare_range(const tpl_family *fam, const at_device_info *dev,
                            const long long *got, long long n_got, long long begin,
                            long long end, char *msg, size_t len)
{
    long long *ref = NULL;
    long long n_ref = en_plain(fam, dev, begin, end, &ref);
    if (n_ref < 0) {
        snprintf(msg, len, "%s: out of memory", fam->name);
        return 1;
    }
    long long g0 = en_lower(got, n_got, begin), g1 = en_lower(got, n_got, end);
    int bad = 0;
    for (long long i = 0; !bad && i < n_ref && i < g1 - g0; i++)
        if (ref[i] != got[g0 + i]) {
            snprintf(msg, len, "%s on %s, raw [%lld, %lld): plain scan has %lld, the "
                     "enumeration %lld at position %lld", fam->name, dev->arch, begin, end,
                     ref[i], got[g0 + i], i);
            bad = 1;
        }
    if (!bad && n_ref != g1 - g0) {
        snprintf(msg, len, "%s on %s, raw [%lld, %lld): plain scan %lld valid, the "
                 "enumeration %lld", fam->name, dev->arch, begin, end, n_ref, g1 - g0);
        bad = 1;
    }
    free(ref);
    return bad;
}

/* 0 if every one-parameter neighbour of every enumerated configuration (all
 * values of one parameter changed) is in the enumeration exactly when valid()
 * takes it; else 1 with the first counter-example in msg. The neighbours of a
 * valid configuration are where a rule guarded by the wrong parameter would
 * cut valid ones; *checked counts the valid() calls. */
static int en_compare_neighbours(const tpl_family *fam, const at_device_info *dev,
                                 const long long *got, long long n_got, long long *checked,
                                 char *msg, size_t len)
{
    long long stride[TPL_MAX_PARAMS];
    long long s = 1;
    for (int p = fam->n_params - 1; p >= 0; p--) {
        stride[p] = s;
        s *= fam->params[p].n_values;
    }
    for (long long i = 0; i < n_got; i++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, got[i], cfg);
        for (int p = 0; p < fam->n_params; p++) {
            int own = cfg[p], own_pos = (int)(got[i] / stride[p] % fam->params[p].n_values);
            for (int v = 0; v < fam->params[p].n_values; v++) {
                if (v == own_pos)
                    continue;
                cfg[p] = fam->params[p].values[v];
                long long x = got[i] + (v - own_pos) * stride[p];
                long long at = en_lower(got, n_got, x);
                int listed = at < n_got && got[at] == x;
                int valid = !fam->valid || fam->valid(cfg, dev, NULL, 0);
                ++*checked;
                if (listed != valid) {
                    char text[TPL_CONFIG_LEN];
                    tpl_config_format(fam, cfg, text, sizeof text);
                    snprintf(msg, len, "%s on %s: %s is %s but %s the enumeration", fam->name,
                             dev->arch, text, valid ? "valid" : "not valid",
                             listed ? "in" : "missing from");
                    return 1;
                }
            }
            cfg[p] = own;
        }
    }
    return 0;
}

/* 0 if the enumeration matches the plain scan on n_windows windows of
 * EN_RANDOM_WINDOW raw configurations, half at random places, half centred on
 * random enumerated configurations (seeded); else 1 with msg. */
static int en_compare_windows(const tpl_family *fam, const at_device_info *dev,
                              const long long *got, long long n_got, int n_windows,
                              unsigned long long seed, char *msg, size_t len)
{
    long long raw = en_raw(fam), w = EN_RANDOM_WINDOW;
    for (int k = 0; k < n_windows; k++) {
        unsigned long long r = en_rand(&seed);
        long long centre = k % 2 && n_got ? got[r % (unsigned long long)n_got]
                                          : (long long)(r % (unsigned long long)raw);
        long long begin = centre - w / 2 < 0 ? 0 : centre - w / 2;
        long long end = begin + w > raw ? raw : begin + w;
        if (en_compare_range(fam, dev, got, n_got, begin, end, msg, len))
            return 1;
    }
    return 0;
}

static int en_cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* The first parameter of fam's subtrees of at most w raw configurations: the
 * parameters from it on span *size raw configurations, at most w. */
static int en_subtree_depth(const tpl_family *fam, long long w, long long *size)
{
    int d = fam->n_params;
    *size = 1;
    while (d > 0 && *size * fam->params[d - 1].n_values <= w)
        *size *= fam->params[--d].n_values;
    return d;
}

/* 1 if the enumeration holds a configuration in the raw range [begin, end). */
static int en_holds(const long long *got, long long n_got, long long begin, long long end)
{
    long long at = en_lower(got, n_got, begin);
    return at < n_got && got[at] < end;
}

/* 0 if the enumeration matches the plain scan on every subtree of the last
 * parameters (EN_TREE raw configurations at most) that holds an enumerated
 * configuration, and on every smaller subtree (EN_NEAR_TREE) whose fixed
 * values are an enumerated configuration's with one of them changed; else 1
 * with msg. So nothing is lost beside what the walk found, whatever the last
 * parameters' values, nor one change of a leading value away from it; every
 * value of every parameter is met. *trees and *scanned count the subtrees and
 * the raw configurations judged. */
static int en_compare_subtrees(const tpl_family *fam, const at_device_info *dev,
                               const long long *got, long long n_got, long long *trees,
                               long long *scanned, char *msg, size_t len)
{
    long long size, near_size, stride[TPL_MAX_PARAMS], s = 1;
    en_subtree_depth(fam, EN_TREE, &size);
    int near_depth = en_subtree_depth(fam, EN_NEAR_TREE, &near_size);
    for (int p = fam->n_params - 1; p >= 0; p--) {
        stride[p] = s;
        s *= fam->params[p].n_values;
    }
    for (long long i = 0, last = -1; i < n_got; i++) {
        long long begin = got[i] - got[i] % size;
        if (begin == last)
            continue;
        last = begin;
        ++*trees;
        *scanned += size;
        if (en_compare_range(fam, dev, got, n_got, begin, begin + size, msg, len))
            return 1;
    }
    long long values = 0, n_near = 0;
    for (int p = 0; p < near_depth; p++)
        values += fam->params[p].n_values;
    long long *near = malloc((size_t)(n_got * values + 1) * sizeof *near);
    if (!near) {
        snprintf(msg, len, "%s: out of memory", fam->name);
        return 1;
    }
    for (long long i = 0, last = -1; i < n_got; i++) {
        long long begin = got[i] - got[i] % near_size;
        if (begin == last)
            continue;
        last = begin;
        for (int p = 0; p < near_depth; p++) {
            int own = (int)(begin / stride[p] % fam->params[p].n_values);
            for (int v = 0; v < fam->params[p].n_values; v++) {
                long long x = begin + (v - own) * stride[p];
                /* a subtree inside a larger one compared above is passed over */
                if (v != own && !en_holds(got, n_got, x - x % size, x - x % size + size))
                    near[n_near++] = x;
            }
        }
    }
    qsort(near, (size_t)n_near, sizeof *near, en_cmp_ll);
    int bad = 0;
    for (long long k = 0; k < n_near && !bad; k++) {
        if (k && near[k] == near[k - 1])
            continue;
        ++*trees;
        *scanned += near_size;
        bad = en_compare_range(fam, dev, got, n_got, near[k], near[k] + near_size, msg, len);
    }
    free(near);
    return bad;
}

/* ---------------- a wrong valid_prefix (the checks must catch it) ---------------- */

static const tpl_family *en_base;   /* the family the broken copy wraps */
static int en_broken_param[2];      /* the prefix check rejects these parameters' */
static int en_broken_value[2];      /* values here (a second parameter -1: none), in every
                                       prefix that fixes them */

static int en_broken_prefix(const int *cfg, int n_fixed, const at_device_info *dev)
{
    int cut = 1;
    for (int i = 0; i < 2; i++)
        if (en_broken_param[i] >= 0)
            cut = cut && n_fixed > en_broken_param[i] &&
                  cfg[en_broken_param[i]] == en_broken_value[i];
    return cut ? 0 : en_base->valid_prefix(cfg, n_fixed, dev);
}

/* A copy of fam whose valid_prefix also rejects every configuration with
 * parameter p (and q, unless q is -1) at the values of a valid one (cfg), so
 * the enumeration loses them. */
static tpl_family en_broken(const tpl_family *fam, int p, int q, const int *cfg)
{
    tpl_family b = *fam;
    en_base = fam;
    en_broken_param[0] = p;
    en_broken_value[0] = cfg[p];
    en_broken_param[1] = q;
    en_broken_value[1] = q >= 0 ? cfg[q] : 0;
    b.valid_prefix = en_broken_prefix;
    return b;
}

/* ---------------- the tests ---------------- */

/* Devices of the comparisons: sm_80 and sm_90 (nominal), the generic (NULL). */
static const char *const en_arches[] = {"sm_80", "sm_90", NULL};
#define EN_N_ARCHES 3

TEST(enum_walk_equals_plain_scan_every_family)
{
    const char *full_env = getenv("AUTOTUNE_ENUM_FULL");
    int full_all = full_env && *full_env && strcmp(full_env, "0") != 0;
    int walked = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        long long raw = en_raw(fam);
        if (!fam->valid_prefix) {
            printf("    %s: no valid_prefix, scanned (%lld raw)\n", fam->name, raw);
            continue;
        }
        walked++;
        for (int a = 0; a < EN_N_ARCHES; a++) {
            at_device_info d;
            if (en_arches[a])
                en_device(en_arches[a], NULL, &d);
            const at_device_info *dev = en_arches[a] ? &d : NULL;
            long long *got = NULL;
            long long n_got = tpl_valid_configs(fam, dev, &got);
            CHECK_MSG(n_got > 0, "%s: tpl_valid_configs %lld", fam->name, n_got);
            char msg[1024] = "", how[160];
            long long checked = 0, trees = 0, scanned = 0;
            /* in full: small spaces, and every space under $AUTOTUNE_ENUM_FULL=1 */
            int full = raw <= EN_FULL_MAX || full_all;
            int bad = full ? en_compare_range(fam, dev, got, n_got, 0, raw, msg, sizeof msg)
                           : en_compare_subtrees(fam, dev, got, n_got, &trees, &scanned, msg,
                                                 sizeof msg) ||
                             en_compare_windows(fam, dev, got, n_got, EN_RANDOM_WINDOWS,
                                                1000 + (unsigned)a, msg, sizeof msg);
            bad = bad || en_compare_neighbours(fam, dev, got, n_got, &checked, msg, sizeof msg);
            if (full)
                snprintf(how, sizeof how, "plain scan of the whole space");
            else
                snprintf(how, sizeof how, "plain scans of %lld subtrees (%lld raw) and %d random "
                         "windows of %lld", trees, scanned, EN_RANDOM_WINDOWS, EN_RANDOM_WINDOW);
            printf("    %s on %s: %lld valid of %lld raw, %s, %lld neighbours\n", fam->name,
                   en_arches[a] ? en_arches[a] : "generic", n_got, raw, how, checked);
            fflush(stdout);
            free(got);
            CHECK_MSG(!bad, "%s", msg);
        }
    }
    CHECK(walked >= 1);     /* matmul has valid_prefix */
}

TEST(enum_checks_catch_a_prefix_check_that_cuts_valid_configurations)
{
    const tpl_family *mm = tpl_find("matmul");
    CHECK(mm && mm->valid_prefix);
    at_device_info dev;
    en_device("sm_90", NULL, &dev);
    long long *good = NULL;
    long long n_good = tpl_valid_configs(mm, &dev, &good);
    CHECK(n_good > 0);
    /* STAGES of the last valid configuration: a cut deep in the walk */
    int cfg[TPL_MAX_PARAMS], p = tpl_param_index(mm, "STAGES");
    CHECK(p > 0);
    tpl_config_from_index(mm, good[n_good - 1], cfg);
    tpl_family broken = en_broken(mm, p, -1, cfg);
    long long *got = NULL, checked = 0;
    long long n_got = tpl_valid_configs(&broken, &dev, &got);
    char msg[1024] = "";
    int caught_neighbours = en_compare_neighbours(&broken, &dev, got, n_got, &checked, msg,
                                                  sizeof msg);
    printf("    neighbours: %s\n", msg);
    long long centre = good[n_good - 1], half = 1LL << 17;
    long long begin = centre < half ? 0 : centre - half;
    int caught_window = en_compare_range(&broken, &dev, got, n_got, begin, centre + half, msg,
                                         sizeof msg);
    printf("    window: %s\n", msg);
    free(good);
    free(got);
    CHECK(n_got < n_good);
    CHECK(caught_neighbours);
    CHECK(caught_window);
}

/* The subtree comparison that stands in for the full one on large spaces finds
 * a prefix check that cuts the valid configurations holding one pair of
 * values, of two leading parameters (the second and the middle one: no subtree
 * spans them) or of two late ones (the last two before the last whose values
 * vary: the walk asks valid_prefix about all but the last), in every family too
 * large to scan in full; so do the neighbours for the leading pair. */
TEST(enum_subtrees_catch_a_cut_pair_of_values)
{
    int tried = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        if (!fam->valid_prefix || en_raw(fam) <= EN_FULL_MAX)
            continue;
        at_device_info dev;
        en_device("sm_90", NULL, &dev);
        long long *good = NULL;
        long long n_good = tpl_valid_configs(fam, &dev, &good);
        CHECK(n_good > 0);
        int cfg[TPL_MAX_PARAMS], other[TPL_MAX_PARAMS], n = fam->n_params, varies[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, good[n_good / 2], cfg);
        memset(varies, 0, sizeof varies);
        for (long long i = 0; i < n_good; i++) {
            tpl_config_from_index(fam, good[i], other);
            for (int p = 0; p < n; p++)
                varies[p] |= other[p] != cfg[p];
        }
        free(good);
        /* the late pair: the last two parameters before the last whose values vary */
        int late[2] = {-1, -1};
        for (int p = n - 2, k = 1; p >= 0 && k >= 0; p--)
            if (varies[p])
                late[k--] = p;
        CHECK(late[0] >= 0);
        const int pairs[2][2] = {{1, n / 2}, {late[0], late[1]}};
        for (int k = 0; k < 2; k++) {
            tpl_family broken = en_broken(fam, pairs[k][0], pairs[k][1], cfg);
            long long *got = NULL, trees = 0, scanned = 0, checked = 0;
            long long n_got = tpl_valid_configs(&broken, &dev, &got);
            char msg[1024] = "", nmsg[1024] = "";
            int caught = en_compare_subtrees(&broken, &dev, got, n_got, &trees, &scanned, msg,
                                             sizeof msg);
            int by_neighbours = en_compare_neighbours(&broken, &dev, got, n_got, &checked, nmsg,
                                                      sizeof nmsg);
            free(got);
            printf("    %s, %s and %s cut: %s\n", fam->name, fam->params[pairs[k][0]].name,
                   fam->params[pairs[k][1]].name, msg);
            CHECK(n_got < n_good);
            CHECK_MSG(caught, "%s: the subtrees miss the cut of %s and %s", fam->name,
                      fam->params[pairs[k][0]].name, fam->params[pairs[k][1]].name);
            CHECK_MSG(k == 1 || by_neighbours, "%s: the neighbours miss the cut", fam->name);
        }
        tried++;
    }
    CHECK(tried >= 1);
}

/* One random prefix of fam on dev: n_fixed in 1..n-1 (deep ones more often:
 * their completions can be searched to the end) returned, its configuration in
 * cfg: an enumerated one or any, half the time with one value of the prefix
 * changed (the neighbours of valid configurations, which the enumeration may
 * lack if the prefix check is wrong, are where it errs). */
static int en_random_prefix(const tpl_family *fam, const long long *got, long long n_got,
                            unsigned long long *seed, int *cfg)
{
    unsigned long long r = en_rand(seed);
    int n = fam->n_params, a = 1 + (int)(en_rand(seed) % (unsigned long long)(n - 1));
    int b = 1 + (int)(en_rand(seed) % (unsigned long long)(n - 1));
    int nf = a > b ? a : b;
    long long x = r % 2 && n_got ? got[en_rand(seed) % (unsigned long long)n_got]
                                 : (long long)(en_rand(seed) % (unsigned long long)en_raw(fam));
    tpl_config_from_index(fam, x, cfg);
    if ((r >> 1) % 2) {
        int p = (int)(en_rand(seed) % (unsigned long long)nf);
        cfg[p] = fam->params[p].values[en_rand(seed) % (unsigned long long)fam->params[p].n_values];
    }
    return nf;
}

/* valid_prefix on cfg's first n_fixed values with the rest of cfg overwritten
 * by junk (values of the lists, values outside them): it must not read them. */
static int en_prefix_junk(const tpl_family *fam, const int *cfg, int n_fixed,
                          const at_device_info *dev, unsigned long long *seed)
{
    static const int junk[] = {0, -1, 3, 7, 1 << 20};
    int c[TPL_MAX_PARAMS];
    memcpy(c, cfg, sizeof c);
    for (int p = n_fixed; p < fam->n_params; p++) {
        unsigned long long r = en_rand(seed);
        c[p] = r % 2 ? fam->params[p].values[(r >> 1) % (unsigned long long)fam->params[p].n_values]
                     : junk[(r >> 1) % 5];
    }
    return fam->valid_prefix(c, n_fixed, dev);
}

/* Counts of one family's random prefixes. */
typedef struct en_tally {
    long long prefixes, rejected, proved, searched;
} en_tally;

/* 0 if no random prefix of fam on dev that valid_prefix rejects has a valid
 * completion (searched with valid() over its whole subtree when that holds at
 * most `budget` configurations, else over `budget` of them, and looked up in
 * the enumeration), and valid_prefix's answer never depends on the values
 * past the prefix; else 1 with msg. */
static int en_prefix_property(const tpl_family *fam, const at_device_info *dev, int n_prefixes,
                              long long budget, unsigned long long seed, en_tally *t, char *msg,
                              size_t len)
{
    long long *got = NULL;
    long long n_got = tpl_valid_configs(fam, dev, &got);
    for (int k = 0; k < n_prefixes && n_got >= 0; k++) {
        int cfg[TPL_MAX_PARAMS];
        int nf = en_random_prefix(fam, got, n_got, &seed, cfg);
        int r0 = en_prefix_junk(fam, cfg, nf, dev, &seed);
        int r1 = en_prefix_junk(fam, cfg, nf, dev, &seed);
        char text[TPL_CONFIG_LEN];
        tpl_config_format(fam, cfg, text, sizeof text);
        t->prefixes++;
        if (r0 != r1) {
            snprintf(msg, len, "%s on %s: valid_prefix(%s, %d) reads past the prefix", fam->name,
                     dev->arch, text, nf);
            free(got);
            return 1;
        }
        if (r0)
            continue;
        t->rejected++;
        /* the prefix's completions are the raw indices [x, x + size) */
        long long size = 1, x = tpl_config_to_index(fam, cfg);
        for (int p = nf; p < fam->n_params; p++)
            size *= fam->params[p].n_values;
        x -= x % size;
        long long end = x + (size < budget ? size : budget), *found = NULL;
        long long n_found = en_plain(fam, dev, x, end, &found);
        long long at = en_lower(got, n_got, x);
        int listed = at < n_got && got[at] < x + size;
        free(found);
        t->proved += size <= budget;
        t->searched += end - x;
        if (n_found != 0 || listed) {
            snprintf(msg, len, "%s on %s: valid_prefix rejects the first %d values of %s, but "
                     "%s", fam->name, dev->arch, nf, text,
                     n_found ? "a completion is valid" : "the enumeration has a completion");
            free(got);
            return 1;
        }
    }
    free(got);
    return n_got < 0;
}

TEST(enum_valid_prefix_never_rejects_a_prefix_with_a_valid_completion)
{
    unsigned long long dseed = 7;
    int families = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        if (!fam->valid_prefix)
            continue;
        families++;
        en_tally t = {0, 0, 0, 0};
        for (int a = 0; a < 2 + EN_N_RANDOM_DEVICES; a++) {
            at_device_info dev;
            en_device(a < 2 ? en_arches[a] : NULL, &dseed, &dev);
            char msg[1024] = "";
            int bad = en_prefix_property(fam, &dev, EN_PREFIXES, EN_BUDGET, 11 + (unsigned)a, &t,
                                         msg, sizeof msg);
            CHECK_MSG(!bad, "%s", msg);
        }
        printf("    %s: %lld random prefixes, %lld rejected (%lld with every completion "
               "searched), %lld completions searched\n", fam->name, t.prefixes, t.rejected,
               t.proved, t.searched);
        CHECK(t.rejected > 0 && t.proved > 0);
    }
    CHECK(families >= 1);
    /* the property fails for a prefix check that cuts valid configurations */
    const tpl_family *mm = tpl_find("matmul");
    at_device_info dev;
    en_device("sm_90", NULL, &dev);
    long long *good = NULL;
    long long n_good = tpl_valid_configs(mm, &dev, &good);
    CHECK(n_good > 0);
    int cfg[TPL_MAX_PARAMS];
    tpl_config_from_index(mm, good[n_good / 2], cfg);
    free(good);
    tpl_family broken = en_broken(mm, tpl_param_index(mm, "TN"), -1, cfg);
    en_tally t = {0, 0, 0, 0};
    char msg[1024] = "";
    int caught = 0;
    for (unsigned s = 0; s < 16 && !caught; s++)
        caught = en_prefix_property(&broken, &dev, EN_PREFIXES, EN_BUDGET, 100 + s, &t, msg,
                                    sizeof msg);
    printf("    a broken prefix check: %s\n", msg);
    CHECK(caught);
}

/* The walk's work on matmul, counted through a copy whose hooks count calls. */
static const tpl_family *en_counted;
static long long en_n_valid, en_n_prefix;

static int en_count_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    en_n_valid++;
    return en_counted->valid(cfg, dev, why, len);
}

static int en_count_prefix(const int *cfg, int n_fixed, const at_device_info *dev)
{
    en_n_prefix++;
    return en_counted->valid_prefix(cfg, n_fixed, dev);
}

TEST(enum_walk_visits_a_small_part_of_matmul)
{
    const tpl_family *mm = tpl_find("matmul");
    CHECK(mm && mm->valid_prefix);
    tpl_family c = *mm;
    en_counted = mm;
    en_n_valid = en_n_prefix = 0;
    c.valid = en_count_valid;
    c.valid_prefix = en_count_prefix;
    long long *got = NULL;
    long long n = tpl_valid_configs(&c, NULL, &got);
    free(got);
    printf("    matmul: %lld valid of %lld raw: %lld valid() and %lld valid_prefix() calls\n", n,
           en_raw(mm), en_n_valid, en_n_prefix);
    CHECK(n > 0);
    /* the raw space is 1.2e9: a walk that stays pruned calls valid() a few times
     * per valid configuration */
    CHECK(en_n_valid <= 4 * n && en_n_prefix <= 10 * n);
}
