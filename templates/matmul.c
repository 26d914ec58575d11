/* matmul.c: descriptor of the matmul family (templates/matmul.cu): parameter space,
 * legality rules, launch geometry, inputs and float64 verification for SGEMM (row-major,
 * op N or T on each operand, strided batches). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tpl.h"

#include "matmul.h"

#define MM_GROUP_M 8            /* GROUP_M of matmul.cu (block order swizzle) */
#define MM_MAX_WORKSPACE (1LL << 30)    /* split-K partials, bytes */

void mm_streamk_plan(long long tiles, long long ksteps, int max_blocks, mm_streamk_schedule *s)
{
    memset(s, 0, sizeof *s);
    long long p = max_blocks < 1 ? 1 : max_blocks;
    long long grid = tiles, dp = tiles, sk = 0;
    if (tiles >= 1 && ksteps >= 1) {
        long long full = tiles / p, rem = tiles % p;
        if (rem == 0) {
            grid = p;
        } else if (full >= 1) {
            grid = p;
            sk = rem + p;
            dp = tiles - sk;
        } else {
            sk = tiles;
            dp = 0;
            grid = tiles * ksteps < p ? tiles * ksteps : p;
        }
        if (sk * ksteps > 0x7fffffffLL) {   /* 32-bit iteration counters in the kernel */
            grid = tiles;
            dp = tiles;
            sk = 0;
        }
    }
    s->grid = (int)grid;
    s->dp_tiles = (int)dp;
    s->sk_tiles = (int)sk;
    if (sk > 0) {
        s->q = (int)(sk * ksteps / grid);
        s->r = (int)(sk * ksteps % grid);
    }
}

/* Shape facts of an ALGO 2 configuration, derived as in matmul.cu. */
typedef struct mm_geom {
    int nthreads, wmiter, wsubm, wsubn, tpm, tpn, acc, regs, smem;
} mm_geom;

/* A rule of mm_rules applies once every parameter it reads is fixed: the first nf
 * of a prefix (valid_prefix), all P_COUNT of a configuration. A rule that fails on
 * a prefix fails on each of its completions, so valid() rejects them all. */
#define MM_FIXED(p) ((p) < nf)

/* Fills g from the first nf parameters of c (nf > P_WNITER: BM..WNITER and BK
 * fixed; regs once FRAG is fixed, smem once PAD is, else 0); 0 with the reason if
 * the warp layout does not divide exactly or a fixed value is out of range. */
static int mm_geometry_prefix(const int *c, int nf, mm_geom *g, char *why, size_t len)
{
    int bm = c[P_BM], bn = c[P_BN], wm = c[P_WM], wn = c[P_WN];
    int tm = c[P_TM], tn = c[P_TN], wni = c[P_WNITER];
    if (bm <= 0 || bn <= 0 || wm <= 0 || wn <= 0 || tm <= 0 || tn <= 0 || wni <= 0 ||
        c[P_BK] <= 0 || (MM_FIXED(P_STAGES) && c[P_STAGES] <= 0)) {
        tpl_reason(why, len, "tile sizes must be positive");
        return 0;
    }
    if ((MM_FIXED(P_FRAG) && (c[P_FRAG] < 0 || c[P_FRAG] > 1)) ||
        (MM_FIXED(P_SK) && (c[P_SK] < 0 || c[P_SK] > 1)) ||
        (MM_FIXED(P_FFMA) && (c[P_FFMA] < 0 || c[P_FFMA] > 2))) {
        tpl_reason(why, len, "FRAG and SK must be 0 or 1, FFMA 0..2");
        return 0;
    }
    if (bm % wm || bn % wn) {
        tpl_reason(why, len, "warp tile %dx%d does not divide block tile %dx%d", wm, wn, bm, bn);
        return 0;
    }
    if (tm % 4 || tn % 4) {
        tpl_reason(why, len, "TM and TN must be multiples of 4 (16-byte fragment loads)");
        return 0;
    }
    if ((wm * wn) % (32 * tm * tn * wni)) {
        tpl_reason(why, len, "warp tile %dx%d is not a whole number of %d-lane steps of %dx%d x WNITER=%d",
                   wm, wn, 32, tm, tn, wni);
        return 0;
    }
    g->wmiter = (wm * wn) / (32 * tm * tn * wni);
    if (wm % g->wmiter || wn % wni) {
        tpl_reason(why, len, "warp iterations %dx%d do not divide warp tile %dx%d",
                   g->wmiter, wni, wm, wn);
        return 0;
    }
    g->wsubm = wm / g->wmiter;
    g->wsubn = wn / wni;
    if (g->wsubm % tm || g->wsubn % tn) {
        tpl_reason(why, len, "warp sub-tile %dx%d is not a multiple of the thread tile %dx%d",
                   g->wsubm, g->wsubn, tm, tn);
        return 0;
    }
    g->tpm = g->wsubm / tm;
    g->tpn = g->wsubn / tn;
    if (g->tpm * g->tpn != 32) {
        tpl_reason(why, len, "lane layout %dx%d is not 32 lanes", g->tpm, g->tpn);
        return 0;
    }
    g->nthreads = 32 * (bm / wm) * (bn / wn);
    g->acc = wm * wn / 32;
    /* Accumulators + fragments (twice with FRAG=1) + ~48 for addresses, indices
     * and copies: matches ptxas -v on sm_90 within a few registers for the
     * 64-accumulator tiles. */
    g->regs = MM_FIXED(P_FRAG) ? g->acc + (1 + c[P_FRAG]) * (g->wmiter * tm + wni * tn) + 48 : 0;
    g->smem = MM_FIXED(P_PAD) ? c[P_STAGES] * c[P_BK] * (bm + bn + 2 * c[P_PAD]) * 4 : 0;
    return 1;
}

/* Fills g from a whole configuration; 0 with the reason as mm_geometry_prefix. */
static int mm_geometry(const int *c, mm_geom *g, char *why, size_t len)
{
    return mm_geometry_prefix(c, P_COUNT, g, why, len);
}

/* Worst bank-conflict degree of one LDS.128 fragment read: lanes of a quarter
 * warp read float4s at (lane index along the dimension) * t floats. */
static int mm_lds_conflict(int tpn, int t, int along_n)
{
    int worst = 1;
    for (int phase = 0; phase < 4; phase++) {
        int addr[8], n_addr = 0;
        for (int lane = phase * 8; lane < phase * 8 + 8; lane++) {
            int a = (along_n ? lane % tpn : lane / tpn) * t;
            int seen = 0;
            for (int i = 0; i < n_addr; i++)
                seen |= addr[i] == a;
            if (!seen)
                addr[n_addr++] = a;
        }
        for (int bank = 0; bank < 32; bank++) {
            int hits = 0;
            for (int i = 0; i < n_addr; i++)
                for (int w = 0; w < 4; w++)
                    hits += (addr[i] + w) % 32 == bank;
            if (hits > worst)
                worst = hits;
        }
    }
    return worst;
}

/* Worst bank-conflict degree of the transposed 4-byte stores of A into
 * As[k][m] (row length bm + pad) by one warp: lane -> (m = lane / bk, k = lane % bk). */
static int mm_store_conflict(int bm, int bk, int pad)
{
    int per_bank[32] = {0};
    int worst = 0;
    for (int lane = 0; lane < 32; lane++) {
        int a = (lane % bk) * (bm + pad) + lane / bk;
        if (++per_bank[a % 32] > worst)
            worst = per_bank[a % 32];
    }
    return worst;
}

/* Rejects cfg with the reason if parameter p is not at its canonical (first) value. */
static int mm_canonical(const tpl_family *f, const int *cfg, int p, const char *algo,
                        char *why, size_t len)
{
    if (cfg[p] != f->params[p].values[0]) {
        tpl_reason(why, len, "%s is unused by %s: only %s=%d (canonical) is a distinct config",
                   f->params[p].name, algo, f->params[p].name, f->params[p].values[0]);
        return 0;
    }
    return 1;
}

extern const tpl_family tpl_matmul;

/* The rules of valid() that read only the first nf parameters of cfg (all
 * P_COUNT: valid() itself; fewer: valid_prefix, rules on later parameters
 * skipped); 0 with the reason of the first that fails, as valid(). */
static int mm_rules(const int *cfg, int nf, const at_device_info *dev, char *why, size_t len)
{
    const tpl_family *f = &tpl_matmul;
    int smem_limit = dev ? dev->smem_per_block_optin : 227 * 1024;
    int regs_limit = dev ? dev->regs_per_block : 65536;
    int max_threads = dev ? dev->max_threads_per_block : 1024;
    int algo = cfg[P_ALGO];
    if (why && len)
        why[0] = '\0';
    if (!MM_FIXED(P_ALGO))
        return 1;

    if (algo == 0 || algo == 1) {
        const char *name = algo == 0 ? "ALGO=0 (seed naive)" : "ALGO=1 (seed tiled)";
        for (int p = P_BM; p < P_COUNT && MM_FIXED(p); p++)
            if (!mm_canonical(f, cfg, p, name, why, len))
                return 0;
        if (algo == 0)
            return (!MM_FIXED(P_TILE) || mm_canonical(f, cfg, P_TILE, name, why, len)) &&
                   (!MM_FIXED(P_UNROLL) || mm_canonical(f, cfg, P_UNROLL, name, why, len));
        if (!MM_FIXED(P_UNROLL))
            return 1;
        int t = cfg[P_TILE], u = cfg[P_UNROLL];
        if (t <= 0 || u <= 0 || t % u) {
            tpl_reason(why, len, "UNROLL=%d must divide TILE=%d", u, t);
            return 0;
        }
        if (t * t > max_threads) {
            tpl_reason(why, len, "TILE=%d needs %d threads per block (limit %d)", t, t * t, max_threads);
            return 0;
        }
        if (2 * t * t * 4 > 48 * 1024) {
            tpl_reason(why, len, "TILE=%d needs more than 48 KiB of static shared memory", t);
            return 0;
        }
        return 1;
    }
    if (algo != 2) {
        tpl_reason(why, len, "ALGO=%d unknown (0 naive, 1 tiled, 2 register-tiled)", algo);
        return 0;
    }
    if ((MM_FIXED(P_TILE) && !mm_canonical(f, cfg, P_TILE, "ALGO=2", why, len)) ||
        (MM_FIXED(P_UNROLL) && !mm_canonical(f, cfg, P_UNROLL, "ALGO=2", why, len)))
        return 0;
    if (!MM_FIXED(P_WNITER))
        return 1;       /* every rule below reads the tile geometry */

    mm_geom g;
    if (!mm_geometry_prefix(cfg, nf, &g, why, len))
        return 0;
    int bm = cfg[P_BM], bn = cfg[P_BN], bk = cfg[P_BK], st = cfg[P_STAGES];
    int vec = cfg[P_VEC], pad = cfg[P_PAD], sk = cfg[P_SPLITK];
    if (MM_FIXED(P_VEC) && vec != 1 && vec != 4) {
        tpl_reason(why, len, "VEC=%d must be 1 or 4", vec);
        return 0;
    }
    if (MM_FIXED(P_PAD) && (pad < 0 || pad % 4)) {
        tpl_reason(why, len, "PAD=%d must be a multiple of 4 (keeps 16-byte fragment reads aligned)", pad);
        return 0;
    }
    if ((MM_FIXED(P_STAGES) && (st < 1 || st > 4)) || (MM_FIXED(P_SPLITK) && (sk < 1 || sk > 16))) {
        tpl_reason(why, len, "STAGES must be 1..4 and SPLITK 1..16");
        return 0;
    }
    /* Hardware limits. */
    if (g.nthreads > max_threads) {
        tpl_reason(why, len, "%d threads per block (limit %d)", g.nthreads, max_threads);
        return 0;
    }
    if (MM_FIXED(P_PAD) && g.smem > smem_limit) {
        tpl_reason(why, len, "%d bytes of shared memory (limit %d)", g.smem, smem_limit);
        return 0;
    }
    if (MM_FIXED(P_FRAG) && g.regs > 255) {
        tpl_reason(why, len, "about %d registers per thread (limit 255): %d accumulators",
                   g.regs, g.acc);
        return 0;
    }
    if (MM_FIXED(P_FRAG) && g.regs * g.nthreads > regs_limit) {
        tpl_reason(why, len, "about %d registers x %d threads exceeds the %d registers of a block",
                   g.regs, g.nthreads, regs_limit);
        return 0;
    }
    /* ptxas -v, sm_90: 128 accumulators spill at BK >= 16 with FRAG=0; FRAG=1's loop
     * (part 3, interior copy path) holds them at BK=16 in 232-255 registers, no spills. */
    if (g.acc > 128 || (MM_FIXED(P_FRAG) && g.acc == 128 && bk > (cfg[P_FRAG] == 1 ? 16 : 8))) {
        tpl_reason(why, len, "%d accumulators with BK=%d spill or exhaust registers (ptxas: 128 needs "
                   "BK=8, or BK<=16 with FRAG=1)", g.acc, bk);
        return 0;
    }
    /* Efficiency rules (documented in docs/notes/matmul.md). */
    if (g.wmiter * cfg[P_TM] < 8 || cfg[P_WNITER] * cfg[P_TN] < 8) {
        tpl_reason(why, len, "thread tile %dx%d below 8x8: too few FFMA per shared-memory load",
                   g.wmiter * cfg[P_TM], cfg[P_WNITER] * cfg[P_TN]);
        return 0;
    }
    if (g.nthreads < 128 || g.nthreads > 256) {
        tpl_reason(why, len, "%d threads: 4 to 8 warps per block keep registers and latency hiding balanced",
                   g.nthreads);
        return 0;
    }
    int opa = cfg[P_OPA], opb = cfg[P_OPB];
    if ((MM_FIXED(P_OPA) && (opa < 0 || opa > 1)) || (MM_FIXED(P_OPB) && (opb < 0 || opb > 1))) {
        tpl_reason(why, len, "OPA and OPB must be 0 (N) or 1 (T)");
        return 0;
    }
    if (MM_FIXED(P_BATCH) &&
        (cfg[P_BATCH] < 0 || cfg[P_BATCH] > 1 || (cfg[P_BATCH] && (sk > 1 || cfg[P_SK])))) {
        tpl_reason(why, len, "BATCH=%d: 0 (one product) or 1 (a strided batch, only with SPLITK=1, SK=0)",
                   cfg[P_BATCH]);
        return 0;
    }
    /* A of op N and B of op T copy 4-byte elements along K; A of op T and B of
     * op N float4s along M and N */
    int a_split = !MM_FIXED(P_OPA) ? 1
                : opa ? (bk * bm / 4) % g.nthreads == 0 && g.nthreads % (bm / 4) == 0
                      : (bm * bk) % g.nthreads == 0;
    int b_split = !MM_FIXED(P_OPB) ? 1
                : opb ? (bn * bk) % g.nthreads == 0 && g.nthreads % bk == 0
                      : (bk * bn / 4) % g.nthreads == 0;
    if (!a_split || !b_split) {
        tpl_reason(why, len, "tile copies (%dx%d of A, %dx%d of B, OPA=%d OPB=%d) do not split "
                   "evenly over %d threads", bm, bk, bk, bn, opa, opb, g.nthreads);
        return 0;
    }
    if (MM_FIXED(P_OPB) && (opa || opb) && vec != 4) {
        tpl_reason(why, len, "VEC=1 only with OPA=OPB=0 (the 4-byte fallback variants are kept "
                   "for NN; a transposed product takes the 4-byte path itself when unaligned)");
        return 0;
    }
    if (bm > 2 * bn || bn > 2 * bm || cfg[P_WM] > 2 * cfg[P_WN] || cfg[P_WN] > 2 * cfg[P_WM]) {
        tpl_reason(why, len, "tile aspect beyond 2:1 (%dx%d block, %dx%d warp) moves more data per FLOP",
                   bm, bn, cfg[P_WM], cfg[P_WN]);
        return 0;
    }
    if (MM_FIXED(P_STAGES) && (st * bk < 16 || st * bk > 64)) {
        tpl_reason(why, len, "STAGES*BK=%d: the pipeline should hold 16..64 of K", st * bk);
        return 0;
    }
    if (mm_lds_conflict(g.tpn, cfg[P_TN], 1) > 1 || mm_lds_conflict(g.tpn, cfg[P_TM], 0) > 1) {
        tpl_reason(why, len, "lane layout %dx%d with thread tile %dx%d gives bank conflicts on fragment loads",
                   g.tpm, g.tpn, cfg[P_TM], cfg[P_TN]);
        return 0;
    }
    /* transposed 4-byte stores into shared memory: A of op N (As[k][m]), B of op T
     * (Bs[k][n]); with neither there is nothing for PAD to fix */
    int c_pad = 1, c_none = 1;
    if (MM_FIXED(P_OPB) && !opa) {
        c_pad = mm_store_conflict(bm, bk, 4);
        c_none = mm_store_conflict(bm, bk, 0);
    }
    if (MM_FIXED(P_OPB) && opb) {
        int p4 = mm_store_conflict(bn, bk, 4), p0 = mm_store_conflict(bn, bk, 0);
        c_pad = p4 > c_pad ? p4 : c_pad;
        c_none = p0 > c_none ? p0 : c_none;
    }
    if (MM_FIXED(P_OPB) && pad == 4 && c_pad >= c_none) {
        tpl_reason(why, len, "PAD=4 removes no bank conflict for BM=%d, BN=%d, BK=%d, OPA=%d, "
                   "OPB=%d (PAD=0 is canonical)", bm, bn, bk, opa, opb);
        return 0;
    }
    if (MM_FIXED(P_OPB) && pad == 0 && c_pad < c_none) {
        tpl_reason(why, len, "PAD=0 leaves %d-way bank conflicts on the transposed stores of A "
                   "or B (PAD=4: %d-way)", c_none, c_pad);
        return 0;
    }
    if (MM_FIXED(P_PAD) && pad != 0 && pad != 4) {
        tpl_reason(why, len, "PAD=%d: only 0 and 4 are modelled", pad);
        return 0;
    }
    if (MM_FIXED(P_FRAG) && cfg[P_FRAG] == 1 && (st < 2 || bk % 2)) {
        tpl_reason(why, len, "FRAG=1 reads step t+1's fragments before step t ends: needs STAGES>=2");
        return 0;
    }
    if (MM_FIXED(P_FRAG) && cfg[P_FRAG] == 1 && vec != 4) {
        tpl_reason(why, len, "FRAG=1 only with VEC=4 (VEC=4 kernels take the 4-byte path themselves "
                   "when B is unaligned; VEC=1 variants are kept only as FRAG=0 fallbacks)");
        return 0;
    }
    if (MM_FIXED(P_FRAG) && cfg[P_FRAG] == 1 && bk > 16) {
        tpl_reason(why, len, "FRAG=1 with BK=%d: ptxas -v (sm_90) spills 12-40 bytes at the register "
                   "bound (two fragment sets plus the longer copy plan)", bk);
        return 0;
    }
    if (MM_FIXED(P_FRAG) && cfg[P_FRAG] == 1 && st > 3) {
        tpl_reason(why, len, "FRAG=1 with STAGES=4: left out to bound the space (cuBLAS's FFMA "
                   "SGEMM uses 3 stages; FRAG=0 covers STAGES=4)");
        return 0;
    }
    if (MM_FIXED(P_FRAG) && cfg[P_FRAG] == 1 && g.acc > 64 && g.nthreads < 256) {
        tpl_reason(why, len, "FRAG=1 with %d accumulators needs ~240 registers: only with 8 warps "
                   "per block (4 would leave 4..8 warps per SM)", g.acc);
        return 0;
    }
    /* 128x256 / 256x128 FRAG=1 tiles run one block per SM: SPLITK=4 at BK=16 puts
     * 128 of them on 132 SMs for 128x8192x8192-like shapes (one wave). Up to 16 splits on
     * the others: 15-60 tiles of a small output over a deep K fill a wave of 2 (128x128) or
     * 3 (smaller) blocks per SM only past 8 (docs/notes/matmul.md part 12). */
    int big_split = MM_FIXED(P_FRAG) && cfg[P_FRAG] == 1 && bm * bn == 128 * 256 && sk == 4 &&
                    bk == 16;
    if (MM_FIXED(P_FRAG) && cfg[P_FRAG] == 1 && sk > 1 && !big_split &&
        (bm * bn > 128 * 128 || (bm * bn < 128 * 128 && sk < 4))) {
        tpl_reason(why, len, "FRAG=1 split-K: SPLITK 2..16 on 128x128 tiles, 4..16 on smaller "
                   "ones, 4 on 128x256/256x128 at BK=16 (SPLITK=%d)", sk);
        return 0;
    }
    if (MM_FIXED(P_FRAG) && sk > 1 &&
        (bm * bn > (cfg[P_FRAG] ? 128 * 256 : 64 * 128) || st != 3 || vec != 4)) {
        tpl_reason(why, len, "SPLITK>1 is for small M*N with long K: tiles of at most 64x128 "
                   "(128x128, or 128x256 at BK=16 with SPLITK=4, with FRAG=1), STAGES=3 (a split's "
                   "K range is short: a fourth stage only lengthens the prologue), VEC=4");
        return 0;
    }
    /* Stream-K evens out the last partial wave of tiles: it matters where one
     * wave holds few tiles (large tiles, one or two blocks per SM) and has to
     * be the fast main loop; split-K is the other way to split K. */
    if (MM_FIXED(P_SK) && cfg[P_SK] == 1 && (sk > 1 || cfg[P_FRAG] != 1 || bm * bn < 128 * 128)) {
        tpl_reason(why, len, "SK=1 (stream-K) only with SPLITK=1, FRAG=1 and tiles of at least "
                   "128x128 (smaller tiles run many waves: little to balance)");
        return 0;
    }
    /* The FFMA order is a lever of the issue-bound FRAG=1 main loop on large tiles
     * (measured: docs/notes/matmul.md, part 5); FRAG=0 keeps its single order. */
    if (MM_FIXED(P_FFMA) && cfg[P_FFMA] != 0 && (cfg[P_FRAG] != 1 || bm * bn < 128 * 128)) {
        tpl_reason(why, len, "FFMA=%d (another FFMA order) only with FRAG=1 and tiles of at least "
                   "128x128", cfg[P_FFMA]);
        return 0;
    }
    /* Spread copies (part 9): a lever of the same issue-bound FRAG=1 loop; the stream-K and
     * split-K kernels keep the queued copies (ptxas -v: stream-K spills 8 bytes at CPS=8). */
    if (MM_FIXED(P_CPS) &&
        (cfg[P_CPS] < 0 || (cfg[P_CPS] > 0 && (cfg[P_FRAG] != 1 || cfg[P_SK] || sk > 1 ||
                                               bm * bn < 128 * 128)))) {
        tpl_reason(why, len, "CPS=%d (copies spread over the next K step) only with FRAG=1, SK=0, "
                   "SPLITK=1 and tiles of at least 128x128", cfg[P_CPS]);
        return 0;
    }
    if (MM_FIXED(P_VEC) && vec == 1 && bk * bn / g.nthreads > 4) {
        tpl_reason(why, len, "VEC=1 needs %d 4-byte copies of B per thread per step (at most 4)",
                   bk * bn / g.nthreads);
        return 0;
    }
    return 1;
}

static int mm_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    return mm_rules(cfg, P_COUNT, dev, why, len);
}

/* valid_prefix: mm_rules on the fixed parameters (ALGO 0 and 1 keep every later
 * parameter canonical, ALGO 2's tile geometry is judged once WNITER is fixed). */
static int mm_valid_prefix(const int *cfg, int n_fixed, const at_device_info *dev)
{
    return mm_rules(cfg, n_fixed, dev, NULL, 0);
}

/* FP32 with exact math, row-major (the canonical form: tpl.h), any ops, any batch. */
static int mm_accepts(const tpl_problem *p)
{
    return p->n_dims == 3 && p->dtype == AT_R_32F && p->math == AT_MATH_DEFAULT &&
           p->order == AT_ROW_MAJOR && (unsigned)p->op_a <= AT_OP_T &&
           (unsigned)p->op_b <= AT_OP_T && p->batch >= 0;
}

/* 1 if cfg's kernel computes p's kind: the configuration's ops are the problem's (the seeds
 * compute one NN product), a batch takes the batched kernel and one product the kernel
 * without batch offsets. */
static int mm_kind_matches(const int *cfg, const tpl_problem *p)
{
    return cfg[P_OPA] == (p->op_a == AT_OP_T) && cfg[P_OPB] == (p->op_b == AT_OP_T) &&
           cfg[P_BATCH] == (tpl_problem_batch(p) > 1);
}

static int mm_applicable(const int *cfg, const tpl_problem *p)
{
    if (!tpl_family_accepts(&tpl_matmul, p))
        return 0;
    long long m = p->dims[0], n = p->dims[1], k = p->dims[2];
    if (m < 1 || n < 1 || k < 0 || m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return 0;
    if (!mm_kind_matches(cfg, p))
        return 0;
    switch (cfg[P_ALGO]) {
    case 0:
        return tpl_cdiv(m, 16) <= 65535 && tpl_cdiv(n, 16) <= 0x7fffffff;
    case 1:
        return tpl_cdiv(m, cfg[P_TILE]) <= 65535;
    case 2: {
        long long tiles = tpl_cdiv(m, cfg[P_BM]) * tpl_cdiv(n, cfg[P_BN]);
        if (tiles > 0x7fffffff)
            return 0;
        int sk = cfg[P_SPLITK];
        if (sk > 1) {
            /* Each split gets at least two K steps; partials fit the workspace. */
            if (k < 2LL * sk * cfg[P_BK] || (long long)sk * m * n * 4 > MM_MAX_WORKSPACE)
                return 0;
        }
        return 1;
    }
    default:
        return 0;
    }
}

static int mm_deterministic(const int *cfg)
{
    (void)cfg;      /* split-K partials are summed in a fixed order: no atomics */
    return 1;
}

/* Scratch slots: 0 split-K partials (and stream-K's), 1 packed B, 2 stream-K counters. */
#define MM_SLOT_PARTIALS 0
#define MM_SLOT_PACKED_B 1
#define MM_SLOT_COUNTERS 2

/* Stream-K launch: a persistent grid of (blocks per SM) x SMs, planned by
 * mm_streamk_plan; two partial-tile slots per block and one counter per
 * stream-K tile, zeroed when allocated (the kernel leaves them zero). flags as
 * for matmul_tuned. */
static at_status mm_run_streamk(at_exec *ex, const int *cfg, const mm_geom *g, long long tiles,
                                int m, int n, int k, float alpha, CUdeviceptr A, int lda,
                                CUdeviceptr B, int ldb, float beta, CUdeviceptr C, int ldc,
                                int flags)
{
    int per_sm = 0;
    /* the kernel's static counter word beside 48 KiB of dynamic shared memory needs the opt-in:
     * the launcher counts static memory (ex_raise_smem_limit; found on the H200 with 128x256x16,
     * 2 stages, PAD=0 TN) */
    unsigned smem = (unsigned)g->smem;
    at_status s = ex_occupancy(ex, "matmul_streamk", (unsigned)g->nthreads, smem, &per_sm);
    if (s != AT_OK)
        return s;
    int sms = ex->dev && ex->dev->sm_count > 0 ? ex->dev->sm_count : 1;
    int ksteps = (int)tpl_cdiv(k, cfg[P_BK]);
    mm_streamk_schedule plan;
    mm_streamk_plan(tiles, ksteps, per_sm * sms, &plan);
    CUdeviceptr W = 0, counters = 0;
    if (plan.sk_tiles > 0) {
        size_t part_bytes = (size_t)2 * plan.grid * cfg[P_BM] * cfg[P_BN] * 4;
        if ((s = ex_scratch(ex, MM_SLOT_PARTIALS, part_bytes, &W)) != AT_OK ||
            (s = ex_scratch_zeroed(ex, MM_SLOT_COUNTERS, (size_t)plan.sk_tiles * 4, &counters)) !=
                AT_OK)
            return s;
    }
    void *a[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &W, &counters, &flags,
                 &plan.dp_tiles, &ksteps, &plan.q, &plan.r};
    return ex_launch(ex, "matmul_streamk", (unsigned)plan.grid, 1, 1, (unsigned)g->nthreads, 1, 1,
                     smem, a);
}

static at_status mm_run(at_exec *ex, const int *cfg, tpl_args *args)
{
    const tpl_problem *p = &args->problem;
    at_status st = tpl_check_problem(ex, &tpl_matmul, p);
    if (st != AT_OK)
        return st;
    long long m64 = p->dims[0], n64 = p->dims[1], k64 = p->dims[2];
    if (m64 < 0 || n64 < 0 || k64 < 0 || m64 > 0x7fffffff || n64 > 0x7fffffff || k64 > 0x7fffffff)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "matmul: sizes %lldx%lldx%lld out of range",
                       m64, n64, k64);
    int m = (int)m64, n = (int)n64, k = (int)k64;
    if (m == 0 || n == 0)
        return AT_OK;
    const tpl_operand *oa = &args->operand[TPL_GEMM_A], *ob = &args->operand[TPL_GEMM_B],
                      *oc = &args->operand[TPL_GEMM_C];
    if (oa->ld < tpl_gemm_min_ld(AT_ROW_MAJOR, p->op_a, m, k) ||
        ob->ld < tpl_gemm_min_ld(AT_ROW_MAJOR, p->op_b, k, n) || oc->ld < n)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "matmul: leading dimensions lda=%lld ldb=%lld "
                       "ldc=%lld too small for %dx%dx%d (ops %s%s)", oa->ld, ob->ld, oc->ld, m, n,
                       k, tpl_op_name(p->op_a), tpl_op_name(p->op_b));
    long long batch = tpl_problem_batch(p);
    long long sA = oa->batch_stride, sB = ob->batch_stride, sC = oc->batch_stride;
    if (batch > 1 && (sA < 0 || sB < 0 || sC < 0))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "matmul: negative batch stride");
    if (oa->ld > 0x7fffffff || ob->ld > 0x7fffffff || oc->ld > 0x7fffffff)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "matmul: leading dimensions lda=%lld ldb=%lld "
                       "ldc=%lld above 2^31-1", oa->ld, ob->ld, oc->ld);
    int lda = (int)oa->ld, ldb = (int)ob->ld, ldc = (int)oc->ld;
    float alpha = (float)args->scalar[TPL_GEMM_ALPHA], beta = (float)args->scalar[TPL_GEMM_BETA];
    CUdeviceptr A = oa->ptr, B = ob->ptr, C = oc->ptr;

    if (!mm_kind_matches(cfg, p))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "matmul: configuration OPA=%d OPB=%d BATCH=%d does "
                       "not compute ops %s%s%s", cfg[P_OPA], cfg[P_OPB], cfg[P_BATCH],
                       tpl_op_name(p->op_a), tpl_op_name(p->op_b),
                       batch > 1 ? " in a batch (needs BATCH=1)" : " (one product: needs BATCH=0)");
    if (cfg[P_ALGO] == 0 || cfg[P_ALGO] == 1) {
        int t = cfg[P_ALGO] == 0 ? 16 : cfg[P_TILE];
        long long gy = tpl_cdiv(m, t), gx = tpl_cdiv(n, t);
        if (gy > 65535)
            return ex_fail(ex, AT_ERR_UNSUPPORTED, "matmul: m=%d needs %lld block rows (limit 65535)",
                           m, gy);
        void *a[] = {&m, &n, &k, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc};
        return ex_launch(ex, cfg[P_ALGO] == 0 ? "matmul_naive" : "matmul_tiled",
                         (unsigned)gx, (unsigned)gy, 1, (unsigned)t, (unsigned)t, 1, 0, a);
    }

    mm_geom g;
    char why[256];
    if (cfg[P_ALGO] != 2 || !mm_geometry(cfg, &g, why, sizeof why))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "matmul: configuration not runnable");
    long long tiles = tpl_cdiv(m, cfg[P_BM]) * tpl_cdiv(n, cfg[P_BN]);
    if (tiles > 0x7fffffff)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "matmul: %lld block tiles (limit 2^31-1)", tiles);
    int sk = cfg[P_SPLITK];
    CUdeviceptr W = 0;
    int flags = 0;
    if (cfg[P_OPA] == 1 && cfg[P_VEC] == 4 && A % 16 == 0 && lda % 4 == 0 &&
        (batch == 1 || sA % 4 == 0))
        flags |= 4;
    if (cfg[P_OPB] == 1) {
        /* B of op T: 4-byte copies along K, any alignment */
    } else if (cfg[P_VEC] == 4 && B % 16 == 0 && ldb % 4 == 0 && (batch == 1 || sB % 4 == 0)) {
        flags |= 1;
    } else if (cfg[P_VEC] == 4 && k > 0 && batch == 1) {
        /* B unaligned (pointer or ldb): pack it once into an aligned copy with
         * ldb rounded up to 4, so the kernel keeps its 16-byte copy path. One
         * read and one write of B: ~1% of the multiply for square shapes; the
         * tuner weighs it against VEC=1 configurations, which never pack. */
        int ldp = (n + 3) / 4 * 4;
        size_t bytes = (size_t)k * (size_t)ldp * 4;
        CUdeviceptr P = 0;
        if (bytes <= MM_MAX_WORKSPACE) {
            at_status s = ex_scratch(ex, MM_SLOT_PACKED_B, bytes, &P);
            if (s != AT_OK)
                return s;
        }
        if (P && P % 16 == 0) {
            long long chunks = ldp / 4;
            long long gx = tpl_cdiv(chunks, 64), gy = tpl_cdiv(k, 4), gy_max = tpl_cdiv(8192, gx);
            if (gy > gy_max)
                gy = gy_max;
            if (gy > 65535)
                gy = 65535;
            void *pa[] = {&k, &n, &B, &ldb, &P, &ldp};
            at_status s = ex_launch(ex, "matmul_pack_b", (unsigned)gx, (unsigned)gy, 1, 64, 4, 1,
                                    0, pa);
            if (s != AT_OK)
                return s;
            B = P;
            ldb = ldp;
            flags |= 1;
        }
    }
    if (sk > 1) {
        size_t bytes = (size_t)sk * (size_t)m * (size_t)n * 4;
        at_status s = ex_scratch(ex, MM_SLOT_PARTIALS, bytes, &W);
        if (s != AT_OK)
            return s;
        if (cfg[P_VEC] == 4 && n % 4 == 0 && W % 16 == 0)
            flags |= 2;
    } else if (cfg[P_VEC] == 4 && C % 16 == 0 && ldc % 4 == 0 && (batch == 1 || sC % 4 == 0)) {
        flags |= 2;
    }
    if (cfg[P_SK] == 1)
        return mm_run_streamk(ex, cfg, &g, tiles, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                              flags);
    /* SPLITK is run-time from 2 (one cubin for every split count): the count is the grid's
     * z, and a split's whole K steps (the last split shorter) its last argument */
    int per_split = (int)tpl_cdiv(tpl_cdiv(k, cfg[P_BK]), sk);
    /* products along grid y, at most 65535 a launch */
    at_status s = AT_OK;
    for (long long b0 = 0; b0 < batch && s == AT_OK; b0 += 65535) {
        long long nb = batch - b0 < 65535 ? batch - b0 : 65535;
        CUdeviceptr Ab = A + (CUdeviceptr)(b0 * sA * 4), Bb = B + (CUdeviceptr)(b0 * sB * 4),
                    Cb = C + (CUdeviceptr)(b0 * sC * 4);
        void *a[] = {&m, &n, &k, &alpha, &Ab, &lda, &Bb, &ldb, &beta, &Cb, &ldc, &W, &flags,
                     &sA, &sB, &sC, &per_split};
        s = ex_launch(ex, "matmul_tuned", (unsigned)tiles, (unsigned)nb, (unsigned)sk,
                      (unsigned)g.nthreads, 1, 1, (unsigned)g.smem, a);
    }
    if (s != AT_OK || sk == 1)
        return s;
    /* Reduction: 256-thread blocks of bx column chunks (4 columns each when
     * vectorized) x 256/bx rows; about 4096 blocks, rows strided beyond. */
    int vec = cfg[P_VEC] == 4 && n % 4 == 0 && C % 16 == 0 && ldc % 4 == 0 && W % 16 == 0;
    long long chunks = vec ? n / 4 : n;
    int bx = chunks >= 256 ? 256 : chunks >= 128 ? 128 : chunks >= 64 ? 64 : 32;
    int by = 256 / bx;
    long long gx = tpl_cdiv(chunks, bx), gy = tpl_cdiv(m, by), gy_max = tpl_cdiv(4096, gx);
    if (gy > gy_max)
        gy = gy_max;
    if (gy > 65535)
        gy = 65535;
    void *r[] = {&m, &n, &sk, &alpha, &W, &beta, &C, &ldc, &vec};
    return ex_launch(ex, "matmul_splitk_reduce", (unsigned)gx, (unsigned)gy, 1, (unsigned)bx,
                     (unsigned)by, 1, 0, r);
}

static void mm_work(const tpl_problem *p, double *flops, double *bytes)
{
    double m = (double)p->dims[0], n = (double)p->dims[1], k = (double)p->dims[2];
    double batch = (double)tpl_problem_batch(p);
    *flops = 2.0 * m * n * k * batch;
    *bytes = 4.0 * (m * k + k * n + 2.0 * m * n) * batch;
}

/* Inputs of a problem (any ops, batch: the products packed one after another): A, B and C0
 * uniform in [-1, 1), alpha 1.5, beta 0.5, and the float64 reference of every product. */
static at_status mm_prepare(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                            tpl_workset *ws)
{
    at_status s = tpl_check_gemm_prepare(ref, &tpl_matmul, p);
    if (s != AT_OK)
        return s;
    long long batch = tpl_problem_batch(p);
    int m = (int)p->dims[0], n = (int)p->dims[1], k = (int)p->dims[2];
    size_t a_n = (size_t)m * k, b_n = (size_t)k * n, c_n = (size_t)m * n, nb = (size_t)batch;
    CUdeviceptr A, B, C0, C, R;
    if ((s = tpl_ws_alloc(ref, ws, a_n * nb * 4, &A)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, b_n * nb * 4, &B)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * nb * 4, &C0)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * nb * 4, &C)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, c_n * nb * 8, &R)) != AT_OK)
        return s;
    if ((s = tpl_fill_uniform(ref, A, (long long)(a_n * nb), seed * 3 + 1, -1.0f, 1.0f)) != AT_OK ||
        (s = tpl_fill_uniform(ref, B, (long long)(b_n * nb), seed * 3 + 2, -1.0f, 1.0f)) != AT_OK ||
        (s = tpl_fill_uniform(ref, C0, (long long)(c_n * nb), seed * 3 + 3, -1.0f, 1.0f)) != AT_OK)
        return s;
    const float alpha = 1.5f, beta = 0.5f;
    int lda = p->op_a == AT_OP_T ? m : k, ldb = p->op_b == AT_OP_T ? k : n;
    ws->args = tpl_gemm_args(m, n, k, alpha, A, lda, B, ldb, beta, C, n);
    ws->args.problem = *p;
    ws->args.operand[TPL_GEMM_A].batch_stride = (long long)a_n;
    ws->args.operand[TPL_GEMM_B].batch_stride = (long long)b_n;
    ws->args.operand[TPL_GEMM_C].batch_stride = (long long)c_n;
    if ((s = tpl_ref_gemm_args(ref, &ws->args, C0, R)) != AT_OK)
        return s;
    ws->out = C;
    ws->out_bytes = c_n * nb * 4;
    ws->out_initial = C0;
    ws->reference = R;
    return AT_OK;
}

/* The products lie one after another: one (batch * m) x n matrix. */
static at_status mm_check(at_exec *ref, tpl_workset *ws, double *error)
{
    const tpl_problem *p = &ws->args.problem;
    return tpl_rel_error_typed(ref, AT_R_32F, ws->out, (int)(tpl_problem_batch(p) * p->dims[0]),
                               (int)p->dims[1], p->dims[1], ws->reference, error);
}

/* FP32 accumulation error grows like sqrt(k) * 2^-24; ~10x margin over what
 * a sequential sum shows on uniform [-1, 1) data. */
static double mm_tolerance(const tpl_problem *p)
{
    double k = p->n_dims == 3 && p->dims[2] > 0 ? (double)p->dims[2] : 1.0;
    return 4e-7 * sqrt(k) + 1e-6;
}

/* OPA, OPB and BATCH follow the problem's ops and batch; PAD follows the ops as valid() asks
 * (4 where A or B is stored transposed into shared memory: op(A) N or op(B) T). */
static void mm_fit_kind(int *cfg, const tpl_problem *p)
{
    cfg[P_OPA] = p->op_a == AT_OP_T;
    cfg[P_OPB] = p->op_b == AT_OP_T;
    cfg[P_BATCH] = tpl_problem_batch(p) > 1;
    if (cfg[P_ALGO] == 2)
        cfg[P_PAD] = !cfg[P_OPA] || cfg[P_OPB] ? 4 : 0;
}


static const tpl_problem mm_tuning[] = {
    TPL_PROBLEM(3, {1024, 1024, 1024}),
    TPL_PROBLEM(3, {2048, 2048, 2048}),
    TPL_PROBLEM(3, {4096, 4096, 4096}),
    TPL_PROBLEM(3, {1000, 1000, 1000}),
    TPL_PROBLEM(3, {8192, 8192, 128}),
    TPL_PROBLEM(3, {128, 8192, 8192}),
    TPL_PROBLEM(3, {8192, 64, 8192}),
    /* the default run's transposed problems (A X^T, the commonest, and A^T X), then the one a run
     * naming the family (--kernel matmul) adds */
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .op_b = AT_OP_T},
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .op_a = AT_OP_T},
    {.n_dims = 3, .dims = {4096, 4096, 4096}, .op_a = AT_OP_T, .op_b = AT_OP_T},
};
#define MM_N_DEFAULT_TUNING 9

/* tile_of: the launch geometry for the runtime's selection model (ALGO 0: 16 x 16 blocks of
 * one output each; ALGO 1: TILE x TILE; ALGO 2: BM x BN of mm_geometry's threads). */
static int mm_tile_of(const int *cfg, tpl_tile *t)
{
    memset(t, 0, sizeof *t);
    t->splitk = 1;
    t->products = 1;
    t->elem_bytes = 4;
    if (cfg[P_ALGO] != 2) {
        int edge = cfg[P_ALGO] == 0 ? 16 : cfg[P_TILE];
        t->bm = t->bn = edge;
        t->threads = edge * edge;
        t->smem = cfg[P_ALGO] == 0 ? 0 : 2LL * edge * edge * 4;
        return 1;
    }
    mm_geom g;
    if (!mm_geometry(cfg, &g, NULL, 0))
        return 0;
    t->bm = cfg[P_BM];
    t->bn = cfg[P_BN];
    t->splitk = cfg[P_SPLITK] > 1 ? cfg[P_SPLITK] : 1;
    t->stream_k = cfg[P_SK];
    t->threads = g.nthreads;
    t->smem = g.smem;
    t->regs = g.regs;
    return 1;
}

const tpl_family tpl_matmul = {
    .name = "matmul",
    .source = "matmul.cu",
    .fixed_options = "",
    .summary = "SGEMM C = alpha*op(A)*op(B) + beta*C (FP32 FFMA, row-major, ops N/T, strided "
               "batches): seed naive/tiled and a register-tiled cp.async pipeline with split-K",
    .n_dims = 3,
    .dim_names = {"m", "n", "k"},
    .metric_is_flops = 1,
    .hidden = 0,
    .n_params = P_COUNT,
    .params = {
        {"ALGO", 3, {0, 1, 2}, "0 seed naive, 1 seed shared-memory tiled, 2 register-tiled pipeline"},
        {"TILE", 3, {8, 16, 32}, "ALGO 1: tile edge = block edge"},
        {"UNROLL", 2, {1, 4}, "ALGO 1: unroll of the inner product loop"},
        {"BM", 3, {64, 128, 256}, "ALGO 2: block tile rows"},
        {"BN", 3, {64, 128, 256}, "ALGO 2: block tile columns"},
        {"BK", 3, {8, 16, 32}, "ALGO 2: K depth of one shared-memory step"},
        {"WM", 3, {32, 64, 128}, "ALGO 2: warp tile rows"},
        {"WN", 3, {32, 64, 128}, "ALGO 2: warp tile columns"},
        {"TM", 2, {4, 8}, "ALGO 2: thread tile rows per warp iteration"},
        {"TN", 2, {4, 8}, "ALGO 2: thread tile columns per warp iteration"},
        {"WNITER", 3, {1, 2, 4}, "ALGO 2: warp iterations along N"},
        {"STAGES", 4, {1, 2, 3, 4}, "ALGO 2: cp.async shared-memory pipeline depth"},
        {"VEC", 2, {1, 4}, "ALGO 2: 4 = 16-byte B loads and C stores when aligned, 1 = 4-byte only"},
        {"PAD", 2, {0, 4}, "ALGO 2: shared-memory row padding (floats) against bank conflicts"},
        {"SPLITK", 5, {1, 2, 4, 8, 16}, "ALGO 2: K split over blocks + deterministic reduction "
                                        "(run-time from 2: the splits share one cubin)",
         .runtime_from = 2},
        {"FRAG", 2, {0, 1}, "ALGO 2: 1 = register fragments double-buffered across the K-step barrier"},
        {"SK", 2, {0, 1}, "ALGO 2: 1 = stream-K: persistent blocks, the last partial wave split "
                          "evenly by K steps (deterministic fix-up)"},
        {"FFMA", 3, {0, 1, 2}, "ALGO 2, FRAG=1: FFMA order over the lane's accumulators: 0 rows, "
                               "1 rows serpentine, 2 columns serpentine"},
        {"OPA", 2, {0, 1}, "ALGO 2: 1 = A stored k x m (op T; 16-byte loads along m), 0 = m x k"},
        {"OPB", 2, {0, 1}, "ALGO 2: 1 = B stored n x k (op T; 4-byte loads stored transposed), "
                           "0 = k x n"},
        {"BATCH", 2, {0, 1}, "ALGO 2: 1 = the products of a strided batch along grid y (a batch "
                             "needs it), 0 = one product (the batch offsets cost the NN 4096^3 "
                             "winner 6% when compiled in)", .omit_first = 1},
        {"CPS", 3, {0, 4, 8}, "ALGO 2, FRAG=1: 0 = a K step's cp.async copies queued together "
                              "after its FFMAs, n = interior blocks spread them over the first n k "
                              "of the next step, among the FFMAs (4096^3 H200: NT 8, TT 4)",
         .omit_first = 1},
    },
    .valid = mm_valid,
    .accepts = mm_accepts,
    .applicable = mm_applicable,
    .deterministic = mm_deterministic,
    .run = mm_run,
    .work = mm_work,
    .prepare = mm_prepare,
    .check = mm_check,
    .tolerance = mm_tolerance,
    .default_config = "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,"
                      "WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    .n_defaults = MM_N_DEFAULTS,
    .defaults = mm_defaults,
    .fit_kind = mm_fit_kind,
    .n_baselines = MM_N_BASELINES,
    .baselines = mm_baselines,
    .n_tuning_problems = (int)(sizeof mm_tuning / sizeof mm_tuning[0]),
    .tuning_problems = mm_tuning,
    .n_default_tuning_problems = MM_N_DEFAULT_TUNING,
    .valid_prefix = mm_valid_prefix,
    .tile_of = mm_tile_of,
};
