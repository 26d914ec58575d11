/* test_reduce.c: tests of the sum and dot families: spaces, legality and
 * determinism flags (CPU; NVRTC compiles: test_compile_sample.c); every style and
 * finish against a float64 CPU sum, and the self-resetting accumulator finish
 * across calls (GPU). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "measure.h"
#include "tpl.h"

extern const tpl_family tpl_sum, tpl_dot;

static const char *const rt_names[] = {"STYLE", "FINISH", "BLOCK", "ITEMS", "VEC", "GRID", "UNROLL",
                                       "TYPE"};

/* Parses text into cfg for fam; 0 (test failed) if it does not parse. */
static int rt_parse(const tpl_family *fam, const char *text, int *cfg)
{
    char err[256];
    if (tpl_config_parse(fam, text, cfg, err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "parse \"%s\": %s", text, err);
        return 0;
    }
    return 1;
}

static int rt_valid(const tpl_family *fam, const char *text, const at_device_info *dev)
{
    int cfg[TPL_MAX_PARAMS];
    char why[256] = "";
    if (!rt_parse(fam, text, cfg))
        return -1;
    int ok = fam->valid(cfg, dev, why, sizeof why);
    if (!ok && !why[0])
        th_fail(__FILE__, __LINE__, "%s rejected without a reason", text);
    return ok;
}

/* ---------------- CPU tier ---------------- */

TEST(reduce_families_registered_with_their_parameters)
{
    CHECK(tpl_find("sum") == &tpl_sum);
    CHECK(tpl_find("dot") == &tpl_dot);
    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    for (int f = 0; f < 2; f++) {
        CHECK_STR(fams[f]->source, "reduce.cu");
        CHECK(tpl_source_text("reduce.cu", NULL) != NULL);
        CHECK_EQ(fams[f]->n_dims, 1);
        CHECK_EQ(fams[f]->metric_is_flops, 0);
        CHECK_EQ(fams[f]->n_params, 8);
        for (int p = 0; p < 8; p++)
            CHECK_STR(fams[f]->params[p].name, rt_names[p]);
    }
    CHECK_STR(tpl_sum.fixed_options, "-DRED_DOT=0");
    CHECK_STR(tpl_dot.fixed_options, "-DRED_DOT=1");
    /* same source, different options: different hashes (different cubins) */
    CHECK(strcmp(tpl_source_hash(&tpl_sum), tpl_source_hash(&tpl_dot)) != 0);
    static const long long sizes[] = {1LL << 10, 1LL << 12, 1LL << 14, 1LL << 16, 1LL << 18,
                                      1LL << 20, 1LL << 22, 1LL << 24, 1LL << 26, 1LL << 28,
                                      1000003};
    CHECK_EQ(tpl_sum.n_tuning_problems, 13);      /* the 11 FP32 sizes, then 2 FP64 */
    for (int i = 0; i < 11; i++)
        CHECK(tpl_sum.tuning_problems[i].dims[0] == sizes[i] &&
              tpl_sum.tuning_problems[i].dtype == AT_R_32F);
    double flops, bytes;
    tpl_problem p = TPL_PROBLEM(1, {1000003});
    tpl_sum.work(&p, &flops, &bytes);
    CHECK(flops == 1000003.0 && bytes == 4000012.0);
    tpl_dot.work(&p, &flops, &bytes);
    CHECK(flops == 2000006.0 && bytes == 8000024.0);
    p.dims[0] = 1LL << 28;
    CHECK(tpl_sum.tolerance(&p) == 1e-5);
    p.dims[0] = 1LL << 30;
    CHECK(fabs(tpl_sum.tolerance(&p) - 2e-5) < 1e-12);
}

TEST(reduce_space_and_constraints)
{
    const tpl_family *f = &tpl_sum;
    CHECK_EQ(tpl_space_size(f), 5LL * 5 * 5 * 5 * 3 * 6 * 3 * 2);
    int cfg[TPL_MAX_PARAMS];
    char why[256];
    long long valid_sum = 0, valid_dot = 0, per_style[5] = {0}, per_finish[5] = {0};
    long long persistent = 0, acc_few_blocks = 0;
    for (long long i = 0; i < tpl_space_size(f); i++) {
        tpl_config_from_index(f, i, cfg);
        int vs = tpl_sum.valid(cfg, NULL, why, sizeof why);
        int vd = tpl_dot.valid(cfg, NULL, why, sizeof why);
        /* dot holds twice the loads in flight: never legal where sum is not */
        CHECK_MSG(!vd || vs, "dot valid but sum not at index %lld", i);
        if (!vs || cfg[7] != 0)     /* FP32 here; the double lattice: test_dreduce.c */
            continue;
        valid_sum++;
        valid_dot += vd;
        per_style[cfg[0]]++;
        per_finish[cfg[1]]++;
        persistent += cfg[5] > 0;
        /* independent restatement of the rules */
        CHECK(cfg[3] * cfg[4] <= 16 && cfg[3] * cfg[4] * cfg[6] <= 32);
        CHECK(cfg[5] != 0 || cfg[6] == 1);
        CHECK(cfg[5] <= 0 || (cfg[0] == 3 && cfg[4] == 4 && cfg[5] * cfg[2] <= 2048 &&
                              cfg[5] * cfg[2] >= 1024));
        CHECK((cfg[0] == 4) <= (cfg[5] == -1));
        CHECK(cfg[5] != -1 || cfg[1] == 1);
        CHECK(cfg[1] != 3 || cfg[0] == 3);
        CHECK(cfg[1] != 4 || (cfg[0] == 3 && cfg[5] == 0));
        /* the accumulator finish with one block per 2..8 KB tile, shuffle,
         * 16-byte loads: the few-block grids for n <= 2^16 */
        if (cfg[1] == 3 && cfg[5] == 0 && cfg[4] == 4) {
            int tile_bytes = cfg[2] * cfg[3] * cfg[4] * 4;
            acc_few_blocks += tile_bytes >= 2048 && tile_bytes <= 8192;
        }
        /* everything runs at n = 1000003 but a gather whose scalar-width
         * tiles (BLOCK x ITEMS floats) would need more than 256 blocks */
        tpl_problem mid = TPL_PROBLEM(1, {1000003});
        long long gather_blocks = (1000003 + cfg[2] * cfg[3] - 1) / (cfg[2] * cfg[3]);
        CHECK(f->applicable(cfg, &mid) == (cfg[1] != 4 || gather_blocks <= 256));
    }
    printf("    sum: %lld valid, dot: %lld valid (styles %lld/%lld/%lld/%lld/%lld, "
           "finishes %lld/%lld/%lld/%lld/%lld, persistent %lld, accumulator with 2-8 KB tiles %lld)\n",
           valid_sum, valid_dot, per_style[0], per_style[1], per_style[2], per_style[3],
           per_style[4], per_finish[0], per_finish[1], per_finish[2], per_finish[3], per_finish[4], persistent,
           acc_few_blocks);
    /* every style and finish is reachable; the space compiles in minutes */
    for (int s = 0; s < 5; s++)
        CHECK(per_style[s] > 0);
    for (int s = 0; s < 5; s++)
        CHECK(per_finish[s] > 0);
    /* the gather finish: BLOCK 5 values x the 12 (ITEMS, VEC) pairs with
     * ITEMS x VEC <= 16, shuffle style, one block per tile */
    CHECK_EQ(per_finish[4], 60);
    CHECK(persistent > 0);
    CHECK(acc_few_blocks >= 6);
    CHECK(valid_sum >= 600 && valid_sum <= 1500);
    CHECK(valid_dot >= 600 && valid_dot <= valid_sum);

    /* hand-checked examples */
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=0,BLOCK=1024,ITEMS=1,VEC=4,GRID=4,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=0,BLOCK=1024,ITEMS=1,VEC=4,GRID=2,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=0,BLOCK=64,ITEMS=1,VEC=4,GRID=8,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=1,FINISH=2,BLOCK=256,ITEMS=4,VEC=4,GRID=4,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=1,FINISH=2,BLOCK=256,ITEMS=4,VEC=4,GRID=0,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=1,FINISH=2,BLOCK=256,ITEMS=4,VEC=4,GRID=0,UNROLL=2", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=4,FINISH=1,BLOCK=256,ITEMS=4,VEC=4,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=4,FINISH=0,BLOCK=256,ITEMS=4,VEC=4,GRID=-1,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=0,FINISH=1,BLOCK=256,ITEMS=4,VEC=4,GRID=-1,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=1,BLOCK=256,ITEMS=4,VEC=4,GRID=-1,UNROLL=2", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=2,BLOCK=256,ITEMS=8,VEC=4,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=2,BLOCK=96,ITEMS=1,VEC=4,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=2,BLOCK=256,ITEMS=1,VEC=3,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=5,FINISH=2,BLOCK=256,ITEMS=1,VEC=4,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=5,BLOCK=256,ITEMS=1,VEC=4,GRID=0,UNROLL=1", NULL), 0);
    /* the accumulator finish: shuffle only, no single block, persistent as usual */
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=3,BLOCK=256,ITEMS=2,VEC=4,GRID=0,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=3,BLOCK=128,ITEMS=4,VEC=4,GRID=0,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=3,BLOCK=128,ITEMS=16,VEC=1,GRID=0,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=3,BLOCK=256,ITEMS=4,VEC=4,GRID=4,UNROLL=2", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=1,FINISH=3,BLOCK=256,ITEMS=2,VEC=4,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=3,BLOCK=256,ITEMS=2,VEC=4,GRID=-1,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=3,BLOCK=256,ITEMS=2,VEC=2,GRID=4,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=3,BLOCK=256,ITEMS=2,VEC=4,GRID=-32,UNROLL=1", NULL), 1);
    /* the gather finish: shuffle, one block per tile, no more than 256
     * blocks even at scalar width (tile = BLOCK x ITEMS floats) */
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=4,BLOCK=256,ITEMS=8,VEC=1,GRID=0,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=4,BLOCK=1024,ITEMS=4,VEC=4,GRID=0,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(f, "STYLE=1,FINISH=4,BLOCK=256,ITEMS=8,VEC=1,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=4,BLOCK=256,ITEMS=4,VEC=4,GRID=2,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=4,BLOCK=256,ITEMS=4,VEC=4,GRID=-1,UNROLL=1", NULL), 0);
    {
        int g[TPL_MAX_PARAMS];
        CHECK(rt_parse(f, "STYLE=3,FINISH=4,BLOCK=256,ITEMS=8,VEC=1,GRID=0,UNROLL=1", g));
        CHECK(f->deterministic(g));
        tpl_problem at = TPL_PROBLEM(1, {256LL * 2048}), over = TPL_PROBLEM(1, {256LL * 2048 + 1});
        CHECK(f->applicable(g, &at) && !f->applicable(g, &over));
        CHECK(rt_parse(f, "STYLE=3,FINISH=4,BLOCK=1024,ITEMS=4,VEC=4,GRID=0,UNROLL=1", g));
        at.dims[0] = 256LL * 4096;      /* 2^20: 64 blocks of 16-byte loads, 256 scalar */
        over.dims[0] = 256LL * 4096 + 1;
        CHECK(f->applicable(g, &at) && !f->applicable(g, &over));
    }
    /* registers: dot at 8 x 2 floats x 2 operands needs ~64 per thread;
     * BLOCK 1024 allows 64, so legal; 16 x 1 needs ~72: not legal */
    CHECK_EQ(rt_valid(&tpl_dot, "STYLE=3,FINISH=2,BLOCK=1024,ITEMS=8,VEC=2,GRID=0,UNROLL=1", NULL), 1);
    CHECK_EQ(rt_valid(&tpl_dot, "STYLE=3,FINISH=2,BLOCK=1024,ITEMS=16,VEC=1,GRID=0,UNROLL=1", NULL), 0);
    CHECK_EQ(rt_valid(&tpl_sum, "STYLE=3,FINISH=2,BLOCK=1024,ITEMS=16,VEC=1,GRID=0,UNROLL=1", NULL), 1);
    /* a device with 1024 threads per SM (sm_75) halves the persistent grids */
    at_device_info small;
    memset(&small, 0, sizeof small);
    small.max_threads_per_block = 1024;
    small.max_threads_per_sm = 1024;
    small.regs_per_block = 65536;
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=0,BLOCK=1024,ITEMS=1,VEC=4,GRID=2,UNROLL=1", &small), 0);
    CHECK_EQ(rt_valid(f, "STYLE=3,FINISH=0,BLOCK=512,ITEMS=1,VEC=4,GRID=2,UNROLL=1", &small), 1);
}

TEST(reduce_default_and_baselines_valid_everywhere)
{
    static const int sm_threads[] = {2048, 1536, 1024};
    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    static const char *const names[] = {"seed_dot_method1", "seed_dot_method2",
                                        "seed_dot_method3", "seed_tree_sum", "f64_default"};
    static const int det[] = {1, 0, 0, 1, 1};
    for (int f = 0; f < 2; f++) {
        const tpl_family *fam = fams[f];
        int cfg[TPL_MAX_PARAMS];
        CHECK(rt_parse(fam, fam->default_config, cfg));
        CHECK(fam->deterministic(cfg));
        for (size_t d = 0; d < 3; d++) {
            at_device_info dev;
            memset(&dev, 0, sizeof dev);
            dev.max_threads_per_block = 1024;
            dev.max_threads_per_sm = sm_threads[d];
            dev.regs_per_block = 65536;
            CHECK_EQ(rt_valid(fam, fam->default_config, &dev), 1);
            for (int b = 0; b < fam->n_baselines; b++)
                CHECK_EQ(rt_valid(fam, fam->baselines[b].config, &dev), 1);
        }
        static const long long ns[] = {0, 1, 31, 1000003, 1LL << 28, 1LL << 31};
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            tpl_problem p = TPL_PROBLEM(1, {ns[i]});
            CHECK(fam->applicable(cfg, &p));
        }
        CHECK_EQ(fam->n_baselines, 5);
        for (int b = 0; b < 5; b++) {
            CHECK_STR(fam->baselines[b].name, names[b]);
            CHECK(rt_parse(fam, fam->baselines[b].config, cfg));
            CHECK_EQ(fam->deterministic(cfg), det[b]);
        }
    }
    /* deterministic() is exactly "no float atomics": not FINISH 0 nor 3 */
    int cfg[TPL_MAX_PARAMS];
    for (int f = 0; f < 2; f++) {
        for (int finish = 0; finish < 4; finish++) {
            char text[128];
            snprintf(text, sizeof text,
                     "STYLE=3,FINISH=%d,BLOCK=256,ITEMS=1,VEC=4,GRID=0,UNROLL=1", finish);
            CHECK(rt_parse(fams[f], text, cfg));
            CHECK_EQ(fams[f]->deterministic(cfg), finish == 1 || finish == 2);
        }
    }
}

/* ---------------- GPU tier ---------------- */

typedef struct rt_gpu {
    ms_gpu *g;
    const cudrv *cu;
    const at_device_info *dev;
    CUmodule module;
    at_exec ex;
    char msg[1024];
} rt_gpu;

static int rt_open(rt_gpu *t)
{
    char err[512];
    memset(t, 0, sizeof *t);
    if (ms_open(&t->g, th_device(), err, sizeof err) != AT_OK) {
        th_fail(__FILE__, __LINE__, "ms_open: %s", err);
        return 0;
    }
    t->cu = ms_driver(t->g);
    t->dev = ms_device(t->g);
    return 1;
}

static void rt_unload(rt_gpu *t)
{
    if (t->module) {
        ex_release(&t->ex);
        t->cu->ModuleUnload(t->module);
        t->module = NULL;
    }
}

/* Compiles and loads text; the exec (fresh scratch) runs on the legacy stream. */
static int rt_load(rt_gpu *t, const tpl_family *fam, const char *text, int *cfg)
{
    rt_unload(t);
    char why[256];
    if (!rt_parse(fam, text, cfg))
        return 0;
    if (!fam->valid(cfg, t->dev, why, sizeof why)) {
        th_fail(__FILE__, __LINE__, "%s %s not valid here: %s", fam->name, text, why);
        return 0;
    }
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    at_status s = tpl_compile(fam, cfg, t->dev->arch, &cubin, &size, &log);
    if (s != AT_OK) {
        th_fail(__FILE__, __LINE__, "compile %s: %s", text, log ? log : "");
        free(log);
        return 0;
    }
    free(log);
    CUresult rc = t->cu->ModuleLoadData(&t->module, cubin);
    free(cubin);
    if (rc != CUDA_SUCCESS) {
        th_fail(__FILE__, __LINE__, "cuModuleLoadData failed: %d", (int)rc);
        return 0;
    }
    ex_init(&t->ex, t->cu, t->dev, t->module, 0, t->msg, sizeof t->msg);
    return 1;
}

static float *rt_random(size_t count, unsigned seed)
{
    float *v = malloc(count * sizeof *v);
    for (size_t i = 0; v && i < count; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (float)(seed >> 8) / 16777216.0f;
    }
    return v;
}

/* Host and device copies of x and y (count floats each, uniform in [0, 1)
 * from seeds seed and seed + 1) and a device result cell. */
typedef struct rt_inputs {
    float *hx, *hy;
    CUdeviceptr dx, dy, dr;
} rt_inputs;

static void rt_inputs_free(rt_gpu *t, rt_inputs *in)
{
    if (in->dx)
        t->cu->MemFree(in->dx);
    if (in->dy)
        t->cu->MemFree(in->dy);
    if (in->dr)
        t->cu->MemFree(in->dr);
    free(in->hx);
    free(in->hy);
    memset(in, 0, sizeof *in);
}

/* 0 (a recorded failure, nothing left allocated) if memory or a copy failed. */
static int rt_inputs_make(rt_gpu *t, rt_inputs *in, long long count, unsigned seed)
{
    memset(in, 0, sizeof *in);
    size_t bytes = (size_t)count * 4;
    in->hx = rt_random((size_t)count, seed);
    in->hy = rt_random((size_t)count, seed + 1);
    int ok = in->hx && in->hy && t->cu->MemAlloc(&in->dx, bytes) == CUDA_SUCCESS &&
             t->cu->MemAlloc(&in->dy, bytes) == CUDA_SUCCESS &&
             t->cu->MemAlloc(&in->dr, 64) == CUDA_SUCCESS &&
             t->cu->MemcpyHtoD(in->dx, in->hx, bytes) == CUDA_SUCCESS &&
             t->cu->MemcpyHtoD(in->dy, in->hy, bytes) == CUDA_SUCCESS;
    if (!ok) {
        th_fail(__FILE__, __LINE__, "inputs of %lld floats: out of memory or copy failed", count);
        rt_inputs_free(t, in);
    }
    return ok;
}

static double rt_cpu(const float *x, const float *y, long long n)
{
    double s = 0.0;
    for (long long i = 0; i < n; i++)
        s += y ? (double)x[i] * (double)y[i] : (double)x[i];
    return s;
}

/* Runs the loaded configuration on (x, y, n), result first poisoned with
 * NaN; returns the float result through *out. */
static at_status rt_run(rt_gpu *t, const tpl_family *fam, const int *cfg, CUdeviceptr x,
                        CUdeviceptr y, long long n, CUdeviceptr result, float *out)
{
    tpl_args args = tpl_reduce_args(n, x, fam == &tpl_dot ? y : 0, result);
    at_status s = ex_memset32(&t->ex, result, 0x7fc00000u, 1);
    if (s == AT_OK)
        s = fam->run(&t->ex, cfg, &args);
    if (s == AT_OK)
        s = ex_download(&t->ex, out, result, sizeof *out);
    return s;
}

/* Every STYLE x FINISH 0..2 and the shuffle with FINISH 3 (one-block-per-tile
 * grids), persistent grids with every finish and an unrolled loop, single blocks and the seeds' baselines,
 * at n = 0, 1, 31, 1000003 (and 2^24 + 7 for the looping grids), from
 * aligned, x+1 and (dot) mismatched y+2 pointers, against the CPU in
 * float64. One exec per configuration serves all sizes, so the last-block
 * counter must come back to 0 after every call. */
GPU_TEST(reduce_gpu_every_style_and_finish_matches_cpu)
{
    rt_gpu t;
    if (!rt_open(&t))
        return;
    const long long big = (1LL << 24) + 7;
    rt_inputs in;
    if (!rt_inputs_make(&t, &in, big + 8, 7u)) {
        ms_close(t.g);
        return;
    }
    float *hx = in.hx, *hy = in.hy;
    CUdeviceptr dx = in.dx, dy = in.dy, dr = in.dr;

    char texts[40][TPL_CONFIG_LEN];
    int nt = 0;
    for (int style = 0; style < 4; style++)
        for (int finish = 0; finish < 3; finish++)
            snprintf(texts[nt++], TPL_CONFIG_LEN,
                     "STYLE=%d,FINISH=%d,BLOCK=128,ITEMS=2,VEC=4,GRID=0,UNROLL=1", style, finish);
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=3,FINISH=3,BLOCK=128,ITEMS=2,VEC=4,GRID=0,UNROLL=1");
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=3,FINISH=3,BLOCK=64,ITEMS=4,VEC=2,GRID=0,UNROLL=1");
    /* the gather finish, with tiles of 4096 floats at scalar width: at most
     * 245 blocks at n = 1000003 */
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=3,FINISH=4,BLOCK=1024,ITEMS=4,VEC=4,GRID=0,UNROLL=1");
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=3,FINISH=4,BLOCK=512,ITEMS=8,VEC=2,GRID=0,UNROLL=1");
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=3,FINISH=4,BLOCK=256,ITEMS=16,VEC=1,GRID=0,UNROLL=1");
    int first_looping = nt;
    for (int finish = 0; finish < 4; finish++)
        snprintf(texts[nt++], TPL_CONFIG_LEN,
                 "STYLE=3,FINISH=%d,BLOCK=512,ITEMS=4,VEC=4,GRID=2,UNROLL=2", finish);
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=3,FINISH=0,BLOCK=128,ITEMS=2,VEC=4,GRID=8,UNROLL=4");
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=3,FINISH=1,BLOCK=256,ITEMS=4,VEC=4,GRID=-1,UNROLL=2");
    snprintf(texts[nt++], TPL_CONFIG_LEN, "STYLE=2,FINISH=2,BLOCK=64,ITEMS=1,VEC=2,GRID=-32,UNROLL=4");
    for (int b = 0; b < tpl_sum.n_baselines; b++)     /* FP32 ones: f64_default in test_dreduce */
        if (!strstr(tpl_sum.baselines[b].config, "TYPE=1"))
            snprintf(texts[nt++], TPL_CONFIG_LEN, "%s", tpl_sum.baselines[b].config);
    snprintf(texts[nt++], TPL_CONFIG_LEN, "%s", tpl_sum.default_config);

    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    static const long long ns[] = {0, 1, 31, 1000003};
    int runs = 0;
    for (int f = 0; f < 2 && !th_failed(); f++) {
        const tpl_family *fam = fams[f];
        for (int c = 0; c < nt && !th_failed(); c++) {
            int cfg[TPL_MAX_PARAMS];
            if (!rt_load(&t, fam, texts[c], cfg))
                break;
            int looping = c >= first_looping;
            for (int k = 0; k < 5 && !th_failed(); k++) {
                long long n = k < 4 ? ns[k] : big;
                if (k == 4 && !looping)
                    continue;
                /* offsets in floats of x and y from a 256-byte boundary */
                static const int offs[3][2] = {{0, 0}, {1, 1}, {1, 2}};
                for (int o = 0; o < 3 && !th_failed(); o++) {
                    if (o == 2 && fam != &tpl_dot)
                        continue;
                    CUdeviceptr x = dx + 4 * (CUdeviceptr)offs[o][0];
                    CUdeviceptr y = dy + 4 * (CUdeviceptr)offs[o][1];
                    float got = 0.0f;
                    at_status s = rt_run(&t, fam, cfg, x, y, n, dr, &got);
                    CHECK_MSG(s == AT_OK, "%s %s n=%lld: %s", fam->name, texts[c], n, t.msg);
                    double ref = rt_cpu(hx + offs[o][0], fam == &tpl_dot ? hy + offs[o][1] : NULL,
                                        n);
                    double err = ref == 0.0 ? fabs((double)got) : fabs(got - ref) / fabs(ref);
                    /* n = 1 must be exact; larger sums within the tolerance */
                    double tol = n <= 1 ? 0.0 : 1e-5;
                    if (fam == &tpl_dot && n == 1)
                        tol = 1e-7;
                    CHECK_MSG(err <= tol, "%s %s n=%lld offsets %d/%d: got %.9g, want %.9g "
                              "(error %.3g)", fam->name, texts[c], n, offs[o][0], offs[o][1],
                              (double)got, ref, err);
                    runs++;
                }
            }
        }
    }
    printf("    %d runs verified against the CPU\n", runs);
    rt_unload(&t);
    rt_inputs_free(&t, &in);
    ms_close(t.g);
}

/* Slot 1 of the exec's scratch after a call: the counter (byte 0) and
 * FINISH 3's float64 accumulator (byte 128) are both 0, or the slot is
 * not allocated. */
static int rt_scratch_clean(rt_gpu *t)
{
    if (t->ex.scratch_bytes[1] == 0)
        return 1;
    unsigned char bytes[256];
    if (t->ex.scratch_bytes[1] < sizeof bytes ||
        ex_download(&t->ex, bytes, t->ex.scratch[1], sizeof bytes) != AT_OK) {
        th_fail(__FILE__, __LINE__, "scratch slot 1: %zu bytes, %s", t->ex.scratch_bytes[1],
                t->msg);
        return 0;
    }
    unsigned counter;
    double acc;
    memcpy(&counter, bytes, sizeof counter);
    memcpy(&acc, bytes + 128, sizeof acc);
    if (counter != 0 || acc != 0.0) {
        th_fail(__FILE__, __LINE__, "scratch not reset: counter %u, accumulator %g", counter, acc);
        return 0;
    }
    return 1;
}

/* Loads text into t's exec but keeps the exec's scratch (as if one exec
 * served several configurations). */
static int rt_load_keep_scratch(rt_gpu *t, const tpl_family *fam, const char *text, int *cfg)
{
    CUdeviceptr scratch[EX_MAX_SCRATCH];
    size_t bytes[EX_MAX_SCRATCH];
    unsigned epoch = t->ex.epoch;     /* the gather slots' tags belong with them */
    memcpy(scratch, t->ex.scratch, sizeof scratch);
    memcpy(bytes, t->ex.scratch_bytes, sizeof bytes);
    memset(t->ex.scratch, 0, sizeof t->ex.scratch);
    memset(t->ex.scratch_bytes, 0, sizeof t->ex.scratch_bytes);
    int ok = rt_load(t, fam, text, cfg);
    if (ok) {
        memcpy(t->ex.scratch, scratch, sizeof scratch);
        memcpy(t->ex.scratch_bytes, bytes, sizeof bytes);
        t->ex.epoch = epoch;
    } else {
        for (int i = 0; i < EX_MAX_SCRATCH; i++)
            if (scratch[i])
                t->cu->MemFree(scratch[i]);
    }
    return ok;
}

/* FINISH 3 (one launch, no memset: a float64 accumulator and a counter in
 * scratch that the last block puts back to 0) against the float64 CPU sum
 * at n = 0, 1, 31, 4096, 65536, 1000003, then 4096 again, from aligned and
 * x+1 pointers, each call twice in a row on the same exec; after every
 * call the counter and the accumulator are 0. Then one exec (its scratch)
 * serves FINISH 2, 1 and 3 configurations in turn, including a grid of
 * more than 512 blocks (the whole-block last-block finish). */
GPU_TEST(reduce_gpu_accumulator_finish_resets_between_calls)
{
    rt_gpu t;
    if (!rt_open(&t))
        return;
    const long long maxn = 1000003;
    rt_inputs in;
    if (!rt_inputs_make(&t, &in, maxn + 8, 41u)) {
        ms_close(t.g);
        return;
    }
    float *hx = in.hx, *hy = in.hy;
    CUdeviceptr dx = in.dx, dy = in.dy, dr = in.dr;
    static const char *const texts[] = {
        "STYLE=3,FINISH=3,BLOCK=256,ITEMS=2,VEC=4,GRID=0,UNROLL=1",   /* 8 KB tiles */
        "STYLE=3,FINISH=3,BLOCK=128,ITEMS=1,VEC=4,GRID=0,UNROLL=1",   /* 2 KB tiles */
        "STYLE=3,FINISH=3,BLOCK=64,ITEMS=16,VEC=1,GRID=0,UNROLL=1",
        "STYLE=3,FINISH=3,BLOCK=512,ITEMS=4,VEC=4,GRID=2,UNROLL=2",   /* persistent */
        "STYLE=3,FINISH=3,BLOCK=256,ITEMS=1,VEC=4,GRID=-32,UNROLL=1", /* fixed 32 blocks */
    };
    static const long long ns[] = {0, 1, 31, 4096, 65536, 1000003, 4096};
    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    int runs = 0;
    for (int f = 0; f < 2 && !th_failed(); f++) {
        const tpl_family *fam = fams[f];
        for (size_t c = 0; c < sizeof texts / sizeof texts[0] && !th_failed(); c++) {
            int cfg[TPL_MAX_PARAMS];
            if (!rt_load(&t, fam, texts[c], cfg))
                break;
            CHECK(!fam->deterministic(cfg));
            for (size_t k = 0; k < sizeof ns / sizeof ns[0] && !th_failed(); k++) {
                long long n = ns[k];
                for (int off = 0; off < 2 && !th_failed(); off++) {
                    CUdeviceptr x = dx + 4 * (CUdeviceptr)off, y = dy + 4 * (CUdeviceptr)off;
                    double ref = rt_cpu(hx + off, fam == &tpl_dot ? hy + off : NULL, n);
                    for (int r = 0; r < 2 && !th_failed(); r++) {
                        float got = 0.0f;
                        at_status s = rt_run(&t, fam, cfg, x, y, n, dr, &got);
                        CHECK_MSG(s == AT_OK, "%s %s n=%lld: %s", fam->name, texts[c], n, t.msg);
                        double err = ref == 0.0 ? fabs((double)got) : fabs(got - ref) / fabs(ref);
                        double tol = n <= 1 ? (fam == &tpl_dot ? 1e-7 : 0.0) : 1e-5;
                        CHECK_MSG(err <= tol, "%s %s n=%lld x+%d call %d: got %.9g, want %.9g "
                                  "(error %.3g)", fam->name, texts[c], n, off, r + 1,
                                  (double)got, ref, err);
                        CHECK(rt_scratch_clean(&t));
                        runs++;
                    }
                }
            }
        }
        /* one exec's scratch across configurations: FINISH 2 (64 blocks,
         * then 977: the whole-block finish), FINISH 1 (writes slot 0 only),
         * FINISH 3, FINISH 2 with BLOCK 64 (256 and 3907 blocks), FINISH 3:
         * each starts from a counter and an accumulator at 0 */
        static const char *const chain[] = {
            "STYLE=3,FINISH=2,BLOCK=256,ITEMS=1,VEC=4,GRID=0,UNROLL=1",
            "STYLE=1,FINISH=1,BLOCK=64,ITEMS=1,VEC=4,GRID=0,UNROLL=1",
            "STYLE=3,FINISH=3,BLOCK=256,ITEMS=1,VEC=4,GRID=0,UNROLL=1",
            "STYLE=3,FINISH=2,BLOCK=64,ITEMS=1,VEC=4,GRID=0,UNROLL=1",
            "STYLE=3,FINISH=3,BLOCK=128,ITEMS=2,VEC=4,GRID=0,UNROLL=1",
        };
        rt_unload(&t);
        for (size_t c = 0; c < sizeof chain / sizeof chain[0] && !th_failed(); c++) {
            int cfg[TPL_MAX_PARAMS];
            if (!rt_load_keep_scratch(&t, fam, chain[c], cfg))
                break;
            static const long long cn[] = {65536, 1000003};
            for (int k = 0; k < 2 && !th_failed(); k++) {
                double ref = rt_cpu(hx, fam == &tpl_dot ? hy : NULL, cn[k]);
                float got = 0.0f;
                CHECK_MSG(rt_run(&t, fam, cfg, dx, dy, cn[k], dr, &got) == AT_OK, "%s", t.msg);
                CHECK_MSG(fabs(got - ref) / ref <= 1e-5, "%s %s n=%lld: %.9g vs %.9g",
                          fam->name, chain[c], cn[k], (double)got, ref);
                CHECK(rt_scratch_clean(&t));
                runs++;
            }
        }
    }
    printf("    %d runs verified against the CPU, scratch back to 0 after each\n", runs);
    rt_unload(&t);
    rt_inputs_free(&t, &in);
    ms_close(t.g);
}

/* FINISH 1 and 2 give bit-identical results run to run at 2^22 (and from a
 * fresh exec); the tuner's verify path (ms_prepare/ms_verify) accepts them. */
/* FINISH 4: block 0 gathers the other blocks' partials tagged with the
 * call's epoch. One exec through sizes that grow and shrink its slots
 * (1..147 blocks), aligned and x+1, each call twice: against the CPU,
 * bit-identical in a row, the epoch advancing once per multi-block call,
 * every slot of the last call tagged with its epoch; a size needing more
 * than 256 blocks is refused with a status. */
GPU_TEST(reduce_gpu_gather_finish_tags_calls)
{
    rt_gpu t;
    if (!rt_open(&t))
        return;
    const long long cap = 300000 + 8;
    rt_inputs in;
    if (!rt_inputs_make(&t, &in, cap, 31u)) {
        ms_close(t.g);
        return;
    }
    float *hx = in.hx, *hy = in.hy;
    CUdeviceptr dx = in.dx, dy = in.dy, dr = in.dr;
    /* tile 2048 floats whatever the alignment: blocks = ceil(n / 2048) */
    const char *text = "STYLE=3,FINISH=4,BLOCK=256,ITEMS=8,VEC=1,GRID=0,UNROLL=1";
    static const long long ns[] = {4096, 65536, 300000, 65536, 31, 4099, 2048};
    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    for (int f = 0; f < 2 && !th_failed(); f++) {
        int cfg[TPL_MAX_PARAMS];
        if (!rt_load(&t, fams[f], text, cfg))
            break;
        unsigned expect_epoch = 0;
        long long last_blocks = 0;
        for (size_t k = 0; k < sizeof ns / sizeof ns[0] && !th_failed(); k++) {
            for (int off = 0; off < 2 && !th_failed(); off++) {
                long long n = ns[k];
                CUdeviceptr x = dx + 4 * (CUdeviceptr)off, y = dy + 4 * (CUdeviceptr)off;
                double ref = rt_cpu(hx + off, f ? hy + off : NULL, n);
                long long blocks = (n + 2047) / 2048;
                float got[2];
                for (int r = 0; r < 2; r++) {
                    CHECK_MSG(rt_run(&t, fams[f], cfg, x, y, n, dr, &got[r]) == AT_OK, "%s n=%lld: %s",
                              fams[f]->name, n, t.msg);
                    if (blocks > 1)
                        expect_epoch++;
                }
                CHECK_MSG(fabs(got[0] - ref) / ref <= 1e-5, "%s n=%lld x+%d: %.9g vs %.9g",
                          fams[f]->name, n, off, (double)got[0], ref);
                CHECK_MSG(memcmp(&got[0], &got[1], 4) == 0, "%s n=%lld: %.9g then %.9g",
                          fams[f]->name, n, (double)got[0], (double)got[1]);
                CHECK_EQ(t.ex.epoch, expect_epoch);
                if (blocks > 1)
                    last_blocks = blocks;
            }
        }
        /* the slots of the last multi-block call (n = 4099: 3 blocks) carry its epoch */
        CHECK_EQ(last_blocks, 3);
        unsigned long long slots[3];
        CHECK(t.ex.scratch_bytes[2] >= sizeof slots);
        CHECK(ex_download(&t.ex, slots, t.ex.scratch[2], sizeof slots) == AT_OK);
        for (int b = 1; b < 3; b++)
            CHECK_MSG((unsigned)(slots[b] >> 32) == t.ex.epoch, "slot %d tag %u, epoch %u", b,
                      (unsigned)(slots[b] >> 32), t.ex.epoch);
        /* 257 blocks: refused before launching */
        tpl_args args = tpl_reduce_args(256LL * 2048 + 1, dx, f ? dy : 0, dr);
        CHECK_EQ(fams[f]->run(&t.ex, cfg, &args), AT_ERR_UNSUPPORTED);
        CHECK_MSG(strstr(t.msg, "at most 256") != NULL, "%s", t.msg);
    }
    rt_unload(&t);
    rt_inputs_free(&t, &in);
    ms_close(t.g);
}

GPU_TEST(reduce_gpu_deterministic_finishes_are_bit_identical)
{
    rt_gpu t;
    if (!rt_open(&t))
        return;
    const long long n = 1LL << 22;
    rt_inputs in;
    if (!rt_inputs_make(&t, &in, n, 21u)) {
        ms_close(t.g);
        return;
    }
    float *hx = in.hx, *hy = in.hy;
    CUdeviceptr dx = in.dx, dy = in.dy, dr = in.dr;
    static const char *const texts[] = {
        "STYLE=3,FINISH=2,BLOCK=256,ITEMS=1,VEC=4,GRID=0,UNROLL=1",
        "STYLE=1,FINISH=1,BLOCK=128,ITEMS=2,VEC=2,GRID=0,UNROLL=1",
        "STYLE=3,FINISH=2,BLOCK=512,ITEMS=4,VEC=4,GRID=2,UNROLL=2",
        "STYLE=2,FINISH=1,BLOCK=256,ITEMS=1,VEC=1,GRID=-32,UNROLL=1",
    };
    const tpl_family *fams[2] = {&tpl_sum, &tpl_dot};
    for (int f = 0; f < 2 && !th_failed(); f++) {
        double ref = rt_cpu(hx, f ? hy : NULL, n);
        for (size_t c = 0; c < sizeof texts / sizeof texts[0] && !th_failed(); c++) {
            int cfg[TPL_MAX_PARAMS];
            unsigned bits[4];
            for (int round = 0; round < 2 && !th_failed(); round++) {
                if (!rt_load(&t, fams[f], texts[c], cfg))
                    break;
                CHECK(fams[f]->deterministic(cfg));
                for (int r = 0; r < 2; r++) {
                    float got;
                    CHECK_MSG(rt_run(&t, fams[f], cfg, dx, dy, n, dr, &got) == AT_OK, "%s", t.msg);
                    CHECK_MSG(fabs(got - ref) / ref <= 1e-5, "%s: %g vs %g", texts[c], got, ref);
                    memcpy(&bits[round * 2 + r], &got, 4);
                }
            }
            CHECK_MSG(bits[0] == bits[1] && bits[1] == bits[2] && bits[2] == bits[3],
                      "%s %s: %08x %08x %08x %08x", fams[f]->name, texts[c], bits[0], bits[1],
                      bits[2], bits[3]);
        }
    }
    rt_unload(&t);
    /* the tuner's path: fresh inputs, poisoned output, float64 reference */
    char err[1024];
    for (int f = 0; f < 2 && !th_failed(); f++) {
        tpl_problem p = TPL_PROBLEM(1, {1000003});
        CHECK_MSG(ms_prepare(t.g, fams[f], &p, 99, err, sizeof err) == AT_OK, "%s", err);
        int cfg[TPL_MAX_PARAMS];
        CHECK(rt_parse(fams[f], fams[f]->default_config, cfg));
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        CHECK_OK(tpl_compile(fams[f], cfg, t.dev->arch, &cubin, &size, &log));
        free(log);
        double e = -1;
        at_status s = ms_verify(t.g, fams[f], cfg, cubin, size, &e, err, sizeof err);
        free(cubin);
        CHECK_MSG(s == AT_OK && e >= 0 && e <= 1e-5, "%s verify: %s %s (%g)", fams[f]->name,
                  at_status_string(s), err, e);
    }
    rt_inputs_free(&t, &in);
    ms_close(t.g);
}

/* at_ssum / at_sdot through the public API (defaults: empty database),
 * unaligned and ragged, and the deterministic mode picks a reproducible
 * configuration. */
GPU_TEST(reduce_gpu_api_sum_and_dot_match_cpu)
{
    rt_gpu t;
    if (!rt_open(&t))
        return;
    const long long n = 1000003;
    rt_inputs in;
    if (!rt_inputs_make(&t, &in, n + 4, 31u)) {
        ms_close(t.g);
        return;
    }
    float *hx = in.hx, *hy = in.hy;
    CUdeviceptr dx = in.dx, dy = in.dy, dr = in.dr;
    char db_path[4200];
    snprintf(db_path, sizeof db_path, "%s/none.db", th_tmpdir());
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), db_path));
    for (int det = 0; det < 2 && !th_failed(); det++) {
        CHECK_OK(at_set_deterministic(h, det));
        for (int off = 0; off < 2 && !th_failed(); off++) {
            const float *x = (const float *)(uintptr_t)(dx + 4 * (CUdeviceptr)off);
            const float *y = (const float *)(uintptr_t)(dy + 4 * (CUdeviceptr)off);
            float got[2];
            at_status s = at_ssum(h, n - off, x, (float *)(uintptr_t)dr);
            CHECK_MSG(s == AT_OK, "at_ssum: %s", at_errmsg(h));
            CHECK(t.cu->MemcpyDtoH(&got[0], dr, 4) == CUDA_SUCCESS);
            s = at_sdot(h, n - off, x, y, (float *)(uintptr_t)dr);
            CHECK_MSG(s == AT_OK, "at_sdot: %s", at_errmsg(h));
            CHECK(t.cu->MemcpyDtoH(&got[1], dr, 4) == CUDA_SUCCESS);
            double rs = rt_cpu(hx + off, NULL, n - off), rd = rt_cpu(hx + off, hy + off, n - off);
            CHECK_MSG(fabs(got[0] - rs) / rs <= 1e-5, "sum %g vs %g", got[0], rs);
            CHECK_MSG(fabs(got[1] - rd) / rd <= 1e-5, "dot %g vs %g", got[1], rd);
            at_stats st;
            CHECK_OK(at_get_stats(h, &st));
            int cfg[TPL_MAX_PARAMS];
            CHECK(rt_parse(&tpl_dot, st.last_config, cfg));
            if (det)
                CHECK_MSG(tpl_dot.deterministic(cfg), "deterministic mode used %s",
                          st.last_config);
        }
    }
    /* n = 0 writes 0 */
    CHECK(t.cu->MemsetD32Async(dr, 0x7fc00000u, 1, 0) == CUDA_SUCCESS);
    CHECK_OK(at_ssum(h, 0, (const float *)(uintptr_t)dx, (float *)(uintptr_t)dr));
    float zero = 1.0f;
    CHECK(t.cu->MemcpyDtoH(&zero, dr, 4) == CUDA_SUCCESS);
    CHECK(zero == 0.0f);
    at_destroy(h);
    rt_inputs_free(&t, &in);
    ms_close(t.g);
}
