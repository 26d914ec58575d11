/* handle.h: the state of an at_handle and what the entry points of runtime/ share: the
 * message of a failed call and the plan runner (api.c owns both; gemm.c's GEMM calls use
 * them). Internal to libautotune. */
#ifndef HANDLE_H
#define HANDLE_H

#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "tpl.h"
#include <time.h>
#include "exec.h"
#include "vendor.h"

struct at_trial;

/* One family's configuration for one problem, loaded and ready (the handle's plan table). */
typedef struct at_plan {
    const tpl_family *key_fam;  /* the family the plan was asked for: its key in the table */
    const tpl_family *fam;      /* the family that runs it: key_fam's, or another family's
                                   built-in choice that won the plan's trial */
    tpl_problem problem;
    int deterministic;
    int cfg[TPL_MAX_PARAMS];
    char config[TPL_CONFIG_LEN];
    at_lookup_level level;
    CUmodule module;
    at_exec exec;
    struct at_trial *trial;     /* nearby winners being timed, NULL when settled */
    int vendor;                 /* 1: the vendor library serves this shape */
    char vendor_call[128];      /* its entry point, for the stats */
    long long calls;            /* calls it served (runtime/record.c records them) */
    time_t born;                /* when it was made */
} at_plan;

/* A GEMM call as the caller made it, less its pointers and scalars: everything the checks, the
 * family and the plan of the call depend on (runtime/gemm.c's call table). Compared whole:
 * built with memset first, so padding is zero. */
typedef struct ah_call_key {
    int entry;                  /* AH_CALL_*: the entry point */
    int order, op_a, op_b, type, math, deterministic;
    int m, n, k, lda, ldb, ldc, batch;
    long long stride_a, stride_b, stride_c;
} ah_call_key;
enum { AH_CALL_SGEMM = 1, AH_CALL_GEMM, AH_CALL_BATCHED };

/* The call table: GEMM calls already served, each with its plan, so that a repeated call skips
 * the argument checks, the family choice (a database query once the newest 8 problems are
 * others) and the plan lookup. Open addressing, power-of-two capacity, at most AH_CALLS_MAX
 * calls (then it starts empty again: a call never served from it is served as before). */
#define AH_CALLS_MAX 4096
typedef struct ah_call {
    ah_call_key key;
    struct at_plan *plan;       /* NULL: free slot */
} ah_call;

struct at_handle {
    const cudrv *cu;
    at_device_info info;
    CUdevice device;
    CUcontext ctx;
    CUstream stream;
    int deterministic;
    at_math math;               /* at_set_math_mode: TF32 for at_gemm's FP32 */
    db *db;
    db *layers[1 + AT_MAX_READONLY_DBS];  /* [0] db, then the read-only ones in order */
    int n_layers;
    char db_path[4096];
    char errmsg[2048];
    at_stats stats;
    struct at_plan **plans;     /* open addressing, power-of-two capacity */
    size_t n_plans, cap_plans;
    size_t scratch_bytes;        /* scratch memory the plans hold (packed operands, partials) */
    struct at_plan *last_plan;  /* the previous call's plan: repeated calls skip the table */
    int trial_max;              /* at_set_trials: nearby winners a new shape times */
    int vendor_mode;            /* at_set_vendor */
    ms_vendor *vendor;          /* cuBLAS, loaded on first use */
    char trial_log[1024];       /* AUTOTUNE_TRIAL_LOG: a file each finished trial's times are
                                   appended to ("-": stderr); empty: none */
    struct {                    /* the family of a GEMM problem (gemm_family), newest 8 */
        tpl_problem problem;
        int deterministic;
        const tpl_family *fam;
    } gemm_fam[8];
    int n_gemm_fam;
    ah_call *calls;             /* the call table (runtime/gemm.c) */
    size_t n_calls, cap_calls;
    ah_call last_call;          /* the previous call served from it or put into it: checked
                                   first, so a repeated call hashes nothing */
    long long call_hits;        /* calls served from it (the tests read it) */
};

/* Writes the printf-style message into h's (when h is not NULL) and returns s. */
at_status ah_fail(at_handle *h, at_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Looks up (or builds) the plan of the problem in args for family `kernel` and runs it inside
 * the handle's context; the message in h on failure. *used (when not NULL) is the plan that
 * served, NULL where none could be made. */
at_status ah_run_plan(at_handle *h, const char *kernel, tpl_args *args, struct at_plan **used);
/* Runs plan pl (from ah_run_plan's *used, for the same problem) on args inside the handle's
 * context, as ah_run_plan would after its lookup. */
at_status ah_run_known_plan(at_handle *h, struct at_plan *pl, tpl_args *args);
/* The plan the call table holds for key, NULL if none (the previous call's key first). */
struct at_plan *ah_call_find(at_handle *h, const ah_call_key *key);
/* Remembers plan pl for key (a failed allocation only costs the next call the lookup). */
void ah_call_remember(at_handle *h, const ah_call_key *key, struct at_plan *pl);
/* Forgets every remembered call (a setting that may change a call's family or plan). */
void ah_call_forget(at_handle *h);

/* The plan table (runtime/plans.c): 1 if pl is the plan of (fam, p, deterministic det); the
 * handle's plan of (fam, p) in its own deterministic mode, NULL if none; pl into the table
 * (AT_ERR_NO_MEMORY where it cannot grow). */
int ah_plan_matches(const at_plan *pl, const tpl_family *fam, const tpl_problem *p, int det);
at_plan *ah_plan_lookup(at_handle *h, const tpl_family *fam, const tpl_problem *p);
at_status ah_plan_insert(at_handle *h, at_plan *pl);
/* Scratch memory (runtime/plans.c): what pl's exec holds; frees every other plan's after the
 * stream's work (the count of plans that held any); the most the plans of h keep. */
size_t ah_plan_scratch_bytes(const at_plan *pl);
int ah_release_other_scratch(at_handle *h, const at_plan *keep);
size_t ah_scratch_keep_limit(const at_handle *h);

#endif
