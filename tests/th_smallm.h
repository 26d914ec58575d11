/* th_smallm.h: the smallm tests' shared pieces (test_smallm.c, test_smallm_fp32.c): a parameter's
 * index, an H100-class device, a GEMM problem. */
#ifndef TH_SMALLM_H
#define TH_SMALLM_H

#include <stdio.h>
#include <string.h>
#include "tpl.h"

extern const tpl_family tpl_smallm;

static inline int smt_param(const char *name)
{
    return tpl_param_index(&tpl_smallm, name);
}

static inline at_device_info smt_h100(void)
{
    at_device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.uuid, sizeof dev.uuid, "GPU-smallm");
    dev.cc_major = 9;
    dev.sm_count = 132;
    dev.smem_per_block_optin = 232448;
    dev.smem_per_sm = 233472;
    dev.regs_per_block = dev.regs_per_sm = 65536;
    dev.max_threads_per_block = 1024;
    dev.max_threads_per_sm = 2048;
    tpl_arch_name(9, 0, dev.arch, sizeof dev.arch);
    return dev;
}

static inline tpl_problem smt_problem(long long m, long long n, long long k, at_dtype t, int opa,
                                      int opb, long long batch)
{
    tpl_problem p = {.n_dims = 3, .dims = {m, n, k}, .dtype = t, .op_a = (at_op)opa,
                     .op_b = (at_op)opb, .batch = batch};
    return p;
}

#endif
