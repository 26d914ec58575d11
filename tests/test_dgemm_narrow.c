/* test_dgemm_narrow.c: tests of dgemm's narrow DMMA tiles (BM or BN 32, templates/dgemm.c's
 * narrow lattice rows): the rule that serves them only to narrow sides and their NVRTC compiles
 * (CPU), every narrow configuration against a host reference (GPU). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "th_compile.h"
#include "th_dgemm.h"
#include "measure.h"
#include "tpl.h"

/* The narrow tiles (BM or BN 32) serve only a narrow side: m (BM 32) or n (BN 32) at most 128;
 * with split-K over a deep K at the shapes they were made for; tile_of's geometry and shared
 * memory worked out by hand for the m16n8k4 32 x 64 row. */
TEST(dgemm_narrow_tiles_only_for_narrow_sides)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    long long *idx = NULL;
    long long n = tpl_valid_configs_cached(f, &h100, &idx);
    CHECK(n > 0);
    int narrow_rows = 0;
    for (long long x = 0; x < n; x++) {
        int c[TPL_MAX_PARAMS];
        char text[TPL_CONFIG_LEN];
        tpl_config_from_index(f, idx[x], c);
        tpl_config_format(f, c, text, sizeof text);
        int bm32 = c[P_BM] == 32, bn32 = c[P_BN] == 32;
        if (!bm32 && !bn32)
            continue;
        CHECK_MSG(!(bm32 && bn32) && c[P_PATH] == 1, "%s", text);
        at_op oa = (at_op)c[P_OPA], ob = (at_op)c[P_OPB];
        narrow_rows += c[P_OPA] == 0 && c[P_OPB] == 0 && c[P_GROUP] == 8 && c[P_SPLITK] == 1;
        /* the narrow side at 128 and 129, the other side wide; K shallow: no split */
        tpl_problem edge = bm32 ? th_dgemm_problem(128, 4000, 64, oa, ob, 1)
                                : th_dgemm_problem(4000, 128, 64, oa, ob, 1);
        CHECK_MSG(f->applicable(c, &edge) == (c[P_SPLITK] == 1), "%s", text);
        edge.dims[bm32 ? 0 : 1] = 129;
        CHECK_MSG(!f->applicable(c, &edge), "%s", text);
        /* 22 x 1905 x 4955 (BM 32) and 1458 x 27 x 1300 (BN 32): few tiles, every split */
        tpl_problem deep = bm32 ? th_dgemm_problem(22, 1905, 4955, oa, ob, 1)
                                : th_dgemm_problem(1458, 27, 1300, oa, ob, 1);
        CHECK_MSG(f->applicable(c, &deep), "%s", text);
        tpl_tile t;
        CHECK(f->tile_of(c, &t));
        CHECK(t.bm == c[P_BM] && t.bn == c[P_BN] && t.splitk == c[P_SPLITK]);
        CHECK_EQ(t.threads, 32 * c[P_WARPS_M] * c[P_WARPS_N]);
    }
    free(idx);
    CHECK_EQ(narrow_rows, 10);
    /* m16n8k4 32 x 64 x 16, NN, 4 stages: A 32 x (16 + 4), B 16 x (64 + 4) doubles a stage */
    int c[TPL_MAX_PARAMS];
    CHECK(th_dgemm_parse("PATH=1,OPA=0,OPB=0,MMA=1684,BM=32,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,"
                   "FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=4", c));
    char why[256];
    CHECK_MSG(f->valid(c, &h100, why, sizeof why), "%s", why);
    tpl_tile t;
    CHECK(f->tile_of(c, &t));
    CHECK_EQ(t.smem, 4LL * (32 * 20 + 16 * 68) * 8);
    CHECK_EQ(t.threads, 128);
    /* 32 rows over 4 warp rows: 8 rows a warp, less than the mma's 16 */
    CHECK(th_dgemm_parse("PATH=1,OPA=0,OPB=0,MMA=1684,BM=32,BN=64,BK=16,WARPS_M=4,WARPS_N=2,STAGES=4,"
                   "FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=1", c));
    CHECK(!f->valid(c, &h100, why, sizeof why));
}

/* NVRTC compiles every narrow row for sm_90 (the op pairs and a split rotated over the rows;
 * the compile sample covers each parameter value once, not each row). */
TEST(dgemm_nvrtc_compiles_every_narrow_tile)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    long long *idx = NULL;
    long long n = tpl_valid_configs_cached(f, &h100, &idx);
    th_compiled set[16];
    int rows = 0;
    memset(set, 0, sizeof set);
    for (long long x = 0; x < n; x++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[x], c);
        if ((c[P_BM] != 32 && c[P_BN] != 32) || c[P_GROUP] != 8 ||
            c[P_OPA] != (rows & 1) || c[P_OPB] != ((rows >> 1) & 1) ||
            c[P_SPLITK] != (rows % 3 ? 1 << (rows % 3) : 1))
            continue;
        /* one configuration of a row: skip it if an earlier pick has the same tile and MINB */
        int seen = 0;
        for (int i = 0; i < rows; i++)
            seen |= set[i].cfg[P_MMA] == c[P_MMA] && set[i].cfg[P_BM] == c[P_BM] &&
                    set[i].cfg[P_BN] == c[P_BN] && set[i].cfg[P_MINB] == c[P_MINB];
        if (seen || rows == 16)
            continue;
        th_compiled *s = &set[rows++];
        memcpy(s->cfg, c, sizeof s->cfg);
        tpl_config_format(f, c, s->text, sizeof s->text);
        s->fam = f;
        s->arch = "sm_90";
        x = -1;                     /* the next row takes the next ops and split: scan again */
    }
    free(idx);
    CHECK_EQ(rows, 10);
    CHECK(th_compile_all(set, rows));
    for (int i = 0; i < rows; i++)
        CHECK_MSG(set[i].cubin && set[i].size > 0, "%s", set[i].text);
    th_release_compiled(set, rows);
}

/* ---------------- GPU tier ---------------- */

/* Element (i, j) of the logical matrix `which` (0 op(A), 1 op(B), 2 C0) of a seeded problem:
 * 53 random bits in [-1, 1), the same whatever the operands' storage. */
static double dn_val(unsigned long long seed, int which, long long i, long long j)
{
    unsigned long long z = seed * 0x9E3779B97F4A7C15ull +
                           (unsigned long long)which * 0x632BE59BD9B4E019ull +
                           (unsigned long long)i * 0xD1B54A32D192ED03ull + (unsigned long long)j;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return -1.0 + 2.0 * (double)(z >> 11) * ldexp(1, -53);
}

/* A leading dimension 1 or 2 elements past cols, odd or even as asked. */
static long long dn_padded_ld(long long cols, int odd)
{
    long long ld = cols + 1;
    return ld % 2 == odd ? ld : ld + 1;
}

/* Every narrow configuration (BM or BN 32, every split, GROUP 8) against a host reference at
 * the narrow shapes they serve (m = 22 and 53 over a deep K for BM 32; n = 27 and 100 for BN 32,
 * inner blocks and full K tiles in the last), each op pair, two layouts (odd leading
 * dimensions and bases offset by 1-3 elements: packed operands and scalar stores; even ones,
 * aligned: the kernel reads in place and stores double2), alpha -0.75 with beta 0.5 and alpha
 * 1.25 with beta 0 over NaN. Operand pads hold NaN (a read past K poisons every result),
 * elements of C outside the products must stay unchanged, and each configuration must have run
 * at least once. */
GPU_TEST(dgemm_gpu_narrow_tiles_against_the_host)
{
    const tpl_family *f = &tpl_dgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    const at_device_info *dev = ms_device(g);
    long long *idx = NULL;
    long long nv = tpl_valid_configs_cached(f, dev, &idx);
    th_compiled *set = calloc(nv > 0 ? (size_t)nv : 1, sizeof *set);
    int n = 0;
    for (long long x = 0; set && x < nv; x++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[x], c);
        if ((c[P_BM] != 32 && c[P_BN] != 32) || c[P_GROUP] != 8)
            continue;
        th_compiled *s = &set[n++];
        memcpy(s->cfg, c, sizeof s->cfg);
        tpl_config_format(f, c, s->text, sizeof s->text);
        s->fam = f;
        s->arch = dev->arch;
    }
    free(idx);
    CHECK(set != NULL);
    if (n == 0) {
        free(set);
        ms_close(g);
        th_skip("no narrow DMMA tile on %s (sm_90+ only)", dev->arch);
        return;
    }
    /* 10 rows x 4 op pairs x SPLITK 1, 2, 4, 8, 16 */
    CHECK_EQ(n, 200);
    if (!th_compile_all(set, n)) {
        th_free_compiled(set, n);
        ms_close(g);
        return;
    }
    int *ran = calloc((size_t)n, sizeof *ran);
    CHECK(ran != NULL);
    static const int shapes[][3] = {{22, 1905, 4955}, {53, 897, 777}, {1458, 27, 1300},
                                    {1000, 100, 2048}};
    /* layout 0: odd leading dimensions, A, B, C offset by 1, 3, 1 elements; layout 1: even
     * ones, aligned bases (each a pad of 1 or 2 elements past the minimum) */
    static const int offsets[2][3] = {{1, 3, 1}, {0, 0, 0}};
    static const double ab[2][2] = {{-0.75, 0.5}, {1.25, 0.0}};
    int runs = 0;
    double worst = 0;
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0] && !th_failed(); sh++) {
        const int m = shapes[sh][0], nn = shapes[sh][1], k = shapes[sh][2];
        const unsigned long long seed = 41 + sh;
        /* the logical op(A) (m x k) and op(B) stored as its transpose (n x k), and the product */
        double *Al = malloc((size_t)m * k * 8), *Bt = malloc((size_t)nn * k * 8);
        double *P = malloc((size_t)m * nn * 8);
        CHECK(Al && Bt && P);
        for (long long i = 0; i < m; i++)
            for (long long p = 0; p < k; p++)
                Al[i * k + p] = dn_val(seed, 0, i, p);
        for (long long j = 0; j < nn; j++)
            for (long long p = 0; p < k; p++)
                Bt[j * k + p] = dn_val(seed, 1, p, j);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < nn; j++)
                P[(size_t)i * nn + j] = th_dgemm_host_dot(Al, k, 0, Bt, k, 1, i, j, k);
        for (int ops = 0; ops < 4 && !th_failed(); ops++)
            for (int l = 0; l < 2 && !th_failed(); l++) {
                const int opa = ops & 1, opb = ops >> 1;
                const long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? nn : k,
                                bc = opb ? k : nn;
                const long long lda = dn_padded_ld(ac, l == 0), ldb = dn_padded_ld(bc, l == 0),
                                ldc = dn_padded_ld(nn, l == 0);
                const int oa = offsets[l][0], ob = offsets[l][1], oc = offsets[l][2];
                const size_t na = oa + (size_t)(ar * lda), nb = ob + (size_t)(br * ldb),
                             nc = oc + (size_t)((long long)m * ldc);
                double *hA = malloc(na * 8), *hB = malloc(nb * 8), *hC0 = malloc(nc * 8),
                       *hC = malloc(nc * 8), *hN = malloc(nc * 8);
                CHECK(hA && hB && hC0 && hC && hN);
                /* stored operands, NaN in the offsets and pads */
                for (size_t x = 0; x < na; x++)
                    hA[x] = NAN;
                for (size_t x = 0; x < nb; x++)
                    hB[x] = NAN;
                for (long long r = 0; r < ar; r++)
                    for (long long c = 0; c < ac; c++)
                        hA[oa + r * lda + c] = opa ? Al[c * k + r] : Al[r * k + c];
                for (long long r = 0; r < br; r++)
                    for (long long c = 0; c < bc; c++)
                        hB[ob + r * ldb + c] = opb ? Bt[r * k + c] : Bt[c * k + r];
                /* C0, and its copy with NaN in the product's elements (beta = 0) */
                for (size_t x = 0; x < nc; x++)
                    hC0[x] = hN[x] = dn_val(seed, 2, (long long)x, l);
                for (long long r = 0; r < m; r++)
                    for (long long c = 0; c < nn; c++)
                        hN[oc + r * ldc + c] = NAN;
                tpl_workset ws;
                memset(&ws, 0, sizeof ws);
                CUdeviceptr A, B, C;
                CHECK_OK(tpl_ws_alloc(ref, &ws, na * 8, &A));
                CHECK_OK(tpl_ws_alloc(ref, &ws, nb * 8, &B));
                CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 8, &C));
                CHECK(cu->MemcpyHtoD(A, hA, na * 8) == CUDA_SUCCESS);
                CHECK(cu->MemcpyHtoD(B, hB, nb * 8) == CUDA_SUCCESS);
                tpl_problem p = th_dgemm_problem(m, nn, k, (at_op)opa, (at_op)opb, 1);
                for (int v = 0; v < 2 && !th_failed(); v++) {
                    const double alpha = ab[v][0], beta = ab[v][1];
                    const double *c0 = beta != 0.0 ? hC0 : hN;
                    for (int i = 0; i < n && !th_failed(); i++) {
                        if (set[i].cfg[P_OPA] != opa || set[i].cfg[P_OPB] != opb ||
                            !f->applicable(set[i].cfg, &p))
                            continue;
                        CHECK(cu->MemcpyHtoD(C, c0, nc * 8) == CUDA_SUCCESS);
                        tpl_args args;
                        memset(&args, 0, sizeof args);
                        args.problem = p;
                        args.operand[TPL_GEMM_A] = (tpl_operand){A + 8 * oa, lda, 0};
                        args.operand[TPL_GEMM_B] = (tpl_operand){B + 8 * ob, ldb, 0};
                        args.operand[TPL_GEMM_C] = (tpl_operand){C + 8 * oc, ldc, 0};
                        args.scalar[TPL_GEMM_ALPHA] = alpha;
                        args.scalar[TPL_GEMM_BETA] = beta;
                        at_status st = th_dgemm_run_cubin(cu, dev, ref->stream, set[i].cubin,
                                                            set[i].cfg, &args, err, sizeof err);
                        CHECK_MSG(st == AT_OK, "%s: %s", set[i].text, err);
                        CHECK(cu->MemcpyDtoH(hC, C, nc * 8) == CUDA_SUCCESS);
                        double num = 0, den = 0;
                        for (size_t x = 0; x < nc; x++) {
                            long long e = (long long)x - oc, r = e / ldc, c = e % ldc;
                            if (e < 0 || r >= m || c >= nn) {
                                CHECK_MSG(memcmp(&hC[x], &hC0[x], 8) == 0, "%s %dx%dx%d: "
                                          "element %zu outside C changed", set[i].text, m, nn,
                                          k, x);
                                continue;
                            }
                            double want = alpha * P[r * nn + c] + beta * hC0[x];
                            num += (hC[x] - want) * (hC[x] - want);
                            den += want * want;
                        }
                        double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                        CHECK_MSG(e <= f->tolerance(&p), "%s %dx%dx%d layout %d alpha %g beta "
                                  "%g: error %g (tolerance %g)", set[i].text, m, nn, k, l, alpha,
                                  beta, e, f->tolerance(&p));
                        worst = e / f->tolerance(&p) > worst ? e / f->tolerance(&p) : worst;
                        ran[i]++;
                        runs++;
                    }
                }
                tpl_workset_free(cu, &ws);
                free(hA);
                free(hB);
                free(hC0);
                free(hC);
                free(hN);
            }
        free(Al);
        free(Bt);
        free(P);
    }
    for (int i = 0; i < n && !th_failed(); i++)
        CHECK_MSG(ran[i] > 0, "%s never ran (applicable to none of the shapes)", set[i].text);
    printf("    %d narrow configurations, %d runs against the host, worst %.3f of the "
           "tolerance\n", n, runs, worst);
    free(ran);
    th_free_compiled(set, n);
    ms_close(g);
}
