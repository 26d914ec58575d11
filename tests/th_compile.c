/* th_compile.c: test support around NVRTC: one compile checked against its
 * expected status, a set of configurations compiled on several threads, and
 * the faulty-twin check (th_compile.h). */
#include <stdlib.h>
#include "harness.h"
#include "measure.h"
#include "th_compile.h"

void th_check_compile(const tpl_family *fam, const char *config, const char *arch,
                      at_status want)
{
    int c[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(fam, config, c, err, sizeof err));
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    at_status s = tpl_compile(fam, c, arch, &cubin, &size, &log);
    int ok = s == want && (s != AT_OK || (cubin && size > 0));
    if (!ok)
        th_fail(__FILE__, __LINE__, "%s for %s: %s (want %s), %zu bytes of cubin %s", config,
                arch, at_status_string(s), at_status_string(want), cubin ? size : 0,
                log ? log : "");
    free(cubin);
    free(log);
}

static void th_compile_one(void *ctx, int i)
{
    th_compiled *c = (th_compiled *)ctx + i;
    c->status = tpl_compile(c->fam, c->cfg, c->arch, &c->cubin, &c->size, &c->log);
}

int th_compile_all(th_compiled *set, int n)
{
    th_parallel(n, 16, th_compile_one, set);
    for (int i = 0; i < n; i++)
        if (set[i].status != AT_OK) {
            th_fail(__FILE__, __LINE__, "%s: %s %s", set[i].text, at_status_string(set[i].status),
                    set[i].log ? set[i].log : "");
            return 0;
        }
    return 1;
}

void th_release_compiled(th_compiled *set, int n)
{
    for (int i = 0; set && i < n; i++) {
        free(set[i].cubin);
        free(set[i].log);
        set[i].cubin = NULL;
        set[i].log = NULL;
    }
}

void th_free_compiled(th_compiled *set, int n)
{
    th_release_compiled(set, n);
    free(set);
}

void th_check_fault_rejected(const tpl_family *fault, const tpl_family *real, double margin)
{
    CHECK(fault != NULL && real != NULL);
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    th_compiled two[2];
    memset(two, 0, sizeof two);
    for (int i = 0; i < 2; i++) {
        two[i].fam = i ? real : fault;
        two[i].arch = ms_device(g)->arch;
        snprintf(two[i].text, sizeof two[i].text, "%s", two[i].fam->name);
        CHECK_OK(tpl_config_parse(two[i].fam, fault->default_config, two[i].cfg, err, sizeof err));
    }
    CHECK(th_compile_all(two, 2));
    const tpl_problem *p = &fault->tuning_problems[0];
    double e = -1;
    CHECK_OK(ms_prepare(g, fault, p, 9, err, sizeof err));
    at_status st = ms_verify(g, fault, two[0].cfg, two[0].cubin, two[0].size, &e, err, sizeof err);
    CHECK_MSG(st == AT_ERR_WRONG_RESULT && e > margin * fault->tolerance(p), "%s, error %g: %s",
              at_status_string(st), e, err);
    printf("    faulty kernel: error %.3g against tolerance %.3g\n", e, fault->tolerance(p));
    CHECK_OK(ms_prepare(g, real, p, 9, err, sizeof err));
    CHECK_OK(ms_verify(g, real, two[1].cfg, two[1].cubin, two[1].size, &e, err, sizeof err));
    th_release_compiled(two, 2);
    ms_close(g);
}
