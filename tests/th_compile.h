/* th_compile.h: test support around NVRTC: one configuration's compile
 * checked against the expected status (CPU tier), a set of family
 * configurations compiled on several threads before the GPU tests run them,
 * and the check that verification rejects a family's faulty twin. */
#ifndef TH_COMPILE_H
#define TH_COMPILE_H

#include "tpl.h"

/* NVRTC-compiles fam's configuration text for arch and checks that the
 * status is want (and that AT_OK came with a cubin). Failures are the
 * current test's (the configuration, arch, status and NVRTC log). */
void th_check_compile(const tpl_family *fam, const char *config, const char *arch,
                      at_status want);

/* One configuration to compile, and what its compile gave. */
typedef struct th_compiled {
    const tpl_family *fam;
    int cfg[TPL_MAX_PARAMS];
    char text[TPL_CONFIG_LEN];
    const char *arch;                /* "sm_90a", ... */
    void *cubin;                     /* malloc'd by tpl_compile */
    size_t size;
    at_status status;
    char *log;                       /* NVRTC's log, malloc'd or NULL */
} th_compiled;

/* Compiles the n entries of set on up to 16 threads; 1 if every one
 * compiled, else 0 with the current test failed (the first failure's
 * configuration, status and log). */
int th_compile_all(th_compiled *set, int n);
/* Frees the cubins and logs of the n entries (set itself stays: it may be
 * on the stack); th_free_compiled frees set too (NULL: nothing). */
void th_release_compiled(th_compiled *set, int n);
void th_free_compiled(th_compiled *set, int n);

/* On the test device: fault's default configuration (a kernel that computes a
 * wrong result, e.g. the last K tile dropped) on fault's first tuning problem
 * is rejected by verification with an error above margin x the tolerance, and
 * the same configuration in real (the correct family) passes. Failures are the
 * current test's. */
void th_check_fault_rejected(const tpl_family *fault, const tpl_family *real, double margin);

#endif
