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

/* A nominal H100-class device (sm_90, 132 SMs, 227 KiB of shared memory a block) for the
 * rules of a family's space; uuid NULL: none. */
at_device_info th_h100(const char *uuid);

/* Each case's problem and configuration parse, the configuration is valid on dev and serves
 * the problem; a failure fails the test (the caller's file and line) and ends the walk. */
void th_check_cases_legal(const tpl_family *fam, const at_device_info *dev,
                          const th_case *cases, size_t n, const char *file, int line);

/* On the GPU of the test run: compiles each case's configuration for the device, prepares its
 * problem (seed seed0 + the case's index) and verifies it `calls` times against the family's
 * float64 reference within its tolerance (a second call catches state a first call leaves
 * behind, such as slice counters); with legal_here, first checks that the configuration is
 * valid on this device and serves the problem. A failure fails the test and ends the walk. */
void th_verify_cases_on_gpu(const tpl_family *fam, const th_case *cases, size_t n,
                            unsigned seed0, int calls, int legal_here);

/* A CPU emulator of a family's kernel (tests/NAME_host.cpp, on tests/th_host.h) built and run
 * once per configuration of cfgs[0..n): each is "P=v" texts joined by sep, each becomes
 * -DP=v. Compiles and runs on up to as many threads as cores; every run that does not
 * print "ok" first fails the test with its configuration and output. Returns 0 after
 * th_skip where the source (run from the repository root) or a C++ compiler (c++) is
 * missing, else 1. */
int th_run_host_emulator(const char *source, const char *const *cfgs, size_t n, char sep);

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
