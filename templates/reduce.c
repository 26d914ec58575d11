/* reduce.c: descriptors of the sum and dot families (both over reduce.cu, float
 * and double): parameter space, legality, launch geometry, inputs and verification. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tpl.h"

extern const tpl_family tpl_sum, tpl_dot;

/* Parameter positions, in descriptor order. */
enum { RD_STYLE, RD_FINISH, RD_BLOCK, RD_ITEMS, RD_VEC, RD_GRID, RD_UNROLL, RD_TYPE,
       RD_NPARAMS };

enum { RD_STYLE_SERIAL, RD_STYLE_HALVING, RD_STYLE_MASK, RD_STYLE_SHUFFLE,
       RD_STYLE_SINGLE };
enum { RD_FINISH_ATOMIC, RD_FINISH_SECOND_PASS, RD_FINISH_LAST_BLOCK,
       RD_FINISH_ACCUMULATOR, RD_FINISH_GATHER };

#define RD_SLOT_PARTIALS 0
/* Slot 1: the last-block counter (FINISH 2 and 3, unsigned at byte 0) and
 * FINISH 3's float64 accumulator (byte RD_ACC_OFFSET, its own 128-byte
 * line). Zeroed once when allocated; every call leaves both at 0. */
#define RD_SLOT_COUNTER 1
#define RD_ACC_OFFSET 128
#define RD_COUNTER_BYTES 256
/* Slot 2: FINISH 4's 64-bit slots, one per block, (call epoch << 32 | the
 * block's total); zeroed when allocated, and epochs start at 1, so a slot
 * never holds the current call's tag before that call writes it. */
#define RD_SLOT_GATHER 2
/* FINISH 4 gathers from at most this many blocks (RD_GATHER_MAX in
 * reduce.cu: 8 slots per lane of one warp). */
#define RD_GATHER_MAX 256
/* A single block only for sizes it reads in reasonable time. */
#define RD_SINGLE_MAX_N (1LL << 24)

#define RD_PARAMS { \
    {"STYLE", 5, {0, 1, 2, 3, 4}, \
     "block reduction: 0 serial, 1 halving tree, 2 interleaved mask tree, 3 warp shuffle, 4 single block serial"}, \
    {"FINISH", 5, {0, 1, 2, 3, 4}, \
     "blocks combine: 0 atomicAdd per block, 1 second-pass kernel, 2 last block finishes, " \
     "3 atomic float64 accumulator, last block finishes (one launch, no memset), " \
     "4 block 0 gathers epoch-tagged partials (one launch, no atomics, <= 256 blocks)"}, \
    {"BLOCK", 5, {64, 128, 256, 512, 1024}, "threads per block"}, \
    {"ITEMS", 5, {1, 2, 4, 8, 16}, "vectors each thread loads per tile (loads in flight)"}, \
    {"VEC", 3, {1, 2, 4}, "floats per load (scalar head/tail when unaligned or ragged)"}, \
    {"GRID", 6, {-1, 0, 1, 2, 4, 8}, \
     "-1 one block; 0 one block per tile; k: k x SM count blocks, grid-stride (run-time: " \
     "every k shares one cubin)", .runtime_from = 1}, \
    {"UNROLL", 3, {1, 2, 4}, "unrolling of the loop over a block's tiles"}, \
    {"TYPE", 2, {0, 1}, \
     "element type: 0 float (at_ssum, at_sdot), 1 double (at_dsum, at_ddot); left out of " \
     "texts at 0", 0, 1}, \
}

/* ---------------- legality ---------------- */

static int rd_is_pow2(int v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* Registers per thread, roughly: the loads of one tile in flight (x, and
 * y for dot), the per-item accumulators, addresses and loop state (a
 * double takes two registers). */
static int rd_register_estimate(const int *cfg, int dot)
{
    int words = cfg[RD_TYPE] == 1 ? 2 : 1;
    return 24 + cfg[RD_ITEMS] * (cfg[RD_VEC] * (dot ? 2 : 1) + 1) * words;
}

/* Bytes of one element of configuration cfg's type. */
static int rd_elem_size(const int *cfg)
{
    return cfg[RD_TYPE] == 1 ? 8 : 4;
}

/* The double configurations (TYPE 1), a small lattice on top of the rules
 * of rd_valid: the seed styles (STYLE 0, 1, 2, 4) as the seeds wrote them,
 * one element per thread and load (ITEMS=1, VEC=1, UNROLL=1) in blocks of
 * 1024 threads or a fixed grid (GRID < -1); the warp shuffle with 16-byte
 * loads (VEC=2), ITEMS 2 or 4, UNROLL 1, BLOCK >= 256, finishing by the last
 * block (2) or the accumulator (3), or as one block of 1024 threads (GRID=-1,
 * FINISH=1). No gather finish (4): its tag shares a 64-bit word with a
 * float. 1 if cfg is in it, else 0 with the reason. */
static int rd_valid_double(const int *cfg, char *why, size_t len)
{
    int style = cfg[RD_STYLE], finish = cfg[RD_FINISH], block = cfg[RD_BLOCK];
    int items = cfg[RD_ITEMS], vec = cfg[RD_VEC], grid = cfg[RD_GRID];
    if (finish == RD_FINISH_GATHER || vec == 4) {
        snprintf(why, len, "double: VEC 1 or 2 (16-byte loads) and FINISH 0..3 (the gather "
                 "tags a float)");
        return 0;
    }
    if (style != RD_STYLE_SHUFFLE) {
        if (items != 1 || vec != 1 || cfg[RD_UNROLL] != 1 || (block != 1024 && grid >= -1)) {
            snprintf(why, len, "double, seed styles: ITEMS=1, VEC=1, UNROLL=1 and BLOCK=1024 "
                     "or a fixed grid, as the seeds");
            return 0;
        }
        return 1;
    }
    if (vec != 2 || (items != 2 && items != 4) || cfg[RD_UNROLL] != 1 || block < 256) {
        snprintf(why, len, "double, warp shuffle: VEC=2, ITEMS 2 or 4, UNROLL=1, BLOCK >= 256");
        return 0;
    }
    if (grid == -1 ? block != 1024 : finish != RD_FINISH_LAST_BLOCK &&
                                     finish != RD_FINISH_ACCUMULATOR) {
        snprintf(why, len, "double, warp shuffle: FINISH 2 or 3, or one block of 1024 threads");
        return 0;
    }
    return 1;
}

/* The constraints, each a reason a configuration is not worth compiling:
 * ITEMS x VEC <= 16 floats per operand in flight per thread and tile (more
 * only costs registers); with UNROLL at most 32. A single block (GRID=-1)
 * reduces once, so it uses the seeds' serial sum (STYLE 4, which means a
 * single block) or the warp shuffle, and writes the result itself (FINISH
 * 1). One block per tile (GRID 0) has no loop to unroll. Persistent grids
 * (GRID k > 0) fill between half and all of an SM's thread slots, read
 * 16-byte vectors (mismatched dot operands fall back at run time) and
 * reduce once per block, where the block style is immaterial (shuffle).
 * FINISH 3 (accumulator) is a latency finish: with the shuffle style only
 * (one block reduction, then one thread's atomics); every GRID but the
 * single block, VEC 1..4 with one block per tile (GRID 0: the few-block
 * grids for small n), VEC 4 with persistent grids as above. FINISH 4
 * (gather) is a latency finish for few blocks: the shuffle style with one
 * block per tile (GRID 0). */
static int rd_valid(const int *cfg, const at_device_info *dev, int dot,
                    char *why, size_t len)
{
    int style = cfg[RD_STYLE], finish = cfg[RD_FINISH], block = cfg[RD_BLOCK];
    int items = cfg[RD_ITEMS], vec = cfg[RD_VEC], grid = cfg[RD_GRID];
    int unroll = cfg[RD_UNROLL];
    int max_threads = dev && dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024;
    int sm_threads = dev && dev->max_threads_per_sm > 0 ? dev->max_threads_per_sm : 2048;
    int regs_per_block = dev && dev->regs_per_block > 0 ? dev->regs_per_block : 65536;
    if (style < 0 || style > 4 || finish < 0 || finish > 4) {
        snprintf(why, len, "STYLE %d / FINISH %d out of range (0..4 / 0..4)", style, finish);
        return 0;
    }
    if (cfg[RD_TYPE] != 0 && cfg[RD_TYPE] != 1) {
        snprintf(why, len, "TYPE %d is not 0 (float) or 1 (double)", cfg[RD_TYPE]);
        return 0;
    }
    if (cfg[RD_TYPE] == 1 && !rd_valid_double(cfg, why, len))
        return 0;
    if (!rd_is_pow2(block) || block < 64 || block > max_threads) {
        snprintf(why, len, "BLOCK %d must be a power of two in 64..%d", block, max_threads);
        return 0;
    }
    if (vec != 1 && vec != 2 && vec != 4) {
        snprintf(why, len, "VEC %d is not 1, 2 or 4", vec);
        return 0;
    }
    if (items < 1 || unroll < 1 || unroll > 16) {
        snprintf(why, len, "ITEMS %d / UNROLL %d out of range", items, unroll);
        return 0;
    }
    int words = rd_elem_size(cfg) / 4;
    if (items * vec * words > 16 || items * vec * words * unroll > 32) {
        snprintf(why, len, "ITEMS x VEC = %d words in flight (max 16), x UNROLL = %d (max 32)",
                 items * vec * words, items * vec * words * unroll);
        return 0;
    }
    if ((style == RD_STYLE_SINGLE) != (grid == -1) && !(grid == -1 && style == RD_STYLE_SHUFFLE)) {
        snprintf(why, len, "a single block (GRID=-1) goes with STYLE 4 (serial) or 3 (shuffle), "
                 "and STYLE 4 with GRID=-1");
        return 0;
    }
    if (grid == -1 && finish != RD_FINISH_SECOND_PASS) {
        snprintf(why, len, "a single block writes the result itself: it takes FINISH=1");
        return 0;
    }
    if (finish == RD_FINISH_ACCUMULATOR && style != RD_STYLE_SHUFFLE) {
        snprintf(why, len, "the accumulator finish (FINISH=3) goes with the warp shuffle (STYLE=3)");
        return 0;
    }
    if (finish == RD_FINISH_GATHER && (style != RD_STYLE_SHUFFLE || grid != 0)) {
        snprintf(why, len, "the gather finish (FINISH=4) goes with the warp shuffle (STYLE=3) "
                 "and one block per tile (GRID=0)");
        return 0;
    }
    if (grid == 0 && unroll != 1) {
        snprintf(why, len, "one block per tile (GRID=0) has no loop to unroll");
        return 0;
    }
    if (grid > 0) {
        if (style != RD_STYLE_SHUFFLE || vec * words != 4) {
            snprintf(why, len, "persistent grids use STYLE=3 and 16-byte loads (VEC=4, or 2 "
                     "for double)");
            return 0;
        }
        if (grid * block > sm_threads || 2 * grid * block < sm_threads) {
            snprintf(why, len, "GRID=%d x BLOCK=%d threads per SM is not within %d..%d",
                     grid, block, sm_threads / 2, sm_threads);
            return 0;
        }
    }
    int regs = rd_register_estimate(cfg, dot);
    int limit = regs_per_block / block;
    if (limit > 255)
        limit = 255;
    if (regs > limit) {
        snprintf(why, len, "about %d registers per thread, BLOCK=%d allows %d",
                 regs, block, limit);
        return 0;
    }
    /* Shared memory: at most BLOCK elements, always under the 48 KiB default. */
    return 1;
}

static int rd_valid_sum(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    return rd_valid(cfg, dev, 0, why, len);
}

static int rd_valid_dot(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    return rd_valid(cfg, dev, 1, why, len);
}

/* Blocks of the first pass when n floats are read with vectors of `width`
 * floats (sm_count: the device's; GRID=k scales it). */
static long long rd_grid(const int *cfg, long long n, int width, int sm_count)
{
    long long tile = (long long)cfg[RD_BLOCK] * cfg[RD_ITEMS];
    long long tiles = (n / width + tile - 1) / tile;
    if (tiles < 1)
        tiles = 1;
    if (cfg[RD_GRID] < 0)
        return -(long long)cfg[RD_GRID];
    if (cfg[RD_GRID] == 0)
        return tiles;
    long long persistent = (long long)cfg[RD_GRID] * (sm_count > 0 ? sm_count : 1);
    return tiles < persistent ? tiles : persistent;
}

/* Sum and dot compute FP32 and FP64 vectors: exact math, no ops, order or
 * batch. */
static int rd_accepts(const tpl_problem *p)
{
    return (p->dtype == AT_R_32F || p->dtype == AT_R_64F) && p->math == AT_MATH_DEFAULT &&
           p->op_a == AT_OP_N && p->op_b == AT_OP_N && p->order == AT_ROW_MAJOR &&
           tpl_problem_batch(p) == 1;
}

/* The TYPE value that computes problems of p's element type. */
static int rd_type_of(const tpl_problem *p)
{
    return p->dtype == AT_R_64F ? 1 : 0;
}

static int rd_applicable(const int *cfg, const tpl_problem *problem)
{
    long long n = problem->dims[0];
    if (!tpl_family_accepts(&tpl_sum, problem) || n < 0)     /* sum and dot: one kind */
        return 0;
    if (cfg[RD_TYPE] != rd_type_of(problem))                 /* types never cross */
        return 0;
    if (cfg[RD_GRID] == -1)
        return n <= RD_SINGLE_MAX_N;
    /* gather: at most RD_GATHER_MAX blocks even when misaligned operands
     * make run() fall back to scalar loads (VEC times the tiles) */
    if (cfg[RD_FINISH] == RD_FINISH_GATHER)
        return rd_grid(cfg, n, 1, 1) <= RD_GATHER_MAX;
    return rd_grid(cfg, n, cfg[RD_VEC], 1) <= INT_MAX;
}

/* Float atomics (FINISH 0 into the result, 3 into the float64
 * accumulator) add in arrival order: not reproducible bit for bit. */
static int rd_deterministic(const int *cfg)
{
    return cfg[RD_FINISH] == RD_FINISH_SECOND_PASS || cfg[RD_FINISH] == RD_FINISH_LAST_BLOCK ||
           cfg[RD_FINISH] == RD_FINISH_GATHER;
}

/* ---------------- running ---------------- */

static at_status rd_run(at_exec *ex, const int *cfg, tpl_args *args, int dot)
{
    long long n = args->problem.dims[0];
    CUdeviceptr x = args->operand[TPL_RED_X].ptr, result = args->operand[TPL_RED_RESULT].ptr;
    CUdeviceptr y = dot ? args->operand[TPL_RED_Y].ptr : x;
    at_status s = tpl_check_problem(ex, dot ? &tpl_dot : &tpl_sum, &args->problem);
    if (s != AT_OK)
        return s;
    if (cfg[RD_TYPE] != rd_type_of(&args->problem))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "%s: a TYPE=%d configuration does not compute "
                       "%s elements", dot ? "dot" : "sum", cfg[RD_TYPE],
                       tpl_dtype_name(args->problem.dtype));
    const unsigned es = (unsigned)rd_elem_size(cfg);     /* bytes per element */
    if (n < 0)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "%s: n = %lld is negative", dot ? "dot" : "sum", n);
    if (!result || (result & (es - 1)))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "%s: result pointer is NULL or not %u-byte aligned",
                       dot ? "dot" : "sum", es);
    if (n == 0)
        return ex_memset32(ex, result, 0, es / 4);
    if (!x || !y || (x & (es - 1)) || (y & (es - 1)))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "%s: input pointer is NULL or not %u-byte aligned",
                       dot ? "dot" : "sum", es);

    /* Vector loads start after `head` scalars that bring x to a VEC-element
     * boundary; dot needs y to share x's misalignment, else scalar loads. */
    int width = cfg[RD_VEC], vec_ok = width > 1, head = 0;
    if (vec_ok) {
        int mx = (int)((x / es) & (CUdeviceptr)(width - 1));
        int my = (int)((y / es) & (CUdeviceptr)(width - 1));
        if (mx != my) {
            vec_ok = 0;
        } else {
            head = (width - mx) & (width - 1);
            if (head > n)
                head = (int)n;
        }
    }
    if (!vec_ok)
        width = 1;

    int sm_count = ex->dev ? ex->dev->sm_count : 1;
    long long grid = rd_grid(cfg, n - head, width, sm_count);
    if (grid > INT_MAX)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "%s: n = %lld needs %lld blocks with %s",
                       dot ? "dot" : "sum", n, grid, "this configuration");

    CUdeviceptr partials = 0, counter = 0;
    int finish = cfg[RD_FINISH];
    if (grid > 1 && (finish == RD_FINISH_SECOND_PASS || finish == RD_FINISH_LAST_BLOCK)) {
        s = ex_scratch(ex, RD_SLOT_PARTIALS, (size_t)grid * es, &partials);
        if (s != AT_OK)
            return s;
    }
    if (grid > 1 && (finish == RD_FINISH_LAST_BLOCK || finish == RD_FINISH_ACCUMULATOR)) {
        /* The kernel leaves the counter (and the accumulator) at 0; only a
         * new buffer is cleared, once, in stream order before the kernel. */
        s = ex_scratch_zeroed(ex, RD_SLOT_COUNTER, RD_COUNTER_BYTES, &counter);
        if (s != AT_OK)
            return s;
        if (finish == RD_FINISH_ACCUMULATOR)
            partials = counter + RD_ACC_OFFSET;
    }
    unsigned epoch = 0;
    if (grid > 1 && finish == RD_FINISH_GATHER) {
        if (grid > RD_GATHER_MAX)
            return ex_fail(ex, AT_ERR_UNSUPPORTED, "%s: n = %lld needs %lld blocks; the gather "
                           "finish takes at most %d", dot ? "dot" : "sum", n, grid, RD_GATHER_MAX);
        s = ex_scratch_zeroed(ex, RD_SLOT_GATHER, (size_t)grid * 8, &partials);
        if (s != AT_OK)
            return s;
        /* 1, 2, ...: a fresh (zeroed) slot never carries the current tag;
         * a wrap after 2^32 - 1 calls skips 0 */
        if (++ex->epoch == 0)
            ex->epoch = 1;
        epoch = ex->epoch;
    }
    if (grid > 1 && finish == RD_FINISH_ATOMIC) {
        s = ex_memset32(ex, result, 0, es / 4);
        if (s != AT_OK)
            return s;
    }

    void *main_args[] = {&x, &y, &n, &head, &vec_ok, &result, &partials, &counter, &epoch};
    unsigned block = (unsigned)cfg[RD_BLOCK];
    s = ex_launch(ex, "reduce_main", (unsigned)grid, 1, 1, block, 1, 1, 0, main_args);
    if (s != AT_OK || grid == 1 || finish != RD_FINISH_SECOND_PASS)
        return s;
    unsigned count = (unsigned)grid;
    void *finish_args[] = {&partials, &count, &result};
    return ex_launch(ex, "reduce_finish", 1, 1, 1, block, 1, 1, 0, finish_args);
}

static at_status rd_run_sum(at_exec *ex, const int *cfg, tpl_args *args)
{
    return rd_run(ex, cfg, args, 0);
}

static at_status rd_run_dot(at_exec *ex, const int *cfg, tpl_args *args)
{
    return rd_run(ex, cfg, args, 1);
}

static void rd_work_sum(const tpl_problem *problem, double *flops, double *bytes)
{
    *flops = (double)problem->dims[0];
    *bytes = (problem->dtype == AT_R_64F ? 8.0 : 4.0) * (double)problem->dims[0];
}

static void rd_work_dot(const tpl_problem *problem, double *flops, double *bytes)
{
    *flops = 2.0 * (double)problem->dims[0];
    *bytes = (problem->dtype == AT_R_64F ? 16.0 : 8.0) * (double)problem->dims[0];
}

/* ---------------- verification ---------------- */

/* x (and y) uniform in [0, 1) from seed, a result element (poisoned by the
 * worker), and the float64 reference kept in device memory for check():
 * FP32 data from tpl_fill_uniform summed in plain float64 (tpl_ref_reduce),
 * FP64 data with all 53 bits random (tpl_fill_f64) summed compensated
 * (tpl_ref_reduce_f64), since a plain float64 sum errs as much as the
 * double kernel under test. */
static at_status rd_prepare(at_exec *ref, const tpl_problem *problem,
                            unsigned long long seed, tpl_workset *ws, int dot)
{
    at_status s = tpl_check_problem(ref, dot ? &tpl_dot : &tpl_sum, problem);
    if (s != AT_OK)
        return s;
    long long n = problem->dims[0];
    if (n < 0)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "%s: bad problem size", dot ? "dot" : "sum");
    int f64 = problem->dtype == AT_R_64F;
    size_t es = f64 ? sizeof(double) : sizeof(float);
    size_t bytes = (size_t)(n > 0 ? n : 1) * es;
    CUdeviceptr x = 0, y = 0, result = 0, expected = 0;
    s = tpl_ws_alloc(ref, ws, bytes, &x);
    if (s == AT_OK)
        s = f64 ? tpl_fill_f64(ref, x, n, seed, 0.0, 1.0)
                : tpl_fill_uniform(ref, x, n, seed, 0.0f, 1.0f);
    if (s == AT_OK && dot)
        s = tpl_ws_alloc(ref, ws, bytes, &y);
    if (s == AT_OK && dot)
        s = f64 ? tpl_fill_f64(ref, y, n, seed ^ 0x5DEECE66DULL, 0.0, 1.0)
                : tpl_fill_uniform(ref, y, n, seed ^ 0x5DEECE66DULL, 0.0f, 1.0f);
    if (s == AT_OK)
        s = tpl_ws_alloc(ref, ws, es, &result);
    if (s == AT_OK)
        s = tpl_ws_alloc(ref, ws, sizeof(double), &expected);
    double value = 0.0;
    if (s == AT_OK && n > 0)
        s = f64 ? tpl_ref_reduce_f64(ref, n, x, y, &value) : tpl_ref_reduce(ref, n, x, y, &value);
    if (s == AT_OK)
        s = ex_upload(ref, expected, &value, sizeof value);
    if (s != AT_OK)
        return s;
    ws->args = tpl_reduce_args(n, x, y, result);
    ws->args.problem = *problem;
    ws->out = result;
    ws->out_bytes = es;
    ws->out_initial = 0;
    ws->reference = expected;
    return AT_OK;
}

static at_status rd_prepare_sum(at_exec *ref, const tpl_problem *problem,
                                unsigned long long seed, tpl_workset *ws)
{
    return rd_prepare(ref, problem, seed, ws, 0);
}

static at_status rd_prepare_dot(at_exec *ref, const tpl_problem *problem,
                                unsigned long long seed, tpl_workset *ws)
{
    return rd_prepare(ref, problem, seed, ws, 1);
}

/* |result - reference| / |reference| in float64 (|result| when the
 * reference is 0); +inf for NaN/Inf. */
static at_status rd_check(at_exec *ref, tpl_workset *ws, double *error)
{
    float got32 = 0.0f;
    double got = 0.0, expected = 0.0;
    at_status s = ws->out_bytes == sizeof got ? ex_download(ref, &got, ws->out, sizeof got)
                                              : ex_download(ref, &got32, ws->out, sizeof got32);
    if (ws->out_bytes != sizeof got)
        got = got32;
    if (s == AT_OK)
        s = ex_download(ref, &expected, ws->reference, sizeof expected);
    if (s != AT_OK)
        return s;
    if (!isfinite(got))
        *error = INFINITY;
    else if (expected == 0.0)
        *error = fabs(got);
    else
        *error = fabs(got - expected) / fabs(expected);
    return AT_OK;
}

/* Values in [0, 1) are all positive, so the relative rounding error of a
 * float32 sum grows like sqrt(terms) * 2^-24 for the tree and chain parts
 * together; at 2^28 measured errors are ~1e-6, so 1e-5 leaves margin, and
 * beyond 2^28 the bound grows with sqrt(n). The rule per type: the same
 * bound in units of the type's roundoff, 1e-5 * u(type) / 2^-24 (double:
 * 1.86e-14), against a reference far more accurate than that (FP32: plain
 * float64; FP64: compensated, about n 2^-106). */
static double rd_tolerance(const tpl_problem *problem)
{
    double n = (double)problem->dims[0];
    double big = (double)(1LL << 28);
    double scale = problem->dtype == AT_R_64F ? ldexp(1.0, -53) / ldexp(1.0, -24) : 1.0;
    return scale * (n <= big ? 1e-5 : 1e-5 * sqrt(n / big));
}

/* ---------------- descriptors ---------------- */

static const tpl_baseline rd_baselines[] = {
    {"seed_dot_method1", "STYLE=4,FINISH=1,BLOCK=1024,ITEMS=1,VEC=1,GRID=-1,UNROLL=1",
     "seed 3 method 1: one block, thread 0 adds the block's values serially"},
    {"seed_dot_method2", "STYLE=0,FINISH=0,BLOCK=1024,ITEMS=1,VEC=1,GRID=0,UNROLL=1",
     "seed 3 method 2: one element per thread, serial block sum, atomicAdd per block"},
    {"seed_dot_method3", "STYLE=1,FINISH=0,BLOCK=1024,ITEMS=1,VEC=1,GRID=0,UNROLL=1",
     "seed 3 method 3: one element per thread, halving tree, atomicAdd per block"},
    {"seed_tree_sum", "STYLE=2,FINISH=1,BLOCK=256,ITEMS=1,VEC=1,GRID=-32,UNROLL=1",
     "seed 4: fixed 32 x 256 grid-stride, interleaved mask tree, partials by a second pass"},
    {"f64_default", "STYLE=3,FINISH=2,BLOCK=512,ITEMS=4,VEC=2,GRID=2,UNROLL=1,TYPE=1",
     "double (at_dsum, at_ddot) without tuning: the FP32 default's shape with 16-byte loads "
     "of two doubles; deterministic, every n"},
};

static const tpl_problem rd_tuning_problems[] = {
    TPL_PROBLEM(1, {1LL << 10}), TPL_PROBLEM(1, {1LL << 12}), TPL_PROBLEM(1, {1LL << 14}),
    TPL_PROBLEM(1, {1LL << 16}),
    TPL_PROBLEM(1, {1LL << 18}), TPL_PROBLEM(1, {1LL << 20}), TPL_PROBLEM(1, {1LL << 22}),
    TPL_PROBLEM(1, {1LL << 24}),
    TPL_PROBLEM(1, {1LL << 26}), TPL_PROBLEM(1, {1LL << 28}), TPL_PROBLEM(1, {1000003}),
    {.n_dims = 1, .dims = {1LL << 20}, .dtype = AT_R_64F},
    {.n_dims = 1, .dims = {1LL << 27}, .dtype = AT_R_64F},
};

#define RD_DEFAULT "STYLE=3,FINISH=2,BLOCK=512,ITEMS=4,VEC=4,GRID=2,UNROLL=1"

const tpl_family tpl_sum = {
    .name = "sum",
    .source = "reduce.cu",
    .fixed_options = "-DRED_DOT=0",
    .summary = "sum of a float or double vector into device memory (at_ssum, at_dsum)",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 0,
    .n_params = RD_NPARAMS,
    .params = RD_PARAMS,
    .valid = rd_valid_sum,
    .accepts = rd_accepts,
    .applicable = rd_applicable,
    .deterministic = rd_deterministic,
    .run = rd_run_sum,
    .work = rd_work_sum,
    .prepare = rd_prepare_sum,
    .check = rd_check,
    .tolerance = rd_tolerance,
    .default_config = RD_DEFAULT,
    .n_baselines = (int)(sizeof rd_baselines / sizeof rd_baselines[0]),
    .baselines = rd_baselines,
    .n_tuning_problems = (int)(sizeof rd_tuning_problems / sizeof rd_tuning_problems[0]),
    .tuning_problems = rd_tuning_problems,
};

const tpl_family tpl_dot = {
    .name = "dot",
    .source = "reduce.cu",
    .fixed_options = "-DRED_DOT=1",
    .summary = "dot product of two float or double vectors into device memory (at_sdot, at_ddot)",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 0,
    .n_params = RD_NPARAMS,
    .params = RD_PARAMS,
    .valid = rd_valid_dot,
    .accepts = rd_accepts,
    .applicable = rd_applicable,
    .deterministic = rd_deterministic,
    .run = rd_run_dot,
    .work = rd_work_dot,
    .prepare = rd_prepare_dot,
    .check = rd_check,
    .tolerance = rd_tolerance,
    .default_config = RD_DEFAULT,
    .n_baselines = (int)(sizeof rd_baselines / sizeof rd_baselines[0]),
    .baselines = rd_baselines,
    .n_tuning_problems = (int)(sizeof rd_tuning_problems / sizeof rd_tuning_problems[0]),
    .tuning_problems = rd_tuning_problems,
};
