/* test_tcgemm_wave.c: tcgemm's wave-fill split (SPLITK 0, PATH 90): its plan and rule on the CPU
 * against a simulation of the persistent walk, and on the GPU against float64 references at the
 * shapes it splits (fewer tiles than SMs, a ragged last wave, deep K), beta 0 over NaN and beta
 * != 0, run after run bit-identical. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "lookup.h"
#include "measure.h"
#include "tcgemm.h"
#include "th_compile.h"
#include "th_half.h"
#include "th_tcgemm.h"
#include "tpl.h"

/* The busiest cluster's K steps when `slots` clusters walk the plan's items round-robin (cluster
 * b takes items b, b + slots, ...): whole units of ksteps, then the pieces, piece z of a unit
 * over K steps [z ksteps / split, (z + 1) ksteps / split), each piece costing
 * TC_WAVE_FIXUP_KSTEPS more to store and the last piece of a tile split more to sum. Written
 * from the kernel's walk (tcgemm.cu T9_WF_ITEM), not from the planner's formula. */
static long long tw_simulate(long long units, long long ksteps, long long slots,
                             const tc_wave_plan *w)
{
    long long items = w->dp_units + (units - w->dp_units) * w->split, worst = 0;
    for (long long b = 0; b < slots; b++) {
        long long steps = 0;
        for (long long u = b; u < items; u += slots) {
            if (u < w->dp_units || w->split == 1) {
                steps += ksteps;
                continue;
            }
            long long z = (u - w->dp_units) % w->split;
            steps += (z + 1) * ksteps / w->split - z * ksteps / w->split + TC_WAVE_FIXUP_KSTEPS;
        }
        if (steps > worst)
            worst = steps;
    }
    return worst;
}

TEST(tcgemm_wave_plan_and_rule)
{
    tc_wave_plan w;
    /* 1024 x 1024 x 16384 in 128 x 256 tiles on 132 SMs: 32 tiles, 256 K steps: 4 pieces of
     * 64 (128 CTAs busy), against one tile on 32 CTAs */
    tc_wave_plan_of(32, 256, 132, &w);
    CHECK_EQ(w.dp_units, 0);
    CHECK_EQ(w.split, 4);
    CHECK_EQ(w.steps_whole, 256);
    CHECK(tc_wave_fill_pays(32, 256, 132));
    /* 2048 x 2048 x 16384: 128 tiles, 0.97 of a wave: equal-K pieces cannot fill the 4 idle SMs */
    tc_wave_plan_of(128, 256, 132, &w);
    CHECK_EQ(w.split, 1);
    CHECK_EQ(w.dp_units, 128);
    CHECK(!tc_wave_fill_pays(128, 256, 132));
    /* whole waves (264 tiles) and 4096^3 (512 tiles, the last wave 88% full) stay whole */
    CHECK(!tc_wave_fill_pays(264, 64, 132));
    CHECK(!tc_wave_fill_pays(512, 64, 132));
    /* 2500 x 6000 x 3000: 480 tiles of 47 K steps, 3.64 waves: the last 1.64 in 3 pieces */
    tc_wave_plan_of(480, 47, 132, &w);
    CHECK_EQ(w.dp_units, 396);
    CHECK_EQ(w.split, 3);
    CHECK(w.steps < w.steps_whole && w.steps_whole == 4 * 47);
    /* too shallow for pieces of 8 K steps, or nothing to split */
    CHECK(!tc_wave_fill_pays(2, 15, 132));
    CHECK(!tc_wave_fill_pays(0, 100, 132));
    CHECK(!tc_wave_fill_pays(10, 0, 132));
    tc_wave_plan_of(0, 100, 132, &w);
    CHECK(w.split == 1 && w.dp_units == 0);
    /* a sweep: the plan's invariants, its prediction an upper bound of the simulated walk, the
     * brief's rule (fewer tiles than 0.9 of a wave over a deep K pays; whole waves never) */
    static const long long slot_counts[] = {132, 114, 66, 1};
    for (size_t si = 0; si < sizeof slot_counts / sizeof slot_counts[0]; si++)
        for (long long units = 1; units <= 700 && !th_failed(); units += 7)
            for (long long ks = 1; ks <= 600 && !th_failed(); ks = ks * 3 + 1) {
                long long slots = slot_counts[si];
                tc_wave_plan_of(units, ks, slots, &w);
                CHECK(w.split >= 1 && w.split <= TC_WAVE_MAX_SPLIT);
                CHECK(w.dp_units >= 0 && w.dp_units <= units);
                CHECK(w.split == 1 || w.dp_units % slots == 0);
                CHECK(w.split == 1 || ks / w.split >= TC_WAVE_MIN_KSTEPS);
                CHECK(w.split == 1 || units - w.dp_units <= slots * (TC_WAVE_MAX_EXTRA + 1));
                CHECK_EQ(w.steps_whole, (units + slots - 1) / slots * ks);
                CHECK(w.split == 1 ||
                      w.steps * 100 <= w.steps_whole * (100 - TC_WAVE_MIN_GAIN_PERCENT));
                CHECK_EQ(tc_wave_fill_pays(units, ks, slots), w.split > 1);
                long long sim = tw_simulate(units, ks, slots, &w);
                CHECK_MSG(sim + (w.split > 1 ? w.split * TC_WAVE_FIXUP_KSTEPS : 0) <= w.steps ||
                              w.split == 1,
                          "units %lld ks %lld slots %lld: simulated %lld above the plan's %lld",
                          units, ks, slots, sim, w.steps);
                if (units % slots == 0)
                    CHECK_MSG(w.split == 1, "whole waves split: %lld on %lld", units, slots);
                if (slots >= 66 && units * 10 <= slots * 9 && units * 4 <= slots && ks >= 256)
                    CHECK_MSG(w.split > 1, "%lld tiles on %lld slots, %lld K steps not split",
                              units, slots, ks);
            }
}

/* The built-in choices: SPLITK 0 with 128 x 256 tiles for BF16 and FP16 deep K over few tiles
 * on an H200, never on sm_80, for batches or where the rule says no. */
TEST(tcgemm_wave_builtin_choices)
{
    const tpl_family *f = &tpl_tcgemm;
    at_device_info h200 = tt_device(9, 0, 227 * 1024, 1024, 65536);
    at_device_info a100 = tt_device(8, 0, 163 * 1024, 1024, 65536);
    static const at_dtype types[2] = {AT_R_16BF, AT_R_16F};
    int sp = tpl_param_index(f, "SPLITK"), bn = tpl_param_index(f, "BN");
    for (int t = 0; t < 2; t++) {
        int cfg[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        tpl_problem p = tt_problem(1024, 1024, 16384, types[t], AT_MATH_DEFAULT);
        CHECK(tpl_builtin_config(f, &h200, &p, 0, cfg, text, NULL));
        CHECK_MSG(cfg[sp] == 0 && cfg[bn] == 256, "1024x1024x16384: %s", text);
        CHECK(tpl_builtin_config(f, &h200, &p, 1, cfg, text, NULL));  /* deterministic too */
        CHECK_MSG(cfg[sp] == 0, "deterministic: %s", text);
        CHECK(tpl_builtin_config(f, &a100, &p, 0, cfg, text, NULL));
        CHECK_MSG(cfg[sp] != 0, "sm_80: %s", text);
        p.batch = 3;
        CHECK(tpl_builtin_config(f, &h200, &p, 0, cfg, text, NULL));
        CHECK_MSG(cfg[sp] != 0, "batch: %s", text);
        p = tt_problem(2048, 2048, 16384, types[t], AT_MATH_DEFAULT);
        CHECK(tpl_builtin_config(f, &h200, &p, 0, cfg, text, NULL));
        CHECK_MSG(cfg[sp] != 0, "2048x2048x16384: %s", text);
        p = tt_problem(4096, 4096, 4096, types[t], AT_MATH_DEFAULT);
        CHECK(tpl_builtin_config(f, &h200, &p, 0, cfg, text, NULL));
        CHECK_MSG(cfg[sp] == 1, "4096^3: %s", text);
    }
}

/* ---------------- GPU tier ---------------- */

/* n elements of type t (0 BF16, 1 FP16) uniform in [-1, 1), as bytes */
static void tw_fill(uint16_t *buf, size_t n, int t, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f;
        buf[i] = t == 0 ? th_to_bf16(v) : th_to_f16(v);
    }
}

static double tw_value(uint16_t h, int t)
{
    return t == 0 ? (double)th_from_bf16(h) : th_from_f16(h);
}

/* The first element of the m x n block of C (type t, leading dimension ldc) that is not finite or
 * off the float64 reference R by more than 4 roundings of C's type plus 2^-12 sqrt(k): 1 with its
 * row and column (a failing run names it and its tile). */
static int tw_first_wrong(const uint16_t *c, const double *r, int m, int n, int k, long long ldc,
                          int t, int *row, int *col)
{
    double u = t == 0 ? 1.0 / 256 : 1.0 / 2048, floor_ = sqrt((double)k) / 4096;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double got = tw_value(c[(size_t)i * ldc + j], t), want = r[(size_t)i * n + j];
            if (!isfinite(got) || fabs(got - want) > 4 * u * fabs(want) + floor_) {
                *row = i;
                *col = j;
                return 1;
            }
        }
    return 0;
}

/* The lattice's wave-fill configurations of 16-bit type t (SPLITK 0, RASTER 0, GROUP 8, NN,
 * EPI 0), valid on dev, plus the first of them with a fused epilogue (bias per column, GELU). */
static int tw_configs(const at_device_info *dev, int t, th_compiled *set, int max)
{
    const tpl_family *f = &tpl_tcgemm;
    long long raw = tpl_space_size(f);
    int n = 0, sp = tpl_param_index(f, "SPLITK"), ty = tpl_param_index(f, "TYPE");
    for (long long i = 0; i < raw && n < max - 1; i += TH_TC_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        if (c[sp] != 0 || c[ty] != t || c[tpl_param_index(f, "OPA")] ||
            c[tpl_param_index(f, "OPB")] || !f->valid(c, dev, NULL, 0))
            continue;
        set[n].fam = f;
        memcpy(set[n].cfg, c, sizeof set[n].cfg);
        tpl_config_format(f, c, set[n].text, sizeof set[n].text);
        set[n].arch = dev->arch;
        n++;
    }
    if (n > 0) {
        set[n] = set[0];
        set[n].cfg[tpl_param_index(f, "EPI")] = TPL_EPI(TPL_BIAS_COL, AT_ACT_GELU_TANH);
        tpl_config_format(f, set[n].cfg, set[n].text, sizeof set[n].text);
        n++;
    }
    return n;
}

/* Every wave-fill configuration of BF16 and FP16 at shapes its plan splits on this device (the
 * test checks that it does): fewer tiles than SMs (1024 x 1024 x 4096, 300 x 520 x 5000 ragged),
 * a ragged last wave (2500 x 6000 x 3000), deep K (1024 x 1024 x 16384, 1000 x 777 x 4100 with k
 * not a multiple of BK), ldc = n (VEC 8's TMA stores where C allows) and ldc = n + 3; alpha 1.25
 * with beta 0 over NaN, alpha -0.5 with beta 1.5; against the float64 reference with the family's
 * tolerance, the first wrong element printed; then three more runs of each, every byte of C the
 * same as the first run's (the pieces are summed in a fixed order). */
GPU_TEST(tcgemm_gpu_wave_fill_split)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    if (dev->cc_major != 9 || dev->cc_minor != 0) {
        printf("    not an sm_90 device: the wave-fill split is PATH 90's\n");
        ms_close(g);
        return;
    }
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const int shapes[][3] = {
        {1024, 1024, 4096}, {300, 520, 5000}, {2500, 6000, 3000}, {1024, 1024, 16384},
        {1000, 777, 4100},
    };
    static const float ab[2][2] = {{1.25f, 0.0f}, {-0.5f, 1.5f}};
    static const char *const names[2] = {"bf16", "fp16"};
    int runs = 0;
    for (int t = 0; t < 2 && !th_failed(); t++) {
        th_compiled set[8];
        memset(set, 0, sizeof set);
        int n_set = tw_configs(dev, t, set, 8);
        CHECK_MSG(n_set >= 3, "%s: %d wave-fill configurations", names[t], n_set);
        if (th_failed() || !th_compile_all(set, n_set)) {
            th_release_compiled(set, n_set);
            break;
        }
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && !th_failed(); s++)
        for (int pad = 0; pad <= 3 && !th_failed(); pad += 3) {
            int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
            long long ldc = n + pad;
            size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * ldc;
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A, B, C0, C, R, bias;
            uint16_t *h = malloc((na > nb ? na : nb) * 2), *hc0 = malloc(nc * 2),
                     *hc = malloc(nc * 2), *first = malloc(nc * 2);
            double *hr = malloc((size_t)m * n * 8);
            CHECK(h && hc0 && hc && first && hr);
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * 2, &A));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * 2, &B));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 2, &C0));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 2, &C));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * n * 8 + 8, &R));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)n * 2, &bias));
            tw_fill(h, na, t, 101 + (unsigned)s);
            CHECK(cu->MemcpyHtoD(A, h, na * 2) == CUDA_SUCCESS);
            tw_fill(h, nb, t, 202 + (unsigned)s);
            CHECK(cu->MemcpyHtoD(B, h, nb * 2) == CUDA_SUCCESS);
            tw_fill(h, n, t, 303 + (unsigned)s);
            CHECK(cu->MemcpyHtoD(bias, h, (size_t)n * 2) == CUDA_SUCCESS);
            tw_fill(hc0, nc, t, 404 + (unsigned)s);
            CHECK(cu->MemcpyHtoD(C0, hc0, nc * 2) == CUDA_SUCCESS);
            for (int i = 0; i < n_set && !th_failed(); i++) {
                int *c = set[i].cfg, cl = c[tpl_param_index(f, "CM")] * c[tpl_param_index(f, "CN")];
                int bm = c[tpl_param_index(f, "BM")], bn = c[tpl_param_index(f, "BN")];
                int bk = c[tpl_param_index(f, "BK")], epi = c[tpl_param_index(f, "EPI")];
                long long units = tpl_cdiv(tpl_cdiv(m, bm), c[tpl_param_index(f, "CM")]) *
                                  tpl_cdiv(tpl_cdiv(n, bn), c[tpl_param_index(f, "CN")]);
                tc_wave_plan w;
                tc_wave_plan_of(units, tpl_cdiv(k, bk), dev->sm_count / cl, &w);
                if (w.split == 1)
                    continue;   /* this tile's plan keeps the shape whole: SPLITK 1's kernel */
                tpl_problem p = tt_problem(m, n, k, t == 0 ? AT_R_16BF : AT_R_16F,
                                           AT_MATH_DEFAULT);
                p.epilogue = epi;
                for (int v = 0; v < 2 && !th_failed(); v++) {
                    float alpha = ab[v][0], beta = ab[v][1];
                    tpl_args args = tpl_gemm_args(m, n, k, alpha, A, k, B, n, beta, C0, (int)ldc);
                    args.problem = p;
                    args.operand[TPL_GEMM_BIAS].ptr = bias;
                    CHECK_OK(tpl_ref_gemm_args(ref, &args, C0, R));
                    /* the reference runs on ref's stream: wait for it before reading it back (on
                     * the H200 an unsynchronized copy read zeros: "first wrong element (0, 0):
                     * 37, want 0" with the Frobenius error at 0.00166, inside the rule) */
                    CHECK_OK(ex_sync(ref));
                    CHECK(cu->MemcpyDtoH(hr, R, (size_t)m * n * 8) == CUDA_SUCCESS);
                    CUmodule mod;
                    CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                    for (int rep = 0; rep < 4 && !th_failed(); rep++) {
                        /* C = C0, NaN in the m x n block when beta = 0 (it must not be read) */
                        memcpy(hc, hc0, nc * 2);
                        for (int r = 0; beta == 0.0f && r < m; r++)
                            memset(hc + (size_t)r * ldc, 0xff, (size_t)n * 2);
                        CHECK(cu->MemcpyHtoD(C, hc, nc * 2) == CUDA_SUCCESS);
                        at_exec ex;
                        ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
                        args.operand[TPL_GEMM_C].ptr = C;
                        at_status st = f->run(&ex, c, &args);
                        if (st == AT_OK)
                            st = ex_sync(&ex);
                        ex_release(&ex);
                        CHECK_MSG(st == AT_OK, "%s: %s", set[i].text, err);
                        CHECK(cu->MemcpyDtoH(hc, C, nc * 2) == CUDA_SUCCESS);
                        if (rep == 0) {
                            double e = -1;
                            CHECK_OK(tpl_rel_error_typed(ref, p.dtype, C, m, n, ldc, R, &e));
                            int row = -1, col = -1;
                            int wrong = tw_first_wrong(hc, hr, m, n, k, ldc, t, &row, &col);
                            CHECK_MSG(e <= f->tolerance(&p) && !wrong,
                                      "%s %s %dx%dx%d ldc %lld alpha %g beta %g (plan: %lld whole "
                                      "units, %lld pieces each): error %g (tolerance %g); first "
                                      "wrong element (%d, %d) of tile (%d, %d): %g, want %.6g",
                                      names[t], set[i].text, m, n, k, ldc, alpha, beta,
                                      w.dp_units, w.split, e, f->tolerance(&p), row, col,
                                      row / bm, col / bn,
                                      wrong ? tw_value(hc[(size_t)row * ldc + col], t) : 0.0,
                                      wrong ? hr[(size_t)row * n + col] : 0.0);
                            memcpy(first, hc, nc * 2);
                            runs++;
                        } else {
                            size_t at = 0;
                            while (at < nc && hc[at] == first[at])
                                at++;
                            CHECK_MSG(at == nc, "%s %dx%dx%d beta %g: run %d differs from the "
                                      "first at element (%lld, %lld): %04x, first %04x",
                                      set[i].text, m, n, k, beta, rep, (long long)(at / ldc),
                                      (long long)(at % ldc), at < nc ? hc[at] : 0,
                                      at < nc ? first[at] : 0);
                        }
                    }
                    cu->ModuleUnload(mod);
                }
            }
            tpl_workset_free(cu, &ws);
            free(h);
            free(hc0);
            free(hc);
            free(first);
            free(hr);
        }
        printf("    %s: %d wave-fill configurations verified\n", names[t], n_set);
        th_release_compiled(set, n_set);
    }
    printf("    %d split runs verified, each repeated 3 times bit-identical\n", runs);
    CHECK(runs >= 2 * 3 * 2);
    ms_close(g);
}
