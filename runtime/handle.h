/* handle.h: the state of an at_handle and what the entry points of runtime/ share: the
 * message of a failed call and the plan runner (api.c owns both; gemm.c's GEMM calls use
 * them). Internal to libautotune. */
#ifndef HANDLE_H
#define HANDLE_H

#include "autotune.h"
#include "cudrv.h"
#include "db.h"
#include "tpl.h"
#include "vendor.h"

struct at_plan;

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
    struct at_plan *last_plan;  /* the previous call's plan: repeated calls skip the table */
    int trial_max;              /* at_set_trials: nearby winners a new shape times */
    int vendor_mode;            /* at_set_vendor */
    ms_vendor *vendor;          /* cuBLAS, loaded on first use */
    struct {                    /* the family of a GEMM problem (gemm_family), newest 8 */
        tpl_problem problem;
        int deterministic;
        const tpl_family *fam;
    } gemm_fam[8];
    int n_gemm_fam;
};

/* Writes the printf-style message into h's (when h is not NULL) and returns s. */
at_status ah_fail(at_handle *h, at_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Looks up (or builds) the plan of the problem in args for family `kernel` and runs it inside
 * the handle's context; the message in h on failure. */
at_status ah_run_plan(at_handle *h, const char *kernel, tpl_args *args);

#endif
