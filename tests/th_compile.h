/* th_compile.h: GPU-tier test support: a set of family configurations
 * compiled with NVRTC on several threads before the tests run them. */
#ifndef TH_COMPILE_H
#define TH_COMPILE_H

#include "tpl.h"

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
/* Frees the cubins and logs of the n entries and set itself (NULL: nothing). */
void th_free_compiled(th_compiled *set, int n);

#endif
