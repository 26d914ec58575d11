/* registry.c: the table of kernel families, one line per family (strong
 * references, so static links pull every family in), plus families that a
 * test build registers at load time with their own sources. */
#include <string.h>
#include "tpl.h"

extern const tpl_family tpl_matmul;
extern const tpl_family tpl_sum;
extern const tpl_family tpl_dot;
extern const tpl_family tpl_jacobi;
extern const tpl_family tpl_tcgemm;
extern const tpl_family tpl_dgemm;
extern const tpl_family tpl_bgemm;
extern const tpl_family tpl_skinny;
extern const tpl_family tpl_smallm;

/* The order is the claims order of lk_gemm_families: smallm (m <= 64 over a large B) is asked
 * before skinny, whose narrow-side rule would take the same calls. */
static const tpl_family *const registry_builtin[] = {
    &tpl_matmul, &tpl_sum, &tpl_dot, &tpl_jacobi, &tpl_tcgemm,
    &tpl_dgemm, &tpl_bgemm, &tpl_smallm, &tpl_skinny,
};
#define BUILTIN_COUNT ((int)(sizeof registry_builtin / sizeof registry_builtin[0]))
#define EXTRA_MAX 8

static const tpl_family *registry_extra[EXTRA_MAX];
static int extra_count;
static struct { const char *name; const char *text; size_t len; } extra_sources[EXTRA_MAX];
static int extra_source_count;

/* Generated from templates/NAME.cu by tools/embed.c (build/gen/sources.c). */
const char *tpl_embedded_source_text(const char *name, size_t *len);

int tpl_register_family(const tpl_family *fam)
{
    if (!fam || tpl_find(fam->name) || extra_count >= EXTRA_MAX)
        return -1;
    registry_extra[extra_count++] = fam;
    return 0;
}

int tpl_register_source(const char *name, const char *text, size_t len)
{
    if (!name || !text || extra_source_count >= EXTRA_MAX)
        return -1;
    extra_sources[extra_source_count].name = name;
    extra_sources[extra_source_count].text = text;
    extra_sources[extra_source_count].len = len;
    extra_source_count++;
    return 0;
}

const char *tpl_source_text(const char *name, size_t *len)
{
    const char *text = tpl_embedded_source_text(name, len);
    for (int i = 0; !text && name && i < extra_source_count; i++) {
        if (strcmp(extra_sources[i].name, name) == 0) {
            text = extra_sources[i].text;
            if (len)
                *len = extra_sources[i].len;
        }
    }
    return text;
}

int tpl_family_count(void)
{
    return BUILTIN_COUNT + extra_count;
}

const tpl_family *tpl_family_at(int index)
{
    if (index < 0)
        return NULL;
    if (index < BUILTIN_COUNT)
        return registry_builtin[index];
    index -= BUILTIN_COUNT;
    return index < extra_count ? registry_extra[index] : NULL;
}

const tpl_family *tpl_find(const char *name)
{
    for (int i = 0; name && i < tpl_family_count(); i++)
        if (strcmp(tpl_family_at(i)->name, name) == 0)
            return tpl_family_at(i);
    return NULL;
}
