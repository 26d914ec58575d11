/* th_fp8.c: what the FP8 GPU tests share: every kernel of each FP8 kind through the tuner's
 * verification (test_fp8.c per-tensor, test_fp8_block.c block-scaled). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "measure.h"
#include "tcgemm.h"
#include "th_compile.h"
#include "th_family.h"
#include "th_fp8.h"

#define TH_FP8_MAX_KERNELS 64

void th_fp8_kinds_through_verification(const at_math maths[3], const char *const names[3],
                                       int scale, const th_fp8_shape *shapes, int n_shapes,
                                       int min_kernels, unsigned seed0)
{
    static const at_dtype ctypes[3] = {AT_R_16BF, AT_R_16F, AT_R_32F};  /* by TYPE */
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    if (dev->cc_major != 9 || dev->cc_minor != 0) {
        ms_close(g);
        th_skip("FP8 GEMM runs on sm_90 only (this device: %s)", dev->arch);
        return;
    }
    tpl_problem *probs = calloc((size_t)n_shapes, sizeof *probs);
    long long *idx = NULL, nv = tpl_valid_configs(f, dev, &idx);
    CHECK(probs && nv > 0);
    int failures = 0;
    for (int pr = 0; pr < 3 && probs && nv > 0 && !th_failed(); pr++)
        for (int t = 0; t < 3 && !th_failed(); t++) {
            th_compiled *set = calloc(TH_FP8_MAX_KERNELS, sizeof *set);
            int n = 0;
            for (long long j = 0; set && j < nv && n < TH_FP8_MAX_KERNELS; j++) {
                int c[TPL_MAX_PARAMS];
                tpl_config_from_index(f, idx[j], c);
                if (c[P_SCALE] != scale || c[P_FP8] != pr + 1 || c[P_TYPE] != t ||
                    c[P_RASTER] != 0 || c[P_GROUP] != 8)
                    continue;
                th_compiled *s = &set[n++];
                s->fam = f;
                memcpy(s->cfg, c, sizeof s->cfg);
                tpl_config_format(f, c, s->text, sizeof s->text);
                s->arch = dev->arch;
            }
            CHECK(set && n >= min_kernels);
            if (!set || !th_compile_all(set, n)) {
                th_free_compiled(set, n);
                break;
            }
            for (int s = 0; s < n_shapes; s++) {
                tpl_problem p = TPL_PROBLEM(3, {shapes[s].m, shapes[s].n, shapes[s].k});
                p.dtype = ctypes[t];
                p.math = maths[pr];
                p.op_a = (shapes[s].ops & 1) ? AT_OP_T : AT_OP_N;
                p.op_b = (shapes[s].ops & 2) ? AT_OP_T : AT_OP_N;
                probs[s] = p;
            }
            char label[64];
            snprintf(label, sizeof label, "%s -> C %d", names[pr], t);
            double worst = 0;
            int f_set = th_verify_set_on_problems(g, f, set, n, probs, n_shapes, seed0, label,
                                                  &worst);
            failures += f_set > 0 ? f_set : 0;
            printf("    %s: %d kernels, worst error %.3f of the tolerance\n", label, n, worst);
            th_free_compiled(set, n);
        }
    free(idx);
    free(probs);
    ms_close(g);
    CHECK_MSG(failures == 0, "%d kernel runs outside the tolerance (listed above)", failures);
}
