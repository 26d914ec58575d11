/* th_dgemm.c: what the dgemm family's tests share (th_dgemm.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "exec.h"
#include "th_dgemm.h"

int th_dgemm_parse(const char *text, int *cfg)
{
    char err[256];
    return tpl_config_parse(&tpl_dgemm, text, cfg, err, sizeof err) == AT_OK;
}

at_device_info th_dgemm_device(int cc_major, int cc_minor, int smem, int threads, int regs)
{
    at_device_info d;
    memset(&d, 0, sizeof d);
    d.cc_major = cc_major;
    d.cc_minor = cc_minor;
    snprintf(d.arch, sizeof d.arch, "sm_%d%d", cc_major, cc_minor);
    d.smem_per_block_optin = smem;
    d.max_threads_per_block = threads;
    d.regs_per_block = regs;
    d.sm_count = 132;
    return d;
}

tpl_problem th_dgemm_problem(long long m, long long n, long long k, at_op oa, at_op ob,
                             long long batch)
{
    tpl_problem p;
    memset(&p, 0, sizeof p);
    p.n_dims = 3;
    p.dims[0] = m;
    p.dims[1] = n;
    p.dims[2] = k;
    p.dtype = AT_R_64F;
    p.op_a = oa;
    p.op_b = ob;
    p.batch = batch;
    return p;
}

/* Host reference of one product element in long double, or double-double where long double
 * is double (the host's own code, independent of the kernels and of reference.cu). */
double th_dgemm_host_dot(const double *A, long long lda, int opa, const double *B,
                         long long ldb, int opb, int i, int j, int k)
{
    long double s = 0;
    double hi = 0, lo = 0;
    for (int p = 0; p < k; p++) {
        double a = opa ? A[(long long)p * lda + i] : A[(long long)i * lda + p];
        double b = opb ? B[(long long)j * ldb + p] : B[(long long)p * ldb + j];
        s += (long double)a * b;
        double prod = a * b, pe = fma(a, b, -prod), t = hi + prod, bb = t - hi;
        lo += (hi - (t - bb)) + (prod - bb) + pe;
        hi = t;
    }
    return sizeof(long double) > sizeof(double) ? (double)s : hi + lo;
}

at_status th_dgemm_run_cubin(const cudrv *cu, const at_device_info *dev, CUstream stream,
                             const void *cubin, const int *cfg, tpl_args *args, char *err,
                             size_t errlen)
{
    CUmodule mod;
    if (cu->ModuleLoadData(&mod, cubin) != CUDA_SUCCESS) {
        snprintf(err, errlen, "cuModuleLoadData failed");
        return AT_ERR_CUDA;
    }
    at_exec ex;
    ex_init(&ex, cu, dev, mod, stream, err, errlen);
    at_status s = tpl_dgemm.run(&ex, cfg, args);
    if (s == AT_OK)
        s = ex_sync(&ex);
    ex_release(&ex);
    cu->ModuleUnload(mod);
    return s;
}
