/* th_family.h: helpers of the kernel-family tests (tests/th_family.c). */
#ifndef TH_FAMILY_H
#define TH_FAMILY_H

#include "tpl.h"

/* Parses a configuration text of fam into cfg; 0 after failing the test (file and line of the
 * caller's choosing: pass __FILE__, __LINE__) if it does not parse, else 1. */
int th_parse_config(const tpl_family *fam, const char *text, int *cfg, const char *file,
                    int line);

#endif
