/* test_compile_all.c: NVRTC compiles every valid configuration of every
 * family for sm_80 and sm_90 through `autotune check` (CPU tier; this is the
 * slowest CPU test, set AUTOTUNE_SKIP_COMPILE_ALL=1 to skip it locally). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "tpl.h"

static void check_arch(const char *arch)
{
    if (getenv("AUTOTUNE_SKIP_COMPILE_ALL")) {
        printf("    skipped by AUTOTUNE_SKIP_COMPILE_ALL\n");
        return;
    }
    char cmd[4600], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/autotune' check --arch %s", th_build_dir(), arch);
    int rc = th_run(cmd, &out);
    printf("%s", out ? out : "");
    CHECK_MSG(rc == 0, "autotune check --arch %s exited %d", arch, rc);
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        if (fam->hidden)
            continue;
        char head[64];
        snprintf(head, sizeof head, "%s:", fam->name);
        const char *line = out ? strstr(out, head) : NULL;
        CHECK_MSG(line, "no summary line for %s", fam->name);
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        char copy[512];
        snprintf(copy, sizeof copy, "%.*s", (int)(len < 500 ? len : 500), line);
        CHECK_MSG(strstr(copy, " 0 failed"), "%s", copy);
        long valid = 0, compiled = -1;
        const char *v = strstr(copy, " valid");
        const char *c = strstr(copy, " compiled");
        /* "N valid" and "N compiled": the numbers before the words */
        if (v) {
            const char *p = v;
            while (p > copy && p[-1] >= '0' && p[-1] <= '9')
                p--;
            valid = strtol(p, NULL, 10);
        }
        if (c) {
            const char *p = c;
            while (p > copy && p[-1] >= '0' && p[-1] <= '9')
                p--;
            compiled = strtol(p, NULL, 10);
        }
        CHECK_MSG(valid > 0 && compiled == valid, "%s: %ld valid, %ld compiled", fam->name, valid,
                  compiled);
    }
    free(out);
}

TEST(compile_all_configurations_sm80) { check_arch("sm_80"); }
TEST(compile_all_configurations_sm90) { check_arch("sm_90"); }
