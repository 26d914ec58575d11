/* jacobi.c: descriptor of the Jacobi family (over jacobi.cu, float and double): space,
 * legality, the host side of a whole solve (batches of sweeps), inputs and verification. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "tpl.h"

extern const tpl_family tpl_jacobi;

/* Parameter positions, in descriptor order. */
enum { JC_ROW_THREADS, JC_ROWS_PER_BLOCK, JC_VEC, JC_UNROLL, JC_XCACHE, JC_CHECK_EVERY,
       JC_ORDER, JC_TYPE, JC_NPARAMS };

#define JC_SLOT_X 0              /* two ping-pong x buffers */
#define JC_SLOT_CTL 1            /* control words + ring of per-sweep norms */
#define JC_CTL_WORDS 4           /* [0] bad-input flags, [1] stop sweep, [2..3] pad */
#define JC_MAX_CHECK_EVERY 1000  /* bounds the ring and the host buffer */
#define JC_INF_BITS 0x7f800000u
#define JC_INF_BITS64 0x7ff0000000000000ull
/* Shared memory the sweep kernel declares statically (block reductions),
 * an upper bound: 3 arrays of 32 words plus the stop flag (double: 8-byte
 * words, JC_STATIC_SMEM64). */
#define JC_STATIC_SMEM 400
#define JC_STATIC_SMEM64 800
#define JC_GENERIC_SMEM_OPTIN (227 * 1024)
/* Solve settings of the tuner's workset. */
#define JC_WS_TOL 1e-6f
#define JC_WS_MAX_ITER 10000
/* Sweeps the workset's solve needs (A = U[0,1) off the diagonal, n on it,
 * b mean-zero): measured 14 at n = 1024, 4096, 16384 and 15 at 8192 on an
 * H200. work() reports JC_WORK_SWEEPS sweeps of A, so that the tuner's GB/s
 * (work bytes / time to solution) reads as bytes of A read per second. */
#define JC_WORK_SWEEPS 14
/* Largest ||A x - b|| / ||b|| accepted: the workset's solve stops at a
 * relative update of 1e-6 and contracts by ~0.5, so x is within ~1e-6
 * (measured residuals 4.6e-7..6.7e-7 on an H200); 1e-4 leaves a wide margin
 * and still rejects a single wrong row (residual ~1e-2 at n = 16384). */
#define JC_TOLERANCE 1e-4
/* Double: the workset solves to a relative update of 1e-12 (JC_WS_TOL64),
 * about twice the sweeps (JC_WORK_SWEEPS64, an estimate from the FP32
 * rate: 14 sweeps per 1e-6), and its residual must be below 1e-9: three
 * orders of magnitude above what the solve reaches, seven below a wrong row. */
#define JC_WS_TOL64 1e-12
#define JC_WORK_SWEEPS64 28
#define JC_TOLERANCE64 1e-9

#define JC_PARAMS { \
    {"ROW_THREADS", 9, {1, 2, 4, 8, 16, 32, 64, 128, 256}, \
     "threads per row: 1 thread per row (seed), 2..16 lanes, 32 a warp, 64..256 several warps"}, \
    {"ROWS_PER_BLOCK", 9, {1, 2, 4, 8, 16, 32, 64, 128, 256}, \
     "rows per block (block = ROW_THREADS x ROWS_PER_BLOCK threads, 64..1024)"}, \
    {"VEC", 3, {1, 2, 4}, "floats per load of A and x (scalar head/tail: any n, any alignment)"}, \
    {"UNROLL", 3, {1, 2, 4}, "vector loads in flight per thread per step (independent sums)"}, \
    {"XCACHE", 2, {0, 1}, \
     "x read through: 0 the read-only cache, 1 shared memory (all of x, persistent blocks)"}, \
    {"CHECK_EVERY", 2, {10, 25}, \
     "sweeps launched between host reads of the norms (1, the seed_basic value, is dominated)", \
     1}, \
    {"ORDER", 2, {0, 1}, \
     "row order: 0 top to bottom every sweep (seed), 1 alternating (a sweep starts on the " \
     "rows of A the last one left in L2)", 1}, \
    {"TYPE", 2, {0, 1}, \
     "element type of A, b, x: 0 float (at_sjacobi), 1 double (at_djacobi); left out of texts " \
     "at 0", 0, 1}, \
}

/* ---------------- legality ---------------- */

static int jc_is_pow2(int v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

/* Registers per thread, roughly (ptxas on sm_90: 42 for VEC 4 x UNROLL 2,
 * 52 for 4 x 4): the loads in flight of A and x plus addresses and state. */
static int jc_register_estimate(const int *cfg)
{
    return 32 + (3 * cfg[JC_VEC] * cfg[JC_UNROLL] * (cfg[JC_TYPE] == 1 ? 2 : 1)) / 2;
}

/* Bytes of one element of cfg's type. */
static int jc_elem_size(const int *cfg)
{
    return cfg[JC_TYPE] == 1 ? 8 : 4;
}

/* The double configurations (TYPE 1), a small lattice on top of jc_valid's
 * rules: the seeds' shape (one thread per row, 256 rows per block, VEC=1,
 * UNROLL=1, XCACHE=0, any CHECK_EVERY and ORDER), and around the FP32
 * winners: 16-byte loads (VEC=2), ROW_THREADS 16 or 32, ROWS_PER_BLOCK 4 or
 * 8, UNROLL 2 or 4, checks every 25 sweeps, alternating order. 1 if cfg is
 * in it, else 0 with the reason. */
static int jc_valid_double(const int *cfg, char *why, size_t len)
{
    int rt = cfg[JC_ROW_THREADS], rpb = cfg[JC_ROWS_PER_BLOCK];
    if (rt == 1 && rpb == 256 && cfg[JC_VEC] == 1 && cfg[JC_UNROLL] == 1 && !cfg[JC_XCACHE])
        return 1;
    if (cfg[JC_VEC] != 2 || (rt != 16 && rt != 32) || (rpb != 4 && rpb != 8) ||
        (cfg[JC_UNROLL] != 2 && cfg[JC_UNROLL] != 4) || cfg[JC_CHECK_EVERY] != 25 ||
        cfg[JC_ORDER] != 1) {
        snprintf(why, len, "double: the seeds' shape, or VEC=2, ROW_THREADS 16/32, "
                 "ROWS_PER_BLOCK 4/8, UNROLL 2/4, CHECK_EVERY=25, ORDER=1");
        return 0;
    }
    return 1;
}

static int jc_valid(const int *cfg, const at_device_info *dev, char *why, size_t len)
{
    int rt = cfg[JC_ROW_THREADS], rpb = cfg[JC_ROWS_PER_BLOCK];
    int max_threads = dev && dev->max_threads_per_block > 0 ? dev->max_threads_per_block : 1024;
    int regs_per_block = dev && dev->regs_per_block > 0 ? dev->regs_per_block : 65536;
    if (!jc_is_pow2(rt) || rt > 256) {
        snprintf(why, len, "ROW_THREADS %d must be a power of two in 1..256", rt);
        return 0;
    }
    if (cfg[JC_TYPE] != 0 && cfg[JC_TYPE] != 1) {
        snprintf(why, len, "TYPE %d is not 0 (float) or 1 (double)", cfg[JC_TYPE]);
        return 0;
    }
    if (cfg[JC_TYPE] == 1 && !jc_valid_double(cfg, why, len))
        return 0;
    if (!jc_is_pow2(rpb)) {
        snprintf(why, len, "ROWS_PER_BLOCK %d must be a power of two", rpb);
        return 0;
    }
    long long threads = (long long)rt * rpb;
    /* Blocks of one warp cap the SM at 32 blocks x 32 threads (half
     * occupancy) for a kernel that needs every byte in flight. */
    if (threads < 64 || threads > max_threads) {
        snprintf(why, len, "block of %lld threads (ROW_THREADS x ROWS_PER_BLOCK) is not in 64..%d",
                 threads, max_threads);
        return 0;
    }
    if (cfg[JC_VEC] != 1 && cfg[JC_VEC] != 2 && cfg[JC_VEC] != 4) {
        snprintf(why, len, "VEC %d is not 1, 2 or 4", cfg[JC_VEC]);
        return 0;
    }
    if (cfg[JC_UNROLL] < 1 || cfg[JC_UNROLL] > 8) {
        snprintf(why, len, "UNROLL %d is not in 1..8", cfg[JC_UNROLL]);
        return 0;
    }
    if (cfg[JC_XCACHE] != 0 && cfg[JC_XCACHE] != 1) {
        snprintf(why, len, "XCACHE %d is not 0 or 1", cfg[JC_XCACHE]);
        return 0;
    }
    /* All of x in shared memory leaves room for few blocks per SM (3 at
     * n = 16384 on 227 KiB): small blocks would starve the SM of threads. */
    if (cfg[JC_XCACHE] == 1 && threads < 256) {
        snprintf(why, len, "XCACHE=1 keeps few blocks per SM: needs >= 256 threads per block, "
                 "got %lld", threads);
        return 0;
    }
    if (cfg[JC_CHECK_EVERY] < 1 || cfg[JC_CHECK_EVERY] > JC_MAX_CHECK_EVERY) {
        snprintf(why, len, "CHECK_EVERY %d is not in 1..%d", cfg[JC_CHECK_EVERY],
                 JC_MAX_CHECK_EVERY);
        return 0;
    }
    if (cfg[JC_ORDER] != 0 && cfg[JC_ORDER] != 1) {
        snprintf(why, len, "ORDER %d is not 0 or 1", cfg[JC_ORDER]);
        return 0;
    }
    int regs = jc_register_estimate(cfg);
    if ((long long)regs * threads > regs_per_block) {
        snprintf(why, len, "about %d registers x %lld threads exceed %d per block", regs,
                 threads, regs_per_block);
        return 0;
    }
    return 1;
}

/* Jacobi solves FP32 and FP64 systems: exact math, no ops, row-major, one
 * system. */
static int jc_accepts(const tpl_problem *p)
{
    return (p->dtype == AT_R_32F || p->dtype == AT_R_64F) && p->math == AT_MATH_DEFAULT &&
           p->op_a == AT_OP_N && p->op_b == AT_OP_N && p->order == AT_ROW_MAJOR &&
           tpl_problem_batch(p) == 1;
}

/* The TYPE value that solves problems of p's element type. */
static int jc_type_of(const tpl_problem *p)
{
    return p->dtype == AT_R_64F ? 1 : 0;
}

/* Static shared memory of cfg's sweep kernel, an upper bound. */
static long long jc_static_smem(const int *cfg)
{
    return cfg[JC_TYPE] == 1 ? JC_STATIC_SMEM64 : JC_STATIC_SMEM;
}

static int jc_applicable(const int *cfg, const tpl_problem *problem)
{
    long long n = problem->dims[0];
    if (!tpl_family_accepts(&tpl_jacobi, problem) || n < 1 || n > (1 << 30))
        return 0;
    if (cfg[JC_TYPE] != jc_type_of(problem))                 /* types never cross */
        return 0;
    /* All of x must fit in one block's shared memory. */
    if (cfg[JC_XCACHE] && jc_elem_size(cfg) * n + jc_static_smem(cfg) > JC_GENERIC_SMEM_OPTIN)
        return 0;
    /* Sensible: a row group's step of columns does not dwarf the row (512:
     * the default's step, which must serve every n). */
    long long step = (long long)cfg[JC_ROW_THREADS] * cfg[JC_VEC] * cfg[JC_UNROLL];
    return step <= (n > 512 ? n : 512);
}

/* Norms are combined with integer atomicMax and every sum has a fixed order. */
static int jc_deterministic(const int *cfg)
{
    (void)cfg;
    return 1;
}

/* ---------------- the solve ---------------- */

static at_status jc_cuda(at_exec *ex, CUresult rc, const char *call)
{
    cudrv_describe(ex->cu, rc, call, ex->errmsg, ex->errlen);
    return rc == CUDA_ERROR_OUT_OF_MEMORY ? AT_ERR_NO_MEMORY : AT_ERR_CUDA;
}

static float jc_bits_float(unsigned u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Verdict on the norms of one sweep, exactly as the device judges them:
 * 1 converged, -1 non-finite, 0 go on. */
static int jc_verdict(const unsigned *norms, float tol)
{
    if (norms[0] >= JC_INF_BITS || norms[1] >= JC_INF_BITS)
        return -1;
    volatile float limit = tol * jc_bits_float(norms[1]);
    return jc_bits_float(norms[0]) <= limit ? 1 : 0;
}

static float jc_relative(const unsigned *norms)
{
    float d = jc_bits_float(norms[0]), m = jc_bits_float(norms[1]);
    if (norms[0] >= JC_INF_BITS || norms[1] >= JC_INF_BITS)
        return INFINITY;
    return m > 0.0f ? d / m : d;
}

/* The same for the double kernels' 64-bit norms. */
static int jc_verdict64(const unsigned long long *norms, double tol)
{
    double d, m;
    if (norms[0] >= JC_INF_BITS64 || norms[1] >= JC_INF_BITS64)
        return -1;
    memcpy(&d, &norms[0], sizeof d);
    memcpy(&m, &norms[1], sizeof m);
    volatile double limit = tol * m;
    return d <= limit ? 1 : 0;
}

static double jc_relative64(const unsigned long long *norms)
{
    double d, m;
    if (norms[0] >= JC_INF_BITS64 || norms[1] >= JC_INF_BITS64)
        return INFINITY;
    memcpy(&d, &norms[0], sizeof d);
    memcpy(&m, &norms[1], sizeof m);
    return m > 0.0 ? d / m : d;
}

/* Verdict (1 converged, -1 non-finite, 0 go on) and relative update of the
 * norms of one sweep at p, 4-byte (float) or 8-byte (double) words. */
static int jc_judge(const void *p, int f64, double tol, double *relative)
{
    if (f64) {
        unsigned long long w[2];
        memcpy(w, p, sizeof w);
        *relative = jc_relative64(w);
        return jc_verdict64(w, tol);
    }
    unsigned w[2];
    memcpy(w, p, sizeof w);
    *relative = jc_relative(w);
    return jc_verdict(w, (float)tol);
}

/* Grid, block and dynamic shared memory of the sweep kernel for size n. */
static at_status jc_geometry(at_exec *ex, const int *cfg, int n, unsigned *grid_out,
                             unsigned *threads_out, unsigned *smem_out)
{
    int rt = cfg[JC_ROW_THREADS], rpb = cfg[JC_ROWS_PER_BLOCK];
    long long nn = n;
    long long threads = (long long)rt * rpb;
    if (rt < 1 || rpb < 1 || threads > 1024)
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "jacobi: block of %lld threads", threads);
    unsigned smem = 0;
    long long grid = (nn + rpb - 1) / rpb;
    if (cfg[JC_XCACHE]) {
        long long bytes = (jc_elem_size(cfg) * nn + 15) / 16 * 16;
        long long static_smem = jc_static_smem(cfg);
        int optin = ex->dev && ex->dev->smem_per_block_optin > 0 ? ex->dev->smem_per_block_optin
                                                                 : JC_GENERIC_SMEM_OPTIN;
        if (bytes + static_smem > optin)
            return ex_fail(ex, AT_ERR_UNSUPPORTED, "jacobi: XCACHE=1 needs %lld bytes of shared "
                           "memory for x (n = %d), the device allows %d", bytes, n, optin);
        smem = (unsigned)bytes;
        /* Persistent blocks: as many as fit at once. */
        if (ex->dev && ex->dev->sm_count > 0) {
            int per_sm_smem = ex->dev->smem_per_sm > 0 ? ex->dev->smem_per_sm : optin;
            long long by_smem = per_sm_smem / (bytes + static_smem + 1024);
            long long by_threads = (ex->dev->max_threads_per_sm > 0 ?
                                    ex->dev->max_threads_per_sm : 2048) / threads;
            long long per_sm = by_smem < by_threads ? by_smem : by_threads;
            if (per_sm > 32)
                per_sm = 32;
            if (per_sm < 1)
                per_sm = 1;
            if (grid > per_sm * ex->dev->sm_count)
                grid = per_sm * ex->dev->sm_count;
        }
    }
    if (grid > 0x7fffffffLL)
        grid = 0x7fffffffLL;
    *grid_out = (unsigned)grid;
    *threads_out = (unsigned)threads;
    *smem_out = smem;
    return AT_OK;
}

/* The whole solve: check the input on the device, then batches of
 * CHECK_EVERY sweeps with one small download each. Every sweep computes the
 * norms of its update; a sweep that finds the previous one converged (or
 * non-finite) records a stop and every later sweep returns at once, so a
 * batch never runs real sweeps past convergence. x receives the last
 * iterate except when the input check fails (x untouched). */
static at_status jc_run(at_exec *ex, const int *cfg, tpl_args *args)
{
    long long nn = args->problem.dims[0];
    int check_every = cfg[JC_CHECK_EVERY];
    int order = cfg[JC_ORDER];
    args->out.iterations = 0;
    args->out.residual = 0.0;
    at_status st = tpl_check_problem(ex, &tpl_jacobi, &args->problem);
    if (st != AT_OK)
        return st;
    if (nn < 1 || nn > (1 << 30))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "jacobi: size %lld out of range", nn);
    int n = (int)nn;
    if (cfg[JC_TYPE] != jc_type_of(&args->problem))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "jacobi: a TYPE=%d configuration does not solve "
                       "%s systems", cfg[JC_TYPE], tpl_dtype_name(args->problem.dtype));
    const int f64 = cfg[JC_TYPE] == 1;
    const size_t es = (size_t)jc_elem_size(cfg);     /* bytes per element and per norm */
    CUdeviceptr A = args->operand[TPL_JAC_A].ptr, b = args->operand[TPL_JAC_B].ptr,
                x = args->operand[TPL_JAC_X].ptr;
    if (!A || !b || !x)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "jacobi: NULL pointer");
    if ((A | b | x) & (es - 1))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "jacobi: A, b and x must be %zu-byte aligned", es);
    float tol = (float)args->scalar[TPL_JAC_TOL];
    double tol64 = args->scalar[TPL_JAC_TOL];
    long long max_iter64 = args->ints[TPL_JAC_MAX_ITER];
    if (max_iter64 < 1 || max_iter64 > 0x7fffffff || !(tol >= 0.0f) || !(tol64 >= 0.0))
        return ex_fail(ex, AT_ERR_INVALID_ARG, "jacobi: need tol >= 0 and max_iter in "
                       "1..2^31-1 (got %g, %lld)", tol64, max_iter64);
    void *tolp = f64 ? (void *)&tol64 : (void *)&tol;
    int max_iter = (int)max_iter64;
    if (check_every < 1 || check_every > JC_MAX_CHECK_EVERY)
        return ex_fail(ex, AT_ERR_INVALID_ARG, "jacobi: CHECK_EVERY %d not in 1..%d",
                       check_every, JC_MAX_CHECK_EVERY);
    unsigned grid, threads, smem;
    at_status s = jc_geometry(ex, cfg, n, &grid, &threads, &smem);
    if (s != AT_OK)
        return s;

    /* Scratch: x ping-pong buffers, control words and the norm ring (two
     * halves of check_every (d, m) pairs of es-byte words: batch k uses half
     * k % 2). */
    CUdeviceptr xbuf, ctl;
    size_t xoff = ((size_t)nn * es + 255) / 256 * 256;
    if ((s = ex_scratch(ex, JC_SLOT_X, 2 * xoff, &xbuf)) != AT_OK)
        return s;
    size_t pair = 2 * es;                           /* bytes of one sweep's norms */
    size_t ctl_words = JC_CTL_WORDS + 2 * (size_t)check_every * pair / 4;
    if ((s = ex_scratch(ex, JC_SLOT_CTL, ctl_words * 4, &ctl)) != AT_OK)
        return s;
    CUdeviceptr xb[2] = {xbuf, xbuf + xoff};
    CUdeviceptr ring = ctl + JC_CTL_WORDS * 4;
    unsigned host[JC_CTL_WORDS + 8 * JC_MAX_CHECK_EVERY];

    /* Input check (zero/non-finite diagonal, non-finite b or x) and x0. */
    if ((s = ex_memset32(ex, ctl, 0, JC_CTL_WORDS)) != AT_OK)
        return s;
    {
        unsigned cgrid = (unsigned)((nn + 255) / 256);
        if (cgrid > 1024)
            cgrid = 1024;
        void *cargs[] = {&A, &b, &x, &n, &ctl};
        if ((s = ex_launch(ex, "jacobi_check", cgrid, 1, 1, 256, 1, 1, 0, cargs)) != AT_OK)
            return s;
    }
    CUresult rc = ex->cu->MemcpyDtoDAsync(xb[0], x, (size_t)nn * es, ex->stream);
    if (rc != CUDA_SUCCESS)
        return jc_cuda(ex, rc, "cuMemcpyDtoDAsync(x0)");

    int launched = 0, done = 0, verdict = 0;
    while (!done) {
        int batch = max_iter - launched < check_every ? max_iter - launched : check_every;
        int half = (launched / check_every) % 2;
        CUdeviceptr slots = ring + (size_t)half * check_every * pair;
        if ((s = ex_memset32(ex, slots, 0, (size_t)batch * pair / 4)) != AT_OK)
            return s;
        for (int t = 0; t < batch; t++) {
            int k = launched + t;             /* sweep k reads xb[k%2], writes xb[(k+1)%2] */
            CUdeviceptr norms = slots + (size_t)t * pair;
            CUdeviceptr prev = 0;
            if (k > 0)
                prev = t > 0 ? norms - pair : ring + (size_t)(1 - half) * check_every * pair +
                                              (size_t)(check_every - 1) * pair;
            void *kargs[] = {&A, &b, &xb[k % 2], &xb[(k + 1) % 2], &n,
                             &norms, &prev, &ctl, tolp, &k, &order};
            s = ex_launch(ex, "jacobi_sweep", grid, 1, 1, threads, 1, 1, smem, kargs);
            if (s != AT_OK)
                return s;
        }
        if ((s = ex_download(ex, host, ctl, ctl_words * 4)) != AT_OK)
            return s;
        launched += batch;
        if (host[0] != 0u) {
            char what[128] = "";
            if (host[0] & 1u)
                strcat(what, " a zero or non-finite diagonal entry,");
            if (host[0] & 2u)
                strcat(what, " a non-finite entry of b,");
            if (host[0] & 4u)
                strcat(what, " a non-finite entry of the initial x,");
            if (what[0])
                what[strlen(what) - 1] = '\0';
            args->out.iterations = 0;
            args->out.residual = INFINITY;
            return ex_fail(ex, AT_ERR_DIVERGED, "jacobi: the input has%s (n = %d); x is unchanged",
                           what, n);
        }
        /* Sweeps completed: up to the device's stop, else all launched. */
        int completed = host[1] != 0u ? (int)host[1] : launched;
        if (completed > launched || completed < 1)
            return ex_fail(ex, AT_ERR_INTERNAL, "jacobi: device stop at sweep %u of %d",
                           host[1], launched);
        int k = completed - 1;
        int kh = (k / check_every) % 2, kt = k % check_every;
        const unsigned char *nk = (const unsigned char *)(host + JC_CTL_WORDS) +
                                  ((size_t)kh * check_every + kt) * pair;
        double relative = 0.0;
        verdict = jc_judge(nk, f64, f64 ? tol64 : (double)tol, &relative);
        args->out.iterations = completed;
        args->out.residual = relative;
        if (verdict != 0 || completed < launched || launched >= max_iter)
            done = 1;
        if (completed < launched && verdict == 0)
            return ex_fail(ex, AT_ERR_INTERNAL, "jacobi: device stopped at sweep %d but the "
                           "norms say go on", completed);
    }

    int final = args->out.iterations % 2;
    rc = ex->cu->MemcpyDtoDAsync(x, xb[final], (size_t)nn * es, ex->stream);
    if (rc != CUDA_SUCCESS)
        return jc_cuda(ex, rc, "cuMemcpyDtoDAsync(x)");
    if (verdict < 0)
        return ex_fail(ex, AT_ERR_DIVERGED, "jacobi: the iterate became Inf/NaN at sweep %d "
                       "(n = %d): the matrix is not diagonally dominant enough or holds "
                       "non-finite values", args->out.iterations, n);
    if (verdict == 0)
        return ex_fail(ex, AT_ERR_NOT_CONVERGED, "jacobi: relative update %g after %d sweeps "
                       "is above tol %g (n = %d); x holds the last iterate",
                       args->out.residual, args->out.iterations, f64 ? tol64 : (double)tol, n);
    return AT_OK;
}

/* For benchmarks only (declared where used): `sweeps` Jacobi sweeps of cfg
 * from args' x with no convergence test and no input check, queued on
 * ex's stream (ping-pong in scratch; the caller's x is read, not written).
 * Times the sweep kernel alone. */
at_status tpl_jacobi_bench_sweeps(at_exec *ex, const int *cfg, const tpl_args *args,
                                  int sweeps);
at_status tpl_jacobi_bench_sweeps(at_exec *ex, const int *cfg, const tpl_args *args,
                                  int sweeps)
{
    int n = (int)args->problem.dims[0];
    unsigned grid, threads, smem;
    at_status s = jc_geometry(ex, cfg, n, &grid, &threads, &smem);
    if (s != AT_OK)
        return s;
    if (cfg[JC_TYPE] != jc_type_of(&args->problem))
        return ex_fail(ex, AT_ERR_UNSUPPORTED, "jacobi: TYPE=%d for a %s problem", cfg[JC_TYPE],
                       tpl_dtype_name(args->problem.dtype));
    size_t es = (size_t)jc_elem_size(cfg);
    CUdeviceptr xbuf, ctl;
    size_t xoff = ((size_t)n * es + 255) / 256 * 256;
    if ((s = ex_scratch(ex, JC_SLOT_X, 2 * xoff, &xbuf)) != AT_OK ||
        (s = ex_scratch(ex, JC_SLOT_CTL, (JC_CTL_WORDS + 4) * 4, &ctl)) != AT_OK ||
        (s = ex_memset32(ex, ctl, 0, JC_CTL_WORDS + 4)) != AT_OK)
        return s;
    CUdeviceptr xb[2] = {xbuf, xbuf + xoff}, norms = ctl + JC_CTL_WORDS * 4, prev = 0;
    CUdeviceptr A = args->operand[TPL_JAC_A].ptr, b = args->operand[TPL_JAC_B].ptr;
    CUresult rc = ex->cu->MemcpyDtoDAsync(xb[0], args->operand[TPL_JAC_X].ptr, (size_t)n * es,
                                          ex->stream);
    if (rc != CUDA_SUCCESS)
        return jc_cuda(ex, rc, "cuMemcpyDtoDAsync(x0)");
    float tol = 0.0f;
    double tol64 = 0.0;
    void *tolp = es == 8 ? (void *)&tol64 : (void *)&tol;
    int order = cfg[JC_ORDER];
    for (int k = 0; k < sweeps; k++) {
        void *kargs[] = {&A, &b, &xb[k % 2], &xb[(k + 1) % 2], &n, &norms, &prev, &ctl, tolp,
                         &k, &order};
        if ((s = ex_launch(ex, "jacobi_sweep", grid, 1, 1, threads, 1, 1, smem, kargs)) != AT_OK)
            return s;
    }
    return AT_OK;
}

/* ---------------- work, inputs, verification ---------------- */

/* Convention: JC_WORK_SWEEPS sweeps (the workset's solve; double:
 * JC_WORK_SWEEPS64), each 2 n^2 flops and 4 n^2 (double: 8 n^2) bytes of A;
 * x, b are negligible. */
static void jc_work(const tpl_problem *p, double *flops, double *bytes)
{
    double n = (double)p->dims[0];
    int f64 = p->dtype == AT_R_64F;
    double sweeps = f64 ? JC_WORK_SWEEPS64 : JC_WORK_SWEEPS;
    *flops = 2.0 * n * n * sweeps;
    *bytes = (f64 ? 8.0 : 4.0) * n * n * sweeps;
}

/* The work of a finished solve: each sweep reads A once (x, b and the
 * update are O(n) and left out). */
static void jc_work_done(const tpl_args *a, double *flops, double *bytes)
{
    double n = (double)a->problem.dims[0];
    double sweeps = a->out.iterations > 0 ? a->out.iterations : 1;
    *flops = 2.0 * n * n * sweeps;
    *bytes = (a->problem.dtype == AT_R_64F ? 8.0 : 4.0) * n * n * sweeps;
}

/* A: off-diagonal uniform in [0, 1), diagonal n (strictly dominant since
 * each row's off-diagonal sum is below n - 1; the all-positive entries give
 * the iteration a dominant eigenvalue of about 0.5, so the solve takes about
 * 20 sweeps to 1e-6 at every n). b uniform in [-1, 1), x0 = 0. Double: the
 * same matrix with 53-bit random entries (tpl_fill_f64), solved to 1e-12. */
static at_status jc_prepare(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                            tpl_workset *ws)
{
    long long nn = p->dims[0];
    at_status st = tpl_check_problem(ref, &tpl_jacobi, p);
    if (st != AT_OK)
        return st;
    if (nn < 1 || nn > 46340)
        return ex_fail(ref, AT_ERR_INVALID_ARG, "jacobi: workset size %lld out of range", nn);
    int n = (int)nn;
    CUdeviceptr A, b, x, x0;
    at_status s;
    if (p->dtype == AT_R_64F) {
        size_t es = sizeof(double);
        if ((s = tpl_ws_alloc(ref, ws, (size_t)nn * nn * es, &A)) != AT_OK ||
            (s = tpl_ws_alloc(ref, ws, (size_t)nn * es, &b)) != AT_OK ||
            (s = tpl_ws_alloc(ref, ws, (size_t)nn * es, &x)) != AT_OK ||
            (s = tpl_ws_alloc(ref, ws, (size_t)nn * es, &x0)) != AT_OK ||
            (s = tpl_fill_f64(ref, A, nn * nn, seed, 0.0, 1.0)) != AT_OK ||
            (s = tpl_set_diagonal_f64(ref, A, n, (double)n)) != AT_OK ||
            (s = tpl_fill_f64(ref, b, nn, seed + 1, -1.0, 1.0)) != AT_OK ||
            (s = ex_memset32(ref, x0, 0, 2 * (size_t)nn)) != AT_OK ||
            (s = ex_memset32(ref, x, 0, 2 * (size_t)nn)) != AT_OK || (s = ex_sync(ref)) != AT_OK)
            return s;
        ws->args = tpl_jacobi_args(n, A, b, x, 0.0f, JC_WS_MAX_ITER);
        ws->args.scalar[TPL_JAC_TOL] = JC_WS_TOL64;
        ws->args.problem = *p;
        ws->out = x;
        ws->out_bytes = (size_t)nn * es;
        ws->out_initial = x0;
        ws->out_is_state = 1;
        ws->reference = 0;
        return AT_OK;
    }
    if ((s = tpl_ws_alloc(ref, ws, (size_t)nn * nn * 4, &A)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, (size_t)nn * 4, &b)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, (size_t)nn * 4, &x)) != AT_OK ||
        (s = tpl_ws_alloc(ref, ws, (size_t)nn * 4, &x0)) != AT_OK)
        return s;
    if ((s = tpl_fill_uniform(ref, A, nn * nn, seed, 0.0f, 1.0f)) != AT_OK ||
        (s = tpl_fill_uniform(ref, b, nn, seed + 1, -1.0f, 1.0f)) != AT_OK ||
        (s = ex_memset32(ref, x0, 0, (size_t)nn)) != AT_OK ||
        (s = ex_memset32(ref, x, 0, (size_t)nn)) != AT_OK)
        return s;
    float diag = (float)n;
    unsigned diag_bits;
    memcpy(&diag_bits, &diag, sizeof diag_bits);
    for (long long i = 0; i < nn; i++)
        if ((s = ex_memset32(ref, A + (size_t)(i * (nn + 1)) * 4, diag_bits, 1)) != AT_OK)
            return s;
    if ((s = ex_sync(ref)) != AT_OK)
        return s;
    ws->args = tpl_jacobi_args(n, A, b, x, JC_WS_TOL, JC_WS_MAX_ITER);
    ws->args.problem = *p;
    ws->out = x;
    ws->out_bytes = (size_t)nn * 4;
    ws->out_initial = x0;
    ws->out_is_state = 1;
    ws->reference = 0;
    return AT_OK;
}

static at_status jc_check(at_exec *ref, tpl_workset *ws, double *error)
{
    if (ws->args.problem.dtype == AT_R_64F)
        return tpl_ref_residual_f64(ref, (int)ws->args.problem.dims[0],
                                    ws->args.operand[TPL_JAC_A].ptr,
                                    ws->args.operand[TPL_JAC_B].ptr, ws->out, error);
    return tpl_ref_residual(ref, (int)ws->args.problem.dims[0],
                            ws->args.operand[TPL_JAC_A].ptr, ws->args.operand[TPL_JAC_B].ptr,
                            ws->out, error);
}

static double jc_tolerance(const tpl_problem *p)
{
    return p->dtype == AT_R_64F ? JC_TOLERANCE64 : JC_TOLERANCE;
}

static const tpl_baseline jc_baselines[] = {
    {"seed_basic", "ROW_THREADS=1,ROWS_PER_BLOCK=256,VEC=1,UNROLL=1,XCACHE=0,CHECK_EVERY=1,ORDER=0",
     "seed 5 basic: one thread per row, convergence read by the host after every sweep"},
    {"seed_improved", "ROW_THREADS=1,ROWS_PER_BLOCK=256,VEC=1,UNROLL=1,XCACHE=0,CHECK_EVERY=10,ORDER=0",
     "seed 5 improved: one thread per row, 10 sweeps between host checks"},
    {"f64_default", "ROW_THREADS=32,ROWS_PER_BLOCK=4,VEC=2,UNROLL=4,XCACHE=0,CHECK_EVERY=25,"
                    "ORDER=1,TYPE=1",
     "double (at_djacobi) without tuning: the FP32 default's shape with 16-byte loads of two "
     "doubles; every n"},
};

static const tpl_problem jc_tuning_problems[] = {
    TPL_PROBLEM(1, {1024}), TPL_PROBLEM(1, {4096}), TPL_PROBLEM(1, {8192}),
    TPL_PROBLEM(1, {16384}), {.n_dims = 1, .dims = {8192}, .dtype = AT_R_64F},
};

const tpl_family tpl_jacobi = {
    .name = "jacobi",
    .source = "jacobi.cu",
    .fixed_options = "",
    .summary = "Jacobi solve of a dense diagonally dominant system, float or double (time to "
               "solution)",
    .n_dims = 1,
    .dim_names = {"n"},
    .metric_is_flops = 0,
    .hidden = 0,
    .n_params = JC_NPARAMS,
    .params = JC_PARAMS,
    .valid = jc_valid,
    .accepts = jc_accepts,
    .applicable = jc_applicable,
    .deterministic = jc_deterministic,
    .run = jc_run,
    .work = jc_work,
    .work_done = jc_work_done,
    .prepare = jc_prepare,
    .check = jc_check,
    .tolerance = jc_tolerance,
    .default_config = "ROW_THREADS=32,ROWS_PER_BLOCK=4,VEC=4,UNROLL=4,XCACHE=0,CHECK_EVERY=25,ORDER=1",
    .n_baselines = 3,
    .baselines = jc_baselines,
    .n_tuning_problems = 5,
    .tuning_problems = jc_tuning_problems,
};
