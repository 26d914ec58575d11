/* th_family.c: helpers of the kernel-family tests: a configuration text parsed or the test
 * failed with the parser's reason; every configuration of a space judged and its rejections
 * counted by reason. */
#include <string.h>
#include "harness.h"
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
