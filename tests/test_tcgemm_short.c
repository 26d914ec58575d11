/* test_tcgemm_short.c: PATH 80 calls of a short K (tcgemm.cu's t8_gemm_short, the shared memory of
 * the stages a block uses): the host's rule and sizes (CPU), the entry in the NVRTC cubins (CPU),
 * and strided batches of short-K products with odd C rows against float64 references (GPU). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "measure.h"
#include "tcgemm.h"
#include "th_compile.h"
#include "th_family.h"
#include "th_tcgemm.h"
#include "tpl.h"

/* The GPU test's PATH 80 configurations (TYPE prepended; rows of the family's lattice): the
 * 64 x 64 rows (t8_gemm_short for k <= 128) on every op pair as stored and packed, the 128 x 128
 * ones (t8_gemm with fewer stages of shared memory) with staged and paired stores. */
#define TS_TAIL ",WG=2,CM=1,CN=1,RASTER=0,GROUP=8,SPLITK=1"
static const char *const ts_tiles16[] = {
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=8,LOADW=16" TS_TAIL,
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=8,LOADW=16" TS_TAIL ",OPA=1",
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=8,LOADW=16" TS_TAIL ",OPB=1",
    "BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=8,LOADW=16" TS_TAIL ",OPB=1,OPA=1",
    "BM=128,BN=128,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=8,LOADW=16" TS_TAIL,
    "BM=128,BN=128,BK=32,STAGES=4,WARPS_M=2,WARPS_N=4,VEC=2,LOADW=2" TS_TAIL ",OPB=1,OPA=1",
};
static const char *const ts_tiles_tf32[] = {
    "BM=64,BN=64,BK=16,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=4,LOADW=16" TS_TAIL,
    "BM=64,BN=64,BK=16,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=4,LOADW=16" TS_TAIL ",OPB=1,OPA=1",
    "BM=128,BN=128,BK=16,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=4,LOADW=16" TS_TAIL ",OPA=1",
};
#define TS_N16 (int)(sizeof ts_tiles16 / sizeof ts_tiles16[0])
#define TS_NTF (int)(sizeof ts_tiles_tf32 / sizeof ts_tiles_tf32[0])

/* Tile i of type t (0 BF16, 1 FP16, 2 TF32) as a configuration text; 0 past the type's tiles. */
static int ts_text(char *buf, size_t len, int t, int i)
{
    if (i >= (t == 2 ? TS_NTF : TS_N16))
        return 0;
    snprintf(buf, len, "TYPE=%d,PATH=80,%s", t, t == 2 ? ts_tiles_tf32[i] : ts_tiles16[i]);
    return 1;
}

/* ---------------- CPU tier ---------------- */

/* t8_short_minb: 65536 / (threads x (accumulators per thread + 45)) where at least 4 (warp tiles
 * of at most 32 x 32); t8_short_entry: that entry, SPLITK 1, 0 < k <= 128 and at most STAGES K
 * tiles per block; t8_smem_used: the stages a block walks or the staged epilogue, the larger
 * (the sizes below by hand from tcgemm.cu's T8_ layout). */
TEST(tcgemm_short_k_rule_and_shared_memory)
{
    int s64[TPL_MAX_PARAMS], s64v2[TPL_MAX_PARAMS], s64tf[TPL_MAX_PARAMS], b22[TPL_MAX_PARAMS],
        b24[TPL_MAX_PARAMS], sk[TPL_MAX_PARAMS];
    CHECK(tt_parse("TYPE=1,PATH=80,BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=8,LOADW=16"
                   TS_TAIL, s64));
    CHECK(tt_parse("TYPE=0,PATH=80,BM=64,BN=64,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=2,LOADW=16"
                   TS_TAIL, s64v2));
    CHECK(tt_parse("TYPE=2,PATH=80,BM=64,BN=64,BK=16,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=4,LOADW=16"
                   TS_TAIL, s64tf));
    CHECK(tt_parse("TYPE=1,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WARPS_M=2,WARPS_N=2,VEC=8,"
                   "LOADW=16" TS_TAIL, b22));
    CHECK(tt_parse("TYPE=0,PATH=80,BM=128,BN=128,BK=32,STAGES=4,WARPS_M=2,WARPS_N=4,VEC=2,"
                   "LOADW=2" TS_TAIL ",OPB=1,OPA=1", b24));
    CHECK(tt_parse("TYPE=0,PATH=80,BM=64,BN=64,BK=32,STAGES=4,WG=2,CM=1,CN=1,WARPS_M=2,"
                   "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=2,VEC=2,LOADW=16", sk));
    CHECK_EQ(t8_short_minb(s64), 6);        /* 128 threads, 32 accumulators: 65536 / 9856 */
    CHECK_EQ(t8_short_minb(s64tf), 6);
    CHECK_EQ(t8_short_minb(b22), 0);        /* 128 accumulators: 2 blocks */
    CHECK_EQ(t8_short_minb(b24), 0);        /* 256 threads, 64 accumulators: 2 */
    static const struct { int which; long long k; int want; } cases[] = {
        {0, 16, 1}, {0, 25, 1}, {0, 32, 1}, {0, 35, 1}, {0, 90, 1}, {0, 128, 1},
        {0, 129, 0},                        /* past T8_SHORT_K */
        {0, 0, 0},
        {2, 64, 1}, {2, 65, 0},             /* TF32 BK 16: 5 K tiles > STAGES 4 */
        {3, 25, 0}, {4, 25, 0},             /* no short entry compiled */
        {5, 25, 0},                         /* SPLITK 2 */
    };
    const int *cfgs[6] = {s64, s64v2, s64tf, b22, b24, sk};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_MSG(t8_short_entry(cfgs[cases[i].which], cases[i].k) == cases[i].want,
                  "case %zu (configuration %d, k %lld): want %d", i, cases[i].which,
                  cases[i].k, cases[i].want);
    /* one stage of 64 x 64 x 32 16-bit: A 64 x (32 + 8), B 32 x (64 + 8) elements */
    const long long st64 = (64 * 40 + 32 * 72) * 2, epi64 = 64 * 72 * 4;
    CHECK_EQ(t8_smem_used(s64, 25), epi64);             /* one stage < the FP32 staging */
    CHECK_EQ(t8_smem_used(s64, 64), 2 * st64);          /* two stages: 19456 > 18432 */
    CHECK_EQ(t8_smem_used(s64v2, 64), 2 * st64);        /* VEC 2: no staging */
    CHECK_EQ(t8_smem_used(s64v2, 25), st64);
    CHECK_EQ(t8_smem_used(s64v2, 96), 3 * st64);
    CHECK_EQ(t8_smem_used(s64v2, 97), 4 * st64);        /* 4 K tiles: the whole ring */
    CHECK_EQ(t8_smem_used(s64v2, 100000), 4 * st64);
    CHECK_EQ(t8_smem_used(s64, 100000), t8_smem_bytes(s64));
    /* 128 x 128 x 32, WARPS 2 x 4, op-T A (32 x (128 + 8)) and B (128 x (32 + 8)), VEC 2 */
    const long long st128 = (32 * 136 + 128 * 40) * 2;
    CHECK_EQ(t8_smem_used(b24, 20), st128);
    CHECK_EQ(t8_smem_used(b24, 4096), 4 * st128);
    /* SPLITK 2: a block walks its slice, ceil(ceil(k / 32) / 2) K tiles */
    CHECK_EQ(t8_smem_used(sk, 64), st64);
    CHECK_EQ(t8_smem_used(sk, 160), 3 * st64);
}

/* The GPU test's configurations are valid on an sm_90 device (a rule change that drops one
 * fails here, not silently on the GPU). */
TEST(tcgemm_short_k_gpu_configurations_valid)
{
    at_device_info dev = tt_device(9, 0, 232448, 1024, 65536);
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < TS_N16; i++) {
            char text[512], why[256] = "";
            int cfg[TPL_MAX_PARAMS];
            if (!ts_text(text, sizeof text, t, i))
                continue;
            CHECK(tt_parse(text, cfg));
            CHECK_MSG(tpl_tcgemm.valid(cfg, &dev, why, sizeof why), "%s: %s", text, why);
        }
}

/* 1 if the name occurs in the n bytes at p (a cubin's symbol table holds its kernels' names). */
static int ts_has_name(const void *p, size_t n, const char *name)
{
    size_t len = strlen(name) + 1;      /* with the terminating NUL: t8_gemm is not t8_gemm_short */
    const char *c = p;
    for (size_t i = 0; i + len <= n; i++)
        if (memcmp(c + i, name, len) == 0)
            return 1;
    return 0;
}

/* NVRTC compiles t8_gemm_short into exactly the cubins where the host launches it
 * (t8_short_minb > 0): 64 x 64 tiles of each type (one for sm_80, one with a fused epilogue and
 * op-T reads) and 128 x 128 ones without it. */
TEST(tcgemm_short_k_entry_compiled_where_the_host_expects_it)
{
    static const struct { int t, tile; const char *arch, *extra; } picks[] = {
        {1, 0, "sm_90", ""}, {2, 0, "sm_90", ""}, {0, 0, "sm_80", ""},
        {0, 3, "sm_90", ",EPI=11"}, {0, 4, "sm_90", ""}, {2, 2, "sm_90", ""},
    };
    enum { N_PICKS = (int)(sizeof picks / sizeof picks[0]) };
    th_compiled set[N_PICKS];
    memset(set, 0, sizeof set);
    for (int i = 0; i < N_PICKS; i++) {
        char text[TPL_CONFIG_LEN];
        CHECK(ts_text(text, sizeof text, picks[i].t, picks[i].tile));
        snprintf(set[i].text, sizeof set[i].text, "%s%s", text, picks[i].extra);
        set[i].fam = &tpl_tcgemm;
        set[i].arch = picks[i].arch;
        CHECK(tt_parse(set[i].text, set[i].cfg));
    }
    if (!th_compile_all(set, N_PICKS)) {
        th_release_compiled(set, N_PICKS);
        return;
    }
    int with_short = 0;
    for (int i = 0; i < N_PICKS; i++) {
        int has = ts_has_name(set[i].cubin, set[i].size, "t8_gemm_short");
        CHECK_MSG(ts_has_name(set[i].cubin, set[i].size, "t8_gemm"), "%s (%s): no t8_gemm",
                  set[i].text, set[i].arch);
        CHECK_MSG(has == (t8_short_minb(set[i].cfg) > 0), "%s (%s): t8_gemm_short %s, the host "
                  "expects %s", set[i].text, set[i].arch, has ? "present" : "absent",
                  t8_short_minb(set[i].cfg) > 0 ? "it" : "none");
        with_short += has;
    }
    CHECK_EQ(with_short, 4);
    th_release_compiled(set, N_PICKS);
}

/* ---------------- GPU tier ---------------- */

static size_t ts_es(int t)
{
    return t == 2 ? 4 : 2;
}

/* Strided batches of short-K products as the weak calls of 2026-11-29 make them (m x n output
 * tiles by the thousand, k 16..35, odd n, so C's rows and products start at every alignment):
 * every type, the 64 x 64 configurations (t8_gemm_short) and 128 x 128 ones (t8_gemm, shared
 * memory cut to the stages used) on every op pair, tight and padded lds (odd 16-bit lds read 2
 * bytes at a time before the ring, t8_prefill, and packed at k 129, past it; even ones read
 * narrow), C's base one element off, odd ldc and product strides, k at the short entry's limits
 * (128 in, 129 out), alpha with beta 0 over NaN and beta != 0: each product
 * against its float64 reference, every element of C outside the products unchanged. */
GPU_TEST(tcgemm_gpu_short_k_batched_odd_c)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const int cases[][8] = {
        /* m, n, k, batch, ld padding of A and B (elements past the stored columns), ldc
         * padding, C product padding (past m x ldc) */
        {100, 391, 25, 3, 0, 0, 0, 0},          /* odd n = ldc, tight: odd lda, 2-byte loads */
        {129, 263, 20, 5, 2, 1, 2, 1},          /* ragged tiles, odd ldc n + 2 */
        {70, 201, 35, 4, 1, 0, 0, 3},           /* two K tiles (BK 32), odd product stride */
        {1, 65, 16, 7, 0, 3, 1, 0},             /* one row per product */
        {151, 97, 21, 13, 0, 0, 0, 0},
        {37, 200, 128, 3, 0, 0, 1, 1},          /* the short entry's deepest k */
        {50, 70, 129, 2, 0, 0, 1, 1},           /* one past: t8_gemm */
        {26, 90, 90, 21, 2, 2, 0, 5},           /* 6444 x 26 x 90's shape class, small */
    };
    static const float ab[2][2] = {{1.25f, 0.0f}, {-0.5f, 1.5f}};
    const int c_off = 1;                        /* C's base one element past an aligned one */
    int runs = 0, short_runs = 0;
    static const struct { at_dtype t; at_math m; const char *name; } kinds[3] = {
        {AT_R_16BF, AT_MATH_DEFAULT, "bf16"}, {AT_R_16F, AT_MATH_DEFAULT, "fp16"},
        {AT_R_32F, AT_MATH_TF32, "tf32"},
    };
    for (int t = 0; t < 3 && !th_failed(); t++) {
        th_compiled set[TS_N16];
        int n_set = 0;
        memset(set, 0, sizeof set);
        while (ts_text(set[n_set].text, sizeof set[n_set].text, t, n_set)) {
            CHECK(tt_parse(set[n_set].text, set[n_set].cfg));
            set[n_set].fam = f;
            set[n_set].arch = dev->arch;
            n_set++;
        }
        if (!th_compile_all(set, n_set)) {
            th_release_compiled(set, n_set);
            break;
        }
        size_t es = ts_es(t);
        for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++)
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            int m = cases[d][0], n = cases[d][1], k = cases[d][2];
            long long batch = cases[d][3];
            int ta = ops & 1, tb = ops >> 1;
            long long rows_a = ta ? k : m, cols_a = ta ? m : k;
            long long rows_b = tb ? n : k, cols_b = tb ? k : n;
            long long lda = cols_a + cases[d][4], ldb = cols_b + cases[d][5];
            long long ldc = n + cases[d][6];
            long long sa = rows_a * lda, sb = rows_b * ldb;
            long long sc = (long long)m * ldc + cases[d][7];
            size_t na = (size_t)(sa * batch), nb = (size_t)(sb * batch);
            size_t nc = (size_t)(c_off + sc * batch);
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
            tt_fill(hb, na, t, 31 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(A, hb, na * es) == CUDA_SUCCESS);
            tt_fill(hb, nb, t, 47 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(B, hb, nb * es) == CUDA_SUCCESS);
            tt_fill(hc0, nc, t, 59 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(C0, hc0, nc * es) == CUDA_SUCCESS);
            CUdeviceptr c0 = C0 + (CUdeviceptr)c_off * es, c = C + (CUdeviceptr)c_off * es;
            tpl_problem p = tt_problem(m, n, k, kinds[t].t, kinds[t].m);
            p.op_a = ta ? AT_OP_T : AT_OP_N;
            p.op_b = tb ? AT_OP_T : AT_OP_N;
            p.batch = batch;
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
                for (int i = 0; i < n_set && !th_failed(); i++) {
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
                    ex_release(&ex);
                    cu->ModuleUnload(mod);
                    char what[768];
                    snprintf(what, sizeof what, "%s %dx%dx%d x %lld ops %s%s ld %lld/%lld/%lld "
                             "strides %lld/%lld/%lld alpha %g beta %g (%s) %s", kinds[t].name, m,
                             n, k, batch, tpl_op_name(p.op_a), tpl_op_name(p.op_b), lda, ldb, ldc,
                             sa, sb, sc, alpha, beta,
                             t8_short_entry(cfg, k) ? "t8_gemm_short" : "t8_gemm", set[i].text);
                    CHECK_MSG(s == AT_OK, "%s: %s", what, err);
                    for (long long z = 0; z < batch && !th_failed(); z++) {
                        double e = -1;
                        CHECK_OK(tpl_rel_error_typed(ref, kinds[t].t,
                                                     c + (CUdeviceptr)(z * sc) * es, m, n, ldc,
                                                     R + (CUdeviceptr)(z * m * n) * 8, &e));
                        CHECK_MSG(e <= f->tolerance(&p), "%s: product %lld error %g (tolerance "
                                  "%g)", what, z, e, f->tolerance(&p));
                    }
                    /* outside the products' m x n blocks nothing changed */
                    CHECK(cu->MemcpyDtoH(hc, C, nc * es) == CUDA_SUCCESS);
                    for (size_t x = 0; x < nc && !th_failed(); x++) {
                        long long at = (long long)x - c_off;
                        long long zz = at >= 0 ? at / sc : 0, in = at - zz * sc;
                        int inside = at >= 0 && zz < batch && in / ldc < m && in % ldc < n;
                        CHECK_MSG(inside || memcmp(hc + es * x, hc0 + es * x, es) == 0,
                                  "%s: element %zu outside C's blocks changed", what, x);
                    }
                    runs++;
                    short_runs += t8_short_entry(cfg, k);
                }
            }
            tpl_workset_free(cu, &ws);
            free(hc0);
            free(hc);
            free(hb);
        }
        th_release_compiled(set, n_set);
    }
    printf("    %d runs, %d of them through t8_gemm_short\n", runs, short_runs);
    CHECK(runs >= 300 && short_runs >= 150);
    ms_close(g);
}
