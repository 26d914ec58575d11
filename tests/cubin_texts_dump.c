/* cubin_texts_dump.c: compiles the default, the baselines and every 97th valid configuration
 * (CUBIN_TEXTS_EVERY=N in the environment: every Nth) of some families, named by configuration
 * text, for tests/cubin_same_texts.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

#define CT_EVERY 97             /* every CT_EVERY-th valid configuration of the space (default) */

/* Compiles cfg of fam for arch into DIR/FAM-INDEX.cubin and prints its line; 1 on success. */
static int ct_one(const tpl_family *fam, const int *cfg, const char *arch, const char *dir,
                  int index)
{
    char text[TPL_CONFIG_LEN], path[4096];
    tpl_config_format(fam, cfg, text, sizeof text);
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    at_status s = tpl_compile(fam, cfg, arch, &cubin, &size, &log);
    free(log);
    if (s != AT_OK) {
        fprintf(stderr, "%s %s %s: %s\n", fam->name, arch, text, at_status_string(s));
        return 0;
    }
    snprintf(path, sizeof path, "%s/%s-%03d.cubin", dir, fam->name, index);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(cubin, 1, size, f) == size;
    if (f && fclose(f) != 0)
        ok = 0;
    free(cubin);
    printf("%s-%03d.cubin %zu %s\n", fam->name, index, size, text);
    return ok;
}

/* 1 if text holds every '&'-separated part of skip ("BN=256&SCALE=1"; an empty skip: none). */
static int ct_skipped(const char *text, const char *skip)
{
    if (!*skip)
        return 0;
    char part[256];
    for (const char *p = skip; *p;) {
        size_t n = strcspn(p, "&");
        if (n >= sizeof part)
            n = sizeof part - 1;
        memcpy(part, p, n);
        part[n] = '\0';
        if (!strstr(text, part))
            return 0;
        p += n;
        if (*p == '&')
            p++;
    }
    return 1;
}

/* usage: cubin_texts_dump DIR ARCH SKIP FAMILY...: configurations whose text holds SKIP
 * (e.g. "TYPE=1", a kind the older tree lacks; "BN=256&SCALE=1": every part) are left out. */
int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: cubin_texts_dump DIR ARCH SKIP FAMILY...\n");
        return 2;
    }
    const char *dir = argv[1], *arch = argv[2], *skip = argv[3];
    const char *every_text = getenv("CUBIN_TEXTS_EVERY");
    long long every = every_text ? atoll(every_text) : CT_EVERY;
    if (every < 1) {
        fprintf(stderr, "CUBIN_TEXTS_EVERY must be 1 or more\n");
        return 2;
    }
    for (int a = 4; a < argc; a++) {
        const tpl_family *fam = tpl_find(argv[a]);
        if (!fam) {
            fprintf(stderr, "no family %s\n", argv[a]);
            return 1;
        }
        int cfg[TPL_MAX_PARAMS], index = 0;
        char why[256], text[TPL_CONFIG_LEN];
        long long seen = 0, size = tpl_space_size(fam);
        for (long long i = -1 - fam->n_baselines; i < size; i++) {
            const char *given = i == -1 ? fam->default_config
                              : i < -1 ? fam->baselines[-2 - i].config : NULL;
            if (given && tpl_config_parse(fam, given, cfg, why, sizeof why) != AT_OK)
                continue;
            if (!given) {
                tpl_config_from_index(fam, i, cfg);
                if (!fam->valid(cfg, NULL, NULL, 0))
                    continue;
            }
            tpl_config_format(fam, cfg, text, sizeof text);
            if (ct_skipped(text, skip))
                continue;
            if (!given && seen++ % every != 0)
                continue;
            if (!ct_one(fam, cfg, arch, dir, index++))
                return 1;
        }
    }
    return 0;
}
