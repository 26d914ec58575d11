/* tpl.h: the kernel family descriptor (one table row per family) and the
 * helpers shared by all families: configuration spaces, NVRTC compile of a
 * configuration, input generation and error measurement for verification. */
#ifndef TPL_H
#define TPL_H

#include <stddef.h>
#include "autotune.h"
#include "cudrv.h"
#include "exec.h"

#define TPL_MAX_PARAMS 24
#define TPL_MAX_VALUES 16
#define TPL_MAX_DIMS 3
#define TPL_MAX_BUFS 8
#define TPL_CONFIG_LEN 512          /* longest "NAME=v,NAME=v" string */

/* One tunable: its macro name in the .cu and the values the tuner tries. */
typedef struct tpl_param {
    const char *name;
    int n_values;
    int values[TPL_MAX_VALUES];
    const char *meaning;            /* one line, shown by `autotune list` */
    int host_only;                  /* 1: used by the host code only, not passed
                                       to NVRTC, so its values share one cubin */
    int omit_first;                 /* 1: a parameter added after configurations
                                       were stored (e.g. an element type): at its
                                       first value it is left out of texts and
                                       NVRTC options, and a text without it takes
                                       that value, so stored texts, cubin options
                                       and code of the older kind stay the same */
    int runtime_from;               /* 0: compile-time at every value. Else run-time from
                                       this value up: every value >= runtime_from compiles
                                       as runtime_from (its -D), and the kernel takes the
                                       actual value at launch (an argument or the grid the
                                       family's run() passes), so those values share one
                                       cubin; values below it keep their own code. Only
                                       for values that change no register allocation,
                                       unrolling or shared-memory layout (docs/compile.md,
                                       "Run-time parameters"; tpl_compile_config) */
} tpl_param;

/* A problem: its shape (matmul {m, n, k}; sum and dot {n}; jacobi {n}) and
 * its kind. Every kind field is zero for the plain problem: FP32, exact
 * math, row-major, op(A) = op(B) = N, one product; so a literal such as
 * `(tpl_problem){1, {n}}` (C++) or TPL_PROBLEM below, or a memset problem,
 * means exactly that. */
typedef struct tpl_problem {
    int n_dims;
    long long dims[TPL_MAX_DIMS];
    at_dtype dtype;                 /* element type */
    at_math math;                   /* AT_MATH_TF32 only with AT_R_32F */
    at_op op_a, op_b;               /* GEMM: op(A), op(B) */
    at_order order;                 /* storage order of the matrices */
    long long batch;                /* products per call; 0 and 1 both mean one */
    int epilogue;                   /* GEMM: fused epilogue TPL_EPI(bias, act); 0 none */
} tpl_problem;

/* The fused epilogue of a GEMM problem (tcgemm): D = act(alpha op(A) op(B) + beta C + bias),
 * one number bias * 4 + act, so 0 is no epilogue and every older problem means what it meant.
 * bias: TPL_BIAS_ROW adds bias[i] to row i of the row-major canonical C (length m),
 * TPL_BIAS_COL bias[j] to column j (length n); act as at_activation (autotune.h). */
enum { TPL_BIAS_NONE, TPL_BIAS_ROW, TPL_BIAS_COL, TPL_N_BIAS };
#define TPL_N_ACT 4                 /* none, ReLU, GELU (tanh), GELU (erf) */
#define TPL_N_EPI (TPL_N_BIAS * TPL_N_ACT)
#define TPL_EPI(bias, act) ((bias) * TPL_N_ACT + (act))
#define TPL_EPI_BIAS(e) ((e) / TPL_N_ACT)
#define TPL_EPI_ACT(e) ((e) % TPL_N_ACT)

/* FP8 GEMM kinds (tcgemm PATH 90, sm_90; docs/fp8.md): A and B in FP8 (the pair below), C of the
 * problem's dtype (BF16, FP16 or FP32), FP32 accumulation, per-tensor scales of A, B and D. The
 * pair is the product's math (how the tensor cores read the operands, as TF32 is FP32 data's), kept
 * in the problem's math field above the public at_math values: every kind comparison, database key
 * ("math" column) and worker message carries it with no new field, and every family that computes
 * only exact or TF32 math refuses it. Never a value of at_set_math_mode. */
#define TPL_MATH_E4M3 ((at_math)16)         /* A E4M3, B E4M3 ("e4m3xe4m3") */
#define TPL_MATH_E4M3_E5M2 ((at_math)17)    /* A E4M3, B E5M2 ("e4m3xe5m2") */
#define TPL_MATH_E5M2_E4M3 ((at_math)18)    /* A E5M2, B E4M3 ("e5m2xe4m3") */
/* Block-scaled FP8 (docs/fp8.md "Block scales"): the same pairs with one FP32 scale per 1 x 128
 * slice of A (per row, per 128 of K) and per 128 x 128 block of B, the K-blocks' products promoted
 * to FP32 with their scales; row-major canonical problems of one product only. */
#define TPL_MATH_E4M3_B128 ((at_math)19)        /* "e4m3xe4m3_b128" */
#define TPL_MATH_E4M3_E5M2_B128 ((at_math)20)   /* "e4m3xe5m2_b128" */
#define TPL_MATH_E5M2_E4M3_B128 ((at_math)21)   /* "e5m2xe4m3_b128" */
/* 1, 2, 3 for the FP8 maths above (in that order; per-tensor and block-scaled alike), 0 for any
 * other math. */
int tpl_math_fp8(at_math m);
/* 1 for a block-scaled FP8 math (TPL_MATH_E4M3_B128 ...), 0 for any other. */
int tpl_math_fp8_block(at_math m);
/* The FP8 math of pair f (1..3, tpl_math_fp8) with per-tensor (block 0) or block scales. */
at_math tpl_math_fp8_scaled(int f, int block);
/* The FP8 math of operand types a and b (AT_R_8F_E4M3 / AT_R_8F_E5M2, not both E5M2), or
 * TPL_KIND_UNKNOWN. */
int tpl_math_of_fp8(at_dtype a, at_dtype b);
/* The operand types of an FP8 math (A's, B's); AT_R_32F for any other math. */
at_dtype tpl_math_fp8_a(at_math m);
at_dtype tpl_math_fp8_b(at_math m);
/* The FP8 math with A and B swapped (a column-major call's canonical form; the scaling kept);
 * m itself otherwise. */
at_math tpl_math_fp8_swap(at_math m);

/* Initializer of a plain problem of n sizes, for declarations and static
 * tables: `tpl_problem p = TPL_PROBLEM(3, {m, n, k});`. */
#define TPL_PROBLEM(n, ...) {.n_dims = (n), .dims = __VA_ARGS__}

/* A kind value read from a database that this build has no name for
 * (written by a later release): it equals no value a caller can ask for. */
#define TPL_KIND_UNKNOWN 255

/* One operand of a call: device pointer, leading dimension and the
 * distance from one product's operand to the next in a batch, both in
 * elements of the problem's type (0 where they do not apply). */
typedef struct tpl_operand {
    CUdeviceptr ptr;
    long long ld;
    long long batch_stride;
} tpl_operand;

#define TPL_MAX_OPERANDS 7
#define TPL_MAX_SCALARS 4
#define TPL_MAX_INTS 4

/* What each family finds where in tpl_args: operands, scalars, ints. A new
 * family or type adds values here, not fields to every caller. */
/* C = act(alpha op(A) op(B) + beta C + bias); BIAS only with a bias (problem.epilogue); with an
 * FP8 math C = scale_d (alpha scale_a scale_b op(A) op(B) + beta C), the scales device floats at
 * SCALE_A, SCALE_B, SCALE_D (ptr only; 0 means 1.0); with a block-scaled FP8 math SCALE_A and
 * SCALE_B are the arrays of scales (m x ceil(k/128) and ceil(n/128) x ceil(k/128) floats, row-major:
 * tpl_math_fp8_block) */
enum { TPL_GEMM_A, TPL_GEMM_B, TPL_GEMM_C, TPL_GEMM_BIAS, TPL_GEMM_SCALE_A, TPL_GEMM_SCALE_B,
       TPL_GEMM_SCALE_D };
enum { TPL_GEMM_ALPHA, TPL_GEMM_BETA };
enum { TPL_RED_X, TPL_RED_Y, TPL_RED_RESULT };      /* ptr of Y is 0 for sum */
enum { TPL_JAC_A, TPL_JAC_B, TPL_JAC_X };           /* solve A x = b, from x */
enum { TPL_JAC_TOL };
enum { TPL_JAC_MAX_ITER };

/* The arguments of one call, as the API received them (device pointers).
 * Scalars are doubles whatever the problem's type: the family converts
 * them to its type (a float given as a double comes back exactly). */
typedef struct tpl_args {
    tpl_problem problem;
    tpl_operand operand[TPL_MAX_OPERANDS];
    double scalar[TPL_MAX_SCALARS];
    long long ints[TPL_MAX_INTS];
    struct {                        /* set by run() */
        int iterations;             /* Jacobi: sweeps run */
        double residual;            /* Jacobi: final relative update */
    } out;
} tpl_args;

/* The arguments of one SGEMM call C = alpha*A*B + beta*C (row-major, leading
 * dimensions), problem {m, n, k} included; every other field zero
 * (templates/operands.c). */
tpl_args tpl_gemm_args(int m, int n, int k, float alpha, CUdeviceptr A, int lda, CUdeviceptr B,
                       int ldb, float beta, CUdeviceptr C, int ldc);
/* ---- GEMM orders and transposes (templates/operands.c) ----
 * The families compute row-major problems only, with op N or T on each operand:
 * op_a = N reads A as m x k (lda >= k), T as k x m (lda >= m); op_b = N reads B
 * as k x n (ldb >= n), T as n x k (ldb >= k); C is m x n (ldc >= n). A
 * column-major call is mapped onto that form by the API (ag_gemm_canonical):
 * col-major C = op(A) op(B) is row-major C' = op(B)' op(A)', where X' is X's
 * memory read row-major, so A and B swap places, m and n swap, and each keeps
 * its own op. Every problem a family sees, tunes, stores in the database or
 * looks up is this row-major canonical form (order AT_ROW_MAJOR). */
/* Smallest leading dimension (>= 1) of an operand whose op(X) is rows x cols,
 * stored in `order` (BLAS rules: column-major ld >= the rows of X as stored,
 * row-major ld >= its columns). */
long long tpl_gemm_min_ld(at_order order, at_op op, long long rows, long long cols);

/* The arguments of one FP32 sum (y = 0) or dot of n elements into *result
 * (device memory), problem {n} included; every other field zero. */
tpl_args tpl_reduce_args(long long n, CUdeviceptr x, CUdeviceptr y, CUdeviceptr result);
/* The arguments of one FP32 Jacobi solve of A x = b (n x n, row-major) from
 * x, problem {n} included; every other field zero. */
tpl_args tpl_jacobi_args(int n, CUdeviceptr A, CUdeviceptr b, CUdeviceptr x, float tol,
                         int max_iter);

/* Inputs for verification and timing, made by a family's prepare(). */
typedef struct tpl_workset {
    tpl_args args;
    CUdeviceptr bufs[TPL_MAX_BUFS]; /* owned: freed by tpl_workset_free */
    size_t buf_bytes[TPL_MAX_BUFS];
    int n_bufs;
    CUdeviceptr out;                /* buffer the configuration writes */
    size_t out_bytes;
    CUdeviceptr out_initial;        /* copied into out before every run;
                                       0 = out is poisoned with NaN instead */
    int out_is_state;               /* 1: the run starts from out (an iterative
                                       solver's x), so its work depends on it:
                                       the back-to-back timing (measure.h)
                                       puts out_initial back before every run,
                                       where others reset out once */
    CUdeviceptr reference;          /* expected output (0 if check() needs none) */
} tpl_workset;

/* ---- the problem key (templates/problem.c) ---- */
/* Products per call: batch, where 0 and 1 both mean one. */
long long tpl_problem_batch(const tpl_problem *p);
/* 1 if a and b are of one kind: element type, math, ops, order and epilogue (the
 * batch count is a size, not a kind: nearest shapes may differ in it). */
int tpl_problem_same_kind(const tpl_problem *a, const tpl_problem *b);
/* 1 if a and b are the same problem: same sizes, kind and batch count. */
int tpl_problem_equal(const tpl_problem *a, const tpl_problem *b);
/* 1 if p is the plain problem's kind: FP32, exact math, row-major, NN, one
 * product (the only kind the families of this release compute). */
int tpl_problem_plain(const tpl_problem *p);
/* Names of the kind values, as the text form and the database write them:
 * "f32" "f64" "f16" "bf16" "e4m3" "e5m2"; "" "tf32" (FP8: "e4m3xe4m3" "e4m3xe5m2"
 * "e5m2xe4m3"); "N" "T"; "row" "col". NULL for a
 * value without a name. */
const char *tpl_dtype_name(at_dtype t);
const char *tpl_math_name(at_math m);
const char *tpl_op_name(at_op o);
const char *tpl_order_name(at_order o);
/* The epilogue's name as the database writes it: "" (none), the text form's suffixes without
 * their first colon ("bias_col:gelu", "relu", "bias_row"); NULL for a value without a name. */
const char *tpl_epilogue_name(int epilogue);
/* The value of a name (the inverse of the above); TPL_KIND_UNKNOWN if none. */
int tpl_dtype_of(const char *name);
int tpl_math_of(const char *name);
int tpl_op_of(const char *name);
int tpl_order_of(const char *name);
int tpl_epilogue_of(const char *name);
/* The text form of a problem, as the CLI takes it and the report shows it:
 * the sizes "4096x4096x4096", then a suffix for each field that is not the
 * plain problem's, in this order: ":f64" / ":f16" / ":bf16", ":tf32",
 * (":e4m3xe4m3" / ":e4m3xe5m2" / ":e5m2xe4m3": the FP8 operands, dtype then C's),
 * ":col", ":NT" / ":TN" / ":TT", ":b64" (batch count), the epilogue's ":bias_row" /
 * ":bias_col" then ":relu" / ":gelu" (tanh) / ":gelu_erf". "" for no sizes;
 * a value without a name shows as ":?". Truncated to len. */
void tpl_problem_format(const tpl_problem *p, char *out, size_t len);
/* Parses the text form: 1 to TPL_MAX_DIMS sizes in 1..2^40 joined by 'x',
 * then suffixes in any order, each field at most once (the plain values
 * ":f32", ":row", ":NN", ":b1" are accepted too). AT_ERR_INVALID_ARG with
 * the reason in err (p zeroed) for anything else, for ":tf32" with an
 * element type other than FP32, and for an FP8 math with a C type other than BF16, FP16,
 * FP32. The bias and the activation are one field each (":bias_col:gelu"; ":bias_none" and
 * ":act_none" name their absence). */
at_status tpl_problem_parse(const char *text, tpl_problem *p, char *err, size_t errlen);

/* A named configuration kept for reports, e.g. the seeds' kernels. */
typedef struct tpl_baseline {
    const char *name;               /* "seed_tiled" */
    const char *config;             /* "NAME=v,NAME=v", every parameter */
    const char *description;
} tpl_baseline;

/* One row of a family's built-in defaults (tpl_family.defaults): the configuration that
 * serves a call nothing was tuned for, per architecture, kind and shape class. Rows are
 * tried in order; the first that matches the device and the problem and whose
 * configuration, fitted to the problem's kind (tpl_family.fit_kind), is usable wins
 * (tpl_builtin_config). Every field left zero matches everything, so a row names only
 * what it is for (designated initializers). */
#define TPL_BIT(v) (1u << (unsigned)(v))            /* a dtype, math or op pair in a mask */
#define TPL_OPS(a, b) TPL_BIT((a) * 2 + (b))        /* op pair of the canonical problem */
enum { TPL_SINGLE = 1, TPL_BATCHED = 2 };           /* tpl_default.batch */
typedef struct tpl_default {
    int cc_min, cc_max;             /* compute capability as 10 x major + minor, inclusive */
    unsigned dtypes;                /* TPL_BIT(at_dtype) of the types served */
    unsigned maths;                 /* TPL_BIT(at_math) */
    unsigned ops;                   /* TPL_OPS(op_a, op_b) of the row-major canonical form */
    int batch;                      /* TPL_SINGLE or TPL_BATCHED */
    long long max_batch;            /* at most this many products */
    long long max_mn;               /* max(m, n) at most this (small products) */
    long long min_mn;               /* min(m, n) at least this (large products) */
    long long max_tiles;            /* at most this many 128 x 128 tiles of C over the batch */
    long long min_tiles;            /* at least this many of them (outputs that fill the GPU) */
    long long min_k;                /* k at least this (deep products) */
    long long max_m, max_n;         /* m, n at most this (GEMV-like calls) */
    long long max_k;                /* k at most this (short products) */
    int fill_waves;                 /* 1: SPLITK is not the row's but tpl_wave_split's for the
                                       problem (the output's tiles fill a wave of the SMs);
                                       TPL_FILL_ONE_WAVE: tpl_wave_split_exact's */
    /* optional: the family's own rule, 0 where the row's configuration (fitted to p's kind)
     * should not serve p on dev (NULL: the fields above decide) */
    int (*applies)(const int *cfg, const at_device_info *dev, const tpl_problem *p);
    const char *config;             /* "NAME=v,...": every parameter */
    const char *origin;             /* where the choice comes from (a measurement) */
} tpl_default;

/* The launch geometry of a GEMM configuration: what the runtime's selection
 * model (runtime/model.c) needs to predict its time at a shape it was not
 * measured at (tiles, waves, split-K, resident blocks). */
typedef struct tpl_tile {
    int bm, bn;                     /* C tile of one block, per product */
    int splitk;                     /* K slices, each in its own block (1: none) */
    int stream_k;                   /* 1: the last partial wave is split by K steps */
    int products;                   /* products one block computes at once (1 but bgemm) */
    int threads;                    /* threads per block */
    long long smem;                 /* shared memory bytes per block */
    int regs;                       /* registers per thread (0: not known) */
    int blocks_per_sm;              /* resident blocks per SM where the family knows it
                                       (launch bounds), else 0: from threads, smem, regs */
    int elem_bytes;                 /* bytes of one element of A and B */
} tpl_tile;

typedef struct tpl_family {
    const char *name;               /* "matmul", "sum", "dot", "jacobi" */
    const char *source;             /* embedded file name, "matmul.cu" */
    const char *fixed_options;      /* NVRTC options for every config, or "" */
    const char *summary;
    int n_dims;
    const char *dim_names[TPL_MAX_DIMS];
    int metric_is_flops;            /* 1: report GFLOP/s, 0: GB/s */
    int hidden;                     /* 1: test-only, never tuned by default */
    int n_params;
    tpl_param params[TPL_MAX_PARAMS];

    /* 1 if cfg is a legal kernel on this device (threads, shared memory,
     * registers...), else 0 with the reason in why. dev may be NULL: then
     * judge against a generic sm_80+ device (48 KiB..227 KiB smem). why may
     * be NULL with len 0 when the caller does not read the reason (scans of
     * large spaces): format reasons through tpl_reason, which then skips it. */
    int (*valid)(const int *cfg, const at_device_info *dev, char *why, size_t len);
    /* Optional: 1 if the family computes problems of this kind (element
     * type, math, ops, order, batch) with some configuration. NULL: only
     * the plain kind (FP32, exact, row-major, NN, one product). */
    int (*accepts)(const tpl_problem *problem);
    /* 1: the family computes fused epilogues (tpl_problem.epilogue != 0) where accepts says
     * so; 0: tpl_family_accepts refuses every problem with one, whatever accepts says. */
    int epilogues;
    /* 1 if the legal cfg computes this problem correctly and sensibly
     * (never for a problem tpl_family_accepts refuses). */
    int (*applicable)(const int *cfg, const tpl_problem *problem);
    /* 1 if the result is bit-identical from run to run (no float atomics). */
    int (*deterministic)(const int *cfg);
    /* Runs the computation with the configuration's module in ex.
     * Returns AT_OK or a status with ex->errmsg set. Jacobi: the status of
     * the solve (AT_ERR_NOT_CONVERGED, AT_ERR_DIVERGED). */
    at_status (*run)(at_exec *ex, const int *cfg, tpl_args *args);
    /* Useful work of one run: floating-point operations and the minimum
     * bytes of device memory that must be moved. */
    void (*work)(const tpl_problem *problem, double *flops, double *bytes);
    /* Optional: the work of the run just done, where it depends on the run
     * (Jacobi: the sweeps it took); NULL means work() is exact. */
    void (*work_done)(const tpl_args *args, double *flops, double *bytes);
    /* Allocates and fills inputs (fresh random data from seed) with the
     * reference module in ref, and computes ws->reference if check uses it. */
    at_status (*prepare)(at_exec *ref, const tpl_problem *problem,
                         unsigned long long seed, tpl_workset *ws);
    /* After a run: *error = relative error of ws->out (Frobenius, float64). */
    at_status (*check)(at_exec *ref, tpl_workset *ws, double *error);
    /* Largest *error accepted for this problem. */
    double (*tolerance)(const tpl_problem *problem);

    /* Optional: the NVRTC target for cfg on a device of architecture arch
     * ("sm_90"): arch itself, an arch-specific variant ("sm_90a" for wgmma
     * and setmaxnreg), or NULL when cfg cannot run on arch at all (it is then
     * neither compiled nor tuned there). NULL hook = arch for every cfg. */
    const char *(*target_arch)(const int *cfg, const char *arch);

    const char *default_config;     /* correct on every device and problem */
    /* Optional: built-in defaults per architecture, kind and shape class, tried before
     * default_config (tpl_default above; n_defaults rows). */
    int n_defaults;
    const tpl_default *defaults;
    /* Optional: sets the parameters of cfg that name the problem's kind (ops, batch,
     * element type) to p's, so one default row serves every op pair; NULL: none. */
    void (*fit_kind)(int *cfg, const tpl_problem *p);
    int n_baselines;
    const tpl_baseline *baselines;
    int n_tuning_problems;          /* the default sizes `autotune` tunes */
    const tpl_problem *tuning_problems;
    int n_default_tuning_problems;  /* the leading tuning_problems a run that names no
                                       family tunes (0: all); the rest are tuned only
                                       when the family is named (--kernel) */
    /* Optional: 0 when no configuration whose first n_fixed parameter values
     * are cfg[0..n_fixed) can be valid on dev (NULL: the generic device), else
     * 1 (cfg holds n_params values; those past the prefix may be anything and
     * must not change the answer); conservative: 1 when unsure, so it
     * never rejects a prefix that has a valid completion. tpl_valid_configs
     * then walks the space depth first, skipping the subtrees it rejects
     * (valid() still judges every complete configuration: the same indices in
     * the same order as a scan). NULL: every raw configuration is scanned. */
    int (*valid_prefix)(const int *cfg, int n_fixed, const at_device_info *dev);
    /* Optional (0: none): milliseconds of untimed back-to-back runs each
     * candidate gets before its timed slice in the sustained re-timing
     * (tuner/retime.c), for families whose kernels are power-bound: each is
     * then timed at its own steady clock under the power cap, not at the
     * clock its neighbour left, so a configuration that draws less power
     * gets credit for it (tcgemm: docs/notes/tcgemm.md sections 17-18). Such a
     * family is also re-timed wider (8 configurations) and without favouring
     * the short-timing winner (tuner/retime.c). */
    double retime_settle_ms;
    /* Optional: fills t with cfg's launch geometry and returns 1; 0 for a
     * configuration it cannot describe. NULL: the lookup ranks this family's
     * stored winners by shape distance alone (runtime/model.c). */
    int (*tile_of)(const int *cfg, tpl_tile *t);
    /* Optional: 1 where, with no measurement of any family at p's exact shape, this family
     * should serve p ahead of the large-tile family of p's type (lk_choose_family, for the
     * shape classes whose built-in defaults it serves better); NULL: never. */
    int (*claims)(const tpl_problem *p, const at_device_info *dev);
} tpl_family;

/* 1 if fam computes problems of p's kind with p's dimension count (with
 * some configuration): fam->accepts, or the plain kind where it is NULL; a
 * problem with a fused epilogue only where fam->epilogues is set.
 * Each family's applicable() starts with it (templates/problem.c). */
int tpl_family_accepts(const tpl_family *fam, const tpl_problem *p);
/* The same for run() and prepare(): AT_OK, or AT_ERR_UNSUPPORTED with the
 * problem's text form in ex's message. */
at_status tpl_check_problem(at_exec *ex, const tpl_family *fam, const tpl_problem *p);
/* tpl_check_problem for a GEMM family's prepare(), and sizes it can prepare: m, n, k
 * in 1..2^31-1, at most 65535 products, batch x m below 2^31; AT_ERR_INVALID_ARG
 * otherwise. */
at_status tpl_check_gemm_prepare(at_exec *ex, const tpl_family *fam, const tpl_problem *p);
/* The operand checks of a GEMM family's run (fam named in messages) for its row-major
 * m x n x k problem with op(A) / op(B) = T where op_a_t / op_b_t: leading dimensions at least
 * the stored rows of A (k, or m for op T), B (n, or k) and C (n); for a batch, no negative
 * stride; C, and A and B when k > 0, non-NULL. AT_OK, else AT_ERR_INVALID_ARG with the
 * message in ex. */
at_status tpl_check_gemm_operands(at_exec *ex, const tpl_family *fam, const tpl_args *args,
                                  int m, int n, int k, int op_a_t, int op_b_t);

/* ---- built-in choices (templates/defaults.c) ---- */
/* Resident blocks of tile t on one SM of dev (NULL: an H200): the family's own count (launch
 * bounds), else the tightest of threads, shared memory (plus the 1 KiB the driver reserves
 * per block) and registers; at least 1. */
int tpl_tile_blocks_per_sm(const tpl_tile *t, const at_device_info *dev);
/* dev's SM count (NULL or unknown: 132, an H200's). */
int tpl_device_sms(const at_device_info *dev);
/* The wave-fill split-K rule of a default row (tpl_default.fill_waves): of the SPLITK values
 * of fam, in increasing order while every K slice keeps TPL_WAVE_MIN_SLICE_K, the first whose
 * blocks (the output's tiles of cfg x the split) fill TPL_WAVE_FILL_PERCENT of one wave of
 * resident blocks on every SM, else the largest usable one (legal, computes p). Sets it in
 * cfg and returns it; 0 (cfg unchanged) when fam has no SPLITK or no value is usable. */
#define TPL_WAVE_MIN_SLICE_K 128
#define TPL_WAVE_FILL_PERCENT 85
int tpl_wave_split(const tpl_family *fam, const at_device_info *dev, const tpl_problem *p,
                   int deterministic, int *cfg);
/* The exact wave-fill rule (tpl_default.fill_waves = TPL_FILL_ONE_WAVE) for a SPLITK that is
 * run-time (tpl_param.runtime_from: any count shares one cubin): the largest count, any
 * integer from runtime_from up to the largest listed value, whose blocks (the output's tiles
 * of cfg x the count) fit one wave of resident blocks, every K slice keeping
 * TPL_WAVE_MIN_SLICE_K, and legal for p: the most blocks per SM for the fewest waves (e.g. 30
 * tiles of 3 blocks per SM on 132 SMs: 13, 390 blocks, where the listed 8 leaves 240). Falls
 * back to tpl_wave_split where no such count is usable or SPLITK is compile-time. Sets cfg and
 * returns the count as tpl_wave_split. */
#define TPL_FILL_ONE_WAVE 2
int tpl_wave_split_exact(const tpl_family *fam, const at_device_info *dev, const tpl_problem *p,
                         int deterministic, int *cfg);
/* 1 if the configuration text parses, is legal on dev, computes p and (when deterministic)
 * is reproducible; its values then in cfg. */
int tpl_config_usable(const tpl_family *fam, const at_device_info *dev, const char *text,
                      const tpl_problem *p, int deterministic, int *cfg);
/* 1 if default row r matches dev (NULL: no architecture bound applies) and p. */
int tpl_default_matches(const tpl_default *r, const at_device_info *dev, const tpl_problem *p);
/* The built-in configuration for p on dev: the first matching row of fam->defaults whose
 * configuration, fitted to p's kind, is usable, else default_config, else the first usable
 * baseline. 1 with cfg and its text (TPL_CONFIG_LEN) filled and *origin naming where it came
 * from ("default" or the row's origin; may be NULL), 0 if nothing built in serves p. */
int tpl_builtin_config(const tpl_family *fam, const at_device_info *dev, const tpl_problem *p,
                       int deterministic, int *cfg, char *config, const char **origin);
/* The nth (0: the first) distinct usable configuration among the rows of fam->defaults that
 * match dev and p, in row order: the row the rules pick, then the next rows that also match
 * (a broader class's choice), each fitted to p as tpl_builtin_config fits it. 1 with cfg, its
 * text and *origin (may be NULL) filled; 0 past the last such row (the default_config and
 * baseline fallbacks of tpl_builtin_config are not counted). */
int tpl_builtin_config_nth(const tpl_family *fam, const at_device_info *dev,
                           const tpl_problem *p, int deterministic, int nth, int *cfg,
                           char *config, const char **origin);

/* ---- registry (templates/registry.c) ---- */
int tpl_family_count(void);                     /* includes hidden ones */
const tpl_family *tpl_family_at(int index);
const tpl_family *tpl_find(const char *name);   /* NULL if unknown */
/* Adds a family (test builds use this for their hidden families); -1 if
 * the name is taken or the table is full. Call before any other thread
 * uses the registry (e.g. from a constructor). */
int tpl_register_family(const tpl_family *fam);
/* Adds a source for families whose .cu is not embedded in the library. */
int tpl_register_source(const char *name, const char *text, size_t len);

/* ---- embedded sources (generated at build time) ---- */
/* Text of embedded file `name` ("matmul.cu"), NUL-terminated; NULL if none. */
const char *tpl_source_text(const char *name, size_t *len);
/* 16 hex digits of FNV-1a 64 over the family's source and fixed options. */
const char *tpl_source_hash(const tpl_family *fam);

/* ---- configuration spaces (templates/config.c, templates/space.c) ---- */
/* Number of raw configurations (product of value counts). */
long long tpl_space_size(const tpl_family *fam);
/* Mixed-radix decode of index into cfg values (param order). */
void tpl_config_from_index(const tpl_family *fam, long long index, int *cfg);
/* Index of cfg in the space, -1 if a value is not in its list. */
long long tpl_config_to_index(const tpl_family *fam, const int *cfg);
/* "BM=64,BN=128,...", all parameters in order (an omit_first one only
 * where it is not at its first value). */
void tpl_config_format(const tpl_family *fam, const int *cfg, char *out, size_t len);
/* Parses "NAME=v,..." (any order, all names required but those marked
 * omit_first, which take their first value when missing; values need not be
 * in the tuning lists). AT_ERR_INVALID_ARG with the reason in err. */
at_status tpl_config_parse(const tpl_family *fam, const char *text, int *cfg,
                           char *err, size_t errlen);
/* Index of a parameter by name, -1 if none. */
int tpl_param_index(const tpl_family *fam, const char *name);
/* Writes a rejection reason for valid() into why, formatted only when
 * why is not NULL and len > 0 (formatting dominates scans of large spaces). */
void tpl_reason(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copies a fixed rejection reason into why (when why is not NULL and len > 0;
 * no formatting, so scans of millions of configurations stay cheap) and
 * returns 0, so valid() can `return tpl_reject(why, len, reason)`. */
int tpl_reject(char *why, size_t len, const char *reason);
/* a / b rounded up, for a >= 0 and b > 0 (tiles, waves, splits). */
static inline long long tpl_cdiv(long long a, long long b)
{
    return (a + b - 1) / b;
}
/* Valid configurations of fam on dev (NULL: the generic device) as malloc'd
 * sorted raw indices in *indices (caller frees); the count, or -1 with
 * *indices NULL if out of memory. Asks valid() for no reasons. A family with
 * valid_prefix is walked depth first with pruning, one without is scanned in
 * full on several threads: the same result either way. */
long long tpl_valid_configs(const tpl_family *fam, const at_device_info *dev,
                            long long **indices);
/* The same through a small process-wide cache of the last (family, device)
 * pairs scanned (thread-safe; tpl_sample_configs uses it): a space asked for
 * again, as tests and samples do per seed and architecture, is not scanned
 * again. A malloc'd copy in *indices; the count, or -1 if out of memory. */
long long tpl_valid_configs_cached(const tpl_family *fam, const at_device_info *dev,
                                   long long **indices);

/* ---- compile samples (templates/samples.c) ---- */
/* One configuration of a sample and why it is in it. */
typedef struct tpl_sample {
    int cfg[TPL_MAX_PARAMS];
    const char *origin;             /* "default", a baseline's name, "extra",
                                       "cover" (chosen for value coverage) */
} tpl_sample;
/* A stratified sample of fam's configurations for compile tests on dev
 * (NULL: the generic device), instead of every configuration: the default
 * and every baseline (always: they run on every device), each of the n_extra
 * configuration texts in extra (e.g. stored winners) that is valid on dev,
 * then valid configurations chosen greedily, ties broken by a shuffle from
 * seed, until every value of every parameter that some valid configuration
 * takes is in the sample at least once. No configuration twice;
 * deterministic for (fam, dev, seed, extra). *out is malloc'd (caller
 * frees). Returns the count, or -1 with *out NULL and the reason in err (a
 * default, baseline or extra text that does not parse; out of memory). */
int tpl_sample_configs(const tpl_family *fam, const at_device_info *dev,
                       unsigned long long seed, const char *const *extra, int n_extra,
                       tpl_sample **out, char *err, size_t errlen);

/* ---- compiling (templates/nvrtc.c, NVRTC; no GPU needed) ---- */
/* "sm_90" from a compute capability. */
void tpl_arch_name(int cc_major, int cc_minor, char *out, size_t len);
/* The NVRTC target of cfg on arch (the family's target_arch hook, or arch);
 * NULL when cfg cannot run on arch. The pointer is arch or a string constant. */
const char *tpl_target_arch(const tpl_family *fam, const int *cfg, const char *arch);
/* The configuration whose cubin serves cfg, its compile key: cfg with every host_only
 * parameter at its first value and every run-time value (>= runtime_from) at runtime_from.
 * tpl_compile, tpl_binary_key and tpl_options_string read only it, so configurations that
 * differ only in those parameters compile once and share the cubin. out may be cfg. */
void tpl_compile_config(const tpl_family *fam, const int *cfg, int *out);
/* The NVRTC options for cfg on arch, space-separated (for keys and logs). */
void tpl_options_string(const tpl_family *fam, const int *cfg, const char *arch,
                        char *out, size_t len);
/* Compiles cfg for arch ("sm_90", mapped through tpl_target_arch) into a
 * cubin (malloc'd, caller frees). On AT_ERR_COMPILE *log holds NVRTC's log
 * (malloc'd, caller frees; may be set on success too, or NULL);
 * AT_ERR_UNSUPPORTED with a log line when cfg cannot run on arch.
 * Thread-safe. */
at_status tpl_compile(const tpl_family *fam, const int *cfg, const char *arch,
                      void **cubin, size_t *cubin_size, char **log);
/* Compiles the shared reference/utility module (reference.cu) for arch. */
at_status tpl_compile_reference(const char *arch, void **cubin, size_t *size,
                                char **log);
/* Compiles another embedded utility source (e.g. "ceilings.cu") like the
 * reference module; AT_ERR_NOT_FOUND if no such source is embedded. */
at_status tpl_compile_utility(const char *name, const char *arch, void **cubin, size_t *size,
                              char **log);
/* Key that names a cubin: hash of source, options, arch and NVRTC version. */
void tpl_binary_key(const tpl_family *fam, const int *cfg, const char *arch,
                    char *out, size_t len);
/* "13.0" */
const char *tpl_nvrtc_version(void);

/* ---- verification helpers for prepare()/check() (templates/verify.c) ----
 * All run kernels of reference.cu through ref on its stream. */
at_status tpl_ws_alloc(at_exec *ref, tpl_workset *ws, size_t bytes, CUdeviceptr *ptr);
void tpl_workset_free(const cudrv *cu, tpl_workset *ws);
/* n floats uniform in [lo, hi) from a counter-based hash of (seed, i). */
at_status tpl_fill_uniform(at_exec *ref, CUdeviceptr p, long long n,
                           unsigned long long seed, float lo, float hi);
/* n x n row-major matrix, off-diagonal uniform in [-1,1), diagonal set so
 * each row is strictly diagonally dominant by `margin` (>1). */
at_status tpl_fill_diag_dominant(at_exec *ref, CUdeviceptr A, int n,
                                 unsigned long long seed, float margin);
/* ||out - expected||_F / ||expected||_F over n floats, in float64; +inf if
 * out holds NaN/Inf. */
at_status tpl_rel_error(at_exec *ref, CUdeviceptr out, CUdeviceptr expected,
                        long long n, double *error);
/* Reference C = alpha*A*B + beta*C0 in float64 accumulation (row-major with
 * leading dimensions), written as float into C. */
at_status tpl_ref_gemm(at_exec *ref, int m, int n, int k, float alpha,
                       CUdeviceptr A, int lda, CUdeviceptr B, int ldb,
                       float beta, CUdeviceptr C0, CUdeviceptr C, int ldc);
/* ---- typed data (the tensor-core GEMM; element types as at_dtype) ---- */
/* Bytes of one element of type t (4, 8, 2, 2); 0 for an unknown type. */
size_t tpl_dtype_size(at_dtype t);
/* Unit roundoff of type t (round to nearest): 2^-24 f32, 2^-53 f64, 2^-11
 * f16, 2^-8 bf16; 0 for an unknown type. */
double tpl_unit_roundoff(at_dtype t);
/* n elements of type t, uniform in [lo, hi) (the draws of tpl_fill_uniform)
 * rounded to nearest even in the type. AT_ERR_INVALID_ARG for an unknown type. */
at_status tpl_fill_typed(at_exec *ref, CUdeviceptr p, long long n, at_dtype t,
                         unsigned long long seed, float lo, float hi);
/* R = alpha*A*B + beta*C0 in float64, NOT rounded to the type: A m x k (lda),
 * B k x n (ldb), C0 m x n (ldc0, unread when beta == 0), all of type t and
 * row-major; with tf32 (t = AT_R_32F only) every A and B element is first
 * rounded to TF32 (to nearest, ties to even: the 13 low mantissa bits then
 * zero), as the tcgemm family's kernels and cuBLAS round FP32. R: m x n doubles, leading dimension n. */
at_status tpl_ref_gemm_typed(at_exec *ref, at_dtype t, int tf32, int m, int n, int k,
                             float alpha, CUdeviceptr A, long long lda, CUdeviceptr B,
                             long long ldb, float beta, CUdeviceptr C0, long long ldc0,
                             CUdeviceptr R);
/* R = alpha op(A) op(B) + beta C0 in float64 for every product of the row-major
 * canonical call in args (type, math, ops, batch from its problem; A and B from
 * its operands with their ld and batch stride; C0 with C's ld and batch stride,
 * unread when beta == 0; alpha and beta from its scalars), NOT rounded; TF32
 * math rounds A and B as tpl_ref_gemm_typed; a fused epilogue (problem.epilogue) is then
 * applied in float64 to that unfused result: R = act(R + bias), the bias of the problem's type
 * at operand TPL_GEMM_BIAS (one vector for every product). FP8 maths decode A and B exactly and
 * apply the scales in float64: per-tensor ones to alpha and beta, block scales (the arrays at
 * TPL_GEMM_SCALE_A / _B) to each K-block's sum of 128 products. R: batch x m x n doubles,
 * contiguous. AT_ERR_INVALID_ARG for a column-major or unknown kind, a batch
 * above 65535, or sizes above 2^31 - 1. */
at_status tpl_ref_gemm_args(at_exec *ref, const tpl_args *args, CUdeviceptr C0, CUdeviceptr R);
/* R = alpha op(A) op(B) + beta C0 in float64 for every product of the row-major args (any
 * batch count; A, B, C0 with the operands' ld and batch stride, C0 unread when beta == 0), each
 * sum compensated (reference.cu's ref_bgemm: FP64 data about as accurate as in twice the
 * working precision), not rounded. R: batch x m x n doubles, contiguous. */
at_status tpl_ref_gemm_compensated(at_exec *ref, const tpl_args *args, CUdeviceptr C0,
                                   CUdeviceptr R);
/* n elements of type t uniform in [-1, 1) for a GEMM operand: FP64 with every mantissa bit
 * random (tpl_fill_f64), the other types as tpl_fill_typed draws them. */
at_status tpl_fill_gemm_operand(at_exec *ref, CUdeviceptr p, long long n, at_dtype t,
                                unsigned long long seed);
/* A GEMM family's prepare() once it has checked p (tpl_check_gemm_prepare): each product's A
 * and B one after another in the layout of p's ops, uniform in [-1, 1) rounded to the type
 * (tpl_fill_gemm_operand, seeds seed * 3 + 1 and + 2); alpha 1.5, beta 0 over a C filled with
 * NaN (it must not be read), packed (ldc = n); the float64 reference of every product,
 * compensated (tpl_ref_gemm_compensated), under TF32 math of the TF32-rounded inputs
 * (tpl_ref_gemm_args). smallm's, skinny's and bgemm's. */
at_status tpl_prepare_gemm_beta0(at_exec *ref, const tpl_problem *p, unsigned long long seed,
                                 tpl_workset *ws);
/* The work of such a call (a family's work()): 2 m n k flops per product, A and B read and C
 * written once (beta 0), in bytes of p's type. */
void tpl_gemm_work_beta0(const tpl_problem *p, double *flops, double *bytes);
/* A GEMM family's check(): the relative error of ws->out (every product's m x n rows one after
 * another, C's leading dimension) against ws->reference (batch x m x n doubles). */
at_status tpl_check_gemm(at_exec *ref, tpl_workset *ws, double *error);
/* ||out - expected||_F / ||expected||_F over the rows x cols region of out
 * (type t, leading dimension ld) against expected (doubles, leading
 * dimension cols), in float64; +inf if that region of out holds NaN/Inf. */
at_status tpl_rel_error_typed(at_exec *ref, at_dtype t, CUdeviceptr out, int rows, int cols,
                              long long ld, CUdeviceptr expected, double *error);
/* Reference sum (y == 0) or dot, accumulated in float64, into *result. */
at_status tpl_ref_reduce(at_exec *ref, long long n, CUdeviceptr x,
                         CUdeviceptr y, double *result);
/* n doubles uniform in [lo, hi) with every mantissa bit random (seeded like
 * tpl_fill_uniform, other values). */
at_status tpl_fill_f64(at_exec *ref, CUdeviceptr p, long long n, unsigned long long seed,
                       double lo, double hi);
/* Reference sum (y == 0) or dot of n doubles, compensated (TwoSum and
 * TwoProduct per element, the block pairs added error-free on the host):
 * accurate to about n 2^-106 relative for data of one sign, so it can judge
 * a double kernel (a plain float64 sum errs as much as the kernel: n 2^-53).
 * The rule for double reductions: check against this, never tpl_ref_reduce. */
at_status tpl_ref_reduce_f64(at_exec *ref, long long n, CUdeviceptr x, CUdeviceptr y,
                             double *result);
/* ||A x - b||_2 / ||b||_2 in float64. */
at_status tpl_ref_residual(at_exec *ref, int n, CUdeviceptr A, CUdeviceptr b,
                           CUdeviceptr x, double *residual);
/* The same for a double system (A, b, x doubles). */
at_status tpl_ref_residual_f64(at_exec *ref, int n, CUdeviceptr A, CUdeviceptr b,
                               CUdeviceptr x, double *residual);
/* Sets every diagonal entry of the n x n row-major double matrix A to v. */
at_status tpl_set_diagonal_f64(at_exec *ref, CUdeviceptr A, int n, double v);

/* ---- matmul's stream-K schedule (templates/matmul.c; tested directly) ---- */
typedef struct mm_streamk_schedule {
    int grid;           /* persistent blocks */
    int dp_tiles;       /* tiles [0, dp_tiles) data-parallel, a multiple of grid */
    int sk_tiles;       /* the rest, split by K steps: iters = sk_tiles * ksteps */
    int q, r;           /* iters / grid and iters % grid (each block q or q + 1) */
} mm_streamk_schedule;
/* Plans `tiles` output tiles of `ksteps` K steps each on at most `max_blocks`
 * co-resident blocks: whole waves data-parallel; when the last wave is partial,
 * it and one full wave before it are split evenly by K steps (every block does
 * the same work, each in at most two partial tiles); fewer tiles than blocks are
 * split entirely. ksteps = 0 or more than 2^31 - 1 iterations: one block per tile. */
void mm_streamk_plan(long long tiles, long long ksteps, int max_blocks, mm_streamk_schedule *s);

/* ---- tcgemm's rejection reasons (templates/tcgemm.c; the tests reach every one) ---- */
extern const char *const tpl_tcgemm_reasons[];
extern const int tpl_tcgemm_n_reasons;

/* ---- dgemm's rejection reasons and tolerance (templates/dgemm.c) ---- */
extern const char *const tpl_dgemm_reasons[];
extern const int tpl_dgemm_n_reasons;
/* The largest relative Frobenius error dgemm accepts at depth k: (16 + 8 sqrt(k)) 2^-53. */
double tpl_dgemm_tolerance_rule(long long k);
/* ---- skinny's rejection reasons (templates/skinny.c; the tests reach every one) ---- */
extern const char *const tpl_skinny_reasons[];
extern const int tpl_skinny_n_reasons;
/* K slices of each of `tiles` output tiles (every product of one launch) of `steps` K stages
 * of configuration c on a device where `resident` of its blocks run at once: 1 when the
 * tiles fill WAVES waves or K is short; else enough to fill them, each slice at least 2
 * stages, at most 256 and at most 131072 partial elements per tile for the last block to sum,
 * and no slice empty (steps spread evenly, the last one shorter). */
int tpl_skinny_slices(const int *c, long long tiles, long long steps, long long resident);
/* ---- smallm's rejection reasons (templates/smallm.c; the tests reach every one) ---- */
extern const char *const tpl_smallm_reasons[];
extern const int tpl_smallm_n_reasons;
/* K slices of each of `tiles` output tiles (every product of one launch) of configuration c
 * over depth k, `rows` rows of each tile inside the matrix (min(m, MT)), on a device where
 * `resident` of its blocks run at once: 1 when fewer than two slices per tile fit the WAVES
 * waves or K is short (below 8 stages); else as many as fill the waves without a partial one,
 * each at least 4 stages, slices^2 x 8 x rows <= k (the last block's sum of the partials within
 * a quarter of a slice's reading of B), at most 256 (CLUSTER 1: 8, one portable cluster), and
 * no slice empty. */
int tpl_smallm_slices(const int *c, long long tiles, long long rows, long long k,
                      long long resident);
/* 1 if smallm computes p as its mirror C^T = op(B)^T op(A)^T (FP32 with n below m: the kernel's
 * narrow side is n; templates/smallm.c). */
int tpl_smallm_mirrored(const tpl_problem *p);
/* ---- bgemm's rejection reasons (templates/bgemm.c; the tests reach every one) ---- */
extern const char *const tpl_bgemm_reasons[];
extern const int tpl_bgemm_n_reasons;

#endif
