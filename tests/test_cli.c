/* test_cli.c: CPU-tier tests of the `autotune` command line: usage errors,
 * help, no-GPU failure, check, list, show, report and gc's options. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "db.h"
#include "harness.h"

/* Runs `autotune ARGS`; returns the exit status and the output. */
static int cli(const char *args, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "%s/autotune %s", th_build_dir(), args);
    return th_run(cmd, out);
}

/* The same with the test build (autotune-test), which adds the hidden
 * test-only families. */
static int cli_test_build(const char *args, char **out)
{
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "%s/autotune-test %s", th_build_dir(), args);
    return th_run(cmd, out);
}

/* Expects exit status 2 and a one-line message naming `what`. */
static void expect_usage(const char *args, const char *what)
{
    char *out = NULL;
    int rc = cli(args, &out);
    if (rc != 2 || !out || !strstr(out, what) || !strstr(out, "see autotune --help") ||
        strchr(out, '\n') != out + strlen(out) - 1)
        th_fail(__FILE__, __LINE__, "autotune %s: exit %d, output: %s", args, rc,
                out ? out : "(none)");
    free(out);
}

TEST(cli_usage_errors_exit_2)
{
    expect_usage("--bogus", "unknown option '--bogus'");
    expect_usage("--device 0 --size 12x", "bad size '12x'");
    expect_usage("--device 0 --size 0", "bad size '0'");
    expect_usage("--device", "--device needs");
    expect_usage("--device zero", "--device needs");
    expect_usage("--kernel nope", "unknown kernel 'nope'");
    expect_usage("--kernel", "--kernel needs");
    expect_usage("--budget 5q", "bad budget '5q'");
    expect_usage("--strategy greedy", "unknown strategy 'greedy'");
    expect_usage("--timeout -1", "--timeout needs");
    expect_usage("--jobs 0", "--jobs needs");
    expect_usage("--kernel matmul --size 1000", "fits none");
    expect_usage("--kernel matmul --size 64x64x64:bf16", "fits none");   /* FP32-only families */
    expect_usage("--size 1000:f16", "fits none");      /* sum, dot, jacobi: FP32 and FP64 */
    expect_usage("--device 0 --size 64x64x64:bf17", "bad size '64x64x64:bf17'");
    expect_usage("frobnicate", "unknown command 'frobnicate'");
    expect_usage("check", "check needs --arch");
    expect_usage("check --arch 90", "bad architecture '90'");
    expect_usage("check --arch sm_90 --kernel nope", "unknown kernel 'nope'");
    expect_usage("report", "report needs -o");
    expect_usage("list --bogus", "unknown option '--bogus'");
    expect_usage("show --db", "--db needs");
    expect_usage("gc --bogus", "unknown option '--bogus' for gc");
    expect_usage("gc --keep-recent", "--keep-recent needs");
    expect_usage("gc --keep-recent -3", "--keep-recent needs");
    expect_usage("gc --db", "--db needs");
    char *out = NULL;
    CHECK_EQ(cli("", &out), 2);
    CHECK(out && strstr(out, "usage: autotune"));
    free(out);
}

TEST(cli_help_and_version)
{
    char *out = NULL;
    CHECK_EQ(cli("--help", &out), 0);
    CHECK(strstr(out, "usage: autotune") && strstr(out, "--budget") &&
          strstr(out, "200e") && strstr(out, "--strategy") && strstr(out, "check --arch") &&
          strstr(out, "gc [--db PATH] [--dry-run] [--keep-recent N]"));
    free(out);
    CHECK_EQ(cli("--device 0 --help", &out), 0);
    free(out);
    CHECK_EQ(cli("--version", &out), 0);
    CHECK(strstr(out, "autotune 0.1.0") && strstr(out, "NVRTC"));
    free(out);
}

/* 1 if no CUDA driver can be loaded on this machine. */
static int no_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        return 0;
    }
    return 1;
}

/* 1 if out is exactly one line that starts with "autotune: " and holds every one of the
 * NULL-terminated words: nothing printed before the error, nothing after it. */
static int one_error_line(const char *out, const char *const *words)
{
    if (!out || strncmp(out, "autotune: ", 10) != 0 || strchr(out, '\n') != out + strlen(out) - 1)
        return 0;
    for (int i = 0; words[i]; i++)
        if (!strstr(out, words[i]))
            return 0;
    return 1;
}

/* The rule of a tuning run without a CUDA driver: exit status 1 and one line naming the
 * driver, printed before anything else (no list of sizes, no seed), said once; the same
 * for one GPU, --device all and a selected family. */
TEST(cli_tune_without_gpu_fails_cleanly)
{
    static const char *const args[] = {
        "--device 0", "--device all", "--device 0,1 --kernel sum", "--kernel dgemm --quiet",
    };
    const char *const words[] = {"no CUDA driver", "/nonexistent/libcuda.so.1",
                                 "is an NVIDIA driver installed?", NULL};
    for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
        char cmd[8192], *out = NULL;
        /* a missing driver library, on any machine */
        snprintf(cmd, sizeof cmd, "env -u AUTOTUNE_WORKER "
                 "AUTOTUNE_CUDA_LIB=/nonexistent/libcuda.so.1 %s/autotune %s --db %s/t.db",
                 th_build_dir(), args[i], th_tmpdir());
        int rc = th_run(cmd, &out);
        CHECK_MSG(rc == 1, "%s: exit %d: %s", args[i], rc, out ? out : "");
        CHECK_MSG(one_error_line(out, words), "%s: %s", args[i], out ? out : "(none)");
        CHECK_MSG(!out || !strstr(strstr(out, "no CUDA driver") + 1, "no CUDA driver"),
                  "said twice: %s", out);
        free(out);
    }
    /* a usage error still comes first (exit 2), driver or not */
    char cmd[8192], *out = NULL;
    snprintf(cmd, sizeof cmd, "env -u AUTOTUNE_WORKER AUTOTUNE_CUDA_LIB=/nonexistent/libcuda.so.1 "
             "%s/autotune --device 0 --size 12x", th_build_dir());
    CHECK_EQ(th_run(cmd, &out), 2);
    CHECK(out && strstr(out, "bad size '12x'"));
    free(out);
    if (!no_driver()) {
        printf("    (a CUDA driver is present: skipping the plain no-GPU run)\n");
        return;
    }
    const char *const plain[] = {"no CUDA driver", "libcuda.so.1", NULL};
    snprintf(cmd, sizeof cmd, "env -u AUTOTUNE_WORKER %s/autotune --device 0 --db %s/t.db",
             th_build_dir(), th_tmpdir());
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 1, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(one_error_line(out, plain), "%s", out ? out : "(none)");
    free(out);
}

TEST(cli_check_compiles_a_family)
{
    char *out = NULL;
    int rc = cli_test_build("check --arch sm_90 --kernel test_oob --jobs 2", &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "test_oob: 24 raw, 13 valid, 13 compiled, 0 failed") != NULL,
              "%s", out);
    free(out);
    rc = cli_test_build("check --arch=sm_80 --kernel test_hang", &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK(strstr(out, "test_hang: 8 raw, 5 valid, 5 compiled, 0 failed") != NULL);
    free(out);
}

TEST(cli_list)
{
    char *out = NULL;
    CHECK_EQ(cli("list", &out), 0);
    CHECK(strstr(out, "matmul:") && strstr(out, "sum:") && strstr(out, "dot:") &&
          strstr(out, "jacobi:"));
    CHECK(strstr(out, "tuning sizes") && strstr(out, "raw,") && strstr(out, "parameters:"));
    CHECK(strstr(out, "test_oob") == NULL);       /* hidden */
    free(out);
    /* the shipped command does not know the test-only families */
    CHECK_EQ(cli("list --kernel test_hang", &out), 2);
    free(out);
    CHECK_EQ(cli_test_build("list --kernel test_hang", &out), 0);
    CHECK(strstr(out, "test_hang (hidden") && strstr(out, "SPIN") &&
          strstr(out, "8 raw, 5 valid") && strstr(out, "1000003"));
    free(out);
}

TEST(cli_show_missing_and_empty_database)
{
    char path[4300], args[4400], *out = NULL;
    snprintf(path, sizeof path, "%s/none.db", th_tmpdir());
    snprintf(args, sizeof args, "show --db %s", path);
    CHECK_EQ(cli(args, &out), 0);
    CHECK(strstr(out, "no results") != NULL);
    free(out);
    struct stat sb;
    CHECK(stat(path, &sb) != 0);                  /* show creates nothing */
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    db_close(d);
    CHECK_EQ(cli(args, &out), 0);
    CHECK(strstr(out, "no results in") != NULL);
    free(out);
}

/* A fixture database with one device and a few results of sum. */
static void make_fixture(const char *path)
{
    db *d = NULL;
    char err[256];
    CHECK_OK(db_open(&d, path, 1, err, sizeof err));
    at_device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "Fixture GPU");
    snprintf(dev.uuid, sizeof dev.uuid, "GPU-f1x70000-0000-0000-0000-000000000001");
    snprintf(dev.arch, sizeof dev.arch, "sm_90");
    dev.cc_major = 9;
    dev.sm_count = 132;
    CHECK_OK(db_put_device(d, &dev, "13.0"));
    long long sid = 0;
    CHECK_OK(db_begin_session(d, dev.uuid, "autotune --device 0", "{}", &sid));
    const tpl_family *sum = tpl_find("sum");
    CHECK(sum != NULL);
    static const struct { const char *status; double ms; } rows[] = {
        {"ok", 0.50}, {"ok", 0.25}, {"wrong_result", 0.1}, {"crashed", 0}, {"ok", 0.40},
    };
    for (int i = 0; i < 5; i++) {
        db_result r;
        memset(&r, 0, sizeof r);
        r.session_id = sid;
        snprintf(r.device_uuid, sizeof r.device_uuid, "%s", dev.uuid);
        snprintf(r.kernel, sizeof r.kernel, "sum");
        snprintf(r.source_hash, sizeof r.source_hash, "%s", tpl_source_hash(sum));
        r.problem.n_dims = 1;
        r.problem.dims[0] = 1048576;
        snprintf(r.config, sizeof r.config,
                 "STYLE=3,FINISH=2,BLOCK=%d,ITEMS=1,VEC=4,GRID=8,UNROLL=4", 64 << i);
        snprintf(r.status, sizeof r.status, "%s", rows[i].status);
        r.time_ms = r.time_min_ms = r.time_max_ms = rows[i].ms;
        r.runs = 10;
        r.gbs = rows[i].ms > 0 ? 4.0 * 1048576 / (rows[i].ms * 1e6) : 0;
        r.rel_error = 1e-7;
        CHECK_OK(db_store_result(d, &r));
    }
    db_close(d);
}

TEST(cli_show_and_report_on_results)
{
    char dir[4200], path[4300], args[8800], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    snprintf(path, sizeof path, "%s/fix.db", dir);
    make_fixture(path);
    if (th_failed())
        return;
    snprintf(args, sizeof args, "show --db %s", path);
    CHECK_EQ(cli(args, &out), 0);
    CHECK_MSG(strstr(out, "Fixture GPU") && strstr(out, "sum 1048576: 5 results") &&
              strstr(out, "3 ok") && strstr(out, "1 wrong_result") && strstr(out, "1 crashed"),
              "%s", out);
    /* the best is the 0.25 ms row (BLOCK=128), at 4 MiB / 0.25 ms */
    CHECK_MSG(strstr(out, "best 0.2500 ms") && strstr(out, "BLOCK=128,") &&
              strstr(out, "16.8 GB/s"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "show --kernel matmul --db %s", path);
    CHECK_EQ(cli(args, &out), 0);
    CHECK(strstr(out, "no results") != NULL);
    free(out);
    snprintf(args, sizeof args, "report -o %s/r.html --db %s", dir, path);
    int rc = cli(args, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    free(out);
    char html[4400];
    snprintf(html, sizeof html, "%s/r.html", dir);
    struct stat sb;
    CHECK(stat(html, &sb) == 0 && sb.st_size > 100);
    /* a missing database is a failure, not a crash */
    snprintf(args, sizeof args, "report -o %s/r2.html --db %s/missing.db", dir, dir);
    CHECK_EQ(cli(args, &out), 1);
    free(out);
}
