/* test_spec_count.c: the run's account of speculative compiles adds up: every one made is
 * used while compiling, used later from the database, never used or cancelled unstarted,
 * and the later uses are among the cubins the problems' summaries say they reused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

TEST(tuner_speculative_compiles_are_accounted_for)
{
    char cmd[8192], dbpath[4200], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/spec.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES=1 "
             "AUTOTUNE_FAKE='delay=20' %s/autotune-test --device 0 --kernel test_wide --size "
             "1000003 --strategy surrogate --seed 3 --db %s --quiet --jobs 2",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    const char *line = out ? strstr(out, "speculative compiles: ") : NULL;
    CHECK_MSG(line != NULL, "%s", out ? out : "");
    if (!line) {
        free(out);
        return;
    }
    long long made = -1, used = -1, during = -1, later = -1, never = -1, dropped = 0;
    int got = sscanf(line, "speculative compiles: %lld made, %lld used by the search (%lld while "
                     "compiling, %lld later from the database), %lld never used",
                     &made, &used, &during, &later, &never);
    CHECK_MSG(got == 5, "%.300s", line);
    const char *cancel = strstr(line, "; ");
    if (cancel && cancel < strchr(line, '\n'))
        CHECK(sscanf(cancel, "; %lld cancelled", &dropped) == 1);
    /* the surrogate hints after its first result: a search of 96 configurations speculates */
    CHECK_MSG(made > 0, "%.300s", line);
    CHECK_MSG(used == during + later, "%.300s", line);
    CHECK_MSG(during >= 0 && later >= 0 && never >= 0 && dropped >= 0, "%.300s", line);
    CHECK_MSG(made == during + later + never + dropped, "%.300s", line);
    /* a later use is an item that found its cubin stored: counted among the reused */
    long long reused = 0;
    for (const char *p = out; (p = strstr(p, " cubins reused")) != NULL; p++) {
        const char *q = p;
        while (q > out && q[-1] != ' ')
            q--;
        reused += atoll(q);
    }
    CHECK_MSG(later <= reused, "%lld later uses, %lld cubins reused: %s", later, reused, out);
    free(out);
}
