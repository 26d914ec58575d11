/* cubin_dump.c: compiles a sample of every built-in family's configurations
 * with NVRTC and writes the cubins and a manifest (tests/cubin_same.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

#define CD_SPREAD 5             /* valid configurations per family, evenly spaced */

/* Compiles cfg for arch into DIR/NAME-ARCH-INDEX.cubin and writes its
 * manifest line; 1 on success. */
static int cd_one(const tpl_family *fam, const int *cfg, const char *arch, int index,
                  const char *dir, FILE *manifest)
{
    char text[TPL_CONFIG_LEN], key[128], path[4096];
    tpl_config_format(fam, cfg, text, sizeof text);
    tpl_binary_key(fam, cfg, arch, key, sizeof key);
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    at_status s = tpl_compile(fam, cfg, arch, &cubin, &size, &log);
    free(log);
    if (s != AT_OK) {
        fprintf(stderr, "%s %s %s: %s\n", fam->name, arch, text, at_status_string(s));
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s-%s-%02d.cubin", dir, fam->name, arch, index);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(cubin, 1, size, f) == size;
    if (f && fclose(f) != 0)
        ok = 0;
    free(cubin);
    fprintf(manifest, "%s-%s-%02d.cubin %zu %s %s %s\n", fam->name, arch, index, size, key,
            arch, text);
    return ok;
}

/* The sample of fam: its default, its baselines, then CD_SPREAD valid
 * configurations (generic device) evenly spaced over the valid ones. */
static int cd_sample(const tpl_family *fam, int (*cfgs)[TPL_MAX_PARAMS], int max)
{
    int n = 0;
    char why[256];
    if (tpl_config_parse(fam, fam->default_config, cfgs[n], why, sizeof why) == AT_OK)
        n++;
    for (int b = 0; b < fam->n_baselines && n < max; b++)
        if (tpl_config_parse(fam, fam->baselines[b].config, cfgs[n], why, sizeof why) == AT_OK)
            n++;
    long long size = tpl_space_size(fam), n_valid = 0;
    int cfg[TPL_MAX_PARAMS];
    for (long long i = 0; i < size; i++) {
        tpl_config_from_index(fam, i, cfg);
        n_valid += fam->valid(cfg, NULL, why, sizeof why);
    }
    long long seen = 0;
    int taken = 0;
    for (long long i = 0; i < size && taken < CD_SPREAD && n < max; i++) {
        tpl_config_from_index(fam, i, cfg);
        if (!fam->valid(cfg, NULL, why, sizeof why))
            continue;
        if (seen++ == taken * n_valid / CD_SPREAD + n_valid / (2 * CD_SPREAD)) {
            memcpy(cfgs[n++], cfg, sizeof cfg);
            taken++;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cubin_dump DIR ARCH...\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest", argv[1]);
    FILE *manifest = fopen(path, "w");
    if (!manifest) {
        perror(path);
        return 1;
    }
    int failed = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        int cfgs[32][TPL_MAX_PARAMS];
        int n = cd_sample(fam, cfgs, 32);
        fprintf(manifest, "# %s: source %s, %d configurations\n", fam->name,
                tpl_source_hash(fam), n);
        for (int a = 2; a < argc; a++)
            for (int i = 0; i < n; i++)
                failed += !cd_one(fam, cfgs[i], argv[a], i, argv[1], manifest);
    }
    fclose(manifest);
    return failed ? 1 : 0;
}
