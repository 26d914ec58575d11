/* test_tcgemm_oddld.c: PATH 80 BF16/FP16 operands with 2-byte rows (an odd leading dimension or
 * product stride) read in place by tcgemm.cu's t8_prefill instead of packed: the launches the
 * host issues (CPU, through the fake driver) and the kernels against float64 references (GPU). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "exec.h"
#include "harness.h"
#include "measure.h"
#include "tcgemm.h"
#include "th_compile.h"
#include "th_fakegpu.h"
#include "th_family.h"
#include "th_tcgemm.h"
#include "tpl.h"

/* The PATH 80 tiles both tiers run (TYPE prepended; rows of the family's lattice): 64 x 64
 * (t8_gemm_short for a short K) on every op pair as stored, 128 x 128 and 128 x 256 x 64 (3
 * stages) for t8_gemm, and split-K 4 (each slice a short ring). */
#define TO_TAIL ",WG=2,CM=1,CN=1,RASTER=0,GROUP=8"
static const char *const to_tiles[] = {
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,SPLITK=1,VEC=8,LOADW=16" TO_TAIL,
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,SPLITK=1,VEC=8,LOADW=16" TO_TAIL ",OPA=1",
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,SPLITK=1,VEC=8,LOADW=16" TO_TAIL ",OPB=1",
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,SPLITK=1,VEC=8,LOADW=16" TO_TAIL
    ",OPA=1,OPB=1",
    "BM=128,BN=128,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,SPLITK=1,VEC=8,LOADW=16" TO_TAIL,
    "BM=128,BN=256,BK=64,STAGES=3,WARPS_M=2,WARPS_N=4,SPLITK=1,VEC=8,LOADW=16" TO_TAIL,
    "BM=128,BN=128,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,SPLITK=4,VEC=2,LOADW=16" TO_TAIL ",OPB=1",
};
#define TO_N_TILES (int)(sizeof to_tiles / sizeof to_tiles[0])

/* Tile i of type t (0 BF16, 1 FP16) as a configuration text. */
static void to_text(char *buf, size_t len, int t, int i)
{
    snprintf(buf, len, "TYPE=%d,PATH=80,%s", t, to_tiles[i]);
}

/* ---------------- CPU tier ---------------- */

/* The tiles are valid on an sm_90 device (a rule change that drops one fails here). */
TEST(tcgemm_oddld_configurations_valid)
{
    at_device_info dev = tt_device(9, 0, 232448, 1024, 65536);
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < TO_N_TILES; i++) {
            char text[512], why[256] = "";
            int cfg[TPL_MAX_PARAMS];
            to_text(text, sizeof text, t, i);
            CHECK(tt_parse(text, cfg));
            CHECK_MSG(tpl_tcgemm.valid(cfg, &dev, why, sizeof why), "%s: %s", text, why);
        }
}

/* 1 if the exec looked up (and so could launch) kernel `name`. */
static int to_looked_up(const at_exec *ex, const char *name)
{
    for (int i = 0; i < ex->n_funcs; i++)
        if (strcmp(ex->funcs[i].name, name) == 0)
            return 1;
    return 0;
}

/* The host's launches for odd-ld 16-bit operands (fake driver, nothing runs): where every block's
 * K tiles fit in the ring (short K, a split-K slice) the GEMM kernel is the only launch (plus
 * split-K's reduce), no tc_pack is looked up and no pack scratch is allocated; a deep K still
 * packs exactly the operand with 2-byte rows. The earlier host (before t8_prefill) packed every
 * one of these operands. */
TEST(tcgemm_oddld_path80_issues_no_pack)
{
    if (!th_fake_child("tcgemm_oddld_path80_issues_no_pack"))
        return;
    at_status st;
    char err[512] = "";
    const cudrv *cu = cudrv_get(&st, err, sizeof err);
    CHECK_MSG(cu != NULL, "fake driver: %s", err);
    if (!cu)
        return;
    at_device_info dev = tt_device(9, 0, 232448, 1024, 65536);
    CUmodule mod;
    CHECK(cu->ModuleLoadData(&mod, "stand-in") == CUDA_SUCCESS);
    const CUdeviceptr A = 0x10000000, B = 0x20000000, C = 0x30000000;
    static const struct {
        int tile, t, ops, m, n, k, batch, lda_pad, ldb_pad;
        int pack_a, pack_b;         /* the operands still packed */
        const char *kernel;
    } cases[] = {
        /* the measured cliff's class: strided batch, k 25, n and ldb odd (B 2-byte rows) */
        {0, 1, 0, 1004, 3911, 25, 30, 0, 0, 0, 0, "t8_gemm_short"},
        {0, 0, 0, 100, 391, 25, 3, 0, 0, 0, 0, "t8_gemm_short"},        /* lda 25, ldb 391 */
        {1, 1, 1, 77, 64, 96, 5, 0, 0, 0, 0, "t8_gemm_short"},          /* TN, lda 77 */
        {2, 0, 2, 64, 70, 33, 1, 0, 0, 0, 0, "t8_gemm_short"},          /* NT, ldb 33 */
        {3, 1, 3, 65, 31, 128, 2, 0, 0, 0, 0, "t8_gemm_short"},         /* TT, k at the limit */
        {4, 0, 0, 300, 301, 127, 1, 0, 0, 0, 0, "t8_gemm"},             /* 4 K tiles, 4 stages */
        {5, 1, 0, 129, 513, 191, 1, 0, 0, 0, 0, "t8_gemm"},             /* 3 K tiles of 64 */
        {6, 0, 2, 200, 100, 499, 1, 0, 0, 0, 0, "t8_gemm"},             /* split-K: slices of 4 */
        /* deep K: a block walks more K tiles than the ring holds; the 2-byte operand is packed */
        {0, 1, 0, 100, 64, 129, 3, 0, 0, 1, 0, "t8_gemm"},              /* lda 129 odd, ldb 64 */
        {4, 0, 0, 256, 255, 4096, 1, 0, 1, 0, 0, "t8_gemm"},            /* aligned: no pack */
        {4, 0, 0, 256, 255, 4096, 1, 1, 0, 1, 1, "t8_gemm"},            /* both odd */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        int cfg[TPL_MAX_PARAMS];
        to_text(text, sizeof text, cases[i].t, cases[i].tile);
        CHECK(tt_parse(text, cfg));
        int ta = cases[i].ops & 1, tb = cases[i].ops >> 1, m = cases[i].m, n = cases[i].n,
            k = cases[i].k;
        int lda = (ta ? m : k) + cases[i].lda_pad, ldb = (tb ? k : n) + cases[i].ldb_pad;
        tpl_args args = tpl_gemm_args(m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, n);
        args.problem = tt_problem(m, n, k, cases[i].t ? AT_R_16F : AT_R_16BF, AT_MATH_DEFAULT);
        args.problem.op_a = ta ? AT_OP_T : AT_OP_N;
        args.problem.op_b = tb ? AT_OP_T : AT_OP_N;
        if (cases[i].batch > 1) {
            args.problem.batch = cases[i].batch;
            args.operand[TPL_GEMM_A].batch_stride = (long long)(ta ? k : m) * lda;
            args.operand[TPL_GEMM_B].batch_stride = (long long)(tb ? n : k) * ldb;
            args.operand[TPL_GEMM_C].batch_stride = (long long)m * n;
        }
        at_exec ex;
        ex_init(&ex, cu, &dev, mod, NULL, err, sizeof err);
        th_fake_reset();
        at_status s = tpl_tcgemm.run(&ex, cfg, &args);
        CHECK_MSG(s == AT_OK, "case %zu (%s): %s", i, text, err);
        int packs = cases[i].pack_a + cases[i].pack_b, split = cfg[P_SPLITK] > 1;
        long long launches = th_fake_count("cuLaunchKernel") + th_fake_count("cuLaunchKernelEx");
        CHECK_MSG(launches == 1 + packs + split, "case %zu (%s, %dx%dx%d, lda %d, ldb %d): %lld "
                  "launches, want %d", i, text, m, n, k, lda, ldb, launches, 1 + packs + split);
        CHECK_MSG(to_looked_up(&ex, "tc_pack") == (packs > 0), "case %zu (%s): tc_pack %s", i,
                  text, packs ? "not launched" : "launched");
        CHECK_MSG(to_looked_up(&ex, cases[i].kernel), "case %zu (%s): no %s", i, text,
                  cases[i].kernel);
        CHECK_MSG((ex.scratch_bytes[TC_SLOT_PACKED_A] > 0) == cases[i].pack_a &&
                  (ex.scratch_bytes[TC_SLOT_PACKED_B] > 0) == cases[i].pack_b,
                  "case %zu (%s): pack scratch A %zu, B %zu bytes", i, text,
                  ex.scratch_bytes[TC_SLOT_PACKED_A], ex.scratch_bytes[TC_SLOT_PACKED_B]);
        ex_release(&ex);
    }
    cu->ModuleUnload(mod);
}

/* ---------------- GPU tier ---------------- */

/* The leading dimension of a stored operand of `cols` columns: the smallest odd one >= cols
 * (want < 0: 2-byte rows), else the smallest with ld % 8 == want (0: 16-byte rows, 2: 4-byte). */
static long long to_ld(long long cols, int want)
{
    long long ld = cols < 1 ? 1 : cols;
    while (want < 0 ? ld % 2 == 0 : ld % 8 != want)
        ld++;
    return ld;
}

/* Odd leading dimensions (A, B or both; beside 16- and 4-byte aligned ones), bases 2 bytes off,
 * odd product strides, batched and single products, short K (t8_gemm_short: k 16..128) and
 * t8_gemm whose blocks walk at most STAGES K tiles (128 x 128 k 127, 128 x 256 x 64 k 191, a
 * split-K 4 of 16 tiles), ragged m, n, k, every op pair, BF16 and FP16, alpha with beta 0 over
 * NaN and beta != 0: each product against its float64 reference, C outside the products
 * unchanged, and the pack scratch allocated exactly where the host's rule (t8_load_width,
 * t8_prefill_fits; op-T operands of an OPA / OPB 0 tile: the transposing pack) packs. Controls: a
 * deep K (more K tiles than the ring) packs the odd operand and stays right. */
GPU_TEST(tcgemm_gpu_odd_ld_read_in_place)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const int cases[][10] = {
        /* m, n, k, batch, A's and B's ld rule (to_ld), A's and B's base offset (elements),
         * product stride padding (elements, A and B), C's base offset */
        {1004, 391, 25, 6, -1, -1, 1, 0, 1, 1},     /* the cliff's class (scaled): odd lds */
        {129, 263, 20, 5, -1, 0, 0, 0, 0, 0},       /* A odd, B 16-byte rows */
        {70, 201, 35, 4, 0, -1, 0, 1, 3, 1},        /* B odd and 2 bytes off, two K tiles */
        {1, 65, 16, 7, -1, -1, 1, 1, 1, 0},         /* one row per product */
        {37, 200, 128, 3, -1, 2, 0, 0, 0, 1},       /* k at the short limit; B 4-byte rows */
        {300, 301, 127, 1, -1, -1, 0, 1, 0, 0},     /* t8_gemm 128 x 128: 4 K tiles */
        {129, 513, 191, 2, -1, -1, 1, 1, 1, 1},     /* 128 x 256 x 64: 3 K tiles */
        {200, 100, 499, 1, -1, -1, 1, 0, 0, 0},     /* split-K 4: slices of 4 K tiles */
        {100, 64, 129, 3, -1, 0, 0, 0, 0, 0},       /* deep K: A packed */
        {65, 97, 1000, 1, -1, -1, 1, 1, 0, 1},      /* deep K: both packed */
    };
    static const float ab[2][2] = {{1.25f, 0.0f}, {-0.5f, 1.5f}};
    static const struct { at_dtype t; const char *name; } kinds[2] = {
        {AT_R_16BF, "bf16"}, {AT_R_16F, "fp16"},
    };
    const size_t es = 2;
    int runs = 0, prefill_runs = 0, packed_runs = 0;
    for (int t = 0; t < 2 && !th_failed(); t++) {
        th_compiled set[TO_N_TILES];
        memset(set, 0, sizeof set);
        for (int i = 0; i < TO_N_TILES; i++) {
            to_text(set[i].text, sizeof set[i].text, t, i);
            CHECK(tt_parse(set[i].text, set[i].cfg));
            set[i].fam = f;
            set[i].arch = dev->arch;
        }
        if (!th_compile_all(set, TO_N_TILES)) {
            th_release_compiled(set, TO_N_TILES);
            break;
        }
        for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++)
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            int m = cases[d][0], n = cases[d][1], k = cases[d][2];
            long long batch = cases[d][3];
            int ta = ops & 1, tb = ops >> 1;
            long long rows_a = ta ? k : m, cols_a = ta ? m : k;
            long long rows_b = tb ? n : k, cols_b = tb ? k : n;
            long long lda = to_ld(cols_a, cases[d][4]), ldb = to_ld(cols_b, cases[d][5]);
            long long ldc = n;
            long long sa = rows_a * lda + cases[d][8], sb = rows_b * ldb + cases[d][8];
            long long sc = (long long)m * ldc + 1;
            int a_off = cases[d][6], b_off = cases[d][7], c_off = cases[d][9];
            size_t na = (size_t)(a_off + sa * batch), nb = (size_t)(b_off + sb * batch);
            size_t nc = (size_t)(c_off + sc * batch);
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A0, B0, C0, C, R;
            unsigned char *hc0 = malloc(nc * es), *hc = malloc(nc * es),
                          *hb = malloc((na > nb ? na : nb) * es);
            CHECK(hc0 && hc && hb);
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * es, &A0));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * es, &B0));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * es, &C0));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * es, &C));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)batch * m * n * 8 + 8, &R));
            tt_fill(hb, na, t, 31 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(A0, hb, na * es) == CUDA_SUCCESS);
            tt_fill(hb, nb, t, 47 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(B0, hb, nb * es) == CUDA_SUCCESS);
            tt_fill(hc0, nc, t, 59 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(C0, hc0, nc * es) == CUDA_SUCCESS);
            CUdeviceptr A = A0 + (CUdeviceptr)a_off * es, B = B0 + (CUdeviceptr)b_off * es;
            CUdeviceptr c0 = C0 + (CUdeviceptr)c_off * es, c = C + (CUdeviceptr)c_off * es;
            tpl_problem p = tt_problem(m, n, k, kinds[t].t, AT_MATH_DEFAULT);
            p.op_a = ta ? AT_OP_T : AT_OP_N;
            p.op_b = tb ? AT_OP_T : AT_OP_N;
            p.batch = batch > 1 ? batch : 0;
            tpl_problem one = p;
            one.batch = 0;
            for (int v = 0; v < 2 && !th_failed(); v++) {
                float alpha = ab[v][0], beta = ab[v][1];
                for (long long z = 0; z < batch; z++) {
                    tpl_args rargs = tpl_gemm_args(m, n, k, alpha, A + (CUdeviceptr)(z * sa) * es,
                                                   (int)lda, B + (CUdeviceptr)(z * sb) * es,
                                                   (int)ldb, beta, c0 + (CUdeviceptr)(z * sc) * es,
                                                   (int)ldc);
                    rargs.problem = one;
                    CHECK_OK(tpl_ref_gemm_args(ref, &rargs, c0 + (CUdeviceptr)(z * sc) * es,
                                               R + (CUdeviceptr)(z * m * n) * 8));
                }
                for (int i = 0; i < TO_N_TILES && !th_failed(); i++) {
                    const int *cfg = set[i].cfg;
                    if (!tt_runs_on_pair(cfg[P_OPA], cfg[P_OPB], ops))
                        continue;
                    /* C = C0, NaN in every product's m x n block when beta = 0 */
                    memcpy(hc, hc0, nc * es);
                    for (long long z = 0; beta == 0.0f && z < batch; z++)
                        for (int r = 0; r < m; r++)
                            memset(hc + (size_t)(c_off + z * sc + (long long)r * ldc) * es, 0xff,
                                   (size_t)n * es);
                    CHECK(cu->MemcpyHtoD(C, hc, nc * es) == CUDA_SUCCESS);
                    /* the rule's verdict per operand (2: read in place 2 bytes at a time) for
                     * the products of one launch: all of them, one per launch with split-K */
                    int fits = t8_prefill_fits(cfg, k);
                    long long per = cfg[P_SPLITK] > 1 ? 1 : batch;
                    int wa = t8_load_width(A, lda, sa, per, 2, cfg[P_LOADW], fits);
                    int wb = t8_load_width(B, ldb, sb, per, 2, cfg[P_LOADW], fits);
                    int pack_a = (ta && !cfg[P_OPA]) || !wa, pack_b = (tb && !cfg[P_OPB]) || !wb;
                    int prefill = (!(ta && !cfg[P_OPA]) && wa == 2) ||
                                  (!(tb && !cfg[P_OPB]) && wb == 2);
                    CUmodule mod;
                    CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                    at_exec ex;
                    ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
                    tpl_args args = tpl_gemm_args(m, n, k, alpha, A, (int)lda, B, (int)ldb, beta,
                                                  c, (int)ldc);
                    args.problem = p;
                    args.operand[TPL_GEMM_A].batch_stride = sa;
                    args.operand[TPL_GEMM_B].batch_stride = sb;
                    args.operand[TPL_GEMM_C].batch_stride = sc;
                    at_status s = f->run(&ex, cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    int scratch_a = ex.scratch_bytes[TC_SLOT_PACKED_A] > 0,
                        scratch_b = ex.scratch_bytes[TC_SLOT_PACKED_B] > 0;
                    ex_release(&ex);
                    cu->ModuleUnload(mod);
                    char what[768];
                    snprintf(what, sizeof what, "%s %dx%dx%d x %lld ops %s%s ld %lld/%lld/%lld "
                             "offsets %d/%d/%d strides %lld/%lld/%lld alpha %g beta %g (%s; "
                             "widths %d/%d) %s", kinds[t].name, m, n, k, batch,
                             tpl_op_name(p.op_a), tpl_op_name(p.op_b), lda, ldb, ldc, a_off,
                             b_off, c_off, sa, sb, sc, alpha, beta,
                             t8_short_entry(cfg, k) ? "t8_gemm_short" : "t8_gemm", wa, wb,
                             set[i].text);
                    CHECK_MSG(s == AT_OK, "%s: %s", what, err);
                    CHECK_MSG(scratch_a == pack_a && scratch_b == pack_b, "%s: pack scratch A "
                              "%d B %d, the rule packs A %d B %d", what, scratch_a, scratch_b,
                              pack_a, pack_b);
                    for (long long z = 0; z < batch && !th_failed(); z++) {
                        double e = -1;
                        CHECK_OK(tpl_rel_error_typed(ref, kinds[t].t,
                                                     c + (CUdeviceptr)(z * sc) * es, m, n, ldc,
                                                     R + (CUdeviceptr)(z * m * n) * 8, &e));
                        CHECK_MSG(e <= f->tolerance(&p), "%s: product %lld error %g (tolerance "
                                  "%g)", what, z, e, f->tolerance(&p));
                    }
                    CHECK(cu->MemcpyDtoH(hc, C, nc * es) == CUDA_SUCCESS);
                    for (size_t x = 0; x < nc && !th_failed(); x++) {
                        long long at = (long long)x - c_off;
                        long long zz = at >= 0 ? at / sc : 0, in = at - zz * sc;
                        int inside = at >= 0 && zz < batch && in / ldc < m && in % ldc < n;
                        CHECK_MSG(inside || memcmp(hc + es * x, hc0 + es * x, es) == 0,
                                  "%s: element %zu outside C's blocks changed", what, x);
                    }
                    runs++;
                    prefill_runs += prefill;
                    packed_runs += (!wa && !(ta && !cfg[P_OPA])) || (!wb && !(tb && !cfg[P_OPB]));
                }
            }
            tpl_workset_free(cu, &ws);
            free(hc0);
            free(hc);
            free(hb);
        }
        th_release_compiled(set, TO_N_TILES);
    }
    printf("    %d runs, %d with an operand read 2 bytes at a time, %d packing one\n", runs,
           prefill_runs, packed_runs);
    CHECK(runs >= 700 && prefill_runs >= 350 && packed_runs >= 150);
    ms_close(g);
}
