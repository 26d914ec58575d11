/* th_family.c: helpers of the kernel-family tests: a configuration text parsed or the test
 * failed with the parser's reason. */
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
