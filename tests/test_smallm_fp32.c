/* test_smallm_fp32.c: smallm's exact FP32 path (TYPE 2, FFMA; a narrow n through the mirrored
 * problem C^T = op(B)^T op(A)^T): the mirror's rule and ops, the kinds' limits, the built-in rows
 * per narrow side, the claims (CPU); padded, offset, unaligned operands with alpha, beta, batches
 * and the mirror through run(), and at_gemm's route and results (GPU). The odd problems against
 * the float64 reference are smt_cases' FP32 lines in tests/test_smallm.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "autotune.h"
#include "harness.h"
#include "lookup.h"
#include "measure.h"
#include "th_compile.h"
#include "th_family.h"
#include "th_smallm.h"
#include "tpl.h"

extern const tpl_family tpl_smallm, tpl_skinny;

/* ---------------- CPU tier ---------------- */

/* FP32 (TYPE 2): a narrow n runs as the mirror C^T = op(B)^T op(A)^T, so exactly when n is below
 * m. The kernel's A is op(B)^T: B of op N (stored k x n) is read as a transposed operand (OPA
 * 1), B of op T (stored n x k) as stored (OPA 0); its B is op(A)^T alike. Of the 4 op pairs x 4
 * MT of TYPE 2 exactly one configuration takes each problem: those ops and the MT that holds the
 * narrow side. The 16-bit types never mirror. */
TEST(smallm_fp32_mirror_takes_narrow_n_with_swapped_ops)
{
    const tpl_family *f = &tpl_smallm;
    int c[TPL_MAX_PARAMS];
    char err[256];
    CHECK_OK(tpl_config_parse(f, "TYPE=2,OPA=0,OPB=0,MT=8,BN=128,BK=32,STAGES=3,WARPS=4,KW=4,"
                              "VEC=4,WAVES=1", c, err, sizeof err));
    CHECK(f->valid(c, NULL, err, sizeof err));
    static const int mts[] = {8, 16, 32, 64};
    static const long long sizes[][2] = {{5, 3000}, {3000, 5}, {64, 64}, {64, 63}, {17, 16},
                                         {1, 1}, {4097, 40}, {33, 100000}};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int ops = 0; ops < 4; ops++) {
            long long m = sizes[z][0], n = sizes[z][1];
            int oa = ops >> 1, ob = ops & 1;
            tpl_problem p = smt_problem(m, n, 777, AT_R_32F, oa, ob, z % 2 ? 3 : 1);
            int mirrored = n < m;
            long long narrow = mirrored ? n : m;
            int want_mt = narrow <= 8 ? 8 : narrow <= 16 ? 16 : narrow <= 32 ? 32 : 64;
            /* op N of the transposed operand is read transposed, op T as stored */
            int want_a = mirrored ? (ob == 0) : oa, want_b = mirrored ? (oa == 0) : ob;
            CHECK_EQ(tpl_smallm_mirrored(&p), mirrored);
            int takers = 0;
            for (int i = 0; i < 16; i++) {
                c[smt_param("OPA")] = i & 1;
                c[smt_param("OPB")] = (i >> 1) & 1;
                c[smt_param("MT")] = mts[i >> 2];
                if (!f->applicable(c, &p))
                    continue;
                takers++;
                CHECK_EQ(c[smt_param("OPA")], want_a);
                CHECK_EQ(c[smt_param("OPB")], want_b);
                CHECK_EQ(c[smt_param("MT")], want_mt);
            }
            CHECK_MSG(takers == 1, "%lldx%lld ops %d: %d configurations", m, n, ops, takers);
        }
    /* the 16-bit types keep m as the narrow side; TYPE 2 takes FP32 alone */
    tpl_problem bf = smt_problem(64, 63, 777, AT_R_16BF, 0, 0, 1);
    CHECK(!tpl_smallm_mirrored(&bf));
    tpl_problem fp32 = smt_problem(8, 999, 777, AT_R_32F, 0, 0, 1);
    c[smt_param("OPA")] = c[smt_param("OPB")] = 0;
    c[smt_param("MT")] = 8;
    CHECK(f->applicable(c, &fp32));
    c[smt_param("TYPE")] = 1;
    CHECK(!f->applicable(c, &fp32));
    c[smt_param("TYPE")] = 2;
    fp32.dtype = AT_R_16BF;
    CHECK(!f->applicable(c, &fp32));
    /* the kinds' limits: BN 512 is FP32's, VEC 8 the 16-bit types' */
    CHECK_OK(tpl_config_parse(f, "TYPE=1,OPA=0,OPB=0,MT=8,BN=512,BK=32,STAGES=3,WARPS=8,KW=1,"
                              "VEC=8,WAVES=1", c, err, sizeof err));
    CHECK(!f->valid(c, NULL, err, sizeof err));
    CHECK_STR(err, tpl_smallm_reasons[4]);
    c[smt_param("TYPE")] = 2;
    CHECK(!f->valid(c, NULL, err, sizeof err));
    CHECK_STR(err, tpl_smallm_reasons[4]);
    c[smt_param("VEC")] = 4;
    CHECK(f->valid(c, NULL, err, sizeof err));     /* 512 / 256 threads: 2 columns each */
}

/* Each narrow side (m, or n through the mirror), op pair and batch of FP32 has a built-in
 * configuration of its own rows (TYPE 2), fitted to the kernel's ops and the MT that holds the
 * narrow side, with 16-byte chunks (VEC 4). */
TEST(smallm_fp32_defaults_serve_every_op_and_narrow_side)
{
    at_device_info dev = smt_h100();
    static const long long narrows[] = {1, 3, 8, 9, 16, 17, 32, 33, 64};
    for (size_t i = 0; i < sizeof narrows / sizeof narrows[0]; i++)
        for (int side = 0; side < 2; side++)
            for (int ops = 0; ops < 4; ops++)
                for (long long batch = 1; batch <= 3; batch += 2) {
                    long long nw = narrows[i];
                    tpl_problem p = smt_problem(side ? 5000 : nw, side ? nw : 5000, 3000,
                                                AT_R_32F, ops >> 1, ops & 1, batch);
                    int cfg[TPL_MAX_PARAMS];
                    char text[TPL_CONFIG_LEN];
                    const char *origin = NULL;
                    CHECK_MSG(tpl_builtin_config(&tpl_smallm, &dev, &p, 1, cfg, text, &origin),
                              "narrow %lld side %d ops %d: no default", nw, side, ops);
                    CHECK_EQ(cfg[smt_param("TYPE")], 2);
                    CHECK_EQ(cfg[smt_param("VEC")], 4);
                    CHECK_EQ(cfg[smt_param("OPA")], side ? (ops & 1) == 0 : ops >> 1);
                    CHECK_EQ(cfg[smt_param("OPB")], side ? (ops >> 1) == 0 : ops & 1);
                    CHECK(cfg[smt_param("MT")] >= nw && cfg[smt_param("MT")] < 2 * nw + 8);
                    CHECK_MSG(origin && strncmp(origin, "FP32", 4) == 0, "narrow %lld: %s", nw,
                              origin ? origin : "none");
                }
}

/* With nothing measured, smallm claims FP32 calls with a narrow side (m, or n: the mirror) of
 * at most 16 over a wide operand of 2^24 elements or more whose rows are a multiple of 4
 * floats (issue 33's m x 8192 x 8192 rows, every op pair); the rest stays with skinny (a
 * narrow side up to 48) or matmul, and reaches smallm through the runtime's trials. */
TEST(smallm_fp32_claims_and_family_choice)
{
    at_device_info dev = smt_h100();
    int measured = -1;
    for (int ops = 0; ops < 4; ops++) {
        static const long long ms[] = {1, 8, 16};
        for (int i = 0; i < 3; i++)
            for (int side = 0; side < 2; side++) {
                tpl_problem p = smt_problem(side ? 8192 : ms[i], side ? ms[i] : 8192, 8192,
                                            AT_R_32F, ops >> 1, ops & 1, 1);
                const tpl_family *fams[16];
                int n = lk_gemm_families(&p, NULL, fams, 16);
                CHECK_MSG(lk_choose_family(NULL, &dev, &p, 0, fams, n, &measured) ==
                              &tpl_smallm, "m %lld side %d ops %d", ms[i], side, ops);
                CHECK_EQ(measured, 0);
            }
    }
    tpl_problem tf32 = smt_problem(8, 8192, 8192, AT_R_32F, 0, 0, 1);
    tf32.math = AT_MATH_TF32;
    struct { tpl_problem p; const tpl_family *want; } others[] = {
        {smt_problem(17, 8192, 8192, AT_R_32F, 0, 0, 1), &tpl_skinny},    /* narrow above 16 */
        {smt_problem(8192, 17, 8192, AT_R_32F, 0, 0, 1), &tpl_skinny},
        {smt_problem(16, 2048, 4096, AT_R_32F, 0, 0, 1), &tpl_skinny},    /* wide of 2^23 */
        {smt_problem(16, 2048, 4096, AT_R_32F, 0, 0, 2), &tpl_smallm},    /* 2 products */
        {smt_problem(8, 8190, 8192, AT_R_32F, 0, 0, 1), &tpl_skinny},     /* rows of 8190 */
        {smt_problem(8, 8190, 8192, AT_R_32F, 0, 1, 1), &tpl_smallm},     /* op T: rows of k */
        {smt_problem(8190, 8, 8192, AT_R_32F, 1, 0, 1), &tpl_skinny},     /* A^T rows of m */
        {smt_problem(8190, 8, 8192, AT_R_32F, 0, 0, 1), &tpl_smallm},     /* A rows of k */
        {smt_problem(8, 100000, 200, AT_R_32F, 0, 0, 1), &tpl_skinny},    /* k below 256 */
        {tf32, &tpl_skinny},                                             /* TF32: not ours */
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        const tpl_family *fams[16];
        int n = lk_gemm_families(&others[i].p, NULL, fams, 16);
        const tpl_family *got = lk_choose_family(NULL, &dev, &others[i].p, 0, fams, n, &measured);
        CHECK_MSG(got == others[i].want, "case %zu: %s, wanted %s", i, got ? got->name : "none",
                  others[i].want->name);
    }
}

/* ---------------- GPU tier ---------------- */

/* ---- FP32 (TYPE 2) on the GPU: host values are multiples of 1/8 in [-1, 1], so every partial
 * sum of k products is a multiple of 1/64 below 2^18 and exact in FP32: the kernel's result
 * differs from the host's double only by alpha's and beta's roundings (none for 1.25, -0.75,
 * 0.5), whatever its blocking or K slices. */

static void smt_fill_f32(unsigned long long seed, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (float)((int)((seed >> 33) % 17) - 8) / 8.0f;
    }
}

/* Padded and offset operands (unaligned leading dimensions: element loads; aligned: cp.async),
 * alpha and beta, batches with padded strides, K slices, every op pair, a narrow m and a narrow
 * n (the mirror: C stored transposed), run through the family's run() with each FP32
 * configuration that applies, against the host's double product; C outside its m x n blocks
 * comes back untouched. */
GPU_TEST(smallm_fp32_gpu_padded_offset_alpha_beta_batches_mirrored)
{
    const tpl_family *f = &tpl_smallm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    const at_device_info *dev = ms_device(g);
    /* one per MT class (MT and ops set per problem below) */
    static const char *const texts[] = {
        "TYPE=2,OPA=0,OPB=0,MT=8,BN=128,BK=32,STAGES=3,WARPS=4,KW=4,VEC=4,WAVES=1",
        "TYPE=2,OPA=0,OPB=0,MT=16,BN=512,BK=32,STAGES=2,WARPS=8,KW=2,VEC=4,WAVES=2",
        "TYPE=2,OPA=0,OPB=0,MT=32,BN=256,BK=32,STAGES=3,WARPS=4,KW=1,VEC=2,WAVES=1",
        "TYPE=2,OPA=0,OPB=0,MT=64,BN=128,BK=32,STAGES=3,WARPS=4,KW=2,VEC=4,WAVES=1",
    };
    enum { NT = sizeof texts / sizeof texts[0] };
    th_compiled set[NT * 4];
    int n = 0;
    memset(set, 0, sizeof set);
    for (int t = 0; t < NT; t++)
        for (int ops = 0; ops < 4; ops++) {
            th_compiled *s = &set[n];
            CHECK(th_parse_config(f, texts[t], s->cfg, __FILE__, __LINE__));
            s->cfg[smt_param("OPA")] = ops >> 1;
            s->cfg[smt_param("OPB")] = ops & 1;
            CHECK(f->valid(s->cfg, dev, NULL, 0));
            tpl_config_format(f, s->cfg, s->text, sizeof s->text);
            s->fam = f;
            s->arch = dev->arch;
            n++;
        }
    CHECK(th_compile_all(set, n));
    static const int cases[][10] = {
        /* m, n, k, batch, pad of lda, ldb, ldc (elements past the minimum), offset A, B, C */
        {1, 300, 517, 1, 0, 0, 0, 0, 0, 0},
        {13, 1032, 2000, 3, 4, 4, 5, 4, 4, 1},
        {17, 513, 999, 1, 1, 3, 2, 1, 3, 1},
        {29, 640, 1536, 3, 0, 0, 0, 0, 0, 0},
        {64, 264, 777, 2, 3, 5, 7, 2, 1, 3},
        {300, 1, 517, 1, 0, 0, 0, 0, 0, 0},         /* narrow n: the mirror */
        {1032, 13, 2000, 3, 4, 4, 5, 4, 4, 1},
        {513, 17, 999, 1, 1, 3, 2, 1, 3, 1},
        {2051, 51, 1475, 2, 0, 0, 3, 0, 0, 0},
        {64, 60, 3001, 2, 3, 5, 7, 2, 1, 3},
    };
    static const double ab[2][2] = {{1.25, 0.0}, {-0.75, 0.5}};
    int runs = 0;
    double worst = 0;
    for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++) {
        int m = cases[d][0], nn = cases[d][1], k = cases[d][2], batch = cases[d][3];
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            int opa = ops >> 1, opb = ops & 1;
            long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? nn : k, bc = opb ? k : nn;
            long long lda = ac + cases[d][4], ldb = bc + cases[d][5], ldc = nn + cases[d][6];
            /* batch strides keep the operands' alignment: a multiple of 4 past the rows */
            long long sa = ar * lda + 4, sb = br * ldb + 4, sc = (long long)m * ldc + 5;
            size_t na = cases[d][7] + (size_t)(sa * batch), nb = cases[d][8] + (size_t)(sb * batch);
            size_t nc = cases[d][9] + (size_t)(sc * batch);
            float *hA = malloc(na * 4), *hB = malloc(nb * 4), *hC0 = malloc(nc * 4),
                  *hC = malloc(nc * 4);
            double *dot = calloc((size_t)batch * m * nn, sizeof *dot);
            CHECK(hA && hB && hC0 && hC && dot);
            if (!(hA && hB && hC0 && hC && dot))
                break;
            smt_fill_f32(7654321 + d * 17 + (unsigned long long)ops, hA, na);
            smt_fill_f32(1234567 + d * 17 + (unsigned long long)ops, hB, nb);
            smt_fill_f32(555 + d * 17 + (unsigned long long)ops, hC0, nc);
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A, B, C;
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * 4, &A));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * 4, &B));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 4, &C));
            CHECK(cu->MemcpyHtoD(A, hA, na * 4) == CUDA_SUCCESS);
            CHECK(cu->MemcpyHtoD(B, hB, nb * 4) == CUDA_SUCCESS);
            const float *a0 = hA + cases[d][7], *b0 = hB + cases[d][8];
            tpl_problem p = smt_problem(m, nn, k, AT_R_32F, opa, opb, batch);
            for (int b = 0; b < batch; b++)
                for (int r = 0; r < m; r++)
                    for (int c = 0; c < nn; c++) {
                        const float *pa = a0 + b * sa, *pb = b0 + b * sb;
                        double sum = 0;
                        for (int q = 0; q < k; q++)
                            sum += (double)(opa ? pa[(long long)q * lda + r] : pa[r * lda + q]) *
                                   (double)(opb ? pb[c * ldb + q] : pb[(long long)q * ldb + c]);
                        dot[((size_t)b * m + r) * nn + c] = sum;
                    }
            int found = 0;
            for (int v = 0; v < 2 && !th_failed(); v++) {
                double alpha = ab[v][0], beta = ab[v][1];
                for (int i = 0; i < n && !th_failed(); i++) {
                    if (!f->applicable(set[i].cfg, &p))
                        continue;
                    found++;
                    /* C = C0, with NaN in the products' blocks when beta = 0 (never read) */
                    memcpy(hC, hC0, nc * 4);
                    for (int b = 0; beta == 0.0 && b < batch; b++)
                        for (int r = 0; r < m; r++)
                            for (int c = 0; c < nn; c++)
                                hC[cases[d][9] + b * sc + (long long)r * ldc + c] = NAN;
                    CHECK(cu->MemcpyHtoD(C, hC, nc * 4) == CUDA_SUCCESS);
                    CUmodule mod;
                    CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                    at_exec ex;
                    ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
                    tpl_args args;
                    memset(&args, 0, sizeof args);
                    args.problem = p;
                    args.operand[TPL_GEMM_A] = (tpl_operand){A + 4 * cases[d][7], lda, sa};
                    args.operand[TPL_GEMM_B] = (tpl_operand){B + 4 * cases[d][8], ldb, sb};
                    args.operand[TPL_GEMM_C] = (tpl_operand){C + 4 * cases[d][9], ldc, sc};
                    args.scalar[TPL_GEMM_ALPHA] = alpha;
                    args.scalar[TPL_GEMM_BETA] = beta;
                    /* twice: the second call reuses the slice counters the first left */
                    at_status s = f->run(&ex, set[i].cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    if (s == AT_OK && cu->MemcpyHtoD(C, hC, nc * 4) != CUDA_SUCCESS)
                        s = AT_ERR_CUDA;
                    if (s == AT_OK)
                        s = f->run(&ex, set[i].cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    ex_release(&ex);
                    cu->ModuleUnload(mod);
                    CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                    CHECK(cu->MemcpyDtoH(hC, C, nc * 4) == CUDA_SUCCESS);
                    double num = 0, den = 0;
                    for (size_t x = 0; x < nc; x++) {
                        long long off = (long long)x - cases[d][9];
                        long long b = off >= 0 ? off / sc : -1, e = off - b * sc;
                        long long r = e / ldc, c = e % ldc;
                        if (!(off >= 0 && b < batch && r < m && c < nn)) {
                            CHECK_MSG(memcmp(&hC[x], &hC0[x], 4) == 0,
                                      "%s: element %zu outside C changed", set[i].text, x);
                            continue;
                        }
                        double want = alpha * dot[((size_t)b * m + r) * nn + c];
                        if (beta != 0.0)
                            want += beta * hC0[x];
                        num += (hC[x] - want) * (hC[x] - want);
                        den += want * want;
                    }
                    double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                    CHECK_MSG(e <= f->tolerance(&p), "%s %dx%dx%d b%d ops %d%d alpha %g beta %g: "
                              "error %g", set[i].text, m, nn, k, batch, opa, opb, alpha, beta, e);
                    worst = e / f->tolerance(&p) > worst ? e / f->tolerance(&p) : worst;
                    runs++;
                }
            }
            CHECK_MSG(found == 2, "%dx%dx%d ops %d%d: %d runs, wanted 2 (one configuration)", m,
                      nn, k, opa, opb, found);
            tpl_workset_free(cu, &ws);
            free(dot);
            free(hA);
            free(hB);
            free(hC0);
            free(hC);
        }
    }
    CHECK_EQ(runs, 10 * 4 * 2);
    printf("    %d runs against the host, worst %.3f of the tolerance\n", runs, worst);
    th_release_compiled(set, n);
    ms_close(g);
}

/* at_gemm serves FP32 calls with a narrow side through smallm: the claimed ones with nothing
 * stored and trials off (m x 4096 x 4096 class, a narrow m or n, row- and column-major: the
 * canonical narrow side is a column-major call's other one), and smaller ones with the family
 * forced ($AUTOTUNE_GEMM_FAMILY); every op pair, alpha and beta, twice per call (the slice
 * counters reused), against the host's double product of exactly representable inputs. */
GPU_TEST(smallm_fp32_api_serves_narrow_calls)
{
    at_status s;
    const cudrv *cu = cudrv_get(&s, NULL, 0);
    CUdevice cdev;
    CUcontext ctx;
    CHECK(cu && cu->Init(0) == CUDA_SUCCESS && cu->DeviceGet(&cdev, th_device()) == CUDA_SUCCESS &&
          cu->DevicePrimaryCtxRetain(&ctx, cdev) == CUDA_SUCCESS &&
          cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    char path[4300];
    snprintf(path, sizeof path, "%s/smallm_fp32_api.db", th_tmpdir());
    remove(path);
    at_handle *h = NULL;
    CHECK_OK(at_create(&h, th_device(), path));
    CHECK_OK(at_set_trials(h, 0));
    CHECK_OK(at_set_vendor(h, AT_VENDOR_OFF));
    /* user's m, n, k and order; forced: served by $AUTOTUNE_GEMM_FAMILY=smallm */
    static const struct { int m, n, k; at_order order; int forced; } calls[] = {
        {8, 4096, 4096, AT_ROW_MAJOR, 0}, {4096, 16, 4096, AT_ROW_MAJOR, 0},
        {4096, 8, 4096, AT_COL_MAJOR, 0}, {1, 4096, 4096, AT_COL_MAJOR, 0},
        {24, 1000, 1500, AT_ROW_MAJOR, 1}, {1500, 40, 777, AT_ROW_MAJOR, 1},
        {33, 999, 2000, AT_COL_MAJOR, 1},
    };
    for (size_t c = 0; c < sizeof calls / sizeof calls[0] && !th_failed(); c++)
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            at_op opa = ops >> 1 ? AT_OP_T : AT_OP_N, opb = ops & 1 ? AT_OP_T : AT_OP_N;
            int m = calls[c].m, n = calls[c].n, k = calls[c].k;
            int col = calls[c].order == AT_COL_MAJOR;
            int a_rows_contig = !col == (opa == AT_OP_N), b_rows_contig = !col == (opb == AT_OP_N);
            int lda = a_rows_contig ? k : m, ldb = b_rows_contig ? n : k, ldc = col ? m : n;
            size_t na = (size_t)m * k, nb = (size_t)k * n, nc = (size_t)m * n;
            float *hA = malloc(na * 4), *hB = malloc(nb * 4), *hC0 = malloc(nc * 4),
                  *hC = malloc(nc * 4);
            double *prod = malloc(nc * sizeof *prod);
            CHECK(hA && hB && hC0 && hC && prod);
            if (!(hA && hB && hC0 && hC && prod))
                break;
            smt_fill_f32(99 + c * 8 + (unsigned long long)ops, hA, na);
            smt_fill_f32(199 + c * 8 + (unsigned long long)ops, hB, nb);
            smt_fill_f32(299 + c * 8 + (unsigned long long)ops, hC0, nc);
            CUdeviceptr dA = 0, dB = 0, dC = 0;
            CHECK(cu->MemAlloc(&dA, na * 4) == CUDA_SUCCESS &&
                  cu->MemAlloc(&dB, nb * 4) == CUDA_SUCCESS &&
                  cu->MemAlloc(&dC, nc * 4) == CUDA_SUCCESS &&
                  cu->MemcpyHtoD(dA, hA, na * 4) == CUDA_SUCCESS &&
                  cu->MemcpyHtoD(dB, hB, nb * 4) == CUDA_SUCCESS);
            double alpha = 0.75, beta = ops % 2 ? -0.5 : 0.0;
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double sum = 0;
                    for (int q = 0; q < k; q++)
                        sum += (double)hA[a_rows_contig ? (size_t)i * lda + q
                                                        : (size_t)q * lda + i] *
                               (double)hB[b_rows_contig ? (size_t)q * ldb + j
                                                        : (size_t)j * ldb + q];
                    prod[(size_t)i * n + j] = sum;
                }
            if (calls[c].forced)
                setenv("AUTOTUNE_GEMM_FAMILY", "smallm", 1);
            for (int rep = 0; rep < 2 && !th_failed(); rep++) {
                CHECK(cu->MemcpyHtoD(dC, hC0, nc * 4) == CUDA_SUCCESS);
                s = at_gemm(h, calls[c].order, opa, opb, m, n, k, AT_R_32F, alpha,
                            (const void *)(uintptr_t)dA, lda, (const void *)(uintptr_t)dB, ldb,
                            beta, (void *)(uintptr_t)dC, ldc);
                CHECK_MSG(s == AT_OK, "%s", at_errmsg(h));
                CHECK(cu->CtxSynchronize() == CUDA_SUCCESS &&
                      cu->MemcpyDtoH(hC, dC, nc * 4) == CUDA_SUCCESS);
                at_stats st;
                CHECK_OK(at_get_stats(h, &st));
                CHECK_MSG(strcmp(st.last_kernel, "smallm") == 0, "%dx%dx%d %s ops %d: %s", m, n,
                          k, col ? "col" : "row", ops, st.last_kernel);
                double num = 0, den = 0;
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        size_t ic = col ? (size_t)j * ldc + i : (size_t)i * ldc + j;
                        double want = alpha * prod[(size_t)i * n + j] +
                                      (beta != 0 ? beta * hC0[ic] : 0);
                        num += (hC[ic] - want) * (hC[ic] - want);
                        den += want * want;
                    }
                tpl_problem p = smt_problem(m, n, k, AT_R_32F, 0, 0, 1);
                double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                CHECK_MSG(e <= tpl_smallm.tolerance(&p), "%dx%dx%d %s ops %d call %d: error %g "
                          "(%s)", m, n, k, col ? "col" : "row", ops, rep + 1, e, st.last_config);
            }
            unsetenv("AUTOTUNE_GEMM_FAMILY");
            cu->MemFree(dA);
            cu->MemFree(dB);
            cu->MemFree(dC);
            free(prod);
            free(hA);
            free(hB);
            free(hC0);
            free(hC);
        }
    CHECK_OK(at_destroy(h));
    CUcontext popped;
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(cdev);
}
