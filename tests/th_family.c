/* th_family.c: helpers of the kernel-family tests: a configuration text parsed or the test
 * failed with the parser's reason; every configuration of a space judged and its rejections
 * counted by reason; cases of problems and configurations verified on the GPU. */
#include <stdlib.h>
#include <string.h>
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

void th_verify_cases_on_gpu(const tpl_family *fam, const th_case *cases, size_t n,
                            unsigned seed0)
{
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_OK(ms_open(&g, th_device(), err, sizeof err));
    for (size_t i = 0; g && i < n && !th_failed(); i++) {
        tpl_problem p;
        int cfg[TPL_MAX_PARAMS];
        CHECK_OK(tpl_problem_parse(cases[i].problem, &p, err, sizeof err));
        CHECK_OK(tpl_config_parse(fam, cases[i].config, cfg, err, sizeof err));
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status s = tpl_compile(fam, cfg, ms_device(g)->arch, &cubin, &size, &log);
        CHECK_MSG(s == AT_OK, "%s: %s", cases[i].config, log ? log : "");
        free(log);
        CHECK_OK(ms_prepare(g, fam, &p, seed0 + i, err, sizeof err));
        for (int rep = 0; rep < 2 && !th_failed(); rep++) {
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
