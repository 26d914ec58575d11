/* th_tcgemm.h: the tensor-core family's raw configuration numbering as the tests walk it. EPI
 * (12 values), FP8 (4), SCALE (3) and BATCH (2) are its last parameters, BATCH varying fastest:
 * the raw indices that are multiples of TH_TC_STEP are the plain kernels (EPI 0, FP8 0, SCALE 0,
 * BATCH 0), and TH_TC_INDEX(j, f, s, b) is plain kernel j's twin with FP8 f, SCALE s and BATCH b
 * (EPI 0). tcgemm_raw_numbering_matches_the_tests (test_tcgemm.c) checks these counts against the
 * family's parameter table, so a new value fails there, once. */
#ifndef TH_TCGEMM_H
#define TH_TCGEMM_H

#define TH_TC_N_EPI 12
#define TH_TC_N_FP8 4
#define TH_TC_N_SCALE 3
#define TH_TC_N_BATCH 2
#define TH_TC_STEP (TH_TC_N_EPI * TH_TC_N_FP8 * TH_TC_N_SCALE * TH_TC_N_BATCH)
#define TH_TC_INDEX(j, fp8, scale, batch)                                                         \
    ((long long)(j) * TH_TC_STEP + ((long long)(fp8) * TH_TC_N_SCALE + (scale)) * TH_TC_N_BATCH + \
     (batch))

#endif
