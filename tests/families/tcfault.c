/* tcfault.c: hidden test-only family test_tcfault: tcgemm's PATH 80 BF16 configurations compiled
 * with -DTC_FAULT=1 (the last K tile dropped), so verification must reject every one of them. */
#include <string.h>
#include "tpl.h"

extern const tpl_family tpl_tcgemm;

/* 256 x 256 x 512: 16 K tiles of BK=32 (8 of 64), so dropping one leaves a relative error of
 * about 0.25 (0.35 for BK=64), far above the tolerance (about 8e-3 for BF16). */
static const tpl_problem tcf_problems[] = {
    {.n_dims = 3, .dims = {256, 256, 512}, .dtype = AT_R_16BF},
};

/* A second configuration besides the default (tcgemm's BF16 PATH 80 winner tile, 16-byte
 * loads, staged epilogue), faulty like every other. */
static const tpl_baseline tcf_baselines[] = {
    {"sm80-bf16-wide", "TYPE=0,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,"
                       "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=8,LOADW=16",
     "PATH 80 BF16 128x128x32, 2x2 warps, 16-byte loads, VEC 8, with the fault"},
};

static tpl_family tpl_test_tcfault;

/* tcgemm's descriptor with PATH narrowed to 80 (the only path TC_FAULT touches: PATH 90
 * configurations would pass and become the best), the fault option, its own name and size. */
__attribute__((constructor)) static void tcfault_register(void)
{
    tpl_family *f = &tpl_test_tcfault;
    *f = tpl_tcgemm;
    f->name = "test_tcfault";
    f->fixed_options = "-DTC_FAULT=1";
    f->summary = "test only: tcgemm PATH 80 BF16 with the last K tile dropped (always wrong)";
    f->hidden = 1;
    for (int p = 0; p < f->n_params; p++) {
        if (strcmp(f->params[p].name, "PATH") == 0) {
            f->params[p].n_values = 1;
            f->params[p].values[0] = 80;
        } else if (strcmp(f->params[p].name, "TYPE") == 0) {
            f->params[p].n_values = 1;
            f->params[p].values[0] = 0;
        }
    }
    f->n_baselines = 1;
    f->baselines = tcf_baselines;
    f->n_defaults = 0;              /* tcgemm's built-in rows are PATH 90 on sm_90: unfaulted */
    f->defaults = NULL;
    f->n_tuning_problems = 1;
    f->tuning_problems = tcf_problems;
    tpl_register_family(f);
}
