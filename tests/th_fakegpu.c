/* th_fakegpu.c: the child-process runner and the fake driver's hooks for the host-path tests
 * (th_fakegpu.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db.h"
#include "handle.h"
#include "harness.h"
#include "lookup.h"
#include "th_fakegpu.h"
#include "trial.h"

/* The fake driver's library as the child loaded it, NULL in any other process. */
static void *th_fake_lib(void)
{
    const char *path = getenv("AUTOTUNE_CUDA_LIB");
    if (!path || !strstr(path, "libfakecuda"))
        return NULL;
    return dlopen(path, RTLD_NOW | RTLD_NOLOAD);
}

int th_fake_child(const char *name)
{
    if (th_fake_lib())
        return 1;
    char lib[4200], cmd[9000];
    snprintf(lib, sizeof lib, "%s/libfakecuda.so", th_build_dir());
    FILE *f = fopen(lib, "rb");
    if (!f) {
        th_fail(__FILE__, __LINE__, "%s is missing (make builds it with run_tests)", lib);
        return 0;
    }
    fclose(f);
    /* the child's database and shipped layers are its own: no shipped file is read */
    snprintf(cmd, sizeof cmd,
             "AUTOTUNE_CUDA_LIB='%s' AUTOTUNE_SHIPPED_DB= AUTOTUNE_VENDOR= AUTOTUNE_GEMM_FAMILY= "
             "TMPDIR='%s' '%s/run_tests' '%s' 2>&1", lib, th_tmpdir(), th_build_dir(), name);
    char *out = NULL;
    int rc = th_run(cmd, &out);
    int passed = rc == 0 && out && strstr(out, "1 passed, 0 failed");
    if (!passed)
        th_fail(__FILE__, __LINE__, "%s under the fake driver (exit %d):\n%s", name, rc,
                out ? out : "(no output)");
    free(out);
    return 0;
}

long long th_fake_count(const char *name)
{
    void *lib = th_fake_lib();
    long long (*fn)(const char *) = lib ? (long long (*)(const char *))dlsym(lib, "fakecuda_count")
                                        : NULL;
    return fn ? fn(name) : -1;
}

void th_fake_reset(void)
{
    void *lib = th_fake_lib();
    void (*fn)(void) = lib ? (void (*)(void))dlsym(lib, "fakecuda_reset") : NULL;
    if (fn)
        fn();
}

int th_fake_last_module(void)
{
    void *lib = th_fake_lib();
    int (*fn)(void) = lib ? (int (*)(void))dlsym(lib, "fakecuda_last_module") : NULL;
    return fn ? fn() : -1;
}

CUstream th_fake_last_stream(void)
{
    void *lib = th_fake_lib();
    CUstream (*fn)(void) = lib ? (CUstream (*)(void))dlsym(lib, "fakecuda_last_stream") : NULL;
    return fn ? fn() : NULL;
}

/* Calls the fake driver's setter `entry` (module, ms), where the fake is loaded. */
static void th_fake_set_module_time(const char *entry, int module, float ms)
{
    void *lib = th_fake_lib();
    void (*fn)(int, float) = lib ? (void (*)(int, float))dlsym(lib, entry) : NULL;
    if (fn)
        fn(module, ms);
}

void th_fake_set_module_ms(int module, float ms)
{
    th_fake_set_module_time("fakecuda_set_module_ms", module, ms);
}

void th_fake_set_module_first_ms(int module, float ms)
{
    th_fake_set_module_time("fakecuda_set_module_first_ms", module, ms);
}

size_t th_fake_live_bytes(void)
{
    void *lib = th_fake_lib();
    size_t (*fn)(void) = lib ? (size_t (*)(void))dlsym(lib, "fakecuda_live_bytes") : NULL;
    return fn ? fn() : 0;
}

void th_fake_set_memory_limit(size_t bytes)
{
    void *lib = th_fake_lib();
    void (*fn)(size_t) = lib ? (void (*)(size_t))dlsym(lib, "fakecuda_set_memory_limit") : NULL;
    if (fn)
        fn(bytes);
}

void th_fake_make_current(at_handle *h)
{
    CUcontext current = NULL;
    if (h->cu->CtxGetCurrent(&current) == CUDA_SUCCESS && current != h->ctx)
        h->cu->CtxPushCurrent(h->ctx);
}

/* A stand-in cubin for fam's cfg in h's database. */
static at_status th_fake_put(at_handle *h, const tpl_family *fam, const int *cfg,
                             const char *config)
{
    char key[128];
    tpl_binary_key(fam, cfg, h->info.arch, key, sizeof key);
    static const char image[] = "fake cubin";
    return db_put_binary(h->db, key, fam->name, tpl_source_hash(fam), config, h->info.arch,
                         tpl_nvrtc_version(), "fake", image, sizeof image);
}

at_status th_fake_prestore(at_handle *h, const tpl_problem *p, int no_trials)
{
    if (!h->db)
        return AT_ERR_DB;
    const tpl_family *fams[32];
    int n = lk_gemm_families(p, lk_gemm_main_family(p), fams, 32);
    for (int i = 0; i < n; i++) {
        if (!tpl_family_accepts(fams[i], p))
            continue;
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN];
        int which = -1;
        at_lookup_level level = lk_choose_layers(h->layers, h->n_layers, &h->info, fams[i], p,
                                                 h->deterministic, cfg, config, &which);
        if (level == AT_LOOKUP_NONE)
            continue;
        at_status s = th_fake_put(h, fams[i], cfg, config);
        if (s != AT_OK || no_trials)
            continue;
        at_trial_request rq = {.layers = h->layers, .n_layers = h->n_layers, .dev = &h->info,
                               .fam = fams[i], .problem = p, .level = level, .cfg = cfg,
                               .config = config, .trial_max = AT_TRIALS_MAX};
        at_trial_candidate cands[AT_TRIALS_MAX];
        int nc = at_trial_candidates(&rq, cands, AT_TRIALS_MAX);
        for (int c = 0; c < nc; c++)
            th_fake_put(h, cands[c].fam, cands[c].cfg, cands[c].config);
    }
    return AT_OK;
}
