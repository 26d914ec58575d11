/* th_family.h: helpers of the kernel-family tests (tests/th_family.c). */
#ifndef TH_FAMILY_H
#define TH_FAMILY_H

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

#endif
