/* th_dgemm.h: what the dgemm family's tests share (th_dgemm.c): its parameter indices (the
 * order of templates/dgemm.c's parameter list), configuration text, a device of given limits
 * and an FP64 problem. */
#ifndef TH_DGEMM_H
#define TH_DGEMM_H

#include "cudrv.h"
#include "tpl.h"

enum {
    P_PATH, P_OPA, P_OPB, P_MMA, P_BM, P_BN, P_BK, P_WARPS_M, P_WARPS_N, P_STAGES, P_FRAG, P_TM,
    P_TN, P_GROUP, P_SPLITK, P_LDR, P_UNR, P_SA, P_MINB, P_PERS, P_TMA, P_CP8, P_COUNT
};

extern const tpl_family tpl_dgemm;

/* cfg from a dgemm configuration's text; 1 if it parses */
int th_dgemm_parse(const char *text, int *cfg);
/* a device of compute capability cc_major.cc_minor, 132 SMs, with these per-block limits */
at_device_info th_dgemm_device(int cc_major, int cc_minor, int smem, int threads, int regs);
/* the FP64 problem m x n x k of ops oa, ob and batch products */
tpl_problem th_dgemm_problem(long long m, long long n, long long k, at_op oa, at_op ob,
                             long long batch);
/* one element of op(A) op(B) (row-major A, B; op T: opa / opb 1) in long double, or
 * double-double where long double is double */
double th_dgemm_host_dot(const double *A, long long lda, int opa, const double *B,
                         long long ldb, int opb, int i, int j, int k);
/* runs the dgemm configuration cfg from its cubin on args (loaded, run, synchronized,
 * unloaded); AT_OK or the run's status with the message in err */
at_status th_dgemm_run_cubin(const cudrv *cu, const at_device_info *dev, CUstream stream,
                             const void *cubin, const int *cfg, tpl_args *args, char *err,
                             size_t errlen);

#endif
