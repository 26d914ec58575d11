/* matmul.h: what the matmul family's descriptor (matmul.c) and its tables of baselines and
 * built-in choices (matmul_defaults.c) share: the parameter order and the table sizes.
 * Internal to templates/. */
#ifndef MATMUL_H
#define MATMUL_H

#include "tpl.h"

/* Parameter order; must match the params table of matmul.c. */
enum {
    P_ALGO, P_TILE, P_UNROLL, P_BM, P_BN, P_BK, P_WM, P_WN, P_TM, P_TN, P_WNITER,
    P_STAGES, P_VEC, P_PAD, P_SPLITK, P_FRAG, P_SK, P_FFMA, P_OPA, P_OPB, P_BATCH, P_CPS, P_COUNT
};

#define MM_N_DEFAULTS 18
#define MM_N_BASELINES 17
extern const tpl_default mm_defaults[];      /* MM_N_DEFAULTS rows */
extern const tpl_baseline mm_baselines[];    /* MM_N_BASELINES entries */

#endif
