/* bench_keys.c: compiles per space, no GPU needed: for each default tuning problem of each
 * family, its valid and applicable configurations on an H200, the distinct compile keys
 * (tpl_binary_key: what the tuner compiles, run-time parameters sharing one cubin) and the
 * distinct keys were every parameter but the host-only ones compile-time (before run-time
 * parameters). Usage: bench_keys [--arch sm_90] [FAMILY...]; docs/compile.md has the results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

/* Counts distinct strings of keys[0..n) (sorted in place). */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static long long distinct(char **keys, long long n)
{
    qsort(keys, (size_t)n, sizeof *keys, cmp_str);
    long long d = 0;
    for (long long i = 0; i < n; i++)
        d += i == 0 || strcmp(keys[i], keys[i - 1]) != 0;
    return d;
}

/* The key a configuration had with every parameter but the host-only ones compile-time. */
static void all_compile_time_key(const tpl_family *fam, const int *cfg, char *out, size_t len)
{
    size_t used = (size_t)snprintf(out, len, "%s", fam->name);
    for (int i = 0; i < fam->n_params && used < len; i++)
        if (!fam->params[i].host_only)
            used += (size_t)snprintf(out + used, len - used, ",%d", cfg[i]);
}

static void family_keys(const tpl_family *fam, const at_device_info *dev, long long totals[3])
{
    long long *valid = NULL;
    long long nv = tpl_valid_configs(fam, dev, &valid);
    if (nv <= 0)
        return;
    char **now = malloc((size_t)nv * sizeof *now), **before = malloc((size_t)nv * sizeof *before);
    int n_problems = fam->n_default_tuning_problems ? fam->n_default_tuning_problems
                                                    : fam->n_tuning_problems;
    for (int p = 0; p < n_problems && now && before; p++) {
        const tpl_problem *prob = &fam->tuning_problems[p];
        long long n = 0;
        for (long long v = 0; v < nv; v++) {
            int cfg[TPL_MAX_PARAMS];
            tpl_config_from_index(fam, valid[v], cfg);
            if (!fam->applicable(cfg, prob))
                continue;
            char key[160], old[512];
            tpl_binary_key(fam, cfg, dev->arch, key, sizeof key);
            all_compile_time_key(fam, cfg, old, sizeof old);
            now[n] = strdup(key);
            before[n] = strdup(old);
            n++;
        }
        long long k_now = distinct(now, n), k_before = distinct(before, n);
        char text[128];
        tpl_problem_format(prob, text, sizeof text);
        printf("%-8s %-22s %6lld configurations %6lld compile keys before %6lld now (%.2fx)\n",
               fam->name, text, n, k_before, k_now, k_now ? (double)k_before / k_now : 0.0);
        totals[0] += n;
        totals[1] += k_before;
        totals[2] += k_now;
        for (long long i = 0; i < n; i++) {
            free(now[i]);
            free(before[i]);
        }
    }
    free(now);
    free(before);
    free(valid);
}

int main(int argc, char **argv)
{
    const char *arch = "sm_90";
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--arch") == 0) {
        arch = argv[2];
        first = 3;
    }
    at_device_info dev;                  /* an H200 */
    memset(&dev, 0, sizeof dev);
    dev.cc_major = arch[3] - '0';
    dev.cc_minor = arch[4] - '0';
    snprintf(dev.arch, sizeof dev.arch, "%s", arch);
    dev.sm_count = 132;
    dev.smem_per_block_optin = 227 << 10;
    dev.smem_per_sm = 228 << 10;
    dev.regs_per_block = dev.regs_per_sm = 65536;
    dev.max_threads_per_block = 1024;
    dev.max_threads_per_sm = 2048;
    long long totals[3] = {0, 0, 0};
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        int named = first >= argc;
        for (int a = first; a < argc; a++)
            named |= strcmp(argv[a], fam->name) == 0;
        if (named && !fam->hidden)
            family_keys(fam, &dev, totals);
    }
    printf("all      %-22s %6lld configurations %6lld compile keys before %6lld now (%.2fx)\n", "",
           totals[0], totals[1], totals[2], totals[2] ? (double)totals[1] / totals[2] : 0.0);
    return 0;
}
