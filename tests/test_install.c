/* test_install.c: `make install` into a temporary prefix, a client built
 * from the installed pkg-config file with cc and with nvcc (CPU tier), and
 * those clients run twice on a GPU: the second run loads every kernel from
 * the database (GPU tier). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"

static char prefix[4300];
static char nvcc[4200];
static int nvcc_built = -1;        /* 1 built, 0 failed, -1 no nvcc */
static char nvcc_log[4096];

/* $CUDA_HOME/bin/nvcc (default /usr/local/cuda) into nvcc; 1 if it runs. */
static int find_nvcc(void)
{
    const char *home = getenv("CUDA_HOME");
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", home && *home ? home : "/usr/local/cuda");
    return access(nvcc, X_OK) == 0;
}

/* Builds tests/client/client.c with nvcc as CUDA C++ from the installed
 * .pc, the flags unchanged; sets nvcc_built and nvcc_log. */
static void build_with_nvcc(void)
{
    if (!find_nvcc()) {
        nvcc_built = -1;
        return;
    }
    char cmd[32768], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "'%s' -x cu -o '%s/client_nvcc' tests/client/client.c "
             "$(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags --libs autotune) -ldl -lm",
             nvcc, prefix, prefix);
    nvcc_built = th_run(cmd, &out) == 0;
    snprintf(nvcc_log, sizeof nvcc_log, "%s", out ? out : "");
    free(out);
}

/* Installs once per test run and builds the client with cc (and with nvcc
 * where present); 1 if the install and the cc build succeeded. The shipped
 * database is left out (SHIPPED_JSON=): building it compiles every shipped
 * configuration, minutes on two cores; test_recorded.c installs a small one and
 * checks share/hopper.json itself. */
static int install_and_build(void)
{
    static int done = -1;
    if (done >= 0)
        return done;
    snprintf(prefix, sizeof prefix, "%s/prefix", th_tmpdir());
    char cmd[32768], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "make -s install BUILD=%s PREFIX='%s' SHIPPED_JSON= >/dev/null && "
             "PKG_CONFIG_PATH='%s/lib/pkgconfig' cc -std=c11 -Wall -Wextra -Werror "
             "-o '%s/client' tests/client/client.c "
             "$(PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags --libs autotune) -ldl -lm",
             th_build_dir(), prefix, prefix, prefix, prefix);
    int rc = th_run(cmd, &out);
    if (rc != 0)
        fprintf(stderr, "    install/build failed (%d): %s\n", rc, out ? out : "");
    free(out);
    done = rc == 0;
    if (done)
        build_with_nvcc();
    return done;
}

/* Runs an installed client without a GPU: it must start and report that
 * there is no driver (or device); with a GPU it must pass. */
static void run_client_without_gpu(const char *name)
{
    char cmd[4600], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/%s' '%s/none.db'", prefix, name, th_tmpdir());
    int rc = th_run(cmd, &out);
    if (strstr(out ? out : "", "CLIENT OK")) {
        free(out);
        return; /* a GPU is present: the GPU tier checks the results */
    }
    CHECK_MSG(rc == 1, "%s exited %d: %s", name, rc, out ? out : "");
    CHECK_MSG(out && (strstr(out, "no CUDA driver") || strstr(out, "no such CUDA device")),
              "%s said: %s", name, out ? out : "");
    free(out);
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
    run_client_without_gpu("client");
}

/* The .pc's flags work unchanged with nvcc (it rejects -Wl,...). */
TEST(installed_client_built_with_nvcc)
{
    CHECK(install_and_build());
    if (nvcc_built < 0) {
        th_skip("no nvcc at %s (set CUDA_HOME): the client was not built with nvcc", nvcc);
        return;
    }
    CHECK_MSG(nvcc_built == 1, "nvcc build from the installed autotune.pc failed:\n%s", nvcc_log);
    run_client_without_gpu("client_nvcc");
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
    if (nvcc_built != 1)
        return;
    /* the nvcc-built client finds the same tuned kernels */
    snprintf(cmd, sizeof cmd, "'%s/client_nvcc' '%s'", prefix, db_path);
    CHECK_EQ(th_run(cmd, &out), 0);
    printf("%s", out);
    CHECK_MSG(strstr(out, "CLIENT OK") && strstr(out, "compiled=0 loaded=4"),
              "nvcc client: %s", out);
    free(out);
}

/* The "config ..." lines of a client's output, in order (malloc'd). */
static char *client_configs(const char *out)
{
    char *lines = calloc(1, strlen(out ? out : "") + 1);
    for (const char *p = out ? strstr(out, "config ") : NULL; lines && p; p = strstr(p + 1, "\nconfig ")) {
        if (*p == '\n')
            p++;
        const char *end = strchr(p, '\n');
        strncat(lines, p, end ? (size_t)(end - p + 1) : strlen(p));
    }
    return lines;
}

/* Issue 18: tune the client's four problems, export with cubins, import
 * into an empty database: the client then runs with zero NVRTC compiles
 * and the same configurations; the same database shipped read-only under
 * an empty user database serves it too and is never written. */
GPU_TEST(installed_client_runs_from_an_imported_database)
{
    CHECK(install_and_build());
    const char *dir = th_tmpdir();
    char cmd[20000], *out = NULL;
    static const char *const tune[][2] = {
        {"matmul", "96x96x96"}, {"sum", "9216"}, {"dot", "9216"}, {"jacobi", "96"},
    };
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd, "'%s/bin/autotune' --device 0 --kernel %s --size %s "
                 "--budget 16e --seed 7 --quiet --db '%s/tuned.db'", prefix, tune[i][0],
                 tune[i][1], dir);
        CHECK_MSG(th_run(cmd, &out) == 0, "%s", out);
        free(out);
    }
    snprintf(cmd, sizeof cmd, "'%s/client' '%s/tuned.db'", prefix, dir);
    CHECK_EQ(th_run(cmd, &out), 0);
    printf("%s", out);
    CHECK_MSG(strstr(out, "compiled=0 loaded=4 exact=4"), "on the tuned database: %s", out);
    char *want = client_configs(out);
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/bin/autotune' export --db '%s/tuned.db' --with-cubins "
             "-o '%s/tuned.json' && '%s/bin/autotune' import '%s/tuned.json' --db '%s/imported.db'",
             prefix, dir, dir, prefix, dir, dir);
    CHECK_MSG(th_run(cmd, &out) == 0 && strstr(out, "0 compiled here"), "%s", out);
    printf("%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/client' '%s/imported.db'", prefix, dir);
    CHECK_EQ(th_run(cmd, &out), 0);
    printf("%s", out);
    char *got = client_configs(out);
    CHECK_MSG(strstr(out, "compiled=0 loaded=4 exact=4") && strcmp(got, want) == 0,
              "on the imported database: %s\nexpected:\n%s", out, want);
    free(got);
    free(out);
    /* shipped read-only under an empty user database */
    char shipped[4400], side[4500];
    snprintf(shipped, sizeof shipped, "%s/imported.db", dir);
    FILE *f = fopen(shipped, "rb");
    CHECK(f != NULL);
    static char before[1 << 24], after[1 << 24];
    size_t n_before = fread(before, 1, sizeof before, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "AUTOTUNE_SHIPPED_DB='%s' '%s/client' '%s/user.db'", shipped,
             prefix, dir);
    CHECK_EQ(th_run(cmd, &out), 0);
    printf("%s", out);
    got = client_configs(out);
    CHECK_MSG(strstr(out, "compiled=0 loaded=4 exact=4") && strcmp(got, want) == 0,
              "shipped: %s", out);
    free(got);
    free(out);
    free(want);
    f = fopen(shipped, "rb");
    CHECK(f != NULL);
    size_t n_after = fread(after, 1, sizeof after, f);
    fclose(f);
    CHECK(n_after == n_before && memcmp(before, after, n_after) == 0);
    snprintf(side, sizeof side, "%s-wal", shipped);
    CHECK(access(side, F_OK) != 0);
}
