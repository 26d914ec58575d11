/* th_smallm.h: the smallm tests' shared pieces (test_smallm.c, test_smallm_fp32.c): a parameter's
 * index, an H100-class device, a GEMM problem. */
#ifndef TH_SMALLM_H
#define TH_SMALLM_H

#include <stdio.h>
#include <string.h>
#include "th_family.h"
#include "tpl.h"

extern const tpl_family tpl_smallm;

static inline int smt_param(const char *name)
{
    return tpl_param_index(&tpl_smallm, name);
}

static inline at_device_info smt_h100(void)
{
    return th_h100("GPU-smallm");
}

static inline tpl_problem smt_problem(long long m, long long n, long long k, at_dtype t, int opa,
                                      int opb, long long batch)
{
    tpl_problem p = {.n_dims = 3, .dims = {m, n, k}, .dtype = t, .op_a = (at_op)opa,
                     .op_b = (at_op)opb, .batch = batch};
    return p;
}

#endif
