/* test_compile_sample.c: NVRTC compiles a stratified sample of every family
 * (templates/samples.c's tpl_sample_configs: every value of every parameter, the
 * default, the baselines and the stored winners of tests/data/) for sm_80 and
 * sm_90 on all cores, and checks the sample's coverage against an independent
 * scan of each space. `make check` compiles every configuration instead. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "tpl.h"

#define CS_MAX_WINNERS 64
#define CS_MAX_EXTRA (CS_MAX_WINNERS + 16)

static const char *const cs_arches[] = {"sm_80", "sm_90"};
#define CS_N_ARCHES ((int)(sizeof cs_arches / sizeof cs_arches[0]))
/* The largest raw space of a family with valid_prefix that the coverage test
 * scans itself (test_enum.c scans the larger ones, once). */
#define CS_SCAN_MAX (1LL << 26)

/* Code paths a cover of the values alone may miss, compiled besides the
 * sample: the reduction finishes in their grid shapes (sum and dot). */
static const char *const cs_reduce_paths[] = {
    "STYLE=0,FINISH=2,BLOCK=64,ITEMS=16,VEC=1,GRID=0,UNROLL=1",
    "STYLE=2,FINISH=0,BLOCK=1024,ITEMS=2,VEC=2,GRID=0,UNROLL=1",
    "STYLE=3,FINISH=1,BLOCK=256,ITEMS=2,VEC=4,GRID=8,UNROLL=4",
    "STYLE=3,FINISH=1,BLOCK=128,ITEMS=1,VEC=4,GRID=-1,UNROLL=2",
    /* the accumulator finish: few-block grids, persistent, fixed */
    "STYLE=3,FINISH=3,BLOCK=256,ITEMS=2,VEC=4,GRID=0,UNROLL=1",
    "STYLE=3,FINISH=3,BLOCK=64,ITEMS=16,VEC=1,GRID=0,UNROLL=1",
    "STYLE=3,FINISH=3,BLOCK=512,ITEMS=4,VEC=4,GRID=2,UNROLL=2",
    "STYLE=3,FINISH=3,BLOCK=256,ITEMS=1,VEC=2,GRID=-32,UNROLL=1",
    /* the last-block finish beyond one warp's partials */
    "STYLE=1,FINISH=2,BLOCK=64,ITEMS=1,VEC=4,GRID=0,UNROLL=1",
    /* the gather finish */
    "STYLE=3,FINISH=4,BLOCK=256,ITEMS=8,VEC=1,GRID=0,UNROLL=1",
    "STYLE=3,FINISH=4,BLOCK=1024,ITEMS=4,VEC=4,GRID=0,UNROLL=1",
};
#define CS_N_REDUCE_PATHS ((int)(sizeof cs_reduce_paths / sizeof cs_reduce_paths[0]))

/* tcgemm's PATH 90 TF32 kernels that read an op-T operand as stored (docs/notes/tcgemm.md 19): a
 * cover of values may take OPA / OPB 1 from the 16-bit rows only. B's K-major tile into the
 * register fragments (OPB 1) with the TMA-store epilogue and A multicast; the D = A B form (OPA 1)
 * with one m64n256, two m64n128 per warpgroup under A's multicast, split-K on one warpgroup of
 * wgmma N 64, and a fused epilogue through its pair stores. */
#define CS_TF32_OPT "TYPE=2,PATH=90,BK=32,STAGES=4,CM=1,WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,LOADW=16,"
static const char *const cs_tcgemm_paths[] = {
    CS_TF32_OPT "BM=256,BN=128,WG=2,CN=2,SPLITK=1,VEC=8,OPB=1",
    CS_TF32_OPT "BM=128,BN=256,WG=2,CN=1,SPLITK=1,VEC=2,OPB=1,OPA=1",
    CS_TF32_OPT "BM=256,BN=128,WG=2,CN=2,SPLITK=1,VEC=2,OPB=1,OPA=1",
    CS_TF32_OPT "BM=128,BN=64,WG=1,CN=1,SPLITK=4,VEC=2,OPB=1,OPA=1",
    CS_TF32_OPT "BM=128,BN=128,WG=2,CN=1,SPLITK=1,VEC=2,OPB=1,OPA=1,EPI=10",
};
#define CS_N_TCGEMM_PATHS ((int)(sizeof cs_tcgemm_paths / sizeof cs_tcgemm_paths[0]))

/* The configurations the test pins for fam (must be valid where their target architecture is
 * the sample's); their count. */
static int cs_pinned(const tpl_family *fam, const char *const **texts)
{
    *texts = cs_reduce_paths;
    if (strcmp(fam->name, "sum") == 0 || strcmp(fam->name, "dot") == 0)
        return CS_N_REDUCE_PATHS;
    *texts = cs_tcgemm_paths;
    if (strcmp(fam->name, "tcgemm") == 0)
        return CS_N_TCGEMM_PATHS;
    return 0;
}

/* The seed of the cover ($AUTOTUNE_SAMPLE_SEED, default 1), printed. */
static unsigned long long cs_seed(void)
{
    const char *s = getenv("AUTOTUNE_SAMPLE_SEED");
    return s && *s ? strtoull(s, NULL, 10) : 1;
}

/* A nominal device of arch (the datacenter part: A100, H100), so that a
 * family whose configurations depend on the architecture is sampled from
 * the configurations valid there; 0 if arch is not in the table. */
static int cs_device(const char *arch, at_device_info *dev)
{
    static const struct {
        const char *arch, *name;
        int major, minor, sms, smem_optin, smem_sm;
    } table[] = {
        {"sm_80", "nominal A100", 8, 0, 108, 163 * 1024, 164 * 1024},
        {"sm_90", "nominal H100", 9, 0, 132, 227 * 1024, 228 * 1024},
    };
    memset(dev, 0, sizeof *dev);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].arch, arch) != 0)
            continue;
        snprintf(dev->name, sizeof dev->name, "%s", table[i].name);
        snprintf(dev->arch, sizeof dev->arch, "%s", arch);
        dev->cc_major = table[i].major;
        dev->cc_minor = table[i].minor;
        dev->sm_count = table[i].sms;
        dev->smem_per_block_optin = table[i].smem_optin;
        dev->smem_per_sm = table[i].smem_sm;
        dev->regs_per_block = 65536;
        dev->regs_per_sm = 65536;
        dev->max_threads_per_block = 1024;
        dev->max_threads_per_sm = 2048;
        return 1;
    }
    return 0;
}

/* The best configuration of one recording in tests/data/. */
typedef struct cs_winner {
    const tpl_family *fam;
    char text[TPL_CONFIG_LEN];
    char file[256];
} cs_winner;

static int cs_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lowest-time configuration of one "config<TAB>ms..." file into w, its
 * family the first shipped one that parses it; 0, or -1 (test failed). */
static int cs_read_winner(const char *path, cs_winner *w)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        th_fail(__FILE__, __LINE__, "cannot read %s", path);
        return -1;
    }
    char line[1024];
    double best = INFINITY;
    w->text[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        double ms = strtod(tab + 1, NULL);
        if (isfinite(ms) && ms > 0 && ms < best && strlen(line) < sizeof w->text) {
            best = ms;
            snprintf(w->text, sizeof w->text, "%s", line);
        }
    }
    fclose(f);
    w->fam = NULL;
    for (int i = 0; w->text[0] && i < tpl_family_count() && !w->fam; i++) {
        const tpl_family *fam = tpl_family_at(i);
        int cfg[TPL_MAX_PARAMS];
        char err[256];
        if (!fam->hidden && tpl_config_parse(fam, w->text, cfg, err, sizeof err) == AT_OK)
            w->fam = fam;
    }
    if (!w->fam) {
        th_fail(__FILE__, __LINE__, "%s: best configuration \"%s\" belongs to no family", path,
                w->text);
        return -1;
    }
    return 0;
}

/* The winners of every .tsv recording in tests/data, in name order; count, -1 on failure. */
static int cs_load_winners(cs_winner *w, int max)
{
    DIR *dir = opendir("tests/data");
    if (!dir) {
        th_fail(__FILE__, __LINE__, "cannot open tests/data (run from the repository root)");
        return -1;
    }
    char *names[CS_MAX_WINNERS];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".tsv") == 0 && n < max)
            names[n++] = strdup(e->d_name);
    }
    closedir(dir);
    qsort(names, (size_t)n, sizeof *names, cs_name_cmp);
    int rc = n;
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "tests/data/%s", names[i] ? names[i] : "");
        if (rc >= 0 && names[i]) {
            snprintf(w[i].file, sizeof w[i].file, "%s", names[i]);
            if (cs_read_winner(path, &w[i]) != 0)
                rc = -1;
        }
        free(names[i]);
    }
    return rc;
}

/* The extra configurations of fam: its stored winners, then the pinned ones. */
static int cs_extras(const tpl_family *fam, const cs_winner *w, int nw, const char **extra)
{
    int n = 0;
    for (int i = 0; i < nw; i++)
        if (w[i].fam == fam && n < CS_MAX_EXTRA)
            extra[n++] = w[i].text;
    const char *const *pinned;
    int np = cs_pinned(fam, &pinned);
    for (int i = 0; i < np && n < CS_MAX_EXTRA; i++)
        extra[n++] = pinned[i];
    return n;
}

/* The sample of fam on dev; NULL (test failed) on failure. */
static tpl_sample *cs_sample(const tpl_family *fam, const at_device_info *dev,
                             unsigned long long seed, const char **extra, int n_extra, int *n)
{
    tpl_sample *s = NULL;
    char err[512];
    *n = tpl_sample_configs(fam, dev, seed, extra, n_extra, &s, err, sizeof err);
    if (*n < 0) {
        th_fail(__FILE__, __LINE__, "tpl_sample_configs(%s, %s): %s", fam->name, dev->arch, err);
        return NULL;
    }
    return s;
}

/* ---------------- the coverage property, checked independently ---------------- */

/* Which values of each parameter some valid configuration on dev takes,
 * by a plain scan of the raw space (its own counter, not tpl's); the valid
 * raw indices in scan order in *idx (caller frees). Count, -1 if no memory. */
static long long cs_attainable(const tpl_family *fam, const at_device_info *dev,
                               unsigned char att[TPL_MAX_PARAMS][TPL_MAX_VALUES], long long **idx)
{
    int pos[TPL_MAX_PARAMS] = {0}, cfg[TPL_MAX_PARAMS];
    long long raw = 1, n = 0, cap = 1024;
    for (int p = 0; p < fam->n_params; p++)
        raw *= fam->params[p].n_values;
    memset(att, 0, TPL_MAX_PARAMS * TPL_MAX_VALUES);
    *idx = malloc((size_t)cap * sizeof **idx);
    if (!*idx)
        return -1;
    for (int p = 0; p < fam->n_params; p++)
        cfg[p] = fam->params[p].values[0];
    for (long long i = 0; i < raw; i++) {
        if (fam->valid(cfg, dev, NULL, 0)) {
            for (int p = 0; p < fam->n_params; p++)
                att[p][pos[p]] = 1;
            if (n == cap) {
                long long *q = realloc(*idx, (size_t)(2 * cap) * sizeof *q);
                if (!q)
                    return -1;
                *idx = q;
                cap *= 2;
            }
            (*idx)[n++] = i;
        }
        /* the next raw index: the last parameter counts fastest */
        for (int p = fam->n_params - 1; p >= 0; p--) {
            int wrap = ++pos[p] == fam->params[p].n_values;
            pos[p] = wrap ? 0 : pos[p];
            cfg[p] = fam->params[p].values[pos[p]];
            if (!wrap)
                break;
        }
    }
    return n;
}

/* The same marks from a list of valid raw indices (tpl's enumeration, once
 * it has been checked against the plain scan on another architecture). */
static void cs_attainable_of(const tpl_family *fam, const long long *idx, long long n,
                             unsigned char att[TPL_MAX_PARAMS][TPL_MAX_VALUES])
{
    int cfg[TPL_MAX_PARAMS];
    memset(att, 0, TPL_MAX_PARAMS * TPL_MAX_VALUES);
    for (long long i = 0; i < n; i++) {
        tpl_config_from_index(fam, idx[i], cfg);
        for (int p = 0; p < fam->n_params; p++)
            for (int v = 0; v < fam->params[p].n_values; v++)
                if (fam->params[p].values[v] == cfg[p])
                    att[p][v] = 1;
    }
}

/* Index of cfg in the sample, -1 if absent. */
static int cs_find(const tpl_family *fam, const tpl_sample *s, int n, const int *cfg)
{
    for (int i = 0; i < n; i++)
        if (memcmp(s[i].cfg, cfg, (size_t)fam->n_params * sizeof *cfg) == 0)
            return i;
    return -1;
}

/* 0 if the sample holds the default, every baseline, every extra valid on
 * dev (and no other), only valid configurations besides the default and
 * the baselines, nothing twice and every attainable value; else 1 with the
 * first defect in msg. */
static int cs_check_sample(const tpl_family *fam, const at_device_info *dev, const tpl_sample *s,
                           int n, unsigned char att[TPL_MAX_PARAMS][TPL_MAX_VALUES],
                           const char **extra, int n_extra, char *msg, size_t len)
{
    int cfg[TPL_MAX_PARAMS], fixed[1 + 64];
    int n_fixed = 0;
    char err[256], why[256];
    for (int b = -1; b < fam->n_baselines + n_extra; b++) {
        const char *text = b < 0 ? fam->default_config
                         : b < fam->n_baselines ? fam->baselines[b].config
                         : extra[b - fam->n_baselines];
        if (tpl_config_parse(fam, text, cfg, err, sizeof err) != AT_OK) {
            snprintf(msg, len, "%s: \"%s\" does not parse: %s", fam->name, text, err);
            return 1;
        }
        int at = cs_find(fam, s, n, cfg), also_fixed = 0;
        int wanted = b < 0 || !fam->valid || fam->valid(cfg, dev, NULL, 0);
        for (int k = 0; k < n_fixed; k++)
            also_fixed |= at >= 0 && fixed[k] == at;    /* an extra equal to a baseline */
        if (wanted != (at >= 0) && !also_fixed) {
            snprintf(msg, len, "%s on %s: %s \"%s\" %s the sample", fam->name, dev->arch,
                     b < 0 ? "the default" : b < fam->n_baselines ? "baseline" : "extra", text,
                     wanted ? "missing from" : "(not valid here) in");
            return 1;
        }
        if (b < fam->n_baselines && n_fixed < 1 + 64)
            fixed[n_fixed++] = at;
    }
    for (int i = 0; i < n; i++) {
        int is_fixed = 0;
        for (int k = 0; k < n_fixed; k++)
            is_fixed |= fixed[k] == i;
        if (!is_fixed && !fam->valid(s[i].cfg, dev, why, sizeof why)) {
            tpl_config_format(fam, s[i].cfg, err, sizeof err);
            snprintf(msg, len, "%s on %s: sampled %s is not valid: %s", fam->name, dev->arch, err,
                     why);
            return 1;
        }
        if (cs_find(fam, s, i, s[i].cfg) >= 0) {
            snprintf(msg, len, "%s: sample item %d appears twice", fam->name, i);
            return 1;
        }
    }
    for (int p = 0; p < fam->n_params; p++) {
        for (int v = 0; v < fam->params[p].n_values; v++) {
            int seen = 0;
            for (int i = 0; i < n && !seen; i++)
                seen = s[i].cfg[p] == fam->params[p].values[v];
            if (att[p][v] && !seen) {
                snprintf(msg, len, "%s on %s: no sampled configuration has %s=%d", fam->name,
                         dev->arch, fam->params[p].name, fam->params[p].values[v]);
                return 1;
            }
        }
    }
    return 0;
}

TEST(sample_covers_every_value_default_baselines_winners)
{
    cs_winner win[CS_MAX_WINNERS];
    int nw = cs_load_winners(win, CS_MAX_WINNERS);
    CHECK(nw >= 1);
    unsigned long long seed = cs_seed();
    int families = 0, damaged_caught = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        if (fam->hidden)
            continue;
        families++;
        const char *extra[CS_MAX_EXTRA];
        int n_extra = cs_extras(fam, win, nw, extra);
        for (int a = 0; a < CS_N_ARCHES; a++) {
            at_device_info dev;
            CHECK(cs_device(cs_arches[a], &dev));
            unsigned char att[TPL_MAX_PARAMS][TPL_MAX_VALUES];
            long long *ref = NULL, *got = NULL;
            long long n_got = tpl_valid_configs_cached(fam, &dev, &got), n_ref = n_got;
            if (a == CS_N_ARCHES - 1 &&
                (!fam->valid_prefix || tpl_space_size(fam) <= CS_SCAN_MAX)) {
                /* tpl's enumerator agrees with the plain scan (one architecture:
                 * the scan is single-threaded; a larger space walked with
                 * valid_prefix, matmul's 1.2e9, is compared with its plain scan
                 * by tests/test_enum.c) */
                n_ref = cs_attainable(fam, &dev, att, &ref);
                int same = n_ref > 0 && n_got == n_ref &&
                           memcmp(ref, got, (size_t)n_ref * sizeof *ref) == 0;
                CHECK_MSG(same, "%s on %s: tpl_valid_configs %lld, plain scan %lld", fam->name,
                          dev.arch, n_got, n_ref);
            } else {
                CHECK(n_got > 0);
                cs_attainable_of(fam, got, n_got, att);
            }
            free(ref);
            free(got);
            /* values no valid configuration takes cannot be sampled: named here */
            for (int p = 0; p < fam->n_params; p++)
                for (int v = 0; v < fam->params[p].n_values; v++)
                    if (!att[p][v])
                        printf("    %s %s: %s=%d is in no valid configuration\n", fam->name,
                               dev.arch, fam->params[p].name, fam->params[p].values[v]);
            for (unsigned long long sd = seed; sd < seed + 2; sd++) {
                int n = 0, n2 = 0;
                char msg[1024];
                tpl_sample *s = cs_sample(fam, &dev, sd, extra, n_extra, &n);
                if (!s)
                    return;
                int bad = cs_check_sample(fam, &dev, s, n, att, extra, n_extra, msg, sizeof msg);
                if (!bad && sd == seed) {
                    /* same inputs, same sample */
                    tpl_sample *s2 = cs_sample(fam, &dev, sd, extra, n_extra, &n2);
                    if (!s2) {
                        free(s);
                        return;
                    }
                    bad = n2 != n || memcmp(s, s2, (size_t)n * sizeof *s) != 0;
                    snprintf(msg, sizeof msg, "%s on %s: seed %llu gave two samples", fam->name,
                             dev.arch, sd);
                    free(s2);
                    printf("    %s %s: %lld valid, sample of %d (seed %llu)\n", fam->name,
                           dev.arch, n_ref, n, sd);
                }
                /* the check can fail: without its cover items, or without the
                 * default, the sample is reported incomplete */
                if (!bad && sd == seed) {
                    tpl_sample *cut = malloc((size_t)n * sizeof *cut);
                    int m = 0, covers = 0;
                    for (int i = 0; cut && i < n; i++) {
                        if (strcmp(s[i].origin, "cover") != 0)
                            cut[m++] = s[i];
                        covers += strcmp(s[i].origin, "cover") == 0;
                    }
                    char ignored[1024];
                    if (cut && covers > 0)
                        damaged_caught += cs_check_sample(fam, &dev, cut, m, att, extra, n_extra,
                                                          ignored, sizeof ignored);
                    if (cut && n > 1)
                        bad = !cs_check_sample(fam, &dev, s + 1, n - 1, att, extra, n_extra,
                                               ignored, sizeof ignored);
                    snprintf(msg, sizeof msg, "%s: a sample without %s passed the check",
                             fam->name, s[0].origin);
                    free(cut);
                }
                free(s);
                CHECK_MSG(!bad, "%s", msg);
            }
        }
    }
    CHECK(families >= 4);
    CHECK_MSG(damaged_caught > 0, "no sample without its cover items was found incomplete");
}

/* ---------------- compiling the sample ---------------- */

/* One NVRTC compile of a sampled configuration. */
typedef struct cs_job {
    const tpl_family *fam;
    int cfg[TPL_MAX_PARAMS];
    const char *arch, *origin;
    char key[96];
    int same_as;                     /* -1, or an earlier job with the same NVRTC input */
    at_status status;
    size_t size;
    int elf;                         /* the cubin starts with the ELF magic */
    double secs;                     /* compile time */
    char *log;
} cs_job;

/* Compiles job i unless an earlier one has its NVRTC input (NVRTC is thread-safe). */
static void cs_compile(void *ctx, int i)
{
    cs_job *j = (cs_job *)ctx + i;
    if (j->same_as >= 0)
        return;
    void *cubin = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    j->status = tpl_compile(j->fam, j->cfg, j->arch, &cubin, &j->size, &j->log);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    j->secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    j->elf = cubin && j->size >= 4 && memcmp(cubin, "\177ELF", 4) == 0;
    free(cubin);
}

/* Appends the sample of fam on arch to the job list; its size, -1 (test
 * failed) on failure. Every pinned configuration must be in it. */
static int cs_add_jobs(const tpl_family *fam, const char *arch, const cs_winner *win, int nw,
                       cs_job *jobs, int n_jobs, int max)
{
    at_device_info dev;
    const char *extra[CS_MAX_EXTRA];
    int n_extra = cs_extras(fam, win, nw, extra), n = 0;
    if (!cs_device(arch, &dev)) {
        th_fail(__FILE__, __LINE__, "no nominal device for %s", arch);
        return -1;
    }
    tpl_sample *s = cs_sample(fam, &dev, cs_seed(), extra, n_extra, &n);
    if (!s)
        return -1;
    const char *const *pinned;
    int n_pinned = cs_pinned(fam, &pinned);
    for (int i = 0; i < n_pinned; i++) {
        int cfg[TPL_MAX_PARAMS];
        char err[256];
        if (tpl_config_parse(fam, pinned[i], cfg, err, sizeof err) != AT_OK) {
            th_fail(__FILE__, __LINE__, "%s: pinned %s does not parse: %s", fam->name,
                    pinned[i], err);
            free(s);
            return -1;
        }
        /* a configuration with no target on arch (tcgemm PATH 90 on sm_80) is not sampled there */
        if (fam->target_arch && !fam->target_arch(cfg, arch))
            continue;
        if (cs_find(fam, s, n, cfg) < 0) {
            th_fail(__FILE__, __LINE__, "%s: pinned %s is not in the %s sample (not valid?)",
                    fam->name, pinned[i], arch);
            free(s);
            return -1;
        }
    }
    int counts[4] = {0, 0, 0, 0}, compiles = 0;
    for (int i = 0; i < n && n_jobs + i < max; i++) {
        cs_job *j = &jobs[n_jobs + i];
        memset(j, 0, sizeof *j);
        j->fam = fam;
        memcpy(j->cfg, s[i].cfg, sizeof j->cfg);
        j->arch = arch;
        j->origin = s[i].origin;
        tpl_binary_key(fam, j->cfg, arch, j->key, sizeof j->key);
        j->same_as = -1;
        for (int k = 0; k < n_jobs + i && j->same_as < 0; k++)
            if (strcmp(jobs[k].key, j->key) == 0)
                j->same_as = k;
        compiles += j->same_as < 0;
        counts[strcmp(j->origin, "cover") == 0 ? 3 : strcmp(j->origin, "extra") == 0 ? 2
               : strcmp(j->origin, "default") == 0 ? 0 : 1]++;
    }
    printf("    %s %s: %d configurations (default %d, baselines %d, winners and pinned %d, "
           "cover %d), %d compiles\n", fam->name, arch, n, counts[0], counts[1], counts[2],
           counts[3], compiles);
    free(s);
    return n_jobs + n <= max ? n : -1;
}

TEST(nvrtc_compiles_stratified_sample_sm80_sm90)
{
    cs_winner win[CS_MAX_WINNERS];
    int nw = cs_load_winners(win, CS_MAX_WINNERS);
    CHECK(nw >= 1);
    int max = 4096, n = 0;
    cs_job *jobs = calloc((size_t)max, sizeof *jobs);
    CHECK(jobs);
    printf("    sample seed %llu ($AUTOTUNE_SAMPLE_SEED), %d stored winners\n", cs_seed(), nw);
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        for (int a = 0; a < CS_N_ARCHES && !fam->hidden; a++) {
            int added = cs_add_jobs(fam, cs_arches[a], win, nw, jobs, n, max);
            if (added < 0) {
                free(jobs);
                CHECK_MSG(0, "%s %s: no sample", fam->name, cs_arches[a]);
            }
            n += added;
        }
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = th_parallel(n, cores < 1 ? 1 : (int)cores, cs_compile, jobs);
    printf("    %d configurations compiled on %d threads; compile seconds:", n, threads);
    for (int f = 0; f < tpl_family_count(); f++) {
        double secs = 0;
        for (int i = 0; i < n; i++)
            secs += jobs[i].fam == tpl_family_at(f) ? jobs[i].secs : 0;
        if (secs > 0)
            printf(" %s %.1f", tpl_family_at(f)->name, secs);
    }
    printf("\n");
    int failed = 0;
    for (int i = 0; i < n; i++) {
        const cs_job *j = jobs[i].same_as >= 0 ? &jobs[jobs[i].same_as] : &jobs[i];
        if (j->status == AT_OK && j->size > 0 && j->elf)
            continue;
        char text[TPL_CONFIG_LEN];
        tpl_config_format(jobs[i].fam, jobs[i].cfg, text, sizeof text);
        th_fail(__FILE__, __LINE__, "%s %s (%s) %s: %s%s", jobs[i].fam->name, jobs[i].arch,
                jobs[i].origin, text, at_status_string(j->status),
                j->status == AT_OK ? ", not an ELF cubin" : "");
        if (j->log && failed++ < 3)
            printf("%s\n", j->log);
    }
    for (int i = 0; i < n; i++)
        free(jobs[i].log);
    free(jobs);
}

/* `autotune check --sample` compiles the same sample (seed 1, generic device). */
TEST(cli_check_sample_compiles_the_sample)
{
    const tpl_family *fam = tpl_find("test_oob");
    CHECK(fam != NULL);
    tpl_sample *s = NULL;
    char err[256], cmd[4600], want[128], *out = NULL;
    int n = tpl_sample_configs(fam, NULL, 1, NULL, 0, &s, err, sizeof err);
    free(s);
    CHECK_MSG(n > 0, "%s", err);
    long long raw = tpl_space_size(fam);
    snprintf(cmd, sizeof cmd, "'%s/autotune-test' check --arch sm_80 --kernel test_oob --sample",
             th_build_dir());
    int rc = th_run(cmd, &out);
    snprintf(want, sizeof want, "test_oob: %lld raw, %d sampled, %d compiled, 0 failed", raw, n, n);
    CHECK_MSG(rc == 0 && out && strstr(out, want), "exit %d, wanted \"%s\": %s", rc, want,
              out ? out : "");
    free(out);
}
