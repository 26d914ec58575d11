/* th_family.c: helpers of the kernel-family tests: a configuration text parsed or the test
 * failed with the parser's reason; every configuration of a space judged and its rejections
 * counted by reason; a nominal H100; cases of problems and configurations checked legal and
 * verified on the GPU; a kernel's CPU emulator built and run per configuration. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "measure.h"
#include "th_family.h"

int th_parse_config(const tpl_family *fam, const char *text, int *cfg, const char *file,
                    int line)
{
    char err[256];
    if (tpl_config_parse(fam, text, cfg, err, sizeof err) != AT_OK) {
        th_fail(file, line, "parse \"%s\": %s", text, err);
        return 0;
    }
    return 1;
}

int th_scan_reasons(const tpl_family *fam, const at_device_info *dev,
                    const char *const *reasons, int n_reasons, long long *seen,
                    long long *valid, const char *file, int line)
{
    long long size = tpl_space_size(fam);
    *valid = 0;
    for (long long i = 0; i < size; i++) {
        int cfg[TPL_MAX_PARAMS];
        char why[512];
        tpl_config_from_index(fam, i, cfg);
        if (fam->valid(cfg, dev, why, sizeof why)) {
            (*valid)++;
            continue;
        }
        int r = 0;
        while (r < n_reasons && strcmp(why, reasons[r]) != 0)
            r++;
        if (r == n_reasons) {
            th_fail(file, line, "%s: unlisted reason: %s", fam->name, why);
            return 0;
        }
        seen[r]++;
    }
    return 1;
}

at_device_info th_h100(const char *uuid)
{
    at_device_info dev;
    memset(&dev, 0, sizeof dev);
    if (uuid)
        snprintf(dev.uuid, sizeof dev.uuid, "%s", uuid);
    dev.cc_major = 9;
    dev.sm_count = 132;
    dev.smem_per_block_optin = 232448;
    dev.smem_per_sm = 233472;
    dev.regs_per_block = dev.regs_per_sm = 65536;
    dev.max_threads_per_block = 1024;
    dev.max_threads_per_sm = 2048;
    tpl_arch_name(9, 0, dev.arch, sizeof dev.arch);
    return dev;
}

/* 1 if case c parses (into p and cfg), is valid on dev and serves its problem; else 0 after
 * failing the test at the caller's file and line. */
static int th_case_legal(const tpl_family *fam, const at_device_info *dev, const th_case *c,
                         tpl_problem *p, int *cfg, const char *file, int line)
{
    char err[1024];
    if (tpl_problem_parse(c->problem, p, err, sizeof err) != AT_OK ||
        tpl_config_parse(fam, c->config, cfg, err, sizeof err) != AT_OK) {
        th_fail(file, line, "%s on %s: %s", c->config, c->problem, err);
        return 0;
    }
    if (!fam->valid(cfg, dev, err, sizeof err)) {
        th_fail(file, line, "%s: %s", c->config, err);
        return 0;
    }
    if (!fam->applicable(cfg, p)) {
        th_fail(file, line, "%s does not serve %s", c->config, c->problem);
        return 0;
    }
    return 1;
}

void th_check_cases_legal(const tpl_family *fam, const at_device_info *dev,
                          const th_case *cases, size_t n, const char *file, int line)
{
    for (size_t i = 0; i < n; i++) {
        tpl_problem p;
        int cfg[TPL_MAX_PARAMS];
        if (!th_case_legal(fam, dev, &cases[i], &p, cfg, file, line))
            return;
    }
}

void th_verify_cases_on_gpu(const tpl_family *fam, const th_case *cases, size_t n,
                            unsigned seed0, int calls, int legal_here)
{
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_OK(ms_open(&g, th_device(), err, sizeof err));
    for (size_t i = 0; g && i < n && !th_failed(); i++) {
        tpl_problem p;
        int cfg[TPL_MAX_PARAMS];
        CHECK_OK(tpl_problem_parse(cases[i].problem, &p, err, sizeof err));
        CHECK_OK(tpl_config_parse(fam, cases[i].config, cfg, err, sizeof err));
        if (legal_here && !th_case_legal(fam, ms_device(g), &cases[i], &p, cfg, __FILE__,
                                         __LINE__))
            break;
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status s = tpl_compile(fam, cfg, ms_device(g)->arch, &cubin, &size, &log);
        CHECK_MSG(s == AT_OK, "%s: %s", cases[i].config, log ? log : "");
        free(log);
        CHECK_OK(ms_prepare(g, fam, &p, seed0 + i, err, sizeof err));
        for (int rep = 0; rep < calls && !th_failed(); rep++) {
            double error = -1;
            s = ms_verify(g, fam, cfg, cubin, size, &error, err, sizeof err);
            CHECK_MSG(s == AT_OK && error >= 0 && error <= fam->tolerance(&p),
                      "%s on %s (call %d): %s (error %.3g, bound %.3g)", cases[i].config,
                      cases[i].problem, rep + 1, err, error, fam->tolerance(&p));
        }
        free(cubin);
    }
    ms_close(g);
}

int th_verify_set_on_problems(ms_gpu *g, const tpl_family *fam, const th_compiled *set, int n,
                              const tpl_problem *problems, int np, unsigned seed0,
                              const char *label, double *worst)
{
    char err[1024], text[256];
    int failures = 0;
    for (int s = 0; s < np; s++) {
        const tpl_problem *p = &problems[s];
        tpl_problem_format(p, text, sizeof text);
        if (ms_prepare(g, fam, p, seed0 + (unsigned)s, err, sizeof err) != AT_OK) {
            th_fail(__FILE__, __LINE__, "prepare %s: %s", text, err);
            return -1;
        }
        for (int i = 0; i < n; i++) {
            if (!fam->applicable(set[i].cfg, p))
                continue;
            double e = -1;
            at_status st = ms_verify(g, fam, set[i].cfg, set[i].cubin, set[i].size, &e, err,
                                     sizeof err);
            if (st != AT_OK || !(e <= fam->tolerance(p))) {
                failures++;
                printf("    FAILED %s %s %s: %s err %g > %g (%s)\n", label, text, set[i].text,
                       at_status_string(st), e, fam->tolerance(p), err);
            }
            if (st == AT_OK && worst && e / fam->tolerance(p) > *worst)
                *worst = e / fam->tolerance(p);
        }
    }
    return failures;
}

/* One emulator run: its command, exit status and output. */
typedef struct th_host_run {
    char cmd[1024];
    int rc;
    char *out;
} th_host_run;

static void th_host_run_one(void *ctx, int i)
{
    th_host_run *r = (th_host_run *)ctx + i;
    r->rc = th_run(r->cmd, &r->out);
}

int th_run_host_emulator(const char *source, const char *const *cfgs, size_t n, char sep)
{
    char path[512], *out = NULL;
    snprintf(path, sizeof path, "tests/%s", source);
    FILE *src = fopen(path, "r");
    if (!src) {
        th_skip("%s not found (run from the repository root)", path);
        return 0;
    }
    fclose(src);
    if (th_run("c++ --version", &out) != 0) {
        free(out);
        th_skip("no C++ compiler (c++)");
        return 0;
    }
    free(out);
    th_host_run *runs = calloc(n ? n : 1, sizeof *runs);
    if (!runs) {
        th_fail(__FILE__, __LINE__, "out of memory");
        return 1;
    }
    const char *dir = th_tmpdir();
    for (size_t i = 0; i < n; i++) {
        char defs[256] = "";
        size_t used = 0;
        for (const char *p = cfgs[i]; *p && used + 8 < sizeof defs;) {
            used += (size_t)snprintf(defs + used, sizeof defs - used, " -D");
            while (*p && *p != sep && used + 2 < sizeof defs)
                defs[used++] = *p++;
            defs[used] = '\0';
            while (*p == sep)
                p++;
        }
        snprintf(runs[i].cmd, sizeof runs[i].cmd, "c++ -std=c++17 -O1 -w -Itemplates%s %s -o "
                 "%s/emu%zu -lpthread && %s/emu%zu", defs, path, dir, i, dir, i);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    th_parallel((int)n, cores < 1 ? 1 : cores > 8 ? 8 : (int)cores, th_host_run_one, runs);
    for (size_t i = 0; i < n; i++) {
        if (!(runs[i].rc == 0 && runs[i].out && strncmp(runs[i].out, "ok", 2) == 0))
            th_fail(__FILE__, __LINE__, "%s %s: %s", source, cfgs[i],
                    runs[i].out ? runs[i].out : "(no output)");
        free(runs[i].out);
    }
    free(runs);
    return 1;
}
