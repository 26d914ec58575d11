/* test_shard.c: the test runner's AUTOTUNE_TEST_SHARD=i/n: the n parts of a selection are
 * disjoint and together are the whole selection; a malformed value is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

/* The names the runner printed as started ("cpu  NAME ...") in out, one per line, into
 * names (at most max, each < 128 characters); the count. */
static int sh_started(const char *out, char names[][128], int max)
{
    int n = 0;
    for (const char *p = out; p && *p && n < max;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[128];
        if (len < sizeof name + 8 && sscanf(p, "cpu  %127s ...", name) == 1 &&
            strncmp(p + len - 3, "...", 3) == 0)
            snprintf(names[n++], 128, "%s", name);
        p = end ? end + 1 : NULL;
    }
    return n;
}

TEST(harness_shards_partition_the_selection)
{
    /* the layers tests: several CPU tests that do not start this one again */
    char cmd[4500], *out = NULL, all[64][128], part[64][128];
    snprintf(cmd, sizeof cmd, "AUTOTUNE_TEST_TIER=cpu %s/run_tests layers_ 2>&1", th_build_dir());
    CHECK_EQ(th_run(cmd, &out), 0);
    int n_all = sh_started(out, all, 64);
    free(out);
    CHECK_MSG(n_all >= 3, "%d tests in the whole selection", n_all);
    int seen[64] = {0}, total = 0;
    for (int i = 1; i <= 3 && !th_failed(); i++) {
        snprintf(cmd, sizeof cmd, "AUTOTUNE_TEST_TIER=cpu AUTOTUNE_TEST_SHARD=%d/3 %s/run_tests "
                 "layers_ 2>&1", i, th_build_dir());
        out = NULL;
        CHECK_EQ(th_run(cmd, &out), 0);
        int n = sh_started(out, part, 64);
        free(out);
        CHECK_MSG(n >= 1, "shard %d/3 ran no test", i);
        for (int t = 0; t < n; t++) {
            int found = -1;
            for (int a = 0; a < n_all; a++)
                if (strcmp(part[t], all[a]) == 0)
                    found = a;
            CHECK_MSG(found >= 0 && !seen[found], "shard %d/3: %s not in the selection or run "
                      "twice", i, part[t]);
            if (found >= 0)
                seen[found] = 1;
        }
        total += n;
    }
    CHECK_EQ(total, n_all);
    /* malformed: refused with exit status 2, no test run */
    static const char *const bad[] = {"0/2", "3/2", "1/0", "2", "1/2x"};
    for (int b = 0; b < 5; b++) {
        snprintf(cmd, sizeof cmd, "AUTOTUNE_TEST_SHARD=%s %s/run_tests layers_ 2>&1", bad[b],
                 th_build_dir());
        out = NULL;
        int rc = th_run(cmd, &out);
        CHECK_MSG(rc == 2 && out && strstr(out, "want i/n") && !strstr(out, "cpu  "),
                  "AUTOTUNE_TEST_SHARD=%s: exit %d: %s", bad[b], rc, out ? out : "");
        free(out);
    }
}
