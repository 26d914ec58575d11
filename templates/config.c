/* config.c: a family's configuration space as numbers and as text: the
 * raw index of a configuration (tpl_config_from_index / _to_index) and its
 * canonical "NAME=v,..." form (tpl_config_format / tpl_config_parse). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpl.h"

long long tpl_space_size(const tpl_family *fam)
{
    long long size = 1;
    for (int i = 0; i < fam->n_params; i++)
        size *= fam->params[i].n_values;
    return size;
}

void tpl_config_from_index(const tpl_family *fam, long long index, int *cfg)
{
    for (int i = fam->n_params - 1; i >= 0; i--) {
        int n = fam->params[i].n_values;
        cfg[i] = fam->params[i].values[index % n];
        index /= n;
    }
}

long long tpl_config_to_index(const tpl_family *fam, const int *cfg)
{
    long long index = 0;
    for (int i = 0; i < fam->n_params; i++) {
        int pos = -1;
        for (int v = 0; v < fam->params[i].n_values; v++)
            if (fam->params[i].values[v] == cfg[i])
                pos = v;
        if (pos < 0)
            return -1;
        index = index * fam->params[i].n_values + pos;
    }
    return index;
}

void tpl_config_format(const tpl_family *fam, const int *cfg, char *out, size_t len)
{
    size_t used = 0;
    if (len)
        out[0] = '\0';
    for (int i = 0; i < fam->n_params && used < len; i++) {
        if (fam->params[i].omit_first && cfg[i] == fam->params[i].values[0])
            continue;
        int w = snprintf(out + used, len - used, "%s%s=%d", used ? "," : "",
                         fam->params[i].name, cfg[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int tpl_param_index(const tpl_family *fam, const char *name)
{
    for (int i = 0; i < fam->n_params; i++)
        if (strcmp(fam->params[i].name, name) == 0)
            return i;
    return -1;
}

at_status tpl_config_parse(const tpl_family *fam, const char *text, int *cfg,
                           char *err, size_t errlen)
{
    int seen[TPL_MAX_PARAMS] = {0};
    if (!text) {
        snprintf(err, errlen, "no configuration given");
        return AT_ERR_INVALID_ARG;
    }
    const char *p = text;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *eq = strchr(p, '=');
        if (!eq) {
            snprintf(err, errlen, "%s: expected NAME=value at \"%s\"", fam->name, p);
            return AT_ERR_INVALID_ARG;
        }
        char name[64];
        size_t nlen = (size_t)(eq - p);
        if (nlen == 0 || nlen >= sizeof name) {
            snprintf(err, errlen, "%s: bad parameter name at \"%s\"", fam->name, p);
            return AT_ERR_INVALID_ARG;
        }
        memcpy(name, p, nlen);
        name[nlen] = '\0';
        int idx = tpl_param_index(fam, name);
        if (idx < 0) {
            snprintf(err, errlen, "%s has no parameter %s", fam->name, name);
            return AT_ERR_INVALID_ARG;
        }
        char *end;
        long value = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || (*end && *end != ',' && !isspace((unsigned char)*end))) {
            snprintf(err, errlen, "%s: %s needs an integer value", fam->name, name);
            return AT_ERR_INVALID_ARG;
        }
        if (seen[idx]) {
            snprintf(err, errlen, "%s: %s given twice", fam->name, name);
            return AT_ERR_INVALID_ARG;
        }
        seen[idx] = 1;
        cfg[idx] = (int)value;
        p = end;
    }
    for (int i = 0; i < fam->n_params; i++) {
        if (!seen[i] && fam->params[i].omit_first) {
            cfg[i] = fam->params[i].values[0];
        } else if (!seen[i]) {
            snprintf(err, errlen, "%s: parameter %s missing", fam->name, fam->params[i].name);
            return AT_ERR_INVALID_ARG;
        }
    }
    return AT_OK;
}
