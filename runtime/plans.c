/* plans.c: the handle's table of plans (one per family, problem and deterministic mode) and
 * the bookkeeping of the scratch memory the plans keep between calls; runtime/api.c builds,
 * serves and frees the plans. Internal to libautotune. */
#include <stdlib.h>
#include "handle.h"

static size_t plan_hash(const tpl_family *fam, const tpl_problem *p, int det)
{
    unsigned long long x = (unsigned long long)(size_t)fam * 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < p->n_dims; i++)
        x = (x ^ (unsigned long long)p->dims[i]) * 0x100000001B3ull;
    unsigned long long kind = (unsigned long long)p->dtype | (unsigned long long)p->math << 8 |
                              (unsigned long long)p->op_a << 16 |
                              (unsigned long long)p->op_b << 24 |
                              (unsigned long long)p->order << 32;
    x = (x ^ kind) * 0x100000001B3ull;
    x = (x ^ (unsigned long long)tpl_problem_batch(p)) * 0x100000001B3ull;
    x ^= (unsigned long long)det;
    return (size_t)(x ^ (x >> 29));
}

int ah_plan_matches(const at_plan *pl, const tpl_family *fam, const tpl_problem *p, int det)
{
    return pl->key_fam == fam && pl->deterministic == det && tpl_problem_equal(&pl->problem, p);
}

at_plan *ah_plan_lookup(at_handle *h, const tpl_family *fam, const tpl_problem *p)
{
    if (!h->cap_plans)
        return NULL;
    size_t mask = h->cap_plans - 1;
    for (size_t i = plan_hash(fam, p, h->deterministic) & mask; h->plans[i]; i = (i + 1) & mask)
        if (ah_plan_matches(h->plans[i], fam, p, h->deterministic))
            return h->plans[i];
    return NULL;
}

at_status ah_plan_insert(at_handle *h, at_plan *pl)
{
    if ((h->n_plans + 1) * 10 > h->cap_plans * 7) {
        size_t cap = h->cap_plans ? h->cap_plans * 2 : 64;
        at_plan **table = calloc(cap, sizeof *table);
        if (!table)
            return AT_ERR_NO_MEMORY;
        for (size_t i = 0; i < h->cap_plans; i++) {
            at_plan *old = h->plans[i];
            if (!old)
                continue;
            size_t j = plan_hash(old->key_fam, &old->problem, old->deterministic) & (cap - 1);
            while (table[j])
                j = (j + 1) & (cap - 1);
            table[j] = old;
        }
        free(h->plans);
        h->plans = table;
        h->cap_plans = cap;
    }
    size_t mask = h->cap_plans - 1;
    size_t i = plan_hash(pl->key_fam, &pl->problem, pl->deterministic) & mask;
    while (h->plans[i])
        i = (i + 1) & mask;
    h->plans[i] = pl;
    h->n_plans++;
    return AT_OK;
}

/* The scratch memory a plan's exec holds, in bytes. */
size_t ah_plan_scratch_bytes(const at_plan *p)
{
    size_t bytes = 0;
    for (int j = 0; j < EX_MAX_SCRATCH; j++)
        bytes += p->exec.scratch_bytes[j];
    return bytes;
}

/* Frees the scratch memory of every plan but keep (after the stream's work, which may still
 * use it; ex_scratch allocates again on a plan's next call); the count of plans that held any. */
int ah_release_other_scratch(at_handle *h, const at_plan *keep)
{
    int released = 0;
    h->cu->StreamSynchronize(h->stream);
    for (size_t i = 0; i < h->cap_plans; i++) {
        at_plan *p = h->plans[i];
        size_t held = p && p != keep ? ah_plan_scratch_bytes(p) : 0;
        if (held) {
            ex_release(&p->exec);
            h->scratch_bytes -= held < h->scratch_bytes ? held : h->scratch_bytes;
            released++;
        }
    }
    return released;
}

/* Scratch memory the plans of a handle keep between calls, at most (AT_SCRATCH_KEEP_DIVISOR:
 * a part of the device's memory, at least AT_SCRATCH_KEEP_MIN): past it, a plan that grows its
 * scratch makes the others give theirs back. So a program calling thousands of shapes holds a
 * bounded amount (cuBLAS too keeps one bounded workspace per handle), while a shape called
 * again and again keeps its buffers. */
#define AT_SCRATCH_KEEP_DIVISOR 32
#define AT_SCRATCH_KEEP_MIN (256u << 20)

size_t ah_scratch_keep_limit(const at_handle *h)
{
    size_t part = (size_t)(h->info.memory_bytes / AT_SCRATCH_KEEP_DIVISOR);
    return part > AT_SCRATCH_KEEP_MIN ? part : AT_SCRATCH_KEEP_MIN;
}

