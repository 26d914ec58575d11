/* test_bench_run.c: CPU-tier tests of bench/run.sh, the one benchmark driver: its usage names
 * every step, its GPU steps stop before building or writing where no GPU answers, and its
 * multigpu step runs whole with the fake worker posing as two GPUs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "harness.h"

/* The driver's steps, written again here; the last two run without a GPU. */
static const char *const br_steps[] = {
    "matmul", "tcgemm", "dgemm", "bgemm", "reduce", "dreduce", "jacobi", "trial", "epilogue",
    "fp8", "fp8-block", "all", "default-run", "calls", "named", "gpu-tier", "multigpu",
    "strategies", "tests", "build",
};
#define BR_N_STEPS (int)(sizeof br_steps / sizeof br_steps[0])
#define BR_N_GPU_STEPS (BR_N_STEPS - 2)

static int br_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* 1 if `word` stands in `text` between characters that cannot be part of a step's name. */
static int br_has_word(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        int before = p == text || !strchr("abcdefghijklmnopqrstuvwxyz0123456789-_", p[-1]);
        int after = !p[n] || !strchr("abcdefghijklmnopqrstuvwxyz0123456789-_", p[n]);
        if (before && after)
            return 1;
    }
    return 0;
}

TEST(bench_run_usage_names_every_step)
{
    char *out = NULL;
    int rc = th_run("bash bench/run.sh", &out);
    CHECK_MSG(rc == 2, "no step: exit %d: %s", rc, out ? out : "");
    CHECK_MSG(strstr(out, "Usage: bench/run.sh STEP [OUTDIR]"), "%s", out);
    for (int i = 0; i < BR_N_STEPS; i++)
        CHECK_MSG(br_has_word(out, br_steps[i]), "the usage lacks the step %s:\n%s", br_steps[i],
                  out);
    CHECK_MSG(br_has_word(out, "ROUNDS") && br_has_word(out, "STRATEGIES") &&
              br_has_word(out, "SEEDS") && br_has_word(out, "DUMP") &&
              br_has_word(out, "SKIP_BUILD"), "the usage lacks a knob:\n%s", out);
    free(out);
    rc = th_run("bash bench/run.sh --help > /dev/null", &out);
    CHECK_MSG(rc == 0, "--help: exit %d: %s", rc, out ? out : "");
    free(out);
    rc = th_run("bash bench/run.sh no-such-step", &out);
    CHECK_MSG(rc == 2 && strstr(out, "unknown step 'no-such-step'") &&
              br_has_word(out, "multigpu") && br_has_word(out, "strategies"), "exit %d: %s", rc, out ? out : "");
    free(out);
}

TEST(bench_run_gpu_steps_stop_without_a_gpu)
{
    /* an nvidia-smi that finds no GPU, as the driver prints it on such a machine */
    char bin[4200], cmd[16000], outdir[4300], *out = NULL;
    snprintf(bin, sizeof bin, "%s/bin", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && printf '#!/bin/sh\\necho No devices were found\\nexit 6\\n' > "
             "'%s/nvidia-smi' && chmod +x '%s/nvidia-smi'", bin, bin, bin);
    CHECK_EQ(th_run(cmd, NULL), 0);
    for (int i = 0; i < BR_N_GPU_STEPS; i++) {
        snprintf(outdir, sizeof outdir, "%s/out-%s", th_tmpdir(), br_steps[i]);
        snprintf(cmd, sizeof cmd,
                 "env -u AUTOTUNE_FAKE_DEVICES PATH='%s':\"$PATH\" BUILD=%s/no-such-build "
                 "bash bench/run.sh %s '%s'", bin, th_tmpdir(), br_steps[i], outdir);
        int rc = th_run(cmd, &out);
        CHECK_MSG(rc == 2 && strstr(out, "nvidia-smi lists no GPU") && strstr(out, br_steps[i]),
                  "%s: exit %d: %s", br_steps[i], rc, out ? out : "");
        CHECK_MSG(!br_exists(outdir), "%s left %s behind", br_steps[i], outdir);
        free(out);
        out = NULL;
    }
}

/* Today's UTC date as run.sh names its files. */
static void br_today(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%d", &tm);
}

/* The results file a step saved as OUTDIR/DAY-SUFFIX into file: day is the date taken before
 * the run, retaken where the run crossed midnight (UTC) and no file of that day is there. */
static void br_saved_file(char *file, size_t len, char *day, size_t day_len, const char *outdir,
                          const char *suffix)
{
    snprintf(file, len, "%s/%s-%s", outdir, day, suffix);
    if (!br_exists(file)) {
        br_today(day, day_len);
        snprintf(file, len, "%s/%s-%s", outdir, day, suffix);
    }
}

TEST(bench_run_multigpu_with_fake_gpus)
{
    char outdir[4300], cmd[16000], file[4400], path[4400], day[32], *out = NULL;
    snprintf(outdir, sizeof outdir, "%s/mg", th_tmpdir());
    br_today(day, sizeof day);
    const char *b = th_build_dir();
    snprintf(cmd, sizeof cmd,
             "SKIP_BUILD=1 BUILD='%s' BIN='%s/autotune-test' ARGS='--kernel test_wide --jobs 2' "
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES=2 "
             "AUTOTUNE_FAKE='delay=5' COMMIT=test-commit bash bench/run.sh multigpu '%s'",
             b, b, b, outdir);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    br_saved_file(file, sizeof file, day, sizeof day, outdir, "fake-gpus-multigpu.txt");
    CHECK_MSG(strstr(out, file), "no \"saved %s\" in: %s", file, out);
    free(out);
    snprintf(cmd, sizeof cmd, "cat '%s'", file);
    CHECK_EQ(th_run(cmd, &out), 0);
    /* the header, each run, the winners of both (the fake worker's times are the same on
     * every GPU, and both runs search the whole space: every winner the same), the logs */
    const char *want[] = {
        "# autotune --device 0 vs --device all", "# date (UTC): ", "commit: test-commit",
        "# CPU cores: ", "# fake GPUs: AUTOTUNE_FAKE_DEVICES=2",
        "# one1: autotune --device 0 --seed 7 --kernel test_wide --jobs 2: exit 0, wall ",
        "# all1: autotune --device all --seed 7 --kernel test_wide --jobs 2: exit 0, wall ",
        "# round 1 (one all): ratio all/one: ", "#   test_wide ",
        "\ntest_wide 1000003 ", "\ntest_wide 250007 ",
        "# 2 problems: 2 same configuration, geomean all/one 1.0000",
        "# round 1 evaluations: kernel size | one GPU | all GPUs",
        "# 2 problems: 0 with fewer evaluations on all GPUs",
        "==== one1.log ====", "==== all1.log ====", "==== autotune show --db all1.db ====",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(strstr(out, want[i]), "no \"%s\" in %s:\n%s", want[i], file, out);
    CHECK_MSG(!strstr(out, "round 2"), "one round asked for, more ran:\n%s", out);
    free(out);
    const char *kept[] = { "one1.db", "all1.db", "one1.log", "all1.wall", "one1.best" };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", outdir, kept[i]);
        CHECK_MSG(br_exists(path), "no %s", path);
    }
}

/* Writes an executable shell script `body` at dir/name. */
static int br_script(const char *dir, const char *name, const char *body)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "#!/bin/sh\n%s", body);
    fclose(f);
    return chmod(path, 0755);
}

TEST(bench_run_strategies_table_from_a_stand_in_tuner)
{
    /* a GPU that nvidia-smi lists, and a stand-in autotune whose exhaustive run evaluates 100
     * configurations to 2.0 ms, seed 1 of a strategy 20 to 2.04 ms, other seeds 25 to 2.0 ms */
    char dir[4200], outdir[4300], cmd[24000], file[4400], day[32], *out = NULL;
    snprintf(dir, sizeof dir, "%s", th_tmpdir());
    CHECK_EQ(br_script(dir, "nvidia-smi",
                       "case \"$*\" in\n-L) echo 'GPU 0: NVIDIA Stand-in (UUID: GPU-0)' ;;\n"
                       "*name,driver*) echo '0, NVIDIA Stand-in, 1.0, 700.00 W' ;;\n"
                       "*name*) echo 'NVIDIA Stand-in' ;;\nesac\n"), 0);
    CHECK_EQ(br_script(dir, "autotune",
                       "case \"$*\" in\nshow*) echo \"shown: $*\" ;;\n"
                       "*exhaustive*) echo 'matmul 64x64x64: 100 evaluated, 0 failed'\n"
                       "    echo '  best 50.0 GFLOP/s (2.0000 ms, min 2, max 2)' ;;\n"
                       "*'--seed 1 '*) echo 'matmul 64x64x64: 20 evaluated, 0 failed'\n"
                       "    echo '  best 49.0 GFLOP/s (2.0400 ms, min 2, max 2)' ;;\n"
                       "*) echo 'matmul 64x64x64: 25 evaluated, 0 failed'\n"
                       "    echo '  best 50.0 GFLOP/s (2.0000 ms, min 2, max 2)' ;;\nesac\n"), 0);
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    br_today(day, sizeof day);
    snprintf(cmd, sizeof cmd,
             "env -u AUTOTUNE_FAKE_DEVICES PATH='%s':\"$PATH\" SKIP_BUILD=1 BUILD='%s' "
             "SIZE=64x64x64 STRATEGIES='guided anneal' SEEDS='1 2' DUMP='%s/dump.txt' "
             "bash bench/run.sh strategies '%s'", dir, dir, dir, outdir);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    br_saved_file(file, sizeof file, day, sizeof day, outdir, "Stand-in-strategies.txt");
    free(out);
    snprintf(cmd, sizeof cmd, "cat '%s' '%s/dump.txt'", file, dir);
    CHECK_EQ(th_run(cmd, &out), 0);
    const char *want[] = {
        "# bench/run.sh strategies: matmul 64x64x64 exhaustive, then guided anneal",
        "# GPU (index, name, driver, power limit): 0, NVIDIA Stand-in, 1.0, 700.00 W",
        "| strategy | seed | budget s | wall s | evaluations | best ms | gap to exhaustive |",
        " | 100 | 2.0000 | 0 |\n",
        "| guided | 1 | ", " | 20 | 2.0400 | 2.00% |\n",
        "| guided | 2 | ", " | 25 | 2.0000 | 0.00% |\n",
        "| anneal | 1 | ", "| anneal | 2 | ",
        "amortized wall time per evaluated configuration", "shown: show --all --kernel matmul",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(strstr(out, want[i]), "no \"%s\" in %s:\n%s", want[i], file, out);
    free(out);
}
