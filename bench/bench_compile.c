/* bench_compile.c: where NVRTC's time goes, per family (no GPU needed):
 * a configuration's whole compile to a cubin, the same to PTX only (front end
 * and NVVM, no ptxas) and to the front end only (-fdevice-syntax-only), an
 * empty program under the same options (the fixed
 * cost of a program), and N configurations in one program (each copy of the
 * source under its own -D values and kernel names) against N programs.
 * Times are the compiling thread's CPU time (robust on a loaded machine),
 * the median of --reps runs. With --try OPTION: each default configuration
 * with and without OPTION (times, and whether the cubin bytes are the same).
 * Usage: bench_compile [--arch sm_90] [--reps 3] [--n 4] [--try OPTION]
 * [FAMILY...]; docs/compile.md has the results. */
#include <nvrtc.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tpl.h"

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Splits "a b c" into argv (pointers into buf). */
static int split_options(char *buf, const char **argv, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok && n < max;
         tok = strtok_r(NULL, " ", &save))
        argv[n++] = tok;
    return n;
}

/* CPU ms of one NVRTC compile of text under argv; cubin: 1 to fetch it. -1 on failure. */
static double compile_ms(const char *text, const char **argv, int argc, int cubin, size_t *out_size)
{
    nvrtcProgram prog;
    double t0 = cpu_ms();
    if (nvrtcCreateProgram(&prog, text, "bench.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return -1;
    nvrtcResult rc = nvrtcCompileProgram(prog, argc, argv);
    size_t size = 0;
    if (rc == NVRTC_SUCCESS) {
        if (cubin)
            nvrtcGetCUBINSize(prog, &size);
        else
            nvrtcGetPTXSize(prog, &size);
        char *buf = malloc(size ? size : 1);
        if (cubin)
            nvrtcGetCUBIN(prog, buf);
        else
            nvrtcGetPTX(prog, buf);
        free(buf);
    } else {
        size_t ls = 0;
        nvrtcGetProgramLogSize(prog, &ls);
        char *log = malloc(ls + 1);
        nvrtcGetProgramLog(prog, log);
        fprintf(stderr, "compile failed: %.600s\n", log);
        free(log);
    }
    nvrtcDestroyProgram(&prog);
    if (out_size)
        *out_size = size;
    return rc == NVRTC_SUCCESS ? cpu_ms() - t0 : -1;
}

/* The cubin of text under argv (malloc'd), NULL on failure. */
static void *cubin_of(const char *text, const char **argv, int argc, size_t *size)
{
    nvrtcProgram prog;
    void *buf = NULL;
    *size = 0;
    if (nvrtcCreateProgram(&prog, text, "bench.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return NULL;
    if (nvrtcCompileProgram(prog, argc, argv) == NVRTC_SUCCESS &&
        nvrtcGetCUBINSize(prog, size) == NVRTC_SUCCESS && (buf = malloc(*size)) &&
        nvrtcGetCUBIN(prog, buf) != NVRTC_SUCCESS) {
        free(buf);
        buf = NULL;
    }
    nvrtcDestroyProgram(&prog);
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_ms(const char *text, const char **argv, int argc, int cubin, int reps)
{
    double t[16];
    for (int r = 0; r < reps; r++)
        if ((t[r] = compile_ms(text, argv, argc, cubin, NULL)) < 0)
            return -1;
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    return t[reps / 2];
}

/* The source of fam with N copies, copy i under the -D values of cfgs[i] and
 * every extern "C" kernel renamed NAME_ci; malloc'd. */
static char *batched_source(const tpl_family *fam, int (*cfgs)[TPL_MAX_PARAMS], int n)
{
    const char *src = tpl_source_text(fam->source, NULL);
    size_t cap = (strlen(src) + 8192) * (size_t)n + 1, used = 0;
    char *out = malloc(cap);
    regex_t re;
    /* the kernel's name: the last "identifier(" before its body (past any
     * __launch_bounds__(...)) */
    regcomp(&re, "extern \"C\"[^;{]*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[ \n]*\\([^;{()]*\\)[ \n]*\\{",
            REG_EXTENDED);
    for (int c = 0; c < n; c++) {
        for (int p = 0; p < fam->n_params; p++) {
            if (fam->params[p].host_only)
                continue;
            used += (size_t)snprintf(out + used, cap - used, "#undef %s\n#define %s %d\n",
                                     fam->params[p].name, fam->params[p].name, cfgs[c][p]);
        }
        const char *at = src;
        regmatch_t m[2];
        while (regexec(&re, at, 2, m, 0) == 0) {
            char name[128];
            int len = (int)(m[1].rm_eo - m[1].rm_so);
            snprintf(name, sizeof name, "%.*s", len, at + m[1].rm_so);
            used += (size_t)snprintf(out + used, cap - used, "#define %s %s_c%d\n", name, name, c);
            at += m[0].rm_eo;
        }
        used += (size_t)snprintf(out + used, cap - used, "namespace copy%d {\n%s\n}\n", c, src);
        at = src;
        while (regexec(&re, at, 2, m, 0) == 0) {
            int len = (int)(m[1].rm_eo - m[1].rm_so);
            used += (size_t)snprintf(out + used, cap - used, "#undef %.*s\n", len,
                                     at + m[1].rm_so);
            at += m[0].rm_eo;
        }
    }
    regfree(&re);
    return out;
}

static void profile(const tpl_family *fam, const char *arch, int reps, int n_batch)
{
    at_device_info dev;
    memset(&dev, 0, sizeof dev);
    dev.cc_major = arch[3] - '0';
    dev.cc_minor = arch[4] - '0';
    snprintf(dev.arch, sizeof dev.arch, "%s", arch);
    dev.sm_count = 132;
    dev.smem_per_block_optin = 227 << 10;
    dev.smem_per_sm = 228 << 10;
    dev.regs_per_block = dev.regs_per_sm = 65536;
    dev.max_threads_per_block = 1024;
    dev.max_threads_per_sm = 2048;
    long long *valid = NULL;
    long long nv = tpl_valid_configs(fam, &dev, &valid);
    if (nv <= 0) {
        printf("%-8s no valid configuration on %s\n", fam->name, arch);
        return;
    }
    int cfgs[16][TPL_MAX_PARAMS], n = 0;
    char err[256];
    if (tpl_config_parse(fam, fam->default_config, cfgs[0], err, sizeof err) == AT_OK &&
        tpl_target_arch(fam, cfgs[0], arch))
        n = 1;
    for (long long k = 0; n < n_batch && k < nv; k += nv / n_batch + 1) {
        tpl_config_from_index(fam, valid[k], cfgs[n]);
        n += tpl_target_arch(fam, cfgs[n], arch) != NULL;
    }
    free(valid);
    if (n < 1)
        return;
    /* options of the first configuration (its target arch) */
    char opts[4096], ptx_opts[4096], empty_opts[4096];
    const char *argv[64], *pargv[64], *eargv[64];
    tpl_options_string(fam, cfgs[0], arch, opts, sizeof opts);
    snprintf(ptx_opts, sizeof ptx_opts, "%s", opts);
    char *a = strstr(ptx_opts, "-arch=sm_");
    if (a)
        memmove(a + 14, a + 9, strlen(a + 9) + 1), memcpy(a, "-arch=compute_", 14);
    snprintf(empty_opts, sizeof empty_opts, "%s", opts);
    int argc = split_options(opts, argv, 64), pargc = split_options(ptx_opts, pargv, 64);
    int eargc = split_options(empty_opts, eargv, 64);
    const char *src = tpl_source_text(fam->source, NULL);
    double full = median_ms(src, argv, argc, 1, reps);
    double ptx = median_ms(src, pargv, pargc, 0, reps);
    /* the front end alone: parsing and checking, no code generated */
    pargv[pargc] = "-fdevice-syntax-only";
    double front = median_ms(src, pargv, pargc + 1, 0, reps);
    double empty = median_ms("extern \"C\" __global__ void k(float *p) { p[0] = 1.0f; }\n",
                             eargv, eargc, 1, reps);
    /* N configurations: N programs against one program */
    double separate = 0;
    for (int c = 0; c < n; c++) {
        char o[4096];
        const char *v[64];
        tpl_options_string(fam, cfgs[c], arch, o, sizeof o);
        /* the -D values go into the text for the batched program; here as options */
        int vc = split_options(o, v, 64);
        double t = median_ms(src, v, vc, 1, reps);
        separate += t < 0 ? 0 : t;
    }
    /* the batched program's options: arch and fixed ones, no -D */
    const char *bargv[64];
    int bargc = 0;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "-D", 2) != 0)
            bargv[bargc++] = argv[i];
    char *batch = batched_source(fam, cfgs, n);
    if (getenv("BENCH_COMPILE_DUMP")) {
        FILE *f = fopen(getenv("BENCH_COMPILE_DUMP"), "w");
        if (f) {
            fputs(batch, f);
            fclose(f);
        }
    }
    double together = median_ms(batch, bargv, bargc, 1, reps);
    free(batch);
    printf("%-8s %-7s full %6.0f ms: front end %5.0f, NVVM %5.0f, ptxas %5.0f (%3.0f%%); "
           "empty program %4.0f ms (%4.1f%%); %d configs: %6.0f ms as %d programs, %6.0f ms "
           "as one (%+.0f%%)\n",
           fam->name, tpl_target_arch(fam, cfgs[0], arch), full, front, ptx - front, full - ptx,
           full > 0 && ptx > 0 ? 100.0 * (full - ptx) / full : 0.0, empty,
           full > 0 ? 100.0 * empty / full : 0.0, n, separate, n, together,
           together > 0 && separate > 0 ? 100.0 * (together - separate) / separate : 0.0);
    fflush(stdout);
}

/* The default configuration of fam compiled with and without the extra
 * option: both times, and whether the cubins are the same bytes. */
static void try_option(const tpl_family *fam, const char *arch, const char *extra, int reps)
{
    int cfg[TPL_MAX_PARAMS];
    char err[256], opts[4096];
    const char *argv[64];
    if (tpl_config_parse(fam, fam->default_config, cfg, err, sizeof err) != AT_OK ||
        !tpl_target_arch(fam, cfg, arch))
        return;
    tpl_options_string(fam, cfg, arch, opts, sizeof opts);
    int argc = split_options(opts, argv, 63);
    const char *src = tpl_source_text(fam->source, NULL);
    double base = median_ms(src, argv, argc, 1, reps);
    size_t n0 = 0, n1 = 0;
    void *c0 = cubin_of(src, argv, argc, &n0);
    argv[argc] = extra;
    double with = median_ms(src, argv, argc + 1, 1, reps);
    void *c1 = cubin_of(src, argv, argc + 1, &n1);
    printf("%-8s %s: %6.0f ms, with %s %6.0f ms (%+.0f%%); cubin %s\n", fam->name, arch, base,
           extra, with, base > 0 && with > 0 ? 100.0 * (with - base) / base : 0.0,
           !c0 || !c1 ? "(a compile failed)"
           : n0 == n1 && memcmp(c0, c1, n0) == 0 ? "the same bytes" : "other bytes");
    fflush(stdout);
    free(c0);
    free(c1);
}

int main(int argc, char **argv)
{
    const char *arch = "sm_90";
    int reps = 3, n_batch = 4, named = 0;
    const char *extra = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
            arch = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n_batch = atoi(argv[++i]);
        else if (strcmp(argv[i], "--try") == 0 && i + 1 < argc)
            extra = argv[++i];
    }
    if (reps < 1 || reps > 15)
        reps = 3;
    if (n_batch < 1 || n_batch > 16)
        n_batch = 4;
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    printf("NVRTC %d.%d, %s, thread CPU time, median of %d\n", major, minor, arch, reps);
    /* NVRTC's one-time start-up is paid here, outside every measurement */
    const char *warm[] = {"-arch=sm_80"};
    compile_ms("extern \"C\" __global__ void k(float *p) { p[0] = 1.0f; }\n", warm, 1, 1, NULL);
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            i++;
            continue;
        }
        const tpl_family *fam = tpl_find(argv[i]);
        if (fam) {
            if (extra)
                try_option(fam, arch, extra, reps);
            else
                profile(fam, arch, reps, n_batch);
            named = 1;
        }
    }
    for (int f = 0; !named && f < tpl_family_count(); f++) {
        if (tpl_family_at(f)->hidden)
            continue;
        if (extra)
            try_option(tpl_family_at(f), arch, extra, reps);
        else
            profile(tpl_family_at(f), arch, reps, n_batch);
    }
    return 0;
}
