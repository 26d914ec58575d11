/* test_compile_kernels.c: a configuration's cubin holds the kernels its host code can
 * launch and no other (matmul's pack and split-K pass, the reductions' second pass), and
 * leaving the others out leaves the launched kernels' machine code byte for byte the same. */
#include <nvrtc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "th_compile.h"
#include "tpl.h"

/* The bytes of the ELF64 section named name in cubin (NULL if absent). */
static const unsigned char *elf_section(const void *cubin, size_t size, const char *name,
                                        size_t *len)
{
    const unsigned char *b = cubin;
    *len = 0;
    if (size < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != 2)
        return NULL;
    uint64_t shoff;
    uint16_t shentsize, shnum, shstrndx;
    memcpy(&shoff, b + 0x28, 8);
    memcpy(&shentsize, b + 0x3A, 2);
    memcpy(&shnum, b + 0x3C, 2);
    memcpy(&shstrndx, b + 0x3E, 2);
    if (shentsize < 64 || shstrndx >= shnum || shoff + (uint64_t)shnum * shentsize > size)
        return NULL;
    const unsigned char *strtab_sh = b + shoff + (uint64_t)shstrndx * shentsize;
    uint64_t str_off, str_size;
    memcpy(&str_off, strtab_sh + 0x18, 8);
    memcpy(&str_size, strtab_sh + 0x20, 8);
    if (str_off + str_size > size)
        return NULL;
    for (uint16_t i = 0; i < shnum; i++) {
        const unsigned char *sh = b + shoff + (uint64_t)i * shentsize;
        uint32_t name_at;
        uint64_t off, sz;
        memcpy(&name_at, sh, 4);
        memcpy(&off, sh + 0x18, 8);
        memcpy(&sz, sh + 0x20, 8);
        if (name_at >= str_size || off + sz > size)
            continue;
        if (strncmp((const char *)b + str_off + name_at, name, str_size - name_at) == 0) {
            *len = (size_t)sz;
            return b + off;
        }
    }
    return NULL;
}

/* 1 if the cubin holds the kernel's machine code (its .text section). */
static int has_kernel(const void *cubin, size_t size, const char *kernel)
{
    char section[128];
    size_t len;
    snprintf(section, sizeof section, ".text.%s", kernel);
    return elf_section(cubin, size, section, &len) != NULL;
}

static void h200(at_device_info *dev)
{
    memset(dev, 0, sizeof *dev);
    dev->cc_major = 9;
    dev->sm_count = 132;
    dev->smem_per_block_optin = 232448;
    dev->smem_per_sm = 233472;
    dev->regs_per_block = dev->regs_per_sm = 65536;
    dev->max_threads_per_block = 1024;
    dev->max_threads_per_sm = 2048;
    tpl_arch_name(9, 0, dev->arch, sizeof dev->arch);
}

/* Up to max valid configurations of fam on an H200, spread over its space, the
 * first for which each of up to two predicates on the named parameters holds and
 * fails (so both sides of every rule are compiled). Returns how many. */
static int pick_configs(const tpl_family *fam, const char *const *names, int n_names,
                        th_compiled *set, int max)
{
    at_device_info dev;
    h200(&dev);
    long long *valid = NULL, nv = tpl_valid_configs(fam, &dev, &valid);
    int n = 0, seen[4][2] = {{0}};
    int idx[4];
    for (int k = 0; k < n_names; k++)
        idx[k] = tpl_param_index(fam, names[k]);
    /* every combination of "first value / another value" of the named parameters */
    for (long long v = 0; v < nv && n < max; v++) {
        int cfg[TPL_MAX_PARAMS];
        tpl_config_from_index(fam, valid[(v * 7919) % nv], cfg);
        int fresh = 0;
        for (int k = 0; k < n_names; k++) {
            int side = idx[k] >= 0 && cfg[idx[k]] != fam->params[idx[k]].values[0];
            fresh |= !seen[k][side];
        }
        if (!fresh)
            continue;
        for (int k = 0; k < n_names; k++)
            seen[k][idx[k] >= 0 && cfg[idx[k]] != fam->params[idx[k]].values[0]] = 1;
        memset(&set[n], 0, sizeof set[n]);
        set[n].fam = fam;
        memcpy(set[n].cfg, cfg, sizeof cfg);
        tpl_config_format(fam, cfg, set[n].text, sizeof set[n].text);
        set[n].arch = "sm_90";
        n++;
    }
    free(valid);
    return n;
}

static int param(const tpl_family *fam, const int *cfg, const char *name)
{
    int i = tpl_param_index(fam, name);
    return i >= 0 ? cfg[i] : -1;
}

TEST(compile_cubin_holds_the_kernels_its_host_code_launches)
{
    const char *mm_names[] = {"VEC", "SPLITK", "SK", "ALGO"};
    const tpl_family *mm = tpl_find("matmul"), *sum = tpl_find("sum"), *dot = tpl_find("dot");
    const char *rd_names[] = {"FINISH"};
    CHECK(mm && sum && dot);
    if (!mm || !sum || !dot)
        return;
    th_compiled set[12];
    int n = pick_configs(mm, mm_names, 4, set, 6);
    n += pick_configs(sum, rd_names, 1, set + n, 3);
    n += pick_configs(dot, rd_names, 1, set + n, 3);
    CHECK(n >= 8);
    if (!th_compile_all(set, n)) {
        th_release_compiled(set, n);
        return;
    }
    int saw[3][2] = {{0}};
    for (int i = 0; i < n; i++) {
        const tpl_family *f = set[i].fam;
        const int *c = set[i].cfg;
        if (f == mm) {
            /* matmul.c: ALGO 0 and 1 run their one kernel; ALGO 2 the main kernel
             * (matmul_tuned, or matmul_streamk with SK 1), the pack only with VEC 4 and
             * the split-K pass only with SPLITK > 1 */
            int algo = param(f, c, "ALGO");
            int pack = algo == 2 && param(f, c, "VEC") == 4;
            int split = algo == 2 && param(f, c, "SPLITK") > 1;
            const char *main = algo == 0 ? "matmul_naive" : algo == 1 ? "matmul_tiled"
                               : param(f, c, "SK") == 1 ? "matmul_streamk" : "matmul_tuned";
            CHECK_MSG(has_kernel(set[i].cubin, set[i].size, main), "%s: no %s", set[i].text, main);
            CHECK_MSG(has_kernel(set[i].cubin, set[i].size, "matmul_pack_b") == pack,
                      "%s: matmul_pack_b %s", set[i].text, pack ? "missing" : "compiled");
            CHECK_MSG(has_kernel(set[i].cubin, set[i].size, "matmul_splitk_reduce") == split,
                      "%s: matmul_splitk_reduce %s", set[i].text, split ? "missing" : "compiled");
            saw[0][pack] = saw[1][split] = 1;
        } else {
            /* reduce.c: the second pass only with FINISH 1 */
            int second = param(f, c, "FINISH") == 1;
            CHECK_MSG(has_kernel(set[i].cubin, set[i].size, "reduce_main"), "%s: no reduce_main",
                      set[i].text);
            CHECK_MSG(has_kernel(set[i].cubin, set[i].size, "reduce_finish") == second,
                      "%s %s: reduce_finish %s", f->name, set[i].text,
                      second ? "missing" : "compiled");
            saw[2][second] = 1;
        }
    }
    /* both sides of each rule were compiled */
    for (int r = 0; r < 3; r++)
        CHECK_MSG(saw[r][0] && saw[r][1], "rule %d: only one side among the picked configurations",
                  r);
    th_release_compiled(set, n);
}

/* The cubin of text (one occurrence of from replaced by to) under cfg's options. */
static void *compile_edited(const tpl_family *fam, const int *cfg, const char *from,
                            const char *to, size_t *size)
{
    const char *src = tpl_source_text(fam->source, NULL);
    const char *at = src ? strstr(src, from) : NULL;
    *size = 0;
    if (!at)
        return NULL;
    size_t len = strlen(src) + strlen(to) + 1;
    char *text = malloc(len);
    snprintf(text, len, "%.*s%s%s", (int)(at - src), src, to, at + strlen(from));
    char opts[4096];
    tpl_options_string(fam, cfg, "sm_90", opts, sizeof opts);
    const char *argv[64];
    int argc = 0;
    for (char *save = NULL, *tok = strtok_r(opts, " ", &save); tok && argc < 64;
         tok = strtok_r(NULL, " ", &save))
        argv[argc++] = tok;
    nvrtcProgram prog;
    void *cubin = NULL;
    if (nvrtcCreateProgram(&prog, text, fam->source, 0, NULL, NULL) == NVRTC_SUCCESS) {
        if (nvrtcCompileProgram(prog, argc, argv) == NVRTC_SUCCESS &&
            nvrtcGetCUBINSize(prog, size) == NVRTC_SUCCESS && (cubin = malloc(*size)) &&
            nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS) {
            free(cubin);
            cubin = NULL;
        }
        nvrtcDestroyProgram(&prog);
    }
    free(text);
    return cubin;
}

/* cfg compiled as shipped and with the guard of an unlaunched kernel opened:
 * the second has that kernel, and the launched kernel's machine code is the same
 * bytes in both. */
static void check_guard(const tpl_family *fam, const char *config, const char *guard,
                        const char *skipped, const char *launched)
{
    int cfg[TPL_MAX_PARAMS];
    char err[512];
    CHECK_OK(tpl_config_parse(fam, config, cfg, err, sizeof err));
    void *shipped = NULL, *open = NULL;
    size_t n_shipped = 0, n_open = 0, a_len = 0, b_len = 0;
    char *log = NULL;
    CHECK_OK(tpl_compile(fam, cfg, "sm_90", &shipped, &n_shipped, &log));
    free(log);
    open = compile_edited(fam, cfg, guard, "#if 1", &n_open);
    CHECK_MSG(shipped && open, "%s %s: a compile failed", fam->name, config);
    if (shipped && open) {
        CHECK(!has_kernel(shipped, n_shipped, skipped));
        CHECK(has_kernel(open, n_open, skipped));
        char section[128];
        snprintf(section, sizeof section, ".text.%s", launched);
        const unsigned char *a = elf_section(shipped, n_shipped, section, &a_len);
        const unsigned char *b = elf_section(open, n_open, section, &b_len);
        CHECK_MSG(a && b && a_len == b_len && a_len > 0 && memcmp(a, b, a_len) == 0,
                  "%s %s: %s's code differs (%zu against %zu bytes)", fam->name, config,
                  launched, a_len, b_len);
    }
    free(shipped);
    free(open);
}

/* fam's default configuration with the named parameter set to value, as text. */
static void default_with(const tpl_family *fam, const char *name, int value, char *out,
                         size_t len)
{
    int cfg[TPL_MAX_PARAMS];
    char err[512];
    out[0] = '\0';
    if (tpl_config_parse(fam, fam->default_config, cfg, err, sizeof err) != AT_OK)
        return;
    int i = tpl_param_index(fam, name);
    if (i >= 0)
        cfg[i] = value;
    tpl_config_format(fam, cfg, out, len);
}

TEST(compile_skipped_kernels_leave_the_launched_code_the_same)
{
    char cfg[TPL_CONFIG_LEN];
    const tpl_family *mm = tpl_find("matmul");
    CHECK(mm != NULL);
    if (!mm)
        return;
    /* matmul's default (VEC 4, SPLITK 1): the split-K pass left out */
    default_with(mm, "SPLITK", 1, cfg, sizeof cfg);
    check_guard(mm, cfg, "#if SPLITK > 1", "matmul_splitk_reduce", "matmul_tuned");
    /* matmul's default with VEC 1: the pack left out */
    default_with(mm, "VEC", 1, cfg, sizeof cfg);
    check_guard(mm, cfg, "#if VEC == 4", "matmul_pack_b", "matmul_tuned");
    /* sum's default with FINISH 2: the second pass left out */
    const tpl_family *sum = tpl_find("sum");
    CHECK(sum != NULL);
    if (sum) {
        default_with(sum, "FINISH", 2, cfg, sizeof cfg);
        check_guard(sum, cfg, "#if FINISH == 1", "reduce_finish", "reduce_main");
    }
}
