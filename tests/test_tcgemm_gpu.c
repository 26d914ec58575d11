/* test_tcgemm_gpu.c: the tensor-core family on the GPU against float64 references: every type
 * and shape class, every op pair and batches, layouts, offsets, alpha and beta, a faulty
 * configuration rejected (its space and rules: test_tcgemm.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "db.h"
#include "harness.h"
#include "th_compile.h"
#include "lookup.h"
#include "measure.h"
#include "tpl.h"
#include "tcgemm.h"
#include "th_family.h"
#include "th_tcgemm.h"

#define TT_STEP TH_TC_STEP     /* multiples: the plain kernels (th_tcgemm.h) */

/* ---------------- GPU tier ---------------- */

/* Every configuration of type t valid on dev in tile order RASTER 0, GROUP 8, plus each order
 * variant of the first PATH 90 (or PATH 80) tile; with `few` bit 1, only the first of each PATH,
 * split-K and cluster kind; the configurations reading an operand as op T (OPA, OPB 1) only
 * with bit 2 (each of those kinds too). */
static th_compiled *tt_type_set(const at_device_info *dev, int t, int few, int *n)
{
    const tpl_family *f = &tpl_tcgemm;
    long long raw = tpl_space_size(f);
    th_compiled *set = calloc(256, sizeof *set);
    int seen_kind[128] = {0}, first_tile[P_COUNT], have_first = 0;
    *n = 0;
    char why[256];
    for (long long i = 0; set && i < raw && *n < 256; i += TT_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        if (c[P_TYPE] != t || !f->valid(c, dev, why, sizeof why))
            continue;
        if ((c[P_OPA] || c[P_OPB]) && !(few & 2))     /* op-T readers only when asked */
            continue;
        int other_order = c[P_RASTER] != 0 || c[P_GROUP] != 8;
        if (other_order) {
            /* orders only on the first tile seen */
            if (!have_first || memcmp(first_tile + P_BM, c + P_BM,
                                      sizeof(int) * (P_RASTER - P_BM)) != 0 ||
                c[P_PATH] != first_tile[P_PATH] || c[P_VEC] != first_tile[P_VEC] || (few & 1))
                continue;
        } else if (!have_first) {
            memcpy(first_tile, c, sizeof first_tile);
            have_first = 1;
        }
        if (few & 1) {
            int kind = (c[P_VEC] == 8) * 64 + (c[P_OPA] * 2 + c[P_OPB]) * 16 +
                       (c[P_PATH] == 90) * 8 + (c[P_SPLITK] > 1) * 4 +
                       (c[P_CM] * c[P_CN] > 1) * 2 + (c[P_LOADW] != 16);
            if (seen_kind[kind]++)
                continue;
        }
        th_compiled *s = &set[(*n)++];
        s->fam = f;
        memcpy(s->cfg, c, sizeof s->cfg);
        tpl_config_format(f, c, s->text, sizeof s->text);
        s->arch = dev->arch;
    }
    return set;
}

static const struct { at_dtype t; at_math m; const char *name; } tt_kinds[3] = {
    {AT_R_16BF, AT_MATH_DEFAULT, "bf16"}, {AT_R_16F, AT_MATH_DEFAULT, "fp16"},
    {AT_R_32F, AT_MATH_TF32, "tf32"},
};

/* Every type, every lattice tile (both paths where the device runs them, split-K, clusters, the
 * tile orders of one tile) against the float64 reference at odd and ragged shapes, through the
 * tuner's verification (fresh inputs, alpha 1.5, beta 0 over NaN); then the named winners'
 * speed at 4096^3 for the log. */
GPU_TEST(tcgemm_gpu_every_type_and_shape)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    static const long long shapes[][3] = {
        {1, 1, 1}, {7, 13, 5}, {129, 65, 33}, {517, 1031, 263}, {1025, 1023, 1027},
    };
    for (int t = 0; t < 3 && !th_failed(); t++) {
        int n = 0;
        th_compiled *set = tt_type_set(dev, t, 0, &n);
        CHECK(set && n >= 4);
        if (!th_compile_all(set, n)) {
            th_free_compiled(set, n);
            break;
        }
        double worst = 0;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && !th_failed(); s++) {
            tpl_problem p = tt_problem(shapes[s][0], shapes[s][1], shapes[s][2], tt_kinds[t].t,
                                       tt_kinds[t].m);
            if (ms_prepare(g, f, &p, 21 + s, err, sizeof err) != AT_OK) {
                th_fail(__FILE__, __LINE__, "prepare: %s", err);
                break;
            }
            for (int i = 0; i < n; i++) {
                double e = -1;
                at_status st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &e, err,
                                         sizeof err);
                if (st != AT_OK || !(e <= f->tolerance(&p))) {
                    th_fail(__FILE__, __LINE__, "%s %lldx%lldx%lld %s: %s (error %g, %s)",
                            tt_kinds[t].name, shapes[s][0], shapes[s][1], shapes[s][2],
                            set[i].text, at_status_string(st), e, err);
                    break;
                }
                if (e / f->tolerance(&p) > worst)
                    worst = e / f->tolerance(&p);
            }
        }
        printf("    %s: %d configurations x %zu shapes verified, worst error %.2f of the "
               "tolerance\n", tt_kinds[t].name, n, sizeof shapes / sizeof shapes[0], worst);
        th_free_compiled(set, n);
    }
    /* the named configurations at 4096^3: verified, timed */
    for (int b = -1; b < f->n_baselines && !th_failed(); b++) {
        th_compiled one;
        memset(&one, 0, sizeof one);
        one.fam = f;
        const char *text = b < 0 ? f->default_config : f->baselines[b].config;
        char why[256];
        CHECK(tt_parse(text, one.cfg));
        if (!f->valid(one.cfg, dev, why, sizeof why))
            continue;
        snprintf(one.text, sizeof one.text, "%s", b < 0 ? "default" : f->baselines[b].name);
        one.arch = dev->arch;
        if (!th_compile_all(&one, 1))
            break;
        int t = one.cfg[P_TYPE];
        /* an FP8 row computes FP8 operands (its pair, per-tensor or block scales) into C of its
         * TYPE */
        at_math math = one.cfg[P_FP8] ? tpl_math_fp8_scaled(one.cfg[P_FP8], one.cfg[P_SCALE])
                                      : tt_kinds[t].m;
        tpl_problem p = tt_problem(4096, 4096, 4096, tt_kinds[t].t, math);
        double e = -1;
        at_status st = ms_prepare(g, f, &p, 3, err, sizeof err);
        if (st == AT_OK)
            st = ms_verify(g, f, one.cfg, one.cubin, one.size, &e, err, sizeof err);
        CHECK_MSG(st == AT_OK, "%s at 4096^3: %s %s", one.text, at_status_string(st), err);
        ms_options o;
        ms_timing tm;
        ms_default_options(&o);
        if (ms_time(g, f, one.cfg, one.cubin, one.size, &o, &tm, err, sizeof err) == AT_OK)
            printf("    %-16s %s 4096^3: %.3f ms = %.0f TFLOP/s, error %.2e (%.2f of the "
                   "tolerance)\n", one.text, tt_kinds[t].name, tm.median_ms,
                   2.0 * 4096 * 4096 * 4096 / tm.median_ms * 1e-9, e, e / f->tolerance(&p));
        th_release_compiled(&one, 1);
    }
    ms_close(g);
}

/* Every type and op pair with batches, on a few configurations of each type (each PATH the
 * device runs, split-K, clusters, narrow loads, each op pair's in-place readers): an op-T
 * operand is read as stored by its OPA / OPB 1 kernels (PATH 80 every type, PATH 90 BF16/FP16,
 * PATH 90 TF32's OPB 1 and OPA 1 with OPB 1) and goes through the transposing pack elsewhere
 * (PATH 90 TF32 OPA / OPB 0, kernels run outside their kind); odd sizes make the tiles ragged
 * and the rows unaligned (16-byte loads then pack the operand in its stored layout, narrow
 * loads read it in place), batches of odd strides offset
 * every product's operands off 16 bytes, 200 x 136 x 72 keeps every row and product 16-byte
 * aligned (16-byte loads in place over ragged tiles), 100 x 70 x 1030 admits split-K; every
 * product against float64. */
GPU_TEST(tcgemm_gpu_ops_and_batches)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    static const long long shapes[][4] = {
        /* m, n, k, batch */
        {129, 65, 33, 1}, {1, 1, 1, 1}, {300, 257, 190, 1}, {65, 33, 17, 3}, {129, 128, 64, 2},
        {200, 136, 72, 3}, {100, 70, 1030, 1},
    };
    int runs = 0;
    for (int t = 0; t < 3 && !th_failed(); t++) {
        int n = 0;
        th_compiled *set = tt_type_set(dev, t, 3, &n);     /* one of each kind, op-T readers too */
        CHECK(set && n >= 2);
        if (!th_compile_all(set, n)) {
            th_free_compiled(set, n);
            break;
        }
        for (int ops = 0; ops < 4 && !th_failed(); ops++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && !th_failed(); s++) {
                tpl_problem p = tt_problem(shapes[s][0], shapes[s][1], shapes[s][2],
                                           tt_kinds[t].t, tt_kinds[t].m);
                p.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
                p.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
                p.batch = shapes[s][3];
                CHECK_MSG(ms_prepare(g, f, &p, 61 + s, err, sizeof err) == AT_OK, "prepare: %s",
                          err);
                for (int i = 0; i < n && !th_failed(); i++) {
                    double e = -1;
                    /* OPA / OPB 1 compute only problems whose operand is op T; split-K only
                     * where its rule admits it */
                    if (!f->applicable(set[i].cfg, &p)) {
                        at_status st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &e,
                                                 err, sizeof err);
                        /* never a wrong result: refused, or right */
                        CHECK_MSG(st != AT_OK || e <= f->tolerance(&p), "%s ops %d: %s ran "
                                  "outside its kind with error %g", tt_kinds[t].name, ops,
                                  set[i].text, e);
                        continue;
                    }
                    at_status st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &e,
                                             err, sizeof err);
                    CHECK_MSG(st == AT_OK && e <= f->tolerance(&p), "%s ops %d %lldx%lldx%lld "
                              "batch %lld %s: %s (error %g, %s)", tt_kinds[t].name, ops,
                              shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3],
                              set[i].text, at_status_string(st), e, err);
                    runs++;
                }
            }
        th_free_compiled(set, n);
    }
    printf("    %d verified runs (every type x 4 op pairs x %zu shapes)\n", runs,
           sizeof shapes / sizeof shapes[0]);
    CHECK(runs >= 3 * 4 * 7 * 2);
    ms_close(g);
}

/* Bytes of an element of type t. */
static size_t tt_es(int t)
{
    return t == 2 ? 4 : 2;
}

/* How many of C's count elements (es bytes each) outside the product's rows x cols block
 * (its first element at offset off, rows ldc elements apart) differ from c0; *first is the
 * index of the first of them (-1 if none). */
static long long tt_changed_outside(const unsigned char *c, const unsigned char *c0, size_t count,
                                    size_t es, long long off, long long ldc, long long rows,
                                    long long cols, long long *first)
{
    long long changed = 0;
    *first = -1;
    for (size_t x = 0; x < count; x++) {
        long long at = (long long)x - off;
        int inside = at >= 0 && at / ldc < rows && at % ldc < cols;
        if (!inside && memcmp(c + x * es, c0 + x * es, es) != 0) {
            *first = *first < 0 ? (long long)x : *first;
            changed++;
        }
    }
    return changed;
}

/* Fills n elements of type t on the host from an LCG in [-1, 1) (rounded as the device's
 * conversion would: only the comparison with the float64 reference of these bits matters). */
static void tt_host_fill(unsigned char *buf, size_t n, int t, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f;
        unsigned bits;
        memcpy(&bits, &v, 4);
        if (t == 2) {
            memcpy(buf + 4 * i, &bits, 4);
        } else if (t == 0) {
            unsigned short h = (unsigned short)(bits >> 16);
            memcpy(buf + 2 * i, &h, 2);
        } else {
            /* FP16 of a value in [-1, 1): sign, exponent, 10 mantissa bits (truncated) */
            unsigned sign = bits >> 31, e = (bits >> 23) & 0xff, mant = (bits >> 13) & 0x3ff;
            int he = (int)e - 127 + 15;
            unsigned short h = (unsigned short)(sign << 15);
            if (he > 0)
                h |= (unsigned short)((unsigned)he << 10 | mant);
            memcpy(buf + 2 * i, &h, 2);
        }
    }
}

/* 1 if the layouts test runs configuration c on op pair ops (bit 0 op(A) = T, bit 1 op(B) = T):
 * a kernel that reads op-T operands as stored (PATH 80, PATH 90 BF16/FP16) on its own pair
 * (OPA, OPB); PATH 90 TF32 on every pair whose op-T operands it reads as stored or packs (OPA /
 * OPB 1 only where that operand is op T). */
static int tt_runs_on(const int *c, int ops)
{
    if (c[P_PATH] == 90 && c[P_TYPE] == 2)
        return (!c[P_OPA] || (ops & 1)) && (!c[P_OPB] || (ops >> 1));
    return c[P_OPA] == (ops & 1) && c[P_OPB] == (ops >> 1);
}

/* Odd and padded leading dimensions, base pointers offset by 1..5 elements, alpha/beta with
 * beta = 0 over NaN and beta != 0, k = 0, every op pair (an op-T operand keeps the case's
 * padding past its stored columns): a few configurations of every type (each path, the narrow
 * loads, the packed 16-byte loads, TMA and staged epilogues, split-K, clusters, and the ones
 * reading op-T operands as stored, each on its own op pair) against the float64 reference in
 * the m x n block, and every byte of C outside it unchanged. */
GPU_TEST(tcgemm_gpu_layouts_offsets_alpha_beta)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const int cases[][9] = {
        /* m, n, k, lda, ldb, ldc (op N; op T: the same padding past m, k), offset A, B, C
         * (elements) */
        {129, 65, 33, 37, 67, 71, 1, 3, 5},
        {300, 257, 190, 195, 264, 260, 0, 0, 0},
        {256, 384, 128, 264, 392, 392, 8, 8, 8},
        {64, 1000, 70, 71, 1001, 1003, 1, 1, 1},
        {97, 131, 0, 1, 131, 133, 0, 0, 2},
        /* 16-bit rows 4- and 8-byte aligned (ld % 8 of 2, 4, 6; bases 4 and 8 bytes off):
         * PATH 80 reads them in place 4 or 8 bytes at a time, PATH 90 packs them */
        {200, 130, 90, 98, 138, 134, 2, 4, 0},
        {150, 90, 70, 76, 94, 98, 4, 2, 6},
    };
    static const float ab[3][2] = {{1.25f, 0.0f}, {-0.5f, 1.5f}, {1.0f, -1.0f}};
    int runs_t[4] = {0};
    for (int t = 0; t < 3 && !th_failed(); t++) {
        int n_set = 0;
        th_compiled *set = tt_type_set(ms_device(g), t, 3, &n_set);
        if (!set || !th_compile_all(set, n_set)) {
            th_free_compiled(set, n_set);
            break;
        }
        size_t es = tt_es(t);
        for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++)
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            int m = cases[d][0], n = cases[d][1], k = cases[d][2];
            int ta = ops & 1, tb = ops >> 1;
            long long lda = ta ? m + cases[d][3] - k : cases[d][3];
            long long ldb = tb ? k + cases[d][4] - n : cases[d][4], ldc = cases[d][5];
            /* at k = 0 an op-T operand's rows are empty: its ld is still at least 1 (BLAS) */
            lda = lda < 1 ? 1 : lda;
            ldb = ldb < 1 ? 1 : ldb;
            size_t rows_a = ta ? (size_t)(k ? k : 1) : (size_t)m;
            size_t rows_b = tb ? (size_t)n : (size_t)(k ? k : 1);
            size_t na = cases[d][6] + rows_a * lda, nb = cases[d][7] + rows_b * ldb;
            size_t nc = cases[d][8] + (size_t)m * ldc;
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A, B, C0, C, R;
            unsigned char *hc0 = malloc(nc * es), *hc = malloc(nc * es), *hb = malloc(
                (na > nb ? na : nb) * es);
            CHECK(hc0 && hc && hb);
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * es, &A));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * es, &B));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * es, &C0));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * es, &C));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * n * 8 + 8, &R));
            tt_host_fill(hb, na, t, 11 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(A, hb, na * es) == CUDA_SUCCESS);
            tt_host_fill(hb, nb, t, 22 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(B, hb, nb * es) == CUDA_SUCCESS);
            tt_host_fill(hc0, nc, t, 33 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(C0, hc0, nc * es) == CUDA_SUCCESS);
            CUdeviceptr a = A + cases[d][6] * es, b = B + cases[d][7] * es;
            CUdeviceptr c0 = C0 + cases[d][8] * es, c = C + cases[d][8] * es;
            tpl_problem p = tt_problem(m, n, k, tt_kinds[t].t, tt_kinds[t].m);
            p.op_a = ta ? AT_OP_T : AT_OP_N;
            p.op_b = tb ? AT_OP_T : AT_OP_N;
            for (int v = 0; v < 3 && !th_failed(); v++) {
                float alpha = ab[v][0], beta = ab[v][1];
                tpl_args rargs = tpl_gemm_args(m, n, k, alpha, a, (int)lda, b, (int)ldb, beta, c0,
                                               (int)ldc);
                rargs.problem = p;
                CHECK_OK(tpl_ref_gemm_args(ref, &rargs, c0, R));
                for (int i = 0; i < n_set && !th_failed(); i++) {
                    if (!tt_runs_on(set[i].cfg, ops))
                        continue;
                    /* C = C0, with NaN in the m x n block when beta = 0 (it must not be read) */
                    memcpy(hc, hc0, nc * es);
                    for (int r = 0; beta == 0.0f && r < m; r++)
                        memset(hc + (cases[d][8] + (size_t)r * ldc) * es, 0xff, (size_t)n * es);
                    CHECK(cu->MemcpyHtoD(C, hc, nc * es) == CUDA_SUCCESS);
                    CUmodule mod;
                    CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                    at_exec ex;
                    ex_init(&ex, cu, ms_device(g), mod, ref->stream, err, sizeof err);
                    tpl_args args = tpl_gemm_args(m, n, k, alpha, a, (int)lda, b, (int)ldb, beta, c,
                                                  (int)ldc);
                    args.problem = p;
                    at_status s = f->run(&ex, set[i].cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    ex_release(&ex);
                    cu->ModuleUnload(mod);
                    CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                    double e = -1;
                    CHECK_OK(tpl_rel_error_typed(ref, tt_kinds[t].t, c, m, n, ldc, R, &e));
                    CHECK_MSG(e <= f->tolerance(&p), "%s %dx%dx%d ops %s%s ld %lld/%lld/%lld "
                              "offsets %d/%d/%d alpha %g beta %g %s: error %g", tt_kinds[t].name,
                              m, n, k, tpl_op_name(p.op_a), tpl_op_name(p.op_b), lda, ldb, ldc,
                              cases[d][6], cases[d][7], cases[d][8], alpha, beta, set[i].text, e);
                    /* outside the m x n block nothing changed */
                    CHECK(cu->MemcpyDtoH(hc, C, nc * es) == CUDA_SUCCESS);
                    long long first;
                    CHECK_MSG(tt_changed_outside(hc, hc0, nc, es, cases[d][8], ldc, m, n,
                                                 &first) == 0,
                              "%s: element %lld outside C's block changed", set[i].text, first);
                    runs_t[ops] += v == 0;
                }
            }
            tpl_workset_free(cu, &ws);
            free(hc0);
            free(hc);
            free(hb);
        }
        printf("    %s: %d configurations x %zu layouts x their op pairs x 3 alpha/beta\n",
               tt_kinds[t].name, n_set, sizeof cases / sizeof cases[0]);
        th_free_compiled(set, n_set);
    }
    /* every op pair ran op-T readers (PATH 80 on every device) */
    printf("    runs per op pair (NN, TN, NT, TT): %d %d %d %d\n", runs_t[0], runs_t[1], runs_t[2],
           runs_t[3]);
    for (int ops = 0; ops < 4 && !th_failed(); ops++)
        CHECK_MSG(runs_t[ops] >= 3 * 5 * 2, "op pair %d: %d runs", ops, runs_t[ops]);
    ms_close(g);
}

/* The PATH 90 TF32 kernels that read an op-T operand as stored (OPB 1: B's K-major tile into the
 * register fragments; OPA 1 with OPB 1: D = A B from A's M-major tile; docs/notes/tcgemm.md 19),
 * every one of the lattice in tile order RASTER 0, GROUP 8, against the float64 reference: the
 * calls NT, TN and TT, row- and column-major (a column-major call is its row-major canonical form,
 * A and B swapped: col-major NT is row-major TN, which no such kernel takes, and must refuse), at
 * ragged sizes (333 x 517 x 259, 1000 x 1000 x 1024, 1 x 300 x 40, 200 x 150 x 2100: split-K up
 * to 16 slices), tight leading dimensions, padded ones the TMA reads in place (+4 elements:
 * 16-byte rows off 128) and odd ones (+3: the stored-layout pack), alpha 1.25 with beta 0 over
 * NaN and alpha -0.5 with beta 1.5; then a fused epilogue (bias per column, GELU) on one kernel
 * of each form. */
GPU_TEST(tcgemm_gpu_tf32_op_t_in_place)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    const at_device_info *dev = ms_device(g);
    if (dev->cc_major != 9 || dev->cc_minor != 0) {
        printf("    not an sm_90 device: PATH 90 does not run here\n");
        ms_close(g);
        return;
    }
    long long raw = tpl_space_size(f);
    th_compiled *set = calloc(64, sizeof *set);
    int n_set = 0;
    CHECK(set != NULL);
    for (long long i = 0; set && i < raw && n_set < 64; i += TT_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        if (c[P_TYPE] != 2 || c[P_PATH] != 90 || !c[P_OPB] || c[P_RASTER] != 0 ||
            c[P_GROUP] != 8 || !f->valid(c, dev, NULL, 0))
            continue;
        th_compiled *t = &set[n_set++];
        t->fam = f;
        memcpy(t->cfg, c, sizeof t->cfg);
        tpl_config_format(f, c, t->text, sizeof t->text);
        t->arch = dev->arch;
    }
    int forms[2] = {0};
    for (int i = 0; i < n_set; i++)
        forms[set[i].cfg[P_OPA]]++;
    CHECK_MSG(forms[0] >= 6 && forms[1] >= 4, "%d OPB 1 and %d OPA 1 kernels", forms[0], forms[1]);
    if (th_failed() || !th_compile_all(set, n_set)) {
        th_free_compiled(set, n_set);
        ms_close(g);
        return;
    }
    static const int shapes[][3] = {{333, 517, 259}, {1000, 1000, 1024}, {1, 300, 40},
                                    {200, 150, 2100}};
    static const int pads[3] = {0, 4, 3};
    static const float ab[2][2] = {{1.25f, 0.0f}, {-0.5f, 1.5f}};
    static const at_op call_ops[3][2] = {{AT_OP_N, AT_OP_T}, {AT_OP_T, AT_OP_N}, {AT_OP_T, AT_OP_T}};
    int *runs = calloc((size_t)n_set, sizeof *runs), refused = 0, outside_reports = 0;
    CHECK(runs != NULL);
    for (size_t sh = 0; runs && sh < sizeof shapes / sizeof shapes[0] && !th_failed(); sh++)
    for (int o = 0; o < 2 && !th_failed(); o++)
    for (int cp = 0; cp < 3 && !th_failed(); cp++)
    for (int pd = 0; pd < 3 && !th_failed(); pd++) {
        at_order order = o ? AT_COL_MAJOR : AT_ROW_MAJOR;
        int m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
        at_op opa = call_ops[cp][0], opb = call_ops[cp][1];
        /* each operand as stored: rows x cols with ld >= cols (row-major) or >= rows (column-
         * major) plus the padding */
        long long ar = opa == AT_OP_N ? m : k, ac = opa == AT_OP_N ? k : m;
        long long br = opb == AT_OP_N ? k : n, bc = opb == AT_OP_N ? n : k;
        long long lda = (o ? ar : ac) + pads[pd], ldb = (o ? br : bc) + pads[pd];
        long long ldc = (o ? m : n) + pads[pd];
        size_t na = (size_t)(o ? ac : ar) * lda, nb = (size_t)(o ? bc : br) * ldb;
        size_t nc = (size_t)(o ? n : m) * ldc;
        tpl_workset ws;
        memset(&ws, 0, sizeof ws);
        CUdeviceptr A, B, C0, C, R;
        float *hc0 = malloc(nc * 4), *hc = malloc(nc * 4);
        unsigned char *hb = malloc((na > nb ? na : nb) * 4);
        CHECK(hc0 && hc && hb);
        CHECK_OK(tpl_ws_alloc(ref, &ws, na * 4, &A));
        CHECK_OK(tpl_ws_alloc(ref, &ws, nb * 4, &B));
        CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 4, &C0));
        CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 4, &C));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * n * 8 + 8, &R));
        tt_host_fill(hb, na, 2, 101 + (unsigned)(sh * 7 + pd));
        CHECK(cu->MemcpyHtoD(A, hb, na * 4) == CUDA_SUCCESS);
        tt_host_fill(hb, nb, 2, 202 + (unsigned)(sh * 7 + pd));
        CHECK(cu->MemcpyHtoD(B, hb, nb * 4) == CUDA_SUCCESS);
        tt_host_fill((unsigned char *)hc0, nc, 2, 303 + (unsigned)sh);
        CHECK(cu->MemcpyHtoD(C0, hc0, nc * 4) == CUDA_SUCCESS);
        for (int v = 0; v < 2 && !th_failed(); v++) {
            float alpha = ab[v][0], beta = ab[v][1];
            /* the call as the user makes it, then its row-major canonical form (args.h) */
            tpl_args call = tpl_gemm_args(m, n, k, alpha, A, (int)lda, B, (int)ldb, beta, C0,
                                          (int)ldc);
            call.problem = tt_problem(m, n, k, AT_R_32F, AT_MATH_TF32);
            call.problem.order = order;
            call.problem.op_a = opa;
            call.problem.op_b = opb;
            ag_gemm_canonical(&call);
            const tpl_problem *p = &call.problem;
            int cm = (int)p->dims[0], cn = (int)p->dims[1];
            long long cldc = call.operand[TPL_GEMM_C].ld;
            CHECK_OK(tpl_ref_gemm_args(ref, &call, C0, R));
            for (int i = 0; i < n_set && !th_failed(); i++) {
                if (!f->applicable(set[i].cfg, p)) {
                    /* op N where the kernel reads op T (col-major NT, row-major TN), or split-K
                     * outside its rule */
                    refused += p->op_b == AT_OP_N || (p->op_a == AT_OP_N && set[i].cfg[P_OPA]);
                    continue;
                }
                /* C = C0, NaN in the product's block when beta = 0 (it must not be read) */
                memcpy(hc, hc0, nc * 4);
                for (int r = 0; beta == 0.0f && r < cm; r++)
                    memset(hc + (size_t)r * cldc, 0xff, (size_t)cn * 4);
                CHECK(cu->MemcpyHtoD(C, hc, nc * 4) == CUDA_SUCCESS);
                CUmodule mod;
                CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                at_exec ex;
                ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
                tpl_args args = call;
                args.operand[TPL_GEMM_C].ptr = C;
                at_status s = f->run(&ex, set[i].cfg, &args);
                if (s == AT_OK)
                    s = ex_sync(&ex);
                ex_release(&ex);
                cu->ModuleUnload(mod);
                CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                double e = -1;
                CHECK_OK(tpl_rel_error_typed(ref, AT_R_32F, C, cm, cn, cldc, R, &e));
                CHECK_MSG(e <= f->tolerance(p), "%s-major %dx%dx%d %s%s (canonical %s%s) pad %d "
                          "alpha %g beta %g %s: error %g (tolerance %g)", o ? "col" : "row", m, n,
                          k, tpl_op_name(opa), tpl_op_name(opb), tpl_op_name(p->op_a),
                          tpl_op_name(p->op_b), pads[pd], alpha, beta, set[i].text, e,
                          f->tolerance(p));
                /* outside the product's block nothing changed */
                CHECK(cu->MemcpyDtoH(hc, C, nc * 4) == CUDA_SUCCESS);
                long long first, changed = tt_changed_outside(
                                     (const unsigned char *)hc, (const unsigned char *)hc0, nc, 4,
                                     0, cldc, cm, cn, &first);
                if (changed && outside_reports++ < 40)
                    printf("    %s: %s-major %dx%dx%d %s%s pad %d beta %g: %lld elements outside "
                           "C's %dx%d block (ldc %lld) changed, the first at row %lld column %lld\n",
                           set[i].text, o ? "col" : "row", m, n, k, tpl_op_name(opa),
                           tpl_op_name(opb), pads[pd], beta, changed, cm, cn, cldc, first / cldc,
                           first % cldc);
                runs[i] += v == 0;
            }
        }
        tpl_workset_free(cu, &ws);
        free(hc0);
        free(hc);
        free(hb);
    }
    /* no kernel wrote outside the product's block (every such run is listed above) */
    CHECK_MSG(outside_reports == 0, "%d runs changed C outside the product's block",
              outside_reports);
    /* every kernel ran: OPB 1 on canonical NT and TT, OPA 1 on TT (split-K at 1000^2 x 1024) */
    for (int i = 0; runs && i < n_set; i++)
        CHECK_MSG(runs[i] >= (set[i].cfg[P_SPLITK] > 1 ? 2 : 6), "%s: %d runs", set[i].text,
                  runs[i]);
    CHECK(refused > 0);
    printf("    %d TF32 kernels (OPB 1: %d, OPA 1: %d) x 4 shapes x NT/TN/TT x row/col x 3 "
           "leading dimensions x 2 alpha/beta; %d refused pairs\n", n_set, forms[0], forms[1],
           refused);
    free(runs);
    th_free_compiled(set, n_set);
    /* a fused epilogue (bias per column of C, GELU tanh) on the first kernel of each form */
    for (int form = 0; form < 2 && !th_failed(); form++) {
        th_compiled one;
        memset(&one, 0, sizeof one);
        int found = 0;
        for (long long i = 0; i < raw && !found; i += TT_STEP) {
            tpl_config_from_index(f, i, one.cfg);
            found = one.cfg[P_TYPE] == 2 && one.cfg[P_PATH] == 90 && one.cfg[P_OPB] &&
                    one.cfg[P_OPA] == form && one.cfg[P_SPLITK] == 1 && f->valid(one.cfg, dev, NULL, 0);
        }
        CHECK(found);
        one.cfg[P_EPI] = TPL_EPI(TPL_BIAS_COL, 2);
        CHECK(f->valid(one.cfg, dev, NULL, 0));
        one.fam = f;
        one.arch = dev->arch;
        tpl_config_format(f, one.cfg, one.text, sizeof one.text);
        if (!th_compile_all(&one, 1))
            break;
        tpl_problem p = tt_problem(333, 517, 259, AT_R_32F, AT_MATH_TF32);
        p.op_a = form ? AT_OP_T : AT_OP_N;
        p.op_b = AT_OP_T;
        p.epilogue = one.cfg[P_EPI];
        double e = -1;
        at_status st = ms_prepare(g, f, &p, 5, err, sizeof err);
        if (st == AT_OK)
            st = ms_verify(g, f, one.cfg, one.cubin, one.size, &e, err, sizeof err);
        CHECK_MSG(st == AT_OK && e <= f->tolerance(&p), "%s: %s (error %g, %s)", one.text,
                  at_status_string(st), e, err);
        th_release_compiled(&one, 1);
    }
    ms_close(g);
}

/* The BATCH 1 configurations of type t valid on dev in tile order RASTER 0 (every PATH 90 tile,
 * op-T readers included: tt_runs_on picks each one's op pairs); *n of them. */
static th_compiled *tt_batch_set(const at_device_info *dev, int t, int *n)
{
    const tpl_family *f = &tpl_tcgemm;
    long long raw = tpl_space_size(f);
    th_compiled *set = calloc(64, sizeof *set);
    *n = 0;
    for (long long i = TH_TC_INDEX(0, 0, 0, 1); set && i < raw && *n < 64; i += TT_STEP) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, i, c);
        if (c[P_TYPE] != t || c[P_BATCH] != 1 || c[P_RASTER] != 0 || !f->valid(c, dev, NULL, 0))
            continue;
        th_compiled *x = &set[(*n)++];
        x->fam = f;
        memcpy(x->cfg, c, sizeof x->cfg);
        tpl_config_format(f, c, x->text, sizeof x->text);
        x->arch = dev->arch;
    }
    return set;
}

/* How many of C's count elements (es bytes each) outside every product's rows x cols block
 * (product z's first element at off + z * sc, rows ldc apart) differ from c0; *first the first. */
static long long tt_changed_outside_batch(const unsigned char *c, const unsigned char *c0,
                                          size_t count, size_t es, long long off, long long sc,
                                          long long batch, long long ldc, long long rows,
                                          long long cols, long long *first)
{
    long long changed = 0;
    *first = -1;
    for (size_t x = 0; x < count; x++) {
        long long at = (long long)x - off, z = at >= 0 && sc > 0 ? at / sc : 0;
        long long in = at - z * sc;
        int inside = at >= 0 && z < batch && in / ldc < rows && in % ldc < cols;
        if (!inside && memcmp(c + x * es, c0 + x * es, es) != 0) {
            *first = *first < 0 ? (long long)x : *first;
            changed++;
        }
    }
    return changed;
}

/* PATH 90 BATCH 1 (a strided batch's products in one persistent launch: 3-D tensor maps, units
 * over tiles x products) against the float64 reference of each product alone, every BATCH 1
 * kernel of every type (RASTER 0) on its op pairs: m, n, k off the tiles, products apart by
 * more than their extent (padding between them, aligned: one 3-D map), a product stride that is
 * not a multiple of 16 bytes (A and B packed, C stored without TMA), a C stride alone off (the
 * 3-D C map refused, the staged or direct stores), a batch of 1 (a map of depth 1), many small
 * products (more units than SMs), k = 0, alpha with beta = 0 over NaN and beta != 0; every
 * element of C outside the products' m x n blocks (the padding) unchanged. */
GPU_TEST(tcgemm_gpu_batch_in_one_launch)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    if (dev->cc_major != 9 || dev->cc_minor != 0) {
        printf("    PATH 90 runs on sm_90 only: nothing to run on %s\n", dev->arch);
        ms_close(g);
        return;
    }
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const int cases[][10] = {
        /* m, n, k, batch, ld padding of A, B, C (elements past the stored columns), product
         * padding of A, B, C (elements past rows x ld; 8 keeps 16-byte strides of 16-bit
         * rows of 8-element multiples) */
        {129, 65, 33, 3, 7, 7, 7, 8, 8, 8},         /* ragged, 8 elements between products */
        {96, 1000, 72, 5, 8, 8, 0, 64, 64, 64},     /* aligned in every op pair: 3-D maps, C's
                                                       3-D TMA store clipped at row 96 */
        {59, 496, 184, 7, 0, 0, 0, 1, 1, 1},        /* product strides 2 or 4 bytes off */
        {100, 1000, 72, 4, 0, 0, 0, 0, 0, 3},       /* only C's stride off */
        {300, 257, 190, 1, 4, 3, 3, 0, 0, 0},       /* one product */
        {22, 46, 102, 215, 2, 2, 2, 0, 0, 0},       /* many small products */
        {97, 131, 0, 2, 0, 1, 1, 0, 0, 8},          /* k = 0: C = beta C */
    };
    static const float ab[2][2] = {{1.25f, 0.0f}, {-0.5f, 1.5f}};
    int runs = 0;
    for (int t = 0; t < 3 && !th_failed(); t++) {
        int n_set = 0;
        th_compiled *set = tt_batch_set(dev, t, &n_set);
        CHECK_MSG(set && n_set >= 9, "%s: %d BATCH 1 kernels", tt_kinds[t].name, n_set);
        if (!set || !th_compile_all(set, n_set)) {
            th_free_compiled(set, n_set);
            break;
        }
        size_t es = tt_es(t);
        for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++)
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            int m = cases[d][0], n = cases[d][1], k = cases[d][2];
            long long batch = cases[d][3];
            int ta = ops & 1, tb = ops >> 1;
            long long rows_a = ta ? (k ? k : 1) : m, cols_a = ta ? m : k;
            long long rows_b = tb ? n : (k ? k : 1), cols_b = tb ? k : n;
            long long lda = cols_a + cases[d][4], ldb = cols_b + cases[d][5];
            long long ldc = n + cases[d][6];
            lda = lda < 1 ? 1 : lda;
            ldb = ldb < 1 ? 1 : ldb;
            long long sa = rows_a * lda + cases[d][7], sb = rows_b * ldb + cases[d][8];
            long long sc = (long long)m * ldc + cases[d][9];
            size_t na = (size_t)(sa * batch), nb = (size_t)(sb * batch), nc = (size_t)(sc * batch);
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A, B, C0, C, R;
            unsigned char *hc0 = malloc(nc * es), *hc = malloc(nc * es),
                          *hb = malloc((na > nb ? na : nb) * es);
            CHECK(hc0 && hc && hb);
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * es, &A));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * es, &B));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * es, &C0));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * es, &C));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)batch * m * n * 8 + 8, &R));
            tt_host_fill(hb, na, t, 41 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(A, hb, na * es) == CUDA_SUCCESS);
            tt_host_fill(hb, nb, t, 52 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(B, hb, nb * es) == CUDA_SUCCESS);
            tt_host_fill(hc0, nc, t, 63 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(C0, hc0, nc * es) == CUDA_SUCCESS);
            tpl_problem p = tt_problem(m, n, k, tt_kinds[t].t, tt_kinds[t].m);
            p.op_a = ta ? AT_OP_T : AT_OP_N;
            p.op_b = tb ? AT_OP_T : AT_OP_N;
            p.batch = batch;
            tpl_problem one = p;
            one.batch = 0;
            for (int v = 0; v < 2 && !th_failed(); v++) {
                float alpha = ab[v][0], beta = ab[v][1];
                /* the reference of each product alone (a single-product problem) */
                for (long long z = 0; z < batch; z++) {
                    tpl_args rargs = tpl_gemm_args(m, n, k, alpha, A + (CUdeviceptr)(z * sa) * es,
                                                   (int)lda, B + (CUdeviceptr)(z * sb) * es,
                                                   (int)ldb, beta, C0 + (CUdeviceptr)(z * sc) * es,
                                                   (int)ldc);
                    rargs.problem = one;
                    CHECK_OK(tpl_ref_gemm_args(ref, &rargs, C0 + (CUdeviceptr)(z * sc) * es,
                                               R + (CUdeviceptr)(z * m * n) * 8));
                }
                for (int i = 0; i < n_set && !th_failed(); i++) {
                    if (!tt_runs_on(set[i].cfg, ops))
                        continue;
                    /* C = C0, NaN in every product's m x n block when beta = 0 */
                    memcpy(hc, hc0, nc * es);
                    for (long long z = 0; beta == 0.0f && z < batch; z++)
                        for (int r = 0; r < m; r++)
                            memset(hc + (size_t)(z * sc + (long long)r * ldc) * es, 0xff,
                                   (size_t)n * es);
                    CHECK(cu->MemcpyHtoD(C, hc, nc * es) == CUDA_SUCCESS);
                    CUmodule mod;
                    CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                    at_exec ex;
                    ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
                    tpl_args args = tpl_gemm_args(m, n, k, alpha, A, (int)lda, B, (int)ldb, beta,
                                                  C, (int)ldc);
                    args.problem = p;
                    args.operand[TPL_GEMM_A].batch_stride = sa;
                    args.operand[TPL_GEMM_B].batch_stride = sb;
                    args.operand[TPL_GEMM_C].batch_stride = sc;
                    at_status s = f->run(&ex, set[i].cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    ex_release(&ex);
                    cu->ModuleUnload(mod);
                    CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                    for (long long z = 0; z < batch && !th_failed(); z++) {
                        double e = -1;
                        CHECK_OK(tpl_rel_error_typed(ref, tt_kinds[t].t,
                                                     C + (CUdeviceptr)(z * sc) * es, m, n, ldc,
                                                     R + (CUdeviceptr)(z * m * n) * 8, &e));
                        CHECK_MSG(e <= f->tolerance(&p), "%s %dx%dx%d x %lld ops %s%s ld "
                                  "%lld/%lld/%lld strides %lld/%lld/%lld alpha %g beta %g %s: "
                                  "product %lld error %g", tt_kinds[t].name, m, n, k, batch,
                                  tpl_op_name(p.op_a), tpl_op_name(p.op_b), lda, ldb, ldc, sa,
                                  sb, sc, alpha, beta, set[i].text, z, e);
                    }
                    CHECK(cu->MemcpyDtoH(hc, C, nc * es) == CUDA_SUCCESS);
                    long long first;
                    CHECK_MSG(tt_changed_outside_batch(hc, hc0, nc, es, 0, sc, batch, ldc, m, n,
                                                       &first) == 0,
                              "%s %dx%dx%d x %lld: element %lld outside the products changed",
                              set[i].text, m, n, k, batch, first);
                    runs++;
                }
            }
            tpl_workset_free(cu, &ws);
            free(hc0);
            free(hc);
            free(hb);
        }
        printf("    %s: %d BATCH 1 kernels x %zu batches x their op pairs x 2 alpha/beta\n",
               tt_kinds[t].name, n_set, sizeof cases / sizeof cases[0]);
        th_free_compiled(set, n_set);
    }
    CHECK(runs >= 3 * 9 * 7 * 2);
    ms_close(g);
}

/* A configuration that computes a wrong result (test_tcfault: the last K tile dropped) is
 * rejected by verification, directly and through the tuner, which stores every one of them
 * as wrong_result and no best; the same configuration without the fault passes. */
GPU_TEST(tcgemm_gpu_faulty_configuration_is_rejected)
{
    const tpl_family *fault = tpl_find("test_tcfault");
    th_check_fault_rejected(fault, &tpl_tcgemm, 10);
    if (th_failed())
        return;
    const tpl_problem *p = &fault->tuning_problems[0];
    char err[1024], dbpath[4300], cmd[16384], *out = NULL;
    snprintf(dbpath, sizeof dbpath, "%s/fault.db", th_tmpdir());
    snprintf(cmd, sizeof cmd,
             "env -u AUTOTUNE_WORKER %s/autotune-test --device %d --kernel test_tcfault --db %s "
             "--seed 1 --quiet", th_build_dir(), th_device(), dbpath);
    int rc = th_run(cmd, &out);
    printf("    %s", out ? out : "");
    CHECK_MSG(rc == 0 || rc == 1, "exit %d: %s", rc, out ? out : "");
    free(out);
    db *d = NULL;
    CHECK_OK(db_open(&d, dbpath, 0, err, sizeof err));
    db_result *r = NULL;
    int nr = 0;
    CHECK_OK(db_results(d, NULL, "test_tcfault", &r, &nr));
    CHECK_MSG(nr >= 8, "%d results stored", nr);
    for (int i = 0; i < nr; i++)
        CHECK_MSG(strcmp(r[i].status, DB_WRONG_RESULT) == 0 && r[i].rel_error > 1e-2,
                  "%s: %s (error %g)", r[i].config, r[i].status, r[i].rel_error);
    db_result best;
    CHECK_EQ(db_best(d, r[0].device_uuid, "test_tcfault", r[0].source_hash, p, 0, &best),
             AT_ERR_NOT_FOUND);
    free(r);
    db_close(d);
}
