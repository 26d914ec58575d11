/* registry.c: the table of kernel families, one line per family. Strong
 * references, so static links pull every family in. */
#include <string.h>
#include "tpl.h"

extern const tpl_family tpl_matmul;
extern const tpl_family tpl_sum;
extern const tpl_family tpl_dot;
extern const tpl_family tpl_jacobi;
extern const tpl_family tpl_test_oob;
extern const tpl_family tpl_test_hang;

static const tpl_family *const registry_all[] = {
    &tpl_matmul, &tpl_sum, &tpl_dot, &tpl_jacobi, &tpl_test_oob, &tpl_test_hang,
};
#define REGISTRY_SIZE ((int)(sizeof registry_all / sizeof registry_all[0]))

int tpl_family_count(void)
{
    int count = 0;
    for (int i = 0; i < REGISTRY_SIZE; i++)
        if (registry_all[i])
            count++;
    return count;
}

const tpl_family *tpl_family_at(int index)
{
    for (int i = 0; i < REGISTRY_SIZE; i++) {
        if (!registry_all[i])
            continue;
        if (index-- == 0)
            return registry_all[i];
    }
    return NULL;
}

const tpl_family *tpl_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < REGISTRY_SIZE; i++)
        if (registry_all[i] && strcmp(registry_all[i]->name, name) == 0)
            return registry_all[i];
    return NULL;
}
