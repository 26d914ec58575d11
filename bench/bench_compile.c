/* bench_compile.c: where NVRTC's time goes, per family (no GPU needed). Modes:
 *   (default)   a configuration's whole compile to a cubin, the same to PTX only and to the
 *               front end only (-fdevice-syntax-only), an empty program under the same options
 *               (the fixed cost of a program), and N configurations in one program (each copy
 *               of the source under its own #defines and kernel names) against N programs;
 *   --trace     NVRTC's own phase timings (--fdevice-time-trace) of the default configuration:
 *               front end, NVVM optimizer and code generation, ptxas's parsing, each kernel's
 *               ptxas unit and post processing; the per-program part against the per-kernel part;
 *   --options   the default configuration with and without each option of a list (-lineinfo,
 *               --extra-device-vectorization, -G, -minimal, --pch, -split-compile=0): times,
 *               and whether the cubin bytes are the same; --try OPTION: one option;
 *   --threads T compiles of the default configuration on 1..T threads of one process against
 *               as many processes: compiles per second (does NVRTC scale in one process);
 *   --all       every mode above, under a header (date, commit, toolkit, CPU): the results file.
 * Times are the process's CPU time (NVRTC's own threads included; robust on a loaded
 * machine), the median of --reps runs; --threads measures wall time.
 * Usage: bench_compile [--arch sm_90] [--reps 3] [--n 4] [--trace | --options | --try OPTION |
 * --threads T | --all] [FAMILY...]; docs/compile.md has the results. */
#include <nvrtc.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tpl.h"

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
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

/* The default configuration of fam and its options on arch as an argv (into buf);
 * its argc, or -1 when it has none for that arch. */
static int default_argv(const tpl_family *fam, const char *arch, char *buf, size_t len,
                        const char **argv, int max)
{
    int cfg[TPL_MAX_PARAMS];
    char err[256];
    if (tpl_config_parse(fam, fam->default_config, cfg, err, sizeof err) != AT_OK ||
        !tpl_target_arch(fam, cfg, arch))
        return -1;
    tpl_options_string(fam, cfg, arch, buf, len);
    return split_options(buf, argv, max);
}

/* ---- --trace: NVRTC's own phase timings ---- */

#define TR_KERNELS 16
typedef struct trace_sum {
    double front, header, nvvm, nvvm_opt, nvvm_codegen, ptxas, ptx_parse, ptx_post;
    int n_kernels;
    char kernel[TR_KERNELS][64];
    double kernel_nvvm[TR_KERNELS], kernel_ptxas[TR_KERNELS];
} trace_sum;

/* Slot of kernel name in t (added if new), -1 when full. */
static int trace_kernel(trace_sum *t, const char *name)
{
    for (int k = 0; k < t->n_kernels; k++)
        if (strcmp(t->kernel[k], name) == 0)
            return k;
    if (t->n_kernels == TR_KERNELS)
        return -1;
    snprintf(t->kernel[t->n_kernels], sizeof t->kernel[0], "%s", name);
    return t->n_kernels++;
}

/* The string value of "key":"..." inside [from, to) into out; 1 if found. */
static int json_string(const char *from, const char *to, const char *key, char *out, size_t len)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(from, pat);
    if (!p || p >= to)
        return 0;
    p += strlen(pat);
    size_t n = strcspn(p, "\"");
    snprintf(out, len, "%.*s", (int)n, p);
    return 1;
}

/* Sums the complete events ("ph":"X") of the first trace in text: each is
 * {"args":{...},"dur":US,"name":"...",...} with its args optional. */
static void trace_parse(const char *text, trace_sum *t)
{
    memset(t, 0, sizeof *t);
    const char *end = strstr(text + 1, "{\"otherData\"");   /* a second trace appended */
    for (const char *p = text; (p = strstr(p, "\"dur\":")) != NULL && (!end || p < end); p++) {
        double ms = strtod(p + 6, NULL) / 1000.0;
        char name[128] = "", arg[128] = "";
        const char *close = strchr(p, '}');
        if (!close || !json_string(p, close, "name", name, sizeof name))
            continue;
        if (p - text > 2 && p[-1] == ',' && p[-2] == '}') {          /* args before dur */
            const char *a = p - 2;
            while (a > text && strncmp(a, "{\"args\":{", 9) != 0)
                a--;
            if (!json_string(a, p, "detail", arg, sizeof arg))
                json_string(a, p, "name", arg, sizeof arg);
        }
        if (strcmp(name, "CUDA C++ Front-End") == 0)
            t->front += ms;
        else if (strcmp(name, "Processing Header File") == 0)
            t->header += ms;
        else if (strcmp(name, "LibNVVM") == 0)
            t->nvvm += ms;
        else if (strcmp(name, "NVVM Optimizer") == 0)
            t->nvvm_opt += ms;
        else if (strcmp(name, "NVVM CodeGen") == 0)
            t->nvvm_codegen += ms;
        else if (strcmp(name, "Total PTXAS Time") == 0)
            t->ptxas += ms;
        else if (strcmp(name, "PTX parsing and setup time") == 0)
            t->ptx_parse += ms;
        else if (strcmp(name, "Post processing") == 0)
            t->ptx_post += ms;
        else if (strcmp(name, "Optimizing compilation unit") == 0 && arg[0]) {
            int k = trace_kernel(t, arg);
            if (k >= 0)
                t->kernel_ptxas[k] += ms;
        } else if (strcmp(name, "OptFunction") == 0 && arg[0] && arg[0] != '_') {
            /* extern "C" names: the kernels (device functions are mangled, _Z...) */
            int k = -1;
            for (int j = 0; j < t->n_kernels && k < 0; j++)
                if (strcmp(t->kernel[j], arg) == 0)
                    k = j;
            if (k < 0 && strncmp(arg, "__", 2) != 0 && strpbrk(arg, "(<") == NULL &&
                strlen(arg) > 4)
                k = trace_kernel(t, arg);
            if (k >= 0)
                t->kernel_nvvm[k] += ms;
        }
    }
}

/* One compile of text under argv with NVRTC's time trace; 0 and t filled, or -1. */
static int trace_compile(const char *text, const char **argv, int argc, trace_sum *t)
{
    char path[128], opt[160], file[160];
    snprintf(path, sizeof path, "/tmp/bench_compile_trace_%d", (int)getpid());
    snprintf(opt, sizeof opt, "--fdevice-time-trace=%s", path);
    snprintf(file, sizeof file, "%s.json", path);       /* NVRTC appends .json */
    remove(file);
    remove(path);
    const char *v[80];
    for (int i = 0; i < argc && i < 78; i++)
        v[i] = argv[i];
    v[argc] = opt;
    size_t size;
    void *cubin = cubin_of(text, v, argc + 1, &size);
    free(cubin);
    FILE *f = fopen(file, "r");
    if (!f)
        f = fopen(path, "r");
    if (!cubin || !f) {
        if (f)
            fclose(f);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    remove(file);
    remove(path);
    if (!buf)
        return -1;
    buf[got] = '\0';
    trace_parse(buf, t);
    free(buf);
    return 0;
}

static void trace_family(const tpl_family *fam, const char *arch)
{
    char opts[4096];
    const char *argv[64];
    int argc = default_argv(fam, arch, opts, sizeof opts, argv, 62);
    trace_sum t;
    if (argc < 0 || trace_compile(tpl_source_text(fam->source, NULL), argv, argc, &t) != 0) {
        printf("%-8s no trace\n", fam->name);
        return;
    }
    double total = t.front + t.nvvm + t.ptxas, kernels = 0;
    for (int k = 0; k < t.n_kernels; k++)
        kernels += t.kernel_nvvm[k] + t.kernel_ptxas[k];
    printf("%-8s %5.0f ms: front end %3.0f (built-in header %2.0f), NVVM %4.0f (optimizer %4.0f, "
           "codegen %3.0f), ptxas %4.0f (parse %2.0f, post %2.0f); per kernel %4.0f ms (%2.0f%%), "
           "per program %3.0f ms (%2.0f%%)\n",
           fam->name, total, t.front, t.header, t.nvvm, t.nvvm_opt, t.nvvm_codegen, t.ptxas,
           t.ptx_parse, t.ptx_post, kernels, total > 0 ? 100.0 * kernels / total : 0.0,
           total - kernels, total > 0 ? 100.0 * (total - kernels) / total : 0.0);
    for (int k = 0; k < t.n_kernels; k++)
        printf("         kernel %-22s NVVM %4.0f ms, ptxas %4.0f ms (%2.0f%% of the compile)\n",
               t.kernel[k], t.kernel_nvvm[k], t.kernel_ptxas[k],
               total > 0 ? 100.0 * (t.kernel_nvvm[k] + t.kernel_ptxas[k]) / total : 0.0);
    fflush(stdout);
}

/* ---- --threads: does NVRTC scale in one process ---- */

typedef struct scale_arg {
    const char *text;
    const char **argv;
    int argc, count;
} scale_arg;

static void *scale_thread(void *p)
{
    const scale_arg *a = p;
    for (int i = 0; i < a->count; i++)
        compile_ms(a->text, a->argv, a->argc, 1, NULL);
    return NULL;
}

/* Compiles per second of n workers (threads of this process, or processes)
 * doing count compiles each; -1 on failure. */
static double scale_rate(const scale_arg *a, int n, int processes)
{
    pthread_t th[256];
    pid_t pid[256];
    double t0 = wall_s();
    int started = 0;
    for (int i = 0; i < n; i++) {
        if (processes) {
            pid[i] = fork();
            if (pid[i] == 0) {
                scale_thread((void *)a);
                _exit(0);
            }
            if (pid[i] < 0)
                break;
        } else if (pthread_create(&th[i], NULL, scale_thread, (void *)a) != 0) {
            break;
        }
        started++;
    }
    for (int i = 0; i < started; i++) {
        if (processes)
            waitpid(pid[i], NULL, 0);
        else
            pthread_join(th[i], NULL);
    }
    double w = wall_s() - t0;
    return started == n && w > 0 ? n * a->count / w : -1;
}

static void threads_family(const tpl_family *fam, const char *arch, int max_threads, int reps)
{
    char opts[4096];
    const char *argv[64];
    int argc = default_argv(fam, arch, opts, sizeof opts, argv, 62);
    if (argc < 0)
        return;
    scale_arg a = {tpl_source_text(fam->source, NULL), argv, argc, reps};
    double one = scale_rate(&a, 1, 0);
    printf("%-8s 1 thread %5.2f compiles/s", fam->name, one);
    for (int n = 2; n <= max_threads; n *= 2) {
        double t = scale_rate(&a, n, 0), p = scale_rate(&a, n, 1);
        printf("; %d threads %5.2f/s (%.2fx), %d processes %5.2f/s (%.2fx)", n, t,
               one > 0 ? t / one : 0.0, n, p, one > 0 ? p / one : 0.0);
        if (n < max_threads && 2 * n > max_threads)
            n = max_threads / 2;       /* end at max_threads */
    }
    printf("\n");
    fflush(stdout);
}

/* ---- --options ---- */

static const char *const option_list[] = {
    "-lineinfo", "--extra-device-vectorization", "-G", "-minimal", "--pch", "-split-compile=0",
};

/* ---- the header of a results file ---- */

static void print_header(const char *arch, int reps, int n_batch)
{
    char date[64], commit[64] = "unknown", cpu[256] = "unknown", line[512];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", gmtime(&now));
    const char *env = getenv("COMMIT");
    FILE *f = env ? NULL : popen("git rev-parse --short HEAD 2>/dev/null", "r");
    if (env)
        snprintf(commit, sizeof commit, "%s", env);
    else if (f && fgets(line, sizeof line, f))
        snprintf(commit, sizeof commit, "%.*s", (int)strcspn(line, "\n"), line);
    if (f)
        pclose(f);
    f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            char *v = strchr(line, ':') + 2;
            snprintf(cpu, sizeof cpu, "%.*s", (int)strcspn(v, "\n"), v);
            break;
        }
    if (f)
        fclose(f);
    double load = -1;
    f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    printf("# bench_compile --all: where NVRTC's time goes, per family (CPU only)\n");
    printf("# date (UTC): %s  commit: %s\n", date, commit);
    printf("# toolkit: NVRTC %d.%d; target %s; median of %d; batches of %d\n", major, minor, arch,
           reps, n_batch);
    printf("# CPU: %s, %ld cores online, load average %.2f at the start\n", cpu,
           sysconf(_SC_NPROCESSORS_ONLN), load);
}

enum { MODE_PROFILE, MODE_TRACE, MODE_OPTIONS, MODE_TRY, MODE_THREADS, MODE_ALL };

static void run_mode(int mode, const tpl_family *fam, const char *arch, int reps, int n_batch,
                     const char *extra, int threads)
{
    switch (mode) {
    case MODE_PROFILE:
        profile(fam, arch, reps, n_batch);
        break;
    case MODE_TRACE:
        trace_family(fam, arch);
        break;
    case MODE_TRY:
        try_option(fam, arch, extra, reps);
        break;
    case MODE_OPTIONS:
        for (size_t i = 0; i < sizeof option_list / sizeof option_list[0]; i++)
            try_option(fam, arch, option_list[i], reps);
        break;
    case MODE_THREADS:
        threads_family(fam, arch, threads, reps);
        break;
    }
}

int main(int argc, char **argv)
{
    const char *arch = "sm_90";
    int reps = 3, n_batch = 4, mode = MODE_PROFILE, threads = 0;
    const char *extra = NULL;
    const tpl_family *named[64];
    int n_named = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
            arch = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n_batch = atoi(argv[++i]);
        else if (strcmp(argv[i], "--try") == 0 && i + 1 < argc)
            extra = argv[++i], mode = MODE_TRY;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]), mode = MODE_THREADS;
        else if (strcmp(argv[i], "--trace") == 0)
            mode = MODE_TRACE;
        else if (strcmp(argv[i], "--options") == 0)
            mode = MODE_OPTIONS;
        else if (strcmp(argv[i], "--all") == 0)
            mode = MODE_ALL;
        else if (tpl_find(argv[i]) && n_named < 64)
            named[n_named++] = tpl_find(argv[i]);
        else {
            fprintf(stderr, "bench_compile: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1 || reps > 15)
        reps = 3;
    if (n_batch < 1 || n_batch > 16)
        n_batch = 4;
    if (threads < 1)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads > 256)
        threads = 256;
    if (n_named == 0)
        for (int f = 0; f < tpl_family_count() && n_named < 64; f++)
            if (!tpl_family_at(f)->hidden)
                named[n_named++] = tpl_family_at(f);
    if (mode == MODE_ALL) {
        print_header(arch, reps, n_batch);
    } else {
        int major = 0, minor = 0;
        nvrtcVersion(&major, &minor);
        printf("NVRTC %d.%d, %s, process CPU time, median of %d\n", major, minor, arch, reps);
    }
    /* NVRTC's one-time start-up is paid here, outside every measurement */
    const char *warm[] = {"-arch=sm_80"};
    compile_ms("extern \"C\" __global__ void k(float *p) { p[0] = 1.0f; }\n", warm, 1, 1, NULL);
    if (mode != MODE_ALL) {
        for (int i = 0; i < n_named; i++)
            run_mode(mode, named[i], arch, reps, n_batch, extra, threads);
        return 0;
    }
    static const struct { int mode; const char *title; } part[] = {
        {MODE_PROFILE, "whole compile (process CPU): front end, NVVM, ptxas by subtraction; an "
                       "empty program; N configurations as N programs and as one"},
        {MODE_TRACE, "NVRTC's time trace (--fdevice-time-trace) of the default configuration: "
                     "phases, each kernel, per kernel against per program"},
        {MODE_OPTIONS, "options: the default configuration with and without each (process CPU; "
                       "cubin bytes compared)"},
        {MODE_THREADS, "concurrency: compiles per second on threads of one process and on "
                       "processes (wall)"},
    };
    for (size_t p = 0; p < sizeof part / sizeof part[0]; p++) {
        printf("\n## %s\n", part[p].title);
        for (int i = 0; i < n_named; i++)
            run_mode(part[p].mode, named[i], arch, reps, n_batch, extra, threads);
    }
    return 0;
}
