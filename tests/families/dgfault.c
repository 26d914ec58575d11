/* dgfault.c: hidden test-only family test_dgfault: dgemm's configurations compiled with
 * -DDG_FAULT=1 (the last K tile of every product dropped), so verification must reject them. */
#include <string.h>
#include "tpl.h"

extern const tpl_family tpl_dgemm;

/* 256 x 256 x 512: 32 K tiles of BK=16 (64 of 8), so dropping one leaves a relative error of
 * about 0.18 (0.125 for BK=8), far above the tolerance (about 2e-14). */
static const tpl_problem dgf_problems[] = {
    {.n_dims = 3, .dims = {256, 256, 512}, .dtype = AT_R_64F},
};

static tpl_family tpl_test_dgfault;

/* dgemm's descriptor with the fault option, its own name and size. */
__attribute__((constructor)) static void dgfault_register(void)
{
    tpl_family *f = &tpl_test_dgfault;
    *f = tpl_dgemm;
    f->name = "test_dgfault";
    f->fixed_options = "-DDG_FAULT=1";
    f->summary = "test only: dgemm with the last K tile dropped (always wrong)";
    f->hidden = 1;
    f->n_tuning_problems = 1;
    f->tuning_problems = dgf_problems;
    tpl_register_family(f);
}
