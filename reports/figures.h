/* figures.h: the report's data model (devices, their tuned problems, results,
 * ceilings and the figures computed from them), collected from the database. */
#ifndef RP_FIGURES_H
#define RP_FIGURES_H

#include <stddef.h>
#include "autotune.h"
#include "db.h"
#include "tpl.h"

#define RP_MAX_SESSIONS 6           /* sessions a trajectory shows, newest */
#define RP_MAX_BARS 32              /* entries of one comparison */
#define RP_MAX_PARAM_VALUES 64      /* values of one parameter a panel shows */
#define RP_N_FAIL_STATUSES 7

/* The failure statuses counted one by one, in the order they are shown. */
extern const char *const rp_fail_statuses[RP_N_FAIL_STATUSES];

/* What a figure stands for; the charts give each its own colour. */
typedef enum rp_kind {
    RP_KIND_OTHER,                  /* any other configuration */
    RP_KIND_TUNED,                  /* the best configuration found */
    RP_KIND_DEFAULT,                /* the family's built-in default */
    RP_KIND_SEED,                   /* a seed baseline (configuration or measurement) */
    RP_KIND_VENDOR,                 /* a vendor library measurement */
} rp_kind;

/* A ceiling performance is judged against. */
typedef struct rp_ceiling {
    double value;                   /* GFLOP/s or GB/s; 0 if unknown */
    const char *source;             /* "measured", "theoretical" or "unknown" */
    const char *name;               /* "FP32", "read bandwidth", "BF16/FP16 tensor", ... */
    char note[200];                 /* how it was found ("" if nothing to add) */
} rp_ceiling;

/* One stored result of a group and what is derived from it. */
typedef struct rp_entry {
    const db_result *r;
    int ok;                         /* verified and timed */
    double value;                   /* GFLOP/s or GB/s when ok, else 0 */
    double when;                    /* seconds since the epoch it was stored; -1 unknown */
    rp_kind kind;                   /* TUNED (the best), DEFAULT, SEED (a baseline's
                                       configuration) or OTHER */
} rp_entry;

/* One entry of the comparison of a problem: tuned, vendor, seeds, default. */
typedef struct rp_bar {
    char label[96];
    double value;                   /* 0: no data */
    rp_kind kind;
    char note[64];                  /* e.g. the status of a failed baseline */
} rp_bar;

typedef struct rp_compare {
    rp_bar bars[RP_MAX_BARS];
    int n;
    double vendor_best, seed_best, default_value;   /* 0 where none */
    char vendor_name[64], seed_name[64];
} rp_compare;

/* One value of a parameter: the best performance reached with it. */
typedef struct rp_pval {
    char value[32];
    double best;                    /* 0 if no configuration with it verified */
    int tried;
} rp_pval;

/* A parameter of a group's configurations. */
typedef struct rp_param {
    char name[32];
    const char *meaning;            /* from the family; NULL if unknown */
    int in_best;                    /* 1 if the best configuration sets it */
    char best_value[32];            /* its value there, "" if not set */
    rp_pval *vals;                  /* values seen, in numeric (else text) order */
    int nv;                         /* at most RP_MAX_PARAM_VALUES */
} rp_param;

/* The search over time: the newest sessions that tuned the problem. */
typedef struct rp_trajectory {
    int n_sessions;
    long long session[RP_MAX_SESSIONS];    /* newest first; 0 = no session */
    double t0[RP_MAX_SESSIONS];     /* first stored time of each, -1 if none */
    double tmax;                    /* longest span from t0, seconds */
    double vmax;                    /* best value over those sessions, 0 if none */
} rp_trajectory;

/* Where the best of a problem sits on the roofline. */
typedef struct rp_roof {
    int valid;                      /* 0: no best, or the work is unknown */
    double ai;                      /* flops per byte of minimum traffic */
    double gflops;                  /* the best, in GFLOP/s */
    double vendor_gflops;           /* best vendor measurement, 0 if none */
} rp_roof;

/* A tuned problem: the results of one (kernel, source hash, problem). */
typedef struct rp_group {
    const tpl_family *fam;          /* NULL for a kernel not in this build */
    char kernel[32];
    char hash[20];
    int hash_current;               /* 1: the current template, 0: older, -1: unknown */
    tpl_problem problem;
    rp_entry *e;                    /* in the order stored */
    int n, cap;
    int n_ok;
    int best;                       /* index into e, -1 if none ok */
    int is_flops;
    const char *unit;               /* "GFLOP/s" or "GB/s" */
    double best_value;              /* 0 if no best */
    int n_retimed;                  /* ok entries with a sustained time (the tuner's re-timing) */
    double best_sustained_value;    /* the best's metric at its sustained time, 0 if none */
    rp_ceiling ceiling;             /* the device's ceiling for this metric and kind */
    const char *ceiling_name;       /* ceiling.name */
    double pct;                     /* best / ceiling in percent, if both known */
    int latency_bound;              /* 1: at the ceiling a call would take less
                                       than an empty launch (the floor) */
    double floor_ratio;             /* best time / launch floor, 0 if unknown */
    char vendor_note[96];           /* why vs_vendor is 0: "cuBLAS not found",
                                       "no vendor call for jacobi", ... */
    double vs_default, vs_seed, vs_vendor;  /* best over each, 0 where unknown */
    rp_compare cmp;
    double *ranked;                 /* values of the ok entries, fastest first */
    rp_kind *ranked_kind;
    int n_ranked;
    int fails[RP_N_FAIL_STATUSES];  /* results of each rp_fail_statuses */
    int fails_other;                /* other results not ok */
    rp_trajectory traj;
    rp_param params[TPL_MAX_PARAMS];
    int n_params;
    rp_roof roof;
} rp_group;

/* A device, everything stored for it and its groups. */
typedef struct rp_device {
    db_device dev;
    db_result *res;
    int n_res;
    db_measurement *ms;
    int n_ms;
    rp_group *groups;               /* by kernel, source hash, problem */
    int n_groups;
    rp_ceiling fp32, bandwidth;     /* FP32 FMA peak; read bandwidth (DRAM) */
    rp_ceiling fp64, tensor16, tf32; /* FP64 (tensor cores where the arch has
                                       them), BF16/FP16 and TF32 tensor peaks */
    rp_ceiling tensor8;             /* FP8 tensor peak (sm_90: twice BF16's; the FP8 GEMM
                                       kinds, tpl.h TPL_MATH_E4M3...) */
    rp_ceiling copy;                /* copy bandwidth (read + write), a fact */
    double floor_ms;                /* an empty kernel's time, 0 if unknown */
} rp_device;

typedef struct rp_report {
    rp_device *devs;
    int n_devs;
    int total;                      /* results over every device */
} rp_report;

/* Collects the figures of one device (device_uuid) or of every device
 * (NULL) into *out; AT_OK even where nothing is stored (out->total 0).
 * On failure the database's status (or AT_ERR_NO_MEMORY) with the reason
 * in err, and *out is empty. The only code of the report that reads the
 * database. */
at_status rp_collect(db *d, const char *device_uuid, rp_report *out, char *err,
                     size_t errlen);
/* Frees what rp_collect allocated; an empty report is a no-op. */
void rp_report_free(rp_report *rep);

#endif
