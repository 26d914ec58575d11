/* th_family.h: helpers of the kernel-family tests (tests/th_family.c). */
#ifndef TH_FAMILY_H
#define TH_FAMILY_H

#include "measure.h"
#include "th_compile.h"
#include "tpl.h"

/* Parses a configuration text of fam into cfg; 0 after failing the test (file and line of the
 * caller's choosing: pass __FILE__, __LINE__) if it does not parse, else 1. */
int th_parse_config(const tpl_family *fam, const char *text, int *cfg, const char *file,
                    int line);

/* Judges every raw configuration of fam with valid() on dev (NULL: the generic device): counts
 * the valid ones into *valid and, per reason, the rejected ones into seen[0..n_reasons) (by
 * the index of their reason in reasons); a reason not in the list fails the test (caller's
 * file and line). 1 if every reason was listed, else 0. */
int th_scan_reasons(const tpl_family *fam, const at_device_info *dev,
                    const char *const *reasons, int n_reasons, long long *seen,
                    long long *valid, const char *file, int line);

/* One problem and the configuration of a family that must compute it (texts). */
typedef struct th_case {
    const char *problem, *config;
} th_case;

/* On the GPU of the test run: compiles each case's configuration for the device, prepares its
 * problem (seed seed0 + the case's index) and verifies it twice against the family's float64
 * reference within its tolerance (the second call catches state a first call leaves behind,
 * such as slice counters); a failure fails the test and ends the walk. */
void th_verify_cases_on_gpu(const tpl_family *fam, const th_case *cases, size_t n,
                            unsigned seed0);

/* On the GPU g: every configuration of set[0..n) (compiled) that applies to each problem of
 * problems[0..np) (prepared with seed seed0 + its index) is verified against the family's
 * float64 reference within its tolerance. Every failure is printed ("FAILED label problem
 * configuration: ...") and counted, and the walk goes on, so that a run names every failing
 * kernel; *worst (if not NULL) gets the largest error as a fraction of the tolerance. Returns
 * the failures, or -1 after failing the test when a problem cannot be prepared. */
int th_verify_set_on_problems(ms_gpu *g, const tpl_family *fam, const th_compiled *set, int n,
                              const tpl_problem *problems, int np, unsigned seed0,
                              const char *label, double *worst);

#endif
