/* test_install.c: `make install` into a temporary prefix, a client built
 * with pkg-config against it (CPU tier), and that client run twice on a GPU:
 * the second run loads every kernel from the database (GPU tier). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

static char prefix[4300];

/* Installs once per test run and builds the client; 1 on success. */
static int install_and_build(void)
{
    static int done = -1;
    if (done >= 0)
        return done;
    snprintf(prefix, sizeof prefix, "%s/prefix", th_tmpdir());
    char cmd[32768], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "make -s install BUILD=%s PREFIX='%s' >/dev/null && "
             "PKG_CONFIG_PATH='%s/lib/pkgconfig' cc -std=c11 -Wall -Wextra -Werror "
             "-o '%s/client' tests/client/client.c "
             "$(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags --libs autotune) -ldl -lm",
             th_build_dir(), prefix, prefix, prefix, prefix);
    int rc = th_run(cmd, &out);
    if (rc != 0)
        fprintf(stderr, "    install/build failed (%d): %s\n", rc, out ? out : "");
    free(out);
    done = rc == 0;
    return done;
}

TEST(install_layout_and_pkg_config)
{
    CHECK(install_and_build());
    const char *files[] = {"bin/autotune", "lib/libautotune.a", "lib/libautotune.so",
                           "lib/libautotune.so.0", "include/autotune.h",
                           "lib/pkgconfig/autotune.pc", "client"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", prefix, files[i]);
        FILE *f = fopen(path, "rb");
        CHECK_MSG(f != NULL, "%s not installed", path);
        fclose(f);
    }
    /* the shared library exports the public API and nothing else */
    char cmd[4600], *out = NULL;
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s/lib/libautotune.so' | awk '{print $3}'",
             prefix);
    CHECK_EQ(th_run(cmd, &out), 0);
    CHECK(out && strstr(out, "at_sgemm") && strstr(out, "at_sjacobi") &&
          strstr(out, "at_status_string"));
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
        CHECK_MSG(strncmp(line, "at_", 3) == 0, "libautotune.so exports %s", line);
    free(out);
}

TEST(installed_client_without_gpu_reports_status)
{
    CHECK(install_and_build());
    char cmd[4600], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/client' '%s/none.db'", prefix, th_tmpdir());
    int rc = th_run(cmd, &out);
    if (strstr(out ? out : "", "CLIENT OK")) {
        free(out);
        return; /* a GPU is present: the GPU tier checks the results */
    }
    CHECK_EQ(rc, 1);
    CHECK_MSG(out && (strstr(out, "no CUDA driver") || strstr(out, "no such CUDA device")),
              "client said: %s", out ? out : "");
    free(out);
}

GPU_TEST(installed_client_second_run_loads_everything)
{
    CHECK(install_and_build());
    char db_path[4400], cmd[9000], *out = NULL;
    snprintf(db_path, sizeof db_path, "%s/client.db", th_tmpdir());
    snprintf(cmd, sizeof cmd, "'%s/client' '%s'", prefix, db_path);
    CHECK_EQ(th_run(cmd, &out), 0);
    CHECK_MSG(strstr(out, "CLIENT OK") && !strstr(out, "compiled=0 "), "first run: %s", out);
    printf("%s", out);
    free(out);
    CHECK_EQ(th_run(cmd, &out), 0);
    printf("%s", out);
    CHECK_MSG(strstr(out, "CLIENT OK") && strstr(out, "compiled=0 loaded=4"),
              "second run: %s", out);
    free(out);
}
