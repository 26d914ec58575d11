/* test_dgemm_narrow.c: tests of dgemm's narrow DMMA tiles (BM or BN 32, templates/dgemm.c's
 * narrow lattice rows), its 8-byte copies (CP8) and the built-in choices of narrow sides over a
 * deep K: the rules that serve them, their NVRTC compiles (CPU); every narrow and CP8
 * configuration and the built-in choices of the deep narrow calls against a host reference,
 * deterministic runs bitwise equal (GPU). */
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
        if ((!bm32 && !bn32) || c[P_CP8])
            continue;           /* CP8's own rule (odd tight leading dimensions): dgemm_cp8_rules */
        CHECK_MSG(!(bm32 && bn32) && c[P_PATH] == 1, "%s", text);
        at_op oa = (at_op)c[P_OPA], ob = (at_op)c[P_OPB];
        narrow_rows += c[P_OPA] == 0 && c[P_OPB] == 0 && c[P_GROUP] == 8 && c[P_SPLITK] == 1;
        /* the narrow side at 128 and 129, the other side wide; K shallow: no split */
        tpl_problem edge = bm32 ? th_dgemm_problem(128, 4000, 64, oa, ob, 1)
                                : th_dgemm_problem(4000, 128, 64, oa, ob, 1);
        CHECK_MSG(f->applicable(c, &edge) == (c[P_SPLITK] == 1), "%s", text);
        edge.dims[bm32 ? 0 : 1] = 129;
        CHECK_MSG(!f->applicable(c, &edge), "%s", text);
        /* 22 x 1905 x 4955 (BM 32) and 1458 x 27 x 4100 (BN 32): few tiles, every split (32:
         * K at least 4 x 32 x 16) */
        tpl_problem deep = bm32 ? th_dgemm_problem(22, 1905, 4955, oa, ob, 1)
                                : th_dgemm_problem(1458, 27, 4100, oa, ob, 1);
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

/* CP8 (8-byte copies of A, B): its range, only with TMA 0, only on DMMA split rows, and offered
 * (applicable) exactly where it is the set of operands whose tight leading dimension is odd:
 * op(A) N stored m x k (ld k), T stored k x m (ld m); op(B) N stored k x n (ld n), T n x k (ld k),
 * worked out here per op pair. */
TEST(dgemm_cp8_rules)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    static const struct { const char *text; int reason; } cases[] = {
        /* -1: valid; else the index in tpl_dgemm_reasons (R_RANGE 0, R_CANON_FFMA 2, R_SPLIT 14,
         * R_CP8 15) */
        {"PATH=1,OPA=1,OPB=1,MMA=1688,BM=32,BN=128,BK=16,WARPS_M=2,WARPS_N=4,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=32,LDR=3,SA=2,CP8=3", -1},
        {"PATH=1,OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=1,SPLITK=1,CP8=1", -1},
        {"PATH=1,OPA=0,OPB=0,MMA=884,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=32,CP8=2", -1},
        {"PATH=1,OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=1,CP8=4", 0},
        {"PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=2,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=1,SA=2,TMA=1,CP8=1", 0},
        {"PATH=0,OPA=0,OPB=0,MMA=16816,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=4,STAGES=4,FRAG=2,"
         "TM=4,TN=4,GROUP=8,SPLITK=1,CP8=1", 2},
        {"PATH=1,OPA=0,OPB=0,MMA=1688,BM=128,BN=128,BK=32,WARPS_M=2,WARPS_N=4,STAGES=3,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=1,LDR=3,SA=2,CP8=2", 15},
        {"PATH=1,OPA=0,OPB=0,MMA=1684,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=64", 14},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int c[TPL_MAX_PARAMS];
        char why[512];
        CHECK_MSG(th_dgemm_parse(cases[i].text, c), "%s does not parse", cases[i].text);
        int ok = f->valid(c, &h100, why, sizeof why);
        CHECK_MSG(ok == (cases[i].reason < 0), "%s: %s", cases[i].text, ok ? "valid" : why);
        if (!ok && cases[i].reason >= 0)
            CHECK_MSG(strcmp(why, tpl_dgemm_reasons[cases[i].reason]) == 0, "%s: \"%s\"",
                      cases[i].text, why);
    }
    /* applicable: for each op pair and each parity of m, n, k, CP8 c is offered iff c is 0 or the
     * odd set; the 32 x 64 m16n8k4 row at 22 or 23 x 1905 or 1906 x 4955 or 4956 */
    int c[TPL_MAX_PARAMS];
    CHECK(th_dgemm_parse("PATH=1,OPA=0,OPB=0,MMA=1684,BM=32,BN=64,BK=16,WARPS_M=2,WARPS_N=2,"
                         "STAGES=4,FRAG=2,TM=8,TN=8,GROUP=8,SPLITK=8", c));
    int offered[4] = {0, 0, 0, 0};
    for (int ops = 0; ops < 4; ops++)
        for (int par = 0; par < 8; par++) {
            long long m = 22 + (par & 1), n = 1905 + ((par >> 1) & 1), k = 4955 + (par >> 2);
            int opa = ops & 1, opb = ops >> 1;
            long long lda = opa ? m : k, ldb = opb ? k : n;
            int odd = (lda % 2 ? 1 : 0) | (ldb % 2 ? 2 : 0);
            tpl_problem p = th_dgemm_problem(m, n, k, (at_op)opa, (at_op)opb, 1);
            c[P_OPA] = opa;
            c[P_OPB] = opb;
            for (int v = 0; v < 4; v++) {
                c[P_CP8] = v;
                int want = v == 0 || v == odd;
                CHECK_MSG(f->applicable(c, &p) == want, "ops %d %lldx%lldx%lld CP8 %d", ops, m, n,
                          k, v);
                offered[v] += f->applicable(c, &p);
            }
        }
    /* each nonzero value at some shape; an odd set in 6 of the 8 parities where the two tight
     * leading dimensions are two sizes (NN: k, n; TN: m, n; TT: m, k), in 4 where they are one
     * (NT: k, k) */
    CHECK(offered[0] == 32 && offered[1] > 0 && offered[2] > 0 && offered[3] > 0);
    CHECK_EQ(offered[1] + offered[2] + offered[3], 6 + 6 + 4 + 6);
}

/* The deep narrow calls (bench/shapes/fp64_deep_narrow.txt) in their row-major canonical form,
 * and the built-in choice of each on an H100 of 132 SMs, worked out by hand from dg_defaults and
 * the wave-fill rule (85 % of one wave of 132 blocks, each K slice at least 128 deep, split-K at
 * most 66 tiles and 4 K tiles of 16 a slice): tile, mma, split and CP8 (odd tight leading
 * dimensions). */
static const struct dn_deep_call {
    long long m, n, k;
    int opa, opb, bm, bn, mma, splitk, cp8;
} dn_deep_calls[] = {
    /* 22x1905x4955:col:TT: 15 tiles of 128 x 32, x 8 = 120 blocks */
    {1905, 22, 4955, 1, 1, 128, 32, 1688, 8, 3},
    /* 53x897x7968:TN: 2 x 8 tiles of 32 x 128, x 8 = 128 */
    {53, 897, 7968, 1, 0, 32, 128, 1688, 8, 3},
    /* 18x668x1937:NT: 6 tiles; 16 would leave K slices of 121 */
    {18, 668, 1937, 0, 1, 32, 128, 1688, 8, 3},
    /* 1458x103x4573: n > 64: the 64 x 64 split row, 23 x 2 tiles x 4 = 184 */
    {1458, 103, 4573, 0, 0, 64, 64, 1684, 4, 3},
    /* 42x3362x959:col:TN: 27 wide tiles (> 16): 64 x 64, 53 tiles x 4 */
    {3362, 42, 959, 0, 1, 64, 64, 1684, 4, 3},
    /* 44x723x1059:col:TN: 6 x 2 tiles of 128 x 32; 16 would leave slices of 66 */
    {723, 44, 1059, 0, 1, 128, 32, 1688, 8, 3},
    /* 964x54x2573:NT: 8 x 2 tiles x 8 = 128 */
    {964, 54, 2573, 0, 1, 128, 32, 1688, 8, 3},
    /* 26x967x12722:NT: even leading dimensions; 8 tiles x 16 = 128 */
    {26, 967, 12722, 0, 1, 32, 128, 1688, 16, 0},
    /* 25x616x15828: 5 tiles x 32 = 160 */
    {25, 616, 15828, 0, 0, 32, 128, 1688, 32, 0},
    /* 419x179x9820:col: 179 x 419 NN, B's ld 419 odd; 3 x 7 tiles x 8 = 168 */
    {179, 419, 9820, 0, 0, 64, 64, 1684, 8, 2},
    /* 94x226x1439:NT: m > 64: 2 x 4 tiles x 8; 16 would leave slices of 89 */
    {94, 226, 1439, 0, 1, 64, 64, 1684, 8, 3},
};
#define DN_DEEP_CALLS ((int)(sizeof dn_deep_calls / sizeof dn_deep_calls[0]))

/* The built-in choices (no database) of the deep narrow calls on an H100 (dn_deep_calls);
 * 4097^3 and 1023 x 1025 x 1027 keep the large rows (CP8 0). */
TEST(dgemm_deep_narrow_builtin_choices)
{
    const tpl_family *f = &tpl_dgemm;
    at_device_info h100 = th_dgemm_device(9, 0, 227 * 1024, 1024, 65536);
    for (int i = 0; i < DN_DEEP_CALLS; i++) {
        const struct dn_deep_call *w = &dn_deep_calls[i];
        tpl_problem p = th_dgemm_problem(w->m, w->n, w->k, (at_op)w->opa, (at_op)w->opb, 1);
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN] = "";
        CHECK(tpl_builtin_config(f, &h100, &p, 1, cfg, config, NULL));
        CHECK_MSG(cfg[P_BM] == w->bm && cfg[P_BN] == w->bn && cfg[P_MMA] == w->mma &&
                  cfg[P_SPLITK] == w->splitk && cfg[P_CP8] == w->cp8 && cfg[P_TMA] == 0 &&
                  cfg[P_OPA] == w->opa && cfg[P_OPB] == w->opb,
                  "%lldx%lldx%lld: %s", w->m, w->n, w->k, config);
    }
    /* the large rows keep 16-byte copies (TMA) at odd sizes */
    static const long long large[][3] = {{4097, 4097, 4097}, {1023, 1025, 1027}};
    for (int i = 0; i < 2; i++) {
        tpl_problem p = th_dgemm_problem(large[i][0], large[i][1], large[i][2], AT_OP_N, AT_OP_N,
                                         1);
        int cfg[TPL_MAX_PARAMS];
        char config[TPL_CONFIG_LEN] = "";
        CHECK(tpl_builtin_config(f, &h100, &p, 1, cfg, config, NULL));
        CHECK_MSG(cfg[P_CP8] == 0 && cfg[P_BM] >= 64 && cfg[P_BN] >= 64, "%s", config);
    }
}

/* bench/shapes/fp64_deep_narrow.txt holds exactly the calls of dn_deep_calls: each line an FP64
 * call whose row-major canonical form (a column-major call: m and n swapped, op(A) and op(B)
 * swapped) is the table's row of the same index. */
TEST(dgemm_deep_narrow_shapes_file_matches_the_table)
{
    FILE *fp = fopen("bench/shapes/fp64_deep_narrow.txt", "r");
    CHECK(fp != NULL);
    if (!fp)
        return;
    char line[256], err[256];
    int n = 0;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n#")] = '\0';
        if (!line[0])
            continue;
        tpl_problem p;
        CHECK_MSG(tpl_problem_parse(line, &p, err, sizeof err) == AT_OK, "%s: %s", line, err);
        CHECK_MSG(n < DN_DEEP_CALLS, "%s: more lines than the table", line);
        if (th_failed())
            break;
        const struct dn_deep_call *w = &dn_deep_calls[n++];
        int col = p.order == AT_COL_MAJOR;
        long long m = col ? p.dims[1] : p.dims[0], nn = col ? p.dims[0] : p.dims[1];
        int opa = (col ? p.op_b : p.op_a) == AT_OP_T, opb = (col ? p.op_a : p.op_b) == AT_OP_T;
        CHECK_MSG(p.dtype == AT_R_64F && p.n_dims == 3 && tpl_problem_batch(&p) == 1 &&
                  m == w->m && nn == w->n && p.dims[2] == w->k && opa == w->opa &&
                  opb == w->opb, "%s: not row %d of the table", line, n - 1);
    }
    fclose(fp);
    CHECK_EQ(n, DN_DEEP_CALLS);
}

/* NVRTC compiles CP8 on each copy path and operand layout (LDR 2 plans with the no-bounds inner
 * copies, LDR 3 running pointers, m8n8k4 for sm_80) and SPLITK 32. */
TEST(dgemm_nvrtc_compiles_cp8_and_split32)
{
    static const struct { const char *config, *arch; } cases[] = {
        {"PATH=1,OPA=0,OPB=0,MMA=1684,BM=32,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=32,LDR=2,CP8=3", "sm_90"},
        {"PATH=1,OPA=1,OPB=1,MMA=1684,BM=64,BN=32,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=4,LDR=2,MINB=3,CP8=1", "sm_90"},
        {"PATH=1,OPA=1,OPB=0,MMA=1688,BM=32,BN=128,BK=16,WARPS_M=2,WARPS_N=4,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=8,LDR=3,SA=2,CP8=3", "sm_90"},
        {"PATH=1,OPA=0,OPB=1,MMA=1688,BM=128,BN=32,BK=16,WARPS_M=4,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=1,LDR=3,SA=2,CP8=2", "sm_90"},
        {"PATH=1,OPA=1,OPB=0,MMA=884,BM=64,BN=64,BK=16,WARPS_M=2,WARPS_N=2,STAGES=4,FRAG=2,"
         "TM=8,TN=8,GROUP=8,SPLITK=16,CP8=3", "sm_80"},
    };
    th_compiled set[5];
    memset(set, 0, sizeof set);
    for (int i = 0; i < 5; i++) {
        CHECK(th_dgemm_parse(cases[i].config, set[i].cfg));
        char why[512];
        CHECK_MSG(tpl_dgemm.valid(set[i].cfg, NULL, why, sizeof why), "%s: %s", cases[i].config,
                  why);
        snprintf(set[i].text, sizeof set[i].text, "%s", cases[i].config);
        set[i].fam = &tpl_dgemm;
        set[i].arch = cases[i].arch;
    }
    CHECK(th_compile_all(set, 5));
    for (int i = 0; i < 5; i++)
        CHECK_MSG(set[i].cubin && set[i].size > 0, "%s", set[i].text);
    th_release_compiled(set, 5);
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

/* The logical op(A) (m x k), op(B) (held as its transpose, n x k) and their product of a seeded
 * problem, on the host. */
typedef struct dn_product {
    int m, n, k;
    double *Al, *Bt, *P;
} dn_product;

static int dn_product_make(dn_product *d, int m, int n, int k, unsigned long long seed)
{
    d->m = m;
    d->n = n;
    d->k = k;
    d->Al = malloc((size_t)m * k * 8);
    d->Bt = malloc((size_t)n * k * 8);
    d->P = malloc((size_t)m * n * 8);
    if (!d->Al || !d->Bt || !d->P)
        return 0;
    for (long long i = 0; i < m; i++)
        for (long long p = 0; p < k; p++)
            d->Al[i * k + p] = dn_val(seed, 0, i, p);
    for (long long j = 0; j < n; j++)
        for (long long p = 0; p < k; p++)
            d->Bt[j * k + p] = dn_val(seed, 1, p, j);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            d->P[(size_t)i * n + j] = th_dgemm_host_dot(d->Al, k, 0, d->Bt, k, 1, i, j, k);
    return 1;
}

static void dn_product_free(dn_product *d)
{
    free(d->Al);
    free(d->Bt);
    free(d->P);
}

/* How dn_check runs a set: which configurations take a problem, and what is checked. */
typedef struct dn_mode {
    int layouts;            /* 2: odd padded leading dimensions and offset bases, then even
                               padded ones, aligned; 3: also the tight ones (ld = the stored
                               row: odd where the size is, as bench_calls and most callers) */
    int any_cp8;            /* 1: a configuration runs where it would with CP8 0 (8-byte copies
                               are right at any leading dimension; applicable() offers them only
                               at odd tight ones) */
    int twice_bitwise;      /* 1: every run twice, the results bitwise equal (deterministic) */
} dn_mode;

/* Runs each configuration of set (op pairs as its OPA, OPB) that takes the problem on d's product
 * in every op pair and layout, alpha -0.75 with beta 0.5 and alpha 1.25 with beta 0 over NaN,
 * against the host: operand pads hold NaN (a read past K poisons every result), elements of C
 * outside the product must stay unchanged. ran[i] counts configuration i's runs. */
static void dn_check(ms_gpu *g, th_compiled *set, int n, const dn_product *d, dn_mode mode,
                     int *ran, int *runs, double *worst)
{
    const tpl_family *f = &tpl_dgemm;
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    const at_device_info *dev = ms_device(g);
    const int m = d->m, nn = d->n, k = d->k;
    char err[1024];
    /* layout 0: odd leading dimensions, A, B, C offset by 1, 3, 1 elements; layout 1: even
     * ones, aligned bases (each a pad of 1 or 2 elements past the minimum); layout 2: tight */
    static const int offsets[3][3] = {{1, 3, 1}, {0, 0, 0}, {0, 0, 0}};
    static const double ab[2][2] = {{-0.75, 0.5}, {1.25, 0.0}};
    for (int ops = 0; ops < 4 && !th_failed(); ops++)
        for (int l = 0; l < mode.layouts && !th_failed(); l++) {
            const int opa = ops & 1, opb = ops >> 1;
            const long long ar = opa ? k : m, ac = opa ? m : k, br = opb ? nn : k,
                            bc = opb ? k : nn;
            const long long lda = l == 2 ? ac : dn_padded_ld(ac, l == 0),
                            ldb = l == 2 ? bc : dn_padded_ld(bc, l == 0),
                            ldc = l == 2 ? nn : dn_padded_ld(nn, l == 0);
            const int oa = offsets[l][0], ob = offsets[l][1], oc = offsets[l][2];
            const size_t na = oa + (size_t)(ar * lda), nb = ob + (size_t)(br * ldb),
                         nc = oc + (size_t)((long long)m * ldc);
            double *hA = malloc(na * 8), *hB = malloc(nb * 8), *hC0 = malloc(nc * 8),
                   *hC = malloc(nc * 8), *hN = malloc(nc * 8), *hC2 = malloc(nc * 8);
            CHECK(hA && hB && hC0 && hC && hN && hC2);
            if (th_failed())
                return;
            /* stored operands, NaN in the offsets and pads */
            for (size_t x = 0; x < na; x++)
                hA[x] = NAN;
            for (size_t x = 0; x < nb; x++)
                hB[x] = NAN;
            for (long long r = 0; r < ar; r++)
                for (long long c = 0; c < ac; c++)
                    hA[oa + r * lda + c] = opa ? d->Al[c * k + r] : d->Al[r * k + c];
            for (long long r = 0; r < br; r++)
                for (long long c = 0; c < bc; c++)
                    hB[ob + r * ldb + c] = opb ? d->Bt[r * k + c] : d->Bt[c * k + r];
            /* C0, and its copy with NaN in the product's elements (beta = 0) */
            for (size_t x = 0; x < nc; x++)
                hC0[x] = hN[x] = dn_val(7, 2, (long long)x, l);
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
                    int plain[TPL_MAX_PARAMS];
                    memcpy(plain, set[i].cfg, sizeof plain);
                    if (mode.any_cp8)
                        plain[P_CP8] = 0;
                    if (set[i].cfg[P_OPA] != opa || set[i].cfg[P_OPB] != opb ||
                        !f->applicable(plain, &p))
                        continue;
                    for (int rep = 0; rep < 1 + mode.twice_bitwise && !th_failed(); rep++) {
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
                        CHECK(cu->MemcpyDtoH(rep ? hC2 : hC, C, nc * 8) == CUDA_SUCCESS);
                    }
                    if (mode.twice_bitwise)
                        CHECK_MSG(memcmp(hC, hC2, nc * 8) == 0, "%s %dx%dx%d layout %d: two runs "
                                  "differ", set[i].text, m, nn, k, l);
                    double num = 0, den = 0;
                    for (size_t x = 0; x < nc; x++) {
                        long long e = (long long)x - oc, r = e / ldc, c = e % ldc;
                        if (e < 0 || r >= m || c >= nn) {
                            CHECK_MSG(memcmp(&hC[x], &hC0[x], 8) == 0, "%s %dx%dx%d: element "
                                      "%zu outside C changed", set[i].text, m, nn, k, x);
                            continue;
                        }
                        double want = alpha * d->P[r * nn + c] + beta * hC0[x];
                        num += (hC[x] - want) * (hC[x] - want);
                        den += want * want;
                    }
                    double e = isfinite(num) ? sqrt(num / (den > 0 ? den : 1)) : INFINITY;
                    CHECK_MSG(e <= f->tolerance(&p), "%s %dx%dx%d layout %d alpha %g beta %g: "
                              "error %g (tolerance %g)", set[i].text, m, nn, k, l, alpha, beta, e,
                              f->tolerance(&p));
                    *worst = e / f->tolerance(&p) > *worst ? e / f->tolerance(&p) : *worst;
                    ran[i]++;
                    (*runs)++;
                }
            }
            tpl_workset_free(cu, &ws);
            free(hA);
            free(hB);
            free(hC0);
            free(hC);
            free(hN);
            free(hC2);
        }
}

/* The GROUP 8, CP8 0 configurations of the narrow tiles (BM or BN 32) valid on dev, in *n. */
static th_compiled *dn_narrow_set(const at_device_info *dev, int *n)
{
    const tpl_family *f = &tpl_dgemm;
    long long *idx = NULL;
    long long nv = tpl_valid_configs_cached(f, dev, &idx);
    th_compiled *set = calloc(nv > 0 ? (size_t)nv : 1, sizeof *set);
    *n = 0;
    for (long long x = 0; set && x < nv; x++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[x], c);
        if ((c[P_BM] != 32 && c[P_BN] != 32) || c[P_GROUP] != 8 || c[P_CP8] != 0)
            continue;
        th_compiled *s = &set[(*n)++];
        memcpy(s->cfg, c, sizeof s->cfg);
        tpl_config_format(f, c, s->text, sizeof s->text);
        s->fam = f;
        s->arch = dev->arch;
    }
    free(idx);
    return set;
}

/* Every narrow configuration (BM or BN 32, every split, GROUP 8, CP8 0) against a host reference
 * at the narrow shapes they serve (m = 22 and 53 over a deep K for BM 32; n = 27 and 100 for BN
 * 32, inner blocks and full K tiles in the last), each op pair, two layouts (odd leading
 * dimensions and bases offset by 1-3 elements: packed operands and scalar stores; even ones,
 * aligned: the kernel reads in place and stores double2), alpha -0.75 with beta 0.5 and alpha
 * 1.25 with beta 0 over NaN (dn_check). Each configuration must have run at least once. */
GPU_TEST(dgemm_gpu_narrow_tiles_against_the_host)
{
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    int n = 0;
    th_compiled *set = dn_narrow_set(dev, &n);
    CHECK(set != NULL);
    if (n == 0) {
        free(set);
        ms_close(g);
        th_skip("no narrow DMMA tile on %s (sm_90+ only)", dev->arch);
        return;
    }
    /* 10 rows x 4 op pairs x SPLITK 1, 2, 4, 8, 16, 32 */
    CHECK_EQ(n, 240);
    if (!th_compile_all(set, n)) {
        th_free_compiled(set, n);
        ms_close(g);
        return;
    }
    int *ran = calloc((size_t)n, sizeof *ran);
    CHECK(ran != NULL);
    static const int shapes[][3] = {{22, 1905, 4955}, {53, 897, 777}, {1458, 27, 1300},
                                    {1000, 100, 2048}, {40, 300, 4100}};
    int runs = 0;
    double worst = 0;
    const dn_mode mode = {2, 0, 0};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0] && !th_failed(); sh++) {
        dn_product d;
        CHECK(dn_product_make(&d, shapes[sh][0], shapes[sh][1], shapes[sh][2], 41 + sh));
        if (!th_failed())
            dn_check(g, set, n, &d, mode, ran, &runs, &worst);
        dn_product_free(&d);
    }
    for (int i = 0; i < n && !th_failed(); i++)
        CHECK_MSG(ran[i] > 0, "%s never ran (applicable to none of the shapes)", set[i].text);
    printf("    %d narrow configurations, %d runs against the host, worst %.3f of the "
           "tolerance\n", n, runs, worst);
    free(ran);
    th_free_compiled(set, n);
    ms_close(g);
}

/* Every DMMA split row (the narrow tiles, the 64 x 64 m16n8k4 and m8n8k4 rows) with each CP8
 * value (8-byte copies of A, B or both; SPLITK 1, 4, 32 with CP8 1, 2, 3), GROUP 8, each op
 * pair, against the host at an m-narrow and an n-narrow shape with odd sizes and partial K
 * tiles, in three layouts: odd padded leading dimensions and offset bases, even ones, and the
 * tight ones (dn_check; CP8 runs wherever the row would with 16-byte copies). */
GPU_TEST(dgemm_gpu_cp8_copies_against_the_host)
{
    const tpl_family *f = &tpl_dgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    long long *idx = NULL;
    long long nv = tpl_valid_configs_cached(f, dev, &idx);
    th_compiled *set = calloc(nv > 0 ? (size_t)nv : 1, sizeof *set);
    int n = 0;
    for (long long x = 0; set && x < nv; x++) {
        int c[TPL_MAX_PARAMS];
        tpl_config_from_index(f, idx[x], c);
        static const int split_of[4] = {0, 1, 4, 32};
        if (c[P_CP8] == 0 || c[P_GROUP] != 8 || c[P_SPLITK] != split_of[c[P_CP8]])
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
        th_skip("no DMMA split row on %s (sm_80+ only)", dev->arch);
        return;
    }
    /* sm_90: 12 split rows (10 narrow, 64 x 64 m16n8k4 and m8n8k4) x 4 op pairs x 3 values */
    CHECK(n == 144 || (dev->cc_major < 9 && n == 12));
    if (!th_compile_all(set, n)) {
        th_free_compiled(set, n);
        ms_close(g);
        return;
    }
    int *ran = calloc((size_t)n, sizeof *ran);
    CHECK(ran != NULL);
    static const int shapes[][3] = {{53, 897, 2049}, {1001, 54, 2573}};
    int runs = 0;
    double worst = 0;
    const dn_mode mode = {3, 1, 0};
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0] && !th_failed(); sh++) {
        dn_product d;
        CHECK(dn_product_make(&d, shapes[sh][0], shapes[sh][1], shapes[sh][2], 61 + sh));
        if (!th_failed())
            dn_check(g, set, n, &d, mode, ran, &runs, &worst);
        dn_product_free(&d);
    }
    for (int i = 0; i < n && !th_failed(); i++)
        CHECK_MSG(ran[i] > 0, "%s never ran (applicable to none of the shapes)", set[i].text);
    printf("    %d CP8 configurations, %d runs against the host, worst %.3f of the tolerance\n",
           n, runs, worst);
    free(ran);
    th_free_compiled(set, n);
    ms_close(g);
}

/* The deep narrow calls (the row-major forms of the lowest FP64 random calls, 2026-11-29) and
 * odd sizes, in every op pair: the built-in choice of each (deterministic, on this device: the
 * narrow tiles, the 64 x 64 split row, CP8 at odd tight leading dimensions, the wave-fill split)
 * against the host in the three layouts of dn_check (the tight one as bench_calls calls),
 * alpha -0.75 with beta 0.5 and beta 0 over NaN, every run twice and bitwise equal. */
GPU_TEST(dgemm_gpu_deep_narrow_calls_against_the_host)
{
    const tpl_family *f = &tpl_dgemm;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    /* the calls of dn_deep_calls, then odd sizes: m and n of 1-3 and a K tail */
    static const int odd[][3] = {{3, 777, 3001}, {999, 1, 2047}, {61, 63, 4099}};
    enum { DN_SHAPES = DN_DEEP_CALLS + (int)(sizeof odd / sizeof odd[0]) };
    int shapes[DN_SHAPES][3];
    for (int i = 0; i < DN_SHAPES; i++)
        for (int j = 0; j < 3; j++)
            shapes[i][j] = i < DN_DEEP_CALLS
                               ? (int)(j == 0 ? dn_deep_calls[i].m
                                              : j == 1 ? dn_deep_calls[i].n : dn_deep_calls[i].k)
                               : odd[i - DN_DEEP_CALLS][j];
    th_compiled *set = calloc(DN_SHAPES * 4, sizeof *set);
    int n = 0;
    for (int sh = 0; set && sh < DN_SHAPES; sh++)
        for (int ops = 0; ops < 4; ops++) {
            tpl_problem p = th_dgemm_problem(shapes[sh][0], shapes[sh][1], shapes[sh][2],
                                             (at_op)(ops & 1), (at_op)(ops >> 1), 1);
            th_compiled *s = &set[n];
            CHECK(tpl_builtin_config(f, dev, &p, 1, s->cfg, s->text, NULL));
            int repeat = 0;
            for (int i = 0; i < n && !repeat; i++)
                repeat = strcmp(set[i].text, s->text) == 0;
            if (repeat)
                continue;
            s->fam = f;
            s->arch = dev->arch;
            n++;
        }
    CHECK(set != NULL && n > 0);
    if (th_failed() || !th_compile_all(set, n)) {
        th_free_compiled(set, n);
        ms_close(g);
        return;
    }
    int *ran = calloc((size_t)n, sizeof *ran), runs = 0;
    CHECK(ran != NULL);
    double worst = 0;
    const dn_mode mode = {3, 1, 1};
    for (int sh = 0; sh < DN_SHAPES && !th_failed(); sh++) {
        dn_product d;
        CHECK(dn_product_make(&d, shapes[sh][0], shapes[sh][1], shapes[sh][2], 81 + sh));
        /* only the choices of this shape: its four problems' built-in configurations */
        th_compiled mine[4];
        int nm = 0, idx[4];
        for (int ops = 0; ops < 4 && !th_failed(); ops++) {
            tpl_problem p = th_dgemm_problem(d.m, d.n, d.k, (at_op)(ops & 1), (at_op)(ops >> 1),
                                             1);
            char text[TPL_CONFIG_LEN];
            int cfg[TPL_MAX_PARAMS];
            CHECK(tpl_builtin_config(f, dev, &p, 1, cfg, text, NULL));
            for (int i = 0; i < n; i++)
                if (strcmp(set[i].text, text) == 0) {
                    mine[nm] = set[i];
                    idx[nm++] = i;
                    break;
                }
        }
        CHECK_EQ(nm, 4);
        int got[4] = {0, 0, 0, 0};
        if (!th_failed())
            dn_check(g, mine, nm, &d, mode, got, &runs, &worst);
        for (int i = 0; i < nm; i++) {
            CHECK_MSG(got[i] > 0, "%s never ran at %dx%dx%d", mine[i].text, d.m, d.n, d.k);
            ran[idx[i]] += got[i];
        }
        dn_product_free(&d);
    }
    printf("    %d built-in choices of %d deep narrow shapes x 4 op pairs, %d runs (each twice, "
           "bitwise equal) against the host, worst %.3f of the tolerance\n", n, DN_SHAPES, runs,
           worst);
    free(ran);
    th_free_compiled(set, n);
    ms_close(g);
}
