/* testfam.c: hidden test-only families over testfam.cu: test_oob (one
 * configuration writes far out of bounds), test_hang (one spins forever),
 * test_wide (96 configurations sharing 12 cubins, two tuning sizes),
 * test_slowcc (every searched configuration takes NVRTC seconds) and
 * test_split (8 configurations, 4 compile keys: a run-time parameter). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

enum { TF_BLOCK, TF_ITEMS, TF_BAD };          /* test_oob parameters */
enum { TH_BLOCK, TH_SPIN };                   /* test_hang parameters */
enum { TW_BLOCK, TW_ITEMS, TW_REPEAT };       /* test_wide parameters */
enum { TS_BLOCK, TS_SLOW };                   /* test_slowcc parameters */
enum { TP_BLOCK, TP_SPLIT };                  /* test_split parameters */

static int tf_valid_oob(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    int max_threads = dev ? dev->max_threads_per_block : 1024;
    if (cfg[TF_BLOCK] < 32 || cfg[TF_BLOCK] > max_threads || cfg[TF_BLOCK] % 32) {
        snprintf(why, len, "BLOCK %d is not a multiple of 32 up to %d", cfg[TF_BLOCK],
                 max_threads);
        return 0;
    }
    if (cfg[TF_ITEMS] < 1 || cfg[TF_ITEMS] > 64) {
        snprintf(why, len, "ITEMS %d out of range", cfg[TF_ITEMS]);
        return 0;
    }
    if (cfg[TF_BAD] != 0 && !(cfg[TF_BAD] == 1 && cfg[TF_BLOCK] == 128 && cfg[TF_ITEMS] == 1)) {
        snprintf(why, len, "only BLOCK=128,ITEMS=1 carries the out-of-bounds write");
        return 0;
    }
    return 1;
}

static int tf_valid_hang(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    int max_threads = dev ? dev->max_threads_per_block : 1024;
    if (cfg[TH_BLOCK] < 32 || cfg[TH_BLOCK] > max_threads || cfg[TH_BLOCK] % 32) {
        snprintf(why, len, "BLOCK %d is not a multiple of 32 up to %d", cfg[TH_BLOCK],
                 max_threads);
        return 0;
    }
    if (cfg[TH_SPIN] != 0 && !(cfg[TH_SPIN] == 1 && cfg[TH_BLOCK] == 256)) {
        snprintf(why, len, "only BLOCK=256 carries the endless spin");
        return 0;
    }
    return 1;
}

static int tf_valid_wide(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    int max_threads = dev ? dev->max_threads_per_block : 1024;
    if (cfg[TW_BLOCK] < 32 || cfg[TW_BLOCK] > max_threads || cfg[TW_BLOCK] % 32) {
        snprintf(why, len, "BLOCK %d is not a multiple of 32 up to %d", cfg[TW_BLOCK],
                 max_threads);
        return 0;
    }
    if (cfg[TW_ITEMS] < 1 || cfg[TW_ITEMS] > 64 || cfg[TW_REPEAT] < 1 || cfg[TW_REPEAT] > 8) {
        snprintf(why, len, "ITEMS %d or REPEAT %d out of range", cfg[TW_ITEMS],
                 cfg[TW_REPEAT]);
        return 0;
    }
    return 1;
}

static int tf_valid_slowcc(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    int max_threads = dev ? dev->max_threads_per_block : 1024;
    if (cfg[TS_BLOCK] < 32 || cfg[TS_BLOCK] > max_threads || cfg[TS_BLOCK] % 32) {
        snprintf(why, len, "BLOCK %d is not a multiple of 32 up to %d", cfg[TS_BLOCK],
                 max_threads);
        return 0;
    }
    if (cfg[TS_SLOW] != 1 && !(cfg[TS_SLOW] == 0 && cfg[TS_BLOCK] == 128)) {
        snprintf(why, len, "only the default (BLOCK=128) compiles fast");
        return 0;
    }
    return 1;
}

static int tf_applicable(const int *cfg, const tpl_problem *problem)
{
    (void)cfg;
    return tpl_problem_plain(problem) && problem->n_dims == 1 && problem->dims[0] >= 1 &&
           problem->dims[0] <= (1LL << 30);
}

static int tf_deterministic(const int *cfg)
{
    (void)cfg;
    return 1;
}

static at_status tf_run(at_exec *ex, int block, int items, tpl_args *args)
{
    long long n = args->problem.dims[0];
    long long per_block = (long long)block * items;
    long long grid = (n + per_block - 1) / per_block;
    CUdeviceptr x = args->operand[TPL_RED_X].ptr, y = args->operand[TPL_RED_RESULT].ptr;
    void *params[] = {&x, &y, &n};
    return ex_launch(ex, "testfam_main", (unsigned)grid, 1, 1, (unsigned)block, 1, 1, 0,
                     params);
}

static at_status tf_run_oob(at_exec *ex, const int *cfg, tpl_args *args)
{
    return tf_run(ex, cfg[TF_BLOCK], cfg[TF_ITEMS], args);
}

static at_status tf_run_hang(at_exec *ex, const int *cfg, tpl_args *args)
{
    return tf_run(ex, cfg[TH_BLOCK], 1, args);
}

static at_status tf_run_wide(at_exec *ex, const int *cfg, tpl_args *args)
{
    at_status s = AT_OK;
    for (int r = 0; r < cfg[TW_REPEAT] && s == AT_OK; r++)
        s = tf_run(ex, cfg[TW_BLOCK], cfg[TW_ITEMS], args);
    return s;
}

/* BLOCK a multiple of 32; SPLIT 1, 2, 4 or 8 (run-time from 2). */
static int tf_valid_split(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    int max_threads = dev ? dev->max_threads_per_block : 1024;
    if (cfg[TP_BLOCK] < 32 || cfg[TP_BLOCK] > max_threads || cfg[TP_BLOCK] % 32 ||
        cfg[TP_SPLIT] < 1 || cfg[TP_SPLIT] > 8) {
        snprintf(why, len, "BLOCK %d or SPLIT %d out of range", cfg[TP_BLOCK], cfg[TP_SPLIT]);
        return 0;
    }
    return 1;
}

static at_status tf_run_split(at_exec *ex, const int *cfg, tpl_args *args)
{
    return tf_run(ex, cfg[TP_BLOCK], 1, args);
}

static at_status tf_run_slowcc(at_exec *ex, const int *cfg, tpl_args *args)
{
    return tf_run(ex, cfg[TS_BLOCK], 1, args);
}

static void tf_work(const tpl_problem *problem, double *flops, double *bytes)
{
    *flops = 2.0 * (double)problem->dims[0];
    *bytes = 8.0 * (double)problem->dims[0];
}

/* x uniform in [0, 1); y is the output (poisoned by the worker). */
static at_status tf_prepare(at_exec *ref, const tpl_problem *problem,
                            unsigned long long seed, tpl_workset *ws)
{
    long long n = problem->n_dims == 1 ? problem->dims[0] : 0;
    if (n < 1)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "test family: bad problem size");
    CUdeviceptr x = 0, y = 0;
    at_status s = tpl_ws_alloc(ref, ws, (size_t)n * sizeof(float), &x);
    if (s == AT_OK)
        s = tpl_fill_uniform(ref, x, n, seed, 0.0f, 1.0f);
    if (s == AT_OK)
        s = tpl_ws_alloc(ref, ws, (size_t)n * sizeof(float), &y);
    if (s != AT_OK)
        return s;
    ws->args = tpl_reduce_args(n, x, 0, y);
    ws->args.problem = *problem;
    ws->out = y;
    ws->out_bytes = (size_t)n * sizeof(float);
    ws->out_initial = 0;
    ws->reference = 0;
    return AT_OK;
}

/* ||y - (2x + 1)|| / ||2x + 1|| on the host in float64 (+inf for NaN). */
static at_status tf_check(at_exec *ref, tpl_workset *ws, double *error)
{
    long long n = ws->args.problem.dims[0];
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return ex_fail(ref, AT_ERR_NO_MEMORY, "test family: no host memory for the check");
    }
    at_status s = ex_download(ref, x, ws->args.operand[TPL_RED_X].ptr, (size_t)n * sizeof *x);
    if (s == AT_OK)
        s = ex_download(ref, y, ws->out, (size_t)n * sizeof *y);
    if (s == AT_OK) {
        double num = 0.0, den = 0.0;
        for (long long i = 0; i < n; i++) {
            double want = 2.0 * (double)x[i] + 1.0;
            double d = (double)y[i] - want;
            num += d * d;
            den += want * want;
        }
        *error = isfinite(num) ? sqrt(num / den) : INFINITY;
    }
    free(x);
    free(y);
    return s;
}

static double tf_tolerance(const tpl_problem *problem)
{
    (void)problem;
    return 1e-6;
}

static const tpl_problem tf_problems[] = {TPL_PROBLEM(1, {1000003})};
static const tpl_problem tf_wide_problems[] = {TPL_PROBLEM(1, {1000003}), TPL_PROBLEM(1, {250007})};

const tpl_family tpl_test_oob = {
    .name = "test_oob",
    .source = "testfam.cu",
    .fixed_options = "",
    .summary = "test only: y = 2x + 1; BAD=1 writes far out of bounds",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 1,
    .n_params = 3,
    .params = {
        {"BLOCK", 4, {64, 128, 256, 512}, "threads per block"},
        {"ITEMS", 3, {1, 2, 4}, "elements per thread"},
        {"BAD", 2, {0, 1}, "1: write 2^44 floats past the output (illegal address)"},
    },
    .valid = tf_valid_oob,
    .applicable = tf_applicable,
    .deterministic = tf_deterministic,
    .run = tf_run_oob,
    .work = tf_work,
    .prepare = tf_prepare,
    .check = tf_check,
    .tolerance = tf_tolerance,
    .default_config = "BLOCK=256,ITEMS=1,BAD=0",
    .n_baselines = 0,
    .baselines = NULL,
    .n_tuning_problems = 1,
    .tuning_problems = tf_problems,
};

const tpl_family tpl_test_hang = {
    .name = "test_hang",
    .source = "testfam.cu",
    .fixed_options = "",
    .summary = "test only: y = 2x + 1; SPIN=1 never finishes",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 1,
    .n_params = 2,
    .params = {
        {"BLOCK", 4, {64, 128, 256, 512}, "threads per block"},
        {"SPIN", 2, {0, 1}, "1: spin until x[0] holds a pattern it never holds"},
    },
    .valid = tf_valid_hang,
    .applicable = tf_applicable,
    .deterministic = tf_deterministic,
    .run = tf_run_hang,
    .work = tf_work,
    .prepare = tf_prepare,
    .check = tf_check,
    .tolerance = tf_tolerance,
    .default_config = "BLOCK=128,SPIN=0",
    .n_baselines = 0,
    .baselines = NULL,
    .n_tuning_problems = 1,
    .tuning_problems = tf_problems,
};

const tpl_family tpl_test_wide = {
    .name = "test_wide",
    .source = "testfam.cu",
    .fixed_options = "",
    .summary = "test only: y = 2x + 1 over 96 configurations (12 cubins) and two sizes",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 1,
    .n_params = 3,
    .params = {
        {"BLOCK", 4, {64, 128, 256, 512}, "threads per block"},
        {"ITEMS", 3, {1, 2, 4}, "elements per thread"},
        {"REPEAT", 8, {1, 2, 3, 4, 5, 6, 7, 8}, "launches per run (host only)", 1},
    },
    .valid = tf_valid_wide,
    .applicable = tf_applicable,
    .deterministic = tf_deterministic,
    .run = tf_run_wide,
    .work = tf_work,
    .prepare = tf_prepare,
    .check = tf_check,
    .tolerance = tf_tolerance,
    .default_config = "BLOCK=256,ITEMS=1,REPEAT=1",
    .n_baselines = 0,
    .baselines = NULL,
    .n_tuning_problems = 2,
    .tuning_problems = tf_wide_problems,
};

const tpl_family tpl_test_split = {
    .name = "test_split",
    .source = "testfam.cu",
    .fixed_options = "",
    .summary = "test only: y = 2x + 1 over 8 configurations, 4 compile keys (SPLIT run-time "
               "from 2)",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 1,
    .n_params = 2,
    .params = {
        {"BLOCK", 2, {128, 256}, "threads per block"},
        {"SPLIT", 4, {1, 2, 4, 8}, "a split count the kernel would take at launch (run-time "
                                   "from 2)", .runtime_from = 2},
    },
    .valid = tf_valid_split,
    .applicable = tf_applicable,
    .deterministic = tf_deterministic,
    .run = tf_run_split,
    .work = tf_work,
    .prepare = tf_prepare,
    .check = tf_check,
    .tolerance = tf_tolerance,
    .default_config = "BLOCK=256,SPLIT=1",
    .n_baselines = 0,
    .baselines = NULL,
    .n_tuning_problems = 1,
    .tuning_problems = tf_problems,
};

const tpl_family tpl_test_slowcc = {
    .name = "test_slowcc",
    .source = "testfam.cu",
    .fixed_options = "",
    .summary = "test only: y = 2x + 1; the default compiles fast, each SLOW=1 one takes seconds",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 1,
    .n_params = 2,
    .params = {
        {"BLOCK", 4, {64, 128, 256, 512}, "threads per block"},
        {"SLOW", 2, {0, 1}, "1: 4096 dependent steps for NVRTC to compile"},
    },
    .valid = tf_valid_slowcc,
    .applicable = tf_applicable,
    .deterministic = tf_deterministic,
    .run = tf_run_slowcc,
    .work = tf_work,
    .prepare = tf_prepare,
    .check = tf_check,
    .tolerance = tf_tolerance,
    .default_config = "BLOCK=128,SLOW=0",
    .n_baselines = 0,
    .baselines = NULL,
    .n_tuning_problems = 1,
    .tuning_problems = tf_problems,
};

/* Test builds only: the families and their source join the registry when
 * the test binary or autotune-test loads. */
const char *th_families_source_text(const char *name, size_t *len);

__attribute__((constructor)) static void testfam_register(void)
{
    size_t len = 0;
    const char *text = th_families_source_text("testfam.cu", &len);
    tpl_register_source("testfam.cu", text, len);
    tpl_register_family(&tpl_test_oob);
    tpl_register_family(&tpl_test_hang);
    tpl_register_family(&tpl_test_wide);
    tpl_register_family(&tpl_test_slowcc);
    tpl_register_family(&tpl_test_split);
}
