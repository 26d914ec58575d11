/* test_runtime_params.c: run-time parameters (tpl_param.runtime_from): the compile key ignores
 * them and nothing else, their values never reach the kernel's code, the tuner compiles
 * configurations that differ only in them once, and matmul's launch passes a configuration's
 * split count (a driver table that records launches, no GPU). */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "tpl.h"

/* matmul's split-K configuration of the shipped 8192x64x8192 winners, less its SPLITK (valid
 * with 4 and 8) */
#define RT_MM_SPLIT "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=32,WN=64,TM=8,TN=4,WNITER=2," \
                    "STAGES=3,VEC=4,PAD=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0,SPLITK="

/* The rule as docs/compile.md states it: changing parameter i from a[i] to v keeps the
 * compile key where v == a[i], the parameter is host-only, or both values are run-time. */
static int rt_same_key_by_rule(const tpl_param *p, int old_value, int v)
{
    return v == old_value || p->host_only ||
           (p->runtime_from && old_value >= p->runtime_from && v >= p->runtime_from);
}

TEST(runtime_compile_key_ignores_runtime_parameters_and_nothing_else)
{
    int n_runtime = 0;
    for (int f = 0; f < tpl_family_count(); f++) {
        const tpl_family *fam = tpl_family_at(f);
        int a[TPL_MAX_PARAMS], b[TPL_MAX_PARAMS];
        char err[256], ka[128], kb[128];
        CHECK_OK(tpl_config_parse(fam, fam->default_config, a, err, sizeof err));
        for (int i = 0; i < fam->n_params; i++) {
            const tpl_param *p = &fam->params[i];
            if (p->runtime_from) {
                n_runtime++;
                int listed = 0;      /* the value it compiles as is one the tuner tries */
                for (int v = 0; v < p->n_values; v++)
                    listed |= p->values[v] == p->runtime_from;
                CHECK_MSG(listed && !p->host_only, "%s %s: runtime_from %d", fam->name, p->name,
                          p->runtime_from);
            }
            /* from every value of the parameter to every other one, the rest at the default */
            for (int x = 0; x < p->n_values; x++) {
                memcpy(b, a, sizeof a);
                b[i] = p->values[x];
                tpl_binary_key(fam, b, "sm_90", ka, sizeof ka);
                for (int y = 0; y < p->n_values; y++) {
                    int c[TPL_MAX_PARAMS];
                    memcpy(c, b, sizeof c);
                    c[i] = p->values[y];
                    tpl_binary_key(fam, c, "sm_90", kb, sizeof kb);
                    int same = strcmp(ka, kb) == 0;
                    CHECK_MSG(same == rt_same_key_by_rule(p, p->values[x], p->values[y]),
                              "%s %s=%d vs %d: keys %s %s", fam->name, p->name, p->values[x],
                              p->values[y], ka, kb);
                }
            }
        }
    }
    CHECK_MSG(n_runtime >= 3, "run-time parameters: %d (matmul, sum, dot)", n_runtime);
    /* the families' own: a split count of matmul and a persistent grid of sum */
    const tpl_family *mm = tpl_find("matmul"), *sum = tpl_find("sum");
    CHECK(mm && sum);
    int c4[TPL_MAX_PARAMS], c8[TPL_MAX_PARAMS], c1[TPL_MAX_PARAMS];
    char err[256], opts[4096], k4[128], k8[128];
    char text[TPL_CONFIG_LEN];
    snprintf(text, sizeof text, "%s4", RT_MM_SPLIT);
    CHECK_OK(tpl_config_parse(mm, text, c4, err, sizeof err));
    snprintf(text, sizeof text, "%s8", RT_MM_SPLIT);
    CHECK_OK(tpl_config_parse(mm, text, c8, err, sizeof err));
    snprintf(text, sizeof text, "%s1", RT_MM_SPLIT);
    CHECK_OK(tpl_config_parse(mm, text, c1, err, sizeof err));
    CHECK(mm->valid(c4, NULL, NULL, 0) && mm->valid(c8, NULL, NULL, 0));
    tpl_binary_key(mm, c4, "sm_90", k4, sizeof k4);
    tpl_binary_key(mm, c8, "sm_90", k8, sizeof k8);
    CHECK_STR(k4, k8);
    tpl_options_string(mm, c8, "sm_90", opts, sizeof opts);
    CHECK_MSG(strstr(opts, "-DSPLITK=2 ") && !strstr(opts, "-DSPLITK=8"), "%s", opts);
    tpl_options_string(mm, c1, "sm_90", opts, sizeof opts);
    CHECK_MSG(strstr(opts, "-DSPLITK=1 "), "%s", opts);
    int g[TPL_MAX_PARAMS];
    CHECK_OK(tpl_config_parse(sum, "STYLE=3,FINISH=2,BLOCK=512,ITEMS=4,VEC=4,GRID=8,UNROLL=1", g,
                              err, sizeof err));
    tpl_options_string(sum, g, "sm_90", opts, sizeof opts);
    CHECK_MSG(strstr(opts, "-DGRID=1 "), "%s", opts);
}

/* The cubin of source `name` under options (space-separated words); malloc'd, NULL on a
 * failure (NVRTC's log in log). */
static void *rt_compile(const char *name, const char *options, size_t *size, char *log,
                        size_t loglen)
{
    char copy[4096];
    const char *argv[64];
    int argc = 0;
    snprintf(copy, sizeof copy, "%s", options);
    for (char *w = strtok(copy, " "); w && argc < 64; w = strtok(NULL, " "))
        argv[argc++] = w;
    nvrtcProgram prog;
    log[0] = '\0';
    if (nvrtcCreateProgram(&prog, tpl_source_text(name, NULL), name, 0, NULL, NULL) !=
        NVRTC_SUCCESS) {
        snprintf(log, loglen, "nvrtcCreateProgram failed");
        return NULL;
    }
    void *cubin = NULL;
    if (nvrtcCompileProgram(prog, argc, argv) == NVRTC_SUCCESS &&
        nvrtcGetCUBINSize(prog, size) == NVRTC_SUCCESS && (cubin = malloc(*size)) &&
        nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS) {
        free(cubin);
        cubin = NULL;
    }
    size_t n = 0;
    if (!cubin && nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n < loglen)
        nvrtcGetProgramLog(prog, log);
    nvrtcDestroyProgram(&prog);
    return cubin;
}

/* Compiled with its own value as the macro (what the key leaves out), a run-time value gives
 * the bytes of the configuration's cubin (tpl_compile: the value it compiles as): the kernel's
 * code never reads the value, it takes it at launch. */
static void rt_check_value_unused(const char *family, const char *config, const char *param,
                                  int value)
{
    const tpl_family *fam = tpl_find(family);
    int cfg[TPL_MAX_PARAMS];
    char err[256], opts[4096], from[64], to[64], raw[4096];
    CHECK_OK(tpl_config_parse(fam, config, cfg, err, sizeof err));
    int i = tpl_param_index(fam, param);
    CHECK(i >= 0 && fam->params[i].runtime_from && value > fam->params[i].runtime_from);
    cfg[i] = value;
    void *canon = NULL;
    size_t canon_size = 0, raw_size = 0;
    char *log = NULL;
    CHECK_OK(tpl_compile(fam, cfg, "sm_90", &canon, &canon_size, &log));
    free(log);
    tpl_options_string(fam, cfg, "sm_90", opts, sizeof opts);
    snprintf(from, sizeof from, "-D%s=%d ", param, fam->params[i].runtime_from);
    snprintf(to, sizeof to, "-D%s=%d ", param, value);
    char *at = strstr(opts, from);
    CHECK_MSG(at != NULL, "%s", opts);
    if (!at || !canon) {
        free(canon);
        return;
    }
    snprintf(raw, sizeof raw, "%.*s%s%s", (int)(at - opts), opts, to, at + strlen(from));
    char log2[2048];
    void *own = rt_compile(fam->source, raw, &raw_size, log2, sizeof log2);
    CHECK_MSG(own != NULL, "%s: %s", raw, log2);
    CHECK_MSG(own && raw_size == canon_size && memcmp(own, canon, raw_size) == 0,
              "%s %s=%d: the cubin compiled with -D%s=%d differs (%zu vs %zu bytes)", family,
              param, value, param, value, raw_size, canon_size);
    free(own);
    free(canon);
}

TEST(runtime_values_never_reach_the_kernel_code)
{
    rt_check_value_unused("sum", "STYLE=3,FINISH=2,BLOCK=512,ITEMS=4,VEC=4,GRID=8,UNROLL=1",
                          "GRID", 8);
    /* a small split-K tile: it compiles in half the time of RT_MM_SPLIT's (only the bytes are
     * at issue here, not its legality) */
    rt_check_value_unused("matmul", "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=64,BK=16,WM=32,WN=32,TM=4,"
                          "TN=4,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=2,FRAG=0,SK=0,FFMA=0,OPA=0,"
                          "OPB=0", "SPLITK", 8);
}

/* test_split: 8 configurations, BLOCK 128/256 x SPLIT 1, 2, 4, 8 where SPLIT is run-time
 * from 2, so 4 compile keys: the exhaustive search compiles 4 and reuses 4. */
TEST(tuner_compiles_runtime_siblings_once)
{
    char cmd[8192], dbpath[4200], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/rtsplit.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_WORKER='%s/autotune-test __fake_worker' AUTOTUNE_FAKE_DEVICES=1 "
             "%s/autotune-test --device 0 --kernel test_split --strategy exhaustive --seed 3 "
             "--db %s --quiet --jobs 2",
             th_build_dir(), th_build_dir(), dbpath);
    int rc = th_run(cmd, &out);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out ? out : "");
    CHECK_MSG(out && strstr(out, "test_split 1000003: 8 evaluated, 0 failed, 4 compiled, "
                                 "4 cubins reused"), "%s", out ? out : "");
    free(out);
}

/* ---- matmul's launch, through a driver table that records it ---- */

#define RT_MAX_LAUNCHES 8
static struct {
    char name[64];
    unsigned grid[3];
    int splits_arg;                  /* matmul_tuned's per_split / the reduce's splits */
} rt_launch[RT_MAX_LAUNCHES];
static int rt_n_launches;
static CUdeviceptr rt_next_ptr = 0x10000000;

static CUresult rt_get_function(CUfunction *fn, CUmodule module, const char *name)
{
    (void)module;
    static char names[EX_MAX_FUNCS][64];
    static int n;
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) {
            *fn = (CUfunction)names[i];
            return CUDA_SUCCESS;
        }
    if (n == EX_MAX_FUNCS)
        return CUDA_ERROR_NOT_FOUND;
    snprintf(names[n], sizeof names[n], "%s", name);
    *fn = (CUfunction)names[n++];
    return CUDA_SUCCESS;
}

static CUresult rt_get_attribute(int *value, CUfunction_attribute attr, CUfunction fn)
{
    (void)attr;
    (void)fn;
    *value = 0;
    return CUDA_SUCCESS;
}

static CUresult rt_set_attribute(CUfunction fn, CUfunction_attribute attr, int value)
{
    (void)fn;
    (void)attr;
    (void)value;
    return CUDA_SUCCESS;
}

static CUresult rt_launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                 CUstream stream, void **params, void **extra)
{
    (void)bx, (void)by, (void)bz, (void)smem, (void)stream, (void)extra;
    if (rt_n_launches == RT_MAX_LAUNCHES)
        return CUDA_ERROR_LAUNCH_FAILED;
    int i = rt_n_launches++;
    snprintf(rt_launch[i].name, sizeof rt_launch[i].name, "%s", (const char *)f);
    rt_launch[i].grid[0] = gx;
    rt_launch[i].grid[1] = gy;
    rt_launch[i].grid[2] = gz;
    rt_launch[i].splits_arg = -1;
    if (strcmp(rt_launch[i].name, "matmul_tuned") == 0 && gz > 1)
        rt_launch[i].splits_arg = *(const int *)params[16];
    else if (strcmp(rt_launch[i].name, "matmul_splitk_reduce") == 0)
        rt_launch[i].splits_arg = *(const int *)params[2];
    return CUDA_SUCCESS;
}

static CUresult rt_mem_alloc(CUdeviceptr *ptr, size_t bytes)
{
    *ptr = rt_next_ptr;
    rt_next_ptr += (bytes + 255) / 256 * 256;
    return CUDA_SUCCESS;
}

static CUresult rt_mem_free(CUdeviceptr ptr)
{
    (void)ptr;
    return CUDA_SUCCESS;
}

static CUresult rt_stream_sync(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

static CUresult rt_memset8(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    (void)dst, (void)v, (void)n, (void)s;
    return CUDA_SUCCESS;
}

static CUresult rt_memset32(CUdeviceptr dst, unsigned int v, size_t n, CUstream s)
{
    (void)dst, (void)v, (void)n, (void)s;
    return CUDA_SUCCESS;
}

/* A driver table whose launches are recorded (rt_launch) and an H200-like device. */
static void rt_recording_driver(cudrv *cu, at_device_info *dev)
{
    memset(cu, 0, sizeof *cu);
    cu->ModuleGetFunction = rt_get_function;
    cu->FuncGetAttribute = rt_get_attribute;
    cu->FuncSetAttribute = rt_set_attribute;
    cu->LaunchKernel = rt_launch_kernel;
    cu->MemAlloc = rt_mem_alloc;
    cu->MemFree = rt_mem_free;
    cu->StreamSynchronize = rt_stream_sync;
    cu->MemsetD8Async = rt_memset8;
    cu->MemsetD32Async = rt_memset32;
    memset(dev, 0, sizeof *dev);
    dev->cc_major = 9;
    snprintf(dev->arch, sizeof dev->arch, "sm_90");
    dev->sm_count = 132;
    dev->smem_per_block_optin = 227 << 10;
    dev->smem_per_sm = 228 << 10;
    dev->regs_per_block = dev->regs_per_sm = 65536;
    dev->max_threads_per_block = 1024;
    dev->max_threads_per_sm = 2048;
}

TEST(runtime_matmul_launch_passes_the_split_count)
{
    cudrv cu;
    at_device_info dev;
    rt_recording_driver(&cu, &dev);
    const tpl_family *mm = tpl_find("matmul");
    /* 13: a count off the listed values (the exact wave fill of a default row picks any) */
    const int m = 128, n = 192, k = 1000, splits[] = {4, 8, 13};
    for (int s = 0; s < 3; s++) {
        char text[TPL_CONFIG_LEN], err[256], msg[512];
        int cfg[TPL_MAX_PARAMS];
        snprintf(text, sizeof text, "%s%d", RT_MM_SPLIT, splits[s]);
        CHECK_OK(tpl_config_parse(mm, text, cfg, err, sizeof err));
        at_exec ex;
        ex_init(&ex, &cu, &dev, (CUmodule)0, (CUstream)0, msg, sizeof msg);
        tpl_args args = tpl_gemm_args(m, n, k, 1.0f, 0x20000000, k, 0x30000000, n, 0.0f,
                                      0x40000000, n);
        rt_n_launches = 0;
        CHECK_MSG(mm->run(&ex, cfg, &args) == AT_OK, "%s: %s", text, msg);
        ex_release(&ex);
        /* the main kernel over every split (grid z), each split's K steps as its argument:
         * the splits cover K (1000 = 63 steps of 16) and none is empty; then the reduction
         * of that many partials */
        CHECK_EQ(rt_n_launches, 2);
        CHECK_STR(rt_launch[0].name, "matmul_tuned");
        CHECK_EQ(rt_launch[0].grid[2], splits[s]);
        CHECK_EQ(rt_launch[0].grid[0], (m / 128) * (n / 64));
        int steps = (k + 15) / 16, per = rt_launch[0].splits_arg;
        CHECK_MSG(per > 0 && (long long)per * splits[s] >= steps &&
                      (long long)per * (splits[s] - 1) < steps,
                  "SPLITK=%d: %d steps per split of %d", splits[s], per, steps);
        CHECK_STR(rt_launch[1].name, "matmul_splitk_reduce");
        CHECK_EQ(rt_launch[1].splits_arg, splits[s]);
    }
}

/* sum's persistent grid (GRID k >= 1, one cubin): the first pass runs k x SMs blocks (the
 * input has more tiles than that), the finishing block reads as many partials. */
TEST(runtime_sum_launch_passes_the_grid)
{
    cudrv cu;
    at_device_info dev;
    rt_recording_driver(&cu, &dev);
    const tpl_family *sum = tpl_find("sum");
    const long long n = 1LL << 24;      /* 2048 tiles of 512 threads x 4 float4s */
    const int grids[] = {2, 4};
    for (int g = 0; g < 2; g++) {
        char text[TPL_CONFIG_LEN], err[256], msg[512];
        int cfg[TPL_MAX_PARAMS];
        snprintf(text, sizeof text, "STYLE=3,FINISH=2,BLOCK=512,ITEMS=4,VEC=4,GRID=%d,UNROLL=1",
                 grids[g]);
        CHECK_OK(tpl_config_parse(sum, text, cfg, err, sizeof err));
        CHECK_MSG(sum->valid(cfg, &dev, err, sizeof err), "%s: %s", text, err);
        at_exec ex;
        ex_init(&ex, &cu, &dev, (CUmodule)0, (CUstream)0, msg, sizeof msg);
        tpl_args args = tpl_reduce_args(n, 0x20000000, 0, 0x30000000);
        rt_n_launches = 0;
        CHECK_MSG(sum->run(&ex, cfg, &args) == AT_OK, "%s: %s", text, msg);
        ex_release(&ex);
        CHECK(rt_n_launches >= 1);
        CHECK_STR(rt_launch[0].name, "reduce_main");
        CHECK_EQ(rt_launch[0].grid[0], grids[g] * 132);
    }
}
