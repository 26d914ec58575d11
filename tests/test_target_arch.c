/* test_target_arch.c: a family's target_arch hook decides the NVRTC target of
 * each configuration (sm_90a for arch-specific instructions, none at all). */
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "tpl.h"

/* A kernel that only sm_90a accepts when ARCH_SPECIFIC is 1 (wgmma.fence). */
static const char arch_source[] =
    "#ifndef ARCH_SPECIFIC\n#define ARCH_SPECIFIC 0\n#endif\n"
    "extern \"C\" __global__ void probe(int *out)\n"
    "{\n"
    "#if ARCH_SPECIFIC\n"
    "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
    "#endif\n"
    "    out[0] = ARCH_SPECIFIC;\n"
    "}\n";

/* ARCH_SPECIFIC=1 runs only on sm_90 devices, compiled for sm_90a. */
static const char *probe_target(const int *cfg, const char *arch)
{
    if (!cfg[0])
        return arch;
    return strcmp(arch, "sm_90") == 0 ? "sm_90a" : NULL;
}

static const tpl_family arch_probe = {
    .name = "arch_probe", .source = "arch_probe.cu", .fixed_options = "",
    .n_params = 1, .params = {{"ARCH_SPECIFIC", 2, {0, 1}, "1 = wgmma, sm_90a only"}},
    .target_arch = probe_target,
};

TEST(target_arch_hook_picks_nvrtc_target)
{
    CHECK_EQ(tpl_register_source("arch_probe.cu", arch_source, strlen(arch_source)) >= 0, 1);
    int plain[1] = {0}, specific[1] = {1};
    CHECK(strcmp(tpl_target_arch(&arch_probe, plain, "sm_80"), "sm_80") == 0);
    CHECK(strcmp(tpl_target_arch(&arch_probe, specific, "sm_90"), "sm_90a") == 0);
    CHECK(tpl_target_arch(&arch_probe, specific, "sm_80") == NULL);

    char opts[512], key_a[256], key_b[256];
    tpl_options_string(&arch_probe, specific, "sm_90", opts, sizeof opts);
    CHECK_MSG(strstr(opts, "-arch=sm_90a") != NULL, "options: %s", opts);
    tpl_binary_key(&arch_probe, specific, "sm_90", key_a, sizeof key_a);
    tpl_binary_key(&arch_probe, plain, "sm_90", key_b, sizeof key_b);
    CHECK_MSG(strstr(key_a, "sm_90a") != NULL && strcmp(key_a, key_b) != 0, "%s / %s", key_a,
              key_b);

    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    /* The sm_90a-only instruction compiles through the hook ... */
    CHECK_OK(tpl_compile(&arch_probe, specific, "sm_90", &cubin, &size, &log));
    CHECK(cubin != NULL && size > 0);
    free(cubin);
    free(log);
    /* ... and is refused, without compiling, where the hook says no. */
    cubin = (void *)0x1;
    log = NULL;
    CHECK_EQ(tpl_compile(&arch_probe, specific, "sm_80", &cubin, &size, &log), AT_ERR_UNSUPPORTED);
    CHECK(cubin == NULL && size == 0);
    CHECK_MSG(log && strstr(log, "sm_80"), "log: %s", log ? log : "(none)");
    free(log);
    /* Without the hook the same source fails for plain sm_90: the hook is what
     * made it compile above. */
    tpl_family no_hook = arch_probe;
    no_hook.target_arch = NULL;
    log = NULL;
    CHECK_EQ(tpl_compile(&no_hook, specific, "sm_90", &cubin, &size, &log), AT_ERR_COMPILE);
    free(log);
}
