/* th_tcgemm.h: the tensor-core family's raw configuration numbering as the tests walk it. EPI
 * (12 values), FP8 (4), SCALE (4) and BATCH (2) are its last parameters, BATCH varying fastest:
 * the raw indices that are multiples of TH_TC_STEP are the plain kernels (EPI 0, FP8 0, SCALE 0,
 * BATCH 0), and TH_TC_INDEX(j, f, s, b) is plain kernel j's twin with FP8 f, SCALE s and BATCH b
 * (EPI 0). tcgemm_raw_numbering_matches_the_tests (test_tcgemm.c) checks these counts against the
 * family's parameter table, so a new value fails there, once. Beside it the tcgemm tests' shared
 * pieces: a configuration text parsed (failing at the caller's line), a device, a problem,
 * operand data, which op pairs a configuration runs on. */
#ifndef TH_TCGEMM_H
#define TH_TCGEMM_H

#include <stdio.h>
#include <string.h>
#include "th_family.h"
#include "tpl.h"

/* the family (templates/tcgemm.h, which test_tcgemm.c leaves out: it writes its own parameter
 * enumeration from the notes) */
extern const tpl_family tpl_tcgemm;

#define TH_TC_N_EPI 12
#define TH_TC_N_FP8 4
#define TH_TC_N_SCALE 4
#define TH_TC_N_BATCH 2
#define TH_TC_STEP (TH_TC_N_EPI * TH_TC_N_FP8 * TH_TC_N_SCALE * TH_TC_N_BATCH)
#define TH_TC_INDEX(j, fp8, scale, batch)                                                         \
    ((long long)(j) * TH_TC_STEP + ((long long)(fp8) * TH_TC_N_SCALE + (scale)) * TH_TC_N_BATCH + \
     (batch))

/* tcgemm configuration text into cfg; a failed parse fails the calling test at its line */
#define tt_parse(text, cfg) th_parse_config(&tpl_tcgemm, (text), (cfg), __FILE__, __LINE__)

/* A device the rules are judged against: 132 SMs, the given compute capability and limits. */
static inline at_device_info tt_device(int cc_major, int cc_minor, int smem, int threads,
                                       int regs)
{
    at_device_info d;
    memset(&d, 0, sizeof d);
    d.cc_major = cc_major;
    d.cc_minor = cc_minor;
    d.sm_count = 132;
    d.smem_per_block_optin = smem;
    d.max_threads_per_block = threads;
    d.regs_per_block = regs;
    snprintf(d.arch, sizeof d.arch, "sm_%d%d", cc_major, cc_minor);
    return d;
}

/* A single m x n x k GEMM of type t and math. */
static inline tpl_problem tt_problem(long long m, long long n, long long k, at_dtype t,
                                     at_math math)
{
    tpl_problem p = TPL_PROBLEM(3, {m, n, k});
    p.dtype = t;
    p.math = math;
    return p;
}

/* n elements of type t (0 BF16, 1 FP16, 2 FP32 / TF32) in [-1, 1) from an LCG: q / 128 with q in
 * -128..127, exact in every one of them (so a reference's operands are the kernel's). */
static inline void tt_fill(unsigned char *buf, size_t n, int t, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = (float)((int)(seed >> 24) - 128) / 128.0f;
        unsigned bits;
        memcpy(&bits, &v, 4);
        if (t == 2) {
            memcpy(buf + 4 * i, &bits, 4);
            continue;
        }
        unsigned short h = 0;
        if (t == 0) {
            h = (unsigned short)(bits >> 16);
        } else if (v != 0.0f) {
            /* FP16: sign, exponent rebiased 127 -> 15, the top 10 mantissa bits (exact here) */
            h = (unsigned short)((bits >> 31) << 15 | (((bits >> 23) & 0xff) - 112) << 10 |
                                 ((bits >> 13) & 0x3ff));
        }
        memcpy(buf + 2 * i, &h, 2);
    }
}

/* 1 if a configuration with OPA opa and OPB opb runs on op pair ops (bit 0 op(A) = T, bit 1
 * op(B) = T) in a test of every pair: an op-T reader (OPA / OPB 1) only where that operand is
 * op T; OPA / OPB 0 everywhere (an op-T operand then goes through the transposing pack). */
static inline int tt_runs_on_pair(int opa, int opb, int ops)
{
    return (!opa || (ops & 1)) && (!opb || (ops >> 1));
}

#endif
