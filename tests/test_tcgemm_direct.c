/* test_tcgemm_direct.c: PATH 90 BF16/FP16 operands that TMA cannot read (base or row stride not
 * 16-byte aligned) copied by the producer warps (tcgemm.cu's t9x_ section) instead of packed:
 * the host's rule per operand (CPU) and the kernels against float64 references (GPU). */
#include <math.h>
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

/* The PATH 90 tiles the GPU test runs (TYPE prepended; rows of the family's lattice): every op
 * pair, WG 1 and 2, tile rows of 1 to 4 boxes of 64 columns, split-K, BATCH 1, the TMA-store
 * epilogue (VEC 8) and a cluster (CM 2: it packs). */
#define TD_TAIL ",CM=1,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,GROUP=8,LOADW=16"
static const char *const td_tiles[] = {
    "BM=128,BN=256,BK=64,STAGES=3,WG=2,SPLITK=1,VEC=8" TD_TAIL,
    "BM=64,BN=128,BK=64,STAGES=4,WG=1,SPLITK=1,VEC=2" TD_TAIL,
    "BM=128,BN=192,BK=64,STAGES=4,WG=2,SPLITK=1,VEC=8" TD_TAIL,
    "BM=128,BN=128,BK=64,STAGES=4,WG=2,SPLITK=4,VEC=2" TD_TAIL,
    "BM=128,BN=128,BK=64,STAGES=4,WG=2,SPLITK=1,VEC=2" TD_TAIL ",OPA=1",
    "BM=64,BN=256,BK=64,STAGES=4,WG=1,SPLITK=2,VEC=2" TD_TAIL ",OPA=1",
    "BM=128,BN=256,BK=64,STAGES=3,WG=2,SPLITK=1,VEC=8" TD_TAIL ",OPB=1",
    "BM=128,BN=64,BK=64,STAGES=4,WG=2,SPLITK=1,VEC=2" TD_TAIL ",OPB=1",
    "BM=64,BN=128,BK=64,STAGES=4,WG=1,SPLITK=1,VEC=2" TD_TAIL ",OPB=1,OPA=1",
    "BM=128,BN=128,BK=64,STAGES=4,WG=2,SPLITK=8,VEC=2" TD_TAIL ",OPB=1,OPA=1",
    "BM=128,BN=128,BK=64,STAGES=4,WG=2,SPLITK=1,VEC=2" TD_TAIL ",BATCH=1",
    "BM=128,BN=128,BK=64,STAGES=4,WG=2,SPLITK=1,VEC=8" TD_TAIL ",OPB=1,OPA=1,BATCH=1",
    "BM=128,BN=256,BK=64,STAGES=4,WG=2,SPLITK=1,VEC=2,CM=2,CN=1,WARPS_M=2,WARPS_N=2,RASTER=0,"
    "GROUP=8,LOADW=16",
};
#define TD_N_TILES (int)(sizeof td_tiles / sizeof td_tiles[0])

/* Tile i of type t as a configuration text. */
static void td_text(char *buf, size_t len, int t, int i)
{
    snprintf(buf, len, "TYPE=%d,PATH=90,%s", t, td_tiles[i]);
}

/* ---------------- CPU tier ---------------- */

/* t9_operand_read: TMA where base, row stride (and BATCH 1 product stride, no overlap) are
 * 16-byte aligned; else BF16/FP16 without a cluster copy directly, in 8-byte words where base,
 * row stride and product stride (count > 1) are 8-byte aligned, 4-byte words where they are
 * 4-byte aligned; everything else (an odd 16-bit ld, a 2-byte base offset, TF32, FP8, a cluster)
 * is packed. */
TEST(tcgemm_direct_read_rule)
{
    int bf[TPL_MAX_PARAMS], fp16[TPL_MAX_PARAMS], tf[TPL_MAX_PARAMS], f8[TPL_MAX_PARAMS],
        cl[TPL_MAX_PARAMS], b1[TPL_MAX_PARAMS];
    CHECK(tt_parse("TYPE=0,PATH=90,BM=128,BN=256,BK=64,STAGES=3,WG=2,SPLITK=1,VEC=8" TD_TAIL, bf));
    CHECK(tt_parse("TYPE=1,PATH=90,BM=128,BN=128,BK=64,STAGES=4,WG=1,SPLITK=4,VEC=2" TD_TAIL
                   ",OPA=1", fp16));
    CHECK(tt_parse("TYPE=2,PATH=90,BM=128,BN=128,BK=32,STAGES=4,WG=2,SPLITK=1,VEC=2" TD_TAIL, tf));
    CHECK(tt_parse("TYPE=0,PATH=90,BM=128,BN=256,BK=128,STAGES=3,WG=2,SPLITK=1,VEC=8" TD_TAIL
                   ",OPB=1,FP8=1", f8));
    CHECK(tt_parse("TYPE=0,PATH=90,BM=128,BN=256,BK=64,STAGES=3,WG=2,CM=2,CN=1,WARPS_M=2,"
                   "WARPS_N=2,RASTER=0,GROUP=8,SPLITK=1,VEC=2,LOADW=16", cl));
    CHECK(tt_parse("TYPE=0,PATH=90,BM=128,BN=128,BK=64,STAGES=4,WG=2,SPLITK=1,VEC=2" TD_TAIL
                   ",BATCH=1", b1));
    const unsigned long long base = 1ull << 20;   /* a 256-byte aligned device address */
    static const struct {
        int which;                  /* 0 bf, 1 fp16, 2 tf32, 3 fp8, 4 cluster, 5 BATCH 1 */
        unsigned long long off;     /* bytes past base */
        long long ld, count, stride;
        int want;
    } cases[] = {
        {0, 0, 4096, 1, 0, T9_READ_TMA},         /* aligned: the tensor map */
        {0, 32, 72, 1, 0, T9_READ_TMA},
        {0, 0, 4606, 1, 0, T9_READ_DIRECT4},     /* ld % 8 == 6 */
        {0, 0, 4602, 1, 0, T9_READ_DIRECT4},     /* ld % 8 == 2 */
        {0, 0, 4604, 1, 0, T9_READ_DIRECT8},     /* ld % 8 == 4 */
        {0, 8, 4096, 1, 0, T9_READ_DIRECT8},     /* base 8 bytes off */
        {0, 4, 4096, 1, 0, T9_READ_DIRECT4},     /* base 4 bytes off */
        {0, 12, 4604, 1, 0, T9_READ_DIRECT4},
        {0, 8, 4604, 1, 0, T9_READ_DIRECT8},
        {0, 2, 4096, 1, 0, T9_READ_PACK},        /* base 2 bytes off */
        {0, 0, 4607, 1, 0, T9_READ_PACK},        /* odd ld */
        {0, 6, 4606, 1, 0, T9_READ_PACK},
        {1, 0, 12366, 1, 0, T9_READ_DIRECT4},    /* FP16, op-T reader (OPA 1), split-K */
        {1, 0, 12367, 1, 0, T9_READ_PACK},
        {1, 16, 1024, 1, 0, T9_READ_TMA},
        {2, 0, 4098, 1, 0, T9_READ_PACK},        /* TF32: its maps round; never copied */
        {2, 0, 4100, 1, 0, T9_READ_TMA},
        {3, 0, 4100, 1, 0, T9_READ_PACK},        /* FP8 */
        {3, 0, 4096, 1, 0, T9_READ_TMA},
        {4, 0, 4604, 1, 0, T9_READ_PACK},        /* a cluster */
        {4, 0, 4096, 1, 0, T9_READ_TMA},
        /* BATCH 1: product strides (elements) */
        {5, 0, 1024, 3, 1024 * 300, T9_READ_TMA},
        {5, 0, 1024, 3, 1024 * 300 + 4, T9_READ_DIRECT8},  /* stride 8 bytes off 16 */
        {5, 0, 1024, 3, 1024 * 300 + 2, T9_READ_DIRECT4},
        {5, 0, 1024, 3, 1024 * 300 + 1, T9_READ_PACK},     /* odd stride */
        {5, 0, 1024, 3, 0, T9_READ_DIRECT8},               /* broadcast: read, never packed */
        {5, 0, 1024, 3, 1000, T9_READ_DIRECT8},            /* overlapping products */
        {5, 0, 1022, 3, 1022 * 300, T9_READ_DIRECT4},      /* ld % 8 == 6 */
        {5, 0, 1022, 1, 1, T9_READ_DIRECT4},               /* one product: its stride unused */
        {5, 0, 1024, 1, 1, T9_READ_TMA},
    };
    const int *cfgs[6] = {bf, fp16, tf, f8, cl, b1};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = t9_operand_read(cfgs[cases[i].which], base + cases[i].off, 300, cases[i].ld,
                                  cases[i].count, cases[i].stride);
        CHECK_MSG(got == cases[i].want, "case %zu (configuration %d, offset %llu, ld %lld, %lld "
                  "products %lld apart): %d, want %d", i, cases[i].which, cases[i].off,
                  cases[i].ld, cases[i].count, cases[i].stride, got, cases[i].want);
    }
}

/* The GPU test's configurations are valid for an H100/H200-class sm_90 device, in both 16-bit
 * types (a rule change that drops one fails here, not silently on the GPU). */
TEST(tcgemm_direct_gpu_configurations_valid)
{
    at_device_info dev = tt_device(9, 0, 232448, 1024, 65536);
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < TD_N_TILES; i++) {
            char text[512], why[256] = "";
            int cfg[TPL_MAX_PARAMS];
            td_text(text, sizeof text, t, i);
            CHECK(tt_parse(text, cfg));
            CHECK_MSG(tpl_tcgemm.valid(cfg, &dev, why, sizeof why), "%s: %s", text, why);
        }
}

/* ---------------- GPU tier ---------------- */

/* Bits of a BF16 (t 0) or FP16 (t 1) element as a float. */
static double td_value(const unsigned char *p, int t)
{
    unsigned short h;
    memcpy(&h, p, 2);
    if (t == 0) {
        unsigned bits = (unsigned)h << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    int e = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = e == 0 ? ldexp(mant, -24) : e == 31 ? (mant ? NAN : INFINITY)
                                                   : ldexp(mant + 1024, e - 25);
    return h >> 15 ? -v : v;
}

/* Fills n 16-bit elements of type t with values in [-1, 1) from an LCG (exact in both types). */
static void td_fill(unsigned char *buf, size_t n, int t, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        int q = (int)(seed >> 24) - 128;            /* q / 128: 8 significant bits */
        float v = (float)q / 128.0f;
        unsigned short h;
        if (t == 0) {
            unsigned bits;
            memcpy(&bits, &v, 4);
            h = (unsigned short)(bits >> 16);
        } else {
            h = 0;
            if (q != 0) {
                int a = q < 0 ? -q : q, e = 0;
                while ((a << e) < 128)
                    e++;
                /* |v| = a / 128 = (a << e) / 2^(7 + e), a << e in [128, 256) */
                int he = 15 - e, mant = ((a << e) - 128) << 3;
                h = (unsigned short)((q < 0 ? 0x8000 : 0) | he << 10 | mant);
            }
        }
        memcpy(buf + 2 * i, &h, 2);
    }
}

/* On a failed comparison: the first element of C (m x n, ldc) whose value is off the float64
 * reference R (m x n doubles) by more than 2^-6 relative (+ 2^-6 absolute), printed with its
 * expected and computed values; -1 if none is. */
static long long td_first_wrong(const cudrv *cu, CUdeviceptr C, long long ldc, CUdeviceptr R,
                                int m, int n, int t)
{
    unsigned char *hc = malloc((size_t)m * ldc * 2);
    double *hr = malloc((size_t)m * n * 8);
    long long at = -1;
    if (hc && hr && cu->MemcpyDtoH(hc, C, (size_t)((m - 1) * ldc + n) * 2) == CUDA_SUCCESS &&
        cu->MemcpyDtoH(hr, R, (size_t)m * n * 8) == CUDA_SUCCESS) {
        long long wrong = 0;
        for (long long i = 0; i < m; i++)
            for (long long j = 0; j < n; j++) {
                double got = td_value(hc + (i * ldc + j) * 2, t), want = hr[i * n + j];
                if (fabs(got - want) <= fabs(want) / 64 + 1.0 / 64)
                    continue;
                if (wrong++ == 0) {
                    printf("    first wrong element C[%lld][%lld]: expected %.6g, got %.6g\n", i,
                           j, want, got);
                    at = i * n + j;
                }
            }
        printf("    %lld of %lld elements wrong\n", wrong, (long long)m * n);
    }
    free(hc);
    free(hr);
    return at;
}

/* 1 if configuration c runs on op pair ops (bit 0 op(A) = T, bit 1 op(B) = T): PATH 90 16-bit
 * kernels read op-T operands as stored, each on its own pair. */
static int td_runs_on(const int *c, int ops)
{
    return c[P_OPA] == (ops & 1) && c[P_OPB] == (ops >> 1);
}

/* The leading dimension of a stored operand of `cols` columns: cols itself (tight) where
 * want < 0, else the smallest ld >= cols with ld % 8 == want. */
static long long td_ld(long long cols, int want)
{
    if (want < 0)
        return cols < 1 ? 1 : cols;
    long long ld = cols < 1 ? 1 : cols;
    while (ld % 8 != want)
        ld++;
    return ld;
}

/* Misaligned A, B or both (ld % 8 in {2, 4, 6}, tight lds, bases 4, 8 or 12 bytes off), next to
 * aligned ones (a direct operand beside a TMA one), every op pair, WG 1 and 2, tile rows of 1 to
 * 4 boxes, split-K, BATCH 1 (product strides 4 or 8 bytes off 16, a broadcast B of stride 0),
 * ragged m, n, k (the tiles' tails zero-filled), alpha with beta 0 over NaN and beta != 0:
 * against the float64 reference, C outside its block unchanged, and no pack scratch allocated
 * for an operand that the rule (t9_operand_read) reads directly; the controls (a 2-byte base
 * offset, an odd ld, a cluster configuration) pack and stay right. */
GPU_TEST(tcgemm_gpu_misaligned_direct)
{
    const tpl_family *f = &tpl_tcgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    if (dev->cc_major != 9 || dev->cc_minor != 0) {
        printf("    the direct copies are PATH 90 (sm_90 only): nothing to run on %s\n", dev->arch);
        ms_close(g);
        return;
    }
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const int cases[][11] = {
        /* m, n, k, batch, ld % 8 of A, B (-1 tight), ldc padding, base offsets of A, B, C
         * (elements), product padding of A and B (elements; -1: B broadcast, stride 0) */
        {129, 65, 33, 1, 2, 4, 3, 2, 4, 1, 0},          /* ragged; A 4-byte, B 8-byte words */
        {256, 384, 128, 1, 6, 6, 0, 0, 0, 0, 0},         /* whole tiles, both ld % 8 == 6 */
        {300, 257, 190, 1, 4, 4, 5, 4, 4, 3, 0},         /* both in 8-byte words */
        {64, 1000, 70, 1, 0, 2, 1, 0, 6, 0, 0},          /* A TMA, B direct */
        {1000, 64, 70, 1, 4, 0, 0, 2, 0, 0, 0},          /* A direct (base 4 bytes off), B TMA */
        {56, 1030, 1562, 1, -1, -1, 0, 0, 0, 0, 0},      /* tight lds, small m, deep k */
        {1, 300, 40, 1, 2, 2, 1, 2, 2, 0, 0},            /* one row */
        {97, 131, 45, 1, 1, 2, 0, 1, 0, 0, 0},           /* control: odd ld, 2-byte base: packs */
        {129, 65, 33, 3, 2, 4, 3, 0, 0, 0, 2},           /* batch: strides 4 bytes off 16 */
        {59, 496, 184, 4, 4, 6, 0, 4, 2, 0, -1},         /* batch: B broadcast (stride 0) */
    };
    static const float ab[2][2] = {{1.25f, 0.0f}, {-0.5f, 1.5f}};
    int runs = 0, direct_runs = 0, packed_runs = 0;
    for (int t = 0; t < 2 && !th_failed(); t++) {
        th_compiled set[TD_N_TILES];
        memset(set, 0, sizeof set);
        for (int i = 0; i < TD_N_TILES; i++) {
            td_text(set[i].text, sizeof set[i].text, t, i);
            CHECK(tt_parse(set[i].text, set[i].cfg));
            set[i].fam = f;
            set[i].arch = dev->arch;
        }
        if (!th_compile_all(set, TD_N_TILES)) {
            th_release_compiled(set, TD_N_TILES);
            break;
        }
        at_dtype dt = t == 0 ? AT_R_16BF : AT_R_16F;
        for (size_t d = 0; d < sizeof cases / sizeof cases[0] && !th_failed(); d++)
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            int m = cases[d][0], n = cases[d][1], k = cases[d][2];
            long long batch = cases[d][3];
            int ta = ops & 1, tb = ops >> 1;
            long long rows_a = ta ? k : m, cols_a = ta ? m : k;
            long long rows_b = tb ? n : k, cols_b = tb ? k : n;
            long long lda = td_ld(cols_a, cases[d][4]), ldb = td_ld(cols_b, cases[d][5]);
            long long ldc = n + cases[d][6];
            long long sa = batch > 1 ? rows_a * lda + (cases[d][10] < 0 ? 0 : cases[d][10]) : 0;
            long long sb = batch > 1 ? (cases[d][10] < 0 ? 0 : rows_b * ldb + cases[d][10]) : 0;
            long long sc = batch > 1 ? (long long)m * ldc + 8 : 0;
            size_t na = cases[d][7] + (size_t)(batch > 1 ? sa * batch : rows_a * lda);
            size_t nb = cases[d][8] + (size_t)(batch > 1 && sb ? sb * batch : rows_b * ldb);
            size_t nc = cases[d][9] + (size_t)(batch > 1 ? sc * batch : m * ldc);
            tpl_workset ws;
            memset(&ws, 0, sizeof ws);
            CUdeviceptr A, B, C0, C, R;
            unsigned char *hc0 = malloc(nc * 2), *hc = malloc(nc * 2),
                          *hb = malloc((na > nb ? na : nb) * 2);
            CHECK(hc0 && hc && hb);
            CHECK_OK(tpl_ws_alloc(ref, &ws, na * 2, &A));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nb * 2, &B));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 2, &C0));
            CHECK_OK(tpl_ws_alloc(ref, &ws, nc * 2, &C));
            CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)batch * m * n * 8 + 8, &R));
            td_fill(hb, na, t, 71 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(A, hb, na * 2) == CUDA_SUCCESS);
            td_fill(hb, nb, t, 83 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(B, hb, nb * 2) == CUDA_SUCCESS);
            td_fill(hc0, nc, t, 97 + (unsigned)d);
            CHECK(cu->MemcpyHtoD(C0, hc0, nc * 2) == CUDA_SUCCESS);
            CUdeviceptr a = A + cases[d][7] * 2, b = B + cases[d][8] * 2;
            CUdeviceptr c0 = C0 + cases[d][9] * 2, c = C + cases[d][9] * 2;
            tpl_problem p = tt_problem(m, n, k, dt, AT_MATH_DEFAULT);
            p.op_a = ta ? AT_OP_T : AT_OP_N;
            p.op_b = tb ? AT_OP_T : AT_OP_N;
            p.batch = batch > 1 ? batch : 0;
            tpl_problem one = p;
            one.batch = 0;
            for (int v = 0; v < 2 && !th_failed(); v++) {
                float alpha = ab[v][0], beta = ab[v][1];
                for (long long z = 0; z < batch; z++) {
                    tpl_args rargs = tpl_gemm_args(m, n, k, alpha, a + (CUdeviceptr)(z * sa) * 2,
                                                   (int)lda, b + (CUdeviceptr)(z * sb) * 2,
                                                   (int)ldb, beta, c0 + (CUdeviceptr)(z * sc) * 2,
                                                   (int)ldc);
                    rargs.problem = one;
                    CHECK_OK(tpl_ref_gemm_args(ref, &rargs, c0 + (CUdeviceptr)(z * sc) * 2,
                                               R + (CUdeviceptr)(z * m * n) * 8));
                }
                for (int i = 0; i < TD_N_TILES && !th_failed(); i++) {
                    const int *cfg = set[i].cfg;
                    if (!td_runs_on(cfg, ops) || (cfg[P_BATCH] != 0) != (batch > 1))
                        continue;
                    /* C = C0, NaN in every product's m x n block when beta = 0 */
                    memcpy(hc, hc0, nc * 2);
                    for (long long z = 0; beta == 0.0f && z < batch; z++)
                        for (int r = 0; r < m; r++)
                            memset(hc + (size_t)(cases[d][9] + z * sc + (long long)r * ldc) * 2,
                                   0xff, (size_t)n * 2);
                    CHECK(cu->MemcpyHtoD(C, hc, nc * 2) == CUDA_SUCCESS);
                    CUmodule mod;
                    CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                    at_exec ex;
                    ex_init(&ex, cu, dev, mod, ref->stream, err, sizeof err);
                    tpl_args args = tpl_gemm_args(m, n, k, alpha, a, (int)lda, b, (int)ldb, beta,
                                                  c, (int)ldc);
                    args.problem = p;
                    args.operand[TPL_GEMM_A].batch_stride = sa;
                    args.operand[TPL_GEMM_B].batch_stride = sb;
                    args.operand[TPL_GEMM_C].batch_stride = sc;
                    at_status s = f->run(&ex, cfg, &args);
                    if (s == AT_OK)
                        s = ex_sync(&ex);
                    /* the rule's verdict per operand, and the pack slots it implies */
                    long long cnt = cfg[P_BATCH] ? batch : 1;
                    int ra = t9_operand_read(cfg, a, rows_a, lda, cnt, sa);
                    int rb = t9_operand_read(cfg, b, rows_b, ldb, cnt, sb);
                    int packed_a = ex.scratch[TC_SLOT_PACKED_A] != 0;
                    int packed_b = ex.scratch[TC_SLOT_PACKED_B] != 0;
                    ex_release(&ex);
                    cu->ModuleUnload(mod);
                    char what[768];
                    snprintf(what, sizeof what, "%s %dx%dx%d x %lld ops %s%s ld %lld/%lld/%lld "
                             "offsets %d/%d/%d strides %lld/%lld/%lld alpha %g beta %g (A %s, "
                             "B %s) %s", t ? "fp16" : "bf16", m, n, k, batch,
                             tpl_op_name(p.op_a), tpl_op_name(p.op_b), lda, ldb, ldc,
                             cases[d][7], cases[d][8], cases[d][9], sa, sb, sc, alpha, beta,
                             ra == T9_READ_TMA ? "TMA" : ra == T9_READ_PACK ? "packed"
                             : ra == T9_READ_DIRECT8 ? "direct 8" : "direct 4",
                             rb == T9_READ_TMA ? "TMA" : rb == T9_READ_PACK ? "packed"
                             : rb == T9_READ_DIRECT8 ? "direct 8" : "direct 4", set[i].text);
                    CHECK_MSG(s == AT_OK, "%s: %s", what, err);
                    CHECK_MSG(packed_a == (ra == T9_READ_PACK) && packed_b == (rb == T9_READ_PACK),
                              "%s: pack scratch A %d, B %d", what, packed_a, packed_b);
                    for (long long z = 0; z < batch && !th_failed(); z++) {
                        double e = -1;
                        CUdeviceptr cz = c + (CUdeviceptr)(z * sc) * 2;
                        CUdeviceptr rz = R + (CUdeviceptr)(z * m * n) * 8;
                        CHECK_OK(tpl_rel_error_typed(ref, dt, cz, m, n, ldc, rz, &e));
                        if (!(e <= f->tolerance(&p)))
                            td_first_wrong(cu, cz, ldc, rz, m, n, t);
                        CHECK_MSG(e <= f->tolerance(&p), "%s: product %lld error %g (tolerance "
                                  "%g)", what, z, e, f->tolerance(&p));
                    }
                    /* outside the products' m x n blocks nothing changed */
                    CHECK(cu->MemcpyDtoH(hc, C, nc * 2) == CUDA_SUCCESS);
                    for (size_t x = 0; x < nc && !th_failed(); x++) {
                        long long at = (long long)x - cases[d][9];
                        long long zz = at >= 0 && sc > 0 ? at / sc : 0, in = at - zz * sc;
                        int inside = at >= 0 && zz < batch && in / ldc < m && in % ldc < n;
                        CHECK_MSG(inside || memcmp(hc + 2 * x, hc0 + 2 * x, 2) == 0,
                                  "%s: element %zu outside C's blocks changed", what, x);
                    }
                    runs++;
                    direct_runs += ra == T9_READ_DIRECT8 || ra == T9_READ_DIRECT4 ||
                                   rb == T9_READ_DIRECT8 || rb == T9_READ_DIRECT4;
                    packed_runs += ra == T9_READ_PACK || rb == T9_READ_PACK;
                }
            }
            tpl_workset_free(cu, &ws);
            free(hc0);
            free(hc);
            free(hb);
        }
        th_release_compiled(set, TD_N_TILES);
    }
    printf("    %d runs: %d with a direct operand, %d with a packed one\n", runs, direct_runs,
           packed_runs);
    CHECK(direct_runs >= 200 && packed_runs >= 20);
    ms_close(g);
}
