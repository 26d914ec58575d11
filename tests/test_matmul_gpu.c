/* test_matmul_gpu.c: the matmul family on the GPU: many configurations verified at ragged
 * shapes, every op pair and batches, leading dimensions and alignment, stream-K repeated
 * bitwise, the API against the CPU, deep-K split counts off the listed values (its space and
 * rules: test_matmul.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "measure.h"
#include "th_family.h"
#include "tpl.h"

extern const tpl_family tpl_matmul;

/* Parses text into cfg; 0 (test failed) if it does not parse. */
static int mt_parse(const char *text, int *cfg)
{
    return th_parse_config(&tpl_matmul, text, cfg, __FILE__, __LINE__);
}

static int mt_param(const char *name)
{
    return tpl_param_index(&tpl_matmul, name);
}

/* ---------------- GPU tier ---------------- */

static const char *const mt_spread[] = {
    /* every STAGES, both layouts, 16-byte and 4-byte paths, split-K, big tiles */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=8,TN=4,WNITER=2,STAGES=1,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=8,WM=64,WN=32,TM=8,TN=8,WNITER=1,STAGES=2,VEC=1,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=32,WN=64,TM=8,TN=4,WNITER=2,STAGES=4,VEC=1,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=8,WM=64,WN=64,TM=8,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=128,BK=8,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=4,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=32,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=2,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    /* FRAG=1: fragments double-buffered across the barrier; both stage counts, BK 8/16,
     * 4- and 8-warp tiles, 128 accumulators, split-K on 64x128 and 128x128 tiles */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=64,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=128,BK=8,WM=64,WN=64,TM=8,TN=8,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=64,BK=16,WM=64,WN=32,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=8,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    /* part 3: the 4096^3 sweep winner (128 accumulators, interior copy path), a
     * 128x128 BK=16 split-K FRAG=1 tile (the 128x8192x8192 winner's shape) and the
     * new 128-accumulator BK=16 FRAG=1 tiles */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=8,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=256,BN=128,BK=16,WM=64,WN=64,TM=8,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=4,WNITER=4,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0",
    /* part 4: stream-K on the 4096^3 winner's tile (one block per SM) and on a
     * 128x128 tile (two per SM); the small shapes here split every tile over many
     * blocks (fewer tiles than blocks) */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
    /* part 5: the serpentine FFMA orders (rows with stream-K, columns with split-K) */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=1,OPA=0,OPB=0",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=8,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=4,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0",
    "ALGO=1,TILE=8,UNROLL=4,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    "ALGO=1,TILE=32,UNROLL=4,BM=64,BN=64,BK=8,WM=32,WN=32,TM=4,TN=4,WNITER=1,STAGES=1,VEC=1,PAD=0,SPLITK=1,FRAG=0,SK=0,FFMA=0,OPA=0,OPB=0",
    /* part 9: copies spread over the next K step (CPS 4, 8): 3 and 2 stages, BK 16 and 8,
     * 64 and 128 accumulators */
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=8,WNITER=1,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0,CPS=4",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=2,OPA=0,OPB=0,CPS=8",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=8,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=0,OPA=0,OPB=0,CPS=4",
    "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=32,WN=64,TM=4,TN=4,WNITER=2,STAGES=2,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=0,FFMA=1,OPA=0,OPB=0,CPS=8",
};

typedef struct mt_cfg {
    char text[TPL_CONFIG_LEN];
    int cfg[TPL_MAX_PARAMS];
    void *cubin;
    size_t size;
} mt_cfg;

/* 1 if cfg computes one NN product (the tests below that build such calls skip the
 * others: other ops, and the batched kernel, which computes batches only). */
static int mt_is_nn(const int *cfg)
{
    return cfg[mt_param("OPA")] == 0 && cfg[mt_param("OPB")] == 0 && cfg[mt_param("BATCH")] == 0;
}

/* The default, the baselines and the spread above, parsed and checked valid; those that
 * compute one NN product (the users' only calls) compiled for the device's arch; *n set to
 * the count (0 on failure). */
static mt_cfg *mt_compile_set(const at_device_info *dev, int *n)
{
    const tpl_family *f = &tpl_matmul;
    int total = 1 + f->n_baselines + (int)(sizeof mt_spread / sizeof mt_spread[0]);
    mt_cfg *set = calloc((size_t)total, sizeof *set);
    *n = 0;
    if (!set)
        return NULL;
    for (int i = 0; i < total; i++) {
        const char *t = i == 0 ? f->default_config
                      : i <= f->n_baselines ? f->baselines[i - 1].config
                      : mt_spread[i - 1 - f->n_baselines];
        snprintf(set[i].text, sizeof set[i].text, "%s", t);
        char why[256], *log = NULL;
        if (!mt_parse(t, set[i].cfg))
            return set;
        if (!f->valid(set[i].cfg, dev, why, sizeof why)) {
            th_fail(__FILE__, __LINE__, "%s invalid on device: %s", t, why);
            return set;
        }
        if (!mt_is_nn(set[i].cfg)) {
            *n = i + 1;         /* other ops, batches: valid, never launched here */
            continue;
        }
        at_status s = tpl_compile(f, set[i].cfg, dev->arch, &set[i].cubin, &set[i].size, &log);
        if (s != AT_OK) {
            th_fail(__FILE__, __LINE__, "%s: compile failed: %s", t, log ? log : "");
            free(log);
            return set;
        }
        free(log);
        *n = i + 1;
    }
    return set;
}

static void mt_free_set(mt_cfg *set, int n)
{
    for (int i = 0; set && i < n; i++)
        free(set[i].cubin);
    free(set);
}

GPU_TEST(matmul_gpu_configs_verify_at_ragged_shapes)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    int n = 0;
    mt_cfg *set = mt_compile_set(ms_device(g), &n);
    static const tpl_problem shapes[] = {
        TPL_PROBLEM(3, {1000, 999, 1001}), TPL_PROBLEM(3, {1, 1, 1}), TPL_PROBLEM(3, {17, 33, 65}),
        TPL_PROBLEM(3, {130, 70, 300}),
        /* n % 4 == 0 and k >= 512: every split-K config runs, with the float4 reduction */
        TPL_PROBLEM(3, {96, 132, 520}),
        /* interior blocks of every tile size (FRAG=1's unpredicated copy path) next to
         * edge blocks, a ragged K tail, several K steps per split */
        TPL_PROBLEM(3, {260, 264, 1037}),
        /* whole K steps: interior blocks take the spread copies (CPS), edge blocks not */
        TPL_PROBLEM(3, {260, 264, 1024}),
    };
    for (size_t s = 0; !th_failed() && s < sizeof shapes / sizeof shapes[0]; s++) {
        const tpl_problem *p = &shapes[s];
        at_status st = ms_prepare(g, f, p, 11 + s, err, sizeof err);
        if (st != AT_OK) {
            th_fail(__FILE__, __LINE__, "prepare: %s", err);
            break;
        }
        for (int i = 0; i < n; i++) {
            double e = -1;
            if (!mt_is_nn(set[i].cfg))
                continue;
            st = ms_verify(g, f, set[i].cfg, set[i].cubin, set[i].size, &e, err, sizeof err);
            if (st != AT_OK || !(e <= f->tolerance(p))) {
                th_fail(__FILE__, __LINE__, "%lldx%lldx%lld %s: %s (error %g, %s)", p->dims[0],
                        p->dims[1], p->dims[2], set[i].text, at_status_string(st), e, err);
                break;
            }
        }
    }
    /* The default at a large ragged shape, with its speed for the log. */
    if (!th_failed() && n > 0) {
        tpl_problem big = TPL_PROBLEM(3, {4097, 4095, 4096});
        double e = -1;
        at_status st = ms_prepare(g, f, &big, 5, err, sizeof err);
        if (st == AT_OK)
            st = ms_verify(g, f, set[0].cfg, set[0].cubin, set[0].size, &e, err, sizeof err);
        if (st != AT_OK || !(e <= 1e-5)) {
            th_fail(__FILE__, __LINE__, "default at 4097x4095x4096: %s error %g %s",
                    at_status_string(st), e, err);
        } else {
            ms_options o;
            ms_timing t;
            ms_default_options(&o);
            if (ms_time(g, f, set[0].cfg, set[0].cubin, set[0].size, &o, &t, err, sizeof err) == AT_OK)
                printf("    default at 4097x4095x4096: %.3f ms = %.1f TFLOP/s, rel error %.2e\n",
                       t.median_ms, 2.0 * 4097 * 4095 * 4096 / t.median_ms * 1e-9, e);
        }
    }
    mt_free_set(set, n);
    ms_close(g);
}

/* Spread configurations that get transposed variants in matmul_gpu_ops_and_batches: the
 * STAGES=1 loop, a FRAG=0 128x256 tile, split-K, FRAG=1 128x128 and 128x256 (interior copy
 * paths), stream-K, spread copies (CPS=4; also batched). */
static const int mt_ops_spread[] = {0, 3, 6, 8, 15, 20, 26};

/* Every op pair on odd sizes (odd leading dimensions: A of op T at m = 129 has lda 129, so
 * A's 16-byte path falls back to 4-byte copies) and batches with odd strides, each
 * product against float64: the transposed and batched baselines and transposed variants of
 * spread configurations (PAD set to what valid() asks for), the first two also as the
 * batched kernel (BATCH=1). BATCH=0 configurations run the one-product shapes, BATCH=1
 * ones the batches (NN included). */
enum { MT_OPS_MAX = 48 };

/* Fills set (MT_OPS_MAX entries) with the configurations above, valid on dev (NULL: the
 * generic device); returns their count. */
static int mt_ops_set(const at_device_info *dev, mt_cfg *set)
{
    const tpl_family *f = &tpl_matmul;
    int n = 0;
    for (int b = 0; b < f->n_baselines && n < MT_OPS_MAX; b++)
        if (mt_parse(f->baselines[b].config, set[n].cfg) && !mt_is_nn(set[n].cfg))
            snprintf(set[n++].text, TPL_CONFIG_LEN, "%s", f->baselines[b].config);
    for (size_t i = 0; i < sizeof mt_ops_spread / sizeof mt_ops_spread[0]; i++)
        for (int ops = 1; ops < 4 && n < MT_OPS_MAX; ops++) {
            int *c = set[n].cfg;
            char why[256];
            if (!mt_parse(mt_spread[mt_ops_spread[i]], c))
                break;
            c[mt_param("OPA")] = ops & 1;
            c[mt_param("OPB")] = ops >> 1;
            c[mt_param("PAD")] = 0;
            if (!f->valid(c, dev, why, sizeof why))
                c[mt_param("PAD")] = 4;
            if (!f->valid(c, dev, why, sizeof why))
                continue;       /* this tile's copies do not split for these ops */
            tpl_config_format(f, c, set[n].text, TPL_CONFIG_LEN);
            n++;
            /* the batched kernel of the first two spread tiles and the CPS one too */
            if ((i < 2 || i == 6) && n < MT_OPS_MAX) {
                memcpy(set[n].cfg, c, sizeof set[n].cfg);
                set[n].cfg[mt_param("BATCH")] = 1;
                if (f->valid(set[n].cfg, dev, why, sizeof why)) {
                    tpl_config_format(f, set[n].cfg, set[n].text, TPL_CONFIG_LEN);
                    n++;
                }
            }
        }
    return n;
}

TEST(matmul_ops_set_covers_every_pair)
{
    mt_cfg set[MT_OPS_MAX];
    memset(set, 0, sizeof set);
    int n = mt_ops_set(NULL, set), per[4] = {0}, batched[4] = {0};
    for (int i = 0; i < n; i++) {
        int k = set[i].cfg[mt_param("OPA")] + 2 * set[i].cfg[mt_param("OPB")];
        per[k]++;
        batched[k] += set[i].cfg[mt_param("BATCH")];
    }
    printf("    %d configurations: NN %d, TN %d, NT %d, TT %d; batched NN %d, TN %d, NT %d, TT %d\n",
           n, per[0], per[1], per[2], per[3], batched[0], batched[1], batched[2], batched[3]);
    /* NN only in the batched kernel (one NN product is the other tests' subject) */
    CHECK(per[0] == batched[0] && batched[0] >= 1);
    for (int k = 1; k < 4; k++)
        CHECK(per[k] >= 4 && batched[k] >= 2 && per[k] - batched[k] >= 4);
}

GPU_TEST(matmul_gpu_ops_and_batches)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    mt_cfg *set = calloc(MT_OPS_MAX, sizeof *set);
    CHECK(set != NULL);
    int n = mt_ops_set(ms_device(g), set);
    for (int i = 0; i < n && !th_failed(); i++) {
        char *log = NULL;
        at_status s = tpl_compile(f, set[i].cfg, ms_device(g)->arch, &set[i].cubin,
                                  &set[i].size, &log);
        CHECK_MSG(s == AT_OK, "%s: compile failed: %s", set[i].text, log ? log : "");
        free(log);
    }
    static const long long shapes[][4] = {
        /* m, n, k, batch */
        {129, 65, 33, 1}, {1, 1, 1, 1}, {260, 264, 1037, 1}, {300, 130, 520, 1},
        {260, 264, 512, 1},     /* whole K steps: CPS's spread copies in interior blocks */
        {65, 33, 17, 3}, {129, 128, 64, 5}, {1, 7, 3, 4},
    };
    int ran = 0, expect = 0;
    for (int i = 0; i < n; i++)     /* 5 one-product shapes or 3 batches per configuration */
        expect += set[i].cfg[mt_param("BATCH")] ? 3 : 5;
    for (int ops = 0; ops < 4 && !th_failed(); ops++)
        for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0] && !th_failed(); sh++) {
            tpl_problem p = TPL_PROBLEM(3, {shapes[sh][0], shapes[sh][1], shapes[sh][2]});
            p.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
            p.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            p.batch = shapes[sh][3];
            at_status st = ms_prepare(g, f, &p, 40 + sh, err, sizeof err);
            CHECK_MSG(st == AT_OK, "prepare: %s", err);
            for (int i = 0; i < n && !th_failed(); i++) {
                const int *c = set[i].cfg;
                if (c[mt_param("OPA")] != (ops & 1) || c[mt_param("OPB")] != (ops >> 1) ||
                    c[mt_param("BATCH")] != (p.batch > 1))
                    continue;
                double e = -1;
                st = ms_verify(g, f, c, set[i].cubin, set[i].size, &e, err, sizeof err);
                CHECK_MSG(st == AT_OK && e <= f->tolerance(&p), "%lldx%lldx%lld ops %d batch %lld "
                          "%s: %s (error %g, %s)", p.dims[0], p.dims[1], p.dims[2], ops, p.batch,
                          set[i].text, at_status_string(st), e, err);
                ran++;
            }
        }
    printf("    %d configurations, %d verified runs\n", n, ran);
    CHECK(n >= 12);
    CHECK_EQ(ran, expect);
    mt_free_set(set, n);
    ms_close(g);
}

/* Fills a device buffer with n host floats from an LCG in [-1, 1). */
static int mt_upload_random(const cudrv *cu, CUdeviceptr p, size_t n, unsigned seed)
{
    float *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f;
    }
    int ok = cu->MemcpyHtoD(p, v, n * sizeof *v) == CUDA_SUCCESS;
    free(v);
    return ok;
}

/* Padded and odd leading dimensions, unaligned pointers, C's padding left
 * untouched, beta = 0 with NaN in C: every config of the set against the
 * float64 reference over the whole ldc-wide buffer. */
GPU_TEST(matmul_gpu_leading_dimensions_and_alignment)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    int n_set = 0;
    mt_cfg *set = mt_compile_set(ms_device(g), &n_set);
    static const int dims[][6] = {
        /* m, n, k, lda, ldb, ldc */
        {123, 77, 95, 101, 80, 84},     /* padded, multiples of 4 where possible */
        {67, 45, 129, 131, 47, 50},     /* odd: no 16-byte path for A/B rows */
        {200, 130, 70, 70, 133, 131},
        /* interior 128x256 blocks with an odd lda and a padded, 16-byte ldb (FRAG=1's
         * unpredicated copies), ragged K */
        {270, 300, 83, 85, 304, 301},
    };
    tpl_workset ws;
    memset(&ws, 0, sizeof ws);
    for (size_t d = 0; !th_failed() && d < sizeof dims / sizeof dims[0]; d++) {
        int m = dims[d][0], n = dims[d][1], k = dims[d][2];
        int lda = dims[d][3], ldb = dims[d][4], ldc = dims[d][5];
        size_t an = (size_t)m * lda, bn = (size_t)k * ldb, cn = (size_t)m * ldc;
        CUdeviceptr A, B, C0, C, R;
        tpl_workset_free(cu, &ws);
        CHECK_OK(tpl_ws_alloc(ref, &ws, (an + 4) * 4, &A));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (bn + 4) * 4, &B));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (cn + 4) * 4, &C0));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (cn + 4) * 4, &C));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (cn + 4) * 4, &R));
        /* the second case runs on pointers one float past a 16-byte boundary */
        int shift = d == 1 ? 1 : 0;
        A += 4 * shift;
        B += 4 * shift;
        C0 += 4 * shift;
        C += 4 * shift;
        R += 4 * shift;
        CHECK(mt_upload_random(cu, A, an, 100 + (unsigned)d));
        CHECK(mt_upload_random(cu, B, bn, 200 + (unsigned)d));
        CHECK(mt_upload_random(cu, C0, cn, 300 + (unsigned)d));
        for (int beta_zero = 0; beta_zero < 2 && !th_failed(); beta_zero++) {
            float alpha = 0.75f, beta = beta_zero ? 0.0f : -1.25f;
            /* reference over the full buffer: padding = C0's padding */
            CHECK(cu->MemcpyDtoD(R, C0, cn * 4) == CUDA_SUCCESS);
            CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
            CHECK_OK(tpl_ref_gemm(ref, m, n, k, alpha, A, lda, B, ldb, beta, C0, R, ldc));
            for (int i = 0; i < n_set; i++) {
                CUmodule mod;
                if (!mt_is_nn(set[i].cfg))
                    continue;
                CHECK(cu->ModuleLoadData(&mod, set[i].cubin) == CUDA_SUCCESS);
                CHECK(cu->MemcpyDtoD(C, C0, cn * 4) == CUDA_SUCCESS);
                if (beta_zero) {
                    /* NaN inside the m x n block: beta = 0 must not read it */
                    CUdeviceptr nanrow = C;
                    for (int r = 0; r < m; r++, nanrow += (CUdeviceptr)ldc * 4)
                        CHECK(cu->MemsetD32Async(nanrow, 0x7fc00000u, (size_t)n, ref->stream) ==
                              CUDA_SUCCESS);
                }
                CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
                at_exec ex;
                ex_init(&ex, cu, ms_device(g), mod, ref->stream, err, sizeof err);
                tpl_args args = tpl_gemm_args(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
                at_status s = f->run(&ex, set[i].cfg, &args);
                if (s == AT_OK)
                    s = ex_sync(&ex);
                ex_release(&ex);
                cu->ModuleUnload(mod);
                CHECK_MSG(s == AT_OK, "%s: %s", set[i].text, err);
                double e = -1;
                CHECK_OK(tpl_rel_error(ref, C, R, (long long)cn, &e));
                CHECK_MSG(e <= 2e-6, "%dx%dx%d ld %d/%d/%d shift %d beta %g %s: error %g", m, n, k,
                          lda, ldb, ldc, shift, beta, set[i].text, e);
            }
        }
    }
    tpl_workset_free(cu, &ws);
    mt_free_set(set, n_set);
    ms_close(g);
}

/* Stream-K at shapes with whole data-parallel waves plus a split last wave (the
 * tile counts below give 2 waves + 12 tiles on 132 SMs for 128x256, 2 + 24 at two
 * blocks per SM for 128x128, other SM counts land elsewhere): three calls on one
 * exec (the tile counters must be left zero), each checked against float64 and
 * bit-identical to the first. */
GPU_TEST(matmul_gpu_streamk_repeat_bitwise)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const cudrv *cu = ms_driver(g);
    at_exec *ref = ms_reference(g);
    static const char *const cfgs[] = {
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=256,BK=16,WM=64,WN=64,TM=4,TN=8,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
        "ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=1,FRAG=1,SK=1,FFMA=0,OPA=0,OPB=0",
    };
    static const int shapes[][3] = {{2944, 3000, 200}, {2944, 3064, 1000}};
    tpl_workset ws;
    memset(&ws, 0, sizeof ws);
    float *first = NULL, *again = NULL;
    for (int c = 0; c < 2 && !th_failed(); c++) {
        int cfg[TPL_MAX_PARAMS];
        char why[256];
        CHECK(mt_parse(cfgs[c], cfg));
        CHECK_MSG(f->valid(cfg, ms_device(g), why, sizeof why), "%s: %s", cfgs[c], why);
        void *cubin = NULL;
        size_t size = 0;
        char *log = NULL;
        at_status cs = tpl_compile(f, cfg, ms_device(g)->arch, &cubin, &size, &log);
        free(log);
        CHECK_MSG(cs == AT_OK, "compile %s", cfgs[c]);
        int m = shapes[c][0], n = shapes[c][1], k = shapes[c][2];
        size_t cn = (size_t)m * n;
        CUdeviceptr A, B, C0, C, R;
        tpl_workset_free(cu, &ws);
        free(first);
        free(again);
        first = malloc(cn * 4);
        again = malloc(cn * 4);
        CHECK(first && again);
        CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)m * k * 4, &A));
        CHECK_OK(tpl_ws_alloc(ref, &ws, (size_t)k * n * 4, &B));
        CHECK_OK(tpl_ws_alloc(ref, &ws, cn * 4, &C0));
        CHECK_OK(tpl_ws_alloc(ref, &ws, cn * 4, &C));
        CHECK_OK(tpl_ws_alloc(ref, &ws, cn * 4, &R));
        CHECK_OK(tpl_fill_uniform(ref, A, (long long)m * k, 41 + c, -1.0f, 1.0f));
        CHECK_OK(tpl_fill_uniform(ref, B, (long long)k * n, 42 + c, -1.0f, 1.0f));
        CHECK_OK(tpl_fill_uniform(ref, C0, (long long)cn, 43 + c, -1.0f, 1.0f));
        CHECK_OK(tpl_ref_gemm(ref, m, n, k, 1.5f, A, k, B, n, 0.5f, C0, R, n));
        CUmodule mod;
        CHECK(cu->ModuleLoadData(&mod, cubin) == CUDA_SUCCESS);
        free(cubin);
        at_exec ex;
        ex_init(&ex, cu, ms_device(g), mod, ref->stream, err, sizeof err);
        for (int call = 0; call < 3 && !th_failed(); call++) {
            CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
            CHECK(cu->MemcpyDtoD(C, C0, cn * 4) == CUDA_SUCCESS);
            CHECK(cu->CtxSynchronize() == CUDA_SUCCESS);
            tpl_args args = tpl_gemm_args(m, n, k, 1.5f, A, k, B, n, 0.5f, C, n);
            at_status s = f->run(&ex, cfg, &args);
            if (s == AT_OK)
                s = ex_sync(&ex);
            CHECK_MSG(s == AT_OK, "%s call %d: %s", cfgs[c], call, err);
            double e = -1;
            CHECK_OK(tpl_rel_error(ref, C, R, (long long)cn, &e));
            CHECK_MSG(e <= f->tolerance(&args.problem), "%dx%dx%d %s call %d: error %g", m, n, k,
                      cfgs[c], call, e);
            CHECK(cu->MemcpyDtoH(call ? again : first, C, cn * 4) == CUDA_SUCCESS);
            CHECK_MSG(call == 0 || memcmp(first, again, cn * 4) == 0,
                      "%s: call %d differs from call 0 (not deterministic)", cfgs[c], call);
            if (call == 0)
                printf("    %s at %dx%dx%d: error %.2e\n", c ? "128x128" : "128x256", m, n, k, e);
        }
        ex_release(&ex);
        cu->ModuleUnload(mod);
    }
    free(first);
    free(again);
    tpl_workset_free(cu, &ws);
    ms_close(g);
}

/* at_sgemm through the public API with a padded ldc, against the CPU. */
GPU_TEST(matmul_gpu_api_padded_ldc_matches_cpu)
{
    at_status s;
    const cudrv *cu = cudrv_get(&s, NULL, 0);
    CHECK(cu != NULL);
    CUdevice dev;
    CUcontext ctx, popped;
    CHECK(cu->Init(0) == CUDA_SUCCESS && cu->DeviceGet(&dev, th_device()) == CUDA_SUCCESS);
    CHECK(cu->DevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS);
    CHECK(cu->CtxPushCurrent(ctx) == CUDA_SUCCESS);
    char db_path[4096];
    snprintf(db_path, sizeof db_path, "%s/none.db", th_tmpdir());
    at_handle *h = NULL;
    int m = 150, n = 93, k = 211, lda = 211, ldb = 96, ldc = 101;
    size_t an = (size_t)m * lda, bn = (size_t)k * ldb, cn = (size_t)m * ldc;
    float *A = malloc(an * 4), *B = malloc(bn * 4), *C0 = malloc(cn * 4), *C = malloc(cn * 4);
    CUdeviceptr dA = 0, dB = 0, dC = 0;
    int ok = A && B && C0 && C && cu->MemAlloc(&dA, an * 4) == CUDA_SUCCESS &&
             cu->MemAlloc(&dB, bn * 4) == CUDA_SUCCESS && cu->MemAlloc(&dC, cn * 4) == CUDA_SUCCESS;
    unsigned seed = 7;
    for (size_t i = 0; ok && i < an + bn + cn; i++) {
        seed = seed * 1664525u + 1013904223u;
        float v = -1.0f + 2.0f * (float)(seed >> 8) / 16777216.0f;
        if (i < an)
            A[i] = v;
        else if (i < an + bn)
            B[i - an] = v;
        else
            C0[i - an - bn] = v;
    }
    ok = ok && cu->MemcpyHtoD(dA, A, an * 4) == CUDA_SUCCESS &&
         cu->MemcpyHtoD(dB, B, bn * 4) == CUDA_SUCCESS && cu->MemcpyHtoD(dC, C0, cn * 4) == CUDA_SUCCESS;
    double err = -1, pad_diff = -1;
    if (ok && at_create(&h, th_device(), db_path) == AT_OK) {
        ok = at_sgemm(h, m, n, k, 1.5f, (const float *)dA, lda, (const float *)dB, ldb, 0.5f,
                      (float *)dC, ldc) == AT_OK;
        if (!ok)
            th_fail(__FILE__, __LINE__, "at_sgemm: %s", at_errmsg(h));
        ok = ok && cu->CtxSynchronize() == CUDA_SUCCESS &&
             cu->MemcpyDtoH(C, dC, cn * 4) == CUDA_SUCCESS;
        double num = 0, den = 0;
        pad_diff = 0;
        for (int i = 0; ok && i < m; i++) {
            for (int j = 0; j < ldc; j++) {
                size_t c = (size_t)i * ldc + j;
                if (j >= n) {
                    pad_diff += fabs((double)C[c] - C0[c]);
                    continue;
                }
                double acc = 0;
                for (int p = 0; p < k; p++)
                    acc += (double)A[(size_t)i * lda + p] * B[(size_t)p * ldb + j];
                double r = 1.5 * acc + 0.5 * (double)C0[c];
                num += (C[c] - r) * (C[c] - r);
                den += r * r;
            }
        }
        err = sqrt(num / den);
        at_destroy(h);
    } else if (ok) {
        th_fail(__FILE__, __LINE__, "at_create failed");
    }
    cu->MemFree(dA);
    cu->MemFree(dB);
    cu->MemFree(dC);
    free(A);
    free(B);
    free(C0);
    free(C);
    cu->CtxPopCurrent(&popped);
    cu->DevicePrimaryCtxRelease(dev);
    CHECK(ok);
    CHECK_MSG(err >= 0 && err < 2e-6, "relative error %g", err);
    CHECK_MSG(pad_diff == 0.0, "padding of C changed (sum |diff| %g)", pad_diff);
}

/* The GPU tier's spread set must stay inside the valid space as rules change. */
TEST(matmul_gpu_spread_set_is_valid)
{
    for (size_t i = 0; i < sizeof mt_spread / sizeof mt_spread[0]; i++) {
        int cfg[TPL_MAX_PARAMS];
        char why[256];
        CHECK(mt_parse(mt_spread[i], cfg));
        CHECK_MSG(tpl_matmul.valid(cfg, NULL, why, sizeof why), "%s: %s", mt_spread[i], why);
    }
}

/* The built-in choices of FP32 batches and of deep K under a wave of tiles (the rows that pad
 * less than 128 x 128, 64 x 128 / 128 x 64 with BATCH 1 and FRAG 0, and the 128 x 64 wave-fill
 * split): each compiled and verified against the float64 reference on ragged shapes of its
 * class (odd sides, so odd leading dimensions), every op pair. */
GPU_TEST(matmul_gpu_builtin_batch_and_deep_k_rows)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    static const long long shapes[][4] = {
        {515, 51, 147, 4}, {50, 561, 123, 5}, {171, 179, 99, 3}, {129, 33, 17, 2},
        {310, 4006, 2049, 1}, {1256, 1030, 2301, 1},
    };
    int ran = 0, narrow = 0;
    for (int ops = 0; ops < 4 && !th_failed(); ops++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && !th_failed(); s++) {
            tpl_problem p = TPL_PROBLEM(3, {shapes[s][0], shapes[s][1], shapes[s][2]});
            p.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
            p.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            p.batch = shapes[s][3];
            int cfg[TPL_MAX_PARAMS];
            char text[TPL_CONFIG_LEN], *log = NULL;
            CHECK(tpl_builtin_config(f, ms_device(g), &p, 0, cfg, text, NULL));
            narrow += cfg[mt_param("BM")] == 64 || cfg[mt_param("BN")] == 64;
            void *cubin = NULL;
            size_t size = 0;
            at_status st = tpl_compile(f, cfg, ms_device(g)->arch, &cubin, &size, &log);
            CHECK_MSG(st == AT_OK, "%s: compile failed: %s", text, log ? log : "");
            free(log);
            st = ms_prepare(g, f, &p, 70 + s, err, sizeof err);
            CHECK_MSG(st == AT_OK, "prepare: %s", err);
            double e = -1;
            st = ms_verify(g, f, cfg, cubin, size, &e, err, sizeof err);
            CHECK_MSG(st == AT_OK && e <= f->tolerance(&p), "%lldx%lldx%lld ops %d batch %lld %s: "
                      "%s (error %g, %s)", p.dims[0], p.dims[1], p.dims[2], ops, p.batch, text,
                      at_status_string(st), e, err);
            free(cubin);
            ran++;
        }
    CHECK(ran == 24 && narrow >= 16);
    ms_close(g);
}

/* Small outputs over a deep K (docs/notes/matmul.md part 12): the built-in choice (a 4-warp
 * tile split to fill one wave exactly, counts off the listed values such as 9 and 13) and
 * 128 x 128 FRAG=1 tiles at 11 and 16 splits (one cubin: SPLITK is run-time), each verified
 * against the float64 reference on odd shapes of the class, every op pair. */
GPU_TEST(matmul_gpu_deep_k_wave_split_verifies)
{
    const tpl_family *f = &tpl_matmul;
    char err[1024];
    ms_gpu *g = NULL;
    CHECK_MSG(ms_open(&g, th_device(), err, sizeof err) == AT_OK, "ms_open: %s", err);
    const at_device_info *dev = ms_device(g);
    static const long long shapes[][3] = {
        {593, 346, 15207}, {1747, 148, 12395}, {203, 677, 7645}, {707, 433, 3407},
        {301, 201, 8001},
    };
    enum { CACHE = 24 };
    struct { char key[512]; void *cubin; size_t size; } cache[CACHE];
    int n_cache = 0, ran = 0, off_list = 0;
    memset(cache, 0, sizeof cache);
    for (int ops = 0; ops < 4 && !th_failed(); ops++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && !th_failed(); s++) {
            tpl_problem p = TPL_PROBLEM(3, {shapes[s][0], shapes[s][1], shapes[s][2]});
            p.op_a = (ops & 1) ? AT_OP_T : AT_OP_N;
            p.op_b = (ops >> 1) ? AT_OP_T : AT_OP_N;
            at_status st = ms_prepare(g, f, &p, 90 + s, err, sizeof err);
            CHECK_MSG(st == AT_OK, "prepare: %s", err);
            /* the built-in choice, then 128 x 128 at 11 and 16 splits on the first shape */
            int runs = s == 0 ? 3 : 1;
            for (int r = 0; r < runs && !th_failed(); r++) {
                int cfg[TPL_MAX_PARAMS];
                char text[TPL_CONFIG_LEN];
                if (r == 0) {
                    CHECK(tpl_builtin_config(f, dev, &p, 0, cfg, text, NULL));
                    int split = cfg[mt_param("SPLITK")];
                    CHECK_MSG(split >= 4, "%s", text);
                    off_list += split != 4 && split != 8 && split != 16;
                } else {
                    if (!mt_parse("ALGO=2,TILE=8,UNROLL=1,BM=128,BN=128,BK=16,WM=64,WN=32,TM=4,"
                                  "TN=4,WNITER=2,STAGES=3,VEC=4,PAD=4,SPLITK=16,FRAG=1,SK=0,"
                                  "FFMA=0,OPA=0,OPB=0", cfg))
                        break;
                    f->fit_kind(cfg, &p);
                    cfg[mt_param("SPLITK")] = r == 1 ? 11 : 16;
                    tpl_config_format(f, cfg, text, sizeof text);
                    char why[256];
                    CHECK_MSG(f->valid(cfg, dev, why, sizeof why) && f->applicable(cfg, &p),
                              "%s: %s", text, why);
                }
                char key[512];
                tpl_binary_key(f, cfg, dev->arch, key, sizeof key);
                int c = 0;
                while (c < n_cache && strcmp(cache[c].key, key) != 0)
                    c++;
                if (c == n_cache) {
                    CHECK(n_cache < CACHE);
                    char *log = NULL;
                    snprintf(cache[c].key, sizeof cache[c].key, "%s", key);
                    st = tpl_compile(f, cfg, dev->arch, &cache[c].cubin, &cache[c].size, &log);
                    CHECK_MSG(st == AT_OK, "%s: compile failed: %s", text, log ? log : "");
                    free(log);
                    n_cache++;
                }
                double e = -1;
                st = ms_verify(g, f, cfg, cache[c].cubin, cache[c].size, &e, err, sizeof err);
                CHECK_MSG(st == AT_OK && e <= f->tolerance(&p), "%lldx%lldx%lld ops %d %s: %s "
                          "(error %g, %s)", p.dims[0], p.dims[1], p.dims[2], ops, text,
                          at_status_string(st), e, err);
                ran++;
            }
        }
    printf("    %d verified runs, %d built-in splits off the listed values, %d cubins\n", ran,
           off_list, n_cache);
    CHECK(ran == 28 && off_list >= 4);
    for (int c = 0; c < n_cache; c++)
        free(cache[c].cubin);
    ms_close(g);
}
